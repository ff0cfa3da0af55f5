/*
 * umap.c: UMAP (McInnes, Healy and Melville, "UMAP: Uniform Manifold
 * Approximation and Projection for Dimension Reduction", arXiv:1802.03426,
 * 2018), with umap-learn's parameter names and documented semantics
 * (docs/umap.md). The steps, each a pure function of the rows and the
 * parameters:
 *  - the neighbors: the nearest-neighbors family's exact self query
 *    (knn.c: exact distances, ties by index), n_neighbors rows each, the row
 *    itself first (a duplicate of lower index that ties it at distance 0 is
 *    moved after it); or, neighbors=nndescent or auto from 4,096 rows
 *    (umap-learn's switch to pynndescent), the approximate lists of
 *    nndescent.c, a pure function of the rows and the seed;
 *  - the fuzzy simplicial set: per row rho (the local_connectivity-th
 *    nonzero distance, interpolated) and sigma by a 64-step bisection on
 *    sum_j exp(-(d_j - rho) / sigma) = log2(k), floored at 1e-3 times the
 *    mean distance; memberships exp(-(d - rho) / sigma); the union
 *    mix (a + b - ab) + (1 - mix) ab with the transpose into a CSR graph whose
 *    rows are sorted by column, then the entries below max / n_epochs dropped;
 *  - a and b: 1 / (1 + a x^(2b)) fitted to the min_dist/spread curve on 300
 *    points of [0, 3 spread] by Levenberg-Marquardt, 200 fixed steps in float;
 *  - the initialization: "spectral" takes the n_components eigenvectors after
 *    the first of D^-1/2 A D^-1/2 by the core's block Lanczos (krylov.c),
 *    scaled so the largest magnitude is 10, plus noise of scale 1e-4 (an
 *    Irwin-Hall sum of 12 Philox uniforms minus 6), then each column mapped
 *    to [0, 10]; above UM_MAX_SPECTRAL_ROWS rows, with n_components + 1 >= n
 *    rows, or on a graph whose solve does not converge the random
 *    initialization is used, as umap-learn falls back, and the model's init
 *    field says so (1, random; the parameter text keeps "spectral", what was
 *    asked); "random" is uniform on
 *    [-10, 10) from Philox; the eigensolver takes the operator's CSR when it
 *    has at most n^2 / 8 nonzeros (the form it would build from the dense
 *    matrix: the same bits, without the n x n floats);
 *  - the optimization: n_epochs epochs; the edges sampled by umap-learn's
 *    epochs_per_sample schedule, the attractive and negative-sample moves
 *    applied IN PLACE IN EDGE ORDER (the order of the seeded, single-threaded
 *    umap-learn), negative sample s of edge e in epoch t drawn from Philox by
 *    (seed, epoch, edge, sample). One thread runs it (four rows' chains
 *    side by side where their positions are disjoint: the same bits as the
 *    plain loop), so the bits are the same at every thread count; the
 *    neighbor search and the graph are split by rows only.
 * Float32 throughout, powers as exp(b log x) through the profile's exp/log.
 */
#include "umap.h"
#include "nndescent.h"
#include "../neighbors/knn.h"
#include "../../core/rng.h"
#include "../../device/device.h"
#include "../../kernels/umap.h"
#include "../../linalg/linalg.h"
#include "../../math/sb_math.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The spectral initialization's row bound: block Lanczos keeps its basis and
 * the operator's products (two n x 1,056 doubles for n_components 2, about
 * 17 KB a row: 4.4 GB at the bound) with no restart. Above it the fit starts
 * from the random initialization and says so (the model's "init"). */
#define UM_MAX_SPECTRAL_ROWS 262144
#define UM_PURPOSE_INIT 0x554d3031u  /* Philox purposes: random init, noise, negatives */
#define UM_PURPOSE_NOISE 0x554d3032u
#define UM_PURPOSE_NEG SB_UM_PURPOSE_NEG /* kernels/umap.h: the batched epochs draw the same samples */

/* the neighbors family's codes (SB_KNN_*), which the model file keeps */
enum { UM_EUCLIDEAN = SB_KNN_EUCLIDEAN, UM_COSINE = SB_KNN_COSINE, UM_MANHATTAN = SB_KNN_MANHATTAN, UM_METRICS = 3 };
static const char *const k_metrics[UM_METRICS] = {"euclidean", "cosine", "manhattan"};
enum { UM_INIT_SPECTRAL = 0, UM_INIT_RANDOM = 1, UM_INIT_ARRAY = 2 };
enum { UM_NBRS_AUTO = 0, UM_NBRS_EXACT = 1, UM_NBRS_NNDESCENT = 2 };
static const char *const k_nbrs[3] = {"auto", "exact", "nndescent"};
enum { UM_OPT_SEQUENTIAL = 0, UM_OPT_BATCHED = 1 };
static const char *const k_opts[2] = {"sequential", "batched"};

typedef struct um_params {
    int32_t n_neighbors, ncomp, metric, n_epochs, neg_rate, init, nbrs;
    int32_t optimize, device; /* UM_OPT_*; sb_device_kind (the epochs' device: batched only) */
    float min_dist, spread, lr, mix, local_conn, gamma;
    uint64_t seed;
} um_params;

static int is(const char *key, const char *a, const char *b) { return !strcmp(key, a) || (b && !strcmp(key, b)); }

static const char *const k_alias_groups[] = {"model|family", "seed|random_state", NULL};

/* *out := the index of v among names[0..n); another value is refused by
 * name: "key='v'" and then hint. */
static sb_status um_choice(const char *key, const char *v, const char *const *names, int32_t n, const char *hint,
                           int32_t *out) {
    for (int32_t q = 0; q < n; q++)
        if (!strcmp(v, names[q])) {
            *out = q;
            return SB_OK;
        }
    return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s='%s'%s", key, v, hint);
}
#define UM_STR2(x) #x
#define UM_STR(x) UM_STR2(x)

/* umap-learn's names; a value outside its documented range, or a parameter
 * this build does not implement (a metric other than euclidean, cosine and
 * manhattan), is refused by name. n_epochs 0 (or none) is umap-learn's rule, fixed at the fit. */
static sb_status um_params_parse(const sb_params *params, um_params *p) {
    memset(p, 0, sizeof *p);
    p->n_neighbors = 15, p->ncomp = 2, p->metric = UM_EUCLIDEAN, p->neg_rate = 5, p->init = UM_INIT_SPECTRAL;
    p->min_dist = 0.1f, p->spread = 1.0f, p->lr = 1.0f, p->mix = 1.0f, p->local_conn = 1.0f, p->gamma = 1.0f;
    sb_status st = sb_params_refuse_aliases(params, k_alias_groups, "UMAP");
    if (st != SB_OK) return st;
    sb_numeric_mode mode;
    if ((st = sb_params_resolve_mode(params, SB_FAMILY_UMAP, &mode)) != SB_OK) return st;
    const char *key, *v;
    for (int64_t e = 0; params && sb_params_entry(params, e, &key, &v) == SB_OK && st == SB_OK; e++) {
        int64_t i;
        if (is(key, "numeric_mode", NULL)) {
            continue;
        } else if (is(key, "model", "family")) {
            if (strcmp(v, "umap")) st = sb_fail(SB_ERR_INVALID_ARGUMENT, "model='%s' is not UMAP (model=umap)", v);
        } else if (is(key, "n_neighbors", NULL)) {
            if ((st = sb_param_int(key, v, 2, 1024, &i)) == SB_OK) p->n_neighbors = (int32_t)i;
        } else if (is(key, "n_components", NULL)) {
            if ((st = sb_param_int(key, v, 1, 100, &i)) == SB_OK) p->ncomp = (int32_t)i;
        } else if (is(key, "metric", NULL)) {
            st = um_choice(key, v, k_metrics, UM_METRICS, " is not supported by UMAP here: euclidean, cosine or "
                           "manhattan (the exact neighbor search of the neighbors family has no other)", &p->metric);
        } else if (is(key, "neighbors", NULL)) {
            st = um_choice(key, v, k_nbrs, 3, ": auto (exact below " UM_STR(SB_NND_AUTO_ROWS) " rows, NN-descent "
                           "from there, as umap-learn), exact or nndescent", &p->nbrs);
        } else if (is(key, "optimize", NULL)) {
            st = um_choice(key, v, k_opts, 2, ": sequential (each move in place, in edge order) or batched (each "
                           "epoch's moves summed as fixed-point integers, docs/umap.md)", &p->optimize);
        } else if (is(key, "device", NULL)) {
            sb_device_kind dk = SB_DEVICE_CPU;
            if ((st = sb_device_parse(v, &dk)) == SB_OK) p->device = dk == SB_DEVICE_CPU_BATCHED ? SB_DEVICE_CPU : dk;
        } else if (is(key, "n_epochs", NULL)) {
            if (!strcmp(v, "none") || !strcmp(v, "None")) p->n_epochs = 0;
            else if ((st = sb_param_int(key, v, 1, 100000, &i)) == SB_OK) p->n_epochs = (int32_t)i;
        } else if (is(key, "negative_sample_rate", NULL)) {
            if ((st = sb_param_int(key, v, 0, 1000, &i)) == SB_OK) p->neg_rate = (int32_t)i;
        } else if (is(key, "init", NULL)) {
            if (!strcmp(v, "spectral")) p->init = UM_INIT_SPECTRAL;
            else if (!strcmp(v, "random")) p->init = UM_INIT_RANDOM;
            else if (!strcmp(v, "array")) p->init = UM_INIT_ARRAY;
            else st = sb_fail(SB_ERR_INVALID_ARGUMENT, "init='%s': spectral, random or array (the rows given)", v);
        } else if (is(key, "min_dist", NULL)) {
            st = sb_param_float(key, v, 0.0f, 1.0e6f, 0, &p->min_dist);
        } else if (is(key, "spread", NULL)) {
            st = sb_param_float(key, v, 0.0f, 1.0e6f, 1, &p->spread);
        } else if (is(key, "learning_rate", NULL)) {
            st = sb_param_float(key, v, 0.0f, 1.0e6f, 1, &p->lr);
        } else if (is(key, "set_op_mix_ratio", NULL)) {
            st = sb_param_float(key, v, 0.0f, 1.0f, 0, &p->mix);
        } else if (is(key, "local_connectivity", NULL)) {
            st = sb_param_float(key, v, 0.0f, 1.0e6f, 0, &p->local_conn);
        } else if (is(key, "repulsion_strength", NULL)) {
            st = sb_param_float(key, v, 0.0f, 1.0e6f, 0, &p->gamma);
        } else if (is(key, "seed", "random_state")) {
            if (!strcmp(v, "none") || !strcmp(v, "None")) p->seed = 0;
            else if ((st = sb_param_int(key, v, 0, INT64_MAX, &i)) == SB_OK) p->seed = (uint64_t)i;
        } else {
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown parameter '%s' for UMAP (docs/umap.md)", key);
        }
    }
    if (st == SB_OK && p->device != SB_DEVICE_CPU && p->optimize != UM_OPT_BATCHED)
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "UMAP: device='%s' runs the epochs of optimize='batched' only; "
                     "optimize='sequential' applies each move in place in edge order, which a GPU cannot split "
                     "(docs/umap.md)", sb_device_kind_name((sb_device_kind)p->device));
    if (st == SB_OK && p->min_dist > p->spread)
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "min_dist=%g must not exceed spread=%g", (double)p->min_dist,
                     (double)p->spread);
    return st;
}

