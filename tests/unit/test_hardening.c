/*
 * test_hardening.c: robustness promises (docs/robustness.md).
 * - Allocation failure at every allocation site of training, saving, loading,
 *   reading and predicting: each is SB_ERR_OUT_OF_MEMORY with a message, no
 *   output, an existing output file untouched and no temporary left behind.
 *   The sweep runs in one process (sb_alloc_fail_at_for_tests); under
 *   build-asan/sb_unit, LeakSanitizer fails the run if any failure leaked.
 * - Any change to a model file's bytes is refused with a named reason.
 * - Inputs beyond the documented limits are refused as SB_ERR_LIMIT.
 */
#include "sb_test.h"
#include "samebits_cert.h"
#include "core/internal.h"
#include "io/reader.h"
#include "io/dataset.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers ---------------------------------------------------------------- */

static char g_dir[64];

/* A fresh temporary directory for this process. */
static const char *tmp_dir(void) {
    if (!g_dir[0]) {
        snprintf(g_dir, sizeof g_dir, "/tmp/sb_hardening_XXXXXX");
        if (!mkdtemp(g_dir)) g_dir[0] = '\0';
    }
    return g_dir;
}

static void remove_dir(void) {
    DIR *d = opendir(g_dir);
    if (!d) return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
        remove(p);
    }
    closedir(d);
    rmdir(g_dir);
    g_dir[0] = '\0';
}

/* Number of entries in the temporary directory (. and .. excluded). */
static int dir_entries(void) {
    DIR *d = opendir(g_dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static int file_equals(const char *path, const char *text) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char buf[256];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return n == strlen(text) && memcmp(buf, text, n) == 0;
}

static uint8_t *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *b = malloc(1 << 16);
    *len = b ? fread(b, 1, 1 << 16, f) : 0;
    fclose(f);
    return b;
}

/* A small deterministic training set: nrows x 4, labels 0..k-1. */
static sb_status make_data(int64_t nrows, int k, sb_dataset **out) {
    float x[4 * 400], y[400];
    uint32_t s = 12345u;
    for (int64_t r = 0; r < nrows; r++) {
        float acc = 0.0f;
        for (int c = 0; c < 4; c++) {
            s = s * 1664525u + 1013904223u;
            float v = (float)(s >> 8) / 16777216.0f;
            x[r * 4 + c] = (r % 17 == 3 && c == 2) ? __builtin_nanf("") : v;
            acc += c < 2 ? v : 0.0f;
        }
        y[r] = (float)((int)(acc * (float)k * 0.5f) % k);
    }
    sb_status st = sb_dataset_from_matrix(x, nrows, 4, out);
    if (st != SB_OK) return st;
    if ((st = sb_dataset_set_label(*out, y, nrows)) != SB_OK) {
        sb_dataset_free(*out);
        *out = NULL;
    }
    return st;
}

/* Train (with validation data and a card) and save to path. */
static sb_status train_and_save(const char *params_text, int k, const char *path) {
    sb_params *p = NULL;
    sb_dataset *tr = NULL, *va = NULL;
    sb_card *card = NULL;
    sb_model *m = NULL;
    sb_status st;
    if ((st = sb_params_create(&p)) != SB_OK) goto done;
    if ((st = sb_params_parse(p, params_text)) != SB_OK) goto done;
    if ((st = make_data(300, k, &tr)) != SB_OK) goto done;
    if ((st = make_data(60, k, &va)) != SB_OK) goto done;
    if ((st = sb_card_create(&card)) != SB_OK) goto done;
    if ((st = sb_gbdt_fit(p, tr, va, card, &m)) != SB_OK) goto done;
    if (m == NULL) {
        st = SB_ERR_INTERNAL;
        goto done;
    }
    st = sb_model_save(m, path);
done:
    sb_model_free(m);
    sb_card_free(card);
    sb_dataset_free(va);
    sb_dataset_free(tr);
    sb_params_free(p);
    return st;
}

typedef sb_status (*scenario_fn)(const char *out_path);

