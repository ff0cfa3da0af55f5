/*
 * linalg_solve.h: the kernel bodies of the factorizations, triangular solves,
 * the symmetric eigensolver and the random projections (src/linalg/solve.c),
 * written once for the host, CUDA and OpenCL in the compat vocabulary.
 *
 * Every float operation of those operations is in this file. The host loops
 * (src/linalg/solve.c) and the entry kernels (entry/linalg_solve_entry.h)
 * only decide which thread computes which element and when; the operations
 * that make one element, and their order, are these functions', so every
 * schedule, thread count and device gives the same bits. Plain multiply then
 * add everywhere, never a fused multiply-add (the build forbids contraction:
 * -ffp-contract=off, CUDA -fmad=false, OpenCL FP_CONTRACT OFF); division and
 * square root are IEEE's correctly rounded ones. No double, no libm: the one
 * elementary function is the profile's sb_logf (correctly rounded).
 *
 * The fixed orders (docs/linalg.md, "Factorizations, solves, eigenvalues and
 * projections", states them for users):
 *
 *  - sb_ls_dot, the one dot product: SB_LS_LANES = 8 lanes; lane l adds the
 *    products x_k*y_k with k = l (mod 8) in increasing k, starting from +0
 *    (p_l = p_l + x_k*y_k: a product rounded, then a sum rounded); the lanes
 *    are then added as ((p0+p1)+(p2+p3))+((p4+p5)+(p6+p7)).
 *  - Cholesky (the Cholesky-Banachiewicz / Crout dot-product form, Golub &
 *    Van Loan, "Matrix Computations", 4th ed., section 4.2; Higham,
 *    "Accuracy and Stability of Numerical Algorithms", 2nd ed., ch. 10),
 *    on the power-of-two equilibrated matrix A' = D A D, D = diag(2^-k_i),
 *    k_i = floor(e_i / 2) for the binary exponent e_i of a_ii (so a'_ii lies in
 *    [1, 4)): d_j = a'_jj - dot(l_j, l_j; j), refused unless d_j > 0,
 *    l_jj = sqrt(d_j); l_ij = (a'_ij - dot(l_i, l_j; j)) / l_jj for i > j;
 *    finally l_ij := l'_ij * 2^k_i. The scaling is exact wherever no value
 *    leaves the normal range, so it changes no bit there and keeps huge and
 *    subnormal inputs from overflowing or underflowing.
 *  - triangular solves: forward x_i = (b_i - dot(L[i, 0:i], x[0:i])) / l_ii;
 *    backward (L^T x = b) x_i = (b_i - dot(L[i+1:n, i], x[i+1:n])) / l_ii, the
 *    dot's k counted from i+1 upwards.
 *  - Jacobi (the cyclic Jacobi method, Golub & Van Loan section 8.5.3, with
 *    Rutishauser's stabilized updates, H. Rutishauser, "The Jacobi method for
 *    real symmetric matrices", Numer. Math. 9 (1966), as in Wilkinson and
 *    Reinsch, Handbook for Automatic Computation II, contribution II/1): see
 *    sb_ls_jac_action, sb_ls_jac_rot and sb_ls_jac_pair below.
 *  - normal draws: Marsaglia's polar method (G. Marsaglia, T. A. Bray, "A
 *    convenient method for generating normal variables", SIAM Review 6, 1964),
 *    which needs only + - * / sqrt and log: sb_ls_normal.
 */
#ifndef SB_KERNELS_LINALG_SOLVE_H
#define SB_KERNELS_LINALG_SOLVE_H
#include "compat.h"
#include "../core/rng.h"
#include "../math/sb_math.h"

/* IEEE's correctly rounded square root in each dialect (the profile allows it:
 * docs/numeric-profile.md, rule 2). The host's is the instruction (sqrtss,
 * fsqrt, sqebr); it is never given a negative or a NaN, so gcc's errno path
 * (a call of libm's sqrtf) is never taken. */
