"""ARIMA(p, d, q)(P, D, Q)s (docs/timeseries.md): statsmodels' ARIMA orders and
parameter names, scikit-learn's fit style, identical bits on every machine.

Nothing numeric is computed here: the C library fits, forecasts and digests.
"""
import ctypes
import warnings
from ctypes import POINTER, c_char_p, c_double, c_int, c_int32, c_int64, c_size_t, c_void_p

from ._lib import check, lib
from ._base import Estimator, thread_count
from ._tsbatch import Batch, BatchModelFile, _numpy, _out, declare, read_model_arg
from .errors import InvalidArgumentError, InvalidInputError

_P = POINTER

declare("arima", {
    "param_name": (c_int, [c_void_p, c_int32, c_char_p, c_size_t, _P(c_size_t)]),
    "forecast": (c_int, [c_void_p, c_int64, c_int32, c_double, _P(c_double), _P(c_double),
                         _P(c_double), _P(c_double)]),
    "forecast_all": (c_int, [c_void_p, c_int32, c_double, _P(c_double), _P(c_double), _P(c_double),
                             _P(c_double)])})


class ConvergenceWarning(UserWarning):
    """The optimizer stopped at its iteration cap (statsmodels' ConvergenceWarning)."""


def _ints(name, v, n):
    try:
        t = tuple(v)
    except TypeError:
        raise InvalidArgumentError("%s=%r must be %d whole numbers" % (name, v, n)) from None
    if len(t) != n or any(isinstance(x, bool) or not hasattr(x, "__index__") or int(x) < 0 for x in t):
        raise InvalidArgumentError("%s=%r must be %d whole numbers >= 0" % (name, v, n))
    return ",".join(str(int(x)) for x in t)


def _pairs(order, seasonal_order, trend, params, device=None, method="ml"):
    pairs = [("order", _ints("order", order, 3)), ("seasonal_order", _ints("seasonal_order", seasonal_order, 4))]
    if method != "ml":
        if not isinstance(method, str):
            raise InvalidArgumentError("method=%r must be 'ml' or 'css'" % (method,))
        pairs.append(("method", method))
    if trend is not None:
        if not isinstance(trend, str):
            raise InvalidArgumentError("trend=%r must be 'n' or 'c'" % (trend,))
        pairs.append(("trend", trend))
    if params is not None:
        pairs.append(("params", ",".join(repr(float(x)) for x in params)))
    if device is not None:
        if not isinstance(device, str):
            raise InvalidArgumentError("device=%r: a device name (cpu, cuda, opencl, gpu)" % (device,))
        pairs.append(("device", device))
    return pairs


class _Batch(Batch):
    """A fitted sb_arima batch."""

    FAMILY = "arima"

    def names(self):
        out = []
        for k in range(self.integer(0, "k")):
            buf = ctypes.create_string_buffer(32)
            check(lib.sb_arima_param_name(self.handle.ptr, k, buf, 32, None))
            out.append(buf.value.decode())
        return out

    def forecast(self, i, h, alpha):
        if isinstance(h, bool) or not hasattr(h, "__index__") or int(h) < 1:
            raise InvalidArgumentError("h=%r must be a whole number >= 1" % (h,))
        h = int(h)
        m, s, lo, hi = ((c_double * h)() for _ in range(4))
        check(lib.sb_arima_forecast(self.handle.ptr, i, h, float(alpha), m, s, lo, hi))
        return list(m), list(s), list(lo), list(hi)

    def forecast_all(self, h, alpha):
        """Every series' (mean, se, lower, upper), each n rows of h (one C
        call; row i the bits forecast(i, h, alpha) gives)."""
        if isinstance(h, bool) or not hasattr(h, "__index__") or int(h) < 1:
            raise InvalidArgumentError("h=%r must be a whole number >= 1" % (h,))
        h, n = int(h), self.n
        bufs = [(c_double * (n * h))() for _ in range(4)]
        check(lib.sb_arima_forecast_all(self.handle.ptr, h, float(alpha), *bufs))
        np = _numpy()
        if np is not None:
            return tuple(np.frombuffer(b, dtype=np.float64).reshape(n, h).copy() for b in bufs)
        return tuple([list(b[i * h:(i + 1) * h]) for i in range(n)] for b in bufs)


