/*
 * predict_data.c: reading prediction data for a model. It lives beside the
 * model, not in io/, because it needs the model's feature count and names;
 * io/ reads files into tables and knows nothing of models.
 */
#include "model.h"
#include "../io/dataset.h"
#include <stdio.h>
#include <string.h>

/* Whether m's feature names are those a file without a header gives it
 * ("f0".."f{n-1}" in order: LibSVM, headerless TSV, a matrix), or it has none:
 * such a model was trained without names, so prediction data is matched to it
 * by position. */
static int names_generated(const sb_model *m) {
    if (!m->feature_names) return 1;
    for (int32_t f = 0; f < m->num_features; f++) {
        char want[24];
        snprintf(want, sizeof want, "f%d", (int)f);
        if (strcmp(m->feature_names[f], want) != 0) return 0;
    }
    return 1;
}

/* The column of d named name, or -1. The CSV reader refuses duplicate names,
 * so the first is the only one. */
static int32_t column_named(const sb_dataset *d, const char *name) {
    for (int32_t c = 0; c < d->t.ncols; c++)
        if (!strcmp(d->t.names[c], name)) return c;
    return -1;
}

/* Replace d's columns by the model's features, picked from d by name:
 * column f of the result is column src[f] of d, with its name (the caller
 * found src by name, or by LibSVM index). Columns the model does not use
 * are dropped. d is left as it was on any error. */
static sb_status select_columns(const sb_model *m, const int32_t *src, sb_dataset *d) {
    const int32_t nf = m->num_features;
    float *x = sb_malloc(sizeof(float) * (size_t)d->t.nrows * (size_t)nf);
    char **names = x ? sb_calloc((size_t)nf, sizeof(char *)) : NULL;
    sb_status st = names ? SB_OK : sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    for (int32_t f = 0; st == SB_OK && f < nf; f++)
        if (!(names[f] = sb_strdup(d->t.names[src[f]]))) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    if (st != SB_OK) {
        if (names)
            for (int32_t f = 0; f < nf; f++) sb_free(names[f]);
        sb_free(names);
        sb_free(x);
        return st;
    }
    for (int64_t r = 0; r < d->t.nrows; r++)
        for (int32_t f = 0; f < nf; f++) x[r * nf + f] = d->t.x[r * d->t.ncols + src[f]];
    if (!d->t.x_borrowed) sb_free(d->t.x);
    d->t.x_borrowed = 0;
    for (int32_t c = 0; c < d->t.ncols; c++) sb_free(d->t.names[c]);
    sb_free(d->t.names);
    d->t.x = x;
    d->t.names = names;
    d->t.ncols = nf;
    return SB_OK;
}

/* Map d's columns to m's features, the rule of docs/io.md ("Prediction data
 * for a model"). By name when both sides have names: the data's header (or
 * names the caller set) and a model trained with names; every model feature
 * must be found (else the first missing one is refused by name), the data's
 * other columns (a label, an id) are ignored, and the order of the columns
 * does not matter. By position when a side has none (headerless TSV, IDX; a
 * model whose names are absent or generated), and then the widths must agree;
 * LibSVM's indices are positions too, but a wider LibSVM file loses only the
 * indices beyond the model's features. A header that names every feature of a generated-name model (it was
 * trained on a header f0,f1,..) is taken by name too. */
static sb_status map_columns(const sb_model *m, const char *path, sb_dataset *d) {
    const int32_t nf = m->num_features;
    const int generated = names_generated(m);
    if (d->t.has_names == SB_NAMES_HEADER && m->feature_names) {
        int32_t *src = sb_malloc(sizeof(int32_t) * (size_t)nf);
        if (!src) return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
        int32_t missing = -1, identity = d->t.ncols == nf;
        for (int32_t f = 0; f < nf && missing < 0; f++) {
            src[f] = column_named(d, m->feature_names[f]);
            if (src[f] < 0) missing = f;
            identity &= src[f] == f;
        }
        sb_status st = SB_OK;
        if (missing < 0) {
            if (!identity) st = select_columns(m, src, d);
            sb_free(src);
            return st;
        }
        sb_free(src);
        if (!generated)
            return sb_fail(SB_ERR_INVALID_INPUT,
                           "feature not found: the model's feature %d '%s' is not among the %d columns of %s's "
                           "header (prediction data is matched to the model's features by name)",
                           (int)missing, m->feature_names[missing], (int)d->t.ncols, path);
    }
    if (d->t.ncols == nf) return SB_OK;
    if (d->t.has_names == SB_NAMES_INDEX && d->t.ncols > nf) {
        /* LibSVM: index k is feature k whatever the width, so indices beyond
         * the model's features (which it never saw) are dropped, as LightGBM's
         * predictor does. The reader already widened a narrower file. */
        int32_t *src = sb_malloc(sizeof(int32_t) * (size_t)nf);
        if (!src) return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
        for (int32_t f = 0; f < nf; f++) src[f] = f;
        sb_status st = select_columns(m, src, d);
        sb_free(src);
        return st;
    }
    if (!generated)
        return sb_fail(SB_ERR_INVALID_INPUT,
                       "feature-count mismatch: %s has %d columns, the model %d features, and the file has no header "
                       "to match the model's feature names (such as '%s') by",
                       path, (int)d->t.ncols, (int)nf, m->feature_names[0]);
    return sb_fail(SB_ERR_INVALID_INPUT,
                   "feature-count mismatch: %s has %d columns, the model %d features (and no feature names to pick "
                   "them by: it was trained on data without a header, so columns are taken by position)",
                   path, (int)d->t.ncols, (int)nf);
}

/* Read prediction data for m (include/samebits.h): the file as
 * sb_dataset_read reads it, LibSVM widened to the model's feature count, its
 * columns mapped to the model's features by map_columns. On any error *out
 * stays NULL and nothing is kept. */
sb_status sb_dataset_read_for_model(const sb_model *m, const char *path, const char *format, sb_dataset **out) {
    sb_clear_error();
    if (out) *out = NULL;
    if (!m || !path || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_read_for_model: NULL argument");
    sb_dataset *d;
    sb_status st = sb_dataset_read_min_cols(path, format, NULL, m->num_features, &d);
    if (st != SB_OK) return st;
    /* A headerless file whose first column was taken for the label but that
     * holds exactly the model's features has no label (LightGBM's predictor
     * reads it so): read again with every column a feature. */
    if (d->t.has_names == SB_NAMES_NONE && d->t.label && d->t.ncols + 1 == m->num_features) {
        sb_dataset *all = NULL;
        if (sb_dataset_read_min_cols(path, "tsv-noheader-nolabel", NULL, m->num_features, &all) == SB_OK &&
            all->t.ncols == m->num_features) {
            sb_dataset_free(d);
            d = all;
        } else {
            sb_dataset_free(all);
            sb_clear_error();
        }
    }
    if ((st = map_columns(m, path, d)) != SB_OK) {
        sb_dataset_free(d);
        return st;
    }
    *out = d;
    return SB_OK;
}
