/*
 * test_linear_targets.c: several targets a row (sb_dataset_set_targets).
 * LinearRegression, Ridge, Lasso and ElasticNet fit one coefficient row per
 * target from one Gram product; each row must be the bits of the
 * single-target fit on that column, weighted or not (coordinate descent: its
 * sweeps and converged flag too, kept per target in the model file). Every other estimator refuses such a dataset by
 * name, and bad calls are refused before anything is kept.
 */
#include "sb_test.h"
#include "samebits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 257
#define P 5
#define T 3

static uint64_t g_s = 11;
static float rndf(void) {
    g_s = g_s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((int32_t)(g_s >> 40) % 20000) / 1000.0f;
}

static void make(float *x, float *y, float *w) {
    for (int i = 0; i < N; i++) {
        float z = 0.0f;
        for (int j = 0; j < P; j++) {
            x[i * P + j] = rndf();
            z = z + (float)(j + 1) * x[i * P + j];
        }
        for (int t = 0; t < T; t++) y[i * T + t] = z * (float)(t - 1) + rndf();
        w[i] = i % 9 == 0 ? 0.0f : 0.5f + (float)(i % 4);
    }
}

static sb_model *fit(const char *params, const float *x, const float *y, int32_t ntargets, const float *w) {
    sb_dataset *d = NULL;
    sb_params *pp = NULL;
    sb_model *m = NULL;
    if (sb_dataset_from_matrix(x, N, P, &d) != SB_OK) return NULL;
    sb_status st = ntargets == 1 ? sb_dataset_set_label(d, y, N) : sb_dataset_set_targets(d, y, N, ntargets);
    if (st == SB_OK && w) st = sb_dataset_set_weight(d, w, N);
    if (st == SB_OK) st = sb_params_create(&pp);
    if (st == SB_OK) st = sb_params_parse(pp, params);
    if (st == SB_OK) st = sb_linear_fit(pp, d, NULL, &m);
    sb_params_free(pp);
    sb_dataset_free(d);
    return st == SB_OK ? m : NULL;
}

