/*
 * ets.c: exponential smoothing, fitted by least squares, one series a task
 * (docs/timeseries.md).
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
 *   its bounds), run from each of the three best points of a fixed grid; the
 *   lowest end runs once more from a fresh simplex (the usual cure for a
 *   simplex that collapsed early), and its end is the fit.
 *
 * The objective of the outer search is a pure function of the smoothing
 * parameters (the inner search always starts from the same heuristic
 * states), every sum runs in time order, and no step depends on a thread or
 * on another series: each series' result is its own, whatever batch it is in.
 */
#include "ets.h"
#include "ts_common.h"
#include <math.h> /* INFINITY and NAN only: no libm function is called */
#include <string.h>

#define ETS_GN_SEARCH 4     /* Gauss-Newton steps for the initial states while the simplex searches */
#define ETS_GN_FINAL 50     /* and at the point it chose */
#define ETS_HALVINGS 40     /* step halvings before a Gauss-Newton step is given up */
#define ETS_GN_TOL 1e-12    /* a Gauss-Newton step lowering the SSE by at most this (relative) ends the search */
#define ETS_NM_ITER 200     /* simplex iterations a run, times the dimension */
#define ETS_NM_XTOL 1e-6    /* simplex size at which a run stops (with the next) */
#define ETS_NM_FTOL 1e-10   /* relative spread of SSE at which a run stops */
#define ETS_STARTS 3        /* grid points the simplex search starts from */
#define ETS_PHI_LO 0.8      /* the damping parameter's bounds (statsmodels') */
#define ETS_PHI_HI 0.995

/* What a series' fit shares between its passes. */
typedef struct ets_work {
    const ets_spec *sp;
    const double *y;
    int64_t n;
    int32_t k;       /* initial states estimated: level, trend, m - 1 seasons */
    int32_t nfree;   /* smoothing parameters estimated */
    int32_t free_idx[SB_ETS_NPAR];
    double par[SB_ETS_NPAR];
    double *start;   /* k: the heuristic initial states */
    double *x, *xn, *delta; /* k each */
    double *A, *An, *g, *gn, *L, *D; /* k x k, k, k x k, k */
    double *s, *ds, *dl, *db, *dy; /* m, m x k, k, k, k */
    int32_t *drop;
    int32_t nfev;
    int32_t gn_max; /* Gauss-Newton steps allowed: ETS_GN_SEARCH, then ETS_GN_FINAL */
} ets_work;

/* A double's canonical bits, finiteness and the profile's double log are
 * the time series families' shared pieces (ts_common.h). */
#define finite ts_finite
#define canon ts_canon
#define ets_log ts_log

/* The states x (level, trend, the first m - 1 seasons) spread into the
 * filter's level, trend and season ring; the last season is tied. */
static void ets_spread(const ets_work *w, const double *x, double *l, double *b, double *s) {
    const ets_spec *sp = w->sp;
    *l = x[0];
    *b = sp->trend ? x[1] : 0.0;
    if (!sp->seasonal) return;
    const int32_t o = 1 + (sp->trend ? 1 : 0);
    double sum = 0.0;
    for (int32_t j = 0; j < sp->m - 1; j++) s[j] = x[o + j], sum = sum + x[o + j];
    s[sp->m - 1] = (sp->seasonal == ETS_MUL ? (double)sp->m : 0.0) - sum;
}

/* One pass of the filter from states x: the SSE (+infinity when it is not
 * finite), and with jac the normal equations of the states' Gauss-Newton
 * step (A, upper triangle, k x k; g = J^T e), accumulated in time order.
 * fitted and last, when not NULL, get the fitted values and the final
 * states (level, trend, the last m seasons oldest first). */
