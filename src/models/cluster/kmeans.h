/*
 * kmeans.h: the k-means family (kmeans.c; docs/cluster.md): the fit behind
 * sb_kmeans_fit, prediction from a fitted model, and its attributes.
 */
#ifndef SB_MODELS_CLUSTER_KMEANS_H
#define SB_MODELS_CLUSTER_KMEANS_H
#include "../model.h"
#include "../../io/dataset.h"

/* Predictions of a k-means model on t's rows (t->ncols == the model's
 * features): kind SB_PREDICT_VALUE the nearest center's index (as a float),
 * SB_PREDICT_RAW the n x k squared distances of the assignment rule,
 * SB_PREDICT_TRANSFORM their square roots (scikit-learn's transform);
 * SB_PREDICT_PROBA is refused by name. *needed, cap and out as sb_model_predict. */
sb_status sb_km_predict(const sb_model *m, const sb_table *t, int32_t kind, const char *device, float *out, size_t cap,
                        size_t *needed);

/* A k-means model's attribute, or NULL / SB_ERR_NOT_FOUND: arrays
 * "cluster_centers" (k x features) and "inertia" (1 value); integers
 * "n_iter", "converged", "n_clusters". */
const float *sb_km_array(const sb_model *m, const char *name, size_t *n);
sb_status sb_km_int(const sb_model *m, const char *name, int64_t *out);
/* sb_model_get_indices of a k-means model: "labels", the fit's last
 * assignment of its training rows (a fitted model only: a model read from a
 * file has none, SB_ERR_NOT_FOUND by name). */
sb_status sb_km_indices(const sb_model *m, const char *name, int64_t *out, size_t cap, size_t *needed);

/* Tests only: the padded row length from which distances go center by
 * center instead of four centers at once (0: the library's own); both give
 * the same bits, which tests/unit/test_kmeans.c checks. */
void sb_kmeans_long_row_for_tests(int32_t dp);
/* Caps the local memory kk_assign may stage on a GPU at bytes (0: the
 * device's): a schedule input only, for the tests of its slabs. Not a status:
 * it sets a knob. */
void sb_kmeans_local_budget_for_tests(int64_t bytes);

#endif
