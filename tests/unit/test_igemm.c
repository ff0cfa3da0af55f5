/*
 * test_igemm.c: the CPU's exact integer matrix product (src/backends/cpu/igemm.h).
 *
 *   sb_unit igemm
 *
 * Every path this machine has (scalar, avx2, avx512vnni, amx, forced one at a
 * time through SAMEBITS_CPU_IGEMM) at 1 and at 2 threads, against a reference written
 * here independently (int64 sums, checked to fit int32): hostile shapes (every
 * combination of small sizes around the micro-tile edges, then sampled
 * combinations up to 1000), leading dimensions larger than the rows with
 * garbage in the gaps and sentinels around C, the all -128 / all 127 extremes at
 * K = 32768 (the largest sum the VNNI path's +128 bias can meet), K just past
 * and below a multiple of 4, several k blocks, several packing super-blocks of
 * A and of B (the packing budget shrunk by a test hook), and random data; and
 * calls from inside the worker pool's tasks, as a tiled caller makes them. A path the CPU lacks is printed
 * as "skipped" (and its refusal checked), never counted as a pass. Then the
 * refusals: K = 32769, negative sizes, short leading dimensions, an unknown
 * path name, and out-of-memory for the packing scratch.
 *
 * Then the AMX path once more, on every machine where it can be emulated
 * ("amx-emulated": igemm.c's own packing, tile loop and driver, with C
 * stand-ins for the tile instructions, test_igemm_amx_emu.c): the same cases,
 * threads, nested calls and out-of-memory, and no fault the hardware would
 * raise, every tile configuration released by the task that loaded it.
 */
