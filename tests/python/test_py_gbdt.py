"""The Python package: fit/predict for regression, binary and multiclass; inputs
(lists, buffers, NumPy in C and Fortran order, float64); results (samebits.Array);
the fitted attributes; save/load and pickle."""
import array
import math
import pickle

import pytest

import samebits
from conftest import f32, make_data

np = pytest.importorskip("numpy")

SMALL = dict(n_estimators=15, num_leaves=8, min_samples_leaf=5)


def test_import_reports_versions():
    assert samebits.__version__ == samebits.version() == "0.1.0"
    assert samebits.profile_version() == "sb-identical-v9"
    assert samebits.backend() == "cpu"
    info = samebits.build_info()
    assert info["version"] == "0.1.0" and info["contraction"].startswith("off")


def test_regression_fit_predict():
    X, y = make_data(400, "regression")
    m = samebits.GradientBoostingRegressor(**SMALL).fit(X, y)
    p = m.predict(X)
    assert isinstance(p, samebits.Array) and p.shape == (400,) and len(p) == 400
    assert m.score(X, y) > 0.8
    assert m.n_features_in_ == 4 and m.n_estimators_ == 15 and m.objective_ == "regression"
    assert not hasattr(m, "feature_names_in_") and not hasattr(m, "classes_")
    assert len(m.model_digest_) == 64 and m.digest() == m.model_digest_
    fi = m.feature_importances_.tolist()  # LightGBM's default importance_type: splits per feature
    assert len(fi) == 4 and all(v == int(v) >= 0 for v in fi) and fi[0] > fi[3]
    m.set_params(importance_type="gain")  # total gains, not normalized (LightGBM's)
    gain = m.feature_importances_.tolist()
    assert len(gain) == 4 and math.fsum(gain) > 1.0 and gain[0] > gain[3]
    m.set_params(importance_type="split")
    assert m.numeric_mode_used() == "identical"


def test_binary_labels_and_proba():
    X, y = make_data(400, "binary")
    labels = ["no" if t == 0 else "yes" for t in y]
    m = samebits.GradientBoostingClassifier(**SMALL).fit(X, labels)
    assert list(m.classes_) == ["no", "yes"] and m.n_classes_ == 2 and m.objective_ == "binary"
    pred = m.predict(X)
    assert set(pred) <= {"no", "yes"} and m.score(X, labels) > 0.85
    proba = np.asarray(m.predict_proba(X))
    assert proba.shape == (400, 2) and proba.dtype == np.float32
    # column 0 is 1 - P(1) rounded once to float32, exactly as float32 arithmetic does it
    assert np.array_equal(proba[:, 0], np.float32(1) - proba[:, 1])
    assert np.array_equal(np.where(proba[:, 1] > 0.5, "yes", "no"), np.asarray(pred))
    # with NumPy loaded, classes_ and predict are NumPy arrays of the labels' dtype
    m2 = samebits.GradientBoostingClassifier(**SMALL).fit(np.asarray(X), np.asarray(y) * 10 + 5)
    assert m2.classes_.tolist() == [5, 15] and m2.predict(np.asarray(X)).dtype == m2.classes_.dtype


def test_binary_trees_do_not_depend_on_label_values():
    """The labels are stored beside the trees (docs/model-format.md, "Class
    labels"): the same trees and margins whatever the labels, but the file, and
    so the digest, names them; 0..K-1 stores none (the bytes of before)."""
    X, y = make_data(300, "binary")
    a = samebits.GradientBoostingClassifier(**SMALL).fit(X, y)
    b = samebits.GradientBoostingClassifier(**SMALL).fit(X, ["b" if t else "a" for t in y])
    assert bytes(a.predict_raw(X)) == bytes(b.predict_raw(X))
    assert a.model_digest_ != b.model_digest_
    assert a.model_bytes()[8] == 2 and b.model_bytes()[8] == 3  # format versions: labels make it 3
    assert list(samebits.load_model(b.model_bytes()).classes_) == ["a", "b"]


def test_multiclass():
    X, y = make_data(600, "multiclass")
    labels = [["lo", "mid", "hi"][t] for t in y]
    m = samebits.GradientBoostingClassifier(**SMALL).fit(X, labels)
    assert list(m.classes_) == ["hi", "lo", "mid"] and m.objective_ == "multiclass"
    proba = np.asarray(m.predict_proba(X))
    assert proba.shape == (600, 3)
    assert np.allclose(proba.sum(axis=1), 1.0, atol=1e-5)
    assert m.score(X, labels) > 0.8
    raw = m.decision_function(X)
    assert raw.shape == (600, 3)
    idx = np.asarray(m.predict_proba(X)).argmax(axis=1)
    assert [m.classes_[i] for i in idx] == list(m.predict(X))


