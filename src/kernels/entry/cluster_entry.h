/*
 * cluster_entry.h: entry kernels of k-means (src/models/cluster/kmeans.c)
 * and of agglomerative clustering's distances (agglomerative.c), part of the linalg program (included by linalg_entry.h; their names go in
 * SB_LINALG_CLUSTER_KERNELS, src/device/programs.h). Every value is the
 * host's, bit for bit: the distances are kernels/kmeans.h's float operations
 * in kmeans.c's order, and the sums kmeans.c forms in double are repeated in
 * the integer binary64 of kernels/f64.h, operation for operation, in the
 * same order (the sum blocks of rows fixed by the shape, each in row order).
 * Work-items split only over things whose values do not depend on one
 * another, so the grid and the work-group size reach no bit.
 */
#include "../kmeans.h"

/* Adds features [g0, g0 + gn) of row xr (d features, zeros past d) to the
 * eight lanes a[q][.] of SB_KK_CB centers, center q's feature g0 + g at
 * cq[q * stride + g]: lane t takes the features f with f mod 8 == t in
 * feature order, as kmeans.c's km_dot (g0 and gn multiples of 8). */
SB_FN void kk_lanes(float a[SB_KK_CB][8], SB_GLOBAL const float *xr, sb_i32 d, sb_i32 g0, sb_i32 gn,
                    SB_LOCAL const float *cq, sb_i32 stride) {
    for (sb_i32 g = 0; g < gn; g += 8) {
        float xv[8];
        for (int t = 0; t < 8; t++) xv[t] = g0 + g + t < d ? xr[g0 + g + t] : 0.0f;
        for (int q = 0; q < SB_KK_CB; q++)
            for (int t = 0; t < 8; t++) a[q][t] = a[q][t] + xv[t] * cq[q * stride + g + t];
    }
}

SB_FN void kk_zero(float a[SB_KK_CB][8]) {
    for (int q = 0; q < SB_KK_CB; q++)
        for (int t = 0; t < 8; t++) a[q][t] = 0.0f;
}

/* The distances of centers j0 .. j0 + jn (jn <= SB_KK_CB) of row i from
 * their lanes, each weighed against the best so far (*bd, *bj) in center
 * order, and written as kk_assign's mode asks (its header). The loop runs
 * over every lane block (a constant count) so that the lanes stay in
 * registers. */
SB_FN void kk_best(float a[SB_KK_CB][8], float xi, SB_GLOBAL const float *cn, sb_i32 j0, sb_i32 jn, sb_i64 i, sb_i64 n,
                   sb_i32 k, sb_i32 mode, SB_GLOBAL float *out, SB_GLOBAL const float *closest, float *bd, sb_i32 *bj) {
    for (int q = 0; q < SB_KK_CB; q++) {
        if (q >= jn) break;
        const sb_i32 j = j0 + q;
        const float dot = ((a[q][0] + a[q][1]) + (a[q][2] + a[q][3])) + ((a[q][4] + a[q][5]) + (a[q][6] + a[q][7]));
        const float s = sb_km_dist(xi, cn[j], dot);
        if (mode == 1) out[i * k + j] = s;
        else if (mode == 2) out[j * n + i] = s;
        else if (mode == 3) out[j * n + i] = closest[i] < s ? closest[i] : s;
        if (sb_km_better(s, *bd, j)) *bd = s, *bj = j;
    }
}

/* Assignment (kmeans.c's km_row): row i's nearest center (ties to the lower
 * index) into labels[i], its distance into dist[i]. The work-group stages
 * the centers in chunks of ch (a multiple of SB_KK_CB) and slabs of fs
 * features (a multiple of 8) into local memory, zeros past k and past d;
 * each work-item takes one row. Rows of at most fs padded features (dp, d
 * rounded up to a multiple of 8) take a chunk in one slab; wider rows take
 * SB_KK_CB centers at a time (ch == SB_KK_CB), their lanes carried across the
 * slabs in feature order. A product 0 * 0 adds +0 to a lane, which changes
 * none (a lane never holds -0), so the padding leaves kmeans.c's values.
 * mode 0 writes no other distance; 1 every distance to out[i*k + j]
 * (prediction's transform); 2 to out[j*n + i]; 3 min(closest[i], it) to
 * out[j*n + i] (the k-means++ trials of kmeans.c's cand_task, the candidate
 * rows as the centers, the smaller value kept as cand_task keeps it). */