#if defined(__OPENCL_VERSION__) || defined(__OPENCL_C_VERSION__)
#define sb_ls_sqrtf(x) sqrt(x)
#elif defined(__CUDACC__) || defined(__HIP__) || defined(__HIPCC__)
#define sb_ls_sqrtf(x) __fsqrt_rn(x)
#else
#define sb_ls_sqrtf(x) __builtin_sqrtf(x)
#endif

#define SB_LS_LANES 8
#define SB_LS_QNAN 0x7fc00000u
#define SB_LS_JAC_MAX_SWEEPS 60
/* purposes (the rng's stream ids) of the random matrices; fixed forever */
#define SB_LS_PURPOSE_NORMAL 0x4c4e524du     /* "LNRM" */
#define SB_LS_PURPOSE_RADEMACHER 0x4c52444du /* "LRDM" */
#define SB_LS_NORMAL 0
#define SB_LS_RADEMACHER 1

/* |x| by its bits (exact, no float operation). */
SB_FN float sb_ls_fabs(float x) { return sb_u2f(sb_f2u(x) & 0x7fffffffu); }

/* NaN results as the one quiet NaN 0x7fc00000 (x86 and ARM make NaNs of
 * different signs); everything else unchanged. */
SB_FN float sb_ls_canon(float x) { return x != x ? sb_u2f(SB_LS_QNAN) : x; }

/* 2^e as a float, e in [-126, 127] (exact). */
SB_FN float sb_ls_pow2(int e) { return sb_u2f((sb_u32)(e + 127) << 23); }

/* x * 2^k for k in [-252, 254], in at most two multiplications by normal
 * powers of two: exact while the result is normal; a result below the normal
 * range is rounded (nearest-even) by the last multiplication. */
SB_FN float sb_ls_scale(float x, int k) {
    if (k > 127) {
        x = x * sb_ls_pow2(127);
        k -= 127;
    } else if (k < -126) {
        x = x * sb_ls_pow2(-126);
        k += 126;
    }
    return x * sb_ls_pow2(k);
}

/* floor(log2 |x|) of a finite nonzero x from its bits, subnormals included. */
SB_FN int sb_ls_ilogb(sb_u32 u) {
    const int e = (int)((u >> 23) & 0xffu);
    if (e != 0) return e - 127;
    sb_u32 m = u & 0x7fffffu;
    int b = 0;
    while (m > 1u) {
        m >>= 1;
        b++;
    }
    return b - 149;
}

/* ---- the one dot product ------------------------------------------------ */

/* sum_{k < len} x[k*xs] * y[k*ys] in the fixed lane order (header). */
SB_FN float sb_ls_dot(SB_GLOBAL const float *x, sb_i64 xs, SB_GLOBAL const float *y, sb_i64 ys, sb_i64 len) {
    float p0 = 0.0f, p1 = 0.0f, p2 = 0.0f, p3 = 0.0f, p4 = 0.0f, p5 = 0.0f, p6 = 0.0f, p7 = 0.0f;
    sb_i64 k = 0;
    for (; k + SB_LS_LANES <= len; k += SB_LS_LANES) {
        p0 = p0 + x[k * xs] * y[k * ys];
        p1 = p1 + x[(k + 1) * xs] * y[(k + 1) * ys];
        p2 = p2 + x[(k + 2) * xs] * y[(k + 2) * ys];
        p3 = p3 + x[(k + 3) * xs] * y[(k + 3) * ys];
        p4 = p4 + x[(k + 4) * xs] * y[(k + 4) * ys];
        p5 = p5 + x[(k + 5) * xs] * y[(k + 5) * ys];
        p6 = p6 + x[(k + 6) * xs] * y[(k + 6) * ys];
        p7 = p7 + x[(k + 7) * xs] * y[(k + 7) * ys];
    }
    if (k < len) p0 = p0 + x[k * xs] * y[k * ys];
    if (k + 1 < len) p1 = p1 + x[(k + 1) * xs] * y[(k + 1) * ys];
    if (k + 2 < len) p2 = p2 + x[(k + 2) * xs] * y[(k + 2) * ys];
    if (k + 3 < len) p3 = p3 + x[(k + 3) * xs] * y[(k + 3) * ys];
    if (k + 4 < len) p4 = p4 + x[(k + 4) * xs] * y[(k + 4) * ys];
    if (k + 5 < len) p5 = p5 + x[(k + 5) * xs] * y[(k + 5) * ys];
    if (k + 6 < len) p6 = p6 + x[(k + 6) * xs] * y[(k + 6) * ys];
    return ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7));
}

