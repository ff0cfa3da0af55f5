"""Random forests, Extra Trees and isolation forests through the Python package:
model bytes independent of the thread count, save/load, scikit-learn conventions,
refusals by name, and quality beside scikit-learn on small data (the real-data
comparison is bench/forest_bench.py)."""
import pickle
import sys

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


def test_isolation_forest_contamination(monkeypatch):
    g = np.random.Generator(np.random.Philox(key=12))
    X = g.standard_normal((3000, 4)).astype(np.float32)
    auto = samebits.IsolationForest(n_estimators=40, random_state=0).fit(X)
    s = np.asarray(auto.score_samples(X))
    assert auto.offset_ == -0.5
    assert np.asarray(auto.decision_function(X)).tolist() == (s + np.float32(0.5)).tolist()
    for c in (0.01, 0.1, 0.25, 0.5):
        m = samebits.IsolationForest(n_estimators=40, random_state=0, contamination=c).fit(X)
        assert m.model_bytes() == auto.model_bytes()  # the trees do not depend on it
        # numpy's linear percentile of the same scores (it may round its last step differently)
        assert abs(m.offset_ - np.percentile(s.astype(np.float64), 100 * c)) <= 1e-12
        d = np.asarray(m.decision_function(X))
        assert d.tolist() == (s.astype(np.float64) - m.offset_).astype(np.float32).tolist()
        flagged = (np.asarray(m.predict(X)) == -1).mean()
        assert abs(flagged - c) <= 0.002, (c, flagged)
    # the quantile without numpy (the package does not need it) gives the same value
    from samebits.forest import _quantile
    with_np = _quantile(s, 0.1)
    with monkeypatch.context() as mp:
        mp.setitem(sys.modules, "numpy", None)
        assert _quantile(s, 0.1) == with_np
    for bad in (0.0, 0.6, -1, "high", True):
        with pytest.raises(samebits.InvalidArgumentError, match="contamination"):
            samebits.IsolationForest(n_estimators=2, contamination=bad).fit(X)
    # a model read from bytes has no training rows to place the cut
    m = samebits.IsolationForest(n_estimators=5, contamination=0.1, random_state=0).fit(X)
    loaded = samebits.IsolationForest(contamination=0.1).load_model(m.model_bytes())
    with pytest.raises(samebits.InvalidArgumentError, match="offset_"):
        loaded.decision_function(X)
    assert samebits.IsolationForest().load_model(m.model_bytes()).predict(X).tolist() == \
        samebits.IsolationForest(n_estimators=5, random_state=0).fit(X).predict(X).tolist()


def test_refusals_by_name():
    X, yc, yr = data(500)
    w = np.ones(500)
    w[7] = -2.0  # the isolation forest's weights: finite and >= 0
    with pytest.raises(samebits.InvalidInputError, match="sample_weight\\[7\\]"):
        samebits.IsolationForest(n_estimators=2).fit(X, sample_weight=w)
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


# ---- sample_weight and class_weight (issue #7) ----

HOUSING = "/work/shared/data/california-housing.csv"


def small_ints(n=900, seed=3):
    """Integer features with fewer distinct values than bins, so the bins of a
    table and of its rows repeated are the same."""
    g = np.random.Generator(np.random.Philox(key=seed))
    X = g.integers(0, 25, size=(n, 5)).astype(np.float32)
    yc = ((X[:, 0] + X[:, 1] + g.normal(0, 4, n)) > 26).astype(np.int64)
    yr = (X[:, 0] * 0.7 + np.sin(X[:, 2]) + g.normal(0, 1, n)).astype(np.float32)
    return X, yc, yr


WEIGHTED = [
    (samebits.RandomForestClassifier, "c", dict(bootstrap=False, max_features=2)),
    (samebits.RandomForestClassifier, "c", dict(bootstrap=False, max_depth=6)),
    (samebits.ExtraTreesClassifier, "c", dict()),
    (samebits.RandomForestRegressor, "r", dict(bootstrap=False, max_features=0.6)),
    (samebits.ExtraTreesRegressor, "r", dict(max_depth=8)),
]


