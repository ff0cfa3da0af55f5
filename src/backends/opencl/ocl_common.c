/*
 * ocl_common.c: the OpenCL loader, device choice, refusals, arms and program
 * build shared by the OpenCL tree and forest devices (ocl_common.h).
 */
#include "ocl_common.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(SB_NO_OPENCL)

#include <dlfcn.h>
#include <pthread.h>

sb_ocl_api sb_cl;

static pthread_once_t g_load_once = PTHREAD_ONCE_INIT;
static char g_load_err[512]; /* empty when the loader and every function were found */

static void load_opencl(void) {
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(g_load_err, sizeof g_load_err, "no OpenCL loader (libOpenCL.so.1: %s)", dlerror());
        return;
    }
    void *f;
#define OCL_LOAD(ret, name, args)                                                                   \
    if (!(f = dlsym(h, #name))) {                                                                 \
        snprintf(g_load_err, sizeof g_load_err, "the OpenCL loader lacks %s", #name);             \
        return;                                                                                   \
    }                                                                                             \
    memcpy(&sb_cl.name, &f, sizeof f);
    OCL_FUNCS(OCL_LOAD)
#undef OCL_LOAD
}

const char *sb_ocl_loader_error(void) {
    pthread_once(&g_load_once, load_opencl);
    return g_load_err[0] ? g_load_err : NULL;
}

/* Every device of every platform, in platform order (malloc'ed), or a named refusal. */
sb_status sb_ocl_list_devices(sb_ocl_dev **out, int *count) {
    *out = NULL;
    *count = 0;
    const char *le = sb_ocl_loader_error();
    if (le) return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "device 'opencl': %s", le);
    cl_uint np = 0;
    cl_int e = sb_cl.clGetPlatformIDs(0, NULL, &np);
    if (e == CL_PLATFORM_NOT_FOUND_KHR || np == 0)
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE,
                       "device 'opencl': no OpenCL platform (an ICD such as pocl-opencl-icd; /etc/OpenCL/vendors lists them)");
    if (e != CL_SUCCESS) return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "device 'opencl': clGetPlatformIDs failed (%d)", e);
    cl_platform_id ps[64];
    if (np > 64) np = 64;
    if (sb_cl.clGetPlatformIDs(np, ps, NULL) != CL_SUCCESS)
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "device 'opencl': clGetPlatformIDs failed");
    sb_ocl_dev *list = NULL;
    int n = 0;
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (sb_cl.clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0) continue;
        cl_device_id *ds = sb_malloc(sizeof(cl_device_id) * nd);
        sb_ocl_dev *l2 = sb_realloc(list, sizeof(sb_ocl_dev) * (size_t)(n + (int)nd));
        if (!ds || !l2) {
            sb_free(ds);
            sb_free(l2 ? l2 : list);
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "opencl: out of memory");
        }
        list = l2;
        if (sb_cl.clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, nd, ds, &nd) == CL_SUCCESS)
            for (cl_uint k = 0; k < nd; k++) list[n++] = (sb_ocl_dev){ps[p], ds[k], (int)p, (int)k};
        sb_free(ds);
    }
    if (n == 0) {
        sb_free(list);
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "device 'opencl': %u OpenCL platform(s) but no device", np);
    }
    *out = list;
    *count = n;
    return SB_OK;
}

void sb_ocl_dev_string(cl_device_id d, cl_uint what, char *buf, size_t cap) {
    buf[0] = '\0';
    if (sb_cl.clGetDeviceInfo(d, what, cap - 1, buf, NULL) != CL_SUCCESS) snprintf(buf, cap, "?");
    buf[cap - 1] = '\0';
}

void sb_ocl_plat_string(cl_platform_id p, cl_uint what, char *buf, size_t cap) {
    buf[0] = '\0';
    if (sb_cl.clGetPlatformInfo(p, what, cap - 1, buf, NULL) != CL_SUCCESS) snprintf(buf, cap, "?");
    buf[cap - 1] = '\0';
}

/* NULL when the device can meet the profile and run the tree device, else
 * the reason (a short name, then why). */
