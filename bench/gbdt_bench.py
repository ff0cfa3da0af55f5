#!/usr/bin/env python3
"""Gradient boosting benchmark: samebits (CLI) against LightGBM, XGBoost (hist)
and scikit-learn's HistGradientBoosting, side by side in one run on the same cores.

    python3 bench/gbdt_bench.py [--datasets flights-reg flights-late taxi-fare housing higgs]
                                [--trees N] [--leaves L] [--threads T] [--repeat R]
                                [--workdir DIR] [--no-save]

Every library gets the same float32 matrices (samebits reads them from CSV files
written with 9 significant digits, which round-trip float32 exactly), the same
parameters (see PARAMS below and bench/README.md) and runs in its own child
process, so that its peak RSS (getrusage of that child) is its own.  Timing:
samebits' train process wall clock (CSV parse + binning + boosting; the CLI's
"read in" / "trees in" lines split it), peers' fit() only (data already in
memory as a float32 NumPy array; fit includes their binning).  Each fit is run
--repeat times; the best time is reported.  Held-out metrics are computed by
this script, with the same sklearn.metrics code for every library.

Data comes from ../shared/data (never copied into the repo); temporary files go
to --workdir (default /tmp/samebits-bench).  Results: bench/results/gbdt-DATE-COMMIT.{md,json}.
"""
import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
from _common import cpu_model, git_commit

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.normpath(os.path.join(REPO, "..", "shared", "data"))
if not os.path.isdir(DATA):
    DATA = "/work/shared/data"
SAMEBITS = os.path.join(REPO, "build", "samebits")
LIBS = ["samebits", "lightgbm", "xgboost", "sklearn"]
OMP_WAIT_POLICY = "passive"  # set from --omp-wait; see bench/README.md


# --------------------------------------------------------------------------- data

def _codes_sorted(train_vals, all_vals):
    """Integer code = index of the category in the sorted list of categories seen
    in the training rows (deterministic); unseen categories get -1."""
    cats = np.array(sorted(set(train_vals.tolist())), dtype=object)
    index = {c: i for i, c in enumerate(cats)}
    return np.array([index.get(v, -1) for v in all_vals.tolist()], dtype=np.float32)


def prep_flights(task):
    import pyarrow.parquet as pq
    df = pq.read_table(os.path.join(DATA, "flights-3m.parquet")).to_pandas()
    # The file is in date order: split by row order, last 20% is the test set.
    n = len(df)
    ntr = n * 8 // 10
    d = df["date"]
    X = np.column_stack([
        d.dt.month.to_numpy(), d.dt.day.to_numpy(), d.dt.day_of_week.to_numpy(),
        (d.dt.hour * 60 + d.dt.minute).to_numpy(), df["distance"].to_numpy(),
    ]).astype(np.float32)
    orig = df["origin"].to_numpy(dtype=object)
    dest = df["destination"].to_numpy(dtype=object)
    X = np.column_stack([X, _codes_sorted(orig[:ntr], orig), _codes_sorted(dest[:ntr], dest)]).astype(np.float32)
    names = ["month", "day", "dayofweek", "minute_of_day", "distance", "origin", "destination"]
    delay = df["delay"].to_numpy()
    y = (delay > 15).astype(np.float32) if task == "binary" else delay.astype(np.float32)
    return X[:ntr], y[:ntr], X[ntr:], y[ntr:], names, "flights-3m.parquet: train = first 80% of rows (date order), test = last 20%"