class _Fitted:
    """One series of a fitted batch: statsmodels' results names."""

    def __init__(self, batch, i):
        self._b, self._i = batch, i

    def _a(self, name):
        return self._b.array(self._i, name)

    @property
    def params(self):
        return dict(zip(self._b.names(), self._a("params")))

    @property
    def llf(self):
        return self._a("llf")[0]

    @property
    def aic(self):
        return self._a("aic")[0]

    @property
    def aicc(self):
        return self._a("aicc")[0]

    @property
    def bic(self):
        return self._a("bic")[0]

    @property
    def fittedvalues(self):
        return _out(self._a("fittedvalues"))

    @property
    def resid(self):
        return _out(self._a("resid"))

    @property
    def converged(self):
        return bool(self._b.integer(self._i, "converged"))

    @property
    def nit(self):
        return self._b.integer(self._i, "nit")

    @property
    def digest(self):
        return self._b.digest(self._i)

    def forecast(self, h=1, return_conf_int=False, alpha=0.05):
        """The next h values; with return_conf_int, also the (h, 2) interval
        [lower, upper] of level 1 - alpha (pmdarima's spelling)."""
        m, _, lo, hi = self._b.forecast(self._i, h, alpha)
        if not return_conf_int:
            return _out(m)
        np = _numpy()
        ci = np.array([lo, hi], dtype=np.float64).T if np is not None else [list(p) for p in zip(lo, hi)]
        return _out(m), ci

    def forecast_se(self, h=1):
        return _out(self._b.forecast(self._i, h, 0.05)[1])


class ARIMA(BatchModelFile, Estimator):
    """ARIMA(p, d, q)(P, D, Q)s by exact maximum likelihood (Kalman filter).

    order=(p, d, q), seasonal_order=(P, D, Q, s), trend='n' or 'c' (None: 'c'
    without differencing, 'n' with it, as statsmodels' ARIMA). The series is
    differenced first, then the ARMA's exact likelihood is maximized
    (docs/timeseries.md states the convention). params: every parameter given
    in statsmodels' order (const, ar.L, ma.L, ar.S.L, ma.S.L, sigma2) instead
    of estimated; an explosive AR or non-invertible MA is refused by name.
    method: 'ml' (the default: the exact likelihood maximized) or 'css' (the
    coefficients by conditional sum of squares, statsforecast's and R's "CSS";
    llf and the criteria are still the exact likelihood at them; such a fit
    has no model file).

    fit(y): y one 1-d series, or a list of series (a batch, fitted in one
    call, each series' result its own bits). One series: params_ (dict by
    statsmodels' names), llf, aic, aicc, bic, fittedvalues, resid,
    forecast(h, return_conf_int=False, alpha=0.05), model_digest_. A batch:
    results_[i] has the same names per series.

    device: "cpu" (default), "cuda", "opencl" or "gpu": each series' fit one
    work-item of the device, the host's bits (docs/timeseries.md, "Devices").
    """

    def __init__(self, order=(1, 0, 0), seasonal_order=(0, 0, 0, 0), trend=None, params=None, device="cpu",
                 method="ml"):
        self.order = order
        self.seasonal_order = seasonal_order
        self.trend = trend
        self.params = params
        self.device = device
        self.method = method

    def _trend(self):
        if self.trend is not None:
            return self.trend
        d = tuple(self.order)[1] if len(tuple(self.order)) == 3 else 0
        D = tuple(self.seasonal_order)[1] if len(tuple(self.seasonal_order)) == 4 else 0
        return "c" if d + D == 0 else "n"

    def fit(self, y):
        """Fit one series (1-d numbers) or a list of series; returns self."""
        np = _numpy()
        batch = isinstance(y, (list, tuple)) and len(y) > 0 and all(
            hasattr(s, "__len__") and not isinstance(s, (str, bytes)) for s in y)
        if np is not None and isinstance(y, np.ndarray) and y.dtype == object:
            batch = True
        series = list(y) if batch else [y]
        self._batch = _Batch(_pairs(self.order, self.seasonal_order, self._trend(), self.params,
                                          self.device, self.method), series)
        self._is_batch = batch
        self.results_ = [_Fitted(self._batch, i) for i in range(self._batch.n)]
        for i, r in enumerate(self.results_):
            if not r.converged:
                warnings.warn("series %d: the optimizer stopped at its iteration cap (%d iterations) before its "
                              "tolerances" % (i, r.nit), ConvergenceWarning)
        return self

    def _one(self):
        self._check_fitted()
        if self._is_batch:
            raise InvalidArgumentError("this ARIMA was fitted on a batch of %d series: read results_[i]"
                                       % self._batch.n)
        return self.results_[0]

    @property
    def params_(self):
        return self._one().params

    @property
    def llf(self):
        return self._one().llf

    @property
    def aic(self):
        return self._one().aic

    @property
    def aicc(self):
        return self._one().aicc

    @property
    def bic(self):
        return self._one().bic

    @property
    def fittedvalues(self):
        return self._one().fittedvalues

    @property
    def resid(self):
        return self._one().resid

    @property
    def converged_(self):
        return self._one().converged

    def forecast(self, h=1, return_conf_int=False, alpha=0.05):
        return self._one().forecast(h, return_conf_int, alpha)

    def forecast_all(self, h=1, alpha=0.05):
        """Every fitted series' next h values in one call: (mean, se, lower,
        upper), each of shape (nseries, h) (lists of rows without NumPy); row
        i the bits of results_[i].forecast(h) and its interval of level
        1 - alpha. One series fitted alone gives one row."""
        self._check_fitted()
        return self._batch.forecast_all(h, alpha)

    def load_model(self, path_or_bytes):
        """Load an ARIMA model file (or its bytes), one series or a batch;
        returns self. Another family's file is InvalidArgumentError naming it."""
        b = _Batch.from_bytes(read_model_arg(path_or_bytes))
        g = b.integer
        self.order = (g(0, "p"), g(0, "d"), g(0, "q"))
        self.seasonal_order = (g(0, "P"), g(0, "D"), g(0, "Q"), g(0, "s"))
        self.trend = "c" if g(0, "trend") else "n"
        self._batch, self._is_batch = b, b.n != 1
        self.results_ = [_Fitted(b, i) for i in range(b.n)]
        return self

    def _load_fitted(self, model, path_or_bytes):
        """samebits.load_model's hook: the file read again through sb_arima."""
        self.load_model(path_or_bytes)

    @property
    def series_digest_(self):
        return self._one().digest


