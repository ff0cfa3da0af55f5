/*
 * gp_entry.h: entry kernels of the Gaussian process program (SB_PROG_GP;
 * their names in SB_GP_KERNELS, src/device/programs.h), float64: built only
 * where the device has IEEE doubles (OpenCL's cl_khr_fp64, checked and
 * turned on by dev_opencl.c; CUDA). src/models/gp/gp_device.c launches them.
 *
 * Kernel values and derivatives are kernels/gp.h's gpk_eval, the function
 * the host calls; the Cholesky blocks' elements are its gpk_sub_dot, as the
 * host's are. The factor, L^-1 and -K^-1 are in gp_linalg.c's one order
 * (docs/gaussian-process.md): every element
 * is its start minus each product, one at a time, in ascending order of the
 * summation index, then divided once by the diagonal element where the
 * formula has one. The blocks here (panels of the caller's width, one
 * work-item an output element) are other blocks than the host's, which is
 * why they cannot move a bit: blocking chooses only when each subtraction
 * is made. Terms the host subtracts that are products with a +0 (the zeros
 * of a triangle that its register tiles meet) are skipped here or kept, as
 * a kernel's loop bounds fall: an element that is +0 stays +0 when a signed
 * zero is subtracted, any other is unchanged.
 *
 * Under the separating arm SB_SABOTAGE_GP_DEV_ORDER (SAMEBITS_OPENCL_ARM=
 * gp-dev-order, CUDA_VARIANT=gp-dev-order) the Cholesky's diagonal block and
 * panel (gpk_sub_dot), and the products' update (either kernel), sum each element's
 * products of a step first and subtract the sum once: the fixture on a
 * device must part from its card.
 */
#include "../gp.h"

#if defined(SB_COMPAT_DEVICE) && !defined(sb_d2u)
#error "the Gaussian process program is float64: its backend must give it IEEE doubles (compat_opencl.h's SB_OCL_F64)"
#endif

/* A := K(X, X) + diag I, row-major n x n, the lower triangle; +0 above. One
 * work-item an element. */
SB_KERNEL void ke_gp_kmat(SB_GLOBAL const double *X, sb_i64 n, sb_i64 d, SB_GLOBAL const sb_i32 *nodes, sb_i32 nnodes,
                          SB_GLOBAL const double *ev, double diag, SB_GLOBAL double *A) {
    const sb_i64 e = sb_global_id(0);
    if (e >= n * n) return;
    const sb_i64 i = e / n, c = e - i * n;
    if (c > i) {
        A[e] = 0.0;
        return;
    }
    double v = gpk_eval(nodes, nnodes, ev, X + i * d, X + c * d, d, c == i, 0, 0);
    if (c == i) v = v + diag;
    A[e] = v;
}

/* K := K(Xs, X), m x n (no white kernel: two point sets). */
SB_KERNEL void ke_gp_kcross(SB_GLOBAL const double *Xs, sb_i64 m, SB_GLOBAL const double *X, sb_i64 n, sb_i64 d,
                            SB_GLOBAL const sb_i32 *nodes, sb_i32 nnodes, SB_GLOBAL const double *ev,
                            SB_GLOBAL double *K) {
    const sb_i64 e = sb_global_id(0);
    if (e >= m * n) return;
    const sb_i64 r = e / n, c = e - r * n;
    K[e] = gpk_eval(nodes, nnodes, ev, Xs + r * d, X + c * d, d, 0, 0, 0);
}

/* The diagonal block [j0, j1) of the Cholesky factor, in place, by one
 * work-group of wg work-items (rows split among them), column by column:
 * the pivot, then the block's rows below it. The products of columns
 * before j0 were subtracted by earlier trailing updates. bad[0] (-1 on
 * entry): the first column whose pivot is not > 0 (or not finite); the
 * group stops there. */
SB_KERNEL void ke_gp_chol_diag(SB_GLOBAL double *A, sb_i64 n, sb_i64 j0, sb_i64 j1, sb_i32 wg,
                               SB_GLOBAL sb_i64 *bad) {
    const sb_i64 lid = sb_local_id(0);
    for (sb_i64 c = j0; c < j1; c++) {
        SB_GLOBAL double *lc = A + c * n;
        if (lid == 0) {
            const double s = gpk_sub_dot(lc[c], lc, lc, j0, c);
            if (!(s > 0.0) || s - s != 0.0) bad[0] = c;
            else lc[c] = gpk_sqrt(s);
        }
        sb_barrier_global();
        if (bad[0] >= 0) return; /* every work-item reads the same value after the barrier */
        const double dc = lc[c];
        for (sb_i64 i = c + 1 + lid; i < j1; i += wg) {
            SB_GLOBAL double *li = A + i * n;
            li[c] = gpk_sub_dot(li[c], li, lc, j0, c) / dc;
        }
        sb_barrier_global();
    }
}

