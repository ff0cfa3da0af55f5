/*
 * logistic.c: logistic regression, binary and multinomial, by L-BFGS
 * (Nocedal, "Updating quasi-Newton matrices with limited storage", Math.
 * Comp. 35, 1980; the two-loop recursion of Nocedal and Wright, Numerical
 * Optimization, 2nd ed., alg. 7.4) with the Moré-Thuente line search
 * (lin_search.h) at scipy's L-BFGS-B constants, so that the iterates follow
 * scikit-learn's solver="lbfgs" closely enough to stop where it stops.
 *
 * The objective is scikit-learn's for solver="lbfgs": the weighted mean loss
 * (1/S) sum_i s_i l(y_i, z_i) plus 1/(2 C S) |W|^2 (the intercepts are not
 * penalized; S the weights' sum, s_i = sample weight times class weight).
 * Binary: one coefficient row, l = log(1 + e^-|z|) + max(z, 0) - y z.
 * Multinomial (3 or more classes): one row per class, l = log sum_k e^(z_k)
 * - z_y, computed shifted by the row's largest margin. Converged: the largest
 * gradient component at most tol, or a step that moved no coefficient (a
 * float32 fixed point: the next direction would be the same).
 * The margins Z = X W^T and the gradient R^T X are the core's identical
 * product; exp, log1p and log are the profile's own (src/math/sb_elem.h);
 * every sum is exact and rounded once; the L-BFGS vectors (K (p + 1) values)
 * are host arithmetic in index order. So every device gives the same bits.
 */
#include "linear.h"
#include "lin_search.h"
#include "../../kernels/linear.h"
#include "../../math/sb_elem.h"
#include "../../math/sb_reduce.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define LBFGS_M 10  /* the pairs kept, as scipy's L-BFGS-B default */
#define LG_MAXLS 50 /* trial steps per line search, as scikit-learn's maxls */

typedef struct lg {
    const sb_table *t;
    const lin_params *p;
    int64_t n;
    int32_t P, K, nclass; /* features, coefficient rows, classes */
    int64_t dim;          /* K * (P + 1): the rows' coefficients, then the K intercepts */
    float *s;             /* per-row weight (sample weight times class weight) */
    float S;              /* their exact sum, rounded */
    float *Z, *R;         /* n x K margins, n x K weighted residuals */
    float *gw;            /* K x P gradient block */
    sb_sacc *acc;         /* per row chunk: the loss, then the K residual sums */
    const float *b;       /* the intercepts of the point being evaluated */
    lin_dev dv;           /* where the products run; X stays there for the whole fit */
    lin_mat mx, mw, mr;   /* X (n x P), W (K x P), R (n x K) */
    /* on a GPU the rows run there too: labels, row weights and intercepts up,
     * margins, residuals and losses kept on the device */
    lin_mat mlab, ms, mb, mrd;
    sb_dbuf dz, dloss;
} lg;

#define LG_ROW_GRAIN 8192
#define LG_LOCAL_SUMS 32

/* Rows [b, e) of a chunk: margins plus intercepts, the weighted losses and
 * residuals; the chunk's loss and residual sums go to its accumulators (exact:
 * merged in chunk order, the same sums whatever the thread count). */
