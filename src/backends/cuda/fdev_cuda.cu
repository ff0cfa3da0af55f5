/*
 * fdev_cuda.cu: the "cuda" forest device (src/backends/fdev.h) on one NVIDIA GPU.
 *
 * The arithmetic is the kernel bodies of src/kernels/forest.h (the bootstrap
 * and feature draws, the small-node search, the cumulation, the candidate
 * rules, the scores and the total order), compiled by nvcc under the
 * profile's flags (-fmad=false -ftz=false -prec-div=true -prec-sqrt=true,
 * tools/cuda-compile-check.sh). What this file adds is data movement that
 * cannot move a bit:
 * - bootstrap counts, node sums and histograms are integer sums with 64-bit
 *   (32-bit for draw counts) integer atomics, per block in shared memory where
 *   a node's histograms fit, then into global memory; integer addition is
 *   exact and order-free;
 * - row lists (a tree's in-bag rows, a node's partition) are scattered
 *   through warp-aggregated integer counters, in an order that varies from run
 *   to run: no operation depends on the order of a node's rows;
 * - the best split of a node: a block (or warp) reduction under the total
 *   order, which orders every pair of candidates, so any reduction tree gives
 *   the same one.
 * No float atomic, no libdevice math, no float reduction in thread order.
 *
 * Layout: bins row-major (a row's features contiguous, stride a multiple of
 * 4: a node's drawn features of one row are one or two sectors); a batch's
 * row positions as (row, multiplicity) pairs in two int32 arrays; the
 * histograms of a chunk of nodes, each mtry x (maxnb + 1) x nv int64.
 */
extern "C" {
#include "core/internal.h"
}
#include "math/sb_math.h"
#include "kernels/tree.h"
#include "kernels/forest.h"
extern "C" {
#include "backends/fdev.h"
}
#include <cuda_runtime.h>
#include "backends/cuda/cuda_common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FT 256                 /* threads a block */
#define FHIST_TILE 8192        /* rows a histogram block at most */
#define FPART_TILE 4096        /* rows a partition / sums block at most */
#define FSMEM_MAX (160 * 1024) /* shared memory a histogram block may use */
#define FHIST_BUDGET ((size_t)4 << 30) /* histogram bytes a chunk of nodes may use */
#define FSMALL_CHUNK (1 << 22)         /* small nodes a launch (their draws: nf words each) */

typedef unsigned long long u64;

/* SAMEBITS_CUDA_TIMING=1: each operation is timed with CUDA events (and so
 * synchronized), and the totals are printed to stderr at close. For finding
 * where a forest's time goes; it changes no result. */
enum { FT_BEGIN, FT_SUMS, FT_SPLIT_UP, FT_SMALL, FT_HIST, FT_BEST, FT_SPLIT_DOWN, FT_PART, FT_ISO, FT_N };
static const char *const k_ftnames[FT_N] = {"bootstrap",    "root sums",     "split upload", "small nodes",
                                            "histograms",   "split search",  "split download", "partition",   "isolation split"};

struct sb_fdev {
    int timing;
    cudaEvent_t ev0, ev1;
    double tms[FT_N];
    long tcalls[FT_N];
    sb_fdev_setup s;     /* the host's copy (array pointers cleared) */
    int32_t stride, maxnb;
    uint8_t *bins;       /* n x stride */
    int32_t *value, *nbins;
    int32_t *rows, *mult, *wq, *trows, *tmult, *twq; /* positions: row, count, fixed-point weight */
    int64_t cap;
    int32_t *rwq;        /* n: every row's fixed-point weight (weighted, not balanced_subsample) */
    float *sw;           /* n: sample weights (balanced_subsample with sample weights) */
    int32_t *subwq;      /* balanced_subsample: batch x n, each tree's fixed-point weights */
    int64_t subwq_cap;
    int64_t *nk;         /* balanced_subsample: batch x K draw counts per class */
    float *cw;           /* batch x K class weights */
    uint32_t *wmax;      /* batch: the largest weight's bits */
    int32_t *wexp;       /* batch: the scales */
    u64 *bad;            /* 2 x batch: the first row of a weight not finite, of one vanishing */
    int64_t sub_cap;
    uint32_t *taken;     /* isolation: batch x ceil(n / 32) bits */
    int64_t taken_cap;
    int32_t *ilo, *ihi;  /* isolation: a chunk's nodes x nf bin ranges */
    int64_t irange_cap;
    int32_t *cnt;        /* batch x n draw counts */
    int64_t cnt_cap;
    void *up;            /* uploads (nodes, tiles, sums), grown as needed */
    size_t up_cap;
    void *up2;           /* split's second upload (a chunk's large nodes and tiles) */
    size_t up2_cap;
    u64 *ctr;            /* counters and cursors */
    int64_t ctr_cap;
    int64_t *hist;       /* a chunk's histograms */
    size_t hist_cap;
    sb_k_fsplit *dsplit; /* results */
    int64_t *dlsum;
    int64_t res_cap;
    uint32_t *draws;     /* a chunk's nodes x nf */
    int32_t *feat;       /* a chunk's nodes x mtry */
    int64_t sel_cap;
};

/* ---- errors ---- */

/* sb_cuda_fail, CUDA_CK and CUDA_CK_LAUNCH: cuda_common.h */

static unsigned fgrid(int64_t n) {
    int64_t b = (n + FT - 1) / FT;
    if (b < 1) b = 1;
    return (unsigned)(b < 132 * 16 ? b : 132 * 16);
}

/* ---- device helpers ---- */

/* A slot from counter ctr[key] for each lane that wants one: the lanes of a
 * warp with the same key take consecutive slots with one atomic. Every lane
 * of the warp must call it (want says which take a slot). */
static __device__ long long kf_claim(u64 *ctr, int64_t key, bool want) {
    const unsigned lane = threadIdx.x & 31;
    const unsigned active = __ballot_sync(0xFFFFFFFFu, want);
    if (!want) return -1;
    const unsigned peers = __match_any_sync(active, (unsigned long long)key);
    const int leader = __ffs(peers) - 1;
    u64 base = 0;
    if ((int)lane == leader) base = atomicAdd(&ctr[key], (u64)__popc(peers));
    base = __shfl_sync(peers, base, leader);
    return (long long)(base + (u64)__popc(peers & ((1u << lane) - 1u)));
}

/* The item a tile belongs to: tile_start[] ascending over nitems + 1 entries. */
static __device__ int32_t kf_find(const int64_t *tile_start, int32_t nitems, int64_t tile) {
    int32_t lo = 0, hi = nitems - 1;
    while (lo < hi) {
        const int32_t mid = (lo + hi + 1) / 2;
        if (tile_start[mid] <= tile) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* v += a position's contribution, atomically: the integer additions of
 * sb_k_forest_put (count cnt, fixed-point weight wq when weighted), in any
 * order. */
static __device__ void kf_put_atomic(const sb_k_forest_rules &r, int64_t *v, int32_t value, int32_t cnt, int32_t wq) {
    const int64_t mult = r.weighted ? (int64_t)cnt * wq : (int64_t)cnt;
    if (r.criterion == SB_K_CRIT_SQUARED) {
        atomicAdd((u64 *)&v[0], (u64)mult);
        atomicAdd((u64 *)&v[1], (u64)(mult * value));
    } else {
        atomicAdd((u64 *)&v[value], (u64)mult);
    }
    if (r.weighted) atomicAdd((u64 *)&v[r.nv - 1], (u64)(int64_t)cnt);
}

/* ---- kernels ---- */

__global__ void kf_transpose(const uint8_t *colmajor, int64_t n, int32_t nf, int32_t stride, uint8_t *rowmajor) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n * nf; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t f = i / n, r = i - f * n;
        rowmajor[r * stride + f] = colmajor[i];
    }
}

__global__ void kf_fill(int32_t *a, int64_t n, int32_t v) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        a[i] = v;
}

