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

/* 2^(j/128), j = 0..127, rounded to nearest double. */
SB_TABLE double sb__hx_exp2j[128] = {
    0x1.0000000000000p+0, 0x1.0163da9fb3335p+0, 0x1.02c9a3e778061p+0, 0x1.04315e86e7f85p+0,
    0x1.059b0d3158574p+0, 0x1.0706b29ddf6dep+0, 0x1.0874518759bc8p+0, 0x1.09e3ecac6f383p+0,
    0x1.0b5586cf9890fp+0, 0x1.0cc922b7247f7p+0, 0x1.0e3ec32d3d1a2p+0, 0x1.0fb66affed31bp+0,
    0x1.11301d0125b51p+0, 0x1.12abdc06c31ccp+0, 0x1.1429aaea92de0p+0, 0x1.15a98c8a58e51p+0,
    0x1.172b83c7d517bp+0, 0x1.18af9388c8deap+0, 0x1.1a35beb6fcb75p+0, 0x1.1bbe084045cd4p+0,
    0x1.1d4873168b9aap+0, 0x1.1ed5022fcd91dp+0, 0x1.2063b88628cd6p+0, 0x1.21f49917ddc96p+0,
    0x1.2387a6e756238p+0, 0x1.251ce4fb2a63fp+0, 0x1.26b4565e27cddp+0, 0x1.284dfe1f56381p+0,
    0x1.29e9df51fdee1p+0, 0x1.2b87fd0dad990p+0, 0x1.2d285a6e4030bp+0, 0x1.2ecafa93e2f56p+0,
    0x1.306fe0a31b715p+0, 0x1.32170fc4cd831p+0, 0x1.33c08b26416ffp+0, 0x1.356c55f929ff1p+0,
    0x1.371a7373aa9cbp+0, 0x1.38cae6d05d866p+0, 0x1.3a7db34e59ff7p+0, 0x1.3c32dc313a8e5p+0,
    0x1.3dea64c123422p+0, 0x1.3fa4504ac801cp+0, 0x1.4160a21f72e2ap+0, 0x1.431f5d950a897p+0,
    0x1.44e086061892dp+0, 0x1.46a41ed1d0057p+0, 0x1.486a2b5c13cd0p+0, 0x1.4a32af0d7d3dep+0,
    0x1.4bfdad5362a27p+0, 0x1.4dcb299fddd0dp+0, 0x1.4f9b2769d2ca7p+0, 0x1.516daa2cf6642p+0,
    0x1.5342b569d4f82p+0, 0x1.551a4ca5d920fp+0, 0x1.56f4736b527dap+0, 0x1.58d12d497c7fdp+0,
    0x1.5ab07dd485429p+0, 0x1.5c9268a5946b7p+0, 0x1.5e76f15ad2148p+0, 0x1.605e1b976dc09p+0,
    0x1.6247eb03a5585p+0, 0x1.6434634ccc320p+0, 0x1.6623882552225p+0, 0x1.68155d44ca973p+0,
    0x1.6a09e667f3bcdp+0, 0x1.6c012750bdabfp+0, 0x1.6dfb23c651a2fp+0, 0x1.6ff7df9519484p+0,
    0x1.71f75e8ec5f74p+0, 0x1.73f9a48a58174p+0, 0x1.75feb564267c9p+0, 0x1.780694fde5d3fp+0,
    0x1.7a11473eb0187p+0, 0x1.7c1ed0130c132p+0, 0x1.7e2f336cf4e62p+0, 0x1.80427543e1a12p+0,
    0x1.82589994cce13p+0, 0x1.8471a4623c7adp+0, 0x1.868d99b4492edp+0, 0x1.88ac7d98a6699p+0,
    0x1.8ace5422aa0dbp+0, 0x1.8cf3216b5448cp+0, 0x1.8f1ae99157736p+0, 0x1.9145b0b91ffc6p+0,
    0x1.93737b0cdc5e5p+0, 0x1.95a44cbc8520fp+0, 0x1.97d829fde4e50p+0, 0x1.9a0f170ca07bap+0,
    0x1.9c49182a3f090p+0, 0x1.9e86319e32323p+0, 0x1.a0c667b5de565p+0, 0x1.a309bec4a2d33p+0,
    0x1.a5503b23e255dp+0, 0x1.a799e1330b358p+0, 0x1.a9e6b5579fdbfp+0, 0x1.ac36bbfd3f37ap+0,
    0x1.ae89f995ad3adp+0, 0x1.b0e07298db666p+0, 0x1.b33a2b84f15fbp+0, 0x1.b59728de5593ap+0,
    0x1.b7f76f2fb5e47p+0, 0x1.ba5b030a1064ap+0, 0x1.bcc1e904bc1d2p+0, 0x1.bf2c25bd71e09p+0,
    0x1.c199bdd85529cp+0, 0x1.c40ab5fffd07ap+0, 0x1.c67f12e57d14bp+0, 0x1.c8f6d9406e7b5p+0,
    0x1.cb720dcef9069p+0, 0x1.cdf0b555dc3fap+0, 0x1.d072d4a07897cp+0, 0x1.d2f87080d89f2p+0,
    0x1.d5818dcfba487p+0, 0x1.d80e316c98398p+0, 0x1.da9e603db3285p+0, 0x1.dd321f301b460p+0,
    0x1.dfc97337b9b5fp+0, 0x1.e264614f5a129p+0, 0x1.e502ee78b3ff6p+0, 0x1.e7a51fbc74c83p+0,
    0x1.ea4afa2a490dap+0, 0x1.ecf482d8e67f1p+0, 0x1.efa1bee615a27p+0, 0x1.f252b376bba97p+0,
    0x1.f50765b6e4540p+0, 0x1.f7bfdad9cbe14p+0, 0x1.fa7c1819e90d8p+0, 0x1.fd3c22b8f71f1p+0,
};
#define SB__HX_LN2_128_HI 0x1.62e42ff000000p-8
#define SB__HX_LN2_128_LO -0x1.718432a1b0e26p-42
#define SB__HX_INV_LN2_128 0x1.71547652b82fep+7
#include "../kernels/f64_log.h" /* the double log, shared with float64 kernels */


