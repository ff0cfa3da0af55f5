/*
 * arima.h: one series' ARIMA(p, d, q)(P, D, Q)s fit on a device
 * (docs/timeseries.md, "Devices"), in the kernel subset, for the
 * time-series program's entry kernel ke_arima_fit (entry/ts_entry.h, one
 * work-item a series).
 *
 * This is the one spelling of the fit: the host's fit_one
 * (models/timeseries/arima.c) compiles this header and calls ak_fit with a
 * stride of 1, as gp.c and svm.c call theirs, so a series gets the same
 * bits on the host and on every device: the Hannan-Rissanen start, the
 * Kalman filter (Harvey 1989, 3.3; Durbin and Koopman 2012, 3.4, 4.3 and
 * 4.10) started from the doubling iteration's stationary covariance, the
 * BFGS search (kernels/ts_bfgs.h, Nash's variable-metric algorithm as R's
 * optim documents it) and, where it does not converge, the Nelder-Mead runs
 * (Nelder and Mead 1965, in the order of Lagarias, Reeds, Wright and Wright
 * 1998), and the conditional sum of squares (method=css,
 * the host's alone: arima_device.c refuses it). Tests still hold host and
 * device together: test_arima_device (this header at strides 1 and 3 beside
 * the public fit), arima-fit on device=opencl (PoCL here, the H200's two
 * backends there), the host's arima-kalman-order arm (SABOTAGE= in the
 * host build) and the device's arima-device-order arm (the device
 * compiler's flag alone), which break the same filter line: the one parts
 * the host's fixture, the other a device's while the host's bits stay.
 *
 * Arithmetic: IEEE binary64 (the family states float64), + - * / and the
 * correctly rounded square root (IEEE's, on every dialect), no contraction
 * (the host's -ffp-contract=off, nvcc's -fmad=false, OpenCL's FP_CONTRACT
 * OFF); the logarithm is the profile's own double log (f64_log.h).
 *
 * Memory: the scratch is the caller's (SB_GLOBAL), sized by
 * ak_scratch_doubles for the longest series of a launch, and read with a
 * stride sw (1 on the host; on a device the launch's series, so that the
 * work-items of a group read neighbouring doubles: a layout, never a value).
 * The results go to the caller's slots of this series.
 */
#ifndef SB_KERNELS_ARIMA_H
#define SB_KERNELS_ARIMA_H
#include "compat.h"
#include "f64_log.h"

#define AK_MAX_ORDER 20 /* arima.h's SB_ARIMA_MAX_ORDER (arima.c checks they agree) */
#define AK_MAX_PAR (4 * AK_MAX_ORDER + 2)
#define AK_NM_MAXD 64   /* ts_common.h's TS_NM_MAXD */
#define AK_BFGS_MAXIT 500   /* R's optim default is 100; profile v9: 500 (docs/timeseries.md, "Profile v9") */
#define AK_BFGS_RELTOL 1e-12 /* R's rule; 1e-8 stopped short (co2 AR(1): llf 3.7e-5 relative below) */
#define AK_BFGS_NDEPS 1e-3  /* R's optim default ndeps */
#define AK_NM_ITER 400  /* simplex iterations a run, times the dimension */
#define AK_NM_RUNS 3
#define AK_NM_XTOL 1e-9
#define AK_NM_FTOL 1e-14
#define AK_NM_STEP 0.25 /* first run's step in every (scaled) coordinate */
#define AK_LYAP_ITER 100
#define AK_LOG_2PI 1.8378770664093454836
#define AK_HR_MAXLAG 200 /* the long AR's order at most */
#define AK_HR_PIVOT 1e-12 /* a Cholesky pivot at most this of its diagonal entry: singular */
#define AK_NCRIT 4   /* llf, aic, aicc, bic */
#define AK_NCOUNTS 5 /* nfev, nit, converged, ntrace, status (0 fitted, 1 the final filter failed) */
/* Values a chunk of the start's passes (ak_least_squares, ak_hr_start)
 * and the filter's read-ahead (ak_filter_reg) take: the values a
 * chunk needs are read into registers first, then used in time order, so a
 * device waits for one memory latency a chunk rather than one a product (one
 * work-item a series has few warps to hide them behind). A schedule, never a
 * value: every sum is the same operations in the same order. */
#define AK_LS_ROWS 8
/* Entries of a row of G a pass of the long AR takes side by side. */
#define AK_LS_BLOCK 8

/* IEEE's correctly rounded square root in each dialect (the host's is the
 * instruction; every operand here is positive or zero). */
#if defined(__OPENCL_VERSION__) || defined(__OPENCL_C_VERSION__)
#define ak_sqrt(x) sqrt(x)
#elif defined(__CUDACC__) || defined(__HIP__) || defined(__HIPCC__)
#define ak_sqrt(x) __dsqrt_rn(x)
#else
#define ak_sqrt(x) __builtin_sqrt(x)
#endif

/* The specification the kernel reads (arima.h's arima_spec less the given
 * values, which come as their own array). */
typedef struct ak_spec {
    sb_i32 p, d, q, P, D, Q, s, trend, ngiven;
} ak_spec;

SB_FN double ak_inf(void) { return sb_u2d((sb_u64)0x7FF0000000000000ull); }
SB_FN double ak_nan(void) { return sb_u2d((sb_u64)0x7FF8000000000000ull); }
SB_FN int ak_finite(double v) { return v - v == 0.0; }
SB_FN int ak_missing(double v) { return v != v; }

/* The natural logarithm of a positive double from the profile's double log
 * (f64_log.h); 0 is -infinity, a negative value NaN. */
SB_FN double ak_log(double v) {
    if (!(v > 0.0)) return v == 0.0 ? -ak_inf() : ak_nan();
    if (!ak_finite(v)) return v;
    double shift = 0.0;
    if (v < 0x1p-1000) v = v * 0x1p200, shift = -200.0 * 0.6931471805599453;
    const double d = v - 1.0;
    const double r = (d < 0x1p-6 && d > -0x1p-6) ? sb__hx_log1p_small(d) : sb__hx_log(v);
    return r + shift;
}

SB_FN sb_i32 ak_npar(const ak_spec *sp) { return sp->trend + sp->p + sp->q + sp->P + sp->Q + 1; }
SB_FN sb_i32 ak_state_dim(const ak_spec *sp) {
    const sb_i32 pa = sp->p + sp->s * sp->P, qa = sp->q + sp->s * sp->Q;
    return pa > qa + 1 ? pa : qa + 1;
}
SB_FN sb_i32 ak_diff_lag(const ak_spec *sp) { return sp->d + sp->s * sp->D; }

/* The long AR's order of the Hannan-Rissanen start for nd differenced
 * values (0: no MA term, no long AR), as ak_hr_start states it. */
SB_FN sb_i64 ak_hr_m(const ak_spec *sp, sb_i64 nd) {
    const sb_i32 pa = sp->p + sp->s * sp->P, qa = sp->q + sp->s * sp->Q;
    if (qa <= 0) return 0;
    sb_i64 m = (sb_i64)(ak_log((double)nd) * ak_log((double)nd));
    const sb_i64 m2 = 2 * (sb_i64)(pa > qa ? pa : qa);
    if (m2 > m) m = m2;
    if (m > AK_HR_MAXLAG) m = AK_HR_MAXLAG;
    if (m > nd / 4) m = nd / 4;
    return m;
}

/* The side of the start's normal equations for nd values: max(m, k). */
SB_FN sb_i64 ak_hr_side(const ak_spec *sp, sb_i64 nd) {
    const sb_i64 m = ak_hr_m(sp, nd), k = sp->p + sp->q + sp->P + sp->Q;
    return m > k ? m : k;
}

/* Doubles of one fit's scratch when its differenced series has at most nd
 * values: phi, theta, a (r each), five r x r matrices, w, v, F, pr, z, e
 * (nd each), the differencing polynomial (L + 1), the start's normal
 * equations and right side (kk x kk, kk), the simplex's vertices, values,
 * centroid, trial points, start and steps, the BFGS's scratch (ts_bfgs.h's
 * TSB_WS: nx x nx + 5 nx). Grows with nd (ak_hr_m does). */
SB_FN sb_i64 ak_scratch_doubles(const ak_spec *sp, sb_i64 nd) {
    const sb_i64 r = ak_state_dim(sp), L = ak_diff_lag(sp), kk = ak_hr_side(sp, nd), nx = ak_npar(sp) - 1;
    return 3 * r + 5 * r * r + 6 * nd + (L + 1) + kk * kk + kk + (nx + 1) * nx + (nx + 1) + 6 * nx + 1 + nx * nx +
           5 * nx;
}

/* The most trace values a fit writes (the BFGS's start and iterations, then
 * a best value per simplex iteration). */
