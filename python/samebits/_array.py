"""samebits.Array (results) and the conversion of inputs to float32 matrices.

NumPy is optional. Inputs may be NumPy arrays (and anything NumPy converts,
such as pandas DataFrames) when NumPy is installed, any object with the buffer
protocol (array.array, memoryview, bytes-like with a numeric format) or nested
sequences of numbers. Float64 is converted to float32 once, rounding to nearest
with ties to even (what NumPy's astype(float32) and C's (float) cast do).
"""
import array as _pyarray
import ctypes
import math
import struct
import sys

from .errors import InvalidArgumentError, InvalidInputError, InvalidInputTypeError

_NATIVE_ORDER = "<" if sys.byteorder == "little" else ">"


class _Result:
    """What the float32 and int32 results share: the buffer protocol of a ctypes
    array of 1 or 2 dimensions (C order), __array_interface__ (numpy.asarray(a) is
    a zero-copy view), shape, len, tolist, tobytes, equality by shape and bytes.
    A subclass names its memoryview format (_fmt) and NumPy type code (_code)."""

    __slots__ = ()
    itemsize = 4

    def memoryview(self):
        """A memoryview of the data with the native format (memoryview(a) itself
        reports ctypes' explicit-byte-order '<f' or '<i', which NumPy reads but
        memoryview.tolist() does not)."""
        mv = memoryview(self)
        return mv.cast("B").cast(self._fmt, mv.shape)

    @property
    def shape(self):
        return memoryview(self).shape

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def __array_interface__(self):
        return {"shape": self.shape, "typestr": _NATIVE_ORDER + self._code,
                "data": (ctypes.addressof(self), False), "version": 3}

    def __len__(self):
        return self.shape[0]

    def tolist(self):
        return self.memoryview().tolist()

    def tobytes(self):
        return memoryview(self).tobytes()

    def __eq__(self, other):
        if isinstance(other, _Result) and other.dtype == self.dtype:
            return self.shape == other.shape and self.tobytes() == other.tobytes()
        return NotImplemented

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    __hash__ = None


def _typed_empty(kind, ctype, shape):
    """A zero-filled result of class kind over ctype, of shape (n,) or (n, k)."""
    base = ctype * shape[0] if len(shape) == 1 else (ctype * shape[1]) * shape[0]
    cls = type(kind.__name__, (kind, base), {"__slots__": (), "__module__": "samebits"})
    return cls()


class Array(_Result):
    """A float32 result with the buffer protocol (format 'f', 1-D or 2-D, C order)
    and __array_interface__: numpy.asarray(a) is a zero-copy view. Without NumPy:
    len(a), a[i], a[i, j], a.tolist(), a.tobytes(), a.shape, memoryview(a)."""

    __slots__ = ()
    dtype = "float32"
    _fmt, _code = "f", "f4"

    def __getitem__(self, i):
        mv = self.memoryview()
        if not isinstance(i, (int, slice, tuple)) or (isinstance(i, tuple) and
                                                      not all(isinstance(k, int) for k in i)):
            np = _numpy()
            if np is None:
                raise IndexError("samebits.Array takes int indices, slices and (i, j) without NumPy")
            return np.asarray(self)[i]  # NumPy indexing (index arrays, masks) on the zero-copy view
        if isinstance(i, tuple):
            return mv[i]
        if mv.ndim == 1:
            return mv[i] if not isinstance(i, slice) else mv[i].tolist()
        if isinstance(i, slice):
            return mv.tolist()[i]
        n, k = mv.shape
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("row index out of range")
        return mv.cast("B").cast("f")[i * k:(i + 1) * k].tolist()

    def __iter__(self):
        return iter(self.memoryview().tolist())

    # With NumPy loaded, other attributes and arithmetic act on the zero-copy view
    # numpy.asarray(self) (a.mean(), a.round(), a > 0.5, a - b...); without it they
    # do not exist.
    def __getattr__(self, name):
        np = _numpy()
        if np is None or name.startswith("__"):
            raise AttributeError("samebits.Array has no attribute %r%s" % (
                name, "" if np is not None or name.startswith("__") else " (NumPy is not installed)"))
        return getattr(np.asarray(self), name)

    def _np_op(name):
        def op(self, *args):
            np = _numpy()
            if np is None:
                return NotImplemented
            return getattr(np.asarray(self), name)(*args)
        op.__name__ = name
        return op

    for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
                  "__rtruediv__", "__pow__", "__lt__", "__le__", "__gt__", "__ge__", "__neg__", "__abs__"):
        locals()[_name] = _np_op(_name)
    del _name, _np_op

    def __repr__(self):
        vals = self.tolist()
        if len(vals) > 6:
            body = repr(vals[:3])[:-1] + ", ..., " + repr(vals[-3:])[1:]
        else:
            body = repr(vals)
        return "samebits.Array(%s, shape=%r, dtype=float32)" % (body, self.shape)

    def __reduce__(self):
        return (_from_bytes, (self.tobytes(), self.shape))


