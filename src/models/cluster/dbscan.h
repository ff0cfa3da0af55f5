/*
 * dbscan.h: the DBSCAN family (dbscan.c; docs/cluster.md): the fit behind
 * sb_dbscan_fit and the fitted model's attributes. DBSCAN does not predict:
 * its labels are the training rows'.
 */
#ifndef SB_MODELS_CLUSTER_DBSCAN_H
#define SB_MODELS_CLUSTER_DBSCAN_H
#include "../model.h"
#include "../../io/dataset.h"

/* Integers "n_clusters", "n_core", "n_samples_fit", "min_samples";
 * SB_ERR_NOT_FOUND for another name. */
sb_status sb_dbscan_int(const sb_model *m, const char *name, int64_t *out);
/* Index arrays "labels" (n; -1 noise) and "core_sample_indices" (ascending);
 * *needed, cap and out as sb_model_get_indices. */
sb_status sb_dbscan_indices(const sb_model *m, const char *name, int64_t *out, size_t cap, size_t *needed);

#endif
