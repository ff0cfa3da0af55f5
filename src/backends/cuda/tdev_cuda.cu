/*
 * tdev_cuda.cu: the "cuda" tree device (src/backends/tdev.h) on one NVIDIA GPU.
 *
 * The arithmetic is the kernel bodies of src/kernels/ (gradients, quantization,
 * split scan and total order, row direction, tree walk), compiled by nvcc under
 * the profile's flags (-fmad=false -ftz=false -prec-div=true -prec-sqrt=true,
 * tools/cuda-compile-check.sh). What this file adds is data movement that
 * cannot move a bit:
 * - histograms are integer sums: per block in shared memory with 64-bit integer
 *   atomics (a bin's gradient sum, and its hessian sum with the row count packed
 *   above bit 48, exact for a block's at most 2^15 rows of hessians below 2^30),
 *   then added into the node's global histogram with 64-bit integer atomics;
 * - maxima of |g| and h for the quantization scale: integer atomicMax on the
 *   bits of non-negative floats, whose order is the floats' order;
 * - the best split of a node: a block reduction under the total order, which
 *   orders every pair of candidates, so any reduction tree gives the same one;
 * - the partition is a stable scan-and-scatter of row indices.
 * No float atomic, no libdevice math, no float reduction in thread order.
 *
 * Layout on the device: bins row-major (a row's features contiguous, stride a
 * multiple of 4, so a gather of one row reads one or two sectors), margins
 * row-major (n x K), gradients class-major, histogram slots of `total` bins.
 */
extern "C" {
#include "core/internal.h"
}
#include "math/sb_math.h"
#if defined(SB_CUDA_SABOTAGE_LIBDEVICE_EXP)
/* Separating arm for rule 3: CUDA's expf in the softmax (multiclass) instead
 * of the profile's exp. Defined after sb_math.h, before the kernel bodies. */
#define sb_expf(x) expf(x)
#endif
#include "kernels/tree.h"
#include "kernels/quantize.h"
extern "C" {
#include "backends/tdev.h"
}
#include <cuda_runtime.h>
#include "backends/cuda/cuda_common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SB_CUDA_FLAGS
#define SB_CUDA_FLAGS "unknown"
#endif

#define THREADS 256
#define PART_TILE 2048    /* rows per partition block: 8 per thread */
#define PART_PER_THREAD (PART_TILE / THREADS)
#define HIST_TILE_MAX 16384 /* rows per histogram block at most (< 2^16: the count fits above bit 48) */
#define HIST_TILE_MIN 1024  /* and at least: each block flushes its bins with global atomics */
#define HIST_SMEM_ENTRIES 4096 /* bins per histogram block: 64 KiB of shared memory */
#define HIST_GROUP_FEATURES 1024 /* features per histogram block at most */
#define HC_SHIFT 48

typedef unsigned long long u64;

typedef struct fgroup { /* features [f0, f1) whose bins are entries [e0, e1) */
    int32_t f0, f1, e0, e1;
} fgroup;

/* SAMEBITS_CUDA_TIMING=1: each operation is timed with CUDA events (and so
 * synchronized), and the totals are printed to stderr at close. For finding
 * where a tree's time goes; it changes no result. */
enum { T_GRAD, T_QUANT, T_ROWS, T_PART, T_HIST, T_SUB, T_BEST, T_READ, T_TREE, T_N };
static const char *const k_tnames[T_N] = {"gradients", "quantize", "set_rows", "partition", "histograms",
                                          "subtract", "split search", "read", "add_tree"};

struct sb_tdev {
    int timing;
    cudaEvent_t ev0, ev1;
    double tms[T_N];
    long tcalls[T_N];
    int64_t n;
    int32_t nf, stride, total, K, objective, ngroups;
    int32_t hist_smem;   /* bytes of shared memory a histogram block needs (its group's bins) */
    int32_t sms;         /* streaming multiprocessors */
    uint8_t *bins;
    int32_t *nbins, *hoff;
    float *label, *weight, *margin, *g, *h;
    int32_t *gq, *hq, *rows, *tmp;
    uint8_t *mask;
    u64 *slots;          /* nslots x total x 3 (g, h, c as two's complement int64) */
    int32_t nslots;
    unsigned *maxbits;   /* 2K */
    fgroup *groups;
    /* per-call scratch, grown as needed */
    void *scratch;
    size_t scratch_cap;
    sb_k_bnode *tree;
    int32_t tree_cap;
    sb_k_split *best;
    int32_t best_cap;
};

/* ---- errors ---- */

/* sb_cuda_fail, CUDA_CK and CUDA_CK_LAUNCH: cuda_common.h */

static float u2f_host(unsigned u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static unsigned blocks_for(int64_t n, int per_block) {
    int64_t b = (n + per_block - 1) / per_block;
    return (unsigned)(b < 1 ? 1 : b);
}

/* Scratch of at least bytes on the device (contents not kept). */
static sb_status scratch(sb_tdev *d, size_t bytes, void **out) {
    sb_status st = sb_cuda_ensure(&d->scratch, &d->scratch_cap, bytes, "scratch");
    *out = d->scratch;
    return st;
}

static void t_begin(sb_tdev *d) {
    if (d->timing) cudaEventRecord(d->ev0);
}

static void t_end(sb_tdev *d, int k) {
    if (!d->timing) return;
    float ms = 0.0f;
    cudaEventRecord(d->ev1);
    cudaEventSynchronize(d->ev1);
    cudaEventElapsedTime(&ms, d->ev0, d->ev1);
    d->tms[k] += ms;
    d->tcalls[k]++;
}

/* ---- kernels ---- */

__global__ void k_transpose(const uint8_t *colmajor, int64_t n, int32_t nf, int32_t stride, uint8_t *rowmajor) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n * nf; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t f = i / n, r = i - f * n;
        rowmajor[r * stride + f] = colmajor[i];
    }
}

__global__ void k_fill(float *a, int64_t n, float v) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        a[i] = v;
}

__global__ void k_iota(int32_t *a, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        a[i] = (int32_t)i;
}

/* Gradients of one-margin objectives (regression, binary). */
__global__ void k_grad1(int32_t objective, const float *margin, const float *label, const float *weight, float *g,
                        float *h, int64_t n) {
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < n; r += (int64_t)gridDim.x * blockDim.x) {
        float prob[1];
        sb_k_row_gradients(objective, 1, margin + r, label[r], weight[r], g + r, h + r, n, prob);
    }
}

/* Softmax gradients: K margins a row, K floats of per-thread scratch. */
__global__ void k_gradk(int32_t K, const float *margin, const float *label, const float *weight, float *g, float *h,
                        int64_t n) {
    float prob[SB_TDEV_MAX_CLASS];
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < n; r += (int64_t)gridDim.x * blockDim.x)
        sb_k_row_gradients(SB_K_OBJ_MULTICLASS, K, margin + r * K, label[r], weight[r], g + r, h + r, n, prob);
}