static double ets_pass(ets_work *w, const double *x, int jac, double *A, double *g, double *fitted, double *last) {
    const ets_spec *sp = w->sp;
    const int32_t k = w->k, m = sp->m, tr = sp->trend ? 1 : 0, se = sp->seasonal;
    const double a = w->par[0], be = tr ? w->par[1] : 0.0, ga = se ? w->par[2] : 0.0;
    const double phi = sp->damped ? w->par[3] : 1.0;
    double l, b, *s = w->s, *ds = w->ds, *dl = w->dl, *db = w->db, *dy = w->dy;
    ets_spread(w, x, &l, &b, s);
    if (jac) {
        memset(A, 0, sizeof(double) * (size_t)k * (size_t)k);
        memset(g, 0, sizeof(double) * (size_t)k);
        memset(dl, 0, sizeof(double) * (size_t)k);
        memset(db, 0, sizeof(double) * (size_t)k);
        dl[0] = 1.0;
        if (tr) db[1] = 1.0;
        if (se) {
            memset(ds, 0, sizeof(double) * (size_t)m * (size_t)k);
            for (int32_t j = 0; j < m - 1; j++) ds[(size_t)j * k + 1 + tr + j] = 1.0, ds[(size_t)(m - 1) * k + 1 + tr + j] = -1.0;
        }
    }
    double sse = 0.0;
#ifdef SB_SABOTAGE_ETS_SSE_ORDER
    double pend = 0.0;
#endif
    for (int64_t t = 0; t < w->n; t++) {
        const double yt = w->y[t];
        const int32_t r = se ? (int32_t)(t % m) : 0;
        const double lp = tr ? l + phi * b : l;
        const double st = se ? s[r] : 0.0;
        const double yh = se == ETS_ADD ? lp + st : se == ETS_MUL ? lp * st : lp;
        const double e = yt - yh;
#ifdef SB_SABOTAGE_ETS_SSE_ORDER
        /* Separating arm: the squares added in pairs before the running sum
         * (the same terms in another order). */
        if (t & 1) sse = sse + (pend + e * e);
        else pend = e * e;
        if (!(t & 1) && t == w->n - 1) sse = sse + pend;
#else
        sse = sse + e * e;
#endif
        if (fitted) fitted[t] = yh;
        if (jac) {
            double *dst = ds + (size_t)r * k;
            const double qs = se == ETS_MUL ? yt / (st * st) : 0.0, ql = se == ETS_MUL ? yt / (lp * lp) : 0.0;
            for (int32_t j = 0; j < k; j++) {
                const double dlp = tr ? dl[j] + phi * db[j] : dl[j];
                const double dsj = se ? dst[j] : 0.0;
                dy[j] = se == ETS_ADD ? dlp + dsj : se == ETS_MUL ? dlp * st + lp * dsj : dlp;
                const double dln = se == ETS_ADD ? (1.0 - a) * dlp - a * dsj
                                   : se == ETS_MUL ? (1.0 - a) * dlp - a * (qs * dsj)
                                                   : (1.0 - a) * dlp;
                if (tr) db[j] = be * (dln - dl[j]) + (1.0 - be) * (phi * db[j]);
                dl[j] = dln;
                if (se == ETS_ADD) dst[j] = (1.0 - ga) * dsj - ga * dlp;
                else if (se == ETS_MUL) dst[j] = (1.0 - ga) * dsj - ga * (ql * dlp);
            }
            for (int32_t i = 0; i < k; i++) {
                double *Ai = A + (size_t)i * k;
                for (int32_t j = i; j < k; j++) Ai[j] = Ai[j] + dy[i] * dy[j];
                g[i] = g[i] + dy[i] * e;
            }
        }
        const double ln = se == ETS_ADD ? a * (yt - st) + (1.0 - a) * lp
                          : se == ETS_MUL ? a * (yt / st) + (1.0 - a) * lp
                                          : a * yt + (1.0 - a) * lp;
        if (tr) b = be * (ln - l) + (1.0 - be) * (phi * b);
        if (se == ETS_ADD) s[r] = ga * (yt - lp) + (1.0 - ga) * st;
        else if (se == ETS_MUL) s[r] = ga * (yt / lp) + (1.0 - ga) * st;
        l = ln;
        if (!finite(sse)) return INFINITY;
    }
    if (last) {
        last[0] = l;
        last[1] = tr ? b : NAN;
        for (int32_t j = 0; se && j < m; j++) last[2 + j] = s[(int32_t)((w->n + j) % m)];
    }
    return sse;
}

/* Solve A d = g (A symmetric, its upper triangle) by LDL^T in index order,
 * no square root. A pivot that is not above 1e-12 of its diagonal entry
 * drops its state (d = 0 there): the stated rank rule, for states the data
 * cannot tell apart. */
static void ets_solve(ets_work *w, const double *A, const double *g, double *d) {
    const int32_t k = w->k;
    double *L = w->L, *D = w->D;
    int32_t *drop = w->drop;
    for (int32_t j = 0; j < k; j++) {
        double v = A[(size_t)j * k + j];
        for (int32_t p = 0; p < j; p++) v = v - L[(size_t)j * k + p] * L[(size_t)j * k + p] * D[p];
        drop[j] = !(A[(size_t)j * k + j] > 0.0) || !(v > 1e-12 * A[(size_t)j * k + j]);
        D[j] = drop[j] ? 0.0 : v;
        for (int32_t i = j + 1; i < k; i++) {
            double u = A[(size_t)j * k + i];
            for (int32_t p = 0; p < j; p++) u = u - L[(size_t)i * k + p] * L[(size_t)j * k + p] * D[p];
            L[(size_t)i * k + j] = drop[j] ? 0.0 : u / v;
        }
    }
    for (int32_t j = 0; j < k; j++) {
        double z = g[j];
        for (int32_t p = 0; p < j; p++) z = z - L[(size_t)j * k + p] * d[p];
        d[j] = drop[j] ? 0.0 : z;
    }
    for (int32_t j = 0; j < k; j++) d[j] = drop[j] ? 0.0 : d[j] / D[j];
    for (int32_t j = k - 1; j >= 0; j--) {
        double z = d[j];
        for (int32_t i = j + 1; i < k; i++) z = z - L[(size_t)i * k + j] * d[i];
        d[j] = drop[j] ? 0.0 : z;
    }
}

