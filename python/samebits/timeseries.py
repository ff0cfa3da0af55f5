"""Exponential smoothing (docs/timeseries.md): statsmodels' ExponentialSmoothing
models and names, scikit-learn's fit style, identical bits on every machine.

Nothing numeric is computed here: the C library fits, forecasts and digests.
Values are float64 throughout. NumPy is optional: with it, arrays come back as
numpy.ndarray (float64); without it, as lists of floats.
"""
import math
from ctypes import POINTER, c_char_p, c_double, c_int, c_int32, c_int64, c_void_p

from ._base import Estimator, thread_count
from ._lib import check, lib
from ._tsbatch import Batch, BatchModelFile, _out, _series, declare, read_model_arg
from .errors import InvalidArgumentError, InvalidInputError

_P = POINTER

declare("ets", {
    "forecast": (c_int, [c_void_p, c_int64, c_int32, _P(c_double)]),
    "save": (c_int, [c_void_p, c_char_p]),
    "load": (c_int, [c_char_p, _P(c_void_p)])})


def _spec_pairs(trend, damped_trend, seasonal, seasonal_periods, given, device=None, error="add"):
    def comp(name, v, allowed):
        if v is None or v is False:
            return "none"
        if v is True and name == "trend":
            return "add"
        if isinstance(v, str) and v in allowed:
            return v
        raise InvalidArgumentError("%s=%r: one of None, %s" % (name, v, ", ".join(repr(a) for a in allowed)))
    pairs = [("trend", comp("trend", trend, ("add", "additive", "mul", "multiplicative"))),
             ("seasonal", comp("seasonal", seasonal, ("add", "additive", "mul", "multiplicative")))]
    if not isinstance(damped_trend, (bool, int)) or damped_trend not in (0, 1):
        raise InvalidArgumentError("damped_trend=%r must be True or False" % (damped_trend,))
    pairs.append(("damped_trend", "true" if damped_trend else "false"))
    if error not in ("add", "additive", "mul", "multiplicative"):
        raise InvalidArgumentError("error=%r: 'add' or 'mul'" % (error,))
    if error in ("mul", "multiplicative"):
        pairs.append(("error", "mul"))
    if seasonal_periods is not None:
        if isinstance(seasonal_periods, bool) or not isinstance(seasonal_periods, int) and \
                not hasattr(seasonal_periods, "__index__"):
            raise InvalidArgumentError("seasonal_periods=%r must be a whole number >= 2" % (seasonal_periods,))
        pairs.append(("seasonal_periods", str(int(seasonal_periods))))
    for k, v in given:
        if v is not None:
            pairs.append((k, repr(float(v))))
    if device is not None:
        if not isinstance(device, str):
            raise InvalidArgumentError("device=%r: a device name (cpu, cuda, opencl, gpu)" % (device,))
        pairs.append(("device", device))
    return pairs


class _Batch(Batch):
    """A fitted sb_ets batch."""

    FAMILY = "ets"

    def forecast(self, i, h):
        if isinstance(h, bool) or not hasattr(h, "__index__") or int(h) < 1:
            raise InvalidArgumentError("h=%r must be a whole number >= 1" % (h,))
        out = (c_double * int(h))()
        check(lib.sb_ets_forecast(self.handle.ptr, i, int(h), out))
        return list(out)


