"""The linear estimators (samebits.linear): LinearRegression, Ridge, Lasso,
ElasticNet, LogisticRegression and PCA against scikit-learn on the California
housing table; digests, save/load, pickle, sample weights, refusals by name."""
import csv
import os
import pickle
import warnings

import pytest

import samebits

np = pytest.importorskip("numpy")

DATA = "/work/shared/data/california-housing.csv"
TARGET = "median_house_value"


def _load():
    if not os.path.exists(DATA):
        pytest.skip("%s is missing" % DATA)
    with open(DATA, newline="") as f:
        rows = list(csv.reader(f))
    head = rows[0]
    keep = [j for j, name in enumerate(head) if name != "ocean_proximity"]
    body = [[r[j] for j in keep] for r in rows[1:] if all(v.strip() != "" for v in r)]
    names = [head[j] for j in keep]
    a = np.array(body, dtype=np.float64)
    t = names.index(TARGET)
    feats = [j for j in range(len(names)) if j != t]
    return a[:, feats], a[:, t], [names[j] for j in feats]


@pytest.fixture(scope="module")
def housing():
    return _load()


@pytest.fixture(scope="module")
def scaled(housing):
    X, y, _ = housing
    Xs = (X - X.mean(axis=0)) / X.std(axis=0)
    yb = (y > np.median(y)).astype(np.int64)
    yt = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    return Xs, yb, yt


def _f32(a):
    """The float32 values samebits trains on, as float64 for scikit-learn (the
    same problem on both sides)."""
    return np.asarray(a, dtype=np.float32).astype(np.float64)


def _rel(a, b):
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    assert a.shape == b.shape
    return float(np.max(np.abs(a - b) / np.abs(b)))


def _sk():
    return pytest.importorskip("sklearn")


# ---- against scikit-learn ------------------------------------------------------------

@pytest.mark.parametrize("name,kw,tol", [
    ("LinearRegression", {}, 1e-4),
    ("Ridge", dict(alpha=1.0), 1e-4),
    ("Lasso", dict(alpha=100.0, tol=1e-6), 1e-3),
    ("ElasticNet", dict(alpha=1.0, l1_ratio=0.5, tol=1e-6), 1e-3),
])
def test_regressors_match_sklearn(housing, name, kw, tol):
    _sk()
    from sklearn import linear_model
    X, y, _ = housing
    ours = getattr(samebits, name)(**kw).fit(X, y)
    ref = getattr(linear_model, name)(**kw).fit(_f32(X), _f32(y))
    assert ours.coef_.shape == ref.coef_.shape == (X.shape[1],)
    assert isinstance(ours.intercept_, float)
    err = _rel(ours.coef_, ref.coef_)
    assert err < tol, "%s coef max relative error %.3g (tolerance %g)" % (name, err, tol)
    assert abs(ours.intercept_ - ref.intercept_) <= tol * abs(ref.intercept_)
    assert ours.n_features_in_ == X.shape[1]
    assert abs(ours.score(X, y) - ref.score(_f32(X), _f32(y))) < 1e-4
    if name in ("Lasso", "ElasticNet"):
        assert isinstance(ours.n_iter_, int) and 1 <= ours.n_iter_ <= 1000


@pytest.mark.parametrize("target", ["binary", "tertiles"])
def test_logistic_matches_sklearn(scaled, target):
    _sk()
    from sklearn.linear_model import LogisticRegression
    Xs, yb, yt = scaled
    y = yb if target == "binary" else yt
    k = len(np.unique(y))
    # tol=1e-6 on both sides: at the default 1e-4 the two L-BFGS runs stop at
    # different points of the same optimum
    ours = samebits.LogisticRegression(tol=1e-6, max_iter=1000).fit(Xs, y)
    ref = LogisticRegression(tol=1e-6, max_iter=1000).fit(_f32(Xs), y)
    want = (1 if k == 2 else k, Xs.shape[1])
    assert ours.coef_.shape == ref.coef_.shape == want
    assert ours.intercept_.shape == ref.intercept_.shape == (want[0],)
    err = _rel(ours.coef_, ref.coef_)
    assert err < 1e-3, "%s coef max relative error %.3g" % (target, err)
    assert _rel(ours.intercept_, ref.intercept_) < 1e-3
    assert ours.classes_.tolist() == list(range(k))
    assert isinstance(ours.n_iter_, np.ndarray) and ours.n_iter_.shape == (1,)
    proba = np.asarray(ours.predict_proba(Xs))
    assert proba.shape == (len(y), k)
    assert np.abs(proba - ref.predict_proba(_f32(Xs))).max() < 1e-3
    assert np.abs(proba.sum(axis=1) - 1).max() < 1e-5
    pred = ours.predict(Xs)
    assert (pred == proba.argmax(axis=1)).mean() > 0.999
    assert (pred == ref.predict(_f32(Xs))).mean() > 0.999
    dec = ours.decision_function(Xs)
    assert dec.shape == ((len(y),) if k == 2 else (len(y), k))
    if k == 2:
        assert np.array_equal(pred, (dec > 0).astype(np.int64))
        assert np.array_equal(proba[:, 0].astype(np.float32), (1.0 - proba[:, 1]).astype(np.float32))
    lp = ours.predict_log_proba(Xs[:50])
    assert np.allclose(np.exp(lp), proba[:50], atol=1e-6)
    assert abs(ours.score(Xs, y) - ref.score(_f32(Xs), y)) < 1e-3