const char *sb_ocl_device_refusal(cl_device_id d, char *why, size_t cap) {
    cl_bitfield fp = 0;
    char ext[8192], prof[64], cver[128];
    if (sb_cl.clGetDeviceInfo(d, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL) != CL_SUCCESS) fp = 0;
    sb_ocl_dev_string(d, CL_DEVICE_EXTENSIONS, ext, sizeof ext);
    sb_ocl_dev_string(d, CL_DEVICE_PROFILE, prof, sizeof prof);
    sb_ocl_dev_string(d, CL_DEVICE_OPENCL_C_VERSION, cver, sizeof cver);
    cl_uint little = 0;
    if (sb_cl.clGetDeviceInfo(d, CL_DEVICE_ENDIAN_LITTLE, sizeof little, &little, NULL) != CL_SUCCESS) little = 0;
    int major = 0, minor = 0;
    const uint32_t probe = 1;
    if (!(fp & CL_FP_DENORM))
        snprintf(why, cap, "no-denormals: the device flushes single-precision denormals; the profile keeps them");
    else if (!(fp & CL_FP_ROUND_TO_NEAREST))
        snprintf(why, cap, "no-round-to-nearest: CL_FP_ROUND_TO_NEAREST missing");
    else if (!(fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT))
        snprintf(why, cap, "no-correctly-rounded-divide-sqrt: CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT missing");
    else if (sscanf(cver, "OpenCL C %d.%d", &major, &minor) != 2 || major * 10 + minor < 12)
        snprintf(why, cap, "no-opencl-c-1.2: the device reports '%s'", cver);
    else if (strcmp(prof, "FULL_PROFILE") != 0 && !strstr(ext, "cles_khr_int64"))
        snprintf(why, cap, "no-int64: %s without cles_khr_int64", prof);
    else if (!strstr(ext, "cl_khr_int64_base_atomics"))
        snprintf(why, cap, "no-int64-atomics: cl_khr_int64_base_atomics missing (the histograms' exact 64-bit sums)");
    else if ((little == CL_TRUE) != (*(const unsigned char *)&probe == 1))
        snprintf(why, cap, "byte-order: the device's byte order differs from the host's");
    else
        return NULL;
    return why;
}

/* The device SAMEBITS_OPENCL_DEVICE names (or the default) out of list. */
sb_status sb_ocl_pick_device(const sb_ocl_dev *list, int n, int *out) {
    const char *s = getenv("SAMEBITS_OPENCL_DEVICE");
    *out = -1;
    if (!s || !*s) {
        for (int i = 0; i < n && *out < 0; i++) {
            cl_bitfield t = 0;
            if (sb_cl.clGetDeviceInfo(list[i].device, CL_DEVICE_TYPE, sizeof t, &t, NULL) == CL_SUCCESS &&
                (t & CL_DEVICE_TYPE_GPU))
                *out = i;
        }
        if (*out < 0) *out = 0;
        return SB_OK;
    }
    int a = -1, b = -1;
    char tail;
    if (sscanf(s, "%d:%d%c", &a, &b, &tail) == 2 && a >= 0 && b >= 0) {
        for (int i = 0; i < n; i++)
            if (list[i].pi == a && list[i].di == b) *out = i;
    } else if (sscanf(s, "%d%c", &a, &tail) == 1 && a >= 0) {
        if (a < n) *out = a;
    } else {
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "SAMEBITS_OPENCL_DEVICE='%s': expected P:D or N (samebits doctor lists them)", s);
    }
    if (*out < 0)
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE,
                       "device 'opencl': SAMEBITS_OPENCL_DEVICE='%s' names no device (%d present; samebits doctor lists them)",
                       s, n);
    return SB_OK;
}

sb_status sb_ocl_fail(cl_int e, const char *what) {
    return sb_fail(e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_HOST_MEMORY || e == CL_OUT_OF_RESOURCES
                       ? SB_ERR_OUT_OF_MEMORY
                       : SB_ERR_INTERNAL,
                   "opencl: %s failed (%d)", what, e);
}

/* The arm SAMEBITS_OPENCL_ARM names: its extra build options, or NULL. */
const char *sb_ocl_arm_options(const char *arm) {
    static const char *const arms[][2] = {{"contract", "-DSB_SABOTAGE_CONTRACT"},
                                          {"mad-enable", "-cl-mad-enable"},
                                          {"fast-relaxed-math", "-cl-fast-relaxed-math"},
                                          {"float-atomic", "-DSB_ARM_FLOAT_ATOMIC"},
                                          {"vendor-exp", "-DSB_ARM_VENDOR_EXP"},
                                          {"gemm-fma", "-DSB_ARM_GEMM_FMA"},
                                          {"ties", "-DSB_SABOTAGE_TIES"},
                                          {"forest-ties", "-DSB_SABOTAGE_FOREST_TIES"},
                                          {"topk-ties", "-DSB_SABOTAGE_TOPK_TIES"},
                                          {"nan-side", "-DSB_SABOTAGE_NAN_SIDE"},
                                          {"kmeans-ties", "-DSB_SABOTAGE_KMEANS_TIES"},
                                          {"knn-bound", "-DSB_SABOTAGE_KNN_BOUND"},
                                          {"agglo-order", "-DSB_SABOTAGE_AGGLO_ORDER"},
                                          {"kde-order", "-DSB_SABOTAGE_KDE_ORDER"},
                                          {"ets-sse-order", "-DSB_SABOTAGE_ETS_SSE_ORDER"},
                                          {"svm-kernel-f32", "-DSB_SABOTAGE_SVM_KERNEL_F32"},
                                          {"mlp-grad-order", "-DSB_SABOTAGE_MLP_GRAD_ORDER"},
                                          {"mlp-softmax-order", "-DSB_SABOTAGE_MLP_SOFTMAX_ORDER"},
                                          {"lm-attn-order", "-DSB_SABOTAGE_LM_ATTN_ORDER"},
                                          {"arima-device-order", "-DSB_SABOTAGE_ARIMA_DEVICE_ORDER"},
                                          {"gp-dev-order", "-DSB_SABOTAGE_GP_DEV_ORDER"},
                                          {"umap-float-sum", "-DSB_SABOTAGE_UMAP_FLOAT_SUM"}};
    for (size_t i = 0; i < sizeof arms / sizeof arms[0]; i++)
        if (!strcmp(arm, arms[i][0])) return arms[i][1];
    return NULL;
}

