/*
 * ets_device.c: exponential smoothing on a GPU (device=cuda|opencl|gpu;
 * docs/timeseries.md, "Devices"): the time-series program's ke_ets_fit
 * (kernels/entry/ts_entry.h), one work-item a series, each running
 * kernels/ets.h's ets_fit_series, the function the host's tasks run. The
 * host here only moves bytes: the batch in chunks that fit the device, each
 * chunk's values and offsets up, every series' results down into its
 * ets_fit. A chunk's bounds decide no bit (a work-item reads its own series
 * and writes its own slots), so a series' result is the host's, whatever
 * batch it is in and wherever in it.
 */
#include "ets.h"
#include "ts_common.h"
#include "../../device/device.h"
#include <string.h>

/* The device of each kind, opened once and kept for the process, used
 * under the slot's lock. */
static sb_device_slot g_slot = SB_DEVICE_SLOT_INIT;

/* Bytes a chunk may ask of the device in all (a schedule input only). */
#define ETS_DEV_BUDGET ((int64_t)1 << 30)

static int64_t g_budget_for_tests; /* 0: ETS_DEV_BUDGET */
void sb_ets_device_budget_for_tests(int64_t bytes) { g_budget_for_tests = bytes; }

typedef struct ets_dbufs {
    sb_dbuf y, off, given, scr, iscr, par, init, last, fitted, resid, crit, trace, counts;
} ets_dbufs;

static void ets_dbufs_release(sb_device *d, ets_dbufs *b) {
    sb_dbuf *all[] = {&b->y,   &b->off,  &b->given,  &b->scr,   &b->iscr, &b->par,  &b->init,
                      &b->last, &b->fitted, &b->resid, &b->crit, &b->trace, &b->counts};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sb_device_release(d, all[i]);
}

/* *p grown to n bytes (kept as it was when that fails: 0). */
static int grow(void **p, size_t n) {
    void *q = sb_realloc(*p, n);
    if (!q) return 0;
    *p = q;
    return 1;
}

/* The results of chunk series i (of the chunk starting at series i0) into
 * e->fits[i0 + i]; its buffers allocated here. */
static sb_status ets_take(const ets_spec *sp, sb_ets *e, int64_t g, int64_t a, int64_t n, const double *par,
                          const double *init, const double *last, const double *fitted, const double *resid,
                          const double *crit, const double *trace, const int32_t *counts) {
    const int32_t m = sp->m;
    ets_fit *f = &e->fits[g];
    f->n = n;
    f->init = sb_malloc(sizeof(double) * (size_t)(2 + m));
    f->last = sb_malloc(sizeof(double) * (size_t)(2 + m));
    f->fitted = sb_malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    f->resid = sb_malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    const int32_t nt = counts[4];
    f->trace = sb_malloc(sizeof(double) * (size_t)(nt > 0 ? nt : 1));
    if (!f->init || !f->last || !f->fitted || !f->resid || !f->trace)
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "exponential smoothing: out of memory for series %lld", (long long)g);
    if (nt < 0 || nt > ETS_TRACE_MAX)
        return sb_fail(SB_ERR_INTERNAL, "exponential smoothing: the device gave series %lld a trace of %d", (long long)g,
                       (int)nt);
    memcpy(f->par, par, sizeof f->par);
    memcpy(f->init, init, sizeof(double) * (size_t)(2 + m));
    memcpy(f->last, last, sizeof(double) * (size_t)(2 + m));
    memcpy(f->fitted, fitted + a, sizeof(double) * (size_t)n);
    memcpy(f->resid, resid + a, sizeof(double) * (size_t)n);
    memcpy(f->trace, trace, sizeof(double) * (size_t)nt);
    sb_ets_fit_from(f, crit, counts);
    return SB_OK;
}

