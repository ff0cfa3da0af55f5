"""samebits.linalg.matmul against an independent exact reference.

The reference below is the contract of sb_gemm (docs/linalg.md) written a second
time, in Python's exact integers and fractions, by a different road than the C
kernels (math.frexp for the scales and spreads, Fraction rounding for the inputs,
a rounding to float32 from the rational value): every element must agree bit for bit, on
every device built and at several thread counts. A changed rounding rule, a lost
digit or a broken recombination shows here as a bit difference.
"""
import math
from fractions import Fraction

import pytest

import samebits
from exact_ref import QNAN, bits, f32, from_bits, round_f32_bits  # noqa: F401
from samebits import linalg


def lead(v):
    """floor(log2 |v|) of a nonzero finite float."""
    _, e = math.frexp(abs(v))  # |v| = f * 2^e, f in [0.5, 1)
    return e - 1


def spread_of(line):
    """The line's largest leading exponent less the floor of the mean leading
    exponent of its nonzero finite elements (0 for none)."""
    leads = [lead(v) for v in line if math.isfinite(v) and v != 0]
    if not leads:
        return 0
    return max(0, max(leads) - (sum(leads) // len(leads)))


def digits_of(lines):
    """The operand's digits: P = 8S - 1 >= largest spread + 16, S in 4..8."""
    sp = max([spread_of(l) for l in lines] + [0])
    return min(8, max(4, (sp + 24) // 8))


def sigma_of(line, S):
    fin = [abs(v) for v in line if math.isfinite(v)]
    m = max(fin) if fin else 0.0
    if m == 0.0:
        return 0
    return (8 * S - 3) - lead(m)


def fixed(x, s):
    if not math.isfinite(x):
        return 0
    return round(Fraction(x) * (Fraction(2) ** s))  # Fraction rounds half to even


def special(arow, bcol):
    nan = pinf = ninf = anyf = False
    for x, y in zip(arow, bcol):
        if math.isfinite(x) and math.isfinite(y):
            continue
        anyf = True
        if math.isnan(x) or math.isnan(y):
            nan = True
        elif x == 0 or y == 0:
            nan = True
        elif (x < 0) != (y < 0):
            ninf = True
        else:
            pinf = True
    if not anyf:
        return None
    if nan or (pinf and ninf):
        return QNAN
    return 0x7F800000 if pinf else 0xFF800000


def reference(a, b):
    """a: m x k, b: k x n (lists of float32 values): the expected bits of a @ b."""
    m, k, n = len(a), len(b), len(b[0]) if b else 0
    cols = [[b[q][j] for q in range(k)] for j in range(n)]
    da, db = digits_of(a), digits_of(cols)
    sa = [sigma_of(r, da) for r in a]
    sb = [sigma_of(c, db) for c in cols]
    fa = [[fixed(x, sa[i]) for x in a[i]] for i in range(m)]
    fb = [[fixed(y, sb[j]) for y in cols[j]] for j in range(n)]
    out = []
    for i in range(m):
        row = []
        for j in range(n):
            sp = special(a[i], cols[j])
            if sp is not None:
                row.append(sp)
                continue
            t = sum(x * y for x, y in zip(fa[i], fb[j]))
            row.append(round_f32_bits(Fraction(t) / Fraction(2) ** (sa[i] + sb[j])))
        out.append(row)
    return out


def got_bits(c, m, n):
    mv = c.memoryview()
    return [[bits(mv[i, j]) for j in range(n)] for i in range(m)]


def lcg(seed):
    x = seed
    while True:
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        yield (x >> 11) / float(1 << 53)


def rand_matrix(r, c, seed, scale=1.0, spread=0.0):
    g = lcg(seed)
    out = []
    for _ in range(r):
        row = []
        for _ in range(c):
            u = next(g) * 2 - 1
            row.append(f32(u * scale * (2.0 ** (spread * (next(g) * 2 - 1)))))
        out.append(row)
    return out


def as_f32(x):
    """The float32 values the library sees (Python floats are doubles)."""
    return [[f32(v) for v in r] for r in x]


def cases():
    big, tiny, sub = 3.0e38, 1.0e-38, 1.0e-45
    yield "k=1", rand_matrix(3, 1, 1), rand_matrix(1, 4, 2)
    yield "k prime", rand_matrix(4, 97, 3), rand_matrix(97, 5, 4)
    yield "m=1", rand_matrix(1, 33, 5), rand_matrix(33, 6, 6)
    yield "n=1", rand_matrix(6, 33, 7), rand_matrix(33, 1, 8)
    yield "zeros", [[0.0] * 5, [-0.0] * 5, [1.0, 0.0, -0.0, 2.0, 0.0]], rand_matrix(5, 3, 9)
    yield "exponent spread", rand_matrix(5, 40, 10, spread=60.0), rand_matrix(40, 5, 11, spread=60.0)
    yield "subnormals", [[sub, 3 * sub, -sub, 1e-40], [1e-40, 2e-39, sub, 0.0]], [[1.0, sub], [2.0, -1e-39],
                                                                                    [0.5, 1e-44], [-1.0, 3.0]]
    yield "underflow to subnormal", [[1e-20, 3e-21], [-2e-20, 1e-25]], [[1e-20, 2e-20], [5e-21, -7e-22]]
    yield "overflow", [[big, big], [big, -big], [1e30, 1e-30]], [[big, 1.0], [big, -1.0]]
    yield "huge and tiny in a row", [[big, tiny, 1.0, -tiny], [tiny, tiny, -tiny, sub]], [[0.0, tiny],
                                                                                          [1.0, big], [big, tiny],
                                                                                          [1.0, 1.0]]
    inf, nan = float("inf"), float("nan")
    yield "specials", [[inf, 1.0, 2.0], [1.0, nan, 0.0], [-inf, 0.0, 1.0], [1.0, 2.0, 3.0], [inf, -inf, 0.0]], \
        [[1.0, 0.0, -2.0, inf], [2.0, 1.0, 0.0, 1.0], [3.0, 1.0, 1.0, -inf]]
    yield "cancellation", [[1.0, 1.0, -1.0, 2.0 ** -24]], [[1.0], [2.0 ** -30], [1.0], [1.0]]
    # spreads that call for 5, 6 and 8 digits on one side, 4 on the other
    yield "wide rows", rand_matrix(6, 50, 41, spread=12.0), rand_matrix(50, 4, 42)
    yield "wider rows", rand_matrix(5, 64, 43, spread=20.0), rand_matrix(64, 5, 44, spread=3.0)
    yield "widest", rand_matrix(4, 70, 45, spread=100.0), rand_matrix(70, 3, 46, spread=100.0)


@pytest.mark.parametrize("name,a,b", list(cases()), ids=[c[0] for c in cases()])
@pytest.mark.parametrize("device,threads", [("cpu", 1), ("cpu", 2), ("cpu", 7), ("opencl", 2)])
def test_matmul_matches_exact_reference(name, a, b, device, threads):
    a, b = as_f32(a), as_f32(b)
    samebits.set_num_threads(threads)
    try:
        c = linalg.matmul(a, b, device=device)
    finally:
        samebits.set_num_threads(0)
    assert got_bits(c, len(a), len(b[0])) == reference(a, b), name


def transpose(x):
    return [list(r) for r in zip(*x)]


@pytest.mark.parametrize("ta,tb", [(0, 1), (1, 0), (1, 1)])
def test_transposes_give_the_same_bits(ta, tb):
    a, b = rand_matrix(7, 45, 21, spread=10.0), rand_matrix(45, 9, 22, spread=10.0)
    want = got_bits(linalg.matmul(a, b), 7, 9)
    c = linalg.matmul(transpose(a) if ta else a, transpose(b) if tb else b, transpose_a=bool(ta),
                      transpose_b=bool(tb))
    assert got_bits(c, 7, 9) == want


@pytest.mark.parametrize("device", ["cpu", "opencl"])
def test_two_passes_of_k(device):
    """K beyond one pass (8192): the passes add exactly."""
    a, b = rand_matrix(2, 8209, 31, spread=4.0), rand_matrix(8209, 2, 32, spread=4.0)
    assert got_bits(linalg.matmul(a, b, device=device), 2, 2) == reference(a, b)


def test_empty_shapes():
    np = pytest.importorskip("numpy")
    assert np.asarray(linalg.matmul(np.zeros((0, 3), np.float32), np.ones((3, 4), np.float32))).shape == (0, 4)
    c = np.asarray(linalg.matmul(np.ones((2, 0), np.float32), np.ones((0, 3), np.float32)))
    assert c.shape == (2, 3) and not c.any() and not np.signbit(c).any()  # k = 0: +0


def test_refusals_are_named():
    with pytest.raises(samebits.InvalidArgumentError, match="inner sizes differ"):
        linalg.matmul([[1.0, 2.0]], [[1.0, 2.0]])
    with pytest.raises(samebits.InvalidArgumentError, match="unknown device"):
        linalg.matmul([[1.0]], [[1.0]], device="tpu")


def test_accuracy_against_float64_on_random_data():
    """Far inside float32's own error: the scheme's only error is the input
    rounding to 31 bits relative to each line's largest element."""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 300)).astype(np.float32)
    b = rng.standard_normal((300, 48)).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    c = np.asarray(linalg.matmul(a, b))
    bound = 2.0 ** -24 * np.abs(ref) + 2.0 ** -29 * 300 * np.abs(a).max(1)[:, None] * np.abs(b).max(0)[None, :]
    assert (np.abs(c - ref) <= bound).all()


ROAD_SHAPES = [  # (m, n, k, transpose_a): Gram-like long sums, a gradient row, tiles and ranges beyond one
    (100, 101, 50000, True), (1, 7, 100000, True), (65, 64, 3000, False), (3, 130, 2500, False),
    (1, 45, 70000, False)]  # one row over two column tiles of kl_direct_row


@pytest.mark.parametrize("device", ["cpu", "opencl", "cuda"])
@pytest.mark.parametrize("m,n,k,ta", ROAD_SHAPES)
def test_the_roads_give_the_same_bits(device, m, n, k, ta, monkeypatch):
    """The direct road (the host's 128-bit sums, a GPU's kl_direct_sum) and the
    digit planes compute the same exact totals: the same bits, bit for bit."""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(m * 7 + n)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    a[rng.integers(0, a.shape[0], 40), rng.integers(0, a.shape[1], 40)] *= 2.0 ** -10  # smaller elements
    out = {}
    for var, road in (("SAMEBITS_GEMM_HOST", "digits"), ("SAMEBITS_GEMM_HOST", "direct"),
                      ("SAMEBITS_GEMM_DEVICE", "digits"), ("SAMEBITS_GEMM_DEVICE", "auto")):
        if (var == "SAMEBITS_GEMM_HOST") != (device == "cpu"):
            continue
        monkeypatch.setenv(var, road)
        try:
            c = linalg.matmul(a, b, device=device, transpose_a=ta)
        except samebits.BackendUnavailableError as e:
            pytest.skip("no %s here: %s" % (device, e))
        out[road] = np.asarray(c).view(np.uint32).copy()
    first, second = out.values()
    assert (first == second).all()
