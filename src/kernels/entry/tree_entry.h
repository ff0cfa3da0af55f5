/*
 * tree_entry.h: the entry kernels of the tree device (src/models/trees/tdev_gpu.c),
 * written once in the compat vocabulary (src/kernels/compat.h) and compiled by
 * every GPU backend: OpenCL builds it at run time from the embedded text
 * (build/gen/tree_cl_src.c, with backends/opencl/compat_opencl.h in front),
 * CUDA compiles the same file (backends/cuda/entry_tree.cu, after
 * backends/cuda/compat_cuda.h). The arithmetic is the kernel bodies of
 * src/kernels/, the same the CPU runs; these kernels only decide which
 * work-item handles which row, node or histogram entry, and move integers:
 * - histograms: per work-group in local memory (a tile of a job's rows by a
 *   group of features), then into the node's slot in global memory, both by
 *   64-bit integer atomic adds; or, where local memory is too small, straight
 *   into the slot. Integer sums in any order are exact.
 * - |g| and h maxima: 32-bit atomic max on the bits of positive floats, whose
 *   order is the floats' order.
 * - best split: one work-group per node, teams of work-items scan a feature
 *   each, a work-item a run of its bins (a local scan gives the sums before
 *   the run), then a local reduction under sb_k_split_better, a total order,
 *   so any cut and any reduction tree pick the same candidate.
 * - partition: a stable scan-and-scatter spread over many work-groups (tiles
 *   of a segment).
 * SB_WG, the work-group size, is the host's (-DSB_WG): every launch uses it.
 * Separating arms: -DSB_ARM_FLOAT_ATOMIC (gradient sums as float atomics),
 * -DSB_ARM_VENDOR_EXP (the vendor's expf).
 * The kernel list is SB_TREE_KERNELS (src/device/programs.h).
 */
#include "../../math/sb_math.h"
#if defined(SB_ARM_VENDOR_EXP)
/* Separating arm for rule 3: the vendor's expf (CUDA's libdevice, the OpenCL
 * built-in) in the softmax of the kernel bodies below instead of the profile's. */
#define sb_expf(x) sb_vendor_expf(x)
#endif
#include "../tree.h"
#include "../quantize.h"

#ifndef SB_WG
#error "SB_WG (the work-group size, a power of two) is set by the host"
#endif
#define OCL_MAX_CLASS 1024 /* SB_TDEV_MAX_CLASS */

/* The host's structs of src/models/trees/tdev.h, with the same layouts (the host
 * checks their sizes). */
typedef struct {
    sb_i64 begin, end;
    int feature, split_bin, default_left, categorical;
    sb_u32 cat[8];
} ocl_seg;

/* Whether a row with bin b goes left in segment s: the split's bin rule, or
 * for a categorical split its 256-bit set of left bins. */
SB_FN int ocl_seg_left(SB_GLOBAL const ocl_seg *s, sb_u32 b) {
    if (s->categorical) return (int)((s->cat[b >> 5] >> (b & 31u)) & 1u);
    return sb_k_goes_left(b, s->split_bin, s->default_left);
}
typedef struct {
    sb_i64 begin, end;
    int slot, pad_;
} ocl_hjob;
typedef struct {
    int large, small;
} ocl_sub;
typedef struct {
    sb_i64 G, H, C;
    int slot, pad_;
} ocl_node;

SB_KERNEL void k_fill(SB_GLOBAL float *a, sb_i64 n, float v) {
    sb_i64 i = sb_global_id(0);
    if (i < n) a[i] = v;
}

SB_KERNEL void k_iota(SB_GLOBAL int *a, sb_i64 n) {
    sb_i64 i = sb_global_id(0);
    if (i < n) a[i] = (int)i;
}

/* Gradients of one-margin objectives (regression, binary, huber, quantile,
 * poisson, gamma, tweedie; param: the objective's parameter). */
SB_KERNEL void k_grad1(int objective, SB_GLOBAL const float *margin, SB_GLOBAL const float *label,
                      SB_GLOBAL const float *weight, SB_GLOBAL float *g, SB_GLOBAL float *h, sb_i64 n, float param) {
    sb_i64 r = sb_global_id(0);
    if (r >= n) return;
    float prob[1];
    sb_k_row_gradients(objective, 1, margin + r, label[r], weight[r], g + r, h + r, n, prob, param);
}

