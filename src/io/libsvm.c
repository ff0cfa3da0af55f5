/*
 * libsvm.c: the LibSVM/svmlight reader. One pass keeps the entries sparse
 * (row starts, indices, values); the dense table is filled once the width
 * (max index + 1, or min_cols) is known. docs/io.md states the rules.
 */
#include "reader.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct svm_state {
    sb_io_file io;
    int64_t *row_start; /* nrows + 1 entry offsets */
    int32_t *idx;
    float *val;
    float *label;
    int32_t *qid;
    int64_t nrows, cap_rows;
    int64_t nnz, cap_nnz;
    int32_t max_index; /* -1: none yet */
    int has_qid;       /* -1 unknown (no row yet), 0 no, 1 yes */
} svm_state;

static void svm_state_free(svm_state *s) {
    sb_io_close(&s->io);
    sb_free(s->row_start);
    sb_free(s->idx);
    sb_free(s->val);
    sb_free(s->label);
    sb_free(s->qid);
    memset(s, 0, sizeof *s);
}

static int is_sp(char c) { return c == ' ' || c == '\t'; }

static sb_status oom(const svm_state *s) {
    return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory after %lld rows", s->io.path,
                   (long long)s->nrows);
}

/* Room for one more row (and its qid, label and row start). */
static sb_status grow_rows(svm_state *s) {
    if (s->nrows >= sb_io_max_rows())
        return sb_fail(SB_ERR_LIMIT, "%s: more than the limit of %lld data rows", s->io.path,
                       (long long)sb_io_max_rows());
    if (s->nrows + 1 < s->cap_rows) return SB_OK;
    int64_t ncap = s->cap_rows ? s->cap_rows * 2 : 1024;
    int64_t *rs = sb_realloc(s->row_start, (size_t)(ncap + 1) * sizeof *rs);
    if (!rs) return oom(s);
    s->row_start = rs;
    float *lb = sb_realloc(s->label, (size_t)ncap * sizeof *lb);
    if (!lb) return oom(s);
    s->label = lb;
    int32_t *q = sb_realloc(s->qid, (size_t)ncap * sizeof *q);
    if (!q) return oom(s);
    s->qid = q;
    s->cap_rows = ncap;
    return SB_OK;
}

static sb_status grow_nnz(svm_state *s) {
    int64_t ncap = s->cap_nnz ? s->cap_nnz * 2 : 8192;
    if ((uint64_t)ncap > SIZE_MAX / sizeof(float))
        return sb_fail(SB_ERR_LIMIT, "%s: too many entries", s->io.path);
    int32_t *ni = sb_realloc(s->idx, (size_t)ncap * sizeof *ni);
    if (!ni) return oom(s);
    s->idx = ni;
    float *nv = sb_realloc(s->val, (size_t)ncap * sizeof *nv);
    if (!nv) return oom(s);
    s->val = nv;
    s->cap_nnz = ncap;
    return SB_OK;
}

/* Parse a run of decimal digits as a non-negative integer no larger than max;
 * 0 ok, 1 not digits, 2 too large. */
static int parse_uint(const char *p, size_t n, int64_t max, int64_t *out) {
    if (n == 0) return 1;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return 1;
        v = v * 10 + (p[i] - '0');
        if (v > max) return 2;
    }
    *out = v;
    return 0;
}

