#!/usr/bin/env python3
"""Several targets a row beside scikit-learn (issue 24's quality and CPU speed
for y of shape (n, t)): LinearRegression, Ridge, Lasso and ElasticNet on the
California housing data with two real targets, fitted by both libraries in one
process on the same cores.

    python3 bench/linear_targets_bench.py [--threads 2] [--repeat 5] [--out bench/results/NAME.json]

Data: ../shared/data/california-housing.csv, the rows with a missing value and
the text column dropped; features longitude, latitude, housing_median_age,
total_rooms, total_bedrooms, population, households (7); targets
median_house_value and median_income (2); the same 80/20 split as
bench/linear_bench.py (numpy RandomState(0).permutation). Parameters are
linear_bench.py's housing ones (Lasso alpha 100, ElasticNet alpha 1 and
l1_ratio 0.5), with the iterative fits also at tol 1e-6 and max_iter 100000.

Measured: coefficient agreement (linear_bench.agreement: max |a - b| / max |b|
over every target's row), each target's R^2 on the test rows by both, n_iter_ of
both, whether each row is the bits of that target's own single-target samebits
fit, and fit() time: both libraries one after the other, --repeat rounds
interleaved, the best kept. samebits gets the float32 arrays, scikit-learn
their exact float64 widening.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import samebits  # noqa: E402
from linear_bench import DATA, agreement, f32  # noqa: E402

TARGETS = ("median_house_value", "median_income")
CASES = [("LinearRegression", {}, None), ("Ridge", {"alpha": 1.0}, None),
         ("Lasso", {"alpha": 100.0}, {"tol": 1e-6, "max_iter": 100000}),
         ("ElasticNet", {"alpha": 1.0, "l1_ratio": 0.5}, {"tol": 1e-6, "max_iter": 100000})]


def load():
    import pandas as pd
    df = pd.read_csv(os.path.join(DATA, "california-housing.csv")).drop(columns="ocean_proximity").dropna()
    Y = f32(df[list(TARGETS)].to_numpy(np.float64))
    X = f32(df.drop(columns=list(TARGETS)).to_numpy(np.float64))
    perm = np.random.RandomState(0).permutation(len(Y))
    ntr = len(Y) * 8 // 10
    tr, te = perm[:ntr], perm[ntr:]
    return X[tr], Y[tr], X[te], Y[te], list(df.drop(columns=list(TARGETS)).columns)


def r2s(Y, P):
    P = np.asarray(P, np.float64).reshape(Y.shape)
    Y = Y.astype(np.float64)
    return [float(1 - np.sum((Y[:, k] - P[:, k]) ** 2) / np.sum((Y[:, k] - Y[:, k].mean()) ** 2))
            for k in range(Y.shape[1])]


def timed(make, X, Y):
    """(fitted, fit() wall seconds) after 0.3 s asleep (linear_bench.py's settle: neither library's idle
    threads take the cores from the other's fit)."""
    est = make()
    time.sleep(0.3)
    t0 = time.perf_counter()
    est.fit(X, Y)
    return est, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=25)
    ap.add_argument("--out")
    a = ap.parse_args()
    import warnings
    from sklearn import linear_model
    warnings.simplefilter("ignore")
    samebits.set_num_threads(a.threads)
    Xtr, Ytr, Xte, Yte, names = load()
    X64, Y64 = Xtr.astype(np.float64), Ytr.astype(np.float64)
    commit = subprocess.run(["git", "rev-parse", "--short=8", "HEAD"], capture_output=True, text=True,
                            cwd=HERE).stdout.strip()
    rec = {"bench": "linear-targets", "date": time.strftime("%Y-%m-%d"), "commit": commit,
           "machine": "%s, %d logical CPUs (%s)" % (platform.processor() or platform.machine(), os.cpu_count(),
                                                    platform.platform()),
           "load_start": os.getloadavg()[0], "threads": a.threads, "repeat": a.repeat,
           "data": "california-housing.csv, %d train / %d test rows, features %s, targets %s"
                   % (len(Ytr), len(Yte), ", ".join(names), ", ".join(TARGETS)), "rows": []}
    import sklearn
    rec["sklearn"] = sklearn.__version__
    for name, params, tight in CASES:
        for tag, kw in (("default", dict(params)), ("tol 1e-6", dict(params, **(tight or {})))):
            if tag != "default" and tight is None:
                continue
            sbc, skc = getattr(samebits, name), getattr(linear_model, name)
            best_sb = best_sk = float("inf")
            for _ in range(a.repeat):
                sb, t = timed(lambda: sbc(**kw), Xtr, Ytr)
                best_sb = min(best_sb, t)
                sk, t = timed(lambda: skc(**kw), X64, Y64)
                best_sk = min(best_sk, t)
            own = all(np.array_equal(np.asarray(sbc(**kw).fit(Xtr, Ytr[:, k]).coef_), np.asarray(sb.coef_)[k])
                      for k in range(Ytr.shape[1]))
            row = {"estimator": name, "params": kw, "fit": tag,
                   "agreement": agreement(np.asarray(sb.coef_), sk.coef_)["normalized"],
                   "r2_samebits": r2s(Yte, sb.predict(Xte)), "r2_sklearn": r2s(Yte, sk.predict(Xte.astype(np.float64))),
                   "n_iter_samebits": getattr(sb, "n_iter_", None),
                   "n_iter_sklearn": [int(v) for v in np.ravel(sk.n_iter_)] if getattr(sk, "n_iter_", None) is not None
                   else None,
                   "rows_are_own_fits": own, "fit_s_samebits": best_sb, "fit_s_sklearn": best_sk,
                   "ratio": best_sb / best_sk}
            rec["rows"].append(row)
            print(json.dumps(row), flush=True)
    rec["load_end"] = os.getloadavg()[0]
    if not a.out:
        return
    with open(a.out, "w") as f:
        json.dump(rec, f, indent=1)
    md = os.path.splitext(a.out)[0] + ".md"
    with open(md, "w") as f:
        f.write("# Several targets a row beside scikit-learn %s (issue 24)\n\n" % rec["sklearn"])
        f.write("Commit %s, %s; %s; load average %.1f at start, %.1f at end; samebits at %d threads; "
                "`python3 bench/linear_targets_bench.py --threads %d --repeat %d` (best of %d interleaved rounds, 0.3 s "
                "asleep before each timed fit). "
                "Data: %s. samebits on float32, scikit-learn on their float64 widening.\n\n"
                % (commit, rec["date"], rec["machine"], rec["load_start"], rec["load_end"], a.threads, a.threads,
                   a.repeat, a.repeat, rec["data"]))
        f.write("| estimator | fit | coef agreement (normalized) | test R^2 samebits | test R^2 scikit-learn | "
                "n_iter_ samebits / scikit-learn | each row its own fit's bits | fit s samebits / scikit-learn | "
                "ratio |\n|---|---|---|---|---|---|---|---|---|\n")
        for r in rec["rows"]:
            f.write("| %s | %s | %.2e | %s | %s | %s / %s | %s | %.4f / %.4f | %.2f |\n"
                    % (r["estimator"], r["fit"], r["agreement"], ", ".join("%.6f" % v for v in r["r2_samebits"]),
                       ", ".join("%.6f" % v for v in r["r2_sklearn"]), r["n_iter_samebits"], r["n_iter_sklearn"],
                       "yes" if r["rows_are_own_fits"] else "**no**", r["fit_s_samebits"], r["fit_s_sklearn"],
                       r["ratio"]))
    print("wrote", a.out, md)


if __name__ == "__main__":
    main()
