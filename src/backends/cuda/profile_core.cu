/*
 * profile_core.cu: the CUDA leg of the pinned fixture profile-core.
 *
 * A host program (nvcc) that runs every stage of profile-core ON THE GPU
 * through the very same device-neutral headers as the CPU fixture
 * (src/fixtures/profile_core.c): the counter rng and its mappings
 * (src/core/rng.h), the fixture's inputs (src/kernels/profile_core.h), the
 * elementary functions and the reductions (src/math/sb_math.h). This file holds
 * no arithmetic of its own: kernels only decide which thread evaluates which
 * element. Results are copied back and recorded with the host library's card
 * API under exactly the CPU fixture's stage tags, dtypes, counts and order, so
 * `samebits card diff CPU.card CUDA.card` must say `identical`.
 *
 * Schedules on the GPU (any schedule is allowed, the shapes are not):
 *   - elementwise stages: one thread per element;
 *   - reduce.tree_sum: one thread per SB_REDUCE_BLOCK-element leaf
 *     (sb_block_sum_f32), then the fixed pairwise tree (sb_tree_combine_f32)
 *     in one device thread;
 *   - reduce.exact_sum: each thread folds a grid-strided share of the inputs
 *     into its own superaccumulator (sb_sacc_add), blocks merge their threads'
 *     accumulators in shared memory (sb_sacc_merge), and blocks add their
 *     normalised limbs into one global accumulator with 64-bit integer atomics
 *     in whatever order the hardware picks; one thread rounds it once
 *     (sb_sacc_round_f32).
 * Self-checks (not recorded): the tree sum equals the serial sb_tree_sum_f32
 * run in one device thread; the exact sum equals that of two other launch
 * shapes (sb_sacc_same); repeated runs give the same bytes (a race check).
 *
 * Build (profile flags; tools/cuda-compile-check.sh and tools/device-run.sh):
 *   nvcc -std=c++17 -arch=sm_90 -fmad=false -ftz=false -prec-div=true \
 *        -prec-sqrt=true -Iinclude -Isrc src/backends/cuda/profile_core.cu \
 *        build/libsamebits.a -o build/profile_core_cuda
 * Separating arms: the same with -fmad=true (nvcc's default contraction), and
 * with -DSB_CUDA_SABOTAGE_LIBDEVICE_EXP (math.exp through CUDA's expf). Each
 * must give a card that differs from the CPU card.
 *
 * Usage: profile_core_cuda --out CARD [--dump DIR] [--timing FILE]
 *          [--repeat N] [--device N] [--meta KEY=VALUE]...
 * Exit status: 0 success; 1 usage; 2 a self-check failed; 3 a CUDA or
 * library error.
 */
#include "backends/cuda/compat_cuda.h" /* first: the kernel vocabulary */
#include "samebits_cert.h"
#include "kernels/profile_core.h"
#include "core/rng.h"
#include "math/sb_math.h"

#include <cuda_runtime.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if defined(SB_CUDA_SABOTAGE_LIBDEVICE_EXP)
/* Separating arm for rule 3 on the GPU: CUDA's own expf (libdevice) instead of
 * the profile's. Defined after sb_math.h, so only this file's direct calls of
 * sb_expf (the math.exp stage) change; that is all the arm needs. */
#define sb_expf(x) expf(x)
#define SB_CUDA_ARM_NAME "libdevice-exp"
#elif defined(SB_CUDA_ARM_FMAD)
/* Label only: the fmad arm differs by its nvcc flag (-fmad=true), not by code. */
#define SB_CUDA_ARM_NAME "fmad"
#else
#define SB_CUDA_ARM_NAME "none"
#endif

/* ------------------------------------------------------------------------ */
/* Host helpers                                                             */
/* ------------------------------------------------------------------------ */

/* Aborts the program with exit status 3 and a message naming the failed CUDA
 * call and its source line when err is not cudaSuccess; otherwise returns. */
static void check_cuda(cudaError_t err, const char *what, int line) {
    if (err == cudaSuccess) return;
    fprintf(stderr, "profile_core_cuda: CUDA error at line %d (%s): %s (%s)\n", line, what,
            cudaGetErrorString(err), cudaGetErrorName(err));
    exit(3);
}
#define CK(call) check_cuda((call), #call, __LINE__)
/* After a launch: catches launch-configuration errors at once (execution
 * errors surface at the next synchronising call, which is also checked). */
#define CK_LAUNCH(name) check_cuda(cudaGetLastError(), name, __LINE__)

