"""What the time-series estimators (exponential smoothing, ARIMA) share: the
series conversion and the ctypes plumbing of a fitted sb_<family> batch.

Nothing numeric is computed here: the C library fits, forecasts and digests.
Values are float64 throughout. NumPy is optional: with it, arrays come back as
numpy.ndarray (float64); without it, as lists of floats.
"""
import ctypes
from ctypes import POINTER, byref, c_char_p, c_double, c_int, c_int64, c_size_t, c_void_p

from ._lib import Handle, check, lib, params as _params
from .errors import InvalidInputError, not_fitted

_P = POINTER


def declare(family, extra):
    """Set the ctypes signatures of sb_<family>_*: the calls every batch
    family has, plus the family's own (extra: name -> (restype, argtypes))."""
    common = {
        "fit": (c_int, [c_void_p, _P(c_double), _P(c_int64), c_int64, c_void_p, _P(c_void_p)]),
        "nseries": (c_int, [c_void_p, _P(c_int64)]),
        "get_array": (c_int, [c_void_p, c_int64, c_char_p, _P(c_double), c_size_t, _P(c_size_t)]),
        "get_int": (c_int, [c_void_p, c_int64, c_char_p, _P(c_int64)]),
        "digest": (c_int, [c_void_p, c_int64, ctypes.c_char * 65]),
        "model_digest": (c_int, [c_void_p, ctypes.c_char * 65]),
        "to_bytes": (c_int, [c_void_p, c_void_p, c_size_t, _P(c_size_t)]),
        "from_bytes": (c_int, [c_char_p, c_size_t, _P(c_void_p)]),
        "free": (None, [c_void_p])}
    common.update(extra)
    for verb, (res, args) in common.items():
        fn = getattr(lib, "sb_%s_%s" % (family, verb))
        fn.restype, fn.argtypes = res, args


def _numpy():
    try:
        import numpy
        return numpy
    except ImportError:
        return None


def _out(values):
    np = _numpy()
    return np.array(values, dtype=np.float64) if np is not None else list(values)


def _array(y, what="y"):
    """y as a 1-d float64 NumPy array (NumPy present; _series' checks and
    messages)."""
    if isinstance(y, (str, bytes)):
        raise InvalidInputError("%s must be a sequence of numbers, got %s" % (what, type(y).__name__))
    np = _numpy()
    try:
        a = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InvalidInputError("%s must be numbers: %s" % (what, e)) from None
    if a.ndim == 2 and 1 in a.shape:
        a = a.ravel()
    if a.ndim != 1:
        raise InvalidInputError("%s must be one series (1-d), got shape %r" % (what, a.shape))
    return a


def _series(y, what="y"):
    """y as a ctypes double array (one copy, float64)."""
    np = _numpy()
    if np is not None:
        a = np.ascontiguousarray(_array(y, what))
        return (c_double * a.size).from_buffer_copy(a.tobytes()) if a.size else (c_double * 0)()
    if isinstance(y, (str, bytes)):
        raise InvalidInputError("%s must be a sequence of numbers, got %s" % (what, type(y).__name__))
    try:
        vals = [float(v) for v in y]
    except (TypeError, ValueError) as e:
        raise InvalidInputError("%s must be numbers: %s" % (what, e)) from None
    return (c_double * len(vals))(*vals)


def read_model_arg(path_or_bytes):
    """load_model's argument as bytes: a path is read, bytes-like is copied."""
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return bytes(path_or_bytes)
    with open(path_or_bytes, "rb") as f:
        return f.read()


