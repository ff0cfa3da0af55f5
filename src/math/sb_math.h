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

#endif