/* maxbits[2c], [2c + 1]: the bits of the largest |g| and h of class c = blockIdx.y.
 * Only values > 0 compete (NaN and signed zeros never do, as on the CPU),
 * and positive floats order as their bits. */
__global__ void k_maxabs(const float *g, const float *h, int64_t n, unsigned *maxbits) {
    const int c = blockIdx.y;
    unsigned mg = 0, mh = 0;
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < n; r += (int64_t)gridDim.x * blockDim.x) {
        float a = sb_u2f(sb_f2u(g[c * n + r]) & 0x7FFFFFFFu), b = h[c * n + r];
        if (a > 0.0f && sb_f2u(a) > mg) mg = sb_f2u(a);
        if (b > 0.0f && sb_f2u(b) > mh) mh = sb_f2u(b);
    }
    __shared__ unsigned sg[THREADS], sh[THREADS];
    sg[threadIdx.x] = mg;
    sh[threadIdx.x] = mh;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) {
            sg[threadIdx.x] = max(sg[threadIdx.x], sg[threadIdx.x + s]);
            sh[threadIdx.x] = max(sh[threadIdx.x], sh[threadIdx.x + s]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicMax(&maxbits[2 * c], sg[0]);
        atomicMax(&maxbits[2 * c + 1], sh[0]);
    }
}

__global__ void k_quantize(const float *g, const float *h, int64_t n, float gs, float hs, int32_t *gq, int32_t *hq) {
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < n; r += (int64_t)gridDim.x * blockDim.x) {
        gq[r] = sb_round_half_even_i32(g[r] * gs);
        hq[r] = sb_round_half_even_i32(h[r] * hs);
    }
}

/* The segment a tile belongs to: tile_start[] ascending, tile_start[nseg] = all tiles. */
__device__ int find_seg(const int32_t *tile_start, int nseg, int32_t tile) {
    int lo = 0, hi = nseg - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (tile_start[mid] <= tile) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Exclusive prefix sum of v over the block's threads (THREADS of them); total in *sum. */
__device__ int32_t block_scan(int32_t v, int32_t *sum) {
    __shared__ int32_t s[THREADS];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int off = 1; off < THREADS; off <<= 1) {
        int32_t x = (int)threadIdx.x >= off ? s[threadIdx.x - off] : 0;
        __syncthreads();
        s[threadIdx.x] += x;
        __syncthreads();
    }
    int32_t incl = s[threadIdx.x];
    *sum = s[THREADS - 1];
    __syncthreads();
    return incl - v;
}

/* Partition, pass 1: the left rows of each tile. Thread t owns tile rows
 * [t * 8, t * 8 + 8), so a thread's rows and the block's threads are both in
 * row order (the scatter below keeps it: a stable partition). */
__global__ void k_part_count(const sb_tdev_seg *segs, const int32_t *tile_start, int nseg, const int32_t *rows,
                             const uint8_t *bins, int32_t stride, int32_t *tile_left) {
    const int32_t tile = blockIdx.x;
    const int j = find_seg(tile_start, nseg, tile);
    const sb_tdev_seg s = segs[j];
    const int64_t t0 = s.begin + (int64_t)(tile - tile_start[j]) * PART_TILE;
    int32_t cnt = 0;
    for (int k = 0; k < PART_PER_THREAD; k++) {
        int64_t i = t0 + (int64_t)threadIdx.x * PART_PER_THREAD + k;
        if (i < s.end) cnt += sb_k_goes_left(bins[(int64_t)rows[i] * stride + s.feature], s.split_bin, s.default_left);
    }
    int32_t total;
    block_scan(cnt, &total);
    if (threadIdx.x == 0) tile_left[tile] = total;
}

/* Pass 2: per segment (one block each), the tiles' left counts become
 * exclusive prefixes; seg_left[j] gets the segment's left total. */
__global__ void k_part_scan(const int32_t *tile_start, int32_t *tile_left, int32_t *seg_left) {
    const int j = blockIdx.x;
    const int32_t a = tile_start[j], b = tile_start[j + 1];
    int32_t carry = 0;
    for (int32_t base = a; base < b; base += THREADS) {
        int32_t i = base + threadIdx.x;
        int32_t v = i < b ? tile_left[i] : 0, sum;
        int32_t ex = block_scan(v, &sum);
        if (i < b) tile_left[i] = carry + ex;
        carry += sum;
    }
    if (threadIdx.x == 0) seg_left[j] = carry;
}

/* Pass 3: each row to its place in tmp. */
__global__ void k_part_scatter(const sb_tdev_seg *segs, const int32_t *tile_start, int nseg, const int32_t *rows,
                               const uint8_t *bins, int32_t stride, const int32_t *tile_left, const int32_t *seg_left,
                               int32_t *tmp) {
    const int32_t tile = blockIdx.x;
    const int j = find_seg(tile_start, nseg, tile);
    const sb_tdev_seg s = segs[j];
    const int64_t off = (int64_t)(tile - tile_start[j]) * PART_TILE; /* tile's first row, within the segment */
    const int64_t t0 = s.begin + off;
    int32_t r[PART_PER_THREAD];
    int8_t left[PART_PER_THREAD];
    int32_t cnt = 0;
    for (int k = 0; k < PART_PER_THREAD; k++) {
        int64_t i = t0 + (int64_t)threadIdx.x * PART_PER_THREAD + k;
        left[k] = -1;
        if (i < s.end) {
            r[k] = rows[i];
            left[k] = (int8_t)sb_k_goes_left(bins[(int64_t)r[k] * stride + s.feature], s.split_bin, s.default_left);
            cnt += left[k];
        }
    }
    int32_t total;
    int32_t lbefore = block_scan(cnt, &total); /* left rows of this tile before this thread's */
    const int64_t first_row_of_thread = off + (int64_t)threadIdx.x * PART_PER_THREAD; /* within the segment */
    int64_t lpos = s.begin + tile_left[tile] + lbefore;
    /* right rows before this thread's in the segment: rows before it minus left rows before it */
    int64_t rpos = s.begin + seg_left[j] + (first_row_of_thread - (tile_left[tile] + lbefore));
    for (int k = 0; k < PART_PER_THREAD; k++) {
        if (left[k] < 0) break;
        if (left[k]) tmp[lpos++] = r[k];
        else tmp[rpos++] = r[k];
    }
}

__global__ void k_part_copy(const sb_tdev_seg *segs, const int32_t *tile_start, int nseg, const int32_t *tmp,
                            int32_t *rows) {
    const int32_t tile = blockIdx.x;
    const int j = find_seg(tile_start, nseg, tile);
    const sb_tdev_seg s = segs[j];
    const int64_t t0 = s.begin + (int64_t)(tile - tile_start[j]) * PART_TILE;
    for (int k = threadIdx.x; k < PART_TILE; k += THREADS) {
        int64_t i = t0 + k;
        if (i < s.end) rows[i] = tmp[i];
    }
}

