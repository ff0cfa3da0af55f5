/*
 * umap_entry.h: the entry kernels of UMAP's batched epoch
 * (src/models/manifold/umap_batched.c, docs/umap.md), part of the linalg
 * program (included by linalg_entry.h; their names go in
 * SB_LINALG_UMAP_KERNELS, src/device/programs.h). The arithmetic is
 * kernels/umap.h's, the host's own functions.
 */
#include "../umap.h"

/* Part part of epoch t: the np edges stored from off (the graph's edges
 * m parts + part, m = 0 .. np - 1, laid out part by part by the host), one a
 * work-item: each one's schedule and moves (sb_um_edge) into the integer row
 * sums acc. The sums are exact and order-free, so the grid, the work-group
 * size and the order in which work-items add reach no bit. */
SB_KERNEL void kum_edges(sb_i64 off, sb_i64 np, sb_i32 t, sb_i32 part, sb_i32 parts, float alpha, float a, float b,
                         float two_ab, float two_gb, sb_i64 n, sb_i64 qmax, sb_i32 nc, sb_i32 rate, sb_u64 seed,
                         SB_GLOBAL const sb_i32 *head, SB_GLOBAL const sb_i32 *tail, SB_GLOBAL const float *eps,
                         SB_GLOBAL const float *epsn, SB_GLOBAL float *next, SB_GLOBAL float *next_neg,
                         SB_GLOBAL const float *emb, SB_GLOBAL sb_i64 *acc) {
    const sb_i64 m = sb_global_id(0);
    if (m >= np) return;
    sb_um_consts k;
    k.a = a, k.b = b, k.two_ab = two_ab, k.two_gb = two_gb, k.n = n, k.qmax = qmax, k.nc = nc, k.rate = rate;
    k.seed = seed;
    sb_um_edge(off + m, m * parts + part, t, alpha, k, head, tail, eps, epsn, next, next_neg, emb, acc);
}

/* Values 0 .. nv - 1 of the embedding (n x nc), one a work-item: the epoch's
 * end (sb_um_apply). */
SB_KERNEL void kum_apply(sb_i64 nv, SB_GLOBAL float *emb, SB_GLOBAL sb_i64 *acc) {
    const sb_i64 i = sb_global_id(0);
    if (i >= nv) return;
    sb_um_apply(i, emb, acc);
}