sb_status sb_ocl_args(cl_kernel k, const char *name, int n, ...) {
    va_list ap;
    va_start(ap, n);
    cl_int e = CL_SUCCESS;
    for (int i = 0; i < n && e == CL_SUCCESS; i++) {
        size_t sz = va_arg(ap, size_t);
        const void *p = va_arg(ap, const void *);
        e = sb_cl.clSetKernelArg(k, (cl_uint)i, sz, p);
    }
    va_end(ap);
    if (e != CL_SUCCESS) return sb_ocl_fail(e, name);
    return SB_OK;
}

sb_status sb_ocl_choose(cl_device_id *dev) {
    sb_ocl_dev *list = NULL;
    int nd = 0, pick = -1;
    sb_status st = sb_ocl_list_devices(&list, &nd);
    if (st != SB_OK) return st;
    st = sb_ocl_pick_device(list, nd, &pick);
    if (st != SB_OK) {
        sb_free(list);
        return st;
    }
    *dev = list[pick].device;
    const int pi = list[pick].pi, di = list[pick].di;
    sb_free(list);
    char name[256], why[512];
    sb_ocl_dev_string(*dev, CL_DEVICE_NAME, name, sizeof name);
    if (sb_ocl_device_refusal(*dev, why, sizeof why))
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "device 'opencl' %d:%d (%s) cannot meet the profile: %s", pi, di,
                       name, why);
    return SB_OK;
}

sb_status sb_ocl_open(cl_device_id *dev, cl_context *ctx, cl_command_queue *q, const char **extra, size_t *wg) {
    sb_status st = sb_ocl_choose(dev);
    if (st != SB_OK) return st;
    if ((st = sb_ocl_arm(extra)) != SB_OK) return st;
    cl_int e = CL_SUCCESS;
    *ctx = sb_cl.clCreateContext(NULL, 1, dev, NULL, NULL, &e);
    if (e != CL_SUCCESS) return sb_ocl_fail(e, "clCreateContext");
    *q = sb_cl.clCreateCommandQueue(*ctx, *dev, 0, &e);
    if (e != CL_SUCCESS) return sb_ocl_fail(e, "clCreateCommandQueue");
    size_t dmax = 0;
    *wg = 256;
    if (sb_cl.clGetDeviceInfo(*dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof dmax, &dmax, NULL) == CL_SUCCESS)
        while (*wg > dmax && *wg > 1) *wg /= 2;
    return SB_OK;
}

sb_status sb_ocl_arm(const char **extra) {
    const char *arm = getenv("SAMEBITS_OPENCL_ARM");
    *extra = NULL;
    if (arm && *arm) {
        if (!(*extra = sb_ocl_arm_options(arm)))
            return sb_fail(SB_ERR_INVALID_ARGUMENT,
                           "SAMEBITS_OPENCL_ARM='%s': arms are contract, mad-enable, fast-relaxed-math, float-atomic, "
                           "vendor-exp, gemm-fma, ties, forest-ties, topk-ties, nan-side, kmeans-ties, knn-bound, agglo-order, "
                           "kde-order, ets-sse-order, svm-kernel-f32, mlp-grad-order, mlp-softmax-order, lm-attn-order, arima-device-order, "
                           "gp-dev-order, umap-float-sum",
                           arm);
        fprintf(stderr, "samebits: opencl: SEPARATING ARM '%s' (%s): this build of the kernels breaks the profile\n",
                arm, *extra);
    }
    return SB_OK;
}

sb_status sb_ocl_build(cl_context ctx, cl_device_id dev, const char *const *src, int32_t lines, const char *extra,
                       size_t wg, cl_program *out) {
    char opts[512];
    snprintf(opts, sizeof opts, "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt -DSB_WG=%zu%s%s", wg,
             extra ? " " : "", extra ? extra : "");
    cl_int e = CL_SUCCESS;
    *out = sb_cl.clCreateProgramWithSource(ctx, (cl_uint)lines, (const char **)src, NULL, &e);
    if (e != CL_SUCCESS) return sb_ocl_fail(e, "clCreateProgramWithSource");
    e = sb_cl.clBuildProgram(*out, 1, &dev, opts, NULL, NULL);
    if (e != CL_SUCCESS) {
        char log[4096] = "";
        size_t len = 0;
        sb_cl.clGetProgramBuildInfo(*out, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &len);
        log[sizeof log - 1] = '\0';
        return sb_fail(SB_ERR_INTERNAL, "opencl: building the kernels failed (%d) with '%s': %s", e, opts, log);
    }
    return SB_OK;
}

#endif
