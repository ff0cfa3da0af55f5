/*
 * csv.c: the buffered record reader and float parsing shared by src/io, the CSV
 * reader (header row), the headerless TSV reader (LightGBM's examples), format
 * detection and sb_table_release. docs/io.md is the user's account of it.
 */
#include "reader.h"
#include <errno.h>
#if defined(SB_HAVE_ZLIB)
#include <dlfcn.h>
#include <pthread.h>
#include <zlib.h>
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SB_IO_CHUNK ((size_t)1 << 20)

/* ---- limits ------------------------------------------------------------------ */

static int64_t g_max_rows = SB_IO_MAX_ROWS;
static int32_t g_max_cols = SB_IO_MAX_COLS;
static size_t g_max_line = SB_IO_MAX_LINE;

void sb_io_set_limits_for_tests(int64_t max_rows, int32_t max_cols, size_t max_line) {
    g_max_rows = max_rows > 0 ? max_rows : SB_IO_MAX_ROWS;
    g_max_cols = max_cols > 0 ? max_cols : SB_IO_MAX_COLS;
    g_max_line = max_line > 0 ? max_line : SB_IO_MAX_LINE;
}
int64_t sb_io_max_rows(void) { return g_max_rows; }
int32_t sb_io_max_cols(void) { return g_max_cols; }
size_t sb_io_max_line(void) { return g_max_line; }

/* ---- the table ---------------------------------------------------------------- */

void sb_table_release(sb_table *t) {
    if (!t) return;
    if (t->names) {
        for (int32_t j = 0; j < t->ncols; j++) sb_free(t->names[j]);
        sb_free(t->names);
    }
    if (!t->x_borrowed) sb_free(t->x);
    sb_free(t->label);
    sb_free(t->weight);
    sb_free(t->qid);
    sb_free(t->init);
    memset(t, 0, sizeof *t);
}

sb_status sb_io_default_names(int32_t n, char ***out) {
    *out = NULL;
    char **names = sb_calloc((size_t)(n > 0 ? n : 1), sizeof *names);
    if (!names) return sb_fail(SB_ERR_OUT_OF_MEMORY, "out of memory for %d column names", n);
    for (int32_t j = 0; j < n; j++) {
        names[j] = sb_malloc(16);
        if (!names[j]) {
            for (int32_t k = 0; k < j; k++) sb_free(names[k]);
            sb_free(names);
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "out of memory for %d column names", n);
        }
        snprintf(names[j], 16, "f%d", (int)j);
    }
    *out = names;
    return SB_OK;
}

/* ---- numbers -------------------------------------------------------------------- */

static float canonical_nan(void) {
    const uint32_t bits = 0x7FC00000u;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static int lower_eq(const char *s, size_t n, const char *word) {
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != word[i] || word[i] == '\0') return 0;
    }
    return word[n] == '\0';
}

static int is_blank_char(char c) { return c == ' ' || c == '\t'; }

int sb_io_is_missing(const char *s, size_t n) {
    while (n && is_blank_char(*s)) s++, n--;
    while (n && is_blank_char(s[n - 1])) n--;
    return n == 0 || lower_eq(s, n, "na") || lower_eq(s, n, "nan") || lower_eq(s, n, "null");
}

int sb_io_parse_f32(char *s, size_t n, float *v) {
    while (n && is_blank_char(*s)) s++, n--;
    while (n && is_blank_char(s[n - 1])) n--;
    if (sb_io_is_missing(s, n)) {
        *v = canonical_nan();
        return 0;
    }
    /* strtof would skip other white space (\n \v \f \r) itself: refuse it. */
    if (s[0] == '\n' || s[0] == '\v' || s[0] == '\f' || s[0] == '\r') return 1;
    char saved = s[n];
    s[n] = '\0';
    char *end;
    errno = 0;
    /* Straight to float32: strtof rounds the decimal once, correctly (glibc),
     * in the "C" locale the reader set for this thread. */
#ifdef SB_SABOTAGE_F64_CONV
    /* Separating arm for rule 1 (make SABOTAGE=f64-conv): the decimal rounded
     * to float64 first, then to float32 (two roundings; a decimal just above a
     * float32 midpoint can land on it and then go to even). */
    float f = (float)strtod(s, &end);
#else
    float f = strtof(s, &end);
#endif
    int range = errno == ERANGE;
    s[n] = saved;
    if (end != s + n) return 1;
    if (isnan(f)) f = canonical_nan();
    else if (isinf(f) && range) return 2; /* a finite decimal beyond FLT_MAX */
    *v = f;
    return 0;
}

/* ---- buffered records ------------------------------------------------------------ */

