/*
 * tdev_opencl.c: the "opencl" tree device (src/backends/tdev.h) on one OpenCL
 * device, any vendor's: PoCL on a CPU in CI, the NVIDIA driver on a GPU.
 *
 * The kernels are tdev_kernels.cl, whose arithmetic is the kernel bodies of
 * src/kernels/ (the same the CPU and CUDA compile); the library carries that
 * source with its #includes inlined (tools/embed_cl.sh) and builds it at open
 * with the profile's options: -cl-std=CL1.2
 * -cl-fp32-correctly-rounded-divide-sqrt, never -cl-mad-enable or
 * -cl-fast-relaxed-math; contraction is off by the FP_CONTRACT pragma of
 * compat_opencl.h. No float atomic, no float reduction in thread order.
 *
 * No build or run-time dependency: the OpenCL library (libOpenCL.so.1, the
 * ICD loader) is opened with dlopen when a device is first asked for, and the
 * few types and constants used are declared here (they are the OpenCL ABI),
 * so no OpenCL header is needed either. Without the loader, a platform or a
 * usable device, device=opencl is refused by name (SB_ERR_BACKEND_UNAVAILABLE),
 * never run on the CPU instead. Builds without OpenCL (SB_NO_OPENCL: static
 * cross builds, sanitizer builds) refuse it likewise.
 *
 * The device: SAMEBITS_OPENCL_DEVICE = "P:D" (platform P, its device D) or
 * "N" (the N-th device over all platforms, in platform order); by default the
 * first GPU, else the first device. It must keep denormals, round to nearest,
 * divide and take square roots correctly rounded, speak OpenCL C 1.2, share
 * the host's byte order, and have cl_khr_int64_base_atomics (the histogram's
 * exact 64-bit sums); otherwise it is refused, with the reason.
 *
 * SAMEBITS_OPENCL_ARM names a separating arm (docs/opencl.md): the program is
 * built broken on purpose (contract, mad-enable, fast-relaxed-math,
 * float-atomic) and a note says so on stderr. Never set it for real work.
 *
 * The schedule is CUDA's (tdev_cuda.cu): a partition spread over tiles of
 * rows, one work-group each (count, scan per segment, stable scatter, copy);
 * histograms per work-group in local memory over feature groups that fit it,
 * then into the node's by 64-bit global atomics, with as many work-groups as
 * fill the compute units; or, where local memory cannot hold a group (or
 * SAMEBITS_OPENCL_HIST=global), 64-bit global atomics per row (the doctor
 * names the path). SAMEBITS_OPENCL_CHECK_PARTITION=1 has the host check that
 * every partition is the stable one (tests).
 */
#include "../tdev.h"
#include "ocl_common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(SB_NO_OPENCL)

const sb_tdev_ops *sb_tdev_opencl_ops(void) { return NULL; }

sb_status sb_opencl_predict(const sb_k_pnode *nodes, int32_t nnodes, const int32_t *start, int32_t ntrees, int32_t K,
                            int32_t objective, const float *base, const float *x, int64_t n, int32_t ncols,
                            int32_t kind, int32_t per_row, float *out) {
    (void)nodes, (void)nnodes, (void)start, (void)ntrees, (void)K, (void)objective, (void)base, (void)x, (void)n;
    (void)ncols, (void)kind, (void)per_row, (void)out;
    return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "device 'opencl': this build has no OpenCL backend");
}

void sb_tdev_opencl_describe(char *buf, size_t cap) {
    snprintf(buf, cap, "not built (this build has no OpenCL backend)");
}

#else

#include <time.h>


/* The kernel source with its #includes inlined (build/gen/tdev_cl_src.c). */
extern const char *const sb_tdev_cl_src[];
extern const int32_t sb_tdev_cl_src_lines;

/* The schedule's sizes (tdev_kernels.cl). A partition tile is 8 rows a
 * work-item. A histogram tile has at most 16384 rows (the count packed above
 * bit 48 of a local bin needs fewer than 2^16) and at least 1024 (each
 * work-group flushes its bins with global atomics). A feature group has at
 * most 256 features and as many bins as local memory holds, 64 KiB at most. */
#define PART_PER 8
#define HIST_TILE_MAX 16384
#define HIST_TILE_MIN 1024
#define HIST_GROUP_FEATURES 256
#define HIST_LOCAL_CAP 65536
#define HIST_RUN_BYTES (4 * 256 * 16) /* a run of 4 features of 255 bins (and missing), 16 bytes a bin */

typedef struct fgroup { /* features [f0, f1) whose bins are entries [e0, e1) (tdev_kernels.cl's ocl_fgroup) */
    int32_t f0, f1, e0, e1;
} fgroup;

/* ---- devices ---- */


/* How the tree device builds histograms on device d: 1 in local memory (a
 * work-group's bins for a group of features, when the device's local memory
 * holds at least a run of 4 features of 255 bins and missing, 16 KiB, beside
 * the kernel's own 2 KiB), or 0 by 64-bit global atomics straight into the
 * node's histogram (the fallback), with why in why. Both give the same bits.
 * SAMEBITS_OPENCL_HIST=global asks for the fallback (comparisons, tests);
 * "local" or unset: local memory where it fits; anything else is refused at
 * setup. */
static int hist_path(cl_device_id d, char *why, size_t cap) {
    cl_ulong lm = 0;
    cl_uint cus = 0;
    if (sb_cl.clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lm, &lm, NULL) != CL_SUCCESS) lm = 0;
    if (sb_cl.clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL) != CL_SUCCESS) cus = 0;
    const char *env = getenv("SAMEBITS_OPENCL_HIST");
    if (env && !strcmp(env, "global")) {
        snprintf(why, cap, "by global atomics (SAMEBITS_OPENCL_HIST=global)");
        return 0;
    }
    if (lm < HIST_RUN_BYTES + 2048) {
        snprintf(why, cap, "by global atomics (local memory %lu KiB < %d KiB)", (unsigned long)(lm / 1024),
                 (HIST_RUN_BYTES + 2048) / 1024);
        return 0;
    }
    snprintf(why, cap, "in local memory (%lu KiB, %u compute units)", (unsigned long)(lm / 1024), cus);
    return 1;
}


/* ---- the tree device ---- */

