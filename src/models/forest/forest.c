/*
 * forest.c: random forests and Extra Trees on the CPU, identical by construction.
 *
 * Breiman, "Random Forests", Machine Learning 45 (2001): each tree is grown on a
 * bootstrap sample of the rows, choosing each split among a random subset of
 * the features. Geurts, Ernst and Wehenkel, "Extremely randomized trees",
 * Machine Learning 63 (2006): no bootstrap by default, and one random threshold
 * per candidate feature. Splits are searched on the binned matrix shared with
 * gradient boosting (trees/binning.c), so a split "bin <= b" is "x <= edge".
 *
 * Identity:
 * - every draw (the bootstrap, the features of a node, an Extra Trees
 *   threshold) is the counter generator keyed by (seed, tree, draw) or
 *   (seed, node key, feature), where a node's key is a function of its path
 *   from the tree's root (src/kernels/forest.h), not of the order nodes are made,
 *   never by a thread's sequence; trees are independent tasks whose results are
 *   stored by tree index, so the thread count cannot show;
 * - impurity sums are exact integers: class counts (weighted by the bootstrap
 *   multiplicity, times the row's fixed-point weight when sample weights or
 *   class_weight are given), and for regression the sum of y in fixed point (y
 *   times a power-of-two scale, rounded half to even); weighted sums also carry
 *   the row count that min_samples_* limit. Gini, entropy and squared error
 *   are then computed from those integers by one spelled-out float formula, and
 *   equal scores break by (feature, bin, missing direction);
 * - leaf values are class frequencies (or means) divided by the number of
 *   trees, and prediction adds the trees' leaves in tree order (predict.c), so
 *   the probabilities are the same bits everywhere.
 * A classification forest is stored as K trees per estimator (tree t*K + k
 * carries class k's frequency in its leaves), the layout gradient boosting's
 * model file and prediction already use.
 */
#include "forest_params.h"
#include "forest_dev.h"
#include "../model.h"
#include "../trees/binning.h"
#include "../../core/rng.h"
#include "../../core/dist.h"
#include "../../io/dataset.h"
#include "../../kernels/tree.h"
#include "../../kernels/forest.h"
#include "../../kernels/quantize.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SB_PURPOSE_BOOT SB_K_PURPOSE_BOOT
#define Y_LEVELS 1073741824.0f       /* |y| scaled to at most 2^30: sums of 2^31 rows fit int64 */
#define W_BITS 20                    /* the largest row weight scaled to (2^19, 2^20] */
#define W_LEVELS SB_K_FOREST_W_LEVELS /* 2^W_BITS */
#define WY_MIN_BITS 16               /* weighted regression: y keeps at least 16 bits, or a refusal */

typedef struct fctx {
    const forest_params *p;
    const sb_table *tr;
    int32_t K;          /* classes (classification), 1 (regression) */
    int32_t nv;         /* values per sum: K or (w, s), plus a row count when weighted */
    int32_t weighted;   /* sample weights or class_weight given: sums carry a row count */
    const float *sw;    /* the table's sample weights, or NULL */
    float *cw;          /* per-class weights (K), or NULL */
    int32_t *wq;        /* each row's weight in fixed point (NULL: unweighted, or per tree) */
    int32_t wexp;       /* wq = weight * 2^wexp, rounded half to even */
    int32_t wbits_max;  /* the most bits a fixed-point weight may take (weight_bits), W_BITS per tree */
    int64_t ndraw;      /* rows a tree's sample draws (with multiplicity) */
    int32_t mtry;       /* features tried per node */
    sb_bins bins;
    uint8_t *binned;    /* feature-major */
    int32_t *cls;       /* class of each row (classification) */
    int32_t *yq;        /* y in fixed point (regression) */
    float yscale;
    sb_k_forest_rules rules; /* the scores' parameters (src/kernels/forest.h) */
    sb_tree *trees;     /* n_estimators x K, by index */
    sb_status *status;  /* per tree */
    int64_t *bad_row;   /* per tree: the row a weight refusal names */
    const sb_model *init; /* warm start: the forest whose trees 0..first-1 are kept, or NULL */
    int32_t first;      /* the first tree grown (0 without init) */
    int32_t init_T;     /* init's estimators (first) */
    int32_t key_shift;  /* subtracted from a grown tree's index in its draws: 0, but for the test arm below */
    /* distributed=mpi (docs/distributed.md): the communicator (NULL: one
     * process), this rank's first row among every rank's (0) and every
     * rank's rows together (tr->nrows in one process) */
    const sb_dist *dist;
    int64_t goff, gn;
    int64_t roff;       /* distributed=mpi: the block's first row in the file, for messages (0) */
} fctx;

/* ---- distributed=mpi: the exchanges (each a no-op in one process) ---- */

/* Counts a single process takes over all rows: v := the exact sum over ranks. */
static void fd_sum(const fctx *f, int64_t *v, int64_t n) {
    if (f->dist) sb_dist_sum_i64(f->dist, v, n);
}

/* A node's split sums (its totals, histograms, Extra Trees' threshold sums):
 * the exact int64 sum over ranks through the histogram all-reduce (the one
 * the separating arm SABOTAGE=float-allreduce breaks). */
static void fd_hist(const fctx *f, int64_t *v, int64_t n) {
    if (f->dist) sb_dist_sum_hist(f->dist, v, n);
}

/* The largest over ranks of x >= 0 (or NaN-free non-negative floats: their
 * bits order as the values do). */
static float fd_max(const fctx *f, float x) {
    if (!f->dist) return x;
    uint32_t k = sb_f2u(x);
    sb_dist_max_u32(f->dist, &k, 1);
    return sb_u2f(k);
}

/* The smallest positive over ranks of x (0: none on this rank; 0 back when
 * no rank has one). */
static float fd_min_pos(const fctx *f, float x) {
    if (!f->dist) return x;
    uint32_t k = x > 0.0f ? ~sb_f2u(x) : 0u;
    sb_dist_max_u32(f->dist, &k, 1);
    return k ? sb_u2f(~k) : 0.0f;
}

typedef struct fnode {
    int32_t feature, bin, default_left, left, right;
    int64_t w;           /* rows, counted with their bootstrap multiplicity */
    float gain;          /* weighted impurity decrease */
    int32_t leaf;        /* index of its class counts / sum in the leaf table, or -1 */
} fnode;

/* Per-tree work. */
typedef struct tctx {
    const fctx *f;
    int32_t t;
    int32_t kt;              /* the index its draws are keyed by: t (f->key_shift aside) */
    int32_t *rows, *tmp;     /* the tree's rows (distinct), node ranges of it */
    int32_t *cnt;            /* bootstrap count of each row, by row id: its multiplicity when unweighted */
    int64_t *mult;           /* weighted: its multiplicity, count x fixed-point weight (else NULL) */
    int32_t *wqt;            /* balanced_subsample: this tree's fixed-point weights */
    sb_k_forest_rules rules; /* the forest's, with this tree's weight exponent and min_w */
    int64_t *hist;           /* per bin: K counts (classification) or (w, s) (regression) */
    int64_t *tot, *lsum;     /* a node's sums, a candidate's left sums: K or 2 values */
    uint32_t *keys;          /* feature draw keys */
    int32_t *order;
    fnode *nodes;
    int32_t nnodes, cap;
    int64_t *leafsum;        /* per leaf: K counts or (w, s) */
    int32_t nleaves, leafcap;
    int64_t *dsum;           /* distributed=mpi: a node's sums for every drawn feature, reduced at once */
    uint32_t *dlohi;         /* distributed=mpi, Extra Trees: each drawn feature's (256 - lo, hi) */
} tctx;

/* ---- scores: src/kernels/forest.h (shared with the device grower) ---- */

static void set_rules(fctx *f) {
    memset(&f->rules, 0, sizeof f->rules);
    f->rules.min_samples_leaf = f->p->min_samples_leaf;
    f->rules.criterion = f->p->criterion;
    f->rules.nv = f->nv;
    f->rules.yscale = f->yscale;
    f->rules.weighted = f->weighted;
    f->rules.wexp = f->wexp;
}

static int64_t weight_of(const fctx *f, const int64_t *v) { return sb_k_forest_weight(&f->rules, v); }

/* Rows in sums v, counted with their bootstrap multiplicity (what
 * min_samples_* count): unweighted the weight, weighted the sums' last value. */
static int64_t count_of(const fctx *f, const int64_t *v) { return f->weighted ? v[f->nv - 1] : weight_of(f, v); }

/* ---- one tree ---- */

static sb_status oom(void) { return sb_fail(SB_ERR_OUT_OF_MEMORY, "forest: out of memory"); }