/* ---- Cholesky ------------------------------------------------------------- */

/* k_i of the equilibration from a_ii: floor(e/2) for the exponent e of a
 * positive finite a_ii (|k| <= 75), else 0 (the pivot test refuses it). */
SB_FN int sb_ls_chol_k(float aii) {
    const sb_u32 u = sb_f2u(aii);
    if ((u >> 31) || u == 0u || (u & 0x7f800000u) == 0x7f800000u) return 0;
    const int e = sb_ls_ilogb(u);
    return e >= 0 ? e / 2 : -((1 - e) / 2);
}

/* a'_ij = (a_ij * 2^-k_i) * 2^-k_j. */
SB_FN float sb_ls_chol_in(float a, int ki, int kj) { return (a * sb_ls_pow2(-ki)) * sb_ls_pow2(-kj); }

/* l_ij = l'_ij * 2^k_i. */
SB_FN float sb_ls_chol_out(float l, int ki) { return l * sb_ls_pow2(ki); }

/* d_j = a'_jj - dot(l_j, l_j; j): the caller refuses unless d_j > 0, then
 * l_jj = sqrt(d_j). lj is row j of L (l_j0 first). */
SB_FN float sb_ls_chol_pivot(float ajj, SB_GLOBAL const float *lj, sb_i64 j) {
    return ajj - sb_ls_dot(lj, 1, lj, 1, j);
}

/* l_ij = (a'_ij - dot(l_i, l_j; j)) / l_jj. */
SB_FN float sb_ls_chol_off(float aij, SB_GLOBAL const float *li, SB_GLOBAL const float *lj, sb_i64 j, float ljj) {
    return (aij - sb_ls_dot(li, 1, lj, 1, j)) / ljj;
}

/* ---- triangular solves (l: row-major lower triangle, x: the solution so far) ---- */

/* Row i of L x = b, column c of x (x has row stride ldx, b_i already in x[i]). */
SB_FN float sb_ls_forward(SB_GLOBAL const float *l, sb_i64 ldl, SB_GLOBAL const float *x, sb_i64 ldx, sb_i64 i,
                          float bi) {
    return sb_ls_canon((bi - sb_ls_dot(l + i * ldl, 1, x, ldx, i)) / l[i * ldl + i]);
}

/* Row i of L^T x = b for an n x n L (x points at column c's element of row 0). */
SB_FN float sb_ls_backward(SB_GLOBAL const float *l, sb_i64 ldl, SB_GLOBAL const float *x, sb_i64 ldx, sb_i64 n,
                           sb_i64 i, float bi) {
    return sb_ls_canon((bi - sb_ls_dot(l + (i + 1) * ldl + i, ldl, x + (i + 1) * ldx, ldx, n - i - 1)) /
                       l[i * ldl + i]);
}

