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

#endif
