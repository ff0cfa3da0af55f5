/* mlp.c: the MLP's fit (scikit-learn's _fit_stochastic: minibatches of a
 * Philox permutation per epoch, forward, loss, backward, one optimizer step a
 * batch, the stopping rules) and its forward pass, on the blocks of nn/. */
#include "mlp.h"
#include "../../core/rng.h"
#include "../../device/device.h"
#include "../../math/sb_math.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MLP_PURPOSE_INIT 0x4d4c5001u    /* "MLP" 1: coefs_ */
#define MLP_PURPOSE_INTER 0x4d4c5002u   /* intercepts_ */
#define MLP_PURPOSE_SHUFFLE 0x4d4c5003u /* an epoch's permutation */
#define MLP_PURPOSE_SPLIT 0x4d4c5004u   /* early stopping's validation rows */
#define MLP_PREDICT_ROWS 4096           /* rows a forward pass holds at once (no bit depends on it) */

static sb_status oom(void) { return sb_fail(SB_ERR_OUT_OF_MEMORY, "mlp: out of memory"); }

sb_status sb_mlp_alloc(sb_mlp *net) {
    for (int32_t l = 0; l < net->nlayers; l++) {
        net->W[l] = sb_calloc((size_t)(net->size[l] * net->size[l + 1]), sizeof(float));
        net->b[l] = sb_calloc((size_t)net->size[l + 1], sizeof(float));
        if (!net->W[l] || !net->b[l]) return oom();
    }
    return SB_OK;
}

void sb_mlp_release(sb_mlp *net) {
    if (!net) return;
    for (int32_t l = 0; l < MLP_MAX_HIDDEN + 1; l++) sb_free(net->W[l]), sb_free(net->b[l]);
    sb_free(net->curve);
    sb_free(net->val_scores);
    sb_free(net);
}

const char *sb_mlp_check(const sb_mlp *net) {
    const mlp_opts *o = &net->o;
    if (o->nhidden < 0 || o->nhidden > MLP_MAX_HIDDEN || net->nlayers != o->nhidden + 1) return "the layer count";
    for (int32_t l = 0; l <= net->nlayers; l++)
        if (net->size[l] < 1 || net->size[l] > MLP_MAX_WIDTH) return "a layer's width";
    for (int32_t l = 0; l < o->nhidden; l++)
        if (o->hidden[l] != net->size[l + 1]) return "hidden_layer_sizes and the layers' widths";
    if (o->activation < 0 || o->activation >= NN_ACT_COUNT) return "the activation";
    if (o->solver != MLP_ADAM && o->solver != MLP_SGD) return "the solver";
    if (o->learning_rate < MLP_LR_CONSTANT || o->learning_rate > MLP_LR_ADAPTIVE) return "learning_rate";
    if ((o->classifier | o->shuffle | o->early_stopping | o->nesterovs_momentum) & ~1) return "a flag";
    if (o->max_iter < 1 || o->max_iter > MLP_MAX_ITER || o->n_iter_no_change < 1 || o->batch_size < 0)
        return "max_iter, n_iter_no_change or batch_size";
    const double d[9] = {o->alpha, o->learning_rate_init, o->power_t, o->tol, o->validation_fraction,
                         o->momentum, o->beta_1, o->beta_2, o->epsilon};
    for (int i = 0; i < 9; i++)
        if (!isfinite(d[i])) return "a real option";
    const int64_t nout = net->size[net->nlayers];
    if (o->classifier) {
        if (net->multilabel == 1) {
            if (net->out_act != MLP_OUT_LOGISTIC || net->nclasses != nout || nout < 1) return "a multilabel output";
        } else if (net->multilabel != 0 || net->nclasses < 2 ||
                   (net->nclasses == 2 ? (nout != 1 || net->out_act != MLP_OUT_LOGISTIC)
                                       : (nout != net->nclasses || net->out_act != MLP_OUT_SOFTMAX)))
            return "a classifier's output";
    } else if (net->multilabel || net->nclasses != 0 || net->out_act != MLP_OUT_IDENTITY)
        return "a regressor's output";
    if (net->n_iter < 1 || net->n_iter > o->max_iter || net->t < 1) return "n_iter_ or t_";
    if (!isfinite(net->loss)) return "loss_";
    for (int32_t i = 0; i < net->n_iter; i++)
        if (!isfinite(net->curve[i])) return "loss_curve_";
    if ((net->val_scores != NULL) != (o->early_stopping != 0)) return "validation_scores_";
    for (int32_t l = 0; l < net->nlayers; l++) {
        for (int64_t i = 0; i < net->size[l] * net->size[l + 1]; i++)
            if (!isfinite(net->W[l][i])) return "a coefficient is not finite";
        for (int64_t i = 0; i < net->size[l + 1]; i++)
            if (!isfinite(net->b[l][i])) return "an intercept is not finite";
    }
    return NULL;
}

