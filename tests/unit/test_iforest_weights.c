/* test_iforest_weights.c: the isolation forest's sample weights (issue 20):
 * the fixed point of the weights, the weighted draw without replacement
 * (sb_iso_wdraw_tree), and the fits that use it: named refusals, equal
 * weights as the unweighted forest, rows of weight zero never drawn, the same
 * bytes at any thread count, on cpu-batched and through a warm start. */
#include "sb_test.h"
#include "samebits.h"
#include "core/internal.h"
#include "io/dataset.h"
#include "models/model.h"
#include "models/forest/forest_dev.h"
#include "kernels/forest.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The fixed point: the largest weight into [2^31, 2^32) by a power of two,
 * truncated; a positive weight that truncates to zero counts 1; equal
 * weights (whatever their value) need none; bad weights refused by name. */
SB_TEST(test_iforest_weight_fixed_point) {
    sb_iso_wdraw wd;
    const float w[5] = {1.0f, 2.0f, 0.0f, 4.0f, 1e-40f};
    SB_CHECK(sb_iso_wdraw_init(w, 5, &wd) == SB_OK && wd.fen && wd.npos == 4);
    SB_CHECK(wd.q[0] == 1u << 29 && wd.q[1] == 1u << 30 && wd.q[2] == 0 && wd.q[3] == 1u << 31 && wd.q[4] == 1);
    SB_CHECK(wd.total == (1u << 29) + (1u << 30) + (UINT64_C(1) << 31) + 1);
    sb_iso_wdraw_release(&wd);
    /* 3 is 1.5 * 2^1: 3 * 2^30, and 0.75 * 2^30 */
    const float v[3] = {3.0f, 1.0f, 0.75f};
    SB_CHECK(sb_iso_wdraw_init(v, 3, &wd) == SB_OK);
    SB_CHECK(wd.q[0] == 3u << 30 && wd.q[1] == 1u << 30 && wd.q[2] == 3u << 28);
    sb_iso_wdraw_release(&wd);
    /* a subnormal largest weight */
    const float s[2] = {1e-40f, 5e-41f};
    SB_CHECK(sb_iso_wdraw_init(s, 2, &wd) == SB_OK && wd.q[0] >= 1u << 31 && wd.q[1] >= 1u << 30 &&
             wd.q[1] < wd.q[0]);
    sb_iso_wdraw_release(&wd);
    const float eq[3] = {2.5f, 2.5f, 2.5f};
    SB_CHECK(sb_iso_wdraw_init(eq, 3, &wd) == SB_OK && wd.fen == NULL && wd.npos == 3);
    SB_CHECK(sb_iso_wdraw_init(NULL, 3, &wd) == SB_OK && wd.fen == NULL && wd.npos == 3);
    const float bad[4][3] = {{1.0f, -1.0f, 1.0f}, {1.0f, NAN, 1.0f}, {INFINITY, 1.0f, 1.0f}, {0.0f, 0.0f, 0.0f}};
    static const char *const says[4] = {"row 1", "row 1", "row 0", "every weight is zero"};
    for (int k = 0; k < 4; k++) {
        SB_CHECK(sb_iso_wdraw_init(bad[k], 3, &wd) == SB_ERR_INVALID_INPUT && wd.fen == NULL);
        SB_CHECK(strstr(sb_last_error(), says[k]) != NULL);
    }
    const float one[3] = {0.0f, 3.0f, 0.0f};
    SB_CHECK(sb_iso_wdraw_init(one, 3, &wd) == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "2 rows of positive weight") != NULL);
}

/* The draw: psi distinct rows, none of weight zero; with psi = the rows of
 * positive weight, every one of them; the first draw's row with probability
 * proportional to its weight (20,000 trees, counts within 4%); the same
 * rows for the same (seed, tree), other rows for another tree. */
