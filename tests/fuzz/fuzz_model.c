/*
 * fuzz_model.c: the model loader (sb_model_from_bytes, src/models/model_format.c),
 * format versions 1 and 2, and prediction from what it accepts, both from a
 * matrix and through the prediction-data reader (sb_dataset_read_for_model).
 * Each input is tried twice: as it is, and "sealed" (its length field and its
 * digest recomputed) so that mutations reach the field checks behind the
 * digest. Contract (docs/model-format.md): a refusal is a named error with no
 * model; an accepted file is exactly what the writer produces, in the file's
 * version, for the model it read (one spelling); the model's digest is the last
 * 32 bytes of its version-2 file; and the model predicts, the same bits from a
 * CSV file as from the matrix (exponential smoothing and ARIMA, which forecast,
 * refuse every prediction by name).
 */
#include "fuzz_common.h"
#include "samebits_cert.h"
#include "models/model.h" /* the feature names, which the public API does not list */

/* Feature f's name, or NULL for a model without names. */
static const char *sb_fuzz_feature_name(const sb_model *m, int32_t f) {
    return m->feature_names ? m->feature_names[f] : NULL;
}

/* m's file in version (1 or 2), malloc'ed; *n gets its size. */
static uint8_t *bytes_of(const sb_model *m, uint32_t version, size_t *n) {
    sb_fuzz_require(sb_model_to_bytes_version(m, version, NULL, 0, n) == SB_OK && *n > 0);
    uint8_t *b = malloc(*n);
    sb_fuzz_require(b != NULL);
    sb_fuzz_require(sb_model_to_bytes_version(m, version, b, *n, n) == SB_OK);
    return b;
}

/* One CSV field: the text in double quotes, each quote doubled (RFC 4180). */
static void csv_quoted(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The two rows of x (zeros, NaNs) as a CSV file whose columns are an extra one
 * and then the model's features in reverse order (so the reader must pick them
 * by name), or, for a model without names, exactly nf columns (taken as they
 * are) or nf + 1 (refused by name). Where the reader accepts the file the
 * predictions are the matrix's, bit for bit. */
static void check_read_for_model(const sb_model *m, const sb_model_info *info, const float *want, size_t nwant,
                                 int named) {
    const int32_t nf = info->num_features;
    for (int wide = 0; wide <= 1; wide++) {
        if (named && !wide) continue; /* positional reading is the matrix's: nothing more to see */
        const char *path = sb_fuzz_file(NULL, 0);
        FILE *f = fopen(path, "wb");
        sb_fuzz_require(f != NULL);
        if (wide) fputs(named ? "\"\x01" "extra\"" : "extra", f);
        for (int32_t j = 0; j < nf; j++) {
            if (wide || j) fputc(',', f);
            if (named) csv_quoted(f, sb_fuzz_feature_name(m, nf - 1 - j));
            else fprintf(f, "c%d", (int)j);
        }
        fputc('\n', f);
        for (int r = 0; r < 2; r++) {
            if (wide) fputs("7", f);
            for (int32_t j = 0; j < nf; j++) fputs(wide || j ? (r ? ",nan" : ",0") : (r ? "nan" : "0"), f);
            fputc('\n', f);
        }
        sb_fuzz_require(fclose(f) == 0);
        sb_dataset *d = NULL;
        sb_status st = sb_dataset_read_for_model(m, path, "csv", &d);
        if (!named && wide) {
            sb_fuzz_require(st == SB_ERR_INVALID_INPUT && d == NULL);
            continue;
        }
        if (!named) sb_fuzz_require(st == SB_OK);
        if (st != SB_OK) { /* a name the CSV reader does not take as it is (e.g. leading spaces) */
            sb_fuzz_require(sb_fuzz_named_error(st) && d == NULL);
            continue;
        }
        int64_t rows = 0;
        int32_t cols = 0;
        sb_fuzz_require(sb_dataset_shape(d, &rows, &cols) == SB_OK && rows == 2 && cols == nf);
        float *got = malloc(sizeof(float) * (nwant ? nwant : 1));
        size_t n = 0;
        sb_fuzz_require(got != NULL);
        sb_fuzz_require(sb_model_predict(m, d, SB_PREDICT_RAW, got, nwant, &n) == SB_OK && n == nwant);
        sb_fuzz_require(memcmp(got, want, sizeof(float) * nwant) == 0);
        free(got);
        sb_dataset_free(d);
    }
}

