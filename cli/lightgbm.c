/*
 * lightgbm.c: LightGBM's command line, "samebits config=train.conf [key=value ...]"
 * (docs/cli.md, "LightGBM's config form"). The pairs of the command line and
 * of the config file are gathered under LightGBM's main key names (aliases
 * folded), the command line's winning over the file's, then translated: a
 * training task becomes the arguments of "samebits train --model gbdt" (so
 * that the same code reads the data, its .weight and .query files, trains and
 * writes the model), a prediction task is run here. A key LightGBM uses only
 * to tune its own engine is accepted with a note that it has no effect here;
 * a key whose meaning samebits does not have, and an unknown key, are errors
 * that name it, before any data is read.
 */
#include "samebits_cert.h"
#include "lightgbm.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_ERROR 2
#include "cli_fail.h"

enum lk_kind {
    LK_CONFIG, LK_TASK, LK_DATA, LK_VALID, LK_OUTPUT_MODEL, LK_INPUT_MODEL, LK_OUTPUT_RESULT, LK_THREADS,
    LK_LABEL, LK_HEADER, LK_RAW, LK_BAG_FRACTION, LK_BAG_FREQ, LK_FIRST_METRIC, LK_WEIGHT_COL,
    LK_GROUP_COL, LK_IGNORE_COL, LK_CATEGORICAL,
    LK_PASS,       /* a gradient-boosting parameter: passed on as sb (the library checks its value) */
    LK_NOTE,       /* tunes LightGBM's engine only: accepted, a note printed */
    LK_ONLY_VALUE  /* accepted with the one value sb names (the only one that means the same here) */
};

typedef struct lk_key {
    const char *names; /* LightGBM's main name first, then its aliases, '|'-separated */
    enum lk_kind kind;
    const char *sb;    /* LK_PASS: samebits' key; LK_ONLY_VALUE: the accepted value */
} lk_key;

/* LightGBM's keys that samebits takes (names and aliases from LightGBM's
 * Parameters documentation). */
