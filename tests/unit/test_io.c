/* test_io.c: the data readers of src/io (CSV, headerless TSV, LibSVM, format
 * detection): good files under tests/data/io, every error with its line and
 * column, the float32 bits of tricky decimals, limits and allocation failures. */
#include "io/reader.h"
#include "sb_test.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *data_path(const char *name) {
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/io/%s", sb_test_data_dir(), name);
    return buf;
}

static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static int table_is_zero(const sb_table *t) {
    sb_table z;
    memset(&z, 0, sizeof z);
    return memcmp(t, &z, sizeof z) == 0;
}

static const char *temp_file(const char *text, size_t n) { return sb_test_temp_file(text, n); }

enum { CSV, TSV0, SVM };

/* Read text as kind; return the status, check *out is zeroed on failure and
 * that the message holds each of the (up to three) needles. */
static sb_status read_text(int kind, const char *text, const char *label, const char *n1,
                           const char *n2, const char *n3) {
    const char *path = temp_file(text, strlen(text));
    sb_table t;
    memset(&t, 0xAB, sizeof t);
    sb_status st = kind == CSV    ? sb_read_csv(path, label, &t)
                   : kind == TSV0 ? sb_read_tsv_noheader(path, 0, &t)
                                  : sb_read_libsvm(path, 0, &t);
    if (st != SB_OK) {
        const char *msg = sb_last_error();
        SB_CHECK(table_is_zero(&t));
        SB_CHECK(strstr(msg, path) != NULL);
        const char *needles[3] = {n1, n2, n3};
        for (int i = 0; i < 3; i++) {
            if (needles[i] && !strstr(msg, needles[i])) {
                fprintf(stderr, "  message lacks \"%s\": %s\n", needles[i], msg);
                SB_CHECK(!"message names what went wrong");
            }
        }
    }
    sb_table_release(&t);
    unlink(path);
    return st;
}

#define EXPECT(status, kind, text, label, n1, n2, n3) \
    SB_CHECK_EQ_U64(read_text(kind, text, label, n1, n2, n3), status)

/* ---- good files ---------------------------------------------------------------- */

SB_TEST(test_io_csv_good) {
    sb_table t;
    sb_status st = sb_read_csv(data_path("good.csv"), "y", &t);
    SB_CHECK_EQ_U64(st, SB_OK);
    if (st != SB_OK) {
        fprintf(stderr, "  %s\n", sb_last_error());
        return;
    }
    SB_CHECK_EQ_U64(t.nrows, 3);
    SB_CHECK_EQ_U64(t.ncols, 4);
    SB_CHECK(strcmp(t.names[0], "a") == 0);           /* BOM skipped */
    SB_CHECK(strcmp(t.names[1], "b, with comma") == 0);
    SB_CHECK(strcmp(t.names[2], "say \"hi\"") == 0);
    SB_CHECK(strcmp(t.names[3], "d") == 0);           /* label y left out */
    SB_CHECK(t.qid == NULL && t.weight == NULL);
    /* row 0: 1.5,NA,inf,[10],-0 */
    SB_CHECK_EQ_U64(bits_of(t.x[0]), bits_of(1.5f));
    SB_CHECK_EQ_U64(bits_of(t.x[1]), 0x7FC00000u);
    SB_CHECK_EQ_U64(bits_of(t.x[2]), 0x7F800000u);
    SB_CHECK_EQ_U64(bits_of(t.x[3]), 0x80000000u);    /* -0 kept */
    /* row 1: (empty),nan,-Infinity,[20],NULL */
    SB_CHECK_EQ_U64(bits_of(t.x[4]), 0x7FC00000u);
    SB_CHECK_EQ_U64(bits_of(t.x[5]), 0x7FC00000u);
    SB_CHECK_EQ_U64(bits_of(t.x[6]), 0xFF800000u);
    SB_CHECK_EQ_U64(bits_of(t.x[7]), 0x7FC00000u);
    /* row 2: "3",Null,1e-45,[30], 2.5 (quoted number, spaces around) */
    SB_CHECK(t.x[8] == 3.0f);
    SB_CHECK_EQ_U64(bits_of(t.x[9]), 0x7FC00000u);
    SB_CHECK_EQ_U64(bits_of(t.x[10]), 1u);
    SB_CHECK(t.x[11] == 2.5f);
    SB_CHECK(t.label[0] == 10.0f && t.label[1] == 20.0f && t.label[2] == 30.0f);
    sb_table_release(&t);
    SB_CHECK(table_is_zero(&t));

    /* Without a label (prediction): every column is a feature. */
    st = sb_read_csv(data_path("good.csv"), NULL, &t);
    SB_CHECK_EQ_U64(st, SB_OK);
    SB_CHECK_EQ_U64(t.ncols, 5);
    SB_CHECK(t.label == NULL);
    if (st == SB_OK) SB_CHECK(strcmp(t.names[3], "y") == 0 && t.x[3] == 10.0f);
    sb_table_release(&t);
}