enum {
    K_FILL, K_IOTA, K_GRAD1, K_GRADK, K_MAXABS, K_QUANT, K_PCOUNT, K_PSCAN, K_PSCATTER, K_PCOPY, K_ZERO, K_HIST,
    K_HISTL, K_SUB, K_BEST, K_TREE, K_PRED, K_N
};
static const char *const k_names[K_N] = {"k_fill",       "k_iota",      "k_grad1",       "k_gradk",
                                         "k_maxabs",     "k_quantize",  "k_part_count",  "k_part_scan",
                                         "k_part_scatter", "k_part_copy", "k_zero_slots", "k_hist",
                                         "k_hist_local", "k_subtract",  "k_best",        "k_add_tree",
                                         "k_predict"};
enum { U_A, U_B, U_N }; /* per-call upload buffers */


struct sb_tdev {
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    cl_device_id dev;
    cl_kernel k[K_N];
    size_t wg;
    int64_t n;
    int32_t nf, stride, total, K, objective, nslots;
    cl_mem bins, nbins, hoff, label, weight, margin, g, h, gq, hq, rows, tmp, mask, slots, maxbits, best;
    cl_mem up[U_N];
    size_t up_cap[U_N];
    cl_mem tleft, sleft;    /* partition scratch: left rows per tile, per segment */
    size_t tleft_cap, sleft_cap;
    cl_uint cus;            /* CL_DEVICE_MAX_COMPUTE_UNITS */
    int hist_local;         /* 1: k_hist_local over the feature groups; 0: the global fallback */
    cl_mem groups;          /* ngroups fgroups */
    int32_t ngroups;
    size_t hist_acc;        /* local bytes a k_hist_local work-group needs (its largest group's bins) */
    int32_t best_cap;
    int timing;             /* SAMEBITS_OPENCL_TIMING=1 (see t_begin) */
    int32_t most_ptiles, most_htiles, most_hrows; /* the largest launches seen, for the timing's schedule line */
    uint8_t *check_bins;    /* SAMEBITS_OPENCL_CHECK_PARTITION=1: the row-major bins on the host (see part_check) */
    int64_t part_checked;   /* rows whose partition was checked */
    double t0, tms[8];
    long tcalls[8];
};

#define CK(call, what)                                     \
    do {                                                   \
        cl_int e_ = (call);                                \
        if (e_ != CL_SUCCESS) return sb_ocl_fail(e_, what);    \
    } while (0)

static void rel(cl_mem *m) {
    if (*m) sb_cl.clReleaseMemObject(*m);
    *m = NULL;
}

static const char *const k_tnames[8] = {"gradients", "quantize", "set_rows", "partition",
                                        "histograms", "subtract", "split search", "add_tree"};

static void ocl_close(sb_tdev *d) {
    if (!d) return;
    if (d->q) sb_cl.clFinish(d->q);
    if (d->timing) {
        double total = 0.0;
        for (int k = 0; k < 8; k++) total += d->tms[k];
        for (int k = 0; k < 8; k++)
            fprintf(stderr, "opencl timing: %-13s %9.1f ms in %7ld calls (%4.1f%%)\n", k_tnames[k], d->tms[k],
                    d->tcalls[k], total > 0 ? 100.0 * d->tms[k] / total : 0.0);
        fprintf(stderr, "opencl timing: %-13s %9.1f ms\n", "all", total);
        if (d->hist_local)
            fprintf(stderr,
                    "opencl schedule: work-groups of %zu; partition up to %d work-groups a call; histograms in local "
                    "memory, %d feature group(s) of up to %zu bytes, up to %d tile(s) of %d rows a call, %u compute "
                    "units\n",
                    d->wg, d->most_ptiles, d->ngroups, d->hist_acc, d->most_htiles, d->most_hrows, d->cus);
        else
            fprintf(stderr,
                    "opencl schedule: work-groups of %zu; partition up to %d work-groups a call; histograms by "
                    "global atomics\n",
                    d->wg, d->most_ptiles);
    }
    cl_mem *ms[] = {&d->bins, &d->nbins, &d->hoff, &d->label, &d->weight, &d->margin, &d->g, &d->h, &d->gq,
                    &d->hq,   &d->rows,  &d->tmp,  &d->mask,  &d->slots,  &d->maxbits, &d->best, &d->up[0], &d->up[1],
                    &d->tleft, &d->sleft, &d->groups};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) rel(ms[i]);
    if (d->check_bins)
        fprintf(stderr, "opencl partition check: %lld rows placed as the stable partition places them\n",
                (long long)d->part_checked);
    sb_free(d->check_bins);
    for (int i = 0; i < K_N; i++)
        if (d->k[i]) sb_cl.clReleaseKernel(d->k[i]);
    if (d->prog) sb_cl.clReleaseProgram(d->prog);
    if (d->q) sb_cl.clReleaseCommandQueue(d->q);
    if (d->ctx) sb_cl.clReleaseContext(d->ctx);
    sb_free(d);
}

static sb_status alloc(sb_tdev *d, cl_mem *m, size_t bytes, const char *what) {
    cl_int e = CL_SUCCESS;
    *m = sb_cl.clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, bytes ? bytes : 16, NULL, &e);
    if (e != CL_SUCCESS) return sb_ocl_fail(e, what);
    return SB_OK;
}

static sb_status put(sb_tdev *d, cl_mem m, size_t off, const void *src, size_t bytes, const char *what) {
    if (bytes) CK(sb_cl.clEnqueueWriteBuffer(d->q, m, CL_TRUE, off, bytes, src, 0, NULL, NULL), what);
    return SB_OK;
}

static sb_status get(sb_tdev *d, cl_mem m, size_t off, void *dst, size_t bytes, const char *what) {
    if (bytes) CK(sb_cl.clEnqueueReadBuffer(d->q, m, CL_TRUE, off, bytes, dst, 0, NULL, NULL), what);
    return SB_OK;
}

/* Upload buffer u holding bytes (contents not kept when it grows). The queue
 * is in order and writes block, so a buffer is never overwritten while a
 * kernel that reads it is pending. */
static sb_status upload(sb_tdev *d, int u, const void *src, size_t bytes, const char *what) {
    if (bytes > d->up_cap[u]) {
        rel(&d->up[u]);
        d->up_cap[u] = 0;
        sb_status st = alloc(d, &d->up[u], bytes * 2, what);
        if (st != SB_OK) return st;
        d->up_cap[u] = bytes * 2;
    }
    return put(d, d->up[u], 0, src, bytes, what);
}

