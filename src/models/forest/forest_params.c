/* forest_params.c: see forest_params.h. */
#include "forest_params.h"
#include "fdev.h"
#include "../model.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define parse_int sb_param_int /* src/core/params.c */

/* (lo, hi]: a fraction of rows or features */
static sb_status parse_float(const char *key, const char *v, float lo, float hi, float *out) {
    return sb_param_float(key, v, lo, hi, 1, out);
}

static sb_status parse_bool(const char *key, const char *v, int32_t *out) {
    if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "True")) *out = 1;
    else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "False")) *out = 0;
    else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be true or false", key, v);
    return SB_OK;
}

/* class_weight: "balanced", "balanced_subsample", "none", or explicit weights
 * "k:w;k:w..." (class index k in 0..SB_FOREST_MAX_CLASS-1, weight w finite and
 * >= 0; ',' separates pairs too where the text does not pass sb_params_parse,
 * which splits on commas). A class listed twice, or a malformed pair, is a
 * named error; classes not listed keep weight 1. */
static sb_status parse_class_weight(const char *v, forest_params *p) {
    p->cw_max = -1;
    if (!strcmp(v, "balanced")) {
        p->class_weight = SB_CW_BALANCED;
        return SB_OK;
    }
    if (!strcmp(v, "balanced_subsample")) {
        p->class_weight = SB_CW_SUBSAMPLE;
        return SB_OK;
    }
    if (!strcmp(v, "none") || !strcmp(v, "None") || !*v) {
        p->class_weight = SB_CW_NONE;
        return SB_OK;
    }
    p->class_weight = SB_CW_LIST;
    for (int32_t k = 0; k < SB_FOREST_MAX_CLASS; k++) {
        p->cw[k] = 1.0f;
        p->cw_listed[k] = 0;
    }
    const char *s = v;
    while (*s) {
        char *end;
        errno = 0;
        long k = strtol(s, &end, 10);
        if (end == s || *end != ':' || errno || k < 0 || k >= SB_FOREST_MAX_CLASS)
            return sb_fail(SB_ERR_INVALID_ARGUMENT,
                           "class_weight='%s': balanced, balanced_subsample, or class:weight pairs such as "
                           "'0:1;1:2.5' (classes 0..%d)", v, SB_FOREST_MAX_CLASS - 1);
        s = end + 1;
        float w = strtof(s, &end);
        if (end == s || (*end && *end != ';' && *end != ','))
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "class_weight='%s': the weight of class %ld is not a number", v, k);
        if (!(w >= 0.0f) || w - w != 0.0f)
            return sb_fail(SB_ERR_INVALID_ARGUMENT,
                           "class_weight='%s': the weight of class %ld must be finite and >= 0", v, k);
        if (p->cw_listed[k])
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "class_weight='%s': class %ld is listed twice", v, k);
        p->cw[k] = w;
        p->cw_listed[k] = 1;
        if (k > p->cw_max) p->cw_max = (int32_t)k;
        s = *end ? end + 1 : end;
    }
    if (p->cw_max < 0) return sb_fail(SB_ERR_INVALID_ARGUMENT, "class_weight='%s' lists no class", v);
    return SB_OK;
}

static int is(const char *key, const char *a, const char *b) { return !strcmp(key, a) || (b && !strcmp(key, b)); }

/* The names the parser below takes for one parameter, one group each: two
 * of one group in a bag are refused by name. */
static const char *const k_alias_groups[] = {"model|family", "objective|task", "n_estimators|num_trees",
                                             "seed|random_state", "max_bin|max_bins", "device|device_type", NULL};

