"""Kernel density from the command line: train --model kde (a --label column
dropped, DATA.weight beside the data read as sample weights), predict writes
the log densities, the same digest at every thread count and as Python's fit,
and refusals by name (an unknown kernel, a bandwidth of 0, --valid, --proba)."""
import re
import sys

import pytest

from conftest import ROOT, samebits

np = pytest.importorskip("numpy")


def digest_of(r):
    m = re.search(r"model digest: ([0-9a-f]{64})", r.stdout)
    assert m, r.stdout + r.stderr
    return m.group(1)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("kde")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3)).astype(np.float32)
    Q = (rng.normal(size=(40, 3)) * 1.5).astype(np.float32)
    np.savetxt(d / "train.csv", X, delimiter=",", header="a,b,c", comments="", fmt="%.9g")
    np.savetxt(d / "q.csv", Q, delimiter=",", header="a,b,c", comments="", fmt="%.9g")
    w = rng.uniform(0.0, 2.0, size=len(X)).astype(np.float32)
    np.savetxt(d / "wtrain.csv", X, delimiter=",", header="a,b,c", comments="", fmt="%.9g")
    np.savetxt(d / "wtrain.csv.weight", w, fmt="%.9g")
    return d, X, Q, w


def test_train_and_predict_match_python(files, tmp_path):
    d, X, Q, w = files
    sys.path.insert(0, str(ROOT / "python"))
    import samebits as sb
    for csv, weights in (("train.csv", None), ("wtrain.csv", w)):
        digests = set()
        for t in ("1", "2", "5"):
            out = tmp_path / ("m%s.sbm" % t)
            r = samebits("train", "--model", "kde", "--data", str(d / csv), "--out", str(out), "--threads", t,
                         "kernel=exponential", "bandwidth=silverman")
            assert r.returncode == 0, r.stderr
            assert "kde fitted" in r.stderr
            digests.add(digest_of(r))
        pd = pytest.importorskip("pandas")  # the CSV's header names the features: the same names in Python
        py = sb.KernelDensity(kernel="exponential", bandwidth="silverman").fit(
            pd.DataFrame(X, columns=["a", "b", "c"]), sample_weight=weights)
        assert digests == {py.model_digest_}
        p = samebits("predict", "--model", str(out), "--data", str(d / "q.csv"), "--out", str(tmp_path / "p.txt"))
        assert p.returncode == 0, p.stderr
        got = np.loadtxt(tmp_path / "p.txt", dtype=np.float64).astype(np.float32)
        assert got.tobytes() == py.score_samples(pd.DataFrame(Q, columns=["a", "b", "c"])).astype(np.float32).tobytes()


def test_refusals(files, tmp_path):
    d, _, _, _ = files
    r = samebits("train", "--model", "kde", "--data", str(d / "train.csv"), "kernel=box")
    assert r.returncode != 0 and "kernel='box'" in r.stderr
    r = samebits("train", "--model", "kde", "--data", str(d / "train.csv"), "bandwidth=0")
    assert r.returncode != 0 and "bandwidth=0" in r.stderr
    r = samebits("train", "--model", "kde", "--data", str(d / "train.csv"), "--valid", str(d / "q.csv"))
    assert r.returncode != 0 and "kernel density" in r.stderr
    out = tmp_path / "m.sbm"
    assert samebits("train", "--model", "kde", "--data", str(d / "train.csv"), "--out", str(out)).returncode == 0
    r = samebits("predict", "--model", str(out), "--data", str(d / "q.csv"), "--out", "-", "--proba")
    assert r.returncode != 0 and "log densities" in r.stderr
