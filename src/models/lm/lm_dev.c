/*
 * lm_dev.c: the byte-level language model's training step on a GPU
 * (device=cuda|opencl; docs/lm.md, "Devices"), lm.c's forward, backward and
 * AdamW step with the same bits: every product through the identical GEMM on
 * the device (sb_gemm_on: each element its exact dot product rounded once, as
 * sb_gemm_host's), every other value by the entry kernels of
 * kernels/entry/lm_entry.h and nn_entry.h, whose per-row and per-value
 * arithmetic is kernels/nn.h's, the text the host's loops run. Parameters,
 * both moments, gradients and every activation stay on the device for the
 * whole run; per step the host writes the batch's byte ids (its Philox
 * windows) and reads back the rows' losses, whose exact sum it forms as the
 * host path does (so the divergence check and the loss are the host's). The
 * AdamW scalars of a step are host float64 work, passed as arguments.
 * Attention takes every (sequence, head) pair of a step at once: each
 * head's columns gathered dense by one launch (klm_heads), its products by
 * the batched identical product (klm_bstats, klm_bprod: each head's bits are
 * sb_gemm_host's on that head alone, as nn_attention_forward runs them), its
 * softmax rows by one launch; a layer's attention is 13 launches forward
 * and 24 backward whatever the batch and head count.
 */
#include "lm.h"
#include "../../device/device.h"
#include "../../linalg/linalg.h"
#include <math.h>
#include <string.h>

#define SQ_CHUNK 256  /* nn_entry.h's SB_NN_SQ_CHUNK */
#define SACC_BYTES 96 /* sizeof(sb_sacc) on every target (sb_reduce.h) */

typedef struct lm_dev_layer {
    sb_dbuf x_in, h1, mu1, rs1, qkv, P, att, x_mid, h2, mu2, rs2, pre, act, mask_a, mask_m;
} lm_dev_layer;

struct lm_dev {
    sb_device *d;
    sb_gemm_ws ws;
    const sb_lm *lm;
    int64_t B, T, rows, dm, nh, hd, nl, nsq;
    int drop;
    sb_dbuf w[LM_MAX_TENSORS], m[LM_MAX_TENSORS], v[LM_MAX_TENSORS], g[LM_MAX_TENSORS];
    sb_dbuf tok, pos, tgt, mask_e, x_out, hf, muf, rsf, logits, rowloss;
    sb_dbuf dx, dh, dbig, dqkv, datt, tmp, tmp4, sq, sc;
    /* every head's dense blocks (item b * nh + h): q, k, v (3 blocks), their
     * gradients (3 blocks), o, dO, the score gradients; the products' line
     * statistics, scales and flags, and integers, of op(A) and op(B) */
    sb_dbuf hq, hdq, ho, hdo, hds, mba, spa, sga, nfa, xia, mbb, spb, sgb, nfb, xib;
    lm_dev_layer L[LM_MAX_LAYERS];
};

static int64_t groups(const sb_device *d, int64_t items) { return items <= 0 ? 0 : (items + d->wg - 1) / d->wg; }

/* Every buffer of v, for allocation checks and release. */
#define LM_DEV_SINGLES(v)                                                                                          \
    &v->tok, &v->pos, &v->tgt, &v->mask_e, &v->x_out, &v->hf, &v->muf, &v->rsf, &v->logits, &v->rowloss, &v->dx,    \
        &v->dh, &v->dbig, &v->dqkv, &v->datt, &v->tmp, &v->tmp4, &v->sq, &v->sc, &v->hq, &v->hdq, &v->ho, &v->hdo, \
        &v->hds, &v->mba, &v->spa, &v->sga, &v->nfa, &v->xia, &v->mbb, &v->spb, &v->sgb, &v->nfb, &v->xib

void sb_lm_dev_close(lm_dev *v) {
    if (!v) return;
    sb_device *d = v->d;
    if (d) {
        sb_dbuf *one[] = {LM_DEV_SINGLES(v)};
        for (size_t i = 0; i < sizeof one / sizeof one[0]; i++) sb_device_release(d, one[i]);
        for (int i = 0; i < LM_MAX_TENSORS; i++) {
            sb_device_release(d, &v->w[i]), sb_device_release(d, &v->m[i]);
            sb_device_release(d, &v->v[i]), sb_device_release(d, &v->g[i]);
        }
        for (int l = 0; l < LM_MAX_LAYERS; l++) {
            lm_dev_layer *y = &v->L[l];
            sb_dbuf *t[] = {&y->x_in, &y->h1, &y->mu1, &y->rs1, &y->qkv, &y->P, &y->att, &y->x_mid,
                            &y->h2, &y->mu2, &y->rs2, &y->pre, &y->act, &y->mask_a, &y->mask_m};
            for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) sb_device_release(d, t[i]);
        }
        sb_gemm_ws_release(d, &v->ws);
        sb_linalg_device_unlock();
    }
    sb_free(v);
}

