/*
 * mlp_dev.c: the MLP's training on a GPU (device=cuda|opencl; docs/mlp.md,
 * "Devices"), the same steps as mlp.c's batch_step and optimizer loop with
 * the same bits: every product through the identical GEMM on the device
 * (sb_gemm_on: each element its exact dot product rounded once, as
 * sb_gemm_host's), every other value by the entry kernels of
 * kernels/entry/nn_entry.h, whose per-value arithmetic is kernels/nn.h's,
 * the text the host's loops run, and whose sums are exact superaccumulator
 * sums rounded once. The rows, targets, parameters, gradients, optimizer
 * state and every activation stay on the device for the whole fit; per
 * epoch the host writes the epoch's row order (its Philox permutation) and
 * reads back the batches' losses (the mean loss and the stopping rules are
 * the host's, in float64 as on the CPU). The host still reads what the
 * caller asks for: the parameters and last weight gradient for a card's
 * epoch stages, the validation rows' outputs with early stopping, and the
 * fitted parameters and optimizer state at the end. The step size of each
 * batch (Adam's lr_t, SGD's rate) is host scalar work, passed as an argument.
 */
#include "mlp.h"
#include "../../device/device.h"
#include "../../linalg/linalg.h"
#include "../../math/sb_math.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define SQ_CHUNK 256 /* nn_entry.h's SB_NN_SQ_CHUNK */
#define SACC_BYTES 96 /* sizeof(sb_sacc) on every target (sb_reduce.h) */

struct mlp_dev {
    sb_device *d;
    sb_gemm_ws ws;
    const sb_mlp *net;
    int64_t bs, nval, d_in, nout, nbatch_max, nsq;
    int32_t L, act, kind, adam;
    sb_dbuf X, Yall, perm, Yb, losses, rows, sq;
    sb_dbuf A[MLP_MAX_HIDDEN + 2], Z[MLP_MAX_HIDDEN + 2], D[MLP_MAX_HIDDEN + 2];
    sb_dbuf W[MLP_MAX_HIDDEN + 1], b[MLP_MAX_HIDDEN + 1], gW[MLP_MAX_HIDDEN + 1], gb[MLP_MAX_HIDDEN + 1];
    sb_dbuf mW[MLP_MAX_HIDDEN + 1], mb[MLP_MAX_HIDDEN + 1], vW[MLP_MAX_HIDDEN + 1], vb[MLP_MAX_HIDDEN + 1];
    sb_dbuf bestW[MLP_MAX_HIDDEN + 1], bestb[MLP_MAX_HIDDEN + 1];
    sb_dbuf Xv, VA[MLP_MAX_HIDDEN + 2], VZ[MLP_MAX_HIDDEN + 2]; /* early stopping's rows and forward */
    float *host_losses;
};

static int64_t groups(const sb_device *d, int64_t items) { return items <= 0 ? 0 : (items + d->wg - 1) / d->wg; }

static int64_t wcount(const sb_mlp *net, int32_t l) { return net->size[l] * net->size[l + 1]; }

void sb_mlp_dev_close(mlp_dev *v) {
    if (!v) return;
    sb_device *d = v->d;
    if (d) {
        sb_dbuf *one[] = {&v->X, &v->Yall, &v->perm, &v->Yb, &v->losses, &v->rows, &v->sq, &v->Xv};
        for (size_t i = 0; i < sizeof one / sizeof one[0]; i++) sb_device_release(d, one[i]);
        for (int l = 0; l < MLP_MAX_HIDDEN + 2; l++) {
            sb_device_release(d, &v->A[l]), sb_device_release(d, &v->Z[l]), sb_device_release(d, &v->D[l]);
            sb_device_release(d, &v->VA[l]), sb_device_release(d, &v->VZ[l]);
        }
        for (int l = 0; l < MLP_MAX_HIDDEN + 1; l++) {
            sb_dbuf *t[] = {&v->W[l], &v->b[l], &v->gW[l], &v->gb[l], &v->mW[l], &v->mb[l], &v->vW[l], &v->vb[l],
                            &v->bestW[l], &v->bestb[l]};
            for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) sb_device_release(d, t[i]);
        }
        sb_gemm_ws_release(d, &v->ws);
        sb_linalg_device_unlock();
    }
    sb_free(v->host_losses);
    sb_free(v);
}

