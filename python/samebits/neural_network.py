"""Multi-layer perceptrons (docs/mlp.md): scikit-learn's MLPClassifier and
MLPRegressor names and semantics, float32 parameters, identical bits on every
machine and thread count.

Nothing numeric is computed here: the C library fits and predicts (every
product through the identical GEMM, every other sum exact). NumPy is required
for this module's arrays.
"""
from ctypes import POINTER, byref, c_char_p, c_double, c_float, c_int, c_int64, c_size_t, c_void_p

from . import _array
from ._base import Estimator, HandleModel, accuracy, declare_handle_functions, r2_score
from ._lib import Handle, check, lib, params as _params
from .errors import InvalidArgumentError, InvalidInputError, not_fitted

_P = POINTER
declare_handle_functions("sb_mlp", {
    "sb_mlp_fit": (c_int, [c_void_p, _P(c_float), c_int64, c_int64, _P(c_float), c_int64, c_void_p, _P(c_void_p)]),
    "sb_mlp_predict": (c_int, [c_void_p, _P(c_float), c_int64, c_int64, _P(c_float)]),
    "sb_mlp_predict_proba": (c_int, [c_void_p, _P(c_float), c_int64, c_int64, _P(c_float)]),
    "sb_mlp_get_f64": (c_int, [c_void_p, c_char_p, _P(c_double), c_size_t, _P(c_size_t)])})

_OUT = ("identity", "logistic", "softmax")


def _np():
    import numpy
    return numpy


def _f32(a, what):
    np = _np()
    try:
        out = np.ascontiguousarray(np.asarray(a, dtype=np.float32))
    except (TypeError, ValueError) as e:
        raise InvalidInputError("%s must be numbers: %s" % (what, e)) from None
    return out


def _ptr(a):
    return a.ctypes.data_as(_P(c_float))


def _matrix(X):
    """X as a C-order float32 array (the library's one conversion: sparse,
    complex, ragged, 1-D and empty input refused by name)."""
    np = _np()
    m = _array.matrix(X, "X")
    if isinstance(m.buf, np.ndarray):
        return m.buf
    return np.ctypeslib.as_array(m.ptr, (m.nrows, m.ncols)).copy()


def _target(y, who):
    np = _np()
    if y is None:
        raise InvalidInputError("%s requires y to be passed, but the target y is None" % who)
    a = np.asarray(y)
    if a.dtype.kind == "c":
        raise InvalidInputError("%s: y: Complex data not supported" % who)
    return a


