/* test_linalg_solve.c: the C contract of the factorizations, solves,
 * eigensolver and random matrices (include/samebits.h, sb_linalg_*): leading
 * dimensions, in-place use, named refusals, and the exact helpers of
 * kernels/linalg_solve.h. The bits themselves are the fixture's
 * (linalg-solve) and tests/python/test_py_linalg_solve.py's. */
#include "sb_test.h"
#include "core/internal.h"
#include "linalg/linalg.h"
#include "kernels/linalg_solve.h"
#include <string.h>

/* A small SPD matrix: 4 I + the all-ones matrix / 2, row-major with ld. */
static void spd(float *a, int64_t n, int64_t ld) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < ld; j++) a[i * ld + j] = j < n ? (i == j ? 4.5f : 0.5f) : 99.0f;
}

SB_TEST(test_linalg_solve_helpers_are_exact) {
    SB_CHECK(sb_ls_ilogb(sb_f2u(1.0f)) == 0);
    SB_CHECK(sb_ls_ilogb(sb_f2u(3.9f)) == 1);
    SB_CHECK(sb_ls_ilogb(1u) == -149);        /* the smallest subnormal */
    SB_CHECK(sb_ls_ilogb(0x007fffffu) == -127); /* the largest subnormal */
    SB_CHECK(sb_ls_chol_k(8.0f) == 1 && sb_ls_chol_k(0.25f) == -1 && sb_ls_chol_k(0.125f) == -2);
    SB_CHECK(sb_ls_chol_k(-3.0f) == 0 && sb_ls_chol_k(0.0f) == 0);
    SB_CHECK(sb_ls_scale(1.0f, 200) == 0x1p127f * 0x1p73f);
    SB_CHECK(sb_ls_scale(0x1p-149f, 149) == 1.0f);
    SB_CHECK(sb_ls_scale(1.0f, -150) == 0.0f); /* 2^-150 rounds to even: 0 */
    SB_CHECK(sb_ls_sym_unit(0u) == -1.0f + 0x1p-24f && sb_ls_sym_unit(0xffffffffu) == 1.0f - 0x1p-24f);
    SB_CHECK(sb_ls_sym_unit(0x80000000u) == 0x1p-24f);
    SB_CHECK(sb_f2u(sb_ls_canon(0.0f / 0.0f * -1.0f)) == SB_LS_QNAN);
    SB_CHECK(sb_f2u(sb_ls_signed(0.0f, 1)) == 0u && sb_f2u(sb_ls_signed(-0.0f, 0)) == 0u);
    /* the dot product of ones is exact at any length */
    float x[57], y[57];
    for (int k = 0; k < 57; k++) x[k] = y[k] = 1.0f;
    SB_CHECK(sb_ls_dot(x, 1, y, 1, 57) == 57.0f);
    SB_CHECK(sb_ls_dot(x, 1, y, 1, 0) == 0.0f);
}

