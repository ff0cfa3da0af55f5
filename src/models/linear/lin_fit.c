/*
 * lin_fit.c: least squares (LinearRegression, Ridge), coordinate descent
 * (Lasso, ElasticNet) and PCA, all from the centered Gram matrix.
 *
 * The data is centered (weighted means, exact sums rounded once) and each row
 * scaled by sqrt(w_i), as scikit-learn's _rescale_data does; the Gram matrix
 * G = Xc^T Xc and q = Xc^T yc are the core's identical product, each element
 * the exact sum rounded once to float32. What follows is small (p x p) host
 * work in one fixed order, so every device and thread count gives the same
 * bits. docs/linear.md states each rule.
 *
 * Coordinate descent follows Friedman, Hastie and Tibshirani, "Regularization
 * paths for generalized linear models via coordinate descent" (J. Stat.
 * Software 33, 2010), in its covariance-update form, with the duality-gap
 * stopping rule of scikit-learn's documentation (the gap of the elastic-net
 * dual, El Ghaoui et al. 2012 / Fercoq et al. 2015).
 */
#include "linear.h"
#include "../../math/sb_reduce.h"
#include "../../linalg/linalg.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The centered, weight-scaled copies of the data and their Gram products. */
typedef struct lin_prep {
    int64_t n;
    int32_t p;
    float *xm, ym;   /* weighted means (zeros without an intercept) */
    float *xc, *yc;  /* n x p and n */
    float *G, *q;    /* p x p and p */
    float sw;        /* the weights' exact sum, rounded (n without weights) */
} lin_prep;

static void prep_free(lin_prep *a) {
    sb_free(a->xm);
    sb_free(a->xc);
    sb_free(a->yc);
    sb_free(a->G);
    sb_free(a->q);
}