/* Softmax gradients: K margins a row, K floats of private scratch. */
SB_KERNEL void k_gradk(int K, SB_GLOBAL const float *margin, SB_GLOBAL const float *label,
                      SB_GLOBAL const float *weight, SB_GLOBAL float *g, SB_GLOBAL float *h, sb_i64 n) {
    sb_i64 r = sb_global_id(0);
    if (r >= n) return;
    float prob[OCL_MAX_CLASS];
    sb_k_row_gradients(SB_K_OBJ_MULTICLASS, K, margin + r * K, label[r], weight[r], g + r, h + r, n, prob, 0.0f);
}

/* maxbits[2c], [2c + 1]: the largest keys (kernels/quantize.h: sb_k_maxkey_abs
 * of g, sb_k_maxkey_pos of h) of class c = sb_global_id(1), as the CPU takes
 * them: the bits of the largest |g| and h, or a non-finite key when some value
 * is inf or NaN (the host refuses those before quantizing). */
SB_KERNEL void k_maxabs(SB_GLOBAL const float *g, SB_GLOBAL const float *h, sb_i64 n, SB_GLOBAL sb_u32 *maxbits) {
    SB_SHARED sb_u32 sg[SB_WG], sh[SB_WG];
    const sb_i64 c = sb_global_id(1);
    const int lid = (int)sb_local_id(0);
    sb_u32 mg = 0u, mh = 0u;
    for (sb_i64 r = sb_global_id(0); r < n; r += (sb_i64)sb_global_size(0)) {
        sb_u32 a = sb_k_maxkey_abs(g[c * n + r]), b = sb_k_maxkey_pos(h[c * n + r]);
        mg = sb_umax(mg, a);
        mh = sb_umax(mh, b);
    }
    sg[lid] = mg;
    sh[lid] = mh;
    sb_barrier();
    for (int s = SB_WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            sg[lid] = sb_umax(sg[lid], sg[lid + s]);
            sh[lid] = sb_umax(sh[lid], sh[lid + s]);
        }
        sb_barrier();
    }
    if (lid == 0) {
        sb_atomic_max32(&maxbits[2 * c], sg[0]);
        sb_atomic_max32(&maxbits[2 * c + 1], sh[0]);
    }
}

/* Quantized gradients of the class whose values start at off. */
SB_KERNEL void k_quantize(SB_GLOBAL const float *g, SB_GLOBAL const float *h, sb_i64 off, sb_i64 n, float gs, float hs,
                         SB_GLOBAL int *gq, SB_GLOBAL int *hq) {
    sb_i64 r = sb_global_id(0);
    if (r >= n) return;
    gq[r] = sb_round_half_even_i32(g[off + r] * gs);
    hq[r] = sb_round_half_even_i32(h[off + r] * hs);
}

/* ---- partition: a stable scan-and-scatter over many work-groups ----
 * A segment's rows are cut into tiles of OCL_PART_TILE rows, one work-group
 * each (tile_start[j]: segment j's first tile; tile_start[nseg]: all tiles).
 * Pass 1 counts each tile's left rows, pass 2 turns the counts into exclusive
 * prefixes per segment, pass 3 places each row, pass 4 copies tmp back. In a
 * tile, work-item l owns rows [l * OCL_PART_PER, (l + 1) * OCL_PART_PER), so
 * rows, work-items and tiles are all in row order, and the partition is
 * stable: left rows in their order, then right rows in theirs. */
#define OCL_PART_PER 8
#define OCL_PART_TILE (SB_WG * OCL_PART_PER)

/* The item whose run of tiles holds tile t: the last j in [0, n) with
 * start[j] <= t (start ascending, start[0] = 0; items without tiles share
 * their start with the next item and are never the last). */