static int new_node(tctx *c) {
    if (c->nnodes == c->cap) {
        int32_t cap = c->cap ? 2 * c->cap : 64;
        fnode *n = sb_realloc(c->nodes, sizeof(fnode) * (size_t)cap);
        if (!n) return -1;
        c->nodes = n;
        c->cap = cap;
    }
    fnode *n = &c->nodes[c->nnodes];
    memset(n, 0, sizeof *n);
    n->feature = -1;
    n->left = n->right = -1;
    n->leaf = -1;
    return c->nnodes++;
}

static int new_leaf(tctx *c, const int64_t *tot, int32_t nv) {
    if (c->nleaves == c->leafcap) {
        int32_t cap = c->leafcap ? 2 * c->leafcap : 64;
        int64_t *l = sb_realloc(c->leafsum, sizeof(int64_t) * (size_t)nv * (size_t)cap);
        if (!l) return -1;
        c->leafsum = l;
        c->leafcap = cap;
    }
    memcpy(c->leafsum + (int64_t)c->nleaves * nv, tot, sizeof(int64_t) * (size_t)nv);
    return c->nleaves++;
}

/* The features the node keyed key may split on: the mtry with the smallest
 * draws keyed by (seed, node key, feature), ties by feature index. */
static void draw_features(tctx *c, uint64_t key) {
    const fctx *f = c->f;
    const int32_t nf = f->tr->ncols;
    for (int32_t j = 0; j < nf; j++) {
        c->keys[j] = sb_k_forest_feature_draw(f->p->seed, key, j);
        c->order[j] = j;
    }
    /* partial selection sort of the mtry smallest (key, feature) */
    for (int32_t a = 0; a < f->mtry; a++) {
        int32_t best = a;
        for (int32_t b = a + 1; b < nf; b++) {
            uint32_t kb = c->keys[c->order[b]], kk = c->keys[c->order[best]];
            if (kb < kk || (kb == kk && c->order[b] < c->order[best])) best = b;
        }
        int32_t tmp = c->order[a];
        c->order[a] = c->order[best];
        c->order[best] = tmp;
    }
}

typedef sb_k_fsplit fsplit;

/* Row r's contribution (multiplicity m) to sums v: a class count, or (w, s). */
static void add_row(const fctx *f, int64_t *v, int32_t r, int64_t m) {
    sb_k_forest_add_row(&f->rules, v, f->p->criterion == SB_CRIT_SQUARED ? f->yq[r] : f->cls[r], m);
}

/* Row r into sums v with its multiplicity: the bootstrap count (the 4-byte
 * counts the unweighted path always read) or, weighted, the count times the
 * fixed-point weight, and the count to the row count (the sums' last value). */
static inline void put_row(const tctx *c, int64_t *v, int32_t r) {
    if (c->mult) {
        add_row(c->f, v, r, c->mult[r]);
        v[c->f->nv - 1] += c->cnt[r];
    } else {
        add_row(c->f, v, r, c->cnt[r]);
    }
}

/* Row r's multiplicity in the sums (put_row's). */
static inline int64_t mult_of(const tctx *c, int32_t r) { return c->mult ? c->mult[r] : c->cnt[r]; }

/* Extra Trees on one feature: the node's value-bin range and missing sums in
 * one pass, one threshold drawn in it, the left sums in a second pass. The
 * same integers as a histogram would give, without one. */
static void et_feature(tctx *c, uint64_t key, int32_t feat, const uint8_t *col, int64_t b, int64_t e, int32_t nv,
                       const int64_t *tot, fsplit *best) {
    const fctx *f = c->f;
    int64_t *miss = c->hist; /* nv values */
    memset(miss, 0, sizeof(int64_t) * (size_t)nv);
    int32_t lo = 256, hi = 0;
    for (int64_t i = b; i < e; i++) {
        const int32_t r = c->rows[i], bin = col[r];
        if (bin == 0) {
            put_row(c, miss, r);
        } else {
            if (bin < lo) lo = bin;
            if (bin > hi) hi = bin;
        }
    }
    if (hi == 0 || lo == hi) return; /* no value split on this feature here */
    const int32_t pick = sb_k_forest_et_pick(f->p->seed, key, feat, lo, hi);
    memset(c->lsum, 0, sizeof(int64_t) * (size_t)nv);
    for (int64_t i = b; i < e; i++) {
        const int32_t r = c->rows[i], bin = col[r];
        if (bin >= 1 && bin <= pick) put_row(c, c->lsum, r);
    }
    sb_k_forest_consider(&c->rules, tot, c->lsum, miss, feat, pick, 0, best);
    if (weight_of(f, miss) > 0) sb_k_forest_consider(&c->rules, tot, c->lsum, miss, feat, pick, 1, best);
}

/* The best split of rows[b, e) (sums tot) among the drawn features of the node keyed key. */
static void find_split(tctx *c, uint64_t key, int64_t b, int64_t e, const int64_t *tot, fsplit *best) {
    const fctx *f = c->f;
    const int64_t n = f->tr->nrows;
    const int32_t nv = f->nv;
    memset(best, 0, sizeof *best);
    draw_features(c, key);
    for (int32_t a = 0; a < f->mtry; a++) {
        const int32_t feat = c->order[a], nb = f->bins.nbins[feat];
        const uint8_t *col = f->binned + (int64_t)feat * n;
        if (f->p->extra) {
            et_feature(c, key, feat, col, b, e, nv, tot, best);
            continue;
        }
        memset(c->hist, 0, sizeof(int64_t) * (size_t)nv * (size_t)(nb + 1));
        for (int64_t i = b; i < e; i++) {
            const int32_t r = c->rows[i];
            int64_t *h = c->hist + (int64_t)col[r] * nv;
            put_row(c, h, r);
        }
        /* the candidates, from the cumulative histogram (src/kernels/forest.h) */
        sb_k_forest_cumulate(c->hist, nb, nv);
        for (int32_t t = 1; t < nb; t++) sb_k_forest_rf_at(&c->rules, tot, c->hist, c->hist, nb, feat, t, best);
    }
}

/* find_split under distributed=mpi: the same candidates, scores and order as
 * find_split, from sums over every rank's rows. The drawn features come from
 * (seed, node key) alone, so every rank draws the same ones; their sums are
 * built on this rank's rows and all-reduced exactly in one exchange (random
 * forests: the histograms of every drawn feature); Extra Trees first take
 * each drawn feature's smallest and largest value bin over every rank (an
 * integer max of 256 - lo and of hi), draw the threshold from that global
 * range and the node key, then reduce the missing and left sums of every
 * drawn feature at once. Every rank thus scores the same integers and makes
 * the same split. */
static void find_split_dist(tctx *c, uint64_t key, int64_t b, int64_t e, const int64_t *tot, fsplit *best) {
    const fctx *f = c->f;
    const int64_t n = f->tr->nrows;
    const int32_t nv = f->nv, M = f->mtry;
    memset(best, 0, sizeof *best);
    draw_features(c, key);
    if (!f->p->extra) {
        int64_t len = 0;
        for (int32_t a = 0; a < M; a++) len += (int64_t)(f->bins.nbins[c->order[a]] + 1) * nv;
        memset(c->dsum, 0, sizeof(int64_t) * (size_t)len);
        int64_t at = 0;
        for (int32_t a = 0; a < M; a++) {
            const int32_t feat = c->order[a];
            const uint8_t *col = f->binned + (int64_t)feat * n;
            int64_t *h0 = c->dsum + at;
            for (int64_t i = b; i < e; i++) {
                const int32_t r = c->rows[i];
                put_row(c, h0 + (int64_t)col[r] * nv, r);
            }
            at += (int64_t)(f->bins.nbins[feat] + 1) * nv;
        }
        fd_hist(f, c->dsum, len);
        at = 0;
        for (int32_t a = 0; a < M; a++) {
            const int32_t feat = c->order[a], nb = f->bins.nbins[feat];
            int64_t *h = c->dsum + at;
            sb_k_forest_cumulate(h, nb, nv);
            for (int32_t t = 1; t < nb; t++) sb_k_forest_rf_at(&c->rules, tot, h, h, nb, feat, t, best);
            at += (int64_t)(nb + 1) * nv;
        }
        return;
    }
    for (int32_t a = 0; a < M; a++) {
        const uint8_t *col = f->binned + (int64_t)c->order[a] * n;
        int32_t lo = 256, hi = 0;
        for (int64_t i = b; i < e; i++) {
            const int32_t bin = col[c->rows[i]];
            if (bin != 0) {
                if (bin < lo) lo = bin;
                if (bin > hi) hi = bin;
            }
        }
        c->dlohi[2 * a] = (uint32_t)(256 - lo);
        c->dlohi[2 * a + 1] = (uint32_t)hi;
    }
    sb_dist_max_u32(f->dist, c->dlohi, 2 * (int64_t)M);
    /* per drawn feature: its missing sums, then its left sums at the pick */
    memset(c->dsum, 0, sizeof(int64_t) * (size_t)nv * 2 * (size_t)M);
    for (int32_t a = 0; a < M; a++) {
        const int32_t feat = c->order[a], lo = 256 - (int32_t)c->dlohi[2 * a], hi = (int32_t)c->dlohi[2 * a + 1];
        const uint8_t *col = f->binned + (int64_t)feat * n;
        int64_t *miss = c->dsum + (int64_t)2 * nv * a, *left = miss + nv;
        const int32_t pick = hi == 0 || lo == hi ? 0 : sb_k_forest_et_pick(f->p->seed, key, feat, lo, hi);
        c->dlohi[2 * a] = (uint32_t)pick;
        for (int64_t i = b; i < e; i++) {
            const int32_t r = c->rows[i], bin = col[r];
            if (bin == 0) put_row(c, miss, r);
            else if (bin <= pick) put_row(c, left, r);
        }
    }
    fd_hist(f, c->dsum, (int64_t)nv * 2 * M);
    for (int32_t a = 0; a < M; a++) {
        const int32_t feat = c->order[a], pick = (int32_t)c->dlohi[2 * a];
        if (pick == 0) continue; /* no value split on this feature here (a pick is at least lo >= 1) */
        const int64_t *miss = c->dsum + (int64_t)2 * nv * a, *left = miss + nv;
        sb_k_forest_consider(&c->rules, tot, left, miss, feat, pick, 0, best);
        if (weight_of(f, miss) > 0) sb_k_forest_consider(&c->rules, tot, left, miss, feat, pick, 1, best);
    }
}

