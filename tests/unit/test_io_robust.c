/* test_io_robust.c: the readers under hostile input (issue 17): query and
 * weight files through the shared record reader (a long line is one record, a
 * NUL byte or /dev/zero is a named error at once), feature names checked when
 * the data is read, IDX dimensions that overflow, messages built from
 * sb_last_error(), and prediction data mapped to a model's features by name
 * (a reordered header predicts as the original; a model without names takes
 * only its own width). */
#include "io/dataset.h"
#include "models/model.h"
#include "sb_test.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *temp_bytes(const char *text, size_t n) { return sb_test_temp_file(text, n); }
static const char *temp_text(const char *text) { return temp_bytes(text, strlen(text)); }

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A dataset of n rows x 2 zero columns, for the query and weight readers. */
static sb_dataset *rows_dataset(int64_t n) {
    float *x = calloc((size_t)n * 2, sizeof(float));
    sb_dataset *d = NULL;
    if (x && sb_dataset_from_matrix(x, n, 2, &d) != SB_OK) d = NULL;
    free(x);
    return d;
}

/* ---- sb_fail given sb_last_error() ---------------------------------------- */

SB_TEST(test_io_robust_fail_with_last_error_is_not_garbled) {
    (void)sb_fail(SB_ERR_INVALID_INPUT, "query sizes add up to 12 rows; the data has 10");
    sb_status st = sb_fail(SB_ERR_INVALID_INPUT, "%s: %s", "/data/train.query", sb_last_error());
    SB_CHECK(st == SB_ERR_INVALID_INPUT);
    SB_CHECK(strcmp(sb_last_error(), "/data/train.query: query sizes add up to 12 rows; the data has 10") == 0);
    /* Through the library: a query file whose sizes overshoot. */
    sb_dataset *d = rows_dataset(10);
    SB_CHECK(d != NULL);
    const char *path = temp_text("4\n4\n");
    SB_CHECK(sb_dataset_read_query_file(d, path) == SB_ERR_INVALID_INPUT);
    char want[160];
    snprintf(want, sizeof want, "%s: query sizes add up to 8 rows; the data has 10", path);
    SB_CHECK(strcmp(sb_last_error(), want) == 0);
    unlink(path);
    sb_dataset_free(d);
}

/* ---- query files ------------------------------------------------------------ */

SB_TEST(test_io_robust_query_file_long_line_is_one_record) {
    /* 19 lines: 17 of 10, one of 11, one of 19 written with 126 leading zeros
     * (128 bytes with its newline). A reader of 128-byte lines took that line
     * as two records, "000...01" and "9": 20 queries of the same 200 rows. */
    char text[512];
    size_t n = 0;
    for (int i = 0; i < 17; i++) n += (size_t)snprintf(text + n, sizeof text - n, "10\n");
    n += (size_t)snprintf(text + n, sizeof text - n, "11\n");
    memset(text + n, '0', 126);
    n += 126;
    n += (size_t)snprintf(text + n, sizeof text - n, "19\n");
    sb_dataset *d = rows_dataset(200);
    SB_CHECK(d != NULL);
    const char *path = temp_bytes(text, n);
    SB_CHECK(sb_dataset_read_query_file(d, path) == SB_OK);
    SB_CHECK(d->t.qid != NULL && d->t.qid[180] == 17 && d->t.qid[181] == 18 && d->t.qid[199] == 18);
    unlink(path);
    /* A line over the 4,096-byte limit of a number line: refused by name. */
    char *big = malloc(5000);
    SB_CHECK(big != NULL);
    memset(big, '0', 4999);
    big[4998] = '5';
    big[4999] = '\n';
    path = temp_bytes(big, 5000);
    SB_CHECK(sb_dataset_read_query_file(d, path) == SB_ERR_LIMIT);
    SB_CHECK(strstr(sb_last_error(), "line 1 is 4999 bytes") && strstr(sb_last_error(), "query"));
    unlink(path);
    free(big);
    /* Sizes past the data's rows stop the read at that line. */
    path = temp_text("150\n60\n1\n");
    SB_CHECK(sb_dataset_read_query_file(d, path) == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "line 2") && strstr(sb_last_error(), "210 rows"));
    unlink(path);
    path = temp_text("12x\n");
    SB_CHECK(sb_dataset_read_query_file(d, path) == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "\"12x\" is not a query size"));
    unlink(path);
    sb_dataset_free(d);
}

