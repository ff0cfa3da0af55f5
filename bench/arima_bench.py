"""ARIMA beside statsmodels' ARIMA on real series.

Series (bench/ets_bench.py's loaders, shared): the NYC taxi samples as 1,096
daily series 2018-2020 (trip counts in all, by payment type and for the five
busiest zones, the daily total fare; weekly season m = 7) and statsmodels'
datasets (CO2 monthly m = 12, realgdp and realcons quarterly m = 4, El Nino
monthly m = 12, Nile and sunspots annual).

Models, the same orders for both: ARMA(1,0,0) and (2,0,1) with a const,
ARIMA(0,1,1) and (1,1,1); with a season, (0,1,1)(0,1,1,m) (the airline model),
(1,0,0)(1,0,0,m) with a const and (1,1,1)(0,1,1,m).

samebits differences first (docs/timeseries.md); statsmodels' ARIMA uses its
exact diffuse initialization on the undifferenced state space. The two
likelihoods agree exactly without differencing; with it they differ by a
small amount (reported: llf_rel). Our convention is statsmodels' SARIMAX with
simple_differencing=True: its loglike at our parameters is reported too
(llf_sx_at_sb, which must equal ours), and its own fit's llf (llf_sx).

Reported per fit: the largest parameter difference (relative above 1) from
statsmodels' ARIMA, the llf relative difference, the largest forecast
difference (h = 2m or 10) relative to the forecast's scale, the 95% interval
width's relative difference, and the verdict against the issue's targets
(params 1e-3, llf 1e-4 relative, forecasts 1e-4). Times: statsmodels' ARIMA
one fit after another in one process; samebits one batch fit of all series of
a model and period at the thread count given (2 by default: this workplace's
cores).

Missing values: the same series with holes punched (NaN at t = 9 mod 17 and
t = 40..43), ARMA(1,0,0) with a const, ARIMA(1,1,1) and the airline model
beside SARIMAX with simple_differencing=True (which, like samebits, skips the
update at a missing value): its loglike at samebits' parameters (the const
turned into its intercept, const (1 - sum ar)) against samebits' llf, and
samebits' llf against SARIMAX's own fit's.

The previous record (bench/results/arima-2026-12-05-01339e9.json, the zero
start) is read when present: each fit's llf now against its llf then.

Run: python3 bench/arima_bench.py [--threads 2] [--out bench/results]
Results: bench/results/arima-DATE-COMMIT.{md,json}.
"""
import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
import samebits  # noqa: E402
from samebits.arima import _Batch, _pairs  # noqa: E402
from ets_bench import statsmodels_series, taxi_series  # noqa: E402
from ts_bench_common import fit_misses, header, parse_args, run_line, time_rows, write_json, write_md  # noqa: E402

MODELS = [("ar1", (1, 0, 0), None), ("arma21", (2, 0, 1), None), ("ima11", (0, 1, 1), None),
          ("arima111", (1, 1, 1), None), ("airline", (0, 1, 1), (0, 1, 1)), ("sar1", (1, 0, 0), (1, 0, 0)),
          ("sarima111-011", (1, 1, 1), (0, 1, 1))]


