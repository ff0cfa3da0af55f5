/*
 * ets.c: exponential smoothing, fitted by least squares, one series a task
 * on the host or one work-item on a device (docs/timeseries.md).
 *
 * The model, the fit and its arithmetic are kernels/ets.h's, the one source
 * the host and the devices share: the host's tasks and the time-series
 * program's work-items (kernels/entry/ts_entry.h, driven by ets_device.c)
 * both call ets_fit_series, each on one series, so a series' result is a
 * function of that series and the parameters alone, whatever batch it is in,
 * wherever in it and wherever it runs. This file checks the batch, owns the
 * host's memory, records the card and writes the digests.
 */
#include "ets.h"
#include "ts_common.h"
#include "../../math/sb_math.h"
#include "../../device/device.h"
#include <stdlib.h>
#include <string.h>

/* A double's canonical bits and finiteness are the time series families'
 * shared pieces (ts_common.h). */
#define finite ts_finite
#define canon ts_canon

typedef void (*ets_fit_fn)(const ets_spec *, const double *, int64_t, double *, int32_t *, ets_out);

static void ets_fit_generic(const ets_spec *sp, const double *y, int64_t n, double *scr, int32_t *iscr, ets_out o) {
    ets_fit_series(sp, y, n, scr, iscr, 1, o);
}

static ets_fit_fn g_ets_fit; /* chosen once (a race writes the same value) */

static ets_fit_fn ets_fit_get(void) {
    ets_fit_fn f = __atomic_load_n(&g_ets_fit, __ATOMIC_ACQUIRE);
    if (f) return f;
    f = ets_fit_generic;
#ifdef SB_ETS_HAVE_AVX2
    const char *v = getenv("SAMEBITS_ETS_KERNEL");
    __builtin_cpu_init();
    if (!(v && !strcmp(v, "generic")) && __builtin_cpu_supports("avx2")) f = sb_ets_fit_series_avx2;
#endif
    __atomic_store_n(&g_ets_fit, f, __ATOMIC_RELEASE);
    return f;
}

const char *sb_ets_kernel(void) { return ets_fit_get() == ets_fit_generic ? "generic" : "avx2"; }

void sb_ets_kernel_reset(void) { __atomic_store_n(&g_ets_fit, (ets_fit_fn)0, __ATOMIC_RELEASE); }

/* Fit one series into f (the host's path): every buffer of f allocated
 * here, the fit itself kernels/ets.h's. */
static sb_status ets_fit_one(const ets_spec *sp, const double *y, int64_t n, ets_fit *f) {
    const int32_t m = sp->m, k = ets_nstates(sp);
    double *buf = sb_malloc(sizeof(double) * (size_t)ets_scratch_doubles(k, m));
    int32_t *drop = sb_malloc(sizeof(int32_t) * (size_t)k);
    f->n = n;
    f->init = sb_calloc((size_t)(2 + m), sizeof(double));
    f->last = sb_calloc((size_t)(2 + m), sizeof(double));
    f->fitted = sb_malloc(sizeof(double) * (size_t)n);
    f->resid = sb_malloc(sizeof(double) * (size_t)n);
    f->trace = sb_malloc(sizeof(double) * (size_t)ETS_TRACE_MAX);
    if (!buf || !drop || !f->init || !f->last || !f->fitted || !f->resid || !f->trace) {
        sb_free(buf);
        sb_free(drop);
        return SB_ERR_OUT_OF_MEMORY;
    }
    double crit[4];
    int32_t counts[ETS_NCOUNTS];
    const ets_out o = {f->par, f->init, f->last, f->fitted, f->resid, crit, f->trace, counts};
    ets_fit_get()(sp, y, n, buf, drop, o);
    sb_ets_fit_from(f, crit, counts);
    sb_free(buf);
    sb_free(drop);
    return SB_OK;
}

