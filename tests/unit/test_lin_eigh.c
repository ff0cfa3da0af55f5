/*
 * test_lin_eigh.c: the linear family's wide eigensolver (src/models/linear/
 * lin_eigh.c) gives the same bits with every lane width this machine runs
 * (lin_eigh_lanes.h: plain 4-float vectors, AVX2, AVX-512F; capped by
 * SAMEBITS_EIGH_LANES) and at 1, 2 and 7 threads, on sizes off every vector
 * and task width, including a matrix with a zero block (skipped reflectors)
 * and repeated eigenvalues; and that what it returns is an eigendecomposition
 * (residual and orthogonality within float32 bounds), so the comparison is of
 * a working solver.
 *
 * The device road (sb_lin_eigh_on: Q and the QL rotations as device kernels)
 * against the host's bytes, on every device this build has and this machine
 * offers: cpu-batched (the kernel bodies on the host), opencl, cuda. An absent
 * backend is "skipped", printed; naming it in SAMEBITS_PARITY_REQUIRE makes
 * its absence a failure. SAMEBITS_EIGH_BIG=1 adds n = 1024.
 */
#include "sb_test.h"
#include "models/linear/linear.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_e = 11;
static float rndf(void) {
    g_e = g_e * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(g_e >> 11) * 0x1p-53 * 2.0 - 1.0);
}

/* A symmetric n x n matrix: B^T B of a random B (positive semidefinite, as a
 * covariance), with kind 1 zeroing a trailing block and kind 2 repeating
 * eigenvalues (a diagonal of pairs). */
static float *sym(int64_t n, int kind) {
    float *b = malloc(sizeof(float) * (size_t)(n * n)), *a = malloc(sizeof(float) * (size_t)(n * n));
    for (int64_t i = 0; i < n * n; i++) b[i] = rndf();
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j <= i; j++) {
            double s = 0.0;
            for (int64_t k = 0; k < n; k++) s += (double)b[k * n + i] * b[k * n + j];
            float v = (float)(s / (double)n);
            if (kind == 1 && (i >= n / 2 || j >= n / 2)) v = i == j ? 0.5f : 0.0f;
            if (kind == 2) v = i == j ? (float)(1 + i / 2) : 0.0f;
            a[i * n + j] = a[j * n + i] = v;
        }
    free(b);
    return a;
}

SB_TEST(test_lin_eigh_lanes_and_threads_agree) {
    static const char *const lanes[] = {"gen", "avx2", NULL};
    const int64_t sizes[] = {300, 257, 333};
    /* the lane widths differ only on x86-64; elsewhere one size and the thread
     * counts (each eigendecomposition is slow under qemu) */
#if defined(__x86_64__)
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    const int nlanes = 3;
#else
    const size_t nsizes = 1;
    const int nlanes = 1;
#endif
    for (size_t si = 0; si < nsizes; si++)
        for (int kind = 0; kind < 3; kind++) {
            const int64_t n = sizes[si];
            float *a = sym(n, kind);
            float *w0 = malloc(sizeof(float) * (size_t)n), *v0 = malloc(sizeof(float) * (size_t)(n * n));
            float *w1 = malloc(sizeof(float) * (size_t)n), *v1 = malloc(sizeof(float) * (size_t)(n * n));
            SB_CHECK(sb_set_num_threads(1) == SB_OK);
            setenv("SAMEBITS_EIGH_LANES", "gen", 1);
            SB_CHECK(sb_lin_eigh(n, a, w0, v0) == SB_OK);
            for (int li = 0; li < nlanes; li++)
                for (int threads = 1; threads <= 7; threads += 3) {
                    if (lanes[li]) setenv("SAMEBITS_EIGH_LANES", lanes[li], 1);
                    else unsetenv("SAMEBITS_EIGH_LANES");
                    SB_CHECK(sb_set_num_threads(threads) == SB_OK);
                    SB_CHECK(sb_lin_eigh(n, a, w1, v1) == SB_OK);
                    SB_CHECK(memcmp(w0, w1, sizeof(float) * (size_t)n) == 0);
                    SB_CHECK(memcmp(v0, v1, sizeof(float) * (size_t)(n * n)) == 0);
                }
            unsetenv("SAMEBITS_EIGH_LANES");
            /* A v = v diag(w), V^T V = I, within float32 bounds */
            double scale = 0.0, res = 0.0, orth = 0.0;
            for (int64_t i = 0; i < n; i++) scale = fabs(w0[i]) > scale ? fabs(w0[i]) : scale;
            for (int64_t c = 0; c < n; c += 37)
                for (int64_t i = 0; i < n; i++) {
                    double s = 0.0;
                    for (int64_t k = 0; k < n; k++) s += (double)a[i * n + k] * v0[k * n + c];
                    const double r = fabs(s - (double)w0[c] * v0[i * n + c]);
                    res = r > res ? r : res;
                }
            for (int64_t c = 0; c < n; c += 41)
                for (int64_t d = 0; d < n; d += 43) {
                    double s = 0.0;
                    for (int64_t k = 0; k < n; k++) s += (double)v0[k * n + c] * v0[k * n + d];
                    const double r = fabs(s - (c == d ? 1.0 : 0.0));
                    orth = r > orth ? r : orth;
                }
            SB_CHECK(res <= 1e-3 * (scale > 0.0 ? scale : 1.0));
            SB_CHECK(orth <= 1e-3);
            free(a);
            free(w0);
            free(v0);
            free(w1);
            free(v1);
        }
    SB_CHECK(sb_set_num_threads(0) == SB_OK);
}