#include "sb_test.h"
#include "backends/cpu/igemm.h"
#include "igemm_amx_emu.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t ig_rng;
static uint64_t ig_next(void) { /* splitmix64 */
    uint64_t z = (ig_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Fill: 0 uniform int8, 1 only -128 and 127, 2 all -128, 3 all 127, 4 small
 * values in [-3, 3]. */
static void fill(int8_t *x, size_t n, int kind) {
    for (size_t i = 0; i < n; i++) {
        uint64_t r = ig_next();
        switch (kind) {
        case 0: x[i] = (int8_t)(r & 0xFF); break;
        case 1: x[i] = (r & 1) ? 127 : -128; break;
        case 2: x[i] = -128; break;
        case 3: x[i] = 127; break;
        default: x[i] = (int8_t)((int)(r % 7) - 3); break;
        }
    }
}

/* The reference: int64 sums, each checked to fit int32 (it must, K <= 32768). */
static int ref_igemm(int64_t m, int64_t n, int64_t K, const int8_t *a, int64_t lda,
                     const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc) {
    int ok = 1;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            int64_t s = 0;
            for (int64_t q = 0; q < K; q++) s += (int64_t)a[i * lda + q] * b[j * ldb + q];
            if (s < INT32_MIN || s > INT32_MAX) ok = 0;
            c[i * ldc + j] = (int32_t)s;
        }
    return ok;
}

#define SENTINEL ((int32_t)0x5A5A5A5A)

/* The implementation under test: the library's, or the emulated AMX build of
 * the same source (igemm_amx_emu.h). */
typedef struct ig_impl {
    sb_status (*igemm)(int64_t m, int64_t n, int64_t K, const int8_t *a, int64_t lda,
                       const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc);
    void (*pack_budget)(int64_t bytes);
    void (*release_scratch)(void);
    const char *(*path)(void);
} ig_impl;

static const ig_impl g_lib = {sb_cpu_igemm_s8, sb_cpu_igemm_pack_budget_for_tests,
                              sb_cpu_igemm_release_scratch, sb_cpu_igemm_path};
static const ig_impl g_emu = {sb_emu_igemm_s8, sb_emu_igemm_pack_budget_for_tests,
                              sb_emu_igemm_release_scratch, sb_emu_igemm_path};
static const ig_impl *g_impl = &g_lib;

typedef struct ig_case {
    int64_t m, n, K, lda, ldb, ldc;
    int ka, kb; /* fill kinds */
} ig_case;

static int g_bad_reported;

/* Run one case on the current path and thread count; 1 if identical to the
 * reference and nothing outside the m x n result was written. */
static int run_case(const ig_case *t, const char *path, int threads) {
    /* Exactly the bytes the operands span (so that the sanitizer build sees any
     * read past them), at least one. */
    size_t asz = (size_t)(t->m > 0 && t->K > 0 ? (t->m - 1) * t->lda + t->K : 1);
    size_t bsz = (size_t)(t->n > 0 && t->K > 0 ? (t->n - 1) * t->ldb + t->K : 1);
    size_t csz = (size_t)(t->m * t->ldc) + 32; /* 16 sentinels before and after */
    int8_t *a = malloc(asz), *b = malloc(bsz);
    int32_t *c = malloc(csz * sizeof(int32_t)), *r = malloc(csz * sizeof(int32_t));
    fill(a, asz, 0); /* the gaps between rows hold garbage */
    fill(b, bsz, 0);
    for (int64_t i = 0; i < t->m; i++) fill(a + i * t->lda, (size_t)t->K, t->ka);
    for (int64_t j = 0; j < t->n; j++) fill(b + j * t->ldb, (size_t)t->K, t->kb);
    for (size_t i = 0; i < csz; i++) c[i] = r[i] = SENTINEL;
    int fits = ref_igemm(t->m, t->n, t->K, a, t->lda, b, t->ldb, r + 16, t->ldc);
    sb_status st = g_impl->igemm(t->m, t->n, t->K, a, t->lda, b, t->ldb, c + 16, t->ldc);
    int ok = fits && st == SB_OK && memcmp(c, r, csz * sizeof(int32_t)) == 0;
    if (!ok && g_bad_reported++ < 8) {
        size_t at = 0;
        while (at < csz && c[at] == r[at]) at++;
        fprintf(stderr,
                "  igemm %s threads=%d m=%lld n=%lld K=%lld lda=%lld ldb=%lld ldc=%lld "
                "fill=%d,%d: status %s%s",
                path, threads, (long long)t->m, (long long)t->n, (long long)t->K,
                (long long)t->lda, (long long)t->ldb, (long long)t->ldc, t->ka, t->kb,
                sb_status_name(st), fits ? "" : " (reference overflow)");
        if (at < csz)
            fprintf(stderr, ", first difference at C[%lld]: %d, reference %d",
                    (long long)at - 16, (int)c[at], (int)r[at]);
        fprintf(stderr, "\n");
    }
    free(a);
    free(b);
    free(c);
    free(r);
    return ok;
}

static const int64_t g_sizes[] = {0, 1, 2, 3, 5, 7, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129, 255, 1000};
#define NSIZES ((int)(sizeof g_sizes / sizeof g_sizes[0]))
static const int64_t g_small[] = {0, 1, 7, 16, 17, 63, 65};
#define NSMALL ((int)(sizeof g_small / sizeof g_small[0]))

static int64_t pad_ld(int64_t len) {
    static const int64_t extra[] = {0, 0, 1, 3, 64};
    return len + extra[ig_next() % 5];
}

/* Every case of the suite on the current path and thread count: the number failed. */
static int run_all(const char *path, int threads, int *count) {
    int bad = 0, n = 0;
    ig_rng = 0x1234567ull; /* the same cases for every path and thread count */
    /* Every combination of the small sizes (micro-tile edges: 8 x 48, 6 x 16, k by 4, 2). */
    for (int x = 0; x < NSMALL; x++)
        for (int y = 0; y < NSMALL; y++)
            for (int z = 0; z < NSMALL; z++) {
                ig_case t = {g_small[x], g_small[y], g_small[z], 0, 0, 0, 0, 0};
                t.lda = pad_ld(t.K);
                t.ldb = pad_ld(t.K);
                t.ldc = pad_ld(t.n);
                t.ka = (int)(ig_next() % 5);
                t.kb = (int)(ig_next() % 5);
                bad += !run_case(&t, path, threads);
                n++;
            }
    /* Sampled combinations of all sizes, at most 2^25 products each. */
    for (int s = 0; s < 90;) {
        ig_case t = {g_sizes[ig_next() % NSIZES], g_sizes[ig_next() % NSIZES],
                     g_sizes[ig_next() % NSIZES], 0, 0, 0, 0, 0};
        if (t.m * t.n * t.K > ((int64_t)1 << 25)) continue;
        t.lda = pad_ld(t.K);
        t.ldb = pad_ld(t.K);
        t.ldc = pad_ld(t.n);
        t.ka = (int)(ig_next() % 2);
        t.kb = (int)(ig_next() % 2);
        bad += !run_case(&t, path, threads);
        n++;
        s++;
    }
    /* Larger than one task tile and one k block in every direction. */
    {
        static const ig_case big[] = {
            {1000, 1000, 33, 33, 40, 1000, 0, 0},
            {401, 785, 1029, 1029, 1031, 800, 1, 0},
            {1000, 17, 1000, 1001, 1000, 17, 0, 1},
            {3, 1000, 1000, 1000, 1064, 1003, 0, 0},
        };
        for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
            bad += !run_case(&big[i], path, threads);
            n++;
        }
    }
    /* Several super-blocks of A and of B (one task tile each): the budget shrunk. */
    {
        static const ig_case sup[] = {
            {1000, 1000, 20, 21, 20, 1000, 0, 0},
            {401, 785, 129, 129, 129, 785, 0, 1},
            {1, 1000, 65, 65, 70, 1000, 1, 1},
            {777, 3, 7, 7, 7, 3, 0, 0},
        };
        g_impl->pack_budget(1);
        for (size_t i = 0; i < sizeof sup / sizeof sup[0]; i++) {
            bad += !run_case(&sup[i], path, threads);
            n++;
        }
        g_impl->pack_budget(0);
    }
    /* The extremes at the largest K (and just below: a partial last group), over
     * more rows and columns than one micro-tile. */
    {
        static const int64_t ks[] = {32768, 32767, 32765};
        static const int kinds[][2] = {{2, 2}, {2, 3}, {3, 2}, {3, 3}, {1, 1}};
        for (int ki = 0; ki < 3; ki++)
            for (int f = 0; f < 5; f++) {
                if (ki > 0 && f > 1) continue;
                ig_case t = {9, 49, ks[ki], ks[ki] + 5, ks[ki], 50, kinds[f][0], kinds[f][1]};
                bad += !run_case(&t, path, threads);
                n++;
            }
        ig_case t = {17, 65, 32768, 32768, 32768, 65, 0, 0};
        bad += !run_case(&t, path, threads);
        n++;
    }
    *count = n;
    return bad;
}

