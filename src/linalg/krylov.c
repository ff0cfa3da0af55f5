/*
 * krylov.c: the largest eigenpairs of a symmetric matrix in double precision,
 * every bit a function of the input alone (docs/cluster.md, "SpectralClustering").
 *
 * sb_krylov_top: block Lanczos with full reorthogonalization (G. Golub and
 * R. Underwood, "The block Lanczos method for computing eigenvalues", in
 * Mathematical Software III, 1977; Y. Saad, "Numerical Methods for Large
 * Eigenvalue Problems", 2nd ed., SIAM 2011, sections 6.6 and 4.3 on
 * Rayleigh-Ritz). The basis Q grows a block of b columns at a time:
 *   W = M Q_j; C = Q^T W (which is also the column block j of H = Q^T M Q,
 *   mirrored to its row block; the diagonal block symmetrized as (c + c^T)/2);
 *   W -= Q C twice (classical Gram-Schmidt applied twice, CGS2); then the
 *   columns of W one by one against the ones already taken (twice), each
 *   normalized; a column whose norm fell to 1e-8 of its norm before the
 *   projections (the Krylov space nearly invariant: a converged eigenvector, a
 *   disconnected graph) is replaced by a Philox vector keyed by (seed, its
 *   column of Q, attempt), projected the same way.
 * At checks (the block count 2, then where the last two checks' rate of
 * decrease of the residual reaches tol, at least one block and at most half
 * the count further; always when the basis is full), the Ritz pairs:
 * H's `want` largest eigenpairs (theta, y) by sb_eigh_top_f64, u = Q y, and the
 * residual ||M u - theta u|| = ||(M Q) y - theta u|| from the stored M Q. The
 * solver stops when every residual is <= tol, or exactly when the basis spans
 * all n dimensions. A basis of kcap columns without convergence is
 * SB_ERR_LIMIT, named.
 *
 * sb_eigh_top_f64: a dense symmetric matrix's largest eigenpairs: Householder
 * tridiagonalization, the implicit symmetric QR step with Wilkinson's shift
 * (G. Golub and C. Van Loan, "Matrix Computations", 4th ed., algorithms 8.3.1
 * and 8.3.2), its Givens rotations recorded and applied in reverse to the unit
 * vectors of the wanted eigenvalues, then the reflectors.
 *
 * Every sum runs in one stated order: a dot product over rows i ascending,
 * a row of a product over its terms ascending, in double. The worker pool
 * splits only independent outputs (rows of a product, columns of Q^T W) in
 * fixed chunks, so the thread count cannot reach a bit. Only + - * / and sqrt.
 */
#include "linalg.h"
#include "../core/rng.h"
#include <math.h>
#include <string.h>

#define KR_PURPOSE 0x4B524C31u /* "KRL1": replacement and start columns */
#define KR_ROWS 32             /* rows a task of a product */
#define KR_CW 32               /* accumulators of one row at a time */
#define KR_POOL_WORK 262144    /* products smaller than this run on the calling thread (a schedule) */

/* ---- products in a fixed order ---- */

typedef struct kr_prod {
    int64_t n, ka, kb, lda, ldb, ldc;
    const double *a, *b;
    double *c;
    int mode; /* 0: c := a^T b (ka x kb); 1: c := a b (n x kb); 2: c -= a b */
} kr_prod;

/* Fixed-width register blocks: each output is one sum in one order (terms
 * ascending); the widths only decide which outputs share a pass. */

