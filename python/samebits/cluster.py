"""Clustering (docs/cluster.md): scikit-learn's KMeans over sb_kmeans_fit, the
same bits on every machine and thread count.

Parameters are passed to the C library as text (floats by repr(), as the other
estimators do), which checks each and refuses an unknown or unbuilt option by
name (InvalidArgumentError). verbose and copy_x only tune scikit-learn's own
engine: a value other than scikit-learn's default gives a warning that it has
no effect, and so does algorithm="elkan" (the same clustering, computed by
Lloyd's iterations here). random_state=None means seed 0: every fit is
reproducible (scikit-learn would draw a fresh seed). n_jobs is the thread count
(it never changes a bit of a result).

Fitted arrays are float64 numpy.ndarrays of the model's float32 values (the
widening is exact) when NumPy is loaded, else samebits.Array; labels are int32.
"""
import math
import sys
import warnings

from . import _array
from ._base import Estimator, FittedModel, with_n_jobs
from ._model import PREDICT_RAW, PREDICT_TRANSFORM, PREDICT_VALUE, Model, dataset
from .errors import InvalidArgumentError, InvalidInputError
from .gbdt import _text

__all__ = ["KMeans", "DBSCAN", "AgglomerativeClustering"]

FAMILY_KMEANS = 4


def _np():
    return sys.modules.get("numpy")


_out = _array.shaped  # float32 results in their shape (float64 with NumPy)


def _labels(values):
    """Cluster indices (exact small integers held as float32) as int32: a NumPy
    array when NumPy is loaded, else a samebits.IndexArray."""
    np = _np()
    if np is not None:
        return np.asarray(values).astype(np.int32)
    out = _array.empty_index((len(values),))
    mv = memoryview(out).cast("B").cast("i")
    for i, v in enumerate(values if isinstance(values, list) else values.tolist()):
        mv[i] = int(v)
    return out


class _Clusterer(FittedModel, Estimator):
    """What the clustering estimators share: their fitted attributes replaced
    all at once, the common ones (the model, n_features_in_,
    feature_names_in_), the model file, and scikit-learn's clusterer tags. A
    subclass sets _family and _set_fitted (which calls _set_common)."""

    _estimator_kind = "clusterer"

    def _replace_fitted(self, model, names):
        self._drop_fitted()
        self._set_fitted(model, names)

    def _fit_rows(self, X, fit_fn, sample_weight=None):
        """Fit the C family fit_fn (a name in _lib) on X's rows, weighed by
        sample_weight (n,) where given, with this estimator's parameters;
        nothing changes on error."""
        from ._lib import lib
        m = _array.matrix(X, "X")
        pairs = self._c_params()
        weight = _array.row_weights(sample_weight, m.nrows)
        train = dataset(m, weight=weight[1:] if weight is not None else None, view=True)
        model = Model._fit(getattr(lib, fit_fn), pairs, train)
        self._replace_fitted(model, m.names)
        return self

    def _set_common(self, model, names):
        info = self._adopt_model(model, names)

    def load_model(self, path_or_bytes):
        """Load a model file of this estimator's family (or its bytes); returns
        self. Another family's file is InvalidInputError naming both."""
        model, _ = self._open_own_model(path_or_bytes, self._family)
        self._load_fitted(model, path_or_bytes)
        return self

    def _load_fitted(self, model, source):
        from ._model import feature_names_in_file
        self._replace_fitted(model, feature_names_in_file(source))

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags
        return Tags(estimator_type="clusterer", target_tags=TargetTags(required=False),
                    input_tags=InputTags(allow_nan=False))


