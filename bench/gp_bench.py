"""Gaussian process regression beside scikit-learn's GaussianProcessRegressor
on the California housing data (issue 27: predictive mean within 1e-4 and log
marginal likelihood within 1e-4 relative, at 5,000 training rows).

Data: /work/shared/data/california-housing.csv, the eight numeric features
(ocean_proximity dropped, rows with a missing value dropped), the target
median_house_value / 1e5. A fixed permutation (numpy RandomState(0)) gives the
training rows (the first n) and 1,000 held-out rows after them; the features
are standardized by the training rows' mean and standard deviation.
normalize_y=True for both.

Runs (the same kernel, bounds and restarts for both):
  - fixed: optimizer=None (the kernel kept), so the linear algebra is compared
    apart from the optimizer: ConstantKernel(1.0) * RBF(1.0) + WhiteKernel(0.1);
  - iso: optimizer on ConstantKernel(1.0, (1e-3, 1e3)) * RBF(1.0, (1e-2, 1e2))
    + WhiteKernel(0.1, (1e-5, 1e1));
  - ard: the same with one length scale per feature (10 hyperparameters);
  - restarts: iso with n_restarts_optimizer=2 (the starts are drawn by each
    library's own generator, so they differ: the row says whether both ended
    at the same optimum).
Reported: the largest |mean difference| on the held-out rows relative to the
largest |mean| (and in the target's units), the largest std difference, the
log marginal likelihood's relative difference, each fitted kernel, and the
fit-time ratio samebits / scikit-learn with both on the same cores (samebits
at --threads, scikit-learn's BLAS limited to the same count by threadpoolctl),
in wall-clock and in process CPU time (all threads; the latter is steadier on
a loaded machine, though a BLAS thread's spin-waiting counts as CPU time).

Run: python3 bench/gp_bench.py [--threads 2] [--runs fixed:5000,iso:2000,...] [--seeds 0,1,2] [--tag T]
     [--out bench/results]
Each run is repeated for each seed: the seed draws the permutation (so the training and held-out rows)
and is both libraries' random_state (the restarts' draws); seed 0 is the earlier records' data.
Results: bench/results/gp-DATE-COMMIT[-TAG].{md,json}, rewritten after every row.
"""
import argparse
import datetime
import json
import os
import platform
import sys
import time
import warnings

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from _common import cpu_model, git_commit  # noqa: E402
import samebits  # noqa: E402
from samebits.gaussian_process import kernels as SK  # noqa: E402

DATA = "/work/shared/data/california-housing.csv"
TEST = 1000


def load(n, seed=0):
    d = pd.read_csv(DATA).drop(columns=["ocean_proximity"]).dropna()
    X = d.drop(columns=["median_house_value"]).values.astype(np.float64)
    y = d["median_house_value"].values.astype(np.float64) / 1e5
    idx = np.random.RandomState(seed).permutation(len(X))
    tr, te = idx[:n], idx[n:n + TEST]
    mu, sd = X[tr].mean(0), X[tr].std(0)
    return (X[tr] - mu) / sd, y[tr], (X[te] - mu) / sd, y[te]


def kernels(kind, d):
    from sklearn.gaussian_process import kernels as K
    if kind == "fixed":
        return (SK.ConstantKernel(1.0) * SK.RBF(1.0) + SK.WhiteKernel(0.1),
                K.ConstantKernel(1.0) * K.RBF(1.0) + K.WhiteKernel(0.1))
    ls = [1.0] * d if kind == "ard" else 1.0
    return (SK.ConstantKernel(1.0, (1e-3, 1e3)) * SK.RBF(ls, (1e-2, 1e2)) + SK.WhiteKernel(0.1, (1e-5, 1e1)),
            K.ConstantKernel(1.0, (1e-3, 1e3)) * K.RBF(ls, (1e-2, 1e2)) + K.WhiteKernel(0.1, (1e-5, 1e1)))


def run_one(kind, n, threads, seed=0):
    from sklearn.gaussian_process import GaussianProcessRegressor as SKGP
    from threadpoolctl import threadpool_limits
    X, y, Xt, yt = load(n, seed)
    load_before = os.getloadavg()[0]
    ks, kk = kernels(kind, X.shape[1])
    opt = None if kind == "fixed" else "fmin_l_bfgs_b"
    restarts = 2 if kind == "restarts" else 0
    samebits.set_num_threads(threads)
    t, c = time.perf_counter(), time.process_time()
    a = samebits.GaussianProcessRegressor(ks, optimizer=opt, normalize_y=True, n_restarts_optimizer=restarts,
                                          random_state=seed).fit(X, y)
    ta, ca = time.perf_counter() - t, time.process_time() - c
    with threadpool_limits(limits=threads), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, c = time.perf_counter(), time.process_time()
        b = SKGP(kk, optimizer=opt, normalize_y=True, n_restarts_optimizer=restarts, random_state=seed).fit(X, y)
        tb, cb = time.perf_counter() - t, time.process_time() - c
        mb, sb = b.predict(Xt, return_std=True)
    ma, sa = a.predict(Xt, return_std=True)
    la, lb = a.log_marginal_likelihood_value_, b.log_marginal_likelihood_value_
    mean_abs = float(np.max(np.abs(ma - mb)))
    row = {"run": kind, "n": n, "seed": seed, "load_before": load_before, "load_after": os.getloadavg()[0],
           "restarts": restarts, "optimizer": opt or "None",
           "mean_abs": mean_abs, "mean_rel": mean_abs / float(np.max(np.abs(mb))),
           "std_abs": float(np.max(np.abs(sa - sb))), "lml_samebits": la, "lml_sklearn": lb,
           "lml_rel": (la - lb) / abs(lb), "kernel_samebits": repr(a.kernel_), "kernel_sklearn": repr(b.kernel_),
           "rmse_samebits": float(np.sqrt(np.mean((ma - yt) ** 2))), "rmse_sklearn": float(np.sqrt(np.mean((mb - yt) ** 2))),
           "fit_s_samebits": ta, "fit_s_sklearn": tb, "ratio": ta / tb, "cpu_s_samebits": ca, "cpu_s_sklearn": cb, "cpu_ratio": ca / cb, "nit_samebits": a.n_iter_}
    row["met"] = bool(row["mean_rel"] <= 1e-4 and abs(row["lml_rel"]) <= 1e-4)
    print(json.dumps(row), flush=True)
    return row