static sb_status fbuf(lm_dev *v, sb_dbuf *b, int64_t floats, const char *what) {
    return sb_device_alloc(v->d, b, 4 * (size_t)(floats > 0 ? floats : 1), what);
}

static sb_status put(lm_dev *v, sb_dbuf *b, const float *x, int64_t floats, const char *what) {
    sb_status st = fbuf(v, b, floats, what);
    return st == SB_OK ? sb_device_write(v->d, b, 0, x, 4 * (size_t)floats, what) : st;
}

sb_status sb_lm_dev_open(int32_t kind, const sb_lm *lm, lm_dev **out) {
    *out = NULL;
    lm_dev *v = sb_calloc(1, sizeof *v);
    if (!v) return sb_fail(SB_ERR_OUT_OF_MEMORY, "lm: out of memory");
    sb_status st = sb_linalg_device_lock((sb_device_kind)kind, &v->d);
    if (st != SB_OK) {
        sb_free(v);
        return st;
    }
    v->lm = lm;
    const int64_t B = lm->o.batch_size, T = lm->o.context, dm = lm->o.d_model, rows = B * T, nh = lm->o.n_head;
    v->B = B, v->T = T, v->rows = rows, v->dm = dm, v->nh = nh, v->hd = dm / nh, v->nl = lm->o.n_layer;
    v->drop = lm->o.dropout > 0;
    for (int32_t i = 0; st == SB_OK && i < lm->ntensors; i++) {
        const lm_tensor *t = &lm->t[i];
        st = put(v, &v->w[i], lm->w + t->off, t->count, "lm parameters");
        if (st == SB_OK) st = put(v, &v->m[i], lm->m + t->off, t->count, "lm optimizer state");
        if (st == SB_OK) st = put(v, &v->v[i], lm->v + t->off, t->count, "lm optimizer state");
        if (st == SB_OK) st = fbuf(v, &v->g[i], t->count, "lm gradients");
        v->nsq += (t->count + SQ_CHUNK - 1) / SQ_CHUNK;
    }
    for (int64_t l = 0; st == SB_OK && l < v->nl; l++) {
        lm_dev_layer *y = &v->L[l];
        const struct {
            sb_dbuf *b;
            int64_t n;
        } a[] = {{&y->x_in, rows * dm}, {&y->h1, rows * dm},      {&y->mu1, rows},          {&y->rs1, rows},
                 {&y->qkv, rows * 3 * dm}, {&y->P, B * nh * T * T}, {&y->att, rows * dm},   {&y->x_mid, rows * dm},
                 {&y->h2, rows * dm},   {&y->mu2, rows},          {&y->rs2, rows},          {&y->pre, rows * 4 * dm},
                 {&y->act, rows * 4 * dm}, {&y->mask_a, v->drop ? rows * dm : 1}, {&y->mask_m, v->drop ? rows * dm : 1}};
        for (size_t i = 0; st == SB_OK && i < sizeof a / sizeof a[0]; i++) st = fbuf(v, a[i].b, a[i].n, "lm activations");
    }
    const int64_t hl = B * nh * (T > v->hd ? T : v->hd); /* lines of one operand, all items */
    const int64_t he = 2 * B * nh * T * (T > v->hd ? T : v->hd); /* its int64 values, as floats */
    const struct {
        sb_dbuf *b;
        int64_t n;
    } a[] = {{&v->tok, rows},          {&v->pos, rows},           {&v->tgt, rows},          {&v->mask_e, v->drop ? rows * dm : 1},
             {&v->x_out, rows * dm},   {&v->hf, rows * dm},       {&v->muf, rows},          {&v->rsf, rows},
             {&v->logits, rows * LM_VOCAB}, {&v->rowloss, rows},  {&v->dx, rows * dm},      {&v->dh, rows * dm},
             {&v->dbig, rows * 4 * dm}, {&v->dqkv, rows * 3 * dm}, {&v->datt, rows * dm},   {&v->tmp, rows * 4 * dm},
             {&v->tmp4, rows * 4 * dm}, {&v->sq, v->nsq * (SACC_BYTES / 4)}, {&v->sc, 1}, {&v->hq, 3 * rows * dm},
             {&v->hdq, 3 * rows * dm}, {&v->ho, rows * dm},       {&v->hdo, rows * dm},     {&v->hds, B * nh * T * T},
             {&v->mba, hl},            {&v->spa, hl},             {&v->sga, hl},            {&v->nfa, hl},
             {&v->xia, he},            {&v->mbb, hl},             {&v->spb, hl},            {&v->sgb, hl},
             {&v->nfb, hl},            {&v->xib, he}};
    for (size_t i = 0; st == SB_OK && i < sizeof a / sizeof a[0]; i++) st = fbuf(v, a[i].b, a[i].n, "lm batch buffers");
    if (st != SB_OK) {
        sb_lm_dev_close(v);
        return st;
    }
    *out = v;
    return SB_OK;
}