/* ---- gzip: the system's zlib, opened at run time ----------------------------------- */

#if defined(SB_HAVE_ZLIB)
typedef struct io_gz {
    z_stream zs;
    unsigned char *in; /* compressed bytes read from the file */
    size_t incap;
    int done;          /* the last member ended and the file holds no more */
} io_gz;

static struct {
    int (*init2)(z_streamp, int, const char *, int);
    int (*inflate)(z_streamp, int);
    int (*end)(z_streamp);
    int (*reset)(z_streamp);
} g_z;
static int g_z_ok;
static pthread_once_t g_z_once = PTHREAD_ONCE_INIT;

static void z_load(void) {
    void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    *(void **)&g_z.init2 = dlsym(h, "inflateInit2_");
    *(void **)&g_z.inflate = dlsym(h, "inflate");
    *(void **)&g_z.end = dlsym(h, "inflateEnd");
    *(void **)&g_z.reset = dlsym(h, "inflateReset");
    g_z_ok = g_z.init2 && g_z.inflate && g_z.end && g_z.reset;
}

/* Inflate up to want bytes into out (*got of them); at the end of the last
 * member with nothing after it, g->done. A member followed by more bytes is
 * followed by another member (gzip's concatenation); a file that stops inside
 * a member, or bytes that are not deflate data, is a named error. */
static sb_status gz_read(sb_io_file *r, char *out, size_t want, size_t *got) {
    io_gz *g = r->gz;
    g->zs.next_out = (Bytef *)out;
    g->zs.avail_out = (uInt)want;
    while (g->zs.avail_out > 0 && !g->done) {
        if (g->zs.avail_in == 0) {
            const size_t n = fread(g->in, 1, g->incap, r->f);
            if (n == 0) {
                if (ferror(r->f)) return sb_fail(SB_ERR_IO, "%s: read error: %s", r->path, strerror(errno));
                return sb_fail(SB_ERR_INVALID_INPUT, "%s: the gzip data ends inside a member (a truncated file?)",
                               r->path);
            }
            g->zs.next_in = g->in;
            g->zs.avail_in = (uInt)n;
        }
        const int z = g_z.inflate(&g->zs, Z_NO_FLUSH);
        if (z == Z_STREAM_END) {
            if (g->zs.avail_in == 0) {
                const size_t n = fread(g->in, 1, g->incap, r->f);
                if (n == 0 && ferror(r->f)) return sb_fail(SB_ERR_IO, "%s: read error: %s", r->path, strerror(errno));
                g->zs.next_in = g->in;
                g->zs.avail_in = (uInt)n;
            }
            if (g->zs.avail_in == 0) g->done = 1;
            else if (g->zs.next_in[0] != 0x1f) /* what follows a member must be another one */
                return sb_fail(SB_ERR_INVALID_INPUT, "%s: bytes after the gzip data that are not another gzip member",
                               r->path);
            else if (g_z.reset(&g->zs) != Z_OK)
                return sb_fail(SB_ERR_INVALID_INPUT, "%s: corrupt gzip data", r->path);
        } else if (z != Z_OK) {
            return sb_fail(SB_ERR_INVALID_INPUT, "%s: corrupt gzip data (%s)", r->path,
                           g->zs.msg ? g->zs.msg : "zlib could not inflate it");
        }
    }
    *got = want - g->zs.avail_out;
    return SB_OK;
}

/* Turns r, whose first bytes (r->buf[0..len)) are gzip's, into a gzip reader:
 * those bytes become the inflater's first input. */
static sb_status gz_start(sb_io_file *r) {
    pthread_once(&g_z_once, z_load);
    if (!g_z_ok)
        return sb_fail(SB_ERR_INVALID_INPUT, "%s: gzip-compressed data, and this machine has no zlib (libz.so.1) "
                       "to read it (decompress it first)", r->path);
    io_gz *g = sb_calloc(1, sizeof *g);
    const size_t incap = r->len > SB_IO_CHUNK ? r->len : SB_IO_CHUNK;
    if (!g || !(g->in = sb_malloc(incap))) {
        if (g) sb_free(g);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory for the gzip reader", r->path);
    }
    g->incap = incap;
    memcpy(g->in, r->buf, r->len);
    g->zs.next_in = g->in;
    g->zs.avail_in = (uInt)r->len;
    /* 16 + 15: a gzip wrapper, the largest window */
    if (g_z.init2(&g->zs, 16 + 15, ZLIB_VERSION, (int)sizeof(z_stream)) != Z_OK) {
        sb_free(g->in);
        sb_free(g);
        return sb_fail(SB_ERR_INVALID_INPUT, "%s: zlib refused to start inflating", r->path);
    }
    r->gz = g;
    r->len = r->pos = 0;
    r->eof = 0;
    return SB_OK;
}

