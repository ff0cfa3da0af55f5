/*
 * sb_reduce.h: device-neutral reduction helpers of the numeric profile
 * (DESIGN.md section 1, rule 4; contracts and proofs in docs/reductions.md).
 *
 * Two kinds of reduction are allowed in identical mode, and this header gives
 * the arithmetic of both:
 *   1. exact integer sums (order-free, so atomics and any merge order are fine):
 *      checked int64 adds, a 128-bit exact integer accumulator (sb_wide), a
 *      float -> fixed-point conversion that reports inexactness and overflow,
 *      and an exact float32 superaccumulator (sb_sacc) whose final rounding is
 *      correctly rounded (round to nearest, ties to even);
 *   2. float sums with a fixed tree shape that depends on the element count
 *      alone (SB_REDUCE_BLOCK-element left-to-right leaves, then a pairwise
 *      tree over the leaf sums).
 *
 * Portable subset: compiles unchanged as C11, CUDA C and OpenCL C 1.2. Only
 * the vocabulary of src/kernels/compat.h is used; no libm, no double, no fmaf.
 *
 * Pointers to arrays carry SB_GLOBAL (compat headers: empty for C and CUDA,
 * __global for OpenCL), so in OpenCL the array helpers read and write global
 * memory; a kernel that combines leaf sums in __local memory spells the same
 * level loop itself (docs/reductions.md). The fallback below only matters
 * if a compat header lacks SB_GLOBAL. Identifiers avoid OpenCL's reserved
 * type names (half, ...).
 */
#ifndef SB_MATH_REDUCE_H
#define SB_MATH_REDUCE_H

#include "../kernels/compat.h"

#ifndef SB_GLOBAL
#define SB_GLOBAL
#endif

/* Products in the dot helpers are rounded to float before they are added:
 * never fused. C and OpenCL rely on the profile's flags (-ffp-contract=off,
 * FP_CONTRACT OFF); CUDA spells the roundings with intrinsics so the result
 * does not even depend on -fmad. */
#if defined(__CUDACC__)
#define SB__FMUL(a, b) __fmul_rn((a), (b))
#define SB__FADD(a, b) __fadd_rn((a), (b))
#else
#define SB__FMUL(a, b) ((a) * (b))
#define SB__FADD(a, b) ((a) + (b))
#endif

#define SB__U64_ONE ((sb_u64)1)
#define SB__I64_MAX ((sb_i64)((SB__U64_ONE << 63) - SB__U64_ONE))
#define SB__I64_MIN (-SB__I64_MAX - (sb_i64)1)
#define SB__LOW32 ((sb_u64)0xFFFFFFFFu)

/* The canonical NaN of the profile: every NaN a reduction returns has these bits. */
#define SB_REDUCE_NAN_BITS 0x7FC00000u

/* ======================================================================== */
/* Small bit helpers (internal)                                             */
/* ======================================================================== */

/* Number of significant bits of v (0 for v == 0, 64 for v >= 2^63). Pure. */
SB_FN sb_i32 sb__bitlen_u64(sb_u64 v) {
    sb_i32 n = 0;
    if (v >> 32) { n += 32; v >>= 32; }
    if (v >> 16) { n += 16; v >>= 16; }
    if (v >> 8) { n += 8; v >>= 8; }
    if (v >> 4) { n += 4; v >>= 4; }
    if (v >> 2) { n += 2; v >>= 2; }
    if (v >> 1) { n += 1; v >>= 1; }
    return n + (sb_i32)v;
}

/* Two's-complement value of the 32-bit pattern h (0 <= h < 2^32) as sb_i64,
 * without implementation-defined conversions: h for h < 2^31, h - 2^32 else. */
SB_FN sb_i64 sb__sext32(sb_u64 h) {
    return (sb_i64)(h ^ (sb_u64)0x80000000u) - (sb_i64)0x80000000u;
}