@pytest.mark.parametrize("cls,kind,kw", WEIGHTED, ids=[e[0].__name__ + str(i) for i, e in enumerate(WEIGHTED)])
def test_integer_weights_are_repeated_rows(cls, kind, kw):
    """Without a bootstrap, weight k is the row repeated k times: the fixed-point
    sums are the repeated table's counts times one power of two, and Gini,
    squared error and the leaf values are invariant under it bit for bit (the
    entropy's log is not, and min_samples_leaf counts rows, not copies: neither
    is used here). Unweighted training differs, so the test can fail."""
    X, yc, yr = small_ints()
    Xt, _, _ = small_ints(700, seed=8)
    y = yc if kind == "c" else yr
    w = np.random.Generator(np.random.Philox(key=4)).integers(1, 4, len(y))
    a = cls(n_estimators=6, random_state=2, **kw).fit(X, y, sample_weight=w)
    b = cls(n_estimators=6, random_state=2, **kw).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    c = cls(n_estimators=6, random_state=2, **kw).fit(X, y)
    pa, pb, pc = ((np.asarray(m.predict_proba(Xt)) if kind == "c" else np.asarray(m.predict(Xt))) for m in (a, b, c))
    assert pa.tobytes() == pb.tobytes()
    assert np.asarray(a.feature_importances_).tobytes() == np.asarray(b.feature_importances_).tobytes()
    assert pa.tobytes() != pc.tobytes()


def test_equal_weights_are_no_weights():
    """Weight 1 on every row gives the unweighted forest's bytes, bootstrap and
    all (the sums are the counts times 2^20, an exact rescaling of Gini); weight
    4 the same trees with gains (in weight units) 4 times larger. Weighted
    regression scores are taken in weight units, so targets near 2e9 on 30,000
    rows (sums near 2^62 in the fixed point) give finite gains and the
    unweighted fit's quality."""
    X, yc, _ = data(3000)
    a = samebits.RandomForestClassifier(n_estimators=6, random_state=5).fit(X, yc, sample_weight=np.ones(3000))
    b = samebits.RandomForestClassifier(n_estimators=6, random_state=5).fit(X, yc)
    c = samebits.RandomForestClassifier(n_estimators=6, random_state=5).fit(X, yc, sample_weight=np.full(3000, 4.0))
    assert a.model_bytes() == b.model_bytes()
    assert c.model_bytes() != b.model_bytes()
    assert np.asarray(c.predict_proba(X)).tobytes() == np.asarray(b.predict_proba(X)).tobytes()
    assert np.asarray(c.feature_importances_).tobytes() == np.asarray(b.feature_importances_).tobytes()
    g = np.random.Generator(np.random.Philox(key=3))
    Xb = g.standard_normal((30000, 3)).astype(np.float32)
    y = (2e9 + 3e8 * Xb[:, 0] + 1e8 * g.standard_normal(30000)).astype(np.float32)
    w = g.random(30000) + 0.5
    m = samebits.RandomForestRegressor(n_estimators=4, random_state=0, min_samples_leaf=50).fit(Xb, y, sample_weight=w)
    p = np.asarray(m.predict(Xb), dtype=np.float64)
    assert np.isfinite(np.asarray(m.feature_importances_)).all()
    assert 1 - np.sum((y - p) ** 2) / np.sum((y - y.mean()) ** 2) > 0.85


