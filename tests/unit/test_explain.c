/*
 * test_explain.c: pred_leaf and pred_contrib (src/models/explain.c,
 * src/kernels/tree.h). TreeSHAP is checked against the exact Shapley values
 * computed by brute force over every feature subset (in double, the value of
 * a subset S being the cover-weighted walk: features in S follow the row, the
 * others split the weight by the children's counts), against local accuracy
 * (the contributions and the expected value add up to the raw margin), and
 * for identical bits at 1, 2 and 7 threads; pred_leaf against prediction (the
 * leaves' values re-add to the margins' bits) and LightGBM's numbering.
 */
#include "sb_test.h"
#include "samebits_cert.h"
#include "core/internal.h"
#include "models/model.h"
#include "models/explain.h"
#include "io/dataset.h"
#include "kernels/compat.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define XF 6 /* features of the test tables */

/* Rows of XF features, a few missing; labels for regression, binary or three
 * classes (kind 0, 1, 2), a function of the first four features. */
static sb_dataset *xtable(int64_t n, int kind, uint32_t seed) {
    float *x = malloc(sizeof(float) * (size_t)n * XF), *y = malloc(sizeof(float) * (size_t)n);
    uint32_t s = seed * 2654435761u + 12345u;
    for (int64_t r = 0; r < n; r++) {
        for (int f = 0; f < XF; f++) {
            s = s * 1664525u + 1013904223u;
            x[r * XF + f] = (float)((s >> 8) % 1000) / 100.0f;
            if (((s >> 3) & 31) == 0 && f < 3) x[r * XF + f] = NAN;
        }
        const float *v = x + r * XF;
        float a = isnan(v[0]) ? 2.0f : v[0], b = isnan(v[1]) ? 7.0f : v[1];
        float t = a * 0.7f - b * 0.4f + (v[2] > 5.0f ? 2.0f : 0.0f) + (v[3] > 3.0f && a > 4.0f ? 1.5f : 0.0f);
        y[r] = kind == 0 ? t : kind == 1 ? (t > 1.0f ? 1.0f : 0.0f) : (t < 0.0f ? 0.0f : t < 3.0f ? 1.0f : 2.0f);
    }
    sb_dataset *d = NULL;
    if (sb_dataset_from_matrix(x, n, XF, &d) == SB_OK) sb_dataset_set_label(d, y, n);
    free(x);
    free(y);
    return d;
}

/* A model of family (0 gbdt, 1 forest, 2 isolation forest) fitted on d with
 * the parameter text; NULL (the error printed) when the fit fails. */
static sb_model *xfit(int family, const char *text, const sb_dataset *d) {
    sb_params *p = NULL;
    sb_model *m = NULL;
    sb_status st = sb_params_create(&p);
    if (st == SB_OK) st = sb_params_parse(p, text);
    if (st == SB_OK)
        st = family == 0 ? sb_gbdt_fit(p, d, NULL, NULL, &m)
             : family == 1 ? sb_forest_fit(p, d, NULL, &m)
                           : sb_isolation_forest_fit(p, d, NULL, &m);
    sb_params_free(p);
    if (st != SB_OK) fprintf(stderr, "fit %s: %s\n", text, sb_last_error());
    return m;
}

/* Predictions of kind on device into a new buffer (*n values), or NULL with
 * the library's error left in sb_last_error(). */
static float *xpredict(const sb_model *m, const sb_dataset *d, sb_predict_kind kind, const char *device,
                       size_t *n) {
    size_t need = 0;
    if (sb_model_predict_on(m, d, kind, device, NULL, 0, &need) != SB_OK) return NULL;
    float *out = malloc(sizeof(float) * (need ? need : 1));
    if (sb_model_predict_on(m, d, kind, device, out, need, NULL) != SB_OK) {
        free(out);
        return NULL;
    }
    *n = need;
    return out;
}

/* The value of feature subset S (a bit mask) for row x in tree t: the
 * cover-weighted walk, in double. */
static double subset_value(const sb_tree *t, int32_t k, const float *x, unsigned S) {
    const sb_tree_node *n = &t->nodes[k];
    if (n->feature < 0) return n->value;
    if (S >> n->feature & 1u) {
        const float v = x[n->feature];
        const int left = isnan(v) ? n->default_left : v <= n->threshold;
        return subset_value(t, left ? n->left : n->right, x, S);
    }
    const double cl = (double)t->nodes[n->left].count, cr = (double)t->nodes[n->right].count;
    return (cl * subset_value(t, n->left, x, S) + cr * subset_value(t, n->right, x, S)) / (double)n->count;
}

