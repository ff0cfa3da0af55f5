/*
 * gemm.c: the identical matrix product, C := op(A) * op(B) (sb_gemm), on the
 * host and on a GPU. The arithmetic is kernels/linalg.h's (the Ozaki scheme
 * taken to exactness; read its header first): every device computes the same
 * exact integers and rounds each element once, so the schedule here (tiles,
 * passes, threads, a vendor's integer GEMM) is free to change and cannot
 * reach a bit.
 *
 * The stages, in order, on either path:
 *  1. line scales: sigma of each row of op(A), tau of each column of op(B),
 *     and a flag for lines holding a NaN or an infinity;
 *  2. digit planes: each finite element as 4 balanced int8 digits, laid out
 *     per line as passes of up to SB_OZ_KCHUNK columns, 4 digit segments each
 *     (op(A) least significant first, op(B) most significant first);
 *  3. per pass, the seven weighted sums D_w = sum_{i+j=w} A_i B_j^T, each one
 *     int8 product over the contiguous run of segments that holds the pairs
 *     of weight w; passes add exactly in two 64-bit limbs;
 *  4. each element's exact total rounded once to float32, then the special
 *     values of flagged rows and columns.
 */
#include "linalg.h"
#include "../backends/cpu/igemm.h"
#include "../kernels/linalg.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define GEMM_LINE_GRAIN 64
#define GEMM_ROW_GRAIN 16
#define GEMM_BAND_BYTES ((int64_t)256 << 20) /* host parts of one band of rows, at most */
static int64_t g_band_bytes_for_tests;
void sb_gemm_band_bytes_for_tests(int64_t bytes) { g_band_bytes_for_tests = bytes; }

/* Where element q of line l of op(A) or op(B) is: x[l*ls + q*qs]. */
static void strides_a(const sb_gemm_shape *s, int64_t *ls, int64_t *qs) {
    *ls = s->ta ? 1 : s->lda;
    *qs = s->ta ? s->lda : 1;
}
static void strides_b(const sb_gemm_shape *s, int64_t *ls, int64_t *qs) {
    *ls = s->tb ? s->ldb : 1;
    *qs = s->tb ? 1 : s->ldb;
}

static int64_t pad_k(int64_t k) { return (k + SB_OZ_KPAD - 1) / SB_OZ_KPAD * SB_OZ_KPAD; }
static int64_t passes_of(int64_t kp, int64_t kc) { return kp == 0 ? 0 : (kp + kc - 1) / kc; }
static int64_t pass_len(int64_t kp, int64_t kc, int64_t c) {
    const int64_t r = kp - c * kc;
    return r < kc ? r : kc;
}
/* The digit pairs of weight w: op(A) segments [*i0, *i0 + *cnt), from op(B)'s
 * segment sb - 1 - w + *i0 on (op(B)'s segments run most significant first). */
static void pairs_of(int w, int sa, int sb, int *i0, int *cnt) {
    const int lo = w - (sb - 1) > 0 ? w - (sb - 1) : 0;
    const int hi = w < sa - 1 ? w : sa - 1;
    *i0 = lo;
    *cnt = hi - lo + 1;
}

sb_status sb_gemm_check(const sb_gemm_shape *s, int64_t ldc) {
    if ((s->ta != 0 && s->ta != 1) || (s->tb != 0 && s->tb != 1))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gemm: trans_a and trans_b are 0 or 1 (given %d, %d)", (int)s->ta,
                       (int)s->tb);
    if (s->m < 0 || s->n < 0 || s->k < 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gemm: m, n and k must be >= 0 (given %lld, %lld, %lld)",
                       (long long)s->m, (long long)s->n, (long long)s->k);
    if (s->m > INT32_MAX || s->n > INT32_MAX || s->k > INT32_MAX)
        return sb_fail(SB_ERR_LIMIT, "sb_gemm: m, n and k are at most 2^31 - 1 (given %lld, %lld, %lld)",
                       (long long)s->m, (long long)s->n, (long long)s->k);
    const int64_t need_a = s->ta ? s->m : s->k, need_b = s->tb ? s->k : s->n;
    if (s->lda < (need_a > 1 ? need_a : 1))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gemm: lda %lld is below %s %lld", (long long)s->lda,
                       s->ta ? "m" : "k", (long long)need_a);
    if (s->ldb < (need_b > 1 ? need_b : 1))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gemm: ldb %lld is below %s %lld", (long long)s->ldb,
                       s->tb ? "k" : "n", (long long)need_b);
    if (ldc < (s->n > 1 ? s->n : 1))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gemm: ldc %lld is below n %lld", (long long)ldc, (long long)s->n);
    /* the bytes the three arrays span must be addressable */
    const int64_t lim = INT64_MAX / 8;
    if (s->lda > lim / (s->ta ? (s->k > 0 ? s->k : 1) : (s->m > 0 ? s->m : 1)) ||
        s->ldb > lim / (s->tb ? (s->n > 0 ? s->n : 1) : (s->k > 0 ? s->k : 1)) ||
        ldc > lim / (s->m > 0 ? s->m : 1))
        return sb_fail(SB_ERR_LIMIT, "sb_gemm: the matrices span more than 2^60 elements");
    return SB_OK;
}

/* ---- the host path ------------------------------------------------------ */

typedef struct line_job {
    const float *x;
    int64_t ls, qs, nlines, k, kp, kc;
    int reverse, S;
    uint32_t *mb;
    int32_t *spread, *sigma;
    uint8_t *flag;
    int8_t *planes;
    double *scale; /* S = 4, strided lines: 2^sigma of each line, for the split */
    const float *shift; /* strided lines: element q of line l is fl(x - shift[l]) (NULL: x) */
} line_job;

/* The statistics of one element into a line's running values; the leading
 * exponent of a normal magnitude straight from its bits (sb_oz_lead's value). */
static inline void stat_add(uint32_t u, uint32_t *mb, uint8_t *nf, int64_t *sum, int64_t *cnt) {
    *nf |= (uint8_t)sb_oz_nonfinite(u);
    const uint32_t v = sb_oz_mag(u);
    *mb = v > *mb ? v : *mb;
    if (v) {
        *sum += v >= 0x00800000u ? (int64_t)(v >> 23) - 127 : (int64_t)sb_oz_lead(v);
        (*cnt)++;
    }
}

/* Stage 0: the largest finite magnitude, the nonfinite flag and the spread of lines [b, e). */
static void stats_task(void *ctx, int64_t task) {
    const line_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->nlines, GEMM_LINE_GRAIN, task, &b, &e);
    for (int64_t l = b; l < e; l++) {
        const float *x = j->x + l * j->ls;
        uint32_t mb = 0;
        uint8_t nf = 0;
        int64_t sum = 0, cnt = 0;
        const float sh = j->shift ? j->shift[l] : 0.0f;
        for (int64_t q = 0; q < j->k; q++)
            stat_add(sb_f2u(j->shift ? x[q * j->qs] - sh : x[q * j->qs]), &mb, &nf, &sum, &cnt);
        j->mb[l] = mb;
        j->flag[l] = (uint8_t)nf;
        j->spread[l] = sb_oz_spread(mb, sum, cnt);
    }
}

/* Stages 1 and 2 for lines [b, e): the scale and the S digit planes. */
static void split_task(void *ctx, int64_t task) {
    const line_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->nlines, GEMM_LINE_GRAIN, task, &b, &e);
    const int S = j->S;
    for (int64_t l = b; l < e; l++) {
        const float *x = j->x + l * j->ls;
        const int32_t sg = sb_oz_sigma(j->mb[l], S);
        j->sigma[l] = sg;
        int8_t *line = j->planes + l * S * j->kp;
        for (int64_t q = 0; q < j->kp; q++) {
            int64_t t = q < j->k ? sb_oz_fixed(sb_f2u(x[q * j->qs]), sg, S) : 0;
            const int64_t c = q / j->kc, lc = pass_len(j->kp, j->kc, c);
            int8_t *at = line + S * c * j->kc + (q - c * j->kc);
            for (int dq = 0; dq < S; dq++) {
                const int32_t d = (int32_t)((t + 128) & 255) - 128;
                t = (t - d) / 256;
                at[(j->reverse ? S - 1 - dq : dq) * lc] = (int8_t)d;
            }
        }
    }
}

/* Strided lines (a transposed operand: element q of line l at x[l + q*qs],
 * the lines of one q adjacent in memory): the same stages with q outer, so
 * the operand is read once, row by row, instead of once per line; blocks of
 * GEMM_QBLOCK values of q are the tasks. The statistics are integer maxima,
 * ors and sums, merged over the blocks in block order: the same values as the
 * line-by-line pass, whatever the thread count (no bit depends on this path). */
#define GEMM_QBLOCK 2048
#define GEMM_COLS_MAX_LINES 4096

typedef struct col_job {
    const line_job *j;
    uint32_t *pmb;
    uint8_t *pnf;
    int64_t *psum, *pcnt;
    int vec; /* stats_cols_avx512 */
} col_job;

/* Lines in groups of COLS_GROUP kept in locals while a block of q is read:
 * each task writes its results once, so neighbouring tasks never share a
 * cache line in the loop. */
