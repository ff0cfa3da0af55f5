/*
 * spectral.c: spectral clustering with scikit-learn's names and defaults
 * (docs/cluster.md, "SpectralClustering"), after U. von Luxburg, "A tutorial
 * on spectral clustering", Statistics and Computing 17(4), 2007, and A. Ng,
 * M. Jordan and Y. Weiss, "On spectral clustering: analysis and an
 * algorithm", NIPS 2001, in the form scikit-learn documents for
 * spectral_embedding: the normalized Laplacian's eigenvectors of least
 * eigenvalue, divided by the square roots of the degrees, signs fixed, then
 * k-means on them.
 *
 * Every number is a fixed sequence of IEEE operations:
 *  - the affinity: rbf a_ij = exp(-(float)(gamma * D_ij)) with D_ij the
 *    nearest-neighbors family's exact squared distance (knn.h) and exp the
 *    profile's (correctly rounded); nearest_neighbors: 1 for each row's
 *    n_neighbors nearest (itself included, by (distance, index)), symmetrized
 *    as (c_ij + c_ji) / 2; precomputed: the given matrix (symmetric, >= 0);
 *  - the degrees: sum over j != i of a_ij in double, j ascending (a zero
 *    degree counts as 1, as scipy's normalized Laplacian takes it);
 *  - the matrix whose largest eigenvectors are the Laplacian's least:
 *    m_ij = (float)(a_ij / (s_i * s_j)) off the diagonal, s_i = sqrt(degree),
 *    the diagonal 0 (1 for a row of zero degree);
 *  - its n_components largest eigenpairs, on the host for every device, by
 *    block Lanczos with full reorthogonalization in double (krylov.c: Golub
 *    and Underwood 1977; Saad, "Numerical Methods for Large Eigenvalue
 *    Problems", 2011): blocks of n_components + 4 columns from a Philox start
 *    block keyed by random_state, CGS2 with sums in a fixed order,
 *    Rayleigh-Ritz by Householder tridiagonalization and implicit QR; it
 *    stops when every wanted residual ||M u - theta u|| <= eigen_tol (1e-10
 *    for "auto" or 0) or the basis spans all n dimensions; a basis of
 *    min(n, 1024 + 4b) columns without convergence is SB_ERR_LIMIT, named.
 *    The embedding e_ic = (float)(u_ic / s_i), each column's sign making its
 *    entry of largest magnitude positive (the lowest row among equals);
 *  - the labels: this library's k-means on the embedding (n_init runs from
 *    random_state), so its rules (k-means++ by position, ties to the lower
 *    center) are the labels' rules.
 * No step splits work by the thread count, so the bits are the same at every
 * thread count. With device=cuda|opencl the k-means runs on the device (the
 * same bits: k-means' own promise); the affinity, the degrees and the
 * eigenvectors are computed on the host for every device.
 */
#include "spectral.h"
#include "../neighbors/knn.h"
#include "../../device/device.h"
#include "../../linalg/linalg.h"
#include "../../math/sb_math.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { SP_RBF = 0, SP_NEIGHBORS = 1, SP_PRECOMPUTED = 2 };
static const char *const k_affinities[3] = {"rbf", "nearest_neighbors", "precomputed"};
/* The affinity is n x n floats (4 GiB at this limit); the eigensolver keeps
 * two n x min(n, 1024 + 4b) double bases. */
#define SP_MAX_ROWS 32768
/* The eigensolver's stop when eigen_tol is "auto" (or 0): every residual
 * ||M u - theta u|| <= 1e-10, M's eigenvalues lying in [-1, 1]. */
#define SP_TOL_AUTO 1e-10
/* Columns of the Krylov blocks beyond n_components. */
#define SP_BLOCK_EXTRA 4
typedef struct sp_params {
    int32_t k, ncomp, affinity, n_neighbors, n_init, numeric_mode;
    float gamma;
    double tol;
    uint64_t seed;
    char device[32];
} sp_params;