/* Z := A W (+ 1 b^T, then act) for A m x k, W k x n: nn_linear_forward's
 * product and bias add, with nn_act_forward's activation (act NN_IDENTITY:
 * Z itself). */
static sb_status linear_on(lm_dev *v, int64_t m, int64_t k, int64_t n, sb_dbuf *A, sb_dbuf *W, sb_dbuf *b, sb_dbuf *Z,
                           int32_t act, sb_dbuf *Aout) {
    sb_device *d = v->d;
    const sb_gemm_shape s = {0, 0, m, n, k, k, n};
    sb_status st = sb_gemm_on(d, &v->ws, &s, A, W, Z);
    if (st == SB_OK && b)
        st = SB_LAUNCH(d, SB_KL_knet_bias_act, groups(d, m * n), 1, 0, SB_ARG(Z->h), SB_ARG(b->h), SB_ARG(m), SB_ARG(n),
                       SB_ARG(act), SB_ARG(Aout->h));
    return st;
}

/* dW := A^T D and dA := D W^T (nn_linear_backward). */
static sb_status linear_back_on(lm_dev *v, int64_t m, int64_t k, int64_t n, sb_dbuf *A, sb_dbuf *W, sb_dbuf *D,
                                sb_dbuf *dW, sb_dbuf *dA) {
    const sb_gemm_shape sw = {1, 0, k, n, m, k, n}, sa = {0, 1, m, k, n, n, n};
    sb_status st = sb_gemm_on(v->d, &v->ws, &sw, A, D, dW);
    return st == SB_OK ? sb_gemm_on(v->d, &v->ws, &sa, D, W, dA) : st;
}

/* out := the exact column sums of the m x n matrix D (nn_col_sums). */
static sb_status colsum_on(lm_dev *v, sb_dbuf *D, int64_t m, int64_t n, sb_dbuf *out) {
    const float one = 1.0f;
    return SB_LAUNCH(v->d, SB_KL_knet_colsum, groups(v->d, n), 1, 0, SB_ARG(D->h), SB_ARG(m), SB_ARG(n), SB_ARG(one),
                     SB_ARG(out->h));
}

static sb_status ew_on(lm_dev *v, sb_dbuf *A, sb_dbuf *B, sb_dbuf *C, int64_t count, int32_t mul) {
    return SB_LAUNCH(v->d, SB_KL_klm_ew, groups(v->d, count), 1, 0, SB_ARG(A->h), SB_ARG(B->h), SB_ARG(C->h), SB_ARG(count),
                     SB_ARG(mul));
}

static sb_status ln_on(lm_dev *v, sb_dbuf *X, int32_t tg, int32_t tb, sb_dbuf *Y, sb_dbuf *mu, sb_dbuf *rs) {
    const float eps = LM_LN_EPS;
    return SB_LAUNCH(v->d, SB_KL_klm_ln, groups(v->d, v->rows), 1, 0, SB_ARG(X->h), SB_ARG(v->w[tg].h), SB_ARG(v->w[tb].h),
                     SB_ARG(eps), SB_ARG(v->rows), SB_ARG(v->dm), SB_ARG(Y->h), SB_ARG(mu->h), SB_ARG(rs->h));
}

/* Layer norm's backward (nn_layernorm_backward): dX, then dgamma and dbeta
 * into the gradients of tensors tg and tb. */