SB_TEST(test_io_csv_tabs_and_last_line) {
    /* Tab-separated header, no newline at the end, label first. */
    sb_table t;
    sb_status st = sb_read_csv(data_path("plain.tsv"), "x", &t);
    SB_CHECK_EQ_U64(st, SB_OK);
    if (st != SB_OK) return;
    SB_CHECK_EQ_U64(t.nrows, 2);
    SB_CHECK_EQ_U64(t.ncols, 2);
    SB_CHECK(strcmp(t.names[0], "y") == 0 && strcmp(t.names[1], "z") == 0);
    SB_CHECK(t.label[0] == 0.25f && t.label[1] == -2.0f);
    SB_CHECK(t.x[0] == 1.0f && isnan(t.x[1]) && t.x[2] == 0.0f && isnan(t.x[3]));
    sb_table_release(&t);

    /* A quoted name over two lines; line numbers count physical lines. */
    const char *text = "\"multi\nline\",b\n1,2\n3,oops\n";
    EXPECT(SB_ERR_INVALID_INPUT, CSV, text, NULL, "line 4,", "column 2", "oops");
    const char *ok = "\"multi\nline\",b\n1,2\n";
    const char *path = temp_file(ok, strlen(ok));
    st = sb_read_csv(path, "b", &t);
    SB_CHECK_EQ_U64(st, SB_OK);
    if (st == SB_OK) SB_CHECK(strcmp(t.names[0], "multi\nline") == 0 && t.label[0] == 2.0f);
    sb_table_release(&t);
    unlink(path);
}

SB_TEST(test_io_tsv_noheader) {
    sb_table t;
    sb_status st = sb_read_tsv_noheader(data_path("lgbm.tsv"), 0, &t);
    SB_CHECK_EQ_U64(st, SB_OK);
    if (st != SB_OK) return;
    SB_CHECK_EQ_U64(t.nrows, 2);
    SB_CHECK_EQ_U64(t.ncols, 2);
    SB_CHECK(strcmp(t.names[0], "f0") == 0 && strcmp(t.names[1], "f1") == 0);
    SB_CHECK(t.label[0] == 1.0f && t.label[1] == 0.0f);
    SB_CHECK(t.x[0] == 0.5f && t.x[1] == 2.0f && isnan(t.x[2]) && t.x[3] == -3.0f);
    sb_table_release(&t);
    st = sb_read_tsv_noheader(data_path("lgbm.tsv"), -1, &t);
    SB_CHECK_EQ_U64(st, SB_OK);
    SB_CHECK(t.ncols == 3 && t.label == NULL);
    sb_table_release(&t);
    st = sb_read_tsv_noheader(data_path("lgbm.tsv"), 3, &t);
    SB_CHECK_EQ_U64(st, SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "no label column 3") != NULL);
    SB_CHECK(table_is_zero(&t));
    EXPECT(SB_ERR_INVALID_INPUT, TSV0, "1\t2\n3\t4\t5\n", NULL, "line 2", "column 3", NULL);
    EXPECT(SB_ERR_INVALID_INPUT, TSV0, "", NULL, "empty file", NULL, NULL);
}