/* Device scratch *m of at least bytes (contents not kept when it grows). */
static sb_status grow(sb_tdev *d, cl_mem *m, size_t *cap, size_t bytes, const char *what) {
    if (bytes <= *cap && *m) return SB_OK;
    rel(m);
    *cap = 0;
    sb_status st = alloc(d, m, bytes * 2, what);
    if (st == SB_OK) *cap = bytes * 2;
    return st;
}

/* The tile table of items (segments or histogram jobs: structs of `size`
 * bytes that begin with int64 begin, end) whose rows [begin, end) are cut
 * into tiles of `tile` rows: ts[i] = the tiles before item i, ts[nitems] =
 * all of them (malloc'ed; NULL when out of memory or past 2^31 - 1 tiles). */
static int32_t *tile_table(const void *items, int32_t nitems, size_t size, int64_t tile) {
    int32_t *ts = sb_malloc(sizeof(int32_t) * ((size_t)nitems + 1));
    if (!ts) return NULL;
    int64_t acc = 0;
    for (int32_t i = 0; i < nitems; i++) {
        int64_t p[2]; /* begin, end */
        memcpy(p, (const char *)items + size * (size_t)i, sizeof p);
        ts[i] = (int32_t)acc;
        acc += (p[1] - p[0] + tile - 1) / tile;
        if (acc > INT32_MAX) {
            sb_free(ts);
            return NULL;
        }
    }
    ts[nitems] = (int32_t)acc;
    return ts;
}

#define A(v) sizeof(v), (const void *)&(v)

/* Launch k over items (padded to the work-group size) x dim1. */
static sb_status launch(sb_tdev *d, int k, int64_t items, size_t dim1) {
    if (items <= 0 || dim1 == 0) return SB_OK;
    size_t gl[2] = {((size_t)items + d->wg - 1) / d->wg * d->wg, dim1}, lo[2] = {d->wg, 1};
    CK(sb_cl.clEnqueueNDRangeKernel(d->q, d->k[k], 2, NULL, gl, lo, 0, NULL, NULL), k_names[k]);
    return SB_OK;
}


static sb_status build(sb_tdev *d, const char *extra, size_t wg) {
    sb_status st = sb_ocl_build(d->ctx, d->dev, sb_tdev_cl_src, sb_tdev_cl_src_lines, extra, wg, &d->prog);
    if (st != SB_OK) return st;
    cl_int e = CL_SUCCESS;
    for (int i = 0; i < K_N; i++) {
        d->k[i] = sb_cl.clCreateKernel(d->prog, k_names[i], &e);
        if (e != CL_SUCCESS) return sb_ocl_fail(e, k_names[i]);
    }
    d->wg = wg;
    return SB_OK;
}

/* The smallest work-group size any kernel allows (CL_KERNEL_WORK_GROUP_SIZE). */
static size_t kernel_wg(sb_tdev *d) {
    size_t m = d->wg;
    for (int i = 0; i < K_N; i++) {
        size_t w = 0;
        if (sb_cl.clGetKernelWorkGroupInfo(d->k[i], d->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof w, &w, NULL) == CL_SUCCESS &&
            w < m)
            m = w;
    }
    return m;
}

/* The device of SAMEBITS_OPENCL_DEVICE checked against the profile, a
 * context, a queue and the kernels built: what training and prediction share. */
static sb_status ocl_setup(sb_tdev *d) {
    const char *extra = NULL;
    size_t wg = 256;
    sb_status st = sb_ocl_open(&d->dev, &d->ctx, &d->q, &extra, &wg);
    if (st != SB_OK) return st;
    if ((st = build(d, extra, wg)) != SB_OK) return st;
    size_t kw = kernel_wg(d);
    if (kw < wg) { /* a kernel needs smaller groups on this device: rebuild (sizes change no bit) */
        while (wg > kw && wg > 1) wg /= 2;
        for (int i = 0; i < K_N; i++) sb_cl.clReleaseKernel(d->k[i]), d->k[i] = NULL;
        sb_cl.clReleaseProgram(d->prog);
        d->prog = NULL;
        if ((st = build(d, extra, wg)) != SB_OK) return st;
    }
    return SB_OK;
}

/* The feature groups of the local-memory histograms: runs of 4 features (a
 * row's bins are read 4 at a time) whose bins fit the device's local memory
 * beside k_hist_local's own (64 KiB at most), at most 256 features a group.
 * A function of the data's shape and the device, and no bit depends on it.
 * Where local memory is refused (hist_path) or cannot hold one run, the
 * global fallback. */
static sb_status plan_hist(sb_tdev *d, const sb_tdev_setup *s) {
    char why[160];
    if (sb_cl.clGetDeviceInfo(d->dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof d->cus, &d->cus, NULL) != CL_SUCCESS ||
        d->cus == 0)
        d->cus = 1;
    d->hist_local = hist_path(d->dev, why, sizeof why) && s->nf > 0;
    if (!d->hist_local) return SB_OK;
    cl_ulong lm = 0, kl = 0;
    if (sb_cl.clGetDeviceInfo(d->dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lm, &lm, NULL) != CL_SUCCESS) lm = 0;
    if (sb_cl.clGetKernelWorkGroupInfo(d->k[K_HISTL], d->dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof kl, &kl, NULL) !=
        CL_SUCCESS)
        kl = 4 * HIST_GROUP_FEATURES;
    cl_ulong budget = lm > kl + 1024 ? lm - kl - 1024 : 0; /* 1 KiB spare for what a driver keeps */
    if (budget > HIST_LOCAL_CAP) budget = HIST_LOCAL_CAP;
    const int32_t max_entries = (int32_t)(budget / 16), nf = s->nf;
    fgroup *gs = sb_malloc(sizeof(fgroup) * (size_t)(nf / 4 + 1));
    if (!gs) return sb_fail(SB_ERR_OUT_OF_MEMORY, "opencl: out of memory");
    int32_t ng = 0, widest = 0;
    for (int32_t f = 0; f < nf;) {
        fgroup g = {f, f, s->hoff[f], s->hoff[f]};
        while (g.f1 < nf) {
            const int32_t f1 = g.f1 + 4 < nf ? g.f1 + 4 : nf, e1 = s->hoff[f1 - 1] + s->nbins[f1 - 1] + 1;
            if (g.f1 > g.f0 && (e1 - g.e0 > max_entries || f1 - g.f0 > HIST_GROUP_FEATURES)) break;
            g.f1 = f1;
            g.e1 = e1;
        }
        if (g.e1 - g.e0 > max_entries) { /* not even one run fits: the fallback */
            sb_free(gs);
            d->hist_local = 0;
            return SB_OK;
        }
        if (g.e1 - g.e0 > widest) widest = g.e1 - g.e0;
        gs[ng++] = g;
        f = g.f1;
    }
    d->ngroups = ng;
    d->hist_acc = (size_t)16 * (size_t)widest;
    sb_status st = alloc(d, &d->groups, sizeof(fgroup) * (size_t)ng, "feature groups");
    if (st == SB_OK) st = put(d, d->groups, 0, gs, sizeof(fgroup) * (size_t)ng, "feature groups");
    sb_free(gs);
    return st;
}

