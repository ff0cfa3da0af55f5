"""Gaussian process regression (docs/gaussian-process.md): scikit-learn's
GaussianProcessRegressor within the issue's tolerances on small problems, the
kernels' names and reprs, scikit-learn kernel objects translated, identity
across thread counts, the outputs' shapes, and the named refusals."""
import warnings

import pytest

import samebits
from samebits.gaussian_process.kernels import (RBF, ConstantKernel, Matern, RationalQuadratic, WhiteKernel,
                                               from_sklearn)

np = pytest.importorskip("numpy")
skgp = pytest.importorskip("sklearn.gaussian_process")
K = pytest.importorskip("sklearn.gaussian_process.kernels")


def _data(n=60, d=2, seed=0, targets=None):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-3, 3, (n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.randn(n)
    if targets:
        y = np.stack([y * (k + 1) + k for k in range(targets)], axis=1)
    return X, y


PAIRS = [
    (lambda: ConstantKernel(1.0) * RBF([1.0, 1.0]) + WhiteKernel(0.1),
     lambda: K.ConstantKernel(1.0) * K.RBF([1.0, 1.0]) + K.WhiteKernel(0.1)),
    (lambda: ConstantKernel(1.0) * Matern(1.0, nu=2.5) + WhiteKernel(0.1),
     lambda: K.ConstantKernel(1.0) * K.Matern(1.0, nu=2.5) + K.WhiteKernel(0.1)),
    (lambda: ConstantKernel(1.0) * Matern([1.0, 1.0], nu=1.5) + WhiteKernel(0.1),
     lambda: K.ConstantKernel(1.0) * K.Matern([1.0, 1.0], nu=1.5) + K.WhiteKernel(0.1)),
    (lambda: ConstantKernel(1.0) * Matern(1.0, nu=0.5),
     lambda: K.ConstantKernel(1.0) * K.Matern(1.0, nu=0.5)),
    (lambda: RationalQuadratic(1.0, 1.0, alpha_bounds=(1e-2, 1e3)) + WhiteKernel(0.1),
     lambda: K.RationalQuadratic(1.0, 1.0, alpha_bounds=(1e-2, 1e3)) + K.WhiteKernel(0.1)),
]


@pytest.mark.parametrize("i", range(len(PAIRS)))
@pytest.mark.parametrize("optimizer", ["fmin_l_bfgs_b", None])
def test_matches_scikit_learn(i, optimizer):
    X, y = _data()
    Xt = np.random.RandomState(9).uniform(-3, 3, (25, 2))
    a = samebits.GaussianProcessRegressor(PAIRS[i][0](), optimizer=optimizer, normalize_y=True).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = skgp.GaussianProcessRegressor(PAIRS[i][1](), optimizer=optimizer, normalize_y=True).fit(X, y)
    ma, sa = a.predict(Xt, return_std=True)
    mb, sb = b.predict(Xt, return_std=True)
    tol = 1e-9 if optimizer is None else 1e-4
    assert np.max(np.abs(ma - mb)) <= tol * max(1.0, np.max(np.abs(mb)))
    assert np.max(np.abs(sa - sb)) <= tol * 10
    la, lb = a.log_marginal_likelihood_value_, b.log_marginal_likelihood_value_
    assert abs(la - lb) <= (1e-12 if optimizer is None else 1e-4) * abs(lb) + 1e-12
    assert repr(a.kernel_) == repr(b.kernel_)
    # at scikit-learn's theta, the likelihood and its gradient
    l1, g1 = a.log_marginal_likelihood(b.kernel_.theta, eval_gradient=True)
    l2, g2 = b.log_marginal_likelihood(b.kernel_.theta, eval_gradient=True)
    assert abs(l1 - l2) <= 1e-9 * abs(l2)
    assert np.max(np.abs(g1 - g2)) <= 1e-7 * max(1.0, np.max(np.abs(g2)))
    # the factor and alpha_ at the optimum: as close as the two optima are (their relative gap in alpha_ is
    # the optimum's gap times alpha_'s conditioning), exact to rounding without the optimizer
    big = np.max(np.abs(b.alpha_))
    np.testing.assert_allclose(a.alpha_, b.alpha_, rtol=0, atol=(1e-3 if optimizer else 1e-8) * big)
    np.testing.assert_allclose(a.L_, b.L_, rtol=1e-4 if optimizer else 1e-10, atol=1e-4 if optimizer else 1e-10)


def test_scikit_learn_kernel_objects_are_translated():
    X, y = _data()
    a = samebits.GaussianProcessRegressor(K.ConstantKernel(1.0) * K.RBF([1.0, 1.0]) + K.WhiteKernel(0.1)).fit(X, y)
    b = samebits.GaussianProcessRegressor(ConstantKernel(1.0) * RBF([1.0, 1.0]) + WhiteKernel(0.1)).fit(X, y)
    assert a.model_digest_ == b.model_digest_
    with pytest.raises(samebits.InvalidArgumentError, match="ExpSineSquared is not built"):
        from_sklearn(K.ExpSineSquared())


def test_default_kernel_and_fixed_bounds_match_scikit_learn():
    X, y = _data(n=30)
    a = samebits.GaussianProcessRegressor().fit(X, y)
    b = skgp.GaussianProcessRegressor().fit(X, y)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=0, atol=1e-4)
    assert repr(a.kernel_) == repr(b.kernel_)
    # fixed bounds: the kernel kept, "fixed" as scikit-learn spells it
    k = ConstantKernel(1.0, "fixed") * RBF(1.0, "fixed")
    a = samebits.GaussianProcessRegressor(k).fit(X, y)
    b = skgp.GaussianProcessRegressor(K.ConstantKernel(1.0, "fixed") * K.RBF(1.0, "fixed")).fit(X, y)
    # alpha=1e-10 on a fixed RBF: an ill-conditioned matrix, so the two factorizations' roundings show at 1e-9
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=0, atol=1e-6)
    assert repr(a.kernel_) == repr(b.kernel_) == "1**2 * RBF(length_scale=1)"
    assert a.log_marginal_likelihood().__class__ is float