SB_TEST(test_io_libsvm_good) {
    sb_table t;
    sb_status st = sb_read_libsvm(data_path("rank.svm"), 0, &t);
    SB_CHECK_EQ_U64(st, SB_OK);
    if (st != SB_OK) {
        fprintf(stderr, "  %s\n", sb_last_error());
        return;
    }
    SB_CHECK_EQ_U64(t.nrows, 4);
    SB_CHECK_EQ_U64(t.ncols, 5); /* max index 4, indices used as they are */
    SB_CHECK(strcmp(t.names[0], "f0") == 0 && strcmp(t.names[4], "f4") == 0);
    SB_CHECK(t.qid != NULL);
    if (t.qid) SB_CHECK(t.qid[0] == 1 && t.qid[1] == 1 && t.qid[2] == 2 && t.qid[3] == 2);
    SB_CHECK(t.label[0] == 2.0f && t.label[1] == 0.0f && t.label[2] == 1.0f && t.label[3] == 3.0f);
    const float *r0 = t.x, *r1 = t.x + 5, *r2 = t.x + 10, *r3 = t.x + 15;
    SB_CHECK_EQ_U64(bits_of(r0[0]), 0u); /* absent = +0.0 */
    SB_CHECK(r0[1] == 0.5f && r0[2] == 0.0f && r0[3] == -1.0f && r0[4] == 0.0f);
    SB_CHECK_EQ_U64(bits_of(r1[2]), 0x7FC00000u); /* explicit nan = missing */
    SB_CHECK_EQ_U64(bits_of(r1[4]), 0x7F800000u);
    SB_CHECK(r2[0] == 7.0f && r2[1] == 0.0f);
    for (int j = 0; j < 5; j++) SB_CHECK_EQ_U64(bits_of(r3[j]), 0u);
    sb_table_release(&t);

    /* min_cols widens (prediction data for a wider model); never narrows. */
    st = sb_read_libsvm(data_path("rank.svm"), 8, &t);
    SB_CHECK_EQ_U64(st, SB_OK);
    SB_CHECK_EQ_U64(t.ncols, 8);
    if (st == SB_OK) SB_CHECK(t.x[8 + 4] == INFINITY && t.x[7] == 0.0f);
    sb_table_release(&t);
    st = sb_read_libsvm(data_path("rank.svm"), 2, &t);
    SB_CHECK_EQ_U64(t.ncols, 5);
    sb_table_release(&t);

    /* No qid anywhere: qid is NULL. CRLF too. */
    const char *text = "1 1:2\r\n0 0:1 5:3\r\n";
    const char *path = temp_file(text, strlen(text));
    st = sb_read_libsvm(path, 0, &t);
    SB_CHECK_EQ_U64(st, SB_OK);
    SB_CHECK(t.qid == NULL && t.ncols == 6 && t.nrows == 2);
    if (st == SB_OK) SB_CHECK(t.x[1] == 2.0f && t.x[6 + 5] == 3.0f);
    sb_table_release(&t);
    unlink(path);
}

SB_TEST(test_io_detect_format) {
    const char *f = NULL;
    SB_CHECK_EQ_U64(sb_detect_format(data_path("good.csv"), &f), SB_OK);
    SB_CHECK(f && strcmp(f, "csv") == 0);
    SB_CHECK_EQ_U64(sb_detect_format(data_path("rank.svm"), &f), SB_OK);
    SB_CHECK(f && strcmp(f, "libsvm") == 0);
    SB_CHECK_EQ_U64(sb_detect_format(data_path("lgbm.tsv"), &f), SB_OK);
    SB_CHECK(f && strcmp(f, "tsv-noheader") == 0);
    SB_CHECK_EQ_U64(sb_detect_format(data_path("plain.tsv"), &f), SB_OK);
    SB_CHECK(f && strcmp(f, "csv") == 0);
    SB_CHECK_EQ_U64(sb_detect_format(data_path("no-such-file"), &f), SB_ERR_IO);
    SB_CHECK(strstr(sb_last_error(), "no-such-file") != NULL);
    const char *path = temp_file("\n\n", 2);
    SB_CHECK_EQ_U64(sb_detect_format(path, &f), SB_ERR_INVALID_INPUT);
    unlink(path);
}

/* ---- numbers ------------------------------------------------------------------ */