static void rows_task(void *ctx, int64_t task) {
    lg *c = ctx;
    int64_t rb, re;
    sb_chunk_range(c->n, LG_ROW_GRAIN, task, &rb, &re);
    const int32_t K = c->K;
    /* the sums in this task's own stack (tasks' accumulators side by side in
     * c->acc would share cache lines while every row adds to them), copied
     * out once; more classes than LG_LOCAL_SUMS work in c->acc directly */
    sb_sacc local[LG_LOCAL_SUMS];
    sb_sacc *out = c->acc + task * (K + 1), *acc = K + 1 <= LG_LOCAL_SUMS ? local : out;
    for (int32_t k = 0; k <= K; k++) sb_sacc_init(&acc[k]);
    const float *b = c->b;
    if (K == 1) {
        /* sb_k_logit_row's binary arithmetic, operation for operation, in
         * passes over blocks of rows: each pass a short chain per row, so the
         * core overlaps the rows' exp and log1p latencies (one loop over the
         * whole row function keeps them in series) */
        enum { LG_BLOCK = 256 };
        float zb[LG_BLOCK], en[LG_BLOCK], sg[LG_BLOCK];
        for (int64_t i0 = rb; i0 < re; i0 += LG_BLOCK) {
            const int32_t nb = (int32_t)(re - i0 < LG_BLOCK ? re - i0 : LG_BLOCK);
            for (int32_t q = 0; q < nb; q++) {
                zb[q] = c->Z[i0 + q] + b[0];
                sg[q] = sb_sigmoid_expneg(zb[q], &en[q]);
            }
            for (int32_t q = 0; q < nb; q++) en[q] = sb_log1pf(en[q]);
            for (int32_t q = 0; q < nb; q++) {
                const int64_t i = i0 + q;
                const float zi = zb[q], yi = (int32_t)c->t->label[i] == 1 ? 1.0f : 0.0f, si = c->s[i];
                const float li = en[q] + (zi > 0.0f ? zi : 0.0f) - yi * zi;
                const float r = si * (sg[q] - yi);
                c->R[i] = r;
                sb_sacc_add(&acc[0], si * li);
                sb_sacc_add(&acc[1], r);
            }
        }
    } else {
        for (int64_t i = rb; i < re; i++) {
            float *r = c->R + i * K;
            const float li = sb_k_logit_row(K, c->Z + i * K, b, (int32_t)c->t->label[i], c->s[i], r);
            sb_sacc_add(&acc[0], li);
            for (int32_t k = 0; k < K; k++) sb_sacc_add(&acc[1 + k], r[k]);
        }
    }
    if (acc != out) memcpy(out, acc, sizeof(sb_sacc) * (size_t)(K + 1));
}

/* eval's device road: the margins, the rows and the gradient's product on
 * the GPU, only K (P + 1) + K + 1 values back (the same bits as the host's:
 * the same products, the same row function, the same exact sums). */
static sb_status eval_dev(lg *c, const float *x, float *f, float *g) {
    const int64_t n = c->n;
    const int32_t P = c->P, K = c->K;
    const float *W = x, *b = x + (int64_t)K * P;
    double t0 = 0.0;
    sb_lin_phase(NULL, &t0);
    float sums[1024 + 1];
    sb_status st = sb_lin_mat_set(&c->dv, &c->mw, W, (int64_t)K * P);
    if (st == SB_OK) st = sb_lin_mat_set(&c->dv, &c->mb, b, K);
    if (st == SB_OK) st = sb_lin_dev_gemm_to(&c->dv, 0, 1, n, K, P, &c->mx, P, &c->mw, P, &c->dz);
    sb_lin_phase("margins product", &t0);
    if (st == SB_OK)
        st = sb_lin_dev_logit_rows(&c->dv, &c->dz, n, K, &c->mb, &c->mlab, &c->ms, &c->mrd.dev, &c->dloss, sums);
    sb_lin_phase("rows (loss, residuals)", &t0);
    if (st == SB_OK) st = sb_lin_dev_gemm(&c->dv, 1, 0, K, P, n, &c->mrd, K, &c->mx, P, c->gw);
    sb_lin_phase("gradient product", &t0);
    if (st != SB_OK) return st;
    const float lam = c->p->penalty_l2 ? 1.0f / c->p->C : 0.0f;
    const float pen = lam > 0.0f ? 0.5f * lam * sb_lin_dot(W, 1, W, 1, (int64_t)K * P) : 0.0f;
    *f = (sums[0] + pen) / c->S;
    for (int64_t j = 0; j < (int64_t)K * P; j++) g[j] = (c->gw[j] + lam * W[j]) / c->S;
    for (int32_t k = 0; k < K; k++) g[(int64_t)K * P + k] = c->p->fit_intercept ? sums[1 + k] / c->S : 0.0f;
    return SB_OK;
}

