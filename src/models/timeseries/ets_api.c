/* ets_api.c: exponential smoothing's public calls (include/samebits.h,
 * docs/timeseries.md): a batch fit, its results series by series, forecasts
 * and digests. */
#include "ets.h"
#include "../model.h"
#include <string.h>

sb_status sb_ets_fit(const sb_params *params, const double *y, const int64_t *offsets, int64_t nseries,
                     sb_card *card, sb_ets **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_ets_fit: NULL out");
    *out = NULL;
    if (!y || !offsets) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_ets_fit: NULL series or offsets");
    sb_status st = sb_threads_ready();
    if (st != SB_OK) return st;
    ets_spec spec;
    if ((st = sb_ets_spec_parse(params, &spec)) != SB_OK) return st;
    return sb_ets_fit_spec(&spec, y, offsets, nseries, card, "ets", out);
}

sb_status sb_ets_nseries(const sb_ets *e, int64_t *nseries) {
    sb_clear_error();
    if (!e || !nseries) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_ets_nseries: NULL argument");
    *nseries = e->nseries;
    return SB_OK;
}

/* The series' fit, or the named error for an index outside the batch. */
static sb_status series_of(const sb_ets *e, int64_t series, const char *who, const ets_fit **f) {
    if (!e) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: NULL model", who);
    if (series < 0 || series >= e->nseries)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: series %lld is outside the batch of %lld", who, (long long)series,
                       (long long)e->nseries);
    *f = &e->fits[series];
    return SB_OK;
}

sb_status sb_ets_get_array(const sb_ets *e, int64_t series, const char *name, double *out, size_t cap,
                           size_t *needed) {
    sb_clear_error();
    const ets_fit *f = NULL;
    sb_status st = series_of(e, series, "sb_ets_get_array", &f);
    if (st != SB_OK) return st;
    if (!name || !needed) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_ets_get_array: NULL argument");
    const int32_t m = e->spec.seasonal ? e->spec.m : 0;
    const double *src = NULL;
    size_t n = 1;
    if (!strcmp(name, "params")) src = f->par, n = SB_ETS_NPAR;
    else if (!strcmp(name, "initial_level")) src = f->init;
    else if (!strcmp(name, "initial_trend")) src = f->init + 1;
    else if (!strcmp(name, "initial_seasons")) src = f->init + 2, n = (size_t)m;
    else if (!strcmp(name, "final_states")) src = f->last, n = 2 + (size_t)m;
    else if (!strcmp(name, "fittedvalues")) src = f->fitted, n = (size_t)f->n;
    else if (!strcmp(name, "resid")) src = f->resid, n = (size_t)f->n;
    else if (!strcmp(name, "sse")) src = &f->sse;
    else if (!strcmp(name, "aic")) src = &f->aic;
    else if (!strcmp(name, "aicc")) src = &f->aicc;
    else if (!strcmp(name, "bic")) src = &f->bic;
    else if (!strcmp(name, "trace")) src = f->trace, n = (size_t)f->ntrace;
    else
        return sb_fail(SB_ERR_NOT_FOUND,
                       "exponential smoothing has no array '%s' (params, initial_level, initial_trend, "
                       "initial_seasons, final_states, fittedvalues, resid, sse, aic, aicc, bic, trace)", name);
    *needed = n;
    if (cap == 0) return SB_OK;
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_ets_get_array: NULL out with cap %zu", cap);
    if (cap < n) return sb_fail(SB_ERR_LIMIT, "sb_ets_get_array: '%s' needs %zu values, cap is %zu", name, n, cap);
    if (n) memcpy(out, src, sizeof(double) * n);
    return SB_OK;
}