SB_FN sb_i64 ak_trace_max(const ak_spec *sp) {
    const sb_i64 nx = ak_npar(sp) - 1;
    return AK_BFGS_MAXIT + 1 + (sb_i64)AK_NM_RUNS * AK_NM_ITER * (nx > 0 ? nx : 1) + 1;
}

/* What a series' fit shares between its passes; every array strided by sw. */
typedef struct ak_work {
    ak_spec sp;
    SB_GLOBAL const double *w; /* the differenced series */
    sb_i64 nd, sw, nobs;
    sb_i32 r, nx, L, fin;      /* fin: the final pass records v, F and pr */
    double scale, mean;
    SB_GLOBAL double *phi, *theta, *a, *P, *TP, *A, *B, *C, *v, *F, *pr, *dc, *z, *e, *G, *beta;
    SB_GLOBAL double *nv, *nfv, *nc, *nxr, *nxe, *nxc, *x, *step; /* the simplex */
    SB_GLOBAL double *bws;                                         /* the BFGS's scratch */
    sb_i32 nfev;
    sb_i32 css;                /* the search's objective: 1 the conditional sum of squares, 0 the exact likelihood */
} ak_work;

/* A strided element; AK_UNIT_STRIDE (the host's fit_one, which calls at
 * stride 1 alone) spells the same element without the multiply. */
#ifdef AK_UNIT_STRIDE
#define AK(p, k) (p)[(sb_i64)(k) + 0 * sw]
#else
#define AK(p, k) (p)[(sb_i64)(k) * sw]
#endif

/* The differencing polynomial (1 - B)^d (1 - B^s)^D as dc[0..L], dc[0] = 1. */
SB_FN void ak_diff_poly(const ak_work *wk) {
    const sb_i64 sw = wk->sw;
    const ak_spec *sp = &wk->sp;
    SB_GLOBAL double *c = wk->dc;
    for (sb_i32 k = 0; k <= wk->L; k++) AK(c, k) = k == 0 ? 1.0 : 0.0;
    sb_i32 deg = 0;
    for (sb_i32 f = 0; f < sp->d + sp->D; f++) {
        const sb_i32 lag = f < sp->d ? 1 : sp->s;
        for (sb_i32 k = deg + lag; k >= lag; k--) AK(c, k) = AK(c, k) - AK(c, k - lag);
        deg += lag;
    }
}

/* The differenced series w[0..n-L) (strided) of y: w_t = sum_k c_k
 * y_{t+L-k}, k ascending over the nonzero c_k only; missing (NaN) when any
 * of those y is missing. Returns the count of observed w. */
SB_FN sb_i64 ak_difference(const ak_work *wk, SB_GLOBAL const double *y, sb_i64 n, SB_GLOBAL double *w) {
    const sb_i64 sw = wk->sw;
    const sb_i32 L = wk->L;
    sb_i64 obs = 0;
    for (sb_i64 t = 0; t + L < n; t++) {
        double s = 0.0;
        int miss = 0;
        for (sb_i32 k = 0; k <= L; k++) {
            const double ck = AK(wk->dc, k);
            if (ck == 0.0) continue;
            const double v = y[t + L - k];
            if (ak_missing(v)) miss = 1;
            s = s + ck * v;
        }
        AK(w, t) = miss ? ak_nan() : s;
        obs += !miss;
    }
    return obs;
}

/* Monahan's map of n unconstrained values to the coefficients y of a
 * polynomial 1 + y_1 B + ... + y_n B^n with every root outside the unit
 * circle (Durbin-Levinson from partial autocorrelations u / sqrt(1 + u^2)). */
SB_FN void ak_constrain(const double *u, sb_i32 n, double *y, double *tmp) {
    for (sb_i32 k = 0; k < n; k++) {
        const double r = u[k] / ak_sqrt(1.0 + u[k] * u[k]);
        for (sb_i32 i = 0; i < k; i++) tmp[i] = y[i] + r * y[k - i - 1];
        for (sb_i32 i = 0; i < k; i++) y[i] = tmp[i];
        y[k] = r;
    }
}

/* The parameters (statsmodels' order, sigma2 left as it is) from x; the
 * const's coordinate is (const - mean) / scale. AR: 1 - phi_1 B - ... =
 * 1 + y_1 B + ...; MA: 1 + theta_1 B + ... */
SB_FN void ak_params_of(const ak_work *wk, const double *x, double *par) {
    const ak_spec *sp = &wk->sp;
    double tmp[AK_MAX_ORDER], y[AK_MAX_ORDER];
    sb_i32 o = 0;
    if (sp->trend) par[0] = wk->mean + x[0] * wk->scale, o = 1;
    const sb_i32 n4[4] = {sp->p, sp->q, sp->P, sp->Q};
    for (sb_i32 g = 0; g < 4; g++) {
        ak_constrain(x + o, n4[g], y, tmp);
        for (sb_i32 i = 0; i < n4[g]; i++) par[o + i] = (g == 0 || g == 2) ? -y[i] : y[i];
        o += n4[g];
    }
}

/* The expanded polynomials of the parameters par: phi*(B) = (1 - sum ar
 * B^i)(1 - sum sar B^{sj}), phi*_k (k >= 1) in phi[k - 1]; theta (1,
 * theta*_1, ...). */
SB_FN void ak_expand(ak_work *wk, const double *par) {
    const sb_i64 sw = wk->sw;
    const ak_spec *sp = &wk->sp;
    const sb_i32 r = wk->r, o = sp->trend;
    const double *ar = par + o, *ma = ar + sp->p, *sar = ma + sp->q, *sma = sar + sp->P;
    for (sb_i32 i = 0; i < r; i++) AK(wk->phi, i) = 0.0, AK(wk->theta, i) = i == 0 ? 1.0 : 0.0;
    for (sb_i32 j = 0; j <= sp->P; j++) {
        const double cj = j == 0 ? 1.0 : -sar[j - 1];
        for (sb_i32 i = 0; i <= sp->p; i++) {
            const sb_i32 k = i + sp->s * j;
            if (k == 0) continue;
            const double ci = i == 0 ? 1.0 : -ar[i - 1];
            AK(wk->phi, k - 1) = AK(wk->phi, k - 1) - ci * cj;
        }
    }
    for (sb_i32 j = 0; j <= sp->Q; j++) {
        const double cj = j == 0 ? 1.0 : sma[j - 1];
        for (sb_i32 i = 0; i <= sp->q; i++) {
            const sb_i32 k = i + sp->s * j;
            if (k == 0) continue;
            const double ci = i == 0 ? 1.0 : ma[i - 1];
            AK(wk->theta, k) = AK(wk->theta, k) + ci * cj;
        }
    }
}

/* C = X Y (or X Y'), r x r, each entry's sum over l ascending. */
SB_FN void ak_matmul(sb_i64 sw, sb_i32 r, SB_GLOBAL const double *X, SB_GLOBAL const double *Y, SB_GLOBAL double *C,
                     int transY) {
    for (sb_i32 i = 0; i < r; i++)
        for (sb_i32 j = 0; j < r; j++) {
            double s = 0.0;
            for (sb_i32 l = 0; l < r; l++)
                s = s + AK(X, i * r + l) * (transY ? AK(Y, j * r + l) : AK(Y, l * r + j));
            AK(C, i * r + j) = s;
        }
}

/* P = the stationary covariance of the state (over sigma2): the doubling
 * iteration P <- P + A P A', A <- A A from P = R R', A = T, until the added
 * term is at most 2^-60 of P's largest entry (or AK_LYAP_ITER rounds). */
SB_FN_BIG void ak_lyapunov(ak_work *wk) {
    const sb_i64 sw = wk->sw;
    const sb_i32 r = wk->r;
    SB_GLOBAL double *P = wk->P, *A = wk->A, *B = wk->B, *C = wk->C;
    for (sb_i32 i = 0; i < r; i++)
        for (sb_i32 j = 0; j < r; j++) {
            AK(P, i * r + j) = AK(wk->theta, i) * AK(wk->theta, j);
            AK(A, i * r + j) = j == 0 ? AK(wk->phi, i) : (j == i + 1 ? 1.0 : 0.0);
        }
    for (sb_i32 it = 0; it < AK_LYAP_ITER; it++) {
        ak_matmul(sw, r, A, P, B, 0);
        ak_matmul(sw, r, B, A, C, 1);
        double cm = 0.0, pm = 0.0;
        for (sb_i32 k = 0; k < r * r; k++) {
            AK(P, k) = AK(P, k) + AK(C, k);
            const double ck = AK(C, k), pk = AK(P, k);
            const double ac = ck < 0.0 ? -ck : ck, ap = pk < 0.0 ? -pk : pk;
            cm = ac > cm ? ac : cm, pm = ap > pm ? ap : pm;
        }
        if (!(cm > 0x1p-60 * pm)) break;
        ak_matmul(sw, r, A, A, B, 0);
        for (sb_i32 k = 0; k < r * r; k++) AK(A, k) = AK(B, k);
    }
}

