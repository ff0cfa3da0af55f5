/*
 * gp_linalg.c: the Gaussian process's dense float64 linear algebra, blocked
 * (docs/gaussian-process.md): the Cholesky factor of the kernel matrix, the
 * inverse of that factor and minus the inverse of the kernel matrix, the
 * three O(n^3) steps of a likelihood evaluation with its gradient.
 *
 * The one order: every element is its starting value minus each product, one
 * at a time, in ascending order of the summation index, then (where the
 * formula has one) divided by the diagonal element once:
 *
 *   Cholesky     l_ic = (a_ic - l_i0 l_c0 - l_i1 l_c1 - ... - l_i,c-1 l_c,c-1) / l_cc   (c < i)
 *                l_ii = sqrt(a_ii - l_i0 l_i0 - ... - l_i,i-1 l_i,i-1)
 *   L^-1         z_ic = (d_ic - l_ic z_cc - l_i,c+1 z_c+1,c - ... - l_i,i-1 z_i-1,c) / l_ii  (d: the identity)
 *   -(L L^T)^-1  n_ac = 0 - z_aa z_ac - z_a+1,a z_a+1,c - ... - z_n-1,a z_n-1,c          (c <= a)
 *
 * Blocking only chooses when each subtraction is made, never which one comes
 * before another, so the bits depend on none of the block sizes and on no
 * thread count (threads split the work by independent output tiles). The
 * products a term list holds beyond these (the zeros above a triangle's
 * diagonal, which a tile meets at its edge) are exact no-ops: an element
 * that is +0 stays +0 when a signed zero is subtracted, any other is
 * unchanged, and no element here is ever -0 (x - y is -0 only for x = -0).
 *
 * The inner kernel (Goto and van de Geijn, "Anatomy of high-performance
 * matrix multiplication", ACM TOMS 34, 2008: packed panels, a register
 * block of outputs) updates a 4 x 8 block of outputs with GCC's vector
 * extension across the 8 independent outputs of a row, never across a sum:
 * each lane is one element's own chain. Built twice, portable and for AVX2
 * (chosen once at run time); both are the same IEEE operations in the same
 * order (no contraction: the Makefile's -ffp-contract=off; AVX2 has no FMA).
 */
#include "gp.h"
#include "../../kernels/gp.h"
#include <math.h> /* sqrt (correctly rounded) */
#include <string.h>

#define GL_MR 4     /* rows of the register block */
#define GL_NR 8     /* columns of the register block */
#define GL_MC 64    /* rows of a task (a multiple of GL_MR) */
#define GL_KC 256   /* summation indices of one packed pass */
#define GL_NB 64    /* columns of a Cholesky / inverse panel */
#define GL_CHUNK 64 /* rows (or columns) of a panel task */

typedef double gl_v4 __attribute__((vector_size(32)));

/* Unaligned loads and stores of 4 doubles (macros: a vector argument or
 * return would tie the portable build's ABI to AVX). */
#define gl_ld(p) __extension__({ gl_v4 v_; memcpy(&v_, (p), sizeof v_); v_; })
#define gl_st(p, v) __extension__({ gl_v4 w_ = (v); memcpy((p), &w_, sizeof w_); })

/* c (GL_MR rows of GL_NR, row stride ldc) := c - a_k b_k for k = 0..kc-1 in
 * order; ap: kc groups of GL_MR row values, bp: kc groups of GL_NR column
 * values. */