SB_FN int ocl_find(SB_GLOBAL const int *start, int n, int t) {
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (start[mid] <= t) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Exclusive prefix sum of v over the work-group's SB_WG work-items, in
 * scan[SB_WG] (local); *sum gets the group's total. Every work-item of the
 * group must call it (it holds barriers); scan is free again on return. */
SB_FN int ocl_group_scan(SB_LOCAL int *scan, int v, int *sum) {
    const int lid = (int)sb_local_id(0);
    scan[lid] = v;
    sb_barrier();
    for (int off = 1; off < SB_WG; off <<= 1) {
        int x = lid >= off ? scan[lid - off] : 0;
        sb_barrier();
        scan[lid] += x;
        sb_barrier();
    }
    const int incl = scan[lid];
    *sum = scan[SB_WG - 1];
    sb_barrier();
    return incl - v;
}

/* Pass 1: tile_left[t] := the left rows of tile t = sb_group_id(0). A count
 * is order-free, so the rows are read in coalesced strides. */
SB_KERNEL void k_part_count(SB_GLOBAL const ocl_seg *segs, SB_GLOBAL const int *tile_start, int nseg,
                           SB_GLOBAL const int *rows, SB_GLOBAL const sb_u8 *bins, int stride,
                           SB_GLOBAL int *tile_left) {
    SB_SHARED int scan[SB_WG];
    const int tile = (int)sb_group_id(0), lid = (int)sb_local_id(0);
    const int j = ocl_find(tile_start, nseg, tile);
    const ocl_seg s = segs[j];
    const sb_i64 t0 = s.begin + (sb_i64)(tile - tile_start[j]) * OCL_PART_TILE;
    const sb_i64 t1 = t0 + OCL_PART_TILE < s.end ? t0 + OCL_PART_TILE : s.end;
    int cnt = 0;
    for (sb_i64 i = t0 + lid; i < t1; i += SB_WG)
        cnt += ocl_seg_left(&segs[j], bins[(sb_i64)rows[i] * stride + s.feature]);
    int total;
    ocl_group_scan(scan, cnt, &total);
    if (lid == 0) tile_left[tile] = total;
}

/* Pass 2, one work-group per segment j = sb_group_id(0): its tiles' counts
 * become exclusive prefixes (left rows of the segment before each tile), and
 * seg_left[j] := the segment's left rows. */
SB_KERNEL void k_part_scan(SB_GLOBAL const int *tile_start, SB_GLOBAL int *tile_left, SB_GLOBAL int *seg_left) {
    SB_SHARED int scan[SB_WG];
    const int j = (int)sb_group_id(0), lid = (int)sb_local_id(0);
    const int a = tile_start[j], b = tile_start[j + 1];
    int carry = 0;
    for (int base = a; base < b; base += SB_WG) {
        const int i = base + lid;
        int sum;
        const int v = i < b ? tile_left[i] : 0;
        const int ex = ocl_group_scan(scan, v, &sum);
        if (i < b) tile_left[i] = carry + ex;
        carry += sum;
    }
    if (lid == 0) seg_left[j] = carry;
}

/* Pass 3: the rows of tile sb_group_id(0) to their places in tmp. The tile
 * is staged in local memory (coalesced reads), each work-item flags its
 * OCL_PART_PER rows, a group scan gives the left rows before each
 * work-item's, the rows are rearranged in stage (the tile's left rows in
 * order, then its right rows in order) and written out coalesced: the left
 * run after the segment's left rows of earlier tiles, the right run after
 * all its left rows and its right rows of earlier tiles. */
SB_KERNEL void k_part_scatter(SB_GLOBAL const ocl_seg *segs, SB_GLOBAL const int *tile_start, int nseg,
                             SB_GLOBAL const int *rows, SB_GLOBAL const sb_u8 *bins, int stride,
                             SB_GLOBAL const int *tile_left, SB_GLOBAL const int *seg_left, SB_GLOBAL int *tmp) {
    SB_SHARED int scan[SB_WG];
    SB_SHARED int stage[OCL_PART_TILE];
    const int tile = (int)sb_group_id(0), lid = (int)sb_local_id(0);
    const int j = ocl_find(tile_start, nseg, tile);
    const ocl_seg s = segs[j];
    const sb_i64 off = (sb_i64)(tile - tile_start[j]) * OCL_PART_TILE; /* the tile's first row, within the segment */
    const sb_i64 t0 = s.begin + off;
    const int nt = (int)(s.end - t0 < OCL_PART_TILE ? s.end - t0 : OCL_PART_TILE);
    for (int q = lid; q < nt; q += SB_WG) stage[q] = rows[t0 + q];
    sb_barrier();
    int r[OCL_PART_PER];
    int flags = 0, cnt = 0;
    for (int k = 0; k < OCL_PART_PER; k++) {
        const int q = lid * OCL_PART_PER + k;
        r[k] = 0;
        if (q < nt) {
            r[k] = stage[q];
            const int f = ocl_seg_left(&segs[j], bins[(sb_i64)r[k] * stride + s.feature]);
            flags |= f << k;
            cnt += f;
        }
    }
    int nleft;
    int lb = ocl_group_scan(scan, cnt, &nleft); /* every read of stage is before its first barrier */
    int rb = lid * OCL_PART_PER - lb;           /* right rows of the tile before this work-item's */
    for (int k = 0; k < OCL_PART_PER; k++) {
        const int q = lid * OCL_PART_PER + k;
        if (q >= nt) break;
        if ((flags >> k) & 1) stage[lb++] = r[k];
        else stage[nleft + rb++] = r[k];
    }
    sb_barrier();
    const sb_i64 lbase = s.begin + tile_left[tile];
    const sb_i64 rbase = s.begin + seg_left[j] + (off - tile_left[tile]);
    for (int q = lid; q < nt; q += SB_WG) tmp[q < nleft ? lbase + q : rbase + (q - nleft)] = stage[q];
}

/* Pass 4: rows := tmp over tile sb_group_id(0). */
SB_KERNEL void k_part_copy(SB_GLOBAL const ocl_seg *segs, SB_GLOBAL const int *tile_start, int nseg,
                          SB_GLOBAL const int *tmp, SB_GLOBAL int *rows) {
    const int tile = (int)sb_group_id(0), lid = (int)sb_local_id(0);
    const int j = ocl_find(tile_start, nseg, tile);
    const ocl_seg s = segs[j];
    const sb_i64 t0 = s.begin + (sb_i64)(tile - tile_start[j]) * OCL_PART_TILE;
    const sb_i64 t1 = t0 + OCL_PART_TILE < s.end ? t0 + OCL_PART_TILE : s.end;
    for (sb_i64 i = t0 + lid; i < t1; i += SB_WG) rows[i] = tmp[i];
}

/* Slots of jobs sb_global_id(1) := 0. */
SB_KERNEL void k_zero_slots(SB_GLOBAL const ocl_hjob *jobs, SB_GLOBAL sb_i64 *slots, int total) {
    const sb_i64 i = sb_global_id(0);
    if (i < (sb_i64)total * 3) slots[(sb_i64)jobs[sb_global_id(1)].slot * total * 3 + i] = 0;
}

/* The fallback where local memory cannot hold a feature group (and
 * SAMEBITS_OPENCL_HIST=global): one work-item per row of every job (jstart:
 * each job's first item, jstart[njobs]: all); its gradient, hessian and count
 * go into the bin of each usable feature, by 64-bit integer atomics. */
SB_KERNEL void k_hist(SB_GLOBAL const ocl_hjob *jobs, SB_GLOBAL const sb_i64 *jstart, int njobs, SB_GLOBAL const int *rows,
                     SB_GLOBAL const sb_u8 *bins, int stride, int nf, SB_GLOBAL const int *gq,
                     SB_GLOBAL const int *hq, SB_GLOBAL const int *hoff, SB_GLOBAL const sb_u8 *mask,
                     SB_GLOBAL sb_i64 *slots, int total) {
    const sb_i64 i = sb_global_id(0);
    if (i >= jstart[njobs]) return;
    int lo = 0, hi = njobs - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (jstart[mid] <= i) lo = mid;
        else hi = mid - 1;
    }
    const ocl_hjob jb = jobs[lo];
    const int r = rows[jb.begin + (i - jstart[lo])];
    SB_GLOBAL sb_i64 *hs = slots + (sb_i64)jb.slot * total * 3;
    SB_GLOBAL const sb_u8 *b = bins + (sb_i64)r * stride;
    const sb_i64 g = gq[r], h = hq[r];
    for (int f = 0; f < nf; f++) {
        if (!mask[f]) continue; /* unusable features' bins stay zero */
        SB_GLOBAL sb_i64 *e = hs + (sb_i64)(hoff[f] + b[f]) * 3;
#if defined(SB_ARM_FLOAT_ATOMIC)
        /* Separating arm for rule 4: the gradient sum as a float atomic (a
         * compare-and-swap loop): rounded, in arrival order. */
        sb_i64 seen, old = *e;
        do {
            seen = old;
            old = sb_atom_cas64(e, seen, (sb_i64)((float)seen + (float)g));
        } while (old != seen);
#else
        sb_atom_add64(e, g);
#endif
        sb_atom_add64(e + 1, h);
        sb_atom_add64(e + 2, (sb_i64)1);
    }
}

