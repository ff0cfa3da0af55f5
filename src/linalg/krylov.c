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
 * fixed chunks, so the thread count cannot reach a bit. Independent sums share
 * the lanes of vector registers (krylov_lanes.h: generic, AVX2 or AVX-512F,
 * chosen at run time), each lane one sum in its order, so neither the
 * instruction set nor the lane width reaches a bit. Only + - * / and sqrt.
 */
#include "linalg.h"
#include "../core/rng.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KR_PURPOSE 0x4B524C31u /* "KRL1": replacement and start columns */
#define KR_ROWS 32             /* rows a task of a product */
#define KR_POOL_WORK 262144    /* products smaller than this run on the calling thread (a schedule) */
#define KR_TNG 4               /* tiles of 8 columns a task of kr_tn */
#define KR_TNIB 64             /* rows a block of kr_tn */
#define KR_SLACK 16            /* doubles past the end of every buffer a lane may read */

/* ---- products in a fixed order ---- */

typedef struct kr_prod {
    int64_t n, ka, kb, lda, ldb, ldc;
    const double *a, *b;
    double *c;
    int mode; /* 0: c := a^T b (ka x kb); 1: c := a b (n x kb); 2: c -= a b */
} kr_prod;

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
    double *y2; /* NULL, or a copy of y (ldy2) */
    int64_t ldy2;
} kr_mv;

/* One step of the Householder reduction (sb_eigh_top_f64): this step's
 * update on rows and columns lo.. (v, w; none where w is NULL), and the next
 * step's p = taun A vn on rows and columns dlo.. (none where vn is NULL). */
typedef struct kr_tri {
    double *a; /* k x k, row-major */
    const double *v, *w, *vn;
    double *p;
    int64_t k, lo, dlo, r0, r1; /* the task's rows are r0..r1-1 */
    double taun;
} kr_tri;

/* A Givens rotation of the QR steps (sb_eigh_top_f64): rows k, k+1. */
typedef struct kr_rot {
    int64_t k;
    double c, s;
} kr_rot;

/* Lanes: GCC's vector extension (vectors of the target's register width,
 * kr_v4 two registers or scalars where the target has none); krylov_lanes.h
 * says why a lane keeps the bits of the plain loop. */
typedef double kr_v4 __attribute__((vector_size(32)));
#define KR_LOAD(v, p) memcpy(&(v), (p), sizeof(v))
#define KR_STORE(p, v) memcpy((p), &(v), sizeof(v))

#define KR_SUF gen
#define KR_ATTR
#define KR_VL 2
#define KR_TNW 3
#define KR_NNR 2
#define KR_NNV 1
#include "krylov_lanes.h"
#if defined(__x86_64__) && defined(__GNUC__)
#define KR_X86 1
#define KR_SUF avx2
#define KR_ATTR __attribute__((target("avx2")))
#define KR_VL 4
#define KR_TNW 6
#define KR_NNR 2
#define KR_NNV 2
#include "krylov_lanes.h"
#define KR_SUF avx512
#define KR_ATTR __attribute__((target("avx512f")))
#define KR_VL 8
#define KR_TNW 16
#define KR_NNR 4
#define KR_NNV 2
#include "krylov_lanes.h"
#endif

/* The kernels of this machine, chosen once: AVX-512F or AVX2 where the CPU
 * has them (x86-64), else the portable ones; SAMEBITS_KRYLOV_KERNEL=generic
 * (or avx2) caps the choice. Every choice gives the same bits. */
typedef struct kr_kern {
    void (*tn)(const kr_prod *, int64_t);
    void (*nn)(const kr_prod *, const float *, int64_t, int64_t);
    void (*mv)(const kr_mv *, int64_t, int64_t);
    void (*hh)(const kr_tri *, int64_t, int64_t);
    void (*colsub)(int64_t, const double *, int64_t, const double *, double *);
    void (*vecs)(int64_t, int64_t, const kr_rot *, int64_t, const double *, const double *, double *);
    const char *name;
} kr_kern;