/* Draw counts of trees t0 + i, i < nb: cnt[i * n + row] += 1 for each draw. */
__global__ void kf_boot(int32_t *cnt, int64_t n, int32_t nb, int32_t t0, u64 seed, int64_t ndraw) {
    for (int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; x < (int64_t)nb * ndraw;
         x += (int64_t)gridDim.x * blockDim.x) {
        const int32_t i = (int32_t)(x / ndraw);
        const int64_t q = x - (int64_t)i * ndraw;
        atomicAdd(&cnt[(int64_t)i * n + sb_k_forest_boot_row(seed, t0 + i, q, (sb_u32)n)], 1);
    }
}

/* The fixed-point weight of row r in tree i (x = i * n + r): every row's
 * (wrow), the tree's own (wtree, balanced_subsample), or 1 (unweighted). */
static __device__ int32_t kf_wq_of(const int32_t *wrow, const int32_t *wtree, int64_t x, int64_t r) {
    return wtree ? wtree[x] : wrow ? wrow[r] : 1;
}

/* Pass 1 (place = 0): ctr[i] += tree i's distinct rows of positive weight.
 * Pass 2 (place = 1): each such row to a slot from cursor ctr[i] (its tree's
 * first position plus those taken), with its count and fixed-point weight.
 * Loops are uniform over a warp (kf_claim). */
__global__ void kf_compact(const int32_t *cnt, int64_t n, int32_t nb, const int32_t *wrow, const int32_t *wtree,
                           u64 *ctr, int place, int32_t *rows, int32_t *mult, int32_t *wq) {
    const int64_t total = (int64_t)nb * n;
    for (int64_t base = blockIdx.x * (int64_t)blockDim.x; base < total; base += (int64_t)gridDim.x * blockDim.x) {
        const int64_t x = base + threadIdx.x;
        const int64_t i = x < total ? x / n : 0, r = x - i * n;
        const bool want = x < total && cnt[x] > 0 && kf_wq_of(wrow, wtree, x, r) > 0;
        const long long at = kf_claim(ctr, i, want);
        if (want && place) {
            rows[at] = (int32_t)r;
            mult[at] = cnt[x];
            wq[at] = kf_wq_of(wrow, wtree, x, r);
        }
    }
}

/* balanced_subsample, step 1: nk[i * K + class] += the draws of each row of
 * tree i (integer atomics). */
__global__ void kf_sub_counts(const int32_t *cnt, int64_t n, int32_t nb, int32_t K, const int32_t *value, int64_t *nk) {
    for (int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; x < (int64_t)nb * n;
         x += (int64_t)gridDim.x * blockDim.x)
        if (cnt[x] > 0) atomicAdd((u64 *)&nk[(x / n) * K + value[x % n]], (u64)(int64_t)cnt[x]);
}

/* Step 2, a thread a tree: its class weights (sb_k_forest_class_weight of its
 * draws, nt of them over kt classes drawn). */
__global__ void kf_sub_classes(const int64_t *nk, int32_t nb, int32_t K, float *cw) {
    const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nb) return;
    int64_t nt = 0;
    int32_t kt = 0;
    for (int32_t k = 0; k < K; k++) {
        nt += nk[(int64_t)i * K + k];
        kt += nk[(int64_t)i * K + k] > 0;
    }
    for (int32_t k = 0; k < K; k++) cw[(int64_t)i * K + k] = sb_k_forest_class_weight(nt, kt, nk[(int64_t)i * K + k]);
}

/* A drawn row's weight in tree i (sb_k_forest_row_weight). */
static __device__ float kf_sub_weight(const float *sw, const float *cw, int32_t K, const int32_t *value, int64_t i,
                                      int64_t r) {
    return sb_k_forest_row_weight(sw ? sw[r] : 1.0f, cw[i * K + value[r]]);
}

/* Step 3: each tree's largest weight of a drawn row (the bits of a weight >= 0
 * order as unsigned integers: an integer atomic max), and the first row
 * whose weight is not finite (bad[i], an integer atomic min). */
__global__ void kf_sub_max(const int32_t *cnt, int64_t n, int32_t nb, int32_t K, const int32_t *value, const float *sw,
                           const float *cw, uint32_t *wmax, u64 *bad) {
    for (int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; x < (int64_t)nb * n;
         x += (int64_t)gridDim.x * blockDim.x) {
        if (cnt[x] <= 0) continue;
        const int64_t i = x / n, r = x - i * n;
        const float w = kf_sub_weight(sw, cw, K, value, i, r);
        /* the largest by its bits: a positive float orders as its bits; zeros
         * (-0 included, whose bits would be the largest) cannot be the largest */
        if (w - w != 0.0f) atomicMin(&bad[i], (u64)r);
        else if (w > 0.0f) atomicMax(&wmax[i], sb_f2u(w));
    }
}

/* Step 4, a thread a tree: its scale (0 when every weight is zero). */
__global__ void kf_sub_scale(const uint32_t *wmax, int32_t nb, int32_t *wexp) {
    const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nb) return;
    const float mx = sb_u2f(wmax[i]);
    wexp[i] = mx > 0.0f ? sb_quantize_exponent(mx, SB_K_FOREST_W_LEVELS) : 0;
}

/* Step 5: each drawn row's fixed-point weight in its tree (0 for a row not
 * drawn), and the first row whose positive weight vanishes (bad[nb + i]). */
__global__ void kf_sub_fix(const int32_t *cnt, int64_t n, int32_t nb, int32_t K, const int32_t *value, const float *sw,
                           const float *cw, const int32_t *wexp, int32_t *wtree, u64 *bad) {
    for (int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; x < (int64_t)nb * n;
         x += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = x / n, r = x - i * n;
        int32_t q = 0;
        if (cnt[x] > 0) {
            const float w = kf_sub_weight(sw, cw, K, value, i, r);
            if (w - w == 0.0f) {
                q = sb_k_forest_weight_fixed(w, wexp[i]);
                if (q == 0 && w > 0.0f) atomicMin(&bad[nb + i], (u64)r);
            }
        }
        wtree[x] = q;
    }
}

/* Sums of node blockIdx.y's rows, one tile of them per block. */
__global__ void kf_sums(const sb_fdev_node *nodes, sb_k_forest_rules rules, const int32_t *rows, const int32_t *mult,
                        const int32_t *wq, const int32_t *value, int64_t *sums) {
    const int32_t nv = rules.nv;
    extern __shared__ int64_t acc[]; /* nv */
    const sb_fdev_node q = nodes[blockIdx.y];
    for (int32_t k = threadIdx.x; k < nv; k += FT) acc[k] = 0;
    __syncthreads();
    for (int64_t p = q.begin + blockIdx.x * (int64_t)FT + threadIdx.x; p < q.end; p += (int64_t)gridDim.x * FT)
        kf_put_atomic(rules, acc, value[rows[p]], mult[p], wq[p]);
    __syncthreads();
    for (int32_t k = threadIdx.x; k < nv; k += FT)
        if (acc[k] != 0) atomicAdd((u64 *)&sums[(int64_t)blockIdx.y * nv + k], (u64)acc[k]);
}

/* Small nodes, one warp each. The warp lists the node's drawn features in
 * order (feat + node * mtry), stages its rows in shared memory, then takes
 * its features FSG at a time: each feature's range (sb_k_forest_small_range,
 * one lane a feature), then every (feature, candidate row) pair of the group
 * spread over the lanes (sb_k_forest_small_candidate: the candidates are
 * independent and the best is kept under a total order, so this division
 * finds sb_k_forest_small_feature's best); the lanes' bests merged under the
 * same order, and the left child's sums from its rows. Large nodes are
 * kf_hist's and kf_best's: their warps do nothing. */
