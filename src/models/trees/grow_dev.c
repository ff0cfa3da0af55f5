/*
 * grow_dev.c: one tree grown on a tree device (src/models/trees/tdev.h), in
 * batches of splits. The host keeps the tree and every decision; the device
 * partitions rows, builds and subtracts histograms and searches splits with
 * the kernel bodies of src/kernels/tree.h.
 *
 * The result is the tree the CPU grower (grow.c) builds, node for node:
 * - leaf-wise growth splits one leaf per batch, the one of largest gain (ties:
 *   the smaller node id), exactly as the CPU grower picks;
 * - depth-wise growth splits, per batch, every splittable leaf of the current
 *   depth in node-id order (at most max_leaves - leaves of them). The CPU
 *   grower splits the splittable leaf of smallest id one at a time, and a
 *   node's children always get larger ids than every node of its depth, so it
 *   visits the same leaves in the same order and numbers the children alike.
 * Histograms are exact integer sums, so the partition's row order, the device's
 * thread schedule and which child is built or subtracted change no bit.
 * A child that may not be split (depth or size) gets no histogram at all.
 */
#include "grow_dev.h"
#include <stdlib.h>
#include <string.h>

typedef struct dleaf {
    int32_t node, depth, slot; /* slot: its histogram on the device, -1 when none */
    int64_t begin, end;        /* its rows on this device: rows[begin, end) */
    int64_t G, H, C;           /* sums and count over every rank (one process: its own) */
    sb_k_split best;
    sb_node_cons nc; /* the per-node rules' state (cons.h) when they are on */
    uint32_t catbits[8]; /* best on a categorical feature: the bins it sends left */
} dleaf;

typedef struct dctx {
    const sb_tdev_ops *ops;
    sb_tdev *dev;
    const sb_grow_params *p;
    sb_node_list t; /* the tree (grow.c keeps its nodes the same way) */
    /* histogram slots: free[0..nfree) are unused, cap_slots reserved on the device */
    int32_t *free_slots, nfree, cap_slots, used_slots;
    /* per-node rules or categorical features: splits chosen on the host from
     * each node's histogram */
    int cons_on, host_search;
    const uint8_t *catf;
    const sb_k_cat_rules *cat;
    sb_k_hbin *hbuf; /* total entries */
    const sb_bins *bins;
    const int32_t *hoff;
    const uint8_t *mask;
    int32_t nf, total;
    /* data-parallel growth (sb_tree_grow_dev's reduce), or NULL */
    void (*reduce)(void *ctx, int64_t *v, int64_t n);
    void (*dev_sum)(void *ctx, void *dptr, int64_t n); /* the histograms' sum on the device, or NULL */
    void *rctx;
} dctx;

static sb_status oom(void) { return sb_fail(SB_ERR_OUT_OF_MEMORY, "tree: out of memory"); }

/* A free histogram slot, reserving more on the device when none is left. */
static sb_status take_slot(dctx *c, int32_t *slot) {
    if (c->nfree == 0) {
        int32_t cap = c->cap_slots ? c->cap_slots * 2 : 16;
        int32_t *f = sb_realloc(c->free_slots, sizeof(int32_t) * (size_t)cap);
        if (!f) return oom();
        c->free_slots = f;
        sb_status st = c->ops->reserve(c->dev, cap);
        if (st != SB_OK) return st;
        for (int32_t s = cap - 1; s >= c->cap_slots; s--) c->free_slots[c->nfree++] = s;
        c->cap_slots = cap;
    }
    *slot = c->free_slots[--c->nfree];
    return SB_OK;
}

static void give_slot(dctx *c, int32_t *slot) {
    if (*slot >= 0) c->free_slots[c->nfree++] = *slot;
    *slot = -1;
}

typedef struct nidx {
    int32_t node, idx;
} nidx;

static int by_node(const void *a, const void *b) {
    const nidx *x = a, *y = b;
    return (x->node > y->node) - (x->node < y->node);
}

static int may_split(const dctx *c, const dleaf *L) {
    return sb_k_node_may_split(L->depth, L->C, c->p->max_depth, c->p->min_samples_leaf);
}

/* X's best split on the host from the node's histogram in c->hbuf. */
static sb_status search_hbuf(dctx *c, dleaf *X, const sb_k_split_rules *r) {
    if (!c->cons_on) {
        sb_grow_best_plain(c->bins, c->hoff, c->hbuf, c->nf, c->mask, c->catf, c->cat, X->G, X->H, X->C, r, &X->best,
                           X->catbits);
        return SB_OK;
    }
    if (!sb_cons_best(c->p->cons, &X->nc, c->hbuf, c->hoff, c->bins->nbins, c->nf, c->mask, c->catf, c->cat, X->G,
                      X->H, X->C, r, &X->best, X->catbits))
        return oom();
    return SB_OK;
}

