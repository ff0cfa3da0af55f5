/*
 * igemm.c: the CPU's exact int8 x int8 -> int32 matrix product (igemm.h).
 *
 * Four paths compute the same integers:
 *   scalar      plain C loops with int32 sums, on every architecture;
 *   avx2        operands sign-extended to int16 while packing, then
 *               VPMADDWD (exact: |a*b| <= 2^14, a pair sums to <= 2^15) + VPADDD;
 *   avx512vnni  VPDPBUSD (u8 x s8, four products a lane): the A side is stored
 *               biased, a' = a + 128 in [0, 255], and each column j starts from
 *               -128 * sum_q b[j][q], so that what is accumulated is
 *               sum_q (a' - 128) * b = sum_q a * b. No partial sum leaves
 *               int32: |a' * b| <= 255 * 128, times K <= 32768 is < 2^30;
 *   amx         AMX-INT8 TDPBSSD (signed x signed, no bias) on 16 x 64-byte tiles:
 *               2 x 2 accumulator tiles of 16 x 16 int32 per 32 x 32 micro-tile,
 *               A packed as rows of 64 k, B in the VNNI layout (16 rows of k
 *               quads per 16 columns); the sums are those of the scalar path.
 * Because every sum is exact, the order of the additions (blocking, vector
 * width, thread count) cannot reach the result.
 *
 * The vector paths (avx2, avx512vnni, amx) share one blocked driver (BLIS-like):
 *   - B is packed into panels of NR columns, A into panels of MR rows, each
 *     panel interleaved in groups of KG consecutive k (KG = 4 bytes for VNNI,
 *     2 int16 for AVX2, 64 bytes for AMX), zero-padded in k and in the
 *     rows/columns past the edge;
 *   - packed scratch is bounded: A is packed in super-blocks of rows and B in
 *     super-blocks of columns of at most PACK_BUDGET bytes each;
 *   - inside a super-block, the tasks are tiles of MC rows x NC columns of C,
 *     each looping over k blocks of KC, row panels, then column panels (the A
 *     micro-panel stays in L1 while B panels stream from L2), with a
 *     register-blocked micro-kernel of MR x NR int32 accumulators. KC is large
 *     (8192 for VNNI): the register tile needs only ~9 bytes a cycle of its
 *     panels, which L2 gives, and C is then written once and never reloaded
 *     for K <= KC (reloading rows of C 4 KiB apart cost ~7% at n = 1024);
 *   - each calling thread keeps its packing scratch from one call to the next
 *     (scratch_get).
 * Every constant above belongs to the path, none to the machine's thread count:
 * the tasks are a function of (m, n, K) and the path only.
 *
 * Measured on a 2-core Zen 4 (bench/igemm_bench.c, square products): VNNI at
 * ~91% (1024^3) and ~94% (4096^3) of the peak of one VPDPBUSD zmm a cycle a
 * core on one thread, ~88% and ~94% on two; AVX2 at ~90% of what its
 * VPMADDWD + VPADDD mix reaches in a bare loop (about 36% of VNNI). The AMX
 * path has not yet run on AMX hardware: tests/unit/test_igemm_amx_emu.c runs
 * its code here with emulated tiles.
 *
 * x86 code is compiled only for x86-64, each kernel with its own target
 * attribute, so the file builds with the project's ordinary flags everywhere and
 * the path is chosen at run time (__builtin_cpu_supports; for AMX, CPUID and the
 * kernel's grant of the tile state, amx_detect).
 */
#if defined(__x86_64__) && !defined(SB_IGEMM_AMX_EMULATE) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* syscall(2): the AMX tile state is asked of the kernel */
#endif
#include "igemm.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#if defined(__x86_64__) && !defined(SB_IGEMM_AMX_EMULATE)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
/* The AMX path's code is built on x86-64, and also where a test compiles this
 * file with SB_IGEMM_AMX_EMULATE (tests/unit/test_igemm_amx_emu.c), which
 * supplies C stand-ins for the tile instructions. */
#if defined(__x86_64__) || defined(SB_IGEMM_AMX_EMULATE)
#define IG_AMX_CODE 1
#else
#define IG_AMX_CODE 0
#endif

/* ---- path selection -------------------------------------------------------- */

typedef enum ig_path { IG_SCALAR = 0, IG_AVX2 = 1, IG_VNNI = 2, IG_AMX = 3, IG_NPATHS = 4 } ig_path;
static const char *const g_path_names[IG_NPATHS] = {"scalar", "avx2", "avx512vnni", "amx"};

#if defined(__x86_64__)
static int vnni_present(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni");
}
#endif

#if defined(__x86_64__) && !defined(SB_IGEMM_AMX_EMULATE)
/* AMX: the CPU says AMX-TILE and AMX-INT8 (CPUID leaf 7, EDX bits 24 and 25;
 * read directly, as clang 14, the sanitizer build's compiler, has no
 * "amx-int8" for __builtin_cpu_supports), the AVX-512 of the B packer is
 * there, and Linux grants this process the tile data state (XSTATE component
 * 18): it is off for every process until asked for, once, process-wide, with
 * arch_prctl(ARCH_REQ_XCOMP_PERM), and the grant is read back with
 * ARCH_GET_XCOMP_PERM. An older kernel, one without AMX support, or a refusal
 * (e.g. a signal stack too small for the larger state) leaves the path absent. */
#define AMX_ARCH_GET_XCOMP_PERM 0x1022
#define AMX_ARCH_REQ_XCOMP_PERM 0x1023
#define AMX_XFEATURE_XTILEDATA 18
static pthread_once_t g_amx_once = PTHREAD_ONCE_INIT;
static int g_amx_ok;

static void amx_detect(void) {
    unsigned eax, ebx, ecx, edx;
    if (!vnni_present()) return;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return;
    if (!(edx & (1u << 24)) || !(edx & (1u << 25))) return;
    /* syscall(2) reads its arguments as long: passed as such. */
    if (syscall(SYS_arch_prctl, (long)AMX_ARCH_REQ_XCOMP_PERM, (long)AMX_XFEATURE_XTILEDATA) != 0)
        return;
    uint64_t perm = 0;
    if (syscall(SYS_arch_prctl, (long)AMX_ARCH_GET_XCOMP_PERM, &perm) != 0) return;
    g_amx_ok = (int)((perm >> AMX_XFEATURE_XTILEDATA) & 1);
}
#endif

static int amx_present(void) {
#if defined(SB_IGEMM_AMX_EMULATE)
    /* Emulated tiles; on x86-64 the B packer's AVX-512 transpose is real. */
#if defined(__x86_64__)
    return vnni_present();
#else
    return 1;
#endif
#elif defined(__x86_64__)
    pthread_once(&g_amx_once, amx_detect);
    return g_amx_ok;
#else
    return 0;
#endif
}

static int path_present(ig_path p) {
    if (p == IG_SCALAR) return 1;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (p == IG_AVX2) return __builtin_cpu_supports("avx2") != 0;
    if (p == IG_VNNI) return vnni_present();
#endif
    if (p == IG_AMX) return amx_present();
    return 0;
}

/* The path asked for by SAMEBITS_CPU_IGEMM, or the fastest present. */
static sb_status resolve_path(ig_path *out) {
    const char *v = getenv("SAMEBITS_CPU_IGEMM");
    if (!v || !*v) {
        *out = path_present(IG_AMX)    ? IG_AMX
               : path_present(IG_VNNI) ? IG_VNNI
               : path_present(IG_AVX2) ? IG_AVX2
                                       : IG_SCALAR;
        return SB_OK;
    }
    for (int p = 0; p < IG_NPATHS; p++) {
        if (strcmp(v, g_path_names[p]) != 0) continue;
        if (!path_present((ig_path)p))
            return sb_fail(SB_ERR_BACKEND_UNAVAILABLE,
                           "SAMEBITS_CPU_IGEMM=%s: this CPU (or this build's architecture, or for "
                           "amx the kernel's grant of the tile state) has no %s path for the "
                           "integer matrix product", v, v);
        *out = (ig_path)p;
        return SB_OK;
    }
    return sb_fail(SB_ERR_INVALID_ARGUMENT,
                   "SAMEBITS_CPU_IGEMM='%s' is not a path of the integer matrix product; known: "
                   "scalar, avx2, avx512vnni, amx", v);
}

const char *sb_cpu_igemm_path(void) {
    ig_path p;
    if (resolve_path(&p) != SB_OK) return "refused";
    return g_path_names[p];
}

/* ---- scalar path ----------------------------------------------------------- */

