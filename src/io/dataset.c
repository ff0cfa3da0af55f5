/*
 * dataset.c: the public dataset handle. Everything given to it is copied, so
 * the caller may free its buffers as soon as a call returns.
 */
#include "dataset.h"
#include <errno.h>
#include <float.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static sb_status alloc_dataset(sb_dataset **out) {
    *out = sb_calloc(1, sizeof(sb_dataset));
    return *out ? SB_OK : sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
}

static sb_status default_names(sb_table *t) {
    t->names = sb_calloc((size_t)(t->ncols ? t->ncols : 1), sizeof(char *));
    if (!t->names) return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    for (int32_t f = 0; f < t->ncols; f++) {
        char buf[24];
        snprintf(buf, sizeof buf, "f%d", (int)f);
        if (!(t->names[f] = sb_strdup(buf))) return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    }
    return SB_OK;
}

static sb_status from_matrix(const float *x, int64_t nrows, int32_t ncols, int view, sb_dataset **out);

sb_status sb_dataset_from_matrix(const float *x, int64_t nrows, int32_t ncols, sb_dataset **out) {
    return from_matrix(x, nrows, ncols, 0, out);
}

sb_status sb_dataset_view_matrix(const float *x, int64_t nrows, int32_t ncols, sb_dataset **out) {
    return from_matrix(x, nrows, ncols, 1, out);
}

static sb_status from_matrix(const float *x, int64_t nrows, int32_t ncols, int view, sb_dataset **out) {
    sb_clear_error();
    const char *fn = view ? "sb_dataset_view_matrix" : "sb_dataset_from_matrix";
    if (!out || (!x && nrows && ncols)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
    *out = NULL;
    if (nrows < 1 || ncols < 1)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "a dataset needs at least one row and one column (got %lld x %d)",
                       (long long)nrows, (int)ncols);
    if (nrows > SB_IO_MAX_ROWS || ncols > SB_IO_MAX_COLS)
        return sb_fail(SB_ERR_LIMIT, "dataset of %lld x %d exceeds the limits (%lld rows, %d columns)",
                       (long long)nrows, (int)ncols, (long long)SB_IO_MAX_ROWS, SB_IO_MAX_COLS);
    sb_dataset *d;
    sb_status st = alloc_dataset(&d);
    if (st != SB_OK) return st;
    d->t.nrows = nrows;
    d->t.ncols = ncols;
    if (view) {
        d->t.x = (float *)x; /* read only: x_borrowed keeps every writer and free away */
        d->t.x_borrowed = 1;
    } else {
        d->t.x = sb_malloc(sizeof(float) * (size_t)nrows * (size_t)ncols);
        if (!d->t.x) {
            sb_dataset_free(d);
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
        }
        memcpy(d->t.x, x, sizeof(float) * (size_t)nrows * (size_t)ncols);
    }
    if ((st = default_names(&d->t)) != SB_OK) {
        sb_dataset_free(d);
        return st;
    }
    *out = d;
    return SB_OK;
}

static sb_status set_column(sb_dataset *d, const float *v, int64_t n, float **dst, const char *what) {
    sb_clear_error();
    if (!d || !v) return sb_fail(SB_ERR_INVALID_ARGUMENT, "set %s: NULL argument", what);
    if (n != d->t.nrows)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s has %lld values for %lld rows", what, (long long)n,
                       (long long)d->t.nrows);
    float *copy = sb_malloc(sizeof(float) * (size_t)n);
    if (!copy) return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    memcpy(copy, v, sizeof(float) * (size_t)n);
    sb_free(*dst);
    *dst = copy;
    return SB_OK;
}

sb_status sb_dataset_set_label(sb_dataset *d, const float *y, int64_t n) {
    sb_status st = set_column(d, y, n, d ? &d->t.label : NULL, "label");
    if (st == SB_OK) d->t.ntargets = 1;
    return st;
}

