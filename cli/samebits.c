/*
 * samebits: the command-line interface.
 * Exit status: 0 success; 1 a comparison or self-check found a difference;
 * 2 bad usage or an error (the message names the status).
 */
#include "samebits_cert.h"
#include "certify.h"
#include "ets_cli.h"
#include "gp_cli.h"
#include "mlp_cli.h"
#include "lm_cli.h"
#include "lightgbm.h"
#include "cli_fail.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXIT_DIFF 1
#define EXIT_ERROR 2

static const char *k_usage =
    "usage: samebits COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  version                          print the library and profile versions\n"
    "  doctor [--threads N]             build facts, then a self-check of every pinned\n"
    "                                   fixture against its reference card\n"
    "  verify [--family F] [--threads N] [--cards DIR] [device=D] [NAME...]\n"
    "                                   run pinned fixtures here and compare each card with\n"
    "                                   its reference, stage by stage (exit 0 only if all\n"
    "                                   are identical; a refusal is not a pass)\n"
    "  check-fixture [--dir DIR] [NAME...]\n"
    "                                   check the fixtures' pinned input digests (no training);\n"
    "                                   --dir: also the installed cards (share/samebits/cards)\n"
    "  fixture list                     list the pinned fixtures\n"
    "  fixture run NAME [--out FILE] [--threads N]\n"
    "                                   run a fixture and write its card (stdout if no FILE)\n"
    "  fixture inputs NAME [--out FILE] write the card of a fixture's inputs\n"
    "  card diff A B                    compare two cards: 'identical' (exit 0) or the\n"
    "                                   first stage where they part (exit 1)\n"
    "  train --model gbdt --data FILE [--label NAME] [--valid FILE]... [--objective OBJ]\n"
    "        (--valid once or more: several validation sets, logged as valid_0, valid_1, ...)\n"
    "  train --model linear|ridge|lasso|elasticnet|logistic|pca --data FILE [--label NAME] [key=value ...]\n"
    "  train --model random_forest|extra_trees --data FILE [--label NAME] [objective=classification|regression]\n"
    "        [n_estimators=100 max_depth=-1 max_features=sqrt bootstrap=true ...]   (docs/forest.md; labels of a\n"
    "        classification are class indices 0..K-1; DATA.weight beside the data: sample weights)\n"
    "  train --model isolation_forest --data FILE [n_estimators=100 max_samples=256 ...]   (docs/forest.md; a\n"
    "        --label column is dropped; predict: the anomaly score, --raw: the mean path length ratio)\n"
    "  train --model kmeans --data FILE [n_clusters=K ...]   (docs/cluster.md; a --label column is dropped)\n"
    "  train --model dbscan|agglomerative|spectral --data FILE [eps=0.5 min_samples=5 | n_clusters=2 linkage=ward |\n"
    "        n_clusters=8 affinity=rbf gamma=1 ...]\n"
    "        (docs/cluster.md; a --label column is dropped; the training rows' labels are in the model file,\n"
    "        which predict refuses: neither family predicts new rows)\n"
    "  train --model kde --data FILE [kernel=gaussian bandwidth=1.0|scott|silverman ...]   (docs/density.md:\n"
    "        kernel density; a --label column is dropped, DATA.weight beside the data: sample weights;\n"
    "        predict writes each row's log density)\n"
    "  train --model umap --data FILE [n_neighbors=15 n_components=2 min_dist=0.1 metric=euclidean|cosine|manhattan\n"
    "        n_epochs=N random_state=S ...]   (docs/umap.md: the frozen fit in the model file; transform embeds\n"
    "        new rows against it; no --label: supervised UMAP is not built)\n"
    "  train --model ets --data FILE --out MODEL [--id unique_id] [--time ds] [--target y]\n"
    "        [trend=add damped_trend=true seasonal=add|mul seasonal_periods=M ...]   (docs/timeseries.md: a\n"
    "        long-format CSV, one series an id, each ordered by its time column; the batch's model file)\n"
    "  train --model svc|svr --data FILE [--label NAME] [kernel=rbf C=1 gamma=scale epsilon=0.1 ...]\n"
    "        (docs/svm.md: the label is the target, SVC's class indices 0..K-1 or SVR's values; DATA.weight beside:\n"
    "        sample weights; predict writes the class index or the value, --raw the decision values; SVC's\n"
    "        probability=true [random_state=N]: Platt scaling, predict --proba the class probabilities)\n"
    "  train --model arima --data FILE --out MODEL [--id unique_id] [--time ds] [--target y]\n"
    "        [order=p:d:q seasonal_order=P:D:Q:s trend=n|c ...]   (docs/timeseries.md: the same long format)\n"
    "  train --model gp --data FILE --out MODEL [--label NAME] [--kernel SPEC] [--card CARD]\n"
    "        [alpha=1e-10 normalize_y=true optimizer=fmin_l_bfgs_b|none n_restarts_optimizer=N random_state=S]\n"
    "        (docs/gaussian-process.md: a float64 CSV, the label the last column by default; the kernel in\n"
    "        scikit-learn's syntax, e.g. \"ConstantKernel(1.0) * RBF([1.0, 1.0]) + WhiteKernel(1e-3)\")\n"
    "  train --model mlp --data FILE --out MODEL [--label NAME] [--card CARD] task=classifier|regressor\n"
    "        [hidden_layer_sizes=100 activation=relu solver=adam|sgd alpha=1e-4 max_iter=200 random_state=S ...]\n"
    "        (docs/mlp.md: a CSV rounded to float32, the label the last column by default: class codes\n"
    "        0..K-1 or values)\n"
    "  train --model lm --data FILE --out MODEL [--steps 128] [--eval-every K] [--init CHECKPOINT]\n"
    "        [n_layer=2 d_model=64 n_head=4 context=64 batch_size=16 learning_rate=1e-3 dropout=0 ...]\n"
    "        (docs/lm.md: the byte language model on the file's raw bytes; --init resumes a checkpoint)\n"
    "  generate --model-file MODEL --prompt TEXT [--count 200] [--temperature 1] [--seed 0] [--out FILE]\n"
    "        (docs/lm.md: bytes sampled after the prompt from an lm model)\n"
    "  train --model knn --data FILE [--label NAME] [task=classification|regression|neighbors]\n"
    "        [n_neighbors=5 weights=uniform|distance metric=euclidean|cosine|manhattan ...]   (docs/neighbors.md:\n"
    "        the label is the target, class indices 0..9999 or values with task=regression; without\n"
    "        one, task=neighbors: a model for neighbor queries, which predict refuses)\n"
    "        [--weight FILE] [--out MODEL] [--card CARD] [--format csv|libsvm|tsv-noheader|idx]\n"
    "        [--query FILE] [--valid-query FILE] [--group COLUMN]   (ranking: query groups; a\n"
    "        DATA.query file beside the data is read when present, DATA.weight and DATA.init too, as LightGBM)\n"
    "        [--init-model MODEL]   (continued training: n_estimators more iterations on its trees; forests:\n"
    "        a warm start keeping its trees, n_estimators the whole forest)\n"
    "        [--weight-column COL] [--ignore-column COL[,COL...]]   (a feature column as the row\n"
    "        weights, columns left out; COL a name or #k, the 0-based feature index; --group too)\n"
    "        [--threads N] [key=value ...]\n"
    "                                   train gradient-boosted trees (docs/gbdt.md)\n"
    "  forecast --h H (--model MODEL | --data FILE [--id C] [--time C] [--target C] [key=value ...])\n"
    "        [--out FILE] [--alpha A]   exponential smoothing's or ARIMA's next H values of each series (CSV:\n"
    "        id or series, step, forecast; ARIMA adds lower, upper: the 1 - A interval, A 0.05 by default);\n"
    "        --data fits the file's series first (model=arima for ARIMA; docs/timeseries.md)\n"
    "  predict --model MODEL --data FILE --out FILE [--raw|--proba|--leaf|--contrib] [--format csv|libsvm]\n"
    "          (tree models: --leaf, each tree's leaf index (LightGBM's numbers); --contrib, TreeSHAP\n"
    "          contributions, per class the features' then the expected value; docs/explain.md)\n"
    "          (kmeans: the cluster index; --raw: the squared distance to each center)\n"
    "          (knn: the class index or the value; --proba: a classifier's class probabilities)\n"
    "          (kde: the log density)\n"
    "          (gp: the predictive mean; --std: the mean and the standard deviation)\n"
    "          (mlp: the class code or the values; --proba: a classifier's probabilities)\n"
    "          [device=cpu|cuda|opencl]   (the same bits, computed on the GPU or OpenCL device)\n"
    "                                   write one prediction line per row\n"
    "  transform --model MODEL --data FILE --out FILE [--format csv|libsvm] [--threads N]\n"
    "          a UMAP model's embedding of each row (its n_components values a line; a row's result is\n"
    "          its own, however the rows are batched), or a PCA's projection, or k-means' distances\n"
    "  digest MODEL                     print the model file's SHA-256 digest\n"
    "  dump MODEL [--format json|text] [--out FILE]\n"
    "                                   a tree model's trees: splits, gains, counts, leaf values as\n"
    "                                   stored (9 digits), LightGBM's leaf numbers (default json)\n"
    "  importance MODEL [--type split|gain] [--out FILE]\n"
    "                                   feature importance, one 'name,value' line a feature: splits\n"
    "                                   on it (split, the default as LightGBM) or their total gain\n"
    "  conformance export DIR [NAME...] write a self-describing bundle (docs/conformance.md)\n"
    "  conformance validate DIR [--fixture NAME] [--model FILE] [--predictions FILE] [--card FILE]\n"
    "                                   check a bundle's integrity, and a candidate's outputs\n"
    "  config=FILE [key=value ...]      LightGBM's form: its config file and keys (task=train|predict,\n"
    "                                   data, valid, output_model, input_model, output_result, objective,\n"
    "                                   metric, num_iterations, ...; the command line's pairs win over the\n"
    "                                   file's; docs/cli.md)\n"
    "  help                             this text\n"
    "\n"
    "environment: SAMEBITS_NUM_THREADS (worker threads), SAMEBITS_NUMERIC_MODE\n"
    "(identical, the only mode built; deterministic and fast are refused by name).\n";

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "samebits: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nrun 'samebits help' for usage\n");
    return EXIT_ERROR;
}

