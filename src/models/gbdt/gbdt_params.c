/*
 * gbdt_params.c: the parameters of gradient boosting, named as LightGBM,
 * XGBoost and scikit-learn users know them (aliases accepted). Nothing is
 * silently ignored: an unknown key is an error that names it.
 */
#include "gbdt_params.h"
#include "../model.h"
#include "../trees/tdev.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define parse_int sb_param_int /* src/core/params.c */
#define parse_float sb_param_float

static const char *const k_metrics[] = {"rmse", "mae", "logloss", "error", "auc", "mlogloss", "merror", "ndcg", "map", "l2",
                                        "huber", "quantile", "poisson", "gamma", "tweedie"};
#define N_METRICS ((int32_t)(sizeof k_metrics / sizeof k_metrics[0]))
static const char *const k_objectives[] = {"regression", "binary", "multiclass", "lambdarank", "rank_pairwise",
                                           "huber", "quantile", "poisson", "gamma", "tweedie"};

const char *sb_metric_name(int32_t m) { return m >= 0 && m < N_METRICS ? k_metrics[m] : "default"; }
const char *sb_objective_name(int32_t o) { return o >= 0 && o < 10 ? k_objectives[o] : "unknown"; }

/* Whether objective o predicts a real value (squared error and LightGBM's
 * other regression objectives). */
static int is_regression(int32_t o) { return o == SB_OBJ_REGRESSION || (o >= SB_OBJ_HUBER && o <= SB_OBJ_TWEEDIE); }

float sb_gbdt_obj_param(const gbdt_params *p) {
    switch (p->objective) {
    case SB_OBJ_HUBER:
    case SB_OBJ_QUANTILE: return p->alpha;
    case SB_OBJ_POISSON: return p->poisson_max_delta_step;
    case SB_OBJ_TWEEDIE: return p->tweedie_power;
    }
    return 0.0f;
}
int sb_gbdt_is_ranking(int32_t o) { return o == SB_OBJ_LAMBDARANK || o == SB_OBJ_RANK_PAIRWISE; }


typedef sb_status (*list_parser)(const char *key, const char *v, char *buf, gbdt_params *p);

/* parse(key, v, a copy of v without blanks, p): the parser may cut its copy,
 * which is freed here. */
static sb_status parse_squeezed(const char *key, const char *v, gbdt_params *p, list_parser parse) {
    char *buf = sb_malloc(strlen(v) + 1), *o = buf;
    if (!buf) return sb_fail(SB_ERR_OUT_OF_MEMORY, "out of memory");
    for (const char *c = v; *c; c++)
        if (*c != ' ' && *c != '\t') *o++ = *c;
    *o = '\0';
    sb_status st = parse(key, v, buf, p);
    sb_free(buf);
    return st;
}

/* monotone_constraints: -1, 0 or 1 per feature, comma-separated, optionally in
 * () or [] (XGBoost's "(1,0,-1)", LightGBM's 1,0,-1, a Python list's text). */
static sb_status parse_monotone_list(const char *key, const char *v, char *buf, gbdt_params *p) {
    char *s = buf;
    size_t len = strlen(s);
    if (len >= 2 && ((s[0] == '(' && s[len - 1] == ')') || (s[0] == '[' && s[len - 1] == ']'))) {
        s[len - 1] = '\0';
        s++;
    }
    p->nmono = 0;
    p->mono_any = 0;
    if (!*s) return SB_OK; /* an empty list: no constraint */
    for (;;) {
        char *e;
        errno = 0;
        long x = strtol(s, &e, 10);
        if (e == s || (*e && *e != ',') || errno || x < -1 || x > 1)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be a comma-separated list of -1, 0 and 1, "
                           "one per feature", key, v);
        if (p->nmono == SB_GBDT_MAX_CONS)
            return sb_fail(SB_ERR_LIMIT, "parameter %s: more than %d entries", key, (int)SB_GBDT_MAX_CONS);
        p->mono[p->nmono++] = (int8_t)x;
        p->mono_any |= x != 0;
        if (!*e) break;
        s = e + 1;
    }
    return SB_OK;
}

/* interaction_constraints: sets of feature indices, LightGBM's
 * "[0,1,2],[2,3]" or XGBoost's "[[0,1,2],[2,3]]"; an empty text: none. */
static sb_status parse_sets_list(const char *key, const char *v, char *buf, gbdt_params *p) {
    char *s = buf;
    size_t len = strlen(s);
    if (len >= 4 && s[0] == '[' && s[1] == '[' && s[len - 1] == ']' && s[len - 2] == ']') {
        s[len - 1] = '\0';
        s++;
    }
    p->nsets = 0;
    p->set_start[0] = 0;
    int32_t nfeat = 0;
    while (*s) {
        if (*s != '[' || p->nsets == SB_GBDT_MAX_SETS) {
            if (p->nsets == SB_GBDT_MAX_SETS)
                return sb_fail(SB_ERR_LIMIT, "parameter %s: more than %d sets", key, (int)SB_GBDT_MAX_SETS);
            break;
        }
        s++;
        int32_t in_set = 0;
        while (*s && *s != ']') {
            char *e;
            errno = 0;
            long x = strtol(s, &e, 10);
            if (e == s || errno || x < 0 || x > INT32_MAX || (*e != ',' && *e != ']')) {
                s = NULL;
                break;
            }
            if (nfeat == SB_GBDT_MAX_CONS)
                return sb_fail(SB_ERR_LIMIT, "parameter %s: more than %d entries", key, (int)SB_GBDT_MAX_CONS);
            p->set_feat[nfeat++] = (int32_t)x;
            in_set++;
            s = *e == ',' ? e + 1 : e;
        }
        if (!s || *s != ']' || in_set == 0) {
            p->nsets = 0;
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be sets of feature indices, as "
                           "[0,1,2],[2,3] (each set non-empty)", key, v);
        }
        s++;
        p->set_start[++p->nsets] = nfeat;
        if (*s == ',') s++;
        else if (*s) break;
    }
    if (*s) {
        p->nsets = 0;
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be sets of feature indices, as "
                       "[0,1,2],[2,3] (each set non-empty)", key, v);
    }
    return SB_OK;
}

/* label_gain: comma-separated non-negative floats, at most 64. */
static sb_status parse_gains(const char *key, const char *v, gbdt_params *p) {
    int32_t n = 0;
    const char *s = v;
    for (;;) {
        char buf[64];
        size_t len = strcspn(s, ",");
        if (len == 0 || len >= sizeof buf || n == 64)
            return sb_fail(n == 64 ? SB_ERR_LIMIT : SB_ERR_INVALID_ARGUMENT,
                           "parameter %s='%s' must be 1 to 64 comma-separated numbers >= 0", key, v);
        memcpy(buf, s, len);
        buf[len] = '\0';
        sb_status st = parse_float(key, buf, 0.0f, 1e30f, 0, &p->label_gain[n]);
        if (st != SB_OK) return st;
        n++;
        if (!s[len]) break;
        s += len + 1;
    }
    p->ngain = n;
    return SB_OK;
}

