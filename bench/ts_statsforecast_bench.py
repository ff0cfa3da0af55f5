"""Exponential smoothing and ARIMA beside statsforecast (issue 28's second peer).

Series: the 15 of bench/ets_bench.py and bench/arima_bench.py (the NYC taxi
samples as ten daily series 2018-2020 with m = 7; statsmodels' CO2, El Nino
m = 12, realgdp, realcons m = 4, Nile and sunspots without a season), and for
batched speed a batch of the taxi's pickup zones' daily trip counts (the
--zones busiest zones, 1,096 days each, zeros kept).

How the models map (statsforecast 2.x, a port of R's forecast::ets/arima):

- ETS. samebits' ExponentialSmoothing is the component form with additive
  errors (statsmodels' ExponentialSmoothing): ses = "ANN", Holt = "AAN",
  damped = "AAN" with damped=True ("AAdN"), Holt-Winters additive = "AAA"
  (damped: "AAdA"), additive season without trend = "ANA". statsforecast's
  beta is the error-correction form's, alpha * beta* (samebits' and
  statsmodels' smoothing_trend is beta*): the bench compares beta_sf / alpha_sf.
  Holt-Winters multiplicative with additive errors ("AAM") is refused by
  statsforecast ("Forbidden model combination", R's restrict=TRUE), so it
  is not compared here. Both minimize the SSE for additive errors (sf's
  opt_crit "lik" is n log SSE) over the smoothing parameters and the initial
  states (m - 1 free seasons in both), but with different bounds: sf keeps
  alpha, beta, gamma in [1e-4, 0.9999] with beta <= alpha and
  gamma <= 1 - alpha and phi in [0.8, 0.98] (R's "both" bounds); samebits
  alpha, beta*, gamma in [0, 1], phi in [0.8, 0.995] (statsmodels'). Where a
  bound of sf's binds the two optima differ by design; the verdict says so.
  llf: sf's loglik is R's -0.5 n log(SSE) (no constant); the bench computes
  the same expression from samebits' SSE (samebits reports no ETS llf yet).
- ARIMA. statsforecast.models.ARIMA(order, season_length=m, seasonal_order,
  include_mean=(d + D == 0), include_drift=False): R's arima. Its mean form
  (intercept) is samebits' const; its ar/ma/sar/sma are statsmodels' ar.L,
  ma.L, ar.S.L, ma.S.L (same signs); sigma2 is the concentrated ML estimate
  in both. Its likelihood keeps the undifferenced state with a diffuse prior
  (kappa = 1e6, observations of gain above 1e4 left out), samebits
  differences first (statsmodels' simple_differencing): these are close, not
  equal. sf's default method is "CSS-ML" (conditional sum of squares for the
  start, then exact ML); the bench runs method="ML" (exact ML from zero, as
  asked) and "CSS-ML", and compares samebits with the one of the two with the
  higher llf (the column "sf method"; both llfs are in the JSON). Forecasts:
  h = 2m, or 10 without a season.
- Automatic searches, on each series less its last h values (h = 2m or 10;
  sMAPE on the held-out tail, 100 * mean(2|y - f| / (|y| + |f|)), a 0/0 term
  counting 0):
  * AutoARIMA: statsforecast's defaults (KPSS for d, its seasonal-strength
    test for D, drift and mean allowed, stepwise, approximation False) and,
    like for like with samebits.auto_arima, the same stepwise search with d
    and D fixed at the default's choice and allowdrift=False (samebits has no
    drift and no unit-root tests: its d and D are given, here sf's). Both
    search AICc with max p, q 5, P, Q 2, 94 models. samebits.auto_arima runs
    at its default approximation (R's rule: the candidates by CSS when the
    series has more than 150 values or m > 12, the pick refitted by exact
    ML) and, on the --ml-series, also with approximation=False (every
    candidate by exact ML, as statsforecast's default).
  * AutoETS: statsforecast's "AZZ" (additive errors: ANN, AAN, AAdN, ANA,
    AAA, AAdA) and "ZZZ" (every allowed model: those and the multiplicative
    errors MNN, MNA, MNM, MAN, MAdN, MAA, MAM, MAdA, MAdM; no multiplicative
    trend, statsforecast's default) against samebits.AutoETS with the same
    model strings (the same candidates, restrict=True). --skip auto-arima
    runs the AutoETS searches alone.

Times (fit only; 2 cores, the machine shared; load is recorded): samebits one
batch a model and period at --threads; statsforecast through
StatsForecast(models=[...], freq, n_jobs=1 and n_jobs=2).fit on the long
frame, each preceded by an untimed warm-up call on the same configuration
(numba's JIT compile and the worker pool's first start are therefore not in
its time; each n_jobs=2 call still starts its own worker processes, part of
its batched cost). The searches' sMAPE rows time one series after another on
both sides (samebits at 1 thread). samebits.auto_arima has no batch form: in
the batched rows it runs one series after another and, against n_jobs=2,
over a pool of 2 processes; samebits.auto_ets_forecast is one batch a
candidate at --threads.

Run: python3 bench/ts_statsforecast_bench.py [--threads 2] [--zones 24] [--auto-zones 8]
Results: bench/results/ts-statsforecast-DATE-COMMIT.{md,json}.
"""
import argparse
import multiprocessing as mp
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
import samebits  # noqa: E402
from samebits.arima import _Batch as ABatch, _pairs as apairs  # noqa: E402
from samebits.timeseries import _Batch as EBatch, _spec_pairs  # noqa: E402
from ets_bench import TAXI, statsmodels_series, taxi_series  # noqa: E402
from ts_bench_common import fit_misses, header, run_line  # noqa: E402

warnings.filterwarnings("ignore")

