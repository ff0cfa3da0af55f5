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
#include <stdlib.h>
#include <string.h>

/* The centered, weight-scaled copy of the data and its Gram products. */
typedef struct lin_prep {
    int64_t n;
    int32_t p, ny;   /* features; targets (0: none prepared) */
    float *xm, *ym;  /* weighted means (zeros without an intercept): p, ny */
    float *xc;       /* prep_center_only: n rows of p, owned (centering only) */
    const float *xc_view; /* prep_center_only: the rows the solver reads (xc, or the data itself) */
    int32_t ld;      /* xc's row length */
    float *G, *q;    /* p x p; ny x p (target t's Xc^T yc_t in row t) */
    float *yy;       /* ny: yc_t . yc_t, the same exact sums rounded once */
    float sw;        /* the weights' exact sum, rounded (n without weights) */
} lin_prep;

static void prep_free(lin_prep *a) {
    sb_free(a->xm);
    sb_free(a->ym);
    sb_free(a->xc);
    sb_free(a->G);
    sb_free(a->q);
    sb_free(a->yy);
}

/* Fills a from t: means, and G = Xc^T Xc, q = Xc^T yc, yy = yc.yc as the one
 * product [Xc yc]^T [Xc yc] of the centered rows (yc an extra column when
 * with_y) on the fit's device (one upload). The centered rows live only for
 * the product: on the host in a copy of this call, on a GPU there alone
 * (a->xc stays NULL). */
static sb_status prep(const sb_table *t, const lin_params *p, int center, int with_y, lin_prep *a, sb_card *card) {
    memset(a, 0, sizeof *a);
    const int64_t n = t->nrows;
    const int32_t P = t->ncols, T = with_y ? (t->ntargets > 1 ? t->ntargets : 1) : 0, W = P + T;
    a->n = n;
    a->p = P;
    a->ny = T;
    a->ld = W;
    a->xm = sb_calloc((size_t)P, sizeof(float));
    a->G = sb_malloc(sizeof(float) * (size_t)P * (size_t)P);
    float *ga = sb_malloc(sizeof(float) * (size_t)W * (size_t)W), *xc = NULL;
    if (T) {
        a->q = sb_malloc(sizeof(float) * (size_t)P * (size_t)T);
        a->ym = sb_calloc((size_t)T, sizeof(float));
        a->yy = sb_malloc(sizeof(float) * (size_t)T);
    }
    if (!a->xm || !a->G || !ga || (T && (!a->q || !a->ym || !a->yy))) {
        sb_free(ga);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory for %lld x %d", (long long)n, (int)P);
    }
    const float *w = t->weight;
    double t0 = 0.0;
    sb_lin_phase(NULL, &t0);
    a->sw = w ? sb_lin_dot(w, 1, NULL, 0, n) : (float)n;
    sb_status st = SB_OK;
    lin_dev dv;
    lin_mat z = {0}, mx = {0};
    if ((st = sb_lin_dev_open(p, &dv)) != SB_OK) {
        sb_free(ga);
        return st;
    }
    /* a GPU: the raw rows go up once; unweighted means and the centering run there (the same bits) */
    if (dv.d) {
        st = sb_lin_mat_set(&dv, &mx, t->x, n * P);
        sb_lin_phase("upload", &t0);
    }
    if (st == SB_OK && center) {
        if (dv.d && !w) st = sb_lin_dev_means(&dv, &mx, n, P, a->xm);
        else st = sb_lin_col_means(t->x, n, P, w, a->xm);
        if (st == SB_OK && T) st = sb_lin_col_means(t->label, n, T, w, a->ym);
    }
    sb_lin_phase("means", &t0);
    if (st == SB_OK) st = sb_lin_record(card, "linear.x_mean", a->xm, (uint64_t)P);
    if (st == SB_OK && T) st = sb_lin_record(card, "linear.y_mean", a->ym, (uint64_t)T);
    if (st == SB_OK) {
        if (!dv.d && !w && !T) {
            /* features alone, unweighted (PCA): the host centers them where the product reads them */
            st = sb_gemm_host_gram_centered(n, P, t->x, P, a->xm, ga, W);
            sb_lin_phase("centering and gram product", &t0);
        } else if (dv.d) {
            st = sb_lin_dev_center(&dv, t, &mx, a->xm, a->ym, T, &z);
            sb_lin_mat_release(&dv, &mx);
            sb_lin_phase("centering", &t0);
        } else if (!(xc = sb_malloc(sizeof(float) * (size_t)n * (size_t)W))) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory for %lld x %d", (long long)n, (int)W);
        } else {
            sb_lin_center(t->x, T ? t->label : NULL, T, w, n, P, a->xm, a->ym, xc);
            sb_lin_phase("centering", &t0);
            st = sb_lin_mat_set(&dv, &z, xc, n * W);
        }
        if (st == SB_OK && (dv.d || w || T)) {
            st = sb_lin_dev_gemm(&dv, 1, 0, W, W, n, &z, W, &z, W, ga);
            sb_lin_phase("gram product", &t0);
        }
    }
    sb_lin_mat_release(&dv, &mx);
    sb_lin_mat_release(&dv, &z);
    sb_lin_dev_close(&dv);
    sb_free(xc);
    if (st == SB_OK) {
        for (int32_t i = 0; i < P; i++) {
            memcpy(a->G + (int64_t)i * P, ga + (int64_t)i * W, sizeof(float) * (size_t)P);
            for (int32_t k = 0; k < T; k++) a->q[(int64_t)k * P + i] = ga[(int64_t)i * W + P + k];
        }
        for (int32_t k = 0; k < T; k++) a->yy[k] = ga[(int64_t)(P + k) * W + P + k];
        st = sb_lin_record(card, "linear.gram", a->G, (uint64_t)P * (uint64_t)P);
    }
    if (st == SB_OK && T) st = sb_lin_record(card, "linear.xty", a->q, (uint64_t)P * (uint64_t)T);
    sb_free(ga);
    return st;
}

