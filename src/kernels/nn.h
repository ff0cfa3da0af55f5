/*
 * nn.h: the per-value arithmetic of the network building blocks
 * (src/models/nn/, docs/mlp.md), written once for the host, CUDA and OpenCL
 * (compat vocabulary). The host's loops (nn_act.c, nn_loss.c, nn_optim.c)
 * and the device's entry kernels (entry/nn_entry.h) call these same
 * functions, so a value's sequence of float32 roundings is one text:
 *  - activations and their derivatives from the profile's own correctly
 *    rounded sb_sigmoidf and sb_tanhf;
 *  - the loss terms added into an exact superaccumulator (sb_sacc), whose
 *    rounded sum has one value whatever the order or grouping of the terms;
 *  - one value's Adam or SGD update, each operation rounded in the order
 *    written; sqrt correctly rounded on every target (OpenCL is built with
 *    -cl-fp32-correctly-rounded-divide-sqrt, CUDA with -prec-sqrt=true and
 *    __fsqrt_rn, the host's IEEE square root).
 * No contraction anywhere (the profile's flags; FP_CONTRACT OFF on OpenCL).
 */
#ifndef SB_KERNELS_NN_H
#define SB_KERNELS_NN_H
#include "compat.h"
#include "../math/sb_math.h"

/* The activations (nn_act in src/models/nn/nn.h). */
#define SB_NN_IDENTITY 0
#define SB_NN_LOGISTIC 1
#define SB_NN_TANH 2
#define SB_NN_RELU 3
#define SB_NN_GELU 4
#define SB_NN_SILU 5

/* The losses of a batch (sb_nn_loss_terms): softmax log-loss, logistic
 * (binary and multilabel) log-loss, squared error. */
#define SB_NN_LOSS_SOFTMAX 0
#define SB_NN_LOSS_LOGISTIC 1
#define SB_NN_LOSS_SQUARED 2

#if defined(__OPENCL_VERSION__)
#define sb_nn_sqrtf(x) sqrt(x)
#elif defined(__CUDACC__)
#define sb_nn_sqrtf(x) __fsqrt_rn(x)
#else
#define sb_nn_sqrtf(x) __builtin_sqrtf(x)
#endif

/* GELU's tanh form (Hendrycks and Gimpel, "Gaussian Error Linear Units",
 * 2016): u = c (x + k x^3), c = sqrt(2/pi) rounded to float32, k = 0.044715. */
#define SB_NN_GELU_C 0.7978845608f
#define SB_NN_GELU_K 0.044715f

SB_FN float sb_nn_gelu_u(float x) { return SB_NN_GELU_C * (x + SB_NN_GELU_K * (x * x * x)); }

/* act(x) for one value. */
SB_FN float sb_nn_act(sb_i32 a, float x) {
    if (a == SB_NN_LOGISTIC) return sb_sigmoidf(x);
    if (a == SB_NN_TANH) return sb_tanhf(x);
    if (a == SB_NN_RELU) return x > 0.0f ? x : 0.0f;
    if (a == SB_NN_GELU) return (0.5f * x) * (1.0f + sb_tanhf(sb_nn_gelu_u(x)));
    if (a == SB_NN_SILU) return x * sb_sigmoidf(x);
    return x;
}

/* The delta d times act'(.) for one value, the derivative from the output y
 * (scikit-learn's four: logistic y(1 - y), tanh 1 - y^2, relu 0 where
 * y == 0) or from the pre-activation x (GELU, SiLU). */
