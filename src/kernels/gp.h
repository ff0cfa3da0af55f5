/*
 * gp.h: the kernel expression of Gaussian process regression
 * (docs/gaussian-process.md), one pair of points at a time, written once
 * for the host (src/models/gp/gp.c calls it for every kernel value and
 * derivative it uses) and for the float64 device program
 * (kernels/entry/gp_entry.h, CUDA and OpenCL where the device has IEEE
 * doubles). IEEE binary64, + - * / and sqrt (correctly rounded on both
 * backends: CUDA's double sqrt, OpenCL's double sqrt are exact roundings),
 * the profile's double exp and log (f64_exp.h, f64_log.h), no contraction.
 *
 * The expression is an array of nodes in which a sum's or product's
 * operands come before it (gp_kernel_check's rule: the parser makes them in
 * that order), so evaluating the nodes in index order is evaluating each
 * subtree before its parent: every value and every derivative gets the
 * same operations, in the same order, as the recursive definition (a
 * parameter's derivative is made at its leaf, then multiplied by each
 * enclosing product's other factor from the innermost out).
 */
#ifndef SB_KERNELS_GP_H
#define SB_KERNELS_GP_H
#include "compat.h"
#include "f64_exp.h"
#include "f64_log.h"

#define GPK_NODE 7          /* ints of a node: kind, a, b, p0, p1, nls, nu2 (gp.h's gp_node) */
#define GPK_MAX_NODES 32    /* gp.h's GP_MAX_NODES */
#define GPK_MAX_PARAMS 256  /* gp.h's GP_MAX_PARAMS */
enum { GPK_CONST, GPK_WHITE, GPK_RBF, GPK_MATERN, GPK_RQ, GPK_SUM, GPK_PROD };

#if defined(SB_COMPAT_DEVICE)
#define gpk_sqrt(x) sqrt(x)
#else
#define gpk_sqrt(x) __builtin_sqrt(x)
#endif

/* e^x: NaN passes, below -708 +0 (a value under 2^-1021 that no sum here
 * can see), above 709 +infinity, else the profile's exp. */
SB_FN double gpk_exp(double x) {
    if (x != x) return x;
    if (x < -708.0) return 0.0;
    if (x > 709.0) return sb_u2d((sb_u64)0x7FF00000u << 32);
    return sb__hx_exp(x);
}

/* log v for v > 0 finite (0: -infinity; negative: NaN; +infinity and NaN
 * pass through), near 1 through log1p's series, a subnormal scaled by 2^200
 * first. */
SB_FN double gpk_log(double v) {
    if (!(v > 0.0)) return v == 0.0 ? sb_u2d((sb_u64)0xFFF00000u << 32) : sb_u2d((sb_u64)0x7FF80000u << 32);
    if (v - v != 0.0) return v;
    double shift = 0.0;
    if (v < 0x1p-1000) v = v * 0x1p200, shift = -200.0 * 0.6931471805599453;
    const double dd = v - 1.0;
    const double r = (dd < 0x1p-6 && dd > -0x1p-6) ? sb__hx_log1p_small(dd) : sb__hx_log(v);
    return r + shift;
}

/* The squared distance of x and y scaled by the length scales ls (nls of
 * them: 1 or d), in feature order; with want, each feature's term in dk. */
SB_FN double gpk_r2(SB_GLOBAL const double *x, SB_GLOBAL const double *y, sb_i64 d, SB_GLOBAL const double *ls,
                    sb_i32 nls, int want, double *dk) {
    double r2 = 0.0;
    for (sb_i64 f = 0; f < d; f++) {
        const double q = (x[f] - y[f]) / ls[nls == 1 ? 0 : f];
        const double q2 = q * q;
        if (want && nls > 1) dk[f] = q2;
        r2 = r2 + q2;
    }
    return r2;
}

/* s less the products x[k] y[k], k in [k0, k1) ascending, one subtraction
 * at a time: every element of the Cholesky factor's blocks, on the host
 * (gp_linalg.c's diagonal blocks) and on a device (gp_entry.h's diagonal
 * block and panel). Under a separating arm (the host's
 * SB_SABOTAGE_GP_CHOL_ORDER, make SABOTAGE=gp-chol-order; a device's
 * SB_SABOTAGE_GP_DEV_ORDER, its compiler's flag alone) the products are
 * summed first and subtracted once: another order the cards must catch. */
