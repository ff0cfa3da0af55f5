"""Support vector machines from the command line: train --model svc|svr (the
label column the target, DATA.weight beside the data read as sample weights),
predict writes the class index or the value (--raw the decision values), the
same digest at every thread count and as Python's fit, probability=true with
predict --proba (the float32 of Python's predict_proba, the same at every
thread count), and refusals by name (C <= 0, one class, SVR's probability,
--valid, --proba without probability, the shrinking note)."""
import re
import sys

import pytest

from conftest import ROOT, samebits

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")


def digest_of(r):
    m = re.search(r"model digest: ([0-9a-f]{64})", r.stdout)
    assert m, r.stdout + r.stderr
    return m.group(1)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("svm")
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 3)).astype(np.float32)
    c = ((X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)).astype(np.float32)
    z = (X[:, 0] - 0.5 * X[:, 2]).astype(np.float32)
    Q = rng.normal(size=(40, 3)).astype(np.float32)
    for name, y in (("cls.csv", c), ("reg.csv", z)):
        np.savetxt(d / name, np.column_stack([y, X]), delimiter=",", header="y,a,b,c", comments="", fmt="%.9g")
    np.savetxt(d / "q.csv", Q, delimiter=",", header="a,b,c", comments="", fmt="%.9g")
    w = rng.uniform(0.0, 2.0, size=len(X)).astype(np.float32)
    np.savetxt(d / "wcls.csv", np.column_stack([c, X]), delimiter=",", header="y,a,b,c", comments="", fmt="%.9g")
    np.savetxt(d / "wcls.csv.weight", w, fmt="%.9g")
    return d, X, c, z, Q, w


@pytest.mark.parametrize("kind", ["svc", "svr"])
def test_train_and_predict_match_python(files, tmp_path, kind):
    d, X, c, z, Q, w = files
    sys.path.insert(0, str(ROOT / "python"))
    import samebits as sb
    cases = (("cls.csv", c, None), ("wcls.csv", c, w)) if kind == "svc" else (("reg.csv", z, None),)
    for csv, y, weights in cases:
        digests = set()
        for t in ("1", "2", "5"):
            out = tmp_path / ("m%s.sbm" % t)
            r = samebits("train", "--model", kind, "--data", str(d / csv), "--label", "y", "--out", str(out),
                         "--threads", t, "kernel=rbf", "C=2")
            assert r.returncode == 0, r.stderr
            assert "%s fitted" % kind in r.stderr
            digests.add(digest_of(r))
        est = (sb.SVC if kind == "svc" else sb.SVR)(kernel="rbf", C=2.0)
        est.fit(pd.DataFrame(X, columns=["a", "b", "c"]), y.astype(np.int64) if kind == "svc" else y,
                sample_weight=weights)
        assert digests == {est.model_digest_}
        p = samebits("predict", "--model", str(out), "--data", str(d / "q.csv"), "--out", str(tmp_path / "p.txt"))
        assert p.returncode == 0, p.stderr
        got = np.loadtxt(tmp_path / "p.txt", dtype=np.float64)
        want = est.predict(pd.DataFrame(Q, columns=["a", "b", "c"]))
        assert np.array_equal(got.astype(np.float32), np.asarray(want).astype(np.float32))
        if kind == "svc":
            p = samebits("predict", "--model", str(out), "--data", str(d / "q.csv"), "--out", str(tmp_path / "r.txt"),
                         "--raw")
            assert p.returncode == 0, p.stderr
            raw = np.loadtxt(tmp_path / "r.txt", dtype=np.float64, delimiter=",").reshape(len(Q), -1)
            dec = est.set_params(decision_function_shape="ovo").decision_function(
                pd.DataFrame(Q, columns=["a", "b", "c"]))
            assert raw.shape == (len(Q), 3)
            assert np.array_equal(raw.astype(np.float32), dec.astype(np.float32))