def prep_taxi():
    import glob
    import pandas as pd
    files = sorted(glob.glob(os.path.join(DATA, "nyc-taxi", "yellow_tripdata_sample_*.csv.gz")))
    df = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    pu = pd.to_datetime(df["pickup_datetime"])
    do = pd.to_datetime(df["dropoff_datetime"])
    X = np.column_stack([
        pu.dt.year.to_numpy(), pu.dt.month.to_numpy(), pu.dt.day_of_week.to_numpy(),
        (pu.dt.hour * 60 + pu.dt.minute).to_numpy(),
        (do - pu).dt.total_seconds().to_numpy(),
        df["trip_distance"].to_numpy(), df["passenger_count"].to_numpy(),
        df["vendor_id"].to_numpy(), df["rate_code_id"].to_numpy(),
        df["pickup_location_id"].to_numpy(), df["dropoff_location_id"].to_numpy(),
        df["payment_type"].to_numpy(),
    ]).astype(np.float32)
    names = ["year", "month", "dayofweek", "minute_of_day", "duration_s", "trip_distance", "passenger_count",
             "vendor_id", "rate_code_id", "pickup_location_id", "dropoff_location_id", "payment_type"]
    y = df["fare_amount"].to_numpy().astype(np.float32)
    # Cleaning: the samples hold data errors (a 429,490 $ fare in 2018, negative
    # fares) that alone decide the RMSE; keep 0 < fare < 1000, in train and test alike.
    ok = ((y > 0) & (y < 1000))
    tr = (pu.dt.year <= 2019).to_numpy()
    te = ok & ~tr
    tr = ok & tr
    return X[tr], y[tr], X[te], y[te], names, ("nyc-taxi samples: train 2018-2019, test 2020; target fare_amount; "
                                              "rows with fare outside (0, 1000) dropped (%d)" % int((~ok).sum()))


def prep_housing():
    import pandas as pd
    df = pd.read_csv(os.path.join(DATA, "california-housing.csv"))
    cats = sorted(df["ocean_proximity"].unique().tolist())
    df["ocean_proximity"] = df["ocean_proximity"].map({c: i for i, c in enumerate(cats)})
    y = df.pop("median_house_value").to_numpy().astype(np.float32)
    names = list(df.columns)
    X = df.to_numpy().astype(np.float32)  # total_bedrooms has NaN (missing)
    perm = np.random.RandomState(42).permutation(len(y))
    ntr = len(y) * 8 // 10
    tr, te = perm[:ntr], perm[ntr:]
    return X[tr], y[tr], X[te], y[te], names, "california-housing: random 80/20 split, RandomState(42); ocean_proximity as sorted category index"


def prep_higgs():
    def load(p):
        a = np.loadtxt(p, dtype=np.float64, delimiter="\t")
        return a[:, 1:].astype(np.float32), a[:, 0].astype(np.float32)
    base = os.path.join(DATA, "lightgbm-examples", "binary_classification_binary")
    Xtr, ytr = load(base + ".train")
    Xte, yte = load(base + ".test")
    return Xtr, ytr, Xte, yte, ["f%d" % i for i in range(Xtr.shape[1])], "LightGBM example binary.train / binary.test (HIGGS rows), unweighted"


DATASETS = {
    "flights-reg": ("regression", lambda: prep_flights("regression")),
    "flights-late": ("binary", lambda: prep_flights("binary")),
    "taxi-fare": ("regression", prep_taxi),
    "housing": ("regression", prep_housing),
    "higgs": ("binary", prep_higgs),
}


def write_csv(path, X, names, y=None):
    """float32 values with %.9g (round-trips exactly); NaN as empty field."""
    import pandas as pd
    df = pd.DataFrame(X, columns=names)
    if y is not None:
        df.insert(0, "label", y)
    df.to_csv(path, index=False, float_format="%.9g", na_rep="")


# --------------------------------------------------------------------------- params

def params_for(task, trees, leaves, seed=0):
    return dict(task=task, n_estimators=trees, learning_rate=0.1, num_leaves=leaves, max_depth=None,
                max_bin=255, min_samples_leaf=20, min_child_weight=1e-3, reg_lambda=1.0, min_split_gain=0.0,
                subsample=1.0, colsample=1.0, seed=seed)


def samebits_args(P):
    return ["n_estimators=%d" % P["n_estimators"], "learning_rate=%g" % P["learning_rate"],
            "num_leaves=%d" % P["num_leaves"], "growth=leafwise", "max_depth=-1", "max_bin=%d" % P["max_bin"],
            "min_samples_leaf=%d" % P["min_samples_leaf"], "min_child_weight=%g" % P["min_child_weight"],
            "reg_lambda=%g" % P["reg_lambda"], "min_split_gain=%g" % P["min_split_gain"],
            "subsample=%g" % P["subsample"], "colsample=%g" % P["colsample"], "seed=%d" % P["seed"],
            "eval_period=0"]


