/*
 * sb_elem_host.h: faster host paths to four of the profile's correctly rounded
 * float32 functions (sb_expf, sb_logf, sb_log1pf, sb_sigmoidf, and the pair
 * sb_sigmoid_expneg), for C on a CPU only. sb_elem.h includes it; read that
 * header first.
 *
 * Why the bits cannot move: each result here is the correctly rounded float of
 * the exact function, the one value sb_elem.h's integer code returns. The
 * function is evaluated in IEEE double (no contraction, no excess precision:
 * the profile's compiler flags; the same bits on every CPU) to a relative
 * error far below 2^-47 (the analysis is beside each function), and rounded
 * to float only when no float rounding boundary (a midpoint between two
 * floats) lies within 2^-45 relative of the double: the low 29 of its 52
 * fraction bits are then at least 2^8 units away from 2^28. Otherwise, and
 * outside each path's range (results that would be subnormal floats, special
 * values, tiny arguments), the integer function answers. tools/exhaustive_elem.c
 * checks all 2^32 inputs of each function through this path against MPFR,
 * and tests/unit/test_elem_host.c checks the path against the integer code
 * on a sample and on inputs whose double lands in the guarded band (where a
 * guard too narrow fails it).
 *
 * Methods: exp by Tang's table (ACM TOMS 15(2), 1989): x = (128 k + j) ln2/128
 * + r with a Cody-Waite two-part ln2/128, e^x = 2^k 2^(j/128) e^r, e^r by its
 * Taylor polynomial of degree 5 (|r| <= ln2/256: truncation below 2^-60).
 * log by Tang's table (ACM TOMS 16(4), 1990): v = 2^E m, m = F_j + f with
 * F_j = 1 + j/128, log v = E ln2 + log F_j + log1p(f / F_j), the first two
 * summed exactly from parts that are multiples of 2^-42; log1p(r) for
 * 0 <= r < 2^-7 by its Taylor polynomial of degree 8 (truncation < 2^-66);
 * within 2^-6 of 1, log1p(u) by its Taylor polynomial of degree 10 in the
 * exact u = v - 1 (truncation below 2^-57 relative).
 */
#ifndef SB_MATH_SB_ELEM_HOST_H
#define SB_MATH_SB_ELEM_HOST_H

#if defined(SB_COMPAT_DEVICE)
#error "sb_elem_host.h is host C only"
#endif

#include "../kernels/f64_log.h" /* the double log, shared with float64 kernels */
#include "../kernels/f64_exp.h" /* the double exp, shared with float64 kernels */


/* 1 when no float rounding boundary is within 2^-45 relative of y (y a normal
 * double whose float rounding is normal): its 29 fraction bits below float's
 * 23 are at least 2^8 away from the midpoint 2^28. */
SB_FN int sb__hx_safe(double y) {
    const sb_u32 low = (sb_u32)(sb__hx_bits(y) & 0x1FFFFFFFu);
    return low - (0x10000000u - 256u) > 512u;
}

SB_FN float sb__expf_int(float x);
SB_FN float sb__logf_int(float x);
SB_FN float sb__log1pf_int(float x);
SB_FN float sb__sigmoidf_int(float x);
SB_FN float sb__sigmoid_expneg_int(float x, float *en);

SB_FN float sb__expf_host(float x) {
    const sb_u32 a = sb_f2u(x) & 0x7FFFFFFFu;
    if (a >= 0x32000000u && a < 0x42AE0000u) { /* 2^-27 <= |x| < 87: e^x a normal float */
        const double y = sb__hx_exp((double)x);
        if (sb__hx_safe(y)) return (float)y;
    }
    return sb__expf_int(x);
}

SB_FN float sb__logf_host(float x) {
    const sb_u32 u = sb_f2u(x);
    if (u >= 0x00800000u && u < 0x7F800000u) { /* positive normal */
        const double v = (double)x, d = v - 1.0; /* exact */
        const double y = (d < 0x1p-6 && d > -0x1p-6) ? sb__hx_log1p_small(d) : sb__hx_log(v);
        if (y != 0.0 && sb__hx_safe(y)) return (float)y;
    }
    return sb__logf_int(x);
}

SB_FN float sb__log1pf_host(float x) {
    const sb_u32 u = sb_f2u(x);
    if (u >= 0x33800000u && u <= 0x3F800000u) { /* 2^-24 <= x <= 1 */
        const double d = (double)x;
        /* 1 + x is exact in double from x >= 2^-29 */
        const double y = d < 0x1p-6 ? sb__hx_log1p_small(d) : sb__hx_log(1.0 + d);
        if (sb__hx_safe(y)) return (float)y;
    }
    return sb__log1pf_int(x);
}

/* sigmoid from e = e^-|x| (error below 2^-51): 1 / (1 + e) or e / (1 + e),
 * two more roundings: below 2^-50. 1 with *sg and *en set when both round
 * safely (2^-15 <= |x| < 32), else 0. */
SB_FN int sb__hx_sigmoid(float x, float *sg, float *en) {
    const sb_u32 u = sb_f2u(x), a = u & 0x7FFFFFFFu;
    if (a < 0x38000000u || a >= 0x42000000u) return 0;
    const double e = sb__hx_exp(-(double)sb_u2f(a)), den = 1.0 + e;
    const double y = (u >> 31) ? e / den : 1.0 / den;
    if (!sb__hx_safe(e) || !sb__hx_safe(y)) return 0;
    *en = (float)e;
    *sg = (float)y;
    return 1;
}

SB_FN float sb__sigmoidf_host(float x) {
    float sg, en;
    return sb__hx_sigmoid(x, &sg, &en) ? sg : sb__sigmoidf_int(x);
}

SB_FN float sb__sigmoid_expneg_host(float x, float *en) {
    float sg;
    return sb__hx_sigmoid(x, &sg, en) ? sg : sb__sigmoid_expneg_int(x, en);
}

#endif /* SB_MATH_SB_ELEM_HOST_H */