/* The sb_i64 whose two's-complement pattern is u (defined for every u). */
SB_FN sb_i64 sb__u64_as_i64(sb_u64 u) {
    if (u < (SB__U64_ONE << 63)) return (sb_i64)u;
    return -(sb_i64)(~u) - (sb_i64)1;
}

/* If v is a NaN of any payload, the canonical NaN; otherwise v unchanged. */
SB_FN float sb_reduce_canon_nan(float v) {
    sb_u32 u = sb_f2u(v);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return sb_u2f(SB_REDUCE_NAN_BITS);
    return v;
}

/* Correctly rounded (nearest, ties to even) float32 of
 *     (-1)^neg * (mag + d) * 2^exp2,   with 0 <= d < 1, d > 0 iff sticky,
 * IEEE overflow to +-inf, gradual underflow, a zero result keeps the sign.
 * The caller must give sticky = 0 unless mag has at least 25 significant bits
 * (then the rounding position lies inside mag and d only breaks ties).
 * mag == 0 gives a signed zero. exp2 must lie in [-2000, 2000]. */
SB_FN float sb__round_f32(sb_u32 neg, sb_u64 mag, sb_i32 exp2, sb_u32 sticky) {
    sb_u32 sbit = neg ? 0x80000000u : 0u;
    if (mag == 0) return sb_u2f(sbit);
    sb_i32 top = exp2 + sb__bitlen_u64(mag) - 1; /* weight of the leading bit */
    sb_i32 lsb = top - 23;                        /* weight of the result's last bit */
    if (lsb < -149) lsb = -149;
    sb_i32 shift = lsb - exp2;                    /* bits of mag below the result */
    sb_u64 q;
    sb_u32 up = 0;
    if (shift <= 0) {
        q = mag << (sb_u32)(-shift);
    } else if (shift < 64) {
        sb_u64 hbit = SB__U64_ONE << (sb_u32)(shift - 1); /* half an ulp of the result */
        sb_u64 rem = mag & ((hbit << 1) - SB__U64_ONE);
        q = mag >> (sb_u32)shift;
        up = (rem > hbit || (rem == hbit && (sticky || (q & 1u)))) ? 1u : 0u;
    } else if (shift == 64) {
        q = 0;
        up = (mag > (SB__U64_ONE << 63) || (mag == (SB__U64_ONE << 63) && sticky)) ? 1u : 0u;
    } else {
        q = 0;
    }
    q += up;
    if (q == ((sb_u64)1 << 24)) { q = (sb_u64)1 << 23; lsb += 1; }
    if (q == 0) return sb_u2f(sbit);
    if (q < ((sb_u64)1 << 23)) return sb_u2f(sbit | (sb_u32)q); /* subnormal, lsb == -149 */
    sb_i32 biased = lsb + 150;
    if (biased >= 255) return sb_u2f(sbit | 0x7F800000u);
    return sb_u2f(sbit | ((sb_u32)biased << 23) | ((sb_u32)q & 0x7FFFFFu));
}

/* ======================================================================== */
/* 1. Exact integer accumulation                                             */
/* ======================================================================== */

/* Checked int64 add. Stores a+b in *out and returns 0 when it is representable;
 * otherwise stores the saturated value (INT64_MAX or INT64_MIN) and returns 1.
 * Never wraps, never has undefined behaviour. Caution: for addends of mixed
 * signs, whether some partial sum overflows depends on the order; a caller
 * that must refuse by name in an order-free way either proves a bound on the
 * sum of |addends| or sums into sb_wide and checks once at the end. */
SB_FN sb_i32 sb_i64_add_checked(sb_i64 a, sb_i64 b, sb_i64 *out) {
    if (b > 0 && a > SB__I64_MAX - b) { *out = SB__I64_MAX; return 1; }
    if (b < 0 && a < SB__I64_MIN - b) { *out = SB__I64_MIN; return 1; }
    *out = a + b;
    return 0;
}

