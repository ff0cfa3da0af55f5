/*
 * test_nndescent.c: the approximate neighbors UMAP takes from 4,096 rows
 * (src/models/manifold/nndescent.c). The lists are the same bits at 1, 2
 * and 7 threads and from the portable and the AVX2 distance; each row's list
 * is itself first, then distinct other rows in (distance, index) order with
 * their exact distances; on clustered rows it finds nearly all of the exact
 * neighbors; bad sizes are refused by name. UMAP's neighbors parameter:
 * auto is the exact search below 4,096 rows, an unknown value is refused.
 */
#include "sb_test.h"
#include "samebits.h"
#include "../../src/models/manifold/nndescent.h"
#include "../../src/models/neighbors/knn.h"
#include "../../src/core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_s = 17;
static float rnd(void) {
    g_s = g_s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((int32_t)(g_s >> 40) % 4096) / 4096.0f;
}

/* n rows of d features in eight blobs; every fourth row repeats the one
 * before it (distance ties). */
static float *rows(int n, int d) {
    g_s = 17; /* the same rows whichever test runs first */
    float *x = malloc(sizeof(float) * (size_t)n * (size_t)d);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < d; j++)
            x[i * d + j] = i % 4 == 3 ? x[(i - 1) * d + j] : rnd() + (float)((i % 8) == j % 8) * 3.0f;
    return x;
}

static void threads_and_kernels(int32_t metric) {
    const int n = 1500, d = 10, k = 12;
    float *x = rows(n, d);
    int32_t *nb[4];
    float *ds[4];
    const int threads[3] = {1, 2, 7};
    for (int t = 0; t < 4; t++) {
        nb[t] = malloc(sizeof(int32_t) * (size_t)n * k), ds[t] = malloc(sizeof(float) * (size_t)n * k);
        SB_CHECK(sb_set_num_threads(threads[t < 3 ? t : 1]) == SB_OK);
        if (t == 3) setenv("SAMEBITS_NND_GENERIC", "1", 1); /* the portable distance */
        SB_CHECK(sb_nndescent(x, n, d, metric, k, 9, nb[t], ds[t]) == SB_OK);
        unsetenv("SAMEBITS_NND_GENERIC");
        if (t > 0) {
            SB_CHECK(memcmp(nb[0], nb[t], sizeof(int32_t) * (size_t)n * k) == 0);
            SB_CHECK(memcmp(ds[0], ds[t], sizeof(float) * (size_t)n * k) == 0);
        }
    }
    /* another seed: other trees, the same lists or nearly (the seed is read) */
    SB_CHECK(sb_set_num_threads(2) == SB_OK);
    SB_CHECK(sb_nndescent(x, n, d, metric, k, 10, nb[1], ds[1]) == SB_OK);
    int64_t same = 0;
    for (int64_t e = 0; e < (int64_t)n * k; e++) same += nb[0][e] == nb[1][e];
    printf("  metric %d: %.4f of the entries the same under another seed\n", (int)metric, (double)same / ((double)n * k));
    SB_CHECK(same > (int64_t)n * k * (metric == 2 ? 8 : 9) / 10); /* 0.921 and 0.869 when written */
    SB_CHECK(sb_set_num_threads(0) == SB_OK);
    for (int t = 0; t < 4; t++) free(nb[t]), free(ds[t]);
    free(x);
}

/* euclidean, and manhattan (10 features: the lanes' tail) */
SB_TEST(test_nndescent_threads_and_kernels_identical) {
    threads_and_kernels(0);
    threads_and_kernels(2);
}

static int dbl_cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The ordering distance of metric 0 (squared euclidean) or 2 (manhattan). */
static double dist_of(int32_t metric, const float *a, const float *b, int32_t d) {
    return metric == 2 ? sb_knn_l1dist(a, b, d) : sb_knn_sqdist(a, b, d);
}