/* Scratch of one forward and backward pass over at most rows rows. */
typedef struct mlp_work {
    float *A[MLP_MAX_HIDDEN + 2];   /* A[0] the batch's X, A[l] layer l's outputs */
    float *Z[MLP_MAX_HIDDEN + 2];   /* pre-activations (GELU and SiLU only) */
    float *D[MLP_MAX_HIDDEN + 2];   /* deltas of layer l's outputs */
    float *Y;                       /* the batch's targets, rows x nout */
} mlp_work;

static void work_free(mlp_work *w) {
    for (int i = 0; i < MLP_MAX_HIDDEN + 2; i++) sb_free(w->A[i]), sb_free(w->Z[i]), sb_free(w->D[i]);
    sb_free(w->Y);
}

static sb_status work_make(const sb_mlp *net, int64_t rows, int backward, mlp_work *w) {
    memset(w, 0, sizeof *w);
    for (int32_t l = 0; l <= net->nlayers; l++) {
        const size_t c = (size_t)(rows * net->size[l]);
        if (!(w->A[l] = sb_malloc(sizeof(float) * c))) return oom();
        if (l > 0 && l < net->nlayers && nn_act_needs_pre(net->o.activation) && !(w->Z[l] = sb_malloc(sizeof(float) * c)))
            return oom();
        if (backward && l > 0 && !(w->D[l] = sb_malloc(sizeof(float) * c))) return oom();
    }
    if (backward && !(w->Y = sb_malloc(sizeof(float) * (size_t)(rows * net->size[net->nlayers])))) return oom();
    return SB_OK;
}

/* Forward over the m rows already in w->A[0]: hidden layers through the
 * activation, the output through out_activation_. */
static sb_status forward(const sb_mlp *net, mlp_work *w, int64_t m) {
    sb_status st;
    for (int32_t l = 0; l < net->nlayers; l++) {
        const int64_t k = net->size[l], n = net->size[l + 1];
        float *dst = w->Z[l + 1] ? w->Z[l + 1] : w->A[l + 1];
        if ((st = nn_linear_forward(m, k, n, w->A[l], net->W[l], net->b[l], dst)) != SB_OK) return st;
        if (l + 1 < net->nlayers) nn_act_forward(net->o.activation, dst, w->A[l + 1], m * n);
        else if (net->out_act == MLP_OUT_LOGISTIC) nn_act_forward(NN_LOGISTIC, dst, w->A[l + 1], m * n);
        else if (net->out_act == MLP_OUT_SOFTMAX) nn_softmax_rows(m, n, w->A[l + 1]);
    }
    return SB_OK;
}

sb_status sb_mlp_forward(const sb_mlp *net, const float *X, int64_t m, float *out) {
    const int64_t d = net->size[0], nout = net->size[net->nlayers];
    const int64_t rows = m < MLP_PREDICT_ROWS ? m : MLP_PREDICT_ROWS;
    mlp_work w;
    sb_status st = work_make(net, rows, 0, &w);
    for (int64_t i0 = 0; st == SB_OK && i0 < m; i0 += rows) {
        const int64_t r = m - i0 < rows ? m - i0 : rows;
        memcpy(w.A[0], X + i0 * d, sizeof(float) * (size_t)(r * d));
        if ((st = forward(net, &w, r)) == SB_OK)
            memcpy(out + i0 * nout, w.A[net->nlayers], sizeof(float) * (size_t)(r * nout));
    }
    work_free(&w);
    return st;
}

/* Glorot and Bengio's uniform draw as scikit-learn scales it: bound =
 * sqrt(f / (fan_in + fan_out)), f = 2 for the logistic activation, else 6;
 * each weight (2u - 1) bound for u the top 24 bits of Philox's word
 * (seed, purpose, layer << 40 | index) times 2^-24 (2u - 1 exact). */
