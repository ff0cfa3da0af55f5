/*
 * arima.h: ARIMA(p, d, q)(P, D, Q)s (docs/timeseries.md), the host path, in
 * IEEE binary64 like exponential smoothing.
 *
 * Convention (stated): the series is differenced first, (1 - B)^d (1 - B^s)^D
 * (statsmodels' SARIMAX with simple_differencing=True), and the differenced
 * series w is a stationary ARMA in statsmodels' ARIMA mean form,
 * phi(B) Phi(B^s) (w_t - mu) = theta(B) Theta(B^s) e_t, mu = const (trend 'c',
 * only without differencing, as statsmodels allows). Its exact Gaussian
 * likelihood comes from the Kalman filter on Harvey's state space form
 * (Harvey, "Forecasting, Structural Time Series Models and the Kalman
 * Filter", 1989, 3.3; Durbin and Koopman, "Time Series Analysis by State
 * Space Methods", 2nd ed. 2012, 3.4 and 4.3) started from the stationary
 * state covariance. For d + D > 0 this is the likelihood statsmodels' ARIMA
 * computes by exact diffuse initialization: the diffuse part of that
 * likelihood is the differenced series' one (Durbin and Koopman 5.7).
 */
#ifndef SB_MODELS_ARIMA_H
#define SB_MODELS_ARIMA_H
#include "../../core/internal.h"
#include "../../kernels/arima.h" /* the fit itself (ak_fit), host and devices */

#define SB_ARIMA_MAX_ORDER 20   /* p, q, P, Q above it: SB_ERR_LIMIT */
#define SB_ARIMA_MAX_DIFF 2     /* d, D above it: SB_ERR_LIMIT */
#define SB_ARIMA_MAX_PERIOD 400 /* s above it: SB_ERR_LIMIT */
#define SB_ARIMA_MAX_STATE 200  /* max(p + sP, q + sQ + 1) above it: SB_ERR_LIMIT */
#define SB_ARIMA_MAX_PAR (4 * SB_ARIMA_MAX_ORDER + 2)

enum { ARIMA_TREND_N = 0, ARIMA_TREND_C = 1 };

typedef struct arima_spec {
    int32_t p, d, q, P, D, Q, s; /* s = 0 without a seasonal part */
    int32_t trend;               /* ARIMA_TREND_N or ARIMA_TREND_C */
    int32_t ngiven;              /* 0 (estimated) or npar: every parameter given */
    int32_t css;                 /* method=css: estimated by conditional sum of squares (not in the model file) */
    double given[SB_ARIMA_MAX_PAR];
    int32_t device;              /* the sb_device_kind that fits (cpu: the host's tasks); not in the model */
} arima_spec;

typedef struct arima_fit {
    int64_t n;                 /* values of the series */
    int64_t nobs;              /* values of the differenced series: n - d - s D */
    double par[SB_ARIMA_MAX_PAR]; /* statsmodels' order: const, ar.L, ma.L, ar.S.L, ma.S.L, sigma2 */
    double llf, aic, aicc, bic;
    double *fitted, *resid;    /* n each; NaN for the first d + s D (no prediction) */
    double *a, *P;             /* r and r x r: the predicted state and its covariance (over sigma2) after the last value */
    double *ylast;             /* d + s D: the last values, the latest first */
    double *trace;             /* the objective after each simplex iteration */
    int32_t ntrace, nfev, nit, converged;
} arima_fit;

struct sb_arima {
    arima_spec spec;
    int64_t nseries;
    arima_fit *fits;
};

/* Parameters of the model: 1 + p + q + P + Q (+1 with a const). */
int32_t sb_arima_npar(const arima_spec *sp);
/* State dimension r = max(p + sP, q + sQ + 1) and differencing lag L = d + sD. */
int32_t sb_arima_state_dim(const arima_spec *sp);
int32_t sb_arima_diff_lag(const arima_spec *sp);
/* statsmodels' name of parameter i into buf. */
void sb_arima_spec_param_name(const arima_spec *sp, int32_t i, char *buf, size_t cap);

/* 1 when sp is a specification the parser accepts (the model file's check). */
int sb_arima_spec_valid(const arima_spec *sp);
/* 1 when par (statsmodels' order) is a stationary, invertible model with
 * finite values and a positive sigma2. */
int sb_arima_params_valid(const arima_spec *sp, const double *par);
sb_status sb_arima_spec_parse(const sb_params *params, arima_spec *spec);
/* Given parameters that are explosive or non-invertible, or a sigma2 not
 * positive, refused by name. */
sb_status sb_arima_check_given(const arima_spec *sp);
sb_status sb_arima_check(const arima_spec *sp, const double *y, const int64_t *offsets, int64_t nseries);
sb_status sb_arima_fit_spec(const arima_spec *sp, const double *y, const int64_t *offsets, int64_t nseries,
                            sb_card *card, const char *prefix, sb_arima **out);
void sb_arima_release(sb_arima *e);
/* Every series of a checked batch fitted on the GPU sp->device names
 * (arima_device.c: the time-series program's ke_arima_fit, one work-item a
 * series, kernels/arima.h) into e->fits, the host's bits; a series whose
 * final filter fails gives SB_ERR_INTERNAL in sts[i], as the host's. */
sb_status sb_arima_fit_device(const arima_spec *sp, const double *y, const int64_t *offsets, int64_t nseries,
                              sb_arima *e, sb_status *sts);
/* The kernel's specification of sp (kernels/arima.h's ak_spec). */
ak_spec sb_arima_kspec(const arima_spec *sp);
/* One series' results from ak_fit's slots (par, crit, state, fitted, resid,
 * trace, counts: kernels/arima.h's ak_out) into f, its buffers allocated
 * here; SB_ERR_INTERNAL when the final filter failed (counts[4]). */
sb_status sb_arima_take(const arima_spec *sp, const double *y, int64_t n, arima_fit *f, const double *par,
                        const double *crit, const double *state, const double *fitted, const double *resid,
                        const double *trace, const int32_t *counts);
/* Tests: the device's byte budget a chunk of series may use (0: the default). */
void sb_arima_device_budget_for_tests(int64_t bytes);
/* h forecasts of a fitted series: mean, and (each may be NULL) the standard
 * error and the 1 - alpha interval's ends. */
sb_status sb_arima_forecast_fit(const arima_spec *sp, const arima_fit *f, int32_t h, double alpha, double *mean,
                                double *se, double *lower, double *upper);
void sb_arima_fit_digest(const arima_spec *sp, const arima_fit *f, uint8_t out[32]);
/* The standard normal quantile at p in (0.5, 1), by bisection (docs/timeseries.md). */
double sb_arima_norm_quantile(double p);

#endif