/* Exact Shapley values of every feature for row x: phi (F + 1 per class, the
 * last the expected value with the base score), summed over the trees. */
static void brute_shap(const sb_model *m, const float *x, double *phi) {
    const int32_t F = m->num_features, K = m->num_class;
    double fact[XF + 1];
    fact[0] = 1.0;
    for (int i = 1; i <= F; i++) fact[i] = fact[i - 1] * i;
    for (int32_t i = 0; i < K * (F + 1); i++) phi[i] = 0.0;
    for (int32_t c = 0; c < K; c++) phi[c * (F + 1) + F] = m->base_score[c];
    for (int32_t t = 0; t < m->ntrees; t++) {
        double *ph = phi + (t % K) * (F + 1);
        double val[1 << XF];
        for (unsigned S = 0; S < (1u << F); S++) val[S] = subset_value(&m->trees[t], 0, x, S);
        ph[F] += val[0];
        for (int32_t f = 0; f < F; f++)
            for (unsigned S = 0; S < (1u << F); S++) {
                if (S >> f & 1u) continue;
                const int s = __builtin_popcount(S);
                ph[f] += fact[s] * fact[F - s - 1] / fact[F] * (val[S | 1u << f] - val[S]);
            }
    }
}

/* The scale of the bounds: per class, |base| plus every tree's largest |leaf|. */
static double leaf_scale(const sb_model *m) {
    double s = 0.0;
    for (int32_t t = 0; t < m->ntrees; t++) {
        double mx = 0.0;
        for (int32_t k = 0; k < m->trees[t].nnodes; k++)
            if (m->trees[t].nodes[k].feature < 0 && fabs(m->trees[t].nodes[k].value) > mx)
                mx = fabs(m->trees[t].nodes[k].value);
        s += mx;
    }
    for (int32_t c = 0; c < m->num_class; c++) s += fabs(m->base_score[c]);
    return s;
}

/* The checks of one model on held-out rows: brute force, local accuracy,
 * threads, pred_leaf against prediction. Returns the largest errors seen
 * (relative to leaf_scale) through *brute and *local. */
static void check_model(const sb_model *m, const sb_dataset *test, double *brute, double *local) {
    const int32_t F = m->num_features, K = m->num_class, T = m->ntrees;
    int64_t n = 0;
    sb_dataset_shape(test, &n, NULL);
    size_t nc = 0, nr = 0, nl = 0;
    sb_set_num_threads(1);
    float *c1 = xpredict(m, test, SB_PREDICT_CONTRIB, NULL, &nc);
    float *raw = xpredict(m, test, SB_PREDICT_RAW, NULL, &nr);
    float *leaf = xpredict(m, test, SB_PREDICT_LEAF, NULL, &nl);
    SB_CHECK(c1 && raw && leaf);
    if (!c1 || !raw || !leaf) return;
    SB_CHECK(nc == (size_t)n * (size_t)K * (size_t)(F + 1));
    SB_CHECK(nl == (size_t)n * (size_t)T);
    /* threads: identical bits */
    for (int th = 2; th <= 7; th += 5) {
        sb_set_num_threads(th);
        size_t n2 = 0;
        float *c2 = xpredict(m, test, SB_PREDICT_CONTRIB, NULL, &n2);
        float *l2 = xpredict(m, test, SB_PREDICT_LEAF, NULL, &n2);
        SB_CHECK(c2 && memcmp(c1, c2, sizeof(float) * nc) == 0);
        SB_CHECK(l2 && memcmp(leaf, l2, sizeof(float) * nl) == 0);
        free(c2);
        free(l2);
    }
    sb_set_num_threads(0);
    /* int32 leaves equal the float ones */
    int32_t *il = malloc(sizeof(int32_t) * nl);
    size_t need = 0;
    SB_CHECK(sb_model_predict_leaf(m, test, NULL, il, nl, &need) == SB_OK && need == nl);
    for (size_t i = 0; i < nl; i++) SB_CHECK((float)il[i] == leaf[i]);
    free(il);
    const double scale = leaf_scale(m);
    double *ex = malloc(sizeof(double) * (size_t)K * (size_t)(F + 1));
    int32_t *lno = malloc(sizeof(int32_t) * (1 << 20));
    *brute = *local = 0.0;
    const float *x = test->t.x;
    for (int64_t r = 0; r < n; r++) {
        const float *row = x + r * F, *c = c1 + r * K * (F + 1);
        if (F <= XF && r < 60) {
            brute_shap(m, row, ex);
            for (int32_t i = 0; i < K * (F + 1); i++) {
                const double e = fabs((double)c[i] - ex[i]) / scale;
                if (e > *brute) *brute = e;
            }
        }
        for (int32_t k = 0; k < K; k++) {
            double s = 0.0;
            for (int32_t f = 0; f <= F; f++) s += c[k * (F + 1) + f];
            const double e = fabs(s - (double)raw[r * K + k]) / scale;
            if (e > *local) *local = e;
        }
        /* pred_leaf: the leaves' values, added as prediction adds them, give the margins' bits */
        float mg[16];
        for (int32_t k = 0; k < K; k++) mg[k] = m->base_score[k];
        for (int32_t t = 0; t < T; t++) {
            const sb_tree *tr = &m->trees[t];
            sb_tree_leaf_numbers(tr, lno, NULL);
            int32_t node = -1;
            for (int32_t k = 0; k < tr->nnodes; k++)
                if (lno[k] == (int32_t)leaf[r * T + t]) node = k;
            SB_CHECK(node >= 0);
            if (node >= 0) mg[t % K] = mg[t % K] + tr->nodes[node].value;
        }
        for (int32_t k = 0; k < K; k++) SB_CHECK(sb_f2u(mg[k]) == sb_f2u(raw[r * K + k]));
    }
    free(ex);
    free(lno);
    free(c1);
    free(raw);
    free(leaf);
}