#define FSG 4 /* features a group */
__global__ void kf_small(const sb_fdev_node *nodes, const int64_t *tot, int32_t nnodes, sb_k_forest_rules rules,
                         u64 seed, int32_t extra, int32_t nf, int32_t mtry, const uint8_t *bins, int32_t stride,
                         const int32_t *rows, const int32_t *mult, const int32_t *wq, const int32_t *value,
                         uint32_t *draws, int32_t *feat, sb_k_fsplit *out, int64_t *lsum) {
    __shared__ sb_k_fsplit sh[FT];
    __shared__ int32_t s_row[FT / 32][SB_K_FOREST_SMALL_ROWS], s_val[FT / 32][SB_K_FOREST_SMALL_ROWS],
        s_mul[FT / 32][SB_K_FOREST_SMALL_ROWS], s_wq[FT / 32][SB_K_FOREST_SMALL_ROWS];
    __shared__ sb_u8 s_bin[FT / 32][FSG][SB_K_FOREST_SMALL_ROWS];
    __shared__ sb_i64 s_m[FT / 32][FSG][SB_K_FOREST_SMALL_NV];
    __shared__ int32_t s_lo[FT / 32][FSG], s_hi[FT / 32][FSG], s_ok[FT / 32][FSG];
    const int32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t node = (int64_t)blockIdx.x * (FT / 32) + warp;
    sb_k_fsplit best;
    memset(&best, 0, sizeof best);
    /* (uniform over the warp) */
    const bool mine = node < nnodes && nodes[node].end - nodes[node].begin <= SB_K_FOREST_SMALL_ROWS;
    if (mine) {
        const sb_fdev_node q = nodes[node];
        rules.min_w = q.min_w; /* the node's tree's */
        const int64_t *t = tot + node * rules.nv;
        uint32_t *dr = draws + node * nf;
        int32_t *fl = feat + node * mtry;
        for (int32_t j = lane; j < nf; j += 32) dr[j] = sb_k_forest_feature_draw(seed, q.key, j);
        __syncwarp();
        /* the drawn features, ascending */
        int32_t nsel = 0;
        for (int32_t base = 0; base < nf; base += 32) {
            const int32_t j = base + lane;
            const bool sel = j < nf && sb_k_forest_selected(dr, nf, mtry, j);
            const unsigned bal = __ballot_sync(0xFFFFFFFFu, sel);
            if (sel) fl[nsel + __popc(bal & ((1u << lane) - 1u))] = j;
            nsel += __popc(bal);
        }
        const int32_t cnt = (int32_t)(q.end - q.begin);
        for (int32_t i = lane; i < cnt; i += 32) {
            const int32_t r = rows[q.begin + i];
            s_row[warp][i] = r;
            s_val[warp][i] = value[r];
            s_mul[warp][i] = mult[q.begin + i];
            s_wq[warp][i] = wq[q.begin + i];
        }
        __syncwarp();
        const int32_t ncand = extra ? 1 : cnt;
        sb_i64 l[SB_K_FOREST_SMALL_NV];
        for (int32_t g0 = 0; g0 < nsel; g0 += FSG) {
            const int32_t gn = nsel - g0 < FSG ? nsel - g0 : FSG;
            for (int32_t x = lane; x < gn * cnt; x += 32) {
                const int32_t a = x / cnt, i = x - a * cnt;
                s_bin[warp][a][i] = bins[(int64_t)s_row[warp][i] * stride + fl[g0 + a]];
            }
            __syncwarp();
            if (lane < gn) {
                int32_t lo, hi;
                s_ok[warp][lane] = sb_k_forest_small_range(&rules, s_bin[warp][lane], s_val[warp], s_mul[warp],
                                                           s_wq[warp], cnt, s_m[warp][lane], &lo, &hi);
                s_lo[warp][lane] = lo;
                s_hi[warp][lane] = hi;
            }
            __syncwarp();
            for (int32_t x = lane; x < gn * ncand; x += 32) {
                const int32_t a = x / ncand, i = x - a * ncand;
                if (!s_ok[warp][a]) continue;
                sb_k_forest_small_candidate(&rules, seed, q.key, extra, t, s_bin[warp][a], s_val[warp], s_mul[warp],
                                            s_wq[warp], cnt, fl[g0 + a], i, s_lo[warp][a], s_hi[warp][a],
                                            s_m[warp][a], l, &best);
            }
            __syncwarp();
        }
    }
    sh[threadIdx.x] = best;
    __syncthreads();
    if (lane == 0 && mine) {
        for (int32_t k = 1; k < 32; k++)
            if (sb_k_fsplit_better(&sh[threadIdx.x + k], &best)) best = sh[threadIdx.x + k];
        out[node] = best;
        const sb_fdev_node q = nodes[node];
        int64_t *ls = lsum + node * rules.nv;
        for (int32_t k = 0; k < rules.nv; k++) ls[k] = 0;
        if (best.valid)
            for (int64_t p = q.begin; p < q.end; p++) {
                const int32_t r = rows[p];
                if (sb_k_goes_left(bins[(int64_t)r * stride + best.feature], best.bin, best.dl))
                    sb_k_forest_put(&rules, ls, value[r], mult[p], wq[p]);
            }
    }
}

/* The drawn features of each node of a chunk (node idx[i] of the call's),
 * ascending: feat[i * mtry + a]. */
__global__ void kf_select(const sb_fdev_node *nodes, const int32_t *idx, int32_t nnodes, u64 seed, int32_t nf,
                          int32_t mtry, uint32_t *draws, int32_t *feat) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < nnodes; i += (int64_t)gridDim.x * blockDim.x) {
        uint32_t *dr = draws + i * nf;
        sb_k_forest_draws(seed, nodes[idx[i]].key, nf, dr);
        int32_t a = 0;
        for (int32_t j = 0; j < nf; j++)
            if (sb_k_forest_selected(dr, nf, mtry, j)) feat[i * mtry + a++] = j;
    }
}

/* Histograms of one tile of a chunk's node's rows (node j of the chunk is
 * idx[j] of the call's) over its drawn features: in shared memory when smem
 * (the node's histograms fit), else straight into global. */
__global__ void kf_hist(const sb_fdev_node *nodes, const int32_t *idx, const int64_t *tile_start, int32_t nnodes,
                        sb_k_forest_rules rules,
                        int32_t mtry, int32_t slot, const int32_t *feat, const uint8_t *bins, int32_t stride,
                        const int32_t *rows, const int32_t *mult, const int32_t *wq, const int32_t *value,
                        int64_t *hist, int smem) {
    const int32_t nv = rules.nv;
    extern __shared__ int64_t sh[];
    const int64_t tile = blockIdx.x;
    const int32_t j = kf_find(tile_start, nnodes, tile);
    const sb_fdev_node q = nodes[idx[j]];
    const int32_t *fj = feat + (int64_t)j * mtry;
    const int64_t hsize = (int64_t)mtry * slot;
    int64_t *gh = hist + (int64_t)j * hsize;
    int64_t *h = smem ? sh : gh;
    if (smem) {
        for (int64_t i = threadIdx.x; i < hsize; i += FT) sh[i] = 0;
        __syncthreads();
    }
    const int64_t b = q.begin + (tile - tile_start[j]) * FHIST_TILE;
    const int64_t e = b + FHIST_TILE < q.end ? b + FHIST_TILE : q.end;
    for (int64_t p = b + threadIdx.x; p < e; p += FT) {
        const int32_t r = rows[p], v = value[r], cnt = mult[p], w = wq[p];
        const uint8_t *rb = bins + (int64_t)r * stride;
#if defined(SB_CUDA_SABOTAGE_FLOAT_ATOMIC)
        /* Separating arm for rule 4 (CUDA_VARIANT=float-atomic): a block's sums
         * of y as float atomics (in the low half of the slot), the usual GPU
         * histogram; the rounding now depends on the order threads arrive in. */
        if (smem && rules.criterion == SB_K_CRIT_SQUARED) {
            const int64_t m = rules.weighted ? (int64_t)cnt * w : (int64_t)cnt;
            for (int32_t a = 0; a < mtry; a++) {
                int64_t *x = h + (int64_t)a * slot + (int64_t)rb[fj[a]] * nv;
                atomicAdd((u64 *)&x[0], (u64)m);
                atomicAdd((float *)&x[1], (float)(m * v));
                if (rules.weighted) atomicAdd((u64 *)&x[nv - 1], (u64)(int64_t)cnt);
            }
            continue;
        }
#endif
        for (int32_t a = 0; a < mtry; a++)
            kf_put_atomic(rules, h + (int64_t)a * slot + (int64_t)rb[fj[a]] * nv, v, cnt, w);
    }
    if (smem) {
        __syncthreads();
        for (int64_t i = threadIdx.x; i < hsize; i += FT) {
            int64_t x = sh[i];
#if defined(SB_CUDA_SABOTAGE_FLOAT_ATOMIC)
            if (rules.criterion == SB_K_CRIT_SQUARED && i % nv == 1) x = (int64_t)*(const float *)&sh[i];
#endif
            if (x != 0) atomicAdd((u64 *)&gh[i], (u64)x);
        }
    }
}

