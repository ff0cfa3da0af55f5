/*
 * arima.c: ARIMA(p, d, q)(P, D, Q)s by exact maximum likelihood, one series
 * a task (arima.h states the convention; docs/timeseries.md).
 *
 * - Likelihood: the Kalman filter on Harvey's form (state dimension
 *   r = max(p + sP, q + sQ + 1), transition with the expanded AR polynomial
 *   in its first column and ones above the diagonal, disturbance vector
 *   (1, theta_1, ..., theta_{r-1})), started from the stationary covariance
 *   (the discrete Lyapunov equation P = T P T' + R R', solved by the doubling
 *   iteration, a fixed stopping rule), sigma2 concentrated out (Harvey 1989,
 *   3.4.2): -2 llf = nobs (log 2 pi + 1 + log(S / nobs)) + sum log F_t with
 *   S = sum v_t^2 / F_t, every sum in time order.
 * - Stationarity and invertibility by Monahan's transform (Monahan 1984,
 *   Jones 1980): unconstrained u_k -> partial autocorrelations
 *   u_k / sqrt(1 + u_k^2) -> coefficients by the Durbin-Levinson recursion,
 *   for each of the four polynomials (statsmodels' transform).
 * - Optimizer: the BFGS (kernels/ts_bfgs.h as ak_bfgs: Nash's
 *   variable-metric algorithm as R's optim "BFGS" documents it, central
 *   differences of step AK_BFGS_NDEPS in the search's coordinates, R's reltol
 *   rule with AK_BFGS_RELTOL, at most AK_BFGS_MAXIT iterations; the objective
 *   divided by 2 nobs, ak_bfgs_eval) from the Hannan-Rissanen start (Hannan
 *   and Rissanen, "Recursive estimation of mixed autoregressive-moving
 *   average order", Biometrika 69, 1982: a long AR fit by least squares, its
 *   residuals, then the regression of the series on its own lags and the
 *   residuals' lags; ak_hr_start states the rules and the fallback to the
 *   zero start), the const at the mean of the differenced series.
 *   Fallback: when the BFGS does not converge (a value at its start or of a
 *   finite difference not finite, or its iteration cap reached), a
 *   Nelder-Mead simplex (ak_nelder_mead) goes on from the BFGS's last
 *   accepted point: three runs, each from the best point of the last with
 *   steps a quarter of the last's; an iteration cap each.
 * - method=css: the coefficients minimize the conditional sum of squares
 *   instead (ak_css_objective: Box and Jenkins' conditional least squares, R's
 *   "CSS"), by the same search from the same start; the final pass is the
 *   filter's, so llf and the criteria are the exact likelihood at them.
 * - Missing values (NaN) inside a series: a difference touching one is
 *   missing; the filter only predicts across a missing differenced value (no
 *   update) and the likelihood sums over the observed ones (Durbin and
 *   Koopman 2012, 4.10).
 * A series' result is a function of that series and the specification only.
 * The fit's arithmetic is kernels/arima.h's ak_fit, which fit_one calls at
 * stride 1 and the devices' ke_arima_fit calls a work-item a series
 * (arima_device.c): one spelling, the same bits everywhere.
 */
#define AK_UNIT_STRIDE /* fit_one and kwork call the kernel at stride 1 alone */
#include "arima.h"
#include "ts_common.h"
#include "../../device/device.h"
#include <math.h> /* sqrt (IEEE, correctly rounded) */
#include <stdio.h>

SB_STATIC_ASSERT(AK_MAX_ORDER == SB_ARIMA_MAX_ORDER, "kernels/arima.h's order limit is arima.h's");
SB_STATIC_ASSERT(AK_NM_MAXD == TS_NM_MAXD, "kernels/arima.h's simplex dimension is ts_common.h's");
SB_STATIC_ASSERT(AK_MAX_PAR == SB_ARIMA_MAX_PAR, "kernels/arima.h's parameter count is arima.h's");

static int is_missing(double v) { return ak_missing(v); }

int32_t sb_arima_npar(const arima_spec *sp) { return sp->trend + sp->p + sp->q + sp->P + sp->Q + 1; }

