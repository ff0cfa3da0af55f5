/*
 * ts_common.h: pieces the time series families share (exponential smoothing,
 * ARIMA): a double's canonical bits, a finiteness test, the profile's host
 * double logarithm, and a bounded-free Nelder-Mead simplex over a callback.
 * Host C only, IEEE binary64, no contraction (the build's -ffp-contract=off).
 */
#ifndef SB_MODELS_TS_COMMON_H
#define SB_MODELS_TS_COMMON_H
#include "../../core/internal.h"
#include "../../math/sb_math.h"
#include <math.h> /* INFINITY and NAN only */
#include <string.h>

static inline int ts_finite(double v) { return v - v == 0.0; }

/* A double's bits for cards and digests; every NaN is one quiet NaN (x86 and
 * ARM produce NaNs of different signs). */
static inline uint64_t ts_canon(double v) {
    uint64_t u;
    if (v != v) return 0x7FF8000000000000ull;
    memcpy(&u, &v, 8);
    return u;
}

/* The natural logarithm of a positive double from the profile's host double
 * log (src/math/sb_elem_host.h); 0 is -infinity, a negative value NaN. */
static inline double ts_log(double v) {
    if (!(v > 0.0)) return v == 0.0 ? -INFINITY : NAN;
    if (!ts_finite(v)) return v;
    double shift = 0.0;
    if (v < 0x1p-1000) v = v * 0x1p200, shift = -200.0 * 0.6931471805599453;
    const double d = v - 1.0;
    const double r = (d < 0x1p-6 && d > -0x1p-6) ? sb__hx_log1p_small(d) : sb__hx_log(v);
    return r + shift;
}

/* The objective of a simplex search: a pure function of x (d values). */
typedef double (*ts_objective_fn)(void *ctx, const double *x);

#define TS_NM_MAXD 64

/* One Nelder-Mead run (Nelder and Mead 1965, in the ordering of Lagarias,
 * Reeds, Wright and Wright, SIAM J. Optim. 9, 1998: reflection 1, expansion
 * 2, contractions 1/2, shrink 1/2, vertices kept ordered by value, ties in
 * their previous order) from x0 with the initial steps step[0..d) (vertex i
 * moves coordinate i - 1 by its step). Stops when every vertex is within
 * xtol of the best in every coordinate and the values' spread is at most
 * ftol (1 + |best|), or after maxit iterations. x0 gets the best vertex, the
 * return value its objective; *nit the iterations run, *nfev the evaluations
 * added, *conv 1 when the tolerances were met. trace (may be NULL) gets the
 * best value after each iteration (maxit values at most). */
double ts_nelder_mead(ts_objective_fn f, void *ctx, int32_t d, double *x0, const double *step, int32_t maxit,
                      double xtol, double ftol, int32_t *nit, int32_t *nfev, int32_t *conv, double *trace);

#endif
