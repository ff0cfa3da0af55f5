/*
 * linear.c: the linear family's entry (sb_linear_fit), its data checks and the
 * numerics its fits share: exact dot products and means, and the product on
 * the chosen device. docs/linear.md states each fixed order.
 */
#include "linear.h"
#include "../../math/sb_reduce.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#ifdef SB_SABOTAGE_LIN_DOT
/* Separating arm of the linear family (make SABOTAGE=lin-dot): the dot
 * products as plain float sums, one partial per worker thread added in
 * thread order, the reduction DESIGN.md rule 4 forbids (its bits depend on
 * the order and on the thread count). */
static float lin_dot_sabotaged(const float *a, int64_t sa, const float *b, int64_t sb, int64_t n) {
    int32_t nt = 1;
    if (sb_get_num_threads(&nt) != SB_OK || nt < 1) nt = 1;
    float total = 0.0f;
    for (int32_t t = 0; t < nt; t++) {
        float part = 0.0f;
        for (int64_t i = n * t / nt; i < n * (t + 1) / nt; i++) part = part + (b ? a[i * sa] * b[i * sb] : a[i * sa]);
        total = total + part;
    }
    return total;
}
#endif

/* hi + lo == a * b exactly (Dekker's product with Veltkamp's split, plain
 * float operations: no fma), when |a|, |b| < 2^100 and the product's low part
 * does not underflow; otherwise lo = 0 and hi the rounded product. */
static void two_product(float a, float b, float *hi, float *lo) {
    const float p = a * b;
    const float aa = fabsf(a), ab = fabsf(b);
    if (!(aa < 0x1p100f && ab < 0x1p100f && fabsf(p) > 0x1p-90f)) {
        *hi = p;
        *lo = 0.0f;
        return;
    }
    const float ca = 4097.0f * a, cb = 4097.0f * b;
    const float ah = ca - (ca - a), al = a - ah, bh = cb - (cb - b), bl = b - bh;
    *hi = p;
    *lo = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}

void sb_lin_sacc_add_product(struct sb_sacc *acc, float a, float b) {
    float hi, lo;
    two_product(a, b, &hi, &lo);
    sb_sacc_add(acc, hi);
    if (lo != 0.0f) sb_sacc_add(acc, lo);
}

/* The exact sums of sb_lin_dot and sb_lin_dot_exact: long ones in chunks of
 * DOTX_GRAIN (by the length alone) summed in parallel and merged exactly, so
 * the total is the same whatever the threads (and, being exact, whatever the
 * order). exact: each product split exactly (two_product); otherwise each
 * product rounded once first; b NULL: the a's themselves. */
typedef struct dotx_job {
    const float *a, *b;
    int64_t sa, sb, n;
    int exact;
    sb_sacc *acc; /* per chunk */
} dotx_job;

#define DOTX_GRAIN 65536
static void dotx_range(const dotx_job *j, int64_t b, int64_t e, sb_sacc *acc) {
    if (j->exact)
        for (int64_t i = b; i < e; i++) sb_lin_sacc_add_product(acc, j->a[i * j->sa], j->b[i * j->sb]);
    else if (j->b)
        for (int64_t i = b; i < e; i++) sb_sacc_add(acc, j->a[i * j->sa] * j->b[i * j->sb]);
    else
        for (int64_t i = b; i < e; i++) sb_sacc_add(acc, j->a[i * j->sa]);
}

static void dotx_task(void *ctx, int64_t task) {
    const dotx_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, DOTX_GRAIN, task, &b, &e);
    sb_sacc_init(&j->acc[task]);
    dotx_range(j, b, e, &j->acc[task]);
}

static float dotx(dotx_job *j) {
    sb_sacc acc;
    sb_sacc_init(&acc);
    const int64_t nc = sb_chunk_count(j->n, DOTX_GRAIN);
    j->acc = nc > 1 ? sb_malloc(sizeof(sb_sacc) * (size_t)nc) : NULL;
    if (j->acc) {
        sb_parallel_for(nc, dotx_task, j);
        for (int64_t t = 0; t < nc; t++) sb_sacc_merge(&acc, &j->acc[t]);
        sb_free(j->acc);
    } else {
        dotx_range(j, 0, j->n, &acc); /* one chunk, or no memory for the parts: the same exact sum */
    }
    return sb_sacc_round_f32(&acc);
}

float sb_lin_dot(const float *a, int64_t sa, const float *b, int64_t sb, int64_t n) {
#ifdef SB_SABOTAGE_LIN_DOT
    return lin_dot_sabotaged(a, sa, b, sb, n);
#endif
    dotx_job j = {a, b, sa, sb, n, 0, NULL};
    return dotx(&j);
}

float sb_lin_dot_exact(const float *a, int64_t sa, const float *b, int64_t sb, int64_t n) {
#ifdef SB_SABOTAGE_LIN_DOT
    return lin_dot_sabotaged(a, sa, b, sb, n);
#endif
    dotx_job j = {a, b, sa, sb, n, 1, NULL};
    return dotx(&j);
}

/* Row chunks of the host loops: a function of the row count alone, so the
 * per-chunk exact sums merged in chunk order are the same whatever the
 * thread count (and, being exact, whatever the order). */
#define LIN_ROW_GRAIN 8192

/* The label scan of sb_lin_check_data by row chunks: each chunk's first
 * offending index (or -1) and its largest class; the first chunk's offender
 * is the first of all, whatever the threads. */
typedef struct label_job {
    const float *y;
    int64_t n;
    int logistic;
    int64_t *first;
    int32_t *most;
} label_job;

