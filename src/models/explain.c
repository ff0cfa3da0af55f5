/*
 * explain.c: pred_leaf and pred_contrib for the tree families (explain.h). The
 * arithmetic is the kernel bodies of src/kernels/tree.h (sb_k_leaves,
 * sb_k_contrib_row: TreeSHAP after Lundberg, Erion and Lee 2018, Algorithm 2),
 * run per row on the worker pool or on a GPU through the tree device's
 * program (src/models/trees/tdev_gpu.c); each row is one work item either
 * way, so the thread count and the device move no bit. This file prepares
 * what the kernels read (flattened nodes, leaf numbers, covers, expectations)
 * and checks the model before any row is read.
 */
#include "explain.h"
#include "../io/dataset.h"
#include "../kernels/tree.h"
#include "trees/tdev.h"
#include <string.h>

#define EXPLAIN_GRAIN 256

void sb_tree_leaf_numbers(const sb_tree *t, int32_t *leafno, int32_t *split) {
    const int32_t nn = t->nnodes;
    for (int32_t k = 0; k < nn; k++) {
        leafno[k] = -1;
        if (split) split[k] = -1;
    }
    /* parent of each left child, by the child's index */
    int32_t next_leaf = 1, next_split = 0;
    leafno[0] = 0;
    for (int32_t k = 0; k < nn; k++) {
        const sb_tree_node *n = &t->nodes[k];
        if (n->feature >= 0 && n->left > k && n->left < nn) leafno[n->left] = -2 - k; /* mark: left child of k */
    }
    for (int32_t i = 1; i < nn; i++) {
        if (leafno[i] > -2) continue;
        const int32_t p = -2 - leafno[i];
        const sb_tree_node *n = &t->nodes[p];
        leafno[i] = leafno[p];
        leafno[n->right] = next_leaf++;
        leafno[p] = -1;
        if (split) split[p] = next_split++;
    }
}

sb_status sb_model_check_covers(const sb_model *m) {
    for (int32_t t = 0; t < m->ntrees; t++) {
        const sb_tree *tr = &m->trees[t];
        if (tr->nnodes < 1 || tr->nodes[0].count <= 0)
            return sb_fail(SB_ERR_INVALID_INPUT,
                           "pred_contrib needs every node's training count (its cover), and tree %d's root has "
                           "count %lld: this model does not say how its training rows split, so its contributions "
                           "cannot be computed (a model file written without counts?)",
                           (int)t, (long long)(tr->nnodes ? tr->nodes[0].count : 0));
        for (int32_t k = 0; k < tr->nnodes; k++) {
            const sb_tree_node *n = &tr->nodes[k];
            if (n->feature < 0) continue;
            const int64_t a = tr->nodes[n->left].count, b = tr->nodes[n->right].count;
            if (a < 0 || b < 0 || a > n->count || b != n->count - a)
                return sb_fail(SB_ERR_INVALID_INPUT,
                               "pred_contrib needs every node's training count (its cover), and tree %d node %d has "
                               "count %lld where its children have %lld and %lld: this model's counts cannot weigh "
                               "its branches (a model file written without counts?)",
                               (int)t, (int)k, (long long)n->count, (long long)a, (long long)b);
        }
    }
    return SB_OK;
}

/* What the kernels read besides the flattened nodes: each node's leaf number
 * and cover, each class's expected value, and the scratch TreeSHAP needs per
 * row (cap path elements for each of depth + 1 levels). */
typedef struct explain_model {
    sb_k_pnode *nodes;
    int32_t *start, nnodes;
    int32_t *leafno;
    float *cover;
    float *ev;
    int32_t depth, cap;
} explain_model;

/* Free what explain_prepare allocated and zero e (a zeroed e is a no-op). */
static void explain_release(explain_model *e) {
    sb_free(e->nodes);
    sb_free(e->start);
    sb_free(e->leafno);
    sb_free(e->cover);
    sb_free(e->ev);
    memset(e, 0, sizeof *e);
}

/* Fill e for m: the flattened nodes and leaf numbers, and for contrib the
 * covers, the deepest leaf's depth, the path capacity and the expected values
 * (base score, then each tree's expectation in tree order). Out of memory:
 * SB_ERR_OUT_OF_MEMORY with e released. */
