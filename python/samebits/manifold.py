"""UMAP (docs/umap.md): umap-learn's UMAP over sb_umap_fit, the embedding of
the training rows the same bits on every machine and at every thread count
(McInnes, Healy and Melville 2018).

Parameters are passed to the C library as text, which checks each and refuses
an unknown or unbuilt option by name (InvalidArgumentError): metric is
euclidean, cosine or manhattan (the neighbors family's exact distances),
init "spectral", "random" or an array of shape (n_samples, n_components).
random_state None is seed 0 (never the clock). umap-learn's options that
this build does not implement (target_metric, densmap, a precomputed_knn,
supervised y, inverse_transform) are refused by name.

The fit is a model of family 15 in the version 2 model file (the training
rows, the embedding, a and b, the parameters): model_digest_ is the SHA-256
of the file's bytes, save_model writes it, samebits.load_model (or
UMAP().load_model) reads it back, and transform(X_new) on the loaded model
gives the same bits as on the fitted one.
"""
import sys
import warnings

from . import _array
from ._base import Estimator, FittedModel, with_n_jobs
from ._model import Model, dataset
from .errors import InvalidArgumentError, InvalidInputError
from .gbdt import _open_model, _text, family_name

__all__ = ["UMAP"]

FAMILY_UMAP = 15
SPECTRAL_MAX_ROWS = 262144  # umap.c's UM_MAX_SPECTRAL_ROWS: above it the fit starts from the random init
METRICS = ("euclidean", "cosine", "manhattan")


def _np():
    return sys.modules.get("numpy")


def _f32(text):
    """The shortest decimal that names the same float32 as text (the file
    stores float32 parameters as 9 digits: 0.200000003 reads back as 0.2)."""
    import struct
    want = struct.pack("<f", float(text))
    for digits in range(1, 10):
        v = float("%.*g" % (digits, float(text)))
        if struct.pack("<f", v) == want:
            return v
    return float(text)


