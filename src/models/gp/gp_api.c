/* gp_api.c: Gaussian process regression's public calls (include/samebits.h,
 * docs/gaussian-process.md): its parameters, the fit, predictions, samples,
 * the log marginal likelihood, arrays by scikit-learn's names and the model
 * file. */
#include "gp.h"
#include "../model.h"
#include "../../device/device.h"
#include "../../math/sb_math.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

sb_status sb_gp_predict_host(const sb_gp *g, const double *Xs, int64_t m, double *mean, double *std, double *cov);
sb_status sb_gp_lml_host(const sb_gp *g, const double *theta, double *lml, double *grad);
sb_status sb_gp_sample_host(const sb_gp *g, const double *Xs, int64_t m, int64_t ns, uint64_t seed, double *out);

#define GP_MAX_ROWS 100000 /* training rows: n^2 doubles twice */

static int is(const char *a, const char *b) { return !strcmp(a, b); }

typedef struct gp_opts {
    double alpha;
    int32_t normalize_y, optimize, restarts;
    uint64_t seed;
    int32_t device; /* sb_device_kind */
} gp_opts;

/* Every key known and used; a key that would do nothing is refused by name. */
static sb_status parse_opts(const sb_params *params, gp_opts *o) {
    o->alpha = 1e-10, o->normalize_y = 0, o->optimize = 1, o->restarts = 0, o->seed = 0, o->device = SB_DEVICE_CPU;
    sb_numeric_mode mode;
    sb_status st = sb_params_resolve_mode(params, SB_FAMILY_GP, &mode);
    if (st != SB_OK) return st;
    const char *key, *v;
    int seed_given = 0;
    for (int64_t i = 0; params && sb_params_entry(params, i, &key, &v) == SB_OK && st == SB_OK; i++) {
        char *end;
        if (is(key, "numeric_mode")) continue;
        if (is(key, "model")) {
            if (!is(v, "gp") && !is(v, "gaussian_process"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "model='%s' is not gaussian process regression (gp)", v);
        } else if (is(key, "alpha")) {
            o->alpha = strtod(v, &end);
            if (end == v || *end || !(o->alpha >= 0.0 && o->alpha < INFINITY))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "alpha='%s' must be a finite number >= 0", v);
        } else if (is(key, "normalize_y")) {
            if (is(v, "true") || is(v, "True") || is(v, "1")) o->normalize_y = 1;
            else if (is(v, "false") || is(v, "False") || is(v, "0")) o->normalize_y = 0;
            else st = sb_fail(SB_ERR_INVALID_ARGUMENT, "normalize_y='%s' must be true or false", v);
        } else if (is(key, "optimizer")) {
            if (is(v, "fmin_l_bfgs_b") || is(v, "lbfgsb")) o->optimize = 1;
            else if (is(v, "none") || is(v, "None")) o->optimize = 0;
            else
                st = sb_fail(SB_ERR_INVALID_ARGUMENT,
                             "optimizer='%s' is not built (fmin_l_bfgs_b, this library's projected L-BFGS, or none)", v);
        } else if (is(key, "n_restarts_optimizer")) {
            const long long r = strtoll(v, &end, 10);
            if (end == v || *end || r < 0 || r > 1000)
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "n_restarts_optimizer='%s' must be a whole number in 0..1000", v);
            o->restarts = (int32_t)r;
        } else if (is(key, "random_state")) {
            const unsigned long long r = strtoull(v, &end, 10);
            if (end == v || *end || v[0] == '-')
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "random_state='%s' must be a whole number >= 0", v);
            o->seed = r, seed_given = 1;
        } else if (is(key, "device")) {
            /* cpu, or a GPU (cuda, opencl, gpu) running the float64 program
             * with the host's bits; cpu-batched has no meaning here */
            sb_device_kind kind;
            st = sb_device_parse(v, &kind);
            if (st == SB_OK && kind == SB_DEVICE_CPU_BATCHED)
                st = sb_fail(SB_ERR_INVALID_ARGUMENT,
                             "device='%s': gaussian process regression has no batched host path (cpu, cuda, opencl or "
                             "gpu)", v);
            o->device = (int32_t)kind;
        } else
            st = sb_fail(SB_ERR_INVALID_ARGUMENT,
                         "unknown parameter '%s' for gaussian process regression (docs/gaussian-process.md)", key);
    }
    (void)seed_given; /* random_state also seeds sample_y's default; it is kept in the model either way */
    if (st == SB_OK && !o->optimize && o->restarts > 0)
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "n_restarts_optimizer=%d with optimizer=none would do nothing",
                     (int)o->restarts);
    return st;
}

