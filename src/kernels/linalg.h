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
 *  0. Each operand gets S digits, 4 to 8, from its data (sb_oz_digits_for):
 *     4 unless some line's typical element lies far below its largest one
 *     (its spread, sb_oz_spread), so that such elements keep their bits.
 *  1. Each line (a row of op(A), a column of op(B)) gets a power-of-two scale
 *     sigma from its largest finite magnitude, and each finite element becomes
 *     the integer RNE(x * 2^sigma), |x'| <= 2^(P-1), P = 8S - 1 bits with the
 *     sign (sb_oz_sigma, sb_oz_fixed): the one rounding of the inputs.
 *  2. x' is written as S balanced base-256 digits in [-128, 127], so
 *     x'*y' = sum over digit pairs (i, j) of 2^(8(i+j)) d_i e_j, and
 *     sum_k x'y' = sum_w 2^(8w) D_w with D_w = sum_{i+j=w} sum_k d_i e_j:
 *     int8 products summed in int32, exact while min(S_A, S_B) * K * 2^14 <
 *     2^31 (K <= sb_oz_kchunk per pass; longer K runs in passes whose totals
 *     add exactly).
 *  3. The exact integer T = sum_w 2^(8w) D_w (sb_oz_acc, carries normalized)
 *     is scaled by 2^-(sigma_i + tau_j) and rounded once to float32,
 *     nearest-even, with subnormals and overflow as IEEE 754 has them
 *     (sb_oz_round).
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

#define SB_OZ_SMIN 4        /* digits of an operand: 4 (31-bit integers) .. 8 (63-bit) */
#define SB_OZ_SMAX 8
#define SB_OZ_WMAX (2 * SB_OZ_SMAX - 1) /* weights w = i + j: at most 15 */
#define SB_OZ_ACC_LIMBS 4   /* an exact total: 4 low 32-bit limbs and a signed top (sb_oz_acc) */
#define SB_OZ_KPAD 16       /* each pass's K is padded with zero digits to a multiple of this */
#define SB_OZ_QNAN 0x7fc00000u

/* K of one pass: a weight sums at most min(S_A, S_B) digit pairs of products
 * |d e| <= 2^14, so smin * Kc * 2^14 < 2^31 keeps every int32 sum exact (and
 * smin * Kc <= 32768, the CPU kernel's bound). */
SB_FN sb_i64 sb_oz_kchunk(int smin) { return smin <= 4 ? 8192 : 4096; }

/* Bits of an operand's integers, sign included: S balanced base-256 digits
 * hold |x'| <= 2^(P-1) with P = 8S - 1. */
SB_FN int sb_oz_bits(int S) { return 8 * S - 1; }

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

/* floor(log2 |x|) of a nonzero finite magnitude mb. */
SB_FN sb_i32 sb_oz_lead(sb_u32 mb) {
    const sb_i32 e = (sb_i32)(mb >> 23);
    return e > 0 ? e - 127 : -150 + sb_oz_bitlen64((sb_u64)(mb & 0x7fffffu));
}

/* floor(a / b) for b > 0. */
SB_FN sb_i64 sb_oz_floordiv(sb_i64 a, sb_i64 b) {
    sb_i64 q = a / b;
    if (a % b != 0 && a < 0) q--;
    return q;
}

/* A line's spread: its largest leading exponent less the floor of the mean
 * leading exponent of its nonzero finite elements (sumlead over count of
 * them; 0 for none). How far below the line's largest element its typical
 * element lies, in bits. */
SB_FN sb_i32 sb_oz_spread(sb_u32 mb, sb_i64 sumlead, sb_i64 count) {
    if (count <= 0 || mb == 0u) return 0;
    const sb_i64 s = (sb_i64)sb_oz_lead(mb) - sb_oz_floordiv(sumlead, count);
    return s < 0 ? 0 : s > 1000 ? 1000 : (sb_i32)s;
}

/* The digits of an operand whose largest line spread is spread: enough that
 * the typical element keeps about 16 bits beyond the spread,
 * P = 8S - 1 >= spread + 16, from 4 digits (31 bits) to 8 (63 bits). */
