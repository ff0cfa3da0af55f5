"""samebits.linalg's factorizations, solves, eigenvalues and projections.

Three kinds of check (docs/linalg.md, "Factorizations, solves, eigenvalues and
projections"):

  - bits: an independent Python reimplementation of each stated order (NumPy
    float32 scalars, one IEEE rounding per operation; Philox4x32-10 written
    again here from the paper) must give the library's bits exactly, so the
    documentation says what the code does;
  - accuracy against numpy.linalg in float64, within stated bounds (u = 2^-24):
      Cholesky   ||A - L L^T||_F <= 8 u ||A||_F
      solves     ||L X - B||_F   <= 8 u ||L||_F ||X||_F
      eigh       ||A V - V diag(w)||_F <= 4 n u ||A||_F,
                 ||V^T V - I||_F <= 4 n u, |w_i - w64_i| <= 4 n u ||A||_2;
  - identity: the same bits at 1, 2 and 7 threads and on device="opencl" (PoCL).
"""
import math
import struct

import numpy as np
import pytest

import samebits
from samebits import linalg

F = np.float32
U = 2.0 ** -24
DEVICES = [("cpu", 1), ("cpu", 2), ("cpu", 7), ("opencl", 2)]


def bits(a):
    return np.ascontiguousarray(np.asarray(a, dtype=np.float32)).view(np.uint32)


def same_bits(a, b):
    return np.array_equal(bits(a), bits(b))


def with_threads(t, fn, *args, **kw):
    samebits.set_num_threads(t)
    try:
        return fn(*args, **kw)
    finally:
        samebits.set_num_threads(0)


def spd(n, seed, shift=None, rank=None):
    g = np.random.default_rng(seed)
    m = g.standard_normal((n, rank or n)).astype(np.float32)
    a = (m.astype(np.float64) @ m.T.astype(np.float64)) / (rank or n)
    a += (1.0 if shift is None else shift) * np.eye(n)
    return a.astype(np.float32)


def sym(n, seed):
    g = np.random.default_rng(seed)
    m = g.standard_normal((n, n)).astype(np.float32)
    return (m + m.T).astype(np.float32)


def full64(a):
    """The symmetric float64 matrix whose lower triangle is a's (what the library reads)."""
    lo = np.tril(np.asarray(a, dtype=np.float64))
    return lo + np.tril(lo, -1).T


# ---- the stated orders, written again --------------------------------------------------

def pow2(e):
    return F(2.0 ** e)


def dot8(x, y):
    """The library's dot product: 8 lanes, lane l adds k = l (mod 8) in order, then
    ((p0+p1)+(p2+p3))+((p4+p5)+(p6+p7))."""
    p = [F(0)] * 8
    for k in range(len(x)):
        p[k % 8] = F(p[k % 8] + F(F(x[k]) * F(y[k])))
    return F(F(F(p[0] + p[1]) + F(p[2] + p[3])) + F(F(p[4] + p[5]) + F(p[6] + p[7])))


def floor_log2(x):
    return math.frexp(abs(float(x)))[1] - 1