#define COLS_GROUP 64
#if defined(__x86_64__)
static void stats_cols_avx512(const col_job *c, int64_t task);
#endif
static void stats_cols_task(void *ctx, int64_t task) {
    const col_job *c = ctx;
#if defined(__x86_64__)
    if (c->vec) {
        stats_cols_avx512(c, task);
        return;
    }
#endif
    const line_job *j = c->j;
    const int64_t L = j->nlines, q0 = task * GEMM_QBLOCK, q1 = q0 + GEMM_QBLOCK < j->k ? q0 + GEMM_QBLOCK : j->k;
    for (int64_t l0 = 0; l0 < L; l0 += COLS_GROUP) {
        const int64_t g = L - l0 < COLS_GROUP ? L - l0 : COLS_GROUP;
        uint32_t mb[COLS_GROUP] = {0};
        uint8_t nf[COLS_GROUP] = {0};
        int64_t sum[COLS_GROUP] = {0}, cnt[COLS_GROUP] = {0};
        for (int64_t q = q0; q < q1; q++) {
            const float *row = j->x + q * j->qs + l0 * j->ls;
            for (int64_t l = 0; l < g; l++)
                stat_add(sb_f2u(j->shift ? row[l * j->ls] - j->shift[l0 + l] : row[l * j->ls]), &mb[l], &nf[l],
                         &sum[l], &cnt[l]);
        }
        for (int64_t l = 0; l < g; l++) {
            c->pmb[task * L + l0 + l] = mb[l];
            c->pnf[task * L + l0 + l] = nf[l];
            c->psum[task * L + l0 + l] = sum[l];
            c->pcnt[task * L + l0 + l] = cnt[l];
        }
    }
}

#if defined(__x86_64__)
/* stats_cols_task's values, the lines of a row as the lanes of vectors: the
 * block's rows are read once, in order, and each line's running values (in
 * int32: a block's sum of leading exponents stays below 2048 x 150) live in
 * L1 arrays. The leading exponent of a subnormal magnitude v is
 * -150 + bitlen(v) = -118 - lzcnt(v), sb_oz_lead's value. */
__attribute__((target("avx512f,avx512cd"))) static void stats_cols_avx512(const col_job *c, int64_t task) {
    const line_job *j = c->j;
    const int64_t L = j->nlines, q0 = task * GEMM_QBLOCK, q1 = q0 + GEMM_QBLOCK < j->k ? q0 + GEMM_QBLOCK : j->k;
    uint32_t mb[GEMM_COLS_MAX_LINES] __attribute__((aligned(64)));
    uint32_t nf[GEMM_COLS_MAX_LINES] __attribute__((aligned(64)));
    int32_t sum[GEMM_COLS_MAX_LINES] __attribute__((aligned(64)));
    int32_t cnt[GEMM_COLS_MAX_LINES] __attribute__((aligned(64)));
    const int64_t L16 = (L + 15) / 16 * 16;
    memset(mb, 0, 4 * (size_t)L16);
    memset(nf, 0, 4 * (size_t)L16);
    memset(sum, 0, 4 * (size_t)L16);
    memset(cnt, 0, 4 * (size_t)L16);
    const __m512i expo = _mm512_set1_epi32(0x7f800000), absm = _mm512_set1_epi32(0x7fffffff);
    const __m512i one = _mm512_set1_epi32(1), b127 = _mm512_set1_epi32(127), m118 = _mm512_set1_epi32(-118);
    for (int64_t q = q0; q < q1; q++) {
        const float *row = j->x + q * j->qs;
        for (int64_t l0 = 0; l0 < L; l0 += 16) {
            const __mmask16 lm = L - l0 >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (L - l0)) - 1u);
            const __m512i u =
                j->shift ? _mm512_castps_si512(_mm512_maskz_sub_ps(lm, _mm512_maskz_loadu_ps(lm, row + l0),
                                                                   _mm512_maskz_loadu_ps(lm, j->shift + l0)))
                         : _mm512_maskz_loadu_epi32(lm, row + l0);
            const __mmask16 nfm = _mm512_cmpeq_epi32_mask(_mm512_and_si512(u, expo), expo);
            const __m512i v = _mm512_maskz_and_epi32((__mmask16)~nfm, u, absm);
            const __mmask16 nz = _mm512_test_epi32_mask(v, v);
            const __m512i e = _mm512_srli_epi32(v, 23);
            const __m512i lead = _mm512_mask_blend_epi32(_mm512_cmpgt_epi32_mask(e, _mm512_setzero_si512()),
                                                         _mm512_sub_epi32(m118, _mm512_lzcnt_epi32(v)),
                                                         _mm512_sub_epi32(e, b127));
            _mm512_store_si512(mb + l0, _mm512_max_epu32(_mm512_load_si512(mb + l0), v));
            _mm512_store_si512(nf + l0, _mm512_mask_or_epi32(_mm512_load_si512(nf + l0), nfm,
                                                              _mm512_load_si512(nf + l0), one));
            const __m512i s0 = _mm512_load_si512(sum + l0), c0 = _mm512_load_si512(cnt + l0);
            _mm512_store_si512(sum + l0, _mm512_mask_add_epi32(s0, nz, s0, lead));
            _mm512_store_si512(cnt + l0, _mm512_mask_add_epi32(c0, nz, c0, one));
        }
    }
    for (int64_t l = 0; l < L; l++) {
        c->pmb[task * L + l] = mb[l];
        c->pnf[task * L + l] = (uint8_t)nf[l];
        c->psum[task * L + l] = sum[l];
        c->pcnt[task * L + l] = cnt[l];
    }
}

static int stats_avx512_ok(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd");
}
#endif

/* Lines in groups of SPLIT_GROUP, q inner: a group's digits for a run of q
 * fill whole cache lines of its planes one after the other (line by line,
 * every q would write one byte into each of S x nlines cache lines). */
#define SPLIT_GROUP 16

/* The four digits of x' = RNE(x 2^sigma) for S = 4, where |x'| <= 2^30: the
 * rounding in double (x 2^sigma is exact there, and adding and subtracting
 * 1.5 2^52 rounds it to an integer, nearest-even: sb_oz_fixed's value, 0 for
 * an infinity or a NaN), then the digits as the bytes of x' + 0x80808080,
 * each less 128: the base-256 digits of a number in [0, 2^32) shifted by 128
 * each are the balanced digits of x', the only ones in [-128, 127]. Byte
 * order comes from shifts, so it is the same on a big-endian machine. */
static inline uint32_t split4_biased(float x, double scale) {
    const uint32_t u = sb_f2u(x);
    if ((u & 0x7f800000u) == 0x7f800000u) return 0x80808080u;
    const double t = (double)x * scale;
    const int32_t r = (int32_t)((t + 0x1.8p52) - 0x1.8p52);
    return (uint32_t)r + 0x80808080u;
}
static double split_pow2(int32_t e) {
    const uint64_t u = (uint64_t)(e + 1023) << 52;
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* Runs of SPLIT_RUN values of q, each read for every group of lines while
 * its rows are in cache (a run's rows, not the whole block's, are re-read
 * once a group), each group writing SPLIT_RUN bytes into each segment. */
#define SPLIT_RUN 64
static void split_cols4(const line_job *j, int64_t qb, int64_t qe) {
    const int64_t L = j->nlines;
    double *sc = j->scale;
    for (int64_t q0 = qb; q0 < qe; q0 += SPLIT_RUN)
    for (int64_t l0 = 0; l0 < L; l0 += SPLIT_GROUP) {
        const int64_t l1 = l0 + SPLIT_GROUP < L ? l0 + SPLIT_GROUP : L;
        const int64_t q1 = q0 + SPLIT_RUN < qe ? q0 + SPLIT_RUN : qe;
        for (int64_t q = q0; q < q1; q++) {
            const float *row = j->x + q * j->qs;
            const int64_t c = q / j->kc, lc = pass_len(j->kp, j->kc, c);
            for (int64_t l = l0; l < l1; l++) {
                const uint32_t b = q < j->k ? split4_biased(row[l * j->ls], sc[l]) : 0x80808080u;
                int8_t *at = j->planes + l * 4 * j->kp + 4 * c * j->kc + (q - c * j->kc);
                for (int dq = 0; dq < 4; dq++)
                    at[(j->reverse ? 3 - dq : dq) * lc] = (int8_t)((int32_t)((b >> (8 * dq)) & 255u) - 128);
            }
        }
    }
}

static void split_cols_task(void *ctx, int64_t task) {
    const line_job *j = ctx;
    const int S = j->S;
    const int64_t L = j->nlines, q0 = task * GEMM_QBLOCK, q1 = q0 + GEMM_QBLOCK < j->kp ? q0 + GEMM_QBLOCK : j->kp;
    if (S == 4 && j->scale) {
        split_cols4(j, q0, q1);
        return;
    }
    for (int64_t l0 = 0; l0 < L; l0 += SPLIT_GROUP)
    for (int64_t q = q0; q < q1; q++) {
        const float *row = j->x + q * j->qs;
        const int64_t c = q / j->kc, lc = pass_len(j->kp, j->kc, c);
        const int64_t l1 = l0 + SPLIT_GROUP < L ? l0 + SPLIT_GROUP : L;
        for (int64_t l = l0; l < l1; l++) {
            int64_t t = q < j->k ? sb_oz_fixed(sb_f2u(row[l * j->ls]), j->sigma[l], S) : 0;
            int8_t *at = j->planes + l * S * j->kp + S * c * j->kc + (q - c * j->kc);
            for (int dq = 0; dq < S; dq++) {
                const int32_t d = (int32_t)((t + 128) & 255) - 128;
                t = (t - d) / 256;
                at[(j->reverse ? S - 1 - dq : dq) * lc] = (int8_t)d;
            }
        }
    }
}

static int use_cols(const line_job *j) { return j->qs > 1 && j->ls == 1 && j->nlines <= GEMM_COLS_MAX_LINES; }

/* Stage 0 for every line of j: line by line, or q outer for strided lines. */
static sb_status line_stats(line_job *j) {
    if (!use_cols(j)) {
        sb_parallel_for(sb_chunk_count(j->nlines, GEMM_LINE_GRAIN), stats_task, j);
        return SB_OK;
    }
    const int64_t nb = sb_chunk_count(j->k, GEMM_QBLOCK), L = j->nlines, cells = (nb > 0 ? nb : 1) * L;
    col_job c = {j, sb_malloc(4 * (size_t)cells), sb_malloc((size_t)cells), sb_malloc(8 * (size_t)cells),
                 sb_malloc(8 * (size_t)cells), 0};
#if defined(__x86_64__)
    c.vec = stats_avx512_ok() && !getenv("SAMEBITS_GEMM_STATS_SCALAR");
#endif
    sb_status st = SB_OK;
    if (!c.pmb || !c.pnf || !c.psum || !c.pcnt) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_gemm: out of memory for the line statistics");
    } else {
        sb_parallel_for(nb, stats_cols_task, &c);
        for (int64_t l = 0; l < L; l++) {
            uint32_t mb = 0;
            int nf = 0;
            int64_t sum = 0, cnt = 0;
            for (int64_t t = 0; t < nb; t++) {
                mb = c.pmb[t * L + l] > mb ? c.pmb[t * L + l] : mb;
                nf |= c.pnf[t * L + l];
                sum += c.psum[t * L + l];
                cnt += c.pcnt[t * L + l];
            }
            j->mb[l] = mb;
            j->flag[l] = (uint8_t)nf;
            j->spread[l] = sb_oz_spread(mb, sum, cnt);
        }
    }
    sb_free(c.pmb);
    sb_free(c.pnf);
    sb_free(c.psum);
    sb_free(c.pcnt);
    return st;
}