class KMeans(_Clusterer):
    """k-means clustering (scikit-learn's KMeans): Lloyd's iterations from
    k-means++ seeding (greedy, 2 + floor(ln k) candidates a step), random rows or
    given centers, n_init runs with the lowest inertia kept (docs/cluster.md)."""

    _family = FAMILY_KMEANS
    _IGNORED = {"verbose": (0, "the C library prints nothing during a fit"),
                "copy_x": (True, "X is never modified: it is read as float32 once")}

    def __init__(self, n_clusters=8, *, init="k-means++", n_init="auto", max_iter=300, tol=1e-4, verbose=0,
                 random_state=None, copy_x=True, algorithm="lloyd", device="cpu", numeric_mode=None, n_jobs=None):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state
        self.copy_x = copy_x
        self.algorithm = algorithm
        self.device = device
        self.numeric_mode = numeric_mode
        self.n_jobs = n_jobs

    # ---- parameters -------------------------------------------------------------
    def _c_params(self, given):
        for name, (default, why) in self._IGNORED.items():
            value = getattr(self, name)
            if not (value is default or (type(value) is type(default) and value == default)):
                warnings.warn("KMeans: parameter %s=%r has no effect in samebits (%s)" % (name, value, why),
                              UserWarning, stacklevel=4)
        if self.algorithm == "elkan":
            warnings.warn("KMeans: algorithm='elkan' gives the same clustering; samebits computes it by Lloyd's "
                          "iterations", UserWarning, stacklevel=4)
        pairs = [("model", "kmeans"), ("n_clusters", _text("n_clusters", self.n_clusters, int)),
                 ("max_iter", _text("max_iter", self.max_iter, int)), ("tol", _text("tol", self.tol, float)),
                 ("algorithm", _text("algorithm", self.algorithm, str))]
        if not given:
            pairs.append(("init", _text("init", self.init, str)))
        if self.n_init != "auto":
            if given and self.n_init not in (1, "auto"):
                warnings.warn("Explicit initial center position passed: performing only one init in KMeans "
                              "instead of n_init=%r" % (self.n_init,), RuntimeWarning, stacklevel=4)
            elif not given:
                pairs.append(("n_init", _text("n_init", self.n_init, int)))
        if self.random_state is not None:
            pairs.append(("random_state", _text("random_state", self.random_state, int)))
        if self.numeric_mode is not None:
            pairs.append(("numeric_mode", _text("numeric_mode", self.numeric_mode, str)))
        if self.device is not None:
            pairs.append(("device", _text("device", self.device, str)))
        return pairs

    def _init_centers(self, ncols):
        """The given centers as a ctypes float32 buffer (kept alive by the caller), or None."""
        if isinstance(self.init, str):
            return None
        if callable(self.init):
            raise InvalidArgumentError("init as a callable is not built (k-means++, random, or an array of centers)")
        c = _array.matrix(self.init, "init")
        if c.nrows != self.n_clusters or c.ncols != ncols:
            raise InvalidArgumentError("The shape of the initial centers (%d, %d) does not match the number of "
                                       "clusters %r and features %d" % (c.nrows, c.ncols, self.n_clusters, ncols))
        return c

    # ---- fit ----------------------------------------------------------------------
    @with_n_jobs
    def fit(self, X, y=None, sample_weight=None):
        """Cluster X (n, d); y is ignored; sample_weight (n,), finite and >= 0 with a
        positive sum. On error nothing changes."""
        from ._lib import lib
        m = _array.matrix(X, "X")
        init = self._init_centers(m.ncols)
        pairs = self._c_params(init is not None)
        weight = _array.row_weights(sample_weight, m.nrows)
        train = dataset(m, weight=weight[1:] if weight is not None else None, view=True)
        ptr = init.ptr if init is not None else None
        model = Model._fit(lib.sb_kmeans_fit, pairs, train, ptr)
        self._replace_fitted(model, m.names)
        # labels_: the fit's own last assignment of the training rows to the final centers
        self.labels_ = _labels(_indices(model, "labels"))
        return self

    def _set_fitted(self, model, names):
        self._set_common(model, names)
        k = model.get_int("n_clusters")
        self.cluster_centers_ = _out(model.get_array("cluster_centers"), (k, self.n_features_in_))
        self.inertia_ = float(model.get_array("inertia").tolist()[0])
        self.n_iter_ = int(model.get_int("n_iter"))

    # ---- prediction ---------------------------------------------------------------
    @with_n_jobs
    def predict(self, X):
        """The index of each row's nearest center (ties to the lower index), int32."""
        d = self._predict_data(X)
        return _labels(self._model.predict(d, PREDICT_VALUE, 1, device=self._predict_device()))

    @with_n_jobs
    def transform(self, X):
        """The distance of each row to each center (n, n_clusters): the square
        roots of the squared distances the assignment compares (a samebits.Array)."""
        d = self._predict_data(X)
        return self._model.predict(d, PREDICT_TRANSFORM, self._model.get_int("n_clusters"),
                                   device=self._predict_device())

    def fit_predict(self, X, y=None, sample_weight=None):
        return self.fit(X, sample_weight=sample_weight).labels_

    def fit_transform(self, X, y=None, sample_weight=None):
        return self.fit(X, sample_weight=sample_weight).transform(X)

    def __sklearn_tags__(self):
        from sklearn.utils import TransformerTags
        tags = super().__sklearn_tags__()
        # transform: the distances to the centers, computed (and returned) in float32
        tags.transformer_tags = TransformerTags(preserves_dtype=["float32"])
        return tags

    @with_n_jobs
    def score(self, X, y=None, sample_weight=None):
        """Minus the weighted sum of each row's squared distance to its nearest
        center (the assignment's distances, summed exactly by math.fsum)."""
        d = self._predict_data(X)
        k = self._model.get_int("n_clusters")
        raw = self._model.predict(d, PREDICT_RAW, k, device=self._predict_device()).tolist()
        if k == 1:
            raw = [[v] for v in raw]
        w = None if sample_weight is None else _array.values(sample_weight, "sample_weight")
        if w is not None and len(w) != len(raw):
            raise InvalidInputError("X has %d rows but sample_weight has %d values" % (len(raw), len(w)))
        return -math.fsum(min(r) * (1.0 if w is None else float(w[i])) for i, r in enumerate(raw))



