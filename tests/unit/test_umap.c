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
#include "../../src/core/internal.h"

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
    SB_CHECK(embed("model=umap,metric=chebyshev", x, n, d, NULL, e, 2) == SB_ERR_INVALID_ARGUMENT &&
             strstr(sb_last_error(), "chebyshev"));
    SB_CHECK(embed("model=umap,metric=manhattan", x, n, d, NULL, e, 2) == SB_OK); /* built since db0c6b3 */
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

/* A fitted model (sb_umap_fit) of the rows x. */
static sb_status fit_model(const char *params, const float *x, int n, int d, sb_model **m) {
    sb_params *p = NULL;
    sb_dataset *ds = NULL;
    sb_status st = sb_params_create(&p);
    if (st == SB_OK) st = sb_params_parse(p, params);
    if (st == SB_OK) st = sb_dataset_from_matrix(x, n, d, &ds);
    if (st == SB_OK) st = sb_umap_fit(p, ds, NULL, NULL, m);
    sb_params_free(p);
    sb_dataset_free(ds);
    return st;
}

/* The model's transform of rows [b, e) of q into out + b * nc. */
static sb_status model_rows(const sb_model *m, const float *q, int b, int e, int d, int nc, float *out) {
    sb_dataset *ds = NULL;
    sb_status st = sb_dataset_from_matrix(q + (size_t)b * d, e - b, d, &ds);
    if (st == SB_OK) st = sb_model_predict(m, ds, SB_PREDICT_TRANSFORM, out + (size_t)b * nc, (size_t)((e - b) * nc), NULL);
    sb_dataset_free(ds);
    return st;
}

/* The model holds fit_transform's embedding bit for bit; its file reads back
 * to the same bytes and digest; its transform is sb_umap_transform's and the
 * same in batches of 1, 7 and all, at 1, 2 and 7 threads. */
