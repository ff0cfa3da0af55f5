"""ARIMA (docs/timeseries.md): statsmodels' results within the issue's
tolerances on its own datasets, identity across thread counts and batch
positions, statsmodels' parameter names, and the named refusals of hostile
input."""
import math
import warnings

import pytest

import samebits

np = pytest.importorskip("numpy")


def _sunspots():
    sm = pytest.importorskip("statsmodels.api")
    return sm.datasets.sunspots.load_pandas().data["SUNACTIVITY"].to_numpy(dtype=np.float64)


def _co2():
    sm = pytest.importorskip("statsmodels.api")
    s = sm.datasets.co2.load_pandas().data["co2"].resample("MS").mean().ffill()
    return s.values[:300].astype(np.float64)


def _infl():
    sm = pytest.importorskip("statsmodels.api")
    return sm.datasets.macrodata.load_pandas().data["infl"].to_numpy(dtype=np.float64)


CASES = [  # (data, order, seasonal_order)
    (_sunspots, (2, 0, 1), (0, 0, 0, 0)),
    (_sunspots, (1, 0, 0), (0, 0, 0, 0)),
    (_infl, (1, 1, 1), (0, 0, 0, 0)),
    (_co2, (1, 1, 1), (0, 1, 1, 12)),
    (_co2, (0, 1, 1), (0, 1, 1, 12)),
]


