/*
 * labels.c: a classifier's class labels (docs/model-format.md, "Class
 * labels"): the values class indices 0..K-1 stand for, kept with the model and
 * in its file (format version 3) so that a loaded classifier answers in the
 * labels it was trained with. Integers, floats, strings and booleans, as
 * scikit-learn's classes_ may hold, always sorted and distinct.
 */
#include "model.h"
#include <string.h>

int32_t sb_model_class_count(const sb_model *m) {
    if (m->family == SB_FAMILY_GBDT && m->objective == SB_OBJ_BINARY) return 2;
    if (m->family == SB_FAMILY_GBDT && m->objective == SB_OBJ_MULTICLASS) return m->num_class;
    if ((m->family == SB_FAMILY_RANDOM_FOREST || m->family == SB_FAMILY_EXTRA_TREES) &&
        m->objective == SB_OBJ_FOREST_CLASSES)
        return m->num_class;
    return 0;
}

sb_labels *sb_labels_alloc(int32_t kind, int32_t n) {
    sb_labels *l = sb_calloc(1, sizeof *l);
    if (!l) return NULL;
    l->kind = kind;
    l->n = n;
    const size_t k = (size_t)(n > 0 ? n : 1);
    if (kind == SB_LABELS_FLOAT64) l->floats = sb_calloc(k, sizeof(double));
    else if (kind == SB_LABELS_STRING) l->strs = sb_calloc(k, sizeof(char *));
    else l->ints = sb_calloc(k, sizeof(int64_t));
    if (!l->floats && !l->strs && !l->ints) {
        sb_free(l);
        return NULL;
    }
    return l;
}

void sb_labels_free(sb_labels *l) {
    if (!l) return;
    if (l->strs)
        for (int32_t i = 0; i < l->n; i++) sb_free(l->strs[i]);
    sb_free(l->strs);
    sb_free(l->ints);
    sb_free(l->floats);
    sb_free(l);
}

sb_status sb_labels_check(const sb_labels *l, int32_t n, sb_status bad, const char *who) {
    if (l->kind < SB_LABELS_INT64 || l->kind > SB_LABELS_BOOL)
        return sb_fail(bad, "%s: class label kind %d is not one of 1 int64, 2 float64, 3 string, 4 bool", who,
                       (int)l->kind);
    if (n == 0) return sb_fail(bad, "%s: class labels belong to classifiers; this model is not one", who);
    if (l->n != n)
        return sb_fail(bad, "%s: %d class labels for a model of %d classes", who, (int)l->n, (int)n);
    for (int32_t i = 0; i < l->n; i++) {
        if (l->kind == SB_LABELS_BOOL) {
            if (l->ints[i] != i)
                return sb_fail(bad, "%s: boolean class labels must be false then true (label %d is %lld)", who,
                               (int)i, (long long)l->ints[i]);
        } else if (l->kind == SB_LABELS_INT64) {
            if (i > 0 && !(l->ints[i - 1] < l->ints[i]))
                return sb_fail(bad, "%s: class labels must be strictly increasing (label %d, %lld, after %lld)",
                               who, (int)i, (long long)l->ints[i], (long long)l->ints[i - 1]);
        } else if (l->kind == SB_LABELS_FLOAT64) {
            if (l->floats[i] != l->floats[i])
                return sb_fail(bad, "%s: class label %d is NaN", who, (int)i);
            if (i > 0 && !(l->floats[i - 1] < l->floats[i]))
                return sb_fail(bad, "%s: class labels must be strictly increasing (label %d, %.17g, after %.17g)",
                               who, (int)i, l->floats[i], l->floats[i - 1]);
        } else {
            const char *s = l->strs[i];
            if (!s) return sb_fail(bad, "%s: class label %d is NULL", who, (int)i);
            const size_t len = strlen(s);
            if (len > SB_MAX_NAME_BYTES)
                return sb_fail(SB_ERR_LIMIT, "%s: class label %d is %zu bytes, more than the limit of %u", who,
                               (int)i, len, SB_MAX_NAME_BYTES);
            if (!sb_utf8_valid(s, len)) return sb_fail(bad, "%s: class label %d is not valid UTF-8", who, (int)i);
            if (i > 0 && !(strcmp(l->strs[i - 1], s) < 0))
                return sb_fail(bad, "%s: class labels must be strictly increasing by their bytes (label %d, '%.40s', "
                               "after '%.40s')", who, (int)i, s, l->strs[i - 1]);
        }
    }
    return SB_OK;
}

/* Copy n values of kind from values into a new label set (*out), or fail
 * with SB_ERR_OUT_OF_MEMORY / SB_ERR_INVALID_ARGUMENT for a NULL string. */
