/* test_forest.c: forest weights (issue #7): the class_weight and
 * min_weight_fraction_leaf parameters, their canonical text, and the named
 * refusals of weights the fixed point cannot hold. */
#include "sb_test.h"
#include "samebits.h"
#include "core/internal.h"
#include "models/model.h"
#include "models/forest/forest_params.h"
#include <stdlib.h>
#include <string.h>

/* Parameters from text; the status of parsing them as forest parameters. */
static sb_status parse(const char *text, forest_params *p) {
    sb_params *params = NULL;
    sb_status st = sb_params_create(&params);
    if (st == SB_OK) st = sb_params_parse(params, text);
    if (st == SB_OK) st = sb_forest_params_parse(params, p);
    sb_params_free(params);
    return st;
}

SB_TEST(test_forest_class_weight_parameters) {
    forest_params p;
    char *text = NULL;
    SB_CHECK(parse("class_weight=3:2.5;0:1", &p) == SB_OK);
    SB_CHECK(p.class_weight == SB_CW_LIST && p.cw_max == 3 && p.cw[3] == 2.5f && p.cw[1] == 1.0f);
    SB_CHECK(p.cw_listed[0] && !p.cw_listed[1] && p.cw_listed[3]);
    SB_CHECK(sb_forest_params_text(&p, &text) == SB_OK);
    /* sorted by key: between bootstrap and criterion, the classes in order */
    SB_CHECK(strstr(text, "bootstrap=1\nclass_weight=0:1;3:2.5\ncriterion=gini\n") != NULL);
    SB_CHECK(strstr(text, "min_weight_fraction_leaf") == NULL);
    sb_free(text);
    SB_CHECK(parse("class_weight=balanced_subsample min_weight_fraction_leaf=0.25", &p) == SB_OK);
    SB_CHECK(p.class_weight == SB_CW_SUBSAMPLE && p.min_weight_fraction_leaf == 0.25f);
    SB_CHECK(sb_forest_params_text(&p, &text) == SB_OK);
    SB_CHECK(strstr(text, "class_weight=balanced_subsample\n") != NULL);
    SB_CHECK(strstr(text, "min_samples_split=2\nmin_weight_fraction_leaf=0.25\nmodel=random_forest\n") != NULL);
    sb_free(text);
    /* unweighted defaults: neither key in the text (the model bytes of
     * unweighted forests are what they were before weights) */
    SB_CHECK(parse("class_weight=none", &p) == SB_OK && p.class_weight == SB_CW_NONE);
    SB_CHECK(sb_forest_params_text(&p, &text) == SB_OK);
    SB_CHECK(strstr(text, "class_weight") == NULL && strstr(text, "min_weight") == NULL);
    sb_free(text);
    /* refusals by name */
    SB_CHECK(parse("class_weight=balance", &p) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "class_weight") != NULL);
    SB_CHECK(parse("class_weight=1:2;1:3", &p) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "twice") != NULL);
    SB_CHECK(parse("class_weight=0:-1", &p) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(parse("class_weight=0:inf", &p) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(parse("class_weight=0:1x", &p) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(parse("class_weight=1024:1", &p) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(parse("objective=regression class_weight=balanced", &p) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "classification") != NULL);
    SB_CHECK(parse("min_weight_fraction_leaf=0.6", &p) == SB_ERR_INVALID_ARGUMENT);
}

/* A small two-class table: row r has x = r % 10, label 1 when x >= 6. */
static sb_dataset *table(int64_t n, const float *w) {
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    for (int64_t r = 0; r < n; r++) {
        x[r] = (float)(r % 10);
        y[r] = x[r] >= 6.0f ? 1.0f : 0.0f;
    }
    sb_dataset *d = NULL;
    if (sb_dataset_from_matrix(x, n, 1, &d) == SB_OK && sb_dataset_set_label(d, y, n) == SB_OK && w)
        sb_dataset_set_weight(d, w, n);
    free(x);
    free(y);
    return d;
}

static sb_status fit(const char *text, const sb_dataset *d, sb_model **m) {
    sb_params *params = NULL;
    sb_status st = sb_params_create(&params);
    if (st == SB_OK) st = sb_params_parse(params, text);
    if (st == SB_OK) st = sb_forest_fit(params, d, NULL, m);
    sb_params_free(params);
    return st;
}

SB_TEST(test_forest_weight_refusals_and_rows) {
    enum { N = 200 };
    float w[N];
    sb_model *m = NULL;
    for (int i = 0; i < N; i++) w[i] = 0.0f;
    sb_dataset *d = table(N, w);
    SB_CHECK(fit("n_estimators=2", d, &m) == SB_ERR_INVALID_INPUT && m == NULL);
    SB_CHECK(strstr(sb_last_error(), "zero") != NULL);
    sb_dataset_free(d);
    /* a positive weight below 2^-31 of the largest would vanish even at 30 bits: refused */
    for (int i = 0; i < N; i++) w[i] = 1.0f;
    w[5] = 1e-10f;
    d = table(N, w);
    SB_CHECK(fit("n_estimators=2", d, &m) == SB_ERR_LIMIT && m == NULL);
    SB_CHECK(strstr(sb_last_error(), "row 5") != NULL);
    sb_dataset_free(d);
    /* class_weight names a class the labels do not have */
    d = table(N, NULL);
    SB_CHECK(fit("n_estimators=2 class_weight=0:1;2:3", d, &m) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "class 2") != NULL);
    /* class weights of zero on every class: nothing to learn from */
    SB_CHECK(fit("n_estimators=2 class_weight=0:0;1:0", d, &m) == SB_ERR_INVALID_INPUT);
    /* a weighted model records min_samples counts in rows: with weights 1000
     * and min_samples_split=30, a node of 20 rows is not split */
    sb_dataset_free(d);
    for (int i = 0; i < N; i++) w[i] = 1000.0f;
    d = table(N, w);
    SB_CHECK(fit("n_estimators=1 bootstrap=false max_features=all min_samples_leaf=70", d, &m) == SB_OK);
    /* x <= 5.5 (120 | 80 rows) is pure and leaves 70 rows a side... */
    SB_CHECK(m->ntrees == 2 && m->trees[0].nnodes == 3 && m->trees[0].nodes[0].count == N);
    sb_model_free(m);
    m = NULL;
    SB_CHECK(fit("n_estimators=1 bootstrap=false max_features=all min_samples_leaf=110", d, &m) == SB_OK);
    SB_CHECK(m->trees[0].nnodes == 1); /* ...and no split leaves 110 rows a side (counted in weight, all would) */
    sb_model_free(m);
    sb_dataset_free(d);
}

/* Fail allocation 1, 2, 3, ... of a weighted fit in turn (balanced_subsample:
 * the per-tree weights; explicit class weights: the global ones): each failed
 * run is SB_ERR_OUT_OF_MEMORY with a message and no model. */
SB_TEST(test_forest_weighted_fit_allocation_failures) {
    enum { N = 120 };
    float w[N];
    for (int i = 0; i < N; i++) w[i] = 0.5f + (float)(i % 7);
    sb_dataset *d = table(N, w);
    static const char *const texts[] = {"n_estimators=3 class_weight=balanced_subsample max_depth=3",
                                        "n_estimators=3 class_weight=0:2;1:1 min_weight_fraction_leaf=0.1",
                                        "n_estimators=2 objective=regression"};
    sb_set_num_threads(1);
    for (int k = 0; k < 3; k++) {
        long n;
        for (n = 1; n < 10000; n++) {
            sb_model *m = NULL;
            sb_alloc_fail_at_for_tests(n);
            sb_status st = fit(texts[k], d, &m);
            long used = sb_alloc_count_for_tests();
            sb_alloc_fail_at_for_tests(0);
            if (used < n) {
                SB_CHECK(st == SB_OK && m != NULL);
                sb_model_free(m);
                break;
            }
            SB_CHECK(st == SB_ERR_OUT_OF_MEMORY && m == NULL && sb_last_error()[0] != '\0');
            if (st != SB_ERR_OUT_OF_MEMORY) break;
        }
        SB_CHECK(n > 10);
    }
    sb_set_num_threads(0);
    sb_dataset_free(d);
}

/* ---- warm start (sb_forest_fit_continue, sb_isolation_forest_fit_continue) ---- */

/* Warm start's parameter comparison: every line but n_estimators. */
SB_TEST(test_forest_params_differ) {
    char a[64], b[64];
    SB_CHECK(sb_forest_params_differ("max_depth=3\nn_estimators=5\nseed=1\n", "max_depth=3\nn_estimators=9\nseed=1\n",
                                     a, b, sizeof a) == 0);
    SB_CHECK(sb_forest_params_differ("max_depth=3\nn_estimators=5\nseed=1\n", "max_depth=4\nn_estimators=5\nseed=1\n",
                                     a, b, sizeof a) == 1);
    SB_CHECK(!strcmp(a, "max_depth=3") && !strcmp(b, "max_depth=4"));
    /* a line only one text has (class_weight is written only when set) */
    SB_CHECK(sb_forest_params_differ("bootstrap=1\ncriterion=gini\n", "bootstrap=1\nclass_weight=balanced\ncriterion=gini\n",
                                     a, b, sizeof a) == 1);
    SB_CHECK(!strcmp(a, "criterion=gini") && !strcmp(b, "class_weight=balanced"));
    SB_CHECK(sb_forest_params_differ("seed=1\n", "seed=1\nx=2\n", a, b, sizeof a) == 1);
    SB_CHECK(!strcmp(a, "(none)") && !strcmp(b, "x=2"));
    SB_CHECK(sb_forest_params_differ(NULL, "n_estimators=3\n", a, b, sizeof a) == 0);
}

/* A forest fitted with text and continued from init (NULL: fitted at once). */
static sb_status fit_from(const char *text, const sb_dataset *d, const sb_model *init, int iso, sb_model **m) {
    sb_params *params = NULL;
    sb_status st = sb_params_create(&params);
    if (st == SB_OK) st = sb_params_parse(params, text);
    if (st == SB_OK)
        st = iso ? (init ? sb_isolation_forest_fit_continue(params, d, init, NULL, m)
                         : sb_isolation_forest_fit(params, d, NULL, m))
                 : (init ? sb_forest_fit_continue(params, d, init, NULL, m) : sb_forest_fit(params, d, NULL, m));
    sb_params_free(params);
    return st;
}

static int same_digest(const sb_model *a, const sb_model *b) {
    char x[65], y[65];
    return sb_model_digest(a, x) == SB_OK && sb_model_digest(b, y) == SB_OK && !strcmp(x, y);
}

/* 3 trees warm-started to 8 are the 8-tree forest (random forest, Extra
 * Trees with balanced_subsample, regression, isolation forest); the refusals
 * are named; a failed allocation anywhere in a warm start is
 * SB_ERR_OUT_OF_MEMORY with no model. */
SB_TEST(test_forest_warm_start) {
    enum { N = 300 };
    float w[N];
    for (int i = 0; i < N; i++) w[i] = 0.5f + (float)(i % 5);
    sb_dataset *d = table(N, w), *d2 = table(N, NULL);
    static const char *const texts[] = {"max_depth=4", "model=extra_trees bootstrap=true class_weight=balanced_subsample",
                                        "objective=regression max_samples=0.5", "max_samples=40"};
    char text[160];
    for (int k = 0; k < 4; k++) {
        const int iso = k == 3;
        sb_model *full = NULL, *half = NULL, *cont = NULL, *same = NULL;
        snprintf(text, sizeof text, "n_estimators=8 seed=5 %s", texts[k]);
        SB_CHECK(fit_from(text, iso ? d2 : d, NULL, iso, &full) == SB_OK);
        snprintf(text, sizeof text, "n_estimators=3 seed=5 %s", texts[k]);
        SB_CHECK(fit_from(text, iso ? d2 : d, NULL, iso, &half) == SB_OK);
        snprintf(text, sizeof text, "n_estimators=8 seed=5 %s", texts[k]);
        SB_CHECK(fit_from(text, iso ? d2 : d, half, iso, &cont) == SB_OK);
        SB_CHECK(cont && full && same_digest(cont, full));
        /* as many trees: init's forest again */
        snprintf(text, sizeof text, "n_estimators=3 seed=5 %s", texts[k]);
        SB_CHECK(fit_from(text, iso ? d2 : d, half, iso, &same) == SB_OK && same_digest(same, half));
        sb_model_free(same);
        same = NULL;
        /* fewer trees, other parameters, a NULL init: refused by name */
        snprintf(text, sizeof text, "n_estimators=2 seed=5 %s", texts[k]);
        SB_CHECK(fit_from(text, iso ? d2 : d, half, iso, &same) == SB_ERR_INVALID_ARGUMENT && same == NULL);
        SB_CHECK(strstr(sb_last_error(), "fewer than init_model's 3") != NULL);
        snprintf(text, sizeof text, "n_estimators=8 seed=6 %s", texts[k]);
        SB_CHECK(fit_from(text, iso ? d2 : d, half, iso, &same) == SB_ERR_INVALID_ARGUMENT && same == NULL);
        SB_CHECK(strstr(sb_last_error(), "seed=5, the parameters give seed=6") != NULL);
        /* a failed allocation anywhere: no model, a message */
        sb_set_num_threads(1);
        snprintf(text, sizeof text, "n_estimators=8 seed=5 %s", texts[k]);
        long n;
        for (n = 1; n < 20000; n++) {
            sb_model *m = NULL;
            sb_alloc_fail_at_for_tests(n);
            sb_status st = fit_from(text, iso ? d2 : d, half, iso, &m);
            long used = sb_alloc_count_for_tests();
            sb_alloc_fail_at_for_tests(0);
            if (used < n) {
                SB_CHECK(st == SB_OK && m != NULL && same_digest(m, full));
                sb_model_free(m);
                break;
            }
            if (st == SB_OK) { /* a failure tolerated (a shrinking realloc): the same forest */
                SB_CHECK(m != NULL && same_digest(m, full));
                sb_model_free(m);
                continue;
            }
            SB_CHECK(st == SB_ERR_OUT_OF_MEMORY && m == NULL && sb_last_error()[0] != '\0');
            if (st != SB_ERR_OUT_OF_MEMORY) break;
        }
        SB_CHECK(n > 10);
        sb_set_num_threads(0);
        sb_model_free(full);
        sb_model_free(half);
        sb_model_free(cont);
    }
    /* init of another family, and none */
    sb_model *rf = NULL, *m = NULL;
    SB_CHECK(fit_from("n_estimators=2", d2, NULL, 0, &rf) == SB_OK);
    SB_CHECK(fit_from("n_estimators=4", d2, rf, 1, &m) == SB_ERR_INVALID_ARGUMENT && m == NULL);
    SB_CHECK(strstr(sb_last_error(), "init_model: a random_forest model") != NULL);
    SB_CHECK(fit_from("n_estimators=4 model=extra_trees", d2, rf, 0, &m) == SB_ERR_INVALID_ARGUMENT && m == NULL);
    SB_CHECK(strstr(sb_last_error(), "this warm start fits extra_trees") != NULL);
    SB_CHECK(fit_from("n_estimators=4 objective=regression", d2, rf, 0, &m) == SB_ERR_INVALID_ARGUMENT && m == NULL);
    SB_CHECK(strstr(sb_last_error(), "classification forest, the parameters a regression one") != NULL);
    sb_params *p = NULL;
    SB_CHECK(sb_params_create(&p) == SB_OK);
    SB_CHECK(sb_forest_fit_continue(p, d2, NULL, NULL, &m) == SB_ERR_INVALID_ARGUMENT && m == NULL);
    SB_CHECK(sb_isolation_forest_fit_continue(p, d2, NULL, NULL, &m) == SB_ERR_INVALID_ARGUMENT && m == NULL);
    sb_params_free(p);
    sb_model_free(rf);
    sb_dataset_free(d);
    sb_dataset_free(d2);
}
