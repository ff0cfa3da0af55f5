/*
 * fuzz_csv.c: the CSV and headerless-TSV readers and format detection
 * (src/io/csv.c) on arbitrary bytes. Contract checked: every outcome is SB_OK
 * with a consistent table, or a named error with a zeroed table (docs/io.md).
 */
#include "fuzz_common.h"
#include "io/reader.h"

static int table_is_zero(const sb_table *t) {
    sb_table z;
    memset(&z, 0, sizeof z);
    return memcmp(t, &z, sizeof z) == 0;
}

/* A table the reader says is good: shape within limits, every name set, every
 * label finite, every cell read (ASan flags a cell beyond the allocation). */
static void check_table(const sb_table *t, int want_label) {
    sb_fuzz_require(t->nrows >= 1 && t->ncols >= 0 && t->ncols <= sb_io_max_cols());
    sb_fuzz_require(t->names != NULL || t->ncols == 0);
    for (int32_t c = 0; c < t->ncols; c++) sb_fuzz_require(t->names[c] != NULL);
    sb_fuzz_require(want_label ? t->label != NULL : t->label == NULL);
    uint32_t acc = 0;
    for (int64_t i = 0; i < t->nrows * t->ncols; i++) {
        uint32_t b;
        memcpy(&b, &t->x[i], 4);
        acc ^= b;
    }
    if (t->label)
        for (int64_t r = 0; r < t->nrows; r++) sb_fuzz_require(t->label[r] - t->label[r] == 0.0f);
    (void)acc;
}

static void one(sb_status st, sb_table *t, int want_label) {
    if (st == SB_OK) check_table(t, want_label);
    else sb_fuzz_require(sb_fuzz_named_error(st) && table_is_zero(t));
    sb_table_release(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* Small limits keep each input's memory small; the rules are the same. */
    sb_io_set_limits_for_tests(100000, 512, (size_t)1 << 20);
    const char *path = sb_fuzz_file(data, size);
    sb_table t;
    one(sb_read_csv(path, "y", &t), &t, 1);
    one(sb_read_csv(path, NULL, &t), &t, 0);
    one(sb_read_tsv_noheader(path, 0, &t), &t, 1);
    one(sb_read_tsv_noheader(path, -1, &t), &t, 0);
    const char *fmt = NULL;
    sb_status st = sb_detect_format(path, &fmt);
    sb_fuzz_require(st == SB_OK ? fmt != NULL : sb_fuzz_named_error(st));
    return 0;
}