static const lk_key k_keys[] = {
    {"config|config_file", LK_CONFIG, NULL},
    {"task|task_type", LK_TASK, NULL},
    {"data|train|train_data|train_data_file|data_filename", LK_DATA, NULL},
    {"valid|test|valid_data|valid_data_file|test_data|test_data_file|valid_filenames", LK_VALID, NULL},
    {"output_model|model_output|model_out", LK_OUTPUT_MODEL, NULL},
    {"input_model|model_input|model_in", LK_INPUT_MODEL, NULL},
    {"output_result|predict_result|prediction_result|predict_name|prediction_name|pred_name|name_pred",
     LK_OUTPUT_RESULT, NULL},
    {"num_threads|num_thread|nthread|nthreads|n_jobs", LK_THREADS, NULL},
    {"label_column|label", LK_LABEL, NULL},
    {"weight_column|weight", LK_WEIGHT_COL, NULL},
    {"group_column|group|group_id|query_column|query|query_id", LK_GROUP_COL, NULL},
    {"ignore_column|ignore_feature|blacklist", LK_IGNORE_COL, NULL},
    {"categorical_feature|cat_feature|categorical_column|cat_column|categorical_features", LK_CATEGORICAL, NULL},
    {"header|has_header", LK_HEADER, NULL},
    {"predict_raw_score|is_predict_raw_score|predict_rawscore|raw_score", LK_RAW, NULL},
    {"predict_leaf_index|is_predict_leaf_index|leaf_index", LK_RAW, NULL},
    {"predict_contrib|is_predict_contrib|contrib", LK_RAW, NULL},
    {"boosting|boosting_type|boost", LK_PASS, "boosting"},
    {"drop_rate|rate_drop", LK_PASS, "drop_rate"},
    {"max_drop", LK_PASS, "max_drop"},
    {"skip_drop", LK_PASS, "skip_drop"},
    {"uniform_drop", LK_PASS, "uniform_drop"},
    {"xgboost_dart_mode", LK_PASS, "xgboost_dart_mode"},
    {"drop_seed", LK_PASS, "drop_seed"},
    {"bagging_fraction|sub_row|subsample|bagging", LK_BAG_FRACTION, NULL},
    {"bagging_freq|subsample_freq", LK_BAG_FREQ, NULL},
    {"is_provide_training_metric|training_metric|is_training_metric|train_metric", LK_PASS, "train_metric"},
    {"first_metric_only", LK_FIRST_METRIC, NULL},
    {"objective|objective_type|app|application|loss", LK_PASS, "objective"},
    {"num_iterations|num_iteration|n_iter|num_tree|num_trees|num_round|num_rounds|nrounds|num_boost_round|"
     "n_estimators|max_iter", LK_PASS, "n_estimators"},
    {"learning_rate|shrinkage_rate|eta", LK_PASS, "learning_rate"},
    {"num_leaves|num_leaf|max_leaves|max_leaf|max_leaf_nodes", LK_PASS, "num_leaves"},
    {"max_depth", LK_PASS, "max_depth"},
    {"min_data_in_leaf|min_data_per_leaf|min_data|min_child_samples|min_samples_leaf", LK_PASS, "min_samples_leaf"},
    {"min_sum_hessian_in_leaf|min_sum_hessian_per_leaf|min_sum_hessian|min_hessian|min_child_weight", LK_PASS,
     "min_child_weight"},
    {"feature_fraction|sub_feature|colsample_bytree", LK_PASS, "colsample"},
    {"early_stopping_round|early_stopping_rounds|early_stopping|n_iter_no_change", LK_PASS, "early_stopping_rounds"},
    {"lambda_l2|reg_lambda|lambda|l2_regularization", LK_PASS, "reg_lambda"},
    {"lambda_l1|reg_alpha|l1_regularization", LK_PASS, "reg_alpha"},
    {"alpha", LK_PASS, "alpha"},
    {"tweedie_variance_power", LK_PASS, "tweedie_variance_power"},
    {"poisson_max_delta_step", LK_PASS, "poisson_max_delta_step"},
    {"min_gain_to_split|min_split_gain", LK_PASS, "min_split_gain"},
    {"max_bin|max_bins", LK_PASS, "max_bin"},
    {"bin_construct_sample_cnt|subsample_for_bin", LK_PASS, "bin_sample_rows"},
    {"seed|random_seed|random_state", LK_PASS, "seed"},
    {"device_type|device", LK_PASS, "device"},
    {"num_class|num_classes", LK_PASS, "num_class"},
    {"boost_from_average", LK_PASS, "boost_from_average"},
    {"metric|metrics|metric_types", LK_PASS, "metric"},
    {"metric_freq|output_freq", LK_PASS, "eval_period"},
    {"eval_at|ndcg_eval_at|ndcg_at|map_eval_at|map_at", LK_PASS, "eval_at"},
    {"lambdarank_truncation_level", LK_PASS, "lambdarank_truncation_level"},
    {"lambdarank_norm", LK_PASS, "lambdarank_norm"},
    {"label_gain", LK_PASS, "label_gain"},
    {"sigmoid", LK_PASS, "sigmoid"},
    {"monotone_constraints|mc|monotone_constraint|monotonic_cst", LK_PASS, "monotone_constraints"},
    {"monotone_constraints_method|mc_method|monotone_constraining_method", LK_PASS, "monotone_constraints_method"},
    {"monotone_penalty|monotone_splits_penalty|ms_penalty|mc_penalty", LK_PASS, "monotone_penalty"},
    {"interaction_constraints", LK_PASS, "interaction_constraints"},
    {"feature_fraction_bynode|sub_feature_bynode|colsample_bynode", LK_PASS, "colsample_bynode"},
    {"max_cat_to_onehot", LK_PASS, "max_cat_to_onehot"},
    {"max_cat_threshold", LK_PASS, "max_cat_threshold"},
    {"cat_smooth", LK_PASS, "cat_smooth"},
    {"cat_l2", LK_PASS, "cat_l2"},
    {"min_data_per_group", LK_PASS, "min_data_per_group"},
    {"tree_learner|tree|tree_type|tree_learner_type", LK_NOTE, NULL},
    {"is_enable_sparse|is_sparse|enable_sparse|sparse", LK_NOTE, NULL},
    {"use_two_round_loading|two_round_loading|two_round", LK_NOTE, NULL},
    {"force_col_wise", LK_PASS, "force_col_wise"},
    {"force_row_wise", LK_PASS, "force_row_wise"},
    {"histogram_pool_size|hist_pool_size", LK_NOTE, NULL},
    {"deterministic", LK_NOTE, NULL},
    {"verbosity|verbose", LK_NOTE, NULL},
    {"num_machines|num_machine", LK_ONLY_VALUE, "1"},
    {"save_binary|is_save_binary|is_save_binary_file", LK_ONLY_VALUE, "false"},
    /* LightGBM's features samebits does not have, taken at their defaults (which switch them off) */
    {"max_delta_step|max_tree_output|max_leaf_output", LK_ONLY_VALUE, "0"},
    {"path_smooth", LK_ONLY_VALUE, "0"},
    {"is_unbalance|unbalance|unbalanced_sets", LK_PASS, "is_unbalance"},
    {"scale_pos_weight", LK_PASS, "scale_pos_weight"},
    {"extra_trees|extra_tree", LK_ONLY_VALUE, "false"},
    {"linear_tree|linear_trees", LK_ONLY_VALUE, "false"},
};
#define NKEYS (sizeof k_keys / sizeof k_keys[0])

