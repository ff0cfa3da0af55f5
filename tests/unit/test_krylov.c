/* test_krylov.c: the double-precision eigensolvers of src/linalg/krylov.c
 * (sb_eigh_top_f64, sb_krylov_top): a matrix of known spectrum, agreement
 * with the core's Jacobi (sb_linalg_eigh) on small cases, a repeated largest
 * eigenvalue (a disconnected graph), and the same bits at 1, 2 and 7 threads
 * and from every lane kernel. */
#include "sb_test.h"
#include "core/internal.h"
#include "core/rng.h"
#include "linalg/linalg.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A symmetric matrix with eigenvalues lam[] and eigenvectors the columns of a
 * Householder reflector I - 2 h h^T / (h^T h) (h from Philox): in float. */
static void known(int64_t n, const double *lam, float *m, double *vecs) {
    double h[64], hh = 0.0;
    for (int64_t i = 0; i < n; i++) {
        h[i] = (double)sb_rng_unit_f32(7, 0x54455354u, (uint64_t)i) - 0.5;
        hh += h[i] * h[i];
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) vecs[i * n + j] = (i == j ? 1.0 : 0.0) - 2.0 * h[i] * h[j] / hh;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0.0;
            for (int64_t k = 0; k < n; k++) s += vecs[i * n + k] * lam[k] * vecs[j * n + k];
            m[i * n + j] = (float)s;
        }
    for (int64_t i = 0; i < n; i++) /* exactly symmetric */
        for (int64_t j = 0; j < i; j++) m[i * n + j] = m[j * n + i];
}

static double resid(int64_t n, const float *m, const double *u, int64_t ld, int64_t c, double th) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double r = -th * u[i * ld + c];
        for (int64_t j = 0; j < n; j++) r += (double)m[i * n + j] * u[j * ld + c];
        s += r * r;
    }
    return sqrt(s);
}

SB_TEST(test_krylov_known_spectrum) {
    enum { N = 40, W = 3 };
    double lam[N], vecs[N * N], w[W], u[N * W];
    float m[N * N];
    for (int i = 0; i < N; i++) lam[i] = 0.9 - 1.7 * i / N; /* distinct, descending */
    lam[5] = 0.95;                                          /* the largest sits at position 5 */
    known(N, lam, m, vecs);
    sb_krylov_info info;
    SB_CHECK(sb_krylov_top(N, m, W, W + 2, 1e-10, N, 3, w, u, &info) == SB_OK);
    SB_CHECK(fabs(w[0] - 0.95) < 1e-6 && fabs(w[1] - 0.9) < 1e-6 && fabs(w[2] - lam[1]) < 1e-6);
    SB_CHECK(w[0] >= w[1] && w[1] >= w[2]);
    SB_CHECK(info.basis <= N && info.residual <= 1e-10);
    for (int c = 0; c < W; c++) SB_CHECK(resid(N, m, u, W, c, w[c]) < 1e-9);
    /* u[:,0] is +- the reflector's column 5 */
    double dot = 0.0;
    for (int i = 0; i < N; i++) dot += u[i * W] * vecs[i * N + 5];
    SB_CHECK(fabs(fabs(dot) - 1.0) < 1e-8);
    /* the dense solver alone: the whole spectrum's top of a diagonal-free case */
    double hm[N * N], y[N * W];
    for (int i = 0; i < N * N; i++) hm[i] = (double)m[i];
    SB_CHECK(sb_eigh_top_f64(N, hm, N, W, w, y) == SB_OK);
    SB_CHECK(fabs(w[0] - 0.95) < 1e-6 && fabs(w[2] - lam[1]) < 1e-6);
    SB_CHECK(sb_eigh_top_f64(N, hm, N, N + 1, w, y) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_krylov_top(N, m, W, W - 1, 1e-10, N, 3, w, u, NULL) == SB_ERR_INVALID_ARGUMENT);
}

