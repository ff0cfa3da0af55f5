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
 * - Optimizer: the shared Nelder-Mead simplex (ts_nm.c) from the
 *   Hannan-Rissanen start (Hannan and Rissanen, "Recursive estimation of mixed
 *   autoregressive-moving average order", Biometrika 69, 1982: a long AR fit
 *   by least squares, its residuals, then the regression of the series on its
 *   own lags and the residuals' lags; hr_start below states the rules and the
 *   fallback to the zero start), the const at the mean of the differenced
 *   series; three runs, each from the best point of the last with steps a
 *   quarter of the last's; an iteration cap each.
 * - method=css: the coefficients minimize the conditional sum of squares
 *   instead (css_objective: Box and Jenkins' conditional least squares, R's
 *   "CSS"), by the same simplex from the same start; the final pass is the
 *   filter's, so llf and the criteria are the exact likelihood at them.
 * - Missing values (NaN) inside a series: a difference touching one is
 *   missing; the filter only predicts across a missing differenced value (no
 *   update) and the likelihood sums over the observed ones (Durbin and
 *   Koopman 2012, 4.10).
 * A series' result is a function of that series and the specification only.
 */
#include "arima.h"
#include "ts_common.h"
#include "../../device/device.h"
#include <math.h> /* sqrt (IEEE, correctly rounded), INFINITY, NAN */
#include <stdio.h>

#define ARIMA_NM_ITER 400  /* simplex iterations a run, times the dimension */
#define ARIMA_NM_RUNS 3
#define ARIMA_NM_XTOL 1e-9
#define ARIMA_NM_FTOL 1e-14
#define ARIMA_NM_STEP 0.25 /* first run's step in every (scaled) coordinate */
#define ARIMA_LYAP_ITER 100
#define ARIMA_LOG_2PI 1.8378770664093454836
#define ARIMA_HR_MAXLAG 200    /* the long AR's order at most */
#define ARIMA_HR_PIVOT 1e-12   /* a Cholesky pivot at most this of its diagonal entry: singular */

static int is_missing(double v) { return v != v; }

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

/* The differenced series w[0..n-L) of y: w_t = sum_k c_k y_{t+L-k}, k
 * ascending over the nonzero c_k only; missing (NaN) when any of those y is
 * missing. Returns the count of observed w. */