typedef struct ig_args {
    int64_t m, n, K;
    const int8_t *a;
    int64_t lda;
    const int8_t *b;
    int64_t ldb;
    int32_t *c;
    int64_t ldc;
    int upper; /* only the elements j >= i are wanted (micro-tiles wholly below the diagonal are skipped) */
} ig_args;

#define SCALAR_ROWS 16
#define SCALAR_COLS 256

static void scalar_tile(void *ctx, int64_t task) {
    const ig_args *g = ctx;
    int64_t ntc = sb_chunk_count(g->n, SCALAR_COLS);
    int64_t i0, i1, j0, j1;
    sb_chunk_range(g->m, SCALAR_ROWS, task / ntc, &i0, &i1);
    sb_chunk_range(g->n, SCALAR_COLS, task % ntc, &j0, &j1);
    for (int64_t i = i0; i < i1; i++) {
        const int8_t *ar = g->a + i * g->lda;
        for (int64_t j = j0; j < j1; j++) {
            const int8_t *br = g->b + j * g->ldb;
            int32_t s = 0;
            for (int64_t q = 0; q < g->K; q++) s += (int32_t)ar[q] * (int32_t)br[q];
            g->c[i * g->ldc + j] = s;
        }
    }
}

static void run_scalar(const ig_args *g) {
    sb_parallel_for(sb_chunk_count(g->m, SCALAR_ROWS) * sb_chunk_count(g->n, SCALAR_COLS),
                    scalar_tile, (void *)g);
}

/* ---- the blocked driver of the vector paths --------------------------------- */

/* Pack `count` (<= the panel width) rows of src (row stride ld) over k in [0, K)
 * into one panel, zero-padded to the panel width and to whole k groups. The B
 * packer also writes the panel width's column biases (what each column's sum
 * starts from). */
typedef void (*ig_pack_fn)(const int8_t *src, int64_t ld, int64_t count, int64_t K, void *dst,
                           int32_t *bias);
/* c[r*ldc + j] (r < mr, j < nr) = (bias ? bias[j] : c[r*ldc + j]) + the products of
 * ng k groups of one A panel and one B panel. */
typedef void (*ig_kernel_fn)(const void *ap, const void *bp, int64_t ng, int32_t *c, int64_t ldc,
                             const int32_t *bias, int32_t mr, int32_t nr);

/* Around every task tile, on the thread that runs it (NULL: nothing): the AMX
 * path loads its tile configuration before the task's first kernel and
 * releases the tiles after its last. */
typedef void (*ig_task_hook_fn)(void);

typedef struct ig_kind {
    int32_t mr, nr; /* micro-tile: rows of an A panel, columns of a B panel */
    int32_t kg;     /* k values per interleaved group */
    int32_t esz;    /* bytes per packed value */
    int32_t kc;     /* k values per k block (a multiple of kg) */
    int32_t mc, nc; /* task tile: rows (a multiple of mr) and columns (of nr) */
    ig_pack_fn pack_a, pack_b;
    ig_kernel_fn kernel;
    ig_task_hook_fn task_begin, task_end;
} ig_kind;

/* Bytes of packed A (and, separately, of packed B) held at once; the tests
 * shrink it to reach the super-block loops with small shapes. */
#define PACK_BUDGET ((int64_t)16 << 20)
static int64_t g_pack_budget_for_tests;

void sb_cpu_igemm_pack_budget_for_tests(int64_t bytes) { g_pack_budget_for_tests = bytes; }
/* Panels packed per packing task. */
#define PACK_PANELS 4

typedef struct ig_job {
    const ig_args *g;
    const ig_kind *k;
    int64_t kp;          /* K rounded up to whole groups */
    uint8_t *ap, *bp;    /* packed super-blocks (64-byte aligned) */
    int32_t *bias;       /* per packed column of the B super-block */
    int64_t i0, rows;    /* the A super-block: rows [i0, i0 + rows) */
    int64_t j0, cols;    /* the B super-block */
    int64_t npack_b;     /* packing tasks: the first npack_b pack B, the others A */
} ig_job;

static int64_t panel_bytes(const ig_job *j, int32_t width) {
    return (int64_t)width * j->kp * j->k->esz;
}

static void pack_a_panels(const ig_job *j, int64_t task) {
    const ig_kind *k = j->k;
    int64_t np = sb_chunk_count(j->rows, k->mr), p0, p1;
    sb_chunk_range(np, PACK_PANELS, task, &p0, &p1);
    for (int64_t p = p0; p < p1; p++) {
        int64_t r = p * k->mr, cnt = j->rows - r < k->mr ? j->rows - r : k->mr;
        k->pack_a(j->g->a + (j->i0 + r) * j->g->lda, j->g->lda, cnt, j->g->K,
                  j->ap + p * panel_bytes(j, k->mr), NULL);
    }
}

static void pack_b_panels(const ig_job *j, int64_t task) {
    const ig_kind *k = j->k;
    int64_t np = sb_chunk_count(j->cols, k->nr), p0, p1;
    sb_chunk_range(np, PACK_PANELS, task, &p0, &p1);
    for (int64_t p = p0; p < p1; p++) {
        int64_t c = p * k->nr, cnt = j->cols - c < k->nr ? j->cols - c : k->nr;
        k->pack_b(j->g->b + (j->j0 + c) * j->g->ldb, j->g->ldb, cnt, j->g->K,
                  j->bp + p * panel_bytes(j, k->nr), j->bias + c);
    }
}

static void pack_task(void *ctx, int64_t task) {
    const ig_job *j = ctx;
    if (task < j->npack_b) pack_b_panels(j, task);
    else pack_a_panels(j, task - j->npack_b);
}

static void tile_task(void *ctx, int64_t task) {
    const ig_job *j = ctx;
    const ig_kind *k = j->k;
    const ig_args *g = j->g;
    int64_t ntc = sb_chunk_count(j->cols, k->nc);
    int64_t r0, r1, c0, c1;
    sb_chunk_range(j->rows, k->mc, task / ntc, &r0, &r1);
    sb_chunk_range(j->cols, k->nc, task % ntc, &c0, &c1);
    int64_t abytes = panel_bytes(j, k->mr), bbytes = panel_bytes(j, k->nr);
    if (k->task_begin) k->task_begin();
    for (int64_t q0 = 0; q0 < j->kp; q0 += k->kc) {
        int64_t ng = (j->kp - q0 < k->kc ? j->kp - q0 : k->kc) / k->kg;
        for (int64_t r = r0; r < r1; r += k->mr) {
            const uint8_t *apan = j->ap + (r / k->mr) * abytes + q0 * k->mr * k->esz;
            int32_t mr = (int32_t)(r1 - r < k->mr ? r1 - r : k->mr);
            for (int64_t c = c0; c < c1; c += k->nr) {
                const uint8_t *bpan = j->bp + (c / k->nr) * bbytes + q0 * k->nr * k->esz;
                const int32_t *bias = q0 == 0 ? j->bias + c : NULL;
                int32_t nr = (int32_t)(c1 - c < k->nr ? c1 - c : k->nr);
                if (g->upper && j->j0 + c + nr <= j->i0 + r) continue; /* every column left of every row */
                k->kernel(apan, bpan, ng, g->c + (j->i0 + r) * g->ldc + j->j0 + c, g->ldc, bias,
                          mr, nr);
            }
        }
    }
    if (k->task_end) k->task_end();
}

/* Each calling thread keeps the packing scratch of its last call for its next
 * one (up to SCRATCH_KEEP bytes; freed when the thread exits or by
 * sb_cpu_igemm_release_scratch): a fresh allocation of megabytes is mapped anew
 * by the system, and its first touch costs a page fault every 4 KiB, about a
 * tenth of a 1024^3 product. Per thread, because callers may themselves run
 * on the worker pool (one call per tile of a larger product, at once on every
 * worker). A kept block starts with its size; the scratch proper follows at
 * SCRATCH_HEAD bytes. */
#define SCRATCH_KEEP ((size_t)40 << 20)
#define SCRATCH_HEAD 64
static pthread_once_t g_scratch_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_scratch_key;
static int g_scratch_key_ok;

static void scratch_make_key(void) { g_scratch_key_ok = pthread_key_create(&g_scratch_key, sb_free) == 0; }

static void *scratch_kept(void) {
    pthread_once(&g_scratch_once, scratch_make_key);
    return g_scratch_key_ok ? pthread_getspecific(g_scratch_key) : NULL;
}

