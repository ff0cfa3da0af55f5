/*
 * kmeans.c: k-means with scikit-learn's names and defaults (docs/cluster.md):
 * Lloyd's iterations (S. Lloyd, "Least squares quantization in PCM", IEEE
 * Trans. Inf. Theory 28(2), 1982) from k-means++ seeding (D. Arthur and S.
 * Vassilvitskii, "k-means++: the advantages of careful seeding", SODA 2007)
 * in its greedy form (2 + floor(ln k) candidates a step, the one that lowers
 * the potential most kept, as scikit-learn describes), random rows, or given
 * centers; n_init runs, the lowest inertia kept.
 *
 * Every number is a fixed sequence of IEEE operations, so the fit is the same
 * bits on every machine and at every thread count:
 *  - a row's squared norm is exact, rounded once (the linear-algebra core's);
 *  - the assignment distance is d(x, c) = max(0, (|x|^2 + |c|^2) - 2 x.c) in
 *    float32, the dot product in eight lanes (lane l sums the features
 *    f = l mod 8 in order, the last d mod 8 features joining lanes 0.. in
 *    order) added as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)); a row
 *    goes to the center of least distance, ties to the lower index;
 *  - sums over rows (centers, weights, the potential, inertia, variances) are
 *    double sums in blocks of rows fixed by the shape, each block in row order,
 *    the blocks then added in block order;
 *  - random draws are Philox words of (seed, purpose, run, step, trial)
 *    (core/rng.h), never a stream.
 * Work is split over rows (or over clusters for the merges); every split is a
 * function of the shape, so the thread count reaches no bit.
 */
#include "kmeans.h"
#include "../../core/rng.h"
#include "../../device/device.h"
#include "../../linalg/linalg.h"
#include "../../kernels/kmeans.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define KM_PURPOSE_PP 0x4b4d5031u     /* "KMP1": k-means++ draws */
#define KM_PURPOSE_RANDOM 0x4b4d5231u /* "KMR1": init="random" draws */
#define KM_ROW_GRAIN 512              /* rows of an assignment task */
#define KM_SUM_ROWS 4096              /* rows of a sum block, at least */
#define KM_SUM_CELLS ((int64_t)1 << 25) /* blocks x k x d partial sums, at most */
#define KM_MAX_K 1000000
#define KM_LONG_ROW 64                /* padded features from which distances go center by center */

typedef struct km_params {
    int32_t k, init, n_init, max_iter, numeric_mode; /* init: 0 k-means++, 1 random, 2 given centers */
    float tol;
    uint64_t seed;
    char device[32];
} km_params;

/* ---- parameters ---- */

static int is(const char *key, const char *a, const char *b) { return !strcmp(key, a) || (b && !strcmp(key, b)); }

static const char *const k_alias_groups[] = {"model|family", "seed|random_state", "device|device_type", NULL};