sb_status sb_gp_set_device(sb_gp *g, const char *device) {
    sb_clear_error();
    if (!g || !device) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_set_device: NULL model or device");
    sb_device_kind kind;
    sb_status st = sb_device_parse(device, &kind);
    if (st != SB_OK) return st;
    if (kind == SB_DEVICE_CPU_BATCHED)
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "device='%s': gaussian process regression has no batched host path (cpu, cuda, opencl or gpu)",
                       device);
    g->device = (int32_t)kind;
    return SB_OK;
}

static sb_status check_finite(const char *fn, const char *what, const double *x, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (x[i] - x[i] != 0.0)
            return sb_fail(SB_ERR_INVALID_INPUT, "%s: %s[%lld] is %s (missing values are refused)", fn, what,
                           (long long)i, x[i] != x[i] ? "NaN" : "infinite");
    return SB_OK;
}

sb_status sb_gp_fit(const char *kernel, const sb_params *params, const double *X, int64_t n, int64_t d,
                    const double *y, int64_t ntargets, sb_card *card, sb_gp **out) {
    return sb_gp_fit_named(kernel, params, X, n, d, y, ntargets, card, "gp", out);
}

sb_status sb_gp_fit_named(const char *kernel, const sb_params *params, const double *X, int64_t n, int64_t d,
                          const double *y, int64_t ntargets, sb_card *card, const char *prefix, sb_gp **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_fit: NULL out");
    *out = NULL;
    if (!X || !y || !kernel) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_fit: NULL kernel, X or y");
    if (n < 1 || d < 1 || ntargets < 1)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_fit: %lld rows, %lld features, %lld targets (each >= 1)",
                       (long long)n, (long long)d, (long long)ntargets);
    if (n > GP_MAX_ROWS || d > 1000000 || ntargets > 100000)
        return sb_fail(SB_ERR_LIMIT, "sb_gp_fit: %lld rows (limit %d), %lld features, %lld targets", (long long)n,
                       GP_MAX_ROWS, (long long)d, (long long)ntargets);
    sb_status st = sb_threads_ready();
    if (st != SB_OK) return st;
    gp_opts o;
    gp_kernel k;
    if ((st = parse_opts(params, &o)) != SB_OK) return st;
    if ((st = sb_gp_kernel_parse(kernel, d, &k)) != SB_OK) return st;
    if (o.optimize && o.restarts > 0 && sb_gp_nfree(&k) == 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "n_restarts_optimizer=%d with every hyperparameter fixed would do nothing", (int)o.restarts);
    if ((st = check_finite("sb_gp_fit", "X", X, n * d)) != SB_OK) return st;
    if ((st = check_finite("sb_gp_fit", "y", y, n * ntargets)) != SB_OK) return st;
    return sb_gp_fit_spec(&k, o.alpha, o.normalize_y, o.optimize, o.restarts, o.seed, o.device, X, n, d, y, ntargets,
                          card, prefix, out);
}

static sb_status check_query(const sb_gp *g, const char *fn, const double *X, int64_t m, int64_t d) {
    if (!g || !X) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: NULL model or X", fn);
    if (d != g->d)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: X has %lld features, the model %lld", fn, (long long)d,
                       (long long)g->d);
    if (m < 1 || m > 100000000) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: %lld rows", fn, (long long)m);
    sb_status st = sb_threads_ready();
    return st == SB_OK ? check_finite(fn, "X", X, m * d) : st;
}

