"""samebits.linalg: the identical linear-algebra core from Python.

cholesky, solve_triangular, eigh, random_matrix and random_projection are the
factorizations, solves, eigenvalues and projections of the same core (the C
library's sb_linalg_*; docs/linalg.md, "Factorizations, solves, eigenvalues and
projections"): each result is identical on every device and thread count.

matmul(a, b, device="cpu") is the product of two float32 matrices whose every
bit is the same on every device and thread count (the C library's sb_gemm;
docs/linalg.md says what it promises and refuses). The reductions, distances
and selection beside it (row_sums, col_sums, sums, sq_norms, sqdist, argmin,
argmax, topk) are exact and rounded once, or a total order with ties to the
lower index (docs/linalg.md, "Reductions, distances and selection"). NumPy is
optional: inputs are anything samebits.Array's converter takes (NumPy arrays,
buffers, nested lists), and results are samebits.Array (float32) or
samebits.IndexArray (int32), which numpy.asarray views without copying.
"""
from . import _array
from ._lib import check as _check, lib as _lib
from .errors import InvalidArgumentError, InvalidInputError

__all__ = ["matmul", "row_sums", "col_sums", "sums", "sq_norms", "sqdist", "argmin", "argmax", "topk",
           "cholesky", "solve_triangular", "eigh", "random_matrix", "random_projection"]


def _mat(x, what):
    """A C-order float32 matrix of x; 1-D input is refused by name (no broadcasting)."""
    try:
        m = _array.matrix(x, what)
    except InvalidArgumentError:
        # an empty dimension: allowed here (the product of an m x 0 and a 0 x n is zeros)
        if _array._is_numpy_like(x):
            np = _array._numpy()
            a = np.ascontiguousarray(np.asarray(x), dtype=np.float32)
            if a.ndim != 2:
                raise InvalidInputError("%s must be 2-D; got shape %r" % (what, a.shape)) from None
            m = _array.Matrix()
            m.buf = a
            m.ptr = a.ctypes.data_as(_array.ctypes.POINTER(_array.ctypes.c_float))
            m.nrows, m.ncols = int(a.shape[0]), int(a.shape[1])
            m.names = None
            return m
        raise
    return m


def matmul(a, b, device="cpu", transpose_a=False, transpose_b=False):
    """op(a) @ op(b) as float32, identical on every device: "cpu", "cuda",
    "opencl" or "gpu". a is m x k (k x m with transpose_a), b is k x n (n x k with
    transpose_b). Each row of op(a) and column of op(b) is scaled by a power of two
    and rounded to 31-bit integers whose products are summed exactly; every element
    is that exact sum rounded once to float32. Returns a samebits.Array (m, n)."""
    ma, mb = _mat(a, "a"), _mat(b, "b")
    m, ka = (ma.ncols, ma.nrows) if transpose_a else (ma.nrows, ma.ncols)
    kb, n = (mb.ncols, mb.nrows) if transpose_b else (mb.nrows, mb.ncols)
    if ka != kb:
        raise InvalidArgumentError("matmul: op(a) is %d x %d and op(b) is %d x %d: the inner sizes differ"
                                   % (m, ka, kb, n))
    out = _array.empty((m, n))
    if m == 0 or n == 0:
        return out
    dev = None if device is None else str(device).encode()
    _check(_lib.sb_gemm(dev, int(bool(transpose_a)), int(bool(transpose_b)), m, n, ka, ma.ptr, max(ma.ncols, 1),
                        mb.ptr, max(mb.ncols, 1), _array.pointer(out), n))
    return out


# ---- factorizations, solves, eigenvalues, projections (sb_linalg_*, src/linalg/solve.c) ----

_KINDS = {"normal": 0, "rademacher": 1}


def _dev(device):
    return None if device is None else str(device).encode()


def _axis(axis):
    """0 (each column) or 1 (each row); -2 and -1 as NumPy spells them for 2-D."""
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise InvalidArgumentError("axis must be 0 (each column) or 1 (each row); got %r" % (axis,))
    if axis in (-2, -1):
        axis += 2
    if axis not in (0, 1):
        raise InvalidArgumentError("axis must be 0 (each column) or 1 (each row); got %r" % (axis,))
    return axis


def _lines(fn_rows, fn_cols, x, axis, device, index):
    mx = _mat(x, "x")
    axis = _axis(axis)
    count = mx.nrows if axis == 1 else mx.ncols
    out = _array.empty_index((count,)) if index else _array.empty((count,))
    fn = fn_rows if axis == 1 else fn_cols
    ptr = _array.index_pointer(out) if index else _array.pointer(out)
    if index:
        _check(fn(_dev(device), axis, mx.nrows, mx.ncols, mx.ptr, max(mx.ncols, 1), ptr))
    else:
        _check(fn(_dev(device), mx.nrows, mx.ncols, mx.ptr, max(mx.ncols, 1), ptr))
    return out


