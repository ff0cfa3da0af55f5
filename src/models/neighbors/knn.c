/*
 * knn.c: brute-force nearest neighbors with scikit-learn's names and defaults
 * (docs/neighbors.md): NearestNeighbors' kneighbors and radius_neighbors,
 * KNeighborsClassifier and KNeighborsRegressor, Euclidean, cosine and
 * manhattan.
 *
 * The answer is a function of exact arithmetic alone, so it is the same bits
 * on every machine, at every thread count and for every batching of queries:
 *  - the ranking distance of a pair is D(x, y) = sum_f (x_f - y_f)^2 in double
 *    (Euclidean), or 1 - (x.y) / (|x| |y|) clipped to [0, 2] in double
 *    (cosine; 1 where either row is zero), each sum in four lanes (lane l the
 *    features f = l mod 4 in order) added as (l0 + l1) + (l2 + l3), every step
 *    one IEEE operation; neighbors are ordered by (D, index);
 *  - which pairs get D computed is decided by a float32 screen: s(x, y) =
 *    max(0, (|x'|^2 + |y'|^2) - 2 x'.y') on the centered (Euclidean) or
 *    normalized (cosine) rows x', whose error against D (against 2D for
 *    cosine) is bounded by eps = C (|x'|^2 + |y'|^2) + A (the constants in
 *    kn_bound: the product's rounding in any order, with or without fused
 *    multiply-adds, plus the centering's or normalizing's rounding, doubled).
 *    A query keeps U, the k-th smallest s + eps, and computes D for every
 *    pair with s - eps <= U (slightly widened for D's own rounding): a set
 *    that holds every pair of the k least (D, index), ties at the k-th
 *    included. The screen's own bits therefore never reach a result, and its
 *    product may be computed in any order, by any kernel, on any device.
 * Reported distances: sqrt(D) rounded to float32 (Euclidean), D rounded to
 * float32 (cosine, manhattan).
 *
 * Manhattan takes no screen: D(x, y) = sum_f |x_f - y_f| in double in the
 * same four lanes (sb_knn_l1dist) is computed for every pair, each query
 * keeping its kq least (D, index) (or every row within the radius), and
 * those go through the same finish as the screen's candidates. It runs on
 * the host; a GPU is refused by name for it.
 */
#include "knn.h"
#include "../../device/device.h"
#include "../../linalg/linalg.h"
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define KN_PANEL 16   /* training rows of a packed screening panel */
#define KN_QR 4       /* query rows of a packed query panel */
#define KN_QB 128     /* queries of a task */
#define KN_NB 256     /* training rows of a screening tile */
#define KN_KC 256     /* features of a product chunk */
#define KN_MAX_K 100000

typedef struct kn_params {
    int32_t task, k, metric, weights, numeric_mode;
    float radius;
} kn_params;

static const char *const k_task_names[SB_KNN_TASK_COUNT_] = {"neighbors", "classification", "regression"};
static const char *const k_metric_names[SB_KNN_METRIC_COUNT_] = {"euclidean", "cosine", "manhattan"};

const char *sb_knn_metric_name(int32_t metric) {
    return metric >= 0 && metric < SB_KNN_METRIC_COUNT_ ? k_metric_names[metric] : "?";
}
static const char *const k_weight_names[2] = {"uniform", "distance"};

/* ---- parameters ---- */

static int is(const char *key, const char *a, const char *b) { return !strcmp(key, a) || (b && !strcmp(key, b)); }

static const char *const k_alias_groups[] = {"model|family", "n_neighbors|k", "device|device_type", NULL};

/* task: -1 (the caller's default: classification with a label, neighbors without). */
static sb_status kn_params_parse(const sb_params *params, kn_params *p) {
    memset(p, 0, sizeof *p);
    p->task = -1;
    p->k = 5;
    p->radius = 1.0f;
    sb_status st = sb_params_refuse_aliases(params, k_alias_groups, "nearest neighbors");
    if (st != SB_OK) return st;
    sb_numeric_mode mode;
    if ((st = sb_params_resolve_mode(params, SB_FAMILY_KNN, &mode)) != SB_OK) return st;
    p->numeric_mode = (int32_t)mode;
    int power = 2;
    const char *metric = NULL;
    const char *key, *v;
    for (int64_t e = 0; params && sb_params_entry(params, e, &key, &v) == SB_OK && st == SB_OK; e++) {
        int64_t i;
        if (is(key, "numeric_mode", NULL)) {
            continue;
        } else if (is(key, "model", "family")) {
            if (strcmp(v, "knn") && strcmp(v, "nearest_neighbors"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "model='%s' is not nearest neighbors (model=knn)", v);
        } else if (is(key, "task", NULL)) {
            int32_t t = -1;
            for (int32_t q = 0; q < SB_KNN_TASK_COUNT_; q++)
                if (!strcmp(v, k_task_names[q])) t = q;
            if (!strcmp(v, "classifier")) t = SB_KNN_CLASSIFIER;
            if (!strcmp(v, "regressor")) t = SB_KNN_REGRESSOR;
            if (t < 0) st = sb_fail(SB_ERR_INVALID_ARGUMENT, "task='%s': neighbors, classification or regression", v);
            p->task = t;
        } else if (is(key, "n_neighbors", "k")) {
            if ((st = sb_param_int(key, v, 1, KN_MAX_K, &i)) == SB_OK) p->k = (int32_t)i;
        } else if (is(key, "radius", NULL)) {
            st = sb_param_float(key, v, 0.0f, 3.0e38f, 0, &p->radius);
        } else if (is(key, "weights", NULL)) {
            if (!strcmp(v, "uniform")) p->weights = 0;
            else if (!strcmp(v, "distance")) p->weights = 1;
            else st = sb_fail(SB_ERR_INVALID_ARGUMENT, "weights='%s': uniform or distance (a callable is not supported)", v);
        } else if (is(key, "metric", NULL)) {
            metric = v;
        } else if (is(key, "p", NULL)) {
            if ((st = sb_param_int(key, v, 1, 1000, &i)) == SB_OK) power = (int)i;
        } else if (is(key, "algorithm", NULL)) {
            /* every one finds the same exact neighbors; brute force computes them here */
            if (strcmp(v, "auto") && strcmp(v, "brute") && strcmp(v, "ball_tree") && strcmp(v, "kd_tree"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "algorithm='%s': auto, brute, ball_tree or kd_tree", v);
        } else if (is(key, "leaf_size", NULL)) {
            if ((st = sb_param_int(key, v, 1, INT32_MAX, &i)) != SB_OK) break; /* tunes the trees only: no effect */
        } else if (is(key, "device", "device_type")) {
            sb_device_kind dk;
            st = sb_device_parse(v, &dk); /* the fit only keeps the rows; queries name their own device */
        } else {
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown parameter '%s' for nearest neighbors (docs/neighbors.md)", key);
        }
    }
    if (st == SB_OK) st = sb_knn_metric_resolve(metric, power, &p->metric);
    return st;
}

sb_status sb_knn_metric_resolve(const char *metric, int power, int32_t *out) {
    const int minkowski = !metric || !strcmp(metric, "minkowski");
    if (minkowski) { /* p belongs to minkowski: 1 is manhattan, 2 euclidean */
        *out = power == 1 ? SB_KNN_MANHATTAN : SB_KNN_EUCLIDEAN;
        if (power != 1 && power != 2)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "p=%d: minkowski is supported with p=1 (manhattan) or p=2 "
                           "(euclidean)", power);
    } else if (!strcmp(metric, "euclidean") || !strcmp(metric, "l2")) {
        *out = SB_KNN_EUCLIDEAN;
        if (power != 2)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "p=%d does not go with metric=euclidean (p=2): minkowski takes p=1 "
                           "or p=2", power);
    } else if (!strcmp(metric, "manhattan") || !strcmp(metric, "l1") || !strcmp(metric, "cityblock")) {
        *out = SB_KNN_MANHATTAN; /* p belongs to minkowski: not read, as scikit-learn does not */
    } else if (!strcmp(metric, "cosine")) {
        *out = SB_KNN_COSINE;
    } else {
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "metric='%s' is not supported: euclidean, manhattan (minkowski with "
                       "p=2 or p=1) or cosine", metric);
    }
    return SB_OK;
}

/* ---- the screen ---- */

/* eps = C (|x'|^2 + |y'|^2) + A bounds |s(x, y) - D(x, y)| (|s - 2D| for
 * cosine) for d features. With u = 2^-24 and g = gamma_{d+2} = (d+2)u / (1 -
 * (d+2)u): the dot product in any order, fused or not, errs by at most
 * g |x'| |y'| <= g (|x'|^2 + |y'|^2) / 2 (Higham, "Accuracy and Stability of
 * Numerical Algorithms", 2nd ed., 3.1); the norms by g each; the sum and the
 * difference by u of their size (at most 2 (|x'|^2 + |y'|^2)); rounding the
 * centered or normalized rows moves each component by at most u of its size,
 * which moves the squared distance by at most 4.1 u (|x'|^2 + |y'|^2). That
 * is below (2g + 9u) / (1 - g) of the computed norms' sum; C doubles 2g + 16u
 * (which also covers computing the bound itself in float32). A covers
 * products that underflow: d + 4 of at most 2^-150 each, times four. */
static void kn_bound(int32_t d, float *C, float *A) {
    const double u = 0x1p-24, n = (double)d + 2.0, g = n * u / (1.0 - n * u);
    *C = (float)(2.0 * (2.0 * g + 16.0 * u) / (1.0 - g) * (1.0 + 0x1p-20));
#ifdef SB_SABOTAGE_KNN_BOUND
    *C = 0.0f; /* Separating arm (make SABOTAGE=knn-bound): the screen trusted as exact */
#endif
    *A = (float)(((double)d + 4.0) * 0x1p-148);
}