def _sign(components):
    """scikit-learn's sign convention: each component's largest-magnitude entry positive."""
    c = np.asarray(components, dtype=np.float64)
    idx = np.argmax(np.abs(c), axis=1)
    return c * np.sign(c[np.arange(len(c)), idx])[:, None]


def test_pca_matches_sklearn(housing):
    _sk()
    from sklearn.decomposition import PCA
    X, _, _ = housing
    ours = samebits.PCA(n_components=5).fit(X)
    ref = PCA(n_components=5).fit(_f32(X))
    assert ours.n_components_ == 5 and ours.n_samples_ == X.shape[0] and ours.n_features_in_ == X.shape[1]
    assert ours.components_.shape == (5, X.shape[1])
    assert np.abs(ours.explained_variance_ratio_ - ref.explained_variance_ratio_).max() < 1e-5
    assert np.abs(_sign(ours.components_) - _sign(ref.components_)).max() < 1e-4
    assert _rel(ours.explained_variance_, ref.explained_variance_) < 1e-4
    assert _rel(ours.singular_values_, ref.singular_values_) < 1e-4
    assert _rel(ours.mean_, ref.mean_) < 1e-5
    assert abs(ours.noise_variance_ - ref.noise_variance_) <= 1e-3 * abs(ref.noise_variance_)
    Z = np.asarray(ours.transform(X))
    assert Z.shape == (X.shape[0], 5)
    # the same projection as scikit-learn's, up to each component's sign
    flip = np.sign(np.sum(np.asarray(ours.components_) * ref.components_, axis=1))
    Zr = ref.transform(_f32(X)) * flip
    assert np.abs(Z - Zr).max() <= 1e-4 * np.abs(Zr).max()
    assert np.asarray(ours.fit_transform(X)).tobytes() == Z.tobytes()
    back = np.asarray(ours.inverse_transform(Z))
    ref_back = ref.inverse_transform(Zr)
    assert np.abs(back - ref_back).max() <= 1e-4 * np.abs(ref_back).max()


def test_pca_whiten_and_full_inverse(housing):
    X, _, _ = housing
    Xs = X[:3000]
    full = samebits.PCA().fit(Xs)
    assert full.n_components_ == X.shape[1]
    back = np.asarray(full.inverse_transform(full.transform(Xs)))
    assert np.abs(back - Xs).max() <= 1e-4 * np.abs(Xs).max()
    w = samebits.PCA(n_components=3, whiten=True).fit(Xs)
    Z = np.asarray(w.transform(Xs), dtype=np.float64)
    assert np.allclose(Z.var(axis=0, ddof=1), 1.0, atol=1e-3)
    plain = samebits.PCA(n_components=3).fit(Xs)
    assert np.abs(np.asarray(w.inverse_transform(w.transform(Xs)))
                  - np.asarray(plain.inverse_transform(plain.transform(Xs)))).max() <= 1e-4 * np.abs(Xs).max()
    frac = samebits.PCA(n_components=0.99).fit(Xs)
    assert 1 <= frac.n_components_ < X.shape[1]
    assert float(np.sum(frac.explained_variance_ratio_)) >= 0.99 - 1e-6


# ---- identity, files, pickle -------------------------------------------------------------

def _cases(housing, scaled):
    X, y, _ = housing
    Xs, yb, yt = scaled
    return [
        (samebits.LinearRegression(), X, y, "predict"),
        (samebits.Ridge(alpha=1.0), X, y, "predict"),
        (samebits.Lasso(alpha=100.0), X, y, "predict"),
        (samebits.ElasticNet(alpha=1.0), X, y, "predict"),
        (samebits.LogisticRegression(), Xs, yb, "predict_proba"),
        (samebits.LogisticRegression(), Xs, yt, "predict_proba"),
        (samebits.PCA(n_components=4, whiten=True), X, None, "transform"),
    ]


