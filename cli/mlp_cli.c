/*
 * mlp_cli.c: the multi-layer perceptrons from the command line (docs/mlp.md,
 * "Command line"). `samebits train --model mlp` fits a CSV's rows (a header
 * naming the columns; the target is --label NAME, by default the last column:
 * with task=classifier class codes 0..K-1, with task=regressor values; every
 * other column a feature) and writes the model file; `samebits predict` on an
 * mlp model writes each row's class code or value, with --proba a
 * classifier's probabilities. Fields are read by strtod and rounded once to
 * float32 (round to nearest, ties to even: C's conversion).
 */
#include "mlp_cli.h"
#include "cli_csv.h"
#include "cli_fail.h"
#include "samebits_cert.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_ERROR 2
#define MLP_USAGE \
    "train --model mlp --data FILE --out MODEL [--label NAME] [--card CARD] task=classifier|regressor [key=value ...]"

int sb_cli_train_mlp(int argc, char **argv) {
    const char *data = NULL, *out = NULL, *label = NULL, *card_path = NULL;
    sb_params *params = NULL;
    sb_status st = sb_params_create(&params);
    if (st != SB_OK) return lib_fail(st);
    int rc = EXIT_ERROR;
    if ((rc = cli_train_args(argc, argv, params, MLP_USAGE, "mlp", &data, &out, &label, NULL, &card_path)))
        return rc;
    csv c;
    if (csv_read(data, &c)) {
        sb_params_free(params);
        return EXIT_ERROR;
    }
    void *Xv = NULL, *yv = NULL;
    int64_t d = 0;
    sb_card *card = NULL;
    sb_mlp *net = NULL;
    if ((rc = csv_split_label(&c, data, label, 1, &Xv, &yv, &d)) == 0) {
        const float *X = Xv, *y = yv;
        st = card_path ? sb_card_create(&card) : SB_OK;
        if (st == SB_OK) st = sb_mlp_fit(params, X, c.nrows, d, y, 1, card, &net);
        if (st == SB_OK) st = sb_mlp_save(net, out);
        if (st == SB_OK && card) st = sb_card_save(card, card_path);
        if (st == SB_OK) {
            int64_t it = 0;
            double loss = 0.0;
            size_t one = 0;
            if (sb_mlp_get_int(net, "n_iter_", &it) == SB_OK && sb_mlp_get_f64(net, "loss_", &loss, 1, &one) == SB_OK)
                fprintf(stderr, "mlp: %lld rows, %lld features; %lld epochs, loss_ %.17g\n", (long long)c.nrows,
                        (long long)d, (long long)it, loss);
            rc = 0;
        } else
            rc = lib_fail(st);
    }
    sb_card_free(card);
    sb_mlp_free(net);
    free(Xv), free(yv);
    csv_free(&c);
    sb_params_free(params);
    return rc;
}

int sb_cli_predict_mlp(sb_mlp *net, const char *data, const char *out, int proba) {
    int64_t d = 0, cls = 0, k = 0, multi = 0;
    sb_status st = sb_mlp_get_int(net, "n_features_in_", &d);
    if (st == SB_OK) st = sb_mlp_get_int(net, "classifier", &cls);
    if (st == SB_OK) st = sb_mlp_get_int(net, "n_classes", &k);
    if (st == SB_OK) st = sb_mlp_get_int(net, "multilabel", &multi);
    int64_t width = 0;
    if (st == SB_OK) st = sb_mlp_get_int(net, "n_outputs_", &width);
    if (st != SB_OK) return lib_fail(st);
    if (proba && !cls) return fail("predict: --proba is for an MLPClassifier; this model is a regressor%s", "");
    if (cls && !multi) width = proba ? k : 1;
    csv c;
    if (csv_read(data, &c)) return EXIT_ERROR;
    int rc = EXIT_ERROR;
    if (csv_check_predict(&c, data, d)) {
        csv_free(&c);
        return EXIT_ERROR;
    }
    float *X = csv_features(&c, d, 1), *P = malloc(sizeof(float) * (size_t)(c.nrows * width));
    if (!X || !P) rc = fail("error: out of memory for '%s'", data);
    else {
        st = proba ? sb_mlp_predict_proba(net, X, c.nrows, d, P) : sb_mlp_predict(net, X, c.nrows, d, P);
        if (st != SB_OK) rc = lib_fail(st);
        else {
            FILE *f = csv_out_open(out);
            if (!f) rc = fail("error: cannot write '%s'", out);
            else {
                int bad = 0;
                for (int64_t i = 0; i < c.nrows; i++)
                    for (int64_t j = 0; j < width; j++)
                        bad |= fprintf(f, cls && !proba ? "%.0f%c" : "%.9g%c", (double)P[i * width + j],
                                       j + 1 < width ? ',' : '\n') < 0;
                rc = csv_out_close(f, out, bad);
            }
        }
    }
    free(X), free(P);
    csv_free(&c);
    return rc;
}