int32_t sb_arima_state_dim(const arima_spec *sp) {
    const int32_t pa = sp->p + sp->s * sp->P, qa = sp->q + sp->s * sp->Q;
    return pa > qa + 1 ? pa : qa + 1;
}

int32_t sb_arima_diff_lag(const arima_spec *sp) { return sp->d + sp->s * sp->D; }

void sb_arima_spec_param_name(const arima_spec *sp, int32_t i, char *buf, size_t cap) {
    if (sp->trend && i == 0) {
        snprintf(buf, cap, "const");
        return;
    }
    i -= sp->trend;
    if (i < sp->p) snprintf(buf, cap, "ar.L%d", (int)(i + 1));
    else if ((i -= sp->p) < sp->q) snprintf(buf, cap, "ma.L%d", (int)(i + 1));
    else if ((i -= sp->q) < sp->P) snprintf(buf, cap, "ar.S.L%d", (int)((i + 1) * sp->s));
    else if ((i -= sp->P) < sp->Q) snprintf(buf, cap, "ma.S.L%d", (int)((i + 1) * sp->s));
    else snprintf(buf, cap, "sigma2");
}

/* 1 when 1 + y_1 B + ... + y_n B^n has every root outside the unit circle:
 * the step-down (Schur-Cohn) recursion, every partial autocorrelation inside
 * (-1, 1). y is left unchanged. */
static int stable(const double *y0, int32_t n) {
    double y[SB_ARIMA_MAX_ORDER], t[SB_ARIMA_MAX_ORDER];
    for (int32_t i = 0; i < n; i++) y[i] = y0[i];
    for (int32_t k = n - 1; k >= 0; k--) {
        const double r = y[k];
        if (!(r < 1.0 && r > -1.0)) return 0;
        const double den = 1.0 - r * r;
        for (int32_t i = 0; i < k; i++) t[i] = (y[i] - r * y[k - 1 - i]) / den;
        for (int32_t i = 0; i < k; i++) y[i] = t[i];
    }
    return 1;
}

ak_spec sb_arima_kspec(const arima_spec *sp) {
    ak_spec k;
    k.p = sp->p, k.d = sp->d, k.q = sp->q, k.P = sp->P, k.D = sp->D, k.Q = sp->Q, k.s = sp->s;
    k.trend = sp->trend, k.ngiven = sp->ngiven;
    return k;
}

/* A stride-1 work of sp's fixed parts (the kernel's functions read these):
 * the differencing polynomial in dc (L + 1), the polynomials in phi and
 * theta (r each, either may be NULL where unused). */
static ak_work kwork(const arima_spec *sp, double *dc, double *phi, double *theta) {
    ak_work wk;
    memset(&wk, 0, sizeof wk);
    wk.sp = sb_arima_kspec(sp);
    wk.sw = 1, wk.r = sb_arima_state_dim(sp), wk.L = sb_arima_diff_lag(sp), wk.nx = sb_arima_npar(sp) - 1;
    wk.dc = dc, wk.phi = phi, wk.theta = theta;
    if (dc) ak_diff_poly(&wk);
    return wk;
}

sb_status sb_arima_take(const arima_spec *sp, const double *y, int64_t n, arima_fit *f, const double *par,
                        const double *crit, const double *state, const double *fitted, const double *resid,
                        const double *trace, const int32_t *counts) {
    const int32_t r = sb_arima_state_dim(sp), L = sb_arima_diff_lag(sp), np = sb_arima_npar(sp);
    const size_t rr = (size_t)r * (size_t)r;
    const int32_t nt = counts[3];
    f->n = n, f->nobs = n - L;
    f->fitted = sb_malloc(sizeof(double) * (size_t)n);
    f->resid = sb_malloc(sizeof(double) * (size_t)n);
    f->a = sb_calloc((size_t)r, sizeof(double));
    f->P = sb_calloc(rr, sizeof(double));
    f->ylast = sb_calloc((size_t)L + 1, sizeof(double));
    f->trace = sb_malloc(sizeof(double) * (size_t)(nt > 0 ? nt : 1));
    if (!f->fitted || !f->resid || !f->a || !f->P || !f->ylast || !f->trace) return SB_ERR_OUT_OF_MEMORY;
    if (counts[4] != 0) return SB_ERR_INTERNAL;
    memcpy(f->par, par, sizeof(double) * (size_t)np);
    f->llf = crit[0], f->aic = crit[1], f->aicc = crit[2], f->bic = crit[3];
    memcpy(f->fitted, fitted, sizeof(double) * (size_t)n);
    memcpy(f->resid, resid, sizeof(double) * (size_t)n);
    memcpy(f->a, state, sizeof(double) * (size_t)r);
    memcpy(f->P, state + r, sizeof(double) * rr);
    for (int32_t k = 0; k < L; k++) f->ylast[k] = y[n - 1 - k];
    memcpy(f->trace, trace, sizeof(double) * (size_t)(nt > 0 ? nt : 0));
    f->ntrace = nt, f->nfev = counts[0], f->nit = counts[1], f->converged = counts[2];
    return SB_OK;
}