SB_TEST(test_io_robust_nul_bytes_and_dev_zero_refused_at_once) {
    sb_dataset *d = rows_dataset(4);
    SB_CHECK(d != NULL);
    /* A NUL byte used to end the line early (and a line of NULs was skipped). */
    const char *path = temp_bytes("2\n\0\n2\n", 6);
    SB_CHECK(sb_dataset_read_query_file(d, path) == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "line 2") && strstr(sb_last_error(), "NUL byte"));
    unlink(path);
    path = temp_bytes("1\n1\n1\x00" "5\n1\n", 10);
    SB_CHECK(sb_dataset_read_weight_file(d, path) == SB_ERR_INVALID_INPUT && d->t.weight == NULL);
    SB_CHECK(strstr(sb_last_error(), "line 3") && strstr(sb_last_error(), "NUL byte"));
    unlink(path);
    /* /dev/zero never ends: refused in its first chunk. */
    double t0 = seconds();
    SB_CHECK(sb_dataset_read_query_file(d, "/dev/zero") == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "/dev/zero: line 1: a NUL byte"));
    SB_CHECK(sb_dataset_read_weight_file(d, "/dev/zero") == SB_ERR_INVALID_INPUT);
    sb_dataset *r = NULL;
    SB_CHECK(sb_dataset_read("/dev/zero", "csv", NULL, &r) == SB_ERR_INVALID_INPUT && r == NULL);
    SB_CHECK(sb_dataset_read("/dev/zero", NULL, NULL, &r) == SB_ERR_INVALID_INPUT && r == NULL);
    SB_CHECK(seconds() - t0 < 2.0);
    /* A NUL inside a CSV header name or a value. */
    path = temp_bytes("a,b\x00z,y\n1,2,3\n", 14);
    SB_CHECK(sb_dataset_read(path, "csv", "y", &r) == SB_ERR_INVALID_INPUT && r == NULL);
    SB_CHECK(strstr(sb_last_error(), "line 1: a NUL byte (at byte 4 of the line)"));
    unlink(path);
    path = temp_bytes("0 1:1\n1 1:2\x00\n", 13);
    SB_CHECK(sb_dataset_read(path, "libsvm", NULL, &r) == SB_ERR_INVALID_INPUT && r == NULL);
    SB_CHECK(strstr(sb_last_error(), "line 2: a NUL byte"));
    unlink(path);
    sb_dataset_free(d);
}

/* ---- weight files ------------------------------------------------------------ */