/* The centered (center) copy of the data alone, for the randomized solver. */
static sb_status prep_center_only(const sb_table *t, int center, lin_prep *a, sb_card *card) {
    memset(a, 0, sizeof *a);
    const int64_t n = t->nrows;
    const int32_t P = t->ncols;
    a->n = n;
    a->p = P;
    a->ld = P;
    a->xm = sb_calloc((size_t)P, sizeof(float));
    if (!a->xm) return sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory for %d features", (int)P);
    if (!center) {
        /* x - 0 is x, bit for bit (a -0 stays -0, a NaN a NaN): the data itself, no copy */
        a->xc_view = t->x;
        return sb_lin_record(card, "linear.x_mean", a->xm, (uint64_t)P);
    }
    a->xc = sb_malloc(sizeof(float) * (size_t)n * (size_t)P);
    if (!a->xc) return sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory for %lld x %d", (long long)n, (int)P);
    sb_status st = sb_lin_col_means(t->x, n, P, NULL, a->xm);
    if (st != SB_OK) return st;
    sb_lin_center(t->x, NULL, 0, NULL, n, P, a->xm, NULL, a->xc);
    a->xc_view = a->xc;
    return sb_lin_record(card, "linear.x_mean", a->xm, (uint64_t)P);
}

static sb_status fit_randomized(const sb_table *t, const lin_params *p, const lin_prep *a, sb_model *m, sb_card *card);
static sb_status tsvd_variances(const sb_table *t, const lin_params *p, sb_linear *lin, int32_t k);

/* The family's one eigensolver rule: the core's Jacobi method (the highest
 * relative accuracy: small eigenvalues of badly scaled covariances keep their
 * vectors) up to LIN_JACOBI_MAX, Householder and QL (lin_eigh.c) above, where
 * Jacobi's sweeps cost too much (29 s at 1024 on two cores, against 4.3 s). */