/* Each row's effective weight in fixed point. The weight is the row's sample
 * weight times its class's weight (one float product; a factor that is absent
 * is 1). The rows with take[r] != 0 (take NULL: every row) decide the scale: the
 * power of two 2^e that maps the largest of them into (2^19, 2^20]; each weight
 * times 2^e (exact) is then rounded half to even. The sums of a tree stay below
 * ndraw x 2^20 (classification) and are checked for regression in
 * sb_forest_fit. SB_ERR_INVALID_INPUT when every weight is zero;
 * SB_ERR_LIMIT, with *bad the row, when a product is not finite or a positive
 * weight falls below the resolution (2^-21 of the largest) and would vanish. */
/* The scale exponent for weights whose largest is mx and smallest positive mn
 * (0: none): the largest maps into (2^(B-1), 2^B] for the least B in
 * W_BITS..bits_max at which mn does not round to zero (B = bits_max when none
 * does; the caller then refuses the row). B is W_BITS (the scale of every fit
 * before profile v5) whenever that keeps mn, so such fits are unchanged;
 * more bits only for a ratio of weights beyond 2^21, which was refused. */
static int32_t weight_exponent(float mx, float mn, int32_t bits_max) {
    int32_t bits = W_BITS, e = sb_quantize_exponent(mx, W_LEVELS);
    while (bits < bits_max && mn > 0.0f && sb_k_forest_weight_fixed(mn, e) == 0) {
        bits++;
        e = sb_quantize_exponent(mx, sb_pow2f(bits));
    }
    return e;
}

/* The bits the largest fixed-point weight takes at exponent e (mx the largest
 * weight): the B of weight_exponent. */
static int32_t weight_bits_at(float mx, int32_t e) {
    int32_t bits = W_BITS;
    while (bits < 62 && sb_quantize_exponent(mx, sb_pow2f(bits)) != e) bits++;
    return bits;
}

static sb_status quantize_weights(const fctx *f, const float *cw, const int32_t *take, int32_t *wq, int32_t *e,
                                  int64_t *bad, int32_t bits_max) {
    const int64_t n = f->tr->nrows;
    float mx = 0.0f, mn = 0.0f;
    for (int64_t r = 0; r < n; r++) {
        if (take && !take[r]) continue;
        float w = f->sw ? f->sw[r] : 1.0f;
        if (cw) w = sb_k_forest_row_weight(w, cw[f->cls[r]]);
        if (w - w != 0.0f) {
            *bad = r;
            return SB_ERR_LIMIT;
        }
        if (w > mx) mx = w;
        if (w > 0.0f && (mn == 0.0f || w < mn)) mn = w;
    }
    mx = fd_max(f, mx); /* distributed=mpi: the scale of every rank's rows */
    mn = fd_min_pos(f, mn);
    if (!(mx > 0.0f)) {
        *bad = -1;
        return SB_ERR_INVALID_INPUT;
    }
    *e = weight_exponent(mx, mn, bits_max);
    for (int64_t r = 0; r < n; r++) {
        float w = f->sw ? f->sw[r] : 1.0f;
        if (cw) w = sb_k_forest_row_weight(w, cw[f->cls[r]]);
        wq[r] = (take && !take[r]) ? 0 : sb_k_forest_weight_fixed(w, *e);
        if (wq[r] == 0 && w > 0.0f && (!take || take[r])) {
            *bad = r;
            return SB_ERR_LIMIT;
        }
    }
    return SB_OK;
}

/* balanced_subsample (scikit-learn's): class k's weight in tree t is
 * n_t / (K_t x n_tk), the counts taken over the tree's bootstrap with their
 * multiplicity and without sample weights (n_t draws, K_t classes drawn, n_tk
 * draws of class k), spelled (float)n_t / ((float)K_t * (float)n_tk). Times
 * the sample weights, in fixed point with the tree's own scale (its rules'). */
static sb_status subsample_weights(tctx *c) {
    const fctx *f = c->f;
    const int64_t n = f->tr->nrows;
    int64_t *bc = sb_calloc((size_t)f->K + 1, sizeof(int64_t));
    float *cw = sb_malloc(sizeof(float) * (size_t)f->K);
    if (!bc || !cw) {
        sb_free(bc);
        sb_free(cw);
        return oom();
    }
    int64_t nt = 0;
    for (int64_t r = 0; r < n; r++) {
        bc[f->cls[r]] += c->cnt[r];
        nt += c->cnt[r];
    }
    bc[f->K] = nt; /* distributed=mpi: the whole bootstrap's counts */
    fd_sum(f, bc, f->K + 1);
    nt = bc[f->K];
    int32_t kt = 0;
    for (int32_t k = 0; k < f->K; k++) kt += bc[k] > 0;
    for (int32_t k = 0; k < f->K; k++) cw[k] = sb_k_forest_class_weight(nt, kt, bc[k]);
    /* balanced_subsample keeps W_BITS: the forest device computes these per tree, at that scale */
    sb_status st = quantize_weights(f, cw, c->cnt, c->wqt, &c->rules.wexp, &f->bad_row[c->t], W_BITS);
    sb_free(bc);
    sb_free(cw);
    return st;
}

/* Tree t's sample, drawn by (seed, tree, draw): c->cnt (and c->mult when
 * weighted) for every row, the rows taking part in c->rows[0, *m) in row
 * order. SB_ERR_INVALID_INPUT when every row drawn weighs zero. */
static sb_status draw_sample(tctx *c, int64_t *m_out) {
    const fctx *f = c->f;
    const forest_params *p = f->p;
    const int64_t n = f->tr->nrows;
    /* The sample: counts of n_draw draws with replacement, or every row once. */
    memset(c->cnt, 0, sizeof(int32_t) * (size_t)n);
    if (p->bootstrap) {
        const int64_t ndraw = f->ndraw;
#ifdef SB_SABOTAGE_RNG_ORDER
        /* Separating arm for rule 6: draws from one sequential stream per
         * worker, consumed in the order the worker meets its trees. */
        static _Thread_local uint64_t pos = 0;
        for (int64_t d = 0; d < ndraw; d++)
            c->cnt[sb_rng_below(p->seed + (uint64_t)sb_worker_index(), SB_PURPOSE_BOOT, pos++, (uint32_t)n)]++;
#else
        /* Draw d picks global row boot_row(seed, tree, d) of the gn rows;
         * this rank counts the draws landing in its block [goff, goff + n),
         * so every rank together counts the single process's draws (one
         * process: goff 0, gn n, every draw lands). */
        const uint64_t goff = (uint64_t)f->goff;
        for (int64_t d = 0; d < ndraw; d++) {
            const uint64_t g = (uint64_t)sb_k_forest_boot_row(p->seed, c->kt, d, (uint32_t)f->gn) - goff;
            if (g < (uint64_t)n) c->cnt[g]++;
        }
#endif
    } else {
        for (int64_t r = 0; r < n; r++) c->cnt[r] = 1;
    }
    /* Weighted: the multiplicity in the sums is the count times the row's
     * fixed-point weight; a row of weight zero takes no part in the tree. */
    if (f->weighted) {
        const int32_t *wq = f->wq;
        if (!wq) {
            sb_status st = subsample_weights(c);
            if (st != SB_OK) return st;
            wq = c->wqt;
        }
        for (int64_t r = 0; r < n; r++) c->mult[r] = (int64_t)c->cnt[r] * wq[r];
    }
    int64_t m = 0;
    for (int64_t r = 0; r < n; r++)
        if (mult_of(c, (int32_t)r)) c->rows[m++] = (int32_t)r;
    int64_t gm = m;
    fd_sum(f, &gm, 1);
    if (gm == 0) {
        f->bad_row[c->t] = -1;
        return SB_ERR_INVALID_INPUT; /* every row drawn has weight zero (named by sb_forest_fit) */
    }
    *m_out = m;
    return SB_OK;
}

