/*
 * gp_kernel.c: the kernel specification of Gaussian process regression
 * (docs/gaussian-process.md): scikit-learn's kernel constructors written as
 * text, with + and * (products bind first) and parentheses:
 *
 *   ConstantKernel(1.0, (1e-3, 1e3)) * RBF([1.0, 2.0], (1e-2, 1e2)) + WhiteKernel(1e-5, "fixed")
 *
 * Kernels and their arguments (positional in scikit-learn's order, or by
 * name): ConstantKernel or C (constant_value, constant_value_bounds),
 * WhiteKernel (noise_level, noise_level_bounds), RBF (length_scale,
 * length_scale_bounds), Matern (length_scale, length_scale_bounds, nu),
 * RationalQuadratic (length_scale, alpha, length_scale_bounds,
 * alpha_bounds). Bounds are (lo, hi) or "fixed"; the defaults are
 * scikit-learn's (values 1, bounds (1e-5, 1e5), nu 1.5).
 */
#include "gp.h"
#include "../../math/sb_math.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kp {
    const char *s;
    size_t pos;
    gp_kernel *k;
    int64_t d;
} kp;

static void skip(kp *p) {
    while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n') p->pos++;
}

static sb_status bad(const kp *p, const char *what) {
    return sb_fail(SB_ERR_INVALID_ARGUMENT, "kernel '%s': %s at character %zu (docs/gaussian-process.md)", p->s, what,
                   p->pos);
}

/* The log of a positive double by the profile's log (sb_elem_host.h). */
static double klog(double v) {
    double shift = 0.0;
    if (v < 0x1p-1000) v = v * 0x1p200, shift = -200.0 * 0.6931471805599453;
    const double d = v - 1.0;
    return ((d < 0x1p-6 && d > -0x1p-6) ? sb__hx_log1p_small(d) : sb__hx_log(v)) + shift;
}

/* An argument: a number, a list [a, b, ...] (up to cap), a pair (lo, hi) or
 * "fixed" / fixed. kind: 0 number, 1 list, 2 pair, 3 fixed. */
typedef struct karg {
    char name[32];
    int kind;
    int32_t n;
    double v[GP_MAX_PARAMS];
} karg;

static sb_status num(kp *p, double *out) {
    skip(p);
    char *end;
    const double v = strtod(p->s + p->pos, &end);
    if (end == p->s + p->pos) return bad(p, "a number expected");
    p->pos = (size_t)(end - p->s);
    *out = v;
    return SB_OK;
}

static sb_status arg(kp *p, karg *a) {
    sb_status st;
    skip(p);
    memset(a, 0, sizeof *a);
    /* name= */
    size_t q = p->pos, l = 0;
    while ((p->s[q] >= 'a' && p->s[q] <= 'z') || p->s[q] == '_') q++, l++;
    size_t r = q;
    while (p->s[r] == ' ') r++;
    if (l > 0 && p->s[r] == '=' && l < sizeof a->name) {
        memcpy(a->name, p->s + p->pos, l);
        p->pos = r + 1;
        skip(p);
    }
    const char c = p->s[p->pos];
    if (c == '[' || c == '(') {
        const char close = c == '[' ? ']' : ')';
        p->pos++;
        for (;;) {
            if (a->n >= GP_MAX_PARAMS) return bad(p, "too many values");
            if ((st = num(p, &a->v[a->n++])) != SB_OK) return st;
            skip(p);
            if (p->s[p->pos] == ',') {
                p->pos++;
                continue;
            }
            if (p->s[p->pos] != close) return bad(p, c == '[' ? "']' expected" : "')' expected");
            p->pos++;
            break;
        }
        a->kind = c == '[' ? 1 : 2;
        if (a->kind == 2 && a->n != 2) return bad(p, "bounds are a pair (lo, hi)");
        return SB_OK;
    }
    const char *rest = p->s + p->pos;
    if (!strncmp(rest, "\"fixed\"", 7) || !strncmp(rest, "'fixed'", 7)) {
        p->pos += 7, a->kind = 3;
        return SB_OK;
    }
    if (!strncmp(rest, "fixed", 5)) {
        p->pos += 5, a->kind = 3;
        return SB_OK;
    }
    a->kind = 0, a->n = 1;
    return num(p, &a->v[0]);
}