SB_FN int sb_oz_digits_for(sb_i32 spread) {
    const int s = (spread + 17 + 7) / 8;
    return s < SB_OZ_SMIN ? SB_OZ_SMIN : s > SB_OZ_SMAX ? SB_OZ_SMAX : s;
}

/* The line scale: mb (the largest finite magnitude's bits) times 2^sigma lies
 * in [2^(P-2), 2^(P-1)) exactly; 0 for a line with no nonzero finite element. */
SB_FN sb_i32 sb_oz_sigma(sb_u32 mb, int S) {
    if (mb == 0u) return 0;
    return (sb_oz_bits(S) - 2) - sb_oz_lead(mb);
}

/* RNE(x * 2^sigma) for finite x (bits u) of a line whose scale is sigma, as an
 * integer with |result| <= 2^(P-1); nonfinite x gives 0 (sb_oz_special takes it). */
SB_FN sb_i64 sb_oz_fixed(sb_u32 u, sb_i32 sigma, int S) {
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
    else if (sh >= 0) r = sb_oz_bitlen64(m) + sh > sb_oz_bits(S) - 1 ? 0u : m << sh; /* beyond: not this line's */
    else if (sh < -25) r = 0u;
    else {
        const int s = -sh;
        const sb_u64 rem = m & ((((sb_u64)1) << s) - 1u), halfway = ((sb_u64)1) << (s - 1);
        r = m >> s;
        if (rem > halfway || (rem == halfway && (r & 1u))) r++;
    }
    return (u >> 31) ? -(sb_i64)r : (sb_i64)r;
}

/* The two's complement byte of a digit, and back. */
SB_FN sb_u8 sb_oz_byte(sb_i32 d) { return (sb_u8)(d & 255); }
SB_FN sb_i32 sb_oz_unbyte(sb_u8 b) { return (sb_i32)b - (((sb_i32)b & 128) << 1); }

/* An exact total: top * 2^128 + sum_L l[L] * 2^(32L). |T| stays below
 * K * 2^124 <= 2^155 for the largest operands, so top is small. Four 32-bit
 * limbs (not bytes) so that a GPU keeps them in registers. */
typedef struct sb_oz_acc {
    sb_u32 l[4];
    sb_i64 top;
} sb_oz_acc;

/* *a := sum_{w < nw} d[w] * 2^(8w) for one pass's parts (|d[w]| < 2^31),
 * normalized by carries: four parts land in a limb, below 2^57 in all. */
SB_FN void sb_oz_acc_from(const sb_i64 *d, int nw, sb_oz_acc *a) {
    sb_i64 c = 0;
    for (int L = 0; L < 4; L++) {
        sb_i64 t = c;
        for (int q = 0; q < 4; q++) {
            const int w = 4 * L + q;
            if (w < nw) t += d[w] * (((sb_i64)1) << (8 * q));
        }
        const sb_i64 low = t & 0xffffffff;
        a->l[L] = (sb_u32)low;
        c = (t - low) / 4294967296; /* exact */
    }
    a->top = c;
}

/* *a += *x, both normalized. */
SB_FN void sb_oz_acc_add(sb_oz_acc *a, const sb_oz_acc *x) {
    sb_u64 c = 0u;
    for (int L = 0; L < 4; L++) {
        const sb_u64 t = (sb_u64)a->l[L] + (sb_u64)x->l[L] + c;
        a->l[L] = (sb_u32)(t & 0xffffffffu);
        c = t >> 32;
    }
    a->top = a->top + x->top + (sb_i64)c;
}

/* A signed 64-bit value's low 32 bits (as a non-negative value) and the
 * rest, floor(x / 2^32): x = hi 2^32 + lo exactly. */
SB_FN sb_i64 sb_oz_lo32(sb_i64 x) { return x & 0xffffffff; }
SB_FN sb_i64 sb_oz_hi32(sb_i64 x) { return (x - sb_oz_lo32(x)) / 4294967296; }

/* c[w] += the four 32-bit parts of x y at weights 2^(32 w), w < 4, for two
 * of sb_oz_fixed's integers (|x|, |y| <= 2^62): with x = xh 2^32 + xl and y
 * likewise, each part of each partial product lies below 2^32 in magnitude,
 * so 2^29 adds stay exact in int64 (a product without digit planes: the
 * byte lm's batched attention products, entry/lm_entry.h). */
