/*
 * dev_opencl.c: the OpenCL backend of the device layer (src/device/device.h)
 * on one OpenCL device, any vendor's: PoCL on a CPU in CI, the NVIDIA
 * driver on a GPU.
 *
 * A program is an entry source of src/kernels/entry/ carried by the library
 * with its #includes inlined (tools/embed_cl.sh: build/gen/<program>_cl_src.c), with
 * compat_opencl.h's text in front, built at open with the profile's options:
 * -cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt -DSB_WG=<size>, never
 * -cl-mad-enable or -cl-fast-relaxed-math; contraction is off by
 * compat_opencl.h's FP_CONTRACT pragma. The work-group size is 256, halved
 * until the device and every kernel allow it.
 *
 * No build or run-time dependency: the OpenCL loader is opened with dlopen
 * (ocl_common.c). Without the loader, a platform or a usable device,
 * device=opencl is refused by name, never run on the CPU instead. Builds
 * without OpenCL (SB_NO_OPENCL) have no backend: sb_backend_opencl is NULL.
 *
 * The device: SAMEBITS_OPENCL_DEVICE = "P:D" or "N" (ocl_common.h); by
 * default the first GPU, else the first device. SAMEBITS_OPENCL_ARM names a
 * separating arm (the program built broken on purpose; a note on stderr).
 */
#include "../../device/device.h"
#include "ocl_common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(SB_NO_OPENCL)

const sb_device_backend *sb_backend_opencl(void) { return NULL; }

#else

/* The embedded sources (build/gen/): the compat header and each program. */
extern const char *const sb_compat_cl_src[];
extern const int32_t sb_compat_cl_src_lines;
extern const char *const sb_tree_cl_src[];
extern const int32_t sb_tree_cl_src_lines;
extern const char *const sb_forest_cl_src[];
extern const int32_t sb_forest_cl_src_lines;
extern const char *const sb_core_cl_src[];
extern const int32_t sb_core_cl_src_lines;
extern const char *const sb_linalg_cl_src[];
extern const int32_t sb_linalg_cl_src_lines;
extern const char *const sb_ts_cl_src[];
extern const int32_t sb_ts_cl_src_lines;
extern const char *const sb_gp_cl_src[];
extern const int32_t sb_gp_cl_src_lines;

#if defined(SB_SABOTAGE_ETS_SSE_ORDER)
#define ETS_ARM_OPT " -DSB_SABOTAGE_ETS_SSE_ORDER"
#else
#define ETS_ARM_OPT ""
#endif

typedef struct ocl_impl {
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    cl_kernel *k;
    size_t *klocal; /* each kernel's own local memory, asked before any launch */
    int32_t nk;
} ocl_impl;

static int32_t nkernels(sb_program_id p) { return (int32_t)sb_program_kernels(p); }

static void release_kernels(ocl_impl *o) {
    if (o->k)
        for (int32_t i = 0; i < o->nk; i++)
            if (o->k[i]) sb_cl.clReleaseKernel(o->k[i]);
    sb_free(o->k);
    sb_free(o->klocal);
    o->k = NULL;
    o->klocal = NULL;
    if (o->prog) sb_cl.clReleaseProgram(o->prog);
    o->prog = NULL;
}

