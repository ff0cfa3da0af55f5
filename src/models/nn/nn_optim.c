/* nn_optim.c: the optimizers (Adam, SGD with momentum) and gradient clipping
 * by the global norm. Each update is one fixed sequence of float32
 * roundings per value, values independent of each other; the step size's
 * scalars are float64 products rounded once. */
#include "nn.h"
#include "../../math/sb_math.h"
#include "../../kernels/nn.h"
#include <math.h>

void nn_adam_init(nn_adam *o, double lr, double beta1, double beta2, double eps) {
    o->lr = (float)lr, o->b1 = (float)beta1, o->b2 = (float)beta2, o->eps = (float)eps;
    o->t = 0;
    o->p1 = 1.0, o->p2 = 1.0;
    /* the float64 values scikit-learn multiplies by are kept for the powers */
    o->d1 = beta1, o->d2 = beta2, o->dlr = lr;
}

float nn_adam_step(nn_adam *o) {
    o->t++;
    o->p1 = o->p1 * o->d1;
    o->p2 = o->p2 * o->d2;
    return (float)(o->dlr * sqrt(1.0 - o->p2) / (1.0 - o->p1));
}

void nn_adam_update(const nn_adam *o, float lr_t, float *p, float *m, float *v, const float *g, int64_t count) {
    const float b1 = o->b1, b2 = o->b2, c1 = (float)(1.0 - o->d1), c2 = (float)(1.0 - o->d2), eps = o->eps;
    for (int64_t i = 0; i < count; i++) sb_nn_adam1(p + i, m + i, v + i, g[i], lr_t, b1, b2, c1, c2, eps);
}

void nn_sgd_update(float lr, float momentum, int nesterov, float *p, float *u, const float *g, int64_t count) {
    for (int64_t i = 0; i < count; i++) sb_nn_sgd1(p + i, u + i, g[i], lr, momentum, nesterov);
}

float nn_clip_global_norm(int32_t nt, float *const *g, const int64_t *cnt, float max_norm) {
    const float norm = sqrtf(nn_sq_norm(nt, (const float *const *)g, cnt));
    if (norm > max_norm) {
        const float scale = max_norm / norm;
        for (int32_t l = 0; l < nt; l++)
            for (int64_t i = 0; i < cnt[l]; i++) g[l][i] = g[l][i] * scale;
    }
    return norm;
}
