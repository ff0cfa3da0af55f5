/*
 * ets_dev_emu.c: kernels/ets.h compiled as a device compiles it
 * (SB_COMPAT_DEVICE: the strided scratch and, for k <= ETS_KR, the Jacobian
 * passes in registers, ets_pass_reg), on the host, so that the device's own
 * pass is checked against the host's on every CPU leg where no GPU is.
 * test_ets_dev.c compares it with the host's fit; ets_dev_emu_arm.c is this
 * file with the ets-reg-order arm.
 */
#define SB_COMPAT_DEVICE 1
#define SB_ETS_EMU_REG 1 /* the register pass, as CUDA runs it (kernels/ets.h, ETS_USE_REG) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/float_eval.h"

#define SB_FN static inline
#define SB_FN_BIG static
#define SB_GLOBAL
#define SB_TABLE static const
#define SB_UNROLL
typedef uint8_t sb_u8;
typedef uint32_t sb_u32;
typedef int32_t sb_i32;
typedef uint64_t sb_u64;
typedef int64_t sb_i64;
static inline sb_u64 sb_d2u(double d) { sb_u64 u; memcpy(&u, &d, 8); return u; }
static inline double sb_u2d(sb_u64 u) { double d; memcpy(&d, &u, 8); return d; }
#define SB_STATIC_ASSERT(c, msg) _Static_assert(c, msg)

#include "kernels/ets.h"

#ifndef ETS_EMU_NAME
#define ETS_EMU_NAME sb_test_ets_dev_fit
#endif

/* Fit y (n values) under sp as work-item `slot` of `ns` interleaved ones
 * (ke_ets_fit's layout: element j of its scratch at j * ns + slot), into o.
 * 0, or -1 without the memory. */
int ETS_EMU_NAME(const ets_spec *sp, const double *y, int64_t n, int32_t slot, int32_t ns, ets_out o) {
    const int32_t k = ets_nstates(sp);
    double *scr = calloc((size_t)(ets_scratch_doubles(k, sp->m) * ns), sizeof(double));
    int32_t *iscr = calloc((size_t)(k * ns), sizeof(int32_t));
    if (!scr || !iscr) {
        free(scr), free(iscr);
        return -1;
    }
    ets_fit_series(sp, y, n, scr + slot, iscr + slot, ns, o);
    free(scr), free(iscr);
    return 0;
}
