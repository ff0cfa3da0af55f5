/*
 * build_info.c: version strings and build facts for `samebits doctor`: the
 * compiler's treatment of this build (probes) and the device layer's backends.
 * The contraction probe is compiled with the library's own flags, so it reports
 * what the compiler actually did to this build, not what the Makefile intended.
 */
#include "device.h"
#include <stdio.h>
#include <string.h>

#ifndef SB_BUILD_CC
#define SB_BUILD_CC "unknown"
#endif
#ifndef SB_BUILD_CFLAGS
#define SB_BUILD_CFLAGS "unknown"
#endif
#ifndef SB_BUILD_TARGET
#define SB_BUILD_TARGET "unknown"
#endif
#ifndef SB_SABOTAGE
#define SB_SABOTAGE "none"
#endif

const char *sb_version(void) { return SB_VERSION_STRING; }
const char *sb_profile_version(void) { return SB_PROFILE_VERSION; }

/* a*b+c with a = b = 1+2^-12, c = -(1+2^-11): rounded separately the product is
 * 1+2^-11 (the 2^-24 term is a tie to even) and the result 0; fused it is 2^-24. */
static float contraction_probe(void) {
    volatile float a = 1.0f + 0x1.0p-12f, b = 1.0f + 0x1.0p-12f, c = -(1.0f + 0x1.0p-11f);
    float x = a, y = b, z = c;
    return x * y + z;
}

/* Zero if float expressions are evaluated in float: 1 + 2^-25 rounds to 1 in
 * float, so (a + b) - a is 0; in double it is 2^-25. */
static float excess_precision_probe(void) {
    volatile float a = 1.0f, b = 0x1.0p-25f;
    return (a + b) - a;
}

/* Nonzero if a denormal result survives (no flush-to-zero / denormals-are-zero). */
static int denormals_kept(void) {
    volatile float tiny = 0x1.0p-126f, half = 0.5f;
    float r = tiny * half;
    volatile float back = r;
    return back != 0.0f && back * 2.0f == tiny;
}

static const char *host_arch(void) {
#if defined(__x86_64__)
    return "x86_64";
#elif defined(__aarch64__)
    return "aarch64";
#elif defined(__s390x__)
    return "s390x";
#elif defined(__powerpc64__)
    return "ppc64";
#elif defined(__riscv)
    return "riscv64";
#else
    return "unknown";
#endif
}

sb_status sb_build_info(char *buf, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!buf && cap) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_build_info: NULL buffer");
    char tmp[4096], cuda[1024];
    float probe = contraction_probe();
    sb_device_describe(SB_DEVICE_CUDA, cuda, sizeof cuda);
    /* Cheap on purpose (fixture runs read the arch from here): the devices
     * are listed by sb_device_info("opencl"), which opens the OpenCL loader. */
    const char *opencl = sb_device_built(SB_DEVICE_OPENCL) ? "built (the OpenCL loader is opened at run time; samebits doctor lists the devices)"
                                              : "not built (this build has no OpenCL backend)";
    int n = snprintf(tmp, sizeof tmp,
                     "version: %s\n"
                     "profile: %s\n"
                     "arch: %s\n"
                     "endianness: %s\n"
                     "compiler: %s\n"
                     "target: %s\n"
                     "cflags: %s\n"
                     "contraction: %s\n"
                     "excess precision: %s\n"
                     "denormals: %s\n"
                     "backends: cpu, cpu-batched%s%s\n"
                     "cuda: %s\n"
                     "opencl: %s\n"
                     "sabotage: %s\n",
                     SB_VERSION_STRING, SB_PROFILE_VERSION, host_arch(),
                     sb_host_is_big_endian() ? "big" : "little", SB_BUILD_CC, SB_BUILD_TARGET,
                     SB_BUILD_CFLAGS,
                     probe == 0.0f ? "off (probe: a*b+c rounded twice)" : "ON (probe: a*b+c fused)",
                     excess_precision_probe() == 0.0f ? "none (probe: float expressions in float)"
                                                      : "PRESENT (probe: float expressions wider than float)",
                     denormals_kept() ? "kept (no FTZ/DAZ)" : "FLUSHED (FTZ/DAZ on)",
                     sb_device_built(SB_DEVICE_CUDA) ? ", cuda" : "", sb_device_built(SB_DEVICE_OPENCL) ? ", opencl" : "", cuda, opencl,
                     SB_SABOTAGE);
    size_t need = (size_t)(n > 0 ? n : 0) + 1;
    if (needed) *needed = need;
    if (cap) {
        snprintf(buf, cap, "%s", tmp);
        if (cap < need) return sb_fail(SB_ERR_LIMIT, "sb_build_info: buffer holds %zu bytes, %zu needed", cap, need);
    }
    return SB_OK;
}

sb_status sb_device_info(const char *device, char *buf, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!device || (!buf && cap)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_device_info: NULL argument");
    char tmp[8192];
    if (!strcmp(device, "opencl"))
        sb_device_describe(SB_DEVICE_OPENCL, tmp, sizeof tmp);
    else if (!strcmp(device, "cuda"))
        sb_device_describe(SB_DEVICE_CUDA, tmp, sizeof tmp);
    else
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_device_info: unknown device '%s' (cuda, opencl)", device);
    size_t need = strlen(tmp) + 1;
    if (needed) *needed = need;
    if (cap) {
        snprintf(buf, cap, "%s", tmp);
        if (cap < need) return sb_fail(SB_ERR_LIMIT, "sb_device_info: buffer holds %zu bytes, %zu needed", cap, need);
    }
    return SB_OK;
}
