/*
 * gp_device.c: Gaussian process regression on a GPU (device=cuda|opencl|gpu;
 * docs/gaussian-process.md, "Devices"): the O(n^2 d) kernel matrix, the
 * O(n^3) Cholesky factor, L^-1 and -K^-1, W and the gradient's O(n^2 d)
 * terms run as the float64 program's kernels (kernels/entry/gp_entry.h),
 * in the host's per-element order; the host keeps the optimizer, the
 * triangular solves for alpha_, the log marginal likelihood's sums and the
 * gradient's sum over rows, the same code as on the CPU. The host here only
 * moves bytes and launches: the L it reads back, the gradient's row terms
 * and the cross kernel values are the host's bits.
 *
 * Blocks of GPD_NB columns (a schedule input: the element order does not
 * depend on it); one launch a step, every launch queued in order.
 */
#include "gp.h"
#include "../../device/device.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define GPD_NB 64 /* columns of a Cholesky / inverse panel on the device */

/* The device of each kind, opened once and kept for the process, used
 * under the slot's lock. */
static sb_device_slot g_slot = SB_DEVICE_SLOT_INIT;

struct gp_dev {
    sb_device *d;
    int64_t n, dfeat;
    sb_dbuf X, nodes, ev, A, Z, a, part, bad;
};

static int64_t groups(const sb_device *d, int64_t items) { return (items + d->wg - 1) / d->wg; }

/* Opens kind's device (refused by name when absent or without IEEE
 * doubles) and uploads the training rows; need 1: the n x n buffer of the
 * factor, 2: also L^-1's and the gradient's terms (0: neither, for the
 * cross kernel alone). */
sb_status sb_gp_dev_begin(int32_t kind, const double *X, int64_t n, int64_t d, int need, gp_dev **out) {
    *out = NULL;
    gp_dev *g = sb_calloc(1, sizeof *g);
    if (!g) return sb_fail(SB_ERR_OUT_OF_MEMORY, "gaussian process: out of memory");
    sb_status st = sb_device_slot_lock(&g_slot, (sb_device_kind)kind, SB_PROG_GP, &g->d);
    if (st == SB_OK) {
        g->n = n, g->dfeat = d;
        const size_t nn = sizeof(double) * (size_t)n * (size_t)n;
        if (need >= 1 && g->d->max_alloc > 0 && (int64_t)nn > g->d->max_alloc)
            st = sb_fail(SB_ERR_LIMIT,
                         "gaussian process on device '%s': %lld training rows need a buffer of %zu bytes, more than "
                         "the device's %lld a buffer",
                         sb_device_kind_name((sb_device_kind)kind), (long long)n, nn, (long long)g->d->max_alloc);
        if (st == SB_OK) st = sb_device_alloc(g->d, &g->X, sizeof(double) * (size_t)(n * d), "gaussian process rows");
        if (st == SB_OK) st = sb_device_write(g->d, &g->X, 0, X, sizeof(double) * (size_t)(n * d), "gaussian process rows");
        if (st == SB_OK) st = sb_device_alloc(g->d, &g->nodes, sizeof(gp_node) * GP_MAX_NODES, "gaussian process kernel");
        if (st == SB_OK) st = sb_device_alloc(g->d, &g->ev, sizeof(double) * GP_MAX_PARAMS, "gaussian process kernel");
        if (st == SB_OK) st = sb_device_alloc(g->d, &g->bad, sizeof(int64_t), "gaussian process pivot");
        if (st == SB_OK && need >= 1) st = sb_device_alloc(g->d, &g->A, nn, "gaussian process kernel matrix");
        if (st == SB_OK && need >= 2) st = sb_device_alloc(g->d, &g->Z, nn, "gaussian process inverse factor");
        if (st == SB_OK && need >= 2)
            st = sb_device_alloc(g->d, &g->part, sizeof(double) * (size_t)n * GP_MAX_PARAMS, "gaussian process gradient");
        sb_device_slot_unlock(&g_slot);
    }
    if (st != SB_OK) {
        sb_gp_dev_end(g);
        return st;
    }
    *out = g;
    return SB_OK;
}

void sb_gp_dev_end(gp_dev *g) {
    if (!g) return;
    if (g->d) {
        pthread_mutex_lock(&g_slot.lock);
        sb_dbuf *all[] = {&g->X, &g->nodes, &g->ev, &g->A, &g->Z, &g->a, &g->part, &g->bad};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sb_device_release(g->d, all[i]);
        sb_device_slot_unlock(&g_slot);
    }
    sb_free(g);
}

/* The kernel's nodes and values up. */
static sb_status put_kernel(gp_dev *g, const gp_kernel *k, const double *ev) {
    sb_status st = sb_device_write(g->d, &g->nodes, 0, k->node, sizeof(gp_node) * (size_t)k->nnodes, "gaussian process kernel");
    return st == SB_OK ? sb_device_write(g->d, &g->ev, 0, ev, sizeof(double) * (size_t)k->npar, "gaussian process kernel")
                       : st;
}