# The neighbours of Hyndman and Khandakar's stepwise search, in the order
# forecast::auto.arima tries them: (dp, dq, dP, dQ, toggle the constant).
_STEPS = [(0, 0, -1, 0, 0), (0, 0, 1, 0, 0), (0, 0, 0, -1, 0), (0, 0, 0, 1, 0), (0, 0, -1, -1, 0), (0, 0, -1, 1, 0),
          (0, 0, 1, -1, 0), (0, 0, 1, 1, 0), (-1, 0, 0, 0, 0), (1, 0, 0, 0, 0), (0, -1, 0, 0, 0), (0, 1, 0, 0, 0),
          (-1, -1, 0, 0, 0), (-1, 1, 0, 0, 0), (1, -1, 0, 0, 0), (1, 1, 0, 0, 0), (0, 0, 0, 0, 1)]


def auto_arima(y, d=0, D=0, m=1, max_p=5, max_q=5, max_P=2, max_Q=2, max_models=94, approximation=None):
    """Hyndman and Khandakar's stepwise order search (J. Stat. Software 27(3),
    2008, section 3.2), every choice fixed: d and D are given (the unit-root
    tests that choose them are not built), the start models (2,d,2)(1,D,1),
    (0,d,0)(0,D,0), (1,d,0)(1,D,0), (0,d,1)(0,D,1) (the seasonal parts with
    m > 1; with a const when d + D = 0, and (0,d,0) without one), then from
    the best so far its neighbours in forecast::auto.arima's order (P, Q, both,
    p, q, both, the const toggled), moving to the first with a lower AICc
    (strictly: a tie keeps the incumbent) until none is lower or max_models
    fits. Every AICc is the C library's bits, so every choice is the same on
    every machine. A fit refused by the library (e.g. a series too short for
    the order) is skipped. Returns the fitted ARIMA; its search_ lists
    (order, seasonal_order, trend, aicc) in the order fitted.
    approximation: True fits the candidates by conditional sum of squares
    (method='css': their AICc is the exact likelihood's at the CSS
    coefficients) and refits the chosen order by exact ML (the next by AICc
    where that fit is refused); False fits every candidate by exact ML; None
    (the default) is R's auto.arima rule, True when the series has more than
    150 values or m > 12. The returned model is ARIMA(order).fit(y)'s bits
    either way."""
    seasonal = m is not None and m > 1
    if approximation is None:
        approximation = len(y) > 150 or (m is not None and m > 12)
    if approximation not in (True, False):
        raise InvalidArgumentError("approximation=%r: None, True or False" % (approximation,))
    method = "css" if approximation else "ml"
    if D and not seasonal:
        raise InvalidArgumentError("D=%r needs a season: m >= 2" % (D,))
    from .errors import SameBitsError
    cache, order_of_fits = {}, []

    def key(p, q, P, Q, c):
        return (p, q, P if seasonal else 0, Q if seasonal else 0, c)

    def fit(k):
        if k in cache:
            return cache[k]
        p, q, P, Q, c = k
        if min(p, q, P, Q) < 0 or p > max_p or q > max_q or P > max_P or Q > max_Q or len(cache) >= max_models:
            return None
        so = (P, D, Q, m) if seasonal and (P or D or Q) else (0, 0, 0, 0)
        est = ARIMA(order=(p, d, q), seasonal_order=so, trend="c" if c else "n", method=method)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                est.fit(y)
            val = est.aicc
        except SameBitsError:
            est, val = None, float("inf")
        cache[k] = (val, est)
        order_of_fits.append(((p, d, q), so, "c" if c else "n", val))
        return cache[k]

    c0 = 1 if d + D == 0 else 0
    starts = [key(2, 2, 1, 1, c0), key(0, 0, 0, 0, c0), key(1, 0, 1, 0, c0), key(0, 1, 0, 1, c0)]
    if c0:
        starts.append(key(0, 0, 0, 0, 0))
    best, best_val = None, float("inf")
    for k in starts:
        r = fit(k)
        if r is not None and r[0] < best_val:
            best, best_val = k, r[0]
    if best is None:
        raise InvalidInputError("auto_arima: no start model could be fitted to this series")
    moved = True
    while moved and len(cache) < max_models:
        moved = False
        for dp, dq, dP, dQ, tog in _STEPS:
            if not seasonal and (dP or dQ):
                continue
            p, q, P, Q, c = best
            if tog and d + D > 0:
                continue
            k = key(p + dp, q + dq, P + dP, Q + dQ, (1 - c) if tog else c)
            r = fit(k)
            if r is not None and r[0] < best_val:
                best, best_val, moved = k, r[0], True
                break
    est = cache[best][1]
    if approximation:
        # the chosen order by exact ML; where that is refused, the next by AICc (ties in fitting order)
        ranked = sorted((v[0], i, k) for i, (k, v) in enumerate(cache.items()) if v[1] is not None)
        est = None
        for _, _, k in ranked:
            p, q, P, Q, c = k
            so = (P, D, Q, m) if seasonal and (P or D or Q) else (0, 0, 0, 0)
            cand = ARIMA(order=(p, d, q), seasonal_order=so, trend="c" if c else "n")
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    cand.fit(y)
            except SameBitsError:
                continue
            est = cand
            order_of_fits.append(((p, d, q), so, "c" if c else "n", cand.aicc))
            break
        if est is None:
            raise InvalidInputError("auto_arima: no candidate could be refitted by exact ML")
    est.search_ = order_of_fits
    return est