def empty(shape):
    """A zero-filled Array of float32 of shape (n,) or (n, k)."""
    return _typed_empty(Array, ctypes.c_float, shape)


def widened(a):
    """The float32 Array a widened exactly: a float64 numpy.ndarray of its shape
    when NumPy is loaded, else its (nested) lists of Python floats."""
    np = _numpy()
    return np.asarray(a).astype(np.float64) if np is not None else a.tolist()


def shaped(flat, shape):
    """The float32 values of the Array flat in shape: a float64 numpy.ndarray when
    NumPy is loaded (exact), else a samebits.Array of that shape."""
    np = _numpy()
    if np is not None:
        return np.asarray(flat).astype(np.float64).reshape(shape)
    if tuple(shape) == (len(flat),):
        return flat
    out = empty(tuple(shape))
    memoryview(out).cast("B").cast("f")[:] = memoryview(flat).cast("B").cast("f")
    return out


class IndexArray(_Result):
    """An int32 result (indices) with the buffer protocol (format 'i', 1-D or 2-D,
    C order) and __array_interface__: numpy.asarray(a) is a zero-copy int32 view.
    Without NumPy: len(a), a[i], a[i, j], a.tolist(), a.tobytes(), a.shape."""

    __slots__ = ()
    dtype = "int32"
    _fmt, _code = "i", "i4"

    def __getitem__(self, i):
        if isinstance(i, tuple):
            return self.memoryview()[i]
        return self.tolist()[i]

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self):
        return "samebits.IndexArray(%r, shape=%r, dtype=int32)" % (self.tolist(), self.shape)

    def __reduce__(self):
        return (_index_from_bytes, (self.tobytes(), self.shape))


def empty_index(shape):
    """A zero-filled IndexArray of int32 of shape (n,) or (n, k)."""
    return _typed_empty(IndexArray, ctypes.c_int32, shape)


def _index_from_bytes(data, shape):
    a = empty_index(tuple(shape))
    ctypes.memmove(a, data, len(data))
    return a


def index_pointer(a):
    """An int32* to the first element of a ctypes-backed buffer."""
    return ctypes.cast(a, ctypes.POINTER(ctypes.c_int32))


def _from_bytes(data, shape):
    a = empty(tuple(shape))
    ctypes.memmove(a, data, len(data))
    return a


def pointer(a):
    """A float* to the first element of a ctypes-backed buffer."""
    return ctypes.cast(a, ctypes.POINTER(ctypes.c_float))


# ---- inputs ------------------------------------------------------------------

class Matrix:
    """A C-order float32 matrix ready for the C API: .buf (ctypes array or NumPy array
    kept alive), .ptr (float*), .nrows, .ncols, .names (list of str or None)."""

    __slots__ = ("buf", "ptr", "nrows", "ncols", "names")


def _numpy():
    return sys.modules.get("numpy")


def _is_numpy_like(x):
    np = _numpy()
    if np is None or isinstance(x, (list, tuple, memoryview, _pyarray.array, bytes, bytearray, Array)):
        return False
    return isinstance(x, np.ndarray) or hasattr(x, "__array__") or hasattr(x, "__array_interface__")


def _column_names(x):
    cols = getattr(x, "columns", None)
    if cols is None or not hasattr(x, "dtypes"):
        return None
    names = list(cols)
    if names and all(isinstance(c, str) for c in names):
        return names
    return None


