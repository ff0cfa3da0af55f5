/*
 * linalg.h: the kernel bodies of the identical matrix product, written once
 * for the host, CUDA and OpenCL (compat vocabulary; integers only).
 *
 * The product is the Ozaki scheme (K. Ozaki, T. Ogita, S. Oishi, S. M. Rump,
 * "Error-free transformations of matrix multiplication by using fast routines
 * of matrix multiplication and its applications", Numer. Algorithms 59, 2012;
 * and H. Ootomo, K. Ozaki, R. Yokota, "DGEMM on integer matrix multiplication
 * unit", IJHPCA 2024, for the int8 form), taken to exactness:
 *
 *  1. Each line (a row of op(A), a column of op(B)) gets a power-of-two scale
 *     sigma from its largest finite magnitude, and each finite element becomes
 *     the integer RNE(x * 2^sigma), |x'| <= 2^(P-1), P = SB_OZ_P = 31 bits with
 *     the sign (sb_oz_sigma, sb_oz_fixed): the one rounding of the inputs.
 *  2. x' is written as SB_OZ_DIGITS = 4 balanced base-256 digits in [-128, 127]
 *     (sb_oz_digit), so x'*y' = sum over digit pairs (i, j) of
 *     2^(8(i+j)) d_i e_j, and sum_k x'y' = sum_w 2^(8w) D_w with
 *     D_w = sum_{i+j=w} sum_k d_i e_j: int8 products summed in int32, exact
 *     while 4 * K * 2^14 < 2^31 (K <= SB_OZ_KCHUNK per pass; longer K runs in
 *     passes whose totals add exactly in two 64-bit limbs).
 *  3. The exact integer T = sum_w 2^(8w) D_w (two limbs, sb_oz_horner) is
 *     scaled by 2^-(sigma_i + tau_j) and rounded once to float32, nearest-even,
 *     with subnormals and overflow as IEEE 754 has them (sb_oz_round).
 *
 * Every step is an integer function of the inputs, so any tiling, thread count,
 * vector width, device or vendor library that computes the exact D_w gives
 * the same bits; contraction and float reassociation cannot reach it.
 * The result is the correctly rounded value of sum_k x'_k y'_k * 2^-(s+t): the
 * only error beyond the final rounding is the inputs' rounding to P bits
 * relative to their line's largest element (docs/linalg.md has the bound).
 *
 * Special values (sb_oz_special): a NaN in a line pair, an infinity times a
 * zero, or infinities of both signs give the quiet NaN 0x7fc00000; otherwise
 * infinities of one sign give that infinity; finite inputs whose exact result
 * overflows give an infinity by rounding. An exactly zero result is +0.
 */
#ifndef SB_KERNELS_LINALG_H
#define SB_KERNELS_LINALG_H
#include "compat.h"

#define SB_OZ_P 31
#define SB_OZ_DIGITS 4
#define SB_OZ_PAIRS_W 7     /* weights w = i + j in 0..6 */
#define SB_OZ_KCHUNK 8192   /* K of one pass: 4 pairs * 8192 * 2^14 = 2^29 < 2^31 */
#define SB_OZ_KPAD 16       /* each pass's K is padded with zero digits to a multiple of this */
#define SB_OZ_QNAN 0x7fc00000u

/* Bit length of x (0 for 0). */
SB_FN int sb_oz_bitlen64(sb_u64 x) {
    int n = 0;
    if (x >> 32) { n += 32; x >>= 32; }
    if (x >> 16) { n += 16; x >>= 16; }
    if (x >> 8) { n += 8; x >>= 8; }
    if (x >> 4) { n += 4; x >>= 4; }
    if (x >> 2) { n += 2; x >>= 2; }
    if (x >> 1) { n += 1; x >>= 1; }
    return n + (int)x;
}

/* 1 when float bits u are an infinity or a NaN. */
SB_FN int sb_oz_nonfinite(sb_u32 u) { return (u & 0x7f800000u) == 0x7f800000u; }

/* The magnitude bits of a finite u (0 for a nonfinite one): for non-negative
 * floats the order of the bits is the order of the values. */
SB_FN sb_u32 sb_oz_mag(sb_u32 u) { return sb_oz_nonfinite(u) ? 0u : (u & 0x7fffffffu); }