/* ---- histograms in local memory ----
 * Work-group (t, q) = (sb_group_id(0), sb_group_id(1)) sums tile t of its
 * job's rows (tile_rows rows; tile_start as for the partition) over feature
 * group q (features [f0, f1), a multiple of 4 apart, whose histogram entries
 * [e0, e1) fit local memory), then adds its bins into the node's slot with
 * 64-bit integer atom_add. In local memory a bin holds its gradient sum, and
 * its hessian sum with the row count above bit OCL_HC_SHIFT: exact while a
 * tile has fewer than 2^16 rows (the host keeps tile_rows <= 16384) and its
 * hessian sum stays within 2^47 in magnitude (16384 rows of |hq| <= 2^31 sum
 * to at most 2^45). Integer sums in any order are exact, so neither the tile
 * size, the grouping nor the order atomics land in can show in a bit. */
#define OCL_HC_SHIFT 48
#define OCL_HIST_GROUP_FEATURES 256 /* features of a group at most (tdev_opencl.c) */

typedef struct {
    int f0, f1, e0, e1;
} ocl_fgroup;

#if defined(SB_ARM_FLOAT_ATOMIC)
/* Separating arm for rule 4: a local gradient sum as a float compare-and-swap
 * loop: rounded, in arrival order. */
SB_FN void kt_arm_float_add(SB_LOCAL sb_u32 *p, float v) {
    sb_u32 seen, old = *p;
    do {
        seen = old;
        old = sb_atomic_cas32(p, seen, sb_f2u(sb_u2f(seen) + v));
    } while (old != seen);
}
#endif