static void gz_close(sb_io_file *r) {
    io_gz *g = r->gz;
    if (!g) return;
    g_z.end(&g->zs);
    sb_free(g->in);
    sb_free(g);
    r->gz = NULL;
}
#endif

static sb_status io_fill(sb_io_file *r) {
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    if (r->cap - r->len < SB_IO_CHUNK) {
        size_t ncap = r->cap * 2 > r->len + SB_IO_CHUNK ? r->cap * 2 : r->len + SB_IO_CHUNK;
        char *nb = sb_realloc(r->buf, ncap + 1);
        if (!nb)
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory for a %zu-byte read buffer",
                           r->path, ncap + 1);
        r->buf = nb;
        r->cap = ncap;
    }
    size_t want = r->cap - r->len;
    if (want > SB_IO_CHUNK) want = SB_IO_CHUNK;
#if defined(SB_HAVE_ZLIB)
    if (r->gz) {
        size_t got = 0;
        const sb_status st = gz_read(r, r->buf + r->len, want, &got);
        r->len += got;
        if (st == SB_OK && got < want) r->eof = 1;
        return st;
    }
#endif
    size_t got = fread(r->buf + r->len, 1, want, r->f);
    r->len += got;
    if (got < want) {
        if (ferror(r->f))
            return sb_fail(SB_ERR_IO, "%s: read error: %s", r->path, strerror(errno));
        r->eof = 1;
    }
    return SB_OK;
}

/* The name of the compression whose magic bytes begin buf (gzip, bzip2, xz,
 * zstd, zip), or NULL: such a file is refused by name at open, before its
 * bytes could reach a message (gzip is read where zlib is at hand). */
static const char *compressed_kind(const char *buf, size_t len) {
    static const struct { const char *name; const char *magic; size_t n; } k_magic[] = {
        {"gzip", "\x1f\x8b", 2}, {"xz", "\xfd" "7zXZ\x00", 6}, {"zstd", "\x28\xb5\x2f\xfd", 4},
        {"zip", "PK\x03\x04", 4}};
    for (size_t k = 0; k < sizeof k_magic / sizeof k_magic[0]; k++)
        if (len >= k_magic[k].n && memcmp(buf, k_magic[k].magic, k_magic[k].n) == 0) return k_magic[k].name;
    /* bzip2: "BZh", a block size digit, then a block's or the end's magic
     * (a text line may begin with "BZh") */
    if (len >= 10 && memcmp(buf, "BZh", 3) == 0 && buf[3] >= '1' && buf[3] <= '9' &&
        (memcmp(buf + 4, "\x31\x41\x59\x26\x53\x59", 6) == 0 || memcmp(buf + 4, "\x17\x72\x45\x38\x50\x90", 6) == 0))
        return "bzip2";
    return NULL;
}

