/*
 * test_arima_device.c: ARIMA's device path (docs/timeseries.md, "Devices").
 * Host and device share one fit (kernels/arima.h's ak_fit); these tests
 * hold the two together. The first runs the device's entry (ak_fit_series)
 * here, on the host, beside the public fit over many models and series
 * (missing values, given parameters, seasons, a const, no parameter to
 * search), one series at a time and interleaved three at a time as a device
 * lays its scratch out: every value of every series must be the host's bits
 * (this runs on every CPU leg, aarch64 and s390x included; this file's copy
 * of the header runs the device's register filter, ak_filter_reg, where the
 * library's runs ak_filter_mem). The second fits
 * through the public API on device=opencl and cuda where present: the host's
 * digests for every series, in one launch and in launches of one series,
 * alone or in a reversed batch.
 */
/* the device's filter for a small state (ak_filter_reg), beside the host's
 * (the library's fit runs ak_filter_mem); defined before any include, as
 * models/timeseries/arima.h may bring kernels/arima.h in */
#define AK_FILTER_REG 1
#include "sb_test.h"
#include "samebits.h"
#include "models/timeseries/arima.h"
#include "kernels/arima.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_s = 29;
static double rnd(void) {
    g_s = g_s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)((int32_t)(g_s >> 40) % 4096) / 256.0;
}

/* n values of an ARMA-like series around base with a weekly pattern,
 * integrated when integ, with a missing value every gap values (0: none). */
static void series(double *y, int n, double base, int integ, int gap) {
    double v = 0.0, s = 0.0, e1 = 0.0;
    for (int t = 0; t < n; t++) {
        const double e = rnd() - 8.0;
        v = 0.5 * v + e + 0.4 * e1 + 3.0 * ((t % 7) == 2);
        e1 = e;
        s = s + v;
        y[t] = base + (integ ? s : v);
        if (gap && t > 3 && t % gap == 0) y[t] = NAN;
    }
}

static int same(double a, double b) {
    uint64_t x, y;
    if (a != a && b != b) return 1; /* the digests and the model file canonicalize NaN */
    memcpy(&x, &a, 8), memcpy(&y, &b, 8);
    return x == y;
}

static const char *const k_models[] = {"order=1:0:1,trend=c",
                                       "order=0:1:1",
                                       "order=1:0:0,seasonal_order=0:1:1:4",
                                       "order=2:1:2",
                                       "order=1:0:1,seasonal_order=1:0:1:7,trend=c",
                                       "order=3:0:0,trend=c",
                                       "order=0:1:0",
                                       "order=1:0:1,trend=c,params=40:0.5:0.3:20.0",
                                       "order=0:1:2,seasonal_order=0:1:1:7"};
#define NMODELS ((int)(sizeof k_models / sizeof k_models[0]))
enum { NS = 6 };
static const int k_len[NS] = {80, 150, 61, 200, 97, 120};

static double *make_batch(int64_t *off) {
    off[0] = 0;
    for (int i = 0; i < NS; i++) off[i + 1] = off[i] + k_len[i];
    double *y = malloc(sizeof(double) * (size_t)off[NS]);
    if (!y) return NULL;
    g_s = 29;
    for (int i = 0; i < NS; i++) series(y + off[i], k_len[i], 50.0 + 10.0 * i, i & 1, i == 2 ? 13 : i == 4 ? 29 : 0);
    return y;
}

static sb_status spec_of(const char *params, const char *dev, arima_spec *sp) {
    sb_params *p = NULL;
    char buf[256];
    snprintf(buf, sizeof buf, "%s,device=%s", params, dev);
    sb_status st = sb_params_create(&p);
    if (st == SB_OK) st = sb_params_parse(p, buf);
    if (st == SB_OK) st = sb_arima_spec_parse(p, sp);
    sb_params_free(p);
    return st;
}

/* kernels/arima.h compiled here gives every value the host's fit gives, a
 * series alone (stride 1) and three interleaved (stride 3, as a device). */
