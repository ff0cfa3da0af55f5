/*
 * test_mlp.c: the neural-network building blocks (src/models/nn/) and the
 * MLP estimators (docs/mlp.md): the linear layer's three products against a
 * float64 reference, every activation's derivative against central
 * differences, softmax and the losses against float64, one Adam and one
 * Nesterov SGD step spelled out, gradient clipping by the global norm; the
 * same bits at 1, 2 and 7 threads, learning a separable problem, the named
 * refusals, and the model file (a round trip, the golden file
 * tests/fuzz/corpus/model/mlp-v2.sbm rewritten bit for bit by the same fit;
 * SB_WRITE_GOLDEN=1 rewrites it by hand at a format change; a flipped byte
 * refused).
 */
#include "sb_test.h"
#include "samebits.h"
#include "../../src/models/nn/nn.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float val(int i) { return (float)((i * 37) % 61 - 30) / 16.0f; }

SB_TEST(test_nn_linear_products_match_float64) {
    enum { M = 7, K = 5, N = 3 };
    float A[M * K], W[K * N], b[N], Z[M * N], D[M * N], dW[K * N], dA[M * K];
    for (int i = 0; i < M * K; i++) A[i] = val(i);
    for (int i = 0; i < K * N; i++) W[i] = val(3 * i + 1);
    for (int i = 0; i < N; i++) b[i] = val(5 * i + 2);
    for (int i = 0; i < M * N; i++) D[i] = val(7 * i + 3);
    SB_CHECK(nn_linear_forward(M, K, N, A, W, b, Z) == SB_OK);
    SB_CHECK(nn_linear_backward(M, K, N, A, W, D, dW, dA) == SB_OK);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int q = 0; q < K; q++) s += (double)A[i * K + q] * W[q * N + j];
            SB_CHECK(Z[i * N + j] == (float)s + b[j]); /* the exact dot rounded once, then + b */
        }
    for (int q = 0; q < K; q++)
        for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int i = 0; i < M; i++) s += (double)A[i * K + q] * D[i * N + j];
            SB_CHECK(dW[q * N + j] == (float)s);
        }
    for (int i = 0; i < M; i++)
        for (int q = 0; q < K; q++) {
            double s = 0.0;
            for (int j = 0; j < N; j++) s += (double)D[i * N + j] * W[q * N + j];
            SB_CHECK(dA[i * K + q] == (float)s);
        }
    float cs[N];
    nn_col_sums(M, N, D, cs);
    for (int j = 0; j < N; j++) {
        double s = 0.0;
        for (int i = 0; i < M; i++) s += D[i * N + j];
        SB_CHECK(cs[j] == (float)s); /* multiples of 1/16: exact in float64 */
    }
}

SB_TEST(test_nn_activation_derivatives) {
    for (int32_t a = 0; a < NN_ACT_COUNT; a++) {
        SB_CHECK(nn_act_of(nn_act_name(a)) == a);
        for (int i = 0; i < 40; i++) {
            const float x = (float)(i - 20) / 7.0f + 0.01f; /* away from relu's kink */
            const float h = 1e-2f;
            float xs[3] = {x, x + h, x - h}, ys[3], d = 1.0f;
            nn_act_forward(a, xs, ys, 3);
            nn_act_backward(a, xs, ys, &d, 1);
            const double fd = ((double)ys[1] - ys[2]) / (2.0 * h);
            SB_CHECK(fabs(fd - d) < 2e-3 * (1.0 + fabs(fd)));
            if (fabs(fd - d) >= 2e-3 * (1.0 + fabs(fd))) printf("  %s at %g: %g vs %g\n", nn_act_name(a), x, d, fd);
        }
    }
    SB_CHECK(nn_act_of("softplus") == -1);
}

SB_TEST(test_nn_softmax_and_losses) {
    float Z[6] = {1.0f, 2.0f, 3.0f, -50.0f, 0.0f, 50.0f}, Y[6] = {0, 0, 1, 1, 0, 0};
    nn_softmax_rows(2, 3, Z);
    for (int i = 0; i < 2; i++) {
        const double s = (double)Z[3 * i] + Z[3 * i + 1] + Z[3 * i + 2];
        SB_CHECK(fabs(s - 1.0) < 1e-6);
    }
    SB_CHECK(fabs(Z[2] - exp(3.0) / (exp(1.0) + exp(2.0) + exp(3.0))) < 1e-7);
    /* row 2's true class has p ~ 5e-44: clipped at 2^-23, scikit-learn's eps */
    const double want = -(log(Z[2]) + log(0x1.0p-23)) / 2.0;
    SB_CHECK(fabs(nn_log_loss(2, 3, Z, Y, 1) - want) < 1e-5 * want);
    float P[4] = {0.25f, 0.75f, 0.5f, 1.0f}, T[4] = {0, 1, 1, 1};
    const double bl = -(log(0.75) + log(0.75) + log(0.5) + log(1.0 - 0x1.0p-23)) / 2.0;
    SB_CHECK(fabs(nn_log_loss(2, 2, P, T, 0) - bl) < 1e-6);
    SB_CHECK(nn_squared_loss(2, 2, P, T) == (float)((0.0625 + 0.0625 + 0.25 + 0.0) / 4.0 / 2.0));
    const float w1[2] = {3.0f, 4.0f}, w2[1] = {12.0f};
    const float *ws[2] = {w1, w2};
    const int64_t cnt[2] = {2, 1};
    SB_CHECK(nn_sq_norm(2, ws, cnt) == 169.0f);
}