/* Add nvals parameters of a leaf (values, one bounds pair or fixed). */
static sb_status add_params(kp *p, const char *what, const double *vals, int32_t nvals, const karg *bounds,
                            int32_t node) {
    gp_kernel *k = p->k;
    if (k->npar + nvals > GP_MAX_PARAMS)
        return sb_fail(SB_ERR_LIMIT, "kernel '%s': more than %d hyperparameters", p->s, GP_MAX_PARAMS);
    double lo = 1e-5, hi = 1e5;
    int fixed = 0;
    if (bounds && bounds->kind == 3) fixed = 1;
    else if (bounds && bounds->kind == 2) lo = bounds->v[0], hi = bounds->v[1];
    else if (bounds) return sb_fail(SB_ERR_INVALID_ARGUMENT, "kernel '%s': %s_bounds must be (lo, hi) or \"fixed\"", p->s, what);
    if (!fixed && !(lo > 0.0 && hi >= lo && hi < INFINITY))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "kernel '%s': %s_bounds (%g, %g) must satisfy 0 < lo <= hi < inf", p->s,
                       what, lo, hi);
    for (int32_t i = 0; i < nvals; i++) {
        if (!(vals[i] > 0.0 && vals[i] < INFINITY))
            return sb_fail(SB_ERR_INVALID_ARGUMENT,
                           "kernel '%s': %s=%g must be > 0 and finite (a %s of 0 is refused: the kernel would divide by it)",
                           p->s, what, vals[i], what);
        const int32_t q = k->npar++;
        k->logv[q] = klog(vals[i]);
        k->lo[q] = fixed ? k->logv[q] : klog(lo);
        k->hi[q] = fixed ? k->logv[q] : klog(hi);
        k->fixed[q] = fixed;
        k->owner[q] = node;
    }
    return SB_OK;
}

static int named(const karg *a, const char *name) { return !strcmp(a->name, name); }

