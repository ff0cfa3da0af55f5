/*
 * cpu_reduce.c: fixed-shape float reductions on the worker pool.
 *
 * Tasks cover whole groups of SB_REDUCE_BLOCK-element leaves; each task writes
 * its leaves' sums into their own slots and the slots are then combined by the
 * one tree of sb_reduce.h. Which thread computed a leaf cannot matter.
 * Under SABOTAGE=thread-chunks the range is instead cut into one chunk per
 * thread, summed left to right: the classic thread-count-dependent reduction
 * that the suite must catch.
 */
#include "cpu.h"
#include "../../math/sb_math.h"
#include <string.h>

#define LEAVES_PER_TASK 64

typedef struct sum_job {
    const float *x;
    int64_t n;
    float *partials;
} sum_job;

#ifndef SB_SABOTAGE_THREAD_CHUNKS
static void sum_leaves(void *ctx, int64_t task) {
    sum_job *j = ctx;
    int64_t nleaves = sb_chunk_count(j->n, SB_REDUCE_BLOCK);
    int64_t first = task * LEAVES_PER_TASK;
    int64_t last = first + LEAVES_PER_TASK < nleaves ? first + LEAVES_PER_TASK : nleaves;
    for (int64_t leaf = first; leaf < last; leaf++) {
        int64_t b, e;
        sb_chunk_range(j->n, SB_REDUCE_BLOCK, leaf, &b, &e);
        j->partials[leaf] = sb_block_sum_f32(j->x, b, e);
    }
}
#else
static void sum_thread_chunk(void *ctx, int64_t task) {
    sum_job *j = ctx;
    int32_t nt = 1;
    sb_get_num_threads(&nt);
    int64_t grain = (j->n + nt - 1) / nt;
    int64_t b = task * grain, e = b + grain < j->n ? b + grain : j->n;
    float s = 0.0f;
    for (int64_t i = b; i < e; i++) s += j->x[i];
    j->partials[task] = s;
}
#endif

sb_status sb_cpu_sum_f32(const float *x, int64_t n, float *out) {
    if (n <= 0) {
        *out = 0.0f;
        return SB_OK;
    }
#ifdef SB_SABOTAGE_THREAD_CHUNKS
    int32_t nt = 1;
    sb_get_num_threads(&nt);
    float *p = sb_malloc(sizeof(float) * (size_t)nt);
    if (!p) return sb_fail(SB_ERR_OUT_OF_MEMORY, "sum: out of memory");
    sum_job tj = {x, n, p};
    int64_t grain = (n + nt - 1) / nt;
    int64_t chunks = sb_chunk_count(n, grain);
    sb_parallel_for(chunks, sum_thread_chunk, &tj);
    float s = 0.0f;
    for (int64_t k = 0; k < chunks; k++) s += p[k];
    sb_free(p);
    *out = s;
    return SB_OK;
#else
    int64_t nleaves = sb_chunk_count(n, SB_REDUCE_BLOCK);
    float *partials = sb_malloc(sizeof(float) * (size_t)nleaves);
    if (!partials) return sb_fail(SB_ERR_OUT_OF_MEMORY, "sum: out of memory");
    sum_job j = {x, n, partials};
    sb_parallel_for(sb_chunk_count(nleaves, LEAVES_PER_TASK), sum_leaves, &j);
    *out = sb_tree_combine_f32(partials, nleaves);
    sb_free(partials);
    return SB_OK;
#endif
}

#define EXACT_GRAIN 65536

typedef struct exact_job {
    const float *x;
    int64_t n;
    sb_sacc *accs;
} exact_job;

static void exact_chunk(void *ctx, int64_t task) {
    exact_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, EXACT_GRAIN, task, &b, &e);
    sb_sacc_init(&j->accs[task]);
    sb_sacc_add_range(&j->accs[task], j->x, b, e);
}

sb_status sb_cpu_exact_sum_f32(const float *x, int64_t n, float *out) {
    int64_t chunks = sb_chunk_count(n, EXACT_GRAIN);
    sb_sacc total;
    sb_sacc_init(&total);
    if (chunks > 0) {
        sb_sacc *accs = sb_malloc(sizeof(sb_sacc) * (size_t)chunks);
        if (!accs) return sb_fail(SB_ERR_OUT_OF_MEMORY, "exact sum: out of memory");
        exact_job j = {x, n, accs};
        sb_parallel_for(chunks, exact_chunk, &j);
        for (int64_t k = 0; k < chunks; k++) sb_sacc_merge(&total, &accs[k]);
        sb_free(accs);
    }
    *out = sb_sacc_round_f32(&total);
    return SB_OK;
}

typedef struct prod_job {
    const float *x;
    int64_t nrows;
    int32_t nf;
    const float *g;
    float *prod; /* nf columns of nrows products, column-major */
} prod_job;

static void products(void *ctx, int64_t task) {
    prod_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->nrows, SB_CPU_ROW_GRAIN, task, &b, &e);
    for (int64_t r = b; r < e; r++)
        for (int32_t f = 0; f < j->nf; f++)
            j->prod[(int64_t)f * j->nrows + r] = j->x[r * j->nf + f] * j->g[r];
}

sb_status sb_cpu_weighted_colsum_f32(const float *x, int64_t nrows, int32_t nf, const float *g,
                                     float *out) {
    float *prod = sb_malloc(sizeof(float) * (size_t)(nrows * nf));
    if (!prod) return sb_fail(SB_ERR_OUT_OF_MEMORY, "weighted column sum: out of memory");
    prod_job j = {x, nrows, nf, g, prod};
    sb_parallel_for(sb_chunk_count(nrows, SB_CPU_ROW_GRAIN), products, &j);
    sb_status st = SB_OK;
    for (int32_t f = 0; f < nf && st == SB_OK; f++)
        st = sb_cpu_sum_f32(prod + (int64_t)f * nrows, nrows, &out[f]);
    sb_free(prod);
    return st;
}