/* ---- cyclic Jacobi ------------------------------------------------------------
 * The matrix is first scaled by 2^-e, e = floor(log2 max|a_ij|) (exact unless
 * an element falls below the normal range), so its largest element lies in
 * [1, 2); its eigenvalues are scaled back by 2^e at the end.
 * A sweep visits every pair p < q once, row-cyclic: p = 0, 1, ..., n-2 and,
 * for each p, q = p+1, ..., n-1 (SB_LS_JAC_Q). At its turn, pair (p, q):
 *   - a_pq == 0: nothing (a diagonal matrix is never rotated);
 *   - |a_pq| <= 2^-48 or |a_pq| * 2^30 <= min(|a_pp|, |a_qq|): a_pq and a_qp
 *     are set to +0, no rotation (negligible: a backward perturbation below
 *     2^-48 of the largest element, or 2^-30 of the diagonal beside it);
 *   - else one rotation (sb_ls_jac_rot, sb_ls_jac_pair) that makes a_pq zero.
 * Rutishauser's accumulation of the diagonal: besides the running diagonal
 * d = (a_ii), which the rotations read, b holds the diagonal at the start of
 * the sweep and z the sum of the sweep's increments (z_p := z_p - h, z_q :=
 * z_q + h for each rotation's h = t*a_pq, in rotation order); at the end of
 * every sweep b_i := b_i + z_i, d_i := b_i, z_i := 0. The increments shrink
 * with the off-diagonal, so their sum is far more accurate than the running
 * diagonal's, whose roundings would otherwise pile up over n rotations a sweep.
 * The method stops after the first sweep that made no rotation (the matrix is
 * then diagonal); SB_LS_JAC_MAX_SWEEPS sweeps without that are refused. */

#ifdef SB_SABOTAGE_JACOBI_ORDER
/* Separating arm (make SABOTAGE=jacobi-order): each row's q in descending order. */
#define SB_LS_JAC_Q(p, b, n) ((n) + (p) - (b))
#else
#define SB_LS_JAC_Q(p, b, n) (b)
#endif

/* 0: nothing; 1: negligible, set to zero; 2: rotate. */
SB_FN int sb_ls_jac_action(float app, float aqq, float apq) {
    if (apq == 0.0f) return 0;
    const float m = sb_ls_fabs(apq), dp = sb_ls_fabs(app), dq = sb_ls_fabs(aqq);
    const float dmin = dp < dq ? dp : dq;
    if (m <= sb_ls_pow2(-48) || m * sb_ls_pow2(30) <= dmin) return 1;
    return 2;
}

/* The rotation of pair (p, q), Rutishauser's form:
 *   theta = (a_qq - a_pp) / (2 a_pq)
 *   t = sign(theta) / (|theta| + r), r = sqrt(theta*theta + 1), or r = |theta|
 *       when |theta| >= 2^60 (theta*theta would overflow; sign(0) = +1)
 *   c = 1 / sqrt(t*t + 1), s = t*c, tau = s / (1 + c).
 * Then h = t*a_pq, a_pp := a_pp - h, a_qq := a_qq + h, z_p := z_p - h,
 * z_q := z_q + h, a_pq := a_qp := +0. */
SB_FN void sb_ls_jac_rot(float app, float aqq, float apq, float *t, float *c, float *s, float *tau) {
    const float theta = (aqq - app) / (2.0f * apq);
    const float at = sb_ls_fabs(theta);
    const float r = at >= sb_ls_pow2(60) ? at : sb_ls_sqrtf(theta * theta + 1.0f);
    float tt = 1.0f / (at + r);
    if (theta < 0.0f) tt = 0.0f - tt;
    const float cc = 1.0f / sb_ls_sqrtf(tt * tt + 1.0f);
    const float ss = tt * cc;
    *t = tt;
    *c = cc;
    *s = ss;
    *tau = ss / (1.0f + cc);
}

/* The rotation's diagonal increment h = t*a_pq (a_pp and z_p lose it, a_qq
 * and z_q gain it). */
SB_FN float sb_ls_jac_h(float apq, float t) { return t * apq; }

/* One element pair of rows (and columns) p and q, or of rows p and q of V^T:
 * g = x_p, h = x_q -> x_p = g - s*(h + g*tau), x_q = h + s*(g - h*tau). */