class _BaseMLP(HandleModel, Estimator):
    _task = None
    _C_PREFIX = "sb_mlp"

    def __init__(self, hidden_layer_sizes=(100,), activation="relu", *, solver="adam", alpha=0.0001,
                 batch_size="auto", learning_rate="constant", learning_rate_init=0.001, power_t=0.5, max_iter=200,
                 shuffle=True, random_state=None, tol=1e-4, verbose=False, warm_start=False, momentum=0.9,
                 nesterovs_momentum=True, early_stopping=False, validation_fraction=0.1, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-8, n_iter_no_change=10, max_fun=15000, device="cpu"):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.solver = solver
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.learning_rate_init = learning_rate_init
        self.power_t = power_t
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.tol = tol
        self.verbose = verbose
        self.warm_start = warm_start
        self.momentum = momentum
        self.nesterovs_momentum = nesterovs_momentum
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.n_iter_no_change = n_iter_no_change
        self.max_fun = max_fun
        self.device = device

    def __sklearn_tags__(self):
        t = super().__sklearn_tags__()
        t.input_tags.allow_nan = False
        t.target_tags.multi_output = True
        if t.classifier_tags is not None:
            t.classifier_tags.multi_label = True
        return t

    def _pairs(self):
        """The C library's parameters: those that apply to the solver, and any
        other one set away from its default (the library refuses it by name)."""
        d = self._param_defaults()
        for name in ("verbose", "warm_start"):
            if getattr(self, name):
                raise InvalidArgumentError("%s=True is not built (docs/mlp.md)" % name)
        if self.max_fun != d["max_fun"]:
            raise InvalidArgumentError("max_fun applies to solver='lbfgs', which is not built (docs/mlp.md)")
        h = self.hidden_layer_sizes
        if isinstance(h, int):
            h = (h,)
        try:
            h = [int(v) for v in h]
        except (TypeError, ValueError):
            raise InvalidArgumentError("hidden_layer_sizes=%r must be a sequence of ints" % (self.hidden_layer_sizes,))
        if any(v < 1 for v in h):
            raise InvalidArgumentError("hidden_layer_sizes must be > 0, got %s" % (h,))
        rs = 0 if self.random_state is None else self.random_state
        if isinstance(rs, bool) or not isinstance(rs, int) or rs < 0:
            raise InvalidArgumentError("random_state=%r must be None or an int >= 0 (a RandomState object is not "
                                       "built: every draw is Philox's)" % (self.random_state,))
        bs = self.batch_size
        pairs = [("task", self._task), ("hidden_layer_sizes", ",".join(str(v) for v in h)),
                 ("activation", str(self.activation)), ("solver", str(self.solver)), ("alpha", repr(float(self.alpha))),
                 ("batch_size", "auto" if bs == "auto" else str(int(bs))),
                 ("learning_rate_init", repr(float(self.learning_rate_init))), ("max_iter", str(int(self.max_iter))),
                 ("shuffle", "true" if self.shuffle else "false"), ("random_state", str(rs)),
                 ("tol", repr(float(self.tol))), ("early_stopping", "true" if self.early_stopping else "false"),
                 ("n_iter_no_change", str(int(self.n_iter_no_change)))]
        if self.device is not None and self.device != "cpu":
            # cuda, opencl or gpu: the fit on that GPU, the CPU's bits (docs/mlp.md, "Devices")
            if not isinstance(self.device, str):
                raise InvalidArgumentError("device=%r must be a string: cpu, cuda, opencl or gpu" % (self.device,))
            pairs.append(("device", self.device))
        sgd, adam = self.solver == "sgd", self.solver == "adam"
        opt = [("momentum", sgd, lambda v: repr(float(v))),
               ("nesterovs_momentum", sgd, lambda v: "true" if v else "false"),
               ("learning_rate", sgd, str),
               ("power_t", sgd and self.learning_rate == "invscaling", lambda v: repr(float(v))),
               ("validation_fraction", bool(self.early_stopping), lambda v: repr(float(v))),
               ("beta_1", adam, lambda v: repr(float(v))), ("beta_2", adam, lambda v: repr(float(v))),
               ("epsilon", adam, lambda v: repr(float(v)))]
        for name, applies, fmt in opt:
            v = getattr(self, name)
            if applies or v != d[name]:
                pairs.append((name, fmt(v)))
        return pairs

    def _fit_arrays(self, Xa, Y):
        np = _np()
        p = _params(self._pairs())
        h = c_void_p()
        check(lib.sb_mlp_fit(p.ptr, _ptr(Xa), Xa.shape[0], Xa.shape[1], _ptr(Y), Y.shape[1], None, byref(h)))
        self._handle = Handle(h, lib.sb_mlp_free)
        self.n_features_in_ = Xa.shape[1]
        self._finish()
        return self

    def _finish(self):
        self.n_iter_ = self._int("n_iter_")
        self.t_ = self._int("t_")
        self.n_layers_ = self._int("n_layers_")
        self.n_outputs_ = self._int("n_outputs_")
        self.out_activation_ = _OUT[self._int("out_activation_")]
        self.loss_ = float(self._f64("loss_")[0])
        self.loss_curve_ = [float(v) for v in self._f64("loss_curve_")]
        bl = float(self._f64("best_loss_")[0])
        bv = float(self._f64("best_validation_score_")[0])
        self.best_loss_ = None if bl != bl else bl
        vs = self._f64("validation_scores_")
        self.validation_scores_ = [float(v) for v in vs] if bv == bv else None  # NaN: no early stopping
        self.best_validation_score_ = None if bv != bv else bv
        L = self.n_layers_ - 1
        w = [self._int("width_%d" % l) for l in range(L + 1)]
        self.coefs_ = [self._f32("coefs_%d" % l).reshape(w[l], w[l + 1]) for l in range(L)]
        self.intercepts_ = [self._f32("intercepts_%d" % l) for l in range(L)]

    def _check_fitted(self):
        if getattr(self, "_handle", None) is None:
            raise not_fitted("this %s is not fitted yet; call fit first" % type(self).__name__)

    def __sklearn_is_fitted__(self):
        return getattr(self, "_handle", None) is not None

    def _int(self, name):
        v = c_int64(0)
        check(lib.sb_mlp_get_int(self._handle.ptr, name.encode(), byref(v)))
        return v.value

    def _get(self, fn, name, dtype, ctype):
        np = _np()
        n = c_size_t(0)
        check(fn(self._handle.ptr, name.encode(), None, 0, byref(n)))
        out = np.empty(n.value, dtype=dtype)
        if n.value:
            check(fn(self._handle.ptr, name.encode(), out.ctypes.data_as(_P(ctype)), n.value, byref(n)))
        return out

    def _f32(self, name):
        return self._get(lib.sb_mlp_get_f32, name, _np().float32, c_float)

    def _f64(self, name):
        return self._get(lib.sb_mlp_get_f64, name, _np().float64, c_double)

    def _query(self, X):
        self._check_fitted()
        Xa = _matrix(X)
        if Xa.shape[1] != self.n_features_in_:
            raise InvalidArgumentError("X has %d features, but %s is expecting %d features as input"
                                       % (Xa.shape[1], type(self).__name__, self.n_features_in_))
        return Xa

    def _raw_predict(self, Xa, width):
        np = _np()
        out = np.empty((Xa.shape[0], width), dtype=np.float32)
        check(lib.sb_mlp_predict(self._handle.ptr, _ptr(Xa), Xa.shape[0], Xa.shape[1], _ptr(out)))
        return out