/* Tree t: bootstrap, grow depth first (node ids in creation order; draws keyed
 * by each node's path key, sb_k_forest_child_key), record. */
static sb_status grow_tree(tctx *c) {
    const fctx *f = c->f;
    const forest_params *p = f->p;
    const int64_t n = f->tr->nrows;
    const int32_t nv = f->nv;
    int64_t m = 0;
    sb_status sst = draw_sample(c, &m);
    if (sst != SB_OK) return sst;

    typedef struct item {
        int32_t node, depth;
        int64_t b, e;
        uint64_t key;
    } item;
    item *stack = sb_malloc(sizeof(item) * 264); /* depth <= 128: at most depth + 2 pending */
    int64_t *tot = sb_malloc(sizeof(int64_t) * (size_t)nv);
    if (!stack || !tot) {
        sb_free(stack);
        sb_free(tot);
        return oom();
    }
    int32_t sp = 0;
    int root = new_node(c);
    if (root < 0) goto nomem;
    stack[sp++] = (item){root, 0, 0, m, sb_k_forest_root_key(c->kt)};
    while (sp > 0) {
        item it = stack[--sp];
        /* the node's sums, exactly */
        memset(tot, 0, sizeof(int64_t) * (size_t)nv);
        for (int64_t i = it.b; i < it.e; i++) {
            const int32_t r = c->rows[i];
            const int64_t mr = mult_of(c, r);
            if (p->criterion == SB_CRIT_SQUARED) {
                tot[0] += mr;
                tot[1] += mr * f->yq[r];
            } else {
                tot[f->cls[r]] += mr;
            }
            if (f->weighted) tot[nv - 1] += c->cnt[r];
        }
        fd_hist(f, tot, nv); /* distributed=mpi: the node's sums over every rank's rows */
        c->nodes[it.node].w = count_of(f, tot);
        if (it.node == root && p->min_weight_fraction_leaf > 0.0f) /* scikit-learn: of the tree's total weight */
            c->rules.min_w = sb_k_forest_min_w(&c->rules, p->min_weight_fraction_leaf, tot);
        fsplit s;
        memset(&s, 0, sizeof s);
        if (sb_k_forest_may_split(&c->rules, tot, p->min_samples_split, it.depth, p->max_depth))
            (f->dist ? find_split_dist : find_split)(c, it.key, it.b, it.e, tot, &s);
        if (!s.valid) {
            int leaf = new_leaf(c, tot, nv);
            if (leaf < 0) goto nomem;
            c->nodes[it.node].leaf = leaf;
            continue;
        }
        /* stable partition of rows[b, e) */
        const uint8_t *col = f->binned + (int64_t)s.feature * n;
        int64_t l = it.b;
        for (int64_t i = it.b; i < it.e; i++)
            if (sb_k_goes_left(col[c->rows[i]], s.bin, s.dl)) c->tmp[l++] = c->rows[i];
        const int64_t mid = l;
        for (int64_t i = it.b; i < it.e; i++)
            if (!sb_k_goes_left(col[c->rows[i]], s.bin, s.dl)) c->tmp[l++] = c->rows[i];
        memcpy(c->rows + it.b, c->tmp + it.b, sizeof(int32_t) * (size_t)(it.e - it.b));
        int lc = new_node(c), rc = new_node(c);
        if (lc < 0 || rc < 0) goto nomem;
        fnode *nd = &c->nodes[it.node];
        nd->feature = s.feature;
        nd->bin = s.bin;
        nd->default_left = s.dl;
        nd->left = lc;
        nd->right = rc;
        /* weighted impurity decrease, for feature importance */
        nd->gain = sb_k_forest_gain(&c->rules, s.score, tot);
        stack[sp++] = (item){rc, it.depth + 1, mid, it.e, sb_k_forest_child_key(it.key, 1)};
        stack[sp++] = (item){lc, it.depth + 1, it.b, mid, sb_k_forest_child_key(it.key, 0)};
    }
    sb_free(stack);
    sb_free(tot);
    return SB_OK;
nomem:
    sb_free(stack);
    sb_free(tot);
    return oom();
}

/* The grown tree as K model trees (one per class) with leaves divided by T. */
static sb_status emit(tctx *c) {
    const fctx *f = c->f;
    const int32_t T = f->p->n_estimators, nv = f->nv;
    const int32_t ncopies = f->p->criterion == SB_CRIT_SQUARED ? 1 : f->K;
    for (int32_t k = 0; k < ncopies; k++) {
        sb_tree *tr = &f->trees[(int64_t)c->t * ncopies + k];
        tr->nodes = sb_calloc((size_t)c->nnodes, sizeof(sb_tree_node));
        if (!tr->nodes) return oom();
        tr->nnodes = c->nnodes;
        for (int32_t i = 0; i < c->nnodes; i++) {
            const fnode *s = &c->nodes[i];
            sb_tree_node *d = &tr->nodes[i];
            d->feature = s->feature;
            d->left = s->left;
            d->right = s->right;
            d->count = s->w;
            d->default_left = (uint8_t)s->default_left;
            if (s->feature >= 0) {
                d->threshold = f->bins.upper[f->bins.offset[s->feature] + s->bin - 1];
                d->gain = s->gain;
            } else {
                d->value = sb_k_forest_leaf_value(&f->rules, c->leafsum + (int64_t)s->leaf * nv, k, T);
            }
        }
    }
    return SB_OK;
}

/* The node of tree nodes that row x (nf values) reaches, walked as prediction
 * walks it: NaN by default_left, else left when x <= threshold. On the
 * training data this is the partition that grew the tree ("bin <= b" is
 * "x <= edge", a missing value is bin 0). */
static int32_t walk_row(const sb_tree_node *nodes, const float *x) {
    int32_t k = 0;
    while (nodes[k].feature >= 0) {
        const float v = x[nodes[k].feature];
        const int left = v != v ? nodes[k].default_left != 0 : v <= nodes[k].threshold;
        k = left ? nodes[k].left : nodes[k].right;
    }
    return k;
}

/* Warm start: init's estimator t kept, its leaves valued for this forest's
 * n_estimators. A leaf holds its mean divided by the forest's tree count, so
 * init's values (divided by init's count) cannot be kept as bits; the leaf
 * sums are taken again from tree t's own sample (the same draws, keyed by
 * (seed, t)) routed through init's nodes, which on init's training data are
 * the sums the tree was grown with, and valued as emit values them: the
 * model trees of the uninterrupted fit, byte for byte. Only the leaf values
 * change; the nodes, thresholds, counts and gains are init's. A leaf no row
 * reaches (other data than init's) keeps init's value times init's count
 * divided by this one's. */
static sb_status releaf(tctx *c) {
    const fctx *f = c->f;
    const int32_t T = f->p->n_estimators, nv = f->nv, nf = f->tr->ncols;
    const int32_t ncopies = f->p->criterion == SB_CRIT_SQUARED ? 1 : f->K;
    const sb_tree *src = &f->init->trees[(int64_t)c->t * ncopies];
    const int32_t nn = src->nnodes;
    int64_t m = 0;
    sb_status st = draw_sample(c, &m);
    if (st != SB_OK) return st;
    int64_t *sums = sb_calloc((size_t)nn * (size_t)nv, sizeof(int64_t));
    if (!sums) return oom();
    for (int64_t i = 0; i < m; i++) {
        const int32_t r = c->rows[i];
        put_row(c, sums + (int64_t)walk_row(src->nodes, f->tr->x + (int64_t)r * nf) * nv, r);
    }
    fd_hist(f, sums, (int64_t)nn * nv); /* distributed=mpi: every rank's rows of the sample, per node */
    for (int32_t k = 0; k < ncopies && st == SB_OK; k++) {
        const sb_tree *from = &f->init->trees[(int64_t)c->t * ncopies + k];
        sb_tree *tr = &f->trees[(int64_t)c->t * ncopies + k];
        if (from->nnodes != nn) {
            st = SB_ERR_INVALID_ARGUMENT; /* named by sb_forest_fit_continue */
            break;
        }
        if (!(tr->nodes = sb_malloc(sizeof(sb_tree_node) * (size_t)nn))) {
            st = oom();
            break;
        }
        memcpy(tr->nodes, from->nodes, sizeof(sb_tree_node) * (size_t)nn);
        tr->nnodes = nn;
        for (int32_t j = 0; j < nn; j++) {
            sb_tree_node *d = &tr->nodes[j];
            if (d->feature >= 0) continue;
            const int64_t *v = sums + (int64_t)j * nv;
            d->value = weight_of(f, v) > 0 ? sb_k_forest_leaf_value(&f->rules, v, k, T)
                                           : d->value * (float)f->init_T / (float)T;
        }
    }
    sb_free(sums);
    return st;
}