/* t[q] = sum over k ascending of a[k] b[k][q] (a of type T). */
#define KR_ROW_FN(NAME, T)                                                                                   \
    static void NAME(const T *restrict a, int64_t ka, const double *restrict b, int64_t ldb, int64_t kb,    \
                     double *restrict t) {                                                                   \
        int64_t q = 0;                                                                                       \
        for (; q + 8 <= kb; q += 8) {                                                                        \
            double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0, s6 = 0.0, s7 = 0.0;         \
            for (int64_t k = 0; k < ka; k++) {                                                               \
                const double x = (double)a[k];                                                               \
                const double *restrict r = b + k * ldb + q;                                                  \
                s0 += x * r[0], s1 += x * r[1], s2 += x * r[2], s3 += x * r[3];                              \
                s4 += x * r[4], s5 += x * r[5], s6 += x * r[6], s7 += x * r[7];                              \
            }                                                                                                \
            t[q] = s0, t[q + 1] = s1, t[q + 2] = s2, t[q + 3] = s3;                                          \
            t[q + 4] = s4, t[q + 5] = s5, t[q + 6] = s6, t[q + 7] = s7;                                      \
        }                                                                                                    \
        for (; q + 4 <= kb; q += 4) {                                                                        \
            double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;                                                   \
            for (int64_t k = 0; k < ka; k++) {                                                               \
                const double x = (double)a[k];                                                               \
                const double *restrict r = b + k * ldb + q;                                                  \
                s0 += x * r[0], s1 += x * r[1], s2 += x * r[2], s3 += x * r[3];                              \
            }                                                                                                \
            t[q] = s0, t[q + 1] = s1, t[q + 2] = s2, t[q + 3] = s3;                                          \
        }                                                                                                    \
        for (; q < kb; q++) {                                                                                \
            double s0 = 0.0;                                                                                 \
            for (int64_t k = 0; k < ka; k++) s0 += (double)a[k] * b[k * ldb + q];                            \
            t[q] = s0;                                                                                       \
        }                                                                                                    \
    }
KR_ROW_FN(kr_row_d, double)
KR_ROW_FN(kr_row_f, float)

/* c[k][q] = sum over i ascending of a[i][k] b[i][q], for the task's k (two). */
static void kr_tn_task(void *ctx, int64_t t) {
    const kr_prod *p = ctx;
    const int64_t k = 2 * t, n = p->n, lda = p->lda, ldb = p->ldb;
    const double *restrict a = p->a + k;
    double *restrict c0 = p->c + k * p->ldc, *restrict c1 = c0 + p->ldc;
    if (k + 1 < p->ka) {
        int64_t q = 0;
        for (; q + 4 <= p->kb; q += 4) {
            double u0 = 0.0, u1 = 0.0, u2 = 0.0, u3 = 0.0, v0 = 0.0, v1 = 0.0, v2 = 0.0, v3 = 0.0;
            for (int64_t i = 0; i < n; i++) {
                const double x = a[i * lda], y = a[i * lda + 1];
                const double *restrict r = p->b + i * ldb + q;
                u0 += x * r[0], u1 += x * r[1], u2 += x * r[2], u3 += x * r[3];
                v0 += y * r[0], v1 += y * r[1], v2 += y * r[2], v3 += y * r[3];
            }
            c0[q] = u0, c0[q + 1] = u1, c0[q + 2] = u2, c0[q + 3] = u3;
            c1[q] = v0, c1[q + 1] = v1, c1[q + 2] = v2, c1[q + 3] = v3;
        }
        for (; q < p->kb; q++) {
            double u0 = 0.0, v0 = 0.0;
            for (int64_t i = 0; i < n; i++) {
                const double r = p->b[i * ldb + q];
                u0 += a[i * lda] * r, v0 += a[i * lda + 1] * r;
            }
            c0[q] = u0, c1[q] = v0;
        }
    } else {
        for (int64_t q = 0; q < p->kb; q++) {
            double u0 = 0.0;
            for (int64_t i = 0; i < n; i++) u0 += a[i * lda] * p->b[i * ldb + q];
            c0[q] = u0;
        }
    }
}

/* Row i of a b: t[q] = sum over k ascending of a[i][k] b[k][q]; then c := t or
 * c := c - t. */
static void kr_nn_task(void *ctx, int64_t t) {
    const kr_prod *p = ctx;
    const int64_t i0 = t * KR_ROWS, i1 = i0 + KR_ROWS < p->n ? i0 + KR_ROWS : p->n;
    double acc[KR_CW];
    for (int64_t i = i0; i < i1; i++) {
        double *restrict ci = p->c + i * p->ldc;
        for (int64_t q0 = 0; q0 < p->kb; q0 += KR_CW) {
            const int64_t w = p->kb - q0 < KR_CW ? p->kb - q0 : KR_CW;
            kr_row_d(p->a + i * p->lda, p->ka, p->b + q0, p->ldb, w, acc);
            if (p->mode == 1)
                for (int64_t q = 0; q < w; q++) ci[q0 + q] = acc[q];
            else
                for (int64_t q = 0; q < w; q++) ci[q0 + q] -= acc[q];
        }
    }
}

