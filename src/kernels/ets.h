/*
 * ets.h: one series' exponential smoothing fit (docs/timeseries.md), written
 * once in the kernel subset for the host and the devices: the host's loop
 * over series (models/timeseries/ets.c) and the time-series program's entry
 * kernel (entry/ts_entry.h, one work-item a series) call the same
 * ets_fit_series, so the two cannot drift.
 *
 * The model is the component form of Hyndman and Athanasopoulos,
 * "Forecasting: Principles and Practice" (2nd ed., OTexts 2018, sections 7.1
 * to 7.3) and Hyndman, Koehler, Ord and Snyder, "Forecasting with Exponential
 * Smoothing" (Springer 2008, ch. 2), the recursions statsmodels'
 * ExponentialSmoothing documents. With lp = l + phi b (phi = 1 undamped, b = 0
 * without a trend) and s the season of one period before:
 *
 *   fitted  = lp (none), lp + s (add), lp * s (mul)
 *   level   = alpha (y - s | y / s | y) + (1 - alpha) lp
 *   trend   = beta (level - l) + (1 - beta) (phi b)
 *   season  = gamma (y - lp | y / lp) + (1 - gamma) s
 *
 * The fit minimizes the sum of squared one-step errors (SSE, statsmodels'
 * default objective for ExponentialSmoothing.fit) over the smoothing
 * parameters and the initial states. It is split in two, each a fixed
 * procedure:
 *
 * - the initial states for given smoothing parameters, by Gauss-Newton from a
 *   fixed heuristic start (a few steps while the simplex searches, more at
 *   the point it chose), the Jacobian carried forward with the states
 *   (forward-mode derivatives, one pass over the series). For additive models
 *   the fitted values are affine in the initial states, so the first step is
 *   the least-squares solution and the second confirms it. The seasons are
 *   tied (additive: they sum to 0; multiplicative: to m), which loses nothing:
 *   shifting (scaling) the level against the seasons leaves every fitted value
 *   unchanged, so the untied problem has a line of equal minima;
 * - the smoothing parameters by a bounded Nelder-Mead simplex (Nelder and
 *   Mead 1965, in the ordering of Lagarias, Reeds, Wright and Wright, SIAM J.
 *   Optim. 9, 1998; every trial point folded into the box by reflection at
 *   its bounds), run from each of the three best points of a fixed grid to a
 *   loose tolerance; the lowest end runs once more from a fresh simplex (the
 *   usual cure for a simplex that collapsed early) to a tight one, and its
 *   end is the fit.
 *
 * Arithmetic: IEEE binary64 (the family states float64), + - * / only, no
 * contraction (the host's -ffp-contract=off, nvcc's -fmad=false, OpenCL's
 * FP_CONTRACT OFF), every sum in one stated order; the one logarithm (the
 * information criteria) is the profile's own (f64_log.h). Doubles on a
 * device: CUDA's, and OpenCL's cl_khr_fp64, whose + - * / are correctly
 * rounded with subnormals kept, as the host's are; a device without them is
 * refused by name (dev_opencl.c). The objective of the outer search is a
 * pure function of the smoothing parameters, and nothing depends on a
 * thread, a work-item or another series: each series' result is its own,
 * whatever batch it is in and wherever in it.
 *
 * Memory: every array the fit writes is the caller's (SB_GLOBAL: a slice of
 * a device buffer, or host memory), the scratch sized by ets_scratch_doubles
 * and read with a stride (1 on the host; on a device the chunk's series, so
 * that the work-items of a group read neighbouring doubles: a layout, never
 * a value); the simplex's few vertices are private.
 */
#ifndef SB_KERNELS_ETS_H
#define SB_KERNELS_ETS_H
#include "compat.h"
#include "f64_log.h"
#include "f64_exp.h"

#define SB_ETS_NPAR 4         /* alpha, beta, gamma, phi */

enum { ETS_NONE = 0, ETS_ADD = 1, ETS_MUL = 2 };

/* A model's specification: what is estimated and what is given. */
typedef struct ets_spec {
    sb_i32 trend;    /* ETS_NONE or ETS_ADD */
    sb_i32 damped;   /* 0 or 1 (needs a trend) */
    sb_i32 seasonal; /* ETS_NONE, ETS_ADD or ETS_MUL */
    sb_i32 m;        /* seasonal_periods; 1 without a season */
    double given[SB_ETS_NPAR]; /* a given alpha, beta, gamma, phi, or NaN: estimated */
    sb_i32 device;   /* the host's: the sb_device_kind that fits (no kernel reads it) */
    sb_i32 error;    /* ETS_MUL: multiplicative errors (the likelihood below); else additive (least squares) */
} ets_spec;

#define ETS_GN_SEARCH 4     /* Gauss-Newton steps for the initial states while the simplex searches */
#define ETS_GN_FINAL 50     /* and at the point it chose */
#define ETS_HALVINGS 40     /* step halvings before a Gauss-Newton step is given up */
#define ETS_GN_TOL 1e-12    /* a Gauss-Newton step lowering the SSE by at most this (relative) ends the search */
#define ETS_NM_ITER 200     /* simplex iterations a run, times the dimension */
#define ETS_NM_XTOL 1e-6    /* simplex size at which the last run stops (with the next) */
#define ETS_NM_FTOL 1e-10   /* relative spread of SSE at which the last run stops */
/* The runs from the grid's starts stop sooner: they only choose where the
 * last run starts, and that run, from a fresh simplex, refines to the
 * tolerances above (profile v8; measured on bench/ets_bench.py's 87 real
 * fits: 0.56x the evaluations, no final SSE worse by more than 8.9e-7
 * relative, the same AutoETS picks; docs/timeseries.md "Profile v8"). */
#define ETS_NM_XTOL_START 1e-2
#define ETS_NM_FTOL_START 1e-5
#define ETS_STARTS 3        /* grid points the simplex search starts from */
#define ETS_PHI_LO 0.8      /* the damping parameter's bounds (statsmodels') */
#define ETS_PHI_HI 0.995
/* the most trace values a fit writes: a best SSE per simplex iteration */
#define ETS_TRACE_MAX ((ETS_STARTS + 1) * ETS_NM_ITER * SB_ETS_NPAR + 2)
/* the counts a fit writes: nfev, nit, converged, k, ntrace */
#define ETS_NCOUNTS 5

/* The grid's points at most (ets_search's grid): 5 alphas, 3 betas, gammas, phis. */
#define ETS_GRID_MAX (5 * 3 * 3 * 3)
/* The time steps whose Jacobian rows a pass holds before adding them to the
 * normal equations (ets_normal_flush). */
#define ETS_BLOCK 32

/* The host's memo of the search's objective (ets_objective): its slots. */
#define ETS_MEMO 256

/* The initial states a model estimates: level, trend, m - 1 seasons. */
SB_FN sb_i32 ets_nstates(const ets_spec *sp) { return 1 + (sp->trend ? 1 : 0) + (sp->seasonal ? sp->m - 1 : 0); }
/* The doubles of one fit's scratch (k the states): nine vectors of k, two
 * k x k matrices, the season ring m and its Jacobian m x k, the grid's
 * objective values, and ETS_BLOCK rows of k + 1 (with 3 to spare: the last
 * row's four-wide reads). */
SB_FN sb_i64 ets_scratch_doubles(sb_i32 k, sb_i32 m) {
    return 9 * (sb_i64)k + 2 * (sb_i64)k * k + (sb_i64)m + (sb_i64)m * k + ETS_GRID_MAX + ETS_BLOCK * ((sb_i64)k + 1) + 3;
}

/* What a series' fit shares between its passes. */
typedef struct ets_work {
    ets_spec sp;
    SB_GLOBAL const double *y;
    sb_i64 n;
    sb_i32 k;       /* initial states estimated: level, trend, m - 1 seasons */
    sb_i32 nfree;   /* smoothing parameters estimated */
    sb_i32 free_idx[SB_ETS_NPAR];
    double par[SB_ETS_NPAR];
    SB_GLOBAL double *start; /* k: the heuristic initial states */
    SB_GLOBAL double *x, *xn, *delta; /* k each */
    SB_GLOBAL double *A, *g, *L, *D; /* k x k, k, k x k, k */
    SB_GLOBAL double *s, *ds, *dl, *db; /* m, m x k, k, k */
    SB_GLOBAL double *rows; /* ETS_BLOCK x (k + 1) (+3): a block's Jacobian rows dy and errors e */
    SB_GLOBAL double *v;    /* k: multiplicative errors' mean of dyhat / yhat over the series */
    SB_GLOBAL double *gridf; /* ETS_GRID_MAX: the objective at the grid's points, once ngrid of them are in */
    sb_i32 ngrid;   /* the grid's points the search has (all of them, once the search's grid ends) */
    SB_GLOBAL sb_i32 *drop;
    sb_i64 sw;      /* the stride of every scratch array: element j of x is x[j * sw] (1 on the host;
                     * a device interleaves its work-items' scratch, so that neighbours' reads coalesce) */
    sb_i32 nfev;
    sb_i32 gn_max; /* Gauss-Newton steps allowed: ETS_GN_SEARCH, then ETS_GN_FINAL */
    SB_GLOBAL double *trace; /* the best SSE after each simplex iteration */
    sb_i32 ntrace, nit;
    double lref;       /* multiplicative errors: log of the mean of the series (a scale, fixed per series) */
    double csum, lsum; /* the last pass's sum of squared errors (relative ones: multiplicative) and sum of log yhat */
#ifndef SB_COMPAT_DEVICE
    /* the host: the search's objective at the last points it computed, by
     * the point's bits (ets_memo_slot); a cost only, never a value */
    sb_u64 memo_key[ETS_MEMO][SB_ETS_NPAR];
    double memo_f[ETS_MEMO];
    sb_i32 memo_used[ETS_MEMO];
#endif
} ets_work;