sb_status sb_ets_get_int(const sb_ets *e, int64_t series, const char *name, int64_t *out) {
    sb_clear_error();
    const ets_fit *f = NULL;
    sb_status st = series_of(e, series, "sb_ets_get_int", &f);
    if (st != SB_OK) return st;
    if (!name || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_ets_get_int: NULL argument");
    if (!strcmp(name, "nobs")) *out = f->n;
    else if (!strcmp(name, "nfev")) *out = f->nfev;
    else if (!strcmp(name, "nit")) *out = f->nit;
    else if (!strcmp(name, "converged")) *out = f->converged;
    else if (!strcmp(name, "k")) *out = f->k;
    else if (!strcmp(name, "trend")) *out = e->spec.trend;
    else if (!strcmp(name, "damped_trend")) *out = e->spec.damped;
    else if (!strcmp(name, "seasonal")) *out = e->spec.seasonal;
    else if (!strcmp(name, "error")) *out = e->spec.error == ETS_MUL ? ETS_MUL : ETS_ADD;
    else if (!strcmp(name, "seasonal_periods")) *out = e->spec.seasonal ? e->spec.m : 0;
    else
        return sb_fail(SB_ERR_NOT_FOUND,
                       "exponential smoothing has no integer '%s' (nobs, nfev, nit, converged, k, trend, damped_trend, "
                       "seasonal, seasonal_periods, error)", name);
    return SB_OK;
}

sb_status sb_ets_forecast(const sb_ets *e, int64_t series, int32_t h, double *out) {
    sb_clear_error();
    const ets_fit *f = NULL;
    sb_status st = series_of(e, series, "sb_ets_forecast", &f);
    if (st != SB_OK) return st;
    if (h < 1 || h > 1000000) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_ets_forecast: h=%d must be in 1..1000000", (int)h);
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_ets_forecast: NULL out");
    sb_ets_forecast_fit(&e->spec, f, h, out);
    return SB_OK;
}

sb_status sb_ets_digest(const sb_ets *e, int64_t series, char out[65]) {
    sb_clear_error();
    const ets_fit *f = NULL;
    sb_status st = series_of(e, series, "sb_ets_digest", &f);
    if (st != SB_OK) return st;
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_ets_digest: NULL out");
    uint8_t d[32];
    sb_ets_fit_digest(&e->spec, f, d);
    sb_hex(d, 32, out);
    return SB_OK;
}

/* The batch as a model of family ets, borrowed for the writer (never freed:
 * the batch stays the caller's). */
static void as_model(const sb_ets *e, sb_model *m) {
    memset(m, 0, sizeof *m);
    m->family = SB_FAMILY_ETS;
    m->numeric_mode = SB_MODE_IDENTICAL;
    m->num_features = 1;
    m->num_class = 1;
    m->ets = (sb_ets *)e;
}

sb_status sb_ets_to_bytes(const sb_ets *e, uint8_t *buf, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!e) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_ets_to_bytes: NULL model");
    sb_model m;
    as_model(e, &m);
    return sb_model_to_bytes(&m, buf, cap, needed);
}

sb_status sb_ets_save(const sb_ets *e, const char *path) {
    sb_clear_error();
    if (!e) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_ets_save: NULL model");
    sb_model m;
    as_model(e, &m);
    return sb_model_save(&m, path);
}

sb_status sb_ets_model_digest(const sb_ets *e, char hex[65]) {
    sb_clear_error();
    if (!e) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_ets_model_digest: NULL model");
    sb_model m;
    as_model(e, &m);
    return sb_model_digest(&m, hex);
}

/* The batch a loaded model holds, taken from it; another family is refused
 * by name. */
static sb_status take(sb_status st, sb_model *m, sb_ets **out) {
    if (st != SB_OK) return st;
    if (m->family != SB_FAMILY_ETS) {
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "the model is %s, not exponential smoothing (ets)",
                     sb_family_name((sb_family)m->family));
        sb_model_free(m);
        return st;
    }
    *out = m->ets;
    m->ets = NULL;
    sb_model_free(m);
    return SB_OK;
}

sb_status sb_ets_from_bytes(const uint8_t *buf, size_t n, sb_ets **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_ets_from_bytes: NULL out");
    *out = NULL;
    sb_model *m = NULL;
    sb_status st = sb_model_from_bytes(buf, n, &m);
    return take(st, m, out);
}

sb_status sb_ets_load(const char *path, sb_ets **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_ets_load: NULL out");
    *out = NULL;
    sb_model *m = NULL;
    sb_status st = sb_model_load(path, &m);
    return take(st, m, out);
}

void sb_ets_free(sb_ets *e) { sb_ets_release(e); }
