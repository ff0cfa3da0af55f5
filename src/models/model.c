/*
 * model.c: the in-memory model's life cycle (alloc, free, info, feature
 * importance). The file format that saves and reads it is model_format.c.
 */
#include "model.h"
#include "timeseries/ets.h"
#include "timeseries/arima.h"
#include "gp/gp.h"
#include "mlp/mlp.h"
#include "lm/lm.h"
#include "../kernels/tree.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const sb_model_profiles[] = {"sb-identical-v1", "sb-identical-v2", "sb-identical-v3", "sb-identical-v4",
                                         "sb-identical-v5", "sb-identical-v6", "sb-identical-v7", "sb-identical-v8",
                                         SB_PROFILE_VERSION};
const int32_t sb_model_nprofiles = (int32_t)(sizeof sb_model_profiles / sizeof sb_model_profiles[0]);

/* 1 + the index of the model's profile in sb_model_profiles (NULL: the
 * current, the last); 0 when it is not listed. */
int32_t sb_model_profile_number(const sb_model *m) {
    const char *p = m && m->profile ? m->profile : SB_PROFILE_VERSION;
    for (int32_t i = 0; i < sb_model_nprofiles; i++)
        if (strcmp(p, sb_model_profiles[i]) == 0) return i + 1;
    return 0;
}

/* SB_K_OBJ_FOREST_PROBA for a forest classifier of profile v5 or later, else
 * the file's objective (model.h). */
int32_t sb_model_kernel_objective(const sb_model *m) {
    if (m->objective == SB_OBJ_FOREST_CLASSES && sb_model_profile_number(m) >= 5) return SB_K_OBJ_FOREST_PROBA;
    return m->objective;
}

/* A zeroed model (no arrays) of this library's profile; sb_model_free
 * releases whatever is filled in later. */
sb_status sb_model_alloc(sb_model **out) {
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_alloc: NULL argument");
    *out = sb_calloc(1, sizeof **out);
    if (!*out) return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_model_alloc: out of memory");
    (*out)->profile = SB_PROFILE_VERSION;
    return SB_OK;
}

static const char *const k_linear_kinds[SB_LIN_KIND_COUNT_] = {"linear", "ridge", "lasso", "elasticnet",
                                                              "logistic", "pca", "truncated_svd"};

const char *sb_linear_kind_name(int32_t kind) {
    return kind >= 0 && kind < SB_LIN_KIND_COUNT_ ? k_linear_kinds[kind] : "unknown";
}

sb_linear *sb_linear_alloc(int32_t kind, int32_t nout, int32_t nfeat) {
    sb_linear *l = sb_calloc(1, sizeof *l);
    if (!l) return NULL;
    l->kind = kind;
    l->nout = nout;
    const size_t no = (size_t)(nout > 0 ? nout : 1), nf = (size_t)(nfeat > 0 ? nfeat : 1);
    l->coef = sb_calloc(no * nf, sizeof(float));
    l->intercept = sb_calloc(no, sizeof(float));
    int bad = !l->coef || !l->intercept;
    if (kind == SB_LIN_PCA || kind == SB_LIN_TSVD) {
        l->ev = sb_calloc(no, sizeof(float));
        l->evr = sb_calloc(no, sizeof(float));
        l->sv = sb_calloc(no, sizeof(float));
        bad = bad || !l->ev || !l->evr || !l->sv;
        if (kind == SB_LIN_PCA) bad = bad || !(l->mean = sb_calloc(nf, sizeof(float)));
    }
    if (SB_LIN_HAS_RUNS(kind, nout)) bad = bad || !(l->runs = sb_calloc(2 * no, sizeof(int32_t)));
    if (bad) {
        sb_linear_free(l);
        return NULL;
    }
    return l;
}

void sb_linear_free(sb_linear *l) {
    if (!l) return;
    sb_free(l->coef);
    sb_free(l->intercept);
    sb_free(l->mean);
    sb_free(l->ev);
    sb_free(l->evr);
    sb_free(l->sv);
    sb_free(l->runs);
    sb_free(l);
}

