/*
 * test_svm.c: support vector machines (src/models/svm/svm.c): a model read
 * back from its file deciding the same bits; one thread and three giving the
 * same fit bits; a separable problem classified exactly with a linear kernel;
 * max_iter's stop named by "converged" 0; the refusals by name (C <= 0, one
 * class, probability, an unknown kernel).
 */
#include "sb_test.h"
#include "models/svm/svm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sb_status fit(const float *x, const float *y, int64_t n, int32_t d, const char *params, sb_model **m) {
    sb_dataset *ds = NULL;
    sb_params *p = NULL;
    sb_status st = sb_dataset_from_matrix(x, n, d, &ds);
    if (st == SB_OK) st = sb_dataset_set_label(ds, y, n);
    if (st == SB_OK) st = sb_params_create(&p);
    if (st == SB_OK) st = sb_params_parse(p, params);
    if (st == SB_OK) st = sb_svm_fit(p, ds, NULL, m);
    sb_params_free(p);
    sb_dataset_free(ds);
    return st;
}

static double *decide(const sb_model *m, const float *q, int64_t nq, int32_t d, size_t *len) {
    sb_dataset *ds = NULL;
    double *out = NULL;
    *len = 0;
    if (sb_dataset_from_matrix(q, nq, d, &ds) == SB_OK && sb_svm_decision_function(m, ds, NULL, 0, len) == SB_OK &&
        (out = malloc(sizeof(double) * (*len ? *len : 1))) && sb_svm_decision_function(m, ds, out, *len, NULL) != SB_OK) {
        free(out);
        out = NULL;
    }
    sb_dataset_free(ds);
    return out;
}

SB_TEST(test_svm_file_and_threads_give_the_same_bits) {
    const int64_t n = 300, nq = 50;
    const int32_t d = 4;
    float *x = sb_test_rows(n, d, 1), *q = sb_test_rows(nq, d, 2), *y = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) y[i] = (float)((x[i * d] + x[i * d + 1] > 0.0f) + (x[i * d + 2] > 1.0f));
    float *z = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) z[i] = x[i * d] - 0.5f * x[i * d + 3];
    static const char *const params[] = {"model=svc,kernel=rbf", "model=svc,kernel=poly,degree=2,coef0=1",
                                         "model=svc,kernel=linear,C=0.5", "model=svr,kernel=rbf,epsilon=0.05",
                                         "model=svr,kernel=sigmoid,gamma=0.05"};
    for (size_t k = 0; k < sizeof params / sizeof params[0]; k++) {
        const float *lab = strstr(params[k], "svr") ? z : y;
        sb_model *a = NULL, *b = NULL, *back = NULL;
        SB_CHECK(sb_set_num_threads(1) == SB_OK);
        SB_CHECK(fit(x, lab, n, d, params[k], &a) == SB_OK);
        SB_CHECK(sb_set_num_threads(3) == SB_OK);
        SB_CHECK(fit(x, lab, n, d, params[k], &b) == SB_OK);
        size_t la = 0, lb = 0;
        SB_CHECK(sb_model_to_bytes(a, NULL, 0, &la) == SB_OK && sb_model_to_bytes(b, NULL, 0, &lb) == SB_OK);
        uint8_t *ba = malloc(la), *bb = malloc(lb);
        SB_CHECK(sb_model_to_bytes(a, ba, la, &la) == SB_OK && sb_model_to_bytes(b, bb, lb, &lb) == SB_OK);
        SB_CHECK(la == lb && memcmp(ba, bb, la) == 0);
        SB_CHECK(sb_model_from_bytes(ba, la, &back) == SB_OK);
        size_t n1 = 0, n2 = 0;
        double *d1 = decide(a, q, nq, d, &n1), *d2 = back ? decide(back, q, nq, d, &n2) : NULL;
        SB_CHECK(d1 && d2 && n1 == n2 && memcmp(d1, d2, sizeof(double) * n1) == 0);
        free(d1), free(d2), free(ba), free(bb);
        sb_model_free(a), sb_model_free(b), sb_model_free(back);
    }
    SB_CHECK(sb_set_num_threads(0) == SB_OK);
    free(x), free(q), free(y), free(z);
}

SB_TEST(test_svm_separable_and_max_iter) {
    const int64_t n = 40;
    const int32_t d = 2;
    float *x = sb_test_rows(n, d, 5), *y = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        y[i] = (float)(i % 2);
        x[i * d] += i % 2 ? 5.0f : -5.0f;
    }
    sb_model *m = NULL;
    SB_CHECK(fit(x, y, n, d, "model=svc,kernel=linear,C=100", &m) == SB_OK);
    sb_dataset *ds = NULL;
    float pred[40];
    SB_CHECK(sb_dataset_from_matrix(x, n, d, &ds) == SB_OK);
    SB_CHECK(sb_model_predict(m, ds, SB_PREDICT_VALUE, pred, (size_t)n, NULL) == SB_OK);
    for (int64_t i = 0; i < n; i++) SB_CHECK(pred[i] == y[i]);
    int64_t conv = 0, nsv = 0;
    SB_CHECK(sb_model_get_int(m, "converged", &conv) == SB_OK && conv == 1);
    SB_CHECK(sb_model_get_int(m, "n_support_vectors", &nsv) == SB_OK && nsv >= 2 && nsv < n);
    sb_model_free(m);
    m = NULL;
    SB_CHECK(fit(x, y, n, d, "model=svc,kernel=rbf,max_iter=1", &m) == SB_OK);
    SB_CHECK(sb_model_get_int(m, "converged", &conv) == SB_OK && conv == 0);
    int64_t it = 0;
    SB_CHECK(sb_model_get_indices(m, "n_iter", &it, 1, NULL) == SB_OK && it == 1);
    sb_model_free(m);
    sb_dataset_free(ds);
    free(x), free(y);
}

SB_TEST(test_svm_refusals_named) {
    const int64_t n = 20;
    const int32_t d = 2;
    float *x = sb_test_rows(n, d, 7), *y = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) y[i] = 1.0f;
    sb_model *m = NULL;
    SB_CHECK(fit(x, y, n, d, "model=svc", &m) == SB_ERR_INVALID_INPUT && !m);
    SB_CHECK(strstr(sb_last_error(), "at least two classes") != NULL);
    for (int64_t i = 0; i < n; i++) y[i] = (float)(i % 2);
    static const struct { const char *p, *msg; } refused[] = {
        {"model=svc,C=0", "C must be"}, {"model=svr,C=-2", "C must be"}, {"model=svc,probability=true", "Platt"},
        {"model=svc,kernel=precomputed", "kernel='precomputed'"}, {"model=svc,epsilon=0.2", "epsilon is SVR's"},
        {"model=svr,class_weight=balanced", "class_weight is SVC's"}, {"model=svc,device=cuda", "CPU only"},
        {"kernel=rbf", "model=svc or model=svr"}, {"model=svc,max_iter=0", "max_iter=0"},
        {"model=svc,class_weight=5:2", "not among"}};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        const sb_status st = fit(x, y, n, d, refused[i].p, &m);
        SB_CHECK(st != SB_OK && m == NULL);
        SB_CHECK(strstr(sb_last_error(), refused[i].msg) != NULL);
    }
    y[3] = 2.5f;
    SB_CHECK(fit(x, y, n, d, "model=svc", &m) == SB_ERR_INVALID_INPUT && !m);
    SB_CHECK(strstr(sb_last_error(), "not a class index") != NULL);
    free(x), free(y);
}
