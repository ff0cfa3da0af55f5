"""KernelDensity beside scikit-learn's on real data (issue 27): log-likelihood
agreement and score_samples time, every kernel.

Workload: California housing (../shared/data/california-housing.csv), the
eight numeric features (rows with a missing total_bedrooms dropped),
standardized in float64 then rounded to float32, shuffled by a fixed seed;
the first 5,000 rows are the training rows, the next 5,000 the queries
(held out). Both libraries get the same float32 values (scikit-learn as
float64 copies of them). scikit-learn runs its default engine
(algorithm="auto", a kd tree, breadth_first=True) with its defaults
atol=0, rtol=0; its score_samples is single-threaded. samebits runs at the
thread count asked (default 2, this workplace's cores): the exact sum over
every training row.

Reported per kernel: the relative difference of the total log-likelihood over
the queries finite in both, the largest per-row relative difference, the
queries at -inf in each (a compact kernel reaching no training row: samebits
exactly -inf, scikit-learn -inf or the log of a rounding residue), the exact
float64 reference's agreement with samebits (NumPy, log-sum-exp), and the
score_samples time of each (median of --repeat calls) with their ratio.

scikit-learn's cosine kernel is normalized wrongly in even dimensions (NaN in
8-D): its rows are reported, not compared.

Writes bench/results/kde-DATE-COMMIT.{json,md} (-bw-BANDWIDTH before the
extension for a bandwidth other than 1.0).
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, HERE)
from _common import run_header, save_record  # noqa: E402
DATA = os.path.join(REPO, "..", "shared", "data", "california-housing.csv")
if not os.path.exists(DATA):
    DATA = "/work/shared/data/california-housing.csv"
KERNELS = ("gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine")
SPEED_TARGET = 1.5


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--n-train", type=int, default=5000)
    p.add_argument("--n-query", type=int, default=5000)
    p.add_argument("--bandwidth", default="1.0", help="a number, scott or silverman (default 1.0)")
    p.add_argument("--kernels", nargs="*", default=list(KERNELS))
    p.add_argument("--no-save", action="store_true")
    return p.parse_args()


def load(n_train, n_query):
    import csv
    import numpy as np
    rows = []
    with open(DATA) as f:
        r = csv.reader(f)
        head = next(r)
        cols = [head.index(c) for c in ("longitude", "latitude", "housing_median_age", "total_rooms",
                                         "total_bedrooms", "population", "households", "median_income")]
        for line in r:
            v = [line[c] for c in cols]
            if all(x != "" for x in v):
                rows.append([float(x) for x in v])
    X = np.asarray(rows, dtype=np.float64)
    X = ((X - X.mean(0)) / X.std(0)).astype(np.float32)
    perm = np.random.default_rng(27).permutation(len(X))
    X = X[perm]
    return X[:n_train], X[n_train:n_train + n_query], len(rows)


def exact(X, Q, kernel, h):
    """float64 log densities from the definition, by blocks of queries."""
    import numpy as np
    sys.path.insert(0, os.path.join(REPO, "tests", "python"))
    from test_py_kde import _exact
    return np.concatenate([_exact(X, Q[i:i + 500], kernel, h) for i in range(0, len(Q), 500)])


def timed(fn, repeat):
    ts, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return out, ts


def run(kernel, X, Q, A):
    import numpy as np
    import samebits
    from sklearn.neighbors import KernelDensity as SK
    bw = A.bandwidth if A.bandwidth in ("scott", "silverman") else float(A.bandwidth)
    ours = samebits.KernelDensity(kernel=kernel, bandwidth=bw, n_jobs=A.threads).fit(X)
    theirs = SK(kernel=kernel, bandwidth=bw).fit(X.astype(np.float64))
    a, ta = timed(lambda: ours.score_samples(Q), A.repeat)
    Q64 = Q.astype(np.float64)
    with np.errstate(all="ignore"):
        s, ts = timed(lambda: theirs.score_samples(Q64), A.repeat)
        ref = exact(X, Q, kernel, ours.bandwidth_)
    both = np.isfinite(a) & np.isfinite(s)
    fin = np.isfinite(a) & np.isfinite(ref)
    row = {"kernel": kernel, "bandwidth_": ours.bandwidth_,
           "samebits_s": ta, "sklearn_s": ts,
           "time_ratio": statistics.median(ta) / statistics.median(ts),
           "neg_inf_samebits": int(np.sum(a == -np.inf)), "neg_inf_sklearn": int(np.sum(s == -np.inf)),
           "nan_sklearn": int(np.sum(np.isnan(s))), "compared": int(both.sum()),
           "loglik_samebits": float(a[both].sum()) if both.any() else None,
           "loglik_sklearn": float(s[both].sum()) if both.any() else None,
           "exact_matches_samebits_inf": bool((np.isfinite(a) == np.isfinite(ref)).all()),
           "max_rel_vs_exact": float(np.max(np.abs(a[fin] - ref[fin]) / np.maximum(np.abs(ref[fin]), 1e-300)))
           if fin.any() else None}
    if both.any():
        row["loglik_rel_diff"] = abs(row["loglik_samebits"] - row["loglik_sklearn"]) / abs(row["loglik_sklearn"])
        rel = np.abs(a[both] - s[both]) / np.maximum(np.abs(s[both]), 1e-300)
        row["max_row_rel_diff"] = float(rel.max())
        row["rows_within_1e-5"] = int(np.sum(rel <= 1e-5))
    else:
        row["loglik_rel_diff"] = None
    print(json.dumps(row), flush=True)
    return row


def write_md(h, rows, path, A, nrows):
    f = lambda v, fmt: "-" if v is None else fmt % v  # noqa: E731
    out = ["# KernelDensity beside scikit-learn (issue 27)", "",
           "Commit `%s`%s, %s; %s." % (h["commit"][:7], " (dirty)" if h.get("dirty") else "", h["date"], h["machine"]),
           "Command: `%s`." % h["command"],
           "scikit-learn %s (algorithm=\"auto\": its kd tree, breadth_first=True, atol=0, rtol=0; single-threaded); "
           "samebits at %d threads (the exact sum over every training row)." % (h["versions"]["scikit-learn"],
                                                                               A.threads), "",
           "California housing: %d rows with every numeric value (of 20,640), 8 features standardized, %d training "
           "rows and %d held-out queries, bandwidth=%s." % (nrows, A.n_train, A.n_query, A.bandwidth), "",
           "| kernel | log-likelihood rel. diff | rows compared | rows within 1e-5 | max row rel. diff | -inf samebits / "
           "scikit-learn | samebits vs exact float64 (max rel.) | score_samples s samebits / scikit-learn | ratio |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        note = " (scikit-learn NaN: %d rows)" % r["nan_sklearn"] if r["nan_sklearn"] else ""
        out.append("| %s | %s%s | %d | %s | %s | %d / %d | %s | %.3f / %.3f | %.2f |" % (
            r["kernel"], f(r["loglik_rel_diff"], "%.2e"), note, r["compared"], f(r.get("rows_within_1e-5"), "%d"),
            f(r.get("max_row_rel_diff"), "%.2e"), r["neg_inf_samebits"], r["neg_inf_sklearn"],
            f(r["max_rel_vs_exact"], "%.1e"), statistics.median(r["samebits_s"]), statistics.median(r["sklearn_s"]),
            r["time_ratio"]))
    ratios = [r["time_ratio"] for r in rows]
    out += ["", "Time ratio (samebits / scikit-learn, medians): %s; target <= %.1f: %s." % (
        ", ".join("%s %.2f" % (r["kernel"], r["time_ratio"]) for r in rows), SPEED_TARGET,
        "met for %d of %d kernels" % (sum(x <= SPEED_TARGET for x in ratios), len(ratios)))]
    out += ["", "Load average at the start %s, at the end %s." % (h["loadavg_start"], h.get("loadavg_end"))]
    with open(path, "w") as fh:
        fh.write("\n".join(out) + "\n")


def main():
    A = parse_args()
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(k, str(A.threads))
    import linear_bench as lb
    X, Q, nrows = load(A.n_train, A.n_query)
    h = run_header("kde_bench.py", A.threads, repeat=A.repeat, sk_dtype="float64")
    h["workload"] = {"data": "california-housing.csv", "rows_complete": nrows, "n_train": A.n_train,
                     "n_query": A.n_query, "features": 8, "bandwidth": A.bandwidth, "shuffle_seed": 27}
    rows = [run(k, X, Q, A) for k in A.kernels]
    h["loadavg_end"] = lb.loadavg()
    if A.no_save:
        return
    suffix = "" if A.bandwidth == "1.0" else "-bw-" + A.bandwidth  # the default run keeps the plain name
    save_record(h, "kde", {"kernels": rows}, lambda path: write_md(h, rows, path, A, nrows), suffix)


if __name__ == "__main__":
    main()