/* c (ka x kb, ldc) := a^T b, a n x ka (lda), b n x kb (ldb). */
static void kr_tn(int64_t n, const double *a, int64_t lda, int64_t ka, const double *b, int64_t ldb, int64_t kb,
                  double *c, int64_t ldc) {
    kr_prod p = {n, ka, kb, lda, ldb, ldc, a, b, c, 0};
    if (ka <= 0 || kb <= 0) return;
    if (n * ka * kb >= KR_POOL_WORK) sb_parallel_for(sb_chunk_count(ka, 2), kr_tn_task, &p);
    else
        for (int64_t t = 0; t < sb_chunk_count(ka, 2); t++) kr_tn_task(&p, t);
}

/* c (n x kb, ldc) := a b (mode 1) or c -= a b (mode 2), a n x ka, b ka x kb. */
static void kr_nn(int mode, int64_t n, const double *a, int64_t lda, int64_t ka, const double *b, int64_t ldb,
                  int64_t kb, double *c, int64_t ldc) {
    kr_prod p = {n, ka, kb, lda, ldb, ldc, a, b, c, mode};
    if (kb <= 0) return;
    if (n * (ka > 0 ? ka : 1) * kb >= KR_POOL_WORK) sb_parallel_for(sb_chunk_count(n, KR_ROWS), kr_nn_task, &p);
    else
        for (int64_t t = 0; t < sb_chunk_count(n, KR_ROWS); t++) kr_nn_task(&p, t);
}

/* The matrix M: dense float rows, or the same rows' nonzeros (column
 * ascending). Adding a zero term leaves a double sum unchanged (a sum that
 * starts at +0 stays +0 when a -0 is added), so both give the same bits. */
typedef struct kr_mat {
    int64_t n;
    const float *m;
    int64_t *rp;
    int32_t *ci;
    float *cv;
} kr_mat;

typedef struct kr_mv {
    const kr_mat *m;
    const double *x; /* n x b, ldx */
    double *y;       /* n x b, ldy */
    int64_t b, ldx, ldy;
} kr_mv;

/* Rows of y = M x: y[i][q] = sum over j ascending of m_ij x[j][q]. */
static void kr_mv_task(void *ctx, int64_t t) {
    const kr_mv *p = ctx;
    const int64_t n = p->m->n, i0 = t * KR_ROWS, i1 = i0 + KR_ROWS < n ? i0 + KR_ROWS : n;
    double acc[KR_CW];
    for (int64_t i = i0; i < i1; i++) {
        for (int64_t q0 = 0; q0 < p->b; q0 += KR_CW) {
            const int64_t w = p->b - q0 < KR_CW ? p->b - q0 : KR_CW;
            for (int64_t q = 0; q < w; q++) acc[q] = 0.0;
            if (p->m->rp) {
                for (int64_t e = p->m->rp[i]; e < p->m->rp[i + 1]; e++) {
                    const double mij = (double)p->m->cv[e];
                    const double *restrict xj = p->x + (int64_t)p->m->ci[e] * p->ldx + q0;
                    for (int64_t q = 0; q < w; q++) acc[q] += mij * xj[q];
                }
            } else {
                kr_row_f(p->m->m + i * n, n, p->x + q0, p->ldx, w, acc);
            }
            for (int64_t q = 0; q < w; q++) p->y[i * p->ldy + q0 + q] = acc[q];
        }
    }
}

static void kr_matvec(const kr_mat *m, const double *x, int64_t ldx, int64_t b, double *y, int64_t ldy) {
    kr_mv p = {m, x, y, b, ldx, ldy};
    sb_parallel_for(sb_chunk_count(m->n, KR_ROWS), kr_mv_task, &p);
}

/* ||column q of x||^2, rows ascending. */
static double kr_sq(int64_t n, const double *x, int64_t ldx) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += x[i * ldx] * x[i * ldx];
    return s;
}

