/*
 * gp_cli.c: gaussian process regression from the command line
 * (docs/gaussian-process.md, "Command line"). `samebits train --model gp`
 * fits a CSV's rows (a header line naming the columns; the target is --label
 * NAME, by default the last column; every other column a feature) and writes
 * the model file; `samebits predict` on a gp model writes each row's
 * predictive mean, and with --std its standard deviation beside it.
 *
 * The reader is this family's own: the float32 tables of the other families
 * cannot hold float64 values, and this family is float64. Fields are read by
 * strtod (correctly rounded to float64); a quoted, empty or non-numeric field
 * is refused by name with its line.
 */
#include "gp_cli.h"
#include "cli_csv.h"
#include "cli_fail.h"
#include "samebits_cert.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_ERROR 2
#define GP_USAGE "train --model gp --data FILE --out MODEL [--label NAME] [--kernel SPEC] [--card CARD] [key=value ...]"

void csv_free(csv *c) {
    for (int64_t i = 0; i < c->ncols; i++) free(c->names[i]);
    free(c->names);
    free(c->v);
    memset(c, 0, sizeof *c);
}

/* Read a whole line into *buf (grown); 0 at end of file. */
static int read_line(FILE *f, char **buf, size_t *cap) {
    size_t n = 0;
    int ch;
    while ((ch = fgetc(f)) != EOF && ch != '\n') {
        if (n + 2 > *cap) {
            size_t nc = *cap ? *cap * 2 : 256;
            char *b = realloc(*buf, nc);
            if (!b) return -1;
            *buf = b, *cap = nc;
        }
        (*buf)[n++] = (char)ch;
    }
    if (ch == EOF && n == 0) return 0;
    if (!*buf) {
        *buf = malloc(1);
        if (!*buf) return -1;
        *cap = 1;
    }
    if (n && (*buf)[n - 1] == '\r') n--;
    (*buf)[n] = 0;
    return 1;
}

int csv_read(const char *path, csv *c) {
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "r");
    if (!f) return fail("error: cannot open '%s'", path);
    char *line = NULL;
    size_t cap = 0;
    int rc = EXIT_ERROR, r = read_line(f, &line, &cap);
    int64_t vcap = 0, lineno = 1;
    if (r <= 0) {
        fail("error: '%s' has no header line", path);
        goto done;
    }
    for (char *p = line;; p++) { /* the header: names separated by commas */
        char *e = strchr(p, ',');
        const size_t len = e ? (size_t)(e - p) : strlen(p);
        char **nn = realloc(c->names, sizeof(char *) * (size_t)(c->ncols + 1));
        if (!nn) goto oom;
        c->names = nn;
        if (!(c->names[c->ncols] = malloc(len + 1))) goto oom;
        memcpy(c->names[c->ncols], p, len);
        c->names[c->ncols++][len] = 0;
        if (!e) break;
        p = e;
    }
    while ((r = read_line(f, &line, &cap)) > 0) {
        lineno++;
        if (!line[0]) continue;
        if ((c->nrows + 1) * c->ncols > vcap) {
            const int64_t nc = vcap ? vcap * 2 : 1024 * c->ncols;
            double *nv = realloc(c->v, sizeof(double) * (size_t)nc);
            if (!nv) goto oom;
            c->v = nv, vcap = nc;
        }
        char *p = line;
        for (int64_t j = 0; j < c->ncols; j++) {
            char *end;
            const double x = strtod(p, &end);
            if (end == p || (*end != ',' && *end != 0) || (*end == ',' && j == c->ncols - 1) ||
                (*end == 0 && j < c->ncols - 1)) {
                fprintf(stderr, "samebits: error: '%s' line %lld column %lld: not a number, or %lld fields expected "
                        "(quoted, empty and missing fields are refused)\n", path, (long long)lineno, (long long)j + 1,
                        (long long)c->ncols);
                goto done;
            }
            c->v[c->nrows * c->ncols + j] = x;
            p = *end ? end + 1 : end;
        }
        c->nrows++;
    }
    if (r < 0) goto oom;
    rc = 0;
    goto done;