/* Stages 1 and 2 for every line of j (its S, kc and planes set). */
static void line_split(line_job *j) {
    if (!use_cols(j)) {
        sb_parallel_for(sb_chunk_count(j->nlines, GEMM_LINE_GRAIN), split_task, j);
        return;
    }
    for (int64_t l = 0; l < j->nlines; l++) j->sigma[l] = sb_oz_sigma(j->mb[l], j->S);
    double *scale = j->S == 4 ? sb_malloc(sizeof(double) * (size_t)(j->nlines > 0 ? j->nlines : 1)) : NULL;
    if (scale)
        for (int64_t l = 0; l < j->nlines; l++) scale[l] = split_pow2(j->sigma[l]);
    j->scale = scale; /* NULL: the general split (no memory for the scales, or S > 4) */
    sb_parallel_for(sb_chunk_count(j->kp, GEMM_QBLOCK), split_cols_task, j);
    j->scale = NULL;
    sb_free(scale);
}

typedef struct band_job {
    const sb_gemm_shape *s;
    const float *a, *b;
    float *c;
    int64_t ldc, i0, rows, plane;
    int64_t q0, nc; /* the band's columns [q0, q0 + nc): a Gram's band starts at its diagonal */
    int sym;        /* a Gram: row i's elements from column i on only (the rest mirrored) */
    int nw, mode;
    const int32_t *sig_a, *sig_b;
    const uint8_t *flag_a, *flag_b;
    const int32_t *parts;
    sb_oz_acc *acc;
} band_job;

/* Stage 4 (and the exact addition of passes) for element (i, q), its parts
 * dv (the weights' sums, dv[w] for w < nw) at index el of the band's planes
 * and accumulators; (als, aqs) and (bls, bqs) the operands' strides. */
static inline void combine_cell(const band_job *j, int64_t i, int64_t q, int64_t el, const int64_t *dv, int64_t als,
                                int64_t aqs, int64_t bls, int64_t bqs) {
    const sb_gemm_shape *s = j->s;
#ifdef SB_SABOTAGE_GEMM_FMA
    /* Separating arm: the parts recombined in float with fused
     * multiply-adds (a contracted recombination) instead of exactly. */
    if (j->mode == 0) {
        const int32_t S = j->sig_a[i] + j->sig_b[q];
        float accf = 0.0f;
        for (int w = 0; w < j->nw; w++) {
            const int32_t ex = 8 * w - S;
            const float sc = ex > -127 && ex < 128 ? sb_u2f((uint32_t)(ex + 127) << 23) : 0.0f;
            accf = fmaf((float)dv[w], sc, accf);
        }
        j->c[i * j->ldc + q] = accf;
        return;
    }
#endif
    sb_oz_acc t;
    sb_oz_acc_from(dv, j->nw, &t);
    if (j->mode >= 2) sb_oz_acc_add(&t, &j->acc[el]);
    if (j->mode == 1 || j->mode == 2) {
        j->acc[el] = t;
        return;
    }
    uint32_t bits = s->k ? sb_oz_round(&t, j->sig_a[i] + j->sig_b[q]) : 0u;
    if (j->flag_a[i] || j->flag_b[q]) {
        const uint32_t sp = sb_oz_special(j->a, i * als, aqs, j->b, q * bls, bqs, s->k);
        if (sp) bits = sp;
    }
    j->c[i * j->ldc + q] = sb_u2f(bits);
}

/* Stage 4 (and the exact addition of passes) for rows [b, e) of a band. */
static void combine_task(void *ctx, int64_t task) {
    const band_job *j = ctx;
    const sb_gemm_shape *s = j->s;
    int64_t b, e;
    sb_chunk_range(j->rows, GEMM_ROW_GRAIN, task, &b, &e);
    int64_t als, aqs, bls, bqs;
    strides_a(s, &als, &aqs);
    strides_b(s, &bls, &bqs);
    for (int64_t r = b; r < e; r++) {
        const int64_t i = j->i0 + r;
        for (int64_t q = j->sym && i > j->q0 ? i : j->q0; q < j->q0 + j->nc; q++) {
            const int64_t el = r * j->nc + (q - j->q0);
            int64_t dv[SB_OZ_WMAX];
            for (int w = 0; w < SB_OZ_WMAX; w++) dv[w] = w < j->nw ? j->parts[w * j->plane + el] : 0;
            combine_cell(j, i, q, el, dv, als, aqs, bls, bqs);
        }
    }
}

#ifdef SB_SABOTAGE_GEMM_ORDER
/* Separating arm: the product summed in float, K cut into one chunk per
 * thread of the pool (the accumulation order follows the thread count). */
static sb_status sabotage_float_gemm(const sb_gemm_shape *s, const float *a, const float *b, float *c, int64_t ldc) {
    int64_t als, aqs, bls, bqs;
    strides_a(s, &als, &aqs);
    strides_b(s, &bls, &bqs);
    const int64_t width = sb_parallel_width(), chunk = (s->k + width - 1) / (width > 0 ? width : 1);
    for (int64_t i = 0; i < s->m; i++)
        for (int64_t jj = 0; jj < s->n; jj++) {
            float acc = 0.0f;
            for (int64_t q0 = 0; q0 < s->k; q0 += chunk) {
                float part = 0.0f;
                for (int64_t q = q0; q < q0 + chunk && q < s->k; q++) {
                    const float p = a[i * als + q * aqs] * b[jj * bls + q * bqs];
                    part = part + p;
                }
                acc = acc + part;
            }
            c[i * ldc + jj] = acc;
        }
    return SB_OK;
}
#endif

/* A Gram's op(B) digit planes from op(A)'s: per line and pass, the S
 * segments in reverse order (op(A) least significant first, op(B) most
 * significant first); the same bytes line_split would write for op(B). */
typedef struct mirror_job {
    const int8_t *pa;
    int8_t *pb;
    int64_t lines, kp, kc;
    int S;
} mirror_job;

static void mirror_task(void *ctx, int64_t task) {
    const mirror_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->lines, GEMM_LINE_GRAIN, task, &b, &e);
    const int64_t ld = j->S * j->kp;
    for (int64_t l = b; l < e; l++)
        for (int64_t p = 0; p * j->kc < j->kp; p++) {
            const int64_t lc = pass_len(j->kp, j->kc, p), base = l * ld + j->S * p * j->kc;
            for (int t = 0; t < j->S; t++)
                memcpy(j->pb + base + (j->S - 1 - t) * lc, j->pa + base + t * lc, (size_t)lc);
        }
}

static void mirror_planes(const int8_t *pa, int8_t *pb, int64_t lines, int S, int64_t kp, int64_t kc) {
    mirror_job j = {pa, pb, lines, kp, kc, S};
    sb_parallel_for(sb_chunk_count(lines, GEMM_LINE_GRAIN), mirror_task, &j);
}

/* The digits of an operand from its lines' spreads (the largest decides). */
static int digits_of(const int32_t *spread, int64_t n) {
    int32_t mx = 0;
    for (int64_t l = 0; l < n; l++) mx = spread[l] > mx ? spread[l] : mx;
    return sb_oz_digits_for(mx);
}

/* The AMX Gram's fold (sb_cpu_igemm_gram_amx's callback): panel pair (pi, pj)
 * of one pass, cb's row 4a + d1 digit d1 of line 8pi + a and its column
 * 4b + d2 digit d2 of line 8pj + b: each element's seven weighted sums, then
 * stage 4 as combine_task does it (the same parts, so the same bits). */