static void tree_task(void *ctx, int64_t t) {
    fctx *f = ctx;
    const int64_t n = f->tr->nrows;
    const int32_t nf = f->tr->ncols, nv = f->nv;
    tctx c;
    memset(&c, 0, sizeof c);
    c.f = f;
    c.t = (int32_t)t;
    c.kt = t < f->first ? (int32_t)t : (int32_t)t - f->key_shift;
    c.rules = f->rules;
    const size_t nn = n > 0 ? (size_t)n : 1; /* distributed=mpi: a block may keep no row */
    c.rows = sb_malloc(sizeof(int32_t) * nn);
    c.tmp = sb_malloc(sizeof(int32_t) * nn);
    c.cnt = sb_malloc(sizeof(int32_t) * nn);
    if (f->weighted) c.mult = sb_malloc(sizeof(int64_t) * nn);
    if (f->weighted && !f->wq) c.wqt = sb_malloc(sizeof(int32_t) * nn);
    c.hist = sb_malloc(sizeof(int64_t) * (size_t)nv * (SB_MAX_BIN + 1));
    c.tot = sb_malloc(sizeof(int64_t) * (size_t)nv);
    c.lsum = sb_malloc(sizeof(int64_t) * (size_t)nv);
    c.keys = sb_malloc(sizeof(uint32_t) * (size_t)nf);
    c.order = sb_malloc(sizeof(int32_t) * (size_t)nf);
    if (f->dist) {
        c.dsum = sb_malloc(sizeof(int64_t) * (size_t)nv * (SB_MAX_BIN + 1) * (size_t)f->mtry);
        c.dlohi = sb_malloc(sizeof(uint32_t) * 2 * (size_t)f->mtry);
    }
    sb_status st;
    if (!c.rows || !c.tmp || !c.cnt || (f->weighted && !c.mult) || (f->weighted && !f->wq && !c.wqt) || !c.hist ||
        !c.tot || !c.lsum || !c.keys || !c.order || (f->dist && (!c.dsum || !c.dlohi)))
        st = oom();
    else if (t < f->first)
        st = releaf(&c);
    else if ((st = grow_tree(&c)) == SB_OK)
        st = emit(&c);
    f->status[t] = st;
    sb_free(c.rows);
    sb_free(c.tmp);
    sb_free(c.cnt);
    sb_free(c.mult);
    sb_free(c.wqt);
    sb_free(c.hist);
    sb_free(c.tot);
    sb_free(c.lsum);
    sb_free(c.keys);
    sb_free(c.order);
    sb_free(c.nodes);
    sb_free(c.leafsum);
    sb_free(c.dsum);
    sb_free(c.dlohi);
}

/* ---- fit ---- */

/* The refusal for a weight quantize_weights could not represent (tree t, or
 * -1: the whole training set). */
static sb_status weight_limit(const fctx *f, int64_t r, int32_t t) {
    char where[48] = "";
    if (t >= 0) snprintf(where, sizeof where, " in tree %d", (int)t);
    float w = f->sw ? f->sw[r] : 1.0f;
    if (t >= 0) /* balanced_subsample's per-tree weights: 20 bits, the forest device's message */
        return sb_fail(SB_ERR_LIMIT,
                       "forest: the weight of row %lld%s (sample weight %g times its class weight) is not finite, or "
                       "is positive but below the fixed-point resolution (2^-21 of the largest weight), where it would "
                       "count as zero", (long long)(r + f->roff), where, (double)w);
    return sb_fail(SB_ERR_LIMIT,
                   "forest: the weight of row %lld (sample weight %g times its class weight) is not finite, or is "
                   "positive but below the fixed-point resolution (2^-%d of the largest weight: the weights take up "
                   "to 30 bits, fewer when the sums of many rows need the room), where it would count as zero",
                   (long long)(r + f->roff), (double)w, f->wbits_max + 1);
}

/* Weighted training (sample weights or class_weight): the per-class weights
 * (explicit, or scikit-learn's "balanced": n / (K x n_k) over the training set,
 * K the classes present, spelled (float)n / ((float)K * (float)n_k)) and, except
 * for balanced_subsample with a bootstrap (each tree's own, in grow_tree), every
 * row's fixed-point weight, recorded as the card stage forest.weight_fixed. */
static sb_status prepare_weights(fctx *f, sb_card *card) {
    const forest_params *p = f->p;
    const int64_t n = f->tr->nrows;
    const int32_t mode = p->class_weight == SB_CW_SUBSAMPLE && !p->bootstrap ? SB_CW_BALANCED : p->class_weight;
    if (mode == SB_CW_LIST || mode == SB_CW_BALANCED) {
        if (!(f->cw = sb_malloc(sizeof(float) * (size_t)f->K))) return oom();
        if (mode == SB_CW_LIST) {
            for (int32_t k = 0; k < f->K; k++) f->cw[k] = p->cw[k];
        } else {
            int64_t *nk = sb_calloc((size_t)f->K, sizeof(int64_t));
            if (!nk) return oom();
            for (int64_t r = 0; r < n; r++) nk[f->cls[r]]++;
            fd_sum(f, nk, f->K); /* distributed=mpi: every rank's rows (f->gn of them) */
            int32_t kp = 0;
            for (int32_t k = 0; k < f->K; k++) kp += nk[k] > 0;
            for (int32_t k = 0; k < f->K; k++)
                f->cw[k] = sb_k_forest_class_weight(f->gn, kp, nk[k]);
            sb_free(nk);
        }
    }
    if (mode == SB_CW_SUBSAMPLE) {
        int64_t r = 0;
        while (f->sw && r < n && !(f->sw[r] > 0.0f)) r++;
        int64_t some = f->sw && r < n;
        fd_sum(f, &some, 1);
        if (f->sw && some == 0)
            return sb_fail(SB_ERR_INVALID_INPUT, "forest: every row's sample weight is zero; nothing to learn from");
        return SB_OK;
    }
    if (!(f->wq = sb_malloc(sizeof(int32_t) * (size_t)n))) return oom();
    int64_t bad = -1;
    sb_status st = quantize_weights(f, f->cw, NULL, f->wq, &f->wexp, &bad, f->wbits_max);
    if (st == SB_ERR_INVALID_INPUT)
        return sb_fail(SB_ERR_INVALID_INPUT, "forest: every row's weight (sample_weight x class weight) is zero; "
                                             "nothing to learn from");
    if (st == SB_ERR_LIMIT) return weight_limit(f, bad, -1);
    if (card) return sb_card_record(card, "forest.weight_fixed", SB_DTYPE_I32, f->wq, (uint64_t)n);
    return SB_OK;
}

/* Every tree on the forest device the parameters name (forest_dev.c): the
 * same draws, sums and kernel bodies, so the same trees as tree_task's. */
/* SAMEBITS_FOREST_TIMING=1: sb_forest_fit prints the seconds of its phases
 * (binning, labels, growing, the model) to stderr; for finding where a fit's
 * host time goes (the device's own operations: SAMEBITS_CUDA_TIMING). */
