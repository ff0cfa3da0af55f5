"""Kernel density estimation (docs/density.md): scikit-learn's KernelDensity
over sb_kde_fit, sb_model_score_samples, sb_model_score and sb_model_sample:
the exact weighted sum over every training row in index order, the same bits
on every machine and thread count.

Parameters are passed to the C library as text, which checks each and refuses
an unknown or unbuilt option by name (InvalidArgumentError): metric is
euclidean only, atol and rtol 0 only (the exact sum; scikit-learn's defaults),
metric_params None only. algorithm, leaf_size and breadth_first tune
scikit-learn's tree engine and have no effect here: a value other than the
default gives a warning that says so. n_jobs is the thread count (it never
changes a bit of a result).

score_samples returns the library's float32 log densities widened exactly to
float64 (scikit-learn's dtype); score is their sum in row order, computed by
the library. sample draws from the counter-based generator keyed by
random_state (an int; None is 0, so sample() is reproducible): the same draws
on every machine, but not NumPy's draws.

device="cuda", "opencl" or "gpu" computes score_samples' and score's kernel
sums on that GPU (the same bits as the CPU's: docs/density.md); fit checks the
device (an absent backend is refused by name) and sample stays on the host.
"""
import math
import warnings

from . import _array
from ._base import Estimator, FittedModel, with_n_jobs
from ._model import Model, dataset
from .errors import InvalidArgumentError
from .gbdt import _text

__all__ = ["KernelDensity"]

FAMILY_KDE = 10
KERNELS = ("gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine")


