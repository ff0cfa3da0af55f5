/*
 * kde.h: the kernel sum of kernel density (src/models/neighbors/kde.c's
 * kd_one) for one query, written once for the host and every GPU in the
 * integer binary64 of f64.h: every double operation of the host's, in the
 * host's order, so the sum s and the largest term's exponent tmin have the
 * host's bits on any device (the host finishes the log density from them).
 *  - the squared distance in four lanes (features f with f mod 4 == l in
 *    feature order, the lanes added as (l0 + l1) + (l2 + l3)): kd_sqdist2's;
 *  - gaussian and exponential: the minimum distance over the rows of positive
 *    weight (a first pass: a minimum is exact), then the sum in row order of
 *    w e^-(t - tmin), the exponent rounded to float32 once and its
 *    exponential the profile's sb_expf, the terms past KD_EXP_ZERO skipped;
 *  - the compact kernels: the rows with sqrt(D) < h in row order.
 * The distances are recomputed in each pass rather than kept (the same
 * operations give the same bits): a GPU holds no n doubles a query.
 */
#ifndef SB_KERNELS_KDE_H
#define SB_KERNELS_KDE_H
#include "compat.h"
#include "f64.h"
#include "../math/sb_math.h"

/* The kernel numbers (sb_kde_kernel in src/models/neighbors/kde.h). */
#define SB_KD_GAUSSIAN 0
#define SB_KD_TOPHAT 1
#define SB_KD_EPANECHNIKOV 2
#define SB_KD_EXPONENTIAL 3
#define SB_KD_LINEAR 4
#define SB_KD_COSINE 5

#define SB_KD_F64_EXP_ZERO ((sb_u64)0x405A000000000000u) /* 104.0: kde.c's KD_EXP_ZERO */
#define SB_KD_F64_HALF_PI ((sb_u64)0x3FF921FB54442D18u)  /* kde.c's KD_HALF_PI */
#define SB_KD_F64_INF ((sb_u64)0x7FF0000000000000u)

/* The exponential of the gaussian and exponential terms: the profile's
 * sb_expf; on a GPU under the separating arm SB_ARM_VENDOR_EXP
 * (SAMEBITS_OPENCL_ARM=vendor-exp, CUDA_VARIANT=libdevice-exp) the vendor's. */
#if defined(SB_ARM_VENDOR_EXP) && defined(SB_COMPAT_DEVICE)
#define SB_KD_EXPF(x) sb_vendor_expf(x)
#else
#define SB_KD_EXPF(x) sb_expf(x)
#endif

/* kde.c's cosine Taylor coefficients (k_cos_c), as their bits
 * (tests/unit/test_kde.c checks them against the host's). */
SB_TABLE sb_u64 sb_kd_cos_c[13] = {
    (sb_u64)0x3FF0000000000000u, (sb_u64)0xBFE0000000000000u, (sb_u64)0x3FA5555555555555u,
    (sb_u64)0xBF56C16C16C16C17u, (sb_u64)0x3EFA01A01A01A01Au, (sb_u64)0xBE927E4FB7789F5Cu,
    (sb_u64)0x3E21EED8EFF8D898u, (sb_u64)0xBDA93974A8C07C9Du, (sb_u64)0x3D2AE7F3E733B81Fu,
    (sb_u64)0xBCA6827863B97D97u, (sb_u64)0x3C1E542BA4020225u, (sb_u64)0xBB90CE396DB7F853u,
    (sb_u64)0x3AFF2CF01972F578u};

/* kd_cos(t): Horner in t^2, kde.c's operations. */
SB_FN sb_u64 sb_kd_cos(sb_u64 t) {
    const sb_u64 u = sb_f64_mul(t, t);
    sb_u64 c = sb_kd_cos_c[12];
    for (int k = 11; k >= 0; k--) c = sb_f64_add(sb_f64_mul(c, u), sb_kd_cos_c[k]);
    return c;
}

/* The squared distance of query q and row y (d features): kd_sqdist2's value. */
SB_FN sb_u64 sb_kd_sqdist(SB_GLOBAL const float *q, SB_GLOBAL const float *y, sb_i32 d) {
    sb_u64 a0 = 0u, a1 = 0u, a2 = 0u, a3 = 0u;
    sb_i32 f = 0;
    for (; f + 4 <= d; f += 4) {
        const sb_u64 t0 = sb_f64_sub(sb_f64_of(q[f]), sb_f64_of(y[f]));
        const sb_u64 t1 = sb_f64_sub(sb_f64_of(q[f + 1]), sb_f64_of(y[f + 1]));
        const sb_u64 t2 = sb_f64_sub(sb_f64_of(q[f + 2]), sb_f64_of(y[f + 2]));
        const sb_u64 t3 = sb_f64_sub(sb_f64_of(q[f + 3]), sb_f64_of(y[f + 3]));
        a0 = sb_f64_add(a0, sb_f64_mul(t0, t0));
        a1 = sb_f64_add(a1, sb_f64_mul(t1, t1));
        a2 = sb_f64_add(a2, sb_f64_mul(t2, t2));
        a3 = sb_f64_add(a3, sb_f64_mul(t3, t3));
    }
    if (f < d) {
        const sb_u64 t = sb_f64_sub(sb_f64_of(q[f]), sb_f64_of(y[f]));
        a0 = sb_f64_add(a0, sb_f64_mul(t, t));
        f++;
    }
    if (f < d) {
        const sb_u64 t = sb_f64_sub(sb_f64_of(q[f]), sb_f64_of(y[f]));
        a1 = sb_f64_add(a1, sb_f64_mul(t, t));
        f++;
    }
    if (f < d) {
        const sb_u64 t = sb_f64_sub(sb_f64_of(q[f]), sb_f64_of(y[f]));
        a2 = sb_f64_add(a2, sb_f64_mul(t, t));
    }
    return sb_f64_add(sb_f64_add(a0, a1), sb_f64_add(a2, a3));
}