/* Under per-node rules, with categorical features or over ranks: X's best
 * split on the host (sb_cons_best, or the plain search with its category
 * scans) from its histogram, read back from the device whole (exact
 * integers: the choice is the CPU grower's, bit for bit). Over ranks the
 * device holds this rank's histogram: it is summed over the ranks (exact
 * int64: on the host, or on the device with dev_sum) first, and the search
 * reads the global one. */
static sb_status read_global(dctx *c, int32_t slot) {
    if (c->dev_sum) return c->ops->reduce_hist(c->dev, slot, c->hbuf, c->dev_sum, c->rctx);
    sb_status st = c->ops->read_hist(c->dev, slot, 0, c->total, c->hbuf);
    if (st == SB_OK && c->reduce) c->reduce(c->rctx, &c->hbuf[0].g, 3 * (int64_t)c->total);
    return st;
}

static sb_status host_best(dctx *c, dleaf *X, const sb_k_split_rules *r) {
    sb_status st = read_global(c, X->slot);
    return st != SB_OK ? st : search_hbuf(c, X, r);
}

/* Over ranks: how many of this rank's rows of leaf P go left at split seg,
 * from P's histogram on the device (this rank's: the device's slots are never
 * overwritten by the global sums) on the split's feature, exactly. */
static sb_status local_left(dctx *c, const dleaf *P, const sb_tdev_seg *seg, int64_t *left) {
    const int32_t f = seg->feature, nb = c->bins->nbins[f] + 1;
    sb_status st = c->ops->read_hist(c->dev, P->slot, c->hoff[f], nb, c->hbuf);
    if (st != SB_OK) return st;
    int64_t k = 0;
    for (int32_t t = 0; t < nb; t++)
        if (sb_tdev_seg_left(seg, (uint32_t)t)) k += c->hbuf[t].c;
    *left = k;
    return SB_OK;
}

