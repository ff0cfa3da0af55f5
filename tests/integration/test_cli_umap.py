"""UMAP from the command line (docs/umap.md, "Command line"): train --model
umap writes the frozen fit's model file, transform (and predict) writes the
embedding of new rows; the same bits as Python's samebits.UMAP at 1, 2 and 7
threads, however the rows are batched; hostile input refused by name."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT, samebits

np = pytest.importorskip("numpy")

PARAMS = ("n_neighbors=8", "n_epochs=40", "random_state=6", "min_dist=0.25")


def _rows(n, seed):
    rng = np.random.RandomState(seed)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    x[n // 2:, 0] += 6.0
    return x


def _write(path, x):
    path.write_text("a,b,c,d\n" + "".join(",".join("%r" % float(v) for v in row) + "\n" for row in x))


def _read(text):
    """The CLI's lines (9 significant digits: each float32 exactly) as float32 widened to float64."""
    return np.array([[float(v) for v in line.split(",")] for line in text.splitlines()]).astype(np.float32).astype(
        np.float64)


def _python(code):
    """Run code in a fresh Python on this build's library (SAMEBITS_LIB only for that process)."""
    env = dict(os.environ, SAMEBITS_LIB=str(ROOT / "build" / "libsamebits.so"), PYTHONPATH=str(ROOT / "python"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_train_transform_equals_python(tmp_path):
    data, query, model = tmp_path / "d.csv", tmp_path / "q.csv", tmp_path / "m.sbm"
    x, q = _rows(60, 0), _rows(17, 1)
    _write(data, x)
    _write(query, q)
    files, embs = [], []
    for threads in ("1", "2", "7"):
        r = samebits("train", "--model", "umap", "--data", str(data), "--out", str(model), *PARAMS,
                     "--threads", threads)
        assert r.returncode == 0, r.stderr
        assert "umap fitted" in r.stderr and "model digest:" in r.stdout
        files.append(model.read_bytes())
        t = samebits("transform", "--model", str(model), "--data", str(query), "--out", "-", "--threads", threads)
        assert t.returncode == 0, t.stderr
        embs.append(t.stdout)
    assert files[0] == files[1] == files[2]
    assert embs[0] == embs[1] == embs[2]
    # predict on a umap model writes the same embedding
    p = samebits("predict", "--model", str(model), "--data", str(query), "--out", "-")
    assert p.returncode == 0 and p.stdout == embs[0], p.stderr
    # batches: the rows one at a time and seven at a time give the same lines
    lines = []
    for b in (1, 7):
        got = []
        for i in range(0, len(q), b):
            part = tmp_path / ("p%d_%d.csv" % (b, i))
            _write(part, q[i:i + b])
            t = samebits("transform", "--model", str(model), "--data", str(part), "--out", "-")
            assert t.returncode == 0, t.stderr
            got.append(t.stdout)
        lines.append("".join(got))
    assert lines[0] == lines[1] == embs[0]
    # Python (the data's column names kept, as the CLI keeps them): the same file bytes, digest and embedding
    pytest.importorskip("pandas")
    out = _python(
        "import numpy as np, pandas as pd, samebits\n"
        "x = pd.read_csv(%r, dtype=np.float32)\n"
        "q = np.loadtxt(%r, delimiter=',', skiprows=1, dtype=np.float32)\n"
        "u = samebits.UMAP(n_neighbors=8, n_epochs=40, random_state=6, min_dist=0.25).fit(x)\n"
        "open(%r, 'wb').write(u.model_bytes())\n"
        "print(u.model_digest_)\n"
        "np.save(%r, u.transform(q))\n"
        "np.save(%r, samebits.load_model(%r).transform(q))\n"
        % (str(data), str(query), str(tmp_path / "py.sbm"), str(tmp_path / "py.npy"), str(tmp_path / "pyl.npy"),
           str(model)))
    assert (tmp_path / "py.sbm").read_bytes() == files[0]
    d = samebits("digest", str(model))
    assert d.returncode == 0 and d.stdout.strip() == out.strip()
    cli = _read(embs[0])
    assert np.array_equal(cli, np.load(tmp_path / "py.npy"))
    assert np.array_equal(cli, np.load(tmp_path / "pyl.npy"))


@pytest.mark.parametrize("args,words", [
    (["n_neighbors=1"], "n_neighbors"),
    (["n_neighbors=2000"], "n_neighbors"),
    (["metric=chebyshev"], "metric='chebyshev' is not supported by UMAP"),
    (["min_dist=2", "spread=1"], "min_dist=2 must not exceed spread=1"),
    (["init=array"], "init=array without the initial rows"),
    (["bogus=1"], "unknown parameter 'bogus' for UMAP"),
    (["n_components=0"], "n_components"),
    (["--label", "a"], "--model umap takes no --label (supervised UMAP"),
    (["--valid", "x.csv"], "--valid is for gradient boosting (UMAP has no rounds"),
])
def test_refusals_are_named(tmp_path, args, words):
    data, model = tmp_path / "d.csv", tmp_path / "m.sbm"
    _write(data, _rows(20, 2))
    r = samebits("train", "--model", "umap", "--data", str(data), "--out", str(model), *args)
    assert r.returncode == 2 and words in r.stderr, r.stderr
    assert not model.exists()


def test_spectral_fallback_warned(tmp_path):
    """3 rows, 2 components: init=spectral falls back to the random
    initialization and the CLI says so; init=random (asked) says nothing, and
    the two model files hold the same embedding."""
    data = tmp_path / "d.csv"
    _write(data, _rows(3, 4))
    r = samebits("train", "--model", "umap", "--data", str(data), "--out", str(tmp_path / "s.sbm"), "n_neighbors=2",
                 "n_epochs=10")
    assert r.returncode == 0 and "warning: init=spectral could not be computed" in r.stderr, r.stderr
    r = samebits("train", "--model", "umap", "--data", str(data), "--out", str(tmp_path / "r.sbm"), "n_neighbors=2",
                 "n_epochs=10", "init=random")
    assert r.returncode == 0 and "could not be computed" not in r.stderr, r.stderr
    _write(data, _rows(60, 4))
    r = samebits("train", "--model", "umap", "--data", str(data), "--out", str(tmp_path / "m.sbm"), *PARAMS)
    assert r.returncode == 0 and "could not be computed" not in r.stderr, r.stderr


def test_hostile_data_refused_by_name(tmp_path):
    data, model = tmp_path / "d.csv", tmp_path / "m.sbm"
    x = _rows(20, 3)
    _write(data, x)
    bad = tmp_path / "nan.csv"
    bad.write_text("a,b,c,d\n1,2,3,4\n5,,7,8\n1,1,1,1\n")
    r = samebits("train", "--model", "umap", "--data", str(bad), "--out", str(model))
    assert r.returncode == 2 and "not finite" in r.stderr, r.stderr
    one = tmp_path / "one.csv"
    one.write_text("a,b\n1,2\n")
    r = samebits("train", "--model", "umap", "--data", str(one), "--out", str(model))
    assert r.returncode == 2 and "at least two rows" in r.stderr, r.stderr
    (tmp_path / "d.csv.weight").write_text("1\n" * 20)
    r = samebits("train", "--model", "umap", "--data", str(data), "--out", str(model))
    assert r.returncode == 2 and "takes no sample weights" in r.stderr, r.stderr
    os.remove(tmp_path / "d.csv.weight")
    r = samebits("train", "--model", "umap", "--data", str(data), "--out", str(model), "n_epochs=10")
    assert r.returncode == 0, r.stderr
    # transform: a NaN row, a wrong width, a model that does not transform, an unexpected argument
    r = samebits("transform", "--model", str(model), "--data", str(bad), "--out", "-")
    assert r.returncode == 2 and "missing (NaN)" in r.stderr, r.stderr
    narrow = tmp_path / "narrow.csv"
    narrow.write_text("a,b\n1,2\n")
    r = samebits("transform", "--model", str(model), "--data", str(narrow), "--out", "-")
    assert r.returncode == 2 and "SB_ERR_INVALID_INPUT" in r.stderr, r.stderr
    r = samebits("transform", "--model", str(model), "--data", str(data), "--out", "-", "--proba")
    assert r.returncode == 2 and "unexpected argument '--proba'" in r.stderr, r.stderr
    r = samebits("transform", "--model", str(model), "--data", str(data))
    assert r.returncode == 2 and "--out are required" in r.stderr, r.stderr
    r = samebits("predict", "--model", str(model), "--data", str(data), "--out", "-", "--raw")
    assert r.returncode == 2 and "UMAP model transforms" in r.stderr, r.stderr
    kde = tmp_path / "k.sbm"
    r = samebits("train", "--model", "kde", "--data", str(data), "--out", str(kde))
    assert r.returncode == 0, r.stderr
    r = samebits("transform", "--model", str(kde), "--data", str(data), "--out", "-")
    assert r.returncode == 2 and "kernel density" in r.stderr, r.stderr


def test_usage_names_umap_and_transform():
    r = samebits("help", "train")
    assert r.returncode == 0 and "--model umap" in r.stdout
    r = samebits("help", "transform")
    assert r.returncode == 0 and "transform --model MODEL --data FILE --out FILE" in r.stdout
