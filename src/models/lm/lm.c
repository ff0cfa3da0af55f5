/* lm.c: the byte-level language model's forward and backward passes, its
 * AdamW steps and its sampler (docs/lm.md). A pre-norm transformer of
 * n_layer blocks; the residual stream of each position is d_model floats.
 * Philox draws: the initialization by (seed, LM_P_INIT, parameter index),
 * the training windows by (seed, LM_P_BATCH, step * batch_size + b), the
 * held-out windows by (seed, LM_P_EVAL, e * batch_size + b), dropout by
 * (seed, step, value index, tensor id) (nn_dropout_forward), sampling by
 * (sampler seed, LM_P_GEN, token index). Nothing else is random, so the
 * state after step k is (parameters, both moments, step): a checkpoint
 * holds the whole trajectory's future. */
#include "lm.h"
#include "../../linalg/linalg.h"
#include "../../math/sb_math.h"
#include "../../core/rng.h"
#include "../../kernels/nn.h"
#include "../../device/device.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define LM_P_INIT 0x4c4d4931u  /* "LMI1" */
#define LM_P_BATCH 0x4c4d4231u /* "LMB1" */
#define LM_P_EVAL 0x4c4d4531u  /* "LME1" */
#define LM_P_GEN 0x4c4d4731u   /* "LMG1" */
static const char *const k_block_names[LM_PER_BLOCK] = {"ln1_g", "ln1_b", "w_qkv", "b_qkv", "w_o", "b_o",
                                                         "ln2_g", "ln2_b", "w_fc", "b_fc", "w_proj", "b_proj"};

