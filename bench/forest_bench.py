#!/usr/bin/env python3
"""Random forests and Extra Trees: samebits against scikit-learn, side by side in
one run on the same cores (both with n_jobs = --threads).

    python3 bench/forest_bench.py [--rows N] [--trees T] [--threads J] [--data DIR] [--out STEM]

Workloads (real data, ../shared/data): flights-late (binary: delay > 15 min;
the first N of the training rows of bench/gbdt_bench.py's split, test = the last
20% of the file), california housing (regression, random 80/20 split).
Parameters: n_estimators T, min_samples_leaf 5, scikit-learn's defaults
otherwise (max_features sqrt for classification, all for regression;
bootstrap for random forests, none for Extra Trees). samebits bins features
into 255 bins. Time: fit() wall clock, data already in memory. Results:
bench/results/forest-DATE-COMMIT.{md,json}.
"""
import argparse, datetime, json, os, platform, sys, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
import gbdt_bench  # noqa: E402
import samebits  # noqa: E402
from sklearn import ensemble  # noqa: E402
from sklearn.metrics import accuracy_score, r2_score, roc_auc_score  # noqa: E402
from _common import git_commit  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--trees", type=int, default=16)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--data", default="", help="the data folder (default: gbdt_bench.py's, ../shared/data)")
    ap.add_argument("--out", default="", help="write STEM.md and STEM.json here instead of bench/results")
    ap.add_argument("--workloads", nargs="*", default=["flights-late", "housing"])
    a = ap.parse_args()
    if a.data:
        gbdt_bench.DATA = a.data
    samebits.set_num_threads(a.threads)
    res = {"rows": a.rows, "trees": a.trees, "threads": a.threads, "runs": []}
    work = []
    if "flights-late" in a.workloads:
        Xtr, ytr, Xte, yte, _, _ = gbdt_bench.prep_flights("binary")
        Xtr, ytr = np.ascontiguousarray(Xtr[:a.rows]), np.ascontiguousarray(ytr[:a.rows])
        work.append(("flights-late", Xtr, ytr, Xte, yte, "cls"))
    if "housing" in a.workloads:
        Htr, htr, Hte, hte, _, _ = gbdt_bench.prep_housing()
        work.append(("housing", Htr, htr, Hte, hte, "reg"))
    for name, X, y, Xt, yt, task in work:
        for kind in ("RandomForest", "ExtraTrees"):
            suffix = "Classifier" if task == "cls" else "Regressor"
            sb = getattr(samebits, kind + suffix)(n_estimators=a.trees, min_samples_leaf=5, random_state=0)
            sk = getattr(ensemble, kind + suffix)(n_estimators=a.trees, min_samples_leaf=5, random_state=0,
                                                  n_jobs=a.threads)
            Xsk = X
            row = {"workload": name, "model": kind, "rows": int(X.shape[0]), "features": int(X.shape[1])}
            for lib, est in (("samebits", sb), ("sklearn", sk)):
                t0 = time.perf_counter()
                est.fit(Xsk, y)
                t = time.perf_counter() - t0
                if task == "cls":
                    p = np.asarray(est.predict_proba(Xt))[:, 1]
                    q = {"auc": float(roc_auc_score(yt, p)), "accuracy": float(accuracy_score(yt, p > 0.5))}
                else:
                    q = {"r2": float(r2_score(yt, np.asarray(est.predict(Xt))))}
                row[lib] = {"fit_s": t, **q}
            row["time_ratio_sklearn_over_samebits"] = row["sklearn"]["fit_s"] / row["samebits"]["fit_s"]
            print(json.dumps(row), flush=True)
            res["runs"].append(row)
    commit = os.environ.get("COMMIT") or git_commit(short=True)[0] or "unknown"
    res.update({"commit": commit, "date": datetime.date.today().isoformat(), "machine": platform.platform(),
                "cpu_count": os.cpu_count(), "sklearn": __import__("sklearn").__version__})
    if not a.no_save:
        base = a.out or os.path.join(HERE, "results", "forest-%s-%s" % (res["date"], commit))
        with open(base + ".json", "w") as f:
            json.dump(res, f, indent=1)
        with open(base + ".md", "w") as f:
            f.write("# Forests: samebits against scikit-learn (%s, %d threads each, %s)\n\n" %
                    (commit, a.threads, res["machine"]))
            f.write("%d trees, min_samples_leaf 5, scikit-learn %s defaults otherwise; fit wall time, data in "
                    "memory; one run, side by side on the same cores.\n\n" % (a.trees, res["sklearn"]))
            f.write("| workload | model | rows | samebits fit s | sklearn fit s | sklearn/samebits time | "
                    "samebits quality | sklearn quality |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
            for r in res["runs"]:
                qk = "auc" if "auc" in r["samebits"] else "r2"
                f.write("| %s | %s | %d | %.2f | %.2f | %.2fx | %s %.4f | %s %.4f |\n" % (
                    r["workload"], r["model"], r["rows"], r["samebits"]["fit_s"], r["sklearn"]["fit_s"],
                    r["time_ratio_sklearn_over_samebits"], qk, r["samebits"][qk], qk, r["sklearn"][qk]))
        print("wrote", base + ".md")


if __name__ == "__main__":
    main()