/* The SSE at the smoothing parameters in w->par, minimized over the initial
 * states by Gauss-Newton from the heuristic start; the states end in w->x.
 * A step that does not lower the SSE is halved; the search stops when a step
 * lowers it by at most 1e-12 of itself, after w->gn_max steps, or, without
 * a multiplicative season, after the first full step (the least-squares
 * solution). A pure function of w->par and w->gn_max. */
static double ets_inner(ets_work *w) {
    const int32_t k = w->k;
    memcpy(w->x, w->start, sizeof(double) * (size_t)k);
    w->nfev++;
    double f = ets_pass(w, w->x, 1, w->A, w->g, NULL, NULL);
    if (!finite(f)) return INFINITY;
    for (int32_t it = 0; it < w->gn_max; it++) {
        ets_solve(w, w->A, w->g, w->delta);
        double step = 1.0, fn = INFINITY;
        int ok = 0, halved = 0;
        for (; halved < ETS_HALVINGS; halved++, step = step * 0.5) {
            for (int32_t j = 0; j < k; j++) w->xn[j] = w->x[j] + step * w->delta[j];
            fn = ets_pass(w, w->xn, 1, w->An, w->gn, NULL, NULL);
            if ((ok = fn <= f)) break;
        }
        if (!ok) break;
        const double dec = f - fn;
        double *t;
        t = w->x, w->x = w->xn, w->xn = t;
        t = w->A, w->A = w->An, w->An = t;
        t = w->g, w->g = w->gn, w->gn = t;
        f = fn;
        /* additive models: the fitted values are affine in the states, so the
         * first full step is the least-squares solution; a second would only
         * move rounding */
        if (w->sp->seasonal != ETS_MUL && halved == 0) break;
        if (!(dec > ETS_GN_TOL * f)) break;
    }
    return f;
}

static void ets_bounds(int32_t idx, double *lo, double *hi) {
    *lo = idx == 3 ? ETS_PHI_LO : 0.0;
    *hi = idx == 3 ? ETS_PHI_HI : 1.0;
}

/* u folded into the bounds [lo, hi] by reflection at each bound (a
 * triangular wave of period 2 (hi - lo)), u itself inside them. The simplex
 * moves u freely, so vertices beyond a bound are not squashed onto it: a
 * simplex whose vertices are clamped to one face loses a dimension and can
 * never leave that face (measured: a multiplicative season's gamma stuck at
 * 0 with a lower SSE at 0.002). Exact operations and a truncation only. */
static double ets_fold(double u, double lo, double hi) {
    if (u >= lo && u <= hi) return u;
    const double w = hi - lo, p = 2.0 * w;
    double r = u - lo;
    double q = r / p;
    if (!(q > -4.0e15 && q < 4.0e15)) return lo; /* no finite fold: far outside, or not a number */
    double fl = (double)(int64_t)q;
    if (fl > q) fl = fl - 1.0; /* floor */
    r = r - fl * p;
    if (r < 0.0) r = 0.0;
    if (r > p) r = p;
    const double x = r <= w ? lo + r : hi - (r - w);
    return x < lo ? lo : x > hi ? hi : x;
}

/* The objective at u (the free smoothing parameters, in index order, before
 * folding into their bounds). */
static double ets_objective(ets_work *w, const double *u) {
    for (int32_t i = 0; i < w->nfree; i++) {
        double lo, hi;
        ets_bounds(w->free_idx[i], &lo, &hi);
        w->par[w->free_idx[i]] = ets_fold(u[i], lo, hi);
    }
    return ets_inner(w);
}

static void ets_clamp(const ets_work *w, double *x) {
    for (int32_t i = 0; i < w->nfree; i++) {
        double lo, hi;
        ets_bounds(w->free_idx[i], &lo, &hi);
        x[i] = ets_fold(x[i], lo, hi);
    }
}

/* One bounded Nelder-Mead run from x0 (inside the bounds) with the given
 * first step, over unbounded coordinates folded into the bounds (ets_fold):
 * reflection 1, expansion 2, contractions 1/2, shrink 1/2; vertices kept ordered by SSE,
 * ties in their previous order). x0 gets the best vertex, the return value its
 * SSE; *conv is 1 when the simplex met both tolerances. Each iteration appends
 * the best SSE to the fit's trace. */
