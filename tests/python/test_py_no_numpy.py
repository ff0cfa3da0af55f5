"""The package without NumPy (and without scikit-learn or pandas): fit and
predict from lists, array.array and memoryview; results are samebits.Array."""
import json

from conftest import make_data

CODE = r'''
import sys
for name in ("numpy", "sklearn", "pandas", "scipy"):
    sys.modules[name] = None  # any import of these now raises ImportError
import array, json, pickle
try:
    import numpy
    raise SystemExit("numpy still importable")
except ImportError:
    pass
import samebits
X, y = json.loads(sys.stdin.read())
X = [[float("nan") if v is None else v for v in r] for r in X]
reg = samebits.GradientBoostingRegressor(n_estimators=10, min_samples_leaf=5)
reg.fit(X, y)
p = reg.predict(X)
assert isinstance(p, samebits.Array) and len(p) == len(X) and p.shape == (len(X),)
assert isinstance(p[0], float) and p.tolist()[:3] == [p[0], p[1], p[2]]
flat = array.array("f", [v for r in X for v in r])
mv = memoryview(flat).cast("B").cast("f", [len(X), len(X[0])])
reg2 = samebits.GradientBoostingRegressor(n_estimators=10, min_samples_leaf=5).fit(mv, array.array("f", y))
assert reg2.model_digest_ == reg.model_digest_
assert reg2.predict(mv).tobytes() == p.tobytes()
d64 = array.array("d", [v for r in X for v in r])
mv64 = memoryview(d64).cast("B").cast("d", [len(X), len(X[0])])
assert samebits.GradientBoostingRegressor(n_estimators=10, min_samples_leaf=5).fit(mv64, y).model_digest_ \
    == reg.model_digest_
labels = ["pos" if v > 1.0 else "neg" for v in y]
clf = samebits.GradientBoostingClassifier(n_estimators=10, min_samples_leaf=5).fit(X, labels)
pred = clf.predict(X)
assert isinstance(pred, list) and set(pred) <= {"pos", "neg"} and clf.classes_ == ["neg", "pos"]
proba = clf.predict_proba(X)
assert proba.shape == (len(X), 2) and len(proba[0]) == 2
assert pickle.loads(pickle.dumps(clf)).predict_proba(X) == proba
fi = reg.feature_importances_
assert len(fi) == 4 and isinstance(fi, samebits.Array)
assert clf.score(X, labels) > 0.8 and reg.score(X, y) > 0.5
assert "numpy" not in sys.modules or sys.modules["numpy"] is None
print(json.dumps({"digest": reg.model_digest_, "pred": p.tobytes().hex()}))
'''


def test_fit_predict_without_numpy():
    import samebits
    X, y = make_data(300, "regression", seed=4)
    payload = json.dumps([[[None if v != v else v for v in r] for r in X], y]).encode()
    r = run_python_stdin(CODE, payload)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    ref = samebits.GradientBoostingRegressor(n_estimators=10, min_samples_leaf=5).fit(X, y)
    assert out["digest"] == ref.model_digest_
    assert out["pred"] == ref.predict(X).tobytes().hex()


def run_python_stdin(code, data):
    import os
    import subprocess
    import sys
    from conftest import PYDIR, ROOT
    env = dict(os.environ)
    env.pop("SAMEBITS_NUMERIC_MODE", None)
    env["PYTHONPATH"] = str(PYDIR)
    return subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, env=env,
                          cwd=str(ROOT), timeout=300)