/* ---- the dense symmetric problem ---- */

typedef struct kr_rot {
    int64_t k;
    double c, s;
} kr_rot;

typedef struct kr_tri {
    double *a; /* k x k work, row-major */
    const double *v;
    double *p;
    int64_t k, lo; /* the trailing block is rows and columns lo..k-1 */
    double tau;
    const double *w;
} kr_tri;

/* p_i = tau * sum of a_ij v_j for the task's rows: four lanes j mod 4 over
 * the full groups of four (the rest into lane 0), j ascending in each, then
 * (l0 + l1) + (l2 + l3). */
static void kr_tri_p_task(void *ctx, int64_t t) {
    const kr_tri *s = ctx;
    const int64_t m = s->k - s->lo, r0 = t * KR_ROWS, r1 = r0 + KR_ROWS < m ? r0 + KR_ROWS : m;
    for (int64_t r = r0; r < r1; r++) {
        const double *restrict ai = s->a + (s->lo + r) * s->k + s->lo;
        double l0 = 0.0, l1 = 0.0, l2 = 0.0, l3 = 0.0;
        int64_t j = 0;
        for (; j + 4 <= m; j += 4)
            l0 += ai[j] * s->v[j], l1 += ai[j + 1] * s->v[j + 1], l2 += ai[j + 2] * s->v[j + 2],
                l3 += ai[j + 3] * s->v[j + 3];
        for (; j < m; j++) l0 += ai[j] * s->v[j];
        s->p[r] = s->tau * ((l0 + l1) + (l2 + l3));
    }
}

/* a_ij := a_ij - (v_i w_j + w_i v_j) for the task's rows: the same value for
 * (i, j) and (j, i), so the matrix stays exactly symmetric. */
static void kr_tri_up_task(void *ctx, int64_t t) {
    const kr_tri *s = ctx;
    const int64_t m = s->k - s->lo, r0 = t * KR_ROWS, r1 = r0 + KR_ROWS < m ? r0 + KR_ROWS : m;
    for (int64_t r = r0; r < r1; r++) {
        double *restrict ai = s->a + (s->lo + r) * s->k + s->lo;
        const double vi = s->v[r], wi = s->w[r];
        for (int64_t j = 0; j < m; j++) ai[j] = ai[j] - (vi * s->w[j] + wi * s->v[j]);
    }
}

static double kr_sign(double x) { return x < 0.0 ? -1.0 : 1.0; }

