/* linear_params.c: the linear family's parameters (docs/linear.md,
 * "Parameters"), with scikit-learn's names and defaults. */
#include "linear.h"
#include "../../device/device.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is(const char *key, const char *a, const char *b) { return !strcmp(key, a) || (b && !strcmp(key, b)); }

static sb_status parse_bool(const char *key, const char *v, int32_t *out) {
    if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "True")) *out = 1;
    else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "False")) *out = 0;
    else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be true or false", key, v);
    return SB_OK;
}

static const struct {
    const char *name;
    int32_t kind;
} k_models[] = {{"linear", SB_LIN_OLS},          {"linear_regression", SB_LIN_OLS}, {"ridge", SB_LIN_RIDGE},
                {"lasso", SB_LIN_LASSO},         {"elasticnet", SB_LIN_ENET},       {"elastic_net", SB_LIN_ENET},
                {"logistic", SB_LIN_LOGISTIC},   {"logistic_regression", SB_LIN_LOGISTIC},
                {"pca", SB_LIN_PCA},             {"truncated_svd", SB_LIN_TSVD},    {"tsvd", SB_LIN_TSVD}};

/* "balanced", "none", or "k:w;k:w" (',' also separates pairs). */
static sb_status parse_class_weight(const char *v, lin_params *p) {
    p->cw_max = -1;
    if (!strcmp(v, "balanced")) {
        p->class_weight = 1;
        return SB_OK;
    }
    if (!strcmp(v, "none") || !strcmp(v, "None") || !*v) {
        p->class_weight = 0;
        return SB_OK;
    }
    p->class_weight = 2;
    const char *s = v;
    while (*s) {
        char *end;
        long k = strtol(s, &end, 10);
        if (end == s || *end != ':' || k < 0 || k > 1023)
            return sb_fail(SB_ERR_INVALID_ARGUMENT,
                           "class_weight='%s': balanced, or class:weight pairs such as '0:1;1:2.5' (classes 0..1023)",
                           v);
        s = end + 1;
        float w = strtof(s, &end);
        if (end == s || (*end && *end != ';' && *end != ','))
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "class_weight='%s': the weight of class %ld is not a number", v, k);
        if (!(w >= 0.0f) || w - w != 0.0f)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "class_weight='%s': the weight of class %ld must be finite and >= 0",
                           v, k);
        p->cw[k] = w;
        if (k > p->cw_max) p->cw_max = (int32_t)k;
        s = *end ? end + 1 : end;
    }
    if (p->cw_max < 0) return sb_fail(SB_ERR_INVALID_ARGUMENT, "class_weight='%s' lists no class", v);
    return SB_OK;
}

static const char *const k_alias_groups[] = {"model|family", "alpha|lambda", "seed|random_state",
                                             "device|device_type", NULL};

/* The canonical text: the parameters that shape the model, one "key=value\n"
 * line each, sorted by key (the model file's params; the device and numeric
 * mode are the run's, not the model's). */
sb_status sb_lin_params_text(const lin_params *p, char **out) {
    const char *cw_text = p->cw_text;
    char buf[512];
    int n = 0;
    const int ls = p->kind <= SB_LIN_ENET, cd = p->kind == SB_LIN_LASSO || p->kind == SB_LIN_ENET;
#define ADD(...) n += snprintf(buf + n, sizeof buf - (size_t)n, __VA_ARGS__)
    /* a randomized truncated SVD writes no algorithm line (its models from
     * before the exact solver keep their bytes) */
    if (p->kind == SB_LIN_TSVD && p->svd_solver == 3) ADD("algorithm=arpack\n");
    if (ls && p->kind != SB_LIN_OLS) ADD("alpha=%.9g\n", (double)p->alpha);
    if (p->kind == SB_LIN_LOGISTIC) {
        ADD("C=%.9g\n", (double)p->C);
    }
    if (p->kind == SB_LIN_LOGISTIC && p->class_weight) ADD("class_weight=%s\n", cw_text);
    if (p->kind <= SB_LIN_LOGISTIC) ADD("fit_intercept=%s\n", p->fit_intercept ? "true" : "false");
    if (p->kind == SB_LIN_ENET) ADD("l1_ratio=%.9g\n", (double)p->l1_ratio);
    if (cd || p->kind == SB_LIN_LOGISTIC) ADD("max_iter=%d\n", (int)p->max_iter);
    ADD("model=%s\n", sb_linear_kind_name(p->kind));
    if (p->kind >= SB_LIN_PCA) {
        if (p->variance_kept > 0.0f) ADD("n_components=%.9g\n", (double)p->variance_kept);
        else if (p->n_components > 0) ADD("n_components=%d\n", (int)p->n_components);
    }
    if (p->kind >= SB_LIN_PCA && p->svd_solver == 2) {
        ADD("n_iter=%d\n", (int)p->n_iter);
        ADD("n_oversamples=%d\n", (int)p->n_oversamples);
    }
    if (p->kind == SB_LIN_LOGISTIC) ADD("penalty=%s\n", p->penalty_l2 ? "l2" : "none");
    if (p->kind >= SB_LIN_PCA && p->svd_solver == 2) ADD("seed=%llu\n", (unsigned long long)p->seed);
    if (p->kind == SB_LIN_PCA)
        ADD("svd_solver=%s\n", p->svd_solver == 2 ? "randomized" : p->svd_solver == 3 ? "arpack" : "full");
    if (cd || p->kind == SB_LIN_LOGISTIC) ADD("tol=%.9g\n", (double)p->tol);
    if (p->kind == SB_LIN_PCA) ADD("whiten=%s\n", p->whiten ? "true" : "false");
#undef ADD
    if (n >= (int)sizeof buf) return sb_fail(SB_ERR_LIMIT, "linear: the parameter text is too long");
    /* "C" sorts before lower-case keys, as the bytes do */
    *out = sb_strdup(buf);
    return *out ? SB_OK : sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory");
}

