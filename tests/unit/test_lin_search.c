/*
 * test_lin_search.c: the Moré-Thuente line search (src/models/linear/
 * lin_search.c) against the paper's own results. Moré and Thuente (ACM TOMS
 * 20(3), 1994), Table 1: phi(a) = -a / (a^2 + 2), ftol 1e-3, gtol 0.1, from
 * a0 = 1e-3, 1e-1, 1e1, 1e3 the search ends after 6, 3, 1 and 4 evaluations
 * at a = 1.4, 1.4, 10 and 37. A search that brackets or extrapolates by
 * another rule takes other counts; every end point must satisfy the strong
 * Wolfe conditions.
 */
#include "sb_test.h"
#include "models/linear/lin_search.h"

#include <math.h>

static void phi1(double a, double *f, double *g) {
    const double d = a * a + 2.0;
    *f = -a / d;
    *g = (a * a - 2.0) / (d * d);
}

/* Runs a search of phi1 from a0; returns the evaluations, *a the end step. */
static int search1(double a0, double *a, sb_mt_task *end) {
    double f0, g0, f, g;
    phi1(0.0, &f0, &g0);
    sb_mt s;
    sb_mt_start(&s, a0, f0, g0);
    s.gtol = 0.1; /* the paper's table 1 (scikit-learn's fits use 0.9) */
    for (int n = 1; n <= 50; n++) {
        phi1(s.stp, &f, &g);
        *a = s.stp;
        *end = sb_mt_next(&s, f, g);
        if (*end != SB_MT_AGAIN) {
            /* the strong Wolfe conditions at the end point */
            SB_CHECK(f <= f0 + 1e-3 * *a * g0);
            SB_CHECK(fabs(g) <= 0.1 * fabs(g0));
            return n;
        }
    }
    return -1;
}

SB_TEST(test_lin_search_more_thuente_table_1) {
    const double a0[4] = {1e-3, 1e-1, 1e1, 1e3}, want[4] = {1.4, 1.4, 10.0, 37.0};
    const int nfev[4] = {6, 3, 1, 4};
    for (int i = 0; i < 4; i++) {
        double a = 0.0;
        sb_mt_task end = SB_MT_AGAIN;
        const int n = search1(a0[i], &a, &end);
        SB_CHECK(end == SB_MT_CONVERGED);
        SB_CHECK(n == nfev[i]);
        SB_CHECK(fabs(a - want[i]) <= 0.05 * want[i]);
    }
}

/* A convex quadratic whose minimizer is the first trial: accepted at once. */
SB_TEST(test_lin_search_exact_first_step_is_taken) {
    sb_mt s;
    sb_mt_start(&s, 1.0, 0.0, -2.0); /* phi(a) = a^2 - 2a, minimum at 1 */
    SB_CHECK(sb_mt_next(&s, -1.0, 0.0) == SB_MT_CONVERGED);
    SB_CHECK(s.stp == 1.0);
}