/* The best split of node idx[blockIdx.x] of the call from its histograms (copied
 * into shared memory when smem, as kf_hist): each sum of each drawn feature
 * cumulated (sb_k_forest_cumulate_one), every candidate (sb_k_forest_rf_at,
 * or sb_k_forest_et_feature), a block reduction under the total order, and
 * the left child's sums. */
__global__ void kf_best(const int64_t *tot, sb_k_forest_rules rules, u64 seed, const sb_fdev_node *nodes,
                        const int32_t *idx, int32_t extra, int32_t mtry, int32_t maxnb, int32_t slot, const int32_t *feat,
                        const int32_t *nbins, int64_t *hist, sb_k_fsplit *out, int64_t *lsum, int smem) {
    extern __shared__ int64_t hs[];
    __shared__ sb_k_fsplit sh[FT];
    const int64_t i = blockIdx.x, node = idx[i];
    const int32_t nv = rules.nv;
    const int32_t *fi = feat + i * mtry;
    const int64_t hsize = (int64_t)mtry * slot;
    int64_t *h = hist + i * hsize;
    const int64_t *t = tot + node * nv;
    const uint64_t key = nodes[node].key;
    rules.min_w = nodes[node].min_w; /* the node's tree's */
    if (smem) {
        for (int64_t x = threadIdx.x; x < hsize; x += FT) hs[x] = h[x];
        __syncthreads();
        h = hs;
    }
    for (int32_t c = threadIdx.x; c < mtry * nv; c += FT)
        sb_k_forest_cumulate_one(h + (int64_t)(c / nv) * slot, nbins[fi[c / nv]], nv, c % nv);
    __syncthreads();
    sb_k_fsplit best;
    memset(&best, 0, sizeof best);
    if (extra) {
        for (int32_t a = threadIdx.x; a < mtry; a += FT) {
            const int64_t *ha = h + (int64_t)a * slot;
            sb_k_forest_et_feature(&rules, seed, key, t, ha, ha, nbins[fi[a]], fi[a], &best);
        }
    } else {
        for (int64_t c = threadIdx.x; c < (int64_t)mtry * maxnb; c += FT) {
            const int32_t a = (int32_t)(c / maxnb), b = 1 + (int32_t)(c - (int64_t)a * maxnb);
            const int32_t nb = nbins[fi[a]];
            if (b > nb) continue;
            const int64_t *ha = h + (int64_t)a * slot;
            sb_k_forest_rf_at(&rules, t, ha, ha, nb, fi[a], b, &best);
        }
    }
    sh[threadIdx.x] = best;
    __syncthreads();
    for (int k = FT / 2; k > 0; k >>= 1) {
        if ((int)threadIdx.x < k && sb_k_fsplit_better(&sh[threadIdx.x + k], &sh[threadIdx.x]))
            sh[threadIdx.x] = sh[threadIdx.x + k];
        __syncthreads();
    }
    best = sh[0];
    if (threadIdx.x == 0) out[node] = best;
    int64_t *ls = lsum + node * nv;
    for (int32_t k = threadIdx.x; k < nv; k += FT) {
        int64_t v = 0;
        if (best.valid)
            for (int32_t a = 0; a < mtry; a++)
                if (fi[a] == best.feature) {
                    const int64_t *ha = h + (int64_t)a * slot;
                    v = ha[(int64_t)best.bin * nv + k] + (best.dl ? ha[k] : 0);
                }
        ls[k] = v;
    }
}

/* Partition, one pass (one tile a block): each row of node j to a slot of the
 * other buffers, its left rows from begin up (ctr[j] counts them) and its
 * right rows from end down (ctr[nnodes + j]), so the sides meet at begin +
 * nleft with no count pass first; the order within a side is the schedule's,
 * which no operation reads (fdev.h). Weights only when the forest is
 * weighted (wq NULL: not). */
__global__ void kf_part_scatter(const sb_fdev_node *nodes, const int64_t *tile_start, int32_t nnodes,
                                const uint8_t *bins, int32_t stride, const int32_t *rows, const int32_t *mult,
                                const int32_t *wq, u64 *ctr, int32_t *trows, int32_t *tmult, int32_t *twq) {
    const int64_t tile = blockIdx.x;
    const int32_t j = kf_find(tile_start, nnodes, tile);
    const sb_fdev_node q = nodes[j];
    const int64_t b = q.begin + (tile - tile_start[j]) * FPART_TILE;
    const int64_t e = b + FPART_TILE < q.end ? b + FPART_TILE : q.end;
    for (int64_t base = b; base < e; base += FT) { /* uniform over the block */
        const int64_t p = base + threadIdx.x;
        const bool want = p < e;
        int32_t r = 0;
        bool left = false;
        if (want) {
            r = rows[p];
            left = sb_k_goes_left(bins[(int64_t)r * stride + q.feature], q.bin, q.dl);
        }
        const long long k = kf_claim(ctr, left ? j : (int64_t)nnodes + j, want);
        if (want) {
            const int64_t at = left ? q.begin + k : q.end - 1 - k;
            trows[at] = r;
            tmult[at] = mult[p];
            if (wq) twq[at] = wq[p];
        }
    }
}

/* ---- isolation forest ---- */

/* A thread a tree: tree t0 + i's subsample, psi distinct rows drawn in order
 * with repeats rejected (isolation.c's draws; its bitmap of taken rows at
 * taken + i * words), at positions [i * psi, (i + 1) * psi), count and weight 1. */
__global__ void kf_iso_sample(int32_t nb, int32_t t0, u64 seed, int64_t n, int64_t psi, uint32_t *taken, int64_t words,
                              int32_t *rows, int32_t *mult, int32_t *wq) {
    const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nb) return;
    uint32_t *tk = taken + (int64_t)i * words;
    int64_t got = 0;
    for (u64 q = 0; got < psi; q++) {
        const sb_u32 r = sb_k_iforest_sample_row(seed, t0 + i, q, (sb_u32)n);
        if (tk[r >> 5] & (1u << (r & 31))) continue;
        tk[r >> 5] |= 1u << (r & 31);
        const int64_t at = (int64_t)i * psi + got++;
        rows[at] = (int32_t)r;
        mult[at] = 1;
        wq[at] = 1;
    }
}

/* Every feature's smallest and largest bin over a node's rows, one tile of
 * its rows a block: integer atomic min and max into lo, hi (node j's at
 * j * nf), which any order gives alike. */
__global__ void kf_iso_range(const sb_fdev_node *nodes, const int64_t *tile_start, int32_t nnodes, int32_t nf,
                             const uint8_t *bins, int32_t stride, const int32_t *rows, int32_t *lo, int32_t *hi) {
    const int64_t tile = blockIdx.x;
    const int32_t j = kf_find(tile_start, nnodes, tile);
    const sb_fdev_node q = nodes[j];
    const int64_t b = q.begin + (tile - tile_start[j]) * FPART_TILE;
    const int64_t e = b + FPART_TILE < q.end ? b + FPART_TILE : q.end;
    for (int64_t p = b + threadIdx.x; p < e; p += FT) {
        const uint8_t *rb = bins + (int64_t)rows[p] * stride;
        for (int32_t f = 0; f < nf; f++) {
            atomicMin(&lo[(int64_t)j * nf + f], (int32_t)rb[f]);
            atomicMax(&hi[(int64_t)j * nf + f], (int32_t)rb[f]);
        }
    }
}

/* A thread a node: its split from its features' bin ranges (sb_k_iforest_split). */
__global__ void kf_iso_pick(const sb_fdev_node *nodes, int32_t nnodes, int32_t nf, u64 seed, const int32_t *lo,
                            const int32_t *hi, sb_k_fsplit *out) {
    const int32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nnodes) return;
    sb_k_fsplit x;
    sb_k_iforest_split(seed, nodes[j].key, nf, lo + (int64_t)j * nf, hi + (int64_t)j * nf, &x);
    out[j] = x;
}

/* ---- operations ---- */

