/*
 * ets_cli.c: exponential smoothing from the command line (docs/timeseries.md,
 * "Command line"): `samebits train --model ets` fits every series of a
 * long-format CSV (statsforecast's layout: an id, a time and a target column)
 * and writes the batch's model file; `samebits forecast` writes each series'
 * next h values, from a model file or fitting the data first.
 *
 * The reader is the long format's own: the float32 tables of the other
 * families cannot hold ids, and series are float64 here. A header line names
 * the columns, fields are separated by commas, a quoted field is refused by
 * name; rows go to their id's series in the order ids first appear, each
 * series ordered by its time column (numbers by value when every stamp of it
 * is a number, else by the text: ISO dates sort so), a repeated stamp in a
 * series refused. The target is read by strtod (correctly rounded to
 * float64); an empty field, NA or NaN is a missing value, which the library
 * refuses by name.
 *
 * ARIMA (--model arima, or model=arima with forecast --data) shares the reader
 * and the commands; its forecasts carry the 1 - alpha prediction interval
 * (--alpha, 0.05 by default) in two more columns, lower and upper.
 */
#include "ets_cli.h"
#include "cli_fail.h"
#include "samebits_cert.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define EXIT_ERROR 2

typedef struct row {
    int64_t series, line;
    double t_num, y;
    char *t_text;
} row;

typedef struct table {
    row *rows;
    int64_t n, cap;
    char **ids;
    int64_t nids, idcap;
} table;

static void table_free(table *t) {
    for (int64_t i = 0; i < t->n; i++) free(t->rows[i].t_text);
    for (int64_t i = 0; i < t->nids; i++) free(t->ids[i]);
    free(t->rows);
    free(t->ids);
}

/* The index of id among the ids seen (a linear scan from the last one
 * found: long-format files hold each series' rows together), added if new. */
static int64_t id_index(table *t, const char *id, int64_t *hint) {
    if (*hint >= 0 && *hint < t->nids && !strcmp(t->ids[*hint], id)) return *hint;
    for (int64_t i = 0; i < t->nids; i++)
        if (!strcmp(t->ids[i], id)) return *hint = i;
    if (t->nids == t->idcap) {
        int64_t c = t->idcap ? 2 * t->idcap : 64;
        char **p = realloc(t->ids, sizeof *p * (size_t)c);
        if (!p) return -1;
        t->ids = p, t->idcap = c;
    }
    if (!(t->ids[t->nids] = strdup(id))) return -1;
    return *hint = t->nids++;
}

/* Split line at commas into at most cap fields (in place); the count. */
static int split(char *line, char **f, int cap) {
    int n = 0;
    char *p = line;
    for (;;) {
        if (n < cap) f[n] = p;
        n++;
        char *c = strchr(p, ',');
        if (!c) break;
        *c = '\0';
        p = c + 1;
    }
    return n;
}