sb_status sb_forest_params_parse(const sb_params *params, forest_params *p) {
    memset(p, 0, sizeof *p);
    const char *key, *v;
    sb_status ast = sb_params_refuse_aliases(params, k_alias_groups, "forests");
    if (ast != SB_OK) return ast;
    /* family and task first: they decide the defaults */
    p->classification = 1;
    int crit_set = 0, maxf_set = 0, boot_set = 0;
    for (int64_t k = 0; params && sb_params_entry(params, k, &key, &v) == SB_OK; k++) {
        if (is(key, "model", "family")) {
            if (!strcmp(v, "random_forest") || !strcmp(v, "rf")) p->extra = 0;
            else if (!strcmp(v, "extra_trees") || !strcmp(v, "et")) p->extra = 1;
            else return sb_fail(SB_ERR_INVALID_ARGUMENT, "model '%s' is not a forest (random_forest, extra_trees)", v);
        } else if (is(key, "objective", "task")) {
            if (!strcmp(v, "classification")) p->classification = 1;
            else if (!strcmp(v, "regression")) p->classification = 0;
            else return sb_fail(SB_ERR_INVALID_ARGUMENT, "forest objective '%s': classification or regression", v);
        }
    }
    p->criterion = p->classification ? SB_CRIT_GINI : SB_CRIT_SQUARED;
    p->n_estimators = 100;
    p->max_depth = -1;
    p->min_samples_split = 2;
    p->min_samples_leaf = 1;
    p->max_features_mode = p->classification ? SB_MAXF_SQRT : SB_MAXF_ALL;
    p->bootstrap = !p->extra;
    p->max_bin = 255;
    p->bin_sample_rows = 200000;
    p->cw_max = -1;
    sb_numeric_mode m;
    sb_status st = sb_params_resolve_mode(params, p->extra ? SB_FAMILY_EXTRA_TREES : SB_FAMILY_RANDOM_FOREST, &m);
    if (st != SB_OK) return st;
    p->numeric_mode = (int32_t)m;
    for (int64_t k = 0; params && sb_params_entry(params, k, &key, &v) == SB_OK; k++) {
        int64_t i;
        st = SB_OK;
        if (is(key, "model", "family") || is(key, "objective", "task") || is(key, "numeric_mode", NULL)) {
            continue;
        } else if (is(key, "criterion", NULL)) {
            crit_set = 1;
            if (!strcmp(v, "gini")) p->criterion = SB_CRIT_GINI;
            else if (!strcmp(v, "entropy") || !strcmp(v, "log_loss")) p->criterion = SB_CRIT_ENTROPY;
            else if (!strcmp(v, "squared_error")) p->criterion = SB_CRIT_SQUARED;
            else return sb_fail(SB_ERR_INVALID_ARGUMENT, "criterion '%s' is not supported (gini, entropy, squared_error)", v);
        } else if (is(key, "n_estimators", "num_trees")) {
            if ((st = parse_int(key, v, 1, 100000, &i)) == SB_OK) p->n_estimators = (int32_t)i;
        } else if (is(key, "max_depth", NULL)) {
            if ((st = parse_int(key, v, -1, 128, &i)) == SB_OK) p->max_depth = (int32_t)i;
        } else if (is(key, "min_samples_split", NULL)) {
            if ((st = parse_int(key, v, 2, INT64_C(1) << 40, &i)) == SB_OK) p->min_samples_split = i;
        } else if (is(key, "min_samples_leaf", NULL)) {
            if ((st = parse_int(key, v, 1, INT64_C(1) << 40, &i)) == SB_OK) p->min_samples_leaf = i;
        } else if (is(key, "max_features", NULL)) {
            maxf_set = 1;
            if (!strcmp(v, "sqrt")) p->max_features_mode = SB_MAXF_SQRT;
            else if (!strcmp(v, "log2")) p->max_features_mode = SB_MAXF_LOG2;
            else if (!strcmp(v, "all") || !strcmp(v, "None")) p->max_features_mode = SB_MAXF_ALL;
            else if (strchr(v, '.')) {
                p->max_features_mode = SB_MAXF_FRACTION;
                st = parse_float(key, v, 0.0f, 1.0f, &p->max_features_fraction);
            } else {
                p->max_features_mode = SB_MAXF_COUNT;
                if ((st = parse_int(key, v, 1, INT32_MAX, &i)) == SB_OK) p->max_features_count = (int32_t)i;
            }
        } else if (is(key, "bootstrap", NULL)) {
            boot_set = 1;
            st = parse_bool(key, v, &p->bootstrap);
        } else if (is(key, "max_samples", NULL)) {
            st = parse_float(key, v, 0.0f, 1.0f, &p->max_samples);
        } else if (is(key, "seed", "random_state")) {
            if ((st = parse_int(key, v, 0, INT64_MAX, &i)) == SB_OK) p->seed = (uint64_t)i;
        } else if (is(key, "max_bin", "max_bins")) {
            if ((st = parse_int(key, v, 2, 255, &i)) == SB_OK) p->max_bin = (int32_t)i;
        } else if (is(key, "bin_sample_rows", NULL)) {
            if ((st = parse_int(key, v, 1000, INT64_C(1) << 40, &i)) == SB_OK) p->bin_sample_rows = i;
        } else if (is(key, "class_weight", NULL)) {
            st = parse_class_weight(v, p);
        } else if (is(key, "min_weight_fraction_leaf", NULL)) {
            st = sb_param_float(key, v, 0.0f, 0.5f, 0, &p->min_weight_fraction_leaf);
        } else if (is(key, "device", "device_type")) {
            /* the device layer's one parser: a backend this build lacks is
             * refused here; an absent device when training opens it */
            sb_device_kind k;
            if ((st = sb_device_parse(v, &k)) == SB_OK) p->device = (int32_t)k;
        } else if (is(key, "distributed", NULL)) {
            /* data-parallel training (docs/distributed.md); a run setting, not in the model */
            if (!strcmp(v, "mpi")) p->distributed = 1;
            else if (!strcmp(v, "none") || !strcmp(v, "false") || !strcmp(v, "0")) p->distributed = 0;
            else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter distributed='%s': give mpi (or none)", v);
        } else if (is(key, "distributed_rows", NULL)) {
            if (!strcmp(v, "split")) p->dist_given = 0;
            else if (!strcmp(v, "given")) p->dist_given = 1;
            else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter distributed_rows='%s': give split or given", v);
        } else {
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown parameter '%s' for forests (docs/forest.md lists them)", key);
        }
        if (st != SB_OK) return st;
    }
    (void)crit_set;
    (void)maxf_set;
    (void)boot_set;
    if (p->classification == (p->criterion == SB_CRIT_SQUARED))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "criterion %s does not fit %s",
                       p->criterion == SB_CRIT_SQUARED ? "squared_error" : "gini/entropy",
                       p->classification ? "classification" : "regression");
    if (p->max_samples > 0.0f && !p->bootstrap)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "max_samples needs bootstrap=true");
    if (p->class_weight != SB_CW_NONE && !p->classification)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "class_weight is for classification forests");
    return SB_OK;
}

