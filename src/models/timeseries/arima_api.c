/* arima_api.c: ARIMA's public calls (include/samebits.h, docs/timeseries.md):
 * a batch fit, its results series by series, forecasts with intervals and
 * digests. */
#include "arima.h"
#include "../model.h"
#include <stdio.h>
#include <string.h>

sb_status sb_arima_fit(const sb_params *params, const double *y, const int64_t *offsets, int64_t nseries,
                       sb_card *card, sb_arima **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_fit: NULL out");
    *out = NULL;
    if (!y || !offsets) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_fit: NULL series or offsets");
    sb_status st = sb_threads_ready();
    if (st != SB_OK) return st;
    arima_spec spec;
    if ((st = sb_arima_spec_parse(params, &spec)) != SB_OK) return st;
    return sb_arima_fit_spec(&spec, y, offsets, nseries, card, "arima", out);
}

sb_status sb_arima_nseries(const sb_arima *e, int64_t *nseries) {
    sb_clear_error();
    if (!e || !nseries) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_nseries: NULL argument");
    *nseries = e->nseries;
    return SB_OK;
}

static sb_status series_of(const sb_arima *e, int64_t series, const char *who, const arima_fit **f) {
    if (!e) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: NULL model", who);
    if (series < 0 || series >= e->nseries)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: series %lld is outside the batch of %lld", who, (long long)series,
                       (long long)e->nseries);
    *f = &e->fits[series];
    return SB_OK;
}

sb_status sb_arima_get_array(const sb_arima *e, int64_t series, const char *name, double *out, size_t cap,
                             size_t *needed) {
    sb_clear_error();
    const arima_fit *f = NULL;
    sb_status st = series_of(e, series, "sb_arima_get_array", &f);
    if (st != SB_OK) return st;
    if (!name || !needed) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_get_array: NULL argument");
    const double *src = NULL;
    size_t n = 1;
    if (!strcmp(name, "params")) src = f->par, n = (size_t)sb_arima_npar(&e->spec);
    else if (!strcmp(name, "llf")) src = &f->llf;
    else if (!strcmp(name, "aic")) src = &f->aic;
    else if (!strcmp(name, "aicc")) src = &f->aicc;
    else if (!strcmp(name, "bic")) src = &f->bic;
    else if (!strcmp(name, "fittedvalues")) src = f->fitted, n = (size_t)f->n;
    else if (!strcmp(name, "resid")) src = f->resid, n = (size_t)f->n;
    else if (!strcmp(name, "trace")) src = f->trace, n = (size_t)f->ntrace;
    else
        return sb_fail(SB_ERR_NOT_FOUND,
                       "arima has no array '%s' (params, llf, aic, aicc, bic, fittedvalues, resid, trace)", name);
    *needed = n;
    if (cap == 0) return SB_OK;
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_get_array: NULL out with cap %zu", cap);
    if (cap < n) return sb_fail(SB_ERR_LIMIT, "sb_arima_get_array: '%s' needs %zu values, cap is %zu", name, n, cap);
    if (n) memcpy(out, src, sizeof(double) * n);
    return SB_OK;
}

