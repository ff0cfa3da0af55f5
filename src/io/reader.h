/*
 * reader.h: readers of training and prediction data files (CSV with a header,
 * LibSVM/svmlight, headerless TSV as LightGBM's examples), internal to the
 * library. docs/io.md states the formats, the rules and the errors.
 *
 * Every reader fills an sb_table of float32 values. Numbers are parsed straight
 * to float32 by strtof in the "C" locale (correctly rounded, so the same bits on
 * every machine); never through double, whose double rounding can differ.
 * A missing value is the canonical quiet NaN 0x7FC00000 whatever its spelling.
 * On any error the reader returns a named status with the file, line and column
 * in sb_last_error(), frees everything it allocated and leaves *out zeroed.
 */
#ifndef SB_IO_READER_H
#define SB_IO_READER_H
#include "../core/internal.h"
#include <locale.h>
#include <stdint.h>
#include <stdio.h>

/* Limits (docs/io.md). A file beyond one is SB_ERR_LIMIT, refused before the
 * memory for it is allocated. */
#define SB_IO_MAX_ROWS INT64_C(2147483647)   /* data rows of a file */
#define SB_IO_MAX_COLS 1000000               /* feature columns (label excluded) */
#define SB_IO_MAX_LINE ((size_t)256 << 20)   /* bytes of one line (record) */

/* sb_table.has_names: generated names for a headerless table (TSV, IDX, a
 * matrix), names from a header or given by the caller, or LibSVM's f{index}. */
enum { SB_NAMES_NONE = 0, SB_NAMES_HEADER = 1, SB_NAMES_INDEX = 2 };

typedef struct sb_table {
    int64_t nrows;
    int32_t ncols;        /* feature columns (label excluded) */
    float *x;             /* nrows * ncols, row-major; NaN = missing */
    float *label;         /* nrows x ntargets (row-major), or NULL when the file has none / none asked */
    int32_t ntargets;     /* label values a row: 0 or 1 one (every reader, sb_dataset_set_label), more
                           * only from sb_dataset_set_targets (multi-output least squares) */
    float *weight;        /* NULL here; reserved for weight columns/files */
    char **names;         /* ncols feature names: the CSV header, or "f0".."f{n-1}" */
    int has_names;        /* SB_NAMES_*: where the names came from, which decides
                           * how prediction maps columns to a model's features */
    int32_t *qid;         /* LibSVM qid:N per row, or NULL if the file has none */
    float *init;          /* initial scores (LightGBM's init_score, DATA.init): nrows x init_k, row-major, or NULL */
    int32_t init_k;       /* scores a row: 1, or a multiclass model's K */
    int x_borrowed;       /* x is the caller's (sb_dataset_view_matrix): read only, never freed here */
} sb_table;

/* Read a CSV file whose first record is a header of column names. label names
 * the label column (any position), or is NULL for none (prediction data): every
 * other column is a feature and must be numeric. Separator ',' (or '\t' when the
 * header has tabs and no commas); RFC 4180 double quotes with "" escapes; CRLF
 * or LF; a UTF-8 BOM is skipped; blank lines are skipped. Missing values: empty,
 * NA, NaN, nan, null (any case), or any NaN strtof accepts; "inf", "-inf",
 * "Infinity" are values. A text field (a categorical column) is an error. */
sb_status sb_read_csv(const char *path, const char *label, sb_table *out);

/* Read a delimited file without header, as LightGBM's examples: every field
 * numeric, tab-separated (or comma-separated when the first record has commas
 * and no tabs). label_column is the 0-based field of the label (LightGBM's
 * default is 0), or -1 for none; the other fields are features named "f0".."f{n-1}"
 * in file order. Values follow sb_read_csv's rules. */
sb_status sb_read_tsv_noheader(const char *path, int32_t label_column, sb_table *out);