/* The filter over the differenced series with the polynomials in wk and the
 * const mu: *S = sum v^2 / F, *lf = sum log F in time order over the
 * observed values (a missing one is predicted across without an update);
 * 0 when a variance is not positive or a sum not finite. The update is
 * a += P e0 v / F, P -= P e0 e0' P / F; the prediction a <- T a,
 * P <- T P T' + R R' (T: phi in the first column, ones above the diagonal).
 * With wk->fin, v, F and pr get each step's innovation, variance and
 * prediction; a and P end as the state predicted after the last value.
 * Two shortcuts that move no bit: log F is taken again only when F's bits
 * change, and once an observed step's update leaves every bit of P as it
 * was, P is a fixed point of that step's map, so later observed steps skip
 * it (a missing value's step runs the whole update and ends the skip). A
 * stationary filter converges in tens to hundreds of steps, after which a
 * step costs O(r) rather than O(r^2) and a logarithm. */
/* Entry j of row i of T TP (ak_filter's prediction): phi_i TP_0j plus
 * TP_(i+1)j, the update of the old P's row i + 1 at offset o1 read on the
 * fly (nxt 1: P_(i+1)j - k p0_j; 2, a missing value's step: P_(i+1)j as it
 * is; 0, the last row: + 0). */
SB_FN double ak_pred_elem(sb_i64 sw, int nxt, double phii, double k, SB_GLOBAL const double *t0,
                          SB_GLOBAL const double *p0, SB_GLOBAL const double *P, sb_i64 o1, sb_i32 j) {
    if (nxt == 1) return phii * AK(t0, j) + (AK(P, o1 + j) - k * AK(p0, j));
    if (nxt == 2) return phii * AK(t0, j) + AK(P, o1 + j);
    return phii * AK(t0, j) + 0.0;
}

#if defined(SB_SABOTAGE_ARIMA_DEVICE_ORDER) || defined(SB_SABOTAGE_ARIMA_KALMAN_ORDER)
/* Separating arms (the device's, the host's): the three terms in another order. */
#define AK_KALMAN_SUM(tt, nx, rr) ((tt) + ((nx) + (rr)))
#else
#define AK_KALMAN_SUM(tt, nx, rr) (((tt) + (nx)) + (rr))
#endif
SB_FN_BIG int ak_filter_mem(ak_work *wk, double mu, double *S, double *lf) {
    const sb_i64 sw = wk->sw;
    const sb_i32 r = wk->r;
    SB_GLOBAL double *a = wk->a, *P = wk->P;
    /* a step's rows: t0 the updated row 0, p0 the row 0 before the update
     * (the doubling's scratch, free here) */
    SB_GLOBAL double *t0 = wk->TP, *p0 = wk->A;
    SB_GLOBAL const double *phi = wk->phi, *th = wk->theta;
    ak_lyapunov(wk);
    for (sb_i32 i = 0; i < r; i++) AK(a, i) = 0.0;
    double s = 0.0, l = 0.0;
    sb_u64 fbits = sb_d2u(-1.0); /* the bits of the F whose log is lF: no positive F has these */
    double lF = 0.0;
    int fixed = 0; /* the last observed step left P as it was */
    for (sb_i64 t = 0; t < wk->nd; t++) {
        const double F = AK(P, 0);
        if (!(F > 0.0)) return 0;
        if (wk->fin) AK(wk->pr, t) = mu + AK(a, 0);
        const double wt = AK(wk->w, t);
        const int obs = !ak_missing(wt);
        if (!obs) {
            if (wk->fin) AK(wk->v, t) = ak_nan(), AK(wk->F, t) = F;
        } else {
            const double v = wt - mu - AK(a, 0);
            if (wk->fin) AK(wk->v, t) = v, AK(wk->F, t) = F;
            s = s + (v * v) / F;
            if (sb_d2u(F) != fbits) fbits = sb_d2u(F), lF = ak_log(F);
            l = l + lF;
            for (sb_i32 i = 0; i < r; i++) AK(a, i) = AK(a, i) + AK(P, i * r) * (v / F);
        }
        const double a0 = AK(a, 0);
        for (sb_i32 i = 0; i + 1 < r; i++) AK(a, i) = AK(phi, i) * a0 + AK(a, i + 1);
        AK(a, r - 1) = AK(phi, r - 1) * a0 + 0.0;
        if (obs && fixed) {
            if (!ak_finite(s) || !ak_finite(l)) return 0;
            continue;
        }
        /* The update TP = P - P e0 e0' P / F (row i: P_i. - (P_i0 / F) P_0.;
         * TP = P where the value is missing), the prediction
         * P <- T TP T' + R R', one row at a time in place: row i of T TP is
         * phi_i TP_0. + TP_(i+1). (the last row phi_i TP_0. + 0), and row i of
         * the new P is (g_0 phi_j + g_(j+1)) + theta_i theta_j (the last
         * column's g_(j+1) is 0), g row i of T TP (ak_pred_elem). Row i + 1
         * of the old P is read (updated on the fly) before row i of the new
         * one is written, row 0 kept aside in p0. */
        int same = 1; /* every entry of the new P has the old one's bits */
        const double k0 = AK(P, 0) / F;
        for (sb_i32 j = 0; j < r; j++) {
            const double pj = AK(P, j);
            AK(p0, j) = pj;
            AK(t0, j) = obs ? pj - k0 * pj : pj;
        }
        for (sb_i32 i = 0; i < r; i++) {
            const double phii = AK(phi, i), thi = AK(th, i);
            const sb_i64 o = (sb_i64)i * r, o1 = o + r;
            /* what row i + 1 of the update is (0: the last row has none) */
            const int nxt = i + 1 == r ? 0 : (obs ? 1 : 2);
            const double k = nxt == 1 ? AK(P, o1) / F : 0.0;
            const double gi0 = ak_pred_elem(sw, nxt, phii, k, t0, p0, P, o1, 0);
            for (sb_i32 j = 0; j + 1 < r; j++) {
                const double gn = ak_pred_elem(sw, nxt, phii, k, t0, p0, P, o1, j + 1);
                const double pij = AK_KALMAN_SUM(gi0 * AK(phi, j), gn, thi * AK(th, j));
                same = same && sb_d2u(pij) == sb_d2u(AK(P, o + j));
                AK(P, o + j) = pij;
            }
            const double pil = AK_KALMAN_SUM(gi0 * AK(phi, r - 1), 0.0, thi * AK(th, r - 1));
            same = same && sb_d2u(pil) == sb_d2u(AK(P, o + r - 1));
            AK(P, o + r - 1) = pil;
        }
        fixed = obs && same;
        if (!ak_finite(s) || !ak_finite(l)) return 0;
    }
    *S = s, *lf = l;
    return 1;
}

/* ak_filter_mem's filter for a state of at most AK_RR, the same bits: the
 * state, its covariance, phi and theta held in fixed-size arrays (every loop
 * over them of constant length, unrolled, an element past r left alone, so a
 * device keeps them in registers), each element computed by the same
 * operations in the same order (row i of the new P from the old rows 0 and
 * i + 1, the last column's g_(j+1) the literal 0.0). On a device the strided
 * scratch cost a memory access's latency several times a step, and one
 * work-item a series has few warps to hide it behind. a and P are written
 * back at the end, as the general filter leaves them. */