static void label_task(void *ctx, int64_t task) {
    const label_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, LIN_ROW_GRAIN * 8, task, &b, &e);
    int32_t most = -1;
    j->first[task] = -1;
    for (int64_t i = b; i < e; i++) {
        const float y = j->y[i];
        if (!isfinite(y) || (j->logistic && (!(y >= 0.0f && y <= 1023.0f) || y != (float)(int32_t)y))) {
            j->first[task] = i;
            break;
        }
        if (j->logistic && (int32_t)y > most) most = (int32_t)y;
    }
    j->most[task] = most;
}

typedef struct means_job {
    const float *x, *w;
    int64_t n;
    int32_t p;
    sb_sacc *acc; /* per chunk: p column sums, then the weights' sum */
} means_job;

/* Exact column sums through exponent buckets: each finite float is +-m *
 * 2^(q - 149) (m < 2^24, q = max(e - 1, 0) for its biased exponent e), so one
 * int64 per (column, e) adds the signed m of a chunk's values exactly (8,192
 * of them stay below 2^37), and the buckets then go into the column's
 * superaccumulator as exact integers: the same exact sum as one sb_sacc_add
 * per value, hence the same normalized state and the same rounded bits, at a
 * quarter of the work. For unweighted data. */
static void sacc_add_bucket(sb_sacc *acc, int64_t v, uint32_t q) {
    if (v == 0) return;
    if (acc->pending >= SB_SACC_MAX_PENDING - 1) sb_sacc_normalize(acc);
    const int neg = v < 0;
    const uint64_t mag = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; /* < 2^38 */
    const uint32_t s = q & 31u, i = q >> 5;
    const uint64_t lo = mag << s, hi = s ? mag >> (64 - s) : 0u; /* mag * 2^s < 2^69 */
    const int64_t l0 = (int64_t)(lo & 0xffffffffu), l1 = (int64_t)(lo >> 32), l2 = (int64_t)hi;
    acc->limb[i] += neg ? -l0 : l0;
    acc->limb[i + 1] += neg ? -l1 : l1;
    if (l2) acc->limb[i + 2] += neg ? -l2 : l2; /* i <= 7: limb 9 at most */
    acc->pending += 1;
}

/* Rows [b, e) into acc (p column sums, then the count), row by row (the
 * data is read once, in order) into one int64 bucket per (column, exponent);
 * 0 when a value is an infinity or a NaN (bucket 255), or when the buckets'
 * memory is not to be had: then acc is reset, and the one-add-per-value road
 * takes the chunk. The buckets are exact integers, so the order they fill in
 * decides nothing; each column's go into its superaccumulator in exponent
 * order. */
static int means_buckets(const means_job *j, int64_t b, int64_t e, sb_sacc *acc) {
    const int32_t p = j->p;
    int64_t *bucket = sb_calloc((size_t)p * 256u, sizeof(int64_t));
    uint8_t *notnegz = sb_calloc((size_t)p, 1);
    uint32_t special = 0;
    if (bucket && notnegz)
        for (int64_t i = b; i < e; i++) {
            const float *r = j->x + i * p;
            for (int32_t c = 0; c < p; c++) {
                const uint32_t u = sb_f2u(r[c]), ex = (u >> 23) & 0xffu;
                const int64_t m = (int64_t)((u & 0x7fffffu) | (ex ? 0x800000u : 0u));
                bucket[(int64_t)c * 256 + ex] += (u >> 31) ? -m : m;
                notnegz[c] |= u != 0x80000000u;
                special |= ex == 0xffu;
            }
        }
    if (!bucket || !notnegz || special) {
        sb_free(bucket);
        sb_free(notnegz);
        for (int32_t k = 0; k <= p; k++) sb_sacc_init(&acc[k]);
        return 0;
    }
    for (int32_t c = 0; c < p; c++) {
        if (e > b) acc[c].flags |= SB_SACC_F_ANY | (notnegz[c] ? SB_SACC_F_NOTNEGZ : 0u);
        for (uint32_t ex = 0; ex < 255u; ex++)
            sacc_add_bucket(&acc[c], bucket[(int64_t)c * 256 + ex], ex ? ex - 1u : 0u);
    }
    sb_free(bucket);
    sb_free(notnegz);
    /* the count at once: e - b <= LIN_ROW_GRAIN is an exact float, the same exact sum as e - b ones */
    if (e > b) sb_sacc_add(&acc[p], (float)(e - b));
    return 1;
}

/* Rows [b, e) of the columns whose chunk has a narrow exponent span, summed
 * exactly in double. A chunk's finite values in one column are integer
 * multiples of 2^elo (elo: the smallest nonzero value's exponent of its last
 * bit) below R 2^(ehi + 24) in magnitude (ehi the largest's), so while
 * bitlen(R) + ehi + 24 - elo <= 53 every partial sum, in any order, is a
 * double exactly; that double then goes into the superaccumulator as two
 * exact integer pieces. The same exact sum as one sb_sacc_add per value,
 * hence the same rounded bits. Columns of wider spans (and those whose sum
 * would sit past the superaccumulator's bucket range) take the buckets; a
 * chunk with an infinity or a NaN returns 0 (acc reset: the caller's
 * one-add-per-value road takes it). */
typedef struct means_span {
    uint32_t emax, emin; /* biased exponents: the largest, the smallest of a nonzero value (255: none) */
    uint32_t notnegz;
} means_span;

static void means_spans_scalar(const means_job *j, int64_t b, int64_t e, means_span *sp, uint32_t *special) {
    for (int64_t i = b; i < e; i++) {
        const float *r = j->x + i * j->p;
        for (int32_t c = 0; c < j->p; c++) {
            const uint32_t u = sb_f2u(r[c]), ex = (u >> 23) & 0xffu;
            sp[c].emax = ex > sp[c].emax ? ex : sp[c].emax;
            if (u & 0x7fffffffu) sp[c].emin = ex < sp[c].emin ? ex : sp[c].emin;
            sp[c].notnegz |= u != 0x80000000u;
            *special |= ex == 0xffu;
        }
    }
}

