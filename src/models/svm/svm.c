/*
 * svm.c: support vector classification and regression with scikit-learn's SVC
 * and SVR names and semantics (docs/svm.md): kernels linear, poly, rbf and
 * sigmoid, C, epsilon, gamma = scale | auto | a value, degree, coef0, tol,
 * max_iter, class_weight, sample weights, one-vs-one multiclass in
 * scikit-learn's pair order.
 *
 * The solver is SMO (Platt, "Fast training of support vector machines using
 * sequential minimal optimization", 1998) on the dual
 *     min 1/2 a'Qa + p'a,  y'a = 0,  0 <= a_t <= C_t,  Q_ij = y_i y_j K_ij,
 * with the second-order working-set selection of Fan, Chen and Lin ("Working
 * set selection using second order information for training support vector
 * machines", JMLR 6, 2005), as the libsvm guide states it:
 *     i = argmax { -y_t G_t : t in I_up },
 *     j = argmin { -b_it^2 / a_it : t in I_low, -y_t G_t < -y_i G_i },
 * b_it = -y_i G_i + y_t G_t, a_it = K_ii + K_tt - 2 K_it (tau = 1e-12 when not
 * positive); stop when max_up - min_low < tol. Every choice is fixed by the
 * data: an argmax or argmin keeps the first (lowest) index on a tie, the pair
 * moves by the clipped Newton step, and the gradient is updated entry by entry
 * in index order with the two rows' terms in one order. The dual variables
 * and the gradient are double; kernel values are float32 (libsvm's cache is
 * float too), each computed by one sequence: the sum over features in index
 * order in double (differences and products of float32 values), then for rbf
 * e^(-gamma D) by the profile's sb_expf of the exponent rounded to float32,
 * poly by repeated multiplication, sigmoid by sb_tanhf. So the iterations and
 * the bits are the same at every thread count: threads only compute a kernel
 * row's entries (each by one thread) or whole one-vs-one pairs (each a
 * problem of its own).
 *
 * Kernel rows are cached with least-recently-used eviction: a cached row is
 * bit-for-bit the row it would be recomputed as, so the cache changes time
 * only. There is no shrinking (scikit-learn's shrinking=True changes libsvm's
 * path); shrinking is accepted and has no effect.
 *
 * probability=true (SVC) adds Platt scaling as libsvm does it: each pair's
 * sigmoid fitted on the decision values of a 5-fold cross-validation whose
 * split is keyed by random_state (sv_cv states the rule; Lin, Lin and Weng's
 * Newton method in sv_platt), then Wu, Lin and Weng's pairwise coupling
 * (sv_couple); the exp and log are the profile's double ones.
 */
#include "svm.h"
#include "svm_device.h"
#include "../../core/rng.h"
#include "../../kernels/svm.h"
#include "../../math/sb_math.h"
#include "../f64_math.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SV_TAU 1e-12
#define SV_ROW_GRAIN 512 /* kernel row entries of a task */
#define SV_SEL_GRAIN 4096 /* variables of a selection or gradient task (a schedule input: sv_seljob) */
#define SV_MAX_CLASSES 1000
#define SV_CV_FOLDS 5               /* libsvm's internal cross-validation for Platt scaling */
#define SV_CV_PURPOSE 0x53564356u   /* "SVCV": the split's Philox purpose */
#define SV_MIN_PROB 1e-7            /* pairwise probabilities are clipped to [1e-7, 1 - 1e-7] (libsvm's) */
/* The working set's comparisons: a later index wins only when strictly
 * better, so ties go to the lower index (the arm svm-wss-ties flips that). */
#ifdef SB_SABOTAGE_SVM_WSS_TIES
#define SV_MORE(v, best) ((v) >= (best))
#define SV_LESS(v, best) ((v) <= (best))
#else
#define SV_MORE(v, best) ((v) > (best))
#define SV_LESS(v, best) ((v) < (best))
#endif

static const char *const k_kernel_names[SB_SVM_KERNEL_COUNT_] = {"linear", "poly", "rbf", "sigmoid"};

/* ---- parameters ---- */

enum { SV_GAMMA_SCALE = 0, SV_GAMMA_AUTO = 1, SV_GAMMA_VALUE = 2 };

typedef struct sv_params {
    int32_t kind, kernel, degree, gamma_rule, numeric_mode, balanced, shrinking;
    double C, epsilon, gamma, coef0, tol, cache_mb;
    int64_t max_iter;
    int32_t probability;      /* Platt scaling (SVC only) */
    uint64_t random_state;    /* the cross-validation split's key (probability only) */
    int random_state_given;
    int32_t ncw;              /* class_weight entries */
    int32_t cw_class[64];
    double cw_value[64];
    int kind_given;
    int32_t device;           /* sb_device_kind: cuda and opencl compute the kernel values there */
} sv_params;

static int is(const char *key, const char *a) { return !strcmp(key, a); }

static sb_status sv_double(const char *key, const char *v, double lo, int lo_open, double *out) {
    char *end = NULL;
    const double x = strtod(v, &end);
    if (!end || end == v || *end || !isfinite(x) || (lo_open ? !(x > lo) : !(x >= lo)))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s=%s: a finite number %s %g", key, v, lo_open ? ">" : ">=", lo);
    *out = x;
    return SB_OK;
}

/* class_weight: "balanced", or "class:weight" entries joined by ';'. */
static sb_status sv_class_weight(const char *v, sv_params *p) {
    if (!strcmp(v, "balanced")) return p->balanced = 1, SB_OK;
    if (!strcmp(v, "none") || !*v) return SB_OK;
    const char *s = v;
    while (*s) {
        char *end = NULL;
        const long c = strtol(s, &end, 10);
        if (end == s || *end != ':' || c < 0 || c >= SV_MAX_CLASSES || p->ncw >= 64)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "class_weight=%s: 'balanced' or class:weight entries joined by ';' "
                           "(classes 0..%d, at most 64 entries)", v, SV_MAX_CLASSES - 1);
        s = end + 1;
        const double w = strtod(s, &end);
        if (end == s || !isfinite(w) || w < 0.0 || (*end && *end != ';'))
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "class_weight=%s: class %ld's weight is not a finite number >= 0",
                           v, c);
        for (int32_t k = 0; k < p->ncw; k++)
            if (p->cw_class[k] == (int32_t)c)
                return sb_fail(SB_ERR_INVALID_ARGUMENT, "class_weight=%s: class %ld given twice", v, c);
        p->cw_class[p->ncw] = (int32_t)c, p->cw_value[p->ncw] = w, p->ncw++;
        s = *end ? end + 1 : end;
    }
    return SB_OK;
}

static sb_status sv_params_parse(const sb_params *params, sv_params *p) {
    memset(p, 0, sizeof *p);
    p->kernel = SB_SVM_RBF, p->degree = 3, p->gamma_rule = SV_GAMMA_SCALE, p->shrinking = 1;
    p->C = 1.0, p->epsilon = 0.1, p->tol = 1e-3, p->cache_mb = 200.0, p->max_iter = -1;
    sb_numeric_mode mode;
    sb_status st = sb_params_resolve_mode(params, SB_FAMILY_SVM, &mode);
    if (st != SB_OK) return st;
    p->numeric_mode = (int32_t)mode;
    int eps_given = 0;
    const char *key, *v;
    for (int64_t e = 0; params && sb_params_entry(params, e, &key, &v) == SB_OK && st == SB_OK; e++) {
        int64_t i;
        if (is(key, "numeric_mode")) {
            continue;
        } else if (is(key, "model")) {
            if (!strcmp(v, "svc")) p->kind = SB_SVM_SVC;
            else if (!strcmp(v, "svr")) p->kind = SB_SVM_SVR;
            else st = sb_fail(SB_ERR_INVALID_ARGUMENT, "model='%s' is not a support vector machine (svc or svr)", v);
            p->kind_given = 1;
        } else if (is(key, "kernel")) {
            int32_t k = -1;
            for (int32_t q = 0; q < SB_SVM_KERNEL_COUNT_; q++)
                if (!strcmp(v, k_kernel_names[q])) k = q;
            if (k < 0)
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "kernel='%s': linear, poly, rbf or sigmoid (precomputed and "
                             "callables are not supported)", v);
            p->kernel = k;
        } else if (is(key, "C")) {
            char *end = NULL;
            const double x = strtod(v, &end);
            if (!end || end == v || *end || !isfinite(x) || !(x > 0.0))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "C=%s: C must be a finite number > 0", v);
            p->C = x;
        } else if (is(key, "epsilon")) {
            st = sv_double(key, v, 0.0, 0, &p->epsilon);
            eps_given = 1;
        } else if (is(key, "gamma")) {
            if (!strcmp(v, "scale")) p->gamma_rule = SV_GAMMA_SCALE;
            else if (!strcmp(v, "auto")) p->gamma_rule = SV_GAMMA_AUTO;
            else if ((st = sv_double(key, v, 0.0, 0, &p->gamma)) == SB_OK) p->gamma_rule = SV_GAMMA_VALUE;
            else st = sb_fail(SB_ERR_INVALID_ARGUMENT, "gamma=%s: 'scale', 'auto' or a finite number >= 0", v);
        } else if (is(key, "degree")) {
            if ((st = sb_param_int(key, v, 0, 64, &i)) == SB_OK) p->degree = (int32_t)i;
        } else if (is(key, "coef0")) {
            char *end = NULL;
            p->coef0 = strtod(v, &end);
            if (!end || end == v || *end || !isfinite(p->coef0))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "coef0=%s: a finite number", v);
        } else if (is(key, "tol")) {
            st = sv_double(key, v, 0.0, 1, &p->tol);
        } else if (is(key, "max_iter")) {
            if ((st = sb_param_int(key, v, -1, INT64_MAX, &i)) == SB_OK) {
                if (i == 0) st = sb_fail(SB_ERR_INVALID_ARGUMENT, "max_iter=0: -1 (no limit) or a positive count");
                p->max_iter = i;
            }
        } else if (is(key, "cache_size")) {
            st = sv_double(key, v, 0.0, 1, &p->cache_mb); /* the row cache's size: time only, never a bit */
        } else if (is(key, "shrinking")) {
            if (!strcmp(v, "true") || !strcmp(v, "1")) p->shrinking = 1;
            else if (!strcmp(v, "false") || !strcmp(v, "0")) p->shrinking = 0;
            else st = sb_fail(SB_ERR_INVALID_ARGUMENT, "shrinking=%s: true or false", v);
        } else if (is(key, "class_weight")) {
            st = sv_class_weight(v, p);
        } else if (is(key, "probability")) {
            if (!strcmp(v, "true") || !strcmp(v, "1")) p->probability = 1;
            else if (!strcmp(v, "false") || !strcmp(v, "0")) p->probability = 0;
            else st = sb_fail(SB_ERR_INVALID_ARGUMENT, "probability=%s: true or false", v);
        } else if (is(key, "random_state")) {
            char *end = NULL;
            const unsigned long long x = strtoull(v, &end, 10);
            if (!end || end == v || *end || v[0] == '-')
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "random_state=%s: a whole number >= 0", v);
            p->random_state = (uint64_t)x, p->random_state_given = 1;
        } else if (is(key, "device")) {
            /* cuda, opencl, gpu: the kernel rows and decision values on the device (svm_device.c), the
             * same bits; cpu-batched is the host's path (no batched host reference of its own) */
            sb_device_kind dk;
            if ((st = sb_device_parse(v, &dk)) == SB_OK) p->device = (int32_t)dk;
        } else {
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown parameter '%s' for support vector machines (docs/svm.md)",
                         key);
        }
    }
    if (st != SB_OK) return st;
    if (!p->kind_given) return sb_fail(SB_ERR_INVALID_ARGUMENT, "support vector machines need model=svc or model=svr");
    if (p->kind == SB_SVM_SVC && eps_given)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "epsilon is SVR's (the tube's width); SVC has none");
    if (p->kind == SB_SVM_SVR && (p->balanced || p->ncw))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "class_weight is SVC's; SVR has no classes");
    if (p->kind == SB_SVM_SVR && p->probability)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "probability=true is SVC's (Platt scaling); SVR has no probabilities "
                       "(scikit-learn's SVR has no such parameter)");
    if (p->random_state_given && !p->probability)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "random_state keys the cross-validation split of probability=true "
                       "only; without probability it changes nothing");
    return SB_OK;
}

/* ---- kernels ---- */

typedef struct sv_kern {
    int32_t kernel, degree, d;
    double gamma, coef0;
} sv_kern;

