#!/usr/bin/env python3
"""Random forests on the GPU (device=cuda) against the CPU forest, on synthetic
data shaped like HIGGS (28 float features, a binary label with a nonlinear
signal), side by side in one run; the model bytes must be equal.

    python3 bench/forest_device_parity.py [--rows N] [--features F] [--trees T]
                                      [--threads J] [--model random_forest|extra_trees]
                                      [--min-samples-leaf L] [--no-cpu] [--device cuda]

Time: fit() wall clock, data already in memory. --no-cpu skips the CPU fit
(at 10M rows it takes long); then only the GPU's time is printed.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
import samebits  # noqa: E402


def data(n, nf, seed=1):
    g = np.random.Generator(np.random.Philox(key=seed))
    X = g.standard_normal((n, nf), dtype=np.float32)
    s = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + 0.5 * X[:, 3] ** 2 - X[:, 4] + 0.5 * g.standard_normal(n, dtype=np.float32)
    return X, (s > 0.5).astype(np.int64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--features", type=int, default=28)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--model", default="random_forest")
    ap.add_argument("--min-samples-leaf", type=int, default=1)
    ap.add_argument("--no-cpu", action="store_true")
    ap.add_argument("--device", default="cuda", help="cuda, or cpu-batched (the host reference: slow)")
    a = ap.parse_args()
    samebits.set_num_threads(a.threads)
    X, y = data(a.rows, a.features)
    cls = samebits.RandomForestClassifier if a.model == "random_forest" else samebits.ExtraTreesClassifier
    kw = dict(n_estimators=a.trees, min_samples_leaf=a.min_samples_leaf, random_state=7)
    print(f"rows {a.rows} features {a.features} trees {a.trees} model {a.model} "
          f"min_samples_leaf {a.min_samples_leaf} threads {a.threads}")
    t0 = time.perf_counter()
    g = cls(device=a.device, **kw).fit(X, y)
    tg = time.perf_counter() - t0
    print(f"{a.device}: fit {tg:.2f} s, model {len(g.model_bytes())} bytes, digest {g.digest()}")
    if not a.no_cpu:
        t0 = time.perf_counter()
        c = cls(**kw).fit(X, y)
        tc = time.perf_counter() - t0
        same = c.model_bytes() == g.model_bytes()
        print(f"cpu ({a.threads} threads): fit {tc:.2f} s; {a.device} is {tc / tg:.1f}x faster; "
              f"model bytes {'EQUAL' if same else 'DIFFER'}")
        if not same:
            sys.exit(1)


if __name__ == "__main__":
    main()