#define LIN_JACOBI_MAX 256
static sb_status lin_eigh_rule(const lin_params *p, int64_t n, const float *a, float *w, float *v, int32_t *sweeps) {
    if (sweeps) *sweeps = 0;
    if (n <= LIN_JACOBI_MAX) return sb_linalg_eigh(p->device, n, a, n, w, v, n, sweeps, NULL);
    /* The device road (lin_eigh.c: Householder, Q and the QL rotations as
     * kernels, the host's bits) runs only when SAMEBITS_EIGH_ROAD=device asks
     * for it: measured on an H100 at n = 1024 (2026-12-05, 50f21a4) it took
     * 0.92-1.09 s against the host road's 0.50 s on the 16 host cores (its
     * Householder reduction faster, 0.08-0.17 s against 0.37, its Q 0.22-0.29
     * against 0.035 and its rotations 0.58 against 0.10 slower: n work-items
     * each), so the host road serves every device by default. Bytes only:
     * both roads give the same bits (tests/unit/test_lin_eigh.c). */
    const char *road = getenv("SAMEBITS_EIGH_ROAD");
    return sb_lin_eigh_on(road && !strcmp(road, "device") ? p->device : NULL, n, a, w, v);
}

/* target t's intercept = ym_t - xm . coef (the dot exact, one subtraction); 0 without one. */
static float intercept_of(const lin_prep *a, const lin_params *p, const float *coef, int32_t t) {
    return p->fit_intercept ? a->ym[t] - sb_lin_dot(a->xm, 1, coef, 1, a->p) : 0.0f;
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
static sb_status solve_ls(const lin_prep *a, const lin_params *p, float alpha, sb_linear *lin, sb_card *card,
                          int32_t tg) {
    const int32_t P = a->p;
    const float *q = a->q + (int64_t)tg * P;
    float *coef = lin->coef + (int64_t)tg * P;
    /* the stages of target tg: a single target's names, or suffixed by the target */
    char sfx[24] = "";
    if (a->ny > 1) snprintf(sfx, sizeof sfx, ".target%d", (int)tg);
    char tag[64];
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
        b[x] = q[i] / d[i];
    }
    int32_t rank = na;
    int use_eig = na == 0;
    double t0 = 0.0;
    sb_lin_phase(NULL, &t0);
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
        snprintf(tag, sizeof tag, "ls.cholesky%s", sfx);
        if ((st = sb_lin_record(card, tag, L, (uint64_t)na * (uint64_t)na)) != SB_OK) goto done;
        if ((st = sb_linalg_solve_triangular(p->device, 0, na, 1, L, na, b, 1, u, 1)) != SB_OK) goto done;
        if ((st = sb_linalg_solve_triangular(p->device, 1, na, 1, L, na, u, 1, u, 1)) != SB_OK) goto done;
    } else if (na > 0) {
        /* S = V diag(ev) V^T; u = sum over kept k of (v_k . b / ev_k) v_k, k ascending */
        if ((st = lin_eigh_rule(p, na, S, ev, L, NULL)) != SB_OK) goto done;
        snprintf(tag, sizeof tag, "ls.eigenvalues%s", sfx);
        if ((st = sb_lin_record(card, tag, ev, (uint64_t)na)) != SB_OK) goto done;
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
    sb_lin_phase("solve", &t0);
    for (int32_t j = 0; j < P; j++) coef[j] = 0.0f;
    for (int32_t x = 0; x < na; x++) coef[act[x]] = u[x] / d[act[x]];
    if (tg == 0 || rank < lin->rank) lin->rank = rank; /* several targets: the same system, one rank */
    lin->converged = 1;
    lin->intercept[tg] = intercept_of(a, p, coef, tg);
    snprintf(tag, sizeof tag, "ls.coef%s", sfx);
    if ((st = sb_lin_record(card, tag, coef, (uint64_t)P)) != SB_OK) goto done;
    snprintf(tag, sizeof tag, "ls.intercept%s", sfx);
    st = sb_lin_record(card, tag, lin->intercept + tg, 1);
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
static sb_status solve_cd(const lin_prep *a, const lin_params *p, sb_linear *lin, sb_card *card, int32_t tg) {
    const int32_t P = a->p;
    const float *q = a->q + (int64_t)tg * P;
    /* the stages of target tg: a single target's names, or suffixed by the target (as solve_ls') */
    char sfx[24] = "", tag[64];
    if (a->ny > 1) snprintf(sfx, sizeof sfx, ".target%d", (int)tg);
    const float l1 = p->alpha * p->l1_ratio * a->sw, l2 = p->alpha * (1.0f - p->l1_ratio) * a->sw;
    float *w = lin->coef + (int64_t)tg * P, *xta = sb_malloc(sizeof(float) * (size_t)P);
    sb_sacc *acc = sb_malloc(sizeof(sb_sacc));
    if (!xta || !acc) {
        sb_free(xta);
        sb_free(acc);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory");
    }
    const float yy = a->yy[tg];
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
            sb_sacc_add(acc, q[j]);
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
            snprintf(tag, sizeof tag, "cd.sweep%d.coef%s", (int)it, sfx);
            st = sb_lin_record(card, tag, w, (uint64_t)P);
        }
        if (dmax <= wmax * 0x1p-22f) converged = 1;
        if (!converged && (wmax == 0.0f || dmax / wmax < p->tol || it == p->max_iter - 1)) {
            /* XtA_j = q_j - (G w)_j - l2 w_j and R^2 = yy - 2 q.w + w.G.w, exact sums rounded once */
            float dual = 0.0f;
            for (int32_t k = 0; k < P; k++) {
                const float *g = a->G + (int64_t)k * P;
                sb_sacc_init(acc);
                sb_sacc_add(acc, q[k]);
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
                    sb_lin_sacc_add_product(acc, -2.0f * q[k], w[k]);
                    for (int32_t j = 0; j < P; j++)
                        if (w[j] != 0.0f) sb_lin_sacc_add_product(acc, a->G[(int64_t)k * P + j] * w[k], w[j]);
                }
            const float R2 = sb_sacc_round_f32(acc);
            const float qw = sb_lin_dot_exact(q, 1, w, 1, P);
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
    /* one target: its sweeps and flag; several: each kept in runs, n_iter the largest, converged the
     * conjunction, rank the most nonzero coefficients of any target */
    int32_t nz = 0;
    for (int32_t j = 0; j < P; j++) nz += w[j] != 0.0f;
    if (lin->runs) {
        lin->runs[tg] = it, lin->runs[lin->nout + tg] = converged;
        if (tg == 0 || it > lin->n_iter) lin->n_iter = it;
        lin->converged = tg == 0 ? converged : lin->converged && converged;
        if (tg == 0 || nz > lin->rank) lin->rank = nz;
    } else {
        lin->n_iter = it, lin->converged = converged, lin->rank = nz;
    }
    lin->intercept[tg] = intercept_of(a, p, w, tg);
    snprintf(tag, sizeof tag, "cd.gap%s", sfx);
    if (st == SB_OK) st = sb_lin_record(card, tag, &gap, 1);
    snprintf(tag, sizeof tag, "cd.intercept%s", sfx);
    if (st == SB_OK) st = sb_lin_record(card, tag, lin->intercept + tg, 1);
    sb_free(xta);
    sb_free(acc);
    return st;
}

sb_status sb_lin_fit_least_squares(const sb_table *t, const lin_params *p, sb_model *m, sb_card *card) {
    lin_prep a;
    sb_status st = prep(t, p, p->fit_intercept, 1, &a, card);
    if (st == SB_OK) {
        /* several targets (least squares and ridge): one coefficient row each, from the one Gram product */
        for (int32_t tg = 0; tg < a.ny && st == SB_OK && p->kind <= SB_LIN_RIDGE; tg++)
            st = solve_ls(&a, p, p->kind == SB_LIN_RIDGE ? p->alpha : 0.0f, m->linear, card, tg);
        for (int32_t tg = 0; tg < a.ny && st == SB_OK && p->kind > SB_LIN_RIDGE; tg++)
            st = solve_cd(&a, p, m->linear, card, tg);
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
    if (p->svd_solver == 2) {
        /* the randomized solver: no Gram matrix of all the features */
        sb_status st = prep_center_only(t, p->kind == SB_LIN_PCA, &a, card);
        if (st == SB_OK) st = fit_randomized(t, p, &a, m, card);
        prep_free(&a);
        return st;
    }
    /* the exact solvers: PCA's centered Gram matrix, a truncated SVD's
     * uncentered one (its components are X's own right singular vectors) */
    const int tsvd = p->kind == SB_LIN_TSVD;
    sb_status st = prep(t, p, !tsvd, 0, &a, card);
    if (st == SB_OK) {
        ev = sb_malloc(sizeof(float) * (size_t)P);
        V = sb_malloc(sizeof(float) * (size_t)P * (size_t)P);
        if (!ev || !V) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "pca: out of memory for %d x %d", (int)P, (int)P);
    }
    int32_t sweeps = 0;
    double t0 = 0.0;
    sb_lin_phase(NULL, &t0);
    if (st == SB_OK) st = lin_eigh_rule(p, P, a.G, ev, V, &sweeps);
    sb_lin_phase("eigh", &t0);
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
        if (!tsvd) memcpy(lin->mean, a.xm, sizeof(float) * (size_t)P);
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
        if (tsvd) { /* no mean, no whitening, no noise variance: the projection's own variances */
            lin->whiten = 0;
            lin->noise_variance = 0.0f;
            st = tsvd_variances(t, p, lin, keep);
        }
        const char *const *names = tsvd ? (const char *const[]){"tsvd.eigenvalues", "tsvd.components", "tsvd.explained_variance"}
                                        : (const char *const[]){"pca.eigenvalues", "pca.components", "pca.explained_variance"};
        if (st == SB_OK) st = sb_lin_record(card, names[0], ev, (uint64_t)P);
        if (st == SB_OK) st = sb_lin_record(card, names[1], lin->coef, (uint64_t)keep * (uint64_t)P);
        if (st == SB_OK) st = sb_lin_record(card, names[2], lin->ev, (uint64_t)keep);
    }
    sb_free(ev);
    sb_free(V);
    prep_free(&a);
    return st;
}