FAMILY_DBSCAN = 7


def _indices(model, name):
    """A model's int64 index array by name (sb_model_get_indices): a NumPy int64
    array when NumPy is loaded, else a list."""
    import ctypes
    from ._lib import check, lib
    need = ctypes.c_size_t(0)
    check(lib.sb_model_get_indices(model._h.ptr, name.encode(), None, 0, ctypes.byref(need)))
    buf = (ctypes.c_int64 * max(need.value, 1))()
    if need.value:
        check(lib.sb_model_get_indices(model._h.ptr, name.encode(), buf, need.value, ctypes.byref(need)))
    np = _np()
    if np is not None:
        return np.frombuffer(buf, dtype=np.int64, count=need.value).copy()
    return list(buf)[:need.value]


class DBSCAN(_Clusterer):
    """DBSCAN (scikit-learn's): clusters of core rows within eps of each other,
    border rows to the cluster of their lowest-index core neighbor, noise -1,
    clusters numbered by their smallest row (docs/cluster.md, "DBSCAN")."""

    _family = FAMILY_DBSCAN

    def __init__(self, eps=0.5, *, min_samples=5, metric="euclidean", metric_params=None, algorithm="auto",
                 leaf_size=30, p=None, n_jobs=None, device="cpu", numeric_mode=None):
        self.eps = eps
        self.min_samples = min_samples
        self.metric = metric
        self.metric_params = metric_params
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.p = p
        self.n_jobs = n_jobs
        self.device = device
        self.numeric_mode = numeric_mode

    def _c_params(self):
        if self.metric_params is not None:
            raise InvalidArgumentError("metric_params=%r is not supported (euclidean, manhattan and cosine take none)"
                                       % (self.metric_params,))
        if callable(self.metric):
            raise InvalidArgumentError("metric as a callable is not supported: euclidean, manhattan or cosine")
        if not isinstance(self.eps, (int, float)) or isinstance(self.eps, bool) or not self.eps > 0:
            raise InvalidArgumentError("eps=%r must be a number > 0" % (self.eps,))
        pairs = [("model", "dbscan"), ("eps", _text("eps", float(self.eps), float)),
                 ("min_samples", _text("min_samples", self.min_samples, int)),
                 ("metric", _text("metric", self.metric, str)), ("algorithm", _text("algorithm", self.algorithm, str)),
                 ("leaf_size", _text("leaf_size", self.leaf_size, int))]
        if self.p is not None:
            pairs.append(("p", _text("p", self.p, int)))
        if self.numeric_mode is not None:
            pairs.append(("numeric_mode", _text("numeric_mode", self.numeric_mode, str)))
        if self.device is not None:
            pairs.append(("device", _text("device", self.device, str)))
        return pairs

    @with_n_jobs
    def fit(self, X, y=None, sample_weight=None):
        """Cluster X (n, d); y is ignored; sample_weight (n,) weighs the
        neighborhoods. On error nothing changes."""
        return self._fit_rows(X, "sb_dbscan_fit", sample_weight)

    def _set_fitted(self, model, names):
        self._set_common(model, names)
        self.labels_ = _indices(model, "labels")
        self.core_sample_indices_ = _indices(model, "core_sample_indices")
        ncore = len(self.core_sample_indices_)
        self.components_ = _out(model.get_array("components"), (ncore, self.n_features_in_))

    def fit_predict(self, X, y=None, sample_weight=None):
        return self.fit(X, sample_weight=sample_weight).labels_



