/* compat_cpu.h: the kernel vocabulary (src/kernels/compat.h) for C11 on the host. */
#ifndef SB_COMPAT_CPU_H
#define SB_COMPAT_CPU_H
#include <stdint.h>
#include <string.h>

#include "../../core/float_eval.h"

#define SB_FN static inline
/* Address space of arrays that kernels read and write. */
#define SB_GLOBAL 
#define SB_TABLE static const

typedef uint8_t sb_u8;
typedef uint32_t sb_u32;
typedef int32_t sb_i32;
typedef uint64_t sb_u64;
typedef int64_t sb_i64;

SB_FN sb_u32 sb_f2u(float f) { sb_u32 u; memcpy(&u, &f, 4); return u; }
SB_FN float sb_u2f(sb_u32 u) { float f; memcpy(&f, &u, 4); return f; }

#define SB_STATIC_ASSERT(c, msg) _Static_assert(c, msg)

#endif
