/*
 * solve.c: Cholesky factorization, triangular solves, the symmetric
 * eigensolver (cyclic Jacobi) and the random projections of a randomized SVD,
 * on the host and on a GPU of program SB_PROG_LINALG.
 *
 * The arithmetic is kernels/linalg_solve.h's (read its header first: it
 * states every fixed order and names the algorithms). Here is only the
 * schedule, which cannot reach a bit because each element is made by the same
 * function of the same operands wherever it is made:
 *
 *  - Cholesky on the host works in panels of CHOL_PANEL columns: the panel's
 *    diagonal block row by row (serially; its pivots are refused in column
 *    order, so the first refused column is the one the device finds), then
 *    every row below it on the worker pool in fixed chunks of ROW_GRAIN rows.
 *    On a device, one launch a column (entry/linalg_solve_entry.h).
 *  - triangular solves: the right-hand sides in fixed chunks of COL_GRAIN
 *    columns on the pool (a work-item a column on a device), rows in order.
 *  - Jacobi: its rotations form one chain, run in the stated sweep order by
 *    one thread on the host and by one work-group on a device.
 *  - random matrices: rows in fixed chunks on the pool; Y = A Omega is the
 *    identical GEMM (gemm.c), host or device.
 */
#include "linalg.h"
#include "../kernels/linalg_solve.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CHOL_PANEL 32
#define ROW_GRAIN 16
#define COL_GRAIN 8

/* ---- checks ------------------------------------------------------------------ */

static sb_status check_n(const char *fn, const char *what, int64_t n, int64_t max) {
    if (n < 0) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: %s must be >= 0 (given %lld)", fn, what, (long long)n);
    if (n > max)
        return sb_fail(SB_ERR_LIMIT, "%s: %s is at most %lld (given %lld)", fn, what, (long long)max, (long long)n);
    return SB_OK;
}

static sb_status check_ld(const char *fn, const char *what, int64_t ld, int64_t need) {
    if (ld < (need > 1 ? need : 1))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: %s %lld is below %lld", fn, what, (long long)ld,
                       (long long)(need > 1 ? need : 1));
    if (ld > INT64_MAX / 8 / (need > 1 ? need : 1))
        return sb_fail(SB_ERR_LIMIT, "%s: %s %lld spans more than 2^60 elements", fn, what, (long long)ld);
    return SB_OK;
}

/* Whether [p, p + 4*pn) and [q, q + 4*qn) share a byte. */
static int overlaps(const void *p, int64_t pn, const void *q, int64_t qn) {
    if (pn <= 0 || qn <= 0) return 0;
    const char *a = p, *b = q;
    return a < b + 4 * qn && b < a + 4 * pn;
}

static int finite(float x) { return (sb_f2u(x) & 0x7f800000u) != 0x7f800000u; }

/* The first non-finite element, in row-major order, of the lower triangle
 * (lower) or the whole of a rows x cols matrix. */
static sb_status check_finite(const char *fn, const char *what, const float *x, int64_t ld, int64_t rows,
                              int64_t cols, int lower) {
    for (int64_t i = 0; i < rows; i++) {
        const int64_t e = lower ? i + 1 : cols;
        for (int64_t j = 0; j < e; j++)
            if (!finite(x[i * ld + j]))
                return sb_fail(SB_ERR_INVALID_INPUT, "%s: element (%lld, %lld) of %s is %s", fn, (long long)i,
                               (long long)j, what, x[i * ld + j] != x[i * ld + j] ? "NaN" : "infinite");
    }
    return SB_OK;
}

/* ---- devices -------------------------------------------------------------------- */

/* One open device per GPU kind, built once for the process; calls on it are
 * serialized (as gemm.c's). */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static sb_device *g_dev[4];
static sb_gemm_ws g_ws[4];

/* With g_lock held. */
static sb_status dev_get(sb_device_kind kind, sb_device **out) {
    sb_status st = SB_OK;
    if (!g_dev[kind]) st = sb_device_open(kind, SB_PROG_LINALG, &g_dev[kind]);
    *out = g_dev[kind];
    return st;
}

static int64_t groups_of(const sb_device *d, int64_t items) { return (items + d->wg - 1) / d->wg; }

static int is_host(sb_device_kind kind) { return kind == SB_DEVICE_CPU || kind == SB_DEVICE_CPU_BATCHED; }

