"""Time series on a GPU: exponential smoothing and ARIMA beside statsforecast.

A batch of N series of length L (10,000 x 1,000 by default) derived from the
NYC taxi's real daily series, fitted by samebits on the host's threads (the
reference) and on each device asked (device=cuda, device=opencl: one
work-item a series; kernels/ets.h's fit, kernels/arima.h's), and, where it
imports, by statsforecast's ETS and ARIMA classes with the same fixed models
on n_jobs processes (the host's cores). Reported per family: wall times and
ratios, and whether every series' digest on each device equals the host's
(it must: the bench exits 1 otherwise).

The series. The bases are bench/data/taxi-daily-bases.npz (carried in the
checkout: 1,096 days 2018-2020 with the 2020 break; trips in all, by card
and cash, the total fare, the 25 busiest pickup zones; built from
../shared/data/nyc-taxi by --export-bases). Series i is the window of base i
mod B starting uniformly in [0, len - L], times a scale uniform in [0.5,
1.5], plus 1, drawn from numpy.random.default_rng(--seed) in series order:
real-derived, overlapping windows, not N independent series.

The models (fixed, the same on both sides): exponential smoothing
Holt-Winters additive with a damped trend, m = 7 (samebits trend=add,
damped_trend=true, seasonal=add; statsforecast AutoETS(model="AAA", damped=True,
season_length=7), one fixed model, no search); ARIMA(1,1,1) (samebits order=(1,1,1); statsforecast
ARIMA(order=(1,1,1), method=--sf-arima-method)). The objectives differ where
the libraries differ (samebits' ETS minimizes the SSE as statsmodels, its
ARIMA maximizes the exact likelihood; statsforecast's ETS its likelihood, its
ARIMA CSS-ML by default): the times are of the same models, not of the same
optimizer. statsforecast's numba compilation is run first on a small batch
and reported apart.

What is timed: samebits' fit of all N (the device's program build reported
apart) plus the h-step forecast of every series (the host, from the fit);
statsforecast's StatsForecast.forecast(df, h) (fit and forecast). statsforecast's
ARIMA with CSS-ML raises on some series of this set (series 5048 of the default
10,000: its CSS step leaves no finite residual and a minimum over an empty
array fails inside statsforecast, which stopped the whole run at 62a03ab), so
the ARIMA run passes StatsForecast(fallback_model=ARIMA(order=(1,1,1),
method="ML")): such a series is fitted by ML instead and the run goes on
(the results say so).

Run (GPU host, from the checkout; statsforecast from the carried .whl folder,
see docs/timeseries.md):
  python3 bench/ts_gpu_bench.py --devices cuda,opencl --threads 16 --sf-jobs 16
Results: bench/results/ts-gpu-DATE-COMMIT.{md,json} (commit, machine, GPU,
parameters); the table on stdout.
"""
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import samebits  # noqa: E402
from samebits import arima as sb_arima  # noqa: E402
from samebits import timeseries as sb_ts  # noqa: E402
from samebits.errors import SameBitsError  # noqa: E402
from _common import git_commit, machine_line  # noqa: E402
from ts_bench_common import derive, gpu_name, taxi_daily  # noqa: E402

BASES = os.path.join(HERE, "data", "taxi-daily-bases.npz")
TAXI = os.path.join(HERE, "..", "..", "shared", "data", "nyc-taxi")
M = 7


def taxi_bases(root, zones=25):
    """The taxi's daily series (bench/ets_gpu_bench.py's construction, more zones)."""
    return taxi_daily(root, zones)


FAMILIES = {
    "ets": {"pairs": lambda dev: sb_ts._spec_pairs("add", True, "add", M, [], dev), "batch": lambda: sb_ts._Batch,
            "label": "Holt-Winters additive, damped trend, m = 7"},
    "arima": {"pairs": lambda dev: sb_arima._pairs((1, 1, 1), (0, 0, 0, 0), "n", None, dev),
              "batch": lambda: sb_arima._Batch, "label": "ARIMA(1,1,1)"},
}


