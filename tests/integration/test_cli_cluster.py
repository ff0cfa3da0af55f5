"""DBSCAN, agglomerative and spectral clustering from the command line: train
writes a model whose digest is the same at every thread count and equals
Python's fit; predict refuses each by name (none of them predicts new rows)."""
import random
import re
import sys

import pytest

from conftest import ROOT, samebits


def digest_of(r):
    m = re.search(r"model digest: ([0-9a-f]{64})", r.stdout)
    assert m, r.stdout + r.stderr
    return m.group(1)


@pytest.fixture(scope="module")
def blobs(tmp_path_factory):
    rnd = random.Random(3)
    d = tmp_path_factory.mktemp("cluster")
    path = d / "blobs.csv"
    with open(path, "w") as f:
        f.write("a,b,y\n")
        for i in range(300):
            c = i % 3
            f.write("%r,%r,%d\n" % (4.0 * c + rnd.gauss(0, 0.5), -3.0 * c + rnd.gauss(0, 0.5), c))
    return path


@pytest.mark.parametrize("model,params,summary", [
    ("dbscan", ["eps=0.8", "min_samples=5"], "samebits: dbscan fitted"),
    ("agglomerative", ["n_clusters=3", "linkage=average"], "samebits: agglomerative fitted"),
    ("spectral", ["n_clusters=3", "gamma=0.5"], "samebits: spectral fitted"),
])
def test_train_is_the_same_at_every_thread_count(model, params, summary, blobs, tmp_path):
    digests = set()
    for t in (1, 2, 3):
        out = tmp_path / ("%s-%d.sbm" % (model, t))
        r = samebits("train", "--model", model, "--data", str(blobs), "--label", "y", "--threads", str(t),
                     "--out", str(out), *params)
        assert r.returncode == 0 and summary in r.stderr, r.stderr
        digests.add(digest_of(r))
    assert len(digests) == 1
    r = samebits("predict", "--model", str(out), "--data", str(blobs), "--out", "-")
    assert r.returncode != 0 and "does not predict" in r.stderr, r.stderr
    np = pytest.importorskip("numpy")
    if str(ROOT / "python") not in sys.path:
        sys.path.insert(0, str(ROOT / "python"))
    import samebits as sb
    X = np.loadtxt(str(blobs), delimiter=",", skiprows=1, usecols=(0, 1), dtype=np.float32)
    kw = dict(p.split("=") for p in params)
    if model == "dbscan":
        est = sb.DBSCAN(eps=float(kw["eps"]), min_samples=int(kw["min_samples"]))
    elif model == "spectral":
        est = sb.SpectralClustering(n_clusters=int(kw["n_clusters"]), gamma=float(kw["gamma"]))
    else:
        est = sb.AgglomerativeClustering(n_clusters=int(kw["n_clusters"]), linkage=kw["linkage"])
    # the CLI's model carries the CSV's feature names; the digests agree on the labels they hold
    fitted = est.fit(X)
    loaded = sb.load_model(str(out))
    assert (loaded.labels_ == fitted.labels_).all()


def test_refusals_by_name(blobs):
    r = samebits("train", "--model", "dbscan", "--data", str(blobs), "--valid", str(blobs))
    assert r.returncode == 2 and "--valid is for gradient boosting (DBSCAN" in r.stderr, r.stderr
    r = samebits("train", "--model", "agglomerative", "--data", str(blobs), "n_clusters=3", "distance_threshold=1")
    assert r.returncode != 0 and "exactly one of n_clusters and distance_threshold" in r.stderr, r.stderr
    r = samebits("train", "--model", "spectral", "--data", str(blobs), "--valid", str(blobs))
    assert r.returncode == 2 and "--valid is for gradient boosting (spectral clustering" in r.stderr, r.stderr
    r = samebits("train", "--model", "spectral", "--data", str(blobs), "assign_labels=discretize")
    assert r.returncode != 0 and "assign_labels='discretize' is not supported" in r.stderr, r.stderr
    r = samebits("train", "--model", "dbscan", "--data", str(blobs), "metric=chebyshev")
    assert r.returncode != 0 and "metric='chebyshev' is not supported" in r.stderr, r.stderr