/* Fills a from t; with_y: center the labels too and form q. */
static sb_status prep(const sb_table *t, const lin_params *p, int center, int with_y, lin_prep *a, sb_card *card) {
    memset(a, 0, sizeof *a);
    const int64_t n = t->nrows;
    const int32_t P = t->ncols;
    a->n = n;
    a->p = P;
    a->xm = sb_calloc((size_t)P, sizeof(float));
    a->xc = sb_malloc(sizeof(float) * (size_t)n * (size_t)P);
    a->G = sb_malloc(sizeof(float) * (size_t)P * (size_t)P);
    if (with_y) {
        a->yc = sb_malloc(sizeof(float) * (size_t)n);
        a->q = sb_malloc(sizeof(float) * (size_t)P);
    }
    if (!a->xm || !a->xc || !a->G || (with_y && (!a->yc || !a->q)))
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory for %lld x %d", (long long)n, (int)P);
    const float *w = t->weight;
    a->sw = w ? sb_lin_dot(w, 1, NULL, 0, n) : (float)n;
    sb_status st = SB_OK;
    if (center) {
        if ((st = sb_lin_col_means(t->x, n, P, w, a->xm)) != SB_OK) return st;
        if (with_y) {
            float ym;
            if ((st = sb_lin_col_means(t->label, n, 1, w, &ym)) != SB_OK) return st;
            a->ym = ym;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        const float s = w ? sqrtf(w[i]) : 1.0f;
        const float *r = t->x + i * P;
        float *o = a->xc + i * P;
        for (int32_t j = 0; j < P; j++) o[j] = w ? (r[j] - a->xm[j]) * s : r[j] - a->xm[j];
        if (with_y) a->yc[i] = w ? (t->label[i] - a->ym) * s : t->label[i] - a->ym;
    }
    if ((st = sb_lin_record(card, "linear.x_mean", a->xm, (uint64_t)P)) != SB_OK) return st;
    if (with_y && (st = sb_lin_record(card, "linear.y_mean", &a->ym, 1)) != SB_OK) return st;
    if ((st = sb_lin_gemm(p, 1, 0, P, P, n, a->xc, P, a->xc, P, a->G, P)) != SB_OK) return st;
    if ((st = sb_lin_record(card, "linear.gram", a->G, (uint64_t)P * (uint64_t)P)) != SB_OK) return st;
    if (with_y) {
        if ((st = sb_lin_gemm(p, 1, 0, P, 1, n, a->xc, P, a->yc, 1, a->q, 1)) != SB_OK) return st;
        if ((st = sb_lin_record(card, "linear.xty", a->q, (uint64_t)P)) != SB_OK) return st;
    }
    return SB_OK;
}

/* intercept = ym - xm . coef (the dot exact, one subtraction); 0 without one. */
static float intercept_of(const lin_prep *a, const lin_params *p, const float *coef) {
    return p->fit_intercept ? a->ym - sb_lin_dot(a->xm, 1, coef, 1, a->p) : 0.0f;
}

/* Squared pivots below this (the scaled system has a unit diagonal) send
 * least squares to the eigen path: the system is then too close to singular
 * for the factorization to be the right answer in float32. */
#define LIN_PIVOT_FLOOR 0x1p-20f

/* coef := the least-squares (alpha 0) or ridge solution of (G + alpha I) coef = q.
 * The system is scaled to a unit diagonal (d_j = sqrt of its diagonal; a
 * column whose diagonal is 0 is constant after centering and gets
 * coefficient 0), then solved by Cholesky; when a squared pivot falls below
 * LIN_PIVOT_FLOOR or the factorization refuses, by the eigendecomposition,
 * keeping the eigenvalues above n_active * 2^-23 of the largest (the
 * minimum-norm solution in the scaled coordinates). */
static sb_status solve_ls(const lin_prep *a, const lin_params *p, float alpha, sb_linear *lin, sb_card *card) {
    const int32_t P = a->p;
    sb_status st = SB_OK;
    int32_t *act = sb_malloc(sizeof(int32_t) * (size_t)P);
    float *d = sb_malloc(sizeof(float) * (size_t)P);
    float *S = sb_malloc(sizeof(float) * (size_t)P * (size_t)P);
    float *L = sb_malloc(sizeof(float) * (size_t)P * (size_t)P);
    float *b = sb_malloc(sizeof(float) * (size_t)P), *u = sb_malloc(sizeof(float) * (size_t)P);
    float *ev = sb_malloc(sizeof(float) * (size_t)P);
    if (!act || !d || !S || !L || !b || !u || !ev) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory for %d x %d", (int)P, (int)P);
        goto done;
    }
    int32_t na = 0;
    for (int32_t j = 0; j < P; j++) {
        const float djj = a->G[(int64_t)j * P + j] + alpha;
        if (djj > 0.0f) {
            act[na++] = j;
            d[j] = sqrtf(djj);
        } else {
            d[j] = 0.0f;
        }
    }
    for (int32_t x = 0; x < na; x++) {
        const int32_t i = act[x];
        for (int32_t y = 0; y < na; y++) {
            const int32_t j = act[y];
            float g = a->G[(int64_t)i * P + j];
            if (i == j) g = g + alpha;
            S[(int64_t)x * na + y] = g / d[i] / d[j];
        }
        b[x] = a->q[i] / d[i];
    }
    int32_t rank = na;
    int use_eig = na == 0;
    if (na > 0) {
        int64_t bad = -1;
        st = sb_linalg_cholesky_ex(p->device, na, S, na, L, na, &bad);
        if (st == SB_ERR_INVALID_INPUT && bad >= 0) {
            st = SB_OK;
            use_eig = 1;
        }
        if (st != SB_OK) goto done;
        for (int32_t x = 0; x < na && !use_eig; x++) {
            const float l = L[(int64_t)x * na + x];
            if (!(l * l >= LIN_PIVOT_FLOOR)) use_eig = 1;
        }
    }
    if (na > 0 && !use_eig) {
        if ((st = sb_lin_record(card, "ls.cholesky", L, (uint64_t)na * (uint64_t)na)) != SB_OK) goto done;
        if ((st = sb_linalg_solve_triangular(p->device, 0, na, 1, L, na, b, 1, u, 1)) != SB_OK) goto done;
        if ((st = sb_linalg_solve_triangular(p->device, 1, na, 1, L, na, u, 1, u, 1)) != SB_OK) goto done;
    } else if (na > 0) {
        /* S = V diag(ev) V^T; u = sum over kept k of (v_k . b / ev_k) v_k, k ascending */
        if ((st = sb_linalg_eigh(p->device, na, S, na, ev, L, na, NULL, NULL)) != SB_OK) goto done;
        if ((st = sb_lin_record(card, "ls.eigenvalues", ev, (uint64_t)na)) != SB_OK) goto done;
        const float cut = ev[0] * ((float)na * 0x1p-23f);
        for (int32_t x = 0; x < na; x++) u[x] = 0.0f;
        rank = 0;
        for (int32_t k = 0; k < na; k++) {
            if (!(ev[k] > cut)) continue;
            rank++;
            const float c = sb_lin_dot(L + k, na, b, 1, na) / ev[k];
            for (int32_t x = 0; x < na; x++) u[x] = u[x] + c * L[(int64_t)x * na + k];
        }
    }
    for (int32_t j = 0; j < P; j++) lin->coef[j] = 0.0f;
    for (int32_t x = 0; x < na; x++) lin->coef[act[x]] = u[x] / d[act[x]];
    lin->rank = rank;
    lin->converged = 1;
    lin->intercept[0] = intercept_of(a, p, lin->coef);
    if ((st = sb_lin_record(card, "ls.coef", lin->coef, (uint64_t)P)) != SB_OK) goto done;
    st = sb_lin_record(card, "ls.intercept", lin->intercept, 1);
done:
    sb_free(act);
    sb_free(d);
    sb_free(S);
    sb_free(L);
    sb_free(b);
    sb_free(u);
    sb_free(ev);
    return st;
}

