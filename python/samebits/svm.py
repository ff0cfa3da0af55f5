"""Support vector machines (docs/svm.md): scikit-learn's SVC and SVR over
sb_svm_fit, sb_model_predict and sb_svm_decision_function: SMO with Fan, Chen
and Lin's second-order working-set selection, every choice fixed by the data,
so the iterations and the bits are the same on every machine and thread count.

Parameters are passed to the C library as text, which checks each and refuses
an unknown or unbuilt option by name (InvalidArgumentError): kernel linear,
poly, rbf or sigmoid (precomputed and callables refused). SVC's
probability=True fits Platt's sigmoid of each pair on the decision values of
an internal 5-fold cross-validation whose split is keyed by random_state (None
means 0: the split, and so the probabilities, are the same on every run and
machine; libsvm's split is random), then couples the pairs (Wu, Lin and Weng's
second method): predict_proba, predict_log_proba, probA_ and probB_. predict
stays the one-vs-one vote, as scikit-learn's. shrinking only tunes libsvm's engine:
the solver here never shrinks, and shrinking=False gives a warning that it has
no effect. cache_size sizes the kernel row cache (time only, never a bit).
n_jobs is the thread count (it never changes a bit of a result).
device="cuda", "opencl" or "gpu" computes the kernel rows of the fit and the
decision values of decision_function, predict and predict_proba on the GPU
(float64 there, each value by the host's sequence; the SMO's choices on the
host): the same model and the same values as device="cpu".

A fit stopped by max_iter keeps its model and warns (ConvergenceWarning), as
scikit-learn. decision_function is float64 (the library's doubles);
decision_function_shape="ovr" is scikit-learn's transform of the one-vs-one
values (votes plus bounded confidences), "ovo" the pairs' values.
"""
import math
import sys
import warnings

from . import _array
from ._base import Estimator, FittedModel, accuracy, r2_score, with_n_jobs
from ._model import PREDICT_VALUE, Model, dataset
from .errors import InvalidArgumentError, InvalidInputError
from .gbdt import GradientBoosting, _text

__all__ = ["SVC", "SVR"]

FAMILY_SVM = 13
KERNELS = ("linear", "poly", "rbf", "sigmoid")


def _np():
    np = sys.modules.get("numpy")
    if np is None:
        import numpy as np  # the attributes are NumPy arrays, as scikit-learn's
    return np


def _f64(model, name):
    import ctypes
    from ._lib import check, lib
    need = ctypes.c_size_t(0)
    check(lib.sb_svm_get_f64(model._h.ptr, name.encode(), None, 0, ctypes.byref(need)))
    buf = (ctypes.c_double * max(need.value, 1))()
    if need.value:
        check(lib.sb_svm_get_f64(model._h.ptr, name.encode(), buf, need.value, ctypes.byref(need)))
    return _np().frombuffer(buf, dtype=_np().float64, count=need.value).copy()


def _indices(model, name):
    from .cluster import _indices as ind
    return _np().asarray(ind(model, name), dtype=_np().int64)


def _check_y(y, who):
    from .neighbors import _check_1d_target
    if y is None:
        raise InvalidInputError("%s requires y to be passed, but the target y is None" % who)
    _check_1d_target(y, who)


def _ovr_decision(dec, k):
    """scikit-learn's one-vs-rest transform of one-vs-one values (pairs (0,1),
    (0,2), ...): a vote for the pair's first class where the value is >= 0,
    else its second, plus the summed confidences scaled into (-1/3, 1/3)."""
    np = _np()
    n = dec.shape[0]
    votes = np.zeros((n, k))
    conf = np.zeros((n, k))
    p = 0
    for i in range(k):
        for j in range(i + 1, k):
            conf[:, i] += dec[:, p]
            conf[:, j] -= dec[:, p]
            votes[dec[:, p] >= 0, i] += 1
            votes[dec[:, p] < 0, j] += 1
            p += 1
    return votes + conf / (3 * (np.abs(conf) + 1))


