/*
 * forest_dev.c: random forest and Extra Trees trees grown level by level on a
 * forest device (src/backends/fdev.h), a batch of trees at a time: every
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
 */
#include "forest_dev.h"
#include <stdlib.h>
#include <string.h>

typedef struct gnode {
    int32_t feature, bin, dl, left, right; /* children: indices in the tree's list, -1 for a leaf */
    float gain;
    int64_t w;
    int64_t sums; /* its nv sums at pool + sums */
} gnode;

typedef struct gtree {
    gnode *nodes;
    int32_t n, cap;
} gtree;

/* A node of the current level: tree i of the batch, its index there, its
 * depth, and where its rows are on the device. */
typedef struct lnode {
    int32_t tree, node, depth, pad_;
    sb_fdev_node dev;
} lnode;

typedef struct gctx {
    const sb_fdev_ops *ops;
    sb_fdev *dev;
    const sb_fdev_setup *s;
    const sb_bins *bins;
    int32_t nv;
    float min_wf;       /* min_weight_fraction_leaf */
    gtree *trees;       /* the batch's */
    sb_k_forest_rules *rules; /* the batch's trees': the setup's with each tree's weight scale and min_w */
    int64_t *pool;      /* every node's sums */
    int64_t npool, poolcap;
} gctx;

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

/* A new node of tree t whose sums go to the pool later; its index, or -1. */
static int32_t new_node(gctx *c, int32_t t) {
    gtree *g = &c->trees[t];
    int64_t cap = g->cap;
    if (!grow((void **)&g->nodes, &cap, (int64_t)g->n + 1, sizeof(gnode))) return -1;
    g->cap = (int32_t)cap;
    if (!grow((void **)&c->pool, &c->poolcap, c->npool + c->nv, sizeof(int64_t))) return -1;
    gnode *x = &g->nodes[g->n];
    memset(x, 0, sizeof *x);
    x->feature = -1;
    x->left = x->right = -1;
    x->sums = c->npool;
    c->npool += c->nv;
    return g->n++;
}

/* The rows of sums v counted with their bootstrap multiplicity (a node's
 * count in the model, as forest.c's): weighted, the sums' last value. */
static int64_t rows_of(const sb_k_forest_rules *r, const int64_t *v) { return sb_k_forest_part_count(r, v, v, v, 0, 0); }

/* The sums of the roots, into the pool, their row counts, and each tree's
 * min_w (a share of its root's weight). */
static sb_status level_sums(gctx *c, lnode *lv, int32_t nl, sb_fdev_node *dn, int64_t *buf) {
    for (int32_t i = 0; i < nl; i++) dn[i] = lv[i].dev;
    sb_status st = c->ops->sums(c->dev, dn, nl, buf);
    if (st != SB_OK) return st;
    for (int32_t i = 0; i < nl; i++) {
        gnode *x = &c->trees[lv[i].tree].nodes[lv[i].node];
        memcpy(c->pool + x->sums, buf + (int64_t)i * c->nv, sizeof(int64_t) * (size_t)c->nv);
        x->w = rows_of(&c->s->rules, c->pool + x->sums);
        sb_k_forest_rules *r = &c->rules[lv[i].tree];
        r->min_w = sb_k_forest_min_w(r, c->min_wf, c->pool + x->sums);
        lv[i].dev.min_w = r->min_w;
    }
    return SB_OK;
}

/* Tree i of the batch as forest t's model trees, in forest.c's node order. */
static sb_status emit(gctx *c, int32_t i, int32_t t, int32_t ntrees, int32_t ncopies, sb_tree *out) {
    const gtree *g = &c->trees[i];
    int32_t *id = sb_malloc(sizeof(int32_t) * (size_t)g->n), *stack = sb_malloc(sizeof(int32_t) * (size_t)g->n);
    if (!id || !stack) {
        sb_free(id);
        sb_free(stack);
        return oom();
    }
    /* forest.c's numbering: pop a node; its children get the next two ids;
     * push the right child, then the left */
    int32_t next = 1, sp = 0;
    id[0] = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        const gnode *x = &g->nodes[stack[--sp]];
        if (x->left < 0) continue;
        id[x->left] = next++;
        id[x->right] = next++;
        stack[sp++] = x->right;
        stack[sp++] = x->left;
    }
    sb_status st = SB_OK;
    for (int32_t k = 0; k < ncopies && st == SB_OK; k++) {
        sb_tree *tr = &out[(int64_t)t * ncopies + k];
        if (!(tr->nodes = sb_calloc((size_t)g->n, sizeof(sb_tree_node)))) {
            st = oom();
            break;
        }
        tr->nnodes = g->n;
        for (int32_t j = 0; j < g->n; j++) {
            const gnode *x = &g->nodes[j];
            sb_tree_node *d = &tr->nodes[id[j]];
            d->feature = x->feature;
            d->count = x->w;
            d->default_left = (uint8_t)x->dl;
            if (x->feature >= 0) {
                d->left = id[x->left];
                d->right = id[x->right];
                d->threshold = c->bins->upper[c->bins->offset[x->feature] + x->bin - 1];
                d->gain = x->gain;
            } else {
                d->left = d->right = -1;
                d->value = sb_k_forest_leaf_value(&c->s->rules, c->pool + x->sums, k, ntrees);
            }
        }
    }
    sb_free(id);
    sb_free(stack);
    return st;
}