SB_FN void sb_ls_jac_pair(float g, float h, float s, float tau, float *gn, float *hn) {
    *gn = g - s * (h + g * tau);
    *hn = h + s * (g - h * tau);
}

/* Eigenvalue order: i before j when w_i > w_j, or w_i == w_j and i < j. */
SB_FN int sb_ls_eig_before(float wi, sb_i64 i, float wj, sb_i64 j) { return wi > wj || (wi == wj && i < j); }

/* Index of the largest |v_r| of a vector, the lowest r on ties (magnitude bits
 * compare as the values do). */
SB_FN sb_i64 sb_ls_argmax_abs(SB_GLOBAL const float *v, sb_i64 n) {
    sb_i64 best = 0;
    sb_u32 bm = 0u;
    for (sb_i64 r = 0; r < n; r++) {
        const sb_u32 m = sb_f2u(v[r]) & 0x7fffffffu;
        if (m > bm) {
            bm = m;
            best = r;
        }
    }
    return best;
}

/* An output component: negated (0 - v) or not (v + 0): exact, and +0 for zeros. */
SB_FN float sb_ls_signed(float v, int neg) { return neg ? 0.0f - v : v + 0.0f; }

/* ---- random matrices ---------------------------------------------------------- */

/* A uniform float in (-1, 1): (2k + 1 - 2^24) * 2^-24 for the top 24 bits k of
 * w; exact, symmetric about 0, never 0. */
SB_FN float sb_ls_sym_unit(sb_u32 w) {
    const sb_i32 v = (sb_i32)((w >> 8) << 1) + 1 - 16777216;
    return (float)v * sb_ls_pow2(-24);
}

/* A standard normal draw for (seed, purpose, index), Marsaglia's polar method:
 * candidate pairs (u, v) = (sym(w0), sym(w1)), then (sym(w2), sym(w3)), of the
 * blocks sub = 0, 1, 2, ... in order; the first with s = u*u + v*v < 1 gives
 * u * sqrt((-2 * log(s)) / s) (the pair's second normal is not used, so each
 * element is a function of its own index alone). s > 0 always (u != 0). After
 * 64 blocks without a candidate (probability below 10^-85) the draw is 0. */
SB_FN float sb_ls_normal(sb_u64 seed, sb_u32 purpose, sb_u64 index) {
    for (sb_u32 sub = 0u; sub < 64u; sub++) {
        sb_u32 w[4];
        sb_rng_words(seed, purpose, index, sub, w);
        for (int h = 0; h < 2; h++) {
            const float u = sb_ls_sym_unit(w[2 * h]), v = sb_ls_sym_unit(w[2 * h + 1]);
            const float s = u * u + v * v;
            if (s < 1.0f) return u * sb_ls_sqrtf((-2.0f * sb_logf(s)) / s);
        }
    }
    return 0.0f;
}

/* +1 or -1 by the top bit of word 0 of (seed, purpose, index, sub 0): exact. */
SB_FN float sb_ls_rademacher(sb_u64 seed, sb_u32 purpose, sb_u64 index) {
    sb_u32 w[4];
    sb_rng_words(seed, purpose, index, 0u, w);
    return (w[0] >> 31) ? -1.0f : 1.0f;
}

/* Element (r, c) of the rows x cols random matrix of kind (SB_LS_NORMAL or
 * SB_LS_RADEMACHER) and seed: drawn at index r*cols + c. */
SB_FN float sb_ls_random(int kind, sb_u64 seed, sb_i64 r, sb_i64 c, sb_i64 cols) {
    const sb_u64 idx = (sb_u64)(r * cols + c);
    return kind == SB_LS_RADEMACHER ? sb_ls_rademacher(seed, SB_LS_PURPOSE_RADEMACHER, idx)
                                    : sb_ls_normal(seed, SB_LS_PURPOSE_NORMAL, idx);
}

#endif
