/*
 * gp.c: Gaussian process regression, fitted by maximizing the log marginal
 * likelihood (docs/gaussian-process.md).
 *
 * Rasmussen and Williams, "Gaussian Processes for Machine Learning" (MIT
 * Press 2006): algorithm 2.1 (L = cholesky(K + alpha I), alpha_ = L^T \ (L \
 * y), the predictive mean k*^T alpha_, v = L \ k*, the variance k(x*, x*) -
 * v^T v), eq. 5.8 (the log marginal likelihood) and eq. 5.9 (its gradient,
 * 1/2 tr((alpha_ alpha_^T - K^-1) dK/dtheta)). The hyperparameters are
 * searched in log space inside their bounds by a projected limited-memory
 * BFGS (Nocedal, "Updating quasi-Newton matrices with limited storage", Math.
 * Comp. 35, 1980, the two-loop recursion; the bounds by projection, in the
 * manner of Byrd, Lu, Nocedal and Zhu's L-BFGS-B, SIAM J. Sci. Comput. 16,
 * 1995, without its Cauchy point), with an Armijo backtracking line search.
 *
 * Arithmetic: binary64, + - * / and sqrt (IEEE: correctly rounded), the
 * profile's double exp and log (sb_elem_host.h), no contraction. The
 * Cholesky factor, L^-1 and K^-1 are gp_linalg.c's (blocked, each element its
 * start minus each product in ascending index order, one at a time); every
 * other dot product is gp_dot's one shape (four lanes by index modulo 4, then
 * (l0 + l1) + (l2 + l3)), a function of its length alone; every other sum
 * runs in index order. Threads split the work by independent outputs only
 * (rows of a matrix, tiles of a product), so 1, 2 or 7 threads give the same
 * bits.
 *
 * The jitter rule: the diagonal gets alpha (scikit-learn's, 1e-10 by default)
 * and nothing else. A kernel matrix whose Cholesky meets a pivot that is not
 * > 0 is refused by name at the final fit (SB_ERR_INVALID_INPUT, the column
 * named: raise alpha or add a WhiteKernel); during the search such a theta
 * has a log marginal likelihood of -infinity and the line search backs off,
 * as scikit-learn's does.
 */
#include "gp.h"
#include "../../core/rng.h"
#include "../../math/sb_math.h"
#include "../f64_math.h"
#include "../../kernels/gp.h"
#include <math.h> /* sqrt (correctly rounded), INFINITY and NAN: no other libm function is called */
#include <stdio.h>
#include <string.h>

#define GP_PURPOSE_RESTART 0x47505230u /* "GPR0": the optimizer's restarts */
#define GP_MAXITER 200      /* iterations of one start */
#define GP_MEM 10           /* L-BFGS pairs kept */
#define GP_PGTOL 1e-5       /* projected gradient (inf norm) at which a start stops */
#define GP_FTOL 1e-12       /* relative decrease at which a start stops (tighter than scipy's 2.2e-9: docs/gaussian-process.md) */
#define GP_HALVINGS 40      /* line search halvings before a start stops */
#define GP_ROWS 8           /* rows (or columns) of a task */
#define GP_LOG_2PI 1.8378770664093453

/* The one dot product shape: lane l sums the products of indices = l mod 4
 * in index order, then (l0 + l1) + (l2 + l3). */
static double gp_dot(const double *x, const double *y, int64_t n) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int64_t k = 0;
    for (; k + 4 <= n; k += 4) {
        s0 = s0 + x[k] * y[k];
        s1 = s1 + x[k + 1] * y[k + 1];
        s2 = s2 + x[k + 2] * y[k + 2];
        s3 = s3 + x[k + 3] * y[k + 3];
    }
    if (k < n) s0 = s0 + x[k] * y[k];
    if (k + 1 < n) s1 = s1 + x[k + 1] * y[k + 1];
    if (k + 2 < n) s2 = s2 + x[k + 2] * y[k + 2];
    return (s0 + s1) + (s2 + s3);
}

/* ---- the kernel ---------------------------------------------------------- */

/* Node v's value for the pair (x, y) and, when grad is not NULL, the
 * derivative by each log hyperparameter in grad[0..npar). same: the pair is
 * one training point with itself (the white kernel's only nonzero). ev holds
 * each parameter's value, e^logv. The arithmetic is kernels/gp.h's, the
 * function the device program runs too; v is always the root (the last
 * node: gpk_eval evaluates the nodes in order). */
SB_STATIC_ASSERT(sizeof(gp_node) == sizeof(int32_t) * GPK_NODE, "gp_node is kernels/gp.h's GPK_NODE ints");
SB_STATIC_ASSERT(GP_MAX_NODES == GPK_MAX_NODES && GP_MAX_PARAMS == GPK_MAX_PARAMS, "kernels/gp.h's limits");
static double gp_eval(const gp_kernel *k, const double *ev, int32_t v, const double *x, const double *y, int64_t d,
                      int same, double *grad) {
    (void)v;
    return gpk_eval((const sb_i32 *)k->node, k->nnodes, ev, x, y, d, same, grad != NULL, grad);
}

static void gp_values(const gp_kernel *k, double *ev) {
    for (int32_t p = 0; p < k->npar; p++) ev[p] = sb_f64_exp(k->logv[p]);
}

