/*
 * svm_entry.h: entry kernels of the support vector machines
 * (src/models/svm/svm_device.c), part of the float64 program (included by
 * ts_entry.h; their names in SB_TS_KERNELS, src/device/programs.h). The
 * arithmetic is kernels/svm.h's, the functions the host's solver and decision
 * values call: one work-item computes one kernel value or one decision value
 * by the host's sequence, and reads no other work-item's result, so the grid
 * and the work-group size are schedule inputs only.
 *
 * The points are feature-major on the device: point q's feature f at
 * pt[f np + q] (consecutive work-items read consecutive addresses).
 */
#include "../svm.h"

/* Kernel row of point p: out[q] = K(pt_p, pt_q) for q < np (the SMO's row of
 * a working-set index). */
SB_KERNEL void kv_row(SB_GLOBAL const float *pt, sb_i64 np, sb_i32 d, sb_i64 p, sb_i32 kern, sb_i32 degree,
                      double gamma, double coef0, SB_GLOBAL float *out) {
    const sb_i64 q = sb_global_id(0);
    if (q >= np) return;
    out[q] = sb_svk_finish(kern, degree, gamma, coef0, sb_svk_sum(kern, d, pt + p, np, pt + q, np));
}

/* Kernel rows of r rows of a: out[i np + q] = K(a_i, pt_q) for i < r (the
 * work-groups' second index), q < np, a_i's feature f at a[aidx[i] ar + f af]
 * (a query block, or training rows held out of a fold). */
SB_KERNEL void kv_rows(SB_GLOBAL const float *pt, sb_i64 np, sb_i32 d, SB_GLOBAL const float *a, sb_i64 ar, sb_i64 af,
                       SB_GLOBAL const sb_i64 *aidx, sb_i64 r, sb_i32 kern, sb_i32 degree, double gamma, double coef0,
                       SB_GLOBAL float *out) {
    const sb_i64 q = sb_global_id(0), i = sb_global_id(1);
    if (q >= np || i >= r) return;
    out[i * np + q] =
        sb_svk_finish(kern, degree, gamma, coef0, sb_svk_sum(kern, d, a + aidx[i] * ar, af, pt + q, np));
}

/* Decision values of r rows from their kernel rows K (r x np): out[i w + j] =
 * sb_svk_decide over pair j's ranges (pr[6 j ..]: o1, b1, e1, o2, b2, e2) of
 * the coefficients c, minus rho[j], for i < r, j0 <= j < w (j - j0 the
 * work-groups' second index). */
SB_KERNEL void kv_dec(SB_GLOBAL const float *K, sb_i64 np, sb_i64 r, SB_GLOBAL const double *c,
                      SB_GLOBAL const sb_i64 *pr, SB_GLOBAL const double *rho, sb_i64 j0, sb_i64 w, sb_i32 skip_zero,
                      SB_GLOBAL double *out) {
    const sb_i64 i = sb_global_id(0), j = j0 + sb_global_id(1);
    if (i >= r || j >= w) return;
    SB_GLOBAL const sb_i64 *g = pr + 6 * j;
    out[i * w + j] = sb_svk_decide(K + i * np, c, g[0], g[1], g[2], g[3], g[4], g[5], rho[j], skip_zero);
}