sb_status sb_tree_grow_dev(const sb_tdev_ops *ops, sb_tdev *dev, const sb_grow_params *p, const sb_bins *bins,
                           int32_t nf, const int32_t *hoff, int32_t total, float g_scale, float h_scale,
                           const uint8_t *mask, const uint8_t *catf, const sb_k_cat_rules *cat, int64_t nrows,
                           int want_root_hist, void (*reduce)(void *ctx, int64_t *v, int64_t n),
                           void (*dev_sum)(void *ctx, void *dptr, int64_t n), void *rctx, sb_grown *out) {
    memset(out, 0, sizeof *out);
    dctx c;
    memset(&c, 0, sizeof c);
    c.ops = ops;
    c.dev = dev;
    c.p = p;
    c.cons_on = sb_grow_cons_on(p->cons);
    c.t.bounded = c.cons_on && p->cons->monotone != NULL;
    c.catf = catf;
    c.cat = cat;
    c.reduce = reduce;
    c.dev_sum = reduce ? dev_sum : NULL;
    c.rctx = rctx;
    /* over ranks every search is the host's: it reads the global histogram
     * (the device keeps this rank's, which the partition counts need) */
    c.host_search = c.cons_on || catf != NULL || reduce != NULL;
    c.t.categorical = catf != NULL;
    c.t.cat_l2 = cat ? cat->cat_l2 : 0.0f;
    c.bins = bins;
    c.hoff = hoff;
    c.mask = mask;
    c.nf = nf;
    c.total = total;
    const sb_k_split_rules rules = {p->min_samples_leaf, p->min_child_weight, p->min_split_gain, p->reg_lambda,
                                    g_scale, h_scale, p->reg_alpha};
    sb_status st = SB_OK;
    int32_t max_open = p->max_leaves > 0 ? p->max_leaves : 1 << 16;
    if (p->depthwise && p->max_depth >= 0 && p->max_depth < 16 && max_open > (1 << p->max_depth))
        max_open = 1 << p->max_depth; /* a tree of depth d has at most 2^d leaves */
    dleaf *open = sb_calloc((size_t)max_open, sizeof(dleaf));
    /* per batch: parents, then their children (two each) */
    int32_t *batch = sb_malloc(sizeof(int32_t) * (size_t)max_open);
    nidx *order = sb_malloc(sizeof(nidx) * (size_t)max_open);
    sb_tdev_seg *segs = sb_malloc(sizeof(sb_tdev_seg) * (size_t)max_open);
    sb_tdev_hjob *jobs = sb_malloc(sizeof(sb_tdev_hjob) * (size_t)max_open);
    sb_tdev_sub *subs = sb_malloc(sizeof(sb_tdev_sub) * (size_t)max_open);
    sb_tdev_node *qn = sb_malloc(sizeof(sb_tdev_node) * 2 * (size_t)max_open);
    int32_t *qleaf = sb_malloc(sizeof(int32_t) * 2 * (size_t)max_open);
    sb_k_split *qbest = sb_malloc(sizeof(sb_k_split) * 2 * (size_t)max_open);
    sb_k_hbin *f0 = sb_malloc(sizeof(sb_k_hbin) * (SB_MAX_BIN + 2));
    if (c.host_search) c.hbuf = sb_malloc(sizeof(sb_k_hbin) * (size_t)(total > 0 ? total : 1));
    if (!open || !batch || !order || !segs || !jobs || !subs || !qn || !qleaf || !qbest || !f0 ||
        (c.host_search && !c.hbuf)) {
        st = oom();
        goto done;
    }
    if (nf < 1) {
        st = sb_fail(SB_ERR_INVALID_INPUT, "tree: no features");
        goto done;
    }
    if (c.dev_sum && !ops->reduce_hist) {
        st = sb_fail(SB_ERR_INTERNAL, "tree device %s cannot sum histograms on the device (a defect)", ops->name);
        goto done;
    }

    /* The root: its histogram, and its sums from the first usable feature's
     * bins (every row is in exactly one of them), exactly. Histograms cover
     * the usable features only (the others stay zero, as on the CPU). */
    int32_t f0i = 0;
    while (f0i < nf - 1 && mask && !mask[f0i]) f0i++;
    int32_t nopen = 0;
    dleaf *root = &open[nopen++];
    memset(root, 0, sizeof *root);
    root->end = nrows;
    root->C = nrows;
    if ((st = take_slot(&c, &root->slot)) != SB_OK) goto done;
    sb_tdev_hjob rj = {0, nrows, root->slot, 0};
    if ((st = ops->hist(dev, &rj, 1)) != SB_OK) goto done;
    if (reduce) { /* the root's histogram over every rank, its sums from it, the count summed */
        if ((st = read_global(&c, root->slot)) != SB_OK) goto done;
        memcpy(f0, c.hbuf + hoff[f0i], sizeof(sb_k_hbin) * (size_t)(bins->nbins[f0i] + 1));
        reduce(rctx, &root->C, 1);
    } else if ((st = ops->read_hist(dev, root->slot, hoff[f0i], bins->nbins[f0i] + 1, f0)) != SB_OK) {
        goto done;
    }
    for (int32_t t = 0; t <= bins->nbins[f0i]; t++) {
        root->G += f0[t].g;
        root->H += f0[t].h;
    }
    if (want_root_hist) {
        out->root_hist = sb_malloc(sizeof(sb_k_hbin) * (size_t)total);
        if (!out->root_hist) {
            st = oom();
            goto done;
        }
        if ((st = ops->read_hist(dev, root->slot, 0, total, (sb_k_hbin *)out->root_hist)) != SB_OK) goto done;
    }
    if ((st = sb_node_list_add(&c.t, root->G, root->H, root->C, &root->node)) != SB_OK) goto done;
    if (c.cons_on) sb_node_cons_root(p->cons, &root->nc);
    if (may_split(&c, root)) {
        sb_tdev_node q = {root->G, root->H, root->C, root->slot, 0};
        if (reduce) st = search_hbuf(&c, root, &rules); /* hbuf holds the global root histogram */
        else if (c.host_search) st = host_best(&c, root, &rules);
        else st = ops->best(dev, &q, 1, &rules, &root->best);
        if (st != SB_OK) goto done;
    }
    if (!root->best.valid) give_slot(&c, &root->slot);

    int32_t nleaves = 1;
    for (;;) {
        /* The batch: leaf indices into open[], in the order they are split. */
        int32_t nb = 0;
        if (p->depthwise) {
            int32_t room = p->max_leaves > 0 ? p->max_leaves - nleaves : max_open;
            /* the valid leaves in node-id order (open[] is not sorted by id) */
            for (int32_t i = 0; i < nopen; i++)
                if (open[i].best.valid) {
                    order[nb].node = open[i].node;
                    order[nb++].idx = i;
                }
            qsort(order, (size_t)nb, sizeof *order, by_node);
            if (nb > room) nb = room < 0 ? 0 : room;
            for (int32_t i = 0; i < nb; i++) batch[i] = order[i].idx;
        } else if (p->max_leaves <= 0 || nleaves < p->max_leaves) {
            int32_t k = -1;
            for (int32_t i = 0; i < nopen; i++) {
                if (!open[i].best.valid) continue;
                if (k < 0 || open[i].best.gain > open[k].best.gain ||
                    (open[i].best.gain == open[k].best.gain && open[i].node < open[k].node))
                    k = i;
            }
            if (k >= 0) batch[nb++] = k;
        }
        if (nb == 0) break;
        if (nopen + nb > max_open) {
            st = sb_fail(SB_ERR_LIMIT, "tree: more than %d open leaves", (int)max_open);
            goto done;
        }

        /* Children and their node ids, in batch order; the partition. */
        for (int32_t i = 0; i < nb; i++) {
            dleaf *P = &open[batch[i]];
            const sb_k_split *b = &P->best;
            dleaf L, R;
            memset(&L, 0, sizeof L);
            memset(&R, 0, sizeof R);
            L.G = b->lg; L.H = b->lh; L.C = b->lc;
            R.G = P->G - L.G; R.H = P->H - L.H; R.C = P->C - L.C;
            L.depth = R.depth = P->depth + 1;
            const int cat = catf && catf[b->feature];
            memset(&segs[i], 0, sizeof segs[i]);
            segs[i].begin = P->begin;
            segs[i].end = P->end;
            segs[i].feature = b->feature;
            segs[i].split_bin = b->bin;
            segs[i].default_left = b->default_left;
            if (cat) {
                segs[i].categorical = 1;
                memcpy(segs[i].cat, P->catbits, sizeof segs[i].cat);
            }
            int64_t nleft = L.C; /* this device's rows that go left: every row in one process */
            if (reduce && (st = local_left(&c, P, &segs[i], &nleft)) != SB_OK) goto done;
            L.begin = P->begin; L.end = P->begin + nleft;
            R.begin = L.end; R.end = P->end;
            L.slot = R.slot = -1;
            if ((st = sb_node_list_add(&c.t, L.G, L.H, L.C, &L.node)) != SB_OK) goto done;
            if ((st = sb_node_list_add(&c.t, R.G, R.H, R.C, &R.node)) != SB_OK) goto done;
            if (c.cons_on) {
                sb_node_cons nk[2];
                sb_node_cons_children(p->cons, &rules, &P->nc, b, P->G, P->H, nk);
                L.nc = nk[0];
                R.nc = nk[1];
                if (c.t.bounded) {
                    c.t.lo[L.node] = L.nc.lo;
                    c.t.hi[L.node] = L.nc.hi;
                    c.t.lo[R.node] = R.nc.lo;
                    c.t.hi[R.node] = R.nc.hi;
                }
            }
            sb_tree_node *pn = &c.t.nodes[P->node];
            pn->feature = b->feature;
            pn->threshold = cat ? 0.0f : bins->upper[bins->offset[b->feature] + b->bin - 1];
            pn->default_left = cat ? 0 : (uint8_t)b->default_left;
            pn->categorical = (uint8_t)cat;
            pn->left = L.node;
            pn->right = R.node;
            pn->gain = b->gain;
            c.t.split_bin[P->node] = b->bin;
            if (cat) {
                memcpy(c.t.cat_bits + 8 * (size_t)P->node, P->catbits, sizeof P->catbits);
                c.t.cat_reg[L.node] = c.t.cat_reg[R.node] = (uint8_t)(b->bin >= 256); /* sorted sets */
            }
            open[nopen++] = R; /* the right child is appended, the left takes the parent's place below */
            qleaf[2 * i] = batch[i];
            qleaf[2 * i + 1] = nopen - 1;
            /* the parent's slot stays with it until the histograms are done */
            open[nopen - 1].slot = -1;
            L.slot = P->slot;
            P->slot = -1;
            *P = L; /* P is now the left child, holding the parent's slot */
        }
        if ((st = ops->partition(dev, segs, nb)) != SB_OK) goto done;

        /* Histograms: the smaller child from its rows, the larger as parent
         * minus smaller in the parent's slot; none for a child that may not be split. */
        int32_t nj = 0, ns = 0, nq = 0;
        for (int32_t i = 0; i < nb; i++) {
            dleaf *L = &open[qleaf[2 * i]], *R = &open[qleaf[2 * i + 1]];
            const int32_t parent_slot = L->slot; /* the parent's histogram */
            L->slot = -1;
            const int okl = may_split(&c, L), okr = may_split(&c, R);
            dleaf *small = L->C <= R->C ? L : R, *large = L->C <= R->C ? R : L;
            const int ok_small = small == L ? okl : okr, ok_large = large == L ? okl : okr;
            if (!ok_small && !ok_large) {
                int32_t s = parent_slot;
                give_slot(&c, &s);
                continue;
            }
            if (ok_large) { /* small from rows, large by subtraction (small's slot freed if not needed) */
                if ((st = take_slot(&c, &small->slot)) != SB_OK) goto done;
                sb_tdev_hjob j = {small->begin, small->end, small->slot, 0};
                jobs[nj++] = j;
                large->slot = parent_slot;
                sb_tdev_sub sub = {large->slot, small->slot};
                subs[ns++] = sub;
            } else { /* only the small child: its rows, into the parent's slot */
                small->slot = parent_slot;
                sb_tdev_hjob j = {small->begin, small->end, small->slot, 0};
                jobs[nj++] = j;
            }
        }
        if (nj > 0 && (st = ops->hist(dev, jobs, nj)) != SB_OK) goto done;
        if (ns > 0 && (st = ops->subtract(dev, subs, ns)) != SB_OK) goto done;

        /* Best splits of the children that may be split; free the rest's slots. */
        for (int32_t i = 0; i < 2 * nb; i++) {
            dleaf *X = &open[qleaf[i]];
            memset(&X->best, 0, sizeof X->best);
            if (may_split(&c, X) && X->slot >= 0) {
                sb_tdev_node q = {X->G, X->H, X->C, X->slot, 0};
                qn[nq] = q;
                qleaf[nq++] = qleaf[i]; /* compacted in place: nq <= i */
            } else {
                give_slot(&c, &X->slot);
            }
        }
        if (c.host_search) {
            for (int32_t i = 0; i < nq; i++)
                if ((st = host_best(&c, &open[qleaf[i]], &rules)) != SB_OK) goto done;
        } else {
            if (nq > 0 && (st = ops->best(dev, qn, nq, &rules, qbest)) != SB_OK) goto done;
            for (int32_t i = 0; i < nq; i++) open[qleaf[i]].best = qbest[i];
        }
        for (int32_t i = 0; i < nq; i++) {
            dleaf *X = &open[qleaf[i]];
            if (!X->best.valid) give_slot(&c, &X->slot);
        }
        nleaves += nb;
    }

    /* Leaf values from the exact sums, by the kernel's formula. */
    sb_node_list_finish(&c.t, g_scale, h_scale, p->reg_lambda, p->reg_alpha, p->learning_rate, out);
    st = sb_grown_cat_sets(out, bins);
done:
    sb_free(open);
    sb_free(batch);
    sb_free(order);
    sb_free(segs);
    sb_free(jobs);
    sb_free(subs);
    sb_free(qn);
    sb_free(qleaf);
    sb_free(qbest);
    sb_free(f0);
    sb_free(c.hbuf);
    sb_free(c.free_slots);
    sb_node_list_release(&c.t);
    if (st != SB_OK) sb_grown_release(out);
    return st;
}

