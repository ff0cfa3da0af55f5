"""warm_start for the forests (issue 21; sb_forest_fit_continue and
sb_isolation_forest_fit_continue): a forest of m trees warm-started to n equals,
byte for byte (model bytes and model_digest_), the n-tree forest fitted at once
with the same data, parameters and seed, at every thread count and on every
forest device; scikit-learn's refusals and warning; what cannot be warm-started
is refused by name.

The separating arms: SAMEBITS_TEST_FOREST_WARM_FROM_ZERO=1 keys the grown
trees' draws from 0 instead of their index (the CPU grower), and a forest whose
kept trees kept init's leaf values (divided by m, not n) is shown to differ
from the n-tree forest: either mistake fails the equality tested here."""
import json
import os
import warnings

import pytest

import samebits

np = pytest.importorskip("numpy")

RF_C, RF_R = samebits.RandomForestClassifier, samebits.RandomForestRegressor
ET_C, ET_R = samebits.ExtraTreesClassifier, samebits.ExtraTreesRegressor
IF = samebits.IsolationForest
ESTIMATORS = [RF_C, RF_R, ET_C, ET_R, IF]
IDS = [c.__name__ for c in ESTIMATORS]

_BACKENDS = samebits.build_info()["backends"]
# The forest devices besides the CPU grower: the batched host device and OpenCL
# (PoCL here; skipped where the library has no OpenCL); on a GPU machine
# SAMEBITS_LIB=build-cuda/libsamebits.so SAMEBITS_FOREST_DEVICES=cuda,opencl
# runs the same tests there (as test_py_forest_devices.py).
DEVICES = [d for d in os.environ.get("SAMEBITS_FOREST_DEVICES", "cpu-batched,opencl").split(",") if d]
# (device, threads): the CPU grower at 1 and 2 threads, then each device
LEGS = [("cpu", 1), ("cpu", 2)] + [(d, 2) for d in DEVICES]
LEG_IDS = ["%s-%dt" % leg for leg in LEGS]


def data(n=900, nf=7, seed=21):
    g = np.random.Generator(np.random.Philox(key=seed))
    X = g.standard_normal((n, nf)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1] * 2)        # ties
    X[g.random((n, nf)) < 0.05] = np.nan   # missing values
    Xn = np.nan_to_num(X)
    yc = (np.floor(np.abs(Xn[:, 0] * 4 + Xn[:, 1])) % 3).astype(np.int64)
    yr = (Xn[:, 0] * 2 + Xn[:, 1] ** 2 + 0.1 * g.standard_normal(n)).astype(np.float32)
    return X, yc, yr


X, YC, YR = data()


def target(cls):
    return None if cls is IF else (YR if cls in (RF_R, ET_R) else YC)


def fit(est, X_=X, y=None, **kw):
    return est.fit(X_, **kw) if y is None else est.fit(X_, y, **kw)


def on_leg(device, threads):
    if device in ("opencl", "cuda") and device not in _BACKENDS:
        pytest.skip("this build has no %s backend" % device)
    old = samebits.get_num_threads()
    samebits.set_num_threads(threads)
    return old


def warm(cls, first, last, y, X_=X, steps=(), **kw):
    """cls fitted with first trees, then warm-started through steps to last."""
    est = fit(cls(n_estimators=first, warm_start=True, **kw), X_, y)
    for n in list(steps) + [last]:
        est.set_params(n_estimators=n)
        fit(est, X_, y)
    return est


@pytest.mark.parametrize("device,threads", LEGS, ids=LEG_IDS)
@pytest.mark.parametrize("cls", ESTIMATORS, ids=IDS)
def test_ten_warm_started_to_25_is_the_25_tree_forest(cls, device, threads):
    old = on_leg(device, threads)
    try:
        y = target(cls)
        kw = dict(random_state=7, device=device)
        full = fit(cls(n_estimators=25, **kw), X, y)
        half = fit(cls(n_estimators=10, **kw), X, y)
        assert half.model_digest_ != full.model_digest_
        w = warm(cls, 10, 25, y, **kw)
        assert w.n_estimators_ == 25
        assert w.model_bytes() == full.model_bytes()
        assert w.model_digest_ == full.model_digest_
        # in steps (10, 11, 18, 25) and from one tree: the same forest
        assert warm(cls, 10, 25, y, steps=(11, 18), **kw).model_digest_ == full.model_digest_
        assert warm(cls, 1, 25, y, **kw).model_digest_ == full.model_digest_
    finally:
        samebits.set_num_threads(old)


# weighted and subsampled forests: the kept trees' leaves are valued from their
# own samples again, weights (per tree for balanced_subsample) included
WEIGHTED = [
    ("rf-sample-weight", RF_C, dict(max_samples=0.7), "sw"),
    ("rf-balanced-subsample", RF_C, dict(class_weight="balanced_subsample"), None),
    ("rf-balanced-min-weight-fraction", RF_C, dict(class_weight="balanced", min_weight_fraction_leaf=0.05), "sw"),
    ("rf-regression-weighted", RF_R, dict(max_depth=6), "sw"),
    ("et-no-bootstrap-zero-weights", ET_C, dict(), "zeros"),
    ("et-regression-bootstrap", ET_R, dict(bootstrap=True, max_features=0.5), "sw"),
]