sb_kmeans *sb_kmeans_alloc(int32_t k, int32_t nfeat) {
    sb_kmeans *c = sb_calloc(1, sizeof *c);
    if (!c) return NULL;
    c->k = k;
    c->centers = sb_calloc((size_t)k * (size_t)(nfeat > 0 ? nfeat : 1), sizeof(float));
    if (!c->centers) {
        sb_free(c);
        return NULL;
    }
    return c;
}

void sb_kmeans_free(sb_kmeans *c) {
    if (!c) return;
    sb_free(c->centers);
    sb_free(c->labels);
    sb_free(c);
}

sb_knn *sb_knn_alloc(int32_t task, int64_t n, int32_t nfeat) {
    sb_knn *k = sb_calloc(1, sizeof *k);
    if (!k) return NULL;
    k->task = task;
    k->n = n;
    k->x = sb_malloc(sizeof(float) * (size_t)(n > 0 ? n : 1) * (size_t)(nfeat > 0 ? nfeat : 1));
    if (task != SB_KNN_NEIGHBORS) k->y = sb_malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    if (!k->x || (task != SB_KNN_NEIGHBORS && !k->y)) {
        sb_knn_free(k);
        return NULL;
    }
    return k;
}

void sb_knn_free(sb_knn *k) {
    if (!k) return;
    sb_free(k->x);
    sb_free(k->y);
    sb_free(k->xs);
    sb_free(k->xsn);
    sb_free(k->mu);
    sb_free(k->xnorm);
    sb_free(k);
}

sb_dbscan *sb_dbscan_alloc(int64_t n, int64_t ncore, int32_t nfeat) {
    sb_dbscan *b = sb_calloc(1, sizeof *b);
    if (!b) return NULL;
    b->n = n, b->ncore = ncore;
    b->labels = sb_malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    b->core = sb_malloc(sizeof(int64_t) * (size_t)(ncore > 0 ? ncore : 1));
    b->components = sb_malloc(sizeof(float) * (size_t)(ncore > 0 ? ncore : 1) * (size_t)(nfeat > 0 ? nfeat : 1));
    if (!b->labels || !b->core || !b->components) {
        sb_dbscan_free(b);
        return NULL;
    }
    return b;
}

void sb_dbscan_free(sb_dbscan *b) {
    if (!b) return;
    sb_free(b->labels);
    sb_free(b->core);
    sb_free(b->components);
    sb_free(b);
}

sb_agglo *sb_agglo_alloc(int64_t n) {
    sb_agglo *g = sb_calloc(1, sizeof *g);
    if (!g) return NULL;
    g->n = n;
    const size_t m = (size_t)(n > 1 ? n - 1 : 1);
    g->labels = sb_malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    g->children = sb_malloc(sizeof(int64_t) * 2 * m);
    g->distances = sb_malloc(sizeof(double) * m);
    if (!g->labels || !g->children || !g->distances) {
        sb_agglo_free(g);
        return NULL;
    }
    return g;
}

/* The first non-finite cell of each chunk of cells (its index, or -1). */
typedef struct finite_job {
    const float *x;
    int64_t cells, *first;
} finite_job;

static void finite_task(void *ctx, int64_t task) {
    const finite_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->cells, (int64_t)1 << 20, task, &b, &e);
    j->first[task] = -1;
    for (int64_t q = b; q < e; q++)
        if (!isfinite(j->x[q])) {
            j->first[task] = q;
            return;
        }
}