static sb_status ln_back_on(lm_dev *v, sb_dbuf *X, int32_t tg, int32_t tb, sb_dbuf *mu, sb_dbuf *rs, sb_dbuf *dY,
                            sb_dbuf *dX) {
    sb_status st = SB_LAUNCH(v->d, SB_KL_klm_ln_back, groups(v->d, v->rows), 1, 0, SB_ARG(X->h), SB_ARG(v->w[tg].h),
                             SB_ARG(mu->h), SB_ARG(rs->h), SB_ARG(dY->h), SB_ARG(v->rows), SB_ARG(v->dm), SB_ARG(dX->h),
                             SB_ARG(v->tmp.h));
    if (st == SB_OK) st = colsum_on(v, &v->tmp, v->rows, v->dm, &v->g[tg]);
    return st == SB_OK ? colsum_on(v, dY, v->rows, v->dm, &v->g[tb]) : st;
}

/* Every head's blocks of M (ld columns; nblk blocks of d columns from c0)
 * gathered into blk (put = 0) or put back from it (put = 1): klm_heads. */
static sb_status heads_on(lm_dev *v, sb_dbuf *M, int64_t ld, int64_t c0, int64_t nblk, sb_dbuf *blk, int32_t put) {
    const int64_t cs = v->dm;
    return SB_LAUNCH(v->d, SB_KL_klm_heads, groups(v->d, nblk * v->rows * v->dm), 1, 0, SB_ARG(M->h), SB_ARG(ld),
                     SB_ARG(c0), SB_ARG(cs), SB_ARG(nblk), SB_ARG(v->B), SB_ARG(v->T), SB_ARG(v->nh), SB_ARG(v->hd),
                     SB_ARG(blk->h), SB_ARG(put));
}

/* One operand of the batched products: item p's element q of line l at
 * X[x0 + p * is + l * ls + q * qs]. */
typedef struct lm_opnd {
    sb_dbuf *x;
    int64_t x0, is, ls, qs;
} lm_opnd;

/* C (dense, item after item, from element c0 of its buffer) := op(A_p)
 * op(B_p) for every (sequence, head) item p, m x n of inner length k: the
 * bits of sb_gemm_host on each item (klm_bstats, klm_bfix, klm_bprod). */
static sb_status bprod_on(lm_dev *v, lm_opnd A, lm_opnd B, int64_t m, int64_t n, int64_t k, sb_dbuf *C, int64_t c0) {
    sb_device *d = v->d;
    const int64_t ni = v->B * v->nh;
    sb_status st = SB_OK;
    const lm_opnd *o[2] = {&A, &B};
    sb_dbuf *mb[2] = {&v->mba, &v->mbb}, *sp[2] = {&v->spa, &v->spb}, *sg[2] = {&v->sga, &v->sgb};
    sb_dbuf *nf[2] = {&v->nfa, &v->nfb}, *xi[2] = {&v->xia, &v->xib};
    const int64_t nl[2] = {m, n};
    for (int s = 0; s < 2 && st == SB_OK; s++) {
        st = SB_LAUNCH(d, SB_KL_klm_bstats, groups(d, ni * nl[s]), 1, 0, SB_ARG(o[s]->x->h), SB_ARG(o[s]->x0),
                       SB_ARG(o[s]->is), SB_ARG(o[s]->ls), SB_ARG(o[s]->qs), SB_ARG(ni), SB_ARG(nl[s]), SB_ARG(k),
                       SB_ARG(mb[s]->h), SB_ARG(sp[s]->h), SB_ARG(nf[s]->h));
        if (st == SB_OK)
            st = SB_LAUNCH(d, SB_KL_klm_bfix, groups(d, ni * nl[s] * k), 1, 0, SB_ARG(o[s]->x->h), SB_ARG(o[s]->x0),
                           SB_ARG(o[s]->is), SB_ARG(o[s]->ls), SB_ARG(o[s]->qs), SB_ARG(ni), SB_ARG(nl[s]), SB_ARG(k),
                           SB_ARG(mb[s]->h), SB_ARG(sp[s]->h), SB_ARG(xi[s]->h), SB_ARG(sg[s]->h));
    }
    return st != SB_OK ? st : SB_LAUNCH(d, SB_KL_klm_bprod, groups(d, ni * m * n), 1, 0, SB_ARG(A.x->h), SB_ARG(A.x0),
                     SB_ARG(A.is), SB_ARG(A.ls), SB_ARG(A.qs), SB_ARG(v->xia.h), SB_ARG(v->sga.h), SB_ARG(v->nfa.h),
                     SB_ARG(B.x->h), SB_ARG(B.x0), SB_ARG(B.is), SB_ARG(B.ls), SB_ARG(B.qs), SB_ARG(v->xib.h),
                     SB_ARG(v->sgb.h), SB_ARG(v->nfb.h), SB_ARG(ni), SB_ARG(m), SB_ARG(n), SB_ARG(k), SB_ARG(C->h),
                     SB_ARG(c0));
}