sb_status sb_eigh_top_f64(int64_t k, const double *h, int64_t ldh, int64_t want, double *w, double *y) {
    if (k < 1 || want < 1 || want > k) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_eigh_top_f64: want=%lld of k=%lld",
                                                      (long long)want, (long long)k);
    sb_status st = SB_OK;
    double *a = sb_malloc(sizeof(double) * (size_t)(k * k)), *vs = sb_malloc(sizeof(double) * (size_t)(k * k));
    double *tau = sb_calloc((size_t)k, sizeof(double)), *d = sb_malloc(sizeof(double) * (size_t)k);
    double *e = sb_calloc((size_t)k, sizeof(double)), *p = sb_malloc(sizeof(double) * (size_t)k);
    double *wv = sb_malloc(sizeof(double) * (size_t)k), *z = sb_malloc(sizeof(double) * (size_t)k);
    int64_t *ord = sb_malloc(sizeof(int64_t) * (size_t)k);
    int64_t nrot = 0, caprot = 4 * k + 64;
    kr_rot *rot = sb_malloc(sizeof(kr_rot) * (size_t)caprot);
    if (!a || !vs || !tau || !d || !e || !p || !wv || !z || !ord || !rot) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "eigensolver: out of memory for a %lld x %lld problem", (long long)k,
                     (long long)k);
        goto done;
    }
    for (int64_t i = 0; i < k; i++) memcpy(a + i * k, h + i * ldh, sizeof(double) * (size_t)k);
    /* Householder: step j takes row j's entries right of the diagonal (column j
     * below it, by symmetry) to (alpha, 0, ..., 0); reflector j is
     * I - tau_j v v^T on indices j+1..k-1, v kept in vs's row j. */
    for (int64_t j = 0; j + 2 < k; j++) {
        const int64_t lo = j + 1, m = k - lo;
        const double *x = a + j * k + lo;
        double sig = 0.0;
        for (int64_t r = 1; r < m; r++) sig += x[r] * x[r];
        double *v = vs + j * k;
        if (sig == 0.0) {
            tau[j] = 0.0, e[j] = x[0];
            continue;
        }
        const double xn = sqrt(x[0] * x[0] + sig), alpha = x[0] >= 0.0 ? -xn : xn;
        v[0] = x[0] - alpha;
        for (int64_t r = 1; r < m; r++) v[r] = x[r];
        double vv = 0.0;
        for (int64_t r = 0; r < m; r++) vv += v[r] * v[r];
        tau[j] = 2.0 / vv;
        e[j] = alpha;
        kr_tri s = {a, v, p, k, lo, tau[j], wv};
        if (m >= 128) sb_parallel_for(sb_chunk_count(m, KR_ROWS), kr_tri_p_task, &s);
        else
            for (int64_t t = 0; t < sb_chunk_count(m, KR_ROWS); t++) kr_tri_p_task(&s, t);
        double pv = 0.0;
        for (int64_t r = 0; r < m; r++) pv += p[r] * v[r];
        const double kk = 0.5 * tau[j] * pv;
        for (int64_t r = 0; r < m; r++) wv[r] = p[r] - kk * v[r];
        if (m >= 128) sb_parallel_for(sb_chunk_count(m, KR_ROWS), kr_tri_up_task, &s);
        else
            for (int64_t t = 0; t < sb_chunk_count(m, KR_ROWS); t++) kr_tri_up_task(&s, t);
    }
    for (int64_t i = 0; i < k; i++) d[i] = a[i * k + i];
    if (k >= 2) e[k - 2] = a[(k - 2) * k + k - 1];
    e[k - 1] = 0.0;
    /* the implicit QR steps with Wilkinson's shift on the unreduced trailing
     * block; e_i is set to 0 when |e_i| <= eps (|d_i| + |d_i+1|) or <= eps ||T||_1 */
    double tn = 0.0;
    for (int64_t i = 0; i < k; i++) {
        const double r = fabs(d[i]) + fabs(e[i]) + (i > 0 ? fabs(e[i - 1]) : 0.0);
        if (r > tn) tn = r;
    }
    const double eps = 0x1p-52;
    int64_t q = k - 1, steps = 0;
    while (q > 0) {
        for (int64_t i = 0; i < q; i++)
            if (fabs(e[i]) <= eps * (fabs(d[i]) + fabs(d[i + 1])) || fabs(e[i]) <= eps * tn) e[i] = 0.0;
        while (q > 0 && e[q - 1] == 0.0) q--;
        if (q == 0) break;
        int64_t lo = q - 1;
        while (lo > 0 && e[lo - 1] != 0.0) lo--;
        if (++steps > 60 * k) {
            st = sb_fail(SB_ERR_INTERNAL, "eigensolver: the QR iteration did not converge in %lld steps (k = %lld)",
                         (long long)steps, (long long)k);
            goto done;
        }
        const double dd = 0.5 * (d[q - 1] - d[q]), bb = e[q - 1];
        const double mu = d[q] - bb * bb / (dd + kr_sign(dd) * sqrt(dd * dd + bb * bb));
        double xx = d[lo] - mu, zz = e[lo];
        for (int64_t i = lo; i < q; i++) {
            double c, s;
            if (zz == 0.0) {
                c = 1.0, s = 0.0;
            } else if (fabs(zz) > fabs(xx)) {
                const double t = -xx / zz;
                s = 1.0 / sqrt(1.0 + t * t), c = s * t;
            } else {
                const double t = -zz / xx;
                c = 1.0 / sqrt(1.0 + t * t), s = c * t;
            }
            /* T := G^T T G with G = [[c, s], [-s, c]] on rows and columns i, i+1 */
            if (i > lo) e[i - 1] = c * xx - s * zz;
            const double a0 = d[i], b0 = e[i], d1 = d[i + 1];
            d[i] = c * c * a0 - 2.0 * c * s * b0 + s * s * d1;
            e[i] = c * s * a0 + (c * c - s * s) * b0 - c * s * d1;
            d[i + 1] = s * s * a0 + 2.0 * c * s * b0 + c * c * d1;
            if (i + 1 < q) {
                zz = -s * e[i + 1];
                e[i + 1] = c * e[i + 1];
            }
            xx = e[i];
            if (nrot == caprot) {
                caprot *= 2;
                kr_rot *grown = sb_realloc(rot, sizeof(kr_rot) * (size_t)caprot);
                if (!grown) {
                    st = sb_fail(SB_ERR_OUT_OF_MEMORY, "eigensolver: out of memory for the rotations");
                    goto done;
                }
                rot = grown;
            }
            rot[nrot].k = i, rot[nrot].c = c, rot[nrot].s = s, nrot++;
        }
    }
    /* the order: value descending, equal values by position (the lower first) */
    for (int64_t i = 0; i < k; i++) ord[i] = i;
    for (int64_t i = 1; i < k; i++) {
        const int64_t o = ord[i];
        int64_t j = i;
        while (j > 0 && d[ord[j - 1]] < d[o]) ord[j] = ord[j - 1], j--;
        ord[j] = o;
    }
    for (int64_t c = 0; c < want; c++) {
        const int64_t t = ord[c];
        w[c] = d[t];
        memset(z, 0, sizeof(double) * (size_t)k);
        z[t] = 1.0;
        for (int64_t r = nrot - 1; r >= 0; r--) {
            const int64_t i = rot[r].k;
            const double zi = z[i], zj = z[i + 1];
            z[i] = rot[r].c * zi + rot[r].s * zj;
            z[i + 1] = rot[r].c * zj - rot[r].s * zi;
        }
        for (int64_t j = k - 3; j >= 0; j--) {
            if (tau[j] == 0.0) continue;
            const double *v = vs + j * k;
            double s = 0.0;
            for (int64_t r = 0; r < k - j - 1; r++) s += v[r] * z[j + 1 + r];
            s *= tau[j];
            for (int64_t r = 0; r < k - j - 1; r++) z[j + 1 + r] -= s * v[r];
        }
        for (int64_t i = 0; i < k; i++) y[i * want + c] = z[i];
    }
