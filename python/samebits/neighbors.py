"""Nearest neighbors (docs/neighbors.md): scikit-learn's NearestNeighbors,
KNeighborsClassifier and KNeighborsRegressor over sb_knn_fit,
sb_model_kneighbors and sb_model_radius_neighbors: exact brute-force
neighbors ordered by (distance, index), the same bits on every machine and
thread count.

Parameters are passed to the C library as text (floats by repr(), as the other
estimators do), which checks each and refuses an unknown or unbuilt option by
name (InvalidArgumentError): metric is minkowski with p=2 or p=1, euclidean
(l2), manhattan (l1, cityblock) or cosine; every other metric and p is
refused, and so is metric_params other than None and a callable weights. algorithm="ball_tree" or "kd_tree" finds the
same exact neighbors (computed by brute force here) and gives a warning that
says so; leaf_size other than 30 gives a warning that it has no effect. n_jobs
is the thread count (it never changes a bit of a result).

The fitted state is the model's: n_neighbors, radius, weights and metric are
read when fit runs, and kneighbors(n_neighbors=None), radius_neighbors(
radius=None) and predict use the fitted values (set_params after fit changes
nothing until the next fit). Distances are the library's float32 values
widened exactly to float64, indices int64, as scikit-learn returns them; the
neighbors of X=None are the training rows' own, each without itself.

A classifier encodes its labels (any sortable type) as class indices 0..K-1
in sorted order (classes_) and predicts the original labels. A model file
holds only the indices: a classifier loaded from a file has classes_ 0..K-1.
A pickle keeps classes_ (it is the estimator's state beside the model bytes).
"""
import math
import sys
import warnings

from . import _array
from ._base import Estimator, FittedModel, accuracy, r2_score, warn_column_vector, with_n_jobs
from ._model import PREDICT_PROBA, PREDICT_VALUE, Model, dataset
from .errors import InvalidArgumentError, InvalidInputError
from .gbdt import GradientBoosting, _text

__all__ = ["NearestNeighbors", "KNeighborsClassifier", "KNeighborsRegressor"]

FAMILY_KNN = 6
TASKS = ("neighbors", "classification", "regression")  # sb_model_get_int(m, "task")
METRICS = ("euclidean", "cosine", "manhattan")  # sb_model_get_int(m, "metric")
WEIGHTS = ("uniform", "distance")  # sb_model_get_int(m, "weights")


def _np():
    return sys.modules.get("numpy")


def _check_1d_target(y, who):
    """Refuse a multi-output y ((n, m) with m > 1) by name; (n, 1) warns as
    scikit-learn does (DataConversionWarning) and is used as (n,)."""
    if y is None:
        raise InvalidInputError("%s requires y to be passed, but the target y is None" % who)
    shape = None
    if _array._is_numpy_like(y):
        shape = tuple(_np().asarray(y).shape)
    elif _array._has_buffer(y):
        shape = tuple(memoryview(y).shape)
    elif isinstance(y, (list, tuple)) and y and isinstance(y[0], (list, tuple)):
        shape = (len(y), len(y[0]))
    if shape is not None and len(shape) == 2 and shape[1] != 1:
        raise InvalidInputError("%s takes one target: multi-output y (shape %r) is not supported; fit one "
                                "estimator per output" % (who, shape))
    if shape is not None and len(shape) > 2:
        raise InvalidInputError("%s: y must be 1-D; got shape %r" % (who, shape))
    if _array._is_numpy_like(y) and _np().asarray(y).dtype.kind == "c":
        raise InvalidInputError("%s: y: Complex data not supported" % who)
    warn_column_vector(y)


