"""Issue 21, LightGBM features for gradient boosting: several validation sets
(eval_set as a list, eval_names, eval_sample_weight, the training set itself,
early stopping on any (set, metric) pair) and class weights (scale_pos_weight,
is_unbalance, a classifier's class_weight) folded into the row weights."""
import os
import struct

import pytest

import samebits
from samebits.errors import InvalidArgumentError, InvalidInputError

np = pytest.importorskip("numpy")

RNG = np.random.default_rng(21)
X = RNG.normal(size=(1200, 5)).astype(np.float32)
Y = X[:, 0] + 0.3 * X[:, 1] + 0.2 * RNG.normal(size=1200)
XA, YA = X[:800], Y[:800]
XB, YB = X[800:1000], Y[800:1000]
XC, YC = X[1000:], Y[1000:]
YBIN = (Y > 0.9).astype(np.int64)  # about a fifth positive: positives are the rarer class
YA2, YB2 = YBIN[:800], YBIN[800:1000]


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def trees(m):
    return m.dump_model()["trees"], m.dump_model()["base_score"]


# ---- several validation sets ------------------------------------------------------


def test_one_set_keeps_its_bytes_and_log():
    plain = samebits.GradientBoostingRegressor(n_estimators=20).fit(XA, YA)
    one = samebits.GradientBoostingRegressor(n_estimators=20).fit(XA, YA, eval_set=[(XB, YB)])
    tup = samebits.GradientBoostingRegressor(n_estimators=20).fit(XA, YA, eval_set=(XB, YB))
    assert plain.model_digest_ == one.model_digest_ == tup.model_digest_
    assert list(one.evals_result_) == ["valid_0"] and one.evals_result_ == tup.evals_result_


def test_each_set_has_the_log_it_has_alone():
    both = samebits.GradientBoostingRegressor(n_estimators=15).fit(XA, YA, eval_set=[(XB, YB), (XC, YC)])
    b = samebits.GradientBoostingRegressor(n_estimators=15).fit(XA, YA, eval_set=[(XB, YB)])
    c = samebits.GradientBoostingRegressor(n_estimators=15).fit(XA, YA, eval_set=[(XC, YC)])
    assert list(both.evals_result_) == ["valid_0", "valid_1"]
    assert both.evals_result_["valid_0"] == b.evals_result_["valid_0"]
    assert both.evals_result_["valid_1"] == c.evals_result_["valid_0"]
    assert both.evals_result_["valid_0"] != both.evals_result_["valid_1"]
    assert both.model_digest_ == b.model_digest_  # validation data never changes the trees
    assert set(both.best_score_) == {"valid_0", "valid_1"}


def test_eval_names_and_sample_weights():
    w = np.where(YC > 0, 4.0, 1.0).astype(np.float32)
    m = samebits.GradientBoostingRegressor(n_estimators=8, eval_metric="l2").fit(
        XA, YA, eval_set=[(XB, YB), (XC, YC)], eval_names=["early", "late"], eval_sample_weight=[None, w])
    assert list(m.evals_result_) == ["early", "late"]
    # the weighted mean squared error of the final model on the weighted set
    p = np.asarray(m.predict(XC), dtype=np.float64)
    yc = YC.astype(np.float32).astype(np.float64)
    want = float(np.sum(w * (p - yc) ** 2) / np.sum(w))
    assert m.evals_result_["late"]["l2"][-1] == pytest.approx(want, rel=1e-5)
    unweighted = samebits.GradientBoostingRegressor(n_estimators=8, eval_metric="l2").fit(
        XA, YA, eval_set=[(XC, YC)])
    assert unweighted.evals_result_["valid_0"]["l2"][-1] != m.evals_result_["late"]["l2"][-1]


def test_the_training_set_in_eval_set_is_named_training_and_never_stops():
    m = samebits.GradientBoostingRegressor(n_estimators=10).fit(XA, YA, eval_set=[(XA, YA), (XB, YB)])
    assert list(m.evals_result_) == ["training", "valid_1"]
    p = np.asarray(m.predict(XA), dtype=np.float64)
    rmse = float(np.sqrt(np.mean((p - YA.astype(np.float32).astype(np.float64)) ** 2)))
    assert m.evals_result_["training"]["rmse"][-1] == pytest.approx(rmse, rel=1e-5)
    # the training set alone cannot drive early stopping (LightGBM's rule): a named refusal
    with pytest.raises(InvalidArgumentError, match="early_stopping_rounds needs validation data"):
        samebits.GradientBoostingRegressor(n_estimators=10, early_stopping_rounds=2).fit(XA, YA, eval_set=[(XA, YA)])