SB_TEST(test_io_robust_weight_file) {
    sb_dataset *d = rows_dataset(200);
    SB_CHECK(d != NULL);
    /* 199 lines, one of them 256 bytes of zeros and a 1: a reader of 256-byte
     * lines took it as two weights (0 and 1) and accepted 200. */
    char text[1200];
    size_t n = 0;
    for (int i = 0; i < 198; i++) n += (size_t)snprintf(text + n, sizeof text - n, "%d\n", i % 3);
    memset(text + n, '0', 255);
    n += 255;
    n += (size_t)snprintf(text + n, sizeof text - n, "1\n");
    const char *path = temp_bytes(text, n);
    SB_CHECK(sb_dataset_read_weight_file(d, path) == SB_ERR_INVALID_INPUT && d->t.weight == NULL);
    SB_CHECK(strstr(sb_last_error(), "has 199 weights for 200 data rows"));
    unlink(path);
    /* One more line: 200 weights, the long one read as 1. CRLF, spaces and
     * blank lines are fine. */
    n += (size_t)snprintf(text + n, sizeof text - n, " 2.5\r\n\n");
    path = temp_bytes(text, n);
    SB_CHECK(sb_dataset_read_weight_file(d, path) == SB_OK && d->t.weight != NULL);
    SB_CHECK(d->t.weight[197] == 2.0f && d->t.weight[198] == 1.0f && d->t.weight[199] == 2.5f);
    unlink(path);
    /* Refusals keep the weights d had. */
    const char *bad[][2] = {{"1\n-1\n", "line 2: weight -1"},
                            {"1\nnan\n", "line 2: \"nan\" is not a weight"},
                            {"inf\n", "line 1: weight inf"},
                            {"1e39\n", "beyond float32's range"},
                            {"1\n1x\n", "\"1x\" is not a weight"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        path = temp_text(bad[i][0]);
        SB_CHECK(sb_dataset_read_weight_file(d, path) == SB_ERR_INVALID_INPUT);
        SB_CHECK(strstr(sb_last_error(), bad[i][1]) != NULL);
        SB_CHECK(d->t.weight != NULL && d->t.weight[199] == 2.5f);
        unlink(path);
    }
    sb_dataset_free(d);
    d = rows_dataset(2);
    path = temp_text("1\n1\n1\n");
    SB_CHECK(sb_dataset_read_weight_file(d, path) == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "line 3: more weights than the data's 2 rows"));
    unlink(path);
    SB_CHECK(sb_dataset_read_weight_file(d, "/nonexistent/w") == SB_ERR_IO);
    SB_CHECK(strstr(sb_last_error(), "weight file /nonexistent/w: cannot open"));
    SB_CHECK(sb_dataset_read_weight_file(NULL, "x") == SB_ERR_INVALID_ARGUMENT);
    sb_dataset_free(d);
}

/* ---- feature names, label-only files ----------------------------------------- */

SB_TEST(test_io_robust_names_checked_when_read) {
    sb_dataset *d = NULL;
    /* A name of 65,537 bytes: the model format's limit is 65,536. */
    size_t n = 65537;
    char *text = malloc(n + 32);
    SB_CHECK(text != NULL);
    memset(text, 'a', n);
    memcpy(text + n, ",y\n1,2\n", 8);
    const char *path = temp_bytes(text, n + 7);
    SB_CHECK(sb_dataset_read(path, "csv", "y", &d) == SB_ERR_LIMIT && d == NULL);
    SB_CHECK(strstr(sb_last_error(), "line 1, column 1: the name of feature 0 is 65537 bytes"));
    unlink(path);
    path = temp_bytes(text + 1, n - 1 + 7); /* 65,536 bytes: kept */
    SB_CHECK(sb_dataset_read(path, "csv", "y", &d) == SB_OK);
    sb_dataset_free(d);
    d = NULL;
    unlink(path);
    free(text);
    /* Latin-1 "höhe": not UTF-8. The label's name is not a feature's. */
    path = temp_text("x,h\xf6he,y\n1,2,3\n");
    SB_CHECK(sb_dataset_read(path, "csv", "y", &d) == SB_ERR_INVALID_INPUT && d == NULL);
    SB_CHECK(strstr(sb_last_error(), "column 2: the name of feature 1 is not valid UTF-8"));
    unlink(path);
    path = temp_text("x,h\xc3\xb6he,\xf6\n1,2,3\n");
    SB_CHECK(sb_dataset_read(path, "csv", "\xf6", &d) == SB_OK);
    sb_dataset_free(d);
    d = NULL;
    unlink(path);
    /* Names given through the API are held to the same rule. */
    SB_CHECK((d = rows_dataset(1)) != NULL);
    const char *names[2] = {"ok", "bad\xff"};
    SB_CHECK(sb_dataset_set_feature_names(d, names, 2) == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "feature 1 is not valid UTF-8"));
    names[1] = "fine";
    SB_CHECK(sb_dataset_set_feature_names(d, names, 2) == SB_OK && d->t.has_names == SB_NAMES_HEADER);
    sb_dataset_free(d);
    d = NULL;
    /* Label-only files: no feature column, refused when read. */
    path = temp_text("y\n1\n2\n");
    SB_CHECK(sb_dataset_read(path, "csv", "y", &d) == SB_ERR_INVALID_INPUT && d == NULL);
    SB_CHECK(strstr(sb_last_error(), "no feature column: the only column is the label (\"y\")"));
    SB_CHECK(sb_dataset_read(path, "tsv-noheader", NULL, &d) == SB_ERR_INVALID_INPUT && d == NULL);
    unlink(path);
    path = temp_text("1\n0 # no features\n");
    SB_CHECK(sb_dataset_read(path, "libsvm", NULL, &d) == SB_ERR_INVALID_INPUT && d == NULL);
    SB_CHECK(strstr(sb_last_error(), "no feature column (only labels)"));
    unlink(path);
}

