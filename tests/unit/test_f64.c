/*
 * test_f64.c: the integer binary64 of kernel bodies (src/kernels/f64.h) gives
 * the host's double bits: widening every class of float, and add, subtract
 * and multiply on random operands across exponents (cancellations, far
 * apart, carries), on operands built to round at exact ties, and on the sums
 * and products of floats the families form; sqrt on the same and on squares
 * and their neighbours.
 */
#include "sb_test.h"
#include "kernels/f64.h"

#include <math.h>
#include <string.h>

static sb_u64 bits(double v) {
    sb_u64 u;
    memcpy(&u, &v, 8);
    return u;
}
static double val(sb_u64 u) {
    double v;
    memcpy(&v, &u, 8);
    return v;
}

static uint64_t next(uint64_t *r) {
    *r ^= *r << 13, *r ^= *r >> 7, *r ^= *r << 17;
    return *r;
}

/* A normal double of exponent within 2^+-span of 1, random sign and mantissa,
 * or (1 in 16) zero. */
static sb_u64 operand(uint64_t *r, int span) {
    const uint64_t w = next(r);
    if ((w & 15u) == 0) return (w & 16u) ? (sb_u64)1 << 63 : 0u;
    const int e = 1023 + (int)((w >> 8) % (uint64_t)(2 * span + 1)) - span;
    return (w & ((sb_u64)1 << 63)) | ((sb_u64)e << 52) | (next(r) & SB_F64_FRAC);
}

SB_TEST(test_f64_widening_is_exact) {
    uint64_t r = 0x9e3779b97f4a7c15ull;
    int bad = 0;
    for (int i = 0; i < 2000000; i++) {
        sb_u32 u = (sb_u32)next(&r);
        if (i < 4096) u = (sb_u32)i | ((i & 1) ? 0x80000000u : 0u); /* subnormals and zeros */
        float f;
        memcpy(&f, &u, 4);
        if (((u >> 23) & 0xffu) == 0xffu) continue; /* no infinities or NaN in the domain */
        bad += sb_f64_of(f) != bits((double)f);
    }
    SB_CHECK(bad == 0);
}

SB_TEST(test_f64_add_sub_mul_match_the_host) {
    uint64_t r = 0x243f6a8885a308d3ull;
    int bad_add = 0, bad_sub = 0, bad_mul = 0;
    for (int i = 0; i < 3000000; i++) {
        const int span = (i % 3 == 0) ? 2 : (i % 3 == 1) ? 60 : 400; /* near (cancellation), apart, far */
        const sb_u64 a = operand(&r, span), b = i % 7 == 0 ? (a ^ (next(&r) & 0xfu)) : operand(&r, span);
        bad_add += sb_f64_add(a, b) != bits(val(a) + val(b));
        bad_sub += sb_f64_sub(a, b) != bits(val(a) - val(b));
        bad_mul += sb_f64_mul(a, b) != bits(val(a) * val(b));
    }
    SB_CHECK(bad_add == 0);
    SB_CHECK(bad_sub == 0);
    SB_CHECK(bad_mul == 0);
}

SB_TEST(test_f64_ties_round_to_even) {
    int bad = 0;
    /* 1 + 2^-53 (a tie: to 1), 1 + 3 * 2^-53 (a tie: up), and their neighbours */
    const double one = 1.0, h = 0x1p-53;
    const double cases[][2] = {{one, h}, {one, 3 * h}, {one, h * (1 + 0x1p-52)}, {one, -h}, {one + 0x1p-52, h},
                               {0x1p52, 0.5}, {0x1p52 + 1, 0.5}, {0x1p53, 1.0}, {0x1p53 + 2, 1.0}, {-0x1p53, -1.0},
                               {1.5, -1.5}, {0.0, -0.0}, {-0.0, -0.0}, {-0.0, 0.0}, {3.0, -0.0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const sb_u64 a = bits(cases[i][0]), b = bits(cases[i][1]);
        bad += sb_f64_add(a, b) != bits(cases[i][0] + cases[i][1]);
        bad += sb_f64_mul(a, b) != bits(cases[i][0] * cases[i][1]);
    }
    /* products on a tie: (1 + 2^-26)(1 + 2^-27) and odd mantissas whose product's 54th bit decides */
    uint64_t r = 0x13198a2e03707344ull;
    for (int i = 0; i < 1000000; i++) {
        const sb_u64 a = bits(1.0 + (double)(next(&r) >> 38) * 0x1p-26), b = bits(1.0 + (double)(next(&r) >> 37) * 0x1p-27);
        bad += sb_f64_mul(a, b) != bits(val(a) * val(b));
    }
    SB_CHECK(bad == 0);
}

SB_TEST(test_f64_float_sums_and_products_match_the_host) {
    /* the shapes k-means forms: running sums of widened floats, w * x, (x - c)^2 */
    uint64_t r = 0x452821e638d01377ull;
    int bad = 0;
    for (int run = 0; run < 200; run++) {
        double s = 0.0, q = 0.0;
        sb_u64 ss = 0u, qq = 0u;
        for (int i = 0; i < 5000; i++) {
            sb_u32 u = (sb_u32)next(&r);
            u = (u & 0x807fffffu) | ((sb_u32)(100 + (int)((u >> 23) % 60u)) << 23);
            float x, w = (float)(next(&r) % 1000u) * 0.01f, c = (float)(int)(next(&r) % 200u) * 0.37f - 37.0f;
            memcpy(&x, &u, 4);
            s = s + (double)w * (double)x;
            ss = sb_f64_add(ss, sb_f64_mul(sb_f64_of(w), sb_f64_of(x)));
            const double t = (double)x - (double)c;
            q = q + t * t;
            const sb_u64 tt = sb_f64_sub(sb_f64_of(x), sb_f64_of(c));
            qq = sb_f64_add(qq, sb_f64_mul(tt, tt));
        }
        bad += ss != bits(s);
        bad += qq != bits(q);
    }
    SB_CHECK(bad == 0);
}

SB_TEST(test_f64_sqrt_matches_the_host) {
    /* random positive normals across exponents (odd and even), squares of
     * doubles (exact roots), their neighbours (roots just off a representable
     * value, where the sticky bit decides), and the sums of squared float
     * differences agglomerative clustering takes roots of */
    uint64_t r = 0xa4093822299f31d0ull;
    int bad = 0;
    for (int i = 0; i < 3000000; i++) {
        sb_u64 a = operand(&r, i % 2 ? 1000 : 40) & ~((sb_u64)1 << 63);
        if (i % 5 == 1) { /* a square and its neighbours */
            const double y = val(operand(&r, 200) & ~((sb_u64)1 << 63));
            if (y == 0.0) continue; /* a square's neighbour below zero is outside the domain */
            a = bits(y * y) + (sb_u64)(int64_t)((int)(next(&r) % 3u) - 1);
        }
        bad += sb_f64_sqrt(a) != bits(sqrt(val(a)));
    }
    const double cases[] = {0.0, -0.0, 1.0, 2.0, 4.0, 0x1p-1022, 0x1.fffffffffffffp1023, 0x1p-1021, 0x1.8p+1, 1.0 - 0x1p-53};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) bad += sb_f64_sqrt(bits(cases[i])) != bits(sqrt(cases[i]));
    for (int run = 0; run < 20000; run++) {
        sb_u64 qq = 0u;
        double q = 0.0;
        for (int f = 0; f < 1 + run % 50; f++) {
            float x = (float)(int)(next(&r) % 2000u) * 0.013f, c = (float)(int)(next(&r) % 2000u) * 0.011f;
            const double t = (double)x - (double)c;
            q = q + t * t;
            const sb_u64 tt = sb_f64_sub(sb_f64_of(x), sb_f64_of(c));
            qq = sb_f64_add(qq, sb_f64_mul(tt, tt));
        }
        bad += sb_f64_sqrt(qq) != bits(sqrt(q));
    }
    SB_CHECK(bad == 0);
}