/* The line scale: mb (the largest finite magnitude's bits) times 2^sigma lies
 * in [2^(P-2), 2^(P-1)) exactly; 0 for a line with no nonzero finite element. */
SB_FN sb_i32 sb_oz_sigma(sb_u32 mb) {
    if (mb == 0u) return 0;
    const sb_i32 e = (sb_i32)(mb >> 23);
    const sb_i32 lead = e > 0 ? e - 127 : -150 + sb_oz_bitlen64((sb_u64)(mb & 0x7fffffu));
    return (SB_OZ_P - 2) - lead;
}

/* RNE(x * 2^sigma) for finite x (bits u) of a line whose scale is sigma, as an
 * integer with |result| <= 2^(P-1); nonfinite x gives 0 (sb_oz_special takes it). */
SB_FN sb_i64 sb_oz_fixed(sb_u32 u, sb_i32 sigma) {
    const sb_u32 e = (u >> 23) & 0xffu;
    if (e == 0xffu) return 0;
    sb_u64 m = (sb_u64)(u & 0x7fffffu);
    sb_i32 ee = 1;
    if (e != 0u) {
        m |= 0x800000u;
        ee = (sb_i32)e;
    }
    /* x = m * 2^(ee - 150); no element of the line exceeds 2^(P-1) after the shift */
    const sb_i32 sh = ee - 150 + sigma;
    sb_u64 r;
    if (m == 0u) r = 0u;
    else if (sh >= 0) r = sb_oz_bitlen64(m) + sh > SB_OZ_P - 1 ? 0u : m << sh; /* beyond: not this line's */
    else if (sh < -25) r = 0u;
    else {
        const int s = -sh;
        const sb_u64 rem = m & ((((sb_u64)1) << s) - 1u), halfway = ((sb_u64)1) << (s - 1);
        r = m >> s;
        if (rem > halfway || (rem == halfway && (r & 1u))) r++;
    }
    return (u >> 31) ? -(sb_i64)r : (sb_i64)r;
}

/* Digit q (0: least significant) of the balanced base-256 form of x, |x| <= 2^30:
 * x = sum_q 256^q d_q with every d_q in [-128, 127]. */
SB_FN sb_i32 sb_oz_digit(sb_i64 x, int q) {
    sb_i32 d = 0;
    for (int i = 0; i <= q; i++) {
        d = (sb_i32)((x + 128) & 255) - 128;
        x = (x - d) / 256; /* exact */
    }
    return d;
}

/* The two's complement byte of a digit, and back. */
SB_FN sb_u8 sb_oz_byte(sb_i32 d) { return (sb_u8)(d & 255); }
SB_FN sb_i32 sb_oz_unbyte(sb_u8 b) { return (sb_i32)b - (((sb_i32)b & 128) << 1); }

/* (*hi, *lo) := the two-limb integer hi * 2^32 + lo (0 <= lo < 2^32) times 256 plus v. */
SB_FN void sb_oz_horner(sb_i64 *hi, sb_u64 *lo, sb_i64 v) {
    const sb_u64 vl = (sb_u64)v & 0xffffffffu;
    const sb_i64 vh = (v - (sb_i64)vl) / 4294967296; /* exact */
    const sb_u64 l = ((*lo << 8) & 0xffffffffu) + vl;
    *hi = *hi * 256 + (sb_i64)(*lo >> 24) + vh + (sb_i64)(l >> 32);
    *lo = l & 0xffffffffu;
}

/* (*hi, *lo) += (h2, l2), both two-limb. */
SB_FN void sb_oz_add2(sb_i64 *hi, sb_u64 *lo, sb_i64 h2, sb_u64 l2) {
    const sb_u64 l = *lo + l2;
    *hi = *hi + h2 + (sb_i64)(l >> 32);
    *lo = l & 0xffffffffu;
}

/* The exact T of one pass from its seven weighted sums d[w], as two limbs. */
SB_FN void sb_oz_combine(const sb_i64 *d, sb_i64 *hi, sb_u64 *lo) {
    *hi = 0;
    *lo = 0u;
    for (int w = SB_OZ_PAIRS_W - 1; w >= 0; w--) sb_oz_horner(hi, lo, d[w]);
}