/* Fit one series: kernels/arima.h's ak_fit at stride 1 into one buffer (its
 * scratch and result slots), then the results into f (every buffer of f
 * allocated there). SB_ERR_INTERNAL when the final filter fails. */
static sb_status fit_one(const arima_spec *sp, const double *y, int64_t n, arima_fit *f) {
    const ak_spec ks = sb_arima_kspec(sp);
    const int32_t r = sb_arima_state_dim(sp), L = sb_arima_diff_lag(sp), np = sb_arima_npar(sp);
    const int64_t nd = n - L, nst = (int64_t)r + (int64_t)r * r, tmax = ak_trace_max(&ks);
    const int64_t nscr = ak_scratch_doubles(&ks, nd);
    double *buf = sb_malloc(sizeof(double) * (size_t)(nscr + np + AK_NCRIT + nst + 2 * n + tmax));
    if (!buf) return SB_ERR_OUT_OF_MEMORY;
    double *par = buf + nscr, *crit = par + np, *state = crit + AK_NCRIT, *fitted = state + nst, *resid = fitted + n;
    double *trace = resid + n;
    int32_t counts[AK_NCOUNTS];
    const ak_out o = {par, crit, state, fitted, resid, trace, counts};
    ak_fit(&ks, sp->css, sp->given, y, n, buf, 1, nd, o);
    const sb_status st = sb_arima_take(sp, y, n, f, par, crit, state, fitted, resid, trace, counts);
    sb_free(buf);
    return st;
}

/* Every series: not empty of observed values, no infinite value (a NaN is
 * missing, an infinity is refused), enough values (n >= d + sD + 2 and
 * enough observed differenced values: one more than the parameters when
 * estimating, one when given), and, when estimating, a differenced series
 * that is not constant over its observed values. */
