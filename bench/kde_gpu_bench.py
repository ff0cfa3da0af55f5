"""KernelDensity's score_samples on a GPU beside scikit-learn's on the host's
cores (issue 27): for the lead's GPU run; not run on this workplace (no GPU).

Workload: bench/kde_bench.py's (California housing, the eight numeric
features standardized and rounded to float32, shuffled by seed 27), with
--n-train training rows and --n-query held-out queries (both default 10,000;
the data set has 20,433 complete rows).

Per kernel and device (--devices, default "cuda opencl cpu"): samebits'
score_samples time (median of --repeat calls after one untimed call, which
opens the device and builds its program) and the SHA-256 of its float32 log
densities, which must be the same on every device (the run says so and exits
nonzero where they differ). scikit-learn's KernelDensity (its default kd tree,
atol = rtol = 0) beside it twice: single-threaded (score_samples as it is),
and over the host's cores (--sk-jobs, default every core: the queries in
equal contiguous blocks, one process a block, through joblib; its tree
evaluates each query on its own, so the blocks' values are its own). Ratios
are samebits' time over scikit-learn's, in one run on one machine.

Writes bench/results/kde-gpu-DATE-COMMIT.{json,md} (unless --no-save).

    SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python python3 bench/kde_gpu_bench.py
"""
import argparse
import hashlib
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, HERE)
from _common import run_header, save_record  # noqa: E402
KERNELS = ("gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--devices", nargs="*", default=["cuda", "opencl", "cpu"])
    p.add_argument("--threads", type=int, default=os.cpu_count(), help="samebits' host threads (device=cpu)")
    p.add_argument("--sk-jobs", type=int, default=os.cpu_count(), help="processes for scikit-learn's blocks")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--n-train", type=int, default=10000)
    p.add_argument("--n-query", type=int, default=10000)
    p.add_argument("--bandwidth", default="1.0", help="a number, scott or silverman (default 1.0)")
    p.add_argument("--kernels", nargs="*", default=list(KERNELS))
    p.add_argument("--no-save", action="store_true")
    return p.parse_args()


def timed(fn, repeat):
    fn()  # untimed: the device's first use opens it and builds its program
    ts, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return out, ts


def _sk_block(model, Q):
    import numpy as np
    with np.errstate(all="ignore"):
        return model.score_samples(Q)


def run(kernel, X, Q, A):
    import numpy as np
    import samebits
    from joblib import Parallel, delayed
    from sklearn.neighbors import KernelDensity as SK
    bw = A.bandwidth if A.bandwidth in ("scott", "silverman") else float(A.bandwidth)
    row = {"kernel": kernel, "devices": {}}
    digests = set()
    for dev in A.devices:
        try:
            est = samebits.KernelDensity(kernel=kernel, bandwidth=bw, device=dev, n_jobs=A.threads).fit(X)
            out, ts = timed(lambda: est.score_samples(Q), A.repeat)
        except samebits.BackendUnavailableError as e:
            row["devices"][dev] = {"refused": str(e)}
            print(json.dumps({"kernel": kernel, "device": dev, "refused": str(e)}), flush=True)
            continue
        sha = hashlib.sha256(np.asarray(out, dtype=np.float32).tobytes()).hexdigest()
        digests.add(sha)
        row["devices"][dev] = {"s": ts, "median_s": statistics.median(ts), "log_density_sha256": sha,
                               "bandwidth_": est.bandwidth_}
    row["identical_across_devices"] = len(digests) <= 1
    Q64, X64 = Q.astype(np.float64), X.astype(np.float64)
    sk = SK(kernel=kernel, bandwidth=bw).fit(X64)
    _, t1 = timed(lambda: _sk_block(sk, Q64), A.repeat)
    blocks = np.array_split(Q64, A.sk_jobs)
    par = Parallel(n_jobs=A.sk_jobs)
    _, tp = timed(lambda: np.concatenate(par(delayed(_sk_block)(sk, b) for b in blocks)), A.repeat)
    row["sklearn_1_s"], row["sklearn_jobs_s"] = t1, tp
    row["sklearn_1_median_s"], row["sklearn_jobs_median_s"] = statistics.median(t1), statistics.median(tp)
    for dev, r in row["devices"].items():
        if "median_s" in r:
            r["ratio_vs_sklearn_1"] = r["median_s"] / row["sklearn_1_median_s"]
            r["ratio_vs_sklearn_jobs"] = r["median_s"] / row["sklearn_jobs_median_s"]
    print(json.dumps(row), flush=True)
    return row


def write_md(h, rows, path, A):
    out = ["# KernelDensity score_samples on a GPU beside scikit-learn on the host (issue 27)", "",
           "Commit `%s`%s, %s; %s." % (h["commit"][:7], " (dirty)" if h.get("dirty") else "", h["date"], h["machine"]),
           "Command: `%s`." % h["command"],
           "California housing, 8 features standardized, %d training rows, %d held-out queries, bandwidth=%s; "
           "medians of %d calls after an untimed one. scikit-learn %s (kd tree, atol=rtol=0) single-threaded and "
           "over %d processes (query blocks); samebits device=cpu at %d threads." % (
               A.n_train, A.n_query, A.bandwidth, A.repeat, h["versions"]["scikit-learn"], A.sk_jobs, A.threads), "",
           "| kernel | device | samebits s | scikit-learn 1 / %d jobs s | ratio vs 1 / vs %d jobs | log densities "
           "identical on every device |" % (A.sk_jobs, A.sk_jobs),
           "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        for dev, d in r["devices"].items():
            if "refused" in d:
                out.append("| %s | %s | refused: %s | | | |" % (r["kernel"], dev, d["refused"][:80]))
                continue
            out.append("| %s | %s | %.3f | %.3f / %.3f | %.2f / %.2f | %s |" % (
                r["kernel"], dev, d["median_s"], r["sklearn_1_median_s"], r["sklearn_jobs_median_s"],
                d["ratio_vs_sklearn_1"], d["ratio_vs_sklearn_jobs"], "yes" if r["identical_across_devices"] else "NO"))
    out += ["", "Load average at the start %s, at the end %s." % (h["loadavg_start"], h.get("loadavg_end"))]
    with open(path, "w") as fh:
        fh.write("\n".join(out) + "\n")


def main():
    A = parse_args()
    import kde_bench
    import linear_bench as lb
    X, Q, nrows = kde_bench.load(A.n_train, A.n_query)
    h = run_header("kde_gpu_bench.py", A.threads, repeat=A.repeat, devices=A.devices, sk_dtype="float64")
    h["workload"] = {"data": "california-housing.csv", "rows_complete": nrows, "n_train": A.n_train,
                     "n_query": A.n_query, "features": 8, "bandwidth": A.bandwidth, "shuffle_seed": 27,
                     "sk_jobs": A.sk_jobs}
    rows = [run(k, X, Q, A) for k in A.kernels]
    h["loadavg_end"] = lb.loadavg()
    same = all(r["identical_across_devices"] for r in rows)
    print("log densities identical on every device:", "yes" if same else "NO")
    if not A.no_save:
        save_record(h, "kde-gpu", {"kernels": rows}, lambda path: write_md(h, rows, path, A))
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