/* f(x) and its gradient g (dim values). x holds W (K x P) then b (K). */
static sb_status eval(lg *c, const float *x, float *f, float *g) {
    if (c->dv.d) return eval_dev(c, x, f, g);
    const int64_t n = c->n;
    const int32_t P = c->P, K = c->K;
    const float *W = x;
    c->b = x + (int64_t)K * P;
    double t0 = 0.0;
    sb_lin_phase(NULL, &t0);
    sb_status st = sb_lin_mat_set(&c->dv, &c->mw, W, (int64_t)K * P);
    if (st == SB_OK) st = sb_lin_dev_gemm(&c->dv, 0, 1, n, K, P, &c->mx, P, &c->mw, P, c->Z);
    if (st != SB_OK) return st;
    sb_lin_phase("margins product", &t0);
    const int64_t nc = sb_chunk_count(n, LG_ROW_GRAIN);
    sb_parallel_for(nc, rows_task, c);
    sb_lin_phase("rows (loss, residuals)", &t0);
    for (int64_t t = 1; t < nc; t++)
        for (int32_t k = 0; k <= K; k++) sb_sacc_merge(&c->acc[k], &c->acc[t * (K + 1) + k]);
    /* the gradient's W block: R^T X (K x P) */
    if ((st = sb_lin_mat_set(&c->dv, &c->mr, c->R, n * K)) != SB_OK) return st;
    if ((st = sb_lin_dev_gemm(&c->dv, 1, 0, K, P, n, &c->mr, K, &c->mx, P, c->gw)) != SB_OK) return st;
    sb_lin_phase("gradient product", &t0);
    const float lam = c->p->penalty_l2 ? 1.0f / c->p->C : 0.0f;
    const float pen = lam > 0.0f ? 0.5f * lam * sb_lin_dot(W, 1, W, 1, (int64_t)K * P) : 0.0f;
    *f = (sb_sacc_round_f32(&c->acc[0]) + pen) / c->S;
    for (int64_t j = 0; j < (int64_t)K * P; j++) g[j] = (c->gw[j] + lam * W[j]) / c->S;
    for (int32_t k = 0; k < K; k++)
        g[(int64_t)K * P + k] = c->p->fit_intercept ? sb_sacc_round_f32(&c->acc[1 + k]) / c->S : 0.0f;
    return SB_OK;
}

static float vdot(const float *a, const float *b, int64_t n) { return sb_lin_dot(a, 1, b, 1, n); }

static float vmaxabs(const float *a, int64_t n) {
    float m = 0.0f;
    for (int64_t i = 0; i < n; i++)
        if (fabsf(a[i]) > m) m = fabsf(a[i]);
    return m;
}

typedef struct weights_job {
    const sb_table *t;
    const float *cw;
    float *s;
    int64_t n;
} weights_job;

static void weights_task(void *ctx, int64_t task) {
    const weights_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, LG_ROW_GRAIN * 8, task, &b, &e);
    for (int64_t i = b; i < e; i++) {
        const float w = j->t->weight ? j->t->weight[i] : 1.0f;
        j->s[i] = w * j->cw[(int32_t)j->t->label[i]];
    }
}

/* Per-row weights: the sample weight (1 without) times the class weight
 * (balanced: n / (K n_k) with n_k the class's weighted count, scikit-learn's
 * compute_class_weight over the labels, which is unweighted; listed: the
 * given one). */
static sb_status row_weights(lg *c) {
    const sb_table *t = c->t;
    float cw[1024];
    for (int32_t k = 0; k < c->nclass; k++) cw[k] = c->p->class_weight == 2 ? c->p->cw[k] : 1.0f;
    if (c->p->class_weight == 1) {
        int64_t cnt[1024] = {0};
        for (int64_t i = 0; i < c->n; i++) cnt[(int32_t)t->label[i]]++;
        int32_t present = 0;
        for (int32_t k = 0; k < c->nclass; k++) present += cnt[k] > 0;
        for (int32_t k = 0; k < c->nclass; k++)
            cw[k] = cnt[k] ? (float)c->n / ((float)present * (float)cnt[k]) : 1.0f;
    }
    weights_job j = {t, cw, c->s, c->n};
    sb_parallel_for(sb_chunk_count(c->n, LG_ROW_GRAIN * 8), weights_task, &j);
    c->S = sb_lin_dot(c->s, 1, NULL, 0, c->n);
    if (!(c->S > 0.0f) || !isfinite(c->S))
        return sb_fail(SB_ERR_INVALID_INPUT, "logistic regression: the sample and class weights sum to %g",
                       (double)c->S);
    return SB_OK;
}