def test_early_stopping_watches_every_set():
    """LightGBM's rule: the first (set, metric) pair without improvement for the
    given rounds stops the fit at that pair's best iteration."""
    # a validation set whose labels are the negatives: its l2 worsens from the first trees
    bad = samebits.GradientBoostingRegressor(n_estimators=60, learning_rate=0.3, early_stopping_rounds=3)
    bad.fit(XA, YA, eval_set=[(XB, YB), (XC, -YC)])
    good = samebits.GradientBoostingRegressor(n_estimators=60, learning_rate=0.3, early_stopping_rounds=3)
    good.fit(XA, YA, eval_set=[(XB, YB)])
    log = bad.evals_result_["valid_1"]["rmse"]
    best = bad.best_iteration_
    assert best == 1 + int(np.argmin(log)) and len(log) == best + 3  # stopped by valid_1
    assert good.best_iteration_ > best
    # the fitted model holds the trees up to the best iteration: the model of that many iterations
    short = samebits.GradientBoostingRegressor(n_estimators=best, learning_rate=0.3).fit(XA, YA)
    assert trees(short) == trees(bad)


def test_first_metric_only_still_watches_every_set():
    a = samebits.GradientBoostingRegressor(n_estimators=60, learning_rate=0.3, eval_metric="rmse,l1").fit(
        XA, YA, eval_set=[(XB, YB), (XC, -YC)], callbacks=[samebits.early_stopping(3, first_metric_only=True,
                                                                                    verbose=False)])
    log = a.evals_result_["valid_1"]["rmse"]
    assert a.best_iteration_ == 1 + int(np.argmin(log)) and len(log) == a.best_iteration_ + 3


def test_bad_eval_sets_are_refused_by_name():
    est = samebits.GradientBoostingRegressor(n_estimators=2)
    with pytest.raises(InvalidInputError, match="eval_set\\[1\\]|validation set 'valid_1' has 3 features"):
        est.fit(XA, YA, eval_set=[(XB, YB), (XC[:, :3], YC)])
    with pytest.raises(InvalidArgumentError, match="eval_names"):
        est.fit(XA, YA, eval_set=[(XB, YB), (XC, YC)], eval_names=["one"])
    with pytest.raises(InvalidArgumentError, match="eval_sample_weight"):
        est.fit(XA, YA, eval_set=[(XB, YB)], eval_sample_weight=[None, None])
    with pytest.raises(InvalidArgumentError, match="eval_set"):
        est.fit(XA, YA, eval_set=[(XB,)])


def test_classifier_sets_map_labels():
    m = samebits.GradientBoostingClassifier(n_estimators=6).fit(
        XA, np.where(YA2 == 1, "yes", "no"), eval_set=[(XB, np.where(YB2 == 1, "yes", "no")), (XA[:50], ["no"] * 50)])
    assert list(m.evals_result_) == ["valid_0", "valid_1"] and len(m.evals_result_["valid_1"]["logloss"]) == 6


# ---- class weights --------------------------------------------------------------------


def test_scale_pos_weight_is_weight_on_the_positive_rows():
    a = samebits.GradientBoostingClassifier(n_estimators=8, scale_pos_weight=3).fit(XA, YA2)
    b = samebits.GradientBoostingClassifier(n_estimators=8).fit(XA, YA2, sample_weight=np.where(YA2 == 1, 3.0, 1.0))
    one = samebits.GradientBoostingClassifier(n_estimators=8, scale_pos_weight=1).fit(XA, YA2)
    plain = samebits.GradientBoostingClassifier(n_estimators=8).fit(XA, YA2)
    assert trees(a) == trees(b) and trees(a) != trees(plain)
    assert one.model_digest_ == plain.model_digest_  # the default is not written: every old model's bytes stay
    # with sample weights too: the product, one float32 rounding
    w = (1.0 + (np.arange(800) % 3)).astype(np.float32)
    c = samebits.GradientBoostingClassifier(n_estimators=8, scale_pos_weight=2.5).fit(XA, YA2, sample_weight=w)
    d = samebits.GradientBoostingClassifier(n_estimators=8).fit(
        XA, YA2, sample_weight=np.where(YA2 == 1, w * np.float32(2.5), w).astype(np.float32))
    assert trees(c) == trees(d)


