"""scikit-learn conventions without importing scikit-learn.

get_params/set_params introspect __init__ (as sklearn.base.BaseEstimator does);
__sklearn_tags__ imports scikit-learn lazily, only when scikit-learn itself asks
(so it is already imported); _estimator_type serves older scikit-learn versions.
"""
import contextlib
import functools
import inspect
import math
import operator
import os
import sys
import types
import warnings

from .errors import InvalidArgumentError, InvalidInputError, not_fitted

# The thread count last chosen through samebits.set_num_threads (0: the default,
# SAMEBITS_NUM_THREADS or all cores): what an estimator's n_jobs restores after
# its fit or prediction. The C library keeps the count itself; this is its
# Python-side record, so that the default (0) and an explicit count are told apart.
_THREADS = {"setting": 0}
_MAX_THREADS = 1024  # SB_MAX_THREADS


def resolve_n_jobs(n_jobs):
    """scikit-learn's n_jobs as the library's thread count: None leaves the process
    setting as it is (returns None), -1 is every core (os.cpu_count()), k >= 1 is k
    threads. Anything else (0, -2, a float, a bool, a string) is InvalidArgumentError
    (a ValueError)."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool):
        raise InvalidArgumentError("n_jobs=%r must be None, -1 or a positive integer" % (n_jobs,))
    try:
        n = operator.index(n_jobs)
    except TypeError:
        raise InvalidArgumentError("n_jobs=%r must be None, -1 or a positive integer" % (n_jobs,)) from None
    if n == -1:
        return max(1, min(os.cpu_count() or 1, _MAX_THREADS))
    if n < 1:
        raise InvalidArgumentError("n_jobs=%r must be None, -1 (all cores) or a positive integer; samebits does "
                                   "not take joblib's other negative values" % (n_jobs,))
    if n > _MAX_THREADS:
        raise InvalidArgumentError("n_jobs=%d is more threads than the library runs (at most %d)"
                                   % (n, _MAX_THREADS))
    return n


@contextlib.contextmanager
def thread_count(n_jobs):
    """Run the body with the library's thread count set from n_jobs, then restore the
    process-wide setting (samebits.set_num_threads's, or the default). n_jobs=None
    changes nothing. The thread count never changes a bit of a result."""
    n = resolve_n_jobs(n_jobs)
    if n is None:
        yield
        return
    from ._lib import check, lib
    previous = _THREADS["setting"]
    check(lib.sb_set_num_threads(n))
    _THREADS["setting"] = n
    try:
        yield
    finally:
        lib.sb_set_num_threads(previous)
        _THREADS["setting"] = previous


def with_n_jobs(method):
    """Decorate an estimator method so that it runs under the estimator's n_jobs."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with thread_count(getattr(self, "n_jobs", None)):
            return method(self, *args, **kwargs)
    return wrapper


def warn_column_vector(y):
    """scikit-learn's DataConversionWarning for a (n, 1) y (then used as (n,))."""
    shape = None
    if hasattr(y, "shape") and not isinstance(y, (list, tuple)):
        try:
            shape = tuple(y.shape)
        except TypeError:
            shape = None
    elif isinstance(y, (list, tuple)) and y and all(isinstance(v, (list, tuple)) and len(v) == 1 for v in y):
        shape = (len(y), 1)
    else:
        try:
            mv = memoryview(y)
            shape = tuple(mv.shape)
        except TypeError:
            shape = None
    if shape is not None and len(shape) == 2 and shape[1] == 1:
        exc = sys.modules.get("sklearn.exceptions")
        category = getattr(exc, "DataConversionWarning", UserWarning) if exc is not None else UserWarning
        warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape of y "
                      "to (n_samples,), for example using ravel().", category, stacklevel=3)


