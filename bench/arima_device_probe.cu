/*
 * arima_device_probe.cu: where ARIMA's device fit spends its time (issue 28).
 * A measuring probe, not part of the library: it compiles kernels/arima.h
 * under the CUDA vocabulary and the profile's nvcc flags, as entry_ts.cu
 * does, and times on one GPU
 *   fit   the library's ak_fit_series over a batch (ke_arima_fit's body),
 *         each work-item's clock64 cycles and its evaluations (nfev);
 *   phase one work-item a series running the same setup as ak_fit, then the
 *         Hannan-Rissanen start, then E Lyapunov solves and E objective
 *         evaluations at the start's point: every work-item of a warp runs
 *         the same count, so the phases' cycles are those of warps that stay
 *         in step (the lower bound lockstep can give).
 * Input: bench/arima_probe_data.py's file (int64 n; int64 offsets[n + 1];
 * double values[offsets[n]]). Orders ARIMA(1,1,1), no constant.
 * Build: bench/arima_device_probe.sh (the profile's nvcc flags, sm_90 alone).
 */
#include "backends/cuda/compat_cuda.h"
#include "kernels/arima.h"
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

#define CK(x)                                                                     \
    do {                                                                          \
        cudaError_t e_ = (x);                                                     \
        if (e_ != cudaSuccess) {                                                  \
            fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

__device__ static void spec111(ak_spec *sp) {
    sp->p = 1, sp->d = 1, sp->q = 1, sp->P = 0, sp->D = 0, sp->Q = 0, sp->s = 0, sp->trend = 0, sp->ngiven = 0;
}

extern "C" __global__ void k_fit(const double *y, const sb_i64 *off, sb_i64 ns, sb_i64 ndmax, double *scr, double *par,
                                 double *crit, double *state, double *fitted, double *resid, double *trace,
                                 sb_i32 *counts, long long *cyc, int same) {
    const sb_i64 i = sb_global_id(0);
    if (i >= ns) return;
    ak_spec sp;
    spec111(&sp);
    const sb_i64 np = ak_npar(&sp), r = ak_state_dim(&sp), a = same ? 0 : off[i], n = same ? off[1] : off[i + 1] - a;
    ak_out o;
    o.par = par + np * i;
    o.crit = crit + (sb_i64)AK_NCRIT * i;
    o.state = state + (r + r * r) * i;
    o.fitted = fitted + off[i];
    o.resid = resid + off[i];
    o.trace = trace + ak_trace_max(&sp) * i;
    o.counts = counts + (sb_i64)AK_NCOUNTS * i;
    const long long t0 = clock64();
    ak_fit_series(&sp, 0, y + a, n, scr + i, ns, ndmax, o);
    cyc[i] = clock64() - t0;
}

/* ak_fit's setup (the same layout), then the phases. */
extern "C" __global__ void k_phase(const double *y, const sb_i64 *off, sb_i64 ns, sb_i64 ndmax, double *scr, int E,
                                   long long *cyc, double *sink) {
    const sb_i64 i = sb_global_id(0);
    if (i >= ns) return;
    ak_spec sp;
    spec111(&sp);
    const sb_i64 sw = ns, a = off[i], n = off[i + 1] - a;
    long long t0 = clock64();
    ak_work wk;
    wk.sp = sp;
    wk.sw = sw;
    wk.r = ak_state_dim(&sp), wk.L = ak_diff_lag(&sp), wk.nx = ak_npar(&sp) - 1, wk.fin = 0, wk.nfev = 0, wk.css = 0;
    const sb_i32 r = wk.r, L = wk.L;
    const sb_i64 nd = n - L, rr = (sb_i64)r * r, kk = ak_hr_side(&sp, ndmax), nx = wk.nx;
    wk.nd = nd;
    double *p = scr + i;
    wk.phi = p, p += r * sw;
    wk.theta = p, p += r * sw;
    wk.a = p, p += r * sw;
    wk.P = p, p += rr * sw;
    wk.TP = p, p += rr * sw;
    wk.A = p, p += rr * sw;
    wk.B = p, p += rr * sw;
    wk.C = p, p += rr * sw;
    double *w = p;
    p += ndmax * sw;
    wk.v = p, p += ndmax * sw;
    wk.F = p, p += ndmax * sw;
    wk.pr = p, p += ndmax * sw;
    wk.z = p, p += ndmax * sw;
    wk.e = p, p += ndmax * sw;
    wk.dc = p, p += (sb_i64)(L + 1) * sw;
    wk.G = p, p += kk * kk * sw;
    wk.beta = p, p += kk * sw;
    wk.nv = p, p += (nx + 1) * nx * sw;
    wk.nfv = p, p += (nx + 1) * sw;
    wk.nc = p, p += nx * sw;
    wk.nxr = p, p += nx * sw;
    wk.nxe = p, p += nx * sw;
    wk.nxc = p, p += nx * sw;
    wk.x = p, p += nx * sw;
    wk.step = p, p += nx * sw;
    wk.bws = p;
    ak_diff_poly(&wk);
    wk.nobs = ak_difference(&wk, y + a, n, w);
    wk.w = w;
    double m = 0.0, ss = 0.0;
    for (sb_i64 t = 0; t < nd; t++)
        if (!ak_missing(w[t * sw])) m = m + w[t * sw];
    m = m / (double)wk.nobs;
    for (sb_i64 t = 0; t < nd; t++)
        if (!ak_missing(w[t * sw])) ss = ss + (w[t * sw] - m) * (w[t * sw] - m);
    wk.mean = m;
    wk.scale = ss > 0.0 ? ak_sqrt(ss / (double)wk.nobs) : 1.0;
    long long t1 = clock64();
    double x[AK_NM_MAXD];
    for (sb_i32 k = 0; k < wk.nx; k++) x[k] = 0.0;
    ak_hr_start(&wk, x);
    for (sb_i32 k = 0; k < wk.nx; k++) wk.x[k * sw] = x[k];
    long long t2 = clock64();
    double par[AK_MAX_PAR];
    ak_params_of(&wk, x, par);
    ak_expand(&wk, par);
    for (int e = 0; e < E; e++) ak_lyapunov(&wk);
    long long t3 = clock64();
    double acc = 0.0;
    for (int e = 0; e < E; e++) acc = acc + ak_objective(&wk, wk.x);
    long long t4 = clock64();
    cyc[4 * i + 0] = t1 - t0, cyc[4 * i + 1] = t2 - t1, cyc[4 * i + 2] = t3 - t2, cyc[4 * i + 3] = t4 - t3;
    sink[i] = acc;
}

extern "C" __global__ void k_sizes(sb_i64 ndmax, sb_i64 *out) {
    ak_spec sp;
    spec111(&sp);
    out[0] = ak_scratch_doubles(&sp, ndmax), out[1] = ak_trace_max(&sp);
}

static double pct(std::vector<long long> v, double q) {
    std::sort(v.begin(), v.end());
    return (double)v[(size_t)(q * (double)(v.size() - 1))];
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: probe data.bin [E]\n");
        return 2;
    }
    const int E = argc > 2 ? atoi(argv[2]) : 50;
    FILE *f = fopen(argv[1], "rb");
    if (!f) return 2;
    long long n;
    if (fread(&n, 8, 1, f) != 1) return 2;
    std::vector<sb_i64> off((size_t)n + 1);
    if (fread(off.data(), 8, (size_t)n + 1, f) != (size_t)n + 1) return 2;
    std::vector<double> y((size_t)off[n]);
    if (fread(y.data(), 8, y.size(), f) != y.size()) return 2;
    fclose(f);
    long long ndmax = 0;
    for (long long i = 0; i < n; i++) ndmax = std::max(ndmax, (long long)(off[i + 1] - off[i] - 1));
    sb_i64 *dsz, hsz[2];
    CK(cudaMalloc(&dsz, 16));
    k_sizes<<<1, 1>>>(ndmax, dsz);
    CK(cudaMemcpy(hsz, dsz, 16, cudaMemcpyDeviceToHost));
    const long long sd = hsz[0], tmax = hsz[1];
    double *dy, *dscr, *dpar, *dcrit, *dstate, *dfit, *dres, *dtr, *dsink;
    sb_i64 *doff;
    long long *dcyc;
    sb_i32 *dcnt;
    CK(cudaMalloc(&dy, 8 * y.size()));
    CK(cudaMalloc(&doff, 8 * off.size()));
    CK(cudaMalloc(&dscr, 8 * (size_t)(sd * n)));
    CK(cudaMalloc(&dpar, 8 * 3 * (size_t)n));
    CK(cudaMalloc(&dcrit, 8 * AK_NCRIT * (size_t)n));
    CK(cudaMalloc(&dstate, 8 * 6 * (size_t)n));
    CK(cudaMalloc(&dfit, 8 * y.size()));
    CK(cudaMalloc(&dres, 8 * y.size()));
    CK(cudaMalloc(&dtr, 8 * (size_t)(tmax * n)));
    CK(cudaMalloc(&dcnt, 4 * AK_NCOUNTS * (size_t)n));
    CK(cudaMalloc(&dcyc, 8 * 4 * (size_t)n));
    CK(cudaMalloc(&dsink, 8 * (size_t)n));
    CK(cudaMemcpy(dy, y.data(), 8 * y.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(doff, off.data(), 8 * off.size(), cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    int clk = 0;
    CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0));
    printf("clock %.0f MHz, series %lld, ndmax %lld, E %d\n", clk / 1e3, n, ndmax, E);
    const int wgs[] = {32, 64, 128};
    for (int same = 0; same < 2; same++)
        for (int wi = 0; wi < 3; wi++)
            for (long long cnt : {n, n / 10}) {
                if (same && (wi != 1 || cnt != n)) continue;
                if (cnt != n && wi != 1) continue;
                const int wg = wgs[wi];
                CK(cudaEventRecord(e0));
                k_fit<<<(unsigned)((cnt + wg - 1) / wg), wg>>>(dy, doff, cnt, ndmax, dscr, dpar, dcrit, dstate, dfit,
                                                               dres, dtr, dcnt, dcyc, same);
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                CK(cudaGetLastError());
                float ms = 0;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                std::vector<long long> cyc((size_t)cnt);
                std::vector<sb_i32> c((size_t)(AK_NCOUNTS * cnt));
                CK(cudaMemcpy(cyc.data(), dcyc, 8 * (size_t)cnt, cudaMemcpyDeviceToHost));
                CK(cudaMemcpy(c.data(), dcnt, 4 * c.size(), cudaMemcpyDeviceToHost));
                std::vector<long long> nf((size_t)cnt), cpe((size_t)cnt);
                double sumnf = 0;
                for (long long i = 0; i < cnt; i++)
                    nf[(size_t)i] = c[(size_t)(AK_NCOUNTS * i)], sumnf += (double)nf[(size_t)i],
                    cpe[(size_t)i] = cyc[(size_t)i] / std::max(1, c[(size_t)(AK_NCOUNTS * i)]);
                printf("fit same=%d wg=%d series=%lld: %.1f ms; nfev mean %.1f max %.0f; cycles/thread median %.3g "
                       "max %.3g; cycles/eval/thread median %.3g max %.3g\n",
                       same, wg, cnt, ms, sumnf / (double)cnt, pct(nf, 1.0), pct(cyc, 0.5), pct(cyc, 1.0),
                       pct(cpe, 0.5), pct(cpe, 1.0));
            }
    for (int wg : {64}) {
        CK(cudaEventRecord(e0));
        k_phase<<<(unsigned)((n + wg - 1) / wg), wg>>>(dy, doff, n, ndmax, dscr, E, dcyc, dsink);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        std::vector<long long> all((size_t)(4 * n));
        CK(cudaMemcpy(all.data(), dcyc, 8 * all.size(), cudaMemcpyDeviceToHost));
        const char *nm[] = {"setup", "hr_start", "lyapunov x E", "objective x E"};
        printf("phase wg=%d: %.1f ms\n", wg, ms);
        for (int k = 0; k < 4; k++) {
            std::vector<long long> v((size_t)n);
            for (long long i = 0; i < n; i++) v[(size_t)i] = all[(size_t)(4 * i + k)];
            printf("  %-14s cycles median %.3g max %.3g\n", nm[k], pct(v, 0.5), pct(v, 1.0));
        }
    }
    return 0;
}
