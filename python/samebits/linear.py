"""Linear models and PCA (docs/linear.md): scikit-learn's estimators' names,
parameters and defaults over sb_linear_fit, the same bits on every machine,
device and thread count.

LinearRegression, Ridge, Lasso, ElasticNet, LogisticRegression (L-BFGS, binary
or multinomial) and PCA. Parameters are passed to the C library as text (floats
by repr(), as the tree estimators do), which checks each and refuses an unknown
or unbuilt option by name (InvalidArgumentError). scikit-learn parameters that
only tune scikit-learn's own engine (copy_X, random_state, precompute,
warm_start, verbose...) are accepted; a value other than scikit-learn's default
gives a warning that it has no effect. n_jobs is the thread count, as for the
trees (it never changes a bit of a result).

Fitted arrays (coef_, components_...) are float64 numpy.ndarrays of the model's
float32 values (the widening is exact) when NumPy is loaded, else samebits.Array.
Predictions and transforms are samebits.Array (float32) as the trees' are.
"""
import math
import sys
import warnings

from . import _array
from ._base import Estimator, FittedModel, accuracy, r2_score, warn_column_vector, with_n_jobs
from ._model import PREDICT_PROBA, PREDICT_RAW, PREDICT_TRANSFORM, PREDICT_VALUE, Model, class_probabilities, dataset
from .errors import InvalidArgumentError, InvalidInputError
from .gbdt import GradientBoosting, _open_model, _text, family_name

__all__ = ["LinearRegression", "Ridge", "Lasso", "ElasticNet", "LogisticRegression", "PCA", "TruncatedSVD",
           "ConvergenceWarning"]

FAMILY_LINEAR = 5
# sb_model_get_int(m, "kind") -> the C model name (docs/linear.md)
KIND_NAMES = ("linear", "ridge", "lasso", "elasticnet", "logistic", "pca", "truncated_svd")


class ConvergenceWarning(UserWarning):
    """An iterative fit ran out of iterations (used when scikit-learn, whose
    ConvergenceWarning is raised instead, cannot be imported)."""


def _convergence_warning():
    try:
        from sklearn.exceptions import ConvergenceWarning as cw
        return cw
    except ImportError:
        return ConvergenceWarning


def _np():
    return sys.modules.get("numpy")


_out = _array.shaped  # float32 results in their shape (float64 with NumPy)


def _bool_text(name, value):
    if value is True or value is False or (hasattr(value, "dtype") and str(getattr(value, "dtype")) == "bool"):
        return "true" if bool(value) else "false"
    raise InvalidArgumentError("parameter %s=%r must be True or False" % (name, value))


def _same(value, default):
    try:
        return value is default or (type(value) is type(default) and value == default) or \
            (isinstance(value, (int, float)) and not isinstance(value, bool) and isinstance(default, (int, float))
             and not isinstance(default, bool) and value == default)
    except Exception:  # an array compared with a scalar...
        return False


