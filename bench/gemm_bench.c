/*
 * gemm_bench.c: the identical matrix product's speed with the data resident on
 * the device (or in host memory for device=cpu), one JSON line per shape:
 *
 *   gemm_bench DEVICE REPS M N K [M N K ...]
 *
 * For each shape: A (m x k) and B (k x n) of float32 drawn from the counter rng
 * (uniform in [-1, 1)), uploaded once; one warm-up product, then REPS timed ones
 * (wall clock around the queued product and a finish: absolute time is what a
 * GPU user pays), reported as the median and best seconds and the TFLOP/s of
 * 2mnk / median; the SHA-256 of C's bytes, so runs on different devices can be
 * compared for identity; and the integer-product path taken (vendor or portable).
 * Built by `make bench-gemm` against the static library (internal interfaces).
 */
#include "core/internal.h"
#include "core/rng.h"
#include "device/device.h"
#include "linalg/linalg.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void fill(float *x, int64_t n, uint32_t purpose) {
    for (int64_t i = 0; i < n; i++) x[i] = 2.0f * sb_rng_unit_f32(0x62656e6368ull, purpose, (uint64_t)i) - 1.0f;
}

static void digest(const float *c, int64_t n, char hex[65]) {
    uint8_t d[32];
    sb_sha256(c, (size_t)n * 4, d);
    sb_hex(d, 32, hex);
}

static int run_shape(const char *devname, sb_device_kind kind, sb_device *d, int reps, int64_t m, int64_t n,
                     int64_t k) {
    float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
    float *c = malloc(sizeof(float) * (size_t)(m * n));
    double *t = malloc(sizeof(double) * (size_t)(reps > 0 ? reps : 1));
    if (!a || !b || !c || !t) {
        fprintf(stderr, "gemm_bench: out of memory\n");
        return 1;
    }
    fill(a, m * k, 1u);
    fill(b, k * n, 2u);
    const sb_gemm_shape s = {0, 0, m, n, k, k, n};
    sb_status st = SB_OK;
    const char *path = "host";
    if (kind == SB_DEVICE_CPU) {
        for (int r = -1; r < reps && st == SB_OK; r++) {
            const double t0 = now();
            st = sb_gemm_host(&s, a, b, c, n);
            if (r >= 0) t[r] = now() - t0;
        }
    } else {
        sb_dbuf da = {0}, db = {0}, dc = {0};
        sb_gemm_ws ws;
        memset(&ws, 0, sizeof ws);
        path = sb_device_igemm_path(d);
        if ((st = sb_device_alloc(d, &da, 4 * (size_t)(m * k), "a")) == SB_OK &&
            (st = sb_device_alloc(d, &db, 4 * (size_t)(k * n), "b")) == SB_OK &&
            (st = sb_device_alloc(d, &dc, 4 * (size_t)(m * n), "c")) == SB_OK &&
            (st = sb_device_write(d, &da, 0, a, 4 * (size_t)(m * k), "a")) == SB_OK &&
            (st = sb_device_write(d, &db, 0, b, 4 * (size_t)(k * n), "b")) == SB_OK) {
            for (int r = -1; r < reps && st == SB_OK; r++) {
                const double t0 = now();
                st = sb_gemm_on(d, &ws, &s, &da, &db, &dc);
                if (st == SB_OK) st = sb_device_finish(d);
                if (r >= 0) t[r] = now() - t0;
            }
            if (st == SB_OK) st = sb_device_read(d, &dc, 0, c, 4 * (size_t)(m * n), "c");
        }
        sb_gemm_ws_release(d, &ws);
        sb_device_release(d, &da);
        sb_device_release(d, &db);
        sb_device_release(d, &dc);
    }
    if (st != SB_OK) {
        printf("{\"device\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"error\": \"%s: %s\"}\n", devname,
               (long long)m, (long long)n, (long long)k, sb_status_name(st), sb_last_error());
        fflush(stdout);
        return 1;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    const double med = t[reps / 2], best = t[0], flop = 2.0 * (double)m * (double)n * (double)k;
    char hex[65];
    digest(c, m * n, hex);
    printf("{\"device\": \"%s\", \"path\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"reps\": %d, "
           "\"median_s\": %.6g, \"best_s\": %.6g, \"tflops\": %.4g, \"c_sha256\": \"%s\"}\n",
           devname, path, (long long)m, (long long)n, (long long)k, reps, med, best, flop / med * 1e-12, hex);
    fflush(stdout);
    free(a);
    free(b);
    free(c);
    free(t);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 6 || (argc - 3) % 3 != 0) {
        fprintf(stderr, "usage: gemm_bench DEVICE REPS M N K [M N K ...]\n");
        return 2;
    }
    sb_device_kind kind;
    if (sb_device_parse(argv[1], &kind) != SB_OK) {
        fprintf(stderr, "gemm_bench: %s\n", sb_last_error());
        return 2;
    }
    const int reps = atoi(argv[2]);
    sb_device *d = NULL;
    if (kind != SB_DEVICE_CPU && kind != SB_DEVICE_CPU_BATCHED) {
        if (sb_device_open(kind, SB_PROG_LINALG, &d) != SB_OK) {
            fprintf(stderr, "gemm_bench: %s\n", sb_last_error());
            return 2;
        }
    } else {
        kind = SB_DEVICE_CPU;
    }
    int rc = 0;
    for (int i = 3; i + 2 < argc; i += 3)
        rc |= run_shape(argv[1], kind, d, reps > 0 ? reps : 1, atoll(argv[i]), atoll(argv[i + 1]), atoll(argv[i + 2]));
    sb_device_close(d);
    return rc;
}