/* Agreement with the core's float Jacobi on small random symmetric matrices. */
SB_TEST(test_krylov_matches_jacobi) {
    enum { N = 24 };
    for (int trial = 0; trial < 3; trial++) {
        float m[N * N], wj[N], vj[N * N];
        for (int i = 0; i < N; i++)
            for (int j = 0; j <= i; j++)
                m[i * N + j] = m[j * N + i] = sb_rng_unit_f32(11 + trial, 0x4A41u, (uint64_t)(i * N + j)) - 0.5f;
        int32_t sweeps = 0;
        int64_t rot = 0;
        SB_CHECK(sb_linalg_eigh("cpu", N, m, N, wj, vj, N, &sweeps, &rot) == SB_OK);
        const int64_t want = 2 + trial;
        double w[5], u[N * 5];
        SB_CHECK(sb_krylov_top(N, m, want, want + 3, 1e-12, N, 5, w, u, NULL) == SB_OK);
        for (int64_t c = 0; c < want; c++) {
            SB_CHECK(fabs(w[c] - (double)wj[c]) < 1e-5);
            double dot = 0.0;
            for (int i = 0; i < N; i++) dot += u[i * want + c] * (double)vj[i * N + c];
            SB_CHECK(fabs(fabs(dot) - 1.0) < 1e-4);
        }
    }
}

/* A block-diagonal graph (three disconnected cliques): eigenvalue 1 thrice;
 * the three vectors span the components' indicator space. */
SB_TEST(test_krylov_repeated_eigenvalue) {
    enum { N = 30, W = 3 };
    float m[N * N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) m[i * N + j] = (i / 10 == j / 10 && i != j) ? 1.0f / 9.0f : 0.0f;
    double w[W], u[N * W];
    sb_krylov_info info;
    SB_CHECK(sb_krylov_top(N, m, W, W + 2, 1e-10, N, 0, w, u, &info) == SB_OK);
    for (int c = 0; c < W; c++) {
        SB_CHECK(fabs(w[c] - 9.0 * (double)(1.0f / 9.0f)) < 1e-12); /* 9 fl(1/9), exactly the row sum */
        /* constant on each component: u_i - u_j = 0 within a clique */
        for (int i = 0; i < N; i++) SB_CHECK(fabs(u[i * W + c] - u[(i / 10) * 10 * W + c]) < 1e-8);
    }
}

/* The same bits at 1, 2 and 7 threads, dense (n = 300) and sparse. */
SB_TEST(test_krylov_thread_counts_agree) {
    enum { N = 300, W = 6 };
    static float m[N * N], sp[N * N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++) {
            const float v = sb_rng_unit_f32(21, 0x54485244u, (uint64_t)(i * N + j)) - 0.5f;
            m[i * N + j] = m[j * N + i] = v;
            sp[i * N + j] = sp[j * N + i] = (i - j) % 17 == 3 ? v : 0.0f;
        }
    static double w0[2][W], u0[2][N * W], w[W], u[N * W];
    const int threads[3] = {1, 2, 7};
    for (int t = 0; t < 3; t++) {
        SB_CHECK(sb_set_num_threads(threads[t]) == SB_OK);
        for (int which = 0; which < 2; which++) {
            sb_krylov_info info;
            SB_CHECK(sb_krylov_top(N, which ? sp : m, W, W + 4, 1e-10, N, 9, w, u, &info) == SB_OK);
            if (t == 0) {
                memcpy(w0[which], w, sizeof w), memcpy(u0[which], u, sizeof u);
            } else {
                SB_CHECK(memcmp(w0[which], w, sizeof w) == 0);
                SB_CHECK(memcmp(u0[which], u, sizeof u) == 0);
            }
        }
    }
    SB_CHECK(sb_set_num_threads(0) == SB_OK);
}

/* The same bits from every lane kernel this machine runs (generic, AVX2,
 * AVX-512F): dense and sparse, 10 wanted vectors in blocks of 14 (partial
 * tiles and lanes), a basis grown past 128 (the reduction's rows on threads). */