def _float32_from_format(mv, what):
    """A ctypes float array (C order) holding the buffer mv converted to float32."""
    fmt = mv.format
    order = ""
    if fmt and fmt[0] in "@=<>!":
        order, fmt = fmt[0], fmt[1:]
    native = order in ("", "@", "=") or (order == _NATIVE_ORDER) or (order == "!" and _NATIVE_ORDER == ">")
    if fmt not in ("f", "d", "e", "b", "B", "h", "H", "i", "I", "l", "L", "q", "Q", "n", "N", "?"):
        raise InvalidInputError("%s: buffer format %r is not numeric; samebits takes float32, float64, "
                                "float16, integers or booleans" % (what, mv.format))
    n = mv.nbytes // mv.itemsize if mv.itemsize else 0
    out = (ctypes.c_float * max(n, 1))()
    if n == 0:
        return out, 0
    c_order = mv.c_contiguous
    if fmt == "f" and native:
        if c_order:
            ctypes.memmove(out, _address_or_copy(mv), mv.nbytes)
        else:
            ctypes.memmove(out, mv.tobytes(order="C"), mv.nbytes)
        return out, n
    raw = mv.tobytes(order="C") if not c_order else mv
    if native and fmt in ("d", "b", "B", "h", "H", "i", "I", "l", "L", "q", "Q", "n", "N", "?"):
        flat = memoryview(raw).cast("B").cast(fmt)
        vals = _pyarray.array("f", flat if fmt != "?" else (float(v) for v in flat))
    else:
        data = bytes(raw) if not isinstance(raw, bytes) else raw
        vals = _pyarray.array("f", (v for (v,) in struct.iter_unpack((order or "@") + fmt, data)))
    ctypes.memmove(out, vals.buffer_info()[0], n * 4)
    return out, n


def _address_or_copy(mv):
    if not mv.readonly:
        return ctypes.addressof(ctypes.c_char.from_buffer(mv))
    return mv.tobytes()


_CATEGORICAL = ("a categorical feature: gradient boosting takes it through fit's categorical_feature (the forests "
                "and other estimators take none), or encode the column as numbers first")


def _utf8_key(s):
    return s.encode("utf-8")


def _is_null(v):
    if v is None:
        return True
    if isinstance(v, float) and v != v:
        return True
    pd = sys.modules.get("pandas")
    if pd is not None:
        try:
            return bool(pd.isna(v))
        except (TypeError, ValueError):
            return False
    return False


def _frame_cat_column(x, j):
    """Whether DataFrame x's column j is categorical under categorical_feature='auto':
    a pandas category column, a string column, or an object column of strings."""
    dt = x.dtypes.iloc[j] if hasattr(x.dtypes, "iloc") else list(x.dtypes)[j]
    name = str(getattr(dt, "name", dt))
    if name == "category" or name in ("string", "str") or name.startswith("string["):
        return True
    if getattr(dt, "kind", None) == "O":
        col = x.iloc[:, j]
        return any(isinstance(v, str) for v in col[:1000]) or any(isinstance(v, str) for v in col)
    return False