/* One pair as given: where it came from (for messages), its key's entry. */
typedef struct lk_pair {
    const lk_key *key;
    char *given;  /* the name as written */
    char *value;
    char where[160]; /* "the command line" or "FILE line N" */
} lk_pair;

typedef struct lk_set {
    lk_pair *pairs;
    size_t n, cap;
} lk_set;

static int failf(const char *status, const char *fmt, const char *a, const char *b, const char *c) {
    fprintf(stderr, "samebits: error: %s: ", status);
    fprintf(stderr, fmt, a, b, c);
    fputc('\n', stderr);
    return EXIT_ERROR;
}

/* The entry whose names include name, or NULL. */
static const lk_key *find_key(const char *name) {
    size_t len = strlen(name);
    for (size_t k = 0; k < NKEYS; k++)
        for (const char *g = k_keys[k].names; *g;) {
            size_t gl = strcspn(g, "|");
            if (gl == len && !memcmp(g, name, len)) return &k_keys[k];
            g += gl + (g[gl] == '|');
        }
    return NULL;
}

/* LightGBM's main name of entry k (its first name), into buf. */
static const char *main_name(const lk_key *k, char *buf, size_t cap) {
    size_t l = strcspn(k->names, "|");
    if (l >= cap) l = cap - 1;
    memcpy(buf, k->names, l);
    buf[l] = '\0';
    return buf;
}

static lk_pair *find_pair(const lk_set *s, const lk_key *k) {
    for (size_t i = 0; i < s->n; i++)
        if (s->pairs[i].key == k) return &s->pairs[i];
    return NULL;
}

static void set_free(lk_set *s) {
    for (size_t i = 0; i < s->n; i++) {
        free(s->pairs[i].given);
        free(s->pairs[i].value);
    }
    free(s->pairs);
}