class _Neighbors(FittedModel, Estimator):
    """What the three estimators share: parameters, fit, the neighbor queries,
    the graphs and the model file."""

    _family = FAMILY_KNN
    _task = "neighbors"

    # ---- parameters -------------------------------------------------------------
    def _c_params(self):
        name = type(self).__name__
        if self.metric_params is not None and self.metric_params != {}:
            raise InvalidArgumentError("%s: metric_params=%r is not supported (the metrics built, euclidean, "
                                       "manhattan and cosine, take no parameters)" % (name, self.metric_params))
        if callable(self.metric):
            raise InvalidArgumentError("%s: metric as a callable is not supported: euclidean, manhattan "
                                       "(minkowski with p=2 or p=1) or cosine" % name)
        weights = getattr(self, "weights", "uniform")
        if callable(weights):
            raise InvalidArgumentError("%s: weights as a callable is not supported: 'uniform' or 'distance'" % name)
        if self.algorithm in ("ball_tree", "kd_tree"):
            warnings.warn("%s: algorithm=%r finds the same exact neighbors; samebits computes them by brute force"
                          % (name, self.algorithm), UserWarning, stacklevel=4)
        if isinstance(self.leaf_size, bool) or self.leaf_size != 30:
            warnings.warn("%s: parameter leaf_size=%r has no effect in samebits (it tunes scikit-learn's ball and "
                          "kd trees; the neighbors are computed by brute force)" % (name, self.leaf_size),
                          UserWarning, stacklevel=4)
        pairs = [("model", "knn"), ("task", self._task),
                 ("n_neighbors", _text("n_neighbors", self.n_neighbors, int)),
                 ("radius", _text("radius", self.radius, float)),
                 ("algorithm", _text("algorithm", self.algorithm, str)),
                 ("leaf_size", _text("leaf_size", self.leaf_size, int)),
                 ("metric", _text("metric", self.metric, str))]
        if self.p is not None:
            p = self.p
            if isinstance(p, float) and not isinstance(p, bool) and math.isfinite(p) and p == int(p):
                p = int(p)  # scikit-learn's p is a real number: 2.0 is p=2
            if isinstance(p, float):
                raise InvalidArgumentError("p=%r: minkowski is supported with p=1 (manhattan) or p=2 (euclidean)"
                                           % (p,))
            pairs.append(("p", _text("p", p, int)))
        if self._task != "neighbors":
            pairs.append(("weights", _text("weights", weights, str)))
        if self.numeric_mode is not None:
            pairs.append(("numeric_mode", _text("numeric_mode", self.numeric_mode, str)))
        if self.device is not None:
            pairs.append(("device", _text("device", self.device, str)))
        return pairs

    # ---- fit ----------------------------------------------------------------------
    def _fit(self, X, label=None):
        from ._lib import lib
        m = _array.matrix(X, "X")
        pairs = self._c_params()
        if label is not None and label[2] != m.nrows:
            raise InvalidInputError("Found input variables with inconsistent numbers of samples: X has %d rows "
                                    "but y has %d values" % (m.nrows, label[2]))
        k = int(self.n_neighbors)
        if self._task != "neighbors" and k > m.nrows:  # the C fit refuses it too; scikit-learn's words
            raise InvalidArgumentError("Expected n_neighbors <= n_samples_fit, but n_neighbors = %d, n_samples_fit "
                                       "= %d, n_samples = %d: a %s needs at least n_neighbors training rows"
                                       % (k, m.nrows, m.nrows, type(self).__name__))
        train = dataset(m, label=label[1:] if label is not None else None, view=True)
        model = Model._fit(lib.sb_knn_fit, pairs, train)
        self._drop_fitted()
        self._set_fitted(model, m.names)
        return model

    def _set_fitted(self, model, names):
        info = self._adopt_model(model, names)
        self.n_samples_fit_ = int(model.get_int("n_samples_fit"))
        self.effective_metric_ = METRICS[model.get_int("metric")]
        self.effective_metric_params_ = {}

    # ---- neighbor queries -----------------------------------------------------------
    def _queries(self, X):
        """The sb_dataset of X (checked against the fit), or None for X=None."""
        if X is None:
            self._check_fitted()
            return None
        return self._predict_data(X)

    @staticmethod
    def _count(n_neighbors):
        if n_neighbors is None:
            return 0  # the model's
        if isinstance(n_neighbors, (bool, float)):
            raise InvalidArgumentError("n_neighbors does not take %s value, enter integer value"
                                       % type(n_neighbors).__name__)
        k = int(_text("n_neighbors", n_neighbors, int))
        if k <= 0:
            raise InvalidArgumentError("Expected n_neighbors > 0. Got %d" % k)
        if k > 2 ** 31 - 1:
            raise InvalidArgumentError("n_neighbors=%d exceeds the limit 100000" % k)
        return k

    @with_n_jobs
    def kneighbors(self, X=None, n_neighbors=None, return_distance=True):
        """The n_neighbors nearest training rows of each row of X (None: of each
        training row, without itself), by (distance, index): (dist, ind) of shape
        (n_queries, n_neighbors), float64 and int64 NumPy arrays (nested lists
        without NumPy), or ind alone when return_distance is False. n_neighbors
        None: the fitted one."""
        d = self._queries(X)
        off, idx, dist = self._model.neighbors(d, k=self._count(n_neighbors), device=self._predict_device())
        nq = len(off) - 1
        k = (off[nq] // nq) if nq else 0
        np = _np()
        if np is not None:
            ind = np.ctypeslib.as_array(idx)[: nq * k].reshape(nq, k).copy()
            if not return_distance:
                return ind
            dd = np.ctypeslib.as_array(dist)[: nq * k].astype(np.float64).reshape(nq, k)
            return dd, ind
        ind = [list(idx[i * k:(i + 1) * k]) for i in range(nq)]
        if not return_distance:
            return ind
        return [[float(v) for v in dist[i * k:(i + 1) * k]] for i in range(nq)], ind

    @with_n_jobs
    def radius_neighbors(self, X=None, radius=None, return_distance=True, sort_results=False):
        """Every training row within radius (distance <= radius; None: the fitted
        radius) of each row of X (None: of each training row, without itself), in
        index order, or by (distance, index) with sort_results: (dist, ind), NumPy
        arrays of dtype object holding one float64 and one int64 array a query
        (lists of lists without NumPy), or ind alone when return_distance is False."""
        if sort_results and not return_distance:
            raise InvalidArgumentError("return_distance must be True if sort_results is True.")
        d = self._queries(X)
        r = self._radius(radius)
        off, idx, dist = self._model.neighbors(d, radius=r, sort=sort_results, device=self._predict_device())
        nq = len(off) - 1
        np = _np()
        if np is not None:
            all_idx = np.ctypeslib.as_array(idx)
            all_dist = np.ctypeslib.as_array(dist)
            ind = np.empty(nq, dtype=object)
            dd = np.empty(nq, dtype=object)
            for i in range(nq):
                a, b = off[i], off[i + 1]
                ind[i] = all_idx[a:b].copy()
                dd[i] = all_dist[a:b].astype(np.float64)
            return (dd, ind) if return_distance else ind
        ind = [list(idx[off[i]:off[i + 1]]) for i in range(nq)]
        if not return_distance:
            return ind
        return [[float(v) for v in dist[off[i]:off[i + 1]]] for i in range(nq)], ind

    @staticmethod
    def _radius(radius):
        if radius is None:
            return -1.0  # the model's
        if isinstance(radius, (bool, str)):
            raise InvalidArgumentError("radius=%r must be a number" % (radius,))
        try:
            r = float(radius)
        except (TypeError, ValueError):
            raise InvalidArgumentError("radius=%r must be a number" % (radius,)) from None
        if not (r >= 0.0) or math.isinf(r):
            raise InvalidArgumentError("radius=%r must be finite and >= 0" % (radius,))
        return r

    # ---- graphs ----------------------------------------------------------------------
    @staticmethod
    def _graph_mode(mode):
        if mode not in ("connectivity", "distance"):
            raise InvalidArgumentError('Unsupported mode, must be one of "connectivity", or "distance" but got '
                                       '"%s" instead' % (mode,))

    def _csr(self, found, mode, what):
        """found, the (offsets, indices, distances) of Model.neighbors, as a
        scipy.sparse.csr_matrix (n_queries, n_samples_fit) of float64."""
        try:
            import numpy as np
            from scipy.sparse import csr_matrix
        except ImportError:
            raise ImportError("%s returns a scipy.sparse.csr_matrix: install scipy (and NumPy), or use %s"
                              % (what, what.replace("_graph", ""))) from None
        off, idx, dist = found
        indptr = np.ctypeslib.as_array(off).copy()
        nq, total = len(indptr) - 1, int(indptr[-1])
        indices = np.ctypeslib.as_array(idx)[:total].copy()
        data = np.ones(total) if mode == "connectivity" else np.ctypeslib.as_array(dist)[:total].astype(np.float64)
        return csr_matrix((data, indices, indptr), shape=(nq, self.n_samples_fit_))

    @with_n_jobs
    def kneighbors_graph(self, X=None, n_neighbors=None, mode="connectivity"):
        """The k-neighbors graph as a scipy.sparse.csr_matrix (n_queries,
        n_samples_fit): 1 (connectivity) or the distance (distance) at each
        query's neighbors, in (distance, index) order within a row."""
        self._graph_mode(mode)
        d = self._queries(X)
        found = self._model.neighbors(d, k=self._count(n_neighbors), device=self._predict_device())
        return self._csr(found, mode, "kneighbors_graph")

    @with_n_jobs
    def radius_neighbors_graph(self, X=None, radius=None, mode="connectivity", sort_results=False):
        """The radius-neighbors graph as a scipy.sparse.csr_matrix (n_queries,
        n_samples_fit): 1 (connectivity) or the distance (distance) at every
        training row within radius of each query."""
        self._graph_mode(mode)
        d = self._queries(X)
        found = self._model.neighbors(d, radius=self._radius(radius), sort=sort_results,
                                      device=self._predict_device())
        return self._csr(found, mode, "radius_neighbors_graph")

    # ---- model file -------------------------------------------------------------------
    def load_model(self, path_or_bytes):
        """Load a nearest-neighbors model file (or its bytes) of this estimator's
        task; returns self. Another family's or task's file is InvalidInputError
        naming both. A classifier's classes_ are 0..K-1 (labels are not in the
        file); n_neighbors, radius, weights and metric become the file's."""
        model, info = self._open_own_model(path_or_bytes, FAMILY_KNN)
        task = TASKS[info["knn_task"]] if 0 <= info["knn_task"] < len(TASKS) else str(info["knn_task"])
        if task != self._task:
            raise InvalidInputError("the model file holds a knn %s model (%s); a %s cannot hold it: load it with "
                                    "samebits.load_model(...)" % (task, class_for_task(info["knn_task"]).__name__,
                                                                  type(self).__name__))
        self._load_fitted(model, path_or_bytes)
        return self

    def _load_fitted(self, model, source):
        names, params = self._file_names_params(source)
        # the constructor parameters the file was fitted with (what its queries use)
        self.n_neighbors = int(model.get_int("n_neighbors"))
        if "radius" in params:
            self.radius = float(params["radius"])
        metric = METRICS[model.get_int("metric")]
        if metric == "cosine":
            self.metric = "cosine"
        elif metric == "manhattan":
            if self.metric not in ("manhattan", "l1", "cityblock") and not (self.metric == "minkowski"
                                                                           and self.p == 1):
                self.metric = "manhattan"
        else:
            if self.metric not in ("minkowski", "euclidean", "l2"):
                self.metric = "minkowski"
            if self.p not in (2, None):
                self.p = 2
        if self._task != "neighbors":
            self.weights = WEIGHTS[model.get_int("weights")]
        self._set_fitted(model, names)

    # ---- scikit-learn tags ---------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class NearestNeighbors(_Neighbors):
    """Unsupervised nearest neighbors (scikit-learn's NearestNeighbors):
    kneighbors, radius_neighbors and their graphs over the fitted rows."""

    _estimator_kind = None
    _task = "neighbors"

    def __init__(self, *, n_neighbors=5, radius=1.0, algorithm="auto", leaf_size=30, metric="minkowski", p=2,
                 metric_params=None, n_jobs=None, device="cpu", numeric_mode=None):
        self.n_neighbors = n_neighbors
        self.radius = radius
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.metric = metric
        self.p = p
        self.metric_params = metric_params
        self.n_jobs = n_jobs
        self.device = device
        self.numeric_mode = numeric_mode

    @with_n_jobs
    def fit(self, X, y=None):
        """Keep the rows of X (n, d), finite values; y is ignored. On error
        nothing changes."""
        self._fit(X)
        return self

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags
        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    input_tags=InputTags(allow_nan=False))