static const kr_kern k_kern_gen = {kr_tn_tile_gen,  kr_nn_rows_gen, kr_mv_sparse_gen, kr_hh_rows_gen,
                                   kr_colsub_gen,   kr_vecs_gen,    "generic"};
#ifdef KR_X86
static const kr_kern k_kern_avx2 = {kr_tn_tile_avx2, kr_nn_rows_avx2, kr_mv_sparse_avx2, kr_hh_rows_avx2,
                                    kr_colsub_avx2,  kr_vecs_avx2,    "avx2"};
static const kr_kern k_kern_avx512 = {kr_tn_tile_avx512, kr_nn_rows_avx512, kr_mv_sparse_avx512, kr_hh_rows_avx512,
                                      kr_colsub_avx512,  kr_vecs_avx512,    "avx512"};
#endif
static const kr_kern *g_kern;

static const kr_kern *kr_kern_get(void) {
    const kr_kern *k = __atomic_load_n(&g_kern, __ATOMIC_ACQUIRE);
    if (k) return k;
    k = &k_kern_gen;
#ifdef KR_X86
    const char *v = getenv("SAMEBITS_KRYLOV_KERNEL");
    const int gen = v && !strcmp(v, "generic"), cap2 = v && !strcmp(v, "avx2");
    __builtin_cpu_init();
    if (!gen && __builtin_cpu_supports("avx2")) k = &k_kern_avx2;
    if (!gen && !cap2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f")) k = &k_kern_avx512;
#endif
    __atomic_store_n(&g_kern, k, __ATOMIC_RELEASE);
    return k;
}

const char *sb_krylov_kernel(void) { return kr_kern_get()->name; }

void sb_krylov_kernel_reset(void) { __atomic_store_n(&g_kern, (const kr_kern *)0, __ATOMIC_RELEASE); }

/* c[k][q] = sum over i ascending of a[i][k] b[i][q], for the task's 8 KR_TNG k. */
static void kr_tn_task(void *ctx, int64_t t) { kr_kern_get()->tn(ctx, 8 * KR_TNG * t); }

/* Rows of a b: t[q] = sum over k ascending of a[i][k] b[k][q]; then c := t
 * or c := c - t. One column (kb = 1): each row's sum alone. */
static void kr_nn_task(void *ctx, int64_t t) {
    const kr_prod *p = ctx;
    const int64_t i0 = t * KR_ROWS, i1 = i0 + KR_ROWS < p->n ? i0 + KR_ROWS : p->n;
    if (p->kb == 1) {
        for (int64_t i = i0; i < i1; i++) {
            const double *ai = p->a + i * p->lda;
            double s = 0.0;
            for (int64_t k = 0; k < p->ka; k++) s += ai[k] * p->b[k * p->ldb];
            if (p->mode == 1) p->c[i * p->ldc] = s;
            else p->c[i * p->ldc] -= s;
        }
        return;
    }
    kr_kern_get()->nn(p, NULL, i0, i1);
}

/* c (ka x kb, ldc) := a^T b, a n x ka (lda), b n x kb (ldb); a's rows carry
 * 8 readable columns from every multiple of 8 below ka. */
static void kr_tn(int64_t n, const double *a, int64_t lda, int64_t ka, const double *b, int64_t ldb, int64_t kb,
                  double *c, int64_t ldc) {
    kr_prod p = {n, ka, kb, lda, ldb, ldc, a, b, c, 0};
    if (ka <= 0 || kb <= 0) return;
    if (n * ka * kb >= KR_POOL_WORK) sb_parallel_for(sb_chunk_count(ka, 8 * KR_TNG), kr_tn_task, &p);
    else
        for (int64_t t = 0; t < sb_chunk_count(ka, 8 * KR_TNG); t++) kr_tn_task(&p, t);
}

/* c (n x kb, ldc) := a b (mode 1) or c -= a b (mode 2), a n x ka, b ka x kb;
 * b's rows readable to a multiple of 16 columns (KR_SLACK past its end). */
static void kr_nn(int mode, int64_t n, const double *a, int64_t lda, int64_t ka, const double *b, int64_t ldb,
                  int64_t kb, double *c, int64_t ldc) {
    kr_prod p = {n, ka, kb, lda, ldb, ldc, a, b, c, mode};
    if (kb <= 0) return;
    if (n * (ka > 0 ? ka : 1) * kb >= KR_POOL_WORK) sb_parallel_for(sb_chunk_count(n, KR_ROWS), kr_nn_task, &p);
    else
        for (int64_t t = 0; t < sb_chunk_count(n, KR_ROWS); t++) kr_nn_task(&p, t);
}

/* Rows of y = M x: y[i][q] = sum over j ascending of m_ij x[j][q]. */
static void kr_mv_task(void *ctx, int64_t t) {
    const kr_mv *p = ctx;
    const int64_t n = p->m->n, i0 = t * KR_ROWS, i1 = i0 + KR_ROWS < n ? i0 + KR_ROWS : n;
    if (p->m->rp) {
        kr_kern_get()->mv(p, i0, i1);
    } else {
        const kr_prod d = {n, n, p->b, n, p->ldx, p->ldy, NULL, p->x, p->y, 1};
        kr_kern_get()->nn(&d, p->m->m, i0, i1);
    }
    if (p->y2)
        for (int64_t i = i0; i < i1; i++) memcpy(p->y2 + i * p->ldy2, p->y + i * p->ldy, sizeof(double) * (size_t)p->b);
}

/* y := M x, and y2 := y where y2 is not NULL. */
static void kr_matvec(const kr_mat *m, const double *x, int64_t ldx, int64_t b, double *y, int64_t ldy, double *y2,
                      int64_t ldy2) {
    kr_mv p = {m, x, y, b, ldx, ldy, y2, ldy2};
    sb_parallel_for(sb_chunk_count(m->n, KR_ROWS), kr_mv_task, &p);
}

/* The first 64-byte line in p (8 doubles of slack allocated before it). */
static double *kr_line(double *p) {
    return p ? (double *)(((uintptr_t)p + 63) & ~(uintptr_t)63) : NULL;
}

/* out[c] = ||column c of x||^2 for c < b, rows ascending (each its own sum). */
static void kr_sq_cols(int64_t n, const double *x, int64_t ldx, int64_t b, double *out) {
    for (int64_t c = 0; c < b; c++) out[c] = 0.0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < b; c++) out[c] += x[i * ldx + c] * x[i * ldx + c];
}