static void means_sums_scalar(const means_job *j, int64_t b, int64_t e, double *s) {
    for (int64_t i = b; i < e; i++) {
        const float *r = j->x + i * j->p;
        for (int32_t c = 0; c < j->p; c++) s[c] += (double)r[c];
    }
}

#if defined(__x86_64__)
#define MEANS_TARGET __attribute__((target("avx512f")))
/* The same values, 16 columns a vector (the spans as lanes of three arrays). */
MEANS_TARGET static void means_spans_avx512(const means_job *j, int64_t b, int64_t e, uint32_t *emax, uint32_t *emin,
                                            uint32_t *notnegz, uint32_t *special) {
    const int32_t p = j->p;
    const __m512i ff = _mm512_set1_epi32(0xff), absm = _mm512_set1_epi32(0x7fffffff),
                  negz = _mm512_set1_epi32((int32_t)0x80000000u), one = _mm512_set1_epi32(1);
    __m512i sp = _mm512_setzero_si512();
    for (int64_t i = b; i < e; i++) {
        const float *r = j->x + i * p;
        for (int32_t c0 = 0; c0 < p; c0 += 16) {
            const __mmask16 lm = p - c0 >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (p - c0)) - 1u);
            const __m512i u = _mm512_maskz_loadu_epi32(lm, r + c0);
            const __m512i ex = _mm512_and_si512(_mm512_srli_epi32(u, 23), ff);
            const __mmask16 nz = _mm512_mask_test_epi32_mask(lm, u, absm);
            _mm512_storeu_si512(emax + c0, _mm512_max_epu32(_mm512_loadu_si512(emax + c0), ex));
            const __m512i mn = _mm512_loadu_si512(emin + c0);
            _mm512_storeu_si512(emin + c0, _mm512_mask_min_epu32(mn, nz, mn, ex));
            const __m512i nn = _mm512_loadu_si512(notnegz + c0);
            _mm512_storeu_si512(notnegz + c0,
                                _mm512_mask_or_epi32(nn, _mm512_mask_cmpneq_epi32_mask(lm, u, negz), nn, one));
            sp = _mm512_or_si512(sp, _mm512_maskz_mov_epi32(_mm512_cmpeq_epi32_mask(ex, ff), one));
        }
    }
    *special |= (uint32_t)_mm512_reduce_or_epi32(sp);
}

MEANS_TARGET static void means_sums_avx512(const means_job *j, int64_t b, int64_t e, double *s) {
    const int32_t p = j->p;
    for (int64_t i = b; i < e; i++) {
        const float *r = j->x + i * p;
        for (int32_t c0 = 0; c0 < p; c0 += 16) {
            const __mmask16 lm = p - c0 >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (p - c0)) - 1u);
            const __m512 v = _mm512_maskz_loadu_ps(lm, r + c0);
            const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
            const __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
            const __mmask8 ml = (__mmask8)(lm & 0xff), mh = (__mmask8)(lm >> 8);
            _mm512_mask_storeu_pd(s + c0, ml, _mm512_add_pd(_mm512_maskz_loadu_pd(ml, s + c0), lo));
            _mm512_mask_storeu_pd(s + c0 + 8, mh, _mm512_add_pd(_mm512_maskz_loadu_pd(mh, s + c0 + 8), hi));
        }
    }
}

static int means_avx512_ok(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
}
#endif

/* Where the exact double s goes into the superaccumulator: s = +-M 2^(q - 149),
 * M < 2^53, as the pieces M mod 2^32 at q and M / 2^32 at q + 32; 0 when q + 32
 * passes the buckets' reach (255). */
static int means_split(double s, uint64_t *m, uint32_t *q, int *neg) {
    uint64_t bits;
    memcpy(&bits, &s, 8);
    const uint32_t E = (uint32_t)(bits >> 52) & 0x7ffu;
    uint64_t M = (bits & 0xfffffffffffffull) | (E ? 1ull << 52 : 0u);
    int32_t F = (int32_t)(E ? E : 1u) - 1075 + 149; /* s = M 2^(F - 149) */
    while (F < 0) { /* s is a multiple of 2^-149: the bits shifted out are 0 */
        M >>= 1;
        F++;
    }
    *m = M;
    *q = (uint32_t)F;
    *neg = (int)(bits >> 63);
    return F + 32 <= 255;
}

