/*
 * nn.h: the neural-network building blocks (docs/mlp.md, "Building blocks"),
 * written once for every network family of this library (the MLP estimators
 * now, the byte-level language model of issue 30 later). The host path:
 * float32 tensors, row-major; every product through the identical GEMM
 * (src/linalg: each element of a product is its exact sum rounded once), every
 * other sum an exact superaccumulator sum rounded once (sb_sacc: the order of
 * the terms cannot move a bit), every elementary function the profile's own
 * (src/math), no contraction. Threads split only the GEMM's independent
 * outputs, so no bit depends on the thread count.
 */
#ifndef SB_MODELS_NN_H
#define SB_MODELS_NN_H
#include "../../core/internal.h"

/* Activations: scikit-learn's four (identity, logistic, tanh, relu) and two
 * more (GELU in its tanh form, SiLU). */
typedef enum nn_act { NN_IDENTITY = 0, NN_LOGISTIC = 1, NN_TANH = 2, NN_RELU = 3, NN_GELU = 4, NN_SILU = 5 } nn_act;
#define NN_ACT_COUNT 6

/* The name of an activation (scikit-learn's spelling), and the activation of
 * a name (-1 when none). */
const char *nn_act_name(int32_t a);
int32_t nn_act_of(const char *name);
/* Whether the derivative needs the pre-activation (GELU, SiLU) rather than
 * the activation's output alone (scikit-learn's four). */
int nn_act_needs_pre(int32_t a);

/* Z := A W + 1 b^T: A is m x k, W is k x n (scikit-learn's coefs_ layout),
 * b has n values, Z is m x n; each element is the GEMM's exact dot product
 * rounded once, then plus b_j (one more rounding). */
sb_status nn_linear_forward(int64_t m, int64_t k, int64_t n, const float *A, const float *W, const float *b, float *Z);
/* dW := A^T D (k x n) and, where dA is not NULL, dA := D W^T (m x k): the
 * two backward products of a linear layer, each element an exact sum
 * rounded once (the GEMM). */
sb_status nn_linear_backward(int64_t m, int64_t k, int64_t n, const float *A, const float *W, const float *D,
                             float *dW, float *dA);
/* out[j] := the exact sum over the m rows of D[i][j] rounded once (the bias
 * gradient before its division by the batch): any order gives these bits. */
void nn_col_sums(int64_t m, int64_t n, const float *D, float *out);

/* Y := act(X) elementwise for count values (X and Y may be the same). */
void nn_act_forward(int32_t a, const float *X, float *Y, int64_t count);
/* D := D * act'(.) elementwise, the derivative taken from the activation's
 * output Y (scikit-learn's four: logistic Y(1-Y), tanh 1-Y^2, relu 0 where
 * Y == 0) or from the pre-activation X (GELU, SiLU). */
void nn_act_backward(int32_t a, const float *X, const float *Y, float *D, int64_t count);

/* Each row of the m x n matrix Z becomes its softmax: e_j = exp(z_j - max),
 * divided by the exact sum of the e_j rounded once. */
void nn_softmax_rows(int64_t m, int64_t n, float *Z);
/* Log-loss of probabilities P against 0/1 targets Y (m x n), scikit-learn's
 * (probabilities clipped to [eps, 1 - eps], eps = 2^-23): softmax = 1 is the
 * multiclass loss -sum y log p / m, else the binary (and multilabel) loss
 * -sum (y log p + (1 - y) log(1 - p)) / m; the sums exact, rounded once. */
float nn_log_loss(int64_t m, int64_t n, const float *P, const float *Y, int softmax);
/* Squared loss, scikit-learn's: sum (y - p)^2 / (m n) / 2 (the sum exact). */
float nn_squared_loss(int64_t m, int64_t n, const float *P, const float *Y);
/* sum ||W_l||^2 over nt tensors of cnt[l] values: each square rounded,
 * their exact sum rounded once. */