/* Saturating int64 add: a+b clamped to [INT64_MIN, INT64_MAX]. If it clamped,
 * sets *overflow = 1; otherwise leaves *overflow untouched, so a loop can
 * accumulate one sticky flag and check it once. (Same order caveat as above.) */
SB_FN sb_i64 sb_i64_add_sat(sb_i64 a, sb_i64 b, sb_i32 *overflow) {
    sb_i64 r;
    if (sb_i64_add_checked(a, b, &r)) *overflow = 1;
    return r;
}

/* sb_wide: an exact 128-bit two's-complement integer accumulator,
 * value = hi * 2^64 + lo. Each add moves hi by -1, 0 or +1, so any sequence
 * of fewer than 2^63 adds of int64 values (merges: add counts total) is exact,
 * so the final value, and whether it fits in int64, is order-free.
 * Plain data: the caller owns it; zero-initialised means value 0. */
typedef struct sb_wide {
    sb_u64 lo;
    sb_i64 hi;
} sb_wide;

/* Sets *w to zero. */
SB_FN void sb_wide_init(sb_wide *w) {
    w->lo = 0;
    w->hi = 0;
}

/* *w += v exactly. */
SB_FN void sb_wide_add_i64(sb_wide *w, sb_i64 v) {
    sb_u64 lo = w->lo + (sb_u64)v;
    sb_i64 carry = lo < w->lo ? 1 : 0;
    w->lo = lo;
    w->hi += carry - (v < 0 ? 1 : 0);
}

/* *a += *b exactly; *b is unchanged. */
SB_FN void sb_wide_merge(sb_wide *a, const sb_wide *b) {
    sb_u64 lo = a->lo + b->lo;
    sb_i64 carry = lo < a->lo ? 1 : 0;
    a->lo = lo;
    a->hi += b->hi + carry;
}

/* If the exact value of *w fits in int64, stores it in *out and returns 0;
 * otherwise stores the saturated value and returns 1 (a caller refuses). */
SB_FN sb_i32 sb_wide_to_i64(const sb_wide *w, sb_i64 *out) {
    if (w->hi == 0 && w->lo < (SB__U64_ONE << 63)) { *out = (sb_i64)w->lo; return 0; }
    if (w->hi == -1 && w->lo >= (SB__U64_ONE << 63)) { *out = sb__u64_as_i64(w->lo); return 0; }
    *out = w->hi < 0 ? SB__I64_MIN : SB__I64_MAX;
    return 1;
}

/* Correctly rounded float32 of value(*w) * 2^scale_exp (nearest, ties to
 * even; +-inf on overflow; a zero value gives +0). scale_exp is clamped to
 * [-1000, 1000], which changes no result. */
SB_FN float sb_wide_to_f32(const sb_wide *w, sb_i32 scale_exp) {
    sb_u32 neg = w->hi < 0 ? 1u : 0u;
    sb_u64 lo = w->lo, hi = (sb_u64)w->hi;
    if (neg) { /* 128-bit negate */
        lo = ~lo + SB__U64_ONE;
        hi = ~hi + (lo == 0 ? SB__U64_ONE : 0u);
    }
    if (scale_exp > 1000) scale_exp = 1000;
    if (scale_exp < -1000) scale_exp = -1000;
    if (hi == 0) return sb__round_f32(neg, lo, scale_exp, 0u);
    /* hi != 0: take the top 64 significant bits, the rest is sticky */
    sb_i32 l = sb__bitlen_u64(hi); /* 1..64 */
    sb_u64 mag = (l == 64) ? hi : ((hi << (sb_u32)(64 - l)) | (lo >> (sb_u32)l));
    sb_u64 rest = (l == 64) ? lo : (lo << (sb_u32)(64 - l));
    return sb__round_f32(neg, mag, scale_exp + l, rest != 0 ? 1u : 0u);
}