#define GL_MICRO_BODY                                                                                                  \
    {                                                                                                                  \
        gl_v4 c00 = gl_ld(c), c01 = gl_ld(c + 4);                                                                      \
        gl_v4 c10 = gl_ld(c + ldc), c11 = gl_ld(c + ldc + 4);                                                          \
        gl_v4 c20 = gl_ld(c + 2 * ldc), c21 = gl_ld(c + 2 * ldc + 4);                                                  \
        gl_v4 c30 = gl_ld(c + 3 * ldc), c31 = gl_ld(c + 3 * ldc + 4);                                                  \
        for (int64_t k = 0; k < kc; k++) {                                                                             \
            const gl_v4 b0 = gl_ld(bp + k * GL_NR), b1 = gl_ld(bp + k * GL_NR + 4);                                    \
            const double *a = ap + k * GL_MR;                                                                          \
            gl_v4 s;                                                                                                   \
            s = (gl_v4){a[0], a[0], a[0], a[0]};                                                                       \
            c00 = c00 - s * b0, c01 = c01 - s * b1;                                                                    \
            s = (gl_v4){a[1], a[1], a[1], a[1]};                                                                       \
            c10 = c10 - s * b0, c11 = c11 - s * b1;                                                                    \
            s = (gl_v4){a[2], a[2], a[2], a[2]};                                                                       \
            c20 = c20 - s * b0, c21 = c21 - s * b1;                                                                    \
            s = (gl_v4){a[3], a[3], a[3], a[3]};                                                                       \
            c30 = c30 - s * b0, c31 = c31 - s * b1;                                                                    \
        }                                                                                                              \
        gl_st(c, c00), gl_st(c + 4, c01), gl_st(c + ldc, c10), gl_st(c + ldc + 4, c11);                                \
        gl_st(c + 2 * ldc, c20), gl_st(c + 2 * ldc + 4, c21), gl_st(c + 3 * ldc, c30), gl_st(c + 3 * ldc + 4, c31);   \
    }

static void gl_micro_base(int64_t kc, const double *ap, const double *bp, double *c, int64_t ldc) GL_MICRO_BODY

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) static void gl_micro_avx2(int64_t kc, const double *ap, const double *bp, double *c,
                                                         int64_t ldc) GL_MICRO_BODY
#define GL_HAVE_AVX2 1
#endif

typedef void (*gl_micro_fn)(int64_t, const double *, const double *, double *, int64_t);