/* The sum under K(a, b): the squared distance (rbf) or the dot product (the
 * others), over the features in index order in double. */
static inline double sv_sum(const sv_kern *k, const float *a, const float *b) {
    return sb_svk_sum(k->kernel, k->d, a, 1, b, 1); /* kernels/svm.h: the devices' sequence too */
}

/* K from its sum, as float32 (the header's contract; kernels/svm.h). */
static inline float sv_finish(const sv_kern *k, double s) {
    return sb_svk_finish(k->kernel, k->degree, k->gamma, k->coef0, s);
}

/* K(a, b) as float32 by one fixed sequence (the header's contract). */
static float sv_kernel(const sv_kern *k, const float *a, const float *b) { return sv_finish(k, sv_sum(k, a, b)); }

/* K(a, b_u) for four rows b_u at once: each entry's sum is sv_sum's sequence
 * (kernels/svm.h's sb_svk_sum: its own accumulator, features in index order);
 * the four chains only run side by side. */
static void sv_kernel4(const sv_kern *k, const float *a, const float *b0, const float *b1, const float *b2,
                       const float *b3, float *out) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    if (k->kernel == SB_SVM_RBF) {
        for (int32_t f = 0; f < k->d; f++) {
            const double x = (double)a[f];
            const double t0 = x - (double)b0[f], t1 = x - (double)b1[f], t2 = x - (double)b2[f],
                         t3 = x - (double)b3[f];
            s0 += t0 * t0, s1 += t1 * t1, s2 += t2 * t2, s3 += t3 * t3;
        }
    } else {
        for (int32_t f = 0; f < k->d; f++) {
            const double x = (double)a[f];
            s0 += x * (double)b0[f], s1 += x * (double)b1[f], s2 += x * (double)b2[f], s3 += x * (double)b3[f];
        }
    }
    out[0] = sv_finish(k, s0), out[1] = sv_finish(k, s1), out[2] = sv_finish(k, s2), out[3] = sv_finish(k, s3);
}

/* ---- the row cache ---- */

typedef struct sv_cache {
    int64_t nk, cap, used;  /* points, rows it may hold (>= 2), rows held */
    float **row;            /* nk: the cached row of a point, or NULL */
    int64_t *prev, *next;   /* the LRU list over cached points; -1 ends */
    int64_t head, tail;     /* least and most recently used */
} sv_cache;

typedef struct sv_prob {
    const sv_kern *k;
    const float *x;          /* training rows */
    const int64_t *pts;      /* nk kernel points: training row indices */
    int64_t nk, l;           /* kernel points, variables */
    const int8_t *y;         /* l: +1 / -1 */
    const double *p, *C;     /* l: linear term, upper bounds */
    double *alpha, *G;       /* l: the solution and its gradient */
    float *diag;             /* nk: K(t, t) */
    int64_t max_iter, n_iter;
    double tol, rho;
    int converged, parallel;
    double cache_mb;
    sv_cache c;
    sv_dev *dv;              /* a GPU computes the kernel rows (NULL: the host) */
    sb_status rowst;         /* why sv_row gave NULL */
    const struct sv_lanes *lanes; /* the lane kernels (svm_lanes.h), or the plain loops */
    float *xt;               /* d x nk: the points feature-major for the lanes' rows (NULL: the plain rows) */
    uint64_t *bmask;         /* the blocks' feature masks of svl_sums_sparse (NULL: the dense sums) */
    uint8_t *st;             /* l: the SV_ST_* bits of each variable, for the lanes */
} sv_prob;

typedef struct sv_rowjob {
    const sv_prob *pr;
    int64_t pt;
    float *out;
} sv_rowjob;

/* ---- the lanes (svm_lanes.h): the solver's loops, VL indices side by side, the same bits ---- */

/* One pass of the solver over its variables: the gradient's update with the
 * rows of i and j (svl_grad) or the choice of j (svl_selj). */
typedef struct sv_pass {
    const int8_t *y;            /* l: +1 / -1 */
    const uint8_t *st;          /* l: each variable's SV_ST_* bits (the lanes read these, not y, alpha, C) */
    const double *alpha, *C;
    double *G;
    const float *Ki, *Kj, *diag; /* by kernel point: a variable u reads its point's entry */
    double di, dj;              /* the steps of i and j */
    int8_t yi, yj;
    double gmax, Kii;           /* pass j's */
} sv_pass;

/* A variable's status for the lanes, kept with its alpha: in I_up, in I_low,
 * y = +1 (libsvm keeps the same as its alpha_status). */
#define SV_ST_UP 1
#define SV_ST_LOW 2
#define SV_ST_POS 4

typedef struct sv_cand {
    double v;
    int64_t i;
} sv_cand;

/* The plain gradient update over u in [b, e) (rows read at u - off): G_u +=
 * Q_ui d_i then Q_uj d_j, and the first argmax of -y G over I_up (its value
 * in *best, -1 when none). */
static int64_t sv_grad_plain(const sv_pass *ps, int64_t off, int64_t b, int64_t e, double *best) {
    double gmax = -INFINITY;
    int64_t i = -1;
    for (int64_t u = b; u < e; u++) {
        const double a = (double)ps->Ki[u - off] * ps->di, w = (double)ps->Kj[u - off] * ps->dj;
        double g = ps->G[u];
        g = ps->y[u] == ps->yi ? g + a : g - a;
        g = ps->y[u] == ps->yj ? g + w : g - w;
        ps->G[u] = g;
        if (!(ps->y[u] > 0 ? ps->alpha[u] < ps->C[u] : ps->alpha[u] > 0.0)) continue;
        const double v = ps->y[u] > 0 ? -g : g;
        if (SV_MORE(v, gmax)) gmax = v, i = u;
    }
    *best = gmax;
    return i;
}

/* The plain pass j over u in [b, e): *gmin lowered to the smallest -y G over
 * I_low, and the first argmin of -b^2 / a among b = gmax - v > 0 (its value in
 * *best, -1 when none). */
static int64_t sv_selj_plain(const sv_pass *ps, int64_t off, int64_t b0, int64_t e, double *gmin, double *best) {
    double gm = *gmin, bo = INFINITY;
    int64_t j = -1;
    for (int64_t u = b0; u < e; u++) {
        if (!(ps->y[u] > 0 ? ps->alpha[u] > 0.0 : ps->alpha[u] < ps->C[u])) continue;
        const double v = ps->y[u] > 0 ? -ps->G[u] : ps->G[u];
        if (v < gm) gm = v;
        const double b = ps->gmax - v;
        if (b > 0.0) {
            double a = ps->Kii + (double)ps->diag[u - off] - 2.0 * (double)ps->Ki[u - off];
            if (!(a > 0.0)) a = SV_TAU;
            const double o = -(b * b) / a;
            if (SV_LESS(o, bo)) bo = o, j = u;
        }
    }
    *gmin = gm, *best = bo;
    return j;
}

/* The winner among candidates (distinct indices, each its stretch's winner)
 * as one pass over their indices in order by the solver's comparison (more:
 * SV_MORE from -inf, else SV_LESS from +inf): the winner of the pass over
 * every index, since that winner is its own stretch's. -1 when none. */
static int64_t sv_pick(sv_cand *c, int n, int more, double *val) {
    for (int a = 1; a < n; a++) /* insertion sort by index (n is small) */
        for (int b = a; b > 0 && c[b - 1].i > c[b].i; b--) {
            const sv_cand t = c[b];
            c[b] = c[b - 1], c[b - 1] = t;
        }
    double best = more ? -INFINITY : INFINITY;
    int64_t w = -1;
    for (int a = 0; a < n; a++)
        if (more ? SV_MORE(c[a].v, best) : SV_LESS(c[a].v, best)) best = c[a].v, w = c[a].i;
    *val = best;
    return w;
}

#define SV_LANES_MAX 8 /* the widest lanes: candidates a stretch gives are at most this + 1 */
#define SV_BLK 16      /* points of a block of svl_sums_sparse (a multiple of every lane width; SV_ROW_GRAIN's divisor) */
#define SV_MASK_W 16   /* svl_sums_sparse's masks: d <= 64 SV_MASK_W */
#if defined(__x86_64__) && defined(__GNUC__)
#define SV_X86 1
#define SVL_SUF avx2
#define SVL_ATTR __attribute__((target("avx2")))
#define SVL_VL 4
#include "svm_lanes.h"
#define SVL_SUF avx512
#define SVL_ATTR __attribute__((target("avx512f")))
#define SVL_VL 8
#include "svm_lanes.h"
#endif

/* The lane kernels of this machine, chosen once: AVX-512F or AVX2 where the
 * CPU has them (x86-64), else none (the plain loops); every choice gives the
 * same bits. sb_svm_lanes_for_tests caps the choice. */
typedef struct sv_lanes {
    void (*sums)(int, int32_t, const float *, const float *, int64_t, int64_t, int64_t, double *);
    void (*sums_sparse)(int, int32_t, const float *, const float *, int64_t, int64_t, int64_t, double *,
                        const uint64_t *, const uint64_t *, int32_t);
    int (*grad)(const sv_pass *, int64_t, int64_t, int64_t, sv_cand *);
    int (*selj)(const sv_pass *, int64_t, int64_t, int64_t, double *, sv_cand *);
    const char *name;
} sv_lanes;

#ifdef SV_X86
static const sv_lanes k_lanes_avx2 = {svl_sums_avx2, svl_sums_sparse_avx2, svl_grad_avx2, svl_selj_avx2, "avx2"};
static const sv_lanes k_lanes_avx512 = {svl_sums_avx512, svl_sums_sparse_avx512, svl_grad_avx512, svl_selj_avx512,
                                        "avx512"};
#endif
static const sv_lanes k_lanes_plain = {NULL, NULL, NULL, NULL, "generic"};
static int g_lanes_cap = 2; /* 0 generic, 1 avx2, 2 the best (sb_svm_lanes_for_tests) */

static const sv_lanes *sv_lanes_get(void) {
#ifdef SV_X86
    __builtin_cpu_init();
    const int lvl = __atomic_load_n(&g_lanes_cap, __ATOMIC_RELAXED);
    if (lvl >= 2 && __builtin_cpu_supports("avx512f")) return &k_lanes_avx512;
    if (lvl >= 1 && __builtin_cpu_supports("avx2")) return &k_lanes_avx2;
#endif
    return &k_lanes_plain;
}

const char *sb_svm_lanes_for_tests(const char *cap) {
    __atomic_store_n(&g_lanes_cap, cap && !strcmp(cap, "generic") ? 0 : cap && !strcmp(cap, "avx2") ? 1 : 2,
                     __ATOMIC_RELAXED);
    return sv_lanes_get()->name;
}

static void sv_row_task(void *ctx, int64_t t) {
    const sv_rowjob *j = ctx;
    const sv_prob *pr = j->pr;
    const int32_t d = pr->k->d;
    const float *a = pr->x + pr->pts[j->pt] * d;
    int64_t b, e;
    sb_chunk_range(pr->nk, SV_ROW_GRAIN, t, &b, &e);
    if (pr->xt) { /* the lanes over the feature-major points: each sum sb_svk_sum's sequence */
        double s[SV_ROW_GRAIN];
        if (pr->bmask) { /* the features set in a or in a block's points only (svl_sums_sparse) */
            uint64_t am[SV_MASK_W] = {0};
            for (int32_t f = 0; f < d; f++)
                if (a[f] != 0.0f) am[f / 64] |= (uint64_t)1 << (f % 64);
            pr->lanes->sums_sparse(pr->k->kernel == SB_SVM_RBF, d, a, pr->xt, pr->nk, b, e, s, am, pr->bmask,
                                   (d + 63) / 64);
        } else {
            pr->lanes->sums(pr->k->kernel == SB_SVM_RBF, d, a, pr->xt, pr->nk, b, e, s);
        }
        for (int64_t q = b; q < e; q++) j->out[q] = sv_finish(pr->k, s[q - b]);
        return;
    }
    const float *x = pr->x;
    const int64_t *pts = pr->pts;
    int64_t q = b;
    for (; q + 4 <= e; q += 4)
        sv_kernel4(pr->k, a, x + pts[q] * d, x + pts[q + 1] * d, x + pts[q + 2] * d, x + pts[q + 3] * d, j->out + q);
    for (; q < e; q++) j->out[q] = sv_kernel(pr->k, a, x + pts[q] * d);
}

