#!/usr/bin/env python3
"""Issue 21's boosting features beside LightGBM's: held-out quality, the same
parameters, five seeds (each seed a random 80/20 split and both libraries'
seed).

    python3 bench/gbdt_features_bench.py [--seeds 5] [--threads 2] [--no-save]

Data: California housing (../shared/data/california-housing.csv; the eight
numeric columns, the label median_house_value / 100,000; the text column
ocean_proximity left out). Every run: 200 rounds, learning rate 0.1, 31 leaves,
20 rows a leaf, 255 bins. Cases:

  plain              no feature: the reference line
  dart               boosting=dart, drop_rate 0.1, skip_drop 0.5, max_drop 50 (LightGBM's defaults)
  dart-xgboost       the same with xgboost_dart_mode
  monotone           monotone_constraints +1 on median_income, -1 on housing_median_age
                     (LightGBM's basic method); the report also counts held-out sweeps
                     that break the constraint
  interaction        interaction_constraints [[0, 1], [2, 3, 4, 5, 6], [7]] (location,
                     size, income apart)
  bynode             feature_fraction_bynode 0.5

Both libraries run in this process on the same cores with the same thread
count; RMSE is computed here with the same code for both. Quality only: no time
from this script is a speed claim. Results: bench/results/gbdt-features-DATE-COMMIT.{md,json}.
"""
import argparse
import datetime
import json
import os
import platform
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import samebits  # noqa: E402
from _common import git_commit  # noqa: E402

DATA = os.path.join(ROOT, "..", "shared", "data", "california-housing.csv")
COLS = ["longitude", "latitude", "housing_median_age", "total_rooms", "total_bedrooms", "population",
        "households", "median_income"]
BASE = dict(n_estimators=200, learning_rate=0.1, num_leaves=31, min_samples_leaf=20, max_bin=255)
MONO = [0, 0, -1, 0, 0, 0, 0, 1]
SETS = [[0, 1], [2, 3, 4, 5, 6], [7]]
CASES = {
    "plain": ({}, {}),
    "dart": (dict(boosting_type="dart", drop_rate=0.1, skip_drop=0.5, max_drop=50),
             dict(boosting="dart", drop_rate=0.1, skip_drop=0.5, max_drop=50)),
    "dart-xgboost": (dict(boosting_type="dart", drop_rate=0.1, skip_drop=0.5, max_drop=50, xgboost_dart_mode=True),
                     dict(boosting="dart", drop_rate=0.1, skip_drop=0.5, max_drop=50, xgboost_dart_mode=True)),
    "monotone": (dict(monotone_constraints=MONO), dict(monotone_constraints=MONO, monotone_constraints_method="basic")),
    "interaction": (dict(interaction_constraints=SETS), dict(interaction_constraints=SETS)),
    "bynode": (dict(colsample_bynode=0.5), dict(feature_fraction_bynode=0.5)),
}


def load():
    import csv
    with open(DATA, newline="") as f:
        rows = list(csv.DictReader(f))
    X = np.array([[float(r[c]) if r[c] != "" else np.nan for c in COLS] for r in rows], dtype=np.float32)
    y = np.array([float(r["median_house_value"]) / 1e5 for r in rows], dtype=np.float32)
    return X, y


