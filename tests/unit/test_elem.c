/*
 * test_elem.c: unit tests of the profile's float32 elementary functions
 * (src/math/sb_elem.h): exact bits of special values and known hard cases,
 * a deterministic sample checked against a long double libm reference
 * (|error| <= 0.5 ulp + 2^-20 ulp: the functions are correctly rounded), and
 * digests of the output bits over a fixed sample that must be the same on
 * every architecture (x86-64, aarch64, s390x under qemu-user).
 * The exhaustive proof over all 2^32 inputs is tools/exhaustive_elem.c.
 */
#include "sb_test.h"
#include "math/sb_elem.h"

#include <math.h>
#include <string.h>

typedef float (*elem_fn)(float);

static uint32_t bits_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float float_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* Deterministic input sequence: splitmix64. */
static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ------------------------------------------------------------------------
 * Exact bits: special values and hard cases.
 * ---------------------------------------------------------------------- */

struct bits_case { uint32_t in, out; };

static void check_bits(elem_fn f, const struct bits_case *c, int n, const char *name) {
    for (int i = 0; i < n; i++) {
        uint32_t got = bits_of(f(float_of(c[i].in)));
        if (got != c[i].out) {
            char msg[160];
            snprintf(msg, sizeof msg, "%s(0x%08x) = 0x%08x, expected 0x%08x", name,
                     (unsigned)c[i].in, (unsigned)got, (unsigned)c[i].out);
            sb_test_fail(__FILE__, __LINE__, msg);
        }
    }
}
#define CHECK_BITS(f, arr) check_bits(f, arr, (int)(sizeof arr / sizeof arr[0]), #f)

/* NaN inputs that must all give the canonical quiet NaN. */
static const uint32_t nan_inputs[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u,
                                      0x7FFFFFFFu, 0xFFFFFFFFu, 0x7FA5A5A5u, 0xFFC12345u};

SB_TEST(test_elem_nan_canonical) {
    elem_fn fns[] = {sb_expf, sb_expm1f, sb_logf, sb_log1pf, sb_tanhf, sb_sigmoidf};
    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++)
        for (size_t i = 0; i < sizeof nan_inputs / sizeof nan_inputs[0]; i++)
            SB_CHECK_EQ_U64(bits_of(fns[f](float_of(nan_inputs[i]))), 0x7FC00000u);
}

SB_TEST(test_elem_exp_special) {
    /* expected bits: MPFR (256 bits) rounded once to binary32 */
    static const struct bits_case c[] = {
        {0x00000000u, 0x3F800000u}, /* exp(+0) = 1 */
        {0x80000000u, 0x3F800000u}, /* exp(-0) = 1 */
        {0x7F800000u, 0x7F800000u}, /* exp(+inf) = +inf */
        {0xFF800000u, 0x00000000u}, /* exp(-inf) = +0 */
        {0x3F800000u, 0x402DF854u}, /* exp(1) = e */
        {0x3F000000u, 0x3FD3094Cu}, /* exp(1/2) */
        {0x42B17217u, 0x7F7FFF84u}, /* largest x with a finite result */
        {0x42B17218u, 0x7F800000u}, /* overflow */
        {0x7F7FFFFFu, 0x7F800000u},
        {0xC2AEAC4Fu, 0x00800026u}, /* just above 2^-126 */
        {0xC2AEAC50u, 0x007FFFE6u}, /* denormal result */
        {0xC2CFF1B4u, 0x00000001u}, /* result 2^-149 */
        {0xC2CFF1B5u, 0x00000000u}, /* underflow to +0 */
        {0xFF7FFFFFu, 0x00000000u},
        {0x00000001u, 0x3F800000u}, /* denormal input */
        {0x33800000u, 0x3F800001u}, /* exp(2^-24) = 1 + 2^-24 + 2^-49: just above a midpoint */
        {0x337FFFFFu, 0x3F800000u},
        {0xB3000000u, 0x3F800000u}, /* exp(-2^-25) = 1 - 2^-25 + 2^-51: just above a midpoint */
        {0xB3000001u, 0x3F7FFFFFu},
    };
    CHECK_BITS(sb_expf, c);
}