def sums(x, axis=1, device="cpu"):
    """The sums of the rows (axis=1, m values) or columns (axis=0, n values) of
    the matrix x, each the exact sum of its float32 elements rounded once to
    float32 (nearest, ties to even): the same bits on every device, thread
    count and order. NaN, or +inf with -inf, gives NaN; an exact zero is -0 only
    when every element is -0. Returns a samebits.Array."""
    return _lines(_lib.sb_linalg_row_sums, _lib.sb_linalg_col_sums, x, axis, device, False)


def row_sums(x, device="cpu"):
    """sums(x, axis=1): the exact sum of each row, rounded once."""
    return sums(x, 1, device)


def col_sums(x, device="cpu"):
    """sums(x, axis=0): the exact sum of each column, rounded once."""
    return sums(x, 0, device)


def sq_norms(x, axis=1, device="cpu"):
    """The squared L2 norms of the rows (axis=1) or columns (axis=0): the sum of
    the exact squares, rounded once to float32. NaN in the line gives NaN, else
    an infinity gives +inf. Returns a samebits.Array."""
    return _lines(_lib.sb_linalg_row_sq_norms, _lib.sb_linalg_col_sq_norms, x, axis, device, False)


def sqdist(x, y, device="cpu"):
    """The squared Euclidean distances D[i, j] = ||x_i - y_j||^2 between the rows
    of x (m x d) and y (n x d): the exact real value rounded once to float32, so
    never negative, 0 exactly for equal rows, and symmetric. A NaN in either row,
    or infinities of the same sign in one column, give NaN; other infinities
    +inf. Returns a samebits.Array (m, n)."""
    mx, my = _mat(x, "x"), _mat(y, "y")
    if mx.ncols != my.ncols:
        raise InvalidArgumentError("sqdist: x has %d columns and y has %d: the rows differ in length"
                                   % (mx.ncols, my.ncols))
    m, n, d = mx.nrows, my.nrows, mx.ncols
    out = _array.empty((m, n))
    if m == 0 or n == 0:
        return out
    _check(_lib.sb_linalg_sqdist(_dev(device), m, n, d, mx.ptr, max(d, 1), my.ptr, max(d, 1), _array.pointer(out),
                                 n))
    return out


def argmin(x, axis=1, device="cpu"):
    """The index of the smallest element of each row (axis=1) or column (axis=0)
    under a total order: -0 before +0, every NaN after every number, ties to the
    lower index. Returns a samebits.IndexArray (int32)."""
    return _lines(_lib.sb_linalg_argmin, _lib.sb_linalg_argmin, x, axis, device, True)


def argmax(x, axis=1, device="cpu"):
    """The index of the largest element of each row (axis=1) or column (axis=0):
    +0 before -0, every NaN after every number (a NaN is never the largest
    unless the line is all NaN), ties to the lower index. A samebits.IndexArray."""
    return _lines(_lib.sb_linalg_argmax, _lib.sb_linalg_argmax, x, axis, device, True)


def topk(x, k, largest=False, device="cpu"):
    """The k smallest (or, with largest=True, largest) elements of each row of x,
    in that order, under argmin's (argmax's) total order with ties to the lower
    index: (values, indices), a samebits.Array (m, k) holding the input's bits
    and a samebits.IndexArray (m, k). 1 <= k <= the row length; a larger k is
    refused (InvalidArgumentError), never clamped."""
    if isinstance(k, bool) or not isinstance(k, int):
        raise InvalidArgumentError("topk: k must be an int; got %r" % (k,))
    mx = _mat(x, "x")
    m = mx.nrows
    shape = (m, k) if k > 0 else (m, 1)
    vals, idx = _array.empty(shape), _array.empty_index(shape)
    _check(_lib.sb_linalg_topk(_dev(device), int(bool(largest)), m, mx.ncols, mx.ptr, max(mx.ncols, 1), k,
                               _array.pointer(vals), _array.index_pointer(idx)))
    return vals, idx
def _square(a, what):
    m = _mat(a, what)
    if m.nrows != m.ncols:
        raise InvalidInputError("%s must be square; got %d x %d" % (what, m.nrows, m.ncols))
    return m


def _kind(kind):
    if kind not in _KINDS:
        raise InvalidArgumentError("kind must be 'normal' or 'rademacher'; got %r" % (kind,))
    return _KINDS[kind]


def cholesky(a, device="cpu"):
    """The lower triangular L with a = L @ L.T for a symmetric positive definite
    float32 matrix (only its lower triangle is read), +0 above the diagonal,
    identical on every device ("cpu", "cuda", "opencl", "gpu"). A matrix that is
    not positive definite raises InvalidInputError naming the refused column."""
    m = _square(a, "a")
    n = m.nrows
    out = _array.empty((n, n))
    _check(_lib.sb_linalg_cholesky(_dev(device), n, m.ptr, max(n, 1), _array.pointer(out), max(n, 1)))
    return out


