/*
 * forest_dev.h: random forest and Extra Trees trees grown on a forest device
 * (src/models/forest/fdev.h); the schedule and why it gives the CPU grower's trees
 * are in forest_dev.c.
 */
#ifndef SB_FOREST_DEV_H
#define SB_FOREST_DEV_H
#include "../model.h"
#include "../trees/binning.h"
#include "fdev.h"

/* Trees first..ntrees-1 of a forest of ntrees on the device named device
 * ("cuda", "cpu-batched") opened on setup (first > 0: a warm start, whose
 * trees below first the caller fills in); estimator t becomes model trees
 * t * ncopies + k (k < ncopies: one per class for classification, whose
 * leaves hold class k's frequency; one for regression), each leaf divided by
 * ntrees, nodes numbered as forest.c numbers them. min_weight_fraction_leaf:
 * the share of each tree's total weight a child needs (0: none). trees:
 * ntrees * ncopies, zeroed; on failure the caller frees what was filled in. */
sb_status sb_forest_grow_dev(const char *device, const sb_fdev_setup *setup, const sb_bins *bins, int32_t first,
                             int32_t ntrees, int32_t ncopies, float min_weight_fraction_leaf, sb_tree *trees);

/* Trees first..ntrees-1 of an isolation forest of ntrees
 * (src/models/forest/isolation.c's trees, byte for byte; the caller fills in
 * those below first) on the device named device, opened on setup (binned,
 * n, nf, nbins, seed, psi; value may be NULL): level by level, a batch of
 * trees at a time, nodes split until max_depth or a node whose features are
 * all constant or that holds one row; leaves valued with c(psi) = cpsi.
 * trees: ntrees, zeroed; on failure the caller frees what was filled in. */
sb_status sb_iforest_grow_dev(const char *device, const sb_fdev_setup *setup, const sb_bins *bins, int32_t first,
                              int32_t ntrees, int32_t max_depth, float cpsi, sb_tree *trees);

#endif
