"""Exponential smoothing beside statsmodels' ExponentialSmoothing on real series.

Series:
  - NYC taxi (the 36 monthly 10,000-trip samples of /work/shared/data/nyc-taxi,
    2018-01..2020-12): daily trip counts in all, by payment type (1 card, 2 cash)
    and for the five busiest pickup zones, and the daily total fare; 1,096 days
    with the 2020 break in them; weekly season (m = 7). Days outside 2018-2020
    (a sample's stray timestamps) are dropped; a day with no trip counts 0.
  - statsmodels' datasets: monthly CO2 (Mauna Loa, first 480 months, m = 12),
    quarterly US real GDP and consumption (macrodata, m = 4), monthly El Nino
    sea temperatures (m = 12), annual Nile volume and sunspots (no season).

Every applicable model is fitted by both: simple, Holt, damped Holt,
Holt-Winters additive (with and without a damped trend) and multiplicative
(where every value is positive). statsmodels runs its defaults (estimated
initial states, its brute start and L-BFGS-B on the SSE). Reported per fit: the
largest difference of the smoothing parameters, the SSE's relative difference
(samebits - statsmodels, negative: samebits found a lower SSE), the largest
forecast difference relative to the forecast's scale (h = 2m, or 10 without a
season), and the verdict against the issue's targets (parameters within 1e-3,
forecasts within 1e-4), split by whether the two found the same optimum (SSE
within 1e-6 relative). Times: statsmodels one fit after another in one
process; samebits one batch fit of all series of a model at the thread count
given (2 by default, this workplace's cores).

Run: python3 bench/ets_bench.py [--threads 2] [--out bench/results]
Results: bench/results/ets-DATE-COMMIT.{md,json}.
"""
import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import samebits  # noqa: E402
from samebits.timeseries import _Batch, _spec_pairs  # noqa: E402
from ts_bench_common import header, parse_args, run_line, taxi_daily, time_rows, write_json, write_md  # noqa: E402

TAXI = "/work/shared/data/nyc-taxi"


def taxi_series():
    return {k: (v, 7) for k, v in taxi_daily(TAXI, 5).items()}


def statsmodels_series():
    import statsmodels.api as sm
    co2 = sm.datasets.co2.load_pandas().data["co2"].resample("MS").mean().ffill().to_numpy()[:480]
    mac = sm.datasets.macrodata.load_pandas().data
    eln = sm.datasets.elnino.load_pandas().data.drop(columns="YEAR").to_numpy().ravel()
    return {"sm/co2": (co2, 12), "sm/realgdp": (mac["realgdp"].to_numpy(), 4),
            "sm/realcons": (mac["realcons"].to_numpy(), 4), "sm/elnino": (eln, 12),
            "sm/nile": (sm.datasets.nile.load_pandas().data["volume"].to_numpy(dtype=np.float64), None),
            "sm/sunspots": (sm.datasets.sunspots.load_pandas().data["SUNACTIVITY"].to_numpy(), None)}


MODELS = [("ses", None, False, None), ("holt", "add", False, None), ("damped", "add", True, None),
          ("hw-add", "add", False, "add"), ("hw-add-damped", "add", True, "add"), ("hw-mul", "add", False, "mul"),
          ("hw-mul-damped", "add", True, "mul")]
SMOOTH = ["smoothing_level", "smoothing_trend", "smoothing_seasonal", "damping_trend"]