typedef float kn_v4 __attribute__((vector_size(16)));
static inline kn_v4 kn_ld4(const float *p) {
    kn_v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void kn_st4(float *p, kn_v4 v) { memcpy(p, &v, sizeof v); }

/* c[r * ldc + j] += sum_{f < kc} q[4 f + r] t[16 f + j] for r < 4, j < 16:
 * a packed query panel (4 rows) against a packed training panel (16 rows). */
typedef void (*kn_micro_fn)(const float *q, const float *t, int64_t kc, float *c, int64_t ldc);
/* The same for two query panels at once (c0, c1 their tiles). */
typedef void (*kn_micro2_fn)(const float *q0, const float *q1, const float *t, int64_t kc, float *c0, float *c1,
                             int64_t ldc);

static void kn_micro_generic(const float *q, const float *t, int64_t kc, float *c, int64_t ldc) {
    kn_v4 a[KN_QR][4];
    for (int r = 0; r < KN_QR; r++)
        for (int v = 0; v < 4; v++) a[r][v] = kn_ld4(c + r * ldc + 4 * v);
    for (int64_t f = 0; f < kc; f++) {
        const kn_v4 b0 = kn_ld4(t + 16 * f), b1 = kn_ld4(t + 16 * f + 4), b2 = kn_ld4(t + 16 * f + 8),
                    b3 = kn_ld4(t + 16 * f + 12);
        for (int r = 0; r < KN_QR; r++) {
            const float s = q[4 * f + r];
            const kn_v4 sv = {s, s, s, s};
            a[r][0] += b0 * sv;
            a[r][1] += b1 * sv;
            a[r][2] += b2 * sv;
            a[r][3] += b3 * sv;
        }
    }
    for (int r = 0; r < KN_QR; r++)
        for (int v = 0; v < 4; v++) kn_st4(c + r * ldc + 4 * v, a[r][v]);
}

#if defined(__x86_64__)
/* The same with AVX2's fused multiply-adds: other bits of the screen, within
 * the same bound, so the same neighbors. */
__attribute__((target("avx2,fma"))) static void kn_micro_fma(const float *q, const float *t, int64_t kc, float *c,
                                                            int64_t ldc) {
    __m256 a00 = _mm256_loadu_ps(c), a01 = _mm256_loadu_ps(c + 8);
    __m256 a10 = _mm256_loadu_ps(c + ldc), a11 = _mm256_loadu_ps(c + ldc + 8);
    __m256 a20 = _mm256_loadu_ps(c + 2 * ldc), a21 = _mm256_loadu_ps(c + 2 * ldc + 8);
    __m256 a30 = _mm256_loadu_ps(c + 3 * ldc), a31 = _mm256_loadu_ps(c + 3 * ldc + 8);
    for (int64_t f = 0; f < kc; f++) {
        const __m256 b0 = _mm256_loadu_ps(t + 16 * f), b1 = _mm256_loadu_ps(t + 16 * f + 8);
        __m256 s = _mm256_broadcast_ss(q + 4 * f);
        a00 = _mm256_fmadd_ps(s, b0, a00), a01 = _mm256_fmadd_ps(s, b1, a01);
        s = _mm256_broadcast_ss(q + 4 * f + 1);
        a10 = _mm256_fmadd_ps(s, b0, a10), a11 = _mm256_fmadd_ps(s, b1, a11);
        s = _mm256_broadcast_ss(q + 4 * f + 2);
        a20 = _mm256_fmadd_ps(s, b0, a20), a21 = _mm256_fmadd_ps(s, b1, a21);
        s = _mm256_broadcast_ss(q + 4 * f + 3);
        a30 = _mm256_fmadd_ps(s, b0, a30), a31 = _mm256_fmadd_ps(s, b1, a31);
    }
    _mm256_storeu_ps(c, a00), _mm256_storeu_ps(c + 8, a01);
    _mm256_storeu_ps(c + ldc, a10), _mm256_storeu_ps(c + ldc + 8, a11);
    _mm256_storeu_ps(c + 2 * ldc, a20), _mm256_storeu_ps(c + 2 * ldc + 8, a21);
    _mm256_storeu_ps(c + 3 * ldc, a30), _mm256_storeu_ps(c + 3 * ldc + 8, a31);
}

/* Two query panels against one training panel with AVX-512F: each product
 * the fused chain of kn_micro_fma (f ascending, one fmadd a step), its 16
 * columns in one register, so the same screen bits as kn_micro_fma; eight
 * chains hide the fmadd latency that four would not. */
__attribute__((target("avx512f"))) static void kn_micro2_avx512(const float *q0, const float *q1, const float *t,
                                                                int64_t kc, float *c0, float *c1, int64_t ldc) {
    __m512 a0 = _mm512_loadu_ps(c0), a1 = _mm512_loadu_ps(c0 + ldc), a2 = _mm512_loadu_ps(c0 + 2 * ldc),
           a3 = _mm512_loadu_ps(c0 + 3 * ldc);
    __m512 b0 = _mm512_loadu_ps(c1), b1 = _mm512_loadu_ps(c1 + ldc), b2 = _mm512_loadu_ps(c1 + 2 * ldc),
           b3 = _mm512_loadu_ps(c1 + 3 * ldc);
    for (int64_t f = 0; f < kc; f++) {
        const __m512 tv = _mm512_loadu_ps(t + 16 * f);
        a0 = _mm512_fmadd_ps(_mm512_set1_ps(q0[4 * f]), tv, a0);
        a1 = _mm512_fmadd_ps(_mm512_set1_ps(q0[4 * f + 1]), tv, a1);
        a2 = _mm512_fmadd_ps(_mm512_set1_ps(q0[4 * f + 2]), tv, a2);
        a3 = _mm512_fmadd_ps(_mm512_set1_ps(q0[4 * f + 3]), tv, a3);
        b0 = _mm512_fmadd_ps(_mm512_set1_ps(q1[4 * f]), tv, b0);
        b1 = _mm512_fmadd_ps(_mm512_set1_ps(q1[4 * f + 1]), tv, b1);
        b2 = _mm512_fmadd_ps(_mm512_set1_ps(q1[4 * f + 2]), tv, b2);
        b3 = _mm512_fmadd_ps(_mm512_set1_ps(q1[4 * f + 3]), tv, b3);
    }
    _mm512_storeu_ps(c0, a0), _mm512_storeu_ps(c0 + ldc, a1), _mm512_storeu_ps(c0 + 2 * ldc, a2);
    _mm512_storeu_ps(c0 + 3 * ldc, a3);
    _mm512_storeu_ps(c1, b0), _mm512_storeu_ps(c1 + ldc, b1), _mm512_storeu_ps(c1 + 2 * ldc, b2);
    _mm512_storeu_ps(c1 + 3 * ldc, b3);
}
#endif

static int32_t g_generic_for_tests;
void sb_knn_generic_screen_for_tests(int32_t on) { g_generic_for_tests = on; }

/* The pair kernel where kn_micro chose kn_micro_fma and the CPU has
 * AVX-512F (the same bits); NULL otherwise. */
static kn_micro2_fn kn_micro2(kn_micro_fn one) {
#if defined(__x86_64__)
    if (one == kn_micro_fma && __builtin_cpu_supports("avx512f")) return kn_micro2_avx512;
#endif
    (void)one;
    return NULL;
}

static kn_micro_fn kn_micro(void) {
#if defined(__x86_64__)
    if (!g_generic_for_tests && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return kn_micro_fma;
#endif
    return kn_micro_generic;
}

/* ---- the exact distances ---- */

/* sum_f (x_f - y_f)^2 in the four lanes of the header (knn.h). */
static double kn_sqdist(const float *x, const float *y, int32_t d) { return sb_knn_sqdist(x, y, d); }

static double kn_dot(const float *x, const float *y, int32_t d) {
    double l[4] = {0.0, 0.0, 0.0, 0.0};
    for (int32_t f = 0; f < d; f++) l[f & 3] += (double)x[f] * (double)y[f];
    return (l[0] + l[1]) + (l[2] + l[3]);
}

/* 1 - x.y / (|x| |y|) clipped to [0, 2]; 1 when either norm is zero. */
static double kn_cosdist(const float *x, double xnorm, const float *y, double ynorm, int32_t d) {
    if (xnorm == 0.0 || ynorm == 0.0) return 1.0;
    const double c = 1.0 - kn_dot(x, y, d) / (xnorm * ynorm);
    return c < 0.0 ? 0.0 : c > 2.0 ? 2.0 : c;
}

/* ---- the screening rows ---- */

typedef struct prep_job {
    sb_knn *k;
    int32_t d;
    const float *src;   /* rows to pack */
    int64_t n;
    float *dst, *dn;    /* packed rows (panels of `width`), their screening norms */
    const float *mu;    /* euclidean: means */
    double *norm;       /* cosine: norms out (may be NULL) */
    int32_t metric, width;
} prep_job;

/* Panel p of rows: centered or normalized into dst, the norms into dn. */
static void prep_task(void *ctx, int64_t p) {
    const prep_job *j = ctx;
    const int32_t d = j->d, w = j->width;
    float *dst = j->dst + p * (int64_t)d * w;
    for (int32_t r = 0; r < w; r++) {
        const int64_t i = p * w + r;
        if (i >= j->n) {
            for (int32_t f = 0; f < d; f++) dst[(int64_t)f * w + r] = 0.0f;
            continue;
        }
        const float *x = j->src + i * d;
        double s = 0.0;
        if (j->metric == SB_KNN_EUCLIDEAN) {
            for (int32_t f = 0; f < d; f++) {
                const float v = x[f] - j->mu[f];
                dst[(int64_t)f * w + r] = v;
                s += (double)v * (double)v;
            }
        } else {
            const double nrm = sqrt(kn_dot(x, x, d));
            if (j->norm) j->norm[i] = nrm;
            const double inv = nrm > 0.0 ? 1.0 / nrm : 0.0;
            for (int32_t f = 0; f < d; f++) {
                const float v = (float)((double)x[f] * inv);
                dst[(int64_t)f * w + r] = v;
                s += (double)v * (double)v;
            }
            if (nrm == 0.0) s = 1.0; /* s(x, 0) = |x'|^2 + 1 ~ 2 = 2 D(x, 0), within the bound */
        }
        j->dn[i] = (float)s;
    }
}

/* Pack n rows of src (panels of width) with their norms; SB_ERR_INVALID_INPUT
 * when a norm is not finite. */
static sb_status kn_pack(const sb_knn *k, int32_t d, const float *src, int64_t n, int32_t width, float *dst, float *dn,
                         double *norm) {
    prep_job j = {(sb_knn *)k, d, src, n, dst, dn, k->mu, norm, k->metric, width};
    sb_parallel_for((n + width - 1) / width, prep_task, &j);
    for (int64_t i = 0; i < n; i++) /* below 1e37, no sum of the screen overflows */
        if (!(dn[i] <= 1e37f))
            return sb_fail(SB_ERR_LIMIT,
                           "row %lld: its %s squared norm is %g: nearest neighbors take rows whose squares sum below "
                           "1e37", (long long)i, k->metric == SB_KNN_EUCLIDEAN ? "centered" : "normalized", (double)dn[i]);
    return SB_OK;
}

#define KN_MU_COLS 16

typedef struct mu_job {
    const float *x;
    int64_t n;
    int32_t d;
    float *mu;
} mu_job;

/* Columns [c * KN_MU_COLS, ...): each column's sum over the rows in row order,
 * in double, then its mean rounded once. */
static void mu_task(void *ctx, int64_t c) {
    const mu_job *j = ctx;
    const int32_t f0 = (int32_t)(c * KN_MU_COLS), nf = j->d - f0 < KN_MU_COLS ? j->d - f0 : KN_MU_COLS;
    double s[KN_MU_COLS] = {0};
    for (int64_t i = 0; i < j->n; i++) {
        const float *r = j->x + i * j->d + f0;
        for (int32_t f = 0; f < nf; f++) s[f] += (double)r[f];
    }
    for (int32_t f = 0; f < nf; f++) j->mu[f0 + f] = (float)(s[f] / (double)j->n);
}

sb_status sb_knn_prepare(sb_knn *k, int32_t d) {
    sb_free(k->xs), sb_free(k->xsn), sb_free(k->mu), sb_free(k->xnorm);
    k->xs = NULL, k->xsn = NULL, k->mu = NULL, k->xnorm = NULL;
    if (k->metric == SB_KNN_MANHATTAN) return SB_OK; /* no screen; no sum of finite floats' differences overflows */
    const int64_t np = (k->n + KN_PANEL - 1) / KN_PANEL;
    k->xs = sb_malloc(sizeof(float) * (size_t)np * KN_PANEL * (size_t)d);
    k->xsn = sb_malloc(sizeof(float) * (size_t)np * KN_PANEL);
    if (k->metric == SB_KNN_EUCLIDEAN) k->mu = sb_malloc(sizeof(float) * (size_t)d);
    else k->xnorm = sb_malloc(sizeof(double) * (size_t)k->n);
    if (!k->xs || !k->xsn || (!k->mu && !k->xnorm))
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "nearest neighbors: out of memory for %lld x %d screening rows",
                       (long long)k->n, (int)d);
    for (int64_t i = k->n; i < np * KN_PANEL; i++) k->xsn[i] = 0.0f;
    if (k->mu) { /* the column means, in double over the rows in order (each column's own sum; columns in
                  * blocks of KN_MU_COLS a task, read row after row) */
        mu_job mj = {k->x, k->n, d, k->mu};
        sb_parallel_for((d + KN_MU_COLS - 1) / KN_MU_COLS, mu_task, &mj);
    }
    return kn_pack(k, d, k->x, k->n, KN_PANEL, k->xs, k->xsn, k->xnorm);
}

sb_status sb_knn_rows_check(const float *x, int64_t n, int32_t d, int32_t metric) {
    if (metric == SB_KNN_MANHATTAN) return SB_OK; /* no screen, so no limit: nothing to copy and check */
    sb_knn *k = sb_knn_alloc(SB_KNN_NEIGHBORS, n, d);
    if (!k) return sb_fail(SB_ERR_OUT_OF_MEMORY, "nearest neighbors: out of memory for %lld x %d rows", (long long)n,
                           (int)d);
    k->metric = metric;
    memcpy(k->x, x, sizeof(float) * (size_t)n * (size_t)d);
    const sb_status st = sb_knn_prepare(k, d);
    sb_knn_free(k);
    return st;
}

/* ---- one query's candidates ---- */

typedef struct kn_cand {
    int64_t j;
    float lo;
} kn_cand;

typedef struct kn_pair {
    double dist;
    int64_t j;
} kn_pair;

typedef struct kn_state {
    float *heap;     /* max-heap of the kk least upper bounds */
    int32_t hn;
    kn_cand *c;
    int64_t cn, cap;
    int failed;      /* out of memory */
} kn_state;

/* The widened cut for a lower bound: U plus D's own rounding (d + 8 units of
 * 2^-52 of it, far below 2^-20) and an absolute 2^-48 (d + 8) for cosine's. */
static inline float kn_cut(float U, float slack) { return U + U * 0x1p-20f + slack; }

static void heap_push(kn_state *s, int32_t kk, float v) {
    float *h = s->heap;
    if (s->hn < kk) {
        int32_t i = s->hn++;
        while (i > 0 && h[(i - 1) / 2] < v) h[i] = h[(i - 1) / 2], i = (i - 1) / 2;
        h[i] = v;
        return;
    }
    if (!(v < h[0])) return;
    int32_t i = 0;
    for (;;) {
        int32_t l = 2 * i + 1, r = l + 1, m = i;
        float mv = v;
        if (l < kk && h[l] > mv) m = l, mv = h[l];
        if (r < kk && h[r] > mv) m = r;
        if (m == i) break;
        h[i] = h[m];
        i = m;
    }
    h[i] = v;
}

/* Keep the candidates whose lower bound is within the cut; grow when most stay. */
static void cand_prune(kn_state *s, float cut) {
    int64_t w = 0;
    for (int64_t i = 0; i < s->cn; i++)
        if (s->c[i].lo <= cut) s->c[w++] = s->c[i];
    s->cn = w;
    if (w * 2 > s->cap) {
        kn_cand *g = sb_realloc(s->c, sizeof(kn_cand) * (size_t)(s->cap * 2));
        if (!g) {
            s->failed = 1;
            s->cn = 0;
            return;
        }
        s->c = g;
        s->cap *= 2;
    }
}

static int pair_cmp(const void *a, const void *b) {
    const kn_pair *x = a, *y = b;
    if (x->dist != y->dist) return x->dist < y->dist ? -1 : 1;
#ifdef SB_SABOTAGE_KNN_TIES
    /* Separating arm (make SABOTAGE=knn-ties): equal distances to the higher index. */
    return x->j < y->j ? 1 : x->j > y->j ? -1 : 0;
#else
    return x->j < y->j ? -1 : x->j > y->j ? 1 : 0;
#endif
}

static int pair_i64_cmp(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int pair_idx_cmp(const void *a, const void *b) {
    const kn_pair *x = a, *y = b;
    return x->j < y->j ? -1 : x->j > y->j ? 1 : 0;
}

/* ---- the query job ---- */

typedef struct kn_job {
    const sb_knn *k;
    int32_t d, kk, sort, exclude_self, radius_mode;
    const float *q;          /* nq x d query rows */
    int64_t nq;
    double r_exact;          /* radius mode: D <= r_exact */
    float r_screen;          /* radius mode: the screen's cut before widening */
    float C, A, slack;
    kn_micro_fn micro;
    kn_micro2_fn micro2; /* two query panels at once, the same bits (NULL: none) */
    const int64_t *qmap;     /* NULL, or query i of q is query qmap[i] of the call (the GPU's overflow) */
    /* out */
    int64_t *cnt;            /* nq: neighbors found */
    kn_pair **res;           /* nq: each query's neighbors (radius mode) */
    int64_t *kidx;           /* kneighbors: nq x kk' */
    float *kdist;
    int failed;
} kn_job;

/* The reported distance of D. */
static inline float kn_report(const sb_knn *k, double D) { return k->metric == SB_KNN_EUCLIDEAN ? (float)sqrt(D) : (float)D; }

/* Query i's final list from its candidates: D for each within the cut, then
 * the order. */
static void kn_finish(kn_job *jb, int64_t i, const float *xq, double qnorm, kn_state *s, float cut) {
    const sb_knn *k = jb->k;
    if (jb->qmap) i = jb->qmap[i];
    const int32_t d = jb->d;
    kn_pair *p = sb_malloc(sizeof(kn_pair) * (size_t)(s->cn > 0 ? s->cn : 1));
    if (!p) {
        jb->failed = 1;
        return;
    }
    int64_t np = 0;
    for (int64_t c = 0; c < s->cn; c++) {
        if (!(s->c[c].lo <= cut)) continue;
        const int64_t j = s->c[c].j;
        const float *y = k->x + j * d;
        const double D = k->metric == SB_KNN_COSINE      ? kn_cosdist(xq, qnorm, y, k->xnorm[j], d)
                         : k->metric == SB_KNN_MANHATTAN ? sb_knn_l1dist(xq, y, d)
                                                         : kn_sqdist(xq, y, d);
        if (jb->radius_mode && (!(D <= jb->r_exact) || (jb->exclude_self && j == i))) continue;
        p[np].dist = D, p[np].j = j, np++;
    }
    if (jb->radius_mode) {
        qsort(p, (size_t)np, sizeof *p, jb->sort ? pair_cmp : pair_idx_cmp);
        jb->cnt[i] = np;
        jb->res[i] = p;
        return;
    }
    qsort(p, (size_t)np, sizeof *p, pair_cmp);
    const int32_t kq = jb->kk + jb->exclude_self; /* np >= kq: the heap's kk bounds each lie above a candidate */
    int64_t w = 0, skip = -1;
    if (jb->exclude_self) { /* itself if among the first kq, else the last: the k nearest other rows by (D, index) */
        skip = kq - 1;
        for (int32_t c = 0; c < kq && c < np; c++)
            if (p[c].j == i) skip = c;
    }
    for (int32_t c = 0; c < kq && c < np; c++) {
        if (c == skip) continue;
        jb->kidx[i * jb->kk + w] = p[c].j;
        jb->kdist[i * jb->kk + w] = kn_report(k, p[c].dist);
        w++;
    }
    jb->cnt[i] = w;
    sb_free(p);
}

/* Queries [b, e) of task t: pack them, screen them against every training
 * tile, keep the candidates, finish each. */
static void query_task(void *ctx, int64_t t) {
    kn_job *jb = ctx;
    const sb_knn *k = jb->k;
    const int32_t d = jb->d;
    int64_t b, e;
    sb_chunk_range(jb->nq, KN_QB, t, &b, &e);
    const int64_t nb = e - b, nqp = (nb + KN_QR - 1) / KN_QR;
    const int32_t kq = jb->kk + jb->exclude_self;
    float *qs = sb_malloc(sizeof(float) * (size_t)(nqp * KN_QR) * (size_t)d);
    float *qn = sb_malloc(sizeof(float) * (size_t)(nqp * KN_QR));
    double *qnorm = k->metric == SB_KNN_COSINE ? sb_malloc(sizeof(double) * (size_t)nb) : NULL;
    float *tile = sb_malloc(sizeof(float) * (size_t)(nqp * KN_QR) * KN_NB);
    kn_state *st = sb_calloc((size_t)nb, sizeof(kn_state));
    int ok = qs && qn && tile && st && (k->metric != SB_KNN_COSINE || qnorm);
    for (int64_t i = 0; ok && i < nb; i++) {
        st[i].cap = 4 * (int64_t)kq + 64;
        st[i].c = sb_malloc(sizeof(kn_cand) * (size_t)st[i].cap);
        st[i].heap = jb->radius_mode ? NULL : sb_malloc(sizeof(float) * (size_t)kq);
        ok = st[i].c && (jb->radius_mode || st[i].heap);
    }
    if (ok) {
        prep_job pj = {(sb_knn *)k, d, jb->q + b * d, nb, qs, qn, k->mu, qnorm, k->metric, KN_QR};
        for (int64_t p = 0; p < nqp; p++) prep_task(&pj, p);
    }
    const int64_t ntp = (k->n + KN_PANEL - 1) / KN_PANEL;
    for (int64_t t0 = 0; ok && t0 < ntp; t0 += KN_NB / KN_PANEL) {
        const int64_t t1 = t0 + KN_NB / KN_PANEL < ntp ? t0 + KN_NB / KN_PANEL : ntp;
        memset(tile, 0, sizeof(float) * (size_t)(nqp * KN_QR) * KN_NB);
        for (int64_t f0 = 0; f0 < d; f0 += KN_KC) {
            const int64_t kc = f0 + KN_KC < d ? KN_KC : d - f0;
            for (int64_t tp = t0; tp < t1; tp++) {
                const float *tpan = k->xs + (tp * d + f0) * KN_PANEL;
                int64_t qp = 0;
                if (jb->micro2)
                    for (; qp + 1 < nqp; qp += 2)
                        jb->micro2(qs + (qp * d + f0) * KN_QR, qs + ((qp + 1) * d + f0) * KN_QR, tpan, kc,
                                   tile + qp * KN_QR * KN_NB + (tp - t0) * KN_PANEL,
                                   tile + (qp + 1) * KN_QR * KN_NB + (tp - t0) * KN_PANEL, KN_NB);
                for (; qp < nqp; qp++)
                    jb->micro(qs + (qp * d + f0) * KN_QR, tpan, kc, tile + qp * KN_QR * KN_NB + (tp - t0) * KN_PANEL,
                              KN_NB);
            }
        }
        const int64_t j0 = t0 * KN_PANEL, j1 = t1 * KN_PANEL < k->n ? t1 * KN_PANEL : k->n;
        for (int64_t i = 0; i < nb; i++) {
            kn_state *s = &st[i];
            if (k->metric == SB_KNN_COSINE && qnorm[i] == 0.0) continue; /* a zero query: finished below */
            const float *row = tile + i * KN_NB - j0;
            const float xn = qn[i];
            float cut = jb->radius_mode ? kn_cut(jb->r_screen, jb->slack)
                                        : (s->hn == kq ? kn_cut(s->heap[0], jb->slack) : INFINITY);
            for (int64_t j = j0; j < j1; j++) {
                float sc = (xn + k->xsn[j]) - 2.0f * row[j];
                sc = sc > 0.0f ? sc : 0.0f;
                const float eps = jb->C * (xn + k->xsn[j]) + jb->A;
                const float lo = sc - eps;
                if (!(lo <= cut)) continue;
                if (!jb->radius_mode) {
                    heap_push(s, kq, sc + eps);
                    if (s->hn == kq) cut = kn_cut(s->heap[0], jb->slack);
                    if (!(lo <= cut)) continue;
                }
                if (s->cn == s->cap) {
                    cand_prune(s, cut);
                    if (s->failed) {
                        ok = 0;
                        break;
                    }
                }
                s->c[s->cn].j = j, s->c[s->cn].lo = lo, s->cn++;
            }
        }
    }
    for (int64_t i = 0; ok && i < nb; i++) {
        kn_state *s = &st[i];
        const float *xq = jb->q + (b + i) * d;
        if (k->metric == SB_KNN_COSINE && qnorm[i] == 0.0) { /* every distance is 1: the first rows */
            s->cn = 0;
            const int64_t want = jb->radius_mode ? (jb->r_exact >= 1.0 ? k->n : 0) : kq;
            kn_cand *g = sb_realloc(s->c, sizeof(kn_cand) * (size_t)(want > 0 ? want : 1));
            if (!g) {
                ok = 0;
                break;
            }
            s->c = g;
            for (int64_t j = 0; j < want; j++) s->c[s->cn].j = j, s->c[s->cn].lo = 0.0f, s->cn++;
            kn_finish(jb, b + i, xq, 0.0, s, 0.0f);
            continue;
        }
        const float cut = jb->radius_mode ? kn_cut(jb->r_screen, jb->slack) : kn_cut(s->heap[0], jb->slack);
        kn_finish(jb, b + i, xq, qnorm ? qnorm[i] : 0.0, s, cut);
    }
    if (!ok) jb->failed = 1;
    for (int64_t i = 0; st && i < nb; i++) sb_free(st[i].c), sb_free(st[i].heap);
    sb_free(st);
    sb_free(qs);
    sb_free(qn);
    sb_free(qnorm);
    sb_free(tile);
}

/* ---- manhattan: every pair's exact distance ---- */

/* pair (D, j) before (E, i) in the order of the results */
static inline int kn_before(double D, int64_t j, double E, int64_t i) { return D < E || (D == E && j < i); }

/* Max-heap of the kq least (D, index) pairs seen, by kn_before. */
static void l1_push(kn_pair *h, int32_t *hn, int32_t kq, double D, int64_t j) {
    int32_t i;
    if (*hn < kq) {
        i = (*hn)++;
        while (i > 0 && kn_before(h[(i - 1) / 2].dist, h[(i - 1) / 2].j, D, j)) h[i] = h[(i - 1) / 2], i = (i - 1) / 2;
        h[i].dist = D, h[i].j = j;
        return;
    }
    if (!kn_before(D, j, h[0].dist, h[0].j)) return;
    i = 0;
    for (;;) {
        int32_t l = 2 * i + 1, r = l + 1, m = i;
        double md = D;
        int64_t mj = j;
        if (l < kq && kn_before(md, mj, h[l].dist, h[l].j)) m = l, md = h[l].dist, mj = h[l].j;
        if (r < kq && kn_before(md, mj, h[r].dist, h[r].j)) m = r;
        if (m == i) break;
        h[i] = h[m];
        i = m;
    }
    h[i].dist = D, h[i].j = j;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* sb_knn_l1dist compiled for AVX2: the same lanes, operations and order. */
__attribute__((target("avx2"))) static double kn_l1_avx2(const float *x, const float *y, int32_t d) {
    return sb_knn_l1dist(x, y, d);
}
#endif
static double kn_l1_gen(const float *x, const float *y, int32_t d) { return sb_knn_l1dist(x, y, d); }

/* Queries [b, e) of task t against every training row (KN_NB rows at a time,
 * so a tile stays in cache across the task's queries): each query's kq least
 * (D, index), or every row with D <= r_exact, become its candidates, and
 * kn_finish orders them as it orders the screen's. */
static void l1_task(void *ctx, int64_t t) {
    kn_job *jb = ctx;
    const sb_knn *k = jb->k;
    const int32_t d = jb->d, kq = jb->kk + jb->exclude_self;
    double (*l1)(const float *, const float *, int32_t) = kn_l1_gen;
#if defined(__x86_64__) && defined(__GNUC__)
    if (!g_generic_for_tests && __builtin_cpu_supports("avx2")) l1 = kn_l1_avx2;
#endif
    int64_t b, e;
    sb_chunk_range(jb->nq, KN_QB, t, &b, &e);
    const int64_t nb = e - b;
    kn_state *st = sb_calloc((size_t)(nb > 0 ? nb : 1), sizeof(kn_state));
    kn_pair *heaps = jb->radius_mode ? NULL : sb_malloc(sizeof(kn_pair) * (size_t)(nb * kq > 0 ? nb * kq : 1));
    int32_t *hn = sb_calloc((size_t)(nb > 0 ? nb : 1), sizeof(int32_t));
    int ok = st && hn && (jb->radius_mode || heaps);
    for (int64_t i = 0; ok && i < nb; i++) {
        st[i].cap = jb->radius_mode ? 64 : kq;
        st[i].c = sb_malloc(sizeof(kn_cand) * (size_t)st[i].cap);
        ok = st[i].c != NULL;
    }
    for (int64_t j0 = 0; ok && j0 < k->n; j0 += KN_NB) {
        const int64_t j1 = j0 + KN_NB < k->n ? j0 + KN_NB : k->n;
        for (int64_t i = 0; ok && i < nb; i++) {
            const float *xq = jb->q + (b + i) * d;
            kn_state *s = &st[i];
            for (int64_t j = j0; j < j1; j++) {
                const double D = l1(xq, k->x + j * d, d);
                if (!jb->radius_mode) {
                    l1_push(heaps + i * kq, &hn[i], kq, D, j);
                } else if (D <= jb->r_exact) {
                    if (s->cn == s->cap) {
                        kn_cand *g = sb_realloc(s->c, sizeof(kn_cand) * (size_t)(2 * s->cap));
                        if (!g) {
                            ok = 0;
                            break;
                        }
                        s->c = g, s->cap *= 2;
                    }
                    s->c[s->cn].j = j, s->c[s->cn].lo = 0.0f, s->cn++;
                }
            }
        }
    }
    for (int64_t i = 0; ok && i < nb; i++) {
        kn_state *s = &st[i];
        if (!jb->radius_mode)
            for (int32_t c = 0; c < hn[i]; c++) s->c[s->cn].j = heaps[i * kq + c].j, s->c[s->cn].lo = 0.0f, s->cn++;
        kn_finish(jb, b + i, jb->q + (b + i) * d, 0.0, s, 0.0f);
    }
    if (!ok) jb->failed = 1;
    for (int64_t i = 0; st && i < nb; i++) sb_free(st[i].c);
    sb_free(st), sb_free(heaps), sb_free(hn);
}

/* ---- the screen on a GPU ----
 * device=cuda|opencl|gpu: the same answer, because the device only screens.
 * kn_dots forms the float32 products of a block of queries against a chunk of
 * training rows (any order, fused: the bound covers it), kn_select keeps each
 * query's kq least keys s + eps of the chunk and appends every row whose
 * lower bound s - eps is within that chunk's cut (the chunk's kq-th key is at
 * least the whole table's, so the rows kept hold every row the host's cut
 * keeps), kn_compact packs them. The host then takes U, the kq-th least key
 * of all chunks, and runs kn_finish on the candidates: the exact D of each
 * within the cut, ordered by (D, index), as the host screen's candidates are.
 * A query whose candidates overflow the device's room (cap) is screened again
 * on the host. Neither the kernels nor the schedule reach a bit. */
#define KN_GPU_QB 4096     /* queries of a device block at most */
#define KN_GPU_BUDGET ((int64_t)4 << 30) /* bytes of products a block may hold (at most half the largest buffer) */
#define KN_GPU_CAP_K 2048  /* candidates a query may send (k nearest); more: the host screens it */
#define KN_GPU_CAP_RADIUS 8192 /* the same for a radius query */
#define KN_GPU_KMAX 32     /* kq above it: the host screens (neighbors_entry.h's SB_KN_KMAX) */

typedef struct kng_job {
    kn_job *jb;
    int64_t b;                 /* the block's first query */
    const int64_t *off;        /* nb + 1: each query's candidates in cj/clo */
    const int64_t *cj;
    const float *clo;
    const float *keys;         /* nb x nch x kq */
    const int32_t *cnt;
    const double *qnorm;       /* cosine */
    int32_t nch, kq, cap;
    int64_t *over;             /* queries (global) to screen on the host, *nover of them */
    int64_t nover;
    pthread_mutex_t *mu;
} kng_job;

static int f32_cmp(const void *a, const void *b) {
    const float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Query b + i of the block from the device's candidates (kn_finish). */
static void kng_task(void *ctx, int64_t i) {
    kng_job *g = ctx;
    kn_job *jb = g->jb;
    const sb_knn *k = jb->k;
    const int64_t qg = g->b + i;
    const float *xq = jb->q + qg * jb->d;
    kn_state s;
    memset(&s, 0, sizeof s);
    if (k->metric == SB_KNN_COSINE && g->qnorm[i] == 0.0) { /* every distance is 1: the first rows (query_task's) */
        const int64_t want = jb->radius_mode ? (jb->r_exact >= 1.0 ? k->n : 0) : g->kq;
        s.c = sb_malloc(sizeof(kn_cand) * (size_t)(want > 0 ? want : 1));
        if (!s.c) {
            jb->failed = 1;
            return;
        }
        for (int64_t j = 0; j < want; j++) s.c[s.cn].j = j, s.c[s.cn].lo = 0.0f, s.cn++;
        kn_finish(jb, qg, xq, 0.0, &s, 0.0f);
        sb_free(s.c);
        return;
    }
    if (g->cnt[i] > g->cap) { /* overflowed: the host screens it */
        pthread_mutex_lock(g->mu);
        g->over[g->nover++] = qg;
        pthread_mutex_unlock(g->mu);
        return;
    }
    float cut;
    if (jb->radius_mode) {
        cut = kn_cut(jb->r_screen, jb->slack);
    } else {
        const int64_t nk = (int64_t)g->nch * g->kq;
        float *u = sb_malloc(sizeof(float) * (size_t)nk);
        if (!u) {
            jb->failed = 1;
            return;
        }
        memcpy(u, g->keys + i * nk, sizeof(float) * (size_t)nk);
        qsort(u, (size_t)nk, sizeof(float), f32_cmp);
        cut = kn_cut(u[g->kq - 1], jb->slack);
        sb_free(u);
    }
    const int64_t c0 = g->off[i], cn = g->off[i + 1] - c0;
    s.c = sb_malloc(sizeof(kn_cand) * (size_t)(cn > 0 ? cn : 1));
    if (!s.c) {
        jb->failed = 1;
        return;
    }
    for (int64_t c = 0; c < cn; c++) s.c[c].j = g->cj[c0 + c], s.c[c].lo = g->clo[c0 + c];
    s.cn = cn;
    kn_finish(jb, qg, xq, k->metric == SB_KNN_COSINE ? g->qnorm[i] : 0.0, &s, cut);
    sb_free(s.c);
}

/* SAMEBITS_KNN_TIMING=1: the device path's phases, summed over the blocks, on
 * standard error at its end (a measurement aid; no value depends on it). */
static double kn_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct kn_gbufs {
    sb_dbuf x, xp, xn, q, qn, p, keys, cnt, cj, clo, off, dj, dlo;
} kn_gbufs;

static void kn_gbufs_release(sb_device *d, kn_gbufs *b) {
    sb_dbuf *all[] = {&b->x, &b->xp, &b->xn, &b->q, &b->qn, &b->p, &b->keys, &b->cnt, &b->cj, &b->clo, &b->off, &b->dj, &b->dlo};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sb_device_release(d, all[i]);
}

/* The device buffers, kept from call to call (per device kind, used under
 * sb_linalg_device_lock, as the linear-algebra core keeps its own): a call
 * only grows them, so repeated queries pay no allocation. */
static kn_gbufs g_kn_ws[4];

/* Every query of jb through the device of kind; the queries that overflow
 * the device's room through the host screen. Queries that are the model's
 * own rows (DBSCAN's and spectral clustering's neighborhoods, kneighbors()
 * without X) are read from the rows already on the device. */
static sb_status kn_query_gpu(kn_job *jb, sb_device_kind kind, int *declined) {
    const sb_knn *k = jb->k;
    const int32_t d = jb->d, kq = jb->radius_mode ? 0 : jb->kk + jb->exclude_self;
    const int64_t n = k->n, nq = jb->nq;
    sb_device *dev = NULL;
    sb_status st = sb_linalg_device_lock(kind, &dev);
    if (st != SB_OK) return st;
    /* the products of a block of qb queries against rc rows at a time, within a budget of device memory:
     * all the rows when they fit (one selection a query), else chunks of them */
    const int32_t wg = dev->wg, tq = (wg / 16) * 8, tr = 128;
    const int64_t budget = dev->max_alloc / 2 < KN_GPU_BUDGET ? dev->max_alloc / 2 : KN_GPU_BUDGET;
    int64_t qb = nq < KN_GPU_QB ? nq : KN_GPU_QB, rc = n;
    while (qb > tq && qb * rc * 4 > budget) qb /= 2;
    if (qb * rc * 4 > budget) rc = budget / (4 * qb) / tr * tr > tr ? budget / (4 * qb) / tr * tr : tr;
    if (rc > n) rc = n;
    const int32_t nch = (int32_t)((n + rc - 1) / rc);
    int32_t m = 1;
    while (m < wg * (kq > 0 ? kq : 1)) m *= 2;
    /* kn_select keeps m keys in local memory: a device with less (some keep
     * 16 KiB) screens on the host instead (the same candidates, the same
     * bits), rather than fail the launch. SAMEBITS_TEST_KNN_LOCAL_MEM (bytes)
     * stands for a smaller device in tests. */
    {
        int64_t room = dev->local_mem;
        const char *tl = getenv("SAMEBITS_TEST_KNN_LOCAL_MEM");
        if (tl && *tl) room = strtoll(tl, NULL, 10);
        if (room > 0 && (int64_t)4 * m > room - 1024) {
            sb_linalg_device_unlock();
            *declined = 1;
            return SB_OK;
        }
    }
    const int64_t cap_want = jb->radius_mode ? KN_GPU_CAP_RADIUS : KN_GPU_CAP_K;
    const int32_t cap = (int32_t)(n < cap_want ? n : cap_want);
    const int64_t npan = (n + KN_PANEL - 1) / KN_PANEL;
    kn_gbufs gb = g_kn_ws[kind];
    const int self = jb->q == k->x || (nq == n && !memcmp(jb->q, k->x, sizeof(float) * (size_t)n * (size_t)d));
    float *qs = sb_malloc(sizeof(float) * (size_t)qb * (size_t)d), *qn = sb_malloc(sizeof(float) * (size_t)qb);
    double *qnorm = sb_malloc(sizeof(double) * (size_t)qb);
    float *keys = sb_malloc(sizeof(float) * (size_t)(qb * nch * (kq > 0 ? kq : 1)));
    int32_t *cnt = sb_malloc(sizeof(int32_t) * (size_t)qb);
    int64_t *off = sb_malloc(sizeof(int64_t) * (size_t)(qb + 1)), *over = sb_malloc(sizeof(int64_t) * (size_t)(nq + 1));
    int64_t *cj = NULL;
    float *clo = NULL;
    int64_t nover = 0;
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    const char *te = getenv("SAMEBITS_KNN_TIMING");
    const int timing = te && !strcmp(te, "1");
    double ph[6] = {0}, t0 = kn_now(); /* upload, prep, device, readback, finish, host screen */
    if (!qs || !qn || !qnorm || !keys || !cnt || !off || !over) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "nearest neighbors: out of memory for the device screen");
        goto done;
    }
    if ((st = sb_device_ensure(dev, &gb.x, 4 * (size_t)n * (size_t)d, "neighbors rows")) != SB_OK ||
        (st = sb_device_ensure(dev, &gb.xp, 4 * (size_t)npan * KN_PANEL * (size_t)d, "neighbors panels")) != SB_OK ||
        (st = sb_device_ensure(dev, &gb.xn, 4 * (size_t)npan * KN_PANEL, "neighbors norms")) != SB_OK ||
        (st = sb_device_ensure(dev, &gb.q, 4 * (size_t)qb * (size_t)d, "neighbors queries")) != SB_OK ||
        (st = sb_device_ensure(dev, &gb.qn, 4 * (size_t)qb, "neighbors query norms")) != SB_OK ||
        (st = sb_device_ensure(dev, &gb.p, 4 * (size_t)qb * (size_t)rc, "neighbors products")) != SB_OK ||
        (st = sb_device_ensure(dev, &gb.keys, 4 * (size_t)(qb * nch * (kq > 0 ? kq : 1)), "neighbors keys")) != SB_OK ||
        (st = sb_device_ensure(dev, &gb.cnt, 4 * (size_t)qb, "neighbors counts")) != SB_OK ||
        (st = sb_device_ensure(dev, &gb.cj, 8 * (size_t)qb * (size_t)cap, "neighbors candidates")) != SB_OK ||
        (st = sb_device_ensure(dev, &gb.clo, 4 * (size_t)qb * (size_t)cap, "neighbors bounds")) != SB_OK ||
        (st = sb_device_ensure(dev, &gb.off, 8 * (size_t)(qb + 1), "neighbors offsets")) != SB_OK)
        goto done;
    { /* the model's own screening panels and norms (sb_knn_prepare's), unpacked to rows on the device */
        const int32_t w = KN_PANEL;
        const int64_t cells = n * d;
        if ((st = sb_device_write(dev, &gb.xp, 0, k->xs, 4 * (size_t)npan * KN_PANEL * (size_t)d, "neighbors panels")) != SB_OK ||
            (st = sb_device_write(dev, &gb.xn, 0, k->xsn, 4 * (size_t)npan * KN_PANEL, "neighbors norms")) != SB_OK ||
            (st = SB_LAUNCH(dev, SB_KL_kn_unpanel, (cells + wg - 1) / wg, 1, 0, SB_ARG(gb.xp.h), SB_ARG(n), SB_ARG(d),
                            SB_ARG(w), SB_ARG(gb.x.h))) != SB_OK)
            goto done;
        if (timing && (st = sb_device_finish(dev)) != SB_OK) goto done;
        ph[0] += kn_now() - t0;
    }
    for (int64_t b = 0; b < nq && st == SB_OK; b += qb) {
        const int64_t nb = nq - b < qb ? nq - b : qb;
        double t1 = kn_now();
        /* the queries: the rows on the device (self), or this block packed as the rows are */
        const sb_dbuf *qbuf = self ? &gb.x : &gb.q, *qnbuf = self ? &gb.xn : &gb.qn;
        const int64_t qoff = self ? b : 0;
        if (self) {
            if (k->metric == SB_KNN_COSINE) memcpy(qnorm, k->xnorm + b, sizeof(double) * (size_t)nb);
        } else {
            prep_job pj = {(sb_knn *)k, d, jb->q + b * d, nb, qs, qn, k->mu, qnorm, k->metric, 1};
            sb_parallel_for(nb, prep_task, &pj);
        }
        ph[1] += kn_now() - t1, t1 = kn_now();
        memset(cnt, 0, sizeof(int32_t) * (size_t)nb);
        if ((!self && (st = sb_device_write(dev, &gb.q, 0, qs, 4 * (size_t)nb * (size_t)d, "neighbors queries")) != SB_OK) ||
            (!self && (st = sb_device_write(dev, &gb.qn, 0, qn, 4 * (size_t)nb, "neighbors query norms")) != SB_OK) ||
            (st = sb_device_write(dev, &gb.cnt, 0, cnt, 4 * (size_t)nb, "neighbors counts")) != SB_OK)
            break;
        for (int32_t ch = 0; ch < nch && st == SB_OK; ch++) {
            const int64_t r0 = (int64_t)ch * rc, nr = n - r0 < rc ? n - r0 : rc;
            /* the products: a vendor's float32 product where the backend has one, else the portable kernel */
            st = sb_device_sgemm_screen(dev, nb, nr, d, qbuf, 4 * (size_t)qoff * (size_t)d, d, &gb.x,
                                        4 * (size_t)r0 * (size_t)d, d, &gb.p, 0, rc);
            if (st == SB_ERR_NOT_FOUND)
                st = SB_LAUNCH(dev, SB_KL_kn_dots, (nr + tr - 1) / tr, (nb + tq - 1) / tq, 0, SB_ARG(qbuf->h), SB_ARG(qoff),
                               SB_ARG(nb), SB_ARG(gb.x.h), SB_ARG(r0), SB_ARG(nr), SB_ARG(d), SB_ARG(gb.p.h), SB_ARG(rc));
            if (st == SB_OK)
                st = SB_LAUNCH(dev, SB_KL_kn_select, nb, 1, 4 * (size_t)m, SB_ARG(gb.p.h), SB_ARG(rc), SB_ARG(nr),
                               SB_ARG(r0), SB_ARG(qnbuf->h), SB_ARG(qoff), SB_ARG(gb.xn.h), SB_ARG(jb->C), SB_ARG(jb->A),
                               SB_ARG(jb->slack), SB_ARG(kq), SB_ARG(jb->radius_mode), SB_ARG(jb->r_screen),
                               SB_ARG(gb.keys.h), SB_ARG(nch), SB_ARG(ch), SB_ARG(m), SB_ARG(gb.cnt.h), SB_ARG(gb.cj.h),
                               SB_ARG(gb.clo.h), SB_ARG(cap));
        }
        if (st != SB_OK || (st = sb_device_read(dev, &gb.cnt, 0, cnt, 4 * (size_t)nb, "neighbors counts")) != SB_OK) break;
        ph[2] += kn_now() - t1, t1 = kn_now();
        off[0] = 0;
        for (int64_t i = 0; i < nb; i++) off[i + 1] = off[i] + (cnt[i] < cap ? cnt[i] : cap);
        const int64_t tot = off[nb];
        sb_free(cj), sb_free(clo);
        cj = sb_malloc(sizeof(int64_t) * (size_t)(tot > 0 ? tot : 1)), clo = sb_malloc(sizeof(float) * (size_t)(tot > 0 ? tot : 1));
        if (!cj || !clo) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "nearest neighbors: out of memory for %lld candidates", (long long)tot);
            break;
        }
        if ((st = sb_device_ensure(dev, &gb.dj, 8 * (size_t)(tot > 0 ? tot : 1), "neighbors candidates")) != SB_OK ||
            (st = sb_device_ensure(dev, &gb.dlo, 4 * (size_t)(tot > 0 ? tot : 1), "neighbors bounds")) != SB_OK ||
            (st = sb_device_write(dev, &gb.off, 0, off, 8 * (size_t)(nb + 1), "neighbors offsets")) != SB_OK ||
            (st = SB_LAUNCH(dev, SB_KL_kn_compact, nb, 1, 0, SB_ARG(gb.cnt.h), SB_ARG(gb.off.h), SB_ARG(cap),
                            SB_ARG(gb.cj.h), SB_ARG(gb.clo.h), SB_ARG(gb.dj.h), SB_ARG(gb.dlo.h))) != SB_OK ||
            (tot > 0 && (st = sb_device_read(dev, &gb.dj, 0, cj, 8 * (size_t)tot, "neighbors candidates")) != SB_OK) ||
            (tot > 0 && (st = sb_device_read(dev, &gb.dlo, 0, clo, 4 * (size_t)tot, "neighbors bounds")) != SB_OK) ||
            (kq > 0 && (st = sb_device_read(dev, &gb.keys, 0, keys, 4 * (size_t)(nb * nch * kq), "neighbors keys")) != SB_OK))
            break;
        ph[3] += kn_now() - t1, t1 = kn_now();
        kng_job g = {jb, b, off, cj, clo, keys, cnt, qnorm, nch, kq, cap, over, nover, &mu};
        sb_parallel_for(nb, kng_task, &g);
        nover = g.nover;
        ph[4] += kn_now() - t1;
    }
done:
    if (st == SB_OK) g_kn_ws[kind] = gb;
    else { /* a failed call leaves no buffers behind */
        kn_gbufs_release(dev, &gb);
        memset(&g_kn_ws[kind], 0, sizeof g_kn_ws[kind]);
    }
    sb_linalg_device_unlock();
    const double t5 = kn_now();
    if (st == SB_OK && nover > 0) { /* the overflowed queries, screened on the host */
        qsort(over, (size_t)nover, sizeof(int64_t), pair_i64_cmp);
        float *oq = sb_malloc(sizeof(float) * (size_t)nover * (size_t)d);
        if (!oq) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "nearest neighbors: out of memory");
        else {
            for (int64_t i = 0; i < nover; i++) memcpy(oq + i * d, jb->q + over[i] * d, sizeof(float) * (size_t)d);
            kn_job sub = *jb;
            sub.q = oq, sub.nq = nover, sub.qmap = over;
            sb_parallel_for(sb_chunk_count(nover, KN_QB), query_task, &sub);
            if (sub.failed) jb->failed = 1;
            sb_free(oq);
        }
    }
    ph[5] = kn_now() - t5;
    if (timing)
        fprintf(stderr, "knn device: %lld queries x %lld rows, blocks of %lld, %d chunks, cap %d: upload %.4f s, "
                "query prep %.4f s, device %.4f s, readback %.4f s, host finish %.4f s, host screen of %lld "
                "overflowed %.4f s\n", (long long)nq, (long long)n, (long long)qb, (int)nch, (int)cap, ph[0], ph[1],
                ph[2], ph[3], ph[4], (long long)nover, ph[5]);
    sb_free(qs), sb_free(qn), sb_free(qnorm), sb_free(keys), sb_free(cnt), sb_free(off);
    sb_free(over), sb_free(cj), sb_free(clo);
    return st;
}