/* The batch's trees emitted in parallel, one task per tree (each writes only
 * its own model trees; the numbering and values do not depend on the schedule). */
typedef struct emit_job {
    gctx *c;
    int32_t t0, ntrees, ncopies;
    sb_tree *out;
    sb_status *st;
} emit_job;

static void emit_task(void *ctx, int64_t i) {
    emit_job *j = ctx;
    j->st[i] = emit(j->c, (int32_t)i, j->t0 + (int32_t)i, j->ntrees, j->ncopies, j->out);
}

static sb_status emit_all(gctx *c, int32_t t0, int32_t nb, int32_t ntrees, int32_t ncopies, sb_tree *out) {
    sb_status *st = sb_malloc(sizeof(sb_status) * (size_t)nb);
    if (!st) return oom();
    emit_job j = {c, t0, ntrees, ncopies, out, st};
    sb_parallel_for(nb, emit_task, &j);
    sb_status r = SB_OK;
    for (int32_t i = 0; i < nb && r == SB_OK; i++)
        if (st[i] != SB_OK) r = st[i] == SB_ERR_OUT_OF_MEMORY ? oom() : sb_fail(st[i], "forest device grower: tree %d", (int)(t0 + i));
    sb_free(st);
    return r;
}

/* Trees [t0, t0 + nb) on the device, level by level. */
static sb_status grow_batch(gctx *c, int32_t t0, int32_t nb, int32_t ntrees, int32_t ncopies, sb_tree *out) {
    const int32_t nv = c->nv;
    const sb_fdev_setup *s = c->s;
    sb_status st = SB_OK;
    lnode *lv = NULL, *next = NULL;
    sb_fdev_node *dn = NULL;
    int64_t *buf = NULL, *count = NULL, *nleft = NULL, *lsum = NULL;
    sb_k_fsplit *sp = NULL;
    int32_t *pick = NULL;
    int64_t lvcap = 0, nextcap = 0, dncap = 0, bufcap = 0, nlcap = 0, spcap = 0, pickcap = 0, lsumcap = 0;
    c->npool = 0;
    memset(c->trees, 0, sizeof(gtree) * (size_t)nb);
    int32_t *wexp = sb_malloc(sizeof(int32_t) * (size_t)nb);
    if (!(count = sb_malloc(sizeof(int64_t) * (size_t)nb)) || !wexp) {
        sb_free(wexp);
        sb_free(count);
        return oom();
    }
    st = c->ops->begin(c->dev, t0, nb, count, wexp);
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
    /* the roots */
    if (!grow((void **)&lv, &lvcap, nb, sizeof(lnode))) goto nomem;
    int32_t nl = 0;
    int64_t at = 0;
    for (int32_t i = 0; i < nb; i++) {
        lnode *x = &lv[nl++];
        memset(x, 0, sizeof *x);
        x->tree = i;
        if ((x->node = new_node(c, i)) < 0) goto nomem;
        x->dev.begin = at;
        x->dev.end = at + count[i];
        x->dev.key = sb_k_forest_root_key(t0 + i);
        at += count[i];
    }
    if (!grow((void **)&dn, &dncap, nl, sizeof(sb_fdev_node)) || !grow((void **)&buf, &bufcap, (int64_t)nl * nv, sizeof(int64_t)))
        goto nomem;
    if ((st = level_sums(c, lv, nl, dn, buf)) != SB_OK) goto done;
    while (nl > 0) {
        /* the nodes that may split, and their sums */
        int32_t ns = 0;
        if (!grow((void **)&pick, &pickcap, nl, sizeof(int32_t)) || !grow((void **)&dn, &dncap, nl, sizeof(sb_fdev_node)) ||
            !grow((void **)&buf, &bufcap, (int64_t)nl * nv, sizeof(int64_t)) || !grow((void **)&sp, &spcap, nl, sizeof(sb_k_fsplit)))
            goto nomem;
        for (int32_t i = 0; i < nl; i++) {
            const gnode *x = &c->trees[lv[i].tree].nodes[lv[i].node];
            if (!sb_k_forest_may_split(&s->rules, c->pool + x->sums, s->min_samples_split, lv[i].depth, s->max_depth))
                continue;
            dn[ns] = lv[i].dev;
            memcpy(buf + (int64_t)ns * nv, c->pool + x->sums, sizeof(int64_t) * (size_t)nv);
            pick[ns++] = i;
        }
        if (ns == 0) break;
        if (!grow((void **)&lsum, &lsumcap, (int64_t)ns * nv, sizeof(int64_t))) goto nomem;
        if ((st = c->ops->split(c->dev, dn, ns, buf, sp, lsum)) != SB_OK) goto done;
        /* the splits found: the partition, then the children */
        int32_t np = 0;
        for (int32_t j = 0; j < ns; j++) {
            if (!sp[j].valid) continue;
            const lnode *q = &lv[pick[j]];
            gnode *x = &c->trees[q->tree].nodes[q->node];
            x->feature = sp[j].feature;
            x->bin = sp[j].bin;
            x->dl = sp[j].dl;
            x->gain = sb_k_forest_gain(&c->rules[q->tree], sp[j].score, c->pool + x->sums);
            dn[np] = q->dev;
            dn[np].feature = sp[j].feature;
            dn[np].bin = sp[j].bin;
            dn[np].dl = sp[j].dl;
            if (np != j) memmove(lsum + (int64_t)np * nv, lsum + (int64_t)j * nv, sizeof(int64_t) * (size_t)nv);
            pick[np++] = pick[j];
        }
        if (np == 0) break;
        if (!grow((void **)&nleft, &nlcap, np, sizeof(int64_t))) goto nomem;
        if ((st = c->ops->partition(c->dev, dn, np, nleft)) != SB_OK) goto done;
        if (!grow((void **)&next, &nextcap, 2 * (int64_t)np, sizeof(lnode))) goto nomem;
        int32_t nn = 0;
        for (int32_t j = 0; j < np; j++) {
            const lnode q = lv[pick[j]];
            const int32_t lc = new_node(c, q.tree), rc = new_node(c, q.tree);
            if (lc < 0 || rc < 0) goto nomem;
            gnode *x = &c->trees[q.tree].nodes[q.node];
            x->left = lc;
            x->right = rc;
            /* the children's sums: the left's from the split, the right's the rest */
            int64_t *ps = c->pool + x->sums, *ls = c->pool + c->trees[q.tree].nodes[lc].sums,
                    *rs = c->pool + c->trees[q.tree].nodes[rc].sums;
            for (int32_t k = 0; k < nv; k++) {
                ls[k] = lsum[(int64_t)j * nv + k];
                rs[k] = ps[k] - ls[k];
            }
            c->trees[q.tree].nodes[lc].w = rows_of(&s->rules, ls);
            c->trees[q.tree].nodes[rc].w = rows_of(&s->rules, rs);
            for (int side = 0; side < 2; side++) {
                lnode *y = &next[nn++];
                memset(y, 0, sizeof *y);
                y->tree = q.tree;
                y->node = side ? rc : lc;
                y->depth = q.depth + 1;
                y->dev.begin = side ? q.dev.begin + nleft[j] : q.dev.begin;
                y->dev.end = side ? q.dev.end : q.dev.begin + nleft[j];
                y->dev.min_w = q.dev.min_w;
#ifdef SB_SABOTAGE_FOREST_KEYS
                /* Separating arm: the node keyed by the order this grower makes
                 * it (tree, index in level order), not by its path. */
                y->dev.key = ((uint64_t)(uint32_t)(t0 + q.tree) << 32) | (uint32_t)y->node;
#else
                y->dev.key = sb_k_forest_child_key(q.dev.key, side);
#endif
            }
        }
        lnode *tmp = lv;
        int64_t tcap = lvcap;
        lv = next;
        lvcap = nextcap;
        next = tmp;
        nextcap = tcap;
        nl = nn;
    }
    st = emit_all(c, t0, nb, ntrees, ncopies, out);
    goto done;
nomem:
    st = oom();
done:
    for (int32_t i = 0; i < nb; i++) {
        sb_free(c->trees[i].nodes);
        c->trees[i].nodes = NULL;
    }
    sb_free(lv);
    sb_free(next);
    sb_free(dn);
    sb_free(buf);
    sb_free(count);
    sb_free(nleft);
    sb_free(lsum);
    sb_free(sp);
    sb_free(pick);
    return st;
}