#define AK_RR 4
#if defined(SB_COMPAT_DEVICE) || defined(AK_FILTER_REG)
#define AK_USE_REG 1
#endif
#ifdef AK_USE_REG
SB_FN_BIG int ak_filter_reg(ak_work *wk, double mu, double *S, double *lf) {
    const sb_i64 sw = wk->sw;
    const sb_i32 r = wk->r;
    double a[AK_RR], P[AK_RR][AK_RR], phi[AK_RR], th[AK_RR], t0[AK_RR], p0[AK_RR];
    ak_lyapunov(wk);
    SB_UNROLL for (sb_i32 i = 0; i < AK_RR; i++) {
        a[i] = 0.0, phi[i] = 0.0, th[i] = 0.0, t0[i] = 0.0, p0[i] = 0.0;
        if (i < r) phi[i] = AK(wk->phi, i), th[i] = AK(wk->theta, i);
        SB_UNROLL for (sb_i32 j = 0; j < AK_RR; j++) P[i][j] = (i < r && j < r) ? AK(wk->P, i * r + j) : 0.0;
    }
    double s = 0.0, l = 0.0;
    sb_u64 fbits = sb_d2u(-1.0);
    double lF = 0.0;
    int fixed = 0;
    /* the next AK_LS_ROWS values read ahead (a rotating window), so a step
     * does not wait for its value's memory latency */
    const sb_i64 nd = wk->nd;
    double wq[AK_LS_ROWS];
    SB_UNROLL for (sb_i32 u = 0; u < AK_LS_ROWS; u++) wq[u] = nd > 0 ? AK(wk->w, u < nd ? u : nd - 1) : 0.0;
    for (sb_i64 t = 0; t < nd; t++) {
        const double F = P[0][0];
        if (!(F > 0.0)) return 0;
        if (wk->fin) AK(wk->pr, t) = mu + a[0];
        const double wt = wq[0];
        SB_UNROLL for (sb_i32 u = 0; u + 1 < AK_LS_ROWS; u++) wq[u] = wq[u + 1];
        wq[AK_LS_ROWS - 1] = AK(wk->w, t + AK_LS_ROWS < nd ? t + AK_LS_ROWS : nd - 1);
        const int obs = !ak_missing(wt);
        if (!obs) {
            if (wk->fin) AK(wk->v, t) = ak_nan(), AK(wk->F, t) = F;
        } else {
            const double v = wt - mu - a[0];
            if (wk->fin) AK(wk->v, t) = v, AK(wk->F, t) = F;
            s = s + (v * v) / F;
            if (sb_d2u(F) != fbits) fbits = sb_d2u(F), lF = ak_log(F);
            l = l + lF;
            SB_UNROLL for (sb_i32 i = 0; i < AK_RR; i++)
                if (i < r) a[i] = a[i] + P[i][0] * (v / F);
        }
        const double a0 = a[0];
        SB_UNROLL for (sb_i32 i = 0; i < AK_RR; i++)
            if (i < r) a[i] = phi[i] * a0 + (i + 1 < r ? a[(i + 1) % AK_RR] : 0.0);
        if (obs && fixed) {
            if (!ak_finite(s) || !ak_finite(l)) return 0;
            continue;
        }
        int same = 1;
        const double k0 = P[0][0] / F;
        SB_UNROLL for (sb_i32 j = 0; j < AK_RR; j++)
            if (j < r) {
                const double pj = P[0][j];
                p0[j] = pj;
                t0[j] = obs ? pj - k0 * pj : pj;
            }
        SB_UNROLL for (sb_i32 i = 0; i < AK_RR; i++) {
            if (i >= r) continue;
            const sb_i32 i1 = (i + 1) % AK_RR; /* row i + 1, read only when i + 1 < r */
            const int nxt = i + 1 == r ? 0 : (obs ? 1 : 2);
            const double k = nxt == 1 ? P[i1][0] / F : 0.0;
            double g[AK_RR];
            SB_UNROLL for (sb_i32 j = 0; j < AK_RR; j++)
                g[j] = nxt == 1 ? phi[i] * t0[j] + (P[i1][j] - k * p0[j])
                                : (nxt == 2 ? phi[i] * t0[j] + P[i1][j] : phi[i] * t0[j] + 0.0);
            SB_UNROLL for (sb_i32 j = 0; j < AK_RR; j++)
                if (j < r) {
                    const double gn = j + 1 < r ? g[(j + 1) % AK_RR] : 0.0;
                    const double pij = AK_KALMAN_SUM(g[0] * phi[j], gn, th[i] * th[j]);
                    same = same && sb_d2u(pij) == sb_d2u(P[i][j]);
                    P[i][j] = pij;
                }
        }
        fixed = obs && same;
        if (!ak_finite(s) || !ak_finite(l)) return 0;
    }
    SB_UNROLL for (sb_i32 i = 0; i < AK_RR; i++)
        if (i < r) {
            AK(wk->a, i) = a[i];
            SB_UNROLL for (sb_i32 j = 0; j < AK_RR; j++)
                if (j < r) AK(wk->P, i * r + j) = P[i][j];
        }
    *S = s, *lf = l;
    return 1;
}

#endif

/* The filter (ak_filter_mem's contract): on a device the register spelling
 * for a state of at most AK_RR, the strided scratch's beyond. The host keeps
 * ak_filter_mem (its scratch is in its caches, and the register spelling's
 * guards cost it time); tests/unit/test_arima_device.c compiles this header
 * with AK_FILTER_REG beside the library's host fit, so the two spellings are
 * held to the same bits on every CPU leg, and PoCL runs the device's. */
SB_FN_BIG int ak_filter(ak_work *wk, double mu, double *S, double *lf) {
#ifdef AK_USE_REG
    if (wk->r <= AK_RR) return ak_filter_reg(wk, mu, S, lf);
#endif
    return ak_filter_mem(wk, mu, S, lf);
}

/* The conditional sum of squares' objective (method=css; Box and Jenkins'
 * conditional least squares, as R's arima "CSS" states it): with
 * z_t = w_t - mu, the residuals e_t = z_t - sum_k phi_k z_{t-k} -
 * sum_k theta_k e_{t-k} (the expanded polynomials, k ascending) from t =
 * p + sP on, the earlier e_t = 0; a residual whose z_t or AR lags touch a
 * missing value is 0 and not counted. Returns nu log(SSQ / nu) over the nu
 * counted residuals (sum in time order), +infinity where SSQ is not positive
 * and finite. The residuals' scratch is wk->v (the final pass overwrites it). */
SB_FN_BIG double ak_css_objective(ak_work *wk, double mu) {
    const sb_i64 sw = wk->sw;
    const ak_spec *sp = &wk->sp;
    const sb_i32 np = sp->p + sp->s * sp->P, nq = sp->q + sp->s * sp->Q;
    SB_GLOBAL double *e = wk->v;
    double ssq = 0.0;
    sb_i64 nu = 0;
    for (sb_i64 t = 0; t < wk->nd; t++) {
        AK(e, t) = 0.0;
        if (t < np || ak_missing(AK(wk->w, t))) continue;
        double x = AK(wk->w, t) - mu;
        int miss = 0;
        for (sb_i32 k = 1; k <= np; k++) {
            const double z = AK(wk->w, t - k);
            if (ak_missing(z)) {
                miss = 1;
                break;
            }
            x = x - AK(wk->phi, k - 1) * (z - mu);
        }
        if (miss) continue;
        for (sb_i32 k = 1; k <= nq && k <= t; k++) x = x - AK(wk->theta, k) * AK(e, t - k);
        AK(e, t) = x;
        ssq = ssq + x * x;
        nu++;
    }
    if (!(ssq > 0.0) || !ak_finite(ssq) || nu == 0) return ak_inf();
    const double o = (double)nu * ak_log(ssq / (double)nu);
    return ak_finite(o) ? o : ak_inf();
}

/* The search's objective at the vertex x (strided, nx values): -2 llf less
 * its constant, nobs log(S) + sum log F (+infinity where the filter fails),
 * or the conditional sum of squares' (wk->css). */
SB_FN double ak_objective(ak_work *wk, SB_GLOBAL const double *xs) {
    const sb_i64 sw = wk->sw;
    double x[AK_NM_MAXD], par[AK_MAX_PAR], S = 0.0, lf = 0.0;
    for (sb_i32 i = 0; i < wk->nx; i++) x[i] = AK(xs, i);
    ak_params_of(wk, x, par);
    ak_expand(wk, par);
    wk->nfev++;
    if (wk->css) return ak_css_objective(wk, wk->sp.trend ? par[0] : 0.0);
    if (!ak_filter(wk, wk->sp.trend ? par[0] : 0.0, &S, &lf) || !(S > 0.0)) return ak_inf();
    const double o = (double)wk->nobs * ak_log(S) + lf;
    return ak_finite(o) ? o : ak_inf();
}

/* The BFGS's objective, ak_objective / (2 nobs): R's scale (its arima
 * minimizes 0.5 log(S / n) + 0.5 sum log F_t / n, the same up to a
 * constant), so the search's first step (minus the gradient, from the
 * identity) moves the coordinates by amounts of order one, not of order
 * nobs; unscaled, that step throws ARMA fits of trending series onto the
 * unit-root boundary's plateau (realgdp's ARMA(2,1): llf -1186 against
 * -1109). One evaluation counts once in nfev. SB_FN_BIG: the BFGS calls it
 * from three places (start, gradient, line search), and CUDA's ptxas spent
 * a third more time on entry_ts.cu with each an inline copy. */
SB_FN_BIG double ak_bfgs_eval(ak_work *wk, SB_GLOBAL const double *xs) {
    return ak_objective(wk, xs) / (2.0 * (double)wk->nobs);
}

/* The shared BFGS over ak_bfgs_eval: ak_bfgs(wk, nx, sw, x, ws, maxit,
 * reltol, h, trace, &nit, &fmin) (kernels/ts_bfgs.h states it). */
#define TSB_NAME ak_bfgs
#define TSB_CTX ak_work
#define TSB_EVAL(c, x) ak_bfgs_eval((c), (x))
#include "ts_bfgs.h"

/* An evaluation of the simplex, counted in the same counter its objective
 * counts in (the fit's nfev is twice the evaluations, as it always was). */
