/* nn_tf.c: the transformer's building blocks (docs/lm.md): layer norm and
 * RMS norm, the embedding lookup and its gradient, causal multi-head
 * self-attention, dropout and AdamW. Every product is the identical GEMM
 * (each element an exact dot product rounded once), every other sum a
 * superaccumulator's exact sum rounded once, exp the profile's sb_expf, no
 * contraction: no value depends on an order or on the thread count. */
#include "nn.h"
#include "../../linalg/linalg.h"
#include "../../math/sb_math.h"
#include "../../core/rng.h"
#include "../../kernels/nn.h"
#include <math.h>
#include <string.h>

/* The exact sum of the rounded products a_j b_j, rounded once. */
static float exact_dot_rounded(const float *a, const float *b, int64_t n) {
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (int64_t j = 0; j < n; j++) sb_sacc_add(&acc, a[j] * b[j]);
    return sb_sacc_round_f32(&acc);
}

void nn_layernorm_forward(int64_t m, int64_t n, const float *X, const float *gamma, const float *beta, float eps,
                          float *Y, float *mean, float *rstd) {
    for (int64_t i = 0; i < m; i++) sb_nn_ln_row(X + i * n, gamma, beta, eps, n, Y + i * n, mean + i, rstd + i);
}

void nn_layernorm_backward(int64_t m, int64_t n, const float *X, const float *gamma, const float *mean,
                           const float *rstd, const float *dY, float *dX, float *dgamma, float *dbeta, float *tmp) {
    for (int64_t i = 0; i < m; i++)
        sb_nn_ln_back_row(X + i * n, gamma, mean[i], rstd[i], dY + i * n, n, dX + i * n, tmp + i * n);
    nn_col_sums(m, n, tmp, dgamma);
    nn_col_sums(m, n, dY, dbeta);
}

void nn_rmsnorm_forward(int64_t m, int64_t n, const float *X, const float *gamma, float eps, float *Y, float *rstd) {
    for (int64_t i = 0; i < m; i++) {
        const float *x = X + i * n;
        float *y = Y + i * n;
        const float ms = exact_dot_rounded(x, x, n) / (float)n;
        const float r = 1.0f / sqrtf(ms + eps);
        for (int64_t j = 0; j < n; j++) y[j] = (x[j] * r) * gamma[j];
        rstd[i] = r;
    }
}

void nn_rmsnorm_backward(int64_t m, int64_t n, const float *X, const float *gamma, const float *rstd, const float *dY,
                         float *dX, float *dgamma, float *tmp) {
    for (int64_t i = 0; i < m; i++) {
        const float *x = X + i * n, *dy = dY + i * n;
        float *t = tmp + i * n, *dx = dX + i * n;
        const float r = rstd[i];
        sb_sacc sb;
        sb_sacc_init(&sb);
        for (int64_t j = 0; j < n; j++) {
            const float xh = x[j] * r;
            sb_sacc_add(&sb, (dy[j] * gamma[j]) * xh);
            t[j] = dy[j] * xh;
        }
        const float b = sb_sacc_round_f32(&sb) / (float)n;
        for (int64_t j = 0; j < n; j++) dx[j] = r * (dy[j] * gamma[j] - (x[j] * r) * b);
    }
    nn_col_sums(m, n, tmp, dgamma);
}

void nn_embed_forward(int64_t m, int64_t n, const int32_t *ids, const float *E, float *Y) {
    for (int64_t i = 0; i < m; i++) memcpy(Y + i * n, E + (int64_t)ids[i] * n, sizeof(float) * (size_t)n);
}

/* The rows of each id are gathered by a stable counting sort (positions in
 * increasing order within an id), then each id's rows are added into n
 * superaccumulators: the value is the exact sum, whatever order, and the
 * order is fixed anyway. */
