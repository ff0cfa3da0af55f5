/*
 * linear_entry.h: entry kernels of the linear family (src/models/linear/),
 * part of the linalg program (included by linalg_entry.h; their names go in
 * SB_LINALG_LINEAR_KERNELS, src/device/programs.h). The arithmetic is
 * kernels/linear.h's, the functions the host runs.
 */
#include "../linear.h"

/* Logistic regression's rows on a GPU (logistic.c's rows_task, row for row):
 * row i's K margins z (in place), intercepts b, class label[i] (a float class
 * index), weight s[i]; the weighted residuals into r, the weighted loss into
 * loss[i]. Their exact sums are the reduce program's (kr_line_sum). */
SB_KERNEL void kn_logit_rows(SB_GLOBAL float *z, sb_i64 n, sb_i32 K, SB_GLOBAL const float *b,
                             SB_GLOBAL const float *label, SB_GLOBAL const float *s, SB_GLOBAL float *r,
                             SB_GLOBAL float *loss) {
    const sb_i64 i = sb_global_id(0);
    if (i >= n) return;
    loss[i] = sb_k_logit_row(K, z + i * K, b, (sb_i32)label[i], s[i], r + i * K);
}

/* The linear family's centered rows on a GPU, src/models/linear/linear.c's
 * center_task element for element (the same two roundings at most: x - m,
 * then times s): out[i*W + c] = (x[i*P + c] - xm[c]) (* s[i] when hw), and
 * in the ny columns P + t: (y[i*ny + t] - ym[t]) (* s[i]). W = P + ny.
 * Column c is work-item c of dimension 0 (neighbours read neighbouring
 * columns), rows stride along dimension 1. */
SB_KERNEL void kn_center_rows(SB_GLOBAL const float *x, sb_i64 n, sb_i64 P, SB_GLOBAL const float *xm,
                              SB_GLOBAL const float *y, SB_GLOBAL const float *ym, sb_i32 ny,
                              SB_GLOBAL const float *s, sb_i32 hw, SB_GLOBAL float *out) {
    const sb_i64 c = sb_global_id(0), W = P + ny, step = sb_global_size(1);
    if (c >= W) return;
    for (sb_i64 i = sb_global_id(1); i < n; i += step) {
        const float v = c < P ? x[i * P + c] - xm[c] : y[i * ny + (c - P)] - ym[c - P];
        out[i * W + c] = hw ? v * s[i] : v;
    }
}

/* The wide eigensolver's QL rotations (lin_eigh.c): work-item r applies the
 * batch to element r of every vector (kernels/linear.h's sb_k_eigh_rot). */
SB_KERNEL void kn_eigh_rot(SB_GLOBAL float *zt, sb_i64 n, sb_i64 ld, SB_GLOBAL const float *cs,
                           SB_GLOBAL const float *sn, SB_GLOBAL const sb_i32 *col, sb_i64 nrot) {
    const sb_i64 r = sb_global_id(0);
    if (r >= n) return;
    sb_k_eigh_rot(zt, ld, r, cs, sn, col, nrot);
}

/* The wide eigensolver's Q (lin_eigh.c): work-item c forms column c
 * (sb_k_eigh_qform_col); neighbours read neighbouring columns. */
SB_KERNEL void kn_eigh_qform(SB_GLOBAL float *q, sb_i64 n, sb_i64 ld, SB_GLOBAL const float *V,
                             SB_GLOBAL const float *taus, SB_GLOBAL const sb_u8 *fin) {
    const sb_i64 c = sb_global_id(0);
    if (c >= n) return;
    sb_k_eigh_qform_col(q, n, ld, V, taus, fin, c);
}

/* dst[j*ld + i] := src[i*ld + j] for i, j < n (exact moves): column j is
 * work-item j of dimension 0, rows stride along dimension 1. */
SB_KERNEL void kn_eigh_transpose(SB_GLOBAL const float *src, SB_GLOBAL float *dst, sb_i64 n, sb_i64 ld) {
    const sb_i64 j = sb_global_id(0), step = sb_global_size(1);
    if (j >= n) return;
    for (sb_i64 i = sb_global_id(1); i < n; i += step) dst[j * ld + i] = src[i * ld + j];
}

