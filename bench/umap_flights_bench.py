"""UMAP beside umap-learn (seeded) on the flights data (issue 29's second data
set): trustworthiness (scikit-learn's, k = 15) and 15-NN accuracy in the
embedding (5-fold, index order, umap_gpu_bench's knn_acc), fit times and
their ratios, samebits' optimize="sequential" and optimize="batched" each
beside the same seed's umap-learn fit, one run, the same cores.

    SAMEBITS_LIB=build/libsamebits.so PYTHONPATH=python nice python3 bench/umap_flights_bench.py \\
        [--rows 20000] [--seeds 42,43,44] [--optimize sequential,batched] [--threads N]
    # the lead's GPU run (the batched fits' epochs on cuda, trustworthiness on the GPU):
    SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python python3 bench/umap_flights_bench.py \\
        --rows 70000 --device cuda --trust-gpu --threads 16 --out-dir $OUT

Data: /work/shared/data/flights-3m.parquet (--data): 3,000,000 US domestic
flights of 2001-01-01 .. 2001-07-01 (BTS, via vega-datasets), sorted by
date, columns date (to the minute), delay (minutes), distance (miles),
origin, destination. Read in place, never copied.

Sample (flights_sample): the first --rows entries of a permutation of the
3,000,000 row numbers drawn by numpy's Generator (PCG64) seeded 2001
(--sample-seed), kept in the drawn order. Every run of --rows R is the first
R rows of any larger run's (20,000 is a prefix of 70,000; the
standardisation is over each run's own rows, so the feature values are not
a prefix), and the 5 folds
in index order are random fifths of the half-year, not five blocks of the
calendar (the file is sorted by date: a stride sample would make each test
fold five weeks no training row saw). umap-learn's warm-up fit (its and
pynndescent's numba compile) takes the next 4,500 entries: rows of the same
data that the timed fits never see. The record holds the SHA-256 of the row
numbers and of the feature bytes, so two machines' runs can be checked to
have embedded the same input (the features go through numpy's sin, cos and
log: a library whose last bit differed would show there).

Features (flights_features), 7 columns, each standardised (mean 0, standard
deviation 1 over the sample, in float64) and stored as float32:
  log(distance); the minute of the day (0..1439) as the pair
  sin/cos(2 pi m / 1440); the day of the year (0 for Jan 1) as
  sin/cos(2 pi d / 365); the day of the week (0 Monday) as sin/cos(2 pi w / 7).
The cyclic pairs make 23:59 next to 00:00 and Sunday next to Monday.
Neither the delay nor the airports are features: origin and destination
are 300-odd categories that a Euclidean metric has no honest number for
(an airport's code is not a position), and the delay is the label's source.

Label (for the kNN accuracy only; never a feature, UMAP is unsupervised
here): late = delay >= 15 minutes, the BTS on-time definition (a flight
is on time when it arrives less than 15 minutes after schedule). About 21%
of the flights are late, so the record also gives the majority class's rate
(the accuracy of always answering "on time") and the 15-NN accuracy on the
7 features themselves: the embedding's accuracy means something only beside
those two.

Duplicates: two flights give the same feature row when they have the same
date and minute and the same distance (the same route, or two routes of one
length). The record counts the sample's duplicated rows (rows equal to an
earlier one): 3 at 20,000 rows, 32 at 70,000. They are kept as they are:
the data has them, both implementations get the same rows, each finds an
exact copy as a neighbor at distance 0 (samebits keeps the row's own entry
first in its lists, docs/umap.md), and in scikit-learn's trustworthiness a
tie between two copies moves a rank by one, far from 0.01 at these counts.

Fits, per seed (--seeds): samebits.UMAP for each of --optimize (default
"sequential,batched"; the batched fits on --device, default cpu; the
sequential rule runs only on the host), then umap-learn seeded, all with
n_neighbors 15, n_components 2, min_dist 0.1, euclidean, random_state the
seed; samebits at --threads, umap-learn with n_jobs --threads and numba's
threads set likewise (seeded, it runs its epochs on one thread). Each
samebits fit's time ratio is over the same seed's umap-learn fit, run right
after it. Trustworthiness: scikit-learn's (the n x n float64 distances:
3.2 GB at 20,000 rows, 39 GB at 70,000) unless --trust-gpu, which computes
the same number in row blocks on a CUDA GPU with PyTorch (trust_gpu of
bench/umap_quality_gpu.py); --no-trust leaves it out.

Writes bench/results/umap-flights-DATE-COMMIT[-ROWS][-DEVICE].{json,md}
(--out-dir elsewhere).
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, HERE)

FLIGHTS = "/work/shared/data/flights-3m.parquet"
BASE = dict(n_neighbors=15, n_components=2, min_dist=0.1, metric="euclidean")
FEATURES = ("log_distance", "minute_sin", "minute_cos", "yday_sin", "yday_cos", "wday_sin", "wday_cos")
LATE_MIN = 15  # BTS: late when 15 minutes or more after schedule


def flights_sample(n_total, rows, seed=2001, skip=0):
    """Row numbers rows entries long: entries skip .. skip + rows of the
    permutation of range(n_total) that numpy's PCG64 seeded seed draws."""
    if skip + rows > n_total:
        raise SystemExit("the flights data has %d rows, %d asked" % (n_total, skip + rows))
    return np.random.Generator(np.random.PCG64(seed)).permutation(n_total)[skip:skip + rows]