static void add_tensor(sb_lm *lm, const char *name, int64_t count, int32_t decay) {
    lm_tensor *t = &lm->t[lm->ntensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->off = lm->nparams, t->count = count, t->decay = decay;
    lm->nparams += count;
}

sb_status sb_lm_alloc(sb_lm *lm) {
    const int64_t d = lm->o.d_model, L = lm->o.n_layer;
    lm->ntensors = 0, lm->nparams = 0;
    add_tensor(lm, "wte", LM_VOCAB * d, 1);
    add_tensor(lm, "wpe", (int64_t)lm->o.context * d, 1);
    for (int64_t l = 0; l < L; l++) {
        const int64_t cnt[LM_PER_BLOCK] = {d, d, d * 3 * d, 3 * d, d * d, d, d, d, d * 4 * d, 4 * d, 4 * d * d, d};
        for (int k = 0; k < LM_PER_BLOCK; k++) {
            char name[24];
            snprintf(name, sizeof name, "h%d.%s", (int)l, k_block_names[k]);
            add_tensor(lm, name, cnt[k], k == B_WQKV || k == B_WO || k == B_WFC || k == B_WPROJ);
        }
    }
    add_tensor(lm, "lnf_g", d, 0);
    add_tensor(lm, "lnf_b", d, 0);
    add_tensor(lm, "head", d * LM_VOCAB, 1);
    lm->w = sb_calloc((size_t)lm->nparams, sizeof(float));
    lm->m = sb_calloc((size_t)lm->nparams, sizeof(float));
    lm->v = sb_calloc((size_t)lm->nparams, sizeof(float));
    if (!lm->w || !lm->m || !lm->v) return sb_fail(SB_ERR_OUT_OF_MEMORY, "lm: out of memory (%lld parameters)", (long long)lm->nparams);
    return SB_OK;
}

void sb_lm_release(sb_lm *lm) {
    if (!lm) return;
    sb_free(lm->w), sb_free(lm->m), sb_free(lm->v);
    sb_free(lm->train_loss), sb_free(lm->eval_step), sb_free(lm->eval_loss);
    sb_free(lm);
}

sb_status sb_lm_push_loss(sb_lm *lm, float loss) {
    if (lm->step >= lm->cap_loss) {
        const int64_t cap = lm->cap_loss ? 2 * lm->cap_loss : 64;
        float *p = sb_realloc(lm->train_loss, sizeof(float) * (size_t)cap);
        if (!p) return sb_fail(SB_ERR_OUT_OF_MEMORY, "lm: out of memory");
        lm->train_loss = p, lm->cap_loss = cap;
    }
    lm->train_loss[lm->step] = loss;
    return SB_OK;
}

sb_status sb_lm_push_eval(sb_lm *lm, int64_t step, float loss) {
    if (lm->n_eval >= lm->cap_eval) {
        const int64_t cap = lm->cap_eval ? 2 * lm->cap_eval : 16;
        int64_t *s = sb_realloc(lm->eval_step, sizeof(int64_t) * (size_t)cap);
        if (!s) return sb_fail(SB_ERR_OUT_OF_MEMORY, "lm: out of memory");
        lm->eval_step = s;
        float *p = sb_realloc(lm->eval_loss, sizeof(float) * (size_t)cap);
        if (!p) return sb_fail(SB_ERR_OUT_OF_MEMORY, "lm: out of memory");
        lm->eval_loss = p, lm->cap_eval = cap;
    }
    lm->eval_step[lm->n_eval] = step, lm->eval_loss[lm->n_eval] = loss;
    lm->n_eval++;
    return SB_OK;
}

/* A uniform value in [-a, a): 2u - 1 (u a multiple of 2^-24: exact) times a. */
static float init_uniform(uint64_t seed, int64_t idx, float a) {
    const float u = sb_rng_unit_f32(seed, LM_P_INIT, (uint64_t)idx);
    return (2.0f * u - 1.0f) * a;
}

sb_status sb_lm_new(const lm_opts *o, sb_lm **out) {
    *out = NULL;
    sb_lm *lm = sb_calloc(1, sizeof *lm);
    if (!lm) return sb_fail(SB_ERR_OUT_OF_MEMORY, "lm: out of memory");
    lm->o = *o;
    sb_status st = sb_lm_alloc(lm);
    if (st != SB_OK) {
        sb_lm_release(lm);
        return st;
    }
    /* GPT-2's initialization with a uniform of the same spread: std 0.02
     * (a = 0.02 sqrt 3), the residual projections' shrunk by 1/sqrt(2 L);
     * biases 0, norm gains 1 */
    const float a = (float)(0.02 * sqrt(3.0)), ap = (float)(0.02 * sqrt(3.0) / sqrt(2.0 * o->n_layer));
    for (int32_t i = 0; i < lm->ntensors; i++) {
        const lm_tensor *t = &lm->t[i];
        float *w = lm->w + t->off;
        const char *dot = strchr(t->name, '.');
        const char *base = dot ? dot + 1 : t->name;
        if (!strcmp(base, "ln1_g") || !strcmp(base, "ln2_g") || !strcmp(base, "lnf_g")) {
            for (int64_t j = 0; j < t->count; j++) w[j] = 1.0f;
        } else if (t->decay) {
            const float s = !strcmp(base, "w_o") || !strcmp(base, "w_proj") ? ap : a;
            for (int64_t j = 0; j < t->count; j++) w[j] = init_uniform(o->seed, t->off + j, s);
        }
    }
    *out = lm;
    return SB_OK;
}

const char *sb_lm_check(const sb_lm *lm) {
    const lm_opts *o = &lm->o;
    if (o->n_layer < 1 || o->n_layer > LM_MAX_LAYERS) return "n_layer";
    if (o->d_model < 1 || o->d_model > LM_MAX_WIDTH || o->n_head < 1 || o->d_model % o->n_head) return "d_model or n_head";
    if (o->context < 2 || o->context > LM_MAX_CONTEXT || o->batch_size < 1 || o->batch_size > LM_MAX_BATCH) return "context or batch_size";
    if (o->eval_batches < 1 || o->eval_batches > 100000) return "eval_batches";
    if (!(o->learning_rate > 0 && o->learning_rate <= 10) || !(o->beta_1 >= 0 && o->beta_1 < 1) ||
        !(o->beta_2 >= 0 && o->beta_2 < 1) || !(o->epsilon > 0 && o->epsilon <= 1) ||
        !(o->weight_decay >= 0 && o->weight_decay <= 1) || !(o->dropout >= 0 && o->dropout < 1) ||
        !(o->clip_norm >= 0 && o->clip_norm <= 1e6) || !(o->validation_fraction > 0 && o->validation_fraction < 1))
        return "optimizer options";
    if (lm->step < 0 || lm->step > LM_MAX_STEPS || lm->n_eval < 0 || lm->n_eval > lm->step + 1) return "step counts";
    if (lm->step > 0 && lm->corpus_len == 0) return "corpus";
    for (int64_t i = 0; i < lm->nparams; i++)
        if (!isfinite(lm->w[i]) || !isfinite(lm->m[i]) || !isfinite(lm->v[i]) || lm->v[i] < 0) return "parameters (not finite)";
    for (int64_t i = 0; i < lm->n_eval; i++)
        if (lm->eval_step[i] < 0 || lm->eval_step[i] > lm->step || (i && lm->eval_step[i] < lm->eval_step[i - 1]))
            return "held-out steps";
    return NULL;
}

/* ---- the workspace of one batch shape ------------------------------------ */

typedef struct lm_layer_ws {
    float *x_in, *h1, *mu1, *rs1, *qkv, *P, *att, *x_mid, *h2, *mu2, *rs2, *pre, *act, *mask_a, *mask_m;
} lm_layer_ws;

typedef struct lm_ws {
    int64_t B, T, rows;
    int32_t *tok, *pos, *tgt;
    float *mask_e;
    lm_layer_ws L[LM_MAX_LAYERS];
    float *x_out, *hf, *muf, *rsf, *logits, *rowloss;
    /* backward scratch */
    float *dx, *dh, *dbig, *dqkv, *datt, *tmp, *tmp4, *G;
    float *pool;
} lm_ws;

static void ws_free(lm_ws *ws) {
    sb_free(ws->pool);
    sb_free(ws->tok);
}

/* One allocation carved into every array of a batch of B windows of T. */
static sb_status ws_alloc(const sb_lm *lm, int64_t B, int64_t T, int train, lm_ws *ws) {
    memset(ws, 0, sizeof *ws);
    const int64_t d = lm->o.d_model, H = lm->o.n_head, rows = B * T, nl = lm->o.n_layer;
    ws->B = B, ws->T = T, ws->rows = rows;
    const int drop = train && lm->o.dropout > 0;
    const int64_t per_layer = rows * d * 5 + rows * 4 + rows * 3 * d + B * H * T * T + rows * 8 * d + (drop ? 2 * rows * d : 0);
    int64_t total = nl * per_layer + rows * d * 2 + rows * 2 + rows * LM_VOCAB + rows + (drop ? rows * d : 0);
    if (train) total += rows * d * 2 + rows * 4 * d + rows * 3 * d + rows * d + rows * 4 * d * 2 + lm->nparams;
    ws->pool = sb_malloc(sizeof(float) * (size_t)total);
    ws->tok = sb_malloc(sizeof(int32_t) * (size_t)(3 * rows));
    if (!ws->pool || !ws->tok) {
        ws_free(ws);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "lm: out of memory (a batch of %lld x %lld)", (long long)B, (long long)T);
    }
    ws->pos = ws->tok + rows, ws->tgt = ws->tok + 2 * rows;
    float *p = ws->pool;
#define TAKE(field, n) (ws->field = p, p += (n))
    for (int64_t l = 0; l < nl; l++) {
        lm_layer_ws *y = &ws->L[l];
#define LTAKE(field, n) (y->field = p, p += (n))
        LTAKE(x_in, rows * d), LTAKE(h1, rows * d), LTAKE(mu1, rows), LTAKE(rs1, rows), LTAKE(qkv, rows * 3 * d);
        LTAKE(P, B * H * T * T), LTAKE(att, rows * d), LTAKE(x_mid, rows * d), LTAKE(h2, rows * d);
        LTAKE(mu2, rows), LTAKE(rs2, rows), LTAKE(pre, rows * 4 * d), LTAKE(act, rows * 4 * d);
        if (drop) LTAKE(mask_a, rows * d), LTAKE(mask_m, rows * d);
#undef LTAKE
    }
    TAKE(x_out, rows * d), TAKE(hf, rows * d), TAKE(muf, rows), TAKE(rsf, rows), TAKE(logits, rows * LM_VOCAB);
    TAKE(rowloss, rows);
    if (drop) TAKE(mask_e, rows * d);
    if (train) {
        TAKE(dx, rows * d), TAKE(dh, rows * d), TAKE(dbig, rows * 4 * d), TAKE(dqkv, rows * 3 * d);
        TAKE(datt, rows * d), TAKE(tmp, rows * 4 * d), TAKE(tmp4, rows * 4 * d), TAKE(G, lm->nparams);
    }
#undef TAKE
    return SB_OK;
}