static sb_status km_params_parse(const sb_params *params, int given, km_params *p) {
    memset(p, 0, sizeof *p);
    p->k = 8;
    p->init = given ? 2 : 0;
    p->n_init = -1;
    p->max_iter = 300;
    p->tol = 1e-4f;
    snprintf(p->device, sizeof p->device, "cpu");
    sb_status st = sb_params_refuse_aliases(params, k_alias_groups, "k-means");
    if (st != SB_OK) return st;
    sb_numeric_mode mode;
    if ((st = sb_params_resolve_mode(params, SB_FAMILY_KMEANS, &mode)) != SB_OK) return st;
    p->numeric_mode = (int32_t)mode;
    const char *key, *v;
    for (int64_t e = 0; params && sb_params_entry(params, e, &key, &v) == SB_OK && st == SB_OK; e++) {
        int64_t i;
        if (is(key, "numeric_mode", NULL)) {
            continue;
        } else if (is(key, "model", "family")) {
            if (strcmp(v, "kmeans") && strcmp(v, "k_means"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "model='%s' is not k-means (model=kmeans)", v);
        } else if (is(key, "n_clusters", NULL)) {
            if ((st = sb_param_int(key, v, 1, KM_MAX_K, &i)) == SB_OK) p->k = (int32_t)i;
        } else if (is(key, "init", NULL)) {
            if (!strcmp(v, "k-means++")) p->init = given ? 2 : 0;
            else if (!strcmp(v, "random")) p->init = given ? 2 : 1;
            else if (!strcmp(v, "array")) {
                if (!given)
                    st = sb_fail(SB_ERR_INVALID_ARGUMENT, "init=array needs the initial centers (sb_kmeans_fit's init)");
            } else
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "init='%s': k-means++, random, or given centers", v);
        } else if (is(key, "n_init", NULL)) {
            if (!strcmp(v, "auto")) p->n_init = -1;
            else if ((st = sb_param_int(key, v, 1, 10000, &i)) == SB_OK) p->n_init = (int32_t)i;
        } else if (is(key, "max_iter", NULL)) {
            if ((st = sb_param_int(key, v, 1, 1000000, &i)) == SB_OK) p->max_iter = (int32_t)i;
        } else if (is(key, "tol", NULL)) {
            st = sb_param_float(key, v, 0.0f, 3.0e38f, 0, &p->tol);
        } else if (is(key, "seed", "random_state")) {
            if ((st = sb_param_int(key, v, 0, INT64_MAX, &i)) == SB_OK) p->seed = (uint64_t)i;
        } else if (is(key, "algorithm", NULL)) {
            /* elkan: the same clustering by the triangle inequality; Lloyd's iterations compute it here */
            if (strcmp(v, "lloyd") && strcmp(v, "elkan") && strcmp(v, "auto") && strcmp(v, "full"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "algorithm='%s': lloyd or elkan", v);
        } else if (is(key, "device", "device_type")) {
            sb_device_kind dk;
            if ((st = sb_device_parse(v, &dk)) == SB_OK) snprintf(p->device, sizeof p->device, "%s", v);
        } else {
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown parameter '%s' for k-means (docs/cluster.md)", key);
        }
    }
    if (st == SB_OK && p->n_init < 0) p->n_init = p->init == 1 ? 10 : 1; /* scikit-learn's n_init="auto" */
    if (st == SB_OK && given) p->n_init = 1; /* given centers: one run (scikit-learn warns and does the same) */
    return st;
}

/* The canonical parameter text (sorted keys) of the model file. */
static sb_status km_params_text(const km_params *p, char **out) {
    char buf[256];
    static const char *const inits[3] = {"k-means++", "random", "array"};
    const int n = snprintf(buf, sizeof buf, "init=%s\nmax_iter=%d\nmodel=kmeans\nn_clusters=%d\nn_init=%d\nseed=%llu\ntol=%.9g\n",
                           inits[p->init], (int)p->max_iter, (int)p->k, (int)p->n_init, (unsigned long long)p->seed,
                           (double)p->tol);
    if (n >= (int)sizeof buf) return sb_fail(SB_ERR_LIMIT, "k-means: the parameter text is too long");
    *out = sb_strdup(buf);
    return *out ? SB_OK : sb_fail(SB_ERR_OUT_OF_MEMORY, "k-means: out of memory");
}

/* ---- the numerics every stage shares ---- */

typedef float km_v4 __attribute__((vector_size(16)));

static inline km_v4 km_ld4(const float *p) {
    km_v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* x . c in the lanes of the header, held as two four-float vectors (lanes
 * 0..3 and 4..7): one fixed sequence of float operations (GCC and Clang
 * vectors: each lane its own IEEE multiply and add, no contraction), the
 * same on every target whatever width its registers have. */
static inline float km_dot(const float *x, const float *c, int32_t d) {
    km_v4 lo = {0.0f, 0.0f, 0.0f, 0.0f}, hi = lo;
    int32_t f = 0;
    for (; f + 8 <= d; f += 8) {
        lo = lo + km_ld4(x + f) * km_ld4(c + f);
        hi = hi + km_ld4(x + f + 4) * km_ld4(c + f + 4);
    }
    float l[8];
    memcpy(l, &lo, sizeof lo);
    memcpy(l + 4, &hi, sizeof hi);
    for (int32_t t = 0; f < d; f++, t++) l[t] = l[t] + x[f] * c[f];
    return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

/* km_dot of x with four row-major centers c0..c3 (x's loads shared, eight
 * independent sums): for each center exactly km_dot's operations in km_dot's
 * order. */
static inline void km_dot4(const float *x, const float *c0, const float *c1, const float *c2, const float *c3,
                           int32_t d, float out[4]) {
    km_v4 l0 = {0.0f, 0.0f, 0.0f, 0.0f}, h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0, l3 = l0, h3 = l0;
    int32_t f = 0;
    for (; f + 8 <= d; f += 8) {
        const km_v4 a = km_ld4(x + f), b = km_ld4(x + f + 4);
        l0 = l0 + a * km_ld4(c0 + f);
        h0 = h0 + b * km_ld4(c0 + f + 4);
        l1 = l1 + a * km_ld4(c1 + f);
        h1 = h1 + b * km_ld4(c1 + f + 4);
        l2 = l2 + a * km_ld4(c2 + f);
        h2 = h2 + b * km_ld4(c2 + f + 4);
        l3 = l3 + a * km_ld4(c3 + f);
        h3 = h3 + b * km_ld4(c3 + f + 4);
    }
    const km_v4 lo[4] = {l0, l1, l2, l3}, hi[4] = {h0, h1, h2, h3};
    const float *cs[4] = {c0, c1, c2, c3};
    for (int q = 0; q < 4; q++) {
        float l[8];
        memcpy(l, &lo[q], sizeof lo[q]);
        memcpy(l + 4, &hi[q], sizeof hi[q]);
        for (int32_t g = f, t = 0; g < d; g++, t++) l[t] = l[t] + x[g] * cs[q][g];
        out[q] = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
    }
}

/* km_dot of x with the four centers of a block at once, x and the centers
 * padded with zeros from feature d to dp, the next multiple of 8, the centers
 * transposed (ct[f * 4 + q]: feature f of the block's center q): eight lane
 * accumulators (lane f mod 8), each a vector over the four centers, so every
 * center gets km_dot's operations in km_dot's order: the padding adds
 * products 0 * 0 = +0, which change no lane (a lane that starts at +0 is
 * never -0 in round-to-nearest, and v + 0 = v for every other v). */
__attribute__((always_inline)) static inline km_v4 km_dot_block(const float *x, const float *ct, int32_t dp) {
    km_v4 a0 = {0.0f, 0.0f, 0.0f, 0.0f}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
#define KM_LANE(A, XV, F) A = A + (km_v4){(XV), (XV), (XV), (XV)} * km_ld4(ct + (int64_t)(F) * 4)
    for (int32_t f = 0; f < dp; f += 8) {
        KM_LANE(a0, x[f], f);
        KM_LANE(a1, x[f + 1], f + 1);
        KM_LANE(a2, x[f + 2], f + 2);
        KM_LANE(a3, x[f + 3], f + 3);
        KM_LANE(a4, x[f + 4], f + 4);
        KM_LANE(a5, x[f + 5], f + 5);
        KM_LANE(a6, x[f + 6], f + 6);
        KM_LANE(a7, x[f + 7], f + 7);
    }
#undef KM_LANE
    return ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
}

/* Padded features of a block: d rounded up to a multiple of 8. */
static inline int32_t km_dpad(int32_t d) { return (d + 7) / 8 * 8; }

/* The centers in blocks of four, each block transposed and padded with zeros
 * (past k and past d): ct[(j / 4) * dp * 4 + f * 4 + j % 4]. */
static void km_transpose(const float *c, int32_t k, int32_t d, float *ct) {
    const int32_t nb = (k + 3) / 4, dp = km_dpad(d);
    for (int32_t b = 0; b < nb; b++)
        for (int32_t f = 0; f < dp; f++)
            for (int32_t q = 0; q < 4; q++) {
                const int32_t j = 4 * b + q;
                ct[(int64_t)b * dp * 4 + (int64_t)f * 4 + q] = j < k && f < d ? c[(int64_t)j * d + f] : 0.0f;
            }
}

static int32_t g_long_row_for_tests;
void sb_kmeans_long_row_for_tests(int32_t dp) { g_long_row_for_tests = dp; }

/* Row x's distances to the k centers (x padded to dp features; c the centers
 * row-major, ct as km_transpose lays them out, cn their norms padded to a
 * multiple of four) into out[0..k), or, out NULL, only the nearest (ties to
 * the lower index) into *best and its distance into *bestd. Long rows go
 * center by center (km_dot: x stays in cache), short ones four centers at
 * once (km_dot_block): the same values either way. */
__attribute__((always_inline)) static inline void km_row(const float *x, float xn, const float *c, const float *ct,
                                                         const float *cn, int32_t k, int32_t d, int32_t dp, float *out,
                                                         int32_t *best, float *bestd) {
    float bd = 0.0f;
    int32_t bj = 0;
    const km_v4 xn4 = {xn, xn, xn, xn}, two = {2.0f, 2.0f, 2.0f, 2.0f};
    const int by_center = dp >= (g_long_row_for_tests > 0 ? g_long_row_for_tests : KM_LONG_ROW);
    for (int32_t j0 = 0; j0 < k; j0 += 4) {
        float sv[4];
        km_v4 dot;
        if (by_center) {
            float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            if (j0 + 4 <= k)
                km_dot4(x, c + (int64_t)j0 * d, c + (int64_t)(j0 + 1) * d, c + (int64_t)(j0 + 2) * d,
                        c + (int64_t)(j0 + 3) * d, d, t);
            else
                for (int32_t q = 0; q < 4 && j0 + q < k; q++) t[q] = km_dot(x, c + (int64_t)(j0 + q) * d, d);
            dot = km_ld4(t);
        } else {
            dot = km_dot_block(x, ct + (int64_t)j0 * dp, dp);
        }
        const km_v4 v = (xn4 + km_ld4(cn + j0)) - two * dot;
        memcpy(sv, &v, sizeof sv);
        for (int32_t q = 0; q < 4 && j0 + q < k; q++) {
            const int32_t j = j0 + q;
            const float s = sv[q] > 0.0f ? sv[q] : 0.0f;
            if (out) out[j] = s;
            if (sb_km_better(s, bd, j)) bd = s, bj = j; /* kernels/kmeans.h: the tie rule and its arm */
        }
    }
    *best = bj;
    *bestd = bd;
}

/* x with its rows padded with zeros to dp features. */
typedef struct pad_job {
    const float *x;
    float *out;
    int64_t n;
    int32_t d, dp;
} pad_job;

static void pad_task(void *ctx, int64_t task) {
    const pad_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, 4096, task, &b, &e);
    for (int64_t i = b; i < e; i++) {
        memcpy(j->out + i * j->dp, j->x + i * j->d, sizeof(float) * (size_t)j->d);
        for (int32_t f = j->d; f < j->dp; f++) j->out[i * j->dp + f] = 0.0f;
    }
}

/* The rows padded to km_dpad(d) features: x itself when d is a multiple of 8,
 * else a copy (*owned, the caller frees it); NULL when out of memory. */
static const float *km_padded(const float *x, int64_t n, int32_t d, float **owned) {
    const int32_t dp = km_dpad(d);
    *owned = NULL;
    if (dp == d) return x;
    float *p = sb_malloc(sizeof(float) * (size_t)(n > 0 ? n : 1) * (size_t)dp);
    if (!p) return NULL;
    pad_job j = {x, p, n, d, dp};
    sb_parallel_for(sb_chunk_count(n, 4096), pad_task, &j);
    *owned = p;
    return p;
}

/* The assignment distance of the header from the exact squared norms. */
static inline float km_sqd(float xn, float cn, const float *x, const float *c, int32_t d) {
    const float s = (xn + cn) - 2.0f * km_dot(x, c, d);
    return s > 0.0f ? s : 0.0f;
}

/* Rows of a sum block: KM_SUM_ROWS, doubled until blocks x k x d partial sums fit KM_SUM_CELLS (the shape alone). */
static int64_t km_sum_rows(int64_t n, int64_t k, int64_t d) {
    int64_t r = KM_SUM_ROWS;
    while (r < n && ((n + r - 1) / r) * k * d > KM_SUM_CELLS) r *= 2;
    return r;
}

/* A uniform double in [0, 1) of 53 bits for (seed, purpose, index). */
static double km_unit(uint64_t seed, uint32_t purpose, uint64_t index) {
    uint32_t w[4];
    sb_rng_words(seed, purpose, index, 0u, w);
    return ((double)(w[0] >> 5) * 67108864.0 + (double)(w[1] >> 6)) * 0x1p-53;
}

/* floor(ln k) for 1 <= k <= 10^6 by integer thresholds (ceil(e^m)), no libm. */
static int32_t km_floor_ln(int32_t k) {
    static const int32_t t[] = {3, 8, 21, 55, 149, 404, 1097, 2981, 8104, 22027, 59875, 162755, 442414};
    int32_t m = 0;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) m += k >= t[i];
    return m;
}

/* ---- a fit's shared state ---- */

typedef struct km_fit {
    const float *x, *w;  /* n x d rows; weights (NULL: all 1) */
    const float *xp;     /* the rows padded to km_dpad(d) features (x itself when d is a multiple of 8) */
    int64_t n;
    int32_t d, k;
    float *xn;           /* n exact squared norms */
    int64_t srows, nb;   /* sum blocks: rows each, count */
    /* work arrays */
    float *centers, *cn; /* k x d; k norms (zeros up to a multiple of four) */
    float *ct;           /* the centers as km_transpose lays them out */
    int32_t *labels;
    float *dist;         /* n: each row's assignment distance */
    double *ps, *pw;     /* nb x k x d and nb x k partial sums */
    double *sum, *wsum;  /* k x d, k merged */
    double *bm;          /* nb block masses (draws) */
    float *mass_f;       /* n: the host's copy of the device's closest distances, where fetched (k-means++) */
    struct km_dev *dv;   /* the GPU path (NULL: the host's) */
} km_fit;

/* The GPU path's device and buffers (kernels/entry/cluster_entry.h): the
 * same values as the host's, stage for stage. */
typedef struct km_dev {
    sb_device *d;
    sb_dbuf x, w, xn, c, cn, labels, old, dist, ps, pw, sum, wsum, closest, trial, mass, rr, mean, flag;
} km_dev;

static float km_w(const km_fit *f, int64_t i) { return f->w ? f->w[i] : 1.0f; }

/* ---- the GPU path: buffers and the stages' launches ---- */

static int64_t km_groups(const sb_device *d, int64_t items) { return (items + d->wg - 1) / d->wg; }

static void km_dev_close(km_dev *v) {
    if (!v->d) return;
    sb_dbuf *all[] = {&v->x, &v->w, &v->xn, &v->c, &v->cn, &v->labels, &v->old, &v->dist, &v->ps, &v->pw,
                      &v->sum, &v->wsum, &v->closest, &v->trial, &v->mass, &v->rr, &v->mean, &v->flag};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sb_device_release(v->d, all[i]);
    v->d = NULL;
    sb_linalg_device_unlock();
}

static int64_t g_local_for_tests;
void sb_kmeans_local_budget_for_tests(int64_t bytes) { g_local_for_tests = bytes; }

/* The chunk of centers (*ch) and the slab of features (*fs) kk_assign
 * stages at once on d for k centers of dp padded features: every feature
 * of as many centers as fit (a multiple of SB_KK_CB, at most k rounded up to
 * one), or, when SB_KK_CB full rows do not fit, SB_KK_CB centers in slabs of
 * the most features that do. The bits do not depend on either. */
static void km_chunk(sb_device *d, int64_t k, int64_t dp, int32_t *ch, int32_t *fs) {
    int64_t budget = d->local_mem - (int64_t)sb_device_kernel_local(d, SB_KL_kk_assign);
    if (g_local_for_tests > 0 && g_local_for_tests < budget) budget = g_local_for_tests;
    const int64_t kr = (k + SB_KK_CB - 1) / SB_KK_CB * SB_KK_CB;
    int64_t c = budget / (dp * 4) / SB_KK_CB * SB_KK_CB, f = dp;
    if (c < SB_KK_CB) c = SB_KK_CB, f = budget / (4 * SB_KK_CB) / 8 * 8;
    if (f < 8) f = 8; /* a device with less than 256 bytes of local memory fails its launch, named */
    *ch = (int32_t)(c < kr ? c : kr);
    *fs = (int32_t)f;
}

/* Opens kind's device (held, under the linalg devices' lock, until
 * km_dev_close), sizes every buffer of the fit (L: the k-means++ trials a
 * step, 1 for the other inits) and uploads the rows, their weights and their
 * squared norms. */
static sb_status km_dev_open(km_fit *f, sb_device_kind kind, int32_t L, km_dev *v) {
    memset(v, 0, sizeof *v);
    sb_status st = sb_linalg_device_lock(kind, &v->d);
    if (st != SB_OK) return v->d = NULL, st;
    sb_device *d = v->d;
    const int64_t n = f->n, dd = f->d, k = f->k, nb = f->nb;
    const int64_t cells = nb * (k * dd > dd ? k * dd : dd);
    struct { sb_dbuf *b; size_t bytes; const char *what; } a[] = {
        {&v->x, 4 * (size_t)(n * dd), "k-means rows"}, {&v->w, 4 * (size_t)(f->w ? n : 1), "k-means weights"},
        {&v->xn, 4 * (size_t)n, "k-means row norms"}, {&v->c, 4 * (size_t)((k > L ? k : L) * dd), "k-means centers"},
        {&v->cn, 4 * (size_t)(k > L ? k : L), "k-means center norms"}, {&v->labels, 4 * (size_t)n, "k-means labels"},
        {&v->old, 4 * (size_t)n, "k-means previous labels"}, {&v->dist, 4 * (size_t)n, "k-means distances"},
        {&v->ps, 8 * (size_t)cells, "k-means block sums"}, {&v->pw, 8 * (size_t)(nb * k), "k-means block weights"},
        {&v->sum, 8 * (size_t)(k * dd), "k-means sums"}, {&v->wsum, 8 * (size_t)k, "k-means weights"},
        {&v->closest, 4 * (size_t)n, "k-means++ distances"},
        {&v->trial, 4 * (size_t)(n * L), "k-means++ trials"}, {&v->mass, 8 * (size_t)(nb * L), "k-means block masses"},
        {&v->rr, 8 * (size_t)n, "k-means row inertia"}, {&v->mean, 8 * (size_t)dd, "k-means column means"},
        {&v->flag, 4, "k-means flag"}};
    for (size_t i = 0; i < sizeof a / sizeof a[0] && st == SB_OK; i++) {
        if ((int64_t)a[i].bytes > d->max_alloc)
            st = sb_fail(SB_ERR_LIMIT, "k-means on %s: the %s need %zu bytes, one buffer may hold %lld", d->name,
                         a[i].what, a[i].bytes, (long long)d->max_alloc);
        else st = sb_device_alloc(d, a[i].b, a[i].bytes, a[i].what);
    }
    if (st == SB_OK) st = sb_device_write(d, &v->x, 0, f->x, 4 * (size_t)(n * dd), "k-means rows");
    if (st == SB_OK && f->w) st = sb_device_write(d, &v->w, 0, f->w, 4 * (size_t)n, "k-means weights");
    if (st == SB_OK) st = sb_device_write(d, &v->xn, 0, f->xn, 4 * (size_t)n, "k-means row norms");
    if (st != SB_OK) km_dev_close(v);
    return st;
}

/* kk_assign of every row against the k centers c (k x d, norms cn, both
 * host arrays, uploaded here) in mode (kk_assign's header: out and closest
 * the buffers it names), labels and distances to v->labels and v->dist. */
static sb_status km_assign_launch(km_fit *f, const float *c, const float *cn, int32_t k, int32_t mode,
                                  const sb_dbuf *out, const sb_dbuf *closest) {
    km_dev *v = f->dv;
    sb_device *d = v->d;
    const int64_t n = f->n;
    const int32_t dd = f->d, dp = km_dpad(f->d);
    int32_t ch = 0, fs = 0;
    km_chunk(d, k, dp, &ch, &fs);
    sb_status st = sb_device_write(d, &v->c, 0, c, 4 * (size_t)((int64_t)k * dd), "k-means centers");
    if (st == SB_OK) st = sb_device_write(d, &v->cn, 0, cn, 4 * (size_t)k, "k-means center norms");
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KL_kk_assign, km_groups(d, n), 1, 4 * (size_t)ch * (size_t)(fs < dp ? fs : dp), SB_ARG(v->x.h),
                       SB_ARG(n), SB_ARG(dd), SB_ARG(v->xn.h), SB_ARG(v->c.h), SB_ARG(v->cn.h), SB_ARG(k), SB_ARG(ch),
                       SB_ARG(fs), SB_ARG(v->labels.h), SB_ARG(v->dist.h), SB_ARG(mode), SB_ARG(out->h),
                       SB_ARG(closest->h));
    return st;
}