/* Aborts with exit status 3 and the library's message when st is not SB_OK. */
static void check_sb(sb_status st, const char *what) {
    if (st == SB_OK) return;
    fprintf(stderr, "profile_core_cuda: %s: %s: %s\n", what, sb_status_name(st), sb_last_error());
    exit(3);
}

/* ------------------------------------------------------------------------ */
/* Kernels: scheduling only; every value comes from the shared headers       */
/* ------------------------------------------------------------------------ */

/* Global index of this thread in a 1-D launch. */
static __device__ __forceinline__ sb_i64 gtid(void) {
    return (sb_i64)blockIdx.x * (sb_i64)blockDim.x + (sb_i64)threadIdx.x;
}

/* rng.philox_words: words[4i..4i+3] = the block of (seed, WORDS, i, sub 0),
 * for i < n; one thread per block of four words. */
__global__ void k_rng_words(sb_u32 *words, sb_u32 n) {
    sb_i64 i = gtid();
    if (i >= (sb_i64)n) return;
    sb_u32 w[4];
    sb_rng_words(SB_CORE_SEED, SB_CORE_PURPOSE_WORDS, (sb_u64)i, 0u, w);
    for (int j = 0; j < 4; j++) words[4 * i + j] = w[j];
}

/* rng.unit_f32, rng.open_unit_f32, rng.below for index i < n, exactly as the
 * CPU fixture: the open-unit mapping is applied to the flat word i of the
 * philox_words stage (words must hold at least n words). */
__global__ void k_rng_maps(const sb_u32 *words, float *unit, float *open_unit, sb_u32 *below,
                           sb_u32 n) {
    sb_i64 i = gtid();
    if (i >= (sb_i64)n) return;
    unit[i] = sb_rng_unit_f32(SB_CORE_SEED, SB_CORE_PURPOSE_UNIT, (sb_u64)i);
    open_unit[i] = sb_u32_to_open_unit_f32(words[i]);
    below[i] = sb_rng_below(SB_CORE_SEED, SB_CORE_PURPOSE_BELOW, (sb_u64)i, SB_CORE_BELOW_N);
}

/* math.input: x[i] = sb_k_core_math_input(i) for i < n. */
__global__ void k_math_input(float *x, sb_u32 n) {
    sb_i64 i = gtid();
    if (i >= (sb_i64)n) return;
    x[i] = sb_k_core_math_input((sb_u32)i);
}

/* The elementary functions of the math.* stages, in the CPU fixture's order. */
enum { FN_EXP = 0, FN_EXPM1, FN_LOG, FN_LOG1P, FN_TANH, FN_SIGMOID, FN_COUNT };
static const char *const k_fn_tags[FN_COUNT] = {"math.exp",   "math.expm1", "math.log",
                                                "math.log1p", "math.tanh",  "math.sigmoid"};

/* Evaluates function F (a compile-time FN_* id) at x through sb_math.h. */
template <int F>
static __device__ __forceinline__ float apply_fn(float x) {
    if (F == FN_EXP) return sb_expf(x);
    if (F == FN_EXPM1) return sb_expm1f(x);
    if (F == FN_LOG) return sb_logf(x);
    if (F == FN_LOG1P) return sb_log1pf(x);
    if (F == FN_TANH) return sb_tanhf(x);
    return sb_sigmoidf(x);
}

/* y[i] = function F of x[i] for i < n; one thread per element. */
template <int F>
__global__ void k_map(const float *x, float *y, sb_u32 n) {
    sb_i64 i = gtid();
    if (i >= (sb_i64)n) return;
    y[i] = apply_fn<F>(x[i]);
}

/* reduce.input: s[i] = sb_k_core_reduce_input(i) for i < n. */
__global__ void k_reduce_input(float *s, sb_u32 n) {
    sb_i64 i = gtid();
    if (i >= (sb_i64)n) return;
    s[i] = sb_k_core_reduce_input((sb_u32)i);
}

/* Leaves of the fixed tree: partials[b] = sb_block_sum_f32 over block b of
 * x[0..n) (SB_REDUCE_BLOCK elements, the last one shorter), for b < nb =
 * sb_tree_nblocks(n); one thread per leaf. */
__global__ void k_leaf_sums(const float *x, sb_i64 n, float *partials, sb_i64 nb) {
    sb_i64 b = gtid();
    if (b >= nb) return;
    sb_i64 lo = b * (sb_i64)SB_REDUCE_BLOCK, hi = lo + (sb_i64)SB_REDUCE_BLOCK;
    partials[b] = sb_block_sum_f32(x, lo, hi < n ? hi : n);
}

