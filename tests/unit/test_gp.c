/*
 * test_gp.c: gaussian process regression (docs/gaussian-process.md): the same
 * bits at 1, 2 and 7 threads, interpolation of noise-free data, the analytic
 * gradient of the log marginal likelihood against central differences, the
 * named refusals (a length scale or bound of 0, Matern nu, a missing value,
 * duplicate points without jitter, parameters that would do nothing), and the
 * model file: a round trip, the golden file tests/fuzz/corpus/model/gp-v2.sbm
 * rewritten bit for bit by the same fit (SB_WRITE_GOLDEN=1 rewrites it, by
 * hand, at a format change), and a flipped byte refused.
 */
#include "sb_test.h"
#include "samebits.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 45
#define D 2

/* A fixed problem: x on a lattice with offsets (multiples of 1/64), y smooth plus a small wiggle. */
static void problem(double *X, double *y) {
    for (int i = 0; i < N; i++) {
        X[i * D] = (double)((i * 37) % 97) / 16.0 - 3.0;
        X[i * D + 1] = (double)((i * 53) % 89) / 16.0 - 2.75;
        y[i] = X[i * D] * X[i * D] / 8.0 - X[i * D + 1] / 4.0 + (double)((i * 29) % 13 - 6) / 64.0;
    }
}

static sb_gp *fit(const char *kernel, const char *params, const double *X, int n, const double *y, sb_status *st) {
    sb_params *p = NULL;
    sb_gp *g = NULL;
    *st = sb_params_create(&p);
    if (*st == SB_OK) *st = sb_params_parse(p, params);
    if (*st == SB_OK) *st = sb_gp_fit(kernel, p, X, n, D, y, 1, NULL, &g);
    sb_params_free(p);
    return g;
}

static uint8_t *bytes_of(const sb_gp *g, size_t *n) {
    *n = 0;
    if (sb_gp_to_bytes(g, NULL, 0, n) != SB_OK) return NULL;
    uint8_t *b = malloc(*n);
    if (b && sb_gp_to_bytes(g, b, *n, n) != SB_OK) {
        free(b);
        return NULL;
    }
    return b;
}

static const char *const K_OPT = "ConstantKernel(1.0, (1e-3, 1e3)) * RBF([1.0, 1.0], (1e-2, 1e2)) + WhiteKernel(0.1, (1e-5, 1e1))";
static const char *const P_OPT = "normalize_y=true,n_restarts_optimizer=2,random_state=3";

SB_TEST(test_gp_same_bits_at_1_2_7_threads) {
    double X[N * D], y[N], q[6 * D], mean[3][6], sd[3][6];
    problem(X, y);
    for (int i = 0; i < 6 * D; i++) q[i] = (double)(i % 7) / 4.0 - 1.0;
    const int32_t th[3] = {1, 2, 7};
    uint8_t *b[3] = {NULL, NULL, NULL};
    size_t nb[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        SB_CHECK(sb_set_num_threads(th[k]) == SB_OK);
        sb_status st;
        sb_gp *g = fit(K_OPT, P_OPT, X, N, y, &st);
        SB_CHECK(st == SB_OK && g);
        if (!g) continue;
        b[k] = bytes_of(g, &nb[k]);
        SB_CHECK(sb_gp_predict(g, q, 6, D, mean[k], sd[k], NULL) == SB_OK);
        int64_t nit = 0;
        SB_CHECK(sb_gp_get_int(g, "nit", &nit) == SB_OK && nit > 0);
        sb_gp_free(g);
    }
    sb_set_num_threads(0);
    for (int k = 1; k < 3; k++) {
        SB_CHECK(b[k] && nb[k] == nb[0] && memcmp(b[k], b[0], nb[0]) == 0);
        SB_CHECK(memcmp(mean[k], mean[0], sizeof mean[0]) == 0 && memcmp(sd[k], sd[0], sizeof sd[0]) == 0);
    }
    for (int k = 0; k < 3; k++) free(b[k]);
}

