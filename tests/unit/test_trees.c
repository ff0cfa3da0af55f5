/* test_trees.c: bin edges and tree growth from integer histograms. */
#include "sb_test.h"
#include "core/internal.h"
#include "kernels/compat.h"
#include "models/trees/binning.h"
#include "models/trees/grow.h"
#include <stdlib.h>
#include <string.h>

static float nanf_(void) { return sb_u2f(0x7FC00000u); }
static float inf_(void) { return sb_u2f(0x7F800000u); }

SB_TEST(test_trees_bins_distinct_values_and_specials) {
    /* One feature: -inf, -0, +0, 1, 2, 2, 3, +inf, NaN. */
    float x[9] = {-inf_(), -0.0f, 0.0f, 1.0f, 2.0f, 2.0f, 3.0f, inf_(), nanf_()};
    sb_bins b;
    SB_CHECK(sb_bins_build(x, 9, 1, 255, 1, 0, &b) == SB_OK);
    /* distinct: -inf, 0, 1, 2, 3, inf -> 6 value bins */
    SB_CHECK(b.nbins[0] == 6);
    SB_CHECK(b.upper[0] == -inf_());   /* between -inf and 0: the midpoint is -inf */
    SB_CHECK(b.upper[1] == 0.5f);
    SB_CHECK(b.upper[2] == 1.5f);
    SB_CHECK(b.upper[3] == 2.5f);
    SB_CHECK(b.upper[4] == 3.0f);      /* between 3 and inf: the edge is 3 */
    SB_CHECK(b.upper[5] == inf_());
    SB_CHECK(sb_bin_of(&b, 0, nanf_()) == 0);
    SB_CHECK(sb_bin_of(&b, 0, -inf_()) == 1);
    SB_CHECK(sb_bin_of(&b, 0, -0.0f) == 2 && sb_bin_of(&b, 0, 0.0f) == 2);
    SB_CHECK(sb_bin_of(&b, 0, 2.0f) == 4);
    SB_CHECK(sb_bin_of(&b, 0, 2.7f) == 5); /* an unseen value between 2 and 3 */
    SB_CHECK(sb_bin_of(&b, 0, inf_()) == 6);
    SB_CHECK(b.total == 7);
    sb_bins_release(&b);
    SB_CHECK(sb_bins_build(x, 9, 1, 1, 1, 0, &b) == SB_ERR_INVALID_ARGUMENT);
}

SB_TEST(test_trees_bins_equal_frequency_and_thread_free) {
    enum { N = 10000 };
    float *x = malloc(sizeof(float) * N * 2);
    for (int i = 0; i < N; i++) {
        x[2 * i] = (float)((i * 7919) % 1000);   /* 1000 distinct values, 10 each */
        x[2 * i + 1] = (float)(i % 3);           /* 3 distinct values */
    }
    sb_bins a, b;
    sb_set_num_threads(1);
    SB_CHECK(sb_bins_build(x, N, 2, 10, 5, 0, &a) == SB_OK);
    sb_set_num_threads(4);
    SB_CHECK(sb_bins_build(x, N, 2, 10, 5, 0, &b) == SB_OK);
    sb_set_num_threads(0);
    SB_CHECK(a.nbins[0] == 10 && a.nbins[1] == 3);
    SB_CHECK(memcmp(a.upper, b.upper, sizeof(float) * (size_t)a.offset[2]) == 0);
    /* Equal frequency: each of the 10 bins holds 1000 rows. */
    uint8_t *binned = malloc(N * 2);
    sb_bins_apply(&a, x, N, 2, binned);
    int count[11] = {0};
    for (int i = 0; i < N; i++) count[binned[i]]++; /* feature 0 column */
    for (int k = 1; k <= 10; k++) SB_CHECK(count[k] == 1000);
    /* Sampled edges are a function of (data, seed) only. */
    sb_bins s1, s2;
    sb_set_num_threads(1);
    SB_CHECK(sb_bins_build(x, N, 2, 10, 5, 1000, &s1) == SB_OK);
    sb_set_num_threads(3);
    SB_CHECK(sb_bins_build(x, N, 2, 10, 5, 1000, &s2) == SB_OK);
    sb_set_num_threads(0);
    SB_CHECK(memcmp(s1.upper, s2.upper, sizeof(float) * (size_t)s1.offset[2]) == 0);
    sb_bins_release(&a);
    sb_bins_release(&b);
    sb_bins_release(&s1);
    sb_bins_release(&s2);
    free(binned);
    free(x);
}

/* A stump on 8 rows: feature 1 separates the gradients; feature 2 duplicates it
 * exactly (equal gain), and the total order must pick feature 1. */