static float soft_threshold(float x, float t) { return x > t ? x - t : x < -t ? x + t : 0.0f; }

/* Cards keep the coefficients of the first sweeps and of every hundredth
 * (a fixture's whole run; a long fit's card stays small). */
static int record_sweep(int32_t it) { return it < 64 || it % 100 == 0; }

/* Lasso and ElasticNet by cyclic coordinate descent on (G, q): minimizes
 * 1/(2W) ||yc - Xc w||^2 + alpha l1_ratio |w|_1 + alpha (1 - l1_ratio)/2 |w|^2
 * (W the weights' sum), scikit-learn's objective. Coordinates 0..p-1 in order;
 * each update uses rho_j = q_j - sum_{k != j} G_jk w_k with every product
 * exact and the sum rounded once (sb_lin_dot_exact's rule), so no running
 * residual drifts and no order can reach a bit.
 * Stopping (docs/linear.md): after a sweep whose largest change is below tol
 * times the largest coefficient, the duality gap (scikit-learn's form, from
 * the same exact sums) is compared with tol * yc.yc; the fit has converged
 * when it is below, or when the sweep moved no coefficient by more than 2^-22
 * of the largest (a float32 fixed point: on badly scaled data the gap cannot
 * be resolved below float32's resolution, and further sweeps change nothing).
 * Running out of sweeps is reported (converged 0). */