static int file_equals_bytes(const char *path, const uint8_t *b, size_t n) {
    size_t len = 0;
    uint8_t *got = read_all(path, &len);
    int eq = got && len == n && memcmp(got, b, n) == 0;
    free(got);
    return eq;
}

/* Fail allocation 1, 2, 3, ... of scenario in turn until it runs without
 * reaching the failing one. Each failed run must be SB_ERR_OUT_OF_MEMORY with
 * a message, leave out_path as it was and leave no other file; or, where the
 * library tolerates that failure by design (a shrinking realloc keeps the
 * larger block), SB_OK with exactly the clean run's output. Returns the
 * number of allocation sites swept. */
static long sweep(scenario_fn scenario, const char *what) {
    const char *dir = tmp_dir();
    SB_CHECK(dir[0] != '\0');
    char out[128];
    snprintf(out, sizeof out, "%s/out.sbm", dir);
    const char *old = "an earlier model\n";
    write_text(out, old);
    sb_status st = scenario(out); /* the clean run: its output is the reference */
    SB_CHECK(st == SB_OK);
    size_t ref_len = 0;
    uint8_t *ref = read_all(out, &ref_len);
    long n, tolerated = 0;
    for (n = 1; n < 100000; n++) {
        write_text(out, old);
        sb_alloc_fail_at_for_tests(n);
        st = scenario(out);
        long used = sb_alloc_count_for_tests();
        sb_alloc_fail_at_for_tests(0);
        if (used < n) { /* the nth allocation never came: a clean run */
            SB_CHECK(st == SB_OK && file_equals_bytes(out, ref, ref_len));
            break;
        }
        int ok = st == SB_ERR_OUT_OF_MEMORY && sb_last_error()[0] != '\0' && file_equals(out, old) &&
                 dir_entries() == 1;
        if (st == SB_OK && file_equals_bytes(out, ref, ref_len) && dir_entries() == 1) ok = 1, tolerated++;
        if (!ok) {
            fprintf(stderr, "  %s: allocation %ld failed: %s '%s', output %s, %d files\n", what, n,
                    sb_status_name(st), sb_last_error(), file_equals(out, old) ? "untouched" : "CHANGED",
                    dir_entries());
            SB_CHECK(!"an allocation failure is a clean SB_ERR_OUT_OF_MEMORY");
            break;
        }
    }
    printf("  %s: %ld allocation sites, each failure clean (%ld tolerated by design)\n", what, n - 1,
           tolerated);
    free(ref);
    remove_dir();
    return n - 1;
}

/* ---- allocation failure sweeps ------------------------------------------------ */

static sb_status scenario_train_binary(const char *out) {
    return train_and_save("objective=binary n_estimators=3 num_leaves=5 min_samples_leaf=5 "
                          "early_stopping_rounds=2 subsample=0.8 colsample=0.75 eval_period=0",
                          2, out);
}

static sb_status scenario_train_multiclass(const char *out) {
    return train_and_save("objective=multiclass n_estimators=2 growth=depthwise max_depth=3 "
                          "min_samples_leaf=5 bin_sample_rows=1000 eval_period=0",
                          3, out);
}

/* quantile: its starting score and leaf renewal allocate (gbdt.c), on a bag */
static sb_status scenario_train_quantile(const char *out) {
    return train_and_save("objective=quantile alpha=0.7 reg_alpha=0.5 n_estimators=3 num_leaves=5 "
                          "min_samples_leaf=5 subsample=0.8 eval_period=0",
                          2, out);
}

SB_TEST(test_hardening_alloc_failures_train) {
    sb_set_num_threads(1);
    SB_CHECK(sweep(scenario_train_quantile, "train quantile, 1 thread") >= 20);
    SB_CHECK(sweep(scenario_train_binary, "train binary, 1 thread") >= 20);
    SB_CHECK(sweep(scenario_train_multiclass, "train multiclass, 1 thread") >= 20);
    /* With workers, which allocation is the nth may vary; each must still be clean. */
    sb_set_num_threads(3);
    SB_CHECK(sweep(scenario_train_binary, "train binary, 3 threads") >= 20);
    sb_set_num_threads(0);
}