int32_t sb_gp_nfree(const gp_kernel *k) {
    int32_t c = 0;
    for (int32_t p = 0; p < k->npar; p++) c += !k->fixed[p];
    return c;
}

/* ---- dense float64 linear algebra, fixed orders --------------------------- */

typedef struct gp_job {
    const gp_kernel *k;
    const double *ev;
    const double *X, *Y; /* Y: the second point set (NULL: X with itself) */
    int64_t n, m, d;
    double *A;           /* output matrix */
    int64_t lda;
    double diag;         /* added to the diagonal (X with itself) */
    const double *W;     /* gradient: the weight matrix (lower) */
    double *part;        /* gradient: per row partial sums, n x npar */
    int64_t t;
    const double *B;     /* right-hand sides */
} gp_job;

/* Rows of K(X, X) + diag I (lower triangle; +0 above) or of K(X, Y) (all). */
static void kmat_task(void *ctx, int64_t task) {
    const gp_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, GP_ROWS, task, &b, &e);
    for (int64_t i = b; i < e; i++) {
        double *ai = j->A + i * j->lda;
        const double *xi = j->X + i * j->d;
        if (!j->Y) {
            for (int64_t c = 0; c <= i; c++)
                ai[c] = gp_eval(j->k, j->ev, j->k->root, xi, j->X + c * j->d, j->d, c == i, NULL);
            ai[i] = ai[i] + j->diag;
            for (int64_t c = i + 1; c < j->n; c++) ai[c] = 0.0;
        } else
            for (int64_t c = 0; c < j->m; c++)
                ai[c] = gp_eval(j->k, j->ev, j->k->root, xi, j->Y + c * j->d, j->d, 0, NULL);
    }
}

/* Solve L x = b (forward) for one vector, in place. */
static void gp_forward(const double *L, int64_t n, double *x) {
    for (int64_t i = 0; i < n; i++) x[i] = (x[i] - gp_dot(L + i * n, x, i)) / L[i * n + i];
}

/* Solve L^T x = b (backward) for one vector, in place: x_i = (b_i - sum over
 * k > i of l_ki x_k, k ascending) / l_ii. */
static void gp_backward(const double *L, int64_t n, double *x) {
    for (int64_t i = n - 1; i >= 0; i--) {
        double s = 0.0;
        for (int64_t k = i + 1; k < n; k++) s = s + L[k * n + i] * x[k];
        x[i] = (x[i] - s) / L[i * n + i];
    }
}

/* Rows of the gradient's terms: part[i][p] = 2 * (sum over c < i of
 * W_ic dK_ic/dtheta_p, c ascending) + W_ii dK_ii/dtheta_p. */
static void grad_task(void *ctx, int64_t task) {
    const gp_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, GP_ROWS, task, &b, &e);
    const int32_t np = j->k->npar;
    double g[GP_MAX_PARAMS], s[GP_MAX_PARAMS];
    for (int64_t i = b; i < e; i++) {
        const double *xi = j->X + i * j->d;
        const double *wi = j->W + i * j->n;
        for (int32_t p = 0; p < np; p++) s[p] = 0.0;
        for (int64_t c = 0; c < i; c++) {
            gp_eval(j->k, j->ev, j->k->root, xi, j->X + c * j->d, j->d, 0, g);
            for (int32_t p = 0; p < np; p++) s[p] = s[p] + wi[c] * g[p];
        }
        gp_eval(j->k, j->ev, j->k->root, xi, xi, j->d, 1, g);
        double *out = j->part + i * np;
        for (int32_t p = 0; p < np; p++) out[p] = 2.0 * s[p] + wi[i] * g[p];
    }
}

/* ---- the log marginal likelihood ----------------------------------------- */

/* Workspace of one problem. */
typedef struct gp_ws {
    const double *X, *y;
    int64_t n, d, t;
    double alpha;
    double *A, *Z, *a, *part;
    int32_t device;   /* sb_device_kind: 0 the host */
    gp_dev *dev;      /* the device's buffers (device != 0) */
    sb_status dst;    /* the device's failure, when gp_factor returns -3 */
} gp_ws;

static void ws_free(gp_ws *w) {
    sb_free(w->A), sb_free(w->Z), sb_free(w->a), sb_free(w->part);
    sb_gp_dev_end(w->dev);
    memset(w, 0, sizeof *w);
}

/* w->device set: the device opened too (its buffers for the gradient with
 * grad), L^-1 then made there, not in host memory. */
static sb_status ws_alloc(gp_ws *w, int grad) {
    const size_t nn = (size_t)w->n * (size_t)w->n;
    w->A = sb_malloc(sizeof(double) * nn);
    w->a = sb_malloc(sizeof(double) * (size_t)(w->n * w->t));
    if (grad) {
        if (!w->device) w->Z = sb_malloc(sizeof(double) * nn);
        w->part = sb_malloc(sizeof(double) * (size_t)w->n * GP_MAX_PARAMS);
    }
    if (!w->A || !w->a || (grad && ((!w->device && !w->Z) || !w->part)))
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "gaussian process: out of memory for %lld training rows (n^2 doubles%s)",
                       (long long)w->n, grad ? ", twice" : "");
    return w->device ? sb_gp_dev_begin(w->device, w->X, w->n, w->d, grad ? 2 : 1, &w->dev) : SB_OK;
}