static void ft_begin(sb_fdev *d) {
    if (d->timing) cudaEventRecord(d->ev0);
}

static void ft_end(sb_fdev *d, int k) {
    if (!d->timing) return;
    float ms = 0.0f;
    cudaEventRecord(d->ev1);
    cudaEventSynchronize(d->ev1);
    cudaEventElapsedTime(&ms, d->ev0, d->ev1);
    d->tms[k] += ms;
    d->tcalls[k]++;
}

static void fc_close(sb_fdev *d) {
    if (!d) return;
    if (d->timing) {
        double total = 0.0;
        for (int k = 0; k < FT_N; k++) total += d->tms[k];
        for (int k = 0; k < FT_N; k++)
            fprintf(stderr, "cuda forest timing: %-12s %9.1f ms in %7ld calls (%4.1f%%)\n", k_ftnames[k], d->tms[k],
                    d->tcalls[k], total > 0 ? 100.0 * d->tms[k] / total : 0.0);
        fprintf(stderr, "cuda forest timing: %-12s %9.1f ms\n", "all", total);
        cudaEventDestroy(d->ev0);
        cudaEventDestroy(d->ev1);
    }
    void *ptrs[] = {d->bins, d->value, d->nbins, d->rows, d->mult, d->wq, d->trows, d->tmult, d->twq, d->cnt, d->up,
                    d->ctr, d->up2, d->hist, d->dsplit, d->dlsum, d->draws, d->feat, d->rwq, d->sw, d->subwq, d->nk,
                    d->cw, d->wmax, d->wexp, d->bad, d->taken, d->ilo, d->ihi};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) cudaFree(ptrs[i]);
    sb_free(d);
}