def forecast_all(fam, b, n, h):
    """Every series' h forecasts: ETS series by series (one ctypes call a
    series), ARIMA in one call (sb_arima_forecast_all, the series over the
    host's threads)."""
    if fam == "ets":
        return [b.forecast(i, h) for i in range(n)]
    return list(b.forecast_all(h, 0.05)[0])


def run_samebits(fam, ys, dev, threads, h):
    """(fit s, forecast s, open s, digests, model digest) of one family on one device."""
    F = FAMILIES[fam]
    Batch = F["batch"]()
    t_open = 0.0
    if dev != "cpu":
        t0 = time.perf_counter()
        Batch(F["pairs"](dev), [ys[0][:60]])  # opens the device, builds its program
        t_open = time.perf_counter() - t0
    samebits.set_num_threads(threads if dev == "cpu" else 0)
    t0 = time.perf_counter()
    b = Batch(F["pairs"](dev), ys)
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    fc = forecast_all(fam, b, len(ys), h)
    t_fc = time.perf_counter() - t0
    samebits.set_num_threads(0)
    dig = [b.digest(i) for i in range(len(ys))]
    return {"fit_s": t_fit, "forecast_s": t_fc, "open_s": t_open, "digests": dig,
            "fc0": [float(v) for v in fc[0]]}


def sf_models(fam, method):
    from statsforecast.models import ARIMA, AutoETS  # AutoETS(model="AAA", damped=True): one fixed model
    if fam == "ets":
        return [AutoETS(season_length=M, model="AAA", damped=True)]
    return [ARIMA(order=(1, 1, 1), season_length=1, method=method)]


def sf_fallback(fam):
    """ARIMA's fallback for a series statsforecast's CSS-ML fails on (the docstring)."""
    from statsforecast.models import ARIMA
    return ARIMA(order=(1, 1, 1), season_length=1, method="ML") if fam == "arima" else None