static sb_status dropout_on(lm_dev *v, sb_dbuf *X, sb_dbuf *mask, int64_t step, uint32_t tensor) {
    const float p = (float)v->lm->o.dropout, keep = 1.0f / (1.0f - p);
    const uint64_t seed = v->lm->o.seed;
    const uint32_t s32 = (uint32_t)step;
    const int64_t count = v->rows * v->dm;
    return SB_LAUNCH(v->d, SB_KL_klm_dropout, groups(v->d, count), 1, 0, SB_ARG(X->h), SB_ARG(mask->h), SB_ARG(count),
                     SB_ARG(seed), SB_ARG(s32), SB_ARG(tensor), SB_ARG(p), SB_ARG(keep));
}

/* nn_attention_forward on the device, every (sequence, head) at once:
 * v->hq holds the heads' Q, K, V blocks (rows * d values each). */
static sb_status attention_on(lm_dev *v, lm_dev_layer *y) {
    sb_device *d = v->d;
    const int64_t T = v->T, hd = v->hd, dm = v->dm, th = T * hd, tt = T * T, nr = v->B * v->nh * T, bk = v->rows * dm;
    const float scale = 1.0f / sqrtf((float)hd);
    sb_status st = heads_on(v, &y->qkv, 3 * dm, 0, 3, &v->hq, 0);
    /* P := softmax rows of Q K^T */
    if (st == SB_OK)
        st = bprod_on(v, (lm_opnd){&v->hq, 0, th, hd, 1}, (lm_opnd){&v->hq, bk, th, hd, 1}, T, T, hd, &y->P, 0);
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KL_klm_attn_soft, groups(d, nr), 1, 0, SB_ARG(y->P.h), SB_ARG(nr), SB_ARG(T), SB_ARG(scale));
    /* O := P V */
    if (st == SB_OK)
        st = bprod_on(v, (lm_opnd){&y->P, 0, tt, T, 1}, (lm_opnd){&v->hq, 2 * bk, th, 1, hd}, T, hd, T, &v->ho, 0);
    return st == SB_OK ? heads_on(v, &y->att, dm, 0, 1, &v->ho, 1) : st;
}

/* nn_attention_backward on the device: dO in v->dh, dQKV into v->dqkv. */
static sb_status attention_back_on(lm_dev *v, lm_dev_layer *y) {
    sb_device *d = v->d;
    const int64_t T = v->T, hd = v->hd, dm = v->dm, th = T * hd, tt = T * T, nr = v->B * v->nh * T, bk = v->rows * dm;
    const float scale = 1.0f / sqrtf((float)hd);
    const lm_opnd q_col = {&v->hq, 0, th, 1, hd}, k_col = {&v->hq, bk, th, 1, hd}, v_row = {&v->hq, 2 * bk, th, hd, 1};
    const lm_opnd do_row = {&v->hdo, 0, th, hd, 1}, do_col = {&v->hdo, 0, th, 1, hd}, pt_row = {&y->P, 0, tt, 1, T};
    const lm_opnd ds_row = {&v->hds, 0, tt, T, 1}, dst_row = {&v->hds, 0, tt, 1, T};
    sb_status st = heads_on(v, &y->qkv, 3 * dm, 0, 3, &v->hq, 0);
    if (st == SB_OK) st = heads_on(v, &v->dh, dm, 0, 1, &v->hdo, 0);
    if (st == SB_OK) st = bprod_on(v, do_row, v_row, T, T, hd, &v->hds, 0);         /* dO V^T */
    if (st == SB_OK) st = bprod_on(v, pt_row, do_col, T, hd, T, &v->hdq, 2 * bk);   /* dV = P^T dO */
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KL_klm_attn_dsoft, groups(d, nr), 1, 0, SB_ARG(y->P.h), SB_ARG(v->hds.h), SB_ARG(nr),
                       SB_ARG(T), SB_ARG(scale));
    if (st == SB_OK) st = bprod_on(v, ds_row, k_col, T, hd, T, &v->hdq, 0);         /* dQ = dS K */
    if (st == SB_OK) st = bprod_on(v, dst_row, q_col, T, hd, T, &v->hdq, bk);       /* dK = dS^T Q */
    return st == SB_OK ? heads_on(v, &v->dqkv, 3 * dm, 0, 3, &v->hdq, 1) : st;
}

