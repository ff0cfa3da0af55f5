/*
 * nn_entry.h: the entry kernels of the network building blocks on a GPU
 * (src/models/mlp/mlp_dev.c, docs/mlp.md "Devices"), part of the linalg
 * program (included by linalg_entry.h; their names go in
 * SB_LINALG_NN_KERNELS, src/device/programs.h), beside the identical GEMM
 * that takes every product. Each value's arithmetic is kernels/nn.h's, the
 * text the host's loops run; every sum is an exact superaccumulator
 * (sb_sacc) rounded once, so a work-item's share of a sum reaches no bit.
 * Work-items split only over values that do not depend on one another, so
 * the grid and the work-group size reach no bit.
 *
 * Separating arms (never in a profile build): SB_SABOTAGE_MLP_GRAD_ORDER adds
 * a bias gradient's rows in float32 from the last up (the CPU arm of that
 * name, here in the device's own column sums); SB_SABOTAGE_MLP_SOFTMAX_ORDER
 * adds a softmax row's exponentials in float32 from the last down;
 * SB_ARM_VENDOR_EXP takes the softmax's exponential from the vendor.
 */
#include "../nn.h"

/* Values a work-item of knet_sq_parts squares and adds. */
#define SB_NN_SQ_CHUNK 256

/* The batch's rows from the epoch's order: row r of the batch is row
 * perm[b0 + r] of X (d features) and of Yall (nout targets); work-item i
 * copies one value (the features first, then the targets). */
SB_KERNEL void knet_gather(SB_GLOBAL const float *X, SB_GLOBAL const float *Yall, SB_GLOBAL const sb_i64 *perm,
                           sb_i64 b0, sb_i64 m, sb_i64 d, sb_i64 nout, SB_GLOBAL float *A0, SB_GLOBAL float *Y) {
    const sb_i64 i = sb_global_id(0);
    if (i < m * d) {
        const sb_i64 r = i / d;
        A0[i] = X[perm[b0 + r] * d + (i - r * d)];
    } else if (i < m * (d + nout)) {
        const sb_i64 j = i - m * d, r = j / nout;
        Y[j] = Yall[perm[b0 + r] * nout + (j - r * nout)];
    }
}

/* Z := Z + 1 b^T (the pre-activations, m x n) and A := act(Z), one value a
 * work-item: nn_linear_forward's bias add and nn_act_forward's value. */
SB_KERNEL void knet_bias_act(SB_GLOBAL float *Z, SB_GLOBAL const float *b, sb_i64 m, sb_i64 n, sb_i32 act,
                             SB_GLOBAL float *A) {
    const sb_i64 i = sb_global_id(0);
    if (i >= m * n) return;
    const float z = Z[i] + b[i % n];
    Z[i] = z;
    A[i] = sb_nn_act(act, z);
}

/* Row i of the m x n matrix A becomes its softmax (nn_softmax_rows): e_j =
 * exp(a_j - max) by the profile's sb_expf, divided by their exact sum
 * rounded once. One row a work-item. */
SB_KERNEL void knet_softmax(SB_GLOBAL float *A, sb_i64 m, sb_i64 n) {
    const sb_i64 i = sb_global_id(0);
    if (i >= m) return;
    SB_GLOBAL float *z = A + i * n;
    float mx = z[0];
    for (sb_i64 j = 1; j < n; j++)
        if (z[j] > mx) mx = z[j];
#if defined(SB_SABOTAGE_MLP_SOFTMAX_ORDER)
    float s = 0.0f;
    for (sb_i64 j = 0; j < n; j++) z[j] = SB_NN_SOFTMAX_EXPF(z[j] - mx);
    for (sb_i64 j = n - 1; j >= 0; j--) s = s + z[j];
#else
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (sb_i64 j = 0; j < n; j++) {
        z[j] = SB_NN_SOFTMAX_EXPF(z[j] - mx);
        sb_sacc_add(&acc, z[j]);
    }
    const float s = sb_sacc_round_f32(&acc);
#endif
    for (sb_i64 j = 0; j < n; j++) z[j] = z[j] / s;
}

/* parts[i] := the exact sum of row i's loss terms (sb_nn_loss_terms), one
 * row a work-item; knet_batch_loss merges them. */
SB_KERNEL void knet_loss_rows(SB_GLOBAL const float *P, SB_GLOBAL const float *Y, sb_i64 m, sb_i64 n, sb_i32 kind,
                              SB_GLOBAL sb_sacc *parts) {
    const sb_i64 i = sb_global_id(0);
    if (i >= m) return;
    sb_sacc acc;
    sb_sacc_init(&acc);
    sb_nn_loss_terms(&acc, kind, P, Y, i * n, (i + 1) * n);
    parts[i] = acc;
}

/* parts[slot + c] := the exact sum of the squares (each rounded) of W's
 * values [c SB_NN_SQ_CHUNK, (c + 1) SB_NN_SQ_CHUNK), one chunk a work-item:
 * nn_sq_norm's terms. */
SB_KERNEL void knet_sq_parts(SB_GLOBAL const float *W, sb_i64 count, SB_GLOBAL sb_sacc *parts, sb_i64 slot) {
    const sb_i64 c = sb_global_id(0), i0 = c * SB_NN_SQ_CHUNK;
    if (i0 >= count) return;
    const sb_i64 i1 = i0 + SB_NN_SQ_CHUNK < count ? i0 + SB_NN_SQ_CHUNK : count;
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (sb_i64 i = i0; i < i1; i++) sb_sacc_add(&acc, W[i] * W[i]);
    parts[slot + c] = acc;
}