def make_peer(lib, P, threads):
    binary = P["task"] == "binary"
    if lib == "lightgbm":
        import lightgbm as lgb
        kw = dict(n_estimators=P["n_estimators"], learning_rate=P["learning_rate"], num_leaves=P["num_leaves"],
                  max_depth=-1, max_bin=P["max_bin"], min_child_samples=P["min_samples_leaf"],
                  min_child_weight=P["min_child_weight"], reg_lambda=P["reg_lambda"], reg_alpha=0.0,
                  min_split_gain=P["min_split_gain"], subsample=1.0, subsample_freq=0, colsample_bytree=1.0,
                  random_state=P["seed"], n_jobs=threads, verbose=-1)
        return lgb.LGBMClassifier(**kw) if binary else lgb.LGBMRegressor(**kw)
    if lib == "xgboost":
        import xgboost as xgb
        kw = dict(n_estimators=P["n_estimators"], learning_rate=P["learning_rate"], tree_method="hist",
                  grow_policy="lossguide", max_leaves=P["num_leaves"], max_depth=0, max_bin=P["max_bin"],
                  min_child_weight=P["min_child_weight"], reg_lambda=P["reg_lambda"], reg_alpha=0.0,
                  gamma=P["min_split_gain"], subsample=1.0, colsample_bytree=1.0, random_state=P["seed"],
                  n_jobs=threads, verbosity=0)
        return xgb.XGBClassifier(**kw) if binary else xgb.XGBRegressor(**kw)
    if lib == "sklearn":
        from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
        kw = dict(max_iter=P["n_estimators"], learning_rate=P["learning_rate"], max_leaf_nodes=P["num_leaves"],
                  max_depth=None, max_bins=P["max_bin"], min_samples_leaf=P["min_samples_leaf"],
                  l2_regularization=P["reg_lambda"], early_stopping=False, random_state=P["seed"])
        return HistGradientBoostingClassifier(**kw) if binary else HistGradientBoostingRegressor(**kw)
    raise ValueError(lib)


# --------------------------------------------------------------------------- child runs

def run_child(cmd, env=None):
    """Run cmd (unmeasured); return (wall seconds, stdout, stderr)."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, env=env)
    if p.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr.decode()[-2000:]))
    return time.perf_counter() - t0, p.stdout.decode(), p.stderr.decode()


def run_measured(cmd, env=None):
    """Run cmd as a child under /usr/bin/time: wall clock, its own peak RSS (MB) and CPU seconds.
    (os.wait4 on a child forked from this process would report this process's RSS at fork time:
    Linux carries the high-water mark across fork+exec; /usr/bin/time's own child does not have it.)"""
    fd, tf = tempfile.mkstemp(prefix="sb-bench-time-")
    os.close(fd)
    full = ["/usr/bin/time", "-f", "%M %U %S", "-o", tf] + cmd
    t0 = time.perf_counter()
    p = subprocess.run(full, capture_output=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr.decode()[-3000:]))
    rss_kb, ut, st = open(tf).read().split()[-3:]
    os.remove(tf)
    return wall, int(rss_kb) / 1024.0, float(ut) + float(st), p.stdout.decode(), p.stderr.decode()


def peer_worker(args):
    """Child mode: load float32 arrays, fit a peer, predict, report JSON on stdout."""
    import resource
    d = np.load(os.path.join(args.worker_dir, "data.npz"))
    Xtr, ytr, Xte = d["Xtr"], d["ytr"], d["Xte"]
    P = json.load(open(os.path.join(args.worker_dir, "params.json")))
    model = make_peer(args.worker_lib, P, args.threads)
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    t0 = time.perf_counter()
    model.fit(Xtr, ytr)
    fit_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    pred = model.predict_proba(Xte)[:, 1] if P["task"] == "binary" else model.predict(Xte)
    pred_s = time.perf_counter() - t1
    np.save(os.path.join(args.worker_dir, "pred-%s.npy" % args.worker_lib), np.asarray(pred, dtype=np.float64))
    ntrees = None
    try:
        if args.worker_lib == "lightgbm":
            ntrees = model.booster_.num_trees()
        elif args.worker_lib == "xgboost":
            ntrees = model.get_booster().num_boosted_rounds()
        else:
            ntrees = model.n_iter_
    except Exception:
        pass
    print(json.dumps(dict(fit_s=fit_s, predict_s=pred_s, base_rss_mb=base_rss, ntrees=ntrees)))


