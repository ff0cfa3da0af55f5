/*
 * dbscan.c: DBSCAN (M. Ester, H.-P. Kriegel, J. Sander and X. Xu, "A
 * density-based algorithm for discovering clusters in large spatial databases
 * with noise", KDD 1996) with scikit-learn's names and defaults
 * (docs/cluster.md, "DBSCAN"), on the exact radius neighbors of the
 * nearest-neighbors family (src/models/neighbors/knn.c).
 *
 * Every decision is a function of the exact distances and of row indices, so
 * the labels are the same on every machine, at every thread count and in
 * every visiting order:
 *  - a row's neighborhood is every row (itself included) at distance <= eps;
 *    it is a core row when its neighborhood's weight (the row count, or the
 *    sample weights summed in double in index order) is at least min_samples;
 *  - clusters are the connected components of the core rows under "within
 *    eps" (a union-find whose root is the lowest index: the same components in
 *    any order of the unions);
 *  - a non-core row within eps of a core row (a border row) joins the cluster
 *    of its lowest-index core neighbor; every other row is noise (-1);
 *  - clusters are numbered 0, 1, ... by the smallest row index they hold.
 * On a GPU (device=cuda|opencl|gpu) the neighborhoods' screen runs on the
 * device and their exact distances on the host: the same neighborhoods.
 */
#include "dbscan.h"
#include "../svm/svm.h"
#include "kmeans.h"
#include "spectral.h"
#include "../neighbors/knn.h"
#include "agglomerative.h"
#include "../../device/device.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct db_params {
    float eps;
    double min_samples;
    int32_t metric, numeric_mode;
    sb_device_kind device;
} db_params;

static int is(const char *key, const char *a, const char *b) { return !strcmp(key, a) || (b && !strcmp(key, b)); }

static const char *const k_alias_groups[] = {"model|family", "device|device_type", NULL};