SB_TEST(test_io_float_bits) {
    /* Expected bits: the correctly rounded float32 of each decimal (computed
     * exactly with rationals), the same on every machine. */
    static const uint32_t want[] = {
        0x3DCCCCCDu, /* 0.1 */
        0x7F7FFFFFu, /* 3.4028235e38 = FLT_MAX */
        0x00000001u, /* 1e-45: the smallest denormal */
        0x00000000u, /* 7.006492321624085e-46: just below half of it */
        0x00000001u, /* 7.0064923216240862e-46: just above half */
        0x3F800001u, /* 1.000000059604644775390625001: through double it would be
                        0x3F800000 (double rounding to the midpoint, then to even) */
        0xBDCCCCCDu, /* -0.1 */
        0x40400000u, /* 0x1.8p1 (hexadecimal, as strtof reads it) */
        0x00800000u, /* 1.17549435e-38 = FLT_MIN */
        0x4B800000u, /* 16777217: a tie, to even */
        0x80000000u, /* -0 */
    };
    sb_table t;
    sb_status st = sb_read_csv(data_path("bits.csv"), NULL, &t);
    SB_CHECK_EQ_U64(st, SB_OK);
    if (st != SB_OK) return;
    SB_CHECK_EQ_U64(t.nrows, sizeof want / sizeof want[0]);
    for (int64_t i = 0; i < t.nrows && i < (int64_t)(sizeof want / sizeof want[0]); i++)
        SB_CHECK_EQ_U64(bits_of(t.x[i]), want[i]);
    sb_table_release(&t);

    /* Beyond float32's range: refused, never turned into an infinity. */
    EXPECT(SB_ERR_INVALID_INPUT, CSV, "v\n3.4028236e38\n", NULL, "line 2", "column 1",
           "beyond float32");
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "1 0:-1e39\n", NULL, "line 1", "column 3", "range");
    /* Missing-value spellings and NaN spellings are all the one canonical NaN. */
    const char *text = "v\nNA\nnA\nNaN\n-nan\nnan(123)\nNULL\n\"\"\n";
    const char *path = temp_file(text, strlen(text));
    st = sb_read_csv(path, NULL, &t);
    SB_CHECK_EQ_U64(st, SB_OK);
    SB_CHECK_EQ_U64(t.nrows, 7);
    for (int64_t i = 0; i < t.nrows; i++) SB_CHECK_EQ_U64(bits_of(t.x[i]), 0x7FC00000u);
    sb_table_release(&t);
    unlink(path);
}

