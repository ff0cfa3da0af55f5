/*
 * weight_rows.c: a training table without its rows of weight zero. scikit-
 * learn's splitter never sees a row of weight zero (it adds nothing to any sum,
 * and it takes no part in the bins or in a node's range of values), so a fit
 * that drops those rows first gives a weight-0 row the meaning of an absent
 * row: gradient boosting and unbootstrapped forests call this before binning.
 */
#include "model.h"
#include "../io/reader.h"
#include "../core/dist.h"
#include <string.h>

static sb_status drop_rows(const sb_table *t, sb_table *out, int *dropped, int all) {
    memset(out, 0, sizeof *out);
    *dropped = 0;
    if (!t->weight || t->qid) return SB_OK;
    int64_t keep = 0;
    for (int64_t r = 0; r < t->nrows; r++) {
        const float w = t->weight[r];
        if (!(w >= 0.0f) || w - w != 0.0f) return SB_OK; /* refused by the fit's own checks, by row */
        keep += w > 0.0f;
    }
    if (keep == t->nrows || (keep == 0 && !all)) return SB_OK; /* nothing to drop, or the fit's all-zero case */
    const size_t nc = (size_t)t->ncols, nt = (size_t)(t->ntargets > 0 ? t->ntargets : 1);
    const size_t nkeep = (size_t)(keep > 0 ? keep : 1); /* every row dropped (all): one-row buffers, 0 rows */
    out->x = sb_malloc(sizeof(float) * nkeep * (nc ? nc : 1));
    out->weight = sb_malloc(sizeof(float) * nkeep);
    out->label = t->label ? sb_malloc(sizeof(float) * nkeep * nt) : NULL;
    const size_t nk = (size_t)(t->init_k > 0 ? t->init_k : 1);
    out->init = t->init ? sb_malloc(sizeof(float) * nkeep * nk) : NULL;
    if (!out->x || !out->weight || (t->label && !out->label) || (t->init && !out->init)) {
        sb_table_drop_release(out);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "out of memory for the %lld rows of nonzero weight", (long long)keep);
    }
    int64_t at = 0;
    for (int64_t r = 0; r < t->nrows; r++) {
        if (!(t->weight[r] > 0.0f)) continue;
        memcpy(out->x + (size_t)at * nc, t->x + (size_t)r * nc, sizeof(float) * nc);
        if (t->label) memcpy(out->label + (size_t)at * nt, t->label + (size_t)r * nt, sizeof(float) * nt);
        if (t->init) memcpy(out->init + (size_t)at * nk, t->init + (size_t)r * nk, sizeof(float) * nk);
        out->weight[at++] = t->weight[r];
    }
    out->nrows = keep;
    out->ncols = t->ncols;
    out->ntargets = t->ntargets;
    out->init_k = t->init_k;
    out->names = t->names;
    out->has_names = t->has_names;
    *dropped = 1;
    return SB_OK;
}

sb_status sb_table_drop_zero_weight(const sb_table *t, sb_table *out, int *dropped) {
    return drop_rows(t, out, dropped, 0);
}

sb_status sb_table_drop_zero_weight_ranks(const sb_dist *dist, const sb_table *t, sb_table *out, int *dropped) {
    if (!dist || !t->weight) return sb_table_drop_zero_weight(t, out, dropped);
    memset(out, 0, sizeof *out);
    *dropped = 0;
    int64_t c[2] = {0, t->nrows}; /* rows of positive weight, rows: over every rank */
    for (int64_t r = 0; r < t->nrows; r++) c[0] += t->weight[r] > 0.0f;
    sb_dist_sum_i64(dist, c, 2);
    return c[0] > 0 && c[0] < c[1] ? drop_rows(t, out, dropped, 1) : SB_OK;
}

void sb_table_rows_view(const sb_table *t, int64_t b, int64_t e, sb_table *out) {
    *out = *t;
    out->nrows = e - b;
    out->x = t->x + b * t->ncols;
    out->label = t->label ? t->label + b * (t->ntargets > 0 ? t->ntargets : 1) : NULL;
    out->weight = t->weight ? t->weight + b : NULL;
    out->qid = t->qid ? t->qid + b : NULL;
    out->init = t->init ? t->init + b * t->init_k : NULL;
}

void sb_table_drop_release(sb_table *t) {
    sb_free(t->x);
    sb_free(t->label);
    sb_free(t->weight);
    sb_free(t->init);
    memset(t, 0, sizeof *t);
}