static sb_status open_inner(sb_tdev *d, const sb_tdev_setup *s) {
    sb_status st = ocl_setup(d);
    if (st != SB_OK) return st;
    const size_t n = (size_t)s->n, K = (size_t)s->K, nf = (size_t)s->nf;
    d->n = s->n;
    d->nf = s->nf;
    d->stride = (s->nf + 3) & ~3;
    d->total = s->total;
    d->K = s->K;
    d->objective = s->objective;
    uint8_t *rb = sb_calloc(n ? n : 1, (size_t)d->stride);
    float *w = sb_malloc(sizeof(float) * (n ? n : 1));
    uint8_t *ones = sb_malloc(nf ? nf : 1);
    if (!rb || !w || !ones) {
        sb_free(rb), sb_free(w), sb_free(ones);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "opencl: out of memory");
    }
    for (size_t r = 0; r < n; r++)
        for (size_t f = 0; f < nf; f++) rb[r * (size_t)d->stride + f] = s->binned[f * n + r];
    for (size_t r = 0; r < n; r++) w[r] = s->weight ? s->weight[r] : 1.0f;
    memset(ones, 1, nf ? nf : 1);
    if ((st = alloc(d, &d->bins, n * (size_t)d->stride, "bins")) == SB_OK &&
        (st = put(d, d->bins, 0, rb, n * (size_t)d->stride, "bins")) == SB_OK &&
        (st = alloc(d, &d->nbins, 4 * nf, "nbins")) == SB_OK && (st = put(d, d->nbins, 0, s->nbins, 4 * nf, "nbins")) == SB_OK &&
        (st = alloc(d, &d->hoff, 4 * nf, "hoff")) == SB_OK && (st = put(d, d->hoff, 0, s->hoff, 4 * nf, "hoff")) == SB_OK &&
        (st = alloc(d, &d->label, 4 * n, "labels")) == SB_OK && (st = put(d, d->label, 0, s->label, 4 * n, "labels")) == SB_OK &&
        (st = alloc(d, &d->weight, 4 * n, "weights")) == SB_OK && (st = put(d, d->weight, 0, w, 4 * n, "weights")) == SB_OK &&
        (st = alloc(d, &d->mask, nf, "mask")) == SB_OK && (st = put(d, d->mask, 0, ones, nf, "mask")) == SB_OK &&
        (st = alloc(d, &d->margin, 4 * n * K, "margins")) == SB_OK && (st = alloc(d, &d->g, 4 * n * K, "gradients")) == SB_OK &&
        (st = alloc(d, &d->h, 4 * n * K, "hessians")) == SB_OK && (st = alloc(d, &d->gq, 4 * n, "gradients")) == SB_OK &&
        (st = alloc(d, &d->hq, 4 * n, "hessians")) == SB_OK && (st = alloc(d, &d->rows, 4 * n, "rows")) == SB_OK &&
        (st = alloc(d, &d->tmp, 4 * n, "rows")) == SB_OK && (st = alloc(d, &d->maxbits, 8 * K, "maxima")) == SB_OK) {
        const int64_t nk = s->n * s->K;
        const float base = s->base;
        if ((st = sb_ocl_args(d->k[K_FILL], "k_fill", 3, A(d->margin), A(nk), A(base))) == SB_OK)
            st = launch(d, K_FILL, nk, 1);
        if (st == SB_OK) st = plan_hist(d, s);
    }
    const char *cp = getenv("SAMEBITS_OPENCL_CHECK_PARTITION");
    if (st == SB_OK && cp && cp[0] == '1')
        d->check_bins = rb; /* kept for part_check */
    else
        sb_free(rb);
    sb_free(w), sb_free(ones);
    return st;
}

static sb_status ocl_open(const sb_tdev_setup *s, sb_tdev **out) {
    *out = NULL;
    sb_tdev *d = sb_calloc(1, sizeof *d);
    if (!d) return sb_fail(SB_ERR_OUT_OF_MEMORY, "opencl: out of memory");
    sb_status st = open_inner(d, s);
    if (st != SB_OK) {
        ocl_close(d);
        return st;
    }
    const char *tv = getenv("SAMEBITS_OPENCL_TIMING");
    d->timing = tv && tv[0] == '1';
    *out = d;
    return SB_OK;
}

static sb_status ocl_gradients(sb_tdev *d, float *maxabs) {
    sb_status st;
    if (d->objective == SB_K_OBJ_MULTICLASS)
        st = sb_ocl_args(d->k[K_GRADK], "k_gradk", 7, A(d->K), A(d->margin), A(d->label), A(d->weight), A(d->g), A(d->h),
                  A(d->n));
    else
        st = sb_ocl_args(d->k[K_GRAD1], "k_grad1", 7, A(d->objective), A(d->margin), A(d->label), A(d->weight), A(d->g),
                  A(d->h), A(d->n));
    if (st != SB_OK || (st = launch(d, d->objective == SB_K_OBJ_MULTICLASS ? K_GRADK : K_GRAD1, d->n, 1)) != SB_OK)
        return st;
    uint32_t bits[2 * SB_TDEV_MAX_CLASS];
    memset(bits, 0, sizeof(uint32_t) * 2 * (size_t)d->K);
    if ((st = put(d, d->maxbits, 0, bits, sizeof(uint32_t) * 2 * (size_t)d->K, "maxima")) != SB_OK) return st;
    if ((st = sb_ocl_args(d->k[K_MAXABS], "k_maxabs", 4, A(d->g), A(d->h), A(d->n), A(d->maxbits))) != SB_OK) return st;
    int64_t items = d->n < (int64_t)d->wg * 64 ? d->n : (int64_t)d->wg * 64; /* a few groups, each strides */
    if (items < 1) items = 1;
    if ((st = launch(d, K_MAXABS, items, (size_t)d->K)) != SB_OK) return st;
    if ((st = get(d, d->maxbits, 0, bits, sizeof(uint32_t) * 2 * (size_t)d->K, "maxima")) != SB_OK) return st;
    for (int32_t i = 0; i < 2 * d->K; i++) memcpy(&maxabs[i], &bits[i], sizeof(float));
    return SB_OK;
}