SB_TEST(test_linear_targets_rows_are_single_target_fits) {
    float *x = malloc(sizeof(float) * N * P), *y = malloc(sizeof(float) * N * T), *w = malloc(sizeof(float) * N);
    float *col = malloc(sizeof(float) * N);
    make(x, y, w);
    const char *kinds[] = {"model=linear", "model=ridge,alpha=2.5", "model=ridge,alpha=0.5,fit_intercept=false",
                           "model=lasso,alpha=0.7", "model=elasticnet,alpha=0.3,l1_ratio=0.4,fit_intercept=false",
                           "model=lasso,alpha=0.05,max_iter=3"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (int weighted = 0; weighted < 2; weighted++) {
            sb_model *m = fit(kinds[k], x, y, T, weighted ? w : NULL);
            SB_CHECK(m != NULL);
            if (!m) continue;
            int64_t nout = 0;
            SB_CHECK(sb_model_get_int(m, "n_outputs", &nout) == SB_OK && nout == T);
            float coef[T * P], icpt[T];
            size_t need = 0;
            SB_CHECK(sb_model_get_array(m, "coef", coef, T * P, &need) == SB_OK && need == T * P);
            SB_CHECK(sb_model_get_array(m, "intercept", icpt, T, &need) == SB_OK && need == T);
            for (int t = 0; t < T; t++) {
                for (int i = 0; i < N; i++) col[i] = y[i * T + t];
                sb_model *one = fit(kinds[k], x, col, 1, weighted ? w : NULL);
                SB_CHECK(one != NULL);
                if (!one) continue;
                float c1[P], i1;
                SB_CHECK(sb_model_get_array(one, "coef", c1, P, &need) == SB_OK);
                SB_CHECK(sb_model_get_array(one, "intercept", &i1, 1, &need) == SB_OK);
                SB_CHECK(memcmp(c1, coef + t * P, sizeof c1) == 0);
                SB_CHECK(memcmp(&i1, &icpt[t], 4) == 0);
                if (strstr(kinds[k], "lasso") || strstr(kinds[k], "elasticnet")) {
                    /* target t's sweeps and flag are the single fit's; n_iter the largest, converged all */
                    int64_t it1 = -1, c1f = -1, itt = -2, ctt = -2, itm = -3, cm = -3;
                    char nm[32];
                    SB_CHECK(sb_model_get_int(one, "n_iter", &it1) == SB_OK);
                    SB_CHECK(sb_model_get_int(one, "converged", &c1f) == SB_OK);
                    snprintf(nm, sizeof nm, "n_iter.%d", t);
                    SB_CHECK(sb_model_get_int(m, nm, &itt) == SB_OK && itt == it1);
                    snprintf(nm, sizeof nm, "converged.%d", t);
                    SB_CHECK(sb_model_get_int(m, nm, &ctt) == SB_OK && ctt == c1f);
                    SB_CHECK(sb_model_get_int(m, "n_iter", &itm) == SB_OK && itm >= it1);
                    SB_CHECK(sb_model_get_int(m, "converged", &cm) == SB_OK && (cm == 0 || c1f == 1));
                    SB_CHECK(sb_model_get_int(one, "n_iter.0", &itt) == SB_ERR_NOT_FOUND);
                }
                sb_model_free(one);
            }
            if (strstr(kinds[k], "lasso") || strstr(kinds[k], "elasticnet")) {
                /* the file keeps every target's runs: read back, the same bytes, the same integers */
                size_t len = 0;
                int64_t a = 0, b = 0;
                sb_model *r = NULL;
                SB_CHECK(sb_model_to_bytes(m, NULL, 0, &len) == SB_OK);
                uint8_t *buf = malloc(len), *buf2 = malloc(len);
                SB_CHECK(sb_model_to_bytes(m, buf, len, NULL) == SB_OK && sb_model_from_bytes(buf, len, &r) == SB_OK);
                SB_CHECK(r && sb_model_to_bytes(r, buf2, len, NULL) == SB_OK && memcmp(buf, buf2, len) == 0);
                SB_CHECK(sb_model_get_int(m, "n_iter.2", &a) == SB_OK && sb_model_get_int(r, "n_iter.2", &b) == SB_OK &&
                         a == b);
                SB_CHECK(sb_model_get_int(r, "n_iter.3", &a) == SB_ERR_NOT_FOUND);
                SB_CHECK(sb_model_get_int(r, "n_iter.x", &a) == SB_ERR_NOT_FOUND);
                sb_model_free(r);
                free(buf), free(buf2);
            }
            sb_model_free(m);
        }
    free(x);
    free(y);
    free(w);
    free(col);
}

SB_TEST(test_linear_targets_refused_elsewhere_by_name) {
    float *x = malloc(sizeof(float) * N * P), *y = malloc(sizeof(float) * N * T), *w = malloc(sizeof(float) * N);
    make(x, y, w);
    sb_dataset *d = NULL;
    SB_CHECK(sb_dataset_from_matrix(x, N, P, &d) == SB_OK);
    /* bad calls: nothing kept */
    SB_CHECK(sb_dataset_set_targets(d, y, N, 0) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_dataset_set_targets(d, y, N - 1, T) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_dataset_set_targets(d, NULL, N, T) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_dataset_set_targets(d, y, N, T) == SB_OK);
    const char *refused[] = {"model=logistic"};
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        sb_params *pp = NULL;
        sb_model *m = NULL;
        SB_CHECK(sb_params_create(&pp) == SB_OK && sb_params_parse(pp, refused[k]) == SB_OK);
        SB_CHECK(sb_linear_fit(pp, d, NULL, &m) == SB_ERR_INVALID_INPUT && m == NULL);
        SB_CHECK(strstr(sb_last_error(), "one target a row") != NULL);
        sb_params_free(pp);
    }
    sb_params *pp = NULL;
    sb_model *m = NULL;
    SB_CHECK(sb_params_create(&pp) == SB_OK && sb_params_parse(pp, "objective=regression,num_iterations=2") == SB_OK);
    SB_CHECK(sb_gbdt_fit(pp, d, NULL, NULL, &m) == SB_ERR_INVALID_INPUT && m == NULL);
    SB_CHECK(strstr(sb_last_error(), "targets a row") != NULL);
    sb_params_free(pp);
    pp = NULL;
    SB_CHECK(sb_params_create(&pp) == SB_OK && sb_params_parse(pp, "model=random_forest,n_estimators=2") == SB_OK);
    SB_CHECK(sb_forest_fit(pp, d, NULL, &m) == SB_ERR_INVALID_INPUT && m == NULL);
    SB_CHECK(strstr(sb_last_error(), "targets a row") != NULL);
    sb_params_free(pp);
    /* one target again: an ordinary label */
    SB_CHECK(sb_dataset_set_label(d, y, N) == SB_OK);
    pp = NULL;
    SB_CHECK(sb_params_create(&pp) == SB_OK && sb_params_parse(pp, "model=lasso") == SB_OK);
    SB_CHECK(sb_linear_fit(pp, d, NULL, &m) == SB_OK);
    sb_model_free(m);
    sb_params_free(pp);
    sb_dataset_free(d);
    free(x);
    free(y);
    free(w);
}
