#!/usr/bin/env python3
"""Thread scaling of CPU gradient boosting: samebits at 1 and 2 threads beside
LightGBM at 1 and 2 threads, in one process, the same data and parameters.

    python3 bench/threads_bench.py [--workloads letter flights-d8 higgs] [--repeat R]
                                   [--threads 1 2] [--no-save] [--note TEXT]

Workloads (real data only):
  letter      UCI letter recognition (Debian r-cran-mlbench, read as quality_bench.py does):
              a random 15,000-row training split (RandomState(0)), 16 features, 26 classes;
              100 rounds, 31 leaves, learning rate 0.1, 20 rows a leaf (issue 18's small case)
  flights-d8  the first 1,000,000 training rows of gbdt_bench.py's flights-reg (7 features);
              100 trees, max_depth 8 (255 leaves at most), learning rate 0.1, 20 rows a leaf
  higgs       LightGBM's binary example (7,000 x 28): a small binary workload, 100 trees x 31 leaves

Timing: fit() of each estimator on float32 NumPy arrays already in memory (both
libraries bin inside fit), best and median of --repeat runs, the runs of all
libraries interleaved so that background load hits them alike.  Before each fit
the script waits (--quiet-wait seconds at most) for an idle machine, and it
records the cores other processes used during each fit ("foreign_cores" in the
JSON, the largest per column in the report): on a 2-core machine a second
user's build turns a 2-thread measurement into a measurement of contention.  samebits' model
digest is recorded at every thread count and must be the same (the script fails
otherwise).  Results: bench/results/threads-DATE-COMMIT.{md,json}.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

# numpy's OpenBLAS threads spin after each call and would take CPU from the
# fits being timed (both libraries alike); the fits do no BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))
from _common import git_commit  # noqa: E402


def load_letter():
    import quality_bench
    X, y = quality_bench.load_letter()
    perm = np.random.RandomState(0).permutation(len(y))
    tr = perm[:15000]
    return X[tr], y[tr]


def load_flights():
    import gbdt_bench
    Xtr, ytr = gbdt_bench.prep_flights("regression")[:2]
    return np.ascontiguousarray(Xtr[:1000000]), ytr[:1000000]


def load_higgs():
    import gbdt_bench
    Xtr, ytr = gbdt_bench.prep_higgs()[:2]
    return Xtr, ytr


COMMON = dict(n_estimators=100, learning_rate=0.1, max_bin=255, min_child_weight=1e-3, reg_lambda=0.0)
WORKLOADS = {
    "letter": ("classifier", load_letter, dict(COMMON, num_leaves=31, max_depth=-1, min_leaf=20),
               "UCI letter recognition (r-cran-mlbench), 15,000 random training rows (RandomState(0)) x 16, "
               "26 classes"),
    "flights-d8": ("regressor", load_flights, dict(COMMON, num_leaves=255, max_depth=8, min_leaf=20),
                   "flights-3m.parquet, the first 1,000,000 rows of gbdt_bench.py's flights-reg training split x 7"),
    "higgs": ("classifier", load_higgs, dict(COMMON, num_leaves=31, max_depth=-1, min_leaf=20),
              "LightGBM example binary_classification_binary.train (7,000 x 28)"),
}


def fit_samebits(kind, P, X, y, threads):
    import samebits
    cls = samebits.GradientBoostingClassifier if kind == "classifier" else samebits.GradientBoostingRegressor
    m = cls(n_estimators=P["n_estimators"], learning_rate=P["learning_rate"], num_leaves=P["num_leaves"],
            max_depth=None if P["max_depth"] < 0 else P["max_depth"], max_bin=P["max_bin"],
            min_samples_leaf=P["min_leaf"], min_child_weight=P["min_child_weight"], reg_lambda=P["reg_lambda"],
            random_state=0, n_jobs=threads)
    t0 = time.perf_counter()
    m.fit(X, y)
    return time.perf_counter() - t0, m.model_digest_


def fit_lightgbm(kind, P, X, y, threads):
    import lightgbm as lgb
    cls = lgb.LGBMClassifier if kind == "classifier" else lgb.LGBMRegressor
    m = cls(n_estimators=P["n_estimators"], learning_rate=P["learning_rate"], num_leaves=P["num_leaves"],
            max_depth=P["max_depth"], max_bin=P["max_bin"], min_child_samples=P["min_leaf"],
            min_child_weight=P["min_child_weight"], reg_lambda=P["reg_lambda"], subsample=1.0,
            colsample_bytree=1.0, random_state=0, n_jobs=threads, num_threads=threads, verbose=-1)
    t0 = time.perf_counter()
    m.fit(X, y)
    return time.perf_counter() - t0, None


def cpu_ticks():
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return sum(v) - v[3] - v[4], sum(v)


def wait_quiet(limit_s):
    """Wait (at most limit_s) until the machine was at least 90% idle over one
    second: another user's build or test run on a 2-core machine takes a core,
    and a 2-thread fit then measures the contention, not the library."""
    t0 = time.time()
    while time.time() - t0 < limit_s:
        a = cpu_ticks()
        time.sleep(1.0)
        b = cpu_ticks()
        if b[1] > a[1] and (b[0] - a[0]) / (b[1] - a[1]) <= 0.10:
            return True
    return False


def timed(f, *args):
    """f(*args) -> (seconds, digest), plus the cores other processes used
    meanwhile (machine busy time minus this process's CPU time, over wall)."""
    a, ta = cpu_ticks(), os.times()
    s, d = f(*args)
    b, tb = cpu_ticks(), os.times()
    hz = os.sysconf("SC_CLK_TCK")
    ours = (tb.user + tb.system) - (ta.user + ta.system)
    foreign = max(0.0, (b[0] - a[0]) / hz - ours) / s if s > 0 else 0.0
    return s, d, foreign


def machine():
    model = ""
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "platform": platform.platform()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", nargs="+", default=list(WORKLOADS))
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--note", default="")
    ap.add_argument("--tag", default="", help="appended to the result file name (e.g. baseline)")
    ap.add_argument("--quiet-wait", type=float, default=60.0,
                    help="seconds to wait for an idle machine before each fit (0: do not wait)")
    a = ap.parse_args()
    import lightgbm
    import samebits
    commit, dirty = git_commit(short=7)
    res = {"commit": commit, "dirty": dirty, "date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
           "machine": machine(), "lightgbm": lightgbm.__version__, "samebits_lib": samebits.library_path(),
           "repeat": a.repeat, "note": a.note, "quiet_wait_s": a.quiet_wait, "workloads": {}}
    ok = True
    for name in a.workloads:
        kind, load, P, desc = WORKLOADS[name]
        X, y = load()
        X = np.ascontiguousarray(X, dtype=np.float32)
        runs = {("samebits", t): [] for t in a.threads}
        runs.update({("lightgbm", t): [] for t in a.threads})
        digests = {}
        foreign = {k: [] for k in runs}
        for r in range(a.repeat):
            for (lib, t) in runs:
                f = fit_samebits if lib == "samebits" else fit_lightgbm
                quiet = wait_quiet(a.quiet_wait) if a.quiet_wait > 0 else None
                s, d, fl = timed(f, kind, P, X, y, t)
                runs[(lib, t)].append(s)
                foreign[(lib, t)].append(round(fl, 3))
                if d is not None:
                    digests.setdefault(t, set()).add(d)
                print("%-10s %-8s threads=%d run %d: %.3f s (other processes: %.2f cores%s)" % (
                    name, lib, t, r, s, fl, "" if quiet is not False else ", machine not idle before"), flush=True)
        same = len(set().union(*digests.values())) == 1
        ok = ok and same
        w = {"description": desc, "rows": int(X.shape[0]), "features": int(X.shape[1]), "kind": kind,
             "params": P, "digests": {str(t): sorted(v) for t, v in digests.items()}, "digests_equal": same,
             "times": {"%s-%d" % k: v for k, v in runs.items()},
             "foreign_cores": {"%s-%d" % k: v for k, v in foreign.items()},
             "best": {"%s-%d" % k: min(v) for k, v in runs.items()},
             "median": {"%s-%d" % k: statistics.median(v) for k, v in runs.items()}}
        b = w["best"]
        t1, t2 = a.threads[0], a.threads[-1]
        w["ratios"] = {
            "samebits %d/%d threads" % (t2, t1): b["samebits-%d" % t2] / b["samebits-%d" % t1],
            "lightgbm %d/%d threads" % (t2, t1): b["lightgbm-%d" % t2] / b["lightgbm-%d" % t1],
            "samebits/lightgbm at %d" % t1: b["samebits-%d" % t1] / b["lightgbm-%d" % t1],
            "samebits/lightgbm at %d" % t2: b["samebits-%d" % t2] / b["lightgbm-%d" % t2],
        }
        res["workloads"][name] = w
        print(name, json.dumps(w["ratios"]), "digests equal" if same else "DIGESTS DIFFER", flush=True)
    if not a.no_save:
        stem = os.path.join(REPO, "bench", "results", "threads-%s-%s%s" % (res["date"][:10], commit,
                                                                           "-" + a.tag if a.tag else ""))
        with open(stem + ".json", "w") as f:
            json.dump(res, f, indent=1)
        with open(stem + ".md", "w") as f:
            f.write(report(res, a.threads))
        print("wrote", stem + ".{md,json}")
    return 0 if ok else 1


def report(res, threads):
    L = ["# Thread scaling: samebits beside LightGBM (bench/threads_bench.py)", "",
         "Commit %s%s, %s; %s (%d cores, %s); LightGBM %s; best of %d interleaved runs, fit() only; "
         "samebits library %s." % (
             res["commit"], " (dirty tree)" if res["dirty"] else "", res["date"], res["machine"]["cpu"],
             res["machine"]["cores"], res["machine"]["platform"], res["lightgbm"], res["repeat"],
             res["samebits_lib"]), ""]
    if res["note"]:
        L += [res["note"], ""]
    hdr = "| workload | rows x features | " + " | ".join(
        "%s %dt (s)" % (lib, t) for lib in ("samebits", "lightgbm") for t in threads) + \
        " | samebits %d/%d | samebits/LightGBM at %d | at %d | digests equal |" % (threads[-1], threads[0], threads[0],
                                                                                   threads[-1])
    L += [hdr, "|" + "---|" * (hdr.count("|") - 1)]
    for name, w in res["workloads"].items():
        b, m, fc = w["best"], w["median"], w["foreign_cores"]
        cells = ["%.3f (med %.3f; others <= %.2f cores)" % (b["%s-%d" % (lib, t)], m["%s-%d" % (lib, t)],
                                                           max(fc["%s-%d" % (lib, t)]))
                 for lib in ("samebits", "lightgbm") for t in threads]
        r = list(w["ratios"].values())
        L.append("| %s | %d x %d | %s | %.2f | %.2f | %.2f | %s |" % (
            name, w["rows"], w["features"], " | ".join(cells), r[0], r[2], r[3], "yes" if w["digests_equal"] else "NO"))
    L += ["", "Workloads and parameters:", ""]
    for name, w in res["workloads"].items():
        L.append("- %s: %s; %s; model digest %s" % (name, w["description"], json.dumps(w["params"]),
                                                     ", ".join(sorted(set(sum(w["digests"].values(), []))))))
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    sys.exit(main())
