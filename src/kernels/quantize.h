/*
 * quantize.h: gradients to integers (profile rule 5). The scale is a power of
 * two chosen from an order-free quantity (the largest |g|), so multiplying by it
 * is exact and every backend gets the same integers; rounding is half to even,
 * spelled out with exact float operations instead of trusting a conversion mode.
 */
#ifndef SB_KERNELS_QUANTIZE_H
#define SB_KERNELS_QUANTIZE_H
#include "compat.h"

/* Round v to the nearest integer, ties to even, defined for every float: the
 * one spelling the CPU, CUDA and OpenCL backends compile (this header is part
 * of the kernel source every backend builds: kernels/entry/tree_entry.h's
 * k_quantize on the GPUs, gbdt.c and tdev_host.c on the host), so no backend
 * depends on C's conversion of an out-of-range float, which is undefined
 * (+inf gave INT_MIN on x86-64 and INT_MAX on aarch64 and s390x).
 *   |v| < 2^31: the nearest integer, ties to even (exact: below).
 *   v <= -2^31 and -inf: INT32_MIN (-2^31 itself is exact); v >= 2^31 and
 *   +inf: INT32_MAX (saturated). NaN, of any sign or payload: 0.
 * Training never relies on the saturation: it refuses a non-finite gradient
 * by name before quantizing (sb_k_maxkey_*, below), and its scale keeps every
 * finite |g * scale| <= 2^30; the saturation makes the function total, so a
 * caller that forgets cannot split the backends.
 * Exact and branch-free: for a = |v| < 2^23, a + 2^23 lands where the float
 * spacing is 1, so IEEE round-to-nearest-even (the profile's only rounding
 * mode) rounds a to an integer, ties to even, and subtracting 2^23 again is
 * exact; a float at or above 2^23 is already an integer, and adding and
 * subtracting +0 keeps it. Rounding half to even is symmetric, so the sign
 * goes back on the integer. Magnitudes >= 2^31 (and inf, NaN) are zeroed
 * before the conversion and their result chosen by masks. The choices are
 * made on the bits (integer masks), not by branches: the sign of a gradient is
 * a coin flip the CPU would mispredict. It used to be spelled as truncation
 * plus a comparison of the fraction with 0.5; both spellings give the same
 * integer for every float with |v| <= 2^30 (checked exhaustively:
 * tests/unit/test_perf_invariants.c with SAMEBITS_EXHAUSTIVE=1), and the
 * edge values are tests/unit/test_kernels.c's. */
SB_FN sb_i32 sb_round_half_even_i32(float v) {
    sb_u32 bits = sb_f2u(v), mag = bits & 0x7FFFFFFFu;
    sb_i32 small = -(sb_i32)(mag < 0x4F000000u);   /* -1 when |v| < 2^31, else 0 */
    sb_i32 nan = -(sb_i32)(mag > 0x7F800000u);     /* -1 when v is a NaN */
    float a = sb_u2f(mag & (sb_u32)small);         /* |v|, or +0 for the values the masks decide */
    float m = sb_u2f((0u - (sb_u32)(mag < 0x4B000000u)) & 0x4B000000u); /* 2^23 if a < 2^23, else +0 */
    sb_i32 i = (sb_i32)((a + m) - m); /* an integer below 2^31: the conversion is exact */
    sb_i32 s = -(sb_i32)(bits >> 31); /* 0, or -1 when v is negative */
    sb_i32 sat = 0x7FFFFFFF ^ s;      /* INT32_MAX, or INT32_MIN when v is negative */
    return (((i ^ s) - s) & small) | (sat & ~small & ~nan);
}

/* Keys under which gradients and hessians compete for their maximum, as
 * unsigned integers (an order-free max: the same on every backend, however
 * rows are split among threads or work-groups). For finite and infinite
 * values the unsigned order of a key is the order of the magnitude, so the
 * largest key's float is the largest |g| (or h), the quantity the scale is
 * chosen from; every NaN keys above +inf, whatever its sign and payload, so
 * the maximum is non-finite (sb_k_key_finite) exactly when some value is.
 * One reduction thus carries the scale and the finite check that must come
 * before quantizing. Gradient: the magnitude's bits. */
SB_FN sb_u32 sb_k_maxkey_abs(float g) {
    return sb_f2u(g) & 0x7FFFFFFFu;
}

/* Hessian: its bits when positive (a hessian <= 0 sets no scale and keys 0,
 * as the float maximum this replaces ignored it), its magnitude's bits when
 * it is not finite (-inf and NaNs of either sign win too). */
SB_FN sb_u32 sb_k_maxkey_pos(float h) {
    sb_u32 b = sb_f2u(h), mag = b & 0x7FFFFFFFu;
    sb_u32 keep = ((b >> 31) ^ 1u) | (sb_u32)(mag >= 0x7F800000u);
    return mag & (0u - keep);
}

/* Whether a key (or a float made from one) stands for a finite value. */
SB_FN sb_i32 sb_k_key_finite(sb_u32 key) {
    return (sb_i32)((key & 0x7FFFFFFFu) < 0x7F800000u);
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
