"""UMAP (docs/umap.md): umap-learn's UMAP over sb_umap_fit_transform, the
embedding of the training rows the same bits on every machine and at every
thread count (McInnes, Healy and Melville 2018).

Parameters are passed to the C library as text, which checks each and refuses
an unknown or unbuilt option by name (InvalidArgumentError): metric is
euclidean or cosine (the exact neighbor search of the neighbors family),
init "spectral", "random" or an array of shape (n_samples, n_components).
random_state None is seed 0 (never the clock). umap-learn's options that
this build does not implement (target_metric, densmap, a precomputed_knn,
supervised y, inverse_transform) are refused by name.

model_digest_ is the SHA-256 of the embedding's float32 bytes (little-endian,
row-major) and the canonical parameter text: UMAP keeps no model file yet.
"""
import hashlib
import struct
import sys

from . import _array
from ._base import Estimator, with_n_jobs
from ._model import dataset
from .errors import InvalidArgumentError, InvalidInputError
from .gbdt import _text

__all__ = ["UMAP"]

FAMILY_UMAP = 15


class UMAP(Estimator):
    """UMAP (umap-learn's names): n_neighbors, n_components, metric, n_epochs,
    learning_rate, init, min_dist, spread, set_op_mix_ratio,
    local_connectivity, repulsion_strength, negative_sample_rate,
    random_state. fit / fit_transform give embedding_ (n_samples,
    n_components), float32 widened exactly to float64."""

    def __init__(self, n_neighbors=15, n_components=2, metric="euclidean", n_epochs=None, learning_rate=1.0,
                 init="spectral", min_dist=0.1, spread=1.0, set_op_mix_ratio=1.0, local_connectivity=1.0,
                 repulsion_strength=1.0, negative_sample_rate=5, random_state=None, n_jobs=None,
                 numeric_mode=None):
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
        self.n_jobs = n_jobs
        self.numeric_mode = numeric_mode

    def _c_params(self, init_is_array):
        if callable(self.metric):
            raise InvalidArgumentError("UMAP: metric as a callable is not supported: euclidean or cosine")
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
                  else _text("random_state", self.random_state, int))]
        if self.numeric_mode is not None:
            pairs.append(("numeric_mode", _text("numeric_mode", self.numeric_mode, str)))
        return pairs

    @with_n_jobs
    def fit(self, X, y=None):
        """Embed the rows of X (n, d), finite values. y (supervised UMAP) is
        refused by name. On error nothing changes."""
        import ctypes
        from ._lib import check, lib, params
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
        p = params(pairs)
        out = _array.empty((m.nrows, nc))
        need = ctypes.c_size_t(0)
        check(lib.sb_umap_fit_transform(p.ptr, train.ptr, init_ptr, None, _array.pointer(out), m.nrows * nc,
                                        ctypes.byref(need)))
        self._fit_state = (dataset(m, view=False), m.ncols, pairs, out)  # the library's own copy of the rows
        raw = out.tobytes()
        if sys.byteorder != "little":
            raw = b"".join(struct.pack("<f", v) for v in struct.unpack("=%df" % (len(raw) // 4), raw))
        text = "".join("%s=%s\n" % kv for kv in sorted(pairs))
        self.model_digest_ = hashlib.sha256(raw + text.encode()).hexdigest()
        self.embedding_ = _array.widened(out)
        self.n_features_in_ = m.ncols
        if m.names is not None:
            self.feature_names_in_ = list(m.names)
        return self

    def fit_transform(self, X, y=None):
        """fit(X) and its embedding_."""
        return self.fit(X, y).embedding_

    @with_n_jobs
    def transform(self, X):
        """New rows embedded against the frozen fit (sb_umap_transform): each
        row's result depends on that row alone, however the rows are batched.
        float32 widened exactly to float64."""
        import ctypes
        from ._lib import check, lib, params
        state = getattr(self, "_fit_state", None)
        if state is None:
            from .errors import NotFittedError
            raise NotFittedError("This UMAP instance is not fitted yet. Call 'fit' before 'transform'.")
        train, nfeat, pairs, emb = state
        q = _array.matrix(X, "X")
        if q.ncols != nfeat:
            raise InvalidInputError("X has %d features, but UMAP was fitted with %d" % (q.ncols, nfeat))
        nc = emb.shape[1]
        out = _array.empty((q.nrows, nc))
        need = ctypes.c_size_t(0)
        qd, p = dataset(q, view=True), params(pairs)
        check(lib.sb_umap_transform(p.ptr, train.ptr, _array.pointer(emb), qd.ptr, _array.pointer(out),
                                    q.nrows * nc, ctypes.byref(need)))
        return _array.widened(out)