SB_KERNEL void kk_assign(SB_GLOBAL const float *x, sb_i64 n, sb_i32 d, SB_GLOBAL const float *xn,
                         SB_GLOBAL const float *c, SB_GLOBAL const float *cn, sb_i32 k, sb_i32 ch, sb_i32 fs,
                         SB_GLOBAL sb_i32 *labels, SB_GLOBAL float *dist, sb_i32 mode, SB_GLOBAL float *out,
                         SB_GLOBAL const float *closest SB_DYN_LOCAL_PARAM(float, cl)) {
    SB_DYN_LOCAL(float, cl);
    const sb_i64 i = sb_global_id(0);
    const int lid = sb_local_id(0), active = i < n;
    const sb_i32 dp = (d + 7) / 8 * 8;
    SB_GLOBAL const float *xr = x + (active ? i : 0) * (sb_i64)d;
    const float xi = active ? xn[i] : 0.0f;
    float bd = 0.0f;
    sb_i32 bj = 0;
    float a[SB_KK_CB][8];
    for (sb_i32 j0 = 0; j0 < k; j0 += ch) {
        const sb_i32 jn = k - j0 < ch ? k - j0 : ch;
        kk_zero(a);
        for (sb_i32 g0 = 0; g0 < dp; g0 += fs) {
            const sb_i32 gn = dp - g0 < fs ? dp - g0 : fs;
            sb_barrier();
            for (sb_i32 e = lid; e < ch * gn; e += SB_WG) {
                const sb_i32 q = e / gn, f = e - q * gn;
                cl[e] = j0 + q < k && g0 + f < d ? c[(sb_i64)(j0 + q) * d + g0 + f] : 0.0f;
            }
            sb_barrier();
            if (!active) continue;
            if (fs >= dp) { /* one slab: each block of the chunk complete here */
                for (sb_i32 jb = 0; jb < jn; jb += SB_KK_CB) {
                    kk_zero(a);
                    kk_lanes(a, xr, d, 0, dp, cl + jb * dp, dp);
                    kk_best(a, xi, cn, j0 + jb, jn - jb, i, n, k, mode, out, closest, &bd, &bj);
                }
            } else {
                kk_lanes(a, xr, d, g0, gn, cl, gn);
            }
        }
        if (active && fs < dp) kk_best(a, xi, cn, j0, jn, i, n, k, mode, out, closest, &bd, &bj);
    }
    if (active) labels[i] = bj, dist[i] = bd;
}

/* flag := 1 when a row's label differs from old's; old := labels. */
SB_KERNEL void kk_changed(SB_GLOBAL const sb_i32 *labels, SB_GLOBAL sb_i32 *old, sb_i64 n, SB_GLOBAL sb_i32 *flag) {
    const sb_i64 i = sb_global_id(0);
    if (i >= n) return;
    if (labels[i] != old[i]) sb_atomic_max32(flag, 1);
    old[i] = labels[i];
}

/* Sum block b (rows [b*srows, ..) in row order; kmeans.c's sums_task):
 * work-item (b, c) for c < d adds each row's value w*x (x alone without
 * weights) of feature c into ps[(b*k + label)*d + c]; c == d adds the
 * weights (1 each without them) into pw[b*k + label]. */
SB_KERNEL void kk_sums(SB_GLOBAL const float *x, sb_i64 n, sb_i32 d, SB_GLOBAL const float *w, sb_i32 hw,
                       SB_GLOBAL const sb_i32 *labels, sb_i32 k, sb_i64 srows, sb_i64 nb, SB_GLOBAL sb_u64 *ps,
                       SB_GLOBAL sb_u64 *pw) {
    const sb_i64 e = sb_global_id(0);
    if (e >= nb * (d + 1)) return;
    const sb_i64 b = e / (d + 1), i0 = b * srows, i1 = i0 + srows < n ? i0 + srows : n;
    const sb_i32 c = (sb_i32)(e - b * (d + 1));
    if (c == d) {
        SB_GLOBAL sb_u64 *s = pw + b * k;
        for (sb_i32 l = 0; l < k; l++) s[l] = 0u;
        for (sb_i64 i = i0; i < i1; i++) {
            const sb_i32 l = labels[i];
            s[l] = sb_f64_add(s[l], hw ? sb_f64_of(w[i]) : SB_F64_ONE);
        }
        return;
    }
    SB_GLOBAL sb_u64 *s = ps + b * k * d + c;
    for (sb_i32 l = 0; l < k; l++) s[(sb_i64)l * d] = 0u;
    for (sb_i64 i = i0; i < i1; i++) {
        const sb_i64 at = (sb_i64)labels[i] * d;
        const sb_u64 v = sb_f64_of(x[i * d + c]);
        s[at] = sb_f64_add(s[at], hw ? sb_f64_mul(sb_f64_of(w[i]), v) : v);
    }
}

/* kmeans.c's merge_task: work-item (j, c) adds the nb blocks' sums of
 * cluster j, feature c (c == d: the weights) in block order from +0. */
SB_KERNEL void kk_merge(SB_GLOBAL const sb_u64 *ps, SB_GLOBAL const sb_u64 *pw, sb_i64 nb, sb_i32 k, sb_i32 d,
                        SB_GLOBAL sb_u64 *sum, SB_GLOBAL sb_u64 *wsum) {
    const sb_i64 e = sb_global_id(0);
    if (e >= (sb_i64)k * (d + 1)) return;
    const sb_i64 j = e / (d + 1);
    const sb_i32 c = (sb_i32)(e - j * (d + 1));
    sb_u64 s = 0u;
    if (c == d) {
        for (sb_i64 b = 0; b < nb; b++) s = sb_f64_add(s, pw[b * k + j]);
        wsum[j] = s;
    } else {
        for (sb_i64 b = 0; b < nb; b++) s = sb_f64_add(s, ps[(b * k + j) * d + c]);
        sum[j * d + c] = s;
    }
}

