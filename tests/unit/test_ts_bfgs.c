/*
 * test_ts_bfgs.c: the time-series fits' BFGS (kernels/ts_bfgs.h, the text
 * kernels/arima.h instantiates as ak_bfgs for the host's and every device's
 * fit), instantiated here over test functions. It finds Rosenbrock's
 * minimum from the classic start and a quadratic's exactly enough; its
 * three outcomes are reachable (a non-finite start and a non-finite finite
 * difference fail by name, the start's value still in the trace; a low
 * iteration cap reports the cap); a run is a pure function of its inputs
 * (the same bits twice); and an instance over a strided vector (a device's
 * layout, stride 3) gives the stride-1 instance's bits.
 */
#include "sb_test.h"
#include "kernels/compat.h"
#include <math.h>
#include <string.h>

/* The objective of a stride-1 run: a plain function of x, its evaluations
 * counted. */
typedef struct plain_ctx {
    double (*f)(const double *x);
    int evals;
} plain_ctx;

static double plain_eval(plain_ctx *c, const double *x) {
    c->evals++;
    return c->f(x);
}

#define TSB_NAME tsb_test_plain
#define TSB_CTX plain_ctx
#define TSB_EVAL(c, x) plain_eval((c), (x))
#include "kernels/ts_bfgs.h"

static double rosen(const double *x) {
    const double a = 1.0 - x[0], b = x[1] - x[0] * x[0];
    return a * a + 100.0 * (b * b);
}

/* +inf where x[0] > 2: a finite difference across that edge fails. */
static double edge(const double *x) {
    if (x[0] > 2.0) return INFINITY;
    const double d = x[0] - 3.0;
    return d * d + x[1] * x[1];
}

static double quad(const double *x) {
    const double a = x[0] - 1.0, b = x[1] + 2.0;
    return a * a + 10.0 * (b * b);
}

static int32_t run(double (*f)(const double *), double *x, double *ws, int32_t maxit, double h, double *trace,
                   int32_t *nit, double *fmin, int *evals) {
    plain_ctx c = {f, 0};
    sb_i32 it = 0;
    const sb_i32 st = tsb_test_plain(&c, 2, 1, x, ws, maxit, 1e-12, h, trace, &it, fmin);
    *nit = it;
    if (evals) *evals = c.evals;
    return st;
}

typedef struct strided_ctx {
    sb_i64 sw;
} strided_ctx;

static double rosen_strided(const strided_ctx *c, const double *x) {
    const double x0 = x[0], x1 = x[c->sw];
    const double a = 1.0 - x0, b = x1 - x0 * x0;
    return a * a + 100.0 * (b * b);
}

#define TSB_NAME tsb_test_strided
#define TSB_CTX strided_ctx
#define TSB_EVAL(c, x) rosen_strided((c), (x))
#include "kernels/ts_bfgs.h"

SB_TEST(test_ts_bfgs_rosenbrock) {
    double x[2] = {-1.2, 1.0}, ws[TSB_WS(2)], tr[201], fmin = 0.0;
    int32_t nit = 0;
    int evals = 0;
    const int32_t st = run(rosen, x, ws, 200, 1e-6, tr, &nit, &fmin, &evals);
    SB_CHECK(st == TSB_CONVERGED);
    SB_CHECK(fabs(x[0] - 1.0) < 1e-4 && fabs(x[1] - 1.0) < 1e-4);
    SB_CHECK(fmin < 1e-8 && nit > 5 && evals > nit);
    SB_CHECK(tr[0] == rosen((const double[]){-1.2, 1.0}));
    for (int32_t i = 1; i <= nit; i++) SB_CHECK(tr[i] <= tr[i - 1]); /* fmin never rises */
    /* the same inputs, the same bits */
    double y[2] = {-1.2, 1.0}, f2 = 0.0;
    int32_t nit2 = 0;
    SB_CHECK(run(rosen, y, ws, 200, 1e-6, NULL, &nit2, &f2, NULL) == st);
    SB_CHECK(memcmp(x, y, sizeof x) == 0 && memcmp(&fmin, &f2, 8) == 0 && nit2 == nit);
    /* a stride-3 instance of the same text: the same bits */
    double xs[6] = {-1.2, 7.0, 7.0, 1.0, 7.0, 7.0}, wss[3 * TSB_WS(2)], f3 = 0.0;
    sb_i32 nit3 = 0;
    strided_ctx c = {3};
    SB_CHECK(tsb_test_strided(&c, 2, 3, xs, wss, 200, 1e-12, 1e-6, NULL, &nit3, &f3) == st);
    SB_CHECK(memcmp(&xs[0], &x[0], 8) == 0 && memcmp(&xs[3], &x[1], 8) == 0 && memcmp(&f3, &fmin, 8) == 0);
    SB_CHECK(nit3 == nit);
}

SB_TEST(test_ts_bfgs_outcomes) {
    double ws[TSB_WS(2)], fmin = 0.0, tr[101];
    int32_t nit = 0;
    /* a low cap */
    double x[2] = {-1.2, 1.0};
    SB_CHECK(run(rosen, x, ws, 2, 1e-6, NULL, &nit, &fmin, NULL) == TSB_MAXIT);
    SB_CHECK(nit == 2);
    /* a start where the objective is not finite: the start's value is the
     * trace's first (a fit's trace is defined on every outcome) */
    double z[2] = {2.5, 0.0};
    tr[0] = 0.0;
    SB_CHECK(run(edge, z, ws, 100, 1e-3, tr, &nit, &fmin, NULL) == TSB_FAILED);
    SB_CHECK(fmin == INFINITY && nit == 0 && tr[0] == INFINITY);
    /* a finite difference across the edge: the search runs toward x0 = 3,
     * past 2, and the gradient at the last accepted point fails */
    double e[2] = {0.0, 1.0};
    const int32_t st = run(edge, e, ws, 100, 1e-3, NULL, &nit, &fmin, NULL);
    SB_CHECK(st == TSB_FAILED);
    SB_CHECK(e[0] <= 2.0 && e[0] > 1.99 && fmin == fmin && fmin < 10.0);
}

SB_TEST(test_ts_bfgs_quadratic) {
    /* f = (x0 - 1)^2 + 10 (x1 + 2)^2: central differences are exact on a
     * quadratic up to rounding, so the minimum is found to rounding's order */
    double x[2] = {0.0, 0.0}, ws[TSB_WS(2)], fmin = 1.0;
    int32_t nit = 0;
    SB_CHECK(run(quad, x, ws, 100, 1e-3, NULL, &nit, &fmin, NULL) == TSB_CONVERGED);
    SB_CHECK(fabs(x[0] - 1.0) < 1e-6 && fabs(x[1] + 2.0) < 1e-6 && fmin < 1e-10);
}
