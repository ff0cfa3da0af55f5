/*
 * fdev_kernels.cl: the OpenCL C 1.2 kernels of the "opencl" forest device
 * (fdev_opencl.c). Every float that decides a bit is a kernel body of
 * src/kernels/forest.h (bootstrap and feature draws, the small-node search,
 * the cumulation, the candidate rules, the scores, the total order), the same
 * the CPU and CUDA compile. These kernels only decide which work-item handles
 * which row, node or histogram entry, and move integers:
 * - draw counts: 32-bit atomic_inc; node sums, histograms and a tree's draws
 *   per class: 64-bit integer atom_add (cl_khr_int64_base_atomics, __local
 *   and __global), per work-group in local memory when a node's histograms
 *   fit, then into the node's in global memory. Integer sums in any order are
 *   exact. Weighted forests: a position's multiplicity is its count times its
 *   fixed-point weight, and its count goes to the sums' last value
 *   (sb_k_forest_put's additions).
 * - balanced_subsample and the isolation forest: a tree's largest weight and a
 *   node's bin ranges by 32-bit integer atomic_max / atomic_min (on a float's
 *   bits where it is >= 0, which order as unsigned integers): any order gives
 *   the same extreme; every float is a kernel body's.
 * - row lists (a tree's in-bag rows, a node's partition): a stable
 *   count / scan / scatter over tiles of OCL_WG x FOCL_PER positions, one
 *   work-group each; the host scans the tiles' counts. No order depends on
 *   the schedule.
 * - the best split of a node: a local reduction under sb_k_fsplit_better, a
 *   total order, so any reduction tree picks the same candidate.
 * No float atomic (but the separating arm SB_OCL_ARM_FLOAT_ATOMIC), no float
 * reduction in thread order. Built as tdev_kernels.cl is (ocl_common.h):
 * -cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt -DOCL_WG=<size>;
 * compat_opencl.h sets FP_CONTRACT OFF.
 */
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#include "../../kernels/tree.h"
#include "../../kernels/forest.h"

#ifndef OCL_WG
#error "OCL_WG (the work-group size, a power of two) is set by the host"
#endif
#define FOCL_PER 8 /* positions a work-item of a compaction or partition tile */
#define FOCL_TILE (OCL_WG * FOCL_PER)

/* sb_fdev_node of src/backends/fdev.h, the same layout (the host checks its size). */
typedef struct {
    long begin, end;
    ulong key;
    int feature, bin, dl;
    float min_w; /* the weight each child needs (its tree's min_weight_fraction_leaf share) */
} ocl_fnode;

