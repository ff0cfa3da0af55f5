/*
 * forest_dev.c: random forest and Extra Trees trees grown level by level on a
 * forest device (src/models/forest/fdev.h), a batch of trees at a time: every
 * splittable node of every tree of the batch at one depth goes to the device
 * in one call (sums, split, partition), never one call per node.
 *
 * The result is forest.c's forest, byte for byte:
 * - a node's draws (its features, an Extra Trees threshold) are keyed by its
 *   path key (src/kernels/forest.h), which the level-wise grower knows as well
 *   as the depth-first one; the bootstrap is keyed by (seed, tree, draw);
 * - a node's sums, its histograms and so its split are exact integer sums of
 *   the same rows, whatever their order; scores, the candidate rules, the
 *   total order, the impurity decrease and the leaf values are the kernel
 *   bodies forest.c calls;
 * - a finished tree is renumbered into forest.c's creation order: a node is
 *   taken from a stack, its left then right child get the next ids, and the
 *   right then the left child are pushed.
 * Weighted forests: the sums carry count x fixed-point weight and the row
 * count (sb_k_forest_put); each tree has its own weight scale (begin returns
 * it; balanced_subsample's differs by tree) and min_w (its root's share).
 * Isolation forests (sb_iforest_grow_dev): the same level loop over the
 * device's iso operations, nodes keyed by path as isolation.c keys them.
 *
 * The host's share of a level (which nodes may split, recording the splits,
 * making the children) runs on every thread over fixed chunks of the level;
 * its arrays are the serial loop's whatever the thread count (see "one
 * level, in chunks"), and a batch's nodes sit in blocks that never move.
 */
#include "forest_dev.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* SAMEBITS_FOREST_TIMING=1: the grower prints where a batch's time goes (the
 * device operations as the host waits for them, the host's own level work,
 * emitting the model trees) to stderr. */
enum { GT_BEGIN, GT_SUMS, GT_SPLIT, GT_PART, GT_HOST, GT_MAY, GT_REC, GT_CH, GT_ROOM, GT_EMIT, GT_N };
static const char *const k_gtnames[GT_N] = {"dev begin",  "dev sums",      "dev split",  "dev partition",
                                            "host other", "host may-split", "host record", "host children",
                                            "host room",  "emit"};