static sb_status atom(kp *p, int32_t *out) {
    skip(p);
    size_t q = p->pos;
    while ((p->s[q] >= 'a' && p->s[q] <= 'z') || (p->s[q] >= 'A' && p->s[q] <= 'Z')) q++;
    char name[32] = {0};
    if (q == p->pos || q - p->pos >= sizeof name) return bad(p, "a kernel name expected");
    memcpy(name, p->s + p->pos, q - p->pos);
    p->pos = q;
    skip(p);
    if (p->s[p->pos] != '(') return bad(p, "'(' expected after the kernel's name");
    p->pos++;
    karg args[4];
    int32_t na = 0;
    sb_status st;
    skip(p);
    if (p->s[p->pos] == ')') p->pos++;
    else
        for (;;) {
            if (na >= 4) return bad(p, "too many arguments");
            if ((st = arg(p, &args[na++])) != SB_OK) return st;
            skip(p);
            if (p->s[p->pos] == ',') {
                p->pos++;
                continue;
            }
            if (p->s[p->pos] != ')') return bad(p, "')' expected");
            p->pos++;
            break;
        }
    gp_kernel *k = p->k;
    if (k->nnodes >= GP_MAX_NODES) return sb_fail(SB_ERR_LIMIT, "kernel '%s': more than %d nodes", p->s, GP_MAX_NODES);
    const int32_t v = k->nnodes++;
    gp_node *nd = &k->node[v];
    memset(nd, 0, sizeof *nd);
    nd->a = nd->b = -1;
    nd->nls = 1;
    nd->p0 = k->npar;
    /* the argument slots of each kernel, scikit-learn's constructor order */
    static const char *const c_names[] = {"constant_value", "constant_value_bounds"};
    static const char *const w_names[] = {"noise_level", "noise_level_bounds"};
    static const char *const r_names[] = {"length_scale", "length_scale_bounds"};
    static const char *const m_names[] = {"length_scale", "length_scale_bounds", "nu"};
    static const char *const q_names[] = {"length_scale", "alpha", "length_scale_bounds", "alpha_bounds"};
    const char *const *names;
    int32_t nn;
    if (!strcmp(name, "ConstantKernel") || !strcmp(name, "C")) nd->kind = GK_CONST, names = c_names, nn = 2;
    else if (!strcmp(name, "WhiteKernel")) nd->kind = GK_WHITE, names = w_names, nn = 2;
    else if (!strcmp(name, "RBF")) nd->kind = GK_RBF, names = r_names, nn = 2;
    else if (!strcmp(name, "Matern")) nd->kind = GK_MATERN, names = m_names, nn = 3;
    else if (!strcmp(name, "RationalQuadratic")) nd->kind = GK_RQ, names = q_names, nn = 4;
    else
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "kernel '%s': '%s' is not a kernel this library builds (ConstantKernel or C, WhiteKernel, RBF, "
                       "Matern, RationalQuadratic; docs/gaussian-process.md)", p->s, name);
    const karg *slot[4] = {NULL, NULL, NULL, NULL};
    for (int32_t i = 0; i < na; i++) {
        int32_t at = -1;
        if (!args[i].name[0]) at = i;
        else
            for (int32_t j = 0; j < nn; j++)
                if (named(&args[i], names[j])) at = j;
        if (at < 0 || at >= nn)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "kernel '%s': %s has no argument %s%s", p->s, name,
                           args[i].name[0] ? args[i].name : "in position ", args[i].name[0] ? "" : "beyond its last");
        if (slot[at]) return sb_fail(SB_ERR_INVALID_ARGUMENT, "kernel '%s': %s's %s is given twice", p->s, name, names[at]);
        slot[at] = &args[i];
    }
    const double one = 1.0;
    if (nd->kind == GK_CONST || nd->kind == GK_WHITE) {
        if (slot[0] && slot[0]->kind != 0)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "kernel '%s': %s must be a number", p->s, names[0]);
        st = add_params(p, nd->kind == GK_CONST ? "constant_value" : "noise_level", slot[0] ? slot[0]->v : &one, 1,
                        slot[1], v);
    } else if (nd->kind == GK_RQ) {
        if ((slot[0] && slot[0]->kind != 0) || (slot[1] && slot[1]->kind != 0))
            return sb_fail(SB_ERR_INVALID_ARGUMENT,
                           "kernel '%s': RationalQuadratic's length_scale and alpha are numbers (it is isotropic, as "
                           "scikit-learn's)", p->s);
        st = add_params(p, "alpha", slot[1] ? slot[1]->v : &one, 1, slot[3], v);
        if (st == SB_OK) st = add_params(p, "length_scale", slot[0] ? slot[0]->v : &one, 1, slot[2], v);
    } else {
        const karg *ls = slot[0];
        if (ls && ls->kind != 0 && ls->kind != 1)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "kernel '%s': length_scale is a number or a list", p->s);
        if (ls && ls->kind == 1 && ls->n > 1 && ls->n != p->d)
            return sb_fail(SB_ERR_INVALID_ARGUMENT,
                           "kernel '%s': %d length scales for %lld features (one, or one per feature)", p->s,
                           (int)ls->n, (long long)p->d);
        nd->nls = ls && ls->kind == 1 ? ls->n : 1;
        if (nd->kind == GK_MATERN) {
            double nu = 1.5;
            if (slot[2]) {
                if (slot[2]->kind != 0) return sb_fail(SB_ERR_INVALID_ARGUMENT, "kernel '%s': nu is a number", p->s);
                nu = slot[2]->v[0];
            }
            if (nu == 0.5) nd->nu2 = 1;
            else if (nu == 1.5) nd->nu2 = 3;
            else if (nu == 2.5) nd->nu2 = 5;
            else
                return sb_fail(SB_ERR_INVALID_ARGUMENT,
                               "kernel '%s': Matern nu=%g is not built (0.5, 1.5 and 2.5 are; nu=inf is RBF)", p->s, nu);
        }
        st = add_params(p, "length_scale", ls ? ls->v : &one, nd->nls, slot[1], v);
    }
    nd->p1 = k->npar;
    *out = v;
    return st;
}

static sb_status expr(kp *p, int32_t *out);

static sb_status factor(kp *p, int32_t *out) {
    skip(p);
    if (p->s[p->pos] == '(') {
        p->pos++;
        sb_status st = expr(p, out);
        if (st != SB_OK) return st;
        skip(p);
        if (p->s[p->pos] != ')') return bad(p, "')' expected");
        p->pos++;
        return SB_OK;
    }
    return atom(p, out);
}