sb_status sb_gp_predict(const sb_gp *g, const double *X, int64_t m, int64_t d, double *mean, double *std, double *cov) {
    sb_clear_error();
    sb_status st = check_query(g, "sb_gp_predict", X, m, d);
    if (st != SB_OK) return st;
    if (!mean) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_predict: NULL mean");
    if (cov && m > 100000) return sb_fail(SB_ERR_LIMIT, "sb_gp_predict: a covariance of %lld rows", (long long)m);
    return sb_gp_predict_host(g, X, m, mean, std, cov);
}

sb_status sb_gp_sample_y(const sb_gp *g, const double *X, int64_t m, int64_t d, int64_t n_samples,
                         uint64_t random_state, double *out) {
    sb_clear_error();
    sb_status st = check_query(g, "sb_gp_sample_y", X, m, d);
    if (st != SB_OK) return st;
    if (!out || n_samples < 1 || n_samples > 100000000 || m > 100000)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_sample_y: NULL out, n_samples=%lld or %lld rows out of range",
                       (long long)n_samples, (long long)m);
    return sb_gp_sample_host(g, X, m, n_samples, random_state, out);
}

sb_status sb_gp_log_marginal_likelihood(const sb_gp *g, const double *theta, int64_t ntheta, double *lml,
                                        double *grad) {
    sb_clear_error();
    if (!g || !lml) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_log_marginal_likelihood: NULL argument");
    const int32_t nf = sb_gp_nfree(&g->k);
    if (theta && ntheta != nf)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_log_marginal_likelihood: theta has %lld values, the kernel %d",
                       (long long)ntheta, (int)nf);
    if (theta) {
        sb_status st = check_finite("sb_gp_log_marginal_likelihood", "theta", theta, ntheta);
        if (st != SB_OK) return st;
    }
    if (!theta && !grad) {
        *lml = g->lml;
        return SB_OK;
    }
    sb_status st = sb_threads_ready();
    return st == SB_OK ? sb_gp_lml_host(g, theta, lml, grad) : st;
}

sb_status sb_gp_get_array(const sb_gp *g, const char *name, double *out, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!g || !name || !needed) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_get_array: NULL argument");
    const int32_t nf = sb_gp_nfree(&g->k);
    double tmp[2 * GP_MAX_PARAMS];
    const double *src = tmp;
    size_t n = 0;
    if (is(name, "theta") || is(name, "bounds")) {
        for (int32_t p = 0; p < g->k.npar; p++)
            if (!g->k.fixed[p]) {
                if (is(name, "theta")) tmp[n++] = g->k.logv[p];
                else tmp[n++] = g->k.lo[p], tmp[n++] = g->k.hi[p];
            }
    } else if (is(name, "log_params")) src = g->k.logv, n = (size_t)g->k.npar;
    else if (is(name, "params")) { /* e^logv by the profile's exp */
        for (int32_t p = 0; p < g->k.npar; p++) tmp[p] = g->k.logv[p] < -708.0 ? 0.0 : sb__hx_exp(g->k.logv[p]);
        n = (size_t)g->k.npar;
    }
    else if (is(name, "alpha_")) src = g->a, n = (size_t)(g->n * g->t);
    else if (is(name, "L_")) src = g->L, n = (size_t)(g->n * g->n);
    else if (is(name, "X_train_")) src = g->X, n = (size_t)(g->n * g->d);
    else if (is(name, "y_train_")) src = g->y, n = (size_t)(g->n * g->t);
    else if (is(name, "_y_train_mean")) src = g->ymean, n = (size_t)g->t;
    else if (is(name, "_y_train_std")) src = g->ystd, n = (size_t)g->t;
    else if (is(name, "log_marginal_likelihood_value_")) src = &g->lml, n = 1;
    else if (is(name, "alpha")) src = &g->alpha, n = 1;
    else if (is(name, "trace")) src = g->trace, n = (size_t)g->ntrace * (size_t)(1 + nf);
    else
        return sb_fail(SB_ERR_NOT_FOUND,
                       "gaussian process regression has no array '%s' (theta, bounds, log_params, params, alpha_, L_, X_train_, "
                       "y_train_, _y_train_mean, _y_train_std, log_marginal_likelihood_value_, alpha, trace)", name);
    *needed = n;
    if (cap == 0) return SB_OK;
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_get_array: NULL out with cap %zu", cap);
    if (cap < n) return sb_fail(SB_ERR_LIMIT, "sb_gp_get_array: '%s' needs %zu values, cap is %zu", name, n, cap);
    if (n) memcpy(out, src, sizeof(double) * n);
    return SB_OK;
}

