/* nn_act.c: activations and their derivatives, from the profile's own
 * elementary functions (sb_sigmoidf, sb_tanhf: correctly rounded float32),
 * every other operation a plain IEEE rounding in the order written: each
 * value's arithmetic is src/kernels/nn.h's, the text the device kernels run. */
#include "nn.h"
#include "../../math/sb_math.h"
#include "../../kernels/nn.h"
#include <string.h>

static const char *const k_names[NN_ACT_COUNT] = {"identity", "logistic", "tanh", "relu", "gelu", "silu"};

const char *nn_act_name(int32_t a) { return a >= 0 && a < NN_ACT_COUNT ? k_names[a] : "unknown"; }

int32_t nn_act_of(const char *name) {
    for (int32_t a = 0; a < NN_ACT_COUNT; a++)
        if (!strcmp(name, k_names[a])) return a;
    return -1;
}

int nn_act_needs_pre(int32_t a) { return a == NN_GELU || a == NN_SILU; }

void nn_act_forward(int32_t a, const float *X, float *Y, int64_t count) {
    if (a == NN_IDENTITY) {
        if (Y != X) memcpy(Y, X, sizeof(float) * (size_t)count);
    } else if (a == NN_LOGISTIC)
        sb_sigmoidf_n(X, Y, count); /* the block form of sb_sigmoidf: the same bits */
    else
        for (int64_t i = 0; i < count; i++) Y[i] = sb_nn_act(a, X[i]);
}

void nn_act_backward(int32_t a, const float *X, const float *Y, float *D, int64_t count) {
    if (a == NN_IDENTITY) return;
    for (int64_t i = 0; i < count; i++) D[i] = sb_nn_act_back(a, X ? X[i] : 0.0f, Y[i], D[i]);
}