/* x^y for x > 0 through the profile's exp and log (x = 0: 0 for y > 0). */
static inline float um_pow(float x, float y) { return x > 0.0f ? sb_expf(y * sb_logf(x)) : 0.0f; }

/* ---- a and b ---- */

/* a, b of 1 / (1 + a x^(2b)) fitted by least squares to 1 (x < min_dist) or
 * exp(-(x - min_dist) / spread) on x_i = 3 spread i / 299, i = 0..299:
 * Levenberg-Marquardt from (1, 1), 200 steps, every sum in point order; the
 * damping halves after an accepted step and multiplies by 10 otherwise. */
void sb_umap_find_ab(float spread, float min_dist, float *a_out, float *b_out) {
    enum { NP = 300, STEPS = 200 };
    float xs[NP], ys[NP];
    for (int i = 0; i < NP; i++) {
        xs[i] = 3.0f * spread * (float)i / (float)(NP - 1);
        ys[i] = xs[i] < min_dist ? 1.0f : sb_expf(-(xs[i] - min_dist) / spread);
    }
    float a = 1.0f, b = 1.0f, lam = 1e-3f;
    float cost = 0.0f;
    for (int i = 0; i < NP; i++) {
        const float r = 1.0f / (1.0f + a * um_pow(xs[i], 2.0f * b)) - ys[i];
        cost += r * r;
    }
    for (int s = 0; s < STEPS; s++) {
        float jaa = 0.0f, jab = 0.0f, jbb = 0.0f, ga = 0.0f, gb = 0.0f;
        for (int i = 0; i < NP; i++) {
            if (xs[i] <= 0.0f) continue; /* f = 1 and both derivatives 0 at x = 0 */
            const float p = um_pow(xs[i], 2.0f * b), den = 1.0f + a * p, f = 1.0f / den;
            const float r = f - ys[i], f2 = f * f;
            const float da = -p * f2, db = -a * p * 2.0f * sb_logf(xs[i]) * f2;
            jaa += da * da, jab += da * db, jbb += db * db, ga += da * r, gb += db * r;
        }
        const float m00 = jaa * (1.0f + lam), m11 = jbb * (1.0f + lam), det = m00 * m11 - jab * jab;
        if (!(det > 0.0f)) {
            lam *= 10.0f;
            continue;
        }
        const float sa = -(m11 * ga - jab * gb) / det, sb = -(m00 * gb - jab * ga) / det;
        const float na = a + sa, nb = b + sb;
        float nc = 0.0f;
        for (int i = 0; i < NP; i++) {
            const float r = 1.0f / (1.0f + na * um_pow(xs[i], 2.0f * nb)) - ys[i];
            nc += r * r;
        }
        if (na > 0.0f && nb > 0.0f && nc <= cost) {
            a = na, b = nb, cost = nc, lam *= 0.5f;
            if (lam < 1e-7f) lam = 1e-7f;
        } else {
            lam *= 10.0f;
            if (lam > 1e7f) break;
        }
    }
    *a_out = a, *b_out = b;
}

/* ---- the fuzzy simplicial set ---- */

/* rho: the local_conn-th of the nz (>= 1) nonzero distances nzd, in
 * order, interpolated between neighbours (umap-learn's smooth_knn_dist). */
static float um_rho(const float *nzd, int32_t nz, float local_conn) {
    if ((float)nz >= local_conn) {
        const int32_t idx = (int32_t)local_conn;
        const float interp = local_conn - (float)idx;
        if (idx > 0) {
            float rho = nzd[idx - 1];
            if (interp > 1e-5f && idx < nz) rho = rho + interp * (nzd[idx] - nzd[idx - 1]);
            return rho;
        }
        return interp * nzd[0];
    }
    return nzd[nz - 1];
}

/* sigma: the bisection (64 steps at most, from 1) for the scale at which
 * the memberships of d[c0..k) past rho sum to target, then floored at 1e-3
 * of the row's mean distance over all k (rho > 0), or else of *mean_all
 * (NULL: the row's mean again). The sums in neighbor order. */
static float um_sigma(const float *d, int32_t c0, int32_t k, float rho, float target, const float *mean_all) {
    float lo = 0.0f, hi = INFINITY, mid = 1.0f;
    for (int it = 0; it < 64; it++) {
        float psum = 0.0f;
        for (int32_t c = c0; c < k; c++) {
            const float dd = d[c] - rho;
            psum += dd > 0.0f ? sb_expf(-(dd / mid)) : 1.0f;
        }
        if (fabsf(psum - target) < 1e-5f) break;
        if (psum > target) {
            hi = mid;
            mid = (lo + hi) / 2.0f;
        } else {
            lo = mid;
            mid = hi == INFINITY ? mid * 2.0f : (lo + hi) / 2.0f;
        }
    }
    float mean_i = 0.0f;
    for (int32_t c = 0; c < k; c++) mean_i += d[c];
    mean_i /= (float)k;
    const float floor_mean = mean_all ? *mean_all : mean_i;
    if (rho > 0.0f) {
        if (mid < 1e-3f * mean_i) mid = 1e-3f * mean_i;
    } else if (mid < 1e-3f * floor_mean) {
        mid = 1e-3f * floor_mean;
    }
    return mid;
}

typedef struct sm_job {
    const float *dist; /* n x k, the row itself first */
    int64_t n;
    int32_t k;
    float local_conn, mean_all;
    float *rho, *sigma, *w; /* n, n, n x k memberships (the row itself 0) */
} sm_job;

/* Row i's rho and sigma (umap-learn's smooth_knn_dist, documented) and its
 * memberships; rows are independent, so any thread may take any row. */
static void sm_task(void *ctx, int64_t i) {
    const sm_job *j = ctx;
    const int32_t k = j->k;
    const float *d = j->dist + i * k;
    const float target = sb_logf((float)k) / sb_logf(2.0f);
    /* rho: the local_connectivity-th nonzero distance (interpolated) */
    int32_t nz = 0;
    for (int32_t c = 0; c < k; c++) nz += d[c] > 0.0f;
    float rho = 0.0f;
    if (nz > 0) {
        float nzd[1024];
        int32_t q = 0;
        for (int32_t c = 0; c < k && q < 1024; c++)
            if (d[c] > 0.0f) nzd[q++] = d[c];
        nz = q;
        rho = um_rho(nzd, nz, j->local_conn);
    }
    const float mid = um_sigma(d, 1, k, rho, target, &j->mean_all);
    j->rho[i] = rho, j->sigma[i] = mid;
    float *w = j->w + i * k;
    w[0] = 0.0f;
    for (int32_t c = 1; c < k; c++) {
        const float dd = d[c] - rho;
        w[c] = (dd <= 0.0f || mid == 0.0f) ? 1.0f : sb_expf(-(dd / mid));
    }
}