class Batch:
    """A fitted sb_<family> batch; a subclass names the family (FAMILY) and
    adds its own calls (forecast and the like)."""

    FAMILY = None

    def _fn(self, verb):
        return getattr(lib, "sb_%s_%s" % (self.FAMILY, verb))

    @classmethod
    def from_bytes(cls, data):
        """A batch from a model file's bytes (sb_<family>_from_bytes)."""
        data = bytes(data)
        h = c_void_p()
        check(getattr(lib, "sb_%s_from_bytes" % cls.FAMILY)(data, len(data), byref(h)))
        b = cls.__new__(cls)
        b.handle = Handle(h, getattr(lib, "sb_%s_free" % cls.FAMILY))
        n = c_int64(0)
        check(getattr(lib, "sb_%s_nseries" % cls.FAMILY)(h, byref(n)))
        b.n = n.value
        return b

    def __init__(self, pairs, series):
        series = list(series)
        np = _numpy()
        if np is not None:
            # one concatenation (the values' bits as they are), not a ctypes copy a series
            arrs = [_array(s, "series %d" % i) for i, s in enumerate(series)]
            lens = [a.size for a in arrs]
            y = np.concatenate(arrs) if arrs and sum(lens) else np.zeros(1)
            offs = np.zeros(len(arrs) + 1, dtype=np.int64)
            offs[1:] = np.cumsum(lens, dtype=np.int64)
            yp, op = y.ctypes.data_as(_P(c_double)), offs.ctypes.data_as(_P(c_int64))
        else:
            ys = [_series(s, "series %d" % i) for i, s in enumerate(series)]
            total = sum(len(a) for a in ys)
            yp = (c_double * max(total, 1))()
            op = (c_int64 * (len(ys) + 1))()
            pos = 0
            for i, a in enumerate(ys):
                ctypes.memmove(ctypes.addressof(yp) + 8 * pos, a, 8 * len(a))
                pos += len(a)
                op[i + 1] = pos
        p = _params(pairs)
        h = c_void_p()
        check(self._fn("fit")(p.ptr, yp, op, len(series), None, byref(h)))
        self.handle = Handle(h, self._fn("free"))
        self.n = len(series)

    def to_bytes(self):
        need = c_size_t(0)
        check(self._fn("to_bytes")(self.handle.ptr, None, 0, byref(need)))
        buf = ctypes.create_string_buffer(need.value)
        check(self._fn("to_bytes")(self.handle.ptr, buf, need.value, byref(need)))
        return buf.raw[:need.value]

    def array(self, i, name):
        need = c_size_t(0)
        check(self._fn("get_array")(self.handle.ptr, i, name.encode(), None, 0, byref(need)))
        buf = (c_double * max(need.value, 1))()
        if need.value:
            check(self._fn("get_array")(self.handle.ptr, i, name.encode(), buf, need.value, byref(need)))
        return list(buf[:need.value])

    def integer(self, i, name):
        v = c_int64(0)
        check(self._fn("get_int")(self.handle.ptr, i, name.encode(), byref(v)))
        return v.value

    def digest(self, i):
        buf = (ctypes.c_char * 65)()
        check(self._fn("digest")(self.handle.ptr, i, buf))
        return buf.value.decode()

    def model_digest(self):
        buf = (ctypes.c_char * 65)()
        check(self._fn("model_digest")(self.handle.ptr, buf))
        return buf.value.decode()


class BatchModelFile:
    """The model file of an estimator fitted into a Batch (self._batch):
    model_digest_, model_bytes and save_model; mixed in before Estimator."""

    def _check_fitted(self):
        if getattr(self, "_batch", None) is None:
            raise not_fitted("this %s is not fitted yet; call fit first" % type(self).__name__)

    @property
    def model_digest_(self):
        """SHA-256 of the model file's bytes (the digest that closes the file),
        as every samebits estimator's model_digest_; the whole batch."""
        self._check_fitted()
        return self._batch.model_digest()

    def model_bytes(self):
        """The model file's bytes (docs/model-format.md: payload ETSM or ARIM)."""
        self._check_fitted()
        return self._batch.to_bytes()

    def save_model(self, path):
        """Write the model file (samebits.load_model reads it back)."""
        with open(path, "wb") as f:
            f.write(self.model_bytes())
        return self