done:
    sb_free(a), sb_free(vs), sb_free(tau), sb_free(d), sb_free(e), sb_free(p), sb_free(wv), sb_free(z), sb_free(ord);
    sb_free(rot);
    return st;
}

/* ---- block Lanczos ---- */

/* Column q of x (n rows, ldx): uniform in [-1, 1) from (seed, slot, attempt). */
static void kr_random(int64_t n, uint64_t seed, int64_t slot, uint32_t attempt, double *x, int64_t ldx) {
    for (int64_t i = 0; i < n; i++) {
        sb_u32 r[4];
        sb_rng_words(seed, KR_PURPOSE, ((uint64_t)slot << 32) | (uint64_t)i, attempt, r);
        x[i * ldx] = (double)(r[0] >> 8) * 0x1p-23 - 1.0;
    }
}

/* Projects column c of x (n x ?, ldx) off q's first kq columns (ldq) twice. */
static void kr_project(int64_t n, const double *q, int64_t ldq, int64_t kq, double *x, int64_t ldx, double *coef) {
    for (int pass = 0; pass < 2 && kq > 0; pass++) {
        kr_tn(n, q, ldq, kq, x, ldx, 1, coef, 1);
        kr_nn(2, n, q, ldq, kq, coef, 1, 1, x, ldx);
    }
}

/* Appends the columns of x (n x bx, ldx; already projected off q's first
 * kq columns) to q one by one; returns how many were appended (<= room).
 * ref: each column's squared norm before its projections. */