/* Prediction data for the golden model (features age, höhe, x), its columns
 * in another order; outside the sweep's directory. */
static char g_pred_csv[64];

/* Load the golden model, from its file and from bytes, read prediction data
 * for it in each format, predict, and load a card. */
static sb_status scenario_load_and_predict(const char *out) {
    (void)out;
    char path[512];
    snprintf(path, sizeof path, "%s/models/v1-regression.sbm", sb_test_data_dir());
    sb_model *m = NULL, *m2 = NULL;
    sb_dataset *d = NULL;
    sb_card *card = NULL;
    uint8_t *bytes = NULL;
    float pred[64];
    size_t got, len = 0;
    sb_status st;
    if ((st = sb_model_load(path, &m)) != SB_OK) goto done;
    bytes = read_all(path, &len);
    if ((st = sb_model_from_bytes(bytes, len, &m2)) != SB_OK) goto done;
    if ((st = sb_dataset_read_for_model(m, g_pred_csv, NULL, &d)) != SB_OK) goto done;
    if ((st = sb_model_predict(m2, d, SB_PREDICT_RAW, pred, 64, &got)) != SB_OK) goto done;
    sb_dataset_free(d);
    d = NULL;
    snprintf(path, sizeof path, "%s/io/good.csv", sb_test_data_dir());
    if ((st = sb_dataset_read(path, "csv", "y", &d)) != SB_OK) goto done;
    sb_dataset_free(d);
    d = NULL;
    snprintf(path, sizeof path, "%s/io/lgbm.tsv", sb_test_data_dir());
    if ((st = sb_dataset_read(path, NULL, NULL, &d)) != SB_OK) goto done;
    if ((st = sb_card_load("fixtures/cards/logit-train.card", &card)) != SB_OK) goto done;
done:
    free(bytes);
    sb_card_free(card);
    sb_dataset_free(d);
    sb_model_free(m2);
    sb_model_free(m);
    return st;
}

SB_TEST(test_hardening_alloc_failures_load_read_predict) {
    snprintf(g_pred_csv, sizeof g_pred_csv, "/tmp/sb_hardening_pred_%ld.csv", (long)getpid());
    write_text(g_pred_csv, "x,y,h\xc3\xb6he,age\n1,2,3,4\nNA,0,-1,40\n");
    SB_CHECK(sweep(scenario_load_and_predict, "load, read, predict, card") >= 20);
    remove(g_pred_csv);
}

/* ---- model bytes changed ------------------------------------------------------ */

/* The reasons the loader names for a damaged file (docs/model-format.md). */
static int named_reason(const char *msg) {
    static const char *const k[] = {"not a samebits model", "format version", "truncated", "appended",
                                    "digest mismatch", "too short", "smaller than", "limit"};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (strstr(msg, k[i])) return 1;
    return 0;
}

static uint8_t *golden(size_t *len) {
    char path[512];
    snprintf(path, sizeof path, "%s/models/v1-regression.sbm", sb_test_data_dir());
    return read_all(path, len);
}

/* A bit flip, a changed byte, an inserted byte (with the length field left
 * or made consistent) and a removed byte, at every position: refused as
 * SB_ERR_INVALID_INPUT with a named reason, no model. */