/* ---- the randomized range finder (PCA svd_solver=randomized, TruncatedSVD) ---- */

sb_status sb_lin_resolve_solver(const sb_table *t, lin_params *p) {
    const int64_t n = t->nrows, P = t->ncols, mn = n < P ? n : P;
    if (p->kind == SB_LIN_TSVD && p->n_components == 0) p->n_components = 2; /* scikit-learn's default */
    if (p->kind == SB_LIN_PCA && p->svd_solver == 0) {
        /* scikit-learn's choice for svd_solver="auto" (1.5 and later) */
        if (P <= 1000 && n >= 10 * P) p->svd_solver = 1;
        else if ((n > P ? n : P) <= 500) p->svd_solver = 1;
        else if (p->n_components >= 1 && (double)p->n_components < 0.8 * (double)mn) p->svd_solver = 2;
        else p->svd_solver = 1;
    }
    if (p->svd_solver == 3) {
        /* arpack (here the exact eigensolver, the leading components kept):
         * scikit-learn's rules for it, a whole count below min(rows, features),
         * None meaning one less than that */
        if (p->variance_kept > 0.0f)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "svd_solver='arpack' needs a whole n_components (1..%lld), not a "
                           "variance fraction", (long long)(mn - 1));
        if (p->n_components == 0 && p->kind == SB_LIN_PCA) p->n_components = (int32_t)(mn - 1);
        if (p->n_components < 1 || p->n_components >= mn)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "n_components=%d with %s='arpack' must be in 1..%lld (below "
                           "min(rows, features) = %lld)", (int)p->n_components,
                           p->kind == SB_LIN_TSVD ? "algorithm" : "svd_solver", (long long)(mn - 1), (long long)mn);
    }
    const int randomized = p->svd_solver == 2;
    if (randomized && (p->n_components < 1 || p->variance_kept > 0.0f))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "the randomized solver needs a whole n_components (1..%lld)",
                       (long long)mn);
    if (randomized && p->n_components > mn)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "n_components=%d is more than min(rows, features) = %lld",
                       (int)p->n_components, (long long)mn);
    if (randomized && p->n_iter < 0)
        p->n_iter = p->kind == SB_LIN_TSVD ? 5 : ((double)p->n_components < 0.1 * (double)mn ? 7 : 4);
    if (!randomized) p->n_iter = -1;
    return SB_OK;
}

