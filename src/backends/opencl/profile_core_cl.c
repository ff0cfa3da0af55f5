/*
 * profile_core_cl.c: the OpenCL leg of the pinned fixture profile-core.
 *
 * A host program (C11) that builds an OpenCL C 1.2 program at run time from
 * the very same device-neutral headers as the CPU fixture
 * (src/fixtures/profile_core.c): the counter rng (src/core/rng.h), the
 * fixture's inputs (src/kernels/profile_core.h), the elementary functions and
 * the reductions (src/math/sb_math.h), all behind src/kernels/compat.h, which
 * picks src/backends/opencl/compat_opencl.h under __OPENCL_VERSION__. The
 * kernel source below only #includes those headers and decides which
 * work-item evaluates which element: it holds no arithmetic of its own.
 * Every stage runs on the device; results are copied back and recorded with
 * the library's card API under exactly the CPU fixture's stage tags, dtypes,
 * counts and order, so `samebits card diff CPU.card OPENCL.card` must say
 * `identical`.
 *
 * Schedules (any schedule is allowed, the shapes are not):
 *   - elementwise stages: one work-item per element;
 *   - reduce.tree_sum: one work-item per SB_REDUCE_BLOCK-element leaf
 *     (sb_block_sum_f32), then the fixed pairwise tree (sb_tree_combine_f32)
 *     in one work-item;
 *   - reduce.exact_sum: one work-item per chunk folds its inputs into its own
 *     superaccumulator (sb_sacc_add_range), one work-item merges the chunk
 *     accumulators (sb_sacc_merge) and rounds once (sb_sacc_round_f32). No
 *     atomics, so no cl_khr_int64_*_atomics are needed.
 * Self-checks (not recorded; exit 2 on failure): the tree sum equals the
 * serial sb_tree_sum_f32 run in one work-item; the exact sum's normalised
 * accumulator and rounding are the same for two different chunkings.
 *
 * Build options: -cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt -I SRC,
 * never -cl-mad-enable, -cl-fast-relaxed-math or -cl-unsafe-math-optimizations
 * (compat_opencl.h also sets FP_CONTRACT OFF). --build-options-extra appends
 * options for the separating arms; such a card is marked meta.opencl.arm.
 * Refusals (exit 4, a named SB_ERR_IDENTITY_REFUSED reason): a device without
 * denormals (CL_FP_DENORM), without round-to-nearest, without correctly
 * rounded single-precision divide and sqrt, without 64-bit integers
 * (EMBEDDED_PROFILE lacking cles_khr_int64), without OpenCL C 1.2, or whose
 * byte order differs from the host's.
 *
 * Usage: profile_core_cl --out CARD [--device N] [--build-options-extra STR]
 *          [--src DIR] [--list] [--print-source]
 *   --device N or env SAMEBITS_OPENCL_DEVICE: index into the devices of all
 *   platforms, in platform order (see --list); default 0.
 *   --src DIR or env SAMEBITS_SRC_DIR: the repository's src/ directory
 *   (default: the one this program was built from, SB_CL_SRC_DIR).
 *   --print-source: print the kernel source and the profile's build options
 *   (to reproduce a build offline, e.g. with clang -x cl) and exit.
 * Exit status: 0 success; 1 usage; 2 a self-check failed; 3 an OpenCL,
 * build or library error; 4 the device was refused (cannot meet the profile);
 * 5 no OpenCL platform or device.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "samebits_cert.h"
#include "kernels/profile_core.h"
#include "math/sb_math.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef SB_CL_SRC_DIR
#define SB_CL_SRC_DIR "src"
#endif

#define EXIT_USAGE 1
#define EXIT_SELFCHECK 2
#define EXIT_ERROR 3
#define EXIT_REFUSED 4
#define EXIT_NO_DEVICE 5

/* Work-items per chunk of the exact sum, and the second chunking that the
 * self-check compares it with (odd on purpose: a ragged last chunk). */
#define EXACT_CHUNK 1024
#define EXACT_CHUNK_CHECK 4099
/* Global sizes are padded to a multiple of this; kernels guard the tail. */
#define GROUP_PAD 256

