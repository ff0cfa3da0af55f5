"""LightGBM's predict outputs on the estimators (docs/explain.md):
predict(X, raw_score=True), predict(X, pred_leaf=True), predict(X,
pred_contrib=True), on boosting and on the forests, feature_importances_ by
importance_type, dump_model. Each checked against an independent reading:
the leaves' values from dump_model re-add to the raw margins' bits, the
contributions add up to the raw margins, and against exact Shapley values by
brute force over every feature subset."""
import itertools
import math

import numpy as np
import pytest

import samebits
from samebits.errors import InvalidArgumentError


def data(n, kind, seed=0, F=4):
    rnd = np.random.default_rng(seed)
    X = (rnd.random((n, F)) * 10).astype(np.float32)
    X[rnd.random((n, F)) < 0.04] = np.nan
    a = np.nan_to_num(X[:, 0], nan=2.0)
    t = a * 0.7 - np.nan_to_num(X[:, 1], nan=7.0) * 0.4 + (X[:, 2] > 5) * 2.0
    if kind == "regression":
        return X, t.astype(np.float32)
    if kind == "binary":
        return X, (t > 1).astype(np.int64)
    return X, np.digitize(t, [0.0, 3.0]).astype(np.int64)


ESTIMATORS = [
    (lambda: samebits.GradientBoostingRegressor(n_estimators=8, num_leaves=8, min_samples_leaf=5), "regression"),
    (lambda: samebits.GradientBoostingClassifier(n_estimators=6, num_leaves=6, min_samples_leaf=5), "binary"),
    (lambda: samebits.GradientBoostingClassifier(n_estimators=4, num_leaves=6, min_samples_leaf=5), "multiclass"),
    (lambda: samebits.RandomForestClassifier(n_estimators=5, max_depth=5, random_state=1), "multiclass"),
    (lambda: samebits.ExtraTreesRegressor(n_estimators=5, max_depth=6, random_state=2), "regression"),
    (lambda: samebits.IsolationForest(n_estimators=6, max_samples=64, random_state=3), "regression"),
]


def _walk_value(nodes, k, x, S, count):
    """The value of subset S (a set of features) for row x: the cover-weighted walk, in double."""
    n = nodes[k]
    if "leaf_value" in n:
        return n["leaf_value"]
    f = n["split_feature"]
    if f in S:
        v = x[f]
        left = n["default_left"] if math.isnan(v) else v <= float(n["threshold"])
        return _walk_value(nodes, n["left"] if left else n["right"], x, S, count)
    cl, cr = count[n["left"]], count[n["right"]]
    return (cl * _walk_value(nodes, n["left"], x, S, count) + cr * _walk_value(nodes, n["right"], x, S, count)) / (
        cl + cr)


def _brute(dump, x):
    """Exact Shapley values of every feature, per class, with the expected value last."""
    K, F = dump["num_class"], dump["num_features"]
    phi = np.zeros((K, F + 1))
    phi[:, F] = dump["base_score"]
    for t in dump["trees"]:
        nodes = t["nodes"]
        count = [n["count"] for n in nodes]
        val = {S: _walk_value(nodes, 0, x, set(S), count)
               for r in range(F + 1) for S in itertools.combinations(range(F), r)}
        c = t["class"]
        phi[c, F] += val[()]
        for f in range(F):
            for S, v in val.items():
                if f in S:
                    continue
                w = math.factorial(len(S)) * math.factorial(F - len(S) - 1) / math.factorial(F)
                phi[c, f] += w * (val[tuple(sorted(S + (f,)))] - v)
    return phi.reshape(-1)