static void gram_fold(void *ctx, int64_t pi, int64_t pj, const int32_t *cb) {
    const band_job *j = ctx;
    const int64_t m = j->rows;
    int64_t als, aqs, bls, bqs;
    strides_a(j->s, &als, &aqs);
    strides_b(j->s, &bls, &bqs);
    for (int64_t a = 0; a < 8 && 8 * pi + a < m; a++)
        for (int64_t b = pi == pj ? a : 0; b < 8 && 8 * pj + b < m; b++) {
            const int64_t i = 8 * pi + a, q = 8 * pj + b;
            int64_t dv[SB_OZ_WMAX];
            for (int w = 0; w < SB_OZ_WMAX; w++) {
                int64_t sum = 0;
                for (int d1 = w - 3 > 0 ? w - 3 : 0; d1 <= (w < 3 ? w : 3) && w < 7; d1++)
                    sum += cb[(4 * a + d1) * 32 + 4 * b + (w - d1)];
                dv[w] = sum;
            }
            combine_cell(j, i, q, i * m + q, dv, als, aqs, bls, bqs);
        }
}

/* A Gram of four-digit strided lines (C = X^T X of a row-major X) on the AMX
 * path: per pass, the digits go straight into the two layouts the tiles read
 * (sb_cpu_amxg_pack4, both sides at once: they are the same lines, less
 * shift where given), every digit pair of the upper triangle's panels is
 * multiplied from there (sb_cpu_igemm_gram_amx) and each pair's products are
 * folded into the passes' exact totals right away (gram_fold), instead of
 * digit planes repacked for each of the seven weighted products. The parts
 * are the same exact D_w, so every bit is the planes' (tests/unit/
 * test_gemm_roads.c compares). */
static sb_status gram_amx(const sb_gemm_shape *s, const float *a, const float *shift, float *c, int64_t ldc,
                          int64_t qs, const uint32_t *mb, const uint8_t *flag) {
    const int64_t m = s->m, kp = pad_k(s->k), kc = sb_oz_kchunk(4), npass = passes_of(kp, kc);
    const int64_t ngmax = (pass_len(kp, kc, 0) + 63) / 64;
    sb_status st = SB_OK;
    int32_t *sig = sb_malloc(4 * (size_t)m);
    double *scale = sb_malloc(sizeof(double) * (size_t)m);
    uint8_t *pa = sb_malloc((size_t)sb_cpu_amxg_bytes(m, ngmax));
    uint8_t *pb = sb_malloc((size_t)sb_cpu_amxg_bytes(m, ngmax));
    sb_oz_acc *acc = npass > 1 ? sb_malloc(sizeof(sb_oz_acc) * (size_t)(m * m)) : NULL;
    if (!sig || !scale || !pa || !pb || (npass > 1 && !acc)) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_gemm: out of memory for %lld x %lld x %lld", (long long)m,
                     (long long)m, (long long)s->k);
        goto done;
    }
    for (int64_t l = 0; l < m; l++) {
        sig[l] = sb_oz_sigma(mb[l], 4);
        scale[l] = split_pow2(sig[l]);
    }
    for (int64_t p = 0; p < npass && st == SB_OK; p++) {
        const int64_t len = pass_len(kp, kc, p);
        const int mode = npass <= 1 ? 0 : p == 0 ? 1 : p == npass - 1 ? 3 : 2;
        band_job jt = {s, a, a, c, ldc, 0, m, m * m, 0, m, 1, 7, mode, sig, sig, flag, flag, NULL, acc};
        sb_cpu_amxg_pack4(a, qs, shift, m, s->k, p * kc, len, scale, pa, pb);
        st = sb_cpu_igemm_gram_amx(m, (len + 63) / 64, pa, pb, gram_fold, &jt);
    }
    if (st == SB_OK)
        for (int64_t i = 1; i < m; i++)
            for (int64_t q = 0; q < i; q++) c[i * ldc + q] = c[q * ldc + i];
done:
    sb_free(sig);
    sb_free(scale);
    sb_free(pa);
    sb_free(pb);
    sb_free(acc);
    return st;
}

/* Which host road takes the exact totals (SAMEBITS_GEMM_HOST): both give
 * the same integers, hence the same bits (gemm_direct.c); the variable is for
 * tests that run each road, and for measuring them. Unset or empty: the
 * direct road where both operands have four digits and the shape fits it.
 * Read at every product on purpose, not once per process: tests switch
 * roads within one process, and the read costs a scan of the environment
 * against the product's O(lines) statistics at the least. */
enum { ROAD_AUTO = 0, ROAD_DIGITS = 1, ROAD_DIRECT = 2 };
static sb_status host_road(int *road) {
    const char *v = getenv("SAMEBITS_GEMM_HOST");
    *road = ROAD_AUTO;
    if (!v || !*v || !strcmp(v, "auto")) return SB_OK;
    if (!strcmp(v, "digits")) *road = ROAD_DIGITS;
    else if (!strcmp(v, "direct")) *road = ROAD_DIRECT;
    else
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "SAMEBITS_GEMM_HOST=%s: the host roads are auto, digits and direct", v);
    return SB_OK;
}

void sb_gemm_prep_free(sb_gemm_prep *p) {
    if (!p) return;
    sb_free(p->mb);
    sb_free(p->spread);
    sb_free(p->sigma);
    sb_free(p->flag);
    sb_free(p->v);
    memset(p, 0, sizeof *p);
}

sb_status sb_gemm_prep_make(const float *x, int64_t ls, int64_t qs, int64_t nlines, int64_t k, sb_gemm_prep *p) {
    memset(p, 0, sizeof *p);
    p->x = x, p->ls = ls, p->qs = qs, p->nlines = nlines, p->k = k;
    const size_t nl = (size_t)(nlines > 0 ? nlines : 1);
    p->mb = sb_malloc(4 * nl), p->spread = sb_malloc(4 * nl), p->sigma = sb_malloc(4 * nl), p->flag = sb_malloc(nl);
    if (!p->mb || !p->spread || !p->sigma || !p->flag) {
        sb_gemm_prep_free(p);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_gemm: out of memory for a prepared operand");
    }
    line_job j = {x, ls, qs, nlines, k, pad_k(k), 0, 0, 0, p->mb, p->spread, p->sigma, p->flag, NULL, NULL, NULL};
    sb_status st = line_stats(&j);
    if (st != SB_OK) {
        sb_gemm_prep_free(p);
        return st;
    }
    p->S = digits_of(p->spread, nlines);
    for (int64_t l = 0; l < nlines; l++) p->sigma[l] = sb_oz_sigma(p->mb[l], SB_OZ_SMIN);
    /* the integers only where the direct road can use them; otherwise the statistics alone */
    if (p->S == SB_OZ_SMIN && k > 0 && nlines > 0 && (p->v = sb_malloc(4 * (size_t)nlines * (size_t)k)) != NULL &&
        (st = sb_gemm_direct_values(x, ls, qs, nlines, k, p->sigma, p->v)) != SB_OK) {
        sb_free(p->v);
        p->v = NULL;
        sb_clear_error();
    }
    return SB_OK;
}

/* Whether p holds the lines of an operand read at x with strides ls, qs. */
static int prep_matches(const sb_gemm_prep *p, const float *x, int64_t ls, int64_t qs, int64_t nlines, int64_t k) {
    return p && p->x == x && p->ls == ls && p->qs == qs && p->nlines == nlines && p->k == k;
}

/* Whether the direct road is the faster one for s (a matter of speed only:
 * both roads give the same bits). Where the planes' int8 product has vector
 * kernels, they win on large, wide products; the direct road's scalar 64-bit
 * products win on skinny ones (a side of at most 16 lines), short K, small
 * products and long Gram-like sums; with its own vector kernels (AVX2,
 * AVX-512) on any side of at most 128 lines, K up to 128 or 2^28 products
 * (bench/gemm_roads_bench.py measures them; bench/results/gemm-roads-*).
 * Without vector kernels for the planes the direct road always wins. */
static int direct_pays(const sb_gemm_shape *s) {
    if (!sb_gemm_direct_fits(s)) return 0;
    if (!strcmp(sb_cpu_igemm_path(), "scalar")) return 1;
    const int64_t lo = s->m < s->n ? s->m : s->n, hi = s->m < s->n ? s->n : s->m;
    const double products = (double)s->m * (double)s->n * (double)s->k;
    const char *dk = sb_gemm_direct_kernel();
    if (!strcmp(dk, "avx2") || !strcmp(dk, "avx512")) /* the direct road's vector kernels: the planes win only */
        return lo <= 128 || s->k <= 128 || products <= 268435456.0; /* on large products of wide operands */
    return lo <= 16 || s->k <= 128 || products <= 67108864.0 || s->k >= 1024 * hi;
}

sb_status sb_gemm_host(const sb_gemm_shape *s, const float *a, const float *b, float *c, int64_t ldc) {
    return sb_gemm_host_prep(s, a, b, c, ldc, NULL, NULL);
}

