"""samebits.SpectralClustering against scikit-learn's: the same clusters on
separated data (rbf and nearest-neighbors affinities), a precomputed
affinity, the same bits at every thread count, save/load, pickle, refusals by
name; and scikit-learn's check_estimator on every clusterer, with the checks
that fail pinned and why."""
import pickle

import pytest

import samebits

np = pytest.importorskip("numpy")


def _blobs(n=240, d=3, k=4, seed=0, spread=1.0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 6, size=(k, d))
    return np.concatenate([c + rng.normal(0, spread, size=(n // k, d)) for c in centers]).astype(np.float32)


@pytest.mark.parametrize("affinity,kw", [("rbf", dict(gamma=0.1)), ("nearest_neighbors", dict(n_neighbors=8))])
def test_spectral_beside_sklearn(affinity, kw):
    cluster = pytest.importorskip("sklearn.cluster")
    from sklearn.metrics import adjusted_rand_score
    X = _blobs()
    ours = samebits.SpectralClustering(n_clusters=4, affinity=affinity, random_state=0, **kw).fit(X)
    theirs = cluster.SpectralClustering(n_clusters=4, affinity=affinity, random_state=0, **kw).fit(X)
    assert adjusted_rand_score(theirs.labels_, ours.labels_) >= 0.99
    assert ours.labels_.dtype == np.int64 and ours.labels_.shape == (240,)


def test_spectral_precomputed_affinity():
    X = _blobs(n=120, seed=2)
    d2 = ((X[:, None, :].astype(np.float64) - X[None, :, :]) ** 2).sum(-1)
    A = np.exp(-0.1 * d2).astype(np.float32)
    A = np.minimum(A, A.T)  # exactly symmetric
    a = samebits.SpectralClustering(n_clusters=4, affinity="precomputed", random_state=1).fit(A)
    cluster = pytest.importorskip("sklearn.cluster")
    from sklearn.metrics import adjusted_rand_score
    b = cluster.SpectralClustering(n_clusters=4, affinity="precomputed", random_state=1).fit(A)
    assert adjusted_rand_score(a.labels_, b.labels_) >= 0.99
    bad = A.copy()
    bad[0, 1] += 0.5
    with pytest.raises(samebits.InvalidInputError, match="not symmetric"):
        samebits.SpectralClustering(n_clusters=4, affinity="precomputed").fit(bad)
    with pytest.raises(samebits.InvalidInputError, match="square"):
        samebits.SpectralClustering(n_clusters=4, affinity="precomputed").fit(A[:, :50])


def test_spectral_same_bits_everywhere_and_through_files(tmp_path):
    X = _blobs(seed=4, spread=2.0)
    for affinity in ("rbf", "nearest_neighbors"):
        digests = {samebits.SpectralClustering(n_clusters=4, affinity=affinity, gamma=0.05, n_jobs=j).fit(X).model_digest_
                   for j in (1, 2, 3)}
        assert len(digests) == 1
    a = samebits.SpectralClustering(n_clusters=4, gamma=0.05).fit(X)
    path = str(tmp_path / "s.sbm")
    a.save_model(path)
    back = samebits.load_model(path)
    assert type(back).__name__ == "SpectralClustering" and back.model_digest_ == a.model_digest_
    assert np.array_equal(back.labels_, a.labels_)
    assert samebits.SpectralClustering().load_model(path).model_digest_ == a.model_digest_
    p = pickle.loads(pickle.dumps(a))
    assert p.model_digest_ == a.model_digest_ and np.array_equal(p.labels_, a.labels_)
    with pytest.raises(samebits.InvalidInputError, match="agglomerative"):
        samebits.SpectralClustering().load_model(samebits.AgglomerativeClustering().fit(X).model_bytes())


def test_spectral_refusals_by_name():
    X = _blobs(n=40)
    with pytest.raises(ValueError, match="discretize"):
        samebits.SpectralClustering(assign_labels="discretize").fit(X)
    with pytest.raises(ValueError, match="poly"):
        samebits.SpectralClustering(affinity="poly").fit(X)
    with pytest.raises(ValueError, match="kernel_params"):
        samebits.SpectralClustering(kernel_params={"a": 1}).fit(X)
    with pytest.raises(ValueError, match="n_clusters=41"):
        samebits.SpectralClustering(n_clusters=41).fit(X)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        samebits.SpectralClustering(n_clusters=2).fit(Xn)
    with pytest.warns(UserWarning, match="verbose"):
        samebits.SpectralClustering(n_clusters=2, verbose=True).fit(X)


@pytest.mark.parametrize("device", ["opencl", "cuda"])
@pytest.mark.parametrize("affinity", ["rbf", "nearest_neighbors"])
def test_spectral_on_a_gpu_is_the_cpu_model(device, affinity):
    """The eigenvectors and the k-means on the device: the CPU's labels and
    model bytes (PoCL's OpenCL in CI; a backend that is not here is a skip)."""
    X = _blobs(n=120, seed=6, spread=2.0)
    ref = samebits.SpectralClustering(n_clusters=4, affinity=affinity, gamma=0.05, random_state=3).fit(X)
    try:
        est = samebits.SpectralClustering(n_clusters=4, affinity=affinity, gamma=0.05, random_state=3,
                                          device=device).fit(X)
    except samebits.BackendUnavailableError as e:
        pytest.skip("no %s here: %s" % (device, e))
    assert est.model_digest_ == ref.model_digest_ and np.array_equal(est.labels_, ref.labels_)


# check_estimator on the clusterers: what fails, and why.
CLUSTER_EXPECTED_FAILURES = {
    "SpectralClustering": set(),
    "DBSCAN": set(),
    "AgglomerativeClustering": set(),
    # k-means++ draws rows by their position in the weighted cumulative mass, so a row
    # repeated twice is two chances where its weight doubled is one: the same clustering
    # in distribution, not the same draws (the check wants the same draws)
    "KMeans": {"check_sample_weight_equivalence_on_dense_data"},
}


@pytest.mark.parametrize("name", sorted(CLUSTER_EXPECTED_FAILURES))
def test_clusterers_check_estimator(name):
    from sk_checks import assert_failed_checks
    est = getattr(samebits, name)()
    if name in ("SpectralClustering", "KMeans"):
        est.set_params(n_clusters=2)
    assert_failed_checks(est, CLUSTER_EXPECTED_FAILURES[name])