SB_TEST(test_io_locale_restored) {
    locale_t before = uselocale((locale_t)0);
    sb_table t;
    SB_CHECK_EQ_U64(sb_read_csv(data_path("bits.csv"), NULL, &t), SB_OK);
    sb_table_release(&t);
    SB_CHECK(sb_read_csv(data_path("no-such-file"), NULL, &t) == SB_ERR_IO);
    SB_CHECK(uselocale((locale_t)0) == before);
    /* A decimal-comma locale in force: numbers are still read the C way. Only
     * where such a locale is installed (it often is not, e.g. in static builds). */
    static const char *comma[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
    locale_t de = (locale_t)0;
    for (size_t i = 0; i < sizeof comma / sizeof comma[0] && de == (locale_t)0; i++)
        de = newlocale(LC_NUMERIC_MASK, comma[i], (locale_t)0);
    if (de != (locale_t)0) {
        locale_t old = uselocale(de);
        SB_CHECK(strtof("1,5", NULL) == 1.5f); /* the locale is really in force */
        sb_status st = sb_read_csv(data_path("good.csv"), "y", &t);
        SB_CHECK_EQ_U64(st, SB_OK);
        if (st == SB_OK) SB_CHECK(t.x[0] == 1.5f && t.x[11] == 2.5f);
        sb_table_release(&t);
        SB_CHECK(uselocale((locale_t)0) == de);
        uselocale(old);
        freelocale(de);
    }
}

/* ---- CSV errors ----------------------------------------------------------------- */

SB_TEST(test_io_csv_errors) {
    sb_table t;
    memset(&t, 0xAB, sizeof t);
    SB_CHECK_EQ_U64(sb_read_csv(data_path("no-such-file.csv"), NULL, &t), SB_ERR_IO);
    SB_CHECK(strstr(sb_last_error(), "no-such-file.csv") != NULL);
    SB_CHECK(table_is_zero(&t));
    SB_CHECK_EQ_U64(sb_read_csv(NULL, NULL, &t), SB_ERR_INVALID_ARGUMENT);

    EXPECT(SB_ERR_INVALID_INPUT, CSV, "a,b\n1,2\n3,1.5x\n", NULL, "line 3,", "column 2 (\"b\")",
           "\"1.5x\"");
    EXPECT(SB_ERR_INVALID_INPUT, CSV, "a,b\n1,2\n3,1e\n", NULL, "line 3,", "column 2", "1e");
    EXPECT(SB_ERR_INVALID_INPUT, CSV, "a,b\n1,2\n3\n", NULL, "line 3 has 1 columns, expected 2",
           "column 2", NULL);
    EXPECT(SB_ERR_INVALID_INPUT, CSV, "a,b\r\n1,2\r\n3,4,5\r\n", NULL, "line 3 has 3", "column 3",
           NULL);
    /* Blank lines in the middle and at the end are skipped. */
    EXPECT(SB_OK, CSV, "a,b\n\n1,2\n  \n3,4\n\n\n", "a", NULL, NULL, NULL);
    EXPECT(SB_ERR_INVALID_INPUT, CSV, "a,b,c\n1,2,3\n", "label",
           "no label column \"label\"", "\"a\", \"b\", \"c\"", NULL);
    EXPECT(SB_ERR_INVALID_INPUT, CSV, "a,b,a\n1,2,3\n", NULL, "line 1", "columns 1 and 3",
           "\"a\"");
    EXPECT(SB_ERR_INVALID_INPUT, CSV, "", NULL, "empty file", NULL, NULL);
    EXPECT(SB_ERR_INVALID_INPUT, CSV, "\xEF\xBB\xBF\r\n\r\n", NULL, "empty file", NULL, NULL);
    EXPECT(SB_ERR_INVALID_INPUT, CSV, "a,b\n\n", NULL, "no data rows", NULL, NULL);
    EXPECT(SB_ERR_INVALID_INPUT, CSV, "a,y\n1,2\n3,NA\n", "y", "line 3,", "column 2 (\"y\")",
           "missing");
    EXPECT(SB_ERR_INVALID_INPUT, CSV, "a,y\n1,\n", "y", "line 2,", "column 2", "missing");
    EXPECT(SB_ERR_INVALID_INPUT, CSV, "y,a\n1,2\n-inf,3\n", "y", "line 3,", "column 1",
           "infinite");
    EXPECT(SB_ERR_INVALID_INPUT, CSV, "a,y\n1,nope\n", "y", "line 2,", "column 2", "nope");
    /* A text (categorical) column is named, with its line. */
    EXPECT(SB_ERR_INVALID_INPUT, CSV, "x,city,y\n1,Paris,2\n", "y", "line 2,",
           "column 2 (\"city\")", "categorical");
    EXPECT(SB_ERR_INVALID_INPUT, CSV, "a,b\n\"1\"x,2\n", NULL, "line 2,", "column 1",
           "closing double quote");
    EXPECT(SB_ERR_INVALID_INPUT, CSV, "a,b\n1,2\n\"3,4\n5,6\n", NULL, "line 3", "never closed",
           NULL);
}

SB_TEST(test_io_limits) {
    sb_io_set_limits_for_tests(2, 3, 64);
    EXPECT(SB_OK, CSV, "a,b\n1,2\n3,4\n", NULL, NULL, NULL, NULL);
    EXPECT(SB_ERR_LIMIT, CSV, "a,b\n1,2\n3,4\n5,6\n", NULL, "limit of 2 data rows", NULL, NULL);
    EXPECT(SB_ERR_LIMIT, SVM, "1 0:1\n1 0:1\n1 0:1\n", NULL, "limit of 2 data rows", NULL, NULL);
    EXPECT(SB_ERR_LIMIT, CSV, "a,b,c,d\n1,2,3,4\n", NULL, "line 1 has 4 columns", "limit of 3",
           NULL);
    EXPECT(SB_OK, CSV, "a,b,c,y\n1,2,3,4\n", "y", NULL, NULL, NULL); /* label not counted */
    EXPECT(SB_ERR_LIMIT, SVM, "1 3:1\n", NULL, "line 1, column 3", "limit of 3 columns", NULL);
    EXPECT(SB_ERR_LIMIT, CSV,
           "a\n1\n0.000000000000000000000000000000000000000000000000000000000000000000001\n",
           NULL, "line 3 is longer than the limit of 64 bytes", NULL, NULL);
    EXPECT(SB_ERR_LIMIT, SVM,
           "1 0:0.00000000000000000000000000000000000000000000000000000000000000000000001",
           NULL, "line 1 is longer", NULL, NULL);
    sb_table t;
    SB_CHECK_EQ_U64(sb_read_libsvm(data_path("rank.svm"), 4, &t), SB_ERR_LIMIT);
    SB_CHECK(table_is_zero(&t));
    sb_io_set_limits_for_tests(0, 0, 0);
    SB_CHECK(sb_io_max_rows() == SB_IO_MAX_ROWS && sb_io_max_cols() == SB_IO_MAX_COLS &&
             sb_io_max_line() == SB_IO_MAX_LINE);
    /* The real column limit: an index of a million is refused before any
     * allocation of its width. */
    EXPECT(SB_ERR_LIMIT, SVM, "1 1000000:1\n", NULL, "limit of 1000000 columns", NULL, NULL);
    EXPECT(SB_OK, SVM, "1 999999:1\n", NULL, NULL, NULL, NULL);
}

/* ---- LibSVM errors -------------------------------------------------------------- */

SB_TEST(test_io_libsvm_errors) {
    sb_table t;
    SB_CHECK_EQ_U64(sb_read_libsvm(data_path("rank.svm"), -1, &t), SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(table_is_zero(&t));
    SB_CHECK_EQ_U64(sb_read_libsvm(data_path("none.svm"), 0, &t), SB_ERR_IO);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "1 1:1\n0 a:1\n", NULL, "line 2, column 3", "\"a:1\"",
           "non-negative integer");
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "1 -1:1\n", NULL, "line 1, column 3", "-1:1", NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "1 1.5:1\n", NULL, "line 1, column 3", NULL, NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "1 :1\n", NULL, "line 1, column 3", NULL, NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "1 2:x\n", NULL, "line 1, column 3", "not a number", NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "1 2:\n", NULL, "line 1, column 3", "not a number", NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "1 2:1.5x\n", NULL, "line 1, column 3", "2:1.5x", NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "1 5\n", NULL, "line 1, column 3", "index:value", NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "1 3:1 2:1\n", NULL, "line 1, column 7", "index 2 after 3",
           NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "1 2:1 2:1\n", NULL, "line 1, column 7", "index 2 after 2",
           NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "1 1:1\nnan 1:1\n", NULL, "line 2, column 1", "missing",
           NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "inf 1:1\n", NULL, "line 1, column 1", "infinite", NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "  yes 1:1\n", NULL, "line 1, column 3", "not a number",
           NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "1 qid:1 1:1\n0 1:1\n", NULL, "line 2", "no qid", NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "1 1:1\n0 qid:3 1:1\n", NULL, "line 2", "has a qid", NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "1 1:1 qid:3\n", NULL, "line 1, column 7",
           "right after the label", NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "1 qid:x 1:1\n", NULL, "line 1, column 3", "qid", NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "# only a comment\n\n", NULL, "no data rows", NULL, NULL);
    EXPECT(SB_ERR_INVALID_INPUT, SVM, "", NULL, "no data rows", NULL, NULL);
}

