"""AutoETS (docs/timeseries.md, "AutoETS"): the pick is the lowest AICc of
Hyndman et al. 2008 (sigma counted) among the candidates of the model string
(ties to the earlier), multiplicative errors included, each candidate the
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


def _kind(name):
    t = name[1:-1]
    return (None if t == "N" else "add"), t == "Ad", {"N": None, "A": "add", "M": "mul"}[name[-1]]


def _fit_each(y, m, names):
    out = {}
    for n in names:
        t, d, s = _kind(n)
        out[n] = samebits.ExponentialSmoothing(trend=t, damped_trend=d, seasonal=s, seasonal_periods=m if s else None,
                                               error="mul" if n[0] == "M" else "add").fit(y)
    return out


def _criterion(name, fit, m):
    """The AICc of Hyndman et al. (2008) less n log n, counted here from the
    model's name: the smoothing parameters, the initial states (m - 1
    seasons) and sigma."""
    t, d, s = _kind(name)
    k = 1 + (t is not None) + (s is not None) + d + 1 + (t is not None) + ((m - 1) if s else 0)
    n, npar = len(fit.fittedvalues), float(k) + 1.0
    return fit.aic + 2.0 + (2.0 * npar * (npar + 1.0)) / float(n - k - 2)


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
        assert v == _criterion(n, each[n], 7)  # the same bits as the fixed model's fit
        assert v != each[n].aicc  # statsmodels' count (no sigma) is not the rule
    best = min(names, key=lambda n: (_criterion(n, each[n], 7), names.index(n)))
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
    (dict(model="XNN"), "the error is one of A, M, Z"),
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


def test_zzz_is_every_error_and_its_pick_the_lowest_criterion():
    """ZZZ (statsforecast's default): additive then multiplicative errors,
    restrict leaving out A,*,M; each candidate the fixed model's bits."""
    y = _series(120, seed=3)
    names = ["ANN", "ANA", "AAN", "AAdN", "AAA", "AAdA",
             "MNN", "MNA", "MNM", "MAN", "MAdN", "MAA", "MAM", "MAdA", "MAdM"]
    a = samebits.AutoETS(season_length=7, model="ZZZ").fit(y)
    got = [n for n, _ in a.candidates_]
    assert sorted(got) == sorted(names) and got[:6] == names[:6] and all(n[0] == "M" for n in got[6:])
    each = _fit_each(y, 7, got)
    for n, v in a.candidates_:
        assert v == _criterion(n, each[n], 7)
    best = min(got, key=lambda n: (_criterion(n, each[n], 7), got.index(n)))
    assert a.model_ == "ETS(%s,%s,%s)" % (best[0], best[1:-1], best[-1])
    assert list(a.forecast(9)) == list(each[best].forecast(9))
    # a multiplicative-error fit is another model than the additive one (its own digest)
    assert each["MNN"].series_digest_ != each["ANN"].series_digest_
    # its forecasts continue its recursions: MNN's are its final level, MAN's the level plus j trends
    fin = each["MNN"]._arr("final_states")
    assert list(each["MNN"].forecast(3)) == [fin[0]] * 3 and fin[0] > 0
    fin = each["MAN"]._arr("final_states")
    assert list(each["MAN"].forecast(2)) == [fin[0] + 1.0 * fin[1], fin[0] + 2.0 * fin[1]]


def test_zzz_on_a_non_positive_series_keeps_only_additive_candidates():
    y = _series(120, seed=4) - 250.0  # values below zero
    assert y.min() <= 0
    a = samebits.AutoETS(season_length=7, model="ZZZ").fit(y)
    assert all(v is None for n, v in a.candidates_ if n[0] == "M" or n[-1] == "M")
    assert a.model_.startswith("ETS(A,")
    with pytest.raises(InvalidInputError, match="multiplicative errors needs positive data"):
        samebits.ExponentialSmoothing(error="mul").fit(y)


def test_missing_value_is_refused_with_the_series_own_index():
    pd = pytest.importorskip("pandas")
    ys = [_series(60, seed=i) for i in range(3)]
    ys[2][7] = np.nan
    df = pd.concat([pd.DataFrame({"unique_id": "s%d" % i, "ds": np.arange(len(y)), "y": y})
                    for i, y in enumerate(ys)], ignore_index=True)
    with pytest.raises(InvalidInputError, match="series 2: value 7 is NaN; missing values are refused"):
        samebits.auto_ets_forecast(df, 3, season_length=7, model="ZZZ")


def test_multiplicative_error_likelihood_is_statsforecasts():
    """ETS(M,N,N) on the Nile: -2 log L (statsforecast's n log sum e^2 + 2
    sum log yhat, e relative) within 1e-6 relative of statsforecast's at its
    optimum, and samebits' optimum no worse."""
    sm = pytest.importorskip("statsmodels.api")
    sf = pytest.importorskip("statsforecast.models")
    y = sm.datasets.nile.load_pandas().data["volume"].to_numpy().astype(float)
    n = len(y)
    f = samebits.ExponentialSmoothing(error="mul").fit(y)
    ours = f.aic - 2 * 2 + n * math.log(n)  # -2 log L as statsforecast writes it (k = 2: alpha, l0)
    md = sf.AutoETS(model="MNN").fit(y).model_
    theirs = -2.0 * md["loglik"]
    assert ours <= theirs + 1e-9 * abs(theirs)
    assert abs(ours - theirs) <= 1e-6 * abs(theirs)
    assert abs(f.params_["smoothing_level"] - md["par"][0]) < 1e-3