/* The stated bounds (docs/explain.md): each contribution within 2^-18 of the
 * model's leaf scale of the exact Shapley value; contributions plus expected
 * value within 2^-18 of the scale of the raw margin. */
#define BRUTE_BOUND (1.0 / 262144.0)
#define LOCAL_BOUND (1.0 / 262144.0)

SB_TEST(test_explain_gbdt_treeshap_exact_and_local) {
    sb_dataset *tr0 = xtable(600, 0, 1), *tr1 = xtable(600, 1, 2), *tr2 = xtable(600, 2, 3), *te = xtable(200, 0, 9);
    const char *texts[3] = {"objective=regression n_estimators=15 num_leaves=12 min_samples_leaf=5",
                            "objective=binary n_estimators=12 num_leaves=10 min_samples_leaf=5 subsample=0.7",
                            "objective=multiclass n_estimators=6 num_leaves=8 min_samples_leaf=5"};
    sb_dataset *trs[3] = {tr0, tr1, tr2};
    for (int i = 0; i < 3; i++) {
        sb_model *m = xfit(0, texts[i], trs[i]);
        SB_CHECK(m != NULL);
        if (!m) continue;
        double b = 1, l = 1;
        check_model(m, te, &b, &l);
        fprintf(stderr, "  %s: brute %.3g local %.3g (of the leaf scale)\n", texts[i], b, l);
        SB_CHECK(b <= BRUTE_BOUND);
        SB_CHECK(l <= LOCAL_BOUND);
        sb_model_free(m);
    }
    sb_dataset_free(tr0);
    sb_dataset_free(tr1);
    sb_dataset_free(tr2);
    sb_dataset_free(te);
}