def test_digest_save_load_pickle(housing, scaled, tmp_path):
    for est, X, y, method in _cases(housing, scaled):
        cls = type(est)
        a = est.fit(X, y)
        b = cls(**a.get_params()).fit(X, y)
        assert len(a.model_digest_) == 64 and a.model_digest_ == b.model_digest_ == a.digest()
        assert a.model_bytes() == b.model_bytes()
        want = np.asarray(getattr(a, method)(X)).tobytes()
        path = tmp_path / ("%s.sbm" % cls.__name__)
        a.save_model(str(path))
        for source in (str(path), path.read_bytes()):
            for got in (samebits.load_model(source), cls().load_model(source)):
                assert type(got) is cls
                assert got.model_digest_ == a.model_digest_
                assert np.asarray(getattr(got, method)(X)).tobytes() == want
                assert got.n_features_in_ == a.n_features_in_
        c = pickle.loads(pickle.dumps(a))
        assert c.model_digest_ == a.model_digest_
        assert np.asarray(getattr(c, method)(X)).tobytes() == want
        if hasattr(a, "coef_"):
            assert np.asarray(c.coef_).tobytes() == np.asarray(a.coef_).tobytes()


def test_load_model_refuses_another_kind(housing):
    X, y, _ = housing
    data = samebits.Ridge().fit(X[:500], y[:500]).model_bytes()
    for other in (samebits.LinearRegression, samebits.Lasso, samebits.PCA, samebits.GradientBoostingRegressor):
        with pytest.raises(samebits.InvalidInputError, match="Ridge"):
            other().load_model(data)
    gb = samebits.GradientBoostingRegressor(n_estimators=3).fit(X[:500], y[:500]).model_bytes()
    with pytest.raises(samebits.InvalidInputError):
        samebits.Ridge().load_model(gb)


def test_logistic_labels_map_back(scaled):
    Xs, _, yt = scaled
    names = np.array(["low", "mid", "high"], dtype=object)[yt]
    m = samebits.LogisticRegression(max_iter=200).fit(Xs, names)
    assert m.classes_.tolist() == ["high", "low", "mid"]
    pred = m.predict(Xs[:200])
    assert set(pred.tolist()) <= {"high", "low", "mid"}
    idx = samebits.LogisticRegression(max_iter=200).fit(Xs, np.searchsorted(m.classes_, names))
    assert np.asarray(m.predict_proba(Xs)).tobytes() == np.asarray(idx.predict_proba(Xs)).tobytes()
    assert m.score(Xs, names) > 0.6
    # a loaded classifier's classes are 0..K-1 (labels are not in the file)
    assert samebits.load_model(m.model_bytes()).classes_.tolist() == [0, 1, 2]


def test_class_weight(scaled):
    Xs, yb, _ = scaled
    Xs, yb = Xs[:4000], yb[:4000]
    plain = samebits.LogisticRegression().fit(Xs, yb)
    listed = samebits.LogisticRegression(class_weight={1: 2.5}).fit(Xs, yb)
    assert not np.array_equal(plain.coef_, listed.coef_)
    w = np.where(yb == 1, 2.5, 1.0)
    by_weight = samebits.LogisticRegression().fit(Xs, yb, sample_weight=w)
    assert np.abs(listed.coef_ - by_weight.coef_).max() < 1e-4
    bal = samebits.LogisticRegression(class_weight="balanced").fit(Xs, yb)
    assert bal.coef_.shape == (1, Xs.shape[1])
    with pytest.raises(samebits.InvalidArgumentError, match="7"):
        samebits.LogisticRegression(class_weight={7: 1.0}).fit(Xs, yb)


def test_dataframe_feature_names(housing):
    pd = pytest.importorskip("pandas")
    X, y, names = housing
    df = pd.DataFrame(X[:2000], columns=names)
    m = samebits.Ridge().fit(df, y[:2000])
    assert list(m.feature_names_in_) == names
    assert np.asarray(m.predict(df)).tobytes() == np.asarray(m.predict(X[:2000])).tobytes()
    assert list(samebits.load_model(m.model_bytes()).feature_names_in_) == names
    with pytest.raises(samebits.InvalidInputError, match="feature names"):
        m.predict(df[names[::-1]])


# ---- sample weights ----------------------------------------------------------------------