/* kk_assign against f->centers and f->cn. */
static sb_status km_assign_dev(km_fit *f) {
    return km_assign_launch(f, f->centers, f->cn, f->k, 0, &f->dv->dist, &f->dv->dist);
}

/* Prediction on the GPU (sb_km_predict's kinds): the nearest centers
 * (kind value) or every distance (out n x k), kk_assign's values; xn the
 * rows' exact squared norms, cn the centers'. */
static sb_status km_predict_dev(sb_device_kind kind, const sb_kmeans *km, const sb_table *t, const float *xn,
                                const float *cn, int all, int32_t *labels, float *out) {
    km_dev v;
    memset(&v, 0, sizeof v);
    sb_status st = sb_linalg_device_lock(kind, &v.d);
    if (st != SB_OK) return st;
    km_fit f; /* what km_assign_launch reads: the shape and the buffers */
    memset(&f, 0, sizeof f);
    f.n = t->nrows, f.d = t->ncols, f.dv = &v;
    const int64_t n = t->nrows, dd = t->ncols, k = km->k;
    sb_dbuf o = {0};
    st = sb_device_alloc(v.d, &v.x, 4 * (size_t)(n * dd), "k-means rows");
    if (st == SB_OK) st = sb_device_alloc(v.d, &v.xn, 4 * (size_t)n, "k-means row norms");
    if (st == SB_OK) st = sb_device_alloc(v.d, &v.c, 4 * (size_t)(k * dd), "k-means centers");
    if (st == SB_OK) st = sb_device_alloc(v.d, &v.cn, 4 * (size_t)k, "k-means center norms");
    if (st == SB_OK) st = sb_device_alloc(v.d, &v.labels, 4 * (size_t)n, "k-means labels");
    if (st == SB_OK) st = sb_device_alloc(v.d, &v.dist, 4 * (size_t)n, "k-means distances");
    if (st == SB_OK) st = sb_device_alloc(v.d, &o, 4 * (size_t)(all ? n * k : 1), "k-means distances");
    if (st == SB_OK) st = sb_device_write(v.d, &v.x, 0, t->x, 4 * (size_t)(n * dd), "k-means rows");
    if (st == SB_OK) st = sb_device_write(v.d, &v.xn, 0, xn, 4 * (size_t)n, "k-means row norms");
    if (st == SB_OK) st = km_assign_launch(&f, km->centers, cn, (int32_t)k, all ? 1 : 0, &o, &v.dist);
    if (st == SB_OK && !all) st = sb_device_read(v.d, &v.labels, 0, labels, 4 * (size_t)n, "k-means labels");
    if (st == SB_OK && all) st = sb_device_read(v.d, &o, 0, out, 4 * (size_t)(n * k), "k-means distances");
    sb_device_release(v.d, &o);
    km_dev_close(&v); /* releases the rest, unlocks */
    return st;
}