static int means_doubles(const means_job *j, int64_t b, int64_t e, sb_sacc *acc) {
    const int32_t p = j->p;
    const int64_t R = e - b;
    int rbits = 0;
    while (rbits < 63 && ((int64_t)1 << rbits) <= R) rbits++;
    uint32_t *emax = sb_calloc((size_t)p + 16, 4), *emin = sb_malloc(4 * ((size_t)p + 16));
    uint32_t *notnegz = sb_calloc((size_t)p + 16, 4), special = 0;
    double *s = sb_calloc((size_t)p + 16, sizeof(double));
    int ok = emax && emin && notnegz && s;
    if (ok) {
        for (int32_t c = 0; c < p; c++) emin[c] = 255u;
#if defined(__x86_64__)
        if (means_avx512_ok()) means_spans_avx512(j, b, e, emax, emin, notnegz, &special);
        else
#endif
        {
            means_span *sp = sb_malloc(sizeof(means_span) * (size_t)p);
            if (!sp) ok = 0;
            else {
                for (int32_t c = 0; c < p; c++) sp[c].emax = 0, sp[c].emin = 255u, sp[c].notnegz = 0;
                means_spans_scalar(j, b, e, sp, &special);
                for (int32_t c = 0; c < p; c++) emax[c] = sp[c].emax, emin[c] = sp[c].emin, notnegz[c] = sp[c].notnegz;
                sb_free(sp);
            }
        }
    }
    if (ok && !special) {
#if defined(__x86_64__)
        if (means_avx512_ok()) means_sums_avx512(j, b, e, s);
        else
#endif
            means_sums_scalar(j, b, e, s);
    }
    /* every column's road decided before any goes into acc */
    for (int32_t c = 0; ok && !special && c < p; c++) {
        const int narrow = emin[c] == 255u || rbits + (int)(emax[c] ? emax[c] : 1u) + 24 - (int)(emin[c] ? emin[c] : 1u) <= 53;
        uint64_t M;
        uint32_t q;
        int neg;
        emin[c] = narrow && means_split(s[c], &M, &q, &neg); /* reused: 1 = the double road */
    }
    if (!ok || special) {
        sb_free(emax), sb_free(emin), sb_free(notnegz), sb_free(s);
        for (int32_t k = 0; k <= p; k++) sb_sacc_init(&acc[k]);
        return 0;
    }
    for (int32_t c = 0; c < p; c++) {
        if (R > 0) acc[c].flags |= SB_SACC_F_ANY | (notnegz[c] ? SB_SACC_F_NOTNEGZ : 0u);
        if (emin[c]) {
            uint64_t M;
            uint32_t q;
            int neg;
            means_split(s[c], &M, &q, &neg);
            const int64_t lo = (int64_t)(M & 0xffffffffu), hi = (int64_t)(M >> 32);
            sacc_add_bucket(&acc[c], neg ? -lo : lo, q);
            sacc_add_bucket(&acc[c], neg ? -hi : hi, q + 32);
        } else {
            for (int64_t i = b; i < e; i++) sb_sacc_add(&acc[c], j->x[i * p + c]);
        }
    }
    sb_free(emax), sb_free(emin), sb_free(notnegz), sb_free(s);
    /* the count at once: e - b <= LIN_ROW_GRAIN is an exact float, the same exact sum as e - b ones */
    if (e > b) sb_sacc_add(&acc[p], (float)(e - b));
    return 1;
}

static void means_task(void *ctx, int64_t task) {
    const means_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, LIN_ROW_GRAIN, task, &b, &e);
    sb_sacc *acc = j->acc + task * (j->p + 1);
    for (int32_t c = 0; c <= j->p; c++) sb_sacc_init(&acc[c]);
    if (!j->w && !getenv("SAMEBITS_LINEAR_MEANS_BUCKETS") && means_doubles(j, b, e, acc)) return;
    if (!j->w && means_buckets(j, b, e, acc)) return;
    for (int64_t i = b; i < e; i++) {
        const float *r = j->x + i * j->p;
        const float wi = j->w ? j->w[i] : 1.0f;
        sb_sacc_add(&acc[j->p], wi);
        for (int32_t c = 0; c < j->p; c++) sb_sacc_add(&acc[c], j->w ? wi * r[c] : r[c]);
    }
}

sb_status sb_lin_col_means(const float *x, int64_t n, int32_t p, const float *w, float *mean) {
    const int64_t nc = sb_chunk_count(n, LIN_ROW_GRAIN);
    means_job j = {x, w, n, p, sb_malloc(sizeof(sb_sacc) * (size_t)(nc > 0 ? nc : 1) * (size_t)(p + 1))};
    if (!j.acc) return sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory");
    sb_parallel_for(nc, means_task, &j);
    for (int64_t t = 1; t < nc; t++)
        for (int32_t c = 0; c <= p; c++) sb_sacc_merge(&j.acc[c], &j.acc[t * (p + 1) + c]);
    if (nc == 0)
        for (int32_t c = 0; c <= p; c++) sb_sacc_init(&j.acc[c]);
    const float d = sb_sacc_round_f32(&j.acc[p]);
    for (int32_t c = 0; c < p; c++) mean[c] = sb_sacc_round_f32(&j.acc[c]) / d;
    sb_free(j.acc);
    return SB_OK;
}

typedef struct sqdev_job {
    const float *x, *mean;
    int64_t n;
    int32_t p;
    sb_sacc *acc; /* per chunk: p exact sums */
} sqdev_job;

static void sqdev_task(void *ctx, int64_t task) {
    const sqdev_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, LIN_ROW_GRAIN, task, &b, &e);
    sb_sacc *acc = j->acc + task * j->p;
    for (int32_t c = 0; c < j->p; c++) sb_sacc_init(&acc[c]);
    for (int64_t i = b; i < e; i++) {
        const float *r = j->x + i * j->p;
        for (int32_t c = 0; c < j->p; c++) {
            const float d = r[c] - j->mean[c];
            sb_lin_sacc_add_product(&acc[c], d, d);
        }
    }
}

sb_status sb_lin_col_sqdev(const float *x, int64_t n, int32_t p, const float *mean, float *out) {
    const int64_t nc = sb_chunk_count(n, LIN_ROW_GRAIN);
    sqdev_job j = {x, mean, n, p, sb_malloc(sizeof(sb_sacc) * (size_t)(nc > 0 ? nc : 1) * (size_t)(p > 0 ? p : 1))};
    if (!j.acc) return sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory");
    if (nc == 0)
        for (int32_t c = 0; c < p; c++) sb_sacc_init(&j.acc[c]);
    sb_parallel_for(nc, sqdev_task, &j);
    for (int64_t t = 1; t < nc; t++)
        for (int32_t c = 0; c < p; c++) sb_sacc_merge(&j.acc[c], &j.acc[t * p + c]);
    for (int32_t c = 0; c < p; c++) out[c] = sb_sacc_round_f32(&j.acc[c]);
    sb_free(j.acc);
    return SB_OK;
}

