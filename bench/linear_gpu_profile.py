#!/usr/bin/env python3
"""Where a linear GPU fit spends its time: one fit per workload of
bench/linear_gpu_bench.py (the same data), with the library's phase timer
(SAMEBITS_LINEAR_TIMING=1) and the CUDA backend's per-kernel event timer
(SAMEBITS_CUDA_TIMING=1; it synchronizes after each launch, so the fit itself is
slower than untimed). Not a benchmark: no claim is read from it.

    python3 bench/linear_gpu_profile.py [--workloads logistic,pca] [--scale 1.0] [--device cuda]

Both timers print to stderr; the kernel report comes at the process's exit.
"""
import argparse
import os
import sys
import time

os.environ.setdefault("SAMEBITS_LINEAR_TIMING", "1")
os.environ.setdefault("SAMEBITS_CUDA_TIMING", "1")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import samebits  # noqa: E402
from linear_gpu_bench import data  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="logistic,pca")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args()
    for w in a.workloads.split(","):
        X, y = data(w, a.scale)
        est = {"ridge": lambda: samebits.Ridge(alpha=1.0, device=a.device),
               "logistic": lambda: samebits.LogisticRegression(device=a.device),
               "pca": lambda: samebits.PCA(device=a.device)}[w]()
        t0 = time.perf_counter()
        m = est.fit(X) if y is None else est.fit(X, y)
        dt = time.perf_counter() - t0
        extra = " n_iter %s" % (list(m.n_iter_) if hasattr(m.n_iter_, "__len__") else m.n_iter_) \
            if hasattr(m, "n_iter_") else ""
        print("profile: %s %s fit %.3f s (timed launches)%s digest %s" % (w, X.shape, dt, extra, m.model_digest_),
              file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