/* ---- IDX ------------------------------------------------------------------- */

SB_TEST(test_io_robust_idx_dimensions_overflow) {
    /* 16 bytes: magic, then 0xFFFFFFFF rows, rows and columns. rows x cols
     * (about 1.8e19) does not fit in int64: it must be refused, not wrapped. */
    const char h[16] = {0, 0, 8, 3, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    const char *path = temp_bytes(h, 16);
    sb_dataset *d = NULL;
    SB_CHECK(sb_dataset_read(path, "idx", NULL, &d) == SB_ERR_LIMIT && d == NULL);
    SB_CHECK(strstr(sb_last_error(), "4294967295 x 4294967295 pixels are outside the limits"));
    SB_CHECK(sb_dataset_read(path, NULL, NULL, &d) == SB_ERR_LIMIT && d == NULL);
    unlink(path);
    /* 2^16 x 2^16 = 2^32 pixels (beyond int32, within int64): refused too. */
    const char g[16] = {0, 0, 8, 3, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0};
    path = temp_bytes(g, 16);
    SB_CHECK(sb_dataset_read(path, "idx", NULL, &d) == SB_ERR_LIMIT && d == NULL);
    unlink(path);
}

/* ---- prediction data mapped to a model ----------------------------------------- */

/* A small regression model on features a, b, c (or without names). */
static sb_model *abc_model(int named) {
    enum { N = 64 };
    float x[N * 3], y[N];
    for (int i = 0; i < N; i++) {
        x[3 * i] = (float)(i % 7);
        x[3 * i + 1] = (float)(i % 5);
        x[3 * i + 2] = (float)(i % 3);
        y[i] = 3.0f * x[3 * i] - x[3 * i + 1] + 0.5f * x[3 * i + 2];
    }
    sb_dataset *d = NULL;
    sb_params *p = NULL;
    sb_model *m = NULL;
    const char *names[3] = {"a", "b", "c"};
    if (sb_dataset_from_matrix(x, N, 3, &d) == SB_OK && sb_dataset_set_label(d, y, N) == SB_OK &&
        sb_dataset_set_feature_names(d, names, 3) == SB_OK && sb_params_create(&p) == SB_OK &&
        sb_params_parse(p, "n_estimators=4 max_depth=3") == SB_OK && sb_gbdt_fit(p, d, NULL, NULL, &m) == SB_OK &&
        !named) {
        /* A model whose file has has_feature_names = 0. */
        for (int f = 0; f < 3; f++) sb_free(m->feature_names[f]);
        sb_free(m->feature_names);
        m->feature_names = NULL;
    }
    sb_params_free(p);
    sb_dataset_free(d);
    return m;
}

/* Raw predictions of m on the CSV text, into out (n values); the status. */
static sb_status predict_text(const sb_model *m, const char *text, float *out, size_t n) {
    const char *path = temp_text(text);
    sb_dataset *d = NULL;
    sb_status st = sb_dataset_read_for_model(m, path, NULL, &d);
    if (st == SB_OK) st = sb_model_predict(m, d, SB_PREDICT_RAW, out, n, NULL);
    else SB_CHECK(d == NULL);
    sb_dataset_free(d);
    unlink(path);
    return st;
}

SB_TEST(test_io_robust_predict_maps_columns_by_name) {
    sb_model *m = abc_model(1);
    SB_CHECK(m != NULL);
    float want[3], got[3];
    SB_CHECK(predict_text(m, "a,b,c\n6,0,2\n1,4,0\n3,3,1\n", want, 3) == SB_OK);
    /* The same rows with the columns reordered: by name, the same bits (the
     * positional reader gave other predictions). */
    SB_CHECK(predict_text(m, "c,b,a\n2,0,6\n0,4,1\n1,3,3\n", got, 3) == SB_OK);
    SB_CHECK(memcmp(want, got, sizeof want) == 0);
    /* Extra columns (a label, an id) are ignored, wherever they are. */
    SB_CHECK(predict_text(m, "id,c,y,a,b\n9,2,0,6,0\n9,0,0,1,4\n9,1,0,3,3\n", got, 3) == SB_OK);
    SB_CHECK(memcmp(want, got, sizeof want) == 0);
    /* A feature the header lacks is refused by its name. */
    SB_CHECK(predict_text(m, "c,x,a\n2,0,6\n", got, 3) == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "the model's feature 1 'b' is not among the 3 columns"));
    SB_CHECK(predict_text(m, "a,c\n6,2\n", got, 3) == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "'b'"));
    /* Headerless data (its first field is the label, as LightGBM's) is taken
     * by position, and only at the model's width. */
    SB_CHECK(predict_text(m, "9\t6\t0\t2\n9\t1\t4\t0\n9\t3\t3\t1\n", got, 3) == SB_OK);
    SB_CHECK(memcmp(want, got, sizeof want) == 0);
    SB_CHECK(predict_text(m, "9\t6\t0\t2\t1\n", got, 3) == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "has 4 columns, the model 3 features, and the file has no header"));
    /* LibSVM: index k is feature k; indices beyond the model's are dropped. */
    SB_CHECK(predict_text(m, "0 0:6 2:2 7:1\n0 0:1 1:4\n0 0:3 1:3 2:1\n", got, 3) == SB_OK);
    SB_CHECK(memcmp(want, got, sizeof want) == 0);
    sb_model_free(m);
}

