"""samebits.linalg's reductions, distances and selection against an independent
exact reference.

The reference is the contract of docs/linalg.md ("Reductions, distances and
selection") written a second time in Python's exact rationals: sums and squared
norms as Fractions rounded once to float32, distances as sum (x - y)^2 over
Fractions (not the expansion the C code uses), and selection as a sort of
Python floats by an explicit key (value, then the sign of zero, NaN last),
then index. Every result must agree bit for bit on the cpu at 1, 2 and 7
threads and on OpenCL (PoCL here). Shapes reach the host's parts (rows and
columns beyond 65536 elements), the device's parts (beyond 256) and the exact
accumulators' carry flushes (beyond 16384 columns).
"""
import ctypes
import math
import random
from fractions import Fraction

import pytest

import samebits
from exact_ref import NINF, PINF, QNAN, bits, f32, from_bits, round_f32_bits  # noqa: F401
from samebits import linalg

FLT_MAX = from_bits(0x7F7FFFFF)
TINY = from_bits(1)


# ---- the reference ----------------------------------------------------------

def ref_sum(line):
    if any(math.isnan(v) for v in line) or (float("inf") in line and float("-inf") in line):
        return QNAN
    if float("inf") in line:
        return PINF
    if float("-inf") in line:
        return NINF
    s = sum((Fraction(v) for v in line), Fraction(0))
    if s == 0:
        return 0x80000000 if line and all(bits(v) == 0x80000000 for v in line) else 0
    return round_f32_bits(s)


def ref_sq_norm(line):
    if any(math.isnan(v) for v in line):
        return QNAN
    if any(math.isinf(v) for v in line):
        return PINF
    return round_f32_bits(sum((Fraction(v) ** 2 for v in line), Fraction(0)))


def ref_sqdist(x, y):
    if any(math.isnan(v) for v in x) or any(math.isnan(v) for v in y):
        return QNAN
    if any(math.isinf(a) and a == b for a, b in zip(x, y)):
        return QNAN  # inf - inf
    if any(math.isinf(v) for v in x) or any(math.isinf(v) for v in y):
        return PINF
    return round_f32_bits(sum(((Fraction(a) - Fraction(b)) ** 2 for a, b in zip(x, y)), Fraction(0)))


def order_key(v, largest):
    """Smallest first: numbers ascending, -0 before +0, NaN last; largest first:
    numbers descending, +0 before -0, NaN last."""
    if math.isnan(v):
        return (1, 0.0, 0)
    neg = math.copysign(1.0, v) < 0
    if largest:
        return (0, -v, 1 if neg else 0)
    return (0, v, 0 if neg else 1)


def ref_order(line, largest):
    return sorted(range(len(line)), key=lambda q: (order_key(line[q], largest), q))


def cols(x):
    return [list(c) for c in zip(*x)]


# ---- the data ---------------------------------------------------------------

def hostile_value(r, kind):
    if kind == "plain":
        return f32(r.uniform(-4, 4))
    if kind == "spread":
        return f32(r.choice((-1, 1)) * r.uniform(1, 2) * 2.0 ** r.randint(-60, 60))
    if kind == "ties":
        return float(r.choice((-2, -1, 0, 0, 1, 1, 2, 3)))
    if kind == "subnormal":
        return from_bits((r.getrandbits(1) << 31) | r.getrandbits(r.randint(1, 23)))
    if kind == "extreme":
        c = r.randrange(5)
        if c == 0:
            return f32(r.choice((-1, 1)) * FLT_MAX * r.uniform(0.5, 1.0))
        if c == 1:
            return from_bits((r.getrandbits(1) << 31) | r.getrandbits(8))
        if c == 2:
            return f32(r.choice((-1, 1)) * 2.0 ** r.randint(-140, -100))
        return f32(r.uniform(-1, 1) * 2.0 ** r.randint(-10, 100))
    if kind == "special":
        c = r.randrange(24)
        if c == 0:
            return float("nan")
        if c == 1:
            return float("inf")
        if c == 2:
            return float("-inf")
        if c < 6:
            return r.choice((0.0, -0.0))
        return f32(r.uniform(-4, 4))
    raise ValueError(kind)


def matrix(m, n, kind, seed):
    r = random.Random(seed)
    return [[hostile_value(r, kind) for _ in range(n)] for _ in range(m)]