/* "--threads N": the library's one rule for a thread count (the one that
 * SAMEBITS_NUM_THREADS follows); 0 on success, else the refusal is printed. */
static int parse_threads(const char *v) {
    int32_t n = 0;
    sb_status st = sb_parse_num_threads(v, "--threads", &n);
    if (st == SB_OK) st = sb_set_num_threads(n);
    if (st != SB_OK) {
        lib_fail(st);
        return -1;
    }
    return 0;
}

/* The thread count in force is valid (an invalid SAMEBITS_NUM_THREADS is
 * refused by name before any work); 0, or the refusal is printed. */
static int threads_ready(void) {
    int32_t n;
    sb_status st = sb_get_num_threads(&n);
    return st == SB_OK ? 0 : lib_fail(st);
}

/* Runs fixture `name` into a new card tagged with this leg's facts. */
/* Runs fixture name (with extra parameters such as "device=cuda", or NULL),
 * its card labelled with this machine's arch and thread count. */
static sb_status run_fixture(const char *name, const char *extra, sb_card **out) {
    sb_card *card;
    sb_status st = sb_card_create(&card);
    if (st != SB_OK) return st;
    char info[2048], arch[64] = "unknown";
    if (sb_build_info(info, sizeof info, NULL) == SB_OK) {
        const char *a = strstr(info, "arch: ");
        if (a) sscanf(a + 6, "%63s", arch);
    }
    int32_t threads = 0;
    st = sb_get_num_threads(&threads);
    char tbuf[16];
    snprintf(tbuf, sizeof tbuf, "%d", (int)threads);
    if (st == SB_OK) st = sb_card_set_meta(card, "arch", arch);
    if (st == SB_OK) st = sb_card_set_meta(card, "threads", tbuf);
    if (st == SB_OK) st = sb_fixture_run_with(name, extra, card);
    if (st != SB_OK) {
        sb_card_free(card);
        return st;
    }
    *out = card;
    return SB_OK;
}

static void print_diff(const sb_card_diff *d) {
    printf("differ at stage %lld: %s (%s)\n", (long long)d->stage_index,
           d->stage_a[0] ? d->stage_a : d->stage_b, d->reason);
    if (d->stage_a[0] && d->stage_b[0] && strcmp(d->stage_a, d->stage_b) != 0)
        printf("  tags: %s vs %s\n", d->stage_a, d->stage_b);
    printf("  a: %s\n  b: %s\n", d->digest_a[0] ? d->digest_a : "(no such stage)",
           d->digest_b[0] ? d->digest_b : "(no such stage)");
}

/* Run each named fixture (all when n is 0) and compare its card with the
 * reference card built into the library: one line per fixture. Returns the
 * number that were not identical (errors and refusals count, never pass). */
static int verify_fixtures(const char *const *names, int n) {
    int failed = 0, total = n ? n : sb_fixture_count();
    for (int32_t i = 0; i < total; i++) {
        const char *name = n ? names[i] : sb_fixture_name(i);
        sb_card *ref = NULL, *run = NULL;
        sb_status st = sb_fixture_reference(name, &ref);
        if (st == SB_OK) st = run_fixture(name, NULL, &run);
        if (st != SB_OK) {
            printf("  %-15s ERROR %s: %s\n", name, sb_status_name(st), sb_last_error());
            failed++;
        } else {
            sb_card_diff d;
            int64_t nstages = 0;
            sb_card_stage_count(ref, &nstages);
            if (sb_card_compare(ref, run, &d) == SB_OK) {
                printf("  %-15s identical (%lld stages)\n", name, (long long)nstages);
            } else {
                printf("  %-15s DIFFERS: ", name);
                print_diff(&d);
                failed++;
            }
        }
        sb_card_free(ref);
        sb_card_free(run);
    }
    return failed;
}

static int cmd_doctor(int argc, char **argv) {
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            if (parse_threads(argv[++i])) return EXIT_ERROR;
        } else {
            return usage_error("doctor: unknown argument '%s'", argv[i]);
        }
    }
    char info[2048];
    sb_status st = sb_build_info(info, sizeof info, NULL);
    if (st != SB_OK) return lib_fail(st);
    printf("samebits doctor\n%s", info);
    char devs[8192];
    if (sb_device_info("opencl", devs, sizeof devs, NULL) == SB_OK) printf("opencl devices: %s\n", devs);
    int32_t threads;
    st = sb_get_num_threads(&threads);
    if (st != SB_OK) return lib_fail(st);
    const char *env = getenv("SAMEBITS_NUM_THREADS");
    printf("threads: %d (%s)\n", (int)threads, env && *env ? "SAMEBITS_NUM_THREADS" : "default: online cores");
    sb_numeric_mode mode;
    st = sb_get_numeric_mode(&mode);
    if (st != SB_OK) return lib_fail(st);
    printf("numeric mode: %s\n", sb_numeric_mode_name(mode));
    printf("self-check (pinned fixtures against reference cards):\n");
    int failed = verify_fixtures(NULL, 0);
    printf("self-check: %s\n", failed ? "FAILED" : "passed");
    return failed ? EXIT_DIFF : 0;
}

static int cmd_fixture(int argc, char **argv) {
    if (argc < 1) return usage_error("fixture: expected 'list' or 'run NAME'%s", "");
    if (strcmp(argv[0], "list") == 0) {
        if (argc != 1) return usage_error("fixture list: unexpected argument '%s'", argv[1]);
        for (int32_t i = 0; i < sb_fixture_count(); i++) printf("%s\n", sb_fixture_name(i));
        return 0;
    }
    if (strcmp(argv[0], "run") != 0) return usage_error("fixture: unknown subcommand '%s'", argv[0]);
    const char *name = NULL, *out = NULL, *extra = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            if (parse_threads(argv[++i])) return EXIT_ERROR;
        } else if (strncmp(argv[i], "device=", 7) == 0 && !extra) {
            extra = argv[i]; /* the fixture's parameters plus this one */
        } else if (argv[i][0] == '-' || name) {
            return usage_error("fixture run: unexpected argument '%s'", argv[i]);
        } else {
            name = argv[i];
        }
    }
    if (!name) return usage_error("fixture run: which fixture? ('samebits fixture list')%s", "");
    if (threads_ready()) return EXIT_ERROR;
    sb_card *card;
    sb_status st = run_fixture(name, extra, &card);
    if (st != SB_OK) return lib_fail(st);
    if (out) {
        st = sb_card_save(card, out);
    } else {
        size_t need = 0;
        st = sb_card_text(card, NULL, 0, &need);
        char *text = st == SB_OK ? malloc(need) : NULL;
        if (st == SB_OK && !text) st = SB_ERR_OUT_OF_MEMORY;
        if (st == SB_OK) st = sb_card_text(card, text, need, NULL);
        if (st == SB_OK) fputs(text, stdout);
        free(text);
    }
    sb_card_free(card);
    return st == SB_OK ? 0 : lib_fail(st);
}

static int cmd_card(int argc, char **argv) {
    if (argc < 1 || strcmp(argv[0], "diff") != 0)
        return usage_error("card: expected 'diff A B'%s", "");
    if (argc != 3) return usage_error("card diff: expected two card files%s", "");
    sb_card *a = NULL, *b = NULL;
    sb_status st = sb_card_load(argv[1], &a);
    if (st == SB_OK) st = sb_card_load(argv[2], &b);
    if (st != SB_OK) {
        sb_card_free(a);
        return lib_fail(st);
    }
    sb_card_diff d;
    st = sb_card_compare(a, b, &d);
    sb_card_free(a);
    sb_card_free(b);
    if (st == SB_OK) {
        printf("identical\n");
        return 0;
    }
    if (st != SB_ERR_MISMATCH) return lib_fail(st);
    print_diff(&d);
    return EXIT_DIFF;
}

#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Read one weight per line from path into d (as LightGBM's .weight files):
 * the library's reader (sb_dataset_read_weight_file), its refusal printed. */
static sb_status read_weights(const char *path, sb_dataset *d) {
    sb_status st = sb_dataset_read_weight_file(d, path);
    if (st != SB_OK) lib_fail(st);
    return st;
}

/* LightGBM's DATA.SUFFIX beside a data file (DATA.query, DATA.weight): its
 * path in *out (malloc'd, the caller frees it) when such a file exists, else
 * NULL; out of memory is printed and returned. */
static sb_status beside_file(const char *data, const char *suffix, char **out) {
    size_t len = strlen(data), sl = strlen(suffix);
    char *p = malloc(len + sl + 1);
    *out = NULL;
    if (!p) {
        fprintf(stderr, "samebits: error: SB_ERR_OUT_OF_MEMORY: naming %s%s\n", data, suffix);
        return SB_ERR_OUT_OF_MEMORY;
    }
    memcpy(p, data, len);
    memcpy(p + len, suffix, sl + 1);
    FILE *fp = fopen(p, "r");
    if (fp) {
        fclose(fp);
        *out = p;
    } else {
        free(p);
    }
    return SB_OK;
}

