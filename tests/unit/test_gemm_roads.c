/*
 * test_gemm_roads.c: the host's two roads to the identical product's exact
 * totals (src/linalg/gemm.c's digit planes, src/linalg/gemm_direct.c's 128-bit
 * sums) give the same bits on shapes and values chosen to reach every branch
 * of the direct road: both of its regimes, the symmetric Gram, K long enough
 * for many ranges, rounding ties and near-ties far below the 53-bit cut,
 * results that underflow to subnormals or overflow, and nonfinite inputs.
 * (tests/python/test_py_linalg.py checks both against an exact reference.)
 */
#include "sb_test.h"
#include "linalg/linalg.h"
#include "kernels/linalg.h"

#include <stdlib.h>
#include <string.h>

static uint64_t g_rng;
static uint64_t rnd(void) { /* splitmix64 */
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A float of kind: 0 normal-ish, 1 few significant bits (ties), 2 tiny
 * (subnormal products), 3 huge (overflowing sums), 4 with specials: spreads
 * within a few bits, so the operand keeps four digits; 5 and 6 exponents
 * over 30 and 60 bits (five to eight digits: the direct road's wide side). */
static float value(int kind) {
    const uint64_t r = rnd();
    const float sign = (r & 1) ? -1.0f : 1.0f;
    const int e = (int)((r >> 1) % 6);
    float v;
    switch (kind) {
    case 1: v = (float)(1 + ((r >> 8) % 8)) * (float)(1u << e) * (1.0f / 8.0f); break;
    case 2: v = sb_u2f((uint32_t)(((r >> 8) % 3 + 1) << 23) | (uint32_t)((r >> 16) & 0x7fffff)); break;
    case 3: v = sb_u2f((uint32_t)((250u + e) << 23) | (uint32_t)((r >> 16) & 0x7fffff)); break;
    case 5:
    case 6: {
        const uint32_t ex = 100u + (uint32_t)((r >> 40) % (kind == 5 ? 30u : 60u));
        v = sb_u2f((ex << 23) | (uint32_t)((r >> 16) & 0x7fffff));
        break;
    }
    default: v = sb_u2f((uint32_t)((124u + e) << 23) | (uint32_t)((r >> 16) & 0x7fffff)); break;
    }
    if (kind == 4 && (r >> 40) % 97 == 0) {
        const float sp[3] = {1.0f / 0.0f, -1.0f / 0.0f, 0.0f / 0.0f};
        return sp[(r >> 50) % 3];
    }
    if ((r >> 60) == 0) return 0.0f;
    return sign * v;
}

static int same_on_both_roads(const sb_gemm_shape *s, const float *a, const float *b) {
    const int64_t mn = s->m * s->n;
    float *c1 = malloc(4 * (size_t)mn + 4), *c2 = malloc(4 * (size_t)mn + 4);
    setenv("SAMEBITS_GEMM_HOST", "digits", 1);
    sb_status s1 = sb_gemm_host(s, a, b, c1, s->n);
    setenv("SAMEBITS_GEMM_HOST", "direct", 1);
    sb_status s2 = sb_gemm_host(s, a, b, c2, s->n);
    unsetenv("SAMEBITS_GEMM_HOST");
    int ok = s1 == SB_OK && s2 == SB_OK && memcmp(c1, c2, 4 * (size_t)mn) == 0;
    if (!ok) {
        fprintf(stderr, "  roads differ: m %lld n %lld k %lld (status %d %d)\n", (long long)s->m, (long long)s->n,
                (long long)s->k, (int)s1, (int)s2);
        for (int64_t i = 0; i < mn && s1 == SB_OK && s2 == SB_OK; i++)
            if (sb_f2u(c1[i]) != sb_f2u(c2[i])) {
                fprintf(stderr, "  first at %lld: 0x%08x (digits) 0x%08x (direct)\n", (long long)i, sb_f2u(c1[i]),
                        sb_f2u(c2[i]));
                break;
            }
    }
    free(c1);
    free(c2);
    return ok;
}

static float *fill(int64_t count, int kind) {
    float *x = malloc(4 * (size_t)(count > 0 ? count : 1));
    for (int64_t i = 0; i < count; i++) x[i] = value(kind);
    return x;
}

SB_TEST(test_gemm_roads_agree) {
    g_rng = 24;
    /* m, n, k: small, the lines regime (m * n past the summed one's cells), long K, the
     * summed regime over several blocks of A's lines (B's lines converted once) */
    const int64_t shapes[][3] = {{1, 1, 1},    {3, 5, 7},     {17, 9, 33},    {40, 3, 1000}, {300, 250, 20},
                                 {4, 4, 70000}, {9, 2, 40000}, {1, 7, 131072}, {130, 3, 20000}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int kind = 0; kind < 9; kind++)
            for (int tr = 0; tr < 4; tr++) {
                const int64_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
                const int ta = tr & 1, tb = tr >> 1;
                sb_gemm_shape s = {ta, tb, m, n, k, ta ? m : k, tb ? k : n};
                /* kinds 5..8: one side wide (A for 5, 6; B for 7, 8), the other of kind 0 */
                const int ka = kind <= 6 ? kind : 0, kb = kind == 4 ? 0 : kind <= 4 ? kind : kind >= 7 ? kind - 2 : 0;
                float *a = fill(m * k, ka), *b = fill(k * n, kb);
                SB_CHECK(same_on_both_roads(&s, a, b));
                free(a);
                free(b);
            }
}

SB_TEST(test_gemm_roads_agree_on_the_gram) {
    g_rng = 25;
    /* X^T X with X row-major k x n: the direct road's symmetric case */
    const int64_t shapes[][2] = {{1000, 8}, {70000, 5}, {33, 31}, {20000, 40}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int kind = 0; kind < 5; kind++) {
            const int64_t k = shapes[si][0], n = shapes[si][1];
            float *x = fill(k * n, kind);
            sb_gemm_shape s = {1, 0, n, n, k, n, n};
            SB_CHECK(same_on_both_roads(&s, x, x));
            free(x);
        }
}

/* The digit road's Gram (op(B) = op(A)^T: op(B)'s planes copied from op(A)'s,
 * the upper triangle multiplied, the rest mirrored) against the same product
 * of a copy of X, which takes the general road: the same bits, one band or
 * several (a small band budget reaches the bands that start right of column
 * 0), specials included. */
SB_TEST(test_gemm_digits_gram_equals_the_general_product) {
    g_rng = 26;
    const int64_t shapes[][2] = {{300, 130}, {2000, 97}, {40, 257}};
    const int64_t budgets[] = {0, 7 * 130 * 4 * 64, 7 * 257 * 4 * 64};
    setenv("SAMEBITS_GEMM_HOST", "digits", 1);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int kind = 0; kind < 5; kind++)
            for (int bi = 0; bi < 3; bi++) {
                const int64_t k = shapes[si][0], n = shapes[si][1];
                float *x = fill(k * n, kind), *y = malloc(4 * (size_t)(k * n));
                float *c1 = malloc(4 * (size_t)(n * n)), *c2 = malloc(4 * (size_t)(n * n));
                memcpy(y, x, 4 * (size_t)(k * n));
                sb_gemm_shape s = {1, 0, n, n, k, n, n};
                sb_gemm_band_bytes_for_tests(budgets[bi]);
                SB_CHECK(sb_gemm_host(&s, x, x, c1, n) == SB_OK);
                SB_CHECK(sb_gemm_host(&s, x, y, c2, n) == SB_OK);
                SB_CHECK(memcmp(c1, c2, 4 * (size_t)(n * n)) == 0);
                free(x);
                free(y);
                free(c1);
                free(c2);
            }
    sb_gemm_band_bytes_for_tests(0);
    unsetenv("SAMEBITS_GEMM_HOST");
}

/* A Gram's own roads on the digit planes: on the AMX path, the digits packed
 * once per pass and the digit pairs multiplied at once (gemm.c's gram_amx),
 * against the planes repacked per weight (SAMEBITS_GEMM_NO_AMX_GRAM); and the
 * strided lines' statistics in vectors against the scalar loop
 * (SAMEBITS_GEMM_STATS_SCALAR): the same bits on line counts off the panels'
 * 8 and the vectors' 16, K over several passes and off the groups' 64,
 * subnormals, wide spreads and specials. Where the machine has neither AMX
 * nor AVX-512, both sides take the same road and the test shows nothing
 * (tests/unit/test_igemm_amx_emu.c runs the AMX code with emulated tiles). */
SB_TEST(test_gemm_gram_roads_agree) {
    g_rng = 27;
    const int64_t shapes[][2] = {{300, 1}, {1000, 7}, {20000, 33}, {8193, 97}, {40, 257}, {129, 16}, {17000, 130}};
    /* the roads differ only on x86-64 (AMX, AVX-512); elsewhere both sides are one
     * road, and the large shapes would only cost time under qemu */
#if defined(__x86_64__)
    const size_t nshapes = sizeof shapes / sizeof shapes[0];
#else
    const size_t nshapes = 2;
#endif
    setenv("SAMEBITS_GEMM_HOST", "digits", 1);
    for (size_t si = 0; si < nshapes; si++)
        for (int kind = 0; kind < 5; kind++) {
            const int64_t k = shapes[si][0], n = shapes[si][1];
            float *x = fill(k * n, kind);
            if (kind == 2) /* subnormal elements among the tiny ones: the statistics' other branch */
                for (int64_t i = 0; i < k * n; i += 5) x[i] = sb_u2f((uint32_t)rnd() & 0x807fffffu);
            float *c[3];
            for (int v = 0; v < 3; v++) {
                c[v] = malloc(4 * (size_t)(n * n));
                if (v == 1) setenv("SAMEBITS_GEMM_NO_AMX_GRAM", "1", 1);
                if (v == 2) setenv("SAMEBITS_GEMM_STATS_SCALAR", "1", 1);
                sb_gemm_shape s = {1, 0, n, n, k, n, n};
                SB_CHECK(sb_gemm_host(&s, x, x, c[v], n) == SB_OK);
                unsetenv("SAMEBITS_GEMM_NO_AMX_GRAM");
                unsetenv("SAMEBITS_GEMM_STATS_SCALAR");
            }
            SB_CHECK(memcmp(c[0], c[1], 4 * (size_t)(n * n)) == 0);
            SB_CHECK(memcmp(c[0], c[2], 4 * (size_t)(n * n)) == 0);
            for (int v = 0; v < 3; v++) free(c[v]);
            free(x);
        }
    /* a line whose digit count sits on a threshold through its subnormals: the
     * largest element 2^-103, the others subnormal with leading exponent -127,
     * a spread of exactly 24 (six digits; one less would give five) */
    {
        const int64_t k = 3000, n = 19;
        float *x = fill(k * n, 0), *c0 = malloc(4 * (size_t)(n * n)), *c1 = malloc(4 * (size_t)(n * n));
        for (int64_t q = 0; q < k; q++) x[q * n + 3] = sb_u2f(0x00400000u | ((uint32_t)rnd() & 0x803fffffu));
        x[5 * n + 3] = sb_u2f((uint32_t)(127 - 103) << 23);
        sb_gemm_shape s = {1, 0, n, n, k, n, n};
        SB_CHECK(sb_gemm_host(&s, x, x, c0, n) == SB_OK);
        setenv("SAMEBITS_GEMM_STATS_SCALAR", "1", 1);
        SB_CHECK(sb_gemm_host(&s, x, x, c1, n) == SB_OK);
        unsetenv("SAMEBITS_GEMM_STATS_SCALAR");
        SB_CHECK(memcmp(c0, c1, 4 * (size_t)(n * n)) == 0);
        free(x);
        free(c0);
        free(c1);
    }
    unsetenv("SAMEBITS_GEMM_HOST");
}

/* The centered Gram (sb_gemm_host_gram_centered: the centered values formed
 * where they are read) against sb_gemm_host on a centered copy: the same bits
 * on the AMX road and on every fallback (wide spreads, centered values that
 * overflow, nonfinite elements, a row stride past the lines), at 1 and 2
 * threads. */
SB_TEST(test_gemm_gram_centered_equals_a_centered_copy) {
    g_rng = 28;
    const int64_t shapes[][2] = {{300, 1}, {1000, 7}, {9000, 33}, {40, 97}, {2000, 130}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int kind = 0; kind < 7; kind++)
            for (int threads = 1; threads <= 2; threads++) {
                SB_CHECK(sb_set_num_threads(threads) == SB_OK);
                const int64_t k = shapes[si][0], n = shapes[si][1], ld = n + (kind & 1);
                float *x = fill(k * ld, kind == 4 ? 4 : kind == 5 ? 5 : 0), *mean = fill(n, 0);
                float *xc = malloc(4 * (size_t)(k * n)), *c0 = malloc(4 * (size_t)(n * n)), *c1 = malloc(4 * (size_t)(n * n));
                if (kind == 3) /* centered values that overflow */
                    for (int64_t l = 0; l < n; l += 3) mean[l] = -3e38f, x[l] = 3e38f;
                if (kind == 6) /* tiny values about a tiny mean: subnormal differences */
                    for (int64_t i = 0; i < k * ld; i++) x[i] *= 0x1p-140f;
                for (int64_t i = 0; i < k; i++)
                    for (int64_t l = 0; l < n; l++) xc[i * n + l] = x[i * ld + l] - mean[l];
                sb_gemm_shape s = {1, 0, n, n, k, n, n};
                SB_CHECK(sb_gemm_host(&s, xc, xc, c0, n) == SB_OK);
                SB_CHECK(sb_gemm_host_gram_centered(k, n, x, ld, mean, c1, n) == SB_OK);
                SB_CHECK(memcmp(c0, c1, 4 * (size_t)(n * n)) == 0);
                free(x);
                free(mean);
                free(xc);
                free(c0);
                free(c1);
            }
    SB_CHECK(sb_set_num_threads(0) == SB_OK);
}

SB_TEST(test_gemm_roads_refuse_by_name) {
    setenv("SAMEBITS_GEMM_HOST", "fast", 1);
    float a = 1.0f, b = 2.0f, c = 0.0f;
    sb_gemm_shape s = {0, 0, 1, 1, 1, 1, 1};
    SB_CHECK(sb_gemm_host(&s, &a, &b, &c, 1) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "SAMEBITS_GEMM_HOST") != NULL);
    unsetenv("SAMEBITS_GEMM_HOST");
    SB_CHECK(sb_gemm_host(&s, &a, &b, &c, 1) == SB_OK && c == 2.0f);
}