/* Calls from inside tasks of the worker pool, as a larger product calls it per
 * tile (src/linalg/gemm.c): each task multiplies its own block of rows, on
 * whichever worker runs it, every worker keeping its own scratch. */
typedef struct nested_job {
    int64_t rows, n, K;
    const int8_t *a, *b;
    int32_t *c;
    sb_status *status;
} nested_job;

static void nested_task(void *ctx, int64_t t) {
    const nested_job *j = ctx;
    j->status[t] = g_impl->igemm(j->rows, j->n, j->K, j->a + t * j->rows * j->K, j->K, j->b, j->K,
                                   j->c + t * j->rows * j->n, j->n);
}

static int run_nested(void) {
    enum { T = 8, ROWS = 70, N = 50, KK = 300 };
    int8_t *a = malloc(T * ROWS * KK), *b = malloc(N * KK);
    int32_t *c = malloc(sizeof(int32_t) * T * ROWS * N), *r = malloc(sizeof(int32_t) * T * ROWS * N);
    sb_status st[T];
    fill(a, T * ROWS * KK, 0);
    fill(b, N * KK, 1);
    ref_igemm(T * ROWS, N, KK, a, KK, b, KK, r, N);
    int ok = 1;
    for (int rep = 0; rep < 3; rep++) { /* again: now from the kept scratch */
        memset(c, 0, sizeof(int32_t) * T * ROWS * N);
        nested_job j = {ROWS, N, KK, a, b, c, st};
        sb_parallel_for(T, nested_task, &j);
        for (int t = 0; t < T; t++) ok &= st[t] == SB_OK;
        ok &= memcmp(c, r, sizeof(int32_t) * T * ROWS * N) == 0;
    }
    free(a);
    free(b);
    free(c);
    free(r);
    return ok;
}