/* DATA.weight beside a data file, read when present (one weight a line, as
 * --weight reads) and said so on stderr; absent, nothing happens. A failure
 * is printed and returned. */
static sb_status weights_beside(const char *data, sb_dataset *d) {
    char *path;
    sb_status st = beside_file(data, ".weight", &path);
    if (st == SB_OK && path && (st = read_weights(path, d)) == SB_OK)
        fprintf(stderr, "samebits: row weights from %s\n", path);
    free(path);
    return st;
}

/* DATA.init beside a data file (LightGBM's initial scores, one a line),
 * read when present for gradient boosting and said so; absent, nothing
 * happens. A failure is printed and returned. */
static sb_status init_beside(const char *data, sb_dataset *d) {
    char *path;
    sb_status st = beside_file(data, ".init", &path);
    if (st == SB_OK && path) {
        if ((st = sb_dataset_read_init_file(d, path)) != SB_OK) lib_fail(st);
        else fprintf(stderr, "samebits: initial scores from %s\n", path);
    }
    free(path);
    return st;
}

/* Save the model and the card as one pair (docs/robustness.md, "A killed
 * samebits train"). Both are written in full to temporary files first (the
 * library's output rule: sb_output_open); then the old card is removed, the
 * model renamed into place, and the card renamed into place. So at every
 * moment, a SIGKILL included, the two paths hold the old pair, the old model
 * and no card, the new model and no card, or the new pair: a card beside a
 * model is always that model's card. A failure before the removal (out of
 * memory, a full disk, a refused path) leaves both files as they were. A
 * direct output ("-", a device, a pipe) has no old file and is written as it
 * is. 0 on success; otherwise the one error message is printed. */
/* Test hook (tests/integration/test_hardening.py): SAMEBITS_TEST_SAVE_PAUSE_MS
 * sleeps that long between the steps of save_outputs, so that a SIGKILL can be
 * aimed at each step; it changes timing only. */
