/*
 * oob.c: out-of-bag predictions of a bootstrapped forest (Breiman 2001). The
 * bootstrap of tree t is a pure function of (seed, t, draw) (forest.c), so the
 * rows each tree did not see are recomputed here from the model's own
 * parameters, nothing stored beside the model. A row's out-of-bag prediction is
 * the average, over the trees that did not see it, of their leaves (class
 * frequencies or means), summed in tree order: the same bits at any thread
 * count; a classifier of profile sb-identical-v5 or later then normalizes the
 * row as predict_proba does (sb_k_forest_proba). Rows every tree saw get NaN.
 */
#include "forest_params.h"
#include "../model.h"
#include "../../core/rng.h"
#include "../../io/dataset.h"
#include "../../kernels/tree.h"
#include <stdlib.h>
#include <string.h>

#define SB_PURPOSE_BOOT 0x424F4F54u /* as in forest.c */

/* The value of key in canonical "key=value\n" text, or NULL. */
static const char *param_of(const char *text, const char *key, char *buf, size_t cap) {
    size_t kl = strlen(key);
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > kl && !strncmp(p, key, kl) && p[kl] == '=') {
            size_t vl = len - kl - 1 < cap - 1 ? len - kl - 1 : cap - 1;
            memcpy(buf, p + kl + 1, vl);
            buf[vl] = 0;
            return buf;
        }
        p = nl ? nl + 1 : NULL;
    }
    return NULL;
}

typedef struct oob_job {
    const sb_model *m;
    const sb_table *t;
    const sb_k_pnode *nodes;
    const int32_t *start;
    const uint8_t *inbag; /* T x n: 1 when tree t drew row r */
    int32_t T, K;
    float *out;
    int normalize; /* a classifier of profile v5 or later (sb_model_kernel_objective) */
} oob_job;

static void oob_task(void *ctx, int64_t task) {
    oob_job *j = ctx;
    const int64_t n = j->t->nrows;
    int64_t b, e;
    sb_chunk_range(n, 4096, task, &b, &e);
    for (int64_t r = b; r < e; r++) {
        float *o = j->out + r * j->K;
        int32_t cnt = 0;
        for (int32_t k = 0; k < j->K; k++) o[k] = 0.0f;
        for (int32_t t = 0; t < j->T; t++) {
            if (j->inbag[(int64_t)t * n + r]) continue;
            cnt++;
            for (int32_t k = 0; k < j->K; k++)
                o[k] = o[k] + sb_k_tree_value(j->nodes + j->start[t * j->K + k], j->t->x + r * j->t->ncols);
        }
        /* leaves hold value / T: scale back, then average over the out-of-bag trees */
        for (int32_t k = 0; k < j->K; k++)
            o[k] = cnt ? o[k] * (float)j->T / (float)cnt : sb_u2f(0x7FC00000u);
        /* profile v5 and later: a classifier's row normalized as predict_proba's */
        if (cnt && j->normalize) sb_k_forest_proba(j->K, o, o);
    }
}

sb_status sb_forest_oob_predict(const sb_model *m, const sb_dataset *train, float *out, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!m || !train || (!out && cap)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_forest_oob_predict: NULL argument");
    if (m->family != SB_FAMILY_RANDOM_FOREST && m->family != SB_FAMILY_EXTRA_TREES)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "out-of-bag predictions are for random forests and Extra Trees");
    char buf[64];
    const char *boot = m->params ? param_of(m->params, "bootstrap", buf, sizeof buf) : NULL;
    if (!boot || strcmp(boot, "1") != 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "out-of-bag predictions need a forest trained with bootstrap=true");
    const uint64_t seed = strtoull(param_of(m->params, "seed", buf, sizeof buf) ? buf : "0", NULL, 10);
    const float max_samples = strtof(param_of(m->params, "max_samples", buf, sizeof buf) ? buf : "0", NULL);
    const int64_t n = train->t.nrows;
    const int32_t K = m->num_class, T = m->ntrees / (K > 0 ? K : 1);
    if (train->t.ncols != m->num_features)
        return sb_fail(SB_ERR_INVALID_INPUT, "feature-count mismatch: the model has %d features, the data %d",
                       (int)m->num_features, (int)train->t.ncols);
    size_t need = (size_t)n * (size_t)K;
    if (needed) *needed = need;
    if (cap == 0) return SB_OK;
    if (cap < need) return sb_fail(SB_ERR_LIMIT, "buffer holds %zu values, %zu needed", cap, need);
    uint8_t *inbag = sb_calloc((size_t)T * (size_t)n, 1);
    sb_k_pnode *nodes = NULL;
    int32_t *start = NULL, nnodes = 0;
    sb_status st = inbag ? sb_model_flatten(m, &nodes, &start, &nnodes)
                         : sb_fail(SB_ERR_OUT_OF_MEMORY, "out of memory for %d x %lld bootstrap flags", (int)T,
                                   (long long)n);
    if (st == SB_OK) {
        /* the training draws, as forest.c made them */
        int64_t ndraw = max_samples > 0.0f ? (int64_t)(max_samples * (float)n) : n;
        if (ndraw < 1) ndraw = 1;
        for (int32_t t = 0; t < T; t++)
            for (int64_t d = 0; d < ndraw; d++)
                inbag[(int64_t)t * n + sb_rng_below(seed, SB_PURPOSE_BOOT, ((uint64_t)(uint32_t)t << 32) | (uint64_t)d,
                                                     (uint32_t)n)] = 1;
        oob_job j = {m, &train->t, nodes, start, inbag, T, K, out,
                     sb_model_kernel_objective(m) == SB_K_OBJ_FOREST_PROBA};
        sb_parallel_for(sb_chunk_count(n, 4096), oob_task, &j);
    }
    sb_free(inbag);
    sb_free(nodes);
    sb_free(start);
    return st;
}
