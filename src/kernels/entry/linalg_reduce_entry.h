/*
 * linalg_reduce_entry.h: entry kernels of the linear-algebra core's reduce operations
 * (included by linalg_entry.h, so they are part of the linalg program; their
 * names go in SB_LINALG_REDUCE_KERNELS, src/device/programs.h).
 *
 * The arithmetic is kernels/linalg_reduce.h's, the functions the host runs
 * (src/linalg/reduce.c); these kernels only decide which work-item takes
 * which part of a line, pair or row. Every merge is exact: the partial
 * superaccumulators and product accumulators of the parts of a line are
 * added limb by limb with 64-bit integer atomics (normalized limbs are below
 * 2^32, so 2^31 parts fit), flags are counted, and a selection keeps the
 * smallest packed key with a 64-bit compare-and-swap (a minimum is order-free).
 *
 * A line pass: line l's element q is x[l*ls + q*qs]; work-item t takes line
 * l and part c of nch = ceil(K / SB_LR_CHUNK) parts. With lfast (lines one
 * element apart: the columns of a row-major matrix) l = t % nlines and part c
 * is the elements [c*CHUNK, (c+1)*CHUNK), so neighbouring work-items read
 * neighbouring columns; otherwise l = t / nch and part c is the elements
 * c, c + nch, c + 2*nch, ..., so neighbouring work-items read neighbouring
 * elements of one row. Either way every element is in exactly one part.
 *
 * Separating arm (never in a profile build): SB_ARM_FLOAT_ATOMIC sums each
 * part of a line in float and adds the parts into the result with a float
 * compare-and-swap loop, in whatever order the work-items arrive.
 */
#include "../linalg_reduce.h"

/* p[i] = v for i < n (accumulators zeroed, selections set to "none yet"). */
SB_KERNEL void kr_fill64(SB_GLOBAL sb_i64 *p, sb_i64 n, sb_i64 v) {
    const sb_i64 i = sb_global_id(0);
    if (i < n) p[i] = v;
}

SB_KERNEL void kr_fill32(SB_GLOBAL sb_u32 *p, sb_i64 n, sb_u32 v) {
    const sb_i64 i = sb_global_id(0);
    if (i < n) p[i] = v;
}

/* Work-item t's line and elements (header). */
SB_FN void kr_part(sb_i64 t, sb_i64 nlines, sb_i64 nch, sb_i64 K, sb_i32 lfast, sb_i64 *l, sb_i64 *q0, sb_i64 *q1,
                   sb_i64 *step) {
    if (lfast) {
        const sb_i64 c = t / nlines;
        *l = t - c * nlines;
        *q0 = c * SB_LR_CHUNK;
        *q1 = K - *q0 < SB_LR_CHUNK ? K : *q0 + SB_LR_CHUNK;
        *step = 1;
    } else {
        *l = t / nch;
        *q0 = t - *l * nch;
        *q1 = K;
        *step = nch;
    }
}

/* Sums: each part's exact sum added into its line's words (SB_LR_SUM_WORDS:
 * the 10 limbs of sb_sacc, then a count for each of its 5 flags). */
SB_KERNEL void kr_line_sum(SB_GLOBAL const float *x, sb_i64 ls, sb_i64 qs, sb_i64 nlines, sb_i64 K, sb_i64 nch,
                           sb_i32 lfast, SB_GLOBAL sb_i64 *acc, SB_GLOBAL float *out) {
    const sb_i64 t = sb_global_id(0);
    if (t >= nlines * nch) return;
    sb_i64 l, q0, q1, step;
    kr_part(t, nlines, nch, K, lfast, &l, &q0, &q1, &step);
#if defined(SB_ARM_FLOAT_ATOMIC)
    (void)acc;
    float s = 0.0f;
    for (sb_i64 q = q0; q < q1; q += step) s = s + x[l * ls + q * qs];
    SB_GLOBAL sb_u32 *p = (SB_GLOBAL sb_u32 *)&out[l];
    sb_u32 seen, old = *p;
    do {
        seen = old;
        old = sb_atomic_cas32(p, seen, sb_f2u(sb_u2f(seen) + s));
    } while (old != seen);
#else
    (void)out;
    sb_sacc a;
    sb_sacc_init(&a);
    for (sb_i64 q = q0; q < q1; q += step) sb_sacc_add(&a, x[l * ls + q * qs]);
    sb_sacc_normalize(&a);
    SB_GLOBAL sb_i64 *w = acc + l * SB_LR_SUM_WORDS;
    for (int i = 0; i < SB_SACC_LIMBS; i++)
        if (a.limb[i] != 0) sb_atom_add64(&w[i], a.limb[i]);
    for (int b = 0; b < 5; b++)
        if (a.flags & (1u << b)) sb_atom_add64(&w[SB_SACC_LIMBS + b], (sb_i64)1);
#endif
}