static void sv_unlink(sv_cache *c, int64_t t) {
    if (c->prev[t] >= 0) c->next[c->prev[t]] = c->next[t];
    else c->head = c->next[t];
    if (c->next[t] >= 0) c->prev[c->next[t]] = c->prev[t];
    else c->tail = c->prev[t];
}

static void sv_push(sv_cache *c, int64_t t) {
    c->prev[t] = c->tail, c->next[t] = -1;
    if (c->tail >= 0) c->next[c->tail] = t;
    else c->head = t;
    c->tail = t;
}

/* Kernel row of point pt (K(pt, q) for every point q): cached, or computed
 * into the least recently used row's buffer (the row returned before this one
 * is never that row: cap >= 2). NULL when out of memory. */
static const float *sv_row(sv_prob *pr, int64_t pt) {
    sv_cache *c = &pr->c;
    if (c->row[pt]) {
        sv_unlink(c, pt);
        sv_push(c, pt);
        return c->row[pt];
    }
    float *buf;
    if (c->used < c->cap) {
        if (!(buf = sb_malloc(sizeof(float) * (size_t)pr->nk))) {
            pr->rowst = sb_fail(SB_ERR_OUT_OF_MEMORY, "support vector machines: out of memory for a kernel row");
            return NULL;
        }
        c->used++;
    } else {
        const int64_t old = c->head;
        sv_unlink(c, old);
        buf = c->row[old];
        c->row[old] = NULL;
    }
    if (pr->dv) { /* the same values, each by kernels/svm.h's sequence on the device */
        if ((pr->rowst = sv_dev_row(pr->dv, pt, buf)) != SB_OK) {
            sb_free(buf);
            c->used--;
            return NULL;
        }
    } else {
        sv_rowjob j = {pr, pt, buf};
        const int64_t ntasks = sb_chunk_count(pr->nk, SV_ROW_GRAIN);
        if (pr->parallel && ntasks > 1) sb_parallel_for(ntasks, sv_row_task, &j);
        else
            for (int64_t t = 0; t < ntasks; t++) sv_row_task(&j, t);
    }
    c->row[pt] = buf;
    sv_push(c, pt);
    return buf;
}

static void sv_cache_free(sv_cache *c) {
    for (int64_t t = 0; c->row && t < c->nk; t++) sb_free(c->row[t]);
    sb_free(c->row);
    sb_free(c->prev);
    sb_free(c->next);
}

/* ---- the solver ---- */

static inline int sv_up(const sv_prob *pr, int64_t t) {
    return pr->y[t] > 0 ? pr->alpha[t] < pr->C[t] : pr->alpha[t] > 0.0;
}
static inline int sv_low(const sv_prob *pr, int64_t t) {
    return pr->y[t] > 0 ? pr->alpha[t] > 0.0 : pr->alpha[t] < pr->C[t];
}

/* Variable t's SV_ST_* bits from its alpha (sv_up, sv_low) and y. */
static void sv_status(sv_prob *pr, int64_t t) {
    pr->st[t] = (uint8_t)((sv_up(pr, t) ? SV_ST_UP : 0) | (sv_low(pr, t) ? SV_ST_LOW : 0) | (pr->y[t] > 0 ? SV_ST_POS : 0));
}

/* The working set's two passes in chunks of SV_SEL_GRAIN variables, each
 * chunk's winner kept, then the chunks' winners compared in chunk order by
 * the same comparison (SV_MORE / SV_LESS): a later chunk wins only where a
 * sequential pass would have moved to it, so the index chosen is the one the
 * pass over every variable in order chooses, at any thread count (and the
 * minimum gmin is exact in any order). The chunks are a function of l only. */
static int64_t g_sel_grain = SV_SEL_GRAIN; /* sb_svm_sel_grain_for_tests */
void sb_svm_sel_grain_for_tests(int64_t grain) { g_sel_grain = grain > 0 ? grain : SV_SEL_GRAIN; }

typedef struct sv_seljob {
    sv_prob *pr;
    sv_pass ps;      /* the pass's inputs */
    int grad;        /* 1: the gradient's update and i's choice, 0: pass j */
    double *cv, *cg; /* per chunk: the winner's value, (pass j) the chunk's gmin */
    int64_t *ci;     /* per chunk: the winner's index, -1 none */
} sv_seljob;

/* Chunk t of the variables as at most two stretches [b, e) whose kernel
 * entries are at u - off: SVR's variables n..2n-1 are the points again. */
static int sv_stretches(const sv_prob *pr, int64_t t, int64_t b[2], int64_t e[2], int64_t off[2]) {
    int64_t b0, e0;
    sb_chunk_range(pr->l, g_sel_grain, t, &b0, &e0);
    int n = 0;
    if (b0 < pr->nk) b[n] = b0, e[n] = e0 < pr->nk ? e0 : pr->nk, off[n] = 0, n++;
    if (e0 > pr->nk) b[n] = b0 > pr->nk ? b0 : pr->nk, e[n] = e0, off[n] = pr->nk, n++;
    return n;
}

/* Pass over chunk t: pass j (jb->grad 0: the smallest -y G over I_low, gmin,
 * and the first argmin of -b^2 / a among b = gmax - v > 0) or the gradient's
 * update (jb->grad 1: G_u += Q_ui di + Q_uj dj, i's term first, and the first
 * argmax of -y G over I_up): sv_selj_plain's or sv_grad_plain's, by the lanes
 * where there are, the stretches' winners compared by sv_pick. */
static void sv_pass_task(void *ctx, int64_t t) {
    sv_seljob *jb = ctx;
    const sv_lanes *ln = jb->pr->lanes;
    int64_t b[2], e[2], off[2];
    const int ns = sv_stretches(jb->pr, t, b, e, off);
    sv_cand cand[2 * (SV_LANES_MAX + 1)];
    int nc = 0;
    double gmin = INFINITY;
    for (int k = 0; k < ns; k++) {
        if (jb->grad ? !!ln->grad : !!ln->selj) {
            nc += jb->grad ? ln->grad(&jb->ps, off[k], b[k], e[k], cand + nc)
                           : ln->selj(&jb->ps, off[k], b[k], e[k], &gmin, cand + nc);
        } else {
            const int64_t w = jb->grad ? sv_grad_plain(&jb->ps, off[k], b[k], e[k], &cand[nc].v)
                                       : sv_selj_plain(&jb->ps, off[k], b[k], e[k], &gmin, &cand[nc].v);
            if (w >= 0) cand[nc].i = w, nc++;
        }
    }
    if (!jb->grad) jb->cg[t] = gmin;
    jb->ci[t] = sv_pick(cand, nc, jb->grad, &jb->cv[t]);
}

/* Run task over the n chunks (threads where pr->parallel), the winners in
 * jb's per-chunk arrays. With the lanes a pass over fewer than SV_PASS_PAR
 * variables runs on the calling thread: it then takes microseconds, less than
 * waking the threads twice an iteration (and far less on a loaded machine).
 * The chunks and their comparison are the same either way: a schedule only. */
#define SV_PASS_PAR (1 << 18)
static void sv_chunks(sv_prob *pr, int64_t n, int grad, sv_seljob *jb) {
    jb->grad = grad;
    if (pr->parallel && n > 1 && (!pr->lanes->grad || pr->l >= SV_PASS_PAR)) sb_parallel_for(n, sv_pass_task, jb);
    else
        for (int64_t t = 0; t < n; t++) sv_pass_task(jb, t);
}

/* The feature masks of svl_sums_sparse: for each block of SV_BLK points, bit
 * f set where one of them has feature f nonzero. Kept (pr->bmask) only where
 * at most 3/4 of the (block, feature) bits are set, so that the sparse sums
 * save time; a schedule only (every sum is the same bits either way). */
static sb_status sv_masks(sv_prob *pr) {
    const int32_t d = pr->k->d, W = (d + 63) / 64;
    const int64_t nb = pr->nk / SV_BLK;
    uint64_t *m = sb_calloc((size_t)(nb * W), sizeof *m);
    if (!m) return sb_fail(SB_ERR_OUT_OF_MEMORY, "support vector machines: out of memory for the feature masks");
    int64_t set = 0;
    for (int64_t k = 0; k < nb; k++)
        for (int32_t f = 0; f < d; f++) {
            const float *r = pr->xt + f * pr->nk + k * SV_BLK;
            int any = 0;
            for (int t = 0; t < SV_BLK; t++) any |= r[t] != 0.0f;
            if (any) m[k * W + f / 64] |= (uint64_t)1 << (f % 64), set++;
        }
    if (4 * set > 3 * nb * (int64_t)d) sb_free(m), m = NULL;
    pr->bmask = m;
    return SB_OK;
}