def _weighted_cases(housing, scaled):
    X, y, _ = housing
    Xs, yb, yt = scaled
    n = 3000
    return [
        (samebits.LinearRegression, {}, X[:n], y[:n]),
        (samebits.Ridge, dict(alpha=1.0), X[:n], y[:n]),
        (samebits.Lasso, dict(alpha=100.0, tol=1e-6), X[:n], y[:n]),
        (samebits.ElasticNet, dict(alpha=1.0, tol=1e-6), X[:n], y[:n]),
        (samebits.LogisticRegression, dict(tol=1e-6, max_iter=1000), Xs[:n], yb[:n]),
        (samebits.LogisticRegression, dict(tol=1e-6, max_iter=1000), Xs[:n], yt[:n]),
    ]


def test_sample_weight_changes_fit_and_two_is_a_duplicate(housing, scaled):
    rng = np.random.default_rng(7)
    for cls, kw, X, y in _weighted_cases(housing, scaled):
        n = len(y)
        plain = cls(**kw).fit(X, y)
        w = rng.uniform(0.2, 3.0, size=n)
        weighted = cls(**kw).fit(X, y, sample_weight=w)
        assert weighted.model_digest_ != plain.model_digest_
        assert _rel(weighted.coef_, plain.coef_) > 1e-3, cls.__name__
        ones = cls(**kw).fit(X, y, sample_weight=np.ones(n))
        assert _rel(ones.coef_, plain.coef_) < 1e-5, cls.__name__
        dup = np.arange(0, n, 3)
        w2 = np.ones(n)
        w2[dup] = 2.0
        a = cls(**kw).fit(X, y, sample_weight=w2)
        b = cls(**kw).fit(np.vstack([X, X[dup]]), np.concatenate([y, y[dup]]))
        # scaled by the largest coefficient: a multinomial fit has coefficients near 0
        # (the softmax's flat direction) whose own relative error says nothing
        err = float(np.max(np.abs(np.asarray(a.coef_) - b.coef_)) / np.max(np.abs(b.coef_)))
        # (measured: least squares < 1e-5; L-BFGS at tol=1e-6 stops within 2.2e-4 for 3 classes)
        bound = 1e-3 if cls is samebits.LogisticRegression else 1e-4
        assert err < bound, "%s: weight 2 vs a duplicated row, coef difference %.3g of the largest" % (cls.__name__, err)


# ---- refusals ----------------------------------------------------------------------------

def test_nan_and_inf_refused(housing, scaled):
    X, y, _ = housing
    Xs, yb, _ = scaled
    for est, X, yy in ((samebits.LinearRegression(), X, y[:200]), (samebits.Ridge(), X, y[:200]),
                       (samebits.Lasso(), X, y[:200]), (samebits.LogisticRegression(), Xs, yb[:200]),
                       (samebits.PCA(), X, None)):
        Xn = X[:200].copy()
        Xn[5, 2] = np.nan
        with pytest.raises(ValueError, match="NaN|missing"):
            est.fit(Xn, yy)
        with pytest.raises(samebits.InvalidInputError):
            est.fit(np.where(np.isnan(Xn), np.inf, Xn), yy)
        est.fit(X[:200], yy)
        method = est.transform if isinstance(est, samebits.PCA) else est.predict
        with pytest.raises(samebits.InvalidInputError, match="NaN"):
            method(Xn)


@pytest.mark.parametrize("est,word", [
    (samebits.LogisticRegression(penalty="l1"), "l1"),
    (samebits.LogisticRegression(penalty="elasticnet"), "elasticnet"),
    (samebits.LogisticRegression(solver="saga"), "saga"),
    (samebits.LogisticRegression(dual=True), "dual"),
    (samebits.LogisticRegression(l1_ratio=0.5), "l1_ratio"),
    (samebits.Ridge(solver="sag"), "sag"),
    (samebits.Ridge(positive=True), "positive"),
    (samebits.LinearRegression(positive=True), "positive"),
    (samebits.Lasso(selection="random"), "random"),
    (samebits.ElasticNet(selection="random"), "random"),
    (samebits.PCA(svd_solver="randomized"), "randomized"),
    (samebits.PCA(svd_solver="arpack", n_components=0.5), "arpack"),
    (samebits.PCA(svd_solver="lobpcg"), "lobpcg"),
    (samebits.PCA(n_components="mle"), "mle"),
    (samebits.Ridge(alpha="big"), "alpha"),
    (samebits.Lasso(max_iter=2.5), "max_iter"),
    (samebits.Ridge(device="tpu"), "tpu"),
    (samebits.Ridge(numeric_mode="fast"), "fast"),
], ids=lambda v: v if isinstance(v, str) else type(v).__name__)
def test_unbuilt_options_refused_by_name(housing, est, word):
    X, y, _ = housing
    yy = (y[:300] > 2e5).astype(int) if isinstance(est, samebits.LogisticRegression) else y[:300]
    with pytest.raises(samebits.SameBitsError, match=word):
        est.fit(X[:300], yy)
    assert not hasattr(est, "coef_") and not hasattr(est, "components_")