__global__ void k_zero_slots(const sb_tdev_hjob *jobs, u64 *slots, int32_t total) {
    u64 *h = slots + (int64_t)jobs[blockIdx.y].slot * total * 3;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (int64_t)total * 3;
         i += (int64_t)gridDim.x * blockDim.x)
        h[i] = 0;
}

/* One tile of one job's rows (at most HIST_TILE) for one feature group. */
__global__ void k_hist(const sb_tdev_hjob *jobs, const int32_t *tile_start, int njobs, int32_t tile_rows,
                       const fgroup *groups,
                       const int32_t *rows, const uint8_t *bins, int32_t stride, const int32_t *gq, const int32_t *hq,
                       const int32_t *hoff, const uint8_t *mask, u64 *slots, int32_t total) {
    extern __shared__ u64 smem[]; /* g[entries], hc[entries] */
#if defined(SB_CUDA_SABOTAGE_FLOAT_ATOMIC)
    /* Separating arm for rule 4: gradient sums as float atomics, the usual GPU
     * histogram; the rounding now depends on the order threads arrive in. */
    float *sgf = (float *)smem;
#endif
    const int32_t tile = blockIdx.x;
    const int j = find_seg(tile_start, njobs, tile);
    const sb_tdev_hjob job = jobs[j];
    const fgroup grp = groups[blockIdx.y];
    const int32_t ne = grp.e1 - grp.e0;
#if !defined(SB_CUDA_SABOTAGE_FLOAT_ATOMIC)
    u64 *sg = smem;
#endif
    u64 *shc = smem + ne;
    __shared__ int32_t base[HIST_GROUP_FEATURES]; /* per feature of the group: its first entry, or -1 */
    for (int32_t f = grp.f0 + threadIdx.x; f < grp.f1; f += THREADS)
        base[f - grp.f0] = mask[f] ? hoff[f] - grp.e0 : -1;
    for (int32_t i = threadIdx.x; i < 2 * ne; i += THREADS) smem[i] = 0;
    __syncthreads();
    const int64_t b = job.begin + (int64_t)(tile - tile_start[j]) * tile_rows;
    const int64_t e = b + tile_rows < job.end ? b + tile_rows : job.end;
    const int32_t nfg = grp.f1 - grp.f0;
#if defined(SB_CUDA_SABOTAGE_FLOAT_ATOMIC)
    for (int64_t i = b + threadIdx.x; i < e; i += THREADS) {
        const int32_t r = rows[i];
        const u64 hc = (u64)(int64_t)hq[r] + ((u64)1 << HC_SHIFT);
        const uint32_t *w = (const uint32_t *)(bins + (int64_t)r * stride + grp.f0);
        for (int32_t q = 0; q < nfg; q += 4) {
            const uint32_t word = w[q >> 2];
            for (int k = 0; k < 4; k++) {
                if (q + k < nfg && base[q + k] >= 0) {
                    const int32_t at = base[q + k] + (int32_t)((word >> (8 * k)) & 0xFFu);
                    atomicAdd(&sgf[at], (float)gq[r]);
                    atomicAdd(&shc[at], hc);
                }
            }
        }
    }
#else
    /* Warp aggregation: the lanes of a warp whose rows fall in the same bin
     * (common: runs of equal values, features with few values) add their
     * values first, exactly (a gradient is split into 16-bit halves so that
     * 32 of each fit an int), and one lane adds the group's sums. Every loop
     * here is uniform over the warp, so the full mask is valid. */
    const unsigned lane = threadIdx.x & 31;
    for (int64_t i0 = b; i0 < e; i0 += THREADS) {
        const int64_t i = i0 + threadIdx.x;
        const bool valid = i < e;
        const int32_t r = valid ? rows[i] : 0;
        const int32_t gv = valid ? gq[r] : 0, hv = valid ? hq[r] : 0;
        const int32_t glo = gv & 0xFFFF, ghi = gv >> 16, hlo = hv & 0xFFFF, hhi = hv >> 16;
        const uint32_t *w = (const uint32_t *)(bins + (int64_t)r * stride + grp.f0);
        for (int32_t q = 0; q < nfg; q += 4) {
            const uint32_t word = valid ? w[q >> 2] : 0u;
#pragma unroll
            for (int k = 0; k < 4; k++) {
                if (q + k < nfg && base[q + k] >= 0) {
                    const int32_t at = base[q + k] + (int32_t)((word >> (8 * k)) & 0xFFu);
                    const unsigned peers = __match_any_sync(0xFFFFFFFFu, valid ? (unsigned)at : 0xFFFFFFFFu);
                    const int sglo = __reduce_add_sync(peers, glo), sghi = __reduce_add_sync(peers, ghi);
                    const int shlo = __reduce_add_sync(peers, hlo), shhi = __reduce_add_sync(peers, hhi);
                    if (valid && lane == (unsigned)(__ffs(peers) - 1)) {
                        const int64_t G = (int64_t)sghi * 65536 + sglo, H = (int64_t)shhi * 65536 + shlo;
                        atomicAdd(&sg[at], (u64)G);
                        atomicAdd(&shc[at], (u64)H + ((u64)__popc(peers) << HC_SHIFT));
                    }
                }
            }
        }
    }
#endif
    __syncthreads();
    u64 *out = slots + (int64_t)job.slot * total * 3;
    for (int32_t i = threadIdx.x; i < ne; i += THREADS) {
        const u64 hc = shc[i];
        if (hc == 0) continue; /* no rows: the count is zero, and so are the sums */
        const u64 low = hc & (((u64)1 << HC_SHIFT) - 1);
        const int64_t h = low >= ((u64)1 << (HC_SHIFT - 1)) ? (int64_t)low - ((int64_t)1 << HC_SHIFT) : (int64_t)low;
        const u64 c = (hc - (u64)h) >> HC_SHIFT;
        const int64_t at = (int64_t)(grp.e0 + i) * 3;
#if defined(SB_CUDA_SABOTAGE_FLOAT_ATOMIC)
        atomicAdd(&out[at], (u64)(int64_t)sgf[i]);
#else
        atomicAdd(&out[at], sg[i]);
#endif
        atomicAdd(&out[at + 1], (u64)h);
        atomicAdd(&out[at + 2], c);
    }
}

__global__ void k_subtract(const sb_tdev_sub *subs, u64 *slots, int32_t total) {
    const sb_tdev_sub s = subs[blockIdx.y];
    u64 *a = slots + (int64_t)s.large * total * 3;
    const u64 *b = slots + (int64_t)s.small * total * 3;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (int64_t)total * 3;
         i += (int64_t)gridDim.x * blockDim.x)
        a[i] -= b[i]; /* two's complement: exact int64 subtraction */
}