SB_TEST(test_iforest_weighted_draw) {
    enum { N = 40 };
    float w[N];
    for (int i = 0; i < N; i++) w[i] = i % 4 == 0 ? 0.0f : (float)(1 + i % 3);
    sb_iso_wdraw wd;
    SB_CHECK(sb_iso_wdraw_init(w, N, &wd) == SB_OK && wd.fen && wd.npos == 30);
    uint64_t *scratch = malloc(sizeof(uint64_t) * (N + 1));
    memcpy(scratch, wd.fen, sizeof(uint64_t) * (N + 1));
    int32_t rows[N], again[N];
    for (int32_t t = 0; t < 50; t++) {
        const int32_t psi = t % 2 ? 30 : 12;
        sb_iso_wdraw_tree(&wd, 7, t, psi, scratch, rows);
        int seen[N] = {0};
        for (int i = 0; i < psi; i++) {
            SB_CHECK(rows[i] >= 0 && rows[i] < N && w[rows[i]] > 0.0f && !seen[rows[i]]);
            seen[rows[i]] = 1;
        }
        sb_iso_wdraw_tree(&wd, 7, t, psi, scratch, again);
        SB_CHECK(memcmp(rows, again, sizeof(int32_t) * (size_t)psi) == 0);
    }
    sb_iso_wdraw_tree(&wd, 7, 0, 12, scratch, rows);
    sb_iso_wdraw_tree(&wd, 7, 1, 12, scratch, again);
    SB_CHECK(memcmp(rows, again, sizeof(int32_t) * 12) != 0);
    /* the scratch is the weights' prefix sums again after every tree */
    SB_CHECK(memcmp(scratch, wd.fen, sizeof(uint64_t) * (N + 1)) == 0);
    sb_iso_wdraw_release(&wd);
    /* the first draw ~ weight: rows of weight 1, 2, 5 and 0 */
    const float f[4] = {1.0f, 2.0f, 5.0f, 0.0f};
    SB_CHECK(sb_iso_wdraw_init(f, 4, &wd) == SB_OK);
    memcpy(scratch, wd.fen, sizeof(uint64_t) * 5);
    long count[4] = {0, 0, 0, 0};
    for (int32_t t = 0; t < 20000; t++) {
        sb_iso_wdraw_tree(&wd, 3, t, 1, scratch, rows);
        count[rows[0]]++;
    }
    SB_CHECK(count[3] == 0);
    SB_CHECK(labs(count[0] - 2500) < 100 && labs(count[1] - 5000) < 200 && labs(count[2] - 12500) < 500);
    /* without replacement: two draws of three rows, weight 5 then the others */
    long both = 0;
    for (int32_t t = 0; t < 20000; t++) {
        sb_iso_wdraw_tree(&wd, 3, t, 2, scratch, rows);
        SB_CHECK(rows[0] != rows[1]);
        both += (rows[0] == 0 && rows[1] == 1) || (rows[0] == 1 && rows[1] == 0);
    }
    /* P({0, 1}) = 1/8 * 2/7 + 2/8 * 1/6 = 0.0774 */
    SB_CHECK(labs(both - 1548) < 120);
    sb_iso_wdraw_release(&wd);
    free(scratch);
}

/* A weight of 2 against two copies of the row (docs/forest.md): until a copy
 * is drawn the two draws go alike in law, so the row of weight 2 is in a
 * tree's sample exactly as often as at least one copy would be; but a row is
 * drawn at most once, so the other rows get the slot a second copy would
 * take. Weights (2, 1, 1, 1, 1), 3 rows a tree: the heavy row with
 * probability 1 - (4/6)(3/5)(2/4) = 0.8, as one of two copies among 6
 * unweighted rows (1 - C(4,3)/C(6,3) = 0.8); a light row 0.55 against 0.5.
 * 40,000 trees each, within 5 standard errors. */
