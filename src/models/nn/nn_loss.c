/* nn_loss.c: softmax, log-loss, squared loss and the squared norm of the
 * weights (the L2 penalty's sum). Every sum is a superaccumulator's exact
 * sum rounded once, so its value has one shape whatever the order; exp and
 * log are the profile's (sb_expf, sb_logf: correctly rounded float32). */
#include "nn.h"
#include "../../math/sb_math.h"

void nn_softmax_rows(int64_t m, int64_t n, float *Z) {
    for (int64_t i = 0; i < m; i++) {
        float *z = Z + i * n;
        float mx = z[0];
        for (int64_t j = 1; j < n; j++)
            if (z[j] > mx) mx = z[j];
        sb_sacc acc;
        sb_sacc_init(&acc);
        for (int64_t j = 0; j < n; j++) {
            z[j] = sb_expf(z[j] - mx);
            sb_sacc_add(&acc, z[j]);
        }
        const float s = sb_sacc_round_f32(&acc);
        for (int64_t j = 0; j < n; j++) z[j] = z[j] / s;
    }
}

#define LL_EPS 0x1.0p-23f /* numpy's finfo(float32).eps, scikit-learn's clip */

static float clip(float p) { return p < LL_EPS ? LL_EPS : (p > 1.0f - LL_EPS ? 1.0f - LL_EPS : p); }

float nn_log_loss(int64_t m, int64_t n, const float *P, const float *Y, int softmax) {
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (int64_t i = 0; i < m * n; i++) {
        const float p = clip(P[i]), y = Y[i];
        if (y != 0.0f) sb_sacc_add(&acc, y * sb_logf(p));
        if (!softmax && y != 1.0f) sb_sacc_add(&acc, (1.0f - y) * sb_logf(1.0f - p));
    }
    return -sb_sacc_round_f32(&acc) / (float)m;
}

float nn_squared_loss(int64_t m, int64_t n, const float *P, const float *Y) {
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (int64_t i = 0; i < m * n; i++) {
        const float d = Y[i] - P[i];
        sb_sacc_add(&acc, d * d);
    }
    return sb_sacc_round_f32(&acc) / (float)(m * n) / 2.0f;
}

float nn_sq_norm(int32_t nt, const float *const *w, const int64_t *cnt) {
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (int32_t l = 0; l < nt; l++)
        for (int64_t i = 0; i < cnt[l]; i++) sb_sacc_add(&acc, w[l][i] * w[l][i]);
    return sb_sacc_round_f32(&acc);
}