SB_TEST(test_lin_eigh_device_roads_agree) {
    static const char *const devs[] = {"cpu-batched", "opencl", "cuda"};
    const char *big = getenv("SAMEBITS_EIGH_BIG");
    const int64_t sizes[] = {3, 17, 64, 300, 1024};
    const size_t nsizes = big && !strcmp(big, "1") ? 5 : 4;
    const char *req = getenv("SAMEBITS_PARITY_REQUIRE");
    for (size_t di = 0; di < sizeof devs / sizeof devs[0]; di++) {
        int ran = 0, skipped = 0;
        for (size_t si = 0; si < nsizes && !skipped; si++)
            for (int kind = 0; kind < 3 && !skipped; kind++) {
                const int64_t n = sizes[si];
                float *a = sym(n, kind);
                float *w0 = malloc(sizeof(float) * (size_t)n), *v0 = malloc(sizeof(float) * (size_t)(n * n));
                float *w1 = malloc(sizeof(float) * (size_t)n), *v1 = malloc(sizeof(float) * (size_t)(n * n));
                SB_CHECK(sb_lin_eigh(n, a, w0, v0) == SB_OK);
                memset(w1, 0xA5, sizeof(float) * (size_t)n);
                memset(v1, 0xA5, sizeof(float) * (size_t)(n * n));
                const sb_status st = sb_lin_eigh_on(devs[di], n, a, w1, v1);
                if (st == SB_ERR_BACKEND_UNAVAILABLE) {
                    printf("  eigh device road %-11s: skipped (%s)%s\n", devs[di], sb_last_error(),
                           req && strstr(req, devs[di]) ? ": REQUIRED" : "");
                    SB_CHECK(!(req && strstr(req, devs[di])));
                    sb_clear_error();
                    skipped = 1;
                } else {
                    SB_CHECK(st == SB_OK);
                    const int same = memcmp(w0, w1, sizeof(float) * (size_t)n) == 0 &&
                                     memcmp(v0, v1, sizeof(float) * (size_t)(n * n)) == 0;
                    if (!same) {
                        int64_t at = 0;
                        while (at < n * n && !memcmp(v0 + at, v1 + at, 4)) at++;
                        printf("  eigh device road %-11s n=%lld kind=%d: DIFFERS (first vector element %lld: %a vs %a)\n",
                               devs[di], (long long)n, kind, (long long)at, at < n * n ? v0[at] : 0.0f,
                               at < n * n ? v1[at] : 0.0f);
                    }
                    SB_CHECK(same);
                    ran++;
                }
                free(a);
                free(w0);
                free(v0);
                free(w1);
                free(v1);
            }
        if (ran) printf("  eigh device road %-11s: %d matrices identical to the host's\n", devs[di], ran);
    }
}