static float *W(const sb_lm *lm, int32_t t) { return lm->w + lm->t[t].off; }

/* Cross-entropy of each row against its target: loss_i = (max + log S) -
 * z_y with S the exact sum of exp(z_j - max) rounded once; with dz (not
 * NULL) the gradient of the batch mean, (e_j / S - [j == y]) / rows. */
static void xent_rows(int64_t rows, const float *Z, const int32_t *tgt, float *rowloss, float *dz) {
    for (int64_t i = 0; i < rows; i++)
        rowloss[i] = sb_nn_xent_row(Z + i * LM_VOCAB, LM_VOCAB, tgt[i], dz ? dz + i * LM_VOCAB : NULL, rows);
}

/* The forward pass of ws's tokens (rows = B T, positions ws->pos) up to the
 * logits; with step >= 0 and dropout on, the masks of that step. */
static sb_status forward(const sb_lm *lm, lm_ws *ws, int64_t step) {
    const int64_t d = lm->o.d_model, rows = ws->rows, nl = lm->o.n_layer;
    const int drop = step >= 0 && lm->o.dropout > 0;
    const float pd = (float)lm->o.dropout;
    sb_status st = SB_OK;
    float *x = nl ? ws->L[0].x_in : ws->x_out;
    nn_embed_forward(rows, d, ws->tok, W(lm, T_WTE), x);
    const float *wpe = W(lm, T_WPE);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < d; j++) x[i * d + j] = x[i * d + j] + wpe[ws->pos[i] * d + j];
    if (drop) nn_dropout_forward(lm->o.seed, (uint32_t)step, LM_DROP_EMB, pd, x, ws->mask_e, rows * d);
    for (int64_t l = 0; l < nl && st == SB_OK; l++) {
        lm_layer_ws *y = &ws->L[l];
        nn_layernorm_forward(rows, d, y->x_in, W(lm, T_BLK(l, B_LN1G)), W(lm, T_BLK(l, B_LN1B)), LM_LN_EPS, y->h1, y->mu1, y->rs1);
        if ((st = nn_linear_forward(rows, d, 3 * d, y->h1, W(lm, T_BLK(l, B_WQKV)), W(lm, T_BLK(l, B_BQKV)), y->qkv)) != SB_OK) break;
        if ((st = nn_attention_forward(ws->B, ws->T, d, lm->o.n_head, y->qkv, y->att, y->P)) != SB_OK) break;
        if ((st = nn_linear_forward(rows, d, d, y->att, W(lm, T_BLK(l, B_WO)), W(lm, T_BLK(l, B_BO)), y->x_mid)) != SB_OK) break;
        if (drop) nn_dropout_forward(lm->o.seed, (uint32_t)step, LM_DROP_ATTN(l), pd, y->x_mid, y->mask_a, rows * d);
        for (int64_t i = 0; i < rows * d; i++) y->x_mid[i] = y->x_in[i] + y->x_mid[i];
        nn_layernorm_forward(rows, d, y->x_mid, W(lm, T_BLK(l, B_LN2G)), W(lm, T_BLK(l, B_LN2B)), LM_LN_EPS, y->h2, y->mu2, y->rs2);
        if ((st = nn_linear_forward(rows, d, 4 * d, y->h2, W(lm, T_BLK(l, B_WFC)), W(lm, T_BLK(l, B_BFC)), y->pre)) != SB_OK) break;
        nn_act_forward(NN_GELU, y->pre, y->act, rows * 4 * d);
        float *xo = l + 1 < nl ? ws->L[l + 1].x_in : ws->x_out;
        if ((st = nn_linear_forward(rows, 4 * d, d, y->act, W(lm, T_BLK(l, B_WPROJ)), W(lm, T_BLK(l, B_BPROJ)), xo)) != SB_OK) break;
        if (drop) nn_dropout_forward(lm->o.seed, (uint32_t)step, LM_DROP_MLP(l), pd, xo, y->mask_m, rows * d);
        for (int64_t i = 0; i < rows * d; i++) xo[i] = y->x_mid[i] + xo[i];
    }
    if (st != SB_OK) return st;
    nn_layernorm_forward(rows, d, ws->x_out, W(lm, T_LNFG(nl)), W(lm, T_LNFB(nl)), LM_LN_EPS, ws->hf, ws->muf, ws->rsf);
    return nn_linear_forward(rows, d, LM_VOCAB, ws->hf, W(lm, T_HEAD(nl)), NULL, ws->logits);
}