@pytest.mark.parametrize("make,kind", ESTIMATORS)
def test_pred_leaf_and_pred_contrib(make, kind):
    X, y = data(400, kind, seed=1)
    Xt, _ = data(120, kind, seed=2)
    est = make()
    est.fit(X, y) if not isinstance(est, samebits.IsolationForest) else est.fit(X)
    raw = np.asarray(est.predict(Xt, raw_score=True), dtype=np.float32)
    leaf = est.predict(Xt, pred_leaf=True)
    contrib = est.predict(Xt, pred_contrib=True)
    assert isinstance(leaf, samebits.IndexArray) and isinstance(contrib, samebits.Array)
    leaf, contrib = np.asarray(leaf), np.asarray(contrib)
    dump = est.dump_model()
    K, F, trees = dump["num_class"], dump["num_features"], dump["trees"]
    assert leaf.dtype == np.int32 and leaf.shape == (len(Xt), len(trees))
    assert contrib.dtype == np.float32 and contrib.shape == (len(Xt), K * (F + 1))
    raw = raw.reshape(len(Xt), K)
    # the leaves' values re-added in tree order: the raw margins' bits
    values = [{n["leaf_index"]: np.float32(n["leaf_value"]) for n in t["nodes"] if "leaf_index" in n} for t in trees]
    for i in range(len(Xt)):
        m = np.array(dump["base_score"], dtype=np.float32)
        for t in range(len(trees)):
            m[t % K] = np.float32(m[t % K] + values[t][int(leaf[i, t])])
        assert m.tobytes() == raw[i].tobytes()
    # local accuracy and brute force, within 2^-18 of the leaf scale (docs/explain.md)
    scale = sum(max(abs(v) for v in vs.values()) for vs in values) + float(np.abs(dump["base_score"]).sum())
    sums = contrib.astype(np.float64).reshape(len(Xt), K, F + 1).sum(axis=2)
    assert np.abs(sums - raw).max() <= scale * 2.0 ** -18
    for i in range(20):
        assert np.abs(_brute(dump, Xt[i].astype(np.float64)) - contrib[i]).max() <= scale * 2.0 ** -18
    # n_jobs moves no bit
    for n_jobs in (1, 2, 7):
        est.set_params(n_jobs=n_jobs)
        assert np.asarray(est.predict(Xt, pred_contrib=True)).tobytes() == contrib.tobytes()
        assert np.asarray(est.predict(Xt, pred_leaf=True)).tobytes() == leaf.tobytes()


def test_opencl_gives_the_host_bits():
    X, y = data(300, "multiclass", seed=4)
    cpu = samebits.GradientBoostingClassifier(n_estimators=3, num_leaves=6, min_samples_leaf=5).fit(X, y)
    try:
        cl = samebits.GradientBoostingClassifier(n_estimators=3, num_leaves=6, min_samples_leaf=5,
                                                 device="opencl").fit(X, y)
    except samebits.errors.BackendUnavailableError as e:
        pytest.skip("no OpenCL device: %s" % e)
    assert cl.model_digest_ == cpu.model_digest_
    for kw in ({"pred_leaf": True}, {"pred_contrib": True}):
        assert np.asarray(cl.predict(X, **kw)).tobytes() == np.asarray(cpu.predict(X, **kw)).tobytes()


def test_importance_type_and_refusals():
    X, y = data(300, "regression", seed=5)
    est = samebits.GradientBoostingRegressor(n_estimators=5, num_leaves=6, min_samples_leaf=5).fit(X, y)
    assert est.get_params()["importance_type"] == "split"  # LightGBM's default
    dump = est.dump_model()
    splits = [0] * 4
    gains = [np.float32(0)] * 4
    for t in dump["trees"]:
        for n in t["nodes"]:
            if "split_feature" in n:
                splits[n["split_feature"]] += 1
                gains[n["split_feature"]] = np.float32(gains[n["split_feature"]] + np.float32(n["split_gain"]))
    assert est.feature_importances_.tolist() == splits
    est.set_params(importance_type="gain")
    assert np.asarray(est.feature_importances_).tobytes() == np.array(gains, dtype=np.float32).tobytes()
    est.set_params(importance_type="cover")
    with pytest.raises(InvalidArgumentError, match="importance_type"):
        est.feature_importances_
    with pytest.raises(InvalidArgumentError, match="set one"):
        est.predict(X, raw_score=True, pred_leaf=True)
    rf = samebits.RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    fi = rf.feature_importances_.tolist()  # the forests keep scikit-learn's normalized impurity importances
    assert abs(math.fsum(fi) - 1.0) < 1e-6
    assert "tree 0 class 0" in est.dump_model("text")