static double phase_clock(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void phase_note(int on, const char *what, double *t) {
    if (!on) return;
    double now = phase_clock();
    fprintf(stderr, "forest timing: %-8s %8.3f s\n", what, now - *t);
    *t = now;
}

static sb_status grow_on_device(fctx *f) {
    const forest_params *p = f->p;
    const int64_t n = f->tr->nrows;
    sb_fdev_setup s;
    memset(&s, 0, sizeof s);
    s.binned = f->binned;
    s.n = n;
    s.nf = f->tr->ncols;
    s.nbins = f->bins.nbins;
    s.value = p->criterion == SB_CRIT_SQUARED ? f->yq : f->cls;
    s.rules = f->rules;
    s.seed = p->seed;
    s.mtry = f->mtry;
    s.extra = p->extra;
    s.bootstrap = p->bootstrap;
    s.max_depth = p->max_depth;
    s.min_samples_split = p->min_samples_split;
    /* weights: every row's fixed point (prepare_weights), or each tree's
     * (balanced_subsample with a bootstrap), which the device computes */
    s.wq = f->wq;
    s.sw = f->sw;
    s.subsample = f->weighted && !f->wq;
    if (p->bootstrap) { /* as grow_tree draws */
        s.ndraw = p->max_samples > 0.0f ? (int64_t)(p->max_samples * (float)n) : n;
        if (s.ndraw < 1) s.ndraw = 1;
    }
    const char *dev = sb_device_kind_name((sb_device_kind)p->device);
    return sb_forest_grow_dev(dev, &s, &f->bins, f->first, p->n_estimators, p->criterion == SB_CRIT_SQUARED ? 1 : f->K,
                              p->min_weight_fraction_leaf, f->trees);
}

/* off: the first row's number in the file (a distributed block's), for messages. */
static sb_status check_labels(const forest_params *p, const sb_table *t, const sb_dist *d, int64_t off, int32_t *K) {
    if (!t->label) return sb_fail(SB_ERR_INVALID_INPUT, "training data has no labels");
    if (t->ntargets > 1)
        return sb_fail(SB_ERR_INVALID_INPUT, "training data has %d targets a row: forests fit one",
                       (int)t->ntargets);
    int32_t maxc = 0;
    for (int64_t r = 0; r < t->nrows; r++) {
        float y = t->label[r];
        if (!(y == y) || y - y != 0.0f)
            return sb_fail(SB_ERR_INVALID_INPUT, "label of row %lld is not finite", (long long)(r + off));
        if (p->classification) {
            if (y < 0.0f || y > (float)(SB_FOREST_MAX_CLASS - 1) || y != (float)(int32_t)y)
                return sb_fail(SB_ERR_INVALID_INPUT, "label of row %lld is %g; classification needs class indices 0..%d",
                               (long long)(r + off), (double)y, SB_FOREST_MAX_CLASS - 1);
            if ((int32_t)y > maxc) maxc = (int32_t)y;
        }
    }
    if (d) { /* distributed=mpi: the classes every rank's labels reach */
        uint32_t mc = (uint32_t)maxc;
        sb_dist_max_u32(d, &mc, 1);
        maxc = (int32_t)mc;
    }
    *K = p->classification ? (maxc + 1 < 2 ? 2 : maxc + 1) : 1;
    if (t->weight)
        for (int64_t r = 0; r < t->nrows; r++) {
            float w = t->weight[r];
            if (!(w >= 0.0f) || w - w != 0.0f)
                return sb_fail(SB_ERR_INVALID_INPUT, "sample weight of row %lld is %g; weights must be finite and >= 0",
                               (long long)(r + off), (double)w);
        }
    if (p->class_weight == SB_CW_LIST && p->cw_max >= *K)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "class_weight names class %d; the labels are classes 0..%d",
                       (int)p->cw_max, (int)*K - 1);
    return SB_OK;
}


/* A classification forest's training card stage forest.train_proba: the
 * probabilities it predicts on its training rows (the profile's rule,
 * kernels/tree.h: sb_k_finish_row), recorded after forest.model_bytes so that
 * the stages before it stay where they were. */
static sb_status record_proba(sb_card *card, const sb_model *m, const sb_dataset *train) {
    size_t n = 0;
    float *pred = NULL;
    sb_status st = sb_model_predict(m, train, SB_PREDICT_PROBA, NULL, 0, &n);
    if (st == SB_OK && !(pred = sb_malloc(sizeof(float) * (n ? n : 1))))
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "card: out of memory");
    if (st == SB_OK) st = sb_model_predict(m, train, SB_PREDICT_PROBA, pred, n, NULL);
    if (st == SB_OK) st = sb_card_record(card, "forest.train_proba", SB_DTYPE_F32, pred, n);
    sb_free(pred);
    return st;
}

/* Refuse, by name, trees with a leaf value or split gain that is not finite,
 * whichever device grew them. Squared-error scores are s^2 / w of the
 * dequantized target sums: targets (or weight x target, weighted) large
 * enough for s^2 or s to pass float32's 3.4e38 make scores +inf, gains
 * inf - inf = NaN and leaf means inf; the model format cannot hold those
 * (its writer refuses them), and a NaN's bits differ between machines, so the
 * fit refuses here, the same on every machine: whether a float is finite is
 * fixed by IEEE. Scores themselves are >= 0 or +inf, never NaN, so the split
 * choices that led here were the same everywhere. */
static sb_status check_finite_trees(const sb_tree *trees, int64_t ntrees) {
    for (int64_t t = 0; t < ntrees; t++)
        for (int32_t k = 0; k < trees[t].nnodes; k++) {
            const sb_tree_node *nd = &trees[t].nodes[k];
            const int bad_value = !sb_k_key_finite(sb_f2u(nd->value)), bad_gain = !sb_k_key_finite(sb_f2u(nd->gain));
            if (bad_value || bad_gain)
                return sb_fail(SB_ERR_LIMIT,
                               "forest: tree %lld node %d: a %s is not finite: the regression targets (times their "
                               "weights) are too large for float32 sums of squares (|sum| near 1.8e19 or more); "
                               "scale the targets down (docs/forest.md, \"Limits of float32\")",
                               (long long)t, (int)k, bad_value ? "leaf value" : "split gain");
        }
    return SB_OK;
}

/* Warm start's checks: init must be a forest of this kind (random forest or
 * Extra Trees), profile, task, class count and feature count, fitted with
 * these parameters but n_estimators, and no more estimators than they ask
 * for; a named error otherwise. Sets *T0, init's estimators. */
static sb_status check_init(const sb_model *init, const forest_params *p, int32_t ncopies, int32_t nf, int32_t *T0) {
    sb_status st = sb_forest_warm_kind(init, p->extra ? SB_FAMILY_EXTRA_TREES : SB_FAMILY_RANDOM_FOREST, nf);
    if (st != SB_OK) return st;
    const int32_t obj = p->classification ? SB_OBJ_FOREST_CLASSES : SB_OBJ_REGRESSION;
    if (init->objective != obj)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "init_model is a %s forest, the parameters a %s one",
                       init->objective == SB_OBJ_FOREST_CLASSES ? "classification" : "regression",
                       p->classification ? "classification" : "regression");
    if (init->num_class != ncopies)
        return sb_fail(SB_ERR_INVALID_INPUT, "init_model has %d classes, the training data's labels %d",
                       (int)init->num_class, (int)ncopies);
    if (init->ntrees < ncopies || init->ntrees % ncopies != 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "init_model holds %d trees, not whole estimators of %d",
                       (int)init->ntrees, (int)ncopies);
    char *text = NULL;
    if ((st = sb_forest_params_text(p, &text)) != SB_OK) return st;
    *T0 = init->ntrees / ncopies;
    st = sb_forest_warm_params(init, text, p->n_estimators, *T0);
    sb_free(text);
    return st;
}

static sb_status forest_fit(const sb_params *params, const sb_dataset *train, const sb_model *init, sb_card *card,
                            sb_model **out);

/* distributed=mpi's refusals (from the parameters alone, so every rank
 * refuses alike, before anything is exchanged), then the communicator and
 * this rank's block of the training rows by gradient boosting's row rule:
 * rank k of N takes global rows [floor(k n / N), floor((k + 1) n / N)) of the
 * n rows every rank was given (the same file). *blk is a view (nothing is
 * copied); *coll := 1 for a failure every rank meets alike. */
static sb_status fdist_setup(fctx *f, const forest_params *p, const sb_dataset *train, const sb_card *card,
                             sb_table *blk, int *coll) {
    const char *no = NULL;
    if (!p->distributed) no = NULL;
    else if (p->device != SB_FOREST_DEVICE_CPU) no = "a forest device (device=...): the ranks grow trees on their CPUs";
    else if (card) no = "an identity card (--card): record cards in one process";
    if (p->dist_given && !p->distributed)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "distributed_rows=given needs distributed=mpi");
    if (no)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "distributed=mpi does not support %s (docs/distributed.md, "
                       "\"What is refused\")", no);
    sb_dist *d = NULL;
    sb_status st = sb_dist_open("mpi", &d);
    if (st != SB_OK) return st;
    f->dist = d;
    if (p->dist_given) return sb_forest_dist_given(d, &train->t, blk, &f->roff, coll);
    /* every rank must hold the same rows: compare the counts (and the columns) */
    const int64_t n = train->t.nrows, N = d->size, k = d->rank;
    int64_t sum[2] = {n, train->t.ncols};
    uint32_t top[3] = {(uint32_t)((uint64_t)n >> 32), (uint32_t)n, (uint32_t)train->t.ncols};
    sb_dist_sum_i64(d, sum, 2);
    sb_dist_max_u32(d, top, 3);
    const uint64_t mx = ((uint64_t)top[0] << 32) | top[1];
    *coll = 1;
    if (sum[0] != (int64_t)mx * N || sum[1] != (int64_t)top[2] * N)
        return sb_fail(SB_ERR_INVALID_INPUT, "distributed=mpi: the %d ranks were given different training data "
                       "(row or column counts differ); give every rank the same file", (int)N);
    if (n < N)
        return sb_fail(SB_ERR_LIMIT, "distributed=mpi: %lld training rows for %d ranks; every rank needs rows",
                       (long long)n, (int)N);
    *coll = 0;
    const int64_t b = n * k / N, e = n * (k + 1) / N;
    f->roff = b;
    sb_table_rows_view(&train->t, b, e, blk);
    return SB_OK;
}