/* Status codes of sb_fixed_from_f32. */
#define SB_FIXED_EXACT 0     /* *out * 2^scale_exp == x exactly */
#define SB_FIXED_INEXACT 1   /* x is not a multiple of 2^scale_exp; *out is x rounded (nearest, ties even) */
#define SB_FIXED_OVERFLOW 2  /* x / 2^scale_exp lies outside int64; *out = 0 */
#define SB_FIXED_NONFINITE 3 /* x is NaN or +-inf; *out = 0 */

/* Fixed-point conversion for order-free float sums: writes to *out the
 * integer k with k * 2^scale_exp == x and returns SB_FIXED_EXACT, or reports
 * why it cannot (codes above). On SB_FIXED_INEXACT *out still holds the
 * correctly rounded multiple (round to nearest, ties to even), for callers
 * that quantize on purpose; callers that promise exactness refuse. -0 gives 0.
 * The integers can then be summed in any order (sb_wide, or int64 with a
 * proven bound, or integer atomics). scale_exp is clamped to [-1000, 1000],
 * which changes no result. */
SB_FN sb_i32 sb_fixed_from_f32(float x, sb_i32 scale_exp, sb_i64 *out) {
    sb_u32 u = sb_f2u(x);
    sb_u32 neg = u >> 31, e = (u >> 23) & 0xFFu, f = u & 0x7FFFFFu;
    *out = 0;
    if (e == 0xFFu) return SB_FIXED_NONFINITE;
    if (e == 0 && f == 0) return SB_FIXED_EXACT;
    if (scale_exp > 1000) scale_exp = 1000;
    if (scale_exp < -1000) scale_exp = -1000;
    sb_u64 m = e ? (sb_u64)(f | 0x800000u) : (sb_u64)f; /* x = +-m * 2^E */
    sb_i32 E = e ? (sb_i32)e - 150 : -149;
    sb_i32 d = E - scale_exp; /* x / 2^scale_exp = +-m * 2^d */
    sb_u64 mag;
    sb_i32 status = SB_FIXED_EXACT;
    if (d >= 0) {
        if (sb__bitlen_u64(m) + d > 64) return SB_FIXED_OVERFLOW;
        mag = m << (sb_u32)d;
    } else {
        sb_i32 k = -d;
        if (k > 40) k = 40; /* m < 2^24: beyond 25 the quotient rounds to 0 anyway */
        sb_u64 hbit = SB__U64_ONE << (sb_u32)(k - 1);
        sb_u64 rem = m & ((hbit << 1) - SB__U64_ONE);
        mag = m >> (sb_u32)k;
        if (rem != 0) status = SB_FIXED_INEXACT;
        if (rem > hbit || (rem == hbit && (mag & 1u))) mag += 1;
    }
    /* int64 holds magnitudes up to 2^63 - 1, and exactly 2^63 when negative */
    if (mag > (SB__U64_ONE << 63) || (mag == (SB__U64_ONE << 63) && !neg)) return SB_FIXED_OVERFLOW;
    *out = neg ? -sb__u64_as_i64(mag - SB__U64_ONE) - (sb_i64)1 : (sb_i64)mag;
    return status;
}

/* Correctly rounded float32 of v * 2^scale_exp (nearest, ties to even; +-inf
 * on overflow; v == 0 gives +0). scale_exp is clamped to [-1000, 1000]. */
SB_FN float sb_fixed_to_f32(sb_i64 v, sb_i32 scale_exp) {
    sb_u32 neg = v < 0 ? 1u : 0u;
    sb_u64 mag = neg ? ~(sb_u64)v + SB__U64_ONE : (sb_u64)v;
    if (scale_exp > 1000) scale_exp = 1000;
    if (scale_exp < -1000) scale_exp = -1000;
    return sb__round_f32(neg, mag, scale_exp, 0u);
}

