/*
 * predict.c: prediction from a model on raw float features, on the CPU or on a
 * device. A row's margin is the base score plus each tree's leaf, added in
 * tree order (kernels/tree.h: sb_k_margins); that is the sequence of additions
 * training used, so a saved and reloaded model predicts the very bits training
 * computed, on every machine and backend.
 */
#include "model.h"
#include "../io/dataset.h"
#include "../kernels/tree.h"
#include "../kernels/quantize.h"
#include "trees/tdev.h"
#include "linear/linear.h"
#include "cluster/kmeans.h"
#include "neighbors/knn.h"
#include "svm/svm.h"
#include "manifold/umap.h"
#include "explain.h"
#include <float.h>
#include <string.h>

#define PREDICT_GRAIN 4096

/* Flattened entries of tree t: its nodes, then per categorical set a header
 * and one entry per code (sb_k_pnode). */
static int64_t flat_size(const sb_tree *t) {
    return (int64_t)t->nnodes + (t->ncat > 0 ? (int64_t)t->ncat + t->cat_start[t->ncat] : 0);
}

sb_status sb_model_flatten(const sb_model *m, sb_k_pnode **nodes, int32_t **start, int32_t *nnodes) {
    int64_t total = 0;
    for (int32_t t = 0; t < m->ntrees; t++) total += flat_size(&m->trees[t]);
    *nodes = total > INT32_MAX ? NULL : sb_malloc(sizeof(sb_k_pnode) * (size_t)(total ? total : 1));
    *start = sb_malloc(sizeof(int32_t) * (size_t)(m->ntrees ? m->ntrees : 1));
    if (!*nodes || !*start || total > INT32_MAX) {
        sb_free(*nodes);
        sb_free(*start);
        *nodes = NULL;
        *start = NULL;
        return total > INT32_MAX ? sb_fail(SB_ERR_LIMIT, "model: more than %d nodes in all", (int)INT32_MAX)
                                 : sb_fail(SB_ERR_OUT_OF_MEMORY, "predict: out of memory");
    }
    int32_t at = 0;
    *nnodes = (int32_t)total;
    for (int32_t t = 0; t < m->ntrees; t++) {
        const sb_tree *tr = &m->trees[t];
        sb_k_pnode *base = *nodes + at;
        (*start)[t] = at;
        for (int32_t k = 0; k < tr->nnodes; k++) {
            const sb_tree_node *n = &tr->nodes[k];
            sb_k_pnode *p = &base[k];
            p->feature = n->feature;
            p->threshold = n->threshold;
            p->left = n->left;
            p->right = n->right;
            p->value = n->value;
            p->default_left = n->default_left;
            if (n->categorical) { /* its set's header follows the nodes and the sets before it */
                p->default_left = -(tr->nnodes + n->cat_set + tr->cat_start[n->cat_set]);
                p->threshold = 0.0f;
            }
        }
        for (int32_t s = 0; s < tr->ncat; s++) {
            const int32_t first = tr->cat_start[s], count = tr->cat_start[s + 1] - first;
            sb_k_pnode *h = &base[tr->nnodes + s + first];
            memset(h, 0, sizeof(sb_k_pnode) * (size_t)(count + 1));
            h->feature = count;
            h->left = h->right = -1;
            for (int32_t i = 0; i < count; i++) h[1 + i].threshold = tr->cat_codes[first + i];
        }
        at += (int32_t)flat_size(tr);
    }
    return SB_OK;
}

sb_status sb_model_check_score_range(const sb_model *m) {
    const int32_t K = m->num_class > 0 ? m->num_class : 1;
    for (int32_t c = 0; c < K; c++) {
        float bound = sb_u2f(sb_f2u(m->base_score[c]) & 0x7FFFFFFFu);
        for (int32_t i = c; i < m->ntrees && bound <= FLT_MAX; i += K) {
            uint32_t mx = 0u; /* the largest |leaf| as a key: a NaN leaf wins, and is refused below */
            for (int32_t k = 0; k < m->trees[i].nnodes; k++) {
                const sb_tree_node *nd = &m->trees[i].nodes[k];
                uint32_t a = sb_k_maxkey_abs(nd->value);
                if (nd->feature < 0 && a > mx) mx = a;
            }
            bound = (bound + sb_u2f(mx)) * (1.0f + 0x1.0p-22f);
        }
        if (!(bound <= FLT_MAX))
            return sb_fail(SB_ERR_LIMIT,
                           "model: the raw scores of class %d can overflow float32 (base score plus the largest "
                           "leaf of each tree reaches %g or more); refusing to predict with it, as a margin of "
                           "inf or NaN would not be the same on every machine",
                           (int)c, (double)FLT_MAX);
    }
    return SB_OK;
}

typedef struct predict_job {
    const sb_model *m;
    const sb_table *t;
    sb_predict_kind kind;
    const sb_k_pnode *nodes;
    const int32_t *start;
    int32_t per_row;
    float *out;
    int32_t objective; /* the kernels' (sb_model_kernel_objective) */
} predict_job;