/* ---- radius queries in few dimensions: a k-d tree ----
 * For Euclidean radius queries with few features, a k-d tree (J. L. Bentley,
 * "Multidimensional binary search trees used for associative searching",
 * CACM 18(9), 1975) finds the same set as the screen: a node is skipped only
 * when the squared distance from the query to its box, computed in double,
 * exceeds the radius squared by more than its own rounding (a factor 1 +
 * 2^-30), so every row it skips has D > radius^2, and every row it visits is
 * kept by the same test, D <= radius^2. The set, and its order (by index, or
 * by (D, index)), is the brute force's, whatever the tree's shape. */
#define KN_TREE_MAX_D 16
#define KN_TREE_LEAF 32
#define KN_TREE_MIN_N 256

typedef struct kn_node {
    int64_t b, e;       /* rows perm[b..e) */
    int32_t left, right; /* children, -1 for a leaf */
} kn_node;

typedef struct kn_tree {
    int64_t *perm;
    kn_node *node;
    float *lo, *hi;     /* nnode x d boxes */
    int32_t nnode, cap, d;
} kn_tree;

static int32_t g_tree_for_tests = -1; /* -1 the library's choice, 0 never, 1 whenever Euclidean */
void sb_knn_tree_for_tests(int32_t mode) { g_tree_for_tests = mode; }

