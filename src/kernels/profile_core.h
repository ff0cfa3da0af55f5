/*
 * profile_core.h: device-neutral inputs of the profile-core fixture, so that
 * every backend generates the very same inputs from the counter rng and runs
 * the very same bodies (src/fixtures/profile_core.c on the CPU).
 */
#ifndef SB_KERNELS_PROFILE_CORE_H
#define SB_KERNELS_PROFILE_CORE_H
#include "compat.h"
#include "../core/rng.h"

#define SB_CORE_SEED 0x5A3EB175u
#define SB_CORE_N_MATH 65536
#define SB_CORE_N_SUM 200003
#define SB_CORE_N_RNG 4096
#define SB_CORE_PURPOSE_INPUT 0x46495801u
#define SB_CORE_PURPOSE_REDUCE 0x46495802u
#define SB_CORE_PURPOSE_WORDS 7u
#define SB_CORE_PURPOSE_UNIT 8u
#define SB_CORE_PURPOSE_BELOW 9u
#define SB_CORE_BELOW_N 1000003u

/* Values every elementary function must get right: signed zeros, infinities,
 * NaNs, denormals, the largest and smallest floats, and the edges of exp's range. */
#define SB_CORE_N_SPECIAL 40
SB_TABLE sb_u32 sb_core_special_bits[SB_CORE_N_SPECIAL] = {
    0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u,
    0x7F800001u, 0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu, 0x00800000u,
    0x80800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x3F800000u, 0xBF800000u, 0x3F000000u,
    0xBF000000u, 0x42B17217u, 0x42B17218u, 0xC2CFF1B4u, 0xC2CFF1B5u, 0xC2CE8ED0u,
    0xC2AEAC4Fu, 0xC2AEAC50u, 0x33800000u, 0xB3800000u, 0x32000000u, 0xB2000000u,
    0x3F317218u, 0xBF317218u, 0x41200000u, 0xC1200000u, 0x41A00000u, 0xC1A00000u,
    0x4B000000u, 0xCB000000u, 0x3E800000u, 0xBE800000u};

/* Input i of the elementary-function stages: the specials first, then draws
 * mixing raw bit patterns (every class of float) with dense uniform ranges. */
SB_FN float sb_k_core_math_input(sb_u32 i) {
    if (i < (sb_u32)SB_CORE_N_SPECIAL) return sb_u2f(sb_core_special_bits[i]);
    sb_u32 w[4];
    sb_rng_words(SB_CORE_SEED, SB_CORE_PURPOSE_INPUT, i, 0u, w);
    float u = sb_u32_to_unit_f32(w[1]);
    sb_u32 kind = w[0] & 3u;
    if (kind == 0u) return sb_u2f(w[2]);                /* any bit pattern */
    if (kind == 1u) return -104.0f + 194.0f * u;        /* exp's whole range */
    if (kind == 2u) return -20.0f + 40.0f * u;          /* where models live */
    return sb_u2f(w[3] & 0x7FFFFFFFu);                 /* positive, any exponent */
}

/* Input i of the reduction stages: mixed signs over 41 binades, 2^-20..2^20. */
SB_FN float sb_k_core_reduce_input(sb_u32 i) {
    sb_u32 w[4];
    sb_rng_words(SB_CORE_SEED, SB_CORE_PURPOSE_REDUCE, i, 0u, w);
    float m = sb_u32_to_unit_f32(w[0]) * 2.0f - 1.0f;
    return m * sb_u2f((sb_u32)(107u + w[1] % 41u) << 23);
}

#endif
