/*
 * fuzz_predict.c: prediction data read for a model (sb_dataset_read_for_model,
 * src/models/predict_data.c, over every reader of src/io) on arbitrary bytes,
 * against two fixed models of three features: one named a, b, c and the same
 * model without names (has_feature_names 0). fuzz_model.c fuzzes the model
 * against fixed data; this is the other side. Contract (docs/io.md,
 * "Prediction data for a model"): a refusal is a named error with no dataset;
 * an accepted file has exactly the model's width, its columns named as the
 * model's features when the model has names and the file a header, and the
 * model predicts on it one value a row.
 */
#include "fuzz_common.h"
#include "io/dataset.h"
#include "models/model.h"

#define ROWS 48

/* The model, trained once per process on fixed data: y = 3a - b + c/4. */
static sb_model *fixed_model(int named) {
    static sb_model *m[2];
    if (m[named]) return m[named];
    float x[ROWS * 3], y[ROWS];
    for (int i = 0; i < ROWS; i++) {
        x[3 * i] = (float)(i % 7), x[3 * i + 1] = (float)(i % 5), x[3 * i + 2] = (float)(i % 3);
        y[i] = 3.0f * x[3 * i] - x[3 * i + 1] + 0.25f * x[3 * i + 2];
    }
    const char *names[3] = {"a", "b", "c"};
    sb_dataset *d = NULL;
    sb_params *p = NULL;
    sb_fuzz_require(sb_dataset_from_matrix(x, ROWS, 3, &d) == SB_OK && sb_dataset_set_label(d, y, ROWS) == SB_OK &&
                    sb_dataset_set_feature_names(d, names, 3) == SB_OK && sb_params_create(&p) == SB_OK &&
                    sb_params_parse(p, "n_estimators=3 max_depth=3") == SB_OK &&
                    sb_gbdt_fit(p, d, NULL, NULL, &m[named]) == SB_OK);
    if (!named) {
        for (int f = 0; f < 3; f++) sb_free(m[named]->feature_names[f]);
        sb_free(m[named]->feature_names);
        m[named]->feature_names = NULL;
    }
    sb_params_free(p);
    sb_dataset_free(d);
    return m[named];
}

static void one(const sb_model *m, const char *path, const char *format) {
    sb_dataset *d = (sb_dataset *)1;
    sb_status st = sb_dataset_read_for_model(m, path, format, &d);
    if (st != SB_OK) {
        sb_fuzz_require((sb_fuzz_named_error(st) || st == SB_ERR_INVALID_ARGUMENT) && d == NULL &&
                        sb_last_error()[0] != '\0');
        return;
    }
    sb_fuzz_require(d != NULL && d->t.ncols == 3 && d->t.nrows >= 1);
    if (m->feature_names && d->t.has_names == SB_NAMES_HEADER)
        for (int f = 0; f < 3; f++) sb_fuzz_require(strcmp(d->t.names[f], m->feature_names[f]) == 0);
    static float out[100000];
    size_t n = 0;
    if (d->t.nrows <= (int64_t)(sizeof out / sizeof out[0])) {
        sb_fuzz_require(sb_model_predict(m, d, SB_PREDICT_RAW, out, sizeof out / sizeof out[0], &n) == SB_OK);
        sb_fuzz_require(n == (size_t)d->t.nrows);
    }
    sb_dataset_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sb_io_set_limits_for_tests(100000, 512, (size_t)1 << 20);
    const sb_model *named = fixed_model(1), *nameless = fixed_model(0);
    const char *path = sb_fuzz_file(data, size);
    one(named, path, NULL); /* detected: csv, tsv-noheader, libsvm or idx */
    one(named, path, "csv");
    one(nameless, path, NULL);
    one(nameless, path, "csv");
    return 0;
}