sb_status sb_dataset_set_targets(sb_dataset *d, const float *y, int64_t nrows, int32_t ntargets) {
    sb_clear_error();
    if (!d || !y) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_set_targets: NULL argument");
    if (ntargets < 1 || ntargets > SB_MAX_TARGETS)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_set_targets: %d targets (1..%d)", (int)ntargets,
                       SB_MAX_TARGETS);
    if (nrows != d->t.nrows)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "targets have %lld rows for %lld data rows", (long long)nrows,
                       (long long)d->t.nrows);
    if (ntargets == 1) return sb_dataset_set_label(d, y, nrows);
    const size_t count = (size_t)nrows * (size_t)ntargets;
    float *copy = sb_malloc(sizeof(float) * (count > 0 ? count : 1));
    if (!copy) return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory for %lld x %d targets", (long long)nrows,
                              (int)ntargets);
    memcpy(copy, y, sizeof(float) * count);
    sb_free(d->t.label);
    d->t.label = copy;
    d->t.ntargets = ntargets;
    return SB_OK;
}

sb_status sb_dataset_set_weight(sb_dataset *d, const float *w, int64_t n) {
    sb_status st = set_column(d, w, n, d ? &d->t.weight : NULL, "weight");
    if (st != SB_OK) return st;
    for (int64_t i = 0; i < n; i++) {
        if (!(w[i] >= 0.0f && w[i] <= FLT_MAX)) {
            sb_free(d->t.weight);
            d->t.weight = NULL;
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "weight of row %lld is %g: weights must be finite and >= 0",
                           (long long)i, (double)w[i]);
        }
    }
    return SB_OK;
}

sb_status sb_dataset_set_feature_names(sb_dataset *d, const char *const *names, int32_t n) {
    sb_clear_error();
    if (!d || !names) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_set_feature_names: NULL argument");
    if (n != d->t.ncols)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%d names for %d columns", (int)n, (int)d->t.ncols);
    for (int32_t f = 0; f < n; f++) {
        if (!names[f]) return sb_fail(SB_ERR_INVALID_ARGUMENT, "feature name %d is NULL", (int)f);
        sb_status st = sb_check_feature_name(names[f], strlen(names[f]), "sb_dataset_set_feature_names", f);
        if (st != SB_OK) return st;
    }
    char **copy = sb_calloc((size_t)n, sizeof(char *));
    if (!copy) return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    for (int32_t f = 0; f < n; f++) {
        if (!names[f] || !(copy[f] = sb_strdup(names[f]))) {
            for (int32_t k = 0; k < f; k++) sb_free(copy[k]);
            sb_free(copy);
            return names[f] ? sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory")
                            : sb_fail(SB_ERR_INVALID_ARGUMENT, "feature name %d is NULL", (int)f);
        }
    }
    for (int32_t f = 0; f < d->t.ncols; f++) sb_free(d->t.names[f]);
    sb_free(d->t.names);
    d->t.names = copy;
    d->t.has_names = SB_NAMES_HEADER;
    return SB_OK;
}