class ExponentialSmoothing(BatchModelFile, Estimator):
    """Holt-Winters exponential smoothing with statsmodels' names.

    trend: None or "add"; damped_trend: damp the trend (phi in [0.8, 0.995]);
    seasonal: None, "add" or "mul"; seasonal_periods: the period (>= 2).
    smoothing_level, smoothing_trend, smoothing_seasonal, damping_trend: given
    values instead of estimated ones (statsmodels takes them in fit()). The
    initial states are always estimated; the fit minimizes the SSE. error:
    "add" (default: least squares, statsmodels' ExponentialSmoothing) or
    "mul" (statsmodels' ETSModel name: multiplicative errors, the fit
    maximizes the likelihood of Hyndman et al. 2008; positive data only; the
    point forecasts follow the same recursions; sse is then the sum of
    squared relative errors). device:
    "cpu" (default), "cuda", "opencl" or "gpu": each series' fit one device
    work-item, the same bits as the CPU's (docs/timeseries.md, "Devices").

    fit(y) returns the fitted estimator with fittedvalues, resid, params_
    (statsmodels' params names; also as params), sse, aic, aicc, bic,
    model_digest_ (the model file's SHA-256), series_digest_, and forecast(h);
    save_model / load_model / model_bytes for the model file. Many series at
    once: ets_forecast (one batch, the same bits as one fit a series).
    """

    def __init__(self, trend=None, damped_trend=False, seasonal=None, seasonal_periods=None,
                 smoothing_level=None, smoothing_trend=None, smoothing_seasonal=None, damping_trend=None,
                 device="cpu", error="add"):
        self.error = error
        self.trend = trend
        self.damped_trend = damped_trend
        self.seasonal = seasonal
        self.seasonal_periods = seasonal_periods
        self.smoothing_level = smoothing_level
        self.smoothing_trend = smoothing_trend
        self.smoothing_seasonal = smoothing_seasonal
        self.damping_trend = damping_trend
        self.device = device

    def _pairs(self):
        return _spec_pairs(self.trend, self.damped_trend, self.seasonal, self.seasonal_periods,
                           [("smoothing_level", self.smoothing_level), ("smoothing_trend", self.smoothing_trend),
                            ("smoothing_seasonal", self.smoothing_seasonal), ("damping_trend", self.damping_trend)],
                           self.device, self.error)

    def fit(self, y):
        """Fit one series y (1-d numbers, no missing value); returns self."""
        self._batch = _Batch(self._pairs(), [y])
        self._model = self._batch
        return self

    def forecast(self, h=1):
        """The next h values, float64."""
        self._check_fitted()
        return _out(self._batch.forecast(0, h))

    def _arr(self, name):
        self._check_fitted()
        return self._batch.array(0, name)

    @property
    def fittedvalues(self):
        return _out(self._arr("fittedvalues"))

    @property
    def resid(self):
        return _out(self._arr("resid"))

    @property
    def params_(self):
        """statsmodels' params: NaN where the model has no such parameter."""
        p = self._arr("params")
        return {"smoothing_level": p[0], "smoothing_trend": p[1], "smoothing_seasonal": p[2], "damping_trend": p[3],
                "initial_level": self._arr("initial_level")[0], "initial_trend": self._arr("initial_trend")[0],
                "initial_seasons": _out(self._arr("initial_seasons"))}

    params = params_

    @property
    def sse(self):
        return self._arr("sse")[0]

    @property
    def aic(self):
        return self._arr("aic")[0]

    @property
    def aicc(self):
        return self._arr("aicc")[0]

    @property
    def bic(self):
        return self._arr("bic")[0]

    @property
    def nobs(self):
        self._check_fitted()
        return self._batch.integer(0, "nobs")

    @property
    def converged_(self):
        self._check_fitted()
        return bool(self._batch.integer(0, "converged"))

    @property
    def n_evals_(self):
        self._check_fitted()
        return self._batch.integer(0, "nfev")

    @property
    def series_digest_(self):
        """SHA-256 of the series' canonical record (sb_ets_digest): what a batch
        reports for the same series at any position."""
        self._check_fitted()
        return self._batch.digest(0)

    def load_model(self, path_or_bytes):
        """Load a model file of one exponential smoothing series (or its bytes);
        returns self. Another family's file is InvalidArgumentError naming it."""
        b = _Batch.from_bytes(read_model_arg(path_or_bytes))
        if b.n != 1:
            raise InvalidInputError("the file holds %d series; ExponentialSmoothing holds one (read a batch with "
                                    "samebits.timeseries.load_batch)" % b.n)
        names = {0: None, 1: "add", 2: "mul"}
        self.trend = names[b.integer(0, "trend")]
        self.damped_trend = bool(b.integer(0, "damped_trend"))
        self.seasonal = names[b.integer(0, "seasonal")]
        self.seasonal_periods = b.integer(0, "seasonal_periods") or None
        self._batch = self._model = b
        return self

    def _load_fitted(self, model, path_or_bytes):
        """samebits.load_model's hook: the file read again through sb_ets."""
        self.load_model(path_or_bytes)


def _long_groups(df, h, id_col, time_col, target_col):
    """A long-format frame's checks (the three columns present, h a whole
    number >= 1), then its rows ordered by (unique_id's first appearance,
    time): the ids in that order and each one's rows (ets_forecast's and
    auto_ets_forecast's first step)."""
    import pandas as pd
    for c in (id_col, time_col, target_col):
        if c not in df.columns:
            raise InvalidInputError("the frame has no column %r (columns: %s)" % (c, ", ".join(map(str, df.columns))))
    if isinstance(h, bool) or not hasattr(h, "__index__") or int(h) < 1:
        raise InvalidArgumentError("h=%r must be a whole number >= 1" % (h,))
    order = pd.unique(df[id_col])
    d = df[[id_col, time_col, target_col]].copy()
    d["_pos"] = pd.Categorical(d[id_col], categories=order).codes
    d = d.sort_values(["_pos", time_col], kind="stable")
    return order, [g for _, g in d.groupby("_pos", sort=True)]