SB_TEST(test_io_robust_predict_model_without_names) {
    /* has_feature_names = 0: columns by position, the width must match. This
     * read m->feature_names[f] through NULL when the widths differed. */
    sb_model *m = abc_model(0);
    SB_CHECK(m != NULL && m->feature_names == NULL);
    size_t nb = 0;
    uint8_t *bytes = NULL;
    SB_CHECK(sb_model_to_bytes(m, NULL, 0, &nb) == SB_OK && (bytes = malloc(nb)) != NULL &&
             sb_model_to_bytes(m, bytes, nb, &nb) == SB_OK);
    sb_model *loaded = NULL;
    SB_CHECK(sb_model_from_bytes(bytes, nb, &loaded) == SB_OK && loaded->feature_names == NULL);
    free(bytes);
    float want[2], got[2];
    SB_CHECK(predict_text(loaded, "a,b,c\n6,0,2\n1,4,0\n", want, 2) == SB_OK);
    SB_CHECK(predict_text(loaded, "p,q,r\n6,0,2\n1,4,0\n", got, 2) == SB_OK);
    SB_CHECK(memcmp(want, got, sizeof want) == 0);
    SB_CHECK(predict_text(loaded, "a,b,c,d\n6,0,2,1\n", got, 2) == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "has 4 columns, the model 3 features (and no feature names"));
    SB_CHECK(predict_text(loaded, "a,b\n6,0\n", got, 2) == SB_ERR_INVALID_INPUT);
    sb_model_free(loaded);
    sb_model_free(m);
}

/* ---- allocation failures -------------------------------------------------------- */