/* rows x cols of a dense device buffer into dst (row stride ld). */
static sb_status read_rows(sb_device *d, const sb_dbuf *b, float *dst, int64_t ld, int64_t rows, int64_t cols,
                           const char *what) {
    if (rows <= 0 || cols <= 0) return SB_OK;
    if (ld == cols) return sb_device_read(d, b, 0, dst, 4 * (size_t)(rows * cols), what);
    sb_status st = SB_OK;
    for (int64_t i = 0; i < rows && st == SB_OK; i++)
        st = sb_device_read(d, b, 4 * (size_t)(i * cols), dst + i * ld, 4 * (size_t)cols, what);
    return st;
}

/* ---- Cholesky --------------------------------------------------------------------- */

typedef struct chol_job {
    const float *a;
    int64_t lda;
    float *l;
    int64_t ldl, n, j0, j1;
    const int32_t *k;
} chol_job;

/* Rows of a chunk: l := the equilibrated lower triangle of a, +0 above. */
static void chol_prep_task(void *ctx, int64_t task) {
    const chol_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, ROW_GRAIN, task, &b, &e);
    for (int64_t i = b; i < e; i++) {
        const float *ai = j->a + i * j->lda;
        float *li = j->l + i * j->ldl;
        for (int64_t c = 0; c <= i; c++) li[c] = sb_ls_chol_in(ai[c], j->k[i], j->k[c]);
        for (int64_t c = i + 1; c < j->n; c++) li[c] = 0.0f;
    }
}

/* Rows of a chunk below the panel [j0, j1): their elements of the panel's columns. */
static void chol_rows_task(void *ctx, int64_t task) {
    const chol_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n - j->j1, ROW_GRAIN, task, &b, &e);
    for (int64_t i = j->j1 + b; i < j->j1 + e; i++) {
        float *li = j->l + i * j->ldl;
        for (int64_t c = j->j0; c < j->j1; c++) {
            const float *lc = j->l + c * j->ldl;
            li[c] = sb_ls_chol_off(li[c], li, lc, c, lc[c]);
        }
    }
}

static void chol_unscale_task(void *ctx, int64_t task) {
    const chol_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, ROW_GRAIN, task, &b, &e);
    for (int64_t i = b; i < e; i++) {
        float *li = j->l + i * j->ldl;
        for (int64_t c = 0; c <= i; c++) li[c] = sb_ls_chol_out(li[c], j->k[i]);
    }
}

static sb_status chol_host(int64_t n, const float *a, int64_t lda, float *l, int64_t ldl, int64_t *bad) {
    int32_t *k = sb_malloc(sizeof(int32_t) * (size_t)n);
    if (!k) return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_linalg_cholesky: out of memory for n = %lld", (long long)n);
    for (int64_t i = 0; i < n; i++) k[i] = sb_ls_chol_k(a[i * lda + i]);
    chol_job job = {a, lda, l, ldl, n, 0, 0, k};
    sb_parallel_for(sb_chunk_count(n, ROW_GRAIN), chol_prep_task, &job);
    *bad = -1;
    for (int64_t j0 = 0; j0 < n && *bad < 0; j0 += CHOL_PANEL) {
        const int64_t j1 = j0 + CHOL_PANEL < n ? j0 + CHOL_PANEL : n;
        /* the diagonal block, row by row: row i's columns j0..i-1, then pivot i */
        for (int64_t i = j0; i < j1; i++) {
            float *li = l + i * ldl;
            for (int64_t c = j0; c < i; c++) {
                const float *lc = l + c * ldl;
                li[c] = sb_ls_chol_off(li[c], li, lc, c, lc[c]);
            }
            const float d = sb_ls_chol_pivot(li[i], li, i);
            if (!(d > 0.0f)) {
                *bad = i;
                break;
            }
            li[i] = sb_ls_sqrtf(d);
        }
        if (*bad >= 0) break;
        job.j0 = j0;
        job.j1 = j1;
        sb_parallel_for(sb_chunk_count(n - j1, ROW_GRAIN), chol_rows_task, &job);
    }
    if (*bad < 0) sb_parallel_for(sb_chunk_count(n, ROW_GRAIN), chol_unscale_task, &job);
    sb_free(k);
    return SB_OK;
}