/* The backward pass of the batch mean loss into ws->G (every tensor's
 * gradient, written whole). ws->logits holds dL/dlogits on entry. */
static sb_status backward(const sb_lm *lm, lm_ws *ws) {
    const int64_t d = lm->o.d_model, rows = ws->rows, nl = lm->o.n_layer;
    const int drop = ws->L[0].mask_a != NULL || ws->mask_e != NULL;
    float *G = ws->G;
#define GT(ti) (G + lm->t[ti].off)
    sb_status st = nn_linear_backward(rows, d, LM_VOCAB, ws->hf, W(lm, T_HEAD(nl)), ws->logits, GT(T_HEAD(nl)), ws->dh);
    if (st != SB_OK) return st;
    nn_layernorm_backward(rows, d, ws->x_out, W(lm, T_LNFG(nl)), ws->muf, ws->rsf, ws->dh, ws->dx, GT(T_LNFG(nl)),
                          GT(T_LNFB(nl)), ws->tmp);
    float *dx = ws->dx; /* the residual stream's gradient */
    for (int64_t l = nl - 1; l >= 0 && st == SB_OK; l--) {
        lm_layer_ws *y = &ws->L[l];
        /* x_out = x_mid + drop(act W_proj + b_proj) */
        const float *dbr = dx;
        if (drop) {
            for (int64_t i = 0; i < rows * d; i++) ws->datt[i] = dx[i] * y->mask_m[i];
            dbr = ws->datt;
        }
        if ((st = nn_linear_backward(rows, 4 * d, d, y->act, W(lm, T_BLK(l, B_WPROJ)), dbr, GT(T_BLK(l, B_WPROJ)), ws->dbig)) != SB_OK) break;
        nn_col_sums(rows, d, dbr, GT(T_BLK(l, B_BPROJ)));
        nn_act_backward(NN_GELU, y->pre, y->act, ws->dbig, rows * 4 * d);
        if ((st = nn_linear_backward(rows, d, 4 * d, y->h2, W(lm, T_BLK(l, B_WFC)), ws->dbig, GT(T_BLK(l, B_WFC)), ws->dh)) != SB_OK) break;
        nn_col_sums(rows, 4 * d, ws->dbig, GT(T_BLK(l, B_BFC)));
        nn_layernorm_backward(rows, d, y->x_mid, W(lm, T_BLK(l, B_LN2G)), y->mu2, y->rs2, ws->dh, ws->tmp4,
                              GT(T_BLK(l, B_LN2G)), GT(T_BLK(l, B_LN2B)), ws->tmp);
        for (int64_t i = 0; i < rows * d; i++) dx[i] = dx[i] + ws->tmp4[i]; /* dL/dx_mid */
        /* x_mid = x_in + drop(att W_o + b_o) */
        dbr = dx;
        if (drop) {
            for (int64_t i = 0; i < rows * d; i++) ws->datt[i] = dx[i] * y->mask_a[i];
            dbr = ws->datt;
        }
        if ((st = nn_linear_backward(rows, d, d, y->att, W(lm, T_BLK(l, B_WO)), dbr, GT(T_BLK(l, B_WO)), ws->dh)) != SB_OK) break;
        nn_col_sums(rows, d, dbr, GT(T_BLK(l, B_BO)));
        if ((st = nn_attention_backward(ws->B, ws->T, d, lm->o.n_head, y->qkv, y->P, ws->dh, ws->dqkv)) != SB_OK) break;
        if ((st = nn_linear_backward(rows, d, 3 * d, y->h1, W(lm, T_BLK(l, B_WQKV)), ws->dqkv, GT(T_BLK(l, B_WQKV)), ws->dh)) != SB_OK) break;
        nn_col_sums(rows, 3 * d, ws->dqkv, GT(T_BLK(l, B_BQKV)));
        nn_layernorm_backward(rows, d, y->x_in, W(lm, T_BLK(l, B_LN1G)), y->mu1, y->rs1, ws->dh, ws->tmp4,
                              GT(T_BLK(l, B_LN1G)), GT(T_BLK(l, B_LN1B)), ws->tmp);
        for (int64_t i = 0; i < rows * d; i++) dx[i] = dx[i] + ws->tmp4[i]; /* dL/dx_in */
    }
    if (st != SB_OK) return st;
    if (ws->mask_e)
        for (int64_t i = 0; i < rows * d; i++) dx[i] = dx[i] * ws->mask_e[i];
    if ((st = nn_embed_backward(rows, d, LM_VOCAB, ws->tok, dx, GT(T_WTE))) != SB_OK) return st;
    return nn_embed_backward(rows, d, lm->o.context, ws->pos, dx, GT(T_WPE));
#undef GT
}