int64_t sb_first_nonfinite(const float *x, int64_t cells) {
    const int64_t nt = sb_chunk_count(cells, (int64_t)1 << 20);
    int64_t *first = sb_malloc(sizeof(int64_t) * (size_t)(nt > 0 ? nt : 1));
    if (!first) { /* out of memory: the serial scan */
        for (int64_t q = 0; q < cells; q++)
            if (!isfinite(x[q])) return q;
        return -1;
    }
    finite_job j = {x, cells, first};
    sb_parallel_for(nt, finite_task, &j);
    int64_t at = -1;
    for (int64_t t = 0; t < nt && at < 0; t++) at = first[t];
    sb_free(first);
    return at;
}

sb_status sb_model_indices_out(const int32_t *i32, const int64_t *i64, size_t n, const char *name, int64_t *out,
                               size_t cap, size_t *needed) {
    if (needed) *needed = n;
    if (cap == 0) return SB_OK;
    if (cap < n || !out) return sb_fail(SB_ERR_LIMIT, "'%s' has %zu values, the buffer holds %zu", name, n, cap);
    for (size_t i = 0; i < n; i++) out[i] = i32 ? (int64_t)i32[i] : i64[i];
    return SB_OK;
}

sb_status sb_model_copy_names(sb_model *m, char *const *names, int64_t d, const char *who) {
    if (!names) return SB_OK;
    if (!(m->feature_names = sb_calloc((size_t)(d > 0 ? d : 1), sizeof(char *))))
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    for (int64_t j = 0; j < d; j++)
        if (!(m->feature_names[j] = sb_strdup(names[j]))) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    return SB_OK;
}

sb_spectral *sb_spectral_alloc(int64_t n) {
    sb_spectral *g = sb_calloc(1, sizeof *g);
    if (!g) return NULL;
    g->n = n;
    if (!(g->labels = sb_malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1)))) {
        sb_free(g);
        return NULL;
    }
    return g;
}

void sb_spectral_free(sb_spectral *g) {
    if (!g) return;
    sb_free(g->labels);
    sb_free(g);
}

sb_kde *sb_kde_alloc(int64_t n, int32_t nfeat, int weighted) {
    sb_kde *k = sb_calloc(1, sizeof *k);
    if (!k) return NULL;
    k->n = n;
    k->x = sb_malloc(sizeof(float) * (size_t)(n > 0 ? n : 1) * (size_t)(nfeat > 0 ? nfeat : 1));
    if (weighted) k->w = sb_malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    if (!k->x || (weighted && !k->w)) {
        sb_kde_free(k);
        return NULL;
    }
    return k;
}

sb_svm *sb_svm_alloc(int32_t kind, int32_t nclass, int64_t nsv, int32_t nfeat) {
    sb_svm *s = sb_calloc(1, sizeof *s);
    if (!s) return NULL;
    s->kind = kind, s->nclass = nclass, s->nsv = nsv;
    const size_t n = (size_t)(nsv > 0 ? nsv : 1), nc = (size_t)(kind == SB_SVM_SVR ? 1 : nclass);
    const size_t np = (size_t)sb_svm_npairs(s), nr = (size_t)sb_svm_ncoef(s);
    s->n_support = sb_calloc(nc, sizeof *s->n_support);
    s->support = sb_calloc(n, sizeof *s->support);
    s->sv = sb_calloc(n * (size_t)(nfeat > 0 ? nfeat : 1), sizeof *s->sv);
    s->coef = sb_calloc(n * nr, sizeof *s->coef);
    s->rho = sb_calloc(np, sizeof *s->rho);
    s->n_iter = sb_calloc(np, sizeof *s->n_iter);
    if (!s->n_support || !s->support || !s->sv || !s->coef || !s->rho || !s->n_iter) {
        sb_svm_free(s);
        return NULL;
    }
    return s;
}

void sb_svm_free(sb_svm *s) {
    if (!s) return;
    sb_free(s->n_support);
    sb_free(s->support);
    sb_free(s->sv);
    sb_free(s->coef);
    sb_free(s->rho);
    sb_free(s->n_iter);
    sb_free(s->probA);
    sb_free(s->probB);
    sb_free(s);
}