static void save_pause(void) {
    const char *v = getenv("SAMEBITS_TEST_SAVE_PAUSE_MS");
    long ms = v ? strtol(v, NULL, 10) : 0;
    if (ms > 0 && ms <= 10000) {
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static int save_outputs(const sb_model *m, const char *out, const sb_card *card, const char *card_path) {
    sb_output *mo = NULL, *co = NULL;
    uint8_t *bytes = NULL;
    char *text = NULL;
    size_t nbytes = 0, ntext = 0;
    int retracted = 0;
    sb_status st = SB_OK;
    if (out && (st = sb_model_to_bytes(m, NULL, 0, &nbytes)) == SB_OK && !(bytes = malloc(nbytes ? nbytes : 1)))
        st = SB_ERR_OUT_OF_MEMORY;
    if (st == SB_OK && out) st = sb_model_to_bytes(m, bytes, nbytes, NULL);
    if (st == SB_OK && card && (st = sb_card_text(card, NULL, 0, &ntext)) == SB_OK && !(text = malloc(ntext)))
        st = SB_ERR_OUT_OF_MEMORY;
    if (st == SB_OK && card) st = sb_card_text(card, text, ntext, NULL);
    if (st == SB_OK && out && (st = sb_output_open(out, &mo)) == SB_OK) st = sb_output_write(mo, bytes, nbytes);
    if (st == SB_OK && card && (st = sb_output_open(card_path, &co)) == SB_OK) st = sb_output_write(co, text, strlen(text));
    save_pause(); /* both temporaries written */
    if (st == SB_OK && mo && co) {
        struct stat before;
        int had_card = stat(card_path, &before) == 0 && S_ISREG(before.st_mode);
        st = sb_output_retract(co);
        retracted = st == SB_OK && had_card;
    }
    save_pause(); /* the old card removed */
    if (st == SB_OK && mo) {
        st = sb_output_commit(mo);
        mo = NULL;
    }
    save_pause(); /* the new model in place */
    if (st == SB_OK && co) {
        st = sb_output_commit(co);
        co = NULL;
    }
    sb_output_discard(mo);
    sb_output_discard(co);
    free(bytes);
    free(text);
    if (st == SB_OK) return 0;
    if (st == SB_ERR_OUT_OF_MEMORY && !*sb_last_error())
        fprintf(stderr, "samebits: error: SB_ERR_OUT_OF_MEMORY: saving the model and its card\n");
    else
        lib_fail(st);
    if (retracted)
        fprintf(stderr, "samebits: the old card '%s' was removed so that it cannot stand beside another model\n",
                card_path);
    return EXIT_ERROR;
}

/* Ranking: query groups of d from --group COLUMN, --query FILE, or (when the
 * data has neither qid: nor those) a LightGBM-style DATA.query file beside it.
 * A failure is printed and returned. */
static sb_status attach_groups(sb_dataset *d, const char *data, const char *query, const char *group) {
    char *path = NULL;
    sb_status st = SB_OK;
    if (group) st = sb_dataset_group_column(d, group);
    else if (query) st = sb_dataset_read_query_file(d, query);
    else if ((st = beside_file(data, ".query", &path)) != SB_OK) return st; /* printed */
    else if (path && (st = sb_dataset_read_query_file(d, path)) == SB_OK)
        fprintf(stderr, "samebits: query groups from %s\n", path);
    if (st != SB_OK) lib_fail(st);
    free(path);
    return st;
}

/* A column given by name, or "#k" (the 0-based index among the feature
 * columns: LightGBM's weight_column/group_column/ignore_column count without
 * the label), as the feature's name in d, copied into *out (malloc'd). A
 * failure is printed and returned. */
static sb_status column_name(const sb_dataset *d, const char *spec, const char *what, char **out) {
    *out = NULL;
    const char *name = spec;
    if (spec[0] == '#') {
        char *end = NULL;
        const long k = strtol(spec + 1, &end, 10);
        if (!spec[1] || *end || k < 0 || k > INT32_MAX) {
            fprintf(stderr, "samebits: error: SB_ERR_INVALID_ARGUMENT: %s '%s': a column name, or #k (a 0-based "
                    "feature index)\n", what, spec);
            return SB_ERR_INVALID_ARGUMENT;
        }
        sb_status st = sb_dataset_feature_name(d, (int32_t)k, &name);
        if (st != SB_OK) return lib_fail(st), st;
    }
    if (!(*out = strdup(name))) {
        fprintf(stderr, "samebits: error: SB_ERR_OUT_OF_MEMORY: %s\n", what);
        return SB_ERR_OUT_OF_MEMORY;
    }
    return SB_OK;
}

/* --weight-column and --ignore-column (LightGBM's weight_column and
 * ignore_column) on d: each resolved to a feature name against names (the
 * training data's, so that an index means the same column in the validation
 * data), then the weight column becomes the weights and the ignored columns
 * leave the features. A failure is printed and returned. */
static sb_status apply_columns(sb_dataset *names, sb_dataset *d, const char *weight_col, const char *ignore) {
    char *w = NULL;
    sb_status st = SB_OK;
    if (weight_col && (st = column_name(names, weight_col, "--weight-column", &w)) != SB_OK) return st;
    char *list = ignore ? strdup(ignore) : NULL, *save = NULL;
    char *drop[256];
    int nd = 0;
    if (ignore && !list) st = SB_ERR_OUT_OF_MEMORY;
    for (char *tok = list ? strtok_r(list, ",", &save) : NULL; tok && st == SB_OK; tok = strtok_r(NULL, ",", &save)) {
        if (nd == 256) {
            fprintf(stderr, "samebits: error: SB_ERR_LIMIT: --ignore-column names more than 256 columns\n");
            st = SB_ERR_LIMIT;
            break;
        }
        st = column_name(names, tok, "--ignore-column", &drop[nd]);
        if (st == SB_OK) nd++;
    }
    if (st == SB_OK && w && (st = sb_dataset_weight_column(d, w)) != SB_OK) lib_fail(st);
    for (int i = 0; i < nd && st == SB_OK; i++)
        if ((st = sb_dataset_drop_column(d, drop[i])) != SB_OK) lib_fail(st);
    for (int i = 0; i < nd; i++) free(drop[i]);
    free(list);
    free(w);
    return st;
}

/* categorical_feature by index counts the training data's feature columns
 * before a weight, group or ignored column leaves them (LightGBM's numbering):
 * when any will leave, the indices become the columns' names (name:a,b) here,
 * so that the fit, which sees the remaining columns, takes the same ones. A
 * failure is printed and returned. */
static sb_status categorical_by_name(sb_params *params, const sb_dataset *d) {
    const char *v = NULL;
    if (sb_params_get(params, "categorical_feature", &v) != SB_OK || !v || !*v || !strncmp(v, "name:", 5))
        return SB_OK;
    char out[4096] = "name:", *list = strdup(v), *save = NULL;
    size_t used = 5;
    sb_status st = list ? SB_OK : SB_ERR_OUT_OF_MEMORY;
    for (char *tok = list ? strtok_r(list, ",", &save) : NULL; tok && st == SB_OK; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        char *end = NULL, spec[32];
        const long k = strtol(tok, &end, 10);
        if (!*tok || (*end && *end != ' ') || k < 0 || k > INT32_MAX) {
            fprintf(stderr, "samebits: error: SB_ERR_INVALID_ARGUMENT: categorical_feature '%s': feature indices "
                    "(0-based, the label not counted) or name:COLUMN[,COLUMN...]\n", v);
            st = SB_ERR_INVALID_ARGUMENT;
            break;
        }
        snprintf(spec, sizeof spec, "#%ld", k);
        char *name = NULL;
        if ((st = column_name(d, spec, "categorical_feature", &name)) != SB_OK) break;
        if (strchr(name, ',') || used + strlen(name) + 2 > sizeof out) {
            fprintf(stderr, "samebits: error: SB_ERR_INVALID_ARGUMENT: categorical_feature: column '%s' cannot be "
                    "named in a comma list beside a weight, group or ignored column\n", name);
            st = SB_ERR_INVALID_ARGUMENT;
        } else {
            used += (size_t)snprintf(out + used, sizeof out - used, "%s%s", used > 5 ? "," : "", name);
        }
        free(name);
    }
    free(list);
    if (st == SB_OK && (st = sb_params_set(params, "categorical_feature", out)) != SB_OK) lib_fail(st);
    return st;
}

#define CLI_MAX_VALID 64 /* --valid files one train takes */
#define CLI_MAX_VALID_TEXT "64"

/* distributed_rows=given: "{rank}" in a path replaced by this rank's number
 * (--data part{rank}.csv: rank 2 reads part2.csv). *out: a copy the caller
 * frees (NULL when p names no rank). */
static int rank_path(const char *p, int32_t rank, char **out) {
    *out = NULL;
    if (!p || !strstr(p, "{rank}")) return 0;
    char num[16];
    snprintf(num, sizeof num, "%d", (int)rank);
    size_t n = strlen(p) + 1;
    for (const char *q = strstr(p, "{rank}"); q; q = strstr(q + 6, "{rank}")) n += strlen(num);
    char *o = malloc(n), *w = o;
    if (!o) return 1;
    for (const char *q = p; *q;) {
        if (!strncmp(q, "{rank}", 6)) {
            memcpy(w, num, strlen(num));
            w += strlen(num);
            q += 6;
        } else {
            *w++ = *q++;
        }
    }
    *w = 0;
    *out = o;
    return 0;
}

static int cmd_train(int argc, char **argv) {
    for (int i = 0; i + 1 < argc; i++) /* exponential smoothing reads its own long format (cli/ets_cli.c) */
        if (strcmp(argv[i], "--model") == 0 && (strcmp(argv[i + 1], "ets") == 0 || strcmp(argv[i + 1], "arima") == 0))
            return sb_cli_train_ets(argc, argv);
    for (int i = 0; i + 1 < argc; i++) /* gaussian process regression reads float64 rows (cli/gp_cli.c) */
        if (strcmp(argv[i], "--model") == 0 && strcmp(argv[i + 1], "gp") == 0) return sb_cli_train_gp(argc, argv);
    for (int i = 0; i + 1 < argc; i++) /* the mlp reads the same CSV, rounded to float32 (cli/mlp_cli.c) */
        if (strcmp(argv[i], "--model") == 0 && strcmp(argv[i + 1], "mlp") == 0) return sb_cli_train_mlp(argc, argv);
    for (int i = 0; i + 1 < argc; i++) /* the byte language model reads a file's raw bytes (cli/lm_cli.c) */
        if (strcmp(argv[i], "--model") == 0 && strcmp(argv[i + 1], "lm") == 0) return sb_cli_train_lm(argc, argv);
    const char *model_kind = NULL, *data = NULL, *label = NULL, *valid = NULL, *out = NULL, *card_path = NULL,
               *format = NULL, *weight = NULL, *query = NULL, *vquery = NULL, *group = NULL, *weight_col = NULL,
               *ignore_cols = NULL, *init_path = NULL;
    char *group_name = NULL;
    sb_model *init_model = NULL;
    sb_params *params = NULL;
    sb_dataset *dtrain = NULL, *dvalid = NULL;
    /* --valid FILE, given once or more (LightGBM's valid list; at most CLI_MAX_VALID), and the
     * --valid-query files beside them (one for all, or one per set in order) */
    const char *vfiles[CLI_MAX_VALID], *vqueries[CLI_MAX_VALID];
    sb_dataset *dvalids[CLI_MAX_VALID] = {NULL};
    int nvf = 0, nvq = 0;
    sb_card *card = NULL;
    sb_model *model = NULL;
    int rc = EXIT_ERROR, eval_set = 0;
    int32_t dist_rank = 0, dist_size = 0; /* distributed=mpi: this rank, and the ranks (0: one process) */
    char *own_data = NULL, *own_weight = NULL, *own_query = NULL; /* distributed_rows=given: {rank} replaced */
    sb_status st = sb_params_create(&params);
    if (st != SB_OK) return lib_fail(st);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--model") && v) model_kind = argv[++i];
        else if (!strcmp(a, "--data") && v) data = argv[++i];
        else if (!strcmp(a, "--label") && v) label = argv[++i];
        else if (!strcmp(a, "--valid") && v) {
            if (nvf == CLI_MAX_VALID) {
                rc = usage_error("train: --valid: at most %s validation files", CLI_MAX_VALID_TEXT);
                goto done;
            }
            valid = vfiles[nvf++] = argv[++i];
        }
        else if (!strcmp(a, "--out") && v) out = argv[++i];
        else if (!strcmp(a, "--card") && v) card_path = argv[++i];
        else if (!strcmp(a, "--format") && v) format = argv[++i];
        else if (!strcmp(a, "--weight") && v) weight = argv[++i];
        else if (!strcmp(a, "--query") && v) query = argv[++i];
        else if (!strcmp(a, "--valid-query") && v) {
            if (nvq == CLI_MAX_VALID) {
                rc = usage_error("train: --valid-query: at most %s files", CLI_MAX_VALID_TEXT);
                goto done;
            }
            vquery = vqueries[nvq++] = argv[++i];
        }
        else if (!strcmp(a, "--group") && v) group = argv[++i];
        else if (!strcmp(a, "--weight-column") && v) weight_col = argv[++i];
        else if (!strcmp(a, "--ignore-column") && v) ignore_cols = argv[++i];
        else if (!strcmp(a, "--init-model") && v) init_path = argv[++i];
        else if (!strcmp(a, "--objective") && v) {
            const char *had = NULL;
            if (sb_params_get(params, "objective", &had) == SB_OK) {
                st = SB_ERR_INVALID_ARGUMENT;
                fprintf(stderr, "samebits: error: SB_ERR_INVALID_ARGUMENT: parameter 'objective' is given twice ('%s' "
                        "and '%s'); give it once\n", had, v);
                goto done;
            }
            if ((st = sb_params_set(params, "objective", argv[++i])) != SB_OK) goto lib_fail;
        } else if (!strcmp(a, "--threads") && v) {
            if (parse_threads(argv[++i])) goto done;
        } else if (a[0] != '-' && strchr(a, '=')) {
            if ((st = sb_params_parse(params, a)) != SB_OK) goto lib_fail; /* a key given twice: refused */
        } else {
            rc = usage_error("train: unexpected argument '%s'", a);
            goto done;
        }
    }
    static const char *const k_linear[] = {"linear", "ridge", "lasso", "elasticnet", "logistic", "pca"};
    int linear = 0;
    for (size_t k = 0; model_kind && k < sizeof k_linear / sizeof k_linear[0]; k++) linear |= !strcmp(model_kind, k_linear[k]);
    const int kmeans = model_kind && !strcmp(model_kind, "kmeans");
    const int knn = model_kind && !strcmp(model_kind, "knn");
    const int svm = model_kind && (!strcmp(model_kind, "svc") || !strcmp(model_kind, "svr"));
    const int dbscan = model_kind && !strcmp(model_kind, "dbscan");
    const int agglo = model_kind && !strcmp(model_kind, "agglomerative");
    const int spectral = model_kind && !strcmp(model_kind, "spectral");
    const int kde = model_kind && !strcmp(model_kind, "kde");
    const int umap = model_kind && !strcmp(model_kind, "umap");
    const int labelled = dbscan || agglo || spectral; /* the families whose labels are the training rows' */
    const int clusters = kmeans || labelled || kde || umap; /* the label-free families (kernel density and UMAP among them) */
    const int forest = model_kind && (!strcmp(model_kind, "random_forest") || !strcmp(model_kind, "extra_trees"));
    const int iforest = model_kind && !strcmp(model_kind, "isolation_forest");
    if (!model_kind || (strcmp(model_kind, "gbdt") != 0 && !linear && !clusters && !knn && !svm && !forest && !iforest)) {
        rc = usage_error("train: --model gbdt, random_forest, extra_trees, isolation_forest, kmeans, dbscan, "
                         "agglomerative, spectral, knn, kde, umap, svc, svr, ets, arima, gp, mlp, lm, or a linear model (linear, ridge, lasso, elasticnet, "
                         "logistic, pca), is required; got '%s'", model_kind ? model_kind : "");
        goto done;
    }
    if (init_path && model_kind && strcmp(model_kind, "gbdt") != 0 && !forest && !iforest) {
        rc = usage_error("train: --init-model continues gradient boosting and warm-starts forests; --model %s is not "
                         "continued", model_kind);
        goto done;
    }
    /* the initial model is read before the data: a bad file is refused before any long work */
    if (init_path && (st = sb_model_load(init_path, &init_model)) != SB_OK) goto lib_fail;
    if ((forest || iforest) && (query || vquery || group || valid)) {
        rc = usage_error("train: --valid, --query, --valid-query and --group are for gradient boosting; --model %s "
                         "takes none of them", model_kind);
        goto done;
    }
    if (forest || iforest) {
        const char *had;
        if (sb_params_get(params, "model", &had) == SB_OK || sb_params_get(params, "family", &had) == SB_OK) {
            rc = usage_error("train: --model %s takes no model= (it names the model)", model_kind);
            goto done;
        }
        if (iforest && (sb_params_get(params, "objective", &had) == SB_OK)) {
            rc = usage_error("train: --model %s takes no objective= (it scores anomalies without labels)", model_kind);
            goto done;
        }
        if ((st = sb_params_set(params, "model", model_kind)) != SB_OK) goto lib_fail;
    }
    if (umap && (label || weight || weight_col || init_path)) { /* refused before any file is read */
        rc = usage_error("train: --model umap takes no %s (supervised UMAP, sample weights and continued training are "
                         "not built: docs/umap.md)", label ? "--label" : weight || weight_col ? "weights" : "--init-model");
        goto done;
    }
    if ((knn || svm || labelled || kde || umap) && (query || vquery || group)) {
        rc = usage_error("train: --query, --valid-query and --group are for ranking; --model %s takes no query "
                         "groups", model_kind);
        goto done;
    }
    if ((knn || svm || labelled || kde || umap) && valid) { /* refused before any file is read */
        rc = usage_error("train: --valid is for gradient boosting (%s has no rounds to evaluate)",
                         knn ? "nearest neighbors" : svm ? "a support vector machine" : kde ? "kernel density" : umap ? "UMAP" : dbscan ? "DBSCAN" : agglo ? "agglomerative clustering"
                                                                              : "spectral clustering");
        goto done;
    }
    if (linear || clusters || knn || svm) {
        const char *had;
        if (sb_params_get(params, "model", &had) == SB_OK || sb_params_get(params, "objective", &had) == SB_OK) {
            rc = usage_error("train: --model %s takes no model= or objective= (the model names its objective)",
                             model_kind);
            goto done;
        }
        if ((st = sb_params_set(params, "model", model_kind)) != SB_OK) goto lib_fail;
    }
    if (!data) {
        rc = usage_error("train: --data FILE is required%s", "");
        goto done;
    }
    if (threads_ready()) goto done;
    {   /* the CLI logs every 10 rounds unless one of the key's names is given */
        const char *had;
        eval_set = sb_params_get(params, "eval_period", &had) == SB_OK ||
                   sb_params_get(params, "verbose_eval", &had) == SB_OK ||
                   sb_params_get(params, "log_period", &had) == SB_OK;
    }
    if (!linear && !clusters && !knn && !svm && !forest && !iforest && !eval_set &&
        (st = sb_params_set(params, "eval_period", "10")) != SB_OK)
        goto lib_fail;
    { /* a progress line when standard error is a terminal (off in pipes and files), unless given */
        const char *had;
        if (!linear && !clusters && !knn && !svm && !forest && !iforest && sb_params_get(params, "progress", &had) != SB_OK &&
            isatty(STDERR_FILENO) && (st = sb_params_set(params, "progress", "true")) != SB_OK)
            goto lib_fail;
    }
    /* Gradient boosting's parameters, and a numeric mode that is not built,
     * are refused before the data is read. */
    if (!linear && !clusters && !knn && !svm && !forest && !iforest && (st = sb_gbdt_params_check(params)) != SB_OK)
        goto lib_fail;
    { /* distributed=mpi (docs/distributed.md): every rank reads the same file and the
       * library trains each on its block of rows; the engine starts before the data is
       * read (a missing MPI is refused at once), and rank 0 alone writes the model */
        const char *dv;
        if ((!strcmp(model_kind, "gbdt") || forest || iforest) && sb_params_get(params, "distributed", &dv) == SB_OK &&
            (!strcmp(dv, "mpi") || !strcmp(dv, "nccl")) &&
            (st = sb_distributed_info(dv, &dist_rank, &dist_size)) != SB_OK)
            goto lib_fail;
        const char *rows = NULL;
        const int given = sb_params_get(params, "distributed_rows", &rows) == SB_OK && !strcmp(rows, "given");
        const int named = (data && strstr(data, "{rank}")) || (weight && strstr(weight, "{rank}")) ||
                          (query && strstr(query, "{rank}"));
        if (named && !(dist_size > 0 && given)) {
            rc = usage_error("train: a path with {rank} is one rank's own file: run under mpirun with "
                             "distributed=mpi distributed_rows=given%s", "");
            goto done;
        }
        if (rank_path(data, dist_rank, &own_data) || rank_path(weight, dist_rank, &own_weight) ||
            rank_path(query, dist_rank, &own_query)) {
            st = SB_ERR_OUT_OF_MEMORY;
            goto lib_fail;
        }
        if (own_data) data = own_data;
        if (own_weight) weight = own_weight;
        if (own_query) query = own_query;
    }
    sb_numeric_mode mode;
    if ((st = sb_params_resolve_mode(params, linear   ? SB_FAMILY_LINEAR
                                             : kmeans ? SB_FAMILY_KMEANS
                                             : knn    ? SB_FAMILY_KNN
                                             : svm    ? SB_FAMILY_SVM
                                             : dbscan ? SB_FAMILY_DBSCAN
                                             : agglo  ? SB_FAMILY_AGGLOMERATIVE
                                             : spectral ? SB_FAMILY_SPECTRAL
                                             : kde ? SB_FAMILY_KDE
                                             : umap ? SB_FAMILY_UMAP
                                             : iforest ? SB_FAMILY_ISOLATION_FOREST
                                             : forest ? (!strcmp(model_kind, "extra_trees") ? SB_FAMILY_EXTRA_TREES
                                                                                             : SB_FAMILY_RANDOM_FOREST)
                                                      : SB_FAMILY_GBDT,
                                     &mode)) != SB_OK)
        goto lib_fail;
    double t0 = now_s();
    if ((st = sb_dataset_read(data, format, label, &dtrain)) != SB_OK) goto lib_fail;
    if (nvq > 1 && nvq != nvf) {
        rc = usage_error("train: the --valid-query files do not match the --valid files: give one for all or one "
                         "per --valid file, in order%s", "");
        goto done;
    }
    for (int k = 0; k < nvf; k++)
        if ((st = sb_dataset_read(vfiles[k], format, label, &dvalids[k])) != SB_OK) goto lib_fail;
    dvalid = dvalids[0];
    if (weight && weight_col) {
        rc = usage_error("train: --weight FILE and --weight-column %s both give the weights: give one", weight_col);
        goto done;
    }
    /* columns by index are resolved against the training data before any leaves it */
    if ((group || weight_col || ignore_cols) && categorical_by_name(params, dtrain) != SB_OK) goto done;
    if (group && column_name(dtrain, group, "--group", &group_name) != SB_OK) goto done;
    for (int k = 0; k < nvf; k++)
        if (apply_columns(dtrain, dvalids[k], weight_col, ignore_cols) != SB_OK) goto done;
    if (apply_columns(dtrain, dtrain, weight_col, ignore_cols) != SB_OK) goto done;
    if (weight && read_weights(weight, dtrain) != SB_OK) goto done;
    if (weight_col) {
        char *wpath = NULL; /* the weight column is the weights: a DATA.weight beside is not read, and said so */
        if (beside_file(data, ".weight", &wpath) != SB_OK) goto done;
        if (wpath) fprintf(stderr, "samebits: note: %s is not read: --weight-column gives the weights\n", wpath);
        free(wpath);
    }
    /* the isolation forest too: its weights set each tree's draw (docs/forest.md) */
    if (umap) { /* UMAP takes no weights: a DATA.weight beside the data is refused rather than ignored */
        char *wpath = NULL;
        if (beside_file(data, ".weight", &wpath) != SB_OK) goto done;
        if (wpath) {
            rc = usage_error("train: --model umap takes no sample weights, and %s is beside the data (move it away)", wpath);
            free(wpath);
            goto done;
        }
    }
    if (!umap && !weight && !weight_col && weights_beside(data, dtrain) != SB_OK) goto done;
    for (int k = 0; k < nvf && !weight_col; k++)
        if (weights_beside(vfiles[k], dvalids[k]) != SB_OK) goto done;
    if (!strcmp(model_kind, "gbdt")) { /* LightGBM's DATA.init: gradient boosting's starting margins */
        if (init_beside(data, dtrain) != SB_OK) goto done;
        for (int k = 0; k < nvf; k++)
            if (init_beside(vfiles[k], dvalids[k]) != SB_OK) goto done;
    }
    if (!knn && !svm && !labelled && !kde && !umap && !forest && !iforest && attach_groups(dtrain, data, query, group_name) != SB_OK) goto done;
    for (int k = 0; k < nvf; k++)
        if (attach_groups(dvalids[k], vfiles[k], nvq > 1 ? vqueries[k] : vquery, group_name) != SB_OK) goto done;
    int64_t nrows;
    int32_t ncols;
    sb_dataset_shape(dtrain, &nrows, &ncols);
    if (dist_rank == 0)
        fprintf(stderr, "samebits: training on %lld rows x %d features (read in %.2f s)%s\n", (long long)nrows,
                (int)ncols, now_s() - t0, dist_size > 0 ? " over MPI ranks" : "");
    if (card_path && (st = sb_card_create(&card)) != SB_OK) goto lib_fail;
    double t1 = now_s();
    if ((linear || kmeans) && dvalid) {
        rc = usage_error("train: --valid is for gradient boosting (%s has no rounds to evaluate)",
                         kmeans ? "k-means" : "a linear model");
        goto done;
    }
    if (linear) {
        if ((st = sb_linear_fit(params, dtrain, card, &model)) != SB_OK) goto lib_fail;
        int64_t it = 0, conv = 1;
        sb_model_get_int(model, "n_iter", &it);
        sb_model_get_int(model, "converged", &conv);
        fprintf(stderr, "samebits: %s fitted in %.2f s (%lld iterations)\n", model_kind, now_s() - t1, (long long)it);
        if (!conv)
            fprintf(stderr, "samebits: warning: %s did not converge in %lld iterations (raise max_iter or tol)\n",
                    model_kind, (long long)it);
    } else if (umap) {
        if ((st = sb_umap_fit(params, dtrain, NULL, card, &model)) != SB_OK) goto lib_fail;
        int64_t nfit = 0, nc = 0, k = 0, ep = 0;
        sb_model_get_int(model, "n_samples_fit", &nfit);
        sb_model_get_int(model, "n_components", &nc);
        sb_model_get_int(model, "n_neighbors", &k);
        sb_model_get_int(model, "n_epochs", &ep);
        fprintf(stderr, "samebits: umap fitted in %.2f s (%lld rows, %lld components, n_neighbors=%lld, %lld epochs)\n",
                now_s() - t1, (long long)nfit, (long long)nc, (long long)k, (long long)ep);
        int64_t init_used = 0;
        const char *asked = NULL;
        sb_model_get_int(model, "init", &init_used);
        if (sb_params_get(params, "init", &asked) != SB_OK) asked = "spectral";
        if (init_used == 1 && !strcmp(asked, "spectral"))
            fprintf(stderr, "samebits: warning: init=spectral could not be computed (above 262,144 rows, n_components + "
                    "1 >= the rows, or the eigensolver did not converge); the fit started from the random "
                    "initialization, as umap-learn falls back\n");
    } else if (kde) {
        if ((st = sb_kde_fit(params, dtrain, card, &model)) != SB_OK) goto lib_fail;
        static const char *const k_kernels[] = {"gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine"};
        int64_t kern = 0, nfit = 0;
        float bw = 0.0f;
        sb_model_get_int(model, "kernel", &kern);
        sb_model_get_int(model, "n_samples_fit", &nfit);
        sb_model_get_array(model, "bandwidth", &bw, 1, NULL);
        fprintf(stderr, "samebits: kde fitted in %.2f s (%s kernel, bandwidth %.9g, %lld rows kept)\n", now_s() - t1,
                kern >= 0 && kern < 6 ? k_kernels[kern] : "?", (double)bw, (long long)nfit);
    } else if (svm) {
        const char *shr;
        if (sb_params_get(params, "shrinking", &shr) == SB_OK)
            fprintf(stderr, "samebits: note: shrinking=%s has no effect (it tunes libsvm's engine; the solver here never "
                    "shrinks, docs/svm.md)\n", shr);
        if ((st = sb_svm_fit(params, dtrain, card, &model)) != SB_OK) goto lib_fail;
        int64_t nsv = 0, conv = 1;
        sb_model_get_int(model, "n_support_vectors", &nsv);
        sb_model_get_int(model, "converged", &conv);
        fprintf(stderr, "samebits: %s fitted in %.2f s (%lld support vectors)\n", model_kind, now_s() - t1,
                (long long)nsv);
        if (!conv)
            fprintf(stderr, "samebits: warning: %s stopped at max_iter before meeting tol (raise max_iter)\n",
                    model_kind);
    } else if (knn) {
        if ((st = sb_knn_fit(params, dtrain, card, &model)) != SB_OK) goto lib_fail;
        static const char *const k_tasks[] = {"neighbors", "classification", "regression"};
        static const char *const k_metrics[] = {"euclidean", "cosine", "manhattan"}; /* SB_KNN_* */
        int64_t task = 0, k = 0, nclass = 0, metric = 0, weights = 0, nfit = 0;
        sb_model_get_int(model, "task", &task);
        sb_model_get_int(model, "n_neighbors", &k);
        sb_model_get_int(model, "n_classes", &nclass);
        sb_model_get_int(model, "metric", &metric);
        sb_model_get_int(model, "weights", &weights);
        sb_model_get_int(model, "n_samples_fit", &nfit);
        char classes[48] = "";
        if (task == 1) snprintf(classes, sizeof classes, ", %lld classes", (long long)nclass);
        fprintf(stderr, "samebits: knn fitted in %.2f s (%s, %lld rows kept, n_neighbors=%lld%s, %s%s)\n",
                now_s() - t1, task >= 0 && task < 3 ? k_tasks[task] : "?", (long long)nfit, (long long)k, classes,
                metric >= 0 && metric < 3 ? k_metrics[metric] : "?",
                task == 0 ? "" : weights ? ", distance weights" : ", uniform weights");
        if (task == 0)
            fprintf(stderr, "samebits: note: a task=neighbors model answers neighbor queries (the C API, Python's "
                            "NearestNeighbors); predict refuses it (train with --label for a classifier or "
                            "regressor)\n");
    } else if (labelled) {
        if ((st = (dbscan ? sb_dbscan_fit : agglo ? sb_agglomerative_fit : sb_spectral_fit)(params, dtrain, card, &model)) !=
            SB_OK)
            goto lib_fail;
        int64_t nc = 0, extra = 0;
        sb_model_get_int(model, "n_clusters", &nc);
        if (dbscan) {
            size_t n = 0;
            int64_t *lab = NULL;
            sb_model_get_int(model, "n_core", &extra);
            if (sb_model_get_indices(model, "labels", NULL, 0, &n) == SB_OK && (lab = malloc(sizeof(int64_t) * (n ? n : 1))) &&
                sb_model_get_indices(model, "labels", lab, n, NULL) == SB_OK) {
                int64_t noise = 0;
                for (size_t r = 0; r < n; r++) noise += lab[r] < 0;
                fprintf(stderr, "samebits: dbscan fitted in %.2f s (%lld clusters, %lld core rows, %lld noise rows)\n",
                        now_s() - t1, (long long)nc, (long long)extra, (long long)noise);
            }
            free(lab);
        } else {
            fprintf(stderr, "samebits: %s fitted in %.2f s (%lld clusters)\n", agglo ? "agglomerative" : "spectral",
                    now_s() - t1, (long long)nc);
        }
    } else if (forest || iforest) {
        /* --init-model: a warm start, n_estimators counting the whole forest */
        if (init_path)
            st = (iforest ? sb_isolation_forest_fit_continue : sb_forest_fit_continue)(params, dtrain, init_model, card,
                                                                                      &model);
        else
            st = (iforest ? sb_isolation_forest_fit : sb_forest_fit)(params, dtrain, card, &model);
        if (st != SB_OK) goto lib_fail;
        if (dist_rank == 0)
            fprintf(stderr, "samebits: %s fitted in %.2f s%s\n", model_kind, now_s() - t1,
                    dist_size > 0 ? " over MPI ranks (every rank holds the same model; rank 0 writes it)" : "");
    } else if (kmeans) {
        if ((st = sb_kmeans_fit(params, dtrain, NULL, card, &model)) != SB_OK) goto lib_fail;
        int64_t it = 0, conv = 1, k = 0;
        float inertia = 0.0f;
        sb_model_get_int(model, "n_iter", &it);
        sb_model_get_int(model, "converged", &conv);
        sb_model_get_int(model, "n_clusters", &k);
        sb_model_get_array(model, "inertia", &inertia, 1, NULL);
        fprintf(stderr, "samebits: kmeans fitted in %.2f s (%lld clusters, %lld iterations, inertia %.9g)\n",
                now_s() - t1, (long long)k, (long long)it, (double)inertia);
        if (!conv)
            fprintf(stderr, "samebits: note: kmeans stopped at max_iter=%lld before the centers settled\n", (long long)it);
    } else {
        if (init_path) { /* continued training: n_estimators more iterations on the file's trees */
            if ((st = sb_gbdt_fit_multi(params, dtrain, (const sb_dataset *const *)dvalids, nvf, NULL, init_model,
                                        card, &model)) != SB_OK)
                goto lib_fail;
        } else if ((st = sb_gbdt_fit_multi(params, dtrain, (const sb_dataset *const *)dvalids, nvf, NULL, NULL, card,
                                           &model)) != SB_OK) {
            goto lib_fail;
        }
        sb_model_info info;
        sb_model_get_info(model, &info);
        if (dist_rank == 0)
            fprintf(stderr, "samebits: %d trees in %.2f s%s\n", (int)info.ntrees, now_s() - t1,
                    dist_size > 0 ? " (every rank holds the same model; rank 0 writes it)" : "");
    }
    if (dist_rank != 0) { /* distributed=mpi: the model is rank 0's to write, once */
        rc = 0;
        goto done;
    }
    char digest[65];
    if ((st = sb_model_digest(model, digest)) != SB_OK) goto lib_fail;
    if (save_outputs(model, out, card, card_path) != 0) goto done;
    /* standard output may carry the model or the card ('-'): the digest then goes to stderr */
    fprintf((out && !strcmp(out, "-")) || (card_path && !strcmp(card_path, "-")) ? stderr : stdout,
            "model digest: %s\n", digest);
    rc = 0;
    goto done;
lib_fail:
    rc = lib_fail(st);
done:
    /* distributed=mpi: an error here is this rank's; the job ends with it, by
     * name (printed above), rather than leave the other ranks waiting */
    if (dist_size > 0 && rc != 0) sb_distributed_abort(rc);
    free(own_data);
    free(own_weight);
    free(own_query);
    free(group_name);
    sb_model_free(init_model);
    sb_model_free(model);
    sb_card_free(card);
    sb_dataset_free(dtrain);
    for (int k = 0; k < nvf; k++) sb_dataset_free(dvalids[k]);
    sb_params_free(params);
    return rc;
}

int sb_cli_train(int argc, char **argv) { return cmd_train(argc, argv); }

/* Write predictions as lines (per values a line separated by sep, 9
 * significant digits: the float round-trips exactly) by the library's output
 * rule (sb_output_open: "-" and devices directly, a regular file through a
 * temporary file and a rename). The error, if any, is in sb_last_error() (one
 * message naming path). The CSV of `predict` (sep ',') and LightGBM's result
 * file of the config form (sep '\t') are this one writer. */
sb_status sb_cli_write_values(const char *path, const float *v, int64_t nrows, int64_t per, char sep) {
    sb_output *o = NULL;
    sb_status st = sb_output_open(path, &o);
    char line[64];
    for (int64_t r = 0; st == SB_OK && r < nrows; r++)
        for (int64_t k = 0; st == SB_OK && k < per; k++) {
            int n = snprintf(line, sizeof line, "%.9g%c", (double)v[r * per + k], k + 1 < per ? sep : '\n');
            st = sb_output_write(o, line, (size_t)n);
        }
    if (st == SB_OK) return sb_output_commit(o);
    sb_output_discard(o);
    return st;
}

static int cmd_predict(int argc, char **argv) {
    const char *model_path = NULL, *data = NULL, *out = NULL, *format = NULL, *device = NULL;
    sb_predict_kind kind = SB_PREDICT_VALUE;
    int outputs = 0; /* --raw, --proba, --leaf, --contrib: one at most */
    int with_std = 0; /* gp: --std */
    for (int i = 0; i < argc; i++) {
        outputs += !strcmp(argv[i], "--raw") || !strcmp(argv[i], "--proba") || !strcmp(argv[i], "--leaf") ||
                   !strcmp(argv[i], "--contrib");
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--model") && has) model_path = argv[++i];
        else if (!strcmp(a, "--data") && has) data = argv[++i];
        else if (!strcmp(a, "--out") && has) out = argv[++i];
        else if (!strcmp(a, "--format") && has) format = argv[++i];
        else if (!strcmp(a, "--raw")) kind = SB_PREDICT_RAW;
        else if (!strcmp(a, "--proba")) kind = SB_PREDICT_PROBA;
        else if (!strcmp(a, "--leaf")) kind = SB_PREDICT_LEAF;
        else if (!strcmp(a, "--contrib")) kind = SB_PREDICT_CONTRIB;
        else if (!strcmp(a, "--std")) with_std = 1;
        else if (!strncmp(a, "device=", 7)) device = a + 7;
        else if (!strcmp(a, "--threads") && has) {
            if (parse_threads(argv[++i])) return EXIT_ERROR;
        } else return usage_error("predict: unexpected argument '%s'", a);
    }
    if (!model_path || !data || !out)
        return usage_error("predict: --model, --data and --out are required (--out -: standard output)%s", "");
    if (outputs > 1) return usage_error("predict: --raw, --proba, --leaf and --contrib each choose the output: give one%s", "");
    if (threads_ready()) return EXIT_ERROR;
    {
        /* a gaussian process model predicts float64 rows (cli/gp_cli.c); any other file goes on below */
        sb_gp *g = NULL;
        const sb_status gst = sb_gp_load(model_path, &g);
        if (gst == SB_ERR_OUT_OF_MEMORY) return lib_fail(gst); /* not "another family": no memory to tell */
        if (gst == SB_OK) {
            int grc;
            sb_status dst = SB_OK;
            if (kind != SB_PREDICT_VALUE || outputs || format)
                grc = usage_error("predict: a gp model writes its mean (--std: and standard deviation) from a CSV: "
                                  "--raw, --proba, --leaf, --contrib and --format are for other families%s", "");
            else if (device && (dst = sb_gp_set_device(g, device)) != SB_OK)
                grc = lib_fail(dst); /* a device (cpu, cuda, opencl, gpu) refused by name */
            else
                grc = sb_cli_predict_gp(g, data, out, with_std);
            sb_gp_free(g);
            return grc;
        }
    }
    {
        /* an mlp model predicts float32 rows from a CSV (cli/mlp_cli.c) */
        sb_mlp *net = NULL;
        const sb_status mst = sb_mlp_load(model_path, &net);
        if (mst == SB_ERR_OUT_OF_MEMORY) return lib_fail(mst); /* not "another family": no memory to tell */
        if (mst == SB_OK) {
            int mrc;
            if ((kind != SB_PREDICT_VALUE && kind != SB_PREDICT_PROBA) || with_std || format ||
                (device && strcmp(device, "cpu")))
                mrc = usage_error("predict: an mlp model writes its class codes or values (--proba: probabilities) on "
                                  "the CPU from a CSV: --raw, --leaf, --contrib, --std, --format and a device (here "
                                  "'%s') are for other families", device ? device : "cpu");
            else
                mrc = sb_cli_predict_mlp(net, data, out, kind == SB_PREDICT_PROBA);
            sb_mlp_free(net);
            return mrc;
        }
    }
    {
        /* an lm model generates bytes; it has no rows to predict (cli/lm_cli.c) */
        sb_lm *lm = NULL;
        const sb_status lst = sb_lm_load(model_path, &lm);
        if (lst == SB_ERR_OUT_OF_MEMORY) return lib_fail(lst); /* not "another family": no memory to tell */
        if (lst == SB_OK) {
            sb_lm_free(lm);
            return usage_error("predict: '%s' is an lm model: it generates bytes after a prompt (samebits generate "
                               "--model-file MODEL --prompt TEXT), it does not predict rows", model_path);
        }
    }
    if (with_std) return usage_error("predict: --std is for gp models only%s", "");
    sb_model *model = NULL;
    sb_dataset *d = NULL;
    float *pred = NULL;
    int rc = EXIT_ERROR;
    sb_status st = sb_model_load(model_path, &model);
    int64_t lkind = -1;
    if (st == SB_OK && sb_model_get_int(model, "kind", &lkind) == SB_OK && lkind == 5 && kind == SB_PREDICT_VALUE)
        kind = SB_PREDICT_TRANSFORM; /* PCA: predict writes the projection */
    sb_model_info minfo;
    if (st == SB_OK && kind == SB_PREDICT_VALUE && !outputs && sb_model_get_info(model, &minfo) == SB_OK &&
        minfo.family == SB_FAMILY_UMAP)
        kind = SB_PREDICT_TRANSFORM; /* UMAP: predict writes the embedding, as transform does */
    if (st == SB_OK) st = sb_dataset_read_for_model(model, data, format, &d);
    size_t need = 0;
    sb_model_info info;
    if (st == SB_OK && sb_model_get_info(model, &info) == SB_OK && info.family == SB_FAMILY_KDE) {
        /* kernel density: predict writes each row's log density (sb_model_score_samples_on), on the
         * device asked (the same bits) */
        if (kind != SB_PREDICT_VALUE) {
            rc = usage_error("predict: a kde model writes its log densities: --raw, --proba, --leaf and --contrib "
                             "are for other families%s", "");
            sb_dataset_free(d);
            sb_model_free(model);
            return rc;
        }
        if (st == SB_OK) st = sb_model_score_samples_on(model, d, device, NULL, 0, &need);
        if (st == SB_OK && !(pred = malloc(sizeof(float) * (need ? need : 1)))) st = SB_ERR_OUT_OF_MEMORY;
        if (st == SB_OK) st = sb_model_score_samples_on(model, d, device, pred, need, NULL);
    } else {
        if (st == SB_OK) st = sb_model_predict(model, d, kind, NULL, 0, &need);
        if (st == SB_OK && !(pred = malloc(sizeof(float) * (need ? need : 1)))) st = SB_ERR_OUT_OF_MEMORY;
        if (st == SB_OK) st = sb_model_predict_on(model, d, kind, device, pred, need, NULL);
    }
    if (st == SB_OK) {
        int64_t nrows;
        sb_dataset_shape(d, &nrows, NULL);
        int64_t per = nrows ? (int64_t)need / nrows : 1;
        st = sb_cli_write_values(out, pred, nrows, per, ',');
    }
    if (st == SB_OK) rc = 0;
    else rc = lib_fail(st);
    free(pred);
    sb_dataset_free(d);
    sb_model_free(model);
    return rc;
}

/* samebits transform: the model's SB_PREDICT_TRANSFORM of each row (UMAP's
 * embedding, PCA's projection, k-means' distances; any other family refused
 * by the library, by name), one line a row. */
static int cmd_transform(int argc, char **argv) {
    const char *model_path = NULL, *data = NULL, *out = NULL, *format = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const int has = i + 1 < argc;
        if (!strcmp(a, "--model") && has) model_path = argv[++i];
        else if (!strcmp(a, "--data") && has) data = argv[++i];
        else if (!strcmp(a, "--out") && has) out = argv[++i];
        else if (!strcmp(a, "--format") && has) format = argv[++i];
        else if (!strcmp(a, "--threads") && has) {
            if (parse_threads(argv[++i])) return EXIT_ERROR;
        } else return usage_error("transform: unexpected argument '%s'", a);
    }
    if (!model_path || !data || !out)
        return usage_error("transform: --model, --data and --out are required (--out -: standard output)%s", "");
    if (threads_ready()) return EXIT_ERROR;
    sb_model *model = NULL;
    sb_dataset *d = NULL;
    float *v = NULL;
    size_t need = 0;
    int64_t nrows = 0;
    sb_status st = sb_model_load(model_path, &model);
    if (st == SB_OK) st = sb_dataset_read_for_model(model, data, format, &d);
    if (st == SB_OK) st = sb_model_predict(model, d, SB_PREDICT_TRANSFORM, NULL, 0, &need);
    if (st == SB_OK && !(v = malloc(sizeof(float) * (need ? need : 1)))) st = SB_ERR_OUT_OF_MEMORY;
    if (st == SB_OK) st = sb_model_predict(model, d, SB_PREDICT_TRANSFORM, v, need, NULL);
    if (st == SB_OK) sb_dataset_shape(d, &nrows, NULL);
    if (st == SB_OK) st = sb_cli_write_values(out, v, nrows, nrows ? (int64_t)need / nrows : 1, ',');
    const int rc = st == SB_OK ? 0 : lib_fail(st);
    free(v);
    sb_dataset_free(d);
    sb_model_free(model);
    return rc;
}