def chol_ref(a):
    """Cholesky-Banachiewicz on the power-of-two equilibrated matrix."""
    n = a.shape[0]
    a = np.asarray(a, dtype=np.float32)
    k = [floor_log2(a[i, i]) // 2 if a[i, i] > 0 else 0 for i in range(n)]
    l = [[F(0)] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            l[i][j] = F(F(a[i, j] * pow2(-k[i])) * pow2(-k[j]))
    for j in range(n):
        d = F(l[j][j] - dot8(l[j][:j], l[j][:j]))
        if not d > 0:
            return None, j
        l[j][j] = np.sqrt(d)
        for i in range(j + 1, n):
            l[i][j] = F(F(l[i][j] - dot8(l[i][:j], l[j][:j])) / l[j][j])
    for i in range(n):
        for j in range(i + 1):
            l[i][j] = F(l[i][j] * pow2(k[i]))
    return np.array(l, dtype=np.float32), -1


def scale(x, k):
    x = F(x)
    if k > 127:
        x, k = F(x * pow2(127)), k - 127
    elif k < -126:
        x, k = F(x * pow2(-126)), k + 126
    return F(x * pow2(k))


def eigh_ref(a):
    """Cyclic Jacobi, row-cyclic, Rutishauser's rotation and diagonal sums, as
    kernels/linalg_solve.h states it."""
    n = a.shape[0]
    a = np.asarray(a, dtype=np.float32)
    mx = max(abs(float(a[i, j])) for i in range(n) for j in range(i + 1))
    e = floor_log2(mx) if mx > 0 else 0
    w = [[F(0)] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            w[i][j] = w[j][i] = scale(a[i, j], -e)
    vt = [[F(1.0 if i == j else 0.0) for j in range(n)] for i in range(n)]
    b = [w[i][i] for i in range(n)]
    z = [F(0)] * n
    sweeps = rotations = 0
    for sweep in range(60):
        rot = 0
        for p in range(n - 1):
            for q in range(p + 1, n):
                app, aqq, apq = w[p][p], w[q][q], w[p][q]
                if apq == 0:
                    continue
                m = abs(apq)
                if m <= pow2(-48) or F(m * pow2(30)) <= min(abs(app), abs(aqq)):
                    w[p][q] = w[q][p] = F(0)
                    continue
                theta = F(F(aqq - app) / F(F(2) * apq))
                at = abs(theta)
                r = at if at >= pow2(60) else np.sqrt(F(F(theta * theta) + F(1)))
                t = F(F(1) / F(at + r))
                if theta < 0:
                    t = F(F(0) - t)
                c = F(F(1) / np.sqrt(F(F(t * t) + F(1))))
                s = F(t * c)
                tau = F(s / F(F(1) + c))
                for r_ in range(n):
                    if r_ in (p, q):
                        continue
                    g, h = w[p][r_], w[q][r_]
                    gn = F(g - F(s * F(h + F(g * tau))))
                    hn = F(h + F(s * F(g - F(h * tau))))
                    w[p][r_] = w[r_][p] = gn
                    w[q][r_] = w[r_][q] = hn
                h = F(t * apq)
                w[p][p] = F(app - h)
                w[q][q] = F(aqq + h)
                z[p] = F(z[p] - h)
                z[q] = F(z[q] + h)
                w[p][q] = w[q][p] = F(0)
                for r_ in range(n):
                    g, h = vt[p][r_], vt[q][r_]
                    vt[p][r_] = F(g - F(s * F(h + F(g * tau))))
                    vt[q][r_] = F(h + F(s * F(g - F(h * tau))))
                rot += 1
        for i in range(n):  # Rutishauser: b += z, d := b, z := 0
            b[i] = F(b[i] + z[i])
            w[i][i] = b[i]
            z[i] = F(0)
        rotations += rot
        sweeps = sweep + 1
        if rot == 0:
            break
    vals = [F(scale(w[i][i], e) + F(0)) for i in range(n)]
    order = sorted(range(n), key=lambda i: (-float(vals[i]), i))
    wout = np.array([vals[i] for i in order], dtype=np.float32)
    v = np.zeros((n, n), dtype=np.float32)
    for k, i in enumerate(order):
        mags = [struct.unpack("<I", struct.pack("<f", float(x)))[0] & 0x7FFFFFFF for x in vt[i]]
        big = max(range(n), key=lambda r_: (mags[r_], -r_))
        neg = vt[i][big] < 0 or (vt[i][big] == 0 and math.copysign(1, float(vt[i][big])) < 0)
        for r_ in range(n):
            v[r_, k] = F(F(0) - vt[i][r_]) if neg else F(vt[i][r_] + F(0))
    return wout, v, sweeps, rotations


# Philox4x32-10 (Salmon et al., SC'11) again, and the polar method on its words.
def philox(ctr, key):
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    m = 0xFFFFFFFF
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & m, (k1 + 0xBB67AE85) & m
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & m, p1 & m, ((p0 >> 32) ^ c3 ^ k1) & m, p0 & m
    return c0, c1, c2, c3


def words(seed, purpose, index, sub):
    return philox((index & 0xFFFFFFFF, index >> 32, purpose, sub), (seed & 0xFFFFFFFF, seed >> 32))


def sym_unit(w):
    return F(F(((w >> 8) << 1) + 1 - (1 << 24)) * pow2(-24))


def log_f32(x):
    # the correctly rounded float32 log (what sb_logf is): float64's log rounded once;
    # the double rounding it risks has probability about 2^-29 a call
    return F(math.log(float(x)))


def normal_ref(seed, index):
    for sub in range(64):
        w = words(seed, 0x4C4E524D, index, sub)
        for h in range(2):
            u, v = sym_unit(w[2 * h]), sym_unit(w[2 * h + 1])
            s = F(F(u * u) + F(v * v))
            if s < 1:
                return F(u * np.sqrt(F(F(F(-2) * log_f32(s)) / s)))
    return F(0)


def rademacher_ref(seed, index):
    return F(-1.0) if words(seed, 0x4C52444D, index, 0)[0] >> 31 else F(1.0)


# ---- the bits of the stated orders -----------------------------------------------------------

def test_philox_here_is_the_papers():
    assert philox((0, 0, 0, 0), (0, 0)) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)
    assert philox((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0)) == (
        0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)


@pytest.mark.parametrize("n,case", [(1, "spd"), (5, "spd"), (19, "spd"), (40, "graded"), (12, "huge"),
                                    (12, "subnormal")])
def test_cholesky_bits_are_the_stated_order(n, case):
    a = spd(n, 100 + n)
    if case == "graded":
        d = np.array([2.0 ** (-60 + 110 * i // (n - 1)) for i in range(n)])
        a = (a.astype(np.float64) * d[:, None] * d[None, :]).astype(np.float32)
    elif case == "huge":
        a = (a * np.float32(2.0 ** 100)).astype(np.float32)
    elif case == "subnormal":
        a = (a.astype(np.float64) * 2.0 ** -136).astype(np.float32)
    ref, bad = chol_ref(a)
    assert bad == -1
    assert same_bits(linalg.cholesky(a), ref)


def test_cholesky_refusal_column_is_the_stated_orders():
    a = spd(14, 7, shift=0.0, rank=9)  # semidefinite: rounding decides the column
    _, bad = chol_ref(a)
    with pytest.raises(samebits.InvalidInputError, match="column %d " % bad):
        linalg.cholesky(a)


@pytest.mark.parametrize("n", [1, 2, 3, 6, 9])
def test_eigh_bits_are_the_stated_order(n):
    a = sym(n, 200 + n)
    w, v, sweeps, rotations = eigh_ref(a)
    lw, lv, info = linalg.eigh(a, info=True)
    assert same_bits(lw, w) and same_bits(lv, v)
    assert info == {"sweeps": sweeps, "rotations": rotations}


def test_triangular_solve_bits_are_the_stated_order():
    n = 21
    l = np.asarray(linalg.cholesky(spd(n, 5)))
    b = np.random.default_rng(3).standard_normal((n, 2)).astype(np.float32)
    fwd = np.zeros_like(b)
    bwd = np.zeros_like(b)
    for c in range(2):
        for i in range(n):
            fwd[i, c] = F(F(b[i, c] - dot8(l[i, :i], fwd[:i, c])) / l[i, i])
        for i in range(n - 1, -1, -1):
            bwd[i, c] = F(F(b[i, c] - dot8(l[i + 1:, i], bwd[i + 1:, c])) / l[i, i])
    assert same_bits(linalg.solve_triangular(l, b), fwd)
    assert same_bits(linalg.solve_triangular(l, b, trans=True), bwd)


def test_random_bits_are_the_stated_transforms():
    seed = 0x1234_5678_9ABC
    om = np.asarray(linalg.random_matrix(40, 25, seed=seed))
    ref = np.array([[normal_ref(seed, r * 25 + c) for c in range(25)] for r in range(40)], dtype=np.float32)
    assert same_bits(om, ref)
    rd = np.asarray(linalg.random_matrix(40, 25, seed=seed, kind="rademacher"))
    ref = np.array([[rademacher_ref(seed, r * 25 + c) for c in range(25)] for r in range(40)], dtype=np.float32)
    assert same_bits(rd, ref)


# ---- accuracy against float64 ------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 17, 61, 130, 300])
def test_cholesky_accuracy(n):
    a = spd(n, n)
    l64 = np.asarray(linalg.cholesky(a), dtype=np.float64)
    a64 = full64(a)
    r = np.linalg.norm(a64 - l64 @ l64.T) / np.linalg.norm(a64)
    assert r <= 8 * U, r
    assert np.all(np.triu(l64, 1) == 0) and np.all(np.diag(l64) > 0)
    ref = np.linalg.cholesky(a64)
    assert np.linalg.norm(l64 - ref) / np.linalg.norm(ref) <= 8 * U * np.linalg.cond(a64)


def test_cholesky_ill_conditioned():
    a = spd(40, 9, shift=2.0 ** -17, rank=20)
    a64 = full64(a)
    assert 1e5 < np.linalg.cond(a64) < 1e7
    l64 = np.asarray(linalg.cholesky(a), dtype=np.float64)
    assert np.linalg.norm(a64 - l64 @ l64.T) / np.linalg.norm(a64) <= 8 * U


@pytest.mark.parametrize("n,nrhs", [(1, 1), (33, 4), (130, 9)])
def test_triangular_solve_accuracy(n, nrhs):
    l = np.asarray(linalg.cholesky(spd(n, 3 * n)), dtype=np.float32)
    b = np.random.default_rng(n).standard_normal((n, nrhs)).astype(np.float32)
    l64 = np.tril(l.astype(np.float64))
    for trans, m in ((False, l64), (True, l64.T)):
        x = np.asarray(linalg.solve_triangular(l, b, trans=trans), dtype=np.float64)
        res = np.linalg.norm(m @ x - b) / (np.linalg.norm(l64) * np.linalg.norm(x))
        assert res <= 8 * U, (trans, res)
        ref = np.linalg.solve(m, b.astype(np.float64))
        assert np.linalg.norm(x - ref) / np.linalg.norm(ref) <= 8 * U * np.linalg.cond(m)
    # a vector right-hand side gives a vector
    x1 = linalg.solve_triangular(l, b[:, 0])
    assert np.asarray(x1).shape == (n,) and same_bits(x1, np.asarray(linalg.solve_triangular(l, b[:, :1]))[:, 0])


@pytest.mark.parametrize("n", [1, 2, 10, 37, 100])
def test_eigh_accuracy(n):
    a = sym(n, 10 * n)
    w, v = linalg.eigh(a)
    w, v = np.asarray(w, dtype=np.float64), np.asarray(v, dtype=np.float64)
    a64 = full64(a)
    nf, n2 = np.linalg.norm(a64), np.linalg.norm(a64, 2)
    assert np.linalg.norm(a64 @ v - v * w) <= 4 * n * U * nf
    assert np.linalg.norm(v.T @ v - np.eye(n)) <= 4 * n * U
    ref = np.linalg.eigvalsh(a64)[::-1]  # numpy ascends; samebits descends
    assert np.max(np.abs(w - ref)) <= 4 * n * U * n2
    assert np.all(np.diff(w) <= 0)


def test_eigh_conventions():
    # a diagonal matrix: no rotation; values descending, ties by diagonal place; -0 -> +0
    d = np.array([2.0, -1.0, 2.0, -0.0, 5.0, -1.0, 2.0], dtype=np.float32)
    w, v, info = linalg.eigh(np.diag(d), info=True)
    assert info == {"sweeps": 1, "rotations": 0}
    assert np.asarray(w).tolist() == [5.0, 2.0, 2.0, 2.0, 0.0, -1.0, -1.0]
    assert bits(w)[4] == 0  # +0
    assert np.argmax(np.asarray(v), axis=0).tolist() == [4, 0, 2, 6, 3, 1, 5]
    assert np.all(np.asarray(v) >= 0)
    # [[2, 1], [1, 2]]: theta = 0, the 45-degree rotation; the rounded components
    # differ in their last bit, and the larger of each vector is positive
    w, v = linalg.eigh(np.array([[2, 1], [1, 2]], dtype=np.float32))
    v = np.asarray(v)
    assert np.asarray(w).tolist() == [3.0, 1.0]
    for k in range(2):
        big = np.argmax(np.abs(v[:, k]))
        assert v[big, k] > 0 and np.all(np.abs(v[:big, k]) < abs(v[big, k]))
    # exact ties from equal blocks; values alone are the same bits
    b = sym(4, 1)
    a = np.zeros((8, 8), dtype=np.float32)
    a[:4, :4] = b
    a[4:, 4:] = b
    w, v = linalg.eigh(a)
    w = np.asarray(w)
    assert np.array_equal(w[0::2], w[1::2])
    v = np.asarray(v)
    for k in range(0, 8, 2):  # ties by index: the first block's vector first
        assert np.all(v[4:, k] == 0) and np.all(v[:4, k + 1] == 0)
    assert same_bits(linalg.eigh(a, eigenvectors=False), w)
    # only the lower triangle is read
    up = a.copy()
    up[np.triu_indices(8, 1)] = 7.0
    assert same_bits(linalg.eigh(up)[0], w)


def test_random_projection_is_the_gemm_of_the_random_matrix():
    a = np.random.default_rng(4).standard_normal((30, 50)).astype(np.float32)
    for kind in ("normal", "rademacher"):
        om = linalg.random_matrix(50, 8, seed=11, kind=kind)
        assert same_bits(linalg.random_projection(a, 8, seed=11, kind=kind), linalg.matmul(a, om))
    # keyed by position: the first rows of a taller matrix are the shorter one
    assert same_bits(np.asarray(linalg.random_matrix(80, 8, seed=11))[:50], linalg.random_matrix(50, 8, seed=11))
    big = np.asarray(linalg.random_matrix(400, 250, seed=3))
    assert abs(big.mean()) < 0.01 and abs(big.std() - 1) < 0.01
    assert abs((big > 1.96).mean() - 0.025) < 0.003
    rd = np.asarray(linalg.random_matrix(400, 250, seed=3, kind="rademacher"))
    assert set(np.unique(rd).tolist()) == {-1.0, 1.0} and abs(rd.mean()) < 0.01


# ---- identity across threads and devices ----------------------------------------------------

def _all_ops(device):
    a = spd(70, 1)
    s = sym(45, 2)
    l = linalg.cholesky(a, device=device)
    b = np.random.default_rng(5).standard_normal((70, 11)).astype(np.float32)
    x0 = linalg.solve_triangular(l, b, device=device)
    x1 = linalg.solve_triangular(l, b, trans=True, device=device)
    w, v = linalg.eigh(s, device=device)
    om = linalg.random_matrix(45, 9, seed=8, device=device)
    y = linalg.random_projection(s, 9, seed=8, kind="rademacher", device=device)
    return [bits(t).tobytes() for t in (l, x0, x1, w, v, om, y)]


def test_same_bits_at_every_thread_count_and_on_opencl():
    ref = with_threads(1, _all_ops, "cpu")
    for device, t in DEVICES[1:]:
        got = with_threads(t, _all_ops, device)
        names = ["cholesky", "solve", "solve_T", "eigh.w", "eigh.v", "random", "projection"]
        assert [nm for nm, r, g in zip(names, ref, got) if r != g] == [], (device, t)


# ---- refusals -----------------------------------------------------------------------

@pytest.mark.parametrize("device", ["cpu", "opencl"])
def test_not_positive_definite_is_refused_by_column(device):
    a = spd(12, 2)
    a[5, 5] = -1.0
    with pytest.raises(samebits.InvalidInputError, match="not positive definite.*column 5 "):
        linalg.cholesky(a, device=device)


def test_invalid_inputs_are_named():
    a = spd(6, 1)
    a[4, 2] = np.nan
    with pytest.raises(samebits.InvalidInputError, match=r"element \(4, 2\) of a is NaN"):
        linalg.cholesky(a)
    a[4, 2] = np.inf
    with pytest.raises(samebits.InvalidInputError, match=r"element \(4, 2\) of a is infinite"):
        linalg.eigh(a)
    a[4, 2] = 0
    a[2, 4] = np.nan  # the upper triangle is not read
    linalg.cholesky(a)
    with pytest.raises(samebits.InvalidInputError, match="square"):
        linalg.cholesky(np.ones((3, 4), dtype=np.float32))
    l = np.eye(4, dtype=np.float32)
    l[2, 2] = 0
    with pytest.raises(samebits.InvalidInputError, match=r"singular.*\(2, 2\)"):
        linalg.solve_triangular(l, np.ones(4, dtype=np.float32))
    with pytest.raises(samebits.InvalidArgumentError, match="rows"):
        linalg.solve_triangular(np.eye(4, dtype=np.float32), np.ones(5, dtype=np.float32))
    with pytest.raises(samebits.InvalidArgumentError, match="unknown device"):
        linalg.eigh(np.eye(2, dtype=np.float32), device="tpu")
    with pytest.raises(samebits.InvalidArgumentError, match="kind"):
        linalg.random_matrix(2, 2, kind="uniform")