/* The host's scalars of one model, as bits (kde.c's kd_job: 1/h, 1/(2h^2),
 * h, h^2, and h2_hi past which sqrt(D) >= h surely). */
typedef struct sb_kd_scalars {
    sb_u64 invh, inv2h2, h, h2, h2_hi;
} sb_kd_scalars;

/* Row r's place in the sum's order (SB_SABOTAGE_KDE_ORDER, make
 * SABOTAGE=kde-order, CUDA_VARIANT=kde-order, SAMEBITS_OPENCL_ARM=kde-order:
 * the sum in reversed order, the separating arm). */
SB_FN sb_i64 sb_kd_row(sb_i64 j, sb_i64 n) {
#if defined(SB_SABOTAGE_KDE_ORDER)
    return n - 1 - j;
#else
    (void)n;
    return j;
#endif
}

/* Query q's kernel sum into out[0] and the exponent tmin of its largest term
 * into out[1] (+0 for the compact kernels), as binary64 bits; x the n
 * training rows (d features), w their weights when hw (else read nowhere). */
SB_FN void sb_kd_sum(SB_GLOBAL const float *q, SB_GLOBAL const float *x, sb_i64 n, sb_i32 d,
                     SB_GLOBAL const float *w, sb_i32 hw, sb_i32 kern, sb_kd_scalars c, SB_GLOBAL sb_u64 *out) {
    sb_u64 s = 0u, tmin = 0u;
    if (kern == SB_KD_GAUSSIAN || kern == SB_KD_EXPONENTIAL) {
        const int gauss = kern == SB_KD_GAUSSIAN;
        sb_u64 dmin = SB_KD_F64_INF; /* nonnegative doubles order as their bits */
        for (sb_i64 r = 0; r < n; r++) {
            if (hw && !(w[r] > 0.0f)) continue;
            const sb_u64 D = sb_kd_sqdist(q, x + r * d, d);
            if (D < dmin) dmin = D;
        }
        tmin = gauss ? sb_f64_mul(dmin, c.inv2h2) : sb_f64_mul(sb_f64_sqrt(dmin), c.invh);
        for (sb_i64 j = 0; j < n; j++) {
            const sb_i64 r = sb_kd_row(j, n);
            if (hw && !(w[r] > 0.0f)) continue;
            const sb_u64 D = sb_kd_sqdist(q, x + r * d, d);
            const sb_u64 t =
                sb_f64_sub(gauss ? sb_f64_mul(D, c.inv2h2) : sb_f64_mul(sb_f64_sqrt(D), c.invh), tmin);
            if (t > SB_KD_F64_EXP_ZERO) continue; /* t >= 0: its bits order it */
            const sb_u64 e = sb_f64_of(SB_KD_EXPF(-sb_f64_to_f32(t)));
            s = sb_f64_add(s, hw ? sb_f64_mul(sb_f64_of(w[r]), e) : e); /* 1.0 * e is e */
        }
    } else {
        for (sb_i64 j = 0; j < n; j++) {
            const sb_i64 r = sb_kd_row(j, n);
            if (hw && !(w[r] > 0.0f)) continue;
            const sb_u64 D = sb_kd_sqdist(q, x + r * d, d);
            if (D > c.h2_hi) continue;
            const sb_u64 dist = sb_f64_sqrt(D);
            if (!(dist < c.h)) continue;
            sb_u64 v;
            if (kern == SB_KD_TOPHAT) v = SB_F64_ONE;
            else if (kern == SB_KD_EPANECHNIKOV) v = sb_f64_sub(SB_F64_ONE, sb_f64_div(D, c.h2));
            else if (kern == SB_KD_LINEAR) v = sb_f64_sub(SB_F64_ONE, sb_f64_mul(dist, c.invh));
            else v = sb_kd_cos(sb_f64_mul(SB_KD_F64_HALF_PI, sb_f64_mul(dist, c.invh)));
            if ((v >> 63) || !(v << 1)) continue; /* v > 0 only */
            s = sb_f64_add(s, hw ? sb_f64_mul(sb_f64_of(w[r]), v) : v);
        }
    }
    out[0] = s;
    out[1] = tmin;
}

#endif