SB_TEST(test_io_robust_query_and_weight_alloc_failures) {
    /* Every allocation of the two readers, failed in turn: SB_ERR_OUT_OF_MEMORY
     * with the dataset's groups and weights as they were, or (past the last
     * site) a clean read. Leaks show under build-asan's LeakSanitizer. */
    char text[4200];
    size_t n = 0;
    for (int i = 0; i < 1500 && n < sizeof text - 8; i++) n += (size_t)snprintf(text + n, sizeof text - n, "1\n");
    sb_dataset *d = rows_dataset(1500);
    SB_CHECK(d != NULL);
    const char *path = temp_bytes(text, n);
    int clean_q = 0, clean_w = 0;
    for (long k = 1; k < 200 && !(clean_q && clean_w); k++) {
        sb_alloc_fail_at_for_tests(k);
        sb_status st = sb_dataset_read_query_file(d, path);
        sb_alloc_fail_at_for_tests(0);
        if (st == SB_OK) clean_q = 1;
        else SB_CHECK(st == SB_ERR_OUT_OF_MEMORY && d->t.qid == NULL);
        if (st == SB_OK) {
            sb_free(d->t.qid);
            d->t.qid = NULL;
        }
        sb_alloc_fail_at_for_tests(k);
        st = sb_dataset_read_weight_file(d, path);
        sb_alloc_fail_at_for_tests(0);
        if (st == SB_OK) clean_w = 1;
        else SB_CHECK(st == SB_ERR_OUT_OF_MEMORY && d->t.weight == NULL);
        if (st == SB_OK) {
            sb_free(d->t.weight);
            d->t.weight = NULL;
        }
    }
    SB_CHECK(clean_q && clean_w);
    unlink(path);
    sb_dataset_free(d);
}

/* A view reads the caller's matrix in place: a fit on it gives the model bytes
 * of a fit on a copy, leaves the matrix unchanged, and freeing the view does
 * not free the matrix (ASan's leg would see a double free). */
SB_TEST(test_io_view_matrix_fits_like_a_copy) {
    enum { N = 300, P = 4 };
    static float x[N * P], x0[N * P], y[N];
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < P; j++) x[i * P + j] = (float)((i * 7 + j * 13) % 17) - 8.0f + 0.25f * (float)j;
        y[i] = x[i * P] * 2.0f - x[i * P + 3] + (float)(i % 5);
    }
    memcpy(x0, x, sizeof x);
    sb_dataset *dc = NULL, *dv = NULL;
    sb_params *p = NULL;
    SB_CHECK(sb_dataset_from_matrix(x, N, P, &dc) == SB_OK);
    SB_CHECK(sb_dataset_view_matrix(x, N, P, &dv) == SB_OK);
    SB_CHECK(sb_dataset_set_label(dc, y, N) == SB_OK && sb_dataset_set_label(dv, y, N) == SB_OK);
    SB_CHECK(sb_params_create(&p) == SB_OK && sb_params_parse(p, "model=ridge alpha=1") == SB_OK);
    sb_model *mc = NULL, *mv = NULL;
    SB_CHECK(sb_linear_fit(p, dc, NULL, &mc) == SB_OK);
    SB_CHECK(sb_linear_fit(p, dv, NULL, &mv) == SB_OK);
    size_t nc = 0, nv = 0;
    static uint8_t bc[1 << 16], bv[1 << 16];
    SB_CHECK(sb_model_to_bytes(mc, bc, sizeof bc, &nc) == SB_OK && sb_model_to_bytes(mv, bv, sizeof bv, &nv) == SB_OK);
    SB_CHECK(nc == nv && nc > 0 && memcmp(bc, bv, nc) == 0);
    sb_dataset_free(dv);
    SB_CHECK(memcmp(x, x0, sizeof x) == 0);
    SB_CHECK(sb_dataset_view_matrix(NULL, N, P, &dv) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "sb_dataset_view_matrix") != NULL);
    sb_model_free(mc);
    sb_model_free(mv);
    sb_dataset_free(dc);
    sb_params_free(p);
}
