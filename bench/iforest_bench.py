#!/usr/bin/env python3
"""Isolation forest quality: samebits.IsolationForest beside scikit-learn's on
labeled real anomaly tasks, ROC AUC of -score_samples against the labels.

    python3 bench/iforest_bench.py [--seeds 5] [--trees 100] [--out bench/results/iforest-DATE-COMMIT]

Tasks (real labels only):
- fashion-mnist one-class (Debian's dataset-fashion-mnist, the 60,000 training
  images): each class in turn is "normal"; anomalies are images of the other
  nine classes, as many as 5% of the normal ones, drawn by NumPy's Philox
  (key 20261130 + class) - the usual one-class construction for image sets;
- flights-late (../shared/data/flights-3m.parquet, bench/gbdt_bench.py's
  columns): the first 200,000 training rows, a late arrival (> 15 min) as the
  "anomaly" (a weak task: lateness is barely visible in these columns).

Both libraries: n_estimators --trees, max_samples 256, contamination "auto",
the same random_state, averaged over --seeds seeds (an isolation forest's AUC
moves with its seed). Quality only; fit times are printed, not claimed.
"""
import argparse
import datetime
import gzip
import json
import os
import platform
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
from _common import git_commit  # noqa: E402
FMNIST = "/usr/share/datasets/fashion-mnist"


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def fashion_tasks():
    X = idx(os.path.join(FMNIST, "train-images-idx3-ubyte.gz")).reshape(60000, -1).astype(np.float32)
    y = idx(os.path.join(FMNIST, "train-labels-idx1-ubyte.gz"))
    for c in range(10):
        normal = np.flatnonzero(y == c)
        others = np.flatnonzero(y != c)
        g = np.random.Generator(np.random.Philox(key=20261130 + c))
        anom = np.sort(g.choice(others, size=len(normal) // 20, replace=False))
        rows = np.concatenate([normal, anom])
        lab = np.concatenate([np.zeros(len(normal)), np.ones(len(anom))])
        yield "fashion-mnist normal=%d" % c, np.ascontiguousarray(X[rows]), lab


def flights_task(rows):
    import gbdt_bench
    Xtr, ytr, _, _, _, _ = gbdt_bench.prep_flights("binary")
    return "flights-late %d rows" % rows, np.ascontiguousarray(Xtr[:rows], dtype=np.float32), ytr[:rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--flights-rows", type=int, default=200000)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    import samebits
    from sklearn.ensemble import IsolationForest
    from sklearn.metrics import roc_auc_score
    tasks = list(fashion_tasks()) + [flights_task(a.flights_rows)]
    res = {"date": datetime.date.today().isoformat(), "machine": platform.platform(), "trees": a.trees,
           "seeds": a.seeds, "sklearn": __import__("sklearn").__version__, "tasks": []}
    for name, X, lab in tasks:
        row = {"task": name, "rows": int(X.shape[0]), "features": int(X.shape[1]),
               "anomalies": int(lab.sum()), "samebits": [], "sklearn": []}
        for s in range(a.seeds):
            for lib in ("samebits", "sklearn"):
                if lib == "samebits":
                    est = samebits.IsolationForest(n_estimators=a.trees, max_samples=256, random_state=s)
                else:
                    est = IsolationForest(n_estimators=a.trees, max_samples=256, random_state=s, n_jobs=-1)
                t0 = time.perf_counter()
                est.fit(X)
                sc = -np.asarray(est.score_samples(X))
                row[lib].append({"seed": s, "auc": float(roc_auc_score(lab, sc)),
                                 "fit_s": time.perf_counter() - t0})
        for lib in ("samebits", "sklearn"):
            v = [r["auc"] for r in row[lib]]
            row[lib + "_mean"], row[lib + "_std"] = float(np.mean(v)), float(np.std(v))
        row["diff"] = row["samebits_mean"] - row["sklearn_mean"]
        print("%-26s samebits %.4f +- %.4f  sklearn %.4f +- %.4f  diff %+.4f" % (
            name, row["samebits_mean"], row["samebits_std"], row["sklearn_mean"], row["sklearn_std"], row["diff"]),
            flush=True)
        res["tasks"].append(row)
    commit = git_commit(short=True)[0] or "unknown"
    res["commit"] = commit
    out = a.out or os.path.join(HERE, "results", "iforest-%s-%s" % (res["date"], commit))
    with open(out + ".json", "w") as f:
        json.dump(res, f, indent=1)
    with open(out + ".md", "w") as f:
        f.write("# Isolation forest quality: samebits beside scikit-learn %s (%s)\n\n" % (res["sklearn"], commit))
        f.write("bench/iforest_bench.py: %d trees, max_samples 256, ROC AUC of -score_samples against real labels, "
                "mean +- std over random_state 0..%d for each library.\n\n" % (a.trees, a.seeds - 1))
        f.write("| task | rows x features | anomalies | samebits AUC | scikit-learn AUC | difference |\n"
                "| --- | --- | --- | --- | --- | --- |\n")
        for r in res["tasks"]:
            f.write("| %s | %d x %d | %d | %.4f +- %.4f | %.4f +- %.4f | %+.4f |\n" % (
                r["task"], r["rows"], r["features"], r["anomalies"], r["samebits_mean"], r["samebits_std"],
                r["sklearn_mean"], r["sklearn_std"], r["diff"]))
    print("wrote", out + ".md")


if __name__ == "__main__":
    main()