/* The sparse form of M: rows counted, then filled, in fixed chunks. */
typedef struct kr_csr {
    kr_mat *m;
    int64_t *rp;
} kr_csr;

static void kr_count_task(void *ctx, int64_t t) {
    const kr_csr *c = ctx;
    const int64_t n = c->m->n, i0 = t * KR_ROWS, i1 = i0 + KR_ROWS < n ? i0 + KR_ROWS : n;
    for (int64_t i = i0; i < i1; i++) {
        int64_t k = 0;
        for (int64_t j = 0; j < n; j++) k += c->m->m[i * n + j] != 0.0f;
        c->rp[i + 1] = k;
    }
}

static void kr_fill_task(void *ctx, int64_t t) {
    const kr_csr *c = ctx;
    const int64_t n = c->m->n, i0 = t * KR_ROWS, i1 = i0 + KR_ROWS < n ? i0 + KR_ROWS : n;
    for (int64_t i = i0; i < i1; i++) {
        int64_t e = c->rp[i];
        for (int64_t j = 0; j < n; j++)
            if (c->m->m[i * n + j] != 0.0f) c->m->ci[e] = (int32_t)j, c->m->cv[e] = c->m->m[i * n + j], e++;
    }
}

/* ||column q of x||^2, rows ascending. */
static double kr_sq(int64_t n, const double *x, int64_t ldx) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += x[i * ldx] * x[i * ldx];
    return s;
}

/* ---- the dense symmetric problem ---- */