FAMILY_AGGLOMERATIVE = 8


class AgglomerativeClustering(_Clusterer):
    """Hierarchical agglomerative clustering (scikit-learn's): ward, complete,
    average or single linkage on Euclidean distances; the nearest-neighbor
    chain (single linkage: Prim's spanning tree) in exact double arithmetic,
    so children_ is scikit-learn's node for node, ties included
    (docs/cluster.md, "AgglomerativeClustering")."""

    _family = FAMILY_AGGLOMERATIVE

    def __init__(self, n_clusters=2, *, metric="euclidean", memory=None, connectivity=None, compute_full_tree="auto",
                 linkage="ward", distance_threshold=None, compute_distances=False, device="cpu", numeric_mode=None,
                 n_jobs=None):
        self.n_clusters = n_clusters
        self.metric = metric
        self.memory = memory
        self.connectivity = connectivity
        self.compute_full_tree = compute_full_tree
        self.linkage = linkage
        self.distance_threshold = distance_threshold
        self.compute_distances = compute_distances
        self.device = device
        self.numeric_mode = numeric_mode
        self.n_jobs = n_jobs

    def _c_params(self):
        if self.connectivity is not None:
            raise InvalidArgumentError("connectivity is not supported: the full Euclidean distances are used")
        if self.memory is not None:
            warnings.warn("AgglomerativeClustering: parameter memory=%r has no effect in samebits (nothing is cached)"
                          % (self.memory,), UserWarning, stacklevel=4)
        if callable(self.metric):
            raise InvalidArgumentError("metric as a callable is not supported: euclidean only")
        pairs = [("model", "agglomerative"), ("linkage", _text("linkage", self.linkage, str)),
                 ("metric", _text("metric", self.metric, str))]
        if (self.n_clusters is None) == (self.distance_threshold is None):
            raise InvalidArgumentError("Exactly one of n_clusters and distance_threshold has to be set, and the other "
                                       "needs to be None.")
        if self.n_clusters is not None:
            pairs.append(("n_clusters", _text("n_clusters", self.n_clusters, int)))
        else:
            pairs += [("n_clusters", "none"),
                      ("distance_threshold", _text("distance_threshold", float(self.distance_threshold), float))]
        if self.numeric_mode is not None:
            pairs.append(("numeric_mode", _text("numeric_mode", self.numeric_mode, str)))
        if self.device is not None:
            pairs.append(("device", _text("device", self.device, str)))
        return pairs

    @with_n_jobs
    def fit(self, X, y=None):
        """Cluster X (n, d), 2 <= n <= 40,000 (single linkage on the cpu on fewer than 32 features: 1,000,000);
        y is ignored. device="cuda"|"opencl"|"gpu" computes the distance matrix on the GPU (the same bits), the
        merges stay on the host. On error nothing changes."""
        return self._fit_rows(X, "sb_agglomerative_fit")

    def _set_fitted(self, model, names):
        self._set_common(model, names)
        self.labels_ = _indices(model, "labels")
        self.n_clusters_ = int(model.get_int("n_clusters"))
        self.n_leaves_ = int(model.get_int("n_leaves"))
        self.n_connected_components_ = 1
        children = _indices(model, "children")
        np = _np()
        self.children_ = children.reshape(-1, 2) if np is not None else [children[i:i + 2]
                                                                         for i in range(0, len(children), 2)]
        if self.compute_distances or self.distance_threshold is not None:
            self.distances_ = _out(model.get_array("distances"), (self.n_leaves_ - 1,))

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_



