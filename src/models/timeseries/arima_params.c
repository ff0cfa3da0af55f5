/* arima_params.c: ARIMA's parameters (docs/timeseries.md, "ARIMA"), with
 * statsmodels' ARIMA names: order, seasonal_order, trend, and params to give
 * every parameter instead of estimating them. */
#include "arima.h"
#include "../../device/device.h"
#include "ts_common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is(const char *key, const char *name) { return !strcmp(key, name); }

/* n whole numbers separated by commas or colons, optionally in parentheses. */
static sb_status parse_ints(const char *key, const char *v, int32_t n, int32_t *out) {
    const char *s = v;
    while (*s == ' ' || *s == '(' || *s == '[') s++;
    for (int32_t i = 0; i < n; i++) {
        char *end;
        const long long x = strtoll(s, &end, 10);
        if (end == s || x < 0 || x > 100000)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s='%s' must be %d whole numbers >= 0 separated by commas or colons", key, v,
                           (int)n);
        out[i] = (int32_t)x;
        s = end;
        while (*s == ' ') s++;
        if (i + 1 < n) {
            if (*s != ',' && *s != ':')
                return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s='%s' must be %d whole numbers >= 0 separated by commas or colons",
                               key, v, (int)n);
            s++;
        }
    }
    while (*s == ' ' || *s == ')' || *s == ']') s++;
    if (*s) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s='%s' must be %d whole numbers >= 0 separated by commas or colons", key, v, (int)n);
    return SB_OK;
}

int sb_arima_spec_valid(const arima_spec *sp) {
    const int32_t ord[4] = {sp->p, sp->q, sp->P, sp->Q};
    for (int i = 0; i < 4; i++)
        if (ord[i] < 0 || ord[i] > SB_ARIMA_MAX_ORDER) return 0;
    if (sp->d < 0 || sp->D < 0 || sp->d > SB_ARIMA_MAX_DIFF || sp->D > SB_ARIMA_MAX_DIFF) return 0;
    if (sp->s < 0 || sp->s == 1 || sp->s > SB_ARIMA_MAX_PERIOD) return 0;
    if (sp->s == 0 ? (sp->P || sp->D || sp->Q) : !(sp->P || sp->D || sp->Q)) return 0;
    if (sp->trend != ARIMA_TREND_N && sp->trend != ARIMA_TREND_C) return 0;
    if (sp->trend == ARIMA_TREND_C && sp->d + sp->D > 0) return 0;
    if (sb_arima_state_dim(sp) > SB_ARIMA_MAX_STATE || sb_arima_npar(sp) - 1 > TS_NM_MAXD) return 0;
    if (sp->ngiven != 0 && sp->ngiven != sb_arima_npar(sp)) return 0;
    return sp->ngiven == 0 || sb_arima_params_valid(sp, sp->given);
}

