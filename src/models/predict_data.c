/*
 * predict_data.c: reading prediction data for a model. It lives beside the
 * model, not in io/, because it needs the model's feature count and names;
 * io/ reads files into tables and knows nothing of models.
 */
#include "model.h"
#include "../io/dataset.h"
#include <string.h>

/* Replace d's columns by the model's features, picked from d by name:
 * column f of the result is the column of d named m->feature_names[f]. A
 * feature that no column names is SB_ERR_INVALID_INPUT naming it (and path);
 * d is left as it was on any error. */
static sb_status select_by_name(const sb_model *m, const char *path, sb_dataset *d) {
    const int32_t nf = m->num_features;
    int32_t *src = sb_malloc(sizeof(int32_t) * (size_t)nf);
    float *x = src ? sb_malloc(sizeof(float) * (size_t)d->t.nrows * (size_t)nf) : NULL;
    char **names = x ? sb_calloc((size_t)nf, sizeof(char *)) : NULL;
    sb_status st = names ? SB_OK : sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    for (int32_t f = 0; st == SB_OK && f < nf; f++) {
        src[f] = -1;
        for (int32_t c = 0; c < d->t.ncols && src[f] < 0; c++)
            if (!strcmp(d->t.names[c], m->feature_names[f])) src[f] = c;
        if (src[f] < 0)
            st = sb_fail(SB_ERR_INVALID_INPUT,
                         "feature-count mismatch: %s has %d columns, the model %d features, and its feature '%s' is not among the columns",
                         path, (int)d->t.ncols, (int)nf, m->feature_names[f]);
        else if (!(names[f] = sb_strdup(m->feature_names[f])))
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    }
    if (st != SB_OK) {
        if (names)
            for (int32_t f = 0; f < nf; f++) sb_free(names[f]);
        sb_free(names);
        sb_free(x);
        sb_free(src);
        return st;
    }
    for (int64_t r = 0; r < d->t.nrows; r++)
        for (int32_t f = 0; f < nf; f++) x[r * nf + f] = d->t.x[r * d->t.ncols + src[f]];
    sb_free(src);
    sb_free(d->t.x);
    for (int32_t c = 0; c < d->t.ncols; c++) sb_free(d->t.names[c]);
    sb_free(d->t.names);
    d->t.x = x;
    d->t.names = names;
    d->t.ncols = nf;
    return SB_OK;
}

/* Read prediction data for m (include/samebits.h): the file as
 * sb_dataset_read reads it, LibSVM widened to the model's feature count. Data
 * with exactly the model's feature count is taken column by column as it is;
 * other data has the model's features picked by name, which needs a model
 * with feature names (a model without them, read from a file that has none,
 * takes only data of its own width: anything else is the named
 * SB_ERR_INVALID_INPUT "feature-count mismatch"). */
sb_status sb_dataset_read_for_model(const sb_model *m, const char *path, const char *format, sb_dataset **out) {
    sb_clear_error();
    if (out) *out = NULL;
    if (!m || !path || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_read_for_model: NULL argument");
    sb_dataset *d;
    sb_status st = sb_dataset_read_min_cols(path, format, NULL, m->num_features, &d);
    if (st != SB_OK) return st;
    if (d->t.ncols != m->num_features) {
        st = m->feature_names ? select_by_name(m, path, d)
                              : sb_fail(SB_ERR_INVALID_INPUT,
                                        "feature-count mismatch: %s has %d columns, the model %d features (and no "
                                        "feature names to pick them by)",
                                        path, (int)d->t.ncols, (int)m->num_features);
        if (st != SB_OK) {
            sb_dataset_free(d);
            return st;
        }
    }
    *out = d;
    return SB_OK;
}