sb_status sb_io_open(sb_io_file *r, const char *path) {
    memset(r, 0, sizeof *r);
    r->path = path;
    r->line = 1;
    r->f = fopen(path, "rb");
    if (!r->f) return sb_fail(SB_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    r->c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (r->c_locale == (locale_t)0) {
        sb_io_close(r);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: cannot create the C locale", path);
    }
    r->old_locale = uselocale(r->c_locale);
    sb_status st = io_fill(r);
    if (st != SB_OK) {
        sb_io_close(r);
        return st;
    }
    const char *packed = compressed_kind(r->buf, r->len);
#if defined(SB_HAVE_ZLIB)
    if (packed && !strcmp(packed, "gzip")) {
        if ((st = gz_start(r)) == SB_OK) st = io_fill(r);
        if (st != SB_OK) {
            sb_io_close(r);
            return st;
        }
        packed = compressed_kind(r->buf, r->len); /* a gzip of a compressed file is refused as that */
    }
#endif
    if (packed) {
        st = sb_fail(SB_ERR_INVALID_INPUT, "%s: %s-compressed data: samebits reads the plain text (decompress it "
                     "first)", path, packed);
        sb_io_close(r);
        return st;
    }
    if (r->len >= 3 && (unsigned char)r->buf[0] == 0xEF && (unsigned char)r->buf[1] == 0xBB &&
        (unsigned char)r->buf[2] == 0xBF)
        r->pos = 3;
    return SB_OK;
}

void sb_io_close(sb_io_file *r) {
#if defined(SB_HAVE_ZLIB)
    gz_close(r);
#endif
    if (r->c_locale != (locale_t)0) {
        uselocale(r->old_locale);
        freelocale(r->c_locale);
    }
    if (r->f) fclose(r->f);
    sb_free(r->buf);
    memset(r, 0, sizeof *r);
}

static size_t count_newlines(const char *s, size_t n) {
    size_t k = 0;
    const char *end = s + n;
    while (s < end && (s = memchr(s, '\n', (size_t)(end - s))) != NULL) {
        k++;
        s++;
    }
    return k;
}

/* The offset just past the last LF in s[0..n), or 0 when there is none. */
static size_t last_newline_before(const char *s, size_t n) {
    while (n && s[n - 1] != '\n') n--;
    return n;
}

sb_status sb_io_next_record(sb_io_file *r, int quotes, char **rec, size_t *len, int64_t *lineno) {
    *rec = NULL;
    *len = 0;
    *lineno = r->line;
    size_t off = 0;        /* bytes scanned, relative to r->pos */
    size_t checked = 0;    /* bytes of those known to hold no NUL */
    size_t inner_nl = 0;   /* newlines inside quotes */
    int inq = 0;
    for (;;) {
        char *s = r->buf + r->pos;
        size_t avail = r->len - r->pos;
        size_t end = (size_t)-1;
        while (off < avail) {
            if (!inq) {
                char *nl = memchr(s + off, '\n', avail - off);
                size_t lim = nl ? (size_t)(nl - s) : avail;
                char *q = quotes ? memchr(s + off, '"', lim - off) : NULL;
                if (!q) {
                    off = lim;
                    if (nl) end = lim;
                    break;
                }
                off = (size_t)(q - s) + 1;
                inq = 1;
            } else {
                char *q = memchr(s + off, '"', avail - off);
                size_t lim = q ? (size_t)(q - s) : avail;
                inner_nl += count_newlines(s + off, lim - off);
                off = q ? lim + 1 : avail;
                if (q) inq = 0;
            }
        }
        /* A NUL byte is refused as soon as it is scanned: no text format has
         * one, C strings would silently end at it, and a stream of them (a
         * binary file, /dev/zero) is refused in its first chunk instead of
         * being buffered up to the line limit. */
        if (off > checked) {
            const char *z = memchr(s + checked, '\0', off - checked);
            if (z)
                return sb_fail(SB_ERR_INVALID_INPUT,
                               "%s: line %lld: a NUL byte (at byte %zu of the line): not a text file",
                               r->path, (long long)(r->line + (int64_t)count_newlines(s, (size_t)(z - s))),
                               (size_t)(z - s) - last_newline_before(s, (size_t)(z - s)) + 1);
            checked = off;
        }
        if (end == (size_t)-1 && r->eof) {
            if (avail == 0) return SB_OK; /* end of file */
            if (inq)
                return sb_fail(SB_ERR_INVALID_INPUT,
                               "%s: line %lld: a double quote opened in this record is never "
                               "closed (end of file)",
                               r->path, (long long)r->line);
            end = avail; /* a last record without a newline */
        }
        if (end != (size_t)-1 || off > g_max_line) {
            size_t n = end != (size_t)-1 ? end : off;
            if (n > g_max_line)
                return sb_fail(SB_ERR_LIMIT, "%s: line %lld is longer than the limit of %zu bytes",
                               r->path, (long long)r->line, g_max_line);
            r->pos += end < avail ? end + 1 : end;
            r->line += 1 + (int64_t)inner_nl;
            if (n > 0 && s[n - 1] == '\r') n--;
            s[n] = '\0';
            *rec = s;
            *len = n;
            return SB_OK;
        }
        sb_status st = io_fill(r);
        if (st != SB_OK) return st;
    }
}

/* ---- CSV fields ------------------------------------------------------------------- */

typedef struct field {
    char *s;
    size_t n;
} field;

/* The separator of a first record: '\t' if it has tabs and no commas outside
 * quotes, else ','. */
static char pick_separator(const char *rec, size_t len) {
    int inq = 0, commas = 0, tabs = 0;
    for (size_t i = 0; i < len; i++) {
        if (rec[i] == '"') inq = !inq;
        else if (!inq && rec[i] == ',') commas++;
        else if (!inq && rec[i] == '\t') tabs++;
    }
    return tabs && !commas ? '\t' : ',';
}

/* Split rec[0..len) (NUL at len) at sep outside double quotes, unquoting in place
 * ("" is one quote) and NUL-terminating each field. The first cap fields go to
 * f; *count gets how many there are. With f NULL it only counts, writing
 * nothing. Returns 0, or the 1-based number of a field with text after its
 * closing quote. */
static size_t split_fields(char *rec, size_t len, char sep, field *f, size_t cap, size_t *count) {
    char *p = rec, *end = rec + len;
    size_t k = 0;
    for (;;) {
        char *start = p, *w;
        char *q = p;
        while (q < end && (*q == ' ' || (*q == '\t' && sep != '\t'))) q++;
        if (q < end && *q == '"') {
            q++;
            w = start;
            while (q < end) {
                if (*q == '"') {
                    if (q + 1 < end && q[1] == '"') {
                        if (f) *w = '"';
                        w++;
                        q += 2;
                        continue;
                    }
                    break;
                }
                if (f) *w = *q;
                w++;
                q++;
            }
            if (q < end) q++; /* the closing quote */
            while (q < end && (*q == ' ' || (*q == '\t' && sep != '\t'))) q++;
            if (q < end && *q != sep) {
                *count = k + 1;
                return k + 1;
            }
            p = q;
        } else {
            char *s = memchr(p, sep, (size_t)(end - p));
            p = s ? s : end;
            w = p;
        }
        if (f && k < cap) {
            f[k].s = start;
            f[k].n = (size_t)(w - start);
        }
        k++;
        int more = p < end;
        if (f) *w = '\0';
        if (!more) break;
        p++;
    }
    *count = k;
    return 0;
}

static int is_blank_record(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!is_blank_char(s[i])) return 0;
    return 1;
}

