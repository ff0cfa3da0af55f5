/*
 * knn.h: the nearest-neighbors family (knn.c; docs/neighbors.md): the fit
 * behind sb_knn_fit, the neighbor queries behind sb_model_kneighbors and
 * sb_model_radius_neighbors, prediction, and the attributes.
 */
#ifndef SB_MODELS_NEIGHBORS_KNN_H
#define SB_MODELS_NEIGHBORS_KNN_H
#include "../model.h"
#include <math.h>
#include "../../device/device.h"
#include "../../io/dataset.h"

/* sum_f (x_f - y_f)^2 in double in four lanes (lane f mod 4, feature
 * order), the lanes added as (l0 + l1) + (l2 + l3): the exact distance every
 * family on this one stands on (nearest neighbors, DBSCAN, spectral
 * clustering; agglomerative clustering sums in SciPy's order instead). */
static inline double sb_knn_sqdist(const float *x, const float *y, int32_t d) {
    double l[4] = {0.0, 0.0, 0.0, 0.0};
    for (int32_t f = 0; f < d; f++) {
        const double t = (double)x[f] - (double)y[f];
        l[f & 3] += t * t;
    }
    return (l[0] + l[1]) + (l[2] + l[3]);
}

/* sum_f |x_f - y_f| in double in sb_knn_sqdist's four lanes (lane f mod 4,
 * feature order), the lanes added as (l0 + l1) + (l2 + l3): the manhattan
 * distance of the neighbors family and of UMAP's NN-descent. Written on
 * vectors of four doubles, one lane a vector element, so a caller compiled
 * for wider registers (an AVX2 copy) computes the same operations in the
 * same order; the absolute value clears the sign bit, as fabs does. */