/* (x[a * d + f], a) < (x[b * d + f], b): a total order, so the split is a function of the rows. */
static inline int kt_less(const float *x, int32_t d, int32_t f, int64_t a, int64_t b) {
    const float va = x[a * d + f], vb = x[b * d + f];
    return va < vb || (va == vb && a < b);
}

/* perm[b..e) rearranged so that perm[k] is the k-th least by kt_less, the
 * lesser before it and the greater after (Hoare's selection, pivot the
 * median of the first, middle and last). */
static void kt_select(const float *x, int32_t d, int32_t f, int64_t *perm, int64_t b, int64_t e, int64_t k) {
    int64_t lo = b, hi = e - 1;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        int64_t a = perm[lo], m = perm[mid], c = perm[hi], pv;
        if (kt_less(x, d, f, a, m)) pv = kt_less(x, d, f, m, c) ? m : kt_less(x, d, f, a, c) ? c : a;
        else pv = kt_less(x, d, f, a, c) ? a : kt_less(x, d, f, m, c) ? c : m;
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (kt_less(x, d, f, perm[i], pv)) i++;
            while (kt_less(x, d, f, pv, perm[j])) j--;
            if (i <= j) {
                const int64_t t = perm[i];
                perm[i] = perm[j], perm[j] = t;
                i++, j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return;
    }
}

