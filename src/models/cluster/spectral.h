/*
 * spectral.h: spectral clustering (spectral.c; docs/cluster.md): the fit
 * behind sb_spectral_fit and the fitted model's attributes. It does not
 * predict: its labels are the training rows'.
 */
#ifndef SB_MODELS_CLUSTER_SPECTRAL_H
#define SB_MODELS_CLUSTER_SPECTRAL_H
#include "../model.h"
#include "../../io/dataset.h"

/* Integers "n_clusters", "n_samples_fit", "affinity" (0 rbf, 1
 * nearest_neighbors, 2 precomputed); SB_ERR_NOT_FOUND for another name. */
sb_status sb_spectral_int(const sb_model *m, const char *name, int64_t *out);
/* The index array "labels" (n); *needed, cap and out as sb_model_get_indices. */
sb_status sb_spectral_indices(const sb_model *m, const char *name, int64_t *out, size_t cap, size_t *needed);

#endif
