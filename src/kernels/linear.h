/*
 * linear.h: device-neutral bodies for a linear model, written once for every
 * backend. The arithmetic order is part of the profile: a margin is
 * b + x0*w0 + x1*w1 + ... accumulated left to right, every product rounded
 * before its addition (no contraction), so CPU, CUDA and OpenCL agree.
 */
#ifndef SB_KERNELS_LINEAR_H
#define SB_KERNELS_LINEAR_H
#include "compat.h"
#include "../math/sb_math.h"

/* Margin of row r of a row-major matrix x with nf features. */
SB_FN float sb_k_linear_margin(const SB_GLOBAL float *x, sb_i64 r, sb_i32 nf,
                               const SB_GLOBAL float *w, float bias) {
    float m = bias;
    const SB_GLOBAL float *row = x + r * (sb_i64)nf;
    /* Written as one expression on purpose: it is exactly what a contracting
     * compiler fuses, so the profile's flags, not the spelling, must keep it
     * two roundings (the contract and excess-precision arms check that). */
    for (sb_i32 f = 0; f < nf; f++) m = m + row[f] * w[f];
    return m;
}

/* Logistic loss on one row: p = sigmoid(margin), gradient g = p - y and
 * hessian h = p * (1 - p), each a single rounding of its operands. */
SB_FN void sb_k_logistic_grad(float margin, float y, SB_GLOBAL float *g, SB_GLOBAL float *h) {
    float p = sb_sigmoidf(margin);
    *g = p - y;
    *h = p * (1.0f - p);
}

/* One row of logistic regression's loss and residuals (src/models/linear/logistic.c,
 * scikit-learn's lbfgs objective), written once for the host and every GPU:
 * z holds the row's K margins without the intercepts b, y its class, si its
 * weight. K == 1 (binary): the loss log(1 + e^-|z|) + max(z, 0) - y z and the
 * residual sigmoid(z) - y; K >= 3: z[k] += b[k] (in place), the loss
 * log sum_k e^(z_k - max) + max - z_y and the residuals softmax_k - [k == y].
 * r gets the K residuals times si; returns the loss times si. */
SB_FN float sb_k_logit_row(sb_i32 K, SB_GLOBAL float *z, SB_GLOBAL const float *b, sb_i32 y, float si,
                           SB_GLOBAL float *r) {
    if (K == 1) {
        const float zi = z[0] + b[0];
        const float yi = y == 1 ? 1.0f : 0.0f;
        float en;
        const float sg = sb_sigmoid_expneg(zi, &en); /* sb_sigmoidf(zi), en = sb_expf(-|zi|) */
        const float li = sb_log1pf(en) + (zi > 0.0f ? zi : 0.0f) - yi * zi;
        r[0] = si * (sg - yi);
        return si * li;
    }
    float mx = sb_u2f(0xFF800000u); /* -inf */
    for (sb_i32 k = 0; k < K; k++) {
        z[k] = z[k] + b[k];
        if (z[k] > mx) mx = z[k];
    }
    float sum = 0.0f;
    for (sb_i32 k = 0; k < K; k++) {
        r[k] = sb_expf(z[k] - mx);
        sum = sum + r[k];
    }
    const float li = sb_logf(sum) + mx - z[y];
    for (sb_i32 k = 0; k < K; k++) r[k] = si * (r[k] / sum - (k == y ? 1.0f : 0.0f));
    return si * li;
}

/* ---- the wide eigensolver's device steps (src/models/linear/lin_eigh.c) ----
 * Each is lin_eigh_lanes.h's task for one element, the same operations in the
 * same order (the host's lanes only group elements into one instruction), so
 * the host's bits on every device. */

/* Element r of every vector gets the QL rotations cs/sn/col[0..nrot) in
 * order: rotation t acts on columns i = col[t] and i + 1 of z, held transposed
 * (zt[i*ld + r] is element r of column i): zt[i+1][r] := s x + c f and
 * zt[i][r] := c x - s f, x and f the old zt[i][r] and zt[i+1][r]. Column i's
 * new value is the next rotation's f when the columns step down by one: kept
 * in a register (carry), as the host's rot_task keeps it, and stored when a
 * chain of such steps ends. Within a chain the x of the next rotations are
 * columns the chain has not written yet (it writes only columns above the
 * current one), so they are loaded SB_K_EIGH_PF at a time ahead of the
 * arithmetic: the loads' latency is paid once per group, not per rotation.
 * Each element's operations and their order are rot_task's. */