/* The best split of node blockIdx.x. Each warp takes a feature at a time; its
 * lanes take runs of consecutive bins, sum them, and a warp scan (exact int64
 * sums) gives each lane the cumulative sums before its run, from which it
 * walks its bins with the kernel's per-bin step (sb_k_split_at). Then a block
 * reduction under the total order. */
__global__ void k_best(const sb_tdev_node *nodes, sb_k_split_rules rules, const u64 *slots, int32_t total,
                       const int32_t *hoff, const int32_t *nbins, const uint8_t *mask, int32_t nf, sb_k_split *out) {
    const sb_tdev_node q = nodes[blockIdx.x];
    const sb_k_hbin *hs = (const sb_k_hbin *)(slots + (int64_t)q.slot * total * 3);
    const float parent = sb_k_node_score(q.G, q.H, &rules);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    sb_k_split best;
    memset(&best, 0, sizeof best);
    for (int32_t f = warp; f < nf; f += THREADS / 32) {
        if (!mask[f]) continue; /* the same for the whole warp */
        const sb_k_hbin *h = hs + hoff[f];
        const int32_t nb = nbins[f], per = (nb + 31) / 32;
        const int32_t t0 = 1 + lane * per, t1 = t0 + per <= nb + 1 ? t0 + per : nb + 1;
        long long lg = 0, lh = 0, lc = 0;
        for (int32_t t = t0; t < t1; t++) {
            lg += h[t].g;
            lh += h[t].h;
            lc += h[t].c;
        }
        long long ig = lg, ih = lh, ic = lc; /* inclusive warp scan */
        for (int off = 1; off < 32; off <<= 1) {
            long long xg = __shfl_up_sync(0xFFFFFFFFu, ig, off), xh = __shfl_up_sync(0xFFFFFFFFu, ih, off),
                      xc = __shfl_up_sync(0xFFFFFFFFu, ic, off);
            if (lane >= off) {
                ig += xg;
                ih += xh;
                ic += xc;
            }
        }
        int64_t ag = ig - lg, ah = ih - lh, ac = ic - lc;
        for (int32_t t = t0; t < t1; t++) {
            ag += h[t].g;
            ah += h[t].h;
            ac += h[t].c;
            sb_k_split_at(&rules, q.G, q.H, q.C, parent, f, t, nb, h[t].c, ag, ah, ac, h[0].g, h[0].h, h[0].c, &best);
        }
    }
    __shared__ sb_k_split s[THREADS];
    s[threadIdx.x] = best;
    __syncthreads();
    for (int k = THREADS / 2; k > 0; k >>= 1) {
        if ((int)threadIdx.x < k && sb_k_split_better(&s[threadIdx.x + k], &s[threadIdx.x]))
            s[threadIdx.x] = s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

__global__ void k_add_tree(const sb_k_bnode *tree, const uint8_t *bins, int32_t stride, float *margin, int64_t n,
                           int32_t K, int32_t cls) {
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < n; r += (int64_t)gridDim.x * blockDim.x) {
        float *m = &margin[r * K + cls];
        *m = *m + tree[sb_k_walk_bins(tree, bins + r * stride, 1)].value;
    }
}

/* ---- operations ---- */

static const unsigned GRID_CAP = 132 * 16; /* enough blocks for any grid-stride loop */

static unsigned grid_for(int64_t n) {
    unsigned b = blocks_for(n, THREADS);
    return b < GRID_CAP ? b : GRID_CAP;
}

static void cu_close(sb_tdev *d) {
    if (!d) return;
    if (d->timing) {
        double total = 0.0;
        for (int k = 0; k < T_N; k++) total += d->tms[k];
        for (int k = 0; k < T_N; k++)
            fprintf(stderr, "cuda timing: %-13s %9.1f ms in %7ld calls (%4.1f%%)\n", k_tnames[k], d->tms[k],
                    d->tcalls[k], total > 0 ? 100.0 * d->tms[k] / total : 0.0);
        fprintf(stderr, "cuda timing: %-13s %9.1f ms\n", "all", total);
        cudaEventDestroy(d->ev0);
        cudaEventDestroy(d->ev1);
    }
    void *ptrs[] = {d->bins, d->nbins, d->hoff, d->label, d->weight, d->margin, d->g, d->h, d->gq, d->hq,
                    d->rows, d->tmp, d->mask, d->slots, d->maxbits, d->groups, d->scratch, d->tree, d->best};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) cudaFree(ptrs[i]);
    sb_free(d);
}

