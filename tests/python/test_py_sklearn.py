"""scikit-learn integration: clone, Pipeline, GridSearchCV, cross_val_score, tags."""
import pytest

import samebits
from conftest import make_data, run_python

sklearn = pytest.importorskip("sklearn")
np = pytest.importorskip("numpy")

from sklearn.base import clone, is_classifier, is_regressor  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.pipeline import Pipeline, make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

SMALL = dict(n_estimators=10, min_samples_leaf=5)


def _arrays(kind, n=300, seed=1):
    X, y = make_data(n, kind, seed=seed)
    return np.asarray(X, dtype=np.float64), np.asarray(y)


def test_import_does_not_import_sklearn_or_numpy():
    r = run_python("import sys, samebits; print('numpy' in sys.modules, 'sklearn' in sys.modules)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "False"]


def test_tags():
    assert is_classifier(samebits.GradientBoostingClassifier())
    assert is_regressor(samebits.GradientBoostingRegressor())
    assert is_classifier(samebits.GradientBoosting(loss="log_loss"))
    assert is_regressor(samebits.GradientBoosting())
    from sklearn.utils import get_tags
    assert get_tags(samebits.GradientBoostingRegressor()).input_tags.allow_nan


def test_clone():
    m = samebits.GradientBoostingClassifier(n_estimators=7, learning_rate=0.2, random_state=3)
    X, y = _arrays("binary")
    m.fit(X, y)
    c = clone(m)
    assert c.get_params() == m.get_params() and not hasattr(c, "model_digest_")
    assert c.fit(X, y).model_digest_ == m.model_digest_


def test_pipeline():
    X, y = _arrays("regression")
    pipe = make_pipeline(StandardScaler(), samebits.GradientBoostingRegressor(**SMALL))
    pipe.fit(X, y)
    pred = np.asarray(pipe.predict(X))
    assert pred.shape == (300,) and pipe.score(X, y) > 0.7
    pipe2 = Pipeline([("gb", samebits.GradientBoostingClassifier(**SMALL))])
    Xb, yb = _arrays("binary")
    pipe2.set_params(gb__n_estimators=5).fit(Xb, yb)
    assert pipe2.named_steps["gb"].n_estimators_ == 5
    assert np.asarray(pipe2.predict_proba(Xb)).shape == (300, 2)


def test_grid_search():
    X, y = _arrays("multiclass")
    gs = GridSearchCV(samebits.GradientBoostingClassifier(**SMALL),
                      {"learning_rate": [0.05, 0.3], "num_leaves": [4, 16]}, cv=3)
    gs.fit(X, y)
    assert gs.best_params_["learning_rate"] in (0.05, 0.3) and gs.best_score_ > 0.6
    assert isinstance(gs.best_estimator_, samebits.GradientBoostingClassifier)
    assert gs.predict(X).shape == (300,)
    gr = GridSearchCV(samebits.GradientBoostingRegressor(**SMALL), {"max_depth": [2, 4]}, cv=3,
                      scoring="neg_mean_squared_error")
    Xr, yr = _arrays("regression")
    gr.fit(Xr, yr)
    assert gr.best_params_["max_depth"] in (2, 4)


def test_cross_val_score_is_reproducible():
    X, y = _arrays("binary", n=400)
    a = cross_val_score(samebits.GradientBoostingClassifier(**SMALL), X, y, cv=4)
    b = cross_val_score(samebits.GradientBoostingClassifier(**SMALL), X, y, cv=4)
    assert len(a) == 4 and (a == b).all() and a.mean() > 0.8
    auc = cross_val_score(samebits.GradientBoostingClassifier(**SMALL), X, y, cv=3, scoring="roc_auc")
    assert auc.mean() > 0.85
    Xr, yr = _arrays("regression", n=400)
    r2 = cross_val_score(samebits.GradientBoostingRegressor(**SMALL), Xr, yr, cv=3)
    assert r2.mean() > 0.7


def test_score_matches_sklearn_metrics():
    from sklearn.metrics import accuracy_score, r2_score
    X, y = _arrays("regression")
    m = samebits.GradientBoostingRegressor(**SMALL).fit(X, y)
    assert m.score(X, y) == pytest.approx(r2_score(y, np.asarray(m.predict(X))), rel=1e-9)
    Xc, yc = _arrays("multiclass")
    c = samebits.GradientBoostingClassifier(**SMALL).fit(Xc, yc)
    assert c.score(Xc, yc) == pytest.approx(accuracy_score(yc, c.predict(Xc)))