SB_TEST(test_explain_forests_treeshap_exact_and_local) {
    sb_dataset *tr0 = xtable(500, 0, 4), *tr2 = xtable(500, 2, 5), *te = xtable(150, 0, 10);
    struct { int family; const char *text; sb_dataset *d; } cases[] = {
        {1, "model=random_forest objective=regression n_estimators=8 max_depth=6 random_state=3", tr0},
        {1, "model=random_forest objective=classification n_estimators=6 max_depth=5 random_state=4", tr2},
        {1, "model=extra_trees objective=classification n_estimators=6 min_samples_leaf=3 random_state=5", tr2},
        {2, "n_estimators=10 max_samples=64 random_state=6", tr0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sb_model *m = xfit(cases[i].family, cases[i].text, cases[i].d);
        SB_CHECK(m != NULL);
        if (!m) continue;
        double b = 1, l = 1;
        check_model(m, te, &b, &l);
        fprintf(stderr, "  %s: brute %.3g local %.3g (of the leaf scale)\n", cases[i].text, b, l);
        SB_CHECK(b <= BRUTE_BOUND);
        SB_CHECK(l <= LOCAL_BOUND);
        sb_model_free(m);
    }
    sb_dataset_free(tr0);
    sb_dataset_free(tr2);
    sb_dataset_free(te);
}

/* LightGBM's numbering on a hand-made tree: the root splits (children 1, 2),
 * then node 2 (3, 4), then node 1 (5, 6). Leaves: 3 -> 1, 4 -> 2, 5 -> 0, 6 -> 3;
 * splits 0 (root), 1 (node 2), 2 (node 1). */
SB_TEST(test_explain_leaf_numbers_lightgbm_order) {
    sb_tree_node nd[7];
    memset(nd, 0, sizeof nd);
    const int32_t L[7] = {1, 5, 3, -1, -1, -1, -1}, R[7] = {2, 6, 4, -1, -1, -1, -1};
    for (int k = 0; k < 7; k++) {
        nd[k].feature = L[k] >= 0 ? 0 : -1;
        nd[k].left = L[k];
        nd[k].right = R[k];
    }
    sb_tree t = {7, nd, 0, NULL, NULL};
    int32_t lno[7], sp[7];
    sb_tree_leaf_numbers(&t, lno, sp);
    const int32_t wl[7] = {-1, -1, -1, 1, 2, 0, 3}, ws[7] = {0, 2, 1, -1, -1, -1, -1};
    for (int k = 0; k < 7; k++) {
        SB_CHECK(lno[k] == wl[k]);
        SB_CHECK(sp[k] == ws[k]);
    }
    sb_tree one = {1, nd + 3, 0, NULL, NULL};
    sb_tree_leaf_numbers(&one, lno, sp);
    SB_CHECK(lno[0] == 0 && sp[0] == -1);
}

/* Counts that do not add up (a file written without them) are refused by name
 * before any row; pred_leaf still works; another family is refused. */
SB_TEST(test_explain_refusals) {
    sb_dataset *tr = xtable(300, 0, 7);
    sb_model *m = xfit(0, "objective=regression n_estimators=3 num_leaves=6 min_samples_leaf=5", tr);
    SB_CHECK(m != NULL);
    if (!m) return;
    size_t need = 0;
    SB_CHECK(sb_model_predict(m, tr, SB_PREDICT_CONTRIB, NULL, 0, &need) == SB_OK && need == 300u * (XF + 1));
    m->trees[1].nodes[0].count = 0;
    SB_CHECK(sb_model_predict(m, tr, SB_PREDICT_CONTRIB, NULL, 0, &need) == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "tree 1's root has count 0") != NULL);
    m->trees[1].nodes[0].count = 300;
    for (int32_t k = 0; k < m->trees[2].nnodes; k++) m->trees[2].nodes[k].count = 0;
    m->trees[2].nodes[0].count = 300;
    SB_CHECK(sb_model_predict(m, tr, SB_PREDICT_CONTRIB, NULL, 0, &need) == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "tree 2 node 0 has count 300 where its children have 0 and 0") != NULL);
    SB_CHECK(sb_model_predict(m, tr, SB_PREDICT_LEAF, NULL, 0, &need) == SB_OK && need == 300u * 3u);
    int32_t small[4];
    SB_CHECK(sb_model_predict_leaf(m, tr, NULL, small, 4, &need) == SB_ERR_LIMIT);
    SB_CHECK(sb_model_predict_leaf(m, tr, "nonsense", NULL, 0, &need) == SB_ERR_INVALID_ARGUMENT);
    sb_model_free(m);
    sb_dataset_free(tr);
}

/* The devices compute the same bits as the host: leaves and contributions of
 * a multiclass boosting model and a forest classifier on every GPU backend
 * this machine offers (OpenCL on PoCL in CI). An absent backend is printed as
 * skipped, never a pass; naming it in SAMEBITS_PARITY_REQUIRE (as
 * device_ops) makes its absence a failure. */
SB_TEST(test_explain_devices_match_host) {
    sb_dataset *tr = xtable(400, 2, 11), *te = xtable(3000, 0, 12);
    sb_model *ms[2] = {xfit(0, "objective=multiclass n_estimators=4 num_leaves=10 min_samples_leaf=5", tr),
                       xfit(1, "model=random_forest objective=classification n_estimators=5 random_state=2", tr)};
    const char *devs[2] = {"opencl", "cuda"};
    const char *req = getenv("SAMEBITS_PARITY_REQUIRE");
    for (int dv = 0; dv < 2; dv++) {
        for (int i = 0; i < 2; i++) {
            SB_CHECK(ms[i] != NULL);
            if (!ms[i]) continue;
            for (int kind = SB_PREDICT_LEAF; kind <= SB_PREDICT_CONTRIB; kind++) {
                size_t nh = 0, nd = 0;
                float *h = xpredict(ms[i], te, (sb_predict_kind)kind, NULL, &nh);
                float *d = xpredict(ms[i], te, (sb_predict_kind)kind, devs[dv], &nd);
                SB_CHECK(h != NULL);
                if (!d) {
                    printf("  %s: skipped (%s)\n", devs[dv], sb_last_error());
                    SB_CHECK(!(req && strstr(req, devs[dv])));
                    free(h);
                    goto next_device;
                }
                SB_CHECK(nh == nd && memcmp(h, d, sizeof(float) * nh) == 0);
                printf("  %s model %d kind %d: %s\n", devs[dv], i, kind,
                       nh == nd && !memcmp(h, d, sizeof(float) * nh) ? "identical" : "DIFFERENT");
                if (kind == SB_PREDICT_LEAF) {
                    int32_t *il = malloc(sizeof(int32_t) * nh);
                    SB_CHECK(sb_model_predict_leaf(ms[i], te, devs[dv], il, nh, NULL) == SB_OK);
                    for (size_t k = 0; k < nh; k++) SB_CHECK((float)il[k] == h[k]);
                    free(il);
                }
                free(h);
                free(d);
            }
        }
    next_device:;
    }
    sb_model_free(ms[0]);
    sb_model_free(ms[1]);
    sb_dataset_free(tr);
    sb_dataset_free(te);
}