/* Solve pr from alpha = 0 (the header's rules); SB_OK, or out of memory. */
static sb_status sv_solve(sv_prob *pr) {
    const int64_t l = pr->l, nk = pr->nk;
    sv_cache *c = &pr->c;
    memset(c, 0, sizeof *c);
    c->nk = nk, c->head = c->tail = -1;
    const double rows = pr->cache_mb * 1048576.0 / (4.0 * (double)nk);
    c->cap = rows >= (double)nk ? nk : rows < 2.0 ? 2 : (int64_t)rows;
    if (c->cap > nk) c->cap = nk < 2 ? 2 : nk;
    c->row = sb_calloc((size_t)nk, sizeof *c->row);
    c->prev = sb_malloc(sizeof(int64_t) * (size_t)nk);
    c->next = sb_malloc(sizeof(int64_t) * (size_t)nk);
    pr->diag = sb_malloc(sizeof(float) * (size_t)nk);
    const int64_t nch = sb_chunk_count(l, g_sel_grain);
    double *chv = sb_malloc(sizeof(double) * 2 * (size_t)(nch > 0 ? nch : 1));
    int64_t *chi = sb_malloc(sizeof(int64_t) * (size_t)(nch > 0 ? nch : 1));
    sv_seljob sj;
    memset(&sj, 0, sizeof sj);
    sj.pr = pr, sj.cv = chv, sj.cg = chv ? chv + (nch > 0 ? nch : 1) : NULL, sj.ci = chi;
    const int32_t d = pr->k->d;
    pr->lanes = sv_lanes_get();
    pr->xt = NULL, pr->st = NULL;
    if (pr->lanes->grad) pr->st = sb_malloc((size_t)(l > 0 ? l : 1));
    /* the lanes' rows read the points feature-major (a layout only: the host's rows; a device computes its own) */
    if (pr->lanes->sums && !pr->dv) pr->xt = sb_malloc(sizeof(float) * (size_t)(nk > 0 ? nk : 1) * (size_t)d);
    sb_status st = SB_OK;
    if (!c->row || !c->prev || !c->next || !pr->diag || !chv || !chi || (pr->lanes->grad && !pr->st) ||
        (pr->lanes->sums && !pr->dv && !pr->xt)) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "support vector machines: out of memory for %lld kernel points",
                     (long long)nk);
        goto done;
    }
    for (int64_t t = 0; pr->xt && t < nk; t++)
        for (int32_t f = 0; f < d; f++) pr->xt[f * nk + t] = pr->x[pr->pts[t] * d + f];
    pr->bmask = NULL;
    if (pr->xt && d <= 64 * SV_MASK_W && nk >= SV_BLK && (st = sv_masks(pr)) != SB_OK) goto done;
    sj.ps.y = pr->y, sj.ps.st = pr->st, sj.ps.alpha = pr->alpha, sj.ps.C = pr->C, sj.ps.G = pr->G;
    sj.ps.diag = pr->diag;
    if (pr->dv && (st = sv_dev_set_points(pr->dv, pr->x, pr->pts, nk)) != SB_OK) goto done;
    for (int64_t t = 0; t < nk; t++) pr->diag[t] = sv_kernel(pr->k, pr->x + pr->pts[t] * d, pr->x + pr->pts[t] * d);
    for (int64_t t = 0; t < l; t++) pr->alpha[t] = 0.0, pr->G[t] = pr->p[t];
    for (int64_t t = 0; pr->st && t < l; t++) sv_status(pr, t);
    pr->n_iter = 0;
    pr->converged = 1;
    /* i: the largest -y G over I_up, the first on a tie (then found again in
     * the same pass that updates the gradient: the same comparisons, in the
     * same order, over the updated values) */
    double gmax = -INFINITY;
    int64_t i = -1;
    for (int64_t t = 0; t < l; t++) {
        if (!sv_up(pr, t)) continue;
        const double v = pr->y[t] > 0 ? -pr->G[t] : pr->G[t];
        if (SV_MORE(v, gmax)) gmax = v, i = t;
    }
    for (;;) {
        if (i < 0) break;
        const int64_t pi = i < nk ? i : i - nk;
        const float *Ki = sv_row(pr, pi);
        if (!Ki) {
            st = pr->rowst;
            goto done;
        }
        const double Kii = (double)pr->diag[pi];
        double gmin = INFINITY, best = INFINITY;
        int64_t j = -1;
        sj.ps.Ki = Ki, sj.ps.Kii = Kii, sj.ps.gmax = gmax;
        sv_chunks(pr, nch, 0, &sj);
        for (int64_t t = 0; t < nch; t++) { /* in chunk order: the sequential pass's choice */
            if (sj.cg[t] < gmin) gmin = sj.cg[t];
            if (sj.ci[t] >= 0 && SV_LESS(sj.cv[t], best)) best = sj.cv[t], j = sj.ci[t];
        }
        if (gmax - gmin < pr->tol || j < 0) break;
        if (pr->max_iter >= 0 && pr->n_iter >= pr->max_iter) {
            pr->converged = 0;
            break;
        }
        pr->n_iter++;
        const int64_t pj = j < nk ? j : j - nk;
        const float *Kj = sv_row(pr, pj);
        if (!Kj) {
            st = pr->rowst;
            goto done;
        }
        Ki = c->row[pi]; /* still cached: the cache holds at least two rows */
        double a = Kii + (double)pr->diag[pj] - 2.0 * (double)Ki[pj];
        if (!(a > 0.0)) a = SV_TAU;
        const double vj = pr->y[j] > 0 ? -pr->G[j] : pr->G[j];
        double delta = (gmax - vj) / a; /* > 0: the Newton step along a_i += y_i delta, a_j -= y_j delta */
        const double ai = pr->alpha[i], aj = pr->alpha[j], Ci = pr->C[i], Cj = pr->C[j];
        const double bi = pr->y[i] > 0 ? Ci - ai : ai; /* room of each variable in its direction */
        const double bj = pr->y[j] > 0 ? aj : Cj - aj;
        double ni, nj;
        if (delta >= bi && bi <= bj) { /* i reaches its bound (exactly) */
            ni = pr->y[i] > 0 ? Ci : 0.0;
            nj = pr->y[j] > 0 ? aj - bi : aj + bi;
            if (bi == bj) nj = pr->y[j] > 0 ? 0.0 : Cj;
        } else if (delta >= bj) { /* j reaches its bound (exactly) */
            nj = pr->y[j] > 0 ? 0.0 : Cj;
            ni = pr->y[i] > 0 ? ai + bj : ai - bj;
        } else {
            ni = pr->y[i] > 0 ? ai + delta : ai - delta;
            nj = pr->y[j] > 0 ? aj - delta : aj + delta;
        }
        if (ni < 0.0) ni = 0.0;
        if (ni > Ci) ni = Ci;
        if (nj < 0.0) nj = 0.0;
        if (nj > Cj) nj = Cj;
        const double di = ni - ai, dj = nj - aj;
        pr->alpha[i] = ni, pr->alpha[j] = nj;
        if (pr->st) sv_status(pr, i), sv_status(pr, j);
        /* G_t += Q_ti di + Q_tj dj, t in index order, i's term first */
        sj.ps.Ki = Ki, sj.ps.Kj = Kj, sj.ps.di = di, sj.ps.dj = dj, sj.ps.yi = pr->y[i], sj.ps.yj = pr->y[j];
        gmax = -INFINITY, i = -1;
        sv_chunks(pr, nch, 1, &sj);
        for (int64_t t = 0; t < nch; t++) /* in chunk order: the sequential pass's choice */
            if (sj.ci[t] >= 0 && SV_MORE(sj.cv[t], gmax)) gmax = sj.cv[t], i = sj.ci[t];
    }
    /* rho: the mean of y G over the free variables, else the middle of its bounds */
    {
        double sum = 0.0, ub = INFINITY, lb = -INFINITY;
        int64_t nfree = 0;
        for (int64_t t = 0; t < l; t++) {
            if (!(pr->C[t] > 0.0)) continue; /* a row of weight 0 bounds nothing */
            const double yg = pr->y[t] > 0 ? pr->G[t] : -pr->G[t];
            const double a = pr->alpha[t];
            if (a > 0.0 && a < pr->C[t]) sum += yg, nfree++;
            else if ((a == 0.0) == (pr->y[t] > 0)) ub = yg < ub ? yg : ub;
            else lb = yg > lb ? yg : lb;
        }
        pr->rho = nfree > 0 ? sum / (double)nfree : isfinite(ub) && isfinite(lb) ? (ub + lb) / 2.0
                                                    : isfinite(ub) ? ub : isfinite(lb) ? lb : 0.0;
    }
done:
    sb_free(chv), sb_free(chi);
    sv_cache_free(c);
    sb_free(pr->diag);
    sb_free(pr->xt);
    sb_free(pr->st);
    sb_free(pr->bmask);
    pr->diag = NULL, pr->xt = NULL, pr->st = NULL, pr->bmask = NULL;
    return st;
}

/* ---- Platt scaling ---- */

/* One pair's problem as the cross-validation sees it: its l variables
 * (training rows pts, signs y, bounds C) in the pair's order. */
typedef struct sv_cvspec {
    const sv_kern *k;
    const float *x;
    const int64_t *pts;
    const int8_t *y;
    const double *C;
    int64_t l;
    uint32_t pair;
    uint64_t seed;
    double tol, cache_mb;
    int64_t max_iter;
    int parallel;
    sv_dev *dv;          /* a GPU (NULL: the host); its rows are the training rows */
} sv_cvspec;

typedef struct sv_key {
    uint64_t u;
    int64_t t;
} sv_key;

static int sv_key_cmp(const void *a, const void *b) {
    const sv_key *x = a, *y = b;
    if (x->u != y->u) return x->u < y->u ? -1 : 1;
    return x->t < y->t ? -1 : x->t > y->t ? 1 : 0;
}

/* The cross-validated decision values of one pair (libsvm's
 * svm_binary_svc_probability, as Platt 1999 asks: the sigmoid is fitted on
 * values of rows the model did not see). The split: position t of the pair
 * (its first class's rows in index order, then its second's) draws the
 * 64-bit key (w0 << 32 | w1) of Philox words (random_state, "SVCV", t, pair);
 * the positions sorted by (key, t) form the permutation, and fold f of 5 is
 * its entries [f l / 5, (f + 1) l / 5). Each fold's model is trained on the
 * other positions in ascending order with the same bounds, by the same SMO;
 * a held-out row's value is sum alpha_u y_u K(x, x_u) over the training
 * positions in order, minus rho. A fold whose training part has one class
 * only gives +1 (the first) or -1 (the second), none 0, as libsvm does. */
static sb_status sv_cv(const sv_cvspec *cv, double *dec) {
    const int64_t l = cv->l;
    const int32_t d = cv->k->d;
    sv_key *key = sb_malloc(sizeof(sv_key) * (size_t)(l > 0 ? l : 1));
    int64_t *spts = sb_malloc(sizeof(int64_t) * (size_t)(l > 0 ? l : 1));
    int8_t *sy = sb_malloc((size_t)(l > 0 ? l : 1));
    double *sv = sb_malloc(sizeof(double) * (size_t)(l > 0 ? 5 * l : 5));
    uint8_t *held = sb_malloc((size_t)(l > 0 ? l : 1));
    int64_t *hidx = cv->dv ? sb_malloc(sizeof(int64_t) * (size_t)(l > 0 ? l : 1)) : NULL;
    sb_status st = SB_OK;
    if (!key || !spts || !sy || !sv || !held || (cv->dv && !hidx)) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "SVC: out of memory for the cross-validation of %lld rows", (long long)l);
        goto done;
    }
    for (int64_t t = 0; t < l; t++) {
        sb_u32 w[4];
        sb_rng_words(cv->seed, SV_CV_PURPOSE, (sb_u64)t, cv->pair, w);
        key[t].u = (uint64_t)w[0] << 32 | (uint64_t)w[1], key[t].t = t;
    }
    qsort(key, (size_t)l, sizeof *key, sv_key_cmp);
    double *sp = sv, *sC = sv + l, *alpha = sv + 2 * l, *G = sv + 3 * l;
    for (int32_t f = 0; f < SV_CV_FOLDS && st == SB_OK; f++) {
        const int64_t b = (int64_t)f * l / SV_CV_FOLDS, e = (int64_t)(f + 1) * l / SV_CV_FOLDS;
        memset(held, 0, (size_t)l);
        for (int64_t r = b; r < e; r++) held[key[r].t] = 1;
        int64_t m = 0, npos = 0, nneg = 0;
        for (int64_t t = 0; t < l; t++) {
            if (held[t]) continue;
            spts[m] = cv->pts[t], sy[m] = cv->y[t], sp[m] = -1.0, sC[m] = cv->C[t];
            if (cv->y[t] > 0) npos++;
            else nneg++;
            m++;
        }
        if (npos == 0 || nneg == 0) {
            const double v = npos > 0 ? 1.0 : nneg > 0 ? -1.0 : 0.0;
            for (int64_t r = b; r < e; r++) dec[key[r].t] = v;
            continue;
        }
        sv_prob pr;
        memset(&pr, 0, sizeof pr);
        pr.k = cv->k, pr.x = cv->x, pr.pts = spts, pr.nk = m, pr.l = m, pr.y = sy, pr.p = sp, pr.C = sC;
        pr.alpha = alpha, pr.G = G, pr.max_iter = cv->max_iter, pr.tol = cv->tol, pr.cache_mb = cv->cache_mb;
        pr.parallel = cv->parallel, pr.dv = cv->dv;
        if ((st = sv_solve(&pr)) != SB_OK) break;
        if (cv->dv) { /* the held rows' sums on the device against the fold's points, still there */
            double *coef = sv + 4 * l, *hdec = sC; /* sC is free once the fold is solved */
            for (int64_t u = 0; u < m; u++) coef[u] = alpha[u] == 0.0 ? 0.0 : sy[u] > 0 ? alpha[u] : -alpha[u];
            int64_t nh = 0;
            for (int64_t t = 0; t < l; t++)
                if (held[t]) hidx[nh++] = cv->pts[t];
            const int64_t rng[6] = {0, 0, m, 0, 0, 0};
            st = sv_dev_decide(cv->dv, hidx, nh, coef, m, rng, &pr.rho, 1, 1, hdec);
            for (int64_t t = 0, h = 0; st == SB_OK && t < l; t++)
                if (held[t]) dec[t] = hdec[h++];
            if (st != SB_OK) break;
            continue;
        }
        for (int64_t t = 0; t < l; t++) {
            if (!held[t]) continue;
            const float *xh = cv->x + cv->pts[t] * d;
            double sum = 0.0;
            for (int64_t u = 0; u < m; u++)
                if (alpha[u] != 0.0) {
                    const double a = sy[u] > 0 ? alpha[u] : -alpha[u];
                    sum += a * (double)sv_kernel(cv->k, xh, cv->x + spts[u] * d);
                }
            dec[t] = sum - pr.rho;
        }
    }
done:
    sb_free(key), sb_free(spts), sb_free(sy), sb_free(sv), sb_free(held), sb_free(hidx);
    return st;
}

/* Platt's objective at (A, B): sum over i of t_i z + log(1 + e^-z) (z =
 * dec_i A + B >= 0) or (t_i - 1) z + log(1 + e^z) (z < 0), i in order. */
static double sv_platt_f(const double *dec, const double *tgt, int64_t l, double A, double B) {
    double f = 0.0;
    for (int64_t i = 0; i < l; i++) {
        const double z = dec[i] * A + B;
        if (z >= 0.0) f += tgt[i] * z + sb_f64_log(1.0 + sb_f64_exp(-z));
        else f += (tgt[i] - 1.0) * z + sb_f64_log(1.0 + sb_f64_exp(z));
    }
    return f;
}

/* Platt's sigmoid P(y = +1 | f) = 1 / (1 + e^(A f + B)) fitted to the
 * decision values dec of the labels y (+1 / -1) by Newton's method with a
 * backtracking line search, as Lin, Lin and Weng state it ("A note on Platt's
 * probabilistic outputs for support vector machines", Machine Learning 68,
 * 2007, algorithm 1): Platt's regularized targets (N+ + 1) / (N+ + 2) and
 * 1 / (N- + 2), start A = 0, B = log((N- + 1) / (N+ + 1)), the Hessian plus
 * 1e-12 on its diagonal, at most 100 iterations, stop when both gradient
 * entries are below 1e-5 in magnitude or a step falls under 1e-10; the
 * sufficient decrease f(new) < f + 1e-4 step g'd. Sums in index order. */