/* Factor K(X) + alpha I into w->A (on the device with w->dev, L read back)
 * and solve for alpha_ (n x t, target by target). Returns the failing
 * column or -1 (-2 out of memory, -3 the device failed: w->dst). */
static int64_t gp_factor(gp_ws *w, const gp_kernel *k, const double *ev) {
    int64_t bad;
    if (w->dev) {
        if ((w->dst = sb_gp_dev_factor(w->dev, k, ev, w->alpha, w->A, &bad)) != SB_OK) return -3;
    } else {
        gp_job job;
        memset(&job, 0, sizeof job);
        job.k = k, job.ev = ev, job.X = w->X, job.n = w->n, job.d = w->d, job.A = w->A, job.lda = w->n,
        job.diag = w->alpha;
        sb_parallel_for(sb_chunk_count(w->n, GP_ROWS), kmat_task, &job);
        bad = sb_gp_cholesky(w->A, w->n);
    }
    if (bad >= 0) return bad;
    double *x = sb_malloc(sizeof(double) * (size_t)w->n);
    if (!x) return -2;
    for (int64_t t = 0; t < w->t; t++) {
        for (int64_t i = 0; i < w->n; i++) x[i] = w->y[i * w->t + t];
        gp_forward(w->A, w->n, x);
        gp_backward(w->A, w->n, x);
        for (int64_t i = 0; i < w->n; i++) w->a[i * w->t + t] = x[i];
    }
    sb_free(x);
    return -1;
}

/* The log marginal likelihood (eq. 5.8) from a factored workspace, summed
 * over the targets in order: per target -1/2 y^T alpha_ - sum log l_ii - n/2
 * log 2 pi, as scikit-learn sums them. */
static double gp_lml_of(const gp_ws *w) {
    double logdet = 0.0;
    for (int64_t i = 0; i < w->n; i++) logdet = logdet + sb_f64_log(w->A[i * w->n + i]);
    double total = 0.0;
    for (int64_t t = 0; t < w->t; t++) {
        double q = 0.0;
        for (int64_t i = 0; i < w->n; i++) q = q + w->y[i * w->t + t] * w->a[i * w->t + t];
        total = total + ((-0.5 * q - logdet) - 0.5 * (double)w->n * GP_LOG_2PI);
    }
    return total;
}

/* The log marginal likelihood at the kernel's values and, when grad is not
 * NULL, its gradient by every log hyperparameter (eq. 5.9; npar values, fixed
 * ones included). *bad: the Cholesky's failing column or -1. */
static sb_status gp_grad(gp_ws *w, const gp_kernel *k, double *grad);

static sb_status gp_lml(gp_ws *w, const gp_kernel *k, double *lml, double *grad, int64_t *bad) {
    double ev[GP_MAX_PARAMS];
    gp_values(k, ev);
    *bad = gp_factor(w, k, ev);
    if (*bad == -2) return sb_fail(SB_ERR_OUT_OF_MEMORY, "gaussian process: out of memory");
    if (*bad == -3) return w->dst;
    if (*bad >= 0) {
        *lml = -INFINITY;
        if (grad)
            for (int32_t p = 0; p < k->npar; p++) grad[p] = 0.0;
        return SB_OK;
    }
    *lml = gp_lml_of(w);
    return grad ? gp_grad(w, k, grad) : SB_OK;
}

/* The gradient (npar values) at the kernel's values from the workspace that
 * gp_lml just factored at them (its L and alpha_; L is spent). */
static sb_status gp_grad(gp_ws *w, const gp_kernel *k, double *grad) {
    double ev[GP_MAX_PARAMS];
    gp_values(k, ev);
    const int64_t n = w->n;
    sb_status st;
    if (w->dev) {
        /* the same steps on the device (gp_device.c), the rows' terms back */
        if ((st = sb_gp_dev_grad(w->dev, k, ev, w->a, w->t, w->part)) != SB_OK) return st;
        goto sum;
    }
    /* A := N = -K^-1 (lower), through Z = L^-1; L is spent */
    st = sb_gp_neg_inverse(w->A, w->Z, w->A, n);
    if (st != SB_OK) return st;
    /* W = sum over targets of alpha_t alpha_t^T - t K^-1 (as + t N), lower triangle, in place */
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c <= i; c++) {
            double s = 0.0;
            for (int64_t t = 0; t < w->t; t++) s = s + w->a[i * w->t + t] * w->a[c * w->t + t];
            w->A[i * n + c] = s + (double)w->t * w->A[i * n + c];
        }
    gp_job job;
    memset(&job, 0, sizeof job);
    job.n = n;
    job.k = k, job.ev = ev, job.X = w->X, job.d = w->d, job.W = w->A, job.part = w->part;
    sb_parallel_for(sb_chunk_count(n, GP_ROWS), grad_task, &job);
sum:
    for (int32_t p = 0; p < k->npar; p++) {
        double s = 0.0;
        for (int64_t i = 0; i < n; i++) s = s + w->part[i * k->npar + p];
        grad[p] = 0.5 * s;
    }
    return SB_OK;
}