static sb_status zeroed(sb_device *d, sb_dbuf *b, int64_t count, const char *what) {
    sb_status st = sb_device_alloc(d, b, 4 * (size_t)(count > 0 ? count : 1), what);
    if (st != SB_OK) return st;
    float *z = sb_calloc((size_t)(count > 0 ? count : 1), sizeof(float));
    if (!z) return sb_fail(SB_ERR_OUT_OF_MEMORY, "mlp: out of memory");
    st = sb_device_write(d, b, 0, z, 4 * (size_t)(count > 0 ? count : 1), what);
    sb_free(z);
    return st;
}

sb_status sb_mlp_dev_open(int32_t kind, const sb_mlp *net, const float *X, int64_t n, const float *Yall, int64_t bs,
                          int64_t ntr, const float *Xv, int64_t nval, mlp_dev **out) {
    *out = NULL;
    mlp_dev *v = sb_calloc(1, sizeof *v);
    if (!v) return sb_fail(SB_ERR_OUT_OF_MEMORY, "mlp: out of memory");
    sb_status st = sb_linalg_device_lock((sb_device_kind)kind, &v->d);
    if (st != SB_OK) {
        sb_free(v);
        return st;
    }
    sb_device *d = v->d;
    v->net = net;
    v->L = net->nlayers;
    v->bs = bs, v->nval = nval, v->d_in = net->size[0], v->nout = net->size[v->L];
    v->act = net->o.activation;
    v->kind = net->o.classifier ? (net->out_act == MLP_OUT_SOFTMAX ? 0 : 1) : 2; /* SB_NN_LOSS_* */
    v->adam = net->o.solver == MLP_ADAM;
    v->nbatch_max = (ntr + bs - 1) / bs;
    for (int32_t l = 0; l < v->L; l++) v->nsq += (wcount(net, l) + SQ_CHUNK - 1) / SQ_CHUNK;
    if (!(v->host_losses = sb_malloc(sizeof(float) * (size_t)v->nbatch_max))) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "mlp: out of memory");
    const int64_t din = v->d_in, nout = v->nout;
    if (st == SB_OK) st = sb_device_alloc(d, &v->X, 4 * (size_t)(n * din), "mlp rows");
    if (st == SB_OK) st = sb_device_write(d, &v->X, 0, X, 4 * (size_t)(n * din), "mlp rows");
    if (st == SB_OK) st = sb_device_alloc(d, &v->Yall, 4 * (size_t)(n * nout), "mlp targets");
    if (st == SB_OK) st = sb_device_write(d, &v->Yall, 0, Yall, 4 * (size_t)(n * nout), "mlp targets");
    if (st == SB_OK) st = sb_device_alloc(d, &v->perm, 8 * (size_t)ntr, "mlp row order");
    if (st == SB_OK) st = sb_device_alloc(d, &v->Yb, 4 * (size_t)(bs * nout), "mlp batch targets");
    if (st == SB_OK) st = sb_device_alloc(d, &v->losses, 4 * (size_t)v->nbatch_max, "mlp batch losses");
    if (st == SB_OK) st = sb_device_alloc(d, &v->rows, SACC_BYTES * (size_t)bs, "mlp loss sums");
    if (st == SB_OK) st = sb_device_alloc(d, &v->sq, SACC_BYTES * (size_t)(v->nsq > 0 ? v->nsq : 1), "mlp norm sums");
    for (int32_t l = 0; st == SB_OK && l <= v->L; l++) {
        const size_t c = 4 * (size_t)(bs * net->size[l]);
        st = sb_device_alloc(d, &v->A[l], c, "mlp activations");
        if (st == SB_OK && l > 0) st = sb_device_alloc(d, &v->Z[l], c, "mlp pre-activations");
        if (st == SB_OK && l > 0) st = sb_device_alloc(d, &v->D[l], c, "mlp deltas");
    }
    for (int32_t l = 0; st == SB_OK && l < v->L; l++) {
        const int64_t cw = wcount(net, l), cb = net->size[l + 1];
        st = sb_device_alloc(d, &v->W[l], 4 * (size_t)cw, "mlp coefs");
        if (st == SB_OK) st = sb_device_write(d, &v->W[l], 0, net->W[l], 4 * (size_t)cw, "mlp coefs");
        if (st == SB_OK) st = sb_device_alloc(d, &v->b[l], 4 * (size_t)cb, "mlp intercepts");
        if (st == SB_OK) st = sb_device_write(d, &v->b[l], 0, net->b[l], 4 * (size_t)cb, "mlp intercepts");
        if (st == SB_OK) st = sb_device_alloc(d, &v->gW[l], 4 * (size_t)cw, "mlp gradients");
        if (st == SB_OK) st = sb_device_alloc(d, &v->gb[l], 4 * (size_t)cb, "mlp gradients");
        if (st == SB_OK) st = zeroed(d, &v->mW[l], cw, "mlp optimizer state");
        if (st == SB_OK) st = zeroed(d, &v->mb[l], cb, "mlp optimizer state");
        if (st == SB_OK && v->adam) st = zeroed(d, &v->vW[l], cw, "mlp optimizer state");
        if (st == SB_OK && v->adam) st = zeroed(d, &v->vb[l], cb, "mlp optimizer state");
        if (st == SB_OK && nval > 0) st = sb_device_alloc(d, &v->bestW[l], 4 * (size_t)cw, "mlp best coefs");
        if (st == SB_OK && nval > 0) st = sb_device_alloc(d, &v->bestb[l], 4 * (size_t)cb, "mlp best intercepts");
    }
    if (st == SB_OK && nval > 0) {
        st = sb_device_alloc(d, &v->Xv, 4 * (size_t)(nval * din), "mlp validation rows");
        if (st == SB_OK) st = sb_device_write(d, &v->Xv, 0, Xv, 4 * (size_t)(nval * din), "mlp validation rows");
        for (int32_t l = 1; st == SB_OK && l <= v->L; l++) {
            const size_t c = 4 * (size_t)(nval * net->size[l]);
            st = sb_device_alloc(d, &v->VA[l], c, "mlp validation activations");
            if (st == SB_OK) st = sb_device_alloc(d, &v->VZ[l], c, "mlp validation activations");
        }
    }
    if (st != SB_OK) {
        sb_mlp_dev_close(v);
        return st;
    }
    *out = v;
    return SB_OK;
}