CASES = {
    "one": ([[2.5]], [[-0.5]]),
    "cancel": ([[2.0 ** 100, 1.0, -2.0 ** 100], [FLT_MAX, FLT_MAX, -FLT_MAX], [1e-45, -1e-45, 2.0 ** -149]],
               [[2.0 ** 100, 1.0, -2.0 ** 100], [FLT_MAX, -FLT_MAX, FLT_MAX]]),
    "zeros": ([[0.0, -0.0, 0.0], [-0.0, -0.0, -0.0], [0.0, 0.0, 0.0], [-0.0, 1.0, 0.0]],
              [[-0.0, 0.0, -0.0], [0.0, -1.0, 0.0]]),
    "ties": (matrix(9, 7, "ties", 1), matrix(6, 7, "ties", 2)),
    "duplicates": ([[1.0, 2.0, 3.0]] * 3 + [[3.0, 2.0, 1.0]], [[1.0, 2.0, 3.0], [2.0, 2.0, 2.0], [1.0, 2.0, 3.0]]),
    "plain_prime": (matrix(13, 31, "plain", 3), matrix(7, 31, "plain", 4)),
    "spread": (matrix(11, 29, "spread", 5), matrix(5, 29, "spread", 6)),
    "subnormal": (matrix(7, 23, "subnormal", 7), matrix(6, 23, "subnormal", 8)),
    "extreme": (matrix(9, 17, "extreme", 9), matrix(8, 17, "extreme", 10)),
    "special": (matrix(12, 11, "special", 11), matrix(9, 11, "special", 12)),
    "infinities": ([[float("inf"), 1.0], [float("-inf"), 1.0], [float("inf"), float("-inf")], [1.0, 2.0]],
                   [[float("inf"), 0.0], [float("-inf"), 3.0], [2.0, 2.0]]),
    "d1": (matrix(37, 1, "ties", 13), matrix(5, 1, "spread", 14)),
    "m1_long": (matrix(1, 300, "spread", 15), matrix(2, 300, "plain", 16)),
}


# the float32 values the library sees (Python floats are doubles)
CASES = {k: ([[f32(v) for v in r] for r in x], [[f32(v) for v in r] for r in y]) for k, (x, y) in CASES.items()}


@pytest.fixture(scope="module")
def reference():
    """Each case's expected bits, computed once."""
    out = {}
    for name, (x, y) in CASES.items():
        out[name] = {
            "row_sums": [ref_sum(r) for r in x], "col_sums": [ref_sum(c) for c in cols(x)],
            "row_sq": [ref_sq_norm(r) for r in x], "col_sq": [ref_sq_norm(c) for c in cols(x)],
            "sqdist": [[ref_sqdist(a, b) for b in y] for a in x],
            "order": {lg: [ref_order(r, lg) for r in x] for lg in (False, True)},
            "col_order": {lg: [ref_order(c, lg) for c in cols(x)] for lg in (False, True)},
        }
    return out


def f_bits(arr):
    mv = arr.memoryview()
    if mv.ndim == 1:
        return [bits(v) for v in mv.tolist()]
    return [[bits(v) for v in row] for row in mv.tolist()]


DEVICES = [("cpu", 1), ("cpu", 2), ("cpu", 7), ("opencl", 2)]


@pytest.fixture(params=DEVICES, ids=["cpu-1", "cpu-2", "cpu-7", "opencl"])
def device(request):
    dev, threads = request.param
    samebits.set_num_threads(threads)
    yield dev
    samebits.set_num_threads(0)


@pytest.mark.parametrize("name", list(CASES))
def test_sums_and_norms_match_exact_reference(name, device, reference):
    x, _ = CASES[name]
    ref = reference[name]
    assert f_bits(linalg.row_sums(x, device=device)) == ref["row_sums"]
    assert f_bits(linalg.col_sums(x, device=device)) == ref["col_sums"]
    assert f_bits(linalg.sq_norms(x, axis=1, device=device)) == ref["row_sq"]
    assert f_bits(linalg.sq_norms(x, axis=0, device=device)) == ref["col_sq"]


@pytest.mark.parametrize("name", list(CASES))
def test_sqdist_matches_exact_reference(name, device, reference):
    x, y = CASES[name]
    assert f_bits(linalg.sqdist(x, y, device=device)) == reference[name]["sqdist"]