static sb_status chol_dev(sb_device *d, int64_t n, const float *a, int64_t lda, float *l, int64_t ldl,
                          int64_t *bad) {
    const int64_t span = sb_gemm_span(n, n, lda), nn = n * n;
    sb_dbuf da = {0}, dl = {0}, dk = {0}, ds = {0};
    sb_status st = sb_device_alloc(d, &da, 4 * (size_t)span, "cholesky a");
    if (st == SB_OK) st = sb_device_alloc(d, &dl, 4 * (size_t)nn, "cholesky l");
    if (st == SB_OK) st = sb_device_alloc(d, &dk, 4 * (size_t)n, "cholesky scales");
    if (st == SB_OK) st = sb_device_alloc(d, &ds, 8, "cholesky status");
    if (st == SB_OK) st = sb_device_write(d, &da, 0, a, 4 * (size_t)span, "cholesky a");
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KL_kls_chol_scales, groups_of(d, n), 1, 0, SB_ARG(da.h), SB_ARG(lda), SB_ARG(n),
                       SB_ARG(dk.h), SB_ARG(ds.h));
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KL_kls_chol_prep, groups_of(d, nn), 1, 0, SB_ARG(da.h), SB_ARG(lda), SB_ARG(n),
                       SB_ARG(dk.h), SB_ARG(dl.h));
    for (int64_t j = -1; j < n - 1 && st == SB_OK; j++)
        st = SB_LAUNCH(d, SB_KL_kls_chol_col, groups_of(d, n - j - 1), 1, 0, SB_ARG(dl.h), SB_ARG(n), SB_ARG(j),
                       SB_ARG(ds.h));
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KL_kls_chol_unscale, groups_of(d, nn), 1, 0, SB_ARG(dl.h), SB_ARG(n), SB_ARG(dk.h),
                       SB_ARG(ds.h));
    int64_t status = -1;
    if (st == SB_OK) st = sb_device_read(d, &ds, 0, &status, 8, "cholesky status");
    if (st == SB_OK) {
        *bad = status;
        if (status < 0) st = read_rows(d, &dl, l, ldl, n, n, "cholesky l");
    }
    sb_device_release(d, &da);
    sb_device_release(d, &dl);
    sb_device_release(d, &dk);
    sb_device_release(d, &ds);
    return st;
}

sb_status sb_linalg_cholesky_ex(const char *device, int64_t n, const float *a, int64_t lda, float *l, int64_t ldl,
                                int64_t *bad_column) {
    static const char fn[] = "sb_linalg_cholesky";
    sb_clear_error();
    int64_t bad = -1;
    if (bad_column) *bad_column = -1;
    sb_status st;
    if ((st = check_n(fn, "n", n, SB_LINALG_MAX_N)) != SB_OK || (st = check_ld(fn, "lda", lda, n)) != SB_OK ||
        (st = check_ld(fn, "ldl", ldl, n)) != SB_OK)
        return st;
    const int64_t span_a = sb_gemm_span(n, n, lda), span_l = sb_gemm_span(n, n, ldl);
    if (n > 0 && (!a || !l)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: a or l is NULL", fn);
    if (!((const void *)l == (const void *)a && ldl == lda) && overlaps(l, span_l, a, span_a))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: l overlaps a (it may be a itself, with ldl == lda)", fn);
    sb_device_kind kind;
    if ((st = sb_device_parse(device, &kind)) != SB_OK) return st;
    if ((st = sb_threads_ready()) != SB_OK) return st; /* an invalid SAMEBITS_NUM_THREADS, by name */
    if (n == 0) return SB_OK;
    if ((st = check_finite(fn, "a", a, lda, n, n, 1)) != SB_OK) return st;
    if (is_host(kind)) {
        st = chol_host(n, a, lda, l, ldl, &bad);
    } else {
        pthread_mutex_lock(&g_lock);
        sb_device *d;
        if ((st = dev_get(kind, &d)) == SB_OK) st = chol_dev(d, n, a, lda, l, ldl, &bad);
        pthread_mutex_unlock(&g_lock);
    }
    if (st != SB_OK) return st;
    if (bad >= 0) {
        for (int64_t i = 0; i < n; i++) memset(l + i * ldl, 0, 4 * (size_t)n);
        if (bad_column) *bad_column = bad;
        return sb_fail(SB_ERR_INVALID_INPUT,
                       "%s: the matrix is not positive definite: the pivot of column %lld is not > 0", fn,
                       (long long)bad);
    }
    return SB_OK;
}

SB_API sb_status sb_linalg_cholesky(const char *device, int64_t n, const float *a, int64_t lda, float *l,
                                    int64_t ldl) {
    return sb_linalg_cholesky_ex(device, n, a, lda, l, ldl, NULL);
}

/* ---- triangular solves -------------------------------------------------------- */

typedef struct trsm_job {
    const float *l;
    int64_t ldl;
    float *x;
    int64_t ldx, n, nrhs;
    int32_t trans;
} trsm_job;

/* The substitution for a chunk of columns, row by row (the row order is the
 * only one the dependencies allow; the columns are independent). */
static void trsm_task(void *ctx, int64_t task) {
    const trsm_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->nrhs, COL_GRAIN, task, &b, &e);
    if (j->trans == 0) {
        for (int64_t i = 0; i < j->n; i++)
            for (int64_t c = b; c < e; c++)
                j->x[i * j->ldx + c] = sb_ls_forward(j->l, j->ldl, j->x + c, j->ldx, i, j->x[i * j->ldx + c]);
    } else {
        for (int64_t i = j->n - 1; i >= 0; i--)
            for (int64_t c = b; c < e; c++)
                j->x[i * j->ldx + c] =
                    sb_ls_backward(j->l, j->ldl, j->x + c, j->ldx, j->n, i, j->x[i * j->ldx + c]);
    }
}