SB_KERNEL void k_hist_local(SB_GLOBAL const ocl_hjob *jobs, SB_GLOBAL const int *tile_start, int njobs, int tile_rows,
                           SB_GLOBAL const ocl_fgroup *groups, SB_GLOBAL const int *rows, SB_GLOBAL const sb_u8 *bins,
                           int stride, SB_GLOBAL const int *gq, SB_GLOBAL const int *hq, SB_GLOBAL const int *hoff,
                           SB_GLOBAL const sb_u8 *mask, SB_GLOBAL sb_i64 *slots, int total SB_DYN_LOCAL_PARAM(sb_u64, acc)) {
    SB_DYN_LOCAL(sb_u64, acc);
    SB_SHARED int base[OCL_HIST_GROUP_FEATURES]; /* per feature of the group: its first entry, or -1 (unusable) */
    const int tile = (int)sb_group_id(0), lid = (int)sb_local_id(0);
    const int j = ocl_find(tile_start, njobs, tile);
    const ocl_hjob job = jobs[j];
    const ocl_fgroup grp = groups[sb_group_id(1)];
    const int ne = grp.e1 - grp.e0, nfg = grp.f1 - grp.f0;
    SB_LOCAL sb_u64 *shc = acc + ne; /* acc: g[ne], then hc[ne] */
#if defined(SB_ARM_FLOAT_ATOMIC)
    SB_LOCAL sb_u32 *sgf = (SB_LOCAL sb_u32 *)acc; /* the arm: float gradient sums in g's place */
#else
    SB_LOCAL sb_u64 *sg = acc;
#endif
    for (int f = lid; f < nfg; f += SB_WG) base[f] = mask[grp.f0 + f] ? hoff[grp.f0 + f] - grp.e0 : -1;
    for (int i = lid; i < 2 * ne; i += SB_WG) acc[i] = 0;
    sb_barrier();
    const sb_i64 b = job.begin + (sb_i64)(tile - tile_start[j]) * tile_rows;
    const sb_i64 e = b + tile_rows < job.end ? b + tile_rows : job.end;
    for (sb_i64 i = b + lid; i < e; i += SB_WG) {
        const int r = rows[i];
        const sb_i64 g = gq[r];
        const sb_u64 hc = (sb_u64)(sb_i64)hq[r] + ((sb_u64)1 << OCL_HC_SHIFT);
        SB_GLOBAL const sb_u8 *rb = bins + (sb_i64)r * stride + grp.f0; /* stride and f0: multiples of 4 */
        for (int q = 0; q < nfg; q += 4) {
            sb_u8 wb[4];
            sb_load_u8x4(rb + q, wb);
            for (int k = 0; k < 4; k++) {
                if (q + k >= nfg || base[q + k] < 0) continue;
                const int at = base[q + k] + wb[k];
#if defined(SB_ARM_FLOAT_ATOMIC)
                kt_arm_float_add(&sgf[at], (float)g);
#else
                sb_atom_add64(&sg[at], (sb_u64)g);
#endif
                sb_atom_add64(&shc[at], hc);
            }
        }
    }
    sb_barrier();
    SB_GLOBAL sb_i64 *out = slots + (sb_i64)job.slot * total * 3;
    for (int i = lid; i < ne; i += SB_WG) {
        const sb_u64 hc = shc[i];
        if (hc == 0) continue; /* no rows: the count is zero, and so are the sums */
        const sb_u64 low = hc & (((sb_u64)1 << OCL_HC_SHIFT) - 1);
        const sb_i64 h = low >= ((sb_u64)1 << (OCL_HC_SHIFT - 1)) ? (sb_i64)low - ((sb_i64)1 << OCL_HC_SHIFT) : (sb_i64)low;
        const sb_i64 c = (sb_i64)((hc - (sb_u64)h) >> OCL_HC_SHIFT);
        SB_GLOBAL sb_i64 *at = out + (sb_i64)(grp.e0 + i) * 3;
#if defined(SB_ARM_FLOAT_ATOMIC)
        /* the arm again: the tile's float sum into the node's as a float too */
        const float part = sb_u2f(sgf[i]);
        sb_i64 seen, old = *at;
        do {
            seen = old;
            old = sb_atom_cas64(at, seen, (sb_i64)((float)seen + part));
        } while (old != seen);
#else
        sb_atom_add64(at, (sb_i64)sg[i]);
#endif
        sb_atom_add64(at + 1, h);
        sb_atom_add64(at + 2, c);
    }
}