@pytest.mark.parametrize("name", list(CASES))
def test_selection_matches_the_total_order(name, device, reference):
    x, _ = CASES[name]
    ref = reference[name]
    for largest in (False, True):
        order, col_order = ref["order"][largest], ref["col_order"][largest]
        fn = linalg.argmax if largest else linalg.argmin
        assert fn(x, axis=1, device=device).tolist() == [o[0] for o in order]
        assert fn(x, axis=0, device=device).tolist() == [o[0] for o in col_order]
        n = len(x[0])
        for k in sorted({1, min(3, n), n}):
            vals, idx = linalg.topk(x, k, largest=largest, device=device)
            want = [o[:k] for o in order]
            assert idx.tolist() == want, (largest, k)
            assert f_bits(vals) == [[bits(x[i][q]) for q in w] for i, w in enumerate(want)]


def test_knn_on_distances_breaks_ties_by_index(device):
    """Top-k over a distance matrix with equal distances: the lower index first."""
    x = [[0.0, 0.0], [1.0, 1.0]]
    y = [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, 0.0], [0.0, -1.0], [1.0, 1.0]]
    d = linalg.sqdist(x, y, device=device)
    vals, idx = linalg.topk(d, 4, device=device)
    assert idx.tolist() == [[3, 0, 1, 2], [5, 0, 1, 3]]
    assert vals.tolist() == [[0.0, 1.0, 1.0, 1.0], [0.0, 1.0, 1.0, 2.0]]


def test_long_lines_use_parts_and_flushes(device):
    """Rows and columns beyond the host's 65536-element parts, and distances over
    more than 16384 columns (the exact accumulators' carry flushes)."""
    r = random.Random(99)
    row = [hostile_value(r, "spread") for _ in range(70001)] + [2.0 ** 90, -2.0 ** 90]
    row[5] = -0.0
    x = [row, [-v for v in row]]
    assert f_bits(linalg.row_sums(x, device=device)) == [ref_sum(v) for v in x]
    assert f_bits(linalg.sq_norms(x, device=device)) == [ref_sq_norm(v) for v in x]
    xt = [[v] for v in row]  # one column of 70003 rows
    assert f_bits(linalg.col_sums(xt, device=device)) == [ref_sum(row)]
    assert f_bits(linalg.sq_norms(xt, axis=0, device=device)) == [ref_sq_norm(row)]
    assert linalg.argmin(xt, axis=0, device=device).tolist() == [ref_order(row, False)[0]]
    assert linalg.argmax(x, device=device).tolist() == [ref_order(v, True)[0] for v in x]
    a = [hostile_value(r, "spread") for _ in range(20011)]
    b = [hostile_value(r, "plain") for _ in range(20011)]
    got = f_bits(linalg.sqdist([a, b], [b, a, [0.0] * 20011], device=device))
    assert got == [[ref_sqdist(p, q) for q in (b, a, [0.0] * 20011)] for p in (a, b)]


def test_distances_are_symmetric_and_zero_on_the_diagonal(device):
    x = matrix(10, 19, "spread", 21)
    d = f_bits(linalg.sqdist(x, x, device=device))
    for i in range(10):
        assert d[i][i] == 0
        for j in range(10):
            assert d[i][j] == d[j][i]
            assert d[i][j] < 0x80000000  # never negative


# ---- the C entry points directly: leading dimensions and refusals -------------

_F = ctypes.c_float
_I = ctypes.c_int32


def _buf(vals, ctype=_F):
    return (ctype * max(len(vals), 1))(*vals)