/* One metric name (samebits' or LightGBM's alias, ndcg@k and map@k with their
 * k) into *m and *at (0: no k given); an unknown name is a named error. */
static sb_status parse_metric_item(const char *key, const char *v, int32_t *m, int32_t *at) {
    static const struct { const char *name; int32_t m; } k_alias[] = {
        {"l2_root", SB_METRIC_RMSE}, {"root_mean_squared_error", SB_METRIC_RMSE},
        {"mse", SB_METRIC_L2}, {"mean_squared_error", SB_METRIC_L2}, {"square", SB_METRIC_L2},
        {"regression_l2", SB_METRIC_L2}, {"regression", SB_METRIC_L2},
        {"l1", SB_METRIC_MAE}, {"mean_absolute_error", SB_METRIC_MAE}, {"binary_logloss", SB_METRIC_LOGLOSS},
        {"binary_error", SB_METRIC_ERROR}, {"multi_logloss", SB_METRIC_MLOGLOSS}, {"multi_error", SB_METRIC_MERROR},
        {"regression_l1", SB_METRIC_MAE}};
    *m = -1;
    *at = 0;
    for (int32_t k = 0; k < N_METRICS; k++)
        if (!strcmp(v, k_metrics[k])) *m = k;
    for (size_t k = 0; k < sizeof k_alias / sizeof k_alias[0]; k++)
        if (!strcmp(v, k_alias[k].name)) *m = k_alias[k].m;
    if (!strncmp(v, "ndcg@", 5) || !strncmp(v, "map@", 4)) { /* the k of ndcg@k, map@k */
        int64_t i;
        sb_status st = parse_int(key, strchr(v, '@') + 1, 1, 1000000, &i);
        if (st != SB_OK) return st;
        *m = v[0] == 'n' ? SB_METRIC_NDCG : SB_METRIC_MAP;
        *at = (int32_t)i;
    }
    if (*m < 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "metric '%s' is not supported; metrics: l2 (mse), rmse (l2_root), mae (l1), logloss "
                       "(binary_logloss), error, auc, mlogloss (multi_logloss), merror, ndcg@k, map@k, huber, quantile, poisson, "
                       "gamma, tweedie", v);
    return SB_OK;
}

/* metric: one name or a comma list of them, in order (the first decides early
 * stopping); at most SB_GBDT_MAX_METRICS, none empty. */
static sb_status parse_metrics(const char *key, const char *v, gbdt_params *p) {
    char item[64];
    p->ngiven = 0;
    for (const char *s = v;; s += strcspn(s, ",") + 1) {
        size_t len = strcspn(s, ",");
        if (len == 0 || len >= sizeof item)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be metric names separated by commas", key, v);
        if (p->ngiven == SB_GBDT_MAX_METRICS)
            return sb_fail(SB_ERR_LIMIT, "parameter %s='%s' names more than %d metrics", key, v, SB_GBDT_MAX_METRICS);
        memcpy(item, s, len);
        item[len] = '\0';
        sb_status st = parse_metric_item(key, item, &p->metrics[p->ngiven], &p->given_at[p->ngiven]);
        if (st != SB_OK) return st;
        p->ngiven++;
        if (!s[len]) return SB_OK;
    }
}

/* eval_at: one k or a comma list of them (LightGBM's ndcg_eval_at=1,3,5). */
static sb_status parse_eval_at(const char *key, const char *v, gbdt_params *p) {
    char item[32];
    p->neval_at = 0;
    for (const char *s = v;; s += strcspn(s, ",") + 1) {
        size_t len = strcspn(s, ",");
        int64_t i;
        if (len == 0 || len >= sizeof item)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be integers separated by commas", key, v);
        if (p->neval_at == SB_GBDT_MAX_METRICS)
            return sb_fail(SB_ERR_LIMIT, "parameter %s='%s' has more than %d positions", key, v, SB_GBDT_MAX_METRICS);
        memcpy(item, s, len);
        item[len] = '\0';
        sb_status st = parse_int(key, item, 1, 1000000, &i);
        if (st != SB_OK) return st;
        p->eval_at[p->neval_at++] = (int32_t)i;
        if (!s[len]) return SB_OK;
    }
}

/* Append metric m at k to the resolved list (an exact repeat is dropped). */
static sb_status add_metric(gbdt_params *p, int32_t m, int32_t at) {
    for (int32_t j = 0; j < p->nmetrics; j++)
        if (p->metrics[j] == m && p->metrics_at[j] == at) return SB_OK;
    if (p->nmetrics == SB_GBDT_MAX_METRICS)
        return sb_fail(SB_ERR_LIMIT, "metric and eval_at name more than %d metrics together", SB_GBDT_MAX_METRICS);
    p->metrics[p->nmetrics] = m;
    p->metrics_at[p->nmetrics++] = at;
    return SB_OK;
}

/* The metrics reported, resolved after every key is applied: the given list
 * (or the objective's default), each ranking metric without its own k taken at
 * every eval_at position (10 when there is none). An eval_at that no metric
 * takes and that differs from the ks the metrics name is refused: it would
 * otherwise be dropped without a word. Each metric must fit the objective. */
