/* test_kernels.c: device-neutral bodies (quantization, linear) and the CPU
 * backend's reductions against their serial definitions. */
#include "sb_test.h"
#include "backends/cpu/cpu.h"
#include "core/rng.h"
#include "kernels/quantize.h"
#include "math/sb_math.h"
#include <stdlib.h>

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