SB_TEST(test_elem_expm1_special) {
    /* expected bits: MPFR (256 bits) rounded once to binary32 */
    static const struct bits_case c[] = {
        {0x00000000u, 0x00000000u}, /* +0 */
        {0x80000000u, 0x80000000u}, /* -0 keeps its sign */
        {0x7F800000u, 0x7F800000u},
        {0xFF800000u, 0xBF800000u}, /* expm1(-inf) = -1 */
        {0x3F800000u, 0x3FDBF0A9u}, /* e - 1 */
        {0x41000000u, 0x453A3F54u}, /* expm1(8) */
        {0xC1000000u, 0xBF7FEA04u}, /* expm1(-8) */
        {0x42B17217u, 0x7F7FFF84u},
        {0x42B17218u, 0x7F800000u},
        {0xC18AA123u, 0xBF800000u}, /* expm1(-17.33) rounds to -1 */
        {0xC1A00000u, 0xBF800000u}, /* -20 -> -1 */
        {0x00000001u, 0x00000001u}, /* denormals are returned exactly */
        {0x80000001u, 0x80000001u},
        {0x007FFFFFu, 0x007FFFFFu},
        {0x3D7FFFFFu, 0x3D8415ABu}, /* around the series/table switch at 2^-4 */
        {0x3D800000u, 0x3D8415ACu},
        {0xBD800000u, 0xBD782A02u},
        {0x3E800000u, 0x3E916BC8u},
        {0xBE800000u, 0xBE62820Cu},
    };
    CHECK_BITS(sb_expm1f, c);
}

SB_TEST(test_elem_log_special) {
    /* expected bits: MPFR (256 bits) rounded once to binary32 */
    static const struct bits_case c[] = {
        {0x00000000u, 0xFF800000u}, /* log(+0) = -inf */
        {0x80000000u, 0xFF800000u}, /* log(-0) = -inf */
        {0x7F800000u, 0x7F800000u}, /* log(+inf) = +inf */
        {0xFF800000u, 0x7FC00000u}, /* log(-inf) = NaN */
        {0xBF800000u, 0x7FC00000u}, /* log(-1) = NaN */
        {0x80000001u, 0x7FC00000u}, /* log(-denormal) = NaN */
        {0x3F800000u, 0x00000000u}, /* log(1) = +0 */
        {0x402DF854u, 0x3F7FFFFFu}, /* log(e rounded to float) < 1 */
        {0x40000000u, 0x3F317218u}, /* log 2 */
        {0x3F000000u, 0xBF317218u}, /* log 1/2 */
        {0x41200000u, 0x40135D8Eu}, /* log 10 */
        {0x00000001u, 0xC2CE8ED0u}, /* log(2^-149) */
        {0x00800000u, 0xC2AEAC50u}, /* log(2^-126) */
        {0x7F7FFFFFu, 0x42B17218u}, /* log(FLT_MAX) */
        {0x3F800001u, 0x33FFFFFFu}, /* log(1 + 2^-23) */
        {0x3F7FFFFFu, 0xB3800000u}, /* log(1 - 2^-24) */
    };
    CHECK_BITS(sb_logf, c);
}

SB_TEST(test_elem_log1p_special) {
    /* expected bits: MPFR (256 bits) rounded once to binary32 */
    static const struct bits_case c[] = {
        {0x00000000u, 0x00000000u},
        {0x80000000u, 0x80000000u}, /* -0 keeps its sign */
        {0x7F800000u, 0x7F800000u},
        {0xBF800000u, 0xFF800000u}, /* log1p(-1) = -inf */
        {0xBF800001u, 0x7FC00000u}, /* < -1: NaN */
        {0xFF800000u, 0x7FC00000u},
        {0x00000001u, 0x00000001u}, /* denormals exactly */
        {0x80000001u, 0x80000001u},
        {0x3F800000u, 0x3F317218u}, /* log1p(1) = log 2 */
        {0xBF000000u, 0xBF317218u}, /* log1p(-1/2) = -log 2 */
        {0xBF7FFFFFu, 0xC1851592u}, /* log1p(-1 + 2^-24) */
        {0x7F7FFFFFu, 0x42B17218u},
        {0x3BFFFFFFu, 0x3BFF0152u}, /* around the series/table switch at 2^-7 */
        {0x3C000000u, 0x3BFF0153u},
        {0xBC000000u, 0xBC0080ACu},
        {0x3E800000u, 0x3E647FBEu},
        {0xBE800000u, 0xBE934B11u},
        {0x4B800000u, 0x41851592u}, /* log1p(2^24) */
    };
    CHECK_BITS(sb_log1pf, c);
}