/* Forward over m rows in A[0] (buffers A, Z of at least m rows): hidden
 * layers through the activation, the output through out_activation_ (mlp.c's
 * forward: the GEMM, then the bias add and the activation per value). */
static sb_status forward_on(mlp_dev *v, sb_dbuf *A, sb_dbuf *Z, int64_t m) {
    sb_device *d = v->d;
    const sb_mlp *net = v->net;
    sb_status st = SB_OK;
    for (int32_t l = 0; st == SB_OK && l < v->L; l++) {
        const int64_t k = net->size[l], n = net->size[l + 1];
        const sb_gemm_shape s = {0, 0, m, n, k, k, n};
        st = sb_gemm_on(d, &v->ws, &s, &A[l], &v->W[l], &Z[l + 1]);
        const int32_t act = l + 1 < v->L ? v->act : (net->out_act == MLP_OUT_LOGISTIC ? NN_LOGISTIC : NN_IDENTITY);
        if (st == SB_OK)
            st = SB_LAUNCH(d, SB_KL_knet_bias_act, groups(d, m * n), 1, 0, SB_ARG(Z[l + 1].h), SB_ARG(v->b[l].h),
                           SB_ARG(m), SB_ARG(n), SB_ARG(act), SB_ARG(A[l + 1].h));
        if (st == SB_OK && l + 1 == v->L && net->out_act == MLP_OUT_SOFTMAX)
            st = SB_LAUNCH(d, SB_KL_knet_softmax, groups(d, m), 1, 0, SB_ARG(A[l + 1].h), SB_ARG(m), SB_ARG(n));
    }
    return st;
}

