"""samebits.AgglomerativeClustering against scikit-learn's: the same clusters
on data without distance ties under every linkage, merge distances within
float32 rounding, the tie rule, the distance threshold, the same bits at every
thread count, save/load, pickle, and refusals by name."""
import pickle

import pytest

import samebits

np = pytest.importorskip("numpy")


def _blobs(n=400, d=4, k=5, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 6, size=(k, d))
    return np.concatenate([c + rng.normal(0, 1.0, size=(n // k, d)) for c in centers]).astype(np.float32)


@pytest.mark.parametrize("linkage", ["ward", "complete", "average", "single"])
def test_agglomerative_beside_sklearn(linkage):
    cluster = pytest.importorskip("sklearn.cluster")
    from sklearn.metrics import adjusted_rand_score
    X = _blobs()
    ours = samebits.AgglomerativeClustering(n_clusters=5, linkage=linkage, compute_distances=True).fit(X)
    theirs = cluster.AgglomerativeClustering(n_clusters=5, linkage=linkage, compute_distances=True).fit(X)
    assert adjusted_rand_score(theirs.labels_, ours.labels_) == 1.0
    assert np.allclose(np.sort(ours.distances_), np.sort(theirs.distances_), rtol=1e-6)
    assert ours.children_.shape == (399, 2) and ours.n_leaves_ == 400 and ours.n_clusters_ == 5
    t = samebits.AgglomerativeClustering(n_clusters=None, distance_threshold=3.0, linkage=linkage).fit(X)
    s = cluster.AgglomerativeClustering(n_clusters=None, distance_threshold=3.0, linkage=linkage).fit(X)
    assert t.n_clusters_ == s.n_clusters_ and adjusted_rand_score(s.labels_, t.labels_) == 1.0


def test_agglomerative_tie_rule_and_numbering():
    # 0, 1, 2, 3 on a line: every adjacent pair at distance 1; the least (distance, lower id, higher id)
    # merges {0, 1} first, then {2, 3}; clusters are numbered by their smallest row
    X = np.array([[3.0], [0.0], [2.0], [1.0]], np.float32)  # rows 1 (0.0) and 3 (1.0) are ids 1 and 3
    a = samebits.AgglomerativeClustering(n_clusters=3, linkage="single").fit(X)
    # the pairs at distance 1: (0, 2) [3 and 2], (1, 3) [0 and 1], (2, 3) [2 and 1]: (0, 2) merges first
    assert a.labels_.tolist() == [0, 1, 0, 2]
    assert a.children_[0].tolist() == [0, 2]


def test_agglomerative_same_bits_everywhere_and_through_files(tmp_path):
    X = _blobs(seed=4)
    digests = {samebits.AgglomerativeClustering(n_clusters=4, n_jobs=j).fit(X).model_digest_ for j in (1, 2, 3)}
    assert len(digests) == 1
    a = samebits.AgglomerativeClustering(n_clusters=4, linkage="average").fit(X)
    path = str(tmp_path / "a.sbm")
    a.save_model(path)
    back = samebits.load_model(path)
    assert type(back).__name__ == "AgglomerativeClustering" and back.model_digest_ == a.model_digest_
    assert np.array_equal(back.labels_, a.labels_) and np.array_equal(back.children_, a.children_)
    p = pickle.loads(pickle.dumps(a))
    assert p.model_digest_ == a.model_digest_


def test_agglomerative_refusals_by_name():
    X = _blobs(n=40)
    with pytest.raises(ValueError, match="Exactly one"):
        samebits.AgglomerativeClustering(n_clusters=None).fit(X)
    with pytest.raises(ValueError, match="Exactly one"):
        samebits.AgglomerativeClustering(n_clusters=3, distance_threshold=1.0).fit(X)
    with pytest.raises(ValueError, match="median"):
        samebits.AgglomerativeClustering(linkage="median").fit(X)
    with pytest.raises(ValueError, match="manhattan"):
        samebits.AgglomerativeClustering(metric="manhattan", linkage="average").fit(X)
    with pytest.raises(ValueError, match="connectivity"):
        samebits.AgglomerativeClustering(connectivity=np.eye(40)).fit(X)
    with pytest.raises(ValueError, match="n_clusters=41"):
        samebits.AgglomerativeClustering(n_clusters=41).fit(X)
    Xn = X.copy()
    Xn[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        samebits.AgglomerativeClustering().fit(Xn)
