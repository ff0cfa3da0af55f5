/*
 * rng.h: the counter-based generator of the profile (rule 6), device-neutral.
 *
 * Philox4x32-10 from Salmon, Moraes, Dror and Shaw, "Parallel random numbers:
 * as easy as 1, 2, 3" (SC'11). Every draw is a pure function of
 * (seed, purpose, index): the counter is {index lo, index hi, purpose, sub} and
 * the key is {seed lo, seed hi}. No state is consumed, so a thread schedule,
 * a block count or a GPU count can never change a draw.
 */
#ifndef SB_CORE_RNG_H
#define SB_CORE_RNG_H
#include "../kernels/compat.h"

#define SB_PHILOX_M0 0xD2511F53u
#define SB_PHILOX_M1 0xCD9E8D57u
#define SB_PHILOX_W0 0x9E3779B9u
#define SB_PHILOX_W1 0xBB67AE85u

/* Philox4x32 with 10 rounds: out = block(ctr, key). The key is bumped by the
 * Weyl constants before rounds 2..10, as in the paper. */
SB_FN void sb_philox4x32_10_block(const sb_u32 ctr[4], const sb_u32 key[2], sb_u32 out[4]) {
    sb_u32 c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    sb_u32 k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += SB_PHILOX_W0;
            k1 += SB_PHILOX_W1;
        }
        sb_u64 p0 = (sb_u64)SB_PHILOX_M0 * (sb_u64)c0;
        sb_u64 p1 = (sb_u64)SB_PHILOX_M1 * (sb_u64)c2;
        sb_u32 hi0 = (sb_u32)(p0 >> 32), lo0 = (sb_u32)p0;
        sb_u32 hi1 = (sb_u32)(p1 >> 32), lo1 = (sb_u32)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

/* The four 32-bit words drawn for (seed, purpose, index, sub). */
SB_FN void sb_rng_words(sb_u64 seed, sb_u32 purpose, sb_u64 index, sb_u32 sub, sb_u32 out[4]) {
    sb_u32 ctr[4], key[2];
    ctr[0] = (sb_u32)index;
    ctr[1] = (sb_u32)(index >> 32);
    ctr[2] = purpose;
    ctr[3] = sub;
    key[0] = (sb_u32)seed;
    key[1] = (sb_u32)(seed >> 32);
    sb_philox4x32_10_block(ctr, key, out);
}

/* A uniform float in [0, 1): the top 24 bits of w times 2^-24. Exact: every
 * result is a multiple of 2^-24 and each is equally likely. */
SB_FN float sb_u32_to_unit_f32(sb_u32 w) {
    return (float)(w >> 8) * 0x1.0p-24f;
}

/* A uniform float in (0, 1): (2k + 1) * 2^-24 for the top 23 bits k of w.
 * Exact (2k + 1 < 2^24 fits a float's significand), symmetric about 1/2,
 * never 0 or 1 (safe for log). */
SB_FN float sb_u32_to_open_unit_f32(sb_u32 w) {
    return (float)(((w >> 9) << 1) | 1u) * 0x1.0p-24f;
}

/* A uniform integer in [0, n), n >= 1, without bias: Lemire's multiply-shift with
 * rejection ("Fast random integer generation in an interval", ACM TOMACS 2019).
 * Candidates are the words of (seed, purpose, index, sub = 0, 1, 2, ...) in order,
 * so the result is still a pure function of (seed, purpose, index, n). */
SB_FN sb_u32 sb_rng_below(sb_u64 seed, sb_u32 purpose, sb_u64 index, sb_u32 n) {
    sb_u32 threshold = (sb_u32)(0u - n) % n; /* 2^32 mod n */
    for (sb_u32 sub = 0;; sub++) {
        sb_u32 w[4];
        sb_rng_words(seed, purpose, index, sub, w);
        for (int j = 0; j < 4; j++) {
            sb_u64 m = (sb_u64)w[j] * (sb_u64)n;
            if ((sb_u32)m >= threshold) return (sb_u32)(m >> 32);
        }
    }
}

/* A uniform float in [0, 1) for (seed, purpose, index): word 0 of the block. */
SB_FN float sb_rng_unit_f32(sb_u64 seed, sb_u32 purpose, sb_u64 index) {
    sb_u32 w[4];
    sb_rng_words(seed, purpose, index, 0u, w);
    return sb_u32_to_unit_f32(w[0]);
}

#endif