static sb_status cu_open_inner(const sb_tdev_setup *s, sb_tdev *d) {
    sb_status gpu = sb_cuda_require_gpu();
    if (gpu != SB_OK) return gpu;
    const int64_t n = s->n;
    const size_t nn = (size_t)(n ? n : 1), K = (size_t)s->K;
    const char *tv = getenv("SAMEBITS_CUDA_TIMING");
    if (tv && tv[0] == '1') {
        CUDA_CK(cudaEventCreate(&d->ev0), "timing");
        CUDA_CK(cudaEventCreate(&d->ev1), "timing");
        d->timing = 1;
    }
    d->n = n;
    d->nf = s->nf;
    d->stride = (s->nf + 3) & ~3;
    d->total = s->total;
    d->K = s->K;
    d->objective = s->objective;
    CUDA_CK(cudaMalloc(&d->bins, nn * (size_t)d->stride), "bins");
    CUDA_CK(cudaMemset(d->bins, 0, nn * (size_t)d->stride), "bins");
    CUDA_CK(cudaMalloc(&d->nbins, sizeof(int32_t) * (size_t)s->nf), "nbins");
    CUDA_CK(cudaMalloc(&d->hoff, sizeof(int32_t) * (size_t)s->nf), "hoff");
    CUDA_CK(cudaMalloc(&d->label, sizeof(float) * nn), "labels");
    CUDA_CK(cudaMalloc(&d->weight, sizeof(float) * nn), "weights");
    CUDA_CK(cudaMalloc(&d->margin, sizeof(float) * nn * K), "margins");
    CUDA_CK(cudaMalloc(&d->g, sizeof(float) * nn * K), "gradients");
    CUDA_CK(cudaMalloc(&d->h, sizeof(float) * nn * K), "hessians");
    CUDA_CK(cudaMalloc(&d->gq, sizeof(int32_t) * nn), "quantized gradients");
    CUDA_CK(cudaMalloc(&d->hq, sizeof(int32_t) * nn), "quantized hessians");
    CUDA_CK(cudaMalloc(&d->rows, sizeof(int32_t) * nn), "rows");
    CUDA_CK(cudaMalloc(&d->tmp, sizeof(int32_t) * nn), "rows");
    CUDA_CK(cudaMalloc(&d->mask, (size_t)s->nf), "mask");
    CUDA_CK(cudaMalloc(&d->maxbits, sizeof(unsigned) * 2 * K), "maxima");
    /* bins: column-major in, row-major on the device */
    void *tmp = NULL;
    sb_status st = scratch(d, nn * (size_t)s->nf, &tmp);
    if (st != SB_OK) return st;
    CUDA_CK(cudaMemcpy(tmp, s->binned, (size_t)n * (size_t)s->nf, cudaMemcpyHostToDevice), "bins");
    k_transpose<<<grid_for(n * s->nf), THREADS>>>((const uint8_t *)tmp, n, s->nf, d->stride, d->bins);
    CUDA_CK_LAUNCH("transpose");
    CUDA_CK(cudaDeviceSynchronize(), "transpose");
    cudaFree(d->scratch); /* n x nf bytes no longer needed */
    d->scratch = NULL;
    d->scratch_cap = 0;
    CUDA_CK(cudaMemcpy(d->nbins, s->nbins, sizeof(int32_t) * (size_t)s->nf, cudaMemcpyHostToDevice), "nbins");
    CUDA_CK(cudaMemcpy(d->hoff, s->hoff, sizeof(int32_t) * (size_t)s->nf, cudaMemcpyHostToDevice), "hoff");
    CUDA_CK(cudaMemcpy(d->label, s->label, sizeof(float) * (size_t)n, cudaMemcpyHostToDevice), "labels");
    if (s->weight) {
        CUDA_CK(cudaMemcpy(d->weight, s->weight, sizeof(float) * (size_t)n, cudaMemcpyHostToDevice), "weights");
    } else {
        k_fill<<<grid_for(n), THREADS>>>(d->weight, n, 1.0f);
        CUDA_CK_LAUNCH("weights");
    }
    k_fill<<<grid_for(n * s->K), THREADS>>>(d->margin, n * s->K, s->base);
    CUDA_CK_LAUNCH("margins");
    CUDA_CK(cudaMemset(d->mask, 1, (size_t)s->nf), "mask");
    /* feature groups: runs of 4 features (a row's bins are read 4 at a time)
     * whose bins fit one block's shared memory */
    fgroup *gs = (fgroup *)sb_malloc(sizeof(fgroup) * (size_t)(s->nf / 4 + 1));
    if (!gs) return sb_fail(SB_ERR_OUT_OF_MEMORY, "cuda: out of memory");
    int32_t ng = 0;
    for (int32_t f = 0; f < s->nf;) {
        fgroup g = {f, f, s->hoff[f], s->hoff[f]};
        while (g.f1 < s->nf) {
            int32_t f1 = g.f1 + 4 < s->nf ? g.f1 + 4 : s->nf;
            int32_t e1 = s->hoff[f1 - 1] + s->nbins[f1 - 1] + 1;
            if (g.f1 > g.f0 && (e1 - g.e0 > HIST_SMEM_ENTRIES || f1 - g.f0 > HIST_GROUP_FEATURES)) break;
            g.f1 = f1;
            g.e1 = e1;
        }
        gs[ng++] = g;
        if (2 * (int32_t)sizeof(u64) * (g.e1 - g.e0) > d->hist_smem) d->hist_smem = 2 * (int32_t)sizeof(u64) * (g.e1 - g.e0);
        f = g.f1;
    }
    d->ngroups = ng;
    cudaError_t e = cudaMalloc(&d->groups, sizeof(fgroup) * (size_t)ng);
    if (e == cudaSuccess) e = cudaMemcpy(d->groups, gs, sizeof(fgroup) * (size_t)ng, cudaMemcpyHostToDevice);
    sb_free(gs);
    CUDA_CK(e, "feature groups");
    int dev = 0;
    CUDA_CK(cudaGetDevice(&dev), "device");
    CUDA_CK(cudaDeviceGetAttribute(&d->sms, cudaDevAttrMultiProcessorCount, dev), "device");
    CUDA_CK(cudaFuncSetAttribute(k_hist, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)(2 * sizeof(u64) * HIST_SMEM_ENTRIES)),
       "histogram shared memory");
    CUDA_CK(cudaDeviceSynchronize(), "open");
    return SB_OK;
}

static sb_status cu_open(const sb_tdev_setup *s, sb_tdev **out) {
    *out = NULL;
    if (s->nf < 1) return sb_fail(SB_ERR_INVALID_INPUT, "cuda: no features");
    sb_tdev *d = (sb_tdev *)sb_calloc(1, sizeof *d);
    if (!d) return sb_fail(SB_ERR_OUT_OF_MEMORY, "cuda: out of memory");
    sb_status st = cu_open_inner(s, d);
    if (st != SB_OK) {
        cu_close(d);
        return st;
    }
    *out = d;
    return SB_OK;
}

static sb_status cu_gradients_x(sb_tdev *d, float *maxabs) {
    if (d->objective == SB_K_OBJ_MULTICLASS)
        k_gradk<<<grid_for(d->n), THREADS>>>(d->K, d->margin, d->label, d->weight, d->g, d->h, d->n);
    else
        k_grad1<<<grid_for(d->n), THREADS>>>(d->objective, d->margin, d->label, d->weight, d->g, d->h, d->n);
    CUDA_CK_LAUNCH("gradients");
    CUDA_CK(cudaMemset(d->maxbits, 0, sizeof(unsigned) * 2 * (size_t)d->K), "maxima");
    dim3 grid(grid_for(d->n) < 264 ? grid_for(d->n) : 264, (unsigned)d->K);
    k_maxabs<<<grid, THREADS>>>(d->g, d->h, d->n, d->maxbits);
    CUDA_CK_LAUNCH("maxima");
    unsigned *bits = (unsigned *)sb_malloc(sizeof(unsigned) * 2 * (size_t)d->K);
    if (!bits) return sb_fail(SB_ERR_OUT_OF_MEMORY, "cuda: out of memory");
    cudaError_t e = cudaMemcpy(bits, d->maxbits, sizeof(unsigned) * 2 * (size_t)d->K, cudaMemcpyDeviceToHost);
    for (int32_t i = 0; e == cudaSuccess && i < 2 * d->K; i++) maxabs[i] = u2f_host(bits[i]);
    sb_free(bits);
    CUDA_CK(e, "maxima");
    return SB_OK;
}

static sb_status cu_quantize_x(sb_tdev *d, int32_t cls, float gs, float hs) {
    k_quantize<<<grid_for(d->n), THREADS>>>(d->g + (int64_t)cls * d->n, d->h + (int64_t)cls * d->n, d->n, gs, hs,
                                             d->gq, d->hq);
    CUDA_CK_LAUNCH("quantize");
    return SB_OK;
}