sb_status sb_lin_fit_logistic(const sb_table *t, const lin_params *p, int32_t nclass, sb_model *m, sb_card *card) {
    lg c = {0};
    c.t = t;
    c.p = p;
    c.n = t->nrows;
    c.P = t->ncols;
    c.nclass = nclass;
    c.K = nclass == 2 ? 1 : nclass;
    c.dim = (int64_t)c.K * (c.P + 1);
    const int64_t dim = c.dim;
    sb_status st = SB_OK;
    c.s = sb_malloc(sizeof(float) * (size_t)c.n);
    c.Z = sb_malloc(sizeof(float) * (size_t)c.n * (size_t)c.K);
    c.R = sb_malloc(sizeof(float) * (size_t)c.n * (size_t)c.K);
    c.gw = sb_malloc(sizeof(float) * (size_t)c.K * (size_t)c.P);
    float *x = sb_calloc((size_t)dim, sizeof(float)), *g = sb_malloc(sizeof(float) * (size_t)dim);
    float *xn = sb_malloc(sizeof(float) * (size_t)dim), *gn = sb_malloc(sizeof(float) * (size_t)dim);
    float *d = sb_malloc(sizeof(float) * (size_t)dim);
    float *S = sb_malloc(sizeof(float) * (size_t)dim * LBFGS_M), *Y = sb_malloc(sizeof(float) * (size_t)dim * LBFGS_M);
    float rho[LBFGS_M], al[LBFGS_M];
    const int64_t nchunks = sb_chunk_count(c.n, LG_ROW_GRAIN);
    c.acc = sb_malloc(sizeof(sb_sacc) * (size_t)(nchunks > 0 ? nchunks : 1) * (size_t)(c.K + 1));
    int dev_open = 0;
    if (!c.s || !c.Z || !c.R || !c.gw || !x || !g || !xn || !gn || !d || !S || !Y || !c.acc) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "logistic regression: out of memory");
        goto done;
    }
    if ((st = sb_lin_dev_open(p, &c.dv)) != SB_OK) goto done;
    dev_open = 1;
    double t0 = 0.0;
    sb_lin_phase(NULL, &t0);
    if ((st = sb_lin_mat_set(&c.dv, &c.mx, t->x, c.n * c.P)) != SB_OK) goto done;
    sb_lin_mat_prepare(&c.dv, &c.mx, c.n, c.P); /* X's rows (margins) and columns (gradient), once */
    sb_lin_phase("upload", &t0);
    if ((st = row_weights(&c)) != SB_OK) goto done;
    sb_lin_phase("row weights", &t0);
    if (c.dv.d && ((st = sb_lin_mat_set(&c.dv, &c.mlab, t->label, c.n)) != SB_OK ||
                   (st = sb_lin_mat_set(&c.dv, &c.ms, c.s, c.n)) != SB_OK))
        goto done;
    sb_lin_phase("labels and weights up", &t0);
    float f = 0.0f;
    if ((st = eval(&c, x, &f, g)) != SB_OK) goto done;
    int32_t it = 0, npair = 0, head = 0, converged = vmaxabs(g, dim) <= p->tol;
    for (it = 0; it < p->max_iter && !converged; it++) {
        /* d = -H g by the two-loop recursion over the kept pairs, newest first */
        for (int64_t j = 0; j < dim; j++) d[j] = -g[j];
        for (int32_t q = 0; q < npair; q++) {
            const int32_t s = (head - 1 - q + LBFGS_M) % LBFGS_M;
            al[s] = rho[s] * vdot(S + (int64_t)s * dim, d, dim);
            for (int64_t j = 0; j < dim; j++) d[j] = d[j] - al[s] * Y[(int64_t)s * dim + j];
        }
        if (npair > 0) {
            const int32_t s = (head - 1 + LBFGS_M) % LBFGS_M;
            const float gam = vdot(S + (int64_t)s * dim, Y + (int64_t)s * dim, dim) /
                              vdot(Y + (int64_t)s * dim, Y + (int64_t)s * dim, dim);
            for (int64_t j = 0; j < dim; j++) d[j] = gam * d[j];
        }
        for (int32_t q = npair - 1; q >= 0; q--) {
            const int32_t s = (head - 1 - q + LBFGS_M) % LBFGS_M;
            const float be = rho[s] * vdot(Y + (int64_t)s * dim, d, dim);
            for (int64_t j = 0; j < dim; j++) d[j] = d[j] + (al[s] - be) * S[(int64_t)s * dim + j];
        }
        float gd = vdot(g, d, dim);
        if (!(gd < 0.0f)) { /* not a descent direction: restart from steepest descent */
            for (int64_t j = 0; j < dim; j++) d[j] = -g[j];
            gd = vdot(g, d, dim);
            npair = 0;
        }
        /* the Moré-Thuente search from step 1 (1 / |d|_2 on the first
         * iteration), as scipy's L-BFGS-B; each trial point is x + (float)stp d */
        sb_mt mt;
        sb_mt_start(&mt, it == 0 ? 1.0 / sqrt((double)vdot(d, d, dim)) : 1.0, f, gd);
        float fn = 0.0f;
        int ok = 0;
        for (int32_t ls = 0; ls < LG_MAXLS && st == SB_OK; ls++) {
            const float stp = (float)mt.stp;
            for (int64_t j = 0; j < dim; j++) xn[j] = x[j] + stp * d[j];
            if ((st = eval(&c, xn, &fn, gn)) != SB_OK) break;
            const float gdn = vdot(gn, d, dim);
            if (!isfinite(fn) || !isfinite(gdn)) { /* overflowed: back halfway toward the interval's best end */
                mt.stp = mt.stx + 0.5 * (mt.stp - mt.stx);
                continue;
            }
            /* a change of f below float32's resolution of f: the value from
             * the slopes instead (the trapezoid rule along the step), so the
             * search still sees the decrease it has made */
            double fv = fn;
            if (fabsf(fn - f) <= 0x1p-18f * fabsf(f)) fv = (double)f + mt.stp * 0.5 * ((double)gd + (double)gdn);
            const sb_mt_task task = sb_mt_next(&mt, fv, gdn);
            if (task != SB_MT_AGAIN) {
                ok = 1;
                break;
            }
        }
        if (st != SB_OK) goto done;
        if (!ok) {
            /* no acceptable step: as L-BFGS-B, forget the pairs and retry from
             * steepest descent; without pairs there is nothing left to try */
            if (npair == 0) break;
            npair = 0;
            it--;
            continue;
        }
        /* the new pair; kept only with positive curvature */
        float *sv = S + (int64_t)head * dim, *yv = Y + (int64_t)head * dim;
        for (int64_t j = 0; j < dim; j++) {
            sv[j] = xn[j] - x[j];
            yv[j] = gn[j] - g[j];
        }
        /* L-BFGS-B's curvature test, s.y > eps (-stp g.d) with eps double's epsilon */
        const float sy = vdot(sv, yv, dim);
        if ((double)sy > 2.220446049250313e-16 * (-(double)(float)mt.stp * (double)gd)) {
            rho[head] = 1.0f / sy;
            head = (head + 1) % LBFGS_M;
            if (npair < LBFGS_M) npair++;
        }
        memcpy(x, xn, sizeof(float) * (size_t)dim);
        memcpy(g, gn, sizeof(float) * (size_t)dim);
        /* a float32 fixed point: a step that moved no coefficient (every one rounds
         * back to itself) gives the same direction again, so no later step can move
         * either; the fit has converged as far as float32 resolves it */
        int flat = 1;
        for (int64_t j = 0; j < dim && flat; j++) flat = sv[j] == 0.0f;
        f = fn;
        if (card && (it < 64 || it % 100 == 0)) {
            char tag[48];
            snprintf(tag, sizeof tag, "lbfgs.iter%d.coef", (int)it);
            if ((st = sb_lin_record(card, tag, x, (uint64_t)dim)) != SB_OK) goto done;
            snprintf(tag, sizeof tag, "lbfgs.iter%d.loss", (int)it);
            if ((st = sb_lin_record(card, tag, &f, 1)) != SB_OK) goto done;
        }
        converged = vmaxabs(g, dim) <= p->tol || flat;
    }
    {
        sb_linear *lin = m->linear;
        lin->nclass = nclass;
        lin->n_iter = it;
        lin->converged = converged;
        lin->rank = c.P;
        memcpy(lin->coef, x, sizeof(float) * (size_t)c.K * (size_t)c.P);
        memcpy(lin->intercept, x + (int64_t)c.K * c.P, sizeof(float) * (size_t)c.K);
        st = sb_lin_record(card, "lbfgs.loss", &f, 1);
    }
done:
    if (dev_open) {
        sb_lin_mat_release(&c.dv, &c.mx);
        sb_lin_mat_release(&c.dv, &c.mw);
        sb_lin_mat_release(&c.dv, &c.mr);
        sb_lin_mat_release(&c.dv, &c.mlab);
        sb_lin_mat_release(&c.dv, &c.ms);
        sb_lin_mat_release(&c.dv, &c.mb);
        sb_lin_mat_release(&c.dv, &c.mrd);
        if (c.dv.d) {
            sb_device *d;
            if (sb_linalg_device_lock((sb_device_kind)c.dv.kind, &d) == SB_OK) {
                sb_device_release(d, &c.dz);
                sb_device_release(d, &c.dloss);
                sb_linalg_device_unlock();
            }
        }
        sb_lin_dev_close(&c.dv);
    }
    sb_free(c.acc);
    sb_free(c.s);
    sb_free(c.Z);
    sb_free(c.R);
    sb_free(c.gw);
    sb_free(x);
    sb_free(g);
    sb_free(xn);
    sb_free(gn);
    sb_free(d);
    sb_free(S);
    sb_free(Y);
    return st;
}