sb_status sb_dataset_read_min_cols(const char *path, const char *format, const char *label,
                                   int32_t min_cols, sb_dataset **out) {
    sb_clear_error();
    if (!path || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_read: NULL argument");
    *out = NULL;
    const char *fmt = format;
    sb_status st;
    if (!fmt && sb_is_idx_file(path)) fmt = "idx";
    if (!fmt && (st = sb_detect_format(path, &fmt)) != SB_OK) return st;
    sb_dataset *d;
    if ((st = alloc_dataset(&d)) != SB_OK) return st;
    if (strcmp(fmt, "csv") == 0) {
        st = sb_read_csv(path, label, &d->t);
    } else if ((strcmp(fmt, "libsvm") == 0 || strcmp(fmt, "idx") == 0) && label) {
        /* the label's place is fixed by the format: a --label would be ignored */
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: %s; label '%s' does not apply", path,
                     fmt[0] == 'l' ? "a libsvm file's label is the first token of each line"
                                   : "an idx file's labels are in its labels file", label);
    } else if (strcmp(fmt, "libsvm") == 0) {
        st = sb_read_libsvm(path, min_cols, &d->t);
    } else if (strcmp(fmt, "idx") == 0) {
        st = sb_read_idx(path, &d->t);
    } else if (strcmp(fmt, "tsv-noheader") == 0) {
        /* LightGBM's headerless files: the label is the first column unless
         * label names another by its 0-based index (LightGBM's label_column=N);
         * a file without a header has no column names to give. */
        int32_t col = 0;
        st = SB_OK;
        if (label) {
            char *end = NULL;
            long v = strtol(label, &end, 10);
            if (!*label || *end || v < 0 || v > INT32_MAX)
                st = sb_fail(SB_ERR_INVALID_ARGUMENT,
                             "%s: a headerless file's label is a 0-based column index, not '%s'", path, label);
            col = (int32_t)v;
        }
        if (st == SB_OK) st = sb_read_tsv_noheader(path, col, &d->t);
    } else if (strcmp(fmt, "tsv-noheader-nolabel") == 0 && !label) {
        /* internal (predict_data.c): a headerless file of features only */
        st = sb_read_tsv_noheader(path, -1, &d->t);
    } else {
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown data format '%s'; formats: csv, libsvm, tsv-noheader, idx", fmt);
    }
    if (st == SB_OK && d->t.ncols == 0) {
        /* A file of labels only (LibSVM lines without an index:value; the CSV
         * and TSV readers refuse it before reading the rows). */
        sb_table_release(&d->t);
        st = sb_fail(SB_ERR_INVALID_INPUT, "%s: no feature column (only labels)", path);
    }
    if (st != SB_OK) {
        sb_free(d);
        return st;
    }
    *out = d;
    return SB_OK;
}

sb_status sb_dataset_read(const char *path, const char *format, const char *label, sb_dataset **out) {
    if (format && strcmp(format, "tsv-noheader-nolabel") == 0) /* predict_data.c's, not a format to ask for */
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown data format '%s'; formats: csv, libsvm, tsv-noheader, idx",
                       format);
    return sb_dataset_read_min_cols(path, format, label, 0, out);
}

sb_status sb_dataset_shape(const sb_dataset *d, int64_t *nrows, int32_t *ncols) {
    sb_clear_error();
    if (!d) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_shape: NULL dataset");
    if (nrows) *nrows = d->t.nrows;
    if (ncols) *ncols = d->t.ncols;
    return SB_OK;
}

void sb_dataset_free(sb_dataset *d) {
    if (!d) return;
    sb_table_release(&d->t);
    sb_free(d);
}

/* ---- query groups (ranking) ---- */

/* Row r's query id := q; the ranking objectives take each run of equal
 * consecutive ids as one query (src/models/gbdt/rank.c). */
static sb_status set_qid_owned(sb_dataset *d, int32_t *qid) {
    sb_free(d->t.qid);
    d->t.qid = qid;
    return SB_OK;
}

sb_status sb_dataset_set_group(sb_dataset *d, const int64_t *sizes, int64_t nq) {
    sb_clear_error();
    if (!d || (!sizes && nq)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_set_group: NULL argument");
    int64_t total = 0;
    for (int64_t q = 0; q < nq; q++) {
        if (sizes[q] < 1)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "query %lld has size %lld; every query needs at least one row",
                           (long long)q, (long long)sizes[q]);
        total += sizes[q];
        if (total > d->t.nrows) break;
    }
    if (total != d->t.nrows)
        return sb_fail(SB_ERR_INVALID_INPUT, "query sizes add up to %s%lld rows; the data has %lld",
                       total > d->t.nrows ? "more than " : "", (long long)total, (long long)d->t.nrows);
    if (nq > INT32_MAX) return sb_fail(SB_ERR_LIMIT, "more than %d queries", (int)INT32_MAX);
    int32_t *qid = sb_malloc(sizeof(int32_t) * (size_t)(d->t.nrows ? d->t.nrows : 1));
    if (!qid) return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    int64_t r = 0;
    for (int64_t q = 0; q < nq; q++)
        for (int64_t k = 0; k < sizes[q]; k++) qid[r++] = (int32_t)q;
    return set_qid_owned(d, qid);
}