sb_status sb_ets_fit_device(const ets_spec *sp, const double *y, const int64_t *offsets, int64_t nseries, sb_ets *e) {
    const sb_device_kind kind = (sb_device_kind)sp->device;
    sb_device *d;
    sb_status st = sb_device_slot_lock(&g_slot, kind, SB_PROG_TS, &d);
    if (st != SB_OK) return st;
    const int32_t m = sp->m, k = ets_nstates(sp);
    const int64_t nd = ets_scratch_doubles(k, m);
    /* bytes of one series beside its values, and of each value (y, fitted, resid) */
    const int64_t per = 8 * (nd + 4 + 2 * (2 + (int64_t)m) + 4 + ETS_TRACE_MAX + 1) + 4 * ((int64_t)k + ETS_NCOUNTS);
    const int64_t budget = g_budget_for_tests > 0 ? g_budget_for_tests : ETS_DEV_BUDGET;
    const int64_t cap = d->max_alloc > 0 && d->max_alloc < budget ? d->max_alloc : budget;
    int64_t maxcnt = 0; /* SAMEBITS_<BACKEND>_TS_CHUNK */
    st = ts_device_chunk(d, &maxcnt);
    if (st != SB_OK) {
        sb_device_slot_unlock(&g_slot);
        return st;
    }
    ets_dbufs b;
    memset(&b, 0, sizeof b);
    double *hpar = NULL, *hinit = NULL, *hlast = NULL, *hfit = NULL, *hres = NULL, *hcrit = NULL, *htrace = NULL;
    int32_t *hcnt = NULL;
    int64_t *hoff = NULL;
    st = sb_device_alloc(d, &b.given, sizeof sp->given, "exponential smoothing parameters");
    if (st == SB_OK) st = sb_device_write(d, &b.given, 0, sp->given, sizeof sp->given, "exponential smoothing parameters");
    for (int64_t i0 = 0; i0 < nseries && st == SB_OK;) {
        /* the chunk: series while the chunk's bytes stay within the budget (one at least) */
        int64_t i1 = i0 + 1;
        while (i1 < nseries && (maxcnt == 0 || i1 - i0 < maxcnt) &&
               (i1 + 1 - i0) * per + 24 * (offsets[i1 + 1] - offsets[i0]) <= cap)
            i1++;
        const int64_t cnt = i1 - i0, a0 = offsets[i0], nv = offsets[i1] - a0;
        if (!grow((void **)&hoff, sizeof(int64_t) * (size_t)(cnt + 1))) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "exponential smoothing: out of memory");
            break;
        }
        for (int64_t i = 0; i <= cnt; i++) hoff[i] = offsets[i0 + i] - a0;
        const size_t vb = sizeof(double) * (size_t)(nv > 0 ? nv : 1);
        const size_t sz[] = {vb,
                             sizeof(int64_t) * (size_t)(cnt + 1),
                             sizeof(double) * (size_t)(cnt * nd),
                             sizeof(int32_t) * (size_t)(cnt * k),
                             sizeof(double) * (size_t)(cnt * 4),
                             sizeof(double) * (size_t)(cnt * (2 + m)),
                             sizeof(double) * (size_t)(cnt * (2 + m)),
                             vb,
                             vb,
                             sizeof(double) * (size_t)(cnt * 4),
                             sizeof(double) * (size_t)(cnt * ETS_TRACE_MAX),
                             sizeof(int32_t) * (size_t)(cnt * ETS_NCOUNTS)};
        sb_dbuf *bufs[] = {&b.y, &b.off, &b.scr, &b.iscr, &b.par, &b.init, &b.last, &b.fitted, &b.resid, &b.crit, &b.trace, &b.counts};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0] && st == SB_OK; i++)
            st = sb_device_ensure(d, bufs[i], sz[i], "exponential smoothing");
        double **hb[] = {&hpar, &hinit, &hlast, &hfit, &hres, &hcrit, &htrace};
        const size_t hsz[] = {sz[4], sz[5], sz[6], sz[7], sz[8], sz[9], sz[10]};
        for (size_t i = 0; i < 7 && st == SB_OK; i++)
            if (!grow((void **)hb[i], hsz[i])) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "exponential smoothing: out of memory");
        if (st == SB_OK && !grow((void **)&hcnt, sz[11]))
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "exponential smoothing: out of memory");
        if (st != SB_OK) break;
        if (nv > 0) st = sb_device_write(d, &b.y, 0, y + a0, sizeof(double) * (size_t)nv, "exponential smoothing series");
        if (st == SB_OK) st = sb_device_write(d, &b.off, 0, hoff, sz[1], "exponential smoothing offsets");
        const int32_t tr = sp->trend, dm = sp->damped, se = sp->seasonal, er = sp->error;
        if (st == SB_OK)
            st = SB_LAUNCH(d, SB_KS_ke_ets_fit, (cnt + d->wg - 1) / d->wg, 1, 0, SB_ARG(b.y.h), SB_ARG(b.off.h),
                           SB_ARG(cnt), SB_ARG(tr), SB_ARG(dm), SB_ARG(se), SB_ARG(m), SB_ARG(er), SB_ARG(b.given.h),
                           SB_ARG(b.scr.h), SB_ARG(b.iscr.h), SB_ARG(b.par.h), SB_ARG(b.init.h), SB_ARG(b.last.h),
                           SB_ARG(b.fitted.h), SB_ARG(b.resid.h), SB_ARG(b.crit.h), SB_ARG(b.trace.h),
                           SB_ARG(b.counts.h));
        if (st == SB_OK) st = sb_device_finish(d);
        const sb_dbuf *rb[] = {&b.par, &b.init, &b.last, &b.fitted, &b.resid, &b.crit, &b.trace};
        for (size_t i = 0; i < 7 && st == SB_OK; i++)
            if (i < 3 || i > 4 || nv > 0) st = sb_device_read(d, rb[i], 0, *hb[i], hsz[i], "exponential smoothing results");
        if (st == SB_OK) st = sb_device_read(d, &b.counts, 0, hcnt, sz[11], "exponential smoothing counts");
        for (int64_t i = 0; i < cnt && st == SB_OK; i++)
            st = ets_take(sp, e, i0 + i, hoff[i], hoff[i + 1] - hoff[i], hpar + 4 * i, hinit + (2 + m) * i,
                          hlast + (2 + m) * i, hfit, hres, hcrit + 4 * i, htrace + ETS_TRACE_MAX * i,
                          hcnt + ETS_NCOUNTS * i);
        i0 = i1;
    }
    ets_dbufs_release(d, &b);
    sb_device_slot_unlock(&g_slot);
    sb_free(hpar), sb_free(hinit), sb_free(hlast), sb_free(hfit), sb_free(hres), sb_free(hcrit), sb_free(htrace);
    sb_free(hcnt), sb_free(hoff);
    return st;
}
