/* test_perf_invariants.c: functions rewritten for speed against the spelling
 * they replaced. A rewrite in an identical path must give the same bits for
 * every input it can meet (docs/gbdt.md, "Performance notes"). */
#include "sb_test.h"
#include "kernels/quantize.h"
#include <stdlib.h>
#include <string.h>

/* The rounding as first written: truncate, then compare the exact fraction. */
static int32_t round_half_even_reference(float v) {
    int32_t t = (int32_t)v;
    float frac = v - (float)t;
    if (frac > 0.5f || (frac == 0.5f && (t & 1))) return t + 1;
    if (frac < -0.5f || (frac == -0.5f && (t & 1))) return t - 1;
    return t;
}

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Quantization meets |v| <= 2^30. Every such float (2.6e9 of them, about 7 s)
 * when SAMEBITS_EXHAUSTIVE=1; otherwise every 97th bit pattern plus every
 * float within 4096 patterns of the places the spelling changes (0, the half
 * integers near 1 and 2^22, 2^23, 2^30). */
SB_TEST(test_perf_round_half_even_matches_reference) {
    const uint32_t top = 0x4E800000u; /* bits of 2^30 */
    const char *ex = getenv("SAMEBITS_EXHAUSTIVE");
    const uint32_t stride = ex && ex[0] == '1' ? 1u : 97u;
    uint64_t bad = 0;
    for (uint32_t s = 0; s < 2; s++) {
        for (uint32_t u = 0; u <= top; u += stride) {
            float v = from_bits(u | (s << 31));
            bad += sb_round_half_even_i32(v) != round_half_even_reference(v);
        }
        const uint32_t at[] = {0x00000000u, 0x3F000000u, 0x3FC00000u, 0x4A7FFFFEu, 0x4B000000u, top - 4096u};
        for (size_t k = 0; k < sizeof at / sizeof at[0]; k++)
            for (uint32_t u = at[k] > 4096u ? at[k] - 4096u : 0u; u <= at[k] + 4096u && u <= top; u++) {
                float v = from_bits(u | (s << 31));
                bad += sb_round_half_even_i32(v) != round_half_even_reference(v);
            }
    }
    SB_CHECK(bad == 0);
}

/* sb_bins_apply searches the edges without branches; every value must land
 * where sb_bin_of (the definition) puts it: NaN, +-0, +-inf, the edges
 * themselves and their float neighbours, integers and fractions. */
#include "models/trees/binning.h"

static float next_up(float v) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    if (v == 0.0f) return from_bits(1u);
    u = v > 0.0f ? u + 1u : u - 1u;
    return from_bits(u);
}

static float next_down(float v) { return -next_up(-v); }

SB_TEST(test_perf_bins_apply_matches_bin_of) {
    enum { N = 3000, NF = 4 };
    float *x = malloc(sizeof(float) * N * NF);
    SB_CHECK(x != NULL);
    if (!x) return;
    uint32_t s = 12345u;
    for (int r = 0; r < N; r++) {
        s = s * 1664525u + 1013904223u;
        x[r * NF + 0] = (float)(s >> 20) - 2000.0f;           /* integers, many distinct */
        x[r * NF + 1] = (float)(s % 7u);                       /* few integers */
        x[r * NF + 2] = from_bits(s) == from_bits(s) ? from_bits((s & 0x807FFFFFu) | 0x3F000000u) : 0.0f;
        x[r * NF + 3] = r % 11 == 0 ? from_bits(0x7FC00000u) : (r % 13 == 0 ? -0.0f : (float)(r % 300) * 0.25f);
    }
    const int32_t max_bins[] = {2, 7, 255};
    for (size_t m = 0; m < sizeof max_bins / sizeof max_bins[0]; m++) {
        sb_bins bins;
        SB_CHECK(sb_bins_build(x, N, NF, max_bins[m], 1, 0, &bins) == SB_OK);
        /* Probe rows: the data, then every edge and its neighbours, specials. */
        int64_t np = N + 3 * bins.offset[NF] + 8;
        float *y = malloc(sizeof(float) * (size_t)np * NF);
        uint8_t *out = malloc((size_t)np * NF);
        SB_CHECK(y != NULL && out != NULL);
        if (!y || !out) return;
        memcpy(y, x, sizeof(float) * N * NF);
        int64_t r = N;
        for (int32_t k = 0; k < bins.offset[NF]; k++, r += 3)
            for (int f = 0; f < NF; f++) {
                float e = bins.upper[k];
                y[r * NF + f] = e;
                y[(r + 1) * NF + f] = e - e == 0.0f ? next_up(e) : e;
                y[(r + 2) * NF + f] = e - e == 0.0f ? next_down(e) : -e;
            }
        const float special[8] = {0.0f, -0.0f, from_bits(0x7F800000u), from_bits(0xFF800000u),
                                  from_bits(0x7FC00000u), from_bits(1u), from_bits(0x80000001u), 1e30f};
        for (int k = 0; k < 8; k++, r++)
            for (int f = 0; f < NF; f++) y[r * NF + f] = special[k];
        sb_bins_apply(&bins, y, np, NF, out);
        int64_t bad = 0;
        for (int64_t i = 0; i < np; i++)
            for (int32_t f = 0; f < NF; f++) bad += out[f * np + i] != sb_bin_of(&bins, f, y[i * NF + f]);
        SB_CHECK(bad == 0);
        free(y);
        free(out);
        sb_bins_release(&bins);
    }
    free(x);
}