sb_status sb_dataset_set_qid(sb_dataset *d, const int32_t *qid, int64_t n) {
    sb_clear_error();
    if (!d || !qid) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_set_qid: NULL argument");
    if (n != d->t.nrows)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "qid has %lld values for %lld rows", (long long)n,
                       (long long)d->t.nrows);
    int32_t *copy = sb_malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    if (!copy) return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    memcpy(copy, qid, sizeof(int32_t) * (size_t)n);
    return set_qid_owned(d, copy);
}

/* ---- one-number-a-line files (LightGBM's .query and .weight) ---- */

/* The longest line a query or weight file may have: a number with spaces
 * around it needs a few dozen bytes, so anything longer is not such a file. */
#define SB_IO_MAX_NUMBER_LINE ((size_t)4096)

/* Read path as one number a line through the shared record reader (so a long
 * line is one record, a NUL byte is a named error, and nothing is split at a
 * buffer's edge): blank lines are skipped; each other line is trimmed of
 * spaces and tabs and handed to take(ctx, text, len, lineno), which returns
 * SB_OK or a named error that ends the read (so a file that never ends, a
 * FIFO or /dev/zero, stops as soon as it has more values than data rows or a
 * byte that is not text). what names the file's kind in messages. */
static sb_status read_number_lines(const char *path, const char *what,
                                   sb_status (*take)(void *ctx, char *s, size_t n, int64_t lineno), void *ctx) {
    sb_io_file io;
    sb_status st = sb_io_open(&io, path);
    if (st != SB_OK) return sb_fail(st, "%s file %s", what, sb_last_error());
    char *rec;
    size_t len;
    int64_t lineno;
    for (;;) {
        if ((st = sb_io_next_record(&io, 0, &rec, &len, &lineno)) != SB_OK || !rec) break;
        while (len && (rec[len - 1] == ' ' || rec[len - 1] == '\t')) rec[--len] = '\0';
        while (len && (*rec == ' ' || *rec == '\t')) rec++, len--;
        if (!len) continue;
        if (len > SB_IO_MAX_NUMBER_LINE) {
            st = sb_fail(SB_ERR_LIMIT, "%s: line %lld is %zu bytes, more than the %zu a %s file's line may have",
                         path, (long long)lineno, len, SB_IO_MAX_NUMBER_LINE, what);
            break;
        }
        if ((st = take(ctx, rec, len, lineno)) != SB_OK) break;
    }
    sb_io_close(&io);
    return st;
}

typedef struct query_sizes {
    const char *path;
    int64_t nrows, total, n, cap, *sizes;
} query_sizes;

static sb_status take_query_size(void *ctx, char *s, size_t n, int64_t lineno) {
    query_sizes *q = ctx;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end != s + n || errno || v < 1 || v > INT32_MAX)
        return sb_fail(SB_ERR_INVALID_INPUT, "%s: line %lld: \"%.48s\"%s is not a query size (an integer >= 1)",
                       q->path, (long long)lineno, s, n > 48 ? "..." : "");
    q->total += v;
    if (q->total > q->nrows)
        return sb_fail(SB_ERR_INVALID_INPUT, "%s: line %lld: the query sizes so far add up to %lld rows; the data has %lld",
                       q->path, (long long)lineno, (long long)q->total, (long long)q->nrows);
    if (q->n == q->cap) {
        int64_t cap = q->cap ? q->cap * 2 : 1024;
        int64_t *ns = sb_realloc(q->sizes, sizeof(int64_t) * (size_t)cap);
        if (!ns) return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
        q->sizes = ns;
        q->cap = cap;
    }
    q->sizes[q->n++] = v;
    return SB_OK;
}

