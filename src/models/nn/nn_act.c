/* nn_act.c: activations and their derivatives, from the profile's own
 * elementary functions (sb_sigmoidf, sb_tanhf: correctly rounded float32),
 * every other operation a plain IEEE rounding in the order written. */
#include "nn.h"
#include "../../math/sb_math.h"
#include <string.h>

static const char *const k_names[NN_ACT_COUNT] = {"identity", "logistic", "tanh", "relu", "gelu", "silu"};

const char *nn_act_name(int32_t a) { return a >= 0 && a < NN_ACT_COUNT ? k_names[a] : "unknown"; }

int32_t nn_act_of(const char *name) {
    for (int32_t a = 0; a < NN_ACT_COUNT; a++)
        if (!strcmp(name, k_names[a])) return a;
    return -1;
}

int nn_act_needs_pre(int32_t a) { return a == NN_GELU || a == NN_SILU; }

/* GELU's tanh form (Hendrycks and Gimpel, "Gaussian Error Linear Units",
 * 2016, eq. for the tanh approximation): u = c (x + k x^3), c = sqrt(2/pi)
 * rounded to float32, k = 0.044715. */
#define GELU_C 0.7978845608f
#define GELU_K 0.044715f

static float gelu_u(float x) { return GELU_C * (x + GELU_K * (x * x * x)); }

void nn_act_forward(int32_t a, const float *X, float *Y, int64_t count) {
    switch (a) {
    case NN_IDENTITY:
        if (Y != X) memcpy(Y, X, sizeof(float) * (size_t)count);
        break;
    case NN_LOGISTIC: sb_sigmoidf_n(X, Y, count); break;
    case NN_TANH:
        for (int64_t i = 0; i < count; i++) Y[i] = sb_tanhf(X[i]);
        break;
    case NN_RELU:
        for (int64_t i = 0; i < count; i++) Y[i] = X[i] > 0.0f ? X[i] : 0.0f;
        break;
    case NN_GELU:
        for (int64_t i = 0; i < count; i++) {
            const float x = X[i];
            Y[i] = (0.5f * x) * (1.0f + sb_tanhf(gelu_u(x)));
        }
        break;
    case NN_SILU:
        for (int64_t i = 0; i < count; i++) Y[i] = X[i] * sb_sigmoidf(X[i]);
        break;
    }
}

void nn_act_backward(int32_t a, const float *X, const float *Y, float *D, int64_t count) {
    switch (a) {
    case NN_IDENTITY: break;
    case NN_LOGISTIC:
        for (int64_t i = 0; i < count; i++) D[i] = D[i] * (Y[i] * (1.0f - Y[i]));
        break;
    case NN_TANH:
        for (int64_t i = 0; i < count; i++) D[i] = D[i] * (1.0f - Y[i] * Y[i]);
        break;
    case NN_RELU:
        for (int64_t i = 0; i < count; i++)
            if (Y[i] == 0.0f) D[i] = 0.0f;
        break;
    case NN_GELU:
        /* d/dx = (1 + t)/2 + (x/2)(1 - t^2) c (1 + 3 k x^2), t = tanh(u) */
        for (int64_t i = 0; i < count; i++) {
            const float x = X[i], t = sb_tanhf(gelu_u(x));
            const float du = GELU_C * (1.0f + (3.0f * GELU_K) * (x * x));
            const float g = 0.5f * (1.0f + t) + ((0.5f * x) * (1.0f - t * t)) * du;
            D[i] = D[i] * g;
        }
        break;
    case NN_SILU:
        /* d/dx = s (1 + x (1 - s)), s = sigmoid(x) */
        for (int64_t i = 0; i < count; i++) {
            const float x = X[i], s = sb_sigmoidf(x);
            D[i] = D[i] * (s * (1.0f + x * (1.0f - s)));
        }
        break;
    }
}