/* distributed_rows=given (forests and isolation forests): this rank's dataset
 * is its own rows; the training set is every rank's rows in rank order. The
 * ranks must agree on the columns, each hold a row, and all have weights or
 * none (named errors, the same on every rank). *blk := the rank's whole
 * table, *roff := its first row's number in the concatenation. */
sb_status sb_forest_dist_given(const sb_dist *d, const sb_table *t, sb_table *blk, int64_t *roff, int *coll) {
    int64_t v[3] = {t->ncols, t->nrows > 0, t->weight != NULL};
    uint32_t top[2] = {(uint32_t)t->ncols, (uint32_t)(t->weight != NULL)};
    sb_dist_sum_i64(d, v, 3);
    sb_dist_max_u32(d, top, 2);
    *coll = 1;
    if (v[0] != (int64_t)top[0] * d->size)
        return sb_fail(SB_ERR_INVALID_INPUT, "distributed_rows=given: the %d ranks' training data have different "
                       "column counts", (int)d->size);
    if (v[1] != d->size)
        return sb_fail(SB_ERR_LIMIT, "distributed_rows=given: %lld of the %d ranks hold no training rows; every "
                       "rank needs rows", (long long)(d->size - v[1]), (int)d->size);
    if (v[2] != 0 && v[2] != (int64_t)top[1] * d->size)
        return sb_fail(SB_ERR_INVALID_INPUT, "distributed_rows=given: sample weights on %lld of the %d ranks; give "
                       "them on every rank or on none", (long long)v[2], (int)d->size);
    *coll = 0;
    int64_t total = 0;
    sb_dist_prefix(d, t->nrows, roff, &total);
    *blk = *t;
    return SB_OK;
}

/* The bins from the sample a single process draws (sb_bins_in_sample, keyed
 * by the global row): each rank sends its sampled rows, every rank receives
 * them all in global row order and builds the same edges from them (the
 * edges depend on the sampled values alone, sorted by a total order). */
static sb_status fdist_bins(fctx *f, int32_t nf, sb_bins *out) {
    const int64_t n = f->tr->nrows;
    float *mine = sb_malloc(sizeof(float) * (size_t)(n > 0 ? n : 1) * (size_t)nf);
    if (!mine) return oom();
    int64_t k = 0;
    for (int64_t r = 0; r < n; r++)
        if (sb_bins_in_sample(f->p->seed, f->gn, f->p->bin_sample_rows, f->goff + r))
            memcpy(mine + k++ * nf, f->tr->x + r * nf, sizeof(float) * (size_t)nf);
    void *all = NULL;
    int64_t bytes = 0;
    sb_dist_gather(f->dist, mine, (int64_t)sizeof(float) * k * nf, &all, &bytes);
    sb_free(mine);
    sb_status st = sb_bins_build(all, bytes / ((int64_t)sizeof(float) * nf), nf, f->p->max_bin, f->p->seed, 0, out);
    sb_free(all);
    return st;
}

static sb_status forest_fit_run(const sb_params *params, const sb_dataset *train, const sb_model *init,
                                sb_card *card, sb_model **out, const sb_dist **dist_out, int *coll);

/* sb_forest_fit's body, and under distributed=mpi a failure only this rank
 * has (a bad label in its block, out of memory) ends the whole job by name:
 * the other ranks would otherwise wait for it in their next exchange. */
static sb_status forest_fit(const sb_params *params, const sb_dataset *train, const sb_model *init, sb_card *card,
                            sb_model **out) {
    const sb_dist *dist = NULL;
    int coll = 0;
    sb_status st = forest_fit_run(params, train, init, card, out, &dist, &coll);
    if (st != SB_OK && dist && !coll) sb_dist_fail(dist, st, sb_last_error());
    return st;
}

sb_status sb_forest_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out) {
    return forest_fit(params, train, NULL, card, out);
}

sb_status sb_forest_fit_continue(const sb_params *params, const sb_dataset *train, const sb_model *init,
                                 sb_card *card, sb_model **out) {
    sb_clear_error();
    if (!init) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_forest_fit_continue: NULL init model");
    return forest_fit(params, train, init, card, out);
}

/* sb_forest_fit, keeping init's estimators when init is given (warm start:
 * trees 0..T0-1 are init's with their leaves valued for n_estimators, trees
 * T0.. are grown with their own draws, keyed by their index). Under
 * distributed=mpi (*dist_out the communicator) each rank fits on its block
 * of rows and every rank returns the single process's model; *coll := 1
 * for a failure every rank meets alike. */