SB_TEST(test_elem_tanh_special) {
    /* expected bits: MPFR (256 bits) rounded once to binary32 */
    static const struct bits_case c[] = {
        {0x00000000u, 0x00000000u},
        {0x80000000u, 0x80000000u}, /* tanh(-0) = -0 */
        {0x7F800000u, 0x3F800000u},
        {0xFF800000u, 0xBF800000u},
        {0x00000001u, 0x00000001u},
        {0x80000001u, 0x80000001u},
        {0x3F000000u, 0x3EEC9A9Fu}, /* tanh(1/2) */
        {0xBF000000u, 0xBEEC9A9Fu},
        {0x3F800000u, 0x3F42F7D6u}, /* tanh(1) */
        {0xBF800000u, 0xBF42F7D6u},
        {0x41000000u, 0x3F7FFFFCu}, /* tanh(8) */
        {0x41100000u, 0x3F7FFFFFu}, /* tanh(9) */
        {0x41200000u, 0x3F800000u}, /* tanh(10) rounds to 1 */
        {0x39800000u, 0x39800000u}, /* tanh(2^-12) */
        {0x3A000000u, 0x39FFFFFFu}, /* tanh(2^-11) */
        {0x3D800000u, 0x3D7FAACDu},
        {0x7F7FFFFFu, 0x3F800000u},
    };
    CHECK_BITS(sb_tanhf, c);
}

SB_TEST(test_elem_sigmoid_special) {
    /* expected bits: MPFR (256 bits) rounded once to binary32 */
    static const struct bits_case c[] = {
        {0x00000000u, 0x3F000000u}, /* 0.5 */
        {0x80000000u, 0x3F000000u},
        {0x7F800000u, 0x3F800000u}, /* 1 */
        {0xFF800000u, 0x00000000u}, /* +0 */
        {0x3F800000u, 0x3F3B26A8u}, /* sigmoid(1) */
        {0xBF800000u, 0x3E89B2B1u}, /* sigmoid(-1) */
        {0x3F000000u, 0x3F1F597Fu}, /* sigmoid(1/2) */
        /* 1/2 + x/4 exactly on a rounding midpoint; -x^3/48 decides: */
        {0x34000000u, 0x3F000000u}, /* x = 2^-23 */
        {0x34C00000u, 0x3F000001u}, /* x = 3*2^-23 */
        {0xB3800000u, 0x3F000000u}, /* x = -2^-24 */
        {0xB4400000u, 0x3EFFFFFFu}, /* x = -3*2^-24 */
        {0x33800000u, 0x3F000000u}, /* x = 2^-24 */
        {0x34400000u, 0x3F000001u}, /* x = 3*2^-24 */
        {0xB4000000u, 0x3EFFFFFFu}, /* x = -2^-23 */
        {0xB4C00000u, 0x3EFFFFFDu}, /* x = -3*2^-23 */
        {0x41880000u, 0x3F7FFFFFu}, /* sigmoid(17) */
        {0x41900000u, 0x3F800000u}, /* sigmoid(18) rounds to 1 */
        {0xC2AE0000u, 0x00B33687u}, /* sigmoid(-87) */
        {0xC2C80000u, 0x0000001Bu}, /* sigmoid(-100): denormal */
        {0xC2CFF1B4u, 0x00000001u}, /* 2^-149 */
        {0xC2CFF1B5u, 0x00000000u},
        {0xC2D00000u, 0x00000000u},
    };
    CHECK_BITS(sb_sigmoidf, c);
}