static sb_status resolve_metrics(gbdt_params *p) {
    int32_t given[SB_GBDT_MAX_METRICS], ngiven = p->ngiven, used_eval_at = 0;
    memcpy(given, p->metrics, sizeof given);
    if (ngiven == 0) {
        given[0] = p->objective >= SB_OBJ_HUBER && p->objective <= SB_OBJ_TWEEDIE
                       ? SB_METRIC_HUBER + (p->objective - SB_OBJ_HUBER) /* the objective's own */
                 : p->objective == SB_OBJ_REGRESSION ? SB_METRIC_RMSE
                 : p->objective == SB_OBJ_BINARY ? SB_METRIC_LOGLOSS
                 : sb_gbdt_is_ranking(p->objective) ? SB_METRIC_NDCG : SB_METRIC_MLOGLOSS;
        p->given_at[0] = 0;
        ngiven = 1;
    }
    p->nmetrics = 0;
    for (int32_t g = 0; g < ngiven; g++) {
        const int32_t m = given[g];
        int ok = is_regression(p->objective) ? (m <= SB_METRIC_MAE || m >= SB_METRIC_L2)
               : p->objective == SB_OBJ_BINARY ? (m >= SB_METRIC_LOGLOSS && m <= SB_METRIC_AUC)
               : sb_gbdt_is_ranking(p->objective) ? (m == SB_METRIC_NDCG || m == SB_METRIC_MAP)
                                               : (m == SB_METRIC_MLOGLOSS || m == SB_METRIC_MERROR);
        if (!ok)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "metric '%s' does not fit objective '%s'", sb_metric_name(m),
                           sb_objective_name(p->objective));
        sb_status st = SB_OK;
        if (m != SB_METRIC_NDCG && m != SB_METRIC_MAP) st = add_metric(p, m, 0);
        else if (p->given_at[g] > 0) st = add_metric(p, m, p->given_at[g]);
        else if (p->neval_at == 0) st = add_metric(p, m, 10);
        else {
            used_eval_at = 1;
            for (int32_t e = 0; e < p->neval_at && st == SB_OK; e++) st = add_metric(p, m, p->eval_at[e]);
        }
        if (st != SB_OK) return st;
    }
    if (sb_gbdt_is_ranking(p->objective) && p->neval_at > 0 && !used_eval_at) {
        for (int32_t e = 0; e < p->neval_at; e++) {
            int named = 0;
            for (int32_t j = 0; j < p->nmetrics; j++) named |= p->metrics_at[j] == p->eval_at[e];
            if (!named)
                return sb_fail(SB_ERR_INVALID_ARGUMENT, "eval_at=%d is taken by no metric: every ranking metric names "
                               "its own k (%s@%d); give the k in the metric (ndcg@%d) or leave eval_at out",
                               (int)p->eval_at[e], sb_metric_name(p->metrics[0]), (int)p->metrics_at[0],
                               (int)p->eval_at[e]);
        }
    }
    p->metric = p->metrics[0];
    if (p->metrics_at[0] > 0) p->metric_at = p->metrics_at[0];
    else if (p->neval_at > 0) p->metric_at = p->eval_at[0]; /* as before: the model text of a non-ranking model omits it */
    return SB_OK;
}

static int is(const char *key, const char *a, const char *b, const char *c, const char *d) {
    return strcmp(key, a) == 0 || (b && strcmp(key, b) == 0) || (c && strcmp(key, c) == 0) ||
           (d && strcmp(key, d) == 0);
}