/* The tree as the device walks it: bins instead of thresholds, each
 * categorical split's bin set in 8 entries after the nodes (sb_k_bnode). */
sb_status sb_grown_bnodes(const sb_grown *g, sb_k_bnode **out, int32_t *count) {
    const int32_t nn = g->tree.nnodes;
    int32_t ncat = 0;
    for (int32_t k = 0; k < nn; k++) ncat += g->tree.nodes[k].feature >= 0 && g->tree.nodes[k].categorical;
    sb_k_bnode *b = sb_malloc(sizeof(sb_k_bnode) * (size_t)(nn + 8 * ncat > 0 ? nn + 8 * ncat : 1));
    if (!b) return oom();
    int32_t at = nn;
    for (int32_t k = 0; k < nn; k++) {
        const sb_tree_node *n = &g->tree.nodes[k];
        b[k].feature = n->feature;
        b[k].split_bin = g->split_bin[k];
        b[k].left = n->left;
        b[k].right = n->right;
        b[k].default_left = n->default_left;
        b[k].value = n->value;
        if (n->feature >= 0 && n->categorical) {
            b[k].default_left = -at;
            for (int32_t w = 0; w < 8; w++, at++) {
                memset(&b[at], 0, sizeof b[at]);
                b[at].feature = -1;
                b[at].left = b[at].right = -1;
                b[at].split_bin = (int32_t)g->cat_bits[8 * k + w];
            }
        }
    }
    *out = b;
    *count = at;
    return SB_OK;
}
