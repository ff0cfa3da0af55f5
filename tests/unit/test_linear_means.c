/*
 * test_linear_means.c: the linear family's exact column means
 * (src/models/linear/linear.c). Unweighted data goes through exact double
 * sums where a chunk's column has a narrow exponent span, exponent buckets
 * otherwise (or all of it with SAMEBITS_LINEAR_MEANS_BUCKETS), weighted data
 * one superaccumulator add per value; with every weight 1 all are the same
 * exact sums, so the means must agree bit for bit on columns chosen to reach
 * every road: subnormals, -0 only, huge values whose sum overflows,
 * cancellation, spans on either side of the double road's bound, and more
 * rows than one chunk.
 */
#include "sb_test.h"
#include "models/linear/linear.h"
#include "math/sb_reduce.h"

#include <stdlib.h>
#include <string.h>

static uint64_t g_s = 7;
static uint32_t rnd32(void) {
    g_s = g_s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(g_s >> 32);
}

SB_TEST(test_linear_means_buckets_are_the_superaccumulator) {
    const int64_t ns[] = {1, 3, 8191, 8193, 40000};
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        const int64_t n = ns[t];
        const int32_t p = 21;
        float *x = malloc(sizeof(float) * (size_t)(n * p)), *w = malloc(sizeof(float) * (size_t)n);
        for (int64_t i = 0; i < n; i++) {
            w[i] = 1.0f;
            for (int32_t c = 0; c < p; c++) {
                uint32_t u = rnd32();
                switch (c) {
                case 0: u &= 0x807fffffu; break;                      /* subnormals and zeros */
                case 1: u = 0x80000000u; break;                       /* -0 only */
                case 2: u = (u & 0x807fffffu) | (254u << 23); break;  /* huge: the sum overflows */
                case 3: u = (i & 1) ? 0x3f800000u : 0xbf800000u; break; /* 1, -1: cancels */
                case 8: u = (u & 0x807fffffu) | (130u << 23); break;  /* one exponent: last bits count */
                case 9: u = (u & 0x807fffffu) | ((120u + (u >> 24) % 8u) << 23); break; /* narrow */
                case 10: u = (u & 0x807fffffu) | ((i % 3 ? 100u : 115u) << 23); break; /* span 15: the bound */
                case 11: u = (u & 0x807fffffu) | ((i % 3 ? 100u : 116u) << 23); break; /* span 16: past it */
                case 12: u = (u & 0x7fffffu) | ((i % 2 ? 1u : 0u) << 23); break;       /* subnormal, narrow */
                case 13: u = (u & 0x007fffffu) | (200u << 23); break;                  /* large positives */
                case 14: u = (i % 5) ? 0u : (u & 0x807fffffu) | (127u << 23); break;   /* mostly +0 */
                /* 1 + 2^-24 + 2^-80: just above a float32 tie, which a double sum (53 bits) would
                 * round to the tie, then to even; the span sends it to the buckets */
                case 15: u = i == 0 ? 0x3f800000u : i == 1 ? (103u << 23) : i == 2 ? (47u << 23) : 0u; break;
                default: u = (u & 0x80ffffffu) | ((100u + (u >> 24) % 60u) << 23); break; /* spread */
                }
                memcpy(&x[i * p + c], &u, 4);
            }
        }
        float m1[21], m2[21], m3[21];
        SB_CHECK(sb_lin_col_means(x, n, p, NULL, m1) == SB_OK);
        SB_CHECK(sb_lin_col_means(x, n, p, w, m2) == SB_OK);
        setenv("SAMEBITS_LINEAR_MEANS_BUCKETS", "1", 1);
        SB_CHECK(sb_lin_col_means(x, n, p, NULL, m3) == SB_OK);
        unsetenv("SAMEBITS_LINEAR_MEANS_BUCKETS");
        for (int32_t c = 0; c < p; c++) SB_CHECK_EQ_U64(sb_f2u(m1[c]), sb_f2u(m2[c]));
        for (int32_t c = 0; c < p; c++) SB_CHECK_EQ_U64(sb_f2u(m3[c]), sb_f2u(m2[c]));
        free(x);
        free(w);
    }
}

/* The parallel exact sums of the linear family (sb_lin_col_sqdev,
 * sb_lin_dot_exact past one chunk) against one superaccumulator fed in row
 * order on one thread, at one and at two threads, on values whose float sums
 * would depend on the order (spread exponents, cancellation, subnormals): the
 * chunks' totals are merged exactly, so every thread count and chunking gives
 * the serial total's bits. */
SB_TEST(test_linear_parallel_exact_sums_are_the_serial_sum) {
    const int64_t n = 3 * 65536 + 17; /* more than one chunk of either grain */
    const int32_t p = 3;
    float *x = malloc(sizeof(float) * (size_t)(n * p)), *y = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n * p; i++) {
        uint32_t u = rnd32();
        u = (u & 0x80ffffffu) | ((i % 7 == 0 ? 1u : 90u + (u >> 24) % 70u) << 23);
        memcpy(&x[i], &u, 4);
    }
    for (int64_t i = 0; i < n; i++) y[i] = (i & 1) ? x[i] : -x[i] * 0.5f;
    const float mean[3] = {0.25f, -3.0f, 1e-20f};
    float ref[3], dref;
    for (int32_t c = 0; c < p; c++) {
        sb_sacc acc;
        sb_sacc_init(&acc);
        for (int64_t i = 0; i < n; i++) {
            const float d = x[i * p + c] - mean[c];
            sb_lin_sacc_add_product(&acc, d, d);
        }
        ref[c] = sb_sacc_round_f32(&acc);
    }
    {
        sb_sacc acc;
        sb_sacc_init(&acc);
        for (int64_t i = 0; i < n; i++) sb_lin_sacc_add_product(&acc, x[i], y[i]);
        dref = sb_sacc_round_f32(&acc);
    }
    for (int32_t threads = 1; threads <= 2; threads++) {
        SB_CHECK(sb_set_num_threads(threads) == SB_OK);
        float out[3];
        SB_CHECK(sb_lin_col_sqdev(x, n, p, mean, out) == SB_OK);
        for (int32_t c = 0; c < p; c++) SB_CHECK_EQ_U64(sb_f2u(out[c]), sb_f2u(ref[c]));
        SB_CHECK_EQ_U64(sb_f2u(sb_lin_dot_exact(x, 1, y, 1, n)), sb_f2u(dref));
    }
    SB_CHECK(sb_set_num_threads(0) == SB_OK);
    free(x);
    free(y);
}