static sb_status explain_prepare(const sb_model *m, int contrib, explain_model *e) {
    memset(e, 0, sizeof *e);
    sb_status st = sb_model_flatten(m, &e->nodes, &e->start, &e->nnodes);
    if (st != SB_OK) return st;
    const size_t nn = (size_t)(e->nnodes ? e->nnodes : 1);
    e->leafno = sb_malloc(sizeof(int32_t) * nn);
    int32_t *depth = contrib ? sb_malloc(sizeof(int32_t) * nn) : NULL;
    if (contrib) {
        e->cover = sb_malloc(sizeof(float) * nn);
        e->ev = sb_malloc(sizeof(float) * (size_t)m->num_class);
    }
    if (!e->leafno || (contrib && (!depth || !e->cover || !e->ev))) {
        sb_free(depth);
        explain_release(e);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "explain: out of memory");
    }
    for (int32_t t = 0; t < m->ntrees; t++)
        sb_tree_leaf_numbers(&m->trees[t], e->leafno + e->start[t], NULL);
    if (!contrib) return SB_OK;
    int32_t dmax = 0;
    for (int32_t t = 0; t < m->ntrees; t++) {
        const sb_tree *tr = &m->trees[t];
        int32_t *dep = depth + e->start[t];
        dep[0] = 0;
        for (int32_t k = 0; k < tr->nnodes; k++) {
            const sb_tree_node *n = &tr->nodes[k];
            e->cover[e->start[t] + k] = (float)n->count; /* int64 to float: rounded to nearest, the same everywhere */
            if (n->feature >= 0) dep[n->left] = dep[n->right] = dep[k] + 1; /* children follow their parent */
            if (dep[k] > dmax) dmax = dep[k];
        }
    }
    sb_free(depth);
    e->depth = dmax;
    e->cap = (dmax < m->num_features ? dmax : m->num_features) + 1;
    for (int32_t c = 0; c < m->num_class; c++) e->ev[c] = m->base_score[c];
    for (int32_t t = 0; t < m->ntrees; t++) {
        const int32_t c = t % m->num_class;
        e->ev[c] = e->ev[c] + sb_k_tree_expectation(e->nodes + e->start[t], e->cover + e->start[t],
                                                    m->trees[t].nnodes);
    }
    return SB_OK;
}

/* One host run: the rows of t, the kind, where its results go and one status
 * per task (a task's scratch allocation may fail). */
typedef struct explain_job {
    const sb_model *m;
    const sb_table *t;
    const explain_model *e;
    int32_t kind;
    float *out;       /* the float kinds */
    int32_t *iout;    /* leaf indices as int32 */
    sb_status *status;
} explain_job;

/* Task `task` of the pool: the rows of its EXPLAIN_GRAIN chunk, each row
 * on its own (its own scratch for TreeSHAP), so the split into tasks moves no
 * bit. */
static void explain_task(void *ctx, int64_t task) {
    explain_job *j = ctx;
    const explain_model *e = j->e;
    const int32_t ntrees = j->m->ntrees, K = j->m->num_class, F = j->m->num_features;
    int64_t b, en;
    sb_chunk_range(j->t->nrows, EXPLAIN_GRAIN, task, &b, &en);
    if (j->kind == SB_PREDICT_CONTRIB) {
        sb_k_shap_elem *path = sb_malloc(sizeof(sb_k_shap_elem) * (size_t)(e->depth + 1) * (size_t)e->cap);
        sb_k_shap_frame *fr = sb_malloc(sizeof(sb_k_shap_frame) * (size_t)(e->depth + 1));
        if (!path || !fr) {
            j->status[task] = SB_ERR_OUT_OF_MEMORY;
        } else {
            const int64_t w = (int64_t)K * ((int64_t)F + 1);
            for (int64_t r = b; r < en; r++)
                sb_k_contrib_row(e->nodes, e->cover, e->start, ntrees, K, F, e->ev, j->t->x + r * j->t->ncols,
                                 j->out + r * w, path, fr, e->cap);
        }
        sb_free(path);
        sb_free(fr);
        return;
    }
    if (j->iout) {
        for (int64_t r = b; r < en; r++)
            sb_k_leaves(e->nodes, e->start, e->leafno, ntrees, j->t->x + r * j->t->ncols, j->iout + r * ntrees);
        return;
    }
    for (int64_t r = b; r < en; r++) {
        const float *x = j->t->x + r * j->t->ncols;
        for (int32_t i = 0; i < ntrees; i++)
            j->out[r * ntrees + i] =
                (float)e->leafno[e->start[i] + sb_k_tree_leaf_node(e->nodes + e->start[i], x)];
    }
}