/* ------------------------------------------------------------------------
 * Sampled comparison with a long double reference.
 * ---------------------------------------------------------------------- */

static long double ld_sigmoid(long double x) { return 1.0L / (1.0L + expl(-x)); }

/* ulp of the binade of the float nearest to v (v finite). */
static long double ulp_near(long double v) {
    float r = (float)v;
    float a = r < 0 ? -r : r;
    if (a < 0x1p-126f) return 0x1p-149L;
    if (isinf(a)) return 0x1p104L;
    int e;
    frexpf(a, &e);
    return ldexpl(1.0L, e - 24);
}

/* 1 if f(x) is within 0.5 ulp (+2^-20 ulp) of the reference value v. */
static int close_to_ref(float y, long double v) {
    if (isnan(v)) return bits_of(y) == 0x7FC00000u;
    float r = (float)v;
    if (isinf(r)) return bits_of(y) == bits_of(r);
    if (isnan(y) || isinf(y)) return 0;
    long double err = fabsl((long double)y - v) / ulp_near(v);
    return err <= 0.5L + 0x1p-20L;
}

/* A point of [lo, hi] on the grid lo + k*step, step the smallest power of two
 * with (hi - lo)/step <= 2^24, chosen by r.  k*step is exact, so the one
 * rounding of the sum is the same whether or not the compiler contracts (the
 * inputs must not depend on -ffp-contract). */
static float dense_point(float lo, float hi, uint64_t r) {
    float step = 0x1p-60f;
    while ((hi - lo) / step > 16777216.0f) step *= 2.0f;
    uint32_t n = (uint32_t)((hi - lo) / step);
    uint32_t k = (uint32_t)((r >> 32) % (n + 1u));
    return lo + (float)k * step;
}

static void sample_vs_ref(elem_fn f, long double (*ref)(long double), const char *name,
                          float lo, float hi, uint64_t seed, int nrand, int ndense) {
    uint64_t s = seed;
    int bad = 0;
    for (int i = 0; i < nrand + ndense; i++) {
        float x;
        if (i < nrand) {
            x = float_of((uint32_t)(splitmix64(&s) >> 32)); /* whole float range */
        } else {
            x = dense_point(lo, hi, splitmix64(&s));
        }
        float y = f(x);
        long double v = ref((long double)x);
        if (!close_to_ref(y, v)) {
            if (bad++ < 5) {
                char msg[200];
                snprintf(msg, sizeof msg, "%s(%a [0x%08x]) = %a, reference %La", name,
                         (double)x, (unsigned)bits_of(x), (double)y, v);
                sb_test_fail(__FILE__, __LINE__, msg);
            }
        }
    }
    SB_CHECK(bad == 0);
}

#define NRAND 16384
#define NDENSE 16384

SB_TEST(test_elem_exp_sample) {
    sample_vs_ref(sb_expf, expl, "sb_expf", -104.0f, 89.0f, 1, NRAND, NDENSE);
    sample_vs_ref(sb_expf, expl, "sb_expf", -1.0f, 1.0f, 2, 0, NDENSE / 2);
}
SB_TEST(test_elem_expm1_sample) {
    sample_vs_ref(sb_expm1f, expm1l, "sb_expm1f", -18.0f, 89.0f, 3, NRAND, NDENSE);
    sample_vs_ref(sb_expm1f, expm1l, "sb_expm1f", -0.25f, 0.25f, 4, 0, NDENSE / 2);
}
SB_TEST(test_elem_log_sample) {
    sample_vs_ref(sb_logf, logl, "sb_logf", 0.0f, 4.0f, 5, NRAND, NDENSE);
    sample_vs_ref(sb_logf, logl, "sb_logf", 0.98f, 1.02f, 6, 0, NDENSE / 2);
}
SB_TEST(test_elem_log1p_sample) {
    sample_vs_ref(sb_log1pf, log1pl, "sb_log1pf", -1.0f, 4.0f, 7, NRAND, NDENSE);
    sample_vs_ref(sb_log1pf, log1pl, "sb_log1pf", -0.02f, 0.02f, 8, 0, NDENSE / 2);
}
SB_TEST(test_elem_tanh_sample) {
    sample_vs_ref(sb_tanhf, tanhl, "sb_tanhf", -10.0f, 10.0f, 9, NRAND, NDENSE);
    sample_vs_ref(sb_tanhf, tanhl, "sb_tanhf", -0.1f, 0.1f, 10, 0, NDENSE / 2);
}
SB_TEST(test_elem_sigmoid_sample) {
    sample_vs_ref(sb_sigmoidf, ld_sigmoid, "sb_sigmoidf", -104.0f, 32.0f, 11, NRAND, NDENSE);
    sample_vs_ref(sb_sigmoidf, ld_sigmoid, "sb_sigmoidf", -0.01f, 0.01f, 12, 0, NDENSE / 2);
}