/* lm.c's forward: the embeddings, the blocks, the final norm and the head. */
static sb_status forward_on(lm_dev *v, int64_t step) {
    sb_device *d = v->d;
    const int64_t dm = v->dm, rows = v->rows, nl = v->nl, n = rows * dm;
    const int drop = step >= 0 && v->drop;
    sb_dbuf *x = &v->L[0].x_in;
    sb_status st = SB_LAUNCH(d, SB_KL_klm_embed, groups(d, n), 1, 0, SB_ARG(v->w[T_WTE].h), SB_ARG(v->w[T_WPE].h),
                             SB_ARG(v->tok.h), SB_ARG(v->pos.h), SB_ARG(rows), SB_ARG(dm), SB_ARG(x->h));
    if (st == SB_OK && drop) st = dropout_on(v, x, &v->mask_e, step, LM_DROP_EMB);
    const int32_t ident = NN_IDENTITY, gelu = NN_GELU;
    for (int64_t l = 0; l < nl && st == SB_OK; l++) {
        lm_dev_layer *y = &v->L[l];
#define WT(k) (&v->w[T_BLK(l, k)])
        st = ln_on(v, &y->x_in, T_BLK(l, B_LN1G), T_BLK(l, B_LN1B), &y->h1, &y->mu1, &y->rs1);
        if (st == SB_OK) st = linear_on(v, rows, dm, 3 * dm, &y->h1, WT(B_WQKV), WT(B_BQKV), &y->qkv, ident, &y->qkv);
        if (st == SB_OK) st = attention_on(v, y);
        if (st == SB_OK) st = linear_on(v, rows, dm, dm, &y->att, WT(B_WO), WT(B_BO), &y->x_mid, ident, &y->x_mid);
        if (st == SB_OK && drop) st = dropout_on(v, &y->x_mid, &y->mask_a, step, LM_DROP_ATTN(l));
        if (st == SB_OK) st = ew_on(v, &y->x_in, &y->x_mid, &y->x_mid, n, 0);
        if (st == SB_OK) st = ln_on(v, &y->x_mid, T_BLK(l, B_LN2G), T_BLK(l, B_LN2B), &y->h2, &y->mu2, &y->rs2);
        if (st == SB_OK) st = linear_on(v, rows, dm, 4 * dm, &y->h2, WT(B_WFC), WT(B_BFC), &y->pre, gelu, &y->act);
        sb_dbuf *xo = l + 1 < nl ? &v->L[l + 1].x_in : &v->x_out;
        if (st == SB_OK) st = linear_on(v, rows, 4 * dm, dm, &y->act, WT(B_WPROJ), WT(B_BPROJ), xo, ident, xo);
        if (st == SB_OK && drop) st = dropout_on(v, xo, &y->mask_m, step, LM_DROP_MLP(l));
        if (st == SB_OK) st = ew_on(v, &y->x_mid, xo, xo, n, 0);
#undef WT
    }
    if (st == SB_OK) st = ln_on(v, &v->x_out, T_LNFG(nl), T_LNFB(nl), &v->hf, &v->muf, &v->rsf);
    return st == SB_OK ? linear_on(v, rows, dm, LM_VOCAB, &v->hf, &v->w[T_HEAD(nl)], NULL, &v->logits, ident, NULL) : st;
}

/* The embedding gradient of ids (nn_embed_backward) into g[t], zeroed first
 * for the float-atomic arm's adds (the profile's kernel writes every value). */
static sb_status embed_back_on(lm_dev *v, sb_dbuf *ids, int64_t vocab, int32_t t) {
    sb_device *d = v->d;
    const int64_t rows = v->rows, n = v->dm;
    const int64_t items = (vocab > rows ? vocab : rows) * n, cnt = vocab * n;
    sb_status st = SB_LAUNCH(d, SB_KL_klm_zero, groups(d, cnt), 1, 0, SB_ARG(v->g[t].h), SB_ARG(cnt));
    return st != SB_OK ? st : SB_LAUNCH(d, SB_KL_klm_embed_back, groups(d, items), 1, 0, SB_ARG(ids->h), SB_ARG(v->dx.h), SB_ARG(rows),
                     SB_ARG(n), SB_ARG(vocab), SB_ARG(v->g[t].h));
}