/* ---- CSV and headerless TSV ------------------------------------------------------- */

typedef struct csv_state {
    sb_io_file io;
    field *fields;
    size_t nfields;      /* fields of every record */
    char **colnames;     /* nfields names (header, or f0.. with "label") */
    int32_t label_field; /* -1: none */
    sb_table t;
    int64_t cap_rows;
} csv_state;

static void csv_state_free(csv_state *c) {
    sb_io_close(&c->io);
    sb_free(c->fields);
    if (c->colnames) {
        for (size_t j = 0; j < c->nfields; j++) sb_free(c->colnames[j]);
        sb_free(c->colnames);
    }
    sb_free(c->t.x);
    sb_free(c->t.label);
    if (c->t.names) sb_free(c->t.names); /* pointers borrowed from colnames */
    memset(c, 0, sizeof *c);
}

/* Split the first record into c->fields (counted first, then split in place). */
static sb_status split_first(csv_state *c, char *rec, size_t len, char sep, int64_t lineno,
                             size_t max_fields) {
    size_t count = 0;
    size_t bad = split_fields(rec, len, sep, NULL, 0, &count);
    if (bad)
        return sb_fail(SB_ERR_INVALID_INPUT,
                       "%s: line %lld, column %zu: text after a closing double quote",
                       c->io.path, (long long)lineno, bad);
    if (count > max_fields)
        return sb_fail(SB_ERR_LIMIT, "%s: line %lld has %zu columns, more than the limit of %d",
                       c->io.path, (long long)lineno, count, (int)g_max_cols);
    c->fields = sb_malloc(count * sizeof *c->fields);
    if (!c->fields) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", c->io.path);
    split_fields(rec, len, sep, c->fields, count, &count);
    c->nfields = count;
    return SB_OK;
}

static int cmp_name_idx(const void *a, const void *b) {
    const char *const *x = a, *const *y = b;
    int c = strcmp(*x, *y);
    if (c) return c;
    return x < y ? -1 : x > y;
}

static sb_status no_label_message(csv_state *c, const char *label) {
    char list[320];
    size_t used = 0;
    list[0] = '\0';
    for (size_t j = 0; j < c->nfields; j++) {
        int w = snprintf(list + used, sizeof list - used, "%s\"%s\"", j ? ", " : "",
                         c->colnames[j]);
        if (w < 0 || (size_t)w >= sizeof list - used) {
            snprintf(list + (used < sizeof list - 5 ? used : sizeof list - 5), 5, ", ..");
            break;
        }
        used += (size_t)w;
    }
    return sb_fail(SB_ERR_INVALID_INPUT, "%s: no label column \"%s\"; the header's %zu columns are: %s",
                   c->io.path, label, c->nfields, list);
}