/* ------------------------------------------------------------------------
 * Cross-architecture identity: digest (FNV-1a 64 over little-endian output
 * bits) of each function over 2^16 splitmix patterns plus 2^16 dense points.
 * The expected values were recorded on x86-64; since the functions are
 * correctly rounded, they are the digests of the exact results and must be
 * the same everywhere.
 * ---------------------------------------------------------------------- */

static uint64_t elem_digest(elem_fn f, float lo, float hi, uint64_t seed) {
    uint64_t h = 0xCBF29CE484222325ull, s = seed;
    for (int i = 0; i < 2 * 65536; i++) {
        float x;
        if (i < 65536) x = float_of((uint32_t)(splitmix64(&s) >> 32));
        else x = dense_point(lo, hi, splitmix64(&s));
        uint32_t b = bits_of(f(x));
        for (int k = 0; k < 4; k++) {
            h ^= (b >> (8 * k)) & 0xFFu;
            h *= 0x100000001B3ull;
        }
    }
    return h;
}

SB_TEST(test_elem_digest) {
    SB_CHECK_EQ_U64(elem_digest(sb_expf, -104.0f, 89.0f, 101), 0x599A8EB54A53AC41ull);
    SB_CHECK_EQ_U64(elem_digest(sb_expm1f, -18.0f, 89.0f, 102), 0xF934447FD5EBF688ull);
    SB_CHECK_EQ_U64(elem_digest(sb_logf, 0.0f, 4.0f, 103), 0x9C8DB1E915275251ull);
    SB_CHECK_EQ_U64(elem_digest(sb_log1pf, -1.0f, 4.0f, 104), 0xDC9792C293BCB680ull);
    SB_CHECK_EQ_U64(elem_digest(sb_tanhf, -10.0f, 10.0f, 105), 0xFE84D226CAEA7477ull);
    SB_CHECK_EQ_U64(elem_digest(sb_sigmoidf, -104.0f, 32.0f, 106), 0x85992224D5F264ADull);
}

/* sb_sigmoid_expneg is sb_sigmoidf and sb_expf(-|x|) bit for bit: every
 * 4099th float, and every float within 2^12 ulps of its range's edges. */
SB_TEST(test_elem_sigmoid_expneg_is_the_two_functions) {
    const uint32_t edges[] = {0x38000000u, 0x42000000u, 0xB8000000u, 0xC2000000u, 0x7F800000u, 0xFF800000u, 0u,
                              0x80000000u};
    int bad = 0;
    for (uint64_t v = 0; v < ((uint64_t)1 << 32) && bad < 5; v += 4099) {
        const float x = sb_u2f((uint32_t)v);
        float en;
        const float sg = sb_sigmoid_expneg(x, &en);
        const float want_en = sb_expf(sb_u2f(((uint32_t)v & 0x7FFFFFFFu) | 0x80000000u));
        if (sb_f2u(sg) != sb_f2u(sb_sigmoidf(x)) || sb_f2u(en) != sb_f2u(want_en)) bad++;
    }
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        for (int32_t d = -4096; d <= 4096; d++) {
            const uint32_t v = edges[i] + (uint32_t)d;
            const float x = sb_u2f(v);
            float en;
            const float sg = sb_sigmoid_expneg(x, &en);
            const float want_en = sb_expf(sb_u2f((v & 0x7FFFFFFFu) | 0x80000000u));
            if (sb_f2u(sg) != sb_f2u(sb_sigmoidf(x)) || sb_f2u(en) != sb_f2u(want_en)) bad++;
        }
    SB_CHECK(bad == 0);
}

