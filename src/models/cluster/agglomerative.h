/*
 * agglomerative.h: hierarchical agglomerative clustering (agglomerative.c;
 * docs/cluster.md): the fit behind sb_agglomerative_fit and the fitted
 * model's attributes. It does not predict: its labels are the training rows'.
 */
#ifndef SB_MODELS_CLUSTER_AGGLOMERATIVE_H
#define SB_MODELS_CLUSTER_AGGLOMERATIVE_H
#include "../model.h"
#include "../../io/dataset.h"

/* Integers "n_clusters", "n_leaves", "linkage" (0 ward, 1 complete, 2
 * average, 3 single); SB_ERR_NOT_FOUND for another name. */
sb_status sb_agglo_int(const sb_model *m, const char *name, int64_t *out);
/* Index arrays "labels" (n) and "children" ((n - 1) x 2, scikit-learn's
 * children_); *needed, cap and out as sb_model_get_indices. */
sb_status sb_agglo_indices(const sb_model *m, const char *name, int64_t *out, size_t cap, size_t *needed);

#endif