static sb_status solve_cd(const lin_prep *a, const lin_params *p, sb_linear *lin, sb_card *card) {
    const int32_t P = a->p;
    const float l1 = p->alpha * p->l1_ratio * a->sw, l2 = p->alpha * (1.0f - p->l1_ratio) * a->sw;
    float *w = lin->coef, *xta = sb_malloc(sizeof(float) * (size_t)P);
    sb_sacc *acc = sb_malloc(sizeof(sb_sacc));
    if (!xta || !acc) {
        sb_free(xta);
        sb_free(acc);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory");
    }
    const float yy = sb_lin_dot_exact(a->yc, 1, a->yc, 1, a->n);
    const float tol = p->tol * yy;
    float gap = 0.0f;
    int32_t it = 0, converged = 0;
    sb_status st = SB_OK;
    for (int32_t j = 0; j < P; j++) w[j] = 0.0f;
    for (it = 0; it < p->max_iter && !converged && st == SB_OK; it++) {
        float wmax = 0.0f, dmax = 0.0f;
        for (int32_t j = 0; j < P; j++) {
            const float *g = a->G + (int64_t)j * P;
            if (!(g[j] > 0.0f)) continue;
            sb_sacc_init(acc);
            sb_sacc_add(acc, a->q[j]);
            for (int32_t k = 0; k < P; k++)
                if (k != j && w[k] != 0.0f) sb_lin_sacc_add_product(acc, -g[k], w[k]);
            const float rho = sb_sacc_round_f32(acc);
            const float old = w[j];
            w[j] = soft_threshold(rho, l1) / (g[j] + l2);
            const float ch = fabsf(w[j] - old), aw = fabsf(w[j]);
            if (ch > dmax) dmax = ch;
            if (aw > wmax) wmax = aw;
        }
        if (card && record_sweep(it)) {
            char tag[48];
            snprintf(tag, sizeof tag, "cd.sweep%d.coef", (int)it);
            st = sb_lin_record(card, tag, w, (uint64_t)P);
        }
        if (dmax <= wmax * 0x1p-22f) converged = 1;
        if (!converged && (wmax == 0.0f || dmax / wmax < p->tol || it == p->max_iter - 1)) {
            /* XtA_j = q_j - (G w)_j - l2 w_j and R^2 = yy - 2 q.w + w.G.w, exact sums rounded once */
            float dual = 0.0f;
            for (int32_t k = 0; k < P; k++) {
                const float *g = a->G + (int64_t)k * P;
                sb_sacc_init(acc);
                sb_sacc_add(acc, a->q[k]);
                for (int32_t j = 0; j < P; j++)
                    if (w[j] != 0.0f) sb_lin_sacc_add_product(acc, -g[j], w[j]);
                if (w[k] != 0.0f) sb_lin_sacc_add_product(acc, -l2, w[k]);
                xta[k] = sb_sacc_round_f32(acc);
                if (fabsf(xta[k]) > dual) dual = fabsf(xta[k]);
            }
            sb_sacc_init(acc);
            sb_sacc_add(acc, yy);
            for (int32_t k = 0; k < P; k++)
                if (w[k] != 0.0f) {
                    sb_lin_sacc_add_product(acc, -2.0f * a->q[k], w[k]);
                    for (int32_t j = 0; j < P; j++)
                        if (w[j] != 0.0f) sb_lin_sacc_add_product(acc, a->G[(int64_t)k * P + j] * w[k], w[j]);
                }
            const float R2 = sb_sacc_round_f32(acc);
            const float qw = sb_lin_dot_exact(a->q, 1, w, 1, P);
            float cst = 1.0f;
            if (dual > l1) {
                cst = l1 / dual;
                gap = 0.5f * (R2 + R2 * cst * cst);
            } else {
                gap = R2;
            }
            sb_sacc_init(acc);
            for (int32_t k = 0; k < P; k++) sb_sacc_add(acc, fabsf(w[k]));
            const float l1n = sb_sacc_round_f32(acc), w2 = sb_lin_dot_exact(w, 1, w, 1, P);
            gap = gap + (l1 * l1n - cst * yy + cst * qw + 0.5f * l2 * (1.0f + cst * cst) * w2);
            if (gap < tol) converged = 1;
        }
    }
    lin->n_iter = it;
    lin->converged = converged;
    lin->rank = 0;
    for (int32_t j = 0; j < P; j++) lin->rank += w[j] != 0.0f;
    lin->intercept[0] = intercept_of(a, p, w);
    if (st == SB_OK) st = sb_lin_record(card, "cd.gap", &gap, 1);
    if (st == SB_OK) st = sb_lin_record(card, "cd.intercept", lin->intercept, 1);
    sb_free(xta);
    sb_free(acc);
    return st;
}

