/*
 * lm.h: the byte-level language model (docs/lm.md, family lm): a small
 * pre-norm transformer (Radford et al., "Language Models are Unsupervised
 * Multitask Learners", 2019, GPT-2's block: x += attn(ln1(x)); x +=
 * mlp(ln2(x)), GELU in its tanh form) over raw bytes (vocabulary 256), a
 * learned positional embedding and an untied output head, trained by AdamW
 * on windows of a byte corpus drawn from Philox by (step, batch index). The
 * host path on the building blocks of src/models/nn/: every product the
 * identical GEMM, every other sum exact and rounded once, exp and log the
 * profile's; no bit depends on the thread count. Identity is claimed per
 * configuration: another batch size or context is another run.
 */
#ifndef SB_MODELS_LM_H
#define SB_MODELS_LM_H
#include "../../core/internal.h"
#include "../nn/nn.h"

#define LM_VOCAB 256
#define LM_MAX_LAYERS 16
#define LM_MAX_WIDTH 1024
#define LM_MAX_CONTEXT 1024
#define LM_MAX_BATCH 1024
#define LM_MAX_STEPS 100000000
#define LM_MAX_CORPUS 2000000000ll
/* tensors: wte, wpe, 12 a block, lnf_g, lnf_b, head */
#define LM_PER_BLOCK 12
#define LM_MAX_TENSORS (5 + LM_PER_BLOCK * LM_MAX_LAYERS)
#define LM_LN_EPS 1e-5f
/* dropout tensor ids: the embedding sum, then per block the attention's and
 * the MLP's residual branch */
#define LM_DROP_EMB 0u
#define LM_DROP_ATTN(l) (1u + 2u * (uint32_t)(l))
#define LM_DROP_MLP(l) (2u + 2u * (uint32_t)(l))

/* Block tensor order (their index within the block). */
enum { B_LN1G, B_LN1B, B_WQKV, B_BQKV, B_WO, B_BO, B_LN2G, B_LN2B, B_WFC, B_BFC, B_WPROJ, B_BPROJ };
#define T_WTE 0
#define T_WPE 1
#define T_BLK(l, k) (2 + (l) * LM_PER_BLOCK + (k))
#define T_LNFG(L) (2 + (L) * LM_PER_BLOCK)
#define T_LNFB(L) (3 + (L) * LM_PER_BLOCK)
#define T_HEAD(L) (4 + (L) * LM_PER_BLOCK)

typedef struct lm_opts {
    int32_t n_layer, d_model, n_head, context, batch_size, eval_batches;
    double learning_rate, beta_1, beta_2, epsilon, weight_decay, dropout, clip_norm, validation_fraction;
    uint64_t seed;
    int32_t device; /* sb_device_kind the steps run on: the run's, never the checkpoint's (a loaded model is the cpu's) */
} lm_opts;

typedef struct lm_tensor {
    char name[24];
    int64_t off, count;
    int32_t decay; /* AdamW's weight decay applies (the matrices and embeddings) */
} lm_tensor;

/* The model and its training state (the opaque sb_lm of samebits.h). */
struct sb_lm {
    lm_opts o;
    int32_t ntensors;
    lm_tensor t[LM_MAX_TENSORS];
    int64_t nparams;
    float *w, *m, *v;     /* parameters and AdamW's two moments, nparams each, in tensor order */
    int64_t step;         /* optimizer steps taken; the next batch is drawn by (seed, step) */
    uint64_t corpus_len;  /* the corpus trained on (0 before the first step) */
    uint64_t corpus_hash; /* its FNV-1a 64 */
    float *train_loss;    /* step values */
    int64_t n_eval;       /* held-out evaluations recorded */
    int64_t *eval_step;
    float *eval_loss;
    int64_t cap_loss, cap_eval;
};

sb_status sb_lm_parse_opts(const sb_params *params, lm_opts *o);
/* A fresh model of o (parameters initialized from Philox by seed). */
sb_status sb_lm_new(const lm_opts *o, sb_lm **out);
/* Lay out the tensors of o and allocate w, m, v (zeroed). */
sb_status sb_lm_alloc(sb_lm *lm);
/* NULL when the model's options and state are ones training can make, else
 * what is wrong (the model file's check). */
const char *sb_lm_check(const sb_lm *lm);
void sb_lm_release(sb_lm *lm);
/* steps AdamW steps on corpus (n bytes; the last validation_fraction held
 * out); at step 0 and after every step that is a multiple of eval_every (0:
 * never), the held-out loss is recorded. card stages (may be NULL) under prefix, per step. */
sb_status sb_lm_train_steps(sb_lm *lm, const uint8_t *corpus, int64_t n, int64_t steps, int64_t eval_every,
                            sb_card *card, const char *prefix);
/* Tests: the loss of step s's batch and its gradient (G: nparams floats,
 * may be NULL), without an update. */
sb_status sb_lm_batch_grad(const sb_lm *lm, const uint8_t *corpus, int64_t n, int64_t s, float *loss, float *G);
sb_status sb_lm_eval_loss(const sb_lm *lm, const uint8_t *corpus, int64_t n, float *loss);
sb_status sb_lm_sample(const sb_lm *lm, const uint8_t *prompt, int64_t np, int64_t count, double temperature,
                       uint64_t seed, uint8_t *out);
/* ---- the device path (lm_dev.c; docs/lm.md, "Devices") -------------------- */

/* A model's training state on a GPU: every tensor, both moments, the
 * gradients and every activation of one batch shape (batch_size x context). */
typedef struct lm_dev lm_dev;
/* Opens the linalg device of kind and writes lm's parameters and moments to it
 * (the caller holds the linalg devices' lock until sb_lm_dev_close). */
sb_status sb_lm_dev_open(int32_t kind, const sb_lm *lm, lm_dev **out);
void sb_lm_dev_close(lm_dev *v);
/* One batch of rows = batch_size x context positions (tok, pos, tgt: rows
 * each): the forward pass (dropout of step when step >= 0), each row's
 * cross-entropy into rowloss (host, rows floats), and with grad the backward
 * pass into the device's gradients. */
sb_status sb_lm_dev_batch(lm_dev *v, const int32_t *tok, const int32_t *pos, const int32_t *tgt, int64_t step, int grad,
                          float *rowloss);
/* The step's update on the device: clipping by the global norm (clip > 0),
 * then AdamW of scalars k on every tensor. */
sb_status sb_lm_dev_update(lm_dev *v, const nn_adamw_k *k, float clip);
/* Reads the parameters and both moments into lm (and the gradients into G,
 * nparams floats, where not NULL). */
sb_status sb_lm_dev_pull(lm_dev *v, sb_lm *lm, float *G);

/* Record a history entry (grows the arrays). */
sb_status sb_lm_push_loss(sb_lm *lm, float loss);
sb_status sb_lm_push_eval(sb_lm *lm, int64_t step, float loss);

#endif