def test_refusals_and_notes(files, tmp_path):
    d = files[0]
    r = samebits("train", "--model", "svc", "--data", str(d / "cls.csv"), "--label", "y", "C=0")
    assert r.returncode != 0 and "C must be" in r.stderr
    r = samebits("train", "--model", "svr", "--data", str(d / "reg.csv"), "--label", "y", "probability=true")
    assert r.returncode != 0 and "SVR has no probabilities" in r.stderr
    r = samebits("train", "--model", "svc", "--data", str(d / "cls.csv"), "--label", "y", "random_state=3")
    assert r.returncode != 0 and "random_state" in r.stderr
    r = samebits("train", "--model", "svr", "--data", str(d / "reg.csv"), "--label", "y", "--valid", str(d / "q.csv"))
    assert r.returncode != 0 and "support vector" in r.stderr
    one = tmp_path / "one.csv"
    one.write_text("y,a\n" + "".join("1,%d\n" % i for i in range(10)))
    r = samebits("train", "--model", "svc", "--data", str(one), "--label", "y")
    assert r.returncode != 0 and "at least two classes" in r.stderr
    out = tmp_path / "m.sbm"
    r = samebits("train", "--model", "svc", "--data", str(d / "cls.csv"), "--label", "y", "--out", str(out),
                 "shrinking=false", "max_iter=2")
    assert r.returncode == 0, r.stderr
    assert "shrinking=false has no effect" in r.stderr and "stopped at max_iter" in r.stderr
    r = samebits("predict", "--model", str(out), "--data", str(d / "q.csv"), "--out", "-", "--proba")
    assert r.returncode != 0 and "fit it with probability=true" in r.stderr


def test_probability_and_predict_proba(files, tmp_path):
    d, X, c, z, Q, w = files
    sys.path.insert(0, str(ROOT / "python"))
    import samebits as sb
    digests, probas = set(), set()
    for t in ("1", "2", "7"):
        out = tmp_path / ("p%s.sbm" % t)
        r = samebits("train", "--model", "svc", "--data", str(d / "cls.csv"), "--label", "y", "--out", str(out),
                     "--threads", t, "probability=true", "random_state=11")
        assert r.returncode == 0, r.stderr
        digests.add(digest_of(r))
        p = samebits("predict", "--model", str(out), "--data", str(d / "q.csv"), "--out", str(tmp_path / "pp.txt"),
                     "--proba", "--threads", t)
        assert p.returncode == 0, p.stderr
        probas.add((tmp_path / "pp.txt").read_bytes())
    assert len(digests) == 1 and len(probas) == 1
    est = sb.SVC(probability=True, random_state=11).fit(pd.DataFrame(X, columns=["a", "b", "c"]), c.astype(np.int64))
    assert digests == {est.model_digest_}
    got = np.loadtxt(tmp_path / "pp.txt", dtype=np.float64, delimiter=",")
    want = est.predict_proba(pd.DataFrame(Q, columns=["a", "b", "c"]))
    assert got.shape == want.shape == (len(Q), 3)
    assert np.array_equal(got.astype(np.float32), want.astype(np.float32))
    assert np.all(np.abs(got.sum(axis=1) - 1.0) < 1e-5)


@pytest.mark.parametrize("kind", ["svc", "svr"])
def test_device_opencl_gives_the_cpu_files(files, tmp_path, kind):
    """train device=opencl (PoCL here): the CPU's model digest; predict
    device=opencl (values, --raw, and with probability=true --proba): the
    CPU's output files byte for byte; device=tpu refused by name. A build or
    machine without OpenCL is a skip, never a pass."""
    d, X, c, z, Q, w = files
    csv = "cls.csv" if kind == "svc" else "reg.csv"
    extra = ["probability=true"] if kind == "svc" else []
    outs = {}
    for dev in ("cpu", "opencl"):
        m = tmp_path / ("%s.sbm" % dev)
        r = samebits("train", "--model", kind, "--data", str(d / csv), "--label", "y", "--out", str(m),
                     "kernel=rbf", "C=2", "device=" + dev, *extra)
        if dev == "opencl" and r.returncode != 0 and "SB_ERR_BACKEND_UNAVAILABLE" in r.stderr:
            pytest.skip("no OpenCL device here: " + r.stderr.strip()[-200:])
        assert r.returncode == 0, r.stderr
        files_out = [digest_of(r)]
        for flag in ([], ["--raw"]) + ((["--proba"],) if kind == "svc" else ()):
            p = tmp_path / ("%s%s.txt" % (dev, "".join(flag)))
            r = samebits("predict", "--model", str(m), "--data", str(d / "q.csv"), "--out", str(p), "device=" + dev,
                         *flag)
            assert r.returncode == 0, r.stderr
            files_out.append(p.read_bytes())
        outs[dev] = files_out
    assert outs["opencl"] == outs["cpu"]
    r = samebits("train", "--model", kind, "--data", str(d / csv), "--label", "y", "--out", str(tmp_path / "t.sbm"),
                 "device=tpu")
    assert r.returncode != 0 and "unknown device 'tpu'" in r.stderr