/* ======================================================================== */
/* 2. Exact, order-free float32 sum: the superaccumulator sb_sacc            */
/* ======================================================================== */
/*
 * A long accumulator (Kulisch) with deferred carries in the manner of Neal's
 * "small superaccumulator": limb[i] is a signed 64-bit count of units of
 * 2^(32*i - 149). Every finite float32 is +-m * 2^(p - 149) with m < 2^24 and
 * 0 <= p <= 253, so an add touches at most two limbs, i = p/32 and i + 1, with
 * payloads < 2^32 and < 2^23. Normalised form: limb[0..8] in [0, 2^32),
 * limb[9] any int64 (carries the sign); it is unique for each value, so two
 * accumulators that saw the same multiset of inputs in any order and any
 * grouping have equal normalised limbs, and round to the same bits.
 * Headroom: after a normalisation, up to SB_SACC_MAX_PENDING (2^31 - 1) adds
 * fit without any int64 overflow; sb_sacc_add normalises by itself before it
 * would exceed that. limb[9] covers |sum| < 2^(63 + 288 - 149) = 2^202, i.e.
 * more than 2^74 adds of FLT_MAX. Proofs in docs/reductions.md.
 *
 * GPU use: a normalised accumulator's limbs 0..8 are < 2^32, so up to
 * 2^31 - 1 normalised partials can be added limb by limb into a shared
 * accumulator with 64-bit integer atomics (atomicAdd on the two's-complement
 * pattern) and flags with a 32-bit atomicOr; then normalise once.
 */
#define SB_SACC_LIMBS 10
#define SB_SACC_MAX_PENDING ((sb_i64)0x7FFFFFFF) /* 2^31 - 1 adds between normalisations */

/* flags (OR-mergeable) */
#define SB_SACC_F_NAN 1u      /* some input was a NaN */
#define SB_SACC_F_PINF 2u     /* some input was +inf */
#define SB_SACC_F_NINF 4u     /* some input was -inf */
#define SB_SACC_F_ANY 8u      /* at least one input */
#define SB_SACC_F_NOTNEGZ 16u /* some input other than -0.0 */

/* Plain data, fixed size (96 bytes on every target), caller-owned; no pointers. */
typedef struct sb_sacc {
    sb_i64 limb[SB_SACC_LIMBS]; /* limb[i] counts units of 2^(32*i - 149) */
    sb_i64 pending;             /* adds since the last normalisation */
    sb_u32 flags;               /* SB_SACC_F_* */
    sb_u32 reserved;            /* always 0 */
} sb_sacc;

#if defined(__cplusplus)
static_assert(sizeof(sb_sacc) == 96, "sb_sacc must be 96 bytes on every target");
static_assert(sizeof(sb_wide) == 16, "sb_wide must be 16 bytes on every target");
#elif !defined(__OPENCL_VERSION__) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(sb_sacc) == 96, "sb_sacc must be 96 bytes on every target");
_Static_assert(sizeof(sb_wide) == 16, "sb_wide must be 16 bytes on every target");
#endif

/* Sets *acc to the empty sum (value 0, no inputs seen). */
SB_FN void sb_sacc_init(sb_sacc *acc) {
    for (sb_i32 i = 0; i < SB_SACC_LIMBS; i++) acc->limb[i] = 0;
    acc->pending = 0;
    acc->flags = 0;
    acc->reserved = 0;
}

/* Propagates carries so that limb[0..8] lie in [0, 2^32) and resets pending.
 * Leaves the exact value unchanged; the result depends only on that value. */
SB_FN void sb_sacc_normalize(sb_sacc *acc) {
    for (sb_i32 i = 0; i < SB_SACC_LIMBS - 1; i++) {
        sb_u64 u = (sb_u64)acc->limb[i];
        acc->limb[i] = (sb_i64)(u & SB__LOW32);
        acc->limb[i + 1] += sb__sext32(u >> 32); /* floor(limb / 2^32) */
    }
    acc->pending = 0;
}

/* Adds x exactly. NaN, +inf, -inf and the sign of zero go to flags; finite
 * values to the limbs. Normalises first when the headroom is used up, which
 * does not change the value, so the final result stays order-independent. */