/* Read LibSVM/svmlight: "label [qid:N] index:value ... [# comment]", tokens
 * separated by spaces or tabs. Indices are used as they are (0-based; a 1-based
 * file gets an all-zero column f0, as in LightGBM), must strictly increase along
 * a line, and absent entries are 0.0 (sparse semantics, as LightGBM); write
 * index:nan for a missing value. ncols = max index + 1, or min_cols if larger
 * (so prediction data can be widened to a model's feature count). qid is kept
 * when the file has one (then every row must). */
sb_status sb_read_libsvm(const char *path, int32_t min_cols, sb_table *out);

/* Detect the format from the first non-empty line (after a BOM): "libsvm" when
 * its first token is a number and the others are index:value or qid:N pairs
 * (at least one pair); "tsv-noheader" when every field is a number or a missing
 * spelling; otherwise "csv". *format is a static string. */
sb_status sb_detect_format(const char *path, const char **format);

/* Free every member of t and zero it; NULL, or a zeroed table, is a no-op. */
void sb_table_release(sb_table *t);

/* Test hook: lower the limits for the calling process (0 restores a default),
 * so that unit tests can reach them with small files. Not thread-safe. */
void sb_io_set_limits_for_tests(int64_t max_rows, int32_t max_cols, size_t max_line);

/* ---- shared by the readers in src/io (csv.c defines them) ----------------- */

/* A file read in chunks of 1 MiB into a buffer that grows only as long as the
 * longest record needs (up to the line limit). */
typedef struct sb_io_file {
    FILE *f;
    const char *path;
    char *buf;        /* cap + 1 bytes, so that a record can be NUL-terminated */
    size_t cap;
    size_t len;       /* bytes held: buf[pos..len) is not yet handed out */
    size_t pos;
    int eof;
    int64_t line;     /* physical line (1-based) where the next record starts */
    locale_t c_locale, old_locale; /* "C" numbers for this thread while open */
    void *gz;         /* a gzip file: its inflate state (csv.c), NULL for plain text */
} sb_io_file;

/* Open path for reading (SB_ERR_IO naming it and the reason), skip a UTF-8 BOM,
 * and switch this thread to the "C" locale until sb_io_close. gzip data (one
 * member or several) is inflated as it is read, through the system's zlib
 * (libz.so.1, opened at run time; a build without zlib.h, or a machine without
 * the library, refuses it by name, as every other compression). */
sb_status sb_io_open(sb_io_file *r, const char *path);
/* Close, free the buffer, restore the thread's locale; safe on a zeroed r. */
void sb_io_close(sb_io_file *r);
/* The next record: *rec points at it inside the buffer, NUL-terminated, without
 * its LF or CRLF; *len its length; *lineno its first line. With quotes, a
 * newline inside double quotes belongs to the record. At end of file *rec is
 * NULL. Errors: SB_ERR_IO (read error), SB_ERR_LIMIT (record too long),
 * SB_ERR_INVALID_INPUT (a quote left open at end of file, or a NUL byte: it is
 * refused in the chunk where it is first scanned, so a binary stream such as
 * /dev/zero fails at once). */
sb_status sb_io_next_record(sb_io_file *r, int quotes, char **rec, size_t *len,
                            int64_t *lineno);

/* Parse s[0..n) (with s[n] == '\0') as a float32 value, spaces and tabs around
 * it ignored: 0 and *v on success (missing spellings give the canonical NaN),
 * 1 if it is not a number, 2 if it is a finite number beyond float32's range. */
int sb_io_parse_f32(char *s, size_t n, float *v);
/* Whether s[0..n) spells a missing value: empty (after trimming), NA, NaN, null. */
int sb_io_is_missing(const char *s, size_t n);
/* Names "f0".."f{n-1}" in a new array of n strings (SB_ERR_OUT_OF_MEMORY). */
sb_status sb_io_default_names(int32_t n, char ***out);
/* The limits in force (the SB_IO_MAX_* values unless a test lowered them). */
int64_t sb_io_max_rows(void);
int32_t sb_io_max_cols(void);
size_t sb_io_max_line(void);

#endif
