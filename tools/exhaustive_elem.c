/*
 * exhaustive_elem.c: checks the profile's float32 elementary functions
 * (src/math/sb_elem.h) against a higher-precision reference over all 2^32
 * float bit patterns (or every K-th one).
 *
 * Build (needs MPFR: Debian package libmpfr-dev, `apt-get install -y libmpfr-dev`):
 *   gcc -O2 -std=c11 -ffp-contract=off -fno-fast-math -fexcess-precision=standard \
 *       -pthread -Iinclude tools/exhaustive_elem.c -o build/exhaustive_elem -lmpfr -lm
 * Usage:
 *   exhaustive_elem [FUNC ...] [--threads N] [--stride K] [--show N]
 *   FUNC: expf expm1f logf log1pf tanhf sigmoidf (the host paths), expf_int logf_int
 *   log1pf_int sigmoidf_int (the integer code a GPU runs); default: all ten
 *   --stride K tests every K-th bit pattern (quick runs); --show N prints up to
 *   N inputs that are not correctly rounded.
 *
 * Reference: x86-64 long double (64-bit significand) expl/expm1l/logl/log1pl/
 * tanhl and 1/(1+expl(-x)) for the logistic (arguments far outside the float
 * range are clamped first, see ld_exp).  When the long double value lies
 * within 2^-52 (relative) of a binary32 rounding boundary, so that the libm
 * error (a few long double ulps, 2^-63 each) could decide the rounding, the
 * input is re-evaluated with MPFR at 256 bits and rounded to binary32 once
 * (subnormals included, mp_round_flt);
 * these inputs are counted ("mpfr" column).  For every input the tool compares
 * the bits returned with the correctly rounded float (NaN results must be the
 * canonical 0x7FC00000) and measures the error in ulps of the reference's
 * binade against the long double (or MPFR) value.
 *
 * This is a test tool, not an identical path: it uses libm, long double, MPFR.
 */
#define _GNU_SOURCE
#include <math.h>
#include <mpfr.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/math/sb_elem.h"

typedef float (*mine_fn)(float);
typedef long double (*ld_fn)(long double);
typedef int (*mp_fn)(mpfr_t, const mpfr_t, mpfr_rnd_t);

/* Outside these clamps the results are +inf/+0 (exp) or 1/+0 (sigmoid) in
 * float by a huge margin; the clamps only keep libm off its slow overflow and
 * underflow (errno) paths. */
static long double ld_exp(long double x) {
    if (x > 20000.0L) return INFINITY;
    if (x < -20000.0L) return 0x1p-16000L;
    return expl(x);
}
static long double ld_expm1(long double x) {
    if (x > 20000.0L) return INFINITY;
    return expm1l(x);
}
static long double ld_sigmoid(long double x) {
    if (x > 300.0L) return 1.0L;
    if (x < -300.0L) return 0x1p-600L;
    return 1.0L / (1.0L + expl(-x));
}
static int mp_sigmoid(mpfr_t r, const mpfr_t x, mpfr_rnd_t rnd) {
    mpfr_t t;
    mpfr_init2(t, mpfr_get_prec(r));
    mpfr_neg(t, x, MPFR_RNDN);
    mpfr_exp(t, t, MPFR_RNDN);
    mpfr_add_ui(t, t, 1, MPFR_RNDN);
    mpfr_ui_div(r, 1, t, rnd);
    mpfr_clear(t);
    return 0;
}

static float f_expf(float x) { return sb_expf(x); }
static float f_expm1f(float x) { return sb_expm1f(x); }
static float f_logf(float x) { return sb_logf(x); }
static float f_log1pf(float x) { return sb_log1pf(x); }
static float f_tanhf(float x) { return sb_tanhf(x); }
static float f_sigmoidf(float x) { return sb_sigmoidf(x); }
/* the integer code itself (a GPU's path); the names above are the host's
 * double paths where those are taken (sb_elem_host.h) */
static float f_expf_int(float x) { return sb__expf_int(x); }
static float f_logf_int(float x) { return sb__logf_int(x); }
static float f_log1pf_int(float x) { return sb__log1pf_int(x); }
static float f_sigmoidf_int(float x) { return sb__sigmoidf_int(x); }