sb_status sb_arima_get_int(const sb_arima *e, int64_t series, const char *name, int64_t *out) {
    sb_clear_error();
    const arima_fit *f = NULL;
    sb_status st = series_of(e, series, "sb_arima_get_int", &f);
    if (st != SB_OK) return st;
    if (!name || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_get_int: NULL argument");
    const arima_spec *sp = &e->spec;
    if (!strcmp(name, "nobs")) *out = f->n;
    else if (!strcmp(name, "nobs_effective")) *out = f->nobs;
    else if (!strcmp(name, "nfev")) *out = f->nfev;
    else if (!strcmp(name, "nit")) *out = f->nit;
    else if (!strcmp(name, "converged")) *out = f->converged;
    else if (!strcmp(name, "k")) *out = sb_arima_npar(sp);
    else if (!strcmp(name, "p")) *out = sp->p;
    else if (!strcmp(name, "d")) *out = sp->d;
    else if (!strcmp(name, "q")) *out = sp->q;
    else if (!strcmp(name, "P")) *out = sp->P;
    else if (!strcmp(name, "D")) *out = sp->D;
    else if (!strcmp(name, "Q")) *out = sp->Q;
    else if (!strcmp(name, "s")) *out = sp->s;
    else if (!strcmp(name, "trend")) *out = sp->trend;
    else
        return sb_fail(SB_ERR_NOT_FOUND,
                       "arima has no integer '%s' (nobs, nobs_effective, nfev, nit, converged, k, p, d, q, P, D, Q, s, "
                       "trend)", name);
    return SB_OK;
}

sb_status sb_arima_param_name(const sb_arima *e, int32_t i, char *buf, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!e) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_param_name: NULL model");
    if (i < 0 || i >= sb_arima_npar(&e->spec))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_param_name: parameter %d of %d", (int)i,
                       (int)sb_arima_npar(&e->spec));
    char tmp[32];
    sb_arima_spec_param_name(&e->spec, i, tmp, sizeof tmp);
    const size_t n = strlen(tmp) + 1;
    if (needed) *needed = n;
    if (cap == 0) return SB_OK;
    if (!buf) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_param_name: NULL buf");
    if (cap < n) return sb_fail(SB_ERR_LIMIT, "sb_arima_param_name: %zu bytes needed, cap is %zu", n, cap);
    memcpy(buf, tmp, n);
    return SB_OK;
}

sb_status sb_arima_forecast(const sb_arima *e, int64_t series, int32_t h, double alpha, double *mean, double *se,
                            double *lower, double *upper) {
    sb_clear_error();
    const arima_fit *f = NULL;
    sb_status st = series_of(e, series, "sb_arima_forecast", &f);
    if (st != SB_OK) return st;
    if (h < 1 || h > 100000) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_forecast: h=%d must be in 1..100000", (int)h);
    if (!mean) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_forecast: NULL mean");
    if ((lower || upper) && !(alpha > 1e-12 && alpha < 1.0))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_forecast: alpha=%g must be in (1e-12, 1)", alpha);
    return sb_arima_forecast_fit(&e->spec, f, h, alpha, mean, se, lower, upper);
}

/* One series' forecasts of sb_arima_forecast_all, into its rows. */
typedef struct arima_fc_job {
    const sb_arima *e;
    int32_t h;
    double alpha, *mean, *se, *lower, *upper;
    sb_status *st;
} arima_fc_job;

static double *row_of(double *a, int64_t i, int32_t h) { return a ? a + (size_t)i * (size_t)h : NULL; }

static void arima_fc_task(void *ctx, int64_t i) {
    const arima_fc_job *j = ctx;
    j->st[i] = sb_arima_forecast_fit(&j->e->spec, &j->e->fits[i], j->h, j->alpha, row_of(j->mean, i, j->h),
                                     row_of(j->se, i, j->h), row_of(j->lower, i, j->h), row_of(j->upper, i, j->h));
}

sb_status sb_arima_forecast_all(const sb_arima *e, int32_t h, double alpha, double *mean, double *se, double *lower,
                                double *upper) {
    sb_clear_error();
    if (!e) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_forecast_all: NULL model");
    if (h < 1 || h > 100000)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_forecast_all: h=%d must be in 1..100000", (int)h);
    if (!mean) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_forecast_all: NULL mean");
    if ((lower || upper) && !(alpha > 1e-12 && alpha < 1.0))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_forecast_all: alpha=%g must be in (1e-12, 1)", alpha);
    sb_status st = sb_threads_ready();
    if (st != SB_OK) return st;
    /* the one refusal a series' forecast has, named before any work */
    const int32_t L = sb_arima_diff_lag(&e->spec);
    for (int64_t i = 0; i < e->nseries; i++)
        for (int32_t k = 0; k < L; k++)
            if (ak_missing(e->fits[i].ylast[k]))
                return sb_fail(SB_ERR_INVALID_INPUT,
                               "sb_arima_forecast_all: series %lld's value %d from its end is missing: the forecast "
                               "integrates the last d + s D = %d values back and has no value for it",
                               (long long)i, (int)(k + 1), (int)L);
    sb_status *sts = sb_calloc(e->nseries > 0 ? (size_t)e->nseries : 1, sizeof(sb_status));
    if (!sts) return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_arima_forecast_all: out of memory");
    arima_fc_job job = {e, h, alpha, mean, se, lower, upper, sts};
    sb_parallel_for(e->nseries, arima_fc_task, &job);
    for (int64_t i = 0; i < e->nseries && st == SB_OK; i++)
        if (sts[i] != SB_OK)
            st = sb_fail(sts[i], "sb_arima_forecast_all: series %lld's forecast failed (%s)", (long long)i,
                         sb_status_name(sts[i]));
    sb_free(sts);
    return st;
}