static void glorot(sb_mlp *net) {
    const float f = net->o.activation == NN_LOGISTIC ? 2.0f : 6.0f;
    for (int32_t l = 0; l < net->nlayers; l++) {
        const int64_t fi = net->size[l], fo = net->size[l + 1];
        const float bound = sqrtf(f / (float)(fi + fo));
        for (int64_t i = 0; i < fi * fo; i++)
            net->W[l][i] = (2.0f * sb_rng_unit_f32(net->o.seed, MLP_PURPOSE_INIT, ((uint64_t)l << 40) | (uint64_t)i) - 1.0f) * bound;
        for (int64_t i = 0; i < fo; i++)
            net->b[l][i] = (2.0f * sb_rng_unit_f32(net->o.seed, MLP_PURPOSE_INTER, ((uint64_t)l << 40) | (uint64_t)i) - 1.0f) * bound;
    }
}

/* Fisher and Yates's shuffle of 0..n-1 for an epoch: step i swaps i with a
 * uniform j in [i, n) drawn by (seed, purpose, epoch << 32 | i). */
static void permutation(uint64_t seed, uint32_t purpose, uint64_t epoch, int64_t *idx, int64_t n) {
    for (int64_t i = 0; i < n; i++) idx[i] = i;
    for (int64_t i = 0; i + 1 < n; i++) {
        const int64_t j = i + (int64_t)sb_rng_below(seed, purpose, (epoch << 32) | (uint64_t)i, (sb_u32)(n - i));
        const int64_t t = idx[i];
        idx[i] = idx[j], idx[j] = t;
    }
}

/* Early stopping's split: n_val = ceil(fraction n) rows (scikit-learn's
 * train_test_split rounds the test size up). A classifier of K classes
 * (not multilabel) stratifies: class c gets floor(n_val n_c / n) rows, the
 * rest one each to the classes of the largest remainders (ties: smaller
 * class), each class's rows the first of its Philox permutation (epoch
 * 2^31 + c). Others take the first n_val of one permutation. is_val[i] := 1
 * for a validation row. */
static sb_status split(const mlp_opts *o, const int32_t *code, int64_t K, int64_t n, uint8_t *is_val,
                       int64_t *nval_out) {
    int64_t nval = (int64_t)ceil(o->validation_fraction * (double)n);
    if (nval < 1 || nval >= n)
        return sb_fail(SB_ERR_INVALID_INPUT,
                       "mlp: early_stopping with validation_fraction=%g of %lld rows leaves %lld validation and %lld "
                       "training rows (each must be >= 1)", o->validation_fraction, (long long)n, (long long)nval,
                       (long long)(n - nval));
    memset(is_val, 0, (size_t)n);
    int64_t *idx = sb_malloc(sizeof(int64_t) * (size_t)n);
    if (!idx) return oom();
    if (!code) {
        permutation(o->seed, MLP_PURPOSE_SPLIT, 0, idx, n);
        for (int64_t i = 0; i < nval; i++) is_val[idx[i]] = 1;
    } else {
        int64_t *cnt = sb_calloc((size_t)K, sizeof(int64_t)), *take = sb_calloc((size_t)K, sizeof(int64_t));
        int64_t *rem = sb_calloc((size_t)K, sizeof(int64_t)), *rows = sb_malloc(sizeof(int64_t) * (size_t)n);
        if (!cnt || !take || !rem || !rows) {
            sb_free(cnt), sb_free(take), sb_free(rem), sb_free(rows), sb_free(idx);
            return oom();
        }
        for (int64_t i = 0; i < n; i++) cnt[code[i]]++;
        int64_t given = 0;
        for (int64_t c = 0; c < K; c++) {
            take[c] = nval * cnt[c] / n; /* exact integers */
            rem[c] = nval * cnt[c] % n;
            given += take[c];
        }
        while (given < nval) {
            int64_t best = -1;
            for (int64_t c = 0; c < K; c++)
                if (take[c] < cnt[c] && (best < 0 || rem[c] > rem[best])) best = c;
            take[best]++, rem[best] = -1, given++;
        }
        for (int64_t c = 0; c < K; c++) {
            int64_t nc = 0;
            for (int64_t i = 0; i < n; i++)
                if (code[i] == c) rows[nc++] = i;
            permutation(o->seed, MLP_PURPOSE_SPLIT, ((uint64_t)1 << 31) + (uint64_t)c, idx, nc);
            for (int64_t i = 0; i < take[c]; i++) is_val[rows[idx[i]]] = 1;
        }
        sb_free(cnt), sb_free(take), sb_free(rem), sb_free(rows);
    }
    sb_free(idx);
    *nval_out = nval;
    return SB_OK;
}

/* The card's stages of an epoch: its loss (float64 bits) and every
 * parameter (coefs_ then intercepts_, layer by layer). */