@pytest.mark.parametrize("data,order,seasonal_order", CASES)
def test_against_statsmodels(data, order, seasonal_order):
    """statsmodels' SARIMAX with simple_differencing=True (the stated
    convention): our llf at least its llf less 1e-8 relative, equal to its
    loglike at our parameters within 1e-10 relative; parameters within 1e-3
    (relative above 1); forecasts within 1e-4 relative of statsmodels'
    ARIMA's (the same model, differences integrated back) and the 95%
    interval within 1e-3 relative of its width."""
    sx = pytest.importorskip("statsmodels.tsa.statespace.sarimax")
    ar = pytest.importorskip("statsmodels.tsa.arima.model")
    y = data()
    m = samebits.ARIMA(order=order, seasonal_order=seasonal_order).fit(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod = sx.SARIMAX(y, order=order, seasonal_order=seasonal_order, simple_differencing=True,
                         trend="c" if order[1] + seasonal_order[1] == 0 else "n")
        r = mod.fit(disp=False)
        a = ar.ARIMA(y, order=order, seasonal_order=seasonal_order).fit()
    names = list(m.params_)
    assert names == list(a.param_names), (names, a.param_names)
    p = np.array([m.params_[k] for k in names])
    assert m.llf >= r.llf - 1e-8 * abs(r.llf), (m.llf, r.llf)
    assert abs(m.llf - a.llf) <= 1e-4 * abs(a.llf)
    if "const" not in names:  # SARIMAX's intercept form: its const is not the mean
        assert abs(mod.loglike(p) - m.llf) <= 1e-10 * abs(m.llf)
    q = np.asarray(a.params)
    assert np.all(np.abs(p - q) <= 1e-3 * np.maximum(1.0, np.abs(q))), (p, q)
    f, ci = m.forecast(12, return_conf_int=True)
    fc = a.get_forecast(12)
    g, gci = np.asarray(fc.predicted_mean), np.asarray(fc.conf_int(0.05))
    assert np.all(np.abs(f - g) <= 1e-4 * np.maximum(1.0, np.abs(g))), (f, g)
    w, gw = ci[:, 1] - ci[:, 0], gci[:, 1] - gci[:, 0]
    assert np.all(np.abs(w - gw) <= 1e-3 * gw), (w, gw)
    assert abs(m.aic - (-2 * m.llf + 2 * len(names))) < 1e-9 * abs(m.aic)


def test_batch_identity_positions_and_threads():
    """Each series' digest is the same alone, at any position of a batch and
    at 1 and 3 threads; model_digest_ depends on the order."""
    rng = np.random.default_rng(3)
    ys = [np.cumsum(rng.normal(0, 1, n)) + 50 for n in (40, 130, 77, 200)]
    alone = [samebits.ARIMA(order=(1, 1, 1)).fit(y).series_digest_ for y in ys]
    for threads in (1, 3):
        samebits.set_num_threads(threads)
        try:
            m = samebits.ARIMA(order=(1, 1, 1)).fit(ys)
            assert [r.digest for r in m.results_] == alone
            rev = samebits.ARIMA(order=(1, 1, 1)).fit(ys[::-1])
            assert [r.digest for r in rev.results_] == alone[::-1]
            assert rev.model_digest_ != m.model_digest_
        finally:
            samebits.set_num_threads(0)


def test_batch_results_and_single_accessors():
    rng = np.random.default_rng(4)
    ys = [rng.normal(0, 1, 60) + 5, rng.normal(0, 2, 90) - 3]
    m = samebits.ARIMA(order=(1, 0, 0)).fit(ys)
    assert len(m.results_) == 2
    assert list(m.results_[1].params) == ["const", "ar.L1", "sigma2"]
    with pytest.raises(samebits.InvalidArgumentError):
        m.llf
    one = samebits.ARIMA(order=(1, 0, 0)).fit(ys[1])
    assert one.results_[0].digest == m.results_[1].digest
    assert len(one.fittedvalues) == 90 and len(one.resid) == 90
    assert np.allclose(one.fittedvalues + one.resid, ys[1], rtol=0, atol=1e-12)


def test_named_refusals():
    y = np.arange(30, dtype=np.float64) % 7
    with pytest.raises(samebits.InvalidInputError, match="needs at least"):
        samebits.ARIMA(order=(1, 0, 0)).fit([1.0])
    with pytest.raises(samebits.InvalidInputError, match="every value is missing"):
        samebits.ARIMA(order=(1, 0, 0)).fit([math.nan] * 10)
    with pytest.raises(samebits.InvalidInputError, match="value 3 is infinite"):
        samebits.ARIMA(order=(1, 0, 0)).fit(np.where(y == 3, np.inf, y))
    with pytest.raises(samebits.InvalidInputError, match="every differenced value is missing"):
        samebits.ARIMA(order=(0, 1, 1)).fit(np.where(np.arange(30) % 2 == 1, np.nan, y))
    with pytest.raises(samebits.InvalidInputError, match="constant"):
        samebits.ARIMA(order=(1, 0, 0)).fit(np.full(30, 2.5))
    with pytest.raises(samebits.InvalidArgumentError, match="not invertible"):
        samebits.ARIMA(order=(0, 0, 1), trend="n", params=[2.0, 1.0]).fit(y)
    with pytest.raises(samebits.InvalidArgumentError, match="explosive"):
        samebits.ARIMA(order=(1, 0, 0), trend="n", params=[1.0, 1.0]).fit(y)
    with pytest.raises(samebits.InvalidArgumentError, match="trend='c' with differencing"):
        samebits.ARIMA(order=(1, 1, 0), trend="c").fit(y)
    with pytest.raises(samebits.InvalidArgumentError):
        samebits.ARIMA(order=(1, 0)).fit(y)
    with pytest.raises(samebits.InvalidArgumentError, match="not built"):
        samebits.ARIMA(order=(1, 0, 0), trend="t").fit(y)


def test_given_parameters_match_statsmodels_loglike():
    """With every parameter given, llf is statsmodels' ARIMA loglike there
    (no differencing: the two conventions agree)."""
    ar = pytest.importorskip("statsmodels.tsa.arima.model")
    y = _infl()
    params = [3.5, 0.6, -0.2, 0.3, 9.0]
    m = samebits.ARIMA(order=(2, 0, 1), params=params).fit(y)
    ref = ar.ARIMA(y, order=(2, 0, 1)).loglike(np.array(params))
    assert abs(m.llf - ref) <= 1e-10 * abs(ref)


def test_model_file_roundtrip(tmp_path):
    """save_model then samebits.load_model: the same digest, forecasts and
    intervals bit for bit; the file's digest is model_digest_; an ets file is
    refused by name."""
    rng = np.random.default_rng(6)
    ys = [np.cumsum(rng.normal(0, 1, 60)) + 20, np.cumsum(rng.normal(0, 1, 45))]
    m = samebits.ARIMA(order=(1, 1, 1), seasonal_order=(0, 1, 1, 4)).fit(ys)
    path = tmp_path / "a.sbm"
    m.save_model(str(path))
    back = samebits.load_model(str(path))
    assert isinstance(back, samebits.ARIMA)
    assert back.model_digest_ == m.model_digest_
    assert back.order == (1, 1, 1) and back.seasonal_order == (0, 1, 1, 4)
    for a, b in zip(m.results_, back.results_):
        assert a.digest == b.digest
        fa, ca = a.forecast(8, return_conf_int=True)
        fb, cb = b.forecast(8, return_conf_int=True)
        assert fa.tobytes() == fb.tobytes() and ca.tobytes() == cb.tobytes()
    import hashlib
    data = path.read_bytes()
    assert data == m.model_bytes()
    e = samebits.ExponentialSmoothing().fit(ys[0])
    with pytest.raises(samebits.InvalidArgumentError, match="not arima"):
        samebits.ARIMA().load_model(e.model_bytes())


def test_auto_arima_stepwise():
    """The stepwise search: on a simulated AR(2) it ends at a model whose
    AICc is the lowest of every model it fitted, the start models first in
    their stated order; the same search and digest at 1 and 3 threads."""
    rng = np.random.default_rng(11)
    e = rng.normal(0, 1, 400)
    y = np.zeros(400)
    for t in range(2, 400):
        y[t] = 0.6 * y[t - 1] - 0.3 * y[t - 2] + e[t]
    runs = []
    for threads in (1, 3):
        samebits.set_num_threads(threads)
        try:
            m = samebits.auto_arima(y + 10.0, approximation=False)
        finally:
            samebits.set_num_threads(0)
        runs.append((m.series_digest_, m.search_))
    assert runs[0] == runs[1]
    search = runs[0][1]
    assert [s[0] for s in search[:4]] == [(2, 0, 2), (0, 0, 0), (1, 0, 0), (0, 0, 1)]
    best = min(search, key=lambda s: s[3])
    assert m.order == best[0] and m.aicc == best[3]
    assert m.order[0] >= 1  # an AR part is found


def test_auto_arima_approximation():
    """approximation=True (R's rule picks it for more than 150 values): the
    candidates are method='css' fits (their AICc those fits' bits), the
    chosen order is refitted by exact ML (the returned model is
    ARIMA(order).fit's bits, its AICc the search_'s last entry); the same
    at 1 and 7 threads."""
    rng = np.random.default_rng(12)
    e = rng.normal(0, 1, 300)
    y = np.zeros(300)
    for t in range(1, 300):
        y[t] = 0.5 * y[t - 1] + e[t] + 0.4 * e[t - 1]
    y = y + 5.0
    runs = []
    for threads in (1, 7):
        samebits.set_num_threads(threads)
        try:
            runs.append(samebits.auto_arima(y))  # 300 values: approximation by R's rule
        finally:
            samebits.set_num_threads(0)
    a, b = runs
    assert a.series_digest_ == b.series_digest_ and a.search_ == b.search_
    ml = samebits.ARIMA(order=a.order, trend=a.trend).fit(y)
    assert a.series_digest_ == ml.series_digest_ and a.search_[-1][3] == ml.aicc
    cands = a.search_[:-1]
    best = min(cands, key=lambda s: s[3])
    assert best[0] == a.order
    for order, so, trend, aicc in cands[:3]:
        assert samebits.ARIMA(order=order, trend=trend, method="css").fit(y).aicc == aicc
    off = samebits.auto_arima(y[:150])  # 150 values, m = 1: exact ML candidates
    for order, so, trend, aicc in off.search_[:2]:
        assert samebits.ARIMA(order=order, trend=trend).fit(y[:150]).aicc == aicc
    with pytest.raises(samebits.InvalidArgumentError, match="approximation"):
        samebits.auto_arima(y, approximation="yes")


def test_css_fit_has_no_model_file():
    y = np.sin(np.arange(80) / 3.0) * 5 + np.arange(80) * 0.01
    m = samebits.ARIMA(order=(1, 0, 0), method="css").fit(y)
    assert math.isfinite(m.llf)
    with pytest.raises(samebits.InvalidArgumentError, match="method=css"):
        m.model_bytes()
    with pytest.raises(samebits.InvalidArgumentError, match="method='bfgs'"):
        samebits.ARIMA(order=(1, 0, 0), method="bfgs").fit(y)


def test_auto_arima_seasonal_refusals():
    with pytest.raises(samebits.InvalidArgumentError, match="needs a season"):
        samebits.auto_arima(np.arange(50.0), D=1)


MISSING_CASES = [  # (data, order, seasonal_order)
    (_sunspots, (2, 0, 1), (0, 0, 0, 0)),
    (_infl, (1, 1, 1), (0, 0, 0, 0)),
    (_co2, (0, 1, 1), (0, 1, 1, 12)),
]


@pytest.mark.parametrize("data,order,seasonal_order", MISSING_CASES)
def test_missing_values_against_statsmodels(data, order, seasonal_order):
    """Missing values (NaN) inside the series: statsmodels' SARIMAX with
    simple_differencing=True skips their update as we do, so its loglike at
    our parameters equals our llf within 1e-10 relative and our llf is at
    least its own fit's less 1e-8 relative; the residual is NaN where the
    differenced value is missing; nothing of the series' result depends on the
    values that are missing."""
    sx = pytest.importorskip("statsmodels.tsa.statespace.sarimax")
    y = data().copy()
    t = np.arange(len(y))
    y[(t % 17 == 9) | ((t >= 40) & (t < 44))] = np.nan
    m = samebits.ARIMA(order=order, seasonal_order=seasonal_order).fit(y)
    trend = "c" if order[1] + seasonal_order[1] == 0 else "n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod = sx.SARIMAX(y, order=order, seasonal_order=seasonal_order, simple_differencing=True, trend=trend)
        r = mod.fit(disp=False)
    p = np.array(list(m.params_.values()))
    if trend == "c":  # SARIMAX's intercept is const (1 - sum ar): compare at its own parametrisation
        ar = p[1:1 + order[0]]
        p = p.copy()
        p[0] = p[0] * (1.0 - ar.sum())
    assert abs(mod.loglike(p) - m.llf) <= 1e-10 * abs(m.llf)
    assert m.llf >= r.llf - 1e-8 * abs(r.llf)
    L = order[1] + seasonal_order[1] * seasonal_order[3]
    gone = np.isnan(y)
    assert all(np.isnan(m.resid[L:][gone[L:]]))  # a difference touching a missing value is missing
    assert not np.isnan(m.resid[L:][~gone[L:]]).all()
    assert m.results_[0].digest == samebits.ARIMA(order=order, seasonal_order=seasonal_order).fit(y).results_[0].digest


def test_forecast_all_rows_are_each_series_forecast():
    """forecast_all's row i is results_[i].forecast's bits (mean and
    interval), at 1 and 3 threads; a missing value among a series' last d
    values is refused by name before any work, naming the series."""
    rng = np.random.default_rng(8)
    ys = [np.cumsum(rng.normal(0, 1, n)) + 50 for n in (40, 130, 77, 200, 61)]
    for threads in (1, 3):
        samebits.set_num_threads(threads)
        try:
            m = samebits.ARIMA(order=(1, 1, 1)).fit(ys)
            mean, se, lo, hi = m.forecast_all(7, alpha=0.1)
            assert mean.shape == (5, 7) and se.shape == (5, 7)
            for i, r in enumerate(m.results_):
                one, ci = r.forecast(7, return_conf_int=True, alpha=0.1)
                assert mean[i].tobytes() == one.tobytes()
                assert lo[i].tobytes() == ci[:, 0].tobytes() and hi[i].tobytes() == ci[:, 1].tobytes()
                assert se[i].tobytes() == np.asarray(r.forecast_se(7)).tobytes()
        finally:
            samebits.set_num_threads(0)
    gap = [ys[0], np.concatenate([ys[1][:-1], [np.nan]])]
    m = samebits.ARIMA(order=(0, 1, 1)).fit(gap)
    with pytest.raises(samebits.InvalidInputError, match="series 1's value 1 from its end is missing"):
        m.forecast_all(3)
    with pytest.raises(samebits.InvalidArgumentError, match="h=0"):
        m.forecast_all(0)


def test_long_format_forecast():
    """arima_forecast over a shuffled long frame gives each series the bits of
    its fit alone, statsforecast's interval columns, the next stamps."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(9)
    ys = {"a": np.cumsum(rng.normal(0, 1, 80)) + 9, "b": np.cumsum(rng.normal(0, 1, 120)), "c": rng.normal(0, 1, 64)}
    rows = [(k, pd.Timestamp("2021-03-01") + pd.Timedelta(days=i), v) for k, y in ys.items() for i, v in enumerate(y)]
    df = pd.DataFrame(rows, columns=["unique_id", "ds", "y"]).sample(frac=1.0, random_state=1)
    out = samebits.arima_forecast(df, 4, order=(1, 1, 1), level=[80, 95])
    assert list(out.columns) == ["unique_id", "step", "ds", "ARIMA", "ARIMA-lo-80", "ARIMA-hi-80", "ARIMA-lo-95",
                                 "ARIMA-hi-95"]
    assert list(out["unique_id"].unique()) == list(pd.unique(df["unique_id"]))
    for k, y in ys.items():
        one, ci = samebits.ARIMA(order=(1, 1, 1)).fit(y).forecast(4, return_conf_int=True, alpha=0.05)
        got = out[out.unique_id == k]
        assert got["ARIMA"].to_numpy().tobytes() == one.tobytes()
        assert got["ARIMA-lo-95"].to_numpy().tobytes() == ci[:, 0].tobytes()
        assert got["ds"].iloc[0] == pd.Timestamp("2021-03-01") + pd.Timedelta(days=len(y))
    with pytest.raises(samebits.InvalidArgumentError, match="level"):
        samebits.arima_forecast(df, 4, level=[100])