typedef struct center_job {
    const float *x, *y, *w, *xm, *ym;
    int64_t n;
    int32_t p, ny, ld; /* out's row length: p + ny */
    float *out;
} center_job;

static void center_task(void *ctx, int64_t task) {
    const center_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, LIN_ROW_GRAIN, task, &b, &e);
    for (int64_t i = b; i < e; i++) {
        const float s = j->w ? sqrtf(j->w[i]) : 1.0f;
        const float *r = j->x + i * j->p;
        float *o = j->out + i * j->ld;
        for (int32_t c = 0; c < j->p; c++) o[c] = j->w ? (r[c] - j->xm[c]) * s : r[c] - j->xm[c];
        for (int32_t t = 0; t < j->ny; t++) {
            const float v = j->y[i * j->ny + t] - j->ym[t];
            o[j->p + t] = j->w ? v * s : v;
        }
    }
}

void sb_lin_center(const float *x, const float *y, int32_t ny, const float *w, int64_t n, int32_t p, const float *xm,
                   const float *ym, float *out) {
    if (!y) ny = 0;
    center_job j = {x, y, w, xm, ym, n, p, ny, p + ny, out};
    sb_parallel_for(sb_chunk_count(n, LIN_ROW_GRAIN), center_task, &j);
}

sb_status sb_lin_gemm(const lin_params *p, int32_t ta, int32_t tb, int64_t m, int64_t n, int64_t k, const float *a,
                      int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc) {
    return sb_gemm(p->device, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}

sb_status sb_lin_dev_open(const lin_params *p, lin_dev *dv) {
    memset(dv, 0, sizeof *dv);
    sb_device_kind k;
    sb_status st = sb_device_parse(p->device, &k);
    if (st != SB_OK) return st;
    dv->kind = (int)k;
    if (k == SB_DEVICE_CPU || k == SB_DEVICE_CPU_BATCHED) return SB_OK;
    /* open (or find) the linalg device now, so an absent one is refused before any work */
    if ((st = sb_linalg_device_lock(k, &dv->d)) != SB_OK) return st;
    sb_linalg_device_unlock();
    return SB_OK;
}

void sb_lin_dev_close(lin_dev *dv) {
    if (!dv->d) return;
    sb_device *d;
    if (sb_linalg_device_lock((sb_device_kind)dv->kind, &d) == SB_OK) {
        sb_gemm_ws_release(d, &dv->ws);
        sb_lr_ws_release(d, &dv->lr);
        sb_device_release(d, &dv->out);
        sb_linalg_device_unlock();
    }
    dv->d = NULL;
}

static void mat_unprepare(lin_mat *m) {
    for (int32_t i = 0; i < m->nprep; i++) sb_gemm_prep_free(&m->prep[i]);
    m->nprep = 0;
}

void sb_lin_mat_prepare(lin_dev *dv, lin_mat *m, int64_t rows, int64_t cols) {
    mat_unprepare(m);
    if (dv->d || !m->host || rows <= 0 || cols <= 0) return;
    if (sb_gemm_prep_make(m->host, cols, 1, rows, cols, &m->prep[0]) == SB_OK) m->nprep++;
    else sb_clear_error();
    if (sb_gemm_prep_make(m->host, 1, cols, cols, rows, &m->prep[m->nprep]) == SB_OK) m->nprep++;
    else sb_clear_error();
}

sb_status sb_lin_mat_set(lin_dev *dv, lin_mat *m, const float *host, int64_t count) {
    if (m->host != host || m->count != count) mat_unprepare(m);
    m->host = host;
    m->count = count;
    if (!dv->d) return SB_OK;
    sb_device *d;
    sb_status st = sb_linalg_device_lock((sb_device_kind)dv->kind, &d);
    if (st != SB_OK) return st;
    const size_t bytes = 4 * (size_t)(count > 0 ? count : 1);
    st = sb_device_ensure(d, &m->dev, bytes, "linear matrix");
    if (st == SB_OK && count > 0) st = sb_device_write(d, &m->dev, 0, host, 4 * (size_t)count, "linear matrix");
    sb_linalg_device_unlock();
    return st;
}

void sb_lin_mat_release(lin_dev *dv, lin_mat *m) {
    mat_unprepare(m);
    if (dv->d && m->dev.h) {
        sb_device *d;
        if (sb_linalg_device_lock((sb_device_kind)dv->kind, &d) == SB_OK) {
            sb_device_release(d, &m->dev);
            sb_linalg_device_unlock();
        }
    }
    memset(m, 0, sizeof *m);
}

sb_status sb_lin_dev_means(lin_dev *dv, const lin_mat *mx, int64_t n, int32_t P, float *mean) {
    sb_device *d;
    sb_status st = sb_linalg_device_lock((sb_device_kind)dv->kind, &d);
    if (st != SB_OK) return st;
    sb_dbuf sums = {0};
    if ((st = sb_device_alloc(d, &sums, 4 * (size_t)P, "linear column sums")) == SB_OK &&
        (st = sb_lr_lines_on(d, &dv->lr, SB_LR_SUM, 0, n, P, &mx->dev, P, &sums)) == SB_OK)
        st = sb_device_read(d, &sums, 0, mean, 4 * (size_t)P, "linear column sums");
    sb_device_release(d, &sums);
    sb_linalg_device_unlock();
    const float cnt = (float)n; /* the count's exact sum rounded once, as on the host */
    if (st == SB_OK)
        for (int32_t c = 0; c < P; c++) mean[c] = mean[c] / cnt;
    return st;
}

sb_status sb_lin_dev_center(lin_dev *dv, const sb_table *t, const lin_mat *mxr, const float *xm, const float *ym,
                            int32_t ny, lin_mat *out) {
    const int64_t n = t->nrows, P = t->ncols, W = P + ny;
    const float *w = t->weight;
    float *s = NULL;
    lin_mat mm = {0}, my = {0}, ms = {0}, mym = {0};
    const lin_mat *pmx = mxr;
    sb_status st = SB_OK;
    if (w) {
        if (!(s = sb_malloc(sizeof(float) * (size_t)n))) return sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory");
        for (int64_t i = 0; i < n; i++) s[i] = sqrtf(w[i]); /* center_task's factor */
    }
    if ((st = sb_lin_mat_set(dv, &mm, xm, P)) == SB_OK &&
        (st = sb_lin_mat_set(dv, &my, ny ? t->label : xm, ny ? n * ny : 1)) == SB_OK &&
        (st = sb_lin_mat_set(dv, &mym, ny ? ym : xm, ny ? ny : 1)) == SB_OK &&
        (st = sb_lin_mat_set(dv, &ms, s ? s : xm, s ? n : 1)) == SB_OK) {
        sb_device *d;
        if ((st = sb_linalg_device_lock((sb_device_kind)dv->kind, &d)) == SB_OK) {
            out->host = NULL;
            out->count = n * W;
            st = sb_device_ensure(d, &out->dev, 4 * (size_t)(n * W), "linear centered rows");
            const int32_t hw = w != NULL;
            const int64_t g0 = (W + d->wg - 1) / d->wg, g1 = n < 65535 ? n : 65535;
            if (st == SB_OK)
                st = SB_LAUNCH(d, SB_KL_kn_center_rows, g0, g1, 0, SB_ARG(pmx->dev.h), SB_ARG(n), SB_ARG(P),
                               SB_ARG(mm.dev.h), SB_ARG(my.dev.h), SB_ARG(mym.dev.h), SB_ARG(ny), SB_ARG(ms.dev.h),
                               SB_ARG(hw), SB_ARG(out->dev.h));
            sb_linalg_device_unlock();
        }
    }
    sb_lin_mat_release(dv, &mm);
    sb_lin_mat_release(dv, &my);
    sb_lin_mat_release(dv, &mym);
    sb_lin_mat_release(dv, &ms);
    sb_free(s);
    return st;
}

sb_status sb_lin_dev_gemm_to(lin_dev *dv, int32_t ta, int32_t tb, int64_t m, int64_t n, int64_t k, const lin_mat *a,
                             int64_t lda, const lin_mat *b, int64_t ldb, sb_dbuf *out) {
    const sb_gemm_shape s = {ta, tb, m, n, k, lda, ldb};
    sb_status st = sb_gemm_check(&s, n > 0 ? n : 1);
    if (st != SB_OK || m == 0 || n == 0) return st;
    if (!dv->d) return sb_fail(SB_ERR_INTERNAL, "linear: a device product without a device");
    sb_device *d;
    if ((st = sb_linalg_device_lock((sb_device_kind)dv->kind, &d)) != SB_OK) return st;
    st = sb_device_ensure(d, out, 4 * (size_t)(m * n), "linear product");
    if (st == SB_OK) st = sb_gemm_on(d, &dv->ws, &s, &a->dev, &b->dev, out);
    sb_linalg_device_unlock();
    return st;
}

sb_status sb_lin_dev_logit_rows(lin_dev *dv, sb_dbuf *z, int64_t n, int32_t K, const lin_mat *b, const lin_mat *label,
                                const lin_mat *s, sb_dbuf *r, sb_dbuf *loss, float *sums) {
    sb_device *d;
    sb_status st = sb_linalg_device_lock((sb_device_kind)dv->kind, &d);
    if (st != SB_OK) return st;
    sb_dbuf out = {0};
    if ((st = sb_device_ensure(d, r, 4 * (size_t)(n * K), "logistic residuals")) == SB_OK &&
        (st = sb_device_ensure(d, loss, 4 * (size_t)n, "logistic losses")) == SB_OK &&
        (st = sb_device_alloc(d, &out, 4 * (size_t)(K + 1), "logistic sums")) == SB_OK &&
        (st = SB_LAUNCH(d, SB_KL_kn_logit_rows, (n + d->wg - 1) / d->wg, 1, 0, SB_ARG(z->h), SB_ARG(n), SB_ARG(K),
                        SB_ARG(b->dev.h), SB_ARG(label->dev.h), SB_ARG(s->dev.h), SB_ARG(r->h), SB_ARG(loss->h))) ==
            SB_OK &&
        (st = sb_lr_lines_on(d, &dv->lr, SB_LR_SUM, 0, n, 1, loss, 1, &out)) == SB_OK &&
        (st = sb_device_read(d, &out, 0, sums, 4, "logistic sums")) == SB_OK &&
        (st = sb_lr_lines_on(d, &dv->lr, SB_LR_SUM, 0, n, K, r, K, &out)) == SB_OK)
        st = sb_device_read(d, &out, 0, sums + 1, 4 * (size_t)K, "logistic sums");
    sb_device_release(d, &out);
    sb_linalg_device_unlock();
    return st;
}

sb_status sb_lin_dev_gemm(lin_dev *dv, int32_t ta, int32_t tb, int64_t m, int64_t n, int64_t k, const lin_mat *a,
                          int64_t lda, const lin_mat *b, int64_t ldb, float *c) {
    const sb_gemm_shape s = {ta, tb, m, n, k, lda, ldb};
    sb_status st = sb_gemm_check(&s, n > 0 ? n : 1);
    if (st != SB_OK || m == 0 || n == 0) return st;
    if (!dv->d) {
        /* a prepared operand whose lines are op(A)'s rows, and one whose lines are op(B)'s columns */
        const sb_gemm_prep *pa = NULL, *pb = NULL;
        const int64_t als = ta ? 1 : lda, aqs = ta ? lda : 1, bls = tb ? ldb : 1, bqs = tb ? 1 : ldb;
        for (int32_t i = 0; i < a->nprep; i++)
            if (a->prep[i].ls == als && a->prep[i].qs == aqs && a->prep[i].nlines == m && a->prep[i].k == k)
                pa = &a->prep[i];
        for (int32_t i = 0; i < b->nprep; i++)
            if (b->prep[i].ls == bls && b->prep[i].qs == bqs && b->prep[i].nlines == n && b->prep[i].k == k)
                pb = &b->prep[i];
        return sb_gemm_host_prep(&s, a->host, b->host, c, n, pa, pb);
    }
    /* the device's product into its kept buffer, then only C comes back */
    if ((st = sb_lin_dev_gemm_to(dv, ta, tb, m, n, k, a, lda, b, ldb, &dv->out)) != SB_OK) return st;
    sb_device *d;
    if ((st = sb_linalg_device_lock((sb_device_kind)dv->kind, &d)) != SB_OK) return st;
    st = sb_device_read(d, &dv->out, 0, c, 4 * (size_t)(m * n), "linear product");
    sb_linalg_device_unlock();
    return st;
}

void sb_lin_phase(const char *phase, double *t0) {
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("SAMEBITS_LINEAR_TIMING");
        on = e && !strcmp(e, "1");
    }
    if (!on) return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const double now = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    if (phase && *t0 > 0.0) fprintf(stderr, "linear: %s %.6f s\n", phase, now - *t0);
    *t0 = now;
}