def flights_raw(date, distance):
    """The 7 feature columns (float64, n x 7, FEATURES' order) before
    standardising: log distance, then the sin/cos pairs of the minute of the
    day, the day of the year and the day of the week; date as datetime64."""
    date = np.asarray(date).astype("datetime64[m]")
    day = date.astype("datetime64[D]")
    minute = (date - day).astype(np.int64)
    yday = (day - day.astype("datetime64[Y]")).astype(np.int64)
    wday = (day.astype(np.int64) + 3) % 7  # 1970-01-01 was a Thursday
    cols = [np.log(np.asarray(distance, dtype=np.float64))]
    for v, period in ((minute, 1440.0), (yday, 365.0), (wday, 7.0)):
        ang = 2.0 * np.pi * v / period
        cols += [np.sin(ang), np.cos(ang)]
    return np.stack(cols, axis=1)


def flights_features(date, delay, distance):
    """(x, y): flights_raw's columns standardised (mean 0, standard deviation
    1 over these rows; a constant column becomes 0) as float32, and late
    (delay >= 15 minutes) as int64."""
    x = flights_raw(date, distance)
    const = (x == x[:1]).all(axis=0)
    x = (x - x.mean(axis=0)) / np.where(const, 1.0, x.std(axis=0))
    x[:, const] = 0.0
    y = (np.asarray(delay) >= LATE_MIN).astype(np.int64)
    return np.ascontiguousarray(x, dtype=np.float32), y


def load_flights(path, rows, seed=2001, skip=0):
    """(x, y, info) for the sample's rows (flights_sample, flights_features);
    info: the row numbers' and the features' SHA-256, duplicate rows, late rate."""
    import pyarrow.parquet as pq
    t = pq.read_table(path, columns=["date", "delay", "distance"])
    idx = flights_sample(t.num_rows, rows, seed, skip)
    cols = {c: t.column(c).to_numpy()[idx] for c in ("date", "delay", "distance")}
    x, y = flights_features(cols["date"], cols["delay"], cols["distance"])
    info = {"rows_sha256": hashlib.sha256(idx.astype("<i8").tobytes()).hexdigest(),
            "features_sha256": hashlib.sha256(x.tobytes()).hexdigest(),
            "duplicate_rows": int(len(x) - len(np.unique(x, axis=0))),
            "late_rate": float(y.mean())}
    return x, y, info


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=FLIGHTS)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--sample-seed", type=int, default=2001)
    ap.add_argument("--seeds", default="42,43,44")
    ap.add_argument("--optimize", default="sequential,batched")
    ap.add_argument("--device", default="cpu", help="the batched fits' device (cpu, cuda, opencl)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--trust-gpu", action="store_true", help="trustworthiness on a CUDA GPU (PyTorch), in row blocks")
    ap.add_argument("--no-trust", action="store_true")
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--out-dir", default=os.path.join(REPO, "bench", "results"))
    return ap.parse_args()


