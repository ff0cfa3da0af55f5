/*
 * agglomerative.c: hierarchical agglomerative clustering with scikit-learn's
 * names and defaults (docs/cluster.md, "AgglomerativeClustering"): ward,
 * complete, average and single linkage on Euclidean distances, the tree cut
 * at n_clusters or at distance_threshold.
 *
 * The merges are a function of exact arithmetic alone:
 *  - the distance of two rows is the nearest-neighbors family's exact one
 *    (src/models/neighbors/knn.c): D = sum_f (x_f - y_f)^2 in double, four
 *    lanes; ward works on D, the other linkages on sqrt(D) (correctly rounded);
 *  - merged clusters' distances follow the Lance-Williams formulas (G. N.
 *    Lance and W. T. Williams, "A general theory of classificatory sorting
 *    strategies", Computer Journal 9(4), 1967), each a fixed sequence of IEEE
 *    double operations: single min(a, b); complete max(a, b); average
 *    (n_i a + n_j b) / (n_i + n_j); ward ((n_i + n_k) a + (n_j + n_k) b - n_k c)
 *    / (n_i + n_j + n_k) on squared distances;
 *  - each step merges the pair of least (distance, lower id, higher id), a
 *    cluster's id being its smallest row: a total order, so ties merge the
 *    same way everywhere. The search keeps each cluster's nearest neighbor
 *    (ties to the lower id); the linkages are reducible (a merged cluster is
 *    never nearer to a third than the nearer of its parts), so only clusters
 *    whose neighbor merged are searched again (D. Müllner, "Modern
 *    hierarchical, agglomerative clustering algorithms", arXiv:1109.2378,
 *    2011, the generic algorithm).
 * Labels: the clusters left after n - n_clusters merges (or after every merge
 * below distance_threshold), numbered by their smallest row.
 */
#include "agglomerative.h"
#include "../neighbors/knn.h"
#include "../../device/device.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { AG_WARD = 0, AG_COMPLETE = 1, AG_AVERAGE = 2, AG_SINGLE = 3 };
static const char *const k_linkages[4] = {"ward", "complete", "average", "single"};
#define AG_MAX_ROWS 40000 /* the n x n matrix of doubles: 12.8 GB at this size */

typedef struct ag_params {
    int32_t k, linkage, numeric_mode, has_threshold;
    float threshold;
} ag_params;

static int is(const char *key, const char *a, const char *b) { return !strcmp(key, a) || (b && !strcmp(key, b)); }

static const char *const k_alias_groups[] = {"model|family", "metric|affinity", "device|device_type", NULL};

static sb_status ag_params_parse(const sb_params *params, ag_params *p) {
    memset(p, 0, sizeof *p);
    p->k = 2;
    int k_given = 0;
    sb_status st = sb_params_refuse_aliases(params, k_alias_groups, "agglomerative clustering");
    if (st != SB_OK) return st;
    sb_numeric_mode mode;
    if ((st = sb_params_resolve_mode(params, SB_FAMILY_AGGLOMERATIVE, &mode)) != SB_OK) return st;
    p->numeric_mode = (int32_t)mode;
    const char *key, *v;
    for (int64_t e = 0; params && sb_params_entry(params, e, &key, &v) == SB_OK && st == SB_OK; e++) {
        int64_t i;
        if (is(key, "numeric_mode", NULL)) {
            continue;
        } else if (is(key, "model", "family")) {
            if (strcmp(v, "agglomerative"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "model='%s' is not agglomerative clustering (model=agglomerative)", v);
        } else if (is(key, "n_clusters", NULL)) {
            if (!strcmp(v, "none") || !strcmp(v, "None")) p->k = 0, k_given = 0;
            else if ((st = sb_param_int(key, v, 1, AG_MAX_ROWS, &i)) == SB_OK) p->k = (int32_t)i, k_given = 1;
        } else if (is(key, "distance_threshold", NULL)) {
            if ((st = sb_param_float(key, v, 0.0f, 3.0e38f, 0, &p->threshold)) == SB_OK) p->has_threshold = 1;
        } else if (is(key, "linkage", NULL)) {
            int32_t l = -1;
            for (int32_t q = 0; q < 4; q++)
                if (!strcmp(v, k_linkages[q])) l = q;
            if (l < 0) st = sb_fail(SB_ERR_INVALID_ARGUMENT, "linkage='%s': ward, complete, average or single", v);
            p->linkage = l;
        } else if (is(key, "metric", "affinity")) {
            if (strcmp(v, "euclidean") && strcmp(v, "l2"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "metric='%s' is not supported: euclidean only", v);
        } else if (is(key, "compute_full_tree", NULL) || is(key, "compute_distances", NULL)) {
            /* the full tree and its distances are always computed here */
            if (strcmp(v, "auto") && strcmp(v, "true") && strcmp(v, "false") && strcmp(v, "1") && strcmp(v, "0"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "%s='%s': auto, true or false", key, v);
        } else if (is(key, "device", "device_type")) {
            sb_device_kind dk;
            if ((st = sb_device_parse(v, &dk)) == SB_OK && dk != SB_DEVICE_CPU && dk != SB_DEVICE_CPU_BATCHED)
                st = sb_fail(SB_ERR_BACKEND_UNAVAILABLE,
                             "agglomerative clustering runs on the cpu only in this library (asked: device=%s)", v);
        } else {
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown parameter '%s' for agglomerative clustering (docs/cluster.md)",
                         key);
        }
    }
    if (st == SB_OK && p->has_threshold && k_given)
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "exactly one of n_clusters and distance_threshold has to be set "
                     "(n_clusters=none with a distance_threshold)");
    if (st == SB_OK && p->has_threshold) p->k = 0;
    if (st == SB_OK && !p->has_threshold && p->k == 0)
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "n_clusters=none needs a distance_threshold");
    return st;
}

