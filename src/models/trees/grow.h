/*
 * grow.h: growing one tree from integer gradient histograms (profile rule 5).
 *
 * Gradients and hessians arrive quantized (int32 per row, with power-of-two
 * scales), so every histogram is an exact integer sum: rows may be visited in
 * any order, by any number of threads, and a sibling's histogram is its parent's
 * minus the other child's, exactly. Every float that decides the tree (gains,
 * leaf values) is computed from those integers by one spelled-out formula, and
 * ties between equal gains break by (feature, bin, missing direction).
 */
#ifndef SB_TREES_GROW_H
#define SB_TREES_GROW_H
#include "../model.h"
#include "binning.h"
#include "cons.h"

typedef struct sb_grow_params {
    int32_t max_leaves;       /* leaf-wise: num_leaves; depth-wise: 0 = no limit */
    int32_t max_depth;        /* -1: no limit */
    int32_t depthwise;        /* 1: split level by level; 0: best-first (leaf-wise) */
    int64_t min_samples_leaf; /* rows in each child */
    float min_child_weight;   /* hessian in each child */
    float min_split_gain;     /* a split needs gain > this */
    float reg_lambda;         /* L2 on leaf values */
    float learning_rate;      /* leaf values are scaled by it */
    float reg_alpha;          /* L1 on leaf values and gains (lambda_l1); 0: none */
    const sb_grow_cons *cons; /* per-node rules (cons.h); NULL or none set: the plain search */
} sb_grow_params;

typedef struct sb_grow_data {
    const uint8_t *binned;        /* feature-major: feature f's bytes at binned + f * n */
    int64_t n;                    /* rows of the binned matrix */
    int32_t nf;
    const sb_bins *bins;
    const int32_t *gq, *hq;       /* quantized gradient and hessian per row */
    float g_scale, h_scale;       /* g = gq / g_scale, h = hq / h_scale (powers of two) */
    const uint8_t *feature_mask;  /* nf flags: 1 = may split on it */
    const uint8_t *catf;          /* nf flags: 1 = categorical (bins->cat), or NULL: none */
    const sb_k_cat_rules *cat;    /* the categorical search's rules (with catf) */
    const uint8_t *binned_rows;   /* the same bins row-major (row r's nf bytes at binned_rows + r * nf),
                                     or NULL; where given, histograms of nodes whose rows are scattered
                                     read it (one cache line a row instead of one a feature) */
    const int64_t *ghq;           /* with binned_rows: row r's gq and hq in one word (sb_grow_pack_gh),
                                     so a scattered row's gradients are one cache line, not two */
    /* Data-parallel growth (gbdt.c, distributed=mpi), or NULL: the rows here
     * are one rank's block, and reduce(reduce_ctx, v, n) replaces v[0..n) by
     * its exact sum over the ranks. The grower calls it on every histogram it
     * builds from rows (the root's, each smaller child's) before reading it,
     * one node at a time in pick order, so every rank sees the global
     * histograms, counts and sums and makes the same decisions; partitions
     * and leaf ranges stay local. It must not fail (a failure ends the job). */
    void (*reduce)(void *reduce_ctx, int64_t *v, int64_t n);
    void *reduce_ctx;
} sb_grow_data;

/* gq in the low 32 bits, hq in the high 32, and back (exact for any int32s). */
static inline int64_t sb_grow_pack_gh(int32_t g, int32_t h) {
    return (int64_t)(((uint64_t)(uint32_t)h << 32) | (uint64_t)(uint32_t)g);
}
static inline int32_t sb_grow_unpack_g(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }
static inline int32_t sb_grow_unpack_h(int64_t v) { return (int32_t)(uint32_t)((uint64_t)v >> 32); }

/* Whether a caller should give sb_grow_data a row-major copy of the bins: by
 * the data's shape only (rows, features), never the thread count. With few
 * features a row's bins share a cache line, and a node's histogram (every
 * feature's bins, updated row by row) stays in a core's L2; once the binned
 * matrix outgrows the last-level cache, the scattered rows of deep nodes miss
 * it once a feature in the feature-major layout (the crossover measured on 2
 * cores: docs/gbdt.md, "CPU histograms"). */
#define SB_GROW_ROWWISE_MAX_FEATURES 64
#define SB_GROW_ROWWISE_MIN_BYTES ((int64_t)1 << 24)
static inline int sb_grow_rowwise_wanted(int64_t n, int32_t nf) {
    return nf >= 2 && nf <= SB_GROW_ROWWISE_MAX_FEATURES && n * nf >= SB_GROW_ROWWISE_MIN_BYTES;
}

/* The tree's nodes plus what training needs beside them: the split bin of every
 * internal node (rows route by bin <= split_bin) and the root's histogram. */
typedef struct sb_grown {
    sb_tree tree;        /* with its categorical splits' code sets (sb_grown_cat_sets) */
    int32_t *split_bin;  /* per node; -1 for leaves */
    uint32_t *cat_bits;  /* 8 words a node: a categorical split's left bins; NULL: no categorical split */
    int64_t *root_hist;  /* bins->total x 3 (g, h, count) */
    int64_t *leaf_begin, *leaf_end; /* per node: a leaf's rows are rows[begin, end) of the
                                       permutation sb_tree_grow left behind */
} sb_grown;

