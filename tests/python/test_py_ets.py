"""Exponential smoothing (docs/timeseries.md): statsmodels' results within the
issue's tolerances, identity across thread counts and batch positions, and the
named refusals of hostile input."""
import math
import warnings

import pytest

import samebits
from samebits.timeseries import _Batch, _spec_pairs

np = pytest.importorskip("numpy")

MODELS = [  # (trend, damped_trend, seasonal)
    (None, False, None), ("add", False, None), ("add", True, None),
    (None, False, "add"), ("add", False, "add"), ("add", True, "add"),
    (None, False, "mul"), ("add", False, "mul"), ("add", True, "mul"),
]
SMOOTHING = ["smoothing_level", "smoothing_trend", "smoothing_seasonal", "damping_trend"]


def _co2():
    sm = pytest.importorskip("statsmodels.api")
    s = sm.datasets.co2.load_pandas().data["co2"].resample("MS").mean().ffill()
    return s.values[:240].astype(np.float64)


def _series(n, m=12, seed=0, mul=False):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    season = 10.0 * np.sin(2 * np.pi * t / m)
    level = 200.0 + 0.3 * t + np.cumsum(rng.normal(0, 0.5, n))
    return level * (1 + season / 50.0) + rng.normal(0, 1, n) if mul else level + season + rng.normal(0, 1, n)


def _fit(y, trend, damped, seasonal, m=12):
    return samebits.ExponentialSmoothing(trend=trend, damped_trend=damped, seasonal=seasonal,
                                         seasonal_periods=m if seasonal else None).fit(y)



def _same_in_any_batch(pairs, ys, threads):
    """ys[3] fitted alone, then in the batch ys and in ys reversed at each
    thread count: the same digest and forecasts wherever it sits, and every
    series' digest the same in both orders. Returns the batch of ys[3] alone."""
    alone = _Batch(pairs, [ys[3]])
    ref = alone.digest(0)
    for t in threads:
        samebits.set_num_threads(t)
        try:
            b = _Batch(pairs, ys)
            b2 = _Batch(pairs, list(reversed(ys)))
        finally:
            samebits.set_num_threads(0)
        assert b.digest(3) == ref and b2.digest(1) == ref
        assert b.forecast(3, 30) == alone.forecast(0, 30)
        for i in range(len(ys)):
            assert b.digest(i) == b2.digest(len(ys) - 1 - i)
    return alone


@pytest.mark.parametrize("trend,damped,seasonal", MODELS)