static sb_status fc_open_inner(const sb_fdev_setup *s, sb_fdev *d) {
    sb_status gpu = sb_cuda_require_gpu();
    if (gpu != SB_OK) return gpu;
    const int64_t n = s->n;
    const size_t nn = (size_t)(n ? n : 1);
    const char *tv = getenv("SAMEBITS_CUDA_TIMING");
    if (tv && tv[0] == '1') {
        CUDA_CK(cudaEventCreate(&d->ev0), "timing");
        CUDA_CK(cudaEventCreate(&d->ev1), "timing");
        d->timing = 1;
    }
    sb_fdev_setup_keep(s, &d->s, &d->stride, &d->maxnb);
    CUDA_CK(cudaMalloc(&d->bins, nn * (size_t)d->stride), "bins");
    CUDA_CK(cudaMemset(d->bins, 0, nn * (size_t)d->stride), "bins");
    CUDA_CK(cudaMalloc(&d->value, sizeof(int32_t) * nn), "values");
    CUDA_CK(cudaMalloc(&d->nbins, sizeof(int32_t) * (size_t)s->nf), "nbins");
    if (s->value) CUDA_CK(cudaMemcpy(d->value, s->value, sizeof(int32_t) * (size_t)n, cudaMemcpyHostToDevice), "values");
    else CUDA_CK(cudaMemset(d->value, 0, sizeof(int32_t) * nn), "values");
    if (s->wq) {
        CUDA_CK(cudaMalloc(&d->rwq, sizeof(int32_t) * nn), "weights");
        CUDA_CK(cudaMemcpy(d->rwq, s->wq, sizeof(int32_t) * (size_t)n, cudaMemcpyHostToDevice), "weights");
    }
    if (s->sw) {
        CUDA_CK(cudaMalloc(&d->sw, sizeof(float) * nn), "sample weights");
        CUDA_CK(cudaMemcpy(d->sw, s->sw, sizeof(float) * (size_t)n, cudaMemcpyHostToDevice), "sample weights");
    }
    CUDA_CK(cudaMemcpy(d->nbins, s->nbins, sizeof(int32_t) * (size_t)s->nf, cudaMemcpyHostToDevice), "nbins");
    /* bins: column-major in, row-major on the device */
    void *tmp = NULL;
    CUDA_CK(cudaMalloc(&tmp, nn * (size_t)s->nf), "bins");
    cudaError_t e = cudaMemcpy(tmp, s->binned, (size_t)n * (size_t)s->nf, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        kf_transpose<<<fgrid(n * s->nf), FT>>>((const uint8_t *)tmp, n, s->nf, d->stride, d->bins);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    cudaFree(tmp);
    CUDA_CK(e, "bins");
    CUDA_CK(cudaFuncSetAttribute(kf_hist, cudaFuncAttributeMaxDynamicSharedMemorySize, FSMEM_MAX), "histogram shared memory");
    CUDA_CK(cudaFuncSetAttribute(kf_best, cudaFuncAttributeMaxDynamicSharedMemorySize, FSMEM_MAX), "split shared memory");
    return SB_OK;
}

static sb_status fc_open(const sb_fdev_setup *s, sb_fdev **out) {
    *out = NULL;
    if (s->nf < 1) return sb_fail(SB_ERR_INVALID_INPUT, "cuda: no features");
    sb_fdev *d = (sb_fdev *)sb_calloc(1, sizeof *d);
    if (!d) return sb_fail(SB_ERR_OUT_OF_MEMORY, "cuda: out of memory");
    sb_status st = fc_open_inner(s, d);
    if (st != SB_OK) {
        fc_close(d);
        return st;
    }
    *out = d;
    return SB_OK;
}

/* At least k counters on the device, zeroed. */
static sb_status counters(sb_fdev *d, int64_t k) {
    if (k > d->ctr_cap) {
        cudaFree(d->ctr);
        d->ctr = NULL;
        d->ctr_cap = 0;
        CUDA_CK(cudaMalloc(&d->ctr, sizeof(u64) * (size_t)k), "counters");
        d->ctr_cap = k;
    }
    CUDA_CK(cudaMemset(d->ctr, 0, sizeof(u64) * (size_t)k), "counters");
    return SB_OK;
}

/* At least pos positions (row, count, weight, and their partition copies). */
static sb_status positions(sb_fdev *d, int64_t pos) {
    if (pos <= d->cap) return SB_OK;
    int32_t **a[6] = {&d->rows, &d->mult, &d->wq, &d->trows, &d->tmult, &d->twq};
    for (int i = 0; i < 6; i++) {
        cudaFree(*a[i]);
        *a[i] = NULL;
    }
    d->cap = 0;
    for (int i = 0; i < 6; i++) CUDA_CK(cudaMalloc(a[i], sizeof(int32_t) * (size_t)pos), "rows");
    d->cap = pos;
    return SB_OK;
}

/* balanced_subsample: each tree's fixed-point weights (d->subwq, batch x n)
 * and scales (wexp, out) from its draw counts d->cnt, by forest.c's rule in
 * the kernel bodies of src/kernels/forest.h; a weight not finite or
 * vanishing: SB_ERR_LIMIT naming the first tree and row, as forest.c. */
static sb_status subsample_weights(sb_fdev *d, int32_t t0, int32_t nb, int32_t *wexp) {
    const int64_t n = d->s.n, pos = n * nb;
    const int32_t K = d->s.rules.nv - 1;
    if (pos > d->subwq_cap) {
        cudaFree(d->subwq);
        d->subwq = NULL;
        d->subwq_cap = 0;
        CUDA_CK(cudaMalloc(&d->subwq, sizeof(int32_t) * (size_t)pos), "tree weights");
        d->subwq_cap = pos;
    }
    if (nb > d->sub_cap) {
        void **a[5] = {(void **)&d->nk, (void **)&d->cw, (void **)&d->wmax, (void **)&d->wexp, (void **)&d->bad};
        const size_t sz[5] = {sizeof(int64_t) * (size_t)K, sizeof(float) * (size_t)K, sizeof(uint32_t),
                              sizeof(int32_t), 2 * sizeof(u64)};
        for (int i = 0; i < 5; i++) {
            cudaFree(*a[i]);
            *a[i] = NULL;
        }
        d->sub_cap = 0;
        for (int i = 0; i < 5; i++) CUDA_CK(cudaMalloc(a[i], sz[i] * (size_t)nb), "tree weights");
        d->sub_cap = nb;
    }
    CUDA_CK(cudaMemset(d->nk, 0, sizeof(int64_t) * (size_t)K * (size_t)nb), "tree weights");
    CUDA_CK(cudaMemset(d->wmax, 0, sizeof(uint32_t) * (size_t)nb), "tree weights");
    CUDA_CK(cudaMemset(d->bad, 0xFF, 2 * sizeof(u64) * (size_t)nb), "tree weights");
    kf_sub_counts<<<fgrid(pos), FT>>>(d->cnt, n, nb, K, d->value, d->nk);
    CUDA_CK_LAUNCH("tree class counts");
    kf_sub_classes<<<(unsigned)((nb + FT - 1) / FT), FT>>>(d->nk, nb, K, d->cw);
    CUDA_CK_LAUNCH("tree class weights");
    kf_sub_max<<<fgrid(pos), FT>>>(d->cnt, n, nb, K, d->value, d->sw, d->cw, d->wmax, d->bad);
    CUDA_CK_LAUNCH("tree weight scale");
    kf_sub_scale<<<(unsigned)((nb + FT - 1) / FT), FT>>>(d->wmax, nb, d->wexp);
    CUDA_CK_LAUNCH("tree weight scale");
    kf_sub_fix<<<fgrid(pos), FT>>>(d->cnt, n, nb, K, d->value, d->sw, d->cw, d->wexp, d->subwq, d->bad);
    CUDA_CK_LAUNCH("tree weights");
    u64 *bad = (u64 *)sb_malloc(2 * sizeof(u64) * (size_t)nb);
    if (!bad) return sb_fail(SB_ERR_OUT_OF_MEMORY, "cuda: out of memory");
    cudaError_t e = cudaMemcpy(bad, d->bad, 2 * sizeof(u64) * (size_t)nb, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) e = cudaMemcpy(wexp, d->wexp, sizeof(int32_t) * (size_t)nb, cudaMemcpyDeviceToHost);
    int32_t ti = -1;
    u64 row = 0;
    for (int32_t i = 0; i < nb && ti < 0 && e == cudaSuccess; i++) /* not finite first, as forest.c checks */
        if (bad[i] != ~(u64)0 || bad[nb + i] != ~(u64)0) {
            ti = i;
            row = bad[i] != ~(u64)0 ? bad[i] : bad[nb + i];
        }
    sb_free(bad);
    CUDA_CK(e, "tree weights");
    if (ti < 0) return SB_OK;
    float w = 1.0f;
    if (d->sw) CUDA_CK(cudaMemcpy(&w, d->sw + row, sizeof(float), cudaMemcpyDeviceToHost), "sample weight");
    return sb_fail(SB_ERR_LIMIT,
                   "forest: the weight of row %lld in tree %d (sample weight %g times its class weight) is not "
                   "finite, or is positive but below the fixed-point resolution (2^-21 of the largest weight), "
                   "where it would count as zero",
                   (long long)row, (int)(t0 + ti), (double)w);
}

static sb_status fc_begin_x(sb_fdev *d, int32_t t0, int32_t nb, int64_t *count, int32_t *wexp) {
    const int64_t n = d->s.n, pos = n * nb;
    sb_status st0 = positions(d, pos);
    if (st0 != SB_OK) return st0;
    if (pos > d->cnt_cap) {
        cudaFree(d->cnt);
        d->cnt = NULL;
        d->cnt_cap = 0;
        CUDA_CK(cudaMalloc(&d->cnt, sizeof(int32_t) * (size_t)pos), "draw counts");
        d->cnt_cap = pos;
    }
    if (d->s.bootstrap) {
        CUDA_CK(cudaMemset(d->cnt, 0, sizeof(int32_t) * (size_t)pos), "draw counts");
        kf_boot<<<fgrid((int64_t)nb * d->s.ndraw), FT>>>(d->cnt, n, nb, t0, d->s.seed, d->s.ndraw);
        CUDA_CK_LAUNCH("bootstrap");
    } else {
        kf_fill<<<fgrid(pos), FT>>>(d->cnt, pos, 1);
        CUDA_CK_LAUNCH("rows");
    }
    for (int32_t i = 0; i < nb; i++) wexp[i] = d->s.rules.wexp;
    const int32_t *wtree = NULL;
    if (d->s.subsample) {
        sb_status sw = subsample_weights(d, t0, nb, wexp);
        if (sw != SB_OK) return sw;
        wtree = d->subwq;
    }
    sb_status st = counters(d, nb);
    if (st != SB_OK) return st;
    kf_compact<<<fgrid(pos), FT>>>(d->cnt, n, nb, d->rwq, wtree, d->ctr, 0, d->rows, d->mult, d->wq);
    CUDA_CK_LAUNCH("row count");
    u64 *h = (u64 *)sb_malloc(sizeof(u64) * (size_t)nb);
    if (!h) return sb_fail(SB_ERR_OUT_OF_MEMORY, "cuda: out of memory");
    cudaError_t e = cudaMemcpy(h, d->ctr, sizeof(u64) * (size_t)nb, cudaMemcpyDeviceToHost);
    u64 off = 0;
    for (int32_t i = 0; i < nb; i++) {
        count[i] = (int64_t)h[i];
        h[i] = off; /* the cursor starts at the tree's first position */
        off += (u64)count[i];
    }
    if (e == cudaSuccess) e = cudaMemcpy(d->ctr, h, sizeof(u64) * (size_t)nb, cudaMemcpyHostToDevice);
    sb_free(h);
    CUDA_CK(e, "row counts");
    kf_compact<<<fgrid(pos), FT>>>(d->cnt, n, nb, d->rwq, wtree, d->ctr, 1, d->rows, d->mult, d->wq);
    CUDA_CK_LAUNCH("rows");
    return SB_OK;
}

/* Uploads nnodes nodes, then (tile > 0) their tile table, then extra bytes;
 * device pointers to each. */
static sb_status upload(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, int64_t tile, const void *extra,
                        size_t extra_bytes, sb_fdev_node **dn, int64_t **dtiles, void **dextra, int64_t *ntiles) {
    const size_t nb = (sizeof(sb_fdev_node) * (size_t)nnodes + 255) & ~(size_t)255;
    const size_t tb = tile > 0 ? (sizeof(int64_t) * ((size_t)nnodes + 1) + 255) & ~(size_t)255 : 0;
    sb_status st = sb_cuda_ensure(&d->up, &d->up_cap, nb + tb + extra_bytes + 256, "uploads");
    if (st != SB_OK) return st;
    char *p = (char *)d->up;
    *dn = (sb_fdev_node *)p;
    CUDA_CK(cudaMemcpy(p, nodes, sizeof(sb_fdev_node) * (size_t)nnodes, cudaMemcpyHostToDevice), "nodes");
    if (tile > 0) {
        int64_t *ts = (int64_t *)sb_malloc(sizeof(int64_t) * ((size_t)nnodes + 1));
        if (!ts) return sb_fail(SB_ERR_OUT_OF_MEMORY, "cuda: out of memory");
        int64_t acc = 0;
        for (int32_t i = 0; i < nnodes; i++) {
            ts[i] = acc;
            acc += (nodes[i].end - nodes[i].begin + tile - 1) / tile;
        }
        ts[nnodes] = acc;
        *ntiles = acc;
        cudaError_t e = cudaMemcpy(p + nb, ts, sizeof(int64_t) * ((size_t)nnodes + 1), cudaMemcpyHostToDevice);
        sb_free(ts);
        CUDA_CK(e, "tiles");
        *dtiles = (int64_t *)(p + nb);
    }
    if (extra_bytes) {
        CUDA_CK(cudaMemcpy(p + nb + tb, extra, extra_bytes, cudaMemcpyHostToDevice), "sums");
        *dextra = p + nb + tb;
    }
    return SB_OK;
}

static sb_status fc_sums_x(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, int64_t *sums) {
    const int32_t nv = d->s.rules.nv;
    int64_t *ds = NULL;
    size_t cap = 0;
    for (int32_t at = 0; at < nnodes; at += 65535) { /* gridDim.y is at most 65535 */
        const int32_t m = nnodes - at < 65535 ? nnodes - at : 65535;
        sb_fdev_node *dn = NULL;
        int64_t *dt = NULL, nt = 0, maxrows = 0;
        void *dx = NULL;
        sb_status st = upload(d, nodes + at, m, 0, NULL, 0, &dn, &dt, &dx, &nt);
        if (st == SB_OK) st = sb_cuda_ensure((void **)&ds, &cap, sizeof(int64_t) * (size_t)m * (size_t)nv, "sums");
        if (st != SB_OK) {
            cudaFree(ds);
            return st;
        }
        for (int32_t i = 0; i < m; i++)
            if (nodes[at + i].end - nodes[at + i].begin > maxrows) maxrows = nodes[at + i].end - nodes[at + i].begin;
        int64_t bx = (maxrows + FPART_TILE - 1) / FPART_TILE;
        dim3 grid((unsigned)(bx < 1 ? 1 : bx > 4096 ? 4096 : bx), (unsigned)m);
        cudaError_t e = cudaMemset(ds, 0, sizeof(int64_t) * (size_t)m * (size_t)nv);
        if (e == cudaSuccess) {
            kf_sums<<<grid, FT, sizeof(int64_t) * (size_t)nv>>>(dn, d->s.rules, d->rows, d->mult, d->wq, d->value,
                                                                 ds);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess)
            e = cudaMemcpy(sums + (int64_t)at * nv, ds, sizeof(int64_t) * (size_t)m * (size_t)nv, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) {
            cudaFree(ds);
            return sb_cuda_fail(e, "sums");
        }
    }
    cudaFree(ds);
    return SB_OK;
}

/* Results for m nodes on the device. */
static sb_status results(sb_fdev *d, int64_t m) {
    if (m <= d->res_cap) return SB_OK;
    cudaFree(d->dsplit);
    cudaFree(d->dlsum);
    d->dsplit = NULL;
    d->dlsum = NULL;
    d->res_cap = 0;
    CUDA_CK(cudaMalloc(&d->dsplit, sizeof(sb_k_fsplit) * (size_t)m), "splits");
    CUDA_CK(cudaMalloc(&d->dlsum, sizeof(int64_t) * (size_t)m * (size_t)(d->s.rules.nv > 0 ? d->s.rules.nv : 1)),
        "left sums"); /* the isolation forest has no sums */
    d->res_cap = m;
    return SB_OK;
}

/* Draw and feature scratch for m nodes. */
static sb_status selection(sb_fdev *d, int64_t m) {
    if (m <= d->sel_cap) return SB_OK;
    cudaFree(d->draws);
    cudaFree(d->feat);
    d->draws = NULL;
    d->feat = NULL;
    d->sel_cap = 0;
    CUDA_CK(cudaMalloc(&d->draws, sizeof(uint32_t) * (size_t)m * (size_t)d->s.nf), "draws");
    CUDA_CK(cudaMalloc(&d->feat, sizeof(int32_t) * (size_t)m * (size_t)d->s.mtry), "features");
    d->sel_cap = m;
    return SB_OK;
}

/* split: every node and its sums go up once; small nodes are searched in
 * place (kf_small skips the large ones); the large ones in chunks whose
 * histograms fit the budget, through a list of their indices; every result
 * is written at its node's index and comes down once. */
static sb_status fc_split_x(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, const int64_t *tot, sb_k_fsplit *out,
                            int64_t *lsum) {
    const int32_t nv = d->s.rules.nv, mtry = d->s.mtry, slot = (d->maxnb + 1) * nv;
    const size_t hbytes = sizeof(int64_t) * (size_t)mtry * (size_t)slot;
    int64_t chunk = (int64_t)(FHIST_BUDGET / hbytes), small_chunk = FSMALL_CHUNK;
    /* SAMEBITS_CUDA_FOREST_CHUNK=N: at most N nodes a launch (tests: chunks change no bit) */
    const char *env = getenv("SAMEBITS_CUDA_FOREST_CHUNK");
    if (env && atol(env) > 0) {
        if (chunk > atol(env)) chunk = atol(env);
        small_chunk = atol(env);
    }
    if (chunk < 1) chunk = 1;
    const int can_small = nv <= SB_K_FOREST_SMALL_NV;
    ft_begin(d);
    sb_fdev_node *dn = NULL;
    int64_t *dt = NULL, nt = 0;
    void *dtot = NULL;
    sb_status st = upload(d, nodes, nnodes, 0, tot, sizeof(int64_t) * (size_t)nnodes * (size_t)nv, &dn, &dt, &dtot, &nt);
    if (st == SB_OK) st = results(d, nnodes);
    if (st != SB_OK) return st;
    /* the large nodes' indices, and per chunk its tile table after them */
    int32_t nlarge = 0;
    for (int32_t i = 0; i < nnodes; i++) nlarge += !can_small || nodes[i].end - nodes[i].begin > SB_K_FOREST_SMALL_ROWS;
    ft_end(d, FT_SPLIT_UP);
    if (can_small && nlarge < nnodes) {
        ft_begin(d);
        st = selection(d, small_chunk < nnodes ? small_chunk : nnodes);
        if (st != SB_OK) return st;
        for (int64_t at = 0; at < nnodes; at += small_chunk) {
            const int32_t m = (int32_t)(nnodes - at < small_chunk ? nnodes - at : small_chunk);
            kf_small<<<(unsigned)((m + FT / 32 - 1) / (FT / 32)), FT>>>(
                dn + at, (const int64_t *)dtot + at * nv, m, d->s.rules, d->s.seed, d->s.extra, d->s.nf, mtry, d->bins,
                d->stride, d->rows, d->mult, d->wq, d->value, d->draws, d->feat, d->dsplit + at, d->dlsum + at * nv);
            CUDA_CK_LAUNCH("small nodes");
        }
        ft_end(d, FT_SMALL);
    }
    if (nlarge > 0) {
        const int64_t per = chunk < nlarge ? chunk : nlarge;
        int32_t *idx = (int32_t *)sb_malloc(sizeof(int32_t) * (size_t)nlarge);
        int64_t *ts = (int64_t *)sb_malloc(sizeof(int64_t) * ((size_t)per + 1));
        if (!idx || !ts) {
            sb_free(idx);
            sb_free(ts);
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "cuda: out of memory");
        }
        int32_t k = 0;
        for (int32_t i = 0; i < nnodes; i++)
            if (!can_small || nodes[i].end - nodes[i].begin > SB_K_FOREST_SMALL_ROWS) idx[k++] = i;
        const size_t ib = (sizeof(int32_t) * (size_t)per + 255) & ~(size_t)255;
        st = sb_cuda_ensure(&d->up2, &d->up2_cap, ib + sizeof(int64_t) * ((size_t)per + 1), "uploads");
        if (st == SB_OK) st = selection(d, per);
        if (st == SB_OK) st = sb_cuda_ensure((void **)&d->hist, &d->hist_cap, hbytes * (size_t)per, "histograms");
        for (int64_t at = 0; st == SB_OK && at < nlarge; at += per) {
            const int32_t m = (int32_t)(nlarge - at < per ? nlarge - at : per);
            int64_t acc = 0;
            for (int32_t j = 0; j < m; j++) {
                const sb_fdev_node *q = &nodes[idx[at + j]];
                ts[j] = acc;
                acc += (q->end - q->begin + FHIST_TILE - 1) / FHIST_TILE;
            }
            ts[m] = acc;
            int32_t *didx = (int32_t *)d->up2;
            int64_t *dts = (int64_t *)((char *)d->up2 + ib);
            ft_begin(d);
            cudaError_t e = cudaMemcpy(didx, idx + at, sizeof(int32_t) * (size_t)m, cudaMemcpyHostToDevice);
            if (e == cudaSuccess) e = cudaMemcpy(dts, ts, sizeof(int64_t) * ((size_t)m + 1), cudaMemcpyHostToDevice);
            if (e == cudaSuccess) e = cudaMemset(d->hist, 0, hbytes * (size_t)m);
            if (e != cudaSuccess) {
                st = sb_cuda_fail(e, "histograms");
                break;
            }
            kf_select<<<fgrid(m), FT>>>(dn, didx, m, d->s.seed, d->s.nf, mtry, d->draws, d->feat);
            e = cudaGetLastError();
            const int smem = hbytes <= FSMEM_MAX;
            if (e == cudaSuccess && acc > 0) {
                kf_hist<<<(unsigned)acc, FT, smem ? hbytes : 0>>>(dn, didx, dts, m, d->s.rules, mtry, slot, d->feat,
                                                                   d->bins, d->stride, d->rows, d->mult, d->wq,
                                                                   d->value, d->hist, smem);
                e = cudaGetLastError();
            }
            ft_end(d, FT_HIST);
            ft_begin(d);
            if (e == cudaSuccess) {
                kf_best<<<(unsigned)m, FT, smem ? hbytes : 0>>>((const int64_t *)dtot, d->s.rules, d->s.seed, dn, didx,
                                                                d->s.extra, mtry, d->maxnb, slot, d->feat, d->nbins,
                                                                d->hist, d->dsplit, d->dlsum, smem);
                e = cudaGetLastError();
            }
            ft_end(d, FT_BEST);
            if (e != cudaSuccess) st = sb_cuda_fail(e, "split search");
        }
        sb_free(idx);
        sb_free(ts);
        if (st != SB_OK) return st;
    }
    ft_begin(d);
    CUDA_CK(cudaMemcpy(out, d->dsplit, sizeof(sb_k_fsplit) * (size_t)nnodes, cudaMemcpyDeviceToHost), "splits");
    CUDA_CK(cudaMemcpy(lsum, d->dlsum, sizeof(int64_t) * (size_t)nnodes * (size_t)nv, cudaMemcpyDeviceToHost), "left sums");
    ft_end(d, FT_SPLIT_DOWN);
    return SB_OK;
}