SB_TEST(test_linalg_cholesky_contract) {
    enum { N = 5, LD = 7 };
    float a[N * LD], l[N * LD], l2[N * N], in_place[N * LD];
    spd(a, N, LD);
    SB_CHECK(sb_linalg_cholesky(NULL, N, a, LD, l, LD) == SB_OK);
    spd(in_place, N, LD);
    SB_CHECK(sb_linalg_cholesky("cpu", N, in_place, LD, in_place, LD) == SB_OK);
    SB_CHECK(sb_linalg_cholesky("cpu", N, a, LD, l2, N) == SB_OK);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            SB_CHECK(sb_f2u(l[i * LD + j]) == sb_f2u(l2[i * N + j]));
            SB_CHECK(sb_f2u(in_place[i * LD + j]) == sb_f2u(l2[i * N + j]));
            if (j > i) SB_CHECK(sb_f2u(l2[i * N + j]) == 0u);
        }
    /* refusals */
    SB_CHECK(sb_linalg_cholesky("cpu", -1, a, LD, l, LD) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_linalg_cholesky("cpu", N, a, N - 1, l, LD) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_linalg_cholesky("cpu", N, NULL, LD, l, LD) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_linalg_cholesky("cpu", N, a, LD, a + 1, LD) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "overlaps") != NULL);
    SB_CHECK(sb_linalg_cholesky("cpu", SB_LINALG_MAX_N + 1, a, SB_LINALG_MAX_N + 1, l, SB_LINALG_MAX_N + 1) ==
             SB_ERR_LIMIT);
    SB_CHECK(sb_linalg_cholesky("tpu", N, a, LD, l, LD) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_linalg_cholesky("cpu", 0, NULL, 1, NULL, 1) == SB_OK);
    spd(a, N, LD);
    a[3 * LD + 3] = -2.0f;
    int64_t bad = -7;
    SB_CHECK(sb_linalg_cholesky_ex("cpu", N, a, LD, l2, N, &bad) == SB_ERR_INVALID_INPUT);
    SB_CHECK(bad == 3);
    SB_CHECK(strstr(sb_last_error(), "column 3 ") != NULL);
    for (int e = 0; e < N * N; e++) SB_CHECK(sb_f2u(l2[e]) == 0u); /* never half-written */
    spd(a, N, LD);
    a[4 * LD + 1] = 1.0f / 0.0f;
    SB_CHECK(sb_linalg_cholesky("cpu", N, a, LD, l, LD) == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "(4, 1)") != NULL);
}

SB_TEST(test_linalg_solve_triangular_contract) {
    enum { N = 6, R = 3 };
    float a[N * N], l[N * N], b[N * R], x[N * R], xi[N * R];
    spd(a, N, N);
    SB_CHECK(sb_linalg_cholesky("cpu", N, a, N, l, N) == SB_OK);
    for (int e = 0; e < N * R; e++) b[e] = (float)(e % 5) - 2.0f;
    for (int trans = 0; trans < 2; trans++) {
        SB_CHECK(sb_linalg_solve_triangular("cpu", trans, N, R, l, N, b, R, x, R) == SB_OK);
        memcpy(xi, b, sizeof xi);
        SB_CHECK(sb_linalg_solve_triangular("cpu", trans, N, R, l, N, xi, R, xi, R) == SB_OK);
        SB_CHECK(memcmp(x, xi, sizeof x) == 0);
        /* column by column gives the same bits */
        for (int c = 0; c < R; c++) {
            float bc[N], xc[N];
            for (int i = 0; i < N; i++) bc[i] = b[i * R + c];
            SB_CHECK(sb_linalg_solve_triangular("cpu", trans, N, 1, l, N, bc, 1, xc, 1) == SB_OK);
            for (int i = 0; i < N; i++) SB_CHECK(sb_f2u(xc[i]) == sb_f2u(x[i * R + c]));
        }
    }
    SB_CHECK(sb_linalg_solve_triangular("cpu", 2, N, R, l, N, b, R, x, R) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_linalg_solve_triangular("cpu", 0, N, R, l, N, b, R, b + 1, R) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_linalg_solve_triangular("cpu", 0, N, R, l, N, b, R, l, R) == SB_ERR_INVALID_ARGUMENT);
    l[2 * N + 2] = 0.0f;
    SB_CHECK(sb_linalg_solve_triangular("cpu", 0, N, R, l, N, b, R, x, R) == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "(2, 2)") != NULL);
    /* an overflow's NaN (0 * inf in the dot) is the canonical one */
    float big[4] = {0x1p-100f, 0.0f, 0.0f, 0x1p-100f}, rhs[2] = {0x1p100f, 0x1p100f}, out[2];
    SB_CHECK(sb_linalg_solve_triangular("cpu", 0, 2, 1, big, 2, rhs, 1, out, 1) == SB_OK);
    SB_CHECK(out[0] == 1.0f / 0.0f && sb_f2u(out[1]) == SB_LS_QNAN);
}