SB_FN double ak_nm_eval(ak_work *wk, SB_GLOBAL const double *xs) {
    const double f = ak_objective(wk, xs);
    wk->nfev++;
    return f;
}

/* One Nelder-Mead run (Nelder and Mead 1965, in the ordering of Lagarias,
 * Reeds, Wright and Wright, SIAM J. Optim. 9, 1998: reflection 1, expansion
 * 2, contractions 1/2, shrink 1/2, vertices kept ordered by value, ties in
 * their previous order) over ak_objective from wk->x with the steps wk->step
 * (vertex i moves coordinate i - 1 by its step): vertex i is nv[i * nx ..]
 * (strided), its value nfv[i]. Stops when every vertex is within AK_NM_XTOL
 * of the best in every coordinate and the values' spread is at most
 * AK_NM_FTOL (1 + |best|), or after maxit iterations; wk->x gets the best
 * vertex, *nit the iterations run, *conv 1 when the tolerances were met,
 * trace (may be 0) the best value after each iteration. */
SB_FN_BIG void ak_nelder_mead(ak_work *wk, sb_i32 maxit, SB_GLOBAL double *trace, sb_i32 *nit, sb_i32 *conv) {
    const sb_i64 sw = wk->sw;
    const sb_i32 d = wk->nx;
    SB_GLOBAL double *V = wk->nv, *fv = wk->nfv, *c = wk->nc, *xr = wk->nxr, *xe = wk->nxe, *xc = wk->nxc;
    sb_i32 ord[AK_NM_MAXD + 1];
    for (sb_i32 i = 0; i <= d; i++) {
        for (sb_i32 j = 0; j < d; j++) AK(V, i * d + j) = AK(wk->x, j);
        if (i > 0) AK(V, i * d + i - 1) = AK(wk->x, i - 1) + AK(wk->step, i - 1);
        AK(fv, i) = ak_nm_eval(wk, V + (sb_i64)(i * d) * sw);
        ord[i] = i;
    }
    *conv = 0;
    sb_i32 it;
    for (it = 0; it < maxit; it++) {
        for (sb_i32 i = 1; i <= d; i++)
            for (sb_i32 j = i; j > 0 && AK(fv, ord[j]) < AK(fv, ord[j - 1]); j--) {
                const sb_i32 t = ord[j];
                ord[j] = ord[j - 1], ord[j - 1] = t;
            }
        const sb_i32 bo = ord[0];
        const double fb = AK(fv, bo);
        if (trace) trace[it] = fb;
        double xs = 0.0, fs = 0.0;
        for (sb_i32 i = 1; i <= d; i++) {
            const double df = AK(fv, ord[i]) - fb;
            fs = df > fs || df != df ? df : fs;
            for (sb_i32 j = 0; j < d; j++) {
                const double dx = AK(V, ord[i] * d + j) - AK(V, bo * d + j), ax = dx < 0.0 ? -dx : dx;
                xs = ax > xs ? ax : xs;
            }
        }
        const double afb = fb < 0.0 ? -fb : fb;
        if (xs <= AK_NM_XTOL && fs <= AK_NM_FTOL * (1.0 + afb)) {
            *conv = 1;
            it++;
            break;
        }
        const sb_i32 wi = ord[d];
        for (sb_i32 j = 0; j < d; j++) {
            double sum = 0.0;
            for (sb_i32 i = 0; i < d; i++) sum = sum + AK(V, ord[i] * d + j);
            AK(c, j) = sum / (double)d;
        }
        for (sb_i32 j = 0; j < d; j++) AK(xr, j) = AK(c, j) + (AK(c, j) - AK(V, wi * d + j));
        const double fr = ak_nm_eval(wk, xr);
        int shrink = 0;
        if (fr < fb) {
            for (sb_i32 j = 0; j < d; j++) AK(xe, j) = AK(c, j) + 2.0 * (AK(c, j) - AK(V, wi * d + j));
            const double fe = ak_nm_eval(wk, xe);
            if (fe < fr) {
                for (sb_i32 j = 0; j < d; j++) AK(V, wi * d + j) = AK(xe, j);
                AK(fv, wi) = fe;
            } else {
                for (sb_i32 j = 0; j < d; j++) AK(V, wi * d + j) = AK(xr, j);
                AK(fv, wi) = fr;
            }
        } else if (fr < AK(fv, ord[d - 1])) {
            for (sb_i32 j = 0; j < d; j++) AK(V, wi * d + j) = AK(xr, j);
            AK(fv, wi) = fr;
        } else if (fr < AK(fv, wi)) {
            for (sb_i32 j = 0; j < d; j++) AK(xc, j) = AK(c, j) + 0.5 * (AK(xr, j) - AK(c, j));
            const double fc = ak_nm_eval(wk, xc);
            if (fc <= fr) {
                for (sb_i32 j = 0; j < d; j++) AK(V, wi * d + j) = AK(xc, j);
                AK(fv, wi) = fc;
            } else shrink = 1;
        } else {
            for (sb_i32 j = 0; j < d; j++) AK(xc, j) = AK(c, j) + 0.5 * (AK(V, wi * d + j) - AK(c, j));
            const double fc = ak_nm_eval(wk, xc);
            if (fc < AK(fv, wi)) {
                for (sb_i32 j = 0; j < d; j++) AK(V, wi * d + j) = AK(xc, j);
                AK(fv, wi) = fc;
            } else shrink = 1;
        }
        if (shrink) {
            const sb_i32 bi = ord[0];
            for (sb_i32 i = 0; i <= d; i++) {
                if (i == bi) continue;
                for (sb_i32 j = 0; j < d; j++)
                    AK(V, i * d + j) = AK(V, bi * d + j) + 0.5 * (AK(V, i * d + j) - AK(V, bi * d + j));
                AK(fv, i) = ak_nm_eval(wk, V + (sb_i64)(i * d) * sw);
            }
        }
    }
    *nit = it;
    sb_i32 bi = 0;
    for (sb_i32 i = 1; i <= d; i++)
        if (AK(fv, i) < AK(fv, bi)) bi = i;
    for (sb_i32 j = 0; j < d; j++) AK(wk->x, j) = AK(V, bi * d + j);
}

/* Solve G x = b for the k x k symmetric G (strided, row-major; its lower
 * triangle read) by Cholesky, in place: G's lower triangle becomes L, b
 * becomes x. Every sum runs over its index ascending. Returns 0 (G, b then
 * undefined) when a pivot is not above AK_HR_PIVOT times its diagonal entry
 * or is not finite: the regression is singular. */
SB_FN int ak_chol_solve(sb_i64 sw, SB_GLOBAL double *G, SB_GLOBAL double *b, sb_i32 k) {
    for (sb_i32 j = 0; j < k; j++) {
        double d = AK(G, j * k + j);
        const double d0 = d;
        for (sb_i32 l = 0; l < j; l++) d = d - AK(G, j * k + l) * AK(G, j * k + l);
        if (!(d > AK_HR_PIVOT * d0) || !ak_finite(d)) return 0;
        const double ljj = ak_sqrt(d);
        AK(G, j * k + j) = ljj;
        for (sb_i32 i = j + 1; i < k; i++) {
            double a = AK(G, i * k + j);
            for (sb_i32 l = 0; l < j; l++) a = a - AK(G, i * k + l) * AK(G, j * k + l);
            AK(G, i * k + j) = a / ljj;
        }
    }
    for (sb_i32 i = 0; i < k; i++) {
        double a = AK(b, i);
        for (sb_i32 l = 0; l < i; l++) a = a - AK(G, i * k + l) * AK(b, l);
        AK(b, i) = a / AK(G, i * k + i);
    }
    for (sb_i32 i = k - 1; i >= 0; i--) {
        double a = AK(b, i);
        for (sb_i32 l = i + 1; l < k; l++) a = a - AK(G, l * k + i) * AK(b, l);
        AK(b, i) = a / AK(G, i * k + i);
    }
    for (sb_i32 i = 0; i < k; i++)
        if (!ak_finite(AK(b, i))) return 0;
    return 1;
}

/* Regressor j at time t of ak_least_squares: in the long AR (lag ==
 * 0) z lagged j + 1; else z or e (group 1 or 3: the residuals) lagged
 * lag[j]. */
SB_FN double ak_reg(const ak_work *wk, const sb_i32 *lag, const sb_i32 *grp, sb_i32 j, sb_i64 t) {
    const sb_i64 sw = wk->sw;
    if (!lag) return AK(wk->z, t - (j + 1));
    return (grp[j] == 1 || grp[j] == 3) ? AK(wk->e, t - lag[j]) : AK(wk->z, t - lag[j]);
}

/* Two spellings of the start's least squares, the same bits: on a device
 * (AK_USE_REG, as for the filter) the sums are taken in chunks of
 * AK_LS_ROWS rows whose values are read into registers first, one memory
 * latency a chunk; the host keeps the plain loops (its values are in its
 * caches, and the chunks' guards and the long AR's whole blocks cost it
 * about a tenth of the fit). tests/unit/test_arima_device.c compiles the
 * device's spelling beside the library's host fit on every CPU leg. */