def test_class_weight_is_a_per_class_sample_weight():
    """class_weight={0: 1, 1: 3} and sample_weight 1 or 3 by class give the same
    effective weights, hence the same trees (only the recorded parameters differ);
    balanced_subsample without a bootstrap is balanced (scikit-learn's rule)."""
    X, yc, _ = small_ints()
    first = None
    for cls, kw in ((samebits.RandomForestClassifier, {}), (samebits.ExtraTreesClassifier, {})):
        a = cls(n_estimators=8, random_state=1, class_weight={0: 1, 1: 3}, **kw).fit(X, yc)
        first = first or a
        b = cls(n_estimators=8, random_state=1, **kw).fit(X, yc, sample_weight=np.where(yc == 1, 3.0, 1.0))
        c = cls(n_estimators=8, random_state=1, **kw).fit(X, yc)
        assert np.asarray(a.predict_proba(X)).tobytes() == np.asarray(b.predict_proba(X)).tobytes()
        assert np.asarray(a.predict_proba(X)).tobytes() != np.asarray(c.predict_proba(X)).tobytes()
    # labels other than 0..K-1 map through classes_
    ys = np.where(yc == 1, "yes", "no")
    d = samebits.RandomForestClassifier(n_estimators=8, random_state=1, class_weight={"yes": 3, "no": 1})
    assert np.asarray(d.fit(X, ys).predict_proba(X)).tobytes() == np.asarray(first.predict_proba(X)).tobytes()
    e = samebits.ExtraTreesClassifier(n_estimators=8, random_state=1, class_weight="balanced").fit(X, yc)
    f = samebits.ExtraTreesClassifier(n_estimators=8, random_state=1, class_weight="balanced_subsample").fit(X, yc)
    assert np.asarray(e.predict_proba(X)).tobytes() == np.asarray(f.predict_proba(X)).tobytes()
    assert e.model_bytes() != f.model_bytes()  # the parameter as given is recorded


@pytest.mark.parametrize("cw", [None, "balanced", "balanced_subsample", {0: 1, 1: 2.5}])
def test_weighted_forests_are_the_same_bits_at_every_thread_count(cw):
    X, yc, yr = data(2500)
    w = np.random.Generator(np.random.Philox(key=6)).random(2500) * 3
    w[::17] = 0.0
    digests, oob = set(), set()
    try:
        for t in (1, 2, 5):
            samebits.set_num_threads(t)
            m = samebits.RandomForestClassifier(n_estimators=9, random_state=3, class_weight=cw, oob_score=True,
                                                min_weight_fraction_leaf=0.001).fit(X, yc, sample_weight=w)
            digests.add(m.digest())
            oob.add(np.asarray(m.oob_decision_function_).tobytes())
            r = samebits.RandomForestRegressor(n_estimators=5, random_state=3).fit(X, yr, sample_weight=w)
            digests.add(r.digest())
    finally:
        samebits.set_num_threads(0)
    assert len(digests) == 2 and len(oob) == 1
    assert 0.6 < m.oob_score_ <= 1.0


def test_weighted_leaf_values():
    """A one-leaf forest (max_depth=0) predicts the weighted mean of y and the
    weighted class frequencies (times the class weights); min_weight_fraction_leaf
    =0.3 leaves at most 3 leaves a tree."""
    X, yc, yr = data(2000)
    w = np.random.Generator(np.random.Philox(key=12)).random(2000) * 4
    m = samebits.RandomForestRegressor(n_estimators=1, max_depth=0, bootstrap=False).fit(X, yr, sample_weight=w)
    want = np.average(yr.astype(np.float64), weights=w.astype(np.float32))
    assert abs(float(np.asarray(m.predict(X[:1]))[0]) - want) < 1e-5 * (1 + abs(want))
    c = samebits.ExtraTreesClassifier(n_estimators=1, max_depth=0, class_weight={0: 2.0})
    p = np.asarray(c.fit(X, yc, sample_weight=w).predict_proba(X[:1]))[0]
    ew = w.astype(np.float32) * np.where(yc == 0, 2.0, 1.0)
    assert abs(p[1] - ew[yc == 1].sum() / ew.sum()) < 1e-5, p
    r = samebits.RandomForestRegressor(n_estimators=1, random_state=0, bootstrap=False,
                                       min_weight_fraction_leaf=0.3).fit(X, yr, sample_weight=w)
    assert len(np.unique(np.asarray(r.predict(X)))) <= 3