SB_TEST(test_gp_interpolates_noise_free_data) {
    double X[N * D], y[N], mean[N], sd[N];
    problem(X, y);
    sb_status st;
    sb_gp *g = fit("RBF(1.5, \"fixed\")", "optimizer=none,alpha=1e-10", X, 12, y, &st);
    SB_CHECK(st == SB_OK && g);
    if (!g) return;
    SB_CHECK(sb_gp_predict(g, X, 12, D, mean, sd, NULL) == SB_OK);
    for (int i = 0; i < 12; i++) {
        SB_CHECK(fabs(mean[i] - y[i]) < 1e-6);
        SB_CHECK(sd[i] >= 0.0 && sd[i] < 1e-3);
    }
    /* far from the data: the prior (mean 0, std 1) */
    const double far[2] = {50.0, -50.0};
    SB_CHECK(sb_gp_predict(g, far, 1, D, mean, sd, NULL) == SB_OK);
    SB_CHECK(fabs(mean[0]) < 1e-12 && fabs(sd[0] - 1.0) < 1e-12);
    sb_gp_free(g);
}

SB_TEST(test_gp_gradient_matches_central_differences) {
    double X[N * D], y[N];
    problem(X, y);
    static const char *const kernels[] = {
        "ConstantKernel(2.0) * RBF([0.7, 1.3]) + WhiteKernel(0.05)",
        "Matern(0.8, nu=0.5) + Matern([1.1, 0.6], nu=1.5) * ConstantKernel(0.5) + WhiteKernel(0.1)",
        "Matern(1.2, nu=2.5) + RationalQuadratic(0.9, 1.7) + WhiteKernel(0.1)"};
    for (int k = 0; k < 3; k++) {
        sb_status st;
        sb_gp *g = fit(kernels[k], "optimizer=none", X, N, y, &st);
        SB_CHECK(st == SB_OK && g);
        if (!g) continue;
        double th[16], gr[16], l0;
        size_t nt = 0;
        SB_CHECK(sb_gp_get_array(g, "theta", th, 16, &nt) == SB_OK && nt >= 3);
        SB_CHECK(sb_gp_log_marginal_likelihood(g, th, (int64_t)nt, &l0, gr) == SB_OK);
        for (size_t i = 0; i < nt; i++) {
            const double h = 1e-5, keep = th[i];
            double lp, lm;
            th[i] = keep + h;
            SB_CHECK(sb_gp_log_marginal_likelihood(g, th, (int64_t)nt, &lp, NULL) == SB_OK);
            th[i] = keep - h;
            SB_CHECK(sb_gp_log_marginal_likelihood(g, th, (int64_t)nt, &lm, NULL) == SB_OK);
            th[i] = keep;
            const double fd = (lp - lm) / (2.0 * h);
            SB_CHECK(fabs(fd - gr[i]) <= 1e-5 * (1.0 + fabs(gr[i])));
        }
        sb_gp_free(g);
    }
}

static void refused(const char *kernel, const char *params, const double *X, int n, const double *y, sb_status want,
                    const char *words) {
    sb_status st;
    sb_gp *g = fit(kernel, params, X, n, y, &st);
    SB_CHECK(st == want && g == NULL);
    SB_CHECK(strstr(sb_last_error(), words) != NULL);
    if (st != want || !strstr(sb_last_error(), words)) printf("  %s | %s: %s\n", kernel, params, sb_last_error());
    sb_gp_free(g);
}