/* The training split: the first (1 - validation_fraction) of the bytes, the
 * count rounded down in float64 (a fixed rule). */
static int64_t train_len(const sb_lm *lm, int64_t n) {
    return (int64_t)floor((double)n * (1.0 - lm->o.validation_fraction));
}

/* Window b of a batch: tokens from offset off, targets one byte on. */
static void fill_window(lm_ws *ws, int64_t b, const uint8_t *src, int64_t off) {
    for (int64_t t = 0; t < ws->T; t++) {
        const int64_t i = b * ws->T + t;
        ws->tok[i] = src[off + t], ws->tgt[i] = src[off + t + 1], ws->pos[i] = (int32_t)t;
    }
}

static uint64_t fnv1a(const uint8_t *p, int64_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (int64_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static sb_status check_corpus(const sb_lm *lm, int64_t n, const char *who) {
    const int64_t T = lm->o.context, nt = train_len(lm, n);
    if (n > LM_MAX_CORPUS) return sb_fail(SB_ERR_LIMIT, "%s: a corpus of %lld bytes (at most %lld)", who, (long long)n, LM_MAX_CORPUS);
    if (nt < T + 2 || n - nt < T + 2)
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "%s: a corpus of %lld bytes leaves %lld for training and %lld held out (validation_fraction=%g); "
                       "each needs more than context + 1 = %lld", who, (long long)n, (long long)nt, (long long)(n - nt),
                       lm->o.validation_fraction, (long long)T + 1);
    return SB_OK;
}

/* A workspace of the batch's byte ids and row losses alone (the device path:
 * its activations are on the device), with G (nparams floats) when grads. */
static sb_status ws_ids_alloc(const sb_lm *lm, int64_t B, int64_t T, int grads, lm_ws *ws) {
    memset(ws, 0, sizeof *ws);
    const int64_t rows = B * T;
    ws->B = B, ws->T = T, ws->rows = rows;
    ws->pool = sb_malloc(sizeof(float) * (size_t)(rows + (grads ? lm->nparams : 0)));
    ws->tok = sb_malloc(sizeof(int32_t) * (size_t)(3 * rows));
    if (!ws->pool || !ws->tok) {
        ws_free(ws);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "lm: out of memory (a batch of %lld x %lld)", (long long)B, (long long)T);
    }
    ws->pos = ws->tok + rows, ws->tgt = ws->tok + 2 * rows;
    ws->rowloss = ws->pool;
    if (grads) ws->G = ws->pool + rows;
    return SB_OK;
}