def test_unknown_parameter_refused_by_name():
    with pytest.raises(samebits.InvalidArgumentError, match="bogus"):
        samebits.Ridge().set_params(bogus=1)
    with pytest.raises(TypeError):
        samebits.Lasso(bogus=1)
    assert samebits.ElasticNet().get_params()["l1_ratio"] == 0.5


def test_engine_only_parameters_warn(housing, scaled):
    X, y, _ = housing
    Xs, yb, _ = scaled
    with pytest.warns(UserWarning, match="copy_X=False has no effect"):
        samebits.LinearRegression(copy_X=False).fit(X[:300], y[:300])
    with pytest.warns(UserWarning, match="random_state=0 has no effect"):
        samebits.Lasso(random_state=0).fit(X[:300], y[:300])
    with pytest.warns(UserWarning, match="precompute=True has no effect"):
        samebits.ElasticNet(precompute=True).fit(X[:300], y[:300])
    with pytest.warns(UserWarning, match="warm_start=True has no effect"):
        samebits.LogisticRegression(warm_start=True).fit(Xs[:300], yb[:300])
    # iterated_power is real now: it sets the randomized solver's power iterations
    a = samebits.PCA(2, svd_solver="randomized", iterated_power=1).fit(X[:300])
    b = samebits.PCA(2, svd_solver="randomized", iterated_power=3).fit(X[:300])
    assert a.model_digest_ != b.model_digest_
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        samebits.Ridge().fit(X[:300], y[:300])  # defaults: no note
        samebits.PCA(n_components=2).fit(X[:300])


def test_convergence_warning(housing, scaled):
    X, y, _ = housing
    Xs, yb, _ = scaled
    try:
        from sklearn.exceptions import ConvergenceWarning
    except ImportError:
        ConvergenceWarning = samebits.linear.ConvergenceWarning
    with pytest.warns(ConvergenceWarning, match="2 iterations"):
        m = samebits.Lasso(alpha=100.0, max_iter=2).fit(X, y)
    assert m.n_iter_ == 2
    with pytest.warns(ConvergenceWarning, match="3 iterations"):
        m = samebits.LogisticRegression(max_iter=3).fit(Xs, yb)
    assert m.n_iter_.tolist() == [3]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        samebits.Lasso(alpha=100.0).fit(X, y)


def test_unfitted_and_shapes(housing):
    X, y, _ = housing
    for est in (samebits.Ridge(), samebits.LogisticRegression(), samebits.PCA()):
        with pytest.raises(samebits.NotFittedError):
            (est.transform if isinstance(est, samebits.PCA) else est.predict)(X[:3])
        with pytest.raises(AttributeError):
            est.model_digest_
    m = samebits.Ridge().fit(X[:300], y[:300])
    with pytest.raises(samebits.InvalidInputError, match="feature"):
        m.predict(X[:3, :4])
    with pytest.raises(samebits.InvalidInputError, match="rows"):
        samebits.Ridge().fit(X[:300], y[:299])
    assert not hasattr(samebits.PCA(), "predict")
    assert samebits.LinearRegression().fit(X[:300], y[:300]).rank_ == X.shape[1]


def test_sklearn_clone_and_pipeline(housing):
    _sk()
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline
    X, y, _ = housing
    m = clone(samebits.Ridge(alpha=3.0))
    assert m.alpha == 3.0
    pipe = make_pipeline(samebits.PCA(n_components=4), samebits.LinearRegression()).fit(X[:2000], y[:2000])
    assert pipe.score(X[:2000], y[:2000]) > 0.2


# ---- the randomized solver: PCA(svd_solver="randomized") and TruncatedSVD -------------------

def _low_rank(seed=0, n=2000, p=60, r=10):
    import numpy as np
    rng = np.random.RandomState(seed)
    return (rng.randn(n, r) @ rng.randn(r, p) + 0.1 * rng.randn(n, p)).astype(np.float32)