def test_weight_refusals_by_name():
    X, yc, yr = data(300)
    ones = np.ones(300)
    for bad in (-1.0, np.nan, np.inf):
        w = ones.copy()
        w[7] = bad
        with pytest.raises((samebits.InvalidArgumentError, samebits.InvalidInputError), match="weight"):
            samebits.RandomForestClassifier(n_estimators=2).fit(X, yc, sample_weight=w)
    with pytest.raises(samebits.InvalidInputError, match="all zero"):
        samebits.RandomForestRegressor(n_estimators=2).fit(X, yr, sample_weight=np.zeros(300))
    with pytest.raises(samebits.InvalidInputError, match="weight zero|is zero"):
        samebits.RandomForestClassifier(n_estimators=2, class_weight={0: 0, 1: 0}).fit(X, yc)
    tiny = ones.copy()
    tiny[3] = 1e-10  # below 2^-31 of the largest: it would vanish even in 30 bits of fixed point
    with pytest.raises(samebits.LimitError, match="resolution"):
        samebits.ExtraTreesRegressor(n_estimators=2).fit(X, yr, sample_weight=tiny)
    with pytest.raises(samebits.InvalidArgumentError, match="class_weight"):
        samebits.RandomForestClassifier(n_estimators=2, class_weight="balance").fit(X, yc)
    with pytest.raises(samebits.InvalidArgumentError, match="not in class_weight"):
        samebits.RandomForestClassifier(n_estimators=2, class_weight={0: 1, 7: 2}).fit(X, yc)
    with pytest.raises(samebits.InvalidArgumentError, match="class_weight"):
        samebits.RandomForestClassifier(n_estimators=2, class_weight={0: -1.0}).fit(X, yc)
    with pytest.raises(samebits.InvalidArgumentError, match="min_weight_fraction_leaf"):
        samebits.RandomForestClassifier(n_estimators=2, min_weight_fraction_leaf=0.7).fit(X, yc)
    # weights on the forest device: the CPU's bytes (tests/python/test_py_forest_devices.py has more)
    for kw in (dict(class_weight="balanced"), dict(min_weight_fraction_leaf=0.1)):
        a = samebits.RandomForestClassifier(n_estimators=2, **kw).fit(X, yc)
        b = samebits.RandomForestClassifier(n_estimators=2, device="cpu-batched", **kw).fit(X, yc)
        assert a.model_bytes() == b.model_bytes()
    a = samebits.ExtraTreesRegressor(n_estimators=2).fit(X, yr, sample_weight=ones)
    assert samebits.ExtraTreesRegressor(n_estimators=2, device="cpu-batched").fit(
        X, yr, sample_weight=ones).model_bytes() == a.model_bytes()
    assert "class_weight" not in samebits.RandomForestRegressor().get_params()
    assert samebits.ExtraTreesClassifier(class_weight="balanced").get_params()["class_weight"] == "balanced"


def housing(regression=False):
    """California housing, shuffled by a pinned Philox permutation: 16,000 rows to
    train, 4,640 held out. Classification: median value above 400k (8.4% of the
    districts); regression: the value in units of 100k."""
    if not __import__("os").path.exists(HOUSING):
        pytest.skip("needs ../shared/data (a developer machine)")
    import csv
    with open(HOUSING) as fh:
        rows = list(csv.reader(fh))[1:]
    cats = sorted({r[-1] for r in rows})
    X = np.array([[float(v) if v else np.nan for v in r[:8]] + [cats.index(r[-1])] for r in rows], dtype=np.float32)
    value = np.array([float(r[8]) for r in rows])
    y = value / 1e5 if regression else (value > 400000).astype(np.int64)
    perm = np.random.Generator(np.random.Philox(key=7)).permutation(len(y))
    return X[perm[:16000]], y[perm[:16000]], X[perm[16000:]], y[perm[16000:]]


def test_sample_weight_beside_scikit_learn():
    """Extra Trees (no bootstrap: scikit-learn's rule and samebits' agree) on
    California housing weighted by each district's population: held-out
    population-weighted R^2 within 0.01 of scikit-learn's."""
    ensemble = pytest.importorskip("sklearn.ensemble")
    Xtr, ytr, Xte, yte = housing(regression=True)
    wtr, wte = Xtr[:, 5].astype(np.float64), Xte[:, 5].astype(np.float64)  # population

    def r2(p):
        return 1 - np.sum(wte * (yte - p) ** 2) / np.sum(wte * (yte - np.average(yte, weights=wte)) ** 2)

    kw = dict(n_estimators=40, min_samples_leaf=5, max_features=0.5, random_state=0)
    ours = samebits.ExtraTreesRegressor(**kw).fit(Xtr, ytr, sample_weight=wtr)
    theirs = ensemble.ExtraTreesRegressor(**kw).fit(Xtr, ytr, sample_weight=wtr)
    plain = samebits.ExtraTreesRegressor(**kw).fit(Xtr, ytr)
    pa = np.asarray(ours.predict(Xte), dtype=np.float64)
    assert abs(r2(pa) - r2(theirs.predict(Xte))) <= 0.01, (r2(pa), r2(theirs.predict(Xte)))
    assert pa.tobytes() != np.asarray(plain.predict(Xte), dtype=np.float64).tobytes()