sb_status sb_dataset_read_query_file(sb_dataset *d, const char *path) {
    sb_clear_error();
    if (!d || !path) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_read_query_file: NULL argument");
    query_sizes q = {path, d->t.nrows, 0, 0, 0, NULL};
    sb_status st = read_number_lines(path, "query", take_query_size, &q);
    if (st == SB_OK) {
        st = sb_dataset_set_group(d, q.sizes, q.n);
        if (st != SB_OK) st = sb_fail(st, "%s: %s", path, sb_last_error());
    }
    sb_free(q.sizes);
    return st;
}

/* A file of one number a line (sample weights or initial scores), read into
 * v: it grows by doubling up to max values. */
typedef struct number_column {
    const char *path;
    int weight; /* 1: weights (finite, >= 0); 0: initial scores (finite) */
    int64_t n, cap, max;
    float *v;
} number_column;

static sb_status take_number(void *ctx, char *s, size_t n, int64_t lineno) {
    number_column *c = ctx;
    float v;
    int e = sb_io_parse_f32(s, n, &v);
    if (c->weight) {
        if (e || sb_io_is_missing(s, n))
            return sb_fail(SB_ERR_INVALID_INPUT, "%s: line %lld: \"%.48s\"%s is not a weight (%s)", c->path,
                           (long long)lineno, s, n > 48 ? "..." : "",
                           e == 2 ? "beyond float32's range" : "a finite number >= 0 is needed");
        if (!(v >= 0.0f && v <= FLT_MAX))
            return sb_fail(SB_ERR_INVALID_INPUT, "%s: line %lld: weight %g: weights must be finite and >= 0", c->path,
                           (long long)lineno, (double)v);
        if (c->n == c->max)
            return sb_fail(SB_ERR_INVALID_INPUT, "%s: line %lld: more weights than the data's %lld rows", c->path,
                           (long long)lineno, (long long)c->max);
    } else {
        if (e || sb_io_is_missing(s, n) || !(v - v == 0.0f))
            return sb_fail(SB_ERR_INVALID_INPUT, "%s: line %lld: \"%.48s\"%s is not an initial score (a finite "
                           "number is needed)", c->path, (long long)lineno, s, n > 48 ? "..." : "");
        if (c->n == c->max)
            return sb_fail(SB_ERR_INVALID_INPUT, "%s: line %lld: more initial scores than 1024 a data row", c->path,
                           (long long)lineno);
    }
    if (c->n == c->cap) {
        int64_t cap = c->cap * 2 < c->max ? c->cap * 2 : c->max;
        float *g = sb_realloc(c->v, sizeof(float) * (size_t)cap);
        if (!g) return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
        c->v = g;
        c->cap = cap;
    }
    c->v[c->n++] = v;
    return SB_OK;
}

/* path's numbers, at most max of them, into *out (sb_malloc; n of them);
 * room for first at the start. */
static sb_status read_numbers(const char *path, int weight, int64_t first, int64_t max, float **out, int64_t *n) {
    number_column c = {path, weight, 0, first > 0 ? first : 1, max, NULL};
    *out = NULL;
    if (!(c.v = sb_malloc(sizeof(float) * (size_t)c.cap))) return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    sb_status st = read_number_lines(path, weight ? "weight" : "initial score", take_number, &c);
    if (st != SB_OK) {
        sb_free(c.v);
        return st;
    }
    *out = c.v;
    *n = c.n;
    return SB_OK;
}

sb_status sb_dataset_read_weight_file(sb_dataset *d, const char *path) {
    sb_clear_error();
    if (!d || !path) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_read_weight_file: NULL argument");
    float *w = NULL;
    int64_t n = 0;
    sb_status st = read_numbers(path, 1, d->t.nrows, d->t.nrows, &w, &n);
    if (st == SB_OK && n != d->t.nrows)
        st = sb_fail(SB_ERR_INVALID_INPUT, "%s has %lld weights for %lld data rows", path, (long long)n,
                     (long long)d->t.nrows);
    if (st == SB_OK) {
        float *old = d->t.weight;
        d->t.weight = w;
        w = old;
    }
    sb_free(w);
    return st;
}