SB_TEST(test_nn_optimizers_spelled_out) {
    nn_adam o;
    nn_adam_init(&o, 0.001, 0.9, 0.999, 1e-8);
    float p[2] = {1.0f, -2.0f}, m[2] = {0, 0}, v[2] = {0, 0};
    const float g[2] = {0.5f, -0.25f};
    const float lr1 = nn_adam_step(&o);
    SB_CHECK(lr1 == (float)(0.001 * sqrt(1.0 - 0.999) / (1.0 - 0.9)));
    nn_adam_update(&o, lr1, p, m, v, g, 2);
    for (int i = 0; i < 2; i++) {
        const float mi = 0.9f * 0.0f + (float)(1.0 - 0.9) * g[i];
        const float vi = 0.999f * 0.0f + (float)(1.0 - 0.999) * (g[i] * g[i]);
        SB_CHECK(m[i] == mi && v[i] == vi);
        SB_CHECK(p[i] == (i ? -2.0f : 1.0f) - (lr1 * mi) / (sqrtf(vi) + 1e-8f));
    }
    /* the first Adam step moves each weight by about lr against its gradient's sign */
    SB_CHECK(fabs(p[0] - (1.0 - 0.001)) < 1e-6 && fabs(p[1] - (-2.0 + 0.001)) < 1e-6);
    float q[1] = {1.0f}, u[1] = {0.5f};
    const float gq[1] = {2.0f};
    nn_sgd_update(0.1f, 0.9f, 1, q, u, gq, 1);
    SB_CHECK(u[0] == 0.9f * 0.5f - 0.1f * 2.0f);
    SB_CHECK(q[0] == 1.0f + (0.9f * u[0] - 0.1f * 2.0f));
    float q2[1] = {1.0f}, u2[1] = {0.5f};
    nn_sgd_update(0.1f, 0.9f, 0, q2, u2, gq, 1);
    SB_CHECK(q2[0] == 1.0f + u2[0]);
}

SB_TEST(test_nn_clip_global_norm) {
    float a[2] = {3.0f, 0.0f}, b[1] = {4.0f};
    float *g[2] = {a, b};
    const int64_t cnt[2] = {2, 1};
    SB_CHECK(nn_clip_global_norm(2, g, cnt, 10.0f) == 5.0f);
    SB_CHECK(a[0] == 3.0f && b[0] == 4.0f); /* below the bound: untouched */
    SB_CHECK(nn_clip_global_norm(2, g, cnt, 1.0f) == 5.0f);
    SB_CHECK(a[0] == 3.0f * (1.0f / 5.0f) && b[0] == 4.0f * (1.0f / 5.0f) && a[1] == 0.0f);
    const float *c[2] = {a, b};
    SB_CHECK(fabsf(sqrtf(nn_sq_norm(2, c, cnt)) - 1.0f) < 1e-6f);
}

/* ---- the estimators ------------------------------------------------------ */

#define N 150
#define D 4

static void problem(float *X, float *y, float *t) {
    for (int i = 0; i < N; i++) {
        for (int f = 0; f < D; f++) X[i * D + f] = (float)((i * (31 + 6 * f) + 7 * f) % 97) / 32.0f - 1.5f;
        const float s = X[i * D] + X[i * D + 1] - X[i * D + 2];
        y[i] = s > 0.5f ? 2.0f : (s > -0.5f ? 1.0f : 0.0f);
        t[i] = s * 0.5f + X[i * D + 3] * X[i * D + 3];
    }
}

static sb_mlp *fit(const char *params, const float *X, int n, const float *y, int ny, sb_status *st) {
    sb_params *p = NULL;
    sb_mlp *net = NULL;
    *st = sb_params_create(&p);
    if (*st == SB_OK) *st = sb_params_parse(p, params);
    if (*st == SB_OK) *st = sb_mlp_fit(p, X, n, D, y, ny, NULL, &net);
    sb_params_free(p);
    return net;
}