@pytest.mark.parametrize("k", [3, 8])
def test_randomized_pca_and_truncated_svd_match_scikit_learn(k):
    import numpy as np
    sk = pytest.importorskip("sklearn.decomposition")
    A = _low_rank()
    ours = samebits.PCA(k, svd_solver="randomized", random_state=0).fit(A)
    ref = sk.PCA(k, svd_solver="randomized", random_state=0).fit(A)
    assert np.max(np.abs(ours.explained_variance_ratio_ - ref.explained_variance_ratio_)) < 1e-5
    assert np.max(np.abs(ours.components_ - ref.components_)) < 1e-4
    ours = samebits.TruncatedSVD(k, random_state=0).fit(A)
    ref = sk.TruncatedSVD(k, random_state=0).fit(A)
    assert np.max(np.abs(ours.explained_variance_ratio_ - ref.explained_variance_ratio_)) < 1e-5
    assert np.max(np.abs(ours.components_ - ref.components_)) < 1e-4
    assert np.max(np.abs(ours.singular_values_ - ref.singular_values_) / ref.singular_values_) < 1e-5
    t = np.asarray(ours.transform(A))
    assert t.shape == (A.shape[0], k)


def test_truncated_svd_seed_changes_the_projection_but_not_the_subspace():
    import numpy as np
    A = _low_rank(1)
    a = samebits.TruncatedSVD(3, random_state=0).fit(A)
    b = samebits.TruncatedSVD(3, random_state=0).fit(A)
    c = samebits.TruncatedSVD(3, random_state=5).fit(A)
    assert a.model_digest_ == b.model_digest_ and a.model_digest_ != c.model_digest_
    assert np.max(np.abs(a.components_ - c.components_)) < 1e-3


def test_arpack_solvers_are_the_exact_decomposition():
    """algorithm='arpack' / svd_solver='arpack' give scikit-learn's arpack
    results (float64 on the same data) to float32 rounding, its sign rule, and
    its refusals: a count below min(n, p), no variance fraction; PCA's None is
    min(n, p) - 1; the randomized models' bytes are unchanged by the option."""
    import numpy as np
    from sklearn.decomposition import PCA as SkPCA, TruncatedSVD as SkTSVD
    A = _low_rank(2) + 1.5
    a = samebits.TruncatedSVD(4, algorithm="arpack").fit(A)
    b = SkTSVD(4, algorithm="arpack").fit(np.asarray(A, dtype=np.float64))
    assert np.max(np.abs(a.explained_variance_ratio_ - b.explained_variance_ratio_)) < 1e-5
    assert np.max(np.abs(a.singular_values_ / b.singular_values_ - 1)) < 1e-5
    assert np.max(np.abs(a.components_ - b.components_)) < 1e-4  # the same signs
    assert a.model_digest_ == samebits.TruncatedSVD(4, algorithm="arpack").fit(A).model_digest_
    assert a.model_digest_ != samebits.TruncatedSVD(4).fit(A).model_digest_
    p = samebits.PCA(svd_solver="arpack").fit(A)
    q = SkPCA(svd_solver="arpack").fit(np.asarray(A, dtype=np.float64))
    assert p.components_.shape == q.components_.shape == (min(A.shape) - 1, A.shape[1])
    assert np.max(np.abs(p.explained_variance_ratio_ - q.explained_variance_ratio_)) < 1e-5
    full = samebits.PCA(n_components=min(A.shape) - 1, svd_solver="full").fit(A)
    assert np.array_equal(p.components_, full.components_)  # one eigensolver: the same bits
    with pytest.raises(samebits.InvalidArgumentError, match="must be in 1"):
        samebits.TruncatedSVD(min(A.shape), algorithm="arpack").fit(A)
    with pytest.raises(samebits.InvalidArgumentError, match="not a variance fraction"):
        samebits.PCA(0.9, svd_solver="arpack").fit(A)
    with pytest.raises(samebits.InvalidArgumentError, match="algorithm='lobpcg' is not built"):
        samebits.TruncatedSVD(2, algorithm="lobpcg").fit(A)


def test_loaded_truncated_svd_is_a_truncated_svd(tmp_path):
    A = _low_rank()
    est = samebits.TruncatedSVD(4).fit(A)
    est.save_model(str(tmp_path / "t.sbm"))
    back = samebits.load_model(str(tmp_path / "t.sbm"))
    assert type(back).__name__ == "TruncatedSVD" and back.model_digest_ == est.model_digest_