static double ets_nm(ets_work *w, ets_fit *f, double *x0, double step, int32_t *conv) {
    enum { MAXD = SB_ETS_NPAR };
    const int32_t d = w->nfree;
    double v[MAXD + 1][MAXD], fv[MAXD + 1], c[MAXD], xr[MAXD], xe[MAXD], xc[MAXD];
    int32_t ord[MAXD + 1];
    for (int32_t i = 0; i <= d; i++) {
        memcpy(v[i], x0, sizeof(double) * (size_t)d);
        if (i > 0) {
            double lo, hi;
            ets_bounds(w->free_idx[i - 1], &lo, &hi);
            v[i][i - 1] = x0[i - 1] + step <= hi ? x0[i - 1] + step : x0[i - 1] - step;
        }
        fv[i] = ets_objective(w, v[i]);
        ord[i] = i;
    }
    *conv = 0;
    for (int32_t it = 0; it < ETS_NM_ITER * d; it++) {
        for (int32_t i = 1; i <= d; i++) /* insertion sort: stable */
            for (int32_t j = i; j > 0 && fv[ord[j]] < fv[ord[j - 1]]; j--) {
                const int32_t t = ord[j];
                ord[j] = ord[j - 1], ord[j - 1] = t;
            }
        const double *best = v[ord[0]], fb = fv[ord[0]];
        f->trace[f->ntrace++] = fb;
        f->nit++;
        double xs = 0.0, fs = 0.0;
        for (int32_t i = 1; i <= d; i++) {
            const double df = fv[ord[i]] - fb;
            fs = df > fs || df != df ? df : fs;
            for (int32_t j = 0; j < d; j++) {
                const double dx = v[ord[i]][j] - best[j], ax = dx < 0.0 ? -dx : dx;
                xs = ax > xs ? ax : xs;
            }
        }
        if (xs <= ETS_NM_XTOL && fs <= ETS_NM_FTOL * fb) {
            *conv = 1;
            break;
        }
        const int32_t wi = ord[d];
        for (int32_t j = 0; j < d; j++) {
            double sum = 0.0;
            for (int32_t i = 0; i < d; i++) sum = sum + v[ord[i]][j];
            c[j] = sum / (double)d;
        }
        for (int32_t j = 0; j < d; j++) xr[j] = c[j] + (c[j] - v[wi][j]);
        const double fr = ets_objective(w, xr);
        int shrink = 0;
        if (fr < fb) {
            for (int32_t j = 0; j < d; j++) xe[j] = c[j] + 2.0 * (c[j] - v[wi][j]);
            const double fe = ets_objective(w, xe);
            if (fe < fr) memcpy(v[wi], xe, sizeof(double) * (size_t)d), fv[wi] = fe;
            else memcpy(v[wi], xr, sizeof(double) * (size_t)d), fv[wi] = fr;
        } else if (fr < fv[ord[d - 1]]) {
            memcpy(v[wi], xr, sizeof(double) * (size_t)d), fv[wi] = fr;
        } else if (fr < fv[wi]) { /* outside contraction */
            for (int32_t j = 0; j < d; j++) xc[j] = c[j] + 0.5 * (xr[j] - c[j]);
            const double fc = ets_objective(w, xc);
            if (fc <= fr) memcpy(v[wi], xc, sizeof(double) * (size_t)d), fv[wi] = fc;
            else shrink = 1;
        } else { /* inside contraction */
            for (int32_t j = 0; j < d; j++) xc[j] = c[j] + 0.5 * (v[wi][j] - c[j]);
            const double fc = ets_objective(w, xc);
            if (fc < fv[wi]) memcpy(v[wi], xc, sizeof(double) * (size_t)d), fv[wi] = fc;
            else shrink = 1;
        }
        if (shrink) {
            const int32_t bi = ord[0];
            for (int32_t i = 0; i <= d; i++) {
                if (i == bi) continue;
                for (int32_t j = 0; j < d; j++) v[i][j] = v[bi][j] + 0.5 * (v[i][j] - v[bi][j]);
                fv[i] = ets_objective(w, v[i]);
            }
        }
    }
    int32_t bi = 0;
    for (int32_t i = 1; i <= d; i++)
        if (fv[i] < fv[bi] || (fv[i] == fv[bi] && i < bi)) bi = i;
    memcpy(x0, v[bi], sizeof(double) * (size_t)d);
    ets_clamp(w, x0); /* the folded point: where the SSE fv[bi] was computed */
    return fv[bi];
}

/* The grid the simplex starts from: every combination of these values of the
 * free parameters (alpha slowest); the ETS_STARTS best points (by SSE, ties in
 * grid order) each start a search, because the simplex, pressed against a
 * bound, can settle in a local minimum of the face (measured: Holt on the
 * sunspots, a multiplicative season on the taxi's card trips). */
static const double k_grid_alpha[] = {0.1, 0.3, 0.5, 0.7, 0.9};
static const double k_grid_other[] = {0.05, 0.2, 0.5};
static const double k_grid_phi[] = {0.85, 0.95, 0.99};

