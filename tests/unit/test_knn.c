/*
 * test_knn.c: nearest neighbors (src/models/neighbors/knn.c) answer as a
 * function of the exact distances alone: the screen's two products (AVX2's
 * fused one and the generic one) give the same neighbors and distances; so do
 * one batch of queries and each query alone, one thread and three, the k-d
 * tree of radius queries and the screen, and a model read back from its file; and on small integers (where every distance
 * is exact) the neighbors are a brute-force oracle's, by (distance, index).
 * Manhattan, which has no screen, is held to the same: its AVX2 and generic
 * distance code, batches, threads and files agree, and its neighbors and
 * distances are a scalar oracle's (sum_f |x_f - y_f| in four lanes).
 */
#include "sb_test.h"
#include "models/neighbors/knn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float *rows(int64_t n, int32_t d, uint64_t seed, int integers) {
    float *x = malloc(sizeof(float) * (size_t)(n * d));
    uint64_t r = seed;
    for (int64_t i = 0; i < n * d; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = integers ? (float)((r >> 33) % 5u) : (float)(r >> 40) * 0x1p-24f * 8.0f - 4.0f + 100.0f;
    }
    return x;
}

static sb_model *fit(const float *x, int64_t n, int32_t d, const char *params) {
    sb_dataset *ds = NULL;
    sb_params *p = NULL;
    sb_model *m = NULL;
    if (sb_dataset_from_matrix(x, n, d, &ds) != SB_OK || sb_params_create(&p) != SB_OK ||
        sb_params_parse(p, params) != SB_OK || sb_knn_fit(p, ds, NULL, &m) != SB_OK)
        m = NULL;
    sb_params_free(p);
    sb_dataset_free(ds);
    return m;
}

typedef struct result {
    int64_t nr, total, *off, *idx;
    float *dist;
} result;

static void result_free(result *r) {
    free(r->off), free(r->idx), free(r->dist);
    memset(r, 0, sizeof *r);
}

/* kneighbors (radius < 0) or radius_neighbors of q's rows [b, e), appended to *r. */
static int query(const sb_model *m, const float *q, int64_t b, int64_t e, int32_t d, int32_t k, double radius,
                 result *r) {
    sb_dataset *ds = NULL;
    sb_neighbors *nb = NULL;
    int ok = sb_dataset_from_matrix(q + b * d, e - b, d, &ds) == SB_OK &&
             (radius < 0 ? sb_model_kneighbors(m, ds, k, NULL, &nb) : sb_model_radius_neighbors(m, ds, radius, 1, NULL, &nb)) ==
                 SB_OK;
    int64_t nr = 0, total = 0;
    ok = ok && sb_neighbors_shape(nb, &nr, &total) == SB_OK;
    if (ok) {
        r->off = realloc(r->off, sizeof(int64_t) * (size_t)(r->nr + nr + 1));
        r->idx = realloc(r->idx, sizeof(int64_t) * (size_t)(r->total + total + 1));
        r->dist = realloc(r->dist, sizeof(float) * (size_t)(r->total + total + 1));
        int64_t *off = malloc(sizeof(int64_t) * (size_t)(nr + 1));
        ok = r->off && r->idx && r->dist && off && sb_neighbors_copy(nb, off, r->idx + r->total, r->dist + r->total) == SB_OK;
        if (ok) {
            if (r->nr == 0) r->off[0] = 0;
            for (int64_t i = 0; i < nr; i++) r->off[r->nr + 1 + i] = r->total + off[i + 1];
            r->nr += nr, r->total += total;
        }
        free(off);
    }
    sb_neighbors_free(nb);
    sb_dataset_free(ds);
    return ok;
}

static int same(const result *a, const result *b) {
    return a->nr == b->nr && a->total == b->total && !memcmp(a->off, b->off, sizeof(int64_t) * (size_t)(a->nr + 1)) &&
           !memcmp(a->idx, b->idx, sizeof(int64_t) * (size_t)a->total) &&
           !memcmp(a->dist, b->dist, sizeof(float) * (size_t)a->total);
}