def violations(predict, X):
    """Held-out sweeps (40 rows, 50 grid points over each constrained feature's
    range) whose prediction moves against the constraint."""
    bad = 0
    for f, d in ((7, 1), (2, -1)):
        g = np.linspace(np.nanmin(X[:, f]), np.nanmax(X[:, f]), 50, dtype=np.float32)
        for row in X[:40]:
            Z = np.tile(row, (50, 1))
            Z[:, f] = g
            p = np.asarray(predict(Z), dtype=np.float64)
            bad += int(np.any(np.diff(p) * d < 0))
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    import lightgbm as lgb
    X, y = load()
    os.environ["SAMEBITS_NUM_THREADS"] = str(a.threads)
    out = {}
    for name, (skw, lkw) in CASES.items():
        rs, rl, vs, vl = [], [], 0, 0
        for seed in range(a.seeds):
            idx = np.random.default_rng(seed).permutation(len(y))
            tr, te = idx[: int(0.8 * len(y))], idx[int(0.8 * len(y)):]
            m = samebits.GradientBoostingRegressor(random_state=seed, **BASE, **skw).fit(X[tr], y[tr])
            p = np.asarray(m.predict(X[te]), dtype=np.float64)
            rs.append(float(np.sqrt(np.mean((p - y[te]) ** 2))))
            params = dict(objective="regression", num_leaves=31, min_data_in_leaf=20, max_bin=255,
                          learning_rate=0.1, seed=seed, num_threads=a.threads, verbose=-1, **lkw)
            b = lgb.train(params, lgb.Dataset(X[tr], y[tr]), num_boost_round=200)
            q = b.predict(X[te])
            rl.append(float(np.sqrt(np.mean((q - y[te]) ** 2))))
            if name == "monotone":
                vs += violations(m.predict, X[te])
                vl += violations(b.predict, X[te])
        out[name] = {"samebits_rmse": rs, "lightgbm_rmse": rl,
                     "ratio_of_means": float(np.mean(rs) / np.mean(rl))}
        if name == "monotone":
            out[name].update(samebits_violating_sweeps=vs, lightgbm_violating_sweeps=vl, sweeps=80 * a.seeds)
        print(name, "samebits %.4f lightgbm %.4f ratio %.3f" % (np.mean(rs), np.mean(rl), np.mean(rs) / np.mean(rl)),
              flush=True)
    commit = git_commit(short=7)[0]
    date = datetime.date.today().isoformat()
    meta = {"commit": commit, "date": date, "machine": "%s, %d cores" % (platform.processor() or platform.machine(),
                                                                          os.cpu_count()),
            "threads": a.threads, "seeds": a.seeds, "lightgbm": lgb.__version__, "samebits": samebits.__version__,
            "data": "california-housing.csv, 8 numeric columns, label / 1e5, random 80/20 split per seed",
            "params": BASE}
    lines = ["# Boosting features beside LightGBM (issue 21): held-out RMSE", "",
             "`python3 bench/gbdt_features_bench.py --seeds %d --threads %d` at `%s`, %s; %s; LightGBM %s. %s; "
             "parameters %s. Quality only, no timing." % (a.seeds, a.threads, commit, date, meta["machine"],
                                                          lgb.__version__, meta["data"], json.dumps(BASE)), "",
             "| case | samebits RMSE (mean of %d seeds) | LightGBM RMSE | ratio | per seed (samebits / LightGBM) |"
             % a.seeds, "| --- | --- | --- | --- | --- |"]
    for name, r in out.items():
        per = ", ".join("%.4f/%.4f" % (s, l) for s, l in zip(r["samebits_rmse"], r["lightgbm_rmse"]))
        lines.append("| %s | %.4f | %.4f | %.3f | %s |" % (name, np.mean(r["samebits_rmse"]),
                                                            np.mean(r["lightgbm_rmse"]), r["ratio_of_means"], per))
    mono = out["monotone"]
    lines += ["", "Monotone sweeps that move against a constraint (40 held-out rows x 2 features x %d seeds): "
              "samebits %d of %d, LightGBM %d of %d." % (a.seeds, mono["samebits_violating_sweeps"], mono["sweeps"],
                                                          mono["lightgbm_violating_sweeps"], mono["sweeps"]), ""]
    text = "\n".join(lines)
    print(text)
    if not a.no_save:
        base = os.path.join(ROOT, "bench", "results", "gbdt-features-%s-%s" % (date, commit))
        with open(base + ".md", "w") as f:
            f.write(text)
        with open(base + ".json", "w") as f:
            json.dump({"meta": meta, "cases": out}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