/* The kernels: nothing but index bookkeeping around the shared functions. */
static const char *k_kernel_source =
    "#include \"kernels/profile_core.h\"\n"
    "#include \"core/rng.h\"\n"
    "#include \"math/sb_math.h\"\n"
    "\n"
    "__kernel void k_rng_words(__global uint *words, uint n) {\n"
    "    uint i = (uint)get_global_id(0);\n"
    "    if (i >= n) return;\n"
    "    sb_u32 w[4];\n"
    "    sb_rng_words(SB_CORE_SEED, SB_CORE_PURPOSE_WORDS, i, 0u, w);\n"
    "    for (int j = 0; j < 4; j++) words[4u * i + (uint)j] = w[j];\n"
    "}\n"
    "\n"
    "__kernel void k_rng_maps(__global const uint *words, __global float *unit,\n"
    "                         __global float *open_unit, __global uint *below, uint n) {\n"
    "    uint i = (uint)get_global_id(0);\n"
    "    if (i >= n) return;\n"
    "    unit[i] = sb_rng_unit_f32(SB_CORE_SEED, SB_CORE_PURPOSE_UNIT, i);\n"
    "    open_unit[i] = sb_u32_to_open_unit_f32(words[i]);\n"
    "    below[i] = sb_rng_below(SB_CORE_SEED, SB_CORE_PURPOSE_BELOW, i, SB_CORE_BELOW_N);\n"
    "}\n"
    "\n"
    "__kernel void k_math_input(__global float *x, uint n) {\n"
    "    uint i = (uint)get_global_id(0);\n"
    "    if (i < n) x[i] = sb_k_core_math_input(i);\n"
    "}\n"
    "\n"
    "#define SB_CL_MAP(name, fn)                                                \\\n"
    "    __kernel void name(__global const float *x, __global float *y, uint n) { \\\n"
    "        uint i = (uint)get_global_id(0);                                   \\\n"
    "        if (i < n) y[i] = fn(x[i]);                                        \\\n"
    "    }\n"
    "SB_CL_MAP(k_exp, sb_expf)\n"
    "SB_CL_MAP(k_expm1, sb_expm1f)\n"
    "SB_CL_MAP(k_log, sb_logf)\n"
    "SB_CL_MAP(k_log1p, sb_log1pf)\n"
    "SB_CL_MAP(k_tanh, sb_tanhf)\n"
    "SB_CL_MAP(k_sigmoid, sb_sigmoidf)\n"
    "\n"
    "__kernel void k_reduce_input(__global float *s, uint n) {\n"
    "    uint i = (uint)get_global_id(0);\n"
    "    if (i < n) s[i] = sb_k_core_reduce_input(i);\n"
    "}\n"
    "\n"
    "__kernel void k_tree_leaves(__global const float *x, long n, __global float *partials) {\n"
    "    long b = (long)get_global_id(0);\n"
    "    if (b >= sb_tree_nblocks(n)) return;\n"
    "    long lo = b * SB_REDUCE_BLOCK, hi = lo + SB_REDUCE_BLOCK;\n"
    "    partials[b] = sb_block_sum_f32(x, lo, hi < n ? hi : n);\n"
    "}\n"
    "\n"
    "__kernel void k_tree_combine(__global float *partials, long count, __global float *out) {\n"
    "    if (get_global_id(0) == 0) out[0] = sb_tree_combine_f32(partials, count);\n"
    "}\n"
    "\n"
    "__kernel void k_tree_serial(__global const float *x, long n, __global float *scratch,\n"
    "                            __global float *out) {\n"
    "    if (get_global_id(0) == 0) out[0] = sb_tree_sum_f32(x, n, scratch);\n"
    "}\n"
    "\n"
    "__kernel void k_sacc_chunks(__global const float *x, long n, long chunk,\n"
    "                            __global sb_sacc *accs) {\n"
    "    long c = (long)get_global_id(0);\n"
    "    long lo = c * chunk;\n"
    "    if (lo >= n) return;\n"
    "    long hi = lo + chunk < n ? lo + chunk : n;\n"
    "    sb_sacc a;\n"
    "    sb_sacc_init(&a);\n"
    "    sb_sacc_add_range(&a, x, lo, hi);\n"
    "    accs[c] = a;\n"
    "}\n"
    "\n"
    "__kernel void k_sacc_final(__global const sb_sacc *accs, long count,\n"
    "                           __global sb_sacc *total, __global float *out) {\n"
    "    if (get_global_id(0) != 0) return;\n"
    "    sb_sacc t;\n"
    "    sb_sacc_init(&t);\n"
    "    for (long k = 0; k < count; k++) {\n"
    "        sb_sacc c = accs[k];\n"
    "        sb_sacc_merge(&t, &c);\n"
    "    }\n"
    "    sb_sacc_normalize(&t);\n"
    "    total[0] = t;\n"
    "    out[0] = sb_sacc_round_f32(&t);\n"
    "}\n";

/* ---- small host helpers ------------------------------------------------- */