SB_TEST(test_iforest_weight_two_against_copies) {
    const float w[5] = {2.0f, 1.0f, 1.0f, 1.0f, 1.0f};
    sb_iso_wdraw wd;
    SB_CHECK(sb_iso_wdraw_init(w, 5, &wd) == SB_OK && wd.fen);
    uint64_t scratch[6];
    memcpy(scratch, wd.fen, sizeof scratch);
    int32_t rows[3];
    long heavy = 0, light = 0, copy = 0, copy_light = 0;
    enum { T = 40000 };
    for (int32_t t = 0; t < T; t++) {
        sb_iso_wdraw_tree(&wd, 21, t, 3, scratch, rows);
        for (int i = 0; i < 3; i++) {
            heavy += rows[i] == 0;
            light += rows[i] == 1;
        }
        /* the unweighted draw (isolation.c's) over rows 0, 0' (5), 1..4 */
        int taken[6] = {0}, got = 0, any = 0;
        for (uint64_t d = 0; got < 3; d++) {
            const uint32_t r = sb_k_iforest_sample_row(21, t, d, 6);
            if (taken[r]) continue;
            taken[r] = 1;
            got++;
        }
        any = taken[0] || taken[5];
        copy += any;
        copy_light += taken[1];
    }
    sb_iso_wdraw_release(&wd);
    /* standard errors: sqrt(0.16 / T) = 0.002, sqrt(0.25 / T) = 0.0025 */
    SB_CHECK(labs(heavy - 32000) < 400 && labs(copy - 32000) < 400);
    SB_CHECK(labs(light - 22000) < 500 && labs(copy_light - 20000) < 500);
}

/* Rows r < n: x0 = r % 10 (9.5 + r for the rows where shape is zero: far
 * out, so a threshold above 9 shows one of them drawn), x1 = (r * 7) % 13;
 * weights w (NULL: none). */
static sb_dataset *iso_table(int64_t n, const float *w, const float *shape) {
    float *x = malloc(sizeof(float) * (size_t)n * 2);
    for (int64_t r = 0; r < n; r++) {
        x[2 * r] = shape && shape[r] == 0.0f ? 9.5f + (float)r : (float)(r % 10);
        x[2 * r + 1] = (float)((r * 7) % 13);
    }
    sb_dataset *d = NULL;
    if (sb_dataset_from_matrix(x, n, 2, &d) == SB_OK && w && sb_dataset_set_weight(d, w, n) != SB_OK) {
        sb_dataset_free(d);
        d = NULL;
    }
    free(x);
    return d;
}

static sb_status iso_fit(const char *text, const sb_dataset *d, const sb_model *init, sb_model **m) {
    sb_params *params = NULL;
    sb_status st = sb_params_create(&params);
    if (st == SB_OK) st = sb_params_parse(params, text);
    if (st == SB_OK)
        st = init ? sb_isolation_forest_fit_continue(params, d, init, NULL, m) : sb_isolation_forest_fit(params, d, NULL, m);
    sb_params_free(params);
    return st;
}

static int same(const sb_model *a, const sb_model *b) {
    char x[65], y[65];
    return a && b && sb_model_digest(a, x) == SB_OK && sb_model_digest(b, y) == SB_OK && !strcmp(x, y);
}

/* Fits: equal weights are the unweighted forest; a power-of-two scale of the
 * weights changes no bit (the fixed point is the same); the weighted forest
 * differs from the unweighted one, never splits among rows of weight zero,
 * and is the same at 1 and 2 threads, on cpu-batched and warm-started 3 -> 8;
 * its max_samples is at most the rows of positive weight; refusals named. */
