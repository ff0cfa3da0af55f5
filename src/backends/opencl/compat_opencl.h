/* compat_opencl.h: the kernel vocabulary (src/kernels/compat.h) for OpenCL C 1.2.
 * The OpenCL device (dev_opencl.c) puts this text in front of every program it
 * builds, so kernel bodies and entry kernels never name a backend. Programs are
 * built without -cl-mad-enable and -cl-fast-relaxed-math, and with
 * -cl-fp32-correctly-rounded-divide-sqrt. */
#ifndef SB_COMPAT_OPENCL_H
#define SB_COMPAT_OPENCL_H
#define SB_COMPAT_DEVICE 1

/* OpenCL C contracts a*b+c by default; the profile forbids it. The pragma, not
 * a build option, is what decides it: PoCL's clang ignores -cl-mad-enable on
 * x86 (docs/opencl.md). SB_SABOTAGE_CONTRACT is the separating arm. */
#if defined(SB_SABOTAGE_CONTRACT)
#pragma OPENCL FP_CONTRACT ON
#else
#pragma OPENCL FP_CONTRACT OFF
#endif
/* 64-bit integer atomics: the exact histogram sums (devices without them are refused). */
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

#define SB_FN static inline
#define SB_FN_BIG static inline
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
/* IEEE doubles for the float64 program only (the time-series program, which
 * dev_opencl.c builds with SB_OCL_F64 on a device that has cl_khr_fp64): in
 * every other program an unsuffixed literal stays what it was. */
#if defined(SB_OCL_F64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define sb_d2u(d) as_ulong(d)
#define sb_u2d(u) as_double(u)
#endif

/* OpenCL C 1.2 has no static assertion; the host side checks the layouts. */
#define SB_STATIC_ASSERT(c, msg)

/* ---- entry kernels ---- */
#define SB_KERNEL __kernel
#define SB_LOCAL __local   /* address space of a pointer into local memory */
#define SB_SHARED __local  /* a local-memory array declared in a kernel */
/* Dynamic local memory: the last kernel parameter here; the host gives its size at launch. */
#define SB_DYN_LOCAL_PARAM(type, name) , __local type *name
#define SB_DYN_LOCAL(type, name) (void)0
#define sb_global_id(d) ((sb_i64)get_global_id(d))
#define sb_local_id(d) ((int)get_local_id(d))
#define sb_group_id(d) ((int)get_group_id(d))
#define sb_global_size(d) ((sb_i64)get_global_size(d))
#define sb_barrier() barrier(CLK_LOCAL_MEM_FENCE)
#define sb_barrier_global() barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE)
/* a loop of constant length unrolled whole (its arrays then registers) */
#define SB_UNROLL _Pragma("unroll")
/* Integer atomics (global or local): order-free, so exact. */
#define sb_atom_add64(p, v) atom_add((p), (v))
#define sb_atom_cas64(p, c, v) atom_cmpxchg((p), (c), (v))
#define sb_atomic_cas32(p, c, v) atomic_cmpxchg((p), (c), (v))
#define sb_atomic_add32(p, v) atomic_add((p), (v))
#define sb_atomic_inc32(p) atomic_inc(p)
#define sb_atomic_max32(p, v) atomic_max((p), (v))
#define sb_atomic_min32(p, v) atomic_min((p), (v))
#define sb_umax(a, b) max((a), (b))
/* A fused multiply-add, only for a screen whose bits reach no result
 * (neighbors_entry.h); every other kernel spells its operations out. */
#define sb_fmaf(a, b, c) fma((a), (b), (c))
/* The vendor's own exp, for the separating arm SB_ARM_VENDOR_EXP only. */
#define sb_vendor_expf(x) exp(x)
/* Four bytes from a 4-aligned address into o[0..3]. */
#define sb_load_u8x4(p, o)                                                      \
    do {                                                                        \
        const uchar4 w_ = vload4(0, (p));                                       \
        (o)[0] = w_.s0, (o)[1] = w_.s1, (o)[2] = w_.s2, (o)[3] = w_.s3;         \
    } while (0)

#endif