/* The panel's rows below the diagonal block: row j1 + gid, columns
 * [j0, j1) in order, each its start minus the products of the panel's
 * earlier columns, divided by the pivot. */
SB_KERNEL void ke_gp_chol_panel(SB_GLOBAL double *A, sb_i64 n, sb_i64 j0, sb_i64 j1) {
    const sb_i64 i = j1 + sb_global_id(0);
    if (i >= n) return;
    SB_GLOBAL double *li = A + i * n;
    for (sb_i64 c = j0; c < j1; c++) {
        SB_GLOBAL const double *lc = A + c * n;
        li[c] = gpk_sub_dot(li[c], li, lc, j0, c) / lc[c];
    }
}

/* C := C - op(A) op(B) over the summation indices [kb, ke), one product at
 * a time in ascending k: c(r, j) = C[coff + r ldc + j], a(r, k) = A[aoff +
 * r ar + k ak], b(k, j) = B[boff + k bk + j bj], r < m, j < nc; lower: only
 * j <= r; ktri: a(r, k) is +0 for k < r, so a row's terms start at r. One
 * work-item an element of C, which no work-item reads as A or B (the
 * callers' regions are disjoint). */
SB_KERNEL void ke_gp_gemm_sub(SB_GLOBAL double *C, sb_i64 coff, sb_i64 ldc, SB_GLOBAL const double *A, sb_i64 aoff,
                              sb_i64 ar, sb_i64 ak, SB_GLOBAL const double *B, sb_i64 boff, sb_i64 bk, sb_i64 bj,
                              sb_i64 m, sb_i64 nc, sb_i64 kb, sb_i64 ke, sb_i32 lower, sb_i32 ktri) {
    const sb_i64 e = sb_global_id(0);
    if (e >= m * nc) return;
    const sb_i64 r = e / nc, j = e - r * nc;
    if (lower && j > r) return;
    sb_i64 k0 = kb;
    if (ktri && r > k0) k0 = r;
    SB_GLOBAL const double *a = A + aoff + r * ar;
    SB_GLOBAL const double *b = B + boff + j * bj;
    double c = C[coff + r * ldc + j];
#if defined(SB_SABOTAGE_GP_DEV_ORDER)
    double s = 0.0; /* the arm: the products summed, then subtracted once */
    for (sb_i64 k = k0; k < ke; k++) s = s + a[k * ak] * b[k * bk];
    c = c - s;
#else
    for (sb_i64 k = k0; k < ke; k++) c = c - a[k * ak] * b[k * bk];
#endif
    C[coff + r * ldc + j] = c;
}

/* ke_gp_gemm_sub's contract by tiles of GPK_T x GPK_T outputs, one
 * work-group a tile (launched only where the work-group is GPK_T^2 = 256
 * work-items): the tile's rows of op(A) and columns of op(B) pass through
 * local memory GPK_T summation indices at a time, and each element takes
 * exactly ke_gp_gemm_sub's terms (k in [its first, ke), ascending), so the
 * two kernels give the same bits; the tiles only share the loads. Tiles
 * wholly above the diagonal (lower) are skipped; a tile's index t is row
 * tile t / ntc, column tile t mod ntc. */
#define GPK_T 16
SB_KERNEL void ke_gp_gemm_tile(SB_GLOBAL double *C, sb_i64 coff, sb_i64 ldc, SB_GLOBAL const double *A, sb_i64 aoff,
                               sb_i64 ar, sb_i64 ak, SB_GLOBAL const double *B, sb_i64 boff, sb_i64 bk, sb_i64 bj,
                               sb_i64 m, sb_i64 nc, sb_i64 kb, sb_i64 ke, sb_i32 lower, sb_i32 ktri, sb_i64 ntc) {
    SB_SHARED double as[GPK_T][GPK_T + 1];
    SB_SHARED double bs[GPK_T][GPK_T + 1];
    const sb_i64 t = sb_group_id(0);
    const sb_i64 r0 = (t / ntc) * GPK_T, j0 = (t - (t / ntc) * ntc) * GPK_T;
    if (lower && j0 > r0 + GPK_T - 1) return; /* the whole group: the tile lies above the diagonal */
    const int lid = sb_local_id(0), ty = lid / GPK_T, tx = lid - (lid / GPK_T) * GPK_T;
    const sb_i64 r = r0 + ty, j = j0 + tx;
    const int mine = r < m && j < nc && (!lower || j <= r);
    sb_i64 k0 = kb; /* this element's first term */
    if (ktri && r > k0) k0 = r;
    sb_i64 ks = kb; /* the tile's first: its smallest row's */
    if (ktri && r0 > ks) ks = r0;
    double c = mine ? C[coff + r * ldc + j] : 0.0;
    for (sb_i64 kt = ks; kt < ke; kt += GPK_T) {
        /* as[row][k]: a(r0 + ty, kt + tx); bs[k][col]: b(kt + ty, j0 + tx) */
        const sb_i64 ka = kt + tx, kbb = kt + ty;
        as[ty][tx] = (r0 + ty < m && ka < ke) ? A[aoff + (r0 + ty) * ar + ka * ak] : 0.0;
        bs[ty][tx] = (j0 + tx < nc && kbb < ke) ? B[boff + kbb * bk + (j0 + tx) * bj] : 0.0;
        sb_barrier();
        if (mine) {
#if defined(SB_SABOTAGE_GP_DEV_ORDER)
            double s = 0.0; /* the arm: the tile's products summed, then subtracted once */
            for (int q = 0; q < GPK_T; q++) {
                const sb_i64 k = kt + q;
                if (k >= k0 && k < ke) s = s + as[ty][q] * bs[q][tx];
            }
            c = c - s;
#else
            for (int q = 0; q < GPK_T; q++) {
                const sb_i64 k = kt + q;
                if (k >= k0 && k < ke) c = c - as[ty][q] * bs[q][tx];
            }
#endif
        }
        sb_barrier();
    }
    if (mine) C[coff + r * ldc + j] = c;
}