SB_TEST(test_trees_grow_stump_and_tie_order) {
    enum { N = 8, NF = 3 };
    float x[N * NF];
    int32_t gq[N], hq[N];
    for (int r = 0; r < N; r++) {
        x[r * NF + 0] = (float)(r % 2);           /* useless */
        x[r * NF + 1] = (float)(r < 4 ? 0 : 1);   /* the split */
        x[r * NF + 2] = x[r * NF + 1];           /* exact duplicate */
        gq[r] = r < 4 ? -100 : 100;
        hq[r] = 10;
    }
    sb_bins bins;
    SB_CHECK(sb_bins_build(x, N, NF, 255, 1, 0, &bins) == SB_OK);
    uint8_t binned[N * NF];
    sb_bins_apply(&bins, x, N, NF, binned);
    sb_grow_params p = {2, -1, 0, 1, 0.0f, 0.0f, 1.0f, 0.5f, 0.0f, NULL};
    sb_grow_data d = {binned, N, NF, &bins, gq, hq, 1.0f, 1.0f, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    int64_t rows[N];
    for (int r = 0; r < N; r++) rows[r] = r;
    sb_grown g;
    SB_CHECK(sb_tree_grow(&p, &d, rows, N, &g) == SB_OK);
    SB_CHECK(g.tree.nnodes == 3);
    SB_CHECK(g.tree.nodes[0].feature == 1);
    SB_CHECK(g.tree.nodes[0].threshold == 0.5f);
    /* Leaves: -G/(H+lambda)*lr = -(-400)/(40+1)*0.5 and -(400)/41*0.5 */
    const sb_tree_node *l = &g.tree.nodes[g.tree.nodes[0].left], *rr = &g.tree.nodes[g.tree.nodes[0].right];
    SB_CHECK(l->value == -(-400.0f / 41.0f) * 0.5f);
    SB_CHECK(rr->value == -(400.0f / 41.0f) * 0.5f);
    SB_CHECK(l->count == 4 && rr->count == 4);
    /* gain = (400^2/41 + 400^2/41 - 0^2/81) / 2 */
    SB_CHECK(g.tree.nodes[0].gain == 0.5f * ((160000.0f / 41.0f + 160000.0f / 41.0f) - 0.0f));
    sb_grown_release(&g);
    /* min_samples_leaf 5 forbids every split of 8 rows into 4 + 4. */
    p.min_samples_leaf = 5;
    for (int r = 0; r < N; r++) rows[r] = r;
    SB_CHECK(sb_tree_grow(&p, &d, rows, N, &g) == SB_OK);
    SB_CHECK(g.tree.nnodes == 1);
    sb_grown_release(&g);
    /* Masking feature 1 leaves its duplicate, feature 2. */
    uint8_t mask[NF] = {1, 0, 1};
    d.feature_mask = mask;
    p.min_samples_leaf = 1;
    for (int r = 0; r < N; r++) rows[r] = r;
    SB_CHECK(sb_tree_grow(&p, &d, rows, N, &g) == SB_OK);
    SB_CHECK(g.tree.nnodes == 3 && g.tree.nodes[0].feature == 2);
    sb_grown_release(&g);
    sb_bins_release(&bins);
}

/* Missing values learn a direction: NaN rows carry the positive gradients. */
SB_TEST(test_trees_grow_missing_direction_and_depth) {
    enum { N = 12 };
    float x[N];
    int32_t gq[N], hq[N];
    for (int r = 0; r < N; r++) {
        x[r] = r < 4 ? nanf_() : (float)r;
        gq[r] = r < 4 ? 50 : (r < 8 ? -50 : 50);
        hq[r] = 1;
    }
    sb_bins bins;
    SB_CHECK(sb_bins_build(x, N, 1, 255, 1, 0, &bins) == SB_OK);
    uint8_t binned[N];
    sb_bins_apply(&bins, x, N, 1, binned);
    sb_grow_params p = {0, 1, 1, 1, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, NULL}; /* depth-wise, one level */
    sb_grow_data d = {binned, N, 1, &bins, gq, hq, 1.0f, 1.0f, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    int64_t rows[N];
    for (int r = 0; r < N; r++) rows[r] = r;
    sb_grown g;
    SB_CHECK(sb_tree_grow(&p, &d, rows, N, &g) == SB_OK);
    SB_CHECK(g.tree.nnodes == 3); /* max_depth 1 */
    SB_CHECK(g.tree.nodes[0].threshold == 7.5f);
    SB_CHECK(g.tree.nodes[0].default_left == 0); /* NaN goes with the +50 rows */
    sb_grown_release(&g);
    sb_bins_release(&bins);
}

/* A value holding half the rows gets one bin; the other bins share the rest
 * (a plain running-total rule would let it use up half the bins). */
SB_TEST(test_trees_bins_heavy_value_leaves_bins_to_the_rest) {
    enum { N = 20000 };
    float *x = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) x[i] = i % 2 ? 5000.0f : (float)(i / 2 % 1000); /* 0..999 then 5000 x 10000 */
    sb_bins b;
    SB_CHECK(sb_bins_build(x, N, 1, 10, 1, 0, &b) == SB_OK);
    SB_CHECK(b.nbins[0] == 10);
    uint8_t *binned = malloc(N);
    sb_bins_apply(&b, x, N, 1, binned);
    int count[11] = {0};
    for (int i = 0; i < N; i++) count[binned[i]]++;
    SB_CHECK(count[10] == 10000);                 /* the heavy value, alone */
    for (int k = 1; k <= 9; k++) SB_CHECK(count[k] >= 1100 && count[k] <= 1120);
    free(binned);
    free(x);
    sb_bins_release(&b);
}
