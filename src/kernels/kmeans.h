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

/* x . c in k-means' lanes: lane l sums the products of the features f with
 * f mod 8 == l in feature order (each product rounded, then the addition),
 * the lanes added as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)):
 * kmeans.c's km_dot, both rows in global memory. */
SB_FN float sb_km_dot(SB_GLOBAL const float *x, SB_GLOBAL const float *c, sb_i32 d) {
    float l[8];
    for (int t = 0; t < 8; t++) l[t] = 0.0f;
    for (sb_i32 f = 0; f < d; f++) l[f & 7] = l[f & 7] + x[f] * c[f];
    return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

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