@pytest.mark.parametrize("device", ["cpu"] + DEVICES)
@pytest.mark.parametrize("name,cls,kw,weights", WEIGHTED, ids=[w[0] for w in WEIGHTED])
def test_weighted_forests_warm_start_to_the_same_bytes(name, cls, kw, weights, device):
    old = on_leg(device, 2)
    try:
        y = target(cls)
        g = np.random.default_rng(5)
        sw = None
        if weights == "sw":
            sw = g.uniform(0.2, 3.0, len(X))
        elif weights == "zeros":
            sw = np.ones(len(X))
            sw[::9] = 0.0
        kw = dict(kw, random_state=3, device=device)
        full = cls(n_estimators=14, **kw).fit(X, y, sample_weight=sw)
        w = cls(n_estimators=5, warm_start=True, **kw).fit(X, y, sample_weight=sw)
        w.set_params(n_estimators=14).fit(X, y, sample_weight=sw)
        assert w.model_digest_ == full.model_digest_
    finally:
        samebits.set_num_threads(old)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=IDS)
def test_a_warm_start_moved_between_devices(cls):
    y = target(cls)
    full = fit(cls(n_estimators=12, random_state=2), X, y)
    w = fit(cls(n_estimators=4, warm_start=True, random_state=2, device="cpu-batched"), X, y)
    w.set_params(n_estimators=12, device="cpu")
    assert fit(w, X, y).model_digest_ == full.model_digest_


@pytest.mark.parametrize("cls", ESTIMATORS, ids=IDS)
def test_warm_start_on_an_unfitted_forest_is_a_plain_fit(cls):
    y = target(cls)
    a = fit(cls(n_estimators=6, random_state=1), X, y)
    assert fit(cls(n_estimators=6, random_state=1, warm_start=True), X, y).model_digest_ == a.model_digest_
    # warm_start=False refits from nothing whatever was fitted before
    b = fit(cls(n_estimators=3, random_state=1), X, y)
    b.set_params(n_estimators=6)
    assert fit(b, X, y).model_digest_ == a.model_digest_


# ---- the separating arms -----------------------------------------------------

@pytest.mark.parametrize("cls", ESTIMATORS, ids=IDS)
def test_arm_draws_keyed_from_zero_give_other_bytes(cls, monkeypatch):
    """With the grown trees' draws keyed from 0 (the arm), the warm-started
    forest is not the 25-tree forest: the equality above depends on keying
    each new tree by its index in the whole forest."""
    y = target(cls)
    full = fit(cls(n_estimators=25, random_state=7), X, y)
    assert warm(cls, 10, 25, y, random_state=7).model_digest_ == full.model_digest_
    monkeypatch.setenv("SAMEBITS_TEST_FOREST_WARM_FROM_ZERO", "1")
    broken = warm(cls, 10, 25, y, random_state=7)
    assert broken.model_digest_ != full.model_digest_
    monkeypatch.delenv("SAMEBITS_TEST_FOREST_WARM_FROM_ZERO")
    assert warm(cls, 10, 25, y, random_state=7).model_digest_ == full.model_digest_


def _trees(est):
    d = est.dump_model("json")
    return (json.loads(d) if isinstance(d, str) else d)["trees"]


def _leaves(tree):
    return [n["leaf_value"] for n in tree["nodes"] if "leaf_value" in n]


def _shape(tree):
    return [(n.get("split_feature"), n.get("threshold"), n.get("left"), n.get("right")) for n in tree["nodes"]]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=IDS)
def test_arm_kept_trees_keep_their_nodes_but_not_their_leaf_values(cls):
    """A leaf holds its mean divided by the forest's tree count: the 25-tree
    forest's first trees have init's nodes but other leaf values, so appending
    new trees to init's as they are (the naive warm start) would fail the
    equality; the warm start keeps the nodes and values the leaves anew."""
    y = target(cls)
    half = fit(cls(n_estimators=10, random_state=7), X, y)
    full = fit(cls(n_estimators=25, random_state=7), X, y)
    th, tf = _trees(half), _trees(full)
    k = len(th) // 10  # model trees an estimator (classes of a classifier)
    for i in range(len(th)):
        assert _shape(th[i]) == _shape(tf[i])
    assert any(_leaves(th[i]) != _leaves(tf[i]) for i in range(len(th)))
    assert len(tf) == 25 * k


# ---- scikit-learn's refusals and warning ---------------------------------------

@pytest.mark.parametrize("cls", ESTIMATORS, ids=IDS)
def test_fewer_estimators_is_a_value_error(cls):
    y = target(cls)
    est = fit(cls(n_estimators=8, warm_start=True, random_state=1), X, y)
    before = est.model_bytes()
    est.set_params(n_estimators=5)
    with pytest.raises(ValueError, match=r"n_estimators=5 must be larger or equal to len\(estimators_\)=8 when "
                                         r"warm_start==True"):
        fit(est, X, y)
    assert est.model_bytes() == before and est.n_estimators_ == 8