static uint8_t *bytes_of(const sb_mlp *net, size_t *n) {
    *n = 0;
    if (sb_mlp_to_bytes(net, NULL, 0, n) != SB_OK) return NULL;
    uint8_t *b = malloc(*n);
    if (b && sb_mlp_to_bytes(net, b, *n, n) != SB_OK) {
        free(b);
        return NULL;
    }
    return b;
}

SB_TEST(test_mlp_same_bits_at_1_2_7_threads) {
    float X[N * D], y[N], t[N];
    problem(X, y, t);
    static const char *const P[2] = {
        "task=classifier,hidden_layer_sizes=32,16,max_iter=15,batch_size=40,random_state=4,early_stopping=true",
        "task=regressor,hidden_layer_sizes=24,activation=gelu,solver=sgd,learning_rate=invscaling,max_iter=10"};
    for (int c = 0; c < 2; c++) {
        const int32_t th[3] = {1, 2, 7};
        uint8_t *b[3] = {NULL, NULL, NULL};
        size_t nb[3] = {0, 0, 0};
        for (int k = 0; k < 3; k++) {
            SB_CHECK(sb_set_num_threads(th[k]) == SB_OK);
            sb_status st;
            sb_mlp *net = fit(P[c], X, N, c ? t : y, 1, &st);
            SB_CHECK(st == SB_OK && net);
            if (net) b[k] = bytes_of(net, &nb[k]);
            sb_mlp_free(net);
        }
        sb_set_num_threads(0);
        for (int k = 1; k < 3; k++) SB_CHECK(b[k] && nb[k] == nb[0] && memcmp(b[k], b[0], nb[0]) == 0);
        for (int k = 0; k < 3; k++) free(b[k]);
    }
}

SB_TEST(test_mlp_learns) {
    float X[N * D], y[N], t[N], pred[N], proba[N * 3];
    problem(X, y, t);
    sb_status st;
    sb_mlp *net = fit("task=classifier,hidden_layer_sizes=32,max_iter=300,learning_rate_init=0.01,random_state=1", X, N,
                      y, 1, &st);
    SB_CHECK(st == SB_OK && net);
    if (!net) return;
    SB_CHECK(sb_mlp_predict(net, X, N, D, pred) == SB_OK);
    SB_CHECK(sb_mlp_predict_proba(net, X, N, D, proba) == SB_OK);
    int right = 0;
    for (int i = 0; i < N; i++) {
        right += pred[i] == y[i];
        const double s = (double)proba[3 * i] + proba[3 * i + 1] + proba[3 * i + 2];
        SB_CHECK(fabs(s - 1.0) < 1e-5);
    }
    SB_CHECK(right >= N * 9 / 10);
    double curve[400];
    size_t nc = 0;
    SB_CHECK(sb_mlp_get_f64(net, "loss_curve_", curve, 400, &nc) == SB_OK && nc >= 2);
    SB_CHECK(nc >= 2 && curve[nc - 1] < curve[0]);
    int64_t v = 0;
    SB_CHECK(sb_mlp_get_int(net, "n_iter_", &v) == SB_OK && (size_t)v == nc);
    SB_CHECK(sb_mlp_get_int(net, "out_activation_", &v) == SB_OK && v == 2);
    sb_mlp_free(net);
    net = fit("task=regressor,hidden_layer_sizes=32,max_iter=200,learning_rate_init=0.01", X, N, t, 1, &st);
    SB_CHECK(st == SB_OK && net);
    if (!net) return;
    SB_CHECK(sb_mlp_predict(net, X, N, D, pred) == SB_OK);
    double ssr = 0, sst = 0, mean = 0;
    for (int i = 0; i < N; i++) mean += t[i] / N;
    for (int i = 0; i < N; i++) ssr += (t[i] - pred[i]) * (t[i] - pred[i]), sst += (t[i] - mean) * (t[i] - mean);
    SB_CHECK(1.0 - ssr / sst > 0.9);
    SB_CHECK(sb_mlp_predict_proba(net, X, N, D, proba) == SB_ERR_INVALID_ARGUMENT);
    sb_mlp_free(net);
}

static void refused(const char *params, const float *X, const float *y, int ny, sb_status want, const char *words) {
    sb_status st;
    sb_mlp *net = fit(params, X, N, y, ny, &st);
    SB_CHECK(st == want && net == NULL);
    SB_CHECK(strstr(sb_last_error(), words) != NULL);
    if (st != want || !strstr(sb_last_error(), words)) printf("  %s: %s\n", params, sb_last_error());
    sb_mlp_free(net);
}

