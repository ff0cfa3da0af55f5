/*
 * ets.h: exponential smoothing (docs/timeseries.md), the host path. Simple
 * exponential smoothing, Holt's additive and damped trends and Holt-Winters'
 * additive and multiplicative seasons, in the component form of Hyndman and
 * Athanasopoulos, "Forecasting: Principles and Practice" (OTexts, 2nd ed.
 * 2018, ch. 7) and Hyndman, Koehler, Ord and Snyder, "Forecasting with
 * Exponential Smoothing: The State Space Approach" (Springer, 2008), with
 * statsmodels' ExponentialSmoothing names and its least squares fit.
 *
 * Arithmetic: IEEE binary64 on the host, + - * / only (no square root is
 * needed; the logarithm of the information criteria is the profile's own double log), no
 * contraction (the build's -ffp-contract=off), every sum in one stated order.
 * A series' result is a function of that series and the parameters alone.
 */
#ifndef SB_MODELS_ETS_H
#define SB_MODELS_ETS_H
#include "../../core/internal.h"
#include "../../kernels/ets.h"

#define SB_ETS_MAX_PERIOD 400 /* seasonal_periods above it: SB_ERR_LIMIT */
/* SB_ETS_NPAR, ETS_NONE/ADD/MUL and ets_spec: kernels/ets.h, shared with the devices */

/* One fitted series. */
typedef struct ets_fit {
    int64_t n;
    double par[SB_ETS_NPAR]; /* alpha, beta, gamma, phi; NaN where the model has none */
    double *init;            /* 2 + m: l0, b0 (NaN without a trend), s_0..s_{m-1} (none without a season) */
    double *last;            /* 2 + m: the final level, trend and the last m seasons, oldest first */
    double *fitted;          /* n one-step-ahead fitted values */
    double *resid;           /* n: y - fitted */
    double sse, aic, aicc, bic;
    int32_t nfev, nit, converged, k; /* objective evaluations, simplex iterations, stopped by tolerance, params counted */
    double *trace;           /* the best SSE after each simplex iteration (ntrace values) */
    int32_t ntrace;
} ets_fit;

/* A fitted batch (the opaque sb_ets of samebits.h). */
struct sb_ets {
    ets_spec spec;
    int64_t nseries;
    ets_fit *fits;
};

/* Parse a parameter bag into spec (ets_params.c): every key known and used,
 * a key that would do nothing refused by name. */
sb_status sb_ets_spec_parse(const sb_params *params, ets_spec *spec);

/* Check the batch (offsets: nseries + 1, ascending from 0) against spec and
 * refuse the first hostile series by name, before any work. */
sb_status sb_ets_check(const ets_spec *spec, const double *y, const int64_t *offsets, int64_t nseries);

/* Fit every series (in parallel over series; each its own task), recording
 * the stages prefix.params, .states, .sse, .trace, .fitted, .counts into card
 * when card is not NULL. */
sb_status sb_ets_fit_spec(const ets_spec *spec, const double *y, const int64_t *offsets, int64_t nseries,
                          sb_card *card, const char *prefix, sb_ets **out);

/* f's criteria and counts from a fit's crit (SSE, AIC, AICc, BIC) and counts
 * (nfev, nit, converged, k, ntrace), as ets_fit_series wrote them. */
void sb_ets_fit_from(ets_fit *f, const double crit[4], const int32_t counts[ETS_NCOUNTS]);

/* Fit series [0, nseries) on spec->device's GPU (ets_device.c): the batch
 * checked, e->fits allocated (zeroed) by the caller; each fit filled as the
 * host's ets_fit_one fills it. */
sb_status sb_ets_fit_device(const ets_spec *spec, const double *y, const int64_t *offsets, int64_t nseries, sb_ets *e);

/* Tests only: the device's chunk budget in bytes (0: the default), so that a
 * test can split a batch into many launches. */
void sb_ets_device_budget_for_tests(int64_t bytes);

/* The host's instance of kernels/ets.h's fit (sw = 1) that ets.c runs:
 * "avx2" (ets_avx2.c, x86-64 hosts with AVX2) or "generic"; the same bits
 * either way. SAMEBITS_ETS_KERNEL=generic caps the choice (read once; tests
 * read it again after sb_ets_kernel_reset). */
const char *sb_ets_kernel(void);
void sb_ets_kernel_reset(void);
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SB_ETS_HAVE_AVX2 1
void sb_ets_fit_series_avx2(const ets_spec *sp, const double *y, int64_t n, double *scr, int32_t *iscr, ets_out o);
#endif

/* Free a batch and everything it holds (NULL: nothing). */
void sb_ets_release(sb_ets *e);

/* The fewest values a series needs for spec (every parameter it estimates:
 * two full periods with a season, else one more than the states and
 * parameters, at least 2); a shorter series is refused by sb_ets_check. */
int64_t sb_ets_min_length(const ets_spec *spec);

/* AutoETS's criterion of a fit (Hyndman, Koehler, Ord and Snyder 2008, sec.
 * 7.1; R's forecast::ets and statsforecast's AutoETS): the AICc with np = k + 1
 * parameters (the smoothing parameters, the initial states and sigma),
 * -2 log L + 2 np + 2 np (np + 1) / (n - np - 1), less the constant n log n
 * (the same for every candidate of a series): aic + 2 + 2 np (np + 1) /
 * (n - np - 1), +infinity when n - np - 1 <= 0. The fit's own aicc is
 * statsmodels' ExponentialSmoothing's, which counts no sigma. */
double sb_ets_auto_criterion(const ets_fit *f);

/* AutoETS's rule (docs/timeseries.md, "AutoETS"): the index of the lowest of
 * the n candidates' criteria (sb_ets_auto_criterion), a NaN (a candidate not fitted) never chosen, a tie
 * keeping the earlier candidate; -1 when none is a number.
 * python/samebits/timeseries.py's _auto_select states the same rule. */
int32_t sb_ets_auto_pick(const double *aicc, int32_t n);

/* h forecasts of one fitted series from its final states. */
void sb_ets_forecast_fit(const ets_spec *spec, const ets_fit *f, int32_t h, double *out);

/* The SHA-256 of a fitted series' canonical bytes (docs/timeseries.md). */
void sb_ets_fit_digest(const ets_spec *spec, const ets_fit *f, uint8_t out[32]);

#endif