static gl_micro_fn gl_micro(void) {
#if defined(GL_HAVE_AVX2)
    static int choice = -1; /* a race here writes the same value */
    if (choice < 0) {
        __builtin_cpu_init();
        choice = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    return choice ? gl_micro_avx2 : gl_micro_base;
#else
    return gl_micro_base;
#endif
}

/* ---- C := C - op(A) op(B), one product at a time in k order -------------- */

typedef struct gl_gemm {
    int64_t m, nc, kdim;         /* rows and columns of C, summation length */
    const double *A;             /* a(r, k) = A[r*ar + k*ak] */
    int64_t ar, ak;
    const double *B;             /* b(k, j) = B[k*bk + j*bj] */
    int64_t bk, bj;
    double *C;                   /* row-major, row stride ldc */
    int64_t ldc;
    int lower;                   /* only elements with j <= r are written (and needed) */
    int ktri;                    /* a(r, k) = 0 for k < r: a row's terms start at its own index */
    int64_t kb, ke;              /* the pass */
    double *bp;                  /* packed B of the pass: column panel p at bp + p*GL_KC*GL_NR */
    double *ap;                  /* per worker: GL_MC*GL_KC packed A */
    gl_micro_fn micro;
} gl_gemm;

/* Column panels of B for the pass [kb, ke): k-major, GL_NR wide, +0 past nc. */
static void gl_packb_task(void *ctx, int64_t task) {
    const gl_gemm *g = ctx;
    const int64_t np = sb_chunk_count(g->nc, GL_NR);
    int64_t pb, pe;
    sb_chunk_range(np, 16, task, &pb, &pe);
    for (int64_t p = pb; p < pe; p++) {
        double *dst = g->bp + p * GL_KC * GL_NR;
        for (int64_t k = g->kb; k < g->ke; k++)
            for (int64_t jj = 0; jj < GL_NR; jj++) {
                const int64_t j = p * GL_NR + jj;
                dst[(k - g->kb) * GL_NR + jj] = j < g->nc ? g->B[k * g->bk + j * g->bj] : 0.0;
            }
    }
}

/* One task: GL_MC rows of C over the pass. */
static void gl_rows_task(void *ctx, int64_t task) {
    const gl_gemm *g = ctx;
    int64_t r0, r1;
    sb_chunk_range(g->m, GL_MC, task, &r0, &r1);
    if (g->ktri && r0 >= g->ke) return; /* every term of these rows in this pass is a zero */
    double *ap = g->ap + (int64_t)sb_worker_index() * GL_MC * GL_KC;
    const int64_t kw = g->ke - g->kb;
    for (int64_t r = r0; r < r1; r += GL_MR)
        for (int64_t k = g->kb; k < g->ke; k++)
            for (int64_t rr = 0; rr < GL_MR; rr++)
                ap[(r - r0) * GL_KC + (k - g->kb) * GL_MR + rr] =
                    r + rr < r1 ? g->A[(r + rr) * g->ar + k * g->ak] : 0.0;
    const int64_t cend = g->lower ? (r1 < g->nc ? r1 : g->nc) : g->nc; /* columns any row here needs */
    double tile[GL_MR * GL_NR];
    for (int64_t j = 0; j < cend; j += GL_NR) {
        const double *bp = g->bp + (j / GL_NR) * GL_KC * GL_NR;
        for (int64_t r = r0; r < r1; r += GL_MR) {
            if (g->lower && j > r + GL_MR - 1) continue; /* the block lies above the diagonal */
            int64_t ks = 0;
            if (g->ktri && r > g->kb) ks = r - g->kb;
            if (ks >= kw) continue;
            const double *a = ap + (r - r0) * GL_KC + ks * GL_MR;
            const double *b = bp + ks * GL_NR;
            const int full = r + GL_MR <= r1 && j + GL_NR <= g->nc && (!g->lower || j + GL_NR - 1 <= r);
            double *c = g->C + r * g->ldc + j;
            if (full) {
                g->micro(kw - ks, a, b, c, g->ldc);
                continue;
            }
            for (int64_t rr = 0; rr < GL_MR; rr++)
                for (int64_t jj = 0; jj < GL_NR; jj++) {
                    const int ok = r + rr < r1 && j + jj < g->nc && (!g->lower || j + jj <= r + rr);
                    tile[rr * GL_NR + jj] = ok ? c[rr * g->ldc + jj] : 0.0;
                }
            g->micro(kw - ks, a, b, tile, GL_NR);
            for (int64_t rr = 0; rr < GL_MR; rr++)
                for (int64_t jj = 0; jj < GL_NR; jj++) {
                    const int ok = r + rr < r1 && j + jj < g->nc && (!g->lower || j + jj <= r + rr);
                    if (ok) c[rr * g->ldc + jj] = tile[rr * GL_NR + jj];
                }
        }
    }
}

/* Runs g over its whole summation length in passes of GL_KC; bp and ap are
 * the caller's scratch (GL_KC x nc rounded up, and width x GL_MC x GL_KC). */
static void gl_gemm_run(gl_gemm *g, int32_t width) {
    g->micro = gl_micro();
    for (int64_t kb = 0; kb < g->kdim; kb += GL_KC) {
        g->kb = kb, g->ke = kb + GL_KC < g->kdim ? kb + GL_KC : g->kdim;
        sb_parallel_for_width(sb_chunk_count(sb_chunk_count(g->nc, GL_NR), 16), width, gl_packb_task, g);
        sb_parallel_for_width(sb_chunk_count(g->m, GL_MC), width, gl_rows_task, g);
    }
}

/* ---- the Cholesky factor -------------------------------------------------- */

typedef struct gl_chol {
    double *A;
    int64_t n, j0, j1;
    double *P; /* the panel transposed: P[(c - j0) * n + i] = a_ic for rows i >= j1 */
} gl_chol;

/* Rows below the diagonal block: their elements of the panel's columns,
 * solved in the transposed copy (vectors across rows, each its own chain). */
static void gl_panel_task(void *ctx, int64_t task) {
    const gl_chol *h = ctx;
    const int64_t n = h->n, j0 = h->j0, j1 = h->j1;
    int64_t b, e;
    sb_chunk_range(n - j1, GL_CHUNK, task, &b, &e);
    b += j1, e += j1;
    for (int64_t c = j0; c < j1; c++) {
        double *pc = h->P + (c - j0) * n;
        for (int64_t i = b; i < e; i++) pc[i] = h->A[i * n + c];
    }
    for (int64_t c = j0; c < j1; c++) {
        double *pc = h->P + (c - j0) * n;
        const double *lc = h->A + c * n;
        for (int64_t k = j0; k < c; k++) {
            const double *pk = h->P + (k - j0) * n;
            const double l = lc[k];
            for (int64_t i = b; i < e; i++) pc[i] = pc[i] - pk[i] * l;
        }
        const double d = lc[c];
        for (int64_t i = b; i < e; i++) pc[i] = pc[i] / d;
    }
    for (int64_t i = b; i < e; i++)
        for (int64_t c = j0; c < j1; c++) h->A[i * n + c] = h->P[(c - j0) * n + i];
}

/* In place: the lower triangle of A (n x n, the upper +0) becomes L with
 * L L^T = A, in the file's one order. Returns the first column whose pivot
 * is not > 0 (or not finite), -1 when none, -2 when out of memory. Under the
 * separating arm (make SABOTAGE=gp-chol-order) the diagonal blocks
 * (kernels/gp.h's gpk_sub_dot) sum each element's products first and
 * subtract the sum once: another order that the fixture's cards must catch. */
int64_t sb_gp_cholesky(double *A, int64_t n) {
    if (n <= 0) return -1;
    const int32_t width = sb_parallel_width();
    const int64_t npan = sb_chunk_count(n, GL_NR);
    double *P = sb_malloc(sizeof(double) * (size_t)(GL_NB * n));
    double *bp = sb_malloc(sizeof(double) * (size_t)(GL_KC * GL_NR * npan));
    double *ap = sb_malloc(sizeof(double) * (size_t)width * GL_MC * GL_KC);
    int64_t bad = -1;
    if (!P || !bp || !ap) bad = -2;
    gl_chol h = {A, n, 0, 0, P};
    for (int64_t j0 = 0; j0 < n && bad == -1; j0 += GL_NB) {
        const int64_t j1 = j0 + GL_NB < n ? j0 + GL_NB : n;
        for (int64_t i = j0; i < j1 && bad == -1; i++) {
            double *li = A + i * n;
            for (int64_t c = j0; c <= i; c++) {
                const double *lc = A + c * n;
                const double s = gpk_sub_dot(li[c], li, lc, j0, c);
                if (c < i) li[c] = s / lc[c];
                else if (!(s > 0.0) || s - s != 0.0) bad = i;
                else li[i] = sqrt(s);
            }
        }
        if (bad != -1 || j1 == n) break;
        h.j0 = j0, h.j1 = j1;
        sb_parallel_for_width(sb_chunk_count(n - j1, GL_CHUNK), width, gl_panel_task, &h);
        /* the trailing rows and columns j1.. lose the panel's products */
        gl_gemm g;
        memset(&g, 0, sizeof g);
        g.m = n - j1, g.nc = n - j1, g.kdim = j1 - j0;
        g.A = P + j1, g.ar = 1, g.ak = n;
        g.B = P + j1, g.bk = n, g.bj = 1;
        g.C = A + j1 * n + j1, g.ldc = n, g.lower = 1;
        g.bp = bp, g.ap = ap;
        gl_gemm_run(&g, width);
    }
    sb_free(P), sb_free(bp), sb_free(ap);
    return bad;
}

/* ---- the inverse ------------------------------------------------------------ */

typedef struct gl_inv {
    const double *L;
    double *Z;
    int64_t n, k0, k1;
} gl_inv;

/* Columns [b, e) of the block rows k0..k1 of Z = L^-1 (row-major, +0 above
 * the diagonal), each row's later block rows' products already subtracted. */
static void gl_invblock_task(void *ctx, int64_t task) {
    const gl_inv *h = ctx;
    const int64_t n = h->n;
    int64_t b, e;
    sb_chunk_range(h->k1, GL_CHUNK, task, &b, &e);
    for (int64_t i = h->k0; i < h->k1; i++) {
        const int64_t ce = e < i + 1 ? e : i + 1;
        if (ce <= b) continue;
        double *zi = h->Z + i * n;
        const double *li = h->L + i * n;
        for (int64_t k = h->k0; k < i; k++) {
            const double l = li[k];
            const double *zk = h->Z + k * n;
            for (int64_t c = b; c < ce; c++) zi[c] = zi[c] - l * zk[c];
        }
        const double d = li[i];
        for (int64_t c = b; c < ce; c++) zi[c] = zi[c] / d;
    }
}

static void gl_eye_task(void *ctx, int64_t task) {
    const gl_inv *h = ctx;
    int64_t b, e;
    sb_chunk_range(h->n, GL_CHUNK, task, &b, &e);
    for (int64_t i = b; i < e; i++) {
        memset(h->Z + i * h->n, 0, sizeof(double) * (size_t)h->n);
        h->Z[i * h->n + i] = 1.0;
    }
}

static void gl_zero_task(void *ctx, int64_t task) {
    const gl_inv *h = ctx;
    int64_t b, e;
    sb_chunk_range(h->n, GL_CHUNK, task, &b, &e);
    memset(h->Z + b * h->n, 0, sizeof(double) * (size_t)((e - b) * h->n));
}

/* Z := L^-1 (n x n, row-major, +0 above the diagonal) and the lower
 * triangle of N := -(L L^T)^-1 (the upper +0), in the file's one order.
 * Z is distinct from L and N; N may be L's storage (L is read only before N
 * is first written). SB_OK or the named refusal of memory. */
sb_status sb_gp_neg_inverse(const double *L, double *Z, double *N, int64_t n) {
    if (n <= 0) return SB_OK;
    const int32_t width = sb_parallel_width();
    const int64_t npan = sb_chunk_count(n, GL_NR);
    double *bp = sb_malloc(sizeof(double) * (size_t)(GL_KC * GL_NR * npan));
    double *ap = sb_malloc(sizeof(double) * (size_t)width * GL_MC * GL_KC);
    if (!bp || !ap) {
        sb_free(bp), sb_free(ap);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "gaussian process: out of memory for the inverse's panels");
    }
    gl_inv h = {L, Z, n, 0, 0};
    sb_parallel_for_width(sb_chunk_count(n, GL_CHUNK), width, gl_eye_task, &h);
    for (int64_t k0 = 0; k0 < n; k0 += GL_NB) {
        const int64_t k1 = k0 + GL_NB < n ? k0 + GL_NB : n;
        h.k0 = k0, h.k1 = k1;
        sb_parallel_for_width(sb_chunk_count(k1, GL_CHUNK), width, gl_invblock_task, &h);
        if (k1 == n) break;
        /* later rows lose this block's products: z_ic -= l_ik z_kc, c < k1 */
        gl_gemm g;
        memset(&g, 0, sizeof g);
        g.m = n - k1, g.nc = k1, g.kdim = k1 - k0;
        g.A = L + k1 * n + k0, g.ar = n, g.ak = 1;
        g.B = Z + k0 * n, g.bk = n, g.bj = 1;
        g.C = Z + k1 * n, g.ldc = n;
        g.bp = bp, g.ap = ap;
        gl_gemm_run(&g, width);
    }
    gl_inv hz = {NULL, N, n, 0, 0};
    sb_parallel_for_width(sb_chunk_count(n, GL_CHUNK), width, gl_zero_task, &hz);
    /* n_ac = 0 - sum over i >= a of z_ia z_ic */
    gl_gemm g;
    memset(&g, 0, sizeof g);
    g.m = n, g.nc = n, g.kdim = n;
    g.A = Z, g.ar = 1, g.ak = n;
    g.B = Z, g.bk = n, g.bj = 1;
    g.C = N, g.ldc = n, g.lower = 1, g.ktri = 1;
    g.bp = bp, g.ap = ap;
    gl_gemm_run(&g, width);
    sb_free(bp), sb_free(ap);
    return SB_OK;
}