static void predict_task(void *ctx, int64_t task) {
    predict_job *j = ctx;
    const int32_t k = j->m->num_class;
    float margin[SB_MODEL_MAX_CLASS_STACK];
    int64_t b, e;
    sb_chunk_range(j->t->nrows, PREDICT_GRAIN, task, &b, &e);
    for (int64_t r = b; r < e; r++) {
        sb_k_margins(j->nodes, j->start, j->m->ntrees, k, j->m->base_score, j->t->x + r * j->t->ncols, margin);
        sb_k_finish_row(j->objective, (int32_t)j->kind, k, margin, j->out + r * j->per_row);
    }
}

sb_status sb_model_predict_on(const sb_model *m, const sb_dataset *d, sb_predict_kind kind, const char *device,
                              float *out, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!m || !d || (!out && cap)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_predict: NULL argument");
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    if (kind == SB_PREDICT_LEAF || kind == SB_PREDICT_CONTRIB) /* explanations: src/models/explain.c */
        return sb_model_explain_on(m, d, (int32_t)kind, device, out, cap, needed);
    if ((unsigned)kind > (unsigned)SB_PREDICT_TRANSFORM)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown prediction kind %d", (int)kind);
    /* the device layer's one parser; cpu-batched predicts on the host, as cpu */
    sb_device_kind dk = SB_DEVICE_CPU;
    sb_status pst = sb_device_parse(device, &dk);
    if (pst != SB_OK) return pst;
    const int on_gpu = dk == SB_DEVICE_CUDA || dk == SB_DEVICE_OPENCL;
    if (m->family == SB_FAMILY_LINEAR) {
        if (!m->linear) return sb_fail(SB_ERR_INVALID_ARGUMENT, "a linear model without its coefficients");
        if (d->t.ncols != m->num_features)
            return sb_fail(SB_ERR_INVALID_INPUT, "feature-count mismatch: the model has %d features, the data %d",
                           (int)m->num_features, (int)d->t.ncols);
        return sb_lin_predict(m, &d->t, (int32_t)kind, device, out, cap, needed);
    }
    if (m->family == SB_FAMILY_KMEANS) {
        if (d->t.ncols != m->num_features)
            return sb_fail(SB_ERR_INVALID_INPUT, "feature-count mismatch: the model has %d features, the data %d",
                           (int)m->num_features, (int)d->t.ncols);
        return sb_km_predict(m, &d->t, (int32_t)kind, device, out, cap, needed);
    }
    if (m->family == SB_FAMILY_SVM) {
        if (!m->svm) return sb_fail(SB_ERR_INVALID_ARGUMENT, "a support vector model without its vectors");
        if (d->t.ncols != m->num_features)
            return sb_fail(SB_ERR_INVALID_INPUT, "feature-count mismatch: the model has %d features, the data %d",
                           (int)m->num_features, (int)d->t.ncols);
        return sb_svm_predict(m, &d->t, (int32_t)kind, (int32_t)dk, out, cap, needed);
    }
    if (m->family == SB_FAMILY_UMAP) {
        if (on_gpu)
            return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "device=%s: UMAP transforms on the CPU only (docs/umap.md)",
                           device);
        return sb_umap_model_transform(m, &d->t, (int32_t)kind, out, cap, needed);
    }
    if (m->family == SB_FAMILY_KDE)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "a kernel density model does not predict: sb_model_score_samples "
                       "gives its log densities");
    if (m->family == SB_FAMILY_ARIMA)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "an ARIMA model does not predict rows: it forecasts its series "
                       "(sb_arima_load, sb_arima_forecast)");
    if (m->family == SB_FAMILY_ETS)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "an exponential smoothing model does not predict rows: it forecasts "
                       "its series (sb_ets_load, sb_ets_forecast)");
    if (m->family == SB_FAMILY_MLP)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "an mlp model predicts float32 rows through sb_mlp_load and "
                       "sb_mlp_predict (or sb_mlp_predict_proba), not sb_model_predict");
    if (m->family == SB_FAMILY_GP)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "a gaussian process model predicts float64 rows through sb_gp_load "
                       "and sb_gp_predict (its mean, std and covariance), not sb_model_predict");
    if (m->family == SB_FAMILY_SPECTRAL)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "a spectral clustering model does not predict: its labels are the "
                       "training rows' (sb_model_get_indices \"labels\")");
    if (m->family == SB_FAMILY_AGGLOMERATIVE)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "an agglomerative model does not predict: its labels are the training "
                       "rows' (sb_model_get_indices \"labels\")");
    if (m->family == SB_FAMILY_DBSCAN)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "a DBSCAN model does not predict: its labels are the training rows' "
                       "(sb_model_get_indices \"labels\")");
    if (m->family == SB_FAMILY_KNN) {
        if (!m->knn) return sb_fail(SB_ERR_INVALID_ARGUMENT, "a nearest-neighbors model without its rows");
        if (d->t.ncols != m->num_features)
            return sb_fail(SB_ERR_INVALID_INPUT, "feature-count mismatch: the model has %d features, the data %d",
                           (int)m->num_features, (int)d->t.ncols);
        return sb_knn_predict(m, &d->t, (int32_t)kind, device, out, cap, needed);
    }
    if (kind == SB_PREDICT_TRANSFORM)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "a tree model predicts; only decompositions and k-means transform");
    if (kind == SB_PREDICT_PROBA && (m->objective == SB_OBJ_REGRESSION || m->objective == SB_OBJ_ISOLATION ||
                                     (m->objective >= SB_OBJ_HUBER && m->objective <= SB_OBJ_TWEEDIE)))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "a %s model has no probabilities",
                       m->objective == SB_OBJ_ISOLATION ? "isolation forest" : sb_model_objective_name(m->objective));
    if (kind == SB_PREDICT_PROBA && (m->objective == SB_OBJ_LAMBDARANK || m->objective == SB_OBJ_RANK_PAIRWISE))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "a ranking model has no probabilities (its scores order documents)");
    if (d->t.ncols != m->num_features)
        return sb_fail(SB_ERR_INVALID_INPUT, "feature-count mismatch: the model has %d features, the data %d",
                       (int)m->num_features, (int)d->t.ncols);
    if (m->num_class > SB_MODEL_MAX_CLASS_STACK)
        return sb_fail(SB_ERR_LIMIT, "prediction supports up to %d classes", SB_MODEL_MAX_CLASS_STACK);
    int per_row = (kind == SB_PREDICT_RAW ||
                   (kind == SB_PREDICT_PROBA &&
                    (m->objective == SB_OBJ_MULTICLASS || m->objective == SB_OBJ_FOREST_CLASSES)))
                      ? m->num_class : 1;
    sb_status rst = sb_model_check_score_range(m);
    if (rst != SB_OK) return rst;
    size_t need = (size_t)d->t.nrows * (size_t)per_row;
    if (needed) *needed = need;
    if (cap == 0) return SB_OK;
    if (cap < need) return sb_fail(SB_ERR_LIMIT, "prediction buffer holds %zu values, %zu needed", cap, need);
    sb_k_pnode *nodes = NULL;
    int32_t *start = NULL, nnodes = 0;
    sb_status st = sb_model_flatten(m, &nodes, &start, &nnodes);
    if (st != SB_OK) return st;
    if (on_gpu) {
        st = sb_tree_predict_device(dk, nodes, nnodes, start, m->ntrees, m->num_class, sb_model_kernel_objective(m),
                                    m->base_score, d->t.x, d->t.nrows, d->t.ncols, (int32_t)kind, per_row, out);
    } else {
        predict_job j = {m, &d->t, kind, nodes, start, per_row, out, sb_model_kernel_objective(m)};
        sb_parallel_for(sb_chunk_count(d->t.nrows, PREDICT_GRAIN), predict_task, &j);
    }
    sb_free(nodes);
    sb_free(start);
    return st;
}