SB_TEST(test_knn_screens_batches_threads_and_files_agree) {
    const int32_t widths[] = {1, 3, 16, 33, 300};
    const char *metrics[] = {"model=knn", "model=knn,metric=cosine", "model=knn,metric=manhattan"};
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
        for (int mi = 0; mi < 3; mi++) {
            const int32_t d = widths[wi], k = 7;
            const int64_t n = 700, nq = 150;
            float *x = rows(n, d, 11 + (uint64_t)d, 0), *q = rows(nq, d, 97 + (uint64_t)d, 0);
            memcpy(x + 5 * d, x + 9 * d, sizeof(float) * (size_t)d); /* a duplicate pair */
            sb_model *m = fit(x, n, d, metrics[mi]);
            SB_CHECK(m != NULL);
            if (!m) continue;
            for (int radius_mode = 0; radius_mode < 2; radius_mode++) {
                double radius = -1.0;
                result base = {0};
                SB_CHECK(query(m, q, 0, nq, d, k, -1.0, &base));
                if (radius_mode) { /* the median 4th-neighbor distance */
                    radius = base.total ? (double)base.dist[(nq / 2) * k + 3] : 1.0;
                    result_free(&base);
                    SB_CHECK(query(m, q, 0, nq, d, k, radius, &base));
                }
                result gen = {0}, alone = {0}, threads = {0}, file = {0}, tree = {0}, brute = {0};
                sb_knn_tree_for_tests(1); /* radius queries through the k-d tree (Euclidean), or the screen */
                SB_CHECK(query(m, q, 0, nq, d, k, radius, &tree));
                sb_knn_tree_for_tests(0);
                SB_CHECK(query(m, q, 0, nq, d, k, radius, &brute));
                sb_knn_tree_for_tests(-1);
                SB_CHECK(same(&base, &tree));
                SB_CHECK(same(&base, &brute));
                result_free(&tree), result_free(&brute);
                sb_knn_generic_screen_for_tests(1);
                SB_CHECK(query(m, q, 0, nq, d, k, radius, &gen));
                sb_knn_generic_screen_for_tests(0);
                for (int64_t i = 0; i < nq; i++) SB_CHECK(query(m, q, i, i + 1, d, k, radius, &alone));
                SB_CHECK(sb_set_num_threads(3) == SB_OK);
                SB_CHECK(query(m, q, 0, nq, d, k, radius, &threads));
                SB_CHECK(sb_set_num_threads(0) == SB_OK);
                size_t need = 0;
                uint8_t *bytes = NULL;
                sb_model *back = NULL;
                SB_CHECK(sb_model_to_bytes(m, NULL, 0, &need) == SB_OK && (bytes = malloc(need)) &&
                         sb_model_to_bytes(m, bytes, need, NULL) == SB_OK &&
                         sb_model_from_bytes(bytes, need, &back) == SB_OK);
                SB_CHECK(back && query(back, q, 0, nq, d, k, radius, &file));
                SB_CHECK(same(&base, &gen));
                SB_CHECK(same(&base, &alone));
                SB_CHECK(same(&base, &threads));
                SB_CHECK(same(&base, &file));
                free(bytes);
                sb_model_free(back);
                result_free(&base), result_free(&gen), result_free(&alone), result_free(&threads), result_free(&file);
            }
            sb_model_free(m);
            free(x);
            free(q);
        }
}

/* Rows of two clusters at -+12288 whose coordinates differ by multiples of
 * 2^-10 (the float32 spacing there): centering leaves norms near 1.5e8 while
 * the distances within a cluster are below 1, so the float32 screen cannot
 * order them and only its bound keeps the true neighbors among the
 * candidates; every distance is exact in double. */
