/* mlp_api.c: the MLP's public calls (include/samebits.h, docs/mlp.md): its
 * options by scikit-learn's names, the fit, predictions, arrays by name and
 * the model file. */
#include "mlp.h"
#include "../model.h"
#include "../../device/device.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is(const char *a, const char *b) { return !strcmp(a, b); }

static sb_status real(const char *key, const char *v, double lo, int lo_open, double hi, int hi_open, double *out) {
    char *end;
    const double x = strtod(v, &end);
    if (end == v || *end || !isfinite(x) || (lo_open ? !(x > lo) : !(x >= lo)) || (hi_open ? !(x < hi) : !(x <= hi)))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: %s='%s' must be a number in %c%g, %g%c", key, v, lo_open ? '(' : '[',
                       lo, hi, hi_open ? ')' : ']');
    *out = x;
    return SB_OK;
}

static sb_status whole(const char *key, const char *v, long long lo, long long hi, long long *out) {
    char *end;
    const long long x = strtoll(v, &end, 10);
    if (end == v || *end || x < lo || x > hi)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: %s='%s' must be a whole number in %lld..%lld", key, v, lo, hi);
    *out = x;
    return SB_OK;
}

static sb_status flag(const char *key, const char *v, int32_t *out) {
    if (is(v, "true") || is(v, "True") || is(v, "1")) *out = 1;
    else if (is(v, "false") || is(v, "False") || is(v, "0")) *out = 0;
    else return sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: %s='%s' must be true or false", key, v);
    return SB_OK;
}

/* "100", "128,64" or "" (no hidden layer), scikit-learn's hidden_layer_sizes. */
static sb_status hidden(const char *v, mlp_opts *o) {
    o->nhidden = 0;
    const char *p = v;
    while (*p) {
        char *end;
        const long long h = strtoll(p, &end, 10);
        if (end == p || h < 1 || h > MLP_MAX_WIDTH || (*end && *end != ',') || o->nhidden == MLP_MAX_HIDDEN)
            return sb_fail(SB_ERR_INVALID_ARGUMENT,
                           "mlp: hidden_layer_sizes='%s' must be up to %d widths in 1..%d separated by commas", v,
                           MLP_MAX_HIDDEN, MLP_MAX_WIDTH);
        o->hidden[o->nhidden++] = h;
        p = *end ? end + 1 : end;
    }
    return SB_OK;
}