static sb_status cu_set_rows_x(sb_tdev *d, const int32_t *rows, int64_t nrows) {
    if (rows) {
        CUDA_CK(cudaMemcpy(d->rows, rows, sizeof(int32_t) * (size_t)nrows, cudaMemcpyHostToDevice), "rows");
    } else {
        k_iota<<<grid_for(d->n), THREADS>>>(d->rows, d->n);
        CUDA_CK_LAUNCH("rows");
    }
    return SB_OK;
}

static sb_status cu_set_mask(sb_tdev *d, const uint8_t *mask) {
    CUDA_CK(cudaMemcpy(d->mask, mask, (size_t)d->nf, cudaMemcpyHostToDevice), "mask");
    return SB_OK;
}

static sb_status cu_reserve(sb_tdev *d, int32_t nslots) {
    if (nslots <= d->nslots) return SB_OK;
    u64 *s = NULL;
    const size_t per = sizeof(u64) * 3 * (size_t)d->total;
    CUDA_CK(cudaMalloc(&s, per * (size_t)nslots), "histogram slots");
    if (d->nslots > 0) {
        cudaError_t e = cudaMemcpy(s, d->slots, per * (size_t)d->nslots, cudaMemcpyDeviceToDevice);
        if (e != cudaSuccess) {
            cudaFree(s);
            return sb_cuda_fail(e, "histogram slots");
        }
    }
    cudaFree(d->slots);
    d->slots = s;
    d->nslots = nslots;
    return SB_OK;
}

/* Uploads items and a tile table (tile_start[0..n], tiles of `tile` rows over
 * each item's [begin, end)) into scratch; returns the tile count. */
static sb_status upload_tiled(sb_tdev *d, const void *items, size_t item_size, int32_t nitems,
                              const int64_t *begins, const int64_t *ends, int64_t tile, int32_t extra_ints,
                              void **d_items, int32_t **d_tiles, int32_t **d_extra, int32_t *ntiles) {
    size_t ib = (item_size * (size_t)nitems + 15) & ~(size_t)15;
    size_t tb = sizeof(int32_t) * ((size_t)nitems + 1);
    int32_t *ts = (int32_t *)sb_malloc(tb);
    if (!ts) return sb_fail(SB_ERR_OUT_OF_MEMORY, "cuda: out of memory");
    int64_t acc = 0;
    for (int32_t i = 0; i < nitems; i++) {
        ts[i] = (int32_t)acc;
        acc += (ends[i] - begins[i] + tile - 1) / tile;
    }
    ts[nitems] = (int32_t)acc;
    *ntiles = (int32_t)acc;
    size_t eb = sizeof(int32_t) * (size_t)(extra_ints > 0 ? extra_ints : 0);
    void *buf = NULL;
    sb_status st = scratch(d, ib + ((tb + 15) & ~(size_t)15) + eb, &buf);
    if (st == SB_OK) {
        char *p = (char *)buf;
        cudaError_t e = cudaMemcpy(p, items, item_size * (size_t)nitems, cudaMemcpyHostToDevice);
        if (e == cudaSuccess) e = cudaMemcpy(p + ib, ts, tb, cudaMemcpyHostToDevice);
        if (e != cudaSuccess) st = sb_cuda_fail(e, "upload");
        *d_items = p;
        *d_tiles = (int32_t *)(p + ib);
        *d_extra = (int32_t *)(p + ib + ((tb + 15) & ~(size_t)15));
    }
    sb_free(ts);
    return st;
}

static sb_status cu_partition_x(sb_tdev *d, const sb_tdev_seg *segs, int32_t nseg) {
    int64_t *be = (int64_t *)sb_malloc(sizeof(int64_t) * 2 * (size_t)nseg);
    if (!be) return sb_fail(SB_ERR_OUT_OF_MEMORY, "cuda: out of memory");
    int64_t maxtiles = 0;
    for (int32_t i = 0; i < nseg; i++) {
        be[i] = segs[i].begin;
        be[nseg + i] = segs[i].end;
        maxtiles += (segs[i].end - segs[i].begin + PART_TILE - 1) / PART_TILE;
    }
    void *ds = NULL;
    int32_t *tiles = NULL, *extra = NULL, ntiles = 0;
    sb_status st = upload_tiled(d, segs, sizeof(sb_tdev_seg), nseg, be, be + nseg, PART_TILE,
                                (int32_t)maxtiles + nseg, &ds, &tiles, &extra, &ntiles);
    sb_free(be);
    if (st != SB_OK) return st;
    if (ntiles == 0) return SB_OK;
    int32_t *tile_left = extra, *seg_left = extra + ntiles;
    const sb_tdev_seg *dseg = (const sb_tdev_seg *)ds;
    k_part_count<<<ntiles, THREADS>>>(dseg, tiles, nseg, d->rows, d->bins, d->stride, tile_left);
    CUDA_CK_LAUNCH("partition count");
    k_part_scan<<<nseg, THREADS>>>(tiles, tile_left, seg_left);
    CUDA_CK_LAUNCH("partition scan");
    k_part_scatter<<<ntiles, THREADS>>>(dseg, tiles, nseg, d->rows, d->bins, d->stride, tile_left, seg_left, d->tmp);
    CUDA_CK_LAUNCH("partition scatter");
    k_part_copy<<<ntiles, THREADS>>>(dseg, tiles, nseg, d->tmp, d->rows);
    CUDA_CK_LAUNCH("partition copy");
    return SB_OK;
}

static sb_status cu_hist_x(sb_tdev *d, const sb_tdev_hjob *jobs, int32_t njobs) {
    int64_t *be = (int64_t *)sb_malloc(sizeof(int64_t) * 2 * (size_t)njobs);
    if (!be) return sb_fail(SB_ERR_OUT_OF_MEMORY, "cuda: out of memory");
    for (int32_t i = 0; i < njobs; i++) {
        be[i] = jobs[i].begin;
        be[njobs + i] = jobs[i].end;
    }
    /* Rows per block: enough blocks to fill the GPU (about 8 per SM over the
     * feature groups), within [HIST_TILE_MIN, HIST_TILE_MAX], a multiple of 256. */
    int64_t rows_all = 0;
    for (int32_t i = 0; i < njobs; i++) rows_all += jobs[i].end - jobs[i].begin;
    const int64_t want = (int64_t)d->sms * 8 / (d->ngroups > 0 ? d->ngroups : 1);
    int64_t tile = (rows_all + (want > 0 ? want : 1) - 1) / (want > 0 ? want : 1);
    tile = (tile + 255) / 256 * 256;
    if (tile < HIST_TILE_MIN) tile = HIST_TILE_MIN;
    if (tile > HIST_TILE_MAX) tile = HIST_TILE_MAX;
    void *dj = NULL;
    int32_t *tiles = NULL, *extra = NULL, ntiles = 0;
    sb_status st = upload_tiled(d, jobs, sizeof(sb_tdev_hjob), njobs, be, be + njobs, tile, 0, &dj, &tiles,
                                &extra, &ntiles);
    sb_free(be);
    if (st != SB_OK) return st;
    const sb_tdev_hjob *djobs = (const sb_tdev_hjob *)dj;
    dim3 zgrid(blocks_for((int64_t)d->total * 3, THREADS) < 64 ? blocks_for((int64_t)d->total * 3, THREADS) : 64,
               (unsigned)njobs);
    k_zero_slots<<<zgrid, THREADS>>>(djobs, d->slots, d->total);
    CUDA_CK_LAUNCH("histogram zero");
    if (ntiles == 0) return SB_OK;
    dim3 grid((unsigned)ntiles, (unsigned)d->ngroups);
    k_hist<<<grid, THREADS, (size_t)d->hist_smem>>>(djobs, tiles, njobs, (int32_t)tile, d->groups, d->rows, d->bins,
                                                                   d->stride, d->gq, d->hq, d->hoff, d->mask,
                                                                   d->slots, d->total);
    CUDA_CK_LAUNCH("histogram");
    return SB_OK;
}