/* Totals just above and below a tie at float32's last bit with the deciding
 * bit far below the 53 leading ones (the direct road's round-to-odd bit):
 * a = (1, 2^-24, 2^-29, 1 x 7), b = (1, 1, +-2^-29, 0 x 7) gives, in the line
 * scales' units, T = 2^58 + 2^34 +- 1, which rounds up for + and down for -. */
SB_TEST(test_gemm_roads_round_ties_below_53_bits) {
    for (int sgn = 0; sgn < 2; sgn++)
        for (int e = -20; e <= 20; e += 5) {
            const float sc = sb_u2f((uint32_t)(127 + e) << 23);
            float a[10] = {sc, sc * 0x1p-24f, sc * 0x1p-29f, sc, sc, sc, sc, sc, sc, sc};
            float b[10] = {1.0f, 1.0f, sgn ? -0x1p-29f : 0x1p-29f, 0, 0, 0, 0, 0, 0, 0};
            sb_gemm_shape s = {0, 0, 1, 1, 10, 10, 1};
            SB_CHECK(same_on_both_roads(&s, a, b));
            float c = 0.0f;
            SB_CHECK(sb_gemm_host(&s, a, b, &c, 1) == SB_OK);
            const float want = sgn ? sc : sc * (1.0f + 0x1p-23f);
            SB_CHECK_EQ_U64(sb_f2u(c), sb_f2u(want));
        }
}

