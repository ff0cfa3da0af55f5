/*
 * test_kmeans.c: k-means' two ways to a row's distances (src/models/cluster/
 * kmeans.c: four centers at once over transposed centers, or center by center
 * over the row's lanes) give the same distances bit for bit and the same
 * model bytes, on short rows and long ones, with weights and without, at one
 * thread and several; and the model file round-trips. On every GPU backend
 * that opens (PoCL's OpenCL in CI; CUDA and NVIDIA's OpenCL on the H200), the
 * fit and its distances are the CPU's bytes, whether kk_assign stages whole
 * rows of centers or slabs of features.
 */
#include "sb_test.h"
#include "models/cluster/kmeans.h"
#include "device/device.h"
#include "linalg/linalg.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

static float *blobs(int64_t n, int32_t d, uint64_t seed) {
    float *x = malloc(sizeof(float) * (size_t)(n * d));
    uint64_t r = seed;
    for (int64_t i = 0; i < n; i++)
        for (int32_t f = 0; f < d; f++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            const float u = (float)(r >> 40) * 0x1p-24f - 0.5f;
            x[i * d + f] = u + (f == (int32_t)(i % 5) % d ? 3.0f * (float)(i % 5) : 0.0f);
        }
    return x;
}

static int fit_digest(const float *x, int64_t n, int32_t d, const float *w, const char *params, char out[65]) {
    sb_dataset *ds = NULL;
    sb_params *p = NULL;
    sb_model *m = NULL;
    int ok = sb_dataset_from_matrix(x, n, d, &ds) == SB_OK && (!w || sb_dataset_set_weight(ds, w, n) == SB_OK) &&
             sb_params_create(&p) == SB_OK && sb_params_parse(p, params) == SB_OK &&
             sb_kmeans_fit(p, ds, NULL, NULL, &m) == SB_OK && sb_model_digest(m, out) == SB_OK;
    if (ok) { /* the file round-trips to the same digest */
        size_t need = 0;
        uint8_t *bytes = NULL;
        sb_model *back = NULL;
        char again[65];
        ok = sb_model_to_bytes(m, NULL, 0, &need) == SB_OK && (bytes = malloc(need)) &&
             sb_model_to_bytes(m, bytes, need, NULL) == SB_OK && sb_model_from_bytes(bytes, need, &back) == SB_OK &&
             sb_model_digest(back, again) == SB_OK && !strcmp(again, out);
        free(bytes);
        sb_model_free(back);
    }
    sb_model_free(m);
    sb_params_free(p);
    sb_dataset_free(ds);
    return ok;
}

/* The n x 7 squared distances (SB_PREDICT_RAW) of a model fitted on x, with
 * the long-row threshold at lr (1: every row center by center; 2^30: four
 * centers at once). */
static float *raw_distances(const float *x, int64_t n, int32_t d, int32_t lr) {
    sb_dataset *ds = NULL;
    sb_params *p = NULL;
    sb_model *m = NULL;
    float *out = malloc(sizeof(float) * (size_t)(n * 7));
    sb_kmeans_long_row_for_tests(0);
    int ok = out && sb_dataset_from_matrix(x, n, d, &ds) == SB_OK && sb_params_create(&p) == SB_OK &&
             sb_params_parse(p, "model=kmeans,n_clusters=7,random_state=5") == SB_OK &&
             sb_kmeans_fit(p, ds, NULL, NULL, &m) == SB_OK;
    sb_kmeans_long_row_for_tests(lr);
    ok = ok && sb_model_predict(m, ds, SB_PREDICT_RAW, out, (size_t)(n * 7), NULL) == SB_OK;
    sb_kmeans_long_row_for_tests(0);
    sb_model_free(m);
    sb_params_free(p);
    sb_dataset_free(ds);
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}