static sb_status fc_partition_x(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, int64_t *nleft) {
    sb_fdev_node *dn = NULL;
    int64_t *dt = NULL, nt = 0;
    void *dx = NULL;
    sb_status st = upload(d, nodes, nnodes, FPART_TILE, NULL, 0, &dn, &dt, &dx, &nt);
    if (st == SB_OK) st = counters(d, 2 * (int64_t)nnodes);
    if (st != SB_OK) return st;
    if (nt == 0) {
        for (int32_t i = 0; i < nnodes; i++) nleft[i] = 0;
        return SB_OK;
    }
    const int w = d->s.rules.weighted;
    kf_part_scatter<<<(unsigned)nt, FT>>>(dn, dt, nnodes, d->bins, d->stride, d->rows, d->mult, w ? d->wq : NULL,
                                          d->ctr, d->trows, d->tmult, w ? d->twq : NULL);
    CUDA_CK_LAUNCH("partition");
    CUDA_CK(cudaMemcpy(nleft, d->ctr, sizeof(u64) * (size_t)nnodes, cudaMemcpyDeviceToHost), "partition counts");
    /* the other buffers become the positions: only the nodes of this call
     * have theirs there, and the others are leaves (fdev.h) */
    int32_t *x = d->rows;
    d->rows = d->trows;
    d->trows = x;
    x = d->mult;
    d->mult = d->tmult;
    d->tmult = x;
    if (w) {
        x = d->wq;
        d->wq = d->twq;
        d->twq = x;
    }
    return SB_OK;
}