@pytest.mark.parametrize("name", ["RandomForestClassifier", "ExtraTreesClassifier"])
def test_balanced_class_weight_beside_scikit_learn(name):
    """California housing, "median value above 400k" (8.4% of the districts):
    class_weight="balanced" gives held-out accuracy within 1% of scikit-learn's
    with the same parameters, and raises the minority class's recall over the
    unweighted forest (it does weigh)."""
    ensemble = pytest.importorskip("sklearn.ensemble")
    Xtr, ytr, Xte, yte = housing()
    kw = dict(n_estimators=60, min_samples_leaf=3, random_state=0)
    ours = getattr(samebits, name)(class_weight="balanced", **kw).fit(Xtr, ytr)
    theirs = getattr(ensemble, name)(class_weight="balanced", n_jobs=2, **kw).fit(Xtr, ytr)
    plain = getattr(samebits, name)(**kw).fit(Xtr, ytr)
    pa, pb, pc = np.asarray(ours.predict(Xte)), theirs.predict(Xte), np.asarray(plain.predict(Xte))
    acc_a, acc_b = (pa == yte).mean(), (pb == yte).mean()
    assert abs(acc_a - acc_b) <= 0.01, (acc_a, acc_b)
    assert pa[yte == 1].mean() > pc[yte == 1].mean() + 0.05, (pa[yte == 1].mean(), pc[yte == 1].mean())


@pytest.mark.parametrize("cls", [samebits.RandomForestRegressor, samebits.ExtraTreesRegressor])
def test_float32_overflow_is_refused_by_name(cls):
    """Regression targets (or weight x target) whose sums of squares pass
    float32 make split gains inf - inf: refused by name (LimitError) instead of
    a model the format cannot hold."""
    X = [[float(i % 7), float(i % 3)] for i in range(120)]
    with pytest.raises(samebits.LimitError, match="split gain is not finite"):
        cls(n_estimators=3, random_state=1).fit(X, [3e38 if i % 2 else -3e38 for i in range(120)])
    with pytest.raises(samebits.LimitError, match="is not finite"):
        cls(n_estimators=3, random_state=1).fit(X, [float(i % 2) for i in range(120)], sample_weight=[1e30] * 120)
    m = cls(n_estimators=3, random_state=1).fit(X, [1e9 * (i % 2) for i in range(120)])
    assert len(m.model_bytes()) > 0


@pytest.mark.parametrize("cls", [samebits.RandomForestClassifier, samebits.ExtraTreesClassifier])
def test_probabilities_are_the_normalized_margins(cls):
    """Profile sb-identical-v5 (docs/numeric-profile.md, "Versions"): a forest
    classifier's predict_proba is its raw margins m divided by their sum s, s
    added in class order in float32 and one float32 division, so no value
    exceeds 1 and scikit-learn's log_loss takes it. Fails under the old rule
    (the margins themselves): ten pure leaves of 0.1f add to 1.0000001."""
    X, yc, _ = data(600)
    y = yc + 2 * (np.nan_to_num(X[:, 3]) > 0.8)  # three classes
    m = cls(n_estimators=10, random_state=4).fit(X, y)
    raw = np.asarray(m.predict_raw(X), dtype=np.float32)
    assert raw.max() > 1.0  # the margins: 10 x 0.1f
    s = np.zeros(len(X), np.float32)
    for c in range(raw.shape[1]):
        s = (s + raw[:, c]).astype(np.float32)
    want = (raw / s[:, None]).astype(np.float32)  # float32 / float32: one correctly rounded division
    p = np.asarray(m.predict_proba(X))
    assert p.dtype == np.float32 and p.tobytes() == want.tobytes()
    assert p.min() >= 0.0 and p.max() <= 1.0
    assert np.array_equal(np.asarray(m.predict(X)), m.classes_[np.argmax(p, axis=1)])
    metrics = pytest.importorskip("sklearn.metrics")
    assert np.isfinite(metrics.log_loss(y, p, labels=m.classes_))
    assert not hasattr(m, "decision_function")  # as scikit-learn's forests