sb_status sb_arima_check(const arima_spec *sp, const double *y, const int64_t *offsets, int64_t nseries) {
    sb_status st = ts_check_offsets("arima", offsets, nseries);
    if (st != SB_OK) return st;
    const int32_t L = sb_arima_diff_lag(sp), np = sb_arima_npar(sp);
    for (int64_t i = 0; i < nseries; i++) {
        const int64_t a = offsets[i], n = offsets[i + 1] - a;
        if (n < 0) return sb_fail(SB_ERR_INVALID_ARGUMENT, "arima: offsets decrease at series %lld", (long long)i);
        if (n > INT32_MAX) return sb_fail(SB_ERR_LIMIT, "series %lld: %lld values, above 2^31 - 1", (long long)i, (long long)n);
        int64_t missing = 0;
        for (int64_t t = 0; t < n; t++) {
            const double v = y[a + t];
            if (is_missing(v)) missing++;
            else if (!ts_finite(v))
                return sb_fail(SB_ERR_INVALID_INPUT, "series %lld: value %lld is infinite (a missing value is NaN)",
                               (long long)i, (long long)t);
        }
        if (n > 0 && missing == n)
            return sb_fail(SB_ERR_INVALID_INPUT, "series %lld: every value is missing (NaN)", (long long)i);
        const int64_t need = (int64_t)L + (sp->ngiven ? 1 : np + 1);
        const int64_t need2 = need > L + 2 ? need : L + 2;
        if (n < need2)
            return sb_fail(SB_ERR_INVALID_INPUT,
                           "series %lld has %lld values; this model needs at least %lld (d + s D = %d differenced away, "
                           "then one more than the %d parameters)", (long long)i, (long long)n, (long long)need2, (int)L,
                           (int)np);
        double dc[2 * SB_ARIMA_MAX_DIFF * SB_ARIMA_MAX_PERIOD + 3];
        const ak_work wk = kwork(sp, dc, NULL, NULL);
        double *w = sb_malloc(sizeof(double) * (size_t)(n - L));
        if (!w) return sb_fail(SB_ERR_OUT_OF_MEMORY, "arima: out of memory checking series %lld", (long long)i);
        const int64_t obs = ak_difference(&wk, y + a, n, w);
        double w0 = 0.0;
        int constant = 1, seen = 0;
        for (int64_t t = 0; t < n - L && constant; t++) {
            if (is_missing(w[t])) continue;
            if (!seen) w0 = w[t], seen = 1;
            constant = w[t] == w0;
        }
        sb_free(w);
        if (obs == 0)
            return sb_fail(SB_ERR_INVALID_INPUT,
                           "series %lld: every differenced value is missing (each difference of order d + s D = %d "
                           "touches a missing value)", (long long)i, (int)L);
        if (obs < need - L)
            return sb_fail(SB_ERR_INVALID_INPUT,
                           "series %lld has %lld observed differenced values; this model needs at least %lld (one more "
                           "than the %d parameters)", (long long)i, (long long)obs, (long long)(need - L), (int)np);
        if (!sp->ngiven && constant)
            return sb_fail(SB_ERR_INVALID_INPUT,
                           "series %lld: the differenced series is constant (%g): its likelihood has no maximum "
                           "(sigma2 -> 0); give the parameters or drop the series", (long long)i, w0);
    }
    return SB_OK;
}

int sb_arima_params_valid(const arima_spec *sp, const double *par) {
    const int32_t np = sb_arima_npar(sp), n4[4] = {sp->p, sp->q, sp->P, sp->Q};
    for (int32_t i = 0; i < np; i++)
        if (!ts_finite(par[i])) return 0;
    if (!(par[np - 1] > 0.0)) return 0;
    int32_t at = sp->trend;
    for (int32_t g = 0; g < 4; g++) {
        double y[SB_ARIMA_MAX_ORDER];
        for (int32_t i = 0; i < n4[g]; i++) y[i] = (g == 0 || g == 2) ? -par[at + i] : par[at + i];
        if (!stable(y, n4[g])) return 0;
        at += n4[g];
    }
    return 1;
}

/* Refuse given parameters that are explosive or non-invertible, or a sigma2
 * that is not positive, by name. */
sb_status sb_arima_check_given(const arima_spec *sp) {
    if (!sp->ngiven) return SB_OK;
    const int32_t np = sb_arima_npar(sp), o = sp->trend;
    const int32_t n4[4] = {sp->p, sp->q, sp->P, sp->Q};
    const char *what[4] = {"AR", "MA", "seasonal AR", "seasonal MA"};
    int32_t at = o;
    for (int32_t g = 0; g < 4; g++) {
        double y[SB_ARIMA_MAX_ORDER];
        for (int32_t i = 0; i < n4[g]; i++) {
            const double v = sp->given[at + i];
            if (!ts_finite(v)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "arima: given %s coefficient %d is not finite", what[g], (int)(i + 1));
            y[i] = (g == 0 || g == 2) ? -v : v;
        }
        if (!stable(y, n4[g]))
            return sb_fail(SB_ERR_INVALID_ARGUMENT,
                           (g == 0 || g == 2) ? "arima: the given %s polynomial is explosive or has a unit root (a root "
                                                "on or inside the unit circle): not stationary"
                                              : "arima: the given %s polynomial is not invertible (a root on or inside "
                                                "the unit circle)", what[g]);
        at += n4[g];
    }
    if (o && !ts_finite(sp->given[0])) return sb_fail(SB_ERR_INVALID_ARGUMENT, "arima: the given const is not finite");
    if (!(sp->given[np - 1] > 0.0) || !ts_finite(sp->given[np - 1]))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "arima: the given sigma2 must be a positive number");
    return SB_OK;
}

