/* test_kernels.c: device-neutral bodies (quantization, linear) and the CPU
 * backend's reductions against their serial definitions. */
#include "sb_test.h"
#include "backends/cpu/cpu.h"
#include "core/rng.h"
#include "kernels/quantize.h"
#include "math/sb_math.h"
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

SB_TEST(test_kernels_round_half_even) {
    SB_CHECK(sb_round_half_even_i32(0.5f) == 0);
    SB_CHECK(sb_round_half_even_i32(1.5f) == 2);
    SB_CHECK(sb_round_half_even_i32(2.5f) == 2);
    SB_CHECK(sb_round_half_even_i32(-0.5f) == 0);
    SB_CHECK(sb_round_half_even_i32(-1.5f) == -2);
    SB_CHECK(sb_round_half_even_i32(-2.5f) == -2);
    SB_CHECK(sb_round_half_even_i32(2.4999998f) == 2);
    SB_CHECK(sb_round_half_even_i32(-7.75f) == -8);
    SB_CHECK(sb_round_half_even_i32(0x1.fffffep29f) == 1073741760);
    SB_CHECK(sb_round_half_even_i32(-0.0f) == 0);
}

/* The conversion is total: every float has one stated integer, the same on
 * every backend (the GPUs compile this very function), never C's undefined
 * out-of-range conversion. Fails before the fix: +inf and 2^31 went through
 * (int32_t) of an out-of-range float (INT_MIN on x86-64, INT_MAX elsewhere;
 * UBSan reports it). */
static float f_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

SB_TEST(test_kernels_round_half_even_edges) {
    const float two31 = 2147483648.0f, below = f_of(0x4EFFFFFFu); /* 2^31 - 128 */
    SB_CHECK(sb_round_half_even_i32(below) == 2147483520);
    SB_CHECK(sb_round_half_even_i32(-below) == -2147483520);
    SB_CHECK(sb_round_half_even_i32(two31) == INT32_MAX);                 /* saturated */
    SB_CHECK(sb_round_half_even_i32(-two31) == INT32_MIN);                /* exact */
    SB_CHECK(sb_round_half_even_i32(f_of(0x4F000001u)) == INT32_MAX);     /* above 2^31 */
    SB_CHECK(sb_round_half_even_i32(f_of(0xCF000001u)) == INT32_MIN);
    SB_CHECK(sb_round_half_even_i32(FLT_MAX) == INT32_MAX);
    SB_CHECK(sb_round_half_even_i32(-FLT_MAX) == INT32_MIN);
    SB_CHECK(sb_round_half_even_i32(INFINITY) == INT32_MAX);
    SB_CHECK(sb_round_half_even_i32(-INFINITY) == INT32_MIN);
    SB_CHECK(sb_round_half_even_i32(f_of(0x7FC00000u)) == 0); /* NaNs of either sign and any payload */
    SB_CHECK(sb_round_half_even_i32(f_of(0xFFC00000u)) == 0);
    SB_CHECK(sb_round_half_even_i32(f_of(0x7F800001u)) == 0);
    SB_CHECK(sb_round_half_even_i32(f_of(0xFFFFFFFFu)) == 0);
    SB_CHECK(sb_round_half_even_i32(-0.0f) == 0 && sb_round_half_even_i32(0.0f) == 0);
    SB_CHECK(sb_round_half_even_i32(f_of(1u)) == 0 && sb_round_half_even_i32(f_of(0x80000001u)) == 0);
    SB_CHECK(sb_round_half_even_i32(8388607.5f) == 8388608 && sb_round_half_even_i32(-8388609.0f) == -8388609);
    /* every float from 2^30 up to the last below 2^31 is an integer, kept exactly */
    for (uint32_t u = 0x4E800000u; u < 0x4F000000u; u += 4099u) {
        SB_CHECK(sb_round_half_even_i32(f_of(u)) == (int32_t)f_of(u));
        SB_CHECK(sb_round_half_even_i32(f_of(u | 0x80000000u)) == -(int32_t)f_of(u));
    }
}

/* The max keys: finite values keep their magnitude order; every non-finite
 * value keys above every finite one, so a maximum exposes it. */