def run_statsforecast(fam, ys, jobs, h, method):
    import pandas as pd
    from statsforecast import StatsForecast

    def frame(series):
        ids = np.repeat(np.arange(len(series)), [len(y) for y in series])
        ds = np.concatenate([np.arange(len(y)) for y in series])
        return pd.DataFrame({"unique_id": ids, "ds": ds, "y": np.concatenate(series)})

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        StatsForecast(models=sf_models(fam, method), freq=1, n_jobs=1).forecast(df=frame(ys[:4]), h=h)
        t_jit = time.perf_counter() - t0
        df = frame(ys)
        t0 = time.perf_counter()
        StatsForecast(models=sf_models(fam, method), freq=1, n_jobs=jobs,
                      fallback_model=sf_fallback(fam)).forecast(df=df, h=h)
        t = time.perf_counter() - t0
    return {"forecast_s": t, "jit_s": t_jit}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--length", type=int, default=1000)
    ap.add_argument("--families", default="ets,arima")
    ap.add_argument("--devices", default="cuda,opencl", help="comma-separated devices beside the host's threads")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="samebits' host threads")
    ap.add_argument("--sf-jobs", type=int, default=os.cpu_count(), help="statsforecast's n_jobs")
    ap.add_argument("--sf-arima-method", default="CSS-ML", help="statsforecast ARIMA's method (its default CSS-ML)")
    ap.add_argument("--no-sf", action="store_true", help="skip statsforecast")
    ap.add_argument("--host-sample", type=int, default=0,
                    help="series samebits fits on the host's threads (0: all); the devices' digests are compared on "
                         "them and the host's time is scaled to N, labelled so")
    ap.add_argument("--sf-sample", type=int, default=0,
                    help="series statsforecast fits (0: all); its time scaled to N, labelled so")
    ap.add_argument("--chunks", default="",
                    help="comma-separated caps on the series a device launch takes (SAMEBITS_<BACKEND>_TS_CHUNK): "
                         "each device's fit again under each cap, its time and digests reported beside the default")
    ap.add_argument("--same", action="store_true",
                    help="every series a copy of the first: a probe of how much of a device's time is its "
                         "work-items' divergence (not a peer comparison)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--h", type=int, default=14)
    ap.add_argument("--bases", default=BASES)
    ap.add_argument("--export-bases", help="build the bases from --taxi into this .npz and stop")
    ap.add_argument("--taxi", default=TAXI)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    if a.export_bases:
        bases = taxi_bases(a.taxi)
        np.savez_compressed(a.export_bases, **bases)
        print("wrote %d base series to %s (%d bytes)" % (len(bases), a.export_bases, os.path.getsize(a.export_bases)))
        return
    z = np.load(a.bases)
    bases = {k: z[k] for k in z.files}
    ys = derive(bases, a.n, a.length, a.seed)
    if a.same:
        ys = [ys[0]] * a.n
    devices = [d for d in a.devices.split(",") if d]
    fams = [f for f in a.families.split(",") if f]
    sf_version = None
    if not a.no_sf:
        try:
            import statsforecast
            sf_version = statsforecast.__version__
        except Exception as e:  # noqa: BLE001 - report why and go on without the peer
            print("statsforecast not importable (%s: %s): its column is left out" % (type(e).__name__, e))
    print("%d series x %d values from %d taxi bases; devices %s; host threads %d; statsforecast %s (n_jobs %d)" % (
        a.n, a.length, len(bases), ",".join(devices) or "none", a.threads, sf_version or "absent", a.sf_jobs),
        flush=True)

    results = {}
    for fam in fams:
        hk = a.n if a.host_sample <= 0 else min(a.host_sample, a.n)
        r = {"cpu": run_samebits(fam, ys[:hk], "cpu", a.threads, a.h)}
        r["cpu"]["series"] = hk
        print("%s: samebits cpu (%d threads) fit %.2f s, forecast %.2f s for %d series" % (
            fam, a.threads, r["cpu"]["fit_s"], r["cpu"]["forecast_s"], hk), flush=True)
        ref = r["cpu"]["digests"]  # a series' bits are its own: the first hk compared
        for dev in devices:
            try:
                d = run_samebits(fam, ys, dev, a.threads, a.h)
            except SameBitsError as e:
                print("%s: samebits %s REFUSED: %s" % (fam, dev, e), flush=True)
                r[dev] = {"refused": str(e)}
                continue
            d["series"] = a.n
            d["differ"] = sum(x != y for x, y in zip(d["digests"], ref))
            d["first_differ"] = [i for i, (x, y) in enumerate(zip(d["digests"], ref)) if x != y][:5]
            r[dev] = d
            print("%s: samebits %s fit %.2f s (program build %.2f s apart), forecast %.2f s; %d of %d series' "
                  "digests differ from the host's" % (fam, dev, d["fit_s"], d["open_s"], d["forecast_s"],
                                                     d["differ"], hk), flush=True)
            # the launch's size, a schedule input: the same digests under every cap, only the time may move
            key = "SAMEBITS_%s_TS_CHUNK" % ("CUDA" if dev == "cuda" else "OPENCL")
            d["chunks"] = {}
            for cap in [int(c) for c in a.chunks.split(",") if c.strip()]:
                os.environ[key] = str(cap)
                try:
                    c = run_samebits(fam, ys, dev, a.threads, a.h)
                finally:
                    os.environ.pop(key, None)
                cd = sum(x != y for x, y in zip(c["digests"], ref))
                d["chunks"][str(cap)] = {"fit_s": c["fit_s"], "differ": cd}
                print("%s: samebits %s with at most %d series a launch: fit %.2f s; %d of %d series' digests differ "
                      "from the host's" % (fam, dev, cap, c["fit_s"], cd, hk), flush=True)
        if sf_version:
            sk = a.n if a.sf_sample <= 0 else min(a.sf_sample, a.n)
            r["statsforecast"] = run_statsforecast(fam, ys[:sk], a.sf_jobs, a.h, a.sf_arima_method)
            r["statsforecast"]["series"] = sk
            print("%s: statsforecast (n_jobs %d) fit+forecast %.2f s (numba compile %.2f s apart)" % (
                fam, a.sf_jobs, r["statsforecast"]["forecast_s"], r["statsforecast"]["jit_s"]), flush=True)
        for v in r.values():
            v.pop("digests", None)
        results[fam] = r

    commit, dirty = git_commit(short=True)
    head = {"commit": commit or "unknown", "dirty": dirty, "date": datetime.date.today().isoformat(),
            "machine": machine_line(), "gpu": gpu_name(), "samebits": samebits.__version__,
            "profile": samebits.profile_version(), "statsforecast": sf_version, "numpy": np.__version__,
            "n": a.n, "length": a.length, "seed": a.seed, "same": a.same, "bases": sorted(bases), "threads": a.threads,
            "sf_jobs": a.sf_jobs, "h": a.h, "host_sample": a.host_sample, "sf_sample": a.sf_sample, "sf_arima_method": a.sf_arima_method,
            "models": {f: FAMILIES[f]["label"] for f in fams}}
    lines = ["# Time series on a GPU beside statsforecast (%s)" % head["date"], "",
             "commit %s%s; %s; GPU %s; samebits %s (%s); statsforecast %s; numpy %s." % (
                 commit, " (dirty)" if dirty else "", head["machine"], head["gpu"], head["samebits"], head["profile"],
                 sf_version or "absent", head["numpy"]),
             "%d series x %d values derived from %d real taxi daily bases (seed %d; bench/ts_gpu_bench.py states the "
             "rule); forecasts h = %d; statsforecast ARIMA method %s. Generated by bench/ts_gpu_bench.py." % (
                 a.n, a.length, len(bases), a.seed, a.h, a.sf_arima_method)
             + (" **Every series a copy of the first (--same): a divergence probe, not a peer comparison.**"
                if a.same else ""), "",
             "| family | fitter | where | fit+forecast s | statsforecast / this | digests equal to the host's |",
             "| --- | --- | --- | ---: | ---: | --- |"]
    bad = False
    for fam in fams:
        r = results[fam]
        sf = r.get("statsforecast")
        t_sf = sf["forecast_s"] * a.n / sf["series"] if sf else None
        if sf:
            lines.append("| %s | statsforecast | n_jobs %d (numba compile %.1f s apart)%s | %.2f | 1.00 | |" % (
                FAMILIES[fam]["label"], a.sf_jobs, sf["jit_s"],
                "" if sf["series"] == a.n else ", scaled from %d series" % sf["series"], t_sf))
        for dev in ["cpu"] + devices:
            d = r.get(dev)
            if d is None:
                continue
            if "refused" in d:
                lines.append("| %s | samebits | %s | refused | | %s |" % (FAMILIES[fam]["label"], dev, d["refused"]))
                bad = True
                continue
            t = (d["fit_s"] + d["forecast_s"]) * a.n / d["series"]
            where = "cpu, %d threads" % a.threads if dev == "cpu" else "%s (program build %.2f s apart)" % (
                dev, d["open_s"])
            if d["series"] != a.n:
                where += ", scaled from %d series" % d["series"]
            hk = r["cpu"]["series"]
            same = "reference" if dev == "cpu" else (
                "all %d compared" % hk if d["differ"] == 0 else "%d of %d DIFFER" % (d["differ"], hk))
            bad = bad or (dev != "cpu" and d["differ"] != 0)
            lines.append("| %s | samebits | %s | %.2f | %s | %s |" % (
                FAMILIES[fam]["label"], where, t, "%.2f" % (t_sf / t) if t_sf else "", same))
            for cap, c in sorted(d.get("chunks", {}).items(), key=lambda kv: int(kv[0])):
                bad = bad or c["differ"] != 0
                lines.append("| %s | samebits | %s, at most %s series a launch | %.2f (fit) | %s | %s |" % (
                    FAMILIES[fam]["label"], dev, cap, c["fit_s"], "%.2f" % (t_sf / c["fit_s"]) if t_sf else "",
                    "all %d compared" % hk if c["differ"] == 0 else "%d of %d DIFFER" % (c["differ"], hk)))
    res = {"header": head, "results": results}
    base = "ts-gpu-%s-%s" % (head["date"], commit)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, base + ".json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(a.out, base + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print("wrote", os.path.join(a.out, base + ".md"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
