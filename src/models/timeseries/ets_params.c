/* ets_params.c: exponential smoothing's parameters (docs/timeseries.md,
 * "Parameters"), with statsmodels' ExponentialSmoothing names. */
#include "ets.h"
#include "../../device/device.h"
#include <math.h> /* NAN only: no libm function is called */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is(const char *key, const char *name) { return !strcmp(key, name); }

static sb_status parse_bool(const char *key, const char *v, int32_t *out) {
    if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "True")) *out = 1;
    else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "False")) *out = 0;
    else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be true or false", key, v);
    return SB_OK;
}

/* none | add | mul under statsmodels' spellings; mul is refused where it is
 * not built (a trend), so that no one gets an additive trend under that name. */
static sb_status parse_component(const char *key, const char *v, int allow_mul, int32_t *out) {
    if (!strcmp(v, "none") || !strcmp(v, "None") || !*v) *out = ETS_NONE;
    else if (!strcmp(v, "add") || !strcmp(v, "additive")) *out = ETS_ADD;
    else if ((!strcmp(v, "mul") || !strcmp(v, "multiplicative")) && allow_mul) *out = ETS_MUL;
    else if (!strcmp(v, "mul") || !strcmp(v, "multiplicative"))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s='%s' is not built (none and add are; docs/timeseries.md)", key, v);
    else return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s='%s': none, add%s", key, v, allow_mul ? " or mul" : "");
    return SB_OK;
}

/* A given smoothing parameter: a finite number in [lo, hi]. */
static sb_status parse_given(const char *key, const char *v, double lo, double hi, double *out) {
    char *end;
    const double d = strtod(v, &end);
    if (end == v || *end || !(d >= lo && d <= hi))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s='%s' must be a number in [%g, %g]", key, v, lo, hi);
    *out = d;
    return SB_OK;
}

sb_status sb_ets_spec_parse(const sb_params *params, ets_spec *spec) {
    memset(spec, 0, sizeof *spec);
    spec->m = 1;
    for (int i = 0; i < SB_ETS_NPAR; i++) spec->given[i] = NAN;
    sb_numeric_mode mode;
    sb_status st = sb_params_resolve_mode(params, SB_FAMILY_ETS, &mode);
    if (st != SB_OK) return st;
    const char *key, *v;
    int32_t period_given = 0;
    /* first the model's shape, so that a parameter's meaning is known when it is read */
    for (int64_t k = 0; params && sb_params_entry(params, k, &key, &v) == SB_OK && st == SB_OK; k++) {
        if (is(key, "trend")) st = parse_component(key, v, 0, &spec->trend);
        else if (is(key, "seasonal")) st = parse_component(key, v, 1, &spec->seasonal);
        else if (is(key, "damped_trend") || is(key, "damped")) st = parse_bool(key, v, &spec->damped);
        else if (is(key, "error")) { /* statsmodels' ETSModel name: add (least squares) or mul (the likelihood) */
            st = parse_component(key, v, 1, &spec->error);
            if (st == SB_OK && spec->error == ETS_NONE)
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "error='%s': add or mul (a model has an error)", v);
            if (spec->error == ETS_ADD) spec->error = ETS_NONE; /* one spelling of additive errors: 0 */
        }
        else if (is(key, "seasonal_periods")) {
            char *end;
            const long long m = strtoll(v, &end, 10);
            if (end == v || *end || m < 2)
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "seasonal_periods='%s' must be a whole number >= 2", v);
            else if (m > SB_ETS_MAX_PERIOD)
                st = sb_fail(SB_ERR_LIMIT, "seasonal_periods=%lld is above this library's limit of %d", m,
                             SB_ETS_MAX_PERIOD);
            else spec->m = (int32_t)m, period_given = 1;
        }
    }
    if (st != SB_OK) return st;
    if (spec->damped && !spec->trend)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "damped_trend=true needs trend=add (there is no trend to damp)");
    if (spec->seasonal && !period_given)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "seasonal=%s needs seasonal_periods (a whole number >= 2)",
                       spec->seasonal == ETS_ADD ? "add" : "mul");
    if (!spec->seasonal && period_given)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "seasonal_periods is given without seasonal=add or mul: it would do nothing");
    for (int64_t k = 0; params && sb_params_entry(params, k, &key, &v) == SB_OK && st == SB_OK; k++) {
        if (is(key, "trend") || is(key, "seasonal") || is(key, "damped_trend") || is(key, "damped") || is(key, "error") ||
            is(key, "seasonal_periods") || is(key, "numeric_mode"))
            continue;
        if (is(key, "model") && strcmp(v, "ets"))
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "model='%s' is not exponential smoothing (ets)", v);
        else if (is(key, "smoothing_level")) st = parse_given(key, v, 0.0, 1.0, &spec->given[0]);
        else if (is(key, "smoothing_trend") && spec->trend) st = parse_given(key, v, 0.0, 1.0, &spec->given[1]);
        else if (is(key, "smoothing_seasonal") && spec->seasonal) st = parse_given(key, v, 0.0, 1.0, &spec->given[2]);
        else if (is(key, "damping_trend") && spec->damped) st = parse_given(key, v, 0.0, 1.0, &spec->given[3]);
        else if (is(key, "smoothing_trend") || is(key, "smoothing_seasonal") || is(key, "damping_trend"))
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "%s is given but the model has no %s: it would do nothing", key,
                         is(key, "smoothing_seasonal") ? "season" : is(key, "damping_trend") ? "damped trend" : "trend");
        else if (is(key, "initialization_method")) {
            if (strcmp(v, "estimated"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT,
                             "initialization_method='%s' is not built (estimated is; docs/timeseries.md)", v);
        } else if (is(key, "use_boxcox") || is(key, "remove_bias")) {
            int32_t b;
            if ((st = parse_bool(key, v, &b)) == SB_OK && b)
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "%s=true is not built (docs/timeseries.md)", key);
        } else if (is(key, "device")) {
            /* cpu and cpu-batched: the host's tasks; cuda, opencl (and gpu, the one
             * present): the time-series program, the same fit (kernels/ets.h) */
            sb_device_kind dk;
            if ((st = sb_device_parse(v, &dk)) == SB_OK) spec->device = (int32_t)dk;
        } else
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown parameter '%s' for exponential smoothing (docs/timeseries.md)",
                         key);
    }
    return st;
}