sb_status sb_mlp_parse_opts(const sb_params *params, mlp_opts *o) {
    memset(o, 0, sizeof *o);
    o->classifier = -1;
    o->nhidden = 1, o->hidden[0] = 100;
    o->activation = NN_RELU, o->solver = MLP_ADAM, o->learning_rate = MLP_LR_CONSTANT;
    o->alpha = 1e-4, o->learning_rate_init = 1e-3, o->power_t = 0.5, o->tol = 1e-4, o->validation_fraction = 0.1;
    o->momentum = 0.9, o->beta_1 = 0.9, o->beta_2 = 0.999, o->epsilon = 1e-8;
    o->batch_size = 0, o->max_iter = 200, o->shuffle = 1, o->nesterovs_momentum = 1, o->n_iter_no_change = 10;
    sb_numeric_mode mode;
    sb_status st = sb_params_resolve_mode(params, SB_FAMILY_MLP, &mode);
    if (st != SB_OK) return st;
    /* keys that apply only to one solver, schedule or early stopping */
    int sgd_only = 0, adam_only = 0, power_given = 0, lr_given = 0, vf_given = 0;
    const char *key, *v;
    for (int64_t i = 0; params && sb_params_entry(params, i, &key, &v) == SB_OK && st == SB_OK; i++) {
        long long ll;
        if (is(key, "numeric_mode")) continue;
        if (is(key, "model") || is(key, "task")) {
            if (is(v, "mlp_classifier") || is(v, "classifier")) o->classifier = 1;
            else if (is(v, "mlp_regressor") || is(v, "regressor")) o->classifier = 0;
            else if (!is(v, "mlp") || is(key, "task"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: %s='%s' is not mlp, mlp_classifier or mlp_regressor "
                             "(task: classifier or regressor)", key, v);
        } else if (is(key, "hidden_layer_sizes")) st = hidden(v, o);
        else if (is(key, "activation")) {
            const int32_t a = nn_act_of(v);
            if (a < 0)
                st = sb_fail(SB_ERR_INVALID_ARGUMENT,
                             "mlp: activation='%s' is not identity, logistic, tanh, relu, gelu or silu", v);
            o->activation = a;
        } else if (is(key, "solver")) {
            if (is(v, "adam")) o->solver = MLP_ADAM;
            else if (is(v, "sgd")) o->solver = MLP_SGD;
            else if (is(v, "lbfgs"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: solver='lbfgs' is not built (adam and sgd are; docs/mlp.md)");
            else st = sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: solver='%s' is not adam or sgd", v);
        } else if (is(key, "alpha")) st = real(key, v, 0.0, 0, 1e30, 0, &o->alpha);
        else if (is(key, "batch_size")) {
            if (is(v, "auto")) o->batch_size = 0;
            else if ((st = whole(key, v, 1, 1LL << 40, &ll)) == SB_OK) o->batch_size = ll;
        } else if (is(key, "learning_rate")) {
            lr_given = 1;
            if (is(v, "constant")) o->learning_rate = MLP_LR_CONSTANT;
            else if (is(v, "invscaling")) o->learning_rate = MLP_LR_INVSCALING;
            else if (is(v, "adaptive")) o->learning_rate = MLP_LR_ADAPTIVE;
            else st = sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: learning_rate='%s' is not constant, invscaling or adaptive", v);
        } else if (is(key, "learning_rate_init")) st = real(key, v, 0.0, 1, 1e30, 0, &o->learning_rate_init);
        else if (is(key, "power_t")) power_given = 1, st = real(key, v, 0.0, 0, 1e30, 0, &o->power_t);
        else if (is(key, "max_iter")) {
            if ((st = whole(key, v, 1, MLP_MAX_ITER, &ll)) == SB_OK) o->max_iter = (int32_t)ll;
        } else if (is(key, "shuffle")) st = flag(key, v, &o->shuffle);
        else if (is(key, "random_state")) {
            char *end;
            o->seed = strtoull(v, &end, 10);
            if (end == v || *end || v[0] == '-')
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: random_state='%s' must be a whole number >= 0", v);
        } else if (is(key, "tol")) st = real(key, v, 0.0, 0, 1e30, 0, &o->tol);
        else if (is(key, "momentum")) sgd_only = 1, st = real(key, v, 0.0, 0, 1.0, 0, &o->momentum);
        else if (is(key, "nesterovs_momentum")) sgd_only = 1, st = flag(key, v, &o->nesterovs_momentum);
        else if (is(key, "early_stopping")) st = flag(key, v, &o->early_stopping);
        else if (is(key, "validation_fraction")) vf_given = 1, st = real(key, v, 0.0, 1, 1.0, 1, &o->validation_fraction);
        else if (is(key, "beta_1")) adam_only = 1, st = real(key, v, 0.0, 0, 1.0, 1, &o->beta_1);
        else if (is(key, "beta_2")) adam_only = 1, st = real(key, v, 0.0, 0, 1.0, 1, &o->beta_2);
        else if (is(key, "epsilon")) adam_only = 1, st = real(key, v, 0.0, 1, 1e30, 0, &o->epsilon);
        else if (is(key, "n_iter_no_change")) {
            if ((st = whole(key, v, 1, MLP_MAX_ITER, &ll)) == SB_OK) o->n_iter_no_change = (int32_t)ll;
        } else if (is(key, "device") || is(key, "device_type")) {
            /* cuda and opencl train on the GPU (mlp_dev.c), the same bits; the MLP has no batched
             * host path, so cpu-batched would change nothing and is refused by name */
            sb_device_kind dk = SB_DEVICE_CPU;
            if ((st = sb_device_parse(v, &dk)) == SB_OK && dk == SB_DEVICE_CPU_BATCHED)
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: device='%s': the MLP has no batched host path (cpu, cuda, "
                             "opencl or gpu; docs/mlp.md)", v);
            o->device = (int32_t)dk;
        } else if (is(key, "warm_start") || is(key, "max_fun") || is(key, "verbose"))
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: %s is not built (docs/mlp.md)", key);
        else
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: unknown parameter '%s' (docs/mlp.md)", key);
    }
    if (st != SB_OK) return st;
    if (o->classifier < 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: say which estimator: task=classifier or task=regressor");
    if (sgd_only && o->solver != MLP_SGD)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: momentum and nesterovs_momentum apply to solver='sgd' only");
    if (adam_only && o->solver != MLP_ADAM)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: beta_1, beta_2 and epsilon apply to solver='adam' only");
    if (lr_given && o->learning_rate != MLP_LR_CONSTANT && o->solver != MLP_SGD)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: learning_rate='%s' applies to solver='sgd' only",
                       o->learning_rate == MLP_LR_INVSCALING ? "invscaling" : "adaptive");
    if (power_given && !(o->solver == MLP_SGD && o->learning_rate == MLP_LR_INVSCALING))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: power_t applies to solver='sgd' with learning_rate='invscaling' only");
    if (vf_given && !o->early_stopping)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "mlp: validation_fraction applies with early_stopping=true only");
    return SB_OK;
}

static sb_status check_rows(const char *fn, const float *X, int64_t n, int64_t d) {
    for (int64_t i = 0; i < n * d; i++)
        if (!isfinite(X[i]))
            return sb_fail(SB_ERR_INVALID_INPUT, "%s: X[%lld][%lld] is %s (missing values are refused)", fn,
                           (long long)(i / d), (long long)(i % d), X[i] != X[i] ? "NaN" : "infinite");
    return SB_OK;
}

sb_status sb_mlp_fit_named(const sb_params *params, const float *X, int64_t n, int64_t d, const float *y, int64_t ny,
                           sb_card *card, const char *prefix, sb_mlp **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_mlp_fit: NULL out");
    *out = NULL;
    if (!X || !y) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_mlp_fit: NULL X or y");
    if (n < 1 || d < 1 || ny < 1)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_mlp_fit: %lld rows, %lld features, %lld targets (each >= 1)",
                       (long long)n, (long long)d, (long long)ny);
    if (n > (1LL << 31) - 1 || d > MLP_MAX_WIDTH || ny > MLP_MAX_WIDTH)
        return sb_fail(SB_ERR_LIMIT, "sb_mlp_fit: %lld rows, %lld features, %lld targets (limits 2^31 - 1, %d, %d)",
                       (long long)n, (long long)d, (long long)ny, MLP_MAX_WIDTH, MLP_MAX_WIDTH);
    sb_status st = sb_threads_ready();
    if (st != SB_OK) return st;
    mlp_opts o;
    if ((st = sb_mlp_parse_opts(params, &o)) != SB_OK) return st;
    if ((st = check_rows("sb_mlp_fit", X, n, d)) != SB_OK) return st;
    for (int64_t i = 0; i < n * ny; i++)
        if (!isfinite(y[i]))
            return sb_fail(SB_ERR_INVALID_INPUT, "sb_mlp_fit: y[%lld] is not finite", (long long)i);
    return sb_mlp_fit_opts(&o, X, n, d, y, ny, card, prefix, out);
}

sb_status sb_mlp_fit(const sb_params *params, const float *X, int64_t n, int64_t d, const float *y, int64_t ny,
                     sb_card *card, sb_mlp **out) {
    return sb_mlp_fit_named(params, X, n, d, y, ny, card, "mlp", out);
}

static sb_status check_query(const sb_mlp *net, const char *fn, const float *X, int64_t m, int64_t d, const void *out) {
    if (!net || !X || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: NULL model, X or out", fn);
    if (d != net->size[0])
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: X has %lld features, the model %lld", fn, (long long)d,
                       (long long)net->size[0]);
    if (m < 1 || m > (1LL << 31) - 1) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: %lld rows", fn, (long long)m);
    sb_status st = sb_threads_ready();
    return st == SB_OK ? check_rows(fn, X, m, d) : st;
}

int64_t sb_mlp_out_width(const sb_mlp *net, int proba) {
    if (!net->o.classifier || net->multilabel) return net->size[net->nlayers];
    return proba ? net->nclasses : 1;
}

sb_status sb_mlp_predict_proba(const sb_mlp *net, const float *X, int64_t m, int64_t d, float *out) {
    sb_clear_error();
    sb_status st = check_query(net, "sb_mlp_predict_proba", X, m, d, out);
    if (st != SB_OK) return st;
    if (!net->o.classifier)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_mlp_predict_proba: an MLPRegressor has no probabilities (sb_mlp_predict)");
    if ((st = sb_mlp_forward(net, X, m, net->nclasses == 2 && !net->multilabel ? out + m : out)) != SB_OK) return st;
    if (net->nclasses == 2 && !net->multilabel) /* [1 - p, p] per row */
        for (int64_t i = 0; i < m; i++) {
            const float p = out[m + i];
            out[2 * i] = 1.0f - p, out[2 * i + 1] = p;
        }
    return SB_OK;
}

sb_status sb_mlp_predict(const sb_mlp *net, const float *X, int64_t m, int64_t d, float *out) {
    sb_clear_error();
    sb_status st = check_query(net, "sb_mlp_predict", X, m, d, out);
    if (st != SB_OK) return st;
    if (!net->o.classifier || net->multilabel || net->nclasses == 2) {
        if ((st = sb_mlp_forward(net, X, m, out)) != SB_OK) return st;
        if (net->o.classifier) /* scikit-learn's threshold: p > 0.5 */
            for (int64_t i = 0; i < m * net->size[net->nlayers]; i++) out[i] = out[i] > 0.5f ? 1.0f : 0.0f;
        return SB_OK;
    }
    const int64_t K = net->nclasses;
    float *p = sb_malloc(sizeof(float) * (size_t)(m * K));
    if (!p) return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_mlp_predict: out of memory");
    st = sb_mlp_forward(net, X, m, p);
    for (int64_t i = 0; st == SB_OK && i < m; i++) { /* argmax, ties to the smaller class */
        int64_t a = 0;
        for (int64_t j = 1; j < K; j++)
            if (p[i * K + j] > p[i * K + a]) a = j;
        out[i] = (float)a;
    }
    sb_free(p);
    return st;
}

/* coefs_<l> and intercepts_<l>. */
static int layer_name(const char *name, const char *stem, int32_t L, int32_t *l) {
    const size_t k = strlen(stem);
    if (strncmp(name, stem, k) || !name[k]) return 0;
    char *end;
    const long v = strtol(name + k, &end, 10);
    if (*end || v < 0 || v >= L) return 0;
    *l = (int32_t)v;
    return 1;
}

sb_status sb_mlp_get_f32(const sb_mlp *net, const char *name, float *out, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!net || !name || !needed) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_mlp_get_f32: NULL argument");
    int32_t l;
    const float *src;
    size_t n;
    if (layer_name(name, "coefs_", net->nlayers, &l)) src = net->W[l], n = (size_t)(net->size[l] * net->size[l + 1]);
    else if (layer_name(name, "intercepts_", net->nlayers, &l)) src = net->b[l], n = (size_t)net->size[l + 1];
    else
        return sb_fail(SB_ERR_NOT_FOUND, "mlp has no float32 array '%s' (coefs_<l>, intercepts_<l> for l < %d)", name,
                       (int)net->nlayers);
    *needed = n;
    if (cap == 0) return SB_OK;
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_mlp_get_f32: NULL out with cap %zu", cap);
    if (cap < n) return sb_fail(SB_ERR_LIMIT, "sb_mlp_get_f32: '%s' needs %zu values, cap is %zu", name, n, cap);
    memcpy(out, src, sizeof(float) * n);
    return SB_OK;
}