/* The item a tile belongs to: tile_start[] ascending over nitems + 1 entries. */
static int focl_find(__global const int *tile_start, int nitems, int tile) {
    int lo = 0, hi = nitems - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (tile_start[mid] <= tile) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Tile `tile` of a launch over nodes (tile_start as focl_find's): its node's
 * index (returned), the node, and the positions [*b, *e) of its FOCL_TILE. */
static int focl_tile(__global const ocl_fnode *nodes, __global const int *tile_start, int nnodes, int tile,
                     ocl_fnode *q, long *b, long *e) {
    const int j = focl_find(tile_start, nnodes, tile);
    *q = nodes[j];
    *b = q->begin + (long)(tile - tile_start[j]) * FOCL_TILE;
    *e = *b + FOCL_TILE < q->end ? *b + FOCL_TILE : q->end;
    return j;
}

/* A row's contribution to sums v, atomically: the integer additions of
 * sb_k_forest_add_row in any order; one spelling per address space. The arm
 * adds the squared-error y sum as a float (a compare-and-swap loop): rounded,
 * in arrival order. */
static void focl_add_global(int criterion, __global long *v, int value, long mult) {
    if (criterion == SB_K_CRIT_SQUARED) {
        atom_add(&v[0], mult);
#if defined(SB_OCL_ARM_FLOAT_ATOMIC)
        long seen, old = v[1];
        do {
            seen = old;
            old = atom_cmpxchg(&v[1], seen, (long)((float)seen + (float)(mult * value)));
        } while (old != seen);
#else
        atom_add(&v[1], mult * value);
#endif
    } else {
        atom_add(&v[value], mult);
    }
}

static void focl_add_local(int criterion, __local long *v, int value, long mult) {
    if (criterion == SB_K_CRIT_SQUARED) {
        atom_add(&v[0], mult);
#if defined(SB_OCL_ARM_FLOAT_ATOMIC)
        long seen, old = v[1];
        do {
            seen = old;
            old = atom_cmpxchg(&v[1], seen, (long)((float)seen + (float)(mult * value)));
        } while (old != seen);
#else
        atom_add(&v[1], mult * value);
#endif
    } else {
        atom_add(&v[value], mult);
    }
}

/* A position's contribution (count cnt, fixed-point weight wq) to sums v of
 * nv values, atomically: sb_k_forest_put's integer additions in any order.
 * Unweighted, the multiplicity is cnt and wq is not read. */
static void focl_put_global(int criterion, int weighted, int nv, __global long *v, int value, int cnt, int wq) {
    focl_add_global(criterion, v, value, weighted ? (long)cnt * wq : (long)cnt);
    if (weighted) atom_add(&v[nv - 1], (long)cnt);
}

static void focl_put_local(int criterion, int weighted, int nv, __local long *v, int value, int cnt, int wq) {
    focl_add_local(criterion, v, value, weighted ? (long)cnt * wq : (long)cnt);
    if (weighted) atom_add(&v[nv - 1], (long)cnt);
}

/* Exclusive prefix sums of the work-group's counts c[0, OCL_WG) in place
 * (integers; work-item 0 adds them in order); the total is returned to all. */
static int focl_scan(__local int *c) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        int acc = 0;
        for (int i = 0; i < OCL_WG; i++) {
            const int x = c[i];
            c[i] = acc;
            acc += x;
        }
        c[OCL_WG] = acc;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return c[OCL_WG];
}

__kernel void kf_fill(__global int *a, long n, int v) {
    for (long i = get_global_id(0); i < n; i += get_global_size(0)) a[i] = v;
}

/* Draw counts of trees t0 + i, i < nb: cnt[i * n + row] += 1 for each draw. */
__kernel void kf_boot(__global int *cnt, long n, int nb, int t0, ulong seed, long ndraw) {
    for (long x = get_global_id(0); x < (long)nb * ndraw; x += get_global_size(0)) {
        const int i = (int)(x / ndraw);
        const long q = x - (long)i * ndraw;
        atomic_inc(&cnt[(long)i * n + sb_k_forest_boot_row(seed, t0 + i, q, (uint)n)]);
    }
}

/* The fixed-point weight of row r in tree i: every row's (wmode 1: w[r]),
 * the tree's own (wmode 2, balanced_subsample: w[i * n + r]), or 1
 * (unweighted: w is not read). */
static int focl_wq_of(int wmode, __global const int *w, long n, int i, long r) {
    return wmode == 2 ? w[(long)i * n + r] : wmode == 1 ? w[r] : 1;
}

/* Compaction, tile g (of tpt a tree) of tree g / tpt's n draw counts: its
 * in-bag rows are those drawn and, weighted (wmode, focl_wq_of), of positive
 * weight. Pass 1 (place = 0) writes their count to tcount[g]; pass 2
 * (place = 1) writes them, in row order, from position tbase[g], with their
 * count (mult) and, weighted, their fixed-point weight (wq). */
__kernel void kf_compact(__global const int *cnt, long n, int tpt, int place, __global int *tcount,
                         __global const long *tbase, __global int *rows, __global int *mult, int wmode,
                         __global const int *w, __global int *wq) {
    __local int c[OCL_WG + 1];
    const int g = get_group_id(0), lid = get_local_id(0);
    const int i = g / tpt;
    const long b = (long)(g - i * tpt) * FOCL_TILE + (long)lid * FOCL_PER;
    __global const int *ci = cnt + (long)i * n;
    int mine = 0;
    for (long r = b; r < b + FOCL_PER && r < n; r++) mine += ci[r] > 0 && focl_wq_of(wmode, w, n, i, r) > 0;
    c[lid] = mine;
    const int total = focl_scan(c);
    if (!place) {
        if (lid == 0) tcount[g] = total;
        return;
    }
    long at = tbase[g] + c[lid];
    for (long r = b; r < b + FOCL_PER && r < n; r++) {
        const int x = focl_wq_of(wmode, w, n, i, r);
        if (ci[r] > 0 && x > 0) {
            if (wmode) wq[at] = x;
            rows[at] = (int)r;
            mult[at++] = ci[r];
        }
    }
}

/* balanced_subsample (fdev_cuda.cu's steps, forest.c's rule), for trees
 * i < nb of the batch with draw counts cnt (nb x n) and K classes.
 * Step 1: nk[i * K + class] += the draws of each row of tree i. */
__kernel void kf_sub_counts(__global const int *cnt, long n, int nb, int K, __global const int *value,
                            __global long *nk) {
    for (long x = get_global_id(0); x < (long)nb * n; x += get_global_size(0))
        if (cnt[x] > 0) atom_add(&nk[(x / n) * K + value[x % n]], (long)cnt[x]);
}

/* Step 2, a work-item a tree: its class weights (sb_k_forest_class_weight of
 * its draws, nt of them over kt classes drawn). */
__kernel void kf_sub_classes(__global const long *nk, int nb, int K, __global float *cw) {
    const int i = get_global_id(0);
    if (i >= nb) return;
    long nt = 0;
    int kt = 0;
    for (int k = 0; k < K; k++) {
        nt += nk[(long)i * K + k];
        kt += nk[(long)i * K + k] > 0;
    }
    for (int k = 0; k < K; k++) cw[(long)i * K + k] = sb_k_forest_class_weight(nt, kt, nk[(long)i * K + k]);
}

/* A drawn row's weight in tree i (sb_k_forest_row_weight; hassw = 0: no
 * sample weights, sw is not read). */
static float focl_sub_weight(int hassw, __global const float *sw, __global const float *cw, int K,
                             __global const int *value, long i, long r) {
    return sb_k_forest_row_weight(hassw ? sw[r] : 1.0f, cw[i * K + value[r]]);
}

/* Step 3: each tree's largest weight of a drawn row (wmax[i], from 0: the
 * bits of positive weights, which order as unsigned integers; a -0 sample
 * weight, which the CPU accepts, has the sign bit and is left out as the
 * CPU's w > mx leaves it), and its first row whose weight is not finite
 * (bad[i]; rows fit 32 bits). */
__kernel void kf_sub_max(__global const int *cnt, long n, int nb, int K, __global const int *value, int hassw,
                         __global const float *sw, __global const float *cw, __global uint *wmax, __global uint *bad) {
    for (long x = get_global_id(0); x < (long)nb * n; x += get_global_size(0)) {
        if (cnt[x] <= 0) continue;
        const long i = x / n, r = x - i * n;
        const float w = focl_sub_weight(hassw, sw, cw, K, value, i, r);
        if (w - w != 0.0f) atomic_min(&bad[i], (uint)r);
        else if (w > 0.0f) atomic_max(&wmax[i], sb_f2u(w));
    }
}

/* Step 4, a work-item a tree: its scale (0 when every weight is zero). */
__kernel void kf_sub_scale(__global const uint *wmax, int nb, __global int *wexp) {
    const int i = get_global_id(0);
    if (i >= nb) return;
    const float mx = sb_u2f(wmax[i]);
    wexp[i] = mx > 0.0f ? sb_quantize_exponent(mx, SB_K_FOREST_W_LEVELS) : 0;
}

/* Step 5: each row's fixed-point weight in its tree (wtree, nb x n; 0 for a
 * row not drawn), and the tree's first row whose positive weight vanishes
 * (bad[nb + i]). */
__kernel void kf_sub_fix(__global const int *cnt, long n, int nb, int K, __global const int *value, int hassw,
                         __global const float *sw, __global const float *cw, __global const int *wexp,
                         __global int *wtree, __global uint *bad) {
    for (long x = get_global_id(0); x < (long)nb * n; x += get_global_size(0)) {
        const long i = x / n, r = x - i * n;
        int q = 0;
        if (cnt[x] > 0) {
            const float w = focl_sub_weight(hassw, sw, cw, K, value, i, r);
            if (w - w == 0.0f) {
                q = sb_k_forest_weight_fixed(w, wexp[i]);
                if (q == 0 && w > 0.0f) atomic_min(&bad[nb + i], (uint)r);
            }
        }
        wtree[x] = q;
    }
}

/* Sums of node j's rows (nv of them at sums + j * nv, zeroed by the host),
 * one tile of FOCL_TILE positions a work-group; local sums when nv fits. */
__kernel void kf_sums(__global const ocl_fnode *nodes, __global const int *tile_start, int nnodes, int criterion,
                      int nv, int weighted, __global const int *rows, __global const int *mult,
                      __global const int *wq, __global const int *value, __global long *sums) {
    __local long acc[64];
    const int tile = get_group_id(0), lid = get_local_id(0);
    ocl_fnode q;
    long b, e;
    const int j = focl_tile(nodes, tile_start, nnodes, tile, &q, &b, &e);
    __global long *v = sums + (long)j * nv;
    if (nv > 64) {
        for (long p = b + lid; p < e; p += OCL_WG)
            focl_put_global(criterion, weighted, nv, v, value[rows[p]], mult[p], weighted ? wq[p] : 1);
        return;
    }
    for (int k = lid; k < nv; k += OCL_WG) acc[k] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (long p = b + lid; p < e; p += OCL_WG)
        focl_put_local(criterion, weighted, nv, acc, value[rows[p]], mult[p], weighted ? wq[p] : 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = lid; k < nv; k += OCL_WG)
        if (acc[k] != 0) atom_add(&v[k], acc[k]);
}

/* Small nodes (sb_k_forest_small_feature), one work-item each: its draws,
 * its rows' values, counts and fixed-point weights, then each drawn
 * feature's bins in its global scratch, the best under the total order, and
 * the left child's sums from its rows. Scratch a node: draws nf words; bins
 * SB_K_FOREST_SMALL_ROWS bytes; values, counts, weights SB_K_FOREST_SMALL_ROWS
 * ints each; l, m SB_K_FOREST_SMALL_NV longs each. Unweighted, wq and swq are
 * never read (the host binds the counts there). */
__kernel void kf_small(__global const ocl_fnode *nodes, __global const long *tot, int nnodes,
                       __global const sb_k_forest_rules *rules_g, ulong seed, int extra, int nf, int mtry,
                       __global const uchar *bins, int stride, __global const int *rows, __global const int *mult,
                       __global const int *wq, __global const int *value, __global uint *draws,
                       __global uchar *sbin, __global int *sval, __global int *smul, __global int *swq,
                       __global long *slm, __global sb_k_fsplit *out, __global long *lsum) {
    const int node = get_global_id(0);
    if (node >= nnodes) return;
    const ocl_fnode q = nodes[node];
    sb_k_forest_rules rules = *rules_g;
    rules.min_w = q.min_w; /* the node's, in place of the setup's */
    const int nv = rules.nv;
    __global const long *t = tot + (long)node * nv;
    __global uint *dr = draws + (long)node * nf;
    __global uchar *bin = sbin + (long)node * SB_K_FOREST_SMALL_ROWS;
    __global int *val = sval + (long)node * SB_K_FOREST_SMALL_ROWS, *mul = smul + (long)node * SB_K_FOREST_SMALL_ROWS;
    __global int *wqs = rules.weighted ? swq + (long)node * SB_K_FOREST_SMALL_ROWS : mul;
    __global long *l = slm + (long)node * 2 * SB_K_FOREST_SMALL_NV, *m = l + SB_K_FOREST_SMALL_NV;
    sb_k_forest_draws(seed, q.key, nf, dr);
    const int cnt = (int)(q.end - q.begin);
    for (int i = 0; i < cnt; i++) {
        val[i] = value[rows[q.begin + i]];
        mul[i] = mult[q.begin + i];
        if (rules.weighted) wqs[i] = wq[q.begin + i];
    }
    sb_k_fsplit best;
    best.valid = 0;
    best.score = 0.0f;
    best.feature = best.bin = best.dl = best.pad_ = 0;
    best.wl = 0;
    for (int j = 0; j < nf; j++) {
        if (!sb_k_forest_selected(dr, nf, mtry, j)) continue;
        for (int i = 0; i < cnt; i++) bin[i] = bins[(long)rows[q.begin + i] * stride + j];
        sb_k_forest_small_feature(&rules, seed, q.key, extra, t, bin, val, mul, wqs, cnt, j, l, m, &best);
    }
    out[node] = best;
    __global long *ls = lsum + (long)node * nv;
    for (int k = 0; k < nv; k++) ls[k] = 0;
    if (best.valid)
        for (long p = q.begin; p < q.end; p++) {
            const int r = rows[p];
            if (sb_k_goes_left(bins[(long)r * stride + best.feature], best.bin, best.dl))
                sb_k_forest_put(&rules, ls, value[r], mult[p], rules.weighted ? wq[p] : 1);
        }
}

/* The drawn features of each node of a chunk, ascending: feat[i * mtry + a]. */
__kernel void kf_select(__global const ocl_fnode *nodes, int nnodes, ulong seed, int nf, int mtry,
                        __global uint *draws, __global int *feat) {
    const int i = get_global_id(0);
    if (i >= nnodes) return;
    __global uint *dr = draws + (long)i * nf;
    sb_k_forest_draws(seed, nodes[i].key, nf, dr);
    int a = 0;
    for (int j = 0; j < nf; j++)
        if (sb_k_forest_selected(dr, nf, mtry, j)) feat[(long)i * mtry + a++] = j;
}

/* Histograms of one tile (htile positions) of node j's rows over its drawn
 * features (mtry x slot longs a node, zeroed by the host): in local memory
 * sh when it holds them (use_local), then added into the node's; else
 * straight into global memory. */
__kernel void kf_hist(__global const ocl_fnode *nodes, __global const int *tile_start, int nnodes, int htile,
                      int criterion, int nv, int weighted, int mtry, int slot, __global const int *feat,
                      __global const uchar *bins, int stride, __global const int *rows, __global const int *mult,
                      __global const int *wq, __global const int *value, __global long *hist, int use_local,
                      __local long *sh) {
    const int tile = get_group_id(0), lid = get_local_id(0);
    const int j = focl_find(tile_start, nnodes, tile);
    const ocl_fnode q = nodes[j];
    __global const int *fj = feat + (long)j * mtry;
    const long hsize = (long)mtry * slot;
    __global long *gh = hist + (long)j * hsize;
    const long b = q.begin + (long)(tile - tile_start[j]) * htile;
    const long e = b + htile < q.end ? b + htile : q.end;
    /* local memory pays for zeroing and flushing hsize sums only when the
     * tile adds more than that (uniform over the work-group) */
    if (!use_local || (e - b) * mtry < hsize) {
        for (long p = b + lid; p < e; p += OCL_WG) {
            const int r = rows[p], v = value[r], c = mult[p], w = weighted ? wq[p] : 1;
            __global const uchar *rb = bins + (long)r * stride;
            for (int a = 0; a < mtry; a++)
                focl_put_global(criterion, weighted, nv, gh + (long)a * slot + (long)rb[fj[a]] * nv, v, c, w);
        }
        return;
    }
    for (long i = lid; i < hsize; i += OCL_WG) sh[i] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (long p = b + lid; p < e; p += OCL_WG) {
        const int r = rows[p], v = value[r], c = mult[p], w = weighted ? wq[p] : 1;
        __global const uchar *rb = bins + (long)r * stride;
        for (int a = 0; a < mtry; a++)
            focl_put_local(criterion, weighted, nv, sh + (long)a * slot + (long)rb[fj[a]] * nv, v, c, w);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (long i = lid; i < hsize; i += OCL_WG)
        if (sh[i] != 0) atom_add(&gh[i], sh[i]);
}

/* The best split of node i = the work-group's from its histograms: each sum
 * of each drawn feature cumulated in place (sb_k_forest_cumulate_one), every
 * candidate (sb_k_forest_rf_at, or sb_k_forest_et_feature), a local
 * reduction under the total order, and the left child's sums. */
__kernel void kf_best(__global const long *tot, __global const sb_k_forest_rules *rules_g, ulong seed,
                      __global const ocl_fnode *nodes, int extra, int mtry, int maxnb, int slot,
                      __global const int *feat, __global const int *nbins, __global long *hist,
                      __global sb_k_fsplit *out, __global long *lsum) {
    __local sb_k_fsplit sh[OCL_WG];
    const int i = get_group_id(0), lid = get_local_id(0);
    sb_k_forest_rules rules = *rules_g;
    rules.min_w = nodes[i].min_w; /* the node's, in place of the setup's */
    const int nv = rules.nv;
    __global const int *fi = feat + (long)i * mtry;
    __global long *h = hist + (long)i * mtry * slot;
    __global const long *t = tot + (long)i * nv;
    const ulong key = nodes[i].key;
    for (int c = lid; c < mtry * nv; c += OCL_WG)
        sb_k_forest_cumulate_one(h + (long)(c / nv) * slot, nbins[fi[c / nv]], nv, c % nv);
    barrier(CLK_GLOBAL_MEM_FENCE);
    sb_k_fsplit best;
    best.valid = 0;
    best.score = 0.0f;
    best.feature = best.bin = best.dl = best.pad_ = 0;
    best.wl = 0;
    if (extra) {
        for (int a = lid; a < mtry; a += OCL_WG) {
            __global const long *ha = h + (long)a * slot;
            sb_k_forest_et_feature(&rules, seed, key, t, ha, ha, nbins[fi[a]], fi[a], &best);
        }
    } else {
        for (long c = lid; c < (long)mtry * maxnb; c += OCL_WG) {
            const int a = (int)(c / maxnb), b = 1 + (int)(c - (long)a * maxnb);
            const int nb = nbins[fi[a]];
            if (b > nb) continue;
            __global const long *ha = h + (long)a * slot;
            sb_k_forest_rf_at(&rules, t, ha, ha, nb, fi[a], b, &best);
        }
    }
    sh[lid] = best;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = OCL_WG / 2; k > 0; k >>= 1) {
        if (lid < k) {
            sb_k_fsplit x = sh[lid + k], y = sh[lid];
            if (sb_k_fsplit_better(&x, &y)) sh[lid] = x;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    best = sh[0];
    if (lid == 0) out[i] = best;
    __global long *ls = lsum + (long)i * nv;
    for (int k = lid; k < nv; k += OCL_WG) {
        long v = 0;
        if (best.valid)
            for (int a = 0; a < mtry; a++)
                if (fi[a] == best.feature) {
                    __global const long *ha = h + (long)a * slot;
                    v = ha[(long)best.bin * nv + k] + (best.dl ? ha[k] : 0);
                }
        ls[k] = v;
    }
}

/* Partition, tile g of node j = focl_find(g) (FOCL_TILE positions): pass 1
 * (place = 0) writes the count of its rows going left to tcount[g]; pass 2
 * (place = 1) writes its rows, in position order, the left ones from
 * tbase[2g], the right ones from tbase[2g + 1], into trows, tmult (and,
 * weighted, twq): a stable partition. */
__kernel void kf_part(__global const ocl_fnode *nodes, __global const int *tile_start, int nnodes, int place,
                      __global const uchar *bins, int stride, __global const int *rows, __global const int *mult,
                      __global int *tcount, __global const long *tbase, __global int *trows, __global int *tmult,
                      int weighted, __global const int *wq, __global int *twq) {
    __local int c[OCL_WG + 1];
    const int g = get_group_id(0), lid = get_local_id(0);
    const int j = focl_find(tile_start, nnodes, g);
    const ocl_fnode q = nodes[j];
    const long b = q.begin + (long)(g - tile_start[j]) * FOCL_TILE + (long)lid * FOCL_PER;
    const long e = b + FOCL_PER < q.end ? b + FOCL_PER : q.end;
    int mine = 0;
    for (long p = b; p < e; p++) mine += sb_k_goes_left(bins[(long)rows[p] * stride + q.feature], q.bin, q.dl);
    c[lid] = mine;
    const int total = focl_scan(c);
    if (!place) {
        if (lid == 0) tcount[g] = total;
        return;
    }
    /* the tile's positions before mine: lid * FOCL_PER (only the last
     * work-items with rows may have fewer than FOCL_PER) */
    long l = tbase[2 * (long)g] + c[lid], r = tbase[2 * (long)g + 1] + ((long)lid * FOCL_PER - c[lid]);
    for (long p = b; p < e; p++) {
        const int row = rows[p];
        const long at = sb_k_goes_left(bins[(long)row * stride + q.feature], q.bin, q.dl) ? l++ : r++;
        trows[at] = row;
        tmult[at] = mult[p];
        if (weighted) twq[at] = wq[p];
    }
}

/* The stable partition of each node of at most serial_max rows by one
 * work-item (a tile's work-group would idle on it): its rows going left
 * counted (nleft[j]), then scattered in position order, then copied back.
 * Larger nodes are kf_part's (they have tiles). */
__kernel void kf_part_serial(__global const ocl_fnode *nodes, int nnodes, long serial_max,
                             __global const uchar *bins, int stride, __global int *rows, __global int *mult,
                             __global long *nleft, __global int *trows, __global int *tmult, int weighted,
                             __global int *wq, __global int *twq) {
    const int j = get_global_id(0);
    if (j >= nnodes) return;
    const ocl_fnode q = nodes[j];
    if (q.end - q.begin > serial_max) {
        nleft[j] = 0; /* the host adds its tiles' counts */
        return;
    }
    long nl = 0;
    for (long p = q.begin; p < q.end; p++) nl += sb_k_goes_left(bins[(long)rows[p] * stride + q.feature], q.bin, q.dl);
    nleft[j] = nl;
    long l = q.begin, r = q.begin + nl;
    for (long p = q.begin; p < q.end; p++) {
        const int row = rows[p];
        const long at = sb_k_goes_left(bins[(long)row * stride + q.feature], q.bin, q.dl) ? l++ : r++;
        trows[at] = row;
        tmult[at] = mult[p];
        if (weighted) twq[at] = wq[p];
    }
    for (long p = q.begin; p < q.end; p++) {
        rows[p] = trows[p];
        mult[p] = tmult[p];
        if (weighted) wq[p] = twq[p];
    }
}

/* The partitioned positions [begin, end) of each node back in place. */
__kernel void kf_part_copy(__global const ocl_fnode *nodes, __global const int *tile_start, int nnodes,
                           __global const int *trows, __global const int *tmult, __global int *rows,
                           __global int *mult, int weighted, __global const int *twq, __global int *wq) {
    const int g = get_group_id(0), lid = get_local_id(0);
    ocl_fnode q;
    long b, e;
    focl_tile(nodes, tile_start, nnodes, g, &q, &b, &e);
    for (long p = b + lid; p < e; p += OCL_WG) {
        rows[p] = trows[p];
        mult[p] = tmult[p];
        if (weighted) wq[p] = twq[p];
    }
}

/* ---- isolation forest ---- */

/* A work-item a tree: tree t0 + i's subsample, psi distinct rows drawn in
 * order with repeats rejected (isolation.c's draws; its bitmap of taken rows
 * at taken + i * words, zeroed by the host), at positions [i * psi,
 * (i + 1) * psi), count 1. */
__kernel void kf_iso_sample(int nb, int t0, ulong seed, long n, long psi, __global uint *taken, long words,
                            __global int *rows, __global int *mult) {
    const int i = get_global_id(0);
    if (i >= nb) return;
    __global uint *tk = taken + (long)i * words;
    long got = 0;
    for (ulong q = 0; got < psi; q++) {
        const uint r = sb_k_iforest_sample_row(seed, t0 + i, q, (uint)n);
        if (tk[r >> 5] & (1u << (r & 31))) continue;
        tk[r >> 5] |= 1u << (r & 31);
        const long at = (long)i * psi + got++;
        rows[at] = (int)r;
        mult[at] = 1;
    }
}

/* Every feature's smallest and largest bin over a node's rows, one tile of
 * FOCL_TILE positions a work-group: 32-bit integer atomic_min and atomic_max
 * into lo, hi (node j's at j * nf, set to 256 and -1 by the host), which any
 * order gives alike. */
__kernel void kf_iso_range(__global const ocl_fnode *nodes, __global const int *tile_start, int nnodes, int nf,
                           __global const uchar *bins, int stride, __global const int *rows, __global int *lo,
                           __global int *hi) {
    const int tile = get_group_id(0), lid = get_local_id(0);
    ocl_fnode q;
    long b, e;
    const int j = focl_tile(nodes, tile_start, nnodes, tile, &q, &b, &e);
    for (long p = b + lid; p < e; p += OCL_WG) {
        __global const uchar *rb = bins + (long)rows[p] * stride;
        for (int f = 0; f < nf; f++) {
            atomic_min(&lo[(long)j * nf + f], (int)rb[f]);
            atomic_max(&hi[(long)j * nf + f], (int)rb[f]);
        }
    }
}

/* A work-item a node: its split from its features' bin ranges (sb_k_iforest_split). */
__kernel void kf_iso_pick(__global const ocl_fnode *nodes, int nnodes, int nf, ulong seed, __global const int *lo,
                          __global const int *hi, __global sb_k_fsplit *out) {
    const int j = get_global_id(0);
    if (j >= nnodes) return;
    sb_k_fsplit x;
    sb_k_iforest_split(seed, nodes[j].key, nf, lo + (long)j * nf, hi + (long)j * nf, &x);
    out[j] = x;
}
