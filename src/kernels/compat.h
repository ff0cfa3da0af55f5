/*
 * compat.h: picks the backend's compat header so that kernel bodies and the
 * profile's math (src/math) compile unchanged as C11, CUDA C and OpenCL C.
 *
 * Every compat header provides the same small vocabulary:
 *   SB_FN        qualifiers of a device-neutral helper function
 *   SB_TABLE     qualifiers of a read-only constant table at file scope
 *   SB_GLOBAL    address space of the arrays a kernel body reads and writes
 *   sb_u8 sb_u32 sb_i32 sb_u64 sb_i64   sized integer types
 *   SB_STATIC_ASSERT(c, msg)      a layout check (a no-op in OpenCL C)
 *   sb_f2u(f) sb_u2f(u)           bit casts between float and sb_u32
 * Kernel bodies use only these, float literals with an f suffix, and the
 * operations the profile allows (docs/numeric-profile.md). No double, no libm.
 */
#ifndef SB_KERNELS_COMPAT_H
#define SB_KERNELS_COMPAT_H

#if defined(__OPENCL_VERSION__) || defined(__OPENCL_C_VERSION__)
#include "../backends/opencl/compat_opencl.h"
#elif defined(__CUDACC__)
#include "../backends/cuda/compat_cuda.h"
#else
#include "../backends/cpu/compat_cpu.h"
#endif

#endif
