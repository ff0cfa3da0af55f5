/*
 * ts_bfgs.h: the variable-metric (BFGS) minimizer of the time-series fits,
 * in the kernel subset. kernels/arima.h instantiates it over its objective
 * (ak_bfgs), so the host (fit_one calls ak_fit at stride 1) and every
 * device's kernel run this one text; tests/unit/test_ts_bfgs.c instantiates
 * it over test functions at strides 1 and 3.
 *
 * A template: the includer defines
 *   TSB_NAME          the function's name,
 *   TSB_CTX           the objective's context type,
 *   TSB_EVAL(ctx, x)  the objective at x (SB_GLOBAL, nx values read with
 *                     the stride sw): a double, +inf where not defined,
 * and includes this file (no include guard: one definition an inclusion;
 * the macros are undefined at the end).
 *
 * The method: Broyden, Fletcher, Goldfarb and Shanno's update of an inverse
 * Hessian approximation in the form of Nash's variable-metric algorithm
 * (J. C. Nash, "Compact Numerical Methods for Computers", 2nd ed., 1990,
 * Algorithm 21), which R's optim(method = "BFGS") documents: the
 * approximation B starts at (and is reset to) the identity; the search
 * direction t = -B g; a backtracking line search from the step 1,
 * multiplying it by TSB_STEPREDN until the Armijo condition
 * f <= fmin + TSB_ACCTOL step g't holds, or until no coordinate moves any
 * more at the scale TSB_RELTEST (TSB_RELTEST + x_i == TSB_RELTEST + b_i
 * for every i); a step is enough when |f - fmin| > reltol (|fmin| + reltol)
 * (R's reltol rule); the update is made only when the curvature t'c > 0
 * (c the change of the gradient), the approximation otherwise reset; a
 * search that found no acceptable or no enough step restarts once from the
 * identity, and the run ends (converged) when a search from the identity
 * does not get one either. Unlike R's optim, the approximation is not also
 * reset every 2 nx gradients (profile v9): that periodic reset made the
 * search little better than steepest descent on ARIMA's ill-conditioned
 * objectives (an MA root near the unit circle), so half of the taxi-derived
 * ARIMA(1,1,1) fits of bench/ts_gpu_bench.py ran to the iteration cap and on
 * into the simplex runs (898 objective evaluations a fit on average, 90
 * without the reset, no fit's likelihood lower by more than 1.4e-10
 * relative; docs/timeseries.md, "Profile v9").
 * Rules of this version: a line search that ends without an acceptable
 * point leaves x at the last accepted point (its value fmin kept); an
 * accepted step that is not enough is taken (x and fmin move) and ends
 * the direction.
 * The gradient: central differences with the fixed step h in every
 * coordinate, (f(x + h e_i) - f(x - h e_i)) / (2 h), the coordinates in
 * ascending order, the two evaluations in that order.
 * Arithmetic: IEEE binary64, + - * / only, each sum over its index
 * ascending, no contraction (the builds' -ffp-contract=off, nvcc's
 * -fmad=false, OpenCL's FP_CONTRACT OFF); no library function.
 *
 * SB_FN_BIG sb_i32 TSB_NAME(TSB_CTX *ctx, sb_i32 nx, sb_i64 sw,
 *     SB_GLOBAL double *x, SB_GLOBAL double *ws, sb_i32 maxit, double reltol,
 *     double h, SB_GLOBAL double *trace, sb_i32 *nit, double *fmin)
 * x: the start in, the last accepted point out; ws: TSB_WS(nx) = nx * nx +
 * 5 nx doubles of scratch (strided by sw like x); trace (may be NULL): the
 * start's value (finite or not) and fmin after each iteration (maxit + 1
 * values at most); *nit the iterations
 * (gradients after the first) run. Returns TSB_CONVERGED, TSB_MAXIT (the
 * iteration cap reached) or TSB_FAILED (the start's value or a finite
 * difference's value not finite: x is then the point whose gradient
 * failed, *fmin its value).
 */
#ifndef TSB_NAME
#error "ts_bfgs.h: define TSB_NAME, TSB_CTX and TSB_EVAL before including"
#endif

#ifndef TSB_CONVERGED
#define TSB_CONVERGED 0
#define TSB_MAXIT 1
#define TSB_FAILED 2
#define TSB_STEPREDN 0.2
#define TSB_ACCTOL 0.0001
#define TSB_RELTEST 10.0
#define TSB_WS(nx) ((nx) * (nx) + 5 * (nx))
#endif

#define TSB_A(p, k) (p)[(sb_i64)(k) * sw]
#define TSB_CAT2(a, b) a##b
#define TSB_CAT(a, b) TSB_CAT2(a, b)

/* The central-difference gradient at x into g, xh the trial point; 0 when a
 * value is not finite. */
SB_FN int TSB_CAT(TSB_NAME, _grad)(TSB_CTX *ctx, sb_i32 nx, sb_i64 sw, SB_GLOBAL double *x, SB_GLOBAL double *g,
                                   SB_GLOBAL double *xh, double h) {
    for (sb_i32 i = 0; i < nx; i++) TSB_A(xh, i) = TSB_A(x, i);
    for (sb_i32 i = 0; i < nx; i++) {
        const double xi = TSB_A(x, i);
        TSB_A(xh, i) = xi + h;
        const double f1 = TSB_EVAL(ctx, xh);
        TSB_A(xh, i) = xi - h;
        const double f2 = TSB_EVAL(ctx, xh);
        TSB_A(xh, i) = xi;
        if (!(f1 - f1 == 0.0) || !(f2 - f2 == 0.0)) return 0;
        TSB_A(g, i) = (f1 - f2) / (2.0 * h);
    }
    return 1;
}