/* The nodes of a tree being grown (both growers: grow.c, grow_dev.c), with
 * each node's split bin and exact gradient and hessian sums beside them. */
typedef struct sb_node_list {
    sb_tree_node *nodes;
    int32_t *split_bin;
    int64_t *node_g, *node_h;
    float *lo, *hi; /* per node: its output bounds (monotone constraints); NULL: none */
    uint32_t *cat_bits; /* per node 8 words: a categorical split's left bins; NULL: none */
    uint8_t *cat_reg;   /* per node: 1 when a sorted category split made it (its value takes cat_l2) */
    float cat_l2;       /* set before finish (with categorical): the extra L2 of such a leaf */
    int32_t n, cap;
    int32_t bounded; /* set before the first add: keep lo and hi */
    int32_t categorical; /* set before the first add: keep cat_bits */
} sb_node_list;

/* The best split of a node with sums (G, H, C) and histogram hist (feature
 * f's at hoff[f]) over the features mask allows (NULL: all), by the plain
 * search (no per-node rules): each numeric feature's scan, each categorical
 * one's (catf[f]; catf NULL: none) category search; catbits (8 words) gets
 * the winner's left bins when it is categorical. Both growers call it. */
void sb_grow_best_plain(const sb_bins *bins, const int32_t *hoff, const sb_k_hbin *hist, int32_t nf,
                        const uint8_t *mask, const uint8_t *catf, const sb_k_cat_rules *cat, int64_t G, int64_t H,
                        int64_t C, const sb_k_split_rules *r, sb_k_split *best, uint32_t *catbits);

/* A new leaf with sums (G, H) and C rows; its index in *id. */
sb_status sb_node_list_add(sb_node_list *l, int64_t G, int64_t H, int64_t C, int32_t *id);
/* Leaf values from the exact sums (kernels/gbdt.h; clamped to the node's
 * bounds when the list keeps them; a child of a sorted category split with
 * reg_lambda + cat_l2, the L2 its split was scored with, as LightGBM values
 * it), then the nodes and split bins handed over to out (the list keeps only
 * its sums). */
void sb_node_list_finish(sb_node_list *l, float g_scale, float h_scale, float reg_lambda, float reg_alpha,
                         float learning_rate,
                         sb_grown *out);
void sb_node_list_release(sb_node_list *l);
/* g->tree's code sets from g->cat_bits: one set per categorical node, in node
 * order, holding the codes (bins' upper values) of its left bins ascending. */
sb_status sb_grown_cat_sets(sb_grown *g, const sb_bins *bins);

/* Grow a tree on rows[0..nrows) (a permutation scratch: reordered in place).
 * Row indices are int32 (half the memory traffic of int64 in the partition and
 * the histogram gathers), so the binned matrix may hold at most 2^31 - 1 rows;
 * sb_tree_grow takes int64 indices and converts them. */
typedef struct sb_grow_scratch sb_grow_scratch;
sb_status sb_tree_grow_i32(const sb_grow_params *p, const sb_grow_data *d, int32_t *rows, int64_t nrows,
                           sb_grow_scratch *ws, sb_grown *out);

/* Row-sized work buffers a caller may keep from one tree to the next (ws above;
 * NULL: the grower allocates its own). Freshly allocated large buffers come
 * from the OS as untouched pages, and faulting in 16 bytes a row for every tree
 * cost more than a tenth of the histogram time. Zero-initialize; release once. */
struct sb_grow_scratch {
    int32_t *tmp, *og;
    uint64_t *ohc;
    int64_t cap; /* rows the buffers hold */
    /* Node histograms and the workers' partials, kept too: a histogram of a
     * few thousand bins is past malloc's mmap threshold, so each new one was
     * mapped, faulted in and unmapped again, every split of every tree. */
    void **hist_free;   /* free histogram buffers of hist_total entries each */
    int32_t nhist_free, hist_free_cap;
    int32_t hist_total;
    void *part;         /* the workers' partial histograms */
    size_t part_bytes;
    /* SAMEBITS_GBDT_TIMING=1 (set by the caller): seconds spent, summed over
     * trees, in the root histogram, one-leaf expansions (partition, smaller
     * child's histogram, subtraction, split search) and batched expansions */
    int timing;
    double t_root, t_part, t_hist, t_search, t_batch;
};
void sb_grow_scratch_release(sb_grow_scratch *ws);
sb_status sb_tree_grow(const sb_grow_params *p, const sb_grow_data *d, int64_t *rows, int64_t nrows,
                       sb_grown *out);
void sb_grown_release(sb_grown *g);

/* The leaf that row r of a feature-major binned matrix of n rows reaches. */
static inline int32_t sb_tree_leaf_binned(const sb_grown *g, const uint8_t *binned, int64_t n, int64_t r) {
    const sb_tree_node *nodes = g->tree.nodes;
    int32_t k = 0;
    while (nodes[k].feature >= 0) {
        uint8_t b = binned[(int64_t)nodes[k].feature * n + r];
        int left = nodes[k].categorical ? (int)((g->cat_bits[8 * k + (b >> 5)] >> (b & 31)) & 1u)
                 : b == 0            ? nodes[k].default_left
                                     : b <= g->split_bin[k];
        k = left ? nodes[k].left : nodes[k].right;
    }
    return k;
}

#endif