sb_status sb_lin_record(sb_card *card, const char *stage, const float *v, uint64_t n) {
    return card ? sb_card_record(card, stage, SB_DTYPE_F32, v, n) : SB_OK;
}

typedef struct scan_job {
    const float *x;
    int64_t n, p, *first; /* per chunk: the first nonfinite element's index, or -1 */
} scan_job;

/* Whether any of the 1024 floats at x is an infinity or a NaN (a fixed
 * count, so the compiler's vectors take the loop). */
static uint32_t block_nonfinite(const float *x) {
    uint32_t any = 0;
    for (int q = 0; q < 1024; q++) any |= (sb_f2u(x[q]) & 0x7f800000u) == 0x7f800000u;
    return any;
}

static void scan_task(void *ctx, int64_t task) {
    const scan_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, LIN_ROW_GRAIN, task, &b, &e);
    j->first[task] = -1;
    /* blocks checked without an early exit (the compiler's vectors take the
     * exponent test), the first offender then found in the block that has one */
    const int64_t q1 = e * j->p;
    for (int64_t q0 = b * j->p; q0 < q1; q0 += 1024) {
        const int64_t qe = q0 + 1024 < q1 ? q0 + 1024 : q1;
        uint32_t any = 0;
        if (qe - q0 == 1024) any = block_nonfinite(j->x + q0);
        else
            for (int64_t q = q0; q < qe; q++) any |= (sb_f2u(j->x[q]) & 0x7f800000u) == 0x7f800000u;
        if (!any) continue;
        for (int64_t q = q0; q < qe; q++)
            if (!isfinite(j->x[q])) {
                j->first[task] = q;
                return;
            }
    }
}