#ifdef AK_USE_REG
/* sum over the rows t in [t0, n) with ok_t != 0 (every row when ok is NULL)
 * of ak_reg(i, t) * ak_reg(j, t) (j < 0: * z_t), in time order from 0.0. */
SB_FN double ak_ls_dot(const ak_work *wk, sb_i64 t0, SB_GLOBAL const double *ok, const sb_i32 *lag,
                       const sb_i32 *grp, sb_i32 i, sb_i32 j) {
    const sb_i64 sw = wk->sw, n = wk->nd;
    double g = 0.0;
    for (sb_i64 t = t0; t < n; t += AK_LS_ROWS) {
        double xi[AK_LS_ROWS], xj[AK_LS_ROWS], m[AK_LS_ROWS];
        SB_UNROLL for (sb_i32 s = 0; s < AK_LS_ROWS; s++) {
            const sb_i64 ts = t + s < n ? t + s : n - 1;
            m[s] = t + s < n ? (ok ? AK(ok, ts) : 1.0) : 0.0;
            xi[s] = ak_reg(wk, lag, grp, i, ts);
            xj[s] = j < 0 ? AK(wk->z, ts) : ak_reg(wk, lag, grp, j, ts);
        }
        SB_UNROLL for (sb_i32 s = 0; s < AK_LS_ROWS; s++)
            if (m[s] != 0.0) g = g + xi[s] * xj[s];
    }
    return g;
}

/* The long AR's entries G_(i, jb + u), u < AK_LS_BLOCK, every row from t0
 * observed (jb + AK_LS_BLOCK <= t0: no lag reaches before z_0): the sums of
 * z_(t-1-i) z_(t-1-jb-u) over t in time order from 0.0. A chunk's lagged
 * values are one window (zw[s + AK_LS_BLOCK - 1 - u] is z_(t+s-1-jb-u)). */
SB_FN void ak_ls_longar_block(const ak_work *wk, sb_i64 t0, sb_i32 i, sb_i32 jb, double *g) {
    const sb_i64 sw = wk->sw, n = wk->nd;
    SB_GLOBAL const double *z = wk->z;
    SB_UNROLL for (sb_i32 u = 0; u < AK_LS_BLOCK; u++) g[u] = 0.0;
    for (sb_i64 t = t0; t < n; t += AK_LS_ROWS) {
        double zi[AK_LS_ROWS], zw[AK_LS_ROWS + AK_LS_BLOCK - 1];
        SB_UNROLL for (sb_i32 s = 0; s < AK_LS_ROWS; s++) zi[s] = AK(z, (t + s < n ? t + s : n - 1) - 1 - i);
        SB_UNROLL for (sb_i32 q = 0; q < AK_LS_ROWS + AK_LS_BLOCK - 1; q++) {
            const sb_i64 tq = t - jb - AK_LS_BLOCK + q; /* >= t0 - jb - AK_LS_BLOCK >= 0 */
            zw[q] = AK(z, tq < n ? tq : n - 1);
        }
        SB_UNROLL for (sb_i32 s = 0; s < AK_LS_ROWS; s++)
            if (t + s < n)
                SB_UNROLL for (sb_i32 u = 0; u < AK_LS_BLOCK; u++) g[u] = g[u] + zi[s] * zw[s + AK_LS_BLOCK - 1 - u];
    }
}

/* The least squares fit of z on k regressors (ak_reg) over the rows t >= t0
 * where z_t and every regressor are observed: the normal equations (sums in
 * time order) solved by ak_chol_solve into beta. Returns the rows used, or
 * -1 when they are fewer than 2k or the equations are singular.
 * Each sum (beta_i, G_ij) runs over the rows in time order from 0.0 (the
 * same bits as one pass over the rows updating every element). The long AR
 * (lag NULL) with every row observed takes a row of G AK_LS_BLOCK entries a
 * pass (a row's last block ends on the diagonal, so an entry of two blocks is
 * computed twice, the same bits); otherwise the rows are marked once in wk->v
 * (free until the final pass) and each element is a pass (ak_ls_dot). */
SB_FN_BIG sb_i64 ak_least_squares(ak_work *wk, sb_i64 t0, sb_i32 k, const sb_i32 *lag, const sb_i32 *grp) {
    const sb_i64 sw = wk->sw, n = wk->nd;
    SB_GLOBAL double *G = wk->G, *beta = wk->beta, *ok = wk->v;
    for (sb_i32 i = 0; i < k; i++)
        for (sb_i32 j = 0; j < k; j++) AK(G, i * k + j) = 0.0;
    int whole = !lag && k >= AK_LS_BLOCK && t0 >= k; /* the long AR: every row observed when z is */
    for (sb_i64 t = 0; t < n && whole; t += AK_LS_ROWS) {
        double zs[AK_LS_ROWS];
        SB_UNROLL for (sb_i32 s = 0; s < AK_LS_ROWS; s++) zs[s] = AK(wk->z, t + s < n ? t + s : n - 1);
        SB_UNROLL for (sb_i32 s = 0; s < AK_LS_ROWS; s++) whole = whole && !ak_missing(zs[s]);
    }
    sb_i64 rows = 0;
    if (whole) {
        rows = t0 < n ? n - t0 : 0;
        for (sb_i32 i = 0; i < k; i++) {
            AK(beta, i) = ak_ls_dot(wk, t0, 0, 0, 0, i, -1);
            for (sb_i32 j0 = 0; j0 <= i; j0 += AK_LS_BLOCK) {
                const sb_i32 jb = j0 + AK_LS_BLOCK - 1 <= i ? j0 : (i + 1 >= AK_LS_BLOCK ? i + 1 - AK_LS_BLOCK : 0);
                double g[AK_LS_BLOCK];
                ak_ls_longar_block(wk, t0, i, jb, g);
                SB_UNROLL for (sb_i32 u = 0; u < AK_LS_BLOCK; u++)
                    if (jb + u <= i) AK(G, i * k + jb + u) = g[u];
            }
        }
    } else {
        for (sb_i64 t = t0; t < n; t++) {
            int miss = ak_missing(AK(wk->z, t));
            for (sb_i32 j = 0; j < k && !miss; j++) miss = ak_missing(ak_reg(wk, lag, grp, j, t));
            AK(ok, t) = miss ? 0.0 : 1.0;
            rows += miss ? 0 : 1;
        }
        for (sb_i32 i = 0; i < k; i++) {
            AK(beta, i) = ak_ls_dot(wk, t0, ok, lag, grp, i, -1);
            for (sb_i32 j = 0; j <= i; j++) AK(G, i * k + j) = ak_ls_dot(wk, t0, ok, lag, grp, i, j);
        }
    }
    if (rows < 2 * (sb_i64)k || !ak_chol_solve(sw, G, beta, k)) return -1;
    return rows;
}

#else

/* The least squares fit of z on k regressors (ak_reg) over the rows t >= t0
 * where z_t and every regressor are observed: the normal equations (sums in
 * time order) solved by ak_chol_solve into beta. Returns the rows used, or
 * -1 when they are fewer than 2k or the equations are singular.
 * Each sum (beta_i, G_ij) runs over the rows in time order from 0.0; the
 * sums are taken an element, or four elements of a row of G side by side, at
 * a time with the accumulators in registers (on a device a read-modify-write
 * of the strided G for every row was the start's cost), the rows marked
 * once in wk->v (free until the final pass). The same bits as one pass over
 * the rows updating every element. */
