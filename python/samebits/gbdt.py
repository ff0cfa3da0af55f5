"""Gradient-boosted trees: scikit-learn style estimators over sb_gbdt_fit.

Parameters are translated to the C keys of docs/gbdt.md (src/models/gbdt/
gbdt_params.c); every value is checked there, so an unknown or out-of-range
value raises the C library's named error. Numbers are passed as text: integers
in decimal, floats by repr() (the shortest decimal that round-trips the Python
float), which the C library reads with strtof, exactly as the CLI reads
`learning_rate=0.1` from its command line.
"""
import math
import operator
import os
import sys

from . import callback as _callback
from . import _array
from ._base import Estimator, FittedModel, accuracy, r2_score, warn_column_vector, with_n_jobs
from ._model import PREDICT_PROBA, PREDICT_RAW, PREDICT_VALUE, Card, Model, class_probabilities, dataset
from ._model import FAMILY_GBDT, PREDICT_CONTRIB, PREDICT_LEAF
from .errors import InvalidArgumentError, InvalidInputError

REGRESSION_LOSSES = ("squared_error", "regression", "l2", "reg:squarederror", "huber", "quantile", "poisson",
                     "gamma", "tweedie")
RANKING_LOSSES = ("lambdarank", "rank_pairwise", "rank:pairwise", "rank:ndcg", "pairwise")
CLASSIFICATION_LOSSES = ("log_loss", "binary", "multiclass", "binary:logistic", "multi:softmax",
                         "multi:softprob", "softmax")

# Python parameter -> (C key, type); None values are not passed (C default).
_KEYS = {
    "n_estimators": ("n_estimators", int),
    "learning_rate": ("learning_rate", float),
    "num_leaves": ("num_leaves", int),
    "max_leaf_nodes": ("num_leaves", int),
    "max_depth": ("max_depth", int),
    "growth": ("growth", str),
    "max_bin": ("max_bin", int),
    "min_samples_leaf": ("min_samples_leaf", int),
    "min_child_weight": ("min_child_weight", float),
    "reg_lambda": ("reg_lambda", float),
    "reg_alpha": ("reg_alpha", float),
    "alpha": ("alpha", float),
    "tweedie_variance_power": ("tweedie_variance_power", float),
    "min_split_gain": ("min_split_gain", float),
    "subsample": ("subsample", float),
    "colsample_bytree": ("colsample", float),
    "random_state": ("seed", int),
    "early_stopping_rounds": ("early_stopping_rounds", int),
    "eval_metric": ("metric", str),
    "base_score": ("base_score", float),
    "bin_sample_rows": ("bin_sample_rows", int),
    "verbose": ("eval_period", int),
    "numeric_mode": ("numeric_mode", str),
    "device": ("device", str),
    "scale_pos_weight": ("scale_pos_weight", float),
    "is_unbalance": ("is_unbalance", str),
    "monotone_constraints": ("monotone_constraints", "ints"),
    "interaction_constraints": ("interaction_constraints", "sets"),
    "colsample_bynode": ("colsample_bynode", float),
    "boosting_type": ("boosting", str),
    "drop_seed": ("drop_seed", int),
    "max_cat_to_onehot": ("max_cat_to_onehot", int),
    "max_cat_threshold": ("max_cat_threshold", int),
    "cat_smooth": ("cat_smooth", float),
    "cat_l2": ("cat_l2", float),
    "min_data_per_group": ("min_data_per_group", int),
    "distributed": ("distributed", str),
    "force_row_wise": ("force_row_wise", "bool"),
    "force_col_wise": ("force_col_wise", "bool"),
}
# DART's keys: given to the C library only with boosting_type="dart" (gbdt has none of them)
_DART_KEYS = {
    "drop_rate": ("drop_rate", float),
    "max_drop": ("max_drop", int),
    "skip_drop": ("skip_drop", float),
    "uniform_drop": ("uniform_drop", "bool"),
    "xgboost_dart_mode": ("xgboost_dart_mode", "bool"),
}


def _f32_value(text):
    """The Python float a model file's float32 parameter text stands for: the
    shortest decimal that rounds to the same float32 (the C fit stores
    float32(value) as %.9g, e.g. 0.1 as 0.100000001), so that a restored
    estimator shows the value it was given and a refit stores the same text."""
    import struct
    f = float(text)
    want = struct.pack("<f", f)
    for digits in range(1, 10):
        c = float("%.*g" % (digits, f))
        if struct.pack("<f", c) == want:
            return c
    return f


def _file_value(text, kind):
    """A parameter's stored text as the constructor's type (int, float32, str)."""
    if kind is int:
        return int(text)
    if kind is float:
        return _f32_value(text)
    if kind == "bool":
        return text == "true"
    if kind == "ints":
        return [int(v) for v in text.split(",")]
    if kind == "sets":
        return [[int(v) for v in g.strip("[]").split(",")] for g in text[1:-1].split("],[")]
    return text


# The gradient-boosting parameters a model file stores (its params text, written
# by the C fit): constructor name -> (C key, type, the text the constructor's
# None stands for, or None when None is not the default). loss, max_leaf_nodes
# (an alias of num_leaves), verbose, device, record_stages and n_jobs are not in
# the file; loss follows from the objective (estimator_class_for).
_FILE_KEYS = {
    "n_estimators": ("n_estimators", int, None),
    "learning_rate": ("learning_rate", float, None),
    "num_leaves": ("num_leaves", int, "31"),
    "max_depth": ("max_depth", int, "-1"),
    "growth": ("growth", str, None),
    "max_bin": ("max_bin", int, None),
    "min_samples_leaf": ("min_samples_leaf", int, None),
    "min_child_weight": ("min_child_weight", float, None),
    "reg_lambda": ("reg_lambda", float, None),
    "min_split_gain": ("min_split_gain", float, None),
    "subsample": ("subsample", float, None),
    "colsample_bytree": ("colsample", float, None),
    "random_state": ("seed", int, "0"),
    "early_stopping_rounds": ("early_stopping_rounds", int, "0"),
    "base_score": ("base_score", float, "auto"),
    "bin_sample_rows": ("bin_sample_rows", int, "200000"),
    "numeric_mode": ("numeric_mode", str, "identical"),
    "scale_pos_weight": ("scale_pos_weight", float, None),  # written only when not 1 (binary)
    "monotone_constraints": ("monotone_constraints", "ints", None),
    "interaction_constraints": ("interaction_constraints", "sets", None),
    "colsample_bynode": ("colsample_bynode", float, None),
    "boosting_type": ("boosting", str, None),
    "drop_rate": ("drop_rate", float, None),
    "max_drop": ("max_drop", int, None),
    "skip_drop": ("skip_drop", float, None),
    "uniform_drop": ("uniform_drop", "bool", None),
    "xgboost_dart_mode": ("xgboost_dart_mode", "bool", None),
    "drop_seed": ("drop_seed", int, None),
}
# The metric the C fit chooses when eval_metric is None, by objective.
_DEFAULT_METRIC = {"regression": "rmse", "binary": "logloss", "multiclass": "mlogloss", "lambdarank": "ndcg",
                   "rank_pairwise": "ndcg"}