sb_status sb_mlp_get_f64(const sb_mlp *net, const char *name, double *out, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!net || !name || !needed) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_mlp_get_f64: NULL argument");
    const double *src;
    size_t n;
    if (is(name, "loss_curve_")) src = net->curve, n = (size_t)net->n_iter;
    else if (is(name, "validation_scores_")) src = net->val_scores, n = net->val_scores ? (size_t)net->n_iter : 0;
    else if (is(name, "loss_")) src = &net->loss, n = 1;
    else if (is(name, "best_loss_")) src = &net->best_loss, n = 1;
    else if (is(name, "best_validation_score_")) src = &net->best_val, n = 1;
    else
        return sb_fail(SB_ERR_NOT_FOUND, "mlp has no float64 array '%s' (loss_curve_, validation_scores_, loss_, "
                       "best_loss_, best_validation_score_)", name);
    *needed = n;
    if (cap == 0) return SB_OK;
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_mlp_get_f64: NULL out with cap %zu", cap);
    if (cap < n) return sb_fail(SB_ERR_LIMIT, "sb_mlp_get_f64: '%s' needs %zu values, cap is %zu", name, n, cap);
    if (n) memcpy(out, src, sizeof(double) * n);
    return SB_OK;
}

sb_status sb_mlp_get_int(const sb_mlp *net, const char *name, int64_t *out) {
    sb_clear_error();
    if (!net || !name || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_mlp_get_int: NULL argument");
    int32_t l;
    if (is(name, "n_features_in_")) *out = net->size[0];
    else if (is(name, "n_layers_")) *out = net->nlayers + 1; /* scikit-learn counts the input and output layers */
    else if (is(name, "n_outputs_")) *out = net->size[net->nlayers];
    else if (is(name, "n_iter_")) *out = net->n_iter;
    else if (is(name, "t_")) *out = net->t;
    else if (is(name, "n_classes")) *out = net->nclasses;
    else if (is(name, "multilabel")) *out = net->multilabel;
    else if (is(name, "classifier")) *out = net->o.classifier;
    else if (is(name, "out_activation_")) *out = net->out_act;
    else if (layer_name(name, "width_", net->nlayers + 1, &l)) *out = net->size[l];
    else
        return sb_fail(SB_ERR_NOT_FOUND, "mlp has no integer '%s' (n_features_in_, n_layers_, n_outputs_, n_iter_, t_, "
                       "n_classes, multilabel, classifier, out_activation_, width_<l>)", name);
    return SB_OK;
}

/* The network as a model of family mlp, borrowed for the writer. */
static void as_model(const sb_mlp *net, sb_model *m) {
    memset(m, 0, sizeof *m);
    m->family = SB_FAMILY_MLP;
    m->numeric_mode = SB_MODE_IDENTICAL;
    m->num_features = (int32_t)net->size[0];
    m->num_class = 1;
    m->mlp = (sb_mlp *)net;
}

sb_status sb_mlp_to_bytes(const sb_mlp *net, uint8_t *buf, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!net) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_mlp_to_bytes: NULL model");
    sb_model m;
    as_model(net, &m);
    return sb_model_to_bytes(&m, buf, cap, needed);
}