/* Q := an orthonormal basis of the columns of y (n x l, in place): the
 * eigenvectors V and values lam of y^T y give Q = y V diag(lam^-1/2), the
 * directions with lam at most l * 2^-23 of the largest set to 0; applied twice
 * (the second pass restores the orthogonality float32 loses in the first). */
static sb_status orth(const lin_params *p, int64_t n, int32_t l, float *y, float *tmp) {
    float *G = sb_malloc(sizeof(float) * (size_t)l * (size_t)l), *V = sb_malloc(sizeof(float) * (size_t)l * (size_t)l);
    float *lam = sb_malloc(sizeof(float) * (size_t)l);
    sb_status st = G && V && lam ? SB_OK : sb_fail(SB_ERR_OUT_OF_MEMORY, "randomized svd: out of memory");
    for (int pass = 0; pass < 2 && st == SB_OK; pass++) {
        if ((st = sb_lin_gemm(p, 1, 0, l, l, n, y, l, y, l, G, l)) != SB_OK) break;
        if ((st = lin_eigh_rule(p, l, G, lam, V, NULL)) != SB_OK) break;
        const float cut = lam[0] * ((float)l * 0x1p-23f);
        for (int32_t k = 0; k < l; k++) {
            const float sc = lam[k] > cut && lam[k] > 0.0f ? 1.0f / sqrtf(lam[k]) : 0.0f;
            for (int32_t r = 0; r < l; r++) V[(int64_t)r * l + k] = V[(int64_t)r * l + k] * sc;
        }
        if ((st = sb_lin_gemm(p, 0, 0, n, l, l, y, l, V, l, tmp, l)) != SB_OK) break;
        memcpy(y, tmp, sizeof(float) * (size_t)n * (size_t)l);
    }
    sb_free(G);
    sb_free(V);
    sb_free(lam);
    return st;
}