sb_status sb_lin_fit_least_squares(const sb_table *t, const lin_params *p, sb_model *m, sb_card *card) {
    lin_prep a;
    sb_status st = prep(t, p, p->fit_intercept, 1, &a, card);
    if (st == SB_OK) {
        if (p->kind == SB_LIN_OLS) st = solve_ls(&a, p, 0.0f, m->linear, card);
        else if (p->kind == SB_LIN_RIDGE) st = solve_ls(&a, p, p->alpha, m->linear, card);
        else st = solve_cd(&a, p, m->linear, card);
    }
    prep_free(&a);
    return st;
}

/* PCA from the covariance: the centered Gram matrix's eigenpairs (the core's
 * Jacobi method: eigenvalues descending, each eigenvector's largest-magnitude
 * component positive, the sign rule of scikit-learn's svd_flip on components).
 * Negative eigenvalues (rounding) count as 0. explained_variance = lambda /
 * (n - 1); its ratio divides by the sum of all of them (exact sum, rounded);
 * singular_values = sqrt(lambda). A variance fraction keeps the fewest leading
 * components whose running ratio (added in order, float) exceeds it. */
sb_status sb_lin_fit_decomposition(const sb_table *t, const lin_params *p, sb_model *m, sb_card *card) {
    lin_prep a;
    sb_linear *lin = m->linear;
    const int32_t P = t->ncols;
    float *ev = NULL, *V = NULL;
    sb_status st = prep(t, p, 1, 0, &a, card);
    if (st == SB_OK) {
        ev = sb_malloc(sizeof(float) * (size_t)P);
        V = sb_malloc(sizeof(float) * (size_t)P * (size_t)P);
        if (!ev || !V) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "pca: out of memory for %d x %d", (int)P, (int)P);
    }
    int32_t sweeps = 0;
    if (st == SB_OK) st = sb_linalg_eigh(p->device, P, a.G, P, ev, V, P, &sweeps, NULL);
    if (st == SB_OK) {
        const int64_t most = t->nrows < P ? t->nrows : P;
        const float nm1 = (float)(t->nrows - 1);
        for (int32_t k = 0; k < P; k++)
            if (!(ev[k] > 0.0f)) ev[k] = 0.0f;
        const float total = sb_lin_dot(ev, 1, NULL, 0, P) / nm1;
        int32_t keep = p->n_components > 0 ? p->n_components : (int32_t)most;
        if (p->variance_kept > 0.0f) {
            float cum = 0.0f;
            keep = 0;
            while (keep < most) {
                cum = cum + (total > 0.0f ? ev[keep] / nm1 / total : 0.0f);
                keep++;
                if (cum > p->variance_kept) break;
            }
        }
        lin->nout = keep;
        m->num_class = keep;
        lin->rank = keep;
        for (int32_t k = 0; k < keep; k++) {
            for (int32_t j = 0; j < P; j++) lin->coef[(int64_t)k * P + j] = V[(int64_t)j * P + k];
            lin->ev[k] = ev[k] / nm1;
            lin->evr[k] = total > 0.0f ? lin->ev[k] / total : 0.0f;
            lin->sv[k] = sqrtf(ev[k]);
        }
        memcpy(lin->mean, a.xm, sizeof(float) * (size_t)P);
        lin->whiten = p->whiten;
        lin->noise_variance = 0.0f;
        if (keep < most) {
            sb_sacc acc;
            sb_sacc_init(&acc);
            for (int64_t k = keep; k < most; k++) sb_sacc_add(&acc, ev[k] / nm1);
            lin->noise_variance = sb_sacc_round_f32(&acc) / (float)(most - keep);
        }
        lin->n_iter = sweeps;
        lin->converged = 1;
        st = sb_lin_record(card, "pca.eigenvalues", ev, (uint64_t)P);
        if (st == SB_OK) st = sb_lin_record(card, "pca.components", lin->coef, (uint64_t)keep * (uint64_t)P);
        if (st == SB_OK) st = sb_lin_record(card, "pca.explained_variance", lin->ev, (uint64_t)keep);
    }
    sb_free(ev);
    sb_free(V);
    prep_free(&a);
    return st;
}