/* ---- the optimizer --------------------------------------------------------- */

typedef struct gp_opt {
    gp_ws *w;
    gp_kernel *k;         /* its free values are the point */
    int32_t nf, fidx[GP_MAX_PARAMS];
    int32_t nfev, nit;
    double *trace;
    int32_t ntrace;
} gp_opt;

/* f = -lml at the free values x and, when g is not NULL, g its gradient
 * (free components). A point evaluated without g keeps its factor in the
 * workspace until the next evaluation, for opt_grad. */
static sb_status opt_eval(gp_opt *o, const double *x, double *f, double *g) {
    for (int32_t i = 0; i < o->nf; i++) o->k->logv[o->fidx[i]] = x[i];
    double lml, full[GP_MAX_PARAMS];
    int64_t bad;
    sb_status st = gp_lml(o->w, o->k, &lml, g ? full : NULL, &bad);
    o->nfev++;
    if (st != SB_OK) return st;
    *f = -lml;
    if (g)
        for (int32_t i = 0; i < o->nf; i++) g[i] = -full[o->fidx[i]];
    if (lml != lml) *f = INFINITY;
    return SB_OK;
}

/* g := the gradient at the point opt_eval evaluated last (without g), whose
 * factor is still in the workspace: the line search's rejected trials never
 * pay for the inverse and the gradient pass (the same values as evaluating
 * both at once: the same factor, the same arithmetic). */
static sb_status opt_grad(gp_opt *o, double *g) {
    double full[GP_MAX_PARAMS];
    sb_status st = gp_grad(o->w, o->k, full);
    if (st != SB_OK) return st;
    for (int32_t i = 0; i < o->nf; i++) g[i] = -full[o->fidx[i]];
    return SB_OK;
}