/* The rows' losses of the batch in ws (its ids filled): on the host, or on
 * the device dev (not NULL); step >= 0 is a training step (dropout of that
 * step, the gradient into ws->G or the device's), else a held-out batch. */
static sb_status batch_rows(const sb_lm *lm, lm_dev *dev, lm_ws *ws, int64_t step) {
    if (dev) return sb_lm_dev_batch(dev, ws->tok, ws->pos, ws->tgt, step, step >= 0, ws->rowloss);
    sb_status st = forward(lm, ws, step);
    if (st != SB_OK) return st;
    xent_rows(ws->rows, ws->logits, ws->tgt, ws->rowloss, step >= 0 ? ws->logits : NULL);
    return step >= 0 ? backward(lm, ws) : SB_OK;
}

static sb_status eval_loss_with(const sb_lm *lm, lm_dev *dev, const uint8_t *corpus, int64_t n, float *loss) {
    sb_status st = check_corpus(lm, n, "lm evaluate");
    if (st != SB_OK) return st;
    const int64_t T = lm->o.context, B = lm->o.batch_size, nt = train_len(lm, n), nv = n - nt;
    lm_ws ws;
    if ((st = dev ? ws_ids_alloc(lm, B, T, 0, &ws) : ws_alloc(lm, B, T, 0, &ws)) != SB_OK) return st;
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (int64_t e = 0; e < lm->o.eval_batches && st == SB_OK; e++) {
        for (int64_t b = 0; b < B; b++)
            fill_window(&ws, b, corpus + nt, (int64_t)sb_rng_below(lm->o.seed, LM_P_EVAL, (uint64_t)(e * B + b), (uint32_t)(nv - T - 1)));
        if ((st = batch_rows(lm, dev, &ws, -1)) != SB_OK) break;
        for (int64_t i = 0; i < ws.rows; i++) sb_sacc_add(&acc, ws.rowloss[i]);
    }
    if (st == SB_OK) *loss = sb_sacc_round_f32(&acc) / (float)(lm->o.eval_batches * B * T);
    ws_free(&ws);
    return st;
}

sb_status sb_lm_eval_loss(const sb_lm *lm, const uint8_t *corpus, int64_t n, float *loss) {
    return eval_loss_with(lm, NULL, corpus, n, loss);
}

/* The loss of step s's batch and its gradient (into ws->G, unclipped). */
static sb_status batch_grad(const sb_lm *lm, lm_dev *dev, lm_ws *ws, const uint8_t *corpus, int64_t nt, int64_t s,
                            float *loss) {
    const int64_t T = lm->o.context, B = lm->o.batch_size;
    for (int64_t b = 0; b < B; b++)
        fill_window(ws, b, corpus, (int64_t)sb_rng_below(lm->o.seed, LM_P_BATCH, (uint64_t)(s * B + b), (uint32_t)(nt - T - 1)));
    sb_status st = batch_rows(lm, dev, ws, s);
    if (st != SB_OK) return st;
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (int64_t i = 0; i < ws->rows; i++) sb_sacc_add(&acc, ws->rowloss[i]);
    *loss = sb_sacc_round_f32(&acc) / (float)ws->rows;
    return SB_OK;
}