static sb_status db_params_parse(const sb_params *params, db_params *p) {
    memset(p, 0, sizeof *p);
    p->eps = 0.5f;
    p->min_samples = 5.0;
    sb_status st = sb_params_refuse_aliases(params, k_alias_groups, "DBSCAN");
    if (st != SB_OK) return st;
    sb_numeric_mode mode;
    if ((st = sb_params_resolve_mode(params, SB_FAMILY_DBSCAN, &mode)) != SB_OK) return st;
    p->numeric_mode = (int32_t)mode;
    int power = 2;
    const char *metric = NULL;
    const char *key, *v;
    for (int64_t e = 0; params && sb_params_entry(params, e, &key, &v) == SB_OK && st == SB_OK; e++) {
        int64_t i;
        if (is(key, "numeric_mode", NULL)) {
            continue;
        } else if (is(key, "model", "family")) {
            if (strcmp(v, "dbscan")) st = sb_fail(SB_ERR_INVALID_ARGUMENT, "model='%s' is not DBSCAN (model=dbscan)", v);
        } else if (is(key, "eps", NULL)) {
            st = sb_param_float(key, v, 0.0f, 3.0e38f, 1, &p->eps);
        } else if (is(key, "min_samples", NULL)) {
            if ((st = sb_param_int(key, v, 1, INT32_MAX, &i)) == SB_OK) p->min_samples = (double)i;
        } else if (is(key, "metric", NULL)) {
            metric = v;
        } else if (is(key, "p", NULL)) {
            if ((st = sb_param_int(key, v, 1, 1000, &i)) == SB_OK) power = (int)i;
        } else if (is(key, "algorithm", NULL)) {
            /* every one finds the same exact neighborhoods; brute force computes them here */
            if (strcmp(v, "auto") && strcmp(v, "brute") && strcmp(v, "ball_tree") && strcmp(v, "kd_tree"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "algorithm='%s': auto, brute, ball_tree or kd_tree", v);
        } else if (is(key, "leaf_size", NULL)) {
            if ((st = sb_param_int(key, v, 1, INT32_MAX, &i)) != SB_OK) break; /* tunes the trees only: no effect */
        } else if (is(key, "device", "device_type")) {
            st = sb_device_parse(v, &p->device); /* a GPU screens the neighborhoods (knn.c): the same ones */
        } else {
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown parameter '%s' for DBSCAN (docs/cluster.md)", key);
        }
    }
    if (st == SB_OK) st = sb_knn_metric_resolve(metric ? metric : "euclidean", power, &p->metric);
    return st;
}

/* The root (lowest index) of i's set, halving the path. */
static int64_t uf_find(int64_t *par, int64_t i) {
    while (par[i] != i) {
        par[i] = par[par[i]];
        i = par[i];
    }
    return i;
}

static void uf_union(int64_t *par, int64_t a, int64_t b) {
    a = uf_find(par, a), b = uf_find(par, b);
    if (a < b) par[b] = a;
    else if (b < a) par[a] = b;
}

sb_status sb_dbscan_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out) {
    sb_clear_error();
    if (out) *out = NULL;
    if (!train || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dbscan_fit: NULL argument");
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    db_params p;
    sb_status st = db_params_parse(params, &p);
    if (st != SB_OK) return st;
    const sb_table *t = &train->t;
    const int64_t n = t->nrows, d = t->ncols;
    if (n < 1 || d < 1) return sb_fail(SB_ERR_INVALID_INPUT, "DBSCAN needs at least one row and one feature");
    for (int64_t i = 0; i < n * d; i++)
        if (!isfinite(t->x[i]))
            return sb_fail(SB_ERR_INVALID_INPUT, "row %lld, feature %lld: %s; DBSCAN takes finite values only",
                           (long long)(i / d), (long long)(i % d), isnan(t->x[i]) ? "missing (NaN)" : "infinite");
    int any_weight = !t->weight;
    for (int64_t i = 0; t->weight && i < n; i++) {
        if (!isfinite(t->weight[i]))
            return sb_fail(SB_ERR_INVALID_INPUT, "row %lld: the sample weight is not finite", (long long)i);
        any_weight |= t->weight[i] != 0.0f;
    }
    if (!any_weight) return sb_fail(SB_ERR_INVALID_INPUT, "the sample weights are all zero: at least one must be nonzero");
    /* the neighborhoods: a nearest-neighbors model over the rows, queried by the rows themselves */
    sb_model *m = NULL;
    int64_t *off = NULL, *idx = NULL;
    float *dist = NULL;
    int64_t *par = NULL;
    int32_t *core = NULL, *labels = NULL, *map = NULL;
    double *wsum = NULL;
    int32_t nclusters = 0;
    int64_t ncore = 0;
    char text[192];
    st = sb_knn_self_query(t, p.metric, 0, (double)p.eps, 0, p.device, &off, &idx, &dist);
    if (st == SB_OK) {
        par = sb_malloc(sizeof(int64_t) * (size_t)n);
        core = sb_malloc(sizeof(int32_t) * (size_t)n);
        labels = sb_malloc(sizeof(int32_t) * (size_t)n);
        map = sb_malloc(sizeof(int32_t) * (size_t)n);
        wsum = sb_malloc(sizeof(double) * (size_t)n);
        if (!par || !core || !labels || !map || !wsum) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "DBSCAN: out of memory for %lld rows", (long long)n);
    }
    if (st == SB_OK) {
        for (int64_t i = 0; i < n; i++) { /* the neighborhood's weight, in index order */
            double s = 0.0;
            for (int64_t c = off[i]; c < off[i + 1]; c++) s += t->weight ? (double)t->weight[idx[c]] : 1.0;
            wsum[i] = s;
            core[i] = s >= p.min_samples;
            ncore += core[i];
            par[i] = i;
        }
        for (int64_t i = 0; i < n; i++)
            for (int64_t c = off[i]; core[i] && c < off[i + 1]; c++)
                if (core[idx[c]]) uf_union(par, i, idx[c]);
        for (int64_t i = 0; i < n; i++) map[i] = -1;
        for (int64_t i = 0; i < n; i++) { /* the cluster's root, then its number by first member */
            int64_t root = -1;
            if (core[i]) root = uf_find(par, i);
            else
                for (int64_t c = off[i]; c < off[i + 1] && root < 0; c++) /* lists in index order: the lowest core */
#ifdef SB_SABOTAGE_DBSCAN_BORDER
                    /* Separating arm (make SABOTAGE=dbscan-border): the highest-index core neighbor's cluster. */
                    if (core[idx[off[i + 1] - 1 - (c - off[i])]]) root = uf_find(par, idx[off[i + 1] - 1 - (c - off[i])]);
#else
                    if (core[idx[c]]) root = uf_find(par, idx[c]);
#endif
            if (root < 0) {
                labels[i] = -1;
                continue;
            }
            if (map[root] < 0) map[root] = nclusters++;
            labels[i] = map[root];
        }
        snprintf(text, sizeof text, "eps=%.9g\nmetric=%s\nmin_samples=%.0f\nmodel=dbscan\n", (double)p.eps,
                 sb_knn_metric_name(p.metric), p.min_samples);
    }
    if (st == SB_OK && card) {
        char dims[96];
        snprintf(dims, sizeof dims, "%lld x %lld, eps %.9g, min_samples %.0f", (long long)n, (long long)d, (double)p.eps,
                 p.min_samples);
        st = sb_card_set_meta(card, "dbscan.data", dims);
        int64_t *cnt = sb_malloc(sizeof(int64_t) * (size_t)n);
        if (st == SB_OK && !cnt) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "DBSCAN: out of memory");
        for (int64_t i = 0; st == SB_OK && i < n; i++) cnt[i] = off[i + 1] - off[i];
        if (st == SB_OK) st = sb_card_record(card, "dbscan.neighborhood_sizes", SB_DTYPE_I64, cnt, (uint64_t)n);
        if (st == SB_OK) st = sb_card_record(card, "dbscan.neighborhood_weights", SB_DTYPE_U64, wsum, (uint64_t)n); /* double bits */
        if (st == SB_OK) st = sb_card_record(card, "dbscan.core", SB_DTYPE_I32, core, (uint64_t)n);
        if (st == SB_OK) st = sb_card_record(card, "dbscan.labels", SB_DTYPE_I32, labels, (uint64_t)n);
        sb_free(cnt);
    }
    if (st == SB_OK) st = sb_model_alloc(&m);
    if (st == SB_OK) {
        m->family = SB_FAMILY_DBSCAN;
        m->objective = SB_OBJ_REGRESSION;
        m->num_features = (int32_t)d;
        m->num_class = 1;
        m->numeric_mode = p.numeric_mode;
        if (!(m->params = sb_strdup(text)) || !(m->dbscan = sb_dbscan_alloc(n, ncore, (int32_t)d)))
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "DBSCAN: out of memory");
    }
    if (st == SB_OK) {
        sb_dbscan *b = m->dbscan;
        b->eps = p.eps, b->min_samples = (int32_t)p.min_samples, b->metric = p.metric, b->n_clusters = nclusters;
        memcpy(b->labels, labels, sizeof(int32_t) * (size_t)n);
        int64_t w = 0;
        for (int64_t i = 0; i < n; i++)
            if (core[i]) {
                b->core[w] = i;
                memcpy(b->components + w * d, t->x + i * d, sizeof(float) * (size_t)d);
                w++;
            }
    }
    if (st == SB_OK) st = sb_model_copy_names(m, t->names, d, "DBSCAN");
    if (st == SB_OK && card) st = sb_model_record_bytes(card, m, "dbscan.model_bytes");
    sb_free(off), sb_free(idx), sb_free(dist);
    sb_free(par), sb_free(core), sb_free(labels), sb_free(map), sb_free(wsum);
    if (st != SB_OK) {
        sb_model_free(m);
        return st;
    }
    *out = m;
    return SB_OK;
}