SB_TEST(test_gp_refusals_by_name) {
    double X[N * D], y[N];
    problem(X, y);
    refused("RBF(0.0)", "", X, N, y, SB_ERR_INVALID_ARGUMENT, "length_scale=0 must be > 0");
    refused("RBF([1.0, 0.0])", "", X, N, y, SB_ERR_INVALID_ARGUMENT, "length_scale=0 must be > 0");
    refused("RBF([1.0, 1.0, 1.0])", "", X, N, y, SB_ERR_INVALID_ARGUMENT, "3 length scales for 2 features");
    refused("RBF(1.0, (0.0, 1.0))", "", X, N, y, SB_ERR_INVALID_ARGUMENT, "0 < lo <= hi");
    refused("Matern(1.0, nu=3.5)", "", X, N, y, SB_ERR_INVALID_ARGUMENT, "nu=3.5 is not built");
    refused("ExpSineSquared()", "", X, N, y, SB_ERR_INVALID_ARGUMENT, "is not a kernel this library builds");
    refused("RBF(1.0) +", "", X, N, y, SB_ERR_INVALID_ARGUMENT, "a kernel name expected");
    refused("RBF(1.0)", "optimizer=none,n_restarts_optimizer=2", X, N, y, SB_ERR_INVALID_ARGUMENT, "would do nothing");
    refused("RBF(1.0, \"fixed\")", "n_restarts_optimizer=2", X, N, y, SB_ERR_INVALID_ARGUMENT, "would do nothing");
    refused("RBF(1.0)", "kernel_size=2", X, N, y, SB_ERR_INVALID_ARGUMENT, "unknown parameter 'kernel_size'");
    refused("RBF(1.0)", "optimizer=adam", X, N, y, SB_ERR_INVALID_ARGUMENT, "optimizer='adam' is not built");
    refused("RBF(1.0)", "alpha=-1", X, N, y, SB_ERR_INVALID_ARGUMENT, "alpha='-1'");
    refused("RBF(1.0)", "device=tpu", X, N, y, SB_ERR_INVALID_ARGUMENT, "tpu");
    refused("RBF(1.0)", "device=cpu-batched", X, N, y, SB_ERR_INVALID_ARGUMENT, "no batched host path");
    /* duplicate points, no noise, no jitter: the Cholesky's pivot is not > 0 */
    double Xd[8 * D], yd[8];
    for (int i = 0; i < 8; i++) {
        Xd[i * D] = (double)(i % 4), Xd[i * D + 1] = 1.0, yd[i] = (double)i;
    }
    refused("RBF(1.5)", "optimizer=none,alpha=0", Xd, 8, yd, SB_ERR_INVALID_INPUT, "not positive definite");
    sb_status st;
    sb_gp *g = fit("RBF(1.5)", "optimizer=none,alpha=1e-6", Xd, 8, yd, &st); /* the stated jitter */
    SB_CHECK(st == SB_OK && g);
    sb_gp_free(g);
    g = fit("RBF(1.5) + WhiteKernel(0.1)", "", Xd, 8, yd, &st); /* or a WhiteKernel */
    SB_CHECK(st == SB_OK && g);
    double bad[3] = {1.0, 2.0, 3.0}, l;
    if (g) {
        SB_CHECK(sb_gp_log_marginal_likelihood(g, bad, 3, &l, NULL) == SB_ERR_INVALID_ARGUMENT);
        SB_CHECK(sb_gp_predict(g, X, 2, 3, bad, NULL, NULL) == SB_ERR_INVALID_ARGUMENT);
    }
    sb_gp_free(g);
    X[3] = NAN;
    refused("RBF(1.0)", "", X, N, y, SB_ERR_INVALID_INPUT, "NaN");
}

#define GOLDEN "/../fuzz/corpus/model/gp-v2.sbm"

SB_TEST(test_gp_model_file_roundtrip_and_golden) {
    double X[N * D], y[N], q[4 * D], m1[4], m2[4], s1[4], s2[4];
    problem(X, y);
    for (int i = 0; i < 4 * D; i++) q[i] = (double)i / 8.0 - 0.5;
    sb_status st;
    sb_gp *g = fit("ConstantKernel(1.0) * Matern([1.0, 2.0], nu=2.5) + WhiteKernel(0.1)", "normalize_y=true", X, 20, y,
                   &st);
    SB_CHECK(st == SB_OK && g);
    if (!g) return;
    size_t n = 0;
    uint8_t *b = bytes_of(g, &n);
    SB_CHECK(b != NULL);
    char path[512];
    if (sb_test_golden(GOLDEN, path)) SB_CHECK(sb_gp_save(g, path) == SB_OK);
    size_t got = 0;
    uint8_t *gold = sb_test_read_file(path, n, &got);
    SB_CHECK(gold != NULL);
    if (gold && b) SB_CHECK(got == n && memcmp(gold, b, n) == 0); /* the writer's bytes are the golden file's */
    free(gold);
    sb_gp *r = NULL;
    SB_CHECK(b && sb_gp_from_bytes(b, n, &r) == SB_OK && r);
    if (r) {
        SB_CHECK(sb_gp_predict(g, q, 4, D, m1, s1, NULL) == SB_OK && sb_gp_predict(r, q, 4, D, m2, s2, NULL) == SB_OK);
        SB_CHECK(memcmp(m1, m2, sizeof m1) == 0 && memcmp(s1, s2, sizeof s1) == 0);
        char h1[65], h2[65];
        SB_CHECK(sb_gp_model_digest(g, h1) == SB_OK && sb_gp_model_digest(r, h2) == SB_OK && !strcmp(h1, h2));
    }
    sb_gp_free(r);
    /* a value of alpha_ changed (digest recomputed would still not match the data): refused by name */
    if (b) {
        uint8_t *c = malloc(n);
        memcpy(c, b, n);
        c[n - 32 - 3] ^= 0x10;
        r = NULL;
        SB_CHECK(sb_gp_from_bytes(c, n, &r) == SB_ERR_INVALID_INPUT && r == NULL);
        free(c);
    }
    /* another family's loader refuses it by name */
    sb_ets *e = NULL;
    SB_CHECK(b && sb_ets_from_bytes(b, n, &e) == SB_ERR_INVALID_ARGUMENT && strstr(sb_last_error(), "gp"));
    free(b);
    sb_gp_free(g);
}