/* f->sum and f->wsum from the device's labels (kk_sums, kk_merge). */
static sb_status km_sums_dev(km_fit *f) {
    km_dev *v = f->dv;
    sb_device *d = v->d;
    const int64_t n = f->n, srows = f->srows, nb = f->nb;
    const int32_t dd = f->d, k = f->k, hw = f->w != NULL;
    sb_status st = SB_LAUNCH(d, SB_KL_kk_sums, km_groups(d, nb * (dd + 1)), 1, 0, SB_ARG(v->x.h), SB_ARG(n), SB_ARG(dd),
                             SB_ARG(v->w.h), SB_ARG(hw), SB_ARG(v->labels.h), SB_ARG(k), SB_ARG(srows), SB_ARG(nb),
                             SB_ARG(v->ps.h), SB_ARG(v->pw.h));
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KL_kk_merge, km_groups(d, (int64_t)k * (dd + 1)), 1, 0, SB_ARG(v->ps.h), SB_ARG(v->pw.h),
                       SB_ARG(nb), SB_ARG(k), SB_ARG(dd), SB_ARG(v->sum.h), SB_ARG(v->wsum.h));
    if (st == SB_OK) st = sb_device_read(d, &v->sum, 0, f->sum, 8 * (size_t)((int64_t)k * dd), "k-means sums");
    if (st == SB_OK) st = sb_device_read(d, &v->wsum, 0, f->wsum, 8 * (size_t)k, "k-means weights");
    return st;
}

/* The device's labels and distances into f->labels and f->dist. */
static sb_status km_fetch_labels(km_fit *f, int with_dist) {
    if (!f->dv) return SB_OK;
    sb_status st = sb_device_read(f->dv->d, &f->dv->labels, 0, f->labels, 4 * (size_t)f->n, "k-means labels");
    if (st == SB_OK && with_dist) st = sb_device_read(f->dv->d, &f->dv->dist, 0, f->dist, 4 * (size_t)f->n, "k-means distances");
    return st;
}

/* *same := the labels repeat the previous ones (kk_changed, which then keeps them). */
static sb_status km_same_dev(km_fit *f, int *same) {
    km_dev *v = f->dv;
    const int32_t zero = 0;
    int32_t flag = 1;
    const int64_t n = f->n;
    sb_status st = sb_device_write(v->d, &v->flag, 0, &zero, 4, "k-means flag");
    if (st == SB_OK)
        st = SB_LAUNCH(v->d, SB_KL_kk_changed, km_groups(v->d, n), 1, 0, SB_ARG(v->labels.h), SB_ARG(v->old.h), SB_ARG(n),
                       SB_ARG(v->flag.h));
    if (st == SB_OK) st = sb_device_read(v->d, &v->flag, 0, &flag, 4, "k-means flag");
    *same = flag == 0;
    return st;
}

/* Block masses of the L n-value rows of buffer src (floats, or binary64
 * when vd) into host[t*nb + b] (kk_mass). */
static sb_status km_mass_dev(km_fit *f, const sb_dbuf *src, int32_t vd, int32_t L, double *host) {
    km_dev *v = f->dv;
    const int64_t n = f->n, srows = f->srows, nb = f->nb;
    const int32_t hw = f->w != NULL;
    const sb_dbuf *fl = vd ? &v->dist : src, *db = vd ? src : &v->rr;
    sb_status st = SB_LAUNCH(v->d, SB_KL_kk_mass, km_groups(v->d, (int64_t)L * nb), 1, 0, SB_ARG(fl->h), SB_ARG(db->h),
                             SB_ARG(vd), SB_ARG(L), SB_ARG(n), SB_ARG(v->w.h), SB_ARG(hw), SB_ARG(srows), SB_ARG(nb),
                             SB_ARG(v->mass.h));
    if (st == SB_OK) st = sb_device_read(v->d, &v->mass, 0, host, 8 * (size_t)(L * nb), "k-means block masses");
    return st;
}

/* Assignment of rows [b, e): labels and distances to f->centers. */
typedef struct assign_job {
    km_fit *f;
} assign_job;

static void assign_task(void *ctx, int64_t task) {
    km_fit *f = ((assign_job *)ctx)->f;
    int64_t b, e;
    sb_chunk_range(f->n, KM_ROW_GRAIN, task, &b, &e);
    const int32_t dp = km_dpad(f->d);
    for (int64_t i = b; i < e; i++)
        km_row(f->xp + i * dp, f->xn[i], f->centers, f->ct, f->cn, f->k, f->d, dp, NULL, &f->labels[i], &f->dist[i]);
}

/* The centers' exact squared norms, zeros past k up to a multiple of four. */
static sb_status km_center_norms(km_fit *f) {
    for (int32_t j = f->k; j < (f->k + 3) / 4 * 4; j++) f->cn[j] = 0.0f;
    return sb_lr_lines_host(SB_LR_SQNORM, 1, f->k, f->d, f->centers, f->d, f->cn);
}

static sb_status km_assign(km_fit *f) {
    sb_status st = km_center_norms(f);
    if (st != SB_OK) return st;
    if (f->dv) return km_assign_dev(f);
    km_transpose(f->centers, f->k, f->d, f->ct);
    assign_job j = {f};
    sb_parallel_for(sb_chunk_count(f->n, KM_ROW_GRAIN), assign_task, &j);
    return SB_OK;
}

/* Two doubles as one value (each lane its own IEEE add or multiply, as the
 * scalar loop), and two floats widened to them exactly. */
typedef double km_d2 __attribute__((vector_size(16)));
typedef float km_f2 __attribute__((vector_size(8)));
static inline km_d2 km_ld2(const double *p) {
    km_d2 v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void km_st2(double *p, km_d2 v) { memcpy(p, &v, sizeof v); }
static inline km_d2 km_widen2(const float *p) {
    km_f2 v;
    memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, km_d2);
}

/* Sum block b: the weighted sums of each cluster's rows and their weights. */
static void sums_task(void *ctx, int64_t b) {
    km_fit *f = ((assign_job *)ctx)->f;
    const int64_t d = f->d, k = f->k, i0 = b * f->srows, i1 = i0 + f->srows < f->n ? i0 + f->srows : f->n;
    double *ps = f->ps + b * k * d, *pw = f->pw + b * k;
    memset(ps, 0, sizeof(double) * (size_t)(k * d));
    memset(pw, 0, sizeof(double) * (size_t)k);
    for (int64_t i = i0; i < i1; i++) {
        const int32_t l = f->labels[i];
        const double w = (double)km_w(f, i);
        const float *restrict xi = f->x + i * d;
        double *restrict s = ps + (int64_t)l * d;
        pw[l] = pw[l] + w;
        int64_t c = 0;
        if (f->w) { /* w x exact in double */
            const km_d2 wv = {w, w};
            for (; c + 2 <= d; c += 2) km_st2(s + c, km_ld2(s + c) + wv * km_widen2(xi + c));
            for (; c < d; c++) s[c] = s[c] + w * (double)xi[c];
        } else { /* 1 x is x: the same sums without the products */
            for (; c + 2 <= d; c += 2) km_st2(s + c, km_ld2(s + c) + km_widen2(xi + c));
            for (; c < d; c++) s[c] = s[c] + (double)xi[c];
        }
    }
}

/* Clusters [b, e): the blocks' sums added in block order. */
static void merge_task(void *ctx, int64_t task) {
    km_fit *f = ((assign_job *)ctx)->f;
    const int64_t d = f->d, k = f->k;
    int64_t b, e;
    sb_chunk_range(k, 8, task, &b, &e);
    for (int64_t j = b; j < e; j++) {
        double *s = f->sum + j * d;
        double w = 0.0;
        for (int64_t c = 0; c < d; c++) s[c] = 0.0;
        for (int64_t blk = 0; blk < f->nb; blk++) {
            const double *p = f->ps + (blk * k + j) * d;
            for (int64_t c = 0; c < d; c++) s[c] = s[c] + p[c];
            w = w + f->pw[blk * k + j];
        }
        f->wsum[j] = w;
    }
}

/* Update: f->centers := the weighted means of the clusters of f->labels, an
 * empty cluster refilled by scikit-learn's rule with a stated order (docs/cluster.md):
 * the empty clusters in index order take the rows farthest from their own
 * centers (distance descending, ties to the lower row), each taken row's
 * weight and weighted values moved out of its old cluster's sums. */
static sb_status km_update(km_fit *f) {
    assign_job j = {f};
    if (f->dv) {
        const sb_status st = km_sums_dev(f);
        if (st != SB_OK) return st;
    } else {
        sb_parallel_for(f->nb, sums_task, &j);
        sb_parallel_for(sb_chunk_count(f->k, 8), merge_task, &j);
    }
    const int64_t d = f->d;
    int32_t nempty = 0;
    for (int32_t c = 0; c < f->k; c++) nempty += f->wsum[c] == 0.0;
    if (nempty) {
        const sb_status st = km_fetch_labels(f, 1);
        if (st != SB_OK) return st;
        int64_t *far = sb_malloc(sizeof(int64_t) * (size_t)nempty);
        if (!far) return sb_fail(SB_ERR_OUT_OF_MEMORY, "k-means: out of memory");
        int32_t have = 0; /* far[0..have) sorted: distance descending, row ascending */
        for (int64_t i = 0; i < f->n; i++) {
            const float di = f->dist[i];
            if (have == nempty && !(di > f->dist[far[have - 1]])) continue;
            int32_t at = have < nempty ? have++ : nempty - 1;
            while (at > 0 && di > f->dist[far[at - 1]]) {
                far[at] = far[at - 1];
                at--;
            }
            far[at] = i;
        }
        int32_t t = 0;
        for (int32_t c = 0; c < f->k && t < have; c++) {
            if (f->wsum[c] != 0.0) continue;
            const int64_t r = far[t++];
            const int32_t old = f->labels[r];
            const double w = (double)km_w(f, r);
            const float *xr = f->x + r * d;
            for (int64_t q = 0; q < d; q++) {
                f->sum[old * d + q] = f->sum[old * d + q] - w * (double)xr[q];
                f->sum[c * d + q] = w * (double)xr[q];
            }
            f->wsum[old] = f->wsum[old] - w;
            f->wsum[c] = w;
        }
        sb_free(far);
    }
    for (int32_t c = 0; c < f->k; c++) {
        const double w = f->wsum[c];
        for (int64_t q = 0; q < d; q++) {
            const double s = f->sum[c * d + q];
            f->centers[c * d + q] = (float)(w > 0.0 ? s / w : s);
        }
    }
    return SB_OK;
}

