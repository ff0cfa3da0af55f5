/*
 * quantize.h: gradients to integers (profile rule 5). The scale is a power of
 * two chosen from an order-free quantity (the largest |g|), so multiplying by it
 * is exact and every backend gets the same integers; rounding is half to even,
 * spelled out with exact float operations instead of trusting a conversion mode.
 */
#ifndef SB_KERNELS_QUANTIZE_H
#define SB_KERNELS_QUANTIZE_H
#include "compat.h"

/* Round v (|v| <= 2^30, finite) to the nearest integer, ties to even. Exact and
 * branch-free: for a = |v| < 2^23, a + 2^23 lands where the float spacing is 1,
 * so IEEE round-to-nearest-even (the profile's only rounding mode) rounds a to
 * an integer, ties to even, and subtracting 2^23 again is exact; a float at or
 * above 2^23 is already an integer, and adding and subtracting +0 keeps it.
 * Rounding half to even is symmetric, so the sign goes back on the integer.
 * The choices are made on the bits (integer masks), not by branches: the sign
 * of a gradient is a coin flip the CPU would mispredict. It used to be spelled
 * as truncation plus a comparison of the fraction with 0.5; both spellings give
 * the same integer for every float with |v| <= 2^30 (checked exhaustively:
 * tests/unit/test_perf_invariants.c with SAMEBITS_EXHAUSTIVE=1). */
SB_FN sb_i32 sb_round_half_even_i32(float v) {
    sb_u32 bits = sb_f2u(v), mag = bits & 0x7FFFFFFFu;
    float a = sb_u2f(mag);
    float m = sb_u2f((0u - (sb_u32)(mag < 0x4B000000u)) & 0x4B000000u); /* 2^23 if a < 2^23, else +0 */
    sb_i32 i = (sb_i32)((a + m) - m); /* an integer below 2^31: the conversion is exact */
    sb_i32 s = -(sb_i32)(bits >> 31); /* 0, or -1 when v is negative */
    return (i ^ s) - s;
}

/* The power-of-two exponent e such that maxabs * 2^e <= levels < maxabs * 2^(e+1)
 * (maxabs > 0, finite; levels a power of two >= 1), clamped to [-126, 127]. Integer work on the float's
 * exponent field, so it is exact and the same on every backend. */
SB_FN sb_i32 sb_quantize_exponent(float maxabs, float levels) {
    sb_i32 e = 0;
    float m = maxabs;
    /* Scale by powers of two (exact, no overflow: levels <= 2^30). */
    while (m * 2.0f <= levels && e < 127) { m = m * 2.0f; e++; }
    while (m > levels && e > -126) { m = m * 0.5f; e--; }
    return e;
}

/* 2^e as a float for -126 <= e <= 127, by construction of its bits. */
SB_FN float sb_pow2f(sb_i32 e) {
    return sb_u2f((sb_u32)(e + 127) << 23);
}

#endif