/* ---- the fit ---- */

static sb_status um_record(sb_card *card, const char *tag, sb_dtype dt, const void *v, uint64_t n) {
    return card ? sb_card_record(card, tag, dt, v, n) : SB_OK;
}

/* Whether the fit of n rows takes NN-descent: neighbors=nndescent, or auto
 * from SB_NND_AUTO_ROWS rows (umap-learn's switch to pynndescent). */
static int um_approx(const um_params *p, int64_t n) {
    return p->nbrs == UM_NBRS_NNDESCENT || (p->nbrs == UM_NBRS_AUTO && n >= SB_NND_AUTO_ROWS);
}

/* The neighbors of every row, n x k (k <= n), row i's first entry i itself:
 * the exact search, or NN-descent (nndescent.c) when um_approx. */
static sb_status um_neighbors(const sb_table *t, const um_params *p, int32_t k, int32_t *nbr, float *dist) {
    const int64_t n = t->nrows;
    const int32_t metric = p->metric;
    if (um_approx(p, n)) { /* the rows transform's exact search will take, refused now as the exact fit would */
        sb_status st = sb_knn_rows_check(t->x, n, (int32_t)t->ncols, metric);
        if (st != SB_OK) return st;
        return sb_nndescent(t->x, n, (int32_t)t->ncols, metric, k, p->seed, nbr, dist);
    }
    int64_t *off = NULL, *idx = NULL;
    float *dd = NULL;
    sb_status st = sb_knn_self_query(t, metric, k, -1.0, 1,
                                     SB_DEVICE_CPU, &off, &idx, &dd);
    if (st == SB_OK) {
        for (int64_t i = 0; i < n; i++) {
            int32_t *ni = nbr + i * k;
            float *di = dist + i * k;
            const int64_t cnt = off[i + 1] - off[i];
            int32_t self = -1;
            for (int64_t c = 0; c < k; c++) {
                ni[c] = c < cnt ? (int32_t)idx[off[i] + c] : (int32_t)i;
                di[c] = c < cnt ? dd[off[i] + c] : 0.0f;
                if (ni[c] == i && self < 0) self = (int32_t)c;
            }
            /* the row itself first: a tie at distance 0 with a lower duplicate put it later (or out) */
            if (self < 0) self = k - 1, ni[self] = (int32_t)i, di[self] = 0.0f;
            for (int32_t c = self; c > 0; c--) ni[c] = ni[c - 1], di[c] = di[c - 1];
            ni[0] = (int32_t)i, di[0] = 0.0f;
        }
    }
    sb_free(off), sb_free(idx), sb_free(dd);
    return st;
}

/* The symmetric graph of the memberships w (n x k at the columns nbr) in CSR:
 * row i sorted by column, value mix (a + b - ab) + (1 - mix) ab with
 * a = w(i, j), b = w(j, i). */
static sb_status um_graph(int64_t n, int32_t k, const int32_t *nbr, const float *w, float mix, int64_t **rp_out,
                          int32_t **col_out, float **val_out) {
    const int64_t m = n * k;
    int64_t *cnt = sb_calloc((size_t)n + 1, sizeof(int64_t)), *tcnt = sb_calloc((size_t)n + 1, sizeof(int64_t));
    int32_t *tsrc = sb_malloc(sizeof(int32_t) * (size_t)m);
    float *tw = sb_malloc(sizeof(float) * (size_t)m);
    int64_t *rp = sb_calloc((size_t)n + 1, sizeof(int64_t));
    int32_t *col = sb_malloc(sizeof(int32_t) * (size_t)(2 * m));
    float *val = sb_malloc(sizeof(float) * (size_t)(2 * m));
    int32_t *ord = sb_malloc(sizeof(int32_t) * (size_t)k);
    if (!cnt || !tcnt || !tsrc || !tw || !rp || !col || !val || !ord) {
        sb_free(cnt), sb_free(tcnt), sb_free(tsrc), sb_free(tw), sb_free(rp), sb_free(col), sb_free(val), sb_free(ord);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "UMAP: out of memory for the graph of %lld rows", (long long)n);
    }
    /* the transpose: row j lists the i with j among i's neighbors, i ascending */
    for (int64_t e = 0; e < m; e++)
        if (w[e] > 0.0f) tcnt[nbr[e] + 1]++;
    for (int64_t j = 0; j < n; j++) tcnt[j + 1] += tcnt[j];
    memcpy(cnt, tcnt, sizeof(int64_t) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        for (int32_t c = 0; c < k; c++) {
            const int64_t e = i * k + c;
            if (w[e] > 0.0f) {
                const int64_t at = cnt[nbr[e]]++;
                tsrc[at] = (int32_t)i, tw[at] = w[e];
            }
        }
    int64_t z = 0;
    for (int64_t i = 0; i < n; i++) {
        /* row i's own entries sorted by column (insertion sort; k is small) */
        int32_t no = 0;
        for (int32_t c = 0; c < k; c++) {
            if (!(w[i * k + c] > 0.0f)) continue;
            int32_t q = no++;
            while (q > 0 && nbr[i * k + ord[q - 1]] > nbr[i * k + c]) ord[q] = ord[q - 1], q--;
            ord[q] = c;
        }
        int32_t a = 0;
        int64_t b = tcnt[i];
        const int64_t bend = tcnt[i + 1];
        rp[i] = z;
        while (a < no || b < bend) {
            const int32_t ca = a < no ? nbr[i * k + ord[a]] : INT32_MAX;
            const int32_t cb = b < bend ? tsrc[b] : INT32_MAX;
            float va = 0.0f, vb = 0.0f;
            int32_t cc;
            if (ca <= cb) cc = ca, va = w[i * k + ord[a]], a++;
            else cc = cb;
            if (cb == cc) vb = tw[b], b++;
            const float prod = va * vb;
            const float v = mix * (va + vb - prod) + (1.0f - mix) * prod;
            if (v > 0.0f) col[z] = cc, val[z] = v, z++;
        }
    }
    rp[n] = z;
    sb_free(cnt), sb_free(tcnt), sb_free(tsrc), sb_free(tw), sb_free(ord);
    *rp_out = rp, *col_out = col, *val_out = val;
    return SB_OK;
}

/* A standard normal-shaped draw: the Irwin-Hall sum of 12 Philox uniforms
 * minus 6 (mean 0, variance 1), summed in draw order. */
static float um_noise(uint64_t seed, uint64_t index) {
    float s = 0.0f;
    for (uint32_t sub = 0; sub < 3; sub++) {
        sb_u32 w[4];
        sb_rng_words(seed, UM_PURPOSE_NOISE, index, sub, w);
        for (int q = 0; q < 4; q++) s += sb_u32_to_unit_f32(w[q]);
    }
    return s - 6.0f;
}

static void um_random_init(uint64_t seed, int64_t n, int32_t nc, float *emb) {
    for (int64_t i = 0; i < n * nc; i++) {
        sb_u32 w[4];
        sb_rng_words(seed, UM_PURPOSE_INIT, (uint64_t)i, 0, w);
        emb[i] = sb_u32_to_unit_f32(w[0]) * 20.0f - 10.0f;
    }
}

/* The spectral initialization (see the header comment). SB_ERR_LIMIT when the
 * eigensolver does not converge (the caller falls back to random). */