static int read_table(const char *path, const char *idc, const char *tc, const char *yc, table *t) {
    FILE *fp = strcmp(path, "-") ? fopen(path, "r") : stdin;
    if (!fp) return fail("cannot open '%s'", path);
    char *line = NULL, *f[256];
    size_t lcap = 0;
    ssize_t len;
    int64_t lineno = 0, hint = -1;
    int ci = -1, ct = -1, cy = -1, ncol = 0, rc = 0;
    while ((len = getline(&line, &lcap, fp)) >= 0 && rc == 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (strchr(line, '"')) {
            fprintf(stderr, "samebits: %s line %lld: a quoted field; this reader takes plain comma-separated fields\n",
                    path, (long long)lineno);
            rc = EXIT_ERROR;
            break;
        }
        if (lineno == 1) {
            ncol = split(line, f, 256);
            if (ncol > 256) { rc = fail("'%s': more than 256 columns", path); break; }
            for (int j = 0; j < ncol; j++) {
                if (!strcmp(f[j], idc)) ci = j;
                if (!strcmp(f[j], tc)) ct = j;
                if (!strcmp(f[j], yc)) cy = j;
            }
            const char *miss = ci < 0 ? idc : ct < 0 ? tc : cy < 0 ? yc : NULL;
            if (miss) {
                fprintf(stderr, "samebits: %s has no column '%s' in its header\n", path, miss);
                rc = EXIT_ERROR;
            }
            continue;
        }
        if (len == 0) continue;
        if (split(line, f, 256) != ncol) {
            fprintf(stderr, "samebits: %s line %lld has another field count than the header's %d\n", path,
                    (long long)lineno, ncol);
            rc = EXIT_ERROR;
            break;
        }
        if (t->n == t->cap) {
            int64_t c = t->cap ? 2 * t->cap : 4096;
            row *p = realloc(t->rows, sizeof *p * (size_t)c);
            if (!p) { rc = fail("out of memory reading '%s'", path); break; }
            t->rows = p, t->cap = c;
        }
        row *r = &t->rows[t->n];
        memset(r, 0, sizeof *r);
        r->line = lineno;
        if ((r->series = id_index(t, f[ci], &hint)) < 0) { rc = fail("out of memory reading '%s'", path); break; }
        if (!(r->t_text = strdup(f[ct]))) { rc = fail("out of memory reading '%s'", path); break; }
        char *end;
        r->t_num = strtod(f[ct], &end);
        if (end == f[ct] || *end) r->t_num = NAN;
        const char *v = f[cy];
        if (!*v || !strcasecmp(v, "na") || !strcasecmp(v, "nan")) r->y = NAN;
        else {
            r->y = strtod(v, &end);
            if (end == v || *end) {
                fprintf(stderr, "samebits: %s line %lld: %s='%s' is not a number\n", path, (long long)lineno, yc, v);
                rc = EXIT_ERROR;
            }
        }
        t->n++;
    }
    free(line);
    if (fp != stdin) fclose(fp);
    if (rc == 0 && lineno < 1) rc = fail("'%s' is empty (no header)", path);
    if (rc == 0 && t->n == 0) rc = fail("'%s' has a header and no rows", path);
    return rc;
}

static int g_numeric; /* qsort's context: every stamp a number (the CLI sorts once, on one thread) */

/* Rows by (series, time): the series' first appearance, then its stamps by
 * value or by text (ties: the line). */
static int row_cmp(const void *a, const void *b) {
    const row *x = a, *y = b;
    if (x->series != y->series) return x->series < y->series ? -1 : 1;
    int c = g_numeric ? (x->t_num < y->t_num ? -1 : x->t_num > y->t_num) : strcmp(x->t_text, y->t_text);
    return c ? c : (x->line < y->line ? -1 : x->line > y->line);
}

/* The batch: y in series order, offsets (nids + 1). */
static int make_batch(table *t, const char *path, double **y, int64_t **off) {
    g_numeric = 1;
    for (int64_t i = 0; i < t->n; i++) g_numeric &= t->rows[i].t_num == t->rows[i].t_num;
    qsort(t->rows, (size_t)t->n, sizeof(row), row_cmp);
    *y = malloc(sizeof(double) * (size_t)t->n);
    *off = calloc((size_t)t->nids + 1, sizeof(int64_t));
    if (!*y || !*off) return fail("out of memory for '%s'", path);
    for (int64_t i = 0; i < t->n; i++) {
        const row *r = &t->rows[i];
        const row *q = i > 0 ? &t->rows[i - 1] : NULL;
        if (q && q->series == r->series && (g_numeric ? q->t_num == r->t_num : !strcmp(q->t_text, r->t_text))) {
            fprintf(stderr, "samebits: %s line %lld: series '%s' has the stamp '%s' twice\n", path, (long long)r->line,
                    t->ids[r->series], r->t_text);
            return EXIT_ERROR;
        }
        (*y)[i] = r->y;
        (*off)[r->series + 1]++;
    }
    for (int64_t s = 0; s < t->nids; s++) (*off)[s + 1] += (*off)[s];
    return 0;
}

/* Fit the long-format file's series with params; the ids stay in t. */
/* A fitted batch of either family. */
typedef struct batch {
    int arima;
    sb_ets *ets;
    sb_arima *ar;
} batch;

static void batch_free(batch *b) {
    sb_ets_free(b->ets);
    sb_arima_free(b->ar);
}