/* C := C - op(A) op(B) on the device (ke_gp_gemm_sub's contract): by
 * 16 x 16 tiles through local memory where the work-group is 256 work-items
 * (ke_gp_gemm_tile), else one work-item an element; the same terms in the
 * same order either way (SAMEBITS_GP_GEMM=element forces the second, for
 * the tests that show it). */
static sb_status gemm_sub(gp_dev *g, sb_dbuf *C, int64_t coff, int64_t ldc, const sb_dbuf *A, int64_t aoff, int64_t ar,
                          int64_t ak, const sb_dbuf *B, int64_t boff, int64_t bk, int64_t bj, int64_t m, int64_t nc,
                          int64_t kb, int64_t ke, int32_t lower, int32_t ktri) {
    sb_device *d = g->d;
    const char *force = getenv("SAMEBITS_GP_GEMM");
    if (d->wg == 256 && !(force && !strcmp(force, "element"))) {
        const int64_t ntc = (nc + 15) / 16, ntr = (m + 15) / 16;
        return SB_LAUNCH(d, SB_KG_ke_gp_gemm_tile, ntr * ntc, 1, 0, SB_ARG(C->h), SB_ARG(coff), SB_ARG(ldc),
                         SB_ARG(A->h), SB_ARG(aoff), SB_ARG(ar), SB_ARG(ak), SB_ARG(B->h), SB_ARG(boff), SB_ARG(bk),
                         SB_ARG(bj), SB_ARG(m), SB_ARG(nc), SB_ARG(kb), SB_ARG(ke), SB_ARG(lower), SB_ARG(ktri),
                         SB_ARG(ntc));
    }
    return SB_LAUNCH(d, SB_KG_ke_gp_gemm_sub, groups(d, m * nc), 1, 0, SB_ARG(C->h), SB_ARG(coff), SB_ARG(ldc),
                     SB_ARG(A->h), SB_ARG(aoff), SB_ARG(ar), SB_ARG(ak), SB_ARG(B->h), SB_ARG(boff), SB_ARG(bk),
                     SB_ARG(bj), SB_ARG(m), SB_ARG(nc), SB_ARG(kb), SB_ARG(ke), SB_ARG(lower), SB_ARG(ktri));
}

/* K(X) + alpha I factored on the device; L (n x n, +0 above) read into the
 * host's L unless *bad (the first column whose pivot is not > 0) is >= 0. */
sb_status sb_gp_dev_factor(gp_dev *g, const gp_kernel *k, const double *ev, double alpha, double *L, int64_t *bad) {
    sb_device *d = g->d;
    const int64_t n = g->n, dim = g->dfeat;
    const int32_t nnodes = k->nnodes, wg = d->wg;
    *bad = -1;
    pthread_mutex_lock(&g_slot.lock);
    sb_status st = put_kernel(g, k, ev);
    const int64_t none = -1;
    if (st == SB_OK) st = sb_device_write(d, &g->bad, 0, &none, sizeof none, "gaussian process pivot");
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KG_ke_gp_kmat, groups(d, n * n), 1, 0, SB_ARG(g->X.h), SB_ARG(n), SB_ARG(dim),
                       SB_ARG(g->nodes.h), SB_ARG(nnodes), SB_ARG(g->ev.h), SB_ARG(alpha), SB_ARG(g->A.h));
    for (int64_t j0 = 0; j0 < n && st == SB_OK; j0 += GPD_NB) {
        const int64_t j1 = j0 + GPD_NB < n ? j0 + GPD_NB : n;
        st = SB_LAUNCH(d, SB_KG_ke_gp_chol_diag, 1, 1, 0, SB_ARG(g->A.h), SB_ARG(n), SB_ARG(j0), SB_ARG(j1), SB_ARG(wg),
                       SB_ARG(g->bad.h));
        if (st != SB_OK || j1 == n) break;
        st = SB_LAUNCH(d, SB_KG_ke_gp_chol_panel, groups(d, n - j1), 1, 0, SB_ARG(g->A.h), SB_ARG(n), SB_ARG(j0),
                       SB_ARG(j1));
        /* the trailing rows and columns j1.. lose the panel's products */
        if (st == SB_OK)
            st = gemm_sub(g, &g->A, j1 * n + j1, n, &g->A, j1 * n, n, 1, &g->A, j1 * n, 1, n, n - j1, n - j1, j0, j1,
                          1, 0);
    }
    if (st == SB_OK) st = sb_device_read(d, &g->bad, 0, bad, sizeof *bad, "gaussian process pivot");
    if (st == SB_OK && *bad < 0)
        st = sb_device_read(d, &g->A, 0, L, sizeof(double) * (size_t)(n * n), "gaussian process factor");
    sb_device_slot_unlock(&g_slot);
    return st;
}

/* From the factor sb_gp_dev_factor left on the device (spent here) and
 * alpha_ (n x t): Z = L^-1, N = -K^-1, W = sum alpha alpha^T + t N and each
 * row's gradient terms into part (n x npar). */