typedef struct dist_job {
    const float *x;
    int64_t n;
    int32_t d, squared;
    double *c;
} dist_job;

/* The nearest-neighbors family's exact distance (knn.h). */
static double ag_sqdist(const float *x, const float *y, int32_t d) { return sb_knn_sqdist(x, y, d); }

/* Row i of the symmetric matrix: the pairs (i, k > i), mirrored below. */
static void dist_task(void *ctx, int64_t i) {
    const dist_job *j = ctx;
    double *row = j->c + i * j->n;
    row[i] = 0.0;
    for (int64_t k = i + 1; k < j->n; k++) {
        const double D = ag_sqdist(j->x + i * j->d, j->x + k * j->d, j->d);
        row[k] = j->squared ? D : sqrt(D);
    }
}

static void mirror_task(void *ctx, int64_t i) {
    const dist_job *j = ctx;
    for (int64_t k = 0; k < i; k++) j->c[i * j->n + k] = j->c[k * j->n + i];
}

/* The Lance-Williams distance of k to the merge of i and j (sizes ni, nj, nk;
 * a = d(k, i), b = d(k, j), c = d(i, j)). */
static inline double ag_update(int32_t linkage, double a, double b, double c, double ni, double nj, double nk) {
    switch (linkage) {
    case AG_SINGLE: return a < b ? a : b;
    case AG_COMPLETE: return a > b ? a : b;
    case AG_AVERAGE: return (ni * a + nj * b) / (ni + nj);
    default: return ((ni + nk) * a + (nj + nk) * b - nk * c) / ((ni + nj) + nk);
    }
}

/* (da, ia) before (db, ib): less distance, then lower id. */
static inline int ag_before(double da, int64_t ia, double db, int64_t ib) {
#ifdef SB_SABOTAGE_AGGLO_TIES
    /* Separating arm (make SABOTAGE=agglo-ties): equal distances to the higher id. */
    return da < db || (da == db && ia > ib);
#else
    return da < db || (da == db && ia < ib);
#endif
}

