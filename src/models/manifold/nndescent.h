/*
 * nndescent.h: the approximate nearest neighbors of every row (nndescent.c):
 * random-projection trees, then NN-descent, a pure function of the rows, the
 * metric, k and the seed (the same bits at every thread count).
 */
#ifndef SB_MODELS_MANIFOLD_NNDESCENT_H
#define SB_MODELS_MANIFOLD_NNDESCENT_H
#include <stdint.h>
#include "../model.h"

/* Row count from which UMAP's neighbors="auto" takes NN-descent (umap-learn's
 * own switch from its exact pairwise distances to pynndescent). */
#define SB_NND_AUTO_ROWS 4096

/* The k - 1 approximate nearest other rows of each of the n rows x (n x d,
 * finite), 2 <= k <= min(n, 1024), by metric 0 (euclidean), 1 (cosine, 1 - cos in
 * [0, 2]) or 2 (manhattan), written as nbr/dist (n x k): row i's entry 0 is
 * i itself at 0, then its neighbors by (distance, index) ascending.
 * Distances are sqrt of the squared distance (euclidean), the cosine or the
 * manhattan distance, computed in double in the four lanes of sb_knn_sqdist
 * and rounded to float32. */
sb_status sb_nndescent(const float *x, int64_t n, int32_t d, int32_t metric, int32_t k, uint64_t seed, int32_t *nbr,
                       float *dist);

#endif
