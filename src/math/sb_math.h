/*
 * sb_math.h: the profile's arithmetic, as library code includes it. Never
 * include sb_elem.h or sb_reduce.h directly: this header is also where a
 * sabotage build (make SABOTAGE=libm-exp) swaps in the vendor's function, so
 * that the test suite can show that the identity checks catch it.
 */
#ifndef SB_MATH_H
#define SB_MATH_H
#include "../kernels/compat.h"
#include "sb_elem.h"
#include "sb_reduce.h"

#if defined(SB_SABOTAGE_LIBM_EXP) && !defined(__CUDACC__) && !defined(__OPENCL_VERSION__)
/* Separating arm for rule 3: glibc's expf instead of the profile's. */
#include <math.h>
#define sb_expf(x) expf(x)
#endif

#if defined(SB_SABOTAGE_LIBM_LOG) && !defined(__CUDACC__) && !defined(__OPENCL_VERSION__)
/* Separating arm for rule 3: glibc's logf instead of the profile's (glibc's
 * is not correctly rounded everywhere; the profile's is). */
#include <math.h>
#define sb_logf(x) logf(x)
#endif

#if defined(SB_SABOTAGE_LIBM_SIGMOID) && !defined(__CUDACC__) && !defined(__OPENCL_VERSION__)
/* Separating arm for rule 3: the textbook sigmoid through libm, 1/(1+expf(-x)),
 * three roundings where the profile's is correctly rounded. */
#include <math.h>
#define sb_sigmoidf(x) (1.0f / (1.0f + expf(-(x))))
#endif

/* sb_sigmoidf_n(x, out, n): out[i] = sb_sigmoidf(x[i]) for i < n (host code:
 * the block form of sb_elem.h; a sabotage build's sb_sigmoidf, value by
 * value, where one is swapped in). */
#if defined(SB_SABOTAGE_LIBM_SIGMOID) && !defined(__CUDACC__) && !defined(__OPENCL_VERSION__)
#define sb_sigmoidf_n(x, out, n)                                                      \
    do {                                                                              \
        for (sb_i64 i_ = 0; i_ < (n); i_++) (out)[i_] = sb_sigmoidf((x)[i_]);         \
    } while (0)
#else
#define sb_sigmoidf_n(x, out, n) sb__sigmoidf_n((x), (out), (n))
#endif

#endif