#define SB_K_EIGH_PF 8
SB_FN void sb_k_eigh_rot(SB_GLOBAL float *zt, sb_i64 ld, sb_i64 r, SB_GLOBAL const float *cs,
                         SB_GLOBAL const float *sn, SB_GLOBAL const sb_i32 *col, sb_i64 nrot) {
    float carry = 0.0f;
    sb_i64 cur = -1; /* the column whose value carry holds */
    sb_i64 t = 0;
    while (t < nrot) {
        const sb_i64 i0 = col[t];
        if (cur != i0 + 1) {
            if (cur >= 0) zt[cur * ld + r] = carry;
            carry = zt[(i0 + 1) * ld + r];
        }
        sb_i64 te = t + 1; /* the chain: rotations t..te-1 on columns i0, i0 - 1, ... */
        while (te < nrot && col[te] == col[te - 1] - 1) te++;
        for (sb_i64 g = t; g < te; g += SB_K_EIGH_PF) {
            const sb_i64 cnt = te - g < SB_K_EIGH_PF ? te - g : SB_K_EIGH_PF, ib = i0 - (g - t);
            float x[SB_K_EIGH_PF];
            for (sb_i64 q = 0; q < SB_K_EIGH_PF; q++) x[q] = q < cnt ? zt[(ib - q) * ld + r] : 0.0f;
            for (sb_i64 q = 0; q < cnt; q++) {
                const float c = cs[g + q], s = sn[g + q], f = carry;
                zt[(ib - q + 1) * ld + r] = s * x[q] + c * f;
                carry = c * x[q] - s * f;
            }
        }
        cur = i0 - (te - 1 - t);
        t = te;
    }
    if (cur >= 0) zt[cur * ld + r] = carry;
}

/* Column c of Q = H_0 H_1 ... H_{n-3} (q row-major, row stride ld), from the
 * identity, the reflectors applied from the last back: reflector k (row k of
 * V, nonzero from k + 1; taus[k] == 0: none) does q[lo.., c] -= tau v
 * (v . q[lo.., c]), lo = k + 1, the sum over rows ascending from +0. A
 * column c < lo is +0 in rows lo.. and a finite reflector (fin[k]) keeps it
 * so: skipped, as the host's qform_task skips it. */
SB_FN void sb_k_eigh_qform_col(SB_GLOBAL float *q, sb_i64 n, sb_i64 ld, SB_GLOBAL const float *V,
                               SB_GLOBAL const float *taus, SB_GLOBAL const sb_u8 *fin, sb_i64 c) {
    for (sb_i64 i = 0; i < n; i++) q[i * ld + c] = i == c ? 1.0f : 0.0f;
    for (sb_i64 k = n - 3; k >= 0; k--) {
        const float tau = taus[k];
        if (tau == 0.0f) continue;
        const sb_i64 lo = k + 1;
        if (fin[k] && c < lo) continue;
        SB_GLOBAL const float *v = V + k * n;
        float s = 0.0f;
        for (sb_i64 i = lo; i < n; i++) s = s + v[i] * q[i * ld + c];
        s = tau * s;
        for (sb_i64 i = lo; i < n; i++) q[i * ld + c] = q[i * ld + c] - s * v[i];
    }
}

/* IEEE's correctly rounded square root in each dialect (the profile allows it,
 * as kernels/linalg_solve.h's sb_ls_sqrtf). */
#if defined(__OPENCL_VERSION__) || defined(__OPENCL_C_VERSION__)
#define sb_k_eigh_sqrtf(x) sqrt(x)
#elif defined(__CUDACC__) || defined(__HIP__) || defined(__HIPCC__)
#define sb_k_eigh_sqrtf(x) __fsqrt_rn(x)
#else
#define sb_k_eigh_sqrtf(x) __builtin_sqrtf(x)
#endif

/* Householder step k's reflector, its serial head (one work-item,
 * lin_eigh.c's serial part): ss = sum_{i > k+1} a[k][i]^2 in index order from
 * +0 (row k read as column k: the trailing matrix is exactly symmetric);
 * ss == 0: no reflector (taus[k] = 0, *go = 0). Else beta = -sign(alpha)
 * sqrt(alpha^2 + ss) (alpha = a[k][k+1]), taus[k] = (beta - alpha) / beta,
 * a[k+1][k] = a[k][k+1] = beta (read by no later step but the tridiagonal's
 * e[k]), *go = 1; returns the divisor alpha - beta of the reflector's
 * elements (sb_k_eigh_hh_velem). */
