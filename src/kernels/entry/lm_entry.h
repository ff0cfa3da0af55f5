/*
 * lm_entry.h: the entry kernels of the byte-level language model on a GPU
 * (src/models/lm/lm_dev.c, docs/lm.md "Devices"), part of the linalg program
 * (included by linalg_entry.h; their names go in SB_LINALG_LM_KERNELS,
 * src/device/programs.h), beside the identical GEMM that takes every product
 * and the network kernels of nn_entry.h (bias adds, GELU and its derivative,
 * column sums, squares for the clipping norm). Each row's or value's
 * arithmetic is kernels/nn.h's, the text the host's loops run (nn_tf.c,
 * lm.c), so each value has one sequence of float32 roundings; every sum is an
 * exact superaccumulator sum rounded once. Work-items split only over values
 * or rows that do not depend on one another: the grid reaches no bit.
 *
 * Separating arms (never in a profile build): SB_ARM_FLOAT_ATOMIC
 * (SAMEBITS_OPENCL_ARM=float-atomic, CUDA_VARIANT=float-atomic) forms the
 * embedding gradients by float atomic adds, one work-item a row's value, in
 * whatever order the device runs them; SB_ARM_VENDOR_EXP takes the
 * cross-entropy's exponential from the vendor (kernels/nn.h); the build arm
 * lm-attn-order reaches the attention rows here as on the host.
 */
#include "../nn.h"

/* x := wte[tok] + wpe[pos] (the embedding sum of each of rows positions, d
 * values each), one value a work-item. */
SB_KERNEL void klm_embed(SB_GLOBAL const float *wte, SB_GLOBAL const float *wpe, SB_GLOBAL const sb_i32 *tok,
                         SB_GLOBAL const sb_i32 *pos, sb_i64 rows, sb_i64 d, SB_GLOBAL float *x) {
    const sb_i64 i = sb_global_id(0);
    if (i >= rows * d) return;
    const sb_i64 r = i / d, j = i - r * d;
    x[i] = wte[(sb_i64)tok[r] * d + j] + wpe[(sb_i64)pos[r] * d + j];
}

/* Dropout of tensor `tensor` at step `step` (nn_dropout_forward): mask[i]
 * := sb_nn_dropout_mult, X[i] := X[i] mask[i], one value a work-item. */
SB_KERNEL void klm_dropout(SB_GLOBAL float *X, SB_GLOBAL float *mask, sb_i64 count, sb_u64 seed, sb_u32 step,
                           sb_u32 tensor, float p, float keep_scale) {
    const sb_i64 i = sb_global_id(0);
    if (i >= count) return;
    const float s = sb_nn_dropout_mult(seed, step, tensor, p, keep_scale, i);
    mask[i] = s;
    X[i] = X[i] * s;
}

/* C := A + B (mul = 0) or A B (mul = 1), one value a work-item (C may be A
 * or B): the residual adds and the dropout masks' backward. */
SB_KERNEL void klm_ew(SB_GLOBAL const float *A, SB_GLOBAL const float *B, SB_GLOBAL float *C, sb_i64 count,
                      sb_i32 mul) {
    const sb_i64 i = sb_global_id(0);
    if (i < count) C[i] = mul ? A[i] * B[i] : A[i] + B[i];
}

/* Layer norm of the m rows of X (n values each), one row a work-item. */
SB_KERNEL void klm_ln(SB_GLOBAL const float *X, SB_GLOBAL const float *gamma, SB_GLOBAL const float *beta, float eps,
                      sb_i64 m, sb_i64 n, SB_GLOBAL float *Y, SB_GLOBAL float *mean, SB_GLOBAL float *rstd) {
    const sb_i64 i = sb_global_id(0);
    if (i < m) sb_nn_ln_row(X + i * n, gamma, beta, eps, n, Y + i * n, mean + i, rstd + i);
}

/* Layer norm's backward rows: dX and T (dgamma's terms), one row a
 * work-item; the column sums of T and dY follow (knet_colsum). */
SB_KERNEL void klm_ln_back(SB_GLOBAL const float *X, SB_GLOBAL const float *gamma, SB_GLOBAL const float *mean,
                           SB_GLOBAL const float *rstd, SB_GLOBAL const float *dY, sb_i64 m, sb_i64 n,
                           SB_GLOBAL float *dX, SB_GLOBAL float *T) {
    const sb_i64 i = sb_global_id(0);
    if (i < m) sb_nn_ln_back_row(X + i * n, gamma, mean[i], rstd[i], dY + i * n, n, dX + i * n, T + i * n);
}

/* Columns [c0, c0 + w) of rows [r0, r0 + T) of a matrix of ld columns into a
 * dense T x w block (put = 0), or the block back into them (put = 1), one
 * value a work-item: one head's q, k, v or output. */
SB_KERNEL void klm_cols(SB_GLOBAL float *M, sb_i64 r0, sb_i64 T, sb_i64 ld, sb_i64 c0, sb_i64 w, SB_GLOBAL float *blk,
                        sb_i32 put) {
    const sb_i64 i = sb_global_id(0);
    if (i >= T * w) return;
    const sb_i64 t = i / w, j = i - t * w, at = (r0 + t) * ld + c0 + j;
    if (put)
        M[at] = blk[i];
    else
        blk[i] = M[at];
}

