/*
 * test_ets_avx2.c: exponential smoothing's AVX2 instance (ets_avx2.c) gives
 * the generic instance's bits. The four-lane logarithm (f64_log.h's
 * sb__hx_log_v4) is sb__hx_log lane by lane on 2^24 random positive normal
 * doubles across the whole exponent range and 2^22 near the branch edges
 * (2^-6 from 1, 2^-1000), and ets_log_add (the block sums of log yhat) is
 * the one-by-one sum on blocks mixing every class ets_log tells apart; a
 * variant that adds the last terms in another order is caught by the same
 * comparison (the separating arm).
 * Whole fits (additive and multiplicative errors and seasons, damped trends)
 * give the same digests under SAMEBITS_ETS_KERNEL=generic and by default.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HAVE_V4 1
/* the kernel first, under the target (its functions here are AVX2 code,
 * called only where the CPU has it; ets.h below finds it included) */
#define SB_HOST_V4 1 /* the four-wide forms, as ets_avx2.c asks for them */
#pragma GCC push_options
#pragma GCC target("avx2")
#include "kernels/ets.h"

static uint64_t next(uint64_t *r) {
    *r ^= *r << 13, *r ^= *r >> 7, *r ^= *r << 17;
    return *r;
}

/* A positive double: normal of any exponent (kind 0), within 2^-5 of 1 or of
 * the branch edge 1 +- 2^-6 (1), near 2^-1000 or subnormal (2), or a special
 * (3: 0, inf, NaN, a negative). */
static double operand(uint64_t *r, int kind) {
    const uint64_t w = next(r), f = next(r) & 0x000FFFFFFFFFFFFFull;
    if (kind == 0) return sb_u2d(((1 + w % 2046) << 52) | f);
    if (kind == 1) {
        const double c = (w & 3) == 0 ? 1.0 : (w & 3) == 1 ? 1.0 + 0x1p-6 : (w & 3) == 2 ? 1.0 - 0x1p-6 : 1.0;
        const int64_t ulps = (int64_t)((w >> 8) % 8192) - 4096;
        return (w & 4) ? sb_u2d(sb_d2u(c) + (uint64_t)ulps) : c + ((double)(int64_t)(f >> 20) - 0x1p31) * 0x1p-36;
    }
    if (kind == 2) return (w & 1) ? sb_u2d(f) : sb_u2d(sb_d2u(0x1p-1000) + (uint64_t)((int64_t)(f % 4096) - 2048));
    const double sp[5] = {0.0, 1.0 / 0.0, 0.0 / 0.0, -1.0, -0x1p-1074};
    return sp[w % 5];
}


/* sb__hx_log with its last three terms added left to right: the same terms
 * in another order (the separating arm: a rewrite the comparison must
 * catch; Estrin's grouping of the polynomial, tried first, moves too few
 * results to be one: the polynomial is far below the sum). */
static double log_reordered(double v) {
    const sb_u64 b = sb__hx_bits(v);
    const int E = (int)(b >> 52) - 1023;
    const int j = (int)((b >> 45) & 127u);
    const double m = sb__hx_dbl((b & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
    const double F = sb__hx_dbl(0x3FF0000000000000ull | ((sb_u64)j << 45));
    const double r = (m - F) * sb__hx_invf[j];
    const double p = r * (r * (-0.5 + r * (0x1.5555555555555p-2 + r * (-0.25 + r * (0x1.999999999999ap-3 +
                     r * (-0x1.5555555555555p-3 + r * (0x1.2492492492492p-3 + r * -0.125)))))));
    const double hi = (double)E * SB__HX_LN2_HI + sb__hx_logf_hi[j];
    return (hi + ((double)E * SB__HX_LN2_LO + sb__hx_logf_lo[j])) + (r + p);
}

/* Lanes of sb__hx_log_v4 unlike sb__hx_log (with arm: unlike
 * log_reordered) among nv regular operands of kind. */
static int64_t v4_mismatches(uint64_t seed, int kind, int64_t nv, int arm) {
    uint64_t r = seed;
    int64_t bad = 0;
    for (int64_t i = 0; i < nv; i += 4) {
        sb__hx_v4d x;
        for (int q = 0; q < 4; q++) {
            double v;
            do {
                v = operand(&r, kind);
            } while (!(v >= 0x1p-1000 && v - v == 0.0 && (v - 1.0 >= 0x1p-6 || v - 1.0 <= -0x1p-6)));
            x[q] = v;
        }
        const sb__hx_v4d y = sb__hx_log_v4(x);
        for (int q = 0; q < 4; q++) bad += sb_d2u(y[q]) != sb_d2u(arm ? log_reordered(x[q]) : sb__hx_log(x[q]));
    }
    return bad;
}

/* Blocks of 1..ETS_BLOCK operands of mixed kinds whose ets_log_add differs
 * from the one-by-one sum of ets_log. */
static int64_t add_mismatches(uint64_t seed, int64_t blocks) {
    uint64_t r = seed;
    int64_t bad = 0;
    double q[ETS_BLOCK];
    for (int64_t b = 0; b < blocks; b++) {
        const int nq = 1 + (int)(next(&r) % ETS_BLOCK);
        const uint64_t mix = next(&r);
        for (int i = 0; i < nq; i++) {
            /* mostly regular (the fit's yhat), a block in four with some of every kind */
            const int kind = (mix & 3) ? 0 : (int)((mix >> (2 * i % 60)) & 3);
            q[i] = operand(&r, kind);
        }
        double one = 0.5 * (double)(int64_t)(next(&r) % 1000);
        const double start = one;
        for (int i = 0; i < nq; i++) one = one + ets_log(q[i]);
        const double blk = ets_log_add(start, q, nq);
        bad += sb_d2u(one) != sb_d2u(blk) && !(one != one && blk != blk);
    }
    return bad;
}
#pragma GCC pop_options
#endif

#include "sb_test.h"
#include "samebits.h"
#include "models/timeseries/ets.h"

SB_TEST(test_ets_avx2_log_lanes_are_the_scalar_log) {
#ifdef HAVE_V4
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2")) {
        SB_CHECK(strcmp(sb_ets_kernel(), "generic") == 0); /* no AVX2 here: the generic instance runs */
        return;
    }
    SB_CHECK(v4_mismatches(0x9E3779B97F4A7C15ull, 0, (int64_t)1 << 24, 0) == 0);
    SB_CHECK(v4_mismatches(0xD1B54A32D192ED03ull, 1, (int64_t)1 << 21, 0) == 0);
    SB_CHECK(v4_mismatches(0x8CB92BA72F3D8DD7ull, 2, (int64_t)1 << 21, 0) == 0);
    SB_CHECK(add_mismatches(0x2545F4914F6CDD1Dull, (int64_t)1 << 18) == 0);
    /* the separating arm: the same comparison parts a reordered sum */
    SB_CHECK(v4_mismatches(0x9E3779B97F4A7C15ull, 0, (int64_t)1 << 16, 1) > 0);
#else
    SB_CHECK(strcmp(sb_ets_kernel(), "generic") == 0); /* not an x86-64 GCC build: no AVX2 instance */
#endif
}

static uint64_t g_s = 11;
static double rnd(void) {
    g_s = g_s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)((int32_t)(g_s >> 40) % 4096) / 256.0;
}