/* floor(V / 2^s) and whether V mod 2^s is nonzero, for V = mh * 2^32 + lo whose
 * quotient the caller knows is below 2^62. */
SB_FN sb_u64 sb_oz_shr(sb_u64 mh, sb_u64 lo, int s, int *sticky) {
    if (s <= 0) {
        *sticky = 0;
        return (mh << 32) | lo;
    }
    if (s >= 96) {
        *sticky = (mh | lo) != 0u;
        return 0u;
    }
    if (s >= 32) {
        const int t = s - 32;
        *sticky = lo != 0u || (t > 0 && (mh & ((((sb_u64)1) << t) - 1u)) != 0u);
        return mh >> t;
    }
    *sticky = (lo & ((((sb_u64)1) << s) - 1u)) != 0u;
    return (mh << (32 - s)) | (lo >> s);
}

/* The float32 bits of (hi * 2^32 + lo) * 2^-S, rounded to nearest-even, with
 * gradual underflow and overflow to infinity; an exact zero is +0, a nonzero
 * value that rounds to zero keeps its sign. */
SB_FN sb_u32 sb_oz_round(sb_i64 hi, sb_u64 lo, sb_i32 S) {
    sb_u32 sign = 0u;
    if (hi < 0) {
        sign = 0x80000000u;
        if (lo != 0u) {
            hi = -hi - 1;
            lo = 4294967296u - lo;
        } else {
            hi = -hi;
        }
    }
    const sb_u64 mh = (sb_u64)hi;
    if (mh == 0u && lo == 0u) return 0u;
    const int len = mh != 0u ? 32 + sb_oz_bitlen64(mh) : sb_oz_bitlen64(lo);
    const sb_i32 E = (sb_i32)(len - 1) - S; /* the value's leading exponent */
    if (E > 127) return sign | 0x7f800000u;
    /* bits to drop: 24 significant bits kept when normal; the 2^-149 quantum when not */
    const sb_i32 r = E >= -126 ? len - 24 : S - 149;
    sb_u64 q;
    if (r <= 0) {
        q = lo << (-r); /* len <= 24, so mh == 0 */
    } else {
        int sticky;
        const sb_u64 q1 = sb_oz_shr(mh, lo, r - 1, &sticky);
        const sb_u64 halfway = q1 & 1u;
        q = q1 >> 1;
        if (halfway && (sticky || (q & 1u))) q++;
    }
    /* normal: q in [2^23, 2^24] and its 2^23 bit is the exponent's one; a
     * subnormal that rounds up to 2^23 is the smallest normal, as its bits say */
    const sb_u32 bits = E >= -126 ? ((sb_u32)(E + 126) << 23) + (sb_u32)q : (sb_u32)q;
    return sign | (bits >= 0x7f800000u ? 0x7f800000u : bits);
}

/* The special-value result of one line pair whose K elements are a[ao + q*as]
 * and b[bo + q*bs]: 0 when every element of both is finite (the integer result
 * stands), else the float bits of the NaN or infinity (header). */
SB_FN sb_u32 sb_oz_special(SB_GLOBAL const float *a, sb_i64 ao, sb_i64 as, SB_GLOBAL const float *b, sb_i64 bo,
                           sb_i64 bs, sb_i64 K) {
    int nan = 0, pinf = 0, ninf = 0, any = 0;
    for (sb_i64 q = 0; q < K; q++) {
        const sb_u32 x = sb_f2u(a[ao + q * as]), y = sb_f2u(b[bo + q * bs]);
        const int fx = sb_oz_nonfinite(x), fy = sb_oz_nonfinite(y);
        if (!fx && !fy) continue;
        any = 1;
        if ((fx && (x & 0x7fffffu)) || (fy && (y & 0x7fffffu))) nan = 1;           /* a NaN */
        else if ((x & 0x7fffffffu) == 0u || (y & 0x7fffffffu) == 0u) nan = 1;      /* inf * 0 */
        else if ((x ^ y) >> 31) ninf = 1;
        else pinf = 1;
    }
    if (!any) return 0u;
    if (nan || (pinf && ninf)) return SB_OZ_QNAN;
    return pinf ? 0x7f800000u : 0xff800000u;
}

#endif