static sb_status trsm_dev(sb_device *d, int32_t trans, int64_t n, int64_t nrhs, const float *l, int64_t ldl,
                          float *x, int64_t ldx) {
    const int64_t span = sb_gemm_span(n, n, ldl), nx = n * nrhs;
    sb_dbuf dl = {0}, dx = {0};
    sb_status st = sb_device_alloc(d, &dl, 4 * (size_t)span, "solve l");
    if (st == SB_OK) st = sb_device_alloc(d, &dx, 4 * (size_t)nx, "solve x");
    if (st == SB_OK) st = sb_device_write(d, &dl, 0, l, 4 * (size_t)span, "solve l");
    if (ldx == nrhs) {
        if (st == SB_OK) st = sb_device_write(d, &dx, 0, x, 4 * (size_t)nx, "solve b");
    } else {
        for (int64_t i = 0; i < n && st == SB_OK; i++)
            st = sb_device_write(d, &dx, 4 * (size_t)(i * nrhs), x + i * ldx, 4 * (size_t)nrhs, "solve b");
    }
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KL_kls_trsm, groups_of(d, nrhs), 1, 0, SB_ARG(dl.h), SB_ARG(ldl), SB_ARG(dx.h),
                       SB_ARG(nrhs), SB_ARG(n), SB_ARG(nrhs), SB_ARG(trans));
    if (st == SB_OK) st = read_rows(d, &dx, x, ldx, n, nrhs, "solve x");
    sb_device_release(d, &dl);
    sb_device_release(d, &dx);
    return st;
}

SB_API sb_status sb_linalg_solve_triangular(const char *device, int32_t trans, int64_t n, int64_t nrhs,
                                            const float *l, int64_t ldl, const float *b, int64_t ldb, float *x,
                                            int64_t ldx) {
    static const char fn[] = "sb_linalg_solve_triangular";
    sb_clear_error();
    sb_status st;
    if (trans != 0 && trans != 1)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: trans is 0 (L X = B) or 1 (L^T X = B) (given %d)", fn,
                       (int)trans);
    if ((st = check_n(fn, "n", n, SB_LINALG_MAX_N)) != SB_OK ||
        (st = check_n(fn, "nrhs", nrhs, INT32_MAX)) != SB_OK || (st = check_ld(fn, "ldl", ldl, n)) != SB_OK ||
        (st = check_ld(fn, "ldb", ldb, nrhs)) != SB_OK || (st = check_ld(fn, "ldx", ldx, nrhs)) != SB_OK)
        return st;
    const int64_t span_l = sb_gemm_span(n, n, ldl), span_b = sb_gemm_span(n, nrhs, ldb),
                  span_x = sb_gemm_span(n, nrhs, ldx);
    if ((span_l > 0 && !l) || (span_b > 0 && (!b || !x)))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: l, b or x is NULL", fn);
    if (overlaps(x, span_x, l, span_l)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: x overlaps l", fn);
    const int in_place = (const void *)x == (const void *)b && ldx == ldb;
    if (!in_place && overlaps(x, span_x, b, span_b))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: x overlaps b (it may be b itself, with ldx == ldb)", fn);
    sb_device_kind kind;
    if ((st = sb_device_parse(device, &kind)) != SB_OK) return st;
    if ((st = sb_threads_ready()) != SB_OK) return st; /* an invalid SAMEBITS_NUM_THREADS, by name */
    if (n == 0 || nrhs == 0) return SB_OK;
    if ((st = check_finite(fn, "l", l, ldl, n, n, 1)) != SB_OK || (st = check_finite(fn, "b", b, ldb, n, nrhs, 0)) != SB_OK)
        return st;
    for (int64_t i = 0; i < n; i++)
        if (l[i * ldl + i] == 0.0f)
            return sb_fail(SB_ERR_INVALID_INPUT, "%s: l is singular: its diagonal element (%lld, %lld) is zero", fn,
                           (long long)i, (long long)i);
    if (!in_place)
        for (int64_t i = 0; i < n; i++) memcpy(x + i * ldx, b + i * ldb, 4 * (size_t)nrhs);
    if (is_host(kind)) {
        trsm_job job = {l, ldl, x, ldx, n, nrhs, trans};
        sb_parallel_for(sb_chunk_count(nrhs, COL_GRAIN), trsm_task, &job);
        return SB_OK;
    }
    pthread_mutex_lock(&g_lock);
    sb_device *d;
    if ((st = dev_get(kind, &d)) == SB_OK) st = trsm_dev(d, trans, n, nrhs, l, ldl, x, ldx);
    pthread_mutex_unlock(&g_lock);
    return st;
}

