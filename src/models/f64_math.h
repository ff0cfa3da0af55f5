/*
 * f64_math.h: e^x and log v in double for the families that say float64
 * (SVM's Platt scaling, GP's likelihood), by the profile's host double
 * functions (src/math/sb_elem_host.h) with their edges made total. One copy,
 * so the two families cannot drift apart.
 */
#ifndef SB_MODELS_F64_MATH_H
#define SB_MODELS_F64_MATH_H
#include "../math/sb_math.h"
#include <math.h> /* INFINITY and NAN only */

/* e^x. sb__hx_exp is accurate for results that are normal doubles (its
 * reduction is exact for |x| < 2^16 ln2/128 and its scale 2^k is normal for
 * x > -708); below -708 the result is taken as +0 (under 2^-1021: no sum
 * here can see it), above 709 as infinity. */
static inline double sb_f64_exp(double x) {
    if (x != x) return x;
    if (x < -708.0) return 0.0;
    if (x > 709.0) return INFINITY;
    return sb__hx_exp(x);
}

/* log v for v > 0 finite (0: -infinity; negative: NaN; +infinity and NaN
 * pass through), the argument near 1 through log1p's series and a subnormal
 * scaled up by 2^200 first. */
static inline double sb_f64_log(double v) {
    if (!(v > 0.0)) return v == 0.0 ? -INFINITY : NAN;
    if (v - v != 0.0) return v;
    double shift = 0.0;
    if (v < 0x1p-1000) v = v * 0x1p200, shift = -200.0 * 0.6931471805599453;
    const double d = v - 1.0;
    const double r = (d < 0x1p-6 && d > -0x1p-6) ? sb__hx_log1p_small(d) : sb__hx_log(v);
    return r + shift;
}

#endif
