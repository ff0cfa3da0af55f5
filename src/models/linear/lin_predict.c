/*
 * lin_predict.c: prediction and attributes of a linear model. Margins are the
 * core's identical product X W^T (PCA: (X - mean) W^T) plus the intercept in
 * one addition; probabilities and classes follow on the host in one fixed
 * order (the profile's exp and sigmoid), so every device gives the same bits.
 */
#include "linear.h"
#include "../cluster/kmeans.h"
#include "../neighbors/knn.h"
#include "../cluster/dbscan.h"
#include "../cluster/agglomerative.h"
#include "../cluster/spectral.h"
#include "../neighbors/kde.h"
#include "../svm/svm.h"
#include "../manifold/umap.h"
#include "../../math/sb_elem.h"
#include <stdlib.h>
#include <math.h>
#include <string.h>

sb_status sb_lin_predict(const sb_model *m, const sb_table *t, int32_t kind, const char *device, float *out,
                         size_t cap, size_t *needed) {
    const sb_linear *l = m->linear;
    const int dec = l->kind == SB_LIN_PCA || l->kind == SB_LIN_TSVD;
    const int logit = l->kind == SB_LIN_LOGISTIC;
    if (dec && kind != SB_PREDICT_RAW && kind != SB_PREDICT_TRANSFORM)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "a %s model transforms (SB_PREDICT_TRANSFORM); it has no %s",
                       sb_linear_kind_name(l->kind), kind == SB_PREDICT_PROBA ? "probabilities" : "values");
    if (!dec && kind == SB_PREDICT_TRANSFORM)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "a %s model predicts; only decompositions transform",
                       sb_linear_kind_name(l->kind));
    if (!logit && kind == SB_PREDICT_PROBA)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "a %s model has no probabilities", sb_linear_kind_name(l->kind));
    const int64_t n = t->nrows;
    const int32_t P = m->num_features, K = l->nout;
    int32_t per_row = K;
    if (logit && kind == SB_PREDICT_VALUE) per_row = 1;
    if (logit && kind == SB_PREDICT_PROBA) per_row = K == 1 ? 1 : K;
    const size_t need = (size_t)n * (size_t)per_row;
    if (needed) *needed = need;
    if (cap == 0) return SB_OK;
    if (cap < need) return sb_fail(SB_ERR_LIMIT, "prediction buffer holds %zu values, %zu needed", cap, need);
    const int64_t bad = sb_lin_first_nonfinite(t->x, n, P);
    if (bad >= 0)
        return sb_fail(SB_ERR_INVALID_INPUT, "row %lld, feature %d is %s: a linear model takes no missing or "
                       "infinite values", (long long)(bad / P), (int)(bad % P), isnan(t->x[bad]) ? "NaN" : "infinite");
    const float *x = t->x;
    float *xc = NULL, *Z = NULL;
    if (l->mean) {
        if (!(xc = sb_malloc(sizeof(float) * (size_t)n * (size_t)P)))
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "predict: out of memory");
        for (int64_t i = 0; i < n; i++)
            for (int32_t j = 0; j < P; j++) xc[i * P + j] = x[i * P + j] - l->mean[j];
        x = xc;
    }
    Z = per_row == K ? out : sb_malloc(sizeof(float) * (size_t)n * (size_t)K);
    sb_status st = Z ? SB_OK : sb_fail(SB_ERR_OUT_OF_MEMORY, "predict: out of memory");
    if (st == SB_OK) st = sb_gemm(device, 0, 1, n, K, P, x, P, l->coef, P, Z, K);
    if (st == SB_OK) {
        for (int64_t i = 0; i < n; i++) {
            float *z = Z + i * K;
            for (int32_t k = 0; k < K; k++) {
                if (dec) {
                    if (l->whiten) z[k] = l->ev[k] > 0.0f ? z[k] / sqrtf(l->ev[k]) : 0.0f;
                } else {
                    z[k] = z[k] + l->intercept[k];
                }
            }
            if (!logit || kind == SB_PREDICT_RAW) continue;
            float *o = out + i * per_row;
            if (K == 1) {
                o[0] = kind == SB_PREDICT_PROBA ? sb_sigmoidf(z[0]) : (z[0] > 0.0f ? 1.0f : 0.0f);
                continue;
            }
            int32_t best = 0;
            for (int32_t k = 1; k < K; k++)
                if (z[k] > z[best]) best = k;
            if (kind == SB_PREDICT_VALUE) {
                o[0] = (float)best;
                continue;
            }
            const float mx = z[best];
            float sum = 0.0f;
            for (int32_t k = 0; k < K; k++) {
                o[k] = sb_expf(z[k] - mx);
                sum = sum + o[k];
            }
            for (int32_t k = 0; k < K; k++) o[k] = o[k] / sum;
        }
    }
    if (Z != out) sb_free(Z);
    sb_free(xc);
    return st;
}

