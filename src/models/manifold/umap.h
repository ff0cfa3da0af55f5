/*
 * umap.h: UMAP (umap.c; docs/umap.md): the fit behind sb_umap_fit_transform
 * and the a/b curve fit the tests check on its own.
 */
#ifndef SB_MODELS_MANIFOLD_UMAP_H
#define SB_MODELS_MANIFOLD_UMAP_H
#include "../model.h"
#include "../../io/dataset.h"

/* a and b of 1 / (1 + a x^(2b)) fitted to umap-learn's min_dist/spread curve
 * (umap.c's header comment): a pure function of (spread, min_dist). */
void sb_umap_find_ab(float spread, float min_dist, float *a, float *b);

/* Why the frozen fit u is not one this library writes (its parameters out of
 * their ranges, a and b not the curve of spread and min_dist), or NULL: the
 * model file's writer and reader. */
const char *sb_umap_state_check(const sb_umap *u);
/* The rows of qt embedded against the model's frozen fit (predict.c's road
 * for SB_PREDICT_TRANSFORM; any other kind refused by name). */
sb_status sb_umap_model_transform(const sb_model *m, const sb_table *qt, int32_t kind, float *out, size_t cap,
                                  size_t *needed);
/* sb_model_get_int's and sb_model_get_array's UMAP names. */
sb_status sb_umap_int(const sb_model *m, const char *name, int64_t *out);
sb_status sb_umap_array(const sb_model *m, const char *name, float *out, size_t cap, size_t *needed);

/* The epochs of optimize="batched" (umap_batched.c, kernels/umap.h): edges
 * (head[e], tail[e]) with sampling periods eps[e] in CSR order, on the host's
 * threads or, device SB_DEVICE_CUDA or SB_DEVICE_OPENCL, on that GPU; emb
 * (n x nc) the initialization in, the embedding out; the kept epochs
 * recorded on card (sb_umap_record_epoch). The same bits on every device and
 * at every thread count. */
typedef struct sb_umap_epochs {
    int64_t n, ne;
    int32_t nc, n_epochs, neg_rate, device;
    float a, b, gamma, lr;
    uint64_t seed;
    const int32_t *head, *tail;
    const float *eps;
} sb_umap_epochs;
sb_status sb_umap_optimize_batched(const sb_umap_epochs *a, float *emb, sb_card *card);

/* 1 when epoch t (0-based) of n_epochs is one the card keeps: 1, 2, 4, 8, ... and the last. */
static inline int sb_umap_epoch_kept(int32_t t, int32_t n_epochs) { return t + 1 == n_epochs || ((t + 1) & t) == 0; }
/* Records "umap.epoch.<t + 1>" (count floats of emb) when card keeps epoch t. */
sb_status sb_umap_record_epoch(sb_card *card, int32_t t, int32_t n_epochs, const float *emb, uint64_t count);

#endif