/* Block b's sum of w_i * v_i (double, in row order) into f->bm[b]: v the
 * row distances dist (which 0) or, for the draws, masses mass_f. */
typedef struct mass_job {
    km_fit *f;
    const float *v;    /* NULL: the weights alone */
    const uint8_t *skip; /* rows already drawn (random init), or NULL */
    int fetch;         /* v is f->mass_f, filled from the device's closest distances where a draw looks */
    sb_status st;      /* a failed fetch */
} mass_job;

/* Rows [i0, i1) of the device's closest distances into f->mass_f. */
static void km_fetch(mass_job *m, int64_t i0, int64_t i1) {
    if (!m->fetch || m->st != SB_OK || i1 <= i0) return;
    km_fit *f = m->f;
    m->st = sb_device_read(f->dv->d, &f->dv->closest, 4 * (size_t)i0, f->mass_f + i0, 4 * (size_t)(i1 - i0),
                           "k-means++ distances");
}

static double km_mass(const mass_job *m, int64_t i) {
    if (m->skip && m->skip[i]) return 0.0;
    const double w = (double)km_w(m->f, i);
    return m->v ? w * (double)m->v[i] : w;
}

static void mass_task(void *ctx, int64_t b) {
    const mass_job *m = ctx;
    km_fit *f = m->f;
    const int64_t i0 = b * f->srows, i1 = i0 + f->srows < f->n ? i0 + f->srows : f->n;
    double s = 0.0;
    for (int64_t i = i0; i < i1; i++) s = s + km_mass(m, i);
    f->bm[b] = s;
}

/* The total mass: the blocks' sums in block order. */
static double km_total(mass_job *m) {
    sb_parallel_for(m->f->nb, mass_task, m);
    double t = 0.0;
    for (int64_t b = 0; b < m->f->nb; b++) t = t + m->f->bm[b];
    return t;
}

/* The first row whose running mass (the block sums in order, then the rows
 * of its block in order) reaches r and whose own mass is positive (f->bm
 * holds the blocks' sums); the last row of positive mass when rounding leaves
 * r above every running sum; row 0 when no row has mass. */
static int64_t km_draw(mass_job *m, double r) {
    km_fit *f = m->f;
    double run = 0.0;
    for (int64_t b = 0; b < f->nb; b++) {
        const double next = run + f->bm[b];
        if (next >= r && f->bm[b] > 0.0) {
            const int64_t i0 = b * f->srows, i1 = i0 + f->srows < f->n ? i0 + f->srows : f->n;
            km_fetch(m, i0, i1);
            double s = run;
            for (int64_t i = i0; i < i1; i++) {
                const double mi = km_mass(m, i);
                s = s + mi;
                if (mi > 0.0 && s >= r) return i;
            }
        }
        run = next;
    }
    km_fetch(m, 0, f->n);
    for (int64_t i = f->n - 1; i >= 0; i--) /* rounding left r above the running sums */
        if (km_mass(m, i) > 0.0) return i;
    return 0;
}

/* Distances of every row to row c (k-means++ candidates): out[i] = min(prev[i], d(x_i, x_c)). */
typedef struct cand_job {
    km_fit *f;
    const float *prev;
    float *out;
    int64_t c;
} cand_job;

static void cand_task(void *ctx, int64_t task) {
    const cand_job *j = ctx;
    km_fit *f = j->f;
    int64_t b, e;
    sb_chunk_range(f->n, KM_ROW_GRAIN, task, &b, &e);
    const float *xc = f->x + j->c * f->d, cn = f->xn[j->c];
    for (int64_t i = b; i < e; i++) {
        const float s = km_sqd(f->xn[i], cn, f->x + i * f->d, xc, f->d);
        j->out[i] = j->prev && j->prev[i] < s ? j->prev[i] : s;
    }
}

static sb_status km_plusplus_dev(km_fit *f, const km_params *p, int32_t run);

/* k-means++ (greedy, 2 + floor(ln k) trials) for run `run` into f->centers. */
static sb_status km_plusplus(km_fit *f, const km_params *p, int32_t run) {
    if (f->dv) return km_plusplus_dev(f, p, run);
    const int32_t L = 2 + km_floor_ln(f->k);
    const int64_t n = f->n, d = f->d;
    float *closest = sb_malloc(sizeof(float) * (size_t)n), *trial = sb_malloc(sizeof(float) * (size_t)n * (size_t)L);
    if (!closest || !trial) {
        sb_free(closest);
        sb_free(trial);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "k-means: out of memory for k-means++ (%lld rows)", (long long)n);
    }
    const uint64_t base = (uint64_t)run << 40;
    mass_job mw = {f, NULL, NULL, 0, SB_OK};
    double total = km_total(&mw);
    int64_t c0 = km_draw(&mw, km_unit(p->seed, KM_PURPOSE_PP, base) * total);
    memcpy(f->centers, f->x + c0 * d, sizeof(float) * (size_t)d);
    cand_job cj = {f, NULL, closest, c0};
    sb_parallel_for(sb_chunk_count(n, KM_ROW_GRAIN), cand_task, &cj);
    mass_job mc = {f, closest, NULL, 0, SB_OK};
    double pot = km_total(&mc);
    for (int32_t c = 1; c < f->k; c++) {
        /* the candidates, all drawn against the same running masses */
        int64_t cand[64];
        for (int32_t t = 0; t < L; t++)
            cand[t] = km_draw(&mc, km_unit(p->seed, KM_PURPOSE_PP, base + (uint64_t)c * 64u + (uint64_t)t) * pot);
        double best_pot = 0.0;
        int32_t best = 0;
        for (int32_t t = 0; t < L; t++) {
            cand_job tj = {f, closest, trial + (int64_t)t * n, cand[t]};
            sb_parallel_for(sb_chunk_count(n, KM_ROW_GRAIN), cand_task, &tj);
            mass_job mt = {f, trial + (int64_t)t * n, NULL, 0, SB_OK};
            const double pt = km_total(&mt);
            if (t == 0 || pt < best_pot) best_pot = pt, best = t;
        }
        memcpy(closest, trial + (int64_t)best * n, sizeof(float) * (size_t)n);
        pot = best_pot;
        memcpy(f->centers + (int64_t)c * d, f->x + cand[best] * d, sizeof(float) * (size_t)d);
        (void)km_total(&mc); /* the block masses of the new distances, for the next draws */
    }
    sb_free(closest);
    sb_free(trial);
    return SB_OK;
}

/* km_plusplus on the GPU: the same draws and trials, the trials' distances
 * and block masses on the device (kk_cand, kk_mass), the draws on the host
 * from the block masses and the rows of the one block a draw lands in. */
static sb_status km_plusplus_dev(km_fit *f, const km_params *p, int32_t run) {
    km_dev *v = f->dv;
    sb_device *d = v->d;
    const int32_t L = 2 + km_floor_ln(f->k), dd = f->d;
    const int64_t n = f->n, nb = f->nb;
    double *tm = sb_malloc(sizeof(double) * (size_t)(nb * L));
    if (!tm) return sb_fail(SB_ERR_OUT_OF_MEMORY, "k-means: out of memory for k-means++");
    const uint64_t base = (uint64_t)run << 40;
    mass_job mw = {f, NULL, NULL, 0, SB_OK};
    const double total = km_total(&mw);
    int64_t cand[64];
    cand[0] = km_draw(&mw, km_unit(p->seed, KM_PURPOSE_PP, base) * total);
    memcpy(f->centers, f->x + cand[0] * dd, sizeof(float) * (size_t)dd);
    float *rows = sb_malloc(sizeof(float) * (size_t)L * (size_t)dd), rn[64];
    if (!rows) {
        sb_free(tm);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "k-means: out of memory for k-means++");
    }
    rn[0] = f->xn[cand[0]];
    /* the first center's distances: kk_assign with it as the one center */
    sb_status st = km_assign_launch(f, f->centers, rn, 1, 2, &v->closest, &v->closest);
    if (st == SB_OK) st = km_mass_dev(f, &v->closest, 0, 1, f->bm);
    double pot = 0.0;
    for (int64_t b = 0; b < nb; b++) pot = pot + f->bm[b];
    mass_job mc = {f, f->mass_f, NULL, 1, SB_OK};
    for (int32_t c = 1; c < f->k && st == SB_OK; c++) {
        for (int32_t t = 0; t < L; t++)
            cand[t] = km_draw(&mc, km_unit(p->seed, KM_PURPOSE_PP, base + (uint64_t)c * 64u + (uint64_t)t) * pot);
        if ((st = mc.st) != SB_OK) break;
        for (int32_t t = 0; t < L; t++) { /* the candidate rows as the centers of kk_assign */
            memcpy(rows + (int64_t)t * dd, f->x + cand[t] * dd, sizeof(float) * (size_t)dd);
            rn[t] = f->xn[cand[t]];
        }
        st = km_assign_launch(f, rows, rn, L, 3, &v->trial, &v->closest);
        if (st == SB_OK) st = km_mass_dev(f, &v->trial, 0, L, tm);
        if (st != SB_OK) break;
        double best_pot = 0.0;
        int32_t best = 0;
        for (int32_t t = 0; t < L; t++) {
            double pt = 0.0;
            for (int64_t b = 0; b < nb; b++) pt = pt + tm[(int64_t)t * nb + b];
            if (t == 0 || pt < best_pot) best_pot = pt, best = t;
        }
        st = sb_device_copy(d, &v->closest, 0, &v->trial, 4 * (size_t)((int64_t)best * n), 4 * (size_t)n,
                            "k-means++ distances");
        memcpy(f->bm, tm + (int64_t)best * nb, sizeof(double) * (size_t)nb); /* the masses of the new distances */
        pot = best_pot;
        memcpy(f->centers + (int64_t)c * dd, f->x + cand[best] * dd, sizeof(float) * (size_t)dd);
    }
    sb_free(tm);
    sb_free(rows);
    return st;
}