int64_t sb_lin_first_nonfinite(const float *x, int64_t n, int64_t p) {
    const int64_t nc = sb_chunk_count(n, LIN_ROW_GRAIN);
    int64_t stack[64], *first = nc <= 64 ? stack : sb_malloc(sizeof(int64_t) * (size_t)nc);
    if (!first) { /* out of memory: one serial pass gives the same answer */
        for (int64_t q = 0; q < n * p; q++)
            if (!isfinite(x[q])) return q;
        return -1;
    }
    scan_job j = {x, n, p, first};
    sb_parallel_for(nc, scan_task, &j);
    int64_t found = -1;
    for (int64_t t = 0; t < nc && found < 0; t++) found = first[t];
    if (first != stack) sb_free(first);
    return found;
}

sb_status sb_lin_check_data(const sb_table *t, const lin_params *p, int32_t *nclass) {
    const char *kind = sb_linear_kind_name(p->kind);
    const int unsupervised = p->kind >= SB_LIN_PCA;
    if (t->nrows < (p->kind == SB_LIN_PCA ? 2 : 1))
        return sb_fail(SB_ERR_INVALID_INPUT, "%s needs at least %d rows, the data has %lld", kind,
                       p->kind == SB_LIN_PCA ? 2 : 1, (long long)t->nrows);
    if (t->ncols < 1) return sb_fail(SB_ERR_INVALID_INPUT, "%s needs at least one feature", kind);
    if (!unsupervised && !t->label) return sb_fail(SB_ERR_INVALID_INPUT, "%s needs labels", kind);
    const int32_t T = t->ntargets > 1 ? t->ntargets : 1;
    if (!unsupervised && T > 1 && p->kind > SB_LIN_ENET)
        return sb_fail(SB_ERR_INVALID_INPUT,
                       "%s takes one target a row, the data has %d (several targets: LinearRegression, Ridge, Lasso "
                       "and ElasticNet)", kind, (int)T);
    const int64_t bad = sb_lin_first_nonfinite(t->x, t->nrows, t->ncols);
    if (bad >= 0) {
        const int64_t i = bad / t->ncols;
        const int32_t j = (int32_t)(bad % t->ncols);
        const float v = t->x[bad];
        return sb_fail(SB_ERR_INVALID_INPUT,
                       "row %lld, feature %d is %s: %s takes no missing or infinite values (impute them first)",
                       (long long)i, (int)j, isnan(v) ? "missing (NaN)" : "infinite", kind);
    }
    int32_t most = -1;
    int64_t bad_label = -1;
    if (!unsupervised) {
        /* the scan in parallel chunks; the message below from the first offender */
        const int64_t nl = t->nrows * T, nc = sb_chunk_count(nl, LIN_ROW_GRAIN * 8);
        int64_t *first = sb_malloc(sizeof(int64_t) * (size_t)(nc > 0 ? nc : 1));
        int32_t *mostc = sb_malloc(sizeof(int32_t) * (size_t)(nc > 0 ? nc : 1));
        if (!first || !mostc) {
            sb_free(first);
            sb_free(mostc);
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", kind);
        }
        label_job lj = {t->label, nl, p->kind == SB_LIN_LOGISTIC, first, mostc};
        sb_parallel_for(nc, label_task, &lj);
        for (int64_t c = 0; c < nc && bad_label < 0; c++) {
            bad_label = first[c];
            if (mostc[c] > most) most = mostc[c];
        }
        sb_free(first);
        sb_free(mostc);
    }
    if (bad_label >= 0) {
        const int64_t i = bad_label;
        const float y = t->label[i];
        if (!isfinite(y) && T > 1)
            return sb_fail(SB_ERR_INVALID_INPUT, "target %d of row %lld is not finite", (int)(i % T),
                           (long long)(i / T));
        if (!isfinite(y)) return sb_fail(SB_ERR_INVALID_INPUT, "label of row %lld is not finite", (long long)i);
        return sb_fail(SB_ERR_INVALID_INPUT, "label of row %lld is %g: logistic regression takes class indices 0..1023",
                       (long long)i, (double)y);
    }
    if (t->weight) {
        const float sw = sb_lin_dot(t->weight, 1, NULL, 0, t->nrows);
        if (!(sw > 0.0f) || !isfinite(sw))
            return sb_fail(SB_ERR_INVALID_INPUT, "the sample weights sum to %g: they must have a finite positive sum",
                           (double)sw);
    }
    if (nclass) *nclass = most + 1 < 2 ? 2 : most + 1;
    return SB_OK;
}