static void sv_platt(const double *dec, const int8_t *y, int64_t l, double *outA, double *outB) {
    double npos = 0.0, nneg = 0.0;
    for (int64_t i = 0; i < l; i++) {
        if (y[i] > 0) npos += 1.0;
        else nneg += 1.0;
    }
    const double hi = (npos + 1.0) / (npos + 2.0), lo = 1.0 / (nneg + 2.0);
    double *tgt = sb_malloc(sizeof(double) * (size_t)(l > 0 ? l : 1));
    double A = 0.0, B = sb_f64_log((nneg + 1.0) / (npos + 1.0));
    if (!tgt) { /* no room for the targets: the prior alone (A = 0) */
        *outA = A, *outB = B;
        return;
    }
    for (int64_t i = 0; i < l; i++) tgt[i] = y[i] > 0 ? hi : lo;
    double fval = sv_platt_f(dec, tgt, l, A, B);
    for (int it = 0; it < 100; it++) {
        double h11 = 1e-12, h22 = 1e-12, h21 = 0.0, g1 = 0.0, g2 = 0.0;
        for (int64_t i = 0; i < l; i++) {
            const double z = dec[i] * A + B;
            double p, q; /* P(+1) and 1 - P(+1), each from the side whose exponent is <= 0 */
            if (z >= 0.0) {
                const double e = sb_f64_exp(-z);
                p = e / (1.0 + e), q = 1.0 / (1.0 + e);
            } else {
                const double e = sb_f64_exp(z);
                p = 1.0 / (1.0 + e), q = e / (1.0 + e);
            }
            const double d2 = p * q;
            h11 += dec[i] * dec[i] * d2;
            h22 += d2;
            h21 += dec[i] * d2;
            const double d1 = tgt[i] - p;
            g1 += dec[i] * d1;
            g2 += d1;
        }
        if (fabs(g1) < 1e-5 && fabs(g2) < 1e-5) break;
        const double det = h11 * h22 - h21 * h21;
        const double dA = -(h22 * g1 - h21 * g2) / det, dB = -(-h21 * g1 + h11 * g2) / det;
        const double gd = g1 * dA + g2 * dB;
        double step = 1.0;
        while (step >= 1e-10) {
            const double nA = A + step * dA, nB = B + step * dB;
            const double nf = sv_platt_f(dec, tgt, l, nA, nB);
            if (nf < fval + 1e-4 * step * gd) {
                A = nA, B = nB, fval = nf;
                break;
            }
            step /= 2.0;
        }
        if (step < 1e-10) break; /* the line search failed: keep the last point */
    }
    sb_free(tgt);
    *outA = A, *outB = B;
}

/* ---- the fit ---- */

typedef struct sv_pairjob {
    const sv_kern *k;
    const float *x, *label, *w;
    const double *cw;        /* nclass class weights */
    const int64_t *order;    /* rows grouped by class, index order within */
    const int64_t *start;    /* nclass + 1 offsets into order */
    int32_t nclass;
    double C, tol, cache_mb;
    int64_t max_iter;
    double **alpha;          /* npairs: the pair's alphas, rows of its first class then its second */
    double *rho;
    int64_t *n_iter;
    int32_t *converged;
    sb_status *st;
    int parallel;
    int probability;         /* Platt scaling: the cross-validated decisions and the sigmoid of each pair */
    uint64_t seed;           /* random_state */
    double **cvdec;          /* npairs: the pair's cross-validated decision values (probability only) */
    double *probA, *probB;   /* npairs (probability only) */
    sv_dev *dv;              /* a GPU (NULL: the host); the pairs then run one after another */
} sv_pairjob;

static void sv_pair_task(void *ctx, int64_t p) {
    const sv_pairjob *jb = ctx;
    int32_t a = 0, b = 1;
    for (int64_t q = 0, r = 0; r < jb->nclass; r++)
        for (int32_t s = r + 1; s < jb->nclass; s++, q++)
            if (q == p) a = (int32_t)r, b = s;
    const int64_t na = jb->start[a + 1] - jb->start[a], nb = jb->start[b + 1] - jb->start[b], l = na + nb;
    int64_t *pts = sb_malloc(sizeof(int64_t) * (size_t)l);
    int8_t *y = sb_malloc((size_t)l);
    double *pv = sb_malloc(sizeof(double) * (size_t)l * 3);
    sb_status st = SB_OK;
    if (!pts || !y || !pv) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "support vector machines: out of memory for a pair of %lld rows",
                     (long long)l);
    } else {
        double *C = pv + l, *G = pv + 2 * l;
        for (int64_t t = 0; t < l; t++) {
            const int64_t r = t < na ? jb->order[jb->start[a] + t] : jb->order[jb->start[b] + t - na];
            pts[t] = r, y[t] = t < na ? 1 : -1, pv[t] = -1.0;
            C[t] = jb->C * jb->cw[t < na ? a : b] * (jb->w ? (double)jb->w[r] : 1.0);
        }
        sv_prob pr;
        memset(&pr, 0, sizeof pr);
        pr.k = jb->k, pr.x = jb->x, pr.pts = pts, pr.nk = l, pr.l = l, pr.y = y, pr.p = pv, pr.C = C;
        pr.alpha = jb->alpha[p], pr.G = G, pr.max_iter = jb->max_iter, pr.tol = jb->tol, pr.cache_mb = jb->cache_mb;
        pr.parallel = jb->parallel, pr.dv = jb->dv;
        st = sv_solve(&pr);
        jb->rho[p] = pr.rho, jb->n_iter[p] = pr.n_iter, jb->converged[p] = pr.converged;
        if (st == SB_OK && jb->probability) {
            const sv_cvspec cv = {jb->k, jb->x, pts, y, C, l, (uint32_t)p, jb->seed, jb->tol, jb->cache_mb,
                                  jb->max_iter, jb->parallel, jb->dv};
            st = sv_cv(&cv, jb->cvdec[p]);
            if (st == SB_OK) sv_platt(jb->cvdec[p], y, l, &jb->probA[p], &jb->probB[p]);
        }
    }
    jb->st[p] = st;
    sb_free(pts);
    sb_free(y);
    sb_free(pv);
}

static sb_status sv_params_text(const sv_params *p, char **out) {
    char buf[1024], g[48], cw[700];
    if (p->gamma_rule == SV_GAMMA_SCALE) snprintf(g, sizeof g, "scale");
    else if (p->gamma_rule == SV_GAMMA_AUTO) snprintf(g, sizeof g, "auto");
    else snprintf(g, sizeof g, "%.17g", p->gamma);
    size_t o = 0;
    cw[0] = 0;
    if (p->balanced) snprintf(cw, sizeof cw, "balanced");
    for (int32_t k = 0; k < p->ncw; k++)
        o += (size_t)snprintf(cw + o, sizeof cw - o, "%s%d:%.17g", k ? ";" : "", (int)p->cw_class[k], p->cw_value[k]);
    int n;
    char pr[80] = ""; /* only a model fitted with probability names it: the others' text is as it was */
    if (p->probability) snprintf(pr, sizeof pr, "probability=true\nrandom_state=%llu\n", (unsigned long long)p->random_state);
    if (p->kind == SB_SVM_SVC)
        n = snprintf(buf, sizeof buf, "C=%.17g\nclass_weight=%s\ncoef0=%.17g\ndegree=%d\ngamma=%s\nkernel=%s\n"
                     "max_iter=%lld\nmodel=svc\n%stol=%.17g\n", p->C, cw[0] ? cw : "none", p->coef0, (int)p->degree, g,
                     k_kernel_names[p->kernel], (long long)p->max_iter, pr, p->tol);
    else
        n = snprintf(buf, sizeof buf, "C=%.17g\ncoef0=%.17g\ndegree=%d\nepsilon=%.17g\ngamma=%s\nkernel=%s\n"
                     "max_iter=%lld\nmodel=svr\ntol=%.17g\n", p->C, p->coef0, (int)p->degree, p->epsilon, g,
                     k_kernel_names[p->kernel], (long long)p->max_iter, p->tol);
    if (n >= (int)sizeof buf) return sb_fail(SB_ERR_LIMIT, "support vector machines: the parameter text is too long");
    *out = sb_strdup(buf);
    return *out ? SB_OK : sb_fail(SB_ERR_OUT_OF_MEMORY, "support vector machines: out of memory");
}

/* scikit-learn's gamma: scale = 1 / (d var(X)) (var over every value, two
 * passes in index order in double; 1 when the variance is 0), auto = 1 / d. */
static double sv_gamma(const sv_params *p, const sb_table *t) {
    if (p->gamma_rule == SV_GAMMA_VALUE) return p->gamma;
    const double d = (double)t->ncols;
    if (p->gamma_rule == SV_GAMMA_AUTO) return 1.0 / d;
    const int64_t N = t->nrows * t->ncols;
    double s = 0.0;
    for (int64_t i = 0; i < N; i++) s += (double)t->x[i];
    const double mean = s / (double)N;
    double v = 0.0;
    for (int64_t i = 0; i < N; i++) {
        const double e = (double)t->x[i] - mean;
        v += e * e;
    }
    v /= (double)N;
    return v != 0.0 ? 1.0 / (d * v) : 1.0;
}

static sb_status sv_record_f64(sb_card *card, const char *tag, const double *v, int64_t n) {
    return sb_card_record(card, tag, SB_DTYPE_U64, v, (uint64_t)n); /* the doubles' bits */
}