/* One data line (comment already cut off, at least one token). */
static sb_status take_line(svm_state *s, char *line, size_t len, int64_t lineno) {
    const char *path = s->io.path;
    sb_status st = grow_rows(s);
    if (st != SB_OK) return st;
    size_t i = 0;
    while (i < len && is_sp(line[i])) i++;
    size_t b = i;
    while (i < len && !is_sp(line[i])) i++;
    float y;
    int e = sb_io_parse_f32(line + b, i - b, &y);
    if (e || !isfinite(y)) {
        char saved = line[i];
        line[i] = '\0';
        st = sb_fail(SB_ERR_INVALID_INPUT,
                     "%s: line %lld, column %zu: the label \"%.48s\" is %s; every row needs a "
                     "finite number first",
                     path, (long long)lineno, b + 1, line + b,
                     e == 1 ? "not a number" : e == 2 ? "beyond float32's range"
                     : isnan(y) ? "missing" : "infinite");
        line[i] = saved;
        return st;
    }
    s->label[s->nrows] = y;
    s->row_start[s->nrows] = s->nnz;
    int row_qid = 0;
    int64_t prev = -1;
    int first_pair = 1;
    for (;;) {
        while (i < len && is_sp(line[i])) i++;
        if (i >= len) break;
        b = i;
        while (i < len && !is_sp(line[i])) i++;
        size_t n = i - b;
        char *tok = line + b;
        char saved = line[i];
        line[i] = '\0'; /* for the messages; restored below */
        char *colon = memchr(tok, ':', n);
        if (!colon) {
            st = sb_fail(SB_ERR_INVALID_INPUT,
                         "%s: line %lld, column %zu: expected index:value, got \"%.48s\"", path,
                         (long long)lineno, b + 1, tok);
            line[i] = saved;
            return st;
        }
        size_t klen = (size_t)(colon - tok);
        if (klen == 3 && memcmp(tok, "qid", 3) == 0) {
            int64_t q;
            int qe = first_pair ? parse_uint(colon + 1, n - klen - 1, INT32_MAX, &q) : 3;
            if (qe) {
                st = sb_fail(SB_ERR_INVALID_INPUT,
                             "%s: line %lld, column %zu: \"%.48s\": %s", path, (long long)lineno,
                             b + 1, tok,
                             qe == 3 ? "qid must come right after the label"
                                     : "qid must be an integer in 0..2147483647");
                line[i] = saved;
                return st;
            }
            s->qid[s->nrows] = (int32_t)q;
            row_qid = 1;
            first_pair = 0;
            line[i] = saved;
            continue;
        }
        first_pair = 0;
        int64_t k;
        int ke = parse_uint(tok, klen, (int64_t)sb_io_max_cols() - 1, &k);
        if (ke) {
            if (ke == 2)
                st = sb_fail(SB_ERR_LIMIT,
                             "%s: line %lld, column %zu: \"%.48s\": the index is beyond the "
                             "limit of %d columns",
                             path, (long long)lineno, b + 1, tok, (int)sb_io_max_cols());
            else
                st = sb_fail(SB_ERR_INVALID_INPUT,
                             "%s: line %lld, column %zu: \"%.48s\": the index must be a "
                             "non-negative integer (digits only)",
                             path, (long long)lineno, b + 1, tok);
            line[i] = saved;
            return st;
        }
        if (k <= prev) {
            st = sb_fail(SB_ERR_INVALID_INPUT,
                         "%s: line %lld, column %zu: index %lld after %lld; indices must "
                         "increase strictly along a line (no duplicates)",
                         path, (long long)lineno, b + 1, (long long)k, (long long)prev);
            line[i] = saved;
            return st;
        }
        size_t vlen = n - klen - 1;
        float v = 0.0f;
        int ve = vlen == 0 ? 1 : sb_io_parse_f32(colon + 1, vlen, &v);
        if (ve) {
            st = sb_fail(SB_ERR_INVALID_INPUT,
                         "%s: line %lld, column %zu: \"%.48s\": the value %s", path,
                         (long long)lineno, b + 1, tok,
                         ve == 1 ? "is not a number" : "is beyond float32's range");
            line[i] = saved;
            return st;
        }
        line[i] = saved;
        if (s->nnz == s->cap_nnz) {
            st = grow_nnz(s);
            if (st != SB_OK) return st;
        }
        s->idx[s->nnz] = (int32_t)k;
        s->val[s->nnz] = v;
        s->nnz++;
        prev = k;
        if (k > s->max_index) s->max_index = (int32_t)k;
    }
    if (s->has_qid < 0) {
        s->has_qid = row_qid;
    } else if (s->has_qid != row_qid) {
        return sb_fail(SB_ERR_INVALID_INPUT,
                       "%s: line %lld, column 1: %s; qid must be on every line or on none",
                       path, (long long)lineno,
                       row_qid ? "this line has a qid and earlier lines have none"
                               : "this line has no qid and earlier lines have one");
    }
    s->nrows++;
    s->row_start[s->nrows] = s->nnz;
    return SB_OK;
}