static sb_status join(kp *p, int32_t kind, int32_t a, int32_t b, int32_t *out) {
    gp_kernel *k = p->k;
    if (k->nnodes >= GP_MAX_NODES) return sb_fail(SB_ERR_LIMIT, "kernel '%s': more than %d nodes", p->s, GP_MAX_NODES);
    const int32_t v = k->nnodes++;
    gp_node *nd = &k->node[v];
    memset(nd, 0, sizeof *nd);
    nd->kind = kind, nd->a = a, nd->b = b, nd->p0 = k->node[a].p0, nd->p1 = k->node[b].p1, nd->nls = 1;
    *out = v;
    return SB_OK;
}

static sb_status term(kp *p, int32_t *out) {
    sb_status st = factor(p, out);
    for (;;) {
        if (st != SB_OK) return st;
        skip(p);
        if (p->s[p->pos] != '*') return SB_OK;
        p->pos++;
        int32_t b;
        if ((st = factor(p, &b)) == SB_OK) st = join(p, GK_PROD, *out, b, out);
    }
}

static sb_status expr(kp *p, int32_t *out) {
    sb_status st = term(p, out);
    for (;;) {
        if (st != SB_OK) return st;
        skip(p);
        if (p->s[p->pos] != '+') return SB_OK;
        p->pos++;
        int32_t b;
        if ((st = term(p, &b)) == SB_OK) st = join(p, GK_SUM, *out, b, out);
    }
}

sb_status sb_gp_kernel_parse(const char *spec, int64_t d, gp_kernel *k) {
    memset(k, 0, sizeof *k);
    if (!spec || !*spec) return sb_fail(SB_ERR_INVALID_ARGUMENT, "gaussian process: an empty kernel specification");
    kp p = {spec, 0, k, d};
    sb_status st = expr(&p, &k->root);
    if (st != SB_OK) return st;
    skip(&p);
    if (spec[p.pos]) return bad(&p, "text after the kernel");
    return SB_OK;
}

static size_t put(char *buf, size_t cap, size_t at, const char *fmt, double a, double b) {
    char tmp[128];
    const int w = snprintf(tmp, sizeof tmp, fmt, a, b);
    if (w > 0 && at + (size_t)w < cap) memcpy(buf + at, tmp, (size_t)w + 1);
    return at + (size_t)(w > 0 ? w : 0);
}

static double kexp(double x) { return x < -708.0 ? 0.0 : sb__hx_exp(x); }

static size_t fmt_bounds(const gp_kernel *k, int32_t q, char *buf, size_t cap, size_t at) {
    if (k->fixed[q]) return put(buf, cap, at, "\"fixed\"", 0, 0);
    return put(buf, cap, at, "(%.17g, %.17g)", kexp(k->lo[q]), kexp(k->hi[q]));
}

static size_t fmt_node(const gp_kernel *k, int32_t v, char *buf, size_t cap, size_t at) {
    const gp_node *nd = &k->node[v];
    if (nd->kind == GK_SUM || nd->kind == GK_PROD) {
        at = put(buf, cap, at, "(", 0, 0);
        at = fmt_node(k, nd->a, buf, cap, at);
        at = put(buf, cap, at, nd->kind == GK_SUM ? " + " : " * ", 0, 0);
        at = fmt_node(k, nd->b, buf, cap, at);
        return put(buf, cap, at, ")", 0, 0);
    }
    static const char *const names[] = {"ConstantKernel", "WhiteKernel", "RBF", "Matern", "RationalQuadratic"};
    at = put(buf, cap, at, names[nd->kind], 0, 0);
    at = put(buf, cap, at, "(", 0, 0);
    int32_t q = nd->p0;
    if (nd->kind == GK_RQ) {
        at = put(buf, cap, at, "length_scale=%.17g, alpha=%.17g, length_scale_bounds=", kexp(k->logv[q + 1]), kexp(k->logv[q]));
        at = fmt_bounds(k, q + 1, buf, cap, at);
        at = put(buf, cap, at, ", alpha_bounds=", 0, 0);
        at = fmt_bounds(k, q, buf, cap, at);
    } else if (nd->kind == GK_CONST || nd->kind == GK_WHITE) {
        at = put(buf, cap, at, "%.17g, ", kexp(k->logv[q]), 0);
        at = fmt_bounds(k, q, buf, cap, at);
    } else {
        if (nd->nls == 1) at = put(buf, cap, at, "%.17g, ", kexp(k->logv[q]), 0);
        else {
            at = put(buf, cap, at, "[", 0, 0);
            for (int32_t f = 0; f < nd->nls; f++) at = put(buf, cap, at, f ? ", %.17g" : "%.17g", kexp(k->logv[q + f]), 0);
            at = put(buf, cap, at, "], ", 0, 0);
        }
        at = fmt_bounds(k, q, buf, cap, at);
        if (nd->kind == GK_MATERN) at = put(buf, cap, at, ", nu=%.1f", (double)nd->nu2 / 2.0, 0);
    }
    return put(buf, cap, at, ")", 0, 0);
}

