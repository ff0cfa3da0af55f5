/*
 * test_gp_linalg.c: the Gaussian process's blocked linear algebra
 * (src/models/gp/gp_linalg.c) against the plain loops of its stated order,
 * bit for bit, at sizes below, at and across its panel and tile edges and at
 * 1, 2 and 7 threads; and against the mathematics (L L^T = K and K (-N) = -I
 * to rounding), so that a wrong formula in both cannot pass.
 */
#include "sb_test.h"
#include "samebits.h"
#include "../../src/models/gp/gp.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A symmetric positive definite K (lower triangle, +0 above): B B^T / m + I
 * from small integers, so every machine makes the same matrix. */
static void spd(double *K, int64_t n) {
    const int64_t m = 9;
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < n; c++) {
            double s = 0.0;
            if (c <= i)
                for (int64_t q = 0; q < m; q++)
                    s = s + (double)((i * 7 + q * 13) % 11 - 5) * (double)((c * 7 + q * 13) % 11 - 5);
            K[i * n + c] = c <= i ? s / (double)m + (c == i ? 1.0 : 0.0) : 0.0;
        }
}

/* The stated orders, one element at a time. */
static void ref_chol(double *A, int64_t n) {
    for (int64_t c = 0; c < n; c++)
        for (int64_t i = c; i < n; i++) {
            double s = A[i * n + c];
            for (int64_t k = 0; k < c; k++) s = s - A[i * n + k] * A[c * n + k];
            A[i * n + c] = i == c ? sqrt(s) : s / A[c * n + c];
        }
}

static void ref_inv(const double *L, double *Z, double *N, int64_t n) {
    memset(Z, 0, sizeof(double) * (size_t)(n * n));
    memset(N, 0, sizeof(double) * (size_t)(n * n));
    for (int64_t c = 0; c < n; c++)
        for (int64_t i = c; i < n; i++) {
            double s = i == c ? 1.0 : 0.0;
            for (int64_t k = c; k < i; k++) s = s - L[i * n + k] * Z[k * n + c];
            Z[i * n + c] = s / L[i * n + i];
        }
    for (int64_t a = 0; a < n; a++)
        for (int64_t c = 0; c <= a; c++) {
            double s = 0.0;
            for (int64_t i = a; i < n; i++) s = s - Z[i * n + a] * Z[i * n + c];
            N[a * n + c] = s;
        }
}

SB_TEST(test_gp_linalg_stated_order_at_1_2_7_threads) {
    const int64_t sizes[] = {1, 3, 8, 63, 64, 65, 131, 300};
    const int32_t th[3] = {1, 2, 7};
    for (size_t q = 0; q < sizeof sizes / sizeof sizes[0]; q++) {
        const int64_t n = sizes[q];
        const size_t nn = (size_t)(n * n);
        double *K = malloc(sizeof(double) * nn), *R = malloc(sizeof(double) * nn);
        double *RZ = malloc(sizeof(double) * nn), *RN = malloc(sizeof(double) * nn);
        double *A = malloc(sizeof(double) * nn), *Z = malloc(sizeof(double) * nn);
        SB_CHECK(K && R && RZ && RN && A && Z);
        if (!K || !R || !RZ || !RN || !A || !Z) return;
        spd(K, n);
        memcpy(R, K, sizeof(double) * nn);
        ref_chol(R, n);
        ref_inv(R, RZ, RN, n);
        /* the mathematics: L L^T = K and K N = -I, to rounding */
        double e1 = 0.0, e2 = 0.0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t c = 0; c <= i; c++) {
                double s = 0.0, t = 0.0;
                for (int64_t k = 0; k <= c; k++) s = s + R[i * n + k] * R[c * n + k];
                for (int64_t k = 0; k < n; k++) {
                    const double kik = k <= i ? K[i * n + k] : K[k * n + i];
                    const double nkc = k >= c ? RN[k * n + c] : RN[c * n + k];
                    t = t + kik * nkc;
                }
                e1 = fmax(e1, fabs(s - K[i * n + c]));
                e2 = fmax(e2, fabs(t + (i == c ? 1.0 : 0.0)));
            }
        SB_CHECK(e1 < 1e-12 && e2 < 1e-9);
        for (int k = 0; k < 3; k++) {
            SB_CHECK(sb_set_num_threads(th[k]) == SB_OK);
            memcpy(A, K, sizeof(double) * nn);
            SB_CHECK(sb_gp_cholesky(A, n) == -1);
            SB_CHECK(memcmp(A, R, sizeof(double) * nn) == 0);
            SB_CHECK(sb_gp_neg_inverse(A, Z, A, n) == SB_OK);
            SB_CHECK(memcmp(Z, RZ, sizeof(double) * nn) == 0);
            SB_CHECK(memcmp(A, RN, sizeof(double) * nn) == 0);
        }
        sb_set_num_threads(0);
        free(K), free(R), free(RZ), free(RN), free(A), free(Z);
    }
}

SB_TEST(test_gp_linalg_refuses_the_first_bad_pivot) {
    /* column 70 (in the second panel) copies column 69: pivot 70 is 0 */
    const int64_t n = 100;
    double *K = malloc(sizeof(double) * (size_t)(n * n));
    SB_CHECK(K != NULL);
    if (!K) return;
    spd(K, n);
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c <= i; c++) K[i * n + c] = (double)((i < 70 ? i : 69) < (c < 70 ? c : 69) ? (i < 70 ? i : 69) : (c < 70 ? c : 69)) + 1.0;
    SB_CHECK(sb_gp_cholesky(K, n) == 70);
    free(K);
}