/* Rows r0..r1-1 of a Householder step (kr_tri; the rows run on one thread). */
static void kr_tri_task(void *ctx, int64_t t) {
    const kr_tri *s = ctx;
    const int64_t r0 = s->r0 + t * KR_ROWS, r1 = r0 + KR_ROWS < s->r1 ? r0 + KR_ROWS : s->r1;
    kr_kern_get()->hh(s, r0, r1);
}

static void kr_tri_run(const kr_tri *s) {
    const int64_t tasks = sb_chunk_count(s->r1 - s->r0, KR_ROWS);
    if (s->r1 - s->r0 >= 192) sb_parallel_for(tasks, kr_tri_task, (void *)s);
    else
        for (int64_t t = 0; t < tasks; t++) kr_tri_task((void *)s, t);
}

/* Householder vector j: row j's entries right of the diagonal (column j below
 * it, by symmetry) to (alpha, 0, ..., 0); reflector j is I - tau_j v v^T on
 * indices j+1..k-1, v kept in vs's row j. 0 where the entries below alpha are
 * already 0 (no reflector; tau_j = 0). */
static int kr_hh_vector(const double *a, int64_t k, int64_t j, double *vs, double *tau, double *e) {
    const int64_t lo = j + 1, m = k - lo;
    const double *x = a + j * k + lo;
    double sig = 0.0;
    for (int64_t r = 1; r < m; r++) sig += x[r] * x[r];
    double *v = vs + j * k;
    if (sig == 0.0) {
        tau[j] = 0.0, e[j] = x[0];
        return 0;
    }
    const double xn = sqrt(x[0] * x[0] + sig), alpha = x[0] >= 0.0 ? -xn : xn;
    v[0] = x[0] - alpha;
    for (int64_t r = 1; r < m; r++) v[r] = x[r];
    double vv = 0.0;
    for (int64_t r = 0; r < m; r++) vv += v[r] * v[r];
    tau[j] = 2.0 / vv;
    e[j] = alpha;
    return 1;
}

static double kr_sign(double x) { return x < 0.0 ? -1.0 : 1.0; }