/* Train a linear model (docs/linear.md). */
sb_status sb_linear_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out) {
    sb_clear_error();
    if (out) *out = NULL;
    if (!train || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_linear_fit: NULL argument");
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    lin_params p;
    char *text = NULL;
    sb_status st = sb_lin_params_parse(params, &p);
    int32_t nclass = 0;
    double t0 = 0.0;
    sb_lin_phase(NULL, &t0);
    if (st == SB_OK) st = sb_lin_check_data(&train->t, &p, &nclass);
    sb_lin_phase("checks", &t0);
    if (st == SB_OK && p.kind >= SB_LIN_PCA) st = sb_lin_resolve_solver(&train->t, &p);
    if (st == SB_OK) st = sb_lin_params_text(&p, &text);
    if (st == SB_OK && p.kind == SB_LIN_LOGISTIC && p.cw_max >= nclass)
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "class_weight names class %d, but the labels have %d classes",
                     (int)p.cw_max, (int)nclass);
    const sb_table *t = &train->t;
    int32_t nout = 1;
    if (p.kind == SB_LIN_LOGISTIC) nout = nclass == 2 ? 1 : nclass;
    if (p.kind <= SB_LIN_ENET && t->ntargets > 1) nout = t->ntargets; /* a coefficient row a target */
    if (p.kind >= SB_LIN_PCA) {
        const int64_t most = t->nrows < t->ncols ? t->nrows : t->ncols;
        if (st == SB_OK && p.n_components > most)
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "n_components=%d is more than min(rows, features) = %lld",
                         (int)p.n_components, (long long)most);
        nout = p.n_components > 0 ? p.n_components : (int32_t)most; /* the fit trims a fraction's count */
    }
    sb_model *m = NULL;
    if (st == SB_OK) st = sb_model_alloc(&m);
    if (st == SB_OK) {
        m->family = SB_FAMILY_LINEAR;
        m->objective = SB_OBJ_REGRESSION;
        m->num_features = t->ncols;
        m->numeric_mode = p.numeric_mode;
        m->params = text;
        text = NULL;
        m->num_class = nout;
        if (!(m->linear = sb_linear_alloc(p.kind, nout, t->ncols)))
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory");
    }
    if (st == SB_OK) st = sb_model_copy_names(m, t->names, t->ncols, "linear");
    if (st == SB_OK && card) {
        char dims[64];
        snprintf(dims, sizeof dims, "%lld x %d", (long long)t->nrows, (int)t->ncols);
        st = sb_card_set_meta(card, "linear.data", dims);
    }
    if (st == SB_OK) {
        if (p.kind <= SB_LIN_ENET) st = sb_lin_fit_least_squares(t, &p, m, card);
        else if (p.kind == SB_LIN_LOGISTIC) st = sb_lin_fit_logistic(t, &p, nclass, m, card);
        else st = sb_lin_fit_decomposition(t, &p, m, card);
    }
    if (st == SB_OK && card) st = sb_model_record(card, m, train, SB_PREDICT_RAW, "linear.train_pred", "linear.model_bytes");
    sb_free(text);
    if (st != SB_OK) {
        sb_model_free(m);
        return st;
    }
    *out = m;
    return SB_OK;
}
