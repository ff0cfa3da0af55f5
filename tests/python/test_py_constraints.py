"""Per-node rules of gradient boosting's split search (issue 21): monotone
constraints (LightGBM's basic method), interaction constraints and
colsample_bynode (LightGBM's feature_fraction_bynode). Each holds on every
device, gives the same model bytes on every device and thread count, and each
test can fail: the unconstrained fit on the same data breaks the property."""
import json
import os
import subprocess

import numpy as np
import pytest

import samebits
from gbdt_devices import devices as _devices, digests_by_threads

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    y = (np.sin(3 * X[:, 0]) + X[:, 0] - 0.5 * X[:, 1] + 0.3 * X[:, 2] * X[:, 3]
         + 0.3 * rng.normal(size=n)).astype(np.float32)
    return X, y


DEVICES = _devices()


def _sweep(model, X, feature, rows=40):
    """Predictions along a grid of feature, the other features held at X[i]: (rows, 200)."""
    g = np.linspace(-3, 3, 200, dtype=np.float32)
    out = []
    for base in X[:rows]:
        Z = np.tile(base, (200, 1))
        Z[:, feature] = g
        out.append(model.predict(Z))
    return np.array(out)


def _paths(model):
    """Every root-to-leaf path's set of split features, over all trees."""
    d = model.dump_model("json")
    d = json.loads(d) if isinstance(d, str) else d
    out = []
    for t in d["trees"]:
        nodes = {n["node"]: n for n in t["nodes"]}

        def walk(k, used):
            n = nodes[k]
            if "leaf_value" in n:
                out.append(frozenset(used))
                return
            walk(n["left"], used | {n["split_feature"]})
            walk(n["right"], used | {n["split_feature"]})
        walk(0, frozenset())
    return out


def test_monotone_holds_on_every_device_and_is_identical():
    X, y = _data()
    digests = set()
    for dev in DEVICES:
        m = samebits.GradientBoostingRegressor(n_estimators=30, monotone_constraints=[1, -1, 0, 0],
                                               device=dev).fit(X, y)
        assert np.all(np.diff(_sweep(m, X, 0), axis=1) >= 0), dev
        assert np.all(np.diff(_sweep(m, X, 1), axis=1) <= 0), dev
        digests.add(m.model_digest_)
    assert len(digests) == 1, digests
    # the control: unconstrained, sin(3 x0) makes the fit decrease somewhere along x0
    free = samebits.GradientBoostingRegressor(n_estimators=30).fit(X, y)
    assert np.any(np.diff(_sweep(free, X, 0), axis=1) < 0)
    assert free.model_digest_ not in digests


def test_monotone_depthwise_and_binary():
    X, y = _data()
    yb = (y > np.median(y)).astype(np.float32)
    m = samebits.GradientBoostingClassifier(n_estimators=20, growth="depthwise", max_depth=4,
                                            monotone_constraints=[1, 0, 0, 0]).fit(X, yb)
    g = np.linspace(-3, 3, 200, dtype=np.float32)
    for base in X[:30]:
        Z = np.tile(base, (200, 1))
        Z[:, 0] = g
        assert np.all(np.diff(m.predict_proba(Z)[:, 1]) >= 0)


def test_interaction_constraints_keep_each_branch_in_one_set():
    X, y = _data()
    sets = [frozenset({0, 1}), frozenset({2, 3})]
    digests = set()
    for dev in DEVICES:
        m = samebits.GradientBoostingRegressor(n_estimators=30, interaction_constraints=[[0, 1], [2, 3]],
                                               device=dev).fit(X, y)
        for p in _paths(m):
            assert any(p <= s for s in sets), p
        digests.add(m.model_digest_)
    assert len(digests) == 1, digests
    free = samebits.GradientBoostingRegressor(n_estimators=30).fit(X, y)
    assert any(not any(p <= s for s in sets) for p in _paths(free))


def test_interaction_feature_in_no_set_stays_alone():
    """A feature of no set may start a branch (the root) and then the branch
    keeps to it: LightGBM's rule, no two features in a branch unless a set
    holds both."""
    X, y = _data()
    m = samebits.GradientBoostingRegressor(n_estimators=30, interaction_constraints=[[1, 2]]).fit(X, y)
    for p in _paths(m):
        assert p <= {1, 2} or len(p) <= 1, p