sb_status sb_lm_batch_grad(const sb_lm *lm, const uint8_t *corpus, int64_t n, int64_t s, float *loss, float *G) {
    sb_status st = check_corpus(lm, n, "lm gradient");
    if (st != SB_OK) return st;
    lm_ws ws;
    if ((st = ws_alloc(lm, lm->o.batch_size, lm->o.context, 1, &ws)) != SB_OK) return st;
    st = batch_grad(lm, NULL, &ws, corpus, train_len(lm, n), s, loss);
    if (st == SB_OK && G) memcpy(G, ws.G, sizeof(float) * (size_t)lm->nparams);
    ws_free(&ws);
    return st;
}

static sb_status card_tensor(sb_card *card, const char *prefix, int64_t step, const char *what, const char *name,
                             const float *x, int64_t n) {
    char tag[128];
    snprintf(tag, sizeof tag, "%s.step%lld.%s%s%s", prefix, (long long)step, what, name[0] ? "." : "", name);
    return sb_card_record(card, tag, SB_DTYPE_F32, x, (uint64_t)n);
}

sb_status sb_lm_train_steps(sb_lm *lm, const uint8_t *corpus, int64_t n, int64_t steps, int64_t eval_every,
                            sb_card *card, const char *prefix) {
    sb_status st = check_corpus(lm, n, "lm train");
    if (st != SB_OK) return st;
    if (steps < 0 || steps > LM_MAX_STEPS - lm->step)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "lm train: steps=%lld must be in 0..%lld", (long long)steps,
                       (long long)(LM_MAX_STEPS - lm->step));
    const uint64_t h = fnv1a(corpus, n);
    if (lm->step > 0 && (lm->corpus_len != (uint64_t)n || lm->corpus_hash != h))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "lm train: the model was trained %lld steps on another corpus (%llu bytes, "
                       "FNV-1a %016llx; this one: %lld bytes, %016llx): resuming on it would leave the trajectory",
                       (long long)lm->step, (unsigned long long)lm->corpus_len, (unsigned long long)lm->corpus_hash,
                       (long long)n, (unsigned long long)h);
    lm->corpus_len = (uint64_t)n, lm->corpus_hash = h;
    const int64_t T = lm->o.context, B = lm->o.batch_size, nt = train_len(lm, n);
    lm_ws ws;
    lm_dev *dev = NULL;
    if (lm->o.device != SB_DEVICE_CPU) {
        if ((st = sb_lm_dev_open(lm->o.device, lm, &dev)) != SB_OK) return st;
        st = ws_ids_alloc(lm, B, T, card != NULL, &ws);
    } else {
        st = ws_alloc(lm, B, T, 1, &ws);
    }
    if (st != SB_OK) {
        sb_lm_dev_close(dev);
        return st;
    }
    if (lm->step == 0 && lm->n_eval == 0 && eval_every > 0) { /* the held-out loss before training */
        float l0;
        if ((st = eval_loss_with(lm, dev, corpus, n, &l0)) == SB_OK) st = sb_lm_push_eval(lm, 0, l0);
    }
    for (int64_t k = 0; k < steps && st == SB_OK; k++) {
        const int64_t s = lm->step;
        float loss;
        if ((st = batch_grad(lm, dev, &ws, corpus, nt, s, &loss)) != SB_OK) break;
        if (!isfinite(loss)) { /* a diverging run is refused, never stepped on */
            st = sb_fail(SB_ERR_INVALID_INPUT, "lm train: step %lld's loss is not finite (the run diverged: lower "
                         "learning_rate or turn clip_norm on)", (long long)s);
            break;
        }
        nn_adamw_k kk;
        nn_adamw_scalars(lm->o.learning_rate, lm->o.beta_1, lm->o.beta_2, lm->o.epsilon, lm->o.weight_decay, s + 1, &kk);
        if (dev) {
            if ((st = sb_lm_dev_update(dev, &kk, (float)lm->o.clip_norm)) != SB_OK) break;
        } else {
            if (lm->o.clip_norm > 0) {
                float *g[1] = {ws.G};
                const int64_t cnt[1] = {lm->nparams};
                nn_clip_global_norm(1, g, cnt, (float)lm->o.clip_norm);
            }
            for (int32_t i = 0; i < lm->ntensors; i++) {
                const lm_tensor *t = &lm->t[i];
                nn_adamw_update(&kk, lm->w + t->off, lm->m + t->off, lm->v + t->off, ws.G + t->off, t->count, t->decay);
            }
        }
        if ((st = sb_lm_push_loss(lm, loss)) != SB_OK) break;
        lm->step = s + 1;
        if (card && dev && (st = sb_lm_dev_pull(dev, lm, ws.G)) != SB_OK) break;
        if (card) {
            char tag[128];
            snprintf(tag, sizeof tag, "%s.step%lld.loss", prefix, (long long)s);
            st = sb_card_record(card, tag, SB_DTYPE_F32, &loss, 1);
            for (int32_t i = 0; i < lm->ntensors && st == SB_OK; i++)
                st = card_tensor(card, prefix, s, "grad", lm->t[i].name, ws.G + lm->t[i].off, lm->t[i].count);
            if (st == SB_OK) st = card_tensor(card, prefix, s, "adam_m", "", lm->m, lm->nparams);
            if (st == SB_OK) st = card_tensor(card, prefix, s, "adam_v", "", lm->v, lm->nparams);
            for (int32_t i = 0; i < lm->ntensors && st == SB_OK; i++)
                st = card_tensor(card, prefix, s, "param", lm->t[i].name, lm->w + lm->t[i].off, lm->t[i].count);
        }
        if (st == SB_OK && eval_every > 0 && lm->step % eval_every == 0) {
            float le;
            if ((st = eval_loss_with(lm, dev, corpus, n, &le)) == SB_OK) st = sb_lm_push_eval(lm, lm->step, le);
            if (st == SB_OK && card) {
                char tag[128];
                snprintf(tag, sizeof tag, "%s.step%lld.heldout_loss", prefix, (long long)s);
                st = sb_card_record(card, tag, SB_DTYPE_F32, &le, 1);
            }
        }
    }
    /* the device's state back into the model (its checkpoint, sampling and
     * evaluation are the host's) */
    if (dev) {
        const sb_status sp = sb_lm_dev_pull(dev, lm, NULL);
        if (st == SB_OK) st = sp;
        sb_lm_dev_close(dev);
    }
    ws_free(&ws);
    return st;
}