def _next_stamps(ts, h):
    """The h stamps after a series' stamps ts, by the step of its last two
    (dates, numbers); None each where there is no step (one stamp, text)."""
    try:
        step = ts[-1] - ts[-2] if len(ts) > 1 else None
        return [ts[-1] + (j + 1) * step for j in range(int(h))] if step is not None else [None] * int(h)
    except TypeError:
        return [None] * int(h)


def ets_forecast(df, h, trend=None, damped_trend=False, seasonal=None, seasonal_periods=None, id_col="unique_id",
                 time_col="ds", target_col="y", n_jobs=None, device="cpu", error="add"):
    """Fit one model to every series of a long-format DataFrame (unique_id, ds,
    y; statsforecast's layout) in one batch and forecast h steps of each
    (error="mul": multiplicative errors, as ExponentialSmoothing's).

    device: "cpu" (the host's threads), "cuda", "opencl" or "gpu": one device
    work-item a series, the same bits (docs/timeseries.md, "Devices").
    Rows are ordered by (unique_id, ds) first; series keep the order of their
    first appearance. Returns a DataFrame with unique_id, step (1..h), ds where
    the time column's step can be inferred (the series' last two stamps'
    difference; None for stamps that are text), and the forecast column
    "ExponentialSmoothing". Series are ordered by the time column's values
    (text stamps by their text: ISO dates sort so). Each series'
    result is the bits of its fit alone (docs/timeseries.md). Needs pandas.
    """
    import pandas as pd
    order, groups = _long_groups(df, h, id_col, time_col, target_col)
    pairs = _spec_pairs(trend, damped_trend, seasonal, seasonal_periods, [], device, error)
    with thread_count(n_jobs):
        batch = _Batch(pairs, [g[target_col].to_numpy(dtype="float64") for g in groups])
    rows = []
    for i, g in enumerate(groups):
        f = batch.forecast(i, h)
        stamps = _next_stamps(g[time_col].to_numpy(), h)
        for j in range(int(h)):
            rows.append((order[i], j + 1, stamps[j], f[j]))
    return pd.DataFrame(rows, columns=[id_col, "step", time_col, "ExponentialSmoothing"])


# AutoETS's candidates in their fixed order (R's forecast::ets loop: error,
# trend, season, then damping): (trend, damped_trend, seasonal) for each error.
_AUTO_ORDER = [(t, d, s) for t in ("N", "A") for s in ("N", "A", "M") for d in ((False,) if t == "N" else (False, True))]


def _auto_candidates(model, damped, season_length, restrict):
    """The candidates of an AutoETS model string, in the fixed order (errors A
    then M, each in _AUTO_ORDER): a list of (name, trend, damped_trend,
    seasonal, error) for _spec_pairs."""
    if not isinstance(model, str) or len(model) != 3:
        raise InvalidArgumentError("model=%r: three letters, error trend season (e.g. 'ZZZ', 'AZZ', 'MAN')" % (model,))
    e, t, s = model.upper()
    if e not in "AMZ":
        raise InvalidArgumentError("model=%r: the error is one of A, M, Z" % (model,))
    if t == "M":
        raise InvalidArgumentError("model=%r: a multiplicative trend is not built (statsforecast's default "
                                   "leaves it out too)" % (model,))
    if t not in "NAZ" or s not in "NAMZ":
        raise InvalidArgumentError("model=%r: trend one of N, A, Z; season one of N, A, M, Z" % (model,))
    if damped not in (None, True, False):
        raise InvalidArgumentError("damped=%r: None (both), True or False" % (damped,))
    if isinstance(season_length, bool) or not hasattr(season_length, "__index__") or int(season_length) < 1:
        raise InvalidArgumentError("season_length=%r must be a whole number >= 1" % (season_length,))
    m = int(season_length)
    if m == 1 and s in "AM":
        raise InvalidArgumentError("model=%r: a season of type %s needs season_length >= 2" % (model, s))
    if t == "N" and damped is True:
        raise InvalidArgumentError("damped=True with trend 'N': no trend to damp")
    if restrict and e == "A" and s == "M":
        raise InvalidArgumentError("model=%r: additive errors with a multiplicative season are excluded by "
                                   "restrict=True (R's and statsforecast's rule: infinite variance); pass "
                                   "restrict=False to fit them" % (model,))
    out = []
    for ee in ("A", "M"):
        if e != "Z" and ee != e:
            continue
        for tt, dd, ss in _AUTO_ORDER:
            if (t != "Z" and tt != t) or (s != "Z" and ss != s) or (damped is not None and dd != damped):
                continue
            if ss != "N" and m == 1 or (restrict and ee == "A" and ss == "M"):
                continue
            name = ee + tt + ("d" if dd else "") + ss
            out.append((name, "add" if tt == "A" else None, dd, {"N": None, "A": "add", "M": "mul"}[ss],
                        "mul" if ee == "M" else "add"))
    if not out:
        raise InvalidArgumentError("model=%r, damped=%r: no admissible model" % (model, damped))
    return out, m