@pytest.mark.parametrize("dev", ["cpu", "opencl"])
def test_leading_dimensions_give_the_dense_bits(dev):
    lib = samebits._lib
    m, n, ld = 5, 7, 11
    x = matrix(m, n, "spread", 31)
    padded = [v for r in x for v in r + [float("nan")] * (ld - n)]
    dense = [v for r in x for v in r]
    px, dx = _buf(padded), _buf(dense)
    P = ctypes.POINTER
    for fn in ("sb_linalg_row_sums", "sb_linalg_col_sums", "sb_linalg_row_sq_norms", "sb_linalg_col_sq_norms"):
        a, b = (_F * 8)(), (_F * 8)()
        assert getattr(lib, fn)(dev.encode(), m, n, ctypes.cast(px, P(_F)), ld, a) == 0
        assert getattr(lib, fn)(dev.encode(), m, n, ctypes.cast(dx, P(_F)), n, b) == 0
        assert bytes(a) == bytes(b), fn
    for fn in ("sb_linalg_argmin", "sb_linalg_argmax"):
        for axis in (0, 1):
            a, b = (_I * 8)(), (_I * 8)()
            assert getattr(lib, fn)(dev.encode(), axis, m, n, ctypes.cast(px, P(_F)), ld, a) == 0
            assert getattr(lib, fn)(dev.encode(), axis, m, n, ctypes.cast(dx, P(_F)), n, b) == 0
            assert list(a) == list(b), (fn, axis)
    va, ia, vb, ib = (_F * 15)(), (_I * 15)(), (_F * 15)(), (_I * 15)()
    assert lib.sb_linalg_topk(dev.encode(), 0, m, n, ctypes.cast(px, P(_F)), ld, 3, va, ia) == 0
    assert lib.sb_linalg_topk(dev.encode(), 0, m, n, ctypes.cast(dx, P(_F)), n, 3, vb, ib) == 0
    assert bytes(va) == bytes(vb) and list(ia) == list(ib)
    # distances with ldx, ldy and ldo beyond the row lengths
    out = (_F * (m * 9))()
    assert lib.sb_linalg_sqdist(dev.encode(), m, m, n, ctypes.cast(px, P(_F)), ld, ctypes.cast(px, P(_F)), ld,
                                out, 9) == 0
    want = f_bits(linalg.sqdist(x, x, device=dev))
    assert [[bits(out[i * 9 + j]) for j in range(m)] for i in range(m)] == want


def test_refusals_are_named():
    lib = samebits._lib
    x = [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(samebits.InvalidArgumentError, match="exceeds the row length"):
        linalg.topk(x, 3)
    with pytest.raises(samebits.InvalidArgumentError, match="k must be >= 1"):
        linalg.topk(x, 0)
    with pytest.raises(samebits.InvalidArgumentError, match="axis"):
        linalg.argmin(x, axis=2)
    with pytest.raises(samebits.InvalidArgumentError, match="differ in length"):
        linalg.sqdist(x, [[1.0, 2.0, 3.0]])
    with pytest.raises(samebits.InvalidArgumentError, match="unknown device"):
        linalg.row_sums(x, device="tpu")
    out = (_F * 4)()
    P = ctypes.POINTER
    assert lib.sb_linalg_row_sums(b"cpu", 2, 2, None, 2, out) == 1  # SB_ERR_INVALID_ARGUMENT
    assert b"x is NULL" in lib.sb_last_error()
    assert lib.sb_linalg_row_sums(b"cpu", 2, 3, ctypes.cast(_buf([1.0] * 6), P(_F)), 2, out) == 1
    assert b"below" in lib.sb_last_error()
    assert lib.sb_linalg_row_sums(b"cpu", -1, 3, None, 3, out) == 1
    buf = _buf([1.0] * 6)
    assert lib.sb_linalg_row_sums(b"cpu", 2, 3, ctypes.cast(buf, P(_F)), 3, ctypes.cast(buf, P(_F))) == 1
    assert b"overlaps" in lib.sb_last_error()
    idx = (_I * 4)()
    assert lib.sb_linalg_argmin(b"cpu", 1, 2, 0, ctypes.cast(buf, P(_F)), 1, idx) == 1
    assert b"empty" in lib.sb_last_error()
    assert lib.sb_linalg_topk(b"cpu", 2, 2, 3, ctypes.cast(buf, P(_F)), 3, 1, out, idx) == 1
    assert lib.sb_linalg_row_sums(b"cpu", 1 << 31, 1, ctypes.cast(buf, P(_F)), 1, out) != 0  # SB_ERR_LIMIT
    assert b"2^31 - 1" in lib.sb_last_error()


def test_index_arrays_view_in_numpy_without_copying():
    np = pytest.importorskip("numpy")
    idx = linalg.argmin([[3.0, 1.0, 2.0], [0.0, -0.0, 5.0]])
    a = np.asarray(idx)
    assert a.dtype == np.int32 and a.tolist() == [1, 1]
    a[0] = 7
    assert idx.tolist() == [7, 1]
