"""Random forests, Extra Trees and isolation forests through the Python package:
model bytes independent of the thread count, save/load, scikit-learn conventions,
refusals by name, and quality beside scikit-learn on small data (the real-data
comparison is bench/forest_bench.py)."""
import pickle

import pytest

np = pytest.importorskip("numpy")
import samebits  # noqa: E402


def data(n=3000, nf=8, seed=5):
    g = np.random.Generator(np.random.Philox(key=seed))
    X = g.standard_normal((n, nf)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1] * 2)
    X[g.random((n, nf)) < 0.03] = np.nan
    Xn = np.nan_to_num(X)
    yc = ((Xn[:, 0] + Xn[:, 1] ** 2 + 0.3 * g.standard_normal(n)) > 1).astype(np.int64)
    yr = (Xn[:, 0] * 2 + np.sin(Xn[:, 2]) + 0.1 * g.standard_normal(n)).astype(np.float32)
    return X, yc, yr


ESTIMATORS = [
    (samebits.RandomForestClassifier, "c", dict(n_estimators=12, random_state=3)),
    (samebits.RandomForestClassifier, "c", dict(n_estimators=8, criterion="entropy", max_features="log2",
                                                max_samples=0.6, random_state=1)),
    (samebits.ExtraTreesClassifier, "c", dict(n_estimators=12, random_state=3, min_samples_leaf=3)),
    (samebits.RandomForestRegressor, "r", dict(n_estimators=10, max_depth=10, random_state=2)),
    (samebits.ExtraTreesRegressor, "r", dict(n_estimators=10, max_features=0.5, random_state=2)),
    (samebits.IsolationForest, "i", dict(n_estimators=30, max_samples=128, random_state=2)),
]


@pytest.mark.parametrize("cls,kind,kw", ESTIMATORS, ids=[e[0].__name__ + str(i) for i, e in enumerate(ESTIMATORS)])
def test_same_model_bytes_at_every_thread_count(cls, kind, kw):
    X, yc, yr = data()
    y = yc if kind == "c" else yr
    digests = set()
    try:
        for t in (1, 2, 5):
            samebits.set_num_threads(t)
            m = cls(**kw).fit(X) if kind == "i" else cls(**kw).fit(X, y)
            digests.add(m.digest())
    finally:
        samebits.set_num_threads(0)
    assert len(digests) == 1
    # save, load, pickle: the same bytes and predictions
    m2 = pickle.loads(pickle.dumps(m))
    assert m2.model_bytes() == m.model_bytes()
    if kind == "i":
        assert np.array_equal(np.asarray(m.score_samples(X)), np.asarray(m2.score_samples(X)))
    else:
        assert np.array_equal(np.asarray(m.predict(X)), np.asarray(m2.predict(X)))


def test_quality_beside_scikit_learn():
    ensemble = pytest.importorskip("sklearn.ensemble")
    X, yc, yr = data(6000)
    Xt, yct, yrt = data(3000, seed=9)
    Xs, Xts = np.nan_to_num(X), np.nan_to_num(Xt)  # scikit-learn's forests: NaN support varies by version
    a = (np.asarray(samebits.RandomForestClassifier(n_estimators=50, random_state=0).fit(Xs, yc).predict(Xts))
         == yct).mean()
    b = (ensemble.RandomForestClassifier(n_estimators=50, random_state=0).fit(Xs, yc).predict(Xts) == yct).mean()
    assert a >= b - 0.02, (a, b)
    p = samebits.RandomForestClassifier(n_estimators=20, random_state=0).fit(Xs, yc).predict_proba(Xts)
    assert np.asarray(p).shape == (3000, 2) and abs(float(np.asarray(p).sum(axis=1).mean()) - 1.0) < 1e-4
    r = samebits.ExtraTreesRegressor(n_estimators=50, random_state=0).fit(Xs, yr)
    s = ensemble.ExtraTreesRegressor(n_estimators=50, random_state=0).fit(Xs, yr)
    ra, rb = r.score(Xts, yrt), s.score(Xts, yrt)
    assert ra >= rb - 0.02, (ra, rb)


def test_isolation_forest_finds_planted_outliers():
    g = np.random.Generator(np.random.Philox(key=11))
    X = g.standard_normal((4000, 4)).astype(np.float32)
    X[:40] = X[:40] * 6 + 8  # 1% far away
    y = np.zeros(4000)
    y[:40] = 1
    from sklearn.metrics import roc_auc_score
    m = samebits.IsolationForest(n_estimators=100, random_state=0).fit(X)
    auc = roc_auc_score(y, -np.asarray(m.score_samples(X)))
    assert auc > 0.99, auc
    pred = np.asarray(m.predict(X))
    assert set(np.unique(pred)) <= {-1.0, 1.0} and (pred[:40] == -1).mean() > 0.9


def test_refusals_by_name():
    X, yc, yr = data(500)
    with pytest.raises(samebits.InvalidArgumentError, match="sample_weight"):
        samebits.RandomForestClassifier(n_estimators=2).fit(X, yc, sample_weight=np.ones(500))
    with pytest.raises(samebits.BackendUnavailableError, match="no CUDA backend"):
        samebits.RandomForestRegressor(n_estimators=2, device="cuda").fit(X, yr)
    with pytest.raises(samebits.InvalidArgumentError, match="criterion"):
        samebits.RandomForestClassifier(n_estimators=2, criterion="squared_error").fit(X, yc)
    with pytest.raises(samebits.InvalidArgumentError, match="max_samples needs bootstrap"):
        samebits.ExtraTreesClassifier(n_estimators=2, max_samples=0.5).fit(X, yc)


def test_out_of_bag_scores():
    X, yc, yr = data(2000)
    Xs = np.nan_to_num(X)
    outs = []
    try:
        for t in (1, 3):
            samebits.set_num_threads(t)
            m = samebits.RandomForestClassifier(n_estimators=30, oob_score=True, random_state=4).fit(Xs, yc)
            outs.append(np.asarray(m.oob_decision_function_).tobytes())
    finally:
        samebits.set_num_threads(0)
    assert outs[0] == outs[1]  # the same bits at any thread count
    assert 0.7 < m.oob_score_ <= 1.0
    # close to held-out accuracy, as an out-of-bag estimate should be
    Xt, yct, _ = data(2000, seed=21)
    held = (np.asarray(m.predict(np.nan_to_num(Xt))) == yct).mean()
    assert abs(m.oob_score_ - held) < 0.05, (m.oob_score_, held)
    r = samebits.RandomForestRegressor(n_estimators=30, oob_score=True, random_state=4).fit(Xs, yr)
    assert 0.5 < r.oob_score_ < 1.0 and np.asarray(r.oob_prediction_).shape == (2000,)
    with pytest.raises(samebits.InvalidArgumentError, match="bootstrap"):
        samebits.ExtraTreesClassifier(n_estimators=3, oob_score=True).fit(Xs, yc)