oom:
    fail("error: out of memory reading '%s'", path);
done:
    free(line);
    fclose(f);
    if (rc) csv_free(c);
    return rc;
}

int csv_split_label(const csv *c, const char *data, const char *label, int f32, void **X, void **y, int64_t *d) {
    *X = *y = NULL;
    *d = c->ncols - 1;
    int64_t lab = c->ncols - 1;
    if (label) {
        lab = -1;
        for (int64_t j = 0; j < c->ncols; j++)
            if (!strcmp(c->names[j], label)) lab = j;
    }
    if (lab < 0) return fail("error: no column '%s' in the data", label);
    if (c->ncols < 2 || c->nrows < 1) return fail("error: '%s' needs a feature column, the label and a row", data);
    const size_t w = f32 ? sizeof(float) : sizeof(double);
    if (!(*X = malloc(w * (size_t)(c->nrows * (c->ncols - 1)))) || !(*y = malloc(w * (size_t)c->nrows))) {
        free(*X);
        *X = NULL;
        return fail("error: out of memory for '%s'", data);
    }
    float *Xf = *X, *yf = *y;
    double *Xd = *X, *yd = *y;
    for (int64_t i = 0; i < c->nrows; i++)
        for (int64_t j = 0, k = 0; j < c->ncols; j++) {
            const double v = c->v[i * c->ncols + j];
            if (j == lab) {
                if (f32) yf[i] = (float)v;
                else yd[i] = v;
            } else if (f32)
                Xf[i * *d + k++] = (float)v;
            else
                Xd[i * *d + k++] = v;
        }
    return 0;
}

int csv_check_predict(const csv *c, const char *data, int64_t d) {
    if (c->ncols != d && c->ncols != d + 1) {
        fprintf(stderr, "samebits: error: '%s' has %lld columns; the model has %lld features\n", data,
                (long long)c->ncols, (long long)d);
        return EXIT_ERROR;
    }
    if (c->nrows < 1) return fail("error: '%s' has no rows", data);
    return 0;
}

void *csv_features(const csv *c, int64_t d, int f32) {
    void *X = malloc((f32 ? sizeof(float) : sizeof(double)) * (size_t)(c->nrows * d));
    if (!X) return NULL;
    float *Xf = X;
    double *Xd = X;
    for (int64_t i = 0; i < c->nrows; i++)
        for (int64_t j = 0; j < d; j++) {
            if (f32) Xf[i * d + j] = (float)c->v[i * c->ncols + j];
            else Xd[i * d + j] = c->v[i * c->ncols + j];
        }
    return X;
}

FILE *csv_out_open(const char *out) { return strcmp(out, "-") ? fopen(out, "w") : stdout; }

int csv_out_close(FILE *f, const char *out, int bad) {
    if (f != stdout) bad |= fclose(f) != 0;
    else bad |= fflush(f) != 0;
    return bad ? fail("error: writing '%s' failed", out) : 0;
}

int cli_train_args(int argc, char **argv, sb_params *params, const char *usage, const char *model, const char **data,
                   const char **out, const char **label, const char **kernel, const char **card) {
    sb_status st;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const int has = i + 1 < argc;
        if (!strcmp(a, "--model") && has) i++;
        else if (!strcmp(a, "--data") && has) *data = argv[++i];
        else if (!strcmp(a, "--out") && has) *out = argv[++i];
        else if (!strcmp(a, "--label") && has) *label = argv[++i];
        else if (kernel && !strcmp(a, "--kernel") && has) *kernel = argv[++i];
        else if (!strcmp(a, "--card") && has) *card = argv[++i];
        else if (!strcmp(a, "--threads") && has) {
            char *end;
            const long t = strtol(argv[++i], &end, 10);
            if (*end || t < 1 || sb_set_num_threads((int32_t)t) != SB_OK) {
                sb_params_free(params);
                return fail("train: --threads '%s' must be a whole number >= 1", argv[i]);
            }
        } else if (a[0] != '-' && strchr(a, '=')) {
            if ((st = sb_params_parse(params, a)) != SB_OK) {
                sb_params_free(params);
                return lib_fail(st);
            }
        } else {
            sb_params_free(params);
            fprintf(stderr, "samebits: train: unexpected argument '%s' (usage: %s)\n", a, usage);
            return EXIT_ERROR;
        }
    }
    if (!*data || !*out) {
        sb_params_free(params);
        return fail("train: --model %s needs --data FILE and --out MODEL", model);
    }
    return 0;
}