/* init="random": k distinct rows drawn by weight without replacement. */
static sb_status km_random(km_fit *f, const km_params *p, int32_t run) {
    uint8_t *taken = sb_calloc((size_t)f->n, 1);
    if (!taken) return sb_fail(SB_ERR_OUT_OF_MEMORY, "k-means: out of memory");
    mass_job m = {f, NULL, taken, 0, SB_OK};
    double total = km_total(&m);
    const uint64_t base = (uint64_t)run << 40;
    for (int32_t c = 0; c < f->k; c++) {
        int64_t r = km_draw(&m, km_unit(p->seed, KM_PURPOSE_RANDOM, base + (uint64_t)c) * total);
        if (taken[r]) /* no mass left (zero weights): the first row not yet taken */
            for (r = 0; taken[r]; r++) {}
        taken[r] = 1;
        memcpy(f->centers + (int64_t)c * f->d, f->x + r * f->d, sizeof(float) * (size_t)f->d);
        const int64_t b = r / f->srows; /* its block's mass again, from the rows */
        mass_task(&m, b);
        total = 0.0;
        for (int64_t q = 0; q < f->nb; q++) total = total + f->bm[q];
    }
    sb_free(taken);
    return SB_OK;
}

/* Inertia: sum_i w_i sum_c (x_ic - c_c)^2, each difference and square and sum in double, in the fixed blocks. */
static void inertia_task(void *ctx, int64_t b) {
    km_fit *f = ((assign_job *)ctx)->f;
    const int64_t d = f->d, i0 = b * f->srows, i1 = i0 + f->srows < f->n ? i0 + f->srows : f->n;
    double s = 0.0;
    for (int64_t i = i0; i < i1; i++) {
        const float *xi = f->x + i * d, *c = f->centers + (int64_t)f->labels[i] * d;
        double r = 0.0;
        for (int64_t q = 0; q < d; q++) {
            const double t = (double)xi[q] - (double)c[q];
            r = r + t * t;
        }
        s = s + (double)km_w(f, i) * r;
    }
    f->bm[b] = s;
}

static sb_status km_inertia_dev(km_fit *f) {
    km_dev *v = f->dv;
    const int64_t n = f->n;
    const int32_t dd = f->d;
    sb_status st = sb_device_write(v->d, &v->c, 0, f->centers, 4 * (size_t)((int64_t)f->k * dd), "k-means centers");
    if (st == SB_OK)
        st = SB_LAUNCH(v->d, SB_KL_kk_inertia_rows, km_groups(v->d, n), 1, 0, SB_ARG(v->x.h), SB_ARG(n), SB_ARG(dd),
                       SB_ARG(v->c.h), SB_ARG(v->labels.h), SB_ARG(v->rr.h));
    if (st == SB_OK) st = km_mass_dev(f, &v->rr, 1, 1, f->bm);
    return st;
}

static double km_inertia(km_fit *f, sb_status *st) {
    assign_job j = {f};
    *st = SB_OK;
    if (f->dv) {
        if ((*st = km_inertia_dev(f)) != SB_OK) return 0.0;
    } else {
        sb_parallel_for(f->nb, inertia_task, &j);
    }
    double t = 0.0;
    for (int64_t b = 0; b < f->nb; b++) t = t + f->bm[b];
    return t;
}

/* scikit-learn's tolerance: tol times the mean over features of the column
 * variances (ddof 0, unweighted), in double by the fixed blocks. */
static void colsum_task(void *ctx, int64_t b) {
    km_fit *f = ((assign_job *)ctx)->f;
    const int64_t d = f->d, i0 = b * f->srows, i1 = i0 + f->srows < f->n ? i0 + f->srows : f->n;
    double *s = f->ps + b * d * 2; /* mean pass: [0, d); deviation pass: [d, 2d) */
    for (int64_t q = 0; q < 2 * d; q++) s[q] = 0.0;
    for (int64_t i = i0; i < i1; i++)
        for (int64_t q = 0; q < d; q++) s[q] = s[q] + (double)f->x[i * d + q];
}

static void coldev_task(void *ctx, int64_t b) {
    km_fit *f = ((assign_job *)ctx)->f;
    const int64_t d = f->d, i0 = b * f->srows, i1 = i0 + f->srows < f->n ? i0 + f->srows : f->n;
    double *s = f->ps + b * d * 2 + d;
    for (int64_t i = i0; i < i1; i++)
        for (int64_t q = 0; q < d; q++) {
            const double t = (double)f->x[i * d + q] - f->sum[q];
            s[q] = s[q] + t * t;
        }
}

/* km_tolerance's column sums on the GPU (kk_columns): the same blocks, merged here. */
static sb_status km_tolerance_dev(km_fit *f, float tol, double *out) {
    km_dev *v = f->dv;
    const int64_t n = f->n, srows = f->srows, nb = f->nb, d = f->d;
    const int32_t dd = f->d;
    int32_t pass = 0;
    sb_status st = SB_OK;
    double mean_var = 0.0;
    for (pass = 0; pass < 2 && st == SB_OK; pass++) {
        if (pass == 1) st = sb_device_write(v->d, &v->mean, 0, f->sum, 8 * (size_t)d, "k-means column means");
        if (st == SB_OK)
            st = SB_LAUNCH(v->d, SB_KL_kk_columns, km_groups(v->d, nb * d), 1, 0, SB_ARG(v->x.h), SB_ARG(n), SB_ARG(dd),
                           SB_ARG(srows), SB_ARG(nb), SB_ARG(pass), SB_ARG(v->mean.h), SB_ARG(v->ps.h));
        if (st == SB_OK) st = sb_device_read(v->d, &v->ps, 0, f->ps, 8 * (size_t)(nb * d), "k-means column sums");
        for (int64_t q = 0; q < d && st == SB_OK; q++) {
            double s = 0.0;
            for (int64_t b = 0; b < nb; b++) s = s + f->ps[b * d + q];
            if (pass == 0) f->sum[q] = s / (double)n; /* the column means */
            else mean_var = mean_var + s / (double)n;
        }
    }
    *out = (double)tol * (mean_var / (double)d);
    return st;
}

static double km_tolerance(km_fit *f, float tol, sb_status *st) {
    *st = SB_OK;
    if (tol == 0.0f) return 0.0;
    if (f->dv) {
        double t = 0.0;
        *st = km_tolerance_dev(f, tol, &t);
        return t;
    }
    assign_job j = {f};
    const int64_t d = f->d;
    sb_parallel_for(f->nb, colsum_task, &j);
    for (int64_t q = 0; q < d; q++) {
        double s = 0.0;
        for (int64_t b = 0; b < f->nb; b++) s = s + f->ps[b * d * 2 + q];
        f->sum[q] = s / (double)f->n; /* the column means */
    }
    sb_parallel_for(f->nb, coldev_task, &j);
    double mean_var = 0.0;
    for (int64_t q = 0; q < d; q++) {
        double s = 0.0;
        for (int64_t b = 0; b < f->nb; b++) s = s + f->ps[b * d * 2 + d + q];
        mean_var = mean_var + s / (double)f->n;
    }
    return (double)tol * (mean_var / (double)d);
}

static sb_status km_record(sb_card *card, const char *stage, int32_t run, const float *v, uint64_t n) {
    if (!card) return SB_OK;
    char tag[64];
    snprintf(tag, sizeof tag, "kmeans.run%d.%s", (int)run, stage);
    return sb_card_record(card, tag, SB_DTYPE_F32, v, n);
}

/* One run from f->centers (initialized): Lloyd's iterations as scikit-learn
 * orders them (labels to the old centers, then new centers; stop when the
 * labels repeat, or when the centers' squared shift is at most tol_abs),
 * then labels once more to the final centers unless the labels repeated. */
