/*
 * forest_entry.h: the entry kernels of the forest device
 * (src/models/forest/fdev_gpu.c), written once in the compat vocabulary and
 * compiled by every GPU backend, as tree_entry.h is. Every float that decides a bit is a kernel body of
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
 *   count / scan / scatter over tiles of SB_WG x FOCL_PER positions, one
 *   work-group each; the host scans the tiles' counts. No order depends on
 *   the schedule.
 * - the best split of a node: a local reduction under sb_k_fsplit_better, a
 *   total order, so any reduction tree picks the same candidate.
 * No float atomic (but the separating arm SB_ARM_FLOAT_ATOMIC), no float
 * reduction in thread order. Built as tree_entry.h is; the kernel list is
 * SB_FOREST_KERNELS (src/device/programs.h).
 */
#include "../tree.h"
#include "../forest.h"

#ifndef SB_WG
#error "SB_WG (the work-group size, a power of two) is set by the host"
#endif
#define FOCL_PER 8 /* positions a work-item of a compaction or partition tile */
#define FOCL_TILE (SB_WG * FOCL_PER)

/* sb_fdev_node of src/models/forest/fdev.h, the same layout (the host checks its size). */
typedef struct {
    sb_i64 begin, end;
    sb_u64 key;
    int feature, bin, dl;
    float min_w; /* the weight each child needs (its tree's min_weight_fraction_leaf share) */
} ocl_fnode;

