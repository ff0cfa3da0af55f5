/*
 * linalg_solve_entry.h: entry kernels of the linear-algebra core's solve operations
 * (included by linalg_entry.h, so they are part of the linalg program; their
 * names go in SB_LINALG_SOLVE_KERNELS, src/device/programs.h).
 *
 * Cholesky, triangular solves, the cyclic Jacobi eigensolver and the random
 * matrices of the projections on a GPU. Every float operation is a function
 * of kernels/linalg_solve.h, the ones the host runs (src/linalg/solve.c);
 * these kernels only map elements to work-items:
 *
 *  - Cholesky: one launch per column j (kls_chol_col), a work-item per row
 *    i > j; the work-item of row j+1 then makes pivot j+1 from its finished
 *    row. status[0] is -1, or the first column whose pivot was refused.
 *  - triangular solves: a work-item per right-hand side, each running the
 *    whole substitution in row order.
 *  - Jacobi: one work-group runs every sweep (kls_eig_jacobi) in the host's
 *    sequence of rotations; its work-items share each rotation's element
 *    pairs, the rotation itself being computed identically by all of them
 *    from the same values, so every decision is uniform across the group.
 *  - the eigenvalue order and the sign rule (kls_eig_order), the vectors
 *    (kls_eig_vectors), and the random matrices (kls_random) a work-item an
 *    element.
 */
#include "../linalg_solve.h"

/* k[i] of the equilibration, and status[0] := -1 (no refused pivot yet). */
SB_KERNEL void kls_chol_scales(SB_GLOBAL const float *a, sb_i64 lda, sb_i64 n, SB_GLOBAL sb_i32 *k,
                               SB_GLOBAL sb_i64 *status) {
    const sb_i64 i = sb_global_id(0);
    if (i >= n) return;
    k[i] = sb_ls_chol_k(a[i * lda + i]);
    if (i == 0) status[0] = -1;
}

/* l := the equilibrated lower triangle of a (n x n, dense), +0 above it. */
SB_KERNEL void kls_chol_prep(SB_GLOBAL const float *a, sb_i64 lda, sb_i64 n, SB_GLOBAL const sb_i32 *k,
                             SB_GLOBAL float *l) {
    const sb_i64 e = sb_global_id(0);
    if (e >= n * n) return;
    const sb_i64 i = e / n, j = e - i * n;
    l[e] = j <= i ? sb_ls_chol_in(a[i * lda + j], k[i], k[j]) : 0.0f;
}

/* Column j of L (rows i > j), then pivot j+1 by the work-item of row j+1;
 * j = -1 makes pivot 0 only. */
SB_KERNEL void kls_chol_col(SB_GLOBAL float *l, sb_i64 n, sb_i64 j, SB_GLOBAL sb_i64 *status) {
    const sb_i64 i = j + 1 + sb_global_id(0);
    if (i >= n || status[0] >= 0) return;
    if (j >= 0) l[i * n + j] = sb_ls_chol_off(l[i * n + j], l + i * n, l + j * n, j, l[j * n + j]);
    if (i == j + 1) {
        const float d = sb_ls_chol_pivot(l[i * n + i], l + i * n, i);
        if (d > 0.0f) l[i * n + i] = sb_ls_sqrtf(d);
        else status[0] = i;
    }
}

/* l_ij := l'_ij * 2^k_i on the lower triangle, unless a pivot was refused. */
SB_KERNEL void kls_chol_unscale(SB_GLOBAL float *l, sb_i64 n, SB_GLOBAL const sb_i32 *k,
                                SB_GLOBAL const sb_i64 *status) {
    const sb_i64 e = sb_global_id(0);
    if (e >= n * n || status[0] >= 0) return;
    const sb_i64 i = e / n, j = e - i * n;
    if (j <= i) l[e] = sb_ls_chol_out(l[e], (int)k[i]);
}