/* Prints "profile_core_cl: " and the formatted message to stderr. */
static void say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("profile_core_cl: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Monotonic wall time in seconds (for the timing line only). */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Copies src into dst (cap bytes), turning characters a card meta value may
 * not hold (control characters, '"', '\\') into '_' and truncating to fit
 * the card's 255-character limit. */
static void meta_clean(char *dst, size_t cap, const char *src) {
    size_t i = 0;
    if (cap > 256) cap = 256;
    for (; src[i] && i + 1 < cap; i++) {
        unsigned char c = (unsigned char)src[i];
        dst[i] = (c < 0x20 || c == '"' || c == '\\') ? '_' : (char)c;
    }
    dst[i] = '\0';
}

/* A malloc'ed copy of the string device info `param`, or NULL (error said). */
static char *device_string(cl_device_id dev, cl_device_info param) {
    size_t n = 0;
    if (clGetDeviceInfo(dev, param, 0, NULL, &n) != CL_SUCCESS) return NULL;
    char *s = malloc(n + 1);
    if (!s) return NULL;
    if (clGetDeviceInfo(dev, param, n, s, NULL) != CL_SUCCESS) {
        free(s);
        return NULL;
    }
    s[n] = '\0';
    return s;
}

/* A malloc'ed copy of the string platform info `param`, or NULL. */
static char *platform_string(cl_platform_id p, cl_platform_info param) {
    size_t n = 0;
    if (clGetPlatformInfo(p, param, 0, NULL, &n) != CL_SUCCESS) return NULL;
    char *s = malloc(n + 1);
    if (!s) return NULL;
    if (clGetPlatformInfo(p, param, n, s, NULL) != CL_SUCCESS) {
        free(s);
        return NULL;
    }
    s[n] = '\0';
    return s;
}

/* ---- device enumeration ------------------------------------------------- */

typedef struct cl_dev_entry {
    cl_platform_id platform;
    cl_device_id device;
} cl_dev_entry;

/* Lists the devices of every platform, platform by platform, into a malloc'ed
 * array (*out, *count). Returns 0, or EXIT_NO_DEVICE with a message when there
 * is no platform or no device at all, or EXIT_ERROR on an OpenCL error. */
static int enumerate_devices(cl_dev_entry **out, cl_uint *count) {
    cl_uint np = 0;
    *out = NULL;
    *count = 0;
    cl_int e = clGetPlatformIDs(0, NULL, &np);
    /* -1001 is CL_PLATFORM_NOT_FOUND_KHR (cl_ext.h): the ICD loader found no platform. */
    if (e == -1001 || np == 0) {
        say("SB_ERR_BACKEND_UNAVAILABLE: no OpenCL platform found (is an ICD such as "
            "pocl-opencl-icd installed? /etc/OpenCL/vendors lists them)");
        return EXIT_NO_DEVICE;
    }
    if (e != CL_SUCCESS) {
        say("clGetPlatformIDs failed: %d", (int)e);
        return EXIT_ERROR;
    }
    cl_platform_id *ps = malloc(sizeof(cl_platform_id) * np);
    if (!ps) return EXIT_ERROR;
    clGetPlatformIDs(np, ps, NULL);
    cl_uint total = 0;
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) == CL_SUCCESS) total += nd;
    }
    if (total == 0) {
        free(ps);
        say("SB_ERR_BACKEND_UNAVAILABLE: %u OpenCL platform(s) but no device", (unsigned)np);
        return EXIT_NO_DEVICE;
    }
    cl_dev_entry *list = malloc(sizeof(cl_dev_entry) * total);
    cl_device_id *ds = malloc(sizeof(cl_device_id) * total);
    if (!list || !ds) {
        free(ps);
        free(list);
        free(ds);
        return EXIT_ERROR;
    }
    cl_uint k = 0;
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, total - k, ds, &nd) != CL_SUCCESS) continue;
        for (cl_uint d = 0; d < nd && k < total; d++) {
            list[k].platform = ps[p];
            list[k].device = ds[d];
            k++;
        }
    }
    free(ps);
    free(ds);
    *out = list;
    *count = k;
    return 0;
}

/* ---- the profile's requirements on a device ----------------------------- */

/* Returns 0 if dev can meet the numeric profile; otherwise prints a named
 * refusal (SB_ERR_IDENTITY_REFUSED and the reason) and returns EXIT_REFUSED.
 * Checks: denormals kept, round to nearest, correctly rounded single divide
 * and sqrt (needed by -cl-fp32-correctly-rounded-divide-sqrt), 64-bit integers
 * (the rng and all integer math), OpenCL C 1.2 or later, host byte order. */