class KNeighborsClassifier(_Neighbors):
    """Classification by a vote of the k nearest neighbors (scikit-learn's
    KNeighborsClassifier): uniform votes, or weighted by 1 / distance (a query
    at distance 0 of some training rows: those weigh 1, the others 0); the most
    weight wins, ties to the lower class."""

    _estimator_kind = "classifier"
    _task = "classification"
    _encode_labels = GradientBoosting._encode_labels
    _encode_dense = GradientBoosting.__dict__["_encode_dense"]

    def __init__(self, n_neighbors=5, *, weights="uniform", algorithm="auto", leaf_size=30, p=2,
                 metric="minkowski", metric_params=None, n_jobs=None, radius=1.0, device="cpu", numeric_mode=None):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.p = p
        self.metric = metric
        self.metric_params = metric_params
        self.n_jobs = n_jobs
        self.radius = radius
        self.device = device
        self.numeric_mode = numeric_mode

    @with_n_jobs
    def fit(self, X, y):
        """Keep the rows of X (n, d) and the labels y (n,) of any sortable type
        (at most 10000 classes). n_neighbors above the row count is refused by
        name. On error nothing changes."""
        _check_1d_target(y, type(self).__name__)
        classes, label = self._encode_labels(y)
        if any(isinstance(c, float) and math.isinf(c) for c in (classes.tolist() if hasattr(classes, "tolist")
                                                                   else classes)):
            raise InvalidInputError("Input y contains infinity: a class label must be finite")
        if len(classes) > 10000:
            raise InvalidInputError("y has %d classes; nearest neighbors take at most 10000" % len(classes))
        self._fit(X, label)
        self.classes_ = classes
        self.outputs_2d_ = False
        return self

    def _set_fitted(self, model, names):
        super()._set_fitted(model, names)
        k = model.get_int("n_classes")
        np = _np()
        self.classes_ = np.arange(k) if np is not None else list(range(k))
        self.outputs_2d_ = False

    @with_n_jobs
    def predict(self, X):
        """The predicted labels (a NumPy array when classes_ is one, else a list)."""
        d = self._predict_data(X)
        out = self._model.predict(d, PREDICT_VALUE, 1, device=self._predict_device())
        return self._class_labels(out)

    @with_n_jobs
    def predict_proba(self, X):
        """Class probabilities, shape (n, K), in the order of classes_: each
        class's share of the neighbors' weight (a samebits.Array of float32)."""
        d = self._predict_data(X)
        k = len(self.classes_)
        out = self._model.predict(d, PREDICT_PROBA, k, device=self._predict_device())
        if k == 1:  # (n,): one class, every probability 1
            wide = _array.empty((len(out), 1))
            memoryview(wide).cast("B").cast("f")[:] = memoryview(out).cast("B").cast("f")
            return wide
        return out

    def score(self, X, y, sample_weight=None):
        """Accuracy of predict(X) (sums by math.fsum)."""
        pred = self.predict(X)
        w = None if sample_weight is None else _array.values(sample_weight, "sample_weight")
        return accuracy(_array.values(y, "y"), list(pred), w)


