"""samebits.KMeans against scikit-learn's KMeans: quality on blobs, the same
bits at every thread count, save/load, pickle, sample weights, given centers,
and refusals by name."""
import pickle
import warnings

import pytest

import samebits

np = pytest.importorskip("numpy")


def _blobs(n=600, d=5, k=4, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 4, size=(k, d))
    X = np.concatenate([c + rng.normal(0, 0.6, size=(n // k, d)) for c in centers]).astype(np.float32)
    truth = np.repeat(np.arange(k), n // k)
    return X, truth


def test_kmeans_quality_beside_sklearn():
    cluster = pytest.importorskip("sklearn.cluster")
    from sklearn.metrics import adjusted_rand_score
    X, truth = _blobs()
    ours = samebits.KMeans(n_clusters=4, n_init=3, random_state=0).fit(X)
    theirs = cluster.KMeans(n_clusters=4, n_init=3, random_state=0).fit(X)
    assert ours.inertia_ <= theirs.inertia_ * 1.005
    assert adjusted_rand_score(truth, ours.labels_) >= adjusted_rand_score(truth, theirs.labels_) - 0.02
    assert ours.cluster_centers_.shape == (4, 5) and ours.n_features_in_ == 5
    assert ours.labels_.dtype == np.int32 and ours.labels_.shape == (600,)
    assert 1 <= ours.n_iter_ <= 300
    # predict is the assignment labels_ holds; transform's argmin is predict; score is -sum of the squares
    assert (ours.predict(X) == ours.labels_).all()
    dist = np.asarray(ours.transform(X))
    assert dist.shape == (600, 4) and (dist.argmin(axis=1) == ours.labels_).all()
    assert ours.score(X) == pytest.approx(-ours.inertia_, rel=1e-5)


def test_kmeans_same_bits_at_every_thread_count():
    X, _ = _blobs(n=2000, d=9, k=5, seed=3)
    digests = {samebits.KMeans(n_clusters=5, n_init=2, random_state=7, n_jobs=t).fit(X).model_digest_
               for t in (1, 2, 7)}
    assert len(digests) == 1
    # a different seed is a different fit (the draws are keyed by it)
    other = samebits.KMeans(n_clusters=5, n_init=2, random_state=8).fit(X).model_digest_
    assert other not in digests


def test_kmeans_init_choices_and_weights():
    X, _ = _blobs(seed=5)
    given = X[[0, 150, 300, 450]]
    a = samebits.KMeans(n_clusters=4, init=given).fit(X)
    b = samebits.KMeans(n_clusters=4, init=given.tolist()).fit(X)
    assert a.model_digest_ == b.model_digest_
    with pytest.warns(RuntimeWarning, match="only one init"):
        samebits.KMeans(n_clusters=4, init=given, n_init=5).fit(X)
    r = samebits.KMeans(n_clusters=4, init="random", random_state=1).fit(X)
    assert r.n_iter_ >= 1
    # unit weights are no weights; doubled weights change the inertia by the factor only
    w1 = samebits.KMeans(n_clusters=4, init=given).fit(X, sample_weight=np.ones(len(X)))
    assert w1.model_digest_ == a.model_digest_
    w2 = samebits.KMeans(n_clusters=4, init=given).fit(X, sample_weight=np.full(len(X), 2.0))
    assert np.array_equal(w2.cluster_centers_, a.cluster_centers_)
    assert w2.inertia_ == pytest.approx(2 * a.inertia_, rel=1e-6)


def test_kmeans_save_load_pickle(tmp_path):
    X, _ = _blobs(seed=2)
    m = samebits.KMeans(n_clusters=3, random_state=4).fit(X)
    path = tmp_path / "km.model"
    m.save_model(str(path))
    loaded = samebits.load_model(str(path))
    assert type(loaded) is samebits.KMeans
    assert loaded.model_digest_ == m.model_digest_
    assert np.array_equal(loaded.cluster_centers_, m.cluster_centers_) and loaded.inertia_ == m.inertia_
    assert (loaded.predict(X) == m.labels_).all()
    again = samebits.KMeans().load_model(m.model_bytes())
    assert again.n_iter_ == m.n_iter_
    p = pickle.loads(pickle.dumps(m))
    assert p.model_digest_ == m.model_digest_ and (p.predict(X) == m.labels_).all()
    with pytest.raises(samebits.InvalidInputError, match="KMeans cannot hold it"):
        samebits.KMeans().load_model(samebits.Ridge().fit(X, X[:, 0]).model_bytes())


def test_kmeans_hostile_inputs_refused_by_name():
    X, _ = _blobs(n=40, seed=1)
    with pytest.raises(samebits.InvalidArgumentError, match="n_samples=40 should be >= n_clusters=50"):
        samebits.KMeans(n_clusters=50).fit(X)
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(samebits.InvalidInputError, match="row 3, feature 2 is missing"):
        samebits.KMeans(n_clusters=2).fit(bad)
    with pytest.raises(samebits.InvalidArgumentError, match="init='kmeans'"):
        samebits.KMeans(n_clusters=2, init="kmeans").fit(X)
    with pytest.raises(samebits.InvalidArgumentError, match="does not match"):
        samebits.KMeans(n_clusters=2, init=X[:3]).fit(X)
    with pytest.raises(samebits.InvalidArgumentError, match="must be finite and >= 0"):
        samebits.KMeans(n_clusters=2).fit(X, sample_weight=np.full(len(X), -1.0))
    with pytest.raises(samebits.InvalidInputError, match="sum to zero"):
        samebits.KMeans(n_clusters=2).fit(X, sample_weight=np.zeros(len(X)))
    with pytest.raises(samebits.BackendUnavailableError, match="cpu only|no CUDA backend"):
        samebits.KMeans(n_clusters=2, device="cuda").fit(X)
    with pytest.warns(UserWarning, match="elkan"):
        samebits.KMeans(n_clusters=2, algorithm="elkan").fit(X)
    m = samebits.KMeans(n_clusters=2).fit(X)
    with pytest.raises(samebits.InvalidInputError, match="feature-count mismatch"):
        m.predict(X[:, :3])


def test_kmeans_duplicates_and_one_cluster():
    # three distinct points, ten copies each, five clusters: empty clusters are refilled, nothing fails
    rng = np.random.default_rng(0)
    pts = rng.normal(size=(3, 2)).astype(np.float32)
    X = np.repeat(pts, 10, axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = samebits.KMeans(n_clusters=5, random_state=1).fit(X)
    assert m.inertia_ == 0.0
    assert set(m.labels_.tolist()) <= set(range(5))
    one = samebits.KMeans(n_clusters=1).fit(X)
    assert np.allclose(one.cluster_centers_[0], X.astype(np.float64).mean(axis=0), atol=1e-6)
    assert (one.labels_ == 0).all()


@pytest.mark.parametrize("device", ["opencl", "cuda"])
@pytest.mark.parametrize("kw,weighted", [(dict(n_clusters=6), False), (dict(n_clusters=6), True),
                                         (dict(n_clusters=4, init="random", n_init=3), True),
                                         (dict(n_clusters=3, max_iter=2), False)],
                         ids=["kmeans++", "kmeans++-weighted", "random-weighted", "max_iter"])
def test_kmeans_on_a_gpu_is_the_cpu_model(device, kw, weighted):
    """KMeans(device=...) gives the CPU's model bytes, labels, inertia and
    distances (PoCL's OpenCL in CI; CUDA and NVIDIA's OpenCL on the H200);
    a backend that is not here is a skip, named."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 21)).astype(np.float32)
    X[:1000, :3] += 4.0
    w = rng.uniform(0, 3, size=len(X)).astype(np.float32) if weighted else None
    ref = samebits.KMeans(random_state=2, **kw).fit(X, sample_weight=w)
    try:
        est = samebits.KMeans(random_state=2, device=device, **kw).fit(X, sample_weight=w)
    except samebits.BackendUnavailableError as e:
        pytest.skip("no %s here: %s" % (device, e))
    assert est.model_digest_ == ref.model_digest_
    assert np.array_equal(est.labels_, ref.labels_) and est.inertia_ == ref.inertia_ and est.n_iter_ == ref.n_iter_
    assert np.array_equal(np.asarray(est.transform(X[:50])), np.asarray(ref.transform(X[:50])))
    assert np.array_equal(est.predict(X), ref.labels_)