static int32_t kt_build(kn_tree *t, const float *x, int64_t b, int64_t e) {
    const int32_t d = t->d;
    if (t->nnode == t->cap) return -2;
    const int32_t id = t->nnode++;
    float *lo = t->lo + (int64_t)id * d, *hi = t->hi + (int64_t)id * d;
    for (int32_t f = 0; f < d; f++) lo[f] = hi[f] = x[t->perm[b] * d + f];
    for (int64_t i = b + 1; i < e; i++)
        for (int32_t f = 0; f < d; f++) {
            const float v = x[t->perm[i] * d + f];
            if (v < lo[f]) lo[f] = v;
            if (v > hi[f]) hi[f] = v;
        }
    t->node[id].b = b, t->node[id].e = e, t->node[id].left = t->node[id].right = -1;
    if (e - b <= KN_TREE_LEAF) return id;
    int32_t split = 0; /* the widest feature, ties to the lower */
    for (int32_t f = 1; f < d; f++)
        if ((double)hi[f] - (double)lo[f] > (double)hi[split] - (double)lo[split]) split = f;
    if (!((double)hi[split] - (double)lo[split] > 0.0)) return id; /* identical rows: one leaf */
    const int64_t mid = b + (e - b) / 2;
    kt_select(x, d, split, t->perm, b, e, mid);
    const int32_t l = kt_build(t, x, b, mid), r = l < -1 ? -2 : kt_build(t, x, mid, e);
    if (l < -1 || r < -1) return -2;
    t->node[id].left = l, t->node[id].right = r;
    return id;
}