static sb_status cu_subtract_x(sb_tdev *d, const sb_tdev_sub *subs, int32_t nsubs) {
    void *buf = NULL;
    sb_status st = scratch(d, sizeof(sb_tdev_sub) * (size_t)nsubs, &buf);
    if (st != SB_OK) return st;
    CUDA_CK(cudaMemcpy(buf, subs, sizeof(sb_tdev_sub) * (size_t)nsubs, cudaMemcpyHostToDevice), "subtract");
    dim3 grid(blocks_for((int64_t)d->total * 3, THREADS) < 64 ? blocks_for((int64_t)d->total * 3, THREADS) : 64,
              (unsigned)nsubs);
    k_subtract<<<grid, THREADS>>>((const sb_tdev_sub *)buf, d->slots, d->total);
    CUDA_CK_LAUNCH("subtract");
    return SB_OK;
}

static sb_status cu_best_x(sb_tdev *d, const sb_tdev_node *nodes, int32_t nnodes, const sb_k_split_rules *r,
                         sb_k_split *out) {
    if (nnodes > d->best_cap) {
        cudaFree(d->best);
        d->best = NULL;
        d->best_cap = 0;
        CUDA_CK(cudaMalloc(&d->best, sizeof(sb_k_split) * (size_t)nnodes), "splits");
        d->best_cap = nnodes;
    }
    void *buf = NULL;
    sb_status st = scratch(d, sizeof(sb_tdev_node) * (size_t)nnodes, &buf);
    if (st != SB_OK) return st;
    CUDA_CK(cudaMemcpy(buf, nodes, sizeof(sb_tdev_node) * (size_t)nnodes, cudaMemcpyHostToDevice), "nodes");
    k_best<<<(unsigned)nnodes, THREADS>>>((const sb_tdev_node *)buf, *r, d->slots, d->total, d->hoff, d->nbins,
                                          d->mask, d->nf, d->best);
    CUDA_CK_LAUNCH("split search");
    CUDA_CK(cudaMemcpy(out, d->best, sizeof(sb_k_split) * (size_t)nnodes, cudaMemcpyDeviceToHost), "splits");
    return SB_OK;
}

static sb_status cu_read_hist_x(sb_tdev *d, int32_t slot, int32_t first, int32_t count, sb_k_hbin *out) {
    CUDA_CK(cudaMemcpy(out, d->slots + ((int64_t)slot * d->total + first) * 3, sizeof(sb_k_hbin) * (size_t)count,
                  cudaMemcpyDeviceToHost),
       "histogram");
    return SB_OK;
}

static sb_status cu_add_tree_x(sb_tdev *d, const sb_k_bnode *nodes, int32_t nnodes, int32_t cls) {
    if (nnodes > d->tree_cap) {
        cudaFree(d->tree);
        d->tree = NULL;
        d->tree_cap = 0;
        CUDA_CK(cudaMalloc(&d->tree, sizeof(sb_k_bnode) * (size_t)nnodes * 2), "tree");
        d->tree_cap = nnodes * 2;
    }
    CUDA_CK(cudaMemcpy(d->tree, nodes, sizeof(sb_k_bnode) * (size_t)nnodes, cudaMemcpyHostToDevice), "tree");
    k_add_tree<<<grid_for(d->n), THREADS>>>(d->tree, d->bins, d->stride, d->margin, d->n, d->K, cls);
    CUDA_CK_LAUNCH("margins");
    return SB_OK;
}

static sb_status cu_read_quantized(sb_tdev *d, int32_t *gq, int32_t *hq) {
    CUDA_CK(cudaMemcpy(gq, d->gq, sizeof(int32_t) * (size_t)d->n, cudaMemcpyDeviceToHost), "quantized gradients");
    CUDA_CK(cudaMemcpy(hq, d->hq, sizeof(int32_t) * (size_t)d->n, cudaMemcpyDeviceToHost), "quantized hessians");
    return SB_OK;
}

static sb_status cu_read_margins(sb_tdev *d, float *m) {
    CUDA_CK(cudaMemcpy(m, d->margin, sizeof(float) * (size_t)d->n * (size_t)d->K, cudaMemcpyDeviceToHost), "margins");
    return SB_OK;
}

/* Host-computed gradients of class cls (the ranking objectives): uploaded as they are. */
static sb_status cu_set_gradients(sb_tdev *d, int32_t cls, const float *g, const float *h) {
    CUDA_CK(cudaMemcpy(d->g + (int64_t)cls * d->n, g, sizeof(float) * (size_t)d->n, cudaMemcpyHostToDevice), "gradients");
    CUDA_CK(cudaMemcpy(d->h + (int64_t)cls * d->n, h, sizeof(float) * (size_t)d->n, cudaMemcpyHostToDevice), "hessians");
    return SB_OK;
}

/* The operations, timed when asked (see SAMEBITS_CUDA_TIMING). */
static sb_status cu_gradients(sb_tdev *d, float *maxabs) {
    t_begin(d);
    sb_status st = cu_gradients_x(d, maxabs);
    t_end(d, T_GRAD);
    return st;
}

static sb_status cu_quantize(sb_tdev *d, int32_t cls, float gs, float hs) {
    t_begin(d);
    sb_status st = cu_quantize_x(d, cls, gs, hs);
    t_end(d, T_QUANT);
    return st;
}

static sb_status cu_set_rows(sb_tdev *d, const int32_t *rows, int64_t nrows) {
    t_begin(d);
    sb_status st = cu_set_rows_x(d, rows, nrows);
    t_end(d, T_ROWS);
    return st;
}