/* Z := the identity (n x n). */
SB_KERNEL void ke_gp_eye(SB_GLOBAL double *Z, sb_i64 n, sb_i32 zero_only) {
    const sb_i64 e = sb_global_id(0);
    if (e >= n * n) return;
    const sb_i64 i = e / n;
    Z[e] = (!zero_only && e == i * n + i) ? 1.0 : 0.0;
}

/* The block rows [k0, k1) of Z = L^-1, column gid (< k1): each row i's
 * element its start (the identity less the earlier blocks' products) minus
 * l_ik z_kc for k in [k0, i) in order, divided by l_ii. Columns are
 * independent: a column reads only itself and L. */
SB_KERNEL void ke_gp_inv_block(SB_GLOBAL const double *L, SB_GLOBAL double *Z, sb_i64 n, sb_i64 k0, sb_i64 k1) {
    const sb_i64 c = sb_global_id(0);
    if (c >= k1) return;
    for (sb_i64 i = k0; i < k1; i++) {
        if (c > i) continue;
        SB_GLOBAL const double *li = L + i * n;
        double z = Z[i * n + c];
        for (sb_i64 k = k0; k < i; k++) z = z - li[k] * Z[k * n + c];
        Z[i * n + c] = z / li[i];
    }
}

/* W := sum over targets of a_i a_c (in target order, from 0) + t N, the
 * lower triangle in place of N (n x n); a: n x t. */
SB_KERNEL void ke_gp_wmat(SB_GLOBAL double *N, SB_GLOBAL const double *a, sb_i64 n, sb_i64 t) {
    const sb_i64 e = sb_global_id(0);
    if (e >= n * n) return;
    const sb_i64 i = e / n, c = e - i * n;
    if (c > i) return;
    double s = 0.0;
    for (sb_i64 q = 0; q < t; q++) s = s + a[i * t + q] * a[c * t + q];
    N[e] = s + (double)t * N[e];
}

/* Row gid of the gradient's terms: part[i npar + p] = 2 (sum over c < i of
 * W_ic dK_ic/dtheta_p, c ascending) + W_ii dK_ii/dtheta_p. */
SB_KERNEL void ke_gp_grad(SB_GLOBAL const double *X, sb_i64 n, sb_i64 d, SB_GLOBAL const sb_i32 *nodes, sb_i32 nnodes,
                          SB_GLOBAL const double *ev, sb_i32 npar, SB_GLOBAL const double *W,
                          SB_GLOBAL double *part) {
    const sb_i64 i = sb_global_id(0);
    if (i >= n) return;
    double g[GPK_MAX_PARAMS], s[GPK_MAX_PARAMS];
    SB_GLOBAL const double *xi = X + i * d;
    SB_GLOBAL const double *wi = W + i * n;
    for (sb_i32 p = 0; p < npar; p++) s[p] = 0.0;
    for (sb_i64 c = 0; c < i; c++) {
        gpk_eval(nodes, nnodes, ev, xi, X + c * d, d, 0, 1, g);
        const double w = wi[c];
        for (sb_i32 p = 0; p < npar; p++) s[p] = s[p] + w * g[p];
    }
    gpk_eval(nodes, nnodes, ev, xi, xi, d, 1, 1, g);
    for (sb_i32 p = 0; p < npar; p++) part[i * npar + p] = 2.0 * s[p] + wi[i] * g[p];
}