static sb_status um_spectral(int64_t n, int32_t nc, const int64_t *rp, const int32_t *col, const float *val,
                             uint64_t seed, float *emb) {
    if (n > UM_MAX_SPECTRAL_ROWS || nc + 1 >= n) return SB_ERR_LIMIT;
    /* the operator's nonzeros: sparse (its CSR, the form the eigensolver
     * builds from a dense matrix that sparse: the same bits) when at most
     * n^2 / 8, else the dense n x n */
    const int64_t m = rp[n];
    const int sparse = m <= n * n / 8;
    float *a = sparse ? NULL : sb_calloc((size_t)(n * n), sizeof(float));
    int64_t *arp = sparse ? sb_malloc(sizeof(int64_t) * (size_t)(n + 1)) : NULL;
    int32_t *aci = sparse ? sb_malloc(sizeof(int32_t) * (size_t)(m ? m : 1)) : NULL;
    float *acv = sparse ? sb_malloc(sizeof(float) * (size_t)(m ? m : 1)) : NULL;
    double *s = sb_malloc(sizeof(double) * (size_t)n), *wd = sb_malloc(sizeof(double) * (size_t)(nc + 1));
    double *v = sb_malloc(sizeof(double) * (size_t)(n * (nc + 1)));
    sb_status st = SB_OK;
    if ((sparse ? !arp || !aci || !acv : !a) || !s || !wd || !v) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "UMAP: out of memory for the spectral initialization of %lld rows",
                     (long long)n);
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        double dg = 0.0;
        for (int64_t z = rp[i]; z < rp[i + 1]; z++) dg += (double)val[z];
        s[i] = dg > 0.0 ? 1.0 / sqrt(dg) : 0.0;
    }
    if (sparse) {
        int64_t e = 0;
        for (int64_t i = 0; i < n; i++) {
            arp[i] = e;
            for (int64_t z = rp[i]; z < rp[i + 1]; z++) {
                const float av = (float)((double)val[z] * s[i] * s[col[z]]);
                if (av != 0.0f) aci[e] = col[z], acv[e] = av, e++;
            }
        }
        arp[n] = e;
    } else {
        for (int64_t i = 0; i < n; i++)
            for (int64_t z = rp[i]; z < rp[i + 1]; z++) a[i * n + col[z]] = (float)((double)val[z] * s[i] * s[col[z]]);
    }
    const int64_t want = nc + 1, blk = want + 4 < n ? want + 4 : n;
    sb_krylov_info ki;
    int64_t kcap = 1024 + 4 * blk;
    if (kcap > n) kcap = n;
    if ((st = sparse ? sb_krylov_top_csr(n, arp, aci, acv, want, blk, 1e-4, kcap, seed, wd, v, &ki)
                     : sb_krylov_top(n, a, want, blk, 1e-4, kcap, seed, wd, v, &ki)) != SB_OK)
        goto done;
    float big = 0.0f;
    for (int32_t c = 0; c < nc; c++) {
        int64_t at = 0;
        float cb = -1.0f;
        for (int64_t i = 0; i < n; i++) {
            const float e = (float)v[i * want + c + 1];
            emb[i * nc + c] = e;
            if (fabsf(e) > cb) cb = fabsf(e), at = i;
        }
        if (emb[at * nc + c] < 0.0f)
            for (int64_t i = 0; i < n; i++) emb[i * nc + c] = -emb[i * nc + c];
        if (cb > big) big = cb;
    }
    const float expansion = big > 0.0f ? 10.0f / big : 1.0f;
    for (int64_t i = 0; i < n * nc; i++) emb[i] = emb[i] * expansion + 1e-4f * um_noise(seed, (uint64_t)i);
done:
    sb_free(a), sb_free(arp), sb_free(aci), sb_free(acv), sb_free(s), sb_free(wd), sb_free(v);
    return st;
}

/* Each column mapped onto [0, 10] (umap-learn's rescaling of a spectral start). */
static void um_rescale(int64_t n, int32_t nc, float *emb) {
    for (int32_t c = 0; c < nc; c++) {
        float lo = emb[c], hi = emb[c];
        for (int64_t i = 1; i < n; i++) {
            const float e = emb[i * nc + c];
            if (e < lo) lo = e;
            if (e > hi) hi = e;
        }
        const float span = hi - lo;
        for (int64_t i = 0; i < n; i++) emb[i * nc + c] = span > 0.0f ? 10.0f * (emb[i * nc + c] - lo) / span : 0.0f;
    }
}

#define um_clip sb_um_clip /* a gradient component clipped at +-4 (kernels/umap.h) */

/* ---- the epochs: the in-place edge order, several rows' chains at once ----
 *
 * Each sampled edge is one attractive step and its negative samples are
 * steps after it; every step reads the head's position as the one before left
 * it, so one row's steps are a chain of pow latencies (exp(b log x)). Rows
 * whose steps touch disjoint positions commute: a unit (the run of
 * consecutive edges with one head, the steps it takes this epoch, planned
 * ahead because which edges are sampled and which rows the negatives hit
 * depend on the schedule and Philox alone, never on positions) is started
 * beside the units in flight only when it reads no row they write and writes
 * no row they read; otherwise it waits for them. Each unit's steps run in its
 * own order with the scalar arithmetic of the sequential loop, and any two
 * units whose order could matter run one after the other in edge order, so
 * the embedding is the sequential loop's, bit for bit; the lanes only let the
 * CPU overlap independent chains (the classic dependence test of software
 * pipelining). */
#define UM_LANES 4

typedef struct {
    int32_t *o;      /* the other row of each step: the tail (attractive) or the negative sample */
    uint8_t *neg;    /* 1: a negative sample */
    int64_t cnt, cap, pos;
    int32_t head;
} um_unit;

static int um_unit_grow(um_unit *u, int64_t need) {
    if (need <= u->cap) return 1;
    int64_t cap = u->cap ? u->cap : 64;
    while (cap < need) cap *= 2;
    int32_t *o = sb_realloc(u->o, sizeof(int32_t) * (size_t)cap);
    if (!o) return 0;
    u->o = o;
    uint8_t *g = sb_realloc(u->neg, (size_t)cap);
    if (!g) return 0;
    u->neg = g, u->cap = cap;
    return 1;
}

typedef struct {
    const um_params *p;
    int64_t n, ne;
    const int32_t *head, *tail;
    const float *eps, *epsn;
    float *next, *next_neg;
    int32_t *rcnt, *wcnt; /* per row: in-flight units reading / writing it */
} um_sched;

/* The negative samples an edge draws in epoch ft: the whole periods of epsn
 * between its next negative time and ft (umap-learn's schedule). None
 * without negatives (rate 0: epsn and next_neg are infinite, and their
 * quotient NaN, which no integer holds), nor for a quotient outside any
 * count (a loaded model's values); the device's kernel (kernels/umap.h
 * sb_um_edge) draws by the same rule. */
static inline int32_t um_negatives(int32_t rate, float ft, float next_neg, float epsn) {
    if (rate <= 0) return 0;
    const float r = (ft - next_neg) / epsn;
    return r > -1.0e9f && r < 1.0e9f ? (int32_t)r : 0;
}

/* The edge at position q of the epoch's order. */
static inline int64_t um_edge(int64_t ne, int64_t q) {
#ifdef SB_SABOTAGE_UMAP_EPOCH_ORDER
    return ne - 1 - q; /* separating arm: the epoch's edges in reverse order */
#else
    (void)ne;
    return q;
#endif
}

/* Plans the unit starting at order position *q (advanced past it) for epoch
 * t: its sampled edges' attractive steps and negative samples, the schedule
 * advanced exactly as the sequential loop advances it. 0 when out of memory. */
static int um_plan(const um_sched *s, int32_t t, int64_t *q, um_unit *u) {
    const float ft = (float)t;
    const int64_t n = s->n;
    const int32_t j = s->head[um_edge(s->ne, *q)];
    u->cnt = 0, u->pos = 0, u->head = j;
    for (; *q < s->ne; (*q)++) {
        const int64_t e = um_edge(s->ne, *q);
        if (s->head[e] != j) break;
        if (!(s->next[e] <= ft)) continue;
        s->next[e] += s->eps[e];
        const int32_t nneg = um_negatives(s->p->neg_rate, ft, s->next_neg[e], s->epsn[e]);
        if (!um_unit_grow(u, u->cnt + 1 + (nneg > 0 ? nneg : 0))) return 0;
        u->o[u->cnt] = s->tail[e], u->neg[u->cnt++] = 0;
        sb_u32 w[4];
        for (int32_t k = 0; k < nneg; k++) {
            if ((k & 3) == 0) /* one Philox block serves four samples */
                sb_rng_words(s->p->seed, UM_PURPOSE_NEG, ((uint64_t)t << 40) | (uint64_t)e, (sb_u32)(k >> 2), w);
            u->o[u->cnt] = (int32_t)(((uint64_t)w[k & 3] * (uint64_t)n) >> 32);
            u->neg[u->cnt++] = 1;
        }
        s->next_neg[e] += (float)nneg * s->epsn[e];
    }
    return 1;
}

/* 1 when unit u reads no row an in-flight unit writes and writes no row one reads. */
static int um_free_of(const um_sched *s, const um_unit *u) {
#ifdef SB_SABOTAGE_UMAP_LANE_DEPS
    (void)s, (void)u;
    return 1; /* separating arm: no dependence test */
#endif
    if (s->wcnt[u->head] || s->rcnt[u->head]) return 0;
    for (int64_t i = 0; i < u->cnt; i++) {
        const int32_t r = u->o[i];
        if (s->wcnt[r] || (!u->neg[i] && s->rcnt[r])) return 0;
    }
    return 1;
}

/* Marks unit u in flight (d = 1) or done (d = -1). */
static void um_mark(const um_sched *s, const um_unit *u, int32_t d) {
    s->rcnt[u->head] += d, s->wcnt[u->head] += d;
    for (int64_t i = 0; i < u->cnt; i++) {
        s->rcnt[u->o[i]] += d;
        if (!u->neg[i]) s->wcnt[u->o[i]] += d;
    }
}