/* Apply one key=value to p. */
static sb_status apply(gbdt_params *p, const char *key, const char *v, int *growth_set, int *leaves_set) {
    int64_t i;
    sb_status st = SB_OK;
    if (is(key, "objective", "loss", NULL, NULL)) {
        if (!strcmp(v, "regression") || !strcmp(v, "squared_error") || !strcmp(v, "reg:squarederror") || !strcmp(v, "l2"))
            p->objective = SB_OBJ_REGRESSION;
        else if (!strcmp(v, "binary") || !strcmp(v, "binary:logistic") || !strcmp(v, "log_loss"))
            p->objective = SB_OBJ_BINARY;
        else if (!strcmp(v, "multiclass") || !strcmp(v, "multi:softmax") || !strcmp(v, "multi:softprob") || !strcmp(v, "softmax"))
            p->objective = SB_OBJ_MULTICLASS;
        else if (!strcmp(v, "lambdarank") || !strcmp(v, "rank:ndcg"))
            p->objective = SB_OBJ_LAMBDARANK;
        else if (!strcmp(v, "rank_pairwise") || !strcmp(v, "rank:pairwise") || !strcmp(v, "pairwise"))
            p->objective = SB_OBJ_RANK_PAIRWISE;
        else if (!strcmp(v, "huber") || !strcmp(v, "reg:pseudohubererror"))
            p->objective = SB_OBJ_HUBER;
        else if (!strcmp(v, "quantile") || !strcmp(v, "reg:quantileerror"))
            p->objective = SB_OBJ_QUANTILE;
        else if (!strcmp(v, "poisson") || !strcmp(v, "count:poisson"))
            p->objective = SB_OBJ_POISSON;
        else if (!strcmp(v, "gamma") || !strcmp(v, "reg:gamma"))
            p->objective = SB_OBJ_GAMMA;
        else if (!strcmp(v, "tweedie") || !strcmp(v, "reg:tweedie"))
            p->objective = SB_OBJ_TWEEDIE;
        else
            return sb_fail(SB_ERR_INVALID_ARGUMENT,
                           "objective '%s' is not supported; objectives: regression, binary, multiclass, lambdarank, "
                           "rank_pairwise, huber, quantile, poisson, gamma, tweedie", v);
    } else if (is(key, "num_class", "num_classes", NULL, NULL)) {
        if ((st = parse_int(key, v, 3, 1024, &i)) == SB_OK) p->num_class = (int32_t)i;
    } else if (is(key, "n_estimators", "num_iterations", "num_boost_round", "num_trees")) {
        if ((st = parse_int(key, v, 1, 1000000, &i)) == SB_OK) p->n_estimators = (int32_t)i;
    } else if (is(key, "learning_rate", "eta", "shrinkage_rate", NULL)) {
        st = parse_float(key, v, 0.0f, 1000.0f, 1, &p->learning_rate);
    } else if (is(key, "num_leaves", "max_leaves", "max_leaf_nodes", NULL)) {
        if ((st = parse_int(key, v, 2, 65536, &i)) == SB_OK) p->num_leaves = (int32_t)i;
        *leaves_set = 1;
    } else if (is(key, "max_depth", NULL, NULL, NULL)) {
        if ((st = parse_int(key, v, -1, 64, &i)) == SB_OK) p->max_depth = (int32_t)(i == 0 ? -1 : i);
    } else if (is(key, "growth", "grow_policy", "tree_growth", NULL)) {
        if (!strcmp(v, "depthwise")) p->depthwise = 1;
        else if (!strcmp(v, "leafwise") || !strcmp(v, "lossguide")) p->depthwise = 0;
        else return sb_fail(SB_ERR_INVALID_ARGUMENT, "growth '%s' is not supported; use depthwise or leafwise", v);
        *growth_set = 1;
    } else if (is(key, "max_bin", "max_bins", NULL, NULL)) {
        if ((st = parse_int(key, v, 2, 255, &i)) == SB_OK) p->max_bin = (int32_t)i;
    } else if (is(key, "min_samples_leaf", "min_data_in_leaf", "min_child_samples", NULL)) {
        if ((st = parse_int(key, v, 1, INT64_C(1) << 40, &i)) == SB_OK) p->min_samples_leaf = i;
    } else if (is(key, "min_child_weight", "min_sum_hessian_in_leaf", NULL, NULL)) {
        st = parse_float(key, v, 0.0f, 1e30f, 0, &p->min_child_weight);
    } else if (is(key, "reg_lambda", "lambda_l2", "lambda", "l2_regularization")) {
        st = parse_float(key, v, 0.0f, 1e30f, 0, &p->reg_lambda);
    } else if (is(key, "reg_alpha", "lambda_l1", "l1_regularization", NULL)) {
        st = parse_float(key, v, 0.0f, 1e30f, 0, &p->reg_alpha);
    } else if (is(key, "alpha", NULL, NULL, NULL)) {
        st = parse_float(key, v, 0.0f, 1e30f, 1, &p->alpha);
    } else if (is(key, "tweedie_variance_power", NULL, NULL, NULL)) {
        st = parse_float(key, v, 1.0f, 2.0f, 1, &p->tweedie_power);
        if (st == SB_OK && !(p->tweedie_power > 1.0f && p->tweedie_power < 2.0f))
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be in (1, 2)", key, v);
    } else if (is(key, "poisson_max_delta_step", NULL, NULL, NULL)) {
        st = parse_float(key, v, 0.0f, 80.0f, 1, &p->poisson_max_delta_step);
    } else if (is(key, "min_split_gain", "min_gain_to_split", "gamma", NULL)) {
        st = parse_float(key, v, 0.0f, 1e30f, 0, &p->min_split_gain);
    } else if (is(key, "subsample", "bagging_fraction", NULL, NULL)) {
        st = parse_float(key, v, 0.0f, 1.0f, 1, &p->subsample);
    } else if (is(key, "bagging_freq", "subsample_freq", NULL, NULL)) {
        if ((st = parse_int(key, v, 1, 1000000, &i)) == SB_OK) p->bagging_freq = (int32_t)i;
    } else if (is(key, "colsample", "colsample_bytree", "feature_fraction", NULL)) {
        st = parse_float(key, v, 0.0f, 1.0f, 1, &p->colsample);
    } else if (is(key, "monotone_constraints", "monotone_constraint", "mc", NULL)) {
        st = parse_squeezed(key, v, p, parse_monotone_list);
    } else if (is(key, "monotone_constraints_method", "monotone_constraining_method", "mc_method", NULL)) {
        if (strcmp(v, "basic") != 0)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' is not supported: samebits implements "
                           "monotone constraints by the basic method only", key, v);
    } else if (is(key, "monotone_penalty", "monotone_splits_penalty", "ms_penalty", "mc_penalty")) {
        float pen;
        if ((st = parse_float(key, v, 0.0f, 1e30f, 0, &pen)) == SB_OK && pen != 0.0f)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' is not supported: only 0 (no penalty)", key, v);
    } else if (is(key, "interaction_constraints", NULL, NULL, NULL)) {
        st = parse_squeezed(key, v, p, parse_sets_list);
    } else if (is(key, "colsample_bynode", "feature_fraction_bynode", "sub_feature_bynode", NULL)) {
        st = parse_float(key, v, 0.0f, 1.0f, 1, &p->bynode);
    } else if (is(key, "boosting", "boosting_type", "boost", "booster")) {
        if (!strcmp(v, "gbdt") || !strcmp(v, "gbrt") || !strcmp(v, "gbtree")) p->dart = 0;
        else if (!strcmp(v, "dart")) p->dart = 1;
        else
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' is not supported: gbdt or dart (LightGBM's rf "
                           "is samebits' random forest, --model random_forest; goss is not here)", key, v);
    } else if (is(key, "drop_rate", "rate_drop", NULL, NULL)) {
        st = parse_float(key, v, 0.0f, 1.0f, 0, &p->drop_rate);
    } else if (is(key, "max_drop", NULL, NULL, NULL)) {
        if ((st = parse_int(key, v, -1, 1000000, &i)) == SB_OK) p->max_drop = (int32_t)i;
    } else if (is(key, "skip_drop", NULL, NULL, NULL)) {
        st = parse_float(key, v, 0.0f, 1.0f, 0, &p->skip_drop);
    } else if (is(key, "uniform_drop", "xgboost_dart_mode", NULL, NULL)) {
        int32_t *dst = !strcmp(key, "uniform_drop") ? &p->uniform_drop : &p->xgboost_dart_mode;
        if (!strcmp(v, "true") || !strcmp(v, "1")) *dst = 1;
        else if (!strcmp(v, "false") || !strcmp(v, "0")) *dst = 0;
        else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be true or false", key, v);
    } else if (is(key, "drop_seed", NULL, NULL, NULL)) {
        if ((st = parse_int(key, v, 0, INT64_MAX, &i)) == SB_OK) p->drop_seed = (uint64_t)i;
        p->has_drop_seed = 1;
    } else if (is(key, "seed", "random_state", NULL, NULL)) {
        if ((st = parse_int(key, v, 0, INT64_MAX, &i)) == SB_OK) p->seed = (uint64_t)i;
    } else if (is(key, "base_score", "init_score", NULL, NULL)) {
        st = parse_float(key, v, -1e30f, 1e30f, 0, &p->base_score);
        p->has_base_score = 1;
    } else if (is(key, "boost_from_average", NULL, NULL, NULL)) {
        if (!strcmp(v, "true") || !strcmp(v, "1")) p->no_boost_from_average = 0;
        else if (!strcmp(v, "false") || !strcmp(v, "0")) p->no_boost_from_average = 1;
        else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be true or false", key, v);
    } else if (is(key, "early_stopping_rounds", "early_stopping_round", "n_iter_no_change", NULL)) {
        if ((st = parse_int(key, v, 0, 1000000, &i)) == SB_OK) p->early_stopping_rounds = (int32_t)i;
    } else if (is(key, "metric", "eval_metric", NULL, NULL)) {
        st = parse_metrics(key, v, p);
    } else if (is(key, "eval_at", "ndcg_eval_at", "ndcg_at", "map_eval_at")) {
        st = parse_eval_at(key, v, p);
    } else if (is(key, "train_metric", "is_training_metric", "training_metric", "is_provide_training_metric")) {
        if (!strcmp(v, "true") || !strcmp(v, "1")) p->train_metric = 1;
        else if (!strcmp(v, "false") || !strcmp(v, "0")) p->train_metric = 0;
        else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be true or false", key, v);
    } else if (is(key, "force_row_wise", "force_col_wise", NULL, NULL)) {
        int32_t *flag = !strcmp(key, "force_row_wise") ? &p->force_row_wise : &p->force_col_wise;
        if (!strcmp(v, "true") || !strcmp(v, "1")) *flag = 1;
        else if (!strcmp(v, "false") || !strcmp(v, "0")) *flag = 0;
        else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be true or false", key, v);
    } else if (is(key, "progress", NULL, NULL, NULL)) {
        if (!strcmp(v, "true") || !strcmp(v, "1")) p->progress = 1;
        else if (!strcmp(v, "false") || !strcmp(v, "0")) p->progress = 0;
        else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be true or false", key, v);
    } else if (is(key, "scale_pos_weight", NULL, NULL, NULL)) {
        st = parse_float(key, v, 0.0f, 1e30f, 1, &p->scale_pos_weight);
    } else if (is(key, "is_unbalance", "unbalance", "unbalanced_sets", NULL)) {
        if (!strcmp(v, "true") || !strcmp(v, "1")) p->is_unbalance = 1;
        else if (!strcmp(v, "false") || !strcmp(v, "0")) p->is_unbalance = 0;
        else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be true or false", key, v);
    } else if (is(key, "categorical_feature", "cat_feature", "categorical_column", "cat_column")) {
        if (strlen(v) >= sizeof p->cat_spec)
            return sb_fail(SB_ERR_LIMIT, "parameter %s: more than %d bytes", key, (int)sizeof p->cat_spec - 1);
        memcpy(p->cat_spec, v, strlen(v) + 1);
    } else if (is(key, "max_cat_to_onehot", NULL, NULL, NULL)) {
        if ((st = parse_int(key, v, 1, 255, &i)) == SB_OK) p->max_cat_to_onehot = (int32_t)i;
    } else if (is(key, "max_cat_threshold", NULL, NULL, NULL)) {
        if ((st = parse_int(key, v, 1, 255, &i)) == SB_OK) p->max_cat_threshold = (int32_t)i;
    } else if (is(key, "cat_smooth", NULL, NULL, NULL)) {
        st = parse_float(key, v, 0.0f, 1e30f, 0, &p->cat_smooth);
    } else if (is(key, "cat_l2", NULL, NULL, NULL)) {
        st = parse_float(key, v, 0.0f, 1e30f, 0, &p->cat_l2);
    } else if (is(key, "min_data_per_group", NULL, NULL, NULL)) {
        if ((st = parse_int(key, v, 1, INT64_C(1) << 40, &i)) == SB_OK) p->min_data_per_group = i;
    } else if (is(key, "first_metric_only", NULL, NULL, NULL)) {
        if (!strcmp(v, "true") || !strcmp(v, "1")) p->stop_on_any = 0;
        else if (!strcmp(v, "false") || !strcmp(v, "0")) p->stop_on_any = 1;
        else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be true or false", key, v);
    } else if (is(key, "lambdarank_truncation_level", NULL, NULL, NULL)) {
        if ((st = parse_int(key, v, 1, 1000000, &i)) == SB_OK) p->rank_truncation = (int32_t)i;
    } else if (is(key, "lambdarank_norm", NULL, NULL, NULL)) {
        if (!strcmp(v, "true") || !strcmp(v, "1")) p->rank_norm = 1;
        else if (!strcmp(v, "false") || !strcmp(v, "0")) p->rank_norm = 0;
        else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be true or false", key, v);
    } else if (is(key, "sigmoid", NULL, NULL, NULL)) {
        st = parse_float(key, v, 0.0f, 1e6f, 1, &p->rank_sigma);
    } else if (is(key, "label_gain", NULL, NULL, NULL)) {
        st = parse_gains(key, v, p);
    } else if (is(key, "eval_period", "verbose_eval", "log_period", NULL)) {
        if ((st = parse_int(key, v, 0, 1000000, &i)) == SB_OK) p->eval_period = (int32_t)i;
    } else if (is(key, "bin_sample_rows", "bin_construct_sample_cnt", "subsample_for_bin", NULL)) {
        if ((st = parse_int(key, v, 1000, INT64_C(1) << 40, &i)) == SB_OK) p->bin_sample_rows = i;
    } else if (is(key, "numeric_mode", NULL, NULL, NULL)) {
        sb_numeric_mode m;
        if ((st = sb_numeric_mode_parse(v, &m)) == SB_OK) p->numeric_mode = (int32_t)m;
    } else if (is(key, "distributed", NULL, NULL, NULL)) {
        /* data-parallel training (docs/distributed.md); a run setting, not in the model */
        if (!strcmp(v, "mpi")) p->distributed = SB_GBDT_DIST_MPI;
        else if (!strcmp(v, "nccl")) p->distributed = SB_GBDT_DIST_NCCL; /* device=cuda only (gbdt.c, dist_setup) */
        else if (!strcmp(v, "none") || !strcmp(v, "false") || !strcmp(v, "0")) p->distributed = 0;
        else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter distributed='%s': give mpi, nccl (with device=cuda) "
                            "or none", v);
    } else if (is(key, "distributed_rows", NULL, NULL, NULL)) {
        /* split: every rank passes the whole training set and keeps its block;
         * given: every rank passes its own rows (docs/distributed.md) */
        if (!strcmp(v, "split")) p->dist_given = 0;
        else if (!strcmp(v, "given")) p->dist_given = 1;
        else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter distributed_rows='%s': give split or given", v);
    } else if (is(key, "device", "device_type", NULL, NULL)) {
        /* the device layer's one parser: a backend this build lacks is refused
         * here; an absent device when training opens it */
        sb_device_kind k;
        if ((st = sb_device_parse(v, &k)) == SB_OK) p->device = (int32_t)k;
    } else {
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown parameter '%s' for gradient boosting (docs/gbdt.md lists them)", key);
    }
    return st;
}

