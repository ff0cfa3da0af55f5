/*
 * test_umap.c: UMAP's C API (docs/umap.md). The embedding is the same bits at
 * every thread count; a/b match umap-learn's curve for the defaults; two far
 * blobs stay apart; n_neighbors above the rows is clamped to n - 1 (the same
 * embedding as n_neighbors = n - 1); bad calls are refused by name before any
 * work.
 */
#include "sb_test.h"
#include "samebits.h"
#include "../../src/models/manifold/umap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_s = 11;
static float rnd(void) {
    g_s = g_s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((int32_t)(g_s >> 40) % 4096) / 4096.0f;
}

/* n rows of d features: two blobs, the second shifted by `gap` in feature 0. */
static float *blobs(int n, int d, float gap) {
    float *x = malloc(sizeof(float) * (size_t)(n * d));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < d; j++) x[i * d + j] = rnd() + (j == 0 && i >= n / 2 ? gap : 0.0f);
    return x;
}

static sb_status embed(const char *params, const float *x, int n, int d, const float *init, float *out, int nc) {
    sb_params *p = NULL;
    sb_dataset *ds = NULL;
    sb_status st = sb_params_create(&p);
    if (st == SB_OK) st = sb_params_parse(p, params);
    if (st == SB_OK) st = sb_dataset_from_matrix(x, n, d, &ds);
    size_t need = 0;
    if (st == SB_OK) st = sb_umap_fit_transform(p, ds, init, NULL, out, (size_t)(n * nc), &need);
    sb_params_free(p);
    sb_dataset_free(ds);
    return st;
}

SB_TEST(test_umap_ab_defaults) {
    float a, b;
    sb_umap_find_ab(1.0f, 0.1f, &a, &b);
    /* umap-learn's curve_fit gives a = 1.5769, b = 0.8951 for spread 1, min_dist 0.1 */
    SB_CHECK(fabsf(a - 1.577f) < 0.01f && fabsf(b - 0.895f) < 0.005f);
    sb_umap_find_ab(1.0f, 0.5f, &a, &b); /* and 0.5835, 1.3343 for min_dist 0.5 */
    SB_CHECK(fabsf(a - 0.5835f) < 0.01f && fabsf(b - 1.334f) < 0.01f);
}

SB_TEST(test_umap_threads_identical) {
    const int n = 120, d = 6;
    float *x = blobs(n, d, 5.0f), *e1 = malloc(sizeof(float) * n * 2), *e3 = malloc(sizeof(float) * n * 2);
    int32_t was = 0;
    SB_CHECK(sb_get_num_threads(&was) == SB_OK);
    SB_CHECK(sb_set_num_threads(1) == SB_OK);
    SB_CHECK(embed("model=umap,n_epochs=80,random_state=3", x, n, d, NULL, e1, 2) == SB_OK);
    SB_CHECK(sb_set_num_threads(3) == SB_OK);
    SB_CHECK(embed("model=umap,n_epochs=80,random_state=3", x, n, d, NULL, e3, 2) == SB_OK);
    SB_CHECK(memcmp(e1, e3, sizeof(float) * n * 2) == 0);
    /* another seed moves the embedding (the seed is read) */
    SB_CHECK(embed("model=umap,n_epochs=80,random_state=4", x, n, d, NULL, e3, 2) == SB_OK);
    SB_CHECK(memcmp(e1, e3, sizeof(float) * n * 2) != 0);
    SB_CHECK(sb_set_num_threads(was) == SB_OK);
    free(x), free(e1), free(e3);
}

SB_TEST(test_umap_blobs_apart) {
    const int n = 100, d = 5;
    float *x = blobs(n, d, 20.0f), *e = malloc(sizeof(float) * n * 2);
    SB_CHECK(embed("model=umap,n_neighbors=10", x, n, d, NULL, e, 2) == SB_OK);
    /* every row's nearest embedded row is in its own blob */
    int wrong = 0;
    for (int i = 0; i < n; i++) {
        int best = -1;
        float bd = INFINITY;
        for (int j = 0; j < n; j++) {
            if (j == i) continue;
            const float dx = e[2 * i] - e[2 * j], dy = e[2 * i + 1] - e[2 * j + 1], dd = dx * dx + dy * dy;
            if (dd < bd) bd = dd, best = j;
        }
        wrong += (best < n / 2) != (i < n / 2);
        SB_CHECK(isfinite(e[2 * i]) && isfinite(e[2 * i + 1]));
    }
    SB_CHECK(wrong == 0);
    free(x), free(e);
}

