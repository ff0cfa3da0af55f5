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

#endif