static double clampd(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* One start from x (clamped into the bounds): x and *f get its end. */
static sb_status opt_run(gp_opt *o, double *x, double *fout) {
    const int32_t nf = o->nf;
    double g[GP_MAX_PARAMS], xn[GP_MAX_PARAMS], gn[GP_MAX_PARAMS], d[GP_MAX_PARAMS], q[GP_MAX_PARAMS];
    double S[GP_MEM][GP_MAX_PARAMS], Y[GP_MEM][GP_MAX_PARAMS], rho[GP_MEM], al[GP_MEM];
    int32_t mem = 0, head = 0;
    const double *lo = o->k->lo, *hi = o->k->hi;
    for (int32_t i = 0; i < nf; i++) x[i] = clampd(x[i], lo[o->fidx[i]], hi[o->fidx[i]]);
    double f;
    sb_status st = opt_eval(o, x, &f, g);
    if (st != SB_OK) return st;
    for (int32_t it = 0; it < GP_MAXITER && f < INFINITY; it++) {
        /* the projected gradient: a component at a bound pushing outward is held */
        int32_t held[GP_MAX_PARAMS];
        double pgmax = 0.0;
        for (int32_t i = 0; i < nf; i++) {
            const int32_t p = o->fidx[i];
            held[i] = (x[i] <= lo[p] && g[i] > 0.0) || (x[i] >= hi[p] && g[i] < 0.0);
            const double a = held[i] ? 0.0 : (g[i] < 0.0 ? -g[i] : g[i]);
            if (a > pgmax) pgmax = a;
        }
        if (pgmax <= GP_PGTOL) break;
        /* the two-loop recursion over the kept pairs, newest first */
        for (int32_t i = 0; i < nf; i++) q[i] = held[i] ? 0.0 : g[i];
        for (int32_t m = 0; m < mem; m++) {
            const int32_t s = (head - 1 - m + GP_MEM) % GP_MEM;
            double sq = 0.0;
            for (int32_t i = 0; i < nf; i++) sq = sq + S[s][i] * q[i];
            al[s] = rho[s] * sq;
            for (int32_t i = 0; i < nf; i++) q[i] = q[i] - al[s] * Y[s][i];
        }
        if (mem > 0) {
            const int32_t s = (head - 1 + GP_MEM) % GP_MEM;
            double yy = 0.0;
            for (int32_t i = 0; i < nf; i++) yy = yy + Y[s][i] * Y[s][i];
            const double gamma = 1.0 / (rho[s] * yy);
            for (int32_t i = 0; i < nf; i++) q[i] = gamma * q[i];
        }
        for (int32_t m = mem - 1; m >= 0; m--) {
            const int32_t s = (head - 1 - m + GP_MEM) % GP_MEM;
            double yq = 0.0;
            for (int32_t i = 0; i < nf; i++) yq = yq + Y[s][i] * q[i];
            const double b = rho[s] * yq;
            for (int32_t i = 0; i < nf; i++) q[i] = q[i] + (al[s] - b) * S[s][i];
        }
        double gd = 0.0;
        for (int32_t i = 0; i < nf; i++) {
            d[i] = held[i] ? 0.0 : -q[i];
            gd = gd + g[i] * d[i];
        }
        if (!(gd < 0.0)) { /* not a descent direction: steepest descent, the memory dropped */
            mem = 0, head = 0, gd = 0.0;
            for (int32_t i = 0; i < nf; i++) {
                d[i] = held[i] ? 0.0 : -g[i];
                gd = gd + g[i] * d[i];
            }
        }
        double step = 1.0;
        if (mem == 0) step = 1.0 / pgmax < 1.0 ? 1.0 / pgmax : 1.0;
        double fn = INFINITY;
        int ok = 0;
        for (int h = 0; h <= GP_HALVINGS; h++) {
            double gs = 0.0;
            for (int32_t i = 0; i < nf; i++) {
                const int32_t p = o->fidx[i];
                xn[i] = clampd(x[i] + step * d[i], lo[p], hi[p]);
                gs = gs + g[i] * (xn[i] - x[i]);
            }
            if ((st = opt_eval(o, xn, &fn, NULL)) != SB_OK) return st;
            if (fn < INFINITY && fn <= f + 1e-4 * gs) {
                if ((st = opt_grad(o, gn)) != SB_OK) return st;
                ok = 1;
                break;
            }
            step = 0.5 * step;
        }
        if (!ok) break; /* no decrease along the direction: the start ends where it is */
        double sy = 0.0, yy = 0.0;
        for (int32_t i = 0; i < nf; i++) {
            S[head][i] = xn[i] - x[i];
            Y[head][i] = gn[i] - g[i];
            sy = sy + S[head][i] * Y[head][i];
            yy = yy + Y[head][i] * Y[head][i];
        }
        if (sy > 2.220446049250313e-16 * yy) {
            rho[head] = 1.0 / sy;
            head = (head + 1) % GP_MEM;
            if (mem < GP_MEM) mem++;
        }
        const double fo = f;
        for (int32_t i = 0; i < nf; i++) x[i] = xn[i], g[i] = gn[i];
        f = fn;
        o->nit++;
        if (o->ntrace < GP_MAX_TRACE) {
            double *tr = o->trace + (size_t)o->ntrace * (size_t)(1 + nf);
            tr[0] = f;
            for (int32_t i = 0; i < nf; i++) tr[1 + i] = x[i];
            o->ntrace++;
        }
        const double af = fo < 0.0 ? -fo : fo, an = f < 0.0 ? -f : f;
        const double big = af > an ? (af > 1.0 ? af : 1.0) : (an > 1.0 ? an : 1.0);
        if (fo - f <= GP_FTOL * big) break;
    }
    for (int32_t i = 0; i < nf; i++) o->k->logv[o->fidx[i]] = x[i];
    *fout = f;
    return SB_OK;
}

/* A uniform double in [0, 1) from 53 bits of two words. */
static double unit53(uint32_t hi, uint32_t lo) {
    return (double)(((uint64_t)(hi >> 5) << 26) | (uint64_t)(lo >> 6)) * 0x1p-53;
}

/* ---- the fit --------------------------------------------------------------- */

void sb_gp_release(sb_gp *g) {
    if (!g) return;
    sb_free(g->X), sb_free(g->y), sb_free(g->ymean), sb_free(g->ystd), sb_free(g->L), sb_free(g->a);
    sb_free(g->trace);
    sb_free(g);
}

/* The bits of doubles for the card, every NaN one quiet NaN. */
static sb_status rec(sb_card *card, const char *prefix, const char *what, const double *v, int64_t n) {
    if (!card) return SB_OK;
    char tag[96];
    snprintf(tag, sizeof tag, "%s.%s", prefix, what);
    uint64_t *u = sb_malloc(sizeof(uint64_t) * (size_t)(n > 0 ? n : 1));
    if (!u) return sb_fail(SB_ERR_OUT_OF_MEMORY, "gaussian process: out of memory for the card");
    for (int64_t i = 0; i < n; i++) {
        memcpy(&u[i], &v[i], 8);
        if (v[i] != v[i]) u[i] = 0x7FF8000000000000ull;
    }
    sb_status st = sb_card_record(card, tag, SB_DTYPE_U64, u, (uint64_t)n);
    sb_free(u);
    return st;
}

/* The named refusal of a kernel matrix that is not positive definite. */
static sb_status not_pd(int64_t col, double alpha) {
    return sb_fail(SB_ERR_INVALID_INPUT,
                   "gaussian process: the kernel matrix plus alpha=%g on its diagonal is not positive definite "
                   "(the Cholesky's pivot at column %lld is not > 0; docs/gaussian-process.md's jitter rule: raise "
                   "alpha or add a WhiteKernel)", alpha, (long long)col);
}

sb_status sb_gp_refactor(sb_gp *g) {
    gp_ws w;
    memset(&w, 0, sizeof w);
    w.X = g->X, w.y = g->y, w.n = g->n, w.d = g->d, w.t = g->t, w.alpha = g->alpha, w.device = g->device;
    sb_status st = ws_alloc(&w, 0);
    if (st != SB_OK) {
        ws_free(&w);
        return st;
    }
    double ev[GP_MAX_PARAMS];
    gp_values(&g->k, ev);
    const int64_t bad = gp_factor(&w, &g->k, ev);
    if (bad >= 0 || bad == -2 || bad == -3) {
        st = bad == -3 ? w.dst : bad == -2 ? sb_fail(SB_ERR_OUT_OF_MEMORY, "gaussian process: out of memory") : not_pd(bad, g->alpha);
        ws_free(&w);
        return st;
    }
    sb_free(g->L), sb_free(g->a);
    g->L = w.A, g->a = w.a;
    w.A = NULL, w.a = NULL;
    g->lml = gp_lml_of(&(gp_ws){.X = g->X, .y = g->y, .n = g->n, .d = g->d, .t = g->t, .A = g->L, .a = g->a});
    ws_free(&w);
    return SB_OK;
}

sb_status sb_gp_fit_spec(const gp_kernel *k, double alpha, int32_t normalize_y, int32_t optimize, int32_t restarts,
                         uint64_t seed, int32_t device, const double *X, int64_t n, int64_t d, const double *y,
                         int64_t t, sb_card *card, const char *prefix, sb_gp **out) {
    *out = NULL;
    sb_gp *g = sb_calloc(1, sizeof *g);
    if (!g) return sb_fail(SB_ERR_OUT_OF_MEMORY, "gaussian process: out of memory");
    g->k = *k, g->n = n, g->d = d, g->t = t, g->alpha = alpha, g->normalize_y = normalize_y;
    g->optimize = optimize, g->restarts = restarts, g->seed = seed, g->device = device;
    g->X = sb_malloc(sizeof(double) * (size_t)(n * d));
    g->y = sb_malloc(sizeof(double) * (size_t)(n * t));
    g->ymean = sb_malloc(sizeof(double) * (size_t)t);
    g->ystd = sb_malloc(sizeof(double) * (size_t)t);
    const int32_t nf = sb_gp_nfree(k);
    g->trace = sb_malloc(sizeof(double) * (size_t)GP_MAX_TRACE * (size_t)(1 + nf));
    if (!g->X || !g->y || !g->ymean || !g->ystd || !g->trace) {
        sb_gp_release(g);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "gaussian process: out of memory for %lld rows", (long long)n);
    }
    memcpy(g->X, X, sizeof(double) * (size_t)(n * d));
    /* normalize_y: each target's mean (sum in row order / n) and standard
     * deviation (ddof 0); a deviation of 0 is taken as 1, as scikit-learn's */
    for (int64_t c = 0; c < t; c++) {
        double mean = 0.0, var = 0.0;
        if (normalize_y) {
            for (int64_t i = 0; i < n; i++) mean = mean + y[i * t + c];
            mean = mean / (double)n;
            for (int64_t i = 0; i < n; i++) {
                const double e = y[i * t + c] - mean;
                var = var + e * e;
            }
            var = var / (double)n;
        }
        double sd = normalize_y ? sqrt(var) : 1.0;
        if (sd < 10.0 * 2.220446049250313e-16) sd = 1.0;
        g->ymean[c] = mean, g->ystd[c] = sd;
        for (int64_t i = 0; i < n; i++) g->y[i * t + c] = (y[i * t + c] - mean) / sd;
    }
    sb_status st = SB_OK;
    if (optimize && nf > 0) {
        gp_ws w;
        memset(&w, 0, sizeof w);
        w.X = g->X, w.y = g->y, w.n = n, w.d = d, w.t = t, w.alpha = alpha, w.device = device;
        st = ws_alloc(&w, 1);
        gp_kernel work = *k, best = *k;
        double bestf = INFINITY;
        gp_opt o;
        memset(&o, 0, sizeof o);
        o.w = &w, o.k = &work, o.trace = g->trace;
        for (int32_t p = 0; p < k->npar; p++)
            if (!k->fixed[p]) o.fidx[o.nf++] = p;
        for (int32_t r = 0; r <= restarts && st == SB_OK; r++) {
            double x[GP_MAX_PARAMS], f;
            for (int32_t i = 0; i < nf; i++) {
                const int32_t p = o.fidx[i];
                if (r == 0) x[i] = k->logv[p];
                else {
                    uint32_t wd[4];
                    sb_rng_words(seed, GP_PURPOSE_RESTART, (uint64_t)(r - 1) * (uint64_t)nf + (uint64_t)i, 0u, wd);
                    const double u = unit53(wd[0], wd[1]);
                    x[i] = k->lo[p] + u * (k->hi[p] - k->lo[p]);
                }
            }
            st = opt_run(&o, x, &f);
            if (st == SB_OK && card) {
                char what[48];
                snprintf(what, sizeof what, "start%d", (int)r);
                double rv[GP_MAX_PARAMS + 1];
                rv[0] = f;
                for (int32_t i = 0; i < nf; i++) rv[1 + i] = x[i];
                st = rec(card, prefix, what, rv, 1 + nf);
            }
            if (st == SB_OK && f < bestf) bestf = f, best = work; /* the first of equal minima wins */
        }
        ws_free(&w);
        g->nit = o.nit, g->nfev = o.nfev, g->ntrace = o.ntrace;
        if (st == SB_OK && bestf == INFINITY)
            st = sb_fail(SB_ERR_INVALID_INPUT,
                         "gaussian process: no start of the optimizer reached a positive definite kernel matrix "
                         "(docs/gaussian-process.md's jitter rule: raise alpha or add a WhiteKernel)");
        g->k = best;
    }
    if (st == SB_OK) st = sb_gp_refactor(g);
    if (st == SB_OK && card) {
        st = rec(card, prefix, "trace", g->trace, (int64_t)g->ntrace * (1 + nf));
        if (st == SB_OK) st = rec(card, prefix, "theta", g->k.logv, g->k.npar);
        if (st == SB_OK) st = rec(card, prefix, "L", g->L, n * n);
        if (st == SB_OK) st = rec(card, prefix, "alpha_", g->a, n * t);
        if (st == SB_OK) st = rec(card, prefix, "lml", &g->lml, 1);
    }
    if (st != SB_OK) {
        sb_gp_release(g);
        return st;
    }
    *out = g;
    return SB_OK;
}