/* Each GPU backend present (opencl: PoCL here; cuda and NVIDIA's OpenCL on
 * the GPU host) gives the CPU's bytes: the model file (theta, alpha_, the
 * likelihood, every optimizer start and restart behind them), predict with
 * std and with cov, sample_y, the likelihood and its gradient at another
 * theta; 150 rows cross the device's 64-column panels. An absent device is
 * skipped, unless SAMEBITS_PARITY_REQUIRE names it. */
SB_TEST(test_gp_devices_give_the_cpu_bits) {
    enum { M = 150, Q = 9 };
    static double X[M * D], y[M], Xq[Q * D];
    for (int i = 0; i < M; i++) {
        X[i * D] = (double)((i * 37) % 197) / 32.0 - 3.0;
        X[i * D + 1] = (double)((i * 53) % 189) / 32.0 - 2.75;
        y[i] = X[i * D] * X[i * D] / 8.0 - X[i * D + 1] / 4.0 + (double)((i * 29) % 13 - 6) / 64.0;
    }
    for (int i = 0; i < Q * D; i++) Xq[i] = (double)((i * 71) % 61) / 16.0 - 2.0;
    static const char *const devs[] = {"opencl", "cuda"};
    const char *req = getenv("SAMEBITS_PARITY_REQUIRE");
    static double out[2][Q + Q + Q * Q + Q * 3 + 8];
    static uint8_t *bytes[2];
    size_t nb[2] = {0, 0};
    for (int di = 0; di < 2; di++) {
        int ok = 1;
        for (int side = 0; side < 2 && ok; side++) {
            char params[160];
            snprintf(params, sizeof params, "%s,device=%s", P_OPT, side == 0 ? "cpu" : devs[di]);
            sb_status st;
            sb_gp *g = fit(K_OPT, params, X, M, y, &st);
            if (!g) {
                SB_CHECK(side == 1 && st == SB_ERR_BACKEND_UNAVAILABLE);
                SB_CHECK(!(req && strstr(req, devs[di]))); /* required: must run */
                printf("  gp on %s: skipped (%s)\n", devs[di], sb_last_error());
                free(bytes[0]);
                bytes[0] = NULL;
                ok = 0;
                break;
            }
            double *o = out[side];
            SB_CHECK(sb_gp_predict(g, Xq, Q, D, o, o + Q, NULL) == SB_OK);
            SB_CHECK(sb_gp_predict(g, Xq, Q, D, o + 2 * Q + Q * Q, NULL, o + 2 * Q) == SB_OK); /* the mean again, and cov */
            SB_CHECK(sb_gp_sample_y(g, Xq, Q, D, 2, 17, o + 3 * Q + Q * Q) == SB_OK);
            double th[4] = {0.3, -0.2, 0.4, -1.5};
            SB_CHECK(sb_gp_log_marginal_likelihood(g, th, 4, o + 5 * Q + Q * Q, o + 5 * Q + Q * Q + 1) == SB_OK);
            bytes[side] = bytes_of(g, &nb[side]);
            sb_gp_free(g);
        }
        if (!ok) continue;
        SB_CHECK(bytes[0] && bytes[1] && nb[0] == nb[1] && !memcmp(bytes[0], bytes[1], nb[0]));
        SB_CHECK(!memcmp(out[0], out[1], sizeof out[0]));
        printf("  gp on %s: the cpu's model bytes, predictions, draws and gradient\n", devs[di]);
        free(bytes[0]), free(bytes[1]);
        bytes[0] = bytes[1] = NULL;
    }
}