SB_TEST(test_krylov_kernels_agree) {
    enum { N = 300, W = 10 };
    static float m[N * N], sp[N * N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++) {
            const float v = sb_rng_unit_f32(23, 0x4B45524Eu, (uint64_t)(i * N + j)) - 0.5f;
            m[i * N + j] = m[j * N + i] = v;
            sp[i * N + j] = sp[j * N + i] = (i - j) % 13 == 5 ? v : 0.0f;
        }
    static double w0[2][W], u0[2][N * W], w[W], u[N * W];
    const char *caps[3] = {"generic", "avx2", NULL};
    SB_CHECK(sb_set_num_threads(2) == SB_OK);
    for (int k = 0; k < 3; k++) {
        if (caps[k]) setenv("SAMEBITS_KRYLOV_KERNEL", caps[k], 1);
        else unsetenv("SAMEBITS_KRYLOV_KERNEL");
        sb_krylov_kernel_reset();
        for (int which = 0; which < 2; which++) {
            sb_krylov_info info;
            SB_CHECK(sb_krylov_top(N, which ? sp : m, W, W + 4, 1e-10, N, 4, w, u, &info) == SB_OK);
            SB_CHECK(info.basis > 128);
            if (k == 0) {
                memcpy(w0[which], w, sizeof w), memcpy(u0[which], u, sizeof u);
            } else {
                SB_CHECK(memcmp(w0[which], w, sizeof w) == 0);
                SB_CHECK(memcmp(u0[which], u, sizeof u) == 0);
            }
        }
    }
    unsetenv("SAMEBITS_KRYLOV_KERNEL");
    sb_krylov_kernel_reset();
    SB_CHECK(sb_set_num_threads(0) == SB_OK);
}

/* sb_krylov_top_csr on a sparse matrix's CSR gives sb_krylov_top's bits on
 * the dense matrix (the form the dense path builds itself), at 1 and 3
 * threads; an operator denser than n^2 / 8 is refused by name. */
SB_TEST(test_krylov_csr_equals_dense) {
    enum { N = 240, W = 4 };
    static float sp[N * N];
    static int64_t rp[N + 1];
    static int32_t ci[N * N];
    static float cv[N * N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++) {
            const float v = sb_rng_unit_f32(29, 0x43535231u, (uint64_t)(i * N + j)) - 0.5f;
            sp[i * N + j] = sp[j * N + i] = (i - j) % 11 == 4 || i == j ? v : 0.0f;
        }
    int64_t e = 0;
    for (int i = 0; i < N; i++) {
        rp[i] = e;
        for (int j = 0; j < N; j++)
            if (sp[i * N + j] != 0.0f) ci[e] = j, cv[e] = sp[i * N + j], e++;
    }
    rp[N] = e;
    SB_CHECK(e <= N * N / 8);
    static double wd[W], ud[N * W], wc[W], uc[N * W];
    const int threads[2] = {1, 3};
    for (int t = 0; t < 2; t++) {
        SB_CHECK(sb_set_num_threads(threads[t]) == SB_OK);
        SB_CHECK(sb_krylov_top(N, sp, W, W + 3, 1e-9, N, 7, wd, ud, NULL) == SB_OK);
        SB_CHECK(sb_krylov_top_csr(N, rp, ci, cv, W, W + 3, 1e-9, N, 7, wc, uc, NULL) == SB_OK);
        SB_CHECK(memcmp(wd, wc, sizeof wd) == 0);
        SB_CHECK(memcmp(ud, uc, sizeof ud) == 0);
    }
    /* another seed moves the vectors' bits (the comparison can fail) */
    SB_CHECK(sb_krylov_top_csr(N, rp, ci, cv, W, W + 3, 1e-9, N, 8, wc, uc, NULL) == SB_OK);
    SB_CHECK(memcmp(ud, uc, sizeof ud) != 0);
    const int64_t dense_rp[3] = {0, 2, 4};
    const int32_t dense_ci[4] = {0, 1, 0, 1};
    const float dense_cv[4] = {1.0f, 0.5f, 0.5f, 1.0f};
    SB_CHECK(sb_krylov_top_csr(2, dense_rp, dense_ci, dense_cv, 1, 1, 1e-9, 2, 7, wc, uc, NULL) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "n^2 / 8") != NULL);
    SB_CHECK(sb_set_num_threads(0) == SB_OK);
}