static int fit_file(const char *path, const char *idc, const char *tc, const char *yc, const sb_params *params,
                    sb_card *card, table *t, batch *out) {
    double *y = NULL;
    int64_t *off = NULL;
    int rc = read_table(path, idc, tc, yc, t);
    if (rc == 0) rc = make_batch(t, path, &y, &off);
    if (rc == 0) {
        sb_status st = out->arima ? sb_arima_fit(params, y, off, t->nids, card, &out->ar)
                                  : sb_ets_fit(params, y, off, t->nids, card, &out->ets);
        if (st != SB_OK) {
            /* name the series by its id as well as its index */
            const char *msg = sb_last_error();
            long long s = -1;
            if (sscanf(msg, "series %lld", &s) == 1 && s >= 0 && s < t->nids)
                fprintf(stderr, "samebits: error: %s: %s (%s '%s')\n", sb_status_name(st), msg, idc, t->ids[s]);
            else lib_fail(st);
            rc = EXIT_ERROR;
        }
    }
    free(y);
    free(off);
    return rc;
}

/* The shared options; 0, or the exit status of bad usage. */
typedef struct opts {
    const char *data, *model, *out, *card, *idc, *tc, *yc;
    int32_t h;
    double alpha;
    sb_params *params;
} opts;

static int parse_opts(int argc, char **argv, opts *o, int forecast) {
    o->idc = "unique_id", o->tc = "ds", o->yc = "y", o->h = 0, o->alpha = 0.05;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--data") && v) o->data = v, i++;
        else if (!strcmp(a, "--model") && v) o->model = v, i++;
        else if (!strcmp(a, "--out") && v) o->out = v, i++;
        else if (!strcmp(a, "--card") && v && !forecast) o->card = v, i++;
        else if (!strcmp(a, "--id") && v) o->idc = v, i++;
        else if (!strcmp(a, "--time") && v) o->tc = v, i++;
        else if (!strcmp(a, "--target") && v) o->yc = v, i++;
        else if (!strcmp(a, "--threads") && v) {
            int32_t n;
            sb_status st = sb_parse_num_threads(v, "--threads", &n);
            if (st == SB_OK) st = sb_set_num_threads(n);
            if (st != SB_OK) return lib_fail(st);
            i++;
        } else if (!strcmp(a, "--h") && v && forecast) {
            char *end;
            long h = strtol(v, &end, 10);
            if (end == v || *end || h < 1 || h > 1000000) return fail("--h '%s' must be a whole number in 1..1000000", v);
            o->h = (int32_t)h, i++;
        } else if (!strcmp(a, "--alpha") && v && forecast) {
            char *end;
            const double al = strtod(v, &end);
            if (end == v || *end || !(al > 0.0 && al < 1.0)) return fail("--alpha '%s' must be a number in (0, 1)", v);
            o->alpha = al, i++;
        } else if (a[0] != '-' && strchr(a, '=')) {
            sb_status st = sb_params_parse(o->params, a);
            if (st != SB_OK) return lib_fail(st);
        } else
            return fail("unknown or incomplete option '%s' (docs/timeseries.md, \"Command line\")", a);
    }
    return 0;
}

int sb_cli_train_ets(int argc, char **argv) {
    opts o = {0};
    sb_status st = sb_params_create(&o.params);
    if (st != SB_OK) return lib_fail(st);
    table t = {0};
    batch b = {0};
    sb_card *card = NULL;
    int rc = parse_opts(argc, argv, &o, 0);
    b.arima = o.model && !strcmp(o.model, "arima");
    const char *fam = b.arima ? "arima" : "ets";
    if (rc == 0 && (!o.data || !o.out)) rc = fail("train --model %s: --data and --out are required", fam);
    if (rc == 0 && o.model && strcmp(o.model, "ets") && strcmp(o.model, "arima"))
        rc = fail("train: --model '%s' is not ets or arima", o.model);
    if (rc == 0 && o.card && (st = sb_card_create(&card)) != SB_OK) rc = lib_fail(st);
    if (rc == 0) rc = fit_file(o.data, o.idc, o.tc, o.yc, o.params, card, &t, &b);
    if (rc == 0 && (st = b.arima ? sb_arima_save(b.ar, o.out) : sb_ets_save(b.ets, o.out)) != SB_OK) rc = lib_fail(st);
    if (rc == 0 && card && (st = sb_card_save(card, o.card)) != SB_OK) rc = lib_fail(st);
    if (rc == 0) {
        char hex[65];
        if ((st = b.arima ? sb_arima_model_digest(b.ar, hex) : sb_ets_model_digest(b.ets, hex)) != SB_OK)
            rc = lib_fail(st);
        else fprintf(stderr, "samebits: %s fitted %lld series; model digest: %s\n", fam, (long long)t.nids, hex);
        for (int64_t s = 0; rc == 0 && b.arima && s < t.nids; s++) {
            int64_t conv = 1, nit = 0;
            sb_arima_get_int(b.ar, s, "converged", &conv);
            sb_arima_get_int(b.ar, s, "nit", &nit);
            if (!conv)
                fprintf(stderr, "samebits: warning: series '%s': the optimizer stopped at its iteration cap (%lld "
                        "iterations) before its tolerances\n", t.ids[s], (long long)nit);
        }
    }
    batch_free(&b);
    sb_card_free(card);
    sb_params_free(o.params);
    table_free(&t);
    return rc;
}