/* The fixed pairwise tree over nb leaf sums, in one thread: *out =
 * sb_tree_combine_f32(partials, nb); partials is overwritten. Launch <<<1,1>>>. */
__global__ void k_tree_combine(float *partials, sb_i64 nb, float *out) {
    if (gtid() != 0) return;
    *out = sb_tree_combine_f32(partials, nb);
}

/* Self-check: the whole fixed-shape sum serially in one thread
 * (sb_tree_sum_f32); scratch holds sb_tree_nblocks(n) floats. Launch <<<1,1>>>. */
__global__ void k_tree_serial(const float *x, sb_i64 n, float *scratch, float *out) {
    if (gtid() != 0) return;
    *out = sb_tree_sum_f32(x, n, scratch);
}

/* *nb = sb_tree_nblocks(n): the tree's leaf count, taken from the shared
 * header on the device so the host never restates the shape. Launch <<<1,1>>>. */
__global__ void k_tree_nblocks(sb_i64 n, sb_i64 *nb) {
    if (gtid() != 0) return;
    *nb = sb_tree_nblocks(n);
}

#define SACC_THREADS 256

/* Exact sum, first pass: every thread adds x[i] for its grid-strided share
 * of i < n into a private sb_sacc; the block merges its threads' accumulators
 * pairwise in shared memory (blockDim.x must be a power of two, at most
 * SACC_THREADS); thread 0 adds the block's normalised limbs into *global with
 * 64-bit integer atomics (two's-complement adds; order-free and exact, see
 * sb_reduce.h) and ORs in its flags. *global must start zeroed. */