void sb_ets_fit_from(ets_fit *f, const double crit[4], const int32_t counts[ETS_NCOUNTS]) {
    f->sse = crit[0], f->aic = crit[1], f->aicc = crit[2], f->bic = crit[3];
    f->nfev = counts[0], f->nit = counts[1], f->converged = counts[2], f->k = counts[3], f->ntrace = counts[4];
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

int64_t sb_ets_min_length(const ets_spec *sp) { return ets_min_length(sp); }

double sb_ets_auto_criterion(const ets_fit *f) {
    const double np = (double)f->k + 1.0;
    const int64_t dof = f->n - (int64_t)f->k - 2;
    if (dof <= 0) return INFINITY;
    return f->aic + 2.0 + (2.0 * np * (np + 1.0)) / (double)dof;
}

int32_t sb_ets_auto_pick(const double *aicc, int32_t n) {
    int32_t best = -1;
    for (int32_t i = 0; i < n; i++) {
        if (aicc[i] != aicc[i]) continue;
#ifdef SB_SABOTAGE_ETS_AUTO_TIE
        /* Separating arm: a tie goes to the later candidate. */
        if (best < 0 || aicc[i] <= aicc[best]) best = i;
#else
        if (best < 0 || aicc[i] < aicc[best]) best = i;
#endif
    }
    return best;
}

sb_status sb_ets_check(const ets_spec *sp, const double *y, const int64_t *offsets, int64_t nseries) {
    sb_status st = ts_check_offsets("exponential smoothing", offsets, nseries);
    if (st != SB_OK) return st;
    const int64_t need = ets_min_length(sp);
    for (int64_t i = 0; i < nseries; i++) {
        const int64_t a = offsets[i], n = offsets[i + 1] - a;
        if ((st = ts_check_series("exponential smoothing", y, offsets, i)) != SB_OK) return st;
        if (n < need)
            return sb_fail(SB_ERR_INVALID_INPUT, "series %lld has %lld values; this model needs at least %lld%s", (long long)i,
                           (long long)n, (long long)need, sp->seasonal ? " (two full seasonal periods)" : "");
        if (sp->seasonal == ETS_MUL || sp->error == ETS_MUL)
            for (int64_t t = 0; t < n; t++)
                if (!(y[a + t] > 0.0))
                    return sb_fail(SB_ERR_INVALID_INPUT, "series %lld: value %lld is %g; multiplicative %s needs positive data",
                                   (long long)i, (long long)t, y[a + t],
                                   sp->seasonal == ETS_MUL ? "seasonality" : "errors");
    }
    return SB_OK;
}

static sb_status ets_fit_any(const void *sp, const double *y, int64_t n, void *f) {
    return ets_fit_one(sp, y, n, f);
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
    sb_status st = SB_OK;
    int64_t c = 0;
    for (int64_t i = 0; i < ns; i++) {
        for (int32_t p = 0; p < SB_ETS_NPAR; p++) u[c++] = canon(e->fits[i].par[p]);
        for (int64_t j = 0; j < 2 + (e->spec.seasonal ? m : 0); j++) u[c++] = canon(e->fits[i].init[j]);
    }
    st = ts_record_stage(st, card, prefix, "params", SB_DTYPE_U64, u, c);
    c = 0;
    for (int64_t i = 0; i < ns; i++)
        for (int64_t j = 0; j < 2 + (e->spec.seasonal ? m : 0); j++) u[c++] = canon(e->fits[i].last[j]);
    st = ts_record_stage(st, card, prefix, "states", SB_DTYPE_U64, u, c);
    c = 0;
    for (int64_t i = 0; i < ns; i++) {
        u[c++] = canon(e->fits[i].sse);
        u[c++] = canon(e->fits[i].aic);
        u[c++] = canon(e->fits[i].aicc);
        u[c++] = canon(e->fits[i].bic);
    }
    st = ts_record_stage(st, card, prefix, "sse", SB_DTYPE_U64, u, c);
    c = 0;
    for (int64_t i = 0; i < ns; i++)
        for (int32_t t = 0; t < e->fits[i].ntrace; t++) u[c++] = canon(e->fits[i].trace[t]);
    st = ts_record_stage(st, card, prefix, "trace", SB_DTYPE_U64, u, c);
    int64_t *cn = (int64_t *)u;
    c = 0;
    for (int64_t i = 0; i < ns; i++) {
        cn[c++] = e->fits[i].nfev;
        cn[c++] = e->fits[i].nit;
        cn[c++] = e->fits[i].converged;
        cn[c++] = e->fits[i].k;
    }
    st = ts_record_stage(st, card, prefix, "counts", SB_DTYPE_I64, cn, c);
    c = 0;
    for (int64_t i = 0; i < ns; i++)
        for (int64_t t = 0; t < e->fits[i].n; t++) u[c++] = canon(e->fits[i].fitted[t]);
    st = ts_record_stage(st, card, prefix, "fitted", SB_DTYPE_U64, u, c);
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
    if (sp->device == SB_DEVICE_CUDA || sp->device == SB_DEVICE_OPENCL) {
        st = sb_ets_fit_device(sp, y, offsets, nseries, e);
    } else {
        ts_fit_all(ets_fit_any, sp, y, offsets, nseries, e->fits, sizeof(ets_fit), sts);
        for (int64_t i = 0; i < nseries && st == SB_OK; i++)
            if (sts[i] != SB_OK)
                st = sb_fail(sts[i], "exponential smoothing: out of memory fitting series %lld", (long long)i);
    }
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

void sb_ets_fit_digest(const ets_spec *sp, const ets_fit *f, uint8_t out[32]) {
    /* "ETS1", the spec, n, the parameters, initial and final states, the
     * four criteria and the fitted values, little-endian; the count k and
     * the optimizer's counts are not the model's and are left out */
    sb_sha256_ctx c;
    uint8_t b[64], *p = b;
    sb_sha256_init(&c);
    /* multiplicative errors: "ETSM" (another model, the same layout) */
    sb_sha256_update(&c, sp->error == ETS_MUL ? "ETSM" : "ETS1", 4);
    ts_put32(&p, (uint32_t)sp->trend), ts_put32(&p, (uint32_t)sp->damped), ts_put32(&p, (uint32_t)sp->seasonal);
    ts_put32(&p, (uint32_t)sp->m), ts_put64(&p, (uint64_t)f->n);
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
        ts_digest_f64(&c, v);
    }
    for (int64_t t = 0; t < f->n; t++) ts_digest_f64(&c, f->fitted[t]);
    sb_sha256_final(&c, out);
}