class Estimator:
    """Base of the samebits estimators: the constructor stores parameters only."""

    _estimator_kind = None  # "classifier" | "regressor"

    def __init_subclass__(cls, **kwargs):
        """A public class that inherits its constructor from a private one gets its
        own copy, named after it, so that a wrong keyword argument is reported as
        "RandomForestClassifier.__init__() got an unexpected keyword argument ..."
        rather than under the private class's name (Python 3.11 and later name the
        class in that message; earlier versions name no class at all)."""
        super().__init_subclass__(**kwargs)
        init = cls.__init__
        if cls.__name__.startswith("_") or "__init__" in vars(cls) or not isinstance(init, types.FunctionType):
            return
        code = init.__code__
        qualname = cls.__name__ + ".__init__"
        if hasattr(code, "co_qualname"):
            code = code.replace(co_qualname=qualname)
        own = types.FunctionType(code, init.__globals__, init.__name__, init.__defaults__, init.__closure__)
        own.__kwdefaults__ = init.__kwdefaults__
        own.__qualname__ = qualname
        own.__doc__ = init.__doc__
        own.__module__ = cls.__module__
        cls.__init__ = own

    @classmethod
    def _param_defaults(cls):
        """The constructor's parameters and their defaults."""
        sig = inspect.signature(cls.__init__)
        return {p.name: p.default for p in sig.parameters.values()
                if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}

    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL))

    def get_params(self, deep=True):
        """The constructor's parameters as a dict (deep is accepted for scikit-learn)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set constructor parameters; an unknown name is InvalidArgumentError (a ValueError)."""
        valid = self._param_names()
        for key, value in params.items():
            if key not in valid:
                raise InvalidArgumentError("invalid parameter %r for estimator %s; valid parameters: %s"
                                           % (key, type(self).__name__, ", ".join(valid)))
            setattr(self, key, value)
        return self

    def __repr__(self):
        sig = inspect.signature(type(self).__init__)
        parts = []
        for name in self._param_names():
            default = sig.parameters[name].default
            value = getattr(self, name, None)
            if value is not default and value != default:
                parts.append("%s=%r" % (name, value))
        return "%s(%s)" % (type(self).__name__, ", ".join(parts))

    # ---- scikit-learn tags -------------------------------------------------
    @property
    def _estimator_type(self):
        return self._estimator_kind

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, InputTags, RegressorTags, Tags, TargetTags
        kind = self._estimator_kind
        return Tags(estimator_type=kind, target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags() if kind == "classifier" else None,
                    regressor_tags=RegressorTags() if kind == "regressor" else None,
                    input_tags=InputTags(allow_nan=True))

    def __sklearn_is_fitted__(self):
        return getattr(self, "_model", None) is not None

    def _check_fitted(self):
        if getattr(self, "_model", None) is None:
            raise not_fitted("this %s is not fitted yet; call fit first" % type(self).__name__)


def _pickled_state(obj, attr, to_bytes):
    """obj's state for pickle: its attributes less attr (the C model it
    holds), which travels as _model_bytes, to_bytes(held) (None unfitted)."""
    state = dict(obj.__dict__)
    held = state.pop(attr, None)
    state["_model_bytes"] = to_bytes(held) if held is not None else None
    return state


def _unpickle_state(obj, state, attr, from_bytes):
    """_pickled_state undone: the attributes back, attr from_bytes(the
    model's bytes), or None where there were none."""
    state = dict(state)
    data = state.pop("_model_bytes", None)
    obj.__dict__.update(state)
    setattr(obj, attr, None)
    if data is not None:
        setattr(obj, attr, from_bytes(data))