SB_FN float sb_nn_act_back(sb_i32 a, float x, float y, float d) {
    if (a == SB_NN_LOGISTIC) return d * (y * (1.0f - y));
    if (a == SB_NN_TANH) return d * (1.0f - y * y);
    if (a == SB_NN_RELU) return y == 0.0f ? 0.0f : d;
    if (a == SB_NN_GELU) {
        /* d/dx = (1 + t)/2 + (x/2)(1 - t^2) c (1 + 3 k x^2), t = tanh(u) */
        const float t = sb_tanhf(sb_nn_gelu_u(x));
        const float du = SB_NN_GELU_C * (1.0f + (3.0f * SB_NN_GELU_K) * (x * x));
        const float g = 0.5f * (1.0f + t) + ((0.5f * x) * (1.0f - t * t)) * du;
        return d * g;
    }
    if (a == SB_NN_SILU) {
        /* d/dx = s (1 + x (1 - s)), s = sigmoid(x) */
        const float s = sb_sigmoidf(x);
        return d * (s * (1.0f + x * (1.0f - s)));
    }
    return d;
}

#define SB_NN_LL_EPS 0x1.0p-23f /* numpy's finfo(float32).eps, scikit-learn's clip */

SB_FN float sb_nn_clip(float p) {
    return p < SB_NN_LL_EPS ? SB_NN_LL_EPS : (p > 1.0f - SB_NN_LL_EPS ? 1.0f - SB_NN_LL_EPS : p);
}

/* Adds the loss terms of values [i0, i1) of outputs P against targets Y to
 * acc: log-loss's y log p (and, for logistic outputs, (1 - y) log(1 - p)),
 * p clipped to [eps, 1 - eps], terms of a zero factor skipped; squared
 * error's (y - p)^2. The caller rounds and scales the exact sum. */
SB_FN void sb_nn_loss_terms(sb_sacc *acc, sb_i32 kind, SB_GLOBAL const float *P, SB_GLOBAL const float *Y, sb_i64 i0,
                            sb_i64 i1) {
    for (sb_i64 i = i0; i < i1; i++) {
        if (kind == SB_NN_LOSS_SQUARED) {
            const float d = Y[i] - P[i];
            sb_sacc_add(acc, d * d);
            continue;
        }
        const float p = sb_nn_clip(P[i]), y = Y[i];
        if (y != 0.0f) sb_sacc_add(acc, y * sb_logf(p));
        if (kind == SB_NN_LOSS_LOGISTIC && y != 1.0f) sb_sacc_add(acc, (1.0f - y) * sb_logf(1.0f - p));
    }
}

/* The batch's loss from the exact sum s of its terms (rounded once) over m
 * rows of n outputs: log-loss -s / m, squared error s / (m n) / 2. */
SB_FN float sb_nn_loss_of(sb_i32 kind, float s, sb_i64 m, sb_i64 n) {
    return kind == SB_NN_LOSS_SQUARED ? s / (float)(m * n) / 2.0f : -s / (float)m;
}

/* One value's Adam step (Kingma and Ba, ICLR 2015, as scikit-learn spells
 * it): m := b1 m + c1 g, v := b2 v + c2 g^2, p := p - lr_t m / (sqrt(v) +
 * eps), c1 = 1 - b1 and c2 = 1 - b2 as the caller rounded them. */
SB_FN void sb_nn_adam1(SB_GLOBAL float *p, SB_GLOBAL float *m, SB_GLOBAL float *v, float g, float lr_t, float b1,
                       float b2, float c1, float c2, float eps) {
    const float mi = b1 * *m + c1 * g;
    const float vi = b2 * *v + c2 * (g * g);
    *m = mi;
    *v = vi;
    *p = *p - (lr_t * mi) / (sb_nn_sqrtf(vi) + eps);
}

/* One value's SGD step with momentum: u := mu u - lr g, then p := p + u, or
 * with Nesterov's momentum p := p + (mu u - lr g). */
SB_FN void sb_nn_sgd1(SB_GLOBAL float *p, SB_GLOBAL float *u, float g, float lr, float mu, sb_i32 nesterov) {
    const float step = lr * g;
    const float ui = mu * *u - step;
    *u = ui;
    *p = *p + (nesterov ? mu * ui - step : ui);
}

#endif