/* One minibatch of m rows from order position b0: gather, forward, the
 * batch's loss into losses[slot], backward, gradients (batch_step's), then
 * the optimizer's step on every tensor in layer order. */
static sb_status batch_on(mlp_dev *v, int64_t b0, int64_t m, int64_t slot, nn_adam *adam, float lr) {
    sb_device *d = v->d;
    const sb_mlp *net = v->net;
    const int32_t L = v->L;
    const int64_t din = v->d_in, nout = v->nout;
    sb_status st = SB_LAUNCH(d, SB_KL_knet_gather, groups(d, m * (din + nout)), 1, 0, SB_ARG(v->X.h), SB_ARG(v->Yall.h),
                             SB_ARG(v->perm.h), SB_ARG(b0), SB_ARG(m), SB_ARG(din), SB_ARG(nout), SB_ARG(v->A[0].h),
                             SB_ARG(v->Yb.h));
    if (st == SB_OK) st = forward_on(v, v->A, v->Z, m);
    /* the loss: row sums of its terms, the weights' squares, merged by one work-group */
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KL_knet_loss_rows, groups(d, m), 1, 0, SB_ARG(v->A[L].h), SB_ARG(v->Yb.h), SB_ARG(m),
                       SB_ARG(nout), SB_ARG(v->kind), SB_ARG(v->rows.h));
    int64_t slot0 = 0;
    for (int32_t l = 0; st == SB_OK && l < L; l++) {
        const int64_t cw = wcount(net, l), nc = (cw + SQ_CHUNK - 1) / SQ_CHUNK;
        st = SB_LAUNCH(d, SB_KL_knet_sq_parts, groups(d, nc), 1, 0, SB_ARG(v->W[l].h), SB_ARG(cw), SB_ARG(v->sq.h),
                       SB_ARG(slot0));
        slot0 += nc;
    }
    const float alpha = (float)net->o.alpha, fm = (float)m, half_alpha = 0.5f * alpha;
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KL_knet_batch_loss, 1, 1, 0, SB_ARG(v->rows.h), SB_ARG(m), SB_ARG(nout), SB_ARG(v->kind),
                       SB_ARG(v->sq.h), SB_ARG(v->nsq), SB_ARG(half_alpha), SB_ARG(v->losses.h), SB_ARG(slot));
    /* backward */
    const int64_t cl = m * nout;
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KL_knet_delta, groups(d, cl), 1, 0, SB_ARG(v->A[L].h), SB_ARG(v->Yb.h), SB_ARG(v->D[L].h),
                       SB_ARG(cl));
    for (int32_t l = L - 1; st == SB_OK && l >= 0; l--) {
        const int64_t k = net->size[l], n = net->size[l + 1], cw = k * n;
        const sb_gemm_shape sw = {1, 0, k, n, m, k, n}; /* A^T D */
        st = sb_gemm_on(d, &v->ws, &sw, &v->A[l], &v->D[l + 1], &v->gW[l]);
        if (st == SB_OK && l > 0) {
            const sb_gemm_shape sa = {0, 1, m, k, n, n, n}; /* D W^T */
            st = sb_gemm_on(d, &v->ws, &sa, &v->D[l + 1], &v->W[l], &v->D[l]);
        }
        if (st == SB_OK)
            st = SB_LAUNCH(d, SB_KL_knet_wgrad, groups(d, cw), 1, 0, SB_ARG(v->gW[l].h), SB_ARG(v->W[l].h), SB_ARG(cw),
                           SB_ARG(alpha), SB_ARG(fm));
        if (st == SB_OK)
            st = SB_LAUNCH(d, SB_KL_knet_colsum, groups(d, n), 1, 0, SB_ARG(v->D[l + 1].h), SB_ARG(m), SB_ARG(n),
                           SB_ARG(fm), SB_ARG(v->gb[l].h));
        const int64_t ck = m * k;
        if (st == SB_OK && l > 0)
            st = SB_LAUNCH(d, SB_KL_knet_act_back, groups(d, ck), 1, 0, SB_ARG(v->act), SB_ARG(v->Z[l].h),
                           SB_ARG(v->A[l].h), SB_ARG(v->D[l].h), SB_ARG(ck));
    }
    if (st != SB_OK) return st;
    /* the optimizer: the host's scalars, the device's values */
    if (v->adam) {
        const float lr_t = nn_adam_step(adam);
        const float b1 = adam->b1, b2 = adam->b2, c1 = (float)(1.0 - adam->d1), c2 = (float)(1.0 - adam->d2),
                    eps = adam->eps;
        for (int32_t l = 0; st == SB_OK && l < L; l++) {
            const int64_t cw = wcount(net, l), cb = net->size[l + 1];
            st = SB_LAUNCH(d, SB_KL_knet_adam, groups(d, cw), 1, 0, SB_ARG(v->W[l].h), SB_ARG(v->mW[l].h),
                           SB_ARG(v->vW[l].h), SB_ARG(v->gW[l].h), SB_ARG(cw), SB_ARG(lr_t), SB_ARG(b1), SB_ARG(b2),
                           SB_ARG(c1), SB_ARG(c2), SB_ARG(eps));
            if (st == SB_OK)
                st = SB_LAUNCH(d, SB_KL_knet_adam, groups(d, cb), 1, 0, SB_ARG(v->b[l].h), SB_ARG(v->mb[l].h),
                               SB_ARG(v->vb[l].h), SB_ARG(v->gb[l].h), SB_ARG(cb), SB_ARG(lr_t), SB_ARG(b1), SB_ARG(b2),
                               SB_ARG(c1), SB_ARG(c2), SB_ARG(eps));
        }
    } else {
        const float mu = (float)net->o.momentum;
        const int32_t nest = net->o.nesterovs_momentum;
        for (int32_t l = 0; st == SB_OK && l < L; l++) {
            const int64_t cw = wcount(net, l), cb = net->size[l + 1];
            st = SB_LAUNCH(d, SB_KL_knet_sgd, groups(d, cw), 1, 0, SB_ARG(v->W[l].h), SB_ARG(v->mW[l].h),
                           SB_ARG(v->gW[l].h), SB_ARG(cw), SB_ARG(lr), SB_ARG(mu), SB_ARG(nest));
            if (st == SB_OK)
                st = SB_LAUNCH(d, SB_KL_knet_sgd, groups(d, cb), 1, 0, SB_ARG(v->b[l].h), SB_ARG(v->mb[l].h),
                               SB_ARG(v->gb[l].h), SB_ARG(cb), SB_ARG(lr), SB_ARG(mu), SB_ARG(nest));
        }
    }
    return st;
}