float nn_sq_norm(int32_t nt, const float *const *w, const int64_t *cnt);

/* Adam (Kingma and Ba, ICLR 2015) as scikit-learn spells it: the step t
 * (1-based) sets lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t) (in float64,
 * the powers by repeated products, rounded once to float32); then per value
 * m := b1 m + (1 - b1) g, v := b2 v + (1 - b2) g^2,
 * p := p - lr_t m / (sqrt(v) + eps), each operation rounded in this order. */
typedef struct nn_adam {
    float lr, b1, b2, eps;
    int64_t t;
    double p1, p2;       /* beta1^t, beta2^t */
    double d1, d2, dlr;  /* beta1, beta2, lr as float64 (the step size's scalars) */
} nn_adam;
void nn_adam_init(nn_adam *o, double lr, double beta1, double beta2, double eps);
/* Advance the step (once an update of every tensor); its lr_t. */
float nn_adam_step(nn_adam *o);
void nn_adam_update(const nn_adam *o, float lr_t, float *p, float *m, float *v, const float *g, int64_t count);
/* SGD with momentum, scikit-learn's: u := mu u - lr g, then p := p + u, or
 * with Nesterov's momentum p := p + (mu u - lr g) (Sutskever et al., ICML
 * 2013, as scikit-learn writes it). */
void nn_sgd_update(float lr, float momentum, int nesterov, float *p, float *u, const float *g, int64_t count);

/* Gradient clipping by the global norm: norm := sqrt(the exact sum of every
 * g^2 rounded once); where norm > max_norm each value is multiplied by
 * max_norm / norm (one rounding each). Returns the norm before clipping. */
float nn_clip_global_norm(int32_t nt, float *const *g, const int64_t *cnt, float max_norm);

/* ---- the transformer's blocks (docs/lm.md, "Building blocks") ---------- */

/* Layer norm (Ba, Kiros and Hinton, 2016) over each row of the m x n matrix
 * X: mean = (the exact sum of the row rounded once) / n, d_j = x_j - mean,
 * var = (the exact sum of d_j^2, each square rounded, rounded once) / n,
 * rstd = 1 / sqrtf(var + eps) (two roundings: IEEE sqrt, then the quotient),
 * y_j = (d_j rstd) gamma_j + beta_j. mean and rstd (m values each) are kept
 * for the backward pass. */
void nn_layernorm_forward(int64_t m, int64_t n, const float *X, const float *gamma, const float *beta, float eps,
                          float *Y, float *mean, float *rstd);
/* The backward pass: with xhat_j = (x_j - mean) rstd and g_j = dy_j gamma_j,
 * a = (exact sum of g_j) / n, b = (exact sum of g_j xhat_j) / n, each rounded
 * once, dx_j = rstd ((g_j - a) - xhat_j b); dgamma and dbeta are the exact
 * column sums of dy xhat and dy, rounded once (they are written, not added
 * to). tmp holds m x n floats. */
void nn_layernorm_backward(int64_t m, int64_t n, const float *X, const float *gamma, const float *mean,
                           const float *rstd, const float *dY, float *dX, float *dgamma, float *dbeta, float *tmp);
/* RMS norm (Zhang and Sennrich, NeurIPS 2019): ms = (exact sum of x_j^2) / n,
 * rstd = 1 / sqrtf(ms + eps), y_j = (x_j rstd) gamma_j. */
void nn_rmsnorm_forward(int64_t m, int64_t n, const float *X, const float *gamma, float eps, float *Y, float *rstd);
/* dx_j = rstd (g_j - xhat_j b), b = (exact sum of g_j xhat_j) / n, g_j = dy_j
 * gamma_j, xhat_j = x_j rstd; dgamma the exact column sums of dy xhat. */
void nn_rmsnorm_backward(int64_t m, int64_t n, const float *X, const float *gamma, const float *rstd, const float *dY,
                         float *dX, float *dgamma, float *tmp);