class _IfProbability:
    """A method that exists only while probability is True (scikit-learn's
    available_if): hasattr(est, "predict_proba") is False otherwise."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        if not obj.probability:
            raise AttributeError("%s is not available when probability=False" % self.__name__)
        return self.fn.__get__(obj, owner)


class _BaseSVM(FittedModel, Estimator):
    """What SVC and SVR share: the parameters, fit, the decision values and the
    model file."""

    _kind = "svc"

    def _c_params(self, nclasses=None):
        name = type(self).__name__
        if callable(self.kernel) or self.kernel == "precomputed":
            raise InvalidArgumentError("%s: kernel=%r is not supported: linear, poly, rbf or sigmoid" %
                                       (name, self.kernel if not callable(self.kernel) else "callable"))
        prob = getattr(self, "probability", False)
        if prob not in (True, False, 0, 1):
            raise InvalidArgumentError("%s: probability=%r must be a bool" % (name, prob))
        if self.shrinking is not True:
            if self.shrinking not in (False, 0, 1):
                raise InvalidArgumentError("%s: shrinking=%r must be a bool" % (name, self.shrinking))
            warnings.warn("%s: shrinking=%r has no effect in samebits (it tunes libsvm's engine; the solver here "
                          "never shrinks, docs/svm.md)" % (name, self.shrinking), UserWarning, stacklevel=4)
        g = self.gamma
        if isinstance(g, str):
            gtext = _text("gamma", g, str)
        else:
            if isinstance(g, bool):
                raise InvalidArgumentError("%s: gamma=%r must be 'scale', 'auto' or a number" % (name, g))
            gtext = repr(float(g))
        if isinstance(self.C, bool) or not isinstance(self.C, (int, float)) and not hasattr(self.C, "__float__"):
            raise InvalidArgumentError("%s: C=%r must be a number" % (name, self.C))
        if not float(self.C) > 0:
            raise InvalidArgumentError("%s: C=%r: C must be > 0" % (name, self.C))
        pairs = [("model", self._kind), ("kernel", _text("kernel", self.kernel, str)),
                 ("C", repr(float(self.C))), ("gamma", gtext),
                 ("degree", _text("degree", self.degree, int)), ("coef0", repr(float(self.coef0))),
                 ("tol", repr(float(self.tol))), ("max_iter", _text("max_iter", self.max_iter, int)),
                 ("cache_size", repr(float(self.cache_size)))]
        if self._kind == "svr":
            pairs.append(("epsilon", repr(float(self.epsilon))))
        if prob:
            pairs.append(("probability", "true"))
            rs = self.random_state
            if rs is not None:  # scikit-learn: ignored when probability is False
                if isinstance(rs, bool) or not isinstance(rs, int) and not hasattr(rs, "__index__"):
                    raise InvalidArgumentError("%s: random_state=%r must be None or a whole number >= 0 (a "
                                               "RandomState instance is not supported: the split is keyed)"
                                               % (name, rs))
                pairs.append(("random_state", _text("random_state", int(rs), int)))
        if self.numeric_mode is not None:
            pairs.append(("numeric_mode", _text("numeric_mode", self.numeric_mode, str)))
        if self.device is not None:
            pairs.append(("device", _text("device", self.device, str)))
        return pairs

    def _fit(self, X, label, sample_weight, pairs):
        from ._lib import lib
        m = _array.matrix(X, "X")
        if m.nrows < 2:
            raise InvalidInputError("Found array with n_samples=%d while a minimum of 2 is required by %s"
                                    % (m.nrows, type(self).__name__))
        if label[2] != m.nrows:
            raise InvalidInputError("Found input variables with inconsistent numbers of samples: X has %d rows "
                                    "but y has %d values" % (m.nrows, label[2]))
        weight = _array.row_weights(sample_weight, m.nrows)
        if weight is not None and not any(weight[0][i] > 0 for i in range(weight[2])):
            raise InvalidInputError("Invalid input - all samples have zero or negative weights (sample_weight "
                                    "is all zero)")
        train = dataset(m, label=label[1:], weight=weight[1:] if weight is not None else None, view=True)
        model = Model._fit(lib.sb_svm_fit, pairs, train)
        self._drop_fitted()
        self._set_fitted(model, m.names)
        if not self._model.get_int("converged"):
            from sklearn.exceptions import ConvergenceWarning
            warnings.warn("Solver terminated early (max_iter=%d). Consider pre-processing your data with "
                          "StandardScaler or MinMaxScaler." % int(self.max_iter), ConvergenceWarning, stacklevel=3)
        return model

    def _set_fitted(self, model, names):
        self._adopt_model(model, names)
        np = _np()
        nsv = int(model.get_int("n_support_vectors"))
        self.support_ = _indices(model, "support").astype(np.int32)
        sv = np.asarray(model.get_array("support_vectors")) if nsv else np.zeros(0, dtype=np.float32)
        self.support_vectors_ = sv.astype(np.float64).reshape(nsv, self.n_features_in_)
        ncoef = 1 if self._kind == "svr" else int(model.get_int("n_classes")) - 1
        self.dual_coef_ = _f64(model, "dual_coef").reshape(ncoef, nsv)
        self.intercept_ = _f64(model, "intercept")
        self._gamma = float(_f64(model, "gamma")[0])
        self.n_iter_ = _indices(model, "n_iter").astype(np.int32)
        self._n_support = _indices(model, "n_support").astype(np.int32)
        self.shape_fit_ = (int(model.get_int("n_samples_fit")), self.n_features_in_)
        self.fit_status_ = 0
        if self._kind == "svc":
            self._probA = _f64(model, "probA")
            self._probB = _f64(model, "probB")

    @property
    def n_support_(self):
        self._check_fitted()
        return self._n_support

    @property
    def coef_(self):
        """The primal weights of a linear kernel: dual_coef_ @ support_vectors_."""
        self._check_fitted()
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        np = _np()
        if type(self) is SVR:
            return self.dual_coef_ @ self.support_vectors_
        k = len(self.classes_)
        if k == 2:
            return self.dual_coef_ @ self.support_vectors_
        first = np.concatenate([[0], np.cumsum(self._n_support)])
        rows = []
        for i in range(k):
            for j in range(i + 1, k):
                a, b = slice(first[i], first[i + 1]), slice(first[j], first[j + 1])
                rows.append(self.dual_coef_[j - 1, a] @ self.support_vectors_[a] +
                            self.dual_coef_[i, b] @ self.support_vectors_[b])
        return np.asarray(rows)

    def _decision(self, X):
        import ctypes
        from ._lib import check, lib
        d = self._predict_data(X)
        dev = self._device_arg()
        need = ctypes.c_size_t(0)
        check(lib.sb_svm_decision_function_on(self._model._h.ptr, d.ptr, dev, None, 0, ctypes.byref(need)))
        buf = (ctypes.c_double * max(need.value, 1))()
        if need.value:
            check(lib.sb_svm_decision_function_on(self._model._h.ptr, d.ptr, dev, buf, need.value,
                                                  ctypes.byref(need)))
        return _np().frombuffer(buf, dtype=_np().float64, count=need.value).copy()

    def _device_arg(self):
        """The device the decision values are computed on, as the C calls take
        it: the estimator's device for "cuda", "opencl" or "gpu" (the same bits
        as the CPU's), else None (the host)."""
        dev = self._predict_device()
        return dev.encode() if dev is not None else None

    def load_model(self, path_or_bytes):
        """Load a support vector model file (or its bytes) of this estimator's
        kind; returns self. Another family's or kind's file is InvalidInputError
        naming it. The kernel parameters become the file's; a classifier's
        classes_ are 0..K-1 (labels are not in the file)."""
        model, _ = self._open_own_model(path_or_bytes, FAMILY_SVM)
        want = 0 if self._kind == "svc" else 1
        if model.get_int("kind") != want:
            raise InvalidInputError("the model file holds a %s model; a %s cannot hold it: load it with "
                                    "samebits.load_model(...)" % ("svm SVR" if want == 0 else "svm SVC",
                                                                  type(self).__name__))
        self._load_fitted(model, path_or_bytes)
        return self

    def _load_fitted(self, model, source):
        names, params = self._file_names_params(source)
        self.kernel = KERNELS[model.get_int("kernel")]
        self.degree = int(model.get_int("degree"))
        g = params.get("gamma", "scale")
        self.gamma = g if g in ("scale", "auto") else float(g)
        self.coef0 = float(_f64(model, "coef0")[0])
        self.C = float(params.get("C", 1.0))
        if self._kind == "svc":
            self.probability = params.get("probability", "false") == "true"
            self.random_state = int(params["random_state"]) if "random_state" in params else None
        if self._kind == "svr":
            self.epsilon = float(params.get("epsilon", 0.1))
        self._set_fitted(model, names)
        if self._kind == "svc":
            self.classes_ = _np().arange(int(model.get_int("n_classes")))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class SVC(_BaseSVM):
    """C-support vector classification (scikit-learn's SVC): one-vs-one over
    the pairs of classes in scikit-learn's order, libsvm's vote for predict."""

    _estimator_kind = "classifier"
    _kind = "svc"
    _encode_labels = GradientBoosting._encode_labels
    _encode_dense = GradientBoosting.__dict__["_encode_dense"]

    def __init__(self, *, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
                 probability=False, tol=1e-3, cache_size=200, class_weight=None, verbose=False, max_iter=-1,
                 decision_function_shape="ovr", break_ties=False, random_state=None, n_jobs=None, device="cpu",
                 numeric_mode=None):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.device = device
        self.numeric_mode = numeric_mode

    @with_n_jobs
    def fit(self, X, y, sample_weight=None):
        """Fit on X (n, d) and the labels y (n,) of any sortable type (at least
        two classes; one is refused by name). On error nothing changes."""
        if self.decision_function_shape not in ("ovr", "ovo"):
            raise InvalidArgumentError("decision_function_shape=%r: 'ovr' or 'ovo'" % (self.decision_function_shape,))
        if self.break_ties and self.decision_function_shape == "ovo":
            raise InvalidArgumentError("break_ties must be False when decision_function_shape is 'ovo'")
        _check_y(y, type(self).__name__)
        classes, label = self._encode_labels(y)
        if len(classes) < 2:
            raise InvalidInputError("The number of classes has to be greater than one; got %d class" % len(classes))
        pairs = self._c_params(len(classes))
        cw = self.class_weight
        if cw is not None:
            if cw == "balanced":
                pairs.append(("class_weight", "balanced"))
            elif isinstance(cw, dict):
                index = {c: i for i, c in enumerate(classes.tolist() if hasattr(classes, "tolist") else classes)}
                parts = []
                for c, w in cw.items():
                    c = c.item() if hasattr(c, "item") else c
                    if c not in index:
                        raise InvalidArgumentError("The classes, %r, are not in class_weight" % (c,))
                    parts.append("%d:%r" % (index[c], float(w)))
                if parts:
                    pairs.append(("class_weight", ";".join(parts)))
            else:
                raise InvalidArgumentError("class_weight=%r: None, 'balanced' or a dict" % (cw,))
        self._fit(X, label, sample_weight, pairs)
        self.classes_ = classes
        return self

    def decision_function(self, X):
        """Decision values (float64): (n,) for two classes (positive is
        classes_[1]); else (n, K) by "ovr" or (n, K(K-1)/2) by "ovo"."""
        self._check_fitted()
        k = len(self.classes_)
        dec = self._decision(X)
        if k == 2:
            return dec
        dec = dec.reshape(-1, k * (k - 1) // 2)
        if self.decision_function_shape == "ovr":
            return _ovr_decision(dec, k)
        return dec

    @with_n_jobs
    def predict(self, X):
        """The predicted labels: libsvm's one-vs-one vote (ties to the first
        class), or with break_ties the largest "ovr" decision value."""
        self._check_fitted()
        np = _np()
        if self.break_ties and len(self.classes_) > 2:
            idx = np.argmax(self.decision_function(X), axis=1)
        else:
            d = self._predict_data(X)
            idx = np.asarray(self._model.predict(d, PREDICT_VALUE, 1, self._predict_device())).astype(np.intp)
        classes = self.classes_
        if hasattr(classes, "shape"):
            return classes[idx]
        return [classes[int(v)] for v in idx]

    @property
    def probA_(self):
        """Platt's A of each pair (libsvm's sign: P(first) = 1 / (1 + exp(A f + B))
        with f positive for the pair's first class); empty without probability."""
        self._check_fitted()
        return self._probA

    @property
    def probB_(self):
        """Platt's B of each pair; empty without probability."""
        self._check_fitted()
        return self._probB

    def _proba(self, X, log):
        import ctypes
        from ._lib import check, lib
        self._check_fitted()
        if len(self._probA) == 0:
            raise AttributeError("predict_proba is not available when fitted with probability=False")
        d = self._predict_data(X)
        need = ctypes.c_size_t(0)
        dev = self._device_arg()
        check(lib.sb_svm_predict_proba_on(self._model._h.ptr, d.ptr, dev, log, None, 0, ctypes.byref(need)))
        buf = (ctypes.c_double * max(need.value, 1))()
        if need.value:
            check(lib.sb_svm_predict_proba_on(self._model._h.ptr, d.ptr, dev, log, buf, need.value,
                                              ctypes.byref(need)))
        np = _np()
        return np.frombuffer(buf, dtype=np.float64, count=need.value).copy().reshape(-1, len(self.classes_))

    @_IfProbability
    @with_n_jobs
    def predict_proba(self, X):
        """Class probabilities (n, K) in float64, columns in classes_ order:
        the pairs' Platt sigmoids coupled by Wu, Lin and Weng's second method
        (two classes: P(classes_[0]) = the sigmoid, P(classes_[1]) = 1 - it).
        Needs probability=True."""
        return self._proba(X, 0)

    @_IfProbability
    @with_n_jobs
    def predict_log_proba(self, X):
        """The natural logarithms of predict_proba(X), by the library's log."""
        return self._proba(X, 1)

    def score(self, X, y, sample_weight=None):
        """Accuracy of predict(X) (sums by math.fsum)."""
        pred = self.predict(X)
        w = None if sample_weight is None else _array.values(sample_weight, "sample_weight")
        return accuracy(_array.values(y, "y"), list(pred), w)


class SVR(_BaseSVM):
    """Epsilon-support vector regression (scikit-learn's SVR)."""

    _estimator_kind = "regressor"
    _kind = "svr"

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, C=1.0, epsilon=0.1,
                 shrinking=True, cache_size=200, verbose=False, max_iter=-1, n_jobs=None, device="cpu",
                 numeric_mode=None):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.C = C
        self.epsilon = epsilon
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.device = device
        self.numeric_mode = numeric_mode

    @with_n_jobs
    def fit(self, X, y, sample_weight=None):
        """Fit on X (n, d) and the targets y (n,), finite, as float32. On error
        nothing changes."""
        _check_y(y, type(self).__name__)
        label = _array.vector(y, "y")
        self._fit(X, label, sample_weight, self._c_params())
        return self

    @with_n_jobs
    def predict(self, X):
        """The predicted values: sum of dual_coef_ K - rho in double, rounded
        once to float32 (a NumPy float64 array of those)."""
        self._check_fitted()
        d = self._predict_data(X)
        return _np().asarray(self._model.predict(d, PREDICT_VALUE, 1, self._predict_device())).astype(_np().float64)

    def score(self, X, y, sample_weight=None):
        """R^2 of predict(X) (sums by math.fsum)."""
        pred = self.predict(X)
        w = None if sample_weight is None else _array.values(sample_weight, "sample_weight")
        return r2_score(_array.values(y, "y"), pred.tolist(), w)