SB_TEST(test_umap_model_file_and_transform) {
    const int n = 80, d = 5, nq = 23, nc = 2;
    const char *params = "model=umap,n_epochs=40,random_state=5,n_neighbors=8";
    float *x = blobs(n, d, 4.0f), *q = blobs(nq, d, 4.0f);
    float *e0 = malloc(sizeof(float) * n * nc), *e1 = malloc(sizeof(float) * n * nc);
    float *t0 = malloc(sizeof(float) * nq * nc), *t1 = malloc(sizeof(float) * nq * nc);
    sb_model *m = NULL, *r = NULL;
    SB_CHECK(embed(params, x, n, d, NULL, e0, nc) == SB_OK);
    SB_CHECK(fit_model(params, x, n, d, &m) == SB_OK);
    size_t need = 0;
    SB_CHECK(sb_model_get_array(m, "embedding", NULL, 0, &need) == SB_OK && need == (size_t)(n * nc));
    SB_CHECK(sb_model_get_array(m, "embedding", e1, need, NULL) == SB_OK);
    SB_CHECK(memcmp(e0, e1, sizeof(float) * n * nc) == 0);
    int64_t v = 0;
    SB_CHECK(sb_model_get_int(m, "n_samples_fit", &v) == SB_OK && v == n);
    SB_CHECK(sb_model_get_int(m, "n_epochs", &v) == SB_OK && v == 40);
    SB_CHECK(sb_model_get_int(m, "no_such", &v) == SB_ERR_NOT_FOUND);
    /* the file: bytes, read back, the same bytes and digest */
    size_t len = 0;
    SB_CHECK(sb_model_to_bytes(m, NULL, 0, &len) == SB_OK && len > 0);
    uint8_t *buf = malloc(len), *buf2 = malloc(len);
    SB_CHECK(sb_model_to_bytes(m, buf, len, NULL) == SB_OK);
    SB_CHECK(sb_model_from_bytes(buf, len, &r) == SB_OK);
    SB_CHECK(sb_model_to_bytes(r, buf2, len, NULL) == SB_OK && memcmp(buf, buf2, len) == 0);
    char h1[65], h2[65];
    SB_CHECK(sb_model_digest(m, h1) == SB_OK && sb_model_digest(r, h2) == SB_OK && !strcmp(h1, h2));
    /* transform: sb_umap_transform's bits, from the fitted and the read model */
    {
        sb_params *p = NULL;
        sb_dataset *tr = NULL, *qd = NULL;
        SB_CHECK(sb_params_create(&p) == SB_OK && sb_params_parse(p, params) == SB_OK);
        SB_CHECK(sb_dataset_from_matrix(x, n, d, &tr) == SB_OK && sb_dataset_from_matrix(q, nq, d, &qd) == SB_OK);
        SB_CHECK(sb_umap_transform(p, tr, e0, qd, t0, (size_t)(nq * nc), NULL) == SB_OK);
        sb_params_free(p);
        sb_dataset_free(tr);
        sb_dataset_free(qd);
    }
    int32_t was = 0;
    SB_CHECK(sb_get_num_threads(&was) == SB_OK);
    const int threads[3] = {1, 2, 7}, batch[3] = {1, 7, nq};
    for (int ti = 0; ti < 3; ti++) {
        SB_CHECK(sb_set_num_threads(threads[ti]) == SB_OK);
        for (int bi = 0; bi < 3; bi++) {
            memset(t1, 0xff, sizeof(float) * nq * nc);
            for (int b = 0; b < nq; b += batch[bi]) {
                const int e = b + batch[bi] < nq ? b + batch[bi] : nq;
                SB_CHECK(model_rows(ti & 1 ? r : m, q, b, e, d, nc, t1) == SB_OK);
            }
            SB_CHECK(memcmp(t0, t1, sizeof(float) * nq * nc) == 0);
        }
    }
    SB_CHECK(sb_set_num_threads(was) == SB_OK);
    /* the other prediction kinds and a feature mismatch refused by name */
    {
        sb_dataset *qd = NULL;
        SB_CHECK(sb_dataset_from_matrix(q, nq, d, &qd) == SB_OK);
        SB_CHECK(sb_model_predict(m, qd, SB_PREDICT_VALUE, t1, (size_t)(nq * nc), NULL) == SB_ERR_INVALID_ARGUMENT);
        SB_CHECK(strstr(sb_last_error(), "UMAP") != NULL);
        sb_dataset_free(qd);
        SB_CHECK(sb_dataset_from_matrix(q, nq / 2, d - 1, &qd) == SB_OK);
        SB_CHECK(sb_model_predict(m, qd, SB_PREDICT_TRANSFORM, t1, (size_t)(nq * nc), NULL) == SB_ERR_INVALID_INPUT);
        SB_CHECK(strstr(sb_last_error(), "features") != NULL);
        sb_dataset_free(qd);
    }
    /* a NaN query refused by name */
    {
        sb_dataset *qd = NULL;
        q[3] = NAN;
        SB_CHECK(sb_dataset_from_matrix(q, nq, d, &qd) == SB_OK);
        SB_CHECK(sb_model_predict(m, qd, SB_PREDICT_TRANSFORM, t1, (size_t)(nq * nc), NULL) == SB_ERR_INVALID_INPUT);
        SB_CHECK(strstr(sb_last_error(), "NaN") != NULL);
        sb_dataset_free(qd);
    }
    sb_model_free(m);
    sb_model_free(r);
    free(buf), free(buf2), free(x), free(q), free(e0), free(e1), free(t0), free(t1);
}

/* A file whose n_neighbors is out of range, whose a is not the curve's, or
 * whose embedding holds a NaN is refused by name (resealed: the digest
 * recomputed, so only the payload's check can refuse it); a truncated or
 * flipped file is refused by the frame and the digest. */
/* init=spectral that no eigensolve serves (3 rows, 2 components: n_components
 * + 1 >= n) starts from the random initialization, as umap-learn falls back,
 * and the model says so: its "init" is 1 (random), its embedding init=random's
 * with the same seed, its parameter text still init=spectral (what was asked);
 * a fit the eigensolver serves reports 0. */
