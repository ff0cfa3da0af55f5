"""samebits.linalg: the identical linear-algebra core from Python.

matmul(a, b, device="cpu") is the product of two float32 matrices whose every
bit is the same on every device and thread count (the C library's sb_gemm;
docs/linalg.md says what it promises and refuses). NumPy is optional: inputs
are anything samebits.Array's converter takes (NumPy arrays, buffers, nested
lists), and the result is a samebits.Array (numpy.asarray(r) is a zero-copy view).
"""
from . import _array
from ._lib import check as _check, lib as _lib
from .errors import InvalidArgumentError, InvalidInputError

__all__ = ["matmul"]


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
    out = _array.empty((max(m, 1), max(n, 1)) if m == 0 or n == 0 else (m, n))
    if m == 0 or n == 0:
        return out
    dev = None if device is None else str(device).encode()
    _check(_lib.sb_gemm(dev, int(bool(transpose_a)), int(bool(transpose_b)), m, n, ka, ma.ptr, max(ma.ncols, 1),
                        mb.ptr, max(mb.ncols, 1), _array.pointer(out), n))
    return out
