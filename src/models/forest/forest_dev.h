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

/* An isolation forest's weighted subsample (isolation.c; docs/forest.md,
 * "Isolation forest sample weights"): each row's weight in fixed point (q, n values: the
 * largest weight scaled by a power of two into [2^31, 2^32), truncated; a
 * positive weight that truncates to 0 counts 1; weight 0 stays 0) and their
 * Fenwick tree (fen, n + 1 prefix sums, 1-based), shared read-only by every
 * tree. fen == NULL: every weight equal, the unweighted draw. */
typedef struct sb_iso_wdraw {
    int64_t n;
    int64_t npos;   /* rows of positive weight */
    uint32_t *q;
    uint64_t *fen;
    uint64_t total; /* the sum of q, < 2^63 */
} sb_iso_wdraw;

/* Check weights w (n values, NULL: none) and quantize them into *out; named
 * refusals (SB_ERR_INVALID_INPUT) for a negative, NaN or infinite weight and
 * for every weight zero, before any work. Equal weights leave out->fen NULL. */
sb_status sb_iso_wdraw_init(const float *w, int64_t n, sb_iso_wdraw *out);
void sb_iso_wdraw_release(sb_iso_wdraw *wd);

/* Tree t's weighted subsample: psi (<= wd->npos) distinct rows, in draw
 * order, into rows. scratch: n + 1 values holding wd->fen (a copy), which the
 * draw changes and restores, so a caller drawing tree after tree copies it
 * once: psi log2 n steps a tree, not n. */
void sb_iso_wdraw_tree(const sb_iso_wdraw *wd, uint64_t seed, int32_t t, int32_t psi, uint64_t *scratch,
                       int32_t *rows);

/* Trees first..ntrees-1 of an isolation forest of ntrees
 * (src/models/forest/isolation.c's trees, byte for byte; the caller fills in
 * those below first) on the device named device, opened on setup (binned,
 * n, nf, nbins, seed, psi; value may be NULL): level by level, a batch of
 * trees at a time, nodes split until max_depth or a node whose features are
 * all constant or that holds one row; leaves valued with c(psi) = cpsi.
 * wd: the weighted draw (NULL or wd->fen NULL: unweighted), whose
 * subsamples are drawn on the host and placed on the device (iso_begin's
 * rows). trees: ntrees, zeroed; on failure the caller frees what was filled in. */
sb_status sb_iforest_grow_dev(const char *device, const sb_fdev_setup *setup, const sb_bins *bins, int32_t first,
                              int32_t ntrees, int32_t max_depth, float cpsi, const sb_iso_wdraw *wd, sb_tree *trees);

#endif