sb_status sb_mlp_dev_epoch(mlp_dev *v, const int64_t *perm, int64_t ntr, nn_adam *adam, float lr, double *acc,
                           int64_t *bad_b0) {
    sb_device *d = v->d;
    const int64_t bs = v->bs;
    *bad_b0 = -1;
    sb_status st = sb_device_write(d, &v->perm, 0, perm, 8 * (size_t)ntr, "mlp row order");
    int64_t nb = 0;
    for (int64_t b0 = 0; st == SB_OK && b0 < ntr; b0 += bs, nb++)
        st = batch_on(v, b0, ntr - b0 < bs ? ntr - b0 : bs, nb, adam, lr);
    if (st == SB_OK) st = sb_device_read(d, &v->losses, 0, v->host_losses, 4 * (size_t)nb, "mlp batch losses");
    if (st != SB_OK) return st;
    /* the epoch's mean loss as the host forms it: each batch's loss times its
     * rows, added in batch order in float64 */
    double a = 0.0;
    for (int64_t b = 0; b < nb; b++) {
        const float bl = v->host_losses[b];
        if (!isfinite(bl)) {
            *bad_b0 = b * bs;
            break;
        }
        const int64_t m = ntr - b * bs < bs ? ntr - b * bs : bs;
        a += (double)bl * (double)m;
    }
    *acc = a;
    return SB_OK;
}