SB_TEST(test_umap_spectral_fallback_reported) {
    const int d = 4;
    float *x = blobs(40, d, 3.0f);
    float e0[6], e1[6];
    sb_model *m = NULL, *r = NULL, *ok = NULL;
    SB_CHECK(fit_model("model=umap,n_neighbors=2,n_epochs=20,random_state=4", x, 3, d, &m) == SB_OK);
    SB_CHECK(fit_model("model=umap,n_neighbors=2,n_epochs=20,random_state=4,init=random", x, 3, d, &r) == SB_OK);
    int64_t v = -1;
    SB_CHECK(sb_model_get_int(m, "init", &v) == SB_OK && v == 1);
    SB_CHECK(sb_model_get_int(r, "init", &v) == SB_OK && v == 1);
    SB_CHECK(sb_model_get_array(m, "embedding", e0, 6, NULL) == SB_OK);
    SB_CHECK(sb_model_get_array(r, "embedding", e1, 6, NULL) == SB_OK);
    SB_CHECK(memcmp(e0, e1, sizeof e0) == 0);
    size_t len = 0;
    SB_CHECK(sb_model_to_bytes(m, NULL, 0, &len) == SB_OK && len > 0);
    uint8_t *buf = malloc(len);
    SB_CHECK(sb_model_to_bytes(m, buf, len, NULL) == SB_OK);
    const char *asked = "init=spectral\n";
    int found = 0;
    for (size_t i = 0; i + strlen(asked) <= len && !found; i++) found = !memcmp(buf + i, asked, strlen(asked));
    SB_CHECK(found);
    sb_model *back = NULL;
    SB_CHECK(sb_model_from_bytes(buf, len, &back) == SB_OK);
    SB_CHECK(sb_model_get_int(back, "init", &v) == SB_OK && v == 1);
    SB_CHECK(fit_model("model=umap,n_neighbors=5,n_epochs=20,random_state=4", x, 40, d, &ok) == SB_OK);
    SB_CHECK(sb_model_get_int(ok, "init", &v) == SB_OK && v == 0);
    sb_model_free(m), sb_model_free(r), sb_model_free(ok), sb_model_free(back);
    free(buf), free(x);
}

SB_TEST(test_umap_model_file_refusals) {
    const int n = 30, d = 3;
    float *x = blobs(n, d, 3.0f);
    sb_model *m = NULL, *r = NULL;
    SB_CHECK(fit_model("model=umap,n_epochs=10,n_neighbors=5", x, n, d, &m) == SB_OK);
    size_t len = 0;
    SB_CHECK(sb_model_to_bytes(m, NULL, 0, &len) == SB_OK);
    uint8_t *buf = malloc(len);
    SB_CHECK(sb_model_to_bytes(m, buf, len, NULL) == SB_OK);
    /* the payload after its tag: n_neighbors 1, then a one ulp off the curve, each resealed */
    size_t at = 0;
    for (size_t i = 0; i + 4 <= len; i++)
        if (!memcmp(buf + i, "UMAP", 4)) at = i + 12;
    SB_CHECK(at > 0);
    uint8_t *bad = malloc(len);
    memcpy(bad, buf, len);
    bad[at] = 1, bad[at + 1] = bad[at + 2] = bad[at + 3] = 0;
    sb_sha256(bad, len - 32, bad + len - 32);
    SB_CHECK(sb_model_from_bytes(bad, len, &r) == SB_ERR_INVALID_INPUT && r == NULL);
    SB_CHECK(strstr(sb_last_error(), "n_neighbors") != NULL);
    memcpy(bad, buf, len);
    bad[at + 48] ^= 1; /* a's lowest mantissa bit */
    sb_sha256(bad, len - 32, bad + len - 32);
    SB_CHECK(sb_model_from_bytes(bad, len, &r) == SB_ERR_INVALID_INPUT && r == NULL);
    SB_CHECK(strstr(sb_last_error(), "a and b") != NULL);
    memcpy(bad, buf, len); /* a NaN in the embedding (its last value) */
    bad[len - 33] = 0x7f, bad[len - 34] = 0xc0, bad[len - 35] = 0, bad[len - 36] = 0;
    sb_sha256(bad, len - 32, bad + len - 32);
    SB_CHECK(sb_model_from_bytes(bad, len, &r) == SB_ERR_INVALID_INPUT && r == NULL);
    SB_CHECK(strstr(sb_last_error(), "embedding") != NULL);
    memcpy(bad, buf, len); /* unchanged and resealed: read */
    sb_sha256(bad, len - 32, bad + len - 32);
    SB_CHECK(sb_model_from_bytes(bad, len, &r) == SB_OK);
    sb_model_free(r), r = NULL;
    free(bad);
    /* a truncated file */
    SB_CHECK(sb_model_from_bytes(buf, len - 40, &r) == SB_ERR_INVALID_INPUT && r == NULL);
    /* one flipped byte in the payload: the digest refuses it */
    buf[len - 40] ^= 1;
    SB_CHECK(sb_model_from_bytes(buf, len, &r) == SB_ERR_INVALID_INPUT && r == NULL);
    sb_model_free(m);
    free(buf), free(x);
}