@pytest.mark.parametrize("cls", [samebits.ExtraTreesClassifier, samebits.ExtraTreesRegressor,
                                 samebits.GradientBoostingClassifier, samebits.GradientBoostingRegressor])
def test_zero_weight_rows_are_absent_rows(cls):
    """A row of weight zero is an absent row (scikit-learn's meaning; profile
    sb-identical-v5): gradient boosting and unbootstrapped forests drop such
    rows before binning, so the model equals the one fitted without them, bit
    for bit (the other weights 1: the unweighted bytes). Fails where zero-weight
    rows took part in the bins, the node ranges or the row counts."""
    X, yc, yr = data(900)
    y = yr if cls.__name__.endswith("Regressor") else yc
    w = np.ones(len(X))
    w[::4] = 0.0
    keep = w > 0
    kw = dict(n_estimators=6, random_state=3)
    if cls.__name__.startswith("Gradient"):
        kw.update(min_samples_leaf=5, subsample=0.7)
    a = cls(**kw).fit(X, y, sample_weight=w)
    b = cls(**kw).fit(X[keep], y[keep])
    assert a.model_digest_ == b.model_digest_
    assert np.asarray(a.predict(X)).tobytes() == np.asarray(b.predict(X)).tobytes()


def test_bootstrapped_forests_keep_zero_weight_rows():
    """A bootstrap draws by row position (and out-of-bag predictions recompute
    the draws from the rows given), so a random forest keeps its rows of weight
    zero: they take draws and bins, as in scikit-learn's random forests."""
    X, yc, _ = data(600)
    w = np.ones(len(X))
    w[::4] = 0.0
    a = samebits.RandomForestClassifier(n_estimators=4, random_state=1).fit(X, yc, sample_weight=w)
    b = samebits.RandomForestClassifier(n_estimators=4, random_state=1).fit(X[w > 0], yc[w > 0])
    assert a.model_digest_ != b.model_digest_


@pytest.mark.parametrize("device", ["cpu", "cpu-batched"] + (["opencl"] if "opencl" in samebits.build_info()["backends"]
                                                              else []))
def test_weight_ratios_beyond_2_21_fit(device):
    """Class weights {0: 1000, 1: 1e-4} (scikit-learn's check_class_weight_classifiers)
    and sample weights 1 and 1e-7: ratios of 1e7, beyond the 20 bits of fixed
    point, were refused (LimitError); the weights now take more bits (up to 30)
    where a weight would otherwise vanish, the same on the forest device, and a
    fit whose weights fit 20 bits is unchanged (the fixtures' cards). Fails
    under the old rule (LimitError)."""
    X, yc, yr = data(400)
    a = samebits.RandomForestClassifier(n_estimators=3, random_state=2, class_weight={0: 1000, 1: 1e-4},
                                        device=device).fit(X, yc)
    b = samebits.RandomForestClassifier(n_estimators=3, random_state=2, class_weight={0: 1000, 1: 1e-4}).fit(X, yc)
    assert a.model_digest_ == b.model_digest_
    p = np.asarray(a.predict_proba(X))
    assert p.min() >= 0 and p.max() <= 1
    w = np.where(np.arange(len(X)) % 2 == 0, 1.0, 1e-7)
    c = samebits.ExtraTreesRegressor(n_estimators=3, bootstrap=True, random_state=1, device=device).fit(
        X, yr, sample_weight=w)
    d = samebits.ExtraTreesRegressor(n_estimators=3, bootstrap=True, random_state=1).fit(X, yr, sample_weight=w)
    assert c.model_digest_ == d.model_digest_
    # the rows of weight 1e-7 still count: not the model without them
    e = samebits.ExtraTreesRegressor(n_estimators=3, bootstrap=True, random_state=1).fit(
        X, yr, sample_weight=np.where(w == 1.0, 1.0, 0.0))
    assert e.model_digest_ != d.model_digest_
