#!/usr/bin/env python3
"""CPU gradient boosting at scale: samebits beside LightGBM on the same cores, time
per tree at 10M rows (issue 18's many-core targets), and samebits' model bytes at
several thread counts.

    PYTHONPATH=python python3 bench/host_bench.py --data DIR [--threads 16] [--few 10] [--many 40]
        [--repeat 2] [--digest-threads 1 2 7 16] [--digest-trees 4] [--workloads higgs-10m flights-10m]
        [--max-rows N] [--out OUT.json] [--md OUT.md] [--note TEXT]

Workloads (real rows only; bench/gpu_bench.py's loaders, the same as the GPU records):
  higgs-10m    LightGBM's HIGGS example (7,000 x 28, binary) tiled to 10,010,000 rows in a
               Philox-drawn order: the issue's 10M x 28 shape (for time, not for quality)
  flights-10m  the flights training rows (2.4M x 7) tiled 5 times, Philox-drawn order (12M rows)
Parameters (gpu_bench.py's): depth-wise growth, max_depth 8, 255 bins, learning rate 0.1,
min_samples_leaf 20; LightGBM num_leaves 255 with max_depth 8, min_data_in_leaf 20, row-wise
histograms (force_row_wise, what LightGBM picks for these shapes), deterministic=True.

Time per tree: (fit of --many trees - fit of --few trees) / (many - few), so reading and
binning are not in it; each library's fits interleaved, best of --repeat. Identity: the
samebits model digest of a --digest-trees fit at each of --digest-threads must be one
(exit status 1 otherwise). Set SAMEBITS_GBDT_TIMING=1 for samebits' phase times on stderr.
"""
import argparse
import datetime
import json
import os
import platform
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
from _common import cpu_model, git_commit  # noqa: E402


def load(name, data, max_rows):
    import gpu_bench
    if name == "higgs-10m":
        X, y = gpu_bench.load_higgs(data)[:2]
        obj = "binary"
    elif name == "flights-10m":
        X, y = gpu_bench.load_flights(data)[:2]
        order = np.random.Generator(np.random.Philox(key=20261130)).permutation(len(y) * 5)
        X = np.tile(X, (5, 1))[order]
        y = np.tile(y, 5)[order]
        obj = "regression"
    else:
        raise SystemExit("host_bench: unknown workload %r" % name)
    if max_rows:
        X, y = X[:max_rows], y[:max_rows]
    return np.ascontiguousarray(X, dtype=np.float32), np.ascontiguousarray(y, dtype=np.float32), obj


def sb_fit(X, y, obj, trees, threads):
    import samebits
    samebits.set_num_threads(threads)
    kw = dict(n_estimators=trees, learning_rate=0.1, growth="depthwise", max_depth=8, max_bin=255,
              min_samples_leaf=20)
    est = samebits.GradientBoostingClassifier(**kw) if obj == "binary" else samebits.GradientBoostingRegressor(**kw)
    t0 = time.perf_counter()
    est.fit(X, y)
    return time.perf_counter() - t0, est.digest()


