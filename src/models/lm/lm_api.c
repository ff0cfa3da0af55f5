/* lm_api.c: the byte-level language model's public calls (include/samebits.h,
 * docs/lm.md): its options by name, create, train, evaluate, generate,
 * arrays by name and the checkpoint (the model file). */
#include "lm.h"
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
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "lm: %s='%s' must be a number in %c%g, %g%c", key, v, lo_open ? '(' : '[',
                       lo, hi, hi_open ? ')' : ']');
    *out = x;
    return SB_OK;
}

static sb_status whole(const char *key, const char *v, long long lo, long long hi, int32_t *out) {
    char *end;
    const long long x = strtoll(v, &end, 10);
    if (end == v || *end || x < lo || x > hi)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "lm: %s='%s' must be a whole number in %lld..%lld", key, v, lo, hi);
    *out = (int32_t)x;
    return SB_OK;
}

sb_status sb_lm_parse_opts(const sb_params *params, lm_opts *o) {
    memset(o, 0, sizeof *o);
    o->n_layer = 2, o->d_model = 64, o->n_head = 4, o->context = 64, o->batch_size = 16, o->eval_batches = 8;
    o->learning_rate = 1e-3, o->beta_1 = 0.9, o->beta_2 = 0.999, o->epsilon = 1e-8, o->weight_decay = 0.01;
    o->dropout = 0.0, o->clip_norm = 1.0, o->validation_fraction = 0.1, o->seed = 0;
    sb_numeric_mode mode;
    sb_status st = sb_params_resolve_mode(params, SB_FAMILY_LM, &mode);
    if (st != SB_OK) return st;
    const char *key, *v;
    for (int64_t i = 0; params && sb_params_entry(params, i, &key, &v) == SB_OK && st == SB_OK; i++) {
        if (is(key, "numeric_mode")) continue;
        if (is(key, "model")) {
            if (!is(v, "lm") && !is(v, "byte_lm"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "lm: model='%s' is not lm", v);
        } else if (is(key, "device")) {
            sb_device_kind kind;
            if ((st = sb_device_parse(v, &kind)) == SB_OK) o->device = (int32_t)kind;
        } else if (is(key, "n_layer")) st = whole(key, v, 1, LM_MAX_LAYERS, &o->n_layer);
        else if (is(key, "d_model")) st = whole(key, v, 1, LM_MAX_WIDTH, &o->d_model);
        else if (is(key, "n_head")) st = whole(key, v, 1, LM_MAX_WIDTH, &o->n_head);
        else if (is(key, "context")) st = whole(key, v, 2, LM_MAX_CONTEXT, &o->context);
        else if (is(key, "batch_size")) st = whole(key, v, 1, LM_MAX_BATCH, &o->batch_size);
        else if (is(key, "eval_batches")) st = whole(key, v, 1, 100000, &o->eval_batches);
        else if (is(key, "learning_rate")) st = real(key, v, 0, 1, 10, 0, &o->learning_rate);
        else if (is(key, "beta_1")) st = real(key, v, 0, 0, 1, 1, &o->beta_1);
        else if (is(key, "beta_2")) st = real(key, v, 0, 0, 1, 1, &o->beta_2);
        else if (is(key, "epsilon")) st = real(key, v, 0, 1, 1, 0, &o->epsilon);
        else if (is(key, "weight_decay")) st = real(key, v, 0, 0, 1, 0, &o->weight_decay);
        else if (is(key, "dropout")) st = real(key, v, 0, 0, 1, 1, &o->dropout);
        else if (is(key, "clip_norm")) st = real(key, v, 0, 0, 1e6, 0, &o->clip_norm);
        else if (is(key, "validation_fraction")) st = real(key, v, 0, 1, 1, 1, &o->validation_fraction);
        else if (is(key, "random_state") || is(key, "seed")) {
            char *end;
            const unsigned long long x = strtoull(v, &end, 10);
            if (end == v || *end || v[0] == '-')
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "lm: %s='%s' must be a whole number >= 0", key, v);
            o->seed = x;
        } else if (is(key, "tie_weights") || is(key, "tied"))
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "lm: %s: the output head is untied in this library (its own "
                         "d_model x 256 matrix); a tied head is not built", key);
        else
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "lm: unknown parameter '%s' (n_layer, d_model, n_head, context, "
                         "batch_size, learning_rate, beta_1, beta_2, epsilon, weight_decay, dropout, clip_norm, "
                         "validation_fraction, eval_batches, random_state)", key);
    }
    if (st == SB_OK && o->d_model % o->n_head)
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "lm: n_head=%d must divide d_model=%d", (int)o->n_head, (int)o->d_model);
    return st;
}