static int64_t difference(const double *dc, int32_t L, const double *y, int64_t n, double *w) {
    int64_t obs = 0;
    for (int64_t t = 0; t + L < n; t++) {
        double s = 0.0;
        int miss = 0;
        for (int32_t k = 0; k <= L; k++) {
            if (dc[k] == 0.0) continue;
            const double v = y[t + L - k];
            if (is_missing(v)) miss = 1;
            s = s + dc[k] * v;
        }
        w[t] = miss ? NAN : s;
        obs += !miss;
    }
    return obs;
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
    double *v, *F, *pr;   /* nd each, or NULL while searching */
    int64_t nobs;         /* observed values of w */
    double par[SB_ARIMA_MAX_PAR];
    int32_t nfev;
    int32_t css; /* the search's objective: 1 the conditional sum of squares, 0 the exact likelihood */
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
 * const mu: *S = sum v^2 / F, *lf = sum log F (time order, observed values
 * only; a missing one is predicted across without an update). Returns 0 when
 * a variance is not positive or a sum not finite. wk->v and wk->F, when set,
 * get each step's innovation (NaN where missing) and its variance, wk->pr
 * each step's prediction mu + a_0; wk->a and wk->P end as the prediction of
 * the state after the last value. */
static int filter(arima_work *wk, double mu, double *S, double *lf) {
    const int32_t r = wk->r;
    double *a = wk->a, *P = wk->P, *TP = wk->TP;
    const double *phi = wk->phi, *th = wk->theta;
    lyapunov(wk);
    for (int32_t i = 0; i < r; i++) a[i] = 0.0;
    double s = 0.0, l = 0.0;
    for (int64_t t = 0; t < wk->nd; t++) {
        const double F = P[0];
        if (!(F > 0.0)) return 0;
        if (wk->pr) wk->pr[t] = mu + a[0];
        if (is_missing(wk->w[t])) {
            /* a missing value: no update (the prediction is the filtered state) */
            if (wk->v) wk->v[t] = NAN, wk->F[t] = F;
            memcpy(TP, P, sizeof(double) * (size_t)r * r);
        } else {
            const double v = wk->w[t] - mu - a[0];
            if (wk->v) wk->v[t] = v, wk->F[t] = F;
            s = s + (v * v) / F;
            l = l + ts_log(F);
            /* update: a += P e0 v / F, P -= P e0 e0' P / F */
            for (int32_t i = 0; i < r; i++) a[i] = a[i] + P[(size_t)i * r] * (v / F);
            for (int32_t i = 0; i < r; i++) {
                const double k = P[(size_t)i * r] / F;
                for (int32_t j = 0; j < r; j++) TP[(size_t)i * r + j] = P[(size_t)i * r + j] - k * P[j];
            }
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

/* The conditional sum of squares' objective (method=css; Box and Jenkins'
 * conditional least squares, as R's arima "CSS" states it): with
 * z_t = w_t - mu, the residuals e_t = z_t - sum_k phi_k z_{t-k} -
 * sum_k theta_k e_{t-k} (the expanded polynomials, k ascending) from t =
 * p + sP on, the earlier e_t = 0; a residual whose z_t or AR lags touch a
 * missing value is 0 and not counted. Returns nu log(SSQ / nu) over the nu
 * counted residuals (sum in time order), +infinity where SSQ is not positive
 * and finite. */
static double css_objective(arima_work *wk, double mu) {
    const arima_spec *sp = wk->sp;
    const int32_t np = sp->p + sp->s * sp->P, nq = sp->q + sp->s * sp->Q;
    double *e = wk->v; /* the residuals' scratch (nd) */
    double ssq = 0.0;
    int64_t nu = 0;
    for (int64_t t = 0; t < wk->nd; t++) {
        e[t] = 0.0;
        if (t < np || is_missing(wk->w[t])) continue;
        double x = wk->w[t] - mu;
        int miss = 0;
        for (int32_t k = 1; k <= np; k++) {
            const double z = wk->w[t - k];
            if (is_missing(z)) { miss = 1; break; }
            x = x - wk->phi[k - 1] * (z - mu);
        }
        if (miss) continue;
        for (int32_t k = 1; k <= nq && k <= t; k++) x = x - wk->theta[k] * e[t - k];
        e[t] = x;
        ssq = ssq + x * x;
        nu++;
    }
    if (!(ssq > 0.0) || !ts_finite(ssq) || nu == 0) return INFINITY;
    const double o = (double)nu * ts_log(ssq / (double)nu);
    return ts_finite(o) ? o : INFINITY;
}

/* The search's objective: -2 llf less its constant, nobs log(S) + sum log F
 * (+infinity where the filter fails). */
static double objective(void *ctx, const double *x) {
    arima_work *wk = ctx;
    double par[SB_ARIMA_MAX_PAR], S, lf;
    params_of(wk, x, par);
    expand(wk, par);
    wk->nfev++;
    if (wk->css) return css_objective(wk, wk->sp->trend ? par[0] : 0.0);
    if (!filter(wk, wk->sp->trend ? par[0] : 0.0, &S, &lf) || !(S > 0.0)) return INFINITY;
    const double o = (double)wk->nobs * ts_log(S) + lf;
    return ts_finite(o) ? o : INFINITY;
}

/* Solve G x = b for the k x k symmetric G (row-major; its lower triangle
 * read) by Cholesky, in place: G's lower triangle becomes L, b becomes x.
 * Every sum runs over its index ascending. Returns 0 (G, b then undefined)
 * when a pivot is not above ARIMA_HR_PIVOT times its diagonal entry or is
 * not finite: the regression is singular. */
static int chol_solve(double *G, double *b, int32_t k) {
    for (int32_t j = 0; j < k; j++) {
        double d = G[(size_t)j * k + j];
        const double d0 = d;
        for (int32_t l = 0; l < j; l++) d = d - G[(size_t)j * k + l] * G[(size_t)j * k + l];
        if (!(d > ARIMA_HR_PIVOT * d0) || !ts_finite(d)) return 0;
        const double ljj = sqrt(d);
        G[(size_t)j * k + j] = ljj;
        for (int32_t i = j + 1; i < k; i++) {
            double a = G[(size_t)i * k + j];
            for (int32_t l = 0; l < j; l++) a = a - G[(size_t)i * k + l] * G[(size_t)j * k + l];
            G[(size_t)i * k + j] = a / ljj;
        }
    }
    for (int32_t i = 0; i < k; i++) { /* L z = b */
        double a = b[i];
        for (int32_t l = 0; l < i; l++) a = a - G[(size_t)i * k + l] * b[l];
        b[i] = a / G[(size_t)i * k + i];
    }
    for (int32_t i = k - 1; i >= 0; i--) { /* L' x = z */
        double a = b[i];
        for (int32_t l = i + 1; l < k; l++) a = a - G[(size_t)l * k + i] * b[l];
        b[i] = a / G[(size_t)i * k + i];
    }
    for (int32_t i = 0; i < k; i++)
        if (!ts_finite(b[i])) return 0;
    return 1;
}

/* The least squares fit of z_t on the columns X_j(t) = src[j][t - lag[j]],
 * j < k, over the rows t in [t0, n) where z_t and every regressor are
 * observed: the normal equations (sums in time order) solved by chol_solve.
 * Returns the rows used, or -1 when they are fewer than 2k or the equations
 * are singular; beta gets the coefficients. G is k x k scratch. */
static int64_t least_squares(const double *z, int64_t n, int64_t t0, int32_t k, const double *const *src,
                             const int32_t *lag, double *G, double *beta) {
    for (int32_t i = 0; i < k; i++) {
        beta[i] = 0.0;
        for (int32_t j = 0; j < k; j++) G[(size_t)i * k + j] = 0.0;
    }
    int64_t rows = 0;
    for (int64_t t = t0; t < n; t++) {
        int miss = is_missing(z[t]);
        for (int32_t j = 0; j < k && !miss; j++) miss = is_missing(src[j][t - lag[j]]);
        if (miss) continue;
        rows++;
        for (int32_t i = 0; i < k; i++) {
            const double xi = src[i][t - lag[i]];
            beta[i] = beta[i] + xi * z[t];
            for (int32_t j = 0; j <= i; j++) G[(size_t)i * k + j] = G[(size_t)i * k + j] + xi * src[j][t - lag[j]];
        }
    }
    if (rows < 2 * (int64_t)k || !chol_solve(G, beta, k)) return -1;
    return rows;
}

/* The unconstrained values u of n coefficients y (1 + y_1 B + ...), Monahan's
 * map inverted: the step-down recursion's partial autocorrelations r_k, then
 * u_k = r_k / sqrt(1 - r_k^2). Returns 0 (u untouched) when some r_k is not
 * inside (-1, 1): the polynomial is not stationary (invertible). */
static int unconstrain(const double *y0, int32_t n, double *u) {
    double y[SB_ARIMA_MAX_ORDER], t[SB_ARIMA_MAX_ORDER], rk[SB_ARIMA_MAX_ORDER];
    for (int32_t i = 0; i < n; i++) y[i] = y0[i];
    for (int32_t k = n - 1; k >= 0; k--) {
        const double r = y[k];
        if (!(r < 1.0 && r > -1.0)) return 0;
        rk[k] = r;
        const double den = 1.0 - r * r;
        for (int32_t i = 0; i < k; i++) t[i] = (y[i] - r * y[k - 1 - i]) / den;
        for (int32_t i = 0; i < k; i++) y[i] = t[i];
    }
    for (int32_t k = 0; k < n; k++) {
        const double u2 = rk[k] / sqrt(1.0 - rk[k] * rk[k]);
        if (!ts_finite(u2)) return 0;
        u[k] = u2;
    }
    return 1;
}

/* The Hannan-Rissanen start (Hannan and Rissanen 1982) of the search's
 * coordinates x (x[0], the const's, is left alone): z = w less its mean with
 * a const, w itself without.
 * 1. Without MA terms (q = Q = 0) skip to 3 with no residual columns.
 * 2. A long AR of order m = max(floor(log(nd)^2), 2 max(p + sP, q + sQ)),
 *    at most ARIMA_HR_MAXLAG and nd / 4, fitted by least squares (no
 *    intercept) over the rows t >= m; its residuals e_t (missing where a
 *    regressor or z_t is missing, or t < m).
 * 3. The regression of z_t on z_{t-i}, i = 1..p and s, 2s, .., Ps, and on
 *    e_{t-j}, j = 1..q and s, .., Qs (the seasonal lags additively: the
 *    multiplicative cross lags are left out; a seasonal lag that equals a
 *    non-seasonal one, s <= p or s <= q, gets no column and starts at 0),
 *    over the rows where all are observed. Its coefficients are ar.L, ar.S.L,
 *    ma.L, ma.S.L.
 * Fallback: when a regression has fewer rows than twice its columns or is
 * singular (chol_solve), every coefficient starts at 0 (the zero start); when
 * one of the four polynomials is not stationary (invertible) by the step-down
 * recursion, that polynomial's coordinates start at 0 and the others keep
 * theirs. Returns SB_OK or SB_ERR_OUT_OF_MEMORY. */
static sb_status hr_start(const arima_work *wk, double *x) {
    const arima_spec *sp = wk->sp;
    const int32_t o = sp->trend, n4[4] = {sp->p, sp->q, sp->P, sp->Q};
    for (int32_t i = o; i < wk->nx; i++) x[i] = 0.0;
    if (sp->p + sp->q + sp->P + sp->Q == 0) return SB_OK;
    const int64_t nd = wk->nd;
    const int32_t pa = sp->p + sp->s * sp->P, qa = sp->q + sp->s * sp->Q;
    int64_t m = 0;
    if (qa > 0) {
        m = (int64_t)(ts_log((double)nd) * ts_log((double)nd));
        const int64_t m2 = 2 * (int64_t)(pa > qa ? pa : qa);
        if (m2 > m) m = m2;
        if (m > ARIMA_HR_MAXLAG) m = ARIMA_HR_MAXLAG;
        if (m > nd / 4) m = nd / 4;
        if (m < 1) return SB_OK;
    }
    /* the regressors of step 3: (is_ma, lag, group, index in group) */
    int32_t lag[4 * SB_ARIMA_MAX_ORDER], grp[4 * SB_ARIMA_MAX_ORDER], idx[4 * SB_ARIMA_MAX_ORDER], k = 0;
    for (int32_t g = 0; g < 4; g++)
        for (int32_t i = 0; i < n4[g]; i++) {
            const int32_t lg = g < 2 ? i + 1 : sp->s * (i + 1);
            if (g >= 2 && lg <= n4[g - 2]) continue; /* the same lag as a non-seasonal term */
            lag[k] = lg, grp[k] = g, idx[k] = i, k++;
        }
    const size_t kk = (size_t)(m > k ? m : k);
    double *z = sb_malloc(sizeof(double) * (size_t)(2 * nd) + sizeof(double) * (kk * kk + 2 * kk + 1));
    const double **src = sb_malloc(sizeof(double *) * (kk + 1));
    int32_t *lg1 = sb_malloc(sizeof(int32_t) * (kk + 1));
    if (!z || !src || !lg1) {
        sb_free(z), sb_free(src), sb_free(lg1);
        return SB_ERR_OUT_OF_MEMORY;
    }
    double *e = z + nd, *G = e + nd, *beta = G + kk * kk;
    for (int64_t t = 0; t < nd; t++) z[t] = o ? wk->w[t] - wk->mean : wk->w[t];
    int ok = 1;
    if (m > 0) {
        for (int64_t j = 0; j < m; j++) src[j] = z, lg1[j] = (int32_t)(j + 1);
        ok = least_squares(z, nd, m, (int32_t)m, src, lg1, G, beta) > 0;
        for (int64_t t = 0; t < nd && ok; t++) {
            if (t < m || is_missing(z[t])) {
                e[t] = NAN;
                continue;
            }
            double a = z[t];
            for (int64_t j = 0; j < m; j++) a = a - beta[j] * z[t - 1 - j];
            e[t] = a; /* NaN when a lag is missing */
        }
    }
    int64_t t0 = 0;
    for (int32_t j = 0; j < k; j++) {
        const int64_t need = (grp[j] == 1 || grp[j] == 3) ? m + lag[j] : lag[j];
        if (need > t0) t0 = need;
        src[j] = (grp[j] == 1 || grp[j] == 3) ? e : z;
    }
    if (ok) ok = t0 < nd && least_squares(z, nd, t0, k, src, lag, G, beta) > 0;
    if (ok) {
        double c[4][SB_ARIMA_MAX_ORDER];
        for (int32_t g = 0; g < 4; g++)
            for (int32_t i = 0; i < n4[g]; i++) c[g][i] = 0.0;
        /* AR: 1 - phi_1 B - ... = 1 + y B + ..: y = -phi; MA: y = theta */
        for (int32_t j = 0; j < k; j++) c[grp[j]][idx[j]] = (grp[j] == 0 || grp[j] == 2) ? -beta[j] : beta[j];
        int32_t at = o;
        for (int32_t g = 0; g < 4; g++) {
            if (!unconstrain(c[g], n4[g], x + at))
                for (int32_t i = 0; i < n4[g]; i++) x[at + i] = 0.0;
            at += n4[g];
        }
    }
    sb_free(z), sb_free(src), sb_free(lg1);
    return SB_OK;
}

/* Fit one series; every buffer of f allocated here. */
static sb_status fit_one(const arima_spec *sp, const double *y, int64_t n, arima_fit *f) {
    const int32_t r = sb_arima_state_dim(sp), L = sb_arima_diff_lag(sp), np = sb_arima_npar(sp);
    const int64_t nd = n - L;
    arima_work wk;
    memset(&wk, 0, sizeof wk);
    wk.sp = sp, wk.nd = nd, wk.r = r, wk.nx = np - 1;
    const size_t rr = (size_t)r * (size_t)r;
    double *buf = sb_calloc(3 * (size_t)r + 5 * rr + 4 * (size_t)nd + (size_t)L + 1, sizeof(double));
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
    wk.v = NULL, wk.F = NULL, wk.pr = NULL;
    double *vbuf = p, *Fbuf = p + nd, *prbuf = p + 2 * nd;
    p += 3 * nd;
    dc = p;
    diff_poly(sp, dc);
    wk.nobs = difference(dc, L, y, n, w);
    wk.w = w;
    /* the mean and spread of the observed values, in time order */
    double m = 0.0, ss = 0.0;
    for (int64_t t = 0; t < nd; t++)
        if (!is_missing(w[t])) m = m + w[t];
    m = m / (double)wk.nobs;
    for (int64_t t = 0; t < nd; t++)
        if (!is_missing(w[t])) ss = ss + (w[t] - m) * (w[t] - m);
    wk.mean = m;
    wk.scale = ss > 0.0 ? sqrt(ss / (double)wk.nobs) : 1.0;
    f->converged = 1;
    double par[SB_ARIMA_MAX_PAR];
    if (sp->ngiven) {
        memcpy(par, sp->given, sizeof(double) * (size_t)np);
    } else {
        double x[TS_NM_MAXD], step[TS_NM_MAXD];
        for (int32_t i = 0; i < wk.nx; i++) x[i] = 0.0, step[i] = ARIMA_NM_STEP;
        if (hr_start(&wk, x) != SB_OK) return sb_free(buf), SB_ERR_OUT_OF_MEMORY;
        if (sp->css) wk.v = vbuf, wk.css = 1; /* the residuals' scratch (the filter's wk->v is set only for the final pass) */
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
    wk.v = vbuf, wk.F = Fbuf, wk.pr = prbuf;
    expand(&wk, par);
    double S = 0.0, lf = 0.0;
    if (!filter(&wk, sp->trend ? par[0] : 0.0, &S, &lf)) return sb_free(buf), SB_ERR_INTERNAL;
    /* the likelihood counts the observed values; the criteria's nobs (bic,
     * aicc) is nd, missing ones included (statsmodels' nobs_effective) */
    const double no = (double)wk.nobs, nn = (double)nd;
    if (!sp->ngiven) {
        par[np - 1] = S / no;
        f->llf = -0.5 * (no * (ARIMA_LOG_2PI + 1.0 + ts_log(S / no)) + lf);
    } else {
        const double s2 = par[np - 1];
        f->llf = -0.5 * ((no * (ARIMA_LOG_2PI + ts_log(s2)) + lf) + S / s2);
    }
    memcpy(f->par, par, sizeof(double) * (size_t)np);
    for (int64_t t = 0; t < n; t++) {
        if (t < L) {
            f->resid[t] = f->fitted[t] = NAN;
        } else if (!is_missing(vbuf[t - L])) {
            f->resid[t] = vbuf[t - L];
            f->fitted[t] = y[t] - vbuf[t - L];
        } else {
            /* missing: the prediction of y_t (mu + a_0 plus the differencing's
             * lagged terms, k ascending) when the lagged values are observed */
            double s = prbuf[t - L];
            for (int32_t k = 1; k <= L; k++)
                if (dc[k] != 0.0) s = s - dc[k] * y[t - k];
            f->resid[t] = NAN;
            f->fitted[t] = s; /* NaN when a lagged value is missing */
        }
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
        diff_poly(sp, dc);
        double *w = sb_malloc(sizeof(double) * (size_t)(n - L));
        if (!w) return sb_fail(SB_ERR_OUT_OF_MEMORY, "arima: out of memory checking series %lld", (long long)i);
        const int64_t obs = difference(dc, L, y + a, n, w);
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
