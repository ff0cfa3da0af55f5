"""samebits.MLPClassifier and samebits.MLPRegressor (docs/mlp.md): scikit-learn's
names, attributes and behaviour beside scikit-learn's own estimators (accuracy
and R^2 close, not the same bits: scikit-learn's random draws and BLAS sums are
its own), the same bits at 1, 2 and 7 threads and after a save and load,
binary, multiclass, multilabel and multi-target fits, early stopping, the
refusals by name, and scikit-learn's check_estimator with the expected
failures pinned."""
import pytest

import samebits
from samebits import InvalidArgumentError, InvalidInputError

np = pytest.importorskip("numpy")
sknn = pytest.importorskip("sklearn.neural_network")


def _data(n=300, d=8, k=3, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    W = rng.randn(d, k)
    y = np.argmax(X @ W + 0.3 * rng.randn(n, k), axis=1)
    return X, y


def test_classifier_beside_sklearn():
    X, y = _data()
    Xt, yt = X[:200], y[:200]
    kw = dict(hidden_layer_sizes=(32,), max_iter=200, learning_rate_init=0.01, random_state=0)
    a = samebits.MLPClassifier(**kw).fit(Xt, yt)
    b = sknn.MLPClassifier(**kw).fit(Xt, yt)
    assert abs(a.score(X[200:], y[200:]) - b.score(X[200:], y[200:])) <= 0.06
    assert a.out_activation_ == b.out_activation_ == "softmax"
    assert a.n_layers_ == b.n_layers_ and a.n_outputs_ == b.n_outputs_
    assert [c.shape for c in a.coefs_] == [c.shape for c in b.coefs_]
    assert [c.shape for c in a.intercepts_] == [c.shape for c in b.intercepts_]
    assert len(a.loss_curve_) == a.n_iter_ and a.loss_ == a.loss_curve_[-1]
    assert a.best_loss_ == min(a.loss_curve_) and a.validation_scores_ is None
    assert a.t_ == a.n_iter_ * 200
    assert a.coefs_[0].dtype == np.float32
    p = a.predict_proba(X)
    assert p.shape == (300, 3) and np.allclose(p.sum(axis=1), 1.0, atol=1e-5)
    assert (a.classes_[np.argmax(p, axis=1)] == a.predict(X)).all()
    # the first epoch's loss from the same initialization scale: both start near log(3)
    assert abs(a.loss_curve_[0] - b.loss_curve_[0]) < 0.5


def test_string_labels_and_binary():
    X, y = _data(k=2)
    labels = np.array(["no", "yes"])[y]
    m = samebits.MLPClassifier(hidden_layer_sizes=(8,), max_iter=100, learning_rate_init=0.01, random_state=2).fit(X, labels)
    assert list(m.classes_) == ["no", "yes"] and m.out_activation_ == "logistic" and m.n_outputs_ == 1
    assert set(m.predict(X)) <= {"no", "yes"}
    p = m.predict_proba(X)
    assert p.shape == (300, 2) and np.array_equal(p[:, 0], (1.0 - p[:, 1]).astype(np.float32))
    assert m.score(X, labels) > 0.8


def test_multilabel_and_multi_target():
    X, y = _data()
    Y = np.stack([y == 0, y == 1, X[:, 0] > 0], axis=1).astype(int)
    m = samebits.MLPClassifier(hidden_layer_sizes=(16,), max_iter=80, learning_rate_init=0.01).fit(X, Y)
    assert m.out_activation_ == "logistic" and m.predict(X).shape == (300, 3)
    assert m.predict_proba(X).shape == (300, 3)
    assert m.score(X, Y) > 0.6
    T = np.stack([X[:, 0] * 2 - X[:, 1], X[:, 2] ** 2], axis=1)
    r = samebits.MLPRegressor(hidden_layer_sizes=(32,), max_iter=150, learning_rate_init=0.01).fit(X, T)
    assert r.predict(X).shape == (300, 2) and r.out_activation_ == "identity"
    s = sknn.MLPRegressor(hidden_layer_sizes=(32,), max_iter=150, learning_rate_init=0.01, random_state=0).fit(X, T)
    assert r.score(X, T) > 0.8 and abs(r.score(X, T) - s.score(X, T)) < 0.1
    r1 = samebits.MLPRegressor(hidden_layer_sizes=(8,), max_iter=20).fit(X, T[:, 0])
    assert r1.predict(X).shape == (300,)


def test_same_bits_threads_and_file(tmp_path):
    X, y = _data()
    digests, probas = [], []
    for t in (1, 2, 7):
        samebits.set_num_threads(t)
        m = samebits.MLPClassifier(hidden_layer_sizes=(24, 12), activation="tanh", solver="sgd", max_iter=15,
                                   early_stopping=True, random_state=9).fit(X, y)
        digests.append(m.model_digest_)
        probas.append(m.predict_proba(X).tobytes())
    samebits.set_num_threads(0)
    assert len(set(digests)) == 1 and len(set(probas)) == 1
    path = tmp_path / "m.sbm"
    m.save_model(path)
    assert path.read_bytes() == m.model_bytes()
    assert m.validation_scores_ is not None and len(m.validation_scores_) == m.n_iter_
    assert m.best_loss_ is None and m.best_validation_score_ == max(m.validation_scores_)
    # another seed gives other bits
    m2 = samebits.MLPClassifier(hidden_layer_sizes=(24, 12), activation="tanh", solver="sgd", max_iter=15,
                                early_stopping=True, random_state=10).fit(X, y)
    assert m2.model_digest_ != digests[0]


@pytest.mark.parametrize("act", ["identity", "logistic", "tanh", "relu", "gelu", "silu"])
@pytest.mark.parametrize("solver", ["adam", "sgd"])
def test_every_activation_and_solver_learns(act, solver):
    X, y = _data(n=200)
    m = samebits.MLPClassifier(hidden_layer_sizes=(16,), activation=act, solver=solver, max_iter=60,
                               learning_rate_init=0.01 if solver == "adam" else 0.1).fit(X, y)
    assert m.score(X, y) > 0.7, (act, solver)
    assert m.loss_curve_[-1] < m.loss_curve_[0]


def test_learning_rate_schedules():
    X, y = _data(n=200)
    for lr in ("constant", "invscaling", "adaptive"):
        m = samebits.MLPClassifier(hidden_layer_sizes=(8,), solver="sgd", learning_rate=lr, learning_rate_init=0.1,
                                   max_iter=30, n_iter_no_change=2, tol=1e-2).fit(X, y)
        assert m.n_iter_ >= 1
    a = samebits.MLPClassifier(hidden_layer_sizes=(8,), solver="sgd", learning_rate="constant", max_iter=10,
                               learning_rate_init=0.1, random_state=1).fit(X, y)
    b = samebits.MLPClassifier(hidden_layer_sizes=(8,), solver="sgd", learning_rate="invscaling", max_iter=10,
                               learning_rate_init=0.1, random_state=1).fit(X, y)
    assert a.model_digest_ != b.model_digest_


def test_refusals_by_name():
    X, y = _data(n=50)
    with pytest.raises(InvalidArgumentError, match="solver='lbfgs' is not built"):
        samebits.MLPClassifier(solver="lbfgs").fit(X, y)
    with pytest.raises(InvalidArgumentError, match="solver='sgd' only"):
        samebits.MLPClassifier(momentum=0.5).fit(X, y)
    with pytest.raises(InvalidArgumentError, match="solver='adam' only"):
        samebits.MLPClassifier(solver="sgd", beta_1=0.5).fit(X, y)
    with pytest.raises(InvalidArgumentError, match="early_stopping=true only"):
        samebits.MLPClassifier(validation_fraction=0.3).fit(X, y)
    with pytest.raises(InvalidArgumentError, match="warm_start"):
        samebits.MLPClassifier(warm_start=True).fit(X, y)
    with pytest.raises(InvalidArgumentError, match="max_fun"):
        samebits.MLPClassifier(max_fun=10).fit(X, y)
    with pytest.raises(InvalidArgumentError, match="random_state"):
        samebits.MLPClassifier(random_state=np.random.RandomState(0)).fit(X, y)
    with pytest.raises(InvalidInputError, match="at least 2 classes; y has 1 class"):
        samebits.MLPClassifier().fit(X, np.zeros(50))
    Xn = X.copy()
    Xn[3, 2] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        samebits.MLPRegressor().fit(Xn, X[:, 0])
    with pytest.raises(samebits.NotFittedError):
        samebits.MLPRegressor().predict(X)


def test_check_estimator():
    """scikit-learn's conventions: every check passes for both."""
    from sk_checks import assert_failed_checks
    assert_failed_checks(samebits.MLPRegressor(max_iter=200), set())
    assert_failed_checks(samebits.MLPClassifier(max_iter=200), set())


_GPU_CASES = [
    ("multiclass", dict(hidden_layer_sizes=(24, 12), max_iter=8, batch_size=50, learning_rate_init=0.01,
                        random_state=2), "classifier", 3),
    ("binary-sgd-es", dict(hidden_layer_sizes=(10,), activation="logistic", solver="sgd", learning_rate="invscaling",
                           learning_rate_init=0.1, early_stopping=True, max_iter=6, n_iter_no_change=2,
                           random_state=5), "classifier", 2),
    ("multilabel-gelu", dict(hidden_layer_sizes=(16,), activation="gelu", alpha=0.01, max_iter=5, batch_size=32,
                             random_state=1), "multilabel", 3),
    ("regress-silu", dict(hidden_layer_sizes=(12,), activation="silu", solver="sgd", momentum=0.8, max_iter=5,
                          learning_rate_init=0.01, shuffle=False, random_state=4), "regressor", 2),
    ("wide", dict(hidden_layer_sizes=(300,), alpha=1e-3, max_iter=3, random_state=7), "classifier", 3),
    ("regress-tanh-es", dict(hidden_layer_sizes=(8, 4), activation="tanh", early_stopping=True, max_iter=6,
                             batch_size=7, random_state=6), "regressor", 1),
]


@pytest.mark.parametrize("device", ["opencl", "cuda"])
@pytest.mark.parametrize("name,kw,task,k", _GPU_CASES, ids=[c[0] for c in _GPU_CASES])
def test_fit_on_a_gpu_is_the_cpu_bits(device, name, kw, task, k):
    """device="opencl"|"cuda" trains on the GPU (src/models/mlp/mlp_dev.c: the
    identical GEMM and kernels/entry/nn_entry.h): the same loss curve,
    parameters, validation scores, predictions and model digest as
    device="cpu", for both solvers, softmax, logistic and identity outputs,
    four activations, two hidden layers, early stopping, and a layer wide enough
    (2,100 weights, batches of 200 rows) that the loss's partial sums pass
    through every lane of knet_batch_loss. PoCL's OpenCL in
    CI; a backend that is not here is a skip."""
    X, y = _data(n=203, d=7, k=3, seed=9)
    if task == "classifier":
        y = y % k
        cls = samebits.MLPClassifier
    elif task == "multilabel":
        y = (X[:, :k] + 0.2 * X[:, k:2 * k] > 0).astype(np.int64)
        cls = samebits.MLPClassifier
    else:
        y = (X[:, :k] * X[:, 1:k + 1]).astype(np.float32)
        y = y[:, 0] if k == 1 else y
        cls = samebits.MLPRegressor
    ref = cls(**kw).fit(X, y)
    try:
        got = cls(device=device, **kw).fit(X, y)
    except samebits.BackendUnavailableError as e:
        pytest.skip("no %s here: %s" % (device, e))
    assert got.model_digest_ == ref.model_digest_
    assert np.asarray(got.loss_curve_).tobytes() == np.asarray(ref.loss_curve_).tobytes()
    for a, b in zip(got.coefs_ + got.intercepts_, ref.coefs_ + ref.intercepts_):
        assert a.tobytes() == b.tobytes()
    assert got.n_iter_ == ref.n_iter_ and got.t_ == ref.t_
    if kw.get("early_stopping"):
        assert np.asarray(got.validation_scores_).tobytes() == np.asarray(ref.validation_scores_).tobytes()
    assert got.predict(X).tobytes() == ref.predict(X).tobytes()


def test_device_refusals():
    """cpu-batched (the MLP has no batched host path) and an unknown device
    are refused by name."""
    X, y = _data(n=40)
    with pytest.raises(InvalidArgumentError, match="no batched host path"):
        samebits.MLPClassifier(device="cpu-batched", max_iter=2).fit(X, y)
    with pytest.raises(InvalidArgumentError, match="tpu"):
        samebits.MLPClassifier(device="tpu", max_iter=2).fit(X, y)
