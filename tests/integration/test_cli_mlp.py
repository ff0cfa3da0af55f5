"""The multi-layer perceptrons from the command line (docs/mlp.md, "Command
line"): train --model mlp writes the model file, predict writes class codes or
values (--proba: probabilities); the same bits as Python at any thread count;
hostile input refused by name."""

import pytest

from conftest import ROOT, samebits

np = pytest.importorskip("numpy")


def _csv(path, n=120, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-2, 2, (n, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 0] - X[:, 2] > 1).astype(int)
    path.write_text("a,b,c,cls\n" + "".join("%r,%r,%r,%d\n" % (float(X[i, 0]), float(X[i, 1]), float(X[i, 2]), y[i])
                                            for i in range(n)))
    return X, y


def _python():
    import sys
    sys.path.insert(0, str(ROOT / "python"))
    import samebits as sb
    return sb


ARGS = ["task=classifier", "hidden_layer_sizes=16,8", "max_iter=25", "batch_size=32", "learning_rate_init=0.01",
        "random_state=3"]


def test_train_predict_equals_python(tmp_path):
    data, model = tmp_path / "d.csv", tmp_path / "m.sbm"
    X, y = _csv(data)
    outs = []
    for threads in ("1", "2", "7"):
        r = samebits("train", "--model", "mlp", "--data", str(data), "--out", str(model), *ARGS, "--threads", threads)
        assert r.returncode == 0, r.stderr
        assert "epochs, loss_" in r.stderr
        outs.append(model.read_bytes())
    assert outs[0] == outs[1] == outs[2]
    sb = _python()
    m = sb.MLPClassifier(hidden_layer_sizes=(16, 8), max_iter=25, batch_size=32, learning_rate_init=0.01,
                         random_state=3).fit(X, y)
    assert m.model_bytes() == outs[0]
    p = samebits("predict", "--model", str(model), "--data", str(data), "--out", "-")
    assert p.returncode == 0, p.stderr
    assert [int(v) for v in p.stdout.split()] == m.predict(X).tolist()
    p = samebits("predict", "--model", str(model), "--data", str(data), "--out", "-", "--proba")
    assert p.returncode == 0, p.stderr
    rows = np.array([[float(v) for v in line.split(",")] for line in p.stdout.splitlines()], dtype=np.float32)
    assert rows.tobytes() == m.predict_proba(X).tobytes()
    d = samebits("digest", str(model))
    assert d.returncode == 0 and d.stdout.strip() == m.model_digest_


def test_regressor(tmp_path):
    data, model = tmp_path / "r.csv", tmp_path / "r.sbm"
    rng = np.random.RandomState(1)
    X = rng.uniform(-1, 1, (80, 2))
    t = X[:, 0] ** 2 - X[:, 1]
    data.write_text("a,b,t\n" + "".join("%r,%r,%r\n" % (float(X[i, 0]), float(X[i, 1]), float(t[i])) for i in range(80)))
    r = samebits("train", "--model", "mlp", "--data", str(data), "--out", str(model), "task=regressor",
                 "hidden_layer_sizes=8", "max_iter=10")
    assert r.returncode == 0, r.stderr
    sb = _python()
    m = sb.MLPRegressor(hidden_layer_sizes=(8,), max_iter=10).fit(X, t)
    assert m.model_bytes() == model.read_bytes()
    p = samebits("predict", "--model", str(model), "--data", str(data), "--out", "-")
    assert np.array([float(v) for v in p.stdout.split()], dtype=np.float32).tobytes() == m.predict(X).astype(np.float32).tobytes()
    p = samebits("predict", "--model", str(model), "--data", str(data), "--out", "-", "--proba")
    assert p.returncode == 2 and "regressor" in p.stderr


def test_hostile_input_refused_by_name(tmp_path):
    data, model = tmp_path / "d.csv", tmp_path / "m.sbm"
    _csv(data, n=30)
    r = samebits("train", "--model", "mlp", "--data", str(data), "--out", str(model), "task=classifier", "solver=lbfgs")
    assert r.returncode == 2 and "SB_ERR_INVALID_ARGUMENT" in r.stderr and "solver='lbfgs' is not built" in r.stderr
    assert not model.exists()
    r = samebits("train", "--model", "mlp", "--data", str(data), "--out", str(model))
    assert r.returncode == 2 and "task=classifier or task=regressor" in r.stderr
    r = samebits("train", "--model", "mlp", "--data", str(data), "--out", str(model), "task=classifier", "momentum=0.5")
    assert r.returncode == 2 and "solver='sgd' only" in r.stderr
    one = tmp_path / "one.csv"
    one.write_text("a,cls\n1,0\n2,0\n3,0\n")
    r = samebits("train", "--model", "mlp", "--data", str(one), "--out", str(model), "task=classifier")
    assert r.returncode == 2 and "a single class is refused" in r.stderr
    r = samebits("train", "--model", "mlp", "--data", str(data), "--out", str(model), "task=classifier", "max_iter=2")
    assert r.returncode == 0, r.stderr
    r = samebits("predict", "--model", str(model), "--data", str(data), "--out", "-", "--raw")
    assert r.returncode == 2 and "mlp model" in r.stderr
    two = tmp_path / "two.csv"
    two.write_text("a,b\n1,2\n")
    r = samebits("predict", "--model", str(model), "--data", str(two), "--out", "-")
    assert r.returncode == 2 and "the model has 3 features" in r.stderr
