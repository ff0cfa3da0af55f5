/*
 * kde.c: kernel density estimation with scikit-learn's KernelDensity names and
 * semantics (docs/density.md): kernels gaussian, tophat, epanechnikov,
 * exponential, linear and cosine with their normalizations, the Euclidean
 * metric, a bandwidth given or by Scott's or Silverman's rule, sample weights,
 * score_samples (log density), score (their sum) and sample (gaussian and
 * tophat, from the counter-based rng).
 *
 * Exact sums, no tree: scikit-learn's default atol = rtol = 0 asks for the
 * exact sum up to rounding, and its tree's pruning order is not a fixed one,
 * so the density here is the sum over every training row, in training index
 * order, in double, for each query on its own:
 *  - D_i = sum_f (q_f - x_if)^2 in double, sb_knn_sqdist's value (the
 *    nearest neighbors family's exact distance: four lanes, fixed order;
 *    differences of float32 values are exact in double; kd_sqdist2 computes
 *    it two rows at a time). Every pair is needed, so the
 *    GEMM-shaped screen of the neighbors family buys nothing here, and the
 *    expanded |q|^2 + |x|^2 - 2 q.x would cancel exactly where a kernel is
 *    largest (near pairs);
 *  - gaussian and exponential are summed as a log-sum-exp with the largest
 *    term taken out first: Dmin = min_i D_i over the rows of positive weight
 *    (a minimum is exact and order-free), then s = sum_i w_i e^-(t_i - tmin)
 *    with every factor <= 1 and the nearest row's exactly 1, so s >= its
 *    weight: no underflow to 0 and no overflow whatever the distance, and a
 *    query far from every row gets its finite log density (as scikit-learn's
 *    log-space sum does); the exponent is rounded to float32 once and its
 *    exponential is the profile's correctly rounded sb_expf;
 *  - the compact kernels (tophat, epanechnikov, linear, cosine) add the rows
 *    with r_i = sqrt(D_i) < h; a query with none gets -inf, as scikit-learn;
 *  - log p = log s (- tmin) - log(sum of weights) - log(normalization), the
 *    logs by kd_log (the profile's sb_logf of the significand plus the
 *    exponent times ln 2), rounded to float32 once.
 * Queries are split in fixed blocks of KD_QB rows over the thread pool; a
 * query's value depends on its own row and the model alone, so no thread
 * count, block or batching can change a bit.
 * On a GPU (device=cuda|opencl) the sums s and exponents tmin come from the
 * entry kernel kd_sums (src/kernels/kde.h: kd_one's double operations in the
 * integer binary64 of src/kernels/f64.h, in the same order), and kd_finish
 * turns them into log densities here, as for the host's own sums.
 */
#include "kde.h"
#include "../../core/rng.h"
#include "../../device/device.h"
#include "../../linalg/linalg.h"
#include "../../math/sb_math.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KD_QB 64 /* queries of a task */
#define KD_HALF_PI 0x1.921fb54442d18p+0
#define KD_TWO_PI 0x1.921fb54442d18p+2
#define KD_LN2 0x1.62e42fefa39efp-1
#define KD_PURPOSE_ROW 0x4b444531u    /* "KDE1": which training row a draw starts from */
#define KD_PURPOSE_NORMAL 0x4b444532u /* "KDE2": the standard normals (Box-Muller pairs) */
#define KD_PURPOSE_RADIUS 0x4b444533u /* "KDE3": tophat's radius */

static const char *const k_kernel_names[SB_KDE_KERNEL_COUNT_] = {"gaussian", "tophat", "epanechnikov",
                                                                 "exponential", "linear", "cosine"};

/* ---- the arithmetic: logs of doubles, cos and sin, the normalizations ---- */

/* A positive value m 2^e kept as a significand in [1, 2) and an exponent, so
 * that products of many factors (h^d, the volume of a ball in d dimensions)
 * neither overflow nor underflow before their one log. */
typedef struct kd_num {
    double m;
    int64_t e;
} kd_num;