sb_umap *sb_umap_alloc(int64_t n, int32_t nfeat, int32_t ncomp) {
    sb_umap *u = sb_calloc(1, sizeof *u);
    if (!u) return NULL;
    u->n = n;
    const int64_t nx = n * nfeat, ne = n * ncomp;
    u->x = sb_malloc(sizeof(float) * (size_t)(nx > 0 ? nx : 1));
    u->emb = sb_malloc(sizeof(float) * (size_t)(ne > 0 ? ne : 1));
    if (!u->x || !u->emb) {
        sb_umap_free(u);
        return NULL;
    }
    return u;
}

void sb_umap_free(sb_umap *u) {
    if (!u) return;
    sb_free(u->x);
    sb_free(u->emb);
    sb_free(u);
}

void sb_kde_free(sb_kde *k) {
    if (!k) return;
    sb_free(k->x);
    sb_free(k->w);
    sb_free(k);
}

void sb_agglo_free(sb_agglo *g) {
    if (!g) return;
    sb_free(g->labels);
    sb_free(g->children);
    sb_free(g->distances);
    sb_free(g);
}

/* The model's profile: a static string, never NULL for a model this library built or read. */
sb_status sb_model_get_profile(const sb_model *m, const char **profile) {
    sb_clear_error();
    if (!m || !profile) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_profile: NULL argument");
    *profile = m->profile ? m->profile : SB_PROFILE_VERSION;
    return SB_OK;
}

void sb_tree_release(sb_tree *t) {
    sb_free(t->nodes);
    sb_free(t->cat_start);
    sb_free(t->cat_codes);
    memset(t, 0, sizeof *t);
}

sb_status sb_tree_copy(const sb_tree *src, sb_tree *dst) {
    memset(dst, 0, sizeof *dst);
    const int32_t nc = src->ncat > 0 ? src->cat_start[src->ncat] : 0;
    dst->nodes = sb_malloc(sizeof(sb_tree_node) * (size_t)(src->nnodes > 0 ? src->nnodes : 1));
    if (src->ncat > 0) {
        dst->cat_start = sb_malloc(sizeof(int32_t) * (size_t)(src->ncat + 1));
        dst->cat_codes = sb_malloc(sizeof(float) * (size_t)(nc > 0 ? nc : 1));
    }
    if (!dst->nodes || (src->ncat > 0 && (!dst->cat_start || !dst->cat_codes))) {
        sb_tree_release(dst);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "model: out of memory");
    }
    dst->nnodes = src->nnodes;
    memcpy(dst->nodes, src->nodes, sizeof(sb_tree_node) * (size_t)src->nnodes);
    dst->ncat = src->ncat;
    if (src->ncat > 0) {
        memcpy(dst->cat_start, src->cat_start, sizeof(int32_t) * (size_t)(src->ncat + 1));
        memcpy(dst->cat_codes, src->cat_codes, sizeof(float) * (size_t)nc);
    }
    return SB_OK;
}

/* Free the model and every array it owns; NULL is a no-op. Tolerates partly
 * built models: NULL arrays and NULL entries are skipped, counts bound the loops. */
void sb_model_free(sb_model *m) {
    if (!m) return;
    sb_labels_free(m->labels);
    sb_model_catnames_free(m);
    if (m->feature_names) {
        for (int32_t i = 0; i < m->num_features; i++) sb_free(m->feature_names[i]);
        sb_free(m->feature_names);
    }
    if (m->trees) {
        for (int32_t t = 0; t < m->ntrees; t++) sb_tree_release(&m->trees[t]);
        sb_free(m->trees);
    }
    sb_free(m->base_score);
    sb_free(m->params);
    sb_linear_free(m->linear);
    sb_kmeans_free(m->kmeans);
    sb_knn_free(m->knn);
    sb_dbscan_free(m->dbscan);
    sb_agglo_free(m->agglo);
    sb_spectral_free(m->spectral);
    sb_kde_free(m->kde);
    sb_svm_free(m->svm);
    sb_ets_release(m->ets);
    sb_arima_release(m->arima);
    sb_gp_release(m->gp);
    sb_mlp_release(m->mlp);
    sb_lm_release(m->lm);
    sb_umap_free(m->umap);
    sb_evals_free(m->evals);
    sb_free(m);
}