def test_is_unbalance_is_the_count_ratio():
    npos = int(YA2.sum())
    nneg = 800 - npos
    assert npos < nneg
    a = samebits.GradientBoostingClassifier(n_estimators=8, is_unbalance=True).fit(XA, YA2)
    b = samebits.GradientBoostingClassifier(n_estimators=8, scale_pos_weight=f32(nneg / npos)).fit(XA, YA2)
    plain = samebits.GradientBoostingClassifier(n_estimators=8).fit(XA, YA2)
    assert trees(a) == trees(b) != trees(plain)
    # the rarer class is the one weighted up (LightGBM's rule): here the negatives
    flipped = 1 - YA2
    c = samebits.GradientBoostingClassifier(n_estimators=8, is_unbalance=True).fit(XA, flipped)
    d = samebits.GradientBoostingClassifier(n_estimators=8).fit(
        XA, flipped, sample_weight=np.where(flipped == 0, np.float32(f32(nneg / npos)), 1.0).astype(np.float32))
    assert trees(c) == trees(d)


def test_class_weights_are_refused_where_they_mean_nothing():
    with pytest.raises(InvalidArgumentError, match="only for objective=binary"):
        samebits.GradientBoostingClassifier(n_estimators=2, scale_pos_weight=2).fit(XA, np.arange(800) % 3)
    with pytest.raises(InvalidArgumentError, match="only for objective=binary"):
        samebits.gbdt.GradientBoosting(loss="squared_error", n_estimators=2, scale_pos_weight=2).fit(XA, YA)
    with pytest.raises(InvalidArgumentError, match="is_unbalance=true and scale_pos_weight"):
        samebits.GradientBoostingClassifier(n_estimators=2, scale_pos_weight=2, is_unbalance=True).fit(XA, YA2)
    with pytest.raises(InvalidArgumentError, match="scale_pos_weight"):
        samebits.GradientBoostingClassifier(n_estimators=2, scale_pos_weight=0).fit(XA, YA2)


def test_class_weight_balanced_is_scikit_learns():
    y3 = (np.arange(800) * 7 % 10 > 5).astype(np.int64) + (YA > 1.2)  # three unequal classes
    counts = np.bincount(y3)
    per = np.array([f32(800 / (3 * c)) for c in counts], dtype=np.float32)
    a = samebits.GradientBoostingClassifier(n_estimators=5, class_weight="balanced").fit(XA, y3)
    b = samebits.GradientBoostingClassifier(n_estimators=5).fit(XA, y3, sample_weight=per[y3])
    plain = samebits.GradientBoostingClassifier(n_estimators=5).fit(XA, y3)
    assert trees(a) == trees(b) != trees(plain)
    c = samebits.GradientBoostingClassifier(n_estimators=5, class_weight={1: 2.0}).fit(XA, YA2)
    d = samebits.GradientBoostingClassifier(n_estimators=5, scale_pos_weight=2.0).fit(XA, YA2)
    assert trees(c) == trees(d)
    with pytest.raises(InvalidArgumentError, match="class_weight"):
        samebits.GradientBoostingClassifier(n_estimators=2, class_weight="balanced_subsample").fit(XA, YA2)
    assert samebits.GradientBoostingClassifier(class_weight="balanced").get_params()["class_weight"] == "balanced"


def test_class_weight_params_text_only_when_set():
    m = samebits.GradientBoostingClassifier(n_estimators=2, scale_pos_weight=3).fit(XA, YA2)
    u = samebits.GradientBoostingClassifier(n_estimators=2, is_unbalance=True).fit(XA, YA2)
    p = samebits.GradientBoostingClassifier(n_estimators=2).fit(XA, YA2)
    from samebits._model import params_in_file
    assert params_in_file(m._model.to_bytes())["scale_pos_weight"] == "3"
    assert params_in_file(u._model.to_bytes())["is_unbalance"] == "true"
    stored = params_in_file(p._model.to_bytes())
    assert "scale_pos_weight" not in stored and "is_unbalance" not in stored


# ---- every device, and ranking --------------------------------------------------------


@pytest.mark.parametrize("device", [d for d in os.environ.get("SAMEBITS_GBDT_DEVICES", "cpu-batched,opencl").split(",")
                                    if d != "cpu"])
def test_devices_give_the_cpus_sets_and_class_weights(device):
    """The validation margins are the host's on every device, and the class
    weights are folded before any device sees the rows: the same model bytes
    and the same metric log, the training set's included."""
    kw = dict(n_estimators=40, learning_rate=0.3, early_stopping_rounds=3, scale_pos_weight=2.5,
              eval_metric="logloss,auc")
    flipped = 1 - YB2
    cpu = samebits.GradientBoostingClassifier(**kw).fit(XA, YA2, eval_set=[(XA, YA2), (XB, YB2), (XB, flipped)])
    dev = samebits.GradientBoostingClassifier(device=device, **kw).fit(
        XA, YA2, eval_set=[(XA, YA2), (XB, YB2), (XB, flipped)])
    assert cpu.model_digest_ == dev.model_digest_
    assert cpu.evals_result_ == dev.evals_result_ and cpu.best_iteration_ == dev.best_iteration_
    assert list(cpu.evals_result_) == ["training", "valid_1", "valid_2"]