def test_generic_gradient_boosting_follows_loss():
    X, y = make_data(300, "binary")
    g = samebits.GradientBoosting(loss="log_loss", **SMALL).fit(X, y)
    c = samebits.GradientBoostingClassifier(**SMALL).fit(X, y)
    assert g.model_digest_ == c.model_digest_ and g._estimator_type == "classifier"
    r = samebits.GradientBoosting(**SMALL).fit(X, y)
    assert r.objective_ == "regression" and r._estimator_type == "regressor"


def test_inputs_give_the_same_model():
    X, y = make_data(300, "regression")
    ref = samebits.GradientBoostingRegressor(**SMALL).fit(X, y).model_digest_
    a32 = np.asarray(X, dtype=np.float32)
    variants = {
        "float32 C": a32,
        "float32 F": np.asfortranarray(a32),
        "float64 C": np.asarray(X, dtype=np.float64),
        "float64 F": np.asfortranarray(np.asarray(X, dtype=np.float64)),
        "strided": np.asarray(np.repeat(a32, 2, axis=1)[:, ::2]),
        "memoryview": memoryview(a32),
        "memoryview F": memoryview(np.asfortranarray(np.asarray(X, dtype=np.float64))),
        "tuples": tuple(tuple(r) for r in X),
    }
    for name, Xv in variants.items():
        for yv in (y, np.asarray(y, dtype=np.float64), array.array("f", y), array.array("d", y)):
            got = samebits.GradientBoostingRegressor(**SMALL).fit(Xv, yv).model_digest_
            assert got == ref, name


def test_float64_is_rounded_to_nearest_even_once():
    rnd = np.random.default_rng(3)
    X64 = rnd.normal(size=(300, 3))
    y = X64[:, 0] * 2 + X64[:, 1]
    a = samebits.GradientBoostingRegressor(**SMALL).fit(X64, y)
    b = samebits.GradientBoostingRegressor(**SMALL).fit(X64.astype(np.float32), y.astype(np.float32))
    c = samebits.GradientBoostingRegressor(**SMALL).fit([[float(v) for v in r] for r in X64], list(map(float, y)))
    assert a.model_digest_ == b.model_digest_ == c.model_digest_
    assert a.predict(X64) == b.predict(X64.astype(np.float32))


def test_integer_and_bool_inputs():
    X = [[i % 5, (i * 7) % 13, i % 2 == 0] for i in range(200)]
    y = [a * 2 + b for a, b, _ in X]
    a = samebits.GradientBoostingRegressor(**SMALL).fit(X, y)
    b = samebits.GradientBoostingRegressor(**SMALL).fit(np.asarray(X, dtype=np.int64), np.asarray(y))
    c = samebits.GradientBoostingRegressor(**SMALL).fit(np.asarray(X, dtype=np.float32), y)
    assert a.model_digest_ == b.model_digest_ == c.model_digest_


def test_array_result_is_a_zero_copy_buffer():
    X, y = make_data(200, "multiclass")
    m = samebits.GradientBoostingClassifier(**SMALL).fit(X, y)
    p = m.predict_proba(X)
    mv = memoryview(p)
    assert mv.shape == (200, 3) and mv.itemsize == 4 and mv.format in ("<f", ">f", "f")
    v = np.asarray(p)
    assert v.dtype == np.float32 and v.shape == (200, 3)
    assert v.__array_interface__["data"][0] == p.__array_interface__["data"][0]  # a view, not a copy
    v[0, 0] = 42.0
    assert p[0, 0] == 42.0 and p[0][0] == 42.0
    assert p.tolist()[0][0] == 42.0 and len(p) == 200 and p.ndim == 2 and p.size == 600
    r = samebits.GradientBoostingRegressor(**SMALL).fit(X, [float(t) for t in y]).predict(X)
    assert r[0] == r.tolist()[0] and r[-1] == r.tolist()[-1] and r[2:4] == r.tolist()[2:4]
    assert list(r) == r.tolist() and np.frombuffer(r.tobytes(), dtype="<f4").tolist() == r.tolist()
    assert pickle.loads(pickle.dumps(r)) == r
    assert "samebits.Array" in repr(r)