sb_status sb_svm_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out) {
    sb_clear_error();
    if (out) *out = NULL;
    if (!train || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_svm_fit: NULL argument");
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    sv_params p;
    sb_status st = sv_params_parse(params, &p);
    if (st != SB_OK) return st;
    const sb_table *t = &train->t;
    const int64_t n = t->nrows, d = t->ncols;
    const char *who = p.kind == SB_SVM_SVC ? "SVC" : "SVR";
    if (n < 1 || d < 1)
        return sb_fail(SB_ERR_INVALID_INPUT, "%s needs at least one row and one feature (the data is %lld x %lld)", who,
                       (long long)n, (long long)d);
    if (n > (int64_t)INT32_MAX)
        return sb_fail(SB_ERR_LIMIT, "%s: %lld rows exceed the limit 2147483647", who, (long long)n);
    if (!t->label) return sb_fail(SB_ERR_INVALID_INPUT, "%s needs a label (the %s)", who,
                                  p.kind == SB_SVM_SVC ? "class indices" : "targets");
    if (t->ntargets > 1)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s takes one target; this dataset has %d", who, (int)t->ntargets);
    for (int64_t i = 0; i < n * d; i++)
        if (!isfinite(t->x[i]))
            return sb_fail(SB_ERR_INVALID_INPUT, "row %lld, feature %lld: %s; %s takes finite values only",
                           (long long)(i / d), (long long)(i % d), isnan(t->x[i]) ? "missing (NaN)" : "infinite", who);
    if (t->weight)
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(t->weight[i]) || t->weight[i] < 0.0f)
                return sb_fail(SB_ERR_INVALID_INPUT, "row %lld: sample weight %g; %s takes finite weights >= 0",
                               (long long)i, (double)t->weight[i], who);
    int32_t nclass = 1;
    for (int64_t i = 0; i < n; i++) {
        const float y = t->label[i];
        if (!isfinite(y)) return sb_fail(SB_ERR_INVALID_INPUT, "row %lld: the label is not finite", (long long)i);
        if (p.kind == SB_SVM_SVC) {
            if (!(y >= 0.0f && y < (float)SV_MAX_CLASSES && y == floorf(y)))
                return sb_fail(SB_ERR_INVALID_INPUT, "row %lld: label %g is not a class index 0..%d (SVC)",
                               (long long)i, (double)y, SV_MAX_CLASSES - 1);
            if ((int32_t)y + 1 > nclass) nclass = (int32_t)y + 1;
        }
    }
    int64_t *start = NULL, *order = NULL;
    double *cw = NULL;
    if (p.kind == SB_SVM_SVC) {
        start = sb_calloc((size_t)nclass + 1, sizeof *start);
        order = sb_malloc(sizeof(int64_t) * (size_t)n);
        cw = sb_malloc(sizeof(double) * (size_t)nclass);
        if (!start || !order || !cw) {
            sb_free(start), sb_free(order), sb_free(cw);
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "SVC: out of memory");
        }
        for (int64_t i = 0; i < n; i++) start[(int32_t)t->label[i] + 1]++;
        int32_t present = 0;
        for (int32_t c = 0; c < nclass; c++) present += start[c + 1] > 0;
        for (int32_t c = 0; c < nclass && present >= 2; c++)
            if (start[c + 1] == 0) {
                sb_free(start), sb_free(order), sb_free(cw);
                return sb_fail(SB_ERR_INVALID_INPUT, "SVC: class %d has no rows (classes are 0..%d; relabel them "
                               "0..K-1)", (int)c, (int)nclass - 1);
            }
        if (present < 2) {
            sb_free(start), sb_free(order), sb_free(cw);
            return sb_fail(SB_ERR_INVALID_INPUT, "SVC needs at least two classes; the labels have one (class %d)",
                           (int)nclass - 1);
        }
        for (int32_t c = 0; c < nclass; c++) {
            const double cnt = (double)start[c + 1];
            cw[c] = p.balanced ? (double)n / ((double)nclass * cnt) : 1.0; /* scikit-learn's "balanced" */
        }
        for (int32_t k = 0; k < p.ncw; k++) {
            if (p.cw_class[k] >= nclass) {
                sb_free(start), sb_free(order), sb_free(cw);
                return sb_fail(SB_ERR_INVALID_ARGUMENT, "class_weight: class %d is not among the %d classes",
                               (int)p.cw_class[k], (int)nclass);
            }
            cw[p.cw_class[k]] = p.cw_value[k];
        }
        for (int32_t c = 0; c < nclass; c++) start[c + 1] += start[c];
        int64_t *fill = sb_malloc(sizeof(int64_t) * (size_t)nclass);
        if (!fill) {
            sb_free(start), sb_free(order), sb_free(cw);
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "SVC: out of memory");
        }
        for (int32_t c = 0; c < nclass; c++) fill[c] = start[c];
        for (int64_t i = 0; i < n; i++) order[fill[(int32_t)t->label[i]]++] = i;
        sb_free(fill);
    }
    sv_kern k = {p.kernel, p.degree, (int32_t)d, sv_gamma(&p, t), p.coef0};
    const int64_t npairs = p.kind == SB_SVM_SVC ? (int64_t)nclass * (nclass - 1) / 2 : 1;
    double **alpha = sb_calloc((size_t)npairs, sizeof *alpha);
    double *rho = sb_calloc((size_t)npairs, sizeof *rho);
    int64_t *n_iter = sb_calloc((size_t)npairs, sizeof *n_iter);
    int32_t *conv = sb_calloc((size_t)npairs, sizeof *conv);
    sb_status *pst = sb_calloc((size_t)npairs, sizeof *pst);
    double **cvdec = NULL, *probA = NULL, *probB = NULL;
    if (p.probability) {
        cvdec = sb_calloc((size_t)npairs, sizeof *cvdec);
        probA = sb_calloc((size_t)npairs, sizeof *probA);
        probB = sb_calloc((size_t)npairs, sizeof *probB);
    }
    if (!alpha || !rho || !n_iter || !conv || !pst || (p.probability && (!cvdec || !probA || !probB)))
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    for (int64_t q = 0; q < npairs && st == SB_OK; q++) {
        int64_t l = 2 * n;
        if (p.kind == SB_SVM_SVC) {
            int32_t a = 0, b = 1;
            for (int64_t qq = 0, r = 0; r < nclass; r++)
                for (int32_t s = r + 1; s < nclass; s++, qq++)
                    if (qq == q) a = (int32_t)r, b = s;
            l = start[a + 1] - start[a] + start[b + 1] - start[b];
        }
        if (!(alpha[q] = sb_calloc((size_t)l, sizeof(double)))) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
        if (st == SB_OK && p.probability && !(cvdec[q] = sb_calloc((size_t)l, sizeof(double))))
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    }
    /* device=cuda|opencl: the kernel rows there (svm_device.c); the training rows go up once for the
     * cross-validation's held-out sums */
    sv_dev dev, *dv = NULL;
    memset(&dev, 0, sizeof dev);
    if (st == SB_OK && (p.device == SB_DEVICE_CUDA || p.device == SB_DEVICE_OPENCL)) {
        if ((st = sv_dev_open(p.device, k.kernel, k.degree, k.d, k.gamma, k.coef0, &dev)) == SB_OK) dv = &dev;
        if (st == SB_OK && p.probability) st = sv_dev_set_rows(dv, t->x, n);
    }
    if (st == SB_OK && p.kind == SB_SVM_SVC) {
        sv_pairjob jb = {&k, t->x, t->label, t->weight, cw, order, start, nclass, p.C, p.tol, p.cache_mb,
                         p.max_iter, alpha, rho, n_iter, conv, pst, npairs == 1 || dv, p.probability,
                         p.random_state, cvdec, probA, probB, dv}; /* one pair at a time: its passes over the threads */
        if (npairs == 1 || dv)
            for (int64_t q = 0; q < npairs; q++) sv_pair_task(&jb, q);
        else sb_parallel_for(npairs, sv_pair_task, &jb);
        for (int64_t q = 0; q < npairs && st == SB_OK; q++) st = pst[q];
    } else if (st == SB_OK) { /* SVR: variables a (y = +1) then a* (y = -1) over the same n points */
        int64_t *pts = sb_malloc(sizeof(int64_t) * (size_t)n);
        int8_t *y = sb_malloc((size_t)(2 * n));
        double *pv = sb_malloc(sizeof(double) * (size_t)(6 * n));
        if (!pts || !y || !pv) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "SVR: out of memory");
        if (st == SB_OK) {
            double *C = pv + 2 * n, *G = pv + 4 * n;
            for (int64_t i = 0; i < n; i++) {
                const double z = (double)t->label[i], w = t->weight ? (double)t->weight[i] : 1.0;
                pts[i] = i;
                y[i] = 1, y[i + n] = -1;
                pv[i] = p.epsilon - z, pv[i + n] = p.epsilon + z;
                C[i] = C[i + n] = p.C * w;
            }
            sv_prob pr;
            memset(&pr, 0, sizeof pr);
            pr.k = &k, pr.x = t->x, pr.pts = pts, pr.nk = n, pr.l = 2 * n, pr.y = y, pr.p = pv, pr.C = C;
            pr.alpha = alpha[0], pr.G = G, pr.max_iter = p.max_iter, pr.tol = p.tol, pr.cache_mb = p.cache_mb;
            pr.parallel = 1, pr.dv = dv;
            st = sv_solve(&pr);
            rho[0] = pr.rho, n_iter[0] = pr.n_iter, conv[0] = pr.converged;
        }
        sb_free(pts), sb_free(y), sb_free(pv);
    }
    sv_dev_close(&dev);
    if (st == SB_OK && card) {
        uint64_t gbits;
        memcpy(&gbits, &k.gamma, 8);
        st = sb_card_record(card, "svm.gamma", SB_DTYPE_U64, &gbits, 1);
        for (int64_t q = 0; q < npairs && st == SB_OK; q++) {
            char tag[64];
            int64_t l = 2 * n;
            if (p.kind == SB_SVM_SVC) {
                int32_t a = 0, b = 1;
                for (int64_t qq = 0, r = 0; r < nclass; r++)
                    for (int32_t s = r + 1; s < nclass; s++, qq++)
                        if (qq == q) a = (int32_t)r, b = s;
                l = start[a + 1] - start[a] + start[b + 1] - start[b];
            }
            snprintf(tag, sizeof tag, "svm.pair%lld.n_iter", (long long)q);
            st = sb_card_record(card, tag, SB_DTYPE_U64, &n_iter[q], 1);
            snprintf(tag, sizeof tag, "svm.pair%lld.alpha", (long long)q);
            if (st == SB_OK) st = sv_record_f64(card, tag, alpha[q], l);
        }
        if (st == SB_OK) st = sv_record_f64(card, "svm.rho", rho, npairs);
        for (int64_t q = 0; p.probability && q < npairs && st == SB_OK; q++) {
            char tag[64];
            int32_t a = 0, b = 1;
            for (int64_t qq = 0, r = 0; r < nclass; r++)
                for (int32_t s = r + 1; s < nclass; s++, qq++)
                    if (qq == q) a = (int32_t)r, b = s;
            snprintf(tag, sizeof tag, "svm.pair%lld.cv_decision", (long long)q);
            st = sv_record_f64(card, tag, cvdec[q], start[a + 1] - start[a] + start[b + 1] - start[b]);
        }
        if (st == SB_OK && p.probability) st = sv_record_f64(card, "svm.probA", probA, npairs);
        if (st == SB_OK && p.probability) st = sv_record_f64(card, "svm.probB", probB, npairs);
    }
    /* the support vectors: rows of a nonzero coefficient in some pair, by class then index */
    sb_model *m = NULL;
    int64_t *pos = NULL;
    if (st == SB_OK) st = sb_model_alloc(&m);
    if (st == SB_OK && !(pos = sb_malloc(sizeof(int64_t) * (size_t)n))) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    if (st == SB_OK) {
        for (int64_t i = 0; i < n; i++) pos[i] = -1;
        if (p.kind == SB_SVM_SVC) {
            for (int64_t q = 0, r = 0; r < nclass; r++)
                for (int32_t s = r + 1; s < nclass; s++, q++) {
                    const int64_t na = start[r + 1] - start[r], l = na + start[s + 1] - start[s];
                    for (int64_t u = 0; u < l; u++)
                        if (alpha[q][u] != 0.0) pos[u < na ? order[start[r] + u] : order[start[s] + u - na]] = 0;
                }
        } else {
            for (int64_t i = 0; i < n; i++)
                if (alpha[0][i] - alpha[0][i + n] != 0.0) pos[i] = 0;
        }
        int64_t nsv = 0;
        const int32_t ng = p.kind == SB_SVM_SVC ? nclass : 1;
        for (int32_t c = 0; c < ng; c++) {
            const int64_t b = p.kind == SB_SVM_SVC ? start[c] : 0, e = p.kind == SB_SVM_SVC ? start[c + 1] : n;
            for (int64_t u = b; u < e; u++) {
                const int64_t i = p.kind == SB_SVM_SVC ? order[u] : u;
                if (pos[i] == 0) pos[i] = nsv++ + 1;
            }
        }
        m->family = SB_FAMILY_SVM;
        m->objective = SB_OBJ_REGRESSION;
        m->num_features = (int32_t)d;
        m->num_class = p.kind == SB_SVM_SVC ? nclass : 1;
        m->numeric_mode = p.numeric_mode;
        if ((st = sv_params_text(&p, &m->params)) == SB_OK) {
            sb_svm *s = m->svm = sb_svm_alloc(p.kind, p.kind == SB_SVM_SVC ? nclass : 1, nsv, (int32_t)d);
            if (!s) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld support vectors", who, (long long)nsv);
            else {
                s->kernel = p.kernel, s->degree = p.degree, s->gamma = k.gamma, s->coef0 = p.coef0, s->n_fit = n;
                s->converged = 1;
                if (p.probability) s->probA = probA, s->probB = probB, probA = probB = NULL;
                for (int64_t q = 0; q < npairs; q++) {
                    s->rho[q] = rho[q], s->n_iter[q] = n_iter[q];
                    if (!conv[q]) s->converged = 0;
                }
                for (int64_t i = 0; i < n; i++)
                    if (pos[i] > 0) {
                        const int64_t v = pos[i] - 1;
                        s->support[v] = i;
                        memcpy(s->sv + v * d, t->x + i * d, sizeof(float) * (size_t)d);
                        s->n_support[p.kind == SB_SVM_SVC ? (int32_t)t->label[i] : 0]++;
                    }
                if (p.kind == SB_SVM_SVR) {
                    for (int64_t i = 0; i < n; i++)
                        if (pos[i] > 0) s->coef[pos[i] - 1] = alpha[0][i] - alpha[0][i + n];
                } else {
                    for (int64_t q = 0, r = 0; r < nclass; r++)
                        for (int32_t c2 = r + 1; c2 < nclass; c2++, q++) {
                            const int64_t na = start[r + 1] - start[r], l = na + start[c2 + 1] - start[c2];
                            for (int64_t u = 0; u < l; u++) {
                                const int64_t i = u < na ? order[start[r] + u] : order[start[c2] + u - na];
                                if (pos[i] <= 0) continue;
                                /* class r's vectors keep row c2 - 1 (+alpha), class c2's row r (-alpha) */
                                if (u < na) s->coef[(c2 - 1) * nsv + pos[i] - 1] = alpha[q][u];
                                else s->coef[r * nsv + pos[i] - 1] = -alpha[q][u];
                            }
                        }
                }
            }
        }
        if (st == SB_OK) st = sb_model_copy_names(m, t->names, d, who);
        if (st == SB_OK && card) {
            char dims[96];
            snprintf(dims, sizeof dims, "%lld x %lld, %s, %s", (long long)n, (long long)d, who,
                     k_kernel_names[p.kernel]);
            st = sb_card_set_meta(card, "svm.data", dims);
            if (st == SB_OK) st = sv_record_f64(card, "svm.dual_coef", m->svm->coef, sb_svm_ncoef(m->svm) * m->svm->nsv);
            if (st == SB_OK) st = sb_model_record_bytes(card, m, "svm.model_bytes");
        }
    }
    for (int64_t q = 0; alpha && q < npairs; q++) sb_free(alpha[q]);
    for (int64_t q = 0; cvdec && q < npairs; q++) sb_free(cvdec[q]);
    sb_free(cvdec), sb_free(probA), sb_free(probB);
    sb_free(alpha), sb_free(rho), sb_free(n_iter), sb_free(conv), sb_free(pst), sb_free(pos);
    sb_free(start), sb_free(order), sb_free(cw);
    if (st != SB_OK) {
        sb_model_free(m);
        return st;
    }
    *out = m;
    return SB_OK;
}

