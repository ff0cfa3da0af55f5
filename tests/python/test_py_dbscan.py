"""samebits.DBSCAN against scikit-learn's DBSCAN: the same core rows and noise,
labels within an adjusted Rand index of 0.99 (border rows may differ by the
stated rule), the border rule itself, the same bits at every thread count,
sample weights, save/load, pickle, and refusals by name."""
import pickle

import pytest

import samebits

np = pytest.importorskip("numpy")


def _blobs(n=800, d=3, k=4, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 5, size=(k, d))
    return np.concatenate([c + rng.normal(0, 0.7, size=(n // k, d)) for c in centers]).astype(np.float32)


@pytest.mark.parametrize("metric,eps", [("euclidean", 0.6), ("cosine", 0.01), ("manhattan", 0.9)])
def test_dbscan_beside_sklearn(metric, eps):
    cluster = pytest.importorskip("sklearn.cluster")
    from sklearn.metrics import adjusted_rand_score
    X = _blobs()
    w = np.random.default_rng(3).integers(0, 3, len(X)).astype(np.float32)
    for sw in (None, w):
        ours = samebits.DBSCAN(eps=eps, min_samples=6, metric=metric).fit(X, sample_weight=sw)
        theirs = cluster.DBSCAN(eps=eps, min_samples=6, metric=metric, algorithm="brute").fit(X, sample_weight=sw)
        assert np.array_equal(ours.core_sample_indices_, theirs.core_sample_indices_)
        assert np.array_equal(ours.labels_ < 0, theirs.labels_ < 0)
        assert adjusted_rand_score(theirs.labels_, ours.labels_) >= 0.99
        assert ours.components_.shape == (len(ours.core_sample_indices_), 3)
        assert np.array_equal(ours.components_, X[ours.core_sample_indices_])


def test_dbscan_border_rule_and_numbering():
    # (3,0) x3 and (2,0) form one cluster, (0,0) and (-1,0) x3 another; (1,0) is a border row exactly
    # eps from the cores (2,0) (row 3) and (0,0) (row 5): it joins row 3's cluster, numbered 0 (it holds row 0)
    X = np.array([[3, 0], [3, 0], [3, 0], [2, 0], [1, 0], [0, 0], [-1, 0], [-1, 0], [-1, 0], [9, 9]], np.float32)
    d = samebits.DBSCAN(eps=1.0, min_samples=4).fit(X)
    assert d.labels_.tolist() == [0, 0, 0, 0, 0, 1, 1, 1, 1, -1]
    assert d.core_sample_indices_.tolist() == [0, 1, 2, 3, 5, 6, 7, 8]
    assert (samebits.DBSCAN(eps=1e-3, min_samples=2).fit(X[[0, 3, 9]]).labels_ == -1).all()  # all noise


def test_dbscan_same_bits_at_every_thread_count_and_through_files(tmp_path):
    X = _blobs(seed=5)
    digests = set()
    for n_jobs in (1, 2, 3):
        digests.add(samebits.DBSCAN(eps=0.6, min_samples=5, n_jobs=n_jobs).fit(X).model_digest_)
    assert len(digests) == 1
    d = samebits.DBSCAN(eps=0.6, min_samples=5).fit(X)
    path = str(tmp_path / "d.sbm")
    d.save_model(path)
    back = samebits.load_model(path)
    assert type(back).__name__ == "DBSCAN" and back.model_digest_ == d.model_digest_
    assert np.array_equal(back.labels_, d.labels_)
    p = pickle.loads(pickle.dumps(d))
    assert p.model_digest_ == d.model_digest_ and np.array_equal(p.labels_, d.labels_)


def test_dbscan_refusals_by_name():
    X = _blobs(n=40)
    with pytest.raises(ValueError, match="eps"):
        samebits.DBSCAN(eps=0).fit(X)
    with pytest.raises(ValueError, match="chebyshev"):
        samebits.DBSCAN(metric="chebyshev").fit(X)
    with pytest.raises(ValueError, match="p=1 does not go with metric=euclidean"):
        samebits.DBSCAN(p=1).fit(X)
    with pytest.raises(ValueError, match="p=3: minkowski"):
        samebits.DBSCAN(metric="minkowski", p=3).fit(X)
    assert samebits.DBSCAN(metric="minkowski", p=1).fit(X).model_digest_ == \
        samebits.DBSCAN(metric="manhattan").fit(X).model_digest_
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        samebits.DBSCAN().fit(Xn)
    with pytest.raises(Exception, match="cuda"):  # no CUDA build, or the cpu-only refusal by name
        samebits.DBSCAN(device="cuda").fit(X)