/* Program d->prog built for work-groups of wg, and its kernels created. */
static sb_status build(sb_device *d, ocl_impl *o, const char *extra, size_t wg) {
    const char *const *src = d->prog == SB_PROG_TREE     ? sb_tree_cl_src
                             : d->prog == SB_PROG_FOREST ? sb_forest_cl_src
                             : d->prog == SB_PROG_CORE   ? sb_core_cl_src
                             : d->prog == SB_PROG_TS     ? sb_ts_cl_src
                             : d->prog == SB_PROG_GP     ? sb_gp_cl_src
                                                         : sb_linalg_cl_src;
    const int32_t lines = d->prog == SB_PROG_TREE     ? sb_tree_cl_src_lines
                          : d->prog == SB_PROG_FOREST ? sb_forest_cl_src_lines
                          : d->prog == SB_PROG_CORE   ? sb_core_cl_src_lines
                          : d->prog == SB_PROG_TS     ? sb_ts_cl_src_lines
                          : d->prog == SB_PROG_GP     ? sb_gp_cl_src_lines
                                                      : sb_linalg_cl_src_lines;
    const int32_t all = sb_compat_cl_src_lines + lines;
    const char **joined = sb_malloc(sizeof(char *) * (size_t)all);
    if (!joined) return sb_fail(SB_ERR_OUT_OF_MEMORY, "opencl: out of memory");
    for (int32_t i = 0; i < sb_compat_cl_src_lines; i++) joined[i] = sb_compat_cl_src[i];
    for (int32_t i = 0; i < lines; i++) joined[sb_compat_cl_src_lines + i] = src[i];
    /* the float64 program: doubles on (compat_opencl.h), and a build of the
     * library that carries the ets-sse-order arm carries it here too */
    char f64opts[256];
    if (d->prog == SB_PROG_TS || d->prog == SB_PROG_GP) {
        snprintf(f64opts, sizeof f64opts, "-DSB_OCL_F64%s%s%s", ETS_ARM_OPT, extra ? " " : "", extra ? extra : "");
        extra = f64opts;
    }
    sb_status st = sb_ocl_build(o->ctx, o->dev, joined, all, extra, wg, &o->prog);
    sb_free(joined);
    if (st != SB_OK) return st;
    o->nk = nkernels(d->prog);
    if (!(o->k = sb_calloc((size_t)o->nk, sizeof(cl_kernel))) || !(o->klocal = sb_calloc((size_t)o->nk, sizeof(size_t))))
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "opencl: out of memory");
    cl_int e = CL_SUCCESS;
    for (int32_t i = 0; i < o->nk; i++) {
        const char *name = sb_device_kernel_name(d->prog, i);
        o->k[i] = sb_cl.clCreateKernel(o->prog, name, &e);
        if (e != CL_SUCCESS) return sb_ocl_fail(e, name);
        /* now, before any argument is set: CL_KERNEL_LOCAL_MEM_SIZE counts the
         * local arguments set since (NVIDIA's driver does), which are the
         * caller's to size, not the kernel's */
        cl_ulong kl = 0;
        if (sb_cl.clGetKernelWorkGroupInfo(o->k[i], o->dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof kl, &kl, NULL) == CL_SUCCESS)
            o->klocal[i] = (size_t)kl;
    }
    d->wg = (int32_t)wg;
    return SB_OK;
}

static void ocl_close(sb_device *d) {
    ocl_impl *o = d->impl;
    if (!o) return;
    if (o->q) sb_cl.clFinish(o->q);
    release_kernels(o);
    if (o->q) sb_cl.clReleaseCommandQueue(o->q);
    if (o->ctx) sb_cl.clReleaseContext(o->ctx);
    sb_free(o);
    d->impl = NULL;
}

