"""Exponential smoothing on a GPU beside statsmodels on the host's cores.

A batch of N series (10,000 by default) derived from real daily series, fitted
by samebits on each device asked (device=cuda, device=opencl: one work-item a
series, kernels/ets.h's fit) and on the host's threads, and by statsmodels'
ExponentialSmoothing on every core of the host (one process a core, one fit
after another in each). Reported: the wall time of each, the ratios, whether
every series' digest on each device equals the host's (it must: the bench
fails otherwise), and statsmodels' SSE and forecasts beside samebits' on the
series it fitted.

The series. The bases are real: the NYC taxi samples' daily series as
bench/ets_bench.py builds them (trips in all, by card and cash, the total
fare, the five busiest pickup zones; 1,096 days 2018-2020 with the 2020 break;
m = 7), where /work/shared/data/nyc-taxi is (or --taxi); else statsmodels'
daily-free datasets are no substitute, so the bases can be carried instead:
--export-bases FILE.npz writes them here, --bases FILE.npz reads them on a
host without the data (the GPU host). Series i is a window of base i mod B:
length L uniform in [--min-len, the base's length], start uniform among the
windows of that length, times a scale uniform in [0.5, 1.5], plus 1 (so every
value is positive: multiplicative seasons fit), all drawn from one
numpy.random.default_rng(--seed) in series order. The derivation is stated,
not hidden: the windows overlap, so the batch is real-derived, not 10,000
independent series.

statsmodels can take long at N = 10,000 (about a second a fit on one core for
Holt-Winters of 1,000 values): --peer-sample K fits K of the series (the first
K; default 1000, 0 for all) and reports its wall time and the time scaled to
N, labelled as scaled. samebits always fits all N.

Run (GPU host): python3 bench/ets_gpu_bench.py --bases build/ets-bases.npz --devices cuda,opencl
Results: bench/results/ets-gpu-DATE-COMMIT.{md,json} (commit, machine, GPU, parameters).
"""
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # statsmodels' workers: one core each
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import samebits  # noqa: E402
from samebits.timeseries import _Batch, _spec_pairs  # noqa: E402
from _common import git_commit, machine_line  # noqa: E402
from ts_bench_common import gpu_name, taxi_daily  # noqa: E402

TAXI = "/work/shared/data/nyc-taxi"
MODELS = {  # name -> (trend, damped_trend, seasonal)
    "ses": (None, False, None), "holt": ("add", False, None), "damped": ("add", True, None),
    "hw-add": ("add", False, "add"), "hw-damped": ("add", True, "add"), "hw-mul": ("add", False, "mul"),
    "hw-damped-mul": ("add", True, "mul"),
}


def taxi_bases(root):
    """The taxi's daily series, bench/ets_bench.py's construction."""
    return taxi_daily(root, 5, ": give --taxi or --bases FILE.npz")


def derive(bases, n, min_len, seed):
    """N series from the bases (the module's docstring states the rule)."""
    names = sorted(bases)
    rng = np.random.default_rng(seed)
    ys, src = [], []
    for i in range(n):
        b = bases[names[i % len(names)]]
        L = int(rng.integers(min(min_len, len(b)), len(b) + 1))
        s = int(rng.integers(0, len(b) - L + 1))
        scale = 0.5 + float(rng.random())
        ys.append(b[s:s + L] * scale + 1.0)
        src.append((names[i % len(names)], s, L))
    return ys, src


