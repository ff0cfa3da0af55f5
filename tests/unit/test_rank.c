/* test_rank.c: the ranking objectives and metrics (src/models/gbdt/rank.c)
 * against values worked out here in double from the LambdaRank formulas
 * (Burges 2010; LightGBM's truncation and normalization), and the tie rule. */
#include "sb_test.h"
#include "../../src/models/gbdt/rank.h"
#include "../../src/models/model.h"
#include <math.h>
#include <string.h>

static const float k_gain[5] = {0.0f, 1.0f, 3.0f, 7.0f, 15.0f};

static double disc(int i) { return 1.0 / log2((double)i + 2.0); }

/* Reference lambdarank gradients of one query, in double: ranks given. */
static void reference(const float *y, const float *s, const int *rank_of, int n, int trunc, double *g, double *h) {
    int order[16];
    for (int i = 0; i < n; i++) order[rank_of[i]] = i;
    double ys[16];
    for (int i = 0; i < n; i++) ys[i] = y[i];
    for (int i = 0; i < n; i++) /* labels descending for the ideal DCG */
        for (int j = i + 1; j < n; j++)
            if (ys[j] > ys[i]) {
                double t = ys[i];
                ys[i] = ys[j];
                ys[j] = t;
            }
    double md = 0.0;
    for (int i = 0; i < n && i < trunc; i++) md += k_gain[(int)ys[i]] * disc(i);
    double best = s[order[0]], worst = s[order[n - 1]], sum = 0.0;
    for (int i = 0; i < n; i++) g[i] = h[i] = 0.0;
    for (int i = 0; i < n - 1 && i < trunc; i++)
        for (int j = i + 1; j < n; j++) {
            int a = order[i], b = order[j];
            if (y[a] == y[b]) continue;
            int hi = y[a] > y[b] ? a : b, lo = y[a] > y[b] ? b : a;
            double d = (double)s[hi] - s[lo];
            double w = (k_gain[(int)y[hi]] - k_gain[(int)y[lo]]) * fabs(disc(rank_of[hi]) - disc(rank_of[lo])) / md;
            if (best != worst) w /= 0.01 + fabs(d);
            double rho = 1.0 / (1.0 + exp(d));
            g[hi] += -rho * w;
            g[lo] -= -rho * w;
            h[hi] += rho * (1 - rho) * w;
            h[lo] += rho * (1 - rho) * w;
            sum += 2 * rho * w;
        }
    if (sum > 0)
        for (int i = 0; i < n; i++) {
            g[i] *= log2(1 + sum) / sum;
            h[i] *= log2(1 + sum) / sum;
        }
}

static sb_rank_cfg cfg(int32_t objective, int32_t trunc) {
    sb_rank_cfg c = {objective, trunc, 1, 1.0f, 5, k_gain};
    return c;
}

SB_TEST(test_rank_lambdarank_matches_the_formulas) {
    /* one query of 6: margins with a tie (rows 1 and 4), labels with ties */
    const float y[6] = {2, 0, 1, 4, 1, 0}, s[6] = {0.5f, 0.25f, -1.0f, 0.0f, 0.25f, 2.0f};
    const int rank_of[6] = {1, 2, 5, 4, 3, 0}; /* margin descending, equal margins by row */
    int64_t start[2] = {0, 6};
    sb_rank_groups q = {1, start, 6};
    for (int trunc = 2; trunc <= 30; trunc += 28) {
        sb_rank_cfg c = cfg(SB_OBJ_LAMBDARANK, trunc);
        float g[6], h[6], mx[2];
        double rg[6], rh[6];
        SB_CHECK(sb_rank_gradients(&c, &q, y, NULL, s, g, h, mx) == SB_OK);
        reference(y, s, rank_of, 6, trunc, rg, rh);
        float mg = 0, mh = 0;
        for (int i = 0; i < 6; i++) {
            SB_CHECK(fabs(g[i] - rg[i]) <= 1e-5 * (fabs(rg[i]) + 1e-3));
            SB_CHECK(fabs(h[i] - rh[i]) <= 1e-5 * (fabs(rh[i]) + 1e-3));
            if (fabsf(g[i]) > mg) mg = fabsf(g[i]);
            if (h[i] > mh) mh = h[i];
        }
        SB_CHECK(mx[0] == mg && mx[1] == mh);
        double total = 0; /* the lambdas of a query cancel */
        for (int i = 0; i < 6; i++) total += g[i];
        SB_CHECK(fabs(total) < 1e-5);
    }
}