static int is(const char *key, const char *a, const char *b) { return !strcmp(key, a) || (b && !strcmp(key, b)); }

static const char *const k_alias_groups[] = {"model|family", "seed|random_state", "device|device_type", NULL};

static sb_status sp_params_parse(const sb_params *params, sp_params *p) {
    memset(p, 0, sizeof *p);
    p->k = 8, p->ncomp = 0, p->affinity = SP_RBF, p->n_neighbors = 10, p->n_init = 10, p->gamma = 1.0f;
    p->tol = SP_TOL_AUTO;
    snprintf(p->device, sizeof p->device, "cpu");
    sb_status st = sb_params_refuse_aliases(params, k_alias_groups, "spectral clustering");
    if (st != SB_OK) return st;
    sb_numeric_mode mode;
    if ((st = sb_params_resolve_mode(params, SB_FAMILY_SPECTRAL, &mode)) != SB_OK) return st;
    p->numeric_mode = (int32_t)mode;
    const char *key, *v;
    for (int64_t e = 0; params && sb_params_entry(params, e, &key, &v) == SB_OK && st == SB_OK; e++) {
        int64_t i;
        float f;
        if (is(key, "numeric_mode", NULL)) {
            continue;
        } else if (is(key, "model", "family")) {
            if (strcmp(v, "spectral"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "model='%s' is not spectral clustering (model=spectral)", v);
        } else if (is(key, "n_clusters", NULL)) {
            if ((st = sb_param_int(key, v, 1, SP_MAX_ROWS, &i)) == SB_OK) p->k = (int32_t)i;
        } else if (is(key, "n_components", NULL)) {
            if (!strcmp(v, "none") || !strcmp(v, "None")) p->ncomp = 0;
            else if ((st = sb_param_int(key, v, 1, SP_MAX_ROWS, &i)) == SB_OK) p->ncomp = (int32_t)i;
        } else if (is(key, "affinity", NULL)) {
            int32_t a = -1;
            for (int32_t q = 0; q < 3; q++)
                if (!strcmp(v, k_affinities[q])) a = q;
            if (a < 0)
                st = sb_fail(SB_ERR_INVALID_ARGUMENT,
                             "affinity='%s' is not supported: rbf, nearest_neighbors or precomputed", v);
            p->affinity = a;
        } else if (is(key, "gamma", NULL)) {
            st = sb_param_float(key, v, 0.0f, 3.0e38f, 1, &p->gamma);
        } else if (is(key, "n_neighbors", NULL)) {
            if ((st = sb_param_int(key, v, 1, SP_MAX_ROWS, &i)) == SB_OK) p->n_neighbors = (int32_t)i;
        } else if (is(key, "n_init", NULL)) {
            if ((st = sb_param_int(key, v, 1, 10000, &i)) == SB_OK) p->n_init = (int32_t)i;
        } else if (is(key, "seed", "random_state")) {
            if ((st = sb_param_int(key, v, 0, INT64_MAX, &i)) == SB_OK) p->seed = (uint64_t)i;
        } else if (is(key, "assign_labels", NULL)) {
            if (strcmp(v, "kmeans"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "assign_labels='%s' is not supported: kmeans only", v);
        } else if (is(key, "eigen_solver", NULL)) {
            /* scikit-learn's names are accepted; this library's block Lanczos (krylov.c)
             * computes the eigenvectors for every one of them */
            if (strcmp(v, "none") && strcmp(v, "None") && strcmp(v, "arpack") && strcmp(v, "lobpcg") && strcmp(v, "amg"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "eigen_solver='%s': arpack, lobpcg or amg", v);
        } else if (is(key, "eigen_tol", NULL)) {
            /* the Krylov solver's stop: every residual ||M u - theta u|| <= eigen_tol; "auto"
             * and 0 (ARPACK's "machine precision") are SP_TOL_AUTO */
            if (strcmp(v, "auto")) {
                if ((st = sb_param_float(key, v, 0.0f, 3.0e38f, 0, &f)) != SB_OK) break;
                p->tol = f > 0.0f ? (double)f : SP_TOL_AUTO;
            }
        } else if (is(key, "degree", NULL) || is(key, "coef0", NULL)) {
            /* the polynomial and sigmoid kernels' parameters: none of the affinities here reads them */
            if ((st = sb_param_float(key, v, -3.0e38f, 3.0e38f, 0, &f)) != SB_OK) break;
        } else if (is(key, "device", "device_type")) {
            sb_device_kind dk;
            if ((st = sb_device_parse(v, &dk)) == SB_OK) snprintf(p->device, sizeof p->device, "%s", v);
        } else {
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown parameter '%s' for spectral clustering (docs/cluster.md)",
                         key);
        }
    }
    if (st == SB_OK && p->ncomp == 0) p->ncomp = p->k;
    return st;
}

/* ---- the affinity ---- */

typedef struct rbf_job {
    const double *x; /* the rows in double (exact) */
    int64_t n;
    int32_t d;
    double gamma;
    float *a;
} rbf_job;


/* Row i of the rbf affinity: the pairs (i, j > i), mirrored below. */
static void rbf_task(void *ctx, int64_t i) {
    const rbf_job *j = ctx;
    const int64_t n = j->n, d = j->d;
    float *row = j->a + i * n;
    const double *xi = j->x + i * d;
    row[i] = 1.0f;
    for (int64_t q = i + 1; q < n; q += 2) {
        const int64_t q2 = q + 1 < n ? q + 1 : q;
        double dq, dq2;
        sb_knn_sqdist2(xi, j->x + q * d, j->x + q2 * d, (int32_t)d, &dq, &dq2);
        row[q] = sb_expf(-(float)(j->gamma * dq));
        j->a[q * n + i] = row[q];
        if (q2 != q) {
            row[q2] = sb_expf(-(float)(j->gamma * dq2));
            j->a[q2 * n + i] = row[q2];
        }
    }
}

/* The nearest_neighbors affinity: (c + c^T) / 2 of the rows' n_neighbors
 * nearest, each row itself included (sb_knn_query of the rows as queries). */
static sb_status sp_neighbors(const sb_table *t, int32_t kk, sb_device_kind kind, float *a) {
    const int64_t n = t->nrows;
    int64_t *off = NULL, *idx = NULL;
    float *dist = NULL;
    const sb_status st = sb_knn_self_query(t, SB_KNN_EUCLIDEAN, kk, -1.0, 1, kind, &off, &idx, &dist);
    if (st == SB_OK) {
        memset(a, 0, sizeof(float) * (size_t)(n * n));
        for (int64_t i = 0; i < n; i++)
            for (int64_t c = off[i]; c < off[i + 1]; c++) {
                const int64_t j = idx[c];
                a[i * n + j] += 0.5f; /* c_ij / 2 + c_ji / 2: halves of 0 or 1, exact */
                a[j * n + i] += 0.5f;
            }
    }
    sb_free(off), sb_free(idx), sb_free(dist);
    return st;
}

/* ---- the fit ---- */

static sb_status sp_check(const sb_table *t, const sp_params *p) {
    const int64_t n = t->nrows, d = t->ncols;
    if (n < 2 || d < 1)
        return sb_fail(SB_ERR_INVALID_INPUT, "spectral clustering needs at least two rows and one feature (given "
                       "n_samples=%lld, %lld features)", (long long)n, (long long)d);
    if (n > SP_MAX_ROWS)
        return sb_fail(SB_ERR_LIMIT, "spectral clustering takes at most %d rows here (the n x n eigenproblem; given %lld)",
                       SP_MAX_ROWS, (long long)n);
    if (p->k > n) return sb_fail(SB_ERR_INVALID_ARGUMENT, "n_samples=%lld should be >= n_clusters=%d", (long long)n, (int)p->k);
    if (p->ncomp > n)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "n_components=%d is above the %lld rows", (int)p->ncomp, (long long)n);
    if (p->affinity == SP_NEIGHBORS && p->n_neighbors > n)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "n_neighbors=%d is above the %lld rows", (int)p->n_neighbors, (long long)n);
    if (t->weight) return sb_fail(SB_ERR_INVALID_ARGUMENT, "spectral clustering takes no sample weights");
    const int64_t q = sb_first_nonfinite(t->x, n * d);
    if (q >= 0)
        return sb_fail(SB_ERR_INVALID_INPUT, "row %lld, feature %lld is %s: spectral clustering takes finite values",
                       (long long)(q / d), (long long)(q % d), isnan(t->x[q]) ? "missing (NaN)" : "infinite");
    if (p->affinity == SP_PRECOMPUTED) {
        if (d != n)
            return sb_fail(SB_ERR_INVALID_INPUT, "affinity=precomputed takes a square matrix (given %lld x %lld)",
                           (long long)n, (long long)d);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) {
                const float v = t->x[i * n + j];
                if (!(v >= 0.0f))
                    return sb_fail(SB_ERR_INVALID_INPUT, "the precomputed affinity at (%lld, %lld) is %g: it must be >= 0",
                                   (long long)i, (long long)j, (double)v);
                if (v != t->x[j * n + i])
                    return sb_fail(SB_ERR_INVALID_INPUT, "the precomputed affinity is not symmetric at (%lld, %lld)",
                                   (long long)i, (long long)j);
            }
    }
    return SB_OK;
}