static sb_status labels_copy(int32_t kind, int32_t n, const void *values, sb_labels **out) {
    sb_labels *l = sb_labels_alloc(kind, n);
    if (!l) return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_model_set_class_labels: out of memory");
    for (int32_t i = 0; i < n; i++) {
        if (kind == SB_LABELS_INT64) l->ints[i] = ((const int64_t *)values)[i];
        else if (kind == SB_LABELS_BOOL) l->ints[i] = ((const uint8_t *)values)[i];
        else if (kind == SB_LABELS_FLOAT64) l->floats[i] = ((const double *)values)[i];
        else {
            const char *s = ((const char *const *)values)[i];
            if (!s) {
                sb_labels_free(l);
                return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_set_class_labels: class label %d is NULL", (int)i);
            }
            if (!(l->strs[i] = sb_strdup(s))) {
                sb_labels_free(l);
                return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_model_set_class_labels: out of memory");
            }
        }
    }
    *out = l;
    return SB_OK;
}

/* Set, replace or (SB_LABELS_NONE) remove m's labels after checking them. */
sb_status sb_model_set_class_labels(sb_model *m, int32_t kind, size_t n, const void *values) {
    sb_clear_error();
    if (!m) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_set_class_labels: NULL model");
    if (kind == SB_LABELS_NONE) {
        if (n != 0 || values)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_set_class_labels: SB_LABELS_NONE takes n 0 and no values");
        sb_labels_free(m->labels);
        m->labels = NULL;
        return SB_OK;
    }
    if (kind < SB_LABELS_INT64 || kind > SB_LABELS_BOOL)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_set_class_labels: kind %d is not one of 0 none, 1 int64, "
                       "2 float64, 3 string, 4 bool", (int)kind);
    const int32_t want = sb_model_class_count(m);
    if (want == 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_set_class_labels: a %s model with objective %s is not a "
                       "classifier (labels are for gradient-boosting binary and multiclass models and forest "
                       "classifiers)", sb_family_name((sb_family)m->family), sb_model_objective_name(m->objective));
    if (n != (size_t)want)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_set_class_labels: %zu labels for a model of %d classes", n,
                       (int)want);
    if (!values) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_set_class_labels: NULL values");
    sb_labels *l = NULL;
    sb_status st = labels_copy(kind, want, values, &l);
    if (st != SB_OK) return st;
    if ((st = sb_labels_check(l, want, SB_ERR_INVALID_ARGUMENT, "sb_model_set_class_labels")) != SB_OK) {
        sb_labels_free(l);
        return st;
    }
    sb_labels_free(m->labels);
    m->labels = l;
    return SB_OK;
}

sb_status sb_model_get_class_labels(const sb_model *m, int32_t *kind, size_t *n) {
    sb_clear_error();
    if (!m || !kind || !n) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_class_labels: NULL argument");
    *kind = m->labels ? m->labels->kind : SB_LABELS_NONE;
    *n = m->labels ? (size_t)m->labels->n : 0;
    return SB_OK;
}

sb_status sb_model_get_class_label_values(const sb_model *m, void *out, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!m || (!out && cap)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_class_label_values: NULL argument");
    const sb_labels *l = m->labels;
    if (!l) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_class_label_values: the model has no class labels");
    if (l->kind == SB_LABELS_STRING)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_class_label_values: the labels are strings "
                       "(sb_model_get_class_label_string)");
    if (needed) *needed = (size_t)l->n;
    if (cap == 0) return SB_OK;
    if (cap < (size_t)l->n)
        return sb_fail(SB_ERR_LIMIT, "sb_model_get_class_label_values: buffer holds %zu labels, %d needed", cap,
                       (int)l->n);
    for (int32_t i = 0; i < l->n; i++) {
        if (l->kind == SB_LABELS_INT64) ((int64_t *)out)[i] = l->ints[i];
        else if (l->kind == SB_LABELS_BOOL) ((uint8_t *)out)[i] = (uint8_t)l->ints[i];
        else ((double *)out)[i] = l->floats[i];
    }
    return SB_OK;
}

sb_status sb_model_get_class_label_string(const sb_model *m, size_t i, const char **label) {
    sb_clear_error();
    if (!m || !label) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_class_label_string: NULL argument");
    const sb_labels *l = m->labels;
    if (!l || l->kind != SB_LABELS_STRING)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_class_label_string: the model has no string labels");
    if (i >= (size_t)l->n)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_class_label_string: label %zu of %d", i, (int)l->n);
    *label = l->strs[i];
    return SB_OK;
}