static void *scratch_get(size_t need) {
    uint8_t *blk = scratch_kept();
    if (blk) {
        size_t have;
        memcpy(&have, blk, sizeof have);
        if (have >= need) return blk + SCRATCH_HEAD;
        sb_free(blk); /* too small: replaced */
        pthread_setspecific(g_scratch_key, NULL);
    }
    blk = sb_malloc(SCRATCH_HEAD + need);
    if (!blk) return NULL;
    memcpy(blk, &need, sizeof need);
    /* Kept if it may be; if not (or if keeping fails), scratch_put frees it. */
    if (g_scratch_key_ok && need <= SCRATCH_KEEP) (void)pthread_setspecific(g_scratch_key, blk);
    return blk + SCRATCH_HEAD;
}

static void scratch_put(void *p) {
    uint8_t *blk = (uint8_t *)p - SCRATCH_HEAD;
    if (blk != scratch_kept()) sb_free(blk);
}

void sb_cpu_igemm_release_scratch(void) {
    void *blk = scratch_kept();
    if (blk) {
        sb_free(blk);
        pthread_setspecific(g_scratch_key, NULL);
    }
}

static uint8_t *align64(void *p) {
    return (uint8_t *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

/* Unused where no vector path is built (the driver itself is portable C). */
__attribute__((unused)) static sb_status run_blocked(const ig_args *g, const ig_kind *k,
                                                     const char *name) {
    ig_job j;
    memset(&j, 0, sizeof j);
    j.g = g;
    j.k = k;
    j.kp = (g->K + k->kg - 1) / k->kg * k->kg;
    /* Super-blocks: whole task tiles, as many as the budget holds (at least one). */
    int64_t tile_a = panel_bytes(&j, k->mr) * (k->mc / k->mr);
    int64_t tile_b = panel_bytes(&j, k->nr) * (k->nc / k->nr);
    int64_t budget = g_pack_budget_for_tests > 0 ? g_pack_budget_for_tests : PACK_BUDGET;
    int64_t sup_m = (budget / tile_a < 1 ? 1 : budget / tile_a) * k->mc;
    int64_t sup_n = (budget / tile_b < 1 ? 1 : budget / tile_b) * k->nc;
    int64_t rows_max = g->m < sup_m ? g->m : sup_m, cols_max = g->n < sup_n ? g->n : sup_n;
    size_t abytes = (size_t)(sb_chunk_count(rows_max, k->mr) * panel_bytes(&j, k->mr));
    size_t bbytes = (size_t)(sb_chunk_count(cols_max, k->nr) * panel_bytes(&j, k->nr));
    size_t nbias = (size_t)(sb_chunk_count(cols_max, k->nr) * k->nr);
    size_t need = 64 + abytes + 64 + bbytes + nbias * sizeof(int32_t);
    void *raw = scratch_get(need);
    if (!raw)
        return sb_fail(SB_ERR_OUT_OF_MEMORY,
                       "sb_cpu_igemm_s8 (%s): out of memory for %zu bytes of packed operands "
                       "(m=%lld n=%lld K=%lld)", name, need, (long long)g->m, (long long)g->n,
                       (long long)g->K);
    j.ap = align64(raw);
    j.bp = align64(j.ap + abytes);
    j.bias = (int32_t *)(void *)(j.bp + bbytes);
    int a_packed = 0;
    for (j.j0 = 0; j.j0 < g->n; j.j0 += sup_n) {
        j.cols = g->n - j.j0 < sup_n ? g->n - j.j0 : sup_n;
        for (j.i0 = 0; j.i0 < g->m; j.i0 += sup_m) {
            j.rows = g->m - j.i0 < sup_m ? g->m - j.i0 : sup_m;
            /* B's super-block is packed once for all of A; A's once for every B
             * super-block when a single one covers all of A. */
            j.npack_b = j.i0 == 0 ? sb_chunk_count(sb_chunk_count(j.cols, k->nr), PACK_PANELS) : 0;
            int64_t npack_a = !a_packed || g->m > sup_m
                                  ? sb_chunk_count(sb_chunk_count(j.rows, k->mr), PACK_PANELS)
                                  : 0;
            a_packed = 1;
            sb_parallel_for(j.npack_b + npack_a, pack_task, &j);
            sb_parallel_for(sb_chunk_count(j.rows, k->mc) * sb_chunk_count(j.cols, k->nc),
                            tile_task, &j);
        }
    }
    scratch_put(raw);
    return SB_OK;
}

/* ---- x86-64 kernels ----------------------------------------------------------- */
#if defined(__x86_64__)

#define VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))
#define AVX2_TARGET __attribute__((target("avx2")))

static inline uint32_t load_u32(const void *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* -- AVX-512 VNNI: 8 rows x 48 columns (24 zmm accumulators) -- */
#define VN_MR 8
#define VN_NR 48

/* How far ahead in a source row the packers prefetch (bytes): the rows of a
 * panel are many streams at once, more than the hardware prefetcher follows. */
#define PACK_AHEAD 512

/* Group g (k in [4g, 4g + 4)) of one row or column: its bytes, those past K
 * zero, each valid one XORed with flip. */
static inline uint32_t load_group(const int8_t *s, int64_t g, int64_t K, uint32_t flip) {
    if (4 * g + 4 <= K) return load_u32(s + 4 * g) ^ flip;
    uint32_t v = 0;
    for (int64_t q = 4 * g; q < K; q++)
        v |= (uint32_t)(((uint8_t)s[q] ^ (flip & 0xFF))) << (8 * (q - 4 * g));
    return v;
}

/* A panel: [group g][row r][4 bytes] of a' = a + 128 (a ^ 0x80), i.e. byte
 * g*32 + r*4 + t holds a[r][4g + t] + 128; padding (k past K, rows past count)
 * is 0, which meets b = 0 or a discarded row. Whole panels go 16 groups at a
 * time through an 8 x 16 transpose of dwords. */
VNNI_TARGET static void vnni_pack_a(const int8_t *src, int64_t ld, int64_t count, int64_t K,
                                    void *dst, int32_t *bias) {
    (void)bias;
    uint8_t *d = dst;
    int64_t ng = (K + 3) / 4, g = 0;
    if (count == VN_MR) {
        const __m512i flip = _mm512_set1_epi8((char)0x80);
        for (; g + 16 <= K / 4; g += 16) {
            for (int i = 0; i < VN_MR; i++)
                _mm_prefetch((const char *)(src + i * ld + 4 * g) + PACK_AHEAD, _MM_HINT_T0);
            __m512i r0 = _mm512_xor_si512(_mm512_loadu_si512(src + 0 * ld + 4 * g), flip);
            __m512i r1 = _mm512_xor_si512(_mm512_loadu_si512(src + 1 * ld + 4 * g), flip);
            __m512i r2 = _mm512_xor_si512(_mm512_loadu_si512(src + 2 * ld + 4 * g), flip);
            __m512i r3 = _mm512_xor_si512(_mm512_loadu_si512(src + 3 * ld + 4 * g), flip);
            __m512i r4 = _mm512_xor_si512(_mm512_loadu_si512(src + 4 * ld + 4 * g), flip);
            __m512i r5 = _mm512_xor_si512(_mm512_loadu_si512(src + 5 * ld + 4 * g), flip);
            __m512i r6 = _mm512_xor_si512(_mm512_loadu_si512(src + 6 * ld + 4 * g), flip);
            __m512i r7 = _mm512_xor_si512(_mm512_loadu_si512(src + 7 * ld + 4 * g), flip);
            /* In each 128-bit lane L (groups 4L..4L+3): */
            __m512i t0 = _mm512_unpacklo_epi32(r0, r1), t1 = _mm512_unpackhi_epi32(r0, r1);
            __m512i t2 = _mm512_unpacklo_epi32(r2, r3), t3 = _mm512_unpackhi_epi32(r2, r3);
            __m512i t4 = _mm512_unpacklo_epi32(r4, r5), t5 = _mm512_unpackhi_epi32(r4, r5);
            __m512i t6 = _mm512_unpacklo_epi32(r6, r7), t7 = _mm512_unpackhi_epi32(r6, r7);
            /* u[4i + j], lane L: rows 4i..4i+3 of group 4L + j */
            __m512i u0 = _mm512_unpacklo_epi64(t0, t2), u1 = _mm512_unpackhi_epi64(t0, t2);
            __m512i u2 = _mm512_unpacklo_epi64(t1, t3), u3 = _mm512_unpackhi_epi64(t1, t3);
            __m512i u4 = _mm512_unpacklo_epi64(t4, t6), u5 = _mm512_unpackhi_epi64(t4, t6);
            __m512i u6 = _mm512_unpacklo_epi64(t5, t7), u7 = _mm512_unpackhi_epi64(t5, t7);
            /* p_j: [u_j.0, u_j.1, u_{4+j}.0, u_{4+j}.1], q_j: the same of lanes 2, 3 */
            __m512i p0 = _mm512_shuffle_i32x4(u0, u4, 0x44), q0 = _mm512_shuffle_i32x4(u0, u4, 0xEE);
            __m512i p1 = _mm512_shuffle_i32x4(u1, u5, 0x44), q1 = _mm512_shuffle_i32x4(u1, u5, 0xEE);
            __m512i p2 = _mm512_shuffle_i32x4(u2, u6, 0x44), q2 = _mm512_shuffle_i32x4(u2, u6, 0xEE);
            __m512i p3 = _mm512_shuffle_i32x4(u3, u7, 0x44), q3 = _mm512_shuffle_i32x4(u3, u7, 0xEE);
            /* output o: groups g + 2o and g + 2o + 1, rows 0..7 each */
            uint8_t *o = d + g * (VN_MR * 4);
            _mm512_storeu_si512(o + 0 * 64, _mm512_shuffle_i32x4(p0, p1, 0x88));
            _mm512_storeu_si512(o + 1 * 64, _mm512_shuffle_i32x4(p2, p3, 0x88));
            _mm512_storeu_si512(o + 2 * 64, _mm512_shuffle_i32x4(p0, p1, 0xDD));
            _mm512_storeu_si512(o + 3 * 64, _mm512_shuffle_i32x4(p2, p3, 0xDD));
            _mm512_storeu_si512(o + 4 * 64, _mm512_shuffle_i32x4(q0, q1, 0x88));
            _mm512_storeu_si512(o + 5 * 64, _mm512_shuffle_i32x4(q2, q3, 0x88));
            _mm512_storeu_si512(o + 6 * 64, _mm512_shuffle_i32x4(q0, q1, 0xDD));
            _mm512_storeu_si512(o + 7 * 64, _mm512_shuffle_i32x4(q2, q3, 0xDD));
        }
    }
    for (; g < ng; g++)
        for (int64_t r = 0; r < VN_MR; r++) {
            uint32_t v = r < count ? load_group(src + r * ld, g, K, 0x80808080u) : 0;
            memcpy(d + g * (VN_MR * 4) + r * 4, &v, 4);
        }
}

/* 16 x 16 dwords transposed in place: dword c of r[s] becomes what dword s of
 * r[c] was. */
VNNI_TARGET static inline void transpose16(__m512i r[16]) {
    __m512i t[16], u[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    /* u[4i + j], lane L: rows 4i..4i+3 of element 4L + j */
    for (int i = 0; i < 4; i++) {
        u[4 * i + 0] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int j = 0; j < 4; j++) {
        __m512i p = _mm512_shuffle_i32x4(u[j], u[4 + j], 0x44);
        __m512i q = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0x44);
        __m512i p2 = _mm512_shuffle_i32x4(u[j], u[4 + j], 0xEE);
        __m512i q2 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0xEE);
        r[j] = _mm512_shuffle_i32x4(p, q, 0x88);
        r[4 + j] = _mm512_shuffle_i32x4(p, q, 0xDD);
        r[8 + j] = _mm512_shuffle_i32x4(p2, q2, 0x88);
        r[12 + j] = _mm512_shuffle_i32x4(p2, q2, 0xDD);
    }
}

/* B panel: [group g][column c][4 bytes] of b, byte g*192 + c*4 + t = b[c][4g + t];
 * padding 0. Each full block of 16 columns goes 16 groups at a time through a
 * 16 x 16 transpose of dwords. bias[c] = -128 * sum_q b[c][q] (0 for padded
 * columns). */
VNNI_TARGET static void vnni_pack_b(const int8_t *src, int64_t ld, int64_t count, int64_t K,
                                    void *dst, int32_t *bias) {
    uint8_t *d = dst;
    int64_t ng = (K + 3) / 4;
    for (int64_t v = 0; v < VN_NR / 16; v++) {
        int64_t c0 = 16 * v, g = 0;
        if (c0 + 16 <= count)
            for (; g + 16 <= K / 4; g += 16) {
                __m512i r[16];
                for (int i = 0; i < 16; i++) {
                    const int8_t *row = src + (c0 + i) * ld + 4 * g;
                    _mm_prefetch((const char *)row + PACK_AHEAD, _MM_HINT_T0);
                    r[i] = _mm512_loadu_si512(row);
                }
                transpose16(r);
                for (int s = 0; s < 16; s++)
                    _mm512_storeu_si512(d + (g + s) * (VN_NR * 4) + v * 64, r[s]);
            }
        for (; g < ng; g++)
            for (int64_t c = c0; c < c0 + 16; c++) {
                uint32_t w = c < count ? load_group(src + c * ld, g, K, 0) : 0;
                memcpy(d + g * (VN_NR * 4) + c * 4, &w, 4);
            }
    }
    /* Column sums from the packed panel: VPDPBUSD with 1s on the unsigned side
     * adds each column's four bytes of a group into its lane. */
    const __m512i ones = _mm512_set1_epi8(1);
    __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0;
    for (int64_t g = 0; g < ng; g++) {
        const uint8_t *p = d + g * (VN_NR * 4);
        s0 = _mm512_dpbusd_epi32(s0, ones, _mm512_load_si512(p));
        s1 = _mm512_dpbusd_epi32(s1, ones, _mm512_load_si512(p + 64));
        s2 = _mm512_dpbusd_epi32(s2, ones, _mm512_load_si512(p + 128));
    }
    const __m512i z = _mm512_setzero_si512();
    _mm512_storeu_si512(bias, _mm512_sub_epi32(z, _mm512_slli_epi32(s0, 7)));
    _mm512_storeu_si512(bias + 16, _mm512_sub_epi32(z, _mm512_slli_epi32(s1, 7)));
    _mm512_storeu_si512(bias + 32, _mm512_sub_epi32(z, _mm512_slli_epi32(s2, 7)));
}

#define VN_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

VNNI_TARGET static void vnni_kernel(const void *ap, const void *bp, int64_t ng, int32_t *c,
                                    int64_t ldc, const int32_t *bias, int32_t mr, int32_t nr) {
    const uint8_t *A = ap;
    const uint8_t *B = bp;
    const int full = mr == VN_MR && nr == VN_NR;
    __mmask16 m0 = 0, m1 = 0, m2 = 0;
    if (!full) {
        m0 = (__mmask16)(nr >= 16 ? 0xFFFF : (1u << nr) - 1);
        m1 = (__mmask16)(nr >= 32 ? 0xFFFF : nr <= 16 ? 0 : (1u << (nr - 16)) - 1);
        m2 = (__mmask16)(nr >= 48 ? 0xFFFF : nr <= 32 ? 0 : (1u << (nr - 32)) - 1);
    }
#define VN_DECL(r) __m512i c##r##0, c##r##1, c##r##2;
    VN_ROWS(VN_DECL)
    if (bias) {
        const __m512i z0 = _mm512_loadu_si512(bias), z1 = _mm512_loadu_si512(bias + 16),
                      z2 = _mm512_loadu_si512(bias + 32);
#define VN_BIAS(r) c##r##0 = z0; c##r##1 = z1; c##r##2 = z2;
        VN_ROWS(VN_BIAS)
    } else if (full) {
#define VN_LOAD(r)                                                                        \
    c##r##0 = _mm512_loadu_si512(c + r * ldc);                                            \
    c##r##1 = _mm512_loadu_si512(c + r * ldc + 16);                                       \
    c##r##2 = _mm512_loadu_si512(c + r * ldc + 32);
        VN_ROWS(VN_LOAD)
    } else {
        const __m512i z = _mm512_setzero_si512();
#define VN_LOADM(r)                                                                       \
    if (r < mr) {                                                                         \
        c##r##0 = _mm512_maskz_loadu_epi32(m0, c + r * ldc);                              \
        c##r##1 = _mm512_maskz_loadu_epi32(m1, c + r * ldc + 16);                         \
        c##r##2 = _mm512_maskz_loadu_epi32(m2, c + r * ldc + 32);                         \
    } else {                                                                              \
        c##r##0 = z; c##r##1 = z; c##r##2 = z;                                            \
    }
        VN_ROWS(VN_LOADM)
    }
    for (int64_t g = 0; g < ng; g++) {
        const __m512i b0 = _mm512_load_si512(B), b1 = _mm512_load_si512(B + 64),
                      b2 = _mm512_load_si512(B + 128);
#define VN_STEP(r)                                                                        \
    {                                                                                     \
        const __m512i a = _mm512_set1_epi32((int32_t)load_u32(A + 4 * r));               \
        c##r##0 = _mm512_dpbusd_epi32(c##r##0, a, b0);                                    \
        c##r##1 = _mm512_dpbusd_epi32(c##r##1, a, b1);                                    \
        c##r##2 = _mm512_dpbusd_epi32(c##r##2, a, b2);                                    \
    }
        VN_ROWS(VN_STEP)
        A += VN_MR * 4;
        B += VN_NR * 4;
    }
    if (full) {
#define VN_STORE(r)                                                                       \
    _mm512_storeu_si512(c + r * ldc, c##r##0);                                            \
    _mm512_storeu_si512(c + r * ldc + 16, c##r##1);                                       \
    _mm512_storeu_si512(c + r * ldc + 32, c##r##2);
        VN_ROWS(VN_STORE)
    } else {
#define VN_STOREM(r)                                                                      \
    if (r < mr) {                                                                         \
        _mm512_mask_storeu_epi32(c + r * ldc, m0, c##r##0);                               \
        _mm512_mask_storeu_epi32(c + r * ldc + 16, m1, c##r##1);                          \
        _mm512_mask_storeu_epi32(c + r * ldc + 32, m2, c##r##2);                          \
    }
        VN_ROWS(VN_STOREM)
    }
}

static const ig_kind g_vnni = {VN_MR, VN_NR, 4, 1, 8192, 192, 384,
                               vnni_pack_a, vnni_pack_b, vnni_kernel, NULL, NULL};

/* -- AVX2: int16 pairs, 6 rows x 16 columns (12 ymm accumulators) -- */
#define AV_MR 6
#define AV_NR 16

/* Panels of int16: [pair p][row or column r][2], value [r][2p + t]; padding 0.
 * (x86 only: the two int16 of a pair are stored as one little-endian dword.) */
static void avx2_pack(const int8_t *src, int64_t ld, int64_t count, int64_t K, void *dst,
                      int32_t width) {
    uint8_t *d = dst;
    int64_t np = (K + 1) / 2, full = K / 2, stride = (int64_t)width * 4;
    for (int64_t r = 0; r < width; r++) {
        uint8_t *o = d + r * 4;
        const int8_t *s = src + r * ld;
        for (int64_t p = 0; p < np; p++) {
            uint32_t w = 0;
            if (r < count) {
                uint32_t lo = (uint16_t)(int16_t)s[2 * p];
                uint32_t hi = p < full ? (uint16_t)(int16_t)s[2 * p + 1] : 0;
                w = lo | hi << 16;
            }
            memcpy(o + p * stride, &w, 4);
        }
    }
}

static void avx2_pack_a(const int8_t *src, int64_t ld, int64_t count, int64_t K, void *dst,
                        int32_t *bias) {
    (void)bias;
    avx2_pack(src, ld, count, K, dst, AV_MR);
}

static void avx2_pack_b(const int8_t *src, int64_t ld, int64_t count, int64_t K, void *dst,
                        int32_t *bias) {
    avx2_pack(src, ld, count, K, dst, AV_NR);
    memset(bias, 0, AV_NR * sizeof(int32_t));
}

#define AV_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)

AVX2_TARGET static void avx2_kernel(const void *ap, const void *bp, int64_t ng, int32_t *c,
                                    int64_t ldc, const int32_t *bias, int32_t mr, int32_t nr) {
    const uint8_t *A = ap;
    const uint8_t *B = bp;
    const int full = mr == AV_MR && nr == AV_NR;
#define AV_DECL(r) __m256i c##r##0, c##r##1;
    AV_ROWS(AV_DECL)
    int32_t tmp[AV_MR * AV_NR];
    if (bias) {
        const __m256i z0 = _mm256_loadu_si256((const void *)bias),
                      z1 = _mm256_loadu_si256((const void *)(bias + 8));
#define AV_BIAS(r) c##r##0 = z0; c##r##1 = z1;
        AV_ROWS(AV_BIAS)
    } else {
        const int32_t *src = c;
        int64_t ld = ldc;
        if (!full) { /* edge tile: through a full-size copy */
            memset(tmp, 0, sizeof tmp);
            for (int32_t r = 0; r < mr; r++) memcpy(tmp + r * AV_NR, c + r * ldc, (size_t)nr * 4);
            src = tmp;
            ld = AV_NR;
        }
#define AV_LOAD(r)                                                                        \
    c##r##0 = _mm256_loadu_si256((const void *)(src + r * ld));                           \
    c##r##1 = _mm256_loadu_si256((const void *)(src + r * ld + 8));
        AV_ROWS(AV_LOAD)
    }
    for (int64_t g = 0; g < ng; g++) {
        const __m256i b0 = _mm256_load_si256((const void *)B),
                      b1 = _mm256_load_si256((const void *)(B + 32));
#define AV_STEP(r)                                                                        \
    {                                                                                     \
        const __m256i a = _mm256_set1_epi32((int32_t)load_u32(A + 4 * r));               \
        c##r##0 = _mm256_add_epi32(c##r##0, _mm256_madd_epi16(a, b0));                    \
        c##r##1 = _mm256_add_epi32(c##r##1, _mm256_madd_epi16(a, b1));                    \
    }
        AV_ROWS(AV_STEP)
        A += AV_MR * 4;
        B += AV_NR * 4;
    }
    int32_t *dst = full ? c : tmp;
    int64_t ld = full ? ldc : AV_NR;
#define AV_STORE(r)                                                                       \
    _mm256_storeu_si256((void *)(dst + r * ld), c##r##0);                                 \
    _mm256_storeu_si256((void *)(dst + r * ld + 8), c##r##1);
    AV_ROWS(AV_STORE)
    if (!full)
        for (int32_t r = 0; r < mr; r++) memcpy(c + r * ldc, tmp + r * AV_NR, (size_t)nr * 4);
}

static const ig_kind g_avx2 = {AV_MR, AV_NR, 2, 2, 2048, 192, 384,
                               avx2_pack_a, avx2_pack_b, avx2_kernel, NULL, NULL};

#endif /* __x86_64__ */

/* ---- AMX-INT8 --------------------------------------------------------------------- */
#if IG_AMX_CODE

/* TDPBSSD (signed x signed int8, four products a dword, added to int32 without
 * saturation) on tiles configured as 16 rows x 64 bytes: C[16x16 int32] +=
 * A[16 rows x 64 k] * B[64 k x 16 columns], B held in the VNNI layout (16 rows
 * of k quads, a row holding 16 columns x 4 bytes). Signed x signed: no bias,
 * and every partial sum is an exact sum of products, |a*b| <= 2^14 times
 * K <= 32768, within int32 as for the scalar path.
 *
 * Micro-tile 32 x 32 of C in 8 tiles:
 *   tmm0 C rows 0-15, cols 0-15    tmm1 C rows 0-15, cols 16-31
 *   tmm2 C rows 16-31, cols 0-15   tmm3 C rows 16-31, cols 16-31
 *   tmm4 A rows 0-15               tmm5 A rows 16-31            (of one k group of 64)
 *   tmm6 B cols 0-15               tmm7 B cols 16-31
 * each k group: the four loads spread between tmm(2i + j) += tmm(4 + i) * tmm(6 + j)
 * (amx_groups).
 *
 * The tile configuration is a thread's state (as are the tiles): each task
 * tile of the driver loads it on the thread that runs the task before its
 * first kernel (task_begin) and releases the tiles after its last (task_end),
 * so no task relies on what another left in a thread (or on a configuration
 * another user of AMX in the process loaded or released), and an idle worker
 * holds no tile state (its context switches save none).
 *
 * gcc 12's tile intrinsics are asm statements that do not tell the compiler
 * which memory they read (_tile_loadd) or read only 8 bytes of the
 * configuration (_tile_loadconfig): the configuration is therefore a static
 * constant, and the kernel puts a compiler barrier between filling its edge
 * buffer and loading tiles from it. */

#if defined(SB_IGEMM_AMX_EMULATE)
/* Defined by the test that includes this file: C stand-ins that follow each
 * instruction's documented semantics on the calling thread's emulated tiles. */
static void amx_emu_loadconfig(const void *cfg);
static void amx_emu_loadd(int t, const void *base, int64_t stride);
static void amx_emu_stored(int t, void *base, int64_t stride);
static void amx_emu_zero(int t);
static void amx_emu_dpbssd(int dst, int src1, int src2);
static void amx_emu_release(void);
#define AMX_TARGET
#define TILE_CONFIG(cfg) amx_emu_loadconfig(cfg)
#define TILE_LOAD(t, base, stride) amx_emu_loadd(t, base, stride)
#define TILE_STORE(t, base, stride) amx_emu_stored(t, base, stride)
#define TILE_ZERO(t) amx_emu_zero(t)
#define TILE_DP(d, a, b) amx_emu_dpbssd(d, a, b)
#define TILE_RELEASE() amx_emu_release()
#else
#define AMX_TARGET __attribute__((target("amx-tile,amx-int8")))
#define TILE_CONFIG(cfg) _tile_loadconfig(cfg)
#define TILE_LOAD(t, base, stride) _tile_loadd(t, base, stride)
#define TILE_STORE(t, base, stride) _tile_stored(t, base, stride)
#define TILE_ZERO(t) _tile_zero(t)
#define TILE_DP(d, a, b) _tile_dpbssd(d, a, b)
#define TILE_RELEASE() _tile_release()
#endif
#define AMX_BARRIER() __asm__ volatile("" ::: "memory")

#if defined(__x86_64__)
#define AMX_PACK_TARGET VNNI_TARGET /* the B packer's transpose */
#else
#define AMX_PACK_TARGET
#endif

#define AM_MR 32
#define AM_NR 32
#define AM_KG 64                     /* k values per group: one A tile row */
#define AM_GROUP (AM_MR * AM_KG)     /* bytes of one k group of a panel (A or B) */
#define AM_TILE 1024                 /* bytes of one 16 x 64-byte tile */

/* LDTILECFG's 64-byte operand, palette 1: tiles 0-7 of 16 rows x 64 bytes,
 * 8-15 unused (0); reserved bytes 0. */
typedef struct amx_tilecfg {
    uint8_t palette_id;
    uint8_t start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} amx_tilecfg;
_Static_assert(sizeof(amx_tilecfg) == 64, "LDTILECFG reads 64 bytes");
_Static_assert(offsetof(amx_tilecfg, colsb) == 16 && offsetof(amx_tilecfg, rows) == 48,
               "the LDTILECFG layout");

static const amx_tilecfg g_amx_cfg __attribute__((aligned(64))) = {
    1, 0, {0}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};

/* A panel: per k group g, 32 rows of 64 bytes, the row's k in [64g, 64g + 64)
 * as they are: byte g*2048 + r*64 + u = a[r][64g + u]; 0 past K and in the rows
 * past count. Tile tmm4 is bytes [0, 1024) of a group, tmm5 [1024, 2048). */
static void amx_pack_a(const int8_t *src, int64_t ld, int64_t count, int64_t K, void *dst,
                       int32_t *bias) {
    (void)bias;
    uint8_t *d = dst;
    int64_t ng = (K + AM_KG - 1) / AM_KG;
    for (int64_t r = 0; r < AM_MR; r++)
        for (int64_t g = 0; g < ng; g++) {
            uint8_t *row = d + g * AM_GROUP + r * AM_KG;
            int64_t len = r < count ? (K - g * AM_KG < AM_KG ? K - g * AM_KG : AM_KG) : 0;
            if (len > 0) memcpy(row, src + r * ld + g * AM_KG, (size_t)len);
            memset(row + len, 0, (size_t)(AM_KG - len));
        }
}

/* B panel: per k group g and half h (columns 16h..16h+15), one tile in the VNNI
 * layout, 16 rows of k quads: byte g*2048 + h*1024 + t*64 + c*4 + s =
 * b[16h + c][64g + 4t + s]; 0 past K and in the columns past count. A whole
 * tile (16 columns, 64 k) is a 16 x 16 transpose of dwords (on x86-64). The
 * column biases are 0 (signed x signed needs none). */
AMX_PACK_TARGET static void amx_pack_b(const int8_t *src, int64_t ld, int64_t count, int64_t K,
                                       void *dst, int32_t *bias) {
    uint8_t *d = dst;
    int64_t ng = (K + AM_KG - 1) / AM_KG;
    for (int64_t h = 0; h < AM_NR / 16; h++) {
        const int64_t c0 = 16 * h;
        for (int64_t g = 0; g < ng; g++) {
            uint8_t *tile = d + g * AM_GROUP + h * AM_TILE;
#if defined(__x86_64__)
            if (c0 + 16 <= count && g * AM_KG + AM_KG <= K) {
                __m512i r[16];
                for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_si512(src + (c0 + i) * ld + g * AM_KG);
                transpose16(r); /* dword c of r[t] = dword t of column c0 + c */
                for (int t = 0; t < 16; t++) _mm512_storeu_si512(tile + t * 64, r[t]);
                continue;
            }
#endif
            for (int64_t t = 0; t < 16; t++)
                for (int64_t c = 0; c < 16; c++)
                    for (int64_t s = 0; s < 4; s++) {
                        int64_t col = c0 + c, q = g * AM_KG + 4 * t + s;
                        tile[t * 64 + c * 4 + s] = col < count && q < K ? (uint8_t)src[col * ld + q] : 0;
                    }
        }
    }
    memset(bias, 0, AM_NR * sizeof(int32_t));
}

/* The edge of C (mr < 32 or nr < 32) goes through edge[q] (16 x 16 int32, the
 * quadrant of tile q): in, the valid part of C and zeros elsewhere; out, the
 * valid part back. */
static void amx_edge_in(int32_t edge[4][256], const int32_t *c, int64_t ldc, int32_t mr, int32_t nr) {
    memset(edge, 0, 4 * 256 * sizeof(int32_t));
    for (int32_t r = 0; r < mr; r++)
        for (int32_t j = 0; j < nr; j++) edge[(r / 16) * 2 + j / 16][(r % 16) * 16 + j % 16] = c[r * ldc + j];
}

static void amx_edge_out(int32_t edge[4][256], int32_t *c, int64_t ldc, int32_t mr, int32_t nr) {
    for (int32_t r = 0; r < mr; r++)
        for (int32_t j = 0; j < nr; j++) c[r * ldc + j] = edge[(r / 16) * 2 + j / 16][(r % 16) * 16 + j % 16];
}

/* The micro-tile's products over ng k groups of a panel pair: tmm(2i + j) +=
 * A's tile i (tmm4 + i, rows 16i..16i+15) x B's tile j (tmm6 + j), the A and B
 * pointers advancing a group (AM_GROUP bytes) each. The loads are spread
 * between the products that free the tiles they overwrite (tile registers
 * are not renamed: a load into tmm4 waits for the products reading it), the
 * order the AMX Gram measured fastest; it decides no bit (exact sums). */
AMX_TARGET static inline __attribute__((always_inline)) void amx_groups(const uint8_t *A, const uint8_t *B,
                                                                       int64_t ng) {
    for (int64_t g = 0; g < ng; g++) {
        TILE_LOAD(4, A, 64);
        TILE_LOAD(6, B, 64);
        TILE_DP(0, 4, 6);
        TILE_LOAD(7, B + AM_TILE, 64);
        TILE_DP(1, 4, 7);
        TILE_LOAD(5, A + AM_TILE, 64);
        TILE_DP(2, 5, 6);
        TILE_DP(3, 5, 7);
        A += AM_GROUP;
        B += AM_GROUP;
    }
}

/* c[r*ldc + j] (r < mr, j < nr) = (bias ? 0 : c[r*ldc + j]) + the products of ng
 * k groups (bias is the B packer's, all 0). */
AMX_TARGET static void amx_kernel(const void *ap, const void *bp, int64_t ng, int32_t *c,
                                  int64_t ldc, const int32_t *bias, int32_t mr, int32_t nr) {
    const uint8_t *A = ap;
    const uint8_t *B = bp;
    const int full = mr == AM_MR && nr == AM_NR;
    const int64_t cs = ldc * (int64_t)sizeof(int32_t); /* C's row stride in bytes */
    int32_t edge[4][256] __attribute__((aligned(64)));
    if (bias) {
        TILE_ZERO(0);
        TILE_ZERO(1);
        TILE_ZERO(2);
        TILE_ZERO(3);
    } else if (full) {
        TILE_LOAD(0, c, cs);
        TILE_LOAD(1, c + 16, cs);
        TILE_LOAD(2, c + 16 * ldc, cs);
        TILE_LOAD(3, c + 16 * ldc + 16, cs);
    } else {
        amx_edge_in(edge, c, ldc, mr, nr);
        AMX_BARRIER(); /* edge written before the tiles read it */
        TILE_LOAD(0, edge[0], 64);
        TILE_LOAD(1, edge[1], 64);
        TILE_LOAD(2, edge[2], 64);
        TILE_LOAD(3, edge[3], 64);
    }
    amx_groups(A, B, ng);
    if (full) {
        TILE_STORE(0, c, cs);
        TILE_STORE(1, c + 16, cs);
        TILE_STORE(2, c + 16 * ldc, cs);
        TILE_STORE(3, c + 16 * ldc + 16, cs);
    } else {
        TILE_STORE(0, edge[0], 64);
        TILE_STORE(1, edge[1], 64);
        TILE_STORE(2, edge[2], 64);
        TILE_STORE(3, edge[3], 64);
        AMX_BARRIER(); /* the tiles' stores before edge is read */
        amx_edge_out(edge, c, ldc, mr, nr);
    }
}

AMX_TARGET static void amx_task_begin(void) { TILE_CONFIG(&g_amx_cfg); }
AMX_TARGET static void amx_task_end(void) { TILE_RELEASE(); }

/* k blocks of 1024 (a 32 KiB A panel stays in L1 while B panels stream from
 * L2), task tiles of 128 x 256. First choices, not yet measured on an AMX
 * machine (bench/igemm_bench.c). */
static const ig_kind g_amx = {AM_MR, AM_NR, AM_KG, 1, 1024, 128, 256,
                              amx_pack_a, amx_pack_b, amx_kernel, amx_task_begin, amx_task_end};

#endif /* IG_AMX_CODE */

/* ---- a Gram's digit pairs on AMX from operands packed once (igemm.h) ------------ */

#define AMXG_GROUP 2048 /* bytes of one group of a panel: 32 rows x 64 k */
#define AMXG_LINES 8    /* lines of a panel: 8 lines x 4 digits = 32 rows */

int sb_cpu_igemm_gram_amx_on(void) {
    ig_path p;
    return resolve_path(&p) == SB_OK && p == IG_AMX;
}

int64_t sb_cpu_amxg_bytes(int64_t lines, int64_t ng) {
    return (lines + AMXG_LINES - 1) / AMXG_LINES * ng * AMXG_GROUP;
}

/* The four digits of RNE(x * scale) as the bytes of one word (byte d, by
 * shifts, is digit d as int8): gemm.c's split4_biased with the bias taken off
 * again; a nonfinite x gives 0. */
static inline uint32_t amxg_digits4(float x, double scale) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return 0u;
    const double t = (double)x * scale;
    const int32_t r = (int32_t)((t + 0x1.8p52) - 0x1.8p52);
    return ((uint32_t)r + 0x80808080u) ^ 0x80808080u;
}

typedef struct amxg_pack_job {
    const float *x, *shift;
    int64_t qs, lines, k, q0, len, ng;
    const double *scale;
    uint8_t *pa, *pb;
    int scalar; /* SAMEBITS_AMXG_PACK=scalar: the element-by-element packer (tests) */
} amxg_pack_job;

/* Groups [g0, g1) of the pass, element by element: the layout's definition in
 * code (igemm.h), and the path where AVX-512 is absent (the AMX emulation's
 * test machines). */
static void amxg_pack_scalar(const amxg_pack_job *j, int64_t g0, int64_t g1) {
    const int64_t np = (j->lines + AMXG_LINES - 1) / AMXG_LINES;
    const int64_t qmax = j->q0 + j->len < j->k ? j->q0 + j->len : j->k;
    for (int64_t P = 0; P < np; P++)
        for (int64_t G = g0; G < g1; G++) {
            uint8_t *ga = j->pa + (P * j->ng + G) * AMXG_GROUP, *gb = j->pb + (P * j->ng + G) * AMXG_GROUP;
            for (int64_t a = 0; a < AMXG_LINES; a++) {
                const int64_t l = P * AMXG_LINES + a;
                for (int64_t u = 0; u < 64; u++) {
                    const int64_t q = j->q0 + 64 * G + u;
                    const float xv = l < j->lines && q < qmax ? j->x[l + q * j->qs] : 0.0f;
                    const uint32_t v = l < j->lines && q < qmax
                                           ? amxg_digits4(j->shift ? xv - j->shift[l] : xv, j->scale[l])
                                           : 0u;
                    for (int64_t d = 0; d < 4; d++) {
                        const int64_t r = 4 * a + d;
                        const uint8_t byte = (uint8_t)(v >> (8 * d));
                        ga[r * 64 + u] = byte;
                        gb[(r / 16) * 1024 + (u / 4) * 64 + (r % 16) * 4 + u % 4] = byte;
                    }
                }
            }
        }
}

#if defined(__x86_64__)
#define AMXG_PACK_TARGET __attribute__((target("avx512f,avx512bw")))

/* The same bytes, 16 lines and 4 k values at a time: each element's four
 * digits come from the same double arithmetic (vector lanes are IEEE
 * operations, as the scalar ones); byte and lane transposes give B's rows
 * (16 rows of a panel: 4 lines x 4 digits), and a 16 x 16 dword transpose of
 * each B tile gives A's rows. */
AMXG_PACK_TARGET static void amxg_pack_avx512(const amxg_pack_job *j, int64_t g0, int64_t g1) {
    const int64_t np = (j->lines + AMXG_LINES - 1) / AMXG_LINES;
    const int64_t qmax = j->q0 + j->len < j->k ? j->q0 + j->len : j->k;
    const __m512d magic = _mm512_set1_pd(0x1.8p52);
    const __m512i bias = _mm512_set1_epi32((int32_t)0x80808080u), expo = _mm512_set1_epi32(0x7f800000);
    for (int64_t G = g0; G < g1; G++)
    for (int64_t l0 = 0; l0 < np * AMXG_LINES; l0 += 16) {
        const int64_t nl = j->lines - l0 < 0 ? 0 : j->lines - l0 < 16 ? j->lines - l0 : 16;
        const __mmask16 lm = (__mmask16)((1u << nl) - 1u);
        const __m512d sc_lo = _mm512_maskz_loadu_pd((__mmask8)(lm & 0xff), j->scale + l0);
        const __m512d sc_hi = _mm512_maskz_loadu_pd((__mmask8)(lm >> 8), j->scale + l0 + 8);
        const __m512 shift = j->shift ? _mm512_maskz_loadu_ps(lm, j->shift + l0) : _mm512_setzero_ps();
        /* 16 lines are four blocks of 4 lines (16 rows of a panel): block L is panel
         * (l0 + 4L) / 8, rows from 16 ((l0 + 4L) % 8 / 4); blocks past the panels are not stored */
        {
            uint8_t *bt[4], *at[4];
            int nblk = 0;
            for (int L = 0; L < 4; L++) {
                const int64_t P = (l0 + 4 * L) / AMXG_LINES, h = (l0 + 4 * L) % AMXG_LINES / 4;
                if (P >= np) break;
                bt[L] = j->pb + (P * j->ng + G) * AMXG_GROUP + h * 1024;
                at[L] = j->pa + (P * j->ng + G) * AMXG_GROUP + h * 16 * 64;
                nblk++;
            }
            for (int t4 = 0; t4 < 16; t4++) {
                __m512i R[4];
                for (int s = 0; s < 4; s++) {
                    const int64_t q = j->q0 + 64 * G + 4 * t4 + s;
                    const __mmask16 m = q < qmax ? lm : 0;
                    const __m512 v = _mm512_maskz_sub_ps(
                        m, _mm512_maskz_loadu_ps(m, j->x + (q < qmax ? q * j->qs + l0 : 0)), shift);
                    const __m512i u = _mm512_castps_si512(v);
                    const __mmask16 fin = _mm512_cmpneq_epi32_mask(_mm512_and_si512(u, expo), expo);
                    __m512d lo = _mm512_mul_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(v)), sc_lo);
                    __m512d hi = _mm512_mul_pd(
                        _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))), sc_hi);
                    lo = _mm512_sub_pd(_mm512_add_pd(lo, magic), magic);
                    hi = _mm512_sub_pd(_mm512_add_pd(hi, magic), magic);
                    const __m512i r = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtpd_epi32(lo)),
                                                         _mm512_cvtpd_epi32(hi), 1);
                    R[s] = _mm512_xor_si512(_mm512_add_epi32(_mm512_maskz_mov_epi32(fin, r), bias), bias);
                }
                /* dword c of R[s]: digits 0..3 of (line l0 + c, k 4 t4 + s). u_c, lane L:
                 * line l0 + 4L + c, dword d = digit d at k 4 t4 + 0..3 (four B columns) */
                const __m512i t01l = _mm512_unpacklo_epi8(R[0], R[1]), t01h = _mm512_unpackhi_epi8(R[0], R[1]);
                const __m512i t23l = _mm512_unpacklo_epi8(R[2], R[3]), t23h = _mm512_unpackhi_epi8(R[2], R[3]);
                const __m512i u0 = _mm512_unpacklo_epi16(t01l, t23l), u1 = _mm512_unpackhi_epi16(t01l, t23l);
                const __m512i u2 = _mm512_unpacklo_epi16(t01h, t23h), u3 = _mm512_unpackhi_epi16(t01h, t23h);
                /* B row of block L: lanes L of u0, u1, u2, u3 (a 4 x 4 transpose of 128-bit lanes) */
                const __m512i p01l = _mm512_shuffle_i32x4(u0, u1, 0x44), p23l = _mm512_shuffle_i32x4(u2, u3, 0x44);
                const __m512i p01h = _mm512_shuffle_i32x4(u0, u1, 0xEE), p23h = _mm512_shuffle_i32x4(u2, u3, 0xEE);
                const __m512i row[4] = {_mm512_shuffle_i32x4(p01l, p23l, 0x88), _mm512_shuffle_i32x4(p01l, p23l, 0xDD),
                                        _mm512_shuffle_i32x4(p01h, p23h, 0x88), _mm512_shuffle_i32x4(p01h, p23h, 0xDD)};
                for (int L = 0; L < nblk; L++) _mm512_storeu_si512(bt[L] + t4 * 64, row[L]);
            }
            for (int L = 0; L < nblk; L++) {
                __m512i r[16];
                for (int t4 = 0; t4 < 16; t4++) r[t4] = _mm512_loadu_si512(bt[L] + t4 * 64);
                transpose16(r);
                for (int c = 0; c < 16; c++) _mm512_storeu_si512(at[L] + c * 64, r[c]);
            }
        }
    }
}
#endif

#define AMXG_PACK_GROUPS 8 /* groups of the pass a packing task takes */

static void amxg_pack_task(void *ctx, int64_t task) {
    const amxg_pack_job *j = ctx;
    const int64_t g0 = task * AMXG_PACK_GROUPS, g1 = g0 + AMXG_PACK_GROUPS < j->ng ? g0 + AMXG_PACK_GROUPS : j->ng;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && !j->scalar) {
        amxg_pack_avx512(j, g0, g1);
        return;
    }
#endif
    amxg_pack_scalar(j, g0, g1);
}

void sb_cpu_amxg_pack4(const float *x, int64_t qs, const float *shift, int64_t lines, int64_t k, int64_t q0,
                       int64_t len, const double *scale, uint8_t *pa, uint8_t *pb) {
    const int64_t ng = (len + 63) / 64;
    const char *v = getenv("SAMEBITS_AMXG_PACK");
    amxg_pack_job j = {x, shift, qs, lines, k, q0, len, ng, scale, pa, pb, v && !strcmp(v, "scalar")};
    sb_parallel_for(sb_chunk_count(ng, AMXG_PACK_GROUPS), amxg_pack_task, &j);
}

#if IG_AMX_CODE
/* The schedule (no bit depends on it: every sum is an exact int32). A task
 * takes AMXG_TP x AMXG_TP panel pairs of the upper triangle: for each column
 * panel, its whole pass of B (ng x 2 KiB) is read from L3 once and serves the
 * task's row panels, whose A stays in L2; each pair's 32 x 32 accumulator
 * tiles run over the whole pass in the registers, then fold into the weights. */
#define AMXG_TP 4

typedef struct amxg_job {
    int64_t lines, np, ng, nt;
    const uint8_t *pa, *pb;
    sb_amxg_fold_fn fold;
    void *ctx;
} amxg_job;

/* c (32 x 32 int32, rows of 32) := the products of ng consecutive groups of
 * A (32 rows x 64 k each) and B (two VNNI tiles each). */
AMX_TARGET static void amxg_pair(const uint8_t *A, const uint8_t *B, int64_t ng, int32_t *c) {
    TILE_ZERO(0);
    TILE_ZERO(1);
    TILE_ZERO(2);
    TILE_ZERO(3);
    amx_groups(A, B, ng);
    TILE_STORE(0, c, 128);
    TILE_STORE(1, c + 16, 128);
    TILE_STORE(2, c + 512, 128);
    TILE_STORE(3, c + 528, 128);
}

AMX_TARGET static void amxg_task(void *ctx, int64_t task) {
    const amxg_job *j = ctx;
    /* task -> (I, J), J >= I, row-major over the upper triangle of blocks */
    int64_t I = 0, rem = task;
    while (rem >= j->nt - I) rem -= j->nt - I, I++;
    const int64_t J = I + rem;
    const int64_t i0 = I * AMXG_TP, i1 = i0 + AMXG_TP < j->np ? i0 + AMXG_TP : j->np;
    const int64_t j0 = J * AMXG_TP, j1 = j0 + AMXG_TP < j->np ? j0 + AMXG_TP : j->np;
    const int64_t pstride = j->ng * AMXG_GROUP;
    int32_t c[32 * 32] __attribute__((aligned(64)));
    TILE_CONFIG(&g_amx_cfg);
    for (int64_t jj = j0; jj < j1; jj++)
        for (int64_t i = i0; i < i1 && i <= jj; i++) {
            amxg_pair(j->pa + i * pstride, j->pb + jj * pstride, j->ng, c);
            AMX_BARRIER(); /* the tiles' stores before c is read */
            j->fold(j->ctx, i, jj, c);
        }
    TILE_RELEASE();
}
#endif

sb_status sb_cpu_igemm_gram_amx(int64_t lines, int64_t ng, const uint8_t *pa, const uint8_t *pb, sb_amxg_fold_fn fold,
                                void *ctx) {
#if IG_AMX_CODE
    if (!sb_cpu_igemm_gram_amx_on())
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "sb_cpu_igemm_gram_amx: the integer product's path is not amx");
    if (lines <= 0 || ng <= 0) return SB_OK;
    const int64_t np = (lines + AMXG_LINES - 1) / AMXG_LINES, nt = (np + AMXG_TP - 1) / AMXG_TP;
    amxg_job j = {lines, np, ng, nt, pa, pb, fold, ctx};
    sb_parallel_for(nt * (nt + 1) / 2, amxg_task, &j);
    return SB_OK;
#else
    (void)lines, (void)ng, (void)pa, (void)pb, (void)fold, (void)ctx;
    return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "sb_cpu_igemm_gram_amx: no AMX code in this build");