static void ets_grid(ets_work *w, double best[ETS_STARTS][SB_ETS_NPAR], int32_t *nbest) {
    const int32_t d = w->nfree;
    int32_t cnt[SB_ETS_NPAR], idx[SB_ETS_NPAR] = {0, 0, 0, 0};
    const double *vals[SB_ETS_NPAR];
    for (int32_t i = 0; i < d; i++) {
        const int32_t p = w->free_idx[i];
        vals[i] = p == 0 ? k_grid_alpha : p == 3 ? k_grid_phi : k_grid_other;
        cnt[i] = p == 0 ? 5 : 3;
    }
    double fb[ETS_STARTS], th[SB_ETS_NPAR];
    *nbest = 0;
    for (;;) {
        for (int32_t i = 0; i < d; i++) th[i] = vals[i][idx[i]];
        const double fv = ets_objective(w, th);
        /* keep the ETS_STARTS lowest, ties in grid order (a later point
         * enters only below an equal one's place) */
        int32_t at = *nbest;
        while (at > 0 && fv < fb[at - 1]) at--;
        if (at < ETS_STARTS) {
            const int32_t last = *nbest < ETS_STARTS ? *nbest : ETS_STARTS - 1;
            for (int32_t j = last; j > at; j--) fb[j] = fb[j - 1], memcpy(best[j], best[j - 1], sizeof best[j]);
            fb[at] = fv;
            memcpy(best[at], th, sizeof(double) * (size_t)d);
            if (*nbest < ETS_STARTS) (*nbest)++;
        }
        int32_t i = d - 1;
        while (i >= 0 && ++idx[i] == cnt[i]) idx[i--] = 0;
        if (i < 0) break;
    }
}

/* The heuristic start of the initial states (a fixed rule, the start of
 * every Gauss-Newton search): without a season the first value and the first
 * difference; with one the mean of the first period, the difference of the
 * first two periods' means over m, and the first period's deviations from its
 * mean (ratios to it: multiplicative), tied as the fit ties them. */
static void ets_start(ets_work *w) {
    const ets_spec *sp = w->sp;
    const double *y = w->y;
    const int32_t m = sp->m, tr = sp->trend ? 1 : 0;
    if (!sp->seasonal) {
        w->start[0] = y[0];
        if (tr) w->start[1] = y[1] - y[0];
        return;
    }
    double s1 = 0.0, s2 = 0.0;
    for (int32_t j = 0; j < m; j++) s1 = s1 + y[j], s2 = s2 + y[m + j];
    const double l0 = s1 / (double)m;
    w->start[0] = l0;
    if (tr) w->start[1] = (s2 / (double)m - l0) / (double)m;
    for (int32_t j = 0; j < m - 1; j++)
        w->start[1 + tr + j] = sp->seasonal == ETS_MUL ? y[j] / l0 : y[j] - l0;
    /* tie: the deviations of the first period sum to 0 (their ratios to m)
     * up to rounding; the last season takes what is left, as ets_spread does */
}

