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
#include "../core/rng.h"

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

/* The softmax's exponential (the mlp's output softmax, the byte lm's
 * cross-entropy): the profile's sb_expf; under the separating arm
 * SB_ARM_VENDOR_EXP (SAMEBITS_OPENCL_ARM=vendor-exp, CUDA_VARIANT=libdevice-exp)
 * the vendor's. */
#if defined(SB_ARM_VENDOR_EXP) && defined(SB_COMPAT_DEVICE)
#define SB_NN_SOFTMAX_EXPF(x) sb_vendor_expf(x)
#else
#define SB_NN_SOFTMAX_EXPF(x) sb_expf(x)
#endif

/* ---- the transformer's rows (src/models/nn/nn_tf.c, the byte lm's device
 * path src/models/lm/lm_dev.c through entry/lm_entry.h) ------------------- */

/* Layer norm of one row x of n values (nn_layernorm_forward): mean = (the
 * exact sum rounded once) / n, var = (the exact sum of the rounded squares of
 * x_j - mean, rounded once) / n, rstd = 1 / sqrt(var + eps) (IEEE sqrt, then
 * the quotient), y_j = ((x_j - mean) rstd) gamma_j + beta_j. */
SB_FN void sb_nn_ln_row(SB_GLOBAL const float *x, SB_GLOBAL const float *gamma, SB_GLOBAL const float *beta, float eps,
                        sb_i64 n, SB_GLOBAL float *y, SB_GLOBAL float *mean, SB_GLOBAL float *rstd) {
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (sb_i64 j = 0; j < n; j++) sb_sacc_add(&acc, x[j]);
    const float mu = sb_sacc_round_f32(&acc) / (float)n;
    sb_sacc_init(&acc);
    for (sb_i64 j = 0; j < n; j++) {
        const float dj = x[j] - mu;
        sb_sacc_add(&acc, dj * dj);
    }
    const float var = sb_sacc_round_f32(&acc) / (float)n;
    const float r = 1.0f / sb_nn_sqrtf(var + eps);
    for (sb_i64 j = 0; j < n; j++) y[j] = ((x[j] - mu) * r) * gamma[j] + beta[j];
    *mean = mu;
    *rstd = r;
}

/* The backward pass of one row (nn_layernorm_backward): xhat_j = (x_j -
 * mean) rstd, g_j = dy_j gamma_j, a and b the exact sums of g_j and g_j
 * xhat_j rounded once and divided by n, dx_j = rstd ((g_j - a) - xhat_j b);
 * t_j = dy_j xhat_j (dgamma's column terms). */
SB_FN void sb_nn_ln_back_row(SB_GLOBAL const float *x, SB_GLOBAL const float *gamma, float mu, float r,
                             SB_GLOBAL const float *dy, sb_i64 n, SB_GLOBAL float *dx, SB_GLOBAL float *t) {
    sb_sacc sa, sb;
    sb_sacc_init(&sa);
    sb_sacc_init(&sb);
    for (sb_i64 j = 0; j < n; j++) {
        const float xh = (x[j] - mu) * r, g = dy[j] * gamma[j];
        sb_sacc_add(&sa, g);
        sb_sacc_add(&sb, g * xh);
        t[j] = dy[j] * xh;
    }
    const float a = sb_sacc_round_f32(&sa) / (float)n, b = sb_sacc_round_f32(&sb) / (float)n;
    for (sb_i64 j = 0; j < n; j++) {
        const float xh = (x[j] - mu) * r, g = dy[j] * gamma[j];
        dx[j] = r * ((g - a) - xh * b);
    }
}

/* Row i of a causal attention's T x T scores (raw q . k products) becomes
 * its probabilities (nn_attention_forward): s_j = row_j scale for j <= i,
 * e_j = sb_expf(s_j - max), p_j = e_j / S with S the exact sum of the e_j
 * rounded once; p_j = 0 for j > i. The separating arm lm-attn-order adds
 * the e_j in float32 from the last down instead: another order, another
 * value on some rows. */
