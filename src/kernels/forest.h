/*
 * forest.h: the decisions of random forests and Extra Trees, written once for
 * every backend: a node's key, which features it may split on, the Extra
 * Trees threshold, the impurity scores of exact integer sums and the total
 * order among split candidates. The CPU grower (src/models/forest/forest.c),
 * the device grower (src/models/forest/forest_dev.c), its host reference
 * (src/backends/cpu/fdev_cpu.c) and its CUDA kernels
 * (src/backends/cuda/fdev_cuda.cu) all call these; none re-spells them.
 */
#ifndef SB_KERNELS_FOREST_H
#define SB_KERNELS_FOREST_H
#include "compat.h"
#include "gbdt.h"
#include "../core/rng.h"
#include "../math/sb_math.h"

#define SB_K_PURPOSE_BOOT 0x424F4F54u /* "BOOT" */
#define SB_K_PURPOSE_FEAT 0x46454154u /* "FEAT" */
#define SB_K_PURPOSE_THR 0x54485231u  /* "THR1" */
#define SB_K_PURPOSE_NODE 0x4E4F4445u /* "NODE" */

/* ---- node keys ---- */

/* The key of tree t's root. A node's key names it by its path from the root,
 * so a grower that builds level by level (a GPU) and one that builds depth
 * first (the CPU) draw the same features and thresholds for it. */
SB_FN sb_u64 sb_k_forest_root_key(sb_i32 t) { return (sb_u64)(sb_u32)t; }

/* The key of the left (side 0) or right (side 1) child of the node keyed
 * parent: one counter-generator block of (parent, side), 64 bits of it. */
SB_FN sb_u64 sb_k_forest_child_key(sb_u64 parent, sb_i32 side) {
    sb_u32 w[4];
    sb_rng_words(0u, SB_K_PURPOSE_NODE, parent, (sb_u32)side, w);
    return ((sb_u64)w[1] << 32) | (sb_u64)w[0];
}

/* The draw that ranks feature j at the node keyed key: the node's features
 * are the mtry with the smallest (draw, j). */
SB_FN sb_u32 sb_k_forest_feature_draw(sb_u64 seed, sb_u64 key, sb_i32 j) {
    sb_u32 w[4];
    sb_rng_words(seed, SB_K_PURPOSE_FEAT, key, (sb_u32)j, w);
    return w[0];
}

/* Extra Trees: the value bin in [lo, hi) (lo < hi) whose upper edge is the
 * threshold of feature feat at the node keyed key. Multiply-shift: uniform up
 * to (hi - lo) / 2^32, a pure function of the key. */
SB_FN sb_i32 sb_k_forest_et_pick(sb_u64 seed, sb_u64 key, sb_i32 feat, sb_i32 lo, sb_i32 hi) {
    sb_u32 w[4];
    sb_rng_words(seed, SB_K_PURPOSE_THR, key, (sb_u32)feat, w);
    return lo + (sb_i32)(((sb_u64)w[0] * (sb_u64)(sb_u32)(hi - lo)) >> 32);
}

#endif