/* Fit one series into f; every buffer of f allocated here. */
static sb_status ets_fit_one(const ets_spec *sp, const double *y, int64_t n, ets_fit *f) {
    const int32_t m = sp->m, tr = sp->trend ? 1 : 0;
    const int32_t k = 1 + tr + (sp->seasonal ? m - 1 : 0);
    ets_work w;
    memset(&w, 0, sizeof w);
    w.sp = sp, w.y = y, w.n = n, w.k = k, w.gn_max = ETS_GN_SEARCH;
    const int32_t has[SB_ETS_NPAR] = {1, tr, sp->seasonal ? 1 : 0, sp->damped};
    for (int32_t i = 0; i < SB_ETS_NPAR; i++) {
        w.par[i] = has[i] ? sp->given[i] : NAN;
        if (has[i] && sp->given[i] != sp->given[i]) w.free_idx[w.nfree++] = i;
    }
    const size_t kk = (size_t)k * (size_t)k;
    const size_t nd = 10 * (size_t)k + 3 * kk + (size_t)m + (size_t)m * (size_t)k;
    double *buf = sb_calloc(nd, sizeof(double));
    w.drop = sb_calloc((size_t)k, sizeof(int32_t));
    f->n = n;
    f->init = sb_calloc((size_t)(2 + m), sizeof(double)); /* zeroed: a period of 1 leaves slot 2 unused */
    f->last = sb_calloc((size_t)(2 + m), sizeof(double));
    f->fitted = sb_malloc(sizeof(double) * (size_t)n);
    f->resid = sb_malloc(sizeof(double) * (size_t)n);
    f->trace = sb_malloc(sizeof(double) * (size_t)((ETS_STARTS + 1) * ETS_NM_ITER * SB_ETS_NPAR + 2));
    if (!buf || !w.drop || !f->init || !f->last || !f->fitted || !f->resid || !f->trace) {
        sb_free(buf);
        sb_free(w.drop);
        return SB_ERR_OUT_OF_MEMORY;
    }
    double *p = buf;
    double **vec[10] = {&w.start, &w.x, &w.xn, &w.delta, &w.g, &w.gn, &w.D, &w.dl, &w.db, &w.dy};
    for (int i = 0; i < 10; i++) *vec[i] = p, p += k;
    w.A = p, p += kk;
    w.An = p, p += kk;
    w.L = p, p += kk;
    w.s = p, p += m;
    w.ds = p;
    int constant = 1;
    for (int64_t t = 1; t < n && constant; t++) constant = y[t] == y[0];
    f->converged = 1;
    if (constant) {
        /* The stated rule: a constant series c is fitted exactly (SSE 0)
         * without the search: estimated smoothing parameters 0 (the damping
         * its upper bound), level c, trend 0, seasons neutral. */
        for (int32_t i = 0; i < w.nfree; i++) w.par[w.free_idx[i]] = w.free_idx[i] == 3 ? ETS_PHI_HI : 0.0;
        w.x[0] = y[0];
        if (tr) w.x[1] = 0.0;
        for (int32_t j = 0; j < m - 1 && sp->seasonal; j++) w.x[1 + tr + j] = sp->seasonal == ETS_MUL ? 1.0 : 0.0;
    } else {
        ets_start(&w);
        if (w.nfree == 0) {
            w.gn_max = ETS_GN_FINAL;
            ets_inner(&w);
        } else {
            double starts[ETS_STARTS][SB_ETS_NPAR], th[SB_ETS_NPAR], fbest = INFINITY;
            int32_t ns = 0;
            ets_grid(&w, starts, &ns);
            /* a run from each start (step 0.1); the lowest end, ties to the
             * earlier start, runs again with a fresh simplex (step 0.05) */
            for (int32_t i = 0; i < ns; i++) {
                int32_t c1;
                const double fv = ets_nm(&w, f, starts[i], 0.1, &c1);
                if (i == 0 || fv < fbest) {
                    fbest = fv;
                    memcpy(th, starts[i], sizeof th);
                }
            }
            int32_t c2;
            ets_nm(&w, f, th, 0.05, &c2);
            f->converged = c2;
            w.gn_max = ETS_GN_FINAL;
            ets_objective(&w, th); /* the states of the best point, into w.x, solved further */
        }
    }
    f->nfev = w.nfev;
    for (int32_t i = 0; i < SB_ETS_NPAR; i++) f->par[i] = w.par[i];
    f->sse = ets_pass(&w, w.x, 0, NULL, NULL, f->fitted, f->last);
    for (int64_t t = 0; t < n; t++) f->resid[t] = y[t] - f->fitted[t];
    double l0, b0;
    ets_spread(&w, w.x, &l0, &b0, w.s);
    f->init[0] = l0;
    f->init[1] = tr ? b0 : NAN;
    for (int32_t j = 0; j < m && sp->seasonal; j++) f->init[2 + j] = w.s[j];
    /* statsmodels' count: the model's smoothing parameters (given ones too:
     * measured, a given smoothing_level still counts), the level, the trend
     * and m - 1 seasons (the m-th is tied) */
    f->k = has[0] + has[1] + has[2] + has[3] + k;
    const double nn = (double)n, kd = (double)f->k;
    const double base = nn * ets_log(f->sse / nn);
    f->aic = base + 2.0 * kd;
    f->aicc = n - f->k - 3 > 0 ? f->aic + (2.0 * (kd + 2.0) * (kd + 3.0)) / (double)(n - f->k - 3) : INFINITY;
    f->bic = base + kd * ets_log(nn);
    sb_free(buf);
    sb_free(w.drop);
    return SB_OK;
}

/* The fewest values a series needs: two full periods with a season (the
 * heuristic start reads them), else one more than the states and
 * parameters estimated, and never fewer than 2. */
static int64_t ets_min_length(const ets_spec *sp) {
    const int32_t has[SB_ETS_NPAR] = {1, sp->trend ? 1 : 0, sp->seasonal ? 1 : 0, sp->damped};
    int64_t est = 1 + (sp->trend ? 1 : 0);
    for (int32_t i = 0; i < SB_ETS_NPAR; i++) est += has[i] && sp->given[i] != sp->given[i];
    int64_t need = est + 1 > 2 ? est + 1 : 2;
    if (sp->seasonal && 2 * (int64_t)sp->m > need) need = 2 * (int64_t)sp->m;
    return need;
}

