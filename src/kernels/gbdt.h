/*
 * gbdt.h: every float operation of gradient boosting that can move a bit,
 * written once for every backend: the losses' gradients and hessians, the
 * split gain and the leaf value. Backends schedule these; none re-spells them.
 * Formulas follow Chen and Guestrin, "XGBoost: A Scalable Tree Boosting System"
 * (KDD 2016), eq. (5)-(7), with sums of quantized gradients.
 */
#ifndef SB_KERNELS_GBDT_H
#define SB_KERNELS_GBDT_H
#include "compat.h"
#include "../math/sb_math.h"

/* Smallest hessian a row may contribute (logistic and softmax saturate). */
#define SB_GBDT_MIN_HESS 1e-16f

/* Squared error: g = (pred - y) * w, h = w. */
SB_FN void sb_k_grad_squared(float pred, float y, float w, float *g, float *h) {
    *g = (pred - y) * w;
    *h = w;
}

/* Logistic loss on a margin: p = sigmoid(m), g = (p - y) w, h = max(p (1 - p), eps) w. */
SB_FN void sb_k_grad_logistic(float margin, float y, float w, float *g, float *h) {
    float p = sb_sigmoidf(margin);
    float hh = p * (1.0f - p);
    if (hh < SB_GBDT_MIN_HESS) hh = SB_GBDT_MIN_HESS;
    *g = (p - y) * w;
    *h = hh * w;
}

/* Softmax probabilities of K margins, in class order: shifted by the largest
 * margin, exponentials summed left to right, each divided by the sum. The
 * body is spelled once and instantiated for the address spaces that OpenCL C
 * 1.2 (no generic address space) needs: probabilities into private scratch
 * (gradients, sb_k_softmax) or into global memory (prediction, sb_k_softmax_g). */
#define SB_K_SOFTMAX_BODY(m, k, p)                     \
    float mx = m[0];                                   \
    for (sb_i32 c = 1; c < k; c++)                     \
        if (m[c] > mx) mx = m[c];                      \
    float s = 0.0f;                                    \
    for (sb_i32 c = 0; c < k; c++) {                   \
        p[c] = sb_expf(m[c] - mx);                     \
        s = s + p[c];                                  \
    }                                                  \
    for (sb_i32 c = 0; c < k; c++) p[c] = p[c] / s;
SB_FN void sb_k_softmax(const SB_GLOBAL float *m, sb_i32 k, float *p) { SB_K_SOFTMAX_BODY(m, k, p) }
SB_FN void sb_k_softmax_g(const SB_GLOBAL float *m, sb_i32 k, SB_GLOBAL float *p) { SB_K_SOFTMAX_BODY(m, k, p) }

/* Softmax loss, class c of a row with probabilities p and integer label y,
 * K classes: g = (p_c - [y == c]) w, h = max(f p_c (1 - p_c), eps) w with
 * f = K / (K - 1), the factor LightGBM documents for its multiclass objective
 * (Friedman, "Greedy Function Approximation", 2001, sec. 4.6: the K-class
 * Newton step carries (K - 1) / K). f is one correctly rounded division of two
 * exact integers, the same float on every backend; the products are taken in
 * the order written. */
SB_FN void sb_k_grad_softmax(float pc, sb_i32 is_label, sb_i32 K, float w, float *g, float *h) {
    const float f = (float)K / (float)(K - 1);
    float hh = f * (pc * (1.0f - pc));
    if (hh < SB_GBDT_MIN_HESS) hh = SB_GBDT_MIN_HESS;
    *g = (pc - (is_label ? 1.0f : 0.0f)) * w;
    *h = hh * w;
}

/* ---- LightGBM's regression objectives beyond squared error (issue 21) ----
 * Formulas as LightGBM's parameter documentation and its objective notes
 * state them, with s the raw score (margin), y the label, w the weight; each
 * is one fixed sequence of profile operations (exp is the profile's sb_expf). */

/* Huber loss with delta a (LightGBM's alpha): r = s - y; |r| <= a gives
 * g = r w, otherwise g = sign(r) a w; h = w (LightGBM's Huber uses a unit
 * hessian on both branches). */
SB_FN void sb_k_grad_huber(float s, float y, float w, float a, float *g, float *h) {
    const float r = s - y;
    const float ar = r < 0.0f ? -r : r;
    *g = ar <= a ? r * w : (r < 0.0f ? -a : a) * w;
    *h = w;
}

/* Quantile (pinball) loss at level a (LightGBM's alpha): r = s - y;
 * g = (1 - a) w when r >= 0, g = -a w when r < 0; h = w. */
