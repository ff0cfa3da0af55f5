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