SB_FN void sb_nn_attn_softmax_row(SB_GLOBAL float *row, sb_i64 i, sb_i64 T, float scale) {
    float mx = row[0] * scale;
    for (sb_i64 j = 0; j <= i; j++) {
        row[j] = row[j] * scale;
        if (row[j] > mx) mx = row[j];
    }
    for (sb_i64 j = 0; j <= i; j++) row[j] = sb_expf(row[j] - mx);
#ifdef SB_SABOTAGE_LM_ATTN_ORDER
    float s = 0.0f;
    for (sb_i64 j = i; j >= 0; j--) s = s + row[j];
#else
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (sb_i64 j = 0; j <= i; j++) sb_sacc_add(&acc, row[j]);
    const float s = sb_sacc_round_f32(&acc);
#endif
    for (sb_i64 j = 0; j <= i; j++) row[j] = row[j] / s;
    for (sb_i64 j = i + 1; j < T; j++) row[j] = 0.0f;
}

/* Row i of the attention's score gradient (nn_attention_backward): r holds
 * dp = dO V^T, p the probabilities; ri = the exact sum of the rounded p_j
 * dp_j (j <= i) rounded once, ds_j = (p_j (dp_j - ri)) scale, 0 for j > i. */
SB_FN void sb_nn_attn_dsoft_row(SB_GLOBAL const float *p, SB_GLOBAL float *r, sb_i64 i, sb_i64 T, float scale) {
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (sb_i64 j = 0; j <= i; j++) sb_sacc_add(&acc, p[j] * r[j]);
    const float ri = sb_sacc_round_f32(&acc);
    for (sb_i64 j = 0; j <= i; j++) r[j] = (p[j] * (r[j] - ri)) * scale;
    for (sb_i64 j = i + 1; j < T; j++) r[j] = 0.0f;
}

/* Cross-entropy of one row z of n logits against target y (the byte lm's
 * xent_rows): the loss (max + log S) - z_y, S the exact sum of the e_j =
 * exp(z_j - max) rounded once; with dz (not NULL; it may be z) the gradient
 * of the batch mean over rows, (e_j / S - [j == y]) / rows, e_j computed
 * again (the same value). */
SB_FN float sb_nn_xent_row(SB_GLOBAL const float *z, sb_i64 n, sb_i32 y, SB_GLOBAL float *dz, sb_i64 rows) {
    float mx = z[0];
    for (sb_i64 j = 1; j < n; j++)
        if (z[j] > mx) mx = z[j];
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (sb_i64 j = 0; j < n; j++) sb_sacc_add(&acc, SB_NN_SOFTMAX_EXPF(z[j] - mx));
    const float S = sb_sacc_round_f32(&acc);
    const float loss = (mx + sb_logf(S)) - z[y];
    if (dz)
        for (sb_i64 j = 0; j < n; j++) dz[j] = (SB_NN_SOFTMAX_EXPF(z[j] - mx) / S - (j == y ? 1.0f : 0.0f)) / (float)rows;
    return loss;
}

/* Dropout's multiplier of value i (nn_dropout_forward): keep_scale where the
 * Philox word of (seed ^ key, step, i, tensor) as a multiple of 2^-24 is >=
 * p, else 0. */
SB_FN float sb_nn_dropout_mult(sb_u64 seed, sb_u32 step, sb_u32 tensor, float p, float keep_scale, sb_i64 i) {
    sb_u32 w[4];
    sb_rng_words(seed ^ 0x64726f706f757421ull, step, (sb_u64)i, tensor, w);
    return sb_u32_to_unit_f32(w[0]) >= p ? keep_scale : 0.0f;
}

/* One value's AdamW step (nn_adamw_update), each operation rounded in this
 * order: p -= lr_wd p (decay only); m := b1 m + c1m g; v := b2 v + c2m g^2;
 * p -= (step_size m) / (sqrt(v) / sqrtc2 + eps). */
SB_FN void sb_nn_adamw1(SB_GLOBAL float *p, SB_GLOBAL float *m, SB_GLOBAL float *v, float g, sb_i32 decay, float lr_wd,
                        float step_size, float sqrtc2, float b1, float c1m, float b2, float c2m, float eps) {
    float pi = *p;
    if (decay) pi = pi - lr_wd * pi;
    const float mi = b1 * *m + c1m * g;
    const float vi = b2 * *v + c2m * (g * g);
    *m = mi;
    *v = vi;
    *p = pi - (step_size * mi) / (sb_nn_sqrtf(vi) / sqrtc2 + eps);
}

#endif