/* ---- prediction ---- */

int64_t sb_svm_decision_width(const sb_model *m) {
    const sb_svm *s = m->svm;
    return s->kind == SB_SVM_SVC && s->nclass > 2 ? sb_svm_npairs(s) : 1;
}

typedef struct sv_predjob {
    const sb_model *m;
    const float *q;
    int64_t nq;
    double *out;
    float *kbuf;
} sv_predjob;

#define SV_QB 16

/* Row r's libsvm decision values (sum coef K - rho of each pair) into dec. */
static void sv_decide(const sb_model *m, const float *x, float *kv, double *dec) {
    const sb_svm *s = m->svm;
    const sv_kern k = {s->kernel, s->degree, m->num_features, s->gamma, s->coef0};
    const int32_t d = m->num_features;
    int64_t v = 0;
    for (; v + 4 <= s->nsv; v += 4) /* K(sv, x) = K(x, sv): the sums are symmetric term by term */
        sv_kernel4(&k, x, s->sv + v * d, s->sv + (v + 1) * d, s->sv + (v + 2) * d, s->sv + (v + 3) * d, kv + v);
    for (; v < s->nsv; v++) kv[v] = sv_kernel(&k, x, s->sv + v * d);
    if (s->kind == SB_SVM_SVR) {
        double sum = 0.0;
        for (int64_t v = 0; v < s->nsv; v++) sum += s->coef[v] * (double)kv[v];
        dec[0] = sum - s->rho[0];
        return;
    }
    int64_t first[SV_MAX_CLASSES + 1]; /* where each class's vectors start */
    first[0] = 0;
    for (int32_t c = 0; c < s->nclass; c++) first[c + 1] = first[c] + s->n_support[c];
    for (int64_t q = 0, a = 0; a < s->nclass; a++)
        for (int32_t b = (int32_t)a + 1; b < s->nclass; b++, q++) {
            double sum = 0.0;
            for (int64_t v = first[a]; v < first[a + 1]; v++) sum += s->coef[(b - 1) * s->nsv + v] * (double)kv[v];
            for (int64_t v = first[b]; v < first[b + 1]; v++) sum += s->coef[a * s->nsv + v] * (double)kv[v];
            dec[q] = sum - s->rho[q];
        }
}

static size_t sv_kbuf_floats(const sb_svm *s) { return (size_t)s->nsv + 1; }

static void sv_pred_task(void *ctx, int64_t t) {
    const sv_predjob *jb = ctx;
    const sb_svm *s = jb->m->svm;
    const int64_t w = sb_svm_npairs(s);
    float *kv = jb->kbuf + (size_t)sb_worker_index() * sv_kbuf_floats(s);
    int64_t b, e;
    sb_chunk_range(jb->nq, SV_QB, t, &b, &e);
    for (int64_t i = b; i < e; i++) sv_decide(jb->m, jb->q + i * jb->m->num_features, kv, jb->out + i * w);
}

/* The decision values on a GPU (svm_device.c): the support vectors up as the
 * points, the rows as the rows, each pair's two ranges of coefficients as
 * sv_decide takes them (class a's vectors with row b - 1, class b's with row
 * a), so that every value is sv_decide's sum in its order. */
static sb_status sv_decisions_dev(const sb_model *m, const sb_table *q, int32_t device, double *out) {
    const sb_svm *s = m->svm;
    const int64_t np = sb_svm_npairs(s), nsv = s->nsv, n = q->nrows;
    int64_t *rng = sb_malloc(sizeof(int64_t) * 6 * (size_t)np), *aidx = sb_malloc(sizeof(int64_t) * (size_t)n);
    sb_status st = SB_OK;
    if (!rng || !aidx) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "support vector machines: out of memory for %lld rows", (long long)n);
    } else if (s->kind == SB_SVM_SVR) {
        const int64_t r[6] = {0, 0, nsv, 0, 0, 0};
        memcpy(rng, r, sizeof r);
    } else {
        int64_t first = 0;
        for (int64_t qq = 0, a = 0; a < s->nclass; a++) {
            int64_t fb = first + s->n_support[a];
            for (int32_t b = (int32_t)a + 1; b < s->nclass; b++, qq++) {
                const int64_t e2 = fb + s->n_support[b];
                const int64_t r[6] = {(int64_t)(b - 1) * nsv, first, first + s->n_support[a], a * nsv, fb, e2};
                memcpy(rng + 6 * qq, r, sizeof r);
                fb = e2;
            }
            first += s->n_support[a];
        }
    }
    for (int64_t i = 0; st == SB_OK && i < n; i++) aidx[i] = i;
    sv_dev dev;
    memset(&dev, 0, sizeof dev);
    if (st == SB_OK) st = sv_dev_open(device, s->kernel, s->degree, m->num_features, s->gamma, s->coef0, &dev);
    if (st == SB_OK) st = sv_dev_set_points(&dev, s->sv, NULL, nsv);
    if (st == SB_OK) st = sv_dev_set_rows(&dev, q->x, n);
    if (st == SB_OK) st = sv_dev_decide(&dev, aidx, n, s->coef, sb_svm_ncoef(s) * nsv, rng, s->rho, np, 0, out);
    sv_dev_close(&dev);
    sb_free(rng), sb_free(aidx);
    return st;
}

/* libsvm's decision values of every row (npairs a row), out nq x npairs, on
 * device (cuda and opencl: sv_decisions_dev; the others the host). */
static sb_status sv_decisions(const sb_model *m, const sb_table *q, int32_t device, double *out) {
    if (q->nrows == 0) return SB_OK;
    for (int64_t i = 0; i < q->nrows * q->ncols; i++)
        if (!isfinite(q->x[i]))
            return sb_fail(SB_ERR_INVALID_INPUT, "row %lld, feature %lld: %s; support vector machines take finite "
                           "values only", (long long)(i / q->ncols), (long long)(i % q->ncols),
                           isnan(q->x[i]) ? "missing (NaN)" : "infinite");
    if (device == SB_DEVICE_CUDA || device == SB_DEVICE_OPENCL) return sv_decisions_dev(m, q, device, out);
    const int32_t width = sb_parallel_width();
    sv_predjob jb = {m, q->x, q->nrows, out, NULL};
    if (!(jb.kbuf = sb_malloc(sizeof(float) * sv_kbuf_floats(m->svm) * (size_t)width)))
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "support vector machines: out of memory for %lld kernel values",
                       (long long)m->svm->nsv);
    sb_parallel_for_width(sb_chunk_count(q->nrows, SV_QB), width, sv_pred_task, &jb);
    sb_free(jb.kbuf);
    return SB_OK;
}

sb_status sb_svm_decision_f64(const sb_model *m, const sb_table *q, int32_t device, double *out) {
    const sb_svm *s = m->svm;
    const int64_t np = sb_svm_npairs(s), n = q->nrows;
    if (np == 1) {
        sb_status st = sv_decisions(m, q, device, out);
        if (st == SB_OK && s->kind == SB_SVM_SVC)
            for (int64_t i = 0; i < n; i++) out[i] = -out[i]; /* scikit-learn: positive is classes_[1] */
        return st;
    }
    return sv_decisions(m, q, device, out);
}

/* P(the pair's first class) of a decision value f (libsvm's sign): Platt's
 * 1 / (1 + e^(A f + B)) from the side whose exponent is <= 0, clipped to
 * [1e-7, 1 - 1e-7] so that the coupling never meets a certain pair. */
static double sv_sigmoid(double f, double A, double B) {
    const double z = f * A + B;
    double r;
    if (z >= 0.0) {
        const double e = sb_f64_exp(-z);
        r = e / (1.0 + e);
    } else {
        r = 1.0 / (1.0 + sb_f64_exp(z));
    }
    return r < SV_MIN_PROB ? SV_MIN_PROB : r > 1.0 - SV_MIN_PROB ? 1.0 - SV_MIN_PROB : r;
}

/* The class probabilities p (K) of the pairwise ones r (K x K, r[i K + j] =
 * P(i | i or j), r[j K + i] = 1 - r[i K + j]) by the second method of Wu,
 * Lin and Weng ("Probability estimates for multi-class classification by
 * pairwise coupling", JMLR 5, 2004), as the libsvm guide states it: minimize
 * p'Qp on the simplex (Q_tt = sum_{j != t} r_jt^2, Q_tj = -r_jt r_tj) by the
 * fixed-point updates of p_t in class order, from p = 1/K, until
 * max_t |(Qp)_t - p'Qp| < 0.005 / K or max(100, K) sweeps. Q (K x K) and Qp
 * (K) are scratch. Sums in index order. */
static void sv_couple(int32_t K, const double *r, double *Q, double *Qp, double *p) {
    for (int32_t t = 0; t < K; t++) {
        p[t] = 1.0 / (double)K;
        double qtt = 0.0;
        for (int32_t j = 0; j < K; j++) {
            if (j == t) continue;
            qtt += r[j * K + t] * r[j * K + t];
            Q[t * K + j] = -(r[j * K + t] * r[t * K + j]);
        }
        Q[t * K + t] = qtt;
    }
    const int32_t sweeps = K > 100 ? K : 100;
    const double eps = 0.005 / (double)K;
    for (int32_t it = 0; it < sweeps; it++) {
        double pQp = 0.0;
        for (int32_t t = 0; t < K; t++) {
            double v = 0.0;
            for (int32_t j = 0; j < K; j++) v += Q[t * K + j] * p[j];
            Qp[t] = v;
            pQp += p[t] * v;
        }
        double err = 0.0;
        for (int32_t t = 0; t < K; t++) {
            const double e = fabs(Qp[t] - pQp);
            if (e > err) err = e;
        }
        if (err < eps) break;
        for (int32_t t = 0; t < K; t++) {
            const double diff = (-Qp[t] + pQp) / Q[t * K + t];
            p[t] += diff;
            const double s1 = 1.0 + diff;
            pQp = (pQp + diff * (diff * Q[t * K + t] + 2.0 * Qp[t])) / s1 / s1;
            for (int32_t j = 0; j < K; j++) {
                Qp[j] = (Qp[j] + diff * Q[t * K + j]) / s1;
                p[j] /= s1;
            }
        }
    }
}

/* The class probabilities of q's rows (n x K doubles, class order), or their
 * logarithms (logp): the pairwise sigmoids of the decision values, then two
 * classes p_0 = r_01, p_1 = 1 - r_01, more the coupling (sv_couple). */