sb_status sb_gemm_host_prep(const sb_gemm_shape *s, const float *a, const float *b, float *c, int64_t ldc,
                            const sb_gemm_prep *prep_a, const sb_gemm_prep *prep_b) {
    if (s->m == 0 || s->n == 0) return SB_OK;
#ifdef SB_SABOTAGE_GEMM_ORDER
    return sabotage_float_gemm(s, a, b, c, ldc);
#endif
    const int64_t m = s->m, n = s->n, kp = pad_k(s->k);
    sb_status st = SB_OK;
    uint32_t *mb_a = NULL, *mb_b = NULL;
    int32_t *sp_a = NULL, *sp_b = NULL, *sig_a = NULL, *sig_b = NULL;
    uint8_t *flag_a = NULL, *flag_b = NULL;
    int8_t *pa = NULL, *pb = NULL;
    int32_t *parts = NULL;
    sb_oz_acc *acc = NULL;
    int64_t ls, qs;
    strides_a(s, &ls, &qs);
    line_job ja = {a, ls, qs, m, s->k, kp, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    strides_b(s, &ls, &qs);
    line_job jb = {b, ls, qs, n, s->k, kp, 0, 1, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    if (!prep_matches(prep_a, a, ja.ls, ja.qs, m, s->k)) prep_a = NULL;
    if (!prep_matches(prep_b, b, jb.ls, jb.qs, n, s->k)) prep_b = NULL;
    /* Each side's statistics: a prepared operand's are read where they lie
     * (every logistic evaluation passes here: no O(lines) copy on that road);
     * the others are computed into arrays of this call. */
    const int gram = !prep_b && a == b && m == n && ja.ls == jb.ls && ja.qs == jb.qs;
    if (!prep_a && (!(mb_a = sb_malloc(4 * (size_t)m)) || !(sp_a = sb_malloc(4 * (size_t)m)) ||
                    !(flag_a = sb_malloc((size_t)m))))
        goto oom;
    if (!prep_b && !gram && (!(mb_b = sb_malloc(4 * (size_t)n)) || !(sp_b = sb_malloc(4 * (size_t)n)) ||
                             !(flag_b = sb_malloc((size_t)n))))
        goto oom;
    ja.mb = mb_a, ja.spread = sp_a, ja.flag = flag_a;
    jb.mb = mb_b, jb.spread = sp_b, jb.flag = flag_b;
    if (!prep_a && (st = line_stats(&ja)) != SB_OK) goto done;
    if (!prep_b && !gram && (st = line_stats(&jb)) != SB_OK) goto done;
    const uint32_t *MA = prep_a ? prep_a->mb : mb_a, *MB = prep_b ? prep_b->mb : gram ? MA : mb_b;
    const int32_t *SPA = prep_a ? prep_a->spread : sp_a, *SPB = prep_b ? prep_b->spread : gram ? SPA : sp_b;
    const uint8_t *FA = prep_a ? prep_a->flag : flag_a, *FB = prep_b ? prep_b->flag : gram ? FA : flag_b;
    const int sa = prep_a ? prep_a->S : digits_of(SPA, m);
    const int sbd = prep_b ? prep_b->S : gram ? sa : digits_of(SPB, n);
    int road;
    if ((st = host_road(&road)) != SB_OK) goto done;
    if ((sa == SB_OZ_SMIN || sbd == SB_OZ_SMIN) && road != ROAD_DIGITS &&
        (road == ROAD_DIRECT || direct_pays(s))) {
        if (!sb_gemm_direct_fits(s) && s->k > 0) {
            st = sb_fail(SB_ERR_BACKEND_UNAVAILABLE,
                         "sb_gemm: SAMEBITS_GEMM_HOST=direct, but the direct road does not take %lld x %lld x %lld",
                         (long long)m, (long long)n, (long long)s->k);
            goto done;
        }
        if (s->k > 0) {
            /* the scales: a prepared four-digit side's are its own sigma */
            const int32_t *GA = prep_a && sa == SB_OZ_SMIN ? prep_a->sigma : NULL;
            const int32_t *GB = prep_b && sbd == SB_OZ_SMIN ? prep_b->sigma : NULL;
            if (!GA) {
                if (!(sig_a = sb_malloc(4 * (size_t)m))) goto oom;
                for (int64_t i = 0; i < m; i++) sig_a[i] = sb_oz_sigma(MA[i], sa);
                GA = sig_a;
            }
            if (!GB) {
                if (!(sig_b = sb_malloc(4 * (size_t)n))) goto oom;
                for (int64_t q = 0; q < n; q++) sig_b[q] = sb_oz_sigma(MB[q], sbd);
                GB = sig_b;
            }
            st = sb_gemm_direct_host(s, a, b, c, ldc, GA, GB, FA, FB, prep_a ? prep_a->v : NULL,
                                     prep_b ? prep_b->v : NULL, sa > SB_OZ_SMIN, sbd > SB_OZ_SMIN);
            goto done;
        }
    }
    if (gram && sa == 4 && sbd == 4 && s->k > 0 && use_cols(&ja) && road != ROAD_DIRECT &&
        !getenv("SAMEBITS_GEMM_NO_AMX_GRAM") && sb_cpu_igemm_gram_amx_on()) {
        st = gram_amx(s, a, NULL, c, ldc, ja.qs, MA, FA);
        goto done;
    }
    /* the digit planes: this call's own statistics arrays (a prepared side's copied in) */
    if (!mb_a && (!(mb_a = sb_malloc(4 * (size_t)m)) || !(sp_a = sb_malloc(4 * (size_t)m)) ||
                  !(flag_a = sb_malloc((size_t)m))))
        goto oom;
    if (!mb_b && (!(mb_b = sb_malloc(4 * (size_t)n)) || !(sp_b = sb_malloc(4 * (size_t)n)) ||
                  !(flag_b = sb_malloc((size_t)n))))
        goto oom;
    if (MA != mb_a) memcpy(mb_a, MA, 4 * (size_t)m), memcpy(sp_a, SPA, 4 * (size_t)m), memcpy(flag_a, FA, (size_t)m);
    if (MB != mb_b) memcpy(mb_b, MB, 4 * (size_t)n), memcpy(sp_b, SPB, 4 * (size_t)n), memcpy(flag_b, FB, (size_t)n);
    if (!(sig_a = sb_malloc(4 * (size_t)m)) || !(sig_b = sb_malloc(4 * (size_t)n))) goto oom;
    ja.mb = mb_a, ja.spread = sp_a, ja.flag = flag_a, ja.sigma = sig_a;
    jb.mb = mb_b, jb.spread = sp_b, jb.flag = flag_b, jb.sigma = sig_b;
    const int nw = sa + sbd - 1;
    const int64_t kc = sb_oz_kchunk(sa < sbd ? sa : sbd), npass = passes_of(kp, kc);
    ja.S = sa, ja.kc = kc, jb.S = sbd, jb.kc = kc;
    if (!(pa = sb_malloc((size_t)(sa * kp * m) + 1)) || !(pb = sb_malloc((size_t)(sbd * kp * n) + 1))) goto oom;
    ja.planes = pa, jb.planes = pb;
    line_split(&ja);
    /* A Gram (op(B) = op(A)^T): B's digits are A's, each pass's segments in
     * the other order, so they are copied rather than split again; and only
     * the bands' columns from their diagonal on are multiplied, the rest
     * mirrored at the end: element (i, q) and (q, i) are the same exact
     * integer under the same scales (products commute), so the same bits. */
    const int sym = gram && sa == sbd;
    if (sym) {
        memcpy(sig_b, sig_a, 4 * (size_t)n); /* line_split's scales of op(A), which op(B)'s would equal */
        mirror_planes(pa, pb, m, sa, kp, kc);
    } else {
        line_split(&jb);
    }
    /* bands of rows whose parts fit GEMM_BAND_BYTES (a schedule: it decides no
     * bit); a Gram's band computes its columns from its first row on only
     * (the lower triangle is mirrored from the upper) */
    int64_t band = (g_band_bytes_for_tests > 0 ? g_band_bytes_for_tests : GEMM_BAND_BYTES) / ((int64_t)nw * n * 4);
    band = band < 64 ? 64 : band / 64 * 64;
    if (band > m) band = m;
    if (!(parts = sb_malloc(4 * (size_t)(nw * band * n))) ||
        (npass > 1 && !(acc = sb_malloc(sizeof(sb_oz_acc) * (size_t)(band * n)))))
        goto oom;
    const int64_t lda = sa * kp, ldb = sbd * kp;
    for (int64_t i0 = 0; i0 < m && st == SB_OK; i0 += band) {
        /* a Gram's band: its columns from the band's first row on, and of those
         * only the upper triangle (sb_cpu_igemm_s8_upper skips the rest) */
        const int64_t rows = m - i0 < band ? m - i0 : band, q0 = sym ? i0 : 0, nc = n - q0, plane = rows * nc;
        for (int64_t p = 0; p < (npass > 0 ? npass : 1) && st == SB_OK; p++) {
            if (npass == 0) {
                memset(parts, 0, 4 * (size_t)(nw * plane));
            } else {
                const int64_t lc = pass_len(kp, kc, p);
                for (int w = 0; w < nw && st == SB_OK; w++) {
                    int i0d, cnt;
                    pairs_of(w, sa, sbd, &i0d, &cnt);
                    st = (sym ? sb_cpu_igemm_s8_upper : sb_cpu_igemm_s8)(
                        rows, nc, cnt * lc, pa + i0 * lda + sa * p * kc + i0d * lc, lda,
                        pb + q0 * ldb + sbd * p * kc + (sbd - 1 - w + i0d) * lc, ldb, parts + w * plane, nc);
                }
            }
            if (st != SB_OK) break;
            const int mode = npass <= 1 ? 0 : p == 0 ? 1 : p == npass - 1 ? 3 : 2;
            band_job jt = {s,  a,  b,    c,      ldc,    i0,     rows,   plane, q0,
                           nc, sym, nw, mode, sig_a, sig_b, flag_a, flag_b, parts, acc};
            sb_parallel_for(sb_chunk_count(rows, GEMM_ROW_GRAIN), combine_task, &jt);
        }
    }
    if (sym && st == SB_OK)
        for (int64_t i = 1; i < m; i++)
            for (int64_t q = 0; q < i; q++) c[i * ldc + q] = c[q * ldc + i];
    goto done;
oom:
    st = sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_gemm: out of memory for %lld x %lld x %lld", (long long)m, (long long)n,
                 (long long)s->k);
done:
    sb_free(mb_a);
    sb_free(mb_b);
    sb_free(sp_a);
    sb_free(sp_b);
    sb_free(sig_a);
    sb_free(sig_b);
    sb_free(flag_a);
    sb_free(flag_b);
    sb_free(pa);
    sb_free(pb);
    sb_free(parts);
    sb_free(acc);
    return st;
}

/* G := Xc^T Xc for Xc = X - 1 mean^T (each element fl(x - mean_l), one
 * float32 subtraction), X n x p row-major (ldx), G p x p (ldg). Where the
 * AMX Gram takes it (four digits, no nonfinite centered element), the
 * centered values are formed where they are read (the statistics and the
 * packing), so no centered copy is written; otherwise the copy is made and
 * sb_gemm_host multiplies it. The same bits either way: both read the same
 * centered floats. */
sb_status sb_gemm_host_gram_centered(int64_t n, int64_t p, const float *x, int64_t ldx, const float *mean, float *g,
                                     int64_t ldg) {
    const sb_gemm_shape s = {1, 0, p, p, n, p, p};
    if (p == 0) return SB_OK;
    int road = ROAD_AUTO;
    sb_status st = host_road(&road);
    if (st != SB_OK) return st;
#if defined(__x86_64__) && !defined(SB_SABOTAGE_GEMM_ORDER) /* that arm's float product takes the copy */
    if (n > 0 && road != ROAD_DIRECT && p <= GEMM_COLS_MAX_LINES && !getenv("SAMEBITS_GEMM_NO_AMX_GRAM") &&
        sb_cpu_igemm_gram_amx_on()) {
        uint32_t *mb = sb_malloc(4 * (size_t)p);
        int32_t *sp = sb_malloc(4 * (size_t)p);
        uint8_t *fl = sb_malloc((size_t)p);
        line_job j = {x, 1, ldx, p, n, pad_k(n), 0, 0, 0, mb, sp, NULL, fl, NULL, NULL, mean};
        int taken = 0;
        if (!mb || !sp || !fl) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_gemm: out of memory for %lld lines", (long long)p);
        else st = line_stats(&j);
        if (st == SB_OK) {
            int nf = 0;
            for (int64_t l = 0; l < p; l++) nf |= fl[l];
            if (!nf && digits_of(sp, p) == 4) {
                taken = 1;
                st = gram_amx(&s, x, mean, g, ldg, ldx, mb, fl);
            }
        }
        sb_free(mb);
        sb_free(sp);
        sb_free(fl);
        if (st != SB_OK || taken) return st;
    }
#endif
    float *xc = sb_malloc(sizeof(float) * (size_t)(n * p > 0 ? n * p : 1));
    if (!xc) return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_gemm: out of memory for %lld x %lld", (long long)n, (long long)p);
    for (int64_t i = 0; i < n; i++)
        for (int64_t l = 0; l < p; l++) xc[i * p + l] = x[i * ldx + l] - mean[l];
    st = sb_gemm_host(&s, xc, xc, g, ldg);
    sb_free(xc);
    return st;
}

/* ---- the device path ---------------------------------------------------- */

void sb_gemm_ws_release(sb_device *d, sb_gemm_ws *ws) {
    sb_dbuf *all[] = {&ws->mb_a,  &ws->sig_a, &ws->flag_a,   &ws->mb_b,     &ws->sig_b, &ws->flag_b, &ws->spread,
                      &ws->sum_a, &ws->cnt_a, &ws->sum_b,    &ws->cnt_b,    &ws->planes_a, &ws->planes_b,
                      &ws->parts, &ws->accb,  &ws->acct, &ws->dparts};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sb_device_release(d, all[i]);
}

static int64_t groups_of(const sb_device *d, int64_t items) { return (items + d->wg - 1) / d->wg; }
/* The grid's second dimension: its kernels stride past 65535 (CUDA's limit there). */
static int64_t rows_of(int64_t items) { return items < 65535 ? (items > 0 ? items : 1) : 65535; }

/* Stage 0 of one operand on d: magnitudes, flags, the largest spread into
 * spread[slot]. Every statistic is a max, an or or an integer sum, gathered
 * by integer atomics where work is split: the kernel chosen (a schedule)
 * reaches no bit. */
#define DEV_FEW_LINES 64                   /* contiguous lines below this count are cut into ranges */
#define DEV_RANGE_GRAIN ((int64_t)1 << 16) /* elements of a range */
static sb_status stats_on(sb_device *d, const sb_dbuf *x, int64_t ls, int64_t qs, int64_t nlines, int64_t k,
                          sb_dbuf *mb, sb_dbuf *flag, sb_dbuf *sum, sb_dbuf *cnt, sb_dbuf *spread, int32_t slot) {
    const int64_t off = 0;
    const int32_t zero = 0;
    sb_status st = sb_device_write(d, spread, 4 * (size_t)slot, &zero, 4, "gemm spread");
    if (st != SB_OK) return st;
    /* long contiguous lines: a work-group a line; few of them (a residual
     * vector): work-groups of ranges of each line */
    if (qs == 1 && k >= 1024 && nlines >= DEV_FEW_LINES)
        return SB_LAUNCH(d, SB_KL_kl_line_scale_rows, nlines, 1, 0, SB_ARG(x->h), SB_ARG(off), SB_ARG(ls),
                         SB_ARG(nlines), SB_ARG(k), SB_ARG(mb->h), SB_ARG(flag->h), SB_ARG(spread->h), SB_ARG(slot));
    if (qs == 1 && k >= 1024) {
        const int64_t rgrain = DEV_RANGE_GRAIN, nranges = (k + rgrain - 1) / rgrain;
        if ((st = SB_LAUNCH(d, SB_KL_kl_stats_zero, groups_of(d, nlines), 1, 0, SB_ARG(nlines), SB_ARG(mb->h),
                            SB_ARG(flag->h), SB_ARG(sum->h), SB_ARG(cnt->h))) != SB_OK ||
            (st = SB_LAUNCH(d, SB_KL_kl_line_scale_ranges, nranges, nlines, 0, SB_ARG(x->h), SB_ARG(off), SB_ARG(ls),
                            SB_ARG(nlines), SB_ARG(k), SB_ARG(rgrain), SB_ARG(mb->h), SB_ARG(flag->h), SB_ARG(sum->h),
                            SB_ARG(cnt->h))) != SB_OK)
            return st;
        return SB_LAUNCH(d, SB_KL_kl_stats_finish, groups_of(d, nlines), 1, 0, SB_ARG(nlines), SB_ARG(mb->h),
                         SB_ARG(sum->h), SB_ARG(cnt->h), SB_ARG(spread->h), SB_ARG(slot));
    }
    /* lines far apart, or short: a work-item a line and a chunk, neighbours on neighbouring lines */
    if ((st = SB_LAUNCH(d, SB_KL_kl_stats_zero, groups_of(d, nlines), 1, 0, SB_ARG(nlines), SB_ARG(mb->h),
                        SB_ARG(flag->h), SB_ARG(sum->h), SB_ARG(cnt->h))) != SB_OK)
        return st;
    const int64_t chunks = (k + 127) / 128;
    if (k > 0 && (st = SB_LAUNCH(d, SB_KL_kl_line_scale, groups_of(d, nlines), rows_of(chunks), 0, SB_ARG(x->h),
                                 SB_ARG(off), SB_ARG(ls), SB_ARG(qs), SB_ARG(nlines), SB_ARG(k), SB_ARG(mb->h),
                                 SB_ARG(flag->h), SB_ARG(sum->h), SB_ARG(cnt->h))) != SB_OK)
        return st;
    return SB_LAUNCH(d, SB_KL_kl_stats_finish, groups_of(d, nlines), 1, 0, SB_ARG(nlines), SB_ARG(mb->h),
                     SB_ARG(sum->h), SB_ARG(cnt->h), SB_ARG(spread->h), SB_ARG(slot));
}

/* Stages 1 and 2 of one operand on d. */
static sb_status split_on(sb_device *d, const sb_dbuf *x, int64_t ls, int64_t qs, int64_t nlines, int64_t k,
                          int64_t kp, int32_t S, int64_t kc, int32_t reverse, const sb_dbuf *mb, sb_dbuf *sig,
                          sb_dbuf *planes) {
    const int64_t off = 0;
    int32_t kshift = 0;
    while (((int64_t)1 << kshift) < kc) kshift++;
    if (ls == 1 && qs != 1) /* lines far apart: tiles through local memory */
        return SB_LAUNCH(d, SB_KL_kl_split_tiled, (kp + 31) / 32, rows_of((nlines + 31) / 32), 0, SB_ARG(x->h),
                         SB_ARG(off), SB_ARG(ls), SB_ARG(qs), SB_ARG(nlines), SB_ARG(k), SB_ARG(kp), SB_ARG(S),
                         SB_ARG(kshift), SB_ARG(mb->h), SB_ARG(sig->h), SB_ARG(planes->h), SB_ARG(reverse));
    return SB_LAUNCH(d, SB_KL_kl_split, groups_of(d, kp), rows_of(nlines), 0, SB_ARG(x->h), SB_ARG(off), SB_ARG(ls),
                     SB_ARG(qs), SB_ARG(nlines), SB_ARG(k), SB_ARG(kp), SB_ARG(S), SB_ARG(kshift), SB_ARG(mb->h),
                     SB_ARG(sig->h), SB_ARG(planes->h), SB_ARG(reverse));
}

/* One int8 product of stage 3: the vendor's where d has one, else the portable kernel. */
static sb_status igemm_on(sb_device *d, int64_t m, int64_t n, int64_t len, const sb_dbuf *pa, int64_t aoff,
                          int64_t lda, const sb_dbuf *pb, int64_t boff, int64_t ldb, sb_dbuf *parts, int64_t doff) {
    sb_status st = sb_device_igemm_s8(d, m, n, len, pa, (size_t)aoff, lda, pb, (size_t)boff, ldb, parts,
                                      (size_t)doff * sizeof(int32_t), n);
    if (st != SB_ERR_NOT_FOUND) return st;
    const int64_t ldd = n;
    return SB_LAUNCH(d, SB_KL_kl_igemm, (n + 63) / 64, (m + 63) / 64, 0, SB_ARG(pa->h), SB_ARG(aoff), SB_ARG(lda),
                     SB_ARG(pb->h), SB_ARG(boff), SB_ARG(ldb), SB_ARG(len), SB_ARG(m), SB_ARG(n), SB_ARG(parts->h),
                     SB_ARG(doff), SB_ARG(ldd));
}

/* The direct road on a device (kernels' kl_direct_sum): four-digit operands
 * and a small C (a Gram matrix, a gradient), where the planes' passes over a
 * long K cost one launch each. The same exact totals, the same bits.
 * SAMEBITS_GEMM_DEVICE=digits keeps the planes (tests run both roads). */
#define DEV_DIRECT_CELLS 16384
static int dev_road_direct(void) {
    const char *v = getenv("SAMEBITS_GEMM_DEVICE");
    return !(v && !strcmp(v, "digits"));
}

/* A tall product of few columns and a short K (logistic margins X W^T):
 * kl_direct_tall, a work-item an element, no parts. */
#define DEV_TALL_COLS 16
#define DEV_TALL_K 1024
static int dev_tall(const sb_gemm_shape *s) {
    return s->n <= DEV_TALL_COLS && s->k <= DEV_TALL_K && s->m * s->n > DEV_DIRECT_CELLS;
}

static sb_status direct_on(sb_device *d, sb_gemm_ws *ws, const sb_gemm_shape *s, const sb_dbuf *a, const sb_dbuf *b,
                           sb_dbuf *c, int64_t als, int64_t aqs, int64_t bls, int64_t bqs) {
    if (dev_tall(s)) {
        const int64_t m = s->m, n = s->n, k = s->k, off = 0;
        sb_status st = SB_LAUNCH(d, SB_KL_kl_direct_tall, groups_of(d, m), rows_of(n), 0, SB_ARG(a->h), SB_ARG(als),
                                 SB_ARG(aqs), SB_ARG(b->h), SB_ARG(bls), SB_ARG(bqs), SB_ARG(m), SB_ARG(n), SB_ARG(k),
                                 SB_ARG(ws->mb_a.h), SB_ARG(ws->mb_b.h), SB_ARG(c->h));
        if (st != SB_OK) return st;
        return SB_LAUNCH(d, SB_KL_kl_special, groups_of(d, n), rows_of(m), 0, SB_ARG(a->h), SB_ARG(off), SB_ARG(als),
                         SB_ARG(aqs), SB_ARG(b->h), SB_ARG(off), SB_ARG(bls), SB_ARG(bqs), SB_ARG(k), SB_ARG(m),
                         SB_ARG(n), SB_ARG(ws->flag_a.h), SB_ARG(ws->flag_b.h), SB_ARG(c->h));
    }
    if (s->m == 1 && s->k > 0) { /* one row (a gradient row): kl_direct_row, columns by lanes */
        const int64_t n = s->n, k = s->k, cw = d->wg < 32 ? (int64_t)d->wg : 32, ntj = (n + cw - 1) / cw;
        int64_t want = 2048 / ntj;
        want = want < 1 ? 1 : want;
        int64_t kgrain = (k + want - 1) / want;
        kgrain = kgrain < 1024 ? 1024 : kgrain;
        const int64_t nr = (k + kgrain - 1) / kgrain;
        sb_status st = sb_device_ensure(d, &ws->dparts, 16 * (size_t)(nr * n), "gemm direct totals");
        const int64_t m = 1, tile = 0, off = 0;
        if (st == SB_OK)
            st = SB_LAUNCH(d, SB_KL_kl_direct_row, ntj, nr, 0, SB_ARG(a->h), SB_ARG(aqs), SB_ARG(b->h), SB_ARG(bls),
                           SB_ARG(bqs), SB_ARG(n), SB_ARG(k), SB_ARG(kgrain), SB_ARG(ws->mb_a.h), SB_ARG(ws->mb_b.h),
                           SB_ARG(ws->dparts.h));
        if (st == SB_OK)
            st = SB_LAUNCH(d, SB_KL_kl_direct_finish, groups_of(d, n), rows_of(m), 0, SB_ARG(ws->dparts.h), SB_ARG(m),
                           SB_ARG(n), SB_ARG(nr), SB_ARG(ws->mb_a.h), SB_ARG(ws->mb_b.h), SB_ARG(k), SB_ARG(tile),
                           SB_ARG(c->h));
        if (st != SB_OK) return st;
        return SB_LAUNCH(d, SB_KL_kl_special, groups_of(d, n), rows_of(m), 0, SB_ARG(a->h), SB_ARG(off), SB_ARG(als),
                         SB_ARG(aqs), SB_ARG(b->h), SB_ARG(off), SB_ARG(bls), SB_ARG(bqs), SB_ARG(k), SB_ARG(m),
                         SB_ARG(n), SB_ARG(ws->flag_a.h), SB_ARG(ws->flag_b.h), SB_ARG(c->h));
    }
    /* few rows (a gradient row): tiles of 8 x 128, else 64 x 64 */
    const int narrow = s->m <= 8;
    const int64_t ta = narrow ? 8 : 64, tb = narrow ? 128 : 64;
    const int64_t m = s->m, n = s->n, k = s->k, nti = (m + ta - 1) / ta, ntj = (n + tb - 1) / tb;
    /* the same lines on both sides (a Gram matrix, square tiles): tiles below the diagonal skipped, mirrored */
    const int32_t sym = !narrow && a->h == b->h && m == n && als == bls && aqs == bqs;
    /* K ranges: enough work-groups to fill a GPU, at least 1,024 q each (by the shape alone) */
    int64_t want = 2048 / (nti * ntj);
    want = want < 1 ? 1 : want;
    int64_t kgrain = (k + want - 1) / want;
    kgrain = kgrain < 1024 ? 1024 : (kgrain + 15) / 16 * 16;
    int64_t nr = k > 0 ? (k + kgrain - 1) / kgrain : 1;
    sb_status st = sb_device_ensure(d, &ws->dparts, 16 * (size_t)(nr * m * n), "gemm direct totals");
    if (st != SB_OK) return st;
    if (k > 0 &&
        (st = SB_LAUNCH(d, narrow ? SB_KL_kl_direct_sum_rows8 : SB_KL_kl_direct_sum, ntj, nti * nr, 0, SB_ARG(a->h), SB_ARG(als), SB_ARG(aqs), SB_ARG(b->h),
                        SB_ARG(bls), SB_ARG(bqs), SB_ARG(m), SB_ARG(n), SB_ARG(k), SB_ARG(kgrain), SB_ARG(nti),
                        SB_ARG(sym), SB_ARG(ws->mb_a.h), SB_ARG(ws->mb_b.h), SB_ARG(ws->dparts.h))) != SB_OK)
        return st;
    if (k == 0) nr = 0;
    const int64_t tile = sym ? ta : 0;
    if ((st = SB_LAUNCH(d, SB_KL_kl_direct_finish, groups_of(d, n), rows_of(m), 0, SB_ARG(ws->dparts.h), SB_ARG(m),
                        SB_ARG(n), SB_ARG(nr), SB_ARG(ws->mb_a.h), SB_ARG(ws->mb_b.h), SB_ARG(k), SB_ARG(tile),
                        SB_ARG(c->h))) != SB_OK)
        return st;
    const int64_t off = 0;
    return SB_LAUNCH(d, SB_KL_kl_special, groups_of(d, n), rows_of(m), 0, SB_ARG(a->h), SB_ARG(off), SB_ARG(als),
                     SB_ARG(aqs), SB_ARG(b->h), SB_ARG(off), SB_ARG(bls), SB_ARG(bqs), SB_ARG(k), SB_ARG(m), SB_ARG(n),
                     SB_ARG(ws->flag_a.h), SB_ARG(ws->flag_b.h), SB_ARG(c->h));
}

sb_status sb_gemm_on(sb_device *d, sb_gemm_ws *ws, const sb_gemm_shape *s, const sb_dbuf *a, const sb_dbuf *b,
                     sb_dbuf *c) {
    const int64_t m = s->m, n = s->n, k = s->k, mn = m * n;
    if (m == 0 || n == 0) return SB_OK;
    const int64_t kp = pad_k(k);
    sb_status st;
    if ((st = sb_device_ensure(d, &ws->mb_a, 4 * (size_t)m, "gemm magnitudes")) != SB_OK ||
        (st = sb_device_ensure(d, &ws->sig_a, 4 * (size_t)m, "gemm scales")) != SB_OK ||
        (st = sb_device_ensure(d, &ws->flag_a, 4 * (size_t)m, "gemm flags")) != SB_OK ||
        (st = sb_device_ensure(d, &ws->mb_b, 4 * (size_t)n, "gemm magnitudes")) != SB_OK ||
        (st = sb_device_ensure(d, &ws->sig_b, 4 * (size_t)n, "gemm scales")) != SB_OK ||
        (st = sb_device_ensure(d, &ws->flag_b, 4 * (size_t)n, "gemm flags")) != SB_OK ||
        (st = sb_device_ensure(d, &ws->spread, 8, "gemm spread")) != SB_OK ||
        (st = sb_device_ensure(d, &ws->sum_a, 8 * (size_t)m, "gemm spreads")) != SB_OK ||
        (st = sb_device_ensure(d, &ws->cnt_a, 8 * (size_t)m, "gemm spreads")) != SB_OK ||
        (st = sb_device_ensure(d, &ws->sum_b, 8 * (size_t)n, "gemm spreads")) != SB_OK ||
        (st = sb_device_ensure(d, &ws->cnt_b, 8 * (size_t)n, "gemm spreads")) != SB_OK)
        return st;
    int64_t als, aqs, bls, bqs;
    strides_a(s, &als, &aqs);
    strides_b(s, &bls, &bqs);
    if ((st = stats_on(d, a, als, aqs, m, k, &ws->mb_a, &ws->flag_a, &ws->sum_a, &ws->cnt_a, &ws->spread, 0)) != SB_OK ||
        (st = stats_on(d, b, bls, bqs, n, k, &ws->mb_b, &ws->flag_b, &ws->sum_b, &ws->cnt_b, &ws->spread, 1)) != SB_OK)
        return st;
    int32_t spread[2];
    if ((st = sb_device_read(d, &ws->spread, 0, spread, 8, "gemm spread")) != SB_OK) return st;
    const int32_t sa = sb_oz_digits_for(spread[0]), sbd = sb_oz_digits_for(spread[1]), nw = sa + sbd - 1;
    if (sa == SB_OZ_SMIN && sbd == SB_OZ_SMIN && (m * n <= DEV_DIRECT_CELLS || dev_tall(s)) && dev_road_direct())
        return direct_on(d, ws, s, a, b, c, als, aqs, bls, bqs);
    const int64_t kc = sb_oz_kchunk(sa < sbd ? sa : sbd), npass = passes_of(kp, kc);
    /* each part plane starts 256-byte aligned, as vendor integer kernels like */
    const int64_t plane = (mn + 63) / 64 * 64;
    if ((st = sb_device_ensure(d, &ws->planes_a, (size_t)(sa * kp * m) + 16, "gemm digits")) != SB_OK ||
        (st = sb_device_ensure(d, &ws->planes_b, (size_t)(sbd * kp * n) + 16, "gemm digits")) != SB_OK ||
        (st = sb_device_ensure(d, &ws->parts, sizeof(int32_t) * (size_t)(nw * plane), "gemm parts")) != SB_OK)
        return st;
    if (npass > 1 && ((st = sb_device_ensure(d, &ws->accb, 4 * SB_OZ_ACC_LIMBS * (size_t)mn, "gemm totals")) != SB_OK ||
                      (st = sb_device_ensure(d, &ws->acct, 8 * (size_t)mn, "gemm totals")) != SB_OK))
        return st;
    if ((st = split_on(d, a, als, aqs, m, k, kp, sa, kc, 0, &ws->mb_a, &ws->sig_a, &ws->planes_a)) != SB_OK ||
        (st = split_on(d, b, bls, bqs, n, k, kp, sbd, kc, 1, &ws->mb_b, &ws->sig_b, &ws->planes_b)) != SB_OK)
        return st;
    const int64_t lda = sa * kp, ldb = sbd * kp;
    /* a buffer argument must be a handle: the totals stand in with parts when unused */
    const sb_dbuf *accb = npass > 1 ? &ws->accb : &ws->parts, *acct = npass > 1 ? &ws->acct : &ws->parts;
    for (int64_t p = 0; p < (npass > 0 ? npass : 1); p++) {
        if (npass == 0) {
            /* k == 0: every part is zero (a product of length 0 writes zeros) */
            const int64_t zero = 0, one = 1;
            for (int w = 0; w < nw; w++) {
                const int64_t doff = w * plane;
                if ((st = SB_LAUNCH(d, SB_KL_kl_igemm, (n + 63) / 64, (m + 63) / 64, 0, SB_ARG(ws->planes_a.h),
                                    SB_ARG(zero), SB_ARG(one), SB_ARG(ws->planes_b.h), SB_ARG(zero), SB_ARG(one),
                                    SB_ARG(zero), SB_ARG(m), SB_ARG(n), SB_ARG(ws->parts.h), SB_ARG(doff),
                                    SB_ARG(n))) != SB_OK)
                    return st;
            }
        } else {
            const int64_t lc = pass_len(kp, kc, p);
            for (int w = 0; w < nw; w++) {
                int i0d, cnt;
                pairs_of(w, sa, sbd, &i0d, &cnt);
                if ((st = igemm_on(d, m, n, cnt * lc, &ws->planes_a, sa * p * kc + i0d * lc, lda, &ws->planes_b,
                                   sbd * p * kc + (sbd - 1 - w + i0d) * lc, ldb, &ws->parts, w * plane)) != SB_OK)
                    return st;
            }
        }
        const int32_t mode = npass <= 1 ? 0 : p == 0 ? 1 : p == npass - 1 ? 3 : 2;
        if ((st = SB_LAUNCH(d, SB_KL_kl_combine, groups_of(d, n), rows_of(m), 0, SB_ARG(ws->parts.h), SB_ARG(m), SB_ARG(n),
                            SB_ARG(plane), SB_ARG(nw), SB_ARG(mode), SB_ARG(accb->h), SB_ARG(acct->h),
                            SB_ARG(ws->sig_a.h), SB_ARG(ws->sig_b.h), SB_ARG(c->h))) != SB_OK)
            return st;
    }
    const int64_t off = 0;
    return SB_LAUNCH(d, SB_KL_kl_special, groups_of(d, n), rows_of(m), 0, SB_ARG(a->h), SB_ARG(off), SB_ARG(als), SB_ARG(aqs),
                     SB_ARG(b->h), SB_ARG(off), SB_ARG(bls), SB_ARG(bqs), SB_ARG(k), SB_ARG(m), SB_ARG(n),
                     SB_ARG(ws->flag_a.h), SB_ARG(ws->flag_b.h), SB_ARG(c->h));
}

/* ---- the public entry --------------------------------------------------- */

/* One open device per GPU kind, built once and kept for the process (the
 * OpenCL program takes seconds to build); calls on it are serialized. */
static sb_device_slot g_slot = SB_DEVICE_SLOT_INIT;
static sb_gemm_ws g_ws[4];

/* The same devices for the other operations of the linalg program (reduce.c,
 * linalg.h): one program build per process and kind. */
sb_status sb_linalg_device_lock(sb_device_kind kind, sb_device **out) {
    return sb_device_slot_lock(&g_slot, kind, SB_PROG_LINALG, out);
}

void sb_linalg_device_unlock(void) { sb_device_slot_unlock(&g_slot); }

static int overlaps(const void *p, int64_t pn, const void *q, int64_t qn) {
    if (pn <= 0 || qn <= 0) return 0;
    const char *a = p, *b = q;
    return a < b + 4 * qn && b < a + 4 * pn;
}

SB_API sb_status sb_gemm(const char *device, int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k,
                         const float *a, int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc) {
    sb_clear_error();
    const sb_gemm_shape s = {trans_a, trans_b, m, n, k, lda, ldb};
    sb_status st = sb_gemm_check(&s, ldc);
    if (st != SB_OK) return st;
    const int64_t span_a = trans_a ? sb_gemm_span(k, m, lda) : sb_gemm_span(m, k, lda);
    const int64_t span_b = trans_b ? sb_gemm_span(n, k, ldb) : sb_gemm_span(k, n, ldb);
    const int64_t span_c = sb_gemm_span(m, n, ldc);
    if ((span_a > 0 && !a) || (span_b > 0 && !b) || (span_c > 0 && !c))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gemm: a, b or c is NULL");
    if (overlaps(c, span_c, a, span_a) || overlaps(c, span_c, b, span_b))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gemm: c overlaps a or b");
    sb_device_kind kind;
    if ((st = sb_device_parse(device, &kind)) != SB_OK) return st;
    if ((st = sb_threads_ready()) != SB_OK) return st; /* an invalid SAMEBITS_NUM_THREADS, by name */
    if (span_c == 0) return SB_OK;
    if (kind == SB_DEVICE_CPU || kind == SB_DEVICE_CPU_BATCHED) return sb_gemm_host(&s, a, b, c, ldc);

    sb_device *d;
    st = sb_linalg_device_lock(kind, &d);
    sb_dbuf da = {0}, db = {0}, dc = {0};
    if (st == SB_OK) {
        st = sb_device_alloc(d, &da, 4 * (size_t)(span_a > 0 ? span_a : 1), "gemm a");
        if (st == SB_OK) st = sb_device_alloc(d, &db, 4 * (size_t)(span_b > 0 ? span_b : 1), "gemm b");
        if (st == SB_OK) st = sb_device_alloc(d, &dc, 4 * (size_t)(m * n), "gemm c");
        if (st == SB_OK && span_a > 0) st = sb_device_write(d, &da, 0, a, 4 * (size_t)span_a, "gemm a");
        if (st == SB_OK && span_b > 0) st = sb_device_write(d, &db, 0, b, 4 * (size_t)span_b, "gemm b");
        if (st == SB_OK) st = sb_gemm_on(d, &g_ws[kind], &s, &da, &db, &dc);
        if (st == SB_OK) {
            if (ldc == n) {
                st = sb_device_read(d, &dc, 0, c, 4 * (size_t)(m * n), "gemm c");
            } else {
                for (int64_t i = 0; i < m && st == SB_OK; i++)
                    st = sb_device_read(d, &dc, 4 * (size_t)(i * n), c + i * ldc, 4 * (size_t)n, "gemm c");
            }
        }
        sb_device_release(d, &da);
        sb_device_release(d, &db);
        sb_device_release(d, &dc);
        sb_linalg_device_unlock();
    }
    return st;
}