sb_status sb_lin_params_parse(const sb_params *params, lin_params *p) {
    memset(p, 0, sizeof *p);
    p->kind = -1;
    p->fit_intercept = 1;
    p->alpha = 1.0f;
    p->l1_ratio = 0.5f;
    p->tol = 1e-4f;
    p->max_iter = -1;
    p->C = 1.0f;
    p->penalty_l2 = 1;
    p->cw_max = -1;
    for (int32_t k = 0; k < 1024; k++) p->cw[k] = 1.0f;
    snprintf(p->device, sizeof p->device, "cpu");
    sb_status st = sb_params_refuse_aliases(params, k_alias_groups, "linear models");
    if (st != SB_OK) return st;
    const char *key, *v;
    for (int64_t k = 0; params && sb_params_entry(params, k, &key, &v) == SB_OK; k++)
        if (is(key, "model", "family")) {
            for (size_t i = 0; i < sizeof k_models / sizeof k_models[0]; i++)
                if (!strcmp(v, k_models[i].name)) p->kind = k_models[i].kind;
            if (p->kind < 0)
                return sb_fail(SB_ERR_INVALID_ARGUMENT,
                               "model='%s' is not a linear model (linear, ridge, lasso, elasticnet, logistic, pca, "
                               "truncated_svd)", v);
        }
    if (p->kind < 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "linear models need model= (linear, ridge, lasso, elasticnet, logistic, pca, truncated_svd)");
    p->n_iter = -1;
    p->n_oversamples = 10;
    if (p->kind == SB_LIN_TSVD) p->svd_solver = 2;
    if (p->kind == SB_LIN_LASSO) p->l1_ratio = 1.0f;
    p->max_iter = p->kind == SB_LIN_LOGISTIC ? 100 : 1000;
    sb_numeric_mode mode;
    if ((st = sb_params_resolve_mode(params, SB_FAMILY_LINEAR, &mode)) != SB_OK) return st;
    p->numeric_mode = (int32_t)mode;
    const int cd = p->kind == SB_LIN_LASSO || p->kind == SB_LIN_ENET;
    for (int64_t k = 0; params && sb_params_entry(params, k, &key, &v) == SB_OK && st == SB_OK; k++) {
        int64_t i;
        if (is(key, "model", "family") || is(key, "numeric_mode", NULL)) {
            continue;
        } else if (is(key, "device", "device_type")) {
            sb_device_kind dk;
            if ((st = sb_device_parse(v, &dk)) == SB_OK) snprintf(p->device, sizeof p->device, "%s", v);
        } else if (is(key, "fit_intercept", NULL) && p->kind <= SB_LIN_LOGISTIC) {
            st = parse_bool(key, v, &p->fit_intercept);
        } else if (is(key, "alpha", "lambda") && (p->kind == SB_LIN_RIDGE || cd)) {
            st = sb_param_float(key, v, 0.0f, 3.0e38f, 0, &p->alpha);
        } else if (is(key, "l1_ratio", NULL) && p->kind == SB_LIN_ENET) {
            st = sb_param_float(key, v, 0.0f, 1.0f, 0, &p->l1_ratio);
        } else if (is(key, "tol", NULL) && (cd || p->kind == SB_LIN_LOGISTIC)) {
            st = sb_param_float(key, v, 0.0f, 1.0f, 0, &p->tol);
        } else if (is(key, "max_iter", NULL) && (cd || p->kind == SB_LIN_LOGISTIC)) {
            if ((st = sb_param_int(key, v, 1, 1000000, &i)) == SB_OK) p->max_iter = (int32_t)i;
        } else if (is(key, "C", NULL) && p->kind == SB_LIN_LOGISTIC) {
            st = sb_param_float(key, v, 0.0f, 3.0e38f, 1, &p->C);
        } else if (is(key, "penalty", NULL) && p->kind == SB_LIN_LOGISTIC) {
            if (!strcmp(v, "l2")) p->penalty_l2 = 1;
            else if (!strcmp(v, "none") || !strcmp(v, "None")) p->penalty_l2 = 0;
            else if (!strcmp(v, "l1") || !strcmp(v, "elasticnet"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "penalty='%s' is not built for logistic regression (l2 and none are)",
                             v);
            else st = sb_fail(SB_ERR_INVALID_ARGUMENT, "penalty='%s': l2 or none", v);
        } else if (is(key, "class_weight", NULL) && p->kind == SB_LIN_LOGISTIC) {
            if ((st = parse_class_weight(v, p)) == SB_OK) snprintf(p->cw_text, sizeof p->cw_text, "%s", v);
        } else if (is(key, "solver", NULL)) {
            /* the one solver each kind has, under scikit-learn's names */
            const char *ok = p->kind == SB_LIN_LOGISTIC ? "lbfgs"
                             : p->kind == SB_LIN_RIDGE  ? "cholesky"
                                                        : NULL;
            if (!ok || (strcmp(v, ok) && strcmp(v, "auto")))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "solver='%s' is not built for %s (%s is)", v,
                             sb_linear_kind_name(p->kind), ok ? ok : "no solver choice");
        } else if (is(key, "selection", NULL) && cd) {
            if (strcmp(v, "cyclic"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "selection='%s' is not built (coordinate descent is cyclic)", v);
        } else if (is(key, "positive", NULL) && (cd || p->kind <= SB_LIN_RIDGE)) {
            int32_t b;
            if ((st = parse_bool(key, v, &b)) == SB_OK && b)
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "positive=true is not built for %s", sb_linear_kind_name(p->kind));
        } else if (is(key, "n_components", NULL) && p->kind >= SB_LIN_PCA) {
            char *end;
            double d = strtod(v, &end);
            if (end == v || *end || !(d > 0.0))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT,
                             "n_components='%s': a count of components (1, 2, ...) or a fraction of the variance in "
                             "(0, 1)%s", v, !strcmp(v, "mle") ? " ('mle' is not built)" : "");
            else if (d < 1.0 && p->kind == SB_LIN_PCA) p->variance_kept = (float)d;
            else if (d != (double)(int64_t)d || d > 1000000.0)
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "n_components='%s' is not a whole count in 1..1000000", v);
            else p->n_components = (int32_t)d;
        } else if (is(key, "whiten", NULL) && p->kind == SB_LIN_PCA) {
            st = parse_bool(key, v, &p->whiten);
        } else if (is(key, "svd_solver", NULL) && p->kind == SB_LIN_PCA) {
            if (!strcmp(v, "auto")) p->svd_solver = 0;
            else if (!strcmp(v, "full") || !strcmp(v, "covariance_eigh")) p->svd_solver = 1;
            else if (!strcmp(v, "randomized")) p->svd_solver = 2;
            else if (!strcmp(v, "arpack")) p->svd_solver = 3;
            else
                st = sb_fail(SB_ERR_INVALID_ARGUMENT,
                             "svd_solver='%s' is not built (auto, full, covariance_eigh, arpack and randomized are; "
                             "docs/linear.md)", v);
        } else if (is(key, "algorithm", NULL) && p->kind == SB_LIN_TSVD) {
            if (!strcmp(v, "randomized")) p->svd_solver = 2;
            else if (!strcmp(v, "arpack")) p->svd_solver = 3;
            else
                st = sb_fail(SB_ERR_INVALID_ARGUMENT,
                             "algorithm='%s' is not built for truncated_svd (randomized and arpack are)", v);
        } else if ((is(key, "n_iter", NULL) && p->kind == SB_LIN_TSVD) ||
                   (is(key, "iterated_power", NULL) && p->kind == SB_LIN_PCA)) {
            if (p->kind == SB_LIN_PCA && !strcmp(v, "auto")) p->n_iter = -1;
            else if ((st = sb_param_int(key, v, 0, 100, &i)) == SB_OK) p->n_iter = (int32_t)i;
        } else if (is(key, "n_oversamples", NULL) && p->kind >= SB_LIN_PCA) {
            if ((st = sb_param_int(key, v, 0, 10000, &i)) == SB_OK) p->n_oversamples = (int32_t)i;
        } else if (is(key, "seed", "random_state") && p->kind >= SB_LIN_PCA) {
            if ((st = sb_param_int(key, v, 0, INT64_MAX, &i)) == SB_OK) p->seed = (uint64_t)i;
        } else if (is(key, "power_iteration_normalizer", NULL) && p->kind >= SB_LIN_PCA) {
            if (strcmp(v, "auto"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT,
                             "power_iteration_normalizer='%s' is not built (auto: each power step is orthonormalized "
                             "through the eigenvectors of its Gram matrix; docs/linear.md)", v);
        } else {
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown parameter '%s' for %s (docs/linear.md)", key,
                         sb_linear_kind_name(p->kind));
        }
    }
    return st;
}