static sb_status ocl_quantize(sb_tdev *d, int32_t cls, float gs, float hs) {
    const int64_t off = (int64_t)cls * d->n; /* class cls's gradients */
    sb_status st =
        sb_ocl_args(d->k[K_QUANT], "k_quantize", 8, A(d->g), A(d->h), A(off), A(d->n), A(gs), A(hs), A(d->gq), A(d->hq));
    return st != SB_OK ? st : launch(d, K_QUANT, d->n, 1);
}

static sb_status ocl_set_rows(sb_tdev *d, const int32_t *rows, int64_t nrows) {
    if (rows) return put(d, d->rows, 0, rows, sizeof(int32_t) * (size_t)nrows, "rows");
    sb_status st = sb_ocl_args(d->k[K_IOTA], "k_iota", 2, A(d->rows), A(d->n));
    return st != SB_OK ? st : launch(d, K_IOTA, d->n, 1);
}

static sb_status ocl_set_mask(sb_tdev *d, const uint8_t *mask) {
    return put(d, d->mask, 0, mask, (size_t)d->nf, "mask");
}

static sb_status ocl_reserve(sb_tdev *d, int32_t nslots) {
    if (nslots <= d->nslots) return SB_OK;
    const size_t per = sizeof(int64_t) * 3 * (size_t)d->total;
    cl_mem s = NULL;
    sb_status st = alloc(d, &s, per * (size_t)nslots, "histogram slots");
    if (st != SB_OK) return st;
    if (d->nslots > 0) {
        cl_int e = sb_cl.clEnqueueCopyBuffer(d->q, d->slots, s, 0, 0, per * (size_t)d->nslots, 0, NULL, NULL);
        if (e != CL_SUCCESS) {
            sb_cl.clReleaseMemObject(s);
            return sb_ocl_fail(e, "histogram slots");
        }
    }
    rel(&d->slots);
    d->slots = s;
    d->nslots = nslots;
    return SB_OK;
}

/* SAMEBITS_OPENCL_CHECK_PARTITION=1 (tests; slow): the partition's self-check.
 * Before the kernels run, the host reads each segment's rows and works out the
 * stable partition itself (left rows in their order, then right rows in
 * theirs, by sb_k_goes_left on its copy of the bins); after them, it reads
 * the rows back and any difference is an error. Stability moves no bit of a
 * model (histograms are integer sums), so this is where it is shown. phase 0:
 * expect (want := the host's partition); phase 1: compare. */
static sb_status part_check(sb_tdev *d, const sb_tdev_seg *segs, int32_t nseg, int phase, int32_t **want) {
    int64_t all = 0;
    for (int32_t i = 0; i < nseg; i++) all += segs[i].end - segs[i].begin;
    if (phase == 0) {
        *want = sb_malloc(sizeof(int32_t) * (size_t)(all + 1));
        int32_t *got = sb_malloc(sizeof(int32_t) * (size_t)(all + 1));
        if (!*want || !got) {
            sb_free(got);
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "opencl: out of memory (partition check)");
        }
        int64_t at = 0;
        for (int32_t i = 0; i < nseg; i++) {
            const sb_tdev_seg *g = &segs[i];
            const int64_t len = g->end - g->begin;
            sb_status st = get(d, d->rows, sizeof(int32_t) * (size_t)g->begin, got, sizeof(int32_t) * (size_t)len, "rows");
            if (st != SB_OK) {
                sb_free(got);
                return st;
            }
            for (int pass = 1; pass >= 0; pass--) /* left rows, then right rows, each in order */
                for (int64_t k = 0; k < len; k++) {
                    const uint8_t b = d->check_bins[(size_t)got[k] * (size_t)d->stride + (size_t)g->feature];
                    if (sb_k_goes_left(b, g->split_bin, g->default_left) == pass) (*want)[at++] = got[k];
                }
        }
        sb_free(got);
        return SB_OK;
    }
    int32_t *got = sb_malloc(sizeof(int32_t) * (size_t)(all + 1));
    if (!got) return sb_fail(SB_ERR_OUT_OF_MEMORY, "opencl: out of memory (partition check)");
    int64_t at = 0;
    sb_status st = SB_OK;
    for (int32_t i = 0; i < nseg && st == SB_OK; i++) {
        const int64_t len = segs[i].end - segs[i].begin;
        st = get(d, d->rows, sizeof(int32_t) * (size_t)segs[i].begin, got + at, sizeof(int32_t) * (size_t)len, "rows");
        at += len;
    }
    if (st == SB_OK && memcmp(got, *want, sizeof(int32_t) * (size_t)all) != 0)
        st = sb_fail(SB_ERR_INTERNAL, "opencl: partition check: the rows of %d segment(s) are not the stable partition",
                     nseg);
    if (st == SB_OK) d->part_checked += all;
    sb_free(got);
    return st;
}

/* Stable partition of every segment, each spread over tiles of wg x 8 rows
 * (tdev_kernels.cl): count the left rows per tile, scan the counts per
 * segment, scatter each tile's rows into tmp, copy tmp back. */
static sb_status part_run(sb_tdev *d, const sb_tdev_seg *segs, int32_t nseg);

static sb_status ocl_partition(sb_tdev *d, const sb_tdev_seg *segs, int32_t nseg) {
    if (nseg <= 0) return SB_OK;
    if (!d->check_bins) return part_run(d, segs, nseg);
    int32_t *want = NULL;
    sb_status st = part_check(d, segs, nseg, 0, &want);
    if (st == SB_OK) st = part_run(d, segs, nseg);
    if (st == SB_OK) st = part_check(d, segs, nseg, 1, &want);
    sb_free(want);
    return st;
}