def metrics(task, y, pred):
    from sklearn.metrics import log_loss, mean_squared_error, roc_auc_score
    if task == "binary":
        p = np.clip(pred, 1e-15, 1 - 1e-15)
        return {"auc": float(roc_auc_score(y, pred)), "logloss": float(log_loss(y, p, labels=[0, 1]))}
    return {"rmse": float(np.sqrt(mean_squared_error(y, pred)))}


def bench_samebits(wd, P, threads, task, repeat):
    model = os.path.join(wd, "model.sbm")
    predf = os.path.join(wd, "pred-samebits.csv")
    cmd = [SAMEBITS, "train", "--model", "gbdt", "--data", os.path.join(wd, "train.csv"), "--label", "label",
           "--objective", task, "--out", model, "--threads", str(threads)] + samebits_args(P)
    env = dict(os.environ, SAMEBITS_NUM_THREADS=str(threads))
    runs = []
    for _ in range(repeat):
        wall, rss, cpu, out, err = run_measured(cmd, env)
        m_read = re.search(r"read in ([0-9.]+) s", err)
        m_tr = re.search(r"(\d+) trees in ([0-9.]+) s", err)
        m_dig = re.search(r"model digest: ([0-9a-f]+)", out)
        runs.append(dict(wall_s=wall, cpu_s=cpu, rss_mb=rss, read_s=float(m_read.group(1)), boost_s=float(m_tr.group(2)),
                         ntrees=int(m_tr.group(1)), digest=m_dig.group(1) if m_dig else None))
    pcmd = [SAMEBITS, "predict", "--model", model, "--data", os.path.join(wd, "test.csv"), "--out", predf,
            "--threads", str(threads)] + (["--proba"] if task == "binary" else [])
    pwall, prss, _, _, _ = run_measured(pcmd, env)
    pred = np.loadtxt(predf, dtype=np.float64, delimiter=",", ndmin=1)
    best = min(runs, key=lambda r: r["wall_s"])
    digests = sorted(set(r["digest"] for r in runs))
    return dict(train_s=best["wall_s"], read_s=best["read_s"], boost_s=best["boost_s"],
                fit_s=best["wall_s"] - best["read_s"],  # wall minus CSV read: binning + boosting + save
                all_wall_s=[r["wall_s"] for r in runs], rss_mb=max(r["rss_mb"] for r in runs),
                predict_s=pwall, predict_rss_mb=prss, ntrees=best["ntrees"], digest=digests,
                process_cpu_s=best["cpu_s"]), pred


def bench_peer(lib, wd, threads, repeat):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker-lib", lib, "--worker-dir", wd, "--threads", str(threads)]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    if OMP_WAIT_POLICY:
        env["OMP_WAIT_POLICY"] = OMP_WAIT_POLICY
    runs = []
    for _ in range(repeat):
        wall, rss, cpu, out, err = run_measured(cmd, env)
        r = json.loads(out.strip().splitlines()[-1])
        r["rss_mb"] = rss
        r["process_cpu_s"] = cpu
        runs.append(r)
    best = min(runs, key=lambda r: r["fit_s"])
    pred = np.load(os.path.join(wd, "pred-%s.npy" % lib))
    return dict(train_s=best["fit_s"], fit_s=best["fit_s"], all_fit_s=[r["fit_s"] for r in runs],
                rss_mb=max(r["rss_mb"] for r in runs), base_rss_mb=best["base_rss_mb"],
                predict_s=best["predict_s"], ntrees=best["ntrees"], process_cpu_s=best["process_cpu_s"]), pred