SB_TEST(test_umap_neighbors_clamped) {
    const int n = 9, d = 3;
    float *x = blobs(n, d, 3.0f), *a = malloc(sizeof(float) * n * 2), *b = malloc(sizeof(float) * n * 2);
    SB_CHECK(embed("model=umap,n_neighbors=50,n_epochs=30", x, n, d, NULL, a, 2) == SB_OK);
    SB_CHECK(embed("model=umap,n_neighbors=8,n_epochs=30", x, n, d, NULL, b, 2) == SB_OK);
    SB_CHECK(memcmp(a, b, sizeof(float) * n * 2) == 0);
    free(x), free(a), free(b);
}

SB_TEST(test_umap_init_array_and_random) {
    const int n = 30, d = 2;
    float *x = blobs(n, d, 4.0f), *init = malloc(sizeof(float) * n * 2), *e = malloc(sizeof(float) * n * 2);
    for (int i = 0; i < n * 2; i++) init[i] = 1.0f + rnd() * 10.0f;
    /* zero epochs are refused, so one epoch at learning rate ~0 keeps the array's rows nearly in place */
    SB_CHECK(embed("model=umap,init=array,n_epochs=1,learning_rate=1e-30", x, n, d, init, e, 2) == SB_OK);
    for (int i = 0; i < n * 2; i++) SB_CHECK(e[i] == init[i]);
    SB_CHECK(embed("model=umap,init=random,n_epochs=5", x, n, d, NULL, e, 2) == SB_OK);
    SB_CHECK(embed("model=umap,init=array", x, n, d, NULL, e, 2) == SB_ERR_INVALID_ARGUMENT &&
             strstr(sb_last_error(), "init=array"));
    SB_CHECK(embed("model=umap", x, n, d, init, e, 2) == SB_ERR_INVALID_ARGUMENT &&
             strstr(sb_last_error(), "init=array"));
    free(x), free(init), free(e);
}

SB_TEST(test_umap_refusals) {
    const int n = 10, d = 2;
    float *x = blobs(n, d, 4.0f), *e = malloc(sizeof(float) * n * 2);
    SB_CHECK(embed("model=umap,metric=manhattan", x, n, d, NULL, e, 2) == SB_ERR_INVALID_ARGUMENT &&
             strstr(sb_last_error(), "manhattan"));
    SB_CHECK(embed("model=umap,min_dist=2", x, n, d, NULL, e, 2) == SB_ERR_INVALID_ARGUMENT &&
             strstr(sb_last_error(), "min_dist"));
    SB_CHECK(embed("model=umap,target_metric=l1", x, n, d, NULL, e, 2) == SB_ERR_INVALID_ARGUMENT &&
             strstr(sb_last_error(), "target_metric"));
    SB_CHECK(embed("model=umap,n_neighbors=1", x, n, d, NULL, e, 2) != SB_OK);
    SB_CHECK(embed("model=umap,n_neighbors=1025", x, n, d, NULL, e, 2) != SB_OK && strstr(sb_last_error(), "n_neighbors"));
    SB_CHECK(embed("model=umap,n_components=3", x, n, d, NULL, e, 2) == SB_ERR_LIMIT); /* cap for 2 */
    x[3] = NAN;
    SB_CHECK(embed("model=umap", x, n, d, NULL, e, 2) == SB_ERR_INVALID_INPUT && strstr(sb_last_error(), "finite"));
    SB_CHECK(embed("model=umap", x, 1, d, NULL, e, 2) == SB_ERR_INVALID_INPUT);
    free(x), free(e);
}