/* The scratch's stride: on a device the chunk's series (w->sw: neighbouring
 * work-items read neighbouring doubles), on the host 1 (ets.c's fits are
 * unstrided), a constant there, so that the host's compiler sees contiguous
 * vectors. A layout, never a value. */
#ifdef SB_COMPAT_DEVICE
#define ETS_SW(w) ((w)->sw)
#define ETS_RESTRICT
#define ETS_INLINE SB_FN
#else
#define ETS_SW(w) ((sb_i64)1)
#define ETS_RESTRICT restrict
#define ETS_INLINE static inline __attribute__((always_inline))
#endif

SB_FN double ets_inf(void) { return sb_u2d((sb_u64)0x7FF0000000000000ull); }
SB_FN double ets_nan(void) { return sb_u2d((sb_u64)0x7FF8000000000000ull); } /* the host's NAN, +quiet */
SB_FN int ets_finite(double v) { return v - v == 0.0; }

/* The natural logarithm of a positive double, from the profile's double log
 * (f64_log.h); 0 is -infinity. Used only for the information criteria,
 * never inside the fit. */
SB_FN double ets_log(double v) {
    if (!(v > 0.0)) return v == 0.0 ? -ets_inf() : ets_nan();
    if (!ets_finite(v)) return v;
    double shift = 0.0;
    if (v < 0x1p-1000) v = v * 0x1p200, shift = -200.0 * 0.6931471805599453;
    const double d = v - 1.0;
    const double r = (d < 0x1p-6 && d > -0x1p-6) ? sb__hx_log1p_small(d) : sb__hx_log(v);
    return r + shift;
}

/* lsum plus the logarithms (ets_log) of q[0 .. nq), added one by one in
 * that order: multiplicative errors' sum of log yhat, which the host's
 * ets_pass takes a block of steps at a time (the logarithms do not feed the
 * filter). Where a host unit asks for four-wide vectors (SB_HOST_V4: the
 * AVX2 instance, models/timeseries/ets_avx2.c), four lanes that ets_log
 * takes to sb__hx_log (positive, finite, at least 2^-1000, at least 2^-6
 * from 1) go through sb__hx_log_v4, the same double each, plus ets_log's
 * shift of 0; a group with any other lane goes one by one. */
SB_FN double ets_log_add(double lsum, const double *q, sb_i32 nq) {
    sb_i32 i = 0;
#if !defined(SB_COMPAT_DEVICE) && defined(__GNUC__) && defined(SB_HOST_V4)
    for (; i + 4 <= nq; i += 4) {
        sb__hx_v4d x;
        memcpy(&x, q + i, sizeof x);
        const sb__hx_v4d d = x - 1.0;
        const sb__hx_v4i ok = (x >= 0x1p-1000) & (x - x == 0.0) & ((d >= 0x1p-6) | (d <= -0x1p-6));
        if (!(ok[0] & ok[1] & ok[2] & ok[3])) break; /* this group and the rest one by one */
        const sb__hx_v4d lg = sb__hx_log_v4(x) + 0.0;
        lsum = lsum + lg[0], lsum = lsum + lg[1], lsum = lsum + lg[2], lsum = lsum + lg[3];
    }
#endif
    for (; i < nq; i++) lsum = lsum + ets_log(q[i]);
    return lsum;
}

/* The states x (level, trend, the first m - 1 seasons) spread into the
 * filter's level, trend and season ring; the last season is tied. */
SB_FN void ets_spread(const ets_work *w, SB_GLOBAL const double *x, double *l, double *b, SB_GLOBAL double *s) {
    const sb_i64 sw = ETS_SW(w);
    const ets_spec *sp = &w->sp;
    *l = x[(sb_i64)(0) * sw];
    *b = sp->trend ? x[(sb_i64)(1) * sw] : 0.0;
    if (!sp->seasonal) return;
    const sb_i32 o = 1 + (sp->trend ? 1 : 0);
    double sum = 0.0;
    for (sb_i32 j = 0; j < sp->m - 1; j++) s[(sb_i64)(j) * sw] = x[(sb_i64)(o + j) * sw], sum = sum + x[(sb_i64)(o + j) * sw];
    s[(sb_i64)(sp->m - 1) * sw] = (sp->seasonal == ETS_MUL ? (double)sp->m : 0.0) - sum;
}

/* One element j of ets_jac_step (DL, DB, DS: the level's, the trend's and
 * this step's season's derivatives by initial state j, updated in place; DY
 * the fitted value's; V multiplicative errors' running sum of dy / yhat): a
 * macro over lvalues, so that the host's arrays and a device's registers
 * (ets_pass_reg) run the same text. Reads tr, se, me, a, be, ga, phi, lp,
 * st, yh, qy, qs, ql from the caller's scope. */
#define ETS_JAC_ELEM(DL, DB, DS, DY, V)                                                                       \
    do {                                                                                                      \
        const double dlp_ = tr ? (DL) + phi * (DB) : (DL);                                                    \
        const double dsj_ = se ? (DS) : 0.0;                                                                  \
        double dyj_ = se == ETS_ADD ? dlp_ + dsj_ : se == ETS_MUL ? dlp_ * st + lp * dsj_ : dlp_;             \
        if (me) {                                                                                             \
            /* d e / d x = -(y / yhat^2) d yhat; the normal equations take -de (as -J e below) */             \
            (V) = (V) + dyj_ / yh;                                                                            \
            dyj_ = qy * dyj_;                                                                                 \
        }                                                                                                     \
        (DY) = dyj_;                                                                                          \
        const double dln_ = se == ETS_ADD ? (1.0 - a) * dlp_ - a * dsj_                                       \
                            : se == ETS_MUL ? (1.0 - a) * dlp_ - a * (qs * dsj_)                              \
                                            : (1.0 - a) * dlp_;                                               \
        if (tr) (DB) = be * (dln_ - (DL)) + (1.0 - be) * (phi * (DB));                                        \
        (DL) = dln_;                                                                                          \
        if (se == ETS_ADD) (DS) = (1.0 - ga) * dsj_ - ga * dlp_;                                              \
        else if (se == ETS_MUL) (DS) = (1.0 - ga) * dsj_ - ga * (ql * dlp_);                                  \
    } while (0)

/* The states' derivatives carried one step (the forward-mode Jacobian of
 * ets_pass, element j the derivative by initial state j): from the level's
 * dl, the trend's db and this step's season dst, the fitted value's dy
 * (multiplicative errors: v gathers dy / yhat, and dy becomes the relative
 * error's qy dy, qy = y / yhat^2), then the states after the step. The
 * elements are independent, each in its own fixed order; the arrays are
 * distinct scratch vectors (ETS_RESTRICT: the host's compiler may then do
 * several elements at once, which rounds each the same). */
ETS_INLINE void ets_jac_step(sb_i32 k, sb_i64 sw, sb_i32 tr, sb_i32 se, int me, double a, double be, double ga, double phi,
                        double lp, double st, double yh, double qy, double qs, double ql,
                        SB_GLOBAL double *ETS_RESTRICT dl, SB_GLOBAL double *ETS_RESTRICT db,
                        SB_GLOBAL double *ETS_RESTRICT dst, SB_GLOBAL double *ETS_RESTRICT dy,
                        SB_GLOBAL double *ETS_RESTRICT v) {
    for (sb_i32 j = 0; j < k; j++)
        ETS_JAC_ELEM(dl[(sb_i64)(j) * sw], db[(sb_i64)(j) * sw], dst[(sb_i64)(j) * sw], dy[(sb_i64)(j) * sw],
                     v[(sb_i64)(j) * sw]);
}

/* A block's terms of the normal equations: with rows the nr steps' Jacobian
 * rows and errors (row t: dy_0 .. dy_{k-1}, e; ka = k + 1 apart), A (upper
 * triangle) gains sum dy dy^T and g sum dy e: g is the augmented matrix's
 * last column. Each element is a running sum in time order, as if added
 * step by step; a row's elements go four at a time (independent sums, each
 * in its register), the lanes past the row's end read spare doubles and are
 * not stored. With SB_HOST_V4 (the host's AVX2 instance) the four are one
 * vector of GCC's (the same four sums, lane by lane: IEEE + and * are
 * elementwise); elsewhere, and on a device, one at a time. */