/* The direct road's vector kernels (AVX2, AVX-512 where the CPU has them) give
 * the integers of the portable one: every kernel this machine has against the
 * digit planes, on random lines, wide ones, and lines at the largest integer
 * (|x'| = 2^30: each int64 lane then holds its most products before the
 * totals take them; one more would overflow). Elsewhere only the portable
 * kernel exists and this reruns it. */
SB_TEST(test_gemm_direct_kernels_agree) {
    const char *kernels[] = {"scalar", "avx2", ""}; /* "" = the best this CPU has */
    for (size_t kk = 0; kk < sizeof kernels / sizeof kernels[0]; kk++) {
        setenv("SAMEBITS_DIRECT_KERNEL", kernels[kk], 1);
        sb_gemm_direct_kernel_reset();
        const char *used = sb_gemm_direct_kernel();
        SB_CHECK(strcmp(used, "none") == 0 || strcmp(used, "scalar") == 0 || strcmp(used, "avx2") == 0 ||
                 strcmp(used, "avx512") == 0);
        g_rng = 26;
        const int64_t shapes[][3] = {{2, 2, 5}, {6, 4, 1000}, {40, 10, 784}, {10, 30, 4099}, {3, 5, 20000}};
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (int kind = 0; kind < 9; kind++) {
                const int64_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
                sb_gemm_shape s = {0, 1, m, n, k, k, k};
                const int ka = kind <= 6 ? kind : 0, kb = kind == 4 ? 0 : kind <= 4 ? kind : kind >= 7 ? kind - 2 : 0;
                float *a = fill(m * k, ka), *b = fill(k * n, kb);
                if (kind == 0) /* lines at the largest integer, signs alike: the lanes' largest sums */
                    for (int64_t i = 0; i < m * k; i++) a[i] = -1.0f, b[i % (n * k)] = -1.0f;
                SB_CHECK(same_on_both_roads(&s, a, b));
                free(a);
                free(b);
            }
    }
    unsetenv("SAMEBITS_DIRECT_KERNEL");
    sb_gemm_direct_kernel_reset();
}

