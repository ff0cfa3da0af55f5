/*
 * arima_device.c: ARIMA on a GPU (device=cuda|opencl|gpu;
 * docs/timeseries.md, "Devices"): the time-series program's ke_arima_fit
 * (kernels/entry/ts_entry.h), one work-item a series, each running
 * kernels/arima.h's ak_fit_series, the fit the host's fit_one calls too
 * (ak_fit at stride 1). The host here only moves bytes:
 * the checked batch in chunks that fit the device, each chunk's values and
 * offsets up, every series' results down into its arima_fit. A chunk's
 * bounds decide no bit (a work-item reads its own series and writes its own
 * slots; the scratch's layout for the chunk's longest series is a layout),
 * so a series' result is the host's whatever batch it is in and wherever.
 */
#include "arima.h"
#include "ts_common.h"
#include "../../device/device.h"
#include <string.h>

/* The device of each kind, opened once and kept for the process, used
 * under the slot's lock. */
static sb_device_slot g_slot = SB_DEVICE_SLOT_INIT;

/* Bytes a chunk may ask of the device in all (a schedule input only). */
#define ARIMA_DEV_BUDGET ((int64_t)3 << 30)

static int64_t g_budget_for_tests; /* 0: ARIMA_DEV_BUDGET */
void sb_arima_device_budget_for_tests(int64_t bytes) { g_budget_for_tests = bytes; }

/* *p grown to n bytes (kept as it was when that fails: 0). */
static int grow(void **p, size_t n) {
    void *q = sb_realloc(*p, n ? n : 1);
    if (!q) return 0;
    *p = q;
    return 1;
}

typedef struct arima_dbufs {
    sb_dbuf y, off, ord, given, scr, par, crit, state, fitted, resid, trace, counts;
} arima_dbufs;