/* Initial scores (LightGBM's init_score): n values, a positive multiple k of
 * the rows (row r's k scores together), every one finite; copied. */
static sb_status set_init(sb_dataset *d, float *s, int64_t n, const char *what) {
    if (d->t.nrows == 0 || n <= 0 || n % d->t.nrows != 0 || n / d->t.nrows > 1024)
        return sb_fail(SB_ERR_INVALID_INPUT, "%s: %lld initial scores for %lld data rows: give one a row, or one "
                       "per row and class (row by row)", what, (long long)n, (long long)d->t.nrows);
    for (int64_t i = 0; i < n; i++)
        if (!(s[i] - s[i] == 0.0f))
            return sb_fail(SB_ERR_INVALID_INPUT, "%s: initial score %lld (row %lld) is %g: scores must be finite", what,
                           (long long)i, (long long)(i / (n / d->t.nrows)), (double)s[i]);
    sb_free(d->t.init);
    d->t.init = s;
    d->t.init_k = (int32_t)(n / d->t.nrows);
    return SB_OK;
}

sb_status sb_dataset_set_init_score(sb_dataset *d, const float *s, int64_t n) {
    sb_clear_error();
    if (!d || !s) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_set_init_score: NULL argument");
    float *c = sb_malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    if (!c) return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    memcpy(c, s, sizeof(float) * (size_t)(n > 0 ? n : 0));
    sb_status st = set_init(d, c, n, "sb_dataset_set_init_score");
    if (st != SB_OK) sb_free(c);
    return st;
}

sb_status sb_dataset_read_init_file(sb_dataset *d, const char *path) {
    sb_clear_error();
    if (!d || !path) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_read_init_file: NULL argument");
    if (d->t.nrows == 0) return sb_fail(SB_ERR_INVALID_INPUT, "%s: the data has no rows", path);
    /* one score a line, the buffer doubling from one a row up to 1024 a row */
    float *v = NULL;
    int64_t n = 0;
    sb_status st = read_numbers(path, 0, d->t.nrows, d->t.nrows * 1024, &v, &n);
    if (st != SB_OK) return st;
    float *fit = sb_realloc(v, sizeof(float) * (size_t)(n > 0 ? n : 1));
    if (fit) v = fit;
    if ((st = set_init(d, v, n, path)) != SB_OK) sb_free(v);
    return st;
}

/* The feature column named name (-1: none). */
static int32_t column_index(const sb_dataset *d, const char *name) {
    for (int32_t k = 0; k < d->t.ncols; k++)
        if (d->t.names && d->t.names[k] && !strcmp(d->t.names[k], name)) return k;
    return -1;
}

/* Removes feature column c from d in place (x compacted row by row, its name
 * freed); a borrowed x (sb_dataset_view_matrix) is copied first, so the
 * caller's matrix is never written. */
static sb_status remove_column(sb_dataset *d, int32_t c) {
    const int64_t n = d->t.nrows;
    const int32_t nc = d->t.ncols;
    if (d->t.x_borrowed) {
        float *own = sb_malloc(sizeof(float) * (size_t)(n * (nc - 1) > 0 ? n * (nc - 1) : 1));
        if (!own) return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
        for (int64_t r = 0; r < n; r++)
            for (int32_t k = 0; k < nc; k++)
                if (k != c) own[r * (nc - 1) + (k < c ? k : k - 1)] = d->t.x[r * nc + k];
        d->t.x = own;
        d->t.x_borrowed = 0;
    } else {
        for (int64_t r = 0; r < n; r++)
            for (int32_t k = 0; k < nc; k++)
                if (k != c) d->t.x[r * (nc - 1) + (k < c ? k : k - 1)] = d->t.x[r * nc + k];
    }
    if (d->t.names) {
        sb_free(d->t.names[c]);
        memmove(d->t.names + c, d->t.names + c + 1, sizeof(char *) * (size_t)(nc - 1 - c));
    }
    d->t.ncols = nc - 1;
    return SB_OK;
}