static sb_status sv_proba(const sb_model *m, const sb_table *q, int32_t device, int logp, double *out) {
    const sb_svm *s = m->svm;
    const int32_t K = s->nclass;
    const int64_t n = q->nrows, np = sb_svm_npairs(s);
    double *dec = sb_malloc(sizeof(double) * (size_t)(n > 0 ? n * np : 1));
    double *scr = sb_malloc(sizeof(double) * (size_t)(2 * K * K + K));
    sb_status st = dec && scr ? sv_decisions(m, q, device, dec)
                              : sb_fail(SB_ERR_OUT_OF_MEMORY, "SVC: out of memory for %lld rows' probabilities",
                                        (long long)n);
    for (int64_t i = 0; st == SB_OK && i < n; i++) {
        double *p = out + i * K;
        if (K == 2) {
            const double r = sv_sigmoid(dec[i], s->probA[0], s->probB[0]);
            p[0] = r, p[1] = 1.0 - r;
        } else {
            double *r = scr, *Q = scr + K * K, *Qp = scr + 2 * K * K;
            for (int64_t qq = 0, a = 0; a < K; a++)
                for (int32_t b = (int32_t)a + 1; b < K; b++, qq++) {
                    const double v = sv_sigmoid(dec[i * np + qq], s->probA[qq], s->probB[qq]);
                    r[a * K + b] = v, r[b * K + a] = 1.0 - v;
                }
            sv_couple(K, r, Q, Qp, p);
        }
        if (logp)
            for (int32_t c = 0; c < K; c++) p[c] = sb_f64_log(p[c]);
    }
    sb_free(dec), sb_free(scr);
    return st;
}

sb_status sb_svm_predict(const sb_model *m, const sb_table *q, int32_t kind, int32_t device, float *out, size_t cap,
                         size_t *needed) {
    const sb_svm *s = m->svm;
    if (kind == SB_PREDICT_PROBA && s->kind == SB_SVM_SVR)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "an SVR model has no probabilities");
    if (kind == SB_PREDICT_PROBA && !s->probA)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "this SVC model has no probabilities: fit it with probability=true "
                       "(Platt scaling)");
    const int64_t n = q->nrows, w = kind == SB_PREDICT_RAW ? sb_svm_decision_width(m)
                                    : kind == SB_PREDICT_PROBA ? s->nclass : 1;
    if (kind != SB_PREDICT_RAW && kind != SB_PREDICT_VALUE && kind != SB_PREDICT_PROBA)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "a support vector model predicts values (SB_PREDICT_VALUE), decision "
                       "values (SB_PREDICT_RAW) or an SVC's probabilities (SB_PREDICT_PROBA)");
    const size_t want = (size_t)(n * w);
    sb_status st = sb_out_size(out, cap, needed, want);
    if (st != SB_OK || !out) return st;
    if (kind == SB_PREDICT_PROBA) { /* the doubles of sb_svm_predict_proba, rounded to float32 */
        double *pr = sb_malloc(sizeof(double) * (want ? want : 1));
        if (!pr) return sb_fail(SB_ERR_OUT_OF_MEMORY, "SVC: out of memory for %lld rows", (long long)n);
        st = sv_proba(m, q, device, 0, pr);
        for (size_t i = 0; st == SB_OK && i < want; i++) out[i] = (float)pr[i];
        sb_free(pr);
        return st;
    }
    const int64_t np = sb_svm_npairs(s);
    double *dec = sb_malloc(sizeof(double) * (size_t)(n > 0 ? n * np : 1));
    if (!dec) return sb_fail(SB_ERR_OUT_OF_MEMORY, "support vector machines: out of memory for %lld rows", (long long)n);
    st = kind == SB_PREDICT_RAW ? sb_svm_decision_f64(m, q, device, dec) : sv_decisions(m, q, device, dec);
    if (st == SB_OK && kind == SB_PREDICT_RAW) {
        for (int64_t i = 0; i < n * w; i++) out[i] = (float)dec[i];
    } else if (st == SB_OK && s->kind == SB_SVM_SVR) {
        for (int64_t i = 0; i < n; i++) out[i] = (float)dec[i];
    } else if (st == SB_OK) { /* libsvm's vote: a positive value for the pair's first class; the most votes, the first */
        int32_t *votes = sb_malloc(sizeof(int32_t) * (size_t)s->nclass);
        if (!votes) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "SVC: out of memory");
        for (int64_t i = 0; st == SB_OK && i < n; i++) {
            memset(votes, 0, sizeof(int32_t) * (size_t)s->nclass);
            for (int64_t q2 = 0, a = 0; a < s->nclass; a++)
                for (int32_t b = (int32_t)a + 1; b < s->nclass; b++, q2++) votes[dec[i * np + q2] > 0.0 ? a : b]++;
            int32_t best = 0;
            for (int32_t c = 1; c < s->nclass; c++)
                if (votes[c] > votes[best]) best = c;
            out[i] = (float)best;
        }
        sb_free(votes);
    }
    sb_free(dec);
    return st;
}

/* ---- attributes ---- */

sb_status sb_svm_int(const sb_model *m, const char *name, int64_t *out) {
    const sb_svm *s = m->svm;
    if (!strcmp(name, "n_support_vectors")) *out = s->nsv;
    else if (!strcmp(name, "n_classes")) *out = s->nclass;
    else if (!strcmp(name, "kind")) *out = s->kind;
    else if (!strcmp(name, "kernel")) *out = s->kernel;
    else if (!strcmp(name, "degree")) *out = s->degree;
    else if (!strcmp(name, "n_samples_fit")) *out = s->n_fit;
    else if (!strcmp(name, "converged")) *out = s->converged;
    else return sb_fail(SB_ERR_NOT_FOUND, "a support vector model has no integer '%s'", name);
    return SB_OK;
}

sb_status sb_svm_array(const sb_model *m, const char *name, float *out, size_t cap, size_t *needed) {
    const sb_svm *s = m->svm;
    if (strcmp(name, "support_vectors"))
        return sb_fail(SB_ERR_NOT_FOUND, "a support vector model has no float32 array '%s' (support_vectors; "
                       "sb_svm_get_f64 gives dual_coef, intercept and gamma)", name);
    const size_t want = (size_t)s->nsv * (size_t)m->num_features;
    if (needed) *needed = want;
    if (cap == 0) return SB_OK;
    if (cap < want) return sb_fail(SB_ERR_INVALID_ARGUMENT, "output buffer too small: %zu elements needed, %zu given", want, cap);
    memcpy(out, s->sv, sizeof(float) * want);
    return SB_OK;
}

sb_status sb_svm_indices(const sb_model *m, const char *name, int64_t *out, size_t cap, size_t *needed) {
    const sb_svm *s = m->svm;
    size_t want;
    if (!strcmp(name, "support")) want = (size_t)s->nsv;
    else if (!strcmp(name, "n_support")) want = (size_t)(s->kind == SB_SVM_SVC ? s->nclass : 1);
    else if (!strcmp(name, "n_iter")) want = (size_t)sb_svm_npairs(s);
    else return sb_fail(SB_ERR_NOT_FOUND, "a support vector model has no index array '%s' (support, n_support, n_iter)", name);
    if (needed) *needed = want;
    if (cap == 0) return SB_OK;
    if (cap < want) return sb_fail(SB_ERR_INVALID_ARGUMENT, "output buffer too small: %zu elements needed, %zu given", want, cap);
    for (size_t i = 0; i < want; i++)
        out[i] = name[0] == 's' ? s->support[i] : name[2] == 's' ? (int64_t)s->n_support[i] : s->n_iter[i];
    return SB_OK;
}

static sb_status sv_model(const sb_model *m, const char *who) {
    if (!m) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: NULL argument", who);
    if (m->family != SB_FAMILY_SVM || !m->svm)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: a %s model is not a support vector model", who,
                       sb_family_name((sb_family)m->family));
    return SB_OK;
}

sb_status sb_svm_get_f64(const sb_model *m, const char *name, double *out, size_t cap, size_t *needed) {
    sb_clear_error();
    sb_status st = sv_model(m, "sb_svm_get_f64");
    if (st != SB_OK) return st;
    if (!name || (!out && cap)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_svm_get_f64: NULL argument");
    const sb_svm *s = m->svm;
    const int binary = s->kind == SB_SVM_SVC && s->nclass == 2;
    size_t want;
    if (!strcmp(name, "dual_coef")) want = (size_t)(sb_svm_ncoef(s) * s->nsv);
    else if (!strcmp(name, "intercept")) want = (size_t)sb_svm_npairs(s);
    else if (!strcmp(name, "gamma") || !strcmp(name, "coef0")) want = 1;
    else if (!strcmp(name, "probA") || !strcmp(name, "probB")) want = s->probA ? (size_t)sb_svm_npairs(s) : 0;
    else return sb_fail(SB_ERR_NOT_FOUND, "a support vector model has no double array '%s' (dual_coef, intercept, "
                        "gamma, coef0, probA, probB)", name);
    if (needed) *needed = want;
    if (cap == 0) return SB_OK;
    if (cap < want) return sb_fail(SB_ERR_INVALID_ARGUMENT, "output buffer too small: %zu elements needed, %zu given", want, cap);
    for (size_t i = 0; i < want; i++) {
        /* scikit-learn's public signs: intercept -rho; a binary SVC's both negated (positive is classes_[1]) */
        if (name[0] == 'd') out[i] = binary ? -s->coef[i] : s->coef[i];
        else if (name[0] == 'i') out[i] = binary ? s->rho[i] : -s->rho[i];
        else if (name[0] == 'p') out[i] = name[4] == 'A' ? s->probA[i] : s->probB[i]; /* libsvm's, as scikit-learn's */
        else out[i] = name[0] == 'g' ? s->gamma : s->coef0;
    }
    return SB_OK;
}

/* The float64 outputs' checks after the model's: *needed (when asked) is
 * want; a size query (cap 0, out NULL) is SB_OK with nothing else checked;
 * then a buffer too small and a feature count not the model's are refused by
 * name. */
static sb_status sv_out_check(const sb_model *m, const sb_dataset *queries, const double *out, size_t cap,
                              size_t *needed, size_t want) {
    const sb_status st = sb_out_size(out, cap, needed, want);
    if (st != SB_OK || !out) return st;
    if (queries->t.ncols != m->num_features)
        return sb_fail(SB_ERR_INVALID_INPUT, "feature-count mismatch: the model has %d features, the data %d",
                       (int)m->num_features, (int)queries->t.ncols);
    return SB_OK;
}

sb_status sb_svm_decision_function_on(const sb_model *m, const sb_dataset *queries, const char *device, double *out,
                                      size_t cap, size_t *needed) {
    sb_clear_error();
    sb_status st = sv_model(m, "sb_svm_decision_function");
    if (st != SB_OK) return st;
    if (!queries) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_svm_decision_function: NULL queries");
    sb_device_kind dk = SB_DEVICE_CPU;
    if ((st = sb_device_parse_ready(device, &dk)) != SB_OK) return st;
    const size_t want = (size_t)queries->t.nrows * (size_t)sb_svm_decision_width(m);
    if ((st = sv_out_check(m, queries, out, cap, needed, want)) != SB_OK || !out) return st;
    return sb_svm_decision_f64(m, &queries->t, (int32_t)dk, out);
}

sb_status sb_svm_decision_function(const sb_model *m, const sb_dataset *queries, double *out, size_t cap,
                                   size_t *needed) {
    return sb_svm_decision_function_on(m, queries, NULL, out, cap, needed);
}

sb_status sb_svm_predict_proba_on(const sb_model *m, const sb_dataset *queries, const char *device, int32_t log_proba,
                                  double *out, size_t cap, size_t *needed) {
    sb_clear_error();
    sb_status st = sv_model(m, "sb_svm_predict_proba");
    if (st != SB_OK) return st;
    if (!queries) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_svm_predict_proba: NULL queries");
    sb_device_kind dk = SB_DEVICE_CPU;
    if ((st = sb_device_parse(device, &dk)) != SB_OK) return st;
    if (log_proba != 0 && log_proba != 1)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_svm_predict_proba: log_proba is 0 or 1, not %d", (int)log_proba);
    const sb_svm *s = m->svm;
    if (s->kind == SB_SVM_SVR) return sb_fail(SB_ERR_INVALID_ARGUMENT, "an SVR model has no probabilities");
    if (!s->probA)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "this SVC model has no probabilities: fit it with probability=true "
                       "(Platt scaling)");
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    const size_t want = (size_t)queries->t.nrows * (size_t)s->nclass;
    if ((st = sv_out_check(m, queries, out, cap, needed, want)) != SB_OK || !out) return st;
    return sv_proba(m, &queries->t, (int32_t)dk, log_proba, out);
}

sb_status sb_svm_predict_proba(const sb_model *m, const sb_dataset *queries, int32_t log_proba, double *out,
                               size_t cap, size_t *needed) {
    return sb_svm_predict_proba_on(m, queries, NULL, log_proba, out, cap, needed);
}