static sb_status arima_fit_any(const void *sp, const double *y, int64_t n, void *f) {
    return fit_one(sp, y, n, f);
}

void sb_arima_release(sb_arima *e) {
    if (!e) return;
    for (int64_t i = 0; e->fits && i < e->nseries; i++) {
        arima_fit *f = &e->fits[i];
        sb_free(f->fitted), sb_free(f->resid), sb_free(f->a), sb_free(f->P), sb_free(f->ylast), sb_free(f->trace);
    }
    sb_free(e->fits);
    sb_free(e);
}

/* The batch's stages, series by series in batch order: params, criteria,
 * the final state, the optimizer's trace, its counts, the fitted values. */
static sb_status arima_record(const sb_arima *e, sb_card *card, const char *prefix) {
    const arima_spec *sp = &e->spec;
    const int64_t ns = e->nseries, np = sb_arima_npar(sp), r = sb_arima_state_dim(sp);
    int64_t total = 0, ntr = 0;
    for (int64_t i = 0; i < ns; i++) total += e->fits[i].n, ntr += e->fits[i].ntrace;
    int64_t cap = ns * (np + 4 + r + r * r);
    if (total > cap) cap = total;
    if (ntr > cap) cap = ntr;
    uint64_t *u = sb_malloc(sizeof(uint64_t) * (size_t)cap + 8);
    if (!u) return sb_fail(SB_ERR_OUT_OF_MEMORY, "arima: out of memory for the card");
    sb_status st = SB_OK;
    int64_t c = 0;
    for (int64_t i = 0; i < ns; i++)
        for (int64_t k = 0; k < np; k++) u[c++] = ts_canon(e->fits[i].par[k]);
    st = ts_record_stage(st, card, prefix, "params", SB_DTYPE_U64, u, c);
    c = 0;
    for (int64_t i = 0; i < ns; i++) {
        const arima_fit *f = &e->fits[i];
        u[c++] = ts_canon(f->llf), u[c++] = ts_canon(f->aic), u[c++] = ts_canon(f->aicc), u[c++] = ts_canon(f->bic);
    }
    st = ts_record_stage(st, card, prefix, "llf", SB_DTYPE_U64, u, c);
    c = 0;
    for (int64_t i = 0; i < ns; i++) {
        for (int64_t k = 0; k < r; k++) u[c++] = ts_canon(e->fits[i].a[k]);
        for (int64_t k = 0; k < r * r; k++) u[c++] = ts_canon(e->fits[i].P[k]);
    }
    st = ts_record_stage(st, card, prefix, "state", SB_DTYPE_U64, u, c);
    c = 0;
    for (int64_t i = 0; i < ns; i++)
        for (int32_t t = 0; t < e->fits[i].ntrace; t++) u[c++] = ts_canon(e->fits[i].trace[t]);
    st = ts_record_stage(st, card, prefix, "trace", SB_DTYPE_U64, u, c);
    int64_t *cn = (int64_t *)u;
    c = 0;
    for (int64_t i = 0; i < ns; i++) cn[c++] = e->fits[i].nfev, cn[c++] = e->fits[i].nit, cn[c++] = e->fits[i].converged;
    st = ts_record_stage(st, card, prefix, "counts", SB_DTYPE_I64, cn, c);
    c = 0;
    for (int64_t i = 0; i < ns; i++)
        for (int64_t t = 0; t < e->fits[i].n; t++) u[c++] = ts_canon(e->fits[i].fitted[t]);
    st = ts_record_stage(st, card, prefix, "fitted", SB_DTYPE_U64, u, c);
    sb_free(u);
    return st;
}