def arima_forecast(df, h, order=(1, 0, 0), seasonal_order=(0, 0, 0, 0), trend=None, level=None, id_col="unique_id",
                   time_col="ds", target_col="y", n_jobs=None, device="cpu", method="ml"):
    """Fit one ARIMA to every series of a long-format DataFrame (unique_id, ds,
    y; statsforecast's layout) in one batch and forecast h steps of each.

    order, seasonal_order, trend, method: ARIMA's. level: None, or a list of
    interval levels in percent (statsforecast's), each adding the columns
    "ARIMA-lo-L" and "ARIMA-hi-L". device: "cpu" (the host's threads), "cuda",
    "opencl" or "gpu": one device work-item a series, the same bits
    (docs/timeseries.md, "Devices"). Rows are ordered by (unique_id, ds) first;
    series keep the order of their first appearance, as ets_forecast's. Returns
    a DataFrame with unique_id, step (1..h), ds where the time column's step
    can be inferred, "ARIMA" and the interval columns. Each series' result is
    the bits of its fit alone. Needs pandas.
    """
    import pandas as pd
    from .timeseries import _long_groups, _next_stamps
    levels = [] if level is None else list(level)
    for lv in levels:
        if isinstance(lv, bool) or not isinstance(lv, (int, float)) or not 0 < float(lv) < 100:
            raise InvalidArgumentError("level=%r: each level must be a number in (0, 100)" % (lv,))
    order_ids, groups = _long_groups(df, h, id_col, time_col, target_col)
    tr = ARIMA(order=order, seasonal_order=seasonal_order, trend=trend)._trend()
    with thread_count(n_jobs):
        batch = _Batch(_pairs(order, seasonal_order, tr, None, device, method),
                       [g[target_col].to_numpy(dtype="float64") for g in groups])
        # one call a level (the mean is the same bits in each: the first's is kept), one without levels
        outs = [batch.forecast_all(h, 1.0 - float(lv) / 100.0) for lv in levels] or [batch.forecast_all(h, 0.05)]
        mean = outs[0][0]
        ints = [o[2:] for o in outs] if levels else []
    rows = []
    for i, g in enumerate(groups):
        stamps = _next_stamps(g[time_col].to_numpy(), h)
        for j in range(int(h)):
            row = [order_ids[i], j + 1, stamps[j], float(mean[i][j])]
            for lo, hi in ints:
                row += [float(lo[i][j]), float(hi[i][j])]
            rows.append(tuple(row))
    cols = [id_col, "step", time_col, "ARIMA"]
    for lv in levels:
        cols += ["ARIMA-lo-%s" % _level_name(lv), "ARIMA-hi-%s" % _level_name(lv)]
    return pd.DataFrame(rows, columns=cols)


def _level_name(lv):
    """statsforecast's column suffix: 95 for 95 or 95.0, 99.5 as it is."""
    return str(int(lv)) if float(lv) == int(lv) else repr(float(lv))