/* lm.c's backward: v->logits holds dL/dlogits. */
static sb_status backward_on(lm_dev *v) {
    sb_device *d = v->d;
    const int64_t dm = v->dm, rows = v->rows, nl = v->nl, n = rows * dm;
    sb_status st = linear_back_on(v, rows, dm, LM_VOCAB, &v->hf, &v->w[T_HEAD(nl)], &v->logits, &v->g[T_HEAD(nl)], &v->dh);
    if (st == SB_OK) st = ln_back_on(v, &v->x_out, T_LNFG(nl), T_LNFB(nl), &v->muf, &v->rsf, &v->dh, &v->dx);
    const int32_t gelu = NN_GELU;
    for (int64_t l = nl - 1; l >= 0 && st == SB_OK; l--) {
        lm_dev_layer *y = &v->L[l];
#define WT(k) (&v->w[T_BLK(l, k)])
#define GT(k) (&v->g[T_BLK(l, k)])
        sb_dbuf *dbr = &v->dx;
        if (v->drop) {
            st = ew_on(v, &v->dx, &y->mask_m, &v->datt, n, 1);
            dbr = &v->datt;
        }
        if (st == SB_OK) st = linear_back_on(v, rows, 4 * dm, dm, &y->act, WT(B_WPROJ), dbr, GT(B_WPROJ), &v->dbig);
        if (st == SB_OK) st = colsum_on(v, dbr, rows, dm, GT(B_BPROJ));
        const int64_t nb = rows * 4 * dm;
        if (st == SB_OK)
            st = SB_LAUNCH(d, SB_KL_knet_act_back, groups(d, nb), 1, 0, SB_ARG(gelu), SB_ARG(y->pre.h), SB_ARG(y->act.h),
                           SB_ARG(v->dbig.h), SB_ARG(nb));
        if (st == SB_OK) st = linear_back_on(v, rows, dm, 4 * dm, &y->h2, WT(B_WFC), &v->dbig, GT(B_WFC), &v->dh);
        if (st == SB_OK) st = colsum_on(v, &v->dbig, rows, 4 * dm, GT(B_BFC));
        if (st == SB_OK) st = ln_back_on(v, &y->x_mid, T_BLK(l, B_LN2G), T_BLK(l, B_LN2B), &y->mu2, &y->rs2, &v->dh, &v->tmp4);
        if (st == SB_OK) st = ew_on(v, &v->dx, &v->tmp4, &v->dx, n, 0);
        dbr = &v->dx;
        if (st == SB_OK && v->drop) {
            st = ew_on(v, &v->dx, &y->mask_a, &v->datt, n, 1);
            dbr = &v->datt;
        }
        if (st == SB_OK) st = linear_back_on(v, rows, dm, dm, &y->att, WT(B_WO), dbr, GT(B_WO), &v->dh);
        if (st == SB_OK) st = colsum_on(v, dbr, rows, dm, GT(B_BO));
        if (st == SB_OK) st = attention_back_on(v, y);
        if (st == SB_OK) st = linear_back_on(v, rows, dm, 3 * dm, &y->h1, WT(B_WQKV), &v->dqkv, GT(B_WQKV), &v->dh);
        if (st == SB_OK) st = colsum_on(v, &v->dqkv, rows, 3 * dm, GT(B_BQKV));
        if (st == SB_OK) st = ln_back_on(v, &y->x_in, T_BLK(l, B_LN1G), T_BLK(l, B_LN1B), &y->mu1, &y->rs1, &v->dh, &v->tmp4);
        if (st == SB_OK) st = ew_on(v, &v->dx, &v->tmp4, &v->dx, n, 0);
#undef WT
#undef GT
    }
    if (st == SB_OK && v->drop) st = ew_on(v, &v->dx, &v->mask_e, &v->dx, n, 1);
    if (st == SB_OK) st = embed_back_on(v, &v->tok, LM_VOCAB, T_WTE);
    return st == SB_OK ? embed_back_on(v, &v->pos, v->T, T_WPE) : st;
}