/* ---- prediction ------------------------------------------------------------ */

typedef struct pred_job {
    const sb_gp *g;
    const double *ev;
    const double *Xs;
    int64_t m;
    double *V;      /* m x n: row r = L \ k(x_r, X) */
    double *mean, *var;
    int given;      /* V holds k(x_r, X) already (made on the device) */
} pred_job;

/* Rows of the prediction: k*, the mean k*^T alpha_ (row order) per target,
 * v = L \ k*, and the latent variance k(x, x) - v.v (clipped at 0). */
static void pred_task(void *ctx, int64_t task) {
    const pred_job *j = ctx;
    const sb_gp *g = j->g;
    int64_t b, e;
    sb_chunk_range(j->m, GP_ROWS, task, &b, &e);
    for (int64_t r = b; r < e; r++) {
        const double *xr = j->Xs + r * g->d;
        double *v = j->V + r * g->n;
        if (!j->given)
            for (int64_t c = 0; c < g->n; c++) v[c] = gp_eval(&g->k, j->ev, g->k.root, xr, g->X + c * g->d, g->d, 0, NULL);
        for (int64_t t = 0; t < g->t; t++) {
            double s = 0.0;
            for (int64_t c = 0; c < g->n; c++) s = s + v[c] * g->a[c * g->t + t];
            j->mean[r * g->t + t] = s;
        }
        if (j->var) {
            gp_forward(g->L, g->n, v);
            const double kxx = gp_eval(&g->k, j->ev, g->k.root, xr, xr, g->d, 1, NULL);
            const double vv = kxx - gp_dot(v, v, g->n);
            j->var[r] = vv < 0.0 ? 0.0 : vv;
        }
    }
}