static sb_status ocl_open(sb_device *d) {
    ocl_impl *o = sb_calloc(1, sizeof *o);
    if (!o) return sb_fail(SB_ERR_OUT_OF_MEMORY, "opencl: out of memory");
    d->impl = o;
    const char *extra = NULL;
    size_t wg = 256;
    sb_status st = sb_ocl_open(&o->dev, &o->ctx, &o->q, &extra, &wg);
    if (st != SB_OK) return st;
    /* the time-series program: one work-item a series of a register-heavy
     * fit; groups of 64 spread a batch over the compute units (a schedule
     * input only) */
    if (d->prog == SB_PROG_TS && wg > 64) wg = 64;
    if (d->prog == SB_PROG_TS || d->prog == SB_PROG_GP) {
        /* the float64 programs needs IEEE doubles: round to nearest, infinities
         * and NaNs, subnormals (OpenCL's + - * / on doubles are then correctly
         * rounded, the host's bits) */
        cl_ulong fp = 0;
        const cl_ulong need = CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN | CL_FP_DENORM;
        if (sb_cl.clGetDeviceInfo(o->dev, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL) != CL_SUCCESS ||
            (fp & need) != need) {
            char name[128];
            sb_ocl_dev_string(o->dev, CL_DEVICE_NAME, name, sizeof name);
            return sb_fail(SB_ERR_BACKEND_UNAVAILABLE,
                           "device 'opencl': %.120s has no IEEE double arithmetic (cl_khr_fp64), which the float64 "
                           "families (exponential smoothing, ARIMA, support vector machines, Gaussian process regression) need on a device",
                           name);
        }
    }
    if ((st = build(d, o, extra, wg)) != SB_OK) return st;
    size_t kw = wg; /* the smallest work-group size any kernel allows */
    for (int32_t i = 0; i < o->nk; i++) {
        size_t w = 0;
        if (sb_cl.clGetKernelWorkGroupInfo(o->k[i], o->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof w, &w, NULL) ==
                CL_SUCCESS && w < kw)
            kw = w;
    }
    if (kw < wg) { /* a kernel needs smaller groups on this device: rebuild (sizes change no bit) */
        while (wg > kw && wg > 1) wg /= 2;
        release_kernels(o);
        if ((st = build(d, o, extra, wg)) != SB_OK) return st;
    }
    cl_uint cus = 0;
    cl_ulong lm = 0;
    if (sb_cl.clGetDeviceInfo(o->dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL) != CL_SUCCESS || !cus)
        cus = 1;
    if (sb_cl.clGetDeviceInfo(o->dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lm, &lm, NULL) != CL_SUCCESS) lm = 0;
    cl_ulong maxalloc = 0;
    if (sb_cl.clGetDeviceInfo(o->dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof maxalloc, &maxalloc, NULL) != CL_SUCCESS)
        maxalloc = 0;
    d->max_alloc = (int64_t)maxalloc;
    d->cus = (int32_t)cus;
    d->local_mem = (int64_t)lm;
    char name[128];
    sb_ocl_dev_string(o->dev, CL_DEVICE_NAME, name, sizeof name);
    snprintf(d->name, sizeof d->name, "opencl: %s", name);
    return SB_OK;
}