static void kt_free(kn_tree *t) {
    sb_free(t->perm), sb_free(t->node), sb_free(t->lo), sb_free(t->hi);
    memset(t, 0, sizeof *t);
}

static sb_status kt_make(const sb_knn *k, int32_t d, kn_tree *t) {
    memset(t, 0, sizeof *t);
    t->d = d;
    t->cap = (int32_t)(4 * ((k->n + KN_TREE_LEAF - 1) / KN_TREE_LEAF) + 4);
    t->perm = sb_malloc(sizeof(int64_t) * (size_t)k->n);
    t->node = sb_malloc(sizeof(kn_node) * (size_t)t->cap);
    t->lo = sb_malloc(sizeof(float) * (size_t)t->cap * (size_t)d);
    t->hi = sb_malloc(sizeof(float) * (size_t)t->cap * (size_t)d);
    if (!t->perm || !t->node || !t->lo || !t->hi) {
        kt_free(t);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "nearest neighbors: out of memory for the tree of %lld rows", (long long)k->n);
    }
    for (int64_t i = 0; i < k->n; i++) t->perm[i] = i;
    if (kt_build(t, k->x, 0, k->n) < 0) {
        kt_free(t);
        return sb_fail(SB_ERR_INTERNAL, "nearest neighbors: the tree outgrew its nodes");
    }
    return SB_OK;
}

typedef struct kt_job {
    kn_job *jb;
    const kn_tree *t;
} kt_job;

