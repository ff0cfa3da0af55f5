/*
 * density_entry.h: the entry kernel of kernel density
 * (src/models/neighbors/kde.c), part of the linalg program (included by
 * linalg_entry.h; its name goes in SB_LINALG_DENSITY_KERNELS,
 * src/device/programs.h). The arithmetic is kernels/kde.h's, the host's
 * double operations in the integer binary64 of kernels/f64.h.
 */
#include "../kde.h"

/* Queries q0 .. q0 + nq - 1 of q (d features each), one a work-item: each
 * one's kernel sum and largest term's exponent (sb_kd_sum) into
 * out[2 (i - q0)], out[2 (i - q0) + 1]. A query's values depend on its row
 * and the model alone, so the grid and the work-group size reach no bit. */
SB_KERNEL void kd_sums(SB_GLOBAL const float *q, sb_i64 q0, sb_i64 nq, SB_GLOBAL const float *x, sb_i64 n, sb_i32 d,
                       SB_GLOBAL const float *w, sb_i32 hw, sb_i32 kern, sb_u64 invh, sb_u64 inv2h2, sb_u64 h,
                       sb_u64 h2, sb_u64 h2_hi, SB_GLOBAL sb_u64 *out) {
    const sb_i64 i = sb_global_id(0);
    if (i >= nq) return;
    sb_kd_scalars c;
    c.invh = invh, c.inv2h2 = inv2h2, c.h = h, c.h2 = h2, c.h2_hi = h2_hi;
    sb_kd_sum(q + (q0 + i) * d, x, n, d, w, hw, kern, c, out + 2 * i);
}
