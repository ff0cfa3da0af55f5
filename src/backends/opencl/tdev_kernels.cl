/*
 * tdev_kernels.cl: the OpenCL C 1.2 kernels of the "opencl" tree device
 * (tdev_opencl.c). The arithmetic is the kernel bodies of src/kernels/, the
 * same the CPU and CUDA compile; these kernels only decide which work-item
 * handles which row, node or histogram entry, and move integers:
 * - histograms: per work-group in local memory (a tile of a job's rows by a
 *   group of features), then into the node's slot in global memory, both by
 *   64-bit integer atom_add (cl_khr_int64_base_atomics covers __local and
 *   __global); or, where local memory is too small, straight into the slot.
 *   Integer sums in any order are exact.
 * - |g| and h maxima: 32-bit atomic_max on the bits of positive floats, whose
 *   order is the floats' order.
 * - best split: one work-group per node, teams of work-items scan a feature
 *   each, a work-item a run of its bins (a local scan gives the sums before
 *   the run), then a local reduction under sb_k_split_better, a total order,
 *   so any cut and any reduction tree pick the same candidate.
 * - partition: a stable scan-and-scatter spread over many work-groups (tiles
 *   of a segment), as in tdev_cuda.cu.
 * tools/embed_cl.sh inlines the #includes and the library carries the result
 * (build/gen/tdev_cl_src.c). Built with -cl-std=CL1.2
 * -cl-fp32-correctly-rounded-divide-sqrt and -D OCL_WG=<work-group size>;
 * compat_opencl.h sets FP_CONTRACT OFF. Arms (SAMEBITS_OPENCL_ARM):
 * -DSB_SABOTAGE_CONTRACT, -DSB_OCL_ARM_FLOAT_ATOMIC, -cl-mad-enable,
 * -cl-fast-relaxed-math.
 */
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#include "../../kernels/tree.h"
#include "../../kernels/quantize.h"

#ifndef OCL_WG
#error "OCL_WG (the work-group size, a power of two) is set by the host"
#endif
#define OCL_MAX_CLASS 1024 /* SB_TDEV_MAX_CLASS */

/* The host's structs of src/backends/tdev.h, with the same layouts (the host
 * checks their sizes). */
typedef struct {
    long begin, end;
    int feature, split_bin, default_left, pad_;
} ocl_seg;
typedef struct {
    long begin, end;
    int slot, pad_;
} ocl_hjob;
typedef struct {
    int large, small;
} ocl_sub;
typedef struct {
    long G, H, C;
    int slot, pad_;
} ocl_node;

__kernel void k_fill(__global float *a, long n, float v) {
    long i = get_global_id(0);
    if (i < n) a[i] = v;
}

__kernel void k_iota(__global int *a, long n) {
    long i = get_global_id(0);
    if (i < n) a[i] = (int)i;
}

/* Gradients of one-margin objectives (regression, binary). */
__kernel void k_grad1(int objective, __global const float *margin, __global const float *label,
                      __global const float *weight, __global float *g, __global float *h, long n) {
    long r = get_global_id(0);
    if (r >= n) return;
    float prob[1];
    sb_k_row_gradients(objective, 1, margin + r, label[r], weight[r], g + r, h + r, n, prob);
}

/* Softmax gradients: K margins a row, K floats of private scratch. */
__kernel void k_gradk(int K, __global const float *margin, __global const float *label,
                      __global const float *weight, __global float *g, __global float *h, long n) {
    long r = get_global_id(0);
    if (r >= n) return;
    float prob[OCL_MAX_CLASS];
    sb_k_row_gradients(SB_K_OBJ_MULTICLASS, K, margin + r * K, label[r], weight[r], g + r, h + r, n, prob);
}

/* maxbits[2c], [2c + 1]: the bits of the largest |g| and h of class c =
 * get_global_id(1); only values > 0 compete (NaN and zeros never do, as on
 * the CPU). */