static float *far_rows(int64_t n, int32_t d, uint64_t seed) {
    float *x = malloc(sizeof(float) * (size_t)(n * d));
    uint64_t r = seed;
    for (int64_t i = 0; i < n; i++)
        for (int32_t f = 0; f < d; f++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            x[i * d + f] = (i % 2 ? 12288.0f : -12288.0f) + (float)((r >> 33) % 512u) * 0x1p-10f;
        }
    return x;
}

/* order[0..k) := the k least of dd[0..n) by (distance, index): a selection
 * sort, the oracle's own (no library code). */
static void select_least(const double *dd, int64_t n, int32_t k, int64_t *order) {
    for (int64_t j = 0; j < n; j++) order[j] = j;
    for (int32_t c = 0; c < k; c++)
        for (int64_t j = c + 1; j < n; j++)
            if (dd[order[j]] < dd[order[c]] || (dd[order[j]] == dd[order[c]] && order[j] < order[c])) {
                const int64_t t = order[c];
                order[c] = order[j], order[j] = t;
            }
}

/* The oracle's squared Euclidean distance: exact on the sets below
 * (differences of multiples of 2^-10 below 2^15, four squares). */
static double oracle_sq(const float *a, const float *b, int32_t d) {
    double s = 0.0;
    for (int32_t f = 0; f < d; f++) {
        const double t = (double)a[f] - (double)b[f];
        s += t * t;
    }
    return s;
}

/* The oracle's manhattan distance, written apart from the library's vector
 * code: four lanes (lane f mod 4, feature order), (l0 + l1) + (l2 + l3). */
static double oracle_l1(const float *a, const float *b, int32_t d) {
    double l[4] = {0.0, 0.0, 0.0, 0.0};
    for (int32_t f = 0; f < d; f++) l[f % 4] += fabs((double)a[f] - (double)b[f]);
    return (l[0] + l[1]) + (l[2] + l[3]);
}

/* The k nearest of each of q's nq rows among x's n (d features) under params
 * are the oracle's by (dist, index); with report, each reported distance is
 * report(D) of the oracle's D. Takes ownership of x and q. */
static void against_oracle(float *x, float *q, int64_t n, int64_t nq, int32_t d, int32_t k, const char *params,
                           double (*dist)(const float *, const float *, int32_t), float (*report)(double)) {
    sb_model *m = fit(x, n, d, params);
    result r = {0};
    SB_CHECK(m && query(m, q, 0, nq, d, k, -1.0, &r));
    int64_t *order = malloc(sizeof(int64_t) * (size_t)n);
    double *dd = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; r.total && i < nq; i++) {
        for (int64_t j = 0; j < n; j++) dd[j] = dist(q + i * d, x + j * d, d);
        select_least(dd, n, k, order);
        for (int32_t c = 0; c < k; c++) {
            SB_CHECK(r.idx[i * k + c] == order[c]);
            if (report) SB_CHECK(r.dist[i * k + c] == report(dd[order[c]]));
        }
    }
    free(order);
    free(dd);
    result_free(&r);
    sb_model_free(m);
    free(x);
    free(q);
}

static float as_f32(double v) { return (float)v; }

SB_TEST(test_knn_exact_rows_match_a_brute_force_oracle) {
    /* set 0: values 0..4 (many exact ties); set 1: the far clusters */
    for (int set = 0; set < 2; set++)
        against_oracle(set ? far_rows(400, 4, 5) : rows(400, 4, 5, 1), set ? far_rows(60, 4, 6) : rows(60, 4, 6, 1),
                       400, 60, 4, 9, "model=knn", oracle_sq, NULL);
}

/* Manhattan against the scalar oracle: the neighbors by (D, index) and each
 * reported distance D rounded to float32. Integers 0..4 (ties everywhere) and
 * full-mantissa rows of 7 features (the lanes' tail; sums that round). */