static int check_device(cl_device_id dev) {
    cl_device_fp_config fp = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL) != CL_SUCCESS) {
        say("clGetDeviceInfo(CL_DEVICE_SINGLE_FP_CONFIG) failed");
        return EXIT_ERROR;
    }
    if (!(fp & CL_FP_DENORM)) {
        say("SB_ERR_IDENTITY_REFUSED: no-denormals: the device flushes single-precision "
            "denormals (CL_FP_DENORM not in CL_DEVICE_SINGLE_FP_CONFIG); the profile keeps them");
        return EXIT_REFUSED;
    }
    if (!(fp & CL_FP_ROUND_TO_NEAREST)) {
        say("SB_ERR_IDENTITY_REFUSED: no-round-to-nearest: CL_FP_ROUND_TO_NEAREST missing");
        return EXIT_REFUSED;
    }
    if (!(fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT)) {
        say("SB_ERR_IDENTITY_REFUSED: no-correctly-rounded-divide-sqrt: "
            "CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT missing, so "
            "-cl-fp32-correctly-rounded-divide-sqrt cannot be honoured");
        return EXIT_REFUSED;
    }
    char *profile = device_string(dev, CL_DEVICE_PROFILE);
    char *ext = device_string(dev, CL_DEVICE_EXTENSIONS);
    char *cver = device_string(dev, CL_DEVICE_OPENCL_C_VERSION);
    int rc = 0;
    if (!profile || !ext || !cver) {
        say("clGetDeviceInfo(profile/extensions/OpenCL C version) failed");
        rc = EXIT_ERROR;
    } else if (strcmp(profile, "FULL_PROFILE") != 0 && !strstr(ext, "cles_khr_int64")) {
        say("SB_ERR_IDENTITY_REFUSED: no-int64: %s device without cles_khr_int64; the rng "
            "and the integer elementary functions need 64-bit integers", profile);
        rc = EXIT_REFUSED;
    } else {
        int major = 0, minor = 0;
        /* "OpenCL C <major>.<minor> <vendor-specific>" */
        if (sscanf(cver, "OpenCL C %d.%d", &major, &minor) != 2 || major * 10 + minor < 12) {
            say("SB_ERR_IDENTITY_REFUSED: no-opencl-c-1.2: device reports '%s'", cver);
            rc = EXIT_REFUSED;
        }
    }
    if (rc == 0) {
        cl_bool little = CL_FALSE;
        uint32_t probe = 1;
        unsigned char first;
        memcpy(&first, &probe, 1);
        clGetDeviceInfo(dev, CL_DEVICE_ENDIAN_LITTLE, sizeof little, &little, NULL);
        if ((little == CL_TRUE) != (first == 1)) {
            say("SB_ERR_IDENTITY_REFUSED: byte-order: device and host byte orders differ");
            rc = EXIT_REFUSED;
        }
    }
    free(profile);
    free(ext);
    free(cver);
    return rc;
}

/* Whether opts (extra build options) holds an option that breaks the profile;
 * used only to label the card as an arm and to warn. */
