"""Accuracy of the identical GEMM beside NumPy's float32 matmul, against float64.

    python3 bench/gemm_accuracy.py --out bench/results/gemm-accuracy-DATE-COMMIT.json

For each matrix pair (float32 inputs), the reference is the float64 product of
the same float32 values; the error of an element is |c - ref| / |ref| over the
elements with ref != 0; the table gives the median and the maximum for
samebits.linalg.matmul (device cpu: every device gives these bits) and for
NumPy's a @ b in float32 (OpenBLAS on this machine). Cases: random matrices
(uniform, normal, positive; small and large k), ill-conditioned ones (Ozaki's
test matrices (rand - 0.5) * exp(phi * randn) with phi up to 4, and a product of
a matrix with condition number 1e7 by its transpose), and real data as
matrices: the California housing table (X^T X with k = 20,433 rows and
X X^T of 2,000 rows with k = 9) and the flights table (numeric columns, 1M rows:
X^T X with k = 1,000,000, several passes of K).
"""
import argparse
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import samebits  # noqa: E402
from samebits import linalg  # noqa: E402
from _common import git_commit  # noqa: E402

DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")


def rel_errors(c, ref):
    c = np.asarray(c, dtype=np.float64)
    nz = ref != 0
    r = np.abs(c[nz] - ref[nz]) / np.abs(ref[nz])
    return float(np.median(r)), float(np.max(r))


def housing():
    import csv
    with open(os.path.join(DATA, "california-housing.csv")) as f:
        rows = list(csv.reader(f))
    x = np.array([[float(v) if v else np.nan for v in r[:9]] for r in rows[1:]], dtype=np.float32)
    return x[~np.isnan(x).any(axis=1)]


def flights(n=1000000):
    """The numeric columns of the first n flights (pyarrow reads the file)."""
    import pyarrow.parquet as pq
    t = pq.read_table(os.path.join(DATA, "flights-3m.parquet"))
    cols = []
    for name in t.column_names:
        v = t.column(name).to_numpy()[:n]
        if v.dtype.kind in "fiu":
            cols.append(v.astype(np.float32))
        elif v.dtype.kind == "M":  # the date: minutes since the year began
            mins = v.astype("datetime64[m]").astype(np.int64)
            cols.append((mins - mins.min()).astype(np.float32))
    return np.stack(cols, axis=1)


def cases(rng):
    yield "uniform 1024^3", rng.uniform(-1, 1, (1024, 1024)), rng.uniform(-1, 1, (1024, 1024))
    yield "uniform k=8", rng.uniform(-1, 1, (1024, 8)), rng.uniform(-1, 1, (8, 1024))
    yield "uniform k=4096", rng.uniform(-1, 1, (256, 4096)), rng.uniform(-1, 1, (4096, 256))
    yield "normal 1024^3", rng.standard_normal((1024, 1024)), rng.standard_normal((1024, 1024))
    yield "positive 1024^3", rng.uniform(0, 1, (1024, 1024)), rng.uniform(0, 1, (1024, 1024))
    for phi in (0.5, 1.0, 2.0, 3.0, 4.0):
        f = lambda s: (rng.uniform(0, 1, s) - 0.5) * np.exp(phi * rng.standard_normal(s))  # noqa: E731
        yield "Ozaki phi=%g 1024^3" % phi, f((1024, 1024)), f((1024, 1024))
    u, _ = np.linalg.qr(rng.standard_normal((512, 512)))
    v, _ = np.linalg.qr(rng.standard_normal((512, 512)))
    a = (u * np.logspace(0, -7, 512)) @ v.T
    yield "cond 1e7: A A^T 512", a, a.T.copy()
    try:
        x = housing()
        yield "housing X^T X (k=20433)", x.T.copy(), x
        yield "housing X X^T (2000 rows, k=9)", x[:2000], x[:2000].T.copy()
    except OSError as e:
        print("housing skipped:", e, file=sys.stderr)
    try:
        x = flights()
        yield "flights X^T X (k=1M)", x.T.copy(), x
        yield "flights X X^T (2000 rows, k=%d)" % x.shape[1], x[:2000], x[:2000].T.copy()
    except Exception as e:  # recorded in the output rather than hidden
        print("flights skipped:", repr(e), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    rec = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seed": a.seed,
           "numpy": np.__version__, "rows": []}
    rec["commit"] = git_commit()[0]
    ok = True
    for name, x, y in cases(rng):
        x, y = np.ascontiguousarray(x, dtype=np.float32), np.ascontiguousarray(y, dtype=np.float32)
        ref = x.astype(np.float64) @ y.astype(np.float64)
        sb = rel_errors(linalg.matmul(x, y), ref)
        npy = rel_errors(x @ y, ref)
        row = {"case": name, "shape": [x.shape[0], y.shape[1], x.shape[1]], "samebits_median": sb[0],
               "samebits_max": sb[1], "numpy_median": npy[0], "numpy_max": npy[1],
               "no_worse": sb[0] <= npy[0] and sb[1] <= npy[1]}
        ok &= row["no_worse"]
        rec["rows"].append(row)
        print("%-34s samebits %.3g / %.3g   numpy %.3g / %.3g   %s" % (name, sb[0], sb[1], npy[0], npy[1],
                                                                     "ok" if row["no_worse"] else "WORSE"),
              flush=True)
    rec["all_no_worse"] = bool(ok)
    with open(a.out, "w") as f:
        json.dump(rec, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