SB_FN void sb_sacc_add(sb_sacc *acc, float x) {
    sb_u32 u = sb_f2u(x);
    sb_u32 neg = u >> 31, e = (u >> 23) & 0xFFu, f = u & 0x7FFFFFu;
    acc->flags |= SB_SACC_F_ANY | (u != 0x80000000u ? SB_SACC_F_NOTNEGZ : 0u);
    if (e == 0xFFu) {
        acc->flags |= f ? SB_SACC_F_NAN : (neg ? SB_SACC_F_NINF : SB_SACC_F_PINF);
        return;
    }
    if (e == 0 && f == 0) return;
    if (acc->pending >= SB_SACC_MAX_PENDING) sb_sacc_normalize(acc);
    sb_u32 p = e ? e - 1u : 0u;                       /* x = +-m * 2^(p - 149) */
    sb_u64 v = (sb_u64)(e ? (f | 0x800000u) : f) << (p & 31u); /* < 2^55 */
    sb_u32 i = p >> 5;                                /* 0..7 */
    sb_i64 lo = (sb_i64)(v & SB__LOW32), hi = (sb_i64)(v >> 32);
    if (neg) {
        acc->limb[i] -= lo;
        acc->limb[i + 1] -= hi;
    } else {
        acc->limb[i] += lo;
        acc->limb[i + 1] += hi;
    }
    acc->pending += 1;
}

/* Adds x[begin..end) in index order (any order gives the same value). */
SB_FN void sb_sacc_add_range(sb_sacc *acc, SB_GLOBAL const float *x, sb_i64 begin, sb_i64 end) {
    for (sb_i64 i = begin; i < end; i++) sb_sacc_add(acc, x[i]);
}

/* *a += *b exactly (values add, flags OR); *b is not modified. The result is
 * normalised. Merging partials in any order and any grouping gives the same
 * normalised state as adding every input into one accumulator. */
SB_FN void sb_sacc_merge(sb_sacc *a, const sb_sacc *b) {
    sb_sacc c = *b;
    sb_sacc_normalize(&c);
    sb_sacc_normalize(a);
    for (sb_i32 i = 0; i < SB_SACC_LIMBS; i++) a->limb[i] += c.limb[i]; /* limbs 0..8 < 2^33 */
    a->flags |= c.flags;
    sb_sacc_normalize(a);
}

/* 1 if *a and *b hold the same exact value and flags, else 0. Pure. */
SB_FN sb_i32 sb_sacc_same(const sb_sacc *a, const sb_sacc *b) {
    sb_sacc x = *a, y = *b;
    sb_sacc_normalize(&x);
    sb_sacc_normalize(&y);
    if (x.flags != y.flags) return 0;
    for (sb_i32 i = 0; i < SB_SACC_LIMBS; i++)
        if (x.limb[i] != y.limb[i]) return 0;
    return 1;
}

/* The exact sum rounded once to float32 (nearest, ties to even). Pure.
 *   any NaN input, or both +inf and -inf      -> canonical NaN 0x7FC00000
 *   +inf (resp. -inf) among finite inputs      -> +inf (resp. -inf)
 *   finite inputs, |sum| rounds beyond FLT_MAX -> +-inf (IEEE overflow)
 *   exact zero sum -> -0 if there was at least one input and all inputs
 *   were -0 (what IEEE addition gives in any order), else +0 (also for
 *   the empty sum). */