static int breaks_profile(const char *opts) {
    static const char *bad[] = {"-cl-mad-enable", "-cl-fast-relaxed-math", "-cl-unsafe-math-optimizations",
                                "-cl-finite-math-only", "-cl-no-signed-zeros", "-cl-denorms-are-zero"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (strstr(opts, bad[i])) return 1;
    return 0;
}

/* ---- running the fixture ------------------------------------------------ */

typedef struct cl_run {
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    cl_device_id dev;
} cl_run;

/* Returns the kernel `name` of the program, or NULL after saying why. */
static cl_kernel kernel(cl_run *r, const char *name) {
    cl_int e;
    cl_kernel k = clCreateKernel(r->prog, name, &e);
    if (e != CL_SUCCESS) {
        say("clCreateKernel(%s) failed: %d", name, (int)e);
        return NULL;
    }
    return k;
}

/* Sets kernel k's arguments from (size, pointer) pairs; returns CL_SUCCESS or
 * the first error. nargs pairs follow. */
static cl_int set_args(cl_kernel k, int nargs, ...) {
    va_list ap;
    va_start(ap, nargs);
    cl_int e = CL_SUCCESS;
    for (int i = 0; i < nargs && e == CL_SUCCESS; i++) {
        size_t sz = va_arg(ap, size_t);
        const void *p = va_arg(ap, const void *);
        e = clSetKernelArg(k, (cl_uint)i, sz, p);
    }
    va_end(ap);
    return e;
}

/* Enqueues kernel k over `items` work-items (padded up to GROUP_PAD, the
 * kernels guard the tail), waits for it, and releases k. Returns 0 or
 * EXIT_ERROR after saying which kernel failed. */
static int launch(cl_run *r, cl_kernel k, const char *name, size_t items) {
    size_t global = items <= 1 ? 1 : (items + GROUP_PAD - 1) / GROUP_PAD * GROUP_PAD;
    cl_int e = clEnqueueNDRangeKernel(r->q, k, 1, NULL, &global, NULL, 0, NULL, NULL);
    if (e == CL_SUCCESS) e = clFinish(r->q);
    clReleaseKernel(k);
    if (e != CL_SUCCESS) {
        say("kernel %s failed: %d", name, (int)e);
        return EXIT_ERROR;
    }
    return 0;
}

/* A device buffer of `bytes` bytes, or NULL after saying so. */
static cl_mem buffer(cl_run *r, size_t bytes) {
    cl_int e;
    cl_mem m = clCreateBuffer(r->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (e != CL_SUCCESS) {
        say("clCreateBuffer(%zu bytes) failed: %d", bytes, (int)e);
        return NULL;
    }
    return m;
}

/* Copies `bytes` bytes of buffer m into host memory dst (blocking). */
static int read_back(cl_run *r, cl_mem m, void *dst, size_t bytes) {
    cl_int e = clEnqueueReadBuffer(r->q, m, CL_TRUE, 0, bytes, dst, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
        say("clEnqueueReadBuffer failed: %d", (int)e);
        return EXIT_ERROR;
    }
    return 0;
}

/* Records one stage; returns 0 or EXIT_ERROR with the library's message. */
static int record(sb_card *card, const char *tag, sb_dtype dt, const void *data, uint64_t n) {
    sb_status st = sb_card_record(card, tag, dt, data, n);
    if (st != SB_OK) {
        say("recording %s: %s: %s", tag, sb_status_name(st), sb_last_error());
        return EXIT_ERROR;
    }
    return 0;
}

/* Runs the exact sum of the n floats in xs with chunks of `chunk` elements:
 * fills *out with the rounded sum and *total with the normalised accumulator.
 * Returns 0 or an exit code. */
static int exact_sum(cl_run *r, cl_mem xs, cl_long n, cl_long chunk, float *out, sb_sacc *total) {
    cl_long nchunks = (n + chunk - 1) / chunk;
    cl_mem accs = buffer(r, sizeof(sb_sacc) * (size_t)nchunks);
    cl_mem tot = buffer(r, sizeof(sb_sacc));
    cl_mem res = buffer(r, sizeof(float));
    int rc = EXIT_ERROR;
    cl_kernel k;
    if (!accs || !tot || !res) goto done;
    if (!(k = kernel(r, "k_sacc_chunks"))) goto done;
    if (set_args(k, 4, sizeof xs, &xs, sizeof n, &n, sizeof chunk, &chunk, sizeof accs, &accs) != CL_SUCCESS) {
        clReleaseKernel(k);
        say("clSetKernelArg(k_sacc_chunks) failed");
        goto done;
    }
    if ((rc = launch(r, k, "k_sacc_chunks", (size_t)nchunks)) != 0) goto done;
    rc = EXIT_ERROR;
    if (!(k = kernel(r, "k_sacc_final"))) goto done;
    if (set_args(k, 4, sizeof accs, &accs, sizeof nchunks, &nchunks, sizeof tot, &tot, sizeof res, &res) !=
        CL_SUCCESS) {
        clReleaseKernel(k);
        say("clSetKernelArg(k_sacc_final) failed");
        goto done;
    }
    if ((rc = launch(r, k, "k_sacc_final", 1)) != 0) goto done;
    if ((rc = read_back(r, res, out, sizeof(float))) != 0) goto done;
    rc = read_back(r, tot, total, sizeof(sb_sacc));
done:
    if (accs) clReleaseMemObject(accs);
    if (tot) clReleaseMemObject(tot);
    if (res) clReleaseMemObject(res);
    return rc;
}

/* Runs every stage of profile-core on the device of r and records them into
 * card in the CPU fixture's order. Returns 0, EXIT_SELFCHECK or EXIT_ERROR. */
static int run_fixture(cl_run *r, sb_card *card) {
    enum { B_WORDS, B_UNIT, B_OPEN, B_BELOW, B_X, B_Y, B_S, B_PART, B_SCRATCH, B_OUT, NBUF };
    size_t sizes[NBUF] = {
        sizeof(cl_uint) * 4 * SB_CORE_N_RNG, sizeof(float) * SB_CORE_N_RNG, sizeof(float) * SB_CORE_N_RNG,
        sizeof(cl_uint) * SB_CORE_N_RNG,     sizeof(float) * SB_CORE_N_MATH, sizeof(float) * SB_CORE_N_MATH,
        sizeof(float) * SB_CORE_N_SUM,       sizeof(float) * (size_t)sb_tree_nblocks(SB_CORE_N_SUM),
        sizeof(float) * (size_t)sb_tree_nblocks(SB_CORE_N_SUM), sizeof(float) * 2};
    cl_mem b[NBUF] = {0};
    int rc = EXIT_ERROR;
    uint32_t *words = malloc(sizes[B_WORDS]);
    float *host = malloc(sizeof(float) * SB_CORE_N_SUM);
    cl_kernel k;
    cl_uint n_rng = SB_CORE_N_RNG, n_math = SB_CORE_N_MATH, n_sum = SB_CORE_N_SUM;
    cl_long n_sum_l = SB_CORE_N_SUM, nleaves = sb_tree_nblocks(SB_CORE_N_SUM);
    if (!words || !host) {
        say("out of memory");
        goto done;
    }
    for (int i = 0; i < NBUF; i++)
        if (!(b[i] = buffer(r, sizes[i]))) goto done;

#define RUN(name, items, nargs, ...)                                                   \
    do {                                                                               \
        if (!(k = kernel(r, name))) goto done;                                         \
        if (set_args(k, nargs, __VA_ARGS__) != CL_SUCCESS) {                           \
            clReleaseKernel(k);                                                        \
            say("clSetKernelArg(%s) failed", name);                                    \
            goto done;                                                                 \
        }                                                                              \
        if ((rc = launch(r, k, name, items)) != 0) goto done;                          \
        rc = EXIT_ERROR;                                                               \
    } while (0)
#define ARG(v) sizeof(v), (const void *)&(v)
#define READ(buf, dst, bytes)                                                          \
    do {                                                                               \
        if (read_back(r, b[buf], dst, bytes) != 0) goto done;                          \
    } while (0)
#define RECORD(tag, dt, data, n)                                                       \
    do {                                                                               \
        if (record(card, tag, dt, data, n) != 0) goto done;                            \
    } while (0)

    /* The generator: raw blocks, then the exact mappings. */
    RUN("k_rng_words", SB_CORE_N_RNG, 2, ARG(b[B_WORDS]), ARG(n_rng));
    READ(B_WORDS, words, sizes[B_WORDS]);
    RECORD("rng.philox_words", SB_DTYPE_U32, words, 4 * SB_CORE_N_RNG);
    RUN("k_rng_maps", SB_CORE_N_RNG, 5, ARG(b[B_WORDS]), ARG(b[B_UNIT]), ARG(b[B_OPEN]), ARG(b[B_BELOW]),
        ARG(n_rng));
    READ(B_UNIT, host, sizes[B_UNIT]);
    RECORD("rng.unit_f32", SB_DTYPE_F32, host, SB_CORE_N_RNG);
    READ(B_OPEN, host, sizes[B_OPEN]);
    RECORD("rng.open_unit_f32", SB_DTYPE_F32, host, SB_CORE_N_RNG);
    READ(B_BELOW, words, sizes[B_BELOW]);
    RECORD("rng.below", SB_DTYPE_U32, words, SB_CORE_N_RNG);

    /* Elementary functions over pinned inputs. */
    RUN("k_math_input", SB_CORE_N_MATH, 2, ARG(b[B_X]), ARG(n_math));
    READ(B_X, host, sizes[B_X]);
    RECORD("math.input", SB_DTYPE_F32, host, SB_CORE_N_MATH);
    static const struct { const char *tag, *kernel; } fns[] = {
        {"math.exp", "k_exp"},     {"math.expm1", "k_expm1"}, {"math.log", "k_log"},
        {"math.log1p", "k_log1p"}, {"math.tanh", "k_tanh"},   {"math.sigmoid", "k_sigmoid"}};
    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
        RUN(fns[f].kernel, SB_CORE_N_MATH, 3, ARG(b[B_X]), ARG(b[B_Y]), ARG(n_math));
        READ(B_Y, host, sizes[B_Y]);
        RECORD(fns[f].tag, SB_DTYPE_F32, host, SB_CORE_N_MATH);
    }

    /* Reductions: the fixed tree (leaves in parallel, one tree) and exactly. */
    RUN("k_reduce_input", SB_CORE_N_SUM, 2, ARG(b[B_S]), ARG(n_sum));
    READ(B_S, host, sizes[B_S]);
    RECORD("reduce.input", SB_DTYPE_F32, host, SB_CORE_N_SUM);
    RUN("k_tree_leaves", (size_t)nleaves, 3, ARG(b[B_S]), ARG(n_sum_l), ARG(b[B_PART]));
    RUN("k_tree_combine", 1, 3, ARG(b[B_PART]), ARG(nleaves), ARG(b[B_OUT]));
    float tree[2];
    READ(B_OUT, &tree[0], sizeof(float));
    RUN("k_tree_serial", 1, 4, ARG(b[B_S]), ARG(n_sum_l), ARG(b[B_SCRATCH]), ARG(b[B_OUT]));
    READ(B_OUT, &tree[1], sizeof(float));
    if (memcmp(&tree[0], &tree[1], sizeof(float)) != 0) {
        say("self-check FAILED: parallel tree sum %a differs from the serial sb_tree_sum_f32 %a",
            (double)tree[0], (double)tree[1]);
        rc = EXIT_SELFCHECK;
        goto done;
    }
    RECORD("reduce.tree_sum", SB_DTYPE_F32, &tree[0], 1);
    float exact[2];
    sb_sacc acc[2];
    if ((rc = exact_sum(r, b[B_S], n_sum_l, EXACT_CHUNK, &exact[0], &acc[0])) != 0) goto done;
    if ((rc = exact_sum(r, b[B_S], n_sum_l, EXACT_CHUNK_CHECK, &exact[1], &acc[1])) != 0) goto done;
    rc = EXIT_ERROR;
    if (memcmp(&exact[0], &exact[1], sizeof(float)) != 0 || memcmp(acc[0].limb, acc[1].limb, sizeof acc[0].limb) != 0 ||
        acc[0].flags != acc[1].flags) {
        say("self-check FAILED: exact sums of chunkings %d and %d differ (%a, %a)", EXACT_CHUNK,
            EXACT_CHUNK_CHECK, (double)exact[0], (double)exact[1]);
        rc = EXIT_SELFCHECK;
        goto done;
    }
    RECORD("reduce.exact_sum", SB_DTYPE_F32, &exact[0], 1);
    rc = 0;
#undef RUN
#undef ARG
#undef READ
#undef RECORD
done:
    for (int i = 0; i < NBUF; i++)
        if (b[i]) clReleaseMemObject(b[i]);
    free(words);
    free(host);
    return rc;
}

/* Builds the program from k_kernel_source with the profile's options plus
 * `extra`; on failure prints the build log. Returns 0 or EXIT_ERROR. The
 * options actually used are written to opts (cap bytes). */
static int build_program(cl_run *r, const char *src_dir, const char *extra, char *opts, size_t cap) {
    if (strchr(src_dir, ' ') || strchr(src_dir, '"')) {
        say("the source directory '%s' contains a space or quote, which OpenCL build options "
            "cannot carry; pass --src with a path without them",
            src_dir);
        return EXIT_ERROR;
    }
    int n = snprintf(opts, cap, "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt -I %s%s%s", src_dir,
                     extra[0] ? " " : "", extra);
    if (n < 0 || (size_t)n >= cap) {
        say("build options too long");
        return EXIT_ERROR;
    }
    cl_int e;
    r->prog = clCreateProgramWithSource(r->ctx, 1, &k_kernel_source, NULL, &e);
    if (e != CL_SUCCESS) {
        say("clCreateProgramWithSource failed: %d", (int)e);
        return EXIT_ERROR;
    }
    e = clBuildProgram(r->prog, 1, &r->dev, opts, NULL, NULL);
    if (e != CL_SUCCESS) {
        size_t len = 0;
        clGetProgramBuildInfo(r->prog, r->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
        char *log = malloc(len + 1);
        if (log) {
            clGetProgramBuildInfo(r->prog, r->dev, CL_PROGRAM_BUILD_LOG, len, log, NULL);
            log[len] = '\0';
        }
        say("clBuildProgram failed (%d) with options '%s'; build log:\n%s", (int)e, opts, log ? log : "(none)");
        free(log);
        return EXIT_ERROR;
    }
    return 0;
}

/* Prints the usage text to f. */
static void usage(FILE *f) {
    fputs("usage: profile_core_cl --out CARD [--device N] [--build-options-extra STR]\n"
          "                       [--src DIR] [--list] [--print-source]\n"
          "Runs the profile-core fixture on an OpenCL device and writes its card.\n"
          "  --device N   device index over all platforms (see --list); env SAMEBITS_OPENCL_DEVICE\n"
          "  --build-options-extra STR  appended to the profile's build options (separating arms)\n"
          "  --src DIR    the repository's src/ directory; env SAMEBITS_SRC_DIR\n"
          "exit: 0 ok, 1 usage, 2 self-check failed, 3 error, 4 device refused, 5 no device\n",
          f);
}

/* Parses a non-negative device index; returns -1 if s is not one. */
static long parse_index(const char *s) {
    char *end;
    long v = strtol(s, &end, 10);
    return (*s && !*end && v >= 0) ? v : -1;
}

int main(int argc, char **argv) {
    const char *out = NULL, *extra = "", *src_dir = getenv("SAMEBITS_SRC_DIR");
    const char *dev_s = getenv("SAMEBITS_OPENCL_DEVICE");
    int list = 0;
    if (!src_dir || !*src_dir) src_dir = SB_CL_SRC_DIR;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--device") && i + 1 < argc) dev_s = argv[++i];
        else if (!strcmp(argv[i], "--build-options-extra") && i + 1 < argc) extra = argv[++i];
        else if (!strcmp(argv[i], "--src") && i + 1 < argc) src_dir = argv[++i];
        else if (!strcmp(argv[i], "--list")) list = 1;
        else if (!strcmp(argv[i], "--print-source")) {
            printf("// build options: -cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt -I %s\n%s", src_dir,
                   k_kernel_source);
            return 0;
        }
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!out && !list) {
        usage(stderr);
        return EXIT_USAGE;
    }
    long dev_index = 0;
    if (dev_s && *dev_s && (dev_index = parse_index(dev_s)) < 0) {
        say("invalid device index '%s' (--device or SAMEBITS_OPENCL_DEVICE)", dev_s);
        return EXIT_USAGE;
    }

    cl_dev_entry *devs;
    cl_uint ndev;
    int rc = enumerate_devices(&devs, &ndev);
    if (rc) return rc;
    if (list) {
        for (cl_uint i = 0; i < ndev; i++) {
            char *pn = platform_string(devs[i].platform, CL_PLATFORM_NAME);
            char *dn = device_string(devs[i].device, CL_DEVICE_NAME);
            printf("%u: %s / %s\n", (unsigned)i, pn ? pn : "?", dn ? dn : "?");
            free(pn);
            free(dn);
        }
        free(devs);
        return 0;
    }
    if ((cl_uint)dev_index >= ndev || dev_index > (long)UINT32_MAX) {
        say("SB_ERR_BACKEND_UNAVAILABLE: device %ld asked for, %u present (see --list)", dev_index,
            (unsigned)ndev);
        free(devs);
        return EXIT_NO_DEVICE;
    }
    cl_run r = {0};
    r.dev = devs[dev_index].device;
    cl_platform_id plat = devs[dev_index].platform;
    free(devs);

    char *pname = platform_string(plat, CL_PLATFORM_NAME);
    char *pver = platform_string(plat, CL_PLATFORM_VERSION);
    char *dname = device_string(r.dev, CL_DEVICE_NAME);
    char *dver = device_string(r.dev, CL_DEVICE_VERSION);
    char *drv = device_string(r.dev, CL_DRIVER_VERSION);
    sb_card *card = NULL;
    double t0 = now_s(), t_build = 0.0;
    char opts[4096], meta[512], clean[256];
    if (!pname || !pver || !dname || !dver || !drv) {
        say("could not query the platform or device names");
        rc = EXIT_ERROR;
        goto done;
    }
    if ((rc = check_device(r.dev)) != 0) goto done;
    if (extra[0] && breaks_profile(extra))
        say("note: extra build options '%s' break the profile: this is a separating arm, "
            "not an identity leg",
            extra);

    cl_int e;
    r.ctx = clCreateContext(NULL, 1, &r.dev, NULL, NULL, &e);
    if (e != CL_SUCCESS) {
        say("clCreateContext failed: %d", (int)e);
        rc = EXIT_ERROR;
        goto done;
    }
    r.q = clCreateCommandQueue(r.ctx, r.dev, 0, &e);
    if (e != CL_SUCCESS) {
        say("clCreateCommandQueue failed: %d", (int)e);
        rc = EXIT_ERROR;
        goto done;
    }
    if ((rc = build_program(&r, src_dir, extra, opts, sizeof opts)) != 0) goto done;
    t_build = now_s() - t0;

    sb_status st = sb_card_create(&card);
    snprintf(meta, sizeof meta, "opencl:%s/%s", pname, dname);
    if (st == SB_OK) st = sb_card_set_meta(card, "fixture", "profile-core");
    meta_clean(clean, sizeof clean, meta);
    if (st == SB_OK) st = sb_card_set_meta(card, "arch", clean);
    meta_clean(clean, sizeof clean, pver);
    if (st == SB_OK) st = sb_card_set_meta(card, "opencl.platform_version", clean);
    meta_clean(clean, sizeof clean, dver);
    if (st == SB_OK) st = sb_card_set_meta(card, "opencl.device_version", clean);
    meta_clean(clean, sizeof clean, drv);
    if (st == SB_OK) st = sb_card_set_meta(card, "opencl.driver", clean);
    meta_clean(clean, sizeof clean, opts);
    if (st == SB_OK) st = sb_card_set_meta(card, "opencl.build_options", clean);
    if (st == SB_OK && extra[0]) {
        meta_clean(clean, sizeof clean, extra);
        st = sb_card_set_meta(card, "opencl.arm", clean);
    }
    if (st != SB_OK) {
        say("card: %s: %s", sb_status_name(st), sb_last_error());
        rc = EXIT_ERROR;
        goto done;
    }
    if ((rc = run_fixture(&r, card)) != 0) goto done;
    if ((st = sb_card_save(card, out)) != SB_OK) {
        say("saving %s: %s: %s", out, sb_status_name(st), sb_last_error());
        rc = EXIT_ERROR;
        goto done;
    }
    fprintf(stderr, "profile_core_cl: %s / %s: card %s written (build %.2f s, total %.2f s)\n", pname, dname,
            out, t_build, now_s() - t0);
done:
    sb_card_free(card);
    if (r.prog) clReleaseProgram(r.prog);
    if (r.q) clReleaseCommandQueue(r.q);
    if (r.ctx) clReleaseContext(r.ctx);
    free(pname);
    free(pver);
    free(dname);
    free(dver);
    free(drv);
    return rc;
}
