/*
 * test_ets_dev.c: exponential smoothing's fit as a device compiles it
 * (kernels/ets.h under SB_COMPAT_DEVICE: the strided scratch, and for k <=
 * ETS_KR the Jacobian passes in registers, ets_pass_reg) gives the host's
 * bits. ets_dev_emu.c compiles the kernel that way on the host; each model
 * kind (k from 1 to 13: both the register pass and the scratch pass beyond
 * ETS_KR) is fitted as work-item 1 of 3 interleaved ones and every result
 * (parameters, states, fitted values, residuals, criteria, the trace, the
 * counts) compared bit for bit with the host's own ets_fit_series. The
 * separating arm: the same with ets-reg-order (ets_dev_emu_arm.c: the
 * register sums split by the step's parity) must part at least one model.
 */
#include "sb_test.h"
#include "kernels/ets.h"

#include <stdlib.h>
#include <string.h>

int sb_test_ets_dev_fit(const ets_spec *sp, const double *y, int64_t n, int32_t slot, int32_t ns, ets_out o);
int sb_test_ets_dev_fit_arm(const ets_spec *sp, const double *y, int64_t n, int32_t slot, int32_t ns, ets_out o);

#define DEV_MMAX 12

/* One fit's results, owned. */
typedef struct dev_res {
    double par[4], init[2 + DEV_MMAX], last[2 + DEV_MMAX], crit[4];
    double *fitted, *resid, *trace;
    int32_t counts[ETS_NCOUNTS];
} dev_res;

static ets_out dev_out(dev_res *r) {
    ets_out o;
    o.par = r->par, o.init = r->init, o.last = r->last, o.fitted = r->fitted, o.resid = r->resid;
    o.crit = r->crit, o.trace = r->trace, o.counts = r->counts;
    return o;
}

static int dev_alloc(dev_res *r, int64_t n) {
    memset(r, 0, sizeof *r);
    r->fitted = calloc((size_t)n, sizeof(double));
    r->resid = calloc((size_t)n, sizeof(double));
    r->trace = calloc((size_t)ETS_TRACE_MAX, sizeof(double));
    return r->fitted && r->resid && r->trace;
}

static void dev_free(dev_res *r) { free(r->fitted), free(r->resid), free(r->trace); }

/* 1 when a and b hold the same bits everywhere a fit writes. */
static int dev_same(const dev_res *a, const dev_res *b, int64_t n, int32_t m) {
    if (memcmp(a->counts, b->counts, sizeof a->counts)) return 0;
    const int32_t nt = a->counts[4];
    return !memcmp(a->par, b->par, sizeof a->par) && !memcmp(a->crit, b->crit, sizeof a->crit) &&
           !memcmp(a->init, b->init, sizeof(double) * (size_t)(2 + m)) &&
           !memcmp(a->last, b->last, sizeof(double) * (size_t)(2 + m)) &&
           !memcmp(a->fitted, b->fitted, sizeof(double) * (size_t)n) &&
           !memcmp(a->resid, b->resid, sizeof(double) * (size_t)n) &&
           !memcmp(a->trace, b->trace, sizeof(double) * (size_t)nt);
}

/* The models: trend, damping, season and error kinds; m 4, 7 and 12. */
static ets_spec dev_spec(int i) {
    static const int32_t kind[][5] = {/* trend, damped, seasonal, m, error */
                                      {0, 0, 0, 1, ETS_ADD},         {ETS_ADD, 0, 0, 1, ETS_ADD},
                                      {ETS_ADD, 1, 0, 1, ETS_ADD},   {0, 0, ETS_ADD, 7, ETS_ADD},
                                      {ETS_ADD, 1, ETS_ADD, 7, ETS_ADD}, {ETS_ADD, 1, ETS_MUL, 7, ETS_ADD},
                                      {ETS_ADD, 1, ETS_MUL, 4, ETS_MUL}, {0, 0, ETS_ADD, 7, ETS_MUL},
                                      {0, 0, 0, 1, ETS_MUL},         {ETS_ADD, 1, ETS_ADD, 12, ETS_ADD},
                                      {ETS_ADD, 0, ETS_MUL, 12, ETS_MUL}};
    ets_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.trend = kind[i][0], sp.damped = kind[i][1], sp.seasonal = kind[i][2], sp.m = kind[i][3];
    sp.error = kind[i][4];
    for (int q = 0; q < SB_ETS_NPAR; q++) sp.given[q] = __builtin_nan("");
    return sp;
}
#define DEV_MODELS 11

/* n positive values: a trend, a season of period 7 and an LCG's noise. */
static void dev_series(double *y, int64_t n, uint64_t seed) {
    for (int64_t t = 0; t < n; t++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        y[t] = 30.0 + 0.2 * (double)t + (double)((t % 7) * 4) + (double)((int32_t)(seed >> 40) % 4096) / 512.0;
    }
}

SB_TEST(test_ets_device_pass_gives_the_host_bits) {
    enum { N = 75 };
    double y[N];
    int arm_parted = 0;
    for (int mi = 0; mi < DEV_MODELS; mi++) {
        dev_series(y, N, 11 + (uint64_t)mi);
        const ets_spec sp = dev_spec(mi);
        const int32_t k = ets_nstates(&sp);
        dev_res host, dev;
        SB_CHECK(dev_alloc(&host, N) && dev_alloc(&dev, N));
        double *scr = calloc((size_t)ets_scratch_doubles(k, sp.m), sizeof(double));
        int32_t *iscr = calloc((size_t)k, sizeof(int32_t));
        SB_CHECK(scr && iscr);
        ets_fit_series(&sp, y, N, scr, iscr, 1, dev_out(&host));
        SB_CHECK(host.counts[0] > 0);
        SB_CHECK(sb_test_ets_dev_fit(&sp, y, N, 1, 3, dev_out(&dev)) == 0);
        if (!dev_same(&host, &dev, N, sp.m)) {
            printf("  ets device pass: model %d (k %d) parts from the host\n", mi, (int)k);
            SB_CHECK(0);
        }
        SB_CHECK(sb_test_ets_dev_fit_arm(&sp, y, N, 1, 3, dev_out(&dev)) == 0);
        arm_parted += !dev_same(&host, &dev, N, sp.m);
        free(scr), free(iscr);
        dev_free(&host), dev_free(&dev);
    }
    printf("  ets device pass: the ets-reg-order arm parted %d of %d models\n", arm_parted, DEV_MODELS);
    SB_CHECK(arm_parted > 0);
}