/* ---- the symmetric eigensolver ------------------------------------------------ */

typedef struct eig_key {
    float w;
    int64_t i;
} eig_key;

static int eig_cmp(const void *x, const void *y) {
    const eig_key *a = x, *b = y;
    return sb_ls_eig_before(a->w, a->i, b->w, b->i) ? -1 : sb_ls_eig_before(b->w, b->i, a->w, a->i) ? 1 : 0;
}

/* The method of kls_eig_jacobi, in the same order, on one thread. */
static sb_status eigh_host(int64_t n, const float *a, int64_t lda, float *w, float *v, int64_t ldv, int32_t *sweeps,
                           int64_t *rotations, int *converged) {
    const int want_v = v != NULL;
    float *A = sb_malloc(4 * (size_t)(n * n)), *VT = want_v ? sb_malloc(4 * (size_t)(n * n)) : NULL;
    float *bz = sb_malloc(8 * (size_t)n); /* Rutishauser's b, then z */
    eig_key *key = sb_malloc(sizeof(eig_key) * (size_t)n);
    if (!A || (want_v && !VT) || !bz || !key) {
        sb_free(A);
        sb_free(VT);
        sb_free(bz);
        sb_free(key);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_linalg_eigh: out of memory for n = %lld", (long long)n);
    }
    uint32_t mb = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j <= i; j++) {
            const uint32_t u = sb_f2u(a[i * lda + j]) & 0x7fffffffu;
            mb = u > mb ? u : mb;
        }
    const int ex = mb ? sb_ls_ilogb(mb) : 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j <= i; j++) A[i * n + j] = A[j * n + i] = sb_ls_scale(a[i * lda + j], -ex);
    if (want_v)
        for (int64_t e = 0; e < n * n; e++) VT[e] = e / n == e % n ? 1.0f : 0.0f;
    float *b = bz, *z = bz + n;
    for (int64_t i = 0; i < n; i++) {
        b[i] = A[i * n + i];
        z[i] = 0.0f;
    }
    int64_t rot_all = 0;
    int nsweeps = 0, conv = 0;
    for (int sweep = 0; sweep < SB_LS_JAC_MAX_SWEEPS && !conv; sweep++) {
        int64_t rot = 0;
        for (int64_t p = 0; p + 1 < n; p++) {
            float *ap = A + p * n, *vp = want_v ? VT + p * n : NULL;
            for (int64_t b = p + 1; b < n; b++) {
                const int64_t q = SB_LS_JAC_Q(p, b, n);
                float *aq = A + q * n;
                const float app = ap[p], aqq = aq[q], apq = ap[q];
                const int act = sb_ls_jac_action(app, aqq, apq);
                if (act == 0) continue;
                if (act == 1) {
                    ap[q] = aq[p] = 0.0f;
                    continue;
                }
                float t, c, s, tau;
                sb_ls_jac_rot(app, aqq, apq, &t, &c, &s, &tau);
                /* r runs over [0, n) but p and q, in three branch-free stretches */
                const int64_t lo = p < q ? p : q, hi = p < q ? q : p;
                const int64_t seg[3][2] = {{0, lo}, {lo + 1, hi}, {hi + 1, n}};
                for (int sg = 0; sg < 3; sg++)
                    for (int64_t r = seg[sg][0]; r < seg[sg][1]; r++) {
                        float gn, hn;
                        sb_ls_jac_pair(ap[r], aq[r], s, tau, &gn, &hn);
                        ap[r] = gn;
                        aq[r] = hn;
                    }
                /* the columns mirror the rows (the matrix stays exactly symmetric) */
                for (int sg = 0; sg < 3; sg++)
                    for (int64_t r = seg[sg][0]; r < seg[sg][1]; r++) {
                        A[r * n + p] = ap[r];
                        A[r * n + q] = aq[r];
                    }
                const float h = sb_ls_jac_h(apq, t);
                ap[p] = app - h;
                aq[q] = aqq + h;
                z[p] = z[p] - h;
                z[q] = z[q] + h;
                ap[q] = aq[p] = 0.0f;
                if (want_v) {
                    float *vq = VT + q * n;
                    for (int64_t r = 0; r < n; r++) {
                        float gn, hn;
                        sb_ls_jac_pair(vp[r], vq[r], s, tau, &gn, &hn);
                        vp[r] = gn;
                        vq[r] = hn;
                    }
                }
                rot++;
            }
        }
        for (int64_t i = 0; i < n; i++) {
            b[i] = b[i] + z[i];
            A[i * n + i] = b[i];
            z[i] = 0.0f;
        }
        rot_all += rot;
        nsweeps = sweep + 1;
        if (rot == 0) conv = 1;
    }
    for (int64_t i = 0; i < n; i++) {
        key[i].w = sb_ls_scale(A[i * n + i], ex) + 0.0f;
        key[i].i = i;
    }
    /* the order is total (ties by index), so any correct sort gives it */
    qsort(key, (size_t)n, sizeof key[0], eig_cmp);
    for (int64_t k = 0; k < n; k++) w[k] = key[k].w;
    if (want_v)
        for (int64_t k = 0; k < n; k++) {
            const float *vk = VT + key[k].i * n;
            const int neg = (int)(sb_f2u(vk[sb_ls_argmax_abs(vk, n)]) >> 31);
            for (int64_t r = 0; r < n; r++) v[r * ldv + k] = sb_ls_signed(vk[r], neg);
        }
    *sweeps = nsweeps;
    *rotations = rot_all;
    *converged = conv;
    sb_free(A);
    sb_free(VT);
    sb_free(bz);
    sb_free(key);
    return SB_OK;
}