typedef double sb_knn_v4d __attribute__((vector_size(32)));
typedef float sb_knn_v4f __attribute__((vector_size(16)));
typedef long long sb_knn_v4i __attribute__((vector_size(32)));
static inline __attribute__((always_inline)) double sb_knn_l1dist(const float *x, const float *y, int32_t d) {
    sb_knn_v4d acc = {0.0, 0.0, 0.0, 0.0};
    const sb_knn_v4i mag = {0x7fffffffffffffffll, 0x7fffffffffffffffll, 0x7fffffffffffffffll, 0x7fffffffffffffffll};
    int32_t f = 0;
    for (; f + 4 <= d; f += 4) {
        sb_knn_v4f a, b;
        __builtin_memcpy(&a, x + f, sizeof a), __builtin_memcpy(&b, y + f, sizeof b);
        const sb_knn_v4d t = __builtin_convertvector(a, sb_knn_v4d) - __builtin_convertvector(b, sb_knn_v4d);
        acc += (sb_knn_v4d)((sb_knn_v4i)t & mag);
    }
    for (int32_t l = 0; f < d; f++, l++) acc[l] += fabs((double)x[f] - (double)y[f]);
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

/* sb_knn_sqdist's value, the same lanes in the same order, for the pairs
 * (x, y) and (x, z) at once, on rows already converted to double (exactly):
 * two sums interleaved for speed (spectral clustering's rbf affinity). */
static inline void sb_knn_sqdist2(const double *restrict x, const double *restrict y, const double *restrict z, int32_t d,
                                  double *dy, double *dz) {
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0, b0 = 0.0, b1 = 0.0, b2 = 0.0, b3 = 0.0;
    int32_t f = 0;
    for (; f + 4 <= d; f += 4) {
        const double t0 = x[f] - y[f], t1 = x[f + 1] - y[f + 1], t2 = x[f + 2] - y[f + 2], t3 = x[f + 3] - y[f + 3];
        const double u0 = x[f] - z[f], u1 = x[f + 1] - z[f + 1], u2 = x[f + 2] - z[f + 2], u3 = x[f + 3] - z[f + 3];
        a0 += t0 * t0, a1 += t1 * t1, a2 += t2 * t2, a3 += t3 * t3;
        b0 += u0 * u0, b1 += u1 * u1, b2 += u2 * u2, b3 += u3 * u3;
    }
    if (f < d) {
        const double t = x[f] - y[f], u = x[f] - z[f];
        a0 += t * t, b0 += u * u, f++;
    }
    if (f < d) {
        const double t = x[f] - y[f], u = x[f] - z[f];
        a1 += t * t, b1 += u * u, f++;
    }
    if (f < d) {
        const double t = x[f] - y[f], u = x[f] - z[f];
        a2 += t * t, b2 += u * u;
    }
    *dy = (a0 + a1) + (a2 + a3);
    *dz = (b0 + b1) + (b2 + b3);
}

/* The metric (SB_KNN_*) that scikit-learn's metric name (NULL: not given,
 * so minkowski) and p (2 when not given) name: minkowski with p=1 or 2,
 * euclidean or l2 (p must be 2), manhattan, l1 or cityblock, cosine; any
 * other name or p is refused by name. */
sb_status sb_knn_metric_resolve(const char *metric, int power, int32_t *out);

/* The name of metric SB_KNN_* ("euclidean", "cosine", "manhattan"; "?" for
 * another code): the one table the families on this one print from. */
const char *sb_knn_metric_name(int32_t metric);

/* The screening arrays of k (xs, xsn, mu or xnorm) from k->x, replacing any
 * it has: the fit and the model reader call it, so a model read from a file
 * answers exactly as the one that was written. SB_ERR_INVALID_INPUT when a
 * row's screening norm overflows float32. */
sb_status sb_knn_prepare(sb_knn *k, int32_t nfeat);

/* Whether the exact search could take the n x d rows x (metric SB_KNN_*): the
 * limit sb_knn_prepare applies (SB_ERR_LIMIT naming the first row past it),
 * checked on a scratch copy that is freed; x is only read. A family that
 * keeps rows for a later exact search but fits without one (UMAP's
 * NN-descent) calls it, so a model that fits can also transform. */
sb_status sb_knn_rows_check(const float *x, int64_t n, int32_t d, int32_t metric);

/* Neighbors of the rows of q (or, q NULL, of the training rows, each without
 * itself as scikit-learn's kneighbors() does): the kk nearest by (distance,
 * index) (radius < 0), or every one within radius (radius >= 0; in index
 * order, or by (distance, index) when sort). *offsets (nq + 1), *idx and
 * *dist are allocated here (sb_free) and hold row i's neighbors at
 * [offsets[i], offsets[i+1]). The results are a function of the exact
 * distances alone (docs/neighbors.md): the same on every machine, at every
 * thread count and for every batching of the queries. kind names where the
 * screen runs (a GPU: the screen's products and candidates on it, the exact
 * distances on the host; the same answer). */
sb_status sb_knn_query(const sb_model *m, const sb_table *q, int32_t kk, double radius, int32_t sort,
                       sb_device_kind kind, int64_t *nq, int64_t **offsets, int64_t **idx, float **dist);

/* The neighbors of t's rows among t's own rows (each row itself included,
 * at distance 0), as sb_knn_query gives them: a neighbors model over a copy
 * of the rows, queried by the rows, then freed. The families that stand on
 * the rows' own neighborhoods (DBSCAN's radius, spectral clustering's
 * nearest-neighbors graph) call this. */
sb_status sb_knn_self_query(const sb_table *t, int32_t metric, int32_t kk, double radius, int32_t sort,
                            sb_device_kind kind, int64_t **offsets, int64_t **idx, float **dist);

/* Predictions of a classifier or regressor model on t's rows:
 * SB_PREDICT_VALUE the class index (as a float) or the regression value,
 * SB_PREDICT_PROBA the classifier's n x classes probabilities; the other kinds
 * and an unsupervised model are refused by name. */
sb_status sb_knn_predict(const sb_model *m, const sb_table *t, int32_t kind, const char *device, float *out, size_t cap,
                         size_t *needed);

/* Integers "n_neighbors", "n_samples_fit", "n_classes", "task", "metric",
 * "weights"; SB_ERR_NOT_FOUND for another name. The model has no arrays. */
sb_status sb_knn_int(const sb_model *m, const char *name, int64_t *out);

/* Tests only: force the screening product's generic code (1) or let the
 * library choose (0); both give the same results, which the unit test checks. */
void sb_knn_generic_screen_for_tests(int32_t on);
/* Tests only: Euclidean radius queries through the k-d tree always (1),
 * never (0), or by the library's rule (-1: at most 16 features, at least 256
 * rows); every choice gives the same results. */
void sb_knn_tree_for_tests(int32_t mode);

#endif