/* k_hist_local with 32-bit local atomics: the same sums as k_hist_local, each
 * kept in local memory as native 32-bit integer adds (a 64-bit local add is a
 * compare-and-swap loop on some GPUs). Any int32 v (g or h) is offset to the
 * unsigned u = v + 2^31 and split as u = (u >> 16) * 2^16 + (u & 0xFFFF): over
 * a tile of at most 16384 rows both parts sum below 2^30, so every 32-bit sum
 * is exact, and the flush rebuilds the 64-bit sum exactly as
 * hi * 2^16 + lo - count * 2^31. Local memory: lo_g, hi_g, lo_h, hi_h, count,
 * ne words each (20 bytes a bin). */
SB_KERNEL void k_hist_local32(SB_GLOBAL const ocl_hjob *jobs, SB_GLOBAL const int *tile_start, int njobs,
                              int tile_rows, SB_GLOBAL const ocl_fgroup *groups, SB_GLOBAL const int *rows,
                              SB_GLOBAL const sb_u8 *bins, int stride, SB_GLOBAL const int *gq, SB_GLOBAL const int *hq,
                              SB_GLOBAL const int *hoff, SB_GLOBAL const sb_u8 *mask, SB_GLOBAL sb_i64 *slots,
                              int total SB_DYN_LOCAL_PARAM(sb_u32, acc)) {
    SB_DYN_LOCAL(sb_u32, acc);
    SB_SHARED int base[OCL_HIST_GROUP_FEATURES];
    const int tile = sb_group_id(0), lid = sb_local_id(0);
    const int j = ocl_find(tile_start, njobs, tile);
    const ocl_hjob job = jobs[j];
    const ocl_fgroup grp = groups[sb_group_id(1)];
    const int ne = grp.e1 - grp.e0, nfg = grp.f1 - grp.f0;
    SB_LOCAL sb_u32 *glo = acc, *hlo = acc + 2 * ne, *hhi = acc + 3 * ne, *cnt = acc + 4 * ne;
#if !defined(SB_ARM_FLOAT_ATOMIC)
    SB_LOCAL sb_u32 *ghi = acc + ne; /* the arm keeps a float in glo alone */
#endif
    for (int f = lid; f < nfg; f += SB_WG) base[f] = mask[grp.f0 + f] ? hoff[grp.f0 + f] - grp.e0 : -1;
    for (int i = lid; i < 5 * ne; i += SB_WG) acc[i] = 0u;
    sb_barrier();
    const sb_i64 b = job.begin + (sb_i64)(tile - tile_start[j]) * tile_rows;
    const sb_i64 e = b + tile_rows < job.end ? b + tile_rows : job.end;
    for (sb_i64 i = b + lid; i < e; i += SB_WG) {
        const int r = rows[i];
        const int g = gq[r], h = hq[r];
        const sb_u32 gu = (sb_u32)g ^ 0x80000000u, hu = (sb_u32)h ^ 0x80000000u; /* v + 2^31 */
        const sb_u32 gl = gu & 0xFFFFu, gh = gu >> 16, hl = hu & 0xFFFFu, hh = hu >> 16;
        SB_GLOBAL const sb_u8 *rb = bins + (sb_i64)r * stride + grp.f0; /* stride and f0: multiples of 4 */
        for (int q = 0; q < nfg; q += 4) {
            sb_u8 wb[4];
            sb_load_u8x4(rb + q, wb);
            for (int k = 0; k < 4; k++) {
                if (q + k >= nfg || base[q + k] < 0) continue;
                const int at = base[q + k] + wb[k];
#if defined(SB_ARM_FLOAT_ATOMIC)
                kt_arm_float_add(&glo[at], (float)g);
                (void)gl, (void)gh;
#else
                sb_atomic_add32(&glo[at], gl);
                sb_atomic_add32(&ghi[at], gh);
#endif
                sb_atomic_add32(&hlo[at], hl);
                sb_atomic_add32(&hhi[at], hh);
                sb_atomic_add32(&cnt[at], 1u);
            }
        }
    }
    sb_barrier();
    SB_GLOBAL sb_i64 *out = slots + (sb_i64)job.slot * total * 3;
    for (int i = lid; i < ne; i += SB_WG) {
        const sb_u32 c = cnt[i];
        if (c == 0u) continue; /* no rows: the sums are zero too */
        const sb_i64 off = (sb_i64)c << 31; /* count * 2^31: the offsets added */
#if defined(SB_ARM_FLOAT_ATOMIC)
        const sb_i64 g = (sb_i64)sb_u2f(glo[i]);
#else
        const sb_i64 g = (sb_i64)ghi[i] * 65536 + (sb_i64)glo[i] - off;
#endif
        const sb_i64 h = (sb_i64)hhi[i] * 65536 + (sb_i64)hlo[i] - off;
        SB_GLOBAL sb_i64 *at = out + (sb_i64)(grp.e0 + i) * 3;
        sb_atom_add64(at, g);
        sb_atom_add64(at + 1, h);
        sb_atom_add64(at + 2, (sb_i64)c);
    }
}