typedef struct cov_job {
    const sb_gp *g;
    const double *ev, *Xs, *V;
    int64_t m;
    double *C;
} cov_job;

/* Rows of the latent covariance k(X*, X*) - V V^T (the white kernel on its
 * diagonal, as scikit-learn's kernel_(X)). */
static void cov_task(void *ctx, int64_t task) {
    const cov_job *j = ctx;
    const sb_gp *g = j->g;
    int64_t b, e;
    sb_chunk_range(j->m, GP_ROWS, task, &b, &e);
    for (int64_t r = b; r < e; r++)
        for (int64_t s = 0; s < j->m; s++) {
            const double kv = gp_eval(&g->k, j->ev, g->k.root, j->Xs + r * g->d, j->Xs + s * g->d, g->d, r == s, NULL);
            j->C[r * j->m + s] = kv - gp_dot(j->V + r * g->n, j->V + s * g->n, g->n);
        }
}

/* mean (m x t); std (m x t) or NULL; cov (m x m x t) or NULL. */
sb_status sb_gp_predict_host(const sb_gp *g, const double *Xs, int64_t m, double *mean, double *std, double *cov);
sb_status sb_gp_predict_host(const sb_gp *g, const double *Xs, int64_t m, double *mean, double *std, double *cov) {
    double ev[GP_MAX_PARAMS];
    gp_values(&g->k, ev);
    double *V = sb_malloc(sizeof(double) * (size_t)(m * g->n));
    double *var = (std || cov) ? sb_malloc(sizeof(double) * (size_t)m) : NULL;
    double *C = cov ? sb_malloc(sizeof(double) * (size_t)(m * m)) : NULL;
    if (!V || ((std || cov) && !var) || (cov && !C)) {
        sb_free(V), sb_free(var), sb_free(C);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "gaussian process: out of memory to predict %lld rows", (long long)m);
    }
    pred_job pj = {g, ev, Xs, m, V, mean, var, 0};
    if (g->device) {
        /* the cross kernel values on the device (the host's bits), the rest here */
        gp_dev *dv = NULL;
        sb_status st = sb_gp_dev_begin(g->device, g->X, g->n, g->d, 0, &dv);
        if (st == SB_OK) st = sb_gp_dev_cross(dv, &g->k, ev, Xs, m, V);
        sb_gp_dev_end(dv);
        if (st != SB_OK) {
            sb_free(V), sb_free(var), sb_free(C);
            return st;
        }
        pj.given = 1;
    }
    sb_parallel_for(sb_chunk_count(m, GP_ROWS), pred_task, &pj);
    for (int64_t r = 0; r < m; r++)
        for (int64_t t = 0; t < g->t; t++) mean[r * g->t + t] = g->ystd[t] * mean[r * g->t + t] + g->ymean[t];
    if (std)
        for (int64_t r = 0; r < m; r++)
            for (int64_t t = 0; t < g->t; t++) std[r * g->t + t] = sqrt(var[r]) * g->ystd[t];
    if (cov) {
        cov_job cj = {g, ev, Xs, V, m, C};
        sb_parallel_for(sb_chunk_count(m, GP_ROWS), cov_task, &cj);
        for (int64_t r = 0; r < m; r++)
            for (int64_t s = 0; s < m; s++)
                for (int64_t t = 0; t < g->t; t++)
                    cov[(r * m + s) * g->t + t] = C[r * m + s] * (g->ystd[t] * g->ystd[t]);
    }
    sb_free(V), sb_free(var), sb_free(C);
    return SB_OK;
}

