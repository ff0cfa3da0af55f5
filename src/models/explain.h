/*
 * explain.h: model introspection for the tree families (issues 20 and 21):
 * each row's leaf in every tree (pred_leaf) and exact path-dependent TreeSHAP
 * feature contributions (pred_contrib), on the host or on a device, and the
 * leaf numbering that pred_leaf, `samebits dump` and Python share
 * (src/models/explain.c, docs/explain.md).
 */
#ifndef SB_MODELS_EXPLAIN_H
#define SB_MODELS_EXPLAIN_H
#include "model.h"

struct sb_dataset;

/* LightGBM's numbering of tree t's nodes: leafno[k] is leaf k's index among
 * the tree's leaves (-1 for an internal node), split[k] internal node k's
 * index among its splits (-1 for a leaf; split may be NULL). Splits are taken
 * in the order of their left children's node indices (the order in which
 * the growers append children, so the order of the splits); the root is leaf
 * 0, and a split leaves its number to its left child and gives the right
 * child the next unused one, as LightGBM numbers leaves while it grows. */
void sb_tree_leaf_numbers(const sb_tree *t, int32_t *leafno, int32_t *split);

/* SB_OK when every tree of m carries usable covers (TreeSHAP's weights): a
 * root count above 0 and every internal node's count the sum of its
 * children's; else SB_ERR_INVALID_INPUT naming the tree and node (a file
 * written without counts cannot be explained, and is never guessed at). */
sb_status sb_model_check_covers(const sb_model *m);

/* sb_model_predict_on for the kinds SB_PREDICT_LEAF (leaf indices as floats,
 * exact: every index is below 2^24) and SB_PREDICT_CONTRIB (TreeSHAP). */
sb_status sb_model_explain_on(const sb_model *m, const struct sb_dataset *d, int32_t kind, const char *device,
                              float *out, size_t cap, size_t *needed);

#endif
