/*
 * svm.h: support vector classification and regression (svm.c; docs/svm.md):
 * the SMO fit behind sb_svm_fit, the decision values behind sb_model_predict
 * and sb_svm_decision_function, and the attributes.
 */
#ifndef SB_MODELS_SVM_SVM_H
#define SB_MODELS_SVM_SVM_H
#include "../model.h"
#include "../../io/dataset.h"

/* Integers "n_support_vectors", "n_classes", "kind" (0 svc, 1 svr), "kernel"
 * (SB_SVM_*), "degree", "n_samples_fit", "converged" (1 when every pair met
 * tol, 0 when one stopped at max_iter); SB_ERR_NOT_FOUND for another name. */
sb_status sb_svm_int(const sb_model *m, const char *name, int64_t *out);

/* The array "support_vectors" (nsv x features, float32) into out (cap 0 asks). */
sb_status sb_svm_array(const sb_model *m, const char *name, float *out, size_t cap, size_t *needed);

/* Index arrays "support", "n_support", "n_iter" (cap 0 asks). */
sb_status sb_svm_indices(const sb_model *m, const char *name, int64_t *out, size_t cap, size_t *needed);

/* Predictions of q's rows (the caller checked the feature count) on device
 * (an sb_device_kind: cuda and opencl compute the decision values there, the
 * same bits): kind SB_PREDICT_VALUE the class index (svc) or the value (svr),
 * SB_PREDICT_RAW the decision values (float32 of sb_svm_decision_function's). */
sb_status sb_svm_predict(const sb_model *m, const sb_table *q, int32_t kind, int32_t device, float *out, size_t cap,
                         size_t *needed);

/* The decision values of q's rows in double: svr one a row; svc with two
 * classes one a row (scikit-learn's sign: positive is class 1); more classes
 * one a pair (0,1), (0,2), ..., (K-2,K-1), positive is the pair's first;
 * on device (an sb_device_kind, as sb_svm_predict's). */
sb_status sb_svm_decision_f64(const sb_model *m, const sb_table *q, int32_t device, double *out);

/* The number of decision values a row: 1, or the pairs of a multiclass svc. */
int64_t sb_svm_decision_width(const sb_model *m);

/* Test hook: the working set's chunk of variables (0: the default), so that
 * tests can compare chunkings with the pass over every variable in order. */
void sb_svm_sel_grain_for_tests(int64_t grain);

/* Test hook: caps the solver's lane kernels ("generic": the plain loops,
 * "avx2", anything else: the best this CPU has) and returns the name of those
 * now in use; every choice gives the same bits. */
const char *sb_svm_lanes_for_tests(const char *cap);

#endif