def _auto_admissible(cand, m, y):
    """1 when the library would fit candidate cand to y: its length rule
    (ets.c's ets_min_length with every parameter estimated: two full periods
    with a season, else one more than the states and parameters, at least 2)
    and, for a multiplicative season or multiplicative errors, positive values
    (R's and statsforecast's rule: such candidates are left out otherwise)."""
    _, trend, damped, seasonal, error = cand
    est = 1 + (1 if trend else 0) + 1 + (1 if trend else 0) + (1 if seasonal else 0) + (1 if damped else 0)
    need = max(est + 1, 2)
    if seasonal:
        need = max(need, 2 * m)
    if len(y) < need:
        return False
    if seasonal == "mul" or error == "mul":
        return all(v > 0 for v in y)
    return True


def _auto_criterion(b, pos):
    """AutoETS's criterion of fit pos of batch b (ets.c's
    sb_ets_auto_criterion, the same operations): the AICc of Hyndman et al.
    (2008), R's ets and statsforecast, which counts k + 1 parameters (the
    smoothing parameters, the initial states and sigma), less n log n (the
    same for every candidate): aic + 2 + 2 np (np + 1) / (n - np - 1); +inf
    when n - np - 1 <= 0. (The fit's own aicc is statsmodels'.)"""
    aic = b.array(pos, "aic")[0]
    k, n = b.integer(pos, "k"), b.integer(pos, "nobs")
    if n - k - 2 <= 0:
        return math.inf
    npar = float(k) + 1.0
    return aic + 2.0 + (2.0 * npar * (npar + 1.0)) / float(n - k - 2)


def _auto_select(series, model, damped, season_length, restrict, device):
    """Fit every admissible candidate to every series (one batch a candidate)
    and keep, for each series, the lowest criterion (_auto_criterion); a tie
    keeps the earlier candidate (strict <). A missing value is refused by
    name, with the series' own index, before any fit. Returns (picks, cands,
    m, table): picks[i] = (candidate index, batch, position), table[i] =
    [(name, criterion or None)]."""
    cands, m = _auto_candidates(model, damped, season_length, restrict)
    ys = [list(map(float, _out(_series(y, "series %d" % i)))) for i, y in enumerate(series)]
    for i, y in enumerate(ys):
        bad = [t for t, v in enumerate(y) if not math.isfinite(v)]
        if bad:
            raise InvalidInputError("series %d: value %d is %s; missing values are refused (docs/timeseries.md)"
                                    % (i, bad[0], "NaN" if y[bad[0]] != y[bad[0]] else "infinite"))
    picks = [None] * len(ys)
    best = [None] * len(ys)
    table = [[] for _ in ys]
    for ci, c in enumerate(cands):
        idx = [i for i, y in enumerate(ys) if _auto_admissible(c, m, y)]
        for i in range(len(ys)):
            if i not in idx:
                table[i].append((c[0], None))
        if not idx:
            continue
        pairs = _spec_pairs(c[1], c[2], c[3], m if c[3] else None, [], device, c[4])
        b = _Batch(pairs, [ys[i] for i in idx])
        for pos, i in enumerate(idx):
            a = _auto_criterion(b, pos)
            table[i].append((c[0], a))
            if best[i] is None or a < best[i]:
                best[i], picks[i] = a, (ci, b, pos)
    for i, p in enumerate(picks):
        if p is None:
            raise InvalidInputError("series %d (%d values): too short for every candidate of model=%r"
                                    % (i, len(ys[i]), model))
    return picks, cands, m, table


def _sf_name(name):
    """'AAdN' as statsforecast's method string 'ETS(A,Ad,N)'."""
    t = name[1:-1]
    return "ETS(%s,%s,%s)" % (name[0], t, name[-1])