/* Strip the blanks at both ends of s in place; returns s's new start. */
static char *trim(char *s) {
    while (*s && isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

/* Add key=value from where to s. An unknown key, a key given twice in one
 * source (two aliases included), and a config key inside a file are errors
 * named here (status 2 returned); a pair of the file whose key the command
 * line already holds is dropped with a note (the command line wins, as in
 * LightGBM); 0 otherwise. */
static int add_pair(lk_set *s, const char *key, const char *value, const char *where, int from_file) {
    const lk_key *k = find_key(key);
    char mn[64];
    if (!k)
        return failf("SB_ERR_INVALID_ARGUMENT",
                     "unknown parameter '%s' (%s): not a LightGBM key that samebits takes (docs/cli.md lists them)%s",
                     key, where, "");
    if (k->kind == LK_CONFIG && from_file)
        return failf("SB_ERR_INVALID_ARGUMENT", "'%s' (%s): a config file cannot name another config file%s", key,
                     where, "");
    lk_pair *had = find_pair(s, k);
    if (had && from_file && !strcmp(had->where, "the command line")) {
        fprintf(stderr, "samebits: note: %s=%s (%s) is overridden by the command line's %s=%s\n", key, value, where,
                had->given, had->value);
        return 0;
    }
    if (had) { /* twice in one source: the command line, or the file */
        char both[400];
        snprintf(both, sizeof both, "'%s' (%s) and '%s' (%s)", had->given, had->where, key, where);
        return failf("SB_ERR_INVALID_ARGUMENT", "parameter %s is given twice: %s; give it once%s",
                     main_name(k, mn, sizeof mn), both, "");
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 32;
        lk_pair *p = realloc(s->pairs, cap * sizeof *p);
        if (!p) return failf("SB_ERR_OUT_OF_MEMORY", "reading the parameters%s%s%s", "", "", "");
        s->pairs = p;
        s->cap = cap;
    }
    lk_pair *p = &s->pairs[s->n];
    p->key = k;
    p->given = strdup(key);
    p->value = strdup(value);
    snprintf(p->where, sizeof p->where, "%s", where);
    if (!p->given || !p->value) {
        free(p->given);
        free(p->value);
        return failf("SB_ERR_OUT_OF_MEMORY", "reading the parameters%s%s%s", "", "", "");
    }
    s->n++;
    return 0;
}

/* Read LightGBM's config file path into s: one key = value a line, blanks
 * around both allowed, '#' to the end of a line a comment, blank lines
 * skipped. A line without '=' is an error naming the file and line. */
static int read_config(lk_set *s, const char *path) {
    FILE *fp = fopen(path, "r");
    if (!fp) return failf("SB_ERR_IO", "cannot open config file '%s': %s%s", path, strerror(errno), "");
    char line[4096], where[160];
    long no = 0;
    int rc = 0;
    while (!rc && fgets(line, sizeof line, fp)) {
        no++;
        snprintf(where, sizeof where, "%s line %ld", path, no);
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            rc = failf("SB_ERR_INVALID_INPUT", "%s: a line longer than 4095 bytes%s%s", where, "", "");
            break;
        }
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *t = trim(line);
        if (!*t) continue;
        char *eq = strchr(t, '=');
        if (!eq) {
            for (char *c = t; *c; c++) /* no raw bytes in the message */
                if (!isprint((unsigned char)*c)) *c = '?';
            rc = failf("SB_ERR_INVALID_INPUT", "%s: expected key = value, got '%.60s'%s", where, t, "");
            break;
        }
        *eq = '\0';
        char *key = trim(t), *value = trim(eq + 1);
        if (!*key) {
            rc = failf("SB_ERR_INVALID_INPUT", "%s: a value without a key%s%s", where, "", "");
            break;
        }
        rc = add_pair(s, key, value, where, 1);
    }
    if (!rc && ferror(fp)) rc = failf("SB_ERR_IO", "reading config file '%s': %s%s", path, strerror(errno), "");
    fclose(fp);
    return rc;
}

/* The value of entry names' key in s, or dflt. */
static const char *value_of(const lk_set *s, const char *name, const char *dflt) {
    const lk_pair *p = find_pair(s, find_key(name));
    return p ? p->value : dflt;
}

/* LightGBM's true/false (also 1/0, as it reads them): 1, 0, or -1 for
 * anything else. */
static int truth(const char *v) {
    if (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "True") || !strcmp(v, "TRUE")) return 1;
    if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "False") || !strcmp(v, "FALSE")) return 0;
    return -1;
}

/* A list value as "a,b,c": blanks around the commas dropped in place; a
 * value with a blank elsewhere, or an '=', is refused (the pair would not
 * reach the trainer whole). 0, or the printed error's status. */
static int tidy_value(lk_pair *p) {
    char *o = p->value;
    for (const char *c = p->value; *c; c++) {
        if (isspace((unsigned char)*c)) {
            const char *a = c;
            while (*a && isspace((unsigned char)*a)) a++;
            int next_comma = *a == ',', prev_comma = o > p->value && o[-1] == ',';
            if (!next_comma && !prev_comma)
                return failf("SB_ERR_INVALID_ARGUMENT", "parameter %s='%s' (%s) has a blank inside its value",
                             p->given, p->value, p->where);
            c = a - 1;
            continue;
        }
        if (*c == '=')
            return failf("SB_ERR_INVALID_ARGUMENT", "parameter %s='%s' (%s) has an '=' inside its value", p->given,
                         p->value, p->where);
        *o++ = *c;
    }
    *o = '\0';
    return 0;
}

/* LightGBM's objective names for squared-error regression, which samebits
 * calls regression. */
static const char *objective_value(const char *v) {
    static const char *const k_l2[] = {"regression_l2", "mean_squared_error", "mse", "l2_root",
                                       "root_mean_squared_error", "rmse"};
    for (size_t i = 0; i < sizeof k_l2 / sizeof k_l2[0]; i++)
        if (!strcmp(v, k_l2[i])) return "regression";
    return v;
}

/* 1 when the first line of path looks like LibSVM (a "index:value" token),
 * 0 otherwise (a missing file is left for the reader to name). */
static int looks_libsvm(const char *path) {
    FILE *fp = fopen(path, "r");
    if (!fp) return 0;
    char line[4096];
    int yes = fgets(line, sizeof line, fp) && strchr(line, ':') != NULL;
    fclose(fp);
    return yes;
}

/* How the data is read: *format and *label for sb_dataset_read (label NULL:
 * LibSVM, whose label is the first token). LightGBM's defaults: no header,
 * the label in column 0. A header (header=true) needs label_column=name:COL;
 * a name without a header, or a column index that is not one, is refused. */