SB_FN void sb_oz_mul_add(sb_i64 *c, sb_i64 x, sb_i64 y) {
    const sb_i64 xl = sb_oz_lo32(x), xh = sb_oz_hi32(x), yl = sb_oz_lo32(y), yh = sb_oz_hi32(y);
    const sb_u64 p00 = (sb_u64)xl * (sb_u64)yl;
    const sb_i64 p01 = xh * yl, p10 = xl * yh, p11 = xh * yh;
    c[0] += (sb_i64)(p00 & 0xffffffffu);
    c[1] += (sb_i64)(p00 >> 32) + sb_oz_lo32(p01) + sb_oz_lo32(p10);
    c[2] += sb_oz_hi32(p01) + sb_oz_hi32(p10) + sb_oz_lo32(p11);
    c[3] += sb_oz_hi32(p11);
}

/* *a := sum_{w < 4} c[w] 2^(32 w) (sb_oz_mul_add's parts), normalized. */
SB_FN void sb_oz_acc_of_parts(const sb_i64 *c, sb_oz_acc *a) {
    sb_i64 carry = 0;
    for (int w = 0; w < 4; w++) {
        const sb_i64 t = c[w] + carry;
        a->l[w] = (sb_u32)sb_oz_lo32(t);
        carry = sb_oz_hi32(t);
    }
    a->top = carry;
}

/* floor(V / 2^s) of the magnitude V = mtop * 2^128 + sum mag[L] 2^(32L),
 * s >= 0, and whether V mod 2^s is nonzero; the caller knows the quotient is
 * below 2^62. */
SB_FN sb_u64 sb_oz_mag_shr(const sb_u32 *mag, sb_u64 mtop, int s, int *sticky) {
    sb_u64 q = 0u;
    int st = 0;
    for (int L = 0; L < 5; L++) {
        const int pos = 32 * L;
        const sb_u64 v = L < 4 ? (sb_u64)mag[L] : mtop;
        if (v == 0u) continue;
        if (pos >= s) {
            if (pos - s < 64) q += v << (pos - s);
        } else if (s - pos >= 64) {
            st = 1;
        } else {
            q += v >> (s - pos);
            if (v & ((((sb_u64)1) << (s - pos)) - 1u)) st = 1;
        }
    }
    *sticky = st;
    return q;
}

/* The float32 bits of T * 2^-S for the exact total T, rounded to nearest-even,
 * with gradual underflow and overflow to infinity; an exact zero is +0, a
 * nonzero value that rounds to zero keeps its sign. */
SB_FN sb_u32 sb_oz_round(const sb_oz_acc *a, sb_i32 S) {
    sb_u32 mag[4];
    sb_u64 mtop;
    sb_u32 sign = 0u;
    if (a->top < 0) {
        /* -T = ~T + 1 over the limbs, the top inverted */
        sign = 0x80000000u;
        sb_u64 c = 1u;
        for (int L = 0; L < 4; L++) {
            const sb_u64 x = (sb_u64)(~a->l[L]) + c;
            mag[L] = (sb_u32)(x & 0xffffffffu);
            c = x >> 32;
        }
        mtop = (sb_u64)(-(a->top + 1)) + c;
    } else {
        for (int L = 0; L < 4; L++) mag[L] = a->l[L];
        mtop = (sb_u64)a->top;
    }
    int len = 0;
    if (mtop != 0u) len = 128 + sb_oz_bitlen64(mtop);
    else
        for (int L = 3; L >= 0; L--)
            if (len == 0 && mag[L] != 0u) len = 32 * L + sb_oz_bitlen64((sb_u64)mag[L]);
    if (len == 0) return 0u;
    const sb_i32 E = (sb_i32)(len - 1) - S; /* the value's leading exponent */
    if (E > 127) return sign | 0x7f800000u;
    /* bits to drop: 24 significant bits kept when normal; the 2^-149 quantum when not */
    const sb_i32 r = E >= -126 ? len - 24 : S - 149;
    sb_u64 q;
    int sticky;
    if (r <= 0) {
        q = sb_oz_mag_shr(mag, mtop, 0, &sticky) << (-r); /* len <= 24 */
    } else {
        const sb_u64 q1 = sb_oz_mag_shr(mag, mtop, r - 1, &sticky);
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