/* Load a model file of either series family into b (by its family). */
static int load_batch(const char *path, batch *b) {
    sb_model *m = NULL;
    sb_model_info info;
    sb_status st = sb_model_load(path, &m);
    if (st == SB_OK) st = sb_model_get_info(m, &info);
    sb_model_free(m);
    if (st != SB_OK) return lib_fail(st);
    b->arima = info.family == SB_FAMILY_ARIMA;
    st = b->arima ? sb_arima_load(path, &b->ar) : sb_ets_load(path, &b->ets);
    return st == SB_OK ? 0 : lib_fail(st);
}

int sb_cli_forecast(int argc, char **argv) {
    opts o = {0};
    sb_status st = sb_params_create(&o.params);
    if (st != SB_OK) return lib_fail(st);
    table t = {0};
    batch b = {0};
    int rc = parse_opts(argc, argv, &o, 1);
    const char *mv = NULL;
    if (rc == 0 && o.data && sb_params_get(o.params, "model", &mv) == SB_OK) b.arima = !strcmp(mv, "arima");
    if (rc == 0 && !o.h) rc = fail("%s", "forecast: --h H is required");
    if (rc == 0 && !!o.model == !!o.data)
        rc = fail("%s", "forecast: give --model MODEL (a fitted batch) or --data FILE (fit, then forecast), not both");
    if (rc == 0 && o.model) rc = load_batch(o.model, &b);
    if (rc == 0 && o.data) rc = fit_file(o.data, o.idc, o.tc, o.yc, o.params, NULL, &t, &b);
    if (rc == 0 && o.h > 100000 && b.arima) rc = fail("%s", "forecast: --h above 100000: ARIMA forecasts at most 100000 steps");
    FILE *out = NULL;
    if (rc == 0) {
        out = !o.out || !strcmp(o.out, "-") ? stdout : fopen(o.out, "w");
        if (!out) rc = fail("cannot write '%s'", o.out);
    }
    double *fc = rc == 0 ? malloc(sizeof(double) * 3 * (size_t)o.h) : NULL;
    if (rc == 0 && !fc) rc = fail("%s", "out of memory for the forecasts");
    if (rc == 0) {
        int64_t ns = 0;
        if (b.arima) sb_arima_nseries(b.ar, &ns);
        else sb_ets_nseries(b.ets, &ns);
        fprintf(out, "%s,step,forecast%s\n", o.data ? o.idc : "series", b.arima ? ",lower,upper" : "");
        for (int64_t s = 0; s < ns && rc == 0; s++) {
            st = b.arima ? sb_arima_forecast(b.ar, s, o.h, o.alpha, fc, NULL, fc + o.h, fc + 2 * o.h)
                         : sb_ets_forecast(b.ets, s, o.h, fc);
            if (st != SB_OK) rc = lib_fail(st);
            for (int32_t j = 0; rc == 0 && j < o.h; j++) {
                /* %.17g: enough digits to read back the same double */
                if (o.data) fprintf(out, "%s,%d,%.17g", t.ids[s], (int)j + 1, fc[j]);
                else fprintf(out, "%lld,%d,%.17g", (long long)s, (int)j + 1, fc[j]);
                if (b.arima) fprintf(out, ",%.17g,%.17g", fc[o.h + j], fc[2 * o.h + j]);
                fputc('\n', out);
            }
        }
    }
    if (out && out != stdout && fclose(out) != 0 && rc == 0) rc = fail("cannot write '%s'", o.out);
    free(fc);
    batch_free(&b);
    sb_params_free(o.params);
    table_free(&t);
    return rc;
}