sb_status sb_read_libsvm(const char *path, int32_t min_cols, sb_table *out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "out must not be NULL");
    memset(out, 0, sizeof *out);
    if (!path) return sb_fail(SB_ERR_INVALID_ARGUMENT, "path must not be NULL");
    if (min_cols < 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "min_cols must be >= 0, got %d", (int)min_cols);
    if (min_cols > sb_io_max_cols())
        return sb_fail(SB_ERR_LIMIT, "min_cols %d is beyond the limit of %d columns",
                       (int)min_cols, (int)sb_io_max_cols());
    svm_state s;
    memset(&s, 0, sizeof s);
    s.max_index = -1;
    s.has_qid = -1;
    sb_table t;
    memset(&t, 0, sizeof t);
    sb_status st = sb_io_open(&s.io, path);
    if (st != SB_OK) return st;
    for (;;) {
        char *line;
        size_t len;
        int64_t lineno;
        st = sb_io_next_record(&s.io, 0, &line, &len, &lineno);
        if (st != SB_OK) goto fail;
        if (!line) break;
        char *hash = memchr(line, '#', len);
        if (hash) {
            len = (size_t)(hash - line);
            *hash = '\0';
        }
        size_t i = 0;
        while (i < len && is_sp(line[i])) i++;
        if (i == len) continue; /* blank or comment only */
        st = take_line(&s, line, len, lineno);
        if (st != SB_OK) goto fail;
    }
    if (s.nrows == 0) {
        st = sb_fail(SB_ERR_INVALID_INPUT, "%s: no data rows (the file is empty or only comments)",
                     path);
        goto fail;
    }
    int32_t ncols = s.max_index + 1 > min_cols ? s.max_index + 1 : min_cols;
    size_t cells = (size_t)s.nrows * (size_t)ncols;
    if (ncols && (uint64_t)s.nrows > SIZE_MAX / sizeof(float) / (size_t)ncols) {
        st = sb_fail(SB_ERR_LIMIT, "%s: %lld x %d do not fit in memory", path,
                     (long long)s.nrows, (int)ncols);
        goto fail;
    }
    /* Absent entries are 0.0: calloc's all-zero bits are +0.0f. */
    t.x = sb_calloc(cells ? cells : 1, sizeof(float));
    if (!t.x) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory for a dense %lld x %d table", path,
                     (long long)s.nrows, (int)ncols);
        goto fail;
    }
    for (int64_t r = 0; r < s.nrows; r++) {
        float *row = t.x + (size_t)r * (size_t)ncols;
        for (int64_t e = s.row_start[r]; e < s.row_start[r + 1]; e++) row[s.idx[e]] = s.val[e];
    }
    st = sb_io_default_names(ncols, &t.names);
    if (st != SB_OK) goto fail;
    t.nrows = s.nrows;
    t.ncols = ncols;
    t.has_names = SB_NAMES_INDEX;
    float *lb = sb_realloc(s.label, (size_t)s.nrows * sizeof *lb);
    t.label = lb ? lb : s.label;
    s.label = NULL;
    if (s.has_qid == 1) {
        int32_t *q = sb_realloc(s.qid, (size_t)s.nrows * sizeof *q);
        t.qid = q ? q : s.qid;
        s.qid = NULL;
    }
    svm_state_free(&s);
    *out = t;
    return SB_OK;

fail:
    sb_free(t.x);
    svm_state_free(&s);
    memset(out, 0, sizeof *out);
    return st;
}