SB_TEST(test_gemm_direct_kernels_at_the_lane_bounds) { SB_CHECK_EQ_U64(sb_gemm_direct_kernel_check(), 0); }

/* sb_oz_mul_add's 32-bit parts against 128-bit products: runs of six
 * products of the integers' extremes (+-2^62, 2^62 - 1, 2^32 +- 1, -1), and
 * long runs of random ones below 2^52 (the carries through the parts), the
 * total in sb_oz_acc's form as the batched products of the byte lm's device
 * attention round it. */
SB_TEST(test_gemm_part_products_are_exact) {
    const int64_t e[] = {0, 1, -1, ((int64_t)1 << 62), -((int64_t)1 << 62), ((int64_t)1 << 62) - 1,
                         ((int64_t)1 << 32) + 1, ((int64_t)1 << 32) - 1, -((int64_t)1 << 32), 12345678901LL};
    const int ne = (int)(sizeof e / sizeof e[0]);
    g_rng = 7;
    for (int run = 0; run < ne * ne + 50; run++) {
        const int terms = run < ne * ne ? 6 : 1000;
        int64_t c[4] = {0, 0, 0, 0};
        __int128 want = 0;
        for (int q = 0; q < terms; q++) {
            int64_t x, y;
            if (run < ne * ne) {
                x = e[run % ne], y = e[(run / ne + q) % ne];
            } else {
                const uint64_t u = rnd(), w = rnd();
                x = (int64_t)u >> (11 + (u & 31)), y = (int64_t)w >> (11 + (w & 31)); /* |.| <= 2^52 */
            }
            sb_oz_mul_add(c, x, y);
            want += (__int128)x * y;
        }
        sb_oz_acc got;
        sb_oz_acc_of_parts(c, &got);
        const unsigned __int128 low = (unsigned __int128)got.l[0] | ((unsigned __int128)got.l[1] << 32) |
                                      ((unsigned __int128)got.l[2] << 64) | ((unsigned __int128)got.l[3] << 96);
        SB_CHECK(low == (unsigned __int128)want);
        SB_CHECK(got.top == (want < 0 ? -1 : 0));
    }
}