SB_TEST(test_linalg_eigh_contract) {
    enum { N = 7, LD = 9 };
    float a[N * LD], w[N], w2[N], v[N * LD];
    spd(a, N, LD);
    int32_t sweeps = -1;
    int64_t rot = -1;
    SB_CHECK(sb_linalg_eigh("cpu", N, a, LD, w, v, LD, &sweeps, &rot) == SB_OK);
    SB_CHECK(sweeps >= 2 && rot > 0);
    SB_CHECK(sb_linalg_eigh("cpu", N, a, LD, w2, NULL, 0, NULL, NULL) == SB_OK);
    SB_CHECK(memcmp(w, w2, sizeof w) == 0);
    /* 4 I + J/2: eigenvalues 4 + 7/2 once and 4 six times (to rounding) */
    SB_CHECK(w[0] > 7.49f && w[0] < 7.51f);
    for (int k = 1; k < N; k++) SB_CHECK(w[k] > 3.99f && w[k] < 4.01f && w[k] <= w[k - 1]);
    SB_CHECK(sb_linalg_eigh("cpu", N, a, LD, w, w, LD, NULL, NULL) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_linalg_eigh("cpu", N, a, LD, a, NULL, 0, NULL, NULL) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_linalg_eigh("cpu", SB_LINALG_MAX_EIGH_N + 1, a, SB_LINALG_MAX_EIGH_N + 1, w, NULL, 0, NULL, NULL) ==
             SB_ERR_LIMIT);
    /* a diagonal matrix: one sweep, no rotation */
    float d[9] = {1.0f, 0.0f, 0.0f, 0.0f, -3.0f, 0.0f, 0.0f, 0.0f, 1.0f}, dw[3], dv[9];
    SB_CHECK(sb_linalg_eigh("cpu", 3, d, 3, dw, dv, 3, &sweeps, &rot) == SB_OK);
    SB_CHECK(sweeps == 1 && rot == 0 && dw[0] == 1.0f && dw[1] == 1.0f && dw[2] == -3.0f);
    SB_CHECK(dv[0 * 3 + 0] == 1.0f && dv[2 * 3 + 1] == 1.0f && dv[1 * 3 + 2] == 1.0f);
}

SB_TEST(test_linalg_random_contract) {
    float o[6 * 4], o2[6 * 5];
    SB_CHECK(sb_linalg_random_matrix("cpu", SB_LINALG_NORMAL, 9, 6, 4, o, 4) == SB_OK);
    SB_CHECK(sb_linalg_random_matrix("cpu", SB_LINALG_NORMAL, 9, 6, 4, o2, 5) == SB_OK);
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 4; c++) SB_CHECK(sb_f2u(o[r * 4 + c]) == sb_f2u(o2[r * 5 + c]));
    SB_CHECK(sb_linalg_random_matrix("cpu", 2, 9, 6, 4, o, 4) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_linalg_random_matrix("cpu", SB_LINALG_RADEMACHER, 9, 6, 4, o, 4) == SB_OK);
    for (int e = 0; e < 24; e++) SB_CHECK(o[e] == 1.0f || o[e] == -1.0f);
    float a[3 * 6], y[3 * 4], om[6 * 4], g[3 * 4];
    for (int e = 0; e < 18; e++) a[e] = (float)e - 8.5f;
    SB_CHECK(sb_linalg_projection("cpu", SB_LINALG_NORMAL, 5, 3, 6, 4, a, 6, y, 4) == SB_OK);
    SB_CHECK(sb_linalg_random_matrix("cpu", SB_LINALG_NORMAL, 5, 6, 4, om, 4) == SB_OK);
    SB_CHECK(sb_gemm("cpu", 0, 0, 3, 4, 6, a, 6, om, 4, g, 4) == SB_OK);
    SB_CHECK(memcmp(y, g, sizeof y) == 0);
    SB_CHECK(sb_linalg_projection("cpu", SB_LINALG_NORMAL, 5, 3, 6, 4, a, 6, a, 4) == SB_ERR_INVALID_ARGUMENT);
}