/* sb_model_dump's buffer rules: cap 0 asks, a short cap is SB_ERR_LIMIT, the
 * full cap gets the text; an unknown format is refused by name. */
SB_TEST(test_explain_dump_buffers) {
    sb_dataset *tr = xtable(200, 0, 13);
    sb_model *m = xfit(0, "objective=regression n_estimators=2 num_leaves=4 min_samples_leaf=5", tr);
    SB_CHECK(m != NULL);
    if (!m) return;
    size_t need = 0, n2 = 0;
    SB_CHECK(sb_model_dump(m, "text", NULL, 0, &need) == SB_OK && need > 1);
    char *buf = malloc(need);
    SB_CHECK(sb_model_dump(m, "text", buf, need - 1, &n2) == SB_ERR_LIMIT && n2 == need);
    SB_CHECK(sb_model_dump(m, "text", buf, need, NULL) == SB_OK && strlen(buf) == need - 1);
    SB_CHECK(strstr(buf, "tree 1 class 0") != NULL && strstr(buf, "leaf 0: value") != NULL);
    SB_CHECK(sb_model_dump(m, "xml", buf, need, NULL) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "json or text") != NULL);
    free(buf);
    sb_model_free(m);
    sb_dataset_free(tr);
}

/* Every allocation of pred_leaf, pred_contrib and the dump, failed in turn:
 * each failure is a clean SB_ERR_OUT_OF_MEMORY with a message (or, where the
 * library tolerates it, the clean run's bytes), never other output. */
SB_TEST(test_explain_allocation_failures) {
    sb_dataset *tr = xtable(300, 2, 14);
    sb_model *m = xfit(0, "objective=multiclass n_estimators=2 num_leaves=5 min_samples_leaf=5", tr);
    SB_CHECK(m != NULL);
    if (!m) return;
    sb_set_num_threads(1);
    for (int what = 0; what < 3; what++) {
        size_t need = 0;
        sb_status st = what == 2 ? sb_model_dump(m, "json", NULL, 0, &need)
                                 : sb_model_predict(m, tr, what ? SB_PREDICT_CONTRIB : SB_PREDICT_LEAF, NULL, 0, &need);
        SB_CHECK(st == SB_OK);
        char *ref = calloc(need + 1, 4), *got = calloc(need + 1, 4);
        st = what == 2 ? sb_model_dump(m, "json", ref, need, NULL)
                       : sb_model_predict(m, tr, what ? SB_PREDICT_CONTRIB : SB_PREDICT_LEAF, (float *)ref, need, NULL);
        SB_CHECK(st == SB_OK);
        long n;
        for (n = 1; n < 10000; n++) {
            memset(got, 0, (need + 1) * 4);
            sb_alloc_fail_at_for_tests(n);
            st = what == 2 ? sb_model_dump(m, "json", got, need, NULL)
                           : sb_model_predict(m, tr, what ? SB_PREDICT_CONTRIB : SB_PREDICT_LEAF, (float *)got, need,
                                              NULL);
            long used = sb_alloc_count_for_tests();
            sb_alloc_fail_at_for_tests(0);
            if (used < n) {
                SB_CHECK(st == SB_OK && memcmp(ref, got, need * (what == 2 ? 1 : 4)) == 0);
                break;
            }
            SB_CHECK((st == SB_ERR_OUT_OF_MEMORY && sb_last_error()[0] != '\0') ||
                     (st == SB_OK && memcmp(ref, got, need * (what == 2 ? 1 : 4)) == 0));
        }
        printf("  explain %d: %ld allocation sites, each failure clean\n", what, n - 1);
        SB_CHECK(n > 1);
        free(ref);
        free(got);
    }
    sb_set_num_threads(0);
    sb_model_free(m);
    sb_dataset_free(tr);
}
