/*
 * tdev.h: a tree device, the operations that train gradient boosting trees
 * where the data lives (a GPU's memory, or the host's for the reference
 * implementation). The batched grower (src/models/trees/grow_dev.c)
 * drives it: it keeps the tree and decides every split from what the device
 * returns; the device holds the binned matrix, the margins, the quantized
 * gradients, the row permutation and the node histograms, and runs the kernel
 * bodies of src/kernels/ over them.
 *
 * Every operation is exact integer work or one of the kernel bodies, so any
 * schedule of it gives the same bits. Operations run in call order; a status
 * other than SB_OK leaves the device usable only for close.
 *
 * Two implementations: "cpu-batched" (tdev_host.c, always built: the
 * reference that CI runs where no GPU is) and the GPU one (tdev_gpu.c), one
 * host schedule over the device layer (src/device/device.h) for every GPU
 * backend (CUDA with `make CUDA=1`; OpenCL by default, its loader opened at
 * run time), launching the entry kernels of src/kernels/entry/tree_entry.h.
 */
#ifndef SB_MODELS_TREES_TDEV_H
#define SB_MODELS_TREES_TDEV_H
#include "../../core/internal.h"
#include "../../device/device.h"
#include "../../kernels/tree.h"

typedef struct sb_tdev sb_tdev;

/* Margins per row a device supports (multiclass labels are at most 1023). */
#define SB_TDEV_MAX_CLASS 1024

/* What a device copies at open; the caller keeps ownership of every array. */
typedef struct sb_tdev_setup {
    const uint8_t *binned;  /* feature-major: feature f's bins at binned + f * n */
    int64_t n;
    int32_t nf;
    const int32_t *nbins;   /* per feature; its histogram has nbins + 1 entries (bin 0: missing) */
    const int32_t *hoff;    /* per feature: its first histogram entry */
    int32_t total;          /* histogram entries of a node */
    const float *label;     /* n */
    const float *weight;    /* n, or NULL for all ones */
    int32_t objective;      /* SB_K_OBJ_* */
    int32_t K;              /* margins per row */
    const float *base;      /* K values: class c's margins start at base[c] */
    sb_device_kind device;  /* the GPU implementation's backend (CUDA or OpenCL) */
    float obj_param;        /* the objective's parameter (sb_k_row_gradients) */
} sb_tdev_setup;

/* Stable partition of rows[begin, end): rows whose bin of feature goes left
 * (sb_k_goes_left) first, in their order, then the others in theirs. */
typedef struct sb_tdev_seg {
    int64_t begin, end;
    int32_t feature, split_bin, default_left;
    int32_t categorical; /* 1: rows whose bin is in cat go left (kernels/tree.h, sb_k_cat_scan) */
    uint32_t cat[8];
} sb_tdev_seg;

/* Whether a row with bin b goes left in segment s: its bin rule
 * (sb_k_goes_left), or a categorical split's 256-bit set (the host side of
 * tree_entry.h's ocl_seg_left). */
static inline int sb_tdev_seg_left(const sb_tdev_seg *s, uint32_t b) {
    if (s->categorical) return (int)((s->cat[b >> 5] >> (b & 31u)) & 1u);
    return sb_k_goes_left(b, s->split_bin, s->default_left);
}

/* Histogram slot := the exact histogram of rows[begin, end) over the masked
 * features; the other features' entries are zero. */
typedef struct sb_tdev_hjob {
    int64_t begin, end;
    int32_t slot, pad_;
} sb_tdev_hjob;

/* Histogram slot large -= histogram slot small (a node from its parent and sibling). */
typedef struct sb_tdev_sub {
    int32_t large, small;
} sb_tdev_sub;

/* A node whose best split over the masked features is wanted. */
typedef struct sb_tdev_node {
    int64_t G, H, C;
    int32_t slot, pad_;
} sb_tdev_node;