static sb_status record_epoch(sb_card *card, const char *prefix, const sb_mlp *net, int32_t epoch, double loss,
                              const float *grad_probe, int64_t nprobe) {
    if (!card) return SB_OK;
    char tag[96];
    uint64_t u;
    memcpy(&u, &loss, 8);
    snprintf(tag, sizeof tag, "%s.e%d.loss", prefix, (int)epoch);
    sb_status st = sb_card_record(card, tag, SB_DTYPE_U64, &u, 1);
    for (int32_t l = 0; st == SB_OK && l < net->nlayers; l++) {
        snprintf(tag, sizeof tag, "%s.e%d.coefs%d", prefix, (int)epoch, (int)l);
        st = sb_card_record(card, tag, SB_DTYPE_F32, net->W[l], (uint64_t)(net->size[l] * net->size[l + 1]));
        snprintf(tag, sizeof tag, "%s.e%d.intercepts%d", prefix, (int)epoch, (int)l);
        if (st == SB_OK) st = sb_card_record(card, tag, SB_DTYPE_F32, net->b[l], (uint64_t)net->size[l + 1]);
    }
    if (st == SB_OK && grad_probe) {
        snprintf(tag, sizeof tag, "%s.e%d.grad_last", prefix, (int)epoch);
        st = sb_card_record(card, tag, SB_DTYPE_F32, grad_probe, (uint64_t)nprobe);
    }
    return st;
}

/* The score of early stopping from the validation rows' outputs buf:
 * accuracy (a classifier: every label of a row right) or R^2 averaged over
 * the targets (scikit-learn's score), in float64 with sums in row order. */
static sb_status val_score(const sb_mlp *net, const float *Yv, int64_t m, const float *buf, double *out) {
    const int64_t q = net->size[net->nlayers];
    if (net->o.classifier) {
        int64_t right = 0;
        for (int64_t i = 0; i < m; i++) {
            const float *p = buf + i * q, *y = Yv + i * q;
            int ok = 1;
            if (net->out_act == MLP_OUT_SOFTMAX) {
                int64_t a = 0, t = 0;
                for (int64_t j = 1; j < q; j++) {
                    if (p[j] > p[a]) a = j;
                    if (y[j] == 1.0f) t = j;
                }
                ok = a == t;
            } else
                for (int64_t j = 0; j < q; j++) ok &= (p[j] > 0.5f) == (y[j] == 1.0f);
            right += ok;
        }
        *out = (double)right / (double)m;
        return SB_OK;
    }
    double r2 = 0.0;
    for (int64_t j = 0; j < q; j++) {
        double mean = 0.0, ssr = 0.0, sst = 0.0;
        for (int64_t i = 0; i < m; i++) mean += (double)Yv[i * q + j];
        mean /= (double)m;
        for (int64_t i = 0; i < m; i++) {
            const double e = (double)Yv[i * q + j] - (double)buf[i * q + j], c = (double)Yv[i * q + j] - mean;
            ssr += e * e, sst += c * c;
        }
        r2 += sst > 0.0 ? 1.0 - ssr / sst : (ssr == 0.0 ? 1.0 : 0.0);
    }
    *out = r2 / (double)q;
    return SB_OK;
}

/* x^p for x >= 1 in float64 through the profile's own exp and log. */
static double pow_pos(double x, double p) { return x == 1.0 ? 1.0 : sb__hx_exp(p * sb__hx_log(x)); }

typedef struct fit_state {
    sb_mlp *net;
    float *gW[MLP_MAX_HIDDEN + 1], *gb[MLP_MAX_HIDDEN + 1];
    float *mW[MLP_MAX_HIDDEN + 1], *mb[MLP_MAX_HIDDEN + 1]; /* Adam's first moments, or SGD's velocities */
    float *vW[MLP_MAX_HIDDEN + 1], *vb[MLP_MAX_HIDDEN + 1]; /* Adam's second moments */
    float *bestW[MLP_MAX_HIDDEN + 1], *bestb[MLP_MAX_HIDDEN + 1];
} fit_state;

static void state_free(fit_state *s) {
    for (int l = 0; l < MLP_MAX_HIDDEN + 1; l++) {
        sb_free(s->gW[l]), sb_free(s->gb[l]), sb_free(s->mW[l]), sb_free(s->mb[l]);
        sb_free(s->vW[l]), sb_free(s->vb[l]), sb_free(s->bestW[l]), sb_free(s->bestb[l]);
    }
}

/* The card's stage of the optimizer's state at the end of the fit (Adam's
 * moments, or SGD's velocities), per layer m of coefs_, m of intercepts_,
 * then Adam's v of both, in one array. */