int32_t sb_forest_mtry(const forest_params *p, int32_t nf) {
    int32_t m = nf;
    if (p->max_features_mode == SB_MAXF_SQRT) {
        m = 1;
        while ((int64_t)(m + 1) * (m + 1) <= nf) m++; /* floor(sqrt(nf)), exactly */
    } else if (p->max_features_mode == SB_MAXF_LOG2) {
        m = 0;
        while ((1 << (m + 1)) <= nf && m < 30) m++; /* floor(log2(nf)) */
    } else if (p->max_features_mode == SB_MAXF_COUNT) {
        m = p->max_features_count;
    } else if (p->max_features_mode == SB_MAXF_FRACTION) {
        m = (int32_t)(p->max_features_fraction * (float)nf);
    }
    if (m < 1) m = 1;
    if (m > nf) m = nf;
    return m;
}

sb_status sb_forest_params_text(const forest_params *p, char **out) {
    static const char *const crit[] = {"gini", "entropy", "squared_error"};
    char maxf[32];
    switch (p->max_features_mode) {
    case SB_MAXF_SQRT: snprintf(maxf, sizeof maxf, "sqrt"); break;
    case SB_MAXF_LOG2: snprintf(maxf, sizeof maxf, "log2"); break;
    case SB_MAXF_ALL: snprintf(maxf, sizeof maxf, "all"); break;
    case SB_MAXF_COUNT: snprintf(maxf, sizeof maxf, "%d", (int)p->max_features_count); break;
    default: snprintf(maxf, sizeof maxf, "%.9g", (double)p->max_features_fraction); break;
    }
    /* class_weight and min_weight_fraction_leaf appear only when set, so an
     * unweighted model's text (and bytes) are what they were before them. */
    char *cw = sb_malloc((size_t)SB_FOREST_MAX_CLASS * 24 + 64);
    if (!cw) return sb_fail(SB_ERR_OUT_OF_MEMORY, "out of memory");
    size_t at = 0;
    cw[0] = 0;
    if (p->class_weight == SB_CW_BALANCED) at = (size_t)sprintf(cw, "class_weight=balanced\n");
    else if (p->class_weight == SB_CW_SUBSAMPLE) at = (size_t)sprintf(cw, "class_weight=balanced_subsample\n");
    else if (p->class_weight == SB_CW_LIST) {
        at = (size_t)sprintf(cw, "class_weight=");
        for (int32_t k = 0, first = 1; k <= p->cw_max; k++)
            if (p->cw_listed[k]) {
                at += (size_t)sprintf(cw + at, "%s%d:%.9g", first ? "" : ";", (int)k, (double)p->cw[k]);
                first = 0;
            }
        at += (size_t)sprintf(cw + at, "\n");
    }
    char mwf[48] = "";
    if (p->min_weight_fraction_leaf > 0.0f)
        snprintf(mwf, sizeof mwf, "min_weight_fraction_leaf=%.9g\n", (double)p->min_weight_fraction_leaf);
    size_t cap = at + 1024;
    char *buf = sb_malloc(cap);
    if (!buf) {
        sb_free(cw);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "out of memory");
    }
    int n = snprintf(buf, cap,
                     "bin_sample_rows=%lld\nbootstrap=%d\n%scriterion=%s\nmax_bin=%d\nmax_depth=%d\nmax_features=%s\n"
                     "max_samples=%.9g\nmin_samples_leaf=%lld\nmin_samples_split=%lld\n%smodel=%s\nn_estimators=%d\n"
                     "numeric_mode=%s\nobjective=%s\nseed=%llu\n",
                     (long long)p->bin_sample_rows, (int)p->bootstrap, cw, crit[p->criterion], (int)p->max_bin,
                     (int)p->max_depth, maxf, (double)p->max_samples, (long long)p->min_samples_leaf,
                     (long long)p->min_samples_split, mwf, p->extra ? "extra_trees" : "random_forest",
                     (int)p->n_estimators, sb_numeric_mode_name((sb_numeric_mode)p->numeric_mode),
                     p->classification ? "classification" : "regression", (unsigned long long)p->seed);
    sb_free(cw);
    if (n < 0 || (size_t)n >= cap) {
        sb_free(buf);
        return sb_fail(SB_ERR_INTERNAL, "parameter text too long");
    }
    *out = buf;
    return SB_OK;
}