def _int_list(name, value, what):
    """value (a sequence of integers) as the C library's comma list."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise InvalidArgumentError("parameter %s=%r must be %s" % (name, value, what))
    out = []
    for v in value:
        if isinstance(v, bool):
            raise InvalidArgumentError("parameter %s=%r must be %s" % (name, value, what))
        try:
            out.append(str(operator.index(v)))
        except TypeError:
            raise InvalidArgumentError("parameter %s=%r must be %s" % (name, value, what)) from None
    return ",".join(out)


def _text(name, value, kind):
    if kind == "ints":  # monotone_constraints: -1, 0 or 1 per feature
        return _int_list(name, value, "a list of -1, 0 and 1, one per feature")
    if kind == "sets":  # interaction_constraints: lists of feature indices
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise InvalidArgumentError("parameter %s=%r must be a list of lists of feature indices" % (name, value))
        return ",".join("[%s]" % _int_list(name, v, "a list of lists of feature indices") for v in value)
    if kind is int:
        if isinstance(value, bool) or isinstance(value, float):
            raise InvalidArgumentError("parameter %s=%r must be an integer" % (name, value))
        try:
            return str(operator.index(value))
        except TypeError:
            extra = (" (samebits keys its counter-based generator by an integer seed)"
                     if name == "random_state" else "")
            raise InvalidArgumentError("parameter %s=%r must be an integer%s" % (name, value, extra)) from None
    if kind is float:
        if isinstance(value, bool) or isinstance(value, str):
            raise InvalidArgumentError("parameter %s=%r must be a number" % (name, value))
        try:
            return repr(float(value))
        except (TypeError, ValueError):
            raise InvalidArgumentError("parameter %s=%r must be a number" % (name, value)) from None
    if not isinstance(value, str):
        raise InvalidArgumentError("parameter %s=%r must be a string" % (name, value))
    return value


def _named(method, name):
    """method (a bound method) under the public name a property hands it out by:
    scikit-learn's scorers go by the __name__ of the method they call (a
    predict_proba not named so is not reduced to its positive column)."""
    def call(*args, **kwargs):
        return method(*args, **kwargs)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = method.__doc__
    return call


def _is_numpy_array(x):
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, np.ndarray)


class GradientBoosting(FittedModel, Estimator):
    """Gradient-boosted decision trees (docs/gbdt.md, docs/python.md).

    loss: 'squared_error' (regression) or 'log_loss' (classification: binary or
    multiclass by the number of classes); the C names 'regression', 'binary' and
    'multiclass' are accepted too, and LightGBM's regression losses 'huber' and
    'quantile' (alpha), 'poisson', 'gamma', 'tweedie' (tweedie_variance_power).
    The estimator is a classifier exactly when its loss is a classification loss.

    distributed: None or "none" (one process), or "mpi": every rank of an MPI job (mpirun) calls fit with the same
    parameters and the same full X, y; rank k trains on its block of rows and every rank gets the single
    process's model bytes (docs/distributed.md). Any other value is InvalidArgumentError, before training.
    """

    def __init__(self, loss="squared_error", n_estimators=100, learning_rate=0.1, num_leaves=None,
                 max_leaf_nodes=None, max_depth=None, growth="leafwise", max_bin=255, min_samples_leaf=20,
                 min_child_weight=1e-3, reg_lambda=0.0, min_split_gain=0.0, subsample=1.0,
                 colsample_bytree=1.0, random_state=None, early_stopping_rounds=None, eval_metric=None,
                 base_score=None, bin_sample_rows=None, verbose=0, numeric_mode=None, device="cpu",
                 record_stages=False, n_jobs=None, importance_type="split", reg_alpha=0.0, alpha=None,
                 tweedie_variance_power=None, class_weight=None, scale_pos_weight=None, is_unbalance=None,
                 monotone_constraints=None, interaction_constraints=None, colsample_bynode=1.0,
                 boosting_type="gbdt", drop_rate=0.1, max_drop=50, skip_drop=0.5, uniform_drop=False,
                 xgboost_dart_mode=False, drop_seed=None,
                 max_cat_to_onehot=4, max_cat_threshold=32, cat_smooth=10.0, cat_l2=10.0, min_data_per_group=100,
                 distributed=None, force_row_wise=False, force_col_wise=False):
        self.loss = loss
        self.class_weight = class_weight  # classifiers: 'balanced' or {label: weight}, folded into the row weights
        self.scale_pos_weight = scale_pos_weight  # binary: the positive rows' weight factor (None: 1)
        self.is_unbalance = is_unbalance  # binary: the rarer class weighted by the count ratio (None: False)
        self.alpha = alpha  # huber's delta, quantile's level (LightGBM's alpha; None: 0.9)
        self.tweedie_variance_power = tweedie_variance_power  # tweedie: in (1, 2); None: 1.5
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.growth = growth
        self.max_bin = max_bin
        self.min_samples_leaf = min_samples_leaf
        self.min_child_weight = min_child_weight
        self.reg_lambda = reg_lambda
        self.reg_alpha = reg_alpha
        self.min_split_gain = min_split_gain
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.random_state = random_state
        self.early_stopping_rounds = early_stopping_rounds
        self.eval_metric = eval_metric
        self.base_score = base_score
        self.bin_sample_rows = bin_sample_rows
        self.verbose = verbose
        self.numeric_mode = numeric_mode
        self.device = device
        self.record_stages = record_stages
        self.n_jobs = n_jobs
        self.importance_type = importance_type
        self.monotone_constraints = monotone_constraints  # one of -1, 0, 1 per feature (LightGBM's, XGBoost's)
        self.interaction_constraints = interaction_constraints  # lists of feature indices
        self.colsample_bynode = colsample_bynode  # LightGBM's feature_fraction_bynode
        self.boosting_type = boosting_type  # "gbdt" or "dart" (LightGBM's LGBMModel names, and its DART keys)
        self.drop_rate = drop_rate
        self.max_drop = max_drop
        self.skip_drop = skip_drop
        self.uniform_drop = uniform_drop
        self.xgboost_dart_mode = xgboost_dart_mode
        self.drop_seed = drop_seed
        # the category search's parameters (fit's categorical_feature; LightGBM's names and defaults)
        self.max_cat_to_onehot = max_cat_to_onehot
        self.max_cat_threshold = max_cat_threshold
        self.cat_smooth = cat_smooth
        self.cat_l2 = cat_l2
        self.min_data_per_group = min_data_per_group
        # "mpi": data-parallel training over the ranks of an MPI job (docs/distributed.md); None: one process
        self.distributed = distributed
        # LightGBM's layout keys: the CPU histograms from row-major bins for scattered nodes, or never (speed
        # only: the model bytes are the same; refused with a device, and both together)
        self.force_row_wise = force_row_wise
        self.force_col_wise = force_col_wise

    # ---- kind ------------------------------------------------------------
    @property
    def _estimator_kind(self):
        return "classifier" if self.loss in CLASSIFICATION_LOSSES else "regressor"

    def _is_classifier(self):
        return self._estimator_kind == "classifier"

    # ---- parameters -------------------------------------------------------
    def _c_params(self, n_classes=None):
        """The (key, text) pairs given to the C library."""
        pairs = []
        loss = self.loss
        if not isinstance(loss, str):
            raise InvalidArgumentError("parameter loss=%r must be a string" % (loss,))
        if loss in CLASSIFICATION_LOSSES and loss not in ("binary", "multiclass", "binary:logistic",
                                                          "multi:softmax", "multi:softprob", "softmax"):
            loss = "binary" if n_classes == 2 else "multiclass"
        pairs.append(("objective", loss))
        if self.max_leaf_nodes is not None and self.num_leaves is not None \
                and self.num_leaves != self.max_leaf_nodes:
            raise InvalidArgumentError("num_leaves=%r and max_leaf_nodes=%r disagree; they are one parameter "
                                       "(give one of them)" % (self.num_leaves, self.max_leaf_nodes))
        for name, (key, kind) in _KEYS.items():
            value = getattr(self, name, None)
            if value is None:
                continue
            if name == "num_leaves" and self.max_leaf_nodes is not None:
                continue
            if name == "max_depth" and value == -1:
                continue
            if name in ("verbose",):
                value = int(value) if isinstance(value, bool) else value
            if name == "is_unbalance":
                if not isinstance(value, bool):
                    raise InvalidArgumentError("parameter is_unbalance=%r must be True or False" % (value,))
                value = "true" if value else "false"
            if kind == "bool":
                if not isinstance(value, bool):
                    raise InvalidArgumentError("parameter %s=%r must be True or False" % (name, value))
                if not value:
                    continue  # the C default
                pairs.append((key, "true"))
                continue
            pairs.append((key, _text(name, value, kind)))
        if self.boosting_type == "dart":
            for name, (key, kind) in _DART_KEYS.items():
                value = getattr(self, name)
                if kind == "bool":
                    if not isinstance(value, bool):
                        raise InvalidArgumentError("parameter %s=%r must be True or False" % (name, value))
                    pairs.append((key, "true" if value else "false"))
                else:
                    pairs.append((key, _text(name, value, kind)))
        return pairs

    # ---- labels ------------------------------------------------------------
    def _encode_labels(self, y):
        """(classes, label buffer) with labels mapped to 0..K-1 in sorted order. classes
        is a NumPy array when NumPy is loaded (sys.modules), else a list."""
        np = sys.modules.get("numpy")
        if np is not None:
            a = np.asarray(_array.values(y, "y") if not _array._is_numpy_like(y) else y)
            if a.ndim == 2 and a.shape[1] == 1:
                a = a.ravel()
            if a.ndim != 1:
                raise InvalidInputError("y must be 1-D; got shape %r" % (a.shape,))
            # one test for both (NaN differs from its truncation too), the message told apart after
            if a.dtype.kind == "f" and not bool((a == np.trunc(a)).all()):
                if bool(np.isnan(a).any()):
                    raise InvalidInputError("y holds NaN; every row needs a label")
                raise InvalidInputError("Unknown label type: continuous. A classifier needs class labels "
                                        "(integers, strings...), not continuous values")
            fast = self._encode_dense(np, a)
            if fast is not None:
                return fast
            try:
                classes, inverse = np.unique(a, return_inverse=True)
            except TypeError as e:
                raise InvalidInputError("y's labels cannot be ordered: %s" % e) from None
            return classes, _array.vector(inverse.reshape(-1), "y")
        vals = _array.values(y, "y")
        for i, v in enumerate(vals):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                raise InvalidInputError("y[%d] is %r; every row needs a label" % (i, v))
            if isinstance(v, float) and v != math.floor(v):
                raise InvalidInputError("Unknown label type: continuous (y[%d] is %r). A classifier needs "
                                        "class labels (integers, strings...), not continuous values" % (i, v))
        try:
            classes = sorted(set(vals))
        except TypeError as e:
            raise InvalidInputError("y's labels cannot be ordered: %s" % e) from None
        index = {c: i for i, c in enumerate(classes)}
        return classes, _array.vector([index[v] for v in vals], "y")

    @staticmethod
    def _encode_dense(np, a):
        """np.unique(a, return_inverse=True) for integer-valued numeric labels whose
        range is under 2^20, by counting instead of sorting: the same classes (in
        a's dtype) and indices, in a few passes (a sort of 10M labels took about a
        second, a large part of a GPU forest fit). None when it does not apply
        (other dtypes, a wide range, a negative zero whose class would print as
        +0)."""
        if a.dtype.kind not in "biuf" or a.size == 0:
            return None
        if a.dtype == np.float32 and bool((a.view(np.uint32) == 0x80000000).any()):
            return None  # a negative zero (its bits alone: one pass, no float temporaries)
        if a.dtype.kind == "f" and a.dtype != np.float32 and bool((np.signbit(a) & (a == 0)).any()):
            return None
        lo, hi = a.min(), a.max()
        if not (float(hi) - float(lo) < float(1 << 20)):  # also an infinity
            return None
        if float(hi) - float(lo) < 16.0:
            # a few integer values (binary labels above all): presence by comparison, and each row's
            # index as the count of classes above the first that it reaches (no integer copy, no sort)
            cands = [lo + a.dtype.type(k) for k in range(int(float(hi) - float(lo)) + 1)]
            classes = np.array([c for c in cands if c == lo or c == hi or bool((a == c).any())], dtype=a.dtype)
            idx = (a >= classes[1]).astype(np.float32) if len(classes) > 1 else np.zeros(a.shape, np.float32)
            for c in classes[2:]:
                idx += a >= c
            return classes, _array.vector(idx, "y")
        if a.dtype == np.float32 and max(abs(float(lo)), abs(float(hi))) < float(1 << 24):
            off = (a - lo).astype(np.int32)  # exact: integers below 2^24 in float32
        else:
            off = (a.astype(np.float64) - float(lo)).astype(np.int64) if a.dtype.kind == "f" else \
                (a.astype(np.int64) - int(lo))
        present = np.bincount(off, minlength=int(hi - lo) + 1) > 0
        classes = np.flatnonzero(present)
        classes = (classes.astype(np.float64) + float(lo)).astype(a.dtype) if a.dtype.kind == "f" else \
            (classes + int(lo)).astype(a.dtype)
        lut = (np.cumsum(present) - 1).astype(np.float32)  # class indices < 2^20: exact in float32
        return classes, _array.vector(lut[off], "y")

    def _label_index(self, y, what):
        """Labels of an eval set mapped through classes_ (an unknown label is an error)."""
        index = {(c.item() if hasattr(c, "item") else c): i for i, c in enumerate(self._pending_classes)}
        out = []
        for i, v in enumerate(_array.values(y, what)):
            key = v.item() if hasattr(v, "item") else v
            if key not in index:
                raise InvalidInputError("%s[%d] is %r, a label not seen in y" % (what, i, v))
            out.append(index[key])
        return _array.vector(out, what)

    # ---- fit ------------------------------------------------------------------
    @with_n_jobs
    def fit(self, X, y, sample_weight=None, eval_set=None, callbacks=None, init_model=None, eval_names=None,
            eval_sample_weight=None, init_score=None, categorical_feature="auto"):
        """Train on X (n, d) and y (n,); eval_set: one (X_val, y_val) pair or a list of
        them (LightGBM's several validation sets) for the metric log and early stopping,
        named by eval_names (default "valid_0", "valid_1", ...; the pair (X, y) itself,
        the very objects, is the training set, "training", which never stops the fit)
        and weighted by eval_sample_weight (a list, None or an array a set); callbacks:
        LightGBM's samebits.early_stopping, log_evaluation and record_evaluation
        (samebits.callback). With eval_set, evals_result_ ({"valid_0": {metric: [value
        per iteration]}, ...}), best_iteration_ (1-based; 0 without early stopping) and
        best_score_ are set, as LightGBM sets them; early stopping stops when any
        (set, metric) pair has not improved for early_stopping_rounds rounds.
        A classifier's class_weight ('balanced' or {label: weight}) multiplies each
        row's weight, as LightGBM's and scikit-learn's. init_model (LightGBM's continued training): a fitted
        gradient boosting estimator, a model file's path or its bytes; n_estimators more
        iterations are grown on top of its trees, and m then n iterations give the m + n
        iteration model's bytes (sb_gbdt_fit_continue). init_score (LightGBM's): each
        row's starting raw score, shape (n,) or (n, n_classes) for multiclass; the model
        holds the trees only (base score 0) and predict adds no initial score, as
        LightGBM's. categorical_feature (gradient boosting; LightGBM's): 'auto' (a
        DataFrame's pandas category and string columns) or a list of column names or
        positions; their strings are mapped to codes by the order of their UTF-8 bytes
        and the names kept in the model (docs/gbdt.md, "Categorical features"). On
        error nothing changes."""
        classify = self._is_classifier()
        if y is None:
            raise InvalidInputError("%s requires y to be passed, but the target y is None" % type(self).__name__)
        boosting = hasattr(self, "eval_metric")  # the forests share this fit; they have no metric log
        cat_feats, cat_tables = [], {}
        X_given = X  # eval_set's (X, y) is the training set when it is these very objects
        if boosting:
            X, cat_feats, cat_tables = _array.encode_categorical(X, categorical_feature, None, "X")
        elif not (isinstance(categorical_feature, str) and categorical_feature == "auto"):
            raise InvalidArgumentError("categorical_feature: a %s takes no categorical features (gradient boosting "
                                       "does)" % type(self).__name__)
        m = _array.matrix(X, "X")
        warn_column_vector(y)
        classes = None
        if classify:
            classes, label = self._encode_labels(y)
            if len(classes) < 2:
                raise InvalidInputError("a classifier needs at least two classes in y; got %d class" % len(classes))
        else:
            label = _array.vector(y, "y")
        if label[2] != m.nrows:
            raise InvalidInputError("X has %d rows but y has %d labels" % (m.nrows, label[2]))
        weight = _array.row_weights(sample_weight, m.nrows)
        if weight is not None and weight[2] and not any(weight[0][i] for i in range(weight[2])):
            raise InvalidInputError("sample_weight is all zero: nothing to learn from")
        pairs = self._c_params(len(classes) if classify else None)
        if cat_feats:
            pairs.append(("categorical_feature", ",".join(str(j) for j in cat_feats)))
        if boosting and classify and getattr(self, "class_weight", None) is not None:
            weight = self._class_weighted(label, weight, len(classes), classes)
        scores = None
        if init_score is not None:
            if not boosting:
                raise InvalidArgumentError("init_score: a %s takes none (gradient boosting starts from it)"
                                           % type(self).__name__)
            np_ = sys.modules.get("numpy")
            if np_ is not None and _array._is_numpy_like(init_score) and np_.asarray(init_score).ndim == 2:
                sm = _array.matrix(init_score, "init_score")
                scores = (sm, sm.ptr, sm.nrows * sm.ncols)
                if sm.nrows != m.nrows:
                    raise InvalidInputError("X has %d rows but init_score has %d" % (m.nrows, sm.nrows))
            else:
                scores = _array.vector(init_score, "init_score")
        init = None
        if init_model is not None:
            if not boosting:
                raise InvalidArgumentError("init_model: a %s is not continued (gradient boosting is)"
                                           % type(self).__name__)
            init = self._init_handle(init_model)
        if callbacks is not None and not boosting:
            raise InvalidArgumentError("callbacks: a %s takes none (its trees are not grown against validation "
                                       "rows)" % type(self).__name__)
        metric = getattr(self, "eval_metric", None)
        nmetrics = len([t for t in metric.split(",") if t]) if isinstance(metric, str) else 1
        es_rounds, period, records, stopper = _callback.resolve(callbacks, None, None, nmetrics)
        if es_rounds is not None:
            pairs = [kv for kv in pairs if kv[0] != "early_stopping_rounds"] + [("early_stopping_rounds", str(es_rounds))]
            if nmetrics > 1 and not stopper.first_metric_only:  # LightGBM's default: watch every metric
                pairs.append(("first_metric_only", "false"))
        if period is not None:
            pairs = [kv for kv in pairs if kv[0] != "eval_period"] + [("eval_period", str(period))]
        groups = getattr(self, "_pending_groups", (None, None))  # GradientBoostingRanker.fit
        train = dataset(m, label=label[1:], weight=weight[1:] if weight else None, group=groups[0],
                        init_score=scores[1:] if scores else None)
        valid = None
        if eval_set is not None:
            valid = self._eval_sets(eval_set, eval_names, eval_sample_weight, X_given, y, m, train, classify,
                                    classes, groups[1], boosting, cat_tables)
        elif eval_names is not None or eval_sample_weight is not None:
            raise InvalidArgumentError("eval_names and eval_sample_weight go with eval_set")
        card = Card() if self.record_stages else None
        if boosting:
            model = Model.fit_gbdt(pairs, train, valid, card, init=init, names=eval_names) if valid is not None \
                else Model.fit_gbdt(pairs, train, None, card, init=init)
        else:
            model = self._fit_model(pairs, train, valid[0] if valid else None, card)
        if classify:
            model.set_class_labels(classes)  # the file keeps classes_ (docs/model-format.md, "Class labels")
        if cat_tables:
            model.set_category_names(cat_tables)  # the file maps strings as this fit did
        # success: replace the fitted state all at once
        self._drop_fitted()
        self._card_text = card.text() if card is not None else None
        self._set_fitted(model, classes, m.names)
        if boosting:
            self._set_evals(model, records, stopper)
        return self

    def _eval_sets(self, eval_set, eval_names, eval_sample_weight, X, y, m, train, classify, classes, groups,
                   boosting, cat_tables=None):
        """The dataset handles of eval_set (a pair or a list of pairs), in order:
        the training handle itself for the pair (X, y) (the very objects, as
        LightGBM's), else a new dataset of the set's rows, labels (a classifier's
        mapped through classes), weights (eval_sample_weight[i]) and query sizes
        (groups: one sequence for one set, else one a set); names and weights
        checked against the set count by name."""
        sets = list(eval_set) if isinstance(eval_set, list) else [eval_set]
        if not sets or any(not isinstance(p, (tuple, list)) or len(p) != 2 for p in sets):
            raise InvalidArgumentError("eval_set must be an (X_val, y_val) pair or a list of such pairs")
        if not boosting and len(sets) > 1:
            raise InvalidArgumentError("%s takes no eval_set" % type(self).__name__)
        if eval_names is not None:
            if not isinstance(eval_names, (list, tuple)) or len(eval_names) != len(sets) or \
                    any(not isinstance(n, str) or not n for n in eval_names):
                raise InvalidArgumentError("eval_names must be a list of %d non-empty strings, one per eval_set pair"
                                           % len(sets))
        if eval_sample_weight is not None and (not isinstance(eval_sample_weight, (list, tuple))
                                               or len(eval_sample_weight) != len(sets)):
            raise InvalidArgumentError("eval_sample_weight must be a list of %d entries (an array or None), one per "
                                       "eval_set pair" % len(sets))
        if len(sets) > 1 and groups is not None and (not isinstance(groups, (list, tuple)) or len(groups) != len(sets)):
            raise InvalidInputError("eval_group must hold one query-size sequence per eval_set pair (%d)" % len(sets))
        out = []
        for i, (Xv, yv) in enumerate(sets):
            if Xv is X and yv is y:  # the training set itself (LightGBM's "training")
                out.append(train)
                continue
            what = "eval_set[%d]" % i if len(sets) > 1 else "eval_set"
            if cat_tables:
                Xv, _, _ = _array.encode_categorical(Xv, None, cat_tables, what + " X")
            mv = _array.matrix(Xv, what + " X")
            if classify:
                self._pending_classes = classes
                try:
                    lv = self._label_index(yv, what + " y")
                finally:
                    del self._pending_classes
            else:
                lv = _array.vector(yv, what + " y")
            if lv[2] != mv.nrows:
                raise InvalidInputError("%s X has %d rows but y has %d labels" % (what, mv.nrows, lv[2]))
            wv = None
            if eval_sample_weight is not None and eval_sample_weight[i] is not None:
                wv = _array.vector(eval_sample_weight[i], "eval_sample_weight[%d]" % i)
                if wv[2] != mv.nrows:
                    raise InvalidInputError("%s X has %d rows but eval_sample_weight[%d] has %d values"
                                            % (what, mv.nrows, i, wv[2]))
            if m.names is not None and mv.names is None:
                mv.names = m.names
            out.append(dataset(mv, label=lv[1:], weight=wv[1:] if wv else None,
                               group=groups if len(sets) == 1 else groups[i] if groups is not None else None))
        return out

    def _class_weighted(self, label, weight, n_classes, classes):
        """The rows' weights with class_weight folded in (classifiers; LightGBM's
        sklearn class_weight): 'balanced' gives class k the weight
        n_samples / (n_classes * count_k) (scikit-learn's compute_class_weight,
        float64, rounded once to float32), a dict {label: weight} its values (a
        class left out weighs 1); each row's weight is its sample_weight (1
        without) times its class's, one float32 multiplication. (ptr, n, array)
        as _array.vector returns it."""
        import struct
        cw = self.class_weight
        n = label[2]
        idx = [int(label[0][i]) for i in range(n)]
        if isinstance(cw, str):
            if cw != "balanced":
                raise InvalidArgumentError("class_weight=%r: 'balanced' or a dict {label: weight}" % (cw,))
            counts = [0] * n_classes
            for k in idx:
                counts[k] += 1
            per = [n / (n_classes * c) if c else 1.0 for c in counts]
        elif isinstance(cw, dict):
            per = []
            for c in classes:
                key = c.item() if hasattr(c, "item") else c
                per.append(float(cw.get(key, 1.0)))
            unknown = [k for k in cw if k not in [c.item() if hasattr(c, "item") else c for c in classes]]
            if unknown:
                raise InvalidArgumentError("class_weight: the labels %r are not in y" % (unknown,))
            if any(not (v >= 0.0) or v == float("inf") for v in per):
                raise InvalidArgumentError("class_weight: every weight must be finite and >= 0")
        else:
            raise InvalidArgumentError("class_weight=%r: 'balanced' or a dict {label: weight}" % (cw,))

        def f32(v):
            return struct.unpack("<f", struct.pack("<f", v))[0]
        per = [f32(v) for v in per]
        np = sys.modules.get("numpy")
        if np is not None:  # float32 products, each rounded once to nearest: the loop's bits, faster
            w = np.ones(n, np.float32) if not weight else np.ctypeslib.as_array(weight[1], (n,)).astype(np.float32)
            out = w * np.asarray(per, np.float32)[np.asarray(idx, np.int64)]
        else:
            out = [f32((f32(weight[0][i]) if weight else 1.0) * per[idx[i]]) for i in range(n)]
        if n and not any(out):
            raise InvalidInputError("sample_weight times class_weight is all zero: nothing to learn from")
        return _array.vector(out, "sample_weight")

    def _set_evals(self, model, records, stopper):
        """evals_result_, best_iteration_ and best_score_ from the fit's metric
        log (LightGBM's names and shapes; empty without validation rows), the
        record_evaluation dicts filled, early_stopping's verbose lines printed."""
        ev = model.evals()
        self.evals_result_, self.best_score_, self.best_iteration_ = {}, {}, 0
        if ev is not None:
            log, best = ev
            self.evals_result_ = log
            self.best_iteration_ = best
            self.best_score_ = {s: {k: (v[best - 1] if best else v[-1]) for k, v in d.items() if v}
                                for s, d in log.items()}
        for r in records:
            r.clear()
            r.update({k: {m: list(v) for m, v in d.items()} for k, d in self.evals_result_.items()})
        if stopper is not None and stopper.verbose and self.best_iteration_:
            scores = "\t".join("%s's %s: %g" % (s, k, v) for s, d in self.best_score_.items() for k, v in d.items())
            print("Early stopping, best iteration is:\n[%d]\t%s" % (self.best_iteration_, scores))

    def _fit_model(self, pairs, train, valid, card):
        return Model.fit_gbdt(pairs, train, valid, card)

    @staticmethod
    def _init_handle(init_model):
        """The model handle init_model names: a fitted samebits gradient boosting
        estimator's, or a model file's (path or bytes); anything else by name."""
        if isinstance(init_model, GradientBoosting):
            if getattr(init_model, "_model", None) is None:
                raise InvalidArgumentError("init_model: %s is not fitted" % type(init_model).__name__)
            return init_model._model
        if isinstance(init_model, (str, bytes, bytearray, memoryview, os.PathLike)):
            return _open_model(init_model)
        raise InvalidArgumentError("init_model: a fitted samebits gradient boosting estimator, a model file's path "
                                   "or its bytes, not %s" % type(init_model).__name__)

    def _set_fitted(self, model, classes, names):
        info = self._adopt_model(model, names)
        self._cat_tables = model.category_names(info["num_features"]) if info["family"] == FAMILY_GBDT else {}
        if self._is_classifier():
            if classes is None:
                classes = model.class_labels()  # what the file stores, else 0..K-1
            if classes is None:
                k = 2 if info["num_class"] == 1 else info["num_class"]
                np = sys.modules.get("numpy")
                classes = np.arange(k) if np is not None else list(range(k))
            self.classes_ = classes
            self.n_classes_ = len(classes)
        self.n_estimators_ = info["ntrees"] // max(info["num_class"], 1)
        self.objective_ = info["objective"]

    @property
    def feature_importances_(self):
        """Feature importances by importance_type, as LightGBM's scikit-learn API
        gives them: "split" (the default, LightGBM's), the number of splits on each
        feature; "gain", the total gain of those splits (sb_model_feature_importance:
        float32, summed in one fixed order). Not normalized, as LightGBM's. The
        forests keep scikit-learn's impurity importances (_Forest). Computed when
        read; unfitted: AttributeError, as for any fitted attribute."""
        if getattr(self, "_model", None) is None:
            raise AttributeError("feature_importances_: %s is not fitted" % type(self).__name__)
        return self._typed_importances(self._model, getattr(self, "importance_type", "split"), normalize=False)

    @staticmethod
    def _typed_importances(model, importance_type, normalize):
        """sb_model_feature_importance of importance_type ("split" or "gain",
        else InvalidArgumentError naming the two); normalize: divided by their
        math.fsum (all zeros stay zeros)."""
        kinds = {"split": 0, "gain": 1}
        if importance_type not in kinds:
            raise InvalidArgumentError("importance_type=%r: 'split' or 'gain'" % (importance_type,))
        v = model.feature_importance(kinds[importance_type])
        if not normalize:
            return v
        vals = v.tolist()
        total = math.fsum(vals)
        out = _array.empty((len(vals),))
        for i, g in enumerate(vals):
            out[i] = g / total if total > 0 else 0.0
        return out

    @staticmethod
    def _importances(model):
        gain = model.feature_importance(1).tolist()
        total = math.fsum(gain)
        out = _array.empty((len(gain),))
        for i, g in enumerate(gain):
            out[i] = g / total if total > 0 else 0.0
        return out

    # ---- prediction -------------------------------------------------------------
    @with_n_jobs
    def predict(self, X, raw_score=False, pred_leaf=False, pred_contrib=False):
        """Regression: the predicted values (samebits.Array). Classification: the
        original labels (a NumPy array when classes_ is one, i.e. NumPy was loaded at
        fit; else a list). As LightGBM's predict: raw_score=True, the raw margins
        (predict_raw); pred_leaf=True, each row's leaf in every tree (an int32
        IndexArray (n, ntrees), LightGBM's leaf numbers); pred_contrib=True, the
        TreeSHAP contributions (n, K * (F + 1)): per class the features' then the
        expected value (docs/explain.md). At most one of the three."""
        if raw_score or pred_leaf or pred_contrib:
            return self._predict_explained(X, raw_score, pred_leaf, pred_contrib)
        d = self._predict_data(X)
        out = self._model.predict(d, PREDICT_VALUE, 1, device=self._predict_device())
        return self._class_labels(out) if self._is_classifier() else out

    @property
    def predict_proba(self):
        """Class probabilities (classifiers only)."""
        if not self._is_classifier():
            raise AttributeError("predict_proba is only for classification losses")
        return _named(self._predict_proba, "predict_proba")

    @property
    def decision_function(self):
        """Raw margins (classifiers only; predict_raw works for every loss)."""
        if not self._is_classifier():
            raise AttributeError("decision_function is only for classification losses; use predict_raw")
        return _named(self._decision_function, "decision_function")

    def _decision_function(self, X):
        """predict_raw's margins; a numpy.ndarray (float32, a zero-copy view of the
        samebits.Array) when NumPy is loaded, as scikit-learn's checks require."""
        out = self.predict_raw(X)
        np = sys.modules.get("numpy")
        return np.asarray(out) if np is not None else out

    @with_n_jobs
    def _predict_proba(self, X):
        """Class probabilities, shape (n, K) (K = 2 for binary: column 0 is 1 - P(1),
        rounded to float32 as C's 1.0f - p)."""
        d = self._predict_data(X)  # refuses an unfitted estimator first
        return class_probabilities(self._model, d, self.n_classes_, self._predict_device())

    def _predict_explained(self, X, raw_score, pred_leaf, pred_contrib):
        """predict's LightGBM outputs (raw_score, pred_leaf, pred_contrib), one at a time."""
        if bool(raw_score) + bool(pred_leaf) + bool(pred_contrib) > 1:
            raise InvalidArgumentError("raw_score, pred_leaf and pred_contrib each choose predict's output: set one")
        if raw_score:
            return self.predict_raw(X)
        return self._explain(X, PREDICT_LEAF if pred_leaf else PREDICT_CONTRIB)

    @with_n_jobs
    def _explain(self, X, kind):
        """pred_leaf (an int32 IndexArray, n x ntrees) or pred_contrib (n x K(F + 1))."""
        d = self._predict_data(X)
        if kind == PREDICT_LEAF:
            return self._model.predict_leaf(d, device=self._predict_device())
        info = self._model.info()
        return self._model.predict(d, PREDICT_CONTRIB, info["num_class"] * (info["num_features"] + 1),
                                   device=self._predict_device())

    def dump_model(self, format="json"):
        """The fitted trees (sb_model_dump): a dict for format "json" (LightGBM's
        dump_model counterpart: nodes with split_feature, threshold, split_gain,
        count, leaf_index, leaf_value), the text for "text"."""
        if getattr(self, "_model", None) is None:
            raise AttributeError("dump_model: %s is not fitted" % type(self).__name__)
        text = self._model.dump(format)
        if format == "json":
            import json
            return json.loads(text)
        return text

    @with_n_jobs
    def predict_raw(self, X):
        """Raw margins: (n,) for regression and binary, (n, K) for multiclass."""
        d = self._predict_data(X)
        k = self._model.info()["num_class"]
        return self._model.predict(d, PREDICT_RAW, k, device=self._predict_device())

    def score(self, X, y, sample_weight=None):
        """R^2 for regression, accuracy for classification (sums by math.fsum)."""
        pred = self.predict(X)
        w = None if sample_weight is None else _array.values(sample_weight, "sample_weight")
        if self._is_classifier():
            return accuracy(_array.values(y, "y"), list(pred), w)
        return r2_score(_array.values(y, "y"), pred.tolist(), w)

    def card(self):
        """The identity card recorded during fit (record_stages=True), as a samebits.Card."""
        self._check_fitted()
        if not getattr(self, "_card_text", None):
            raise InvalidArgumentError("no card was recorded: fit with record_stages=True")
        return Card.parse(self._card_text)

    def load_model(self, path_or_bytes):
        """Load a model file (or its bytes) into this estimator; returns self. The file
        must be of this estimator's family and kind (a random forest classifier's file
        into a RandomForestClassifier...): another is InvalidInputError naming both.
        A classifier's classes_ are the labels the file stores (those it was
        trained with), or 0..K-1 for a file without labels. The constructor
        parameters the file stores replace this estimator's (get_params() then
        gives the trained model's; those it does not store, such as n_jobs and
        device, are left as they are).
        feature_names_in_ is set when the file stores names other than f0..f{n-1}."""
        model = _open_model(path_or_bytes)
        self._check_holds(model.info())
        self._load_fitted(model, path_or_bytes)
        return self

    def _params_from_file(self, stored, model):
        """{constructor parameter: value} from a model file's parameter text
        (stored, a dict of str): each parameter the file holds, as the
        constructor takes it (floats as the shortest decimal of their float32);
        a text that is what the constructor's None gives (num_leaves 31, seed 0,
        ...) restores None, so a default estimator's file gives back its
        defaults. Parameters the file does not hold keep their value."""
        out = {}
        for name, (key, kind, none_text) in _FILE_KEYS.items():
            if key not in stored:
                continue
            text = stored[key]
            default = self._param_defaults().get(name)
            if default is None and none_text is not None and text == none_text:
                out[name] = None
            else:
                out[name] = _file_value(text, kind) if kind is not str else text
        if stored.get("is_unbalance") == "true":  # written only when set (binary)
            out["is_unbalance"] = True
        if "metric" in stored:
            objective = model.info()["objective"]
            out["eval_metric"] = None if stored["metric"] == _DEFAULT_METRIC.get(objective) else stored["metric"]
        if stored.get("objective") == "rank_pairwise" and "loss" in self._param_defaults():
            out["loss"] = "rank_pairwise"
        return out

    def _load_fitted(self, model, source):
        from ._model import feature_names_in_file, params_in_file
        names = feature_names_in_file(source)
        # the constructor's parameters as the file stores them (get_params)
        for name, value in self._params_from_file(params_in_file(source), model).items():
            setattr(self, name, value)
        self._drop_fitted()
        self._card_text = None
        self._set_fitted(model, None, names)

    _family = 0  # sb_family of the files this estimator holds

    def _holds(self, info):
        """Whether a model of info's family and objective fits this estimator."""
        if info["family"] != self._family:
            return False
        objective = info["objective"]
        is_cls = objective in ("binary", "multiclass")
        return (objective in RANKING_LOSSES) == isinstance(self, GradientBoostingRanker) \
            and is_cls == self._is_classifier()

    def _check_holds(self, info):
        cls = estimator_class_for(info)
        if not self._holds(info):
            raise InvalidInputError(
                "the model file holds a %s model (family %s, objective %s); a %s cannot hold it: load it with "
                "samebits.load_model(...) or %s().load_model(...)"
                % (cls.__name__, family_name(info["family"]), info["objective"], type(self).__name__,
                   cls.__name__))

    # ---- pickle ------------------------------------------------------------------------
    def __setstate__(self, state):
        """FittedModel's (the model from its bytes), after the parameters an
        older pickle lacks are given their defaults."""
        state = dict(state)
        if "n_jobs" not in state:  # pickled before n_jobs existed
            state["n_jobs"] = None
            if state.get("max_features", "") is None and self._is_classifier() and hasattr(self, "_max_features_text"):
                state["max_features"] = "sqrt"  # what None meant then for a forest classifier (the C default)
        for name, default in self._param_defaults().items():  # parameters added since it was pickled
            state.setdefault(name, default)
        super().__setstate__(state)


class GradientBoostingRegressor(GradientBoosting):
    """Gradient-boosted trees for regression: loss 'squared_error', or LightGBM's 'huber' (delta alpha),
    'quantile' (level alpha), 'poisson', 'gamma', 'tweedie' (tweedie_variance_power; the last three
    predict exp(raw score), their log link).

    distributed: None or "none" (one process), or "mpi": every rank of an MPI job (mpirun) calls fit with the same
    parameters and the same full X, y; rank k trains on its block of rows and every rank gets the single
    process's model bytes (docs/distributed.md). Any other value is InvalidArgumentError, before training."""

    def __init__(self, loss="squared_error", n_estimators=100, learning_rate=0.1, num_leaves=None,
                 max_leaf_nodes=None, max_depth=None, growth="leafwise", max_bin=255, min_samples_leaf=20,
                 min_child_weight=1e-3, reg_lambda=0.0, min_split_gain=0.0, subsample=1.0,
                 colsample_bytree=1.0, random_state=None, early_stopping_rounds=None, eval_metric=None,
                 base_score=None, bin_sample_rows=None, verbose=0, numeric_mode=None, device="cpu",
                 record_stages=False, n_jobs=None, importance_type="split", reg_alpha=0.0,
                 alpha=None, tweedie_variance_power=None, monotone_constraints=None, interaction_constraints=None,
                 colsample_bynode=1.0, boosting_type="gbdt", drop_rate=0.1, max_drop=50, skip_drop=0.5,
                 uniform_drop=False, xgboost_dart_mode=False, drop_seed=None,
                 max_cat_to_onehot=4, max_cat_threshold=32, cat_smooth=10.0, cat_l2=10.0, min_data_per_group=100,
                 distributed=None, force_row_wise=False, force_col_wise=False):
        super().__init__(loss=loss, n_estimators=n_estimators, learning_rate=learning_rate,
                         num_leaves=num_leaves, max_leaf_nodes=max_leaf_nodes, max_depth=max_depth,
                         growth=growth, max_bin=max_bin, min_samples_leaf=min_samples_leaf,
                         min_child_weight=min_child_weight, reg_lambda=reg_lambda,
                         min_split_gain=min_split_gain, subsample=subsample, colsample_bytree=colsample_bytree,
                         random_state=random_state, early_stopping_rounds=early_stopping_rounds,
                         eval_metric=eval_metric, base_score=base_score, bin_sample_rows=bin_sample_rows,
                         verbose=verbose, numeric_mode=numeric_mode, device=device,
                         record_stages=record_stages, n_jobs=n_jobs, importance_type=importance_type,
                         reg_alpha=reg_alpha, alpha=alpha, tweedie_variance_power=tweedie_variance_power,
                         monotone_constraints=monotone_constraints,
                         interaction_constraints=interaction_constraints, colsample_bynode=colsample_bynode,
                         boosting_type=boosting_type, drop_rate=drop_rate, max_drop=max_drop,
                         skip_drop=skip_drop, uniform_drop=uniform_drop, xgboost_dart_mode=xgboost_dart_mode,
                         drop_seed=drop_seed, max_cat_to_onehot=max_cat_to_onehot,
                         max_cat_threshold=max_cat_threshold, cat_smooth=cat_smooth, cat_l2=cat_l2,
                         min_data_per_group=min_data_per_group, distributed=distributed,
                         force_row_wise=force_row_wise, force_col_wise=force_col_wise)

    _estimator_kind = "regressor"

    def _is_classifier(self):
        return False

    def _c_params(self, n_classes=None):
        if self.loss in CLASSIFICATION_LOSSES:
            raise InvalidArgumentError("loss=%r is a classification loss; use GradientBoostingClassifier"
                                       % (self.loss,))
        return super()._c_params(n_classes)


class GradientBoostingClassifier(GradientBoosting):
    """Gradient-boosted trees for classification (loss='log_loss': binary or multiclass).

    classes_ holds the sorted distinct labels of y; predict returns them.

    distributed: None or "none" (one process), or "mpi": every rank of an MPI job (mpirun) calls fit with the same
    parameters and the same full X, y; rank k trains on its block of rows and every rank gets the single
    process's model bytes (docs/distributed.md). Any other value is InvalidArgumentError, before training."""

    def __init__(self, loss="log_loss", n_estimators=100, learning_rate=0.1, num_leaves=None,
                 max_leaf_nodes=None, max_depth=None, growth="leafwise", max_bin=255, min_samples_leaf=20,
                 min_child_weight=1e-3, reg_lambda=0.0, min_split_gain=0.0, subsample=1.0,
                 colsample_bytree=1.0, random_state=None, early_stopping_rounds=None, eval_metric=None,
                 base_score=None, bin_sample_rows=None, verbose=0, numeric_mode=None, device="cpu",
                 record_stages=False, n_jobs=None, importance_type="split", reg_alpha=0.0, class_weight=None,
                 scale_pos_weight=None, is_unbalance=None, monotone_constraints=None, interaction_constraints=None,
                 colsample_bynode=1.0, boosting_type="gbdt", drop_rate=0.1, max_drop=50, skip_drop=0.5,
                 uniform_drop=False, xgboost_dart_mode=False, drop_seed=None,
                 max_cat_to_onehot=4, max_cat_threshold=32, cat_smooth=10.0, cat_l2=10.0, min_data_per_group=100,
                 distributed=None, force_row_wise=False, force_col_wise=False):
        super().__init__(loss=loss, n_estimators=n_estimators, learning_rate=learning_rate,
                         num_leaves=num_leaves, max_leaf_nodes=max_leaf_nodes, max_depth=max_depth,
                         growth=growth, max_bin=max_bin, min_samples_leaf=min_samples_leaf,
                         min_child_weight=min_child_weight, reg_lambda=reg_lambda,
                         min_split_gain=min_split_gain, subsample=subsample, colsample_bytree=colsample_bytree,
                         random_state=random_state, early_stopping_rounds=early_stopping_rounds,
                         eval_metric=eval_metric, base_score=base_score, bin_sample_rows=bin_sample_rows,
                         verbose=verbose, numeric_mode=numeric_mode, device=device,
                         record_stages=record_stages, n_jobs=n_jobs, importance_type=importance_type,
                         reg_alpha=reg_alpha, class_weight=class_weight, scale_pos_weight=scale_pos_weight,
                         is_unbalance=is_unbalance, monotone_constraints=monotone_constraints,
                         interaction_constraints=interaction_constraints, colsample_bynode=colsample_bynode,
                         boosting_type=boosting_type, drop_rate=drop_rate, max_drop=max_drop,
                         skip_drop=skip_drop, uniform_drop=uniform_drop, xgboost_dart_mode=xgboost_dart_mode,
                         drop_seed=drop_seed, max_cat_to_onehot=max_cat_to_onehot,
                         max_cat_threshold=max_cat_threshold, cat_smooth=cat_smooth, cat_l2=cat_l2,
                         min_data_per_group=min_data_per_group, distributed=distributed,
                         force_row_wise=force_row_wise, force_col_wise=force_col_wise)

    _estimator_kind = "classifier"

    def _is_classifier(self):
        return True

    def _c_params(self, n_classes=None):
        if self.loss not in CLASSIFICATION_LOSSES:
            raise InvalidArgumentError("loss=%r is not a classification loss; use 'log_loss'" % (self.loss,))
        return super()._c_params(n_classes)


class GradientBoostingRanker(GradientBoostingRegressor):
    """Gradient-boosted trees for learning to rank (docs/ranking.md), as LightGBM's
    LGBMRanker: loss 'lambdarank' (NDCG) or 'rank_pairwise'; fit takes the query
    sizes (group=, consecutive rows) and eval_group= for the eval set; predict
    returns scores. The ranking keys keep LightGBM's names.

    distributed: None or "none" (one process), or "mpi": every rank of an MPI job (mpirun) calls fit with the same
    parameters and the same full X, y; rank k trains on its block of rows and every rank gets the single
    process's model bytes (docs/distributed.md). Any other value is InvalidArgumentError, before training.
    Ranking: each rank trains on the rows of whole queries."""

    def __init__(self, loss="lambdarank", n_estimators=100, learning_rate=0.1, num_leaves=None,
                 max_leaf_nodes=None, max_depth=None, growth="leafwise", max_bin=255, min_samples_leaf=20,
                 min_child_weight=1e-3, reg_lambda=0.0, min_split_gain=0.0, subsample=1.0,
                 colsample_bytree=1.0, random_state=None, early_stopping_rounds=None, eval_metric=None,
                 base_score=None, bin_sample_rows=None, verbose=0, numeric_mode=None, device="cpu",
                 record_stages=False, lambdarank_truncation_level=None, lambdarank_norm=None, sigmoid=None,
                 label_gain=None, eval_at=None, n_jobs=None, importance_type="split", reg_alpha=0.0, monotone_constraints=None, interaction_constraints=None,
                 colsample_bynode=1.0, boosting_type="gbdt", drop_rate=0.1, max_drop=50, skip_drop=0.5,
                 uniform_drop=False, xgboost_dart_mode=False, drop_seed=None,
                 max_cat_to_onehot=4, max_cat_threshold=32, cat_smooth=10.0, cat_l2=10.0, min_data_per_group=100,
                 distributed=None, force_row_wise=False, force_col_wise=False):
        super().__init__(loss=loss, n_estimators=n_estimators, learning_rate=learning_rate,
                         num_leaves=num_leaves, max_leaf_nodes=max_leaf_nodes, max_depth=max_depth,
                         growth=growth, max_bin=max_bin, min_samples_leaf=min_samples_leaf,
                         min_child_weight=min_child_weight, reg_lambda=reg_lambda,
                         min_split_gain=min_split_gain, subsample=subsample, colsample_bytree=colsample_bytree,
                         random_state=random_state, early_stopping_rounds=early_stopping_rounds,
                         eval_metric=eval_metric, base_score=base_score, bin_sample_rows=bin_sample_rows,
                         verbose=verbose, numeric_mode=numeric_mode, device=device,
                         record_stages=record_stages, n_jobs=n_jobs, importance_type=importance_type,
                         reg_alpha=reg_alpha,
                         monotone_constraints=monotone_constraints,
                         interaction_constraints=interaction_constraints, colsample_bynode=colsample_bynode,
                         boosting_type=boosting_type, drop_rate=drop_rate, max_drop=max_drop,
                         skip_drop=skip_drop, uniform_drop=uniform_drop, xgboost_dart_mode=xgboost_dart_mode,
                         drop_seed=drop_seed, max_cat_to_onehot=max_cat_to_onehot,
                         max_cat_threshold=max_cat_threshold, cat_smooth=cat_smooth, cat_l2=cat_l2,
                         min_data_per_group=min_data_per_group, distributed=distributed,
                         force_row_wise=force_row_wise, force_col_wise=force_col_wise)
        self.lambdarank_truncation_level = lambdarank_truncation_level
        self.lambdarank_norm = lambdarank_norm
        self.sigmoid = sigmoid
        self.label_gain = label_gain
        self.eval_at = eval_at

    def _c_params(self, n_classes=None):
        if self.loss not in RANKING_LOSSES:
            raise InvalidArgumentError("loss=%r is not a ranking loss; use 'lambdarank' or 'rank_pairwise'"
                                       % (self.loss,))
        pairs = GradientBoosting._c_params(self, n_classes)
        if self.lambdarank_truncation_level is not None:
            pairs.append(("lambdarank_truncation_level",
                          _text("lambdarank_truncation_level", self.lambdarank_truncation_level, int)))
        if self.lambdarank_norm is not None:
            pairs.append(("lambdarank_norm", "true" if self.lambdarank_norm else "false"))
        if self.sigmoid is not None:
            pairs.append(("sigmoid", _text("sigmoid", self.sigmoid, float)))
        if self.label_gain is not None:
            pairs.append(("label_gain", ",".join(_text("label_gain", v, float) for v in self.label_gain)))
        if self.eval_at is not None:
            pairs.append(("eval_at", _text("eval_at", self.eval_at, int)))
        return pairs

    def fit(self, X, y, group=None, sample_weight=None, eval_set=None, eval_group=None, eval_names=None):
        """Train on X, relevance labels y (integers 0..30 with the default label_gain)
        and group, the sizes of the consecutive queries (they add up to len(y));
        eval_set: a pair or a list of pairs, eval_group their query sizes (one
        sequence a set, in a list with several sets), eval_names their names."""
        if group is None:
            raise InvalidInputError("GradientBoostingRanker.fit needs group= (the query sizes)")
        if eval_set is not None and eval_group is None:
            raise InvalidInputError("eval_set needs eval_group= (its query sizes)")
        if isinstance(eval_group, list) and len(eval_group) == 1 and not isinstance(eval_group[0], (int, float)):
            eval_group = eval_group[0]
        self._pending_groups = (group, eval_group)
        try:
            return super().fit(X, y, sample_weight=sample_weight, eval_set=eval_set, eval_names=eval_names)
        finally:
            del self._pending_groups


FAMILY_NAMES = ("gbdt", "random_forest", "extra_trees", "isolation_forest", "kmeans", "linear", "knn", "dbscan", "agglomerative",
                "spectral", "kde", "ets", "arima", "svm", "gaussian_process", "umap")


def family_name(family):
    """sb_family_name: the family's name in the model file's numbering."""
    return FAMILY_NAMES[family] if 0 <= family < len(FAMILY_NAMES) else "unknown (%d)" % family


def estimator_class_for(info):
    """The estimator class that trains models of info's family and objective (a
    family no Python estimator holds is InvalidInputError naming it)."""
    from . import forest
    family, objective = info["family"], info["objective"]
    if family == 0:
        if objective in ("binary", "multiclass"):
            return GradientBoostingClassifier
        return GradientBoostingRanker if objective in RANKING_LOSSES else GradientBoostingRegressor
    if family in (1, 2):
        cls = objective == "classification"
        if family == 1:
            return forest.RandomForestClassifier if cls else forest.RandomForestRegressor
        return forest.ExtraTreesClassifier if cls else forest.ExtraTreesRegressor
    if family == 3:
        return forest.IsolationForest
    if family == 4:
        from . import cluster
        return cluster.KMeans
    if family == 5:  # linear: the estimator by the model's kind (samebits.linear)
        from . import linear
        return linear.class_for_kind(info.get("linear_kind"))
    if family == 6:  # knn: the estimator by the model's task (samebits.neighbors)
        from . import neighbors
        return neighbors.class_for_task(info.get("knn_task"))
    if family == 7:
        from . import cluster
        return cluster.DBSCAN
    if family == 8:
        from . import cluster
        return cluster.AgglomerativeClustering
    if family == 9:
        from . import cluster
        return cluster.SpectralClustering
    if family == 10:
        from . import density
        return density.KernelDensity
    if family == 11:
        from . import timeseries
        return timeseries.ExponentialSmoothing
    if family == 12:
        from . import arima
        return arima.ARIMA
    if family == 13:  # svm: SVC or SVR by the model's kind (samebits.svm)
        from . import svm
        return svm.SVR if info.get("svm_kind") == 1 else svm.SVC
    if family == 15:
        from . import manifold
        return manifold.UMAP
    raise InvalidInputError("the model file holds a model of family %s, which no samebits Python estimator holds"
                            % family_name(family))


def _open_model(path_or_bytes):
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return Model.from_bytes(path_or_bytes)
    return Model.load(path_or_bytes)


def load_model(path_or_bytes):
    """Load a model file (or bytes) into a new estimator of the class that trained it:
    GradientBoostingRegressor / Classifier / Ranker, RandomForestClassifier /
    Regressor, ExtraTreesClassifier / Regressor, IsolationForest, a linear
    estimator (LinearRegression, Ridge, Lasso, ElasticNet, LogisticRegression,
    PCA), KMeans, NearestNeighbors / KNeighborsClassifier /
    KNeighborsRegressor (by the knn model's task), or UMAP, by the file's family and
    objective (sb_model_get_info), linear kind or knn task. A gradient-boosting
    or forest estimator's constructor parameters are those the file stores (the
    class's defaults for the rest); the other families' are the class's defaults
    (a knn estimator's n_neighbors, radius, weights and metric are the file's);
    its fitted attributes are the file's (a classifier's classes_: the labels
    the file stores, else 0..K-1)."""
    model = _open_model(path_or_bytes)
    est = estimator_class_for(model.info())()
    est._load_fitted(model, path_or_bytes)
    return est