/* p->m (positive, finite) moved into [1, 2), its power of two into p->e: exact. */
static void kd_normalize(kd_num *p) {
    uint64_t b;
    memcpy(&b, &p->m, 8);
    int ex = (int)((b >> 52) & 0x7ffu);
    if (ex == 0) { /* subnormal: scale up first (exact) */
        p->m *= 0x1p64;
        p->e -= 64;
        memcpy(&b, &p->m, 8);
        ex = (int)((b >> 52) & 0x7ffu);
    }
    p->e += ex - 1023;
    b = (b & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull;
    memcpy(&p->m, &b, 8);
}

static void kd_mul(kd_num *p, double f) {
    p->m *= f;
    kd_normalize(p);
}

/* log(m 2^e) for m > 0 finite: e' ln 2 + log m' with m' in [sqrt(1/2), sqrt(2))
 * and log m' the profile's correctly rounded sb_logf of m' rounded to float32:
 * an absolute error below 2^-23 whatever the value's size. */
static double kd_log(double m, int64_t e) {
    kd_num p = {m, e};
    kd_normalize(&p);
    if (p.m > 0x1.6a09e667f3bcdp+0) p.m *= 0.5, p.e += 1; /* exact */
    return (double)p.e * KD_LN2 + (double)sb_logf((float)p.m);
}

/* cos t and sin t for |t| <= pi/2 by their Taylor polynomials to degree 24 and
 * 25 (truncation below 2^-70), Horner in t^2, every step one IEEE operation:
 * the same bits on every CPU. The cosine kernel and the Box-Muller draws use
 * them; no libm. */
static const double k_cos_c[13] = {
    0x1.0000000000000p+0,  -0x1.0000000000000p-1, 0x1.5555555555555p-5,  -0x1.6c16c16c16c17p-10,
    0x1.a01a01a01a01ap-16, -0x1.27e4fb7789f5cp-22, 0x1.1eed8eff8d898p-29, -0x1.93974a8c07c9dp-37,
    0x1.ae7f3e733b81fp-45, -0x1.6827863b97d97p-53, 0x1.e542ba4020225p-62, -0x1.0ce396db7f853p-70,
    0x1.f2cf01972f578p-80};
static const double k_sin_c[13] = {
    0x1.0000000000000p+0,  -0x1.5555555555555p-3, 0x1.1111111111111p-7,  -0x1.a01a01a01a01ap-13,
    0x1.71de3a556c734p-19, -0x1.ae64567f544e4p-26, 0x1.6124613a86d09p-33, -0x1.ae7f3e733b81fp-41,
    0x1.952c77030ad4ap-49, -0x1.2f49b46814157p-57, 0x1.71b8ef6dcf572p-66, -0x1.761b41316381ap-75,
    0x1.3f3ccdd165fa9p-84};

static double kd_cos(double t) {
    const double u = t * t;
    double c = k_cos_c[12];
    for (int k = 11; k >= 0; k--) c = c * u + k_cos_c[k];
    return c;
}

static double kd_sin(double t) {
    const double u = t * t;
    double c = k_sin_c[12];
    for (int k = 11; k >= 0; k--) c = c * u + k_sin_c[k];
    return t * c;
}

/* int_0^1 cos(pi r / 2) r^(d-1) dr by its alternating series
 * sum_k (-1)^k (pi/2)^2k / ((2k)! (d + 2k)) (40 terms: the rest is below
 * 2^-200); its terms stay below 1.3, so it keeps its relative accuracy at any
 * d where the recurrence by parts would not. */
static double kd_cos_moment(int32_t d) {
    const double a2 = KD_HALF_PI * KD_HALF_PI;
    double t = 1.0, s = 1.0 / (double)d;
    for (int k = 1; k <= 40; k++) {
        t = t * a2 / (double)((2 * k - 1) * (2 * k));
        const double term = t / ((double)d + 2.0 * (double)k);
        s = (k & 1) ? s - term : s + term;
    }
    return s;
}

double sb_kde_log_norm(int32_t kernel, int32_t d, double h) {
    kd_num p = {1.0, 0};
    if (kernel == SB_KDE_GAUSSIAN) { /* (2 pi)^(d/2) h^d */
        for (int32_t k = 0; k < d / 2; k++) kd_mul(&p, KD_TWO_PI);
        if (d & 1) kd_mul(&p, sqrt(KD_TWO_PI));
    } else { /* V_d, the unit ball's volume: V_0 = 1, V_1 = 2, V_k = V_(k-2) 2 pi / k */
        if (d & 1) kd_mul(&p, 2.0);
        for (int32_t k = (d & 1) ? 3 : 2; k <= d; k += 2) kd_mul(&p, KD_TWO_PI / (double)k);
        switch (kernel) {
        case SB_KDE_EPANECHNIKOV: kd_mul(&p, 2.0 / (double)(d + 2)); break;     /* int (1 - r^2) */
        case SB_KDE_EXPONENTIAL:                                                /* d V_d (d - 1)! = V_d d! */
            for (int32_t k = 2; k <= d; k++) kd_mul(&p, (double)k);
            break;
        case SB_KDE_LINEAR: kd_mul(&p, 1.0 / (double)(d + 1)); break;           /* int (1 - r) */
        case SB_KDE_COSINE:                                                     /* d V_d int cos(pi r/2) r^(d-1) */
            kd_mul(&p, (double)d);
            kd_mul(&p, kd_cos_moment(d));
            break;
        default: break; /* tophat: V_d */
        }
    }
    for (int32_t k = 0; k < d; k++) kd_mul(&p, h);
    return kd_log(p.m, p.e);
}

/* ---- parameters ---- */

typedef struct kd_params {
    int32_t kernel, bw_rule, numeric_mode;
    float bandwidth;
} kd_params;

static int is(const char *key, const char *a, const char *b) { return !strcmp(key, a) || (b && !strcmp(key, b)); }

static const char *const k_alias_groups[] = {"model|family", "device|device_type", NULL};

/* atol and rtol: only 0 (the exact sum) is built. */
static sb_status kd_zero_tol(const char *key, const char *v) {
    char *end = NULL;
    const double x = strtod(v, &end);
    if (!end || end == v || *end || x != 0.0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "%s=%s: only %s=0 is built (the exact sum over every training row; docs/density.md)", key, v,
                       key);
    return SB_OK;
}

static sb_status kd_params_parse(const sb_params *params, kd_params *p) {
    memset(p, 0, sizeof *p);
    p->bandwidth = 1.0f;
    sb_status st = sb_params_refuse_aliases(params, k_alias_groups, "kernel density");
    if (st != SB_OK) return st;
    sb_numeric_mode mode;
    if ((st = sb_params_resolve_mode(params, SB_FAMILY_KDE, &mode)) != SB_OK) return st;
    p->numeric_mode = (int32_t)mode;
    const char *key, *v;
    for (int64_t e = 0; params && sb_params_entry(params, e, &key, &v) == SB_OK && st == SB_OK; e++) {
        int64_t i;
        if (is(key, "numeric_mode", NULL)) {
            continue;
        } else if (is(key, "model", "family")) {
            if (strcmp(v, "kde") && strcmp(v, "kernel_density"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "model='%s' is not kernel density (model=kde)", v);
        } else if (is(key, "kernel", NULL)) {
            int32_t k = -1;
            for (int32_t q = 0; q < SB_KDE_KERNEL_COUNT_; q++)
                if (!strcmp(v, k_kernel_names[q])) k = q;
            if (k < 0)
                st = sb_fail(SB_ERR_INVALID_ARGUMENT,
                             "kernel='%s': gaussian, tophat, epanechnikov, exponential, linear or cosine", v);
            p->kernel = k;
        } else if (is(key, "bandwidth", NULL)) {
            if (!strcmp(v, "scott")) {
                p->bw_rule = SB_KDE_BW_SCOTT;
            } else if (!strcmp(v, "silverman")) {
                p->bw_rule = SB_KDE_BW_SILVERMAN;
            } else {
                char *end = NULL;
                const double x = strtod(v, &end);
                if (!end || end == v || *end || !(x > 0.0) || !isfinite(x))
                    st = sb_fail(SB_ERR_INVALID_ARGUMENT,
                                 "bandwidth=%s: a positive finite number, 'scott' or 'silverman'", v);
                else if ((st = sb_param_float(key, v, 0.0f, 3.0e38f, 1, &p->bandwidth)) == SB_OK &&
                         !(p->bandwidth > 0.0f))
                    st = sb_fail(SB_ERR_INVALID_ARGUMENT, "bandwidth=%s rounds to 0 in float32: a positive bandwidth",
                                 v);
                p->bw_rule = SB_KDE_BW_VALUE;
            }
        } else if (is(key, "metric", NULL)) {
            if (strcmp(v, "euclidean"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "metric='%s' is not supported: euclidean only (docs/density.md)",
                             v);
        } else if (is(key, "atol", NULL) || is(key, "rtol", NULL)) {
            st = kd_zero_tol(key, v);
        } else if (is(key, "algorithm", NULL)) {
            /* scikit-learn's tree engine: no effect, the exact sum is computed by brute force */
            if (strcmp(v, "auto") && strcmp(v, "kd_tree") && strcmp(v, "ball_tree"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "algorithm='%s': auto, kd_tree or ball_tree", v);
        } else if (is(key, "leaf_size", NULL)) {
            st = sb_param_int(key, v, 1, INT32_MAX, &i); /* tunes scikit-learn's trees only: no effect */
        } else if (is(key, "breadth_first", NULL)) {
            if (strcmp(v, "true") && strcmp(v, "false") && strcmp(v, "1") && strcmp(v, "0"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "breadth_first=%s: true or false", v); /* no effect */
        } else if (is(key, "device", "device_type")) {
            /* the fit keeps the rows and does no sum: the device is checked here (an absent backend
             * refused by name) and scores on it through sb_model_score_samples_on (docs/density.md) */
            sb_device_kind dk;
            st = sb_device_parse(v, &dk);
        } else {
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown parameter '%s' for kernel density (docs/density.md)", key);
        }
    }
    return st;
}

/* Scott's n^(-1/(d+4)) or Silverman's (n (d+2) / 4)^(-1/(d+4)), n the rows
 * (scikit-learn's definitions; weights do not enter): the exponent in double
 * from kd_log, rounded to float32, then the profile's sb_expf. */
static float kd_rule_bandwidth(int32_t rule, int64_t n, int32_t d) {
    const double base = rule == SB_KDE_BW_SCOTT ? (double)n : (double)n * (double)(d + 2) / 4.0;
    return sb_expf((float)(-kd_log(base, 0) / (double)(d + 4)));
}

/* ---- score_samples ---- */

typedef struct kd_job {
    const sb_kde *k;
    int32_t d;
    const float *q;
    int64_t nq;
    double h, invh, inv2h2, h2, h2_hi; /* h2_hi: above it, sqrt(D) >= h surely */
    double offset;                     /* -(log W + log normalization) */
    double *scratch;                   /* per worker: n distances, then d query values */
    double *out;
    double *sums;                      /* each query's kernel sum s, or NULL */
} kd_job;

/* sb_knn_sqdist's value (the same four lanes, features f = l mod 4 in order,
 * added as (l0 + l1) + (l2 + l3)) for the pairs (q, y) and (q, z) at once, the
 * query already in double, the rows float32 widened as they are read (exact):
 * sb_knn_sqdist2's loop without a double copy of the training rows. */
static inline void kd_sqdist2(const double *restrict q, const float *restrict y, const float *restrict z, int32_t d,
                              double *dy, double *dz) {
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0, b0 = 0.0, b1 = 0.0, b2 = 0.0, b3 = 0.0;
    int32_t f = 0;
    for (; f + 4 <= d; f += 4) {
        const double t0 = q[f] - (double)y[f], t1 = q[f + 1] - (double)y[f + 1], t2 = q[f + 2] - (double)y[f + 2],
                     t3 = q[f + 3] - (double)y[f + 3];
        const double u0 = q[f] - (double)z[f], u1 = q[f + 1] - (double)z[f + 1], u2 = q[f + 2] - (double)z[f + 2],
                     u3 = q[f + 3] - (double)z[f + 3];
        a0 += t0 * t0, a1 += t1 * t1, a2 += t2 * t2, a3 += t3 * t3;
        b0 += u0 * u0, b1 += u1 * u1, b2 += u2 * u2, b3 += u3 * u3;
    }
    if (f < d) {
        const double t = q[f] - (double)y[f], u = q[f] - (double)z[f];
        a0 += t * t, b0 += u * u, f++;
    }
    if (f < d) {
        const double t = q[f] - (double)y[f], u = q[f] - (double)z[f];
        a1 += t * t, b1 += u * u, f++;
    }
    if (f < d) {
        const double t = q[f] - (double)y[f], u = q[f] - (double)z[f];
        a2 += t * t, b2 += u * u;
    }
    *dy = (a0 + a1) + (a2 + a3);
    *dz = (b0 + b1) + (b2 + b3);
}

/* The terms of the log-sum-exp whose exponent exceeds this are skipped: the
 * profile's sb_expf(-t) is exactly +0 there (e^-104 is below half the least
 * subnormal float), and s + w * 0 = s, so skipping changes no bit. */
#define KD_EXP_ZERO 104.0

/* The log density from a query's kernel sum s and its largest term's exponent
 * tmin (the host's kd_one and the device's kd_sums both end here): log s -
 * tmin + offset for gaussian and exponential, log s + offset for the compact
 * kernels, -inf where they reach no row (s == 0). */
static double kd_finish(const kd_job *jb, double s, double tmin) {
    const int kernel = jb->k->kernel;
    if (kernel == SB_KDE_GAUSSIAN || kernel == SB_KDE_EXPONENTIAL) return kd_log(s, 0) - tmin + jb->offset;
    return s > 0.0 ? kd_log(s, 0) + jb->offset : -INFINITY;
}

/* The log density of one query (qd: its row in double; its distances into D;
 * its kernel sum s into *sum): see the header. The distances go two training
 * rows at a time through kd_sqdist2 (sb_knn_sqdist's value: the same lanes in
 * the same order), for speed only. */
static double kd_one(const kd_job *jb, const double *qd, double *D, double *sum) {
    const sb_kde *k = jb->k;
    const int64_t n = k->n;
    const int32_t d = jb->d;
    const float *w = k->w;
    int64_t i = 0;
    for (; i + 2 <= n; i += 2) kd_sqdist2(qd, k->x + i * d, k->x + (i + 1) * d, d, &D[i], &D[i + 1]);
    if (i < n) {
        double unused;
        kd_sqdist2(qd, k->x + i * d, k->x + i * d, d, &D[i], &unused);
    }
    double s = 0.0, tmin = 0.0;
    const int kernel = k->kernel;
    if (kernel == SB_KDE_GAUSSIAN || kernel == SB_KDE_EXPONENTIAL) {
        double Dmin = INFINITY; /* over the rows of positive weight: exact and order-free */
        for (int64_t r = 0; r < n; r++)
            if ((!w || w[r] > 0.0f) && D[r] < Dmin) Dmin = D[r];
        const int gauss = kernel == SB_KDE_GAUSSIAN;
        tmin = gauss ? Dmin * jb->inv2h2 : sqrt(Dmin) * jb->invh;
#if defined(SB_SABOTAGE_KDE_ORDER)
        for (int64_t r = n - 1; r >= 0; r--) { /* separating arm: the sum in reversed order */
#else
        for (int64_t r = 0; r < n; r++) {
#endif
            if (w && !(w[r] > 0.0f)) continue;
            const double t = (gauss ? D[r] * jb->inv2h2 : sqrt(D[r]) * jb->invh) - tmin;
            if (t > KD_EXP_ZERO) continue;
            const float e = sb_expf(-(float)t);
            s += (w ? (double)w[r] : 1.0) * (double)e;
        }
        *sum = s;
        return kd_finish(jb, s, tmin);
    }
#if defined(SB_SABOTAGE_KDE_ORDER)
    for (int64_t r = n - 1; r >= 0; r--) {
#else
    for (int64_t r = 0; r < n; r++) {
#endif
        if (D[r] > jb->h2_hi || (w && !(w[r] > 0.0f))) continue;
        const double dist = sqrt(D[r]);
        if (!(dist < jb->h)) continue;
        double v;
        switch (kernel) {
        case SB_KDE_TOPHAT: v = 1.0; break;
        case SB_KDE_EPANECHNIKOV: v = 1.0 - D[r] / jb->h2; break;
        case SB_KDE_LINEAR: v = 1.0 - dist * jb->invh; break;
        default: v = kd_cos(KD_HALF_PI * (dist * jb->invh)); break; /* cosine, argument in [0, pi/2) */
        }
        if (v > 0.0) s += (w ? (double)w[r] : 1.0) * v;
    }
    *sum = s;
    return kd_finish(jb, s, 0.0);
}

static void kd_task(void *ctx, int64_t t) {
    const kd_job *jb = ctx;
    double *D = jb->scratch + (size_t)sb_worker_index() * ((size_t)jb->k->n + (size_t)jb->d);
    double *qd = D + jb->k->n;
    int64_t b, e;
    sb_chunk_range(jb->nq, KD_QB, t, &b, &e);
    for (int64_t i = b; i < e; i++) {
        for (int32_t f = 0; f < jb->d; f++) qd[f] = (double)jb->q[i * jb->d + f];
        double s;
        jb->out[i] = kd_one(jb, qd, D, &s);
        if (jb->sums) jb->sums[i] = s;
    }
}

static sb_status kd_model(const sb_model *m, const char *who) {
    if (!m) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: NULL argument", who);
    if (m->family != SB_FAMILY_KDE || !m->kde)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: a %s model has no density (a kde model does)", who,
                       sb_family_name((sb_family)m->family));
    return SB_OK;
}

/* Finite values and the model's feature count, before any long work. */
static sb_status kd_check_rows(const sb_model *m, const sb_table *q) {
    if (q->ncols != m->num_features)
        return sb_fail(SB_ERR_INVALID_INPUT, "feature-count mismatch: the model has %d features, the data %d",
                       (int)m->num_features, (int)q->ncols);
    for (int64_t i = 0; i < q->nrows * q->ncols; i++)
        if (!isfinite(q->x[i]))
            return sb_fail(SB_ERR_INVALID_INPUT, "row %lld, feature %lld: %s; kernel density takes finite values only",
                           (long long)(i / q->ncols), (long long)(i % q->ncols),
                           isnan(q->x[i]) ? "missing (NaN)" : "infinite");
    return SB_OK;
}

/* Queries a launch of kd_sums takes at most: a bound on one launch's time
 * (every query reads every training row). */
#define KD_DEV_QUERIES 65536

static uint64_t kd_bits(double v) {
    uint64_t u;
    memcpy(&u, &v, 8);
    return u;
}

static double kd_val(uint64_t u) {
    double v;
    memcpy(&v, &u, 8);
    return v;
}

/* The queries' kernel sums and largest exponents on kind's GPU (kd_sums,
 * kernels/entry/density_entry.h: the host's double operations in the
 * integer binary64 of kernels/f64.h, so the bits are kd_one's), the log
 * densities finished here by kd_finish, as on the host. */
static sb_status kd_score_dev(kd_job *jb, sb_device_kind kind) {
    const sb_kde *k = jb->k;
    const int64_t n = k->n, nq = jb->nq, d = jb->d;
    sb_device *dv = NULL;
    sb_status st = sb_linalg_device_lock(kind, &dv);
    if (st != SB_OK) return st;
    sb_dbuf x = {0}, w = {0}, q = {0}, o = {0};
    const int64_t chunk = nq < KD_DEV_QUERIES ? nq : KD_DEV_QUERIES;
    uint64_t *host = sb_malloc(sizeof(uint64_t) * 2 * (size_t)chunk);
    if (!host) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "kernel density: out of memory for %lld sums", (long long)chunk);
    if (st == SB_OK) st = sb_device_alloc(dv, &x, 4 * (size_t)(n * d), "kernel density rows");
    if (st == SB_OK) st = sb_device_alloc(dv, &w, 4 * (size_t)(k->w ? n : 1), "kernel density weights");
    if (st == SB_OK) st = sb_device_alloc(dv, &q, 4 * (size_t)(nq * d), "kernel density queries");
    if (st == SB_OK) st = sb_device_alloc(dv, &o, 16 * (size_t)chunk, "kernel density sums");
    if (st == SB_OK) st = sb_device_write(dv, &x, 0, k->x, 4 * (size_t)(n * d), "kernel density rows");
    if (st == SB_OK && k->w) st = sb_device_write(dv, &w, 0, k->w, 4 * (size_t)n, "kernel density weights");
    if (st == SB_OK) st = sb_device_write(dv, &q, 0, jb->q, 4 * (size_t)(nq * d), "kernel density queries");
    const int32_t di = (int32_t)d, hw = k->w != NULL, kernel = k->kernel;
    const uint64_t invh = kd_bits(jb->invh), inv2h2 = kd_bits(jb->inv2h2), h = kd_bits(jb->h), h2 = kd_bits(jb->h2),
                   h2_hi = kd_bits(jb->h2_hi);
    for (int64_t q0 = 0; st == SB_OK && q0 < nq; q0 += chunk) {
        const int64_t cn = nq - q0 < chunk ? nq - q0 : chunk;
        st = SB_LAUNCH(dv, SB_KL_kd_sums, (cn + dv->wg - 1) / dv->wg, 1, 0, SB_ARG(q.h), SB_ARG(q0), SB_ARG(cn),
                       SB_ARG(x.h), SB_ARG(n), SB_ARG(di), SB_ARG(w.h), SB_ARG(hw), SB_ARG(kernel), SB_ARG(invh),
                       SB_ARG(inv2h2), SB_ARG(h), SB_ARG(h2), SB_ARG(h2_hi), SB_ARG(o.h));
        if (st == SB_OK) st = sb_device_read(dv, &o, 0, host, 16 * (size_t)cn, "kernel density sums");
        for (int64_t i = 0; st == SB_OK && i < cn; i++) {
            const double s = kd_val(host[2 * i]), tmin = kd_val(host[2 * i + 1]);
            jb->out[q0 + i] = kd_finish(jb, s, tmin);
            if (jb->sums) jb->sums[q0 + i] = s;
        }
    }
    sb_device_release(dv, &x);
    sb_device_release(dv, &w);
    sb_device_release(dv, &q);
    sb_device_release(dv, &o);
    sb_linalg_device_unlock();
    sb_free(host);
    return st;
}

sb_status sb_kde_score_f64(const sb_model *m, const sb_table *q, int32_t device, double *out, double *sums) {
    const sb_kde *k = m->kde;
    kd_job jb;
    memset(&jb, 0, sizeof jb);
    jb.k = k, jb.d = m->num_features, jb.q = q->x, jb.nq = q->nrows, jb.out = out, jb.sums = sums;
    jb.h = (double)k->bandwidth;
    jb.invh = 1.0 / jb.h;
    jb.h2 = jb.h * jb.h; /* exact: a float squared */
    jb.inv2h2 = 1.0 / (2.0 * jb.h2);
    jb.h2_hi = jb.h2 * (1.0 + 0x1p-40); /* D above it: sqrt(D) > h (1 + 2^-42), which rounds to >= h */
    double W = 0.0;
    for (int64_t i = 0; i < k->n; i++) W += k->w ? (double)k->w[i] : 1.0;
    jb.offset = -(kd_log(W, 0) + sb_kde_log_norm(k->kernel, jb.d, jb.h));
    if (q->nrows == 0) return SB_OK;
    if (device == SB_DEVICE_CUDA || device == SB_DEVICE_OPENCL) return kd_score_dev(&jb, (sb_device_kind)device);
    const int32_t width = sb_parallel_width();
    if (!(jb.scratch = sb_malloc(sizeof(double) * (size_t)width * ((size_t)k->n + (size_t)jb.d))))
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "kernel density: out of memory for %d x %lld distances", (int)width,
                       (long long)k->n);
    sb_parallel_for_width(sb_chunk_count(q->nrows, KD_QB), width, kd_task, &jb);
    sb_free(jb.scratch);
    return SB_OK;
}

/* The log densities of q's rows into out (nq floats) on device kind: the
 * doubles rounded once. */
static sb_status kd_score(const sb_model *m, const sb_table *q, sb_device_kind kind, float *out) {
    const int64_t n = q->nrows;
    double *v = sb_malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!v) return sb_fail(SB_ERR_OUT_OF_MEMORY, "kernel density: out of memory for %lld rows", (long long)n);
    const sb_status st = sb_kde_score_f64(m, q, (int32_t)kind, v, NULL);
    for (int64_t i = 0; st == SB_OK && i < n; i++) out[i] = (float)v[i];
    sb_free(v);
    return st;
}

sb_status sb_model_score_samples_on(const sb_model *m, const sb_dataset *queries, const char *device, float *out,
                                    size_t cap, size_t *needed) {
    sb_clear_error();
    sb_status st = kd_model(m, "sb_model_score_samples");
    if (st != SB_OK) return st;
    if (!queries) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_score_samples: NULL queries");
    sb_device_kind kind = SB_DEVICE_CPU;
    if ((st = sb_device_parse_ready(device, &kind)) != SB_OK) return st;
    const size_t want = (size_t)queries->t.nrows;
    if ((st = sb_out_size(out, cap, needed, want)) != SB_OK || !out) return st;
    if ((st = kd_check_rows(m, &queries->t)) != SB_OK) return st;
    return kd_score(m, &queries->t, kind, out);
}

sb_status sb_model_score_samples(const sb_model *m, const sb_dataset *queries, float *out, size_t cap,
                                 size_t *needed) {
    return sb_model_score_samples_on(m, queries, NULL, out, cap, needed);
}

sb_status sb_model_score_on(const sb_model *m, const sb_dataset *queries, const char *device, double *out) {
    sb_clear_error();
    sb_status st = kd_model(m, "sb_model_score");
    if (st != SB_OK) return st;
    if (!queries || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_score: NULL argument");
    sb_device_kind kind = SB_DEVICE_CPU;
    if ((st = sb_device_parse_ready(device, &kind)) != SB_OK) return st;
    if ((st = kd_check_rows(m, &queries->t)) != SB_OK) return st;
    const int64_t n = queries->t.nrows;
    float *v = sb_malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    if (!v) return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_model_score: out of memory for %lld rows", (long long)n);
    st = kd_score(m, &queries->t, kind, v);
    double s = 0.0; /* the float32 log densities, widened, added in row order */
    for (int64_t i = 0; st == SB_OK && i < n; i++) s += (double)v[i];
    sb_free(v);
    if (st == SB_OK) *out = s;
    return st;
}

sb_status sb_model_score(const sb_model *m, const sb_dataset *queries, double *out) {
    return sb_model_score_on(m, queries, NULL, out);
}

/* ---- sample ---- */

/* Standard normal number j of (seed): Box-Muller on the pair j / 2, the
 * cosine branch for even j and the sine branch for odd j. u1 is an open unit
 * float (never 0), u2 a unit float, a multiple of 2^-24: its quadrant
 * q = floor(4 u2) and the rest f = 4 u2 - q are exact, so the angle reduces
 * to f pi / 2 in [0, pi/2) with no error from the reduction. */
static double kd_normal(uint64_t seed, uint64_t j) {
    uint32_t w[4];
    sb_rng_words(seed, KD_PURPOSE_NORMAL, j >> 1, 0u, w);
    const float u1 = sb_u32_to_open_unit_f32(w[0]), u2 = sb_u32_to_unit_f32(w[1]);
    const double rad = sqrt(-2.0 * (double)sb_logf(u1));
    const double x4 = 4.0 * (double)u2;
    const int q = (int)x4;
    const double t = (x4 - (double)q) * KD_HALF_PI;
    const double c = kd_cos(t), s = kd_sin(t);
    /* cos and sin of q pi / 2 + t */
    double cs, sn;
    switch (q) {
    case 0: cs = c, sn = s; break;
    case 1: cs = -s, sn = c; break;
    case 2: cs = -c, sn = -s; break;
    default: cs = s, sn = -c; break;
    }
    return rad * ((j & 1) ? sn : cs);
}

sb_status sb_model_sample(const sb_model *m, int64_t n_samples, uint64_t random_state, float *out, size_t cap,
                          size_t *needed) {
    sb_clear_error();
    sb_status st = kd_model(m, "sb_model_sample");
    if (st != SB_OK) return st;
    const sb_kde *k = m->kde;
    if (k->kernel != SB_KDE_GAUSSIAN && k->kernel != SB_KDE_TOPHAT)
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "sample: kernel='%s' is not supported: sampling is built for the gaussian and tophat kernels "
                       "only (as scikit-learn)", k_kernel_names[k->kernel]);
    if (n_samples < 0 || n_samples > (int64_t)1 << 40)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sample: n_samples=%lld must be in 0..2^40", (long long)n_samples);
    const int32_t d = m->num_features;
    const size_t want = (size_t)n_samples * (size_t)d;
    if ((st = sb_out_size(out, cap, needed, want)) != SB_OK || !out) return st;
    double *cum = NULL;
    double W = 0.0;
    if (k->w) { /* cumulative weights in index order: the draw's inverse */
        if (!(cum = sb_malloc(sizeof(double) * (size_t)k->n)))
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "sample: out of memory for %lld rows", (long long)k->n);
        for (int64_t i = 0; i < k->n; i++) cum[i] = W += (double)k->w[i];
    }
    const double h = (double)k->bandwidth;
    for (int64_t s = 0; s < n_samples; s++) {
        int64_t row;
        if (!cum) {
            row = (int64_t)sb_rng_below(random_state, KD_PURPOSE_ROW, (uint64_t)s, (uint32_t)k->n);
        } else { /* the first row whose cumulative weight exceeds u W, u a 53-bit unit double */
            uint32_t w[4];
            sb_rng_words(random_state, KD_PURPOSE_ROW, (uint64_t)s, 0u, w);
            const double u = ((double)(w[0] >> 5) * 0x1p26 + (double)(w[1] >> 6)) * 0x1p-53;
            const double v = u * W;
            int64_t lo = 0, hi = k->n - 1;
            while (lo < hi) {
                const int64_t mid = lo + (hi - lo) / 2;
                if (cum[mid] > v) hi = mid;
                else lo = mid + 1;
            }
            while (lo > 0 && !(k->w[lo] > 0.0f)) lo--; /* v rounded onto W: the last row of positive weight */
            row = lo;
        }
        const float *x = k->x + row * d;
        float *o = out + s * d;
        if (k->kernel == SB_KDE_GAUSSIAN) {
            for (int32_t f = 0; f < d; f++)
                o[f] = (float)((double)x[f] + h * kd_normal(random_state, (uint64_t)s * (uint64_t)d + (uint64_t)f));
        } else { /* tophat: uniform in the ball of radius h: a normal direction, radius h U^(1/d) */
            double z2 = 0.0;
            for (int32_t f = 0; f < d; f++) {
                const double z = kd_normal(random_state, (uint64_t)s * (uint64_t)d + (uint64_t)f);
                z2 += z * z;
            }
            uint32_t w[4];
            sb_rng_words(random_state, KD_PURPOSE_RADIUS, (uint64_t)s, 0u, w);
            const float u = sb_u32_to_open_unit_f32(w[0]);
            const double radius = h * (double)sb_expf(sb_logf(u) / (float)d);
            const double norm = sqrt(z2);
            for (int32_t f = 0; f < d; f++) {
                const double z = kd_normal(random_state, (uint64_t)s * (uint64_t)d + (uint64_t)f);
                const double dir = norm > 0.0 ? z / norm : (f == 0 ? 1.0 : 0.0);
                o[f] = (float)((double)x[f] + radius * dir);
            }
        }
    }
    sb_free(cum);
    return SB_OK;
}

/* ---- the fit ---- */

static sb_status kd_params_text(const kd_params *p, char **out) {
    char buf[256], bw[48];
    if (p->bw_rule == SB_KDE_BW_SCOTT) snprintf(bw, sizeof bw, "scott");
    else if (p->bw_rule == SB_KDE_BW_SILVERMAN) snprintf(bw, sizeof bw, "silverman");
    else snprintf(bw, sizeof bw, "%.9g", (double)p->bandwidth);
    const int n = snprintf(buf, sizeof buf, "bandwidth=%s\nkernel=%s\nmetric=euclidean\nmodel=kde\n", bw,
                           k_kernel_names[p->kernel]);
    if (n >= (int)sizeof buf) return sb_fail(SB_ERR_LIMIT, "kernel density: the parameter text is too long");
    *out = sb_strdup(buf);
    return *out ? SB_OK : sb_fail(SB_ERR_OUT_OF_MEMORY, "kernel density: out of memory");
}

sb_status sb_kde_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out) {
    sb_clear_error();
    if (out) *out = NULL;
    if (!train || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_kde_fit: NULL argument");
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    kd_params p;
    sb_status st = kd_params_parse(params, &p);
    if (st != SB_OK) return st;
    const sb_table *t = &train->t;
    const int64_t n = t->nrows, d = t->ncols;
    if (n < 1 || d < 1)
        return sb_fail(SB_ERR_INVALID_INPUT, "kernel density needs at least one row and one feature (the data is "
                       "%lld x %lld)", (long long)n, (long long)d);
    if (n > (int64_t)UINT32_MAX)
        return sb_fail(SB_ERR_LIMIT, "kernel density: %lld rows exceed the limit 4294967295", (long long)n);
    for (int64_t i = 0; i < n * d; i++)
        if (!isfinite(t->x[i]))
            return sb_fail(SB_ERR_INVALID_INPUT, "row %lld, feature %lld: %s; kernel density takes finite values only",
                           (long long)(i / d), (long long)(i % d), isnan(t->x[i]) ? "missing (NaN)" : "infinite");
    if (t->weight) {
        double W = 0.0;
        for (int64_t i = 0; i < n; i++) {
            if (!isfinite(t->weight[i]) || t->weight[i] < 0.0f)
                return sb_fail(SB_ERR_INVALID_INPUT, "row %lld: sample weight %g; kernel density takes finite weights "
                               ">= 0", (long long)i, (double)t->weight[i]);
            W += (double)t->weight[i];
        }
        if (!(W > 0.0))
            return sb_fail(SB_ERR_INVALID_INPUT, "kernel density: the sample weights sum to zero (a positive sum is "
                           "needed)");
    }
    if (p.bw_rule != SB_KDE_BW_VALUE) p.bandwidth = kd_rule_bandwidth(p.bw_rule, n, (int32_t)d);
    if (!(p.bandwidth > 0.0f) || !isfinite(p.bandwidth))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "kernel density: the bandwidth %g is not positive and finite",
                       (double)p.bandwidth);
    char *text = NULL;
    if ((st = kd_params_text(&p, &text)) != SB_OK) return st;
    sb_model *m = NULL;
    if ((st = sb_model_alloc(&m)) != SB_OK) {
        sb_free(text);
        return st;
    }
    m->family = SB_FAMILY_KDE;
    m->objective = SB_OBJ_REGRESSION;
    m->num_features = (int32_t)d;
    m->num_class = 1;
    m->numeric_mode = p.numeric_mode;
    m->params = text;
    sb_kde *k = m->kde = sb_kde_alloc(n, (int32_t)d, t->weight != NULL);
    if (!k) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "kernel density: out of memory for %lld x %lld", (long long)n, (long long)d);
    if (st == SB_OK) {
        k->kernel = p.kernel, k->bw_rule = p.bw_rule, k->bandwidth = p.bandwidth;
        memcpy(k->x, t->x, sizeof(float) * (size_t)(n * d));
        if (k->w) memcpy(k->w, t->weight, sizeof(float) * (size_t)n);
    }
    if (st == SB_OK) st = sb_model_copy_names(m, t->names, d, "kernel density");
    if (st == SB_OK && card) {
        char dims[96];
        snprintf(dims, sizeof dims, "%lld x %lld, %s", (long long)n, (long long)d, k_kernel_names[p.kernel]);
        st = sb_card_set_meta(card, "kde.data", dims);
        if (st == SB_OK) st = sb_model_record_bytes(card, m, "kde.model_bytes");
    }
    if (st != SB_OK) {
        sb_model_free(m);
        return st;
    }
    *out = m;
    return SB_OK;
}

/* ---- attributes ---- */

sb_status sb_kde_int(const sb_model *m, const char *name, int64_t *out) {
    const sb_kde *k = m->kde;
    if (!strcmp(name, "n_samples_fit")) *out = k->n;
    else if (!strcmp(name, "kernel")) *out = k->kernel;
    else if (!strcmp(name, "bandwidth_rule")) *out = k->bw_rule;
    else if (!strcmp(name, "weighted")) *out = k->w != NULL;
    else return sb_fail(SB_ERR_NOT_FOUND, "a kernel density model has no integer '%s'", name);
    return SB_OK;
}

sb_status sb_kde_array(const sb_model *m, const char *name, float *out, size_t cap, size_t *needed) {
    if (strcmp(name, "bandwidth"))
        return sb_fail(SB_ERR_NOT_FOUND, "a kernel density model has no array '%s' (bandwidth)", name);
    if (needed) *needed = 1;
    if (cap == 0) return SB_OK;
    out[0] = m->kde->bandwidth;
    return SB_OK;
}