static int data_form(const lk_set *s, const char *data, const char **format, const char **label) {
    const char *hv = value_of(s, "header", "false"), *lv = value_of(s, "label_column", "");
    int header = truth(hv);
    if (header < 0) return failf("SB_ERR_INVALID_ARGUMENT", "parameter header='%s' must be true or false%s%s", hv, "", "");
    if (looks_libsvm(data)) {
        *format = "libsvm";
        *label = NULL;
        if (*lv && strcmp(lv, "0") != 0)
            return failf("SB_ERR_INVALID_ARGUMENT", "label_column='%s': a LibSVM file's label is the first token of "
                         "each line (%s)%s", lv, data, "");
        return 0;
    }
    if (header) {
        if (strncmp(lv, "name:", 5) != 0 || !lv[5])
            return failf("SB_ERR_INVALID_ARGUMENT", "header=true: give the label as label_column=name:COLUMN (got "
                         "'%s'; samebits reads a headed file's label by name)%s%s", lv, "", "");
        *format = "csv";
        *label = lv + 5;
        return 0;
    }
    if (!strncmp(lv, "name:", 5))
        return failf("SB_ERR_INVALID_ARGUMENT", "label_column='%s' names a column, but the data has no header "
                     "(header=false): give its 0-based index%s%s", lv, "", "");
    *format = "tsv-noheader";
    *label = *lv ? lv : "0";
    return 0;
}

/* LightGBM's column spec (weight_column, group_column, ignore_column): "name:A,B"
 * (columns by name) or "0,3" (0-based indices among the features, the label not
 * counted) into samebits train's form in out ("A,B", or "#0,#3"); many says
 * whether a list is allowed. Nonzero (printed) when malformed. */
static int column_spec(const char *key, const char *v, int many, char *out, size_t cap) {
    out[0] = 0;
    if (!strncmp(v, "name:", 5)) {
        if (!v[5] || (!many && strchr(v + 5, ',')) || strlen(v + 5) >= cap)
            return failf("SB_ERR_INVALID_ARGUMENT", "%s='%s': name:COLUMN%s", key, v, many ? "[,COLUMN...]" : "");
        memcpy(out, v + 5, strlen(v + 5) + 1);
        return 0;
    }
    size_t used = 0;
    const char *p = v;
    while (*p) {
        const char *e = strchr(p, ',');
        const size_t n = e ? (size_t)(e - p) : strlen(p);
        for (size_t i = 0; i < n; i++)
            if (p[i] < '0' || p[i] > '9')
                return failf("SB_ERR_INVALID_ARGUMENT", "%s='%s': 0-based column indices (the label not counted) or "
                             "name:COLUMN%s", key, v, "");
        if (!n || used + n + 3 > cap || (!many && e))
            return failf("SB_ERR_INVALID_ARGUMENT", "%s='%s': %s", key, v, many ? "a list of indices" : "one index");
        used += (size_t)snprintf(out + used, cap - used, "%s#%.*s", used ? "," : "", (int)n, p);
        p = e ? e + 1 : p + n;
    }
    if (!used) return failf("SB_ERR_INVALID_ARGUMENT", "%s is empty%s%s", key, "", "");
    return 0;
}

/* Growing argument vector for "samebits train". */
typedef struct lk_args {
    char *v[128];
    int n;
    char store[16384];
    size_t used;
} lk_args;

static int push(lk_args *a, const char *x, const char *y) {
    size_t need = strlen(x) + (y ? strlen(y) : 0) + 1;
    if (a->n >= 127 || a->used + need > sizeof a->store)
        return failf("SB_ERR_LIMIT", "too many parameters%s%s%s", "", "", "");
    char *d = a->store + a->used;
    snprintf(d, need, "%s%s", x, y ? y : "");
    a->v[a->n++] = d;
    a->used += need;
    return 0;
}