sb_status sb_gp_dev_grad(gp_dev *g, const gp_kernel *k, const double *ev, const double *a, int64_t t, double *part) {
    sb_device *d = g->d;
    const int64_t n = g->n, dim = g->dfeat;
    const int32_t nnodes = k->nnodes, npar = k->npar, eye = 0, zero = 1;
    pthread_mutex_lock(&g_slot.lock);
    sb_status st = put_kernel(g, k, ev);
    if (st == SB_OK) st = sb_device_ensure(d, &g->a, sizeof(double) * (size_t)(n * t), "gaussian process alpha_");
    if (st == SB_OK) st = sb_device_write(d, &g->a, 0, a, sizeof(double) * (size_t)(n * t), "gaussian process alpha_");
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KG_ke_gp_eye, groups(d, n * n), 1, 0, SB_ARG(g->Z.h), SB_ARG(n), SB_ARG(eye));
    for (int64_t k0 = 0; k0 < n && st == SB_OK; k0 += GPD_NB) {
        const int64_t k1 = k0 + GPD_NB < n ? k0 + GPD_NB : n;
        st = SB_LAUNCH(d, SB_KG_ke_gp_inv_block, groups(d, k1), 1, 0, SB_ARG(g->A.h), SB_ARG(g->Z.h), SB_ARG(n),
                       SB_ARG(k0), SB_ARG(k1));
        /* later rows lose this block's products: z_ic -= l_ik z_kc, c < k1 */
        if (st == SB_OK && k1 < n) st = gemm_sub(g, &g->Z, k1 * n, n, &g->A, k1 * n, n, 1, &g->Z, 0, n, 1, n - k1, k1, k0, k1, 0, 0);
    }
    /* N := -Z^T Z in the factor's storage: n_ac = 0 - sum over i >= a of z_ia z_ic */
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KG_ke_gp_eye, groups(d, n * n), 1, 0, SB_ARG(g->A.h), SB_ARG(n), SB_ARG(zero));
    if (st == SB_OK) st = gemm_sub(g, &g->A, 0, n, &g->Z, 0, 1, n, &g->Z, 0, n, 1, n, n, 0, n, 1, 1);
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KG_ke_gp_wmat, groups(d, n * n), 1, 0, SB_ARG(g->A.h), SB_ARG(g->a.h), SB_ARG(n), SB_ARG(t));
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KG_ke_gp_grad, groups(d, n), 1, 0, SB_ARG(g->X.h), SB_ARG(n), SB_ARG(dim),
                       SB_ARG(g->nodes.h), SB_ARG(nnodes), SB_ARG(g->ev.h), SB_ARG(npar), SB_ARG(g->A.h),
                       SB_ARG(g->part.h));
    if (st == SB_OK)
        st = sb_device_read(d, &g->part, 0, part, sizeof(double) * (size_t)(n * npar), "gaussian process gradient");
    sb_device_slot_unlock(&g_slot);
    return st;
}

/* K := K(Xs, X) (m x n) on the device, in chunks of query rows of about
 * 2^25 values (a schedule input: each value is one work-item's). */
sb_status sb_gp_dev_cross(gp_dev *g, const gp_kernel *k, const double *ev, const double *Xs, int64_t m, double *K) {
    sb_device *d = g->d;
    const int64_t n = g->n, dim = g->dfeat;
    const int32_t nnodes = k->nnodes;
    const int64_t rows = ((int64_t)1 << 25) / n > 0 ? ((int64_t)1 << 25) / n : 1;
    const int64_t cm = rows < m ? rows : m;
    sb_dbuf xs = {0}, kb = {0};
    pthread_mutex_lock(&g_slot.lock);
    sb_status st = put_kernel(g, k, ev);
    if (st == SB_OK) st = sb_device_alloc(d, &xs, sizeof(double) * (size_t)(cm * dim), "gaussian process query rows");
    if (st == SB_OK) st = sb_device_alloc(d, &kb, sizeof(double) * (size_t)(cm * n), "gaussian process cross kernel");
    for (int64_t r0 = 0; r0 < m && st == SB_OK; r0 += cm) {
        const int64_t c = m - r0 < cm ? m - r0 : cm;
        st = sb_device_write(d, &xs, 0, Xs + r0 * dim, sizeof(double) * (size_t)(c * dim), "gaussian process query rows");
        if (st == SB_OK)
            st = SB_LAUNCH(d, SB_KG_ke_gp_kcross, groups(d, c * n), 1, 0, SB_ARG(xs.h), SB_ARG(c), SB_ARG(g->X.h),
                           SB_ARG(n), SB_ARG(dim), SB_ARG(g->nodes.h), SB_ARG(nnodes), SB_ARG(g->ev.h), SB_ARG(kb.h));
        if (st == SB_OK)
            st = sb_device_read(d, &kb, 0, K + r0 * n, sizeof(double) * (size_t)(c * n), "gaussian process cross kernel");
    }
    sb_device_release(d, &xs);
    sb_device_release(d, &kb);
    sb_device_slot_unlock(&g_slot);
    return st;
}