#define AK_LS_HBLOCK 4 /* the host's elements of a row side by side */
SB_FN_BIG sb_i64 ak_least_squares(ak_work *wk, sb_i64 t0, sb_i32 k, const sb_i32 *lag, const sb_i32 *grp) {
    const sb_i64 sw = wk->sw, n = wk->nd;
    SB_GLOBAL double *G = wk->G, *beta = wk->beta, *ok = wk->v;
    for (sb_i32 i = 0; i < k; i++)
        for (sb_i32 j = 0; j < k; j++) AK(G, i * k + j) = 0.0;
    sb_i64 rows = 0;
    for (sb_i64 t = t0; t < n; t++) {
        int miss = ak_missing(AK(wk->z, t));
        for (sb_i32 j = 0; j < k && !miss; j++) miss = ak_missing(ak_reg(wk, lag, grp, j, t));
        AK(ok, t) = miss ? 0.0 : 1.0;
        rows += miss ? 0 : 1;
    }
    for (sb_i32 i = 0; i < k; i++) {
        double b = 0.0;
        for (sb_i64 t = t0; t < n; t++)
            if (AK(ok, t) != 0.0) b = b + ak_reg(wk, lag, grp, i, t) * AK(wk->z, t);
        AK(beta, i) = b;
        sb_i32 j = 0;
        for (; j + AK_LS_HBLOCK <= i + 1; j += AK_LS_HBLOCK) {
            double g0 = 0.0, g1 = 0.0, g2 = 0.0, g3 = 0.0;
            for (sb_i64 t = t0; t < n; t++) {
                if (AK(ok, t) == 0.0) continue;
                const double xi = ak_reg(wk, lag, grp, i, t);
                g0 = g0 + xi * ak_reg(wk, lag, grp, j, t);
                g1 = g1 + xi * ak_reg(wk, lag, grp, j + 1, t);
                g2 = g2 + xi * ak_reg(wk, lag, grp, j + 2, t);
                g3 = g3 + xi * ak_reg(wk, lag, grp, j + 3, t);
            }
            AK(G, i * k + j) = g0, AK(G, i * k + j + 1) = g1, AK(G, i * k + j + 2) = g2, AK(G, i * k + j + 3) = g3;
        }
        for (; j <= i; j++) {
            double g = 0.0;
            for (sb_i64 t = t0; t < n; t++)
                if (AK(ok, t) != 0.0) g = g + ak_reg(wk, lag, grp, i, t) * ak_reg(wk, lag, grp, j, t);
            AK(G, i * k + j) = g;
        }
    }
    if (rows < 2 * (sb_i64)k || !ak_chol_solve(sw, G, beta, k)) return -1;
    return rows;
}

#endif

/* The unconstrained values u of n coefficients y (1 + y_1 B + ...), Monahan's
 * map inverted: the step-down recursion's partial autocorrelations r_k, then
 * u_k = r_k / sqrt(1 - r_k^2). Returns 0 when some r_k is not inside
 * (-1, 1): the polynomial is not stationary (invertible). */
SB_FN int ak_unconstrain(const double *y0, sb_i32 n, double *u) {
    double y[AK_MAX_ORDER], t[AK_MAX_ORDER], rk[AK_MAX_ORDER];
    for (sb_i32 i = 0; i < n; i++) y[i] = y0[i];
    for (sb_i32 k = n - 1; k >= 0; k--) {
        const double r = y[k];
        if (!(r < 1.0 && r > -1.0)) return 0;
        rk[k] = r;
        const double den = 1.0 - r * r;
        for (sb_i32 i = 0; i < k; i++) t[i] = (y[i] - r * y[k - 1 - i]) / den;
        for (sb_i32 i = 0; i < k; i++) y[i] = t[i];
    }
    for (sb_i32 k = 0; k < n; k++) {
        const double u2 = rk[k] / ak_sqrt(1.0 - rk[k] * rk[k]);
        if (!ak_finite(u2)) return 0;
        u[k] = u2;
    }
    return 1;
}

/* The Hannan-Rissanen start (Hannan and Rissanen, "Recursive estimation of
 * mixed autoregressive-moving average order", Biometrika 69, 1982) of the
 * search's coordinates x (private, nx; x[0], the const's, is left alone):
 * z = w less its mean with a const, w itself without.
 * 1. Without MA terms (q = Q = 0) skip to 3 with no residual columns.
 * 2. A long AR of order m (ak_hr_m: max(floor(log(nd)^2), 2 max(p + sP,
 *    q + sQ)), at most AK_HR_MAXLAG and nd / 4), fitted by least squares
 *    (no intercept) over the rows t >= m; its residuals e_t (missing where a
 *    regressor or z_t is missing, or t < m).
 * 3. The regression of z_t on z_{t-i}, i = 1..p and s, 2s, .., Ps, and on
 *    e_{t-j}, j = 1..q and s, .., Qs (the seasonal lags additively: the
 *    multiplicative cross lags are left out; a seasonal lag that equals a
 *    non-seasonal one, s <= p or s <= q, gets no column and starts at 0),
 *    over the rows where all are observed. Its coefficients are ar.L, ar.S.L,
 *    ma.L, ma.S.L.
 * Fallback: when a regression has fewer rows than twice its columns or is
 * singular, every coefficient starts at 0 (the zero start); when one of the
 * four polynomials is not stationary (invertible) by the step-down
 * recursion, that polynomial's coordinates start at 0 and the others keep
 * theirs. */
SB_FN_BIG void ak_hr_start(ak_work *wk, double *x) {
    const sb_i64 sw = wk->sw;
    const ak_spec *sp = &wk->sp;
    const sb_i32 o = sp->trend, n4[4] = {sp->p, sp->q, sp->P, sp->Q};
    for (sb_i32 i = o; i < wk->nx; i++) x[i] = 0.0;
    if (sp->p + sp->q + sp->P + sp->Q == 0) return;
    const sb_i64 nd = wk->nd;
    const sb_i32 qa = sp->q + sp->s * sp->Q;
    const sb_i64 m = ak_hr_m(sp, nd);
    if (qa > 0 && m < 1) return;
    sb_i32 lag[4 * AK_MAX_ORDER], grp[4 * AK_MAX_ORDER], idx[4 * AK_MAX_ORDER], k = 0;
    for (sb_i32 g = 0; g < 4; g++)
        for (sb_i32 i = 0; i < n4[g]; i++) {
            const sb_i32 lg = g < 2 ? i + 1 : sp->s * (i + 1);
            if (g >= 2 && lg <= n4[g - 2]) continue;
            lag[k] = lg, grp[k] = g, idx[k] = i, k++;
        }
    for (sb_i64 t = 0; t < nd; t++) AK(wk->z, t) = o ? AK(wk->w, t) - wk->mean : AK(wk->w, t);
    int ok = 1;
    if (m > 0) {
        ok = ak_least_squares(wk, m, (sb_i32)m, 0, 0) > 0;
#ifdef AK_USE_REG
        /* e_t = z_t - sum_j beta_j z_(t-1-j), j ascending; AK_LS_ROWS rows at a
         * time, their lagged values one window (zw[s + AK_LS_ROWS - 1 - jj] is
         * z_(t+s-1-j-jj)) */
        for (sb_i64 t = 0; t < nd && t < m && ok; t++) AK(wk->e, t) = ak_nan();
        for (sb_i64 t = m; t < nd && ok; t += AK_LS_ROWS) {
            double a[AK_LS_ROWS];
            SB_UNROLL for (sb_i32 s = 0; s < AK_LS_ROWS; s++) a[s] = AK(wk->z, t + s < nd ? t + s : nd - 1);
            for (sb_i64 j = 0; j < m; j += AK_LS_ROWS) {
                double bb[AK_LS_ROWS], zw[2 * AK_LS_ROWS - 1];
                SB_UNROLL for (sb_i32 q = 0; q < AK_LS_ROWS; q++) bb[q] = AK(wk->beta, j + q < m ? j + q : m - 1);
                SB_UNROLL for (sb_i32 q = 0; q < 2 * AK_LS_ROWS - 1; q++) {
                    const sb_i64 tq = t - j - AK_LS_ROWS + q;
                    zw[q] = AK(wk->z, tq < 0 ? 0 : (tq < nd ? tq : nd - 1));
                }
                SB_UNROLL for (sb_i32 jj = 0; jj < AK_LS_ROWS; jj++)
                    if (j + jj < m)
                        SB_UNROLL for (sb_i32 s = 0; s < AK_LS_ROWS; s++)
                            a[s] = a[s] - bb[jj] * zw[s + AK_LS_ROWS - 1 - jj];
            }
            SB_UNROLL for (sb_i32 s = 0; s < AK_LS_ROWS; s++)
                if (t + s < nd) AK(wk->e, t + s) = ak_missing(AK(wk->z, t + s)) ? ak_nan() : a[s];
        }
#else
        for (sb_i64 t = 0; t < nd && ok; t++) {
            const double zt = AK(wk->z, t);
            if (t < m || ak_missing(zt)) {
                AK(wk->e, t) = ak_nan();
                continue;
            }
            double a = zt;
            for (sb_i64 j = 0; j < m; j++) a = a - AK(wk->beta, j) * AK(wk->z, t - 1 - j);
            AK(wk->e, t) = a;
        }
#endif
    }
    sb_i64 t0 = 0;
    for (sb_i32 j = 0; j < k; j++) {
        const sb_i64 need = (grp[j] == 1 || grp[j] == 3) ? m + lag[j] : lag[j];
        if (need > t0) t0 = need;
    }
    if (ok) ok = t0 < nd && ak_least_squares(wk, t0, k, lag, grp) > 0;
    if (ok) {
        double c[4][AK_MAX_ORDER];
        for (sb_i32 g = 0; g < 4; g++)
            for (sb_i32 i = 0; i < n4[g]; i++) c[g][i] = 0.0;
        for (sb_i32 j = 0; j < k; j++)
            c[grp[j]][idx[j]] = (grp[j] == 0 || grp[j] == 2) ? -AK(wk->beta, j) : AK(wk->beta, j);
        sb_i32 at = o;
        for (sb_i32 g = 0; g < 4; g++) {
            if (!ak_unconstrain(c[g], n4[g], x + at))
                for (sb_i32 i = 0; i < n4[g]; i++) x[at + i] = 0.0;
            at += n4[g];
        }
    }
}