static sb_status cu_partition(sb_tdev *d, const sb_tdev_seg *segs, int32_t nseg) {
    t_begin(d);
    sb_status st = cu_partition_x(d, segs, nseg);
    t_end(d, T_PART);
    return st;
}

static sb_status cu_hist(sb_tdev *d, const sb_tdev_hjob *jobs, int32_t njobs) {
    t_begin(d);
    sb_status st = cu_hist_x(d, jobs, njobs);
    t_end(d, T_HIST);
    return st;
}

static sb_status cu_subtract(sb_tdev *d, const sb_tdev_sub *subs, int32_t nsubs) {
    t_begin(d);
    sb_status st = cu_subtract_x(d, subs, nsubs);
    t_end(d, T_SUB);
    return st;
}

static sb_status cu_best(sb_tdev *d, const sb_tdev_node *nodes, int32_t nnodes, const sb_k_split_rules *r,
                         sb_k_split *out) {
    t_begin(d);
    sb_status st = cu_best_x(d, nodes, nnodes, r, out);
    t_end(d, T_BEST);
    return st;
}

static sb_status cu_read_hist(sb_tdev *d, int32_t slot, int32_t first, int32_t count, sb_k_hbin *out) {
    t_begin(d);
    sb_status st = cu_read_hist_x(d, slot, first, count, out);
    t_end(d, T_READ);
    return st;
}

static sb_status cu_add_tree(sb_tdev *d, const sb_k_bnode *nodes, int32_t nnodes, int32_t cls) {
    t_begin(d);
    sb_status st = cu_add_tree_x(d, nodes, nnodes, cls);
    t_end(d, T_TREE);
    return st;
}

static const sb_tdev_ops k_cuda_ops = {
    "cuda",       cu_open,     cu_close,     cu_gradients, cu_quantize, cu_set_rows,
    cu_set_mask,  cu_reserve,  cu_partition, cu_hist,      cu_subtract, cu_best,
    cu_read_hist, cu_add_tree, cu_read_quantized, cu_read_margins, cu_set_gradients,
};

extern "C" const sb_tdev_ops *sb_tdev_cuda_ops(void) { return &k_cuda_ops; }

/* ---- prediction ---- */

__global__ void k_predict(const sb_k_pnode *nodes, const int32_t *start, int32_t ntrees, int32_t K,
                          int32_t objective, const float *base, const float *x, int64_t n, int32_t ncols,
                          int32_t kind, int32_t per_row, float *margins, float *out) {
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < n; r += (int64_t)gridDim.x * blockDim.x) {
        sb_k_margins(nodes, start, ntrees, K, base, x + r * ncols, margins + r * K);
        sb_k_finish_row(objective, kind, K, margins + r * K, out + r * per_row);
    }
}

static sb_status predict_inner(const sb_k_pnode *nodes, int32_t nn, const int32_t *start, int32_t ntrees, int32_t K,
                               int32_t objective, const float *base, const float *x, int64_t n, int32_t ncols,
                               int32_t kind, int32_t per_row, float *out, void **p) {
    sb_status gpu = sb_cuda_require_gpu();
    if (gpu != SB_OK) return gpu;
    const size_t nb = sizeof(sb_k_pnode) * (size_t)(nn > 0 ? nn : 1), sb = sizeof(int32_t) * (size_t)(ntrees > 0 ? ntrees : 1);
    const size_t xb = sizeof(float) * (size_t)n * (size_t)ncols, mb = sizeof(float) * (size_t)n * (size_t)K;
    const size_t ob = sizeof(float) * (size_t)n * (size_t)per_row;
    CUDA_CK(cudaMalloc(&p[0], nb), "trees");
    CUDA_CK(cudaMalloc(&p[1], sb), "trees");
    CUDA_CK(cudaMalloc(&p[2], sizeof(float) * (size_t)K), "base");
    CUDA_CK(cudaMalloc(&p[3], xb ? xb : 4), "features");
    CUDA_CK(cudaMalloc(&p[4], mb ? mb : 4), "margins");
    CUDA_CK(cudaMalloc(&p[5], ob ? ob : 4), "predictions");
    if (nn > 0) CUDA_CK(cudaMemcpy(p[0], nodes, sizeof(sb_k_pnode) * (size_t)nn, cudaMemcpyHostToDevice), "trees");
    if (ntrees > 0) CUDA_CK(cudaMemcpy(p[1], start, sb, cudaMemcpyHostToDevice), "trees");
    CUDA_CK(cudaMemcpy(p[2], base, sizeof(float) * (size_t)K, cudaMemcpyHostToDevice), "base");
    if (xb) CUDA_CK(cudaMemcpy(p[3], x, xb, cudaMemcpyHostToDevice), "features");
    if (n > 0) {
        k_predict<<<grid_for(n), THREADS>>>((const sb_k_pnode *)p[0], (const int32_t *)p[1], ntrees, K, objective,
                                            (const float *)p[2], (const float *)p[3], n, ncols, kind, per_row,
                                            (float *)p[4], (float *)p[5]);
        CUDA_CK_LAUNCH("predict");
    }
    if (ob) CUDA_CK(cudaMemcpy(out, p[5], ob, cudaMemcpyDeviceToHost), "predictions");
    return SB_OK;
}

extern "C" sb_status sb_cuda_predict(const sb_k_pnode *nodes, int32_t nn, const int32_t *start, int32_t ntrees, int32_t K,
                                     int32_t objective, const float *base, const float *x, int64_t n, int32_t ncols,
                                     int32_t kind, int32_t per_row, float *out) {
    void *p[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    sb_status st = predict_inner(nodes, nn, start, ntrees, K, objective, base, x, n, ncols, kind, per_row, out, p);
    for (int i = 0; i < 6; i++) cudaFree(p[i]);
    return st;
}

extern "C" void sb_tdev_cuda_describe(char *buf, size_t cap) {
    int count = 0, drv = 0, rt = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    if (e != cudaSuccess || count == 0) {
        snprintf(buf, cap, "built (runtime %d.%d, flags %s); no usable GPU: %s", rt / 1000, (rt % 1000) / 10,
                 SB_CUDA_FLAGS, e != cudaSuccess ? cudaGetErrorString(e) : "no device");
        return;
    }
    cudaDeviceProp p;
    int dev = 0;
    cudaGetDevice(&dev);
    cudaGetDeviceProperties(&p, dev);
    snprintf(buf, cap, "%s, compute capability %d.%d, %.1f GiB, %d GPU(s); driver API %d.%d, runtime %d.%d; flags %s",
             p.name, p.major, p.minor, (double)p.totalGlobalMem / 1073741824.0, count, drv / 1000, (drv % 1000) / 10,
             rt / 1000, (rt % 1000) / 10, SB_CUDA_FLAGS);
}