static void ordered_and_close(int32_t metric) {
    const int n = 2000, d = 8, k = 10;
    float *x = rows(n, d);
    int32_t *nb = malloc(sizeof(int32_t) * (size_t)n * k);
    float *ds = malloc(sizeof(float) * (size_t)n * k);
    double *all = malloc(sizeof(double) * (size_t)n);
    SB_CHECK(sb_nndescent(x, n, d, metric, k, 3, nb, ds) == SB_OK);
    int64_t found = 0;
    for (int i = 0; i < n; i++) {
        SB_CHECK(nb[i * k] == i && ds[i * k] == 0.0f);
        for (int c = 1; c < k; c++) {
            const int32_t j = nb[i * k + c];
            SB_CHECK(j >= 0 && j < n && j != i);
            const double D = dist_of(metric, x + (int64_t)i * d, x + (int64_t)j * d, d);
            SB_CHECK(ds[i * k + c] == (metric == 2 ? (float)D : (float)sqrt(D)));
            if (c > 1) {
                const int32_t p = nb[i * k + c - 1];
                const double Dp = dist_of(metric, x + (int64_t)i * d, x + (int64_t)p * d, d);
                SB_CHECK(Dp < D || (Dp == D && p < j)); /* (distance, index), no repeats */
            }
        }
        /* recall: the entries within the exact (k - 1)-th smallest distance to another row */
        for (int j = 0; j < n; j++) all[j] = j == i ? INFINITY : dist_of(metric, x + (int64_t)i * d, x + (int64_t)j * d, d);
        qsort(all, (size_t)n, sizeof(double), dbl_cmp);
        for (int c = 1; c < k; c++)
            found += dist_of(metric, x + (int64_t)i * d, x + (int64_t)nb[i * k + c] * d, d) <= all[k - 2];
    }
    printf("  metric %d: recall %.4f\n", (int)metric, (double)found / ((double)n * (k - 1)));
    /* 0.958 (euclidean) and 0.946 (manhattan) when written, 8-dimensional blobs */
    SB_CHECK(found >= (int64_t)n * (k - 1) * (metric == 2 ? 93 : 95) / 100);
    free(nb), free(ds), free(all), free(x);
}

SB_TEST(test_nndescent_lists_ordered_and_close_to_exact) {
    ordered_and_close(0);
    ordered_and_close(2);
}

SB_TEST(test_nndescent_small_and_refusals) {
    const float x[5] = {0.0f, 1.0f, 3.0f, 1.0f, -2.0f};
    int32_t nb[30];
    float ds[30];
    SB_CHECK(sb_nndescent(x, 5, 1, 0, 6, 1, nb, ds) == SB_ERR_INVALID_ARGUMENT); /* k above n */
    SB_CHECK(strstr(sb_last_error(), "NN-descent") != NULL);
    /* k = n: every other row, in (distance, index) order */
    SB_CHECK(sb_nndescent(x, 5, 1, 0, 5, 1, nb, ds) == SB_OK);
    const int32_t want0[5] = {0, 1, 3, 4, 2}; /* row 0: itself, 1 and 3 (a tie at 1: by index), -2, then 3 */
    SB_CHECK(memcmp(nb, want0, sizeof want0) == 0);
    SB_CHECK(ds[1] == 1.0f && ds[2] == 1.0f && ds[3] == 2.0f && ds[4] == 3.0f);
    SB_CHECK(sb_nndescent(x, 5, 1, 0, 1, 1, nb, ds) == SB_ERR_INVALID_ARGUMENT);
}

static sb_status embed(const char *params, const float *x, int n, int d, float *out) {
    sb_params *p = NULL;
    sb_dataset *ds = NULL;
    sb_status st = sb_params_create(&p);
    if (st == SB_OK) st = sb_params_parse(p, params);
    if (st == SB_OK) st = sb_dataset_from_matrix(x, n, d, &ds);
    if (st == SB_OK) st = sb_umap_fit_transform(p, ds, NULL, NULL, out, (size_t)(n * 2), NULL);
    sb_params_free(p);
    sb_dataset_free(ds);
    return st;
}

SB_TEST(test_umap_neighbors_parameter) {
    const int n = 300, d = 6;
    float *x = rows(n, d), *a = malloc(sizeof(float) * n * 2), *b = malloc(sizeof(float) * n * 2);
    SB_CHECK(embed("model=umap,n_epochs=20,random_state=2", x, n, d, a) == SB_OK);
    SB_CHECK(embed("model=umap,n_epochs=20,random_state=2,neighbors=exact", x, n, d, b) == SB_OK);
    SB_CHECK(memcmp(a, b, sizeof(float) * n * 2) == 0); /* auto below 4,096 rows: exact */
    SB_CHECK(embed("model=umap,n_epochs=20,random_state=2,neighbors=nndescent", x, n, d, b) == SB_OK);
    SB_CHECK(embed("model=umap,n_epochs=20,random_state=2,neighbors=ball_tree", x, n, d, b) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "neighbors='ball_tree'") != NULL);
    free(x), free(a), free(b);
}