/* The degree of row i: sum over j != i of a_ij in double, j ascending.
 * SB_SABOTAGE_SPECTRAL_ORDER (make SABOTAGE=spectral-order): j descending, a
 * reordered reduction, the separating arm. */
static double sp_degree(const float *row, int64_t i, int64_t n) {
    double s = 0.0;
#ifdef SB_SABOTAGE_SPECTRAL_ORDER
    for (int64_t j = n - 1; j >= 0; j--)
        if (j != i) s += (double)row[j];
#else
    for (int64_t j = 0; j < n; j++)
        if (j != i) s += (double)row[j];
#endif
    return s;
}

/* Rows of the degrees and of the normalized matrix, in fixed chunks (each row
 * its own sums and quotients, so the thread count cannot reach a bit). */
#define SP_ROWS 32
typedef struct sp_norm_job {
    float *a;
    double *deg, *s;
    int64_t n;
} sp_norm_job;

static void sp_degree_task(void *ctx, int64_t t) {
    const sp_norm_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, SP_ROWS, t, &b, &e);
    for (int64_t i = b; i < e; i++) {
        j->deg[i] = sp_degree(j->a + i * j->n, i, j->n);
        j->s[i] = sqrt(j->deg[i] > 0.0 ? j->deg[i] : 1.0);
    }
}