SB_FN void sb_k_grad_quantile(float s, float y, float w, float a, float *g, float *h) {
    const float r = s - y;
    *g = (r >= 0.0f ? 1.0f - a : -a) * w;
    *h = w;
}

/* Poisson regression, log link: g = (exp(s) - y) w, h = exp(s + d) w with
 * d = poisson_max_delta_step (LightGBM: "used to safeguard optimization"). */
SB_FN void sb_k_grad_poisson(float s, float y, float w, float d, float *g, float *h) {
    *g = (sb_expf(s) - y) * w;
    *h = sb_expf(s + d) * w;
}

/* Gamma regression, log link (deviance of a gamma with mean exp(s)):
 * e = exp(-s); g = (1 - y e) w, h = (y e) w. */
SB_FN void sb_k_grad_gamma(float s, float y, float w, float *g, float *h) {
    const float ye = y * sb_expf(-s);
    *g = (1.0f - ye) * w;
    *h = ye * w;
}

/* Tweedie regression, log link, variance power rho in (1, 2):
 * a = exp((1 - rho) s), b = exp((2 - rho) s);
 * g = (-y a + b) w, h = (-y (1 - rho) a + (2 - rho) b) w. */
SB_FN void sb_k_grad_tweedie(float s, float y, float w, float rho, float *g, float *h) {
    const float a = sb_expf((1.0f - rho) * s), b = sb_expf((2.0f - rho) * s);
    *g = (-(y * a) + b) * w;
    *h = (-((y * (1.0f - rho)) * a) + (2.0f - rho) * b) * w;
}

/* A sum of quantized values back in float: one correctly rounded conversion,
 * then an exact division by the power-of-two scale (unless it underflows). */
SB_FN float sb_k_dequant(sb_i64 q, float scale) {
    return (float)q / scale;
}

/* L1 regularization as LightGBM documents lambda_l1 (soft-thresholding of a
 * gradient sum): sign(g) max(|g| - alpha, 0). alpha = 0 returns g itself (no
 * operation), so models without L1 keep their bits. */
SB_FN float sb_k_l1(float g, float alpha) {
    if (!(alpha > 0.0f)) return g;
    return g > alpha ? g - alpha : g < -alpha ? g + alpha : 0.0f;
}

/* T^2 / (H + lambda) with T = sb_k_l1(G, alpha): the structure score of a
 * leaf (0 when H + lambda <= 0). */
SB_FN float sb_k_leaf_score(float g, float h, float lambda, float alpha) {
    float d = h + lambda;
    g = sb_k_l1(g, alpha);
    return d > 0.0f ? g * g / d : 0.0f;
}

/* Gain of a split: (score(L) + score(R) - score(parent)) / 2, in that order. */
SB_FN float sb_k_split_gain(float score_l, float score_r, float score_parent) {
    return 0.5f * ((score_l + score_r) - score_parent);
}

/* Leaf value: -T / (H + lambda) with T = sb_k_l1(G, alpha), times the
 * learning rate. */
SB_FN float sb_k_leaf_value(float g, float h, float lambda, float alpha, float learning_rate) {
    float d = h + lambda;
    if (!(d > 0.0f)) return 0.0f;
    g = sb_k_l1(g, alpha);
    return -(g / d) * learning_rate;
}

/* A leaf's output before the learning rate: -T / (H + lambda) (0 when
 * H + lambda <= 0); sb_k_leaf_value is this times the learning rate, bit for
 * bit. */
SB_FN float sb_k_leaf_output(float g, float h, float lambda, float alpha) {
    float d = h + lambda;
    if (!(d > 0.0f)) return 0.0f;
    g = sb_k_l1(g, alpha);
    return -(g / d);
}

/* w held in [lo, hi]. */
SB_FN float sb_k_clamp(float w, float lo, float hi) {
    return w < lo ? lo : w > hi ? hi : w;
}

/* The structure score of a leaf held at output w instead of its optimum:
 * -(2 T w + (H + lambda) w^2), spelled in that order. At w = -T / (H + lambda)
 * it is T^2 / (H + lambda) in exact arithmetic; monotone constraints use it
 * only where a bound moved w (sb_k_split_consider_c), so an unbounded leaf
 * keeps sb_k_leaf_score's bits. */
SB_FN float sb_k_leaf_score_at(float g, float h, float lambda, float alpha, float w) {
    float t = sb_k_l1(g, alpha);
#ifdef SB_SABOTAGE_MONO_ORDER
    /* separating arm (make SABOTAGE=mono-order): the products in another order */
    return -(2.0f * (t * w) + (h + lambda) * (w * w));
#else
    return -((2.0f * t) * w + ((h + lambda) * w) * w);
#endif
}

#endif
