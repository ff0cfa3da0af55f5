/*
 * fdev.h: a forest device, the interface a backend implements to grow random
 * forest and Extra Trees trees where the data lives (a GPU's memory, or the
 * host's for the reference implementation). The level-wise grower
 * (src/models/forest/forest_dev.c) drives it: it keeps the trees and their
 * node numbering; the device holds the binned matrix, each row's class or
 * fixed-point label, and for a batch of trees their in-bag rows with
 * multiplicities (bootstrap count and, weighted, fixed-point weight),
 * partitioned by node. Isolation forests (isolation.c's trees) use the
 * same rows and partition with their own begin and split (iso_*).
 *
 * Every operation is exact integer work (draws of the counter generator,
 * integer sums, a partition) or one of the kernel bodies of
 * src/kernels/forest.h, so any schedule of it gives the same bits. Rows of a
 * node are a set: no operation depends on their order, so partitions may be
 * unstable. Operations run in call order; a status other than SB_OK leaves
 * the device usable only for close.
 *
 * Two implementations: "cpu-batched" (fdev_host.c, always built: the
 * reference that CI runs where no GPU is) and the GPU one (fdev_gpu.c), one
 * host schedule over the device layer (src/device/device.h) for CUDA and
 * OpenCL alike, launching the entry kernels of
 * src/kernels/entry/forest_entry.h.
 */
#ifndef SB_MODELS_FOREST_FDEV_H
#define SB_MODELS_FOREST_FDEV_H
#include "../../core/internal.h"
#include "../../device/device.h"
#include "../../kernels/forest.h"
#include "../../kernels/tree.h"

typedef struct sb_fdev sb_fdev;

/* What a device copies at open; the caller keeps ownership of every array. */
typedef struct sb_fdev_setup {
    const uint8_t *binned;  /* feature-major: feature f's bins at binned + f * n (0: missing) */
    int64_t n;
    int32_t nf;
    const int32_t *nbins;   /* per feature: value bins 1..nbins[f] */
    const int32_t *value;   /* n: the class (classification) or y in fixed point (regression) */
    sb_k_forest_rules rules;
    uint64_t seed;
    int32_t mtry;           /* features drawn per node */
    int32_t extra;          /* 1: Extra Trees (one drawn threshold per feature) */
    int32_t bootstrap;      /* 1: ndraw draws with replacement a tree; 0: every row once */
    int32_t max_depth;      /* -1: none (the grower's; the device needs none of these three) */
    int64_t ndraw;
    int64_t min_samples_split;
    /* Weighted forests (rules.weighted, docs/forest.md): every row's
     * fixed-point weight (wq, n values, rules.wexp their scale) or, for
     * balanced_subsample (subsample = 1, wq NULL), each tree's own from its
     * draws: the class weights sb_k_forest_class_weight of its draw counts
     * times the sample weights sw (n values, NULL: 1), in fixed point at the
     * tree's scale. A position's multiplicity is its count times its row's
     * fixed-point weight; rows of weight zero are not in a tree. */
    const int32_t *wq;
    const float *sw;
    int32_t subsample;
    /* Isolation forest (the iso operations): psi rows a tree, drawn without
     * replacement (sb_k_iforest_sample_row). */
    int32_t psi;
    sb_device_kind device;  /* the GPU implementation's backend (CUDA or OpenCL) */
} sb_fdev_setup;

/* A device's copy of setup s: its array pointers cleared (the device keeps
 * its own copies; the caller's arrays are not kept), the row stride of
 * row-major bins (nf rounded up to 4 bytes) and the largest nbins. */
static inline void sb_fdev_setup_keep(const sb_fdev_setup *s, sb_fdev_setup *keep, int32_t *stride, int32_t *maxnb) {
    *keep = *s;
    keep->binned = NULL;
    keep->nbins = NULL;
    keep->value = NULL;
    keep->wq = NULL;
    keep->sw = NULL;
    *stride = (s->nf + 3) & ~3;
    *maxnb = 0;
    for (int32_t f = 0; f < s->nf; f++)
        if (s->nbins[f] > *maxnb) *maxnb = s->nbins[f];
}

/* A node of the current batch: its rows are positions [begin, end) of the
 * batch's row array; key: its path key (sb_k_forest_child_key). For a split,
 * value bins 1..bin of feature go left, missing values too when dl. min_w:
 * the weight each child needs (its tree's min_weight_fraction_leaf share; 0:
 * none), which split uses in place of rules.min_w. */
