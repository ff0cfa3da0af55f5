/*
 * cons.h: per-node rules of the split search, shared by both growers (grow.c
 * on the CPU, grow_dev.c on a tree device):
 *   - monotone constraints (monotone_constraints, LightGBM's "basic" method):
 *     bounds on each node's output (src/kernels/tree.h, sb_k_mono);
 *   - interaction constraints (interaction_constraints): a branch uses
 *     features of one constraint set only ("any two features appear in one
 *     branch only when some set holds both", as LightGBM documents it);
 *   - feature_fraction_bynode: each node searches a fraction of the tree's
 *     features, drawn by Philox keyed by (seed, tree, the node's path).
 * Every rule reads the node's path, never the order in which nodes are
 * visited, so the growers' schedules (expansion ahead, batches, threads,
 * devices) change no bit. When a tree has any of them, its splits are chosen
 * on the host from the node's exact integer histogram by the kernels' scan
 * (sb_k_split_scan_c): a tree device hands the histogram back (read_hist).
 */
#ifndef SB_TREES_CONS_H
#define SB_TREES_CONS_H
#include "../../core/internal.h"
#include "../../kernels/tree.h"

#define SB_CONS_MAX_SETS 64 /* interaction sets: one bit each */

/* The rules of one tree; the caller owns the arrays. */
typedef struct sb_grow_cons {
    const int8_t *monotone;   /* nf: +1 increasing, -1 decreasing, 0 free; NULL: none */
    const uint64_t *set_bits; /* nf: bit s when the feature is in interaction set s; NULL: no sets */
    float bynode;             /* feature_fraction_bynode; >= 1: every feature */
    uint64_t seed;
    uint64_t tree;            /* the tree's index in the model (bynode's draws) */
} sb_grow_cons;

/* A node's state under the rules: its output bounds, its path's key, and the
 * interaction sets that hold every feature of its path (lone: a path feature
 * in no set, then the only feature the node may use; -1 none). */
typedef struct sb_node_cons {
    float lo, hi;
    uint64_t key;
    uint64_t compat;
    int32_t lone;
    int32_t root; /* 1: the root (an empty path: every feature allowed) */
} sb_node_cons;

/* 1 when a tree under gc has any rule (NULL: none). */
int sb_grow_cons_on(const sb_grow_cons *gc);

/* The root's state. */
void sb_node_cons_root(const sb_grow_cons *gc, sb_node_cons *out);

/* The states of the two children of node P (sums G, H) split by b:
 * kid[0] left, kid[1] right. Monotone: the children's outputs clamped to P's
 * bounds, their midpoint (wl + wr) * 0.5 bounds the left child above and the
 * right below for an increasing feature (the mirror for a decreasing one). */
void sb_node_cons_children(const sb_grow_cons *gc, const sb_k_split_rules *r, const sb_node_cons *P,
                           const sb_k_split *b, int64_t G, int64_t H, sb_node_cons kid[2]);

/* The best split of a node (sums G, H, C, state nc) over the features that
 * mask (nf flags; NULL: all) and the rules allow, from its histogram hist
 * (feature f's bins at hist + hoff[f], nbins[f] + 1 entries), by the kernels'
 * scan and total order; a categorical feature (catf[f]; catf NULL: none) by
 * the category search with rules cat, under the node's bounds, catbits (8
 * words) then getting the winner's left bins. Returns 0 when out of memory
 * (no message: it may run in a pool task), *best then invalid. */
int sb_cons_best(const sb_grow_cons *gc, const sb_node_cons *nc, const sb_k_hbin *hist, const int32_t *hoff,
                 const int32_t *nbins, int32_t nf, const uint8_t *mask, const uint8_t *catf,
                 const sb_k_cat_rules *cat, int64_t G, int64_t H, int64_t C, const sb_k_split_rules *r,
                 sb_k_split *best, uint32_t *catbits);

/* A leaf's value under bounds [lo, hi]: its output clamped, times the
 * learning rate (sb_k_leaf_value's bits when the bounds do not bite). */
float sb_cons_leaf_value(float g, float h, float reg_lambda, float reg_alpha, float learning_rate, float lo,
                         float hi);

#endif