/* Each line's exact sum rounded once (a work-item a line). */
SB_KERNEL void kr_line_sum_final(SB_GLOBAL const sb_i64 *acc, sb_i64 nlines, SB_GLOBAL float *out) {
    const sb_i64 l = sb_global_id(0);
    if (l >= nlines) return;
#if defined(SB_ARM_FLOAT_ATOMIC)
    (void)acc;
    (void)out;
#else
    SB_GLOBAL const sb_i64 *w = acc + l * SB_LR_SUM_WORDS;
    sb_sacc a;
    sb_sacc_init(&a);
    for (int i = 0; i < SB_SACC_LIMBS; i++) a.limb[i] = w[i];
    for (int b = 0; b < 5; b++)
        if (w[SB_SACC_LIMBS + b] != 0) a.flags |= 1u << b;
    out[l] = sb_sacc_round_f32(&a);
#endif
}

/* Squared norms: each part's exact sum of squares into its line's words
 * (SB_LR_SQ_WORDS: 18 limbs, a count of NaNs and a count of infinities). A
 * part holds at most SB_LR_CHUNK < SB_PX_FLUSH elements. */
SB_KERNEL void kr_line_sqnorm(SB_GLOBAL const float *x, sb_i64 ls, sb_i64 qs, sb_i64 nlines, sb_i64 K, sb_i64 nch,
                              sb_i32 lfast, SB_GLOBAL sb_i64 *acc) {
    const sb_i64 t = sb_global_id(0);
    if (t >= nlines * nch) return;
    sb_i64 l, q0, q1, step;
    kr_part(t, nlines, nch, K, lfast, &l, &q0, &q1, &step);
    sb_i64 a[SB_PX_LIMBS];
    sb_px_init(a);
    sb_u32 fl = 0u;
    for (sb_i64 q = q0; q < q1; q += step) {
        const sb_u32 u = sb_f2u(x[l * ls + q * qs]);
        fl |= sb_px_flag(u);
        sb_px_add_sq(a, u);
    }
    sb_px_normalize(a);
    SB_GLOBAL sb_i64 *w = acc + l * SB_LR_SQ_WORDS;
    for (int i = 0; i < SB_PX_LIMBS; i++)
        if (a[i] != 0) sb_atom_add64(&w[i], a[i]);
    if (fl & SB_PX_F_NAN) sb_atom_add64(&w[SB_PX_LIMBS], (sb_i64)1);
    if (fl & (SB_PX_F_PINF | SB_PX_F_NINF)) sb_atom_add64(&w[SB_PX_LIMBS + 1], (sb_i64)1);
}

SB_KERNEL void kr_line_sqnorm_final(SB_GLOBAL const sb_i64 *acc, sb_i64 nlines, SB_GLOBAL float *out) {
    const sb_i64 l = sb_global_id(0);
    if (l >= nlines) return;
    SB_GLOBAL const sb_i64 *w = acc + l * SB_LR_SQ_WORDS;
    sb_i64 a[SB_PX_LIMBS];
    for (int i = 0; i < SB_PX_LIMBS; i++) a[i] = w[i];
    const sb_u32 fl = (w[SB_PX_LIMBS] != 0 ? SB_PX_F_NAN : 0u) | (w[SB_PX_LIMBS + 1] != 0 ? SB_PX_F_PINF : 0u);
    out[l] = sb_px_sq_result(a, fl);
}

/* argmin (largest = 0) or argmax (1): each part's smallest packed key, then
 * the line's minimum by compare-and-swap into best[l] (filled with INT64_MAX,
 * above every packed key). */