static int cmd_digest(int argc, char **argv) {
    if (argc != 1) return usage_error("digest: expected one model file%s", "");
    sb_model *m = NULL;
    sb_status st = sb_model_load(argv[0], &m);
    if (st != SB_OK) return lib_fail(st);
    char hex[65];
    st = sb_model_digest(m, hex);
    sb_model_free(m);
    if (st != SB_OK) return lib_fail(st);
    printf("%s\n", hex);
    return 0;
}

/* Text to path by the library's output rule (a complete file or none). */
static sb_status write_text(const char *path, const char *text, size_t n) {
    sb_output *o = NULL;
    sb_status st = sb_output_open(path, &o);
    if (st == SB_OK) st = sb_output_write(o, text, n);
    if (st == SB_OK) return sb_output_commit(o);
    sb_output_discard(o);
    return st;
}

/* samebits dump MODEL [--format json|text] [--out FILE]: sb_model_dump. */
static int cmd_dump(int argc, char **argv) {
    const char *model_path = NULL, *format = "json", *out = "-";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--format") && has) format = argv[++i];
        else if (!strcmp(a, "--out") && has) out = argv[++i];
        else if (a[0] != '-' && !model_path) model_path = a;
        else return usage_error("dump: unexpected argument '%s'", a);
    }
    if (!model_path) return usage_error("dump: which model? (samebits dump MODEL [--format json|text])%s", "");
    if (strcmp(format, "json") && strcmp(format, "text"))
        return usage_error("dump: --format is json or text, not '%s'", format);
    sb_model *m = NULL;
    char *text = NULL;
    size_t need = 0;
    sb_status st = sb_model_load(model_path, &m);
    if (st == SB_OK) st = sb_model_dump(m, format, NULL, 0, &need);
    if (st == SB_OK && !(text = malloc(need))) st = SB_ERR_OUT_OF_MEMORY;
    if (st == SB_OK) st = sb_model_dump(m, format, text, need, NULL);
    if (st == SB_OK) st = write_text(out, text, need - 1);
    free(text);
    sb_model_free(m);
    return st == SB_OK ? 0 : lib_fail(st);
}