typedef struct sb_tdev_ops {
    const char *name;
    /* A device holding a copy of the setup's data, margins set to base. A
     * missing backend or device is SB_ERR_BACKEND_UNAVAILABLE, named. */
    sb_status (*open)(const sb_tdev_setup *s, sb_tdev **out);
    void (*close)(sb_tdev *d); /* NULL is a no-op */
    /* Gradients of every class from the margins; maxabs[2c], maxabs[2c+1]:
     * the largest |g| and h of class c over all rows (NaN never taken). */
    sb_status (*gradients)(sb_tdev *d, float *maxabs);
    /* Quantized gradients of class cls: round half even of g * g_scale, h * h_scale. */
    sb_status (*quantize)(sb_tdev *d, int32_t cls, float g_scale, float h_scale);
    /* The rows of the next tree: rows[0, nrows) (ascending), or all rows when NULL. */
    sb_status (*set_rows)(sb_tdev *d, const int32_t *rows, int64_t nrows);
    /* nf flags: 1 = the split search may use the feature. */
    sb_status (*set_mask)(sb_tdev *d, const uint8_t *mask);
    /* At least nslots histogram slots, keeping the contents of the existing ones. */
    sb_status (*reserve)(sb_tdev *d, int32_t nslots);
    sb_status (*partition)(sb_tdev *d, const sb_tdev_seg *segs, int32_t nseg);
    sb_status (*hist)(sb_tdev *d, const sb_tdev_hjob *jobs, int32_t njobs);
    sb_status (*subtract)(sb_tdev *d, const sb_tdev_sub *subs, int32_t nsubs);
    /* out[i]: the best split of nodes[i] under the total order (valid = 0: none). */
    sb_status (*best)(sb_tdev *d, const sb_tdev_node *nodes, int32_t nnodes, const sb_k_split_rules *r,
                      sb_k_split *out);
    /* Entries [first, first + count) of a slot's histogram. */
    sb_status (*read_hist)(sb_tdev *d, int32_t slot, int32_t first, int32_t count, sb_k_hbin *out);
    /* Margin c of every row += the value of the leaf its bins reach in the tree. */
    sb_status (*add_tree)(sb_tdev *d, const sb_k_bnode *nodes, int32_t nnodes, int32_t cls);
    sb_status (*read_quantized)(sb_tdev *d, int32_t *gq, int32_t *hq); /* n each */
    sb_status (*read_margins)(sb_tdev *d, float *margins);             /* n x K, row-major */
    /* Class cls's gradients and hessians := g[0, n), h[0, n), computed by the
     * host (the ranking objectives, gbdt/rank.c), in place of gradients. */
    sb_status (*set_gradients)(sb_tdev *d, int32_t cls, const float *g, const float *h);
    /* The margins := m (n x K, row-major): continued training's start, the
     * host's predictions of the initial model (gbdt.c). */
    sb_status (*set_margins)(sb_tdev *d, const float *m);
    /* Optional (NULL: none; only the GPU one on CUDA does it): the whole of a
     * slot's histogram summed over the ranks on the device and read into out
     * (total entries), the slot itself left as it was (this rank's). The
     * slot is copied to a scratch buffer whose raw device address (CUDA
     * memory) is given to dev_sum(ctx, address, 3 * total), which sums those
     * int64 over the ranks in place on the default stream (distributed=nccl:
     * sb_dist_sum_hist_device); the read-back waits for it. */
    sb_status (*reduce_hist)(sb_tdev *d, int32_t slot, sb_k_hbin *out,
                             void (*dev_sum)(void *ctx, void *dptr, int64_t n), void *ctx);
} sb_tdev_ops;

/* The implementation of device kind k: the host reference for cpu-batched,
 * the GPU one for cuda and opencl (whose open refuses, by name, a backend
 * this build lacks or a device that is absent). */
sb_status sb_tdev_find(sb_device_kind k, const sb_tdev_ops **out);
const sb_tdev_ops *sb_tdev_host_ops(void);
const sb_tdev_ops *sb_tdev_gpu_ops(void);

/* Prediction on a GPU of kind (CUDA or OpenCL): margins of n rows of x
 * (row-major, ncols floats) by the flattened trees (sb_model_flatten),
 * finished per kind_ (sb_k_finish_row) into out (n x per_row). An absent
 * backend or device is SB_ERR_BACKEND_UNAVAILABLE, named. */
sb_status sb_tree_predict_device(sb_device_kind kind, const sb_k_pnode *nodes, int32_t nnodes, const int32_t *start,
                                 int32_t ntrees, int32_t K, int32_t objective, const float *base, const float *x,
                                 int64_t n, int32_t ncols, int32_t kind_, int32_t per_row, float *out);

/* pred_leaf on a GPU of kind: each of n rows' leaf number (leafno, per
 * flattened node) in every tree, into out (floats, n x ntrees) or, out NULL,
 * into iout (int32). An absent backend or device is
 * SB_ERR_BACKEND_UNAVAILABLE, named. */
sb_status sb_tree_leaf_device(sb_device_kind kind, const sb_k_pnode *nodes, int32_t nnodes, const int32_t *start,
                              const int32_t *leafno, int32_t ntrees, const float *x, int64_t n, int32_t ncols,
                              float *out, int32_t *iout);

/* pred_contrib on a GPU of kind: sb_k_contrib_row for each of n rows into out
 * (n x K x (F + 1)), cover and ev as the host prepares them, the scratch of
 * depth + 1 levels of cap path elements per row allocated on the device for
 * batches of rows. */
sb_status sb_tree_contrib_device(sb_device_kind kind, const sb_k_pnode *nodes, int32_t nnodes, const int32_t *start,
                                 const float *cover, const float *ev, int32_t ntrees, int32_t K, int32_t F,
                                 int32_t depth, int32_t cap, const float *x, int64_t n, int32_t ncols, float *out);

#endif