sb_status sb_eigh_top_f64(int64_t k, const double *h, int64_t ldh, int64_t want, double *w, double *y) {
    if (k < 1 || want < 1 || want > k) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_eigh_top_f64: want=%lld of k=%lld",
                                                      (long long)want, (long long)k);
    sb_status st = SB_OK;
    const int64_t wl = (want + 7) / 8 * 8; /* the wanted vectors' lanes */
    double *a = sb_malloc(sizeof(double) * (size_t)(k * k)), *vs = sb_malloc(sizeof(double) * (size_t)(k * k));
    double *tau = sb_calloc((size_t)k, sizeof(double)), *d = sb_malloc(sizeof(double) * (size_t)k);
    double *e = sb_calloc((size_t)k, sizeof(double)), *p = sb_malloc(sizeof(double) * (size_t)k);
    double *wv = sb_malloc(sizeof(double) * (size_t)k), *z = sb_calloc((size_t)(k * wl), sizeof(double));
    int64_t *ord = sb_malloc(sizeof(int64_t) * (size_t)k);
    int64_t nrot = 0, caprot = 4 * k + 64;
    kr_rot *rot = sb_malloc(sizeof(kr_rot) * (size_t)caprot);
    if (!a || !vs || !tau || !d || !e || !p || !wv || !z || !ord || !rot) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "eigensolver: out of memory for a %lld x %lld problem", (long long)k,
                     (long long)k);
        goto done;
    }
    for (int64_t i = 0; i < k; i++) memcpy(a + i * k, h + i * ldh, sizeof(double) * (size_t)k);
    /* Householder: step j computes p = tau_j A v (rows and columns j+1..),
     * w = p - (tau_j p^T v / 2) v, then A := A - v w^T - w v^T. The update of
     * step j and the next step's p share one pass over the rows: row j+1 is
     * updated first (the next reflector comes from it), then each later row is
     * updated and multiplied by that reflector while it is in cache. */
    int act = k > 2 && kr_hh_vector(a, k, 0, vs, tau, e); /* a reflector at step j */
    if (act) {
        const kr_tri s = {a, NULL, NULL, vs, p, k, 1, 1, 1, k, tau[0]};
        kr_tri_run(&s);
    }
    for (int64_t j = 0; j + 2 < k; j++) {
        const int64_t lo = j + 1, m = k - lo;
        const int nxt = j + 3 < k; /* a step j + 1 */
        const double *v = vs + j * k;
        if (!act) { /* no update at j: the next step's p alone */
            act = nxt && kr_hh_vector(a, k, j + 1, vs, tau, e);
            if (act) {
                const kr_tri s = {a, NULL, NULL, vs + (j + 1) * k, p, k, lo + 1, lo + 1, lo + 1, k, tau[j + 1]};
                kr_tri_run(&s);
            }
            continue;
        }
        double pv = 0.0;
        for (int64_t r = 0; r < m; r++) pv += p[r] * v[r];
        const double kk = 0.5 * tau[j] * pv;
        for (int64_t r = 0; r < m; r++) wv[r] = p[r] - kk * v[r];
        const kr_tri s0 = {a, v, wv, NULL, p, k, lo, lo + 1, lo, lo + 1, 0.0};
        kr_tri_task((void *)&s0, 0);
        act = nxt && kr_hh_vector(a, k, j + 1, vs, tau, e);
        const double *vn = act ? vs + (j + 1) * k : NULL;
        const kr_tri s1 = {a, v, wv, vn, p, k, lo, lo + 1, lo + 1, k, act ? tau[j + 1] : 0.0};
        kr_tri_run(&s1);
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
    /* the wanted vectors side by side, lane c of z's rows for vector c */
    for (int64_t c = 0; c < want; c++) w[c] = d[ord[c]], z[ord[c] * wl + c] = 1.0;
    kr_kern_get()->vecs(k, wl, rot, nrot, vs, tau, z);
    for (int64_t i = 0; i < k; i++)
        for (int64_t c = 0; c < want; c++) y[i * want + c] = z[i * wl + c];
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
 * ref: each column's squared norm before its projections. xc (n) holds the
 * column at work and qt (room x n) the appended columns again, one a row, so
 * the projection off them runs along rows (the same sums). */
static int64_t kr_append(int64_t n, double *q, int64_t ldq, int64_t kq, const double *x, int64_t ldx, int64_t bx,
                         const double *ref, int64_t room, uint64_t seed, double *coef, double *xc, double *qt) {
    int64_t took = 0;
    const kr_kern *kn = kr_kern_get();
    for (int64_t c = 0; c < bx && took < room; c++) {
        for (int64_t i = 0; i < n; i++) xc[i] = x[i * ldx + c];
        for (int pass = 0; pass < 2 && took > 0; pass++) {
            kr_tn(n, q + kq, ldq, took, xc, 1, 1, coef, 1);
            kn->colsub(n, qt, took, coef, xc);
        }
        double s = kr_sq(n, xc, 1);
        for (uint32_t attempt = 0; !(s > 1e-16 * ref[c] && s > 0.0); attempt++) {
            if (attempt == 3) break; /* the space is spanned: n columns */
            kr_random(n, seed, kq + took, attempt, xc, 1);
            const double r0 = kr_sq(n, xc, 1);
            kr_project(n, q, ldq, kq + took, xc, 1, coef);
            s = kr_sq(n, xc, 1);
            if (!(s > 1e-4 * r0)) s = 0.0;
        }
        if (!(s > 0.0)) continue;
        const double nr = sqrt(s);
        double *qr = qt + took * n;
        for (int64_t i = 0; i < n; i++) qr[i] = xc[i] / nr;
        for (int64_t i = 0; i < n; i++) q[i * ldq + kq + took] = qr[i];
        took++;
    }
    return took;
}

static int kr_free_all(void **p, int np) {
    for (int i = 0; i < np; i++) sb_free(p[i]);
    return 0;
}

/* sb_krylov_top on the dense m, or (m NULL) on the sparse form given as
 * crp/cci/ccv: the CSR that the dense path builds itself (kr_fill_task). */
static sb_status kr_top(int64_t n, const float *m, const int64_t *crp, const int32_t *cci, const float *ccv,
                        int64_t want, int64_t block, double tol, int64_t kcap, uint64_t seed, double *w, double *u,
                        sb_krylov_info *info) {
    if (info) memset(info, 0, sizeof *info);
    if (n < 1 || want < 1 || want > n || block < want)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_krylov_top: n=%lld, want=%lld, block=%lld", (long long)n,
                       (long long)want, (long long)block);
    if (block > n) block = n;
    if (kcap > n || kcap < 1) kcap = n;
    if (kcap < block) kcap = block;
    kr_mat mat = {n, m, NULL, NULL, NULL};
    int64_t *rp = crp ? NULL : sb_malloc(sizeof(int64_t) * (size_t)(n + 1)), nnz = 0;
    if (!crp && !rp) return sb_fail(SB_ERR_OUT_OF_MEMORY, "eigensolver: out of memory for %lld rows", (long long)n);
    kr_csr cj = {&mat, rp};
    if (!crp) {
        mat.rp = rp; /* the counts: rp[i + 1] = row i's nonzeros */
        sb_parallel_for(sb_chunk_count(n, KR_ROWS), kr_count_task, &cj);
        for (int64_t i = 0; i < n; i++) nnz += rp[i + 1];
        mat.rp = NULL;
    }
    sb_status st = SB_OK;
    /* every buffer a lane reads carries KR_SLACK doubles past its end; the
     * basis' columns past the ones taken stay 0 (read as the lanes of a last
     * partial tile, never stored) */
    const size_t sl = KR_SLACK;
    /* q and mq (n x lq) and cc (kcap x lc) start on a 64-byte line, rows a
     * multiple of 8 doubles apart: a tile of 8 columns is one line */
    const int64_t lq = (kcap + 7) / 8 * 8, lc = (block + 7) / 8 * 8;
    double *qraw = sb_calloc((size_t)(n * lq) + sl + 8, sizeof(double));
    double *mqraw = sb_calloc((size_t)(n * lq) + sl + 8, sizeof(double));
    double *ccraw = sb_calloc((size_t)(kcap * lc) + sl + 8, sizeof(double));
    double *q = kr_line(qraw), *mq = kr_line(mqraw), *cc = kr_line(ccraw);
    double *hh = sb_calloc((size_t)(kcap * kcap), sizeof(double));
    double *x = sb_calloc((size_t)(n * block) + sl, sizeof(double));
    double *ref = sb_malloc(sizeof(double) * (size_t)block);
    double *coef = sb_calloc((size_t)kcap + sl, sizeof(double)), *th = sb_malloc(sizeof(double) * (size_t)want);
    double *yy = sb_calloc((size_t)(kcap * want) + sl, sizeof(double));
    double *zz = sb_malloc(sizeof(double) * (size_t)(n * want));
    double *xc = sb_calloc((size_t)n + sl, sizeof(double)), *qt = sb_calloc((size_t)(block * n) + sl, sizeof(double));
    void *all[16] = {qraw, mqraw, hh, x, ccraw, ref, coef, th, yy, zz, xc, qt, NULL, NULL, NULL, NULL};
    if (!qraw || !mqraw || !hh || !x || !ccraw || !ref || !coef || !th || !yy || !zz || !xc || !qt) {
        kr_free_all(all, 12);
        sb_free(rp);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "eigensolver: out of memory for %lld rows and a basis of %lld",
                       (long long)n, (long long)kcap);
    }
    all[12] = rp;
    if (crp) { /* the caller's sparse form, kept by the caller */
        mat.rp = (int64_t *)crp, mat.ci = (int32_t *)cci, mat.cv = (float *)ccv;
    } else if (nnz <= n * n / 8) {
        mat.rp = rp;
        mat.ci = sb_malloc(sizeof(int32_t) * (size_t)(nnz > 0 ? nnz : 1));
        mat.cv = sb_malloc(sizeof(float) * (size_t)(nnz > 0 ? nnz : 1));
        all[13] = mat.ci, all[14] = mat.cv;
        if (!mat.rp || !mat.ci || !mat.cv) {
            kr_free_all(all, 15);
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "eigensolver: out of memory for %lld nonzeros", (long long)nnz);
        }
        rp[0] = 0;
        for (int64_t i = 0; i < n; i++) rp[i + 1] += rp[i];
        sb_parallel_for(sb_chunk_count(n, KR_ROWS), kr_fill_task, &cj);
    }
    /* the start block: Philox columns, orthonormalized */
    for (int64_t c = 0; c < block; c++) {
        kr_random(n, seed, c, 0xFFFFFFFFu, x + c, block);
        ref[c] = kr_sq(n, x + c, block);
    }
    int64_t kk = kr_append(n, q, lq, 0, x, block, block, ref, block, seed, coef, xc, qt);
    int64_t s0 = 0, blocks = 0, next = 2, checks = 0;
    double worst = 0.0, prev_worst = 0.0;
    int64_t prev_blocks = 0;
    for (;;) {
        const int64_t bj = kk - s0;
        /* W = M Q_j, kept as M Q's columns s0..kk-1 */
        kr_matvec(&mat, q + s0, lq, bj, x, block, mq + s0, lq);
        kr_sq_cols(n, x, block, bj, ref);
        /* C = Q^T W: H's column block j, mirrored; the diagonal block symmetrized */
        kr_tn(n, q, lq, kk, x, block, bj, cc, lc);
        for (int64_t r = 0; r < s0; r++)
            for (int64_t c = 0; c < bj; c++) hh[r * kcap + s0 + c] = hh[(s0 + c) * kcap + r] = cc[r * lc + c];
        for (int64_t r = 0; r < bj; r++)
            for (int64_t c = 0; c < bj; c++)
                hh[(s0 + r) * kcap + s0 + c] = 0.5 * (cc[(s0 + r) * lc + c] + cc[(s0 + c) * lc + r]);
        blocks++;
        const int full = kk == n;
        if (full || blocks >= next || kk + 1 > kcap) {
            checks++;
            if ((st = sb_eigh_top_f64(kk, hh, kcap, want, th, yy)) != SB_OK) break;
            kr_nn(1, n, q, lq, kk, yy, want, want, u, want);
            kr_nn(1, n, mq, lq, kk, yy, want, want, zz, want);
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
        kr_nn(2, n, q, lq, kk, cc, lc, bj, x, block);
        kr_tn(n, q, lq, kk, x, block, bj, cc, lc);
        kr_nn(2, n, q, lq, kk, cc, lc, bj, x, block);
        const int64_t room = (kcap - kk < block ? kcap - kk : block);
        const int64_t took = kr_append(n, q, lq, kk, x, block, bj, ref, room, seed, coef, xc, qt);
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
    kr_free_all(all, 15);
    return st;
}

sb_status sb_krylov_top(int64_t n, const float *m, int64_t want, int64_t block, double tol, int64_t kcap,
                        uint64_t seed, double *w, double *u, sb_krylov_info *info) {
    return kr_top(n, m, NULL, NULL, NULL, want, block, tol, kcap, seed, w, u, info);
}

sb_status sb_krylov_top_csr(int64_t n, const int64_t *rp, const int32_t *ci, const float *cv, int64_t want,
                            int64_t block, double tol, int64_t kcap, uint64_t seed, double *w, double *u,
                            sb_krylov_info *info) {
    if (n < 1 || !rp || rp[n] > n * n / 8)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_krylov_top_csr: %lld nonzeros of %lld rows (at most n^2 / 8: "
                       "denser operators go dense, sb_krylov_top)", (long long)(rp ? rp[n] : -1), (long long)n);
    return kr_top(n, NULL, rp, ci, cv, want, block, tol, kcap, seed, w, u, info);
}