/* The leading k singular triplets of a (n x P) by the randomized range finder
 * of Halko, Martinsson and Tropp (SIAM Review 53, 2011, alg. 4.4): Omega the
 * P x l Philox normal matrix of seed (l = k + oversamples, at most min(n, P)),
 * q power iterations each orthonormalized (orth above), then the small
 * problem B = Q^T a solved through the eigenpairs of B B^T. comp (k x P) gets
 * the right singular vectors, each row's largest-magnitude component positive
 * (ties: the lowest index), sv the singular values descending. */
static sb_status rsvd(const lin_params *p, const float *a, int64_t n, int32_t P, int32_t k, float *comp, float *sv,
                      sb_card *card) {
    const int64_t mn = n < P ? n : P;
    int32_t l = k + p->n_oversamples;
    if (l > mn) l = (int32_t)mn;
    const size_t big = (size_t)(n > P ? n : P) * (size_t)l;
    float *Y = sb_malloc(sizeof(float) * big), *T = sb_malloc(sizeof(float) * big);
    float *Z = sb_malloc(sizeof(float) * (size_t)P * (size_t)l), *B = sb_malloc(sizeof(float) * (size_t)P * (size_t)l);
    float *S = sb_malloc(sizeof(float) * (size_t)l * (size_t)l), *U = sb_malloc(sizeof(float) * (size_t)l * (size_t)l);
    float *lam = sb_malloc(sizeof(float) * (size_t)l), *C = sb_malloc(sizeof(float) * (size_t)l * (size_t)P);
    sb_status st = Y && T && Z && B && S && U && lam && C ? SB_OK : sb_fail(SB_ERR_OUT_OF_MEMORY, "randomized svd: out of memory");
    /* a stays on the fit's device for every product with it; Y = a Omega is the core's projection */
    lin_dev dv;
    lin_mat ma = {0}, mq = {0}, mz = {0};
    int open = 0;
    if (st == SB_OK && (st = sb_lin_dev_open(p, &dv)) == SB_OK) open = 1;
    if (st == SB_OK) st = sb_lin_mat_set(&dv, &ma, a, n * P);
    if (st == SB_OK) sb_lin_mat_prepare(&dv, &ma, n, P); /* on the host: a's statistics and integers once */
    if (st == SB_OK) st = sb_linalg_random_matrix(p->device, SB_LINALG_NORMAL, p->seed, P, l, Z, l);
    if (st == SB_OK) st = sb_lin_mat_set(&dv, &mz, Z, (int64_t)P * l);
    if (st == SB_OK) st = sb_lin_dev_gemm(&dv, 0, 0, n, l, P, &ma, P, &mz, l, Y);
    if (st == SB_OK) st = orth(p, n, l, Y, T);
    for (int32_t it = 0; it < p->n_iter && st == SB_OK; it++) {
        if ((st = sb_lin_mat_set(&dv, &mq, Y, n * l)) != SB_OK) break;
        if ((st = sb_lin_dev_gemm(&dv, 1, 0, P, l, n, &ma, P, &mq, l, Z)) != SB_OK) break; /* Z = a^T Q */
        if ((st = orth(p, P, l, Z, T)) != SB_OK) break;
        if ((st = sb_lin_mat_set(&dv, &mz, Z, (int64_t)P * l)) != SB_OK) break;
        if ((st = sb_lin_dev_gemm(&dv, 0, 0, n, l, P, &ma, P, &mz, l, Y)) != SB_OK) break; /* Y = a Z */
        st = orth(p, n, l, Y, T);
    }
    if (st == SB_OK) st = sb_lin_record(card, "rsvd.basis", Y, (uint64_t)n * (uint64_t)l);
    if (st == SB_OK) st = sb_lin_mat_set(&dv, &mq, Y, n * l);
    if (st == SB_OK) st = sb_lin_dev_gemm(&dv, 1, 0, l, P, n, &mq, l, &ma, P, B); /* B = Q^T a */
    if (open) {
        sb_lin_mat_release(&dv, &ma);
        sb_lin_mat_release(&dv, &mq);
        sb_lin_mat_release(&dv, &mz);
        sb_lin_dev_close(&dv);
    }
    if (st == SB_OK) st = sb_lin_gemm(p, 0, 1, l, l, P, B, P, B, P, S, l); /* B B^T */
    if (st == SB_OK) st = lin_eigh_rule(p, l, S, lam, U, NULL);
    if (st == SB_OK) st = sb_lin_gemm(p, 1, 0, l, P, l, U, l, B, P, C, P); /* U^T B: rows are sigma_k v_k */
    if (st == SB_OK) {
        for (int32_t r = 0; r < k; r++) {
            const float s = lam[r] > 0.0f ? sqrtf(lam[r]) : 0.0f;
            sv[r] = s;
            float *row = C + (int64_t)r * P, best = 0.0f;
            int32_t at = 0;
            for (int32_t j = 0; j < P; j++) {
                const float v = s > 0.0f ? row[j] / s : 0.0f;
                comp[(int64_t)r * P + j] = v;
                if (fabsf(v) > best) best = fabsf(v), at = j;
            }
            if (comp[(int64_t)r * P + at] < 0.0f)
                for (int32_t j = 0; j < P; j++) comp[(int64_t)r * P + j] = -comp[(int64_t)r * P + j];
        }
        st = sb_lin_record(card, "rsvd.singular_values", sv, (uint64_t)k);
    }
    sb_free(Y);
    sb_free(T);
    sb_free(Z);
    sb_free(B);
    sb_free(S);
    sb_free(U);
    sb_free(lam);
    sb_free(C);
    return st;
}