/* What the call says when forced to a path this CPU lacks. */
static void check_refused(const char *path) {
    int8_t a[4] = {1, 2, 3, 4}, b[4] = {1, 1, 1, 1};
    int32_t c[1] = {SENTINEL};
    SB_CHECK(strcmp(sb_cpu_igemm_path(), "refused") == 0);
    SB_CHECK(sb_cpu_igemm_s8(1, 1, 4, a, 4, b, 4, c, 1) == SB_ERR_BACKEND_UNAVAILABLE);
    SB_CHECK(strstr(sb_last_error(), path) != NULL);
    SB_CHECK(strstr(sb_last_error(), "SAMEBITS_CPU_IGEMM") != NULL);
    SB_CHECK(c[0] == SENTINEL);
}

static void check_refusals(void) {
    int8_t a[8] = {0}, b[8] = {0};
    int32_t c[4] = {SENTINEL, SENTINEL, SENTINEL, SENTINEL};
    unsetenv("SAMEBITS_CPU_IGEMM");
    SB_CHECK(sb_cpu_igemm_s8(1, 1, 32769, a, 32769, b, 32769, c, 1) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "K=32769") != NULL);
    SB_CHECK(strstr(sb_last_error(), "32768") != NULL);
    SB_CHECK(c[0] == SENTINEL);
    SB_CHECK(sb_cpu_igemm_s8(-1, 1, 4, a, 4, b, 4, c, 1) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "negative") != NULL);
    SB_CHECK(sb_cpu_igemm_s8(1, -1, 4, a, 4, b, 4, c, 1) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_cpu_igemm_s8(1, 1, -4, a, 4, b, 4, c, 1) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_cpu_igemm_s8(1, 1, 8, a, 4, b, 8, c, 1) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "lda") != NULL);
    SB_CHECK(sb_cpu_igemm_s8(1, 1, 8, a, 8, b, 7, c, 1) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "ldb") != NULL);
    SB_CHECK(sb_cpu_igemm_s8(2, 2, 4, a, 4, b, 4, c, 1) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "ldc") != NULL);
    SB_CHECK(sb_cpu_igemm_s8(1, 1, 4, NULL, 4, b, 4, c, 1) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(c[0] == SENTINEL);
    /* Empty products: nothing read, nothing written; K = 0 writes zeros. */
    SB_CHECK(sb_cpu_igemm_s8(0, 5, 4, NULL, 4, NULL, 4, NULL, 5) == SB_OK);
    SB_CHECK(sb_cpu_igemm_s8(3, 0, 4, NULL, 4, NULL, 4, c, 0) == SB_OK);
    SB_CHECK(c[0] == SENTINEL);
    SB_CHECK(sb_cpu_igemm_s8(1, 3, 0, NULL, 0, NULL, 0, c, 3) == SB_OK);
    SB_CHECK(c[0] == 0 && c[1] == 0 && c[2] == 0 && c[3] == SENTINEL);
    /* A name that is no path. */
    setenv("SAMEBITS_CPU_IGEMM", "avx512", 1);
    SB_CHECK(strcmp(sb_cpu_igemm_path(), "refused") == 0);
    SB_CHECK(sb_cpu_igemm_s8(1, 1, 4, a, 4, b, 4, c, 1) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "'avx512'") != NULL);
    SB_CHECK(strstr(sb_last_error(), "avx512vnni") != NULL);
    SB_CHECK(strstr(sb_last_error(), "amx") != NULL);
    unsetenv("SAMEBITS_CPU_IGEMM");
}

/* Out of memory for the packing scratch: named, and nothing written. */
static void check_oom(const char *path) {
    enum { M = 20, N = 50, K = 40 };
    static int8_t a[M * K], b[N * K];
    static int32_t c[M * N];
    for (int i = 0; i < M * N; i++) c[i] = SENTINEL;
    /* The one allocation of the call fails, whether or not a smaller scratch was kept. */
    for (int kept = 0; kept < 2; kept++) {
        g_impl->release_scratch();
        if (kept) SB_CHECK(g_impl->igemm(1, 1, 4, a, K, b, K, c, N) == SB_OK);
        sb_alloc_fail_at_for_tests(1);
        sb_status st = g_impl->igemm(M, N, K, a, K, b, K, c, N);
        sb_alloc_fail_at_for_tests(0);
        if (strcmp(path, "scalar") == 0) { /* allocates nothing */
            SB_CHECK(st == SB_OK);
            continue;
        }
        SB_CHECK(st == SB_ERR_OUT_OF_MEMORY);
        SB_CHECK(strstr(sb_last_error(), "out of memory") != NULL);
        SB_CHECK(strstr(sb_last_error(), path) != NULL);
        SB_CHECK(c[1] == SENTINEL && c[M * N - 1] == SENTINEL);
        /* and the next call is served again */
        SB_CHECK(g_impl->igemm(M, N, K, a, K, b, K, c, N) == SB_OK);
        SB_CHECK(c[M * N - 1] == 0);
        for (int i = 0; i < M * N; i++) c[i] = SENTINEL;
    }
}