SB_TEST(test_arima_kernel_on_host_gives_the_host_bits) {
    int64_t off[NS + 1];
    double *y = make_batch(off);
    SB_CHECK(y != NULL);
    for (int mi = 0; mi < NMODELS; mi++) {
        arima_spec sp;
        SB_CHECK(spec_of(k_models[mi], "cpu", &sp) == SB_OK);
        sb_arima *e = NULL;
        SB_CHECK(sb_arima_fit_spec(&sp, y, off, NS, NULL, "t", &e) == SB_OK);
        ak_spec ks;
        ks.p = sp.p, ks.d = sp.d, ks.q = sp.q, ks.P = sp.P, ks.D = sp.D, ks.Q = sp.Q, ks.s = sp.s;
        ks.trend = sp.trend, ks.ngiven = sp.ngiven;
        const int32_t np = sb_arima_npar(&sp), r = sb_arima_state_dim(&sp), L = sb_arima_diff_lag(&sp);
        const int64_t tmax = ak_trace_max(&ks), ndmax = 200 - L;
        for (int sw = 1; sw <= 3; sw += 2) {
            double *scr = calloc((size_t)(sw * ak_scratch_doubles(&ks, ndmax)), sizeof(double));
            SB_CHECK(scr != NULL);
            for (int i = 0; i < NS; i++) {
                const arima_fit *f = &e->fits[i];
                const int64_t n = k_len[i];
                double par[AK_MAX_PAR], crit[AK_NCRIT], *state = malloc(sizeof(double) * (size_t)(r + r * r));
                double *fitted = malloc(sizeof(double) * (size_t)n), *resid = malloc(sizeof(double) * (size_t)n);
                double *trace = malloc(sizeof(double) * (size_t)tmax);
                int32_t counts[AK_NCOUNTS];
                SB_CHECK(state && fitted && resid && trace);
                ak_out o = {par, crit, state, fitted, resid, trace, counts};
                ak_fit_series(&ks, sp.given, y + off[i], n, scr + (i % sw), sw, ndmax, o);
                int ok = counts[4] == 0 && counts[0] == f->nfev && counts[1] == f->nit && counts[2] == f->converged &&
                         counts[3] == f->ntrace;
                for (int k = 0; k < np; k++) ok = ok && same(par[k], f->par[k]);
                ok = ok && same(crit[0], f->llf) && same(crit[1], f->aic) && same(crit[2], f->aicc) && same(crit[3], f->bic);
                for (int64_t t = 0; t < n; t++) ok = ok && same(fitted[t], f->fitted[t]) && same(resid[t], f->resid[t]);
                for (int k = 0; k < r; k++) ok = ok && same(state[k], f->a[k]);
                for (int k = 0; k < r * r; k++) ok = ok && same(state[r + k], f->P[k]);
                for (int k = 0; k < f->ntrace && ok; k++) ok = same(trace[k], f->trace[k]);
                if (!ok) printf("  model %s, series %d, stride %d: the kernel parts from the host\n", k_models[mi], i, sw);
                SB_CHECK(ok);
                free(state), free(fitted), free(resid), free(trace);
            }
            free(scr);
        }
        sb_arima_free(e);
        (void)L;
    }
    free(y);
}

/* The batch fitted under params on dev into *e (NULL and the status when it
 * fails: a device not there, with the reason in the last error). */
static sb_status fit_on(const char *params, const char *dev, const double *y, const int64_t *off, int64_t ns,
                        sb_arima **e) {
    char p[256];
    snprintf(p, sizeof p, "%s,device=%s", params, dev);
    sb_params *pp = NULL;
    *e = NULL;
    sb_status st = sb_params_create(&pp);
    if (st == SB_OK) st = sb_params_parse(pp, p);
    if (st == SB_OK) st = sb_arima_fit(pp, y, off, ns, NULL, e);
    sb_params_free(pp);
    return st;
}

/* The digests of every series of a batch fitted on dev; 0 when the device
 * is not there (the reason in the last error). */
static int digests_on(const char *params, const char *dev, const double *y, const int64_t *off, int64_t ns,
                      char (*d)[65]) {
    sb_arima *e = NULL;
    if (fit_on(params, dev, y, off, ns, &e) != SB_OK) return 0;
    for (int64_t i = 0; i < ns; i++) SB_CHECK(sb_arima_digest(e, i, d[i]) == SB_OK);
    sb_arima_free(e);
    return 1;
}

/* device=opencl and cuda give the host's digest for every series, in one
 * launch and in launches of one series (the tests' budget), and a series'
 * bytes are the same inside a reversed batch. A backend not built or
 * without a device is skipped, unless SAMEBITS_PARITY_REQUIRE names it. */