def test_wide_pca_with_a_fast_decaying_spectrum_converges():
    """Above 256 columns PCA runs Householder and QL; eigenvalues far below the
    largest (variances 0.9^j, j up to 599) must deflate by the absolute test
    instead of exhausting the QL iterations (a LimitError before the fix)."""
    import numpy as np
    sk = pytest.importorskip("sklearn.decomposition")
    rng = np.random.default_rng(0)
    n, p = 3000, 600
    X = rng.standard_normal((n, p), dtype=np.float32) * (0.95 ** np.arange(p)).astype(np.float32)
    ours = samebits.PCA(n_components=16, svd_solver="covariance_eigh").fit(X)
    ref = sk.PCA(n_components=16, svd_solver="covariance_eigh").fit(X)
    assert np.max(np.abs(ours.explained_variance_ratio_ - ref.explained_variance_ratio_)) < 1e-5


# ---- several targets (LinearRegression, Ridge, Lasso, ElasticNet) ------------------------------------------

@pytest.mark.parametrize("name,kw", [("LinearRegression", {}), ("Ridge", dict(alpha=3.0))])
def test_several_targets_are_each_targets_own_fit(housing, name, kw):
    """y of shape (n, t): coef_ (t, p) and intercept_ (t,), each row the bits of
    the single-target fit on that column (one Gram product, the same exact sums),
    weighted too; scikit-learn's coefficients within 1e-4; predict (n, t), and
    score the mean of the targets' R^2 as scikit-learn's."""
    X, y, _ = housing
    Y = np.stack([y, np.log(y), -0.5 * y + X[:, 0]], axis=1).astype(np.float32)
    w = np.linspace(0.5, 2.0, len(y)).astype(np.float32)
    cls = getattr(samebits, name)
    for sw in (None, w):
        m = cls(**kw).fit(X, Y, sample_weight=sw)
        assert m.coef_.shape == (3, X.shape[1]) and m.intercept_.shape == (3,)
        for t in range(3):
            one = cls(**kw).fit(X, Y[:, t], sample_weight=sw)
            assert np.array_equal(one.coef_, m.coef_[t]) and one.intercept_ == m.intercept_[t]
            assert np.array_equal(np.asarray(one.predict(X)), np.asarray(m.predict(X))[:, t])
    sk = getattr(_sk().linear_model, name)(**kw).fit(_f32(X), _f32(Y))
    m = cls(**kw).fit(X, Y)
    assert _rel(m.coef_, sk.coef_) < 1e-4
    assert np.asarray(m.predict(X)).shape == (len(y), 3)
    assert abs(m.score(X, Y) - sk.score(_f32(X), _f32(Y))) < 1e-6


def test_one_target_column_keeps_its_shape(housing):
    """y of shape (n, 1): coef_ (1, p), intercept_ (1,), predictions (n, 1), as
    scikit-learn's; the values those of y (n,)."""
    X, y, _ = housing
    col = samebits.Ridge().fit(X, y.reshape(-1, 1))
    flat = samebits.Ridge().fit(X, y)
    assert col.coef_.shape == (1, X.shape[1]) and col.intercept_.shape == (1,)
    assert np.asarray(col.predict(X[:5])).shape == (5, 1)
    assert np.array_equal(col.coef_[0], flat.coef_)
    assert col.model_digest_ == flat.model_digest_


def test_several_targets_save_load_and_pickle(housing, tmp_path):
    X, y, _ = housing
    Y = np.stack([y, 2.0 * y], axis=1)
    m = samebits.LinearRegression().fit(X, Y)
    path = str(tmp_path / "m.sbm")
    m.save_model(path)
    back = samebits.load_model(path)
    assert type(back) is samebits.LinearRegression and back.coef_.shape == (2, X.shape[1])
    assert np.array_equal(np.asarray(back.predict(X)), np.asarray(m.predict(X)))
    again = pickle.loads(pickle.dumps(m))
    assert again.model_digest_ == m.model_digest_ and again.coef_.shape == (2, X.shape[1])