/* L x = b (trans 0) or L^T x = b (trans 1) for column c of x (n x nrhs, row
 * stride ldx, holding b on entry). */
SB_KERNEL void kls_trsm(SB_GLOBAL const float *l, sb_i64 ldl, SB_GLOBAL float *x, sb_i64 ldx, sb_i64 n, sb_i64 nrhs,
                        sb_i32 trans) {
    const sb_i64 c = sb_global_id(0);
    if (c >= nrhs) return;
    if (trans == 0) {
        for (sb_i64 i = 0; i < n; i++) x[i * ldx + c] = sb_ls_forward(l, ldl, x + c, ldx, i, x[i * ldx + c]);
    } else {
        for (sb_i64 i = n - 1; i >= 0; i--)
            x[i * ldx + c] = sb_ls_backward(l, ldl, x + c, ldx, n, i, x[i * ldx + c]);
    }
}

/* The whole cyclic Jacobi method on one work-group (launch exactly one):
 * w := the scaled symmetric matrix from a's lower triangle, vt := I (when
 * want_v), the sweeps (bz: Rutishauser's b in [0, n) and z in [n, 2n)), then
 * wraw[i] = the scaled-back diagonal and info = {sweeps, rotations, converged}. */
SB_KERNEL void kls_eig_jacobi(SB_GLOBAL const float *a, sb_i64 lda, sb_i64 n, sb_i32 want_v, SB_GLOBAL float *w,
                              SB_GLOBAL float *vt, SB_GLOBAL float *bz, SB_GLOBAL float *wraw,
                              SB_GLOBAL sb_i64 *info) {
    SB_SHARED sb_u32 mx[SB_WG];
    const int lid = sb_local_id(0);
    sb_u32 m = 0u;
    for (sb_i64 e = lid; e < n * n; e += SB_WG) {
        const sb_i64 i = e / n, j = e - i * n;
        if (j <= i) {
            const sb_u32 u = sb_f2u(a[i * lda + j]) & 0x7fffffffu;
            m = u > m ? u : m;
        }
    }
    mx[lid] = m;
    sb_barrier();
    for (int s = SB_WG / 2; s > 0; s >>= 1) {
        if (lid < s) mx[lid] = mx[lid + s] > mx[lid] ? mx[lid + s] : mx[lid];
        sb_barrier();
    }
    const int ex = mx[0] != 0u ? sb_ls_ilogb(mx[0]) : 0;
    for (sb_i64 e = lid; e < n * n; e += SB_WG) {
        const sb_i64 i = e / n, j = e - i * n;
        if (j <= i) {
            const float v = sb_ls_scale(a[i * lda + j], -ex);
            w[i * n + j] = v;
            w[j * n + i] = v;
        }
        if (want_v) vt[e] = i == j ? 1.0f : 0.0f;
    }
    for (sb_i64 i = lid; i < n; i += SB_WG) {
        bz[i] = sb_ls_scale(a[i * lda + i], -ex);
        bz[n + i] = 0.0f;
    }
    sb_i64 rotations = 0;
    int sweeps = 0, converged = 0;
    for (int sweep = 0; sweep < SB_LS_JAC_MAX_SWEEPS && !converged; sweep++) {
        sb_i64 rot = 0;
        for (sb_i64 p = 0; p + 1 < n; p++) {
            for (sb_i64 b = p + 1; b < n; b++) {
                const sb_i64 q = SB_LS_JAC_Q(p, b, n);
                sb_barrier_global();
                const float app = w[p * n + p], aqq = w[q * n + q], apq = w[p * n + q];
                const int act = sb_ls_jac_action(app, aqq, apq);
                if (act == 0) continue;
                sb_barrier_global(); /* every work-item has read before any writes */
                if (act == 1) {
                    if (lid == 0) {
                        w[p * n + q] = 0.0f;
                        w[q * n + p] = 0.0f;
                    }
                    continue;
                }
                float t, c, s, tau;
                sb_ls_jac_rot(app, aqq, apq, &t, &c, &s, &tau);
                for (sb_i64 r = lid; r < n; r += SB_WG) {
                    float gn, hn;
                    if (r != p && r != q) {
                        sb_ls_jac_pair(w[p * n + r], w[q * n + r], s, tau, &gn, &hn);
                        w[p * n + r] = gn;
                        w[r * n + p] = gn;
                        w[q * n + r] = hn;
                        w[r * n + q] = hn;
                    }
                    if (want_v) {
                        sb_ls_jac_pair(vt[p * n + r], vt[q * n + r], s, tau, &gn, &hn);
                        vt[p * n + r] = gn;
                        vt[q * n + r] = hn;
                    }
                }
                if (lid == 0) {
                    const float h = sb_ls_jac_h(apq, t);
                    w[p * n + p] = app - h;
                    w[q * n + q] = aqq + h;
                    bz[n + p] = bz[n + p] - h;
                    bz[n + q] = bz[n + q] + h;
                    w[p * n + q] = 0.0f;
                    w[q * n + p] = 0.0f;
                }
                rot++;
            }
        }
        /* the end of the sweep: b += z, d := b, z := 0 */
        sb_barrier_global();
        for (sb_i64 i = lid; i < n; i += SB_WG) {
            const float bi = bz[i] + bz[n + i];
            bz[i] = bi;
            w[i * n + i] = bi;
            bz[n + i] = 0.0f;
        }
        rotations += rot;
        sweeps = sweep + 1;
        if (rot == 0) converged = 1;
    }
    sb_barrier_global();
    for (sb_i64 i = lid; i < n; i += SB_WG) wraw[i] = sb_ls_scale(w[i * n + i], ex) + 0.0f;
    if (lid == 0) {
        info[0] = sweeps;
        info[1] = rotations;
        info[2] = converged;
    }
}