def lgb_fit(X, y, obj, trees, threads):
    import lightgbm as lgb
    params = dict(objective=obj, learning_rate=0.1, num_leaves=255, max_depth=8, max_bin=255,
                  min_data_in_leaf=20, num_threads=threads, verbose=-1, deterministic=True, force_row_wise=True)
    t0 = time.perf_counter()
    lgb.train(params, lgb.Dataset(X, y, params={"max_bin": 255, "verbose": -1}), num_boost_round=trees)
    return time.perf_counter() - t0, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="folder with flights-3m.parquet and lightgbm-examples/")
    ap.add_argument("--workloads", nargs="+", default=["higgs-10m", "flights-10m"])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--few", type=int, default=10)
    ap.add_argument("--many", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--digest-threads", type=int, nargs="*", default=[1, 2, 7, 16])
    ap.add_argument("--digest-trees", type=int, default=4)
    ap.add_argument("--max-rows", type=int, default=0, help="dry runs: the first N rows")
    ap.add_argument("--peers", nargs="*", default=["lightgbm"])
    ap.add_argument("--out", default="")
    ap.add_argument("--md", default="")
    ap.add_argument("--note", default="")
    a = ap.parse_args()
    if a.many <= a.few:
        ap.error("--many must exceed --few: time per tree is a difference")
    commit = git_commit(short=7)[0] or os.environ.get("COMMIT", "unknown")
    import samebits
    res = {"commit": os.environ.get("COMMIT", commit), "date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
           "cpu": cpu_model(), "cores": os.cpu_count(), "platform": platform.platform(),
           "threads": a.threads, "few": a.few, "many": a.many, "repeat": a.repeat, "note": a.note,
           "samebits_lib": samebits.library_path(), "workloads": {}}
    if "lightgbm" in a.peers:
        import lightgbm
        res["lightgbm"] = lightgbm.__version__
    ok = True
    for w in a.workloads:
        t0 = time.perf_counter()
        X, y, obj = load(w, a.data, a.max_rows)
        print("== %s %d x %d (loaded in %.1f s)" % (w, X.shape[0], X.shape[1], time.perf_counter() - t0), flush=True)
        libs = {"samebits": sb_fit}
        if "lightgbm" in a.peers:
            libs["lightgbm"] = lgb_fit
        times = {(lib, n): [] for lib in libs for n in (a.few, a.many)}
        digests = {}
        for r in range(a.repeat):
            for (lib, n) in times:
                s, d = libs[lib](X, y, obj, n, a.threads)
                times[(lib, n)].append(s)
                if d and n == a.many:
                    digests.setdefault("many", set()).add(d)
                print("%s %s trees=%d threads=%d run %d: %.3f s" % (w, lib, n, a.threads, r, s), flush=True)
        per_tree = {lib: (min(times[(lib, a.many)]) - min(times[(lib, a.few)])) / (a.many - a.few) * 1000.0
                    for lib in libs}
        ident = {}
        for t in a.digest_threads:
            s, d = sb_fit(X, y, obj, a.digest_trees, t)
            ident[str(t)] = d
            print("%s samebits trees=%d threads=%d: %.3f s digest %s" % (w, a.digest_trees, t, s, d[:16]), flush=True)
        same = len(set(ident.values())) <= 1 and len(digests.get("many", set())) <= 1
        ok = ok and same
        res["workloads"][w] = {
            "rows": int(X.shape[0]), "features": int(X.shape[1]), "objective": obj,
            "times": {"%s-%d" % k: v for k, v in times.items()}, "ms_per_tree": per_tree,
            "ratio_samebits_lightgbm": per_tree["samebits"] / per_tree["lightgbm"] if "lightgbm" in per_tree else None,
            "digest_trees": a.digest_trees, "digests_by_threads": ident,
            "digests_many": sorted(digests.get("many", [])), "digests_equal": same}
        print(w, json.dumps({"ms_per_tree": per_tree, "digests_equal": same}), flush=True)
        del X, y
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)
    if a.md:
        with open(a.md, "w") as f:
            f.write(report(res))
    return 0 if ok else 1


def report(res):
    L = ["# CPU gradient boosting at 10M rows: samebits beside LightGBM (bench/host_bench.py)", "",
         "Commit %s, %s; %s (%d cores, %s); %d threads each; LightGBM %s; time per tree = (fit of %d trees - "
         "fit of %d) / %d, best of %d interleaved runs each." % (
             res["commit"], res["date"], res["cpu"], res["cores"], res["platform"], res["threads"],
             res.get("lightgbm", "-"), res["many"], res["few"], res["many"] - res["few"], res["repeat"]), ""]
    if res["note"]:
        L += [res["note"], ""]
    L += ["| workload | rows x features | samebits ms/tree | LightGBM ms/tree | samebits/LightGBM | "
          "digests at threads | equal |", "|---|---|---|---|---|---|---|"]
    for w, r in res["workloads"].items():
        pt = r["ms_per_tree"]
        L.append("| %s | %d x %d | %.1f | %s | %s | %s (%d trees) | %s |" % (
            w, r["rows"], r["features"], pt["samebits"], "%.1f" % pt["lightgbm"] if "lightgbm" in pt else "-",
            "%.2f" % r["ratio_samebits_lightgbm"] if r["ratio_samebits_lightgbm"] else "-",
            ", ".join(sorted(r["digests_by_threads"], key=int)), r["digest_trees"], "yes" if r["digests_equal"] else "NO"))
    L += ["", "Parameters: depth-wise, max_depth 8, 255 bins, learning rate 0.1, min_samples_leaf 20 (LightGBM: "
          "num_leaves 255, max_depth 8, min_data_in_leaf 20, force_row_wise, deterministic).", ""]
    for w, r in res["workloads"].items():
        L.append("- %s: fit times (s) %s; digests %s" % (w, json.dumps(r["times"]), json.dumps(r["digests_by_threads"])))
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    sys.exit(main())