/* Sampling: the logits of the last position of the window (the last
 * min(context, length) bytes) divided by temperature; e_j = exp(z_j / tau -
 * max); a draw u in [0, 1) of (seed, LM_P_GEN, token index) times S (the
 * exact sum of the e_j rounded once) is the threshold, and the byte is the
 * first j whose running float32 sum (j = 0, 1, ... in order) exceeds it
 * (the last byte of nonzero e where rounding leaves none). temperature 0:
 * the largest logit, the lowest byte on ties. */
sb_status sb_lm_sample(const sb_lm *lm, const uint8_t *prompt, int64_t np, int64_t count, double temperature,
                       uint64_t seed, uint8_t *out) {
    const int64_t T = lm->o.context, total = np + count;
    uint8_t *seq = sb_malloc((size_t)total);
    if (!seq) return sb_fail(SB_ERR_OUT_OF_MEMORY, "lm generate: out of memory");
    memcpy(seq, prompt, (size_t)np);
    lm_ws ws;
    sb_status st = SB_OK;
    int64_t wlen = -1;
    const float tau = (float)temperature;
    for (int64_t k = 0; k < count && st == SB_OK; k++) {
        const int64_t len = np + k, L = len < T ? len : T;
        if (L != wlen) {
            if (wlen > 0) ws_free(&ws);
            if ((st = ws_alloc(lm, 1, L, 0, &ws)) != SB_OK) {
                wlen = -1;
                break;
            }
            wlen = L;
        }
        for (int64_t t = 0; t < L; t++) ws.tok[t] = seq[len - L + t], ws.pos[t] = (int32_t)t;
        if ((st = forward(lm, &ws, -1)) != SB_OK) break;
        const float *z = ws.logits + (L - 1) * LM_VOCAB;
        int32_t pick = 0;
        if (tau == 0.0f) {
            for (int j = 1; j < LM_VOCAB; j++)
                if (z[j] > z[pick]) pick = j;
        } else {
            float e[LM_VOCAB], mx = z[0] / tau;
            for (int j = 0; j < LM_VOCAB; j++) {
                e[j] = z[j] / tau;
                if (e[j] > mx) mx = e[j];
            }
            sb_sacc acc;
            sb_sacc_init(&acc);
            for (int j = 0; j < LM_VOCAB; j++) {
                e[j] = sb_expf(e[j] - mx);
                sb_sacc_add(&acc, e[j]);
            }
            const float thr = sb_rng_unit_f32(seed, LM_P_GEN, (uint64_t)k) * sb_sacc_round_f32(&acc);
            float c = 0.0f;
            pick = -1;
            int32_t last = 0;
            for (int j = 0; j < LM_VOCAB; j++) {
                if (e[j] > 0.0f) last = j;
                c = c + e[j];
                if (pick < 0 && c > thr) pick = j;
            }
            if (pick < 0) pick = last;
        }
        seq[len] = (uint8_t)pick;
        out[k] = (uint8_t)pick;
    }
    if (wlen > 0) ws_free(&ws);
    sb_free(seq);
    return st;
}