FAMILY_SPECTRAL = 9


class SpectralClustering(_Clusterer):
    """Spectral clustering (scikit-learn's): an rbf, nearest-neighbors or
    precomputed affinity, the normalized Laplacian's eigenvectors of least
    eigenvalue from a block Lanczos solver on the host (divided by the square roots of the
    degrees, signs fixed), then this library's KMeans on them
    (docs/cluster.md, "SpectralClustering")."""

    _family = FAMILY_SPECTRAL

    def __init__(self, n_clusters=8, *, eigen_solver=None, n_components=None, random_state=None, n_init=10,
                 gamma=1.0, affinity="rbf", n_neighbors=10, eigen_tol="auto", assign_labels="kmeans", degree=3,
                 coef0=1, kernel_params=None, n_jobs=None, verbose=False, device="cpu", numeric_mode=None):
        self.n_clusters = n_clusters
        self.eigen_solver = eigen_solver
        self.n_components = n_components
        self.random_state = random_state
        self.n_init = n_init
        self.gamma = gamma
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.eigen_tol = eigen_tol
        self.assign_labels = assign_labels
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.numeric_mode = numeric_mode

    def _c_params(self):
        if callable(self.affinity):
            raise InvalidArgumentError("affinity as a callable is not supported: rbf, nearest_neighbors or precomputed")
        if self.kernel_params is not None:
            raise InvalidArgumentError("kernel_params is not supported: the rbf affinity takes gamma only")
        if self.verbose:
            warnings.warn("SpectralClustering: verbose=%r has no effect in samebits" % (self.verbose,), UserWarning,
                          stacklevel=4)
        seed = 0 if self.random_state is None else self.random_state
        if not isinstance(seed, (int,)) or isinstance(seed, bool):
            raise InvalidArgumentError("random_state must be None or an int (a seed), got %r" % (seed,))
        pairs = [("model", "spectral"), ("n_clusters", _text("n_clusters", self.n_clusters, int)),
                 ("affinity", _text("affinity", self.affinity, str)),
                 ("gamma", _text("gamma", float(self.gamma), float)),
                 ("n_neighbors", _text("n_neighbors", self.n_neighbors, int)),
                 ("n_init", _text("n_init", self.n_init, int)), ("seed", str(int(seed))),
                 ("assign_labels", _text("assign_labels", self.assign_labels, str)),
                 ("eigen_solver", "none" if self.eigen_solver is None else _text("eigen_solver", self.eigen_solver, str)),
                 ("eigen_tol", self.eigen_tol if self.eigen_tol == "auto" else _text("eigen_tol", float(self.eigen_tol),
                                                                                     float)),
                 ("degree", _text("degree", float(self.degree), float)), ("coef0", _text("coef0", float(self.coef0), float))]
        if self.n_components is not None:
            pairs.append(("n_components", _text("n_components", self.n_components, int)))
        if self.numeric_mode is not None:
            pairs.append(("numeric_mode", _text("numeric_mode", self.numeric_mode, str)))
        if self.device is not None:
            pairs.append(("device", _text("device", self.device, str)))
        return pairs

    @with_n_jobs
    def fit(self, X, y=None):
        """Cluster X (n, d), 2 <= n <= 32,768 (affinity="precomputed": X is the
        symmetric n x n affinity, >= 0); y is ignored. On error nothing changes."""
        return self._fit_rows(X, "sb_spectral_fit")

    def _set_fitted(self, model, names):
        self._set_common(model, names)
        self.labels_ = _indices(model, "labels")

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.affinity == "precomputed"
        return tags