/* The operations, timed when asked (SAMEBITS_CUDA_TIMING). */
static sb_status fc_begin(sb_fdev *d, int32_t t0, int32_t nb, int64_t *count, int32_t *wexp) {
    ft_begin(d);
    sb_status st = fc_begin_x(d, t0, nb, count, wexp);
    ft_end(d, FT_BEGIN);
    return st;
}

static sb_status fc_sums(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, int64_t *sums) {
    ft_begin(d);
    sb_status st = fc_sums_x(d, nodes, nnodes, sums);
    ft_end(d, FT_SUMS);
    return st;
}

static sb_status fc_split(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, const int64_t *tot, sb_k_fsplit *out,
                          int64_t *lsum) {
    return fc_split_x(d, nodes, nnodes, tot, out, lsum); /* timed by phase inside */
}

static sb_status fc_partition(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, int64_t *nleft) {
    ft_begin(d);
    sb_status st = fc_partition_x(d, nodes, nnodes, nleft);
    ft_end(d, FT_PART);
    return st;
}

/* Isolation forest: tree t0 + i's subsample at positions [i * psi, (i + 1) * psi). */
static sb_status fc_iso_begin(sb_fdev *d, int32_t t0, int32_t nb) {
    const int64_t psi = d->s.psi, words = (d->s.n + 31) / 32;
    sb_status st = positions(d, psi * nb);
    if (st != SB_OK) return st;
    if (words * nb > d->taken_cap) {
        cudaFree(d->taken);
        d->taken = NULL;
        d->taken_cap = 0;
        CUDA_CK(cudaMalloc(&d->taken, sizeof(uint32_t) * (size_t)(words * nb)), "subsample");
        d->taken_cap = words * nb;
    }
    CUDA_CK(cudaMemset(d->taken, 0, sizeof(uint32_t) * (size_t)(words * nb)), "subsample");
    kf_iso_sample<<<(unsigned)((nb + 63) / 64), 64>>>(nb, t0, d->s.seed, d->s.n, psi, d->taken, words, d->rows,
                                                       d->mult, d->wq);
    CUDA_CK_LAUNCH("subsample");
    return SB_OK;
}

/* Isolation forest: each node's split, in chunks whose bin ranges (nodes x nf
 * int32 twice) stay within 2^26 values. */
static sb_status fc_iso_split_x(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, sb_k_fsplit *out) {
    const int32_t nf = d->s.nf;
    int64_t chunk = ((int64_t)1 << 26) / nf;
    if (chunk < 1) chunk = 1;
    for (int64_t at = 0; at < nnodes; at += chunk) {
        const int32_t m = (int32_t)(nnodes - at < chunk ? nnodes - at : chunk);
        sb_fdev_node *dn = NULL;
        int64_t *dt = NULL, nt = 0;
        void *dx = NULL;
        sb_status st = upload(d, nodes + at, m, FPART_TILE, NULL, 0, &dn, &dt, &dx, &nt);
        if (st == SB_OK) st = results(d, m);
        if (st != SB_OK) return st;
        if ((int64_t)m * nf > d->irange_cap) {
            cudaFree(d->ilo);
            cudaFree(d->ihi);
            d->ilo = d->ihi = NULL;
            d->irange_cap = 0;
            CUDA_CK(cudaMalloc(&d->ilo, sizeof(int32_t) * (size_t)m * (size_t)nf), "bin ranges");
            CUDA_CK(cudaMalloc(&d->ihi, sizeof(int32_t) * (size_t)m * (size_t)nf), "bin ranges");
            d->irange_cap = (int64_t)m * nf;
        }
        kf_fill<<<fgrid((int64_t)m * nf), FT>>>(d->ilo, (int64_t)m * nf, 256);
        CUDA_CK_LAUNCH("bin ranges");
        kf_fill<<<fgrid((int64_t)m * nf), FT>>>(d->ihi, (int64_t)m * nf, -1);
        CUDA_CK_LAUNCH("bin ranges");
        if (nt > 0) {
            kf_iso_range<<<(unsigned)nt, FT>>>(dn, dt, m, nf, d->bins, d->stride, d->rows, d->ilo, d->ihi);
            CUDA_CK_LAUNCH("bin ranges");
        }
        kf_iso_pick<<<(unsigned)((m + FT - 1) / FT), FT>>>(dn, m, nf, d->s.seed, d->ilo, d->ihi, d->dsplit);
        CUDA_CK_LAUNCH("isolation split");
        CUDA_CK(cudaMemcpy(out + at, d->dsplit, sizeof(sb_k_fsplit) * (size_t)m, cudaMemcpyDeviceToHost), "splits");
    }
    return SB_OK;
}

static sb_status fc_iso_split(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, sb_k_fsplit *out) {
    ft_begin(d);
    sb_status st = fc_iso_split_x(d, nodes, nnodes, out);
    ft_end(d, FT_ISO);
    return st;
}

static const sb_fdev_ops k_fcuda_ops = {"cuda", INT64_C(1) << 30, fc_open, fc_close, fc_begin, fc_sums, fc_split,
                                        fc_partition, fc_iso_begin, fc_iso_split};

extern "C" const sb_fdev_ops *sb_fdev_cuda_ops(void) { return &k_fcuda_ops; }
