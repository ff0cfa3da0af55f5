/*
 * ts_entry.h: entry kernels of the time-series program (SB_PROG_TS; their
 * names in SB_TS_KERNELS, src/device/programs.h), the families of
 * src/models/timeseries that run on a device. Float64: the program is built
 * only where the device has IEEE doubles (OpenCL's cl_khr_fp64, which
 * dev_opencl.c checks and turns on; CUDA). The arithmetic is kernels/ets.h's
 * and kernels/arima.h's, the functions the host's loops over series call.
 */
#include "../ets.h"
#include "../arima.h"

#if defined(SB_COMPAT_DEVICE) && !defined(sb_d2u)
#error "the time-series program is float64: its backend must give it IEEE doubles (compat_opencl.h's SB_OCL_F64)"
#endif

/* Exponential smoothing, one work-item a series (ets.c's ets_task, series for
 * series): series i of the ns in this launch is y[off[i] .. off[i+1]) (off
 * ascending from 0), fitted under the spec (trend, damped, seasonal, m, the
 * given parameters: 4 doubles, NaN where estimated; error: ETS_MUL for
 * multiplicative errors). Its scratch is
 * interleaved with its neighbours': element j of it is scr[j * ns + i] (nd =
 * ets_scratch_doubles of them) and iscr[j * ns + i] (k = ets_nstates), so
 * that a group's reads of one element coalesce; its results go to par[4 i], init and last[(2 + m) i],
 * fitted and resid[off[i]], crit[4 i], trace[ETS_TRACE_MAX i] and
 * counts[ETS_NCOUNTS i]. No work-item reads another's memory: the grid and
 * the work-group size are schedule inputs only. */
SB_KERNEL void ke_ets_fit(SB_GLOBAL const double *y, SB_GLOBAL const sb_i64 *off, sb_i64 ns, sb_i32 trend,
                          sb_i32 damped, sb_i32 seasonal, sb_i32 m, sb_i32 error, SB_GLOBAL const double *given,
                          SB_GLOBAL double *scr, SB_GLOBAL sb_i32 *iscr, SB_GLOBAL double *par, SB_GLOBAL double *init,
                          SB_GLOBAL double *last, SB_GLOBAL double *fitted, SB_GLOBAL double *resid,
                          SB_GLOBAL double *crit, SB_GLOBAL double *trace, SB_GLOBAL sb_i32 *counts) {
    const sb_i64 i = sb_global_id(0);
    if (i >= ns) return;
    ets_spec sp;
    sp.trend = trend, sp.damped = damped, sp.seasonal = seasonal, sp.m = m, sp.device = 0, sp.error = error;
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

/* ARIMA, one work-item a series (arima.c's fit_one, series for series):
 * series i of the ns in this launch is y[off[i] .. off[i+1]), fitted under
 * the orders ord (p, d, q, P, D, Q, s, trend, ngiven) with the given
 * parameters given (npar, read when ngiven). Its scratch is interleaved with
 * its neighbours' (element j at scr[j * ns + i]), laid out for ndmax
 * differenced values (the launch's longest); its results go to par[np i],
 * crit[AK_NCRIT i], state[(r + r r) i], fitted and resid[off[i]],
 * trace[ak_trace_max i] and counts[AK_NCOUNTS i]. No work-item reads
 * another's memory: the grid and the work-group size are schedule inputs. */
SB_KERNEL void ke_arima_fit(SB_GLOBAL const double *y, SB_GLOBAL const sb_i64 *off, sb_i64 ns,
                            SB_GLOBAL const sb_i32 *ord, SB_GLOBAL const double *given, sb_i64 ndmax,
                            SB_GLOBAL double *scr, SB_GLOBAL double *par, SB_GLOBAL double *crit,
                            SB_GLOBAL double *state, SB_GLOBAL double *fitted, SB_GLOBAL double *resid,
                            SB_GLOBAL double *trace, SB_GLOBAL sb_i32 *counts) {
    const sb_i64 i = sb_global_id(0);
    if (i >= ns) return;
    ak_spec sp;
    sp.p = ord[0], sp.d = ord[1], sp.q = ord[2], sp.P = ord[3], sp.D = ord[4], sp.Q = ord[5], sp.s = ord[6];
    sp.trend = ord[7], sp.ngiven = ord[8];
    const sb_i64 np = ak_npar(&sp), r = ak_state_dim(&sp), a = off[i], n = off[i + 1] - a;
    ak_out o;
    o.par = par + np * i;
    o.crit = crit + (sb_i64)AK_NCRIT * i;
    o.state = state + (r + r * r) * i;
    o.fitted = fitted + a;
    o.resid = resid + a;
    o.trace = trace + ak_trace_max(&sp) * i;
    o.counts = counts + (sb_i64)AK_NCOUNTS * i;
    ak_fit_series(&sp, given, y + a, n, scr + i, ns, ndmax, o);
}

/* the support vector machines' kernels (float64 too) */
#include "svm_entry.h"