/* m_ij = (float)(a_ij / (s_i s_j)) off the diagonal; the diagonal 0 (1 for a
 * row of zero degree). */
static void sp_normalize_task(void *ctx, int64_t t) {
    const sp_norm_job *j = ctx;
    const int64_t n = j->n;
    int64_t b, e;
    sb_chunk_range(n, SP_ROWS, t, &b, &e);
    for (int64_t i = b; i < e; i++) {
        float *ai = j->a + i * n;
        const double si = j->s[i];
        for (int64_t c = 0; c < n; c++) ai[c] = (float)((double)ai[c] / (si * j->s[c]));
        ai[i] = j->deg[i] > 0.0 ? 0.0f : 1.0f;
    }
}

static sb_status sp_record(sb_card *card, const char *tag, sb_dtype dt, const void *v, uint64_t n) {
    return card ? sb_card_record(card, tag, dt, v, n) : SB_OK;
}

sb_status sb_spectral_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out) {
    sb_clear_error();
    if (out) *out = NULL;
    if (!train || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_spectral_fit: NULL argument");
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    sp_params p;
    sb_status st = sp_params_parse(params, &p);
    const sb_table *t = &train->t;
    if (st == SB_OK) st = sp_check(t, &p);
    if (st != SB_OK) return st;
    const int64_t n = t->nrows, d = t->ncols, nc = p.ncomp;
    float *a = sb_malloc(sizeof(float) * (size_t)(n * n)), *w = sb_malloc(sizeof(float) * (size_t)nc);
    double *wd = sb_malloc(sizeof(double) * (size_t)nc), *v = sb_malloc(sizeof(double) * (size_t)(n * nc));
    float *emb = sb_malloc(sizeof(float) * (size_t)(n * nc));
    double *s = sb_malloc(sizeof(double) * (size_t)n), *deg = sb_malloc(sizeof(double) * (size_t)n);
    sb_model *m = NULL, *km = NULL;
    sb_dataset *eds = NULL;
    sb_params *kp = NULL;
    if (!a || !w || !wd || !v || !emb || !s || !deg) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "spectral clustering: out of memory for %lld rows", (long long)n);
        goto done;
    }
    if (card) {
        char dims[96];
        snprintf(dims, sizeof dims, "%lld x %lld, %s, k %d", (long long)n, (long long)d, k_affinities[p.affinity], (int)p.k);
        if ((st = sb_card_set_meta(card, "spectral.data", dims)) != SB_OK) goto done;
    }
    /* the affinity */
    if (p.affinity == SP_RBF) {
        double *xd = sb_malloc(sizeof(double) * (size_t)(n * d));
        if (!xd) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "spectral clustering: out of memory for %lld rows", (long long)n);
            goto done;
        }
        for (int64_t i = 0; i < n * d; i++) xd[i] = (double)t->x[i];
        rbf_job j = {xd, n, (int32_t)d, (double)p.gamma, a};
        sb_parallel_for(n, rbf_task, &j);
        sb_free(xd);
    } else if (p.affinity == SP_NEIGHBORS) {
        sb_device_kind dk = SB_DEVICE_CPU;
        if ((st = sb_device_parse(p.device, &dk)) != SB_OK || (st = sp_neighbors(t, p.n_neighbors, dk, a)) != SB_OK)
            goto done;
    } else {
        memcpy(a, t->x, sizeof(float) * (size_t)(n * n));
    }
    if ((st = sp_record(card, "spectral.affinity", SB_DTYPE_F32, a, (uint64_t)(n * n))) != SB_OK) goto done;
    /* degrees and the normalized matrix */
    sp_norm_job nj = {a, deg, s, n};
    sb_parallel_for(sb_chunk_count(n, SP_ROWS), sp_degree_task, &nj);
    if ((st = sp_record(card, "spectral.degrees", SB_DTYPE_U64, deg, (uint64_t)n)) != SB_OK) goto done;
    sb_parallel_for(sb_chunk_count(n, SP_ROWS), sp_normalize_task, &nj);
    /* the n_components largest eigenpairs of M, on the host for every device */
    const int64_t blk = nc + SP_BLOCK_EXTRA < n ? nc + SP_BLOCK_EXTRA : n;
    sb_krylov_info ki;
    if ((st = sb_krylov_top(n, a, nc, blk, p.tol, 1024 + 4 * blk, p.seed, wd, v, &ki)) != SB_OK) goto done;
    for (int64_t c = 0; c < nc; c++) w[c] = (float)wd[c];
    const int32_t kinfo[2] = {ki.blocks, ki.basis};
    if ((st = sp_record(card, "spectral.krylov", SB_DTYPE_I32, kinfo, 2)) != SB_OK) goto done;
    if ((st = sp_record(card, "spectral.eigenvalues", SB_DTYPE_F32, w, (uint64_t)nc)) != SB_OK) goto done;
    /* the embedding: eigenvectors over the degrees' roots, signs fixed */
    for (int64_t c = 0; c < nc; c++) {
        int64_t at = 0;
        float big = -1.0f;
        for (int64_t i = 0; i < n; i++) {
            const float e = (float)(v[i * nc + c] / s[i]);
            emb[i * nc + c] = e;
            if (fabsf(e) > big) big = fabsf(e), at = i;
        }
        if (emb[at * nc + c] < 0.0f)
            for (int64_t i = 0; i < n; i++) emb[i * nc + c] = -emb[i * nc + c];
    }
    if ((st = sp_record(card, "spectral.embedding", SB_DTYPE_F32, emb, (uint64_t)(n * nc))) != SB_OK) goto done;
    /* k-means on the embedding */
    char kt[192];
    snprintf(kt, sizeof kt, "model=kmeans,n_clusters=%d,n_init=%d,seed=%llu,device=%s", (int)p.k, (int)p.n_init,
             (unsigned long long)p.seed, p.device);
    if ((st = sb_dataset_from_matrix(emb, n, nc, &eds)) != SB_OK || (st = sb_params_create(&kp)) != SB_OK ||
        (st = sb_params_parse(kp, kt)) != SB_OK || (st = sb_kmeans_fit(kp, eds, NULL, NULL, &km)) != SB_OK)
        goto done;
    if ((st = sp_record(card, "spectral.labels", SB_DTYPE_I32, km->kmeans->labels, (uint64_t)n)) != SB_OK) goto done;
    char text[256];
    snprintf(text, sizeof text, "affinity=%s\ngamma=%.9g\nmodel=spectral\nn_clusters=%d\nn_components=%d\nn_init=%d\n"
             "n_neighbors=%d\nseed=%llu\n", k_affinities[p.affinity], (double)p.gamma, (int)p.k, (int)p.ncomp,
             (int)p.n_init, (int)p.n_neighbors, (unsigned long long)p.seed);
    if ((st = sb_model_alloc(&m)) != SB_OK) goto done;
    m->family = SB_FAMILY_SPECTRAL;
    m->objective = SB_OBJ_REGRESSION;
    m->num_features = (int32_t)d;
    m->num_class = 1;
    m->numeric_mode = p.numeric_mode;
    if (!(m->params = sb_strdup(text)) || !(m->spectral = sb_spectral_alloc(n))) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "spectral clustering: out of memory");
        goto done;
    }
    m->spectral->affinity = p.affinity, m->spectral->n_clusters = p.k;
    memcpy(m->spectral->labels, km->kmeans->labels, sizeof(int32_t) * (size_t)n);
    st = sb_model_copy_names(m, t->names, d, "spectral clustering");
    if (st == SB_OK && card) st = sb_model_record_bytes(card, m, "spectral.model_bytes");