def _sm_fit(args):
    """One statsmodels fit (a worker): (seconds, sse, forecasts)."""
    y, trend, damped, seasonal, m, h = args
    from statsmodels.tsa.holtwinters import ExponentialSmoothing
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = ExponentialSmoothing(y, trend=trend, damped_trend=damped, seasonal=seasonal,
                                 seasonal_periods=m if seasonal else None).fit()
    return time.perf_counter() - t0, float(r.sse), [float(v) for v in r.forecast(h)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--model", choices=sorted(MODELS), default="hw-damped")
    ap.add_argument("--devices", default="cuda", help="comma-separated: cuda, opencl (each compared with the host)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="samebits' host threads")
    ap.add_argument("--peer-jobs", type=int, default=os.cpu_count(), help="statsmodels' processes")
    ap.add_argument("--peer-sample", type=int, default=1000, help="series statsmodels fits (0: all)")
    ap.add_argument("--host-sample", type=int, default=0,
                    help="series samebits fits on the host (0: all); the devices' digests are compared on them")
    ap.add_argument("--min-len", type=int, default=365)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--taxi", default=TAXI)
    ap.add_argument("--bases", help="read the base series from this .npz (see --export-bases)")
    ap.add_argument("--export-bases", help="write the base series to this .npz and stop")
    ap.add_argument("--h", type=int, default=14)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()

    if a.bases:
        z = np.load(a.bases)
        bases = {k: z[k] for k in z.files}
    else:
        bases = taxi_bases(a.taxi)
    if a.export_bases:
        np.savez(a.export_bases, **bases)
        print("wrote %d base series to %s" % (len(bases), a.export_bases))
        return
    trend, damped, seasonal = MODELS[a.model]
    m = 7
    ys, src = derive(bases, a.n, a.min_len, a.seed)
    values = sum(len(y) for y in ys)
    pairs = _spec_pairs(trend, damped, seasonal, m if seasonal else None, [])
    print("%d series (%d values, lengths %d..%d) from %d bases; model %s" % (
        a.n, values, min(map(len, ys)), max(map(len, ys)), len(bases), a.model), flush=True)

    # samebits on the host's threads: the reference every device must equal
    # (the first K series alone: a series' bits do not depend on its batch)
    hk = a.n if a.host_sample <= 0 else min(a.host_sample, a.n)
    samebits.set_num_threads(a.threads)
    t0 = time.perf_counter()
    host = _Batch(pairs, ys[:hk])
    t_host_k = time.perf_counter() - t0
    samebits.set_num_threads(0)
    t_host = t_host_k * a.n / hk
    ref = [host.digest(i) for i in range(hk)]
    print("samebits cpu (%d threads): %.3f s for %d series" % (a.threads, t_host_k, hk), flush=True)

    runs = []
    for dev in [d for d in a.devices.split(",") if d]:
        t0 = time.perf_counter()
        _Batch(pairs + [("device", dev)], [ys[0][:28]])  # opens the device, builds its program (reported apart)
        t_open = time.perf_counter() - t0
        t0 = time.perf_counter()
        b = _Batch(pairs + [("device", dev)], ys)
        t_fit = time.perf_counter() - t0
        differ = [i for i in range(hk) if b.digest(i) != ref[i]]
        runs.append({"device": dev, "open_s": t_open, "fit_s": t_fit, "differ": len(differ),
                     "first_differ": differ[:5]})
        print("samebits %s: %.3f s (open and build %.3f s); %d of %d series differ from the host" % (
            dev, t_fit, t_open, len(differ), hk), flush=True)

    # statsmodels on every core, on the first K series
    k = a.n if a.peer_sample <= 0 else min(a.peer_sample, a.n)
    import statsmodels
    jobs = [(ys[i], trend, damped, seasonal, m, a.h) for i in range(k)]
    t0 = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(a.peer_jobs) as pool:
        sm = pool.map(_sm_fit, jobs, chunksize=max(1, k // (8 * a.peer_jobs)))
    t_sm = time.perf_counter() - t0
    t_sm_n = t_sm * a.n / k
    print("statsmodels (%d processes): %.3f s for %d series%s" % (
        a.peer_jobs, t_sm, k, "" if k == a.n else "; scaled to %d: %.1f s" % (a.n, t_sm_n)), flush=True)
    sse_rel = []
    fc_rel = []
    for i in range(min(k, hk)):
        s_sb = float(host.array(i, "sse")[0])
        sse_rel.append((s_sb - sm[i][1]) / sm[i][1] if sm[i][1] > 0 else 0.0)
        f_sb = host.forecast(i, a.h)
        scale = max(1e-300, float(np.max(np.abs(ys[i]))))
        fc_rel.append(max(abs(x - y) for x, y in zip(f_sb, sm[i][2])) / scale)

    commit, dirty = git_commit(short=True)
    head = {"commit": commit or "unknown", "dirty": dirty, "date": datetime.date.today().isoformat(),
            "machine": machine_line(), "gpu": gpu_name(),
            "samebits": samebits.__version__, "profile": samebits.profile_version(),
            "statsmodels": statsmodels.__version__, "numpy": np.__version__,
            "n": a.n, "values": values, "model": a.model, "m": m, "min_len": a.min_len, "seed": a.seed,
            "bases": sorted(bases), "threads": a.threads, "peer_jobs": a.peer_jobs, "peer_sample": k, "host_sample": hk,
            "parameters": "statsmodels defaults (initialization_method=estimated, use_brute=True, L-BFGS-B); "
                          "samebits defaults (docs/timeseries.md)"}
    res = {"header": head, "samebits_cpu_s": t_host, "samebits_cpu_sample_s": t_host_k, "devices": runs, "statsmodels_s": t_sm,
           "statsmodels_scaled_s": t_sm_n, "sse_rel": sse_rel, "fc_rel": fc_rel}
    base = "ets-gpu-%s-%s" % (head["date"], commit)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, base + ".json"), "w") as f:
        json.dump(res, f, indent=1)
    scaled = "" if k == a.n else " (scaled from %d series)" % k
    lines = ["# Exponential smoothing on a GPU beside statsmodels (%s)" % head["date"], "",
             "commit %s%s; %s; GPU %s; samebits %s (%s), statsmodels %s, numpy %s." % (
                 commit, " (dirty)" if dirty else "", head["machine"], head["gpu"], head["samebits"], head["profile"],
                 head["statsmodels"], head["numpy"]),
             "%d series (%d values; lengths %d..%d) derived from %d real daily bases (bench/ets_gpu_bench.py states "
             "the rule; seed %d), model %s (m = %d). Parameters: %s. Generated by bench/ets_gpu_bench.py." % (
                 a.n, values, min(map(len, ys)), max(map(len, ys)), len(bases), a.seed, a.model, m,
                 head["parameters"]), "",
             "| fitter | where | wall s | statsmodels / this |", "| --- | --- | ---: | ---: |",
             "| statsmodels | %d processes%s | %.2f | 1.00 |" % (a.peer_jobs, scaled, t_sm_n),
             "| samebits | cpu, %d threads%s | %.2f | %.2f |" % (
                 a.threads, "" if hk == a.n else " (scaled from %d series)" % hk, t_host, t_sm_n / t_host)]
    for r in runs:
        lines.append("| samebits | %s (program build %.2f s apart) | %.2f | %.2f |" % (
            r["device"], r["open_s"], r["fit_s"], t_sm_n / r["fit_s"]))
    lines += ["", "Identity: %s." % "; ".join("%s: %d of %d series' digests differ from the host's" % (
        r["device"], r["differ"], hk) for r in runs) if runs else "Identity: no device run."]
    if sse_rel:
        lines += ["", "Quality on the %d series both fitted: SSE (samebits - statsmodels) / statsmodels "
                      "median %.2e, max %.2e, samebits lower on %d; forecasts' largest difference over the series' "
                      "scale median %.2e, max %.2e." % (
                          len(sse_rel), float(np.median(sse_rel)), float(np.max(sse_rel)), sum(v < -1e-6 for v in sse_rel),
                          float(np.median(fc_rel)), float(np.max(fc_rel)))]
    with open(os.path.join(a.out, base + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print("wrote", os.path.join(a.out, base + ".md"))
    if any(r["differ"] for r in runs):
        sys.exit(1)


if __name__ == "__main__":
    main()