static int task_train(lk_set *s) {
    lk_args a;
    a.n = 0;
    a.used = 0;
    const char *data = value_of(s, "data", NULL), *valid = value_of(s, "valid", NULL);
    if (!data || !*data)
        return failf("SB_ERR_INVALID_ARGUMENT", "task=train needs data=FILE (the training data)%s%s%s", "", "", "");
    const lk_pair *im = find_pair(s, find_key("input_model"));
    const char *init_model = im ? im->value : NULL; /* LightGBM's continued training: --init-model */
    for (size_t i = 0; i < s->n; i++)
        if (s->pairs[i].key->kind == LK_OUTPUT_RESULT || s->pairs[i].key->kind == LK_RAW)
            fprintf(stderr, "samebits: note: %s=%s (%s) is a prediction key: training does not use it\n",
                    s->pairs[i].given, s->pairs[i].value, s->pairs[i].where);
    const char *format, *label;
    if (data_form(s, data, &format, &label)) return EXIT_ERROR;
    if (push(&a, "--model", NULL) || push(&a, "gbdt", NULL) || push(&a, "--data", NULL) || push(&a, data, NULL) ||
        push(&a, "--format", NULL) || push(&a, format, NULL) ||
        push(&a, "--out", NULL) || push(&a, value_of(s, "output_model", "LightGBM_model.txt"), NULL))
        return EXIT_ERROR;
    if (label && (push(&a, "--label", NULL) || push(&a, label, NULL))) return EXIT_ERROR;
    if (init_model && *init_model && (push(&a, "--init-model", NULL) || push(&a, init_model, NULL))) return EXIT_ERROR;
    /* valid=a.csv,b.csv: one --valid a file, in order (LightGBM's list of validation sets) */
    for (const char *v = valid; v && *v;) {
        const char *e = strchr(v, ',');
        const size_t len = e ? (size_t)(e - v) : strlen(v);
        char file[4096];
        if (len == 0 || len >= sizeof file)
            return failf("SB_ERR_INVALID_ARGUMENT", "valid='%s': %s%s", valid,
                         len ? "a file name longer than 4095 bytes" : "an empty file name in the list", "");
        memcpy(file, v, len);
        file[len] = '\0';
        if (push(&a, "--valid", NULL) || push(&a, file, NULL)) return EXIT_ERROR;
        v = e ? e + 1 : v + len;
    }
    const char *freq = value_of(s, "bagging_freq", "0"), *frac = value_of(s, "bagging_fraction", NULL);
    char *end;
    long bf = strtol(freq, &end, 10);
    if (!*freq || *end || bf < 0)
        return failf("SB_ERR_INVALID_ARGUMENT", "parameter bagging_freq='%s' must be an integer >= 0%s%s", freq, "", "");
    if (frac && bf == 0)
        fprintf(stderr, "samebits: note: bagging_fraction=%s has no effect without bagging_freq > 0 (as in "
                        "LightGBM): every row trains every tree\n", frac);
    if (frac && bf > 0 && (push(&a, "subsample=", frac) || push(&a, "bagging_freq=", freq))) return EXIT_ERROR;
    for (size_t i = 0; i < s->n; i++) {
        lk_pair *p = &s->pairs[i];
        if (p->key->kind != LK_PASS) continue;
        if (tidy_value(p)) return EXIT_ERROR;
        char kv[96];
        snprintf(kv, sizeof kv, "%s=", p->key->sb);
        if (push(&a, kv, !strcmp(p->key->sb, "objective") ? objective_value(p->value) : p->value)) return EXIT_ERROR;
    }
    { /* LightGBM's columns: weights, query groups, columns to leave out */
        static const struct { const char *key, *flag; int many; } k_cols[] = {
            {"weight_column", "--weight-column", 0}, {"group_column", "--group", 0},
            {"ignore_column", "--ignore-column", 1}};
        for (size_t c = 0; c < sizeof k_cols / sizeof k_cols[0]; c++) {
            const char *v = value_of(s, k_cols[c].key, NULL);
            char spec[1024];
            if (!v || !*v) continue;
            if (column_spec(k_cols[c].key, v, k_cols[c].many, spec, sizeof spec)) return EXIT_ERROR;
            if (push(&a, k_cols[c].flag, NULL) || push(&a, spec, NULL)) return EXIT_ERROR;
        }
        /* LightGBM's numbering (the label not counted) or name:; samebits train
         * keeps it across the columns that leave the features */
        const char *cat = value_of(s, "categorical_feature", NULL);
        if (cat && *cat && push(&a, "categorical_feature=", cat)) return EXIT_ERROR;
    }
    { /* LightGBM's first_metric_only (default false: early stopping watches every
       * metric), passed on where it decides something: several metrics */
        const char *fm = value_of(s, "first_metric_only", "false");
        const char *mv = value_of(s, "metric", ""), *ev = value_of(s, "eval_at", "");
        if (truth(fm) == 0 && (strchr(mv, ',') || strchr(ev, ',')) && push(&a, "first_metric_only=false", NULL))
            return EXIT_ERROR;
    }
    /* LightGBM logs every iteration unless metric_freq says otherwise */
    if (!find_pair(s, find_key("metric_freq")) && push(&a, "eval_period=1", NULL)) return EXIT_ERROR;
    const char *th = value_of(s, "num_threads", "0");
    if (strcmp(th, "0") != 0 && (push(&a, "--threads", NULL) || push(&a, th, NULL))) return EXIT_ERROR;
    a.v[a.n] = NULL;
    return sb_cli_train(a.n, a.v);
}