#if !defined(SB_COMPAT_DEVICE) && defined(__GNUC__) && defined(SB_HOST_V4)
typedef double ets_v4 __attribute__((vector_size(32)));
#endif
SB_FN void ets_normal_flush(sb_i32 k, sb_i64 sw, sb_i32 nr, SB_GLOBAL const double *ETS_RESTRICT rows,
                            SB_GLOBAL double *ETS_RESTRICT A, SB_GLOBAL double *ETS_RESTRICT g) {
    const sb_i64 ka = (sb_i64)k + 1;
    for (sb_i32 i = 0; i < k; i++) {
        for (sb_i32 jb = i; jb <= k; jb += 4) {
            double acc[4];
            for (sb_i32 q = 0; q < 4; q++) {
                const sb_i32 j = jb + q;
                acc[q] = j < k ? A[((sb_i64)i * k + j) * sw] : j == k ? g[(sb_i64)(i) * sw] : 0.0;
            }
#if !defined(SB_COMPAT_DEVICE) && defined(__GNUC__) && defined(SB_HOST_V4)
            ets_v4 av = {acc[0], acc[1], acc[2], acc[3]};
            for (sb_i32 t = 0; t < nr; t++) {
                const double *row = rows + (sb_i64)t * ka;
                ets_v4 rv;
                memcpy(&rv, row + jb, sizeof rv);
                const ets_v4 dv = {row[i], row[i], row[i], row[i]};
                av = av + dv * rv;
            }
            for (sb_i32 q = 0; q < 4; q++) acc[q] = av[q];
#else
            for (sb_i32 t = 0; t < nr; t++) {
                SB_GLOBAL const double *row = rows + (sb_i64)t * ka * sw;
                const double di = row[(sb_i64)(i) * sw];
                for (sb_i32 q = 0; q < 4; q++) acc[q] = acc[q] + di * row[(sb_i64)(jb + q) * sw];
            }
#endif
            for (sb_i32 q = 0; q < 4; q++) {
                const sb_i32 j = jb + q;
                if (j < k) A[((sb_i64)i * k + j) * sw] = acc[q];
                else if (j == k) g[(sb_i64)(i) * sw] = acc[q];
            }
        }
    }
}

/* The season ring's derivatives by the initial states at a pass's start
 * (ds, m x k, element (r, j) at (r k + j) sw): season j of the first m - 1
 * (state 1 + tr + j) is its own, the tied last one minus their sum. */
SB_FN void ets_ds_start(SB_GLOBAL double *ds, sb_i32 k, sb_i32 m, sb_i32 tr, sb_i64 sw) {
    for (sb_i64 i = 0; i < (sb_i64)m * k; i++) ds[(sb_i64)(i) * sw] = 0.0;
    for (sb_i32 j = 0; j < m - 1; j++) ds[(sb_i64)((sb_i64)j * k + 1 + tr + j) * sw] = 1.0, ds[(sb_i64)((sb_i64)(m - 1) * k + 1 + tr + j) * sw] = -1.0;
}

/* Step t's value yt, the states' forecast lp (the level and the damped
 * trend), this step's season st and the fitted value yh, declared in the
 * caller's loop (ets_pass_model and ets_pass_reg run this one text). */
#define ETS_FILTER_PREDICT()                                                                                  \
    const double yt = w->y[t];                                                                                \
    const double lp = tr ? l + phi * b : l;                                                                   \
    const double st = se ? s[(sb_i64)(r) * sw] : 0.0;                                                         \
    const double yh = se == ETS_ADD ? lp + st : se == ETS_MUL ? lp * st : lp

/* Step t's squared error e * e into the running SSE (ets_pass_model and
 * ets_pass_reg). Separating arm ets-sse-order: the squares added in pairs
 * before the running sum (the same terms in another order; pend the pair's
 * first). */
#ifdef SB_SABOTAGE_ETS_SSE_ORDER
#define ETS_SSE_ADD()                                                                                         \
    do {                                                                                                      \
        if (t & 1) sse = sse + (pend + e * e);                                                                \
        else pend = e * e;                                                                                    \
        if (!(t & 1) && t == w->n - 1) sse = sse + pend;                                                      \
    } while (0)
#else
#define ETS_SSE_ADD() (sse = sse + e * e)
#endif

/* The filter's states after step t (ets_pass_model and a device's
 * ets_pass_reg run this one text): the level, the trend and this step's
 * season from yt, lp and st, and the season's index advanced. Reads and
 * writes the caller's l, b, s, r (and tr, se, a, be, ga, phi, sw, m). */
#define ETS_FILTER_ADVANCE()                                                                                  \
    do {                                                                                                      \
        const double ln_ = se == ETS_ADD ? a * (yt - st) + (1.0 - a) * lp                                     \
                           : se == ETS_MUL ? a * (yt / st) + (1.0 - a) * lp                                   \
                                           : a * yt + (1.0 - a) * lp;                                         \
        if (tr) b = be * (ln_ - l) + (1.0 - be) * (phi * b);                                                  \
        if (se == ETS_ADD) s[(sb_i64)(r) * sw] = ga * (yt - lp) + (1.0 - ga) * st;                            \
        else if (se == ETS_MUL) s[(sb_i64)(r) * sw] = ga * (yt / lp) + (1.0 - ga) * st;                       \
        l = ln_;                                                                                              \
        if (se && ++r == m) r = 0;                                                                            \
    } while (0)

/* One pass of the filter from states x: the SSE (+infinity when it is not
 * finite), and with jac the normal equations of the states' Gauss-Newton
 * step (A, upper triangle, k x k; g = J^T e), accumulated in time order.
 * With out, the fitted values and the final states (level, trend, the last m
 * seasons oldest first) go to fitted and last. */
ETS_INLINE double ets_pass_model(ets_work *w, SB_GLOBAL const double *x, int jac, SB_GLOBAL double *A,
                                 SB_GLOBAL double *g, int out, SB_GLOBAL double *fitted, SB_GLOBAL double *last,
                                 sb_i32 tr, sb_i32 se, int me) {
    const sb_i64 sw = ETS_SW(w);
    const ets_spec *sp = &w->sp;
    const sb_i32 k = w->k, m = sp->m;
    const double a = w->par[0], be = tr ? w->par[1] : 0.0, ga = se ? w->par[2] : 0.0;
    const double phi = sp->damped ? w->par[3] : 1.0;
    double l, b;
    SB_GLOBAL double *s = w->s, *ds = w->ds, *dl = w->dl, *db = w->db, *rows = w->rows;
    const sb_i64 ka = (sb_i64)k + 1; /* a Jacobian row: k derivatives and the error */
    sb_i32 nr = 0;                   /* the rows held */
    ets_spread(w, x, &l, &b, s);
    if (jac) {
        for (sb_i64 i = 0; i < (sb_i64)k * k; i++) A[(sb_i64)(i) * sw] = 0.0;
        for (sb_i32 j = 0; j < k; j++) g[(sb_i64)(j) * sw] = 0.0, dl[(sb_i64)(j) * sw] = 0.0, db[(sb_i64)(j) * sw] = 0.0;
        dl[(sb_i64)(0) * sw] = 1.0;
        if (tr) db[(sb_i64)(1) * sw] = 1.0;
        if (se) ets_ds_start(ds, k, m, tr, sw);
    }
    double sse = 0.0, lsum = 0.0; /* lsum: multiplicative errors' sum of log yhat, in time order */
#ifndef SB_COMPAT_DEVICE
    double lq[ETS_BLOCK]; /* the host: a block's yhat, their logarithms added at its end (ets_log_add) */
    sb_i32 nq = 0;
#endif
    SB_GLOBAL double *v = w->v;
    if (jac && me)
        for (sb_i32 j = 0; j < k; j++) v[(sb_i64)(j) * sw] = 0.0;
#ifdef SB_SABOTAGE_ETS_SSE_ORDER
    double pend = 0.0;
#endif
    sb_i32 r = 0; /* t % m with a season (a counter, no division), else 0 */
    for (sb_i64 t = 0; t < w->n; t++) {
        ETS_FILTER_PREDICT();
        /* multiplicative errors: the relative error, which needs yhat > 0 */
        if (me && !(yh > 0.0)) return ets_inf();
        const double e = me ? yt / yh - 1.0 : yt - yh;
#ifdef SB_COMPAT_DEVICE
        if (me) lsum = lsum + ets_log(yh);
#else
        if (me && (lq[nq++] = yh, nq == ETS_BLOCK)) lsum = ets_log_add(lsum, lq, nq), nq = 0;
#endif
        ETS_SSE_ADD();
        if (out) fitted[t] = yh;
        if (jac) {
            const double qs = se == ETS_MUL ? yt / (st * st) : 0.0, ql = se == ETS_MUL ? yt / (lp * lp) : 0.0;
            const double qy = me ? yt / (yh * yh) : 0.0;
            SB_GLOBAL double *dst = ds + (sb_i64)r * k * sw, *dy = rows + (sb_i64)nr * ka * sw;
            ets_jac_step(k, sw, tr, se, me, a, be, ga, phi, lp, st, yh, qy, qs, ql, dl, db, dst, dy, v);
            dy[(sb_i64)(k) * sw] = e;
            if (++nr == ETS_BLOCK) ets_normal_flush(k, sw, nr, rows, A, g), nr = 0;
        }
        ETS_FILTER_ADVANCE();
        if (!ets_finite(sse)) return ets_inf();
    }
    if (jac && nr > 0) ets_normal_flush(k, sw, nr, rows, A, g);
#ifndef SB_COMPAT_DEVICE
    if (nq > 0) lsum = ets_log_add(lsum, lq, nq);
#endif
    if (out) {
        last[0] = l;
        last[1] = tr ? b : ets_nan();
        for (sb_i32 j = 0; se && j < m; j++) last[2 + j] = s[(sb_i64)((sb_i32)((w->n + j) % m)) * sw];
    }
    w->csum = sse, w->lsum = lsum;
    if (me) {
        /* The likelihood of Hyndman et al. (2008, sec. 5.2) concentrated over
         * sigma: -2 log L = n log(sum e^2) + 2 sum log yhat + const, e the
         * relative errors; as a sum of squares, sum (e G)^2 with G the
         * geometric mean of yhat (taken relative to the data's scale lref, a
         * constant of the series, so that the exponent stays small). Its
         * Gauss-Newton step (the derivative of G included, G^2 cancelling):
         * with u_t = -de_t (dy above), w = sum e u (in g), v = mean dyhat/yhat
         * and C = sum e^2, J^T J = sum u u^T - v w^T - w v^T + C v v^T and
         * -J^T r = w - C v. */
        const double nn = (double)w->n, ex = 2.0 * (lsum / nn - w->lref);
        if (!(ex > -100.0 && ex < 100.0)) return ets_inf();
        if (jac) {
            for (sb_i32 j = 0; j < k; j++) v[(sb_i64)(j) * sw] = v[(sb_i64)(j) * sw] / nn;
            for (sb_i32 i = 0; i < k; i++) {
                SB_GLOBAL double *Ai = A + (sb_i64)i * k * sw;
                const double vi = v[(sb_i64)(i) * sw], gi = g[(sb_i64)(i) * sw];
                for (sb_i32 j = i; j < k; j++) {
                    const double vj = v[(sb_i64)(j) * sw], gj = g[(sb_i64)(j) * sw];
                    Ai[(sb_i64)(j) * sw] = Ai[(sb_i64)(j) * sw] - vi * gj - gi * vj + sse * (vi * vj);
                }
            }
            for (sb_i32 i = 0; i < k; i++) g[(sb_i64)(i) * sw] = g[(sb_i64)(i) * sw] - sse * v[(sb_i64)(i) * sw];
        }
        const double q = sse * sb__hx_exp(ex);
        return ets_finite(q) ? q : ets_inf();
    }
    return sse;
}