sb_status sb_arima_spec_parse(const sb_params *params, arima_spec *sp) {
    memset(sp, 0, sizeof *sp);
    sb_numeric_mode mode;
    sb_status st = sb_params_resolve_mode(params, SB_FAMILY_ARIMA, &mode);
    if (st != SB_OK) return st;
    const char *key, *v, *given = NULL;
    int32_t o[3] = {0, 0, 0}, so[4] = {0, 0, 0, 0}, trend_given = 0;
    for (int64_t k = 0; params && sb_params_entry(params, k, &key, &v) == SB_OK && st == SB_OK; k++) {
        if (is(key, "order")) st = parse_ints(key, v, 3, o);
        else if (is(key, "seasonal_order")) st = parse_ints(key, v, 4, so);
        else if (is(key, "trend")) {
            trend_given = 1;
            if (is(v, "n") || is(v, "None") || !*v) sp->trend = ARIMA_TREND_N;
            else if (is(v, "c")) sp->trend = ARIMA_TREND_C;
            else if (is(v, "t") || is(v, "ct"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "trend='%s' is not built (n and c are; docs/timeseries.md)", v);
            else st = sb_fail(SB_ERR_INVALID_ARGUMENT, "trend='%s': n or c", v);
        } else if (is(key, "params")) given = v;
        else if (is(key, "method")) {
            if (is(v, "ml") || is(v, "ML")) sp->css = 0;
            else if (is(v, "css") || is(v, "CSS")) sp->css = 1;
            else st = sb_fail(SB_ERR_INVALID_ARGUMENT, "method='%s': ml (exact likelihood, the default) or css", v);
        }
        else if (is(key, "numeric_mode")) continue;
        else if (is(key, "model")) {
            if (strcmp(v, "arima")) st = sb_fail(SB_ERR_INVALID_ARGUMENT, "model='%s' is not arima", v);
        } else if (is(key, "device")) {
            /* cpu and cpu-batched: the host's tasks; cuda, opencl (and gpu,
             * the one present): the time-series program's ke_arima_fit */
            sb_device_kind dk;
            if ((st = sb_device_parse(v, &dk)) == SB_OK) sp->device = (int32_t)dk;
        } else st = sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown parameter '%s' for arima (docs/timeseries.md)", key);
    }
    if (st != SB_OK) return st;
    (void)trend_given;
    sp->p = o[0], sp->d = o[1], sp->q = o[2], sp->P = so[0], sp->D = so[1], sp->Q = so[2], sp->s = so[3];
    const int32_t ord[4] = {sp->p, sp->q, sp->P, sp->Q};
    for (int i = 0; i < 4; i++)
        if (ord[i] > SB_ARIMA_MAX_ORDER)
            return sb_fail(SB_ERR_LIMIT, "arima: an order of %d is above this library's limit of %d", (int)ord[i],
                           SB_ARIMA_MAX_ORDER);
    if (sp->d > SB_ARIMA_MAX_DIFF || sp->D > SB_ARIMA_MAX_DIFF)
        return sb_fail(SB_ERR_LIMIT, "arima: d=%d, D=%d: differencing above %d is not built", (int)sp->d, (int)sp->D,
                       SB_ARIMA_MAX_DIFF);
    if (sp->s == 1)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "arima: seasonal_order's period s=1 is not a season (0 or >= 2)");
    if (sp->s > SB_ARIMA_MAX_PERIOD)
        return sb_fail(SB_ERR_LIMIT, "arima: seasonal period %d is above this library's limit of %d", (int)sp->s,
                       SB_ARIMA_MAX_PERIOD);
    if (sp->s == 0 && (sp->P || sp->D || sp->Q))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "arima: seasonal_order has P, D or Q but no period s");
    if (sp->s && !sp->P && !sp->D && !sp->Q)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "arima: seasonal_order's period s=%d with P = D = Q = 0 would do nothing",
                       (int)sp->s);
    if (sp->trend == ARIMA_TREND_C && sp->d + sp->D > 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "arima: trend='c' with differencing (d + D > 0) is refused, as statsmodels' ARIMA refuses it: "
                       "the differenced const is a drift (trend='t', not built)");
    if (sb_arima_state_dim(sp) > SB_ARIMA_MAX_STATE)
        return sb_fail(SB_ERR_LIMIT, "arima: the state dimension max(p + sP, q + sQ + 1) = %d is above this library's "
                       "limit of %d", (int)sb_arima_state_dim(sp), SB_ARIMA_MAX_STATE);
    const int32_t np = sb_arima_npar(sp);
    if (np - 1 > TS_NM_MAXD)
        return sb_fail(SB_ERR_LIMIT, "arima: %d parameters to estimate is above this library's limit of %d", (int)(np - 1),
                       TS_NM_MAXD);
    if (given) {
        const char *s = given;
        while (*s == ' ' || *s == '(' || *s == '[') s++;
        for (int32_t i = 0; i < np; i++) {
            char *end;
            const double x = strtod(s, &end);
            if (end == s)
                return sb_fail(SB_ERR_INVALID_ARGUMENT,
                               "arima: params='%s' must be %d numbers (every parameter, statsmodels' order, sigma2 last)",
                               given, (int)np);
            sp->given[i] = x;
            s = end;
            while (*s == ' ') s++;
            if (i + 1 < np) {
                if (*s != ',' && *s != ':')
                    return sb_fail(SB_ERR_INVALID_ARGUMENT,
                                   "arima: params='%s' must be %d numbers (every parameter, statsmodels' order, sigma2 "
                                   "last)", given, (int)np);
                s++;
            }
        }
        while (*s == ' ' || *s == ')' || *s == ']') s++;
        if (*s)
            return sb_fail(SB_ERR_INVALID_ARGUMENT,
                           "arima: params='%s' must be %d numbers (every parameter, statsmodels' order, sigma2 last)",
                           given, (int)np);
        sp->ngiven = np;
        if (sp->css)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "arima: method=css with params= given: nothing is estimated, so the "
                           "method would do nothing");
        if ((st = sb_arima_check_given(sp)) != SB_OK) return st;
    }
    return SB_OK;
}
