/*
 * kde.h: kernel density estimation (kde.c; docs/density.md): the fit behind
 * sb_kde_fit, the log densities behind sb_model_score_samples and
 * sb_model_score, the draws behind sb_model_sample, and the attributes.
 */
#ifndef SB_MODELS_NEIGHBORS_KDE_H
#define SB_MODELS_NEIGHBORS_KDE_H
#include "../model.h"
#include "../../io/dataset.h"

/* Integers "n_samples_fit", "kernel" (SB_KDE_*), "bandwidth_rule"
 * (SB_KDE_BW_*), "weighted"; SB_ERR_NOT_FOUND for another name. */
sb_status sb_kde_int(const sb_model *m, const char *name, int64_t *out);

/* The array "bandwidth" (one value, bandwidth_) into out (cap 0 asks: *needed
 * gets 1); SB_ERR_NOT_FOUND for another name. */
sb_status sb_kde_array(const sb_model *m, const char *name, float *out, size_t cap, size_t *needed);

/* The log densities of q's rows (the model's feature count and finite values:
 * the callers check) in double, before their rounding to float32, and, sums
 * not NULL, each row's kernel sum s (the fixed-order reduction, before its
 * log): what sb_model_score_samples rounds, and stages of the kde-fit card.
 * The float32 log rounds s first, so the order of the sums shows in s's bits
 * and only rarely in the log densities. device: an sb_device_kind; cuda and
 * opencl sum on the GPU (kernels/kde.h, the same bits), the others on the
 * host's worker pool. */
sb_status sb_kde_score_f64(const sb_model *m, const sb_table *q, int32_t device, double *out, double *sums);

/* The log of the normalization of kernel in d dimensions at bandwidth h, in
 * double (the integral of the unnormalized kernel over R^d, so that the
 * density integrates to 1): exported for the unit tests and the fixture. */
double sb_kde_log_norm(int32_t kernel, int32_t d, double h);

#endif