static sb_status km_lloyd(km_fit *f, const km_params *p, double tol_abs, int32_t run, float *old, int32_t *labels_old,
                          int32_t *n_iter, int32_t *converged, sb_card *card) {
    const int64_t kd = (int64_t)f->k * f->d;
    sb_status st = SB_OK;
    for (int64_t i = 0; i < f->n; i++) labels_old[i] = -1;
    if (f->dv) {
        const int64_t n = f->n;
        const uint32_t none = 0xffffffffu;
        st = SB_LAUNCH(f->dv->d, SB_KL_kr_fill32, km_groups(f->dv->d, n), 1, 0, SB_ARG(f->dv->old.h), SB_ARG(n),
                       SB_ARG(none));
    }
    int strict = 0, it = 0;
    *converged = 0;
    for (it = 0; it < p->max_iter && st == SB_OK; it++) {
        if ((st = km_assign(f)) != SB_OK) break;
        memcpy(old, f->centers, sizeof(float) * (size_t)kd);
        if ((st = km_update(f)) != SB_OK) break;
        char stage[32];
        snprintf(stage, sizeof stage, "iter%d", it);
        if ((st = km_record(card, stage, run, f->centers, (uint64_t)kd)) != SB_OK) break;
        int same = 0;
        if (f->dv) {
            if ((st = km_same_dev(f, &same)) != SB_OK) break;
        } else {
            same = !memcmp(labels_old, f->labels, sizeof(int32_t) * (size_t)f->n);
        }
        if (same) {
            strict = 1;
            *converged = 1;
            break;
        }
        double shift = 0.0;
        for (int64_t q = 0; q < kd; q++) {
            const double t = (double)f->centers[q] - (double)old[q];
            shift = shift + t * t;
        }
        if (shift <= tol_abs) {
            *converged = 1;
            break;
        }
        if (!f->dv) memcpy(labels_old, f->labels, sizeof(int32_t) * (size_t)f->n); /* kk_changed kept them */
    }
    if (st != SB_OK) return st;
    *n_iter = it < p->max_iter ? it + 1 : p->max_iter;
    if (!strict) st = km_assign(f);
    return st;
}

/* ---- the fit ---- */

/* The data's checks, before any long work: finite values and weights,
 * enough rows, squared norms within float32. */
static sb_status km_check(const sb_table *t, const km_params *p, const float *init) {
    if (t->nrows < 1 || t->ncols < 1)
        return sb_fail(SB_ERR_INVALID_INPUT, "k-means needs at least one row and one feature (given %lld x %d)",
                       (long long)t->nrows, (int)t->ncols);
    if (t->nrows < p->k)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "n_samples=%lld should be >= n_clusters=%d", (long long)t->nrows,
                       (int)p->k);
    const int64_t cells = t->nrows * t->ncols, q = sb_first_nonfinite(t->x, cells);
    if (q >= 0)
        return sb_fail(SB_ERR_INVALID_INPUT, "row %lld, feature %d is %s: k-means takes finite values",
                       (long long)(q / t->ncols), (int)(q % t->ncols), isnan(t->x[q]) ? "missing (NaN)" : "infinite");
    if (t->weight) {
        double s = 0.0;
        for (int64_t i = 0; i < t->nrows; i++) {
            const float w = t->weight[i];
            if (!(w >= 0.0f) || !isfinite(w))
                return sb_fail(SB_ERR_INVALID_INPUT, "sample weight of row %lld is %g: weights must be finite and >= 0",
                               (long long)i, (double)w);
            s = s + (double)w;
        }
        if (!(s > 0.0)) return sb_fail(SB_ERR_INVALID_INPUT, "the sample weights sum to zero: at least one weight must be positive");
    }
    if (init)
        for (int64_t q = 0; q < (int64_t)p->k * t->ncols; q++)
            if (!isfinite(init[q]))
                return sb_fail(SB_ERR_INVALID_INPUT, "initial center %lld, feature %d is not finite",
                               (long long)(q / t->ncols), (int)(q % t->ncols));
    return SB_OK;
}

sb_status sb_kmeans_fit(const sb_params *params, const sb_dataset *train, const float *init_centers, sb_card *card,
                        sb_model **out) {
    sb_clear_error();
    if (out) *out = NULL;
    if (!train || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_kmeans_fit: NULL argument");
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    km_params p;
    sb_status st = km_params_parse(params, init_centers != NULL, &p);
    const sb_table *t = &train->t;
    if (st == SB_OK) st = km_check(t, &p, init_centers);
    if (st != SB_OK) return st;
    char *text = NULL;
    if ((st = km_params_text(&p, &text)) != SB_OK) return st;
    const int64_t n = t->nrows, d = t->ncols, k = p.k, kd = k * d;
    km_fit f;
    memset(&f, 0, sizeof f);
    f.x = t->x, f.w = t->weight, f.n = n, f.d = (int32_t)d, f.k = p.k;
    f.srows = km_sum_rows(n, k, d);
    f.nb = (n + f.srows - 1) / f.srows;
    const int64_t pcells = f.nb * (kd > 2 * d ? kd : 2 * d);
    f.xn = sb_malloc(sizeof(float) * (size_t)n);
    f.centers = sb_malloc(sizeof(float) * (size_t)kd);
    f.cn = sb_malloc(sizeof(float) * (size_t)((k + 3) / 4 * 4));
    f.ct = sb_malloc(sizeof(float) * (size_t)((k + 3) / 4 * 4) * (size_t)km_dpad((int32_t)d));
    f.labels = sb_malloc(sizeof(int32_t) * (size_t)n);
    f.dist = sb_malloc(sizeof(float) * (size_t)n);
    f.ps = sb_malloc(sizeof(double) * (size_t)pcells);
    f.pw = sb_malloc(sizeof(double) * (size_t)(f.nb * k));
    f.sum = sb_malloc(sizeof(double) * (size_t)(kd > d ? kd : d));
    f.wsum = sb_malloc(sizeof(double) * (size_t)k);
    f.bm = sb_malloc(sizeof(double) * (size_t)f.nb);
    float *old = sb_malloc(sizeof(float) * (size_t)kd), *best_c = sb_malloc(sizeof(float) * (size_t)kd);
    int32_t *best_l = sb_malloc(sizeof(int32_t) * (size_t)n);
    int32_t *labels_old = sb_malloc(sizeof(int32_t) * (size_t)n);
    sb_model *m = NULL;
    if (!f.xn || !f.centers || !f.cn || !f.ct || !f.labels || !f.dist || !f.ps || !f.pw || !f.sum || !f.wsum || !f.bm || !old ||
        !best_c || !best_l || !labels_old)
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "k-means: out of memory for %lld x %lld and %d clusters", (long long)n,
                     (long long)d, (int)k);
    sb_device_kind dk = SB_DEVICE_CPU;
    if (st == SB_OK) st = sb_device_parse(p.device, &dk);
    const int gpu = dk == SB_DEVICE_CUDA || dk == SB_DEVICE_OPENCL;
    float *xpad = NULL;
    if (st == SB_OK && !gpu && !(f.xp = km_padded(t->x, n, (int32_t)d, &xpad)))
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "k-means: out of memory for the padded rows");
    if (st == SB_OK && gpu && !(f.mass_f = sb_malloc(sizeof(float) * (size_t)n)))
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "k-means: out of memory for %lld rows", (long long)n);
    if (st == SB_OK) st = sb_lr_lines_host(SB_LR_SQNORM, 1, n, d, t->x, d, f.xn);
    for (int64_t i = 0; i < n && st == SB_OK; i++)
        if (!isfinite(f.xn[i]))
            st = sb_fail(SB_ERR_INVALID_INPUT, "the squared norm of row %lld overflows float32: k-means takes values "
                         "whose squares sum below 3.4e38", (long long)i);
    if (st == SB_OK && card) {
        char dims[64];
        snprintf(dims, sizeof dims, "%lld x %lld, k %lld", (long long)n, (long long)d, (long long)k);
        st = sb_card_set_meta(card, "kmeans.data", dims);
    }
    if (st == SB_OK && card) st = sb_card_record(card, "kmeans.x_sq_norms", SB_DTYPE_F32, f.xn, (uint64_t)n);
    km_dev dv;
    memset(&dv, 0, sizeof dv);
    if (st == SB_OK && gpu && (st = km_dev_open(&f, dk, p.init == 0 ? 2 + km_floor_ln(p.k) : 1, &dv)) == SB_OK)
        f.dv = &dv;
    double tol_abs = 0.0;
    if (st == SB_OK) tol_abs = km_tolerance(&f, p.tol, &st);
    double best_inertia = 0.0;
    int32_t best_iter = 0, best_conv = 0, best_run = 0;
    for (int32_t run = 0; run < p.n_init && st == SB_OK; run++) {
        if (p.init == 2) memcpy(f.centers, init_centers, sizeof(float) * (size_t)kd);
        else if (p.init == 1) st = km_random(&f, &p, run);
        else st = km_plusplus(&f, &p, run);
        if (st == SB_OK) st = km_record(card, "init", run, f.centers, (uint64_t)kd);
        int32_t n_iter = 0, conv = 0;
        if (st == SB_OK) st = km_lloyd(&f, &p, tol_abs, run, old, labels_old, &n_iter, &conv, card);
        if (st != SB_OK) break;
        const double inertia = km_inertia(&f, &st);
        const float fi = (float)inertia;
        if (st == SB_OK && card) st = km_fetch_labels(&f, 0);
        if (st == SB_OK && card) {
            char tag[64];
            snprintf(tag, sizeof tag, "kmeans.run%d.labels", (int)run);
            st = sb_card_record(card, tag, SB_DTYPE_I32, f.labels, (uint64_t)n);
            if (st == SB_OK) st = km_record(card, "inertia", run, &fi, 1);
            const int32_t ni[2] = {n_iter, conv};
            snprintf(tag, sizeof tag, "kmeans.run%d.n_iter_converged", (int)run);
            if (st == SB_OK) st = sb_card_record(card, tag, SB_DTYPE_I32, ni, 2);
        }
        if (st == SB_OK && (run == 0 || inertia < best_inertia)) { /* the lowest inertia; ties to the earlier run */
            best_inertia = inertia, best_iter = n_iter, best_conv = conv, best_run = run;
            memcpy(best_c, f.centers, sizeof(float) * (size_t)kd);
            if (!card) st = km_fetch_labels(&f, 0); /* with a card, fetched above */
            memcpy(best_l, f.labels, sizeof(int32_t) * (size_t)n);
        }
    }
    km_dev_close(&dv);
    if (st == SB_OK && card) st = sb_card_record(card, "kmeans.best_run", SB_DTYPE_I32, &best_run, 1);
    if (st == SB_OK) st = sb_model_alloc(&m);
    if (st == SB_OK) {
        m->family = SB_FAMILY_KMEANS;
        m->objective = SB_OBJ_REGRESSION;
        m->num_features = (int32_t)d;
        m->num_class = p.k;
        m->numeric_mode = p.numeric_mode;
        m->params = text;
        text = NULL;
        if (!(m->kmeans = sb_kmeans_alloc(p.k, (int32_t)d))) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "k-means: out of memory");
    }
    if (st == SB_OK) {
        memcpy(m->kmeans->centers, best_c, sizeof(float) * (size_t)kd);
        m->kmeans->labels = best_l, m->kmeans->n_train = n;
        best_l = NULL;
        m->kmeans->n_iter = best_iter;
        m->kmeans->converged = best_conv;
        m->kmeans->inertia = (float)best_inertia;
        if (!isfinite(m->kmeans->inertia))
            st = sb_fail(SB_ERR_LIMIT, "k-means: the inertia overflows float32 (%g)", best_inertia);
    }
    if (st == SB_OK) st = sb_model_copy_names(m, t->names, d, "k-means");
    if (st == SB_OK && card) st = sb_model_record(card, m, train, SB_PREDICT_VALUE, "kmeans.train_labels", "kmeans.model_bytes");
    sb_free(text);
    sb_free(xpad);
    sb_free(f.xn);
    sb_free(f.centers);
    sb_free(f.cn);
    sb_free(f.ct);
    sb_free(f.labels);
    sb_free(f.dist);
    sb_free(f.ps);
    sb_free(f.pw);
    sb_free(f.sum);
    sb_free(f.wsum);
    sb_free(f.bm);
    sb_free(f.mass_f);
    sb_free(old);
    sb_free(best_c);
    sb_free(best_l);
    sb_free(labels_old);
    if (st != SB_OK) {
        sb_model_free(m);
        return st;
    }
    *out = m;
    return SB_OK;
}