/* The epochs (see the header comment): edges (head[e], tail[e]) in CSR order. */
static sb_status um_optimize(const um_params *p, int32_t n_epochs, float a, float b, int64_t n, int64_t ne,
                        const int32_t *head, const int32_t *tail, const float *eps, float *emb, sb_card *card) {
    const int32_t nc = p->ncomp;
    float *next = sb_malloc(sizeof(float) * (size_t)(ne ? ne : 1)), *next_neg = sb_malloc(sizeof(float) * (size_t)(ne ? ne : 1));
    float *epsn = sb_malloc(sizeof(float) * (size_t)(ne ? ne : 1));
    int32_t *rcnt = sb_calloc((size_t)n, sizeof(int32_t)), *wcnt = sb_calloc((size_t)n, sizeof(int32_t));
    um_unit units[UM_LANES + 1];
    memset(units, 0, sizeof units);
    sb_status st = SB_OK;
    if (!next || !next_neg || !epsn || !rcnt || !wcnt) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "UMAP: out of memory for %lld edges", (long long)ne);
        goto done;
    }
    const float rate = (float)p->neg_rate;
    for (int64_t e = 0; e < ne; e++) {
        next[e] = eps[e];
        epsn[e] = p->neg_rate > 0 ? eps[e] / rate : INFINITY;
        next_neg[e] = epsn[e];
    }
    const float two_ab = 2.0f * a * b, two_gb = 2.0f * p->gamma * b;
    const um_sched s = {p, n, ne, head, tail, eps, epsn, next, next_neg, rcnt, wcnt};
    um_unit *lane[UM_LANES], *pend = &units[UM_LANES];
    for (int32_t t = 0; t < n_epochs; t++) {
        const float alpha = p->lr * (1.0f - (float)t / (float)n_epochs);
        int64_t q = 0;
        int32_t busy = 0, have_pend = 0, stalled = 0; /* stalled: pend waits until a unit in flight ends */
        for (int l = 0; l < UM_LANES; l++) lane[l] = NULL;
        for (;;) {
            /* start units in edge order while lanes are free and the next commutes with those in flight */
            for (int l = 0; l < UM_LANES; l++) {
                if (lane[l]) continue;
                while (!have_pend && q < ne) {
                    if (!um_plan(&s, t, &q, pend)) {
                        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "UMAP: out of memory for an epoch's steps");
                        goto done;
                    }
                    have_pend = pend->cnt > 0;
                }
                if (!have_pend || stalled) break;
                if (!um_free_of(&s, pend)) {
                    stalled = 1;
                    break;
                }
                um_mark(&s, pend, 1);
                um_unit *freeb = NULL; /* the buffer no lane holds, other than pend */
                for (int f = 0; f <= UM_LANES && !freeb; f++) {
                    int held = &units[f] == pend;
                    for (int m = 0; m < UM_LANES; m++) held |= lane[m] == &units[f];
                    if (!held) freeb = &units[f];
                }
                lane[l] = pend, pend = freeb, have_pend = 0, busy++;
            }
            if (!busy) break; /* nothing in flight: nothing pending either (it would have started) */
            /* one step of every lane: the distances, the powers, the moves */
            float x[UM_LANES], pb[UM_LANES];
            float *cur[UM_LANES], *oth[UM_LANES];
            for (int l = 0; l < UM_LANES; l++) {
                x[l] = 0.0f;
                if (!lane[l]) continue;
                const um_unit *u = lane[l];
                cur[l] = emb + (int64_t)u->head * nc, oth[l] = emb + (int64_t)u->o[u->pos] * nc;
                float d2 = 0.0f;
                for (int32_t c = 0; c < nc; c++) {
                    const float df = cur[l][c] - oth[l][c];
                    d2 += df * df;
                }
                x[l] = d2;
            }
            for (int l = 0; l < UM_LANES; l++) pb[l] = x[l] > 0.0f ? sb_expf(b * sb_logf(x[l])) : 0.0f;
            for (int l = 0; l < UM_LANES; l++) {
                if (!lane[l]) continue;
                um_unit *u = lane[l];
                float *cu = cur[l], *ot = oth[l];
                if (!u->neg[u->pos]) { /* attractive: both ends */
                    float gc = 0.0f;
                    if (x[l] > 0.0f) gc = -two_ab * (pb[l] / x[l]) / (a * pb[l] + 1.0f);
                    for (int32_t c = 0; c < nc; c++) {
                        const float g = um_clip(gc * (cu[c] - ot[c]));
                        cu[c] += g * alpha;
                        ot[c] -= g * alpha;
                    }
                } else { /* a negative sample: the head only */
                    const float dn = x[l];
                    float gr;
                    int skip = 0;
                    if (dn > 0.0f) gr = two_gb / ((0.001f + dn) * (a * pb[l] + 1.0f));
                    else gr = 0.0f, skip = u->o[u->pos] == u->head;
                    if (!skip)
                        for (int32_t c = 0; c < nc; c++) {
                            const float g = gr > 0.0f ? um_clip(gr * (cu[c] - ot[c])) : 4.0f;
                            cu[c] += g * alpha;
                        }
                }
                if (++u->pos == u->cnt) um_mark(&s, u, -1), lane[l] = NULL, busy--, stalled = 0;
            }
        }
        if ((st = sb_umap_record_epoch(card, t, n_epochs, emb, (uint64_t)(n * nc))) != SB_OK) break;
    }
done:
    for (int f = 0; f <= UM_LANES; f++) sb_free(units[f].o), sb_free(units[f].neg);
    sb_free(next), sb_free(next_neg), sb_free(epsn), sb_free(rcnt), sb_free(wcnt);
    return st;
}

/* The training table's shape, as both fits check it: two rows and a feature
 * at least, at most INT32_MAX / 2 rows; refused by name. */
static sb_status um_shape_check(int64_t n, int64_t d) {
    if (n < 2 || d < 1)
        return sb_fail(SB_ERR_INVALID_INPUT, "UMAP needs at least two rows and one feature (given %lld rows, %lld "
                       "features)", (long long)n, (long long)d);
    if (n > INT32_MAX / 2) return sb_fail(SB_ERR_LIMIT, "UMAP: %lld rows (at most %d)", (long long)n, INT32_MAX / 2);
    return SB_OK;
}

/* sb_umap_fit_transform's work; *init_used (when not NULL) receives how the
 * embedding started: p.init, or UM_INIT_RANDOM where "spectral" fell back
 * (above UM_MAX_SPECTRAL_ROWS rows, n_components + 1 >= n, or a solve that
 * did not converge). */
