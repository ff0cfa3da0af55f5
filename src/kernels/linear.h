/*
 * linear.h: device-neutral bodies for a linear model, written once for every
 * backend. The arithmetic order is part of the profile: a margin is
 * b + x0*w0 + x1*w1 + ... accumulated left to right, every product rounded
 * before its addition (no contraction), so CPU, CUDA and OpenCL agree.
 */
#ifndef SB_KERNELS_LINEAR_H
#define SB_KERNELS_LINEAR_H
#include "compat.h"
#include "../math/sb_math.h"

/* Margin of row r of a row-major matrix x with nf features. */
SB_FN float sb_k_linear_margin(const SB_GLOBAL float *x, sb_i64 r, sb_i32 nf,
                               const SB_GLOBAL float *w, float bias) {
    float m = bias;
    const SB_GLOBAL float *row = x + r * (sb_i64)nf;
    /* Written as one expression on purpose: it is exactly what a contracting
     * compiler fuses, so the profile's flags, not the spelling, must keep it
     * two roundings (the contract and excess-precision arms check that). */
    for (sb_i32 f = 0; f < nf; f++) m = m + row[f] * w[f];
    return m;
}

/* Logistic loss on one row: p = sigmoid(margin), gradient g = p - y and
 * hessian h = p * (1 - p), each a single rounding of its operands. */
SB_FN void sb_k_logistic_grad(float margin, float y, SB_GLOBAL float *g, SB_GLOBAL float *h) {
    float p = sb_sigmoidf(margin);
    *g = p - y;
    *h = p * (1.0f - p);
}

/* One row of logistic regression's loss and residuals (src/models/linear/logistic.c,
 * scikit-learn's lbfgs objective), written once for the host and every GPU:
 * z holds the row's K margins without the intercepts b, y its class, si its
 * weight. K == 1 (binary): the loss log(1 + e^-|z|) + max(z, 0) - y z and the
 * residual sigmoid(z) - y; K >= 3: z[k] += b[k] (in place), the loss
 * log sum_k e^(z_k - max) + max - z_y and the residuals softmax_k - [k == y].
 * r gets the K residuals times si; returns the loss times si. */
SB_FN float sb_k_logit_row(sb_i32 K, SB_GLOBAL float *z, SB_GLOBAL const float *b, sb_i32 y, float si,
                           SB_GLOBAL float *r) {
    if (K == 1) {
        const float zi = z[0] + b[0];
        const float yi = y == 1 ? 1.0f : 0.0f;
        float en;
        const float sg = sb_sigmoid_expneg(zi, &en); /* sb_sigmoidf(zi), en = sb_expf(-|zi|) */
        const float li = sb_log1pf(en) + (zi > 0.0f ? zi : 0.0f) - yi * zi;
        r[0] = si * (sg - yi);
        return si * li;
    }
    float mx = sb_u2f(0xFF800000u); /* -inf */
    for (sb_i32 k = 0; k < K; k++) {
        z[k] = z[k] + b[k];
        if (z[k] > mx) mx = z[k];
    }
    float sum = 0.0f;
    for (sb_i32 k = 0; k < K; k++) {
        r[k] = sb_expf(z[k] - mx);
        sum = sum + r[k];
    }
    const float li = sb_logf(sum) + mx - z[y];
    for (sb_i32 k = 0; k < K; k++) r[k] = si * (r[k] / sum - (k == y ? 1.0f : 0.0f));
    return si * li;
}

#endif