SB_FN float sb_k_eigh_hh_head(SB_GLOBAL float *a, sb_i64 n, sb_i64 ld, sb_i64 k, SB_GLOBAL float *taus,
                              SB_GLOBAL sb_i32 *go) {
    const sb_i64 lo = k + 1;
    SB_GLOBAL float *ak = a + k * ld;
    const float alpha = ak[lo];
    float ss = 0.0f;
    for (sb_i64 i = lo + 1; i < n; i++) ss = ss + ak[i] * ak[i];
    if (ss == 0.0f) {
        taus[k] = 0.0f;
        *go = 0;
        return 0.0f;
    }
    const float norm = sb_k_eigh_sqrtf(alpha * alpha + ss);
    const float beta = alpha > 0.0f ? -norm : norm;
    const float v0 = alpha - beta;
    taus[k] = (beta - alpha) / beta;
    a[lo * ld + k] = beta;
    ak[lo] = beta;
    *go = 1;
    return v0;
}

/* Element i of reflector k (V's row k; the row a[k] as it was, but for
 * a[k][k+1], which no element reads): 0 before k + 1, 1 at k + 1, a[k][i] / v0
 * after; all 0 without a reflector (go 0). */
SB_FN float sb_k_eigh_hh_velem(SB_GLOBAL const float *a, sb_i64 ld, sb_i64 k, sb_i64 i, float v0, sb_i32 go) {
    if (!go || i <= k) return 0.0f;
    return i == k + 1 ? 1.0f : a[k * ld + i] / v0;
}

/* Step k's product for output i >= k+1: sum_{j >= k+1} a[j][i] v[j], j
 * ascending from +0 (lin_eigh_lanes.h's matvec_task for one element). */
SB_FN float sb_k_eigh_hh_matvec(SB_GLOBAL const float *a, sb_i64 n, sb_i64 ld, sb_i64 lo, SB_GLOBAL const float *v,
                                sb_i64 i) {
    float acc = 0.0f;
    for (sb_i64 j = lo; j < n; j++) acc = acc + a[j * ld + i] * v[j];
    return acc;
}

/* Step k's serial middle (one work-item): p := tau p and pdv = sum p_i v_i in
 * index order from +0, i >= lo; returns h = 0.5 tau pdv, for u_i = p_i - h v_i
 * (sb_k_eigh_hh_uelem). */
SB_FN float sb_k_eigh_hh_pdv(sb_i64 n, sb_i64 lo, float tau, SB_GLOBAL const float *v, SB_GLOBAL float *p) {
    float pdv = 0.0f;
    for (sb_i64 i = lo; i < n; i++) {
        p[i] = tau * p[i];
        pdv = pdv + p[i] * v[i];
    }
    return 0.5f * tau * pdv;
}

SB_FN float sb_k_eigh_hh_uelem(SB_GLOBAL const float *p, SB_GLOBAL const float *v, float h, sb_i64 i) {
    return p[i] - h * v[i];
}

/* Step k's rank-2 update of one element, i, j >= lo: a[i][j] -= v_i u_j + u_i v_j. */
SB_FN void sb_k_eigh_hh_rank2(SB_GLOBAL float *a, sb_i64 ld, sb_i64 i, sb_i64 j, SB_GLOBAL const float *v,
                              SB_GLOBAL const float *u) {
    a[i * ld + j] = a[i * ld + j] - (v[i] * u[j] + u[i] * v[j]);
}

/* Reflector k (k + 2 < n) and its tau are finite: qform's skip of columns
 * left of it is then exact (bit tests: no isfinite in every dialect). */
SB_FN sb_u8 sb_k_eigh_finite(sb_i64 n, sb_i64 k, SB_GLOBAL const float *V, SB_GLOBAL const float *taus) {
    if ((sb_f2u(taus[k]) & 0x7f800000u) == 0x7f800000u) return 0;
    for (sb_i64 i = k + 1; i < n; i++)
        if ((sb_f2u(V[k * n + i]) & 0x7f800000u) == 0x7f800000u) return 0;
    return 1;
}

#endif