/* The wide eigensolver's Householder step k (lin_eigh.c), four launches: the
 * reflector (one work-group: work-item 0 its serial head, then the group its
 * elements), the product p (work-item i - lo for output i), the serial
 * middle (one work-group: work-item 0 the sum, then the group u), the rank-2
 * update (column lo + work-item of dimension 0, rows striding along dimension
 * 1). go: the step has a reflector (set by kn_eigh_hh_reflect; the others
 * return without one). */
SB_KERNEL void kn_eigh_hh_reflect(SB_GLOBAL float *a, sb_i64 n, sb_i64 ld, sb_i64 k, SB_GLOBAL float *V,
                                  SB_GLOBAL float *taus, SB_GLOBAL sb_i32 *go) {
    SB_SHARED float sh[2];
    const int l = sb_local_id(0);
    if (l == 0) {
        sh[0] = sb_k_eigh_hh_head(a, n, ld, k, taus, go);
        sh[1] = *go ? 1.0f : 0.0f;
    }
    sb_barrier();
    const float v0 = sh[0];
    const sb_i32 g = sh[1] != 0.0f;
    for (sb_i64 i = l; i < n; i += SB_WG) V[k * n + i] = sb_k_eigh_hh_velem(a, ld, k, i, v0, g);
}

SB_KERNEL void kn_eigh_hh_matvec(SB_GLOBAL const float *a, sb_i64 n, sb_i64 ld, sb_i64 k, SB_GLOBAL const float *V,
                                 SB_GLOBAL const sb_i32 *go, SB_GLOBAL float *p) {
    const sb_i64 lo = k + 1, i = lo + sb_global_id(0);
    if (i >= n || !*go) return;
    p[i] = sb_k_eigh_hh_matvec(a, n, ld, lo, V + k * n, i);
}

SB_KERNEL void kn_eigh_hh_pdv(sb_i64 n, sb_i64 k, SB_GLOBAL const float *V, SB_GLOBAL const float *taus,
                              SB_GLOBAL const sb_i32 *go, SB_GLOBAL float *p, SB_GLOBAL float *u) {
    SB_SHARED float sh[1];
    const int l = sb_local_id(0);
    const sb_i64 lo = k + 1;
    const sb_i32 g = *go;
    if (l == 0 && g) sh[0] = sb_k_eigh_hh_pdv(n, lo, taus[k], V + k * n, p);
    sb_barrier_global(); /* p's new values and h, for the whole group */
    const float h = g ? sh[0] : 0.0f;
    for (sb_i64 i = lo + l; i < n && g; i += SB_WG) u[i] = sb_k_eigh_hh_uelem(p, V + k * n, h, i);
}

SB_KERNEL void kn_eigh_hh_rank2(SB_GLOBAL float *a, sb_i64 n, sb_i64 ld, sb_i64 k, SB_GLOBAL const float *V,
                                SB_GLOBAL const sb_i32 *go, SB_GLOBAL const float *u) {
    const sb_i64 lo = k + 1, j = lo + sb_global_id(0), step = sb_global_size(1);
    if (j >= n || !*go) return;
    for (sb_i64 i = lo + sb_global_id(1); i < n; i += step) sb_k_eigh_hh_rank2(a, ld, i, j, V + k * n, u);
}

/* After the reduction: de[i] = a[i][i], de[n + i] = a[i+1][i] (0 for the
 * last), and fin[k] = reflector k is finite (k + 2 < n; else 0). */
SB_KERNEL void kn_eigh_tridiag(SB_GLOBAL const float *a, sb_i64 n, sb_i64 ld, SB_GLOBAL const float *V,
                               SB_GLOBAL const float *taus, SB_GLOBAL float *de, SB_GLOBAL sb_u8 *fin) {
    const sb_i64 i = sb_global_id(0);
    if (i >= n) return;
    de[i] = a[i * ld + i];
    de[n + i] = i + 1 < n ? a[(i + 1) * ld + i] : 0.0f;
    fin[i] = i + 2 < n ? sb_k_eigh_finite(n, i, V, taus) : (sb_u8)0;
}