def main():
    A = parse_args()
    import samebits
    from _common import git_commit, loadavg, machine_line
    from umap_gpu_bench import knn_acc, trust
    if A.trust_gpu:
        try:
            from umap_quality_gpu import trust_gpu as trust  # noqa: F811  (the same number, on the GPU)
        except ImportError as e:
            raise SystemExit("--trust-gpu needs bench/umap_quality_gpu.py's trust_gpu and PyTorch: %s" % e)
    commit, dirty = git_commit()  # before the fits: commits made while it runs are not it
    seeds = [int(s) for s in A.seeds.split(",")]
    rules = [r for r in A.optimize.split(",") if r]
    x, y, info = load_flights(A.data, A.rows, A.sample_seed)
    h = {"bench": "umap-flights", "commit": commit, "dirty": dirty, "date": datetime.date.today().isoformat(),
         "machine": machine_line(), "loadavg_start": loadavg(),
         "command": "python3 bench/umap_flights_bench.py " + " ".join(sys.argv[1:]),
         "versions": {"samebits": samebits.__version__, "numpy": np.__version__, "python": platform.python_version()},
         "data": {"path": A.data, "rows": A.rows, "sample_seed": A.sample_seed, "features": FEATURES,
                  "label": "late = delay >= %d min" % LATE_MIN, **info},
         "params": BASE, "seeds": seeds, "optimize": rules, "batched_device": A.device, "threads": A.threads,
         "trustworthiness": None if A.no_trust else ("trust_gpu (PyTorch, CUDA)" if A.trust_gpu
                                                     else "sklearn.manifold.trustworthiness")}
    h["baselines"] = {"majority_class_accuracy": float(max(y.mean(), 1 - y.mean())),
                      "knn15_accuracy_on_features": knn_acc(x, y)}
    samebits.set_num_threads(A.threads)
    if A.device != "cpu" and "batched" in rules:  # open the device and build its program, untimed
        samebits.UMAP(n_epochs=2, random_state=0, optimize="batched", device=A.device).fit(x[-300:].copy())
    ul = None
    if not A.no_peer:
        import numba
        import umap
        numba.set_num_threads(min(A.threads, numba.config.NUMBA_NUM_THREADS))
        h["versions"]["umap-learn"] = umap.__version__
        warm = load_flights(A.data, 4500, A.sample_seed, skip=A.rows)[0]
        t0 = time.perf_counter()
        umap.UMAP(random_state=seeds[0], n_jobs=A.threads, **BASE).fit_transform(warm)
        h["umap_learn_warmup_4500_rows_s"] = time.perf_counter() - t0
        ul = umap

    def scores(e):
        e = np.asarray(e, dtype=np.float32)
        s = {"knn15_accuracy": knn_acc(e, y)}
        if not A.no_trust:
            s["trustworthiness_k15"] = trust(x, e)
        return s

    runs = []
    for seed in seeds:
        r = {"seed": seed, "samebits": {}}
        for rule in rules:
            kw = dict(BASE, random_state=seed, optimize=rule)
            if rule == "batched":
                kw["device"] = A.device
            t0 = time.perf_counter()
            u = samebits.UMAP(**kw).fit(x)
            r["samebits"][rule] = dict({"fit_s": time.perf_counter() - t0, "model_digest": u.model_digest_,
                                        "device": kw.get("device", "cpu")}, **scores(u.embedding_))
        if ul is not None:
            t0 = time.perf_counter()
            e_ul = ul.UMAP(random_state=seed, n_jobs=A.threads, **BASE).fit_transform(x)
            r["umap_learn"] = dict({"fit_s": time.perf_counter() - t0}, **scores(e_ul))
            for rule, s in r["samebits"].items():
                s["fit_time_ratio_over_umap_learn"] = s["fit_s"] / r["umap_learn"]["fit_s"]
                s["knn_accuracy_gap"] = s["knn15_accuracy"] - r["umap_learn"]["knn15_accuracy"]
                if not A.no_trust:
                    s["trustworthiness_gap"] = s["trustworthiness_k15"] - r["umap_learn"]["trustworthiness_k15"]
        r["loadavg"] = loadavg()
        runs.append(r)
        print(json.dumps(r), flush=True)
    h["loadavg_end"] = loadavg()
    summary = {}
    if ul is not None:
        t_ul = sum(r["umap_learn"]["fit_s"] for r in runs)
        for rule in rules:
            ss = [r["samebits"][rule] for r in runs]
            summary[rule] = {"fit_time_ratio_total": sum(s["fit_s"] for s in ss) / t_ul,
                             "knn_accuracy_within_1pt": all(s["knn_accuracy_gap"] >= -0.01 for s in ss)}
            if not A.no_trust:
                summary[rule]["trustworthiness_within_0.01"] = all(abs(s["trustworthiness_gap"]) <= 0.01 for s in ss)
    write(A, h, runs, summary)
    return 0