/* LightGBM's prediction task: the model's probabilities (binary, multiclass)
 * or values, raw margins with predict_raw_score=true. A headerless file
 * holds the label column as LightGBM's test files do (label_column, 0 by
 * default; it is dropped); a headed one is matched to the model by name. */
static int task_predict(lk_set *s) {
    const char *data = value_of(s, "data", NULL), *model_path = value_of(s, "input_model", NULL);
    const char *out = value_of(s, "output_result", "LightGBM_predict_result.txt");
    const char *rv = value_of(s, "predict_raw_score", "false");
    if (!data || !*data) return failf("SB_ERR_INVALID_ARGUMENT", "task=predict needs data=FILE%s%s%s", "", "", "");
    if (!model_path || !*model_path)
        return failf("SB_ERR_INVALID_ARGUMENT", "task=predict needs input_model=MODEL (a samebits model file)%s%s%s",
                     "", "", "");
    int raw = truth(rv);
    if (raw < 0)
        return failf("SB_ERR_INVALID_ARGUMENT", "parameter predict_raw_score='%s' must be true or false%s%s", rv, "", "");
    /* LightGBM's explanations: each tree's leaf index, or the TreeSHAP contributions (docs/explain.md) */
    const char *lv = value_of(s, "predict_leaf_index", "false"), *cv = value_of(s, "predict_contrib", "false");
    const int leaf = truth(lv), contrib = truth(cv);
    if (leaf < 0)
        return failf("SB_ERR_INVALID_ARGUMENT", "parameter predict_leaf_index='%s' must be true or false%s%s", lv, "",
                     "");
    if (contrib < 0)
        return failf("SB_ERR_INVALID_ARGUMENT", "parameter predict_contrib='%s' must be true or false%s%s", cv, "", "");
    if (raw + leaf + contrib > 1)
        return failf("SB_ERR_INVALID_ARGUMENT",
                     "predict_raw_score, predict_leaf_index and predict_contrib each choose the output: set one%s%s%s",
                     "", "", "");
    for (size_t i = 0; i < s->n; i++)
        if (s->pairs[i].key->kind == LK_PASS || s->pairs[i].key->kind == LK_VALID ||
            s->pairs[i].key->kind == LK_OUTPUT_MODEL || s->pairs[i].key->kind == LK_BAG_FRACTION ||
            s->pairs[i].key->kind == LK_BAG_FREQ)
            fprintf(stderr, "samebits: note: %s=%s (%s) is a training key: prediction does not use it\n",
                    s->pairs[i].given, s->pairs[i].value, s->pairs[i].where);
    const char *th = value_of(s, "num_threads", "0");
    if (strcmp(th, "0") != 0) {
        int32_t n = 0;
        sb_status st = sb_parse_num_threads(th, "num_threads", &n);
        if (st == SB_OK) st = sb_set_num_threads(n);
        if (st != SB_OK) return lib_fail(st);
    }
    int32_t nthreads;
    sb_status st = sb_get_num_threads(&nthreads);
    if (st != SB_OK) return lib_fail(st);
    const char *format, *label;
    if (data_form(s, data, &format, &label)) return EXIT_ERROR;
    sb_model *model = NULL;
    sb_dataset *d = NULL;
    float *pred = NULL;
    if ((st = sb_model_load(model_path, &model)) != SB_OK) return lib_fail(st);
    sb_model_info info;
    if ((st = sb_model_get_info(model, &info)) != SB_OK) goto done;
    if (!label) {
        st = sb_dataset_read_for_model(model, data, format, &d);
    } else {
        /* LightGBM's test files hold the label column (label_column, 0 by
         * default): it is dropped, the rest are the features by position */
        int32_t ncols = -1;
        if (!strcmp(format, "csv")) st = sb_dataset_read_for_model(model, data, format, &d); /* by name */
        else if ((st = sb_dataset_read(data, format, label, &d)) == SB_OK) {
            sb_dataset_shape(d, NULL, &ncols);
            if (ncols != info.num_features) {
                char cols[64];
                snprintf(cols, sizeof cols, "%d columns besides label column %s", (int)ncols, label);
                fprintf(stderr, "samebits: error: SB_ERR_INVALID_INPUT: feature-count mismatch: %s has %s, the model "
                        "%d features (a headerless file is read by position)\n", data, cols, (int)info.num_features);
                st = SB_ERR_INVALID_INPUT;
                goto done_printed;
            }
        }
    }
    if (st != SB_OK) goto done;
    sb_predict_kind kind = leaf ? SB_PREDICT_LEAF : contrib ? SB_PREDICT_CONTRIB : raw ? SB_PREDICT_RAW
                         : !strcmp(info.objective, "binary") || !strcmp(info.objective, "multiclass") ? SB_PREDICT_PROBA
                                                                                                      : SB_PREDICT_VALUE;
    size_t need = 0;
    if ((st = sb_model_predict(model, d, kind, NULL, 0, &need)) != SB_OK) goto done;
    if (!(pred = malloc(sizeof(float) * (need ? need : 1)))) {
        st = SB_ERR_OUT_OF_MEMORY;
        fprintf(stderr, "samebits: error: SB_ERR_OUT_OF_MEMORY: predictions of %s\n", data);
        goto done_printed;
    }
    if ((st = sb_model_predict(model, d, kind, pred, need, NULL)) != SB_OK) goto done;
    int64_t nrows;
    sb_dataset_shape(d, &nrows, NULL);
    if ((st = sb_cli_write_values(out, pred, nrows, nrows ? (int64_t)need / nrows : 1, '\t')) != SB_OK) goto done;
    fprintf(stderr, "samebits: %lld predictions written to %s\n", (long long)nrows, out);
done:
    if (st != SB_OK) lib_fail(st);
done_printed:
    free(pred);
    sb_dataset_free(d);
    sb_model_free(model);
    return st == SB_OK ? 0 : EXIT_ERROR;
}

