/*
 * svm_device.c: support vector machines on a GPU (device=cuda|opencl|gpu;
 * svm_device.h, docs/svm.md "Devices"). The host here only moves bytes and
 * launches: the training rows go up once and stay for the fit, each
 * problem's points (a one-vs-one pair's rows, a cross-validation fold's) go
 * up once, feature-major, and every kernel row the SMO's cache misses is one
 * launch of kv_row and one read; decision values are kv_rows over a block of
 * rows then kv_dec, one work-item a (row, pair), summing in the host's order.
 * No value depends on a chunk, a work-group or a work-item other than its
 * own, so the model and the decision values are the host's bits.
 */
#include "svm_device.h"
#include <string.h>

/* The device of each kind, opened once and kept for the process, used
 * under the slot's lock. */
static sb_device_slot g_slot = SB_DEVICE_SLOT_INIT;

/* Bytes the kernel values of one decision chunk may take (a schedule input). */
#define SV_DEV_BUDGET ((int64_t)256 << 20)
#define SV_DEV_MAX_GROUPS1 65535 /* CUDA's grid limit on the second index */

static int64_t g_budget_for_tests;
void sb_svm_device_budget_for_tests(int64_t bytes) { g_budget_for_tests = bytes; }

sb_status sv_dev_open(int32_t kind, int32_t kernel, int32_t degree, int32_t d, double gamma, double coef0, sv_dev *v) {
    memset(v, 0, sizeof *v);
    if (kind != SB_DEVICE_CUDA && kind != SB_DEVICE_OPENCL)
        return sb_fail(SB_ERR_INTERNAL, "support vector machines: device kind %d is not a GPU", (int)kind);
    const sb_status st = sb_device_slot_lock(&g_slot, (sb_device_kind)kind, SB_PROG_TS, &v->d);
    if (st != SB_OK) return st;
    v->kernel = kernel, v->degree = degree, v->dfeat = d, v->gamma = gamma, v->coef0 = coef0;
    return SB_OK;
}

void sv_dev_close(sv_dev *v) {
    if (!v->d) return;
    sb_dbuf *all[] = {&v->rows, &v->pt, &v->row, &v->idx, &v->K, &v->coef, &v->pairs, &v->rho, &v->dec};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sb_device_release(v->d, all[i]);
    v->d = NULL;
    sb_device_slot_unlock(&g_slot);
}

sb_status sv_dev_set_rows(sv_dev *v, const float *x, int64_t n) {
    const size_t bytes = sizeof(float) * (size_t)n * (size_t)v->dfeat;
    sb_status st = sb_device_ensure(v->d, &v->rows, bytes ? bytes : 4, "support vector rows");
    if (st == SB_OK && bytes) st = sb_device_write(v->d, &v->rows, 0, x, bytes, "support vector rows");
    return st;
}

sb_status sv_dev_set_points(sv_dev *v, const float *x, const int64_t *pts, int64_t np) {
    const int32_t d = v->dfeat;
    const size_t bytes = sizeof(float) * (size_t)np * (size_t)d;
    float *t = sb_malloc(bytes ? bytes : 4);
    if (!t) return sb_fail(SB_ERR_OUT_OF_MEMORY, "support vector machines: out of memory for %lld points",
                           (long long)np);
    for (int64_t q = 0; q < np; q++) {
        const float *r = x + (pts ? pts[q] : q) * d;
        for (int32_t f = 0; f < d; f++) t[(int64_t)f * np + q] = r[f];
    }
    sb_status st = sb_device_ensure(v->d, &v->pt, bytes ? bytes : 4, "support vector points");
    if (st == SB_OK && bytes) st = sb_device_write(v->d, &v->pt, 0, t, bytes, "support vector points");
    if (st == SB_OK) st = sb_device_ensure(v->d, &v->row, sizeof(float) * (size_t)(np > 0 ? np : 1), "a kernel row");
    sb_free(t);
    v->np = np;
    return st;
}

sb_status sv_dev_row(sv_dev *v, int64_t p, float *out) {
    sb_device *d = v->d;
    const int64_t np = v->np;
    const int32_t dfeat = v->dfeat, kernel = v->kernel, degree = v->degree;
    const double gamma = v->gamma, coef0 = v->coef0;
    sb_status st = SB_LAUNCH(d, SB_KS_kv_row, (np + d->wg - 1) / d->wg, 1, 0, SB_ARG(v->pt.h), SB_ARG(np),
                             SB_ARG(dfeat), SB_ARG(p), SB_ARG(kernel), SB_ARG(degree), SB_ARG(gamma), SB_ARG(coef0),
                             SB_ARG(v->row.h));
    if (st == SB_OK) st = sb_device_read(d, &v->row, 0, out, sizeof(float) * (size_t)np, "a kernel row");
    return st;
}