def run(threads):
    from statsmodels.tsa.holtwinters import ExponentialSmoothing as SM
    series = dict(taxi_series())
    series.update(statsmodels_series())
    rows, times = [], []
    for mname, trend, damped, seasonal in MODELS:
        names = [k for k, (y, m) in series.items()
                 if (m is not None or seasonal is None) and (seasonal != "mul" or np.all(y > 0))]
        if not names:
            continue
        # samebits: one batch per model (one period a batch: the taxi's 7 and each dataset's own)
        sb_time = 0.0
        sb = {}
        for m in sorted({series[k][1] for k in names}, key=lambda v: v or 0):
            group = [k for k in names if series[k][1] == m]
            pairs = _spec_pairs(trend, damped, seasonal, m if seasonal else None, [])
            samebits.set_num_threads(threads)
            t0 = time.perf_counter()
            b = _Batch(pairs, [series[k][0] for k in group])
            sb_time += time.perf_counter() - t0
            samebits.set_num_threads(0)
            for i, k in enumerate(group):
                h = 2 * m if seasonal else 10
                sb[k] = dict(par=b.array(i, "params"), sse=b.array(i, "sse")[0], fc=np.array(b.forecast(i, h)),
                             aic=b.array(i, "aic")[0], digest=b.digest(i))
        sm_time = 0.0
        for k in names:
            y, m = series[k]
            h = 2 * m if seasonal else 10
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                r = SM(y, trend=trend, damped_trend=damped, seasonal=seasonal,
                       seasonal_periods=m if seasonal else None).fit()
                sm_time += time.perf_counter() - t0
            s = sb[k]
            pd_ = [abs(a - r.params[n]) for a, n in zip(s["par"], SMOOTH) if not np.isnan(a)]
            fc_sm = np.asarray(r.forecast(h))
            scale = max(np.max(np.abs(fc_sm)), 1e-300)
            rows.append({"series": k, "model": mname, "n": len(y), "m": m if seasonal else None,
                         "param_diff": max(pd_), "sse_sb": s["sse"], "sse_sm": float(r.sse),
                         "sse_rel": (s["sse"] - r.sse) / r.sse if r.sse > 0 else 0.0,
                         "fc_rel": float(np.max(np.abs(s["fc"] - fc_sm)) / scale),
                         "aic_sb": s["aic"], "aic_sm": float(r.aic),
                         "params_sb": dict(zip(SMOOTH, s["par"])),
                         "params_sm": {n: float(r.params[n]) for n in SMOOTH}, "digest": s["digest"]})
        times.append({"model": mname, "fits": len(names), "samebits_s": sb_time, "statsmodels_s": sm_time})
        print("%-14s %2d fits  samebits %.3fs  statsmodels %.3fs" % (mname, len(names), sb_time, sm_time), flush=True)
    return rows, times


def verdict(r):
    same = abs(r["sse_rel"]) <= 1e-6
    ok = r["param_diff"] <= 1e-3 and r["fc_rel"] <= 1e-4
    if same:
        return "met" if ok else ("same optimum, forecasts %.1e" % r["fc_rel"] if r["param_diff"] <= 1e-3
                                 else "same SSE, params %.1e" % r["param_diff"])
    return "samebits lower SSE" if r["sse_rel"] < 0 else "statsmodels lower SSE"


def main():
    a = parse_args()
    rows, times = run(a.threads)
    head = header(a.threads, "statsmodels defaults (initialization_method=estimated, use_brute=True, L-BFGS-B); "
                             "samebits defaults (docs/timeseries.md)")
    base = "ets-%s-%s" % (head["date"], head["commit"])
    write_json(a.out, base, head, rows, times)
    n = len(rows)
    met = sum(verdict(r) == "met" for r in rows)
    lower = sum(r["sse_rel"] < -1e-6 for r in rows)
    higher = sum(r["sse_rel"] > 1e-6 for r in rows)
    lines = ["# Exponential smoothing beside statsmodels (%s)" % head["date"], "", run_line(head),
             "Parameters: %s. Generated by bench/ets_bench.py." % head["parameters"], "",
             "%d fits. Same optimum (SSE within 1e-6 relative) and within the issue's targets (smoothing parameters "
             "1e-3, forecasts 1e-4 of their scale): **%d**. samebits found a lower SSE than statsmodels: **%d**; "
             "statsmodels a lower one: **%d**." % (n, met, lower, higher), "",
             "| series | model | n | SSE rel. diff (sb - sm) / sm | max param diff | max forecast diff / scale | "
             "verdict |", "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        lines.append("| %s | %s | %d | %.2e | %.2e | %.2e | %s |" % (r["series"], r["model"], r["n"], r["sse_rel"],
                                                                 r["param_diff"], r["fc_rel"], verdict(r)))
    lines += ["", "## Time (fit only; samebits one batch per model and period, statsmodels one fit after another)", "",
              "| model | fits | samebits s | statsmodels s | ratio sb/sm |", "| --- | ---: | ---: | ---: | ---: |"]
    lines += time_rows(times, "%.2f")
    write_md(a.out, base, lines, 8)


if __name__ == "__main__":
    main()
