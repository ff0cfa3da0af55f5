#!/usr/bin/env python3
"""The linear family on a GPU beside scikit-learn on the host's cores (issue 24's
speed shapes).

    python3 bench/linear_gpu_bench.py [--devices cuda,opencl] [--scale 1.0] [--reps 1]
                                      [--workloads ridge,logistic,pca] [--out FILE.json]

Workloads (synthetic: numpy's default_rng(0) draws float32 features; labels come
from a fixed linear model plus noise, so the fits have a known answer; the
issue's shapes at --scale 1):

  ridge     10,000,000 x 100, Ridge(alpha=1)
  logistic  10,000,000 x 28, LogisticRegression() (binary, C=1, tol=1e-4, lbfgs)
  pca       1,000,000 x 1024, PCA() (all components); scikit-learn is timed with
            svd_solver="covariance_eigh" (its fastest exact solver for this shape)
            and, below --full-max rows, with its default ("full": a LAPACK SVD)

Each fit is timed from the host arrays to the fitted estimator (samebits: the
data's conversion, the uploads and the fit; scikit-learn: its fit), best of
--reps. The model digests of the devices are compared (identity across the GPU
backends). scikit-learn runs on every host core (its own threading); samebits'
host work uses every core too (SAMEBITS_NUM_THREADS unset). Absolute times are
GPU-machine wall times; the ratio scikit-learn / samebits is the claim.
"""
import argparse
import json
import os
import platform
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402

import samebits  # noqa: E402
from _common import git_commit  # noqa: E402


def data(kind, scale):
    rng = np.random.default_rng(0)
    if kind == "ridge":
        n, p = int(10_000_000 * scale), 100
    elif kind == "logistic":
        n, p = int(10_000_000 * scale), 28
    else:
        n, p = int(1_000_000 * scale), 1024
    X = rng.standard_normal((n, p), dtype=np.float32)
    beta = rng.standard_normal(p, dtype=np.float32)
    if kind == "pca":
        X *= np.linspace(3.0, 0.1, p, dtype=np.float32)  # a decaying spectrum
        return X, None
    z = X @ beta
    if kind == "ridge":
        return X, (z + rng.standard_normal(n, dtype=np.float32)).astype(np.float32)
    return X, (z / np.sqrt(p) + rng.standard_normal(n, dtype=np.float32) > 0).astype(np.float32)


def best(fn, reps):
    t, out = None, None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        t = dt if t is None or dt < t else t
    return t, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", default="cuda,opencl")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--workloads", default="ridge,logistic,pca")
    ap.add_argument("--full-max", type=int, default=200_000, help="rows up to which sklearn's full SVD is timed")
    ap.add_argument("--out")
    a = ap.parse_args()
    from sklearn import __version__ as skv
    from sklearn.decomposition import PCA
    from sklearn.linear_model import LogisticRegression, Ridge
    commit = git_commit()[0]
    rows = []
    for w in a.workloads.split(","):
        X, y = data(w, a.scale)
        row = {"workload": w, "shape": list(X.shape)}
        for dev in a.devices.split(","):
            if w == "ridge":
                fn = lambda: samebits.Ridge(alpha=1.0, device=dev).fit(X, y)  # noqa: E731
            elif w == "logistic":
                fn = lambda: samebits.LogisticRegression(device=dev).fit(X, y)  # noqa: E731
            else:
                fn = lambda: samebits.PCA(device=dev).fit(X)  # noqa: E731
            try:
                t, est = best(fn, a.reps)
                row["samebits_" + dev] = {"s": t, "digest": est.model_digest_,
                                          "n_iter": int(getattr(est, "n_iter_", [0])[0])
                                          if hasattr(getattr(est, "n_iter_", None), "__len__")
                                          else getattr(est, "n_iter_", None)}
            except Exception as e:  # a failure is recorded, never dropped
                row["samebits_" + dev] = {"error": "%s: %s" % (type(e).__name__, e)}
            print(w, dev, row["samebits_" + dev], flush=True)
        if w == "ridge":
            t, _ = best(lambda: Ridge(alpha=1.0).fit(X, y), a.reps)
            row["sklearn"] = {"s": t, "what": "Ridge(alpha=1) (cholesky)"}
        elif w == "logistic":
            t, ref = best(lambda: LogisticRegression().fit(X, y), a.reps)
            row["sklearn"] = {"s": t, "what": "LogisticRegression() (lbfgs)", "n_iter": int(ref.n_iter_[0])}
        else:
            t, _ = best(lambda: PCA(svd_solver="covariance_eigh").fit(X), a.reps)
            row["sklearn"] = {"s": t, "what": "PCA(svd_solver='covariance_eigh')"}
            if X.shape[0] <= a.full_max:
                t, _ = best(lambda: PCA().fit(X), a.reps)
                row["sklearn_full"] = {"s": t, "what": "PCA() (svd_solver='full' for this shape)"}
        print(w, "sklearn", row["sklearn"], flush=True)
        digests = {v["digest"] for k, v in row.items() if k.startswith("samebits_") and "digest" in v}
        row["devices_identical"] = len(digests) == 1
        rows.append(row)
    res = {"bench": "linear-gpu", "commit": commit, "scale": a.scale, "reps": a.reps,
           "machine": platform.node(), "cpus": os.cpu_count(), "sklearn": skv, "numpy": np.__version__,
           "samebits": samebits.version(), "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "rows": rows}
    print("\n| workload | shape | " + " | ".join("samebits %s s" % d for d in a.devices.split(",")) +
          " | scikit-learn s | ratio (sklearn / best samebits) | devices identical |")
    for r in rows:
        ts = [r.get("samebits_" + d, {}).get("s") for d in a.devices.split(",")]
        good = [t for t in ts if t]
        ratio = r["sklearn"]["s"] / min(good) if good else float("nan")
        print("| %s | %s | %s | %.3f | %.1f | %s |" % (r["workload"], "x".join(map(str, r["shape"])),
              " | ".join("%.3f" % t if t else "error" for t in ts), r["sklearn"]["s"], ratio, r["devices_identical"]))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