sb_status sv_dev_decide(sv_dev *v, const int64_t *aidx, int64_t r, const double *coef, int64_t ncoef,
                        const int64_t *pairs, const double *rho, int64_t w, int32_t skip_zero, double *out) {
    sb_device *d = v->d;
    const int64_t np = v->np;
    const int32_t dfeat = v->dfeat, kernel = v->kernel, degree = v->degree;
    const double gamma = v->gamma, coef0 = v->coef0;
    const int64_t ar = dfeat, af = 1;
    if (r == 0) return SB_OK;
    const int64_t budget = g_budget_for_tests > 0 ? g_budget_for_tests : SV_DEV_BUDGET;
    int64_t chunk = budget / (4 * (np > 0 ? np : 1));
    if (chunk < 1) chunk = 1;
    if (chunk > SV_DEV_MAX_GROUPS1) chunk = SV_DEV_MAX_GROUPS1;
    if (chunk > r) chunk = r;
    sb_status st = sb_device_ensure(d, &v->coef, sizeof(double) * (size_t)(ncoef > 0 ? ncoef : 1), "dual coefficients");
    if (st == SB_OK && ncoef > 0) st = sb_device_write(d, &v->coef, 0, coef, sizeof(double) * (size_t)ncoef, "dual coefficients");
    if (st == SB_OK) st = sb_device_ensure(d, &v->pairs, sizeof(int64_t) * 6 * (size_t)w, "decision ranges");
    if (st == SB_OK) st = sb_device_write(d, &v->pairs, 0, pairs, sizeof(int64_t) * 6 * (size_t)w, "decision ranges");
    if (st == SB_OK) st = sb_device_ensure(d, &v->rho, sizeof(double) * (size_t)w, "intercepts");
    if (st == SB_OK) st = sb_device_write(d, &v->rho, 0, rho, sizeof(double) * (size_t)w, "intercepts");
    if (st == SB_OK) st = sb_device_ensure(d, &v->idx, sizeof(int64_t) * (size_t)chunk, "row indices");
    if (st == SB_OK) st = sb_device_ensure(d, &v->K, sizeof(float) * (size_t)(chunk * (np > 0 ? np : 1)), "kernel values");
    if (st == SB_OK) st = sb_device_ensure(d, &v->dec, sizeof(double) * (size_t)(chunk * w), "decision values");
    for (int64_t i0 = 0; i0 < r && st == SB_OK; i0 += chunk) {
        const int64_t c = r - i0 < chunk ? r - i0 : chunk;
        st = sb_device_write(d, &v->idx, 0, aidx + i0, sizeof(int64_t) * (size_t)c, "row indices");
        if (st == SB_OK && np > 0)
            st = SB_LAUNCH(d, SB_KS_kv_rows, (np + d->wg - 1) / d->wg, c, 0, SB_ARG(v->pt.h), SB_ARG(np),
                           SB_ARG(dfeat), SB_ARG(v->rows.h), SB_ARG(ar), SB_ARG(af), SB_ARG(v->idx.h), SB_ARG(c),
                           SB_ARG(kernel), SB_ARG(degree), SB_ARG(gamma), SB_ARG(coef0), SB_ARG(v->K.h));
        for (int64_t j0 = 0; j0 < w && st == SB_OK; j0 += SV_DEV_MAX_GROUPS1) {
            const int64_t gw = w - j0 < SV_DEV_MAX_GROUPS1 ? w - j0 : SV_DEV_MAX_GROUPS1;
            st = SB_LAUNCH(d, SB_KS_kv_dec, (c + d->wg - 1) / d->wg, gw, 0, SB_ARG(v->K.h), SB_ARG(np), SB_ARG(c),
                           SB_ARG(v->coef.h), SB_ARG(v->pairs.h), SB_ARG(v->rho.h), SB_ARG(j0), SB_ARG(w),
                           SB_ARG(skip_zero), SB_ARG(v->dec.h));
        }
        if (st == SB_OK)
            st = sb_device_read(d, &v->dec, 0, out + i0 * w, sizeof(double) * (size_t)(c * w), "decision values");
    }
    return st;
}
