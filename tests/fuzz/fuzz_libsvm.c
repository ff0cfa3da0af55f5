/*
 * fuzz_libsvm.c: the LibSVM/svmlight/LETOR reader (src/io/libsvm.c) on
 * arbitrary bytes, with and without widening (min_cols). Contract: SB_OK with
 * a consistent table (qid on every row or none), or a named error with a
 * zeroed table (docs/io.md).
 */
#include "fuzz_common.h"
#include "io/reader.h"

static int table_is_zero(const sb_table *t) {
    sb_table z;
    memset(&z, 0, sizeof z);
    return memcmp(t, &z, sizeof z) == 0;
}

static void one(const char *path, int32_t min_cols) {
    sb_table t;
    sb_status st = sb_read_libsvm(path, min_cols, &t);
    if (st == SB_OK) {
        sb_fuzz_require(t.nrows >= 1 && t.ncols >= min_cols && t.ncols <= sb_io_max_cols());
        sb_fuzz_require(t.label != NULL);
        for (int32_t c = 0; c < t.ncols; c++) sb_fuzz_require(t.names[c] != NULL);
        for (int64_t r = 0; r < t.nrows; r++) {
            sb_fuzz_require(t.label[r] - t.label[r] == 0.0f);
            if (t.qid) sb_fuzz_require(t.qid[r] >= 0);
        }
        uint32_t acc = 0;
        for (int64_t i = 0; i < t.nrows * t.ncols; i++) {
            uint32_t b;
            memcpy(&b, &t.x[i], 4);
            acc ^= b;
        }
        (void)acc;
    } else {
        sb_fuzz_require(sb_fuzz_named_error(st) && table_is_zero(&t));
    }
    sb_table_release(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sb_io_set_limits_for_tests(100000, 512, (size_t)1 << 20);
    const char *path = sb_fuzz_file(data, size);
    one(path, 0);
    one(path, 7);
    const char *fmt = NULL;
    sb_status st = sb_detect_format(path, &fmt);
    sb_fuzz_require(st == SB_OK ? fmt != NULL : sb_fuzz_named_error(st));
    return 0;
}