/* Eigenvalue i's place in the descending order (ties by index), its value
 * there, and its vector's sign (the largest component made positive). */
SB_KERNEL void kls_eig_order(SB_GLOBAL const float *wraw, SB_GLOBAL const float *vt, sb_i64 n, sb_i32 want_v,
                             SB_GLOBAL sb_i32 *perm, SB_GLOBAL sb_i32 *neg, SB_GLOBAL float *wout) {
    const sb_i64 i = sb_global_id(0);
    if (i >= n) return;
    const float wi = wraw[i];
    sb_i64 rank = 0;
    for (sb_i64 j = 0; j < n; j++) rank += sb_ls_eig_before(wraw[j], j, wi, i);
    perm[rank] = (sb_i32)i;
    wout[rank] = wi;
    neg[rank] = want_v ? (sb_i32)(sb_f2u(vt[i * n + sb_ls_argmax_abs(vt + i * n, n)]) >> 31) : 0;
}

/* v[r][k] = component r of eigenvector k, its sign rule applied. */
SB_KERNEL void kls_eig_vectors(SB_GLOBAL const float *vt, sb_i64 n, SB_GLOBAL const sb_i32 *perm,
                               SB_GLOBAL const sb_i32 *neg, SB_GLOBAL float *v) {
    const sb_i64 e = sb_global_id(0);
    if (e >= n * n) return;
    const sb_i64 r = e / n, k = e - r * n;
    v[e] = sb_ls_signed(vt[(sb_i64)perm[k] * n + r], neg[k]);
}

/* out[r*cols + c] = the random matrix's element (r, c). */
SB_KERNEL void kls_random(sb_i32 kind, sb_u64 seed, sb_i64 rows, sb_i64 cols, SB_GLOBAL float *out) {
    const sb_i64 e = sb_global_id(0);
    if (e >= rows * cols) return;
    const sb_i64 r = e / cols;
    out[e] = sb_ls_random(kind, seed, r, e - r * cols, cols);
}
