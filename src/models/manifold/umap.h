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

#endif
