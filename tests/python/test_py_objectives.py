"""LightGBM's regression objectives (loss='huber', 'quantile', 'poisson', 'gamma',
'tweedie') and L1 regularization (reg_alpha) through the Python package: the
log-link losses predict exp(raw score), labels out of range are refused by name,
the quantile's level shows in the fitted coverage, reg_alpha > 0 shrinks the
leaves, and the model bits do not depend on the thread count."""
import math
import random

import pytest

import samebits
from conftest import f32

SMALL = dict(n_estimators=20, num_leaves=8, min_samples_leaf=5, learning_rate=0.2)


def counts(n=600, seed=3):
    """Features and non-negative count labels whose mean grows with x0."""
    rnd = random.Random(seed)
    X, y = [], []
    for _ in range(n):
        row = [f32(rnd.uniform(-1, 1)) for _ in range(3)]
        mu = math.exp(0.8 * row[0] - 0.3 * row[1])
        k, p, L = 0, 1.0, math.exp(-mu)  # Knuth's Poisson draw
        while True:
            p *= rnd.random()
            if p <= L:
                break
            k += 1
        X.append(row)
        y.append(float(k))
    return X, y


@pytest.mark.parametrize("loss,extra", [("huber", {"alpha": 0.5}), ("quantile", {"alpha": 0.8}),
                                        ("poisson", {}), ("gamma", {}), ("tweedie", {"tweedie_variance_power": 1.3})])
def test_each_loss_fits_and_predicts(loss, extra):
    X, y = counts()
    if loss == "gamma":
        y = [v + 0.5 for v in y]
    m = samebits.GradientBoostingRegressor(loss=loss, **SMALL, **extra).fit(X, y)
    assert m.objective_ == loss
    p, raw = list(m.predict(X)), list(m.predict_raw(X))
    if loss in ("poisson", "gamma", "tweedie"):
        assert all(v > 0 for v in p)
        # the value is the profile's exp of the raw score (float32: within an ulp of math.exp)
        for a, b in zip(p[:50], raw[:50]):
            assert abs(a - math.exp(b)) <= 2e-7 * a
    else:
        assert p == raw
    # the fit follows the data: predictions rise with x0
    lo = [v for v, row in zip(p, X) if row[0] < -0.5]
    hi = [v for v, row in zip(p, X) if row[0] > 0.5]
    assert sum(hi) / len(hi) > sum(lo) / len(lo)
    # threads do not move a bit
    m1 = samebits.GradientBoostingRegressor(loss=loss, n_jobs=1, **SMALL, **extra).fit(X, y)
    m3 = samebits.GradientBoostingRegressor(loss=loss, n_jobs=3, **SMALL, **extra).fit(X, y)
    assert m1.model_digest_ == m3.model_digest_ == m.model_digest_


def test_quantile_level_sets_the_coverage():
    rnd = random.Random(5)
    X = [[f32(rnd.uniform(-1, 1))] for _ in range(2000)]
    y = [f32(r[0] + rnd.gauss(0, 1)) for r in X]
    for alpha in (0.2, 0.8):
        m = samebits.GradientBoostingRegressor(loss="quantile", alpha=alpha, n_estimators=100, num_leaves=4,
                                               min_samples_leaf=50, learning_rate=0.1).fit(X, y)
        below = sum(1 for v, t in zip(m.predict(X), y) if t <= v) / len(y)
        assert abs(below - alpha) < 0.08, (alpha, below)


@pytest.mark.parametrize("loss,bad,why", [("poisson", -1.0, "objective=poisson needs labels >= 0"),
                                          ("tweedie", -0.5, "objective=tweedie needs labels >= 0"),
                                          ("gamma", 0.0, "objective=gamma needs labels > 0")])
def test_labels_out_of_range_are_refused_by_name(loss, bad, why):
    X, y = counts(100)
    y = [v + 1.0 for v in y]
    y[17] = bad
    with pytest.raises(samebits.InvalidInputError, match=why):
        samebits.GradientBoostingRegressor(loss=loss, **SMALL).fit(X, y)


def test_parameters_out_of_range_are_refused():
    X, y = counts(100)
    with pytest.raises(samebits.InvalidArgumentError, match="tweedie_variance_power"):
        samebits.GradientBoostingRegressor(loss="tweedie", tweedie_variance_power=2.0, **SMALL).fit(X, y)
    with pytest.raises(samebits.InvalidArgumentError, match="alpha in"):
        samebits.GradientBoostingRegressor(loss="quantile", alpha=1.0, **SMALL).fit(X, y)
    with pytest.raises(samebits.InvalidArgumentError, match="reg_alpha"):
        samebits.GradientBoostingRegressor(reg_alpha=-1.0, **SMALL).fit(X, y)


def test_all_zero_counts_are_refused_for_the_log_link():
    X, _ = counts(100)
    with pytest.raises(samebits.InvalidInputError, match="the log link needs some positive label"):
        samebits.GradientBoostingRegressor(loss="poisson", **SMALL).fit(X, [0.0] * 100)


@pytest.mark.parametrize("loss", ["squared_error", "poisson"])
def test_reg_alpha_soft_thresholds_the_leaves(loss):
    X, y = counts()
    plain = samebits.GradientBoostingRegressor(loss=loss, **SMALL).fit(X, y)
    zero = samebits.GradientBoostingRegressor(loss=loss, reg_alpha=0.0, **SMALL).fit(X, y)
    l1 = samebits.GradientBoostingRegressor(loss=loss, reg_alpha=5.0, **SMALL).fit(X, y)
    assert zero.model_digest_ == plain.model_digest_ and l1.model_digest_ != plain.model_digest_
    # the raw scores move less from the start under L1
    spread = lambda m: max(m.predict_raw(X)) - min(m.predict_raw(X))
    assert spread(l1) < spread(plain)
    # a threshold above every leaf's gradient sum leaves no split worth making
    huge = samebits.GradientBoostingRegressor(loss=loss, reg_alpha=1e9, **SMALL).fit(X, y)
    assert len(set(huge.predict_raw(X))) == 1
    a = samebits.GradientBoostingRegressor(loss=loss, reg_alpha=5.0, n_jobs=1, **SMALL).fit(X, y)
    b = samebits.GradientBoostingRegressor(loss=loss, reg_alpha=5.0, n_jobs=4, **SMALL).fit(X, y)
    assert a.model_digest_ == b.model_digest_ == l1.model_digest_


def test_saved_log_link_model_predicts_the_same(tmp_path):
    X, y = counts()
    m = samebits.GradientBoostingRegressor(loss="tweedie", tweedie_variance_power=1.4, reg_alpha=0.5,
                                           **SMALL).fit(X, y)
    path = tmp_path / "t.sbm"
    m.save_model(str(path))
    back = samebits.GradientBoostingRegressor().load_model(str(path))
    assert back.model_digest_ == m.model_digest_
    assert list(back.predict(X)) == list(m.predict(X))


def test_the_generic_estimator_takes_the_losses_too():
    X, y = counts()
    g = samebits.GradientBoosting(loss="quantile", alpha=0.3, **SMALL).fit(X, y)
    r = samebits.GradientBoostingRegressor(loss="quantile", alpha=0.3, **SMALL).fit(X, y)
    assert g.model_digest_ == r.model_digest_ and g._estimator_type == "regressor"
    assert r.get_params()["alpha"] == 0.3 and r.get_params()["reg_alpha"] == 0.0
