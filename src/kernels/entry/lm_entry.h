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

/* Every head's columns of a row-major matrix of ld columns (B sequences of T
 * rows, nh heads of hd columns, nblk blocks of nh * hd columns from column c0
 * on, block c at c0 + c * cs) gathered dense (put = 0) into blk, or the dense
 * blocks put back (put = 1): blk[((c * B + b) * nh + h) * T * hd + t * hd + j]
 * is M[(b * T + t) * ld + c0 + c * cs + h * hd + j], one value a work-item.
 * The heads' q, k, v (or their gradients) are nblk = 3 blocks of cs = d
 * columns; (b, h) is item b * nh + h of the batched products (klm_bprod). */
SB_KERNEL void klm_heads(SB_GLOBAL float *M, sb_i64 ld, sb_i64 c0, sb_i64 cs, sb_i64 nblk, sb_i64 B, sb_i64 T,
                         sb_i64 nh, sb_i64 hd, SB_GLOBAL float *blk, sb_i32 put) {
    const sb_i64 i = sb_global_id(0), per = T * hd, items = B * nh;
    if (i >= nblk * items * per) return;
    const sb_i64 ci = i / per, r = i - ci * per, c = ci / items, p = ci - c * items, b = p / nh, h = p - b * nh;
    const sb_i64 t = r / hd, j = r - t * hd, at = (b * T + t) * ld + c0 + c * cs + h * hd + j;
    if (put)
        M[at] = blk[i];
    else
        blk[i] = M[at];
}

/* The batched products of attention: nitems operand pairs, item p's op(A)
 * line l (element q at A[ao + p * ais + l * als + q * aqs], K elements) and
 * op(B) line l likewise; C[co + p * m * n + i * n + j] := the identical
 * GEMM's value of row i of op(A_p) times column j of op(B_p)
 * (kernels/linalg.h: each operand's digits from its own largest line spread,
 * each line's scale from its largest magnitude, the exact integer sum of the
 * scaled products rounded once, the special values of sb_oz_special). Every
 * sum is an integer's, so the bits are sb_gemm_host's of each item alone, in
 * any grid: the host's per-head products, every head in one launch each.
 *
 * klm_bstats: each line's largest finite magnitude (mb), spread (sp,
 * sb_oz_spread) and nonfinite flag (nf), one line a work-item. */
SB_KERNEL void klm_bstats(SB_GLOBAL const float *X, sb_i64 xo, sb_i64 is, sb_i64 ls, sb_i64 qs, sb_i64 nitems,
                          sb_i64 nl, sb_i64 K, SB_GLOBAL sb_i32 *mb, SB_GLOBAL sb_i32 *sp, SB_GLOBAL sb_i32 *nf) {
    const sb_i64 g = sb_global_id(0);
    if (g >= nitems * nl) return;
    const sb_i64 p = g / nl, l = g - p * nl;
    SB_GLOBAL const float *x = X + xo + p * is + l * ls;
    sb_u32 m = 0u;
    sb_i32 f = 0;
    sb_i64 sum = 0, cnt = 0;
    for (sb_i64 q = 0; q < K; q++) {
        const sb_u32 u = sb_f2u(x[q * qs]), v = sb_oz_mag(u);
        f |= sb_oz_nonfinite(u);
        m = v > m ? v : m;
        if (v != 0u) {
            sum += sb_oz_lead(v);
            cnt++;
        }
    }
    mb[g] = (sb_i32)m;
    sp[g] = sb_oz_spread(m, sum, cnt);
    nf[g] = f;
}

/* klm_bfix: each element's integer RNE(x 2^sigma) (sb_oz_fixed) into
 * xi[(p * nl + l) * K + q], the operand's digits sb_oz_digits_for of its
 * lines' largest spread, the line's scale sigma into sg[p * nl + l] (from
 * its q = 0 work-item), one element a work-item. */