sb_status sb_forest_grow_dev(const char *device, const sb_fdev_setup *setup, const sb_bins *bins, int32_t ntrees,
                             int32_t ncopies, float min_weight_fraction_leaf, sb_tree *trees) {
    const sb_fdev_ops *ops;
    sb_status st = sb_fdev_find(device, &ops);
    if (st != SB_OK) return st;
    gctx c;
    memset(&c, 0, sizeof c);
    c.ops = ops;
    c.s = setup;
    c.bins = bins;
    c.nv = setup->rules.nv;
    c.min_wf = min_weight_fraction_leaf;
    /* trees a batch: as many as the device's positions hold (at least one),
     * or SAMEBITS_FOREST_BATCH_TREES (tests: the batch size changes no bit) */
    int64_t per = ops->batch_positions / (setup->n > 0 ? setup->n : 1);
    const char *env = getenv("SAMEBITS_FOREST_BATCH_TREES");
    if (env && atoi(env) > 0) per = atoi(env);
    const int32_t batch = per < 1 ? 1 : per > ntrees ? ntrees : (int32_t)per;
    c.trees = sb_calloc((size_t)batch, sizeof(gtree));
    c.rules = sb_calloc((size_t)batch, sizeof(sb_k_forest_rules));
    if (!c.trees || !c.rules) {
        sb_free(c.trees);
        sb_free(c.rules);
        return oom();
    }
    if ((st = ops->open(setup, &c.dev)) == SB_OK)
        for (int32_t t0 = 0; t0 < ntrees && st == SB_OK; t0 += batch)
            st = grow_batch(&c, t0, ntrees - t0 < batch ? ntrees - t0 : batch, ntrees, ncopies, trees);
    ops->close(c.dev);
    sb_free(c.trees);
    sb_free(c.rules);
    sb_free(c.pool);
    return st;
}