sb_status sb_agglomerative_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out) {
    sb_clear_error();
    if (out) *out = NULL;
    if (!train || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_agglomerative_fit: NULL argument");
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    ag_params p;
    sb_status st = ag_params_parse(params, &p);
    if (st != SB_OK) return st;
    const sb_table *t = &train->t;
    const int64_t n = t->nrows, d = t->ncols;
    if (n < 2 || d < 1)
        return sb_fail(SB_ERR_INVALID_INPUT, "agglomerative clustering needs at least two rows and one feature "
                       "(given n_samples=%lld)", (long long)n);
    if (n > AG_MAX_ROWS)
        return sb_fail(SB_ERR_LIMIT, "agglomerative clustering takes at most %d rows (its distance matrix is n^2 / 2 "
                       "doubles); %lld given", AG_MAX_ROWS, (long long)n);
    if (t->weight) return sb_fail(SB_ERR_INVALID_ARGUMENT, "agglomerative clustering takes no sample weights");
    if (p.k > n)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "n_clusters=%d exceeds the %lld rows", (int)p.k, (long long)n);
    for (int64_t i = 0; i < n * d; i++)
        if (!isfinite(t->x[i]))
            return sb_fail(SB_ERR_INVALID_INPUT, "row %lld, feature %lld: %s; agglomerative clustering takes finite values "
                           "only", (long long)(i / d), (long long)(i % d), isnan(t->x[i]) ? "missing (NaN)" : "infinite");
    double *c = sb_malloc(sizeof(double) * (size_t)n * (size_t)n), *nd = sb_malloc(sizeof(double) * (size_t)n);
    double *size = sb_malloc(sizeof(double) * (size_t)n);
    int64_t *nn = sb_malloc(sizeof(int64_t) * (size_t)n), *node = sb_malloc(sizeof(int64_t) * (size_t)n);
    int64_t *child = sb_malloc(sizeof(int64_t) * (size_t)(2 * (n - 1)));
    double *mdist = sb_malloc(sizeof(double) * (size_t)(n - 1));
    int32_t *labels = sb_malloc(sizeof(int32_t) * (size_t)n);
    int64_t *par = sb_malloc(sizeof(int64_t) * (size_t)n), *live = sb_malloc(sizeof(int64_t) * (size_t)n);
    sb_model *m = NULL;
    if (!c || !nd || !size || !nn || !node || !child || !mdist || !labels || !par || !live) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "agglomerative clustering: out of memory for %lld rows (%lld x %lld distances)",
                     (long long)n, (long long)n, (long long)n);
        goto done;
    }
    {
        dist_job dj = {t->x, n, (int32_t)d, p.linkage == AG_WARD, c};
        sb_parallel_for(n, dist_task, &dj);
        sb_parallel_for(n, mirror_task, &dj);
    }
    /* a cluster lives in the slot of its smallest row; node[] is its tree node (scikit-learn's children_
     * numbering); live[0..nlive) the slots alive, in any order (no choice below depends on it) */
    int64_t nlive = n;
    for (int64_t i = 0; i < n; i++) size[i] = 1.0, node[i] = i, live[i] = i;
    for (int64_t i = 0; i < n; i++) { /* each cluster's nearest (ties to the lower id) */
        const double *row = c + i * n;
        nd[i] = INFINITY, nn[i] = -1;
        for (int64_t k = 0; k < n; k++)
            if (k != i && (nn[i] < 0 || ag_before(row[k], k, nd[i], nn[i]))) nd[i] = row[k], nn[i] = k;
    }
    for (int64_t s = 0; s < n - 1; s++) {
        int64_t a = -1, alo = 0, ahi = 0; /* the pair of least (distance, lower id, higher id) */
        for (int64_t q = 0; q < nlive; q++) {
            const int64_t i = live[q];
            const int64_t lo = i < nn[i] ? i : nn[i], hi = i < nn[i] ? nn[i] : i;
            if (a < 0 || ag_before(nd[i], lo, nd[a], alo) || (nd[i] == nd[a] && lo == alo && hi < ahi))
                a = i, alo = lo, ahi = hi;
        }
        const int64_t i = alo, j = ahi; /* merge j into i (i < j) */
        double *ri = c + i * n;
        const double *rj = c + j * n;
        const double dij = ri[j];
        mdist[s] = p.linkage == AG_WARD ? sqrt(dij) : dij;
        child[2 * s] = node[i] < node[j] ? node[i] : node[j];
        child[2 * s + 1] = node[i] < node[j] ? node[j] : node[i];
        for (int64_t q = 0; q < nlive; q++) {
            const int64_t k = live[q];
            if (k == i || k == j) continue;
            const double v = ag_update(p.linkage, ri[k], rj[k], dij, size[i], size[j], size[k]);
            ri[k] = v;
            c[k * n + i] = v;
        }
        for (int64_t q = 0; q < nlive; q++)
            if (live[q] == j) {
                live[q] = live[--nlive];
                break;
            }
        size[i] += size[j];
        node[i] = n + s;
        for (int64_t q = 0; q < nlive; q++) { /* the neighbors: searched again where they were i or j */
            const int64_t k = live[q];
            if (k != i && (nn[k] == i || nn[k] == j)) {
                /* its neighbor merged: at the neighbor's distance or nearer, the merged cluster (whose id i is
                 * below both) is the nearest; only a farther merged cluster needs the search */
                const double v = ri[k];
                if (!(v > nd[k])) {
                    nd[k] = v, nn[k] = i;
                    continue;
                }
            }
            if (k == i || nn[k] == i || nn[k] == j) {
                const double *row = c + k * n;
                nd[k] = INFINITY, nn[k] = -1;
                for (int64_t r = 0; r < nlive; r++) {
                    const int64_t z = live[r];
                    if (z != k && (nn[k] < 0 || ag_before(row[z], z, nd[k], nn[k]))) nd[k] = row[z], nn[k] = z;
                }
            } else { /* reducible: the merged cluster is only a new candidate */
                const double v = ri[k];
                if (ag_before(v, i, nd[k], nn[k])) nd[k] = v, nn[k] = i;
            }
        }
    }
    /* the cut: the first merges (all of them below the threshold), then labels by smallest row */
    {
        int64_t nmerge = p.has_threshold ? 0 : n - p.k;
        if (p.has_threshold)
            while (nmerge < n - 1 && mdist[nmerge] < (double)p.threshold) nmerge++;
        /* replay the merges on a union-find of tree nodes' smallest rows */
        int64_t *rep = sb_malloc(sizeof(int64_t) * (size_t)(2 * n - 1));
        if (!rep) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "agglomerative clustering: out of memory");
            goto done;
        }
        for (int64_t i = 0; i < n; i++) rep[i] = i, par[i] = i;
        for (int64_t s = 0; s < nmerge; s++) {
            const int64_t ra = rep[child[2 * s]], rb = rep[child[2 * s + 1]];
            const int64_t lo = ra < rb ? ra : rb, hi = ra < rb ? rb : ra;
            par[hi] = lo;
            rep[n + s] = lo;
        }
        int32_t next = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t r = i;
            while (par[r] != r) r = par[r];
            labels[i] = r == i ? next++ : labels[r];
        }
        sb_free(rep);
        if (card) {
            char dims[96];
            snprintf(dims, sizeof dims, "%lld x %lld, %s", (long long)n, (long long)d, k_linkages[p.linkage]);
            st = sb_card_set_meta(card, "agglomerative.data", dims);
            if (st == SB_OK) st = sb_card_record(card, "agglomerative.children", SB_DTYPE_I64, child, (uint64_t)(2 * (n - 1)));
            if (st == SB_OK) st = sb_card_record(card, "agglomerative.distances", SB_DTYPE_U64, mdist, (uint64_t)(n - 1));
            if (st == SB_OK) st = sb_card_record(card, "agglomerative.labels", SB_DTYPE_I32, labels, (uint64_t)n);
            if (st != SB_OK) goto done;
        }
        char text[160];
        if (p.has_threshold)
            snprintf(text, sizeof text, "distance_threshold=%.9g\nlinkage=%s\nmodel=agglomerative\n", (double)p.threshold,
                     k_linkages[p.linkage]);
        else snprintf(text, sizeof text, "linkage=%s\nmodel=agglomerative\nn_clusters=%d\n", k_linkages[p.linkage], (int)p.k);
        if ((st = sb_model_alloc(&m)) != SB_OK) goto done;
        m->family = SB_FAMILY_AGGLOMERATIVE;
        m->objective = SB_OBJ_REGRESSION;
        m->num_features = (int32_t)d;
        m->num_class = 1;
        m->numeric_mode = p.numeric_mode;
        if (!(m->params = sb_strdup(text)) || !(m->agglo = sb_agglo_alloc(n))) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "agglomerative clustering: out of memory");
            goto done;
        }
        sb_agglo *g = m->agglo;
        g->linkage = p.linkage, g->n_clusters = next;
        memcpy(g->labels, labels, sizeof(int32_t) * (size_t)n);
        memcpy(g->children, child, sizeof(int64_t) * (size_t)(2 * (n - 1)));
        memcpy(g->distances, mdist, sizeof(double) * (size_t)(n - 1));
    }
    if (st == SB_OK) st = sb_model_copy_names(m, t->names, d, "agglomerative clustering");
    if (st == SB_OK && card) st = sb_model_record_bytes(card, m, "agglomerative.model_bytes");