/* Slot large -= slot small, for sub sb_global_id(1). */
SB_KERNEL void k_subtract(SB_GLOBAL const ocl_sub *subs, SB_GLOBAL sb_i64 *slots, int total) {
    const sb_i64 i = sb_global_id(0);
    if (i >= (sb_i64)total * 3) return;
    const ocl_sub s = subs[sb_global_id(1)];
    slots[(sb_i64)s.large * total * 3 + i] -= slots[(sb_i64)s.small * total * 3 + i];
}

/* The best split of node sb_group_id(0). The work-group is cut into teams
 * of OCL_TEAM work-items; per round, team k takes feature f0 + k, each of its
 * work-items a run of consecutive bins: it sums its run, an inclusive scan
 * over the team (exact 64-bit sums in local memory) gives the cumulative sums
 * before the run, and it walks its bins with the kernel's per-bin step
 * (sb_k_split_at), as sb_k_split_scan would at those bins (as tdev_cuda.cu
 * does with warp shuffles). Then the work-group reduces under the total
 * order, so any cut and any reduction tree pick the same candidate. */
#define OCL_TEAM (SB_WG < 32 ? SB_WG : 32)
#define OCL_TEAMS (SB_WG / OCL_TEAM)
SB_KERNEL void k_best(SB_GLOBAL const ocl_node *nodes, SB_GLOBAL const sb_k_split_rules *rules,
                     SB_GLOBAL const sb_i64 *slots, int total, SB_GLOBAL const int *hoff, SB_GLOBAL const int *nbins,
                     SB_GLOBAL const sb_u8 *mask, int nf, SB_GLOBAL sb_k_split *out) {
    SB_SHARED sb_k_split red[SB_WG];
    SB_SHARED sb_i64 sg[SB_WG], sh[SB_WG], sc[SB_WG];
    const ocl_node q = nodes[sb_group_id(0)];
    const sb_k_split_rules r = rules[0];
    const int lid = (int)sb_local_id(0), team = lid / OCL_TEAM, lane = lid % OCL_TEAM;
    const float parent = sb_k_node_score(q.G, q.H, &r);
    SB_GLOBAL const sb_k_hbin *hs = (SB_GLOBAL const sb_k_hbin *)(slots + (sb_i64)q.slot * total * 3);
    sb_k_split best = {0, 0.0f, 0, 0, 0, 0, 0, 0, 0}; /* invalid: no split yet */
    for (int f0 = 0; f0 < nf; f0 += OCL_TEAMS) { /* the same rounds for every work-item: barriers inside */
        const int f = f0 + team;
        const int on = f < nf && mask[f];
        SB_GLOBAL const sb_k_hbin *h = hs;
        int nb = 0, t0 = 1, t1 = 1;
        sb_i64 lg = 0, lh = 0, lc = 0;
        if (on) {
            h = hs + hoff[f];
            nb = nbins[f];
            const int per = (nb + OCL_TEAM - 1) / OCL_TEAM;
            t0 = 1 + lane * per;
            t1 = t0 + per <= nb + 1 ? t0 + per : nb + 1; /* empty when t1 <= t0 */
            for (int t = t0; t < t1; t++) {
                lg += h[t].g;
                lh += h[t].h;
                lc += h[t].c;
            }
        }
        sg[lid] = lg;
        sh[lid] = lh;
        sc[lid] = lc;
        sb_barrier();
        for (int off = 1; off < OCL_TEAM; off <<= 1) {
            const sb_i64 xg = lane >= off ? sg[lid - off] : 0, xh = lane >= off ? sh[lid - off] : 0,
                       xc = lane >= off ? sc[lid - off] : 0;
            sb_barrier();
            sg[lid] += xg;
            sh[lid] += xh;
            sc[lid] += xc;
            sb_barrier();
        }
        if (on) {
            sb_i64 ag = sg[lid] - lg, ah = sh[lid] - lh, ac = sc[lid] - lc; /* bins 1 .. t0 - 1 */
            const sb_i64 mg = h[0].g, mh = h[0].h, mc = h[0].c;
            for (int t = t0; t < t1; t++) {
                ag += h[t].g;
                ah += h[t].h;
                ac += h[t].c;
                sb_k_split_at(&r, q.G, q.H, q.C, parent, f, t, nb, h[t].c, ag, ah, ac, mg, mh, mc, &best);
            }
        }
        sb_barrier(); /* sg, sh, sc are rewritten next round */
    }
    red[lid] = best;
    sb_barrier();
    for (int s = SB_WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            sb_k_split a = red[lid], b = red[lid + s];
            if (sb_k_split_better(&b, &a)) red[lid] = b;
        }
        sb_barrier();
    }
    if (lid == 0) out[sb_group_id(0)] = red[0];
}

