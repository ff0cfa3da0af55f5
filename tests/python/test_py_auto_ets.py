"""AutoETS (docs/timeseries.md, "AutoETS"): the pick is the lowest AICc among
the candidates of the model string (ties to the earlier), each candidate the
ExponentialSmoothing fit's bits; identical at 1, 2 and 7 threads and at any
position of a long-format frame; the model strings refused by name."""
import math

import pytest

import samebits
from samebits.errors import InvalidArgumentError, InvalidInputError

np = pytest.importorskip("numpy")


def _series(n, m=7, seed=0, season=10.0, slope=0.3):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return 200.0 + slope * t + season * np.sin(2 * np.pi * t / m) + np.cumsum(rng.normal(0, 0.5, n)) + rng.normal(0, 1, n)


def _fit_each(y, m, names):
    kinds = {"ANN": (None, False, None), "AAN": ("add", False, None), "AAdN": ("add", True, None),
             "ANA": (None, False, "add"), "AAA": ("add", False, "add"), "AAdA": ("add", True, "add"),
             "ANM": (None, False, "mul"), "AAM": ("add", False, "mul"), "AAdM": ("add", True, "mul")}
    out = {}
    for n in names:
        t, d, s = kinds[n]
        out[n] = samebits.ExponentialSmoothing(trend=t, damped_trend=d, seasonal=s,
                                               seasonal_periods=m if s else None).fit(y)
    return out


@pytest.mark.parametrize("model,damped,restrict,names", [
    ("AZZ", None, True, ["ANN", "ANA", "AAN", "AAdN", "AAA", "AAdA"]),
    ("AZN", None, True, ["ANN", "AAN", "AAdN"]),
    ("AAZ", False, True, ["AAN", "AAA"]),
    ("AZZ", None, False, ["ANN", "ANA", "ANM", "AAN", "AAdN", "AAA", "AAdA", "AAM", "AAdM"]),
])
def test_pick_is_the_lowest_aicc_of_the_candidates(model, damped, restrict, names):
    y = _series(120, seed=3)
    a = samebits.AutoETS(season_length=7, model=model, damped=damped, restrict=restrict).fit(y)
    assert [n for n, _ in a.candidates_] == names
    each = _fit_each(y, 7, names)
    for n, v in a.candidates_:
        assert v == each[n].aicc  # the same bits as the fixed model's fit
    best = min(names, key=lambda n: (each[n].aicc, names.index(n)))
    assert a.model_ == "ETS(%s,%s,%s)" % (best[0], best[1:-1], best[-1])
    assert a.series_digest_ == each[best].series_digest_
    assert list(a.forecast(9)) == list(each[best].forecast(9))
    assert list(a.predict(9)["mean"]) == list(each[best].forecast(9))
    assert a.aicc == each[best].aicc and a.sse == each[best].sse


def test_without_a_season_only_the_nonseasonal_candidates():
    a = samebits.AutoETS().fit(_series(80, seed=1))
    assert [n for n, _ in a.candidates_] == ["ANN", "AAN", "AAdN"]


def test_short_series_skips_the_seasonal_candidates():
    y = _series(20, m=12, seed=2)  # fewer than two periods of 12
    a = samebits.AutoETS(season_length=12).fit(y)
    assert dict(a.candidates_)["ANA"] is None and dict(a.candidates_)["AAdA"] is None
    assert dict(a.candidates_)["ANN"] is not None
    assert a.model_ in ("ETS(A,N,N)", "ETS(A,A,N)", "ETS(A,Ad,N)")


def test_constant_series_ties_keep_the_first_candidate():
    """Every candidate fits a constant series exactly (SSE 0: AICc -inf); the
    tie keeps the first in the fixed order."""
    a = samebits.AutoETS(season_length=4).fit([5.0] * 30)
    assert all(v == -math.inf for _, v in a.candidates_)
    assert a.model_ == "ETS(A,N,N)"


@pytest.mark.parametrize("threads", [1, 2, 7])
def test_long_format_is_each_series_alone_at_any_thread_count(threads):
    pd = pytest.importorskip("pandas")
    ys = [_series(90 + 7 * i, seed=10 + i, season=(0.0 if i % 2 else 12.0), slope=0.1 * i) for i in range(5)]
    df = pd.concat([pd.DataFrame({"unique_id": "s%d" % i, "ds": np.arange(len(y)), "y": y})
                    for i, y in enumerate(ys)], ignore_index=True)
    out = samebits.auto_ets_forecast(df, 5, season_length=7, n_jobs=threads)
    for i, y in enumerate(ys):
        a = samebits.AutoETS(season_length=7).fit(y)
        rows = out[out.unique_id == "s%d" % i]
        assert list(rows["AutoETS"]) == list(a.forecast(5))
        assert set(rows["model"]) == {a.model_}
    # the batch reversed: the same forecasts
    rev = pd.concat([df[df.unique_id == "s%d" % i] for i in reversed(range(5))], ignore_index=True)
    out2 = samebits.auto_ets_forecast(rev, 5, season_length=7, n_jobs=threads)
    for i in range(5):
        assert list(out2[out2.unique_id == "s%d" % i]["AutoETS"]) == list(out[out.unique_id == "s%d" % i]["AutoETS"])


@pytest.mark.parametrize("kw,words", [
    (dict(model="ZZZ"), "multiplicative errors are not built"),
    (dict(model="MNN"), "multiplicative errors are not built"),
    (dict(model="AMN"), "multiplicative trend is not built"),
    (dict(model="AAM", season_length=7), "restrict=True"),
    (dict(model="ANA"), "season_length >= 2"),
    (dict(model="AN"), "three letters"),
    (dict(model="AXN"), "trend one of"),
    (dict(model="ANN", damped=True), "no trend to damp"),
    (dict(damped="yes"), "damped="),
    (dict(season_length=0), "season_length="),
])
def test_model_strings_refused_by_name(kw, words):
    with pytest.raises(InvalidArgumentError, match=words):
        samebits.AutoETS(**kw).fit(_series(60))


def test_series_too_short_for_every_candidate():
    with pytest.raises(InvalidInputError, match="too short for every candidate"):
        samebits.AutoETS().fit([1.0])


def test_missing_value_is_refused_by_the_fit():
    y = _series(60)
    y[10] = np.nan
    with pytest.raises(InvalidInputError, match="missing"):
        samebits.AutoETS().fit(y)


def test_model_file_is_the_chosen_models(tmp_path):
    y = _series(100, seed=5)
    a = samebits.AutoETS(season_length=7).fit(y)
    p = tmp_path / "a.sbm"
    a.save_model(str(p))
    back = samebits.load_model(str(p))
    assert isinstance(back, samebits.ExponentialSmoothing)
    assert list(back.forecast(4)) == list(a.forecast(4))
    assert a.model_digest_ == a.estimator_.model_digest_


def test_not_fitted():
    with pytest.raises(Exception, match="not fitted"):
        samebits.AutoETS().forecast(3)
