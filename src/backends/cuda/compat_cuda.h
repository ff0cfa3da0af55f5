/* compat_cuda.h: the kernel vocabulary (src/kernels/compat.h) for CUDA C++.
 * Included first by every .cu file that compiles kernel bodies or the entry
 * kernels of src/kernels/entry/, so those never name a backend. Must be
 * compiled with -fmad=false -ftz=false -prec-div=true -prec-sqrt=true
 * (tools/cuda-compile-check.sh --print-flags profile). HIP reuses these names
 * (compat_hip.h maps the few that differ). */
#ifndef SB_COMPAT_CUDA_H
#define SB_COMPAT_CUDA_H
#define SB_COMPAT_DEVICE 1
#include <stdint.h>

#define SB_FN static __device__ __forceinline__
/* a whole series' fit and its optimizer (src/kernels/compat.h): a call, not
 * inlined, which keeps ptxas to seconds on entry_ts.cu (75 s an architecture inlined) */
#define SB_FN_BIG static __device__ __noinline__
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
/* double bit casts, for the float64 kernels only (kernels/ets.h) */
#define sb_d2u(d) ((sb_u64)__double_as_longlong(d))
#define sb_u2d(u) __longlong_as_double((long long)(u))

#define SB_STATIC_ASSERT(c, msg) static_assert(c, msg)

/* ---- entry kernels ---- */
#define SB_KERNEL extern "C" __global__
#define SB_LOCAL
#define SB_SHARED __shared__
/* Dynamic local memory: CUDA's one extern shared array, sized at launch. */
#define SB_DYN_LOCAL_PARAM(type, name)
#define SB_DYN_LOCAL(type, name)                                                \
    extern __shared__ unsigned long long sb_dyn_local_[];                       \
    type *name = (type *)sb_dyn_local_
SB_FN sb_i64 sb_global_id(int d) {
    return d == 0 ? (sb_i64)blockIdx.x * blockDim.x + threadIdx.x : (sb_i64)blockIdx.y * blockDim.y + threadIdx.y;
}
SB_FN int sb_local_id(int d) { return d == 0 ? (int)threadIdx.x : (int)threadIdx.y; }
SB_FN int sb_group_id(int d) { return d == 0 ? (int)blockIdx.x : (int)blockIdx.y; }
SB_FN sb_i64 sb_global_size(int d) {
    return d == 0 ? (sb_i64)gridDim.x * blockDim.x : (sb_i64)gridDim.y * blockDim.y;
}
#define sb_barrier() __syncthreads()
#define sb_barrier_global() __syncthreads()
/* a loop of constant length unrolled whole (its arrays then registers) */
#define SB_UNROLL _Pragma("unroll")
/* Integer atomics (global or shared): order-free, so exact. */
#define sb_atom_add64(p, v) atomicAdd((unsigned long long *)(p), (unsigned long long)(v))
#define sb_atom_cas64(p, c, v) \
    ((sb_i64)atomicCAS((unsigned long long *)(p), (unsigned long long)(c), (unsigned long long)(v)))
#define sb_atomic_cas32(p, c, v) atomicCAS((p), (c), (v))
#define sb_atomic_add32(p, v) atomicAdd((p), (v))
#define sb_atomic_inc32(p) atomicAdd((p), 1)
#define sb_atomic_max32(p, v) atomicMax((p), (v))
#define sb_atomic_min32(p, v) atomicMin((p), (v))
#define sb_umax(a, b) max((a), (b))
/* A fused multiply-add, only for a screen whose bits reach no result
 * (neighbors_entry.h); every other kernel spells its operations out. */
#define sb_fmaf(a, b, c) __fmaf_rn((a), (b), (c))
/* The vendor's own exp, for the separating arm SB_ARM_VENDOR_EXP only. */
#define sb_vendor_expf(x) expf(x)
/* Four bytes from a 4-aligned address into o[0..3]. */
#define sb_load_u8x4(p, o)                                                      \
    do {                                                                        \
        const uchar4 w_ = *(const uchar4 *)(p);                                 \
        (o)[0] = w_.x, (o)[1] = w_.y, (o)[2] = w_.z, (o)[3] = w_.w;             \
    } while (0)

#endif