SB_FN float sb_sacc_round_f32(const sb_sacc *acc) {
    sb_u32 fl = acc->flags;
    if ((fl & SB_SACC_F_NAN) || ((fl & SB_SACC_F_PINF) && (fl & SB_SACC_F_NINF)))
        return sb_u2f(SB_REDUCE_NAN_BITS);
    if (fl & SB_SACC_F_PINF) return sb_u2f(0x7F800000u);
    if (fl & SB_SACC_F_NINF) return sb_u2f(0xFF800000u);
    sb_sacc c = *acc;
    sb_sacc_normalize(&c);
    /* 352-bit two's complement digits, least significant first */
    sb_u32 d[SB_SACC_LIMBS + 1];
    for (sb_i32 i = 0; i < SB_SACC_LIMBS - 1; i++) d[i] = (sb_u32)c.limb[i];
    sb_u64 t = (sb_u64)c.limb[SB_SACC_LIMBS - 1];
    d[SB_SACC_LIMBS - 1] = (sb_u32)(t & SB__LOW32);
    d[SB_SACC_LIMBS] = (sb_u32)(t >> 32);
    sb_u32 neg = c.limb[SB_SACC_LIMBS - 1] < 0 ? 1u : 0u;
    if (neg) { /* magnitude = ~d + 1 */
        sb_u32 carry = 1u;
        for (sb_i32 i = 0; i <= SB_SACC_LIMBS; i++) {
            d[i] = ~d[i] + carry;
            carry = (carry && d[i] == 0u) ? 1u : 0u;
        }
    }
    sb_i32 j = SB_SACC_LIMBS;
    while (j >= 0 && d[j] == 0u) j--;
    if (j < 0) {
        sb_u32 negz = (fl & SB_SACC_F_ANY) && !(fl & SB_SACC_F_NOTNEGZ);
        return sb_u2f(negz ? 0x80000000u : 0u);
    }
    if (j == 0) return sb__round_f32(neg, (sb_u64)d[0], -149, 0u);
    sb_u64 mag = ((sb_u64)d[j] << 32) | (sb_u64)d[j - 1]; /* 33..64 significant bits */
    sb_u32 sticky = 0u;
    for (sb_i32 i = 0; i < j - 1; i++) sticky |= d[i];
    return sb__round_f32(neg, mag, 32 * (j - 1) - 149, sticky ? 1u : 0u);
}

/* ======================================================================== */
/* 3. Fixed-shape float reduction (shape depends on the element count only)  */
/* ======================================================================== */
/*
 * Shape, for n elements and block size B = SB_REDUCE_BLOCK:
 *   leaves: nb = ceil(n / B) blocks; block b covers [b*B, min(n, (b+1)*B)) and
 *           is summed left to right: s = x[lo]; s = s + x[lo+1]; ...
 *   tree:   while count > 1: s'[i] = s[2i] + s[2i+1] for i < count/2, and if
 *           count is odd s'[count/2] = s[count-1] (carried up unchanged);
 *           count = ceil(count / 2).
 *   n == 0 gives +0. Any NaN result is returned as the canonical NaN.
 * SB_REDUCE_BLOCK is part of the numeric profile: changing it changes bits,
 * so it cannot be overridden. The *_bs variants take the block size as an
 * argument for tests and documentation only; identical-mode code calls the
 * plain ones.
 */
#ifdef SB_REDUCE_BLOCK
#error "SB_REDUCE_BLOCK is fixed by the numeric profile; use the *_bs variants to test other sizes"
#endif
#define SB_REDUCE_BLOCK 256

/* Number of leaves for n elements and block size bs: ceil(n / bs); 0 for n <= 0. */
SB_FN sb_i64 sb_tree_nblocks_bs(sb_i64 n, sb_i64 bs) {
    return n <= 0 ? 0 : (n - 1) / bs + 1;
}

/* Number of leaves (scratch floats needed by sb_tree_sum_f32) for n elements. */
SB_FN sb_i64 sb_tree_nblocks(sb_i64 n) {
    return sb_tree_nblocks_bs(n, SB_REDUCE_BLOCK);
}

/* One leaf: x[begin] + x[begin+1] + ... + x[end-1], left to right, each add
 * rounded to float; +0 for an empty range; a NaN result is canonical. Reads
 * only x[begin..end). The caller passes the bounds of one block. */