static sb_status record_state(sb_card *card, const char *prefix, const sb_mlp *net, const fit_state *s) {
    int64_t total = 0;
    const int adam = net->o.solver == MLP_ADAM;
    for (int32_t l = 0; l < net->nlayers; l++) total += (net->size[l] + 1) * net->size[l + 1] * (adam ? 2 : 1);
    float *buf = sb_malloc(sizeof(float) * (size_t)total);
    if (!buf) return oom();
    int64_t at = 0;
    for (int32_t l = 0; l < net->nlayers; l++) {
        const int64_t cw = net->size[l] * net->size[l + 1], cb = net->size[l + 1];
        const float *parts[4] = {s->mW[l], s->mb[l], s->vW[l], s->vb[l]};
        const int64_t cnt[4] = {cw, cb, cw, cb};
        for (int q = 0; q < (adam ? 4 : 2); q++) {
            memcpy(buf + at, parts[q], sizeof(float) * (size_t)cnt[q]);
            at += cnt[q];
        }
    }
    char tag[96];
    snprintf(tag, sizeof tag, "%s.optimizer_state", prefix);
    const sb_status st = sb_card_record(card, tag, SB_DTYPE_F32, buf, (uint64_t)total);
    sb_free(buf);
    return st;
}

/* One minibatch: forward, loss (with alpha's penalty), backward, gradients
 * as scikit-learn's _backprop forms them: dW = (A^T D + alpha W) / m,
 * db = (sum of D's rows) / m, the output's delta P - Y for every pairing of
 * output activation and loss. */
static sb_status batch_step(sb_mlp *net, fit_state *s, mlp_work *w, int64_t m, float *loss) {
    const int32_t L = net->nlayers;
    const int64_t nout = net->size[L];
    sb_status st = forward(net, w, m);
    if (st != SB_OK) return st;
    float l0 = net->o.classifier ? nn_log_loss(m, nout, w->A[L], w->Y, net->out_act == MLP_OUT_SOFTMAX)
                                 : nn_squared_loss(m, nout, w->A[L], w->Y);
    const float *wp[MLP_MAX_HIDDEN + 1];
    int64_t cnt[MLP_MAX_HIDDEN + 1];
    for (int32_t l = 0; l < L; l++) wp[l] = net->W[l], cnt[l] = net->size[l] * net->size[l + 1];
    const float alpha = (float)net->o.alpha, fm = (float)m;
    const float sq = nn_sq_norm(L, wp, cnt);
    *loss = l0 + (0.5f * alpha) * sq / fm;
    for (int64_t i = 0; i < m * nout; i++) w->D[L][i] = w->A[L][i] - w->Y[i];
    for (int32_t l = L - 1; l >= 0; l--) {
        const int64_t k = net->size[l], n = net->size[l + 1];
        if ((st = nn_linear_backward(m, k, n, w->A[l], net->W[l], w->D[l + 1], s->gW[l], l > 0 ? w->D[l] : NULL)) != SB_OK)
            return st;
        for (int64_t i = 0; i < k * n; i++) s->gW[l][i] = (s->gW[l][i] + alpha * net->W[l][i]) / fm;
        nn_col_sums(m, n, w->D[l + 1], s->gb[l]);
        for (int64_t j = 0; j < n; j++) s->gb[l][j] = s->gb[l][j] / fm;
        if (l > 0) nn_act_backward(net->o.activation, w->Z[l], w->A[l], w->D[l], m * k);
    }
    return SB_OK;
}