class FittedModel:
    """What every estimator holding a samebits model (self._model) offers the same
    way: where it predicts, its mode label, digest, bytes and file."""

    def _predict_data(self, X):
        from ._model import prediction_dataset
        return prediction_dataset(self, X)

    def _drop_fitted(self):
        """Forget every fitted attribute (the names ending in one underscore), so
        that a new fit or load replaces the fitted state all at once."""
        for k in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
            delattr(self, k)

    def _adopt_model(self, model, names):
        """Hold model (a samebits._model.Model) and set the attributes every family
        reads from it the same way: n_features_in_, and feature_names_in_ where the
        training data had names (an object array, or a list without NumPy).
        Returns model.info()."""
        info = model.info()
        self._model = model
        self.n_features_in_ = info["num_features"]
        if names is not None:
            np = sys.modules.get("numpy")
            self.feature_names_in_ = np.asarray(names, dtype=object) if np is not None else list(names)
        return info

    def _open_own_model(self, path_or_bytes, family):
        """The model file (or its bytes) opened, with its info, where it holds a
        model of family (the family's number); another family's file is
        InvalidInputError naming that family and this class: the first step of
        every family's load_model."""
        from .gbdt import _open_model, family_name
        model = _open_model(path_or_bytes)
        info = model.info()
        if info["family"] != family:
            raise InvalidInputError("the model file holds a %s model; a %s cannot hold it: load it with "
                                    "samebits.load_model(...)" % (family_name(info["family"]), type(self).__name__))
        return model, info

    def _file_names_params(self, source):
        """The feature names and the parameter text ({name: str}) the model file
        source stores, read before every fitted attribute is dropped (a bad file
        leaves the estimator as it was): the first step of a family's
        _load_fitted."""
        from ._model import feature_names_in_file, params_in_file
        names = feature_names_in_file(source)
        params = params_in_file(source)
        self._drop_fitted()
        return names, params

    def _class_labels(self, out):
        """A classifier's predicted labels from its model's class indices out (a
        samebits.Array): classes_[i] for each, a NumPy array when classes_ is
        one, else a list."""
        classes = self.classes_
        np = sys.modules.get("numpy")
        if np is not None and isinstance(classes, np.ndarray):
            return classes[np.asarray(out).astype(np.intp)]
        return [classes[int(v)] for v in out.tolist()]

    def _predict_device(self):
        """Where predictions are computed: where the model was trained for device="cuda",
        "opencl" or "gpu" (the best GPU present, by the library's one parser), else the CPU.
        The bits are the same either way."""
        return self.device if self.device in ("cuda", "opencl", "gpu") else None

    def numeric_mode_used(self):
        """The numeric mode label the model carries: 'identical' for every model this
        library trains (models written by older versions may carry 'deterministic'
        or 'fast', labels that never changed a code path)."""
        self._check_fitted()
        return self._model.info()["numeric_mode"]

    def digest(self):
        """Hex SHA-256 of the model bytes (the CLI's 'model digest:')."""
        self._check_fitted()
        return self._model.digest()

    @property
    def model_digest_(self):
        """digest() as a fitted attribute, computed when read: hashing the model
        bytes takes seconds for forests of deep trees (hundreds of MB), so fit
        does not pay for it. Unfitted: AttributeError, as for any fitted attribute."""
        if getattr(self, "_model", None) is None:
            raise AttributeError("model_digest_: %s is not fitted" % type(self).__name__)
        return self._model.digest()

    def model_bytes(self):
        """The model file's bytes (docs/model-format.md), as the CLI writes them."""
        self._check_fitted()
        return self._model.to_bytes()

    # ---- pickle: the model travels as its file's bytes ----
    def __getstate__(self):
        return _pickled_state(self, "_model", lambda model: model.to_bytes())

    def __setstate__(self, state):
        from ._model import Model
        _unpickle_state(self, state, "_model", Model.from_bytes)

    def save_model(self, path):
        """Write the model file atomically (the same bytes as `samebits train --out`)."""
        self._check_fitted()
        self._model.save(path)