SB_TEST(test_rank_ties_by_row_and_single_row_queries) {
    /* all margins equal: ranks are the row order, so the first relevant row
     * gets a smaller push than a later one with the same label */
    const float y[5] = {1, 0, 1, 0, 3}, s[5] = {0, 0, 0, 0, 0};
    int64_t start[3] = {0, 4, 5}; /* a query of 4, then one of 1 */
    sb_rank_groups q = {2, start, 4};
    sb_rank_cfg c = cfg(SB_OBJ_LAMBDARANK, 30);
    float g[5], h[5], mx[2];
    SB_CHECK(sb_rank_gradients(&c, &q, y, NULL, s, g, h, mx) == SB_OK);
    const int rank_of[4] = {0, 1, 2, 3};
    double rg[4], rh[4];
    reference(y, s, rank_of, 4, 30, rg, rh);
    for (int i = 0; i < 4; i++) SB_CHECK(fabs(g[i] - rg[i]) <= 1e-5 * (fabs(rg[i]) + 1e-3));
    SB_CHECK(g[0] != g[2]); /* equal labels, equal margins: the ranks tell them apart */
    SB_CHECK(g[4] == 0.0f && h[4] == 0.0f); /* a query of one row has no pairs */
}

SB_TEST(test_rank_pairwise_is_ranknet) {
    const float y[3] = {0, 2, 1}, s[3] = {1.0f, 0.0f, -0.5f};
    int64_t start[2] = {0, 3};
    sb_rank_groups q = {1, start, 3};
    sb_rank_cfg c = cfg(SB_OBJ_RANK_PAIRWISE, 30);
    float g[3], h[3], mx[2];
    SB_CHECK(sb_rank_gradients(&c, &q, y, NULL, s, g, h, mx) == SB_OK);
    double rg[3] = {0, 0, 0};
    const int hi[3] = {1, 2, 1}, lo[3] = {0, 0, 2};
    for (int k = 0; k < 3; k++) {
        double rho = 1.0 / (1.0 + exp((double)s[hi[k]] - s[lo[k]]));
        rg[hi[k]] -= rho;
        rg[lo[k]] += rho;
    }
    for (int i = 0; i < 3; i++) SB_CHECK(fabs(g[i] - rg[i]) < 1e-6);
}

SB_TEST(test_rank_metrics_ndcg_and_map) {
    const float y[7] = {3, 0, 1, 0, 0, 1, 0};
    float s[7] = {3, 2, 1, 0, -1, -2, -3}; /* the first query in the ideal order but for row 5 */
    int64_t start[3] = {0, 5, 7};
    sb_rank_groups q = {2, start, 5};
    sb_rank_cfg c = cfg(SB_OBJ_LAMBDARANK, 30);
    float v;
    SB_CHECK(sb_rank_metric(0, 10, &c, &q, y, s, &v) == SB_OK);
    /* query 0: dcg = 7 + 1/log2(4); ideal = 7 + 1/log2(3); query 1: 1 at place 1 of 2 */
    double q0 = (7 + 1 / log2(4.0)) / (7 + 1 / log2(3.0)), q1 = 1.0;
    SB_CHECK(fabs(v - (q0 + q1) / 2) < 1e-6);
    SB_CHECK(sb_rank_metric(1, 10, &c, &q, y, s, &v) == SB_OK);
    /* MAP: query 0 hits at places 1 and 3: (1 + 2/3) / 2; query 1: 1 */
    SB_CHECK(fabs(v - ((1 + 2.0 / 3) / 2 + 1) / 2) < 1e-6);
    s[5] = s[6] = 0; /* a tie: row 5 comes first */
    SB_CHECK(sb_rank_metric(1, 1, &c, &q, y, s, &v) == SB_OK);
    SB_CHECK(fabs(v - 1.0) < 1e-6);
}