static double gclock(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A node of the batch, by its index in the batch's creation order (gid): the
 * roots, then each level's children, a split node's two children adjacent
 * (left = gid of the left one, the right one next). G(c, gid) is the node,
 * P(c, gid) its nv sums. */
typedef struct gnode {
    int32_t feature, left; /* feature -1, left -1: a leaf */
    float gain;
    uint8_t bin, dl;
    uint16_t pad_;
} gnode;
SB_STATIC_ASSERT(sizeof(gnode) == 16, "gnode is 16 bytes");

/* A node of the current level: its tree in the batch, its depth, where its
 * rows are on the device and its key. Level entry i is node lo + i (lo: the
 * level's first gid). */
typedef struct lnode {
    int32_t tree, depth;
    sb_fdev_node dev;
} lnode;

typedef struct gctx {
    const sb_fdev_ops *ops;
    sb_fdev *dev;
    const sb_fdev_setup *s;
    const sb_bins *bins;
    int32_t nv;
    float min_wf;             /* min_weight_fraction_leaf */
    sb_k_forest_rules *rules; /* the batch's trees': the setup's with each tree's weight scale and min_w */
    gnode **gblk;             /* the batch's nodes, by gid, in blocks of GBLOCK (never moved) */
    int64_t **pblk;           /* their sums, the same blocks */
    int32_t *tree_nodes;      /* nodes a tree of the batch */
    int64_t ng, nblk, blkcap;
    int32_t lchunk; /* level entries a host task (LCHUNK_DEFAULT) */
    int timing; /* SAMEBITS_FOREST_TIMING */
    double tsec[GT_N], tmark;
    int64_t nnodes;    /* nodes grown (timing) */
    int64_t nsearched; /* nodes searched for a split (timing) */
} gctx;

/* The time since the last mark goes to phase k. */
static void gmark(gctx *c, int k) {
    if (!c->timing) return;
    double now = gclock();
    c->tsec[k] += now - c->tmark;
    c->tmark = now;
}

static sb_status oom(void) { return sb_fail(SB_ERR_OUT_OF_MEMORY, "forest device grower: out of memory"); }

/* Grow *p (count elements of size) to hold at least need elements. */
static int grow(void **p, int64_t *cap, int64_t need, size_t size) {
    if (need <= *cap) return 1;
    int64_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = sb_realloc(*p, size * (size_t)c);
    if (!q) return 0;
    *p = q;
    *cap = c;
    return 1;
}

/* Like grow, for a buffer whose contents need not survive: freed and
 * allocated anew (no copy). */
static int fresh(void **p, int64_t *cap, int64_t need, size_t size) {
    if (need <= *cap) return 1;
    int64_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    sb_free(*p);
    *cap = 0;
    if (!(*p = sb_malloc(size * (size_t)c))) return 0;
    *cap = c;
    return 1;
}

/* Nodes are kept in blocks so that growing never copies them. */
#define GBLOCK_SHIFT 18
#define GBLOCK_MASK ((INT64_C(1) << GBLOCK_SHIFT) - 1)

static inline gnode *G(const gctx *c, int64_t gid) { return &c->gblk[gid >> GBLOCK_SHIFT][gid & GBLOCK_MASK]; }
static inline int64_t *P(const gctx *c, int64_t gid) {
    return c->pblk[gid >> GBLOCK_SHIFT] + (gid & GBLOCK_MASK) * c->nv;
}

/* Room for `more` nodes past the batch's ng (their gnodes and sums); blocks
 * stay for the next batch. */
static int room(gctx *c, int64_t more) {
    const int64_t need = (c->ng + more + GBLOCK_MASK) >> GBLOCK_SHIFT;
    while (c->nblk < need) {
        if (c->nblk == c->blkcap) {
            int64_t cap = c->blkcap, cap2 = c->blkcap;
            if (!grow((void **)&c->gblk, &cap, c->nblk + 1, sizeof(gnode *)) ||
                !grow((void **)&c->pblk, &cap2, c->nblk + 1, sizeof(int64_t *)))
                return 0;
            c->blkcap = cap < cap2 ? cap : cap2;
        }
        gnode *g = sb_malloc(sizeof(gnode) << GBLOCK_SHIFT);
        int64_t *v = sb_malloc((sizeof(int64_t) * (size_t)c->nv) << GBLOCK_SHIFT);
        if (!g || !v) {
            sb_free(g);
            sb_free(v);
            return 0;
        }
        c->gblk[c->nblk] = g;
        c->pblk[c->nblk++] = v;
    }
    return 1;
}

/* The rows of sums v counted with their bootstrap multiplicity (a node's
 * count in the model, as forest.c's): weighted, the sums' last value. */
static int64_t rows_of(const sb_k_forest_rules *r, const int64_t *v) { return sb_k_forest_part_count(r, v, v, v, 0, 0); }

/* forest.c's numbering of the tree rooted at root: pop a node; its children
 * (left(x) and left(x) + 1; none when left(x) < 0) take the next two ids; push
 * the right child, then the left. id[x]: node x's id (x as left numbers
 * nodes); order[k], when not NULL: the node of id k; stack: scratch for the
 * tree's node count. Both growers keep a split's children adjacent. */
static void dfs_number(int32_t root, int32_t (*left)(const void *, int32_t), const void *ctx, int32_t *id,
                       int32_t *order, int32_t *stack) {
    int32_t next = 1, sp = 0;
    id[root] = 0;
    if (order) order[0] = root;
    stack[sp++] = root;
    while (sp > 0) {
        const int32_t l = left(ctx, stack[--sp]);
        if (l < 0) continue;
        id[l] = next;
        id[l + 1] = next + 1;
        if (order) {
            order[next] = l;
            order[next + 1] = l + 1;
        }
        next += 2;
        stack[sp++] = l + 1;
        stack[sp++] = l;
    }
}

static int32_t gnode_left(const void *c, int32_t x) { return G((const gctx *)c, x)->left; }

/* Tree i of the batch (root gid i) as forest t's model trees, in forest.c's
 * node order. id: scratch for the batch's gids; each tree writes only its own. */
static sb_status emit(gctx *c, int32_t i, int32_t t, int32_t ntrees, int32_t ncopies, int32_t *id, sb_tree *out) {
    const int32_t nn = c->tree_nodes[i];
    int32_t *stack = sb_malloc(sizeof(int32_t) * (size_t)nn), *order = sb_malloc(sizeof(int32_t) * (size_t)nn);
    if (!stack || !order) {
        sb_free(stack);
        sb_free(order);
        return oom();
    }
    dfs_number(i, gnode_left, c, id, order, stack); /* order[k]: the gid of id k */
    sb_status st = SB_OK;
    for (int32_t k = 0; k < ncopies && st == SB_OK; k++) {
        sb_tree *tr = &out[(int64_t)t * ncopies + k];
        if (!(tr->nodes = sb_malloc(sizeof(sb_tree_node) * (size_t)nn))) {
            st = oom();
            break;
        }
        tr->nnodes = nn;
        for (int32_t j = 0; j < nn; j++) {
            const int32_t x = order[j];
            const gnode *q = G(c, x);
            const int64_t *v = P(c, x);
            sb_tree_node *d = &tr->nodes[j];
            memset(d, 0, sizeof *d);
            d->feature = q->feature;
            d->count = rows_of(&c->s->rules, v);
            d->default_left = q->dl;
            if (q->feature >= 0) {
                d->left = id[q->left];
                d->right = id[q->left + 1];
                d->threshold = c->bins->upper[c->bins->offset[q->feature] + q->bin - 1];
                d->gain = q->gain;
            } else {
                d->left = d->right = -1;
                d->value = sb_k_forest_leaf_value(&c->s->rules, v, k, ntrees);
            }
        }
    }
    sb_free(stack);
    sb_free(order);
    return st;
}

/* The batch's trees emitted in parallel, one task per tree (each writes only
 * its own model trees and ids; the numbering and values do not depend on the
 * schedule). */
typedef struct emit_job {
    gctx *c;
    int32_t t0, ntrees, ncopies;
    int32_t *id;
    sb_tree *out;
    sb_status *st;
} emit_job;

static void emit_task(void *ctx, int64_t i) {
    emit_job *j = ctx;
    j->st[i] = emit(j->c, (int32_t)i, j->t0 + (int32_t)i, j->ntrees, j->ncopies, j->id, j->out);
}

static sb_status emit_all(gctx *c, int32_t t0, int32_t nb, int32_t ntrees, int32_t ncopies, sb_tree *out) {
    sb_status *st = sb_malloc(sizeof(sb_status) * (size_t)nb);
    int32_t *id = sb_malloc(sizeof(int32_t) * (size_t)(c->ng > 0 ? c->ng : 1));
    if (!st || !id) {
        sb_free(st);
        sb_free(id);
        return oom();
    }
    emit_job j = {c, t0, ntrees, ncopies, id, out, st};
    sb_parallel_for(nb, emit_task, &j);
    sb_status r = SB_OK;
    for (int32_t i = 0; i < nb && r == SB_OK; i++)
        if (st[i] != SB_OK) r = st[i] == SB_ERR_OUT_OF_MEMORY ? oom() : sb_fail(st[i], "forest device grower: tree %d", (int)(t0 + i));
    sb_free(st);
    sb_free(id);
    return r;
}

/* ---- one level, in chunks of level entries ----
 * A level's host work (which nodes may split, recording the splits, making
 * the children) runs as tasks over fixed chunks of the level: a chunk's
 * entries keep their level order, and where a step compacts (the nodes that
 * may split, the splits found) each chunk writes from the offset the chunks
 * before it fill, so the arrays are the serial loop's whatever the threads.
 * Chunks of 8,192 entries, or SAMEBITS_FOREST_LEVEL_CHUNK (tests: many
 * chunks on small data change no bit). */
#define LCHUNK_DEFAULT 8192

typedef struct level {
    gctx *c;
    int64_t lo;         /* the level's first gid */
    const lnode *lv;    /* its entries */
    int32_t nl, t0;
    int32_t chunk, nchunks; /* entries a chunk; chunks of the step */
    int32_t *cnt;       /* per chunk: entries kept, then the offset of its first */
    /* may-split step: out dn, buf (sums), pick (level index) */
    sb_fdev_node *dn;
    int64_t *buf;
    int32_t *pick;
    /* record step: in sp, lsum over ns; out pdn, plsum, ppick over np */
    int32_t ns;
    const sb_k_fsplit *sp;
    const int64_t *lsum;
    sb_fdev_node *pdn;
    int64_t *plsum;
    int32_t *ppick;
    /* children step: in nleft; out next */
    int64_t next_lo;
    const int64_t *nleft;
    lnode *next;
} level;

/* Chunk k's entries of a step over n: [k * chunk, chunk_end). */
static int32_t chunk_end(const level *L, int32_t k, int32_t n) {
    return (int64_t)(k + 1) * L->chunk < n ? (k + 1) * L->chunk : n;
}

static int may_split(const level *L, int32_t i) {
    const gctx *c = L->c;
    return sb_k_forest_may_split(&c->s->rules, P(c, L->lo + i), c->s->min_samples_split, L->lv[i].depth,
                                 c->s->max_depth);
}

static void may_count(void *ctx, int64_t k) {
    level *L = ctx;
    int32_t m = 0;
    for (int32_t i = (int32_t)k * L->chunk; i < chunk_end(L, (int32_t)k, L->nl); i++) m += may_split(L, i);
    L->cnt[k] = m;
}

static void may_fill(void *ctx, int64_t k) {
    level *L = ctx;
    const int32_t nv = L->c->nv;
    int32_t o = L->cnt[k];
    for (int32_t i = (int32_t)k * L->chunk; i < chunk_end(L, (int32_t)k, L->nl); i++) {
        if (!may_split(L, i)) continue;
        L->dn[o] = L->lv[i].dev;
        memcpy(L->buf + (int64_t)o * nv, P(L->c, L->lo + i), sizeof(int64_t) * (size_t)nv);
        L->pick[o++] = i;
    }
}

static void rec_count(void *ctx, int64_t k) {
    level *L = ctx;
    int32_t m = 0;
    for (int32_t j = (int32_t)k * L->chunk; j < chunk_end(L, (int32_t)k, L->ns); j++) m += L->sp[j].valid != 0;
    L->cnt[k] = m;
}

/* The splits found: recorded in their nodes, compacted for the partition. */
static void rec_fill(void *ctx, int64_t k) {
    level *L = ctx;
    gctx *c = L->c;
    const int32_t nv = c->nv;
    int32_t o = L->cnt[k];
    for (int32_t j = (int32_t)k * L->chunk; j < chunk_end(L, (int32_t)k, L->ns); j++) {
        const sb_k_fsplit *q = &L->sp[j];
        if (!q->valid) continue;
        const int32_t i = L->pick[j];
        const int64_t gid = L->lo + i;
        gnode *x = G(c, gid);
        x->feature = q->feature;
        x->bin = (uint8_t)q->bin;
        x->dl = (uint8_t)q->dl;
        x->gain = sb_k_forest_gain(&c->rules[L->lv[i].tree], q->score, P(c, gid));
        L->pdn[o] = L->dn[j];
        L->pdn[o].feature = q->feature;
        L->pdn[o].bin = q->bin;
        L->pdn[o].dl = q->dl;
        memcpy(L->plsum + (int64_t)o * nv, L->lsum + (int64_t)j * nv, sizeof(int64_t) * (size_t)nv);
        L->ppick[o++] = i;
    }
}

/* Split j's children: gids next_lo + 2j and + 2j + 1, level entries 2j and
 * 2j + 1 of the next level. */
static void children(void *ctx, int64_t k) {
    level *L = ctx;
    gctx *c = L->c;
    const int32_t nv = c->nv;
    int32_t run_tree = -1, run = 0; /* the chunk's new nodes per tree, added in runs (integer atomics) */
    for (int32_t j = (int32_t)k * L->chunk; j < chunk_end(L, (int32_t)k, L->ns); j++) {
        const int32_t i = L->ppick[j];
        const lnode *q = &L->lv[i];
        if (q->tree != run_tree) {
            if (run) __atomic_fetch_add(&c->tree_nodes[run_tree], run, __ATOMIC_RELAXED);
            run_tree = q->tree;
            run = 0;
        }
        run += 2;
        const int64_t gid = L->lo + i, lc = L->next_lo + 2 * (int64_t)j;
        G(c, gid)->left = (int32_t)lc;
        const int64_t *ps = P(c, gid), *ls0 = L->plsum + (int64_t)j * nv;
        int64_t *ls = P(c, lc), *rs = P(c, lc + 1);
        for (int32_t v = 0; v < nv; v++) {
            ls[v] = ls0[v];
            rs[v] = ps[v] - ls0[v];
        }
        const int64_t nl = L->nleft[j];
        for (int side = 0; side < 2; side++) {
            gnode *x = G(c, lc + side);
            x->feature = -1;
            x->left = -1;
            x->gain = 0.0f;
            x->bin = x->dl = 0;
            x->pad_ = 0;
            lnode *y = &L->next[2 * j + side];
            memset(y, 0, sizeof *y);
            y->tree = q->tree;
            y->depth = q->depth + 1;
            y->dev.begin = side ? q->dev.begin + nl : q->dev.begin;
            y->dev.end = side ? q->dev.end : q->dev.begin + nl;
            y->dev.min_w = q->dev.min_w;
#ifdef SB_SABOTAGE_FOREST_KEYS
            /* Separating arm: the node keyed by the order this grower makes
             * it (tree, creation index in the batch), not by its path. */
            y->dev.key = ((uint64_t)(uint32_t)(L->t0 + q->tree) << 32) | (uint32_t)(lc + side);
#else
            y->dev.key = sb_k_forest_child_key(q->dev.key, side);
#endif
        }
    }
    if (run) __atomic_fetch_add(&c->tree_nodes[run_tree], run, __ATOMIC_RELAXED);
}

/* Chunk counts into offsets; the total. */
static int32_t offsets(int32_t *cnt, int32_t nchunks) {
    int32_t o = 0;
    for (int32_t k = 0; k < nchunks; k++) {
        const int32_t m = cnt[k];
        cnt[k] = o;
        o += m;
    }
    return o;
}

/* Whether a device's partition of nodes is possible: every split sends at
 * least one row each way (its candidates all do). A device that says
 * otherwise is broken; the growers stop with a named error rather than grow
 * a node that holds its parent's rows. */
static sb_status check_partition(const sb_fdev_ops *ops, const sb_fdev_node *nodes, int32_t n, const int64_t *nleft) {
    for (int32_t j = 0; j < n; j++)
        if (nleft[j] <= 0 || nleft[j] >= nodes[j].end - nodes[j].begin)
            return sb_fail(SB_ERR_INTERNAL, "forest device '%s': a partition sent %lld of %lld rows left", ops->name,
                           (long long)nleft[j], (long long)(nodes[j].end - nodes[j].begin));
    return SB_OK;
}

/* A compaction over n entries in chunks: count (per chunk, into L->cnt),
 * the chunks' offsets, then fill (each chunk from its offset) unless none is
 * kept; how many are kept. */
static int32_t compact(level *L, int32_t n, sb_task_fn count, sb_task_fn fill) {
    L->nchunks = (n + L->chunk - 1) / L->chunk;
    sb_parallel_for(L->nchunks, count, L);
    const int32_t m = offsets(L->cnt, L->nchunks);
    if (m > 0) sb_parallel_for(L->nchunks, fill, L);
    return m;
}

/* Trees [t0, t0 + nb) on the device, level by level. */
static sb_status grow_batch(gctx *c, int32_t t0, int32_t nb, int32_t ntrees, int32_t ncopies, sb_tree *out) {
    const int32_t nv = c->nv;
    const sb_fdev_setup *s = c->s;
    sb_status st = SB_OK;
    lnode *lv = NULL, *next = NULL;
    sb_fdev_node *dn = NULL, *pdn = NULL;
    int64_t *buf = NULL, *count = NULL, *nleft = NULL, *lsum = NULL, *plsum = NULL;
    sb_k_fsplit *sp = NULL;
    int32_t *pick = NULL, *ppick = NULL, *cnt = NULL;
    int64_t lvcap = 0, nextcap = 0, dncap = 0, pdncap = 0, bufcap = 0, nlcap = 0, spcap = 0, pickcap = 0, ppickcap = 0,
            lsumcap = 0, plsumcap = 0, cntcap = 0;
    c->ng = 0;
    memset(c->tree_nodes, 0, sizeof(int32_t) * (size_t)nb);
    int32_t *wexp = sb_malloc(sizeof(int32_t) * (size_t)nb);
    if (!(count = sb_malloc(sizeof(int64_t) * (size_t)nb)) || !wexp) {
        sb_free(wexp);
        sb_free(count);
        return oom();
    }
    if (c->timing) c->tmark = gclock();
    st = c->ops->begin(c->dev, t0, nb, count, wexp);
    gmark(c, GT_BEGIN);
    for (int32_t i = 0; i < nb && st == SB_OK; i++) {
        c->rules[i] = s->rules;
        c->rules[i].wexp = wexp[i];
        if (count[i] == 0) /* weighted: every row drawn has weight zero */
            st = sb_fail(SB_ERR_INVALID_INPUT,
                         "forest: tree %d's sample holds only rows of weight zero (sample_weight x class weight); "
                         "give fewer zero weights or more rows", (int)(t0 + i));
    }
    sb_free(wexp);
    if (st != SB_OK) goto done;
    /* the roots: gids 0..nb-1, their sums, and each tree's min_w (a share of
     * its root's weight) */
    if (!fresh((void **)&lv, &lvcap, nb, sizeof(lnode)) || !fresh((void **)&dn, &dncap, nb, sizeof(sb_fdev_node)) ||
        !room(c, nb))
        goto nomem;
    int32_t nl = nb;
    int64_t at = 0, lo = 0;
    for (int32_t i = 0; i < nb; i++) {
        lnode *x = &lv[i];
        memset(x, 0, sizeof *x);
        x->tree = i;
        x->dev.begin = at;
        x->dev.end = at + count[i];
        x->dev.key = sb_k_forest_root_key(t0 + i);
        at += count[i];
        dn[i] = x->dev;
        gnode *g = G(c, i);
        memset(g, 0, sizeof *g);
        g->feature = g->left = -1;
        c->tree_nodes[i] = 1;
    }
    c->ng = nb;
    gmark(c, GT_HOST);
    if (!fresh((void **)&buf, &bufcap, (int64_t)nb * nv, sizeof(int64_t))) goto nomem;
    if ((st = c->ops->sums(c->dev, dn, nb, buf)) != SB_OK) goto done;
    gmark(c, GT_SUMS);
    for (int32_t i = 0; i < nb; i++) {
        sb_k_forest_rules *r = &c->rules[i];
        memcpy(P(c, i), buf + (int64_t)i * nv, sizeof(int64_t) * (size_t)nv);
        r->min_w = sb_k_forest_min_w(r, c->min_wf, P(c, i));
        lv[i].dev.min_w = r->min_w;
    }
    while (nl > 0) {
        level L;
        memset(&L, 0, sizeof L);
        L.c = c;
        L.lo = lo;
        L.lv = lv;
        L.nl = nl;
        L.t0 = t0;
        L.chunk = c->lchunk;
        /* the nodes that may split, and their sums */
        if (!fresh((void **)&cnt, &cntcap, (nl + L.chunk - 1) / L.chunk, sizeof(int32_t)) ||
            !fresh((void **)&pick, &pickcap, nl, sizeof(int32_t)) || !fresh((void **)&dn, &dncap, nl, sizeof(sb_fdev_node)) ||
            !fresh((void **)&buf, &bufcap, (int64_t)nl * nv, sizeof(int64_t)))
            goto nomem;
        L.cnt = cnt;
        L.dn = dn;
        L.buf = buf;
        L.pick = pick;
        gmark(c, GT_HOST);
        const int32_t ns = compact(&L, nl, may_count, may_fill);
        c->nsearched += ns;
        gmark(c, GT_MAY);
        if (ns == 0) break;
        if (!fresh((void **)&lsum, &lsumcap, (int64_t)ns * nv, sizeof(int64_t)) || !fresh((void **)&sp, &spcap, ns, sizeof(sb_k_fsplit)) ||
            !fresh((void **)&pdn, &pdncap, ns, sizeof(sb_fdev_node)) ||
            !fresh((void **)&plsum, &plsumcap, (int64_t)ns * nv, sizeof(int64_t)) || !fresh((void **)&ppick, &ppickcap, ns, sizeof(int32_t)))
            goto nomem;
        gmark(c, GT_HOST);
        if ((st = c->ops->split(c->dev, dn, ns, buf, sp, lsum)) != SB_OK) goto done;
        gmark(c, GT_SPLIT);
        /* the splits found: recorded, then the partition */
        L.ns = ns;
        L.sp = sp;
        L.lsum = lsum;
        L.pdn = pdn;
        L.plsum = plsum;
        L.ppick = ppick;
        const int32_t np = compact(&L, ns, rec_count, rec_fill);
        gmark(c, GT_REC);
        if (np == 0) break;
        if (!fresh((void **)&nleft, &nlcap, np, sizeof(int64_t))) goto nomem;
        gmark(c, GT_HOST);
        if ((st = c->ops->partition(c->dev, pdn, np, nleft)) != SB_OK ||
            (st = check_partition(c->ops, pdn, np, nleft)) != SB_OK)
            goto done;
        gmark(c, GT_PART);
        /* the children */
        gmark(c, GT_HOST);
        if (!fresh((void **)&next, &nextcap, 2 * (int64_t)np, sizeof(lnode)) || !room(c, 2 * (int64_t)np)) goto nomem;
        gmark(c, GT_ROOM);
        L.ns = np;
        L.nchunks = (np + L.chunk - 1) / L.chunk;
        L.next_lo = c->ng;
        L.nleft = nleft;
        L.next = next;
        gmark(c, GT_HOST);
        sb_parallel_for(L.nchunks, children, &L);
        gmark(c, GT_CH);
        lo = c->ng;
        c->ng += 2 * (int64_t)np;
        lnode *tmp = lv;
        int64_t tcap = lvcap;
        lv = next;
        lvcap = nextcap;
        next = tmp;
        nextcap = tcap;
        nl = 2 * np;
    }
    gmark(c, GT_HOST);
    c->nnodes += c->ng;
    st = emit_all(c, t0, nb, ntrees, ncopies, out);
    gmark(c, GT_EMIT);
    goto done;
nomem:
    st = oom();
done:
    sb_free(lv);
    sb_free(next);
    sb_free(dn);
    sb_free(pdn);
    sb_free(buf);
    sb_free(count);
    sb_free(nleft);
    sb_free(lsum);
    sb_free(plsum);
    sb_free(sp);
    sb_free(pick);
    sb_free(ppick);
    sb_free(cnt);
    return st;
}

sb_status sb_forest_grow_dev(const char *device, const sb_fdev_setup *setup, const sb_bins *bins, int32_t first,
                             int32_t ntrees, int32_t ncopies, float min_weight_fraction_leaf, sb_tree *trees) {
    const sb_fdev_ops *ops;
    sb_fdev_setup s2 = *setup; /* the caller's, with the device layer's kind */
    sb_status st = sb_device_parse(device, &s2.device);
    if (st == SB_OK) st = sb_fdev_find(s2.device, &ops);
    if (st != SB_OK) return st;
    setup = &s2;
    gctx c;
    memset(&c, 0, sizeof c);
    c.ops = ops;
    c.s = setup;
    c.bins = bins;
    c.nv = setup->rules.nv;
    c.min_wf = min_weight_fraction_leaf;
    const char *tv = getenv("SAMEBITS_FOREST_TIMING");
    c.timing = tv && tv[0] == '1';
    const char *lc = getenv("SAMEBITS_FOREST_LEVEL_CHUNK");
    c.lchunk = lc && atoi(lc) > 0 ? atoi(lc) : LCHUNK_DEFAULT;
    if ((st = ops->open(setup, &c.dev)) != SB_OK) return st;
    /* trees a batch: as many as the opened device's positions hold (at least
     * one), or SAMEBITS_FOREST_BATCH_TREES (tests: the batch size changes no bit) */
    const int64_t positions = ops->positions ? ops->positions(c.dev) : ops->batch_positions;
    int64_t per = positions / (setup->n > 0 ? setup->n : 1);
    const char *env = getenv("SAMEBITS_FOREST_BATCH_TREES");
    if (env && atoi(env) > 0) per = atoi(env);
    const int32_t batch = per < 1 ? 1 : per > ntrees - first ? ntrees - first : (int32_t)per;
    c.tree_nodes = sb_calloc((size_t)batch, sizeof(int32_t));
    c.rules = sb_calloc((size_t)batch, sizeof(sb_k_forest_rules));
    if (!c.tree_nodes || !c.rules) {
        sb_free(c.tree_nodes);
        sb_free(c.rules);
        ops->close(c.dev);
        return oom();
    }
    if (st == SB_OK)
        for (int32_t t0 = first; t0 < ntrees && st == SB_OK; t0 += batch)
            st = grow_batch(&c, t0, ntrees - t0 < batch ? ntrees - t0 : batch, ntrees, ncopies, trees);
    ops->close(c.dev);
    if (c.timing) {
        for (int k = 0; k < GT_N; k++) fprintf(stderr, "forest grower: %-14s %8.3f s\n", k_gtnames[k], c.tsec[k]);
        fprintf(stderr, "forest grower: %lld nodes in %d trees, %lld searched for a split\n", (long long)c.nnodes,
                (int)ntrees, (long long)c.nsearched);
    }
    sb_free(c.tree_nodes);
    sb_free(c.rules);
    for (int64_t b = 0; b < c.nblk; b++) {
        sb_free(c.gblk[b]);
        sb_free(c.pblk[b]);
    }
    sb_free(c.gblk);
    sb_free(c.pblk);
    return st;
}

/* ---- isolation forest ---- */

/* A node of an isolation tree on the device grower: children as in gnode, its
 * depth and rows (the leaf value's inputs) and its split. */
typedef struct inode {
    int32_t feature, bin, left, right, depth;
    int64_t size;
} inode;

static int32_t inode_left(const void *g, int32_t x) { return ((const inode *)g)[x].left; }

/* Isolation tree i of the batch (nodes g[0, nn)) as model tree t, in
 * isolation.c's node order (forest.c's: pop, children take the next ids,
 * push right then left), leaves valued by sb_k_iforest_leaf. */
static sb_status iso_emit(const inode *g, int32_t nn, const sb_bins *bins, int32_t ntrees, float cpsi, sb_tree *out) {
    int32_t *id = sb_malloc(sizeof(int32_t) * (size_t)nn), *stack = sb_malloc(sizeof(int32_t) * (size_t)nn);
    if (!id || !stack || !(out->nodes = sb_calloc((size_t)nn, sizeof(sb_tree_node)))) {
        sb_free(id);
        sb_free(stack);
        return oom();
    }
    dfs_number(0, inode_left, g, id, NULL, stack);
    out->nnodes = nn;
    for (int32_t j = 0; j < nn; j++) {
        const inode *x = &g[j];
        sb_tree_node *d = &out->nodes[id[j]];
        d->feature = x->feature;
        d->count = x->size;
        if (x->feature >= 0) {
            d->left = id[x->left];
            d->right = id[x->right];
            d->default_left = 1;
            /* bin 0 (missing) has no edge: NaN left, every value right (isolation.c) */
            d->threshold = x->bin == 0 ? sb_u2f(0xFF800000u) : bins->upper[bins->offset[x->feature] + x->bin - 1];
        } else {
            d->left = d->right = -1;
            d->value = sb_k_iforest_leaf(x->depth, x->size, ntrees, cpsi);
        }
    }
    sb_free(id);
    sb_free(stack);
    return SB_OK;
}

sb_status sb_iforest_grow_dev(const char *device, const sb_fdev_setup *setup, const sb_bins *bins, int32_t first,
                              int32_t ntrees, int32_t max_depth, float cpsi, const sb_iso_wdraw *wd, sb_tree *trees) {
    const sb_fdev_ops *ops;
    sb_fdev_setup s2 = *setup; /* the caller's, with the device layer's kind */
    sb_status st = sb_device_parse(device, &s2.device);
    if (st == SB_OK) st = sb_fdev_find(s2.device, &ops);
    if (st != SB_OK) return st;
    setup = &s2;
    if (!ops->iso_begin || !ops->iso_split)
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "device '%s' has no isolation forest yet", device);
    const int64_t psi = setup->psi;
    /* trees a batch: as many as the device's positions hold and the host's
     * node lists (about 80 bytes a position) keep within 2^22 positions */
    /* (a GPU device's positions, ops->positions, are at least 2^20 and hold
     * 2^22 isolation positions easily: 2^22 is the bound there) */
    int64_t per = (ops->positions ? INT64_C(1) << 22 : ops->batch_positions) / (psi > 0 ? psi : 1);
    if (per > (INT64_C(1) << 22) / (psi > 0 ? psi : 1)) per = (INT64_C(1) << 22) / (psi > 0 ? psi : 1);
    const char *env = getenv("SAMEBITS_FOREST_BATCH_TREES");
    if (env && atoi(env) > 0) per = atoi(env);
    const int32_t batch = per < 1 ? 1 : per > ntrees - first ? ntrees - first : (int32_t)per;
    /* a tree has at most 2 psi - 1 nodes; a level at most psi per tree */
    const int64_t maxn = 2 * psi;
    inode *g = sb_malloc(sizeof(inode) * (size_t)batch * (size_t)maxn);
    int32_t *nn = sb_malloc(sizeof(int32_t) * (size_t)batch);
    int32_t *lv = sb_malloc(sizeof(int32_t) * 2 * (size_t)batch * (size_t)psi); /* (tree, node) of a level */
    int32_t *nx = sb_malloc(sizeof(int32_t) * 2 * (size_t)batch * (size_t)psi);
    sb_fdev_node *dn = sb_malloc(sizeof(sb_fdev_node) * (size_t)batch * (size_t)psi);
    sb_fdev_node *pn = sb_malloc(sizeof(sb_fdev_node) * (size_t)batch * (size_t)psi); /* the level's rows and keys */
    sb_fdev_node *cn = sb_malloc(sizeof(sb_fdev_node) * (size_t)batch * (size_t)psi); /* the next level's */
    sb_k_fsplit *sp = sb_malloc(sizeof(sb_k_fsplit) * (size_t)batch * (size_t)psi);
    int64_t *nleft = sb_malloc(sizeof(int64_t) * (size_t)batch * (size_t)psi);
    int32_t *pick = sb_malloc(sizeof(int32_t) * (size_t)batch * (size_t)psi);
    /* weighted: the batch's subsamples drawn here, isolation.c's draws by the
     * same function (an exact integer draw: the host's is every device's) */
    const int weighted = wd && wd->fen;
    int32_t *wrows = weighted ? sb_malloc(sizeof(int32_t) * (size_t)batch * (size_t)psi) : NULL;
    uint64_t *wscratch = weighted ? sb_malloc(sizeof(uint64_t) * (size_t)(setup->n + 1)) : NULL;
    sb_fdev *dev = NULL;
    if (!g || !nn || !lv || !nx || !dn || !pn || !cn || !sp || !nleft || !pick || (weighted && (!wrows || !wscratch)))
        st = oom();
    if (st == SB_OK && weighted) memcpy(wscratch, wd->fen, sizeof(uint64_t) * (size_t)(setup->n + 1));
    if (st == SB_OK) st = ops->open(setup, &dev);
    for (int32_t t0 = first; t0 < ntrees && st == SB_OK; t0 += batch) {
        const int32_t nb = ntrees - t0 < batch ? ntrees - t0 : batch;
        for (int32_t i = 0; weighted && i < nb; i++)
            sb_iso_wdraw_tree(wd, setup->seed, t0 + i, (int32_t)psi, wscratch, wrows + (int64_t)i * psi);
        if ((st = ops->iso_begin(dev, t0, nb, wrows)) != SB_OK) break;
        /* the level: (tree, node) pairs; a node's rows and key in pn, by level slot */
        int32_t nl = nb;
        for (int32_t i = 0; i < nb; i++) {
            inode *x = &g[(int64_t)i * maxn];
            memset(x, 0, sizeof *x);
            x->feature = x->left = x->right = -1;
            x->size = psi;
            nn[i] = 1;
            lv[2 * i] = i;
            lv[2 * i + 1] = 0;
            memset(&pn[i], 0, sizeof pn[i]);
            pn[i].begin = (int64_t)i * psi;
            pn[i].end = (int64_t)(i + 1) * psi;
            pn[i].key = sb_k_forest_root_key(t0 + i);
        }
        while (nl > 0 && st == SB_OK) {
            /* the nodes that may split: not at the height limit, more than one row */
            int32_t ns = 0;
            for (int32_t j = 0; j < nl; j++) {
                const inode *x = &g[(int64_t)lv[2 * j] * maxn + lv[2 * j + 1]];
                if (x->depth < max_depth && x->size > 1) {
                    dn[ns] = pn[j];
                    pick[ns++] = j;
                }
            }
            if (ns == 0) break;
            if ((st = ops->iso_split(dev, dn, ns, sp)) != SB_OK) break;
            int32_t np = 0;
            for (int32_t j = 0; j < ns; j++) {
                if (!sp[j].valid) continue; /* every feature constant: a leaf */
                dn[np] = dn[j];
                dn[np].feature = sp[j].feature;
                dn[np].bin = sp[j].bin;
                dn[np].dl = 1;
                sp[np] = sp[j];
                pick[np++] = pick[j];
            }
            if (np == 0) break;
            if ((st = ops->partition(dev, dn, np, nleft)) != SB_OK || (st = check_partition(ops, dn, np, nleft)) != SB_OK)
                break;
            int32_t nn2 = 0;
            for (int32_t j = 0; j < np; j++) {
                const int32_t i = lv[2 * pick[j]], node = lv[2 * pick[j] + 1];
                inode *base = &g[(int64_t)i * maxn];
                const int32_t lc = nn[i]++, rc = nn[i]++;
                inode *x = &base[node];
                x->feature = sp[j].feature;
                x->bin = sp[j].bin;
                x->left = lc;
                x->right = rc;
                for (int side = 0; side < 2; side++) {
                    inode *y = &base[side ? rc : lc];
                    y->feature = y->left = y->right = -1;
                    y->bin = 0;
                    y->depth = x->depth + 1;
                    y->size = side ? dn[j].end - dn[j].begin - nleft[j] : nleft[j];
                    nx[2 * nn2] = i;
                    nx[2 * nn2 + 1] = side ? rc : lc;
                    sb_fdev_node *q = &cn[nn2];
                    memset(q, 0, sizeof *q);
                    q->begin = side ? dn[j].begin + nleft[j] : dn[j].begin;
                    q->end = side ? dn[j].end : dn[j].begin + nleft[j];
#ifdef SB_SABOTAGE_FOREST_KEYS
                    /* Separating arm: keyed by creation order (tree, node index), not path */
                    q->key = ((uint64_t)(uint32_t)(t0 + i) << 32) | (uint32_t)(side ? rc : lc);
#else
                    q->key = sb_k_forest_child_key(dn[j].key, side);
#endif
                    nn2++;
                }
            }
            memcpy(pn, cn, sizeof(sb_fdev_node) * (size_t)nn2);
            memcpy(lv, nx, sizeof(int32_t) * 2 * (size_t)nn2);
            nl = nn2;
        }
        for (int32_t i = 0; i < nb && st == SB_OK; i++)
            st = iso_emit(&g[(int64_t)i * maxn], nn[i], bins, ntrees, cpsi, &trees[t0 + i]);
    }
    ops->close(dev);
    sb_free(g);
    sb_free(nn);
    sb_free(lv);
    sb_free(nx);
    sb_free(dn);
    sb_free(pn);
    sb_free(cn);
    sb_free(sp);
    sb_free(nleft);
    sb_free(pick);
    sb_free(wrows);
    sb_free(wscratch);
    return st;
}