/* ---- allocation failures -------------------------------------------------------- */

/* Every reader either succeeds or fails as SB_ERR_OUT_OF_MEMORY with a zeroed
 * table. Alone it passes trivially; swept over SAMEBITS_FAIL_ALLOC=1,2,3...
 * (one process per value: `sb_unit test_io_alloc_failures`) it checks that
 * every allocation failure of the readers is clean. */
SB_TEST(test_io_alloc_failures) {
    sb_table t;
    sb_status st;
    st = sb_read_csv(data_path("good.csv"), "y", &t);
    SB_CHECK(st == SB_OK || (st == SB_ERR_OUT_OF_MEMORY && table_is_zero(&t)));
    sb_table_release(&t);
    st = sb_read_tsv_noheader(data_path("lgbm.tsv"), 0, &t);
    SB_CHECK(st == SB_OK || (st == SB_ERR_OUT_OF_MEMORY && table_is_zero(&t)));
    sb_table_release(&t);
    st = sb_read_libsvm(data_path("rank.svm"), 3, &t);
    SB_CHECK(st == SB_OK || (st == SB_ERR_OUT_OF_MEMORY && table_is_zero(&t)));
    sb_table_release(&t);
    const char *f;
    st = sb_detect_format(data_path("rank.svm"), &f);
    SB_CHECK(st == SB_OK || st == SB_ERR_OUT_OF_MEMORY);
    sb_table_release(NULL);
    memset(&t, 0, sizeof t);
    sb_table_release(&t);
}