static sb_status um_fit_embed(const sb_params *params, const sb_dataset *train, const float *init, sb_card *card,
                              float *out, size_t cap, size_t *needed, int32_t *init_used) {
    um_params p;
    sb_status st = um_params_parse(params, &p);
    if (st != SB_OK) return st;
    if (init_used) *init_used = p.init;
    const sb_table *t = &train->t;
    const int64_t n = t->nrows, d = t->ncols;
    const int32_t nc = p.ncomp;
    if (needed) *needed = (size_t)(n * nc);
    if ((st = um_shape_check(n, d)) != SB_OK) return st;
    if (t->label)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "UMAP: the rows carry a label, and supervised UMAP (y=, umap-learn's "
                       "target graph) is not built: fit the rows without it (docs/umap.md)");
    if (t->weight)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "UMAP: the rows carry sample weights, which UMAP does not take");
    for (int64_t i = 0; i < n * d; i++)
        if (!isfinite(t->x[i]))
            return sb_fail(SB_ERR_INVALID_INPUT, "UMAP: row %lld feature %lld is not finite", (long long)(i / d),
                           (long long)(i % d));
    if (!out || cap < (size_t)(n * nc))
        return sb_fail(SB_ERR_LIMIT, "UMAP: the embedding needs %lld floats (%lld x %d), cap is %zu",
                       (long long)(n * nc), (long long)n, (int)nc, cap);
    if (p.init == UM_INIT_ARRAY && !init)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "UMAP: init=array without the initial rows");
    if (p.init != UM_INIT_ARRAY && init)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "UMAP: initial rows given with init=%s (init=array uses them)",
                       p.init == UM_INIT_RANDOM ? "random" : "spectral");
    if (init)
        for (int64_t i = 0; i < n * nc; i++)
            if (!isfinite(init[i])) return sb_fail(SB_ERR_INVALID_INPUT, "UMAP: init value %lld is not finite", (long long)i);
    /* n_neighbors larger than the data: clamped to n - 1, as umap-learn does (with its warning) */
    int32_t kq = p.n_neighbors;
    if (kq > n - 1) kq = (int32_t)(n - 1);
    if (kq < 1) kq = 1;
    const int32_t k = kq + 0; /* umap-learn's n_neighbors counts the row itself */
    const int32_t kk = k < 2 ? 2 : k;
    const int32_t n_epochs = p.n_epochs > 0 ? p.n_epochs : (n <= 10000 ? 500 : 200);
    int32_t *nbr = sb_malloc(sizeof(int32_t) * (size_t)(n * kk));
    float *dist = sb_malloc(sizeof(float) * (size_t)(n * kk)), *w = sb_malloc(sizeof(float) * (size_t)(n * kk));
    float *rho = sb_malloc(sizeof(float) * (size_t)n), *sigma = sb_malloc(sizeof(float) * (size_t)n);
    int64_t *rp = NULL;
    int32_t *col = NULL, *head = NULL, *tail = NULL;
    float *val = NULL, *eps = NULL;
    if (!nbr || !dist || !w || !rho || !sigma) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "UMAP: out of memory for %lld rows", (long long)n);
        goto done;
    }
    if (card) {
        char dims[128];
        snprintf(dims, sizeof dims, "%lld x %lld, %s, k %d, %d components, %d epochs", (long long)n, (long long)d,
                 k_metrics[p.metric], (int)kk, (int)nc, (int)n_epochs);
        if (um_approx(&p, n)) snprintf(dims + strlen(dims), sizeof dims - strlen(dims), ", nndescent");
        if (p.optimize == UM_OPT_BATCHED) snprintf(dims + strlen(dims), sizeof dims - strlen(dims), ", batched");
        if ((st = sb_card_set_meta(card, "umap.data", dims)) != SB_OK) goto done;
    }
    if ((st = um_neighbors(t, &p, kk, nbr, dist)) != SB_OK) goto done;
    if ((st = um_record(card, "umap.neighbors", SB_DTYPE_I32, nbr, (uint64_t)(n * kk))) != SB_OK ||
        (st = um_record(card, "umap.distances", SB_DTYPE_F32, dist, (uint64_t)(n * kk))) != SB_OK)
        goto done;
    float mean_all = 0.0f;
    for (int64_t i = 0; i < n * kk; i++) mean_all += dist[i];
    mean_all /= (float)(n * kk);
    sm_job sj = {dist, n, kk, p.local_conn, mean_all, rho, sigma, w};
    sb_parallel_for(n, sm_task, &sj);
    if ((st = um_record(card, "umap.rho", SB_DTYPE_F32, rho, (uint64_t)n)) != SB_OK ||
        (st = um_record(card, "umap.sigma", SB_DTYPE_F32, sigma, (uint64_t)n)) != SB_OK)
        goto done;
    if ((st = um_graph(n, kk, nbr, w, p.mix, &rp, &col, &val)) != SB_OK) goto done;
    /* entries below max / n_epochs dropped (they would never be sampled) */
    float vmax = 0.0f;
    for (int64_t z = 0; z < rp[n]; z++)
        if (val[z] > vmax) vmax = val[z];
    const float floor_v = vmax / (float)n_epochs;
    int64_t ne = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t s0 = rp[i], s1 = rp[i + 1];
        rp[i] = ne;
        for (int64_t z = s0; z < s1; z++)
            if (!(val[z] < floor_v)) col[ne] = col[z], val[ne] = val[z], ne++;
    }
    rp[n] = ne;
    if ((st = um_record(card, "umap.graph.indptr", SB_DTYPE_U64, rp, (uint64_t)(n + 1))) != SB_OK ||
        (st = um_record(card, "umap.graph.indices", SB_DTYPE_I32, col, (uint64_t)ne)) != SB_OK ||
        (st = um_record(card, "umap.graph.data", SB_DTYPE_F32, val, (uint64_t)ne)) != SB_OK)
        goto done;
    float a, b;
    sb_umap_find_ab(p.spread, p.min_dist, &a, &b);
    const float ab[2] = {a, b};
    if ((st = um_record(card, "umap.ab", SB_DTYPE_F32, ab, 2)) != SB_OK) goto done;
    /* the initialization */
    if (p.init == UM_INIT_ARRAY) {
        memcpy(out, init, sizeof(float) * (size_t)(n * nc));
    } else if (p.init == UM_INIT_RANDOM) {
        um_random_init(p.seed, n, nc, out);
    } else {
        st = um_spectral(n, nc, rp, col, val, p.seed, out);
        if (st == SB_OK) {
            um_rescale(n, nc, out);
        } else if (st == SB_ERR_LIMIT) {
            sb_clear_error();
            um_random_init(p.seed, n, nc, out); /* umap-learn's fallback when the spectral solve fails */
            if (init_used) *init_used = UM_INIT_RANDOM;
            st = SB_OK;
        } else {
            goto done;
        }
    }
    if ((st = um_record(card, "umap.init", SB_DTYPE_F32, out, (uint64_t)(n * nc))) != SB_OK) goto done;
    /* the edges and their sampling periods */
    head = sb_malloc(sizeof(int32_t) * (size_t)(ne ? ne : 1)), tail = sb_malloc(sizeof(int32_t) * (size_t)(ne ? ne : 1));
    eps = sb_malloc(sizeof(float) * (size_t)(ne ? ne : 1));
    if (!head || !tail || !eps) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "UMAP: out of memory for %lld edges", (long long)ne);
        goto done;
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t z = rp[i]; z < rp[i + 1]; z++) {
            head[z] = (int32_t)i, tail[z] = col[z];
            const float ns = (float)n_epochs * (val[z] / vmax);
            eps[z] = ns > 0.0f ? (float)n_epochs / ns : -1.0f;
        }
    if (p.optimize == UM_OPT_BATCHED) {
        const sb_umap_epochs ea = {n, ne, nc, n_epochs, p.neg_rate, p.device, a, b, p.gamma, p.lr, p.seed,
                                   head, tail, eps};
        st = sb_umap_optimize_batched(&ea, out, card);
    } else {
        st = um_optimize(&p, n_epochs, a, b, n, ne, head, tail, eps, out, card);
    }
    if (st != SB_OK) goto done;
    if ((st = um_record(card, "umap.embedding", SB_DTYPE_F32, out, (uint64_t)(n * nc))) != SB_OK) goto done;
done:
    sb_free(nbr), sb_free(dist), sb_free(w), sb_free(rho), sb_free(sigma);
    sb_free(rp), sb_free(col), sb_free(val), sb_free(head), sb_free(tail), sb_free(eps);
    return st;
}

sb_status sb_umap_fit_transform(const sb_params *params, const sb_dataset *train, const float *init, sb_card *card,
                                float *out, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!params || !train) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_umap_fit_transform: NULL argument");
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    return um_fit_embed(params, train, init, card, out, cap, needed, NULL);
}

/* ---- transform ---- */

/* A 64-bit key of a query row's float bits (FNV-1a over the words): the
 * negative samples of a query are keyed by its values, not its position in
 * the batch, so a row's embedding is the same however the queries are
 * batched. */
static uint64_t um_row_key(const float *r, int64_t d) {
    uint64_t h = 1469598103934665603ull;
    for (int64_t f = 0; f < d; f++) {
        uint32_t u;
        memcpy(&u, &r[f], 4);
        for (int q = 0; q < 4; q++) h = (h ^ ((u >> (8 * q)) & 0xffu)) * 1099511628211ull;
    }
    return h;
}

typedef struct tr_job {
    const um_params *p;
    const float *x, *emb;   /* queries (nq x d), the frozen training embedding (n x nc) */
    const int32_t *nbr;     /* nq x k training neighbors */
    const float *dist;      /* nq x k */
    int64_t n, d;
    int32_t k, n_epochs;
    float a, b;
    float *out;             /* nq x nc */
} tr_job;

/* Query q's embedding: its memberships to its k training neighbors
 * (smooth_knn_dist with local_connectivity - 1, no row of its own), the
 * membership-weighted mean of their embeddings as the start, then n_epochs of
 * moves of the query alone (the training embedding frozen), its edges in
 * neighbor order, negatives drawn from the training rows. Everything is the
 * query's own: any thread may take any query. */