static sb_status forest_fit_run(const sb_params *params, const sb_dataset *train, const sb_model *init,
                                sb_card *card, sb_model **out, const sb_dist **dist_out, int *coll) {
    sb_clear_error();
    if (!train || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_forest_fit: NULL argument");
    *out = NULL;
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    forest_params p;
    sb_status st = sb_forest_params_parse(params, &p);
    if (st != SB_OK) return st;
    fctx f;
    memset(&f, 0, sizeof f);
    f.p = &p;
    f.tr = &train->t;
    sb_table blk; /* distributed=mpi: this rank's block of the training rows (a view) */
    if (p.distributed || p.dist_given) {
        st = fdist_setup(&f, &p, train, card, &blk, coll);
        *dist_out = f.dist;
        if (st != SB_OK) return st;
        f.tr = &blk;
    }
    int64_t n = f.tr->nrows;
    const int32_t nf = f.tr->ncols;
    if ((st = check_labels(&p, f.tr, f.dist, f.roff, &f.K)) != SB_OK) return st;
    if (n < 1 || nf < 1) return sb_fail(SB_ERR_INVALID_INPUT, "forest: no rows or no features");
    if (n > INT32_MAX) return sb_fail(SB_ERR_LIMIT, "forest: %lld rows; at most %d", (long long)n, (int)INT32_MAX);
    f.mtry = sb_forest_mtry(&p, nf);
    const int32_t ncopies = p.classification ? f.K : 1;
    if (init) {
        if ((st = check_init(init, &p, ncopies, nf, &f.init_T)) != SB_OK) {
            *coll = 1; /* every rank holds the same init and parameters */
            return st;
        }
        f.init = init;
        f.first = f.init_T;
        /* Separating arm of the warm start's identity test (tests/python/
         * test_py_warm_start.py): SAMEBITS_TEST_FOREST_WARM_FROM_ZERO=1 keys the
         * grown trees' draws from 0 instead of their index (the CPU grower only),
         * the mistake that must show as other bytes. */
        const char *arm = getenv("SAMEBITS_TEST_FOREST_WARM_FROM_ZERO");
        if (arm && arm[0] == '1') f.key_shift = f.first;
    }
    /* Without a bootstrap (whose draws go by row position) a row of weight zero
     * is an absent row: the trees, bins included, grow on the others (the
     * classes K stay those of every row). */
    sb_table kept;
    int dropped = 0;
    memset(&kept, 0, sizeof kept);
    if (!p.bootstrap && (st = sb_table_drop_zero_weight_ranks(f.dist, f.tr, &kept, &dropped)) != SB_OK) return st;
    if (dropped) {
        f.tr = &kept;
        n = kept.nrows;
    }
    if (f.dist) /* this rank's place among the rows every rank keeps */
        sb_dist_prefix(f.dist, n, &f.goff, &f.gn);
    else
        f.gn = n;
    const size_t nn = n > 0 ? (size_t)n : 1; /* distributed=mpi: a block may keep no row */
    sb_model *m = NULL;
    f.binned = sb_malloc(nn * (size_t)nf);
    f.trees = sb_calloc((size_t)p.n_estimators * (size_t)ncopies, sizeof(sb_tree));
    f.status = sb_calloc((size_t)p.n_estimators, sizeof(sb_status)); /* SB_OK: a tree not grown after a failure */
    f.bad_row = sb_calloc((size_t)p.n_estimators, sizeof(int64_t));
    if (p.classification) f.cls = sb_malloc(sizeof(int32_t) * nn);
    else f.yq = sb_malloc(sizeof(int32_t) * nn);
    f.weighted = f.tr->weight != NULL || p.class_weight != SB_CW_NONE;
    f.sw = f.tr->weight;
    f.nv = (p.classification ? f.K : 2) + f.weighted;
    f.ndraw = p.bootstrap && p.max_samples > 0.0f ? (int64_t)(p.max_samples * (float)f.gn) : f.gn;
    if (f.ndraw < 1) f.ndraw = 1;
    {
        /* classification sums of ndraw rows of weight <= 2^W fit 2^62, and wq is int32 */
        int32_t b = 0;
        while (b < 40 && (INT64_C(1) << b) < f.ndraw) b++;
        f.wbits_max = 62 - b < 30 ? 62 - b : 30;
    }
    if (!f.binned || !f.trees || !f.status || !f.bad_row || (!f.cls && !f.yq)) {
        st = oom();
        goto done;
    }
    const char *tv = getenv("SAMEBITS_FOREST_TIMING");
    const int timing = tv && tv[0] == '1';
    double tp = timing ? phase_clock() : 0.0;
    if ((st = f.dist ? fdist_bins(&f, nf, &f.bins)
                     : sb_bins_build(f.tr->x, n, nf, p.max_bin, p.seed, p.bin_sample_rows, &f.bins)) != SB_OK)
        goto done;
    sb_bins_apply(&f.bins, f.tr->x, n, nf, f.binned);
    phase_note(timing, "binning", &tp);
    if (card) {
        if ((st = sb_card_record(card, "forest.bin_edges", SB_DTYPE_F32, f.bins.upper, (uint64_t)f.bins.offset[nf])) != SB_OK) goto done;
        if ((st = sb_card_record(card, "forest.binned", SB_DTYPE_U8, f.binned, (uint64_t)n * (uint64_t)nf)) != SB_OK) goto done;
    }
    if (p.classification) {
        for (int64_t r = 0; r < n; r++) f.cls[r] = (int32_t)f.tr->label[r];
    } else {
        float mx = 0.0f, levels = Y_LEVELS;
        for (int64_t r = 0; r < n; r++) {
            float a = sb_u2f(sb_f2u(f.tr->label[r]) & 0x7FFFFFFFu);
            if (a > mx) mx = a;
        }
        mx = fd_max(&f, mx); /* distributed=mpi: the largest |y| of every rank */
        if (f.weighted) {
            /* sums of ndraw rows of weight <= 2^W and |y| <= 2^L fit 2^62: W the
             * weights' bits (20, more only where a weight would vanish), then L */
            int32_t b = 0, L;
            while (b < 40 && (INT64_C(1) << b) < f.ndraw) b++;
            int32_t wb = W_BITS;
            if (f.sw) {
                float mx = 0.0f, mn = 0.0f;
                for (int64_t r = 0; r < n; r++) {
                    const float w = f.sw[r];
                    if (w > mx) mx = w;
                    if (w > 0.0f && (mn == 0.0f || w < mn)) mn = w;
                }
                mx = fd_max(&f, mx);
                mn = fd_min_pos(&f, mn);
                const int32_t cap = 46 - b < 30 ? 46 - b : 30; /* L keeps WY_MIN_BITS */
                if (mx > 0.0f) wb = weight_bits_at(mx, weight_exponent(mx, mn, cap > W_BITS ? cap : W_BITS));
            }
            f.wbits_max = wb;
            L = 62 - wb - b < 30 ? 62 - wb - b : 30;
            if (L < WY_MIN_BITS) {
                st = sb_fail(SB_ERR_LIMIT,
                             "forest: weighted regression on %lld drawn rows leaves y %d bits of fixed point; at most "
                             "%lld rows a tree (2^%d) keep the %d bits needed",
                             (long long)f.ndraw, (int)L, (long long)(INT64_C(1) << (62 - W_BITS - WY_MIN_BITS)),
                             62 - W_BITS - WY_MIN_BITS, WY_MIN_BITS);
                goto done;
            }
            levels = sb_pow2f(L);
        }
        f.yscale = mx > 0.0f ? sb_pow2f(sb_quantize_exponent(mx, levels)) : 1.0f;
        for (int64_t r = 0; r < n; r++) f.yq[r] = sb_round_half_even_i32(f.tr->label[r] * f.yscale);
        if (card && (st = sb_card_record(card, "forest.y_fixed", SB_DTYPE_I32, f.yq, (uint64_t)n)) != SB_OK) goto done;
    }
    phase_note(timing, "labels", &tp);
    if (f.weighted && (st = prepare_weights(&f, card)) != SB_OK) goto done;
    set_rules(&f);
    /* on a forest device, the new trees there and init's kept ones here */
    if (p.device != SB_FOREST_DEVICE_CPU && f.first < p.n_estimators && (st = grow_on_device(&f)) != SB_OK)
        goto done;
    {
        const int32_t ntask = p.device != SB_FOREST_DEVICE_CPU ? f.first : p.n_estimators;
        if (f.dist) {
            /* distributed=mpi: every rank grows the trees one at a time in
             * tree order, so their exchanges come in the same order on every
             * rank; a failing tree stops the loop (the same tree everywhere
             * for a failure the ranks share, below) */
            for (int32_t t = 0; t < ntask; t++) {
                tree_task(&f, t);
                if (f.status[t] != SB_OK) break;
            }
        } else {
            sb_parallel_for(ntask, tree_task, &f);
        }
        for (int32_t t = 0; t < ntask; t++)
            if (f.status[t] != SB_OK) {
                /* shared by every rank: a sample of weight zero (decided on
                 * every rank's counts); the others are this rank's alone */
                *coll = f.status[t] == SB_ERR_INVALID_INPUT || (t < f.first && f.status[t] == SB_ERR_INVALID_ARGUMENT);
                if (f.status[t] == SB_ERR_OUT_OF_MEMORY) st = oom();
                else if (f.status[t] == SB_ERR_INVALID_INPUT)
                    st = sb_fail(SB_ERR_INVALID_INPUT,
                                 "forest: tree %d's sample holds only rows of weight zero (sample_weight x class "
                                 "weight); give fewer zero weights or more rows", (int)t);
                else if (f.status[t] == SB_ERR_LIMIT) st = weight_limit(&f, f.bad_row[t], t);
                else if (t < f.first && f.status[t] == SB_ERR_INVALID_ARGUMENT)
                    st = sb_fail(SB_ERR_INVALID_ARGUMENT, "init_model: estimator %d's class trees differ in shape; "
                                 "not a forest this library wrote", (int)t);
                else st = sb_fail(f.status[t], "forest: tree %d failed", (int)t);
                goto done;
            }
    }
    phase_note(timing, "growing", &tp);
    if ((st = check_finite_trees(f.trees, (int64_t)p.n_estimators * ncopies)) != SB_OK) {
        *coll = 1; /* the same trees on every rank */
        goto done;
    }
    /* the model */
    if ((st = sb_model_alloc(&m)) != SB_OK) goto done;
    m->family = p.extra ? SB_FAMILY_EXTRA_TREES : SB_FAMILY_RANDOM_FOREST;
    m->objective = p.classification ? SB_OBJ_FOREST_CLASSES : SB_OBJ_REGRESSION;
    m->num_class = ncopies;
    m->num_features = nf;
    m->numeric_mode = p.numeric_mode;
    m->base_score = sb_calloc((size_t)ncopies, sizeof(float));
    m->feature_names = sb_calloc((size_t)nf, sizeof(char *));
    if (!m->base_score || !m->feature_names) {
        st = oom();
        goto done;
    }
    for (int32_t k = 0; k < nf; k++)
        if (!(m->feature_names[k] = sb_strdup(f.tr->names[k]))) {
            st = oom();
            goto done;
        }
    if ((st = sb_forest_params_text(&p, &m->params)) != SB_OK) goto done;
    m->trees = f.trees;
    m->ntrees = p.n_estimators * ncopies;
    f.trees = NULL;
    if (card && (st = sb_model_record(card, m, train, SB_PREDICT_RAW, "forest.train_raw", "forest.model_bytes")) != SB_OK)
        goto done;
    if (card && p.classification && (st = record_proba(card, m, train)) != SB_OK) goto done;
    phase_note(timing, "model", &tp);
    if (f.dist) { /* the last exchange: every rank holds the same bytes */
        char hex[65];
        if ((st = sb_model_digest(m, hex)) != SB_OK) goto done;
        if ((st = sb_dist_agree(f.dist, hex)) != SB_OK) {
            *coll = 1;
            goto done;
        }
    }
    *out = m;
    m = NULL;
done:
    sb_model_free(m);
    sb_table_drop_release(&kept);
    sb_bins_release(&f.bins);
    sb_free(f.binned);
    sb_free(f.cls);
    sb_free(f.yq);
    sb_free(f.status);
    sb_free(f.bad_row);
    sb_free(f.wq);
    sb_free(f.cw);
    if (f.trees)
        for (int64_t i = 0; i < (int64_t)p.n_estimators * ncopies; i++) sb_free(f.trees[i].nodes);
    sb_free(f.trees);
    return st;
}