SB_TEST(test_kmeans_distance_paths_agree) {
    const int32_t widths[] = {3, 7, 8, 13, 70, 129};
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        const int32_t d = widths[wi];
        const int64_t n = 500;
        float *x = blobs(n, d, 7 + (uint64_t)d), *w = malloc(sizeof(float) * (size_t)n);
        for (int64_t i = 0; i < n; i++) w[i] = (float)(i % 3);
        for (int weighted = 0; weighted < 2; weighted++) {
            char a[65], b[65], c[65];
            const char *params = "model=kmeans,n_clusters=7,n_init=2,random_state=3";
            sb_kmeans_long_row_for_tests(1); /* every row center by center */
            SB_CHECK(fit_digest(x, n, d, weighted ? w : NULL, params, a));
            sb_kmeans_long_row_for_tests(1 << 30); /* every row four centers at once */
            SB_CHECK(fit_digest(x, n, d, weighted ? w : NULL, params, b));
            sb_kmeans_long_row_for_tests(0);
            SB_CHECK(sb_set_num_threads(3) == SB_OK);
            SB_CHECK(fit_digest(x, n, d, weighted ? w : NULL, params, c));
            SB_CHECK(sb_set_num_threads(0) == SB_OK);
            SB_CHECK(!strcmp(a, b));
            SB_CHECK(!strcmp(a, c));
        }
        float *r1 = raw_distances(x, n, d, 1), *r2 = raw_distances(x, n, d, 1 << 30);
        SB_CHECK(r1 && r2 && !memcmp(r1, r2, sizeof(float) * (size_t)(n * 7)));
        free(r1);
        free(r2);
        free(x);
        free(w);
    }
}

/* The n x 7 squared distances of model m on device dev (NULL when refused). */
static float *raw_on(const sb_model *m, const float *x, int64_t n, int32_t d, const char *dev) {
    sb_dataset *ds = NULL;
    float *out = malloc(sizeof(float) * (size_t)(n * 7));
    const int ok = out && sb_dataset_from_matrix(x, n, d, &ds) == SB_OK &&
                   sb_model_predict_on(m, ds, SB_PREDICT_RAW, dev, out, (size_t)(n * 7), NULL) == SB_OK;
    sb_dataset_free(ds);
    if (!ok) free(out);
    return ok ? out : NULL;
}

SB_TEST(test_kmeans_device_slabs_agree) {
    const char *devs[] = {"opencl", "cuda"};
    const int32_t widths[] = {3, 13, 129, 300};
    const int64_t budgets[] = {0, 8 * 16 * 4, 8 * 40 * 4}; /* the device's; slabs of 16 and of 40 features */
    int ran = 0;
    for (size_t di = 0; di < 2; di++) {
        sb_device_kind kind;
        sb_device *dv = NULL;
        if (sb_device_parse(devs[di], &kind) != SB_OK || sb_linalg_device_lock(kind, &dv) != SB_OK) {
            sb_clear_error(); /* no such backend or device here */
            continue;
        }
        sb_linalg_device_unlock();
        for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
            const int32_t d = widths[wi];
            const int64_t n = 700;
            float *x = blobs(n, d, 11 + (uint64_t)d), *w = malloc(sizeof(float) * (size_t)n);
            for (int64_t i = 0; i < n; i++) w[i] = (float)(i % 4) * 0.5f;
            for (size_t bi = 0; bi < sizeof budgets / sizeof budgets[0]; bi++) {
                char a[65], b[65], params[160];
                snprintf(params, sizeof params, "model=kmeans,n_clusters=7,n_init=2,random_state=4,device=%s", devs[di]);
                sb_kmeans_local_budget_for_tests(budgets[bi]);
                const int dev_ok = fit_digest(x, n, d, bi == 1 ? w : NULL, params, b);
                sb_kmeans_local_budget_for_tests(0);
                SB_CHECK(dev_ok);
                SB_CHECK(fit_digest(x, n, d, bi == 1 ? w : NULL, "model=kmeans,n_clusters=7,n_init=2,random_state=4", a));
                SB_CHECK(!strcmp(a, b));
                ran++;
            }
            /* prediction's distances on the device, slabbed, against the host's */
            sb_dataset *ds = NULL;
            sb_params *p = NULL;
            sb_model *m = NULL;
            SB_CHECK(sb_dataset_from_matrix(x, n, d, &ds) == SB_OK && sb_params_create(&p) == SB_OK &&
                     sb_params_parse(p, "model=kmeans,n_clusters=7,random_state=5") == SB_OK &&
                     sb_kmeans_fit(p, ds, NULL, NULL, &m) == SB_OK);
            float *host = raw_on(m, x, n, d, "cpu");
            sb_kmeans_local_budget_for_tests(8 * 16 * 4);
            float *dev = raw_on(m, x, n, d, devs[di]);
            sb_kmeans_local_budget_for_tests(0);
            SB_CHECK(host && dev && !memcmp(host, dev, sizeof(float) * (size_t)(n * 7)));
            free(host);
            free(dev);
            sb_model_free(m);
            sb_params_free(p);
            sb_dataset_free(ds);
            free(x);
            free(w);
        }
    }
    printf("  test_kmeans_device_slabs_agree: %d device fits compared (0: no GPU backend opened)\n", ran);
}