/* The devices whose Jacobian passes run ets_pass_reg: CUDA (timed and
 * verified on an H100: bench/results/ts-gpu-2026-12-06-ets-reg-ab.md) and
 * the host's compilation of a device (tests/unit/ets_dev_emu.c). An OpenCL
 * device keeps ets_pass_model's pass: NVIDIA's OpenCL has not built this one
 * yet (its first build did not end within the minute the session had left),
 * and a program's build time is a user's wait. */
#if defined(SB_COMPAT_DEVICE) && (defined(__CUDACC__) || defined(SB_ETS_EMU_REG))
#define ETS_USE_REG 1
#endif

#ifdef ETS_USE_REG
/* The states a device's Jacobian pass keeps in registers (ets_pass_reg):
 * k <= ETS_KR (a season of up to 8 with a trend, 9 without). */
#define ETS_KR 9

/* ets_pass_model's Jacobian pass (jac, no out) for k <= ETS_KR on a device,
 * the same bits: the Jacobian's level and trend columns, the normal
 * equations (A's upper triangle and g) and v held in registers (fixed-size
 * arrays, every loop over them of constant length, unrolled, an element past
 * k left alone), and each element of A and g a running sum in time order,
 * added step by step as ets_normal_flush's sums are (a sum's blocks change
 * no bit); only the season's derivatives (the m x k ring) and the filter's
 * season ring stay in the scratch. One work-item a series has few warps to
 * hide a memory access's latency behind (10,000 series: about 2.4 an SM);
 * this pass touches the scratch 2 k + 2 times a step instead of about
 * 150. */
SB_FN_BIG double ets_pass_reg(ets_work *w, SB_GLOBAL const double *x, SB_GLOBAL double *A, SB_GLOBAL double *g,
                              sb_i32 tr, sb_i32 se, int me) {
    const sb_i64 sw = w->sw;
    const ets_spec *sp = &w->sp;
    const sb_i32 k = w->k, m = sp->m;
    const double a = w->par[0], be = tr ? w->par[1] : 0.0, ga = se ? w->par[2] : 0.0;
    const double phi = sp->damped ? w->par[3] : 1.0;
    double dl[ETS_KR], db[ETS_KR], vv[ETS_KR], dy[ETS_KR], gr[ETS_KR], Ar[ETS_KR * (ETS_KR + 1) / 2];
    SB_UNROLL for (sb_i32 j = 0; j < ETS_KR; j++) {
        dl[j] = j == 0 ? 1.0 : 0.0, db[j] = tr && j == 1 ? 1.0 : 0.0;
        vv[j] = 0.0, dy[j] = 0.0, gr[j] = 0.0;
    }
    SB_UNROLL for (sb_i32 q = 0; q < ETS_KR * (ETS_KR + 1) / 2; q++) Ar[q] = 0.0;
    SB_GLOBAL double *s = w->s, *ds = w->ds;
    if (se) ets_ds_start(ds, k, m, tr, sw);
    double l, b;
    ets_spread(w, x, &l, &b, s);
    double sse = 0.0, lsum = 0.0;
#ifdef SB_SABOTAGE_ETS_SSE_ORDER
    double pend = 0.0;
#endif
#ifdef SB_SABOTAGE_ETS_REG_ORDER
    /* Separating arm: A's sums split by the step's parity and added at the
     * end (the same terms in another order). */
    double Ao[ETS_KR * (ETS_KR + 1) / 2];
    SB_UNROLL for (sb_i32 q = 0; q < ETS_KR * (ETS_KR + 1) / 2; q++) Ao[q] = 0.0;
#endif
    sb_i32 r = 0;
    for (sb_i64 t = 0; t < w->n; t++) {
        ETS_FILTER_PREDICT();
        if (me && !(yh > 0.0)) return ets_inf();
        const double e = me ? yt / yh - 1.0 : yt - yh;
        if (me) lsum = lsum + ets_log(yh);
        ETS_SSE_ADD();
        const double qs = se == ETS_MUL ? yt / (st * st) : 0.0, ql = se == ETS_MUL ? yt / (lp * lp) : 0.0;
        const double qy = me ? yt / (yh * yh) : 0.0;
        SB_GLOBAL double *dst = ds + (sb_i64)r * k * sw;
        SB_UNROLL for (sb_i32 j = 0; j < ETS_KR; j++)
            if (j < k) ETS_JAC_ELEM(dl[j], db[j], dst[(sb_i64)(j) * sw], dy[j], vv[j]);
        sb_i32 q = 0;
        SB_UNROLL for (sb_i32 i = 0; i < ETS_KR; i++) {
            SB_UNROLL for (sb_i32 j = i; j < ETS_KR; j++, q++)
#ifdef SB_SABOTAGE_ETS_REG_ORDER
                if (j < k && (t & 1)) Ao[q] = Ao[q] + dy[i] * dy[j];
                else if (j < k) Ar[q] = Ar[q] + dy[i] * dy[j];
#else
                if (j < k) Ar[q] = Ar[q] + dy[i] * dy[j];
#endif
            if (i < k) gr[i] = gr[i] + dy[i] * e;
        }
        ETS_FILTER_ADVANCE();
        if (!ets_finite(sse)) return ets_inf();
    }
#ifdef SB_SABOTAGE_ETS_REG_ORDER
    SB_UNROLL for (sb_i32 q = 0; q < ETS_KR * (ETS_KR + 1) / 2; q++) Ar[q] = Ar[q] + Ao[q];
#endif
    w->csum = sse, w->lsum = lsum;
    double ex = 0.0;
    if (me) { /* ets_pass_model's likelihood and its Gauss-Newton terms, element by element as there */
        const double nn = (double)w->n;
        ex = 2.0 * (lsum / nn - w->lref);
        if (!(ex > -100.0 && ex < 100.0)) return ets_inf();
        SB_UNROLL for (sb_i32 j = 0; j < ETS_KR; j++) vv[j] = vv[j] / nn;
        sb_i32 q = 0;
        SB_UNROLL for (sb_i32 i = 0; i < ETS_KR; i++)
            SB_UNROLL for (sb_i32 j = i; j < ETS_KR; j++, q++)
                Ar[q] = Ar[q] - vv[i] * gr[j] - gr[i] * vv[j] + sse * (vv[i] * vv[j]);
        SB_UNROLL for (sb_i32 i = 0; i < ETS_KR; i++) gr[i] = gr[i] - sse * vv[i];
    }
    sb_i32 q = 0;
    SB_UNROLL for (sb_i32 i = 0; i < ETS_KR; i++) {
        SB_UNROLL for (sb_i32 j = i; j < ETS_KR; j++, q++)
            if (j < k) A[((sb_i64)i * k + j) * sw] = Ar[q];
        if (i < k) g[(sb_i64)(i) * sw] = gr[i];
    }
    if (me) {
        const double qv = sse * sb__hx_exp(ex);
        return ets_finite(qv) ? qv : ets_inf();
    }
    return sse;
}
#endif