/* ---- prediction and attributes ---- */

typedef struct pred_job {
    const sb_model *m;
    const sb_table *t;
    const float *xn, *cn, *ct, *xp;
    int32_t kind;
    float *out;
} pred_job;

static void pred_task(void *ctx, int64_t task) {
    const pred_job *j = ctx;
    const int32_t d = j->m->num_features, dp = km_dpad(d), k = j->m->kmeans->k;
    int64_t b, e;
    sb_chunk_range(j->t->nrows, KM_ROW_GRAIN, task, &b, &e);
    for (int64_t i = b; i < e; i++) {
        int32_t bj;
        float bd;
        float *row = j->kind == SB_PREDICT_VALUE ? NULL : j->out + i * k;
        km_row(j->xp + i * dp, j->xn[i], j->m->kmeans->centers, j->ct, j->cn, k, d, dp, row, &bj, &bd);
        if (j->kind == SB_PREDICT_TRANSFORM)
            for (int32_t c = 0; c < k; c++) row[c] = sqrtf(row[c]);
        if (j->kind == SB_PREDICT_VALUE) j->out[i] = (float)bj;
    }
}

sb_status sb_km_predict(const sb_model *m, const sb_table *t, int32_t kind, const char *device, float *out, size_t cap,
                        size_t *needed) {
    const sb_kmeans *c = m->kmeans;
    if (!c) return sb_fail(SB_ERR_INVALID_ARGUMENT, "a k-means model without its centers");
    if (kind == SB_PREDICT_PROBA) return sb_fail(SB_ERR_INVALID_ARGUMENT, "a k-means model has no probabilities");
    sb_device_kind dk = SB_DEVICE_CPU;
    sb_status st = sb_device_parse(device, &dk);
    if (st != SB_OK) return st;
    const int gpu = dk == SB_DEVICE_CUDA || dk == SB_DEVICE_OPENCL;
    const int64_t bad = sb_first_nonfinite(t->x, t->nrows * t->ncols);
    if (bad >= 0)
        return sb_fail(SB_ERR_INVALID_INPUT, "row %lld, feature %d is %s: k-means takes finite values",
                       (long long)(bad / t->ncols), (int)(bad % t->ncols), isnan(t->x[bad]) ? "missing (NaN)" : "infinite");
    const size_t per = kind == SB_PREDICT_VALUE ? 1 : (size_t)c->k, need = (size_t)t->nrows * per;
    if (needed) *needed = need;
    if (cap == 0) return SB_OK;
    if (cap < need) return sb_fail(SB_ERR_LIMIT, "prediction buffer holds %zu values, %zu needed", cap, need);
    float *xn = sb_malloc(sizeof(float) * (size_t)(t->nrows > 0 ? t->nrows : 1));
    float *cn = sb_calloc((size_t)((c->k + 3) / 4 * 4), sizeof(float));
    float *ct = sb_malloc(sizeof(float) * (size_t)((c->k + 3) / 4 * 4) * (size_t)km_dpad(m->num_features));
    if (!xn || !cn || !ct) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "k-means: out of memory for %lld rows", (long long)t->nrows);
    if (st == SB_OK && t->nrows > 0) st = sb_lr_lines_host(SB_LR_SQNORM, 1, t->nrows, t->ncols, t->x, t->ncols, xn);
    if (st == SB_OK) st = sb_lr_lines_host(SB_LR_SQNORM, 1, c->k, m->num_features, c->centers, m->num_features, cn);
    for (int64_t i = 0; i < t->nrows && st == SB_OK; i++)
        if (!isfinite(xn[i]))
            st = sb_fail(SB_ERR_INVALID_INPUT, "the squared norm of row %lld overflows float32", (long long)i);
    if (st == SB_OK && gpu) {
        const int all = kind != SB_PREDICT_VALUE;
        int32_t *lab = all ? NULL : sb_malloc(sizeof(int32_t) * (size_t)(t->nrows > 0 ? t->nrows : 1));
        if (!all && !lab) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "k-means: out of memory for %lld rows", (long long)t->nrows);
        if (st == SB_OK && t->nrows > 0) st = km_predict_dev(dk, c, t, xn, cn, all, lab, out);
        for (int64_t i = 0; st == SB_OK && i < t->nrows; i++) {
            if (!all) out[i] = (float)lab[i];
            else if (kind == SB_PREDICT_TRANSFORM)
                for (int32_t q = 0; q < c->k; q++) out[i * c->k + q] = sqrtf(out[i * c->k + q]);
        }
        sb_free(lab);
    } else if (st == SB_OK) {
        km_transpose(c->centers, c->k, m->num_features, ct);
        float *xpad = NULL;
        const float *xp = km_padded(t->x, t->nrows, m->num_features, &xpad);
        if (!xp) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "k-means: out of memory for the padded rows");
        } else {
            pred_job j = {m, t, xn, cn, ct, xp, kind, out};
            sb_parallel_for(sb_chunk_count(t->nrows, KM_ROW_GRAIN), pred_task, &j);
        }
        sb_free(xpad);
    }
    sb_free(xn);
    sb_free(cn);
    sb_free(ct);
    return st;
}

const float *sb_km_array(const sb_model *m, const char *name, size_t *n) {
    const sb_kmeans *c = m->kmeans;
    if (!c) return NULL;
    if (!strcmp(name, "cluster_centers")) return *n = (size_t)c->k * (size_t)m->num_features, c->centers;
    if (!strcmp(name, "inertia")) return *n = 1, &c->inertia;
    return NULL;
}

sb_status sb_km_indices(const sb_model *m, const char *name, int64_t *out, size_t cap, size_t *needed) {
    const sb_kmeans *c = m->kmeans;
    if (strcmp(name, "labels"))
        return sb_fail(SB_ERR_NOT_FOUND, "a k-means model has no index array '%s' (labels, of the fit)", name);
    if (!c->labels)
        return sb_fail(SB_ERR_NOT_FOUND, "a k-means model read from a file has no training labels (predict gives them)");
    return sb_model_indices_out(c->labels, NULL, (size_t)c->n_train, name, out, cap, needed);
}

sb_status sb_km_int(const sb_model *m, const char *name, int64_t *out) {
    const sb_kmeans *c = m->kmeans;
    if (c && !strcmp(name, "n_iter")) return *out = c->n_iter, SB_OK;
    if (c && !strcmp(name, "converged")) return *out = c->converged, SB_OK;
    if (c && !strcmp(name, "n_clusters")) return *out = c->k, SB_OK;
    return sb_fail(SB_ERR_NOT_FOUND, "a kmeans model has no integer '%s'", name);
}