class KernelDensity(FittedModel, Estimator):
    """Kernel density estimation (scikit-learn's KernelDensity), exact and
    identical: kernels gaussian, tophat, epanechnikov, exponential, linear and
    cosine; bandwidth a positive number, "scott" or "silverman"; bandwidth_
    the resolved float32 value."""

    _estimator_kind = "density_estimator"

    def __init__(self, *, bandwidth=1.0, algorithm="auto", kernel="gaussian", metric="euclidean", atol=0,
                 rtol=0, breadth_first=True, leaf_size=40, metric_params=None, n_jobs=None, device="cpu",
                 numeric_mode=None):
        self.bandwidth = bandwidth
        self.algorithm = algorithm
        self.kernel = kernel
        self.metric = metric
        self.atol = atol
        self.rtol = rtol
        self.breadth_first = breadth_first
        self.leaf_size = leaf_size
        self.metric_params = metric_params
        self.n_jobs = n_jobs
        self.device = device
        self.numeric_mode = numeric_mode

    # ---- parameters -----------------------------------------------------------
    def _c_params(self):
        name = type(self).__name__
        if self.metric_params is not None and self.metric_params != {}:
            raise InvalidArgumentError("%s: metric_params=%r is not supported (the metric built, euclidean, takes "
                                       "no parameters)" % (name, self.metric_params))
        if callable(self.metric):
            raise InvalidArgumentError("%s: metric as a callable is not supported: euclidean only" % name)
        bw = self.bandwidth
        if isinstance(bw, str):
            if bw not in ("scott", "silverman"):
                raise InvalidArgumentError("%s: bandwidth=%r: a positive number, 'scott' or 'silverman'"
                                           % (name, bw))
            bw_text = bw
        else:
            if isinstance(bw, bool):
                raise InvalidArgumentError("%s: bandwidth=%r must be a number" % (name, bw))
            try:
                v = float(bw)
            except (TypeError, ValueError):
                raise InvalidArgumentError("%s: bandwidth=%r must be a number, 'scott' or 'silverman'"
                                           % (name, bw)) from None
            if not (v > 0.0) or math.isinf(v):
                raise InvalidArgumentError("%s: bandwidth=%r must be positive and finite (or 'scott' or "
                                           "'silverman')" % (name, bw))
            bw_text = repr(v)
        for key in ("atol", "rtol"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v != 0:
                raise InvalidArgumentError("%s: %s=%r: only %s=0 is built (the exact sum over every training row; "
                                           "docs/density.md)" % (name, key, v, key))
        notes = []
        if self.algorithm != "auto":
            notes.append("algorithm=%r" % (self.algorithm,))
        if isinstance(self.leaf_size, bool) or self.leaf_size != 40:
            notes.append("leaf_size=%r" % (self.leaf_size,))
        if self.breadth_first is not True:
            notes.append("breadth_first=%r" % (self.breadth_first,))
        if notes:
            warnings.warn("%s: %s tune(s) scikit-learn's tree engine and has no effect in samebits (the density is "
                          "the exact sum over every training row)" % (name, ", ".join(notes)), UserWarning,
                          stacklevel=4)
        if self.breadth_first not in (True, False, 0, 1):
            raise InvalidArgumentError("%s: breadth_first=%r must be a bool" % (name, self.breadth_first))
        pairs = [("model", "kde"), ("kernel", _text("kernel", self.kernel, str)), ("bandwidth", bw_text),
                 ("metric", _text("metric", self.metric, str)),
                 ("algorithm", _text("algorithm", self.algorithm, str)),
                 ("leaf_size", _text("leaf_size", self.leaf_size, int))]
        if self.numeric_mode is not None:
            pairs.append(("numeric_mode", _text("numeric_mode", self.numeric_mode, str)))
        if self.device is not None:
            pairs.append(("device", _text("device", self.device, str)))
        return pairs

    # ---- fit ------------------------------------------------------------------
    @with_n_jobs
    def fit(self, X, y=None, sample_weight=None):
        """Keep the rows of X (n, d), finite values, and sample_weight (n,),
        finite and >= 0 with a positive sum; y is ignored. On error nothing
        changes."""
        from ._lib import lib
        m = _array.matrix(X, "X")
        pairs = self._c_params()
        weight = _array.row_weights(sample_weight, m.nrows)
        train = dataset(m, weight=weight[1:] if weight is not None else None, view=True)
        model = Model._fit(lib.sb_kde_fit, pairs, train)
        self._drop_fitted()
        self._set_fitted(model, m.names)
        return self

    def _set_fitted(self, model, names):
        info = self._adopt_model(model, names)
        self.bandwidth_ = float(model.get_array("bandwidth")[0])
        self.n_samples_fit_ = int(model.get_int("n_samples_fit"))

    # ---- the density ------------------------------------------------------------
    @with_n_jobs
    def score_samples(self, X):
        """The log density of each row of X: float64 values (the library's
        float32 widened exactly; a NumPy array, a list without NumPy); -inf
        where a compact kernel reaches no training row."""
        import ctypes
        from ._lib import check, lib
        d = self._predict_data(X)
        dev = self._device_arg()
        need = ctypes.c_size_t(0)
        check(lib.sb_model_score_samples_on(self._model._h.ptr, d.ptr, dev, None, 0, ctypes.byref(need)))
        out = _array.empty((need.value,))
        if need.value:
            check(lib.sb_model_score_samples_on(self._model._h.ptr, d.ptr, dev, _array.pointer(out), need.value,
                                                ctypes.byref(need)))
        return _array.widened(out)

    @with_n_jobs
    def score(self, X, y=None):
        """The total log-likelihood of X: the sum of score_samples in row order
        (in double, by the library)."""
        import ctypes
        from ._lib import check, lib
        d = self._predict_data(X)
        out = ctypes.c_double(0.0)
        check(lib.sb_model_score_on(self._model._h.ptr, d.ptr, self._device_arg(), ctypes.byref(out)))
        return out.value

    def _device_arg(self):
        """The device the sums run on, as the C calls take it: the estimator's
        device for "cuda", "opencl" or "gpu" (the same bits as the CPU's), else
        None (the host)."""
        dev = self._predict_device()
        return dev.encode() if dev is not None else None

    def sample(self, n_samples=1, random_state=None):
        """n_samples draws from the fitted density (gaussian and tophat kernels
        only, as scikit-learn), shape (n_samples, n_features), float64 of the
        library's float32. random_state: an int seed (None: 0); the draws are
        a pure function of the seed and the model."""
        import ctypes
        from ._lib import check, lib
        self._check_fitted()
        if isinstance(n_samples, bool) or not isinstance(n_samples, int) and not hasattr(n_samples, "__index__"):
            raise InvalidArgumentError("n_samples=%r must be an integer" % (n_samples,))
        n = int(n_samples)
        if n < 1:
            raise InvalidArgumentError("n_samples=%d must be >= 1" % n)
        seed = 0 if random_state is None else int(_text("random_state", random_state, int))
        if seed < 0 or seed >= 2 ** 64:
            raise InvalidArgumentError("random_state=%d must be in 0..2^64-1" % seed)
        need = ctypes.c_size_t(0)
        h = self._model._h.ptr
        check(lib.sb_model_sample(h, n, seed, None, 0, ctypes.byref(need)))
        out = _array.empty((n, self.n_features_in_))
        check(lib.sb_model_sample(h, n, seed, _array.pointer(out), need.value, ctypes.byref(need)))
        return _array.widened(out)

    # ---- model file -----------------------------------------------------------------
    def load_model(self, path_or_bytes):
        """Load a kernel density model file (or its bytes); returns self. Another
        family's file is InvalidInputError naming it. kernel and bandwidth become
        the file's."""
        model, _ = self._open_own_model(path_or_bytes, FAMILY_KDE)
        self._load_fitted(model, path_or_bytes)
        return self

    def _load_fitted(self, model, source):
        names, params = self._file_names_params(source)
        self.kernel = KERNELS[model.get_int("kernel")]
        bw = params.get("bandwidth")
        self.bandwidth = bw if bw in ("scott", "silverman") else float(model.get_array("bandwidth")[0])
        self._set_fitted(model, names)

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags
        return Tags(estimator_type="density_estimator", target_tags=TargetTags(required=False),
                    input_tags=InputTags(allow_nan=False))