def test_against_statsmodels(trend, damped, seasonal):
    """On the monthly CO2 series (statsmodels' dataset): the SSE no worse than
    statsmodels' by more than 1e-6 relative, the smoothing parameters within
    1e-3 where statsmodels' optimum is the same (its SSE within 1e-6), the
    forecasts within 1e-4 relative, and AIC, AICc and BIC by statsmodels'
    formulas from our SSE."""
    hw = pytest.importorskip("statsmodels.tsa.holtwinters")
    y = _co2()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = hw.ExponentialSmoothing(y, trend=trend, damped_trend=damped, seasonal=seasonal,
                                    seasonal_periods=12 if seasonal else None).fit()
    m = _fit(y, trend, damped, seasonal)
    assert m.sse <= r.sse * (1 + 1e-6), (m.sse, r.sse)
    if abs(m.sse - r.sse) <= 1e-6 * r.sse:
        for k in SMOOTHING:
            a, b = m.params_[k], r.params[k]
            assert (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-3, (k, a, b)
    fc, rfc = m.forecast(24), r.forecast(24)
    assert np.max(np.abs(fc - rfc) / np.abs(rfc)) <= 1e-4
    assert np.allclose(m.fittedvalues + m.resid, y, rtol=0, atol=1e-9)
    n, k = len(y), r.model.nparams if hasattr(r.model, "nparams") else None
    base = n * math.log(m.sse / n)
    kk = round((m.aic - base) / 2)
    assert abs(m.aic - (base + 2 * kk)) < 1e-9 * abs(base)
    assert abs(m.bic - (base + kk * math.log(n))) < 1e-9 * abs(base)
    assert abs(m.aicc - (m.aic + 2 * (kk + 2) * (kk + 3) / (n - kk - 3))) < 1e-9 * abs(base)
    # statsmodels' count of parameters: AIC minus its own n log(SSE/n)
    rk = round((r.aic - n * math.log(r.sse / n)) / 2)
    assert kk == rk, (kk, rk)


def test_initial_states_agree_up_to_the_tie():
    """The seasons are tied (additive: sum 0); statsmodels leaves the level and
    seasons free along a line of equal SSE. Shifted to our tie, its initial
    states agree within 1e-2 (on a series near 330)."""
    hw = pytest.importorskip("statsmodels.tsa.holtwinters")
    y = _co2()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = hw.ExponentialSmoothing(y, trend="add", seasonal="add", seasonal_periods=12).fit()
    m = _fit(y, "add", False, "add")
    s = np.asarray(r.params["initial_seasons"])
    assert abs(np.sum(m.params_["initial_seasons"])) < 1e-9
    assert abs(m.params_["initial_level"] - (r.params["initial_level"] + s.mean())) < 1e-2
    assert np.max(np.abs(m.params_["initial_seasons"] - (s - s.mean()))) < 1e-2


@pytest.mark.parametrize("trend,damped,seasonal", MODELS)
def test_thread_counts_give_one_digest(trend, damped, seasonal):
    y = _series(150, mul=seasonal == "mul")
    digests = set()
    for t in (1, 2, 3):
        samebits.set_num_threads(t)
        try:
            digests.add(_fit(y, trend, damped, seasonal).model_digest_)
        finally:
            samebits.set_num_threads(0)
    assert len(digests) == 1


def test_batch_position_independence():
    """A series fitted alone has the bits of the same series fitted at another
    position of a batch of series of other lengths, at 1 and 3 threads."""
    ys = [_series(n, seed=s, mul=True) for s, n in enumerate((60, 131, 97, 200, 48))]
    pairs = _spec_pairs("add", True, "mul", 12, [])
    _same_in_any_batch(pairs, ys, (1, 3))


def test_long_format_batch():
    pd = pytest.importorskip("pandas")
    ys = {"a": _series(80, seed=1), "b": _series(100, seed=2), "c": _series(64, seed=3)}
    rows = [(k, pd.Timestamp("2020-01-01") + pd.Timedelta(days=i), v) for k, y in ys.items()
            for i, v in enumerate(y)]
    df = pd.DataFrame(rows, columns=["unique_id", "ds", "y"]).sample(frac=1.0, random_state=0)
    out = samebits.ets_forecast(df, 5, trend="add", seasonal="add", seasonal_periods=12)
    assert list(out["unique_id"].unique()) == list(pd.unique(df["unique_id"]))
    for k, y in ys.items():
        alone = _fit(y, "add", False, "add").forecast(5)
        got = out[out.unique_id == k]["ExponentialSmoothing"].to_numpy()
        assert got.tobytes() == alone.tobytes()
        assert out[out.unique_id == k]["ds"].iloc[0] == pd.Timestamp("2020-01-01") + pd.Timedelta(days=len(y))


def test_given_parameters_count_in_the_criteria_as_statsmodels_counts():
    hw = pytest.importorskip("statsmodels.tsa.holtwinters")
    y = _co2()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = hw.ExponentialSmoothing(y, trend="add", seasonal="add", seasonal_periods=12).fit(smoothing_level=0.3)
    m = samebits.ExponentialSmoothing(trend="add", seasonal="add", seasonal_periods=12, smoothing_level=0.3).fit(y)
    n = len(y)
    assert m.sse <= r.sse * (1 + 1e-9)
    assert round((m.aic - n * math.log(m.sse / n)) / 2) == round((r.aic - n * math.log(r.sse / n)) / 2)


def test_given_parameters_are_kept():
    y = _series(120)
    m = samebits.ExponentialSmoothing(trend="add", seasonal="add", seasonal_periods=12, smoothing_level=0.25,
                                      smoothing_seasonal=0.1).fit(y)
    assert m.params_["smoothing_level"] == 0.25 and m.params_["smoothing_seasonal"] == 0.1
    assert 0.0 <= m.params_["smoothing_trend"] <= 1.0
    free = samebits.ExponentialSmoothing(trend="add", seasonal="add", seasonal_periods=12).fit(y)
    assert free.sse <= m.sse


def test_constant_series_rule():
    """A constant series is fitted exactly without the search: SSE 0, the
    estimated smoothing parameters 0, level c, neutral seasons, -inf criteria."""
    m = samebits.ExponentialSmoothing(trend="add", seasonal="mul", seasonal_periods=4).fit([7.5] * 20)
    assert m.sse == 0.0 and m.aic == -math.inf and m.bic == -math.inf
    p = m.params_
    assert p["smoothing_level"] == 0.0 and p["initial_level"] == 7.5 and p["initial_trend"] == 0.0
    assert list(p["initial_seasons"]) == [1.0] * 4
    assert list(m.forecast(6)) == [7.5] * 6


@pytest.mark.parametrize("y,kw,err,words", [
    ([1.0], {}, samebits.InvalidInputError, "needs at least"),
    ([float("nan")] * 10, {}, samebits.InvalidInputError, "every value is missing"),
    ([1.0, 2.0, float("nan"), 3.0, 4.0], {}, samebits.InvalidInputError, "value 2 is NaN"),
    ([1.0, 2.0, float("inf"), 3.0, 4.0], {}, samebits.InvalidInputError, "infinite"),
    (list(range(1, 24)), {"seasonal": "add", "seasonal_periods": 12}, samebits.InvalidInputError,
     "two full seasonal periods"),
    ([1.0, 2.0, 0.0] * 8, {"seasonal": "mul", "seasonal_periods": 3}, samebits.InvalidInputError,
     "positive data"),
    (list(range(1, 30)), {"seasonal": "add", "seasonal_periods": 1}, samebits.InvalidArgumentError, ">= 2"),
    (list(range(1, 30)), {"damped_trend": True}, samebits.InvalidArgumentError, "no trend to damp"),
    (list(range(1, 30)), {"seasonal_periods": 4}, samebits.InvalidArgumentError, "would do nothing"),
    (list(range(1, 30)), {"smoothing_trend": 0.2}, samebits.InvalidArgumentError, "would do nothing"),
    (list(range(1, 30)), {"trend": "mul"}, samebits.InvalidArgumentError, "not built"),
    (list(range(1, 30)), {"smoothing_level": 1.5}, samebits.InvalidArgumentError, "[0, 1]"),
    (list(range(1, 900)), {"seasonal": "add", "seasonal_periods": 401}, samebits.LimitError, "limit"),
])
def test_hostile_input_is_refused_by_name(y, kw, err, words):
    with pytest.raises(err, match=None) as e:
        samebits.ExponentialSmoothing(**kw).fit(y)
    assert words in str(e.value), str(e.value)


def test_batch_refuses_the_first_hostile_series_by_index():
    with pytest.raises(samebits.InvalidInputError, match="series 2"):
        _Batch(_spec_pairs(None, False, None, None, []), [[1.0, 2.0, 3.0], [4.0, 5.0, 7.0], [float("nan")] * 3])


def test_not_fitted():
    with pytest.raises(samebits.NotFittedError):
        samebits.ExponentialSmoothing().forecast(3)


def test_sklearn_params_roundtrip():
    e = samebits.ExponentialSmoothing(trend="add", seasonal_periods=None)
    assert e.get_params()["trend"] == "add"
    e.set_params(damped_trend=True)
    assert e.damped_trend is True
    with pytest.raises(samebits.InvalidArgumentError):
        e.set_params(colour=1)


def test_model_file_roundtrip(tmp_path):
    """The version 2 model file (payload ETSM): samebits.load_model gives an
    ExponentialSmoothing with the file's specification, the same digests,
    forecasts and bytes; model_digest_ is the file's closing SHA-256 (the CLI's
    `samebits digest`)."""
    y = _series(100, m=7, mul=True)
    m = samebits.ExponentialSmoothing(trend="add", damped_trend=True, seasonal="mul", seasonal_periods=7).fit(y)
    path = tmp_path / "ets.sbm"
    m.save_model(str(path))
    back = samebits.load_model(str(path))
    assert isinstance(back, samebits.ExponentialSmoothing)
    assert (back.trend, back.damped_trend, back.seasonal, back.seasonal_periods) == ("add", True, "mul", 7)
    assert back.model_digest_ == m.model_digest_ and back.series_digest_ == m.series_digest_
    assert back.model_bytes() == m.model_bytes() == path.read_bytes()
    assert back.forecast(20).tobytes() == m.forecast(20).tobytes()
    assert back.fittedvalues.tobytes() == m.fittedvalues.tobytes()
    other = samebits.ExponentialSmoothing().load_model(m.model_bytes())
    assert other.params_["damping_trend"] == m.params_["damping_trend"]
    import hashlib
    assert hashlib.sha256(path.read_bytes()[:-32]).hexdigest() == m.model_digest_
    with pytest.raises(samebits.InvalidInputError):
        samebits.ExponentialSmoothing().load_model(m.model_bytes()[:-1])


@pytest.mark.parametrize("trend,damped,seasonal", [(None, False, None), ("add", True, "mul"), (None, False, "add")])
def test_multiplicative_errors_are_each_series_alone_at_any_thread_count(trend, damped, seasonal):
    """error="mul" (the likelihood fit): a series' bits alone, inside a
    batch at another position and reversed, at 1, 2 and 7 threads; another
    model than the additive one (its own digest and criteria)."""
    ys = [_series(n, seed=s, mul=True) for s, n in enumerate((60, 131, 97, 200, 48))]
    pairs = _spec_pairs(trend, damped, seasonal, 12 if seasonal else None, [], None, "mul")
    alone = _same_in_any_batch(pairs, ys, (1, 2, 7))
    add = _Batch(_spec_pairs(trend, damped, seasonal, 12 if seasonal else None, []), [ys[3]])
    assert add.digest(0) != alone.digest(0)
    assert add.array(0, "aic") != alone.array(0, "aic")  # another objective (SES may meet at alpha 1)


def test_a_fit_that_fails_part_way_reports_stated_bits():
    """ETS(M,A,A) on a series whose fitted value reaches 0 at every point the
    search tries: the filter stops there, the criteria are inf, and the
    fitted values past the stop are NaN, the same bits every time (they were
    whatever the memory held: two fits of one series gave two digests).
    Memory dirtied between the two fits keeps the check able to fail."""
    y = [100.0 * 0.5 ** t + (0.001 if t % 2 else 5.0) for t in range(30)]
    kw = dict(trend="add", seasonal="add", seasonal_periods=2, error="mul")
    a = samebits.ExponentialSmoothing(**kw).fit(y)
    junk = [samebits.ExponentialSmoothing(trend="add").fit([1.0 + 0.37 * ((t * 7919) % 101) for t in range(500)])
            for _ in range(8)]
    b = samebits.ExponentialSmoothing(**kw).fit(y)
    assert math.isinf(a.aic) and math.isinf(b.aic)
    fv = list(a.fittedvalues)
    first = next(t for t, v in enumerate(fv) if math.isnan(v))
    assert all(math.isnan(v) for v in fv[first:])
    assert a.series_digest_ == b.series_digest_
    del junk