sb_status sb_lm_create(const sb_params *params, sb_lm **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_create: NULL out");
    *out = NULL;
    lm_opts o;
    sb_status st = sb_lm_parse_opts(params, &o);
    return st == SB_OK ? sb_lm_new(&o, out) : st;
}

sb_status sb_lm_train(sb_lm *lm, const uint8_t *corpus, int64_t n, int64_t steps, int64_t eval_every) {
    sb_clear_error();
    if (!lm || (!corpus && n)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_train: NULL argument");
    if (eval_every < 0) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_train: eval_every=%lld must be >= 0", (long long)eval_every);
    sb_status st = sb_threads_ready();
    return st == SB_OK ? sb_lm_train_steps(lm, corpus, n, steps, eval_every, NULL, "lm") : st;
}

sb_status sb_lm_set_device(sb_lm *lm, const char *device) {
    sb_clear_error();
    if (!lm || !device) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_set_device: NULL argument");
    sb_device_kind kind;
    sb_status st = sb_device_parse(device, &kind);
    if (st == SB_OK) lm->o.device = (int32_t)kind;
    return st;
}

sb_status sb_lm_evaluate(const sb_lm *lm, const uint8_t *corpus, int64_t n, float *loss) {
    sb_clear_error();
    if (!lm || (!corpus && n) || !loss) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_evaluate: NULL argument");
    sb_status st = sb_threads_ready();
    return st == SB_OK ? sb_lm_eval_loss(lm, corpus, n, loss) : st;
}

sb_status sb_lm_generate(const sb_lm *lm, const uint8_t *prompt, int64_t np, int64_t count, double temperature,
                         uint64_t seed, uint8_t *out) {
    sb_clear_error();
    if (!lm || !prompt || (!out && count)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_generate: NULL argument");
    if (np < 1) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_generate: an empty prompt (give at least one byte)");
    if (count < 0 || count > 100000000 || np > 100000000)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_generate: count=%lld must be in 0..100000000", (long long)count);
    if (!(temperature >= 0 && temperature <= 100))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_generate: temperature=%g must be in [0, 100]", temperature);
    sb_status st = sb_threads_ready();
    return st == SB_OK ? sb_lm_sample(lm, prompt, np, count, temperature, seed, out) : st;
}

static const lm_tensor *find_tensor(const sb_lm *lm, const char *name) {
    for (int32_t i = 0; i < lm->ntensors; i++)
        if (is(lm->t[i].name, name)) return &lm->t[i];
    return NULL;
}

sb_status sb_lm_get_f32(const sb_lm *lm, const char *name, float *out, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!lm || !name || !needed) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_get_f32: NULL argument");
    const float *src;
    size_t n;
    const lm_tensor *t;
    if (is(name, "train_loss")) src = lm->train_loss, n = (size_t)lm->step;
    else if (is(name, "heldout_loss")) src = lm->eval_loss, n = (size_t)lm->n_eval;
    else if ((t = find_tensor(lm, name))) src = lm->w + t->off, n = (size_t)t->count;
    else if (!strncmp(name, "adam_m.", 7) && (t = find_tensor(lm, name + 7))) src = lm->m + t->off, n = (size_t)t->count;
    else if (!strncmp(name, "adam_v.", 7) && (t = find_tensor(lm, name + 7))) src = lm->v + t->off, n = (size_t)t->count;
    else
        return sb_fail(SB_ERR_NOT_FOUND, "lm has no float32 array '%s' (train_loss, heldout_loss, a tensor: wte, wpe, "
                       "h<l>.<ln1_g|ln1_b|w_qkv|b_qkv|w_o|b_o|ln2_g|ln2_b|w_fc|b_fc|w_proj|b_proj>, lnf_g, lnf_b, head; "
                       "adam_m.<tensor>, adam_v.<tensor>)", name);
    *needed = n;
    if (cap == 0) return SB_OK;
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_get_f32: NULL out with cap %zu", cap);
    if (cap < n) return sb_fail(SB_ERR_LIMIT, "sb_lm_get_f32: '%s' needs %zu values, cap is %zu", name, n, cap);
    if (n) memcpy(out, src, sizeof(float) * n);
    return SB_OK;
}

sb_status sb_lm_get_int(const sb_lm *lm, const char *name, int64_t *out) {
    sb_clear_error();
    if (!lm || !name || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_get_int: NULL argument");
    const lm_opts *o = &lm->o;
    char *end;
    if (is(name, "step")) *out = lm->step;
    else if (is(name, "n_params")) *out = lm->nparams;
    else if (is(name, "n_layer")) *out = o->n_layer;
    else if (is(name, "d_model")) *out = o->d_model;
    else if (is(name, "n_head")) *out = o->n_head;
    else if (is(name, "context")) *out = o->context;
    else if (is(name, "batch_size")) *out = o->batch_size;
    else if (is(name, "n_heldout")) *out = lm->n_eval;
    else if (!strncmp(name, "heldout_step_", 13) && name[13]) {
        const long long i = strtoll(name + 13, &end, 10);
        if (*end || i < 0 || i >= lm->n_eval)
            return sb_fail(SB_ERR_NOT_FOUND, "lm: '%s': there are %lld held-out losses", name, (long long)lm->n_eval);
        *out = lm->eval_step[i];
    } else
        return sb_fail(SB_ERR_NOT_FOUND, "lm has no integer '%s' (step, n_params, n_layer, d_model, n_head, context, "
                       "batch_size, n_heldout, heldout_step_<i>)", name);
    return SB_OK;
}

static void as_model(const sb_lm *lm, sb_model *m) {
    memset(m, 0, sizeof *m);
    m->family = SB_FAMILY_LM;
    m->numeric_mode = SB_MODE_IDENTICAL;
    m->num_features = lm->o.context;
    m->num_class = 1;
    m->lm = (sb_lm *)lm;
}

sb_status sb_lm_to_bytes(const sb_lm *lm, uint8_t *buf, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!lm) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_to_bytes: NULL model");
    sb_model m;
    as_model(lm, &m);
    return sb_model_to_bytes(&m, buf, cap, needed);
}

sb_status sb_lm_save(const sb_lm *lm, const char *path) {
    sb_clear_error();
    if (!lm) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_save: NULL model");
    sb_model m;
    as_model(lm, &m);
    return sb_model_save(&m, path);
}

sb_status sb_lm_model_digest(const sb_lm *lm, char hex[65]) {
    sb_clear_error();
    if (!lm) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_model_digest: NULL model");
    sb_model m;
    as_model(lm, &m);
    return sb_model_digest(&m, hex);
}

static sb_status take(sb_status st, sb_model *m, sb_lm **out) {
    if (st != SB_OK) return st;
    if (m->family != SB_FAMILY_LM) {
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "the model is %s, not lm", sb_family_name((sb_family)m->family));
        sb_model_free(m);
        return st;
    }
    *out = m->lm;
    m->lm = NULL;
    sb_model_free(m);
    return SB_OK;
}

sb_status sb_lm_from_bytes(const uint8_t *buf, size_t n, sb_lm **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_from_bytes: NULL out");
    *out = NULL;
    sb_model *m = NULL;
    const sb_status st = sb_model_from_bytes(buf, n, &m);
    return take(st, m, out);
}

sb_status sb_lm_load(const char *path, sb_lm **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_lm_load: NULL out");
    *out = NULL;
    sb_model *m = NULL;
    const sb_status st = sb_model_load(path, &m);
    return take(st, m, out);
}

void sb_lm_free(sb_lm *lm) { sb_lm_release(lm); }
