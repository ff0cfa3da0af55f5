#!/usr/bin/env python3
"""Gradient boosting on the GPU: samebits device=cuda against samebits' own CPU
path and LightGBM on the GPU machine's cores, in one run (tools/device-gbdt.sh
runs it on the lent H200).

    SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python \
        python3 bench/gpu_bench.py --data DIR --out OUT.json [--trees 500] [--cpu-trees 50]

Workloads (real rows only):
  flights-3m   the flights file's first 80% of rows (date order, 2.4M rows, 7
               features), the same split as bench/gbdt_bench.py, test = last 20%.
  flights-10m  those training rows tiled 5 times (12M rows) in an order drawn
               by a counter-based generator (NumPy's Philox, key 20261130);
               the test rows as above.
  higgs-10m    the LightGBM example's HIGGS rows (7,000 x 28, binary) tiled to
               10,010,000 rows in a Philox-drawn order: the issue's 10M x 28 shape
               (real rows, heavily repeated; for time, not for quality).
  fashion      Fashion-MNIST 60,000 x 784 (wide data), test 10,000, multiclass.
Parameters: depth-wise growth, max_depth 8, 255 bins, learning rate 0.1,
min_samples_leaf 20; LightGBM gets num_leaves 255 with max_depth 8.

What is measured, per workload and library: fit wall time with N trees and with
a few trees; the time per tree is the difference over the tree difference, so
reading, binning and the transfer to the GPU are not in it (they are reported
apart as the few-tree fit). Identity: the CUDA-trained model's digest against
the CPU-trained model's with the same parameters (same number of trees), and
the digests of their test predictions. Peak GPU memory from nvidia-smi, polled.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def load_flights(data):
    import gbdt_bench
    gbdt_bench.DATA = data
    Xtr, ytr, Xte, yte, names, _ = gbdt_bench.prep_flights("regression")
    return Xtr, ytr, Xte, yte


def load_higgs(data, key=20261130):
    def load(p):
        a = np.loadtxt(p, dtype=np.float64, delimiter="\t")
        return a[:, 1:].astype(np.float32), a[:, 0].astype(np.float32)
    base = os.path.join(data, "lightgbm-examples", "binary_classification_binary")
    Xtr, ytr = load(base + ".train")
    Xte, yte = load(base + ".test")
    reps = 1430  # 7,000 x 1,430 = 10,010,000 rows
    order = np.random.Generator(np.random.Philox(key=key)).permutation(len(ytr) * reps)
    return (np.ascontiguousarray(np.tile(Xtr, (reps, 1))[order]), np.ascontiguousarray(np.tile(ytr, reps)[order]),
            Xte, yte)


def load_fashion(data):
    import gzip

    def idx(path):
        with gzip.open(path, "rb") as f:
            raw = f.read()
        ndim = raw[3]
        dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
        a = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
        return a.reshape(dims)
    d = os.path.join(data, "fashion-mnist")
    Xtr = idx(os.path.join(d, "train-images-idx3-ubyte.gz")).reshape(60000, -1).astype(np.float32)
    ytr = idx(os.path.join(d, "train-labels-idx1-ubyte.gz")).astype(np.float32)
    Xte = idx(os.path.join(d, "t10k-images-idx3-ubyte.gz")).reshape(10000, -1).astype(np.float32)
    yte = idx(os.path.join(d, "t10k-labels-idx1-ubyte.gz")).astype(np.float32)
    return Xtr, ytr, Xte, yte


class GpuMemPoll:
    """Peak memory.used of GPU 0 (MiB) from nvidia-smi, every 50 ms."""

    def __init__(self):
        self.peak = 0
        self.base = self._now()
        self._stop = False
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    @staticmethod
    def _now():
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", "0"],
                                 capture_output=True, text=True, timeout=5).stdout
            return int(out.strip().splitlines()[0])
        except Exception:
            return -1

    def _run(self):
        while not self._stop:
            self.peak = max(self.peak, self._now())
            time.sleep(0.05)

    def stop(self):
        self._stop = True
        self._t.join()
        return self.peak - self.base


def sb_fit(X, y, Xte, objective, trees, device, threads, nclass=None):
    import samebits
    samebits.set_num_threads(threads)
    kw = dict(n_estimators=trees, learning_rate=0.1, growth="depthwise", max_depth=8, max_bin=255,
              min_samples_leaf=20, device=device)
    est = (samebits.GradientBoostingClassifier(**kw) if objective != "regression"
           else samebits.GradientBoostingRegressor(**kw))
    t0 = time.perf_counter()
    est.fit(X, y)
    t = time.perf_counter() - t0
    raw = est.predict(Xte) if objective == "regression" else est.predict_proba(Xte)
    pred = np.ascontiguousarray(raw, dtype=np.float32)
    return t, est.digest(), hashlib.sha256(pred.tobytes()).hexdigest(), pred


def lgb_fit(X, y, objective, trees, threads, nclass=None):
    import lightgbm as lgb
    params = dict(objective=objective, learning_rate=0.1, num_leaves=255, max_depth=8, max_bin=255,
                  min_data_in_leaf=20, num_threads=threads, verbose=-1, deterministic=True, force_row_wise=True)
    if nclass:
        params["num_class"] = nclass
    ds = lgb.Dataset(X, y, params={"max_bin": 255, "verbose": -1})
    t0 = time.perf_counter()
    lgb.train(params, ds, num_boost_round=trees)
    return time.perf_counter() - t0


def per_tree(t_many, n_many, t_few, n_few):
    return (t_many - t_few) / (n_many - n_few) * 1000.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--trees", type=int, default=500)
    ap.add_argument("--few", type=int, default=10)
    ap.add_argument("--cpu-trees", type=int, default=50)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--device", default="cuda", help="cpu-batched: a dry run of this script where no GPU is")
    ap.add_argument("--max-rows", type=int, default=0, help="dry runs: keep the first N training rows")
    ap.add_argument("--workloads", nargs="*", default=["flights-3m", "flights-10m", "higgs-10m", "fashion"])
    a = ap.parse_args()
    if a.trees <= a.few or a.cpu_trees <= a.few:
        ap.error("--trees and --cpu-trees must exceed --few (%d): time per tree is a difference" % a.few)
    res = {"threads": a.threads, "trees": a.trees, "few": a.few, "cpu_trees": a.cpu_trees, "workloads": {}}
    try:
        import lightgbm
        res["lightgbm"] = lightgbm.__version__
    except Exception as e:  # noqa: BLE001
        res["lightgbm"] = "absent: %s" % e
    for w in a.workloads:
        print("== %s" % w, flush=True)
        if w.startswith("flights"):
            Xtr, ytr, Xte, yte = load_flights(a.data)
            objective, nclass = "regression", None
            if w == "flights-10m":
                rng = np.random.Generator(np.random.Philox(key=20261130))
                order = rng.permutation(len(ytr) * 5)
                Xtr = np.ascontiguousarray(np.tile(Xtr, (5, 1))[order])
                ytr = np.ascontiguousarray(np.tile(ytr, 5)[order])
        elif w == "higgs-10m":
            Xtr, ytr, Xte, yte = load_higgs(a.data)
            objective, nclass = "binary", None
        else:
            Xtr, ytr, Xte, yte = load_fashion(a.data)
            objective, nclass = "multiclass", 10
        if a.max_rows:
            Xtr, ytr = np.ascontiguousarray(Xtr[:a.max_rows]), np.ascontiguousarray(ytr[:a.max_rows])
        r = {"rows": int(Xtr.shape[0]), "features": int(Xtr.shape[1]), "device": a.device}
        trees = a.trees if w != "fashion" else max(a.few + 10, a.trees // 10)
        cpu_trees = a.cpu_trees if w != "fashion" else max(a.few + 2, a.cpu_trees // 5)
        # GPU: few trees (setup cost), then many, then the identity run.
        poll = GpuMemPoll()
        sb_fit(Xtr[:1000], ytr[:1000], Xte[:10], objective, 1, a.device, a.threads)  # warm-up: the CUDA context
        tf, _, _, _ = sb_fit(Xtr, ytr, Xte, objective, a.few, a.device, a.threads)
        tm, dig_many, _, _ = sb_fit(Xtr, ytr, Xte, objective, trees, a.device, a.threads)
        peak = poll.stop()
        r["cuda"] = {"fit_s_few": tf, "fit_s": tm, "trees": trees, "ms_per_tree": per_tree(tm, trees, tf, a.few),
                     "peak_gpu_mib": peak, "peak_gpu_mib_per_mrows": peak / (Xtr.shape[0] / 1e6),
                     "model_digest": dig_many}
        print(json.dumps(r["cuda"]), flush=True)
        # Identity on real data: cpu_trees trees on both devices.
        tg, dg, pg, predg = sb_fit(Xtr, ytr, Xte, objective, cpu_trees, a.device, a.threads)
        tc, dc, pc, predc = sb_fit(Xtr, ytr, Xte, objective, cpu_trees, "cpu", a.threads)
        tcf, _, _, _ = sb_fit(Xtr, ytr, Xte, objective, a.few, "cpu", a.threads)
        r["identity"] = {"trees": cpu_trees, "cuda_model_digest": dg, "cpu_model_digest": dc,
                         "cuda_pred_digest": pg, "cpu_pred_digest": pc,
                         "model_identical": dg == dc, "pred_identical": pg == pc}
        r["cpu"] = {"fit_s_few": tcf, "fit_s": tc, "trees": cpu_trees,
                    "ms_per_tree": per_tree(tc, cpu_trees, tcf, a.few)}
        if objective == "regression":
            r["test_rmse_cpu_trees"] = float(np.sqrt(np.mean((predc.astype(np.float64) - yte) ** 2)))
        else:
            r["test_accuracy_cpu_trees"] = float(np.mean(np.argmax(predc, axis=1) == yte))
        print(json.dumps(r["identity"]), json.dumps(r["cpu"]), flush=True)
        if not res["lightgbm"].startswith("absent"):
            lf = lgb_fit(Xtr, ytr, objective, a.few, a.threads, nclass)
            lm = lgb_fit(Xtr, ytr, objective, cpu_trees, a.threads, nclass)
            r["lightgbm"] = {"fit_s_few": lf, "fit_s": lm, "trees": cpu_trees,
                             "ms_per_tree": per_tree(lm, cpu_trees, lf, a.few)}
            print(json.dumps(r["lightgbm"]), flush=True)
        c = r["cuda"]["ms_per_tree"]
        r["ratio_cpu_over_cuda"] = r["cpu"]["ms_per_tree"] / c if c > 0 else None
        if "lightgbm" in r:
            r["ratio_lightgbm_over_cuda"] = r["lightgbm"]["ms_per_tree"] / c if c > 0 else None
        res["workloads"][w] = r
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