SB_KERNEL void kr_line_select(SB_GLOBAL const float *x, sb_i64 ls, sb_i64 qs, sb_i64 nlines, sb_i64 K, sb_i64 nch,
                              sb_i32 lfast, sb_i32 largest, SB_GLOBAL sb_i64 *best) {
    const sb_i64 t = sb_global_id(0);
    if (t >= nlines * nch) return;
    sb_i64 l, q0, q1, step;
    kr_part(t, nlines, nch, K, lfast, &l, &q0, &q1, &step);
    sb_i64 b = 0x7fffffffffffffff;
    for (sb_i64 q = q0; q < q1; q += step) {
        const sb_i64 p = sb_sel_of(sb_f2u(x[l * ls + q * qs]), largest, q);
        b = p < b ? p : b;
    }
    SB_GLOBAL sb_i64 *w = best + l;
    sb_i64 old = *w;
    while (b < old) {
        const sb_i64 seen = sb_atom_cas64(w, old, b);
        if (seen == old) break;
        old = seen;
    }
}

SB_KERNEL void kr_line_select_final(SB_GLOBAL const sb_i64 *best, sb_i64 nlines, SB_GLOBAL sb_i32 *out) {
    const sb_i64 l = sb_global_id(0);
    if (l < nlines) out[l] = sb_sel_index(best[l]);
}

/* Top-k of each row (a work-item a row, its heap in heap[r*k ..]): values
 * and int32 indices, k per row, in the order of direction largest. */
SB_KERNEL void kr_topk(SB_GLOBAL const float *x, sb_i64 ld, sb_i64 m, sb_i64 n, sb_i64 k, sb_i32 largest,
                       SB_GLOBAL sb_i64 *heap, SB_GLOBAL float *vals, SB_GLOBAL sb_i32 *idx) {
    const sb_i64 r = sb_global_id(0);
    if (r >= m) return;
    SB_GLOBAL sb_i64 *h = heap + r * k;
    sb_sel_topk(x + r * ld, 1, n, k, largest, h);
    for (sb_i64 t = 0; t < k; t++) {
        const sb_i32 i = sb_sel_index(h[t]);
        idx[r * k + t] = i;
        vals[r * k + t] = x[r * ld + i];
    }
}

/* The distances' per-row work (a work-item a row): mantissas mo, exponents eo
 * (rows x d, dense), the exact squared norm (SB_PX_LIMBS limbs, normalized)
 * and the flags of each row. */
SB_KERNEL void kr_rows_decode(SB_GLOBAL const float *x, sb_i64 ld, sb_i64 rows, sb_i64 d, SB_GLOBAL sb_i32 *mo,
                              SB_GLOBAL sb_u8 *eo, SB_GLOBAL sb_i64 *nrm, SB_GLOBAL sb_i32 *flags) {
    const sb_i64 r = sb_global_id(0);
    if (r >= rows) return;
    sb_i64 a[SB_PX_LIMBS];
    flags[r] = (sb_i32)sb_px_decode_row(x + r * ld, d, mo + r * d, eo + r * d, a);
    for (int i = 0; i < SB_PX_LIMBS; i++) nrm[r * SB_PX_LIMBS + i] = a[i];
}

/* out[i*n + j] = ||x_i - y_j||^2 (a work-item a pair). */
SB_KERNEL void kr_sqdist(SB_GLOBAL const float *x, sb_i64 ldx, SB_GLOBAL const float *y, sb_i64 ldy, sb_i64 m,
                         sb_i64 n, sb_i64 d, SB_GLOBAL const sb_i32 *mx, SB_GLOBAL const sb_u8 *ex,
                         SB_GLOBAL const sb_i32 *my, SB_GLOBAL const sb_u8 *ey, SB_GLOBAL const sb_i64 *nx,
                         SB_GLOBAL const sb_i64 *ny, SB_GLOBAL const sb_i32 *fx, SB_GLOBAL const sb_i32 *fy,
                         SB_GLOBAL float *out) {
    const sb_i64 e = sb_global_id(0);
    if (e >= m * n) return;
    const sb_i64 i = e / n, j = e - i * n;
    out[e] = sb_u2f(sb_px_sqdist(x + i * ldx, y + j * ldy, mx + i * d, ex + i * d, my + j * d, ey + j * d,
                                 nx + i * SB_PX_LIMBS, ny + j * SB_PX_LIMBS, (sb_u32)fx[i], (sb_u32)fy[j], d));
}
