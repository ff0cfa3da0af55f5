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
 * - Optimizer: the shared Nelder-Mead simplex (ts_nm.c) from a fixed start
 *   (every coefficient 0, the const at the mean of the differenced series),
 *   three runs, each from the best point of the last with steps a quarter of
 *   the last's; an iteration cap each.
 * A series' result is a function of that series and the specification only.
 */
#include "arima.h"
#include "ts_common.h"
#include <math.h> /* sqrt (IEEE, correctly rounded), INFINITY, NAN */
#include <stdio.h>

#define ARIMA_NM_ITER 400  /* simplex iterations a run, times the dimension */
#define ARIMA_NM_RUNS 3
#define ARIMA_NM_XTOL 1e-9
#define ARIMA_NM_FTOL 1e-14
#define ARIMA_NM_STEP 0.25 /* first run's step in every (scaled) coordinate */
#define ARIMA_LYAP_ITER 100
#define ARIMA_LOG_2PI 1.8378770664093454836

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

/* The differencing polynomial (1 - B)^d (1 - B^s)^D as c[0..L], c[0] = 1. */
static void diff_poly(const arima_spec *sp, double *c) {
    const int32_t L = sb_arima_diff_lag(sp);
    for (int32_t k = 0; k <= L; k++) c[k] = k == 0 ? 1.0 : 0.0;
    int32_t deg = 0;
    for (int32_t f = 0; f < sp->d + sp->D; f++) {
        const int32_t lag = f < sp->d ? 1 : sp->s;
        for (int32_t k = deg + lag; k >= lag; k--) c[k] = c[k] - c[k - lag];
        deg += lag;
    }
}

/* Monahan's map of n unconstrained values to the coefficients y of a
 * polynomial 1 + y_1 B + ... + y_n B^n with every root outside the unit
 * circle (Durbin-Levinson from partial autocorrelations u / sqrt(1 + u^2)). */