static const struct fn {
    const char *name;
    mine_fn mine;
    ld_fn ref;
    mp_fn mp;
} FNS[] = {
    {"expf", f_expf, ld_exp, mpfr_exp},
    {"expm1f", f_expm1f, ld_expm1, mpfr_expm1},
    {"logf", f_logf, logl, mpfr_log},
    {"log1pf", f_log1pf, log1pl, mpfr_log1p},
    {"tanhf", f_tanhf, tanhl, mpfr_tanh},
    {"sigmoidf", f_sigmoidf, ld_sigmoid, mp_sigmoid},
    {"expf_int", f_expf_int, ld_exp, mpfr_exp},
    {"logf_int", f_logf_int, logl, mpfr_log},
    {"log1pf_int", f_log1pf_int, log1pl, mpfr_log1p},
    {"sigmoidf_int", f_sigmoidf_int, ld_sigmoid, mp_sigmoid},
};
#define NFNS (sizeof FNS / sizeof FNS[0])

static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* Neighbours of a finite float, with 2^128 standing in above FLT_MAX. */
static long double next_up(float f) {
    if (f == 0x1.fffffep127f) return 0x1p128L;
    return (long double)nextafterf(f, INFINITY);
}
static long double next_down(float f) {
    if (f == -0x1.fffffep127f) return -0x1p128L;
    return (long double)nextafterf(f, -INFINITY);
}
/* ulp of the binade of float f (f finite). */
static long double ulp_of(float f) {
    float a = fabsf(f);
    if (a < 0x1p-126f) return 0x1p-149L;
    int e;
    frexpf(a, &e); /* a in [2^(e-1), 2^e) */
    return ldexpl(1.0L, e - 1 - 23);
}

struct stats {
    uint64_t tested, bad, mpfr_calls, nan_bad;
    long double max_err;
    uint32_t worst_in;
    float worst_out, worst_ref;
    int shown;
};

struct job {
    const struct fn *fn;
    uint64_t start, end, stride;
    int show;
    struct stats st;
};

static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

/* Rounds y (any precision, in MPFR's default exponent range) to the nearest
 * binary32, ties to even, with subnormals, without double rounding. */
static float mp_round_flt(mpfr_t y) {
    if (mpfr_nan_p(y)) return NAN;
    if (mpfr_inf_p(y) || mpfr_zero_p(y)) return mpfr_get_flt(y, MPFR_RNDN);
    mpfr_exp_t ex = mpfr_get_exp(y); /* |y| in [2^(ex-1), 2^ex) */
    int neg = mpfr_sgn(y) < 0;
    long p = 24;
    if (ex - 1 < -126) p = (long)ex + 149;
    if (p < 0) return neg ? -0.0f : 0.0f;
    if (p == 0) { /* |y| in [2^-150, 2^-149) */
        int above = mpfr_cmp_si_2exp(y, neg ? -1 : 1, -150);
        float r = (neg ? -above : above) > 0 ? 0x1p-149f : 0.0f;
        return neg ? -r : r;
    }
    mpfr_t t;
    mpfr_init2(t, (mpfr_prec_t)p);
    mpfr_set(t, y, MPFR_RNDN);
    float r = mpfr_get_flt(t, MPFR_RNDN); /* exact (or overflow to inf) */
    mpfr_clear(t);
    return r;
}

/* Correctly rounded reference and a high-precision value of f(x). */
static float reference(const struct fn *fn, float x, long double *val, int *used_mpfr) {
    long double v = fn->ref((long double)x);
    *used_mpfr = 0;
    *val = v;
    if (isnan(v)) return u2f(0x7FC00000u);
    float r = (float)v;
    if (isinf(v)) return r;
    /* distance to the two rounding boundaries around r */
    long double lo, hi;
    if (isinf(r)) {
        lo = (0x1.fffffep127L + 0x1p128L) / 2; hi = lo;
    } else {
        lo = ((long double)r + next_down(r)) / 2;
        hi = ((long double)r + next_up(r)) / 2;
    }
    long double tol = fabsl(v) * 0x1p-52L;
    if (fabsl(v - lo) <= tol || fabsl(v - hi) <= tol) {
        mpfr_t mx, my;
        mpfr_init2(mx, 64);
        mpfr_init2(my, 256);
        mpfr_set_flt(mx, x, MPFR_RNDN);
        fn->mp(my, mx, MPFR_RNDN);
        *val = mpfr_get_ld(my, MPFR_RNDN);
        r = mp_round_flt(my);
        mpfr_clears(mx, my, (mpfr_ptr)0);
        *used_mpfr = 1;
    }
    return r;
}