#endif
}

/* ---- entry ---------------------------------------------------------------------- */

static sb_status igemm_entry(int64_t m, int64_t n, int64_t K, const int8_t *a, int64_t lda,
                             const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc, int upper) {
    if (m < 0 || n < 0 || K < 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "sb_cpu_igemm_s8: negative size (m=%lld n=%lld K=%lld)", (long long)m,
                       (long long)n, (long long)K);
    if (K > SB_CPU_IGEMM_MAX_K)
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "sb_cpu_igemm_s8: K=%lld exceeds %d, the most for which every int32 sum "
                       "of int8 products is exact", (long long)K, SB_CPU_IGEMM_MAX_K);
    if (m > 0 && n > 0) {
        if (!c) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_cpu_igemm_s8: c is NULL");
        if (ldc < n)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_cpu_igemm_s8: ldc=%lld < n=%lld",
                           (long long)ldc, (long long)n);
        if (K > 0) {
            if (!a || !b)
                return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_cpu_igemm_s8: %s is NULL",
                               !a ? "a" : "b");
            if (lda < K || ldb < K)
                return sb_fail(SB_ERR_INVALID_ARGUMENT,
                               "sb_cpu_igemm_s8: %s=%lld < K=%lld", lda < K ? "lda" : "ldb",
                               (long long)(lda < K ? lda : ldb), (long long)K);
        }
    }
    ig_path path;
    sb_status st = resolve_path(&path);
    if (st != SB_OK) return st;
    if (m == 0 || n == 0) return SB_OK;
    if (K == 0) {
        for (int64_t i = 0; i < m; i++) memset(c + i * ldc, 0, (size_t)n * sizeof(int32_t));
        return SB_OK;
    }
    ig_args g = {m, n, K, a, lda, b, ldb, c, ldc, upper};
    switch (path) {
#if defined(__x86_64__)
    case IG_VNNI: return run_blocked(&g, &g_vnni, "avx512vnni");
    case IG_AVX2: return run_blocked(&g, &g_avx2, "avx2");
#endif
#if IG_AMX_CODE
    case IG_AMX: return run_blocked(&g, &g_amx, "amx");
#endif
    default: run_scalar(&g); return SB_OK;
    }
}

sb_status sb_cpu_igemm_s8(int64_t m, int64_t n, int64_t K, const int8_t *a, int64_t lda,
                          const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc) {
    return igemm_entry(m, n, K, a, lda, b, ldb, c, ldc, 0);
}

sb_status sb_cpu_igemm_s8_upper(int64_t m, int64_t n, int64_t K, const int8_t *a, int64_t lda,
                                const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc) {
    return igemm_entry(m, n, K, a, lda, b, ldb, c, ldc, 1);
}