def declare_handle_functions(prefix, own):
    """Set the ctypes signatures of a family held by its own C handle (see
    HandleModel): own ({C name: (restype, argtypes)}) and the functions every
    such family has, <prefix>_get_f32, _get_int, _to_bytes, _from_bytes,
    _save, _load, _model_digest and _free."""
    import ctypes
    from ctypes import POINTER, c_char_p, c_float, c_int, c_int64, c_size_t, c_void_p
    from ._lib import lib
    common = {
        "get_f32": (c_int, [c_void_p, c_char_p, POINTER(c_float), c_size_t, POINTER(c_size_t)]),
        "get_int": (c_int, [c_void_p, c_char_p, POINTER(c_int64)]),
        "to_bytes": (c_int, [c_void_p, c_void_p, c_size_t, POINTER(c_size_t)]),
        "from_bytes": (c_int, [c_char_p, c_size_t, POINTER(c_void_p)]),
        "save": (c_int, [c_void_p, c_char_p]),
        "load": (c_int, [c_char_p, POINTER(c_void_p)]),
        "model_digest": (c_int, [c_void_p, ctypes.c_char * 65]),
        "free": (None, [c_void_p])}
    sigs = dict(own)
    sigs.update({"%s_%s" % (prefix, k): v for k, v in common.items()})
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args


class HandleModel:
    """What a family held by its own C handle offers the same way (the MLP, the
    byte language model): its digest, bytes and file, and pickling as the
    file's bytes. self._handle is a _lib.Handle (None unfitted) over the C
    functions <_C_PREFIX>_model_digest, _to_bytes, _from_bytes, _save and _free."""

    _C_PREFIX = None  # "sb_mlp", "sb_lm"

    def _c(self, name):
        from ._lib import lib
        return getattr(lib, "%s_%s" % (self._C_PREFIX, name))

    def _handle_from_bytes(self, data):
        """A _lib.Handle over the model the file's bytes hold."""
        import ctypes
        from ._lib import Handle, check
        h = ctypes.c_void_p()
        check(self._c("from_bytes")(data, len(data), ctypes.byref(h)))
        return Handle(h, self._c("free"))

    @property
    def model_digest_(self):
        """The SHA-256 of the model file's bytes (hex), as every samebits estimator's."""
        import ctypes
        from ._lib import check
        self._check_fitted()
        buf = (ctypes.c_char * 65)()
        check(self._c("model_digest")(self._handle.ptr, buf))
        return buf.value.decode()

    def model_bytes(self):
        """The model file's bytes."""
        import ctypes
        from ._lib import check
        self._check_fitted()
        need = ctypes.c_size_t(0)
        check(self._c("to_bytes")(self._handle.ptr, None, 0, ctypes.byref(need)))
        buf = ctypes.create_string_buffer(need.value)
        check(self._c("to_bytes")(self._handle.ptr, buf, need.value, ctypes.byref(need)))
        return buf.raw[:need.value]

    def save_model(self, path):
        """Write the model file."""
        from ._lib import check
        self._check_fitted()
        check(self._c("save")(self._handle.ptr, str(path).encode()))

    # ---- pickle: the model travels as its file's bytes ----
    def __getstate__(self):
        return _pickled_state(self, "_handle", lambda h: self.model_bytes())

    def __setstate__(self, state):
        _unpickle_state(self, state, "_handle", self._handle_from_bytes)


def r2_score(y_true, y_pred, weights=None):
    """R^2 of predictions, sums by math.fsum (correctly rounded, order-free)."""
    n = len(y_true)
    w = [1.0] * n if weights is None else [float(v) for v in weights]
    sw = math.fsum(w)
    if sw == 0:
        raise InvalidInputError("score: the sample weights sum to 0")
    mean = math.fsum(wi * float(t) for wi, t in zip(w, y_true)) / sw
    ss_res = math.fsum(wi * (float(t) - float(p)) ** 2 for wi, t, p in zip(w, y_true, y_pred))
    ss_tot = math.fsum(wi * (float(t) - mean) ** 2 for wi, t in zip(w, y_true))
    if ss_tot == 0:
        return 1.0 if ss_res == 0 else 0.0
    return 1.0 - ss_res / ss_tot


def accuracy(y_true, y_pred, weights=None):
    n = len(y_true)
    w = [1.0] * n if weights is None else [float(v) for v in weights]
    sw = math.fsum(w)
    if sw == 0:
        raise InvalidInputError("score: the sample weights sum to 0")
    return math.fsum(wi for wi, t, p in zip(w, y_true, y_pred) if t == p) / sw