@pytest.mark.parametrize("name,kw", [("Lasso", dict(alpha=0.02)), ("ElasticNet", dict(alpha=0.05, l1_ratio=0.4))])
def test_coordinate_descent_several_targets(housing, tmp_path, name, kw):
    """Lasso and ElasticNet with y (n, t): each coefficient row, intercept and
    n_iter_ entry the bits of that column's own fit (weighted too), n_iter_ a
    list as scikit-learn's, kept through the model file and pickle;
    scikit-learn's coefficients within 1e-3 at tol 1e-8."""
    X, y, _ = housing
    Y = np.stack([y, np.log(y), -0.5 * y + X[:, 0]], axis=1).astype(np.float32)
    w = np.linspace(0.5, 2.0, len(y)).astype(np.float32)
    cls = getattr(samebits, name)
    for sw in (None, w):
        m = cls(max_iter=50, **kw).fit(X, Y, sample_weight=sw)
        assert m.coef_.shape == (3, X.shape[1]) and m.intercept_.shape == (3,)
        assert isinstance(m.n_iter_, list) and len(m.n_iter_) == 3
        for t in range(3):
            one = cls(max_iter=50, **kw).fit(X, Y[:, t], sample_weight=sw)
            assert np.array_equal(one.coef_, m.coef_[t]) and one.intercept_ == m.intercept_[t]
            assert one.n_iter_ == m.n_iter_[t]
    path = str(tmp_path / "m.sbm")
    m.save_model(path)
    back = samebits.load_model(path)
    assert type(back) is cls and back.n_iter_ == m.n_iter_ and back.model_digest_ == m.model_digest_
    assert pickle.loads(pickle.dumps(m)).n_iter_ == m.n_iter_
    sk = getattr(_sk().linear_model, name)(tol=1e-8, max_iter=100000, **kw).fit(_f32(X), _f32(Y))
    m = cls(tol=1e-8, max_iter=100000, **kw).fit(X, Y)
    assert _rel(m.coef_, sk.coef_) < 1e-3
    assert np.asarray(m.predict(X)).shape == (len(y), 3)
    col = cls(**kw).fit(X, Y[:, :1])
    assert col.coef_.shape == (1, X.shape[1]) and isinstance(col.n_iter_, int)


def test_several_targets_refused_by_name_where_not_built(housing):
    X, y, _ = housing
    with pytest.raises(samebits.InvalidInputError, match="y must be 1-D"):
        samebits.LogisticRegression().fit(X, np.stack([y > 2, y > 3], axis=1).astype(np.float32))


# ---- scikit-learn's check_estimator ----------------------------------------------------------

# Checks that fail, and why (docs/linear.md lists the same).
WEIGHT_EQUIVALENCE = "check_sample_weight_equivalence_on_dense_data"  # float32 data: sqrt(w) scaling vs repeated
# rows differ in the last bits, against a float64 tolerance (rtol 1e-7)
N_ITER_NONE = "check_non_transformer_estimators_n_iter"  # Ridge's direct solver: n_iter_ is None, as
# scikit-learn documents for its own direct solvers
LINEAR_EXPECTED_FAILURES = {
    "LinearRegression": {WEIGHT_EQUIVALENCE},
    "Ridge": {WEIGHT_EQUIVALENCE, N_ITER_NONE},
    "Lasso": set(),
    "ElasticNet": set(),
    "LogisticRegression": {WEIGHT_EQUIVALENCE},
    "PCA": set(),
    "TruncatedSVD": set(),
}


@pytest.mark.parametrize("name", sorted(LINEAR_EXPECTED_FAILURES))
def test_check_estimator(name):
    from sk_checks import assert_failed_checks
    est = samebits.TruncatedSVD(n_components=1) if name == "TruncatedSVD" else getattr(samebits, name)()
    assert_failed_checks(est, LINEAR_EXPECTED_FAILURES[name])


def test_label_encoding_matches_numpy_unique():
    """The classifiers' label encoding (counting and comparison roads) gives
    np.unique's classes (dtype included) and indices on every road: a few
    values, a wider range, floats, integers, booleans, a negative zero."""
    rng = np.random.default_rng(5)
    enc = samebits.LogisticRegression()._encode_labels
    cases = [rng.integers(-3, 5, 1000), rng.integers(0, 3, 1000).astype(np.float32), np.array([5, 5, 7, 7, 9]),
             np.array([2.0, 2.0]), rng.integers(0, 40, 1000), np.array([True, False, True]),
             rng.integers(0, 1000, 5000).astype(np.float64), np.array([0.0, -0.0, 1.0], dtype=np.float32),
             (rng.standard_normal(100000) > 0).astype(np.float32)]
    for y in cases:
        classes, label = enc(y)
        ref, inv = np.unique(y, return_inverse=True)
        assert np.array_equal(classes, ref) and classes.dtype == ref.dtype
        got = np.frombuffer(memoryview(label[0]).cast("B"), dtype=np.float32)[:label[2]]
        assert np.array_equal(got.astype(np.int64), inv.ravel())
    with pytest.raises(samebits.InvalidInputError, match="NaN"):
        enc(np.array([0.0, np.nan]))
    with pytest.raises(samebits.InvalidInputError, match="continuous"):
        enc(np.array([0.0, 0.5]))
