/*
 * compat.h: the vocabulary kernel bodies, entry kernels and the profile's math
 * (src/math) are written in, so that one source compiles as C11 on the host,
 * as CUDA C++ and as OpenCL C. A GPU backend includes its own compat header
 * before any of these files (backends/cuda/compat_cuda.h at the top of each
 * .cu file; backends/opencl/compat_opencl.h put in front of every OpenCL
 * program), as Cycles' kernels are compiled; that header defines
 * SB_COMPAT_DEVICE. Without it, this is host C11, the vocabulary below.
 *
 * The vocabulary:
 *   SB_FN        qualifiers of a device-neutral helper function
 *   SB_FN_BIG    the same for a large, rarely called one (a whole series'
 *                fit): kept out of line on CUDA and HIP, where inlining the
 *                time-series fits into their kernels made ptxas take minutes
 *                an architecture; inline elsewhere. Where a call is made
 *                changes no rounding (the profile contracts nothing).
 *   SB_TABLE     qualifiers of a read-only constant table at file scope
 *   SB_UNROLL    before a loop of constant length: unrolled whole on a device
 *                (its arrays then registers); nothing on the host
 *   SB_GLOBAL    address space of the arrays a kernel body reads and writes
 *   sb_u8 sb_u32 sb_i32 sb_u64 sb_i64   sized integer types
 *   SB_STATIC_ASSERT(c, msg)      a layout check (a no-op in OpenCL C)
 *   sb_f2u(f) sb_u2f(u)           bit casts between float and sb_u32
 *   sb_d2u(d) sb_u2d(u)           bit casts between double and sb_u64, for the
 *                                 float64 kernels only (f64_log.h, ets.h)
 * and, for entry kernels only (GPU dialects): SB_KERNEL, SB_LOCAL (pointer
 * into local memory), SB_SHARED (a local array), SB_DYN_LOCAL_PARAM /
 * SB_DYN_LOCAL (local memory sized at launch), sb_global_id, sb_local_id,
 * sb_group_id, sb_global_size, sb_barrier, sb_barrier_global, the integer
 * atomics sb_atom_add64, sb_atom_cas64, sb_atomic_add32, sb_atomic_cas32, sb_atomic_inc32,
 * sb_atomic_max32, sb_atomic_min32, and sb_umax, sb_load_u8x4; sb_fmaf (a fused
 * multiply-add) only in a screen whose bits reach no result (neighbors_entry.h).
 * Kernel bodies use only these, float literals with an f suffix, and the
 * operations the profile allows (docs/numeric-profile.md). No double, no libm,
 * but in the float64 kernels of a family that states float64 (ets.h: IEEE
 * doubles, + - * / only, on devices that have them, refused by name elsewhere).
 */
#ifndef SB_KERNELS_COMPAT_H
#define SB_KERNELS_COMPAT_H

#if defined(SB_COMPAT_DEVICE)
/* a GPU backend's compat header came first */
#elif defined(__OPENCL_VERSION__) || defined(__OPENCL_C_VERSION__) || defined(__CUDACC__)
#error "samebits: a GPU backend includes its compat header (src/backends/*/compat_*.h) before any kernel source"
#else
#include <stdint.h>
#include <string.h>

#include "../core/float_eval.h"

#define SB_FN static inline
#define SB_FN_BIG static inline
#define SB_GLOBAL
#define SB_TABLE static const
#define SB_UNROLL /* a device's whole unrolling of a constant-length loop (compat_cuda.h, compat_opencl.h) */

typedef uint8_t sb_u8;
typedef uint32_t sb_u32;
typedef int32_t sb_i32;
typedef uint64_t sb_u64;
typedef int64_t sb_i64;

SB_FN sb_u32 sb_f2u(float f) { sb_u32 u; memcpy(&u, &f, 4); return u; }
SB_FN float sb_u2f(sb_u32 u) { float f; memcpy(&f, &u, 4); return f; }
/* bit casts between double and sb_u64: only for the float64 kernels a family
 * states (f64_log.h, ets.h); a GPU compat header has them where the device
 * has IEEE doubles */
SB_FN sb_u64 sb_d2u(double d) { sb_u64 u; memcpy(&u, &d, 8); return u; }
SB_FN double sb_u2d(sb_u64 u) { double d; memcpy(&d, &u, 8); return d; }

#define SB_STATIC_ASSERT(c, msg) _Static_assert(c, msg)
#endif

#endif