done:
    sb_free(a), sb_free(w), sb_free(wd), sb_free(v), sb_free(emb), sb_free(s), sb_free(deg);
    sb_model_free(km);
    sb_params_free(kp);
    sb_dataset_free(eds);
    if (st != SB_OK) {
        sb_model_free(m);
        return st;
    }
    *out = m;
    return SB_OK;
}

sb_status sb_spectral_int(const sb_model *m, const char *name, int64_t *out) {
    const sb_spectral *g = m->spectral;
    if (!strcmp(name, "n_clusters")) *out = g->n_clusters;
    else if (!strcmp(name, "n_samples_fit")) *out = g->n;
    else if (!strcmp(name, "affinity")) *out = g->affinity;
    else return sb_fail(SB_ERR_NOT_FOUND, "a spectral clustering model has no integer '%s'", name);
    return SB_OK;
}

sb_status sb_spectral_indices(const sb_model *m, const char *name, int64_t *out, size_t cap, size_t *needed) {
    const sb_spectral *g = m->spectral;
    if (strcmp(name, "labels"))
        return sb_fail(SB_ERR_NOT_FOUND, "a spectral clustering model has no index array '%s' (labels)", name);
    return sb_model_indices_out(g->labels, NULL, (size_t)g->n, name, out, cap, needed);
}