SB_FN float sb_block_sum_f32(SB_GLOBAL const float *x, sb_i64 begin, sb_i64 end) {
    if (begin >= end) return 0.0f;
    float s = x[begin];
    for (sb_i64 i = begin + 1; i < end; i++) s = SB__FADD(s, x[i]);
    return sb_reduce_canon_nan(s);
}

/* One leaf of the dot product: sum of x[i]*w[i] over [begin, end), each
 * product rounded to float and then added left to right (never fused). */
SB_FN float sb_block_dot_f32(SB_GLOBAL const float *x, SB_GLOBAL const float *w, sb_i64 begin,
                             sb_i64 end) {
    if (begin >= end) return 0.0f;
    float s = SB__FMUL(x[begin], w[begin]);
    for (sb_i64 i = begin + 1; i < end; i++) {
        float p = SB__FMUL(x[i], w[i]);
        s = SB__FADD(s, p);
    }
    return sb_reduce_canon_nan(s);
}

/* Combines count leaf sums in place by the pairwise rule above and returns
 * the total (+0 for count <= 0; a NaN result is canonical). partials[0..count)
 * is overwritten (the caller owns it). Any schedule that fills partials[b]
 * with block b's leaf and then calls this gives the serial function's bits. */
SB_FN float sb_tree_combine_f32(SB_GLOBAL float *partials, sb_i64 count) {
    if (count <= 0) return 0.0f;
    while (count > 1) {
        sb_i64 npair = count / 2;
        for (sb_i64 i = 0; i < npair; i++) partials[i] = SB__FADD(partials[2 * i], partials[2 * i + 1]);
        if (count & 1) partials[npair] = partials[count - 1];
        count = count - npair;
    }
    return sb_reduce_canon_nan(partials[0]);
}

/* The whole fixed-shape sum with block size bs (tests; see above). scratch
 * must hold sb_tree_nblocks_bs(n, bs) floats and is overwritten. */
SB_FN float sb_tree_sum_f32_bs(SB_GLOBAL const float *x, sb_i64 n, sb_i64 bs, SB_GLOBAL float *scratch) {
    sb_i64 nb = sb_tree_nblocks_bs(n, bs);
    for (sb_i64 b = 0; b < nb; b++) {
        sb_i64 lo = b * bs, hi = lo + bs;
        scratch[b] = sb_block_sum_f32(x, lo, hi < n ? hi : n);
    }
    return sb_tree_combine_f32(scratch, nb);
}

/* The fixed-shape sum of x[0..n), serially. scratch must hold
 * sb_tree_nblocks(n) floats and is overwritten. */
SB_FN float sb_tree_sum_f32(SB_GLOBAL const float *x, sb_i64 n, SB_GLOBAL float *scratch) {
    return sb_tree_sum_f32_bs(x, n, SB_REDUCE_BLOCK, scratch);
}

/* The fixed-shape dot product with block size bs (tests; see above). */
SB_FN float sb_tree_dot_f32_bs(SB_GLOBAL const float *x, SB_GLOBAL const float *w, sb_i64 n, sb_i64 bs,
                               SB_GLOBAL float *scratch) {
    sb_i64 nb = sb_tree_nblocks_bs(n, bs);
    for (sb_i64 b = 0; b < nb; b++) {
        sb_i64 lo = b * bs, hi = lo + bs;
        scratch[b] = sb_block_dot_f32(x, w, lo, hi < n ? hi : n);
    }
    return sb_tree_combine_f32(scratch, nb);
}

/* The fixed-shape dot product sum x[i]*w[i] over [0, n), serially: leaves by
 * sb_block_dot_f32, tree by sb_tree_combine_f32. scratch as for the sum. */
SB_FN float sb_tree_dot_f32(SB_GLOBAL const float *x, SB_GLOBAL const float *w, sb_i64 n,
                            SB_GLOBAL float *scratch) {
    return sb_tree_dot_f32_bs(x, w, n, SB_REDUCE_BLOCK, scratch);
}

#endif