/* 1 when no float rounding boundary is within 2^-45 relative of y (y a normal
 * double whose float rounding is normal): its 29 fraction bits below float's
 * 23 are at least 2^8 away from the midpoint 2^28. */
SB_FN int sb__hx_safe(double y) {
    const sb_u32 low = (sb_u32)(sb__hx_bits(y) & 0x1FFFFFFFu);
    return low - (0x10000000u - 256u) > 512u;
}

/* e^x for a double x with |x| < 104 (the result a normal double). Relative
 * error: the table's 2^-53, the polynomial's rounding about 2^-53 of its
 * value (q < 2^-8), the product and sum 2^-53 each, the reduction's under
 * 2^-60: below 2^-51 in all. */
SB_FN double sb__hx_exp(double x) {
    const double t = x * SB__HX_INV_LN2_128;
    const double nd = (t + 0x1.8p52) - 0x1.8p52; /* nearest integer, ties even */
    const sb_i64 n = (sb_i64)nd;
    const double r = (x - nd * SB__HX_LN2_128_HI) - nd * SB__HX_LN2_128_LO;
    const double q = r + r * (r * (0.5 + r * (0x1.5555555555555p-3 + r * (0x1.5555555555555p-5 +
                                                                       r * 0x1.1111111111111p-7))));
    const sb_i64 k = n >> 7; /* floor: n = 128 k + j */
    const double T = sb__hx_exp2j[n & 127];
    return (T + T * q) * sb__hx_dbl((sb_u64)(k + 1023) << 52);
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