__kernel void k_maxabs(__global const float *g, __global const float *h, long n, __global uint *maxbits) {
    __local uint sg[OCL_WG], sh[OCL_WG];
    const long c = get_global_id(1);
    const int lid = (int)get_local_id(0);
    uint mg = 0u, mh = 0u;
    for (long r = get_global_id(0); r < n; r += (long)get_global_size(0)) {
        float a = sb_u2f(sb_f2u(g[c * n + r]) & 0x7FFFFFFFu), b = h[c * n + r];
        if (a > 0.0f && sb_f2u(a) > mg) mg = sb_f2u(a);
        if (b > 0.0f && sb_f2u(b) > mh) mh = sb_f2u(b);
    }
    sg[lid] = mg;
    sh[lid] = mh;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = OCL_WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            sg[lid] = max(sg[lid], sg[lid + s]);
            sh[lid] = max(sh[lid], sh[lid + s]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        atomic_max(&maxbits[2 * c], sg[0]);
        atomic_max(&maxbits[2 * c + 1], sh[0]);
    }
}

/* Quantized gradients of the class whose values start at off. */
__kernel void k_quantize(__global const float *g, __global const float *h, long off, long n, float gs, float hs,
                         __global int *gq, __global int *hq) {
    long r = get_global_id(0);
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
#define OCL_PART_TILE (OCL_WG * OCL_PART_PER)

/* The item whose run of tiles holds tile t: the last j in [0, n) with
 * start[j] <= t (start ascending, start[0] = 0; items without tiles share
 * their start with the next item and are never the last). */
SB_FN int ocl_find(__global const int *start, int n, int t) {
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (start[mid] <= t) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Exclusive prefix sum of v over the work-group's OCL_WG work-items, in
 * scan[OCL_WG] (local); *sum gets the group's total. Every work-item of the
 * group must call it (it holds barriers); scan is free again on return. */
SB_FN int ocl_group_scan(__local int *scan, int v, int *sum) {
    const int lid = (int)get_local_id(0);
    scan[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = 1; off < OCL_WG; off <<= 1) {
        int x = lid >= off ? scan[lid - off] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        scan[lid] += x;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const int incl = scan[lid];
    *sum = scan[OCL_WG - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    return incl - v;
}

/* Pass 1: tile_left[t] := the left rows of tile t = get_group_id(0). A count
 * is order-free, so the rows are read in coalesced strides. */
__kernel void k_part_count(__global const ocl_seg *segs, __global const int *tile_start, int nseg,
                           __global const int *rows, __global const uchar *bins, int stride,
                           __global int *tile_left) {
    __local int scan[OCL_WG];
    const int tile = (int)get_group_id(0), lid = (int)get_local_id(0);
    const int j = ocl_find(tile_start, nseg, tile);
    const ocl_seg s = segs[j];
    const long t0 = s.begin + (long)(tile - tile_start[j]) * OCL_PART_TILE;
    const long t1 = t0 + OCL_PART_TILE < s.end ? t0 + OCL_PART_TILE : s.end;
    int cnt = 0;
    for (long i = t0 + lid; i < t1; i += OCL_WG)
        cnt += sb_k_goes_left(bins[(long)rows[i] * stride + s.feature], s.split_bin, s.default_left);
    int total;
    ocl_group_scan(scan, cnt, &total);
    if (lid == 0) tile_left[tile] = total;
}

/* Pass 2, one work-group per segment j = get_group_id(0): its tiles' counts
 * become exclusive prefixes (left rows of the segment before each tile), and
 * seg_left[j] := the segment's left rows. */
__kernel void k_part_scan(__global const int *tile_start, __global int *tile_left, __global int *seg_left) {
    __local int scan[OCL_WG];
    const int j = (int)get_group_id(0), lid = (int)get_local_id(0);
    const int a = tile_start[j], b = tile_start[j + 1];
    int carry = 0;
    for (int base = a; base < b; base += OCL_WG) {
        const int i = base + lid;
        int sum;
        const int v = i < b ? tile_left[i] : 0;
        const int ex = ocl_group_scan(scan, v, &sum);
        if (i < b) tile_left[i] = carry + ex;
        carry += sum;
    }
    if (lid == 0) seg_left[j] = carry;
}

/* Pass 3: the rows of tile get_group_id(0) to their places in tmp. The tile
 * is staged in local memory (coalesced reads), each work-item flags its
 * OCL_PART_PER rows, a group scan gives the left rows before each
 * work-item's, the rows are rearranged in stage (the tile's left rows in
 * order, then its right rows in order) and written out coalesced: the left
 * run after the segment's left rows of earlier tiles, the right run after
 * all its left rows and its right rows of earlier tiles. */
__kernel void k_part_scatter(__global const ocl_seg *segs, __global const int *tile_start, int nseg,
                             __global const int *rows, __global const uchar *bins, int stride,
                             __global const int *tile_left, __global const int *seg_left, __global int *tmp) {
    __local int scan[OCL_WG];
    __local int stage[OCL_PART_TILE];
    const int tile = (int)get_group_id(0), lid = (int)get_local_id(0);
    const int j = ocl_find(tile_start, nseg, tile);
    const ocl_seg s = segs[j];
    const long off = (long)(tile - tile_start[j]) * OCL_PART_TILE; /* the tile's first row, within the segment */
    const long t0 = s.begin + off;
    const int nt = (int)(s.end - t0 < OCL_PART_TILE ? s.end - t0 : OCL_PART_TILE);
    for (int q = lid; q < nt; q += OCL_WG) stage[q] = rows[t0 + q];
    barrier(CLK_LOCAL_MEM_FENCE);
    int r[OCL_PART_PER];
    int flags = 0, cnt = 0;
    for (int k = 0; k < OCL_PART_PER; k++) {
        const int q = lid * OCL_PART_PER + k;
        r[k] = 0;
        if (q < nt) {
            r[k] = stage[q];
            const int f = sb_k_goes_left(bins[(long)r[k] * stride + s.feature], s.split_bin, s.default_left);
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
    barrier(CLK_LOCAL_MEM_FENCE);
    const long lbase = s.begin + tile_left[tile];
    const long rbase = s.begin + seg_left[j] + (off - tile_left[tile]);
    for (int q = lid; q < nt; q += OCL_WG) tmp[q < nleft ? lbase + q : rbase + (q - nleft)] = stage[q];
}

/* Pass 4: rows := tmp over tile get_group_id(0). */
__kernel void k_part_copy(__global const ocl_seg *segs, __global const int *tile_start, int nseg,
                          __global const int *tmp, __global int *rows) {
    const int tile = (int)get_group_id(0), lid = (int)get_local_id(0);
    const int j = ocl_find(tile_start, nseg, tile);
    const ocl_seg s = segs[j];
    const long t0 = s.begin + (long)(tile - tile_start[j]) * OCL_PART_TILE;
    const long t1 = t0 + OCL_PART_TILE < s.end ? t0 + OCL_PART_TILE : s.end;
    for (long i = t0 + lid; i < t1; i += OCL_WG) rows[i] = tmp[i];
}

/* Slots of jobs get_global_id(1) := 0. */
__kernel void k_zero_slots(__global const ocl_hjob *jobs, __global long *slots, int total) {
    const long i = get_global_id(0);
    if (i < (long)total * 3) slots[(long)jobs[get_global_id(1)].slot * total * 3 + i] = 0;
}

/* The fallback where local memory cannot hold a feature group (and
 * SAMEBITS_OPENCL_HIST=global): one work-item per row of every job (jstart:
 * each job's first item, jstart[njobs]: all); its gradient, hessian and count
 * go into the bin of each usable feature, by 64-bit integer atomics. */
__kernel void k_hist(__global const ocl_hjob *jobs, __global const long *jstart, int njobs, __global const int *rows,
                     __global const uchar *bins, int stride, int nf, __global const int *gq,
                     __global const int *hq, __global const int *hoff, __global const uchar *mask,
                     __global long *slots, int total) {
    const long i = get_global_id(0);
    if (i >= jstart[njobs]) return;
    int lo = 0, hi = njobs - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (jstart[mid] <= i) lo = mid;
        else hi = mid - 1;
    }
    const ocl_hjob jb = jobs[lo];
    const int r = rows[jb.begin + (i - jstart[lo])];
    __global long *hs = slots + (long)jb.slot * total * 3;
    __global const uchar *b = bins + (long)r * stride;
    const long g = gq[r], h = hq[r];
    for (int f = 0; f < nf; f++) {
        if (!mask[f]) continue; /* unusable features' bins stay zero */
        __global long *e = hs + (long)(hoff[f] + b[f]) * 3;
#if defined(SB_OCL_ARM_FLOAT_ATOMIC)
        /* Separating arm for rule 4: the gradient sum as a float atomic (a
         * compare-and-swap loop): rounded, in arrival order. */
        long seen, old = *e;
        do {
            seen = old;
            old = atom_cmpxchg(e, seen, (long)((float)seen + (float)g));
        } while (old != seen);
#else
        atom_add(e, g);
#endif
        atom_add(e + 1, h);
        atom_add(e + 2, 1L);
    }
}

/* ---- histograms in local memory ----
 * Work-group (t, q) = (get_group_id(0), get_group_id(1)) sums tile t of its
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

__kernel void k_hist_local(__global const ocl_hjob *jobs, __global const int *tile_start, int njobs, int tile_rows,
                           __global const ocl_fgroup *groups, __global const int *rows, __global const uchar *bins,
                           int stride, __global const int *gq, __global const int *hq, __global const int *hoff,
                           __global const uchar *mask, __global long *slots, int total, __local ulong *acc) {
    __local int base[OCL_HIST_GROUP_FEATURES]; /* per feature of the group: its first entry, or -1 (unusable) */
    const int tile = (int)get_group_id(0), lid = (int)get_local_id(0);
    const int j = ocl_find(tile_start, njobs, tile);
    const ocl_hjob job = jobs[j];
    const ocl_fgroup grp = groups[get_group_id(1)];
    const int ne = grp.e1 - grp.e0, nfg = grp.f1 - grp.f0;
    __local ulong *shc = acc + ne; /* acc: g[ne], then hc[ne] */
#if defined(SB_OCL_ARM_FLOAT_ATOMIC)
    __local uint *sgf = (__local uint *)acc; /* the arm: float gradient sums in g's place */
#else
    __local ulong *sg = acc;
#endif
    for (int f = lid; f < nfg; f += OCL_WG) base[f] = mask[grp.f0 + f] ? hoff[grp.f0 + f] - grp.e0 : -1;
    for (int i = lid; i < 2 * ne; i += OCL_WG) acc[i] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const long b = job.begin + (long)(tile - tile_start[j]) * tile_rows;
    const long e = b + tile_rows < job.end ? b + tile_rows : job.end;
    for (long i = b + lid; i < e; i += OCL_WG) {
        const int r = rows[i];
        const long g = gq[r];
        const ulong hc = (ulong)(long)hq[r] + ((ulong)1 << OCL_HC_SHIFT);
        __global const uchar *rb = bins + (long)r * stride + grp.f0; /* stride and f0: multiples of 4 */
        for (int q = 0; q < nfg; q += 4) {
            const uchar4 w = vload4(0, rb + q);
            const uchar wb[4] = {w.s0, w.s1, w.s2, w.s3};
            for (int k = 0; k < 4; k++) {
                if (q + k >= nfg || base[q + k] < 0) continue;
                const int at = base[q + k] + wb[k];
#if defined(SB_OCL_ARM_FLOAT_ATOMIC)
                /* Separating arm for rule 4: the gradient sum as a float
                 * compare-and-swap loop: rounded, in arrival order. */
                uint seen, old = sgf[at];
                do {
                    seen = old;
                    old = atomic_cmpxchg(&sgf[at], seen, as_uint(as_float(seen) + (float)g));
                } while (old != seen);
#else
                atom_add(&sg[at], (ulong)g);
#endif
                atom_add(&shc[at], hc);
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    __global long *out = slots + (long)job.slot * total * 3;
    for (int i = lid; i < ne; i += OCL_WG) {
        const ulong hc = shc[i];
        if (hc == 0) continue; /* no rows: the count is zero, and so are the sums */
        const ulong low = hc & (((ulong)1 << OCL_HC_SHIFT) - 1);
        const long h = low >= ((ulong)1 << (OCL_HC_SHIFT - 1)) ? (long)low - ((long)1 << OCL_HC_SHIFT) : (long)low;
        const long c = (long)((hc - (ulong)h) >> OCL_HC_SHIFT);
        __global long *at = out + (long)(grp.e0 + i) * 3;
#if defined(SB_OCL_ARM_FLOAT_ATOMIC)
        /* the arm again: the tile's float sum into the node's as a float too */
        const float part = as_float(sgf[i]);
        long seen, old = *at;
        do {
            seen = old;
            old = atom_cmpxchg(at, seen, (long)((float)seen + part));
        } while (old != seen);
#else
        atom_add(at, (long)sg[i]);
#endif
        atom_add(at + 1, h);
        atom_add(at + 2, c);
    }
}

/* Slot large -= slot small, for sub get_global_id(1). */
__kernel void k_subtract(__global const ocl_sub *subs, __global long *slots, int total) {
    const long i = get_global_id(0);
    if (i >= (long)total * 3) return;
    const ocl_sub s = subs[get_global_id(1)];
    slots[(long)s.large * total * 3 + i] -= slots[(long)s.small * total * 3 + i];
}

/* The best split of node get_group_id(0). The work-group is cut into teams
 * of OCL_TEAM work-items; per round, team k takes feature f0 + k, each of its
 * work-items a run of consecutive bins: it sums its run, an inclusive scan
 * over the team (exact 64-bit sums in local memory) gives the cumulative sums
 * before the run, and it walks its bins with the kernel's per-bin step
 * (sb_k_split_at), as sb_k_split_scan would at those bins (as tdev_cuda.cu
 * does with warp shuffles). Then the work-group reduces under the total
 * order, so any cut and any reduction tree pick the same candidate. */
#define OCL_TEAM (OCL_WG < 32 ? OCL_WG : 32)
#define OCL_TEAMS (OCL_WG / OCL_TEAM)
__kernel void k_best(__global const ocl_node *nodes, __global const sb_k_split_rules *rules,
                     __global const long *slots, int total, __global const int *hoff, __global const int *nbins,
                     __global const uchar *mask, int nf, __global sb_k_split *out) {
    __local sb_k_split red[OCL_WG];
    __local long sg[OCL_WG], sh[OCL_WG], sc[OCL_WG];
    const ocl_node q = nodes[get_group_id(0)];
    const sb_k_split_rules r = rules[0];
    const int lid = (int)get_local_id(0), team = lid / OCL_TEAM, lane = lid % OCL_TEAM;
    const float parent = sb_k_node_score(q.G, q.H, &r);
    __global const sb_k_hbin *hs = (__global const sb_k_hbin *)(slots + (long)q.slot * total * 3);
    sb_k_split best = {0};
    for (int f0 = 0; f0 < nf; f0 += OCL_TEAMS) { /* the same rounds for every work-item: barriers inside */
        const int f = f0 + team;
        const int on = f < nf && mask[f];
        __global const sb_k_hbin *h = hs;
        int nb = 0, t0 = 1, t1 = 1;
        long lg = 0, lh = 0, lc = 0;
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
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int off = 1; off < OCL_TEAM; off <<= 1) {
            const long xg = lane >= off ? sg[lid - off] : 0, xh = lane >= off ? sh[lid - off] : 0,
                       xc = lane >= off ? sc[lid - off] : 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            sg[lid] += xg;
            sh[lid] += xh;
            sc[lid] += xc;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (on) {
            long ag = sg[lid] - lg, ah = sh[lid] - lh, ac = sc[lid] - lc; /* bins 1 .. t0 - 1 */
            const long mg = h[0].g, mh = h[0].h, mc = h[0].c;
            for (int t = t0; t < t1; t++) {
                ag += h[t].g;
                ah += h[t].h;
                ac += h[t].c;
                sb_k_split_at(&r, q.G, q.H, q.C, parent, f, t, nb, h[t].c, ag, ah, ac, mg, mh, mc, &best);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* sg, sh, sc are rewritten next round */
    }
    red[lid] = best;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = OCL_WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            sb_k_split a = red[lid], b = red[lid + s];
            if (sb_k_split_better(&b, &a)) red[lid] = b;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) out[get_group_id(0)] = red[0];
}

/* Margin cls of row get_global_id(0) += the value of the leaf it reaches. */
__kernel void k_add_tree(__global const sb_k_bnode *tree, __global const uchar *bins, int stride,
                         __global float *margin, long n, int K, int cls) {
    const long r = get_global_id(0);
    if (r >= n) return;
    __global float *m = margin + r * K + cls;
    *m = *m + tree[sb_k_walk_bins(tree, bins + r * stride, 1)].value;
}

/* Prediction (sb_opencl_predict): row get_global_id(0)'s margins by every
 * tree in training's order (sb_k_margins), then finished per kind. */
__kernel void k_predict(__global const sb_k_pnode *nodes, __global const int *start, int ntrees, int K,
                        int objective, __global const float *base, __global const float *x, long n, int ncols,
                        int kind, int per_row, __global float *margins, __global float *out) {
    const long r = get_global_id(0);
    if (r >= n) return;
    sb_k_margins(nodes, start, ntrees, K, base, x + r * ncols, margins + r * K);
    sb_k_finish_row(objective, kind, K, margins + r * K, out + r * per_row);
}