class MLPClassifier(_BaseMLP):
    """scikit-learn's MLPClassifier: binary (a logistic output), multiclass
    (softmax) and multilabel (a 0/1 indicator matrix y; logistic outputs),
    trained by solver='adam' or 'sgd' ('lbfgs' is refused by name).
    random_state: an int (None is 0) keying every Philox draw: the Glorot
    initialization, each epoch's permutation, early stopping's stratified
    split."""
    _estimator_kind = "classifier"
    _task = "classifier"

    def fit(self, X, y):
        np = _np()
        Xa = _matrix(X)
        ya = _target(y, type(self).__name__)
        if ya.ndim == 0 or ya.shape[0] != Xa.shape[0]:
            raise InvalidInputError("y has %d rows, X %d" % (ya.shape[0], Xa.shape[0]))
        if ya.ndim == 2 and ya.shape[1] == 1:
            ya = ya[:, 0]
        if ya.ndim == 2:
            Y = _f32(ya, "y")
            if not np.all((Y == 0) | (Y == 1)):
                raise InvalidInputError("a 2-d y must be a multilabel indicator matrix of 0 and 1")
            self.classes_ = np.arange(Y.shape[1])
            self._multilabel = True
        elif ya.ndim == 1:
            if ya.dtype.kind == "f" and not np.all(np.isfinite(ya)):
                raise InvalidInputError("y holds NaN or infinite labels")
            if ya.dtype.kind == "f" and np.any(ya != np.round(ya)):
                raise InvalidInputError("Unknown label type: continuous (a classifier takes class labels; "
                                        "MLPRegressor fits values)")
            self.classes_, codes = np.unique(ya, return_inverse=True)
            if len(self.classes_) < 2:
                raise InvalidInputError("MLPClassifier needs at least 2 classes; y has 1 class (%r)" % (self.classes_[0],))
            Y = np.ascontiguousarray(codes.reshape(-1, 1).astype(np.float32))
            self._multilabel = False
        else:
            raise InvalidInputError("y must be 1-d labels or a 2-d indicator matrix, got shape %r" % (ya.shape,))
        return self._fit_arrays(Xa, Y)

    def predict_proba(self, X):
        np = _np()
        Xa = self._query(X)
        k = len(self.classes_)
        out = np.empty((Xa.shape[0], k), dtype=np.float32)
        check(lib.sb_mlp_predict_proba(self._handle.ptr, _ptr(Xa), Xa.shape[0], Xa.shape[1], _ptr(out)))
        return out

    def predict_log_proba(self, X):
        return _np().log(self.predict_proba(X))

    def predict(self, X):
        Xa = self._query(X)
        if self._multilabel:
            return self._raw_predict(Xa, len(self.classes_)).astype(int)
        codes = self._raw_predict(Xa, 1)[:, 0].astype(int)
        return self.classes_[codes]

    def score(self, X, y, sample_weight=None):
        np = _np()
        p = self.predict(X)
        ya = np.asarray(y)
        if self._multilabel:
            right = np.all(p == ya, axis=1).astype(float)
            w = np.ones(len(right)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
            return float(np.sum(right * w) / np.sum(w))
        return accuracy(list(ya), list(p), sample_weight)


class MLPRegressor(_BaseMLP):
    """scikit-learn's MLPRegressor: one or many targets, an identity output and
    the squared loss, trained by solver='adam' or 'sgd' ('lbfgs' is refused by
    name). random_state as MLPClassifier's."""
    _estimator_kind = "regressor"
    _task = "regressor"

    def fit(self, X, y):
        np = _np()
        Xa = _matrix(X)
        _target(y, type(self).__name__)
        ya = _f32(y, "y")
        if ya.ndim not in (1, 2) or ya.shape[0] != Xa.shape[0]:
            raise InvalidInputError("y must have one value (or one row of targets) per row of X: X %r, y %r"
                                    % (Xa.shape, ya.shape))
        self._y_ndim = ya.ndim
        return self._fit_arrays(Xa, np.ascontiguousarray(ya.reshape(Xa.shape[0], -1)))

    def predict(self, X):
        Xa = self._query(X)
        out = self._raw_predict(Xa, self.n_outputs_).astype(_np().float64)  # exact: float32 values widened
        return out[:, 0] if self._y_ndim == 1 else out

    def score(self, X, y, sample_weight=None):
        np = _np()
        p = np.asarray(self.predict(X), dtype=np.float64)
        ya = np.asarray(y, dtype=np.float64)
        if ya.ndim == 1:
            return r2_score(list(ya), list(p), sample_weight)
        return float(np.mean([r2_score(list(ya[:, j]), list(p[:, j]), sample_weight) for j in range(ya.shape[1])]))


__all__ = ["MLPClassifier", "MLPRegressor"]