sb_status sb_arima_fit_spec(const arima_spec *sp, const double *y, const int64_t *offsets, int64_t nseries,
                            sb_card *card, const char *prefix, sb_arima **out) {
    *out = NULL;
    sb_status st = sb_arima_check_given(sp);
    if (st == SB_OK) st = sb_arima_check(sp, y, offsets, nseries);
    if (st != SB_OK) return st;
    sb_arima *e = sb_calloc(1, sizeof *e);
    sb_status *sts = sb_calloc((size_t)nseries, sizeof(sb_status));
    if (e) e->fits = sb_calloc((size_t)nseries, sizeof(arima_fit));
    if (!e || !sts || !e->fits) {
        sb_free(sts);
        sb_arima_release(e);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "arima: out of memory for %lld series", (long long)nseries);
    }
    e->spec = *sp;
    e->nseries = nseries;
    if (sp->device == SB_DEVICE_CUDA || sp->device == SB_DEVICE_OPENCL)
        st = sb_arima_fit_device(sp, y, offsets, nseries, e, sts); /* arima_device.c: the host's bits */
    else
        ts_fit_all(arima_fit_any, sp, y, offsets, nseries, e->fits, sizeof(arima_fit), sts);
    for (int64_t i = 0; i < nseries && st == SB_OK; i++)
        if (sts[i] != SB_OK)
            st = sts[i] == SB_ERR_INTERNAL
                     ? sb_fail(SB_ERR_INVALID_ARGUMENT, "arima: series %lld: the filter's variance is not positive at the "
                               "parameters (given parameters too close to a unit root)", (long long)i)
                     : sb_fail(sts[i], "arima: out of memory fitting series %lld", (long long)i);
    sb_free(sts);
    if (st == SB_OK && card) st = arima_record(e, card, prefix);
    if (st != SB_OK) {
        sb_arima_release(e);
        return st;
    }
    *out = e;
    return SB_OK;
}

/* Phi(x) - 1/2 = phi(x) sum_k x^(2k+1) / (2k+1)!! for 0 <= x <= 10, the
 * series added in order until a term no longer moves the sum. */
static double norm_half(double x) {
    double t = x, s = x;
    for (int32_t k = 1; k < 2000; k++) {
        t = t * (x * x) / (double)(2 * k + 1);
        const double ns = s + t;
        if (ns == s) break;
        s = ns;
    }
    return s * (sb__hx_exp(-0.5 * (x * x)) * 0.39894228040143267794);
}