/* Where a series' results go: par (npar), crit (AK_NCRIT: llf, aic, aicc,
 * bic), state (r then r x r: the predicted state and its covariance after
 * the last value), fitted and resid (n each), trace (ak_trace_max), counts
 * (AK_NCOUNTS). */
typedef struct ak_out {
    SB_GLOBAL double *par, *crit, *state, *fitted, *resid, *trace;
    SB_GLOBAL sb_i32 *counts;
} ak_out;

/* One series' fit: y (n values, checked by the host's sb_arima_check), given
 * (npar, read when sp->ngiven), scr this series' scratch (ak_scratch_doubles
 * for at least n - L values, stride sw); css 1: the search minimizes the
 * conditional sum of squares (method=css; the final pass is the filter's all
 * the same, so llf and the criteria are the exact likelihood at its point). */
SB_FN_BIG void ak_fit(const ak_spec *sp, sb_i32 css, SB_GLOBAL const double *given, SB_GLOBAL const double *y, sb_i64 n,
                  SB_GLOBAL double *scr, sb_i64 sw, sb_i64 ndmax, ak_out o) {
    ak_work wk;
    wk.sp = *sp;
    wk.sw = sw;
    wk.r = ak_state_dim(sp), wk.L = ak_diff_lag(sp), wk.nx = ak_npar(sp) - 1, wk.fin = 0, wk.nfev = 0, wk.css = css;
    const sb_i32 r = wk.r, L = wk.L, np = wk.nx + 1;
    const sb_i64 nd = n - L, rr = (sb_i64)r * r, kk = ak_hr_side(sp, ndmax), nx = wk.nx;
    wk.nd = nd;
    SB_GLOBAL double *p = scr;
    wk.phi = p, p += r * sw;
    wk.theta = p, p += r * sw;
    wk.a = p, p += r * sw;
    wk.P = p, p += rr * sw;
    wk.TP = p, p += rr * sw;
    wk.A = p, p += rr * sw;
    wk.B = p, p += rr * sw;
    wk.C = p, p += rr * sw;
    SB_GLOBAL double *w = p;
    p += ndmax * sw;
    wk.v = p, p += ndmax * sw;
    wk.F = p, p += ndmax * sw;
    wk.pr = p, p += ndmax * sw;
    wk.z = p, p += ndmax * sw;
    wk.e = p, p += ndmax * sw;
    wk.dc = p, p += (sb_i64)(L + 1) * sw;
    wk.G = p, p += kk * kk * sw;
    wk.beta = p, p += kk * sw;
    wk.nv = p, p += (nx + 1) * nx * sw;
    wk.nfv = p, p += (nx + 1) * sw;
    wk.nc = p, p += nx * sw;
    wk.nxr = p, p += nx * sw;
    wk.nxe = p, p += nx * sw;
    wk.nxc = p, p += nx * sw;
    wk.x = p, p += nx * sw;
    wk.step = p, p += nx * sw;
    wk.bws = p;
    ak_diff_poly(&wk);
    wk.nobs = ak_difference(&wk, y, n, w);
    wk.w = w;
    double m = 0.0, ss = 0.0;
    for (sb_i64 t = 0; t < nd; t++)
        if (!ak_missing(AK(w, t))) m = m + AK(w, t);
    m = m / (double)wk.nobs;
    for (sb_i64 t = 0; t < nd; t++)
        if (!ak_missing(AK(w, t))) ss = ss + (AK(w, t) - m) * (AK(w, t) - m);
    wk.mean = m; /* the mean and spread of the observed values, in time order */
    wk.scale = ss > 0.0 ? ak_sqrt(ss / (double)wk.nobs) : 1.0;
    sb_i32 converged = 1, ntrace = 0, nit_all = 0;
    double par[AK_MAX_PAR];
    if (sp->ngiven) {
        for (sb_i32 i = 0; i < np; i++) par[i] = given[i];
    } else {
        double x[AK_NM_MAXD];
        for (sb_i32 i = 0; i < wk.nx; i++) x[i] = 0.0;
        ak_hr_start(&wk, x);
        for (sb_i32 i = 0; i < wk.nx; i++) AK(wk.x, i) = x[i], AK(wk.step, i) = AK_NM_STEP;
        const sb_i32 maxit = AK_NM_ITER * (wk.nx > 0 ? wk.nx : 1);
        /* the BFGS from the start; the simplex runs only where it does not
         * converge (a value not finite, or its iteration cap), from its last
         * accepted point, their trace after the BFGS's */
        sb_i32 bst = TSB_CONVERGED;
        if (wk.nx > 0) {
            sb_i32 nit = 0;
            double fmin;
            bst = ak_bfgs(&wk, wk.nx, sw, wk.x, wk.bws, AK_BFGS_MAXIT, AK_BFGS_RELTOL, AK_BFGS_NDEPS, o.trace, &nit,
                          &fmin);
            ntrace = nit + 1, nit_all = nit, converged = bst == TSB_CONVERGED;
        }
        for (sb_i32 run = 0; run < AK_NM_RUNS && wk.nx > 0 && bst != TSB_CONVERGED; run++) {
            sb_i32 nit = 0, conv = 0;
            ak_nelder_mead(&wk, maxit, o.trace + ntrace, &nit, &conv);
            ntrace += nit, nit_all += nit, converged = conv;
            for (sb_i32 i = 0; i < wk.nx; i++) AK(wk.step, i) = AK(wk.step, i) * 0.25;
        }
        for (sb_i32 i = 0; i < wk.nx; i++) x[i] = AK(wk.x, i);
        ak_params_of(&wk, x, par);
    }
    o.counts[1] = nit_all, o.counts[2] = converged, o.counts[3] = ntrace;
    /* the final pass: innovations, variances and the state after the last value */
    wk.fin = 1;
    ak_expand(&wk, par);
    double S = 0.0, lf = 0.0;
    if (!ak_filter(&wk, sp->trend ? par[0] : 0.0, &S, &lf)) {
        o.counts[0] = wk.nfev, o.counts[4] = 1;
        return;
    }
    /* the likelihood counts the observed values; the criteria's nobs (bic,
     * aicc) is nd, missing ones included (statsmodels' nobs_effective) */
    const double no = (double)wk.nobs, nn = (double)nd;
    double llf;
    if (!sp->ngiven) {
        par[np - 1] = S / no;
        llf = -0.5 * (no * (AK_LOG_2PI + 1.0 + ak_log(S / no)) + lf);
    } else {
        const double s2 = par[np - 1];
        llf = -0.5 * ((no * (AK_LOG_2PI + ak_log(s2)) + lf) + S / s2);
    }
    for (sb_i32 i = 0; i < np; i++) o.par[i] = par[i];
    for (sb_i64 t = 0; t < n; t++) {
        if (t < L) {
            o.resid[t] = o.fitted[t] = ak_nan();
        } else if (!ak_missing(AK(wk.v, t - L))) {
            o.resid[t] = AK(wk.v, t - L);
            o.fitted[t] = y[t] - AK(wk.v, t - L);
        } else {
            /* missing: the prediction of y_t (mu + a_0 plus the differencing's
             * lagged terms, k ascending); NaN when a lagged value is missing */
            double s = AK(wk.pr, t - L);
            for (sb_i32 k = 1; k <= L; k++)
                if (AK(wk.dc, k) != 0.0) s = s - AK(wk.dc, k) * y[t - k];
            o.resid[t] = ak_nan();
            o.fitted[t] = s;
        }
    }
    for (sb_i32 i = 0; i < r; i++) o.state[i] = AK(wk.a, i);
    for (sb_i64 k = 0; k < rr; k++) o.state[r + k] = AK(wk.P, k);
    const double kd = (double)np;
    const double aic = -2.0 * llf + 2.0 * kd;
    o.crit[0] = llf;
    o.crit[1] = aic;
    o.crit[2] = nd - np - 1 > 0 ? aic + (2.0 * kd * (kd + 1.0)) / (double)(nd - np - 1) : ak_inf();
    o.crit[3] = -2.0 * llf + kd * ak_log(nn);
    o.counts[0] = wk.nfev, o.counts[4] = 0;
}

/* The device's fit (ke_arima_fit): the exact likelihood's alone. */
SB_FN_BIG void ak_fit_series(const ak_spec *sp, SB_GLOBAL const double *given, SB_GLOBAL const double *y, sb_i64 n,
                         SB_GLOBAL double *scr, sb_i64 sw, sb_i64 ndmax, ak_out o) {
    ak_fit(sp, 0, given, y, n, scr, sw, ndmax, o);
}

#undef AK
#endif
