/*
 * predict.c: prediction from a model on raw float features. A row's margin is
 * the base score plus each tree's leaf, added in tree order; that is the same
 * sequence of additions training used, so a saved and reloaded model predicts
 * the very bits training computed, on every machine.
 */
#include "model.h"
#include "../io/dataset.h"
#include "../kernels/gbdt.h"
#include <string.h>

#define PREDICT_GRAIN 4096

static float tree_leaf(const sb_tree *t, const float *x) {
    const sb_tree_node *n = t->nodes;
    int32_t k = 0;
    while (n[k].feature >= 0) {
        float v = x[n[k].feature];
        int left = v != v ? n[k].default_left : v <= n[k].threshold;
        k = left ? n[k].left : n[k].right;
    }
    return n[k].value;
}

void sb_model_margin_row(const sb_model *m, const float *x, float *out) {
    for (int32_t c = 0; c < m->num_class; c++) out[c] = m->base_score[c];
    for (int32_t t = 0; t < m->ntrees; t++) {
        int32_t c = t % m->num_class;
        out[c] = out[c] + tree_leaf(&m->trees[t], x);
    }
}

typedef struct predict_job {
    const sb_model *m;
    const sb_table *t;
    sb_predict_kind kind;
    float *out;
} predict_job;

static void predict_task(void *ctx, int64_t task) {
    predict_job *j = ctx;
    const int32_t k = j->m->num_class;
    float margin[SB_MODEL_MAX_CLASS_STACK];
    int64_t b, e;
    sb_chunk_range(j->t->nrows, PREDICT_GRAIN, task, &b, &e);
    for (int64_t r = b; r < e; r++) {
        sb_model_margin_row(j->m, j->t->x + r * j->t->ncols, margin);
        if (j->kind == SB_PREDICT_RAW) {
            memcpy(j->out + r * k, margin, sizeof(float) * (size_t)k);
        } else if (j->m->objective == SB_OBJ_REGRESSION) {
            j->out[r] = margin[0];
        } else if (j->m->objective == SB_OBJ_BINARY) {
            j->out[r] = j->kind == SB_PREDICT_PROBA ? sb_sigmoidf(margin[0]) : (margin[0] > 0.0f ? 1.0f : 0.0f);
        } else if (j->kind == SB_PREDICT_PROBA) {
            sb_k_softmax(margin, k, j->out + r * k);
        } else {
            int32_t best = 0; /* ties: the lowest class */
            for (int32_t c = 1; c < k; c++)
                if (margin[c] > margin[best]) best = c;
            j->out[r] = (float)best;
        }
    }
}

sb_status sb_model_predict(const sb_model *m, const sb_dataset *d, sb_predict_kind kind, float *out,
                           size_t cap, size_t *needed) {
    sb_clear_error();
    if (!m || !d || (!out && cap)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_predict: NULL argument");
    if ((unsigned)kind > (unsigned)SB_PREDICT_VALUE)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown prediction kind %d", (int)kind);
    if (kind == SB_PREDICT_PROBA && m->objective == SB_OBJ_REGRESSION)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "a regression model has no probabilities");
    if (d->t.ncols != m->num_features)
        return sb_fail(SB_ERR_INVALID_INPUT, "feature-count mismatch: the model has %d features, the data %d",
                       (int)m->num_features, (int)d->t.ncols);
    if (m->num_class > SB_MODEL_MAX_CLASS_STACK)
        return sb_fail(SB_ERR_LIMIT, "prediction supports up to %d classes", SB_MODEL_MAX_CLASS_STACK);
    int per_row = (kind == SB_PREDICT_RAW || (kind == SB_PREDICT_PROBA && m->objective == SB_OBJ_MULTICLASS))
                      ? m->num_class : 1;
    size_t need = (size_t)d->t.nrows * (size_t)per_row;
    if (needed) *needed = need;
    if (cap == 0) return SB_OK;
    if (cap < need) return sb_fail(SB_ERR_LIMIT, "prediction buffer holds %zu values, %zu needed", cap, need);
    predict_job j = {m, &d->t, kind, out};
    sb_parallel_for(sb_chunk_count(d->t.nrows, PREDICT_GRAIN), predict_task, &j);
    return SB_OK;
}