static sb_status part_run(sb_tdev *d, const sb_tdev_seg *segs, int32_t nseg) {
    const int64_t tile = (int64_t)d->wg * PART_PER;
    int32_t *ts = tile_table(segs, nseg, sizeof(sb_tdev_seg), tile);
    if (!ts) return sb_fail(SB_ERR_OUT_OF_MEMORY, "opencl: out of memory (partition tiles)");
    const int32_t ntiles = ts[nseg];
    sb_status st = upload(d, U_A, segs, sizeof(sb_tdev_seg) * (size_t)nseg, "segments");
    if (st == SB_OK) st = upload(d, U_B, ts, sizeof(int32_t) * ((size_t)nseg + 1), "segments");
    sb_free(ts);
    if (st != SB_OK || ntiles == 0) return st;
    if (ntiles > d->most_ptiles) d->most_ptiles = ntiles;
    if ((st = grow(d, &d->tleft, &d->tleft_cap, sizeof(int32_t) * (size_t)ntiles, "partition")) != SB_OK ||
        (st = grow(d, &d->sleft, &d->sleft_cap, sizeof(int32_t) * (size_t)nseg, "partition")) != SB_OK)
        return st;
    if ((st = sb_ocl_args(d->k[K_PCOUNT], "k_part_count", 7, A(d->up[U_A]), A(d->up[U_B]), A(nseg), A(d->rows), A(d->bins),
                   A(d->stride), A(d->tleft))) != SB_OK ||
        (st = sb_ocl_args(d->k[K_PSCAN], "k_part_scan", 3, A(d->up[U_B]), A(d->tleft), A(d->sleft))) != SB_OK ||
        (st = sb_ocl_args(d->k[K_PSCATTER], "k_part_scatter", 9, A(d->up[U_A]), A(d->up[U_B]), A(nseg), A(d->rows),
                   A(d->bins), A(d->stride), A(d->tleft), A(d->sleft), A(d->tmp))) != SB_OK ||
        (st = sb_ocl_args(d->k[K_PCOPY], "k_part_copy", 5, A(d->up[U_A]), A(d->up[U_B]), A(nseg), A(d->tmp), A(d->rows))) !=
            SB_OK)
        return st;
    size_t lo = d->wg, gt = d->wg * (size_t)ntiles, gs = d->wg * (size_t)nseg;
    CK(sb_cl.clEnqueueNDRangeKernel(d->q, d->k[K_PCOUNT], 1, NULL, &gt, &lo, 0, NULL, NULL), "k_part_count");
    CK(sb_cl.clEnqueueNDRangeKernel(d->q, d->k[K_PSCAN], 1, NULL, &gs, &lo, 0, NULL, NULL), "k_part_scan");
    CK(sb_cl.clEnqueueNDRangeKernel(d->q, d->k[K_PSCATTER], 1, NULL, &gt, &lo, 0, NULL, NULL), "k_part_scatter");
    CK(sb_cl.clEnqueueNDRangeKernel(d->q, d->k[K_PCOPY], 1, NULL, &gt, &lo, 0, NULL, NULL), "k_part_copy");
    return SB_OK;
}

/* The global fallback: one work-item per row of every job, 64-bit atomics
 * straight into the slots (already zeroed). */
static sb_status hist_global(sb_tdev *d, const sb_tdev_hjob *jobs, int32_t njobs) {
    int64_t *js = sb_malloc(sizeof(int64_t) * ((size_t)njobs + 1));
    if (!js) return sb_fail(SB_ERR_OUT_OF_MEMORY, "opencl: out of memory");
    js[0] = 0;
    for (int32_t i = 0; i < njobs; i++) js[i + 1] = js[i] + (jobs[i].end - jobs[i].begin);
    const int64_t items = js[njobs];
    sb_status st = upload(d, U_B, js, sizeof(int64_t) * ((size_t)njobs + 1), "histogram jobs");
    sb_free(js);
    if (st != SB_OK) return st;
    if ((st = sb_ocl_args(d->k[K_HIST], "k_hist", 13, A(d->up[U_A]), A(d->up[U_B]), A(njobs), A(d->rows), A(d->bins),
                   A(d->stride), A(d->nf), A(d->gq), A(d->hq), A(d->hoff), A(d->mask), A(d->slots), A(d->total))) !=
        SB_OK)
        return st;
    return launch(d, K_HIST, items, 1);
}

/* Local-memory histograms: work-groups of (tile of a job's rows) x (feature
 * group). Rows a tile: enough work-groups to give each compute unit about 8,
 * within [HIST_TILE_MIN, HIST_TILE_MAX], a multiple of the work-group size;
 * a function of the rows and the device, never of a bit. */
static sb_status hist_local(sb_tdev *d, const sb_tdev_hjob *jobs, int32_t njobs) {
    int64_t rows_all = 0;
    for (int32_t i = 0; i < njobs; i++) rows_all += jobs[i].end - jobs[i].begin;
    int64_t want = (int64_t)d->cus * 8 / d->ngroups;
    if (want < 1) want = 1;
    int64_t tile = (rows_all + want - 1) / want;
    tile = (tile + (int64_t)d->wg - 1) / (int64_t)d->wg * (int64_t)d->wg;
    if (tile < HIST_TILE_MIN) tile = HIST_TILE_MIN;
    if (tile > HIST_TILE_MAX) tile = HIST_TILE_MAX;
    int32_t *ts = tile_table(jobs, njobs, sizeof(sb_tdev_hjob), tile);
    if (!ts) return sb_fail(SB_ERR_OUT_OF_MEMORY, "opencl: out of memory (histogram tiles)");
    const int32_t ntiles = ts[njobs], tile_rows = (int32_t)tile;
    sb_status st = upload(d, U_B, ts, sizeof(int32_t) * ((size_t)njobs + 1), "histogram jobs");
    sb_free(ts);
    if (st != SB_OK || ntiles == 0) return st;
    if (ntiles > d->most_htiles) d->most_htiles = ntiles, d->most_hrows = tile_rows;
    if ((st = sb_ocl_args(d->k[K_HISTL], "k_hist_local", 14, A(d->up[U_A]), A(d->up[U_B]), A(njobs), A(tile_rows),
                   A(d->groups), A(d->rows), A(d->bins), A(d->stride), A(d->gq), A(d->hq), A(d->hoff), A(d->mask),
                   A(d->slots), A(d->total))) != SB_OK)
        return st;
    CK(sb_cl.clSetKernelArg(d->k[K_HISTL], 14, d->hist_acc, NULL), "k_hist_local");
    size_t gl[2] = {d->wg * (size_t)ntiles, (size_t)d->ngroups}, lo[2] = {d->wg, 1};
    CK(sb_cl.clEnqueueNDRangeKernel(d->q, d->k[K_HISTL], 2, NULL, gl, lo, 0, NULL, NULL), "k_hist_local");
    return SB_OK;
}