/* Every case at 1 and 2 threads, the nested calls, and out-of-memory, on the
 * path the current SAMEBITS_CPU_IGEMM selects in g_impl. */
static void run_path(const char *path, const char *label) {
    for (int threads = 1; threads <= 2; threads++) {
        SB_CHECK(sb_set_num_threads(threads) == SB_OK);
        int count = 0, bad = run_all(path, threads, &count);
        printf("  igemm %-12s threads=%d: %d cases, %d differ from the reference\n", label,
               threads, count, bad);
        SB_CHECK(bad == 0);
        SB_CHECK(run_nested());
    }
    check_oom(path);
}

/* The AMX path with emulated tiles (test_igemm_amx_emu.c). */
static void run_amx_emulated(void) {
    g_impl = &g_emu;
    unsetenv("SAMEBITS_CPU_IGEMM");
    if (strcmp(g_emu.path(), "amx") != 0) { /* x86-64 without the packer's AVX-512 */
        printf("  igemm %-12s skipped (default path %s here)\n", "amx-emulated", g_emu.path());
        g_impl = &g_lib;
        return;
    }
    setenv("SAMEBITS_CPU_IGEMM", "amx", 1);
    SB_CHECK(strcmp(g_emu.path(), "amx") == 0);
    sb_emu_amx_counts before, after;
    sb_emu_amx_get_counts(&before);
    run_path("amx", "amx-emulated");
    sb_emu_amx_get_counts(&after);
    printf("  igemm %-12s %ld TDPBSSD, %ld tile configurations, %ld releases, %ld faults\n",
           "amx-emulated", after.dps - before.dps, after.configs - before.configs,
           after.releases - before.releases, after.faults);
    SB_CHECK(after.faults == 0);
    SB_CHECK(after.live == 0);                /* no thread left holding tiles */
    SB_CHECK(after.dps > before.dps);         /* the tiles were used at all */
    SB_CHECK(after.configs - before.configs == after.releases - before.releases);
    SB_CHECK(sb_set_num_threads(0) == SB_OK);
    unsetenv("SAMEBITS_CPU_IGEMM");
    g_impl = &g_lib;
}

SB_TEST(igemm) {
    static const char *const paths[] = {"scalar", "avx2", "avx512vnni", "amx"};
    unsetenv("SAMEBITS_CPU_IGEMM");
    g_impl = &g_lib;
    const char *best = sb_cpu_igemm_path();
    printf("  igemm: default path %s\n", best);
    SB_CHECK(strcmp(best, "refused") != 0);
    g_bad_reported = 0;
    for (int p = 0; p < 4; p++) {
        setenv("SAMEBITS_CPU_IGEMM", paths[p], 1);
        if (strcmp(sb_cpu_igemm_path(), paths[p]) != 0) {
            printf("  igemm %-12s skipped (this CPU lacks it)\n", paths[p]);
            check_refused(paths[p]);
            continue;
        }
        run_path(paths[p], paths[p]);
    }
    SB_CHECK(sb_set_num_threads(0) == SB_OK);
    unsetenv("SAMEBITS_CPU_IGEMM");
    check_refusals();
    run_amx_emulated();
}

/* ---- a Gram's digit pairs on AMX (igemm.h: sb_cpu_amxg_pack4, sb_cpu_igemm_gram_amx) ---- */

typedef struct gram_impl {
    const char *name;
    int (*on)(void);
    int64_t (*bytes)(int64_t, int64_t);
    void (*pack)(const float *, int64_t, const float *, int64_t, int64_t, int64_t, int64_t, const double *, uint8_t *, uint8_t *);
    sb_status (*gram)(int64_t, int64_t, const uint8_t *, const uint8_t *, void (*)(void *, int64_t, int64_t, const int32_t *),
                      void *);
} gram_impl;

