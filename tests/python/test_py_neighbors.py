"""samebits.NearestNeighbors, KNeighborsClassifier and KNeighborsRegressor
against scikit-learn's brute force: the same neighbor indices, distances within
1e-6 relative, the same predictions; X=None (each training row without
itself), radius queries, the graphs, distance weights at distance 0, the same
bits at every thread count, save/load and pickle, and refusals by name."""
import pickle
import warnings

import pytest

import samebits

np = pytest.importorskip("numpy")
sk_neighbors = pytest.importorskip("sklearn.neighbors")


def _data(n=300, q=60, d=6, seed=0):
    """Training rows and queries of float32-exact values (so scikit-learn's
    float64 sees the rows samebits sees)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32).astype(np.float64)
    Q = rng.normal(size=(q, d)).astype(np.float32).astype(np.float64)
    return X, Q


def _labels(X, seed=0):
    rng = np.random.default_rng(seed + 100)
    s = X[:, 0] + 0.5 * X[:, 1] - X[:, 2] + rng.normal(0, 0.3, len(X))
    return np.digitize(s, [-0.8, 0.0, 0.8])  # four classes


def _target(X):
    return (2.0 * X[:, 0] - X[:, 1] * X[:, 2]).astype(np.float32).astype(np.float64)


def _close(ours, theirs, rel=1e-6, abs_=0.0):
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    assert ours.shape == theirs.shape
    assert np.all(np.abs(ours - theirs) <= rel * np.abs(theirs) + abs_), np.max(np.abs(ours - theirs))


# ---- NearestNeighbors -------------------------------------------------------------------------

@pytest.mark.parametrize("metric", ["minkowski", "euclidean", "cosine", "manhattan", "minkowski-p1"])
@pytest.mark.parametrize("k", [1, 5, 17])
def test_kneighbors_match_sklearn_brute(metric, k):
    X, Q = _data(seed=k)
    kw = {"metric": "minkowski", "p": 1} if metric == "minkowski-p1" else {"metric": metric}
    ours = samebits.NearestNeighbors(n_neighbors=k, **kw).fit(X)
    theirs = sk_neighbors.NearestNeighbors(n_neighbors=k, algorithm="brute", **kw).fit(X)
    dist, ind = ours.kneighbors(Q)
    sdist, sind = theirs.kneighbors(Q)
    assert dist.dtype == np.float64 and ind.dtype == np.int64 and dist.shape == ind.shape == (len(Q), k)
    assert np.array_equal(ind, sind)
    _close(dist, sdist, abs_=1e-12 if metric == "cosine" else 0.0)
    # n_neighbors at query time, and return_distance=False
    only = ours.kneighbors(Q, n_neighbors=3, return_distance=False)
    assert np.array_equal(only, theirs.kneighbors(Q, n_neighbors=3, return_distance=False))
    assert ours.effective_metric_ == theirs.effective_metric_ == {"cosine": "cosine", "manhattan": "manhattan",
                                                                  "minkowski-p1": "manhattan"}.get(metric, "euclidean")
    assert ours.n_samples_fit_ == len(X) and ours.n_features_in_ == X.shape[1]


def test_kneighbors_without_x_leave_each_row_out():
    X, _ = _data(n=120, seed=3)
    ours = samebits.NearestNeighbors(n_neighbors=4).fit(X)
    theirs = sk_neighbors.NearestNeighbors(n_neighbors=4, algorithm="brute").fit(X)
    dist, ind = ours.kneighbors()
    sdist, sind = theirs.kneighbors()
    assert np.array_equal(ind, sind)
    _close(dist, sdist)
    assert not (ind == np.arange(len(X))[:, None]).any()  # no row is its own neighbor
    # queried with X itself, each row is its own nearest neighbor at distance 0
    dself, iself = ours.kneighbors(X, n_neighbors=1)
    assert np.array_equal(iself[:, 0], np.arange(len(X))) and (dself == 0).all()
    # the training rows without themselves: n_samples - 1 neighbors at most, refused by name above
    assert ours.kneighbors(n_neighbors=len(X) - 1)[1].shape == (len(X), len(X) - 1)
    with pytest.raises(samebits.InvalidArgumentError, match="each query row leaves itself out"):
        ours.kneighbors(n_neighbors=len(X))
    # duplicates: the k least (distance, index) among the other rows
    dup = np.array([[0.0], [0.0], [0.0], [5.0]])
    d2, i2 = samebits.NearestNeighbors(n_neighbors=2).fit(dup).kneighbors()
    assert i2.tolist() == [[1, 2], [0, 2], [0, 1], [0, 1]] and d2[:3].tolist() == [[0.0, 0.0]] * 3


def test_radius_neighbors_contents():
    X, Q = _data(n=250, q=40, d=3, seed=5)
    ours = samebits.NearestNeighbors(radius=0.9).fit(X)
    theirs = sk_neighbors.NearestNeighbors(radius=0.9, algorithm="brute").fit(X)
    dist, ind = ours.radius_neighbors(Q)
    sdist, sind = theirs.radius_neighbors(Q)
    assert dist.dtype == object and ind.dtype == object and dist.shape == ind.shape == (len(Q),)
    assert sum(len(i) for i in ind) > len(Q)  # the radius finds several rows a query
    for i in range(len(Q)):
        assert ind[i].dtype == np.int64 and dist[i].dtype == np.float64
        assert np.array_equal(ind[i], np.sort(ind[i]))  # index order by default
        order = np.argsort(sind[i])
        assert np.array_equal(ind[i], sind[i][order])
        _close(dist[i], sdist[i][order])
        assert (dist[i] <= 0.9).all()
    # sort_results: by (distance, index), as scikit-learn's
    sd, si = ours.radius_neighbors(Q, radius=1.3, sort_results=True)
    tsd, tsi = theirs.radius_neighbors(Q, radius=1.3, sort_results=True)
    for i in range(len(Q)):
        assert np.array_equal(si[i], tsi[i]) and (np.diff(sd[i]) >= 0).all()
        _close(sd[i], tsd[i])
    # X=None: each training row without itself
    nd, ni = ours.radius_neighbors()
    snd, sni = theirs.radius_neighbors()
    for i in range(len(X)):
        assert i not in ni[i].tolist()
        assert np.array_equal(ni[i], np.sort(sni[i]))
    # return_distance=False; a radius of 0 finds exact copies only
    only = ours.radius_neighbors(Q, return_distance=False)
    assert all(np.array_equal(a, b) for a, b in zip(only, ind))
    zero = ours.radius_neighbors(X[:5], radius=0.0, return_distance=False)
    assert [z.tolist() for z in zero] == [[0], [1], [2], [3], [4]]
    with pytest.raises(samebits.InvalidArgumentError, match="return_distance must be True"):
        ours.radius_neighbors(Q, return_distance=False, sort_results=True)
    with pytest.raises(samebits.InvalidArgumentError, match="radius=-1"):
        ours.radius_neighbors(Q, radius=-1.0)


def test_graphs_match_sklearn():
    sparse = pytest.importorskip("scipy.sparse")
    X, Q = _data(n=150, q=30, d=4, seed=6)
    ours = samebits.NearestNeighbors(n_neighbors=3, radius=1.0).fit(X)
    theirs = sk_neighbors.NearestNeighbors(n_neighbors=3, radius=1.0, algorithm="brute").fit(X)
    for args in ((Q,), ()):
        g = ours.kneighbors_graph(*args)
        assert sparse.isspmatrix_csr(g) and g.shape == (len(args[0]) if args else len(X), len(X))
        assert (g != theirs.kneighbors_graph(*args)).nnz == 0
        gd = ours.kneighbors_graph(*args, mode="distance").toarray()
        _close(gd, theirs.kneighbors_graph(*args, mode="distance").toarray())
        r = ours.radius_neighbors_graph(*args)
        assert sparse.isspmatrix_csr(r) and (r != theirs.radius_neighbors_graph(*args)).nnz == 0
        rd = ours.radius_neighbors_graph(*args, mode="distance", sort_results=True).toarray()
        _close(rd, theirs.radius_neighbors_graph(*args, mode="distance").toarray())
    with pytest.raises(samebits.InvalidArgumentError, match="Unsupported mode"):
        ours.kneighbors_graph(Q, mode="weights")


# ---- classifier and regressor ---------------------------------------------------------------

@pytest.mark.parametrize("weights", ["uniform", "distance"])
@pytest.mark.parametrize("metric", ["minkowski", "cosine", "manhattan"])
def test_classifier_matches_sklearn(weights, metric):
    X, Q = _data(n=400, q=120, d=5, seed=7)
    y, yq = _labels(X), _labels(Q)
    names = np.array(["low", "mid", "high", "top"])[y]  # labels of any sortable type
    ours = samebits.KNeighborsClassifier(n_neighbors=7, weights=weights, metric=metric).fit(X, names)
    theirs = sk_neighbors.KNeighborsClassifier(n_neighbors=7, weights=weights, metric=metric,
                                               algorithm="brute").fit(X, names)
    assert list(ours.classes_) == list(theirs.classes_) and ours.outputs_2d_ is False
    pred = ours.predict(Q)
    assert np.array_equal(pred, theirs.predict(Q))
    truth = np.array(["low", "mid", "high", "top"])[yq]
    assert ours.score(Q, truth) == theirs.score(Q, truth)
    proba = np.asarray(ours.predict_proba(Q))
    assert proba.shape == (len(Q), 4)
    _close(proba, theirs.predict_proba(Q), abs_=1e-7)
    assert np.array_equal(ours.kneighbors(Q)[1], theirs.kneighbors(Q)[1])


def test_distance_weights_at_distance_zero():
    """A query on a training row: that row weighs 1 and the others 0 (scikit-learn's rule)."""
    X, Q = _data(n=200, q=20, d=3, seed=8)
    y = _labels(X)
    Qz = np.vstack([X[[3, 50, 120]], Q])
    ours = samebits.KNeighborsClassifier(n_neighbors=6, weights="distance").fit(X, y)
    theirs = sk_neighbors.KNeighborsClassifier(n_neighbors=6, weights="distance", algorithm="brute").fit(X, y)
    proba = np.asarray(ours.predict_proba(Qz))
    for r, j in enumerate([3, 50, 120]):
        want = np.zeros(len(ours.classes_))
        want[list(ours.classes_).index(y[j])] = 1.0
        assert np.array_equal(proba[r], want)
    _close(proba, theirs.predict_proba(Qz), abs_=1e-7)
    assert np.array_equal(ours.predict(Qz), theirs.predict(Qz))
    # two training rows at one point, with different classes: half each
    X2 = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    c2 = samebits.KNeighborsClassifier(n_neighbors=3, weights="distance").fit(X2, [0, 1, 1, 1])
    assert np.asarray(c2.predict_proba([[0.0, 0.0]])).tolist() == [[0.5, 0.5]]
    # the regressor: the mean of the rows at distance 0
    t = _target(X)
    reg = samebits.KNeighborsRegressor(n_neighbors=4, weights="distance").fit(X, t)
    assert np.asarray(reg.predict(X[[7]])).tolist() == [np.float32(t[7])]


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_regressor_matches_sklearn(weights):
    X, Q = _data(n=300, q=80, d=4, seed=9)
    t, tq = _target(X), _target(Q)
    ours = samebits.KNeighborsRegressor(n_neighbors=5, weights=weights).fit(X, t)
    theirs = sk_neighbors.KNeighborsRegressor(n_neighbors=5, weights=weights, algorithm="brute").fit(X, t)
    pred = ours.predict(Q)
    assert isinstance(pred, samebits.Array) and pred.shape == (len(Q),)
    _close(pred, theirs.predict(Q), rel=1e-6, abs_=1e-6)
    assert ours.score(Q, tq) == pytest.approx(theirs.score(Q, tq), rel=1e-5)
    assert not hasattr(ours, "classes_")


# ---- the same bits at every thread count -------------------------------------------------------

def test_same_bits_at_every_thread_count(monkeypatch):
    X, Q = _data(n=1500, q=300, d=12, seed=10)
    y = _labels(X)
    results = set()
    for t in ("1", "2"):
        monkeypatch.setenv("SAMEBITS_NUM_THREADS", t)
        samebits.set_num_threads(0)
        assert samebits.get_num_threads() == int(t)
        c = samebits.KNeighborsClassifier(n_neighbors=9, weights="distance").fit(X, y)
        dist, ind = c.kneighbors(Q)
        results.add((c.model_digest_, dist.tobytes(), ind.tobytes(), np.asarray(c.predict_proba(Q)).tobytes(),
                     c.kneighbors()[1].tobytes()))
    for n_jobs in (1, 2, 5):
        c = samebits.KNeighborsClassifier(n_neighbors=9, weights="distance", n_jobs=n_jobs).fit(X, y)
        dist, ind = c.kneighbors(Q)
        results.add((c.model_digest_, dist.tobytes(), ind.tobytes(), np.asarray(c.predict_proba(Q)).tobytes(),
                     c.kneighbors()[1].tobytes()))
    assert len(results) == 1
    digests = {samebits.NearestNeighbors(n_jobs=n).fit(X).model_digest_ for n in (1, 2)}
    assert len(digests) == 1


# ---- model files and pickles ---------------------------------------------------------------------

def test_save_load_and_pickle(tmp_path):
    X, Q = _data(n=200, q=30, d=4, seed=11)
    y = np.array(["cat", "dog", "eel", "fox"])[_labels(X)]
    c = samebits.KNeighborsClassifier(n_neighbors=3, weights="distance", metric="cosine", radius=0.25).fit(X, y)
    r = samebits.KNeighborsRegressor(n_neighbors=4).fit(X, _target(X))
    n = samebits.NearestNeighbors(n_neighbors=2, radius=0.75).fit(X)
    for est, cls in ((c, samebits.KNeighborsClassifier), (r, samebits.KNeighborsRegressor),
                     (n, samebits.NearestNeighbors)):
        path = tmp_path / (cls.__name__ + ".sbm")
        est.save_model(str(path))
        back = samebits.load_model(str(path))
        assert type(back) is cls and back.model_digest_ == est.model_digest_
        assert np.array_equal(back.kneighbors(Q)[1], est.kneighbors(Q)[1])
        again = cls().load_model(est.model_bytes())
        assert again.model_digest_ == est.model_digest_
        p = pickle.loads(pickle.dumps(est))
        assert type(p) is cls and p.model_digest_ == est.model_digest_
        assert np.array_equal(p.kneighbors(Q)[0], est.kneighbors(Q)[0])
        assert back.n_neighbors == est.n_neighbors and back.radius == est.radius
        assert back.effective_metric_ == est.effective_metric_
    # a pickle keeps the labels; a file holds class indices only: classes_ 0..K-1
    p = pickle.loads(pickle.dumps(c))
    assert list(p.classes_) == ["cat", "dog", "eel", "fox"] and np.array_equal(p.predict(Q), c.predict(Q))
    back = samebits.load_model(c.model_bytes())
    assert list(back.classes_) == [0, 1, 2, 3] and back.weights == "distance" and back.metric == "cosine"
    assert np.array_equal(c.classes_[back.predict(Q)], c.predict(Q))
    assert np.array_equal(np.asarray(back.predict_proba(Q)), np.asarray(c.predict_proba(Q)))
    # the radius the file was fitted with is the queries' default
    rb = samebits.load_model(n.model_bytes())
    assert all(np.array_equal(a, b) for a, b in zip(rb.radius_neighbors(Q)[1], n.radius_neighbors(Q)[1]))
    # another task's or family's file is refused by name
    with pytest.raises(samebits.InvalidInputError, match="knn regression model .*a KNeighborsClassifier cannot"):
        samebits.KNeighborsClassifier().load_model(r.model_bytes())
    with pytest.raises(samebits.InvalidInputError, match="holds a kmeans model; a NearestNeighbors cannot"):
        samebits.NearestNeighbors().load_model(samebits.KMeans(n_clusters=2).fit(X).model_bytes())


# ---- refusals by name ---------------------------------------------------------------------------

def test_bad_input_refused_by_name():
    X, Q = _data(n=40, q=5, d=3, seed=12)
    y = _labels(X)
    bad = X.copy()
    bad[4, 1] = np.nan
    for est in (samebits.NearestNeighbors(), samebits.KNeighborsClassifier(), samebits.KNeighborsRegressor()):
        with pytest.raises(samebits.InvalidInputError, match=r"row 4, feature 1: missing \(NaN\)"):
            est.fit(bad, y)
    fitted = samebits.KNeighborsClassifier(n_neighbors=3).fit(X, y)
    with pytest.raises(samebits.InvalidInputError, match=r"row 4, feature 1: missing \(NaN\)"):
        fitted.predict(bad)
    with pytest.raises(samebits.InvalidInputError, match="infinite"):
        fitted.kneighbors(np.full((1, 3), np.inf))
    with pytest.raises(samebits.InvalidArgumentError, match="n_neighbors = 41, n_samples_fit = 40"):
        samebits.KNeighborsClassifier(n_neighbors=41).fit(X, y)
    with pytest.raises(samebits.InvalidArgumentError, match="n_neighbors = 50"):
        samebits.KNeighborsRegressor(n_neighbors=50).fit(X, _target(X))
    with pytest.raises(samebits.InvalidArgumentError, match="metric='chebyshev' is not supported"):
        samebits.NearestNeighbors(metric="chebyshev").fit(X)
    with pytest.raises(samebits.InvalidArgumentError, match="p=3: minkowski is supported with p=1"):
        samebits.KNeighborsClassifier(p=3).fit(X, y)
    with pytest.raises(samebits.InvalidArgumentError, match="p=1 does not go with metric=euclidean"):
        samebits.KNeighborsClassifier(metric="euclidean", p=1).fit(X, y)
    with pytest.raises(samebits.InvalidArgumentError, match="p=1.5: minkowski is supported with p=1"):
        samebits.NearestNeighbors(p=1.5).fit(X)
    assert samebits.NearestNeighbors(p=1.0).fit(X).effective_metric_ == "manhattan"
    assert samebits.NearestNeighbors(p=2.0).fit(X).effective_metric_ == "euclidean"
    with pytest.raises(samebits.InvalidArgumentError, match="metric_params"):
        samebits.NearestNeighbors(metric_params={"w": [1, 2, 3]}).fit(X)
    with pytest.raises(samebits.InvalidArgumentError, match="weights as a callable"):
        samebits.KNeighborsClassifier(weights=lambda d: d).fit(X, y)
    with pytest.raises(samebits.InvalidArgumentError, match="weights='gaussian'"):
        samebits.KNeighborsRegressor(weights="gaussian").fit(X, _target(X))
    with pytest.raises(samebits.InvalidArgumentError, match="algorithm='octree'"):
        samebits.NearestNeighbors(algorithm="octree").fit(X)
    with pytest.raises(samebits.InvalidArgumentError, match="tpu"):
        samebits.NearestNeighbors(device="tpu").fit(X)
    with pytest.raises(samebits.InvalidInputError, match="multi-output y"):
        samebits.KNeighborsRegressor().fit(X, np.stack([_target(X)] * 2, axis=1))
    with pytest.raises(samebits.InvalidInputError, match="multi-output y"):
        samebits.KNeighborsClassifier().fit(X, np.stack([y, y], axis=1))
    with pytest.raises(samebits.InvalidInputError, match="inconsistent numbers of samples"):
        samebits.KNeighborsRegressor().fit(X, _target(X)[:-1])
    with pytest.raises(samebits.InvalidArgumentError, match="Expected n_neighbors > 0"):
        fitted.kneighbors(Q, n_neighbors=0)
    with pytest.raises(samebits.InvalidArgumentError, match="needs at most 40 training rows"):
        fitted.kneighbors(Q, n_neighbors=41)
    with pytest.raises(samebits.InvalidInputError, match="feature-count mismatch"):
        fitted.kneighbors(Q[:, :2])
    with pytest.raises(samebits.NotFittedError):
        samebits.NearestNeighbors().kneighbors()
    with pytest.raises(samebits.ModeUnsupportedError):
        samebits.NearestNeighbors(numeric_mode="fast").fit(X)


def test_options_without_effect_warn():
    X, Q = _data(n=60, q=5, d=3, seed=13)
    ref = samebits.NearestNeighbors().fit(X)
    with pytest.warns(UserWarning, match="same exact neighbors"):
        tree = samebits.NearestNeighbors(algorithm="kd_tree").fit(X)
    with pytest.warns(UserWarning, match="leaf_size=10 has no effect"):
        leaf = samebits.NearestNeighbors(leaf_size=10).fit(X)
    assert np.array_equal(tree.kneighbors(Q)[1], ref.kneighbors(Q)[1])
    assert np.array_equal(leaf.kneighbors(Q)[1], ref.kneighbors(Q)[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        samebits.NearestNeighbors(algorithm="brute").fit(X)


# ---- scikit-learn's conventions ---------------------------------------------------------------

def test_sklearn_pipeline_and_grid_search():
    pytest.importorskip("sklearn")
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    X, _ = _data(n=200, d=4, seed=14)
    y = _labels(X)
    est = samebits.KNeighborsClassifier(n_neighbors=4, weights="distance")
    assert clone(est).get_params() == est.get_params()
    pipe = make_pipeline(StandardScaler(), samebits.KNeighborsClassifier()).fit(X, y)
    assert pipe.score(X, y) > 0.7
    grid = GridSearchCV(samebits.KNeighborsRegressor(), {"n_neighbors": [2, 5], "weights": ["uniform", "distance"]},
                        cv=3).fit(X, _target(X))
    assert grid.best_params_["n_neighbors"] in (2, 5)


@pytest.mark.parametrize("name", ["NearestNeighbors", "KNeighborsClassifier", "KNeighborsRegressor"])
def test_check_estimator(name):
    from sk_checks import assert_failed_checks
    assert_failed_checks(getattr(samebits, name)(), set())


@pytest.mark.parametrize("device", ["opencl", "cuda"])
def test_neighbors_on_a_gpu_are_the_cpus(device):
    """On a GPU the screen runs on the device (its products fused, its candidates in whatever order the
    atomics give) and the exact distances on the host: kneighbors (queries and the rows themselves),
    radius_neighbors, the classifier's probabilities and DBSCAN's labels equal the CPU's, ties, duplicates,
    cosine, k above the device's 32 and a query whose candidates overflow the device's room included (PoCL's
    OpenCL in CI; CUDA and NVIDIA's OpenCL on the H200); a backend that is not here is a skip, named."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(2500, 19)).astype(np.float32)
    X[:600] = np.round(X[:600])
    X[40:60] = X[3]
    Q = np.concatenate([rng.normal(size=(300, 19)).astype(np.float32), X[:20]])
    y = (X[:, 0] > 0).astype(np.int64)
    try:
        samebits.NearestNeighbors(device=device).fit(X[:10]).kneighbors(X[:2])
    except samebits.BackendUnavailableError as e:
        pytest.skip("no %s here: %s" % (device, e))
    for metric, k, r in (("euclidean", 7, 3.0), ("cosine", 5, 0.2), ("euclidean", 40, 2.5)):
        cpu = samebits.NearestNeighbors(n_neighbors=k, metric=metric).fit(X)
        gpu = samebits.NearestNeighbors(n_neighbors=k, metric=metric, device=device).fit(X)
        for a, b in ((cpu.kneighbors(Q), gpu.kneighbors(Q)), (cpu.kneighbors(), gpu.kneighbors())):
            assert np.array_equal(np.asarray(a[0]), np.asarray(b[0])) and np.array_equal(np.asarray(a[1]), np.asarray(b[1]))
        a, b = cpu.radius_neighbors(Q, radius=r, sort_results=True), gpu.radius_neighbors(Q, radius=r, sort_results=True)
        assert all(np.array_equal(np.asarray(u), np.asarray(v)) for u, v in zip(a[1], b[1]))
        assert all(np.array_equal(np.asarray(u), np.asarray(v)) for u, v in zip(a[0], b[0]))
    p_cpu = samebits.KNeighborsClassifier(n_neighbors=9, weights="distance").fit(X, y).predict_proba(Q)
    p_gpu = samebits.KNeighborsClassifier(n_neighbors=9, weights="distance", device=device).fit(X, y).predict_proba(Q)
    assert np.array_equal(np.asarray(p_cpu), np.asarray(p_gpu))
    flat = np.zeros((3000, 4), np.float32)  # every row one of two points: far more candidates than the device's room
    flat[::7] = 1.0
    a = samebits.NearestNeighbors(n_neighbors=5).fit(flat).kneighbors(flat[:50])
    b = samebits.NearestNeighbors(n_neighbors=5, device=device).fit(flat).kneighbors(flat[:50])
    assert np.array_equal(np.asarray(a[1]), np.asarray(b[1])) and np.array_equal(np.asarray(a[0]), np.asarray(b[0]))
    blobs = np.concatenate([rng.normal(c, 0.3, size=(500, 3)) for c in (0.0, 2.0, 5.0)]).astype(np.float32)
    d_cpu = samebits.DBSCAN(eps=0.25, min_samples=6).fit(blobs)
    d_gpu = samebits.DBSCAN(eps=0.25, min_samples=6, device=device).fit(blobs)
    assert np.array_equal(d_cpu.labels_, d_gpu.labels_) and d_cpu.model_digest_ == d_gpu.model_digest_
    # manhattan has no device screen: its queries on a GPU are refused by name, not run on the host unsaid
    with pytest.raises(samebits.InvalidArgumentError, match="metric=manhattan runs on the host"):
        samebits.NearestNeighbors(metric="manhattan", device=device).fit(X).kneighbors(Q)


def test_a_device_with_too_little_local_memory_screens_on_the_host(monkeypatch, capfd):
    """kn_select keeps wg x (k + 1) keys in local memory; a device with less
    (SAMEBITS_TEST_KNN_LOCAL_MEM stands for one) screens on the host instead of
    failing the launch: the same neighbors, and no device phase in the timing."""
    rng = np.random.default_rng(12)
    X = rng.normal(size=(800, 6)).astype(np.float32)
    try:
        samebits.NearestNeighbors(device="opencl").fit(X[:10]).kneighbors(X[:2])
    except samebits.BackendUnavailableError as e:
        pytest.skip("no opencl here: %s" % e)
    cpu = samebits.NearestNeighbors(n_neighbors=20).fit(X).kneighbors(X[:100])
    monkeypatch.setenv("SAMEBITS_KNN_TIMING", "1")
    capfd.readouterr()
    roomy = samebits.NearestNeighbors(n_neighbors=20, device="opencl").fit(X).kneighbors(X[:100])
    assert "device" in capfd.readouterr().err  # the device screened
    monkeypatch.setenv("SAMEBITS_TEST_KNN_LOCAL_MEM", "16384")
    small = samebits.NearestNeighbors(n_neighbors=20, device="opencl").fit(X).kneighbors(X[:100])
    assert "device" not in capfd.readouterr().err  # the host did
    for r in (roomy, small):
        assert np.array_equal(np.asarray(cpu[1]), np.asarray(r[1]))
        assert np.array_equal(np.asarray(cpu[0]), np.asarray(r[0]))
