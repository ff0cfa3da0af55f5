/*
 * grow_dev.h: growing a tree on a tree device (src/models/trees/tdev.h); the
 * schedule and why it gives the CPU grower's tree are in grow_dev.c.
 */
#ifndef SB_TREES_GROW_DEV_H
#define SB_TREES_GROW_DEV_H
#include "grow.h"
#include "tdev.h"

/* Grow a tree on the device's rows [0, nrows) (set by set_rows), quantized
 * gradients (quantize) and feature mask (set_mask). hoff/total: the histogram
 * layout given at open; mask: the host's copy of the feature mask; catf/cat:
 * the categorical features and their search's rules (catf NULL: none; then
 * every split is chosen on the host from the node's histogram, as under
 * per-node rules). The result owns its nodes, split bins and category sets;
 * root_hist only when want_root_hist (for identity cards); leaf_begin/leaf_end
 * are NULL: margins are updated on the device (add_tree).
 * reduce (gbdt.c, distributed=mpi), or NULL: the device holds one rank's
 * block of rows, and reduce(rctx, v, n) replaces v[0..n) by its exact sum over
 * the ranks (sb_grow_data.reduce's contract). The grower then sums every
 * histogram it searches (read back from the device) and the root's row count
 * over the ranks, in the same order on every rank, and searches the global
 * histograms on the host; the device keeps this rank's histograms, from which
 * each split's local left count is read for the partition. Every decision is
 * then the single process's. dev_sum (with reduce; distributed=nccl), or
 * NULL: the histograms are summed on the device instead (tdev.h,
 * reduce_hist; the root's count still through reduce). */
sb_status sb_tree_grow_dev(const sb_tdev_ops *ops, sb_tdev *dev, const sb_grow_params *p, const sb_bins *bins,
                           int32_t nf, const int32_t *hoff, int32_t total, float g_scale, float h_scale,
                           const uint8_t *mask, const uint8_t *catf, const sb_k_cat_rules *cat, int64_t nrows,
                           int want_root_hist, void (*reduce)(void *rctx, int64_t *v, int64_t n),
                           void (*dev_sum)(void *rctx, void *dptr, int64_t n), void *rctx, sb_grown *out);

/* The grown tree as the device walks it (bins instead of thresholds, each
 * categorical split's bin set after the nodes); *count entries; the caller
 * frees *out with sb_free. */
sb_status sb_grown_bnodes(const sb_grown *g, sb_k_bnode **out, int32_t *count);

#endif
