"""Gaussian process regression from the command line (docs/gaussian-process.md,
"Command line"): train --model gp writes the model file, predict writes the
mean (and --std); the same bits as Python at any thread count; hostile input
refused by name."""

import pytest

from conftest import ROOT, samebits

np = pytest.importorskip("numpy")

KERNEL = "ConstantKernel(1.0) * RBF([1.0, 1.0]) + WhiteKernel(0.01)"


def _csv(path, n=40, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-2, 2, (n, 2))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.05 * rng.randn(n)
    path.write_text("a,b,target\n" + "".join("%r,%r,%r\n" % (float(X[i, 0]), float(X[i, 1]), float(y[i]))
                                             for i in range(n)))
    return X, y


def _python():
    import sys
    sys.path.insert(0, str(ROOT / "python"))
    import samebits as sb
    from samebits.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
    return sb, ConstantKernel(1.0) * RBF([1.0, 1.0]) + WhiteKernel(0.01)


def test_train_predict_equals_python(tmp_path):
    data, model = tmp_path / "d.csv", tmp_path / "m.sbm"
    X, y = _csv(data)
    outs = []
    for threads in ("1", "2", "7"):
        r = samebits("train", "--model", "gp", "--data", str(data), "--out", str(model), "--kernel", KERNEL,
                     "normalize_y=true", "n_restarts_optimizer=1", "random_state=4", "--threads", threads)
        assert r.returncode == 0, r.stderr
        assert "log marginal likelihood" in r.stderr
        outs.append(model.read_bytes())
    assert outs[0] == outs[1] == outs[2]
    p = samebits("predict", "--model", str(model), "--data", str(data), "--out", "-", "--std")
    assert p.returncode == 0, p.stderr
    rows = [tuple(float(v) for v in line.split(",")) for line in p.stdout.splitlines()]
    sb, k = _python()
    g = sb.GaussianProcessRegressor(k, normalize_y=True, n_restarts_optimizer=1, random_state=4).fit(X, y)
    assert g.model_bytes() == outs[0]
    m, s = g.predict(X, return_std=True)
    assert [r[0] for r in rows] == m.tolist() and [r[1] for r in rows] == s.tolist()
    d = samebits("digest", str(model))
    assert d.returncode == 0 and d.stdout.strip() == g.model_digest_


def test_hostile_input_refused_by_name(tmp_path):
    data, model = tmp_path / "d.csv", tmp_path / "m.sbm"
    _csv(data, n=12)
    r = samebits("train", "--model", "gp", "--data", str(data), "--out", str(model), "--kernel", "RBF(0)")
    assert r.returncode == 2 and "SB_ERR_INVALID_ARGUMENT" in r.stderr and "length_scale=0" in r.stderr
    assert not model.exists()
    r = samebits("train", "--model", "gp", "--data", str(data), "--out", str(model), "--label", "nope")
    assert r.returncode == 2 and "no column 'nope'" in r.stderr
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,target\n1,2,3\n\"4\",5,6\n")
    r = samebits("train", "--model", "gp", "--data", str(bad), "--out", str(model))
    assert r.returncode == 2 and "line 3 column 1" in r.stderr
    dup = tmp_path / "dup.csv"
    dup.write_text("a,target\n" + "1,1\n2,2\n1,3\n" * 2)
    r = samebits("train", "--model", "gp", "--data", str(dup), "--out", str(model), "--kernel", "RBF(1.0)",
                 "alpha=0", "optimizer=none")
    assert r.returncode == 2 and "not positive definite" in r.stderr
    r = samebits("train", "--model", "gp", "--data", str(dup), "--out", str(model), "--kernel",
                 "RBF(1.0) + WhiteKernel(0.1)")
    assert r.returncode == 0, r.stderr
    r = samebits("predict", "--model", str(model), "--data", str(dup), "--out", "-", "--raw")
    assert r.returncode == 2 and "gp model" in r.stderr
    three = tmp_path / "three.csv"
    three.write_text("a,b,c,d\n1,2,3,4\n")
    r = samebits("predict", "--model", str(model), "--data", str(three), "--out", "-")
    assert r.returncode == 2 and "the model has 1 features" in r.stderr


def test_device_opencl_gives_the_cpu_bytes_and_predictions(tmp_path):
    """train and predict with device=opencl (PoCL here): the model file and the
    predicted means and deviations are the CPU's bytes; a device this build
    lacks or cpu-batched is refused by name."""
    import os
    env = {"POCL_CACHE_DIR": os.environ.get("POCL_CACHE_DIR", str(ROOT / "build" / "opencl" / "pocl-cache"))}
    os.makedirs(env["POCL_CACHE_DIR"], exist_ok=True)
    data = tmp_path / "d.csv"
    _csv(data, n=90, seed=3)
    outs, preds = [], []
    for device in ("cpu", "opencl"):
        model = tmp_path / ("m-%s.sbm" % device)
        r = samebits("train", "--model", "gp", "--data", str(data), "--out", str(model), "--kernel", KERNEL,
                     "normalize_y=true", "device=" + device, env=env)
        assert r.returncode == 0, r.stderr
        outs.append(model.read_bytes())
        p = samebits("predict", "--model", str(model), "--data", str(data), "--out", "-", "--std",
                     "device=" + device, env=env)
        assert p.returncode == 0, p.stderr
        preds.append(p.stdout)
    assert outs[0] == outs[1] and preds[0] == preds[1]
    p = samebits("predict", "--model", str(tmp_path / "m-cpu.sbm"), "--data", str(data), "--out", "-",
                 "device=cpu-batched")
    assert p.returncode != 0 and "no batched host path" in p.stderr
    r = samebits("train", "--model", "gp", "--data", str(data), "--out", str(tmp_path / "x.sbm"), "device=tpu")
    assert r.returncode != 0 and "tpu" in r.stderr