/* ets_pass_model for w's model. The host gives it the model's flags as
 * constants (the same pass, instruction by instruction the same arithmetic),
 * so that the compiler drops their branches from the filter's loop and keeps
 * its states in registers; a device passes them as they are. */
SB_FN_BIG double ets_pass(ets_work *w, SB_GLOBAL const double *x, int jac, SB_GLOBAL double *A, SB_GLOBAL double *g,
                          int out, SB_GLOBAL double *fitted, SB_GLOBAL double *last) {
    const ets_spec *sp = &w->sp;
    const sb_i32 tr = sp->trend ? 1 : 0, se = sp->seasonal;
    const int me = sp->error == ETS_MUL;
#ifdef SB_COMPAT_DEVICE
#ifdef ETS_USE_REG
    if (jac && w->k <= ETS_KR) return ets_pass_reg(w, x, A, g, tr, se, me);
#endif
    return ets_pass_model(w, x, jac, A, g, out, fitted, last, tr, se, me);
#else
#define ETS_PM(TR, SE, ME) return ets_pass_model(w, x, jac, A, g, out, fitted, last, TR, SE, ME)
    switch ((me ? 6 : 0) + (tr ? 3 : 0) + se) {
    case 0: ETS_PM(0, 0, 0);
    case 1: ETS_PM(0, 1, 0);
    case 2: ETS_PM(0, 2, 0);
    case 3: ETS_PM(1, 0, 0);
    case 4: ETS_PM(1, 1, 0);
    case 5: ETS_PM(1, 2, 0);
    case 6: ETS_PM(0, 0, 1);
    case 7: ETS_PM(0, 1, 1);
    case 8: ETS_PM(0, 2, 1);
    case 9: ETS_PM(1, 0, 1);
    case 10: ETS_PM(1, 1, 1);
    default: ETS_PM(1, 2, 1);
    }
#undef ETS_PM
#endif
}

/* Solve A d = g (A symmetric, its upper triangle) by LDL^T in index order,
 * no square root. A pivot that is not above 1e-12 of its diagonal entry
 * drops its state (d = 0 there): the stated rank rule, for states the data
 * cannot tell apart. */
SB_FN void ets_solve(ets_work *w, SB_GLOBAL const double *A, SB_GLOBAL const double *g, SB_GLOBAL double *d) {
    const sb_i64 sw = ETS_SW(w);
    const sb_i32 k = w->k;
    SB_GLOBAL double *L = w->L, *D = w->D;
    SB_GLOBAL sb_i32 *drop = w->drop;
    for (sb_i32 j = 0; j < k; j++) {
        double v = A[(sb_i64)((sb_i64)j * k + j) * sw];
        for (sb_i32 p = 0; p < j; p++) v = v - L[(sb_i64)((sb_i64)j * k + p) * sw] * L[(sb_i64)((sb_i64)j * k + p) * sw] * D[(sb_i64)(p) * sw];
        drop[(sb_i64)(j) * sw] = !(A[(sb_i64)((sb_i64)j * k + j) * sw] > 0.0) || !(v > 1e-12 * A[(sb_i64)((sb_i64)j * k + j) * sw]);
        D[(sb_i64)(j) * sw] = drop[(sb_i64)(j) * sw] ? 0.0 : v;
        for (sb_i32 i = j + 1; i < k; i++) {
            double u = A[(sb_i64)((sb_i64)j * k + i) * sw];
            for (sb_i32 p = 0; p < j; p++) u = u - L[(sb_i64)((sb_i64)i * k + p) * sw] * L[(sb_i64)((sb_i64)j * k + p) * sw] * D[(sb_i64)(p) * sw];
            L[(sb_i64)((sb_i64)i * k + j) * sw] = drop[(sb_i64)(j) * sw] ? 0.0 : u / v;
        }
    }
    for (sb_i32 j = 0; j < k; j++) {
        double z = g[(sb_i64)(j) * sw];
        for (sb_i32 p = 0; p < j; p++) z = z - L[(sb_i64)((sb_i64)j * k + p) * sw] * d[(sb_i64)(p) * sw];
        d[(sb_i64)(j) * sw] = drop[(sb_i64)(j) * sw] ? 0.0 : z;
    }
    for (sb_i32 j = 0; j < k; j++) d[(sb_i64)(j) * sw] = drop[(sb_i64)(j) * sw] ? 0.0 : d[(sb_i64)(j) * sw] / D[(sb_i64)(j) * sw];
    for (sb_i32 j = k - 1; j >= 0; j--) {
        double z = d[(sb_i64)(j) * sw];
        for (sb_i32 i = j + 1; i < k; i++) z = z - L[(sb_i64)((sb_i64)i * k + j) * sw] * d[(sb_i64)(i) * sw];
        d[(sb_i64)(j) * sw] = drop[(sb_i64)(j) * sw] ? 0.0 : z;
    }
}

/* The SSE at the smoothing parameters in w->par, minimized over the initial
 * states by Gauss-Newton from the heuristic start; the states end in w->x.
 * A step that does not lower the SSE is halved; the search stops when a step
 * lowers it by at most 1e-12 of itself, after w->gn_max steps, or, without
 * a multiplicative season, after the first full step (the least-squares
 * solution). A pure function of w->par and w->gn_max.
 *
 * Which passes form the normal equations is a matter of cost alone: a
 * pass's SSE is the same bits with or without them (the Jacobian's work is
 * apart from the sums), and a pass that forms them gives the same sums in
 * the same order wherever it runs. The full step of a step that can be
 * followed by another (not the last allowed, not an additive model's) forms
 * them at once, into A and g (the step is solved: they are free), since it
 * is mostly accepted and followed (measured: 87% of such steps on the bench's
 * multiplicative models); a halved step and the last one form none, and an
 * accepted step that goes on without them takes a second pass there. */
SB_FN_BIG double ets_inner(ets_work *w) {
    const sb_i64 sw = ETS_SW(w);
    const sb_i32 k = w->k;
    for (sb_i32 j = 0; j < k; j++) w->x[(sb_i64)(j) * sw] = w->start[(sb_i64)(j) * sw];
    w->nfev++;
    double f = ets_pass(w, w->x, 1, w->A, w->g, 0, w->x, w->x);
    if (!ets_finite(f)) return ets_inf();
    /* additive models: the fitted values are affine in the states, so the
     * first full step is the least-squares solution; a second would only
     * move rounding */
    const int affine = w->sp.seasonal != ETS_MUL && w->sp.error != ETS_MUL;
    for (sb_i32 it = 0; it < w->gn_max; it++) {
        ets_solve(w, w->A, w->g, w->delta);
        double step = 1.0, fn = ets_inf();
        int ok = 0, halved = 0;
        const int jfull = !affine && it + 1 < w->gn_max; /* the full step forms the normal equations */
        for (; halved < ETS_HALVINGS; halved++, step = step * 0.5) {
            for (sb_i32 j = 0; j < k; j++) w->xn[(sb_i64)(j) * sw] = w->x[(sb_i64)(j) * sw] + step * w->delta[(sb_i64)(j) * sw];
            fn = ets_pass(w, w->xn, jfull && halved == 0, w->A, w->g, 0, w->x, w->x);
            if ((ok = fn <= f)) break;
        }
        if (!ok) break;
        const double dec = f - fn;
        SB_GLOBAL double *t = w->x;
        w->x = w->xn, w->xn = t;
        f = fn;
        if (affine && halved == 0) break;
        if (!(dec > ETS_GN_TOL * f)) break;
        if (it + 1 == w->gn_max) break;
        if (!(jfull && halved == 0)) ets_pass(w, w->x, 1, w->A, w->g, 0, w->x, w->x); /* the normal equations here */
    }
    return f;
}

SB_FN double ets_lo(sb_i32 idx) { return idx == 3 ? ETS_PHI_LO : 0.0; }
SB_FN double ets_hi(sb_i32 idx) { return idx == 3 ? ETS_PHI_HI : 1.0; }

/* u folded into the bounds [lo, hi] by reflection at each bound (a
 * triangular wave of period 2 (hi - lo)), u itself inside them. The simplex
 * moves u freely, so vertices beyond a bound are not squashed onto it: a
 * simplex whose vertices are clamped to one face loses a dimension and can
 * never leave that face (measured: a multiplicative season's gamma stuck at
 * 0 with a lower SSE at 0.002). Exact operations and a truncation only. */
SB_FN double ets_fold(double u, double lo, double hi) {
    if (u >= lo && u <= hi) return u;
    const double w = hi - lo, p = 2.0 * w;
    double r = u - lo;
    double q = r / p;
    if (!(q > -4.0e15 && q < 4.0e15)) return lo; /* no finite fold: far outside, or not a number */
    double fl = (double)(sb_i64)q;
    if (fl > q) fl = fl - 1.0; /* floor */
    r = r - fl * p;
    if (r < 0.0) r = 0.0;
    if (r > p) r = p;
    const double x = r <= w ? lo + r : hi - (r - w);
    return x < lo ? lo : x > hi ? hi : x;
}