static int64_t kr_append(int64_t n, double *q, int64_t ldq, int64_t kq, double *x, int64_t ldx, int64_t bx,
                         const double *ref, int64_t room, uint64_t seed, double *coef) {
    int64_t took = 0;
    for (int64_t c = 0; c < bx && took < room; c++) {
        double *col = x + c;
        kr_project(n, q + kq, ldq, took, col, ldx, coef);
        double s = kr_sq(n, col, ldx);
        for (uint32_t attempt = 0; !(s > 1e-16 * ref[c] && s > 0.0); attempt++) {
            if (attempt == 3) break; /* the space is spanned: n columns */
            kr_random(n, seed, kq + took, attempt, col, ldx);
            const double r0 = kr_sq(n, col, ldx);
            kr_project(n, q, ldq, kq + took, col, ldx, coef);
            s = kr_sq(n, col, ldx);
            if (!(s > 1e-4 * r0)) s = 0.0;
        }
        if (!(s > 0.0)) continue;
        const double nr = sqrt(s);
        for (int64_t i = 0; i < n; i++) q[i * ldq + kq + took] = col[i * ldx] / nr;
        took++;
    }
    return took;
}

static int kr_free_all(void **p, int np) {
    for (int i = 0; i < np; i++) sb_free(p[i]);
    return 0;
}