/* The host's double paths (sb_elem_host.h) against the integer code they
 * stand in for, bit for bit, on every 4099th input and a band around each
 * path's range edges; all 2^32 inputs were checked the same way and against
 * MPFR (tools/exhaustive_elem.c). A polynomial coefficient off by one unit,
 * or a guard band of zero, fails it. */
SB_TEST(test_elem_host_paths_equal_the_integer_code) {
    static const uint32_t edges[] = {0x32000000u, 0x42AE0000u, 0x38000000u, 0x42000000u, 0x33800000u, 0x3F800000u,
                                     0x3C800000u, 0x3F7C0000u, 0x3F820000u, 0x00800000u, 0x7F800000u};
    int bad = 0;
    for (int pass = 0; pass < 2; pass++) {
        const uint64_t step = pass == 0 ? 4099 : 1;
        const size_t nedge = pass == 0 ? 1 : sizeof edges / sizeof edges[0];
        for (size_t i = 0; i < nedge; i++) {
            const uint64_t b = pass == 0 ? 0 : (uint64_t)(edges[i] | 0u) - 2048, e = pass == 0 ? ((uint64_t)1 << 32) : b + 4096;
            for (uint64_t w = b; w < e; w += step)
                for (int s = 0; s < 2; s++) {
                    const float x = sb_u2f((uint32_t)w ^ (s ? 0x80000000u : 0u));
                    float e1 = 0.0f, e2 = 0.0f;
                    bad += sb_f2u(sb_expf(x)) != sb_f2u(sb__expf_int(x));
                    bad += sb_f2u(sb_logf(x)) != sb_f2u(sb__logf_int(x));
                    bad += sb_f2u(sb_log1pf(x)) != sb_f2u(sb__log1pf_int(x));
                    bad += sb_f2u(sb_sigmoidf(x)) != sb_f2u(sb__sigmoidf_int(x));
                    bad += sb_f2u(sb_sigmoid_expneg(x, &e1)) != sb_f2u(sb__sigmoid_expneg_int(x, &e2));
                    bad += sb_f2u(e1) != sb_f2u(e2);
                }
        }
    }
    SB_CHECK(bad == 0);
}

/* sb__sigmoidf_n (the gradients' block form) is sb_sigmoidf value by value:
 * every 4099th input, and bands around the double path's range edges, each
 * given in blocks of odd lengths (so a block ends mid-way and lanes of both
 * paths share a block). A lane whose unsafe result is kept, or a select of
 * the wrong numerator, fails it. */
SB_TEST(test_elem_sigmoid_block_is_sigmoid) {
    static const uint32_t edges[] = {0x38000000u, 0x42000000u, 0xB8000000u, 0xC2000000u, 0x42D00000u, 0xC2D00000u,
                                     0x7F800000u, 0xFF800000u, 0x33800000u};
    enum { N = 4096 + 37 };
    static float x[N], got[N];
    int bad = 0;
    int64_t nx = 0;
    for (uint64_t v = 0; v < ((uint64_t)1 << 32); v += 4099) {
        x[nx++] = sb_u2f((uint32_t)v);
        if (nx == N || v + 4099 >= ((uint64_t)1 << 32)) {
            for (int64_t o = 0; o < nx; o += 37) sb__sigmoidf_n(x + o, got + o, nx - o < 37 ? nx - o : 37);
            for (int64_t i = 0; i < nx; i++) bad += sb_f2u(got[i]) != sb_f2u(sb_sigmoidf(x[i]));
            nx = 0;
        }
    }
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        for (int32_t d = -2048; d < 2048; d++) x[d + 2048] = sb_u2f(edges[i] + (uint32_t)d);
        sb__sigmoidf_n(x, got, 4096);
        for (int32_t k = 0; k < 4096; k++) bad += sb_f2u(got[k]) != sb_f2u(sb_sigmoidf(x[k]));
    }
    SB_CHECK(bad == 0);
}
