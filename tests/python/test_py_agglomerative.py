"""samebits.AgglomerativeClustering against scikit-learn's: the same clusters
on data without distance ties under every linkage, merge distances within
float32 rounding, the same tree as scikit-learn's on data full of ties, the distance threshold, the same bits at every
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
    # 0, 1, 2, 3 on a line: every adjacent pair at distance 1. Single linkage grows the spanning tree from row 0
    # (value 3): row 2 (value 2) first, then row 3 (1), then row 1 (0); all three merges at distance 1 keep that
    # order, so n_clusters=3 undoes the last two; clusters are numbered by their smallest row
    X = np.array([[3.0], [0.0], [2.0], [1.0]], np.float32)
    a = samebits.AgglomerativeClustering(n_clusters=3, linkage="single").fit(X)
    assert a.labels_.tolist() == [0, 1, 0, 2]
    assert a.children_.tolist() == [[0, 2], [4, 3], [5, 1]]


@pytest.mark.parametrize("linkage", ["ward", "complete", "average", "single"])
def test_agglomerative_ties_as_scikit_learn(linkage):
    """Rows on a small integer grid tie most distances: the tree (children_) is scikit-learn's node for node,
    its merge distances are scikit-learn's float64 ones rounded to float32, and the clusters are the same, at
    every size of cut. A changed tie rule (the nearest-neighbor chain's or the merges' stable order) fails it."""
    cluster = pytest.importorskip("sklearn.cluster")
    from sklearn.metrics import adjusted_rand_score
    rng = np.random.default_rng(7)
    for trial in range(8):
        # trials 6 and 7: 40 features (the matrix's vector kernel; single linkage from the matrix)
        n, d = int(rng.integers(30, 200)), int(rng.integers(1, 9)) if trial < 6 else 40
        X = rng.integers(0, 4, size=(n, d)).astype(np.float32)
        if trial % 3 == 2:
            X = X * np.float32(0.1) + np.float32(1000.0)
        k = int(rng.integers(1, 12))
        ours = samebits.AgglomerativeClustering(n_clusters=k, linkage=linkage, compute_distances=True).fit(X)
        theirs = cluster.AgglomerativeClustering(n_clusters=k, linkage=linkage, compute_distances=True).fit(X)
        assert np.array_equal(ours.children_, theirs.children_), (trial, n, d)
        assert np.array_equal(ours.distances_, theirs.distances_.astype(np.float32)), (trial, n, d)
        assert adjusted_rand_score(theirs.labels_, ours.labels_) == 1.0, (trial, n, d, k)


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


@pytest.mark.parametrize("device", ["opencl", "cuda"])
@pytest.mark.parametrize("linkage,n", [("ward", 4200), ("complete", 300), ("average", 300), ("single", 4200)])
def test_agglomerative_on_a_gpu_is_the_cpu_model(device, linkage, n):
    """The distance matrix on the device (integer binary64, read back in
    blocks of rows: 4,200 rows are two blocks), the chain on the host: the
    CPU's tree, labels and model bytes. Single linkage on the CPU runs from
    the rows at 4 features, on the device from the matrix: the same tree.
    PoCL's OpenCL in CI; a backend that is not here is a skip."""
    X = _blobs(n=n, seed=11)
    X[7] = X[3]  # a duplicate: a distance of exactly 0
    ref = samebits.AgglomerativeClustering(n_clusters=5, linkage=linkage).fit(X)
    try:
        est = samebits.AgglomerativeClustering(n_clusters=5, linkage=linkage, device=device).fit(X)
    except samebits.BackendUnavailableError as e:
        pytest.skip("no %s here: %s" % (device, e))
    assert est.model_digest_ == ref.model_digest_
    assert np.array_equal(est.labels_, ref.labels_) and np.array_equal(est.children_, ref.children_)


def test_agglomerative_on_a_gpu_refuses_single_linkage_past_the_matrix():
    """device=cpu runs single linkage from the rows up to 1,000,000 of them;
    a GPU computes the n x n matrix, so it takes at most 40,000 (refused
    before any work, by name)."""
    X = np.zeros((40001, 2), dtype=np.float32)
    try:
        with pytest.raises(samebits.LimitError, match="on a GPU takes at most 40000 rows"):
            samebits.AgglomerativeClustering(linkage="single", device="opencl").fit(X)
    except samebits.BackendUnavailableError as e:
        pytest.skip("no opencl here: %s" % e)