SB_TEST(test_kernels_maxkeys_expose_non_finite) {
    SB_CHECK(sb_k_maxkey_abs(-3.0f) == sb_k_maxkey_abs(3.0f) && sb_k_maxkey_abs(-0.0f) == 0u);
    SB_CHECK(sb_k_maxkey_abs(2.0f) > sb_k_maxkey_abs(-1.5f));
    SB_CHECK(sb_k_key_finite(sb_k_maxkey_abs(FLT_MAX)) && sb_k_key_finite(sb_k_maxkey_abs(-FLT_MAX)));
    SB_CHECK(!sb_k_key_finite(sb_k_maxkey_abs(-INFINITY)) && !sb_k_key_finite(sb_k_maxkey_abs(f_of(0xFFC00000u))));
    SB_CHECK(sb_k_maxkey_abs(f_of(0xFFC00000u)) > sb_k_maxkey_abs(INFINITY));
    SB_CHECK(sb_k_maxkey_pos(2.0f) == 0x40000000u && sb_k_maxkey_pos(-2.0f) == 0u && sb_k_maxkey_pos(-0.0f) == 0u);
    SB_CHECK(!sb_k_key_finite(sb_k_maxkey_pos(-INFINITY)) && !sb_k_key_finite(sb_k_maxkey_pos(INFINITY)));
    SB_CHECK(!sb_k_key_finite(sb_k_maxkey_pos(f_of(0xFFC00000u))) && !sb_k_key_finite(sb_k_maxkey_pos(f_of(0x7FC00001u))));
    SB_CHECK(sb_k_key_finite(sb_k_maxkey_pos(FLT_MAX)) && sb_k_maxkey_pos(FLT_MAX) == 0x7F7FFFFFu);
}

SB_TEST(test_kernels_quantize_exponent) {
    /* maxabs * 2^e <= levels < maxabs * 2^(e+1) */
    SB_CHECK(sb_quantize_exponent(1.0f, 32768.0f) == 15);
    SB_CHECK(sb_quantize_exponent(0.75f, 32768.0f) == 15);
    SB_CHECK(sb_quantize_exponent(1.5f, 32768.0f) == 14);
    SB_CHECK(sb_quantize_exponent(65536.0f, 32768.0f) == -1);
    SB_CHECK(sb_quantize_exponent(1e-45f, 1.0f) == 127); /* clamped */
    SB_CHECK(sb_pow2f(0) == 1.0f && sb_pow2f(-3) == 0.125f && sb_pow2f(127) == 0x1.0p127f);
    SB_CHECK(sb_pow2f(-126) == 0x1.0p-126f);
}

/* The parallel sums must equal the serial definitions bit for bit, for
 * lengths around the leaf and task boundaries and for any thread count. */
SB_TEST(test_kernels_cpu_sums_match_serial) {
    const int64_t lens[] = {0, 1, 255, 256, 257, 16383, 16384, 16385, 100003};
    float *x = malloc(sizeof(float) * 100003);
    float *scratch = malloc(sizeof(float) * 100003);
    for (int64_t i = 0; i < 100003; i++)
        x[i] = (sb_rng_unit_f32(11, 1, (uint64_t)i) - 0.5f) * sb_pow2f((int32_t)(i % 31) - 15);
    const int32_t threads[] = {1, 2, 7};
    for (size_t t = 0; t < 3; t++) {
        sb_set_num_threads(threads[t]);
        for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
            int64_t n = lens[k];
            float got = -1.0f, exact = -1.0f;
            SB_CHECK(sb_cpu_sum_f32(x, n, &got) == SB_OK);
            float want = n ? sb_tree_sum_f32(x, n, scratch) : 0.0f;
            SB_CHECK_EQ_U64(sb_f2u(got), sb_f2u(want));
            SB_CHECK(sb_cpu_exact_sum_f32(x, n, &exact) == SB_OK);
            sb_sacc acc;
            sb_sacc_init(&acc);
            for (int64_t i = n - 1; i >= 0; i--) sb_sacc_add(&acc, x[i]);
            SB_CHECK_EQ_U64(sb_f2u(exact), sb_f2u(sb_sacc_round_f32(&acc)));
        }
    }
    sb_set_num_threads(0);
    free(x);
    free(scratch);
}

SB_TEST(test_kernels_weighted_colsum_matches_serial) {
    enum { R = 5000, F = 3 };
    float *x = malloc(sizeof(float) * R * F), *g = malloc(sizeof(float) * R);
    float *col = malloc(sizeof(float) * R), *scratch = malloc(sizeof(float) * R);
    for (int i = 0; i < R * F; i++) x[i] = sb_rng_unit_f32(5, 2, (uint64_t)i) - 0.5f;
    for (int r = 0; r < R; r++) g[r] = sb_rng_unit_f32(5, 3, (uint64_t)r) - 0.5f;
    float out[F];
    sb_set_num_threads(3);
    SB_CHECK(sb_cpu_weighted_colsum_f32(x, R, F, g, out) == SB_OK);
    sb_set_num_threads(0);
    for (int f = 0; f < F; f++) {
        for (int r = 0; r < R; r++) col[r] = x[r * F + f] * g[r];
        SB_CHECK_EQ_U64(sb_f2u(out[f]), sb_f2u(sb_tree_sum_f32(col, R, scratch)));
    }
    free(x);
    free(g);
    free(col);
    free(scratch);
}