/* The names apply() takes for one parameter, one group each (keep the two in
 * step): two of one group in a bag are refused by name. */
static const char *const k_alias_groups[] = {
    "objective|loss", "num_class|num_classes", "n_estimators|num_iterations|num_boost_round|num_trees",
    "learning_rate|eta|shrinkage_rate", "num_leaves|max_leaves|max_leaf_nodes", "growth|grow_policy|tree_growth",
    "max_bin|max_bins", "min_samples_leaf|min_data_in_leaf|min_child_samples",
    "min_child_weight|min_sum_hessian_in_leaf", "reg_lambda|lambda_l2|lambda|l2_regularization",
    "reg_alpha|lambda_l1|l1_regularization",
    "min_split_gain|min_gain_to_split|gamma", "subsample|bagging_fraction", "bagging_freq|subsample_freq", "colsample|colsample_bytree|feature_fraction",
    "monotone_constraints|monotone_constraint|mc", "monotone_constraints_method|monotone_constraining_method|mc_method",
    "monotone_penalty|monotone_splits_penalty|ms_penalty|mc_penalty", "interaction_constraints",
    "colsample_bynode|feature_fraction_bynode|sub_feature_bynode", "boosting|boosting_type|boost|booster",
    "drop_rate|rate_drop", "max_drop", "skip_drop", "uniform_drop", "xgboost_dart_mode", "drop_seed",
    "seed|random_state", "base_score|init_score", "boost_from_average", "early_stopping_rounds|early_stopping_round|n_iter_no_change",
    "metric|eval_metric", "eval_at|ndcg_eval_at|ndcg_at|map_eval_at", "train_metric|is_training_metric|training_metric|is_provide_training_metric", "eval_period|verbose_eval|log_period", "first_metric_only", "progress",
    "force_row_wise", "force_col_wise",
    "scale_pos_weight", "is_unbalance|unbalance|unbalanced_sets",
    "categorical_feature|cat_feature|categorical_column|cat_column", "max_cat_to_onehot", "max_cat_threshold",
    "cat_smooth", "cat_l2", "min_data_per_group",
    "bin_sample_rows|bin_construct_sample_cnt|subsample_for_bin", "device|device_type", "distributed", "distributed_rows", NULL};