/* A labelled or weighted dataset is refused by name before any work:
 * supervised UMAP is not built, and UMAP takes no weights. */
SB_TEST(test_umap_supervised_refused) {
    const int n = 20, d = 3;
    float *x = blobs(n, d, 3.0f), y[20], out[40];
    for (int i = 0; i < n; i++) y[i] = (float)(i & 1);
    sb_params *p = NULL;
    sb_dataset *ds = NULL;
    sb_model *m = NULL;
    SB_CHECK(sb_params_create(&p) == SB_OK && sb_params_parse(p, "model=umap,n_epochs=5") == SB_OK);
    SB_CHECK(sb_dataset_from_matrix(x, n, d, &ds) == SB_OK);
    SB_CHECK(sb_dataset_set_label(ds, y, n) == SB_OK);
    SB_CHECK(sb_umap_fit(p, ds, NULL, NULL, &m) == SB_ERR_INVALID_ARGUMENT && m == NULL);
    SB_CHECK(strstr(sb_last_error(), "supervised UMAP") != NULL);
    SB_CHECK(sb_umap_fit_transform(p, ds, NULL, NULL, out, 40, NULL) == SB_ERR_INVALID_ARGUMENT);
    sb_dataset_free(ds);
    SB_CHECK(sb_dataset_from_matrix(x, n, d, &ds) == SB_OK);
    SB_CHECK(sb_dataset_set_weight(ds, y, n) == SB_OK);
    SB_CHECK(sb_umap_fit(p, ds, NULL, NULL, &m) == SB_ERR_INVALID_ARGUMENT && m == NULL);
    SB_CHECK(strstr(sb_last_error(), "weights") != NULL);
    sb_dataset_free(ds);
    sb_params_free(p);
    free(x);
}

#define UMAP_GOLDEN "/../fuzz/corpus/model/umap-v2.sbm"

/* The golden file tests/fuzz/corpus/model/umap-v2.sbm is this fit's file,
 * byte for byte (SB_WRITE_GOLDEN=1 rewrites it): a change of the payload's
 * layout, the parameter text or the fit's bits shows here; the model read
 * from it transforms as the fitted one does. */