/* The fold of the test: each pair's digit products into the seven weights,
 * parts[w * L * L + i * L + j] for j >= i (pairs arrive once each, on any thread). */
typedef struct gram_fold_ctx {
    int32_t *parts;
    int64_t L;
    int calls_bad;
} gram_fold_ctx;

static void gram_test_fold(void *ctx, int64_t pi, int64_t pj, const int32_t *c) {
    gram_fold_ctx *f = ctx;
    if (pj < pi) f->calls_bad = 1;
    for (int64_t a = 0; a < 8 && 8 * pi + a < f->L; a++)
        for (int64_t b = 0; b < 8 && 8 * pj + b < f->L; b++) {
            const int64_t i = 8 * pi + a, jj = 8 * pj + b;
            if (jj < i) continue;
            for (int w = 0; w < 7; w++) {
                int32_t sum = 0;
                for (int d1 = w - 3 > 0 ? w - 3 : 0; d1 <= (w < 3 ? w : 3); d1++) sum += c[(4 * a + d1) * 32 + 4 * b + (w - d1)];
                f->parts[w * f->L * f->L + i * f->L + jj] = sum;
            }
        }
}

/* The pass's seven weighted sums by their definition: each element's four
 * balanced base-256 digits of RNE(x * scale) (0 for a nonfinite x or past k),
 * every digit pair of lines i <= j multiplied and added. */
static void gram_reference(const float *x, int64_t qs, int64_t L, int64_t k, int64_t q0, int64_t len,
                           const double *scale, int64_t *ref) {
    memset(ref, 0, sizeof(int64_t) * (size_t)(7 * L * L));
    int32_t *dig = malloc(sizeof(int32_t) * (size_t)(4 * L * (len > 0 ? len : 1)));
    for (int64_t l = 0; l < L; l++)
        for (int64_t u = 0; u < len; u++) {
            const int64_t q = q0 + u;
            int64_t t = 0;
            if (q < k) {
                const float v = x[l + q * qs];
                if (isfinite(v)) t = (int64_t)nearbyint((double)v * scale[l]);
            }
            for (int d = 0; d < 4; d++) {
                const int64_t dd = ((t + 128) & 255) - 128;
                dig[(l * 4 + d) * len + u] = (int32_t)dd;
                t = (t - dd) / 256;
            }
        }
    for (int64_t i = 0; i < L; i++)
        for (int64_t jj = i; jj < L; jj++)
            for (int d1 = 0; d1 < 4; d1++)
                for (int d2 = 0; d2 < 4; d2++) {
                    int64_t sum = 0;
                    for (int64_t u = 0; u < len; u++) sum += (int64_t)dig[(i * 4 + d1) * len + u] * dig[(jj * 4 + d2) * len + u];
                    ref[(d1 + d2) * L * L + i * L + jj] += sum;
                }
    free(dig);
}