sb_status nn_embed_backward(int64_t m, int64_t n, int64_t vocab, const int32_t *ids, const float *dY, float *dE) {
    int64_t *start = sb_calloc((size_t)vocab + 1, sizeof *start);
    int64_t *order = sb_malloc(sizeof *order * (size_t)(m > 0 ? m : 1));
    sb_sacc *acc = sb_malloc(sizeof *acc * (size_t)(n > 0 ? n : 1));
    if (!start || !order || !acc) {
        sb_free(start), sb_free(order), sb_free(acc);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "embedding gradient: out of memory");
    }
    for (int64_t i = 0; i < m; i++) start[ids[i] + 1]++;
    for (int64_t v = 0; v < vocab; v++) start[v + 1] += start[v];
    for (int64_t i = 0; i < m; i++) order[start[ids[i]]++] = i;
    /* start[v] is now the end of id v's run; its beginning is start[v - 1] */
    for (int64_t v = 0; v < vocab; v++) {
        const int64_t b = v ? start[v - 1] : 0, e = start[v];
        float *de = dE + v * n;
        if (b == e) {
            memset(de, 0, sizeof(float) * (size_t)n);
            continue;
        }
        for (int64_t j = 0; j < n; j++) sb_sacc_init(&acc[j]);
        for (int64_t r = b; r < e; r++) {
            const float *dy = dY + order[r] * n;
            for (int64_t j = 0; j < n; j++) sb_sacc_add(&acc[j], dy[j]);
        }
        for (int64_t j = 0; j < n; j++) de[j] = sb_sacc_round_f32(&acc[j]);
    }
    sb_free(start), sb_free(order), sb_free(acc);
    return SB_OK;
}

static float attn_scale(int64_t hd) { return 1.0f / sqrtf((float)hd); }

/* Copy column block [c0, c0 + w) of the T rows of a row-major matrix with
 * ld columns into a contiguous T x w buffer, and back. */
static void take_cols(const float *src, int64_t T, int64_t ld, int64_t c0, int64_t w, float *dst) {
    for (int64_t t = 0; t < T; t++) memcpy(dst + t * w, src + t * ld + c0, sizeof(float) * (size_t)w);
}
static void put_cols(float *dst, int64_t T, int64_t ld, int64_t c0, int64_t w, const float *src) {
    for (int64_t t = 0; t < T; t++) memcpy(dst + t * ld + c0, src + t * w, sizeof(float) * (size_t)w);
}

sb_status nn_attention_forward(int64_t nb, int64_t T, int64_t d, int64_t nh, const float *QKV, float *O, float *P) {
    const int64_t hd = d / nh, ld = 3 * d;
    const float scale = attn_scale(hd);
    float *buf = sb_malloc(sizeof(float) * (size_t)(4 * T * hd));
    if (!buf) return sb_fail(SB_ERR_OUT_OF_MEMORY, "attention: out of memory");
    float *q = buf, *k = buf + T * hd, *v = buf + 2 * T * hd, *o = buf + 3 * T * hd;
    sb_status st = SB_OK;
    for (int64_t b = 0; b < nb && st == SB_OK; b++) {
        const float *x = QKV + b * T * ld;
        for (int64_t h = 0; h < nh && st == SB_OK; h++) {
            float *p = P + (b * nh + h) * T * T;
            take_cols(x, T, ld, h * hd, hd, q);
            take_cols(x, T, ld, d + h * hd, hd, k);
            take_cols(x, T, ld, 2 * d + h * hd, hd, v);
            const sb_gemm_shape ss = {0, 1, T, T, hd, hd, hd}; /* Q K^T */
            if ((st = sb_gemm_host(&ss, q, k, p, T)) != SB_OK) break;
            for (int64_t i = 0; i < T; i++) sb_nn_attn_softmax_row(p + i * T, i, T, scale);
            const sb_gemm_shape so = {0, 0, T, hd, T, T, hd}; /* P V */
            if ((st = sb_gemm_host(&so, p, v, o, hd)) != SB_OK) break;
            put_cols(O + b * T * d, T, d, h * hd, hd, o);
        }
    }
    sb_free(buf);
    return st;
}