SB_TEST(test_mlp_refusals_by_name) {
    float X[N * D], y[N], t[N], one[N];
    problem(X, y, t);
    for (int i = 0; i < N; i++) one[i] = 0.0f;
    refused("task=classifier", X, one, 1, SB_ERR_INVALID_INPUT, "a single class is refused");
    refused("task=classifier,solver=lbfgs", X, y, 1, SB_ERR_INVALID_ARGUMENT, "solver='lbfgs' is not built");
    refused("task=classifier,momentum=0.5", X, y, 1, SB_ERR_INVALID_ARGUMENT, "solver='sgd' only");
    refused("task=classifier,beta_1=0.5,solver=sgd", X, y, 1, SB_ERR_INVALID_ARGUMENT, "solver='adam' only");
    refused("task=classifier,learning_rate=adaptive", X, y, 1, SB_ERR_INVALID_ARGUMENT, "solver='sgd' only");
    refused("task=regressor,validation_fraction=0.2", X, t, 1, SB_ERR_INVALID_ARGUMENT, "early_stopping=true only");
    refused("task=regressor,warm_start=true", X, t, 1, SB_ERR_INVALID_ARGUMENT, "warm_start is not built");
    refused("task=regressor,activation=softplus", X, t, 1, SB_ERR_INVALID_ARGUMENT, "activation='softplus'");
    refused("task=regressor,hidden_layer_sizes=0", X, t, 1, SB_ERR_INVALID_ARGUMENT, "hidden_layer_sizes");
    refused("hidden_layer_sizes=4", X, t, 1, SB_ERR_INVALID_ARGUMENT, "task=classifier or task=regressor");
    refused("task=regressor,device=cpu-batched", X, t, 1, SB_ERR_INVALID_ARGUMENT, "no batched host path");
    refused("task=regressor,device=tpu", X, t, 1, SB_ERR_INVALID_ARGUMENT, "tpu");
    refused("task=regressor,numeric_mode=fast", X, t, 1, SB_ERR_MODE_UNSUPPORTED, "not built");
    refused("task=regressor,learning_rate_init=1e30", X, t, 1, SB_ERR_INVALID_INPUT, "not finite");
    float yb[N];
    memcpy(yb, y, sizeof yb);
    yb[3] = 0.5f;
    refused("task=classifier", X, yb, 1, SB_ERR_INVALID_INPUT, "whole numbers");
    yb[3] = 7.0f;
    refused("task=classifier", X, yb, 1, SB_ERR_INVALID_INPUT, "class code 3 has no rows");
    X[7] = NAN;
    refused("task=regressor", X, t, 1, SB_ERR_INVALID_INPUT, "NaN");
}

#define GOLDEN "/../fuzz/corpus/model/mlp-v2.sbm"

SB_TEST(test_mlp_model_file_roundtrip_and_golden) {
    float X[N * D], y[N], t[N], p1[N * 3], p2[N * 3];
    problem(X, y, t);
    sb_status st;
    sb_mlp *net = fit("task=classifier,hidden_layer_sizes=6,3,activation=tanh,max_iter=3,early_stopping=true", X, 40, y,
                      1, &st);
    SB_CHECK(st == SB_OK && net);
    if (!net) return;
    size_t n = 0;
    uint8_t *b = bytes_of(net, &n);
    SB_CHECK(b != NULL);
    char path[512];
    if (sb_test_golden(GOLDEN, path)) SB_CHECK(sb_mlp_save(net, path) == SB_OK);
    size_t got = 0;
    uint8_t *gold = sb_test_read_file(path, n, &got);
    SB_CHECK(gold != NULL);
    if (gold && b) SB_CHECK(got == n && memcmp(gold, b, n) == 0);
    free(gold);
    sb_mlp *r = NULL;
    SB_CHECK(b && sb_mlp_from_bytes(b, n, &r) == SB_OK && r);
    if (r) {
        SB_CHECK(sb_mlp_predict_proba(net, X, N, D, p1) == SB_OK && sb_mlp_predict_proba(r, X, N, D, p2) == SB_OK);
        SB_CHECK(memcmp(p1, p2, sizeof p1) == 0);
        char h1[65], h2[65];
        SB_CHECK(sb_mlp_model_digest(net, h1) == SB_OK && sb_mlp_model_digest(r, h2) == SB_OK && !strcmp(h1, h2));
    }
    sb_mlp_free(r);
    if (b) { /* a truncated file and a non-finite weight: refused by name */
        r = NULL;
        SB_CHECK(sb_mlp_from_bytes(b, n - 40, &r) != SB_OK && r == NULL);
        sb_gp *g = NULL;
        SB_CHECK(sb_gp_from_bytes(b, n, &g) == SB_ERR_INVALID_ARGUMENT && strstr(sb_last_error(), "mlp"));
    }
    free(b);
    sb_mlp_free(net);
}