sb_status sb_model_predict(const sb_model *m, const sb_dataset *d, sb_predict_kind kind, float *out, size_t cap,
                           size_t *needed) {
    return sb_model_predict_on(m, d, kind, NULL, out, cap, needed);
}

sb_status sb_model_record(sb_card *card, const sb_model *m, const sb_dataset *train, int32_t kind,
                          const char *pred_tag, const char *bytes_tag) {
    size_t npred = 0;
    float *pred = NULL;
    sb_status st = sb_model_predict(m, train, (sb_predict_kind)kind, NULL, 0, &npred);
    if (st == SB_OK && !(pred = sb_malloc(sizeof(float) * (npred ? npred : 1))))
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "card: out of memory");
    if (st == SB_OK) st = sb_model_predict(m, train, (sb_predict_kind)kind, pred, npred, NULL);
    if (st == SB_OK) st = sb_card_record(card, pred_tag, SB_DTYPE_F32, pred, npred);
    sb_free(pred);
    return st == SB_OK ? sb_model_record_bytes(card, m, bytes_tag) : st;
}

sb_status sb_model_record_bytes(sb_card *card, const sb_model *m, const char *bytes_tag) {
    size_t need = 0;
    uint8_t *bytes = NULL;
    const uint32_t version = sb_model_card_version(m);
    sb_status st = sb_model_to_bytes_version(m, version, NULL, 0, &need);
    if (st == SB_OK && !(bytes = sb_malloc(need))) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "card: out of memory");
    if (st == SB_OK) st = sb_model_to_bytes_version(m, version, bytes, need, NULL);
    if (st == SB_OK) st = sb_card_record(card, bytes_tag, SB_DTYPE_U8, bytes, need);
    sb_free(bytes);
    return st;
}
