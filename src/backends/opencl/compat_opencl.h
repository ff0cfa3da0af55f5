/* compat_opencl.h: the kernel vocabulary (src/kernels/compat.h) for OpenCL C 1.2.
 * Programs are built without -cl-mad-enable and -cl-fast-relaxed-math, and with
 * -cl-fp32-correctly-rounded-divide-sqrt. */
#ifndef SB_COMPAT_OPENCL_H
#define SB_COMPAT_OPENCL_H

/* OpenCL C contracts a*b+c by default; the profile forbids it. The pragma, not
 * a build option, is what decides it: PoCL's clang ignores -cl-mad-enable on
 * x86 (docs/opencl.md). SB_SABOTAGE_CONTRACT is the separating arm. */
#if defined(SB_SABOTAGE_CONTRACT)
#pragma OPENCL FP_CONTRACT ON
#else
#pragma OPENCL FP_CONTRACT OFF
#endif

#define SB_FN static inline
/* Address space of arrays that kernels read and write. */
#define SB_GLOBAL __global
#define SB_TABLE __constant

typedef uchar sb_u8;
typedef uint sb_u32;
typedef int sb_i32;
typedef ulong sb_u64;
typedef long sb_i64;

#define sb_f2u(f) as_uint(f)
#define sb_u2f(u) as_float(u)

/* OpenCL C 1.2 has no static assertion; the host side checks the layouts. */
#define SB_STATIC_ASSERT(c, msg)

#endif