SB_TEST(test_knn_manhattan_matches_a_scalar_oracle) {
    against_oracle(rows(400, 4, 5, 1), rows(60, 4, 6, 1), 400, 60, 4, 9, "model=knn,metric=manhattan", oracle_l1,
                   as_f32);
    against_oracle(rows(400, 7, 6, 0), rows(60, 7, 7, 0), 400, 60, 7, 9, "model=knn,metric=minkowski,p=1", oracle_l1,
                   as_f32);
}

/* The status of fitting x (3 x 2, labels y or none) under params text. */
static sb_status fit_status(const float *x, const float *y, const char *text) {
    sb_dataset *ds = NULL;
    sb_params *p = NULL;
    sb_model *m = NULL;
    sb_status st = sb_dataset_from_matrix(x, 3, 2, &ds);
    if (st == SB_OK && y) st = sb_dataset_set_label(ds, y, 3);
    if (st == SB_OK) st = sb_params_create(&p);
    if (st == SB_OK) st = sb_params_parse(p, text);
    if (st == SB_OK) st = sb_knn_fit(p, ds, NULL, &m);
    if (st != SB_OK && m) st = SB_ERR_INTERNAL; /* a refusal leaves no model */
    sb_model_free(m);
    sb_params_free(p);
    sb_dataset_free(ds);
    return st;
}

SB_TEST(test_knn_refusals_are_named) {
    float x[6] = {0, 1, 2, 3, 4, 5}, y[3] = {0, 1, 1}, half[3] = {0, 0.5f, 1}, nan_x[6] = {0, 1, 2, 3, 4, 0};
    nan_x[5] = 0.0f / 0.0f;
    SB_CHECK(fit_status(x, y, "model=knn,n_neighbors=4") == SB_ERR_INVALID_ARGUMENT && strstr(sb_last_error(), "n_neighbors=4"));
    SB_CHECK(fit_status(x, y, "model=knn,n_neighbors=2,metric=chebyshev") == SB_ERR_INVALID_ARGUMENT &&
             strstr(sb_last_error(), "chebyshev"));
    SB_CHECK(fit_status(x, y, "model=knn,n_neighbors=2,p=3") == SB_ERR_INVALID_ARGUMENT && strstr(sb_last_error(), "p=3"));
    SB_CHECK(fit_status(x, y, "model=knn,n_neighbors=2,metric=euclidean,p=1") == SB_ERR_INVALID_ARGUMENT &&
             strstr(sb_last_error(), "p=1 does not go with metric=euclidean"));
    SB_CHECK(fit_status(x, y, "model=knn,n_neighbors=2,p=1") == SB_OK);
    SB_CHECK(fit_status(x, y, "model=knn,n_neighbors=2,metric=cityblock") == SB_OK);
    SB_CHECK(fit_status(x, y, "model=knn,n_neighbors=2,device=cuda") != SB_OK);
    SB_CHECK(fit_status(x, y, "model=knn,n_neighbors=2,weights=gaussian") == SB_ERR_INVALID_ARGUMENT &&
             strstr(sb_last_error(), "gaussian"));
    SB_CHECK(fit_status(x, half, "model=knn,n_neighbors=2") == SB_ERR_INVALID_INPUT &&
             strstr(sb_last_error(), "task=regression"));
    SB_CHECK(fit_status(x, half, "model=knn,n_neighbors=2,task=regression") == SB_OK);
    SB_CHECK(fit_status(x, NULL, "model=knn,task=classification") == SB_ERR_INVALID_INPUT && strstr(sb_last_error(), "label"));
    SB_CHECK(fit_status(nan_x, NULL, "model=knn,n_neighbors=1") == SB_ERR_INVALID_INPUT && strstr(sb_last_error(), "NaN"));
    SB_CHECK(fit_status(x, NULL, "model=knn,n_neighbors=9") == SB_OK); /* unsupervised: refused at the query */
}