sb_status sb_gbdt_params_parse(const sb_params *params, gbdt_params *p) {
    memset(p, 0, sizeof *p);
    p->objective = SB_OBJ_REGRESSION;
    p->n_estimators = 100;
    p->learning_rate = 0.1f;
    p->num_leaves = 31;
    p->max_depth = -1;
    p->max_bin = 255;
    p->min_samples_leaf = 20;
    p->min_child_weight = 1e-3f;
    p->reg_lambda = 0.0f;
    p->alpha = 0.9f;
    p->tweedie_power = 1.5f;
    p->poisson_max_delta_step = 0.7f;
    p->subsample = 1.0f;
    p->bagging_freq = 1;
    p->colsample = 1.0f;
    p->bynode = 1.0f;
    p->drop_rate = 0.1f;
    p->max_drop = 50;
    p->skip_drop = 0.5f;
    p->metric = -1;
    p->bin_sample_rows = 200000;
    p->metric_at = 10;
    p->rank_truncation = 30;
    p->rank_norm = 1;
    p->rank_sigma = 1.0f;
    p->ngain = 31; /* 2^i - 1, i = 0..30, as LightGBM */
    for (int32_t g = 0; g < 31; g++) p->label_gain[g] = (float)((UINT32_C(1) << g) - 1u);
    p->scale_pos_weight = 1.0f;
    p->max_cat_to_onehot = 4;
    p->max_cat_threshold = 32;
    p->cat_smooth = 10.0f;
    p->cat_l2 = 10.0f;
    p->min_data_per_group = 100;
    sb_numeric_mode m;
    sb_status st = sb_params_refuse_aliases(params, k_alias_groups, "gradient boosting");
    if (st != SB_OK) return st;
    st = sb_params_resolve_mode(params, SB_FAMILY_GBDT, &m);
    if (st != SB_OK) return st;
    p->numeric_mode = (int32_t)m;
    int growth_set = 0, leaves_set = 0;
    if (params) {
        for (int64_t k = 0;; k++) {
            const char *key, *value;
            if (sb_params_entry(params, k, &key, &value) != SB_OK) break;
            if ((st = apply(p, key, value, &growth_set, &leaves_set)) != SB_OK) return st;
        }
    }
    if (p->depthwise) {
        if (p->max_depth < 0) p->max_depth = 6;
        if (p->max_depth > 15)
            return sb_fail(SB_ERR_LIMIT, "depthwise growth supports max_depth up to 15, got %d", (int)p->max_depth);
        if (!leaves_set) p->num_leaves = 0; /* depth alone limits the tree */
    }
    (void)growth_set;
    if (p->objective != SB_OBJ_MULTICLASS && p->num_class > 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "num_class is only for objective=multiclass");
    if (p->objective == SB_OBJ_QUANTILE && !(p->alpha < 1.0f))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "objective=quantile needs alpha in (0, 1), got %g", (double)p->alpha);
    if ((p->scale_pos_weight != 1.0f || p->is_unbalance) && p->objective != SB_OBJ_BINARY)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s is only for objective=binary (got objective=%s)",
                       p->is_unbalance ? "is_unbalance" : "scale_pos_weight", sb_objective_name(p->objective));
    if (p->is_unbalance && p->scale_pos_weight != 1.0f)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "is_unbalance=true and scale_pos_weight=%g: give one of them "
                       "(LightGBM refuses both too)", (double)p->scale_pos_weight);
    if (p->force_row_wise && p->force_col_wise)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "force_row_wise=true and force_col_wise=true: give one of them "
                       "(LightGBM refuses both too)");
    if ((p->force_row_wise || p->force_col_wise) && p->device != SB_GBDT_DEVICE_CPU)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s=true chooses the CPU histograms' layout; device=%s builds its "
                       "histograms on the device: leave it out", p->force_row_wise ? "force_row_wise" : "force_col_wise",
                       sb_device_kind_name((sb_device_kind)p->device));
    if ((st = resolve_metrics(p)) != SB_OK) return st;
    if (p->dart) {
        /* what DART cannot do here, refused by name before any data is read */
        if (p->early_stopping_rounds > 0)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "boosting=dart does not take early_stopping_rounds: a later "
                           "iteration rescales earlier trees, so no prefix of the model is the model at its best "
                           "iteration (LightGBM refuses it in dart mode too)");
        if (p->objective == SB_OBJ_QUANTILE)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "boosting=dart does not take objective=quantile (its leaf renewal "
                           "sets leaf values from the learning rate, which dart's normalization replaces)");
    }
    return SB_OK;
}