/* Margin cls of row sb_global_id(0) += the value of the leaf it reaches. */
SB_KERNEL void k_add_tree(SB_GLOBAL const sb_k_bnode *tree, SB_GLOBAL const sb_u8 *bins, int stride,
                         SB_GLOBAL float *margin, sb_i64 n, int K, int cls) {
    const sb_i64 r = sb_global_id(0);
    if (r >= n) return;
    SB_GLOBAL float *m = margin + r * K + cls;
    *m = *m + tree[sb_k_walk_bins(tree, bins + r * stride, 1)].value;
}

/* Prediction (sb_opencl_predict): row sb_global_id(0)'s margins by every
 * tree in training's order (sb_k_margins), then finished per kind. */
SB_KERNEL void k_predict(SB_GLOBAL const sb_k_pnode *nodes, SB_GLOBAL const int *start, int ntrees, int K,
                        int objective, SB_GLOBAL const float *base, SB_GLOBAL const float *x, sb_i64 n, int ncols,
                        int kind, int per_row, SB_GLOBAL float *margins, SB_GLOBAL float *out) {
    const sb_i64 r = sb_global_id(0);
    if (r >= n) return;
    sb_k_margins(nodes, start, ntrees, K, base, x + r * ncols, margins + r * K);
    sb_k_finish_row(objective, kind, K, margins + r * K, out + r * per_row);
}

/* pred_leaf (src/models/explain.c): row sb_global_id(0)'s leaf number in every
 * tree (sb_k_leaves). */
SB_KERNEL void k_predict_leaf(SB_GLOBAL const sb_k_pnode *nodes, SB_GLOBAL const int *start,
                             SB_GLOBAL const int *leafno, int ntrees, SB_GLOBAL const float *x, sb_i64 n, int ncols,
                             SB_GLOBAL int *out) {
    const sb_i64 r = sb_global_id(0);
    if (r >= n) return;
    sb_k_leaves(nodes, start, leafno, ntrees, x + r * ncols, out + r * ntrees);
}

/* pred_contrib (src/models/explain.c): row r0 + sb_global_id(0) of a batch of
 * nb rows, TreeSHAP over every tree (sb_k_contrib_row) with its own scratch
 * (levels x cap path elements, levels frames). */
SB_KERNEL void k_predict_contrib(SB_GLOBAL const sb_k_pnode *nodes, SB_GLOBAL const float *cover,
                                SB_GLOBAL const int *start, int ntrees, int K, int F, SB_GLOBAL const float *ev,
                                SB_GLOBAL const float *x, sb_i64 r0, sb_i64 nb, int ncols, SB_GLOBAL float *out,
                                SB_GLOBAL sb_k_shap_elem *path, SB_GLOBAL sb_k_shap_frame *frames, int levels,
                                int cap) {
    const sb_i64 i = sb_global_id(0);
    if (i >= nb) return;
    const sb_i64 r = r0 + i;
    sb_k_contrib_row(nodes, cover, start, ntrees, K, F, ev, x + r * ncols, out + r * (sb_i64)K * ((sb_i64)F + 1),
                     path + i * (sb_i64)levels * cap, frames + i * (sb_i64)levels, cap);
}