def test_matches_shap_tree_explainer():
    """shap's TreeExplainer (when installed) on the same trees, given as its
    custom-tree dictionaries (no LightGBM format involved): within 2^-18 of the
    leaf scale, and the same expected value."""
    shap = pytest.importorskip("shap")
    X, y = data(300, "regression", seed=6)
    X = np.nan_to_num(X, nan=1.0)
    est = samebits.GradientBoostingRegressor(n_estimators=6, num_leaves=7, min_samples_leaf=5).fit(X, y)
    d = est.dump_model()
    trees = []
    for t in d["trees"]:
        ns = t["nodes"]
        trees.append({
            "children_left": np.array([n.get("left", -1) for n in ns]),
            "children_right": np.array([n.get("right", -1) for n in ns]),
            "children_default": np.array([(n["left"] if n["default_left"] else n["right"]) if "left" in n else -1
                                          for n in ns]),
            "features": np.array([n.get("split_feature", -2) for n in ns]),
            "thresholds": np.array([float(n.get("threshold", 0.0)) for n in ns]),
            "values": np.array([[n.get("leaf_value", 0.0)] for n in ns]),
            "node_sample_weight": np.array([float(n["count"]) for n in ns]),
        })
    ex = shap.TreeExplainer({"trees": trees, "base_offset": d["base_score"][0]})
    ours = np.asarray(est.predict(X[:60], pred_contrib=True))
    sv = ex.shap_values(X[:60].astype(np.float64))
    scale = sum(max(abs(n["leaf_value"]) for n in t["nodes"] if "leaf_value" in n) for t in d["trees"])
    assert np.abs(sv - ours[:, :-1]).max() <= scale * 2.0 ** -18
    assert abs(float(np.ravel(ex.expected_value)[0]) - float(ours[0, -1])) <= scale * 2.0 ** -18


def test_a_loaded_model_explains_the_same_bits(tmp_path):
    """load_model (from bytes and from a file) gives the estimator whose leaves and
    contributions are the fitted one's bytes."""
    X, y = data(300, "multiclass", seed=7)
    est = samebits.GradientBoostingClassifier(n_estimators=3, num_leaves=6, min_samples_leaf=5).fit(X, y)
    path = tmp_path / "m.sbm"
    est.save_model(str(path))
    for loaded in (samebits.load_model(est.model_bytes()), samebits.load_model(str(path))):
        for kw in ({"pred_leaf": True}, {"pred_contrib": True}, {"raw_score": True}):
            assert np.asarray(loaded.predict(X, **kw)).tobytes() == np.asarray(est.predict(X, **kw)).tobytes()