# (name, sf model string, trend, damped, seasonal)
ETS_MODELS = [("ses", "ANN", None, False, None), ("holt", "AAN", "add", False, None),
              ("damped", "AAN", "add", True, None), ("hw-add", "AAA", "add", False, "add"),
              ("hw-add-damped", "AAA", "add", True, "add")]
ARIMA_MODELS = [("ar1", (1, 0, 0), None), ("arma21", (2, 0, 1), None), ("ima11", (0, 1, 1), None),
                ("arima111", (1, 1, 1), None), ("airline", (0, 1, 1), (0, 1, 1)), ("sar1", (1, 0, 0), (1, 0, 0)),
                ("sarima111-011", (1, 1, 1), (0, 1, 1))]
SF_BOUNDS = {"alpha": (1e-4, 0.9999), "phi": (0.8, 0.98)}
ML_SERIES = set()  # --ml-series: the searches also run with approximation=False


def smape(y, f):
    y, f = np.asarray(y, float), np.asarray(f, float)
    den = np.abs(y) + np.abs(f)
    t = np.where(den > 0, 2 * np.abs(y - f) / np.where(den > 0, den, 1), 0.0)
    return 100.0 * float(np.mean(t))


def horizon(m):
    return 2 * m if m else 10


def zone_series(k):
    """The k busiest pickup zones' daily trip counts, 2018-2020 (zeros kept)."""
    import glob
    import gzip
    frames = []
    for path in sorted(glob.glob(os.path.join(TAXI, "yellow_tripdata_sample_*.csv.gz"))):
        with gzip.open(path, "rt") as f:
            frames.append(pd.read_csv(f, usecols=["pickup_datetime", "pickup_location_id"]))
    d = pd.concat(frames, ignore_index=True)
    d["day"] = pd.to_datetime(d["pickup_datetime"]).dt.normalize()
    d = d[(d.day >= "2018-01-01") & (d.day <= "2020-12-31")]
    days = pd.date_range("2018-01-01", "2020-12-31", freq="D")
    out = {}
    for z in d.pickup_location_id.value_counts().index[:k]:
        out["zone-%d" % z] = d[d.pickup_location_id == z].groupby("day").size().reindex(
            days, fill_value=0).to_numpy(dtype=np.float64)
    return out


def long_frame(series):
    parts = []
    for k, y in series.items():
        parts.append(pd.DataFrame({"unique_id": k, "ds": np.arange(len(y)), "y": y}))
    return pd.concat(parts, ignore_index=True)


# ---------------------------------------------------------------- samebits
def sb_ets_batch(ys, trend, damped, seasonal, m, threads):
    pairs = _spec_pairs(trend, damped, seasonal, m if seasonal else None, [])
    samebits.set_num_threads(threads)
    t0 = time.perf_counter()
    b = EBatch(pairs, ys)
    dt = time.perf_counter() - t0
    samebits.set_num_threads(0)
    return b, dt


def sb_arima_batch(ys, order, so, trend, threads):
    samebits.set_num_threads(threads)
    t0 = time.perf_counter()
    b = ABatch(apairs(order, so, trend, None), ys)
    dt = time.perf_counter() - t0
    samebits.set_num_threads(0)
    return b, dt


def sb_auto_arima(args):
    y, d, D, m, h = args[:5]
    approx = args[5] if len(args) > 5 else None
    samebits.set_num_threads(1)
    t0 = time.perf_counter()
    est = samebits.auto_arima(y, d=d, D=D, m=m if m else 1, approximation=approx)
    dt = time.perf_counter() - t0
    fc = np.asarray(est.forecast(h), dtype=float)
    return dict(order=list(est.order), seasonal_order=list(est.seasonal_order), trend=est.trend,
                aicc=float(est.aicc), fits=len(est.search_), fc=fc, time=dt)


# ---------------------------------------------------------------- statsforecast
def noninvertible(coef, prefix):
    """Whether statsforecast's MA polynomial 1 + t1 z + ... (keys prefix1, ...)
    has a root inside the unit circle (R's ML does not keep MA invertible)."""
    t = [float(coef[k]) for k in sorted((k for k in coef if k.startswith(prefix) and k[len(prefix):].isdigit()),
                                        key=lambda k: int(k[len(prefix):]))]
    if not t or not any(t):
        return False
    return bool(np.any(np.abs(np.roots(([1.0] + t)[::-1])) < 1.0 - 1e-9))