SB_FN_BIG sb_i32 TSB_NAME(TSB_CTX *ctx, sb_i32 nx, sb_i64 sw, SB_GLOBAL double *x, SB_GLOBAL double *ws,
                          sb_i32 maxit, double reltol, double h, SB_GLOBAL double *trace, sb_i32 *nit, double *fmin) {
    SB_GLOBAL double *B = ws, *g = ws + (sb_i64)nx * nx * sw, *t = g + (sb_i64)nx * sw, *X = t + (sb_i64)nx * sw,
                     *c = X + (sb_i64)nx * sw, *xh = c + (sb_i64)nx * sw;
    const sb_i32 n = nx;
    *nit = 0;
    double f = TSB_EVAL(ctx, x);
    *fmin = f;
    if (trace) trace[0] = f; /* written on every outcome: trace[0 .. *nit] are defined */
    if (!(f - f == 0.0)) return TSB_FAILED;
    double Fmin = f;
    if (!TSB_CAT(TSB_NAME, _grad)(ctx, n, sw, x, g, xh, h)) return TSB_FAILED;
    sb_i32 gradcount = 1, ilast = 1, iter = 0, count = 0, status = TSB_CONVERGED;
    do {
        if (ilast == gradcount)
            for (sb_i32 i = 0; i < n; i++)
                for (sb_i32 j = 0; j <= i; j++) TSB_A(B, i * n + j) = i == j ? 1.0 : 0.0;
        for (sb_i32 i = 0; i < n; i++) TSB_A(X, i) = TSB_A(x, i), TSB_A(c, i) = TSB_A(g, i);
        double gradproj = 0.0;
        for (sb_i32 i = 0; i < n; i++) {
            double s = 0.0;
            for (sb_i32 j = 0; j <= i; j++) s = s - TSB_A(B, i * n + j) * TSB_A(g, j);
            for (sb_i32 j = i + 1; j < n; j++) s = s - TSB_A(B, j * n + i) * TSB_A(g, j);
            TSB_A(t, i) = s;
            gradproj = gradproj + s * TSB_A(g, i);
        }
        if (gradproj < 0.0) {
            double steplength = 1.0;
            int accpoint = 0;
            do {
                count = 0;
                for (sb_i32 i = 0; i < n; i++) {
                    TSB_A(x, i) = TSB_A(X, i) + steplength * TSB_A(t, i);
                    if (TSB_RELTEST + TSB_A(X, i) == TSB_RELTEST + TSB_A(x, i)) count++;
                }
                if (count < n) {
                    f = TSB_EVAL(ctx, x);
                    accpoint = f - f == 0.0 && f <= Fmin + (gradproj * steplength) * TSB_ACCTOL;
                    if (!accpoint) steplength = steplength * TSB_STEPREDN;
                }
            } while (!(count == n || accpoint));
            if (!accpoint) { /* no acceptable point: back to the last one */
                for (sb_i32 i = 0; i < n; i++) TSB_A(x, i) = TSB_A(X, i);
                count = n;
            } else {
                const double df = f - Fmin, adf = df < 0.0 ? -df : df, afm = Fmin < 0.0 ? -Fmin : Fmin;
                if (!(adf > reltol * (afm + reltol))) count = n; /* not enough: taken, the direction ends */
                Fmin = f;
            }
            if (count < n) {
                if (!TSB_CAT(TSB_NAME, _grad)(ctx, n, sw, x, g, xh, h)) {
                    status = TSB_FAILED;
                    break;
                }
                gradcount++;
                iter++;
                double D1 = 0.0;
                for (sb_i32 i = 0; i < n; i++) {
                    TSB_A(t, i) = steplength * TSB_A(t, i);
                    TSB_A(c, i) = TSB_A(g, i) - TSB_A(c, i);
                    D1 = D1 + TSB_A(t, i) * TSB_A(c, i);
                }
                if (D1 > 0.0) {
                    double D2 = 0.0;
                    for (sb_i32 i = 0; i < n; i++) {
                        double s = 0.0;
                        for (sb_i32 j = 0; j <= i; j++) s = s + TSB_A(B, i * n + j) * TSB_A(c, j);
                        for (sb_i32 j = i + 1; j < n; j++) s = s + TSB_A(B, j * n + i) * TSB_A(c, j);
                        TSB_A(X, i) = s;
                        D2 = D2 + s * TSB_A(c, i);
                    }
                    D2 = 1.0 + D2 / D1;
                    for (sb_i32 i = 0; i < n; i++)
                        for (sb_i32 j = 0; j <= i; j++) {
                            const double ti = TSB_A(t, i), tj = TSB_A(t, j);
                            const double u = (D2 * ti) * tj - TSB_A(X, i) * tj - ti * TSB_A(X, j);
                            TSB_A(B, i * n + j) = TSB_A(B, i * n + j) + u / D1;
                        }
                } else {
                    ilast = gradcount;
                }
            } else if (ilast < gradcount) { /* restart once from the identity */
                count = 0;
                ilast = gradcount;
            }
        } else { /* not a descent direction: restart, or stop if from the identity */
            count = 0;
            if (ilast == gradcount) count = n;
            else ilast = gradcount;
        }
        if (trace) trace[iter] = Fmin;
        if (iter >= maxit) {
            status = TSB_MAXIT;
            break;
        }
    } while (count != n || ilast != gradcount);
    *nit = iter;
    *fmin = Fmin;
    return status;
}

#undef TSB_A
#undef TSB_CAT
#undef TSB_CAT2
#undef TSB_NAME
#undef TSB_CTX
#undef TSB_EVAL
