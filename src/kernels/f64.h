/*
 * f64.h: IEEE binary64 arithmetic in integers, for kernel bodies (no double
 * in a kernel: some devices have none, and the profile allows none). A value
 * is its 64 IEEE bits in an sb_u64; each operation gives exactly the bits the
 * host's double arithmetic gives (round to nearest, ties to even), so a
 * kernel can repeat a host sum of doubles, operation for operation, on any
 * device (tests/unit/test_f64.c compares them on millions of operands).
 *
 * The domain: operands and results are zero or normal. Sums, differences and
 * products of a bounded number of finite float32 values stay there (a float
 * is at least 2^-149 in magnitude, a product of two at least 2^-298, far above
 * 2^-1022; their totals stay far below 2^1024), which is what the families
 * that use these need. No infinity, NaN or subnormal double is handled.
 */
#ifndef SB_KERNELS_F64_H
#define SB_KERNELS_F64_H
#include "compat.h"

#define SB_F64_FRAC ((((sb_u64)1) << 52) - 1u)
#define SB_F64_ONE ((sb_u64)0x3FF0000000000000u)

/* The float f widened exactly (subnormal floats normalized). */
SB_FN sb_u64 sb_f64_of(float f) {
    const sb_u32 u = sb_f2u(f);
    const sb_u64 s = (sb_u64)(u >> 31) << 63;
    sb_i32 e = (sb_i32)((u >> 23) & 0xffu);
    sb_u32 m = u & 0x7fffffu;
    if (e == 0) {
        if (m == 0u) return s;
        e = 1;
        while (!(m & 0x800000u)) m <<= 1, e--;
        m &= 0x7fffffu;
    }
    return s | ((sb_u64)(sb_u32)(e - 127 + 1023) << 52) | ((sb_u64)m << 29);
}

/* m (leading bit at 55, three bits below the 53 kept: guard, round, sticky)
 * rounded to nearest even with exponent field e and sign s. */
SB_FN sb_u64 sb_f64_round(sb_u64 s, sb_i32 e, sb_u64 m) {
    const sb_u32 low = (sb_u32)(m & 7u);
    m >>= 3;
    if (low > 4u || (low == 4u && (m & 1u))) m++;
    if (m >> 53) m >>= 1, e++;
    return s | ((sb_u64)(sb_u32)e << 52) | (m & SB_F64_FRAC);
}

/* a + b. */
SB_FN sb_u64 sb_f64_add(sb_u64 a, sb_u64 b) {
    if (!(a << 1)) return (b << 1) ? b : (a & b); /* +0 + -0 = +0 */
    if (!(b << 1)) return a;
    if ((a << 1) < (b << 1)) {
        const sb_u64 t = a;
        a = b, b = t;
    }
    const sb_u64 s = a & ((sb_u64)1 << 63);
    sb_i32 e = (sb_i32)((a >> 52) & 0x7ffu);
    const sb_i32 eb = (sb_i32)((b >> 52) & 0x7ffu);
    sb_u64 m = ((a & SB_F64_FRAC) | ((sb_u64)1 << 52)) << 3, mb = ((b & SB_F64_FRAC) | ((sb_u64)1 << 52)) << 3;
    const sb_i32 sh = e - eb;
    if (sh >= 57) mb = 1u;
    else if (sh > 0) mb = (mb >> sh) | (sb_u64)((mb & ((((sb_u64)1) << sh) - 1u)) != 0u);
    if ((a ^ b) >> 63) {
        m -= mb;
        if (!m) return 0u; /* exact cancellation: +0 */
        /* the leading bit up to 55 in six steps (after the step of s, it is at 56 - s or above) */
        if (!(m >> 24)) m <<= 32, e -= 32;
        if (!(m >> 40)) m <<= 16, e -= 16;
        if (!(m >> 48)) m <<= 8, e -= 8;
        if (!(m >> 52)) m <<= 4, e -= 4;
        if (!(m >> 54)) m <<= 2, e -= 2;
        if (!(m >> 55)) m <<= 1, e -= 1;
    } else {
        m += mb;
        if (m >> 56) m = (m >> 1) | (m & 1u), e++;
    }
    return sb_f64_round(s, e, m);
}

/* a - b. */
SB_FN sb_u64 sb_f64_sub(sb_u64 a, sb_u64 b) { return sb_f64_add(a, b ^ ((sb_u64)1 << 63)); }

/* a * b. */
SB_FN sb_u64 sb_f64_mul(sb_u64 a, sb_u64 b) {
    const sb_u64 s = (a ^ b) & ((sb_u64)1 << 63);
    if (!(a << 1) || !(b << 1)) return s;
    const sb_u64 ma = (a & SB_F64_FRAC) | ((sb_u64)1 << 52), mb = (b & SB_F64_FRAC) | ((sb_u64)1 << 52);
    /* the 106-bit product as hi * 2^64 + lo, from 32-bit halves */
    const sb_u64 al = ma & 0xffffffffu, ah = ma >> 32, bl = mb & 0xffffffffu, bh = mb >> 32;
    const sb_u64 ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    const sb_u64 mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    const sb_u64 lo = (mid << 32) | (ll & 0xffffffffu);
    const sb_u64 hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    sb_i32 e = (sb_i32)((a >> 52) & 0x7ffu) + (sb_i32)((b >> 52) & 0x7ffu) - 1023;
    /* the product is in [2^104, 2^106): keep 56 bits (53 and guard, round, sticky) */
    sb_i32 sh = 49; /* leading bit at 104: bits 104..49 kept */
    if (hi >> 41) sh = 50, e++;
    const sb_u64 top = (hi << (64 - sh)) | (lo >> sh);
    const sb_u64 sticky = (sb_u64)((lo & ((((sb_u64)1) << sh) - 1u)) != 0u);
    return sb_f64_round(s, e, top | sticky);
}