/* Queries of block task: every row within the radius, through the tree. */
static void kt_task(void *ctx, int64_t task) {
    const kt_job *kj = ctx;
    kn_job *jb = kj->jb;
    const kn_tree *t = kj->t;
    const sb_knn *k = jb->k;
    const int32_t d = jb->d;
    const double cut = jb->r_exact + jb->r_exact * 0x1p-30;
    int64_t b, e;
    sb_chunk_range(jb->nq, KN_QB, task, &b, &e);
    int32_t *stack = sb_malloc(sizeof(int32_t) * (size_t)(t->nnode + 1));
    if (!stack) {
        jb->failed = 1;
        return;
    }
    for (int64_t i = b; i < e && !jb->failed; i++) {
        const float *xq = jb->q + i * d;
        int64_t np = 0, cap = 16;
        kn_pair *p = sb_malloc(sizeof(kn_pair) * (size_t)cap);
        if (!p) {
            jb->failed = 1;
            break;
        }
        int32_t top = 0;
        stack[top++] = 0;
        while (top > 0) {
            const int32_t id = stack[--top];
            const float *lo = t->lo + (int64_t)id * d, *hi = t->hi + (int64_t)id * d;
            double s = 0.0;
            for (int32_t f = 0; f < d; f++) {
                const double v = (double)xq[f];
                const double g = v < (double)lo[f] ? (double)lo[f] - v : v > (double)hi[f] ? v - (double)hi[f] : 0.0;
                s += g * g;
            }
            if (s > cut) continue;
            const kn_node *nd = &t->node[id];
            if (nd->left >= 0) {
                stack[top++] = nd->right;
                stack[top++] = nd->left;
                continue;
            }
            for (int64_t c = nd->b; c < nd->e; c++) {
                const int64_t j = t->perm[c];
                const double D = kn_sqdist(xq, k->x + j * d, d);
                if (!(D <= jb->r_exact) || (jb->exclude_self && j == i)) continue;
                if (np == cap) {
                    kn_pair *g = sb_realloc(p, sizeof(kn_pair) * (size_t)(cap * 2));
                    if (!g) {
                        jb->failed = 1;
                        break;
                    }
                    p = g, cap *= 2;
                }
                p[np].dist = D, p[np].j = j, np++;
            }
        }
        qsort(p, (size_t)np, sizeof *p, jb->sort ? pair_cmp : pair_idx_cmp);
        jb->cnt[i] = np;
        jb->res[i] = p;
    }
    sb_free(stack);
}

/* Finite values and the model's feature count, before any long work. */
static sb_status kn_check_queries(const sb_model *m, const sb_table *q) {
    if (q->ncols != m->num_features)
        return sb_fail(SB_ERR_INVALID_INPUT, "feature-count mismatch: the model has %d features, the data %d",
                       (int)m->num_features, (int)q->ncols);
    for (int64_t i = 0; i < q->nrows * q->ncols; i++)
        if (!isfinite(q->x[i]))
            return sb_fail(SB_ERR_INVALID_INPUT, "row %lld, feature %lld: %s; nearest neighbors take finite values only",
                           (long long)(i / q->ncols), (long long)(i % q->ncols), isnan(q->x[i]) ? "missing (NaN)" : "infinite");
    return SB_OK;
}

sb_status sb_knn_query(const sb_model *m, const sb_table *q, int32_t kk, double radius, int32_t sort,
                       sb_device_kind kind, int64_t *nq_out, int64_t **offsets, int64_t **idx, float **dist) {
    *offsets = NULL, *idx = NULL, *dist = NULL, *nq_out = 0;
    const sb_knn *k = m->knn;
    if (!k || (!k->xs && k->metric != SB_KNN_MANHATTAN)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "not a nearest-neighbors model");
    sb_status st;
    if (k->metric == SB_KNN_MANHATTAN && (kind == SB_DEVICE_CUDA || kind == SB_DEVICE_OPENCL))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "metric=manhattan runs on the host: the device screen computes "
                       "Euclidean and cosine products only (device=cpu)");
    if (q && (st = kn_check_queries(m, q)) != SB_OK) return st;
    kn_job jb;
    memset(&jb, 0, sizeof jb);
    jb.k = k, jb.d = m->num_features, jb.sort = sort;
    jb.radius_mode = radius >= 0.0;
    jb.exclude_self = q == NULL;
    jb.q = q ? q->x : k->x;
    jb.nq = q ? q->nrows : k->n;
    if (!jb.radius_mode) {
        if (kk <= 0) kk = k->n_neighbors;
        if (kk > KN_MAX_K) return sb_fail(SB_ERR_LIMIT, "n_neighbors=%d exceeds the limit %d", (int)kk, KN_MAX_K);
        if ((int64_t)kk + jb.exclude_self > k->n)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "n_neighbors=%d needs at most %lld training rows%s; the model has %lld",
                           (int)kk, (long long)(k->n - jb.exclude_self),
                           jb.exclude_self ? " (each query row leaves itself out)" : "", (long long)k->n);
        jb.kk = kk;
    } else if (!isfinite(radius)) {
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "radius=%g must be finite", radius);
    } else {
        jb.r_exact = k->metric == SB_KNN_EUCLIDEAN ? radius * radius : radius;
        jb.r_screen = (float)(k->metric == SB_KNN_COSINE ? 2.0 * radius : radius * radius);
        if (!isfinite(jb.r_screen)) jb.r_screen = INFINITY;
        jb.r_screen = nextafterf(jb.r_screen, INFINITY);
    }
    kn_bound(jb.d, &jb.C, &jb.A);
    jb.slack = (float)(((double)jb.d + 8.0) * 0x1p-48);
    jb.micro = kn_micro();
    jb.micro2 = kn_micro2(jb.micro);
    const int64_t nq = jb.nq;
    jb.cnt = sb_calloc((size_t)(nq > 0 ? nq : 1), sizeof(int64_t));
    int64_t *off = sb_malloc(sizeof(int64_t) * (size_t)(nq + 1));
    if (jb.radius_mode) jb.res = sb_calloc((size_t)(nq > 0 ? nq : 1), sizeof(kn_pair *));
    else {
        jb.kidx = sb_malloc(sizeof(int64_t) * (size_t)(nq * jb.kk > 0 ? nq * jb.kk : 1));
        jb.kdist = sb_malloc(sizeof(float) * (size_t)(nq * jb.kk > 0 ? nq * jb.kk : 1));
    }
    if (!jb.cnt || !off || (jb.radius_mode ? !jb.res : (!jb.kidx || !jb.kdist))) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "nearest neighbors: out of memory for %lld queries", (long long)nq);
    } else {
        const int gpu = (kind == SB_DEVICE_CUDA || kind == SB_DEVICE_OPENCL) &&
                        (jb.radius_mode || jb.kk + jb.exclude_self <= KN_GPU_KMAX);
        const int use_tree = !gpu && jb.radius_mode && k->metric == SB_KNN_EUCLIDEAN &&
                             (g_tree_for_tests >= 0 ? g_tree_for_tests
                                                    : jb.d <= KN_TREE_MAX_D && k->n >= KN_TREE_MIN_N);
        kn_tree tree;
        int declined = 0;
        if (gpu) st = kn_query_gpu(&jb, kind, &declined);
        if (gpu && !declined) {
        } else if (k->metric == SB_KNN_MANHATTAN) {
            sb_parallel_for(sb_chunk_count(nq, KN_QB), l1_task, &jb);
        } else if (use_tree && (st = kt_make(k, jb.d, &tree)) == SB_OK) {
            kt_job kj = {&jb, &tree};
            sb_parallel_for(sb_chunk_count(nq, KN_QB), kt_task, &kj);
            kt_free(&tree);
        } else if (!use_tree) {
            sb_parallel_for(sb_chunk_count(nq, KN_QB), query_task, &jb);
        }
        if (st == SB_OK) st = jb.failed ? sb_fail(SB_ERR_OUT_OF_MEMORY, "nearest neighbors: out of memory for the candidates") : SB_OK;
    }
    if (st == SB_OK) {
        off[0] = 0;
        for (int64_t i = 0; i < nq; i++) off[i + 1] = off[i] + jb.cnt[i];
        if (jb.radius_mode) {
            jb.kidx = sb_malloc(sizeof(int64_t) * (size_t)(off[nq] > 0 ? off[nq] : 1));
            jb.kdist = sb_malloc(sizeof(float) * (size_t)(off[nq] > 0 ? off[nq] : 1));
            if (!jb.kidx || !jb.kdist) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "nearest neighbors: out of memory for the results");
            for (int64_t i = 0; st == SB_OK && i < nq; i++)
                for (int64_t c = 0; c < jb.cnt[i]; c++) {
                    jb.kidx[off[i] + c] = jb.res[i][c].j;
                    jb.kdist[off[i] + c] = kn_report(k, jb.res[i][c].dist);
                }
        } else {
            for (int64_t i = 0; i < nq && st == SB_OK; i++)
                if (jb.cnt[i] != jb.kk) st = sb_fail(SB_ERR_INTERNAL, "nearest neighbors: query %lld found %lld of %d",
                                                     (long long)i, (long long)jb.cnt[i], (int)jb.kk);
        }
    }
    if (jb.res)
        for (int64_t i = 0; i < nq; i++) sb_free(jb.res[i]);
    sb_free(jb.res);
    sb_free(jb.cnt);
    if (st != SB_OK) {
        sb_free(off), sb_free(jb.kidx), sb_free(jb.kdist);
        return st;
    }
    *offsets = off, *idx = jb.kidx, *dist = jb.kdist, *nq_out = nq;
    return SB_OK;
}

/* ---- the fit ---- */

static sb_status kn_params_text(const kn_params *p, char **out) {
    char buf[256];
    const int n = snprintf(buf, sizeof buf, "metric=%s\nmodel=knn\nn_neighbors=%d\nradius=%.9g\ntask=%s\nweights=%s\n",
                           k_metric_names[p->metric], (int)p->k, (double)p->radius, k_task_names[p->task],
                           k_weight_names[p->weights]);
    if (n >= (int)sizeof buf) return sb_fail(SB_ERR_LIMIT, "nearest neighbors: the parameter text is too long");
    *out = sb_strdup(buf);
    return *out ? SB_OK : sb_fail(SB_ERR_OUT_OF_MEMORY, "nearest neighbors: out of memory");
}

sb_status sb_knn_self_query(const sb_table *t, int32_t metric, int32_t kk, double radius, int32_t sort,
                            sb_device_kind kind, int64_t **offsets, int64_t **idx, float **dist) {
    const int64_t n = t->nrows, d = t->ncols;
    int64_t nq = 0;
    sb_model *nm = NULL;
    sb_status st = sb_model_alloc(&nm);
    if (st != SB_OK) return st;
    nm->family = SB_FAMILY_KNN;
    nm->num_features = (int32_t)d;
    nm->num_class = 1;
    if (!(nm->knn = sb_knn_alloc(SB_KNN_NEIGHBORS, n, (int32_t)d)))
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "nearest neighbors: out of memory for %lld rows", (long long)n);
    if (st == SB_OK) {
        nm->knn->n_neighbors = kk > 0 ? kk : 1, nm->knn->metric = metric;
        if (radius >= 0.0) nm->knn->radius = (float)radius;
        memcpy(nm->knn->x, t->x, sizeof(float) * (size_t)(n * d));
        st = sb_knn_prepare(nm->knn, (int32_t)d);
    }
    if (st == SB_OK) st = sb_knn_query(nm, t, kk, radius, sort, kind, &nq, offsets, idx, dist);
    sb_model_free(nm);
    return st;
}