sb_status sb_mlp_save(const sb_mlp *net, const char *path) {
    sb_clear_error();
    if (!net) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_mlp_save: NULL model");
    sb_model m;
    as_model(net, &m);
    return sb_model_save(&m, path);
}

sb_status sb_mlp_model_digest(const sb_mlp *net, char hex[65]) {
    sb_clear_error();
    if (!net) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_mlp_model_digest: NULL model");
    sb_model m;
    as_model(net, &m);
    return sb_model_digest(&m, hex);
}

static sb_status take(sb_status st, sb_model *m, sb_mlp **out) {
    if (st != SB_OK) return st;
    if (m->family != SB_FAMILY_MLP) {
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "the model is %s, not mlp", sb_family_name((sb_family)m->family));
        sb_model_free(m);
        return st;
    }
    *out = m->mlp;
    m->mlp = NULL;
    sb_model_free(m);
    return SB_OK;
}

sb_status sb_mlp_from_bytes(const uint8_t *buf, size_t n, sb_mlp **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_mlp_from_bytes: NULL out");
    *out = NULL;
    sb_model *m = NULL;
    const sb_status st = sb_model_from_bytes(buf, n, &m);
    return take(st, m, out);
}

sb_status sb_mlp_load(const char *path, sb_mlp **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_mlp_load: NULL out");
    *out = NULL;
    sb_model *m = NULL;
    const sb_status st = sb_model_load(path, &m);
    return take(st, m, out);
}

void sb_mlp_free(sb_mlp *net) { sb_mlp_release(net); }