def run(threads):
    from statsmodels.tsa.arima.model import ARIMA as SMA
    from statsmodels.tsa.statespace.sarimax import SARIMAX
    series = dict(taxi_series())
    series.update(statsmodels_series())
    rows, times = [], []
    for mname, order, sorder in MODELS:
        names = [k for k, (y, m) in series.items() if sorder is None or m is not None]
        sb_time, sb = 0.0, {}
        for m in sorted({series[k][1] for k in names}, key=lambda v: v or 0):
            group = [k for k in names if series[k][1] == m]
            so = (0, 0, 0, 0) if sorder is None else tuple(sorder) + (m,)
            trend = "c" if order[1] + so[1] == 0 else "n"
            samebits.set_num_threads(threads)
            t0 = time.perf_counter()
            b = _Batch(_pairs(order, so, trend, None), [series[k][0] for k in group])
            sb_time += time.perf_counter() - t0
            samebits.set_num_threads(0)
            for i, k in enumerate(group):
                h = 2 * m if sorder else 10
                mean, se, lo, hi = b.forecast(i, h, 0.05)
                sb[k] = dict(par=np.array(b.array(i, "params")), llf=b.array(i, "llf")[0], fc=np.array(mean),
                             width=np.array(hi) - np.array(lo), names=b.names(), so=so, trend=trend,
                             conv=b.integer(i, "converged"), nit=b.integer(i, "nit"), digest=b.digest(i))
        sm_time = 0.0
        for k in names:
            y, m = series[k]
            s = sb[k]
            h = 2 * m if sorder else 10
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                r = SMA(y, order=order, seasonal_order=s["so"], trend=s["trend"]).fit()
                sm_time += time.perf_counter() - t0
                sx = SARIMAX(y, order=order, seasonal_order=s["so"], trend=s["trend"], simple_differencing=True)
                llf_sx = float(sx.fit(disp=False).llf)
                llf_sx_at = float(sx.loglike(s["par"])) if s["trend"] == "n" else float("nan")
            q = np.asarray(r.params)
            fc = r.get_forecast(h)
            g = np.asarray(fc.predicted_mean)
            ci = np.asarray(fc.conf_int(0.05))
            scale = max(float(np.max(np.abs(g))), 1e-300)
            rows.append({"series": k, "model": mname, "n": len(y), "order": list(order), "seasonal_order": list(s["so"]),
                         "param_diff": float(np.max(np.abs(s["par"] - q) / np.maximum(1.0, np.abs(q)))),
                         "llf_sb": s["llf"], "llf_sm": float(r.llf),
                         "llf_rel": (s["llf"] - float(r.llf)) / abs(float(r.llf)),
                         "llf_sx": llf_sx, "llf_sx_at_sb": llf_sx_at,
                         "fc_rel": float(np.max(np.abs(s["fc"] - g)) / scale),
                         "width_rel": float(np.max(np.abs(s["width"] - (ci[:, 1] - ci[:, 0])) / (ci[:, 1] - ci[:, 0]))),
                         "params_sb": dict(zip(s["names"], map(float, s["par"]))),
                         "params_sm": dict(zip(r.param_names, map(float, q))), "converged": s["conv"],
                         "nit": s["nit"], "digest": s["digest"]})
        times.append({"model": mname, "fits": len(names), "samebits_s": sb_time, "statsmodels_s": sm_time})
        print("%-14s %2d fits  samebits %.3fs  statsmodels %.3fs" % (mname, len(names), sb_time, sm_time), flush=True)
    return rows, times


MISSING_MODELS = [("ar1", (1, 0, 0), None), ("arima111", (1, 1, 1), None), ("airline", (0, 1, 1), (0, 1, 1))]


def holes(y):
    y = np.array(y, dtype=np.float64)
    t = np.arange(len(y))
    y[(t % 17 == 9) | ((t >= 40) & (t < 44))] = np.nan
    return y


def run_missing(threads):
    """The missing-value comparison beside SARIMAX (simple_differencing=True)."""
    from statsmodels.tsa.statespace.sarimax import SARIMAX
    series = dict(taxi_series())
    series.update(statsmodels_series())
    rows = []
    for mname, order, sorder in MISSING_MODELS:
        names = [k for k, (y, m) in series.items() if sorder is None or m is not None]
        for m in sorted({series[k][1] for k in names}, key=lambda v: v or 0):
            group = [k for k in names if series[k][1] == m]
            so = (0, 0, 0, 0) if sorder is None else tuple(sorder) + (m,)
            trend = "c" if order[1] + so[1] == 0 else "n"
            ys = [holes(series[k][0]) for k in group]
            samebits.set_num_threads(threads)
            b = _Batch(_pairs(order, so, trend, None), ys)
            samebits.set_num_threads(0)
            for i, k in enumerate(group):
                par = np.array(b.array(i, "params"))
                llf = b.array(i, "llf")[0]
                q = par.copy()
                if trend == "c":
                    q[0] = par[0] * (1.0 - par[1:1 + order[0]].sum())
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    sx = SARIMAX(ys[i], order=order, seasonal_order=so, trend=trend, simple_differencing=True)
                    llf_sx = float(sx.fit(disp=False).llf)
                    at = float(sx.loglike(q))
                rows.append({"series": k, "model": mname, "n": len(ys[i]), "missing": int(np.isnan(ys[i]).sum()),
                             "llf_sb": llf, "llf_sx": llf_sx, "llf_sx_at_sb": at,
                             "at_rel": abs(at - llf) / abs(llf), "llf_rel": (llf - llf_sx) / abs(llf_sx)})
        print("missing %-10s done" % mname, flush=True)
    return rows


def previous(out):
    """The previous record's rows by (series, model), or {}."""
    path = os.path.join(out, "arima-2026-12-05-01339e9.json")
    if not os.path.exists(path):
        return {}
    import json
    with open(path) as f:
        return {(r["series"], r["model"]): r for r in json.load(f)["rows"]}


def verdict(r):
    miss = fit_misses(r)
    if not miss:
        return "met"
    return ", ".join(miss) + (" (samebits higher llf)" if r["llf_rel"] > 0 else " (statsmodels higher llf)")