static sb_status take_header(csv_state *c, const char *label, int64_t lineno) {
    /* Every feature name must be one a model can store: refused here, before
     * any row is read, rather than by the model writer after training. */
    for (size_t j = 0, k = 0; j < c->nfields; j++) {
        if (label && strcmp(c->fields[j].s, label) == 0) continue;
        char where[600];
        snprintf(where, sizeof where, "%.400s: line %lld, column %zu", c->io.path, (long long)lineno, j + 1);
        sb_status st = sb_check_feature_name(c->fields[j].s, c->fields[j].n, where, (int64_t)k++);
        if (st != SB_OK) return st;
    }
    c->colnames = sb_calloc(c->nfields, sizeof *c->colnames);
    if (!c->colnames) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", c->io.path);
    for (size_t j = 0; j < c->nfields; j++) {
        c->colnames[j] = sb_strdup(c->fields[j].s);
        if (!c->colnames[j]) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", c->io.path);
    }
    /* Duplicate names: sort pointers to the names (ties by position). */
    char **sorted = sb_malloc(c->nfields * sizeof *sorted);
    if (!sorted) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", c->io.path);
    memcpy(sorted, c->colnames, c->nfields * sizeof *sorted);
    qsort(sorted, c->nfields, sizeof *sorted, cmp_name_idx);
    for (size_t j = 1; j < c->nfields; j++) {
        if (strcmp(sorted[j - 1], sorted[j]) == 0) {
            size_t a = 0, b = 0;
            for (size_t k = 0; k < c->nfields; k++) {
                if (strcmp(c->colnames[k], sorted[j]) == 0) {
                    if (!a) a = k + 1;
                    else if (!b) b = k + 1;
                }
            }
            sb_status st = sb_fail(SB_ERR_INVALID_INPUT,
                                   "%s: line 1: columns %zu and %zu are both named \"%s\"",
                                   c->io.path, a, b, sorted[j]);
            sb_free(sorted);
            return st;
        }
    }
    sb_free(sorted);
    c->label_field = -1;
    if (label) {
        for (size_t j = 0; j < c->nfields; j++)
            if (strcmp(c->colnames[j], label) == 0) c->label_field = (int32_t)j;
        if (c->label_field < 0) return no_label_message(c, label);
    }
    return SB_OK;
}

static sb_status headerless_names(csv_state *c) {
    c->colnames = sb_calloc(c->nfields, sizeof *c->colnames);
    if (!c->colnames) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", c->io.path);
    int k = 0;
    for (size_t j = 0; j < c->nfields; j++) {
        c->colnames[j] = sb_malloc(16);
        if (!c->colnames[j]) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", c->io.path);
        if ((int32_t)j == c->label_field) snprintf(c->colnames[j], 16, "label");
        else snprintf(c->colnames[j], 16, "f%d", k++);
    }
    return SB_OK;
}

static sb_status grow_rows(csv_state *c) {
    int64_t maxr = g_max_rows;
    if (c->t.nrows >= maxr)
        return sb_fail(SB_ERR_LIMIT, "%s: more than the limit of %lld data rows", c->io.path,
                       (long long)maxr);
    int64_t ncap = c->cap_rows ? c->cap_rows * 2 : 1024;
    if (ncap > maxr) ncap = maxr;
    size_t ncols = (size_t)c->t.ncols;
    if (ncols && (uint64_t)ncap > SIZE_MAX / sizeof(float) / ncols)
        return sb_fail(SB_ERR_LIMIT, "%s: %lld rows of %zu columns do not fit in memory",
                       c->io.path, (long long)ncap, ncols);
    float *nx = sb_realloc(c->t.x, (size_t)ncap * ncols * sizeof(float));
    if (!nx)
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld rows of %zu columns",
                       c->io.path, (long long)ncap, ncols);
    c->t.x = nx;
    if (c->label_field >= 0) {
        float *nl = sb_realloc(c->t.label, (size_t)ncap * sizeof(float));
        if (!nl) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", c->io.path);
        c->t.label = nl;
    }
    c->cap_rows = ncap;
    return SB_OK;
}

/* Parse the fields of one record (already split, count checked) into row nrows. */
static sb_status take_row(csv_state *c, int64_t lineno) {
    if (c->t.nrows == c->cap_rows) {
        sb_status st = grow_rows(c);
        if (st != SB_OK) return st;
    }
    float *row = c->t.x + (size_t)c->t.nrows * (size_t)c->t.ncols;
    size_t k = 0;
    for (size_t j = 0; j < c->nfields; j++) {
        float v;
        int e = sb_io_parse_f32(c->fields[j].s, c->fields[j].n, &v);
        if (e) {
            int text = e == 1;
            return sb_fail(SB_ERR_INVALID_INPUT,
                           "%s: line %lld, column %zu (\"%s\"): %s \"%.48s\"%s", c->io.path,
                           (long long)lineno, j + 1, c->colnames[j],
                           text ? "cannot parse as a number:" : "beyond float32's range:",
                           c->fields[j].s,
                           text && (int32_t)j != c->label_field
                               ? " (every column but the label must be numeric; text and "
                                 "categorical columns are not supported yet)"
                               : "");
        }
        if ((int32_t)j == c->label_field) {
            if (!isfinite(v))
                return sb_fail(SB_ERR_INVALID_INPUT,
                               "%s: line %lld, column %zu (\"%s\"): the label is %s (\"%.48s\"); "
                               "every row needs a finite label",
                               c->io.path, (long long)lineno, j + 1, c->colnames[j],
                               isnan(v) ? "missing" : "infinite", c->fields[j].s);
            c->t.label[c->t.nrows] = v;
        } else {
            row[k++] = v;
        }
    }
    c->t.nrows++;
    return SB_OK;
}