static void constrain(const double *u, int32_t n, double *y, double *tmp) {
    for (int32_t k = 0; k < n; k++) {
        const double r = u[k] / sqrt(1.0 + u[k] * u[k]);
        for (int32_t i = 0; i < k; i++) tmp[i] = y[i] + r * y[k - i - 1];
        for (int32_t i = 0; i < k; i++) y[i] = tmp[i];
        y[k] = r;
    }
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

typedef struct arima_work {
    const arima_spec *sp;
    const double *w; /* the differenced series */
    int64_t nd;
    int32_t r, nx;
    double scale, mean;   /* the const's coordinate is (const - mean) / scale */
    double *phi, *theta;  /* r each: the expanded AR (phi*_1.. in phi[0..]) and (1, theta*_1, ...) */
    double *a, *P, *TP, *A, *B, *C; /* r, r x r x 5 */
    double *v, *F;        /* nd each, or NULL while searching */
    double par[SB_ARIMA_MAX_PAR];
    int32_t nfev;
} arima_work;

/* The parameters (statsmodels' order, sigma2 left as it is) from x. */
static void params_of(const arima_work *wk, const double *x, double *par) {
    const arima_spec *sp = wk->sp;
    double tmp[SB_ARIMA_MAX_ORDER], y[SB_ARIMA_MAX_ORDER];
    int32_t o = 0;
    if (sp->trend) par[0] = wk->mean + x[0] * wk->scale, o = 1;
    const int32_t n4[4] = {sp->p, sp->q, sp->P, sp->Q};
    for (int32_t g = 0; g < 4; g++) {
        constrain(x + o, n4[g], y, tmp);
        /* AR: 1 - phi_1 B - ... = 1 + y_1 B + ...; MA: 1 + theta_1 B + ... */
        for (int32_t i = 0; i < n4[g]; i++) par[o + i] = (g == 0 || g == 2) ? -y[i] : y[i];
        o += n4[g];
    }
}

/* The expanded polynomials of the parameters par into wk->phi, wk->theta. */
static void expand(arima_work *wk, const double *par) {
    const arima_spec *sp = wk->sp;
    const int32_t r = wk->r, o = sp->trend;
    const double *ar = par + o, *ma = ar + sp->p, *sar = ma + sp->q, *sma = sar + sp->P;
    for (int32_t i = 0; i < r; i++) wk->phi[i] = 0.0, wk->theta[i] = i == 0 ? 1.0 : 0.0;
    /* phi*(B) = (1 - sum ar B^i)(1 - sum sar B^{sj}): phi*_k, k >= 1, in phi[k - 1] */
    for (int32_t j = 0; j <= sp->P; j++) {
        const double cj = j == 0 ? 1.0 : -sar[j - 1];
        for (int32_t i = 0; i <= sp->p; i++) {
            const int32_t k = i + sp->s * j;
            if (k == 0) continue;
            const double ci = i == 0 ? 1.0 : -ar[i - 1];
            wk->phi[k - 1] = wk->phi[k - 1] - ci * cj;
        }
    }
    for (int32_t j = 0; j <= sp->Q; j++) {
        const double cj = j == 0 ? 1.0 : sma[j - 1];
        for (int32_t i = 0; i <= sp->q; i++) {
            const int32_t k = i + sp->s * j;
            if (k == 0) continue;
            const double ci = i == 0 ? 1.0 : ma[i - 1];
            wk->theta[k] = wk->theta[k] + ci * cj;
        }
    }
}

/* C = X Y (r x r), each entry's sum over l ascending. */
static void matmul(int32_t r, const double *X, const double *Y, double *C, int transY) {
    for (int32_t i = 0; i < r; i++)
        for (int32_t j = 0; j < r; j++) {
            double s = 0.0;
            for (int32_t l = 0; l < r; l++) s = s + X[(size_t)i * r + l] * (transY ? Y[(size_t)j * r + l] : Y[(size_t)l * r + j]);
            C[(size_t)i * r + j] = s;
        }
}

/* P = the stationary covariance of the state (over sigma2): the doubling
 * iteration P <- P + A P A', A <- A A from P = R R', A = T, until the added
 * term is at most 2^-60 of P's largest entry (or ARIMA_LYAP_ITER rounds). */
static void lyapunov(arima_work *wk) {
    const int32_t r = wk->r;
    double *P = wk->P, *A = wk->A, *B = wk->B, *C = wk->C;
    for (int32_t i = 0; i < r; i++)
        for (int32_t j = 0; j < r; j++) {
            P[(size_t)i * r + j] = wk->theta[i] * wk->theta[j];
            A[(size_t)i * r + j] = j == 0 ? wk->phi[i] : (j == i + 1 ? 1.0 : 0.0);
        }
    for (int32_t it = 0; it < ARIMA_LYAP_ITER; it++) {
        matmul(r, A, P, B, 0);
        matmul(r, B, A, C, 1); /* C = A P A' */
        double cm = 0.0, pm = 0.0;
        for (size_t k = 0; k < (size_t)r * r; k++) {
            P[k] = P[k] + C[k];
            const double ac = C[k] < 0.0 ? -C[k] : C[k], ap = P[k] < 0.0 ? -P[k] : P[k];
            cm = ac > cm ? ac : cm, pm = ap > pm ? ap : pm;
        }
        if (!(cm > 0x1p-60 * pm)) break;
        matmul(r, A, A, B, 0);
        memcpy(A, B, sizeof(double) * (size_t)r * r);
    }
}

/* The filter over the differenced series with the polynomials in wk and the
 * const mu: *S = sum v^2 / F, *lf = sum log F (time order). Returns 0 when a
 * variance is not positive or a sum not finite. wk->v and wk->F, when set,
 * get each step's innovation and its variance; wk->a and wk->P end as the
 * prediction of the state after the last value. */
static int filter(arima_work *wk, double mu, double *S, double *lf) {
    const int32_t r = wk->r;
    double *a = wk->a, *P = wk->P, *TP = wk->TP;
    const double *phi = wk->phi, *th = wk->theta;
    lyapunov(wk);
    for (int32_t i = 0; i < r; i++) a[i] = 0.0;
    double s = 0.0, l = 0.0;
    for (int64_t t = 0; t < wk->nd; t++) {
        const double v = wk->w[t] - mu - a[0], F = P[0];
        if (!(F > 0.0)) return 0;
        if (wk->v) wk->v[t] = v, wk->F[t] = F;
        s = s + (v * v) / F;
        l = l + ts_log(F);
        /* update: a += P e0 v / F, P -= P e0 e0' P / F */
        for (int32_t i = 0; i < r; i++) a[i] = a[i] + P[(size_t)i * r] * (v / F);
        for (int32_t i = 0; i < r; i++) {
            const double k = P[(size_t)i * r] / F;
            for (int32_t j = 0; j < r; j++) TP[(size_t)i * r + j] = P[(size_t)i * r + j] - k * P[j];
        }
        /* predict: a <- T a; P <- T P T' + R R' (T's structure: phi in the
         * first column, ones above the diagonal) */
        const double a0 = a[0];
        for (int32_t i = 0; i < r; i++) a[i] = phi[i] * a0 + (i + 1 < r ? a[i + 1] : 0.0);
        for (int32_t i = 0; i < r; i++) /* P = T Pu, Pu in TP */
            for (int32_t j = 0; j < r; j++)
                P[(size_t)i * r + j] = phi[i] * TP[j] + (i + 1 < r ? TP[(size_t)(i + 1) * r + j] : 0.0);
        for (int32_t i = 0; i < r; i++) { /* TP = (T Pu) T' + R R' */
            const double pi0 = P[(size_t)i * r];
            for (int32_t j = 0; j < r; j++) {
                const double tt = pi0 * phi[j], nx = j + 1 < r ? P[(size_t)i * r + j + 1] : 0.0;
#ifdef SB_SABOTAGE_ARIMA_KALMAN_ORDER
                /* Separating arm: the same three terms added in another order. */
                TP[(size_t)i * r + j] = tt + (nx + th[i] * th[j]);
#else
                TP[(size_t)i * r + j] = (tt + nx) + th[i] * th[j];
#endif
            }
        }
        memcpy(P, TP, sizeof(double) * (size_t)r * r);
        if (!ts_finite(s) || !ts_finite(l)) return 0;
    }
    *S = s, *lf = l;
    return 1;
}

/* The search's objective: -2 llf less its constant, nobs log(S) + sum log F
 * (+infinity where the filter fails). */
static double objective(void *ctx, const double *x) {
    arima_work *wk = ctx;
    double par[SB_ARIMA_MAX_PAR], S, lf;
    params_of(wk, x, par);
    expand(wk, par);
    wk->nfev++;
    if (!filter(wk, wk->sp->trend ? par[0] : 0.0, &S, &lf) || !(S > 0.0)) return INFINITY;
    const double o = (double)wk->nd * ts_log(S) + lf;
    return ts_finite(o) ? o : INFINITY;
}

/* Fit one series; every buffer of f allocated here. */
static sb_status fit_one(const arima_spec *sp, const double *y, int64_t n, arima_fit *f) {
    const int32_t r = sb_arima_state_dim(sp), L = sb_arima_diff_lag(sp), np = sb_arima_npar(sp);
    const int64_t nd = n - L;
    arima_work wk;
    memset(&wk, 0, sizeof wk);
    wk.sp = sp, wk.nd = nd, wk.r = r, wk.nx = np - 1;
    const size_t rr = (size_t)r * (size_t)r;
    double *buf = sb_calloc(3 * (size_t)r + 5 * rr + 3 * (size_t)nd + (size_t)L + 1, sizeof(double));
    f->n = n, f->nobs = nd;
    f->fitted = sb_malloc(sizeof(double) * (size_t)n);
    f->resid = sb_malloc(sizeof(double) * (size_t)n);
    f->a = sb_calloc((size_t)r, sizeof(double));
    f->P = sb_calloc(rr, sizeof(double));
    f->ylast = sb_calloc((size_t)L + 1, sizeof(double));
    const int32_t maxit = ARIMA_NM_ITER * (wk.nx > 0 ? wk.nx : 1);
    f->trace = sb_malloc(sizeof(double) * (size_t)(ARIMA_NM_RUNS * maxit + 1));
    if (!buf || !f->fitted || !f->resid || !f->a || !f->P || !f->ylast || !f->trace) {
        sb_free(buf);
        return SB_ERR_OUT_OF_MEMORY;
    }
    double *p = buf, *dc, *w;
    wk.phi = p, p += r;
    wk.theta = p, p += r;
    wk.a = p, p += r;
    wk.P = p, p += rr;
    wk.TP = p, p += rr;
    wk.A = p, p += rr;
    wk.B = p, p += rr;
    wk.C = p, p += rr;
    w = p, p += nd;
    wk.v = NULL, wk.F = NULL;
    double *vbuf = p, *Fbuf = p + nd;
    p += 2 * nd;
    dc = p;
    diff_poly(sp, dc);
    for (int64_t t = 0; t < nd; t++) {
        double s = 0.0;
        for (int32_t k = 0; k <= L; k++) s = s + dc[k] * y[t + L - k];
        w[t] = s;
    }
    wk.w = w;
    double m = 0.0, ss = 0.0;
    for (int64_t t = 0; t < nd; t++) m = m + w[t];
    m = m / (double)nd;
    for (int64_t t = 0; t < nd; t++) ss = ss + (w[t] - m) * (w[t] - m);
    wk.mean = m;
    wk.scale = ss > 0.0 ? sqrt(ss / (double)nd) : 1.0;
    f->converged = 1;
    double par[SB_ARIMA_MAX_PAR];
    if (sp->ngiven) {
        memcpy(par, sp->given, sizeof(double) * (size_t)np);
    } else {
        double x[TS_NM_MAXD], step[TS_NM_MAXD];
        for (int32_t i = 0; i < wk.nx; i++) x[i] = 0.0, step[i] = ARIMA_NM_STEP;
        for (int32_t run = 0; run < ARIMA_NM_RUNS && wk.nx > 0; run++) {
            int32_t nit = 0, conv = 0;
            ts_nelder_mead(objective, &wk, wk.nx, x, step, maxit, ARIMA_NM_XTOL, ARIMA_NM_FTOL, &nit, &wk.nfev, &conv,
                           f->trace + f->ntrace);
            f->ntrace += nit, f->nit += nit, f->converged = conv;
            for (int32_t i = 0; i < wk.nx; i++) step[i] = step[i] * 0.25;
        }
        params_of(&wk, x, par);
    }
    /* the final pass: innovations, variances and the state after the last value */
    wk.v = vbuf, wk.F = Fbuf;
    expand(&wk, par);
    double S = 0.0, lf = 0.0;
    if (!filter(&wk, sp->trend ? par[0] : 0.0, &S, &lf)) return sb_free(buf), SB_ERR_INTERNAL;
    const double nn = (double)nd;
    if (!sp->ngiven) {
        par[np - 1] = S / nn;
        f->llf = -0.5 * (nn * (ARIMA_LOG_2PI + 1.0 + ts_log(S / nn)) + lf);
    } else {
        const double s2 = par[np - 1];
        f->llf = -0.5 * ((nn * (ARIMA_LOG_2PI + ts_log(s2)) + lf) + S / s2);
    }
    memcpy(f->par, par, sizeof(double) * (size_t)np);
    for (int64_t t = 0; t < n; t++) {
        f->resid[t] = t < L ? NAN : vbuf[t - L];
        f->fitted[t] = t < L ? NAN : y[t] - vbuf[t - L];
    }
    memcpy(f->a, wk.a, sizeof(double) * (size_t)r);
    memcpy(f->P, wk.P, sizeof(double) * rr);
    for (int32_t k = 0; k < L; k++) f->ylast[k] = y[n - 1 - k];
    const double kd = (double)np;
    f->aic = -2.0 * f->llf + 2.0 * kd;
    f->bic = -2.0 * f->llf + kd * ts_log(nn);
    f->aicc = nd - np - 1 > 0 ? f->aic + (2.0 * kd * (kd + 1.0)) / (double)(nd - np - 1) : INFINITY;
    f->nfev = wk.nfev;
    sb_free(buf);
    return SB_OK;
}

sb_status sb_arima_check(const arima_spec *sp, const double *y, const int64_t *offsets, int64_t nseries) {
    sb_status st = ts_check_offsets("arima", offsets, nseries);
    if (st != SB_OK) return st;
    const int32_t L = sb_arima_diff_lag(sp), np = sb_arima_npar(sp);
    for (int64_t i = 0; i < nseries; i++) {
        const int64_t a = offsets[i], n = offsets[i + 1] - a;
        if ((st = ts_check_series("arima", y, offsets, i)) != SB_OK) return st;
        const int64_t need = (int64_t)L + (sp->ngiven ? 1 : np + 1);
        const int64_t need2 = need > 2 ? need : 2;
        if (n < need2)
            return sb_fail(SB_ERR_INVALID_INPUT,
                           "series %lld has %lld values; this model needs at least %lld (d + s D = %d differenced away, "
                           "then one more than the %d parameters)", (long long)i, (long long)n, (long long)need2, (int)L,
                           (int)np);
        if (!sp->ngiven) {
            double dc[2 * SB_ARIMA_MAX_DIFF * SB_ARIMA_MAX_PERIOD + 3], w0 = 0.0;
            diff_poly(sp, dc);
            int constant = 1;
            for (int64_t t = 0; t < n - L && constant; t++) {
                double s = 0.0;
                for (int32_t k = 0; k <= L; k++) s = s + dc[k] * y[a + t + L - k];
                if (t == 0) w0 = s;
                constant = s == w0;
            }
            if (constant)
                return sb_fail(SB_ERR_INVALID_INPUT,
                               "series %lld: the differenced series is constant (%g): its likelihood has no maximum "
                               "(sigma2 -> 0); give the parameters or drop the series", (long long)i, w0);
        }
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
    double *buf = sb_calloc(4 * mm + 4 * (size_t)m + (size_t)L + 1 + 2 * (size_t)r, sizeof(double));
    if (!buf) return sb_fail(SB_ERR_OUT_OF_MEMORY, "arima: out of memory for the forecast");
    double *T = buf, *Pz = T + mm, *W = Pz + mm, *X = W + mm, *z = X + mm, *zn = z + m, *R = zn + m, *Z = R + m;
    double *dc = Z + m, *phi = dc + L + 1, *th = phi + r;
    arima_work wk;
    memset(&wk, 0, sizeof wk);
    wk.sp = sp, wk.r = r, wk.phi = phi, wk.theta = th;
    expand(&wk, f->par);
    diff_poly(sp, dc);
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
