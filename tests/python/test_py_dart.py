"""boosting_type="dart" (issue 21): DART's drops and normalization are the
host's, from draws keyed by position, so every device and thread count gives
the same bytes; with nothing dropped it is plain boosting, tree for tree; what
DART cannot do here is refused by name."""
import os

import numpy as np
import pytest

import samebits
from gbdt_devices import devices as _devices, digests_by_threads, trees as _trees


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    y = (np.sin(3 * X[:, 0]) + X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.normal(size=n)).astype(np.float32)
    return X, y


@pytest.mark.parametrize("kw", [dict(drop_rate=0.3), dict(drop_rate=0.5, uniform_drop=True, xgboost_dart_mode=True,
                                                          max_drop=2, skip_drop=0.1)])
def test_dart_is_identical_on_every_device(kw):
    X, y = _data()
    digests = {samebits.GradientBoostingRegressor(n_estimators=25, boosting_type="dart", device=d, **kw)
               .fit(X, y).model_digest_ for d in _devices()}
    assert len(digests) == 1, digests
    plain = samebits.GradientBoostingRegressor(n_estimators=25).fit(X, y)
    assert plain.model_digest_ not in digests


def test_dart_multiclass_and_threads():
    X, y = _data()
    yc = np.digitize(y, np.quantile(y, [0.33, 0.66])).astype(np.float32)
    code = ("import numpy as np, samebits, sys; sys.path.insert(0, %r); from test_py_dart import _data;"
            "X, y = _data(); yc = np.digitize(y, np.quantile(y, [0.33, 0.66])).astype(np.float32);"
            "print(samebits.GradientBoostingClassifier(n_estimators=12, boosting_type='dart', drop_rate=0.4,"
            " subsample=0.8).fit(X, yc).model_digest_)" % os.path.dirname(os.path.abspath(__file__)))
    outs = digests_by_threads(code)
    assert len(outs) == 1, outs
    m = samebits.GradientBoostingClassifier(n_estimators=12, boosting_type="dart", drop_rate=0.4).fit(X, yc)
    assert m.score(X, yc) > 0.6


def test_nothing_dropped_is_plain_boosting_tree_for_tree():
    """skip_drop=1 skips every drop: the trees are gbdt's, bit for bit (only the
    parameter text differs). Fails if dart changed anything else."""
    X, y = _data()
    dart = samebits.GradientBoostingRegressor(n_estimators=15, boosting_type="dart", skip_drop=1.0).fit(X, y)
    plain = samebits.GradientBoostingRegressor(n_estimators=15).fit(X, y)
    assert _trees(dart) == _trees(plain)
    assert np.array_equal(dart.predict(X), plain.predict(X))
    some = samebits.GradientBoostingRegressor(n_estimators=15, boosting_type="dart", skip_drop=0.0,
                                              drop_rate=0.5).fit(X, y)
    assert _trees(some) != _trees(plain)


def test_drop_seed_changes_the_drops_and_the_model_round_trips(tmp_path):
    X, y = _data()
    a = samebits.GradientBoostingRegressor(n_estimators=20, boosting_type="dart", drop_rate=0.4, drop_seed=1).fit(X, y)
    b = samebits.GradientBoostingRegressor(n_estimators=20, boosting_type="dart", drop_rate=0.4, drop_seed=2).fit(X, y)
    assert a.model_digest_ != b.model_digest_
    path = str(tmp_path / "d.sbm")
    a.save_model(path)
    r = samebits.load_model(path)
    assert (r.boosting_type, r.drop_rate, r.drop_seed, r.uniform_drop) == ("dart", 0.4, 1, False)
    assert np.array_equal(r.predict(X), a.predict(X))
    assert r.fit(X, y).model_digest_ == a.model_digest_


def test_what_dart_cannot_do_is_refused_by_name():
    X, y = _data(600)
    with pytest.raises(Exception, match="does not take early_stopping_rounds"):
        samebits.GradientBoostingRegressor(n_estimators=5, boosting_type="dart", early_stopping_rounds=2).fit(
            X, y, eval_set=[(X, y)])
    with pytest.raises(Exception, match="does not take objective=quantile"):
        samebits.GradientBoostingRegressor(n_estimators=5, boosting_type="dart", loss="quantile").fit(X, y)
    with pytest.raises(Exception, match="not supported: gbdt or dart"):
        samebits.GradientBoostingRegressor(n_estimators=5, boosting_type="goss").fit(X, y)
    init = samebits.GradientBoostingRegressor(n_estimators=3).fit(X, y)
    with pytest.raises(Exception, match="does not continue a model"):
        samebits.GradientBoostingRegressor(n_estimators=3, boosting_type="dart").fit(X, y, init_model=init)