def test_bynode_changes_splits_and_is_identical_across_threads_and_devices():
    X, y = _data()
    digests = set()
    for dev in DEVICES:
        m = samebits.GradientBoostingRegressor(n_estimators=20, colsample_bynode=0.5, random_state=3,
                                               device=dev).fit(X, y)
        digests.add(m.model_digest_)
    assert len(digests) == 1, digests
    full = samebits.GradientBoostingRegressor(n_estimators=20, random_state=3).fit(X, y)
    assert full.model_digest_ not in digests
    other = samebits.GradientBoostingRegressor(n_estimators=20, colsample_bynode=0.5, random_state=4).fit(X, y)
    assert other.model_digest_ not in digests


def test_thread_counts_give_the_same_bytes():
    code = ("import numpy as np, samebits, sys; sys.path.insert(0, %r); from test_py_constraints import _data;"
            "X, y = _data(); print(samebits.GradientBoostingRegressor(n_estimators=20, colsample_bynode=0.5,"
            " monotone_constraints=[1, -1, 0, 0], interaction_constraints=[[0, 1], [1, 2, 3]]).fit(X, y)"
            ".model_digest_)" % os.path.dirname(os.path.abspath(__file__)))
    outs = digests_by_threads(code)
    assert len(outs) == 1, outs


def test_unconstrained_defaults_change_no_byte():
    """monotone_constraints of zeros, no sets and colsample_bynode=1 are the
    plain model, byte for byte (the parameters are written only when set)."""
    X, y = _data()
    a = samebits.GradientBoostingRegressor(n_estimators=10).fit(X, y)
    b = samebits.GradientBoostingRegressor(n_estimators=10, monotone_constraints=[0, 0, 0, 0],
                                           interaction_constraints=[], colsample_bynode=1.0).fit(X, y)
    assert a.model_digest_ == b.model_digest_


def test_saved_and_loaded_keeps_the_constraints(tmp_path):
    X, y = _data()
    m = samebits.GradientBoostingRegressor(n_estimators=10, monotone_constraints=[1, -1, 0, 0],
                                           interaction_constraints=[[0, 1], [2, 3]], colsample_bynode=0.5).fit(X, y)
    path = str(tmp_path / "m.sbm")
    m.save_model(path)
    r = samebits.load_model(path)
    assert r.monotone_constraints == [1, -1, 0, 0]
    assert r.interaction_constraints == [[0, 1], [2, 3]]
    assert r.colsample_bynode == 0.5
    assert r.set_params(n_estimators=10).fit(X, y).model_digest_ == m.model_digest_


@pytest.mark.parametrize("kw, msg", [
    ({"monotone_constraints": [1, 0]}, "monotone_constraints has 2 entries"),
    ({"monotone_constraints": [2, 0, 0, 0]}, "must be a comma-separated list"),
    ({"monotone_constraints": "1,0"}, "must be a list"),
    ({"interaction_constraints": [[0, 7]]}, "names feature 7"),
    ({"interaction_constraints": [[]]}, "each set non-empty"),
    ({"colsample_bynode": 0.0}, "colsample_bynode"),
])
def test_bad_constraints_are_named_errors(kw, msg):
    X, y = _data(500)
    with pytest.raises(Exception) as e:
        samebits.GradientBoostingRegressor(n_estimators=2, **kw).fit(X, y)
    assert msg in str(e.value), str(e.value)


def test_other_methods_are_refused_by_name():
    """LightGBM's intermediate and advanced methods are not here: refused, never run as basic."""
    X, y = _data(500)
    exe = os.path.join(os.environ.get("SAMEBITS_BUILD", os.path.join(ROOT, "build")), "samebits")
    if not os.path.exists(exe):
        pytest.skip("no CLI build")
    data = os.path.join(os.path.dirname(exe), "test-constraints.csv")
    np.savetxt(data, np.column_stack([y, X]), delimiter=",", fmt="%.6f")
    r = subprocess.run([exe, "task=train", "data=" + data, "label_column=0", "header=false",
                        "monotone_constraints=1,0,0,0", "monotone_constraints_method=intermediate",
                        "output_model=" + data + ".sbm"], capture_output=True, text=True)
    assert r.returncode != 0 and "basic method only" in r.stderr, r.stderr
    assert not os.path.exists(data + ".sbm")