SB_TEST(test_hardening_model_any_change_refused_by_name) {
    size_t len = 0;
    uint8_t *g = golden(&len);
    SB_CHECK(g != NULL && len > 100);
    if (!g) return;
    uint8_t *b = malloc(len + 1);
    int bad = 0, tried = 0;
    for (size_t pos = 0; pos <= len; pos++) {
        for (int kind = 0; kind < 5; kind++) {
            size_t n = len;
            memcpy(b, g, len);
            if (kind == 0 && pos < len) b[pos] ^= 0x10;               /* a flipped bit */
            else if (kind == 1 && pos < len) b[pos] = (uint8_t)~b[pos]; /* a changed byte */
            else if (kind == 2 || kind == 3) {                        /* an inserted byte */
                memmove(b + pos + 1, g + pos, len - pos);
                b[pos] = 0x5a;
                n = len + 1;
                if (kind == 3 && pos >= 20)                           /* length made to match */
                    for (int i = 0; i < 8; i++) b[12 + i] = (uint8_t)((uint64_t)n >> (8 * i));
            } else if (kind == 4 && pos < len) {                      /* a removed byte */
                memmove(b + pos, g + pos + 1, len - pos - 1);
                n = len - 1;
            } else
                continue;
            tried++;
            uint8_t *exact = malloc(n); /* exactly n bytes: ASan sees any over-read */
            memcpy(exact, b, n);
            sb_model *m = (sb_model *)&m;
            sb_status st = sb_model_from_bytes(exact, n, &m);
            if (st != SB_ERR_INVALID_INPUT || m != NULL || !named_reason(sb_last_error())) {
                if (bad++ < 5)
                    fprintf(stderr, "  change %d at %zu: %s '%s'\n", kind, pos, sb_status_name(st), sb_last_error());
                if (st == SB_OK) sb_model_free(m);
            }
            free(exact);
        }
    }
    SB_CHECK(tried > 4 * (int)len);
    SB_CHECK(bad == 0);
    free(b);
    free(g);
}

/* The same through sb_model_load: the message names the file and the reason. */
SB_TEST(test_hardening_model_load_names_file_and_reason) {
    size_t len = 0;
    uint8_t *g = golden(&len);
    SB_CHECK(g != NULL);
    if (!g) return;
    const char *dir = tmp_dir();
    char path[128];
    snprintf(path, sizeof path, "%s/damaged.sbm", dir);
    FILE *f = fopen(path, "wb");
    fwrite(g, 1, len - 5, f); /* truncated */
    fclose(f);
    sb_model *m = (sb_model *)&m;
    SB_CHECK(sb_model_load(path, &m) == SB_ERR_INVALID_INPUT && m == NULL);
    SB_CHECK(strstr(sb_last_error(), path) && strstr(sb_last_error(), "truncated"));
    f = fopen(path, "wb");
    fwrite(g, 1, len, f);
    fputs("x", f); /* appended */
    fclose(f);
    SB_CHECK(sb_model_load(path, &m) == SB_ERR_INVALID_INPUT && m == NULL);
    SB_CHECK(strstr(sb_last_error(), path) && strstr(sb_last_error(), "appended"));
    remove_dir();
    free(g);
}

/* ---- limits ------------------------------------------------------------------- */

static int refuse_before_alloc;

static sb_status fit_with(const char *params_text, int k) {
    sb_params *p = NULL;
    sb_dataset *d = NULL;
    sb_model *m = NULL;
    sb_status st = sb_params_create(&p);
    if (st == SB_OK) st = sb_params_parse(p, params_text);
    if (st == SB_OK) st = make_data(50, k, &d);
    /* A refusal must come before training allocates: its first allocation fails. */
    sb_alloc_fail_at_for_tests(refuse_before_alloc ? 1 : 0);
    if (st == SB_OK) st = sb_gbdt_fit(p, d, NULL, NULL, &m);
    sb_alloc_fail_at_for_tests(0);
    sb_model_free(m);
    sb_dataset_free(d);
    sb_params_free(p);
    return st;
}

static int limit_named(sb_status st, const char *needle) {
    if (st == SB_ERR_LIMIT && strstr(sb_last_error(), needle)) return 1;
    fprintf(stderr, "  want SB_ERR_LIMIT naming '%s': %s '%s'\n", needle, sb_status_name(st), sb_last_error());
    return 0;
}

/* Training parameters beyond their documented ranges (docs/gbdt.md) are
 * refused as SB_ERR_LIMIT naming the parameter, before training allocates
 * anything (its first allocation is made to fail: the refusal must win). */
