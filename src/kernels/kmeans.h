/*
 * kmeans.h: device-neutral bodies of k-means (src/models/cluster/kmeans.c),
 * written once for the host and every GPU: the assignment distance of
 * kmeans.c's header, float for float.
 */
#ifndef SB_KERNELS_KMEANS_H
#define SB_KERNELS_KMEANS_H
#include "compat.h"
#include "f64.h"

/* Centers a pass of kk_assign holds in registers (eight lanes each); the
 * centers it stages in local memory at once are a multiple of it. */
#define SB_KK_CB 8

/* The assignment distance max(0, (|x|^2 + |c|^2) - 2 x.c) from the exact
 * squared norms xn, cn and the lanes' dot product. */
SB_FN float sb_km_dist(float xn, float cn, float dot) {
    const float s = (xn + cn) - 2.0f * dot;
    return s > 0.0f ? s : 0.0f;
}

/* 1 when distance s to center j replaces the best so far (bd), ties to the
 * lower index. SB_SABOTAGE_KMEANS_TIES (make SABOTAGE=kmeans-ties,
 * CUDA_VARIANT=kmeans-ties, SAMEBITS_OPENCL_ARM=kmeans-ties) breaks ties to
 * the higher index: the separating arm. */
SB_FN int sb_km_better(float s, float bd, sb_i32 j) {
#ifdef SB_SABOTAGE_KMEANS_TIES
    return j == 0 || s <= bd;
#else
    return j == 0 || s < bd;
#endif
}

#endif