static int line_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int i32_cmp(const void *a, const void *b) {
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

sb_status sb_gbdt_resolve_categorical(gbdt_params *p, int32_t nf, char *const *names) {
    p->ncat = 0;
    const char *s = p->cat_spec;
    while (*s == ' ') s++;
    if (!*s) return SB_OK;
    const int by_name = !strncmp(s, "name:", 5);
    if (by_name) s += 5;
    char item[512];
    for (;;) {
        size_t len = strcspn(s, ",");
        while (len > 0 && s[len - 1] == ' ') len--;
        if (len == 0 || len >= sizeof item)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter categorical_feature='%s' must be feature indices "
                           "(0,3) or names (name:a,b), comma-separated", p->cat_spec);
        memcpy(item, s, len);
        item[len] = '\0';
        int32_t f = -1;
        if (by_name) {
            for (int32_t k = 0; k < nf && f < 0; k++)
                if (names && names[k] && !strcmp(names[k], item)) f = k;
            if (f < 0)
                return sb_fail(SB_ERR_INVALID_ARGUMENT, "categorical_feature names '%s', which is not a feature of the "
                               "training data%s", item, names ? "" : " (its features have no names)");
        } else {
            char *e;
            errno = 0;
            long x = strtol(item, &e, 10);
            if (*e || errno || x < 0 || x >= nf)
                return sb_fail(SB_ERR_INVALID_ARGUMENT, "categorical_feature '%s': a feature index in 0..%d is needed "
                               "(the training data has %d features; names need the name: prefix)", item, (int)nf - 1,
                               (int)nf);
            f = (int32_t)x;
        }
        if (p->ncat == SB_GBDT_MAX_CONS)
            return sb_fail(SB_ERR_LIMIT, "categorical_feature: more than %d features", (int)SB_GBDT_MAX_CONS);
        p->catf[p->ncat++] = f;
        s += strcspn(s, ",");
        if (!*s) break;
        s++;
        while (*s == ' ') s++;
    }
    qsort(p->catf, (size_t)p->ncat, sizeof(int32_t), i32_cmp);
    int32_t k = 0;
    for (int32_t i = 0; i < p->ncat; i++) /* a feature named twice is one categorical feature */
        if (k == 0 || p->catf[k - 1] != p->catf[i]) p->catf[k++] = p->catf[i];
    p->ncat = k;
    for (int32_t i = 0; i < p->ncat; i++)
        if (p->nmono > p->catf[i] && p->mono[p->catf[i]] != 0)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "feature %d is categorical and has a monotone constraint: a "
                           "category set has no order to keep (LightGBM refuses it too)", (int)p->catf[i]);
    return SB_OK;
}

/* buf := the nl lines (each without its newline) sorted by line_cmp, each
 * ended by a newline; a named internal error when they pass cap bytes. */
static sb_status join_sorted(char **lines, int nl, char *buf, size_t cap) {
    qsort(lines, (size_t)nl, sizeof(char *), line_cmp);
    size_t o = 0;
    for (int k = 0; k < nl; k++) {
        size_t l = strlen(lines[k]);
        if (o + l + 2 > cap) return sb_fail(SB_ERR_INTERNAL, "parameter text too long");
        memcpy(buf + o, lines[k], l);
        buf[o + l] = '\n';
        o += l + 1;
    }
    buf[o] = '\0';
    return SB_OK;
}

/* The ranking keys added to the text of a ranking model (other models' text is
 * unchanged), and every line sorted again by key. */
static sb_status ranking_text(const gbdt_params *p, char *buf, size_t cap) {
    char extra[1536], metric[32] = "", at[32] = "";
    if (p->early_stopping_rounds > 0) /* the metric's k decides the model only through early stopping */
        snprintf(at, sizeof at, "eval_at=%d\n", (int)p->metric_at);
    int n = snprintf(extra, sizeof extra, "%slambdarank_norm=%s\nlambdarank_truncation_level=%d\nsigmoid=%.9g\nlabel_gain=",
                     at, p->rank_norm ? "true" : "false", (int)p->rank_truncation, (double)p->rank_sigma);
    for (int32_t g = 0; g < p->ngain && n > 0 && n < (int)sizeof extra; g++)
        n += snprintf(extra + n, sizeof extra - (size_t)n, "%s%.9g", g ? "," : "", (double)p->label_gain[g]);
    if (n <= 0 || n + 2 >= (int)sizeof extra) return sb_fail(SB_ERR_INTERNAL, "parameter text too long");
    extra[n++] = '\n';
    extra[n] = '\0';
    if (p->early_stopping_rounds > 0)
        snprintf(metric, sizeof metric, "metric=%s@%d\n", sb_metric_name(p->metric), (int)p->metric_at);
    /* split both texts into lines, replacing the metric line */
    char all[4096], *lines[64];
    int nl = 0;
    size_t len = strlen(buf);
    if (len + strlen(extra) + strlen(metric) >= sizeof all) return sb_fail(SB_ERR_INTERNAL, "parameter text too long");
    memcpy(all, buf, len);
    memcpy(all + len, extra, strlen(extra) + 1);
    for (char *s = all; *s && nl < 63;) {
        char *e = strchr(s, '\n');
        *e = '\0';
        if (strncmp(s, "metric=", 7) != 0) lines[nl++] = s;
        s = e + 1;
    }
    if (metric[0]) {
        metric[strlen(metric) - 1] = '\0';
        lines[nl++] = metric;
    }
    return join_sorted(lines, nl, buf, cap);
}

/* The lines of extra ("key=value\n" each) added to the parameter text in buf
 * and every line sorted again by key. */
static sb_status add_lines(char *buf, size_t cap, const char *extra) {
    size_t len = strlen(buf), el = strlen(extra);
    int nl = 0;
    for (size_t i = 0; i < len; i++) nl += buf[i] == '\n';
    for (size_t i = 0; i < el; i++) nl += extra[i] == '\n';
    char *all = sb_malloc(len + el + 1);
    char **lines = sb_malloc(sizeof(char *) * (size_t)(nl ? nl : 1));
    if (!all || !lines) {
        sb_free(all);
        sb_free(lines);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "out of memory");
    }
    memcpy(all, buf, len);
    memcpy(all + len, extra, el + 1);
    nl = 0;
    for (char *s = all; *s;) {
        char *e = strchr(s, '\n');
        *e = '\0';
        lines[nl++] = s;
        s = e + 1;
    }
    sb_status st = join_sorted(lines, nl, buf, cap);
    sb_free(lines);
    sb_free(all);
    return st;
}

/* The per-node rules' lines ("key=value\n" each; written only when set, so
 * every other model's text is unchanged), as a new string (NULL: out of memory). */
