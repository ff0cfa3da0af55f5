/* cons.c: per-node rules of the split search (see cons.h). */
#include "cons.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../../core/rng.h"

#define SB_PURPOSE_BYNODE 0x4E4F4431u /* "NOD1" */

int sb_grow_cons_on(const sb_grow_cons *gc) {
    return gc && (gc->monotone || gc->set_bits || gc->bynode < 1.0f);
}

/* SplitMix64's finalizer (Steele, Lea and Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014): a path's key from its
 * parent's, so that sibling and cousin keys differ. */
static uint64_t mix64(uint64_t z) {
    z += UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void sb_node_cons_root(const sb_grow_cons *gc, sb_node_cons *out) {
    memset(out, 0, sizeof *out);
    out->lo = -INFINITY;
    out->hi = INFINITY;
    out->key = mix64(gc ? gc->tree : 0);
    out->compat = ~UINT64_C(0);
    out->lone = -1;
    out->root = 1;
}

void sb_node_cons_children(const sb_grow_cons *gc, const sb_k_split_rules *r, const sb_node_cons *P,
                           const sb_k_split *b, int64_t G, int64_t H, sb_node_cons kid[2]) {
    const int32_t f = b->feature;
    for (int s = 0; s < 2; s++) {
        kid[s] = *P;
        kid[s].root = 0;
        kid[s].key = mix64(P->key * 2u + 1u + (uint64_t)s);
    }
    if (gc && gc->set_bits && P->lone < 0) {
        const uint64_t in = gc->set_bits[f] & P->compat;
        kid[0].compat = kid[1].compat = in;
        if (!in) kid[0].lone = kid[1].lone = f; /* a feature of no set: the branch keeps to it */
    }
    if (gc && gc->monotone && gc->monotone[f] != 0) {
        const float gl = sb_k_dequant(b->lg, r->g_scale), hl = sb_k_dequant(b->lh, r->h_scale);
        const float gr = sb_k_dequant(G - b->lg, r->g_scale), hr = sb_k_dequant(H - b->lh, r->h_scale);
        const float wl = sb_k_clamp(sb_k_leaf_output(gl, hl, r->reg_lambda, r->reg_alpha), P->lo, P->hi);
        const float wr = sb_k_clamp(sb_k_leaf_output(gr, hr, r->reg_lambda, r->reg_alpha), P->lo, P->hi);
#ifdef SB_SABOTAGE_MONO_ORDER
        const float mid = wl + (wr - wl) * 0.5f; /* separating arm: the midpoint rounded otherwise */
#else
        const float mid = (wl + wr) * 0.5f;
#endif
        if (gc->monotone[f] > 0) {
            kid[0].hi = mid;
            kid[1].lo = mid;
        } else {
            kid[0].lo = mid;
            kid[1].hi = mid;
        }
    }
}

/* Whether the interaction sets let node nc split on feature f. */
static int sets_allow(const sb_grow_cons *gc, const sb_node_cons *nc, int32_t f) {
    if (!gc->set_bits || nc->root) return 1;
    if (nc->lone >= 0) return f == nc->lone;
    return (gc->set_bits[f] & nc->compat) != 0;
}

static int u64_cmp(const void *a, const void *b) {
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

#ifdef SB_SABOTAGE_RNG_ORDER
/* Separating arm for rule 6 (make SABOTAGE=rng-order): bynode's draws keyed
 * by the order in which the growers search nodes, not by the node's path. */
static uint64_t visit_counter;
#endif

int sb_cons_best(const sb_grow_cons *gc, const sb_node_cons *nc, const sb_k_hbin *hist, const int32_t *hoff,
                 const int32_t *nbins, int32_t nf, const uint8_t *mask, const uint8_t *catf,
                 const sb_k_cat_rules *cat, int64_t G, int64_t H, int64_t C, const sb_k_split_rules *r,
                 sb_k_split *best, uint32_t *catbits) {
    memset(best, 0, sizeof *best);
    /* the flags and the draw keys: on the stack for up to CONS_STACK features
     * (no allocation per node), else one block for both */
    enum { CONS_STACK = 512 };
    uint64_t keys_stack[CONS_STACK];
    uint8_t use_stack[CONS_STACK];
    void *block = NULL;
    uint64_t *keys = keys_stack;
    uint8_t *use = use_stack;
    if (nf > CONS_STACK) {
        if (!(block = sb_malloc((sizeof(uint64_t) + 1) * (size_t)nf))) return 0;
        keys = block;
        use = (uint8_t *)(keys + nf);
    }
    int32_t n = 0;
    for (int32_t f = 0; f < nf; f++) {
        use[f] = (uint8_t)((!mask || mask[f]) && sets_allow(gc, nc, f));
        n += use[f];
    }
    if (gc->bynode < 1.0f && n > 0) {
        /* the ceil(bynode * n) allowed features of smallest draw (ties: the
         * smaller feature), as draw_columns picks a tree's */
        int32_t want = (int32_t)(gc->bynode * (float)n);
        if ((float)want < gc->bynode * (float)n) want++;
        if (want < 1) want = 1;
        if (want < n) {
#ifdef SB_SABOTAGE_RNG_ORDER
            const uint64_t index = __atomic_fetch_add(&visit_counter, 1, __ATOMIC_RELAXED);
#else
            const uint64_t index = nc->key;
#endif
            int32_t k = 0;
            for (int32_t f = 0; f < nf; f++) {
                if (!use[f]) continue;
                uint32_t w[4];
                sb_rng_words(gc->seed, SB_PURPOSE_BYNODE, index, (uint32_t)f, w);
                keys[k++] = ((uint64_t)w[0] << 32) | (uint32_t)f;
            }
            qsort(keys, (size_t)n, sizeof *keys, u64_cmp);
            memset(use, 0, (size_t)nf);
            for (int32_t i = 0; i < want; i++) use[(uint32_t)keys[i]] = 1;
        }
    }
    sb_k_mono m = {gc->monotone != NULL, 0, nc->lo, nc->hi};
    const float parent = sb_k_node_score_c(G, H, r, &m);
    for (int32_t f = 0; f < nf; f++) {
        if (!use[f]) continue;
        m.dir = gc->monotone ? gc->monotone[f] : 0;
        if (catf && catf[f]) /* a category set has no order: its feature carries no constraint */
            sb_k_cat_scan(hist + hoff[f], nbins[f], f, G, H, C, parent, r, cat, &m, best, catbits);
        else
            sb_k_split_scan_c(hist + hoff[f], nbins[f], f, G, H, C, parent, r, &m, best);
    }
    sb_free(block);
    return 1;
}

float sb_cons_leaf_value(float g, float h, float reg_lambda, float reg_alpha, float learning_rate, float lo,
                         float hi) {
    return sb_k_clamp(sb_k_leaf_output(g, h, reg_lambda, reg_alpha), lo, hi) * learning_rate;
}
