/*
 * core_entry.h: the entry kernels of the profile-core fixture on a GPU
 * (src/fixtures/profile_core.c, device=cuda or device=opencl), written once in
 * the compat vocabulary and compiled by every GPU backend, as tree_entry.h is.
 * The counter generator and its mappings (src/core/rng.h), the fixture's inputs
 * (src/kernels/profile_core.h), the elementary functions and the reductions
 * (src/math/sb_math.h) are the very functions the CPU fixture runs: these
 * kernels only decide which work-item evaluates which element.
 * - elementwise stages: a work-item an element;
 * - reduce.tree_sum: a work-item a SB_REDUCE_BLOCK-element leaf
 *   (sb_block_sum_f32), then the fixed pairwise tree (sb_tree_combine_f32) in
 *   one work-item: the shape is the data's, not the launch's;
 * - reduce.exact_sum: a work-item a chunk of the inputs into its own
 *   superaccumulator (sb_sacc_add_range), then one work-item merges them in
 *   order and rounds once; any chunking gives the same exact value (the host
 *   checks two).
 * Separating arm: -DSB_ARM_VENDOR_EXP (math.exp through the vendor's expf).
 * The kernel list is SB_CORE_KERNELS (src/device/programs.h).
 */
#include "../profile_core.h"
#include "../../core/rng.h"
#include "../../math/sb_math.h"
#if defined(SB_ARM_VENDOR_EXP)
/* Separating arm for rule 3 on a GPU: the vendor's own expf (CUDA's libdevice,
 * the OpenCL built-in) in the math.exp stage instead of the profile's. */
#define sb_expf(x) sb_vendor_expf(x)
#endif

/* The elementary functions of the math.* stages, in the CPU fixture's order. */
SB_FN float kc_apply(int fn, float x) {
    switch (fn) {
    case 0: return sb_expf(x);
    case 1: return sb_expm1f(x);
    case 2: return sb_logf(x);
    case 3: return sb_log1pf(x);
    case 4: return sb_tanhf(x);
    default: return sb_sigmoidf(x);
    }
}

/* rng.philox_words: words[4i..4i+3] = the block of (seed, WORDS, i, sub 0). */
SB_KERNEL void kc_rng_words(SB_GLOBAL sb_u32 *words, sb_u32 n) {
    const sb_i64 i = sb_global_id(0);
    if (i >= (sb_i64)n) return;
    sb_u32 w[4];
    sb_rng_words(SB_CORE_SEED, SB_CORE_PURPOSE_WORDS, (sb_u64)i, 0u, w);
    for (int j = 0; j < 4; j++) words[4 * i + j] = w[j];
}

/* rng.unit_f32, rng.open_unit_f32 (of flat word i of philox_words), rng.below. */
SB_KERNEL void kc_rng_maps(SB_GLOBAL const sb_u32 *words, SB_GLOBAL float *unit, SB_GLOBAL float *open_unit,
                           SB_GLOBAL sb_u32 *below, sb_u32 n) {
    const sb_i64 i = sb_global_id(0);
    if (i >= (sb_i64)n) return;
    unit[i] = sb_rng_unit_f32(SB_CORE_SEED, SB_CORE_PURPOSE_UNIT, (sb_u64)i);
    open_unit[i] = sb_u32_to_open_unit_f32(words[i]);
    below[i] = sb_rng_below(SB_CORE_SEED, SB_CORE_PURPOSE_BELOW, (sb_u64)i, SB_CORE_BELOW_N);
}

/* math.input and reduce.input: the pinned inputs. */
SB_KERNEL void kc_math_input(SB_GLOBAL float *x, sb_u32 n) {
    const sb_i64 i = sb_global_id(0);
    if (i < (sb_i64)n) x[i] = sb_k_core_math_input((sb_u32)i);
}

SB_KERNEL void kc_reduce_input(SB_GLOBAL float *s, sb_u32 n) {
    const sb_i64 i = sb_global_id(0);
    if (i < (sb_i64)n) s[i] = sb_k_core_reduce_input((sb_u32)i);
}

/* y[i] = function fn (0 exp, 1 expm1, 2 log, 3 log1p, 4 tanh, 5 sigmoid) of x[i]. */
SB_KERNEL void kc_map(int fn, SB_GLOBAL const float *x, SB_GLOBAL float *y, sb_u32 n) {
    const sb_i64 i = sb_global_id(0);
    if (i < (sb_i64)n) y[i] = kc_apply(fn, x[i]);
}

/* The fixed tree's leaves: partials[b] = sb_block_sum_f32 over block b of x[0, n). */
SB_KERNEL void kc_tree_leaves(SB_GLOBAL const float *x, sb_i64 n, SB_GLOBAL float *partials) {
    const sb_i64 b = sb_global_id(0);
    if (b >= sb_tree_nblocks(n)) return;
    const sb_i64 lo = b * SB_REDUCE_BLOCK, hi = lo + SB_REDUCE_BLOCK;
    partials[b] = sb_block_sum_f32(x, lo, hi < n ? hi : n);
}

/* The fixed pairwise tree over the leaves, in one work-item (partials overwritten). */
SB_KERNEL void kc_tree_combine(SB_GLOBAL float *partials, sb_i64 count, SB_GLOBAL float *out) {
    if (sb_global_id(0) == 0) out[0] = sb_tree_combine_f32(partials, count);
}

/* Self-check: the whole fixed-shape sum serially (sb_tree_sum_f32). */
SB_KERNEL void kc_tree_serial(SB_GLOBAL const float *x, sb_i64 n, SB_GLOBAL float *scratch, SB_GLOBAL float *out) {
    if (sb_global_id(0) == 0) out[0] = sb_tree_sum_f32(x, n, scratch);
}

/* Exact sum, first pass: accs[c] = the superaccumulator of chunk c of x[0, n). */
SB_KERNEL void kc_sacc_chunks(SB_GLOBAL const float *x, sb_i64 n, sb_i64 chunk, SB_GLOBAL sb_sacc *accs) {
    const sb_i64 c = sb_global_id(0), lo = c * chunk;
    if (lo >= n) return;
    const sb_i64 hi = lo + chunk < n ? lo + chunk : n;
    sb_sacc a;
    sb_sacc_init(&a);
    sb_sacc_add_range(&a, x, lo, hi);
    accs[c] = a;
}

/* Exact sum, second pass in one work-item: the chunks merged (exact integer
 * limbs, so any order), normalised into *total, rounded once into *out. */
SB_KERNEL void kc_sacc_final(SB_GLOBAL const sb_sacc *accs, sb_i64 count, SB_GLOBAL sb_sacc *total,
                             SB_GLOBAL float *out) {
    if (sb_global_id(0) != 0) return;
    sb_sacc t;
    sb_sacc_init(&t);
    for (sb_i64 k = 0; k < count; k++) {
        sb_sacc c = accs[k];
        sb_sacc_merge(&t, &c);
    }
    sb_sacc_normalize(&t);
    total[0] = t;
    out[0] = sb_sacc_round_f32(&t);
}
