/*
 * test_model_categorical.c: categorical features (issue 20) below the
 * estimators: the binning of codes, the category search of kernels/tree.h
 * against an enumeration written here from its contract, and format version
 * 4 (category sets in trees, category names), frozen by a golden file:
 *   tests/data/models/v4-categorical.sbm, regenerated only for a new format
 *   version: SB_WRITE_GOLDEN=1 build/sb_unit test_model_categorical_write_golden
 */
#include "sb_test.h"
#include "samebits_cert.h"
#include "core/internal.h"
#include "kernels/tree.h"
#include "models/model.h"
#include "models/trees/binning.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GOLDEN_V4_NAME "models/v4-categorical.sbm"
#define GOLDEN_V4_DIGEST "ace96aa444288b78fe741c83a6052bd861ad51a933fbbe64b8cec457fa963338"

static uint32_t fbits(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

/* ---- binning of codes ---- */

SB_TEST(test_categorical_bins_keep_the_most_frequent_codes) {
    /* codes 7 (x4), 3 (x3), 1000 (x3), 2 (x2), 9 (x1); -1 and NaN missing */
    const float x[] = {7, 7, 7, 7, 3, 3, 3, 1000, 1000, 1000, 2, 2, 9, -1, NAN, -0.0f};
    const int64_t n = (int64_t)(sizeof x / sizeof x[0]);
    const uint8_t cat[1] = {1};
    sb_bins b;
    /* max_bin 3: 7, then 3 and 1000 (a tie of counts: the smaller code first), in code order */
    SB_CHECK(sb_bins_build_cat(x, n, 1, 3, 1, 0, cat, &b) == SB_OK);
    SB_CHECK(b.nbins[0] == 3 && b.upper[0] == 3.0f && b.upper[1] == 7.0f && b.upper[2] == 1000.0f);
    SB_CHECK(b.cat && b.cat[0] == 1);
    SB_CHECK(sb_bin_of(&b, 0, 3.0f) == 1 && sb_bin_of(&b, 0, 7.0f) == 2 && sb_bin_of(&b, 0, 1000.0f) == 3);
    SB_CHECK(sb_bin_of(&b, 0, 2.0f) == 0);  /* not kept: with the missing values */
    SB_CHECK(sb_bin_of(&b, 0, 7.5f) == 0);  /* no code */
    SB_CHECK(sb_bin_of(&b, 0, -1.0f) == 0 && sb_bin_of(&b, 0, NAN) == 0);
    uint8_t binned[16];
    sb_bins_apply(&b, x, n, 1, binned);
    for (int64_t r = 0; r < n; r++) SB_CHECK(binned[r] == sb_bin_of(&b, 0, x[r]));
    sb_bins_release(&b);
    /* max_bin 255: every code; -0 is code 0, which is one of them */
    SB_CHECK(sb_bins_build_cat(x, n, 1, 255, 1, 0, cat, &b) == SB_OK);
    SB_CHECK(b.nbins[0] == 6 && b.upper[0] == 0.0f && b.upper[5] == 1000.0f);
    SB_CHECK(sb_bin_of(&b, 0, 0.0f) == 1 && sb_bin_of(&b, 0, -0.0f) == 1);
    sb_bins_release(&b);
    /* no code at all: one value bin that nothing reaches */
    const float none[3] = {NAN, -2, -5};
    SB_CHECK(sb_bins_build_cat(none, 3, 1, 255, 1, 0, cat, &b) == SB_OK);
    SB_CHECK(b.nbins[0] == 1 && sb_bin_of(&b, 0, 0.0f) == 0);
    sb_bins_release(&b);
}

/* ---- the category search against its contract ---- */

typedef struct cref {
    float gain;
    uint32_t bits[8];
    int valid;
} cref;

/* The best split by the documented rule, spelled here: one-vs-rest when at
 * most max_cat_to_onehot categories are present, else the categories with at
 * least cat_smooth rows sorted by g / (h + cat_smooth) (ties: smaller bin),
 * the first t in either direction, a cut tried once min_data_per_group rows
 * gathered since the last one tried; the first best candidate in the order
 * one-vs-rest by bin, then direction 0 by t, then direction 1 by t. */
static cref reference_best(const sb_k_hbin *h, int32_t nb, int64_t G, int64_t H, int64_t C,
                           const sb_k_split_rules *r, const sb_k_cat_rules *cr) {
    cref best;
    memset(&best, 0, sizeof best);
    int32_t used = 0;
    for (int32_t b = 1; b <= nb; b++) used += h[b].c > 0;
    sb_k_split_rules rc = *r;
    int32_t order[256], n = 0;
    if (used > cr->max_cat_to_onehot) {
        rc.reg_lambda = r->reg_lambda + cr->cat_l2;
        for (int32_t b = 1; b <= nb; b++)
            if (h[b].c > 0 && (float)h[b].c >= cr->cat_smooth) order[n++] = b;
        for (int32_t i = 1; i < n; i++) /* a selection by (key, bin), independent of the kernel's insertion */
            for (int32_t j = i; j > 0; j--) {
                const int32_t a = order[j - 1], c = order[j];
                const float ka = sb_k_dequant(h[a].g, r->g_scale) / (sb_k_dequant(h[a].h, r->h_scale) + cr->cat_smooth);
                const float kc = sb_k_dequant(h[c].g, r->g_scale) / (sb_k_dequant(h[c].h, r->h_scale) + cr->cat_smooth);
                if (ka > kc || (ka == kc && a > c)) {
                    order[j - 1] = c;
                    order[j] = a;
                }
            }
    }
    const float ps = sb_k_node_score(G, H, r); /* the parent at reg_lambda, whatever the children's L2 */
    const sb_k_mono none = {0, 0, 0.0f, 0.0f};
    if (used <= cr->max_cat_to_onehot) {
        for (int32_t b = 1; b <= nb; b++) {
            if (h[b].c == 0) continue;
            sb_k_split one;
            memset(&one, 0, sizeof one);
            sb_k_split_consider_c(&rc, &none, G, H, C, ps, 0, b, 0, h[b].g, h[b].h, h[b].c, &one);
            if (one.valid && (!best.valid || one.gain > best.gain)) {
                memset(&best, 0, sizeof best);
                best.valid = 1;
                best.gain = one.gain;
                best.bits[b / 32] |= 1u << (b % 32);
            }
        }
        return best;
    }
    const int32_t tmax = cr->max_cat_threshold < (n + 1) / 2 ? cr->max_cat_threshold : (n + 1) / 2;
    for (int32_t dir = 0; dir < 2; dir++) {
        int64_t last = 0; /* rows left of the last cut tried */
        for (int32_t t = 1; t <= tmax; t++) {
            int64_t lg = 0, lh = 0, lc = 0;
            uint32_t bits[8] = {0};
            for (int32_t i = 0; i < t; i++) {
                const int32_t b = order[dir == 0 ? i : n - 1 - i];
                lg += h[b].g, lh += h[b].h, lc += h[b].c;
                bits[b / 32] |= 1u << (b % 32);
            }
            /* the contract's cut rule: the left side's limits first (keep going), then the right
             * side's (stop), then a group of min_data_per_group rows since the last cut tried */
            if (lc < r->min_samples_leaf || (float)lh / r->h_scale < r->min_child_weight) continue;
            if (C - lc < r->min_samples_leaf || C - lc < cr->min_data_per_group ||
                (float)(H - lh) / r->h_scale < r->min_child_weight)
                break;
            if (lc - last < cr->min_data_per_group) continue;
            last = lc;
            sb_k_split one;
            memset(&one, 0, sizeof one);
            sb_k_split_consider_c(&rc, &none, G, H, C, ps, 0, 0, 0, lg, lh, lc, &one);
            if (one.valid && (!best.valid || one.gain > best.gain)) {
                best.valid = 1;
                best.gain = one.gain;
                memcpy(best.bits, bits, sizeof bits);
            }
        }
    }
    return best;
}

SB_TEST(test_categorical_search_matches_its_contract) {
    uint64_t s = 0x243F6A8885A308D3ull;
    int cases = 0, splits = 0;
    for (int k = 0; k < 400; k++) {
        sb_k_hbin h[256];
        memset(h, 0, sizeof h);
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const int32_t nb = 1 + (int32_t)((s >> 33) % (k < 200 ? 12 : 60));
        int64_t G = 0, H = 0, C = 0;
        for (int32_t b = 0; b <= nb; b++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            const int64_t c = (s >> 40) % 5 == 0 ? 0 : 1 + (int64_t)((s >> 20) % 300);
            h[b].c = c;
            h[b].h = c * (1 + (int64_t)((s >> 50) % 8)) * 1024;
            /* categories in pairs of equal sums now and then: ties of keys */
            h[b].g = (b > 1 && (s >> 12) % 4 == 0) ? h[b - 1].g * (c == h[b - 1].c) : ((int64_t)((s >> 8) % 4001) - 2000) * c * 64;
            if (b > 1 && (s >> 12) % 4 == 0 && c == h[b - 1].c) h[b].h = h[b - 1].h;
            G += h[b].g, H += h[b].h, C += c;
        }
        const sb_k_split_rules r = {5, 1e-3f, 0.0f, 1.0f, 1024.0f, 1024.0f, k % 3 == 0 ? 0.5f : 0.0f};
        const sb_k_cat_rules cr = {k % 7 == 0 ? 8 : 4, 1 + k % 5, k % 2 ? 20 : 1, k % 4 ? 10.0f : 0.5f,
                                   k % 3 ? 10.0f : 0.0f};
        sb_k_split best;
        memset(&best, 0, sizeof best);
        uint32_t bits[8];
        memset(bits, 0xAB, sizeof bits);
        const sb_k_mono free = {0, 0, 0.0f, 0.0f};
        sb_k_cat_scan(h, nb, 0, G, H, C, sb_k_node_score(G, H, &r), &r, &cr, &free, &best, bits);
        const cref want = reference_best(h, nb, G, H, C, &r, &cr);
        SB_CHECK(best.valid == want.valid);
        if (best.valid && want.valid) {
            SB_CHECK(fbits(best.gain) == fbits(want.gain));
            SB_CHECK(memcmp(bits, want.bits, sizeof bits) == 0);
            /* the left sums are the set's */
            int64_t lc = 0;
            for (int32_t b = 1; b <= nb; b++) lc += sb_k_cat_has(bits, (uint32_t)b) ? h[b].c : 0;
            SB_CHECK(lc == best.lc && !sb_k_cat_has(bits, 0));
            splits++;
        }
        cases++;
    }
    SB_CHECK(cases == 400 && splits > 100);
}

/* ---- format version 4 ---- */

static sb_tree_node node(int32_t feature, float threshold, int32_t left, int32_t right, float value, float gain,
                         int64_t count) {
    sb_tree_node n;
    memset(&n, 0, sizeof n);
    n.feature = feature, n.threshold = threshold, n.left = left, n.right = right, n.value = value, n.gain = gain,
    n.count = count;
    return n;
}

/* The golden categorical model: regression, 3 features; tree 0 splits
 * feature 0 on the codes {1, 5, 1000} (left: 0.5), then x1 <= 2 (0.25 : -1);
 * tree 1 splits feature 2 on {0} (left 0.125, right -0.125); category names
 * for features 0 (none split on... five names) and 2. */
static sb_model *categorical_model(void) {
    sb_model *m = NULL;
    if (sb_model_alloc(&m) != SB_OK) return NULL;
    /* the golden file's profile is frozen (sb-identical-v5, as it was written): a
     * profile bump moves no byte of a format's golden layout */
    m->profile = sb_model_profiles[4];
    m->family = SB_FAMILY_GBDT;
    m->objective = SB_OBJ_REGRESSION;
    m->num_class = 1;
    m->num_features = 3;
    m->numeric_mode = SB_MODE_IDENTICAL;
    m->base_score = sb_malloc(sizeof(float));
    m->base_score[0] = 1.0f;
    m->params = sb_strdup("categorical_feature=0,2\nlearning_rate=0.1\n");
    m->ntrees = 2;
    m->trees = sb_calloc(2, sizeof(sb_tree));
    sb_tree *t0 = &m->trees[0], *t1 = &m->trees[1];
    t0->nnodes = 5;
    t0->nodes = sb_malloc(5 * sizeof(sb_tree_node));
    t0->nodes[0] = node(0, 0.0f, 1, 2, 0.0f, 3.0f, 100);
    t0->nodes[0].categorical = 1, t0->nodes[0].cat_set = 0;
    t0->nodes[1] = node(-1, 0.0f, -1, -1, 0.5f, 0.0f, 30);
    t0->nodes[2] = node(1, 2.0f, 3, 4, 0.0f, 1.5f, 70);
    t0->nodes[2].default_left = 1;
    t0->nodes[3] = node(-1, 0.0f, -1, -1, 0.25f, 0.0f, 40);
    t0->nodes[4] = node(-1, 0.0f, -1, -1, -1.0f, 0.0f, 30);
    t0->ncat = 1;
    t0->cat_start = sb_malloc(2 * sizeof(int32_t));
    t0->cat_codes = sb_malloc(3 * sizeof(float));
    t0->cat_start[0] = 0, t0->cat_start[1] = 3;
    t0->cat_codes[0] = 1.0f, t0->cat_codes[1] = 5.0f, t0->cat_codes[2] = 1000.0f;
    t1->nnodes = 3;
    t1->nodes = sb_malloc(3 * sizeof(sb_tree_node));
    t1->nodes[0] = node(2, 0.0f, 1, 2, 0.0f, 0.5f, 100);
    t1->nodes[0].categorical = 1, t1->nodes[0].cat_set = 0;
    t1->nodes[1] = node(-1, 0.0f, -1, -1, 0.125f, 0.0f, 50);
    t1->nodes[2] = node(-1, 0.0f, -1, -1, -0.125f, 0.0f, 50);
    t1->ncat = 1;
    t1->cat_start = sb_malloc(2 * sizeof(int32_t));
    t1->cat_codes = sb_malloc(sizeof(float));
    t1->cat_start[0] = 0, t1->cat_start[1] = 1;
    t1->cat_codes[0] = 0.0f;
    const char *const f0[5] = {"a", "b", "c", "d", "\xc3\xa9t\xc3\xa9"};
    const char *const f2[2] = {"no", "yes"};
    if (sb_model_set_category_names(m, 2, f2, 2) != SB_OK || sb_model_set_category_names(m, 0, f0, 5) != SB_OK) {
        sb_model_free(m);
        return NULL;
    }
    return m;
}

static uint8_t *to_bytes(const sb_model *m, size_t *len) {
    size_t need = 0;
    if (sb_model_to_bytes(m, NULL, 0, &need) != SB_OK) return NULL;
    uint8_t *b = malloc(need);
    if (b && sb_model_to_bytes(m, b, need, len) != SB_OK) {
        free(b);
        return NULL;
    }
    return b;
}

static uint8_t *read_golden(size_t *len) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", sb_test_data_dir(), GOLDEN_V4_NAME);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* Writes the version-4 golden file; only when SB_WRITE_GOLDEN=1 (by hand). */
SB_TEST(test_categorical_write_golden) {
    const char *w = getenv("SB_WRITE_GOLDEN");
    if (!w || strcmp(w, "1") != 0) return;
    char path[512], hex[65];
    snprintf(path, sizeof path, "%s/%s", sb_test_data_dir(), GOLDEN_V4_NAME);
    sb_model *m = categorical_model();
    SB_CHECK(m && sb_model_save(m, path) == SB_OK && sb_model_digest(m, hex) == SB_OK);
    printf("wrote %s, digest %s\n", path, hex);
    sb_model_free(m);
}

/* Raw scores walked by hand: base 1; tree 0: x0 in {1, 5, 1000} ? 0.5 : (x1
 * <= 2 or NaN ? 0.25 : -1); tree 1: x2 == 0 (-0 too) ? 0.125 : -0.125. */
static int predicts_by_hand(const sb_model *m) {
    const float x[7 * 3] = {5, 9, 0,      5.5f, 1, 1,     -0.0f, 3, -0.0f,  1000, NAN, NAN,
                            NAN, NAN, 2,  1e9f, 2, 0,     -1, 2.5f, 0.5f};
    const float want[7] = {1.625f, 1.125f, 0.125f, 1.375f, 1.125f, 1.375f, -0.125f};
    sb_dataset *d = NULL;
    float out[7];
    size_t got = 0;
    int ok = sb_dataset_from_matrix(x, 7, 3, &d) == SB_OK && sb_model_predict(m, d, SB_PREDICT_RAW, out, 7, &got) == SB_OK;
    for (int r = 0; ok && r < 7; r++) ok = fbits(out[r]) == fbits(want[r]);
    if (!ok) fprintf(stderr, "  categorical prediction differs: %s\n", sb_last_error());
    sb_dataset_free(d);
    return ok;
}

SB_TEST(test_categorical_golden_v4) {
    size_t glen = 0, len = 0;
    uint8_t *g = read_golden(&glen);
    sb_model *m = categorical_model(), *back = NULL;
    SB_CHECK(g && m);
    if (!g || !m) goto done;
    uint8_t *b = to_bytes(m, &len);
    SB_CHECK(b && len == glen && memcmp(b, g, glen) == 0 && g[8] == 4);
    free(b);
    char hex[65];
    sb_hex(g + glen - 32, 32, hex);
    SB_CHECK(strcmp(hex, GOLDEN_V4_DIGEST) == 0);
    SB_CHECK(sb_model_from_bytes(g, glen, &back) == SB_OK && back);
    if (!back) goto done;
    uint8_t *b2 = to_bytes(back, &len);
    SB_CHECK(b2 && len == glen && memcmp(b2, g, glen) == 0); /* read back, it writes the same file */
    free(b2);
    SB_CHECK(predicts_by_hand(m) && predicts_by_hand(back));
    int32_t n = -1;
    const char *name = NULL;
    SB_CHECK(sb_model_get_category_count(back, 0, &n) == SB_OK && n == 5);
    SB_CHECK(sb_model_get_category_name(back, 0, 4, &name) == SB_OK && strcmp(name, "\xc3\xa9t\xc3\xa9") == 0);
    SB_CHECK(sb_model_get_category_count(back, 1, &n) == SB_OK && n == 0);
    SB_CHECK(sb_model_get_category_name(back, 1, 0, &name) == SB_ERR_INVALID_ARGUMENT);
    /* versions 1 to 3 cannot hold it */
    for (uint32_t v = 1; v <= 3; v++) SB_CHECK(sb_model_to_bytes_version(m, v, NULL, 0, &len) == SB_ERR_INVALID_ARGUMENT);
    /* every bit flip and every truncation refused */
    int bad = 0;
    for (size_t i = 0; i < glen * 8; i++) {
        g[i / 8] ^= (uint8_t)(1u << (i % 8));
        sb_model *x = NULL;
        if (sb_model_from_bytes(g, glen, &x) != SB_ERR_INVALID_INPUT || x) bad++;
        sb_model_free(x);
        g[i / 8] ^= (uint8_t)(1u << (i % 8));
    }
    for (size_t k = 0; k < glen; k++) {
        uint8_t *c = malloc(k ? k : 1);
        memcpy(c, g, k);
        sb_model *x = NULL;
        if (sb_model_from_bytes(c, k, &x) != SB_ERR_INVALID_INPUT || x) bad++;
        sb_model_free(x);
        free(c);
    }
    SB_CHECK(bad == 0);
done:
    sb_model_free(back);
    sb_model_free(m);
    free(g);
}

/* A copy of the golden bytes with one 32-bit field at offset off replaced and
 * the digest recomputed: the reader's own checks must name the break. */
static int crafted_refused(const uint8_t *g, size_t len, size_t off, uint32_t v, const char *want) {
    uint8_t *b = malloc(len);
    memcpy(b, g, len);
    for (int i = 0; i < 4; i++) b[off + (size_t)i] = (uint8_t)(v >> (8 * i));
    sb_sha256(b, len - 32, b + len - 32);
    sb_model *m = NULL;
    const sb_status st = sb_model_from_bytes(b, len, &m);
    const int ok = st == SB_ERR_INVALID_INPUT && !m && strstr(sb_last_error(), want) != NULL;
    if (!ok) fprintf(stderr, "  crafted at %zu: %s '%s'\n", off, sb_status_name(st), sb_last_error());
    sb_model_free(m);
    free(b);
    return ok;
}

/* The offset of the little-endian 32-bit value v after from, or 0. */
static size_t find_u32(const uint8_t *g, size_t len, size_t from, uint32_t v) {
    for (size_t i = from; i + 4 <= len; i++)
        if (g[i] == (uint8_t)v && g[i + 1] == (uint8_t)(v >> 8) && g[i + 2] == (uint8_t)(v >> 16) &&
            g[i + 3] == (uint8_t)(v >> 24))
            return i;
    return 0;
}

SB_TEST(test_categorical_broken_files_and_models_named) {
    size_t glen = 0;
    uint8_t *g = read_golden(&glen);
    SB_CHECK(g != NULL);
    if (!g) return;
    /* tree 0's set: node 0, 3 codes 1, 5, 1000 (the only 1000 in the file as a u32) */
    const size_t at1000 = find_u32(g, glen, 0, 1000);
    SB_CHECK(at1000 > 16);
    if (at1000 > 16) {
        SB_CHECK(crafted_refused(g, glen, at1000, 4, "is not a code above"));     /* 1, 5, 4 */
        SB_CHECK(crafted_refused(g, glen, at1000 - 8, 5, "is not a code above")); /* 5, 5, 1000 */
        SB_CHECK(crafted_refused(g, glen, at1000 - 16, 3, "a categorical split must")); /* set on node 3, a leaf */
        SB_CHECK(crafted_refused(g, glen, at1000 - 12, 0, "is 0, at least 1"));   /* an empty set */
    }
    free(g);
    /* the writer's rules (the reader applies the same) */
    sb_model *m = categorical_model();
    size_t len;
    SB_CHECK(m != NULL);
    if (!m) return;
    m->trees[0].cat_codes[1] = 5.5f;
    SB_CHECK(sb_model_to_bytes(m, NULL, 0, &len) == SB_ERR_INVALID_ARGUMENT && strstr(sb_last_error(), "not a code"));
    m->trees[0].cat_codes[1] = 5.0f;
    m->trees[0].nodes[2].categorical = 1; /* two nodes on one set */
    SB_CHECK(sb_model_to_bytes(m, NULL, 0, &len) == SB_ERR_INVALID_ARGUMENT);
    m->trees[0].nodes[2].categorical = 0;
    m->trees[0].nodes[0].default_left = 1;
    SB_CHECK(sb_model_to_bytes(m, NULL, 0, &len) == SB_ERR_INVALID_ARGUMENT && strstr(sb_last_error(), "default_left 0"));
    m->trees[0].nodes[0].default_left = 0;
    SB_CHECK(sb_model_to_bytes(m, NULL, 0, &len) == SB_OK);
    { /* two sets named against node order: refused (one spelling per model) */
        sb_tree *t0 = &m->trees[0];
        int32_t *start = sb_realloc(t0->cat_start, 3 * sizeof(int32_t));
        float *codes = sb_realloc(t0->cat_codes, 4 * sizeof(float));
        SB_CHECK(start && codes);
        if (start) t0->cat_start = start;
        if (codes) t0->cat_codes = codes;
        if (start && codes) {
            t0->cat_start[2] = 4, t0->cat_codes[3] = 7.0f, t0->ncat = 2;
            sb_tree_node keep = t0->nodes[2];
            t0->nodes[2].categorical = 1, t0->nodes[2].cat_set = 1, t0->nodes[2].threshold = 0.0f;
            t0->nodes[2].default_left = 0;
            SB_CHECK(sb_model_to_bytes(m, NULL, 0, &len) == SB_OK);
            t0->nodes[0].cat_set = 1, t0->nodes[2].cat_set = 0;
            SB_CHECK(sb_model_to_bytes(m, NULL, 0, &len) == SB_ERR_INVALID_ARGUMENT &&
                     strstr(sb_last_error(), "numbered in node order"));
            t0->nodes[0].cat_set = 0, t0->nodes[2] = keep, t0->ncat = 1;
        }
    }
    /* category names: sorted by bytes, replaced, removed; bad ones refused, the model unchanged */
    const char *const unsorted[2] = {"b", "a"}, *const dup[2] = {"a", "a"}, *const bad_utf8[1] = {"\xff"};
    SB_CHECK(sb_model_set_category_names(m, 1, unsorted, 2) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_model_set_category_names(m, 1, dup, 2) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_model_set_category_names(m, 1, bad_utf8, 1) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_model_set_category_names(m, 3, dup, 1) == SB_ERR_INVALID_ARGUMENT);
    int32_t n = -1;
    SB_CHECK(sb_model_get_category_count(m, 1, &n) == SB_OK && n == 0);
    const char *const one[1] = {"z"};
    SB_CHECK(sb_model_set_category_names(m, 1, one, 1) == SB_OK && m->ncatnames == 3 && m->catnames[1].feature == 1);
    SB_CHECK(sb_model_set_category_names(m, 0, NULL, 0) == SB_OK && m->ncatnames == 2 && m->catnames[0].feature == 1);
    const char *name = NULL;
    SB_CHECK(sb_model_get_category_name(m, 2, 1, &name) == SB_OK && strcmp(name, "yes") == 0);
    sb_model_free(m);
}