static sb_status ocl_alloc(sb_device *d, void **h, size_t bytes) {
    ocl_impl *o = d->impl;
    cl_int e = CL_SUCCESS;
    cl_mem m = sb_cl.clCreateBuffer(o->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (e != CL_SUCCESS) return sb_ocl_fail(e, "clCreateBuffer");
    *h = m;
    return SB_OK;
}

static void ocl_release(sb_device *d, void *h) {
    (void)d;
    sb_cl.clReleaseMemObject((cl_mem)h);
}

static sb_status ocl_write(sb_device *d, void *h, size_t off, const void *src, size_t bytes) {
    ocl_impl *o = d->impl;
    cl_int e = sb_cl.clEnqueueWriteBuffer(o->q, (cl_mem)h, CL_TRUE, off, bytes, src, 0, NULL, NULL);
    return e == CL_SUCCESS ? SB_OK : sb_ocl_fail(e, "clEnqueueWriteBuffer");
}

static sb_status ocl_read(sb_device *d, void *h, size_t off, void *dst, size_t bytes) {
    ocl_impl *o = d->impl;
    cl_int e = sb_cl.clEnqueueReadBuffer(o->q, (cl_mem)h, CL_TRUE, off, bytes, dst, 0, NULL, NULL);
    return e == CL_SUCCESS ? SB_OK : sb_ocl_fail(e, "clEnqueueReadBuffer");
}

static sb_status ocl_copy(sb_device *d, void *dst, size_t doff, void *src, size_t soff, size_t bytes) {
    ocl_impl *o = d->impl;
    cl_int e = sb_cl.clEnqueueCopyBuffer(o->q, (cl_mem)src, (cl_mem)dst, soff, doff, bytes, 0, NULL, NULL);
    return e == CL_SUCCESS ? SB_OK : sb_ocl_fail(e, "clEnqueueCopyBuffer");
}

static sb_status ocl_launch(sb_device *d, int32_t k, int64_t g0, int64_t g1, size_t dyn_local, const sb_darg *args,
                            int32_t nargs) {
    ocl_impl *o = d->impl;
    const char *name = sb_device_kernel_name(d->prog, k);
    cl_int e = CL_SUCCESS;
    for (int32_t i = 0; i < nargs && e == CL_SUCCESS; i++) e = sb_cl.clSetKernelArg(o->k[k], (cl_uint)i, args[i].size, args[i].p);
    if (e == CL_SUCCESS && dyn_local) e = sb_cl.clSetKernelArg(o->k[k], (cl_uint)nargs, dyn_local, NULL);
    if (e != CL_SUCCESS) return sb_ocl_fail(e, name);
    size_t gl[2] = {(size_t)g0 * (size_t)d->wg, (size_t)g1}, lo[2] = {(size_t)d->wg, 1};
    e = sb_cl.clEnqueueNDRangeKernel(o->q, o->k[k], g1 > 1 ? 2 : 1, NULL, gl, lo, 0, NULL, NULL);
    return e == CL_SUCCESS ? SB_OK : sb_ocl_fail(e, name);
}

static sb_status ocl_finish(sb_device *d) {
    ocl_impl *o = d->impl;
    cl_int e = sb_cl.clFinish(o->q);
    return e == CL_SUCCESS ? SB_OK : sb_ocl_fail(e, "clFinish");
}

static size_t ocl_kernel_local(sb_device *d, int32_t k) {
    const ocl_impl *o = d->impl;
    return o->klocal ? o->klocal[k] : 0;
}

/* A GPU the profile can use (SAMEBITS_OPENCL_DEVICE, when set, must name one). */
static int ocl_present(void) {
    sb_ocl_dev *list = NULL;
    int n = 0, found = 0;
    if (sb_ocl_list_devices(&list, &n) != SB_OK) {
        sb_clear_error();
        return 0;
    }
    const char *env = getenv("SAMEBITS_OPENCL_DEVICE");
    int pick = -1;
    if (env && *env) {
        if (sb_ocl_pick_device(list, n, &pick) != SB_OK) pick = -1;
        sb_clear_error();
    }
    for (int i = 0; i < n && !found; i++) {
        if (pick >= 0 && i != pick) continue;
        char why[512];
        cl_bitfield type = 0;
        if (sb_cl.clGetDeviceInfo(list[i].device, CL_DEVICE_TYPE, sizeof type, &type, NULL) != CL_SUCCESS) type = 0;
        found = (type & CL_DEVICE_TYPE_GPU) && !sb_ocl_device_refusal(list[i].device, why, sizeof why);
    }
    sb_free(list);
    return found;
}

/* One line per device: "P:D platform / device (OpenCL C): usable" or
 * "refused, why"; continuation lines are indented to follow "opencl devices: ". */
static void ocl_describe(char *buf, size_t cap) {
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
        char pname[128], dname[128], why[512], cver[64];
        sb_ocl_plat_string(list[i].platform, CL_PLATFORM_NAME, pname, sizeof pname);
        sb_ocl_dev_string(list[i].device, CL_DEVICE_NAME, dname, sizeof dname);
        sb_ocl_dev_string(list[i].device, CL_DEVICE_OPENCL_C_VERSION, cver, sizeof cver);
        const char *r = sb_ocl_device_refusal(list[i].device, why, sizeof why);
        cl_ulong lm = 0;
        cl_uint cus = 0;
        if (sb_cl.clGetDeviceInfo(list[i].device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lm, &lm, NULL) != CL_SUCCESS) lm = 0;
        if (sb_cl.clGetDeviceInfo(list[i].device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL) != CL_SUCCESS)
            cus = 0;
        int k = snprintf(buf + used, cap - used, "%s%d:%d %s / %s (%s): %s%s%s; local memory %lu KiB, %u compute units",
                         i ? "\n                " : "", list[i].pi, list[i].di, pname, dname, cver,
                         r ? "refused, " : "usable", r ? r : "", i == pick ? " [selected]" : "",
                         (unsigned long)(lm / 1024), (unsigned)cus);
        if (k < 0) break;
        used += (size_t)k;
    }
    sb_free(list);
}

static const sb_device_backend k_opencl = {
    "opencl",  ocl_present, ocl_open,   ocl_close,  ocl_alloc,        ocl_release, ocl_write,
    ocl_read,  ocl_copy,    ocl_launch, ocl_finish, ocl_kernel_local, ocl_describe, NULL, NULL,
};

const sb_device_backend *sb_backend_opencl(void) { return &k_opencl; }

#endif