sb_status sb_arima_fit_device(const arima_spec *sp, const double *y, const int64_t *offsets, int64_t nseries,
                              sb_arima *e, sb_status *sts) {
    const sb_device_kind kind = (sb_device_kind)sp->device;
    if (sp->css) /* the device's kernel is the exact likelihood's fit alone (kernels/arima.h) */
        return sb_fail(SB_ERR_IDENTITY_REFUSED, "arima: method=css runs on the cpu only in this library (the device "
                                                "fits by the exact likelihood, method=ml)");
    sb_device *d;
    sb_status st = sb_device_slot_lock(&g_slot, kind, SB_PROG_TS, &d);
    if (st != SB_OK) return st;
    const ak_spec ks = sb_arima_kspec(sp);
    const int32_t L = sb_arima_diff_lag(sp), np = sb_arima_npar(sp), r = sb_arima_state_dim(sp);
    const int64_t tmax = ak_trace_max(&ks), nst = (int64_t)r + (int64_t)r * r;
    /* bytes of one series beside its scratch and values */
    const int64_t per = 8 * ((int64_t)np + AK_NCRIT + nst + tmax + 1) + 4 * AK_NCOUNTS;
    const int64_t budget = g_budget_for_tests > 0 ? g_budget_for_tests : ARIMA_DEV_BUDGET;
    const int64_t maxa = d->max_alloc > 0 ? d->max_alloc : budget;
    int64_t maxcnt = 0; /* SAMEBITS_<BACKEND>_TS_CHUNK */
    st = ts_device_chunk(d, &maxcnt);
    if (st != SB_OK) {
        sb_device_slot_unlock(&g_slot);
        return st;
    }
    arima_dbufs b;
    memset(&b, 0, sizeof b);
    double *hpar = NULL, *hcrit = NULL, *hstate = NULL, *hfit = NULL, *hres = NULL, *htrace = NULL;
    int32_t *hcnt = NULL;
    int64_t *hoff = NULL;
    const int32_t ord[9] = {sp->p, sp->d, sp->q, sp->P, sp->D, sp->Q, sp->s, sp->trend, sp->ngiven};
    st = sb_device_alloc(d, &b.ord, sizeof ord, "arima orders");
    if (st == SB_OK) st = sb_device_write(d, &b.ord, 0, ord, sizeof ord, "arima orders");
    if (st == SB_OK) st = sb_device_alloc(d, &b.given, sizeof sp->given, "arima parameters");
    if (st == SB_OK) st = sb_device_write(d, &b.given, 0, sp->given, sizeof sp->given, "arima parameters");
    for (int64_t i0 = 0; i0 < nseries && st == SB_OK;) {
        /* the chunk: series while its bytes stay within the budget and its
         * scratch within one buffer (one series at least) */
        int64_t i1 = i0 + 1, ndmax = offsets[i0 + 1] - offsets[i0] - L;
        while (i1 < nseries && (maxcnt == 0 || i1 - i0 < maxcnt)) {
            const int64_t nd1 = offsets[i1 + 1] - offsets[i1] - L, ndm = nd1 > ndmax ? nd1 : ndmax, cnt = i1 + 1 - i0;
            const int64_t scr = 8 * cnt * ak_scratch_doubles(&ks, ndm);
            if (scr > maxa || scr + cnt * per + 24 * (offsets[i1 + 1] - offsets[i0]) > budget) break;
            ndmax = ndm, i1++;
        }
        const int64_t cnt = i1 - i0, a0 = offsets[i0], nv = offsets[i1] - a0;
        if (!grow((void **)&hoff, sizeof(int64_t) * (size_t)(cnt + 1))) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "arima: out of memory");
            break;
        }
        for (int64_t i = 0; i <= cnt; i++) hoff[i] = offsets[i0 + i] - a0;
        const size_t vb = sizeof(double) * (size_t)nv;
        const size_t sz[] = {vb,
                             sizeof(int64_t) * (size_t)(cnt + 1),
                             sizeof(double) * (size_t)cnt * (size_t)ak_scratch_doubles(&ks, ndmax),
                             sizeof(double) * (size_t)(cnt * np),
                             sizeof(double) * (size_t)(cnt * AK_NCRIT),
                             sizeof(double) * (size_t)(cnt * nst),
                             vb,
                             vb,
                             sizeof(double) * (size_t)(cnt * tmax),
                             sizeof(int32_t) * (size_t)(cnt * AK_NCOUNTS)};
        sb_dbuf *bufs[] = {&b.y, &b.off, &b.scr, &b.par, &b.crit, &b.state, &b.fitted, &b.resid, &b.trace, &b.counts};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0] && st == SB_OK; i++)
            st = sb_device_ensure(d, bufs[i], sz[i], "arima");
        double **hb[] = {&hpar, &hcrit, &hstate, &hfit, &hres, &htrace};
        const size_t hsz[] = {sz[3], sz[4], sz[5], sz[6], sz[7], sz[8]};
        for (size_t i = 0; i < 6 && st == SB_OK; i++)
            if (!grow((void **)hb[i], hsz[i])) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "arima: out of memory");
        if (st == SB_OK && !grow((void **)&hcnt, sz[9])) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "arima: out of memory");
        if (st != SB_OK) break;
        st = sb_device_write(d, &b.y, 0, y + a0, vb, "arima series");
        if (st == SB_OK) st = sb_device_write(d, &b.off, 0, hoff, sz[1], "arima offsets");
        if (st == SB_OK)
            st = SB_LAUNCH(d, SB_KS_ke_arima_fit, (cnt + d->wg - 1) / d->wg, 1, 0, SB_ARG(b.y.h), SB_ARG(b.off.h),
                           SB_ARG(cnt), SB_ARG(b.ord.h), SB_ARG(b.given.h), SB_ARG(ndmax), SB_ARG(b.scr.h),
                           SB_ARG(b.par.h), SB_ARG(b.crit.h), SB_ARG(b.state.h), SB_ARG(b.fitted.h),
                           SB_ARG(b.resid.h), SB_ARG(b.trace.h), SB_ARG(b.counts.h));
        if (st == SB_OK) st = sb_device_finish(d);
        const sb_dbuf *rb[] = {&b.par, &b.crit, &b.state, &b.fitted, &b.resid, &b.trace};
        for (size_t i = 0; i < 6 && st == SB_OK; i++) st = sb_device_read(d, rb[i], 0, *hb[i], hsz[i], "arima results");
        if (st == SB_OK) st = sb_device_read(d, &b.counts, 0, hcnt, sz[9], "arima counts");
        for (int64_t i = 0; i < cnt && st == SB_OK; i++) {
            const int32_t *c = hcnt + AK_NCOUNTS * i;
            if (c[3] < 0 || c[3] > tmax) {
                st = sb_fail(SB_ERR_INTERNAL, "arima: the device gave series %lld a trace of %d", (long long)(i0 + i),
                             (int)c[3]);
                break;
            }
            sts[i0 + i] = sb_arima_take(sp, y + offsets[i0 + i], hoff[i + 1] - hoff[i], &e->fits[i0 + i], hpar + np * i,
                                     hcrit + AK_NCRIT * i, hstate + nst * i, hfit + hoff[i], hres + hoff[i],
                                     htrace + tmax * i, c);
        }
        i0 = i1;
    }
    sb_dbuf *all[] = {&b.y, &b.off, &b.ord, &b.given, &b.scr, &b.par, &b.crit, &b.state, &b.fitted, &b.resid, &b.trace, &b.counts};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sb_device_release(d, all[i]);
    sb_device_slot_unlock(&g_slot);
    sb_free(hpar), sb_free(hcrit), sb_free(hstate), sb_free(hfit), sb_free(hres), sb_free(htrace);
    sb_free(hcnt), sb_free(hoff);
    return st;
}