SB_TEST(test_arima_devices_give_the_cpu_bits) {
    int64_t off[NS + 1], roff[NS + 1];
    double *y = make_batch(off), *ry = malloc(sizeof(double) * (size_t)off[NS]);
    SB_CHECK(y && ry);
    roff[0] = 0;
    for (int i = 0; i < NS; i++) roff[i + 1] = roff[i] + k_len[NS - 1 - i];
    for (int i = 0; i < NS; i++) memcpy(ry + roff[NS - 1 - i], y + off[i], sizeof(double) * (size_t)k_len[i]);
    const char *devs[] = {"opencl", "cuda"};
    const char *req = getenv("SAMEBITS_PARITY_REQUIRE");
    for (int di = 0; di < 2; di++) {
        static char host[NS][65], dev[NS][65], rev[NS][65];
        if (!digests_on(k_models[0], devs[di], y, off, NS, dev)) {
            SB_CHECK(!(req && strstr(req, devs[di])));
            printf("  arima on %s: skipped (%s)\n", devs[di], sb_last_error());
            sb_clear_error();
            continue;
        }
        for (int mi = 0; mi < NMODELS; mi++)
            for (int chunked = 0; chunked < 2; chunked++) {
                SB_CHECK(digests_on(k_models[mi], "cpu", y, off, NS, host));
                sb_arima_device_budget_for_tests(chunked ? 1 : 0); /* one series a launch */
                SB_CHECK(digests_on(k_models[mi], devs[di], y, off, NS, dev));
                SB_CHECK(digests_on(k_models[mi], devs[di], ry, roff, NS, rev));
                sb_arima_device_budget_for_tests(0);
                for (int i = 0; i < NS; i++) {
                    if (strcmp(host[i], dev[i])) printf("  %s on %s: series %d parts\n", k_models[mi], devs[di], i);
                    SB_CHECK(!strcmp(host[i], dev[i]));
                    SB_CHECK(!strcmp(dev[i], rev[NS - 1 - i]));
                }
            }
        printf("  arima on %s: %d models identical to the cpu\n", devs[di], NMODELS);
    }
    free(y);
    free(ry);
}

/* Every series' optimizer trace on dev: ns arrays of up to cap values into
 * t[i * cap ..], their lengths into len; 0 when the device is not there. */
static int traces_on(const char *params, const char *dev, const double *y, const int64_t *off, int64_t ns,
                     double *t, size_t cap, size_t *len) {
    sb_arima *e = NULL;
    if (fit_on(params, dev, y, off, ns, &e) != SB_OK) return 0;
    for (int64_t i = 0; i < ns; i++) SB_CHECK(sb_arima_get_array(e, i, "trace", t + (size_t)i * cap, cap, &len[i]) == SB_OK);
    sb_arima_free(e);
    return 1;
}

/* The trace a device's fit reads back (packed on the device to the values
 * the fits wrote) is the host's, value for value, in one launch and in
 * launches of one series. */
SB_TEST(test_arima_device_trace_is_the_hosts) {
    int64_t off[NS + 1];
    double *y = make_batch(off);
    enum { CAP = 4096 };
    double *th = malloc(sizeof(double) * NS * CAP), *td = malloc(sizeof(double) * NS * CAP);
    size_t lh[NS], ld[NS];
    SB_CHECK(y && th && td);
    const char *devs[] = {"opencl", "cuda"};
    const char *req = getenv("SAMEBITS_PARITY_REQUIRE");
    for (int di = 0; di < 2 && y && th && td; di++) {
        if (!traces_on(k_models[0], devs[di], y, off, NS, td, CAP, ld)) {
            SB_CHECK(!(req && strstr(req, devs[di])));
            sb_clear_error();
            continue;
        }
        for (int mi = 0; mi < NMODELS; mi++)
            for (int chunked = 0; chunked < 2; chunked++) {
                SB_CHECK(traces_on(k_models[mi], "cpu", y, off, NS, th, CAP, lh));
                sb_arima_device_budget_for_tests(chunked ? 1 : 0);
                SB_CHECK(traces_on(k_models[mi], devs[di], y, off, NS, td, CAP, ld));
                sb_arima_device_budget_for_tests(0);
                for (int i = 0; i < NS; i++) {
                    SB_CHECK(lh[i] == ld[i]);
                    SB_CHECK(memcmp(th + (size_t)i * CAP, td + (size_t)i * CAP, sizeof(double) * lh[i]) == 0);
                }
            }
    }
    free(y), free(th), free(td);
}