def test_predict_nan_and_inf_rows():
    X, y = make_data(300, "regression")
    m = samebits.GradientBoostingRegressor(**SMALL).fit(X, y)
    out = m.predict([[float("nan")] * 4, [float("inf"), -float("inf"), 0.0, None]])
    assert all(math.isfinite(v) for v in out.tolist())


def test_weights_and_eval_set_early_stopping():
    X, y = make_data(600, "binary")
    w = [2.0 if t else 1.0 for t in y]
    a = samebits.GradientBoostingClassifier(**SMALL).fit(X, y, sample_weight=w)
    b = samebits.GradientBoostingClassifier(**SMALL).fit(X, y)
    assert a.model_digest_ != b.model_digest_
    Xv, yv = make_data(300, "binary", seed=2)
    es = samebits.GradientBoostingClassifier(n_estimators=400, learning_rate=0.5, early_stopping_rounds=5,
                                             min_samples_leaf=5)
    es.fit(X, y, eval_set=[(Xv, yv)])
    assert 1 <= es.n_estimators_ < 400


def test_dataframe_feature_names():
    pd = pytest.importorskip("pandas")
    X, y = make_data(300, "regression")
    df = pd.DataFrame(X, columns=["alpha", "beta", "gamma", "delta"])
    m = samebits.GradientBoostingRegressor(**SMALL).fit(df, y)
    assert list(m.feature_names_in_) == ["alpha", "beta", "gamma", "delta"]
    assert m.predict(df) == m.predict(X)
    with pytest.raises(samebits.InvalidInputError, match="feature names"):
        m.predict(df[["beta", "alpha", "gamma", "delta"]])
    # the names go into the model file, so the model differs from the unnamed one
    assert m.model_digest_ != samebits.GradientBoostingRegressor(**SMALL).fit(X, y).model_digest_


def test_save_load_and_module_load(tmp_path):
    X, y = make_data(400, "multiclass")
    m = samebits.GradientBoostingClassifier(**SMALL).fit(X, y)
    path = tmp_path / "m.sbm"
    m.save_model(str(path))
    assert path.read_bytes() == m.model_bytes()
    loaded = samebits.GradientBoostingClassifier().load_model(str(path))
    assert loaded.model_digest_ == m.model_digest_
    assert loaded.predict_proba(X) == m.predict_proba(X) and list(loaded.classes_) == [0, 1, 2]
    any_ = samebits.load_model(path.read_bytes())
    assert isinstance(any_, samebits.GradientBoostingClassifier) and np.array_equal(any_.predict(X), m.predict(X))
    with pytest.raises(samebits.InvalidInputError):
        samebits.GradientBoostingRegressor().load_model(str(path))


def test_pickle_round_trip_gives_identical_prediction_bytes():
    for kind, cls in (("regression", samebits.GradientBoostingRegressor),
                      ("binary", samebits.GradientBoostingClassifier),
                      ("multiclass", samebits.GradientBoostingClassifier)):
        X, y = make_data(300, kind)
        m = cls(**SMALL).fit(X, y)
        m2 = pickle.loads(pickle.dumps(m))
        assert m2.model_digest_ == m.model_digest_ and m2.get_params() == m.get_params()
        assert m2.model_bytes() == m.model_bytes()
        if kind == "regression":
            assert m2.predict(X).tobytes() == m.predict(X).tobytes()
        else:
            assert m2.predict_proba(X).tobytes() == m.predict_proba(X).tobytes()
            assert np.array_equal(m2.predict(X), m.predict(X))
        assert m2.feature_importances_ == m.feature_importances_
    unfitted = pickle.loads(pickle.dumps(samebits.GradientBoostingRegressor(n_estimators=3)))
    assert unfitted.n_estimators == 3 and not unfitted.__sklearn_is_fitted__()


def test_stage_card():
    X, y = make_data(200, "regression")
    m = samebits.GradientBoostingRegressor(record_stages=True, **SMALL).fit(X, y)
    card = m.card()
    text = str(card)
    assert text.count("\n") > 10 and "bin" in text
    again = samebits.GradientBoostingRegressor(record_stages=True, **SMALL).fit(X, y).card()
    assert card.compare(again)[0]
    with pytest.raises(samebits.InvalidArgumentError, match="record_stages"):
        samebits.GradientBoostingRegressor(**SMALL).fit(X, y).card()