def encode_categorical(x, spec, tables=None, what="X"):
    """(x', features, tables): x with its categorical features' values replaced by
    category codes (float32), the features (0-based, ascending) and, for each one
    that held names (strings, a pandas category), its names sorted by their UTF-8
    bytes, code i standing for names[i]; a numeric categorical feature keeps its
    values (codes whole numbers >= 0, checked by the C library) and has no table.
    spec: 'auto' or None (a DataFrame's category and string columns), a list of
    column names or positions, or with tables (prediction) the fitted tables:
    each string maps to its code, a string the table lacks and a missing value to
    NaN (missing: the right side of every categorical split). x is not changed."""
    np = _numpy()
    frame = hasattr(x, "columns") and hasattr(x, "dtypes") and hasattr(x, "iloc")
    if not frame and not (np is not None and isinstance(x, np.ndarray) and x.ndim == 2):
        if tables or (spec not in (None, "auto") and list(spec)):
            x = np.asarray(x, dtype=object) if np is not None else x
            if np is None or x.ndim != 2:
                raise InvalidInputError("%s: categorical features need a 2-D array or a pandas DataFrame" % what)
        else:
            return x, [], {}
    ncols = x.shape[1]
    cols = list(x.columns) if frame else None
    if tables is not None:
        feats = sorted(tables)
    elif spec is None or (isinstance(spec, str) and spec == "auto"):
        feats = [j for j in range(ncols) if _frame_cat_column(x, j)] if frame else []
    else:
        if isinstance(spec, (str, bytes)) or not hasattr(spec, "__iter__"):
            raise InvalidArgumentError("categorical_feature=%r: 'auto' or a list of column names or positions"
                                       % (spec,))
        feats = []
        for c in spec:
            if isinstance(c, bool) or not isinstance(c, (int, str)) and not hasattr(c, "__index__"):
                raise InvalidArgumentError("categorical_feature: %r is neither a column name nor a position" % (c,))
            if isinstance(c, str):
                if cols is None or c not in cols:
                    raise InvalidArgumentError("categorical_feature names %r, which is not a column of %s" % (c, what))
                feats.append(cols.index(c))
            else:
                k = int(c)
                if not 0 <= k < ncols:
                    raise InvalidArgumentError("categorical_feature: position %d; %s has %d columns" % (k, what, ncols))
                feats.append(k)
        feats = sorted(set(feats))
    if not feats:
        return x, [], {}
    pd = sys.modules.get("pandas")
    out_tables = {}
    columns = {}
    for j in feats:
        col = x.iloc[:, j] if frame else x[:, j]
        dt = getattr(col, "dtype", None)
        is_cat = str(getattr(dt, "name", "")) == "category"
        numeric = not is_cat and getattr(dt, "kind", "O") in "iufb"
        if tables is None and numeric:
            continue  # numeric codes as they are
        if tables is not None:
            table = tables.get(j)
            if table is None:
                continue
        elif is_cat:
            table = sorted({str(v) for v in col.cat.categories}, key=_utf8_key)
        else:
            table = sorted({str(v) for v in col if not _is_null(v)}, key=_utf8_key)
        if numeric and tables is not None:
            vals = [str(v) if not _is_null(v) else None for v in col]  # numbers given where names were fitted
        else:
            vals = None
        if pd is not None and vals is None:
            s = pd.Series(col, copy=False) if not frame else col
            if is_cat:
                s = s.astype(object)
            mask = s.isna().to_numpy() if hasattr(s, "isna") else None
            strs = s.astype(str)
            idx = pd.Index(table).get_indexer(strs).astype(np.float32)
            idx[idx < 0] = np.nan
            if mask is not None:
                idx[mask] = np.nan
            columns[j] = idx
        else:
            pos = {t: i for i, t in enumerate(table)}
            seq = vals if vals is not None else [None if _is_null(v) else str(v) for v in col]
            codes = [float(pos[v]) if v is not None and v in pos else math.nan for v in seq]
            columns[j] = np.asarray(codes, dtype=np.float32)
        out_tables[j] = table
    if not columns:
        return x, feats, out_tables
    if frame:
        y = x.copy(deep=False)
        for j, c in columns.items():
            y.isetitem(j, c)
        return y, feats, out_tables
    y = np.array(x, dtype=object, copy=True)
    for j, c in columns.items():
        y[:, j] = c
    return y, feats, out_tables


def _to_float(v, what):
    if v is None:
        return math.nan
    if isinstance(v, (str, bytes)):
        raise InvalidInputError("%s: %r is not a number (%s)" % (what, v, _CATEGORICAL))
    try:
        return float(v)
    except ValueError:
        raise InvalidInputError("%s: %r is not a number" % (what, v)) from None
    except TypeError as e:
        raise InvalidInputTypeError("%s: %r is not a number: %s" % (what, v, e)) from None


def _column_label(x, j, what):
    cols = getattr(x, "columns", None)
    if cols is not None and hasattr(x, "dtypes"):
        try:
            return "%s column %r" % (what, list(cols)[j])
        except IndexError:
            pass
    return "%s column %d" % (what, j)


def _check_frame_columns(x, what):
    """A DataFrame's category and string columns refused by name (before converting)."""
    dtypes = getattr(x, "dtypes", None)
    cols = getattr(x, "columns", None)
    if dtypes is None or cols is None or not hasattr(dtypes, "__iter__"):
        return
    for j, dt in enumerate(dtypes):
        name = str(getattr(dt, "name", dt))
        if name == "category":
            raise InvalidInputError("%s is a pandas category column: %s" % (_column_label(x, j, what),
                                                                          _CATEGORICAL))
        if name in ("string", "str") or name.startswith("string["):
            raise InvalidInputError("%s holds strings: %s" % (_column_label(x, j, what), _CATEGORICAL))