SB_KERNEL void klm_bfix(SB_GLOBAL const float *X, sb_i64 xo, sb_i64 is, sb_i64 ls, sb_i64 qs, sb_i64 nitems,
                        sb_i64 nl, sb_i64 K, SB_GLOBAL const sb_i32 *mb, SB_GLOBAL const sb_i32 *sp,
                        SB_GLOBAL sb_i64 *xi, SB_GLOBAL sb_i32 *sg) {
    const sb_i64 g = sb_global_id(0);
    if (g >= nitems * nl * K) return;
    const sb_i64 pl = g / K, q = g - pl * K, p = pl / nl, l = pl - p * nl;
    sb_i32 s = 0;
    for (sb_i64 r = 0; r < nl; r++) s = sp[p * nl + r] > s ? sp[p * nl + r] : s;
    const int S = sb_oz_digits_for(s);
    const sb_i32 sigma = sb_oz_sigma((sb_u32)mb[pl], S);
    if (q == 0) sg[pl] = sigma;
    xi[g] = sb_oz_fixed(sb_f2u(X[xo + p * is + l * ls + q * qs]), sigma, S);
}

/* klm_bprod: one value of C a work-item from the operands' integers (xa, xb),
 * scales (sga, sgb) and flags (nfa, nfb); the special values from the floats
 * themselves where a line holds a nonfinite one. */
SB_KERNEL void klm_bprod(SB_GLOBAL const float *A, sb_i64 ao, sb_i64 ais, sb_i64 als, sb_i64 aqs,
                         SB_GLOBAL const sb_i64 *xa, SB_GLOBAL const sb_i32 *sga, SB_GLOBAL const sb_i32 *nfa,
                         SB_GLOBAL const float *B, sb_i64 bo, sb_i64 bis, sb_i64 bls, sb_i64 bqs,
                         SB_GLOBAL const sb_i64 *xb, SB_GLOBAL const sb_i32 *sgb, SB_GLOBAL const sb_i32 *nfb,
                         sb_i64 nitems, sb_i64 m, sb_i64 n, sb_i64 K, SB_GLOBAL float *C, sb_i64 co) {
    const sb_i64 g = sb_global_id(0);
    if (g >= nitems * m * n) return;
    const sb_i64 p = g / (m * n), r = g - p * m * n, i = r / n, j = r - i * n, la = p * m + i, lb = p * n + j;
    if (nfa[la] || nfb[lb]) {
        const sb_u32 sx = sb_oz_special(A + ao + p * ais + i * als, 0, aqs, B + bo + p * bis + j * bls, 0, bqs, K);
        if (sx != 0u) {
            C[co + g] = sb_u2f(sx);
            return;
        }
    }
    SB_GLOBAL const sb_i64 *x = xa + la * K;
    SB_GLOBAL const sb_i64 *y = xb + lb * K;
    sb_i64 c[4] = {0, 0, 0, 0};
    for (sb_i64 q = 0; q < K; q++)
        if (x[q] != 0 && y[q] != 0) sb_oz_mul_add(c, x[q], y[q]);
    sb_oz_acc tot;
    sb_oz_acc_of_parts(c, &tot);
    C[co + g] = sb_u2f(K > 0 ? sb_oz_round(&tot, sga[la] + sgb[lb]) : 0u);
}

/* The rows of every head's scores (nrows rows of T, row i at position i mod
 * T of its head) become causal probabilities (sb_nn_attn_softmax_row), one
 * row a work-item. */
SB_KERNEL void klm_attn_soft(SB_GLOBAL float *P, sb_i64 nrows, sb_i64 T, float scale) {
    const sb_i64 i = sb_global_id(0);
    if (i < nrows) sb_nn_attn_softmax_row(P + i * T, i % T, T, scale);
}

/* The rows of every head's score gradient (sb_nn_attn_dsoft_row; rows as
 * klm_attn_soft's), one row a work-item. */
SB_KERNEL void klm_attn_dsoft(SB_GLOBAL const float *P, SB_GLOBAL float *DS, sb_i64 nrows, sb_i64 T, float scale) {
    const sb_i64 i = sb_global_id(0);
    if (i < nrows) sb_nn_attn_dsoft_row(P + i * T, DS + i * T, i % T, T, scale);
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