/* Read a delimited file: with a header (label by name) or without (label by
 * position). */
static sb_status read_delimited(const char *path, int header, const char *label,
                                int32_t label_column, sb_table *out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "out must not be NULL");
    memset(out, 0, sizeof *out);
    if (!path) return sb_fail(SB_ERR_INVALID_ARGUMENT, "path must not be NULL");
    if (!header && label_column < -1)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "label_column must be >= -1, got %d",
                       (int)label_column);
    csv_state c;
    memset(&c, 0, sizeof c);
    c.label_field = -1;
    sb_status st = sb_io_open(&c.io, path);
    if (st != SB_OK) return st;

    char *rec;
    size_t len;
    int64_t lineno;
    for (;;) {
        st = sb_io_next_record(&c.io, 1, &rec, &len, &lineno);
        if (st != SB_OK) goto fail;
        if (!rec || !is_blank_record(rec, len)) break;
    }
    if (!rec) {
        st = sb_fail(SB_ERR_INVALID_INPUT, "%s: empty file (no %s)", path,
                     header ? "header" : "data rows");
        goto fail;
    }
    char sep = pick_separator(rec, len);
    int has_label = header ? label != NULL : label_column >= 0;
    st = split_first(&c, rec, len, sep, lineno, (size_t)g_max_cols + (has_label ? 1 : 0));
    if (st != SB_OK) goto fail;
    if (header) {
        st = take_header(&c, label, lineno);
    } else {
        if (label_column >= (int32_t)c.nfields) {
            st = sb_fail(SB_ERR_INVALID_INPUT,
                         "%s: line %lld has %zu columns; no label column %d (0-based)", path,
                         (long long)lineno, c.nfields, (int)label_column);
            goto fail;
        }
        c.label_field = label_column;
        st = headerless_names(&c);
    }
    if (st != SB_OK) goto fail;
    c.t.ncols = (int32_t)(c.nfields - (c.label_field >= 0 ? 1 : 0));
    c.t.has_names = header ? SB_NAMES_HEADER : SB_NAMES_NONE;
    if (c.t.ncols == 0) {
        st = sb_fail(SB_ERR_INVALID_INPUT, "%s: no feature column: the only column is the label (\"%s\")", path,
                     c.colnames[c.label_field]);
        goto fail;
    }
    if (!header) {
        st = take_row(&c, lineno);
        if (st != SB_OK) goto fail;
    }

    for (;;) {
        st = sb_io_next_record(&c.io, 1, &rec, &len, &lineno);
        if (st != SB_OK) goto fail;
        if (!rec) break;
        if (is_blank_record(rec, len)) continue;
        size_t count;
        size_t bad = split_fields(rec, len, sep, c.fields, c.nfields, &count);
        if (bad) {
            st = sb_fail(SB_ERR_INVALID_INPUT,
                         "%s: line %lld, column %zu: text after a closing double quote", path,
                         (long long)lineno, bad);
            goto fail;
        }
        if (count != c.nfields) {
            st = sb_fail(SB_ERR_INVALID_INPUT,
                         "%s: line %lld has %zu columns, expected %zu (as %s); column %zu is "
                         "the first %s",
                         path, (long long)lineno, count, c.nfields,
                         header ? "in the header" : "on the first line",
                         count < c.nfields ? count + 1 : c.nfields + 1,
                         count < c.nfields ? "missing" : "extra");
            goto fail;
        }
        st = take_row(&c, lineno);
        if (st != SB_OK) goto fail;
    }
    if (c.t.nrows == 0) {
        st = sb_fail(SB_ERR_INVALID_INPUT, "%s: no data rows after the header", path);
        goto fail;
    }

    /* Hand over: trim the arrays to size (a failed shrink keeps the larger block),
     * move the feature names out of colnames. */
    size_t cells = (size_t)c.t.nrows * (size_t)c.t.ncols;
    float *nx = sb_realloc(c.t.x, (cells ? cells : 1) * sizeof(float));
    if (nx) c.t.x = nx;
    if (c.t.label) {
        float *nl = sb_realloc(c.t.label, (size_t)c.t.nrows * sizeof(float));
        if (nl) c.t.label = nl;
    }
    c.t.names = sb_calloc((size_t)(c.t.ncols ? c.t.ncols : 1), sizeof *c.t.names);
    if (!c.t.names) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
        goto fail;
    }
    size_t k = 0;
    for (size_t j = 0; j < c.nfields; j++) {
        if ((int32_t)j == c.label_field) continue;
        c.t.names[k++] = c.colnames[j];
        c.colnames[j] = NULL;
    }
    *out = c.t;
    c.t.x = NULL;
    c.t.label = NULL;
    c.t.names = NULL;
    csv_state_free(&c);
    return SB_OK;