/* sqrt(a), correctly rounded, for a zero or positive normal (a negative a is
 * outside the domain). The root of the radicand m * 2^58 (m the 53-bit
 * mantissa, doubled for an odd exponent so the exponent halves exactly) is
 * taken digit by digit, two radicand bits a step (the restoring method of
 * pencil and paper square roots): 56 result bits, the leading one at 55 as
 * sb_f64_round takes them, and a nonzero remainder as the sticky bit. The
 * remainder stays below 2^58, so every step is 64-bit integer work. */
SB_FN sb_u64 sb_f64_sqrt(sb_u64 a) {
    if (!(a << 1)) return a; /* sqrt(+-0) = +-0 */
    sb_i32 e = (sb_i32)((a >> 52) & 0x7ffu) - 1023;
    sb_u64 m = (a & SB_F64_FRAC) | ((sb_u64)1 << 52);
    if (e & 1) m <<= 1, e -= 1; /* m in [2^52, 2^54), e even */
    sb_u64 q = 0u, r = 0u;
    for (sb_i32 i = 0; i < 56; i++) {
        const sb_i32 pos = 110 - 2 * i; /* the radicand's bits pos + 1, pos */
        const sb_u64 two = pos >= 58 ? (m >> (pos - 58)) & 3u : 0u;
        r = (r << 2) | two;
        const sb_u64 trial = (q << 2) | 1u;
        if (r >= trial) r -= trial, q = (q << 1) | 1u;
        else q <<= 1;
    }
    return sb_f64_round(0u, e / 2 + 1023, q | (sb_u64)(r != 0u));
}

/* a / b, correctly rounded, for a zero or normal and b normal (the quotient
 * normal): the 56 quotient bits of the significands by restoring long
 * division, one bit a step (the leading one at 55 as sb_f64_round takes
 * them), a nonzero remainder as the sticky bit. The remainder stays below
 * twice b's significand, below 2^54. */
SB_FN sb_u64 sb_f64_div(sb_u64 a, sb_u64 b) {
    const sb_u64 s = (a ^ b) & ((sb_u64)1 << 63);
    if (!(a << 1)) return s;
    sb_u64 ma = (a & SB_F64_FRAC) | ((sb_u64)1 << 52);
    const sb_u64 mb = (b & SB_F64_FRAC) | ((sb_u64)1 << 52);
    sb_i32 e = (sb_i32)((a >> 52) & 0x7ffu) - (sb_i32)((b >> 52) & 0x7ffu) + 1023;
    if (ma < mb) ma <<= 1, e--; /* the quotient of the significands in [1, 2) */
    sb_u64 q = 0u, r = ma;
    for (sb_i32 i = 0; i < 56; i++) {
        q <<= 1;
        if (r >= mb) r -= mb, q |= 1u;
        r <<= 1;
    }
    return sb_f64_round(s, e, q | (sb_u64)(r != 0u));
}

/* (float)a: a rounded to nearest even float32, as the host's conversion
 * rounds it (a zero or normal double; float subnormals and underflow to zero
 * included, a magnitude beyond the float range gives infinity). The kept
 * bits k carry into the exponent field on their own: the field is added to
 * k with the hidden bit in it (so a k of 2^24 after rounding is the next
 * binade, and a subnormal k of 2^23 the least normal). */
SB_FN float sb_f64_to_f32(sb_u64 a) {
    const sb_u32 s = (sb_u32)(a >> 63) << 31;
    if (!(a << 1)) return sb_u2f(s);
    const sb_i32 e = (sb_i32)((a >> 52) & 0x7ffu) - 1023;
    if (e > 127) return sb_u2f(s | 0x7f800000u);
    const sb_u64 m = (a & SB_F64_FRAC) | ((sb_u64)1 << 52); /* the value m 2^(e - 52) */
    const sb_i32 sh = e >= -126 ? 29 : -e - 97;             /* to units of 2^(e - 23), or of 2^-149 */
    if (sh > 53) return sb_u2f(s);                          /* below half the least subnormal */
    sb_u64 k = m >> sh;
    const sb_u64 rem = m & ((((sb_u64)1) << sh) - 1u), hv = ((sb_u64)1) << (sh - 1);
    if (rem > hv || (rem == hv && (k & 1u))) k++;
    const sb_u32 bits = e >= -126 ? ((sb_u32)(e + 126) << 23) + (sb_u32)k : (sb_u32)k;
    return sb_u2f(s | (bits >= 0x7f800000u ? 0x7f800000u : bits));
}

#endif