int sb_cli_train_gp(int argc, char **argv) {
    const char *data = NULL, *out = NULL, *label = NULL, *kernel = "ConstantKernel() * RBF()",
               *card_path = NULL;
    sb_params *params = NULL;
    sb_status st = sb_params_create(&params);
    if (st != SB_OK) return lib_fail(st);
    int rc = EXIT_ERROR;
    if ((rc = cli_train_args(argc, argv, params, GP_USAGE, "gp", &data, &out, &label, &kernel, &card_path)))
        return rc;
    csv c;
    if (csv_read(data, &c)) {
        sb_params_free(params);
        return EXIT_ERROR;
    }
    void *Xv = NULL, *yv = NULL;
    int64_t d = 0;
    sb_card *card = NULL;
    sb_gp *g = NULL;
    if ((rc = csv_split_label(&c, data, label, 0, &Xv, &yv, &d)) == 0) {
        const double *X = Xv, *y = yv;
        st = card_path ? sb_card_create(&card) : SB_OK;
        if (st == SB_OK) st = sb_gp_fit(kernel, params, X, c.nrows, d, y, 1, card, &g);
        if (st == SB_OK) st = sb_gp_save(g, out);
        if (st == SB_OK && card) st = sb_card_save(card, card_path);
        if (st == SB_OK) {
            size_t need = 0;
            char *spec = NULL;
            double lml = 0.0;
            if (sb_gp_kernel_spec(g, NULL, 0, &need) == SB_OK && (spec = malloc(need)) &&
                sb_gp_kernel_spec(g, spec, need, &need) == SB_OK &&
                sb_gp_log_marginal_likelihood(g, NULL, 0, &lml, NULL) == SB_OK)
                fprintf(stderr, "gp: %lld rows, %lld features; kernel_ %s; log marginal likelihood %.17g\n",
                        (long long)c.nrows, (long long)d, spec, lml);
            free(spec);
            rc = 0;
        } else
            rc = lib_fail(st);
    }
    sb_card_free(card);
    sb_gp_free(g);
    free(Xv), free(yv);
    csv_free(&c);
    sb_params_free(params);
    return rc;
}

int sb_cli_predict_gp(sb_gp *g, const char *data, const char *out, int with_std) {
    int64_t d = 0;
    sb_status st = sb_gp_get_int(g, "n_features_in_", &d);
    if (st != SB_OK) return lib_fail(st);
    csv c;
    if (csv_read(data, &c)) return EXIT_ERROR;
    int rc = EXIT_ERROR;
    double *X = NULL, *mean = NULL, *sd = NULL;
    if (csv_check_predict(&c, data, d)) {
        csv_free(&c);
        return EXIT_ERROR;
    }
    X = csv_features(&c, d, 0);
    mean = malloc(sizeof(double) * (size_t)c.nrows);
    sd = malloc(sizeof(double) * (size_t)c.nrows);
    if (!X || !mean || !sd) rc = fail("error: out of memory for '%s'", data);
    else {
        st = sb_gp_predict(g, X, c.nrows, d, mean, with_std ? sd : NULL, NULL);
        if (st != SB_OK) rc = lib_fail(st);
        else {
            FILE *f = csv_out_open(out);
            if (!f) rc = fail("error: cannot write '%s'", out);
            else {
                int bad = 0;
                for (int64_t i = 0; i < c.nrows; i++)
                    bad |= (with_std ? fprintf(f, "%.17g,%.17g\n", mean[i], sd[i]) : fprintf(f, "%.17g\n", mean[i])) < 0;
                rc = csv_out_close(f, out, bad);
            }
        }
    }
    free(X), free(mean), free(sd);
    csv_free(&c);
    return rc;
}