/* The grid the simplex starts from: every combination of these values of the
 * free parameters (alpha slowest); the ETS_STARTS best points (by SSE, ties in
 * grid order) each start a search, because the simplex, pressed against a
 * bound, can settle in a local minimum of the face (measured: Holt on the
 * sunspots, a multiplicative season on the taxi's card trips). Alpha takes
 * 0.1, 0.3, 0.5, 0.7, 0.9; phi 0.85, 0.95, 0.99; beta and gamma 0.05, 0.2, 0.5. */
SB_FN double ets_grid_value(sb_i32 p, sb_i32 i) {
    if (p == 0) return i == 0 ? 0.1 : i == 1 ? 0.3 : i == 2 ? 0.5 : i == 3 ? 0.7 : 0.9;
    if (p == 3) return i == 0 ? 0.85 : i == 1 ? 0.95 : 0.99;
    return i == 0 ? 0.05 : i == 1 ? 0.2 : 0.5;
}

/* The grid values of parameter p: 5 for alpha, 3 for the others. */
SB_FN sb_i32 ets_grid_count(sb_i32 p) { return p == 0 ? 5 : 3; }

/* Where the point in w->par is in the grid (the search's order, the last free
 * parameter fastest), or -1 when it is not a grid point. */
SB_FN sb_i32 ets_grid_index(const ets_work *w) {
    sb_i32 pos = 0;
    for (sb_i32 i = 0; i < w->nfree; i++) {
        const sb_i32 p = w->free_idx[i], c = ets_grid_count(p);
        sb_i32 q = 0;
        while (q < c && !(w->par[p] == ets_grid_value(p, q))) q++;
        if (q == c) return -1;
        pos = pos * c + q;
    }
    return pos;
}

/* The objective at u (the free smoothing parameters, in index order, before
 * folding into their bounds). The search's objective (w->gn_max at
 * ETS_GN_SEARCH) is a pure function of the folded point, so a grid point the
 * simplex comes back to (its first vertex, a reflection onto the lattice)
 * takes the value the grid computed there: the same bits, counted as an
 * evaluation as before, without the passes. */
SB_FN double ets_objective(ets_work *w, const double *u) {
    for (sb_i32 i = 0; i < w->nfree; i++)
        w->par[w->free_idx[i]] = ets_fold(u[i], ets_lo(w->free_idx[i]), ets_hi(w->free_idx[i]));
    if (w->ngrid > 0 && w->gn_max == ETS_GN_SEARCH) {
        const sb_i32 gi = ets_grid_index(w);
        if (gi >= 0) {
            w->nfev++;
            return w->gridf[(sb_i64)gi * ETS_SW(w)];
        }
    }
#ifndef SB_COMPAT_DEVICE
    /* The host also keeps the search's last values off the grid by the
     * point's bits (measured: 5% to 7% of the simplex's points on the
     * bench's series are points it computed before: its restart's first
     * vertex, shrinks and contractions landing on old vertices). The same
     * reasoning as the grid's: a pure function of the folded point, so the
     * same bits, counted as an evaluation, without the passes; ets_inner's
     * other products (the states in w->x) are read only after the final
     * solve, which is never memoized. A device computes them again. */
    if (w->gn_max == ETS_GN_SEARCH) {
        sb_u64 key[SB_ETS_NPAR], h = 0;
        for (sb_i32 i = 0; i < SB_ETS_NPAR; i++) key[i] = sb_d2u(w->par[i]), h = (h ^ key[i]) * 0x100000001B3ull;
        const sb_i32 slot = (sb_i32)((h ^ (h >> 29) ^ (h >> 47)) % ETS_MEMO);
        if (w->memo_used[slot] && w->memo_key[slot][0] == key[0] && w->memo_key[slot][1] == key[1] &&
            w->memo_key[slot][2] == key[2] && w->memo_key[slot][3] == key[3]) {
            w->nfev++;
            return w->memo_f[slot];
        }
        const double f = ets_inner(w);
        for (sb_i32 i = 0; i < SB_ETS_NPAR; i++) w->memo_key[slot][i] = key[i];
        w->memo_f[slot] = f, w->memo_used[slot] = 1;
        return f;
    }
#endif
    return ets_inner(w);
}

SB_FN void ets_clamp(const ets_work *w, double *x) {
    for (sb_i32 i = 0; i < w->nfree; i++) x[i] = ets_fold(x[i], ets_lo(w->free_idx[i]), ets_hi(w->free_idx[i]));
}

/* The search as a resumable procedure: every objective it wants is asked
 * for by its place in one loop (ets_fit_series': ask, evaluate, take), not
 * from inside the simplex's branches. The order of the points and every
 * value is what a recursive search computes; what changes is where the
 * evaluation is called from. On a device that is the point: the work-items
 * of a group run different series whose simplexes branch differently
 * (reflect, expand, contract, shrink), and an evaluation called from four
 * branches runs four times over, once for each branch's work-items, while
 * one called from the loop runs once for all of them. */

/* One bounded Nelder-Mead run (ets_nm_begin, ets_nm_take) from x0 (inside
 * the bounds) with the given first step, over unbounded coordinates folded
 * into the bounds (ets_fold): reflection 1, expansion 2, contractions 1/2,
 * shrink 1/2; vertices kept ordered by SSE, ties in their previous order.
 * Each iteration appends the best SSE to the fit's trace. At its end x
 * holds the best vertex (folded: where its SSE f was computed) and conv is
 * 1 when the simplex met both tolerances. */
enum { ETS_NM_INIT, ETS_NM_REFLECT, ETS_NM_EXPAND, ETS_NM_OUTSIDE, ETS_NM_INSIDE, ETS_NM_SHRINK };
typedef struct ets_nm {
    double v[SB_ETS_NPAR + 1][SB_ETS_NPAR], fv[SB_ETS_NPAR + 1], c[SB_ETS_NPAR], xr[SB_ETS_NPAR],
        xe[SB_ETS_NPAR], xc[SB_ETS_NPAR], fr, step, xtol, ftol;
    double x[SB_ETS_NPAR], f; /* the end: the best vertex and its SSE */
    sb_i32 ord[SB_ETS_NPAR + 1];
    sb_i32 it, i, pc, conv;
} ets_nm;

/* Vertex i of the first simplex (x0 moved by the step along coordinate
 * i - 1, inward at the upper bound) into u. */
SB_FN void ets_nm_vertex(ets_nm *s, const ets_work *w, sb_i32 i, double *u) {
    const sb_i32 d = w->nfree;
    for (sb_i32 j = 0; j < d; j++) s->v[i][j] = s->v[0][j];
    if (i > 0) {
        const double hi = ets_hi(w->free_idx[i - 1]), x = s->v[0][i - 1];
        s->v[i][i - 1] = x + s->step <= hi ? x + s->step : x - s->step;
    }
    for (sb_i32 j = 0; j < d; j++) u[j] = s->v[i][j];
}

/* A run from x0 begins, to end at simplex size xtol and relative spread
 * ftol: its first point into u. */
SB_FN void ets_nm_begin(ets_nm *s, const ets_work *w, const double *x0, double step, double xtol, double ftol,
                        double *u) {
    for (sb_i32 j = 0; j < w->nfree; j++) s->v[0][j] = x0[j];
    s->step = step, s->xtol = xtol, s->ftol = ftol, s->it = 0, s->i = 0, s->pc = ETS_NM_INIT, s->conv = 0;
    ets_nm_vertex(s, w, 0, u);
}

/* The run's end: the best vertex (ties to the lower index), folded. */
SB_FN void ets_nm_end(ets_nm *s, const ets_work *w) {
    const sb_i32 d = w->nfree;
    sb_i32 bi = 0;
    for (sb_i32 i = 1; i <= d; i++)
        if (s->fv[i] < s->fv[bi] || (s->fv[i] == s->fv[bi] && i < bi)) bi = i;
    for (sb_i32 j = 0; j < d; j++) s->x[j] = s->v[bi][j];
    ets_clamp(w, s->x);
    s->f = s->fv[bi];
}

/* An iteration's start (iteration s->it): the order, the trace, the
 * tolerances, then the reflection asked for in u. 0 when the run ends. */
SB_FN int ets_nm_top(ets_nm *s, ets_work *w, double *u) {
    const sb_i32 d = w->nfree;
    if (s->it >= ETS_NM_ITER * d) {
        ets_nm_end(s, w);
        return 0;
    }
    for (sb_i32 i = 1; i <= d; i++) /* insertion sort: stable */
        for (sb_i32 j = i; j > 0 && s->fv[s->ord[j]] < s->fv[s->ord[j - 1]]; j--) {
            const sb_i32 t = s->ord[j];
            s->ord[j] = s->ord[j - 1], s->ord[j - 1] = t;
        }
    const sb_i32 b0 = s->ord[0];
    const double fb = s->fv[b0];
    w->trace[w->ntrace++] = fb;
    w->nit++;
    double xs = 0.0, fs = 0.0;
    for (sb_i32 i = 1; i <= d; i++) {
        const double df = s->fv[s->ord[i]] - fb;
        fs = df > fs || df != df ? df : fs;
        for (sb_i32 j = 0; j < d; j++) {
            const double dx = s->v[s->ord[i]][j] - s->v[b0][j], ax = dx < 0.0 ? -dx : dx;
            xs = ax > xs ? ax : xs;
        }
    }
    if (xs <= s->xtol && fs <= s->ftol * fb) {
        s->conv = 1;
        ets_nm_end(s, w);
        return 0;
    }
    const sb_i32 wi = s->ord[d];
    for (sb_i32 j = 0; j < d; j++) {
        double sum = 0.0;
        for (sb_i32 i = 0; i < d; i++) sum = sum + s->v[s->ord[i]][j];
        s->c[j] = sum / (double)d;
    }
    for (sb_i32 j = 0; j < d; j++) u[j] = s->xr[j] = s->c[j] + (s->c[j] - s->v[wi][j]);
    s->pc = ETS_NM_REFLECT;
    return 1;
}