def test_ranker_takes_several_sets():
    rnd = np.random.default_rng(3)
    Xr = rnd.normal(size=(300, 4)).astype(np.float32)
    yr = np.clip((Xr[:, 0] * 2 + 2).round(), 0, 4).astype(np.int64)
    g = [10] * 30
    a = samebits.GradientBoostingRanker(n_estimators=5).fit(
        Xr[:200], yr[:200], group=g[:20], eval_set=[(Xr[200:250], yr[200:250]), (Xr[250:], yr[250:])],
        eval_group=[g[:5], g[:5]], eval_names=["first", "second"])
    b = samebits.GradientBoostingRanker(n_estimators=5).fit(
        Xr[:200], yr[:200], group=g[:20], eval_set=[(Xr[250:], yr[250:])], eval_group=[g[:5]])
    assert list(a.evals_result_) == ["first", "second"]
    assert a.evals_result_["second"] == b.evals_result_["valid_0"]
    with pytest.raises(InvalidInputError, match="eval_group"):
        samebits.GradientBoostingRanker(n_estimators=2).fit(
            Xr[:200], yr[:200], group=g[:20], eval_set=[(Xr[200:250], yr[200:250]), (Xr[250:], yr[250:])],
            eval_group=[g[:5]])


def test_c_api_refuses_bad_sets_by_name():
    """sb_gbdt_fit_multi's own checks: a NULL set, a name too long or empty."""
    import ctypes
    from samebits._lib import lib
    from samebits._model import Model, dataset
    from samebits import _array
    m = _array.matrix(XA, "X")
    lab = _array.vector(YA, "y")
    train = dataset(m, label=lab[1:])
    valid = dataset(_array.matrix(XB, "X"), label=_array.vector(YB, "y")[1:])
    for names in (["x" * 128, "ok"], ["", "ok"]):
        with pytest.raises(InvalidArgumentError, match="validation set 0's name must have 1 to 127 bytes"):
            Model.fit_gbdt([("n_estimators", "2")], train, [valid, valid], names=names)
    ok = Model.fit_gbdt([("n_estimators", "2")], train, [valid, valid], names=["x" * 127, "ok"])
    assert list(ok.evals()[0]) == ["x" * 127, "ok"]
    ptrs = (ctypes.c_void_p * 2)(valid.ptr, None)
    out = ctypes.c_void_p()
    assert lib.sb_gbdt_fit_multi(None, train.ptr, ptrs, 2, None, None, None, ctypes.byref(out)) == 1
    assert b"validation set 1 is NULL" in lib.sb_last_error()


def test_a_model_file_gives_back_its_class_weights(tmp_path):
    for kw in (dict(scale_pos_weight=3.0), dict(is_unbalance=True)):
        m = samebits.GradientBoostingClassifier(n_estimators=3, **kw).fit(XA, YA2)
        path = tmp_path / "m.sbm"
        m.save_model(str(path))
        back = samebits.GradientBoostingClassifier().load_model(str(path))
        assert {k: back.get_params()[k] for k in kw} == kw
        again = samebits.GradientBoostingClassifier(**back.get_params()).fit(XA, YA2)
        assert again.model_digest_ == m.model_digest_


NO_NUMPY = r'''
import sys, random, struct
for name in ("numpy", "sklearn", "pandas", "scipy"):
    sys.modules[name] = None
import samebits
r = random.Random(0)
X = [[r.random() for _ in range(3)] for _ in range(200)]
y = [int(a[0] > 0.7) for a in X]
f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
n, npos = len(y), sum(y)
w = [f32(n / (2 * npos)) if t else f32(n / (2 * (n - npos))) for t in y]
a = samebits.GradientBoostingClassifier(n_estimators=3, class_weight="balanced").fit(X, y)
b = samebits.GradientBoostingClassifier(n_estimators=3).fit(X, y, sample_weight=w)
assert a.dump_model()["trees"] == b.dump_model()["trees"]
c = samebits.GradientBoostingClassifier(n_estimators=3).fit(
    X[:150], y[:150], eval_set=[(X[150:], y[150:]), (X[:20], y[:20])], eval_names=["a", "b"])
assert list(c.evals_result_) == ["a", "b"]
print("ok")
'''


def test_sets_and_class_weight_without_numpy():
    import os
    import subprocess
    import sys
    from conftest import PYDIR
    env = dict(os.environ)
    env.pop("SAMEBITS_NUMERIC_MODE", None)
    env["PYTHONPATH"] = str(PYDIR)
    r = subprocess.run([sys.executable, "-c", NO_NUMPY], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