def digest_identity(wd, P, task, threads_list=(1, 2), known=None):
    """samebits' model digest when trained with each thread count (known: {threads: digest} already measured)."""
    out = {}
    for t in threads_list:
        if known and t in known:  # the model file the benchmark itself trained with t threads
            _, dout, _ = run_child([SAMEBITS, "digest", known[t]])
            out[str(t)] = dout.strip()
            continue
        model = os.path.join(wd, "model-t%d.sbm" % t)
        cmd = [SAMEBITS, "train", "--model", "gbdt", "--data", os.path.join(wd, "train.csv"), "--label", "label",
               "--objective", task, "--out", model, "--threads", str(t)] + samebits_args(P)
        env = dict(os.environ, SAMEBITS_NUM_THREADS=str(t))
        wall, _, cpu, _, err = run_measured(cmd, env)
        m_tr = re.search(r"(\d+) trees in ([0-9.]+) s", err)
        _, dout, _ = run_child([SAMEBITS, "digest", model])
        out[str(t)] = dout.strip()
        out["train_wall_s_%d_thread" % t] = wall
        out["boost_s_%d_thread" % t] = float(m_tr.group(2))
    return out


# --------------------------------------------------------------------------- report

def versions():
    import lightgbm
    import sklearn
    import xgboost
    sbv = subprocess.run([SAMEBITS, "version"], capture_output=True, text=True).stdout.strip()
    return {"samebits": sbv, "lightgbm": lightgbm.__version__, "xgboost": xgboost.__version__,
            "scikit-learn": sklearn.__version__, "numpy": np.__version__, "python": platform.python_version()}