static sb_status eigh_dev(sb_device *d, int64_t n, const float *a, int64_t lda, float *w, float *v, int64_t ldv,
                          int32_t *sweeps, int64_t *rotations, int *converged) {
    const int32_t want_v = v != NULL;
    const int64_t span = sb_gemm_span(n, n, lda), nn = n * n, vbytes = want_v ? 4 * nn : 4;
    sb_dbuf da = {0}, dw = {0}, dvt = {0}, dbz = {0}, draw = {0}, dinfo = {0}, dperm = {0}, dneg = {0}, dwout = {0},
            dv = {0};
    sb_status st = sb_device_alloc(d, &da, 4 * (size_t)span, "eigh a");
    if (st == SB_OK) st = sb_device_alloc(d, &dbz, 8 * (size_t)n, "eigh diagonal sums");
    if (st == SB_OK) st = sb_device_alloc(d, &dw, 4 * (size_t)nn, "eigh work");
    if (st == SB_OK) st = sb_device_alloc(d, &dvt, (size_t)vbytes, "eigh vectors");
    if (st == SB_OK) st = sb_device_alloc(d, &draw, 4 * (size_t)n, "eigh values");
    if (st == SB_OK) st = sb_device_alloc(d, &dinfo, 8 * 4, "eigh info");
    if (st == SB_OK) st = sb_device_alloc(d, &dperm, 4 * (size_t)n, "eigh order");
    if (st == SB_OK) st = sb_device_alloc(d, &dneg, 4 * (size_t)n, "eigh signs");
    if (st == SB_OK) st = sb_device_alloc(d, &dwout, 4 * (size_t)n, "eigh values");
    if (st == SB_OK) st = sb_device_alloc(d, &dv, (size_t)vbytes, "eigh vectors");
    if (st == SB_OK) st = sb_device_write(d, &da, 0, a, 4 * (size_t)span, "eigh a");
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KL_kls_eig_jacobi, 1, 1, 0, SB_ARG(da.h), SB_ARG(lda), SB_ARG(n), SB_ARG(want_v),
                       SB_ARG(dw.h), SB_ARG(dvt.h), SB_ARG(dbz.h), SB_ARG(draw.h), SB_ARG(dinfo.h));
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KL_kls_eig_order, groups_of(d, n), 1, 0, SB_ARG(draw.h), SB_ARG(dvt.h), SB_ARG(n),
                       SB_ARG(want_v), SB_ARG(dperm.h), SB_ARG(dneg.h), SB_ARG(dwout.h));
    if (st == SB_OK && want_v)
        st = SB_LAUNCH(d, SB_KL_kls_eig_vectors, groups_of(d, nn), 1, 0, SB_ARG(dvt.h), SB_ARG(n), SB_ARG(dperm.h),
                       SB_ARG(dneg.h), SB_ARG(dv.h));
    int64_t info[4] = {0, 0, 0, 0};
    if (st == SB_OK) st = sb_device_read(d, &dinfo, 0, info, 8 * 3, "eigh info");
    if (st == SB_OK) st = sb_device_read(d, &dwout, 0, w, 4 * (size_t)n, "eigh values");
    if (st == SB_OK && want_v) st = read_rows(d, &dv, v, ldv, n, n, "eigh vectors");
    *sweeps = (int32_t)info[0];
    *rotations = info[1];
    *converged = (int)info[2];
    sb_dbuf *all[] = {&da, &dw, &dvt, &dbz, &draw, &dinfo, &dperm, &dneg, &dwout, &dv};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sb_device_release(d, all[i]);
    return st;
}