sb_status sb_knn_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out) {
    sb_clear_error();
    if (out) *out = NULL;
    if (!train || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_knn_fit: NULL argument");
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    kn_params p;
    sb_status st = kn_params_parse(params, &p);
    if (st != SB_OK) return st;
    const sb_table *t = &train->t;
    const int64_t n = t->nrows, d = t->ncols;
    if (p.task < 0) p.task = t->label ? SB_KNN_CLASSIFIER : SB_KNN_NEIGHBORS;
    if (n < 1 || d < 1) return sb_fail(SB_ERR_INVALID_INPUT, "nearest neighbors need at least one row and one feature");
    if (p.task != SB_KNN_NEIGHBORS && !t->label)
        return sb_fail(SB_ERR_INVALID_INPUT, "task=%s needs a label", k_task_names[p.task]);
    if (p.task != SB_KNN_NEIGHBORS && t->ntargets > 1)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "nearest neighbors take one target; this dataset has %d", (int)t->ntargets);
    if (p.task != SB_KNN_NEIGHBORS && p.k > n)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "n_neighbors=%d exceeds the %lld training rows", (int)p.k, (long long)n);
    if (t->weight) return sb_fail(SB_ERR_INVALID_ARGUMENT, "nearest neighbors take no sample weights");
    for (int64_t i = 0; i < n * d; i++)
        if (!isfinite(t->x[i]))
            return sb_fail(SB_ERR_INVALID_INPUT, "row %lld, feature %lld: %s; nearest neighbors take finite values only",
                           (long long)(i / d), (long long)(i % d), isnan(t->x[i]) ? "missing (NaN)" : "infinite");
    int32_t nclass = 0;
    for (int64_t i = 0; p.task != SB_KNN_NEIGHBORS && i < n; i++) {
        const float y = t->label[i];
        if (!isfinite(y)) return sb_fail(SB_ERR_INVALID_INPUT, "row %lld: the label is not finite", (long long)i);
        if (p.task == SB_KNN_CLASSIFIER) {
            if (!(y >= 0.0f && y < 10000.0f && y == floorf(y)))
                return sb_fail(SB_ERR_INVALID_INPUT,
                               "row %lld: label %g is not a class index 0..9999 (classification; task=regression "
                               "predicts values)", (long long)i, (double)y);
            if ((int32_t)y + 1 > nclass) nclass = (int32_t)y + 1;
        }
    }
    char *text = NULL;
    if ((st = kn_params_text(&p, &text)) != SB_OK) return st;
    sb_model *m = NULL;
    if ((st = sb_model_alloc(&m)) != SB_OK) {
        sb_free(text);
        return st;
    }
    m->family = SB_FAMILY_KNN;
    m->objective = SB_OBJ_REGRESSION;
    m->num_features = (int32_t)d;
    m->num_class = p.task == SB_KNN_CLASSIFIER ? nclass : 1;
    m->numeric_mode = p.numeric_mode;
    m->params = text;
    sb_knn *k = m->knn = sb_knn_alloc(p.task, n, (int32_t)d);
    if (!k) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "nearest neighbors: out of memory for %lld x %lld", (long long)n, (long long)d);
    if (st == SB_OK) {
        k->n_neighbors = p.k, k->metric = p.metric, k->weights = p.weights, k->nclass = nclass, k->radius = p.radius;
        memcpy(k->x, t->x, sizeof(float) * (size_t)(n * d));
        if (k->y) memcpy(k->y, t->label, sizeof(float) * (size_t)n);
        st = sb_knn_prepare(k, (int32_t)d);
    }
    if (st == SB_OK) st = sb_model_copy_names(m, t->names, d, "nearest neighbors");
    if (st == SB_OK && card) {
        char dims[96];
        snprintf(dims, sizeof dims, "%lld x %lld, %s, %s", (long long)n, (long long)d, k_task_names[p.task],
                 k_metric_names[p.metric]);
        st = sb_card_set_meta(card, "knn.data", dims);
        if (st == SB_OK) st = sb_model_record_bytes(card, m, "knn.model_bytes");
    }
    if (st != SB_OK) {
        sb_model_free(m);
        return st;
    }
    *out = m;
    return SB_OK;
}

/* ---- prediction and attributes ---- */

sb_status sb_knn_predict(const sb_model *m, const sb_table *t, int32_t kind, const char *device, float *out, size_t cap,
                         size_t *needed) {
    const sb_knn *k = m->knn;
    if (k->task == SB_KNN_NEIGHBORS)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "an unsupervised nearest-neighbors model does not predict: kneighbors "
                       "and radius_neighbors query it");
    if (kind == SB_PREDICT_PROBA && k->task != SB_KNN_CLASSIFIER)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "a nearest-neighbors regressor has no probabilities");
    if (kind != SB_PREDICT_VALUE && kind != SB_PREDICT_PROBA)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "nearest neighbors predict values%s only",
                       k->task == SB_KNN_CLASSIFIER ? " and probabilities" : "");
    const int64_t n = t->nrows, per = kind == SB_PREDICT_PROBA ? k->nclass : 1;
    const size_t want = (size_t)(n * per);
    sb_status st = sb_out_size(out, cap, needed, want);
    if (st != SB_OK || !out) return st;
    sb_device_kind dk = SB_DEVICE_CPU;
    st = sb_device_parse(device, &dk);
    if (st == SB_OK) st = kn_check_queries(m, t);
    if (st != SB_OK) return st;
    int64_t nq, *off, *idx;
    float *dist;
    if ((st = sb_knn_query(m, t, k->n_neighbors, -1.0, 1, dk, &nq, &off, &idx, &dist)) != SB_OK) return st;
    double *acc = sb_malloc(sizeof(double) * (size_t)(k->nclass > 0 ? k->nclass : 1));
    if (!acc) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "nearest neighbors: out of memory");
    const int32_t kk = k->n_neighbors;
    for (int64_t i = 0; st == SB_OK && i < n; i++) {
        const int64_t *ni = idx + i * kk;
        const float *di = dist + i * kk;
        int zero = 0; /* scikit-learn: a query at distance 0 of some rows weighs those 1, the others 0 */
        for (int32_t c = 0; c < kk && k->weights == 1; c++) zero |= di[c] == 0.0f;
        if (k->task == SB_KNN_REGRESSOR) {
            double s = 0.0, w = 0.0;
            for (int32_t c = 0; c < kk; c++) {
                const double wc = k->weights == 0 ? 1.0 : zero ? (di[c] == 0.0f ? 1.0 : 0.0) : 1.0 / (double)di[c];
                s += wc * (double)k->y[ni[c]];
                w += wc;
            }
            out[i] = (float)(s / w);
            continue;
        }
        for (int32_t c = 0; c < k->nclass; c++) acc[c] = 0.0;
        double w = 0.0;
        for (int32_t c = 0; c < kk; c++) {
            const double wc = k->weights == 0 ? 1.0 : zero ? (di[c] == 0.0f ? 1.0 : 0.0) : 1.0 / (double)di[c];
            acc[(int32_t)k->y[ni[c]]] += wc;
            w += wc;
        }
        if (kind == SB_PREDICT_PROBA) {
            for (int32_t c = 0; c < k->nclass; c++) out[i * k->nclass + c] = (float)(acc[c] / w);
        } else {
            int32_t best = 0; /* the most votes, ties to the lower class */
            for (int32_t c = 1; c < k->nclass; c++)
                if (acc[c] > acc[best]) best = c;
            out[i] = (float)best;
        }
    }
    sb_free(acc);
    sb_free(off), sb_free(idx), sb_free(dist);
    return st;
}

sb_status sb_knn_int(const sb_model *m, const char *name, int64_t *out) {
    const sb_knn *k = m->knn;
    if (!strcmp(name, "n_neighbors")) *out = k->n_neighbors;
    else if (!strcmp(name, "n_samples_fit")) *out = k->n;
    else if (!strcmp(name, "n_classes")) *out = k->nclass;
    else if (!strcmp(name, "task")) *out = k->task;
    else if (!strcmp(name, "metric")) *out = k->metric;
    else if (!strcmp(name, "weights")) *out = k->weights;
    else return sb_fail(SB_ERR_NOT_FOUND, "a nearest-neighbors model has no integer '%s'", name);
    return SB_OK;
}

/* ---- the public queries ---- */

struct sb_neighbors {
    int64_t nrows;
    int64_t *offsets, *idx;
    float *dist;
};

static sb_status kn_api_query(const sb_model *m, const sb_dataset *queries, int32_t k, double radius, int32_t sort,
                              const char *device, sb_neighbors **out, const char *who) {
    sb_clear_error();
    if (out) *out = NULL;
    if (!m || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: NULL argument", who);
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    if (m->family != SB_FAMILY_KNN || !m->knn)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: a %s model has no neighbors (a knn model does)", who,
                       sb_family_name((sb_family)m->family));
    sb_device_kind dk = SB_DEVICE_CPU;
    sb_status st = sb_device_parse(device, &dk);
    if (st != SB_OK) return st;
    if (k < 0) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: n_neighbors=%d must be positive", who, (int)k);
    sb_neighbors *nb = sb_calloc(1, sizeof *nb);
    if (!nb) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    st = sb_knn_query(m, queries ? &queries->t : NULL, k, radius, sort, dk, &nb->nrows, &nb->offsets, &nb->idx, &nb->dist);
    if (st != SB_OK) {
        sb_free(nb);
        return st;
    }
    *out = nb;
    return SB_OK;
}

sb_status sb_model_kneighbors(const sb_model *m, const sb_dataset *queries, int32_t k, const char *device,
                              sb_neighbors **out) {
    return kn_api_query(m, queries, k, -1.0, 1, device, out, "sb_model_kneighbors");
}

sb_status sb_model_radius_neighbors(const sb_model *m, const sb_dataset *queries, double radius, int32_t sort,
                                    const char *device, sb_neighbors **out) {
    if (m && m->knn && radius < 0.0) radius = m->knn->radius;
    if (!(radius >= 0.0) && m && m->knn) {
        sb_clear_error();
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_radius_neighbors: radius=%g", radius);
    }
    return kn_api_query(m, queries, 0, radius, sort, device, out, "sb_model_radius_neighbors");
}

sb_status sb_neighbors_shape(const sb_neighbors *nb, int64_t *nrows, int64_t *total) {
    sb_clear_error();
    if (!nb) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_neighbors_shape: NULL argument");
    if (nrows) *nrows = nb->nrows;
    if (total) *total = nb->offsets[nb->nrows];
    return SB_OK;
}

sb_status sb_neighbors_copy(const sb_neighbors *nb, int64_t *offsets, int64_t *indices, float *distances) {
    sb_clear_error();
    if (!nb) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_neighbors_copy: NULL argument");
    const size_t total = (size_t)nb->offsets[nb->nrows];
    if (offsets) memcpy(offsets, nb->offsets, sizeof(int64_t) * (size_t)(nb->nrows + 1));
    if (indices) memcpy(indices, nb->idx, sizeof(int64_t) * total);
    if (distances) memcpy(distances, nb->dist, sizeof(float) * total);
    return SB_OK;
}

void sb_neighbors_free(sb_neighbors *nb) {
    if (!nb) return;
    sb_free(nb->offsets);
    sb_free(nb->idx);
    sb_free(nb->dist);
    sb_free(nb);
}