/* samebits importance MODEL [--type split|gain] [--out FILE]: one
 * "name,value" line a feature (sb_model_feature_importance; the model's
 * feature names, else f0, f1, ...). */
static int cmd_importance(int argc, char **argv) {
    const char *model_path = NULL, *type = "split", *out = "-";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--type") && has) type = argv[++i];
        else if (!strcmp(a, "--out") && has) out = argv[++i];
        else if (a[0] != '-' && !model_path) model_path = a;
        else return usage_error("importance: unexpected argument '%s'", a);
    }
    if (!model_path) return usage_error("importance: which model? (samebits importance MODEL [--type split|gain])%s", "");
    int32_t t = !strcmp(type, "split") ? 0 : !strcmp(type, "gain") ? 1 : -1;
    if (t < 0) return usage_error("importance: --type is split or gain, not '%s'", type);
    sb_model *m = NULL;
    float *v = NULL;
    char *text = NULL, *json = NULL;
    size_t nf = 0, jn = 0;
    sb_status st = sb_model_load(model_path, &m);
    if (st == SB_OK) st = sb_model_feature_importance(m, t, NULL, 0, &nf);
    if (st == SB_OK && !(v = malloc(sizeof(float) * (nf ? nf : 1)))) st = SB_ERR_OUT_OF_MEMORY;
    if (st == SB_OK) st = sb_model_feature_importance(m, t, v, nf, NULL);
    /* the names, from the dump's header (the one place the API gives them) */
    if (st == SB_OK) st = sb_model_dump(m, "json", NULL, 0, &jn);
    if (st == SB_OK && !(json = malloc(jn))) st = SB_ERR_OUT_OF_MEMORY;
    if (st == SB_OK) st = sb_model_dump(m, "json", json, jn, NULL);
    size_t len = 0, tcap = 0;
    if (st == SB_OK) {
        const char *p = strstr(json, "\"feature_names\":[");
        p = p ? p + 17 : json;
        for (size_t f = 0; f < nf && st == SB_OK; f++) {
            /* the f-th JSON string of the list, unescaped */
            char name[1024];
            size_t k = 0;
            while (*p && *p != '"') p++;
            if (*p) p++;
            while (*p && *p != '"') {
                char c = *p++;
                if (c == '\\' && *p) {
                    c = *p++;
                    if (c == 'u') { unsigned u = 0; sscanf(p, "%4x", &u); p += 4; c = (char)u; }
                }
                if (k + 1 < sizeof name) name[k++] = c;
            }
            if (*p) p++;
            name[k] = 0;
            char line[1100];
            int n = snprintf(line, sizeof line, "%s,%.9g\n", name, (double)v[f]);
            if (len + (size_t)n + 1 > tcap) {
                tcap = (len + (size_t)n + 1) * 2;
                char *q = realloc(text, tcap);
                if (!q) { st = SB_ERR_OUT_OF_MEMORY; break; }
                text = q;
            }
            memcpy(text + len, line, (size_t)n + 1);
            len += (size_t)n;
        }
    }
    if (st == SB_OK) st = write_text(out, text ? text : "", len);
    free(text);
    free(json);
    free(v);
    sb_model_free(m);
    return st == SB_OK ? 0 : lib_fail(st);
}