def _sbm_from_lightgbm(booster, nf, objective, K):
    """A samebits model file (docs/model-format.md, version 2) holding a LightGBM
    booster's trees, written from its dump_model: nodes in the order LightGBM
    split them (children appended at each split, in split_index order), float32
    thresholds rounded down (x <= t keeps its answer for every float32 x), the
    leaf values rounded to float32, the internal and leaf counts as the covers."""
    import hashlib
    import struct

    def f32_down(v):
        f = np.float32(v)
        return float(np.nextafter(f, np.float32(-np.inf)) if float(f) > v else f)

    trees = []
    for t in booster.dump_model()["tree_info"]:
        root = t["tree_structure"]
        splits = []

        def walk(d):
            if "split_index" in d:
                splits.append(d)
                walk(d["left_child"])
                walk(d["right_child"])
        walk(root)
        splits.sort(key=lambda d: d["split_index"])
        order, dicts = {id(root): 0}, [root]
        for d in splits:
            for c in (d["left_child"], d["right_child"]):
                order[id(c)] = len(dicts)
                dicts.append(c)
        nodes = []
        for d in dicts:
            if "split_index" in d:
                assert d["decision_type"] == "<=" and d["missing_type"] == "None", d
                nodes.append((d["split_feature"], f32_down(d["threshold"]), order[id(d["left_child"])],
                              order[id(d["right_child"])], 0.0, d["split_gain"], d["internal_count"],
                              1 if d["default_left"] else 0))
            else:
                nodes.append((-1, 0.0, -1, -1, d["leaf_value"], 0.0, d.get("leaf_count", 1), 0))
        trees.append(nodes)

    def s(b):
        return struct.pack("<I", len(b)) + b
    payload = struct.pack("<ii", objective, K) + struct.pack("<%df" % K, *([0.0] * K)) + struct.pack("<i", len(trees))
    for nodes in trees:
        payload += struct.pack("<i", len(nodes)) + b"".join(struct.pack("<ifiiffqB", *n) for n in nodes)
    body = s(b"sb-identical-v4") + struct.pack("<iii", 0, 0, nf) + s(b"") + b"\0" + b"TREE" + \
        struct.pack("<Q", len(payload)) + payload
    head = b"SBMODEL\0" + struct.pack("<IQ", 2, 20 + len(body) + 32) + body
    return head + hashlib.sha256(head).digest()


@pytest.mark.parametrize("objective,K", [("regression", 1), ("multiclass", 3)])
def test_matches_lightgbm_on_its_own_trees(objective, K):
    """LightGBM's trees carried into a samebits model file: pred_leaf gives
    LightGBM's own leaf indices exactly (the numbering convention, checked
    against LightGBM itself), and pred_contrib LightGBM's contributions within
    2^-18 of the leaf scale (LightGBM computes in double from its double leaf
    values; samebits in float32 from the leaves rounded to float32)."""
    lgb = pytest.importorskip("lightgbm")
    rnd = np.random.default_rng(8)
    X = (rnd.random((3000, 6)) * 10).astype(np.float32)
    t = X[:, 0] * 0.7 - X[:, 1] * 0.4 + (X[:, 2] > 5) * 2.0 + rnd.random(3000)
    y = t.astype(np.float32) if K == 1 else np.digitize(t, [1.0, 3.0])
    params = {"objective": objective, "num_leaves": 15, "verbose": -1, "num_threads": 1, "min_data_in_leaf": 20}
    if K > 1:
        params["num_class"] = K
    booster = lgb.train(params, lgb.Dataset(X, y), 12)
    est = samebits.load_model(_sbm_from_lightgbm(booster, 6, 0 if K == 1 else 2, K))
    Xt = (rnd.random((400, 6)) * 10).astype(np.float32)
    assert (np.asarray(est.predict(Xt, pred_leaf=True)) == booster.predict(Xt, pred_leaf=True)).all()
    ours = np.asarray(est.predict(Xt, pred_contrib=True))
    theirs = booster.predict(Xt, pred_contrib=True)
    assert ours.shape == theirs.shape
    d = est.dump_model()
    scale = sum(max(abs(n["leaf_value"]) for n in t["nodes"] if "leaf_value" in n) for t in d["trees"])
    assert np.abs(ours - theirs).max() <= scale * 2.0 ** -18, np.abs(ours - theirs).max()
    # importances: LightGBM's split counts exactly, its total gains up to float32 sums
    assert est.feature_importances_.tolist() == booster.feature_importance("split").tolist()
    est.set_params(importance_type="gain")
    gain = booster.feature_importance("gain")
    assert np.allclose(np.asarray(est.feature_importances_), gain, rtol=1e-5, atol=1e-3)
