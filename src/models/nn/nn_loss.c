/* nn_loss.c: softmax, log-loss, squared loss and the squared norm of the
 * weights (the L2 penalty's sum). Every sum is a superaccumulator's exact
 * sum rounded once, so its value has one shape whatever the order; exp and
 * log are the profile's (sb_expf, sb_logf: correctly rounded float32). */
#include "nn.h"
#include "../../math/sb_math.h"
#include "../../kernels/nn.h"

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

/* The terms and their scaling are src/kernels/nn.h's (the device's text). */
float nn_log_loss(int64_t m, int64_t n, const float *P, const float *Y, int softmax) {
    sb_sacc acc;
    sb_sacc_init(&acc);
    const int32_t kind = softmax ? SB_NN_LOSS_SOFTMAX : SB_NN_LOSS_LOGISTIC;
    sb_nn_loss_terms(&acc, kind, P, Y, 0, m * n);
    return sb_nn_loss_of(kind, sb_sacc_round_f32(&acc), m, n);
}

float nn_squared_loss(int64_t m, int64_t n, const float *P, const float *Y) {
    sb_sacc acc;
    sb_sacc_init(&acc);
    sb_nn_loss_terms(&acc, SB_NN_LOSS_SQUARED, P, Y, 0, m * n);
    return sb_nn_loss_of(SB_NN_LOSS_SQUARED, sb_sacc_round_f32(&acc), m, n);
}

float nn_sq_norm(int32_t nt, const float *const *w, const int64_t *cnt) {
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (int32_t l = 0; l < nt; l++)
        for (int64_t i = 0; i < cnt[l]; i++) sb_sacc_add(&acc, w[l][i] * w[l][i]);
    return sb_sacc_round_f32(&acc);
}