/* ---- attributes ---- */

sb_status sb_model_get_array(const sb_model *m, const char *name, float *out, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!m || !name || (!out && cap)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_array: NULL argument");
    const sb_linear *l = m->linear;
    const float *src = NULL;
    size_t n = 0;
    if (m->kde) return sb_kde_array(m, name, out, cap, needed);
    if (m->umap) return sb_umap_array(m, name, out, cap, needed);
    if (m->svm) return sb_svm_array(m, name, out, cap, needed);
    if (m->kmeans) src = sb_km_array(m, name, &n);
    if (m->dbscan && !strcmp(name, "components")) src = m->dbscan->components, n = (size_t)m->dbscan->ncore * (size_t)m->num_features;
    if (l) {
        const size_t no = (size_t)l->nout, nf = (size_t)m->num_features;
        const int dec = l->kind == SB_LIN_PCA || l->kind == SB_LIN_TSVD;
        if ((!strcmp(name, "coef") && !dec) || (!strcmp(name, "components") && dec)) src = l->coef, n = no * nf;
        else if (!strcmp(name, "intercept") && !dec) src = l->intercept, n = no;
        else if (!strcmp(name, "mean") && l->mean) src = l->mean, n = nf;
        else if (!strcmp(name, "explained_variance") && dec) src = l->ev, n = no;
        else if (!strcmp(name, "explained_variance_ratio") && dec) src = l->evr, n = no;
        else if (!strcmp(name, "singular_values") && dec) src = l->sv, n = no;
        else if (!strcmp(name, "noise_variance") && l->kind == SB_LIN_PCA) src = &l->noise_variance, n = 1;
    }
    if (!src && m->kmeans) return sb_fail(SB_ERR_NOT_FOUND, "a kmeans model has no array '%s'", name);
    float *agd = NULL;
    if (m->agglo && !strcmp(name, "distances")) { /* the merge distances, float32 of the doubles */
        n = (size_t)(m->agglo->n - 1);
        if (!(agd = sb_malloc(sizeof(float) * (n ? n : 1)))) return sb_fail(SB_ERR_OUT_OF_MEMORY, "out of memory");
        for (size_t i = 0; i < n; i++) agd[i] = (float)m->agglo->distances[i];
        src = agd;
    }
    if (!src && m->agglo) return sb_fail(SB_ERR_NOT_FOUND, "an agglomerative model has no array '%s' (distances)", name);
    if (!src && m->dbscan)
        return sb_fail(SB_ERR_NOT_FOUND, "a DBSCAN model has no array '%s' (components; labels and core_sample_indices "
                       "are index arrays: sb_model_get_indices)", name);
    if (m->knn) return sb_fail(SB_ERR_NOT_FOUND, "a nearest-neighbors model has no array '%s' (kneighbors gives its neighbors)", name);
    if (!src && !strcmp(name, "eval_history")) {
        if (!m->evals)
            return sb_fail(SB_ERR_NOT_FOUND, "this model has no 'eval_history': only a gradient boosting fit with "
                           "validation rows keeps one (and a loaded model has none)");
        src = m->evals->values, n = (size_t)m->evals->niter * (size_t)m->evals->nsets * (size_t)m->evals->nm;
    }
    if (!src)
        return sb_fail(SB_ERR_NOT_FOUND, "a %s model has no array '%s'",
                       l ? sb_linear_kind_name(l->kind) : sb_family_name((sb_family)m->family), name);
    if (needed) *needed = n;
    sb_status st = SB_OK;
    if (cap != 0 && cap < n) st = sb_fail(SB_ERR_LIMIT, "'%s' has %zu values, the buffer holds %zu", name, n, cap);
    else if (cap != 0) memcpy(out, src, sizeof(float) * n);
    sb_free(agd);
    return st;
}

