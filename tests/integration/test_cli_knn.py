"""Nearest neighbors from the command line: train --model knn (classification
by default with a label, task=regression, task=neighbors without a label),
predict and --proba, the same digest at every thread count and as Python's
fit, and refusals by name (an unknown parameter, --valid, --raw, predict on a
neighbors-task model)."""
import random
import re
import sys

import pytest

from conftest import ROOT, samebits


def digest_of(r):
    m = re.search(r"model digest: ([0-9a-f]{64})", r.stdout)
    assert m, r.stdout + r.stderr
    return m.group(1)


def _f32(v):
    import struct
    return struct.unpack("f", struct.pack("f", v))[0]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A small CSV: three features, a class label 0..2 and a regression target."""
    rnd = random.Random(7)
    rows = []
    for _ in range(240):
        x = [_f32(rnd.uniform(-2, 2)) for _ in range(3)]
        s = x[0] + 0.5 * x[1]
        label = 0 if s < -0.6 else 1 if s < 0.6 else 2
        rows.append(x + [label, _f32(2 * x[0] - x[1] * x[2])])
    d = tmp_path_factory.mktemp("knn")
    full = d / "train.csv"
    with open(full, "w") as f:
        f.write("a,b,c,y,t\n")
        for r in rows:
            f.write("%.9g,%.9g,%.9g,%d,%.9g\n" % tuple(r))
    cls = d / "cls.csv"  # features and the class label
    reg = d / "reg.csv"  # features and the target
    feats = d / "x.csv"  # features only
    with open(cls, "w") as f, open(reg, "w") as g, open(feats, "w") as h:
        f.write("a,b,c,y\n")
        g.write("a,b,c,t\n")
        h.write("a,b,c\n")
        for r in rows:
            f.write("%.9g,%.9g,%.9g,%d\n" % tuple(r[:4]))
            g.write("%.9g,%.9g,%.9g,%.9g\n" % (r[0], r[1], r[2], r[4]))
            h.write("%.9g,%.9g,%.9g\n" % tuple(r[:3]))
    return {"rows": rows, "cls": cls, "reg": reg, "x": feats, "dir": d}


def test_classifier_train_predict_and_proba(data, tmp_path):
    model = tmp_path / "c.sbm"
    r = samebits("train", "--model", "knn", "--data", str(data["cls"]), "--label", "y", "n_neighbors=7",
                 "weights=distance", "--out", str(model))
    assert r.returncode == 0, r.stderr
    assert "knn fitted in" in r.stderr and "classification, 240 rows kept, n_neighbors=7, 3 classes" in r.stderr
    assert "distance weights" in r.stderr
    r = samebits("predict", "--model", str(model), "--data", str(data["x"]), "--out", "-")
    assert r.returncode == 0, r.stderr
    pred = [int(float(v)) for v in r.stdout.split()]
    truth = [row[3] for row in data["rows"]]
    assert len(pred) == 240 and set(pred) <= {0, 1, 2}
    # distance weights: each training row is its own neighbor at distance 0, so predict gives its label
    assert pred == truth
    r = samebits("predict", "--model", str(model), "--data", str(data["cls"]), "--out", "-", "--proba")
    assert r.returncode == 0, r.stderr
    proba = [[float(v) for v in line.split(",")] for line in r.stdout.splitlines()]
    assert len(proba) == 240 and all(len(p) == 3 for p in proba)
    assert all(abs(sum(p) - 1.0) < 1e-6 for p in proba)
    assert [max(range(3), key=lambda k: p[k]) for p in proba] == pred
    # --raw has no meaning for nearest neighbors: refused by name
    r = samebits("predict", "--model", str(model), "--data", str(data["x"]), "--out", "-", "--raw")
    assert r.returncode == 2 and "nearest neighbors predict values and probabilities only" in r.stderr, r.stderr
    # on a GPU (PoCL's OpenCL in CI) the same lines; where no OpenCL device is usable, a refusal by name
    cpu = samebits("predict", "--model", str(model), "--data", str(data["cls"]), "--out", "-", "--proba")
    r = samebits("predict", "--model", str(model), "--data", str(data["cls"]), "--out", "-", "--proba", "device=opencl")
    if r.returncode == 0:
        assert r.stdout == cpu.stdout
    else:
        assert r.returncode == 2 and "SB_ERR_BACKEND_UNAVAILABLE" in r.stderr, r.stderr


def test_regressor_train_predict(data, tmp_path):
    model = tmp_path / "r.sbm"
    r = samebits("train", "--model", "knn", "--data", str(data["reg"]), "--label", "t", "task=regression",
                 "n_neighbors=4", "--out", str(model))
    assert r.returncode == 0, r.stderr
    assert "regression, 240 rows kept, n_neighbors=4, euclidean, uniform weights" in r.stderr
    r = samebits("predict", "--model", str(model), "--data", str(data["x"]), "--out", "-")
    assert r.returncode == 0, r.stderr
    pred = [float(v) for v in r.stdout.split()]
    t = [row[4] for row in data["rows"]]
    mean = sum(t) / len(t)
    ss_res = sum((a - b) ** 2 for a, b in zip(pred, t))
    ss_tot = sum((a - mean) ** 2 for a in t)
    assert len(pred) == 240 and 1 - ss_res / ss_tot > 0.7
    r = samebits("predict", "--model", str(model), "--data", str(data["x"]), "--out", "-", "--proba")
    assert r.returncode == 2 and "a nearest-neighbors regressor has no probabilities" in r.stderr, r.stderr
    # values as class labels: refused by name, pointing at task=regression
    r = samebits("train", "--model", "knn", "--data", str(data["reg"]), "--label", "t")
    assert r.returncode == 2 and "is not a class index 0..9999" in r.stderr and "task=regression" in r.stderr


def test_same_digest_at_every_thread_count_and_as_python(data, tmp_path):
    digests = set()
    for t in ("1", "2", "5"):
        r = samebits("train", "--model", "knn", "--data", str(data["cls"]), "--label", "y", "n_neighbors=3",
                     "--threads", t, "--out", str(tmp_path / ("t%s.sbm" % t)))
        assert r.returncode == 0, r.stderr
        digests.add(digest_of(r))
    assert len(digests) == 1, digests
    assert (tmp_path / "t1.sbm").read_bytes() == (tmp_path / "t5.sbm").read_bytes()
    # Python's KNeighborsClassifier on the same rows, names and labels writes the same bytes
    pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    if str(ROOT / "python") not in sys.path:
        sys.path.insert(0, str(ROOT / "python"))
    import samebits as sb
    frame = pd.DataFrame([row[:3] for row in data["rows"]], columns=["a", "b", "c"]).astype("float32")
    est = sb.KNeighborsClassifier(n_neighbors=3).fit(frame, [row[3] for row in data["rows"]])
    assert est.model_digest_ in digests
    back = sb.load_model(str(tmp_path / "t1.sbm"))
    assert type(back) is sb.KNeighborsClassifier and list(back.classes_) == [0, 1, 2]
    assert back.n_neighbors == 3 and list(back.feature_names_in_) == ["a", "b", "c"]


def test_neighbors_task_model_refuses_predict(data, tmp_path):
    model = tmp_path / "n.sbm"
    r = samebits("train", "--model", "knn", "--data", str(data["x"]), "n_neighbors=2", "--out", str(model))
    assert r.returncode == 0, r.stderr
    assert "(neighbors, 240 rows kept, n_neighbors=2, euclidean)" in r.stderr
    assert "predict refuses it" in r.stderr
    r = samebits("predict", "--model", str(model), "--data", str(data["x"]), "--out", "-")
    assert r.returncode == 2, r.stderr
    assert "an unsupervised nearest-neighbors model does not predict" in r.stderr
    # task=neighbors with a label keeps the rows only (the label is not a feature)
    r = samebits("train", "--model", "knn", "--data", str(data["cls"]), "--label", "y", "task=neighbors",
                 "metric=cosine", "--out", str(tmp_path / "n2.sbm"))
    assert r.returncode == 0 and "(neighbors, 240 rows kept, n_neighbors=5, cosine)" in r.stderr, r.stderr
    # manhattan: the summary names it (it printed "?" before the CLI's table had it), and cityblock is its alias
    for metric in ("manhattan", "cityblock"):
        r = samebits("train", "--model", "knn", "--data", str(data["x"]), "metric=" + metric,
                     "--out", str(tmp_path / "n3.sbm"))
        assert r.returncode == 0 and "(neighbors, 240 rows kept, n_neighbors=5, manhattan)" in r.stderr, r.stderr


@pytest.mark.parametrize("args,words", [
    (["bogus=1"], "unknown parameter 'bogus' for nearest neighbors"),
    (["metric=chebyshev"], "metric='chebyshev' is not supported"),
    (["p=3"], "p=3: minkowski is supported with p=1 (manhattan) or p=2"),
    (["metric=euclidean", "p=1"], "p=1 does not go with metric=euclidean"),
    (["weights=gaussian"], "weights='gaussian': uniform or distance"),
    (["n_neighbors=0"], "n_neighbors"),
    (["n_neighbors=241"], "n_neighbors=241 exceeds the 240 training rows"),
    (["task=clustering"], "task='clustering': neighbors, classification or regression"),
    (["device=cuda"], "SB_ERR_BACKEND_UNAVAILABLE"),
    (["model=knn"], "takes no model= or objective="),
    (["numeric_mode=fast"], "SB_ERR_MODE_UNSUPPORTED"),
])
def test_refusals_are_named(args, words, data, tmp_path):
    out = tmp_path / "never.sbm"
    r = samebits("train", "--model", "knn", "--data", str(data["cls"]), "--label", "y", *args, "--out", str(out))
    assert r.returncode == 2 and words in r.stderr, r.stderr
    assert not out.exists()


def test_valid_weight_and_groups_refused_by_name(data, tmp_path):
    base = ["train", "--model", "knn", "--data", str(data["cls"]), "--label", "y"]
    r = samebits(*base, "--valid", str(data["cls"]))
    assert r.returncode == 2 and "--valid is for gradient boosting (nearest neighbors" in r.stderr, r.stderr
    r = samebits(*base, "--group", "a")
    assert r.returncode == 2 and "takes no query groups" in r.stderr, r.stderr
    w = tmp_path / "w.txt"
    w.write_text("1\n" * 240)
    r = samebits(*base, "--weight", str(w))
    assert r.returncode == 2 and "nearest neighbors take no sample weights" in r.stderr, r.stderr
    r = samebits("train", "--model", "knn", "--data", str(data["x"]), "task=classification")
    assert r.returncode == 2 and "task=classification needs a label" in r.stderr, r.stderr


def test_usage_names_knn():
    r = samebits("help", "train")
    assert r.returncode == 0 and "--model knn" in r.stdout
    r = samebits("train", "--model", "svm", "--data", "x.csv")
    assert r.returncode == 2 and "isolation_forest, kmeans, dbscan, agglomerative, spectral, knn, kde, umap, svc, svr, ets, arima, gp, mlp, lm, or a linear model" in r.stderr