/* Lanes of knet_batch_loss: a power of two, at most the work-group. */
#if SB_WG < 64
#define SB_NN_LOSS_LANES SB_WG
#else
#define SB_NN_LOSS_LANES 64
#endif

/* One work-group: the batch's loss into losses[slot], as the host's
 * batch_step forms it: l0 from the merged row sums (sb_nn_loss_of), sq the
 * merged squares rounded once, loss = l0 + half_alpha sq / m, half_alpha =
 * 0.5f alpha as the host rounded it. Lane l merges the partials l, l +
 * lanes, ..., then the lanes merge pairwise in local memory: merges of exact
 * sums in any grouping give the same value, so the lanes reach no bit. */
SB_KERNEL void knet_batch_loss(SB_GLOBAL const sb_sacc *rows, sb_i64 m, sb_i64 n, sb_i32 kind,
                               SB_GLOBAL const sb_sacc *sq, sb_i64 nsq, float half_alpha, SB_GLOBAL float *losses,
                               sb_i64 slot) {
    SB_SHARED sb_sacc la[SB_NN_LOSS_LANES];
    SB_SHARED sb_sacc lb[SB_NN_LOSS_LANES];
    const int lid = sb_local_id(0);
    sb_sacc a, b, t;
    if (lid < SB_NN_LOSS_LANES) {
        sb_sacc_init(&a);
        sb_sacc_init(&b);
        for (sb_i64 i = lid; i < m; i += SB_NN_LOSS_LANES) {
            t = rows[i];
            sb_sacc_merge(&a, &t);
        }
        for (sb_i64 i = lid; i < nsq; i += SB_NN_LOSS_LANES) {
            t = sq[i];
            sb_sacc_merge(&b, &t);
        }
        la[lid] = a;
        lb[lid] = b;
    }
    sb_barrier();
    for (int s = SB_NN_LOSS_LANES / 2; s > 0; s >>= 1) {
        if (lid < s) {
            a = la[lid];
            t = la[lid + s];
            sb_sacc_merge(&a, &t);
            la[lid] = a;
            b = lb[lid];
            t = lb[lid + s];
            sb_sacc_merge(&b, &t);
            lb[lid] = b;
        }
        sb_barrier();
    }
    if (lid == 0) {
        a = la[0];
        b = lb[0];
        const float l0 = sb_nn_loss_of(kind, sb_sacc_round_f32(&a), m, n);
        losses[slot] = l0 + half_alpha * sb_sacc_round_f32(&b) / (float)m;
    }
}

/* D := A - Y, the output's delta for every pairing of output activation and
 * loss, one value a work-item. */
SB_KERNEL void knet_delta(SB_GLOBAL const float *A, SB_GLOBAL const float *Y, SB_GLOBAL float *D, sb_i64 count) {
    const sb_i64 i = sb_global_id(0);
    if (i < count) D[i] = A[i] - Y[i];
}

/* G := (G + alpha W) / fm, a weight gradient with the L2 penalty per row of
 * the batch, one value a work-item. */
SB_KERNEL void knet_wgrad(SB_GLOBAL float *G, SB_GLOBAL const float *W, sb_i64 count, float alpha, float fm) {
    const sb_i64 i = sb_global_id(0);
    if (i < count) G[i] = (G[i] + alpha * W[i]) / fm;
}

/* gb[j] := (the exact sum of column j of the m x n matrix D, rounded once) /
 * fm: a bias gradient (nn_col_sums, then the division), one column a
 * work-item. */
SB_KERNEL void knet_colsum(SB_GLOBAL const float *D, sb_i64 m, sb_i64 n, float fm, SB_GLOBAL float *gb) {
    const sb_i64 j = sb_global_id(0);
    if (j >= n) return;
#if defined(SB_SABOTAGE_MLP_GRAD_ORDER)
    float s = 0.0f;
    for (sb_i64 i = m - 1; i >= 0; i--) s = s + D[i * n + j];
    gb[j] = s / fm;
#else
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (sb_i64 i = 0; i < m; i++) sb_sacc_add(&acc, D[i * n + j]);
    gb[j] = sb_sacc_round_f32(&acc) / fm;
#endif
}

/* D := D act'(.), the derivative from Z (the pre-activations) or A (the
 * outputs) as sb_nn_act_back takes it, one value a work-item. */
SB_KERNEL void knet_act_back(sb_i32 act, SB_GLOBAL const float *Z, SB_GLOBAL const float *A, SB_GLOBAL float *D,
                             sb_i64 count) {
    const sb_i64 i = sb_global_id(0);
    if (i < count) D[i] = sb_nn_act_back(act, Z[i], A[i], D[i]);
}

/* Adam's step on count values (sb_nn_adam1), one a work-item. */
SB_KERNEL void knet_adam(SB_GLOBAL float *P, SB_GLOBAL float *M, SB_GLOBAL float *V, SB_GLOBAL const float *G,
                         sb_i64 count, float lr_t, float b1, float b2, float c1, float c2, float eps) {
    const sb_i64 i = sb_global_id(0);
    if (i < count) sb_nn_adam1(P + i, M + i, V + i, G[i], lr_t, b1, b2, c1, c2, eps);
}

/* SGD's step with momentum on count values (sb_nn_sgd1), one a work-item. */
SB_KERNEL void knet_sgd(SB_GLOBAL float *P, SB_GLOBAL float *U, SB_GLOBAL const float *G, sb_i64 count, float lr,
                        float mu, sb_i32 nesterov) {
    const sb_i64 i = sb_global_id(0);
    if (i < count) sb_nn_sgd1(P + i, U + i, G[i], lr, mu, nesterov);
}