sb_status sb_ets_check(const ets_spec *sp, const double *y, const int64_t *offsets, int64_t nseries) {
    if (nseries < 1) return sb_fail(SB_ERR_INVALID_ARGUMENT, "exponential smoothing: no series (nseries %lld)", (long long)nseries);
    if (offsets[0] != 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "exponential smoothing: offsets[0] must be 0 (it is %lld)",
                       (long long)offsets[0]);
    const int64_t need = ets_min_length(sp);
    for (int64_t i = 0; i < nseries; i++) {
        const int64_t a = offsets[i], b = offsets[i + 1], n = b - a;
        if (b < a)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "exponential smoothing: offsets decrease at series %lld", (long long)i);
        if (n > INT32_MAX) return sb_fail(SB_ERR_LIMIT, "series %lld: %lld values, above 2^31 - 1", (long long)i, (long long)n);
        int64_t missing = 0, first = -1;
        for (int64_t t = 0; t < n; t++)
            if (!finite(y[a + t])) {
                missing++;
                if (first < 0) first = t;
            }
        if (n > 0 && missing == n)
            return sb_fail(SB_ERR_INVALID_INPUT, "series %lld: every value is missing (NaN or infinite)", (long long)i);
        if (missing)
            return sb_fail(SB_ERR_INVALID_INPUT,
                           "series %lld: value %lld is %s; missing values are refused (docs/timeseries.md)",
                           (long long)i, (long long)first, y[a + first] != y[a + first] ? "NaN" : "infinite");
        if (n < need)
            return sb_fail(SB_ERR_INVALID_INPUT, "series %lld has %lld values; this model needs at least %lld%s", (long long)i,
                           (long long)n, (long long)need, sp->seasonal ? " (two full seasonal periods)" : "");
        if (sp->seasonal == ETS_MUL)
            for (int64_t t = 0; t < n; t++)
                if (!(y[a + t] > 0.0))
                    return sb_fail(SB_ERR_INVALID_INPUT,
                                   "series %lld: value %lld is %g; multiplicative seasonality needs positive data",
                                   (long long)i, (long long)t, y[a + t]);
    }
    return SB_OK;
}

typedef struct ets_job {
    const ets_spec *sp;
    const double *y;
    const int64_t *offsets;
    ets_fit *fits;
    sb_status *st;
} ets_job;

static void ets_task(void *ctx, int64_t i) {
    ets_job *j = ctx;
    j->st[i] = ets_fit_one(j->sp, j->y + j->offsets[i], j->offsets[i + 1] - j->offsets[i], &j->fits[i]);
}

void sb_ets_release(sb_ets *e) {
    if (!e) return;
    for (int64_t i = 0; e->fits && i < e->nseries; i++) {
        sb_free(e->fits[i].init);
        sb_free(e->fits[i].last);
        sb_free(e->fits[i].fitted);
        sb_free(e->fits[i].resid);
        sb_free(e->fits[i].trace);
    }
    sb_free(e->fits);
    sb_free(e);
}

/* The batch's stages, series by series in batch order. */
static sb_status ets_record(const sb_ets *e, sb_card *card, const char *prefix) {
    const int64_t ns = e->nseries, m = e->spec.m;
    int64_t total = 0, ntr = 0;
    for (int64_t i = 0; i < ns; i++) total += e->fits[i].n, ntr += e->fits[i].ntrace;
    const int64_t cap = total > ns * (6 + 2 * m) ? total : ns * (6 + 2 * m);
    uint64_t *u = sb_malloc(sizeof(uint64_t) * (size_t)(cap > ntr ? cap : ntr) + 8);
    if (!u) return sb_fail(SB_ERR_OUT_OF_MEMORY, "exponential smoothing: out of memory for the card");
    char tag[64];
    sb_status st = SB_OK;
    int64_t c = 0;
    for (int64_t i = 0; i < ns; i++) {
        for (int32_t p = 0; p < SB_ETS_NPAR; p++) u[c++] = canon(e->fits[i].par[p]);
        for (int64_t j = 0; j < 2 + (e->spec.seasonal ? m : 0); j++) u[c++] = canon(e->fits[i].init[j]);
    }
    snprintf(tag, sizeof tag, "%s.params", prefix);
    st = sb_card_record(card, tag, SB_DTYPE_U64, u, (uint64_t)c);
    c = 0;
    for (int64_t i = 0; i < ns; i++)
        for (int64_t j = 0; j < 2 + (e->spec.seasonal ? m : 0); j++) u[c++] = canon(e->fits[i].last[j]);
    snprintf(tag, sizeof tag, "%s.states", prefix);
    if (st == SB_OK) st = sb_card_record(card, tag, SB_DTYPE_U64, u, (uint64_t)c);
    c = 0;
    for (int64_t i = 0; i < ns; i++) {
        u[c++] = canon(e->fits[i].sse);
        u[c++] = canon(e->fits[i].aic);
        u[c++] = canon(e->fits[i].aicc);
        u[c++] = canon(e->fits[i].bic);
    }
    snprintf(tag, sizeof tag, "%s.sse", prefix);
    if (st == SB_OK) st = sb_card_record(card, tag, SB_DTYPE_U64, u, (uint64_t)c);
    c = 0;
    for (int64_t i = 0; i < ns; i++)
        for (int32_t t = 0; t < e->fits[i].ntrace; t++) u[c++] = canon(e->fits[i].trace[t]);
    snprintf(tag, sizeof tag, "%s.trace", prefix);
    if (st == SB_OK) st = sb_card_record(card, tag, SB_DTYPE_U64, u, (uint64_t)c);
    int64_t *cn = (int64_t *)u;
    c = 0;
    for (int64_t i = 0; i < ns; i++) {
        cn[c++] = e->fits[i].nfev;
        cn[c++] = e->fits[i].nit;
        cn[c++] = e->fits[i].converged;
        cn[c++] = e->fits[i].k;
    }
    snprintf(tag, sizeof tag, "%s.counts", prefix);
    if (st == SB_OK) st = sb_card_record(card, tag, SB_DTYPE_I64, cn, (uint64_t)c);
    c = 0;
    for (int64_t i = 0; i < ns; i++)
        for (int64_t t = 0; t < e->fits[i].n; t++) u[c++] = canon(e->fits[i].fitted[t]);
    snprintf(tag, sizeof tag, "%s.fitted", prefix);
    if (st == SB_OK) st = sb_card_record(card, tag, SB_DTYPE_U64, u, (uint64_t)c);
    sb_free(u);
    return st;
}