sb_status sb_model_get_int(const sb_model *m, const char *name, int64_t *out) {
    sb_clear_error();
    if (!m || !name || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_int: NULL argument");
    if (m->kmeans) return sb_km_int(m, name, out);
    if (m->knn) return sb_knn_int(m, name, out);
    if (m->dbscan) return sb_dbscan_int(m, name, out);
    if (m->agglo) return sb_agglo_int(m, name, out);
    if (m->spectral) return sb_spectral_int(m, name, out);
    if (m->kde) return sb_kde_int(m, name, out);
    if (m->umap) return sb_umap_int(m, name, out);
    if (m->svm) return sb_svm_int(m, name, out);
    const sb_linear *l = m->linear;
    if (m->evals) {
        if (!strcmp(name, "eval_iterations")) return *out = m->evals->niter, SB_OK;
        if (!strcmp(name, "eval_metrics")) return *out = m->evals->nm, SB_OK;
        if (!strcmp(name, "eval_sets")) return *out = m->evals->nsets, SB_OK;
        if (!strcmp(name, "best_iteration")) return *out = m->evals->best, SB_OK;
    }
    if (l) {
        if (!strcmp(name, "n_iter")) return *out = l->n_iter, SB_OK;
        /* Lasso and ElasticNet with several targets: "n_iter.T" and "converged.T", target T's own */
        if (l->runs && (!strncmp(name, "n_iter.", 7) || !strncmp(name, "converged.", 10))) {
            const int conv = name[0] == 'c';
            const char *d = name + (conv ? 10 : 7);
            char *end = NULL;
            const long tg = strtol(d, &end, 10);
            if (end != d && !*end && d[0] >= '0' && d[0] <= '9' && tg >= 0 && tg < l->nout)
                return *out = l->runs[(conv ? l->nout : 0) + tg], SB_OK;
        }
        if (!strcmp(name, "converged")) return *out = l->converged, SB_OK;
        if (!strcmp(name, "rank")) return *out = l->rank, SB_OK;
        if (!strcmp(name, "n_outputs")) return *out = l->nout, SB_OK;
        if (!strcmp(name, "n_classes")) return *out = l->nclass, SB_OK;
        if (!strcmp(name, "kind")) return *out = l->kind, SB_OK;
        if (!strcmp(name, "whiten")) return *out = l->whiten, SB_OK;
    }
    return sb_fail(SB_ERR_NOT_FOUND, "a %s model has no integer '%s'",
                   l ? sb_linear_kind_name(l->kind) : sb_family_name((sb_family)m->family), name);
}

sb_status sb_model_get_eval_name(const sb_model *m, int32_t k, const char **name) {
    sb_clear_error();
    if (!m || !name) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_eval_name: NULL argument");
    if (!m->evals)
        return sb_fail(SB_ERR_NOT_FOUND, "this model has no metric log: only a gradient boosting fit with validation "
                       "rows keeps one (and a loaded model has none)");
    if (k < 0 || k >= m->evals->nm)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "metric %d of %d", (int)k, (int)m->evals->nm);
    *name = m->evals->names[k];
    return SB_OK;
}

sb_status sb_model_get_eval_set_name(const sb_model *m, int32_t s, const char **name) {
    sb_clear_error();
    if (!m || !name) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_eval_set_name: NULL argument");
    if (!m->evals)
        return sb_fail(SB_ERR_NOT_FOUND, "this model has no metric log: only a gradient boosting fit with validation "
                       "rows keeps one (and a loaded model has none)");
    if (s < 0 || s >= m->evals->nsets)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "validation set %d of %d", (int)s, (int)m->evals->nsets);
    *name = m->evals->sets[s];
    return SB_OK;
}
