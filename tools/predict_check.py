#!/usr/bin/env python3
"""GPU prediction against CPU prediction, byte for byte (run by tools/device-h200.sh).

    SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python python3 tools/predict_check.py [DEVICE]

For a regression, a binary, a 5-class and a lambdarank model trained on the CPU
(counter-rng data with NaN, ties and a constant column), and for forests, every
prediction kind (raw, proba, value) is computed on the CPU and on DEVICE (cuda,
the default, or opencl), and the bytes compared.
Prints one line per case and "predict-check DEVICE: PASS" or "FAIL"; exit 0 or 1.
"""
import hashlib
import sys

import numpy as np
import samebits

PREDICT_RAW, PREDICT_PROBA, PREDICT_VALUE = 0, 1, 2


def data(n, seed):
    g = np.random.Generator(np.random.Philox(key=seed))
    X = g.standard_normal((n, 6)).astype(np.float32)
    X[:, 2] = np.round(X[:, 2] * 3)        # ties
    X[:, 5] = 1.0                          # constant
    X[g.random((n, 6)) < 0.05] = np.nan    # missing values
    return X


def main():
    device = sys.argv[1] if len(sys.argv) > 1 else "cuda"
    X = data(20000, 7)
    Xt = data(7000, 8)
    fails = 0
    cases = [
        ("regression", samebits.GradientBoostingRegressor, np.nan_to_num(X[:, 0]) * 2 + np.nan_to_num(X[:, 1]), 1),
        ("binary", samebits.GradientBoostingClassifier, (np.nan_to_num(X[:, 0]) > 0).astype(np.float32), 2),
        ("multiclass", samebits.GradientBoostingClassifier, (np.abs(np.nan_to_num(X[:, 2])) % 5).astype(np.float32), 5),
        ("lambdarank", samebits.GradientBoostingRanker, np.clip(np.nan_to_num(X[:, 0]) + 2, 0, 4).astype(np.int32), 1),
    ]
    for name, cls, y, k in cases:
        est = cls(n_estimators=30, num_leaves=31, learning_rate=0.2)
        if name == "lambdarank":  # queries of 20 rows
            est.fit(X, y.astype(np.float32), group=[20] * (len(X) // 20))
        else:
            est.fit(X, y.astype(np.float32))
        m = est._model
        d = est._predict_data(Xt)
        kinds = [("raw", PREDICT_RAW, 1 if k <= 2 else k), ("value", PREDICT_VALUE, 1)]
        if name == "lambdarank":
            kinds = kinds[:1]
        if k >= 2:
            kinds.append(("proba", PREDICT_PROBA, 1 if k == 2 else k))
        for kname, kind, ncols in kinds:
            a = bytes(memoryview(m.predict(d, kind, ncols)).cast("B"))
            try:
                b = bytes(memoryview(m.predict(d, kind, ncols, device=device)).cast("B"))
            except samebits.SameBitsError as e:  # a refusal is not a pass
                print("predict-check %s: %s %s: REFUSED %s" % (device, name, kname, e))
                fails += 1
                continue
            same = a == b
            fails += not same
            print("predict-check %s: %s %s: %s (%d bytes, sha256 %s)" % (
                device, name, kname, "identical" if same else "DIFFERS", len(a), hashlib.sha256(a).hexdigest()[:16]))
    # forests (inference_engine="parallel" is device=cuda prediction)
    yc = (np.nan_to_num(X[:, 0]) > 0).astype(np.float32)
    forests = [("random-forest", samebits.RandomForestClassifier(n_estimators=20, random_state=1).fit(X, yc),
                [("proba", PREDICT_PROBA, 2), ("value", PREDICT_VALUE, 1)]),
               ("extra-trees", samebits.ExtraTreesRegressor(n_estimators=20, random_state=1).fit(
                   X, np.nan_to_num(X[:, 1]).astype(np.float32)), [("value", PREDICT_VALUE, 1)]),
               ("isolation-forest", samebits.IsolationForest(n_estimators=50, random_state=1).fit(X),
                [("raw", PREDICT_RAW, 1), ("value", PREDICT_VALUE, 1)])]
    for name, est, kinds in forests:
        d = est._predict_data(Xt)
        for kname, kind, ncols in kinds:
            a = bytes(memoryview(est._model.predict(d, kind, ncols)).cast("B"))
            try:
                b = bytes(memoryview(est._model.predict(d, kind, ncols, device=device)).cast("B"))
            except samebits.SameBitsError as e:
                print("predict-check %s: %s %s: REFUSED %s" % (device, name, kname, e))
                fails += 1
                continue
            fails += a != b
            print("predict-check %s: %s %s: %s (%d bytes, sha256 %s)" % (
                device, name, kname, "identical" if a == b else "DIFFERS", len(a), hashlib.sha256(a).hexdigest()[:16]))
    print("predict-check %s: %s" % (device, "PASS" if fails == 0 else "FAIL"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