static void *worker(void *arg) {
    struct job *jb = arg;
    const struct fn *fn = jb->fn;
    struct stats *st = &jb->st;
    memset(st, 0, sizeof *st);
    for (uint64_t i = jb->start; i < jb->end; i += jb->stride) {
        uint32_t u = (uint32_t)i;
        float x = u2f(u);
        float y = fn->mine(x);
        uint32_t yb = f2u(y);
        long double v;
        int used;
        float r = reference(fn, x, &v, &used);
        uint32_t rb = f2u(r);
        st->tested++;
        st->mpfr_calls += (uint64_t)used;
        int bad = 0;
        long double err = 0;
        if (isnan(r)) {
            if (yb != 0x7FC00000u) { bad = 1; st->nan_bad++; err = INFINITY; }
        } else if (yb != rb) {
            bad = 1;
            if (isnan(y) || isinf(y) || isinf(r)) err = INFINITY;
            else err = fabsl((long double)y - v) / ulp_of(r);
        } else if (!isinf(r)) {
            err = fabsl((long double)y - v) / ulp_of(r);
        }
        if (bad) {
            st->bad++;
            if (st->shown < jb->show) {
                st->shown++;
                pthread_mutex_lock(&print_lock);
                printf("  %s(%a) [0x%08x] = %a [0x%08x], correctly rounded %a [0x%08x]%s\n",
                       fn->name, (double)x, u, (double)y, yb, (double)r, rb,
                       used ? " (mpfr)" : "");
                pthread_mutex_unlock(&print_lock);
            }
        }
        if (err > st->max_err || (st->tested == 1)) {
            if (err >= st->max_err) {
                st->max_err = err;
                st->worst_in = u;
                st->worst_out = y;
                st->worst_ref = r;
            }
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    int threads = 2, show = 0;
    uint64_t stride = 1;
    int sel[NFNS] = {0}, any = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--threads") && a + 1 < argc) threads = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--stride") && a + 1 < argc) stride = strtoull(argv[++a], 0, 0);
        else if (!strcmp(argv[a], "--show") && a + 1 < argc) show = atoi(argv[++a]);
        else {
            int found = 0;
            for (size_t f = 0; f < NFNS; f++)
                if (!strcmp(argv[a], FNS[f].name)) { sel[f] = 1; any = found = 1; }
            if (!found) {
                fprintf(stderr, "usage: %s [FUNC ...] [--threads N] [--stride K] [--show N]\n"
                                "FUNC: expf expm1f logf log1pf tanhf sigmoidf expf_int logf_int log1pf_int sigmoidf_int\n", argv[0]);
                return 2;
            }
        }
    }
    if (threads < 1) threads = 1;
    if (stride < 1) stride = 1;
    int fail = 0;
    printf("%-9s %12s %10s %10s %8s %8s  %s\n", "function", "tested", "max_ulp", "not_CR",
           "mpfr", "seconds", "worst input");
    for (size_t f = 0; f < NFNS; f++) {
        if (any && !sel[f]) continue;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        struct job *jobs = calloc((size_t)threads, sizeof *jobs);
        pthread_t *tid = calloc((size_t)threads, sizeof *tid);
        /* interleave blocks so threads get similar work: thread t takes
         * patterns t*stride, (t+threads)*stride, ... in blocks of 2^20 */
        uint64_t total = (1ull << 32);
        uint64_t per = (total / (uint64_t)threads / stride + 1) * stride;
        for (int t = 0; t < threads; t++) {
            jobs[t].fn = &FNS[f];
            jobs[t].start = per * (uint64_t)t;
            jobs[t].end = per * (uint64_t)(t + 1) < total ? per * (uint64_t)(t + 1) : total;
            jobs[t].stride = stride;
            jobs[t].show = show;
            pthread_create(&tid[t], NULL, worker, &jobs[t]);
        }
        struct stats all = {0};
        for (int t = 0; t < threads; t++) {
            pthread_join(tid[t], NULL);
            struct stats *s = &jobs[t].st;
            all.tested += s->tested;
            all.bad += s->bad;
            all.mpfr_calls += s->mpfr_calls;
            all.nan_bad += s->nan_bad;
            if (s->max_err >= all.max_err && s->tested) {
                all.max_err = s->max_err;
                all.worst_in = s->worst_in;
                all.worst_out = s->worst_out;
                all.worst_ref = s->worst_ref;
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        printf("%-9s %12llu %10.7Lf %10llu %8llu %8.1f  %a [0x%08x] -> %a (ref %a)\n",
               FNS[f].name, (unsigned long long)all.tested, all.max_err,
               (unsigned long long)all.bad, (unsigned long long)all.mpfr_calls, secs,
               (double)u2f(all.worst_in), all.worst_in, (double)all.worst_out,
               (double)all.worst_ref);
        fflush(stdout);
        if (all.bad) fail = 1;
        free(jobs);
        free(tid);
    }
    return fail;
}
