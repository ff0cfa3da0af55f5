/*
 * ts_nm.c: the simplex search the time series families share (ts_common.h).
 * Every step is a fixed rule of the values seen so far, so a run is a pure
 * function of the objective, the start and the steps.
 */
#include "ts_common.h"

double ts_nelder_mead(ts_objective_fn f, void *ctx, int32_t d, double *x0, const double *step, int32_t maxit,
                      double xtol, double ftol, int32_t *nit, int32_t *nfev, int32_t *conv, double *trace) {
    double v[TS_NM_MAXD + 1][TS_NM_MAXD], fv[TS_NM_MAXD + 1], c[TS_NM_MAXD], xr[TS_NM_MAXD], xe[TS_NM_MAXD],
        xc[TS_NM_MAXD];
    int32_t ord[TS_NM_MAXD + 1];
    const size_t bytes = sizeof(double) * (size_t)d;
    for (int32_t i = 0; i <= d; i++) {
        memcpy(v[i], x0, bytes);
        if (i > 0) v[i][i - 1] = x0[i - 1] + step[i - 1];
        fv[i] = f(ctx, v[i]);
        (*nfev)++;
        ord[i] = i;
    }
    *conv = 0;
    int32_t it;
    for (it = 0; it < maxit; it++) {
        for (int32_t i = 1; i <= d; i++) /* insertion sort: stable */
            for (int32_t j = i; j > 0 && fv[ord[j]] < fv[ord[j - 1]]; j--) {
                const int32_t t = ord[j];
                ord[j] = ord[j - 1], ord[j - 1] = t;
            }
        const double *best = v[ord[0]], fb = fv[ord[0]];
        if (trace) trace[it] = fb;
        double xs = 0.0, fs = 0.0;
        for (int32_t i = 1; i <= d; i++) {
            const double df = fv[ord[i]] - fb;
            fs = df > fs || df != df ? df : fs;
            for (int32_t j = 0; j < d; j++) {
                const double dx = v[ord[i]][j] - best[j], ax = dx < 0.0 ? -dx : dx;
                xs = ax > xs ? ax : xs;
            }
        }
        const double afb = fb < 0.0 ? -fb : fb;
        if (xs <= xtol && fs <= ftol * (1.0 + afb)) {
            *conv = 1;
            it++;
            break;
        }
        const int32_t wi = ord[d];
        for (int32_t j = 0; j < d; j++) {
            double sum = 0.0;
            for (int32_t i = 0; i < d; i++) sum = sum + v[ord[i]][j];
            c[j] = sum / (double)d;
        }
        for (int32_t j = 0; j < d; j++) xr[j] = c[j] + (c[j] - v[wi][j]);
        const double fr = f(ctx, xr);
        (*nfev)++;
        int shrink = 0;
        if (fr < fb) {
            for (int32_t j = 0; j < d; j++) xe[j] = c[j] + 2.0 * (c[j] - v[wi][j]);
            const double fe = f(ctx, xe);
            (*nfev)++;
            if (fe < fr) memcpy(v[wi], xe, bytes), fv[wi] = fe;
            else memcpy(v[wi], xr, bytes), fv[wi] = fr;
        } else if (fr < fv[ord[d - 1]]) {
            memcpy(v[wi], xr, bytes), fv[wi] = fr;
        } else if (fr < fv[wi]) { /* outside contraction */
            for (int32_t j = 0; j < d; j++) xc[j] = c[j] + 0.5 * (xr[j] - c[j]);
            const double fc = f(ctx, xc);
            (*nfev)++;
            if (fc <= fr) memcpy(v[wi], xc, bytes), fv[wi] = fc;
            else shrink = 1;
        } else { /* inside contraction */
            for (int32_t j = 0; j < d; j++) xc[j] = c[j] + 0.5 * (v[wi][j] - c[j]);
            const double fc = f(ctx, xc);
            (*nfev)++;
            if (fc < fv[wi]) memcpy(v[wi], xc, bytes), fv[wi] = fc;
            else shrink = 1;
        }
        if (shrink) {
            const int32_t bi = ord[0];
            for (int32_t i = 0; i <= d; i++) {
                if (i == bi) continue;
                for (int32_t j = 0; j < d; j++) v[i][j] = v[bi][j] + 0.5 * (v[i][j] - v[bi][j]);
                fv[i] = f(ctx, v[i]);
                (*nfev)++;
            }
        }
    }
    *nit = it;
    int32_t bi = 0;
    for (int32_t i = 1; i <= d; i++)
        if (fv[i] < fv[bi]) bi = i;
    memcpy(x0, v[bi], bytes);
    return fv[bi];
}