sb_status sb_gp_get_int(const sb_gp *g, const char *name, int64_t *out) {
    sb_clear_error();
    if (!g || !name || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_get_int: NULL argument");
    if (is(name, "n_features_in_")) *out = g->d;
    else if (is(name, "n_samples")) *out = g->n;
    else if (is(name, "n_targets")) *out = g->t;
    else if (is(name, "n_theta")) *out = sb_gp_nfree(&g->k);
    else if (is(name, "n_params")) *out = g->k.npar;
    else if (is(name, "nit")) *out = g->nit;
    else if (is(name, "nfev")) *out = g->nfev;
    else if (is(name, "normalize_y")) *out = g->normalize_y;
    else if (is(name, "n_restarts_optimizer")) *out = g->restarts;
    else if (is(name, "optimizer")) *out = g->optimize;
    else if (is(name, "random_state")) *out = (int64_t)g->seed;
    else
        return sb_fail(SB_ERR_NOT_FOUND,
                       "gaussian process regression has no integer '%s' (n_features_in_, n_samples, n_targets, n_theta, "
                       "n_params, nit, nfev, normalize_y, n_restarts_optimizer, optimizer, random_state)", name);
    return SB_OK;
}

sb_status sb_gp_kernel_spec(const sb_gp *g, char *buf, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!g || !needed) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_kernel_spec: NULL argument");
    const size_t n = sb_gp_kernel_format(&g->k, NULL, 0) + 1;
    *needed = n;
    if (cap == 0) return SB_OK;
    if (!buf) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_kernel_spec: NULL buf with cap %zu", cap);
    if (cap < n) return sb_fail(SB_ERR_LIMIT, "sb_gp_kernel_spec: the kernel needs %zu bytes, cap is %zu", n, cap);
    sb_gp_kernel_format(&g->k, buf, cap);
    return SB_OK;
}

/* The model as a model of family gp, borrowed for the writer. */
static void as_model(const sb_gp *g, sb_model *m) {
    memset(m, 0, sizeof *m);
    m->family = SB_FAMILY_GP;
    m->numeric_mode = SB_MODE_IDENTICAL;
    m->num_features = (int32_t)g->d;
    m->num_class = 1;
    m->gp = (sb_gp *)g;
}

sb_status sb_gp_to_bytes(const sb_gp *g, uint8_t *buf, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!g) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_to_bytes: NULL model");
    sb_model m;
    as_model(g, &m);
    return sb_model_to_bytes(&m, buf, cap, needed);
}

sb_status sb_gp_save(const sb_gp *g, const char *path) {
    sb_clear_error();
    if (!g) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_save: NULL model");
    sb_model m;
    as_model(g, &m);
    return sb_model_save(&m, path);
}

sb_status sb_gp_model_digest(const sb_gp *g, char hex[65]) {
    sb_clear_error();
    if (!g) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_model_digest: NULL model");
    sb_model m;
    as_model(g, &m);
    return sb_model_digest(&m, hex);
}

static sb_status take(sb_status st, sb_model *m, sb_gp **out) {
    if (st != SB_OK) return st;
    if (m->family != SB_FAMILY_GP) {
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "the model is %s, not gaussian process regression (gp)",
                     sb_family_name((sb_family)m->family));
        sb_model_free(m);
        return st;
    }
    *out = m->gp;
    m->gp = NULL;
    sb_model_free(m);
    return SB_OK;
}

sb_status sb_gp_from_bytes(const uint8_t *buf, size_t n, sb_gp **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_from_bytes: NULL out");
    *out = NULL;
    sb_model *m = NULL;
    sb_status st = sb_model_from_bytes(buf, n, &m);
    return take(st, m, out);
}

sb_status sb_gp_load(const char *path, sb_gp **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gp_load: NULL out");
    *out = NULL;
    sb_model *m = NULL;
    sb_status st = sb_model_load(path, &m);
    return take(st, m, out);
}

void sb_gp_free(sb_gp *g) { sb_gp_release(g); }