class AutoETS(BatchModelFile, Estimator):
    """Automatic exponential smoothing: the model of the lowest AICc among the
    candidates of a model string, statsforecast's AutoETS and R's ets names.

    model: three letters, error, trend and season, each a type or Z (chosen):
    error A, M or Z, trend N, A or Z (a multiplicative trend is not built;
    statsforecast leaves it out by default), season N, A, M or Z; default
    'AZZ' ('ZZZ' is statsforecast's). damped: None tries both, True or False
    fixes it. season_length: the period (1: no season). restrict=True (R's
    and statsforecast's default) leaves out additive errors with a
    multiplicative season; restrict=False fits those too. Multiplicative
    errors and seasons are candidates only for positive series (R's rule).
    Each candidate is samebits' ExponentialSmoothing fit (the same bits;
    error='mul' for M); the pick is the lowest AICc of Hyndman et al. (2008),
    which counts sigma with the smoothing parameters and initial states
    (R's ets and statsforecast; the fit's own aicc is statsmodels', which
    does not), a tie keeping the earlier candidate in the fixed order (error
    A before M, trend N before A, season N, A, M, undamped before damped).
    Candidates a series is too short for are skipped (ets.c's length rule).
    A missing value is refused by name (InvalidInputError, the series' index).

    fit(y) returns self with model_ (statsforecast's method string, e.g.
    'ETS(A,Ad,N)'), estimator_ (the chosen fitted ExponentialSmoothing),
    candidates_ ((name, criterion) in the fixed order; None where skipped),
    forecast(h), predict(h) ({"mean": forecast}, statsforecast's), and the
    chosen model's fittedvalues, resid, params_, sse, aic, aicc, bic,
    series_digest_, model_digest_ and model file.
    """

    def __init__(self, season_length=1, model="AZZ", damped=None, restrict=True, device="cpu"):
        self.season_length = season_length
        self.model = model
        self.damped = damped
        self.restrict = restrict
        self.device = device

    def fit(self, y):
        picks, cands, m, table = _auto_select([y], self.model, self.damped, self.season_length, self.restrict,
                                              self.device)
        ci, b, pos = picks[0]
        name, trend, damped, seasonal, error = cands[ci]
        est = ExponentialSmoothing(trend=trend, damped_trend=damped, seasonal=seasonal,
                                   seasonal_periods=m if seasonal else None, device=self.device, error=error)
        est._batch = est._model = b  # the candidate's batch of this one series: its fit
        self.estimator_ = est
        self.model_ = _sf_name(name)
        self.candidates_ = table[0]
        self._batch = self._model = est._batch
        return self

    def forecast(self, h=1):
        self._check_fitted()
        return self.estimator_.forecast(h)

    def predict(self, h=1):
        """statsforecast's spelling: {"mean": the h forecasts}."""
        return {"mean": self.forecast(h)}

    def __getattr__(self, name):
        if name in ("fittedvalues", "resid", "params_", "params", "sse", "aic", "aicc", "bic", "nobs",
                    "series_digest_", "converged_", "n_evals_"):
            est = self.__dict__.get("estimator_")
            if est is None:
                self._check_fitted()
            return getattr(est, name)
        raise AttributeError(name)


def auto_ets_forecast(df, h, season_length=1, model="AZZ", damped=None, restrict=True, id_col="unique_id",
                      time_col="ds", target_col="y", n_jobs=None, device="cpu"):
    """AutoETS over a long-format DataFrame (unique_id, ds, y): every
    candidate fitted to every series in one batch a candidate, each series'
    pick its own lowest AICc (AutoETS's rule), h forecasts of each. Returns a
    DataFrame with unique_id, step, ds (as ets_forecast) and the columns
    "AutoETS" (the forecast) and "model" (statsforecast's method string).
    Each series' result is the bits of AutoETS().fit on it alone."""
    import pandas as pd
    order, groups = _long_groups(df, h, id_col, time_col, target_col)
    with thread_count(n_jobs):
        picks, cands, m, _ = _auto_select([g[target_col].to_numpy(dtype="float64") for g in groups], model, damped,
                                          season_length, restrict, device)
    rows = []
    for i, g in enumerate(groups):
        ci, b, pos = picks[i]
        f = b.forecast(pos, h)
        stamps = _next_stamps(g[time_col].to_numpy(), h)
        for j in range(int(h)):
            rows.append((order[i], j + 1, stamps[j], f[j], _sf_name(cands[ci][0])))
    return pd.DataFrame(rows, columns=[id_col, "step", time_col, "AutoETS", "model"])