sb_status nn_attention_backward(int64_t nb, int64_t T, int64_t d, int64_t nh, const float *QKV, const float *P,
                                const float *dO, float *dQKV) {
    const int64_t hd = d / nh, ld = 3 * d;
    const float scale = attn_scale(hd);
    float *buf = sb_malloc(sizeof(float) * (size_t)(7 * T * hd + T * T));
    if (!buf) return sb_fail(SB_ERR_OUT_OF_MEMORY, "attention backward: out of memory");
    float *q = buf, *k = q + T * hd, *v = k + T * hd, *dout = v + T * hd, *dq = dout + T * hd, *dk = dq + T * hd,
          *dv = dk + T * hd, *ds = dv + T * hd;
    sb_status st = SB_OK;
    for (int64_t b = 0; b < nb && st == SB_OK; b++) {
        const float *x = QKV + b * T * ld;
        float *dx = dQKV + b * T * ld;
        for (int64_t h = 0; h < nh && st == SB_OK; h++) {
            const float *p = P + (b * nh + h) * T * T;
            take_cols(x, T, ld, h * hd, hd, q);
            take_cols(x, T, ld, d + h * hd, hd, k);
            take_cols(x, T, ld, 2 * d + h * hd, hd, v);
            take_cols(dO + b * T * d, T, d, h * hd, hd, dout);
            const sb_gemm_shape sp = {0, 1, T, T, hd, hd, hd}; /* dO V^T */
            if ((st = sb_gemm_host(&sp, dout, v, ds, T)) != SB_OK) break;
            const sb_gemm_shape sv = {1, 0, T, hd, T, T, hd}; /* P^T dO */
            if ((st = sb_gemm_host(&sv, p, dout, dv, hd)) != SB_OK) break;
            for (int64_t i = 0; i < T; i++) sb_nn_attn_dsoft_row(p + i * T, ds + i * T, i, T, scale);
            const sb_gemm_shape sq = {0, 0, T, hd, T, T, hd}; /* dS K */
            if ((st = sb_gemm_host(&sq, ds, k, dq, hd)) != SB_OK) break;
            const sb_gemm_shape sk = {1, 0, T, hd, T, T, hd}; /* dS^T Q */
            if ((st = sb_gemm_host(&sk, ds, q, dk, hd)) != SB_OK) break;
            put_cols(dx, T, ld, h * hd, hd, dq);
            put_cols(dx, T, ld, d + h * hd, hd, dk);
            put_cols(dx, T, ld, 2 * d + h * hd, hd, dv);
        }
    }
    sb_free(buf);
    return st;
}

void nn_dropout_forward(uint64_t seed, uint32_t step, uint32_t tensor, float p, float *X, float *mask, int64_t count) {
    const float keep_scale = 1.0f / (1.0f - p);
    for (int64_t i = 0; i < count; i++) {
        const float s = sb_nn_dropout_mult(seed, step, tensor, p, keep_scale, i);
        mask[i] = s;
        X[i] = X[i] * s;
    }
}

void nn_adamw_scalars(double lr, double beta1, double beta2, double eps, double wd, int64_t t, nn_adamw_k *k) {
    double p1 = 1.0, p2 = 1.0;
    for (int64_t i = 0; i < t; i++) p1 = p1 * beta1, p2 = p2 * beta2;
    k->lr_wd = (float)(lr * wd);
    k->step_size = (float)(lr / (1.0 - p1));
    k->sqrtc2 = (float)sqrt(1.0 - p2);
    k->b1 = (float)beta1, k->c1m = (float)(1.0 - beta1);
    k->b2 = (float)beta2, k->c2m = (float)(1.0 - beta2);
    k->eps = (float)eps;
}

void nn_adamw_update(const nn_adamw_k *k, float *p, float *m, float *v, const float *g, int64_t count, int decay) {
    for (int64_t i = 0; i < count; i++)
        sb_nn_adamw1(p + i, m + i, v + i, g[i], decay, k->lr_wd, k->step_size, k->sqrtc2, k->b1, k->c1m, k->b2, k->c2m,
                     k->eps);
}
