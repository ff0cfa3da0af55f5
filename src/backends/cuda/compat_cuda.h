/* compat_cuda.h: the kernel vocabulary (src/kernels/compat.h) for CUDA C.
 * Must be compiled with -fmad=false -ftz=false -prec-div=true -prec-sqrt=true. */
#ifndef SB_COMPAT_CUDA_H
#define SB_COMPAT_CUDA_H
#include <stdint.h>

#define SB_FN static __device__ __forceinline__
/* Address space of arrays that kernels read and write. */
#define SB_GLOBAL 
#define SB_TABLE static __device__ const

typedef uint8_t sb_u8;
typedef uint32_t sb_u32;
typedef int32_t sb_i32;
typedef uint64_t sb_u64;
typedef int64_t sb_i64;

#define sb_f2u(f) __float_as_uint(f)
#define sb_u2f(u) __uint_as_float(u)

#define SB_STATIC_ASSERT(c, msg) static_assert(c, msg)

#endif