fail:
    csv_state_free(&c);
    memset(out, 0, sizeof *out);
    return st;
}

sb_status sb_read_csv(const char *path, const char *label, sb_table *out) {
    return read_delimited(path, 1, label, -1, out);
}

sb_status sb_read_tsv_noheader(const char *path, int32_t label_column, sb_table *out) {
    return read_delimited(path, 0, NULL, label_column, out);
}

/* ---- format detection ------------------------------------------------------------- */

static int all_digits(const char *s, size_t n) {
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return 1;
}

/* Whether rec looks like a LibSVM line: a number, then tokens "qid:D" or "D:..."
 * (D digits), at least one of them; a '#' ends the line. */
static int looks_libsvm(char *rec, size_t len) {
    char *hash = memchr(rec, '#', len);
    if (hash) len = (size_t)(hash - rec);
    size_t i = 0, ntok = 0, npairs = 0;
    while (i < len) {
        while (i < len && is_blank_char(rec[i])) i++;
        if (i >= len) break;
        size_t b = i;
        while (i < len && !is_blank_char(rec[i])) i++;
        size_t n = i - b;
        if (ntok == 0) {
            float v;
            if (sb_io_is_missing(rec + b, n) || sb_io_parse_f32(rec + b, n, &v) != 0) return 0;
        } else {
            char *colon = memchr(rec + b, ':', n);
            if (!colon) return 0;
            size_t klen = (size_t)(colon - (rec + b));
            if (!(all_digits(rec + b, klen) || (klen == 3 && memcmp(rec + b, "qid", 3) == 0)))
                return 0;
            npairs++;
        }
        ntok++;
    }
    return npairs > 0;
}

sb_status sb_detect_format(const char *path, const char **format) {
    sb_clear_error();
    if (!format) return sb_fail(SB_ERR_INVALID_ARGUMENT, "format must not be NULL");
    *format = NULL;
    if (!path) return sb_fail(SB_ERR_INVALID_ARGUMENT, "path must not be NULL");
    sb_io_file io;
    sb_status st = sb_io_open(&io, path);
    if (st != SB_OK) return st;
    char *rec;
    size_t len;
    int64_t lineno;
    int comments = 0; /* lines starting with '#' skipped before the first other one */
    for (;;) {
        st = sb_io_next_record(&io, 0, &rec, &len, &lineno);
        if (st != SB_OK || !rec) break;
        size_t i = 0;
        while (i < len && is_blank_char(rec[i])) i++;
        if (i < len && rec[i] == '#') comments++;
        else if (i < len) break;
    }
    if (st == SB_OK && !rec)
        st = sb_fail(SB_ERR_INVALID_INPUT, "%s: empty file%s", path,
                     comments ? " (only comment lines)" : "");
    if (st != SB_OK) {
        sb_io_close(&io);
        return st;
    }
    if (looks_libsvm(rec, len)) {
        *format = "libsvm";
    } else if (comments) {
        *format = "csv"; /* the '#' line was a header (CSV has no comments) */
    } else {
        /* Numbers only (quotes allowed): a headerless table. */
        char sep = pick_separator(rec, len);
        int numeric = 1, any_value = 0;
        char *p = rec, *end = rec + len;
        for (;;) {
            char *s = memchr(p, sep, (size_t)(end - p));
            size_t n = (size_t)((s ? s : end) - p);
            char *f = p;
            if (n >= 2 && f[0] == '"' && f[n - 1] == '"') f++, n -= 2;
            float v;
            char saved = f[n];
            if (sb_io_parse_f32(f, n, &v) != 0) numeric = 0;
            else if (!sb_io_is_missing(f, n)) any_value = 1;
            f[n] = saved;
            if (!numeric || !s) break;
            p = s + 1;
        }
        *format = numeric && any_value ? "tsv-noheader" : "csv";
    }
    sb_io_close(&io);
    return SB_OK;
}