/* The T rows of one head's scores become causal probabilities
 * (sb_nn_attn_softmax_row), one row a work-item. */
SB_KERNEL void klm_attn_soft(SB_GLOBAL float *P, sb_i64 T, float scale) {
    const sb_i64 i = sb_global_id(0);
    if (i < T) sb_nn_attn_softmax_row(P + i * T, i, T, scale);
}

/* The T rows of one head's score gradient (sb_nn_attn_dsoft_row), one row a
 * work-item. */
SB_KERNEL void klm_attn_dsoft(SB_GLOBAL const float *P, SB_GLOBAL float *DS, sb_i64 T, float scale) {
    const sb_i64 i = sb_global_id(0);
    if (i < T) sb_nn_attn_dsoft_row(P + i * T, DS + i * T, i, T, scale);
}

/* Each row's cross-entropy into rowloss (sb_nn_xent_row over 256 logits);
 * with grad the logits become the gradient of the batch mean. One row a
 * work-item. */
SB_KERNEL void klm_xent(SB_GLOBAL float *Z, SB_GLOBAL const sb_i32 *tgt, sb_i64 rows, sb_i32 grad,
                        SB_GLOBAL float *rowloss) {
    const sb_i64 i = sb_global_id(0);
    if (i < rows) rowloss[i] = sb_nn_xent_row(Z + i * 256, 256, tgt[i], grad ? Z + i * 256 : 0, rows);
}

/* X := 0 (count values), one a work-item: an embedding gradient before
 * klm_embed_back (which writes every value itself, but under the float-atomic
 * arm adds into them). */
SB_KERNEL void klm_zero(SB_GLOBAL float *X, sb_i64 count) {
    const sb_i64 i = sb_global_id(0);
    if (i < count) X[i] = 0.0f;
}

/* An embedding's gradient (nn_embed_backward): dE[v][j] := the exact sum of
 * dY[i][j] over the rows i with ids[i] == v, rounded once (0 where v never
 * occurs), one (v, j) a work-item (the caller launches max(vocab, rows) x n
 * items and zeroes dE first). Under the arm SB_ARM_FLOAT_ATOMIC each row's
 * value is added to dE by a float atomic, in the device's order. */
SB_KERNEL void klm_embed_back(SB_GLOBAL const sb_i32 *ids, SB_GLOBAL const float *dY, sb_i64 rows, sb_i64 n,
                              sb_i64 vocab, SB_GLOBAL float *dE) {
    const sb_i64 t = sb_global_id(0);
#if defined(SB_ARM_FLOAT_ATOMIC)
    (void)vocab;
    if (t >= rows * n) return;
    const sb_i64 r = t / n, j = t - r * n;
    SB_GLOBAL sb_u32 *p = (SB_GLOBAL sb_u32 *)&dE[(sb_i64)ids[r] * n + j];
    sb_u32 seen, old = *p;
    do {
        seen = old;
        old = sb_atomic_cas32(p, seen, sb_f2u(sb_u2f(seen) + dY[t]));
    } while (old != seen);
#else
    if (t >= vocab * n) return;
    const sb_i64 v = t / n, j = t - v * n;
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (sb_i64 r = 0; r < rows; r++)
        if (ids[r] == v) sb_sacc_add(&acc, dY[r * n + j]);
    dE[t] = sb_sacc_round_f32(&acc);
#endif
}

/* One work-item: the global norm's scale for clipping (nn_clip_global_norm):
 * norm = sqrt(the merged exact sum of the squares' partials rounded once);
 * sc[0] := max_norm / norm where norm > max_norm, else 1 (a product by 1 is
 * exact, the unclipped gradient). */
SB_KERNEL void klm_clip_scale(SB_GLOBAL const sb_sacc *parts, sb_i64 nparts, float max_norm, SB_GLOBAL float *sc) {
    if (sb_global_id(0) != 0) return;
    sb_sacc a, t;
    sb_sacc_init(&a);
    for (sb_i64 i = 0; i < nparts; i++) {
        t = parts[i];
        sb_sacc_merge(&a, &t);
    }
    const float norm = sb_nn_sqrtf(sb_sacc_round_f32(&a));
    sc[0] = norm > max_norm ? max_norm / norm : 1.0f;
}

/* G := G sc[0], one value a work-item. */
SB_KERNEL void klm_scale(SB_GLOBAL float *G, sb_i64 count, SB_GLOBAL const float *sc) {
    const sb_i64 i = sb_global_id(0);
    if (i < count) G[i] = G[i] * sc[0];
}

/* AdamW's step on count values (sb_nn_adamw1), one a work-item. */
SB_KERNEL void klm_adamw(SB_GLOBAL float *P, SB_GLOBAL float *M, SB_GLOBAL float *V, SB_GLOBAL const float *G,
                         sb_i64 count, sb_i32 decay, float lr_wd, float step_size, float sqrtc2, float b1, float c1m,
                         float b2, float c2m, float eps) {
    const sb_i64 i = sb_global_id(0);
    if (i < count) sb_nn_adamw1(P + i, M + i, V + i, G[i], decay, lr_wd, step_size, sqrtc2, b1, c1m, b2, c2m, eps);
}