class KNeighborsRegressor(_Neighbors):
    """Regression by the mean of the k nearest neighbors' targets (scikit-learn's
    KNeighborsRegressor): uniform, or weighted by 1 / distance (a query at
    distance 0 of some training rows: their mean)."""

    _estimator_kind = "regressor"
    _task = "regression"

    def __init__(self, n_neighbors=5, *, weights="uniform", algorithm="auto", leaf_size=30, p=2,
                 metric="minkowski", metric_params=None, n_jobs=None, radius=1.0, device="cpu", numeric_mode=None):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.p = p
        self.metric = metric
        self.metric_params = metric_params
        self.n_jobs = n_jobs
        self.radius = radius
        self.device = device
        self.numeric_mode = numeric_mode

    @with_n_jobs
    def fit(self, X, y):
        """Keep the rows of X (n, d) and the targets y (n,), finite, as float32.
        n_neighbors above the row count is refused by name. On error nothing
        changes."""
        _check_1d_target(y, type(self).__name__)
        label = _array.vector(y, "y")
        self._fit(X, label)
        return self

    @with_n_jobs
    def predict(self, X):
        """The predicted values: the (weighted) mean of the neighbors' targets in
        double, rounded once to float32 (a samebits.Array (n,))."""
        d = self._predict_data(X)
        return self._model.predict(d, PREDICT_VALUE, 1, device=self._predict_device())

    def score(self, X, y, sample_weight=None):
        """R^2 of predict(X) (sums by math.fsum)."""
        pred = self.predict(X)
        w = None if sample_weight is None else _array.values(sample_weight, "sample_weight")
        return r2_score(_array.values(y, "y"), pred.tolist(), w)


_CLASSES = (NearestNeighbors, KNeighborsClassifier, KNeighborsRegressor)


def class_for_task(task):
    """The estimator class of a knn model's task (sb_model_get_int(m, "task"))."""
    if 0 <= task < len(_CLASSES):
        return _CLASSES[task]
    raise InvalidInputError("the model file holds a knn model of task %d, which no samebits Python estimator "
                            "holds" % task)