SB_API sb_status sb_linalg_eigh(const char *device, int64_t n, const float *a, int64_t lda, float *w, float *v,
                                int64_t ldv, int32_t *sweeps, int64_t *rotations) {
    static const char fn[] = "sb_linalg_eigh";
    sb_clear_error();
    if (sweeps) *sweeps = 0;
    if (rotations) *rotations = 0;
    sb_status st;
    if ((st = check_n(fn, "n", n, SB_LINALG_MAX_EIGH_N)) != SB_OK || (st = check_ld(fn, "lda", lda, n)) != SB_OK ||
        (v && (st = check_ld(fn, "ldv", ldv, n)) != SB_OK))
        return st;
    const int64_t span_a = sb_gemm_span(n, n, lda), span_v = v ? sb_gemm_span(n, n, ldv) : 0;
    if (n > 0 && (!a || !w)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: a or w is NULL", fn);
    if (overlaps(w, n, a, span_a) || overlaps(v, span_v, a, span_a) || overlaps(v, span_v, w, n))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: w, v and a overlap", fn);
    sb_device_kind kind;
    if ((st = sb_device_parse(device, &kind)) != SB_OK) return st;
    if ((st = sb_threads_ready()) != SB_OK) return st; /* an invalid SAMEBITS_NUM_THREADS, by name */
    if (n == 0) return SB_OK;
    if ((st = check_finite(fn, "a", a, lda, n, n, 1)) != SB_OK) return st;
    int32_t sw = 0;
    int64_t rot = 0;
    int conv = 0;
    if (is_host(kind)) {
        st = eigh_host(n, a, lda, w, v, ldv, &sw, &rot, &conv);
    } else {
        pthread_mutex_lock(&g_lock);
        sb_device *d;
        if ((st = dev_get(kind, &d)) == SB_OK) st = eigh_dev(d, n, a, lda, w, v, ldv, &sw, &rot, &conv);
        pthread_mutex_unlock(&g_lock);
    }
    if (st != SB_OK) return st;
    if (sweeps) *sweeps = sw;
    if (rotations) *rotations = rot;
    if (!conv)
        return sb_fail(SB_ERR_LIMIT, "%s: the Jacobi sweeps did not converge in %d sweeps (n = %lld)", fn,
                       SB_LS_JAC_MAX_SWEEPS, (long long)n);
    return SB_OK;
}

/* ---- random matrices and projections ------------------------------------------- */

typedef struct rand_job {
    int32_t kind;
    uint64_t seed;
    int64_t rows, cols, ld;
    float *out;
} rand_job;

static void rand_task(void *ctx, int64_t task) {
    const rand_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->rows, ROW_GRAIN, task, &b, &e);
    for (int64_t r = b; r < e; r++)
        for (int64_t c = 0; c < j->cols; c++) j->out[r * j->ld + c] = sb_ls_random(j->kind, j->seed, r, c, j->cols);
}

static sb_status check_kind(const char *fn, int32_t kind) {
    if (kind != SB_LINALG_NORMAL && kind != SB_LINALG_RADEMACHER)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: kind is SB_LINALG_NORMAL (0) or SB_LINALG_RADEMACHER (1) (given %d)",
                       fn, (int)kind);
    return SB_OK;
}

SB_STATIC_ASSERT(SB_LINALG_NORMAL == SB_LS_NORMAL && SB_LINALG_RADEMACHER == SB_LS_RADEMACHER,
                 "the public random kinds are the kernel's");

