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

/* ---- category names of categorical features ---- */

void sb_model_catnames_free(sb_model *m) {
    for (int32_t k = 0; k < m->ncatnames; k++) {
        for (int32_t i = 0; i < m->catnames[k].n; i++) sb_free(m->catnames[k].names[i]);
        sb_free(m->catnames[k].names);
    }
    sb_free(m->catnames);
    m->catnames = NULL;
    m->ncatnames = 0;
}

sb_status sb_catnames_check(const sb_catnames *c, int32_t nfeatures, sb_status bad, const char *who) {
    if (c->feature < 0 || c->feature >= nfeatures)
        return sb_fail(bad, "%s: category names of feature %d; the model has %d features", who, (int)c->feature,
                       (int)nfeatures);
    if (c->n < 1 || c->n > 1000000)
        return sb_fail(c->n > 1000000 ? SB_ERR_LIMIT : bad, "%s: feature %d has %d category names (1..1000000)", who,
                       (int)c->feature, (int)c->n);
    for (int32_t i = 0; i < c->n; i++) {
        const char *v = c->names[i];
        if (!v) return sb_fail(bad, "%s: feature %d: category name %d is NULL", who, (int)c->feature, (int)i);
        const size_t len = strlen(v);
        if (len > SB_MAX_NAME_BYTES)
            return sb_fail(SB_ERR_LIMIT, "%s: feature %d: category name %d is %zu bytes, more than %d", who,
                           (int)c->feature, (int)i, len, (int)SB_MAX_NAME_BYTES);
        if (!sb_utf8_valid(v, len))
            return sb_fail(bad, "%s: feature %d: category name %d is not valid UTF-8", who, (int)c->feature, (int)i);
        if (i > 0 && strcmp(c->names[i - 1], v) >= 0)
            return sb_fail(bad, "%s: feature %d: category names must increase strictly by their UTF-8 bytes (\"%.40s\" "
                           "then \"%.40s\")", who, (int)c->feature, c->names[i - 1], v);
    }
    return SB_OK;
}

sb_status sb_model_set_category_names(sb_model *m, int32_t feature, const char *const *names, int32_t n) {
    sb_clear_error();
    if (!m || (n > 0 && !names)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_set_category_names: NULL argument");
    const char *who = "sb_model_set_category_names";
    if (m->family != SB_FAMILY_GBDT)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: a %s model has no categorical features", who,
                       sb_family_name((sb_family)m->family));
    if (n < 0) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: n is %d", who, (int)n);
    sb_catnames c = {feature, n, (char **)names};
    if (n > 0) {
        sb_status st = sb_catnames_check(&c, m->num_features, SB_ERR_INVALID_ARGUMENT, who);
        if (st != SB_OK) return st;
    } else if (feature < 0 || feature >= m->num_features) {
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: feature %d; the model has %d features", who, (int)feature,
                       (int)m->num_features);
    }
    /* the new table: every other feature's entry kept, this one's replaced, in feature order */
    int32_t k = 0, have = 0;
    for (int32_t i = 0; i < m->ncatnames; i++) have |= m->catnames[i].feature == feature;
    const int32_t count = m->ncatnames - have + (n > 0);
    sb_catnames *t = sb_calloc((size_t)(count > 0 ? count : 1), sizeof *t);
    char **copy = n > 0 ? sb_calloc((size_t)n, sizeof(char *)) : NULL;
    int ok = t && (n == 0 || copy);
    for (int32_t i = 0; ok && i < n; i++) {
        const size_t len = strlen(names[i]);
        if (!(copy[i] = sb_malloc(len + 1))) ok = 0;
        else memcpy(copy[i], names[i], len + 1);
    }
    if (!ok) {
        for (int32_t i = 0; copy && i < n; i++) sb_free(copy[i]);
        sb_free(copy);
        sb_free(t);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    }
    int placed = n == 0;
    for (int32_t i = 0; i < m->ncatnames; i++) {
        if (!placed && m->catnames[i].feature > feature) {
            t[k++] = (sb_catnames){feature, n, copy};
            placed = 1;
        }
        if (m->catnames[i].feature == feature) continue;
        t[k++] = m->catnames[i];
        m->catnames[i].names = NULL, m->catnames[i].n = 0;
    }
    if (!placed) t[k++] = (sb_catnames){feature, n, copy};
    sb_model_catnames_free(m); /* the kept entries were moved out: only the replaced one's names go */
    m->catnames = t;
    m->ncatnames = k;
    return SB_OK;
}

static const sb_catnames *catnames_of(const sb_model *m, int32_t feature) {
    for (int32_t i = 0; i < m->ncatnames; i++)
        if (m->catnames[i].feature == feature) return &m->catnames[i];
    return NULL;
}

sb_status sb_model_get_category_count(const sb_model *m, int32_t feature, int32_t *n) {
    sb_clear_error();
    if (!m || !n) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_category_count: NULL argument");
    const sb_catnames *c = catnames_of(m, feature);
    *n = c ? c->n : 0;
    return SB_OK;
}

sb_status sb_model_get_category_name(const sb_model *m, int32_t feature, int32_t i, const char **name) {
    sb_clear_error();
    if (!m || !name) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_category_name: NULL argument");
    const sb_catnames *c = catnames_of(m, feature);
    if (!c || i < 0 || i >= c->n)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_get_category_name: feature %d has %d category names; no "
                       "name %d", (int)feature, c ? (int)c->n : 0, (int)i);
    *name = c->names[i];
    return SB_OK;
}