SB_TEST(test_umap_model_golden) {
    enum { N = 24, D = 3 };
    float x[N * D], q[3 * D], t1[6], t2[6];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < D; j++) x[i * D + j] = (float)((i * 7 + j * 3) % 11) / 4.0f + (i >= N / 2 && j == 0 ? 5.0f : 0.0f);
    for (int i = 0; i < 3 * D; i++) q[i] = x[i] + 0.125f;
    sb_model *m = NULL, *r = NULL;
    SB_CHECK(fit_model("model=umap,n_neighbors=5,n_epochs=12,random_state=3", x, N, D, &m) == SB_OK);
    if (!m) return;
    size_t n = 0;
    SB_CHECK(sb_model_to_bytes(m, NULL, 0, &n) == SB_OK);
    uint8_t *b = malloc(n);
    SB_CHECK(sb_model_to_bytes(m, b, n, NULL) == SB_OK);
    char path[512];
    if (sb_test_golden(UMAP_GOLDEN, path)) SB_CHECK(sb_model_save(m, path) == SB_OK);
    size_t got = 0;
    uint8_t *gold = sb_test_read_file(path, n, &got);
    SB_CHECK(gold != NULL);
    if (gold) {
        SB_CHECK(got == n && memcmp(gold, b, n) == 0);
        SB_CHECK(sb_model_from_bytes(gold, got, &r) == SB_OK);
    }
    free(gold);
    if (r) {
        SB_CHECK(model_rows(m, q, 0, 3, D, 2, t1) == SB_OK && model_rows(r, q, 0, 3, D, 2, t2) == SB_OK);
        SB_CHECK(memcmp(t1, t2, sizeof t1) == 0);
    }
    sb_model_free(r);
    sb_model_free(m);
    free(b);
}

/* The batched epochs' fixed point (src/kernels/umap.h): sb_um_fix is v 2^40
 * rounded to nearest, ties to even, clamped to +-qmax, and sb_um_unfix is
 * s 2^-40 rounded to float32 the same way; both checked against the
 * compiler's own conversions (exact here: a float times 2^40 is exact in
 * double, and nearbyint rounds to even in the default mode), on values
 * drawn over every exponent, the ties included. */
#include "../../src/kernels/umap.h"
SB_TEST(test_umap_fixed_point) {
    uint64_t s = 7;
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const uint32_t e = 60u + (uint32_t)((s >> 33) % 90u); /* exponents 2^-67 .. 2^22 */
        const uint32_t u = (uint32_t)((s >> 31) & 0x80000000u) | (e << 23) | (uint32_t)(s & 0x7FFFFFu);
        float v;
        memcpy(&v, &u, 4);
        const double want = nearbyint((double)v * 0x1p40);
        const int64_t qmax = (int64_t)1 << 50;
        const int64_t w = want > (double)qmax ? qmax : want < -(double)qmax ? -qmax : (int64_t)want;
        bad += sb_um_fix(v, qmax) != w;
        const int64_t q = (int64_t)(s >> 3) >> (int)((s >> 58) & 63u); /* every magnitude below 2^61 */
        bad += sb_um_unfix(q) != (float)((double)(q >> 20) * 0x1p-20 + (double)(q & 0xFFFFF) * 0x1p-40) &&
               ((q >> 52) == 0 || (q >> 52) == -1); /* exact in double below 2^52: the float's rounding is one */
    }
    SB_CHECK(bad == 0);
    /* ties to even at the unit, the clamp, NaN */
    SB_CHECK(sb_um_fix(0x1p-41f, 100) == 0 && sb_um_fix(3.0f * 0x1p-41f, 100) == 2 && sb_um_fix(-3.0f * 0x1p-41f, 100) == -2);
    SB_CHECK(sb_um_fix(1.0e30f, 12345) == 12345 && sb_um_fix(-INFINITY, 12345) == -12345 && sb_um_fix(NAN, 9) == 0);
    SB_CHECK(sb_um_unfix(0) == 0.0f && sb_um_unfix((int64_t)1 << 40) == 1.0f && sb_um_unfix(-((int64_t)3 << 39)) == -1.5f);
    /* 2^24 + 1 units times 2^k: a tie between two floats, to even */
    SB_CHECK(sb_um_unfix(((int64_t)1 << 24) + 1) == 0x1p-16f && sb_um_unfix(((int64_t)1 << 24) + 3) == (0x1p-16f + 0x1p-38f));
}