def write(a, rows):
    """The result files of the rows so far; returns the markdown's lines."""
    import sklearn
    commit, dirty = git_commit(short=True)
    cpu = cpu_model()
    head = {"commit": commit, "dirty": dirty, "date": datetime.date.today().isoformat(),
            "machine": "%s, %d logical CPUs (%s)" % (cpu, os.cpu_count(), platform.platform()),
            "threads": a.threads, "samebits": samebits.__version__, "profile": samebits.profile_version(),
            "sklearn": sklearn.__version__, "numpy": np.__version__, "runs": a.runs, "seeds": a.seeds}
    base = "gp-%s-%s%s" % (head["date"], commit, "-" + a.tag if a.tag else "")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, base + ".json"), "w") as f:
        json.dump({"header": head, "rows": rows}, f, indent=1)
    lines = ["# Gaussian process regression beside scikit-learn (%s)" % head["date"], "",
             "commit %s%s; %s; %d threads for both (scikit-learn's BLAS limited by threadpoolctl); samebits %s (%s), "
             "scikit-learn %s, numpy %s. Generated by bench/gp_bench.py (its docstring: data, kernels, bounds)." % (
                 commit, " (dirty)" if dirty else "", head["machine"], a.threads, head["samebits"], head["profile"],
                 head["sklearn"], head["numpy"]), "",
             "Runs %s, seeds %s (a seed is the data permutation's and both libraries' random_state). "
             "Load: the 1-minute load average before and after each row's two fits (2 logical CPUs)." % (
                 a.runs, a.seeds), "",
             "Targets (issue 27): predictive mean within 1e-4 (relative to the largest |mean| on 1,000 held-out rows) "
             "and log marginal likelihood within 1e-4 relative.", "",
             "| run | rows | seed | load | optimizer | restarts | max mean diff (rel.) | max mean diff (x 1e5 $) | max std diff | "
             "LML samebits | LML scikit-learn | LML rel. diff | met | held-out RMSE sb / sk | fit s sb | fit s sk | "
             "ratio sb/sk | CPU s sb / sk | CPU ratio |",
             "| --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: | --- | ---: |"]
    for r in rows:
        lines.append("| %s | %d | %d | %.1f / %.1f | %s | %d | %.2e | %.2e | %.2e | %.6f | %.6f | %.2e | %s | %.4f / %.4f | %.2f | %.2f | "
                     "%.2f | %.1f / %.1f | %.2f |" % (r["run"], r["n"], r["seed"], r["load_before"], r["load_after"], r["optimizer"], r["restarts"], r["mean_rel"], r["mean_abs"],
                                  r["std_abs"], r["lml_samebits"], r["lml_sklearn"], r["lml_rel"],
                                  "yes" if r["met"] else "**no**", r["rmse_samebits"], r["rmse_sklearn"],
                                  r["fit_s_samebits"], r["fit_s_sklearn"], r["ratio"], r["cpu_s_samebits"],
                                  r["cpu_s_sklearn"], r["cpu_ratio"]))
    groups = {}
    for r in rows:
        groups.setdefault((r["run"], r["n"]), []).append((r["ratio"], r["cpu_ratio"]))
    lines += ["", "Fit-time ratio samebits / scikit-learn over the seeds, wall clock (median, min to max) and process "
              "CPU time (median):", ""]
    for (run, n), rs in groups.items():
        w = [x[0] for x in rs]
        lines.append("- %s, %d rows: %.2f (%.2f to %.2f, %d seeds); CPU %.2f" % (
            run, n, float(np.median(w)), min(w), max(w), len(w), float(np.median([x[1] for x in rs]))))
    lines += ["", "Fitted kernels:", ""]
    for r in rows:
        lines.append("- %s, %d rows, seed %d: samebits `%s`; scikit-learn `%s`" % (r["run"], r["n"], r["seed"], r["kernel_samebits"],
                                                                          r["kernel_sklearn"]))
    with open(os.path.join(a.out, base + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", default="fixed:5000,fixed:2000,iso:1000,iso:2000,ard:1000,restarts:1000")
    ap.add_argument("--seeds", default="0", help="comma-separated: the data permutation's seed and random_state")
    ap.add_argument("--tag", default="", help="a suffix of the result files' name")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    rows, lines = [], []
    for spec in a.runs.split(","):
        kind, n = spec.split(":")
        for seed in a.seeds.split(","):
            rows.append(run_one(kind, int(n), a.threads, int(seed)))
            lines = write(a, rows)  # after every row, so an interrupted run keeps its finished rows
    print("\n".join(lines))


if __name__ == "__main__":
    main()