SB_FN double gpk_sub_dot(double s, SB_GLOBAL const double *x, SB_GLOBAL const double *y, sb_i64 k0, sb_i64 k1) {
#if defined(SB_SABOTAGE_GP_CHOL_ORDER) || defined(SB_SABOTAGE_GP_DEV_ORDER)
    double t = 0.0;
    for (sb_i64 k = k0; k < k1; k++) t = t + x[k] * y[k];
    return s - t;
#else
    for (sb_i64 k = k0; k < k1; k++) s = s - x[k] * y[k];
    return s;
#endif
}

/* The kernel's value for the pair (x, y) (same: the pair is one training
 * point with itself, the white kernel's only nonzero) and, with want, the
 * derivative by each log hyperparameter in grad[0 .. npar). nodes: nnodes
 * nodes of GPK_NODE ints, the root last; ev: each hyperparameter's value. */
SB_FN double gpk_eval(SB_GLOBAL const sb_i32 *nodes, sb_i32 nnodes, SB_GLOBAL const double *ev,
                      SB_GLOBAL const double *x, SB_GLOBAL const double *y, sb_i64 d, int same, int want,
                      double *grad) {
    double val[GPK_MAX_NODES];
    for (sb_i32 v = 0; v < nnodes; v++) {
        SB_GLOBAL const sb_i32 *nd = nodes + (sb_i64)GPK_NODE * v;
        const sb_i32 kind = nd[0], p0 = nd[3], nls = nd[5], nu2 = nd[6];
        double kv;
        if (kind == GPK_CONST) {
            kv = ev[p0];
            if (want) grad[p0] = kv;
        } else if (kind == GPK_WHITE) {
            kv = same ? ev[p0] : 0.0;
            if (want) grad[p0] = kv;
        } else if (kind == GPK_RBF) {
            const double r2 = gpk_r2(x, y, d, ev + p0, nls, want, want ? grad + p0 : grad);
            kv = gpk_exp(-0.5 * r2);
            if (want) {
                if (nls == 1) grad[p0] = kv * r2;
                else
                    for (sb_i32 f = 0; f < nls; f++) grad[p0 + f] = kv * grad[p0 + f];
            }
        } else if (kind == GPK_MATERN) {
            const double r2 = gpk_r2(x, y, d, ev + p0, nls, want, want ? grad + p0 : grad);
            const double r = gpk_sqrt(r2);
            double g; /* the factor of each feature's term (or of r2) in the derivative */
            if (nu2 == 1) {
                const double e = gpk_exp(-r);
                kv = e;
                g = r > 0.0 ? e / r : 0.0;
            } else if (nu2 == 3) {
                const double s = 1.7320508075688772 * r, e = gpk_exp(-s);
                kv = (1.0 + s) * e;
                g = 3.0 * e;
            } else {
                /* 1.6666666666666667: 5/3 rounded to the nearest double */
                const double s = 2.23606797749979 * r, e = gpk_exp(-s);
                kv = ((1.0 + s) + 1.6666666666666667 * r2) * e;
                g = 1.6666666666666667 * ((1.0 + s) * e);
            }
            if (want) {
                if (nls == 1) grad[p0] = g * r2;
                else
                    for (sb_i32 f = 0; f < nls; f++) grad[p0 + f] = g * grad[p0 + f];
            }
        } else if (kind == GPK_RQ) {
            const double al = ev[p0];
            const double r2 = gpk_r2(x, y, d, ev + p0 + 1, 1, 0, grad);
            const double base = 1.0 + r2 / (2.0 * al), lb = gpk_log(base);
            kv = gpk_exp(-al * lb);
            if (want) {
                grad[p0] = kv * (r2 / (2.0 * base) - al * lb);
                grad[p0 + 1] = kv * (r2 / base);
            }
        } else if (kind == GPK_SUM) {
            kv = val[nd[1]] + val[nd[2]];
        } else { /* GPK_PROD: the product rule */
            const double va = val[nd[1]], vb = val[nd[2]];
            if (want) {
                SB_GLOBAL const sb_i32 *na = nodes + (sb_i64)GPK_NODE * nd[1];
                SB_GLOBAL const sb_i32 *nb = nodes + (sb_i64)GPK_NODE * nd[2];
                for (sb_i32 p = na[3]; p < na[4]; p++) grad[p] = grad[p] * vb;
                for (sb_i32 p = nb[3]; p < nb[4]; p++) grad[p] = grad[p] * va;
            }
            kv = va * vb;
        }
        val[v] = kv;
    }
    return val[nnodes - 1];
}

#endif