/* The item a tile belongs to: tile_start[] ascending over nitems + 1 entries. */
SB_FN int focl_find(SB_GLOBAL const int *tile_start, int nitems, int tile) {
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
SB_FN int focl_tile(SB_GLOBAL const ocl_fnode *nodes, SB_GLOBAL const int *tile_start, int nnodes, int tile,
                     ocl_fnode *q, sb_i64 *b, sb_i64 *e) {
    const int j = focl_find(tile_start, nnodes, tile);
    *q = nodes[j];
    *b = q->begin + (sb_i64)(tile - tile_start[j]) * FOCL_TILE;
    *e = *b + FOCL_TILE < q->end ? *b + FOCL_TILE : q->end;
    return j;
}

/* A row's contribution to sums v, atomically: the integer additions of
 * sb_k_forest_add_row in any order; one spelling per address space. The arm
 * adds the squared-error y sum as a float (a compare-and-swap loop): rounded,
 * in arrival order. */
SB_FN void focl_add_global(int criterion, SB_GLOBAL sb_i64 *v, int value, sb_i64 mult) {
    if (criterion == SB_K_CRIT_SQUARED) {
        sb_atom_add64(&v[0], mult);
#if defined(SB_ARM_FLOAT_ATOMIC)
        sb_i64 seen, old = v[1];
        do {
            seen = old;
            old = sb_atom_cas64(&v[1], seen, (sb_i64)((float)seen + (float)(mult * value)));
        } while (old != seen);
#else
        sb_atom_add64(&v[1], mult * value);
#endif
    } else {
        sb_atom_add64(&v[value], mult);
    }
}

SB_FN void focl_add_local(int criterion, SB_LOCAL sb_i64 *v, int value, sb_i64 mult) {
    if (criterion == SB_K_CRIT_SQUARED) {
        sb_atom_add64(&v[0], mult);
#if defined(SB_ARM_FLOAT_ATOMIC)
        sb_i64 seen, old = v[1];
        do {
            seen = old;
            old = sb_atom_cas64(&v[1], seen, (sb_i64)((float)seen + (float)(mult * value)));
        } while (old != seen);
#else
        sb_atom_add64(&v[1], mult * value);
#endif
    } else {
        sb_atom_add64(&v[value], mult);
    }
}

/* A position's contribution (count cnt, fixed-point weight wq) to sums v of
 * nv values, atomically: sb_k_forest_put's integer additions in any order.
 * Unweighted, the multiplicity is cnt and wq is not read. */
SB_FN void focl_put_global(int criterion, int weighted, int nv, SB_GLOBAL sb_i64 *v, int value, int cnt, int wq) {
    focl_add_global(criterion, v, value, weighted ? (sb_i64)cnt * wq : (sb_i64)cnt);
    if (weighted) sb_atom_add64(&v[nv - 1], (sb_i64)cnt);
}

SB_FN void focl_put_local(int criterion, int weighted, int nv, SB_LOCAL sb_i64 *v, int value, int cnt, int wq) {
    focl_add_local(criterion, v, value, weighted ? (sb_i64)cnt * wq : (sb_i64)cnt);
    if (weighted) sb_atom_add64(&v[nv - 1], (sb_i64)cnt);
}

/* Exclusive prefix sums of the work-group's counts c[0, SB_WG) in place
 * (integers; work-item 0 adds them in order); the total is returned to all. */
SB_FN int focl_scan(SB_LOCAL int *c) {
    sb_barrier();
    if (sb_local_id(0) == 0) {
        int acc = 0;
        for (int i = 0; i < SB_WG; i++) {
            const int x = c[i];
            c[i] = acc;
            acc += x;
        }
        c[SB_WG] = acc;
    }
    sb_barrier();
    return c[SB_WG];
}

SB_KERNEL void kf_fill(SB_GLOBAL int *a, sb_i64 n, int v) {
    for (sb_i64 i = sb_global_id(0); i < n; i += sb_global_size(0)) a[i] = v;
}

/* Draw counts of trees t0 + i, i < nb: cnt[i * n + row] += 1 for each draw. */
SB_KERNEL void kf_boot(SB_GLOBAL int *cnt, sb_i64 n, int nb, int t0, sb_u64 seed, sb_i64 ndraw) {
    for (sb_i64 x = sb_global_id(0); x < (sb_i64)nb * ndraw; x += sb_global_size(0)) {
        const int i = (int)(x / ndraw);
        const sb_i64 q = x - (sb_i64)i * ndraw;
        sb_atomic_inc32(&cnt[(sb_i64)i * n + sb_k_forest_boot_row(seed, t0 + i, q, (sb_u32)n)]);
    }
}

/* The fixed-point weight of row r in tree i: every row's (wmode 1: w[r]),
 * the tree's own (wmode 2, balanced_subsample: w[i * n + r]), or 1
 * (unweighted: w is not read). */
SB_FN int focl_wq_of(int wmode, SB_GLOBAL const int *w, sb_i64 n, int i, sb_i64 r) {
    return wmode == 2 ? w[(sb_i64)i * n + r] : wmode == 1 ? w[r] : 1;
}

/* Compaction, tile g (of tpt a tree) of tree g / tpt's n draw counts: its
 * in-bag rows are those drawn and, weighted (wmode, focl_wq_of), of positive
 * weight. Pass 1 (place = 0) writes their count to tcount[g]; pass 2
 * (place = 1) writes them, in row order, from position tbase[g], with their
 * count (mult) and, weighted, their fixed-point weight (wq). */
SB_KERNEL void kf_compact(SB_GLOBAL const int *cnt, sb_i64 n, int tpt, int place, SB_GLOBAL int *tcount,
                         SB_GLOBAL const sb_i64 *tbase, SB_GLOBAL int *rows, SB_GLOBAL int *mult, int wmode,
                         SB_GLOBAL const int *w, SB_GLOBAL int *wq) {
    SB_SHARED int c[SB_WG + 1];
    const int g = sb_group_id(0), lid = sb_local_id(0);
    const int i = g / tpt;
    const sb_i64 b = (sb_i64)(g - i * tpt) * FOCL_TILE + (sb_i64)lid * FOCL_PER;
    SB_GLOBAL const int *ci = cnt + (sb_i64)i * n;
    int mine = 0;
    for (sb_i64 r = b; r < b + FOCL_PER && r < n; r++) mine += ci[r] > 0 && focl_wq_of(wmode, w, n, i, r) > 0;
    c[lid] = mine;
    const int total = focl_scan(c);
    if (!place) {
        if (lid == 0) tcount[g] = total;
        return;
    }
    sb_i64 at = tbase[g] + c[lid];
    for (sb_i64 r = b; r < b + FOCL_PER && r < n; r++) {
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
SB_KERNEL void kf_sub_counts(SB_GLOBAL const int *cnt, sb_i64 n, int nb, int K, SB_GLOBAL const int *value,
                            SB_GLOBAL sb_i64 *nk) {
    for (sb_i64 x = sb_global_id(0); x < (sb_i64)nb * n; x += sb_global_size(0))
        if (cnt[x] > 0) sb_atom_add64(&nk[(x / n) * K + value[x % n]], (sb_i64)cnt[x]);
}

/* Step 2, a work-item a tree: its class weights (sb_k_forest_class_weight of
 * its draws, nt of them over kt classes drawn). */
SB_KERNEL void kf_sub_classes(SB_GLOBAL const sb_i64 *nk, int nb, int K, SB_GLOBAL float *cw) {
    const int i = sb_global_id(0);
    if (i >= nb) return;
    sb_i64 nt = 0;
    int kt = 0;
    for (int k = 0; k < K; k++) {
        nt += nk[(sb_i64)i * K + k];
        kt += nk[(sb_i64)i * K + k] > 0;
    }
    for (int k = 0; k < K; k++) cw[(sb_i64)i * K + k] = sb_k_forest_class_weight(nt, kt, nk[(sb_i64)i * K + k]);
}

/* A drawn row's weight in tree i (sb_k_forest_row_weight; hassw = 0: no
 * sample weights, sw is not read). */
SB_FN float focl_sub_weight(int hassw, SB_GLOBAL const float *sw, SB_GLOBAL const float *cw, int K,
                             SB_GLOBAL const int *value, sb_i64 i, sb_i64 r) {
    return sb_k_forest_row_weight(hassw ? sw[r] : 1.0f, cw[i * K + value[r]]);
}

/* Step 3: each tree's largest weight of a drawn row (wmax[i], from 0: the
 * bits of positive weights, which order as unsigned integers; a -0 sample
 * weight, which the CPU accepts, has the sign bit and is left out as the
 * CPU's w > mx leaves it), and its first row whose weight is not finite
 * (bad[i]; rows fit 32 bits). */
SB_KERNEL void kf_sub_max(SB_GLOBAL const int *cnt, sb_i64 n, int nb, int K, SB_GLOBAL const int *value, int hassw,
                         SB_GLOBAL const float *sw, SB_GLOBAL const float *cw, SB_GLOBAL sb_u32 *wmax, SB_GLOBAL sb_u32 *bad) {
    for (sb_i64 x = sb_global_id(0); x < (sb_i64)nb * n; x += sb_global_size(0)) {
        if (cnt[x] <= 0) continue;
        const sb_i64 i = x / n, r = x - i * n;
        const float w = focl_sub_weight(hassw, sw, cw, K, value, i, r);
        if (w - w != 0.0f) sb_atomic_min32(&bad[i], (sb_u32)r);
        else if (w > 0.0f) sb_atomic_max32(&wmax[i], sb_f2u(w));
    }
}

/* Step 4, a work-item a tree: its scale (0 when every weight is zero). */
SB_KERNEL void kf_sub_scale(SB_GLOBAL const sb_u32 *wmax, int nb, SB_GLOBAL int *wexp) {
    const int i = sb_global_id(0);
    if (i >= nb) return;
    const float mx = sb_u2f(wmax[i]);
    wexp[i] = mx > 0.0f ? sb_quantize_exponent(mx, SB_K_FOREST_W_LEVELS) : 0;
}

/* Step 5: each row's fixed-point weight in its tree (wtree, nb x n; 0 for a
 * row not drawn), and the tree's first row whose positive weight vanishes
 * (bad[nb + i]). */
SB_KERNEL void kf_sub_fix(SB_GLOBAL const int *cnt, sb_i64 n, int nb, int K, SB_GLOBAL const int *value, int hassw,
                         SB_GLOBAL const float *sw, SB_GLOBAL const float *cw, SB_GLOBAL const int *wexp,
                         SB_GLOBAL int *wtree, SB_GLOBAL sb_u32 *bad) {
    for (sb_i64 x = sb_global_id(0); x < (sb_i64)nb * n; x += sb_global_size(0)) {
        const sb_i64 i = x / n, r = x - i * n;
        int q = 0;
        if (cnt[x] > 0) {
            const float w = focl_sub_weight(hassw, sw, cw, K, value, i, r);
            if (w - w == 0.0f) {
                q = sb_k_forest_weight_fixed(w, wexp[i]);
                if (q == 0 && w > 0.0f) sb_atomic_min32(&bad[nb + i], (sb_u32)r);
            }
        }
        wtree[x] = q;
    }
}

/* Sums of node j's rows (nv of them at sums + j * nv, zeroed by the host),
 * one tile of FOCL_TILE positions a work-group; local sums when nv fits. */
SB_KERNEL void kf_sums(SB_GLOBAL const ocl_fnode *nodes, SB_GLOBAL const int *tile_start, int nnodes, int criterion,
                      int nv, int weighted, SB_GLOBAL const int *rows, SB_GLOBAL const int *mult,
                      SB_GLOBAL const int *wq, SB_GLOBAL const int *value, SB_GLOBAL sb_i64 *sums) {
    SB_SHARED sb_i64 acc[64];
    const int tile = sb_group_id(0), lid = sb_local_id(0);
    ocl_fnode q;
    sb_i64 b, e;
    const int j = focl_tile(nodes, tile_start, nnodes, tile, &q, &b, &e);
    SB_GLOBAL sb_i64 *v = sums + (sb_i64)j * nv;
    if (nv > 64) {
        for (sb_i64 p = b + lid; p < e; p += SB_WG)
            focl_put_global(criterion, weighted, nv, v, value[rows[p]], mult[p], weighted ? wq[p] : 1);
        return;
    }
    for (int k = lid; k < nv; k += SB_WG) acc[k] = 0;
    sb_barrier();
    for (sb_i64 p = b + lid; p < e; p += SB_WG)
        focl_put_local(criterion, weighted, nv, acc, value[rows[p]], mult[p], weighted ? wq[p] : 1);
    sb_barrier();
    for (int k = lid; k < nv; k += SB_WG)
        if (acc[k] != 0) sb_atom_add64(&v[k], acc[k]);
}

/* Small nodes (sb_k_forest_small_feature), one work-item each: its draws,
 * its rows' values, counts and fixed-point weights, then each drawn
 * feature's bins in its global scratch, the best under the total order, and
 * the left child's sums from its rows. Scratch a node: draws nf words; bins
 * SB_K_FOREST_SMALL_ROWS bytes; values, counts, weights SB_K_FOREST_SMALL_ROWS
 * ints each; l, m SB_K_FOREST_SMALL_NV longs each. Unweighted, wq and swq are
 * never read (the host binds the counts there). */
SB_KERNEL void kf_small(SB_GLOBAL const ocl_fnode *nodes, SB_GLOBAL const sb_i64 *tot, int nnodes,
                       SB_GLOBAL const sb_k_forest_rules *rules_g, sb_u64 seed, int extra, int nf, int mtry,
                       SB_GLOBAL const sb_u8 *bins, int stride, SB_GLOBAL const int *rows, SB_GLOBAL const int *mult,
                       SB_GLOBAL const int *wq, SB_GLOBAL const int *value, SB_GLOBAL sb_u32 *draws,
                       SB_GLOBAL sb_u8 *sbin, SB_GLOBAL int *sval, SB_GLOBAL int *smul, SB_GLOBAL int *swq,
                       SB_GLOBAL sb_i64 *slm, SB_GLOBAL sb_k_fsplit *out, SB_GLOBAL sb_i64 *lsum) {
    const int node = sb_global_id(0);
    if (node >= nnodes) return;
    const ocl_fnode q = nodes[node];
    sb_k_forest_rules rules = *rules_g;
    rules.min_w = q.min_w; /* the node's, in place of the setup's */
    const int nv = rules.nv;
    SB_GLOBAL const sb_i64 *t = tot + (sb_i64)node * nv;
    SB_GLOBAL sb_u32 *dr = draws + (sb_i64)node * nf;
    SB_GLOBAL sb_u8 *bin = sbin + (sb_i64)node * SB_K_FOREST_SMALL_ROWS;
    SB_GLOBAL int *val = sval + (sb_i64)node * SB_K_FOREST_SMALL_ROWS, *mul = smul + (sb_i64)node * SB_K_FOREST_SMALL_ROWS;
    SB_GLOBAL int *wqs = rules.weighted ? swq + (sb_i64)node * SB_K_FOREST_SMALL_ROWS : mul;
    SB_GLOBAL sb_i64 *l = slm + (sb_i64)node * 2 * SB_K_FOREST_SMALL_NV, *m = l + SB_K_FOREST_SMALL_NV;
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
        for (int i = 0; i < cnt; i++) bin[i] = bins[(sb_i64)rows[q.begin + i] * stride + j];
        sb_k_forest_small_feature(&rules, seed, q.key, extra, t, bin, val, mul, wqs, cnt, j, l, m, &best);
    }
    out[node] = best;
    SB_GLOBAL sb_i64 *ls = lsum + (sb_i64)node * nv;
    for (int k = 0; k < nv; k++) ls[k] = 0;
    if (best.valid)
        for (sb_i64 p = q.begin; p < q.end; p++) {
            const int r = rows[p];
            if (sb_k_goes_left(bins[(sb_i64)r * stride + best.feature], best.bin, best.dl))
                sb_k_forest_put(&rules, ls, value[r], mult[p], rules.weighted ? wq[p] : 1);
        }
}

/* The drawn features of each node of a chunk, ascending: feat[i * mtry + a]. */
SB_KERNEL void kf_select(SB_GLOBAL const ocl_fnode *nodes, int nnodes, sb_u64 seed, int nf, int mtry,
                        SB_GLOBAL sb_u32 *draws, SB_GLOBAL int *feat) {
    const int i = sb_global_id(0);
    if (i >= nnodes) return;
    SB_GLOBAL sb_u32 *dr = draws + (sb_i64)i * nf;
    sb_k_forest_draws(seed, nodes[i].key, nf, dr);
    int a = 0;
    for (int j = 0; j < nf; j++)
        if (sb_k_forest_selected(dr, nf, mtry, j)) feat[(sb_i64)i * mtry + a++] = j;
}

/* Histograms of one tile (htile positions) of node j's rows over its drawn
 * features (mtry x slot longs a node, zeroed by the host): in local memory
 * sh when it holds them (use_local), then added into the node's; else
 * straight into global memory. */
SB_KERNEL void kf_hist(SB_GLOBAL const ocl_fnode *nodes, SB_GLOBAL const int *tile_start, int nnodes, int htile,
                      int criterion, int nv, int weighted, int mtry, int slot, SB_GLOBAL const int *feat,
                      SB_GLOBAL const sb_u8 *bins, int stride, SB_GLOBAL const int *rows, SB_GLOBAL const int *mult,
                      SB_GLOBAL const int *wq, SB_GLOBAL const int *value, SB_GLOBAL sb_i64 *hist, int use_local
                      SB_DYN_LOCAL_PARAM(sb_i64, sh)) {
    SB_DYN_LOCAL(sb_i64, sh);
    const int tile = sb_group_id(0), lid = sb_local_id(0);
    const int j = focl_find(tile_start, nnodes, tile);
    const ocl_fnode q = nodes[j];
    SB_GLOBAL const int *fj = feat + (sb_i64)j * mtry;
    const sb_i64 hsize = (sb_i64)mtry * slot;
    SB_GLOBAL sb_i64 *gh = hist + (sb_i64)j * hsize;
    const sb_i64 b = q.begin + (sb_i64)(tile - tile_start[j]) * htile;
    const sb_i64 e = b + htile < q.end ? b + htile : q.end;
    /* local memory pays for zeroing and flushing hsize sums only when the
     * tile adds more than that (uniform over the work-group) */
    if (!use_local || (e - b) * mtry < hsize) {
        for (sb_i64 p = b + lid; p < e; p += SB_WG) {
            const int r = rows[p], v = value[r], c = mult[p], w = weighted ? wq[p] : 1;
            SB_GLOBAL const sb_u8 *rb = bins + (sb_i64)r * stride;
            for (int a = 0; a < mtry; a++)
                focl_put_global(criterion, weighted, nv, gh + (sb_i64)a * slot + (sb_i64)rb[fj[a]] * nv, v, c, w);
        }
        return;
    }
    for (sb_i64 i = lid; i < hsize; i += SB_WG) sh[i] = 0;
    sb_barrier();
    for (sb_i64 p = b + lid; p < e; p += SB_WG) {
        const int r = rows[p], v = value[r], c = mult[p], w = weighted ? wq[p] : 1;
        SB_GLOBAL const sb_u8 *rb = bins + (sb_i64)r * stride;
        for (int a = 0; a < mtry; a++)
            focl_put_local(criterion, weighted, nv, sh + (sb_i64)a * slot + (sb_i64)rb[fj[a]] * nv, v, c, w);
    }
    sb_barrier();
    for (sb_i64 i = lid; i < hsize; i += SB_WG)
        if (sh[i] != 0) sb_atom_add64(&gh[i], sh[i]);
}

/* The best split of node i = the work-group's from its histograms: each sum
 * of each drawn feature cumulated in place (sb_k_forest_cumulate_one), every
 * candidate (sb_k_forest_rf_at, or sb_k_forest_et_feature), a local
 * reduction under the total order, and the left child's sums. */
SB_KERNEL void kf_best(SB_GLOBAL const sb_i64 *tot, SB_GLOBAL const sb_k_forest_rules *rules_g, sb_u64 seed,
                      SB_GLOBAL const ocl_fnode *nodes, int extra, int mtry, int maxnb, int slot,
                      SB_GLOBAL const int *feat, SB_GLOBAL const int *nbins, SB_GLOBAL sb_i64 *hist,
                      SB_GLOBAL sb_k_fsplit *out, SB_GLOBAL sb_i64 *lsum) {
    SB_SHARED sb_k_fsplit sh[SB_WG];
    const int i = sb_group_id(0), lid = sb_local_id(0);
    sb_k_forest_rules rules = *rules_g;
    rules.min_w = nodes[i].min_w; /* the node's, in place of the setup's */
    const int nv = rules.nv;
    SB_GLOBAL const int *fi = feat + (sb_i64)i * mtry;
    SB_GLOBAL sb_i64 *h = hist + (sb_i64)i * mtry * slot;
    SB_GLOBAL const sb_i64 *t = tot + (sb_i64)i * nv;
    const sb_u64 key = nodes[i].key;
    for (int c = lid; c < mtry * nv; c += SB_WG)
        sb_k_forest_cumulate_one(h + (sb_i64)(c / nv) * slot, nbins[fi[c / nv]], nv, c % nv);
    sb_barrier_global();
    sb_k_fsplit best;
    best.valid = 0;
    best.score = 0.0f;
    best.feature = best.bin = best.dl = best.pad_ = 0;
    best.wl = 0;
    if (extra) {
        for (int a = lid; a < mtry; a += SB_WG) {
            SB_GLOBAL const sb_i64 *ha = h + (sb_i64)a * slot;
            sb_k_forest_et_feature(&rules, seed, key, t, ha, ha, nbins[fi[a]], fi[a], &best);
        }
    } else {
        for (sb_i64 c = lid; c < (sb_i64)mtry * maxnb; c += SB_WG) {
            const int a = (int)(c / maxnb), b = 1 + (int)(c - (sb_i64)a * maxnb);
            const int nb = nbins[fi[a]];
            if (b > nb) continue;
            SB_GLOBAL const sb_i64 *ha = h + (sb_i64)a * slot;
            sb_k_forest_rf_at(&rules, t, ha, ha, nb, fi[a], b, &best);
        }
    }
    sh[lid] = best;
    sb_barrier();
    for (int k = SB_WG / 2; k > 0; k >>= 1) {
        if (lid < k) {
            sb_k_fsplit x = sh[lid + k], y = sh[lid];
            if (sb_k_fsplit_better(&x, &y)) sh[lid] = x;
        }
        sb_barrier();
    }
    best = sh[0];
    if (lid == 0) out[i] = best;
    SB_GLOBAL sb_i64 *ls = lsum + (sb_i64)i * nv;
    for (int k = lid; k < nv; k += SB_WG) {
        sb_i64 v = 0;
        if (best.valid)
            for (int a = 0; a < mtry; a++)
                if (fi[a] == best.feature) {
                    SB_GLOBAL const sb_i64 *ha = h + (sb_i64)a * slot;
                    v = ha[(sb_i64)best.bin * nv + k] + (best.dl ? ha[k] : 0);
                }
        ls[k] = v;
    }
}

/* Partition, tile g of node j = focl_find(g) (FOCL_TILE positions): pass 1
 * (place = 0) writes the count of its rows going left to tcount[g]; pass 2
 * (place = 1) writes its rows, in position order, the left ones from
 * tbase[2g], the right ones from tbase[2g + 1], into trows, tmult (and,
 * weighted, twq): a stable partition. */
SB_KERNEL void kf_part(SB_GLOBAL const ocl_fnode *nodes, SB_GLOBAL const int *tile_start, int nnodes, int place,
                      SB_GLOBAL const sb_u8 *bins, int stride, SB_GLOBAL const int *rows, SB_GLOBAL const int *mult,
                      SB_GLOBAL int *tcount, SB_GLOBAL const sb_i64 *tbase, SB_GLOBAL int *trows, SB_GLOBAL int *tmult,
                      int weighted, SB_GLOBAL const int *wq, SB_GLOBAL int *twq) {
    SB_SHARED int c[SB_WG + 1];
    const int g = sb_group_id(0), lid = sb_local_id(0);
    const int j = focl_find(tile_start, nnodes, g);
    const ocl_fnode q = nodes[j];
    const sb_i64 b = q.begin + (sb_i64)(g - tile_start[j]) * FOCL_TILE + (sb_i64)lid * FOCL_PER;
    const sb_i64 e = b + FOCL_PER < q.end ? b + FOCL_PER : q.end;
    int mine = 0;
    for (sb_i64 p = b; p < e; p++) mine += sb_k_goes_left(bins[(sb_i64)rows[p] * stride + q.feature], q.bin, q.dl);
    c[lid] = mine;
    const int total = focl_scan(c);
    if (!place) {
        if (lid == 0) tcount[g] = total;
        return;
    }
    /* the tile's positions before mine: lid * FOCL_PER (only the last
     * work-items with rows may have fewer than FOCL_PER) */
    sb_i64 l = tbase[2 * (sb_i64)g] + c[lid], r = tbase[2 * (sb_i64)g + 1] + ((sb_i64)lid * FOCL_PER - c[lid]);
    for (sb_i64 p = b; p < e; p++) {
        const int row = rows[p];
        const sb_i64 at = sb_k_goes_left(bins[(sb_i64)row * stride + q.feature], q.bin, q.dl) ? l++ : r++;
        trows[at] = row;
        tmult[at] = mult[p];
        if (weighted) twq[at] = wq[p];
    }
}

/* The stable partition of each node of at most serial_max rows by one
 * work-item (a tile's work-group would idle on it): its rows going left
 * counted (nleft[j]), then scattered in position order, then copied back.
 * Larger nodes are kf_part's (they have tiles). */
SB_KERNEL void kf_part_serial(SB_GLOBAL const ocl_fnode *nodes, int nnodes, sb_i64 serial_max,
                             SB_GLOBAL const sb_u8 *bins, int stride, SB_GLOBAL int *rows, SB_GLOBAL int *mult,
                             SB_GLOBAL sb_i64 *nleft, SB_GLOBAL int *trows, SB_GLOBAL int *tmult, int weighted,
                             SB_GLOBAL int *wq, SB_GLOBAL int *twq) {
    const int j = sb_global_id(0);
    if (j >= nnodes) return;
    const ocl_fnode q = nodes[j];
    if (q.end - q.begin > serial_max) {
        nleft[j] = 0; /* the host adds its tiles' counts */
        return;
    }
    sb_i64 nl = 0;
    for (sb_i64 p = q.begin; p < q.end; p++) nl += sb_k_goes_left(bins[(sb_i64)rows[p] * stride + q.feature], q.bin, q.dl);
    nleft[j] = nl;
    sb_i64 l = q.begin, r = q.begin + nl;
    for (sb_i64 p = q.begin; p < q.end; p++) {
        const int row = rows[p];
        const sb_i64 at = sb_k_goes_left(bins[(sb_i64)row * stride + q.feature], q.bin, q.dl) ? l++ : r++;
        trows[at] = row;
        tmult[at] = mult[p];
        if (weighted) twq[at] = wq[p];
    }
    for (sb_i64 p = q.begin; p < q.end; p++) {
        rows[p] = trows[p];
        mult[p] = tmult[p];
        if (weighted) wq[p] = twq[p];
    }
}

/* The partitioned positions [begin, end) of each node back in place. */
SB_KERNEL void kf_part_copy(SB_GLOBAL const ocl_fnode *nodes, SB_GLOBAL const int *tile_start, int nnodes,
                           SB_GLOBAL const int *trows, SB_GLOBAL const int *tmult, SB_GLOBAL int *rows,
                           SB_GLOBAL int *mult, int weighted, SB_GLOBAL const int *twq, SB_GLOBAL int *wq) {
    const int g = sb_group_id(0), lid = sb_local_id(0);
    ocl_fnode q;
    sb_i64 b, e;
    focl_tile(nodes, tile_start, nnodes, g, &q, &b, &e);
    for (sb_i64 p = b + lid; p < e; p += SB_WG) {
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
SB_KERNEL void kf_iso_sample(int nb, int t0, sb_u64 seed, sb_i64 n, sb_i64 psi, SB_GLOBAL sb_u32 *taken, sb_i64 words,
                            SB_GLOBAL int *rows, SB_GLOBAL int *mult) {
    const int i = sb_global_id(0);
    if (i >= nb) return;
    SB_GLOBAL sb_u32 *tk = taken + (sb_i64)i * words;
    sb_i64 got = 0;
    for (sb_u64 q = 0; got < psi; q++) {
        const sb_u32 r = sb_k_iforest_sample_row(seed, t0 + i, q, (sb_u32)n);
        if (tk[r >> 5] & (1u << (r & 31))) continue;
        tk[r >> 5] |= 1u << (r & 31);
        const sb_i64 at = (sb_i64)i * psi + got++;
        rows[at] = (int)r;
        mult[at] = 1;
    }
}

/* Every feature's smallest and largest bin over a node's rows, one tile of
 * FOCL_TILE positions a work-group: 32-bit integer atomic_min and atomic_max
 * into lo, hi (node j's at j * nf, set to 256 and -1 by the host), which any
 * order gives alike. */
SB_KERNEL void kf_iso_range(SB_GLOBAL const ocl_fnode *nodes, SB_GLOBAL const int *tile_start, int nnodes, int nf,
                           SB_GLOBAL const sb_u8 *bins, int stride, SB_GLOBAL const int *rows, SB_GLOBAL int *lo,
                           SB_GLOBAL int *hi) {
    const int tile = sb_group_id(0), lid = sb_local_id(0);
    ocl_fnode q;
    sb_i64 b, e;
    const int j = focl_tile(nodes, tile_start, nnodes, tile, &q, &b, &e);
    for (sb_i64 p = b + lid; p < e; p += SB_WG) {
        SB_GLOBAL const sb_u8 *rb = bins + (sb_i64)rows[p] * stride;
        for (int f = 0; f < nf; f++) {
            sb_atomic_min32(&lo[(sb_i64)j * nf + f], (int)rb[f]);
            sb_atomic_max32(&hi[(sb_i64)j * nf + f], (int)rb[f]);
        }
    }
}

/* A work-item a node: its split from its features' bin ranges (sb_k_iforest_split). */
SB_KERNEL void kf_iso_pick(SB_GLOBAL const ocl_fnode *nodes, int nnodes, int nf, sb_u64 seed, SB_GLOBAL const int *lo,
                          SB_GLOBAL const int *hi, SB_GLOBAL sb_k_fsplit *out) {
    const int j = sb_global_id(0);
    if (j >= nnodes) return;
    sb_k_fsplit x;
    sb_k_iforest_split(seed, nodes[j].key, nf, lo + (sb_i64)j * nf, hi + (sb_i64)j * nf, &x);
    out[j] = x;
}