/* The line at *s (without its newline), n_estimators lines skipped; *s moves
 * past it. Returns its length, or -1 at the end of the text. */
static int next_line(const char **s, const char **line) {
    for (;;) {
        if (!**s) return -1;
        const char *e = strchr(*s, '\n');
        const int len = e ? (int)(e - *s) : (int)strlen(*s);
        *line = *s;
        *s += len + (e != NULL);
        if (len >= 13 && !strncmp(*line, "n_estimators=", 13)) continue;
        return len;
    }
}

int sb_forest_params_differ(const char *a, const char *b, char *init_line, char *new_line, size_t cap) {
    const char *pa = a ? a : "", *pb = b ? b : "", *la = NULL, *lb = NULL;
    for (;;) {
        const int na = next_line(&pa, &la), nb = next_line(&pb, &lb);
        if (na < 0 && nb < 0) return 0;
        if (na == nb && !strncmp(la, lb, (size_t)na)) continue;
        snprintf(init_line, cap, "%.*s", na < 0 ? 6 : na, na < 0 ? "(none)" : la);
        snprintf(new_line, cap, "%.*s", nb < 0 ? 6 : nb, nb < 0 ? "(none)" : lb);
        return 1;
    }
}

sb_status sb_forest_warm_kind(const sb_model *init, int32_t fam, int32_t nf) {
    const char *prof = init->profile ? init->profile : SB_PROFILE_VERSION;
    if (init->family != fam)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "init_model: a %s model; this warm start fits %s",
                       sb_family_name((sb_family)init->family), sb_family_name((sb_family)fam));
    if (strcmp(prof, SB_PROFILE_VERSION) != 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "init_model was trained under %s; this library trains under %s, and a "
                       "warm start adds trees of one profile", prof, SB_PROFILE_VERSION);
    if (init->num_features != nf)
        return sb_fail(SB_ERR_INVALID_INPUT, "init_model has %d features, the training data %d",
                       (int)init->num_features, (int)nf);
    return SB_OK;
}

sb_status sb_forest_warm_params(const sb_model *init, const char *text, int64_t n_estimators, int32_t kept) {
    char a[128], b[128];
    if (sb_forest_params_differ(init->params, text, a, b, sizeof a))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "init_model was fitted with %s, the parameters give %s; a warm start "
                       "changes n_estimators only", a, b);
    if (kept > n_estimators)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "n_estimators=%lld is fewer than init_model's %d; a warm start keeps "
                       "every tree and adds", (long long)n_estimators, (int)kept);
    return SB_OK;
}
