/*
 * quantize.h: gradients to integers (profile rule 5). The scale is a power of
 * two chosen from an order-free quantity (the largest |g|), so multiplying by it
 * is exact and every backend gets the same integers; rounding is half to even,
 * spelled out with exact float operations instead of trusting a conversion mode.
 */
#ifndef SB_KERNELS_QUANTIZE_H
#define SB_KERNELS_QUANTIZE_H
#include "compat.h"

/* Round v (|v| < 2^30, finite) to the nearest integer, ties to even. Exact:
 * t = trunc(v) is representable and v - t is computed without error. */
SB_FN sb_i32 sb_round_half_even_i32(float v) {
    sb_i32 t = (sb_i32)v; /* C truncates toward zero */
    float frac = v - (float)t;
    if (frac > 0.5f || (frac == 0.5f && (t & 1))) return t + 1;
    if (frac < -0.5f || (frac == -0.5f && (t & 1))) return t - 1;
    return t;
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
