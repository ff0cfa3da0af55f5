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

#endif
