#!/usr/bin/env python3
"""Random forests and Extra Trees on the GPU: samebits device=cuda beside
scikit-learn on all the GPU machine's cores and samebits' own CPU path, in one
run (tools/device-gbdt.sh runs it on the lent H200 with FOREST_BENCH=1).

    SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python \
        python3 bench/forest_gpu_bench.py --data DIR --out OUT.json [--trees 32] [--rows 1000000,10000000]

Workloads (real rows only): flights-late (binary: arrival delay > 15 min) from
the flights file, the same columns and split as bench/gbdt_bench.py. 1M rows:
the first 1,000,000 training rows. 10M rows: the 2.4M training rows tiled in an
order drawn by a counter-based generator (NumPy's Philox, key 20261130), cut at
10,000,000 (real rows, repeated; for time, not quality). Test: the last 20% of
the file.

Parameters: n_estimators --trees, min_samples_leaf 5, max_depth --max-depth
(none by default), scikit-learn's defaults otherwise (max_features sqrt,
bootstrap for random forests, none for Extra Trees); samebits bins into 255
bins. Time: fit() wall clock with the data in memory (samebits' includes
binning and the transfer to the GPU). Identity: the digest of the CUDA-trained
model against the CPU-trained model's with the same parameters, and the digests
of their test probabilities. scikit-learn's and samebits' CPU runs can be
skipped for the largest size with --cpu-max-rows.
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
sys.path.insert(0, HERE)


def load(data, rows):
    import gbdt_bench
    gbdt_bench.DATA = data
    Xtr, ytr, Xte, yte, _, _ = gbdt_bench.prep_flights("binary")
    if rows <= len(ytr):
        return np.ascontiguousarray(Xtr[:rows]), np.ascontiguousarray(ytr[:rows]), Xte, yte
    reps = -(-rows // len(ytr))
    order = np.random.Generator(np.random.Philox(key=20261130)).permutation(len(ytr) * reps)[:rows]
    idx = order % len(ytr)
    return np.ascontiguousarray(Xtr[idx]), np.ascontiguousarray(ytr[idx]), Xte, yte


def auc(y, p):
    from sklearn.metrics import roc_auc_score
    return float(roc_auc_score(y, p))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--trees", type=int, default=32)
    ap.add_argument("--rows", default="1000000,10000000")
    ap.add_argument("--max-depth", type=int, default=None)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--device", default="cuda", help="cpu-batched: a dry run where no GPU is")
    ap.add_argument("--cpu-max-rows", type=int, default=10000000,
                    help="run scikit-learn and samebits' CPU path only up to this many rows")
    ap.add_argument("--models", default="RandomForest,ExtraTrees")
    ap.add_argument("--commit", default="unknown")
    a = ap.parse_args()
    import samebits
    from sklearn import ensemble
    samebits.set_num_threads(a.threads)
    res = {"commit": a.commit, "date": datetime.date.today().isoformat(), "machine": platform.platform(),
           "cpu_count": os.cpu_count(), "threads": a.threads, "trees": a.trees, "max_depth": a.max_depth,
           "sklearn": __import__("sklearn").__version__, "device": a.device, "runs": []}
    for rows in [int(r) for r in a.rows.split(",") if r]:
        X, y, Xt, yt = load(a.data, rows)
        for kind in [m for m in a.models.split(",") if m]:
            row = {"workload": "flights-late", "model": kind, "rows": int(X.shape[0]), "features": int(X.shape[1])}
            common = dict(n_estimators=a.trees, min_samples_leaf=5, max_depth=a.max_depth, random_state=0)
            libs = [("samebits-" + a.device, lambda: getattr(samebits, kind + "Classifier")(device=a.device, **common))]
            if rows <= a.cpu_max_rows:
                libs.append(("samebits-cpu", lambda: getattr(samebits, kind + "Classifier")(device="cpu", **common)))
                libs.append(("sklearn", lambda: getattr(ensemble, kind + "Classifier")(n_jobs=a.threads, **common)))
            for lib, make in libs:
                est = make()
                t0 = time.perf_counter()
                try:
                    est.fit(X, y)
                except Exception as e:  # a refusal is recorded as one, never as a time
                    row[lib] = {"error": "%s: %s" % (type(e).__name__, e)}
                    print(json.dumps({"rows": rows, "model": kind, "lib": lib, "error": row[lib]["error"]}),
                          flush=True)
                    continue
                t = time.perf_counter() - t0
                p = np.asarray(est.predict_proba(Xt), dtype=np.float32)[:, 1]
                row[lib] = {"fit_s": t, "auc": auc(yt, p),
                            "pred_sha256": hashlib.sha256(np.ascontiguousarray(p).tobytes()).hexdigest()}
                if lib.startswith("samebits"):
                    row[lib]["model_digest"] = est.digest()
                print(json.dumps({"rows": rows, "model": kind, "lib": lib, **row[lib]}), flush=True)
                del est
            g, c = row.get("samebits-" + a.device, {}), row.get("samebits-cpu", {})
            if "model_digest" in g and "model_digest" in c:
                row["identical"] = g["model_digest"] == c["model_digest"] and g["pred_sha256"] == c["pred_sha256"]
            if "fit_s" in g and "fit_s" in row.get("sklearn", {}):
                row["sklearn_over_gpu"] = row["sklearn"]["fit_s"] / g["fit_s"]
            res["runs"].append(row)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    lines = ["# Forests on the GPU: samebits device=%s beside scikit-learn %s (%d threads) at %s" %
             (a.device, res["sklearn"], a.threads, a.commit), "",
             "%d trees, min_samples_leaf 5, max_depth %s, scikit-learn's defaults otherwise; flights-late "
             "(binary), 7 features; fit wall time with the data in memory; one run each on %s." %
             (a.trees, a.max_depth, res["machine"]), "",
             "| model | rows | samebits GPU s | samebits CPU s | sklearn s | sklearn / GPU | AUC GPU | AUC sklearn "
             "| GPU = CPU bytes |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in res["runs"]:
        g, c, s = r.get("samebits-" + a.device, {}), r.get("samebits-cpu", {}), r.get("sklearn", {})

        def f(d, k, fmt):
            return fmt % d[k] if k in d else d.get("error", "not run")
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
            r["model"], r["rows"], f(g, "fit_s", "%.2f"), f(c, "fit_s", "%.2f"), f(s, "fit_s", "%.2f"),
            "%.1fx" % r["sklearn_over_gpu"] if "sklearn_over_gpu" in r else "-", f(g, "auc", "%.4f"),
            f(s, "auc", "%.4f"), {True: "identical", False: "DIFFERS"}.get(r.get("identical"), "-")))
    text = "\n".join(lines) + "\n"
    with open(os.path.splitext(a.out)[0] + ".md", "w") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