class _Linear(FittedModel, Estimator):
    """What the linear estimators share: fit over sb_linear_fit, prediction data,
    save/load/digest and pickling as the tree estimators have them."""

    _model_name = None   # the C model= value
    _kind = None         # sb_model_get_int(m, "kind")
    _estimator_kind = "regressor"
    _family = FAMILY_LINEAR
    # scikit-learn parameters that only tune scikit-learn's engine: name -> (default, why)
    _IGNORED = {}

    # ---- parameters ---------------------------------------------------------------
    def _note_ignored(self):
        for name, (default, why) in self._IGNORED.items():
            value = getattr(self, name)
            if not _same(value, default):
                warnings.warn("%s: parameter %s=%r has no effect in samebits (%s)"
                              % (type(self).__name__, name, value, why), UserWarning, stacklevel=4)

    def _c_params(self, n_classes=None):
        """The (key, text) pairs given to the C library."""
        pairs = [("model", self._model_name)]
        pairs += self._own_params(n_classes)
        if self.numeric_mode is not None:
            pairs.append(("numeric_mode", _text("numeric_mode", self.numeric_mode, str)))
        if self.device is not None:
            pairs.append(("device", _text("device", self.device, str)))
        return pairs

    def _own_params(self, n_classes):
        return []

    def _intercept_pairs(self):
        return [("fit_intercept", _bool_text("fit_intercept", self.fit_intercept))]

    def _positive_pairs(self):
        # positive=True is not built: the C library refuses it by name
        if getattr(self, "positive", False) is False:
            return []
        return [("positive", _bool_text("positive", self.positive))]

    # ---- fit ------------------------------------------------------------------------
    _MULTI_TARGET = False  # LinearRegression, Ridge, Lasso and ElasticNet: y may be 2-D (n, n_targets)

    def _labels(self, y, nrows):
        if y is None:
            raise InvalidInputError("%s requires y to be passed, but the target y is None" % type(self).__name__)
        if self._MULTI_TARGET and _is_2d(y):
            return None, _array.matrix(y, "y")
        if _is_2d(y) and _width(y) > 1:
            raise InvalidInputError("%s takes one target a row, y (n,); several targets (y of shape (n, t)) are "
                                    "built for LinearRegression, Ridge, Lasso and ElasticNet" % type(self).__name__)
        warn_column_vector(y)
        label = _array.vector(y, "y")
        return None, label

    @with_n_jobs
    def fit(self, X, y=None, sample_weight=None):
        """Train on X (n, d) and y (n,) (PCA: y is ignored); sample_weight (n,),
        finite and >= 0 with a positive sum. On error nothing changes."""
        self._note_ignored()
        m = _array.matrix(X, "X")
        classes, label = self._labels(y, m.nrows)
        targets = None
        if isinstance(label, _array.Matrix):  # several targets a row
            targets, label = label, None
            if targets.nrows != m.nrows:
                raise InvalidInputError("X has %d rows but y has %d rows" % (m.nrows, targets.nrows))
            if targets.ncols < 1:
                raise InvalidInputError("y has no targets (shape (%d, 0))" % targets.nrows)
        if label is not None and label[2] != m.nrows:
            raise InvalidInputError("X has %d rows but y has %d labels" % (m.nrows, label[2]))
        weight = _array.row_weights(sample_weight, m.nrows)
        if weight is not None and weight[2] and not any(weight[0][i] for i in range(weight[2])):
            raise InvalidInputError("sample_weight is all zero: nothing to learn from")
        pairs = self._c_params(len(classes) if classes is not None else None)
        # the fit reads X in place (no copy); m holds it, and nothing changes it until the fit returns
        train = dataset(m, label=label[1:] if label is not None else None,
                        weight=weight[1:] if weight is not None else None, view=True, targets=targets)
        model = Model.fit_linear(pairs, train)
        self._n_targets = None if targets is None else targets.ncols
        # success: replace the fitted state all at once
        self._drop_fitted()
        self._set_fitted(model, classes, m.names)
        self._fit_rows(m.nrows)
        self._check_converged(model)
        return self

    def _fit_rows(self, n):
        pass

    def _check_converged(self, model):
        if model.get_int("converged") == 0:
            n = model.get_int("n_iter")
            warnings.warn("%s did not converge: it used all %d iterations (max_iter=%r, tol=%r); increase max_iter "
                          "or tol, or scale the data" % (type(self).__name__, n, getattr(self, "max_iter", None),
                                                         getattr(self, "tol", None)),
                          _convergence_warning(), stacklevel=3)

    def _set_fitted(self, model, classes, names):
        info = self._adopt_model(model, names)
        self._set_attributes(model, classes)

    def _set_attributes(self, model, classes):
        p = self.n_features_in_
        coef = model.get_array("coef")
        intercept = model.get_array("intercept")
        t = getattr(self, "_n_targets", None)
        if t is None and model.get_int("n_outputs") > 1:  # a loaded multi-target model
            t = self._n_targets = model.get_int("n_outputs")
        if t is None:  # y was 1-D: scikit-learn's shapes (p,) and a float
            self.coef_ = _out(coef, (p,))
            self.intercept_ = float(intercept.tolist()[0])
        else:  # y was (n, t): (t, p) and (t,)
            self.coef_ = _out(coef, (t, p))
            self.intercept_ = _out(intercept, (t,))

    # ---- model file (prediction data, digest, bytes, saving: _base.FittedModel) -----
    def load_model(self, path_or_bytes):
        """Load a model file (or its bytes) of this estimator's kind; returns self.
        Another kind's file is InvalidInputError naming both. A loaded
        LogisticRegression's classes_ are 0..K-1 (labels are not in the file)."""
        model = _open_model(path_or_bytes)
        info = model.info()
        if info["family"] != FAMILY_LINEAR or info.get("linear_kind") != self._kind:
            from .gbdt import estimator_class_for
            try:
                other = estimator_class_for(info).__name__
            except InvalidInputError:
                other = "unknown"
            raise InvalidInputError(
                "the model file holds a %s model (family %s); a %s cannot hold it: load it with "
                "samebits.load_model(...) or %s().load_model(...)"
                % (other, family_name(info["family"]), type(self).__name__, other))
        self._load_fitted(model, path_or_bytes)
        return self

    def _load_fitted(self, model, source):
        from ._model import feature_names_in_file
        names = feature_names_in_file(source)
        self._drop_fitted()
        self._n_targets = None  # a file of several targets says so (n_outputs)
        self._set_fitted(model, None, names)

    # ---- scikit-learn tags -----------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags



def _is_2d(y):
    """Whether y is a 2-D input (a NumPy-like array of 2 dimensions, or a
    sequence of sequences)."""
    nd = getattr(y, "ndim", None)
    if nd is not None:
        return nd == 2
    if isinstance(y, (list, tuple)) and y:
        return isinstance(y[0], (list, tuple)) or getattr(y[0], "ndim", 0) == 1
    return False


def _width(y):
    """The number of columns of a 2-D input y."""
    shape = getattr(y, "shape", None)
    if shape is not None:
        return int(shape[1])
    return len(y[0])


class _LinearRegressor(_Linear):
    """The regressors: predict and R^2 score."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = self._MULTI_TARGET  # y (n, t): LinearRegression, Ridge, Lasso, ElasticNet
        return tags

    @with_n_jobs
    def predict(self, X):
        """The predicted values, X coef_^T + intercept_ through the identical
        product: a samebits.Array (n,); fitted on a 2-D y, (n, n_targets) (a float64
        NumPy array of the float32 values when NumPy is loaded)."""
        d = self._predict_data(X)
        t = getattr(self, "_n_targets", None)
        out = self._model.predict(d, PREDICT_VALUE, 1 if t is None else t, device=self._predict_device())
        if t is None:
            return out
        # y was (n, t): predictions (n, t), also for t = 1, as scikit-learn's; float64 (the
        # exact float32 values) when NumPy is loaded, as scikit-learn expects of several outputs
        return _out(out, (len(out), t))

    def score(self, X, y, sample_weight=None):
        """R^2 of predict(X) (sums by math.fsum); for several targets the
        plain mean of each target's R^2 (scikit-learn's multioutput="uniform_average")."""
        pred = self.predict(X)
        w = None if sample_weight is None else _array.values(sample_weight, "sample_weight")
        t = getattr(self, "_n_targets", None)
        if t is None:
            return r2_score(_array.values(y, "y"), pred.tolist(), w)
        ym = _array.matrix(y, "y")
        if ym.ncols != t:
            raise InvalidInputError("y has %d targets; the model was fitted on %d" % (ym.ncols, t))
        yv = memoryview(ym.buf).cast("B").cast("f") if not hasattr(ym.buf, "ravel") else ym.buf.ravel().tolist()
        pv = pred.tolist()
        yl = list(yv)
        scores = [r2_score([yl[i * t + k] for i in range(ym.nrows)], [pv[i][k] for i in range(ym.nrows)], w)
                  for k in range(t)]
        return math.fsum(scores) / t


_COPY = (True, "X is never modified: it is converted to float32 once")
_RANDOM = (None, "no solver built here draws random numbers")
_WARM = (False, "every fit starts from zero coefficients, so a refit gives the same bits")


class LinearRegression(_LinearRegressor):
    """Ordinary least squares (scikit-learn's LinearRegression); y (n,) or
    (n, n_targets)."""

    _MULTI_TARGET = True
    _model_name, _kind = "linear", 0
    _IGNORED = {"copy_X": _COPY, "tol": (1e-6, "scikit-learn uses it only for sparse input with positive=True")}

    def __init__(self, *, fit_intercept=True, copy_X=True, tol=1e-6, n_jobs=None, positive=False, device="cpu",
                 numeric_mode=None):
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.tol = tol
        self.n_jobs = n_jobs
        self.positive = positive
        self.device = device
        self.numeric_mode = numeric_mode

    def _own_params(self, n_classes):
        return self._intercept_pairs() + self._positive_pairs()

    def _set_attributes(self, model, classes):
        super()._set_attributes(model, classes)
        self.rank_ = model.get_int("rank")


class Ridge(_LinearRegressor):
    """Least squares with an L2 penalty alpha ||w||^2 (scikit-learn's Ridge; the
    Cholesky solver); y (n,) or (n, n_targets), one alpha for every target."""

    _MULTI_TARGET = True
    _model_name, _kind = "ridge", 1
    _IGNORED = {"copy_X": _COPY, "max_iter": (None, "the Cholesky solver is direct"),
                "tol": (1e-4, "the Cholesky solver is direct"), "random_state": _RANDOM}

    def __init__(self, alpha=1.0, *, fit_intercept=True, copy_X=True, max_iter=None, tol=1e-4, solver="auto",
                 positive=False, random_state=None, device="cpu", numeric_mode=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.positive = positive
        self.random_state = random_state
        self.device = device
        self.numeric_mode = numeric_mode

    def _own_params(self, n_classes):
        return ([("alpha", _text("alpha", self.alpha, float))] + self._intercept_pairs()
                + [("solver", _text("solver", self.solver, str))] + self._positive_pairs())

    def _set_attributes(self, model, classes):
        super()._set_attributes(model, classes)
        self.n_iter_ = None  # as scikit-learn's for its direct solvers


class ElasticNet(_LinearRegressor):
    """Least squares with the penalty alpha (l1_ratio ||w||_1 + (1 - l1_ratio)/2
    ||w||^2) by cyclic coordinate descent (scikit-learn's ElasticNet)."""

    _model_name, _kind = "elasticnet", 3
    _IGNORED = {"copy_X": _COPY, "precompute": (False, "the Gram matrix is the solver's own choice; the same bits "
                                                       "either way"),
                "warm_start": _WARM, "random_state": (None, "it is used only by selection='random', which is not "
                                                            "built")}

    def __init__(self, alpha=1.0, *, l1_ratio=0.5, fit_intercept=True, precompute=False, max_iter=1000, copy_X=True,
                 tol=1e-4, warm_start=False, positive=False, random_state=None, selection="cyclic", device="cpu",
                 numeric_mode=None):
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.max_iter = max_iter
        self.copy_X = copy_X
        self.tol = tol
        self.warm_start = warm_start
        self.positive = positive
        self.random_state = random_state
        self.selection = selection
        self.device = device
        self.numeric_mode = numeric_mode

    def _own_params(self, n_classes):
        pairs = [("alpha", _text("alpha", self.alpha, float))]
        if self._model_name == "elasticnet":
            pairs.append(("l1_ratio", _text("l1_ratio", self.l1_ratio, float)))
        pairs += self._intercept_pairs()
        pairs += [("max_iter", _text("max_iter", self.max_iter, int)), ("tol", _text("tol", self.tol, float)),
                  ("selection", _text("selection", self.selection, str))]
        return pairs + self._positive_pairs()

    _MULTI_TARGET = True

    def _set_attributes(self, model, classes):
        super()._set_attributes(model, classes)
        t = getattr(self, "_n_targets", None)
        if t is None or t == 1:  # y (n,) or (n, 1): an int, as scikit-learn's
            self.n_iter_ = model.get_int("n_iter")
        else:  # a list of each target's own sweeps (the model file keeps them), as scikit-learn's
            self.n_iter_ = [model.get_int("n_iter.%d" % k) for k in range(t)]


class Lasso(ElasticNet):
    """Least squares with the L1 penalty alpha ||w||_1 by cyclic coordinate descent
    (scikit-learn's Lasso: ElasticNet with l1_ratio=1)."""

    _model_name, _kind = "lasso", 2

    def __init__(self, alpha=1.0, *, fit_intercept=True, precompute=False, copy_X=True, max_iter=1000, tol=1e-4,
                 warm_start=False, positive=False, random_state=None, selection="cyclic", device="cpu",
                 numeric_mode=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.copy_X = copy_X
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.positive = positive
        self.random_state = random_state
        self.selection = selection
        self.device = device
        self.numeric_mode = numeric_mode


class LogisticRegression(_Linear):
    """Logistic regression with an L2 penalty (or none) by L-BFGS: binary, or
    multinomial for more than two classes (scikit-learn's LogisticRegression with
    solver='lbfgs'). classes_ holds the sorted distinct labels of y; predict
    returns them."""

    _model_name, _kind = "logistic", 4
    _estimator_kind = "classifier"
    _IGNORED = {"intercept_scaling": (1, "it is used only by solver='liblinear', which is not built"),
                "random_state": (None, "L-BFGS draws no random numbers"), "verbose": (0, "L-BFGS prints nothing"),
                "warm_start": _WARM}
    _encode_labels = GradientBoosting._encode_labels
    _encode_dense = GradientBoosting.__dict__["_encode_dense"]

    def __init__(self, penalty="l2", *, C=1.0, l1_ratio=None, dual=False, tol=1e-4, fit_intercept=True,
                 intercept_scaling=1, class_weight=None, random_state=None, solver="lbfgs", max_iter=100, verbose=0,
                 warm_start=False, n_jobs=None, device="cpu", numeric_mode=None):
        self.penalty = penalty
        self.C = C
        self.l1_ratio = l1_ratio
        self.dual = dual
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.random_state = random_state
        self.solver = solver
        self.max_iter = max_iter
        self.verbose = verbose
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.device = device
        self.numeric_mode = numeric_mode

    def _own_params(self, n_classes):
        penalty = self.penalty
        if penalty is None:
            penalty = "none"
        elif penalty == "deprecated":  # scikit-learn 1.8's spelling of the default
            penalty = "l2"
        if self.dual not in (False, 0):
            raise InvalidArgumentError("dual=%r is not built (the primal L-BFGS solver is)" % (self.dual,))
        if self.l1_ratio is not None and not _same(self.l1_ratio, 0.0):
            raise InvalidArgumentError("l1_ratio=%r (an elastic-net penalty) is not built for LogisticRegression; "
                                       "l1_ratio=None or 0 (the L2 penalty) is" % (self.l1_ratio,))
        C = self.C
        if isinstance(C, (int, float)) and not isinstance(C, bool) and math.isinf(C) and C > 0:
            penalty, C = "none", 1.0  # scikit-learn's C=np.inf: no penalty
        pairs = [("penalty", _text("penalty", penalty, str)), ("C", _text("C", C, float)),
                 ("tol", _text("tol", self.tol, float)), ("max_iter", _text("max_iter", self.max_iter, int))]
        pairs += self._intercept_pairs()
        pairs.append(("solver", _text("solver", self.solver, str)))
        if self.class_weight is not None:
            pairs.append(("class_weight", self._class_weight_text(self.class_weight)))
        return pairs

    def _class_weight_text(self, cw):
        """class_weight as the C key's text: "balanced" or "k:w;k:w" over class indices
        (labels mapped through the sorted classes; a class left out weighs 1; a key
        that is not a class is an error)."""
        if isinstance(cw, str):
            if cw != "balanced":
                raise InvalidArgumentError("class_weight=%r: 'balanced', a dict {label: weight} or None" % (cw,))
            return cw
        if not isinstance(cw, dict):
            raise InvalidArgumentError("class_weight=%r: 'balanced', a dict {label: weight} or None" % (cw,))
        classes = self._pending_classes
        keys = [c.item() if hasattr(c, "item") else c for c in classes]
        unknown = [k for k in cw if k not in keys]
        if unknown:
            raise InvalidArgumentError("The classes, %r, are not in class_weight's labels %r" % (unknown, keys))
        parts = ["%d:%s" % (i, _text("class_weight[%r]" % (k,), cw[k], float)) for i, k in enumerate(keys) if k in cw]
        return ";".join(parts) if parts else "none"

    def _labels(self, y, nrows):
        if y is None:
            raise InvalidInputError("%s requires y to be passed, but the target y is None" % type(self).__name__)
        warn_column_vector(y)
        classes, label = self._encode_labels(y)
        if len(classes) < 2:
            raise InvalidInputError("a classifier needs at least two classes in y; got %d class" % len(classes))
        self._pending_classes = classes
        return classes, label

    def fit(self, X, y, sample_weight=None):
        """Train on X (n, d) and labels y (n,) of any sortable type; sample_weight
        (n,), finite and >= 0. Warns ConvergenceWarning when max_iter runs out."""
        try:
            return super().fit(X, y, sample_weight=sample_weight)
        finally:
            self.__dict__.pop("_pending_classes", None)

    def _set_attributes(self, model, classes):
        p = self.n_features_in_
        nout = model.get_int("n_outputs")
        if classes is None:
            k = model.get_int("n_classes")
            np = _np()
            classes = np.arange(k) if np is not None else list(range(k))
        self.classes_ = classes
        self.n_classes_ = len(classes)
        self.coef_ = _out(model.get_array("coef"), (nout, p))
        self.intercept_ = _out(model.get_array("intercept"), (nout,))
        n = model.get_int("n_iter")
        np = _np()
        self.n_iter_ = np.array([n], dtype=np.int32) if np is not None else [n]

    def _check_converged(self, model):
        if model.get_int("converged") == 0:
            n = model.get_int("n_iter")
            warnings.warn("lbfgs failed to converge after %d iterations (max_iter=%r). Increase the number of "
                          "iterations (max_iter) or scale the data" % (n, self.max_iter),
                          _convergence_warning(), stacklevel=4)

    @with_n_jobs
    def predict(self, X):
        """The predicted labels (a NumPy array when classes_ is one, else a list)."""
        d = self._predict_data(X)
        out = self._model.predict(d, PREDICT_VALUE, 1, device=self._predict_device())
        return self._class_labels(out)

    @with_n_jobs
    def predict_proba(self, X):
        """Class probabilities, shape (n, K) (K = 2 for binary: column 0 is 1 - P(1),
        rounded to float32 as C's 1.0f - p). A samebits.Array."""
        d = self._predict_data(X)  # refuses an unfitted estimator first
        return class_probabilities(self._model, d, self.n_classes_, self._predict_device())

    def predict_log_proba(self, X):
        """log(predict_proba(X)) (a NumPy array when NumPy is loaded, else a samebits.Array)."""
        proba = self.predict_proba(X)
        np = _np()
        if np is not None:
            with np.errstate(divide="ignore"):
                return np.log(np.asarray(proba))
        out = _array.empty(tuple(proba.shape))
        src = memoryview(proba).cast("B").cast("f")
        dst = memoryview(out).cast("B").cast("f")
        for i in range(len(src)):
            dst[i] = math.log(src[i]) if src[i] > 0 else float("-inf")
        return out

    @with_n_jobs
    def decision_function(self, X):
        """The margins X coef_^T + intercept_: (n,) for binary (the margin of class
        1), (n, K) for multinomial; a float32 numpy.ndarray when NumPy is loaded."""
        d = self._predict_data(X)
        k = 1 if self.n_classes_ == 2 else self.n_classes_
        out = self._model.predict(d, PREDICT_RAW, k, device=self._predict_device())
        np = _np()
        return np.asarray(out) if np is not None else out

    def score(self, X, y, sample_weight=None):
        """Accuracy of predict(X) (sums by math.fsum)."""
        pred = self.predict(X)
        w = None if sample_weight is None else _array.values(sample_weight, "sample_weight")
        return accuracy(_array.values(y, "y"), list(pred), w)


class PCA(_Linear):
    """Principal component analysis (scikit-learn's PCA): the eigenvectors of the
    covariance by the family's eigensolver, with scikit-learn's sign
    convention. n_components: None (all), a count, or a fraction of the variance
    in (0, 1). svd_solver "auto", "full", "covariance_eigh", "arpack" (the same
    exact eigensolver, with scikit-learn's arpack rules: a whole count below
    min(n_samples, n_features), None meaning one less) and "randomized".
    transform(X) is (X - mean_) components_^T, divided by
    sqrt(explained_variance_) with whiten=True."""

    _model_name, _kind = "pca", 5
    _estimator_kind = "transformer"
    _IGNORED = {"copy": (True, "X is never modified: it is converted to float32 once"),
                "tol": (0.0, "it is ARPACK's stopping tolerance; svd_solver='arpack' here is the exact eigensolver "
                             "of the covariance (docs/linear.md), which has none")}

    def __init__(self, n_components=None, *, copy=True, whiten=False, svd_solver="auto", tol=0.0,
                 iterated_power="auto", n_oversamples=10, power_iteration_normalizer="auto", random_state=None,
                 device="cpu", numeric_mode=None):
        self.n_components = n_components
        self.copy = copy
        self.whiten = whiten
        self.svd_solver = svd_solver
        self.tol = tol
        self.iterated_power = iterated_power
        self.n_oversamples = n_oversamples
        self.power_iteration_normalizer = power_iteration_normalizer
        self.random_state = random_state
        self.device = device
        self.numeric_mode = numeric_mode

    def _own_params(self, n_classes):
        pairs = []
        nc = self.n_components
        if nc is not None:
            if isinstance(nc, bool):
                raise InvalidArgumentError("n_components=%r: a count, a fraction in (0, 1) or None" % (nc,))
            if isinstance(nc, str):
                pairs.append(("n_components", nc))  # 'mle' is refused by the C library by name
            elif isinstance(nc, float) or (hasattr(nc, "dtype") and getattr(nc.dtype, "kind", "") == "f"):
                pairs.append(("n_components", _text("n_components", nc, float)))
            else:
                pairs.append(("n_components", _text("n_components", nc, int)))
        pairs.append(("whiten", _bool_text("whiten", self.whiten)))
        pairs.append(("svd_solver", _text("svd_solver", self.svd_solver, str)))
        pairs.append(("iterated_power", _text("iterated_power", self.iterated_power, str)
                      if isinstance(self.iterated_power, str) else _text("iterated_power", self.iterated_power, int)))
        pairs.append(("n_oversamples", _text("n_oversamples", self.n_oversamples, int)))
        pairs.append(("power_iteration_normalizer", _text("power_iteration_normalizer",
                                                          self.power_iteration_normalizer, str)))
        if self.random_state is not None:
            pairs.append(("random_state", _text("random_state", self.random_state, int)))
        return pairs

    def _labels(self, y, nrows):
        if nrows < 2:
            raise InvalidInputError("PCA needs at least 2 samples; got n_samples = %d" % nrows)
        return None, None  # y is ignored

    def _fit_rows(self, n):
        self.n_samples_ = n

    def _check_converged(self, model):
        pass  # the eigensolver's sweeps are fixed; the C library refuses a failure itself

    def _set_attributes(self, model, classes):
        p = self.n_features_in_
        k = model.get_int("n_outputs")
        self.n_components_ = k
        self.components_ = _out(model.get_array("components"), (k, p))
        self.mean_ = _out(model.get_array("mean"), (p,))
        self.explained_variance_ = _out(model.get_array("explained_variance"), (k,))
        self.explained_variance_ratio_ = _out(model.get_array("explained_variance_ratio"), (k,))
        self.singular_values_ = _out(model.get_array("singular_values"), (k,))
        self.noise_variance_ = float(model.get_array("noise_variance").tolist()[0])

    def fit(self, X, y=None):
        """Fit the components on X (n, d); y is ignored. Returns self."""
        return super().fit(X)

    @with_n_jobs
    def transform(self, X):
        """(X - mean_) components_^T through the identical product (/ sqrt of the
        explained variance with whiten=True): a samebits.Array (n, n_components_)."""
        d = self._predict_data(X)
        return self._model.predict(d, PREDICT_TRANSFORM, self.n_components_, device=self._predict_device())

    def fit_transform(self, X, y=None):
        """fit(X) then transform(X) (the same bits as transform of the fitted model)."""
        return self.fit(X).transform(X)

    @with_n_jobs
    def inverse_transform(self, X):
        """Z back in the feature space: Z components_ through the identical product
        (samebits.linalg.matmul; with whiten=True each column of Z is first
        multiplied by sqrt(explained_variance_), rounded to float32), then + mean_
        (one float32 addition each). A samebits.Array (n, n_features_in_)."""
        from . import linalg
        self._check_fitted()
        z = _array.matrix(X, "X")
        k = self.n_components_
        if z.ncols != k:
            raise InvalidInputError("inverse_transform: X has %d columns, but %s has %d components"
                                    % (z.ncols, type(self).__name__, k))
        comps = self._model.get_array("components")
        mean = self._model.get_array("mean").tolist()
        p = self.n_features_in_
        np = _np()
        if np is not None:
            zz = np.ctypeslib.as_array(z.ptr, shape=(z.nrows, z.ncols)) if z.nrows else np.zeros((0, k), np.float32)
            zz = np.array(zz, dtype=np.float32)
            if self._model.get_int("whiten"):
                ev = np.asarray(self._model.get_array("explained_variance"))
                zz = zz * np.sqrt(ev).astype(np.float32)
            prod = np.asarray(linalg.matmul(zz, np.asarray(comps).reshape(k, p), device=self.device or "cpu"))
            res = _array.empty((z.nrows, p))
            np.asarray(res)[...] = prod + np.asarray(mean, dtype=np.float32)
            return res
        rows = [[z.ptr[i * k + j] for j in range(k)] for i in range(z.nrows)]
        if self._model.get_int("whiten"):
            ev = self._model.get_array("explained_variance").tolist()
            scale = _f32([math.sqrt(v) if v > 0 else 0.0 for v in ev])
            rows = [_f32([r[j] * scale[j] for j in range(k)]) for r in rows]
        comp_rows = [comps.tolist()[j * p:(j + 1) * p] for j in range(k)]
        prod = linalg.matmul(rows, comp_rows, device=self.device or "cpu")
        flat = memoryview(prod).cast("B").cast("f")
        res = _array.empty((z.nrows, p))
        out = memoryview(res).cast("B").cast("f")
        for i in range(z.nrows):
            for j in range(p):
                out[i * p + j] = flat[i * p + j] + mean[j]  # exact in double, rounded once to float32
        return res

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags
        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(preserves_dtype=["float32"]),
                    input_tags=InputTags(allow_nan=False))


def _f32(vals):
    """Each value rounded to float32 (as Python floats)."""
    a = _array.empty((len(vals),))
    mv = memoryview(a).cast("B").cast("f")
    for i, v in enumerate(vals):
        mv[i] = v
    return mv.tolist()


class TruncatedSVD(PCA):
    """Truncated SVD (scikit-learn's TruncatedSVD): the leading right singular
    vectors of X, not centered. algorithm="randomized" (the default): the
    randomized range finder with Philox projections (random_state None is seed
    0: the fit is deterministic, never seeded by the clock). algorithm="arpack":
    the exact leading eigenvectors of X^T X by the family's eigensolver (no
    ARPACK inside; the result ARPACK converges to, to float32 rounding), with
    scikit-learn's rule 1 <= n_components < min(n_samples, n_features).
    transform(X) is X components_^T; explained_variance_ is the variance of
    each projected column."""

    _model_name, _kind = "truncated_svd", 6
    _IGNORED = {"tol": (0.0, "it is ARPACK's stopping tolerance; algorithm='arpack' here is the exact eigensolver "
                             "of X^T X (docs/linear.md), which has none")}

    def __init__(self, n_components=2, *, algorithm="randomized", n_iter=5, n_oversamples=10,
                 power_iteration_normalizer="auto", random_state=None, tol=0.0, device="cpu", numeric_mode=None):
        self.n_components = n_components
        self.algorithm = algorithm
        self.n_iter = n_iter
        self.n_oversamples = n_oversamples
        self.power_iteration_normalizer = power_iteration_normalizer
        self.random_state = random_state
        self.tol = tol
        self.device = device
        self.numeric_mode = numeric_mode

    def _own_params(self, n_classes):
        pairs = [("n_components", _text("n_components", self.n_components, int)),
                 ("algorithm", _text("algorithm", self.algorithm, str)),
                 ("n_iter", _text("n_iter", self.n_iter, int)),
                 ("n_oversamples", _text("n_oversamples", self.n_oversamples, int)),
                 ("power_iteration_normalizer", _text("power_iteration_normalizer",
                                                      self.power_iteration_normalizer, str))]
        if self.random_state is not None:
            pairs.append(("random_state", _text("random_state", self.random_state, int)))
        return pairs

    def _labels(self, y, nrows):
        return None, None

    def _set_attributes(self, model, classes):
        p = self.n_features_in_
        k = model.get_int("n_outputs")
        self.components_ = _out(model.get_array("components"), (k, p))
        self.explained_variance_ = _out(model.get_array("explained_variance"), (k,))
        self.explained_variance_ratio_ = _out(model.get_array("explained_variance_ratio"), (k,))
        self.singular_values_ = _out(model.get_array("singular_values"), (k,))
        self.n_components_ = k

    def inverse_transform(self, X):
        """Z components_ through the identical product (no mean: nothing was centered)."""
        from . import linalg
        self._check_fitted()
        p, k = self.n_features_in_, self.n_components_
        comps = self._model.get_array("components")
        np = _np()
        if np is not None:
            return linalg.matmul(np.asarray(X, dtype=np.float32), np.asarray(comps).reshape(k, p),
                                 device=self.device or "cpu")
        return linalg.matmul(X, [comps.tolist()[j * p:(j + 1) * p] for j in range(k)], device=self.device or "cpu")


_BY_KIND = {0: LinearRegression, 1: Ridge, 2: Lasso, 3: ElasticNet, 4: LogisticRegression, 5: PCA, 6: TruncatedSVD}


def class_for_kind(kind):
    """The estimator class of a linear model of sb_model_get_int(m, "kind") kind."""
    cls = _BY_KIND.get(kind)
    if cls is None:
        raise InvalidInputError("the model file holds a linear model of kind %d, which no samebits Python "
                                "estimator holds" % (kind,))
    return cls