int sb_cli_lightgbm(int argc, char **argv) {
    lk_set s = {NULL, 0, 0};
    int rc = 0;
    for (int i = 0; i < argc && !rc; i++) {
        char *copy = strdup(argv[i]);
        if (!copy) {
            rc = failf("SB_ERR_OUT_OF_MEMORY", "reading the command line%s%s%s", "", "", "");
            break;
        }
        char *eq = strchr(copy, '=');
        if (!eq || eq == copy) {
            rc = failf("SB_ERR_INVALID_ARGUMENT", "'%s': LightGBM's form takes key=value pairs only (samebits "
                       "config=FILE [key=value ...])%s%s", argv[i], "", "");
        } else {
            *eq = '\0';
            rc = add_pair(&s, copy, eq + 1, "the command line", 0);
        }
        free(copy);
    }
    const char *config = rc ? NULL : value_of(&s, "config", NULL);
    if (!rc && config) rc = read_config(&s, config);
    /* every key checked before any data is read */
    for (size_t i = 0; i < s.n && !rc; i++) {
        const lk_pair *p = &s.pairs[i];
        if (p->key->kind == LK_NOTE) {
            fprintf(stderr, "samebits: note: %s=%s (%s) tunes LightGBM's own engine; it has no effect here\n",
                    p->given, p->value, p->where);
        } else if (p->key->kind == LK_ONLY_VALUE) {
            int t = truth(p->value), want = truth(p->key->sb);
            char *end = NULL;
            double x = strtod(p->value, &end), y = strtod(p->key->sb, NULL);
            int same_number = *p->value && !*end && x == y; /* "0.0" is 0 */
            if (strcmp(p->value, p->key->sb) != 0 && !(t >= 0 && t == want) && !same_number)
                rc = failf("SB_ERR_INVALID_ARGUMENT", "parameter %s=%s (%s) is not supported here (only "
                           "LightGBM's default, which switches it off)", p->given, p->value, p->where);
            else
                fprintf(stderr, "samebits: note: %s=%s (%s) has no effect here\n", p->given, p->value, p->where);
        } else if (p->key->kind == LK_FIRST_METRIC) {
            if (truth(p->value) < 0)
                rc = failf("SB_ERR_INVALID_ARGUMENT", "parameter %s='%s' (%s) must be true or false", p->given,
                           p->value, p->where);
        }
    }
    if (!rc) {
        const char *task = value_of(&s, "task", "train");
        if (!strcmp(task, "train") || !strcmp(task, "training"))
            rc = task_train(&s);
        else if (!strcmp(task, "predict") || !strcmp(task, "prediction") || !strcmp(task, "test"))
            rc = task_predict(&s);
        else
            rc = failf("SB_ERR_INVALID_ARGUMENT", "task=%s is not supported: samebits takes task=train and "
                       "task=predict%s%s", task, "", "");
    }
    set_free(&s);
    return rc;
}
