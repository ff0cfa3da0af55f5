/*
 * internal.h: what every source file of the library shares and users never see:
 * error reporting, allocation, and the internal digest and thread interfaces.
 */
#ifndef SB_CORE_INTERNAL_H
#define SB_CORE_INTERNAL_H
/* Both public headers: the library implements the product API and the
 * certification API alike, and its families record stages into cards. */
#include "samebits_cert.h"
#include "float_eval.h"
#include <stddef.h>
#include <stdint.h>

/* Record a message for this thread and return status, so callers can write
 * `return sb_fail(SB_ERR_INVALID_ARGUMENT, "x must be > 0, got %d", x);`. */
sb_status sb_fail(sb_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Clear this thread's message at the start of a public call. */
void sb_clear_error(void);

/* An output buffer's size protocol for want elements: *needed (when asked)
 * gets want; a size query (cap 0, out NULL) is SB_OK; a buffer smaller than
 * want, or NULL with a capacity, is refused by name. Callers write
 * `if ((st = sb_out_size(out, cap, needed, want)) != SB_OK || !out) return st;`. */
sb_status sb_out_size(const void *out, size_t cap, size_t *needed, size_t want);

/* Whether text[0..n) is well-formed UTF-8 (no overlongs, surrogates or code
 * points above U+10FFFF) without NUL bytes: what the model format demands of
 * every string it stores (docs/model-format.md). */
int sb_utf8_valid(const void *text, size_t n);

/* The longest feature name a model can store (docs/model-format.md), so the
 * readers and sb_dataset_set_feature_names refuse a longer one when the data
 * arrives instead of after training, when the model is first serialized. */
#define SB_MAX_NAME_BYTES 65536u
/* A feature name fit for a model: at most SB_MAX_NAME_BYTES bytes
 * (SB_ERR_LIMIT) and valid UTF-8 without NUL (SB_ERR_INVALID_INPUT); the
 * message starts with where and gives index (0-based) as the feature's. */
sb_status sb_check_feature_name(const char *name, size_t n, const char *where, int64_t index);

/* Allocation goes through these so that a test hook can fail the Nth call. */
void *sb_malloc(size_t n);
void *sb_calloc(size_t count, size_t size);
void *sb_realloc(void *p, size_t n);
void sb_free(void *p);
char *sb_strdup(const char *s);
/* Test hooks (status.c): make the nth sb_malloc/sb_calloc/sb_realloc from now
 * fail (0: none) and count from zero; the count of calls since, while n > 0. */
void sb_alloc_fail_at_for_tests(long n);
long sb_alloc_count_for_tests(void);

/* x, rounded to binary32 as a value of its own: no + or - written after it can
 * fuse with the operation that produced it, whatever the compiler's contraction
 * setting (-ffp-contract=fast, the contract arm, a user's compiler that contracts
 * by default). The volatile store is the one portable C11 way to force that
 * rounding. Under the profile's flags every product is rounded anyway, so
 * wrapping one changes no bit; it is for host code whose float work must not
 * depend on the flags at all: the fixtures' input generators and binning, so
 * that a contracting build parts from the reference cards where the training
 * kernels contract, not in its inputs (docs/verification.md). Never in kernel
 * bodies (src/kernels), which GPUs compile and whose sites the arms must reach. */
static inline float sb_round_f32(float x) {
    volatile float v = x;
    return v;
}

/* The position + 1 of v among the n strictly ascending floats c, or 0 when v
 * equals none of them (NaN never does; -0 is 0's): a category code's place in
 * a categorical feature's bins and in a split's code set. Comparisons only. */
static inline int32_t sb_code_pos(const float *c, int32_t n, float v) {
    int32_t lo = 0, hi = n;
    while (lo < hi) {
        const int32_t mid = (lo + hi) >> 1;
        if (c[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && c[lo] == v ? lo + 1 : 0;
}

/* SHA-256 (FIPS 180-4), incremental. */
typedef struct sb_sha256_ctx {
    uint32_t h[8];
    uint64_t length; /* bytes absorbed */
    uint8_t block[64];
    uint32_t fill;
} sb_sha256_ctx;
void sb_sha256_init(sb_sha256_ctx *c);
void sb_sha256_update(sb_sha256_ctx *c, const void *data, size_t n);
void sb_sha256_final(sb_sha256_ctx *c, uint8_t out[32]);
void sb_hex(const uint8_t *bytes, size_t n, char *out /* 2n+1 */);

/* Threads: run body(ctx, task) for task = 0..ntasks-1 on the worker pool.
 * Which thread runs which task is unspecified; callers make tasks a function of
 * the data shape only (docs/numeric-profile.md, rule 8), so the schedule cannot
 * reach the results. Returns after every task has finished. */
typedef void (*sb_task_fn)(void *ctx, int64_t task);
void sb_parallel_for(int64_t ntasks, sb_task_fn body, void *ctx);

/* Inside a task: which thread runs it, in [0, sb_parallel_width()). Only for
 * per-thread scratch whose results are combined exactly (integer sums): the
 * mapping of tasks to workers is a matter of timing. */
int32_t sb_worker_index(void);
/* The thread count a parallel section would use now (1 inside a task). Pair it
 * with sb_parallel_for_width so that worker indices stay below the width that
 * sized the per-thread scratch, even if the thread count changes meanwhile. */
int32_t sb_parallel_width(void);
/* SB_OK, or the named refusal of an invalid SAMEBITS_NUM_THREADS (threads.c):
 * the first call of every public entry point that runs parallel work. */
sb_status sb_threads_ready(void);
void sb_parallel_for_width(int64_t ntasks, int32_t max_workers, sb_task_fn body, void *ctx);

/* Split n items into fixed chunks of `grain` items (the last one shorter):
 * the number of chunks, and the half-open range of chunk k. */
static inline int64_t sb_chunk_count(int64_t n, int64_t grain) {
    return n <= 0 ? 0 : (n + grain - 1) / grain;
}
static inline void sb_chunk_range(int64_t n, int64_t grain, int64_t k, int64_t *begin,
                                  int64_t *end) {
    *begin = k * grain;
    *end = *begin + grain < n ? *begin + grain : n;
}

/* The index-th key=value of params in the order they were first set, or
 * SB_ERR_NOT_FOUND past the end (no message: this is iteration). */
sb_status sb_params_entry(const sb_params *p, int64_t index, const char **key, const char **value);

/* sb_params_parse, but a key of text already in p replaces its value (a
 * fixture's pinned parameters over a caller's extra ones). */
sb_status sb_params_parse_over(sb_params *p, const char *text);
/* SB_ERR_INVALID_ARGUMENT naming both keys when p holds two names of one
 * parameter; groups: "name|alias|..." strings ending with NULL (params.c). */
sb_status sb_params_refuse_aliases(const sb_params *p, const char *const *groups, const char *family);

/* A model parameter's text as an integer in [lo, hi] or a float in [lo, hi]
 * ((lo, hi] when lo_open): a value beyond hi is SB_ERR_LIMIT, anything else
 * out of its domain SB_ERR_INVALID_ARGUMENT, each naming the key. */
sb_status sb_param_int(const char *key, const char *v, int64_t lo, int64_t hi, int64_t *out);
sb_status sb_param_float(const char *key, const char *v, float lo, float hi, int lo_open, float *out);

/* The stream under an sb_output (output.c), for writers that encode through
 * stdio; a writer that saw a failed write reports it with set_error (errno),
 * and commit then fails with one message naming the output's path. */
#include <stdio.h>
FILE *sb_output_stream(sb_output *o);
void sb_output_set_error(sb_output *o, int err);

/* Host endianness, tested at run time (no macros to trust). */
int sb_host_is_big_endian(void);

#endif