double sb_arima_norm_quantile(double p) {
    double lo = 0.0, hi = 10.0;
    const double target = p - 0.5;
    for (int32_t it = 0; it < 200; it++) {
        const double mid = 0.5 * (lo + hi);
        if (mid == lo || mid == hi) break;
        if (norm_half(mid) < target) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

sb_status sb_arima_forecast_fit(const arima_spec *sp, const arima_fit *f, int32_t h, double alpha, double *mean,
                                double *se, double *lower, double *upper) {
    const int32_t r = sb_arima_state_dim(sp), L = sb_arima_diff_lag(sp), np = sb_arima_npar(sp), m = r + L;
    const size_t mm = (size_t)m * (size_t)m;
    for (int32_t k = 0; k < L; k++)
        if (is_missing(f->ylast[k]))
            return sb_fail(SB_ERR_INVALID_INPUT,
                           "arima: the series' value %d from its end is missing: the forecast integrates the last "
                           "d + s D = %d values back and has no value for it", (int)(k + 1), (int)L);
    double *buf = sb_calloc(4 * mm + 4 * (size_t)m + (size_t)L + 1 + 2 * (size_t)r, sizeof(double));
    if (!buf) return sb_fail(SB_ERR_OUT_OF_MEMORY, "arima: out of memory for the forecast");
    double *T = buf, *Pz = T + mm, *W = Pz + mm, *X = W + mm, *z = X + mm, *zn = z + m, *R = zn + m, *Z = R + m;
    double *dc = Z + m, *phi = dc + L + 1, *th = phi + r;
    ak_work wk = kwork(sp, dc, phi, th);
    ak_expand(&wk, f->par);
    for (int32_t i = 0; i < r; i++) {
        T[(size_t)i * m] = phi[i];
        if (i + 1 < r) T[(size_t)i * m + i + 1] = 1.0;
        R[i] = th[i];
        z[i] = f->a[i];
        for (int32_t j = 0; j < r; j++) Pz[(size_t)i * m + j] = f->P[(size_t)i * r + j];
    }
    Z[0] = 1.0;
    for (int32_t k = 1; k <= L; k++) {
        Z[r + k - 1] = -dc[k];
        z[r + k - 1] = f->ylast[k - 1];
    }
    if (L > 0) {
        for (int32_t j = 0; j < m; j++) T[(size_t)r * m + j] = Z[j]; /* the new value */
        for (int32_t i = 1; i < L; i++) T[(size_t)(r + i) * m + r + i - 1] = 1.0; /* the lags shift */
    }
    const double mu = sp->trend ? f->par[0] : 0.0, s2 = f->par[np - 1];
    const double zq = (lower || upper) ? sb_arima_norm_quantile(1.0 - 0.5 * alpha) : 0.0;
    for (int32_t j = 0; j < h; j++) {
        double yh = 0.0, var = 0.0;
        for (int32_t i = 0; i < m; i++) yh = yh + Z[i] * z[i];
        for (int32_t i = 0; i < m; i++) {
            double s = 0.0;
            for (int32_t k = 0; k < m; k++) s = s + Pz[(size_t)i * m + k] * Z[k];
            var = var + Z[i] * s;
        }
        const double sd = sqrt((var > 0.0 ? var : 0.0) * s2);
        mean[j] = mu + yh;
        if (se) se[j] = sd;
        if (lower) lower[j] = mean[j] - zq * sd;
        if (upper) upper[j] = mean[j] + zq * sd;
        for (int32_t i = 0; i < m; i++) {
            double s = 0.0;
            for (int32_t k = 0; k < m; k++) s = s + T[(size_t)i * m + k] * z[k];
            zn[i] = s;
        }
        memcpy(z, zn, sizeof(double) * (size_t)m);
        for (int32_t i = 0; i < m; i++) /* W = T Pz */
            for (int32_t k = 0; k < m; k++) {
                double s = 0.0;
                for (int32_t l = 0; l < m; l++) s = s + T[(size_t)i * m + l] * Pz[(size_t)l * m + k];
                W[(size_t)i * m + k] = s;
            }
        for (int32_t i = 0; i < m; i++) /* Pz = W T' + R R' */
            for (int32_t k = 0; k < m; k++) {
                double s = 0.0;
                for (int32_t l = 0; l < m; l++) s = s + W[(size_t)i * m + l] * T[(size_t)k * m + l];
                Pz[(size_t)i * m + k] = s + R[i] * R[k];
            }
    }
    (void)X;
    sb_free(buf);
    return SB_OK;
}

void sb_arima_fit_digest(const arima_spec *sp, const arima_fit *f, uint8_t out[32]) {
    /* "ARI1", the orders, the trend, n, the parameters, the criteria, the
     * fitted values, the final state and covariance and the last values,
     * little-endian; the optimizer's counts are left out */
    sb_sha256_ctx c;
    uint8_t b[64], *p = b;
    sb_sha256_init(&c);
    sb_sha256_update(&c, "ARI1", 4);
    const int32_t o[8] = {sp->p, sp->d, sp->q, sp->P, sp->D, sp->Q, sp->s, sp->trend};
    for (int i = 0; i < 8; i++) ts_put32(&p, (uint32_t)o[i]);
    ts_put64(&p, (uint64_t)f->n);
    sb_sha256_update(&c, b, (size_t)(p - b));
    const int32_t np = sb_arima_npar(sp), r = sb_arima_state_dim(sp), L = sb_arima_diff_lag(sp);
#define D64(v) ts_digest_f64(&c, v)
    for (int32_t i = 0; i < np; i++) D64(f->par[i]);
    D64(f->llf), D64(f->aic), D64(f->aicc), D64(f->bic);
    for (int64_t t = 0; t < f->n; t++) D64(f->fitted[t]);
    for (int32_t i = 0; i < r; i++) D64(f->a[i]);
    for (int64_t i = 0; i < (int64_t)r * r; i++) D64(f->P[i]);
    for (int32_t i = 0; i < L; i++) D64(f->ylast[i]);
#undef D64
    sb_sha256_final(&c, out);
}