def write_report(res, path_md, path_json):
    with open(path_json, "w") as f:
        json.dump(res, f, indent=1)
    L = []
    h = res["header"]
    L.append("# GBDT benchmark %s (commit %s)\n" % (h["date"], h["commit_short"]))
    L.append("- commit: `%s`%s" % (h["commit"], " (working tree had uncommitted changes in other files)" if h.get("dirty") else ""))
    L.append("- machine: %s, %d logical CPUs online (%s); **%d threads** for every library" %
             (h["cpu"], h["cpus_online"], h["host"], h["threads"]))
    L.append("- versions: " + ", ".join("%s %s" % kv for kv in h["versions"].items()))
    L.append("- timing: best of %d runs per library; samebits = wall clock of the `train` process (CSV parse + "
             "binning + boosting + save), with the CLI's own split into read and fit; peers = `fit()` only, on a float32 "
             "NumPy array already in memory (includes their binning)" % h["repeat"])
    L.append("- peak RSS: `/usr/bin/time` maximum resident set of each library's own child process (peers: Python + NumPy + library + "
             "the float32 train/test arrays; samebits: the CLI process)")
    L.append("- OpenMP peers run with OMP_WAIT_POLICY=%s; load average at start %s, after each dataset in the JSON"
             % (h["omp_wait_policy"], ", ".join("%.2f" % x for x in h["loadavg_start"])))
    L.append("- metric: computed by the bench script with sklearn.metrics on each library's test predictions")
    L.append("- parameters (all libraries): `%s`" % json.dumps(h["params"]))
    L.append("- command: `%s`\n" % h["command"])
    L.append("## Train time, ratio to LightGBM, peak RSS, held-out metric\n")
    L.append("| dataset | rows train/test | feat | trees x leaves | library | train s | ratio to LightGBM | "
             "samebits read s / fit s | peak RSS MB (peers: + growth during fit) | metric |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for ds in res["datasets"]:
        lgb_t = ds["libs"].get("lightgbm", {}).get("train_s")
        for lib in LIBS:
            r = ds["libs"].get(lib)
            if not r:
                continue
            m = r["metric"]
            ms = ", ".join("%s %.5g" % kv for kv in m.items())
            ratio = "%.2f" % (r["train_s"] / lgb_t) if lgb_t else "-"
            split = "%.2f / %.2f" % (r["read_s"], r["fit_s"]) if lib == "samebits" else ""
            rss = "%.0f" % r["rss_mb"] if lib == "samebits" else "%.0f (+%.0f)" % (r["rss_mb"], r["rss_mb"] - r["base_rss_mb"])
            L.append("| %s | %d / %d | %d | %d x %d | %s | %.2f | %s | %s | %s | %s |" % (
                ds["name"], ds["rows_train"], ds["rows_test"], ds["features"], ds["params"]["n_estimators"],
                ds["params"]["num_leaves"], lib, r["train_s"], ratio, split, rss, ms))
    L.append("\n## samebits accuracy vs the better of LightGBM and XGBoost\n")
    L.append("| dataset | metric | samebits | best peer (LightGBM/XGBoost) | relative difference (+ = samebits worse) | within 1% |")
    L.append("|---|---|---|---|---|---|")
    for ds in res["datasets"]:
        for row in ds["accuracy"]:
            L.append("| %s | %s | %.6g | %.6g (%s) | %+.3f%% | %s |" % (ds["name"], row["metric"], row["samebits"],
                     row["best_peer"], row["best_peer_lib"], 100 * row["rel_diff"], "yes" if row["within_1pct"] else "NO"))
    L.append("\n## samebits fit time without parsing, ratio to LightGBM fit\n")
    L.append("| dataset | samebits read s | samebits fit s (wall - read) | samebits boosting s (CLI) | LightGBM fit s | fit ratio | predict s samebits (process) / LightGBM (in memory) |")
    L.append("|---|---|---|---|---|---|---|")
    for ds in res["datasets"]:
        s, l = ds["libs"].get("samebits"), ds["libs"].get("lightgbm")
        if s and l:
            L.append("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f / %.2f |" % (ds["name"], s["read_s"], s["fit_s"], s["boost_s"],
                     l["fit_s"], s["fit_s"] / l["fit_s"], s["predict_s"], l["predict_s"]))
    if res.get("identity"):
        L.append("\n## samebits model digest by thread count\n")
        for name, d in res["identity"].items():
            dg = {k: v for k, v in d.items() if k.isdigit()}
            same = len(set(dg.values())) == 1
            L.append("- %s: " % name + "; ".join("%s thread(s): `%s`" % kv for kv in dg.items()) +
                     (" — **identical**" if same else " — **DIFFERENT**") +
                     ("; samebits boosting with 1 thread: %.2f s" % d["boost_s_1_thread"] if "boost_s_1_thread" in d else ""))
    L.append("\n## Data\n")
    for ds in res["datasets"]:
        L.append("- %s (%s): %s; features: %s" % (ds["name"], ds["task"], ds["split"], ", ".join(ds["feature_names"])))
    L.append("\nRaw numbers: `%s`." % os.path.basename(path_json))
    with open(path_md, "w") as f:
        f.write("\n".join(L) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--leaves", type=int, default=63)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--libs", nargs="+", default=LIBS, choices=LIBS)
    ap.add_argument("--identity", default="flights-reg,taxi-fare,housing,higgs",
                    help="comma list of datasets on which samebits also trains at 1 thread to compare digests")
    ap.add_argument("--omp-wait", default="passive", choices=["passive", "active", "default"],
                    help="OMP_WAIT_POLICY for the OpenMP peers (default passive: spin-waiting collapses on shared cores)")
    ap.add_argument("--workdir", default="/tmp/samebits-bench")
    ap.add_argument("--no-save", action="store_true", help="print the report instead of writing bench/results/")
    ap.add_argument("--worker-lib", help=argparse.SUPPRESS)
    ap.add_argument("--worker-dir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker_lib:
        return peer_worker(args)
    global OMP_WAIT_POLICY
    OMP_WAIT_POLICY = None if args.omp_wait == "default" else args.omp_wait
    if not os.access(SAMEBITS, os.X_OK):
        sys.exit("build/samebits not found: run make first")

    commit, dirty = git_commit()
    today = datetime.date.today().isoformat()
    header = dict(date=today, commit=commit, commit_short=commit[:7], dirty=dirty, cpu=cpu_model(),
                  cpus_online=os.cpu_count(), host=platform.platform(), threads=args.threads, repeat=args.repeat,
                  omp_wait_policy=args.omp_wait, loadavg_start=os.getloadavg(),
                  versions=versions(), command="python3 bench/gbdt_bench.py " + " ".join(sys.argv[1:]),
                  params=dict(params_for("<task>", args.trees, args.leaves),
                              matched={"lightgbm": "n_estimators, learning_rate, num_leaves, max_depth=-1, max_bin, "
                                                   "min_child_samples, min_child_weight, reg_lambda, min_split_gain, no bagging",
                                       "xgboost": "tree_method=hist, grow_policy=lossguide, max_leaves, max_depth=0, "
                                                  "max_bin, min_child_weight, reg_lambda, gamma; no min-samples-per-leaf",
                                       "sklearn": "max_iter, learning_rate, max_leaf_nodes, max_depth=None, max_bins, "
                                                  "min_samples_leaf, l2_regularization, early_stopping=False; "
                                                  "min_hessian_to_split fixed at 1e-3 internally",
                                       "samebits": " ".join(samebits_args(params_for("<task>", args.trees, args.leaves)))}))
    res = dict(header=header, datasets=[], identity={})
    os.makedirs(args.workdir, exist_ok=True)
    for name in args.datasets:
        task, prep = DATASETS[name]
        wd = os.path.join(args.workdir, name)
        os.makedirs(wd, exist_ok=True)
        t0 = time.perf_counter()
        Xtr, ytr, Xte, yte, names, split = prep()
        P = params_for(task, args.trees, args.leaves)
        np.savez(os.path.join(wd, "data.npz"), Xtr=Xtr, ytr=ytr, Xte=Xte)
        json.dump(P, open(os.path.join(wd, "params.json"), "w"))
        write_csv(os.path.join(wd, "train.csv"), Xtr, names, ytr)
        write_csv(os.path.join(wd, "test.csv"), Xte, names)
        print("[%s] %s: %d train / %d test rows x %d features, prepared in %.1f s" %
              (name, task, len(ytr), len(yte), Xtr.shape[1], time.perf_counter() - t0), flush=True)
        ds = dict(name=name, task=task, rows_train=int(len(ytr)), rows_test=int(len(yte)), features=int(Xtr.shape[1]),
                  feature_names=names, split=split, params=P, libs={})
        for lib in args.libs:
            try:
                if lib == "samebits":
                    r, pred = bench_samebits(wd, P, args.threads, task, args.repeat)
                else:
                    r, pred = bench_peer(lib, wd, args.threads, args.repeat)
            except Exception as e:  # keep the other libraries' numbers
                print("[%s] %s FAILED: %s" % (name, lib, e), flush=True)
                ds["libs"][lib] = None
                continue
            r["metric"] = metrics(task, yte, pred)
            ds["libs"][lib] = r
            print("[%s] %-8s train %.2f s  rss %.0f MB  %s" % (name, lib, r["train_s"], r["rss_mb"], r["metric"]), flush=True)
        ds["libs"] = {k: v for k, v in ds["libs"].items() if v}
        ds["loadavg_after"] = os.getloadavg()
        acc = []
        sb = ds["libs"].get("samebits")
        peers = [l for l in ("lightgbm", "xgboost") if l in ds["libs"]]
        if sb and peers:
            for m, higher_better in (("rmse", False), ("auc", True), ("logloss", False)):
                if m not in sb["metric"]:
                    continue
                vals = {l: ds["libs"][l]["metric"][m] for l in peers}
                best_lib = (max if higher_better else min)(vals, key=vals.get)
                bp, sv = vals[best_lib], sb["metric"][m]
                rel = (bp - sv) / bp if higher_better else (sv - bp) / bp
                acc.append(dict(metric=m, samebits=sv, best_peer=bp, best_peer_lib=best_lib, rel_diff=rel,
                                within_1pct=rel <= 0.01))
        ds["accuracy"] = acc
        if name in args.identity.split(",") and "samebits" in args.libs:
            known = {args.threads: os.path.join(wd, "model.sbm")} if ds["libs"].get("samebits") else None
            res["identity"][name] = digest_identity(wd, P, task, (1, args.threads), known)
            print("[%s] digests by threads: %s" % (name, res["identity"][name]), flush=True)
        res["datasets"].append(ds)
    outdir = os.path.join(REPO, "bench", "results")
    base = "gbdt-%s-%s" % (today, commit[:7])
    if args.no_save:
        outdir = args.workdir
    os.makedirs(outdir, exist_ok=True)
    write_report(res, os.path.join(outdir, base + ".md"), os.path.join(outdir, base + ".json"))
    print(open(os.path.join(outdir, base + ".md")).read())


if __name__ == "__main__":
    main()