/* The next vertex of a shrink from index from on (all but the best, ord[0],
 * each halved toward it) into u; 0 when none is left. */
SB_FN int ets_nm_shrink_next(ets_nm *s, const ets_work *w, sb_i32 from, double *u) {
    const sb_i32 d = w->nfree, bi = s->ord[0];
    sb_i32 i = from;
    if (i == bi) i++;
    if (i > d) return 0;
    for (sb_i32 j = 0; j < d; j++) u[j] = s->v[i][j] = s->v[bi][j] + 0.5 * (s->v[i][j] - s->v[bi][j]);
    s->i = i;
    return 1;
}

/* The run takes f, the objective at the point it last asked for, and asks
 * for the next in u (1), or ends (0: ets_nm_end's x, f and conv). */
SB_FN int ets_nm_take(ets_nm *s, ets_work *w, double f, double *u) {
    const sb_i32 d = w->nfree, wi = s->ord[d];
    int shrink = 0;
    switch (s->pc) {
    case ETS_NM_INIT:
        s->fv[s->i] = f;
        s->ord[s->i] = s->i;
        if (++s->i <= d) {
            ets_nm_vertex(s, w, s->i, u);
            return 1;
        }
        return ets_nm_top(s, w, u);
    case ETS_NM_REFLECT:
        s->fr = f;
        if (f < s->fv[s->ord[0]]) {
            for (sb_i32 j = 0; j < d; j++) u[j] = s->xe[j] = s->c[j] + 2.0 * (s->c[j] - s->v[wi][j]);
            s->pc = ETS_NM_EXPAND;
            return 1;
        }
        if (f < s->fv[s->ord[d - 1]]) {
            for (sb_i32 j = 0; j < d; j++) s->v[wi][j] = s->xr[j];
            s->fv[wi] = f;
        } else if (f < s->fv[wi]) { /* outside contraction */
            for (sb_i32 j = 0; j < d; j++) u[j] = s->xc[j] = s->c[j] + 0.5 * (s->xr[j] - s->c[j]);
            s->pc = ETS_NM_OUTSIDE;
            return 1;
        } else { /* inside contraction */
            for (sb_i32 j = 0; j < d; j++) u[j] = s->xc[j] = s->c[j] + 0.5 * (s->v[wi][j] - s->c[j]);
            s->pc = ETS_NM_INSIDE;
            return 1;
        }
        break;
    case ETS_NM_EXPAND:
        if (f < s->fr) {
            for (sb_i32 j = 0; j < d; j++) s->v[wi][j] = s->xe[j];
            s->fv[wi] = f;
        } else {
            for (sb_i32 j = 0; j < d; j++) s->v[wi][j] = s->xr[j];
            s->fv[wi] = s->fr;
        }
        break;
    case ETS_NM_OUTSIDE:
    case ETS_NM_INSIDE:
        if (s->pc == ETS_NM_OUTSIDE ? f <= s->fr : f < s->fv[wi]) {
            for (sb_i32 j = 0; j < d; j++) s->v[wi][j] = s->xc[j];
            s->fv[wi] = f;
        } else
            shrink = 1;
        break;
    default: /* ETS_NM_SHRINK */
        s->fv[s->i] = f;
        if (ets_nm_shrink_next(s, w, s->i + 1, u)) return 1;
        break;
    }
    if (shrink) {
        s->pc = ETS_NM_SHRINK;
        if (ets_nm_shrink_next(s, w, 0, u)) return 1;
    }
    s->it++;
    return ets_nm_top(s, w, u);
}

/* The whole search (ets_search_begin, ets_search_take): the grid in its
 * order (ets_grid_value's comment), each point's objective kept for the
 * simplex's returns to it; a run from each of its ETS_STARTS best points
 * (step 0.1, to ETS_NM_XTOL_START and ETS_NM_FTOL_START); the lowest end,
 * ties to the earlier start, runs again from a fresh simplex (step 0.05, to
 * ETS_NM_XTOL and ETS_NM_FTOL); and at its end the objective once more with
 * ETS_GN_FINAL Gauss-Newton steps, which leaves the fit's states in w->x
 * and its parameters in w->par. */
enum { ETS_S_GRID, ETS_S_RUNS, ETS_S_LAST, ETS_S_FINAL };
typedef struct ets_search {
    ets_nm nm;
    double u[SB_ETS_NPAR]; /* the point whose objective the search asks for */
    double starts[ETS_STARTS][SB_ETS_NPAR], fb[ETS_STARTS], th[SB_ETS_NPAR], fbest;
    sb_i32 idx[SB_ETS_NPAR], cnt[SB_ETS_NPAR], pos, nbest, run, stage, converged;
} ets_search;

/* The grid's point at s->idx into u. */
SB_FN void ets_grid_point(ets_search *s, const ets_work *w) {
    for (sb_i32 i = 0; i < w->nfree; i++) s->u[i] = ets_grid_value(w->free_idx[i], s->idx[i]);
}

/* The search begins (w->nfree > 0): the grid's first point into s->u. */
SB_FN void ets_search_begin(ets_search *s, const ets_work *w) {
    for (sb_i32 i = 0; i < SB_ETS_NPAR; i++) {
        s->idx[i] = 0, s->cnt[i] = i < w->nfree ? ets_grid_count(w->free_idx[i]) : 1;
        s->th[i] = 0.0, s->u[i] = 0.0;
        for (sb_i32 q = 0; q < ETS_STARTS; q++) s->starts[q][i] = 0.0; /* the unused tail is copied whole */
    }
    s->fbest = ets_inf(), s->pos = 0, s->nbest = 0, s->run = 0, s->stage = ETS_S_GRID, s->converged = 1;
    ets_grid_point(s, w);
}

/* The search takes f, the objective at s->u, and asks for the next point
 * in s->u (1), or ends (0: the final objective taken). */
SB_FN int ets_search_take(ets_search *s, ets_work *w, double f) {
    const sb_i32 d = w->nfree;
    switch (s->stage) {
    case ETS_S_GRID: {
        w->gridf[(sb_i64)(s->pos++) * ETS_SW(w)] = f;
        /* keep the ETS_STARTS lowest, ties in grid order (a later point
         * enters only below an equal one's place) */
        sb_i32 at = s->nbest;
        while (at > 0 && f < s->fb[at - 1]) at--;
        if (at < ETS_STARTS) {
            const sb_i32 last = s->nbest < ETS_STARTS ? s->nbest : ETS_STARTS - 1;
            for (sb_i32 j = last; j > at; j--) {
                s->fb[j] = s->fb[j - 1];
                for (sb_i32 q = 0; q < SB_ETS_NPAR; q++) s->starts[j][q] = s->starts[j - 1][q];
            }
            s->fb[at] = f;
            for (sb_i32 q = 0; q < d; q++) s->starts[at][q] = s->u[q];
            if (s->nbest < ETS_STARTS) s->nbest++;
        }
        sb_i32 i = d - 1;
        while (i >= 0 && ++s->idx[i] == s->cnt[i]) s->idx[i--] = 0;
        if (i >= 0) {
            ets_grid_point(s, w);
            return 1;
        }
        w->ngrid = s->pos; /* the objective's lookups begin */
        s->stage = ETS_S_RUNS, s->run = 0;
        ets_nm_begin(&s->nm, w, s->starts[0], 0.1, ETS_NM_XTOL_START, ETS_NM_FTOL_START, s->u);
        return 1;
    }
    case ETS_S_RUNS:
        if (ets_nm_take(&s->nm, w, f, s->u)) return 1;
        for (sb_i32 q = 0; q < d; q++) s->starts[s->run][q] = s->nm.x[q];
        if (s->run == 0 || s->nm.f < s->fbest) {
            s->fbest = s->nm.f;
            for (sb_i32 q = 0; q < SB_ETS_NPAR; q++) s->th[q] = s->starts[s->run][q];
        }
        if (++s->run < s->nbest) {
            ets_nm_begin(&s->nm, w, s->starts[s->run], 0.1, ETS_NM_XTOL_START, ETS_NM_FTOL_START, s->u);
            return 1;
        }
        s->stage = ETS_S_LAST;
        ets_nm_begin(&s->nm, w, s->th, 0.05, ETS_NM_XTOL, ETS_NM_FTOL, s->u);
        return 1;
    case ETS_S_LAST:
        if (ets_nm_take(&s->nm, w, f, s->u)) return 1;
        for (sb_i32 q = 0; q < d; q++) s->th[q] = s->u[q] = s->nm.x[q];
        s->converged = s->nm.conv;
        w->gn_max = ETS_GN_FINAL; /* the states of the best point, solved further */
        s->stage = ETS_S_FINAL;
        return 1;
    default: /* ETS_S_FINAL */
        return 0;
    }
}