typedef struct sb_fdev_node {
    int64_t begin, end;
    uint64_t key;
    int32_t feature, bin, dl;
    float min_w;
} sb_fdev_node;

typedef struct sb_fdev_ops {
    const char *name;
    /* Row positions a batch of trees may take (a tree takes at most n): the
     * grower's batch size, a memory choice that cannot change a bit. */
    int64_t batch_positions;
    /* A device holding a copy of the setup's data. A missing backend or
     * device is SB_ERR_BACKEND_UNAVAILABLE, named; so is a setup it cannot
     * grow the CPU's trees for (a device without weights refuses
     * rules.weighted). */
    sb_status (*open)(const sb_fdev_setup *s, sb_fdev **out);
    void (*close)(sb_fdev *d); /* NULL is a no-op */
    /* Trees [t0, t0 + ntrees) become the batch: tree t0 + i's in-bag rows
     * (count: its draws, sb_k_forest_boot_row; or 1 each; weighted, only rows
     * of positive weight) take positions [off_i, off_i + count[i]) of the
     * row array, off_i the sum of the counts before i. count: ntrees
     * distinct-row counts, out. wexp: ntrees scales of the trees' fixed-point
     * weights, out (rules.wexp unless balanced_subsample). A weight the fixed
     * point cannot hold (not finite, or positive and rounding to zero) is
     * SB_ERR_LIMIT, named. */
    sb_status (*begin)(sb_fdev *d, int32_t t0, int32_t ntrees, int64_t *count, int32_t *wexp);
    /* sums[i * nv, (i + 1) * nv): the exact sums of node i's rows (the roots';
     * a child's come from its parent's split). */
    sb_status (*sums)(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, int64_t *sums);
    /* out[i]: the best split of node i (sums tot + i * nv) among the features
     * its key draws (sb_k_forest_selected), under sb_k_fsplit_better; valid = 0
     * when it has none. lsum + i * nv: the sums of the rows it sends left
     * (when valid). Nodes of at most SB_K_FOREST_SMALL_ROWS rows (and nv at
     * most SB_K_FOREST_SMALL_NV) are searched on their rows
     * (sb_k_forest_small_feature), the others on histograms. */
    sb_status (*split)(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, const int64_t *tot, sb_k_fsplit *out,
                       int64_t *lsum);
    /* Node i's rows: those going left (feature, bin, dl) first, then the
     * others, in any order within each side; nleft[i]: how many go left.
     * The positions of nodes not in the call may be lost (a device may
     * partition into other buffers and swap): the grower never reads them
     * again, since a node it does not split is a leaf. */
    sb_status (*partition)(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, int64_t *nleft);
    /* Isolation forest (NULL: the device has none, refused by name). Trees
     * [t0, t0 + ntrees) become the batch, psi distinct rows each (count 1),
     * tree i's at positions [i * psi, (i + 1) * psi): drawn on the device
     * (sb_k_iforest_sample_row) when rows is NULL, else rows' ntrees * psi
     * (a weighted fit's subsamples, drawn on the host by sb_iso_wdraw_tree). */
    sb_status (*iso_begin)(sb_fdev *d, int32_t t0, int32_t ntrees, const int32_t *rows);
    /* out[i]: node i's split (isolation.c's rule): valid = 0 when no feature
     * varies in it; else the candidate sb_k_iforest_pick draws among the
     * features not constant in it (by bin, missing as bin 0) and the bin
     * sb_k_iforest_bin places (dl = 1: missing values go left). */
    sb_status (*iso_split)(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, sb_k_fsplit *out);
    /* Row positions a batch may take on this opened device (its memory), in
     * place of batch_positions; NULL: batch_positions. A memory choice that
     * cannot change a bit. */
    int64_t (*positions)(sb_fdev *d);
} sb_fdev_ops;

/* The implementation of device kind k: the host reference for cpu-batched,
 * the GPU one for cuda and opencl (whose open refuses, by name, a backend
 * this build lacks or a device that is absent). */
sb_status sb_fdev_find(sb_device_kind k, const sb_fdev_ops **out);
const sb_fdev_ops *sb_fdev_host_ops(void);
const sb_fdev_ops *sb_fdev_gpu_ops(void);

#endif