/* The exact sum of squares of the n x P values (every square exact), rounded once. */
static float sum_squares(const float *x, int64_t count) { return sb_lin_dot_exact(x, 1, x, 1, count); }

/* Randomized PCA (centered) and TruncatedSVD (not centered). PCA: the
 * variances are sigma^2 / (n - 1) and the ratios divide by the total variance,
 * the exact sum of the centered squares over n - 1 (scikit-learn's
 * np.var(X, ddof=1).sum()). TruncatedSVD: explained_variance_ is the variance
 * (ddof 0) of each projected column, its ratio over the data's total variance,
 * both from exact sums. */
/* A truncated SVD's explained variances, as scikit-learn defines them: each
 * projected column's variance (its exact sum of squared deviations over n,
 * d = x - mean rounded, d^2 exact, rounded once) and its ratio to the data's
 * total variance (sum_j of each column's exact sum of squared deviations over
 * n). Reads lin->coef's first k rows; writes lin->ev and lin->evr. */
static sb_status tsvd_variances(const sb_table *t, const lin_params *p, sb_linear *lin, int32_t k) {
    const int64_t n = t->nrows;
    const int32_t P = t->ncols;
    sb_status st = SB_OK;
    float *proj = sb_malloc(sizeof(float) * (size_t)n * (size_t)k), *mean = sb_malloc(sizeof(float) * (size_t)P);
    float *cm = sb_malloc(sizeof(float) * (size_t)k);
    if (!proj || !mean || !cm) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "truncated_svd: out of memory");
    if (st == SB_OK) st = sb_lin_gemm(p, 0, 1, n, k, P, t->x, P, lin->coef, P, proj, k);
    /* total variance of the data: sum_j (sum_i x_ij^2 - n mean_j^2) / n, each column's sums exact */
    sb_sacc tot;
    sb_sacc_init(&tot);
    float *sq = st == SB_OK ? sb_malloc(sizeof(float) * (size_t)P) : NULL;
    if (st == SB_OK && !sq) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "truncated_svd: out of memory");
    if (st == SB_OK) st = sb_lin_col_means(t->x, n, P, NULL, mean);
    if (st == SB_OK) st = sb_lin_col_sqdev(t->x, n, P, mean, sq);
    for (int32_t j = 0; j < P && st == SB_OK; j++) sb_sacc_add(&tot, sq[j] / (float)n);
    sb_free(sq);
    const float total = sb_sacc_round_f32(&tot);
    /* each projected column's exact sum of squared deviations (d = x - mean rounded, d^2 exact), rounded once */
    float *pv = st == SB_OK ? sb_malloc(sizeof(float) * (size_t)k) : NULL;
    if (st == SB_OK && !pv) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "truncated_svd: out of memory");
    if (st == SB_OK) st = sb_lin_col_means(proj, n, k, NULL, cm);
    if (st == SB_OK) st = sb_lin_col_sqdev(proj, n, k, cm, pv);
    for (int32_t r = 0; r < k && st == SB_OK; r++) {
        lin->ev[r] = pv[r] / (float)n;
        lin->evr[r] = total > 0.0f ? lin->ev[r] / total : 0.0f;
    }
    sb_free(pv);
    sb_free(proj);
    sb_free(mean);
    sb_free(cm);
    return st;
}