/* ---- isolation forest ---- */

/* A node of an isolation tree on the device grower: children as in gnode, its
 * depth and rows (the leaf value's inputs) and its split. */
typedef struct inode {
    int32_t feature, bin, left, right, depth;
    int64_t size;
} inode;

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
    int32_t next = 1, sp = 0;
    id[0] = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        const inode *x = &g[stack[--sp]];
        if (x->left < 0) continue;
        id[x->left] = next++;
        id[x->right] = next++;
        stack[sp++] = x->right;
        stack[sp++] = x->left;
    }
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

sb_status sb_iforest_grow_dev(const char *device, const sb_fdev_setup *setup, const sb_bins *bins, int32_t ntrees,
                              int32_t max_depth, float cpsi, sb_tree *trees) {
    const sb_fdev_ops *ops;
    sb_status st = sb_fdev_find(device, &ops);
    if (st != SB_OK) return st;
    if (!ops->iso_begin || !ops->iso_split)
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "device '%s' has no isolation forest yet", device);
    const int64_t psi = setup->psi;
    /* trees a batch: as many as the device's positions hold and the host's
     * node lists (about 80 bytes a position) keep within 2^22 positions */
    int64_t per = ops->batch_positions / (psi > 0 ? psi : 1);
    if (per > (INT64_C(1) << 22) / (psi > 0 ? psi : 1)) per = (INT64_C(1) << 22) / (psi > 0 ? psi : 1);
    const char *env = getenv("SAMEBITS_FOREST_BATCH_TREES");
    if (env && atoi(env) > 0) per = atoi(env);
    const int32_t batch = per < 1 ? 1 : per > ntrees ? ntrees : (int32_t)per;
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
    sb_fdev *dev = NULL;
    if (!g || !nn || !lv || !nx || !dn || !pn || !cn || !sp || !nleft || !pick) st = oom();
    if (st == SB_OK) st = ops->open(setup, &dev);
    for (int32_t t0 = 0; t0 < ntrees && st == SB_OK; t0 += batch) {
        const int32_t nb = ntrees - t0 < batch ? ntrees - t0 : batch;
        if ((st = ops->iso_begin(dev, t0, nb)) != SB_OK) break;
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
            if ((st = ops->partition(dev, dn, np, nleft)) != SB_OK) break;
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
    return st;
}