static int gram_case(const gram_impl *g, int64_t L, int64_t k, int64_t q0, int64_t len, uint64_t seed) {
    const int64_t qs = L + 3, rows = q0 + len + 5;
    float *x = malloc(sizeof(float) * (size_t)(rows * qs));
    double *scale = malloc(sizeof(double) * (size_t)L);
    uint64_t r = seed;
    for (int64_t i = 0; i < rows * qs; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        const int kind = (int)((r >> 60) & 15);
        float v = (float)((double)(int64_t)(r >> 11) * 0x1p-53 * 2.0 - 1.0);
        if (kind == 0) v = 0.0f;
        else if (kind == 1) v = v * 0x1p-140f; /* subnormal */
        else if (kind == 2 && (r & 0xff) == 7) v = (r & 0x100) ? INFINITY : NAN;
        x[i] = v;
    }
    /* |x| < 1: scales up to 2^30 keep every integer within four digits' 2^30 */
    for (int64_t l = 0; l < L; l++) scale[l] = ldexp(1.0, 28 + (int)(l % 3));
    const int64_t ng = (len + 63) / 64;
    uint8_t *pa = malloc((size_t)g->bytes(L, ng)), *pb = malloc((size_t)g->bytes(L, ng));
    int32_t *parts = malloc(sizeof(int32_t) * (size_t)(7 * L * L));
    int64_t *ref = malloc(sizeof(int64_t) * (size_t)(7 * L * L));
    for (int64_t i = 0; i < 7 * L * L; i++) parts[i] = (int32_t)0x5a5a5a5a;
    g->pack(x, qs, NULL, L, k, q0, len, scale, pa, pb);
    gram_fold_ctx fc = {parts, L, 0};
    int bad = g->gram(L, ng, pa, pb, gram_test_fold, &fc) != SB_OK || fc.calls_bad;
    gram_reference(x, qs, L, k, q0, len, scale, ref);
    for (int64_t w = 0; w < 7 && !bad; w++)
        for (int64_t i = 0; i < L && !bad; i++)
            for (int64_t jj = i; jj < L; jj++)
                if (parts[w * L * L + i * L + jj] != ref[w * L * L + i * L + jj]) {
                    printf("  gram %s: L %lld k %lld q0 %lld len %lld: D_%lld(%lld, %lld) = %d, not %lld\n", g->name,
                           (long long)L, (long long)k, (long long)q0, (long long)len, (long long)w, (long long)i,
                           (long long)jj, parts[w * L * L + i * L + jj], (long long)ref[w * L * L + i * L + jj]);
                    bad = 1;
                    break;
                }
    free(x);
    free(scale);
    free(pa);
    free(pb);
    free(parts);
    free(ref);
    return !bad;
}

static void gram_cases(const gram_impl *g) {
    static const int64_t lines[] = {1, 7, 8, 9, 16, 17, 33, 40, 97};
    int cases = 0, ok = 0;
    for (int scalar = 0; scalar < 2; scalar++) {
        if (scalar) setenv("SAMEBITS_AMXG_PACK", "scalar", 1);
        for (size_t li = 0; li < sizeof lines / sizeof lines[0]; li++)
            for (int threads = 1; threads <= 2; threads++) {
                SB_CHECK(sb_set_num_threads(threads) == SB_OK);
                /* a whole pass, one past a group, one cut by k, one starting inside the data */
                const int64_t shapes[][3] = {{640, 0, 640}, {700, 0, 720}, {300, 0, 512}, {2000, 576, 1024}};
                for (int si = 0; si < 4; si++, cases++)
                    ok += gram_case(g, lines[li], shapes[si][0], shapes[si][1], shapes[si][2],
                                    (uint64_t)(li * 31 + si * 7 + threads + scalar * 1000));
            }
        unsetenv("SAMEBITS_AMXG_PACK");
    }
    SB_CHECK(sb_set_num_threads(0) == SB_OK);
    printf("  gram %-12s %d cases, %d equal the reference\n", g->name, cases, ok);
    SB_CHECK(ok == cases);
}

SB_TEST(igemm_gram_amx) {
    unsetenv("SAMEBITS_CPU_IGEMM");
    const gram_impl lib = {"amx", sb_cpu_igemm_gram_amx_on, sb_cpu_amxg_bytes, sb_cpu_amxg_pack4, sb_cpu_igemm_gram_amx};
    const gram_impl emu = {"amx-emulated", sb_emu_igemm_gram_amx_on, sb_emu_amxg_bytes, sb_emu_amxg_pack4,
                           sb_emu_igemm_gram_amx};
    if (lib.on()) gram_cases(&lib);
    else {
        printf("  gram amx skipped (default path %s here); refused by name:\n", sb_cpu_igemm_path());
        SB_CHECK(sb_cpu_igemm_gram_amx(8, 1, NULL, NULL, gram_test_fold, NULL) == SB_ERR_BACKEND_UNAVAILABLE);
    }
    if (emu.on()) {
        sb_emu_amx_counts before, after;
        sb_emu_amx_get_counts(&before);
        gram_cases(&emu);
        sb_emu_amx_get_counts(&after);
        SB_CHECK(after.faults == 0);
        SB_CHECK(after.live == 0);
        SB_CHECK(after.dps > before.dps);
    } else {
        printf("  gram amx-emulated skipped (default path %s here)\n", sb_emu_igemm_path());
    }
}