@pytest.mark.parametrize("cls", ESTIMATORS, ids=IDS)
def test_as_many_estimators_warns_and_fits_nothing(cls):
    y = target(cls)
    est = fit(cls(n_estimators=8, warm_start=True, random_state=1), X, y)
    model = est._model
    with pytest.warns(UserWarning, match="Warm-start fitting without increasing n_estimators does not fit new trees."):
        assert fit(est, X, y) is est
    assert est._model is model
    # without warm_start the same call refits, silently
    est.set_params(warm_start=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit(est, X, y)
    assert est._model is not model


@pytest.mark.parametrize("cls,param,value", [
    (RF_C, "max_depth", 4), (RF_C, "random_state", 2), (RF_R, "max_features", 0.5), (ET_C, "criterion", "entropy"),
    (ET_R, "bootstrap", True), (RF_C, "class_weight", "balanced"), (IF, "max_samples", 100), (IF, "random_state", 9),
    (RF_R, "max_bin", 63)])
def test_changed_parameters_are_refused_by_name(cls, param, value):
    y = target(cls)
    est = fit(cls(n_estimators=4, warm_start=True, random_state=1), X, y)
    before = est.model_bytes()
    est.set_params(n_estimators=9, **{param: value})
    key = {"random_state": "seed"}.get(param, param)
    with pytest.raises(samebits.InvalidArgumentError, match=r"init_model was fitted with .*%s=.*a warm start "
                                                             r"changes n_estimators only" % key):
        fit(est, X, y)
    assert est.model_bytes() == before


@pytest.mark.parametrize("cls", ESTIMATORS, ids=IDS)
def test_another_feature_count_is_refused_by_name(cls):
    y = target(cls)
    est = fit(cls(n_estimators=4, warm_start=True, random_state=1), X, y)
    est.set_params(n_estimators=9)
    with pytest.raises(samebits.InvalidInputError, match="init_model has 7 features, the training data 6"):
        fit(est, X[:, :6], y)


def test_another_class_count_and_kind_are_refused_by_name():
    est = RF_C(n_estimators=4, warm_start=True, random_state=1).fit(X, YC)
    est.set_params(n_estimators=9)
    with pytest.raises(samebits.InvalidInputError, match="init_model has 3 classes, the training data's labels 2"):
        est.fit(X, YC % 2)
    # an Extra Trees model is not a random forest's init (the C library's check)
    et = ET_C(n_estimators=4, random_state=1).fit(X, YC)
    est._model = et._model
    with pytest.raises(samebits.InvalidArgumentError, match="init_model: a extra_trees model; this warm start fits "
                                                             "random_forest"):
        est.fit(X, YC)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=IDS)
def test_other_data_of_the_same_shape_is_the_users_business(cls):
    """As in scikit-learn: the kept trees are not checked against the data; they
    keep their nodes (their leaves valued on the new data's rows)."""
    y = target(cls)
    X2, yc2, yr2 = data(seed=99)
    y2 = None if y is None else (yr2 if y is YR else yc2)
    est = fit(cls(n_estimators=4, warm_start=True, random_state=1), X, y)
    first = _trees(est)
    est.set_params(n_estimators=9)
    fit(est, X2, y2)
    assert est.n_estimators_ == 9
    assert [_shape(t) for t in _trees(est)[:len(first)]] == [_shape(t) for t in first]
    assert np.all(np.isfinite(np.asarray(est.predict(X2), dtype=np.float64)))


def test_the_cli_warm_starts_with_init_model(tmp_path):
    from conftest import CLI, write_csv
    if not CLI.exists():
        pytest.skip("build/samebits is not built")
    import subprocess
    path = tmp_path / "d.csv"
    write_csv(path, np.nan_to_num(X).tolist(), YC.tolist())
    run = lambda *a: subprocess.run([str(CLI), "train", "--data", str(path), "--label", "y", *a],  # noqa: E731
                                    capture_output=True, text=True)
    for model in ("random_forest", "extra_trees", "isolation_forest"):
        full, half, w = (str(tmp_path / ("%s-%s.sbm" % (model, k))) for k in ("full", "half", "warm"))
        assert run("--model", model, "n_estimators=12", "seed=4", "--out", full).returncode == 0
        assert run("--model", model, "n_estimators=5", "seed=4", "--out", half).returncode == 0
        r = run("--model", model, "n_estimators=12", "seed=4", "--init-model", half, "--out", w)
        assert r.returncode == 0, r.stderr
        assert open(full, "rb").read() == open(w, "rb").read()
        r = run("--model", model, "n_estimators=12", "seed=5", "--init-model", half, "--out", w)
        assert r.returncode != 0 and "a warm start changes n_estimators only" in r.stderr
    r = run("--model", "kmeans", "--init-model", half)
    assert r.returncode != 0 and "not continued" in r.stderr