def write(A, h, runs, summary):
    """The record's .json and .md under A.out_dir."""
    os.makedirs(A.out_dir, exist_ok=True)
    stem = os.path.join(A.out_dir, "umap-flights-%s-%s%s%s" % (
        h["date"], (h["commit"] or "nocommit")[:7], "" if A.rows == 20000 else "-%d" % A.rows,
        "" if A.device == "cpu" else "-" + A.device))
    with open(stem + ".json", "w") as f:
        json.dump({"header": h, "runs": runs, "summary": summary}, f, indent=1)
    d, v = h["data"], h["versions"]
    out = ["# UMAP beside umap-learn on the flights data (issue 29)", "",
           "Commit `%s`%s, %s; %s. %d rows of flights-3m (a PCG64(%d) permutation's first rows; features %s, "
           "standardised; %d duplicated rows), label %s (rate %.4f; majority class %.4f, 15-NN on the features "
           "%.4f). Parameters %s; samebits %s at %d threads (batched on %s); umap-learn %s seeded, n_jobs %d, "
           "timed after a warm-up fit on 4,500 other rows (%s s). Trustworthiness: %s."
           % ((h["commit"] or "?")[:7], " (dirty)" if h["dirty"] else "", h["date"], h["machine"], A.rows,
              d["sample_seed"], ", ".join(d["features"]), d["duplicate_rows"], d["label"], d["late_rate"],
              h["baselines"]["majority_class_accuracy"], h["baselines"]["knn15_accuracy_on_features"], h["params"],
              v["samebits"], A.threads, A.device, v.get("umap-learn", "(not run)"), A.threads,
              "%.1f" % h["umap_learn_warmup_4500_rows_s"] if "umap_learn_warmup_4500_rows_s" in h else "-",
              h["trustworthiness"] or "not computed"), "",
           "| seed | run | fit (s) | ratio over umap-learn | trustworthiness k=15 | 15-NN accuracy | load (1 min) |",
           "|---|---|---|---|---|---|---|"]
    for r in runs:
        fits = [("samebits " + k, s) for k, s in r["samebits"].items()]
        fits += [("umap-learn", r["umap_learn"])] if "umap_learn" in r else []
        for name, s in fits:
            out.append("| %d | %s | %.2f | %s | %s | %.4f | %.1f |" % (
                r["seed"], name, s["fit_s"], "%.3f" % s["fit_time_ratio_over_umap_learn"]
                if "fit_time_ratio_over_umap_learn" in s else "-",
                "%.4f" % s["trustworthiness_k15"] if "trustworthiness_k15" in s else "-", s["knn15_accuracy"],
                r["loadavg"][0] if r["loadavg"] else float("nan")))
    out += ["", "Load average at the end: %s (the machine is shared: each ratio is of fits run one after the "
            "other under the same load)." % h["loadavg_end"], ""]
    for rule, s in summary.items():
        out.append("samebits %s: fit time ratio over all seeds %.3f; targets %s." % (
            rule, s["fit_time_ratio_total"], {k: v for k, v in s.items() if k != "fit_time_ratio_total"}))
    with open(stem + ".md", "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))
    print("wrote", stem + ".md")


if __name__ == "__main__":
    sys.exit(main())