SB_TEST(test_f64_div_matches_the_host) {
    /* random operands across exponents (quotients normal), exact quotients
     * (a product divided by a factor) and their neighbours, where the
     * remainder's sticky bit decides the rounding */
    uint64_t r = 0x13198a2e03707344ull;
    int bad = 0;
    for (int i = 0; i < 3000000; i++) {
        sb_u64 a = operand(&r, i % 2 ? 400 : 30), b = operand(&r, i % 2 ? 400 : 30);
        if (!(b << 1)) continue; /* a zero divisor is outside the domain */
        if (i % 5 == 1) {
            a = bits(val(b) * val(operand(&r, 100) | ((sb_u64)1 << 52))) + (sb_u64)(int64_t)((int)(next(&r) % 3u) - 1);
        }
        /* the domain: a zero or normal, the quotient zero or normal */
        if ((a << 1) && (((a >> 52) & 0x7ffu) == 0u || ((a >> 52) & 0x7ffu) == 0x7ffu)) continue;
        const double want = val(a) / val(b);
        if (want != 0.0 && fpclassify(want) != FP_NORMAL) continue;
        bad += sb_f64_div(a, b) != bits(want);
    }
    const double cases[][2] = {{1.0, 3.0}, {2.0, 3.0}, {0.0, 5.0}, {-0.0, 5.0}, {1.0, 1.0}, {1.0 - 0x1p-53, 1.0},
                               {1.0, 1.0 - 0x1p-53}, {0x1.fffffffffffffp0, 0x1.0000000000001p0}, {7.0, -2.0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        bad += sb_f64_div(bits(cases[i][0]), bits(cases[i][1])) != bits(cases[i][0] / cases[i][1]);
    SB_CHECK(bad == 0);
}

SB_TEST(test_f64_to_f32_matches_the_host) {
    /* every float range: normals, the subnormal floats, the edges of
     * underflow and overflow, and the halfway cases between two floats */
    uint64_t r = 0xa4093822299f31d1ull;
    int bad = 0;
    for (int i = 0; i < 3000000; i++) {
        sb_u64 a = operand(&r, i % 3 == 0 ? 180 : i % 3 == 1 ? 40 : 1000);
        if (i % 7 == 3) { /* a float's value and its halfway neighbours, near and below the subnormal range */
            const int e = 1023 + (int)(next(&r) % 60u) - 160;
            a = ((sb_u64)(unsigned)e << 52) | (next(&r) & SB_F64_FRAC & ~((((sb_u64)1) << 28) - 1u));
            a |= (sb_u64)(next(&r) % 3u) << 27; /* exactly half an ulp, or none, or a quarter... */
        }
        const float want = (float)val(a), got = sb_f64_to_f32(a);
        bad += memcmp(&want, &got, 4) != 0;
    }
    const double cases[] = {0.0, -0.0, 0x1p-149, 0x1p-150, 0x1.0000000000001p-150, 0x1.8p-149, 0x1p-126,
                            0x1.fffffep127, 0x1.ffffffp127, 0x1p128, 1.0 + 0x1p-24, 1.0 + 0x1p-23 + 0x1p-24, 0x1p-151};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const float want = (float)cases[i], got = sb_f64_to_f32(bits(cases[i]));
        bad += memcmp(&want, &got, 4) != 0;
    }
    SB_CHECK(bad == 0);
}