done:
    sb_free(c), sb_free(nd), sb_free(size), sb_free(nn), sb_free(node), sb_free(child), sb_free(mdist);
    sb_free(labels), sb_free(par), sb_free(live);
    if (st != SB_OK) {
        sb_model_free(m);
        return st;
    }
    *out = m;
    return SB_OK;
}

sb_status sb_agglo_int(const sb_model *m, const char *name, int64_t *out) {
    const sb_agglo *g = m->agglo;
    if (!strcmp(name, "n_clusters")) *out = g->n_clusters;
    else if (!strcmp(name, "n_leaves")) *out = g->n;
    else if (!strcmp(name, "linkage")) *out = g->linkage;
    else return sb_fail(SB_ERR_NOT_FOUND, "an agglomerative model has no integer '%s'", name);
    return SB_OK;
}

sb_status sb_agglo_indices(const sb_model *m, const char *name, int64_t *out, size_t cap, size_t *needed) {
    const sb_agglo *g = m->agglo;
    if (!strcmp(name, "labels")) return sb_model_indices_out(g->labels, NULL, (size_t)g->n, name, out, cap, needed);
    if (!strcmp(name, "children"))
        return sb_model_indices_out(NULL, g->children, 2 * (size_t)(g->n - 1), name, out, cap, needed);
    return sb_fail(SB_ERR_NOT_FOUND, "an agglomerative model has no index array '%s' (labels, children)", name);
}