sb_status sb_mlp_dev_pull(mlp_dev *v, sb_mlp *net, float *gW_last) {
    sb_status st = SB_OK;
    for (int32_t l = 0; st == SB_OK && l < v->L; l++) {
        st = sb_device_read(v->d, &v->W[l], 0, net->W[l], 4 * (size_t)wcount(net, l), "mlp coefs");
        if (st == SB_OK) st = sb_device_read(v->d, &v->b[l], 0, net->b[l], 4 * (size_t)net->size[l + 1], "mlp intercepts");
    }
    if (st == SB_OK && gW_last)
        st = sb_device_read(v->d, &v->gW[v->L - 1], 0, gW_last, 4 * (size_t)wcount(net, v->L - 1), "mlp gradients");
    return st;
}

sb_status sb_mlp_dev_state(mlp_dev *v, float *const *mW, float *const *mb, float *const *vW, float *const *vb) {
    sb_status st = SB_OK;
    for (int32_t l = 0; st == SB_OK && l < v->L; l++) {
        const size_t cw = 4 * (size_t)wcount(v->net, l), cb = 4 * (size_t)v->net->size[l + 1];
        st = sb_device_read(v->d, &v->mW[l], 0, mW[l], cw, "mlp optimizer state");
        if (st == SB_OK) st = sb_device_read(v->d, &v->mb[l], 0, mb[l], cb, "mlp optimizer state");
        if (st == SB_OK && v->adam) st = sb_device_read(v->d, &v->vW[l], 0, vW[l], cw, "mlp optimizer state");
        if (st == SB_OK && v->adam) st = sb_device_read(v->d, &v->vb[l], 0, vb[l], cb, "mlp optimizer state");
    }
    return st;
}

sb_status sb_mlp_dev_val_outputs(mlp_dev *v, float *out) {
    v->VA[0] = v->Xv; /* borrowed: released as Xv */
    sb_status st = forward_on(v, v->VA, v->VZ, v->nval);
    v->VA[0] = (sb_dbuf){0};
    if (st == SB_OK)
        st = sb_device_read(v->d, &v->VA[v->L], 0, out, 4 * (size_t)(v->nval * v->nout), "mlp validation outputs");
    return st;
}

/* The best parameters so far (early stopping) kept on the device (keep = 1),
 * or put back as the parameters (keep = 0). */
sb_status sb_mlp_dev_best(mlp_dev *v, int keep) {
    sb_status st = SB_OK;
    for (int32_t l = 0; st == SB_OK && l < v->L; l++) {
        const size_t cw = 4 * (size_t)wcount(v->net, l), cb = 4 * (size_t)v->net->size[l + 1];
        st = keep ? sb_device_copy(v->d, &v->bestW[l], 0, &v->W[l], 0, cw, "mlp best coefs")
                  : sb_device_copy(v->d, &v->W[l], 0, &v->bestW[l], 0, cw, "mlp best coefs");
        if (st == SB_OK)
            st = keep ? sb_device_copy(v->d, &v->bestb[l], 0, &v->b[l], 0, cb, "mlp best intercepts")
                      : sb_device_copy(v->d, &v->b[l], 0, &v->bestb[l], 0, cb, "mlp best intercepts");
    }
    return st;
}