def test_get_set_params_and_repr():
    m = samebits.GradientBoostingClassifier(n_estimators=7)
    p = m.get_params()
    assert p["n_estimators"] == 7 and p["loss"] == "log_loss" and "numeric_mode" in p and "device" in p
    assert m.set_params(learning_rate=0.3) is m and m.learning_rate == 0.3
    assert repr(m) == "GradientBoostingClassifier(learning_rate=0.3, n_estimators=7)"
    with pytest.raises(samebits.InvalidArgumentError, match="nonsense"):
        m.set_params(nonsense=1)


def test_float_parameters_are_read_as_the_cli_reads_them():
    # learning_rate=0.1 (Python float) and the C default 0.1f give the same model
    X, y = make_data(200, "regression")
    assert f32(0.1) != 0.1
    a = samebits.GradientBoostingRegressor(**SMALL).fit(X, y)
    b = samebits.GradientBoostingRegressor(learning_rate=np.float64(0.1), **SMALL).fit(X, y)
    assert a.model_digest_ == b.model_digest_


def test_array_acts_as_numpy_when_numpy_is_loaded():
    X, y = make_data(200, "regression")
    p = samebits.GradientBoostingRegressor(**SMALL).fit(X, y).predict(X)
    v = np.asarray(p)
    assert p.mean() == v.mean() and p.argmax() == v.argmax()
    assert np.array_equal(p > 0.5, v > 0.5) and np.array_equal(p - v, np.zeros(200, np.float32))
    assert np.array_equal(p[np.array([3, 1])], v[[3, 1]]) and np.mean(p) == v.mean()


def test_max_leaf_nodes_is_num_leaves():
    X, y = make_data(300, "regression")
    a = samebits.GradientBoostingRegressor(num_leaves=6, n_estimators=5).fit(X, y)
    b = samebits.GradientBoostingRegressor(max_leaf_nodes=6, n_estimators=5).fit(X, y)
    assert a.model_digest_ == b.model_digest_
    with pytest.raises(samebits.InvalidArgumentError, match="disagree"):
        samebits.GradientBoostingRegressor(num_leaves=6, max_leaf_nodes=7).fit(X, y)


def test_dense_label_encoding_equals_numpy_unique():
    """The counting path of label encoding gives np.unique's classes (dtype included)
    and indices; wide ranges, negative zero and strings take np.unique itself."""
    np = pytest.importorskip("numpy")
    from samebits.gbdt import GradientBoosting
    g = np.random.default_rng(5)
    cases = [g.integers(-5, 7, 3000), g.integers(0, 2, 3000).astype(np.float32), g.random(3000) < 0.3,
             g.integers(3, 9, 3000).astype(np.uint8), g.integers(0, 4, 3000).astype(np.float64) * 3 + 1,
             np.array([7.0, -2.0, 7.0])]
    for a in cases:
        classes, inverse = np.unique(a, return_inverse=True)
        got = GradientBoosting._encode_dense(np, a)
        assert got is not None
        assert got[0].dtype == classes.dtype and np.array_equal(got[0], classes)
        assert np.array_equal(np.asarray(got[1][0]).reshape(-1)[:len(a)], inverse)
    for a in [np.array([0.0, 2.0 ** 21]), np.array([-0.0, 1.0]), np.array(["a", "b"])]:
        assert GradientBoosting._encode_dense(np, a) is None
    # the classifier fitted through either path is the same model
    X = g.standard_normal((400, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64) * 5 - 2
    a = samebits.GradientBoostingClassifier(n_estimators=3).fit(X, y)
    b = samebits.GradientBoostingClassifier(n_estimators=3).fit(X, [int(v) for v in y])
    assert a.digest() == b.digest() and list(a.classes_) == list(b.classes_)


def test_float32_overflow_is_refused_by_name():
    """Labels near +-3e38 and weights near 1e30: LimitError by name, from the
    fit (no model whose bits would depend on the machine)."""
    X = [[float(i % 7), float(i % 3)] for i in range(120)]
    with pytest.raises(samebits.LimitError, match="the gradients' sum over 120 rows can reach"):
        samebits.GradientBoostingRegressor(n_estimators=3).fit(X, [3e38 if i % 2 else -3e38 for i in range(120)])
    with pytest.raises(samebits.LimitError, match="iteration 0, class 0: a gradient is not finite"):
        samebits.GradientBoostingRegressor(n_estimators=3, base_score=0.0).fit(
            X, [1e9 * (i % 2) for i in range(120)], sample_weight=[1e30] * 120)
    # just inside the limits it trains, and predicts finite values
    m = samebits.GradientBoostingRegressor(n_estimators=3).fit(X, [1e15 * (i % 2) for i in range(120)])
    assert all(math.isfinite(v) for v in m.predict(X))