SB_API sb_status sb_linalg_random_matrix(const char *device, int32_t kind, uint64_t seed, int64_t rows,
                                         int64_t cols, float *out, int64_t ldo) {
    static const char fn[] = "sb_linalg_random_matrix";
    sb_clear_error();
    sb_status st;
    if ((st = check_kind(fn, kind)) != SB_OK || (st = check_n(fn, "rows", rows, INT32_MAX)) != SB_OK ||
        (st = check_n(fn, "cols", cols, INT32_MAX)) != SB_OK || (st = check_ld(fn, "ldo", ldo, cols)) != SB_OK)
        return st;
    if (rows > 0 && cols > 0 && !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    sb_device_kind dk;
    if ((st = sb_device_parse(device, &dk)) != SB_OK) return st;
    if ((st = sb_threads_ready()) != SB_OK) return st; /* an invalid SAMEBITS_NUM_THREADS, by name */
    if (rows == 0 || cols == 0) return SB_OK;
    if (is_host(dk)) {
        rand_job job = {kind, seed, rows, cols, ldo, out};
        sb_parallel_for(sb_chunk_count(rows, ROW_GRAIN), rand_task, &job);
        return SB_OK;
    }
    pthread_mutex_lock(&g_lock);
    sb_device *d;
    sb_dbuf dout = {0};
    const int64_t nn = rows * cols;
    if ((st = dev_get(dk, &d)) == SB_OK) {
        st = sb_device_alloc(d, &dout, 4 * (size_t)nn, "random matrix");
        if (st == SB_OK)
            st = SB_LAUNCH(d, SB_KL_kls_random, groups_of(d, nn), 1, 0, SB_ARG(kind), SB_ARG(seed), SB_ARG(rows),
                           SB_ARG(cols), SB_ARG(dout.h));
        if (st == SB_OK) st = read_rows(d, &dout, out, ldo, rows, cols, "random matrix");
        sb_device_release(d, &dout);
    }
    pthread_mutex_unlock(&g_lock);
    return st;
}

SB_API sb_status sb_linalg_projection(const char *device, int32_t kind, uint64_t seed, int64_t m, int64_t n,
                                      int64_t l, const float *a, int64_t lda, float *y, int64_t ldy) {
    static const char fn[] = "sb_linalg_projection";
    sb_clear_error();
    sb_status st;
    if ((st = check_kind(fn, kind)) != SB_OK || (st = check_n(fn, "m", m, INT32_MAX)) != SB_OK ||
        (st = check_n(fn, "n", n, INT32_MAX)) != SB_OK || (st = check_n(fn, "l", l, INT32_MAX)) != SB_OK ||
        (st = check_ld(fn, "lda", lda, n)) != SB_OK || (st = check_ld(fn, "ldy", ldy, l)) != SB_OK)
        return st;
    const sb_gemm_shape s = {0, 0, m, l, n, lda, l > 1 ? l : 1};
    if ((st = sb_gemm_check(&s, ldy)) != SB_OK) return st;
    const int64_t span_a = sb_gemm_span(m, n, lda), span_y = sb_gemm_span(m, l, ldy);
    if ((span_a > 0 && !a) || (span_y > 0 && !y)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: a or y is NULL", fn);
    if (overlaps(y, span_y, a, span_a)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: y overlaps a", fn);
    sb_device_kind dk;
    if ((st = sb_device_parse(device, &dk)) != SB_OK) return st;
    if ((st = sb_threads_ready()) != SB_OK) return st; /* an invalid SAMEBITS_NUM_THREADS, by name */
    if (span_y == 0) return SB_OK;
    const int64_t nom = n * l;
    if (is_host(dk)) {
        float *om = sb_malloc(4 * (size_t)(nom > 0 ? nom : 1));
        if (!om) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory for a %lld x %lld Omega", fn, (long long)n,
                                (long long)l);
        rand_job job = {kind, seed, n, l, l, om};
        sb_parallel_for(sb_chunk_count(n, ROW_GRAIN), rand_task, &job);
        st = sb_gemm_host(&s, a, om, y, ldy);
        sb_free(om);
        return st;
    }
    pthread_mutex_lock(&g_lock);
    sb_device *d;
    sb_dbuf da = {0}, dom = {0}, dy = {0};
    if ((st = dev_get(dk, &d)) == SB_OK) {
        st = sb_device_alloc(d, &da, 4 * (size_t)(span_a > 0 ? span_a : 1), "projection a");
        if (st == SB_OK) st = sb_device_alloc(d, &dom, 4 * (size_t)(nom > 0 ? nom : 1), "projection omega");
        if (st == SB_OK) st = sb_device_alloc(d, &dy, 4 * (size_t)(m * l), "projection y");
        if (st == SB_OK && span_a > 0) st = sb_device_write(d, &da, 0, a, 4 * (size_t)span_a, "projection a");
        if (st == SB_OK && nom > 0)
            st = SB_LAUNCH(d, SB_KL_kls_random, groups_of(d, nom), 1, 0, SB_ARG(kind), SB_ARG(seed), SB_ARG(n),
                           SB_ARG(l), SB_ARG(dom.h));
        if (st == SB_OK) st = sb_gemm_on(d, &g_ws[dk], &s, &da, &dom, &dy);
        if (st == SB_OK) st = read_rows(d, &dy, y, ldy, m, l, "projection y");
        sb_device_release(d, &da);
        sb_device_release(d, &dom);
        sb_device_release(d, &dy);
    }
    pthread_mutex_unlock(&g_lock);
    return st;
}
