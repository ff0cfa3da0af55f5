/*
 * fuzz_records.c: the one-number-a-line readers, LightGBM's .query and .weight
 * files (sb_dataset_read_query_file, sb_dataset_read_weight_file in
 * src/io/dataset.c), on arbitrary bytes against a dataset of 64 rows.
 * Contract (docs/io.md): a refusal is a named error that leaves the dataset's
 * groups and weights as they were; an accepted file has exactly one value per
 * non-blank line (a long line is never split into two records, a NUL byte is
 * never a line end): 64 weights, each finite and >= 0, or query sizes whose
 * count is the file's non-blank lines and whose sum is the 64 rows.
 */
#include "fuzz_common.h"
#include "io/dataset.h"

#define ROWS 64

/* Lines of data[0..size) that hold something other than spaces, tabs and a
 * trailing CR: what a reader of one value a line must count. */
static int64_t nonblank_lines(const uint8_t *data, size_t size) {
    int64_t n = 0;
    int seen = 0;
    for (size_t i = 0; i < size; i++) {
        if (data[i] == '\n') {
            n += seen;
            seen = 0;
        } else if (data[i] != ' ' && data[i] != '\t' && data[i] != '\r') {
            seen = 1;
        }
    }
    return n + seen;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sb_io_set_limits_for_tests(100000, 512, (size_t)1 << 20);
    static float zeros[ROWS * 2];
    sb_dataset *d = NULL;
    sb_fuzz_require(sb_dataset_from_matrix(zeros, ROWS, 2, &d) == SB_OK);
    const char *path = sb_fuzz_file(data, size);
    int has_nul = memchr(data, 0, size) != NULL;

    sb_status st = sb_dataset_read_query_file(d, path);
    if (st == SB_OK) {
        sb_fuzz_require(!has_nul && d->t.qid != NULL);
        for (int64_t r = 1; r < ROWS; r++)
            sb_fuzz_require(d->t.qid[r] == d->t.qid[r - 1] || d->t.qid[r] == d->t.qid[r - 1] + 1);
        sb_fuzz_require(d->t.qid[0] == 0 && d->t.qid[ROWS - 1] + 1 == nonblank_lines(data, size));
    } else {
        sb_fuzz_require(sb_fuzz_named_error(st) && d->t.qid == NULL && sb_last_error()[0] != '\0');
    }

    st = sb_dataset_read_weight_file(d, path);
    if (st == SB_OK) {
        sb_fuzz_require(!has_nul && d->t.weight != NULL && nonblank_lines(data, size) == ROWS);
        for (int64_t r = 0; r < ROWS; r++) sb_fuzz_require(d->t.weight[r] >= 0.0f && d->t.weight[r] <= 3.4028235e38f);
    } else {
        sb_fuzz_require(sb_fuzz_named_error(st) && d->t.weight == NULL && sb_last_error()[0] != '\0');
    }
    sb_dataset_free(d);
    return 0;
}