SB_TEST(test_hardening_limits_training_parameters) {
    refuse_before_alloc = 1;
    SB_CHECK(limit_named(fit_with("max_bin=256", 2), "max_bin"));
    SB_CHECK(limit_named(fit_with("max_depth=65", 2), "max_depth"));
    SB_CHECK(limit_named(fit_with("growth=depthwise max_depth=16", 2), "max_depth"));
    SB_CHECK(limit_named(fit_with("num_leaves=65537", 2), "num_leaves"));
    SB_CHECK(limit_named(fit_with("objective=multiclass num_class=1025", 3), "num_class"));
    SB_CHECK(limit_named(fit_with("n_estimators=100000000", 2), "n_estimators"));
    SB_CHECK(limit_named(fit_with("objective=multiclass n_estimators=10000 num_class=1001", 3), "10,000,000 trees"));
    refuse_before_alloc = 0;
    SB_CHECK(fit_with("max_bin=255 max_depth=64 num_leaves=8", 2) == SB_OK);
    /* A multiclass label beyond the class limit. */
    sb_params *p = NULL;
    sb_dataset *d = NULL;
    sb_model *m = NULL;
    float x[3] = {1, 2, 3}, y[3] = {0, 1, 5000};
    SB_CHECK(sb_params_create(&p) == SB_OK && sb_params_set(p, "objective", "multiclass") == SB_OK);
    SB_CHECK(sb_dataset_from_matrix(x, 3, 1, &d) == SB_OK && sb_dataset_set_label(d, y, 3) == SB_OK);
    sb_alloc_fail_at_for_tests(1);
    SB_CHECK(limit_named(sb_gbdt_fit(p, d, NULL, NULL, &m), "1024 classes") && m == NULL);
    sb_alloc_fail_at_for_tests(0);
    sb_dataset_free(d);
    sb_params_free(p);
}

/* Data beyond the row and column limits is refused before the table is
 * allocated: the limits are lowered by the test hook so small files reach them. */
SB_TEST(test_hardening_limits_data) {
    const char *dir = tmp_dir();
    char path[128];
    snprintf(path, sizeof path, "%s/wide.csv", dir);
    write_text(path, "a,b,c,y\n1,2,3,4\n5,6,7,8\n9,10,11,12\n");
    sb_table t;
    sb_io_set_limits_for_tests(0, 2, 0);
    SB_CHECK(limit_named(sb_read_csv(path, "y", &t), "limit of 2"));
    sb_io_set_limits_for_tests(2, 0, 0);
    SB_CHECK(limit_named(sb_read_csv(path, "y", &t), "row"));
    sb_io_set_limits_for_tests(0, 0, 0);
    SB_CHECK(sb_read_csv(path, "y", &t) == SB_OK);
    sb_table_release(&t);
    float x[4] = {0};
    sb_dataset *d = NULL;
    SB_CHECK(limit_named(sb_dataset_from_matrix(x, 1, 1000001, &d), "1000001") && d == NULL);
    SB_CHECK(limit_named(sb_dataset_from_matrix(x, INT64_C(1) << 31, 1, &d), "2147483648") && d == NULL);
    remove_dir();
}

/* An IDX header that promises more pixels than the file holds is refused
 * before anything is allocated (the first allocation is made to fail: a
 * refusal other than SB_ERR_OUT_OF_MEMORY shows none was attempted). */
SB_TEST(test_hardening_idx_header_checked_against_file_size) {
    const char *dir = tmp_dir();
    char path[128];
    snprintf(path, sizeof path, "%s/t10k-images-idx3-ubyte", dir);
    const uint8_t h[16 + 8] = {0, 0, 8, 3, 0, 0x0f, 0x42, 0x40, 0, 0, 0, 28, 0, 0, 0, 28}; /* 10^6 x 28 x 28 */
    FILE *f = fopen(path, "wb");
    fwrite(h, 1, sizeof h, f);
    fclose(f);
    sb_table t;
    sb_alloc_fail_at_for_tests(1);
    sb_status st = sb_read_idx(path, &t);
    sb_alloc_fail_at_for_tests(0);
    SB_CHECK(st == SB_ERR_INVALID_INPUT && strstr(sb_last_error(), "truncated"));
    if (st != SB_ERR_INVALID_INPUT) fprintf(stderr, "  %s '%s'\n", sb_status_name(st), sb_last_error());
    SB_CHECK(t.x == NULL && t.nrows == 0);
    remove_dir();
}