/* Block masses (kmeans.c's mass_task): work-item (t, b) sums w_i * v_i
 * (v_i alone without weights) over block b's rows in row order, v the t-th
 * of the n-value rows of v, into out[t*nb + b]. v holds floats (vd == 0) or
 * binary64 values (vd == 1). */
SB_KERNEL void kk_mass(SB_GLOBAL const float *v, SB_GLOBAL const sb_u64 *vd64, sb_i32 vd, sb_i32 L, sb_i64 n,
                       SB_GLOBAL const float *w, sb_i32 hw, sb_i64 srows, sb_i64 nb, SB_GLOBAL sb_u64 *out) {
    const sb_i64 e = sb_global_id(0);
    if (e >= (sb_i64)L * nb) return;
    const sb_i64 t = e / nb, b = e - t * nb, i0 = b * srows, i1 = i0 + srows < n ? i0 + srows : n;
    sb_u64 s = 0u;
    for (sb_i64 i = i0; i < i1; i++) {
        const sb_u64 vi = vd ? vd64[t * n + i] : sb_f64_of(v[t * n + i]);
        s = sb_f64_add(s, hw ? sb_f64_mul(sb_f64_of(w[i]), vi) : vi);
    }
    out[e] = s;
}

/* A row's squared distance to its center in double (kmeans.c's
 * inertia_task): r = sum_q ((double)x_q - (double)c_q)^2 in feature order. */
SB_KERNEL void kk_inertia_rows(SB_GLOBAL const float *x, sb_i64 n, sb_i32 d, SB_GLOBAL const float *c,
                               SB_GLOBAL const sb_i32 *labels, SB_GLOBAL sb_u64 *rr) {
    const sb_i64 i = sb_global_id(0);
    if (i >= n) return;
    SB_GLOBAL const float *xi = x + i * d, *ci = c + (sb_i64)labels[i] * d;
    sb_u64 r = 0u;
    for (sb_i32 q = 0; q < d; q++) {
        const sb_u64 t = sb_f64_sub(sb_f64_of(xi[q]), sb_f64_of(ci[q]));
        r = sb_f64_add(r, sb_f64_mul(t, t));
    }
    rr[i] = r;
}

/* Column sums by block (kmeans.c's colsum_task, dev 0) or the squared
 * deviations from the means m (coldev_task, dev 1): work-item (b, q) into
 * out[b*d + q], block b's rows in row order. */
SB_KERNEL void kk_columns(SB_GLOBAL const float *x, sb_i64 n, sb_i32 d, sb_i64 srows, sb_i64 nb, sb_i32 dev,
                          SB_GLOBAL const sb_u64 *m, SB_GLOBAL sb_u64 *out) {
    const sb_i64 e = sb_global_id(0);
    if (e >= nb * d) return;
    const sb_i64 b = e / d, i0 = b * srows, i1 = i0 + srows < n ? i0 + srows : n;
    const sb_i32 q = (sb_i32)(e - b * d);
    sb_u64 s = 0u;
    for (sb_i64 i = i0; i < i1; i++) {
        const sb_u64 v = sb_f64_of(x[i * d + q]);
        if (dev) {
            const sb_u64 t = sb_f64_sub(v, m[q]);
            s = sb_f64_add(s, sb_f64_mul(t, t));
        } else {
            s = sb_f64_add(s, v);
        }
    }
    out[e] = s;
}

/* Agglomerative clustering's distances (agglomerative.c, "distances"): rows
 * r0 .. r0 + rows - 1 of the n x n matrix, work-item e the pair (i, k) =
 * (r0 + e / n, e mod n) into out[e]: the sum over f ascending of
 * ((double)x_if - (double)x_kf)^2, then its correctly rounded sqrt, each
 * operation the host's in the integer binary64 of f64.h, so the bits are the
 * host matrix's. xt holds the rows transposed (feature f of row k at
 * xt[f * n + k]), so the work-items of a group read neighbouring columns.
 * Separating arm (CUDA_VARIANT=agglo-order, SAMEBITS_OPENCL_ARM=agglo-order):
 * the features summed in the reverse order. */
SB_KERNEL void ka_dist(SB_GLOBAL const float *xt, sb_i64 n, sb_i32 d, sb_i64 r0, sb_i64 rows, SB_GLOBAL sb_u64 *out) {
    const sb_i64 e = sb_global_id(0);
    if (e >= rows * n) return;
    const sb_i64 i = r0 + e / n, k = e - (e / n) * n;
    sb_u64 s = 0u;
    for (sb_i32 g = 0; g < d; g++) {
#ifdef SB_SABOTAGE_AGGLO_ORDER
        const sb_i64 f = d - 1 - g;
#else
        const sb_i64 f = g;
#endif
        const sb_u64 t = sb_f64_sub(sb_f64_of(xt[f * n + i]), sb_f64_of(xt[f * n + k]));
        s = sb_f64_add(s, sb_f64_mul(t, t));
    }
    out[e] = sb_f64_sqrt(s);
}