sb_status sb_ets_fit_spec(const ets_spec *sp, const double *y, const int64_t *offsets, int64_t nseries,
                          sb_card *card, const char *prefix, sb_ets **out) {
    *out = NULL;
    sb_status st = sb_ets_check(sp, y, offsets, nseries);
    if (st != SB_OK) return st;
    sb_ets *e = sb_calloc(1, sizeof *e);
    sb_status *sts = sb_calloc((size_t)nseries, sizeof(sb_status));
    if (e) e->fits = sb_calloc((size_t)nseries, sizeof(ets_fit));
    if (!e || !sts || !e->fits) {
        sb_free(sts);
        sb_ets_release(e);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "exponential smoothing: out of memory for %lld series", (long long)nseries);
    }
    e->spec = *sp;
    e->nseries = nseries;
    ets_job job = {sp, y, offsets, e->fits, sts};
    sb_parallel_for(nseries, ets_task, &job);
    for (int64_t i = 0; i < nseries && st == SB_OK; i++)
        if (sts[i] != SB_OK)
            st = sb_fail(sts[i], "exponential smoothing: out of memory fitting series %lld", (long long)i);
    sb_free(sts);
    if (st == SB_OK && card) st = ets_record(e, card, prefix);
    if (st != SB_OK) {
        sb_ets_release(e);
        return st;
    }
    *out = e;
    return SB_OK;
}

void sb_ets_forecast_fit(const ets_spec *sp, const ets_fit *f, int32_t h, double *out) {
    const double l = f->last[0], b = sp->trend ? f->last[1] : 0.0, phi = sp->damped ? f->par[3] : 1.0;
    double pw = 1.0, damp = 0.0; /* phi + phi^2 + ... + phi^j, added in order */
    for (int32_t j = 1; j <= h; j++) {
        double lev = l;
        if (sp->trend) {
            if (sp->damped) pw = pw * phi, damp = damp + pw;
            lev = l + (sp->damped ? damp : (double)j) * b;
        }
        /* the season of the same phase in the last observed period */
        const double s = sp->seasonal ? f->last[2 + (j - 1) % sp->m] : 0.0;
        out[j - 1] = sp->seasonal == ETS_ADD ? lev + s : sp->seasonal == ETS_MUL ? lev * s : lev;
    }
}

static void put32(uint8_t **p, uint32_t v) {
    for (int i = 0; i < 4; i++) *(*p)++ = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t **p, uint64_t v) {
    for (int i = 0; i < 8; i++) *(*p)++ = (uint8_t)(v >> (8 * i));
}

void sb_ets_fit_digest(const ets_spec *sp, const ets_fit *f, uint8_t out[32]) {
    /* "ETS1", the spec, n, the parameters, initial and final states, the
     * four criteria and the fitted values, little-endian; the count k and
     * the optimizer's counts are not the model's and are left out */
    sb_sha256_ctx c;
    uint8_t b[64], *p = b;
    sb_sha256_init(&c);
    sb_sha256_update(&c, "ETS1", 4);
    put32(&p, (uint32_t)sp->trend), put32(&p, (uint32_t)sp->damped), put32(&p, (uint32_t)sp->seasonal);
    put32(&p, (uint32_t)sp->m), put64(&p, (uint64_t)f->n);
    sb_sha256_update(&c, b, (size_t)(p - b));
    const int32_t ns = 2 + (sp->seasonal ? sp->m : 0);
    for (int32_t i = 0; i < SB_ETS_NPAR + 2 * ns + 4; i++) {
        const double v = i < SB_ETS_NPAR ? f->par[i]
                         : i < SB_ETS_NPAR + ns ? f->init[i - SB_ETS_NPAR]
                         : i < SB_ETS_NPAR + 2 * ns ? f->last[i - SB_ETS_NPAR - ns]
                         : i == SB_ETS_NPAR + 2 * ns ? f->sse
                         : i == SB_ETS_NPAR + 2 * ns + 1 ? f->aic
                         : i == SB_ETS_NPAR + 2 * ns + 2 ? f->aicc
                                                         : f->bic;
        p = b, put64(&p, canon(v));
        sb_sha256_update(&c, b, 8);
    }
    for (int64_t t = 0; t < f->n; t++) p = b, put64(&p, canon(f->fitted[t])), sb_sha256_update(&c, b, 8);
    sb_sha256_final(&c, out);
}