/* Embedding lookup: row i of Y (n values) := row ids[i] of E (vocab x n). */
void nn_embed_forward(int64_t m, int64_t n, const int32_t *ids, const float *E, float *Y);
/* Its gradient: dE[v] := the exact sum over the rows i with ids[i] == v of
 * dY[i], rounded once (0 for an id that never occurs), taken in the order
 * of the positions i (a stable counting sort by id, never an atomic).
 * Returns SB_ERR_OUT_OF_MEMORY or SB_OK. */
sb_status nn_embed_backward(int64_t m, int64_t n, int64_t vocab, const int32_t *ids, const float *dY, float *dE);

/* Causal multi-head self-attention (Vaswani et al., NeurIPS 2017) over nb
 * sequences of T positions: QKV is (nb T) x 3d, each row [q | k | v], head h
 * the columns h hd .. h hd + hd - 1 of each (hd = d / nh). Per sequence and
 * head: s_ij = (q_i . k_j rounded once: the identical GEMM) * scale, scale =
 * 1 / sqrtf(hd) rounded; for j <= i, p_ij = e_ij / S_i with e_ij =
 * sb_expf(s_ij - max_j s_ij) and S_i the exact sum of the e_ij rounded once
 * (p_ij = 0 for j > i); o_i = sum_j p_ij v_j (the GEMM: exact, rounded
 * once). O is (nb T) x d; P (nb nh T T) is kept for the backward pass. */
sb_status nn_attention_forward(int64_t nb, int64_t T, int64_t d, int64_t nh, const float *QKV, float *O, float *P);
/* The backward pass into dQKV ((nb T) x 3d): dp = do V^T, dV = P^T do,
 * ds_ij = p_ij (dp_ij - r_i) with r_i the exact sum of p_ij dp_ij (each
 * product rounded) rounded once, then times scale; dQ = ds K, dK = ds^T Q
 * (each product the GEMM). */
sb_status nn_attention_backward(int64_t nb, int64_t T, int64_t d, int64_t nh, const float *QKV, const float *P,
                                const float *dO, float *dQKV);

/* Dropout (Srivastava et al., JMLR 2014): value i of tensor `tensor` at step
 * `step` is kept where the Philox word of (seed ^ NN_DROPOUT_KEY, purpose =
 * step, index = i, sub = tensor) taken as a multiple of 2^-24 in [0, 1) is
 * >= p; a kept value is multiplied by 1 / (1 - p) (rounded once, in float32),
 * a dropped one is 0. mask gets the multiplier of each value (0 or the
 * scale) for the backward pass (dX = dY mask). p in [0, 1). */
#define NN_DROPOUT_KEY 0x64726f706f757421ull /* "dropout!" */
void nn_dropout_forward(uint64_t seed, uint32_t step, uint32_t tensor, float p, float *X, float *mask, int64_t count);

/* AdamW (Loshchilov and Hutter, ICLR 2019: the weight decay decoupled from
 * the gradient) as PyTorch spells it, each a float32 rounding in this
 * order per value: p := p - (lr wd) p; m := b1 m + (1 - b1) g;
 * v := b2 v + (1 - b2) g^2; p := p - (lr / c1) m / (sqrtf(v) / sqrtc2 + eps),
 * where c1 = 1 - beta1^t and sqrtc2 = sqrt(1 - beta2^t) are the float64
 * powers (repeated products) rounded once to float32 (nn_adamw_scalars). */
typedef struct nn_adamw_k {
    float lr_wd, step_size, sqrtc2, b1, c1m, b2, c2m, eps;
} nn_adamw_k;
/* The scalars of step t >= 1 of an optimizer with lr, betas, eps, wd. */
void nn_adamw_scalars(double lr, double beta1, double beta2, double eps, double wd, int64_t t, nn_adamw_k *k);
void nn_adamw_update(const nn_adamw_k *k, float *p, float *m, float *v, const float *g, int64_t count, int decay);

#endif