/* The log marginal likelihood at the free log hyperparameters theta (NULL:
 * the fitted ones) and its gradient (nf values) when grad is not NULL. */
sb_status sb_gp_lml_host(const sb_gp *g, const double *theta, double *lml, double *grad);
sb_status sb_gp_lml_host(const sb_gp *g, const double *theta, double *lml, double *grad) {
    gp_kernel k = g->k;
    if (theta) {
        int32_t i = 0;
        for (int32_t p = 0; p < k.npar; p++)
            if (!k.fixed[p]) k.logv[p] = theta[i++];
    }
    gp_ws w;
    memset(&w, 0, sizeof w);
    w.X = g->X, w.y = g->y, w.n = g->n, w.d = g->d, w.t = g->t, w.alpha = g->alpha, w.device = g->device;
    sb_status st = ws_alloc(&w, grad != NULL);
    double full[GP_MAX_PARAMS];
    int64_t bad;
    if (st == SB_OK) st = gp_lml(&w, &k, lml, grad ? full : NULL, &bad);
    if (st == SB_OK && grad) {
        int32_t i = 0;
        for (int32_t p = 0; p < k.npar; p++)
            if (!k.fixed[p]) grad[i++] = full[p];
    }
    ws_free(&w);
    return st;
}

/* A standard normal for (seed, index) by Marsaglia's polar method (Marsaglia
 * and Bray, SIAM Review 6, 1964): candidate pairs from the words of sub = 0,
 * 1, ... until one falls inside the unit disc; the first of the pair is
 * returned. Uses log and sqrt only. */
static double gp_normal(uint64_t seed, uint64_t index) {
    for (uint32_t sub = 0;; sub++) {
        uint32_t w[4];
        sb_rng_words(seed, 0x47505331u /* "GPS1" */, index, sub, w);
        const double u = 2.0 * unit53(w[0], w[1]) - 1.0, v = 2.0 * unit53(w[2], w[3]) - 1.0;
        const double s = u * u + v * v;
        if (s > 0.0 && s < 1.0) return u * sqrt(-2.0 * sb_f64_log(s) / s);
    }
}

/* sample_y: out (m x t x ns, scikit-learn's layout) = mean + C z, C the
 * lower factor of the predictive covariance by a semidefinite Cholesky (a
 * pivot at most 1e-12 times the largest diagonal is taken as 0 and its
 * column is 0: the stated rule for a covariance of rank below m), z standard
 * normals by (random_state, (t ns + s) m + row). */
sb_status sb_gp_sample_host(const sb_gp *g, const double *Xs, int64_t m, int64_t ns, uint64_t seed, double *out);
sb_status sb_gp_sample_host(const sb_gp *g, const double *Xs, int64_t m, int64_t ns, uint64_t seed, double *out) {
    double *mean = sb_malloc(sizeof(double) * (size_t)(m * g->t));
    double *cov = sb_malloc(sizeof(double) * (size_t)(m * m * g->t));
    double *C = sb_malloc(sizeof(double) * (size_t)(m * m));
    double *z = sb_malloc(sizeof(double) * (size_t)m);
    sb_status st = (!mean || !cov || !C || !z)
                       ? sb_fail(SB_ERR_OUT_OF_MEMORY, "gaussian process: out of memory to sample %lld rows", (long long)m)
                       : sb_gp_predict_host(g, Xs, m, mean, NULL, cov);
    for (int64_t t = 0; t < g->t && st == SB_OK; t++) {
        double big = 0.0;
        for (int64_t r = 0; r < m; r++) {
            for (int64_t s = 0; s < m; s++) C[r * m + s] = s <= r ? cov[(r * m + s) * g->t + t] : 0.0;
            if (C[r * m + r] > big) big = C[r * m + r];
        }
        const double floor = 1e-12 * big;
        for (int64_t i = 0; i < m; i++) {
            double *ci = C + i * m;
            for (int64_t c = 0; c < i; c++) {
                const double *cc = C + c * m;
                ci[c] = cc[c] > 0.0 ? (ci[c] - gp_dot(ci, cc, c)) / cc[c] : 0.0;
            }
            const double p = ci[i] - gp_dot(ci, ci, i);
            ci[i] = p > floor ? sqrt(p) : 0.0;
        }
        for (int64_t s = 0; s < ns; s++) {
            for (int64_t r = 0; r < m; r++) z[r] = gp_normal(seed, ((uint64_t)t * (uint64_t)ns + (uint64_t)s) * (uint64_t)m + (uint64_t)r);
            for (int64_t r = 0; r < m; r++)
                out[(r * g->t + t) * ns + s] = mean[r * g->t + t] + gp_dot(C + r * m, z, r + 1);
        }
    }
    sb_free(mean), sb_free(cov), sb_free(C), sb_free(z);
    return st;
}