static char *cons_text(const gbdt_params *p) {
    size_t cap = 320 + 4 * (size_t)p->nmono + 12 * (size_t)p->set_start[p->nsets] + 2 * (size_t)p->nsets + 64 +
                 12 * (size_t)p->ncat + 160;
    char *t = sb_malloc(cap);
    if (!t) return NULL;
    size_t o = 0;
    t[0] = '\0';
    if (p->nsets > 0) {
        o += (size_t)snprintf(t + o, cap - o, "interaction_constraints=");
        for (int32_t k = 0; k < p->nsets; k++) {
            o += (size_t)snprintf(t + o, cap - o, "%s[", k ? "," : "");
            for (int32_t i = p->set_start[k]; i < p->set_start[k + 1]; i++)
                o += (size_t)snprintf(t + o, cap - o, "%s%d", i > p->set_start[k] ? "," : "", (int)p->set_feat[i]);
            o += (size_t)snprintf(t + o, cap - o, "]");
        }
        o += (size_t)snprintf(t + o, cap - o, "\n");
    }
    if (p->mono_any) {
        o += (size_t)snprintf(t + o, cap - o, "monotone_constraints=");
        for (int32_t i = 0; i < p->nmono; i++) o += (size_t)snprintf(t + o, cap - o, "%s%d", i ? "," : "", (int)p->mono[i]);
        o += (size_t)snprintf(t + o, cap - o, "\n");
    }
    if (p->bynode < 1.0f) o += (size_t)snprintf(t + o, cap - o, "colsample_bynode=%.9g\n", (double)p->bynode);
    if (p->ncat > 0) {
        o += (size_t)snprintf(t + o, cap - o, "categorical_feature=");
        for (int32_t i = 0; i < p->ncat; i++) o += (size_t)snprintf(t + o, cap - o, "%s%d", i ? "," : "", (int)p->catf[i]);
        o += (size_t)snprintf(t + o, cap - o, "\ncat_l2=%.9g\ncat_smooth=%.9g\nmax_cat_threshold=%d\nmax_cat_to_onehot=%d\n"
                              "min_data_per_group=%lld\n", (double)p->cat_l2, (double)p->cat_smooth,
                              (int)p->max_cat_threshold, (int)p->max_cat_to_onehot, (long long)p->min_data_per_group);
    }
    if (p->dart) {
        o += (size_t)snprintf(t + o, cap - o, "boosting=dart\ndrop_rate=%.9g\nmax_drop=%d\nskip_drop=%.9g\n"
                              "uniform_drop=%s\nxgboost_dart_mode=%s\n", (double)p->drop_rate, (int)p->max_drop,
                              (double)p->skip_drop, p->uniform_drop ? "true" : "false",
                              p->xgboost_dart_mode ? "true" : "false");
        if (p->has_drop_seed) snprintf(t + o, cap - o, "drop_seed=%llu\n", (unsigned long long)p->drop_seed);
    }
    return t;
}

sb_status sb_gbdt_params_text(const gbdt_params *p, char **out) {
    char buf[4096], base[32] = "auto";
    if (p->has_base_score) snprintf(base, sizeof base, "%.9g", (double)p->base_score);
    else if (p->no_boost_from_average) snprintf(base, sizeof base, "0"); /* the same model as base_score=0 */
    /* Keys in sorted order; floats with 9 significant digits (round-trip exact). */
    /* The model's parameters are those that decide its trees. The metric and
     * early_stopping_rounds decide them only when early stopping is on (the
     * metric then chose the tree count); otherwise they belong to the run, as
     * eval_period, train_metric, progress, device and distributed do, and are not written:
     * two fits that differ only in what they log are one model, one digest. */
    char stop[96] = "";
    if (p->early_stopping_rounds > 0)
        snprintf(stop, sizeof stop, "early_stopping_rounds=%d\n", (int)p->early_stopping_rounds);
    char metric[48] = "";
    if (p->early_stopping_rounds > 0) snprintf(metric, sizeof metric, "metric=%s\n", sb_metric_name(p->metric));
    int n = snprintf(buf, sizeof buf,
                     "base_score=%s\nbin_sample_rows=%lld\ncolsample=%.9g\n%s"
                     "growth=%s\nlearning_rate=%.9g\nmax_bin=%d\nmax_depth=%d\n%s"
                     "min_child_weight=%.9g\nmin_samples_leaf=%lld\nmin_split_gain=%.9g\n"
                     "n_estimators=%d\nnum_class=%d\nnum_leaves=%d\nnumeric_mode=%s\nobjective=%s\n"
                     "reg_lambda=%.9g\nseed=%llu\nsubsample=%.9g\n",
                     base, (long long)p->bin_sample_rows, (double)p->colsample,
                     stop, p->depthwise ? "depthwise" : "leafwise",
                     (double)p->learning_rate, (int)p->max_bin, (int)p->max_depth, metric,
                     (double)p->min_child_weight, (long long)p->min_samples_leaf, (double)p->min_split_gain,
                     (int)p->n_estimators, (int)p->num_class, (int)p->num_leaves,
                     sb_numeric_mode_name((sb_numeric_mode)p->numeric_mode), sb_objective_name(p->objective),
                     (double)p->reg_lambda, (unsigned long long)p->seed, (double)p->subsample);
    if (n < 0 || n >= (int)sizeof buf) return sb_fail(SB_ERR_INTERNAL, "parameter text too long");
    if (p->bagging_freq > 1 && p->subsample < 1.0f) {
        /* only a bag kept for several iterations is written (first in key
         * order): every other model's text is as it was before the key */
        char freq[32];
        int fl = snprintf(freq, sizeof freq, "bagging_freq=%d\n", (int)p->bagging_freq);
        if (n + fl >= (int)sizeof buf) return sb_fail(SB_ERR_INTERNAL, "parameter text too long");
        memmove(buf + fl, buf, (size_t)n + 1);
        memcpy(buf, freq, (size_t)fl);
    }
    if (sb_gbdt_is_ranking(p->objective)) {
        sb_status st = ranking_text(p, buf, sizeof buf);
        if (st != SB_OK) return st;
    }
    /* the keys of LightGBM's other regression objectives, written only for the
     * objective that reads them, so every other model's text is unchanged */
    char extra[128] = "";
    if (p->objective == SB_OBJ_HUBER || p->objective == SB_OBJ_QUANTILE)
        snprintf(extra, sizeof extra, "alpha=%.9g\n", (double)p->alpha);
    else if (p->objective == SB_OBJ_POISSON)
        snprintf(extra, sizeof extra, "poisson_max_delta_step=%.9g\n", (double)p->poisson_max_delta_step);
    else if (p->objective == SB_OBJ_TWEEDIE)
        snprintf(extra, sizeof extra, "tweedie_variance_power=%.9g\n", (double)p->tweedie_power);
    if (p->reg_alpha > 0.0f) /* written only when set: other models' text is unchanged */
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "reg_alpha=%.9g\n", (double)p->reg_alpha);
    if (p->scale_pos_weight != 1.0f) /* the class weights too: written only when set */
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "scale_pos_weight=%.9g\n",
                 (double)p->scale_pos_weight);
    if (p->is_unbalance) snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "is_unbalance=true\n");
    if (extra[0]) {
        sb_status st = add_lines(buf, sizeof buf, extra);
        if (st != SB_OK) return st;
    }
    char *cons = cons_text(p);
    if (!cons) return sb_fail(SB_ERR_OUT_OF_MEMORY, "out of memory");
    const size_t cap = strlen(buf) + strlen(cons) + 2;
    char *all = sb_malloc(cap);
    if (!all) {
        sb_free(cons);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "out of memory");
    }
    memcpy(all, buf, strlen(buf) + 1);
    sb_status st = cons[0] ? add_lines(all, cap, cons) : SB_OK;
    sb_free(cons);
    if (st != SB_OK) {
        sb_free(all);
        return st;
    }
    *out = all;
    return SB_OK;
}