SB_TEST(test_iforest_weighted_fit) {
    enum { N = 400 };
    float w[N], w4[N], eq[N];
    for (int i = 0; i < N; i++) {
        w[i] = i % 3 == 0 ? 0.0f : 0.25f + (float)(i % 7);
        w4[i] = 4.0f * w[i];
        eq[i] = 2.5f;
    }
    sb_dataset *dw = iso_table(N, w, w), *d4 = iso_table(N, w4, w), *de = iso_table(N, eq, NULL),
               *du = iso_table(N, NULL, NULL), *dx = iso_table(N, NULL, w); /* dx: dw's rows, unweighted */
    SB_CHECK(dw && d4 && de && du && dx);
    const char *text = "n_estimators=8 max_samples=64 seed=11";
    sb_model *mw = NULL, *m4 = NULL, *me = NULL, *mu = NULL, *mx = NULL, *m1 = NULL, *mb = NULL, *half = NULL,
             *cont = NULL;
    sb_set_num_threads(2);
    SB_CHECK(iso_fit(text, dw, NULL, &mw) == SB_OK);
    SB_CHECK(iso_fit(text, d4, NULL, &m4) == SB_OK && same(mw, m4));
    SB_CHECK(iso_fit(text, de, NULL, &me) == SB_OK && iso_fit(text, du, NULL, &mu) == SB_OK && same(me, mu));
    SB_CHECK(iso_fit(text, dx, NULL, &mx) == SB_OK && !same(mw, mx));
    /* no threshold beyond 9 on x0: no row of weight zero in any node */
    int far = 0, far_unweighted = 0;
    for (int32_t t = 0; t < mw->ntrees; t++)
        for (int32_t j = 0; j < mw->trees[t].nnodes; j++) {
            const sb_tree_node *nd = &mw->trees[t].nodes[j];
            if (nd->feature == 0 && nd->threshold > 9.0f) far++;
            SB_CHECK(j != 0 || nd->count == 64);
        }
    for (int32_t t = 0; t < mx->ntrees; t++)
        for (int32_t j = 0; j < mx->trees[t].nnodes; j++)
            if (mx->trees[t].nodes[j].feature == 0 && mx->trees[t].nodes[j].threshold > 9.0f) far_unweighted++;
    SB_CHECK(far == 0 && far_unweighted > 0);
    sb_set_num_threads(1);
    SB_CHECK(iso_fit(text, dw, NULL, &m1) == SB_OK && same(mw, m1));
    SB_CHECK(iso_fit("n_estimators=8 max_samples=64 seed=11 device=cpu-batched", dw, NULL, &mb) == SB_OK && same(mw, mb));
    SB_CHECK(iso_fit("n_estimators=3 max_samples=64 seed=11", dw, NULL, &half) == SB_OK);
    SB_CHECK(iso_fit(text, dw, half, &cont) == SB_OK && same(mw, cont));
    sb_model_free(cont);
    cont = NULL;
    SB_CHECK(iso_fit("n_estimators=8 max_samples=64 seed=11 device=cpu-batched", dw, half, &cont) == SB_OK &&
             same(mw, cont));
    sb_set_num_threads(0);
    /* max_samples above the rows of positive weight: all of them, every tree */
    sb_model *all = NULL;
    SB_CHECK(iso_fit("n_estimators=2 max_samples=1000 seed=1", dw, NULL, &all) == SB_OK);
    SB_CHECK(all && all->trees[0].nodes[0].count == 266 && strstr(all->params, "max_samples=266\n") != NULL);
    sb_model_free(all);
    /* refusals before any work: every weight zero, one row of positive
     * weight, and a bad weight the dataset setter would refuse */
    float z[N];
    memset(z, 0, sizeof z);
    sb_dataset *dz = iso_table(N, NULL, NULL);
    sb_model *m = NULL;
    SB_CHECK(sb_dataset_set_weight(dz, z, N) == SB_OK);
    SB_CHECK(iso_fit(text, dz, NULL, &m) == SB_ERR_INVALID_INPUT && m == NULL);
    SB_CHECK(strstr(sb_last_error(), "every weight is zero") != NULL);
    dz->t.weight[5] = 1.0f;
    SB_CHECK(iso_fit(text, dz, NULL, &m) == SB_ERR_INVALID_INPUT && m == NULL);
    dz->t.weight[6] = -1.0f;
    SB_CHECK(iso_fit(text, dz, NULL, &m) == SB_ERR_INVALID_INPUT && m == NULL);
    SB_CHECK(strstr(sb_last_error(), "weight of row 6") != NULL);
    sb_dataset_free(dz);
    sb_model_free(mw);
    sb_model_free(m4);
    sb_model_free(me);
    sb_model_free(mu);
    sb_model_free(mx);
    sb_model_free(m1);
    sb_model_free(mb);
    sb_model_free(half);
    sb_model_free(cont);
    sb_dataset_free(dw);
    sb_dataset_free(d4);
    sb_dataset_free(de);
    sb_dataset_free(du);
    sb_dataset_free(dx);
}
