/*
 * ts_entry.h: entry kernels of the time-series program (SB_PROG_TS; their
 * names in SB_TS_KERNELS, src/device/programs.h), the families of
 * src/models/timeseries that run on a device. Float64: the program is built
 * only where the device has IEEE doubles (OpenCL's cl_khr_fp64, which
 * dev_opencl.c checks and turns on; CUDA). The arithmetic is kernels/ets.h's,
 * the function the host's loop over series calls.
 */
#include "../ets.h"

#if defined(SB_COMPAT_DEVICE) && !defined(sb_d2u)
#error "the time-series program is float64: its backend must give it IEEE doubles (compat_opencl.h's SB_OCL_F64)"
#endif

/* Exponential smoothing, one work-item a series (ets.c's ets_task, series for
 * series): series i of the ns in this launch is y[off[i] .. off[i+1]) (off
 * ascending from 0), fitted under the spec (trend, damped, seasonal, m, the
 * given parameters: 4 doubles, NaN where estimated). Its scratch is
 * interleaved with its neighbours': element j of it is scr[j * ns + i] (nd =
 * ets_scratch_doubles of them) and iscr[j * ns + i] (k = ets_nstates), so
 * that a group's reads of one element coalesce; its results go to par[4 i], init and last[(2 + m) i],
 * fitted and resid[off[i]], crit[4 i], trace[ETS_TRACE_MAX i] and
 * counts[ETS_NCOUNTS i]. No work-item reads another's memory: the grid and
 * the work-group size are schedule inputs only. */
SB_KERNEL void ke_ets_fit(SB_GLOBAL const double *y, SB_GLOBAL const sb_i64 *off, sb_i64 ns, sb_i32 trend,
                          sb_i32 damped, sb_i32 seasonal, sb_i32 m, SB_GLOBAL const double *given,
                          SB_GLOBAL double *scr, SB_GLOBAL sb_i32 *iscr, SB_GLOBAL double *par, SB_GLOBAL double *init,
                          SB_GLOBAL double *last, SB_GLOBAL double *fitted, SB_GLOBAL double *resid,
                          SB_GLOBAL double *crit, SB_GLOBAL double *trace, SB_GLOBAL sb_i32 *counts) {
    const sb_i64 i = sb_global_id(0);
    if (i >= ns) return;
    ets_spec sp;
    sp.trend = trend, sp.damped = damped, sp.seasonal = seasonal, sp.m = m, sp.device = 0;
    for (sb_i32 q = 0; q < SB_ETS_NPAR; q++) sp.given[q] = given[q];
    const sb_i64 a = off[i], n = off[i + 1] - a;
    ets_out o;
    o.par = par + 4 * i;
    o.init = init + (sb_i64)(2 + m) * i;
    o.last = last + (sb_i64)(2 + m) * i;
    o.fitted = fitted + a;
    o.resid = resid + a;
    o.crit = crit + 4 * i;
    o.trace = trace + (sb_i64)ETS_TRACE_MAX * i;
    o.counts = counts + (sb_i64)ETS_NCOUNTS * i;
    ets_fit_series(&sp, y + a, n, scr + i, iscr + i, ns, o);
}

/* the support vector machines' kernels (float64 too) */
#include "svm_entry.h"