static sb_status fit_randomized(const sb_table *t, const lin_params *p, const lin_prep *a, sb_model *m, sb_card *card) {
    sb_linear *lin = m->linear;
    const int64_t n = t->nrows;
    const int32_t P = t->ncols, k = p->n_components;
    sb_status st = rsvd(p, a->xc_view, n, P, k, lin->coef, lin->sv, card);
    if (st != SB_OK) return st;
    lin->nout = k;
    m->num_class = k;
    lin->rank = k;
    lin->n_iter = p->n_iter;
    lin->converged = 1;
    if (p->kind == SB_LIN_PCA) {
        const float nm1 = (float)(n - 1), total = sum_squares(a->xc_view, n * P) / nm1;
        for (int32_t r = 0; r < k; r++) {
            lin->ev[r] = lin->sv[r] * lin->sv[r] / nm1;
            lin->evr[r] = total > 0.0f ? lin->ev[r] / total : 0.0f;
        }
        memcpy(lin->mean, a->xm, sizeof(float) * (size_t)P);
        lin->whiten = p->whiten;
        const int64_t mn = n < P ? n : P;
        sb_sacc acc;
        sb_sacc_init(&acc);
        sb_sacc_add(&acc, total);
        for (int32_t r = 0; r < k; r++) sb_sacc_add(&acc, -lin->ev[r]);
        lin->noise_variance = k < mn ? sb_sacc_round_f32(&acc) / (float)(mn - k) : 0.0f;
    } else {
        st = tsvd_variances(t, p, lin, k);
    }
    if (st == SB_OK) st = sb_lin_record(card, "rsvd.components", lin->coef, (uint64_t)k * (uint64_t)P);
    if (st == SB_OK) st = sb_lin_record(card, "rsvd.explained_variance", lin->ev, (uint64_t)k);
    return st;
}