/* The heuristic start of the initial states (a fixed rule, the start of
 * every Gauss-Newton search): without a season the first value and the first
 * difference; with one the mean of the first period, the difference of the
 * first two periods' means over m, and the first period's deviations from its
 * mean (ratios to it: multiplicative), tied as the fit ties them. */
SB_FN_BIG void ets_start(ets_work *w) {
    const sb_i64 sw = ETS_SW(w);
    const ets_spec *sp = &w->sp;
    SB_GLOBAL const double *y = w->y;
    const sb_i32 m = sp->m, tr = sp->trend ? 1 : 0;
    if (!sp->seasonal) {
        w->start[(sb_i64)(0) * sw] = y[0];
        if (tr) w->start[(sb_i64)(1) * sw] = y[1] - y[0];
        return;
    }
    double s1 = 0.0, s2 = 0.0;
    for (sb_i32 j = 0; j < m; j++) s1 = s1 + y[j], s2 = s2 + y[m + j];
    const double l0 = s1 / (double)m;
    w->start[(sb_i64)(0) * sw] = l0;
    if (tr) w->start[(sb_i64)(1) * sw] = (s2 / (double)m - l0) / (double)m;
    for (sb_i32 j = 0; j < m - 1; j++)
        w->start[(sb_i64)(1 + tr + j) * sw] = sp->seasonal == ETS_MUL ? y[j] / l0 : y[j] - l0;
    /* tie: the deviations of the first period sum to 0 (their ratios to m)
     * up to rounding; the last season takes what is left, as ets_spread does */
}

/* Where one fit's results go (the caller's memory): par 4 (alpha, beta,
 * gamma, phi; NaN where the model has none), init and last 2 + m each (l0,
 * b0 or NaN, the m seasons; the final states likewise, oldest season first;
 * slots a model has no use for are 0), fitted and resid n, crit 4 (SSE, AIC,
 * AICc, BIC), trace up to ETS_TRACE_MAX, counts ETS_NCOUNTS. */
typedef struct ets_out {
    SB_GLOBAL double *par, *init, *last, *fitted, *resid, *crit, *trace;
    SB_GLOBAL sb_i32 *counts;
} ets_out;

/* Fit the series y (n values, checked by the host: finite, long enough,
 * positive for a multiplicative season) under sp, with scr
 * (ets_scratch_doubles) and iscr (k ints) its scratch, element j at j * sw,
 * into o. */
SB_FN_BIG void ets_fit_series(const ets_spec *sp, SB_GLOBAL const double *y, sb_i64 n, SB_GLOBAL double *scr,
                          SB_GLOBAL sb_i32 *iscr, sb_i64 sw, ets_out o) {
    const sb_i32 m = sp->m, tr = sp->trend ? 1 : 0;
    const sb_i32 k = ets_nstates(sp);
    ets_work w;
    w.sp = *sp, w.y = y, w.n = n, w.k = k, w.gn_max = ETS_GN_SEARCH;
    w.nfree = 0, w.nfev = 0, w.ntrace = 0, w.nit = 0, w.trace = o.trace, w.sw = sw;
    sw = ETS_SW(&w); /* the host's 1 */
    const sb_i32 has[SB_ETS_NPAR] = {1, tr, sp->seasonal ? 1 : 0, sp->damped};
    for (sb_i32 i = 0; i < SB_ETS_NPAR; i++) {
        w.free_idx[i] = 0;
        w.par[i] = has[i] ? sp->given[i] : ets_nan();
        if (has[i] && sp->given[i] != sp->given[i]) w.free_idx[w.nfree++] = i;
    }
    const sb_i64 kk = (sb_i64)k * k, nd = ets_scratch_doubles(k, m);
    for (sb_i64 i = 0; i < nd; i++) scr[i * sw] = 0.0;
    for (sb_i32 i = 0; i < k; i++) iscr[(sb_i64)i * sw] = 0;
    for (sb_i32 i = 0; i < 2 + m; i++) o.init[i] = 0.0, o.last[i] = 0.0;
    SB_GLOBAL double *p = scr;
    w.start = p, p += k * sw;
    w.x = p, p += k * sw;
    w.xn = p, p += k * sw;
    w.delta = p, p += k * sw;
    w.g = p, p += k * sw;
    w.D = p, p += k * sw;
    w.dl = p, p += k * sw;
    w.db = p, p += k * sw;
    w.A = p, p += kk * sw;
    w.L = p, p += kk * sw;
    w.s = p, p += m * sw;
    w.ds = p, p += (sb_i64)m * k * sw;
    w.v = p, p += k * sw;
    w.rows = p, p += (ETS_BLOCK * ((sb_i64)k + 1) + 3) * sw;
    w.gridf = p, w.ngrid = 0;
    w.drop = iscr;
    w.lref = 0.0, w.csum = 0.0, w.lsum = 0.0;
#ifndef SB_COMPAT_DEVICE
    for (sb_i32 i = 0; i < ETS_MEMO; i++) w.memo_used[i] = 0;
#endif
    if (sp->error == ETS_MUL) { /* the series' scale: log of its mean (positive: the host checked) */
        double sum = 0.0;
        for (sb_i64 t = 0; t < n; t++) sum = sum + y[t];
        w.lref = ets_log(sum / (double)n);
    }
    int flat = 1; /* a constant series */
    for (sb_i64 t = 1; t < n && flat; t++) flat = y[t] == y[0];
    sb_i32 converged = 1;
    if (flat) {
        /* The stated rule: a constant series c is fitted exactly (SSE 0)
         * without the search: estimated smoothing parameters 0 (the damping
         * its upper bound), level c, trend 0, seasons neutral. */
        for (sb_i32 i = 0; i < w.nfree; i++) w.par[w.free_idx[i]] = w.free_idx[i] == 3 ? ETS_PHI_HI : 0.0;
        w.x[0] = y[0];
        if (tr) w.x[sw] = 0.0;
        for (sb_i32 j = 0; j < m - 1 && sp->seasonal; j++) w.x[(sb_i64)(1 + tr + j) * sw] = sp->seasonal == ETS_MUL ? 1.0 : 0.0;
    } else {
        ets_start(&w);
        if (w.nfree == 0) {
            w.gn_max = ETS_GN_FINAL;
            ets_inner(&w);
        } else {
            /* the search asks, the objective answers: one call site (the
             * search's comment says why) */
            ets_search s;
            ets_search_begin(&s, &w);
            for (int more = 1; more;) more = ets_search_take(&s, &w, ets_objective(&w, s.u));
            converged = s.converged;
        }
    }
    for (sb_i32 i = 0; i < SB_ETS_NPAR; i++) o.par[i] = w.par[i];
    /* a pass that stops early (a multiplicative model's yhat <= 0, or a sum
     * past the largest double) leaves the later fitted values NaN: stated
     * bits, not what the memory held (which parted two fits of one series) */
    for (sb_i64 t = 0; t < n; t++) o.fitted[t] = ets_nan();
    const double sse = ets_pass(&w, w.x, 0, w.A, w.g, 1, o.fitted, o.last);
    for (sb_i64 t = 0; t < n; t++) o.resid[t] = y[t] - o.fitted[t];
    double l0, b0;
    ets_spread(&w, w.x, &l0, &b0, w.s);
    o.init[0] = l0;
    o.init[1] = tr ? b0 : ets_nan();
    for (sb_i32 j = 0; j < m && sp->seasonal; j++) o.init[2 + j] = w.s[(sb_i64)j * sw];
    /* statsmodels' count: the model's smoothing parameters (given ones too:
     * measured, a given smoothing_level still counts), the level, the trend
     * and m - 1 seasons (the m-th is tied) */
    const sb_i32 kc = has[0] + has[1] + has[2] + has[3] + k;
    const double nn = (double)n, kd = (double)kc;
    /* -2 log L less n (1 + log 2 pi): n log(SSE / n) (additive errors);
     * n log(sum e^2 / n) + 2 sum log yhat, e relative (multiplicative) */
    const double base = sp->error != ETS_MUL ? nn * ets_log(sse / nn)
                        : ets_finite(sse) ? nn * ets_log(w.csum / nn) + 2.0 * w.lsum : ets_inf();
    const double aic = base + 2.0 * kd;
    o.crit[0] = sp->error == ETS_MUL ? w.csum : sse; /* multiplicative: the sum of squared relative errors */
    o.crit[1] = aic;
    o.crit[2] = n - kc - 3 > 0 ? aic + (2.0 * (kd + 2.0) * (kd + 3.0)) / (double)(n - kc - 3) : ets_inf();
    o.crit[3] = base + kd * ets_log(nn);
    o.counts[0] = w.nfev;
    o.counts[1] = w.nit;
    o.counts[2] = converged;
    o.counts[3] = kc;
    o.counts[4] = w.ntrace;
}

#endif