sb_status sb_krylov_top(int64_t n, const float *m, int64_t want, int64_t block, double tol, int64_t kcap,
                        uint64_t seed, double *w, double *u, sb_krylov_info *info) {
    if (info) memset(info, 0, sizeof *info);
    if (n < 1 || want < 1 || want > n || block < want)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_krylov_top: n=%lld, want=%lld, block=%lld", (long long)n,
                       (long long)want, (long long)block);
    if (block > n) block = n;
    if (kcap > n || kcap < 1) kcap = n;
    if (kcap < block) kcap = block;
    kr_mat mat = {n, m, NULL, NULL, NULL};
    int64_t nnz = 0;
    for (int64_t i = 0; i < n * n; i++) nnz += m[i] != 0.0f;
    sb_status st = SB_OK;
    double *q = sb_malloc(sizeof(double) * (size_t)(n * kcap)), *mq = sb_malloc(sizeof(double) * (size_t)(n * kcap));
    double *hh = sb_calloc((size_t)(kcap * kcap), sizeof(double)), *x = sb_malloc(sizeof(double) * (size_t)(n * block));
    double *cc = sb_malloc(sizeof(double) * (size_t)(kcap * block)), *ref = sb_malloc(sizeof(double) * (size_t)block);
    double *coef = sb_malloc(sizeof(double) * (size_t)kcap), *th = sb_malloc(sizeof(double) * (size_t)want);
    double *yy = sb_malloc(sizeof(double) * (size_t)(kcap * want)), *zz = sb_malloc(sizeof(double) * (size_t)(n * want));
    void *all[14] = {q, mq, hh, x, cc, ref, coef, th, yy, zz, NULL, NULL, NULL, NULL};
    if (!q || !mq || !hh || !x || !cc || !ref || !coef || !th || !yy || !zz) {
        kr_free_all(all, 10);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "eigensolver: out of memory for %lld rows and a basis of %lld", (long long)n,
                       (long long)kcap);
    }
    if (nnz <= n * n / 8) {
        mat.rp = sb_malloc(sizeof(int64_t) * (size_t)(n + 1));
        mat.ci = sb_malloc(sizeof(int32_t) * (size_t)(nnz > 0 ? nnz : 1));
        mat.cv = sb_malloc(sizeof(float) * (size_t)(nnz > 0 ? nnz : 1));
        all[10] = mat.rp, all[11] = mat.ci, all[12] = mat.cv;
        if (!mat.rp || !mat.ci || !mat.cv) {
            kr_free_all(all, 13);
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "eigensolver: out of memory for %lld nonzeros", (long long)nnz);
        }
        int64_t e = 0;
        for (int64_t i = 0; i < n; i++) {
            mat.rp[i] = e;
            for (int64_t j = 0; j < n; j++)
                if (m[i * n + j] != 0.0f) mat.ci[e] = (int32_t)j, mat.cv[e] = m[i * n + j], e++;
        }
        mat.rp[n] = e;
    }
    /* the start block: Philox columns, orthonormalized */
    for (int64_t c = 0; c < block; c++) {
        kr_random(n, seed, c, 0xFFFFFFFFu, x + c, block);
        ref[c] = kr_sq(n, x + c, block);
    }
    int64_t kk = kr_append(n, q, kcap, 0, x, block, block, ref, block, seed, coef);
    int64_t s0 = 0, blocks = 0, next = 2, checks = 0;
    double worst = 0.0, prev_worst = 0.0;
    int64_t prev_blocks = 0;
    for (;;) {
        const int64_t bj = kk - s0;
        /* W = M Q_j, kept as M Q's columns s0..kk-1 */
        kr_matvec(&mat, q + s0, kcap, bj, x, block);
        for (int64_t i = 0; i < n; i++) memcpy(mq + i * kcap + s0, x + i * block, sizeof(double) * (size_t)bj);
        for (int64_t c = 0; c < bj; c++) ref[c] = kr_sq(n, x + c, block);
        /* C = Q^T W: H's column block j, mirrored; the diagonal block symmetrized */
        kr_tn(n, q, kcap, kk, x, block, bj, cc, block);
        for (int64_t r = 0; r < s0; r++)
            for (int64_t c = 0; c < bj; c++) hh[r * kcap + s0 + c] = hh[(s0 + c) * kcap + r] = cc[r * block + c];
        for (int64_t r = 0; r < bj; r++)
            for (int64_t c = 0; c < bj; c++)
                hh[(s0 + r) * kcap + s0 + c] = 0.5 * (cc[(s0 + r) * block + c] + cc[(s0 + c) * block + r]);
        blocks++;
        const int full = kk == n;
        if (full || blocks >= next || kk + 1 > kcap) {
            checks++;
            if ((st = sb_eigh_top_f64(kk, hh, kcap, want, th, yy)) != SB_OK) break;
            kr_nn(1, n, q, kcap, kk, yy, want, want, u, want);
            kr_nn(1, n, mq, kcap, kk, yy, want, want, zz, want);
            worst = 0.0;
            for (int64_t c = 0; c < want; c++) {
                double s = 0.0;
                for (int64_t i = 0; i < n; i++) {
                    const double r = zz[i * want + c] - th[c] * u[i * want + c];
                    s += r * r;
                }
                if (sqrt(s) > worst) worst = sqrt(s);
            }
            if (full || worst <= tol) break;
            if (kk >= kcap) {
                st = sb_fail(SB_ERR_LIMIT, "the Krylov eigensolver did not converge in a basis of %lld vectors "
                             "(largest residual %.3g above eigen_tol=%.3g)", (long long)kk, worst, tol);
                break;
            }
            /* the next check: where the residual's last rate of decrease
             * (per check interval) reaches tol, within 1 .. blocks/2 blocks
             * further (a quarter of the blocks when there is no rate yet) */
            int64_t step = blocks / 4 > 1 ? blocks / 4 : 1;
            if (prev_worst > 0.0 && worst < prev_worst) {
                const double f = worst / prev_worst;
                double r = worst;
                int64_t m = 0;
                while (r > tol && m < 1000) r *= f, m++;
                step = m * (blocks - prev_blocks);
                if (step > blocks / 2) step = blocks / 2;
                if (step < 1) step = 1;
            }
            prev_worst = worst, prev_blocks = blocks;
            next = blocks + step;
        }
        /* W -= Q C, twice (CGS2), then its columns into Q */
        kr_nn(2, n, q, kcap, kk, cc, block, bj, x, block);
        kr_tn(n, q, kcap, kk, x, block, bj, cc, block);
        kr_nn(2, n, q, kcap, kk, cc, block, bj, x, block);
        const int64_t room = (kcap - kk < block ? kcap - kk : block);
        const int64_t took = kr_append(n, q, kcap, kk, x, block, bj, ref, room, seed, coef);
        if (took == 0) { /* cannot happen below n columns: kr_append draws replacements */
            st = sb_fail(SB_ERR_INTERNAL, "the Krylov eigensolver's basis stopped growing at %lld of %lld",
                         (long long)kk, (long long)n);
            break;
        }
        s0 = kk, kk += took;
    }
    if (st == SB_OK) memcpy(w, th, sizeof(double) * (size_t)want);
    if (info) info->blocks = (int32_t)blocks, info->basis = (int32_t)kk, info->checks = (int32_t)checks,
              info->residual = worst;
    kr_free_all(all, 13);
    return st;
}