sb_status sb_mlp_fit_opts(const mlp_opts *o, const float *X, int64_t n, int64_t d, const float *y, int64_t ny,
                          sb_card *card, const char *prefix, sb_mlp **out) {
    sb_status st = SB_OK;
    sb_mlp *net = sb_calloc(1, sizeof *net);
    if (!net) return oom();
    net->o = *o;
    net->nlayers = o->nhidden + 1;
    net->size[0] = d;
    for (int32_t l = 0; l < o->nhidden; l++) net->size[l + 1] = o->hidden[l];
    int32_t *code = NULL;
    int64_t K = 0;
    /* the targets: a class code per row, a multilabel indicator, or values */
    if (o->classifier && ny == 1) {
        if (!(code = sb_malloc(sizeof(int32_t) * (size_t)n))) return sb_mlp_release(net), oom();
        for (int64_t i = 0; i < n && st == SB_OK; i++) {
            if (!(y[i] >= 0.0f && y[i] < 2147483647.0f) || y[i] != (float)(int32_t)y[i])
                st = sb_fail(SB_ERR_INVALID_INPUT, "mlp: the class code of row %lld is %g (codes are whole numbers 0..K-1)",
                             (long long)i, (double)y[i]);
            else {
                code[i] = (int32_t)y[i];
                if (code[i] + 1 > K) K = code[i] + 1;
            }
        }
        if (st == SB_OK && K > MLP_MAX_WIDTH)
            st = sb_fail(SB_ERR_LIMIT, "mlp: %lld classes (limit %d)", (long long)K, MLP_MAX_WIDTH);
        if (st == SB_OK) {
            int64_t *cnt = sb_calloc((size_t)K, sizeof(int64_t));
            if (!cnt) st = oom();
            for (int64_t i = 0; st == SB_OK && i < n; i++) cnt[code[i]]++;
            for (int64_t c = 0; st == SB_OK && c < K; c++)
                if (!cnt[c]) st = sb_fail(SB_ERR_INVALID_INPUT, "mlp: class code %lld has no rows (codes are 0..K-1, each present)", (long long)c);
            sb_free(cnt);
        }
        if (st == SB_OK && K < 2)
            st = sb_fail(SB_ERR_INVALID_INPUT, "mlp: a classifier needs at least 2 classes; y has 1 (a single class is refused)");
        net->nclasses = K;
        net->size[net->nlayers] = K == 2 ? 1 : K;
        net->out_act = K == 2 ? MLP_OUT_LOGISTIC : MLP_OUT_SOFTMAX;
    } else if (o->classifier) {
        for (int64_t i = 0; i < n * ny && st == SB_OK; i++)
            if (y[i] != 0.0f && y[i] != 1.0f)
                st = sb_fail(SB_ERR_INVALID_INPUT, "mlp: a multilabel y holds %g at row %lld (only 0 and 1)", (double)y[i],
                             (long long)(i / ny));
        net->multilabel = 1;
        net->nclasses = ny;
        net->size[net->nlayers] = ny;
        net->out_act = MLP_OUT_LOGISTIC;
    } else {
        net->size[net->nlayers] = ny;
        net->out_act = MLP_OUT_IDENTITY;
    }
    if (st == SB_OK && net->size[net->nlayers] > MLP_MAX_WIDTH)
        st = sb_fail(SB_ERR_LIMIT, "mlp: %lld outputs (limit %d)", (long long)net->size[net->nlayers], MLP_MAX_WIDTH);
    if (st == SB_OK) st = sb_mlp_alloc(net);
    const int32_t L = net->nlayers;
    const int64_t nout = net->size[L];
    /* Y as the output layer's 0/1 or value targets, row by row */
    float *Yall = st == SB_OK ? sb_calloc((size_t)(n * nout), sizeof(float)) : NULL;
    if (st == SB_OK && !Yall) st = oom();
    if (st == SB_OK) {
        if (code && K == 2)
            for (int64_t i = 0; i < n; i++) Yall[i] = (float)code[i];
        else if (code)
            for (int64_t i = 0; i < n; i++) Yall[i * nout + code[i]] = 1.0f;
        else
            memcpy(Yall, y, sizeof(float) * (size_t)(n * nout));
    }
    /* the training and validation rows */
    int64_t nval = 0, ntr = n;
    int64_t *tr = NULL;
    float *Xv = NULL, *Yv = NULL, *vbuf = NULL;
    uint8_t *is_val = NULL;
    if (st == SB_OK && !(tr = sb_malloc(sizeof(int64_t) * (size_t)n))) st = oom();
    if (st == SB_OK && o->early_stopping) {
        if (!(is_val = sb_malloc((size_t)n))) st = oom();
        if (st == SB_OK) st = split(o, net->multilabel ? NULL : code, K, n, is_val, &nval);
        if (st == SB_OK) {
            Xv = sb_malloc(sizeof(float) * (size_t)(nval * d));
            Yv = sb_malloc(sizeof(float) * (size_t)(nval * nout));
            vbuf = sb_malloc(sizeof(float) * (size_t)(nval * nout));
            net->val_scores = sb_calloc((size_t)o->max_iter, sizeof(double));
            if (!Xv || !Yv || !vbuf || !net->val_scores) st = oom();
        }
        ntr = 0;
        int64_t v = 0;
        for (int64_t i = 0; st == SB_OK && i < n; i++) {
            if (is_val[i]) {
                memcpy(Xv + v * d, X + i * d, sizeof(float) * (size_t)d);
                memcpy(Yv + v * nout, Yall + i * nout, sizeof(float) * (size_t)nout);
                v++;
            } else
                tr[ntr++] = i;
        }
    } else if (st == SB_OK)
        for (int64_t i = 0; i < n; i++) tr[i] = i;
    const int64_t bs = o->batch_size == 0 ? (ntr < 200 ? ntr : 200) : (o->batch_size < ntr ? o->batch_size : ntr);
    fit_state s;
    memset(&s, 0, sizeof s);
    mlp_work w;
    memset(&w, 0, sizeof w);
    int64_t *perm = NULL;
    if (st == SB_OK) st = work_make(net, bs, 1, &w);
    if (st == SB_OK && !(net->curve = sb_calloc((size_t)o->max_iter, sizeof(double)))) st = oom();
    if (st == SB_OK && !(perm = sb_malloc(sizeof(int64_t) * (size_t)ntr))) st = oom();
    for (int32_t l = 0; st == SB_OK && l < L; l++) {
        const size_t cw = (size_t)(net->size[l] * net->size[l + 1]), cb = (size_t)net->size[l + 1];
        s.gW[l] = sb_malloc(sizeof(float) * cw), s.gb[l] = sb_malloc(sizeof(float) * cb);
        s.mW[l] = sb_calloc(cw, sizeof(float)), s.mb[l] = sb_calloc(cb, sizeof(float));
        if (o->solver == MLP_ADAM) s.vW[l] = sb_calloc(cw, sizeof(float)), s.vb[l] = sb_calloc(cb, sizeof(float));
        if (o->early_stopping) s.bestW[l] = sb_malloc(sizeof(float) * cw), s.bestb[l] = sb_malloc(sizeof(float) * cb);
        if (!s.gW[l] || !s.gb[l] || !s.mW[l] || !s.mb[l] || (o->solver == MLP_ADAM && (!s.vW[l] || !s.vb[l])) ||
            (o->early_stopping && (!s.bestW[l] || !s.bestb[l])))
            st = oom();
    }
    mlp_dev *dev = NULL; /* device=cuda|opencl: the training on the GPU (mlp_dev.c) */
    if (st == SB_OK) {
        glorot(net);
        st = record_epoch(card, prefix, net, 0, 0.0, NULL, 0);
    }
    if (st == SB_OK && (o->device == SB_DEVICE_CUDA || o->device == SB_DEVICE_OPENCL))
        st = sb_mlp_dev_open(o->device, net, X, n, Yall, bs, ntr, Xv, nval, &dev);
    nn_adam adam;
    nn_adam_init(&adam, o->learning_rate_init, o->beta_1, o->beta_2, o->epsilon);
    double lr = o->learning_rate_init; /* SGD's current rate */
    double best_loss = INFINITY, best_val = -INFINITY;
    int32_t no_improve = 0;
    for (int32_t it = 0; st == SB_OK && it < o->max_iter; it++) {
        if (o->shuffle) {
            permutation(o->seed, MLP_PURPOSE_SHUFFLE, (uint64_t)it, perm, ntr);
            for (int64_t i = 0; i < ntr; i++) perm[i] = tr[perm[i]];
        } else
            memcpy(perm, tr, sizeof(int64_t) * (size_t)ntr);
        double acc = 0.0;
        if (dev) {
            int64_t bad = -1;
            st = sb_mlp_dev_epoch(dev, perm, ntr, &adam, (float)lr, &acc, &bad);
            if (st == SB_OK && bad >= 0)
                st = sb_fail(SB_ERR_INVALID_INPUT,
                             "mlp: the loss of epoch %d's batch at row %lld is not finite (diverged: lower "
                             "learning_rate_init or scale X)", (int)it + 1, (long long)bad);
        }
        for (int64_t b0 = 0; !dev && st == SB_OK && b0 < ntr; b0 += bs) {
            const int64_t m = ntr - b0 < bs ? ntr - b0 : bs;
            for (int64_t i = 0; i < m; i++) {
                memcpy(w.A[0] + i * d, X + perm[b0 + i] * d, sizeof(float) * (size_t)d);
                memcpy(w.Y + i * nout, Yall + perm[b0 + i] * nout, sizeof(float) * (size_t)nout);
            }
            float bl;
            if ((st = batch_step(net, &s, &w, m, &bl)) != SB_OK) break;
            if (!isfinite(bl)) {
                st = sb_fail(SB_ERR_INVALID_INPUT,
                             "mlp: the loss of epoch %d's batch at row %lld is not finite (diverged: lower "
                             "learning_rate_init or scale X)", (int)it + 1, (long long)b0);
                break;
            }
            if (o->solver == MLP_ADAM) {
                const float lr_t = nn_adam_step(&adam);
                for (int32_t l = 0; l < L; l++) {
                    nn_adam_update(&adam, lr_t, net->W[l], s.mW[l], s.vW[l], s.gW[l], net->size[l] * net->size[l + 1]);
                    nn_adam_update(&adam, lr_t, net->b[l], s.mb[l], s.vb[l], s.gb[l], net->size[l + 1]);
                }
            } else
                for (int32_t l = 0; l < L; l++) {
                    nn_sgd_update((float)lr, (float)o->momentum, o->nesterovs_momentum, net->W[l], s.mW[l], s.gW[l],
                                  net->size[l] * net->size[l + 1]);
                    nn_sgd_update((float)lr, (float)o->momentum, o->nesterovs_momentum, net->b[l], s.mb[l], s.gb[l],
                                  net->size[l + 1]);
                }
            acc += (double)bl * (double)m;
        }
        if (st != SB_OK) break;
        net->n_iter = it + 1;
        net->t += ntr;
        net->loss = acc / (double)ntr;
        net->curve[it] = net->loss;
        if (dev && card && (st = sb_mlp_dev_pull(dev, net, s.gW[L - 1])) != SB_OK) break;
        if ((st = record_epoch(card, prefix, net, it + 1, net->loss, s.gW[L - 1], net->size[L - 1] * nout)) != SB_OK)
            break;
        /* scikit-learn's _update_no_improvement_count */
        if (o->early_stopping) {
            double sc;
            st = dev ? sb_mlp_dev_val_outputs(dev, vbuf) : sb_mlp_forward(net, Xv, nval, vbuf);
            if (st != SB_OK || (st = val_score(net, Yv, nval, vbuf, &sc)) != SB_OK) break;
            net->val_scores[it] = sc;
            no_improve = sc < best_val + o->tol ? no_improve + 1 : 0;
            if (sc > best_val) {
                best_val = sc;
                if (dev && (st = sb_mlp_dev_best(dev, 1)) != SB_OK) break;
                for (int32_t l = 0; !dev && l < L; l++) {
                    memcpy(s.bestW[l], net->W[l], sizeof(float) * (size_t)(net->size[l] * net->size[l + 1]));
                    memcpy(s.bestb[l], net->b[l], sizeof(float) * (size_t)net->size[l + 1]);
                }
            }
        } else {
            no_improve = net->loss > best_loss - o->tol ? no_improve + 1 : 0;
            if (net->loss < best_loss) best_loss = net->loss;
        }
        if (o->solver == MLP_SGD && o->learning_rate == MLP_LR_INVSCALING)
            lr = o->learning_rate_init / pow_pos((double)net->t + 1.0, o->power_t);
        if (no_improve > o->n_iter_no_change) {
            if (o->solver == MLP_SGD && o->learning_rate == MLP_LR_ADAPTIVE && lr > 1e-6) {
                lr = lr / 5.0;
                no_improve = 0;
            } else
                break;
        }
    }
    /* the device's optimizer state and parameters (the best ones with early stopping) */
    if (st == SB_OK && dev) st = sb_mlp_dev_state(dev, s.mW, s.mb, s.vW, s.vb);
    if (st == SB_OK && dev && o->early_stopping) st = sb_mlp_dev_best(dev, 0);
    if (st == SB_OK && dev) st = sb_mlp_dev_pull(dev, net, NULL);
    sb_mlp_dev_close(dev);
    if (st == SB_OK && o->early_stopping && !dev)
        for (int32_t l = 0; l < L; l++) {
            memcpy(net->W[l], s.bestW[l], sizeof(float) * (size_t)(net->size[l] * net->size[l + 1]));
            memcpy(net->b[l], s.bestb[l], sizeof(float) * (size_t)net->size[l + 1]);
        }
    net->best_loss = o->early_stopping ? NAN : best_loss;
    net->best_val = o->early_stopping ? best_val : NAN;
    if (st == SB_OK && card) {
        char tag[96];
        snprintf(tag, sizeof tag, "%s.n_iter", prefix);
        st = sb_card_record(card, tag, SB_DTYPE_I32, &net->n_iter, 1);
        if (st == SB_OK) st = record_state(card, prefix, net, &s);
    }
    state_free(&s);
    work_free(&w);
    sb_free(perm), sb_free(tr), sb_free(Xv), sb_free(Yv), sb_free(vbuf), sb_free(is_val), sb_free(Yall), sb_free(code);
    if (st != SB_OK) {
        sb_mlp_release(net);
        return st;
    }
    *out = net;
    return SB_OK;
}