/* Print the usage's entry of one command (its lines from "  CMD" to the next
 * command's); 0 when the command has one, -1 otherwise. */
static int command_help(const char *cmd) {
    size_t n = strlen(cmd);
    const char *p = strstr(k_usage, "commands:\n");
    int printing = 0, found = 0;
    while (p && *p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) + 1 : strlen(p);
        /* an entry starts with two spaces and a name; its continuation lines with more */
        int entry = len > 2 && p[0] == ' ' && p[1] == ' ' && p[2] != ' ';
        if (entry) printing = strncmp(p + 2, cmd, n) == 0 && (p[2 + n] == ' ' || p[2 + n] == '\n');
        else if (len <= 1 || p[0] != ' ') printing = 0;
        if (printing) {
            if (!found) fputs("usage: samebits\n", stdout);
            fwrite(p, 1, len, stdout);
            found = 1;
        }
        p = e ? e + 1 : NULL;
    }
    if (found) fputs("\nrun 'samebits help' for every command and the environment\n", stdout);
    return found ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(k_usage, stderr);
        return EXIT_ERROR;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        if (argc > 2 && command_help(argv[2]) == 0) return 0;
        fputs(k_usage, stdout);
        return 0;
    }
    for (int i = 2; i < argc; i++) /* COMMAND --help: that command's lines of the usage, exit 0 */
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            if (command_help(cmd) == 0) return 0;
            if (cmd[0] != '-' && strchr(cmd, '=') && command_help("config=FILE") == 0) return 0; /* LightGBM's form */
            return usage_error("unknown command '%s'", cmd);
        }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("samebits %s (profile %s)\n", sb_version(), sb_profile_version());
        return 0;
    }
    if (strcmp(cmd, "doctor") == 0) return cmd_doctor(argc - 2, argv + 2);
    if (strcmp(cmd, "fixture") == 0 && argc > 2 && strcmp(argv[2], "inputs") == 0)
        return sb_cli_fixture_inputs(argc - 3, argv + 3);
    if (strcmp(cmd, "fixture") == 0) return cmd_fixture(argc - 2, argv + 2);
    if (strcmp(cmd, "verify") == 0) return sb_cli_verify(argc - 2, argv + 2);
    if (strcmp(cmd, "check-fixture") == 0) return sb_cli_check_fixture(argc - 2, argv + 2);
    if (strcmp(cmd, "conformance") == 0) return sb_cli_conformance(argc - 2, argv + 2);
    if (strcmp(cmd, "card") == 0) return cmd_card(argc - 2, argv + 2);
    if (strcmp(cmd, "train") == 0) return cmd_train(argc - 2, argv + 2);
    if (strcmp(cmd, "predict") == 0) return cmd_predict(argc - 2, argv + 2);
    if (strcmp(cmd, "generate") == 0) return sb_cli_generate(argc - 2, argv + 2);
    if (strcmp(cmd, "transform") == 0) return cmd_transform(argc - 2, argv + 2);
    if (strcmp(cmd, "forecast") == 0) return sb_cli_forecast(argc - 2, argv + 2);
    if (strcmp(cmd, "digest") == 0) return cmd_digest(argc - 2, argv + 2);
    if (strcmp(cmd, "dump") == 0) return cmd_dump(argc - 2, argv + 2);
    if (strcmp(cmd, "importance") == 0) return cmd_importance(argc - 2, argv + 2);
    if (cmd[0] != '-' && strchr(cmd, '=')) return sb_cli_lightgbm(argc - 1, argv + 1); /* LightGBM's form */
    return usage_error("unknown command '%s'", cmd);
}
