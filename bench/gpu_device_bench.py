#!/usr/bin/env python3
"""Gradient boosting on one GPU through both backends of the device layer,
beside XGBoost on the same GPU, in one run (tools/device-h200.sh runs it on the
lent H200): samebits device=cuda and device=opencl compile the same entry
kernels (src/kernels/entry/tree_entry.h) and run the same host schedule
(src/models/trees/tdev_gpu.c), so the issue's promise is that neither is slower.

    SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python \\
        python3 bench/gpu_device_bench.py --data DIR --out OUT.json [--trees 60] [--few 10]

Workload (real rows only): higgs-10m, the LightGBM example's HIGGS rows (7,000 x
28, binary) tiled to 10,010,000 rows in a Philox-drawn order (bench/gpu_bench.py's
loader): the issue's 10M x 28 shape. Parameters on every side: depth-wise,
max_depth 8, 255 bins (XGBoost: max_bin 256, its count includes no missing bin),
learning rate 0.1, logistic loss.

What is measured: the fit's wall time with N trees and with a few (the fastest
of --repeat fits of each, against the noise of a shared host); the time per
tree is the difference over the tree difference, so reading, binning and the
copy to the GPU are not in it. XGBoost (device="cuda", tree_method hist) builds
its QuantileDMatrix once, outside the timings, and is timed the same way.
Identity: the model digests of device=cuda and device=opencl at N trees must be
equal (and the predictions' digests). Every figure is reported per seed of the
row order where a seed is given (--seeds).
"""
import argparse
import hashlib
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


from gpu_bench import load_higgs  # noqa: E402  (the same tiled HIGGS rows, the row order by key)


def sb_fit(X, y, Xte, trees, device):
    import samebits
    est = samebits.GradientBoostingClassifier(n_estimators=trees, learning_rate=0.1, growth="depthwise", max_depth=8,
                                              max_bin=255, min_samples_leaf=20, device=device)
    t0 = time.perf_counter()
    est.fit(X, y)
    t = time.perf_counter() - t0
    pred = np.ascontiguousarray(est.predict_proba(Xte), dtype=np.float32)
    return t, est.digest(), hashlib.sha256(pred.tobytes()).hexdigest()


def xgb_times(X, y, few, many, repeat=1):
    import xgboost as xgb
    t0 = time.perf_counter()
    dm = xgb.QuantileDMatrix(X, y, max_bin=256)
    t_dm = time.perf_counter() - t0
    params = dict(objective="binary:logistic", device="cuda", tree_method="hist", max_depth=8, max_bin=256, eta=0.1,
                  min_child_weight=1.0)
    xgb.train(params, dm, num_boost_round=2)  # warm-up: the CUDA context and kernels
    out = {"version": xgb.__version__, "quantile_dmatrix_s": t_dm}
    for n in (few, many):
        ts = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            xgb.train(params, dm, num_boost_round=n)
            ts.append(time.perf_counter() - t0)
        out["fit_s_%d" % n] = min(ts)
        out["fit_s_%d_all" % n] = ts
    out["ms_per_tree"] = (out["fit_s_%d" % many] - out["fit_s_%d" % few]) / (many - few) * 1000.0
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--trees", type=int, default=60)
    ap.add_argument("--few", type=int, default=10)
    ap.add_argument("--seeds", type=int, nargs="*", default=[20261130])
    ap.add_argument("--devices", nargs="*", default=["cuda", "opencl"])
    ap.add_argument("--no-xgboost", action="store_true")
    ap.add_argument("--repeat", type=int, default=1, help="fits of each size; the fastest counts (noise on shared hosts)")
    a = ap.parse_args()
    res = {"workload": "higgs-10m", "trees": a.trees, "few": a.few, "repeat": a.repeat, "params": "depthwise max_depth=8 max_bin=255 "
           "learning_rate=0.1 min_samples_leaf=20 binary", "runs": []}
    for key in a.seeds:
        X, y, Xte, _ = load_higgs(a.data, key)
        run = {"seed": key, "rows": int(X.shape[0]), "features": int(X.shape[1])}
        for dev in a.devices:
            sb_fit(X[:2000], y[:2000], Xte[:10], 1, dev)  # warm-up: context, program build
            few = [sb_fit(X, y, Xte, a.few, dev) for _ in range(a.repeat)]
            many = [sb_fit(X, y, Xte, a.trees, dev) for _ in range(a.repeat)]
            tf, tm = min(f[0] for f in few), min(m[0] for m in many)
            dig, pdig = many[0][1], many[0][2]
            assert all(m[1] == dig and m[2] == pdig for m in many), "a repeat gave other bytes"
            run[dev] = {"fit_s_few": tf, "fit_s": tm, "fit_s_few_all": [f[0] for f in few],
                        "fit_s_all": [m[0] for m in many], "ms_per_tree": (tm - tf) / (a.trees - a.few) * 1000.0,
                        "model_digest": dig, "pred_digest": pdig}
            print(dev, json.dumps(run[dev]), flush=True)
        if len(a.devices) > 1:
            d0 = run[a.devices[0]]
            run["identical"] = all(run[d]["model_digest"] == d0["model_digest"] and
                                   run[d]["pred_digest"] == d0["pred_digest"] for d in a.devices)
        if not a.no_xgboost:
            try:
                run["xgboost"] = xgb_times(X, y, a.few, a.trees, a.repeat)
            except Exception as e:  # absent wheel: say so, never a number
                run["xgboost"] = {"absent": str(e)}
            print("xgboost", json.dumps(run["xgboost"]), flush=True)
        if "cuda" in run and "opencl" in run:
            run["cuda_over_opencl"] = run["cuda"]["ms_per_tree"] / run["opencl"]["ms_per_tree"]
        res["runs"].append(run)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