class UMAP(FittedModel, Estimator):
    """UMAP (umap-learn's names): n_neighbors, n_components, metric, n_epochs,
    learning_rate, init, min_dist, spread, set_op_mix_ratio,
    local_connectivity, repulsion_strength, negative_sample_rate,
    random_state; neighbors="auto" (exact below 4,096 rows, NN-descent from
    there, umap-learn's switch), "exact" or "nndescent"; optimize="sequential" (each move in place in edge
    order, umap-learn's seeded rule) or "batched" (each epoch in 64 parts of the edges, a part's moves summed per row
    as fixed-point integers and applied at the part's end: the same bits at any thread count and on device="cuda" or "opencl",
    which run the batched epochs only). fit / fit_transform give embedding_ (n_samples, n_components),
    float32 widened exactly to float64."""

    def __init__(self, n_neighbors=15, n_components=2, metric="euclidean", n_epochs=None, learning_rate=1.0,
                 init="spectral", min_dist=0.1, spread=1.0, set_op_mix_ratio=1.0, local_connectivity=1.0,
                 repulsion_strength=1.0, negative_sample_rate=5, random_state=None, neighbors="auto", n_jobs=None,
                 numeric_mode=None, optimize="sequential", device="cpu"):
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.metric = metric
        self.n_epochs = n_epochs
        self.learning_rate = learning_rate
        self.init = init
        self.min_dist = min_dist
        self.spread = spread
        self.set_op_mix_ratio = set_op_mix_ratio
        self.local_connectivity = local_connectivity
        self.repulsion_strength = repulsion_strength
        self.negative_sample_rate = negative_sample_rate
        self.random_state = random_state
        self.neighbors = neighbors
        self.n_jobs = n_jobs
        self.numeric_mode = numeric_mode
        self.optimize = optimize
        self.device = device

    def _c_params(self, init_is_array):
        if callable(self.metric):
            raise InvalidArgumentError("UMAP: metric as a callable is not supported: euclidean, cosine or manhattan")
        pairs = [("model", "umap"), ("n_neighbors", _text("n_neighbors", self.n_neighbors, int)),
                 ("n_components", _text("n_components", self.n_components, int)),
                 ("metric", _text("metric", self.metric, str)),
                 ("n_epochs", "none" if self.n_epochs is None else _text("n_epochs", self.n_epochs, int)),
                 ("learning_rate", _text("learning_rate", self.learning_rate, float)),
                 ("init", "array" if init_is_array else _text("init", self.init, str)),
                 ("min_dist", _text("min_dist", self.min_dist, float)),
                 ("spread", _text("spread", self.spread, float)),
                 ("set_op_mix_ratio", _text("set_op_mix_ratio", self.set_op_mix_ratio, float)),
                 ("local_connectivity", _text("local_connectivity", self.local_connectivity, float)),
                 ("repulsion_strength", _text("repulsion_strength", self.repulsion_strength, float)),
                 ("negative_sample_rate", _text("negative_sample_rate", self.negative_sample_rate, int)),
                 ("random_state", "none" if self.random_state is None
                  else _text("random_state", self.random_state, int)),
                 ("neighbors", _text("neighbors", self.neighbors, str)),
                 ("optimize", _text("optimize", self.optimize, str))]
        if self.device is not None and self.device != "cpu":
            pairs.append(("device", _text("device", self.device, str)))
        if self.numeric_mode is not None:
            pairs.append(("numeric_mode", _text("numeric_mode", self.numeric_mode, str)))
        return pairs

    @with_n_jobs
    def fit(self, X, y=None):
        """Embed the rows of X (n, d), finite values. y (supervised UMAP) is
        refused by name. On error nothing changes."""
        from ._lib import lib
        if y is not None:
            raise InvalidArgumentError("UMAP: supervised UMAP (y=) is not built (docs/umap.md)")
        m = _array.matrix(X, "X")
        init_is_array = not isinstance(self.init, str)
        pairs = self._c_params(init_is_array)
        nc = int(self.n_components)
        init_ptr = None
        if init_is_array:
            im = _array.matrix(self.init, "init")
            if im.nrows != m.nrows or im.ncols != nc:
                raise InvalidInputError("UMAP: init has shape (%d, %d), the data needs (%d, %d)"
                                        % (im.nrows, im.ncols, m.nrows, nc))
            init_ptr = im.ptr
        train = dataset(m, view=True)
        model = Model._fit(lib.sb_umap_fit, pairs, train, init_ptr)
        self._drop_fitted()
        self._set_fitted(model, m.names)
        if not init_is_array and self.init == "spectral" and int(model.get_int("init")) != 0:
            # the model's init field is how the fit started: 1 when the spectral solve could not serve it
            why = ("%d rows are above the spectral initialization's %d" % (m.nrows, SPECTRAL_MAX_ROWS)
                   if m.nrows > SPECTRAL_MAX_ROWS else
                   "n_components + 1 >= the %d rows" % m.nrows if nc + 1 >= m.nrows else
                   "the eigensolver did not converge")
            warnings.warn("UMAP: init='spectral' could not be computed (%s); the fit started from the random "
                          "initialization, as umap-learn falls back" % why, UserWarning, stacklevel=2)
        return self

    def _set_fitted(self, model, names):
        self._adopt_model(model, names)
        n, nc = int(model.get_int("n_samples_fit")), int(model.get_int("n_components"))
        emb = model.get_array("embedding")
        np = _np()
        if np is not None:
            self.embedding_ = np.asarray(emb).astype(np.float64).reshape(n, nc)
        else:
            flat = [float(v) for v in emb.tolist()]
            self.embedding_ = [flat[i * nc:(i + 1) * nc] for i in range(n)]
        self.n_epochs_ = int(model.get_int("n_epochs"))

    def fit_transform(self, X, y=None):
        """fit(X) and its embedding_."""
        return self.fit(X, y).embedding_

    @with_n_jobs
    def transform(self, X):
        """New rows embedded against the frozen fit (SB_PREDICT_TRANSFORM):
        each row's result depends on that row alone, however the rows are
        batched. float32 widened exactly to float64."""
        import ctypes
        from ._lib import check, lib
        d = self._predict_data(X)
        nc = int(self._model.get_int("n_components"))
        nrows = ctypes.c_int64(0)
        check(lib.sb_dataset_shape(d.ptr, ctypes.byref(nrows), None))
        out = _array.empty((nrows.value, nc))
        need = ctypes.c_size_t(0)
        check(lib.sb_model_predict(self._model._h.ptr, d.ptr, 3, _array.pointer(out), nrows.value * nc,
                                   ctypes.byref(need)))
        return _array.widened(out)

    # ---- model file -----------------------------------------------------------------
    def load_model(self, path_or_bytes):
        """Load a UMAP model file (or its bytes); returns self. Another
        family's file is InvalidInputError naming it. The parameters become
        the file's."""
        model = _open_model(path_or_bytes)
        info = model.info()
        if info["family"] != FAMILY_UMAP:
            raise InvalidInputError("the model file holds a %s model; a UMAP cannot hold it: load it with "
                                    "samebits.load_model(...)" % family_name(info["family"]))
        self._load_fitted(model, path_or_bytes)
        return self

    def _load_fitted(self, model, source):
        from ._model import feature_names_in_file, params_in_file
        names = feature_names_in_file(source)
        p = params_in_file(source)
        for key in ("n_neighbors", "n_components", "metric", "n_epochs", "learning_rate", "init", "min_dist", "spread",
                    "set_op_mix_ratio", "local_connectivity", "repulsion_strength", "negative_sample_rate",
                    "random_state"):
            if key not in p:
                raise InvalidInputError("the UMAP model file's parameter text has no '%s' (not a file sb_umap_fit "
                                        "wrote)" % key)
        self._drop_fitted()
        self.n_neighbors = int(p["n_neighbors"])
        self.n_components = int(p["n_components"])
        self.metric = p["metric"]
        self.n_epochs = None if p["n_epochs"] == "none" else int(p["n_epochs"])
        self.learning_rate = _f32(p["learning_rate"])
        self.init = p["init"]
        self.min_dist = _f32(p["min_dist"])
        self.spread = _f32(p["spread"])
        self.set_op_mix_ratio = _f32(p["set_op_mix_ratio"])
        self.local_connectivity = _f32(p["local_connectivity"])
        self.repulsion_strength = _f32(p["repulsion_strength"])
        self.negative_sample_rate = int(p["negative_sample_rate"])
        self.random_state = int(p["random_state"])
        self.neighbors = p.get("neighbors", "auto")  # written only when not auto
        self.optimize = p.get("optimize", "sequential")  # written only when not sequential
        self._set_fitted(model, names)