sb_status sb_lm_dev_batch(lm_dev *v, const int32_t *tok, const int32_t *pos, const int32_t *tgt, int64_t step, int grad,
                          float *rowloss) {
    sb_device *d = v->d;
    const int64_t rows = v->rows;
    const int32_t g32 = grad ? 1 : 0;
    sb_status st = sb_device_write(d, &v->tok, 0, tok, 4 * (size_t)rows, "lm batch");
    if (st == SB_OK) st = sb_device_write(d, &v->pos, 0, pos, 4 * (size_t)rows, "lm batch");
    if (st == SB_OK) st = sb_device_write(d, &v->tgt, 0, tgt, 4 * (size_t)rows, "lm batch");
    if (st == SB_OK) st = forward_on(v, grad ? step : -1);
    if (st == SB_OK)
        st = SB_LAUNCH(d, SB_KL_klm_xent, groups(d, rows), 1, 0, SB_ARG(v->logits.h), SB_ARG(v->tgt.h), SB_ARG(rows),
                       SB_ARG(g32), SB_ARG(v->rowloss.h));
    if (st == SB_OK && grad) st = backward_on(v);
    return st == SB_OK ? sb_device_read(d, &v->rowloss, 0, rowloss, 4 * (size_t)rows, "lm row losses") : st;
}

sb_status sb_lm_dev_update(lm_dev *v, const nn_adamw_k *k, float clip) {
    sb_device *d = v->d;
    const sb_lm *lm = v->lm;
    sb_status st = SB_OK;
    if (clip > 0) {
        int64_t slot0 = 0;
        for (int32_t i = 0; st == SB_OK && i < lm->ntensors; i++) {
            const int64_t cnt = lm->t[i].count, nc = (cnt + SQ_CHUNK - 1) / SQ_CHUNK;
            st = SB_LAUNCH(d, SB_KL_knet_sq_parts, groups(d, nc), 1, 0, SB_ARG(v->g[i].h), SB_ARG(cnt), SB_ARG(v->sq.h),
                           SB_ARG(slot0));
            slot0 += nc;
        }
        if (st == SB_OK)
            st = SB_LAUNCH(d, SB_KL_klm_clip_scale, 1, 1, 0, SB_ARG(v->sq.h), SB_ARG(v->nsq), SB_ARG(clip), SB_ARG(v->sc.h));
        for (int32_t i = 0; st == SB_OK && i < lm->ntensors; i++) {
            const int64_t cnt = lm->t[i].count;
            st = SB_LAUNCH(d, SB_KL_klm_scale, groups(d, cnt), 1, 0, SB_ARG(v->g[i].h), SB_ARG(cnt), SB_ARG(v->sc.h));
        }
    }
    for (int32_t i = 0; st == SB_OK && i < lm->ntensors; i++) {
        const int64_t cnt = lm->t[i].count;
        const int32_t decay = lm->t[i].decay;
        st = SB_LAUNCH(d, SB_KL_klm_adamw, groups(d, cnt), 1, 0, SB_ARG(v->w[i].h), SB_ARG(v->m[i].h), SB_ARG(v->v[i].h),
                       SB_ARG(v->g[i].h), SB_ARG(cnt), SB_ARG(decay), SB_ARG(k->lr_wd), SB_ARG(k->step_size),
                       SB_ARG(k->sqrtc2), SB_ARG(k->b1), SB_ARG(k->c1m), SB_ARG(k->b2), SB_ARG(k->c2m), SB_ARG(k->eps));
    }
    return st;
}

sb_status sb_lm_dev_pull(lm_dev *v, sb_lm *lm, float *G) {
    sb_status st = SB_OK;
    for (int32_t i = 0; st == SB_OK && i < lm->ntensors; i++) {
        const size_t off = (size_t)lm->t[i].off, bytes = 4 * (size_t)lm->t[i].count;
        st = sb_device_read(v->d, &v->w[i], 0, lm->w + off, bytes, "lm parameters");
        if (st == SB_OK) st = sb_device_read(v->d, &v->m[i], 0, lm->m + off, bytes, "lm optimizer state");
        if (st == SB_OK) st = sb_device_read(v->d, &v->v[i], 0, lm->v + off, bytes, "lm optimizer state");
        if (st == SB_OK && G) st = sb_device_read(v->d, &v->g[i], 0, G + off, bytes, "lm gradients");
    }
    return st;
}