size_t sb_gp_kernel_format(const gp_kernel *k, char *buf, size_t cap) {
    if (cap) buf[0] = 0;
    return fmt_node(k, k->root, buf, cap, 0);
}

/* Whether k is a kernel sb_gp_kernel_parse could have made for d features:
 * NULL, or what is wrong (for a reader's named refusal). */
const char *sb_gp_kernel_check(const gp_kernel *k, int64_t d) {
    if (k->nnodes < 1 || k->nnodes > GP_MAX_NODES || k->npar < 1 || k->npar > GP_MAX_PARAMS ||
        k->root != k->nnodes - 1)
        return "node or parameter counts out of range, or the root is not the last node";
    int32_t used[GP_MAX_NODES] = {0};
    for (int32_t v = 0; v < k->nnodes; v++) {
        const gp_node *nd = &k->node[v];
        int32_t np = -1;
        if (nd->kind == GK_SUM || nd->kind == GK_PROD) {
            if (nd->a < 0 || nd->a >= v || nd->b < 0 || nd->b >= v || nd->a == nd->b || used[nd->a] || used[nd->b])
                return "an operator's operands are not two earlier unused nodes";
            used[nd->a] = used[nd->b] = 1;
            if (nd->p0 != k->node[nd->a].p0 || nd->p1 != k->node[nd->b].p1 || k->node[nd->a].p1 != k->node[nd->b].p0 ||
                nd->nls != 1 || nd->nu2 != 0)
                return "an operator's parameters are not its operands' in order";
            continue;
        }
        if (nd->a != -1 || nd->b != -1) return "a kernel node has operands";
        if (nd->kind == GK_CONST || nd->kind == GK_WHITE) np = 1;
        else if (nd->kind == GK_RQ) np = 2;
        else if (nd->kind == GK_RBF || nd->kind == GK_MATERN) {
            if (nd->nls != 1 && nd->nls != d) return "a length scale count that is neither 1 nor the feature count";
            np = nd->nls;
        } else
            return "an unknown node kind";
        if (nd->kind == GK_MATERN ? (nd->nu2 != 1 && nd->nu2 != 3 && nd->nu2 != 5) : nd->nu2 != 0)
            return "a Matern nu other than 0.5, 1.5, 2.5 (or a nu on another kernel)";
        if (nd->kind != GK_RBF && nd->kind != GK_MATERN && nd->nls != 1) return "length scales on a kernel without them";
        const int32_t prev = v == 0 ? 0 : -1;
        (void)prev;
        if (nd->p0 < 0 || nd->p1 != nd->p0 + np || nd->p1 > k->npar) return "a kernel's parameter range";
    }
    for (int32_t v = 0; v < k->nnodes; v++)
        if (used[v] == (v == k->root)) return "the nodes do not form one tree";
    if (k->node[k->root].p0 != 0 || k->node[k->root].p1 != k->npar) return "the root does not hold every parameter";
    /* leaves in order hold consecutive parameter ranges */
    int32_t next = 0;
    for (int32_t v = 0; v < k->nnodes; v++) {
        const gp_node *nd = &k->node[v];
        if (nd->kind == GK_SUM || nd->kind == GK_PROD) continue;
        if (nd->p0 != next) return "the kernels' parameters are not numbered in order";
        next = nd->p1;
    }
    for (int32_t p = 0; p < k->npar; p++) {
        const double a = k->logv[p], lo = k->lo[p], hi = k->hi[p];
        if (a - a != 0.0 || lo - lo != 0.0 || hi - hi != 0.0 || !(lo <= hi) || !(a > -700.0 && a < 700.0) ||
            (k->fixed[p] != 0 && k->fixed[p] != 1) || (k->fixed[p] && (lo != a || hi != a)))
            return "a hyperparameter or its bounds out of range";
    }
    return NULL;
}