def solve_triangular(l, b, trans=False, device="cpu"):
    """x with l @ x = b (or l.T @ x = b with trans=True) for a lower triangular l
    (only its lower triangle is read); b is 1-D (n,) or 2-D (n, k), and x has
    b's shape. Fixed-order substitution, identical on every device."""
    ml = _square(l, "l")
    n = ml.nrows
    one_d = False
    if _array._is_numpy_like(b):
        np = _array._numpy()
        bb = np.asarray(b)
        if bb.ndim == 1:
            one_d = True
            bb = bb.reshape(-1, 1)
        mb = _mat(bb, "b")
    elif _array._has_buffer(b) and memoryview(b).ndim == 1:
        one_d = True
        buf, ptr, nb = _array.vector(b, "b")
        mb = _array.Matrix()
        mb.buf, mb.ptr, mb.nrows, mb.ncols, mb.names = buf, ptr, nb, 1, None
    else:
        rows = list(b)
        if rows and not hasattr(rows[0], "__iter__"):
            one_d = True
            rows = [[v] for v in rows]
        mb = _mat(rows, "b")
    if mb.nrows != n:
        raise InvalidArgumentError("solve_triangular: l is %d x %d but b has %d rows" % (n, n, mb.nrows))
    k = mb.ncols
    out = _array.empty((n,) if one_d else (n, k))
    if n == 0 or k == 0:
        return out
    _check(_lib.sb_linalg_solve_triangular(_dev(device), int(bool(trans)), n, k, ml.ptr, max(n, 1), mb.ptr,
                                           max(k, 1), _array.pointer(out), max(k, 1)))
    return out


def eigh(a, device="cpu", eigenvectors=True, info=False):
    """Eigenvalues (descending; equal ones in the order of their diagonal place)
    and eigenvectors (columns; each one's largest-magnitude component positive,
    the lowest index among equals) of a symmetric float32 matrix whose lower
    triangle is read, by the cyclic Jacobi method in row-cyclic order; identical
    on every device. Returns (w, v), or w alone with eigenvectors=False (the same
    bits), and with info=True also {"sweeps": ..., "rotations": ...}.
    Note the order: numpy.linalg.eigh returns ascending eigenvalues."""
    m = _square(a, "a")
    n = m.nrows
    w = _array.empty((n,))
    v = _array.empty((n, n)) if eigenvectors else None
    sweeps, rotations = _array.ctypes.c_int32(0), _array.ctypes.c_int64(0)
    if n > 0:
        _check(_lib.sb_linalg_eigh(_dev(device), n, m.ptr, max(n, 1), _array.pointer(w),
                                   _array.pointer(v) if v is not None else None, max(n, 1),
                                   _array.ctypes.byref(sweeps), _array.ctypes.byref(rotations)))
    res = (w, v) if eigenvectors else (w,)
    if info:
        res = res + ({"sweeps": sweeps.value, "rotations": rotations.value},)
    return res[0] if len(res) == 1 else res


def random_matrix(rows, cols, seed=0, kind="normal", device="cpu"):
    """The rows x cols random matrix of kind ("normal": Marsaglia's polar method;
    "rademacher": +1/-1) and seed: element (r, c) is a pure function of (seed,
    kind, r*cols + c) (Philox4x32-10), identical on every device."""
    rows, cols = int(rows), int(cols)
    out = _array.empty((rows, cols))
    if rows > 0 and cols > 0:
        _check(_lib.sb_linalg_random_matrix(_dev(device), _kind(kind), int(seed) & (2 ** 64 - 1), rows, cols,
                                            _array.pointer(out), cols))
    return out


def random_projection(a, l, seed=0, kind="normal", device="cpu"):
    """Y = a @ Omega, the sketch of a randomized SVD: a is m x n, Omega is
    random_matrix(n, l, seed, kind), the product the identical GEMM (matmul's).
    Returns a samebits.Array (m, l), identical on every device."""
    ma = _mat(a, "a")
    m, n, l = ma.nrows, ma.ncols, int(l)
    if l < 0:
        raise InvalidArgumentError("random_projection: l must be >= 0; got %d" % l)
    out = _array.empty((m, l))
    if m == 0 or l == 0:
        return out
    _check(_lib.sb_linalg_projection(_dev(device), _kind(kind), int(seed) & (2 ** 64 - 1), m, n, l, ma.ptr,
                                     max(n, 1), _array.pointer(out), l))
    return out

# ---- end of factorizations, solves, eigenvalues, projections ----