def sf_arima_name(name, m):
    """samebits' (statsmodels') parameter name -> statsforecast's coef key."""
    if name == "const":
        return "intercept"
    if name.startswith("ar.S.L"):
        return "sar%d" % (int(name[6:]) // m)
    if name.startswith("ma.S.L"):
        return "sma%d" % (int(name[6:]) // m)
    if name.startswith("ar.L"):
        return "ar" + name[4:]
    if name.startswith("ma.L"):
        return "ma" + name[4:]
    return name


def sf_fit_arima(y, order, so, m, method):
    from statsforecast.models import ARIMA
    mod = ARIMA(order=order, season_length=m or 1, seasonal_order=so, include_mean=(order[1] + so[1] == 0),
                include_drift=False, method=method)
    t0 = time.perf_counter()
    mod.fit(y)
    return mod, time.perf_counter() - t0


def sf_ets(y, model, damped, m):
    from statsforecast.models import AutoETS
    mod = AutoETS(season_length=m or 1, model=model, damped=damped)
    t0 = time.perf_counter()
    mod.fit(y)
    return mod, time.perf_counter() - t0


def sf_batched_time(models, df, n_jobs):
    """StatsForecast(...).fit time on the long frame df; a warm-up call first
    (the same models and n_jobs on the first two series) is not timed."""
    from statsforecast import StatsForecast
    ids = df.unique_id.unique()[:2]
    StatsForecast(models=models, freq=1, n_jobs=n_jobs).fit(df[df.unique_id.isin(ids)])
    t0 = time.perf_counter()
    StatsForecast(models=models, freq=1, n_jobs=n_jobs).fit(df)
    return time.perf_counter() - t0


# ---------------------------------------------------------------- quality
def ets_quality(series, threads):
    rows, times = [], []
    for mname, sfm, trend, damped, seasonal in ETS_MODELS:
        names = [k for k, (y, m) in series.items() if m is not None or seasonal is None]
        sb, sbt, sft = {}, 0.0, 0.0
        for m in sorted({series[k][1] for k in names}, key=lambda v: v or 0):
            group = [k for k in names if series[k][1] == m]
            b, dt = sb_ets_batch([series[k][0] for k in group], trend, damped, seasonal, m, threads)
            sbt += dt
            for i, k in enumerate(group):
                sb[k] = dict(par=np.array(b.array(i, "params")), sse=b.array(i, "sse")[0],
                             fc=np.array(b.forecast(i, horizon(m if seasonal else None))))
        for k in names:
            y, m = series[k]
            mm = m if seasonal else None
            h = horizon(mm)
            mod, dt = sf_ets(y, sfm, damped, mm)
            sft += dt
            md = mod.model_
            p = np.asarray(md["par"][:4], float)
            sfp = np.array([p[0], p[1] / p[0] if not np.isnan(p[1]) else np.nan, p[2], p[3]])
            s = sb[k]
            diffs = [abs(a - c) for a, c in zip(s["par"], sfp) if not np.isnan(a) and not np.isnan(c)]
            sse_sf = float(np.sum(np.asarray(md["residuals"]) ** 2))
            n = len(y)
            llf_sb = -0.5 * n * np.log(s["sse"])
            fc = np.asarray(mod.predict(h)["mean"])
            scale = max(float(np.max(np.abs(fc))), 1e-300)
            at_bound = []
            if p[0] <= SF_BOUNDS["alpha"][0] * 1.001 or p[0] >= SF_BOUNDS["alpha"][1] - 1e-6:
                at_bound.append("alpha")
            if not np.isnan(p[3]) and (p[3] >= SF_BOUNDS["phi"][1] - 1e-6):
                at_bound.append("phi")
            if not np.isnan(p[1]) and p[1] >= p[0] - 1e-6:
                at_bound.append("beta<=alpha")
            if not np.isnan(p[2]) and p[2] >= 1 - p[0] - 1e-6:
                at_bound.append("gamma<=1-alpha")
            rows.append({"series": k, "model": mname, "sf_model": md["method"], "n": n,
                         "param_diff": max(diffs), "sse_sb": s["sse"], "sse_sf": sse_sf,
                         "sse_rel": (s["sse"] - sse_sf) / sse_sf if sse_sf > 0 else 0.0,
                         "llf_sb": llf_sb, "llf_sf": float(md["loglik"]),
                         "llf_rel": (llf_sb - float(md["loglik"])) / abs(float(md["loglik"])),
                         "fc_rel": float(np.max(np.abs(s["fc"] - fc)) / scale),
                         "params_sb": [float(v) for v in s["par"]], "params_sf": [float(v) for v in sfp],
                         "sf_bound": at_bound})
        times.append({"model": "ets " + mname, "fits": len(names), "samebits_s": sbt, "sf_s": sft})
        print("ets %-14s %2d fits  samebits %.3fs  statsforecast %.3fs" % (mname, len(names), sbt, sft), flush=True)
    return rows, times


def arima_quality(series, threads):
    rows, times = [], []
    for mname, order, sorder in ARIMA_MODELS:
        names = [k for k, (y, m) in series.items() if sorder is None or m is not None]
        sb, sbt, sft = {}, 0.0, {"ML": 0.0, "CSS-ML": 0.0}
        for m in sorted({series[k][1] for k in names}, key=lambda v: v or 0):
            group = [k for k in names if series[k][1] == m]
            so = (0, 0, 0, 0) if sorder is None else tuple(sorder) + (m,)
            trend = "c" if order[1] + so[1] == 0 else "n"
            b, dt = sb_arima_batch([series[k][0] for k in group], order, so, trend, threads)
            sbt += dt
            for i, k in enumerate(group):
                mean, se, lo, hi = b.forecast(i, horizon(m if sorder else None), 0.05)
                sb[k] = dict(par=np.array(b.array(i, "params")), llf=b.array(i, "llf")[0], fc=np.array(mean),
                             names=b.names(), conv=b.integer(i, "converged"))
        for k in names:
            y, m = series[k]
            mm = m if sorder else None
            so3 = tuple(sorder) if sorder else (0, 0, 0)
            h = horizon(mm)
            fits = {}
            for method in ("ML", "CSS-ML"):
                try:
                    mod, dt = sf_fit_arima(y, order, so3, mm, method)
                    sft[method] += dt
                    fits[method] = mod
                except Exception as e:  # a refused fit is recorded, not hidden
                    fits[method] = e
            ok = {a: f for a, f in fits.items() if not isinstance(f, Exception)}
            s = sb[k]
            row = {"series": k, "model": mname, "n": len(y), "llf_sb": s["llf"], "sb_converged": s["conv"],
                   "llf_sf": {a: float(f.model_["loglik"]) for a, f in ok.items()},
                   "sf_code": {a: int(f.model_["code"]) for a, f in ok.items()},
                   "sf_error": {a: str(f) for a, f in fits.items() if isinstance(f, Exception)}}
            if not ok:
                row.update(sf_method=None, verdict="statsforecast refused")
                rows.append(row)
                continue
            best = max(ok, key=lambda a: ok[a].model_["loglik"])
            md = ok[best].model_
            coef = dict(md["coef"])
            coef["sigma2"] = float(md["sigma2"])
            q = np.array([float(coef[sf_arima_name(nm, m)]) for nm in s["names"]])
            fc = np.asarray(ok[best].predict(h)["mean"])
            scale = max(float(np.max(np.abs(fc))), 1e-300)
            llf_sf = float(md["loglik"])
            coefs = [j for j, nm in enumerate(s["names"]) if nm != "sigma2"]
            isg = s["names"].index("sigma2")
            k = len(coefs)
            row.update(sf_method=best, param_diff=float(np.max(np.abs(s["par"][coefs] - q[coefs]) /
                                                              np.maximum(1.0, np.abs(q[coefs])))) if k else 0.0,
                       sigma2_ratio=float(q[isg] / s["par"][isg]), nobs_sf=int(md["nobs"]), k=k,
                       sf_ma_noninvertible=noninvertible(coef, "ma") or noninvertible(coef, "sma"),
                       llf_rel=(s["llf"] - llf_sf) / abs(llf_sf), fc_rel=float(np.max(np.abs(s["fc"] - fc)) / scale),
                       params_sb=dict(zip(s["names"], map(float, s["par"]))),
                       params_sf=dict(zip(s["names"], map(float, q))))
            rows.append(row)
        times.append({"model": "arima " + mname, "fits": len(names), "samebits_s": sbt, "sf_s": sft["ML"],
                      "sf_cssml_s": sft["CSS-ML"]})
        print("arima %-14s %2d fits  samebits %.3fs  sf ML %.3fs  sf CSS-ML %.3fs" % (
            mname, len(names), sbt, sft["ML"], sft["CSS-ML"]), flush=True)
    return rows, times


def auto_quality(series, threads, res, on_row, arima=True):
    """Fills res = (rows, times) a series at a time, calling on_row after each."""
    from statsforecast.models import AutoARIMA, AutoETS
    rows, tt = res
    tt.update({"sb_arima": 0.0, "sb_arima_ml": 0.0, "sf_arima_fixed": 0.0, "sf_arima_default": 0.0, "sb_ets": 0.0,
               "sf_ets_azz": 0.0, "sf_ets_zzz": 0.0, "ml_series": 0, "sf_arima_fixed_ml_subset": 0.0,
               "sb_ets_zzz": 0.0, "arima": arima})
    for k, (y, m) in series.items():
        h = horizon(m)
        ytr, yte = y[:-h], y[-h:]
        r = {"series": k, "n_train": len(ytr), "h": h}
        # AutoETS
        for model, key in (("AZZ", "sf_ets_azz"), ("ZZZ", "sf_ets_zzz")):
            t0 = time.perf_counter()
            mod = AutoETS(season_length=m or 1, model=model).fit(ytr)
            tt[key] += time.perf_counter() - t0
            r["ets_" + model] = mod.model_["method"]
            r["smape_ets_" + model] = smape(yte, mod.predict(h)["mean"])
        for model, key, suf in (("AZZ", "sb_ets", "sb"), ("ZZZ", "sb_ets_zzz", "sb_zzz")):
            samebits.set_num_threads(1)
            t0 = time.perf_counter()
            a = samebits.AutoETS(season_length=m or 1, model=model).fit(ytr)
            tt[key] += time.perf_counter() - t0
            samebits.set_num_threads(0)
            r["ets_" + suf] = a.model_
            r["smape_ets_" + suf] = smape(yte, a.forecast(h))
        if not arima:
            rows.append(r)
            on_row()
            continue
        # AutoARIMA
        t0 = time.perf_counter()
        dflt = AutoARIMA(season_length=m or 1).fit(ytr)
        tt["sf_arima_default"] += time.perf_counter() - t0
        p, q, P, Q, mm, d, D = dflt.model_["arma"]
        r["arima_sf_default"] = [p, d, q, P, D, Q, mm, sorted(dflt.model_["coef"].keys())]
        r["smape_arima_sf_default"] = smape(yte, dflt.predict(h)["mean"])
        t0 = time.perf_counter()
        fx = AutoARIMA(season_length=m or 1, d=d, D=D, allowdrift=False).fit(ytr)
        t_fx = time.perf_counter() - t0
        tt["sf_arima_fixed"] += t_fx
        p2, q2, P2, Q2, _, _, _ = fx.model_["arma"]
        r["arima_sf_fixed"] = [p2, d, q2, P2, D, Q2, mm, "intercept" in fx.model_["coef"]]
        r["aicc_sf_fixed"] = float(fx.model_["aicc"])
        r["smape_arima_sf_fixed"] = smape(yte, fx.predict(h)["mean"])
        try:
            s = sb_auto_arima((ytr, d, D if m else 0, m, h))
            tt["sb_arima"] += s["time"]
            r["arima_sb"] = [s["order"], s["seasonal_order"], s["trend"], s["fits"]]
            r["aicc_sb"] = s["aicc"]
            r["smape_arima_sb"] = smape(yte, s["fc"])
        except Exception as e:
            r["arima_sb"] = "refused: %s" % e
            r["smape_arima_sb"] = float("nan")
        r["smape_arima_sb_ml"] = float("nan")
        if k in ML_SERIES:  # the search with every candidate by exact ML (approximation=False)
            s = sb_auto_arima((ytr, d, D if m else 0, m, h, False))
            tt["sb_arima_ml"] += s["time"]
            tt["sf_arima_fixed_ml_subset"] += t_fx
            tt["ml_series"] += 1
            r["arima_sb_ml"] = [s["order"], s["seasonal_order"], s["trend"], s["fits"]]
            r["smape_arima_sb_ml"] = smape(yte, s["fc"])
        rows.append(r)
        on_row()
        print("auto %-16s ets sb %s %.2f | sf AZZ %s %.2f | ZZZ %s %.2f || arima sb %.2f sf fixed %.2f sf default %.2f"
              % (k, r["ets_sb"], r["smape_ets_sb"], r["ets_AZZ"], r["smape_ets_AZZ"], r["ets_ZZZ"],
                 r["smape_ets_ZZZ"], r["smape_arima_sb"], r["smape_arima_sf_fixed"], r["smape_arima_sf_default"]),
              flush=True)


# ---------------------------------------------------------------- batched speed
def batched_speed(zones, threads):
    from statsforecast.models import ARIMA, AutoARIMA, AutoETS
    df = long_frame(zones)
    ys = list(zones.values())
    out = []

    def rec(name, sb_s, make_models):
        r = {"model": name, "series": len(ys), "samebits_s": sb_s}
        for nj in (1, 2):
            r["sf_n_jobs%d_s" % nj] = sf_batched_time(make_models(), df, nj)
        out.append(r)
        print("batch %-22s %d series  samebits %.3fs  sf n_jobs=1 %.3fs  n_jobs=2 %.3fs" % (
            name, len(ys), sb_s, r["sf_n_jobs1_s"], r["sf_n_jobs2_s"]), flush=True)

    for code, trend, damped, seasonal in (("AAN", "add", False, None), ("AAdN", "add", True, None),
                                          ("AAA", "add", False, "add"), ("AAdA", "add", True, "add")):
        _, dt = sb_ets_batch(ys, trend, damped, seasonal, 7, threads)
        rec("ets " + code, dt, lambda: [AutoETS(season_length=7, model=code[0] + code[1] + code[-1],
                                                damped=damped)])
    for name, order, so in (("ar1 (const)", (1, 0, 0), (0, 0, 0)), ("arima111", (1, 1, 1), (0, 0, 0)),
                            ("airline m=7", (0, 1, 1), (0, 1, 1))):
        so4 = (0, 0, 0, 0) if so == (0, 0, 0) else so + (7,)
        trend = "c" if order[1] + so[1] == 0 else "n"
        _, dt = sb_arima_batch(ys, order, so4, trend, threads)
        for method in ("ML", "CSS-ML"):
            rec("arima %s %s" % (name, method), dt,
                lambda: [ARIMA(order=order, season_length=7, seasonal_order=so, include_mean=(trend == "c"),
                               method=method)])
    return out


def batched_auto(zones, auto_zones, threads, out):
    """The automatic searches on the first auto_zones zones (rows appended to out)."""
    from statsforecast.models import AutoARIMA, AutoETS
    sub = dict(list(zones.items())[:auto_zones])
    dfs = long_frame(sub)
    ysub = list(sub.values())
    # samebits.auto_ets_forecast (one batch a candidate, --threads) against AutoETS(AZZ)
    t0 = time.perf_counter()
    samebits.auto_ets_forecast(dfs, 14, season_length=7, model="AZZ", n_jobs=threads)
    t = time.perf_counter() - t0
    r = {"model": "auto ets (AZZ)", "series": len(ysub), "samebits_s": t}
    for nj in (1, 2):
        r["sf_n_jobs%d_s" % nj] = sf_batched_time([AutoETS(season_length=7, model="AZZ")], dfs, nj)
    out.append(r)
    print("batch auto ets %d series samebits %.3fs sf %.3fs / %.3fs" % (len(ysub), t, r["sf_n_jobs1_s"],
                                                                       r["sf_n_jobs2_s"]), flush=True)
    # AutoARIMA with d=1, D=0 fixed and no drift against samebits.auto_arima (d=1, D=0): serial and 2 processes
    args = [(y, 1, 0, 7, 14) for y in ysub]
    t0 = time.perf_counter()
    for a in args:
        sb_auto_arima(a)
    sb_serial = time.perf_counter() - t0
    t0 = time.perf_counter()
    with mp.get_context("spawn").Pool(2) as pool:
        pool.map(sb_auto_arima, args)
    sb_pool = time.perf_counter() - t0
    r = {"model": "auto arima (d=1, D=0, no drift; sb approximation by R's rule)", "series": len(ysub),
         "samebits_s": sb_serial,
         "samebits_pool2_s": sb_pool}
    for nj in (1, 2):
        r["sf_n_jobs%d_s" % nj] = sf_batched_time([AutoARIMA(season_length=7, d=1, D=0, allowdrift=False)], dfs, nj)
    out.append(r)
    print("batch auto arima %d series samebits %.3fs (pool2 %.3fs) sf %.3fs / %.3fs" % (
        len(ysub), sb_serial, sb_pool, r["sf_n_jobs1_s"], r["sf_n_jobs2_s"]), flush=True)
    return out


# ---------------------------------------------------------------- report
def ets_verdict(r):
    miss = fit_misses(r)
    if not miss:
        return "met"
    who = " (samebits lower SSE)" if r["sse_rel"] < -1e-9 else (" (sf lower SSE)" if r["sse_rel"] > 1e-9 else "")
    bound = " [sf at bound: %s]" % ", ".join(r["sf_bound"]) if r["sf_bound"] else ""
    return ", ".join(miss) + who + bound


def arima_verdict(r):
    if r.get("sf_method") is None:
        return r.get("verdict", "")
    miss = fit_misses(r)
    if not miss:
        return "met"
    ninv = " [sf's MA not invertible]" if r["sf_ma_noninvertible"] else ""
    return ", ".join(miss) + (" (samebits higher llf)" if r["llf_rel"] > 0 else " (sf higher llf)") + ninv


def loadavg():
    try:
        return open("/proc/loadavg").read().split()[:3]
    except OSError:
        return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--zones", type=int, default=24)
    ap.add_argument("--auto-zones", type=int, default=2)
    ap.add_argument("--auto-series", default="", help="comma list of series for the searches' sMAPE (default all)")
    ap.add_argument("--skip", default="", help="comma list of parts to skip: ets,arima,auto,batch, "
                    "auto-arima (the searches' ARIMA half: the AutoETS searches alone)")
    ap.add_argument("--ml-series", default="", help="comma list of series whose search also runs with "
                    "approximation=False (every candidate by exact ML; long)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    ML_SERIES.update(filter(None, a.ml_series.split(",")))
    skip = set(filter(None, a.skip.split(",")))
    load0 = loadavg()
    from ts_bench_common import git_commit
    a.commit = git_commit()  # the sources this process loaded: a commit made while it runs is not its record's
    series = dict(taxi_series())
    series.update(statsmodels_series())
    res = {}
    t_start = time.time()
    # warm-up: one untimed fit of each statsforecast model kind (numba's JIT compile)
    y0, _ = series["sm/nile"]
    sf_ets(y0, "AAN", True, None)
    sf_fit_arima(y0, (1, 0, 1), (0, 0, 0), None, "ML")
    sf_fit_arima(y0, (1, 0, 1), (0, 0, 0), None, "CSS-ML")
    # each part's record is written as soon as it ends (the searches are long: a run cut short keeps the rest)
    if "ets" not in skip:
        res["ets"] = ets_quality(series, a.threads)
        record(a, res, load0, t_start)
    if "arima" not in skip:
        res["arima"] = arima_quality(series, a.threads)
        record(a, res, load0, t_start)
    zones = zone_series(a.zones)
    if "batch" not in skip:
        res["batch"] = batched_speed(zones, a.threads)
        record(a, res, load0, t_start)
    if "auto" not in skip:
        # statsmodels' shorter series first, then the taxi's
        keys = sorted(series, key=lambda k: (not k.startswith("sm/"), list(series).index(k)))
        auto = {k: series[k] for k in keys if not a.auto_series or k in a.auto_series.split(",")}
        res["auto"] = ([], {})
        auto_quality(auto, a.threads, res["auto"], lambda: record(a, res, load0, t_start), "auto-arima" not in skip)
    if "batch" not in skip and "auto" not in skip and a.auto_zones > 0:
        batched_auto(zones, a.auto_zones, a.threads, res["batch"])
        record(a, res, load0, t_start)


def record(a, res, load0, t_start):
    import numba
    import statsforecast
    load1 = loadavg()
    head = header(a.threads, "statsforecast: ETS via AutoETS(model=..., damped=...), ARIMA(method ML and CSS-ML, "
                             "include_drift=False), AutoARIMA (defaults; and d, D fixed, allowdrift=False), "
                             "AutoETS(ZZZ, AZZ); samebits defaults; zones %d, auto zones %d" % (a.zones, a.auto_zones))
    head.update(commit=a.commit[0], dirty=a.commit[1])
    head.update(statsforecast=statsforecast.__version__, numba=numba.__version__, pandas=pd.__version__,
                load_start=load0, load_end=load1, wall_s=time.time() - t_start)
    base = "ts-statsforecast-%s-%s" % (head["date"], head["commit"])
    import json
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, base + ".json"), "w") as f:
        json.dump({"header": head, "results": res}, f, indent=1, default=lambda o: o.tolist()
                  if hasattr(o, "tolist") else str(o))
    write_md(a.out, base, head, res)


def write_md(out, base, head, res):
    L = ["# Exponential smoothing and ARIMA beside statsforecast (%s)" % head["date"], "",
         run_line(head) + " statsforecast %s, numba %s, pandas %s; load average at start %s, at end %s." % (
             head["statsforecast"], head["numba"], head["pandas"], " ".join(head["load_start"]),
             " ".join(head["load_end"])),
         "Parameters: %s. Generated by bench/ts_statsforecast_bench.py (its docstring states the model mapping)."
         % head["parameters"], ""]
    if "ets" in res:
        rows, times = res["ets"]
        met = sum(ets_verdict(r) == "met" for r in rows)
        lo = sum(r["sse_rel"] < -1e-9 for r in rows)
        hi = sum(r["sse_rel"] > 1e-9 for r in rows)
        bnd = sum(bool(r["sf_bound"]) and ets_verdict(r) != "met" for r in rows)
        L += ["## ETS (fixed models) beside statsforecast's AutoETS(model=..., damped=...)", "",
              "%d fits; within every target (smoothing parameters 1e-3, llf 1e-4 relative, forecasts 1e-4 of their "
              "scale): **%d**. samebits' SSE lower than sf's (beyond 1e-9 relative): %d; higher: %d. Misses where "
              "one of sf's bounds binds (phi <= 0.98, beta <= alpha, gamma <= 1 - alpha, alpha >= 1e-4): %d." % (
                  len(rows), met, lo, hi, bnd), "",
              "| series | model | sf | n | SSE rel. (sb - sf) / sf | llf rel. | max param diff | max fc diff / scale "
              "| verdict |", "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        for r in rows:
            L.append("| %s | %s | %s | %d | %.2e | %.2e | %.2e | %.2e | %s |" % (
                r["series"], r["model"], r["sf_model"], r["n"], r["sse_rel"], r["llf_rel"], r["param_diff"],
                r["fc_rel"], ets_verdict(r)))
        L += ["", "| model | fits | samebits s (one batch a period) | sf s (one fit after another) | ratio sb/sf |",
              "| --- | ---: | ---: | ---: | ---: |"]
        for t in times + [{"model": "all", "fits": sum(t["fits"] for t in times),
                           "samebits_s": sum(t["samebits_s"] for t in times), "sf_s": sum(t["sf_s"] for t in times)}]:
            L.append("| %s | %d | %.3f | %.3f | %.3f |" % (t["model"], t["fits"], t["samebits_s"], t["sf_s"],
                                                           t["samebits_s"] / t["sf_s"]))
        L.append("")
    if "arima" in res:
        rows, times = res["arima"]
        ok = [r for r in rows if r.get("sf_method")]
        met = sum(arima_verdict(r) == "met" for r in ok)
        hi = sum(r["llf_rel"] > 1e-9 for r in ok)
        lo = sum(r["llf_rel"] < -1e-9 for r in ok)
        nml = sum(r["sf_method"] == "ML" for r in ok)
        L += ["## ARIMA (fixed orders) beside statsforecast's ARIMA", "",
              "%d fits (%d compared; the rest refused by statsforecast). Within every target (parameters 1e-3, "
              "relative above 1; llf 1e-4 relative; forecasts 1e-4 of their scale): **%d**. samebits' llf higher "
              "(beyond 1e-9 relative): %d; lower: %d. sf's better fit was method ML in %d, CSS-ML in %d." % (
                  len(rows), len(ok), met, hi, lo, nml, len(ok) - nml), "",
              "Parameters compared: the coefficients (const, ar, ma, seasonal ar and ma); sigma2 is reported apart "
              "as sf / sb: statsforecast's sigma2 is not the concentrated ML estimate (on AR(1) of the Nile it is "
              "SSQ / (nobs - k), 100/98 of ours, with the same llf), so it is a convention, not a fit, difference.",
              "", "| series | model | n | sf method | llf rel. (sb - sf) / sf | max coef diff | sigma2 sf/sb | "
              "nobs/(nobs-k) | max fc diff / scale | verdict |",
              "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        for r in rows:
            if not r.get("sf_method"):
                L.append("| %s | %s | %d | - | - | - | - | - | - | %s %s |" % (r["series"], r["model"], r["n"],
                                                                      arima_verdict(r), r["sf_error"]))
                continue
            L.append("| %s | %s | %d | %s | %.2e | %.2e | %.5f | %.5f | %.2e | %s |" % (
                r["series"], r["model"], r["n"], r["sf_method"], r["llf_rel"], r["param_diff"], r["sigma2_ratio"],
                r["nobs_sf"] / max(r["nobs_sf"] - r["k"], 1), r["fc_rel"], arima_verdict(r)))
        L += ["", "| model | fits | samebits s (one batch a period) | sf ML s | sf CSS-ML s | ratio sb/sf ML | "
              "ratio sb/sf CSS-ML |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        tot = {"model": "all", "fits": sum(t["fits"] for t in times), "samebits_s": sum(t["samebits_s"] for t in times),
               "sf_s": sum(t["sf_s"] for t in times), "sf_cssml_s": sum(t["sf_cssml_s"] for t in times)}
        for t in times + [tot]:
            L.append("| %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f |" % (
                t["model"], t["fits"], t["samebits_s"], t["sf_s"], t["sf_cssml_s"], t["samebits_s"] / t["sf_s"],
                t["samebits_s"] / t["sf_cssml_s"]))
        L.append("")
    if "auto" in res:
        rows, tt = res["auto"]

        def mean(key):
            v = [r[key] for r in rows if r[key] == r[key]]
            return float(np.mean(v)) if v else float("nan")
        L += ["## AutoETS: sMAPE on the held-out tail (h = 2m, or 10)", "",
              "samebits.AutoETS(model='AZZ') and (model='ZZZ') beside statsforecast's AutoETS with the same "
              "model strings (1 thread each side, one series after another).", "",
              "| series | h | sb AZZ | sMAPE | sf AZZ | sMAPE | sb ZZZ | sMAPE | sf ZZZ | sMAPE |",
              "| --- | ---: | --- | ---: | --- | ---: | --- | ---: | --- | ---: |"]
        for r in rows:
            L.append("| %s | %d | %s | %.2f | %s | %.2f | %s | %.2f | %s | %.2f |" % (
                r["series"], r["h"], r["ets_sb"], r["smape_ets_sb"], r["ets_AZZ"], r["smape_ets_AZZ"],
                r["ets_sb_zzz"], r["smape_ets_sb_zzz"], r["ets_ZZZ"], r["smape_ets_ZZZ"]))
        L.append("| **mean** | | | **%.2f** | | **%.2f** | | **%.2f** | | **%.2f** |" % (
            mean("smape_ets_sb"), mean("smape_ets_AZZ"), mean("smape_ets_sb_zzz"), mean("smape_ets_ZZZ")))
        L += ["", "AZZ: samebits mean %.2f against statsforecast %.2f (%+.1f%%); ZZZ: %.2f against %.2f (%+.1f%%). "
              "Search times (s): samebits AZZ %.3f, ZZZ %.3f; statsforecast AZZ %.3f, ZZZ %.3f." % (
                  mean("smape_ets_sb"), mean("smape_ets_AZZ"),
                  100.0 * (mean("smape_ets_sb") / mean("smape_ets_AZZ") - 1.0),
                  mean("smape_ets_sb_zzz"), mean("smape_ets_ZZZ"),
                  100.0 * (mean("smape_ets_sb_zzz") / mean("smape_ets_ZZZ") - 1.0),
                  tt["sb_ets"], tt["sb_ets_zzz"], tt["sf_ets_azz"], tt["sf_ets_zzz"]), ""]
    if "auto" in res and res["auto"][1].get("arima", True):
        rows, tt = res["auto"]

        def mean(key):
            v = [r[key] for r in rows if r[key] == r[key]]
            return float(np.mean(v)) if v else float("nan")
        L += ["## Automatic searches: sMAPE on the held-out tail (h = 2m, or 10)", "",
              "ETS sb: samebits.AutoETS(model='AZZ'); ARIMA sb: samebits.auto_arima with sf's d and D, no drift, "
              "approximation by R's rule (candidates by CSS when n > 150 or m > 12, the pick refitted by exact ML); "
              "ARIMA sb ML: approximation=False (every candidate by exact ML), on the --ml-series only.", "",
              "| series | h | ETS sb (AutoETS AZZ) | sMAPE | sf AZZ | sMAPE | sf ZZZ | sMAPE | ARIMA sb | sMAPE | "
              "ARIMA sb ML | sMAPE | sf (same d, D, no drift) | sMAPE | sf default | sMAPE |",
              "| --- | ---: | --- | ---: | --- | ---: | --- | ---: | --- | ---: | --- | ---: | --- | ---: | --- | ---: |"]
        for r in rows:
            sb = r["arima_sb"]
            sbs = sb if isinstance(sb, str) else "(%s)(%s) %s, %d fits" % (
                ",".join(map(str, sb[0])), ",".join(map(str, sb[1])), sb[2], sb[3])
            fx, df_ = r["arima_sf_fixed"], r["arima_sf_default"]
            ml = r.get("arima_sb_ml")
            mls = "(%s)(%s) %s, %d fits" % (",".join(map(str, ml[0])), ",".join(map(str, ml[1])), ml[2], ml[3]) \
                if ml else "-"
            L.append("| %s | %d | %s | %.2f | %s | %.2f | %s | %.2f | %s | %.2f | %s | %.2f | %s | %.2f | %s | %.2f |" % (
                r["series"], r["h"], r["ets_sb"], r["smape_ets_sb"], r["ets_AZZ"], r["smape_ets_AZZ"], r["ets_ZZZ"],
                r["smape_ets_ZZZ"], sbs, r["smape_arima_sb"], mls, r["smape_arima_sb_ml"],
                "(%d,%d,%d)(%d,%d,%d)%d%s" % tuple(fx[:7] + [" c" if fx[7] else ""]), r["smape_arima_sf_fixed"],
                "(%d,%d,%d)(%d,%d,%d)%d %s" % tuple(df_[:7] + ["+".join(x for x in df_[7] if x in
                                                                       ("intercept", "drift"))]),
                r["smape_arima_sf_default"]))
        L.append("| **mean** | | | **%.2f** | | **%.2f** | | **%.2f** | | **%.2f** | | | | **%.2f** | | **%.2f** |" % (
            mean("smape_ets_sb"), mean("smape_ets_AZZ"), mean("smape_ets_ZZZ"), mean("smape_arima_sb"),
            mean("smape_arima_sf_fixed"), mean("smape_arima_sf_default")))
        sub = [r for r in rows if r["smape_arima_sb_ml"] == r["smape_arima_sb_ml"]]
        if sub:
            L.append("| **mean over the %d ML-search series** | | | | | | | | | **%.2f** | | **%.2f** | | **%.2f** | "
                     "| **%.2f** |" % (len(sub), float(np.mean([r["smape_arima_sb"] for r in sub])),
                                      float(np.mean([r["smape_arima_sb_ml"] for r in sub])),
                                      float(np.mean([r["smape_arima_sf_fixed"] for r in sub])),
                                      float(np.mean([r["smape_arima_sf_default"] for r in sub]))))
        L += ["", "Search times over the %d series (s; every search one series after another, 1 thread each "
              "side): samebits.AutoETS %.3f, sf AutoETS AZZ %.3f (ratio %.3f), ZZZ %.3f; samebits.auto_arima "
              "%.3f, sf AutoARIMA same d, D %.3f (ratio %.3f), default %.3f. The ML search (approximation=False) on "
              "%d series: samebits %.3f against sf same d, D %.3f on those (ratio %.3f)." % (
                  len(rows), tt["sb_ets"], tt["sf_ets_azz"], tt["sb_ets"] / tt["sf_ets_azz"], tt["sf_ets_zzz"],
                  tt["sb_arima"], tt["sf_arima_fixed"], tt["sb_arima"] / tt["sf_arima_fixed"],
                  tt["sf_arima_default"], tt["ml_series"], tt["sb_arima_ml"], tt["sf_arima_fixed_ml_subset"],
                  tt["sb_arima_ml"] / tt["sf_arima_fixed_ml_subset"] if tt["ml_series"] else float("nan")), ""]
    if "batch" in res:
        L += ["## Batched speed: the busiest pickup zones' daily trip counts (1,096 days each)", "",
              "| model | series | samebits s | sf n_jobs=1 s | sf n_jobs=2 s | ratio sb / sf n_jobs=2 | "
              "ratio sb / sf n_jobs=1 |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in res["batch"]:
            sb = r.get("samebits_pool2_s", r["samebits_s"])
            note = " (sb over 2 processes; serial %.3f)" % r["samebits_s"] if "samebits_pool2_s" in r else ""
            L.append("| %s%s | %d | %.3f | %.3f | %.3f | %.3f | %.3f |" % (
                r["model"], note, r["series"], sb, r["sf_n_jobs1_s"], r["sf_n_jobs2_s"], sb / r["sf_n_jobs2_s"],
                (r["samebits_s"]) / r["sf_n_jobs1_s"]))
        L.append("")
    with open(os.path.join(out, base + ".md"), "w") as f:
        f.write("\n".join(L) + "\n")
    print("wrote", os.path.join(out, base + ".md"), flush=True)


if __name__ == "__main__":
    main()