static void tr_task(void *ctx, int64_t q) {
    const tr_job *j = ctx;
    const um_params *p = j->p;
    const int32_t k = j->k, nc = p->ncomp;
    const float *d = j->dist + q * k;
    const int32_t *nb = j->nbr + q * k;
    float w[1024], eps[1024], next[1024], next_neg[1024], epsn[1024];
    /* rho and sigma over all k neighbors (the query is not among them) */
    const float lc = p->local_conn - 1.0f > 0.0f ? p->local_conn - 1.0f : 0.0f;
    const float target = sb_logf((float)k) / sb_logf(2.0f);
    float rho = 0.0f;
    {
        float nzd[1024];
        int32_t nz = 0;
        for (int32_t c = 0; c < k; c++)
            if (d[c] > 0.0f) nzd[nz++] = d[c];
        if (nz > 0) rho = um_rho(nzd, nz, lc);
    }
    const float mid = um_sigma(d, 0, k, rho, target, NULL);
    float wsum = 0.0f, wmax = 0.0f;
    for (int32_t c = 0; c < k; c++) {
        const float dd = d[c] - rho;
        w[c] = (dd <= 0.0f || mid == 0.0f) ? 1.0f : sb_expf(-(dd / mid));
        wsum += w[c];
        if (w[c] > wmax) wmax = w[c];
    }
    /* the start: the membership-weighted mean of the neighbors' embeddings */
    float *cur = j->out + q * nc;
    for (int32_t c = 0; c < nc; c++) {
        float s = 0.0f;
        for (int32_t e = 0; e < k; e++) s += w[e] * j->emb[(int64_t)nb[e] * nc + c];
        cur[c] = wsum > 0.0f ? s / wsum : j->emb[(int64_t)nb[0] * nc + c];
    }
    /* the schedule from the query's own largest membership (batch-independent) */
    const float floor_v = wmax / (float)j->n_epochs;
    const float rate = (float)p->neg_rate;
    for (int32_t e = 0; e < k; e++) {
        const float v = w[e] < floor_v ? 0.0f : w[e];
        const float ns = (float)j->n_epochs * (v / wmax);
        eps[e] = ns > 0.0f ? (float)j->n_epochs / ns : -1.0f;
        next[e] = eps[e];
        epsn[e] = p->neg_rate > 0 ? eps[e] / rate : INFINITY;
        next_neg[e] = epsn[e];
    }
    const uint64_t key = p->seed ^ um_row_key(j->x + q * j->d, j->d);
    const float two_ab = 2.0f * j->a * j->b, two_gb = 2.0f * p->gamma * j->b, a = j->a, b = j->b;
    for (int32_t t = 0; t < j->n_epochs; t++) {
        const float alpha = p->lr * (1.0f - (float)t / (float)j->n_epochs), ft = (float)t;
        for (int32_t e = 0; e < k; e++) {
            if (!(eps[e] > 0.0f) || !(next[e] <= ft)) continue;
            const float *oth = j->emb + (int64_t)nb[e] * nc;
            float d2 = 0.0f;
            for (int32_t c = 0; c < nc; c++) {
                const float df = cur[c] - oth[c];
                d2 += df * df;
            }
            float gc = 0.0f;
            if (d2 > 0.0f) {
                const float pb = um_pow(d2, b);
                gc = -two_ab * (pb / d2) / (a * pb + 1.0f);
            }
            for (int32_t c = 0; c < nc; c++) cur[c] += um_clip(gc * (cur[c] - oth[c])) * alpha;
            next[e] += eps[e];
            const int32_t nneg = um_negatives(p->neg_rate, ft, next_neg[e], epsn[e]);
            for (int32_t s = 0; s < nneg; s++) {
                sb_u32 wd[4];
                sb_rng_words(key, UM_PURPOSE_NEG + 1u, ((uint64_t)t << 40) | (uint64_t)e, (sb_u32)(s >> 2), wd);
                const int64_t r = (int64_t)(((uint64_t)wd[s & 3] * (uint64_t)j->n) >> 32);
                const float *o = j->emb + r * nc;
                float dn = 0.0f;
                for (int32_t c = 0; c < nc; c++) {
                    const float df = cur[c] - o[c];
                    dn += df * df;
                }
                const float gr = dn > 0.0f ? two_gb / ((0.001f + dn) * (a * um_pow(dn, b) + 1.0f)) : 0.0f;
                for (int32_t c = 0; c < nc; c++) cur[c] += (gr > 0.0f ? um_clip(gr * (cur[c] - o[c])) : 4.0f) * alpha;
            }
            next_neg[e] += (float)nneg * epsn[e];
        }
    }
}

/* The rows of qt (finite, d features) embedded against the frozen fit of p:
 * the training rows x (n x d) and their embedding (n x ncomp). Each query's
 * neighbors by the exact search, then tr_task on any thread. */
static sb_status um_transform_rows(const um_params *p, const float *x, int64_t n, int64_t d, const float *embedding,
                                   const sb_table *qt, float *out) {
    const int64_t nq = qt->nrows;
    if (nq == 0) return SB_OK;
    int32_t k = p->n_neighbors;
    if (k > n - 1) k = (int32_t)(n - 1);
    if (k > 1024) return sb_fail(SB_ERR_LIMIT, "UMAP transform: n_neighbors=%d (at most 1024)", (int)k);
    const int32_t n_epochs = p->n_epochs > 0 ? (p->n_epochs / 3 > 0 ? p->n_epochs / 3 : 1) : (n <= 10000 ? 100 : 30);
    sb_status st = SB_OK;
    sb_model *nm = NULL;
    int64_t *off = NULL, *idx = NULL, got = 0;
    float *dd = NULL, *dist = sb_malloc(sizeof(float) * (size_t)(nq * k));
    int32_t *nbr = sb_malloc(sizeof(int32_t) * (size_t)(nq * k));
    if (!dist || !nbr) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "UMAP transform: out of memory for %lld queries", (long long)nq);
        goto done;
    }
    if ((st = sb_model_alloc(&nm)) != SB_OK) goto done;
    nm->family = SB_FAMILY_KNN, nm->num_features = (int32_t)d, nm->num_class = 1;
    if (!(nm->knn = sb_knn_alloc(SB_KNN_NEIGHBORS, n, (int32_t)d))) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "UMAP transform: out of memory for %lld rows", (long long)n);
        goto done;
    }
    nm->knn->n_neighbors = k, nm->knn->metric = p->metric;
    memcpy(nm->knn->x, x, sizeof(float) * (size_t)(n * d));
    if ((st = sb_knn_prepare(nm->knn, (int32_t)d)) != SB_OK) goto done;
    if ((st = sb_knn_query(nm, qt, k, -1.0, 1, SB_DEVICE_CPU, &got, &off, &idx, &dd)) != SB_OK) goto done;
    for (int64_t i = 0; i < nq; i++)
        for (int32_t c = 0; c < k; c++) {
            const int64_t at = off[i] + (c < off[i + 1] - off[i] ? c : 0);
            nbr[i * k + c] = (int32_t)idx[at], dist[i * k + c] = dd[at];
        }
    float a, b;
    sb_umap_find_ab(p->spread, p->min_dist, &a, &b);
    tr_job j = {p, qt->x, embedding, nbr, dist, n, d, k, n_epochs, a, b, out};
    sb_parallel_for(nq, tr_task, &j);
done:
    sb_model_free(nm);
    sb_free(off), sb_free(idx), sb_free(dd), sb_free(dist), sb_free(nbr);
    return st;
}

/* The first non-finite value of the nq x d queries refused by name. */
static sb_status um_check_queries(const sb_table *qt, int64_t d) {
    if (qt->ncols != d)
        return sb_fail(SB_ERR_INVALID_INPUT, "UMAP transform: the queries have %lld features, the training rows %lld",
                       (long long)qt->ncols, (long long)d);
    const int64_t bad = sb_first_nonfinite(qt->x, qt->nrows * d);
    if (bad >= 0)
        return sb_fail(SB_ERR_INVALID_INPUT, "UMAP transform: query row %lld feature %lld is %s", (long long)(bad / d),
                       (long long)(bad % d), isnan(qt->x[bad]) ? "missing (NaN)" : "infinite");
    return SB_OK;
}

sb_status sb_umap_transform(const sb_params *params, const sb_dataset *train, const float *embedding,
                            const sb_dataset *queries, float *out, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!params || !train || !embedding || !queries)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_umap_transform: NULL argument");
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    um_params p;
    sb_status st = um_params_parse(params, &p);
    if (st != SB_OK) return st;
    const sb_table *t = &train->t, *qt = &queries->t;
    const int64_t n = t->nrows, d = t->ncols, nq = qt->nrows;
    const int32_t nc = p.ncomp;
    if (needed) *needed = (size_t)(nq * nc);
    if (n < 2 || d < 1) return sb_fail(SB_ERR_INVALID_INPUT, "UMAP transform: the training rows are %lld (at least 2)",
                                       (long long)n);
    if ((st = um_check_queries(qt, d)) != SB_OK) return st;
    for (int64_t i = 0; i < n * nc; i++)
        if (!isfinite(embedding[i]))
            return sb_fail(SB_ERR_INVALID_INPUT, "UMAP transform: embedding value %lld is not finite", (long long)i);
    if (!out || cap < (size_t)(nq * nc))
        return sb_fail(SB_ERR_LIMIT, "UMAP transform: the result needs %lld floats, cap is %zu", (long long)(nq * nc), cap);
    return um_transform_rows(&p, t->x, n, d, embedding, qt, out);
}

/* ---- the model (family 15): a frozen fit in the version 2 file ---- */

static void um_to_state(const um_params *p, sb_umap *u) {
    u->n_neighbors = p->n_neighbors, u->ncomp = p->ncomp, u->metric = p->metric, u->n_epochs = p->n_epochs;
    u->neg_rate = p->neg_rate, u->init = p->init;
    u->min_dist = p->min_dist, u->spread = p->spread, u->lr = p->lr, u->mix = p->mix;
    u->local_conn = p->local_conn, u->gamma = p->gamma, u->seed = p->seed;
}

static void um_from_state(const sb_umap *u, um_params *p) {
    memset(p, 0, sizeof *p);
    p->n_neighbors = u->n_neighbors, p->ncomp = u->ncomp, p->metric = u->metric, p->n_epochs = u->n_epochs;
    p->neg_rate = u->neg_rate, p->init = u->init;
    p->min_dist = u->min_dist, p->spread = u->spread, p->lr = u->lr, p->mix = u->mix;
    p->local_conn = u->local_conn, p->gamma = u->gamma, p->seed = u->seed;
}