sb_status sb_arima_digest(const sb_arima *e, int64_t series, char out[65]) {
    sb_clear_error();
    const arima_fit *f = NULL;
    sb_status st = series_of(e, series, "sb_arima_digest", &f);
    if (st != SB_OK) return st;
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_digest: NULL out");
    uint8_t d[32];
    sb_arima_fit_digest(&e->spec, f, d);
    sb_hex(d, 32, out);
    return SB_OK;
}

/* The batch as a model of family arima, borrowed for the writer (never
 * freed: the batch stays the caller's). */
static void as_model(const sb_arima *e, sb_model *m) {
    memset(m, 0, sizeof *m);
    m->family = SB_FAMILY_ARIMA;
    m->numeric_mode = SB_MODE_IDENTICAL;
    m->num_features = 1;
    m->num_class = 1;
    m->arima = (sb_arima *)e;
}

sb_status sb_arima_to_bytes(const sb_arima *e, uint8_t *buf, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!e) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_to_bytes: NULL model");
    if (e->spec.css)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_to_bytes: a method=css fit has no model file (the ARIM payload records no "
                       "method; refit with method=ml, the default)");
    sb_model m;
    as_model(e, &m);
    return sb_model_to_bytes(&m, buf, cap, needed);
}

sb_status sb_arima_save(const sb_arima *e, const char *path) {
    sb_clear_error();
    if (!e) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_save: NULL model");
    if (e->spec.css)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_save: a method=css fit has no model file (the ARIM payload records no "
                       "method; refit with method=ml, the default)");
    sb_model m;
    as_model(e, &m);
    return sb_model_save(&m, path);
}

sb_status sb_arima_model_digest(const sb_arima *e, char hex[65]) {
    sb_clear_error();
    if (!e || !hex) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_model_digest: NULL argument");
    if (e->spec.css)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_model_digest: a method=css fit has no model file (the ARIM payload records no "
                       "method; refit with method=ml, the default)");
    sb_model m;
    as_model(e, &m);
    return sb_model_digest(&m, hex);
}

/* The batch a loaded model holds, taken from it; another family is refused
 * by name. */
static sb_status take(sb_status st, sb_model *m, sb_arima **out) {
    if (st != SB_OK) return st;
    if (m->family != SB_FAMILY_ARIMA) {
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "the model is %s, not arima", sb_family_name((sb_family)m->family));
        sb_model_free(m);
        return st;
    }
    *out = m->arima;
    m->arima = NULL;
    sb_model_free(m);
    return SB_OK;
}

sb_status sb_arima_from_bytes(const uint8_t *buf, size_t n, sb_arima **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_from_bytes: NULL out");
    *out = NULL;
    sb_model *m = NULL;
    sb_status st = sb_model_from_bytes(buf, n, &m);
    return take(st, m, out);
}

sb_status sb_arima_load(const char *path, sb_arima **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_arima_load: NULL out");
    *out = NULL;
    sb_model *m = NULL;
    sb_status st = sb_model_load(path, &m);
    return take(st, m, out);
}

void sb_arima_free(sb_arima *e) { sb_arima_release(e); }