def _object_error(x, a, what):
    """The error for a 2-D object array a (of input x) that float32 does not take:
    the first value that is not a number, named by column (and row)."""
    for j in range(a.shape[1]):
        for i in range(a.shape[0]):
            v = a[i, j]
            if v is None:
                continue
            where = "%s (row %d)" % (_column_label(x, j, what), i)
            if isinstance(v, (str, bytes)):
                try:
                    float(v)
                    continue
                except ValueError:
                    raise InvalidInputError("%s holds strings (%r): %s" % (where, v, _CATEGORICAL)) from None
            try:
                float(v)
            except TypeError as e:
                raise InvalidInputTypeError("%s holds %r, which is not a number: float() argument must be a "
                                            "string or a real number, not '%s' (%s)"
                                            % (where, v, type(v).__name__, e)) from None
            except ValueError as e:
                raise InvalidInputError("%s holds %r, which is not a number: %s" % (where, v, e)) from None
    return None


def _is_sparse(x):
    return hasattr(x, "tocsr") and hasattr(x, "nnz") or type(x).__module__.startswith("scipy.sparse")


def matrix(x, what="X"):
    """Convert a 2-D input to a C-order float32 Matrix (one conversion at most; the C
    library copies it into its dataset)."""
    if _is_sparse(x):
        raise InvalidInputError("%s is a sparse matrix: sparse input is not supported; give a dense array "
                                "(X.toarray())" % what)
    m = Matrix()
    m.names = _column_names(x)
    if _is_numpy_like(x):
        np = _numpy()
        _check_frame_columns(x, what)
        try:
            if m.names is not None and hasattr(x, "to_numpy"):
                a = x.to_numpy(dtype=np.float32, na_value=np.nan)
            else:
                a = np.asarray(x)
        except (TypeError, ValueError) as e:
            if hasattr(x, "to_numpy"):
                try:
                    obj = x.to_numpy(dtype=object)
                except (TypeError, ValueError):
                    obj = None
                if obj is not None and getattr(obj, "ndim", 0) == 2:
                    _object_error(x, obj, what)
            raise InvalidInputError("%s cannot be converted to float32: %s" % (what, e)) from None
        if a.ndim != 2:
            raise InvalidInputError("%s must be 2-D (n_samples, n_features); got %d-D of shape %r. Reshape your "
                                    "data (X.reshape(-1, 1) for one feature, X.reshape(1, -1) for one sample)"
                                    % (what, a.ndim, a.shape))
        if a.dtype.kind == "c":
            raise InvalidInputError("%s: Complex data not supported" % what)
        if a.dtype.kind in "US":
            raise InvalidInputError("%s has dtype %s (strings): %s" % (what, a.dtype, _CATEGORICAL))
        if a.dtype.kind not in "fiubO":
            raise InvalidInputError("%s has dtype %s; samebits takes numbers (float32, float64, integers, "
                                    "booleans)" % (what, a.dtype))
        if a.dtype.kind == "O":  # Python numbers in an object array: each converted once
            try:
                a = a.astype(np.float32)
            except (TypeError, ValueError) as e:
                if a.ndim == 2:
                    _object_error(x, a, what)
                raise InvalidInputError("%s has dtype object with values that are not numbers: %s"
                                        % (what, e)) from None
        if a.shape[0] < 1 or a.shape[1] < 1:
            raise InvalidArgumentError("a dataset needs at least one row and one column: %s has %d sample(s) "
                                       "and %d feature(s) (shape=%r) while a minimum of 1 is required."
                                       % (what, a.shape[0], a.shape[1], a.shape))
        a = np.ascontiguousarray(a, dtype=np.float32)
        m.buf = a
        m.ptr = a.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        m.nrows, m.ncols = int(a.shape[0]), int(a.shape[1])
        return m
    if _has_buffer(x):
        mv = memoryview(x)
        if mv.ndim != 2:
            raise InvalidInputError("%s must be 2-D (n_samples, n_features); got a %d-D buffer of shape %r. "
                                    "Reshape your data" % (what, mv.ndim, mv.shape))
        m.buf, _ = _float32_from_format(mv, what)
        m.nrows, m.ncols = mv.shape
    else:
        rows = _sequence(x, what)
        flat = []
        ncols = None
        for i, row in enumerate(rows):
            if isinstance(row, (str, bytes)) or not hasattr(row, "__iter__"):
                raise InvalidInputError("%s must be 2-D (n_samples, n_features): row %d is %r, not a sequence"
                                        % (what, i, row))
            try:
                vals = [_to_float(v, "%s[%d]" % (what, i)) for v in row]
            except InvalidInputError:
                for j, v in enumerate(row):
                    _to_float(v, "%s[%d][%d] (column %d)" % (what, i, j, j))
                raise
            if ncols is None:
                ncols = len(vals)
            elif len(vals) != ncols:
                raise InvalidInputError("%s is ragged: row 0 has %d values, row %d has %d"
                                        % (what, ncols, i, len(vals)))
            flat.extend(vals)
        vals = _pyarray.array("f", flat)
        m.buf = (ctypes.c_float * max(len(vals), 1))()
        if vals:
            ctypes.memmove(m.buf, vals.buffer_info()[0], len(vals) * 4)
        m.nrows, m.ncols = len(rows), ncols or 0
    m.ptr = pointer(m.buf)
    return m