/* Whether a model of this objective has probabilities: the classifiers
 * (binary, multiclass, a forest's classes) have; regression, ranking, the
 * regression objectives (huber, quantile, poisson, gamma, tweedie) and the
 * isolation forest refuse them by name. */
static int has_proba(const char *objective) {
    static const char *const none[] = {"regression", "lambdarank", "rank_pairwise", "huber",
                                       "quantile", "poisson", "gamma", "tweedie", "isolation"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        if (strcmp(objective, none[i]) == 0) return 0;
    return 1;
}

/* A family that predicts through its own calls: every float32 prediction
 * kind of sb_model_predict is refused by name at a one-value row. */
static void refuses_every_kind(const sb_model *m) {
    float z = 0.0f;
    sb_dataset *d1 = NULL;
    sb_fuzz_require(sb_dataset_from_matrix(&z, 1, 1, &d1) == SB_OK);
    for (int kind = 0; kind <= 2; kind++) {
        size_t got = 0;
        sb_fuzz_require(sb_model_predict(m, d1, (sb_predict_kind)kind, &z, 1, &got) == SB_ERR_INVALID_ARGUMENT);
    }
    sb_dataset_free(d1);
}

static void check_accepted(const sb_model *m, const uint8_t *file, size_t size) {
    /* One spelling in the file's own version (its frame says which). */
    const uint32_t version = (uint32_t)file[8] | (uint32_t)file[9] << 8 | (uint32_t)file[10] << 16 |
                             (uint32_t)file[11] << 24;
    sb_fuzz_require(version == 1 || version == 2);
    size_t need = 0;
    uint8_t *back = bytes_of(m, version, &need);
    sb_fuzz_require(need == size && memcmp(back, file, size) == 0);
    free(back);
    /* The digest is the version-2 file's, whatever version was read. */
    uint8_t *v2 = bytes_of(m, 2, &need);
    char hex[65], want[65];
    sb_fuzz_require(sb_model_digest(m, hex) == SB_OK);
    for (int i = 0; i < 32; i++) snprintf(want + 2 * i, 3, "%02x", v2[need - 32 + i]);
    sb_fuzz_require(strcmp(hex, want) == 0);
    sb_model *again = NULL;
    sb_fuzz_require(sb_model_from_bytes(v2, need, &again) == SB_OK);
    sb_model_free(again);
    free(v2);

    sb_model_info info;
    sb_fuzz_require(sb_model_get_info(m, &info) == SB_OK);
    if (info.family == SB_FAMILY_MLP) {
        /* an mlp predicts through sb_mlp_*: every sb_model_predict kind is
         * refused by name; sb_mlp_from_bytes reads the same file, and its
         * outputs at a zero row are a class code or indicator (a classifier) */
        refuses_every_kind(m);
        sb_mlp *net = NULL;
        sb_fuzz_require(sb_mlp_from_bytes(file, size, &net) == SB_OK);
        int64_t nf = 0, no = 0, cls = 0;
        sb_fuzz_require(sb_mlp_get_int(net, "n_features_in_", &nf) == SB_OK && nf == info.num_features);
        sb_fuzz_require(sb_mlp_get_int(net, "n_outputs_", &no) == SB_OK && no >= 1);
        sb_fuzz_require(sb_mlp_get_int(net, "classifier", &cls) == SB_OK);
        if (nf <= 4096 && no <= 4096) {
            float *x = calloc((size_t)nf, sizeof(float)), *y = malloc(sizeof(float) * (size_t)(no + 1));
            sb_fuzz_require(x != NULL && y != NULL);
            sb_fuzz_require(sb_mlp_predict(net, x, 1, nf, y) == SB_OK);
            if (cls) /* a class code or 0/1 indicators */
                sb_fuzz_require(y[0] >= 0.0f && y[0] == (float)(int64_t)y[0]);
            free(x);
            free(y);
        }
        sb_mlp_free(net);
        return;
    }
    if (info.family == SB_FAMILY_GP) {
        /* gaussian process regression predicts float64 rows through sb_gp_*: every
         * float32 prediction kind is refused by name; sb_gp_from_bytes reads the
         * same file, and its mean is finite at a training row */
        refuses_every_kind(m);
        sb_gp *g = NULL;
        sb_fuzz_require(sb_gp_from_bytes(file, size, &g) == SB_OK);
        int64_t nf = 0;
        sb_fuzz_require(sb_gp_get_int(g, "n_features_in_", &nf) == SB_OK && nf == info.num_features);
        size_t need = 0;
        sb_fuzz_require(sb_gp_get_array(g, "X_train_", NULL, 0, &need) == SB_OK && need >= (size_t)nf);
        double *x = malloc(sizeof(double) * need), mean[64];
        sb_fuzz_require(x != NULL);
        sb_fuzz_require(sb_gp_get_array(g, "X_train_", x, need, &need) == SB_OK);
        int64_t t = 0;
        sb_fuzz_require(sb_gp_get_int(g, "n_targets", &t) == SB_OK);
        if (t <= 64) {
            sb_fuzz_require(sb_gp_predict(g, x, 1, nf, mean, NULL, NULL) == SB_OK);
            for (int64_t k = 0; k < t; k++) sb_fuzz_require(mean[k] - mean[k] == 0.0);
        }
        free(x);
        sb_gp_free(g);
        return;
    }
    if (info.family == SB_FAMILY_ETS || info.family == SB_FAMILY_ARIMA) {
        /* exponential smoothing forecasts its series and predicts no rows:
         * every kind is refused by name (sb_ets_load reads it) */
        refuses_every_kind(m);
        return;
    }
    const int32_t nf = info.num_features;
    if (info.family == SB_FAMILY_UMAP) {
        /* UMAP transforms: value and raw refused by name; a row of zeros is
         * embedded (the same bits twice) when the schedule is small enough to
         * run here; a NaN row is refused by name */
        float *z = calloc((size_t)nf, sizeof(float));
        sb_fuzz_require(z != NULL);
        sb_dataset *d1 = NULL;
        sb_fuzz_require(sb_dataset_from_matrix(z, 1, nf, &d1) == SB_OK);
        static float v[2][100];
        size_t got = 0;
        for (int kind = 0; kind <= 2; kind++)
            sb_fuzz_require(sb_model_predict(m, d1, (sb_predict_kind)kind, v[0], 100, &got) == SB_ERR_INVALID_ARGUMENT);
        int64_t nc = 0, ep = 0, k = 0, n = 0;
        sb_fuzz_require(sb_model_get_int(m, "n_components", &nc) == SB_OK && nc >= 1 && nc <= 100);
        sb_fuzz_require(sb_model_get_int(m, "n_epochs", &ep) == SB_OK && sb_model_get_int(m, "n_neighbors", &k) == SB_OK);
        sb_fuzz_require(sb_model_get_int(m, "n_samples_fit", &n) == SB_OK && n >= 2);
        if (ep <= 600 && n <= 4096 && (int64_t)nf * n <= 1 << 20) {
            /* embedded, or refused by name (training rows the exact search refuses: squares past 1e37),
             * the same both times */
            sb_status st[2];
            for (int rep = 0; rep < 2; rep++) {
                st[rep] = sb_model_predict(m, d1, SB_PREDICT_TRANSFORM, v[rep], 100, &got);
                sb_fuzz_require(st[rep] == SB_OK ? got == (size_t)nc : sb_fuzz_named_error(st[rep]));
            }
            sb_fuzz_require(st[0] == st[1]);
            if (st[0] == SB_OK) sb_fuzz_require(memcmp(v[0], v[1], sizeof(float) * (size_t)nc) == 0);
        }
        sb_dataset_free(d1);
        z[0] = __builtin_nanf("");
        sb_fuzz_require(sb_dataset_from_matrix(z, 1, nf, &d1) == SB_OK);
        sb_fuzz_require(sb_model_predict(m, d1, SB_PREDICT_TRANSFORM, v[0], 100, &got) == SB_ERR_INVALID_INPUT);
        sb_dataset_free(d1);
        free(z);
        return;
    }
    if (info.family == SB_FAMILY_SVM) {
        /* support vector models: a row of zeros predicts, a NaN is refused by name */
        float *z = calloc((size_t)nf, sizeof(float));
        sb_fuzz_require(z != NULL);
        sb_dataset *d1 = NULL;
        sb_fuzz_require(sb_dataset_from_matrix(z, 1, nf, &d1) == SB_OK);
        static float v[10000];
        size_t got = 0;
        sb_fuzz_require(sb_model_predict(m, d1, SB_PREDICT_VALUE, v, 1, &got) == SB_OK && got == 1);
        sb_fuzz_require(sb_model_predict(m, d1, SB_PREDICT_RAW, v, sizeof v / sizeof v[0], &got) == SB_OK);
        /* probabilities: a model fitted with probability (probA in the file) gives them, the others refuse by name */
        size_t npa = 0;
        sb_fuzz_require(sb_svm_get_f64(m, "probA", NULL, 0, &npa) == SB_OK);
        const sb_status ps = sb_model_predict(m, d1, SB_PREDICT_PROBA, v, sizeof v / sizeof v[0], &got);
        sb_fuzz_require(npa > 0 ? ps == SB_OK && got == (size_t)info.num_class : ps == SB_ERR_INVALID_ARGUMENT);
        sb_dataset_free(d1);
        z[0] = __builtin_nanf("");
        sb_fuzz_require(sb_dataset_from_matrix(z, 1, nf, &d1) == SB_OK);
        sb_fuzz_require(sb_model_predict(m, d1, SB_PREDICT_VALUE, v, 1, &got) == SB_ERR_INVALID_INPUT);
        sb_dataset_free(d1);
        free(z);
        return;
    }
    /* Two rows: zeros and NaNs (every missing-value direction is walked). */
    float *x = malloc(sizeof(float) * 2 * (size_t)nf);
    sb_fuzz_require(x != NULL);
    for (int32_t j = 0; j < nf; j++) {
        x[j] = 0.0f;
        x[nf + j] = __builtin_nanf("");
    }
    sb_dataset *d = NULL;
    sb_fuzz_require(sb_dataset_from_matrix(x, 2, nf, &d) == SB_OK);
    static float out[2 * 10000], raw[2 * 10000]; /* num_class <= 10,000 */
    size_t nraw = 0;
    /* A model whose raw scores could overflow float32 (docs/model-format.md,
     * "Raw scores that could overflow") is refused by name, in every kind and
     * before any row, and nothing more can be predicted from it. */
    size_t none = 0;
    if (sb_model_predict(m, d, SB_PREDICT_RAW, out, sizeof out / sizeof out[0], &none) == SB_ERR_LIMIT &&
        strstr(sb_last_error(), "can overflow float32")) {
        for (int kind = 0; kind <= 2; kind++) {
            /* a kind the objective lacks is refused first, as for any model */
            int no_proba = kind == SB_PREDICT_PROBA && !has_proba(info.objective);
            sb_status st = sb_model_predict(m, d, (sb_predict_kind)kind, NULL, 0, &none);
            sb_fuzz_require(no_proba ? st == SB_ERR_INVALID_ARGUMENT : st == SB_ERR_LIMIT);
        }
        sb_dataset_free(d);
        free(x);
        return;
    }
    for (int kind = 0; kind <= 2; kind++) {
        size_t got = 0;
        sb_status st = sb_model_predict(m, d, (sb_predict_kind)kind, out, sizeof out / sizeof out[0], &got);
        /* Probabilities of a regression or ranking model are refused by name. */
        int no_proba = kind == SB_PREDICT_PROBA && !has_proba(info.objective);
        sb_fuzz_require(no_proba ? st == SB_ERR_INVALID_ARGUMENT : st == SB_OK);
        if (kind == SB_PREDICT_RAW) {
            sb_fuzz_require(got == 2 * (size_t)info.num_class);
            memcpy(raw, out, sizeof(float) * got);
            nraw = got;
        }
    }
    sb_dataset_free(d);
    free(x);
    /* Through a file, for models small enough to keep this cheap. */
    if (nf <= 4096) check_read_for_model(m, &info, raw, nraw, sb_fuzz_feature_name(m, 0) != NULL);
}

static void one(const uint8_t *file, size_t size) {
    sb_model *m = (sb_model *)1;
    sb_status st = sb_model_from_bytes(file, size, &m);
    if (st == SB_OK) {
        sb_fuzz_require(m != NULL);
        check_accepted(m, file, size);
        sb_model_free(m);
    } else {
        sb_fuzz_require(sb_fuzz_named_error(st) && m == NULL);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    one(data, size);
    /* Sealed: drop the last 32 bytes, set total_length (u64 LE at offset 12),
     * append the SHA-256 of the rest. */
    if (size < 52 || size > ((size_t)1 << 24)) return 0;
    size_t body = size - 32;
    uint8_t *f = malloc(size);
    sb_fuzz_require(f != NULL);
    memcpy(f, data, body);
    for (int i = 0; i < 8; i++) f[12 + i] = (uint8_t)((uint64_t)size >> (8 * i));
    sb_fuzz_require(sb_sha256(f, body, f + body) == SB_OK);
    one(f, size);
    free(f);
    return 0;
}