sb_status sb_dbscan_int(const sb_model *m, const char *name, int64_t *out) {
    const sb_dbscan *b = m->dbscan;
    if (!strcmp(name, "n_clusters")) *out = b->n_clusters;
    else if (!strcmp(name, "n_core")) *out = b->ncore;
    else if (!strcmp(name, "n_samples_fit")) *out = b->n;
    else if (!strcmp(name, "min_samples")) *out = b->min_samples;
    else return sb_fail(SB_ERR_NOT_FOUND, "a DBSCAN model has no integer '%s'", name);
    return SB_OK;
}

/* The model's index arrays: "labels" (n) and "core_sample_indices" (ncore). */
sb_status sb_dbscan_indices(const sb_model *m, const char *name, int64_t *out, size_t cap, size_t *needed) {
    const sb_dbscan *b = m->dbscan;
    if (!strcmp(name, "labels")) return sb_model_indices_out(b->labels, NULL, (size_t)b->n, name, out, cap, needed);
    if (!strcmp(name, "core_sample_indices"))
        return sb_model_indices_out(NULL, b->core, (size_t)b->ncore, name, out, cap, needed);
    return sb_fail(SB_ERR_NOT_FOUND, "a DBSCAN model has no index array '%s' (labels, core_sample_indices)", name);
}

sb_status sb_model_get_indices(const sb_model *m, const char *name, int64_t *out, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!m || !name || (!out && cap)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_indices: NULL argument");
    if (m->agglo) return sb_agglo_indices(m, name, out, cap, needed);
    if (m->kmeans) return sb_km_indices(m, name, out, cap, needed);
    if (m->spectral) return sb_spectral_indices(m, name, out, cap, needed);
    if (m->svm) return sb_svm_indices(m, name, out, cap, needed);
    if (!m->dbscan)
        return sb_fail(SB_ERR_NOT_FOUND, "a %s model has no index array '%s' (DBSCAN's labels and core_sample_indices)",
                       sb_family_name((sb_family)m->family), name);
    return sb_dbscan_indices(m, name, out, cap, needed);
}