def _has_buffer(x):
    if isinstance(x, (str, bytes, bytearray)):
        return False  # text, or a byte string: not a table of numbers
    try:
        memoryview(x)
    except TypeError:
        return False
    return True


def _sequence(x, what):
    if isinstance(x, (str, bytes)):
        raise InvalidInputError("%s is a string, not an array" % what)
    try:
        return list(x)
    except TypeError:
        raise InvalidInputError("%s of type %s is not an array: give a NumPy array, a buffer "
                                "(array.array, memoryview) or nested lists" % (what, type(x).__name__)) from None


def values(y, what="y"):
    """A 1-D input as a Python list of its values (labels of any type)."""
    if _is_numpy_like(y):
        np = _numpy()
        a = np.asarray(y)
        if a.ndim == 2 and a.shape[1] == 1:
            a = a.ravel()
        if a.ndim != 1:
            raise InvalidInputError("%s must be 1-D; got shape %r" % (what, a.shape))
        return a.tolist()
    if _has_buffer(y):
        mv = memoryview(y)
        if mv.ndim == 2 and mv.shape[1] == 1:
            pass
        elif mv.ndim != 1:
            raise InvalidInputError("%s must be 1-D; got a %d-D buffer" % (what, mv.ndim))
        try:
            vals = mv.tolist()
        except NotImplementedError:  # a non-native format: unpack it by struct
            vals = [v for (v,) in struct.iter_unpack(mv.format, mv.tobytes())]
        return [v[0] for v in vals] if mv.ndim == 2 else vals
    seq = _sequence(y, what)
    out = []
    for v in seq:
        if isinstance(v, (list, tuple)):
            if len(v) != 1:
                raise InvalidInputError("%s must be 1-D" % what)
            v = v[0]
        out.append(v)
    return out


def row_weights(sample_weight, nrows):
    """sample_weight as vector() gives it (values, pointer, count), or None
    where it is None; a count other than the nrows rows of X is
    InvalidInputError naming both."""
    if sample_weight is None:
        return None
    w = vector(sample_weight, "sample_weight")
    if w[2] != nrows:
        raise InvalidInputError("X has %d rows but sample_weight has %d values" % (nrows, w[2]))
    return w


def vector(y, what="y"):
    """A 1-D numeric input as a ctypes float32 array (and its length)."""
    if _is_numpy_like(y):
        np = _numpy()
        a = np.asarray(y)
        if a.ndim == 2 and a.shape[1] == 1:
            a = a.ravel()
        if a.ndim != 1:
            raise InvalidInputError("%s must be 1-D; got shape %r" % (what, a.shape))
        if a.dtype.kind not in "fiubO":
            raise InvalidInputError("%s has dtype %s; numbers are needed" % (what, a.dtype))
        try:
            a = np.ascontiguousarray(a, dtype=np.float32)
        except (TypeError, ValueError) as e:
            raise InvalidInputError("%s holds values that are not numbers: %s" % (what, e)) from None
        return a, a.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), int(a.shape[0])
    if _has_buffer(y):
        mv = memoryview(y)
        if mv.ndim == 2 and mv.shape[1] == 1:
            n = mv.shape[0]
        elif mv.ndim == 1:
            n = mv.shape[0]
        else:
            raise InvalidInputError("%s must be 1-D; got a %d-D buffer" % (what, mv.ndim))
        buf, _ = _float32_from_format(mv, what)
        return buf, pointer(buf), n
    vals = _pyarray.array("f", [_to_float(v, what) for v in values(y, what)])
    buf = (ctypes.c_float * max(len(vals), 1))()
    if vals:
        ctypes.memmove(buf, vals.buffer_info()[0], len(vals) * 4)
    return buf, pointer(buf), len(vals)