def test_restarts_are_deterministic_and_at_least_as_good():
    X, y = _data(n=50, seed=4)
    k = ConstantKernel(1.0, (1e-3, 1e3)) * RBF([1.0, 1.0], (1e-2, 1e2)) + WhiteKernel(0.1, (1e-5, 1e1))
    a0 = samebits.GaussianProcessRegressor(k, normalize_y=True).fit(X, y)
    a = samebits.GaussianProcessRegressor(k, normalize_y=True, n_restarts_optimizer=3, random_state=5).fit(X, y)
    b = samebits.GaussianProcessRegressor(k, normalize_y=True, n_restarts_optimizer=3, random_state=5).fit(X, y)
    c = samebits.GaussianProcessRegressor(k, normalize_y=True, n_restarts_optimizer=3, random_state=6).fit(X, y)
    assert a.model_digest_ == b.model_digest_
    assert a.model_digest_ != c.model_digest_  # the seed is stored, so the files part even at one optimum
    assert a.log_marginal_likelihood_value_ >= a0.log_marginal_likelihood_value_


def test_same_bits_at_1_2_7_threads():
    X, y = _data(n=70, seed=2)
    Xt = _data(n=9, seed=3)[0]
    k = ConstantKernel(1.0) * Matern([1.0, 1.0], nu=2.5) + WhiteKernel(0.1)
    out = []
    try:
        for t in (1, 2, 7):
            samebits.set_num_threads(t)
            g = samebits.GaussianProcessRegressor(k, n_restarts_optimizer=1, random_state=1).fit(X, y)
            m, c = g.predict(Xt, return_cov=True)
            out.append((g.model_digest_, m.tobytes(), c.tobytes(), g.sample_y(Xt, 3, random_state=2).tobytes()))
    finally:
        samebits.set_num_threads(0)
    assert out[0] == out[1] == out[2]