const char *sb_umap_state_check(const sb_umap *u) {
    if (u->n_neighbors < 2 || u->n_neighbors > 1024) return "n_neighbors outside 2..1024";
    if (u->ncomp < 1 || u->ncomp > 100) return "n_components outside 1..100";
    if (u->metric < 0 || u->metric >= UM_METRICS) return "metric is not 0 (euclidean), 1 (cosine) or 2 (manhattan)";
    if (u->n_epochs < 0 || u->n_epochs > 100000) return "n_epochs outside 0 (None)..100000";
    if (u->neg_rate < 0 || u->neg_rate > 1000) return "negative_sample_rate outside 0..1000";
    if (u->init < UM_INIT_SPECTRAL || u->init > UM_INIT_ARRAY) return "init is not 0, 1 or 2";
    if (!(u->min_dist >= 0.0f && u->min_dist <= 1.0e6f) || !(u->spread > 0.0f && u->spread <= 1.0e6f) ||
        u->min_dist > u->spread)
        return "min_dist or spread out of range (0 <= min_dist <= spread)";
    if (!(u->lr > 0.0f && u->lr <= 1.0e6f) || !(u->mix >= 0.0f && u->mix <= 1.0f) ||
        !(u->local_conn >= 0.0f && u->local_conn <= 1.0e6f) || !(u->gamma >= 0.0f && u->gamma <= 1.0e6f))
        return "learning_rate, set_op_mix_ratio, local_connectivity or repulsion_strength out of range";
    if (u->seed > (uint64_t)INT64_MAX) return "random_state above 2^63 - 1";
    float a, b;
    sb_umap_find_ab(u->spread, u->min_dist, &a, &b);
    if (memcmp(&a, &u->a, sizeof a) || memcmp(&b, &u->b, sizeof b)) return "a and b are not the curve of min_dist and spread";
    return NULL;
}

/* The canonical parameter text of a fit (keys sorted by byte). */
static sb_status um_params_text(const um_params *p, char **out) {
    static const char *const inits[3] = {"spectral", "random", "array"};
    char buf[768], ep[24], nb[32] = "", op[24] = "";
    if (p->n_epochs > 0) snprintf(ep, sizeof ep, "%d", (int)p->n_epochs);
    else snprintf(ep, sizeof ep, "none");
    /* neighbors is written when not the default auto (a file of auto reads as before the parameter existed) */
    if (p->nbrs != UM_NBRS_AUTO) snprintf(nb, sizeof nb, "neighbors=%s\n", k_nbrs[p->nbrs]);
    /* optimize likewise when not the default sequential; the device is not written (every device gives
     * the same bits: one model) */
    if (p->optimize != UM_OPT_SEQUENTIAL) snprintf(op, sizeof op, "optimize=%s\n", k_opts[p->optimize]);
    const int n = snprintf(buf, sizeof buf,
                           "init=%s\nlearning_rate=%.9g\nlocal_connectivity=%.9g\nmetric=%s\nmin_dist=%.9g\nmodel=umap\n"
                           "n_components=%d\nn_epochs=%s\nn_neighbors=%d\nnegative_sample_rate=%d\n%s%srandom_state=%llu\n"
                           "repulsion_strength=%.9g\nset_op_mix_ratio=%.9g\nspread=%.9g\n",
                           inits[p->init], (double)p->lr, (double)p->local_conn, k_metrics[p->metric],
                           (double)p->min_dist, (int)p->ncomp, ep, (int)p->n_neighbors, (int)p->neg_rate, nb, op,
                           (unsigned long long)p->seed, (double)p->gamma, (double)p->mix, (double)p->spread);
    if (n >= (int)sizeof buf) return sb_fail(SB_ERR_LIMIT, "UMAP: the parameter text is too long");
    *out = sb_strdup(buf);
    return *out ? SB_OK : sb_fail(SB_ERR_OUT_OF_MEMORY, "UMAP: out of memory");
}

sb_status sb_umap_fit(const sb_params *params, const sb_dataset *train, const float *init, sb_card *card,
                      sb_model **out) {
    sb_clear_error();
    if (out) *out = NULL;
    if (!params || !train || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_umap_fit: NULL argument");
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    um_params p;
    sb_status st = um_params_parse(params, &p);
    if (st != SB_OK) return st;
    const sb_table *t = &train->t;
    const int64_t n = t->nrows, d = t->ncols;
    if ((st = um_shape_check(n, d)) != SB_OK) return st;
    char *text = NULL;
    if ((st = um_params_text(&p, &text)) != SB_OK) return st;
    sb_model *m = NULL;
    if ((st = sb_model_alloc(&m)) != SB_OK) {
        sb_free(text);
        return st;
    }
    m->family = SB_FAMILY_UMAP;
    m->objective = SB_OBJ_REGRESSION;
    m->num_features = (int32_t)d;
    m->num_class = 1;
    m->params = text;
    sb_umap *u = m->umap = sb_umap_alloc(n, (int32_t)d, p.ncomp);
    if (!u) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "UMAP: out of memory for %lld x %lld", (long long)n, (long long)d);
    int32_t init_used = p.init;
    if (st == SB_OK) st = um_fit_embed(params, train, init, card, u->emb, (size_t)(n * p.ncomp), NULL, &init_used);
    if (st == SB_OK) {
        um_to_state(&p, u);
        u->init = init_used; /* the file's init field: how the fit started (the text keeps what was asked) */
        sb_umap_find_ab(p.spread, p.min_dist, &u->a, &u->b);
        memcpy(u->x, t->x, sizeof(float) * (size_t)(n * d));
        st = sb_model_copy_names(m, t->names, d, "UMAP");
    }
    if (st == SB_OK && card) st = sb_model_record_bytes(card, m, "umap.model_bytes");
    if (st != SB_OK) {
        sb_model_free(m);
        return st;
    }
    *out = m;
    return SB_OK;
}

sb_status sb_umap_model_transform(const sb_model *m, const sb_table *qt, int32_t kind, float *out, size_t cap,
                                  size_t *needed) {
    const sb_umap *u = m->umap;
    if (!u) return sb_fail(SB_ERR_INVALID_ARGUMENT, "a UMAP model without its fit");
    if (kind != SB_PREDICT_TRANSFORM)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "a UMAP model transforms (SB_PREDICT_TRANSFORM: the n x n_components "
                       "embedding of new rows); prediction kind %d is not UMAP's", (int)kind);
    const int64_t nq = qt->nrows, nc = u->ncomp;
    if (needed) *needed = (size_t)(nq * nc);
    sb_status st = um_check_queries(qt, m->num_features);
    if (st != SB_OK || cap == 0) return st; /* cap 0 asks the count */
    if (!out || cap < (size_t)(nq * nc))
        return sb_fail(SB_ERR_LIMIT, "UMAP transform: the result needs %lld floats, cap is %zu", (long long)(nq * nc), cap);
    um_params p;
    um_from_state(u, &p);
    return um_transform_rows(&p, u->x, u->n, m->num_features, u->emb, qt, out);
}

sb_status sb_umap_int(const sb_model *m, const char *name, int64_t *out) {
    const sb_umap *u = m->umap;
    if (!strcmp(name, "n_samples_fit")) *out = u->n;
    else if (!strcmp(name, "n_components")) *out = u->ncomp;
    else if (!strcmp(name, "n_neighbors")) *out = u->n_neighbors;
    else if (!strcmp(name, "n_epochs")) *out = u->n_epochs > 0 ? u->n_epochs : (u->n <= 10000 ? 500 : 200);
    else if (!strcmp(name, "metric")) *out = u->metric;
    else if (!strcmp(name, "init")) *out = u->init;
    else if (!strcmp(name, "random_state")) *out = (int64_t)u->seed;
    else
        return sb_fail(SB_ERR_NOT_FOUND, "a UMAP model has no integer '%s' (n_samples_fit, n_components, n_neighbors, "
                       "n_epochs, metric, init, random_state)", name);
    return SB_OK;
}

sb_status sb_umap_array(const sb_model *m, const char *name, float *out, size_t cap, size_t *needed) {
    const sb_umap *u = m->umap;
    const float *src;
    float ab[2] = {u->a, u->b};
    size_t n;
    if (!strcmp(name, "embedding")) src = u->emb, n = (size_t)(u->n * u->ncomp);
    else if (!strcmp(name, "ab")) src = ab, n = 2;
    else return sb_fail(SB_ERR_NOT_FOUND, "a UMAP model has no array '%s' (embedding, ab)", name);
    if (needed) *needed = n;
    if (cap == 0) return SB_OK;
    if (cap < n) return sb_fail(SB_ERR_LIMIT, "'%s' has %zu values, the buffer holds %zu", name, n, cap);
    memcpy(out, src, sizeof(float) * n);
    return SB_OK;
}