sb_status sb_dataset_feature_name(const sb_dataset *d, int32_t k, const char **name) {
    sb_clear_error();
    if (!d || !name) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_feature_name: NULL argument");
    if (k < 0 || k >= d->t.ncols)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "feature %d: the data has %d feature columns (0-based)", (int)k,
                       (int)d->t.ncols);
    if (!d->t.names || !d->t.names[k]) return sb_fail(SB_ERR_NOT_FOUND, "feature %d has no name", (int)k);
    *name = d->t.names[k];
    return SB_OK;
}

sb_status sb_dataset_weight_column(sb_dataset *d, const char *name) {
    sb_clear_error();
    if (!d || !name) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_weight_column: NULL argument");
    const int32_t c = column_index(d, name);
    if (c < 0) return sb_fail(SB_ERR_INVALID_INPUT, "no weight column \"%s\" among the features", name);
    if (d->t.ncols < 2) return sb_fail(SB_ERR_INVALID_INPUT, "the weight column \"%s\" is the only column", name);
    if (d->t.weight) return sb_fail(SB_ERR_INVALID_ARGUMENT, "the data has weights already; a weight column too is one "
                                    "weight too many");
    const int64_t n = d->t.nrows;
    const int32_t nc = d->t.ncols;
    float *w = sb_malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!w) return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    for (int64_t r = 0; r < n; r++) {
        const float v = d->t.x[r * nc + c];
        if (!(v >= 0.0f && v <= FLT_MAX)) {
            sb_free(w);
            return sb_fail(SB_ERR_INVALID_INPUT, "weight column \"%s\", row %lld: %g is not a weight (finite and >= 0)",
                           name, (long long)r, (double)v);
        }
        w[r] = v;
    }
    sb_status st = remove_column(d, c);
    if (st != SB_OK) {
        sb_free(w);
        return st;
    }
    d->t.weight = w;
    return SB_OK;
}

sb_status sb_dataset_drop_column(sb_dataset *d, const char *name) {
    sb_clear_error();
    if (!d || !name) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_drop_column: NULL argument");
    const int32_t c = column_index(d, name);
    if (c < 0) return sb_fail(SB_ERR_INVALID_INPUT, "no column \"%s\" among the features to ignore", name);
    if (d->t.ncols < 2)
        return sb_fail(SB_ERR_INVALID_INPUT, "ignoring \"%s\" would leave no feature column", name);
    return remove_column(d, c);
}

sb_status sb_dataset_group_column(sb_dataset *d, const char *name) {
    sb_clear_error();
    if (!d || !name) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_dataset_group_column: NULL argument");
    int32_t c = -1;
    for (int32_t k = 0; k < d->t.ncols && c < 0; k++)
        if (!strcmp(d->t.names[k], name)) c = k;
    if (c < 0) return sb_fail(SB_ERR_INVALID_INPUT, "no group column \"%s\" among the features", name);
    if (d->t.ncols < 2) return sb_fail(SB_ERR_INVALID_INPUT, "the group column \"%s\" is the only column", name);
    const int64_t n = d->t.nrows;
    const int32_t nc = d->t.ncols;
    int32_t *qid = sb_malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    if (!qid) return sb_fail(SB_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    for (int64_t r = 0; r < n; r++) {
        float v = d->t.x[r * nc + c];
        if (!(v >= 0.0f && v <= 2147483520.0f && v == (float)(int64_t)v)) {
            sb_free(qid);
            return sb_fail(SB_ERR_INVALID_INPUT, "group column \"%s\", row %lld: %g is not a query id (an integer >= 0)",
                           name, (long long)r, (double)v);
        }
        qid[r] = (int32_t)v;
    }
    sb_status st = remove_column(d, c); /* the column leaves the features (a borrowed matrix is copied first) */
    if (st != SB_OK) {
        sb_free(qid);
        return st;
    }
    return set_qid_owned(d, qid);
}