def test_shapes_multi_target_and_sample_y():
    X, y = _data(n=40, targets=2)
    Xt = X[:7] + 0.25
    g = samebits.GaussianProcessRegressor(RBF(1.0) + WhiteKernel(0.1), normalize_y=True).fit(X, y)
    b = skgp.GaussianProcessRegressor(K.RBF(1.0) + K.WhiteKernel(0.1), normalize_y=True).fit(X, y)
    m, s = g.predict(Xt, return_std=True)
    assert m.shape == (7, 2) and s.shape == (7, 2)
    mb, sb = b.predict(Xt, return_std=True)
    np.testing.assert_allclose(m, mb, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(s, sb, rtol=1e-3, atol=1e-4)
    m, c = g.predict(Xt, return_cov=True)
    assert c.shape == (7, 7, 2)
    s = g.sample_y(Xt, 5, random_state=3)
    assert s.shape == (7, 2, 5)
    assert np.array_equal(s, g.sample_y(Xt, 5, random_state=3))
    assert not np.array_equal(s, g.sample_y(Xt, 5, random_state=4))
    g1 = samebits.GaussianProcessRegressor(RBF(1.0) + WhiteKernel(0.1)).fit(X, y[:, 0])
    assert g1.predict(Xt).shape == (7,) and g1.sample_y(Xt, 4).shape == (7, 4)
    assert g1.predict(Xt, return_cov=True)[1].shape == (7, 7)
    # many draws: their mean and covariance approach the predictive ones
    draws = g1.sample_y(Xt[:3], 4000, random_state=1)
    mm, cc = g1.predict(Xt[:3], return_cov=True)
    assert np.max(np.abs(draws.mean(axis=1) - mm)) < 0.05 * (1 + np.max(np.abs(mm)))
    assert np.max(np.abs(np.cov(draws) - cc)) < 0.1 * np.max(np.abs(cc)) + 1e-3


def test_model_file_roundtrip(tmp_path):
    X, y = _data(n=30)
    g = samebits.GaussianProcessRegressor(ConstantKernel(1.0) * RBF(1.0) + WhiteKernel(0.1)).fit(X, y)
    p = tmp_path / "gp.sbm"
    g.save_model(p)
    import hashlib
    data = p.read_bytes()
    assert data == g.model_bytes()
    assert hashlib.sha256(data[:-32]).digest() == data[-32:] or len(g.model_digest_) == 64


def test_refusals_by_name():
    X, y = _data(n=20)
    with pytest.raises(samebits.InvalidArgumentError, match="length_scale=0 must be > 0"):
        samebits.GaussianProcessRegressor(RBF(0.0)).fit(X, y)
    with pytest.raises(samebits.InvalidArgumentError, match="nu=3.5 is not built"):
        samebits.GaussianProcessRegressor(Matern(1.0, nu=3.5)).fit(X, y)
    with pytest.raises(samebits.InvalidArgumentError, match="alpha as an array"):
        samebits.GaussianProcessRegressor(RBF(1.0), alpha=np.ones(20)).fit(X, y)
    with pytest.raises(samebits.InvalidArgumentError, match="RandomState object is not built"):
        samebits.GaussianProcessRegressor(RBF(1.0), random_state=np.random.RandomState(0)).fit(X, y)
    Xd = np.vstack([X[:5], X[:5]])
    with pytest.raises(samebits.InvalidInputError, match="not positive definite"):
        samebits.GaussianProcessRegressor(RBF(1.0), alpha=0.0, optimizer=None).fit(Xd, np.arange(10.0))
    samebits.GaussianProcessRegressor(RBF(1.0) + WhiteKernel(0.1)).fit(Xd, np.arange(10.0))  # duplicates with noise
    X2 = X.copy()
    X2[3, 1] = np.nan
    with pytest.raises(samebits.InvalidInputError, match="NaN"):
        samebits.GaussianProcessRegressor(RBF(1.0)).fit(X2, y)
    with pytest.raises(samebits.NotFittedError):
        samebits.GaussianProcessRegressor().predict(X)
    g = samebits.GaussianProcessRegressor(RBF(1.0)).fit(X, y)
    with pytest.raises(RuntimeError, match="At most one"):
        g.predict(X, return_std=True, return_cov=True)
    with pytest.raises(samebits.InvalidArgumentError, match="theta has 3 values"):
        g.log_marginal_likelihood([0.0, 0.0, 0.0])