void sb_evals_free(sb_evals *e) {
    if (!e) return;
    sb_free(e->values);
    sb_free(e->sets);
    sb_free(e);
}

const char *sb_model_objective_name(int32_t objective) {
    switch (objective) {
    case SB_OBJ_REGRESSION: return "regression";
    case SB_OBJ_BINARY: return "binary";
    case SB_OBJ_MULTICLASS: return "multiclass";
    case SB_OBJ_LAMBDARANK: return "lambdarank";
    case SB_OBJ_RANK_PAIRWISE: return "rank_pairwise";
    case SB_OBJ_HUBER: return "huber";
    case SB_OBJ_QUANTILE: return "quantile";
    case SB_OBJ_POISSON: return "poisson";
    case SB_OBJ_GAMMA: return "gamma";
    case SB_OBJ_TWEEDIE: return "tweedie";
    case SB_OBJ_FOREST_CLASSES: return "classification";
    case SB_OBJ_ISOLATION: return "isolation";
    }
    return "unknown";
}

/* Copy the model's shape into *info; objective is its name ("regression"...). */
sb_status sb_model_get_info(const sb_model *m, sb_model_info *info) {
    sb_clear_error();
    if (!m || !info) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_info: NULL argument");
    memset(info, 0, sizeof *info);
    info->family = m->family;
    info->num_features = m->num_features;
    info->num_class = m->num_class;
    info->ntrees = m->ntrees;
    info->numeric_mode = m->numeric_mode;
    snprintf(info->objective, sizeof info->objective, "%s", sb_model_objective_name(m->objective));
    return SB_OK;
}

/* Importance per feature into out[num_features]: type 0 counts the internal
 * nodes that split on the feature, type 1 sums their gains in float, tree by
 * tree and node by node in index order (one fixed order, so the same bits
 * everywhere). *needed gets num_features; cap 0 asks (out may then be NULL);
 * a smaller nonzero cap is SB_ERR_LIMIT and out is left untouched. */
sb_status sb_model_feature_importance(const sb_model *m, int32_t type, float *out, size_t cap,
                                      size_t *needed) {
    sb_clear_error();
    if (!m || (!out && cap))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_feature_importance: NULL argument");
    if (m->family == SB_FAMILY_LINEAR)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_feature_importance: a linear model has coefficients, not "
                       "split importance (sb_model_get_array 'coef')");
    if (type != 0 && type != 1)
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "sb_model_feature_importance: unknown type %d (0 = split count, 1 = total gain)",
                       (int)type);
    if (m->num_features < 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_feature_importance: model has %d features",
                       (int)m->num_features);
    size_t need = (size_t)m->num_features;
    if (needed) *needed = need;
    if (cap == 0) return SB_OK;
    if (cap < need)
        return sb_fail(SB_ERR_LIMIT, "sb_model_feature_importance: buffer holds %zu floats, %zu needed",
                       cap, need);
    for (size_t f = 0; f < need; f++) out[f] = 0.0f;
    for (int32_t t = 0; t < m->ntrees; t++) {
        const sb_tree *tr = &m->trees[t];
        for (int32_t i = 0; i < tr->nnodes; i++) {
            const sb_tree_node *n = &tr->nodes[i];
            if (n->feature < 0) continue;
            if (n->feature >= m->num_features)
                return sb_fail(SB_ERR_INVALID_ARGUMENT,
                               "sb_model_feature_importance: tree %d node %d splits on feature %d of %d",
                               (int)t, (int)i, (int)n->feature, (int)m->num_features);
            out[n->feature] = out[n->feature] + (type == 0 ? 1.0f : n->gain);
        }
    }
    return SB_OK;
}