__global__ void k_sacc_partial(const float *x, sb_i64 n, sb_sacc *global) {
    __shared__ sb_sacc sh[SACC_THREADS];
    sb_sacc acc;
    sb_sacc_init(&acc);
    sb_i64 stride = (sb_i64)gridDim.x * (sb_i64)blockDim.x;
    for (sb_i64 i = gtid(); i < n; i += stride) sb_sacc_add(&acc, x[i]);
    sb_sacc_normalize(&acc);
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sb_sacc_merge(&sh[threadIdx.x], &sh[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        sb_sacc b = sh[0];
        sb_sacc_normalize(&b); /* limbs 0..8 in [0, 2^32): many blocks fit in int64 */
        for (int i = 0; i < SB_SACC_LIMBS; i++)
            atomicAdd((unsigned long long *)&global->limb[i], (unsigned long long)b.limb[i]);
        atomicOr((unsigned int *)&global->flags, (unsigned int)b.flags);
    }
}

/* Exact sum, second pass: *out = sb_sacc_round_f32(*acc), the exact sum
 * rounded once. Launch <<<1,1>>>. */
__global__ void k_sacc_round(const sb_sacc *acc, float *out) {
    if (gtid() != 0) return;
    sb_sacc c = *acc;
    *out = sb_sacc_round_f32(&c);
}

/* Self-check: *same = sb_sacc_same(*a, *b) (1 when both hold the same exact
 * value and flags). Launch <<<1,1>>>. */
__global__ void k_sacc_same(const sb_sacc *a, const sb_sacc *b, int *same) {
    if (gtid() != 0) return;
    sb_sacc x = *a, y = *b;
    *same = (int)sb_sacc_same(&x, &y);
}

/* ------------------------------------------------------------------------ */
/* The pipeline                                                             */
/* ------------------------------------------------------------------------ */

/* Timed groups of kernels, one per recorded stage (plus the copy back). */
enum {
    T_WORDS = 0, T_MAPS, T_MATH_INPUT, T_EXP, T_EXPM1, T_LOG, T_LOG1P, T_TANH, T_SIGMOID,
    T_REDUCE_INPUT, T_TREE_SUM, T_EXACT_SUM, T_COPY_BACK, T_COUNT
};
static const char *const k_timer_names[T_COUNT] = {
    "rng.philox_words", "rng.unit/open_unit/below", "math.input", "math.exp", "math.expm1",
    "math.log", "math.log1p", "math.tanh", "math.sigmoid", "reduce.input", "reduce.tree_sum",
    "reduce.exact_sum", "copy back (D2H)"};

/* Leaves of the fixed tree over SB_CORE_N_SUM elements (set by main from
 * k_tree_nblocks before anything else uses it). */
static sb_i64 g_nleaves = 0;

/* Asks the device for the leaf count of the tree over SB_CORE_N_SUM elements
 * and stores it in g_nleaves. */
static void init_nleaves(void) {
    sb_i64 *d;
    CK(cudaMalloc(&d, sizeof(sb_i64)));
    k_tree_nblocks<<<1, 1>>>(SB_CORE_N_SUM, d);
    CK_LAUNCH("k_tree_nblocks");
    CK(cudaMemcpy(&g_nleaves, d, sizeof(sb_i64), cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    if (g_nleaves <= 0) {
        fprintf(stderr, "profile_core_cuda: bad leaf count %lld\n", (long long)g_nleaves);
        exit(3);
    }
}

/* Device buffers of one pipeline run; owned by main, freed at exit. */
typedef struct dev_bufs {
    sb_u32 *words, *below;
    float *unit, *open_unit, *x, *y[FN_COUNT], *s, *partials, *scratch, *sums;
    sb_sacc *sacc;
} dev_bufs;

/* Host copies of every recorded stage. */
typedef struct host_out {
    sb_u32 words[4 * SB_CORE_N_RNG];
    float unit[SB_CORE_N_RNG], open_unit[SB_CORE_N_RNG];
    sb_u32 below[SB_CORE_N_RNG];
    float x[SB_CORE_N_MATH];
    float y[FN_COUNT][SB_CORE_N_MATH];
    float s[SB_CORE_N_SUM];
    float tree_sum, exact_sum;
} host_out;

/* Blocks of `threads` threads that cover n items. */
static unsigned blocks_for(sb_i64 n, unsigned threads) {
    return (unsigned)((n + threads - 1) / threads);
}

/* Allocates every device buffer of the pipeline into *b (plain cudaMalloc). */
static void alloc_bufs(dev_bufs *b) {
    sb_i64 nb = g_nleaves;
    CK(cudaMalloc(&b->words, sizeof(sb_u32) * 4 * SB_CORE_N_RNG));
    CK(cudaMalloc(&b->below, sizeof(sb_u32) * SB_CORE_N_RNG));
    CK(cudaMalloc(&b->unit, sizeof(float) * SB_CORE_N_RNG));
    CK(cudaMalloc(&b->open_unit, sizeof(float) * SB_CORE_N_RNG));
    CK(cudaMalloc(&b->x, sizeof(float) * SB_CORE_N_MATH));
    for (int k = 0; k < FN_COUNT; k++) CK(cudaMalloc(&b->y[k], sizeof(float) * SB_CORE_N_MATH));
    CK(cudaMalloc(&b->s, sizeof(float) * SB_CORE_N_SUM));
    CK(cudaMalloc(&b->partials, sizeof(float) * (size_t)nb));
    CK(cudaMalloc(&b->scratch, sizeof(float) * (size_t)nb));
    CK(cudaMalloc(&b->sums, sizeof(float) * 8));
    CK(cudaMalloc(&b->sacc, sizeof(sb_sacc) * 4));
}

/* Frees what alloc_bufs allocated. */
static void free_bufs(dev_bufs *b) {
    cudaFree(b->words); cudaFree(b->below); cudaFree(b->unit); cudaFree(b->open_unit);
    cudaFree(b->x);
    for (int k = 0; k < FN_COUNT; k++) cudaFree(b->y[k]);
    cudaFree(b->s); cudaFree(b->partials); cudaFree(b->scratch); cudaFree(b->sums);
    cudaFree(b->sacc);
}

/* Fills every output buffer with 0xFF bytes (a NaN / all-ones pattern), so an
 * element no kernel wrote cannot pass for a result. */
static void poison_bufs(dev_bufs *b) {
    sb_i64 nb = g_nleaves;
    CK(cudaMemset(b->words, 0xFF, sizeof(sb_u32) * 4 * SB_CORE_N_RNG));
    CK(cudaMemset(b->below, 0xFF, sizeof(sb_u32) * SB_CORE_N_RNG));
    CK(cudaMemset(b->unit, 0xFF, sizeof(float) * SB_CORE_N_RNG));
    CK(cudaMemset(b->open_unit, 0xFF, sizeof(float) * SB_CORE_N_RNG));
    CK(cudaMemset(b->x, 0xFF, sizeof(float) * SB_CORE_N_MATH));
    for (int k = 0; k < FN_COUNT; k++) CK(cudaMemset(b->y[k], 0xFF, sizeof(float) * SB_CORE_N_MATH));
    CK(cudaMemset(b->s, 0xFF, sizeof(float) * SB_CORE_N_SUM));
    CK(cudaMemset(b->partials, 0xFF, sizeof(float) * (size_t)nb));
    CK(cudaMemset(b->scratch, 0xFF, sizeof(float) * (size_t)nb));
    CK(cudaMemset(b->sums, 0xFF, sizeof(float) * 8));
    CK(cudaDeviceSynchronize());
}

/* The exact-sum launch shape (blocks x threads): the pipeline's and two others
 * the self-check must agree with. threads is a power of two <= SACC_THREADS. */
typedef struct sacc_shape { unsigned blocks, threads; } sacc_shape;
static const sacc_shape k_sacc_main = {264, 256};

/* Launches the exact sum of x[0..n) with shape sh into acc (zeroed here) and
 * its rounding into *out; asynchronous on the default stream. */
static void launch_exact_sum(const float *x, sb_i64 n, sacc_shape sh, sb_sacc *acc, float *out) {
    CK(cudaMemset(acc, 0, sizeof(sb_sacc)));
    k_sacc_partial<<<sh.blocks, sh.threads>>>(x, n, acc);
    CK_LAUNCH("k_sacc_partial");
    k_sacc_round<<<1, 1>>>(acc, out);
    CK_LAUNCH("k_sacc_round");
}

/* Runs every stage once on the GPU into b, copies the results into *h, and
 * stores each stage group's time in ms[T_*] (CUDA events on the default
 * stream; inputs generated on the device as part of their stage). */
static void run_pipeline(dev_bufs *b, host_out *h, float ms[T_COUNT]) {
    const unsigned TPB = 256;
    sb_i64 nb = g_nleaves;
    cudaEvent_t ev[T_COUNT + 1];
    for (int k = 0; k <= T_COUNT; k++) CK(cudaEventCreate(&ev[k]));

    CK(cudaEventRecord(ev[T_WORDS]));
    k_rng_words<<<blocks_for(SB_CORE_N_RNG, TPB), TPB>>>(b->words, SB_CORE_N_RNG);
    CK_LAUNCH("k_rng_words");
    CK(cudaEventRecord(ev[T_MAPS]));
    k_rng_maps<<<blocks_for(SB_CORE_N_RNG, TPB), TPB>>>(b->words, b->unit, b->open_unit, b->below,
                                                       SB_CORE_N_RNG);
    CK_LAUNCH("k_rng_maps");
    CK(cudaEventRecord(ev[T_MATH_INPUT]));
    k_math_input<<<blocks_for(SB_CORE_N_MATH, TPB), TPB>>>(b->x, SB_CORE_N_MATH);
    CK_LAUNCH("k_math_input");
    unsigned mb = blocks_for(SB_CORE_N_MATH, TPB);
    CK(cudaEventRecord(ev[T_EXP]));
    k_map<FN_EXP><<<mb, TPB>>>(b->x, b->y[FN_EXP], SB_CORE_N_MATH);
    CK_LAUNCH("k_map<exp>");
    CK(cudaEventRecord(ev[T_EXPM1]));
    k_map<FN_EXPM1><<<mb, TPB>>>(b->x, b->y[FN_EXPM1], SB_CORE_N_MATH);
    CK_LAUNCH("k_map<expm1>");
    CK(cudaEventRecord(ev[T_LOG]));
    k_map<FN_LOG><<<mb, TPB>>>(b->x, b->y[FN_LOG], SB_CORE_N_MATH);
    CK_LAUNCH("k_map<log>");
    CK(cudaEventRecord(ev[T_LOG1P]));
    k_map<FN_LOG1P><<<mb, TPB>>>(b->x, b->y[FN_LOG1P], SB_CORE_N_MATH);
    CK_LAUNCH("k_map<log1p>");
    CK(cudaEventRecord(ev[T_TANH]));
    k_map<FN_TANH><<<mb, TPB>>>(b->x, b->y[FN_TANH], SB_CORE_N_MATH);
    CK_LAUNCH("k_map<tanh>");
    CK(cudaEventRecord(ev[T_SIGMOID]));
    k_map<FN_SIGMOID><<<mb, TPB>>>(b->x, b->y[FN_SIGMOID], SB_CORE_N_MATH);
    CK_LAUNCH("k_map<sigmoid>");
    CK(cudaEventRecord(ev[T_REDUCE_INPUT]));
    k_reduce_input<<<blocks_for(SB_CORE_N_SUM, TPB), TPB>>>(b->s, SB_CORE_N_SUM);
    CK_LAUNCH("k_reduce_input");
    CK(cudaEventRecord(ev[T_TREE_SUM]));
    k_leaf_sums<<<blocks_for(nb, 128), 128>>>(b->s, SB_CORE_N_SUM, b->partials, nb);
    CK_LAUNCH("k_leaf_sums");
    k_tree_combine<<<1, 1>>>(b->partials, nb, &b->sums[0]);
    CK_LAUNCH("k_tree_combine");
    CK(cudaEventRecord(ev[T_EXACT_SUM]));
    launch_exact_sum(b->s, SB_CORE_N_SUM, k_sacc_main, &b->sacc[0], &b->sums[1]);
    CK(cudaEventRecord(ev[T_COPY_BACK]));
    CK(cudaMemcpy(h->words, b->words, sizeof h->words, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h->unit, b->unit, sizeof h->unit, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h->open_unit, b->open_unit, sizeof h->open_unit, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h->below, b->below, sizeof h->below, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h->x, b->x, sizeof h->x, cudaMemcpyDeviceToHost));
    for (int k = 0; k < FN_COUNT; k++)
        CK(cudaMemcpy(h->y[k], b->y[k], sizeof h->y[k], cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h->s, b->s, sizeof h->s, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&h->tree_sum, &b->sums[0], sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&h->exact_sum, &b->sums[1], sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaEventRecord(ev[T_COUNT]));
    CK(cudaEventSynchronize(ev[T_COUNT]));
    for (int k = 0; k < T_COUNT; k++) CK(cudaEventElapsedTime(&ms[k], ev[k], ev[k + 1]));
    for (int k = 0; k <= T_COUNT; k++) CK(cudaEventDestroy(ev[k]));
}

/* Self-checks of the schedules, on the data of the last pipeline run in b:
 * the fixed tree against the serial one-thread sum, and the exact sum against
 * two other launch shapes (one of them a single thread). Prints one line per
 * check; returns the number of failures. */
static int self_checks(dev_bufs *b) {
    static const sacc_shape others[2] = {{7, 64}, {1, 1}};
    int fails = 0;
    sb_i64 nb = g_nleaves;
    k_tree_serial<<<1, 1>>>(b->s, SB_CORE_N_SUM, b->scratch, &b->sums[2]);
    CK_LAUNCH("k_tree_serial");
    float got[8];
    int *same_d;
    CK(cudaMalloc(&same_d, sizeof(int) * 2));
    for (int k = 0; k < 2; k++) {
        launch_exact_sum(b->s, SB_CORE_N_SUM, others[k], &b->sacc[1 + k], &b->sums[3 + k]);
        k_sacc_same<<<1, 1>>>(&b->sacc[0], &b->sacc[1 + k], &same_d[k]);
        CK_LAUNCH("k_sacc_same");
    }
    int same[2];
    CK(cudaMemcpy(got, b->sums, sizeof got, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(same, same_d, sizeof same, cudaMemcpyDeviceToHost));
    CK(cudaFree(same_d));
    uint32_t bits[5];
    memcpy(bits, got, sizeof bits);
    int ok = bits[0] == bits[2];
    printf("self-check: tree sum, %lld leaves in parallel + tree in one thread vs serial sb_tree_sum_f32: "
           "%08x vs %08x %s\n", (long long)nb, bits[0], bits[2], ok ? "ok" : "FAIL");
    fails += !ok;
    for (int k = 0; k < 2; k++) {
        ok = same[k] == 1 && bits[1] == bits[3 + k];
        printf("self-check: exact sum, %ux%u threads vs %ux%u threads: limbs %s, %08x vs %08x %s\n",
               k_sacc_main.blocks, k_sacc_main.threads, others[k].blocks, others[k].threads,
               same[k] == 1 ? "same" : "differ", bits[1], bits[3 + k], ok ? "ok" : "FAIL");
        fails += !ok;
    }
    return fails;
}

/* Records every stage of h into card, with the CPU fixture's tags, dtypes,
 * counts and order (src/fixtures/profile_core.c). */
static void record_card(sb_card *card, const host_out *h) {
    check_sb(sb_card_record(card, "rng.philox_words", SB_DTYPE_U32, h->words, 4 * SB_CORE_N_RNG), "record");
    check_sb(sb_card_record(card, "rng.unit_f32", SB_DTYPE_F32, h->unit, SB_CORE_N_RNG), "record");
    check_sb(sb_card_record(card, "rng.open_unit_f32", SB_DTYPE_F32, h->open_unit, SB_CORE_N_RNG), "record");
    check_sb(sb_card_record(card, "rng.below", SB_DTYPE_U32, h->below, SB_CORE_N_RNG), "record");
    check_sb(sb_card_record(card, "math.input", SB_DTYPE_F32, h->x, SB_CORE_N_MATH), "record");
    for (int k = 0; k < FN_COUNT; k++)
        check_sb(sb_card_record(card, k_fn_tags[k], SB_DTYPE_F32, h->y[k], SB_CORE_N_MATH), "record");
    check_sb(sb_card_record(card, "reduce.input", SB_DTYPE_F32, h->s, SB_CORE_N_SUM), "record");
    check_sb(sb_card_record(card, "reduce.tree_sum", SB_DTYPE_F32, &h->tree_sum, 1), "record");
    check_sb(sb_card_record(card, "reduce.exact_sum", SB_DTYPE_F32, &h->exact_sum, 1), "record");
}

/* Writes n bytes at p to dir/name; returns 0, or -1 with a message. */
static int write_file(const char *dir, const char *name, const void *p, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "profile_core_cuda: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Dumps every stage of h as raw host-order bytes, one file per stage named
 * <tag>.bin, into dir (created if missing), for element-wise comparison with
 * a CPU run (tools/device-run.sh). Returns 0, or -1 with a message. */
static int dump_stages(const char *dir, const host_out *h) {
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "profile_core_cuda: cannot create %s: %s\n", dir, strerror(errno));
        return -1;
    }
    int r = 0;
    r |= write_file(dir, "rng.philox_words.bin", h->words, sizeof h->words);
    r |= write_file(dir, "rng.unit_f32.bin", h->unit, sizeof h->unit);
    r |= write_file(dir, "rng.open_unit_f32.bin", h->open_unit, sizeof h->open_unit);
    r |= write_file(dir, "rng.below.bin", h->below, sizeof h->below);
    r |= write_file(dir, "math.input.bin", h->x, sizeof h->x);
    for (int k = 0; k < FN_COUNT; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s.bin", k_fn_tags[k]);
        r |= write_file(dir, name, h->y[k], sizeof h->y[k]);
    }
    r |= write_file(dir, "reduce.input.bin", h->s, sizeof h->s);
    r |= write_file(dir, "reduce.tree_sum.bin", &h->tree_sum, sizeof(float));
    r |= write_file(dir, "reduce.exact_sum.bin", &h->exact_sum, sizeof(float));
    return r ? -1 : 0;
}

/* qsort comparator of floats (ascending; inputs are finite times). */
static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Prints the usage text to f. */
static void usage(FILE *f) {
    fputs("usage: profile_core_cuda --out CARD [--dump DIR] [--timing FILE] [--repeat N]\n"
          "                         [--device N] [--meta KEY=VALUE]...\n"
          "Runs the profile-core fixture on a CUDA GPU and writes its identity card.\n"
          "  --out CARD       where to write the card (required)\n"
          "  --dump DIR       also write each stage's raw bytes to DIR/<stage>.bin\n"
          "  --timing FILE    also write the per-stage GPU times (median of the repeats)\n"
          "  --repeat N       timed repeats after one warm-up run (default 5); every\n"
          "                   repeat must give the same bytes as the first run\n"
          "  --device N       CUDA device index (default 0)\n"
          "  --meta KEY=VALUE an extra card header field (e.g. the nvcc flags)\n",
          f);
}

/* Entry point: parses options, runs the fixture on the GPU (one warm-up run
 * whose results are recorded, then --repeat timed runs checked against it),
 * runs the self-checks, and writes the card and the optional dump and timing. */
int main(int argc, char **argv) {
    const char *out = NULL, *dump = NULL, *timing = NULL;
    int repeat = 5, device = 0;
    const char *metas[16];
    int nmeta = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        if (!v) { fprintf(stderr, "profile_core_cuda: %s needs a value\n", a); usage(stderr); return 1; }
        if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--dump")) dump = v;
        else if (!strcmp(a, "--timing")) timing = v;
        else if (!strcmp(a, "--repeat")) repeat = atoi(v);
        else if (!strcmp(a, "--device")) device = atoi(v);
        else if (!strcmp(a, "--meta") && strchr(v, '=') && nmeta < 16) metas[nmeta++] = v;
        else { fprintf(stderr, "profile_core_cuda: bad option '%s'\n", a); usage(stderr); return 1; }
        i++;
    }
    if (!out || repeat < 0 || repeat > 1000) { usage(stderr); return 1; }

    CK(cudaSetDevice(device));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, device));
    int driver = 0, runtime = 0;
    CK(cudaDriverGetVersion(&driver));
    CK(cudaRuntimeGetVersion(&runtime));
    printf("device %d: %s, compute capability %d.%d, %d SMs; driver API %d, runtime %d; arm %s\n",
           device, prop.name, prop.major, prop.minor, prop.multiProcessorCount, driver, runtime,
           SB_CUDA_ARM_NAME);

    init_nleaves();
    dev_bufs b;
    memset(&b, 0, sizeof b);
    alloc_bufs(&b);
    host_out *h = (host_out *)calloc(1, sizeof(host_out));
    host_out *h2 = (host_out *)calloc(1, sizeof(host_out));
    float *times = (float *)calloc((size_t)(repeat > 0 ? repeat : 1) * T_COUNT, sizeof(float));
    if (!h || !h2 || !times) { fprintf(stderr, "profile_core_cuda: out of memory\n"); return 3; }

    /* Run 0 (includes module load): its results are the ones recorded. */
    float ms[T_COUNT];
    poison_bufs(&b);
    run_pipeline(&b, h, ms);
    int fails = 0;
    for (int r = 0; r < repeat; r++) {
        poison_bufs(&b);
        run_pipeline(&b, h2, &times[(size_t)r * T_COUNT]);
        if (memcmp(h, h2, sizeof *h) != 0) {
            printf("self-check: repeat %d gave different bytes from the first run: FAIL\n", r + 1);
            fails++;
        }
    }
    if (repeat > 0) printf("self-check: %d repeats gave the first run's bytes: %s\n", repeat, fails ? "FAIL" : "ok");
    fails += self_checks(&b);

    /* Per-stage times: median over the repeats (run 0 if there were none). */
    char tbuf[4096];
    size_t tl = 0;
    float total = 0.0f;
    tl += (size_t)snprintf(tbuf + tl, sizeof tbuf - tl, "# GPU time per stage group, ms (median of %d runs after a warm-up; CUDA events)\n",
                           repeat > 0 ? repeat : 1);
    for (int k = 0; k < T_COUNT; k++) {
        float col[1000];
        int nr = repeat > 0 ? repeat : 1;
        for (int r = 0; r < nr; r++) col[r] = repeat > 0 ? times[(size_t)r * T_COUNT + k] : ms[k];
        qsort(col, (size_t)nr, sizeof(float), cmp_float);
        float med = col[nr / 2];
        total += med;
        tl += (size_t)snprintf(tbuf + tl, sizeof tbuf - tl, "%-28s %10.4f\n", k_timer_names[k], med);
    }
    tl += (size_t)snprintf(tbuf + tl, sizeof tbuf - tl, "%-28s %10.4f\n", "total", total);
    fputs(tbuf, stdout);
    if (timing) {
        FILE *f = fopen(timing, "w");
        if (!f || fputs(tbuf, f) < 0 || fclose(f) != 0) {
            fprintf(stderr, "profile_core_cuda: cannot write %s\n", timing);
            return 3;
        }
    }

    /* The card: header fields as close to the CPU card's as they go. */
    sb_card *card;
    check_sb(sb_card_create(&card), "sb_card_create");
    char arch[320], cc[16], sms[16];
    snprintf(arch, sizeof arch, "cuda:%s", prop.name);
    for (char *p = arch; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == '"' || *p == '\\') *p = '_';
    snprintf(cc, sizeof cc, "%d.%d", prop.major, prop.minor);
    snprintf(sms, sizeof sms, "%d", prop.multiProcessorCount);
    check_sb(sb_card_set_meta(card, "arch", arch), "meta arch");
    check_sb(sb_card_set_meta(card, "backend", "cuda"), "meta backend");
    check_sb(sb_card_set_meta(card, "compute_capability", cc), "meta");
    check_sb(sb_card_set_meta(card, "multiprocessors", sms), "meta");
    check_sb(sb_card_set_meta(card, "sabotage", SB_CUDA_ARM_NAME), "meta sabotage");
    for (int i = 0; i < nmeta; i++) {
        char kv[512];
        snprintf(kv, sizeof kv, "%s", metas[i]);
        char *eq = strchr(kv, '=');
        *eq = '\0';
        check_sb(sb_card_set_meta(card, kv, eq + 1), "meta (--meta)");
    }
    check_sb(sb_card_set_meta(card, "fixture", "profile-core"), "meta fixture");
    record_card(card, h);
    check_sb(sb_card_save(card, out), "sb_card_save");
    sb_card_free(card);
    printf("card written: %s\n", out);
    if (dump && dump_stages(dump, h) != 0) return 3;

    free_bufs(&b);
    free(h);
    free(h2);
    free(times);
    if (fails) {
        fprintf(stderr, "profile_core_cuda: %d self-check(s) failed\n", fails);
        return 2;
    }
    return 0;
}