static sb_status ocl_hist(sb_tdev *d, const sb_tdev_hjob *jobs, int32_t njobs) {
    if (njobs <= 0) return SB_OK;
    sb_status st = upload(d, U_A, jobs, sizeof(sb_tdev_hjob) * (size_t)njobs, "histogram jobs");
    if (st != SB_OK) return st;
    if ((st = sb_ocl_args(d->k[K_ZERO], "k_zero_slots", 3, A(d->up[U_A]), A(d->slots), A(d->total))) != SB_OK ||
        (st = launch(d, K_ZERO, (int64_t)d->total * 3, (size_t)njobs)) != SB_OK)
        return st;
    return d->hist_local ? hist_local(d, jobs, njobs) : hist_global(d, jobs, njobs);
}

static sb_status ocl_subtract(sb_tdev *d, const sb_tdev_sub *subs, int32_t nsubs) {
    if (nsubs <= 0) return SB_OK;
    sb_status st = upload(d, U_A, subs, sizeof(sb_tdev_sub) * (size_t)nsubs, "subtractions");
    if (st != SB_OK) return st;
    if ((st = sb_ocl_args(d->k[K_SUB], "k_subtract", 3, A(d->up[U_A]), A(d->slots), A(d->total))) != SB_OK) return st;
    return launch(d, K_SUB, (int64_t)d->total * 3, (size_t)nsubs);
}

static sb_status ocl_best(sb_tdev *d, const sb_tdev_node *nodes, int32_t nnodes, const sb_k_split_rules *r,
                          sb_k_split *out) {
    if (nnodes <= 0) return SB_OK;
    sb_status st;
    if (nnodes > d->best_cap) {
        rel(&d->best);
        d->best_cap = 0;
        if ((st = alloc(d, &d->best, sizeof(sb_k_split) * (size_t)nnodes * 2, "splits")) != SB_OK) return st;
        d->best_cap = nnodes * 2;
    }
    if ((st = upload(d, U_A, nodes, sizeof(sb_tdev_node) * (size_t)nnodes, "nodes")) != SB_OK) return st;
    if ((st = upload(d, U_B, r, sizeof *r, "split rules")) != SB_OK) return st;
    if ((st = sb_ocl_args(d->k[K_BEST], "k_best", 9, A(d->up[U_A]), A(d->up[U_B]), A(d->slots), A(d->total), A(d->hoff),
                   A(d->nbins), A(d->mask), A(d->nf), A(d->best))) != SB_OK)
        return st;
    size_t gl = d->wg * (size_t)nnodes, lo = d->wg;
    CK(sb_cl.clEnqueueNDRangeKernel(d->q, d->k[K_BEST], 1, NULL, &gl, &lo, 0, NULL, NULL), "k_best");
    return get(d, d->best, 0, out, sizeof(sb_k_split) * (size_t)nnodes, "splits");
}

static sb_status ocl_read_hist(sb_tdev *d, int32_t slot, int32_t first, int32_t count, sb_k_hbin *out) {
    return get(d, d->slots, sizeof(sb_k_hbin) * ((size_t)slot * (size_t)d->total + (size_t)first), out,
               sizeof(sb_k_hbin) * (size_t)count, "histogram");
}

static sb_status ocl_add_tree(sb_tdev *d, const sb_k_bnode *nodes, int32_t nnodes, int32_t cls) {
    sb_status st = upload(d, U_A, nodes, sizeof(sb_k_bnode) * (size_t)nnodes, "tree");
    if (st != SB_OK) return st;
    if ((st = sb_ocl_args(d->k[K_TREE], "k_add_tree", 7, A(d->up[U_A]), A(d->bins), A(d->stride), A(d->margin), A(d->n),
                   A(d->K), A(cls))) != SB_OK)
        return st;
    return launch(d, K_TREE, d->n, 1);
}

static sb_status ocl_read_quantized(sb_tdev *d, int32_t *gq, int32_t *hq) {
    sb_status st = get(d, d->gq, 0, gq, sizeof(int32_t) * (size_t)d->n, "quantized gradients");
    return st != SB_OK ? st : get(d, d->hq, 0, hq, sizeof(int32_t) * (size_t)d->n, "quantized hessians");
}

static sb_status ocl_read_margins(sb_tdev *d, float *m) {
    return get(d, d->margin, 0, m, sizeof(float) * (size_t)d->n * (size_t)d->K, "margins");
}

/* Host-computed gradients of class cls (the ranking objectives) into the
 * device's class-major gradient buffers. */
static sb_status ocl_set_gradients(sb_tdev *d, int32_t cls, const float *g, const float *h) {
    const size_t off = sizeof(float) * (size_t)cls * (size_t)d->n, bytes = sizeof(float) * (size_t)d->n;
    sb_status st = put(d, d->g, off, g, bytes, "gradients");
    return st != SB_OK ? st : put(d, d->h, off, h, bytes, "hessians");
}

/* SAMEBITS_OPENCL_TIMING=1: each operation is bracketed by clFinish and timed
 * on the host clock (so the queue no longer overlaps host work), and the
 * totals are printed to stderr at close, as SAMEBITS_CUDA_TIMING does for
 * CUDA: for finding where a tree's time goes. It changes no result. */
static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void t_begin(sb_tdev *d) {
    if (!d->timing) return;
    sb_cl.clFinish(d->q);
    d->t0 = now_ms();
}

static sb_status t_end(sb_tdev *d, int k, sb_status st) {
    if (!d->timing) return st;
    sb_cl.clFinish(d->q);
    d->tms[k] += now_ms() - d->t0;
    d->tcalls[k]++;
    return st;
}