/* The checks every explanation makes before any row: a tree family, the data's
 * width, and for contributions the covers and the score range. */
static sb_status explain_check(const sb_model *m, const sb_dataset *d, int32_t kind) {
    const char *what = kind == SB_PREDICT_CONTRIB ? "pred_contrib" : "pred_leaf";
    if (m->family != SB_FAMILY_GBDT && m->family != SB_FAMILY_RANDOM_FOREST && m->family != SB_FAMILY_EXTRA_TREES &&
        m->family != SB_FAMILY_ISOLATION_FOREST)
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "%s is for the tree families (gbdt, random_forest, extra_trees, isolation_forest), not a %s "
                       "model",
                       what, sb_family_name((sb_family)m->family));
    if (d->t.ncols != m->num_features)
        return sb_fail(SB_ERR_INVALID_INPUT, "feature-count mismatch: the model has %d features, the data %d",
                       (int)m->num_features, (int)d->t.ncols);
    if (kind == SB_PREDICT_CONTRIB) {
        sb_status st = sb_model_check_covers(m);
        if (st != SB_OK) return st;
        return sb_model_check_score_range(m);
    }
    return SB_OK;
}

/* The explanation of kind into out (floats) or iout (int32 leaf indices). */
static sb_status explain_run(const sb_model *m, const sb_dataset *d, int32_t kind, const char *device, float *out,
                             int32_t *iout, size_t cap, size_t *needed) {
    sb_device_kind dk = SB_DEVICE_CPU;
    sb_status st = sb_device_parse(device, &dk);
    if (st != SB_OK) return st;
    st = explain_check(m, d, kind);
    if (st != SB_OK) return st;
    const int64_t n = d->t.nrows;
    const size_t per_row = kind == SB_PREDICT_CONTRIB
                               ? (size_t)m->num_class * ((size_t)m->num_features + 1)
                               : (size_t)m->ntrees;
    if (per_row && (size_t)n > SIZE_MAX / sizeof(float) / per_row)
        return sb_fail(SB_ERR_LIMIT, "%s: %lld rows of %zu values do not fit in memory",
                       kind == SB_PREDICT_CONTRIB ? "pred_contrib" : "pred_leaf", (long long)n, per_row);
    const size_t need = (size_t)n * per_row;
    if (needed) *needed = need;
    if (cap == 0) return SB_OK;
    if (cap < need) return sb_fail(SB_ERR_LIMIT, "prediction buffer holds %zu values, %zu needed", cap, need);
    explain_model e;
    st = explain_prepare(m, kind == SB_PREDICT_CONTRIB, &e);
    if (st != SB_OK) return st;
    if (dk == SB_DEVICE_CUDA || dk == SB_DEVICE_OPENCL) {
        if (kind == SB_PREDICT_CONTRIB)
            st = sb_tree_contrib_device(dk, e.nodes, e.nnodes, e.start, e.cover, e.ev, m->ntrees, m->num_class,
                                        m->num_features, e.depth, e.cap, d->t.x, n, d->t.ncols, out);
        else
            st = sb_tree_leaf_device(dk, e.nodes, e.nnodes, e.start, e.leafno, m->ntrees, d->t.x, n, d->t.ncols,
                                     out, iout);
    } else {
        const int64_t ntasks = sb_chunk_count(n, EXPLAIN_GRAIN);
        sb_status *status = sb_calloc((size_t)(ntasks ? ntasks : 1), sizeof(sb_status));
        if (!status) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "explain: out of memory");
        } else {
            explain_job j = {m, &d->t, &e, kind, out, iout, status};
            sb_parallel_for(ntasks, explain_task, &j);
            for (int64_t i = 0; i < ntasks && st == SB_OK; i++)
                if (status[i] != SB_OK) st = sb_fail(status[i], "pred_contrib: out of memory");
        }
        sb_free(status);
    }
    explain_release(&e);
    return st;
}

sb_status sb_model_explain_on(const sb_model *m, const sb_dataset *d, int32_t kind, const char *device, float *out,
                              size_t cap, size_t *needed) {
    return explain_run(m, d, kind, device, out, NULL, cap, needed);
}

sb_status sb_model_predict_leaf(const sb_model *m, const sb_dataset *d, const char *device, int32_t *out, size_t cap,
                                size_t *needed) {
    sb_clear_error();
    if (!m || !d || (!out && cap)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_predict_leaf: NULL argument");
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    return explain_run(m, d, SB_PREDICT_LEAF, device, NULL, out, cap, needed);
}