/* Digests of every series of a batch fitted under model, with the kernel
 * SAMEBITS_ETS_KERNEL names (NULL: the default choice). */
static void digests(const char *model, const double *y, const int64_t *off, int ns, const char *kernel,
                    char out[][65]) {
    if (kernel) setenv("SAMEBITS_ETS_KERNEL", kernel, 1);
    else unsetenv("SAMEBITS_ETS_KERNEL");
    sb_ets_kernel_reset();
    sb_params *p = NULL;
    sb_ets *e = NULL;
    SB_CHECK(sb_params_create(&p) == SB_OK);
    SB_CHECK(sb_params_parse(p, model) == SB_OK);
    const sb_status st = sb_ets_fit(p, y, off, ns, NULL, &e);
    if (st != SB_OK) fprintf(stderr, "  %s: %s\n", model, sb_last_error());
    SB_CHECK(st == SB_OK && e);
    for (int i = 0; e && i < ns; i++) SB_CHECK(sb_ets_digest(e, i, out[i]) == SB_OK);
    sb_ets_free(e);
    sb_params_free(p);
}

SB_TEST(test_ets_avx2_fits_are_the_generic_fits) {
    enum { NS = 4 };
    static double y[4 * 160];
    const int len[NS] = {40, 160, 97, 128}, m[NS] = {4, 7, 7, 12};
    int64_t off[NS + 1] = {0};
    for (int i = 0; i < NS; i++) {
        for (int t = 0; t < len[i]; t++)
            y[off[i] + t] = (30.0 + 5.0 * i + 0.1 * t) * (1.0 + 0.2 * (double)(t % m[i]) / m[i]) + rnd();
        off[i + 1] = off[i] + len[i];
    }
    const char *models[] = {"error=mul,trend=add,damped_trend=true,seasonal=mul,seasonal_periods=7",
                            "error=mul,trend=add,seasonal=add,seasonal_periods=7",
                            "error=mul,trend=add,damped_trend=true", "error=mul",
                            "trend=add,damped_trend=true,seasonal=add,seasonal_periods=7",
                            "trend=add,seasonal=mul,seasonal_periods=7", "trend=add"};
    for (int mi = 0; mi < (int)(sizeof models / sizeof models[0]); mi++) {
        char gen[NS][65], dflt[NS][65];
        /* the seasonal models on the series of period 7 (two full periods) */
        const int lo = strstr(models[mi], "seasonal_periods") ? 1 : 0, n = lo ? 2 : NS;
        int64_t o[NS + 1];
        for (int i = 0; i <= n; i++) o[i] = off[lo + i] - off[lo];
        digests(models[mi], y + off[lo], o, n, "generic", gen);
        SB_CHECK(strcmp(sb_ets_kernel(), "generic") == 0);
        digests(models[mi], y + off[lo], o, n, NULL, dflt);
        for (int i = 0; i < n; i++) SB_CHECK(strcmp(gen[i], dflt[i]) == 0);
    }
    unsetenv("SAMEBITS_ETS_KERNEL");
    sb_ets_kernel_reset();
#ifdef SB_ETS_HAVE_AVX2
    __builtin_cpu_init();
    SB_CHECK(strcmp(sb_ets_kernel(), __builtin_cpu_supports("avx2") ? "avx2" : "generic") == 0);
#endif
}