static sb_status t_gradients(sb_tdev *d, float *maxabs) {
    t_begin(d);
    return t_end(d, 0, ocl_gradients(d, maxabs));
}
static sb_status t_quantize(sb_tdev *d, int32_t cls, float gs, float hs) {
    t_begin(d);
    return t_end(d, 1, ocl_quantize(d, cls, gs, hs));
}
static sb_status t_set_rows(sb_tdev *d, const int32_t *rows, int64_t nrows) {
    t_begin(d);
    return t_end(d, 2, ocl_set_rows(d, rows, nrows));
}
static sb_status t_partition(sb_tdev *d, const sb_tdev_seg *segs, int32_t nseg) {
    t_begin(d);
    return t_end(d, 3, ocl_partition(d, segs, nseg));
}
static sb_status t_hist(sb_tdev *d, const sb_tdev_hjob *jobs, int32_t njobs) {
    t_begin(d);
    return t_end(d, 4, ocl_hist(d, jobs, njobs));
}
static sb_status t_subtract(sb_tdev *d, const sb_tdev_sub *subs, int32_t nsubs) {
    t_begin(d);
    return t_end(d, 5, ocl_subtract(d, subs, nsubs));
}
static sb_status t_best(sb_tdev *d, const sb_tdev_node *nodes, int32_t nnodes, const sb_k_split_rules *r,
                        sb_k_split *out) {
    t_begin(d);
    return t_end(d, 6, ocl_best(d, nodes, nnodes, r, out));
}
static sb_status t_add_tree(sb_tdev *d, const sb_k_bnode *nodes, int32_t nnodes, int32_t cls) {
    t_begin(d);
    return t_end(d, 7, ocl_add_tree(d, nodes, nnodes, cls));
}

static const sb_tdev_ops k_opencl_ops = {
    "opencl",       ocl_open,     ocl_close,     t_gradients, t_quantize, t_set_rows,
    ocl_set_mask,   ocl_reserve,  t_partition,   t_hist,      t_subtract, t_best,
    ocl_read_hist,  t_add_tree,   ocl_read_quantized, ocl_read_margins, ocl_set_gradients,
};

const sb_tdev_ops *sb_tdev_opencl_ops(void) { return &k_opencl_ops; }

/* ---- prediction ---- */

static sb_status predict_inner(sb_tdev *d, cl_mem *b, const sb_k_pnode *nodes, int32_t nn, const int32_t *start,
                               int32_t ntrees, int32_t K, int32_t objective, const float *base, const float *x,
                               int64_t n, int32_t ncols, int32_t kind, int32_t per_row, float *out) {
    sb_status st = ocl_setup(d);
    if (st != SB_OK) return st;
    const size_t nb = sizeof(sb_k_pnode) * (size_t)nn, sb = sizeof(int32_t) * (size_t)ntrees;
    const size_t xb = sizeof(float) * (size_t)n * (size_t)ncols, mb = sizeof(float) * (size_t)n * (size_t)K;
    const size_t ob = sizeof(float) * (size_t)n * (size_t)per_row;
    if ((st = alloc(d, &b[0], nb, "trees")) != SB_OK || (st = put(d, b[0], 0, nodes, nb, "trees")) != SB_OK ||
        (st = alloc(d, &b[1], sb, "trees")) != SB_OK || (st = put(d, b[1], 0, start, sb, "trees")) != SB_OK ||
        (st = alloc(d, &b[2], sizeof(float) * (size_t)K, "base")) != SB_OK ||
        (st = put(d, b[2], 0, base, sizeof(float) * (size_t)K, "base")) != SB_OK ||
        (st = alloc(d, &b[3], xb, "features")) != SB_OK || (st = put(d, b[3], 0, x, xb, "features")) != SB_OK ||
        (st = alloc(d, &b[4], mb, "margins")) != SB_OK || (st = alloc(d, &b[5], ob, "predictions")) != SB_OK)
        return st;
    if ((st = sb_ocl_args(d->k[K_PRED], "k_predict", 13, A(b[0]), A(b[1]), A(ntrees), A(K), A(objective), A(b[2]), A(b[3]),
                   A(n), A(ncols), A(kind), A(per_row), A(b[4]), A(b[5]))) != SB_OK ||
        (st = launch(d, K_PRED, n, 1)) != SB_OK)
        return st;
    return get(d, b[5], 0, out, ob, "predictions");
}

sb_status sb_opencl_predict(const sb_k_pnode *nodes, int32_t nnodes, const int32_t *start, int32_t ntrees, int32_t K,
                            int32_t objective, const float *base, const float *x, int64_t n, int32_t ncols,
                            int32_t kind, int32_t per_row, float *out) {
    sb_tdev *d = sb_calloc(1, sizeof *d);
    if (!d) return sb_fail(SB_ERR_OUT_OF_MEMORY, "opencl: out of memory");
    cl_mem b[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    sb_status st = predict_inner(d, b, nodes, nnodes, start, ntrees, K, objective, base, x, n, ncols, kind, per_row,
                                 out);
    for (int i = 0; i < 6; i++) rel(&b[i]);
    ocl_close(d);
    return st;
}

/* One line per device: "P:D platform / device (OpenCL C): usable" or
 * "refused, why"; continuation lines are indented to follow "opencl devices: ". */
void sb_tdev_opencl_describe(char *buf, size_t cap) {
    sb_ocl_dev *list = NULL;
    int n = 0, pick = -1;
    if (sb_ocl_list_devices(&list, &n) != SB_OK) {
        snprintf(buf, cap, "built; %s", sb_last_error());
        sb_clear_error();
        return;
    }
    if (sb_ocl_pick_device(list, n, &pick) != SB_OK) sb_clear_error();
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < cap; i++) {
        char pname[128], dname[128], why[512], cver[64], hist[160];
        sb_ocl_plat_string(list[i].platform, CL_PLATFORM_NAME, pname, sizeof pname);
        sb_ocl_dev_string(list[i].device, CL_DEVICE_NAME, dname, sizeof dname);
        sb_ocl_dev_string(list[i].device, CL_DEVICE_OPENCL_C_VERSION, cver, sizeof cver);
        const char *r = sb_ocl_device_refusal(list[i].device, why, sizeof why);
        hist_path(list[i].device, hist, sizeof hist);
        int k = snprintf(buf + used, cap - used, "%s%d:%d %s / %s (%s): %s%s%s%s%s", i ? "\n                " : "",
                         list[i].pi, list[i].di, pname, dname, cver, r ? "refused, " : "usable", r ? r : "",
                         i == pick ? " [selected]" : "", r ? "" : "; histograms ", r ? "" : hist);
        if (k < 0) break;
        used += (size_t)k;
    }
    sb_free(list);
}

#endif
