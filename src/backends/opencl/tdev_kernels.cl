/*
 * tdev_kernels.cl: the OpenCL C 1.2 kernels of the "opencl" tree device
 * (tdev_opencl.c). The arithmetic is the kernel bodies of src/kernels/, the
 * same the CPU and CUDA compile; these kernels only decide which work-item
 * handles which row, node or histogram entry, and move integers:
 * - histograms: 64-bit integer atom_add into the node's slot in global memory
 *   (cl_khr_int64_base_atomics). Integer sums in any order are exact.
 * - |g| and h maxima: 32-bit atomic_max on the bits of positive floats, whose
 *   order is the floats' order.
 * - best split: one work-group per node, each work-item scans whole features
 *   (sb_k_split_scan), then a local reduction under sb_k_split_better, a total
 *   order, so any reduction tree picks the same candidate.
 * - partition: one work-group per segment, a stable count-then-scatter.
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

/* Stable partition of segment get_group_id(0): its left rows are counted,
 * then chunks of OCL_WG rows are scattered in order, each work-item's place
 * from an exclusive scan of the chunk's left flags; tmp is copied back. */
__kernel void k_partition(__global const ocl_seg *segs, __global int *rows, __global const uchar *bins, int stride,
                          __global int *tmp) {
    __local int scan[OCL_WG];
    const ocl_seg s = segs[get_group_id(0)];
    const int lid = (int)get_local_id(0);
    int cnt = 0;
    for (long i = s.begin + lid; i < s.end; i += OCL_WG)
        cnt += sb_k_goes_left(bins[(long)rows[i] * stride + s.feature], s.split_bin, s.default_left);
    scan[lid] = cnt;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = OCL_WG / 2; h > 0; h >>= 1) {
        if (lid < h) scan[lid] += scan[lid + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const long nleft = scan[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    long lpos = s.begin, rpos = s.begin + nleft;
    for (long base = s.begin; base < s.end; base += OCL_WG) {
        const long i = base + lid;
        int r = 0, f = 0;
        if (i < s.end) {
            r = rows[i];
            f = sb_k_goes_left(bins[(long)r * stride + s.feature], s.split_bin, s.default_left);
        }
        scan[lid] = f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int off = 1; off < OCL_WG; off <<= 1) {
            int x = lid >= off ? scan[lid - off] : 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            scan[lid] += x;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        const int ex = scan[lid] - f, chunk_left = scan[OCL_WG - 1];
        const long chunk = s.end - base < OCL_WG ? s.end - base : OCL_WG;
        if (i < s.end) {
            if (f) tmp[lpos + ex] = r;
            else tmp[rpos + (lid - ex)] = r;
        }
        lpos += chunk_left;
        rpos += chunk - chunk_left;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    for (long i = s.begin + lid; i < s.end; i += OCL_WG) rows[i] = tmp[i];
}

/* Slots of jobs get_global_id(1) := 0. */
__kernel void k_zero_slots(__global const ocl_hjob *jobs, __global long *slots, int total) {
    const long i = get_global_id(0);
    if (i < (long)total * 3) slots[(long)jobs[get_global_id(1)].slot * total * 3 + i] = 0;
}

/* One work-item per row of every job (jstart: each job's first item,
 * jstart[njobs]: all): its gradient, hessian and count go into the bin of
 * each usable feature, by 64-bit integer atomics. */
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

/* Slot large -= slot small, for sub get_global_id(1). */
__kernel void k_subtract(__global const ocl_sub *subs, __global long *slots, int total) {
    const long i = get_global_id(0);
    if (i >= (long)total * 3) return;
    const ocl_sub s = subs[get_global_id(1)];
    slots[(long)s.large * total * 3 + i] -= slots[(long)s.small * total * 3 + i];
}

/* The best split of node get_group_id(0): work-item l scans features l,
 * l + OCL_WG, ... then the work-group reduces under the total order. */
__kernel void k_best(__global const ocl_node *nodes, __global const sb_k_split_rules *rules,
                     __global const long *slots, int total, __global const int *hoff, __global const int *nbins,
                     __global const uchar *mask, int nf, __global sb_k_split *out) {
    __local sb_k_split red[OCL_WG];
    const ocl_node q = nodes[get_group_id(0)];
    const sb_k_split_rules r = rules[0];
    const int lid = (int)get_local_id(0);
    const float parent = sb_k_node_score(q.G, q.H, &r);
    __global const sb_k_hbin *hs = (__global const sb_k_hbin *)(slots + (long)q.slot * total * 3);
    sb_k_split best = {0};
    for (int f = lid; f < nf; f += OCL_WG)
        if (mask[f]) sb_k_split_scan(hs + hoff[f], nbins[f], f, q.G, q.H, q.C, parent, &r, &best);
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