def main():
    a = parse_args()
    rows, times = run(a.threads)
    mrows = run_missing(a.threads)
    prev = previous(a.out)
    head = header(a.threads, "statsmodels ARIMA defaults (method statespace, L-BFGS, exact diffuse initialization); "
                             "samebits defaults (differenced first, docs/timeseries.md)")
    base = "arima-%s-%s" % (head["date"], head["commit"])
    write_json(a.out, base, head, rows + [dict(r, section="missing") for r in mrows], times)
    n = len(rows)
    met = sum(verdict(r) == "met" for r in rows)
    higher = sum(r["llf_rel"] > 1e-9 for r in rows)
    lower = sum(r["llf_rel"] < -1e-9 for r in rows)
    sx_same = [abs(r["llf_sx_at_sb"] - r["llf_sb"]) / abs(r["llf_sb"]) for r in rows if r["llf_sx_at_sb"] == r["llf_sx_at_sb"]]
    sx_ge = sum(r["llf_sb"] >= r["llf_sx"] - 1e-8 * abs(r["llf_sx"]) for r in rows)
    lines = ["# ARIMA beside statsmodels (%s)" % head["date"], "",
             run_line(head),
             "Parameters: %s. Generated by bench/arima_bench.py." % head["parameters"], "",
             "%d fits. Within every target of the issue against statsmodels' ARIMA (parameters 1e-3, relative above 1; "
             "llf 1e-4 relative; forecasts 1e-4 of their scale): **%d**. samebits' llf higher than statsmodels' ARIMA's "
             "(beyond 1e-9 relative): %d; lower: %d." % (n, met, higher, lower),
             "Same convention (SARIMAX, simple_differencing=True): its loglike at samebits' parameters equals samebits' "
             "llf within %.1e relative (largest, %d fits without a const); samebits' llf at least SARIMAX's own fit's "
             "(less 1e-8 relative) in %d of %d fits." % (max(sx_same) if sx_same else float("nan"), len(sx_same), sx_ge, n),
             ""]
    if prev:
        d = [((r["llf_sb"] - prev[(r["series"], r["model"])]["llf_sb"]) / abs(prev[(r["series"], r["model"])]["llf_sb"]),
              r) for r in rows if (r["series"], r["model"]) in prev]
        was = sum(verdict(prev[(r["series"], r["model"])]) == "met" for _, r in d)
        up = [(x, r) for x, r in d if x > 1e-9]
        down = [(x, r) for x, r in d if x < -1e-9]
        lines += ["Against the previous record (arima-2026-12-05-01339e9, the zero start; its %d fits met every target "
                  "there, %d here): samebits' llf higher now in %d fits, lower in %d, the same within 1e-9 relative in "
                  "%d." % (was, met, len(up), len(down), len(d) - len(up) - len(down)),
                  "Largest gains: " + "; ".join("%s %s %+.2e" % (r["series"], r["model"], x)
                                                 for x, r in sorted(up, key=lambda v: -v[0])[:5]) + ".",
                  "Largest losses: " + ("; ".join("%s %s %+.2e" % (r["series"], r["model"], x)
                                                   for x, r in sorted(down, key=lambda v: v[0])[:5]) or "none") + ".", ""]
    lines += ["| series | model | n | llf rel. (sb - sm) / sm | max param diff | max forecast diff / scale | "
             "95% width diff | verdict |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        lines.append("| %s | %s | %d | %.2e | %.2e | %.2e | %.2e | %s |" % (
            r["series"], r["model"], r["n"], r["llf_rel"], r["param_diff"], r["fc_rel"], r["width_rel"], verdict(r)))
    lines += ["", "## Time (fit only; samebits one batch per model and period, statsmodels' ARIMA one fit after "
              "another)", "", "| model | fits | samebits s | statsmodels s | ratio sb/sm |",
              "| --- | ---: | ---: | ---: | ---: |"]
    lines += time_rows(times, "%.3f")
    at = max(r["at_rel"] for r in mrows)
    ge = sum(r["llf_sb"] >= r["llf_sx"] - 1e-8 * abs(r["llf_sx"]) for r in mrows)
    lines += ["", "## Missing values beside SARIMAX (simple_differencing=True)", "",
              "%d fits, NaN at t = 9 mod 17 and t = 40..43 of each series. SARIMAX's loglike at samebits' parameters "
              "equals samebits' llf within %.1e relative (largest); samebits' llf at least SARIMAX's own fit's (less "
              "1e-8 relative) in %d of %d." % (len(mrows), at, ge, len(mrows)), "",
              "| series | model | n | missing | llf sb | llf SARIMAX fit | rel. (sb - sx) / sx | SARIMAX at sb, rel. |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in mrows:
        lines.append("| %s | %s | %d | %d | %.6f | %.6f | %.2e | %.1e |" % (
            r["series"], r["model"], r["n"], r["missing"], r["llf_sb"], r["llf_sx"], r["llf_rel"], r["at_rel"]))
    write_md(a.out, base, lines, 9)


if __name__ == "__main__":
    main()
