/*
 * test_model_format.c: the model file format, versions 1 to 3
 * (docs/model-format.md; version 4, categorical models, in
 * test_model_categorical.c).
 *
 * Models are built by hand. The test carries its own encoder of both versions,
 * written from the document rather than from src/models/model_format.c, both to
 * check that the document is enough to write the format and to craft broken
 * files (with a correct digest, so that the check under test is the one that
 * fires). Two golden files freeze the layouts: tests/data/models/v1-regression.sbm
 * (version 1, written by the library before version 2 existed) and
 * v2-regression.sbm (version 2). The writer must reproduce each byte for byte in
 * its version, on every architecture, and their digests are constants here.
 * The version-2 file is regenerated only for a new format version (the version-1
 * file never is):
 *   SB_WRITE_GOLDEN=1 build/sb_unit test_model_format_write_golden
 */
#include "sb_test.h"
#include "samebits_cert.h"
#include "core/internal.h"
#include "models/model.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GOLDEN_V1_NAME "models/v1-regression.sbm"
#define GOLDEN_V1_DIGEST "20049ef28a057e73827fa37459a6f3abad5beca99cc812fa8d0270c0e4cc8db1"
#define GOLDEN_V2_NAME "models/v2-regression.sbm"
#define GOLDEN_V2_DIGEST "bfe0e38565ff9afe435d58ad7681c71d4ce7a75b02df37dfc927f16457075865"

/* ---- building models by hand ---- */

static sb_tree_node leaf(float value, int64_t count) {
    sb_tree_node n = {.feature = -1, .threshold = 0.0f, .left = -1, .right = -1, .value = value,
                      .gain = 0.0f, .count = count, .default_left = 0};
    return n;
}

static sb_tree_node split(int32_t feature, float threshold, int32_t left, int32_t right, float gain,
                          int64_t count, uint8_t default_left) {
    sb_tree_node n = {.feature = feature, .threshold = threshold, .left = left, .right = right,
                      .value = 0.0f, .gain = gain, .count = count, .default_left = default_left};
    return n;
}

static void set_tree(sb_model *m, int32_t t, const sb_tree_node *nodes, int32_t n) {
    m->trees[t].nnodes = n;
    m->trees[t].nodes = sb_malloc((size_t)n * sizeof(sb_tree_node));
    memcpy(m->trees[t].nodes, nodes, (size_t)n * sizeof(sb_tree_node));
}

/* The golden model: regression, 3 named features (one non-ASCII), params, two
 * trees with a -inf threshold, a denormal threshold, a -0 leaf, both default
 * directions and a count above 2^32; trained under profile sb-identical-v1,
 * as both golden files say. */
static sb_model *regression_model(void) {
    sb_model *m = NULL;
    if (sb_model_alloc(&m) != SB_OK) return NULL;
    m->profile = sb_model_profiles[0];
    m->family = SB_FAMILY_GBDT;
    m->objective = SB_OBJ_REGRESSION;
    m->num_class = 1;
    m->num_features = 3;
    m->numeric_mode = SB_MODE_IDENTICAL;
    m->base_score = sb_malloc(sizeof(float));
    m->base_score[0] = 0.5f;
    m->params = sb_strdup("learning_rate=0.1\nmax_depth=2\n");
    m->feature_names = sb_calloc(3, sizeof(char *));
    m->feature_names[0] = sb_strdup("age");
    m->feature_names[1] = sb_strdup("h\xc3\xb6he"); /* "höhe" */
    m->feature_names[2] = sb_strdup("x");
    m->ntrees = 2;
    m->trees = sb_calloc(2, sizeof(sb_tree));
    sb_tree_node t0[5] = {split(0, 30.5f, 1, 2, 12.25f, 100, 1), leaf(-0.25f, 40),
                          split(2, -INFINITY, 3, 4, 3.5f, 60, 0), leaf(0.125f, 5), leaf(-0.0f, 55)};
    sb_tree_node t1[3] = {split(1, 1e-40f, 1, 2, 0.75f, 5000000000LL, 1), leaf(0.0625f, 4000000000LL),
                          leaf(-0.03125f, 1000000000LL)};
    set_tree(m, 0, t0, 5);
    set_tree(m, 1, t1, 3);
    return m;
}

/* Multiclass, 3 classes, 2 rounds (6 trees), no feature names, no params.
 * Feature 1's gains are 2^24, 1, 1 in tree order: summed in that order they
 * stay 2^24 (each +1 rounds back to even), the fixed order made visible. */
static sb_model *multiclass_model(void) {
    sb_model *m = NULL;
    if (sb_model_alloc(&m) != SB_OK) return NULL;
    m->family = SB_FAMILY_GBDT;
    m->objective = SB_OBJ_MULTICLASS;
    m->num_class = 3;
    m->num_features = 4;
    m->numeric_mode = SB_MODE_DETERMINISTIC;
    m->base_score = sb_malloc(3 * sizeof(float));
    m->base_score[0] = -1.0986123f;
    m->base_score[1] = 0.25f;
    m->base_score[2] = 1.5f;
    m->ntrees = 6;
    m->trees = sb_calloc(6, sizeof(sb_tree));
    sb_tree_node a[3] = {split(1, 2.0f, 1, 2, 16777216.0f, 10, 0), leaf(0.5f, 4), leaf(-0.5f, 6)};
    sb_tree_node b[3] = {split(1, 3.0f, 1, 2, 1.0f, 10, 1), leaf(0.25f, 3), leaf(-0.125f, 7)};
    sb_tree_node c[5] = {split(3, INFINITY, 1, 2, 2.5f, 10, 0), split(1, -1.0f, 3, 4, 1.0f, 8, 1),
                         leaf(1.0f, 2), leaf(-1.0f, 5), leaf(0.75f, 3)};
    sb_tree_node d[1] = {leaf(0.01f, 10)};
    sb_tree_node e[3] = {split(0, 0.5f, 1, 2, 0.125f, 10, 1), leaf(2.0f, 9), leaf(-2.0f, 1)};
    sb_tree_node f[3] = {split(3, 7.0f, 1, 2, 4.0f, 10, 0), leaf(0.0f, 5), leaf(0.0f, 5)};
    set_tree(m, 0, a, 3);
    set_tree(m, 1, b, 3);
    set_tree(m, 2, c, 5);
    set_tree(m, 3, d, 1);
    set_tree(m, 4, e, 3);
    set_tree(m, 5, f, 3);
    return m;
}

static uint32_t fbits(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

/* Field-by-field equality (floats by their bits; NULL params equal ""). */
static int models_equal(const sb_model *a, const sb_model *b) {
    if (a->family != b->family || a->objective != b->objective || a->num_class != b->num_class ||
        a->num_features != b->num_features || a->numeric_mode != b->numeric_mode || a->ntrees != b->ntrees ||
        strcmp(a->profile, b->profile) != 0)
        return 0;
    for (int32_t k = 0; k < a->num_class; k++)
        if (fbits(a->base_score[k]) != fbits(b->base_score[k])) return 0;
    if (strcmp(a->params ? a->params : "", b->params ? b->params : "") != 0) return 0;
    if (!a->feature_names != !b->feature_names) return 0;
    if (a->feature_names)
        for (int32_t f = 0; f < a->num_features; f++)
            if (strcmp(a->feature_names[f], b->feature_names[f]) != 0) return 0;
    for (int32_t t = 0; t < a->ntrees; t++) {
        if (a->trees[t].nnodes != b->trees[t].nnodes) return 0;
        for (int32_t i = 0; i < a->trees[t].nnodes; i++) {
            const sb_tree_node *x = &a->trees[t].nodes[i], *y = &b->trees[t].nodes[i];
            if (x->feature != y->feature || fbits(x->threshold) != fbits(y->threshold) || x->left != y->left ||
                x->right != y->right || fbits(x->value) != fbits(y->value) || fbits(x->gain) != fbits(y->gain) ||
                x->count != y->count || x->default_left != y->default_left)
                return 0;
        }
    }
    return 1;
}

/* The model's bytes in format version (0: the writer's, through
 * sb_model_to_bytes) in a fresh malloc'ed buffer (NULL on failure). */
static uint8_t *model_bytes_v(const sb_model *m, uint32_t version, size_t *len) {
    size_t need = 0;
    sb_status st = version ? sb_model_to_bytes_version(m, version, NULL, 0, &need) : sb_model_to_bytes(m, NULL, 0, &need);
    if (st != SB_OK) return NULL;
    uint8_t *b = malloc(need);
    st = !b ? SB_ERR_OUT_OF_MEMORY
       : version ? sb_model_to_bytes_version(m, version, b, need, len) : sb_model_to_bytes(m, b, need, len);
    if (st != SB_OK) {
        free(b);
        return NULL;
    }
    return b;
}

static uint8_t *model_bytes(const sb_model *m, size_t *len) { return model_bytes_v(m, 0, len); }

/* ---- an independent encoder, from docs/model-format.md ---- */

#define AUTO INT64_MIN

typedef struct craft {
    uint32_t version;        /* the version field; 0: 2. Version 1 gets version 1's layout, any other version 2's */
    const char *profile;     /* NULL: the model's */
    int names_flag;          /* -1: 1 if the model has names, else 0 */
    int64_t num_class_field, num_features_field, ntrees_field, nnodes0_field, length_field;
    const uint8_t *name0;    /* raw bytes of feature name 0, if non-NULL */
    size_t name0_len;
    size_t extra;            /* zero bytes inserted before the digest (version 2: at the payload's end, counted in its length) */
    int64_t family_field;    /* the family; AUTO: the model's */
    const char *tag;         /* version 2: the payload tag (4 bytes); NULL: "TREE" */
    int64_t payload_len_field; /* version 2: the payload length; AUTO: the payload's */
    const uint8_t *labels_raw; /* version 3: these bytes as the labels section; NULL: the model's labels */
    size_t labels_raw_len;
} craft;

static craft plain_v(uint32_t version) {
    craft c = {.version = version, .names_flag = -1, .num_class_field = AUTO, .num_features_field = AUTO,
               .ntrees_field = AUTO, .nnodes0_field = AUTO, .length_field = AUTO, .family_field = AUTO,
               .payload_len_field = AUTO};
    return c;
}

static craft plain(void) { return plain_v(0); }

typedef struct obuf {
    uint8_t *p;
    size_t n, cap;
} obuf;

static void ob_put(obuf *o, const void *src, size_t n) {
    if (o->n + n > o->cap) {
        o->cap = (o->n + n) * 2 + 64;
        o->p = realloc(o->p, o->cap);
    }
    memcpy(o->p + o->n, src, n);
    o->n += n;
}

static void ob_u32(obuf *o, uint32_t v) {
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    ob_put(o, b, 4);
}

static void ob_u64(obuf *o, uint64_t v) {
    ob_u32(o, (uint32_t)v);
    ob_u32(o, (uint32_t)(v >> 32));
}

static void ob_str(obuf *o, const char *s, size_t n) {
    ob_u32(o, (uint32_t)n);
    ob_put(o, s, n);
}

static uint32_t field32(int64_t override, int64_t value) {
    return (uint32_t)(override == AUTO ? value : override);
}

/* Recompute the length field and the closing digest of a crafted file. */
static void refix(uint8_t *b, size_t len, int set_length) {
    if (set_length)
        for (int i = 0; i < 8; i++) b[12 + i] = (uint8_t)((uint64_t)len >> (8 * i));
    sb_sha256(b, len - 32, b + len - 32);
}

static void ob_names(obuf *o, const sb_model *m, craft c) {
    uint8_t flag = (uint8_t)(c.names_flag >= 0 ? c.names_flag : m->feature_names ? 1 : 0);
    ob_put(o, &flag, 1);
    if (m->feature_names)
        for (int32_t f = 0; f < m->num_features; f++) {
            if (f == 0 && c.name0) ob_str(o, (const char *)c.name0, c.name0_len);
            else ob_str(o, m->feature_names[f], strlen(m->feature_names[f]));
        }
}

static void ob_trees(obuf *o, const sb_model *m, craft c) {
    ob_u32(o, field32(c.ntrees_field, m->ntrees));
    for (int32_t t = 0; t < m->ntrees; t++) {
        ob_u32(o, field32(t == 0 ? c.nnodes0_field : AUTO, m->trees[t].nnodes));
        for (int32_t i = 0; i < m->trees[t].nnodes; i++) {
            const sb_tree_node *n = &m->trees[t].nodes[i];
            ob_u32(o, (uint32_t)n->feature);
            ob_u32(o, fbits(n->threshold));
            ob_u32(o, (uint32_t)n->left);
            ob_u32(o, (uint32_t)n->right);
            ob_u32(o, fbits(n->value));
            ob_u32(o, fbits(n->gain));
            ob_u64(o, (uint64_t)n->count);
            ob_put(o, &n->default_left, 1);
        }
    }
}

/* Version 3's labels section from the document: kind u8, count u32, then
 * i64 / f64 bits / str / u8 per label. */
static void ob_labels(obuf *o, const sb_model *m, craft c) {
    if (c.labels_raw) {
        ob_put(o, c.labels_raw, c.labels_raw_len);
        return;
    }
    const sb_labels *l = m->labels;
    uint8_t kind = (uint8_t)l->kind;
    ob_put(o, &kind, 1);
    ob_u32(o, (uint32_t)l->n);
    for (int32_t i = 0; i < l->n; i++) {
        if (l->kind == SB_LABELS_STRING) ob_str(o, l->strs[i], strlen(l->strs[i]));
        else if (l->kind == SB_LABELS_BOOL) {
            uint8_t b = (uint8_t)l->ints[i];
            ob_put(o, &b, 1);
        } else if (l->kind == SB_LABELS_INT64) ob_u64(o, (uint64_t)l->ints[i]);
        else {
            uint64_t u;
            memcpy(&u, &l->floats[i], 8);
            ob_u64(o, u);
        }
    }
}

static uint8_t *encode(const sb_model *m, craft c, size_t *len) {
    obuf o = {0};
    const uint32_t version = c.version ? c.version : 2;
    ob_put(&o, "SBMODEL\0", 8);
    ob_u32(&o, version);
    ob_u64(&o, 0); /* total length, set below */
    const char *prof = c.profile ? c.profile : m->profile;
    ob_str(&o, prof, strlen(prof));
    if (version == 1) {
        ob_u32(&o, field32(c.family_field, m->family));
        ob_u32(&o, (uint32_t)m->objective);
        ob_u32(&o, field32(c.num_class_field, m->num_class));
        ob_u32(&o, field32(c.num_features_field, m->num_features));
        ob_u32(&o, (uint32_t)m->numeric_mode);
        for (int32_t k = 0; k < m->num_class; k++) ob_u32(&o, fbits(m->base_score[k]));
        ob_str(&o, m->params ? m->params : "", m->params ? strlen(m->params) : 0);
        ob_names(&o, m, c);
        ob_trees(&o, m, c);
        for (size_t i = 0; i < c.extra; i++) ob_put(&o, "", 1);
    } else {
        ob_u32(&o, field32(c.family_field, m->family));
        ob_u32(&o, (uint32_t)m->numeric_mode);
        ob_u32(&o, field32(c.num_features_field, m->num_features));
        ob_str(&o, m->params ? m->params : "", m->params ? strlen(m->params) : 0);
        ob_names(&o, m, c);
        if (version == 3) ob_labels(&o, m, c);
        obuf pl = {0};
        ob_u32(&pl, (uint32_t)m->objective);
        ob_u32(&pl, field32(c.num_class_field, m->num_class));
        for (int32_t k = 0; k < m->num_class; k++) ob_u32(&pl, fbits(m->base_score[k]));
        ob_trees(&pl, m, c);
        for (size_t i = 0; i < c.extra; i++) ob_put(&pl, "", 1);
        ob_put(&o, c.tag ? c.tag : "TREE", 4);
        ob_u64(&o, c.payload_len_field == AUTO ? (uint64_t)pl.n : (uint64_t)c.payload_len_field);
        ob_put(&o, pl.p, pl.n);
        free(pl.p);
    }
    uint8_t zero[32] = {0};
    ob_put(&o, zero, 32);
    refix(o.p, o.n, 1);
    if (c.length_field != AUTO) {
        for (int i = 0; i < 8; i++) o.p[12 + i] = (uint8_t)((uint64_t)c.length_field >> (8 * i));
        refix(o.p, o.n, 0);
    }
    *len = o.n;
    return o.p;
}

/* from_bytes must fail with status st, leave *out NULL, and (if want is not
 * NULL) say want in its message. */
static int rejects(const uint8_t *b, size_t len, sb_status st, const char *want) {
    sb_model *m = (sb_model *)&m; /* not NULL: the call must reset it */
    sb_status got = sb_model_from_bytes(b, len, &m);
    int ok = got == st && m == NULL && (!want || strstr(sb_last_error(), want) != NULL);
    if (!ok)
        fprintf(stderr, "  rejects: status %s, message '%s' (wanted %s, '%s')\n", sb_status_name(got),
                sb_last_error(), sb_status_name(st), want ? want : "");
    if (got == SB_OK) sb_model_free(m);
    return ok;
}

/* Encode m with c and check that reading refuses it with st and want. */
static int crafted_rejects(const sb_model *m, craft c, sb_status st, const char *want) {
    size_t len;
    uint8_t *b = encode(m, c, &len);
    int ok = rejects(b, len, st, want);
    free(b);
    return ok;
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *b = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) b = realloc(b, cap = cap * 2 + 4096);
        size_t got = fread(b + n, 1, cap - n, f);
        if (!got) break;
        n += got;
    }
    fclose(f);
    *len = n;
    return b;
}

/* The golden file of version (1 or 2). */
static void golden_path(char *out, size_t cap, uint32_t version) {
    snprintf(out, cap, "%s/%s", sb_test_data_dir(), version == 1 ? GOLDEN_V1_NAME : GOLDEN_V2_NAME);
}

/* ---- round trips ---- */

/* m in version (1 or 2): the writer's bytes read back into an equal model
 * that writes the same bytes again, and the test's own encoder agrees. */
static void check_round_trip_v(sb_model *m, uint32_t version) {
    size_t len = 0, len2 = 0, need = 0;
    SB_CHECK(sb_model_to_bytes_version(m, version, NULL, 0, &need) == SB_OK);
    uint8_t *b = model_bytes_v(m, version, &len);
    SB_CHECK(b != NULL && len == need);
    if (!b) return;
    SB_CHECK(b[8] == version && b[9] == 0 && b[10] == 0 && b[11] == 0);
    uint8_t small[16];
    SB_CHECK(sb_model_to_bytes_version(m, version, small, sizeof small, &need) == SB_ERR_LIMIT && need == len);
    sb_model *back = NULL;
    SB_CHECK(sb_model_from_bytes(b, len, &back) == SB_OK);
    SB_CHECK(back != NULL && models_equal(m, back));
    if (back) {
        uint8_t *b2 = model_bytes_v(back, version, &len2);
        SB_CHECK(b2 != NULL && len2 == len && memcmp(b, b2, len) == 0);
        free(b2);
        /* The document's encoder, written independently, agrees. */
        size_t elen;
        uint8_t *e = encode(m, plain_v(version), &elen);
        SB_CHECK(elen == len && memcmp(e, b, len) == 0);
        free(e);
    }
    sb_model_free(back);
    free(b);
}

static void check_round_trip(sb_model *m) {
    check_round_trip_v(m, 1);
    check_round_trip_v(m, 2);
    /* sb_model_to_bytes writes version 2; the digest is its last 32 bytes. */
    size_t len = 0, len2 = 0;
    uint8_t *b = model_bytes(m, &len), *b2 = model_bytes_v(m, 2, &len2);
    SB_CHECK(b && b2 && len == len2 && memcmp(b, b2, len) == 0);
    if (b) {
        char h[65], stored[65];
        sb_hex(b + len - 32, 32, stored);
        SB_CHECK(sb_model_digest(m, h) == SB_OK && strcmp(h, stored) == 0);
    }
    free(b);
    free(b2);
}

SB_TEST(test_model_format_roundtrip_regression) {
    sb_model *m = regression_model();
    SB_CHECK(m != NULL);
    if (m) check_round_trip(m);
    sb_model_free(m);
}

SB_TEST(test_model_format_roundtrip_multiclass) {
    sb_model *m = multiclass_model();
    SB_CHECK(m != NULL);
    if (m) check_round_trip(m);
    sb_model_free(m);
}

SB_TEST(test_model_format_roundtrip_no_trees) {
    sb_model *m = regression_model();
    for (int32_t t = 0; t < m->ntrees; t++) sb_free(m->trees[t].nodes);
    sb_free(m->trees);
    m->trees = NULL;
    m->ntrees = 0;
    check_round_trip(m);
    sb_model_free(m);
}

/* ---- the golden files: the frozen layouts ---- */

#define GOLDEN_V3_NAME "models/v3-labels.sbm"
#define GOLDEN_V3_DIGEST "9a42d72d836ea21a3df4d5d2a06fbfa6de75eb13319e3a0e42c5c93a30d84141"

/* The version-3 golden model: the multiclass model with string labels, one
 * non-ASCII and one with a space (byte order: 'a' < 'b b' < 0xC3). */
static sb_model *labeled_model(void) {
    sb_model *m = multiclass_model();
    /* the golden file's profile is frozen (sb-identical-v5, as it was written): a
     * profile bump moves no byte of a format's golden layout */
    if (m) m->profile = sb_model_profiles[4];
    const char *const labels[3] = {"a", "b b", "\xc3\xa4"};
    if (m && sb_model_set_class_labels(m, SB_LABELS_STRING, 3, labels) != SB_OK) {
        sb_model_free(m);
        return NULL;
    }
    return m;
}

/* Writes the version-2 golden file; runs only when SB_WRITE_GOLDEN=1 (by hand,
 * once per format version). The version-1 file is never rewritten. */
SB_TEST(test_model_format_write_golden) {
    const char *w = getenv("SB_WRITE_GOLDEN");
    if (!w || strcmp(w, "1") != 0) return;
    char path[512];
    golden_path(path, sizeof path, 2);
    sb_model *m = regression_model();
    SB_CHECK(sb_model_save(m, path) == SB_OK);
    char hex[65];
    SB_CHECK(sb_model_digest(m, hex) == SB_OK);
    printf("wrote %s, digest %s\n", path, hex);
    sb_model_free(m);
    /* version 3: the labeled golden model */
    snprintf(path, sizeof path, "%s/%s", sb_test_data_dir(), GOLDEN_V3_NAME);
    m = labeled_model();
    SB_CHECK(m && sb_model_save(m, path) == SB_OK && sb_model_digest(m, hex) == SB_OK);
    printf("wrote %s, digest %s\n", path, hex);
    sb_model_free(m);
}

/* Raw margins of the golden model on rows walked by hand: base 0.5, tree 0
 * (age <= 30.5 ? -0.25 : x <= -inf ? 0.125 : -0.0; NaN age left, NaN x right),
 * tree 1 (hoehe <= 1e-40 ? 0.0625 : -0.03125; NaN left). Every sum is exact. */
static int golden_predicts(const sb_model *m) {
    const float nan = NAN;
    const float x[5 * 3] = {20.0f, 0.0f, 0.0f,   40.0f, 1.0f, 5.0f,   40.0f, 0.0f, -INFINITY,
                            nan, nan, nan,       40.0f, 2e-40f, nan};
    const float want[5] = {0.3125f, 0.46875f, 0.6875f, 0.3125f, 0.46875f};
    sb_dataset *d = NULL;
    float out[5];
    size_t got = 0;
    int ok = sb_dataset_from_matrix(x, 5, 3, &d) == SB_OK &&
             sb_model_predict(m, d, SB_PREDICT_RAW, out, 5, &got) == SB_OK && got == 5;
    for (int r = 0; ok && r < 5; r++) ok = fbits(out[r]) == fbits(want[r]);
    if (!ok) fprintf(stderr, "  golden prediction differs: %s\n", sb_last_error());
    sb_dataset_free(d);
    return ok;
}

/* The golden file of version: the writer reproduces it byte for byte in that
 * version, its digest is the constant, and it loads into the golden model,
 * which predicts the hand-walked margins. */
static void check_golden(uint32_t version, const char *digest) {
    char path[512];
    golden_path(path, sizeof path, version);
    size_t glen = 0, len = 0;
    uint8_t *g = read_file(path, &glen);
    SB_CHECK(g != NULL);
    if (!g) return;
    sb_model *m = regression_model();
    uint8_t *b = model_bytes_v(m, version, &len);
    SB_CHECK(b != NULL && len == glen && memcmp(b, g, glen) == 0);
    char hex[65];
    sb_hex(g + glen - 32, 32, hex);
    SB_CHECK(strcmp(hex, digest) == 0);
    sb_model *loaded = NULL;
    SB_CHECK(sb_model_load(path, &loaded) == SB_OK && loaded && models_equal(m, loaded));
    if (loaded) SB_CHECK(golden_predicts(loaded));
    sb_model_free(loaded);
    sb_model_free(m);
    free(b);
    free(g);
}

SB_TEST(test_model_format_golden_v1_still_reads) {
    check_golden(1, GOLDEN_V1_DIGEST);
}

SB_TEST(test_model_format_golden_v2_bytes) {
    check_golden(2, GOLDEN_V2_DIGEST);
    /* The writer's version and the model's digest are version 2's. */
    sb_model *m = regression_model();
    char hex[65];
    SB_CHECK(sb_model_digest(m, hex) == SB_OK && strcmp(hex, GOLDEN_V2_DIGEST) == 0);
    sb_model_free(m);
}

/* A version-1 file read and written again becomes the version-2 file of the
 * same model: a new digest (docs/model-format.md, "Reading version 1"). */
SB_TEST(test_model_format_v1_resaved_is_v2) {
    char path[512];
    golden_path(path, sizeof path, 1);
    sb_model *m = NULL;
    SB_CHECK(sb_model_load(path, &m) == SB_OK && m);
    if (!m) return;
    char hex[65];
    SB_CHECK(sb_model_digest(m, hex) == SB_OK && strcmp(hex, GOLDEN_V2_DIGEST) == 0 &&
             strcmp(hex, GOLDEN_V1_DIGEST) != 0);
    size_t len = 0, glen = 0;
    uint8_t *b = model_bytes(m, &len), *b1 = model_bytes_v(m, 1, &glen);
    SB_CHECK(b && b[8] == 2);
    char v2path[512];
    golden_path(v2path, sizeof v2path, 2);
    size_t v2len = 0, v1len = 0;
    uint8_t *g2 = read_file(v2path, &v2len), *g1 = read_file(path, &v1len);
    SB_CHECK(b && g2 && len == v2len && memcmp(b, g2, len) == 0);
    /* ...and asked for version 1 it writes the very file it read. */
    SB_CHECK(b1 && g1 && glen == v1len && memcmp(b1, g1, glen) == 0);
    free(b);
    free(b1);
    free(g1);
    free(g2);
    sb_model_free(m);
}

/* The card's model-bytes stage records the version-1 bytes of a tree model
 * (the reference cards were recorded so), not the writer's version 2. */
SB_TEST(test_model_format_card_stage_is_v1) {
    sb_model *m = regression_model();
    SB_CHECK(sb_model_card_version(m) == 1);
    const float x[2 * 3] = {20.0f, 0.0f, 0.0f, 40.0f, 1.0f, 5.0f};
    sb_dataset *d = NULL;
    sb_card *card = NULL;
    SB_CHECK(sb_dataset_from_matrix(x, 2, 3, &d) == SB_OK && sb_card_create(&card) == SB_OK);
    SB_CHECK(sb_model_record(card, m, d, SB_PREDICT_RAW, "t.pred", "t.model_bytes") == SB_OK);
    size_t need = 0, len = 0;
    char *text = NULL;
    SB_CHECK(sb_card_text(card, NULL, 0, &need) == SB_OK && (text = malloc(need)) != NULL &&
             sb_card_text(card, text, need, NULL) == SB_OK);
    uint8_t *b1 = model_bytes_v(m, 1, &len), sha[32];
    char hex[65], want[128];
    SB_CHECK(b1 && sb_sha256(b1, len, sha) == SB_OK);
    sb_hex(sha, 32, hex);
    snprintf(want, sizeof want, "\"stage\":\"t.model_bytes\",\"dtype\":\"u8\",\"count\":%zu,\"sha256\":\"%s\"", len, hex);
    SB_CHECK(text && strstr(text, want) != NULL);
    if (text && !strstr(text, want)) fprintf(stderr, "  card:\n%s  wanted %s\n", text, want);
    free(text);
    free(b1);
    sb_card_free(card);
    sb_dataset_free(d);
    sb_model_free(m);
}

/* Every single-bit flip of the golden file of version is refused. */
static void check_every_bit_flip(uint32_t version) {
    char path[512];
    golden_path(path, sizeof path, version);
    size_t len = 0;
    uint8_t *g = read_file(path, &len);
    SB_CHECK(g != NULL);
    if (!g) return;
    int bad = 0;
    for (size_t i = 0; i < len * 8; i++) {
        g[i / 8] ^= (uint8_t)(1u << (i % 8));
        sb_model *m = (sb_model *)&m;
        sb_status st = sb_model_from_bytes(g, len, &m);
        if (st != SB_ERR_INVALID_INPUT || m != NULL) {
            if (bad++ < 5) fprintf(stderr, "  bit %zu: %s '%s'\n", i, sb_status_name(st), sb_last_error());
            if (st == SB_OK) sb_model_free(m);
        }
        g[i / 8] ^= (uint8_t)(1u << (i % 8));
    }
    SB_CHECK(bad == 0);
    free(g);
}

SB_TEST(test_model_format_every_bit_flip_rejected) {
    check_every_bit_flip(1);
    check_every_bit_flip(2);
}

/* Every proper prefix of the golden file of version is refused. */
static void check_every_truncation(uint32_t version) {
    char path[512];
    golden_path(path, sizeof path, version);
    size_t len = 0;
    uint8_t *g = read_file(path, &len);
    SB_CHECK(g != NULL);
    if (!g) return;
    int bad = 0;
    for (size_t n = 0; n < len; n++) {
        uint8_t *copy = malloc(n ? n : 1); /* exactly n bytes, so ASan sees an over-read */
        memcpy(copy, g, n);
        if (!rejects(copy, n, SB_ERR_INVALID_INPUT, NULL)) bad++;
        free(copy);
    }
    SB_CHECK(bad == 0);
    SB_CHECK(rejects(g, len - 1, SB_ERR_INVALID_INPUT, "truncated"));
    free(g);
}

SB_TEST(test_model_format_every_truncation_rejected) {
    check_every_truncation(1);
    check_every_truncation(2);
}

SB_TEST(test_model_format_appended_bytes_rejected) {
    sb_model *m = regression_model();
    size_t len;
    uint8_t *b = model_bytes(m, &len);
    uint8_t *more = malloc(len + 1);
    memcpy(more, b, len);
    more[len] = 0;
    SB_CHECK(rejects(more, len + 1, SB_ERR_INVALID_INPUT, "appended"));
    /* Bytes slipped in before the digest, length and digest made consistent
     * (version 2: at the payload's end, its length counting them). */
    craft c = plain_v(1);
    c.extra = 3;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "3 unused bytes between the last tree and the digest"));
    c = plain();
    c.extra = 3;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "3 unused bytes between the last tree and the end of the payload"));
    free(more);
    free(b);
    sb_model_free(m);
}

/* ---- the frame: magic, version, profile ---- */

SB_TEST(test_model_format_foreign_file_rejected) {
    const uint8_t png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                           0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0};
    SB_CHECK(rejects(png, sizeof png, SB_ERR_INVALID_INPUT, "not a samebits model"));
    SB_CHECK(rejects((const uint8_t *)"", 0, SB_ERR_INVALID_INPUT, "not a samebits model"));
    SB_CHECK(rejects(NULL, 0, SB_ERR_INVALID_INPUT, "not a samebits model"));
    SB_CHECK(rejects((const uint8_t *)"SBMODEL", 7, SB_ERR_INVALID_INPUT, "not a samebits model"));
}

SB_TEST(test_model_format_newer_version_named) {
    sb_model *m = regression_model();
    craft c = plain();
    c.version = 5; /* digest recomputed: only the version check can refuse it */
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "format version 5 is newer than this library's 4"));
    c.version = 0xffffffffu;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "format version 4294967295 is newer"));
    /* Version 0 never existed. */
    size_t len;
    uint8_t *b = model_bytes(m, &len);
    b[8] = 0;
    refix(b, len, 0);
    SB_CHECK(rejects(b, len, SB_ERR_INVALID_INPUT, "format version 0"));
    free(b);
    sb_model_free(m);
}

/* A model keeps the profile it was trained under through its file: the golden
 * (v1) model reads back as v1, the same model under this library's profile
 * writes and reads back as that one, with other bytes and another digest. */
SB_TEST(test_model_format_profile_kept) {
    sb_model *m = regression_model();
    const char *p = NULL;
    SB_CHECK(sb_model_get_profile(m, &p) == SB_OK && strcmp(p, "sb-identical-v1") == 0);
    size_t l1 = 0, l2 = 0;
    uint8_t *b1 = model_bytes(m, &l1);
    m->profile = SB_PROFILE_VERSION;
    uint8_t *b2 = model_bytes(m, &l2);
    SB_CHECK(b1 && b2 && l2 == l1 + strlen(SB_PROFILE_VERSION) - strlen("sb-identical-v1"));
    SB_CHECK(b1 && b2 && (l1 != l2 || memcmp(b1, b2, l1) != 0));
    sb_model *back = NULL;
    SB_CHECK(b2 && sb_model_from_bytes(b2, l2, &back) == SB_OK && back);
    if (back) {
        SB_CHECK(sb_model_get_profile(back, &p) == SB_OK && strcmp(p, SB_PROFILE_VERSION) == 0);
        SB_CHECK(models_equal(m, back));
    }
    SB_CHECK(sb_model_get_profile(NULL, &p) == SB_ERR_INVALID_ARGUMENT);
    sb_model_free(back);
    free(b1);
    free(b2);
    sb_model_free(m);
}

SB_TEST(test_model_format_other_profile_named) {
    sb_model *m = regression_model();
    for (uint32_t v = 1; v <= 2; v++) {
        craft c = plain_v(v);
        c.profile = "sb-identical-v10";
        SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "'sb-identical-v10' is not one this library reads ('" SB_PROFILE_VERSION "' or earlier)"));
        c.profile = "";
        SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "profile"));
    }
    sb_model_free(m);
}

/* ---- version 2's payload: its tag, its length, the families ---- */

/* A family this library has no payload for is refused by name, whatever its
 * payload holds, and before the payload is read. */
SB_TEST(test_model_format_unknown_family_named) {
    sb_model *m = regression_model();
    craft c = plain();
    c.family_field = SB_FAMILY_COUNT_;
    c.tag = "GRPH";
    char want[96];
    snprintf(want, sizeof want, "family %d (unknown, payload 'GRPH') is not one this library reads", (int)SB_FAMILY_COUNT_);
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, want));
    /* A known family with a tree model's bytes under its own tag: its payload is read as its own, and refused. */
    c.family_field = SB_FAMILY_KMEANS;
    c.tag = "CNTR";
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "0 clusters (1..1000000)"));
    c.family_field = 99;
    c.tag = "\x01Z'\\";
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "family 99 (unknown, payload '\\x01Z\\x27\\x5c')"));
    c.family_field = -1;
    c.tag = "TREE"; /* the tree payload under a family that is not a tree family */
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "family -1 (unknown, payload 'TREE') is not one this library reads"));
    /* A tree family with another family's payload. */
    c = plain();
    c.tag = "CNTR";
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "family gbdt carries payload 'CNTR', not 'TREE'"));
    /* Version 1 has no payload tag: its family field is checked as a tree family's. */
    c = plain_v(1);
    c.family_field = SB_FAMILY_KMEANS;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "family 4 is not a tree family"));
    c.family_field = SB_FAMILY_COUNT_;
    snprintf(want, sizeof want, "family %d is not a tree family", (int)SB_FAMILY_COUNT_);
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, want));
    sb_model_free(m);
}

/* The payload length must be the bytes between it and the digest, exactly. */
SB_TEST(test_model_format_payload_length_checked) {
    sb_model *m = regression_model();
    size_t len;
    uint8_t *b = encode(m, plain(), &len);
    free(b);
    /* The payload: 4 + 4 + 4 (one base score) + 4 + 2 trees (4 + 5 nodes, 4 + 3 nodes). */
    const int64_t plen = 16 + 8 + 33 * 8; /* 288 */
    craft c = plain();
    c.payload_len_field = plen;
    b = encode(m, c, &len);
    sb_model *back = NULL;
    SB_CHECK(sb_model_from_bytes(b, len, &back) == SB_OK);
    sb_model_free(back);
    free(b);
    c.payload_len_field = plen - 1; /* a truncated payload length */
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "payload 'TREE' says 287 bytes, but 288 are left before the digest"));
    c.payload_len_field = plen + 1;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "payload 'TREE' says 289 bytes, but 288 are left"));
    c.payload_len_field = 0;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "says 0 bytes"));
    c.payload_len_field = INT64_MIN + 1; /* 2^63 + 1: nothing is sized by it */
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "says 9223372036854775809 bytes"));
    /* A names flag of 0 before names: their bytes are misread as the payload's
     * tag and length, which the length check refuses. */
    c = plain();
    c.names_flag = 0;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "payload '\\x03\\x00\\x00\\x00' says"));
    sb_model_free(m);
}

/* The writer writes versions 1, 2, (a labeled model only) 3 and (a categorical model only) 4. */
SB_TEST(test_model_format_writer_versions) {
    sb_model *m = regression_model();
    size_t need = 0;
    SB_CHECK(sb_model_to_bytes_version(m, 0, NULL, 0, &need) == SB_ERR_INVALID_ARGUMENT &&
             strstr(sb_last_error(), "format version 0 is not one this library writes (1..4)"));
    SB_CHECK(sb_model_to_bytes_version(m, 3, NULL, 0, &need) == SB_ERR_INVALID_ARGUMENT &&
             strstr(sb_last_error(), "format version 3 is a labeled model's"));
    SB_CHECK(sb_model_to_bytes_version(m, 4, NULL, 0, &need) == SB_ERR_INVALID_ARGUMENT &&
             strstr(sb_last_error(), "format version 4 is a categorical model's"));
    SB_CHECK(sb_model_to_bytes_version(m, 5, NULL, 0, &need) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_model_to_bytes_version(NULL, 1, NULL, 0, &need) == SB_ERR_INVALID_ARGUMENT);
    size_t n1 = 0, n2 = 0;
    SB_CHECK(sb_model_to_bytes_version(m, 1, NULL, 0, &n1) == SB_OK && sb_model_to_bytes_version(m, 2, NULL, 0, &n2) == SB_OK);
    /* Version 2 moves objective and num_class into the payload and adds its tag and length. */
    SB_CHECK(n2 == n1 + 12);
    sb_model_free(m);
}

SB_TEST(test_model_format_digest_mismatch_named) {
    sb_model *m = regression_model();
    size_t len;
    uint8_t *b = model_bytes(m, &len);
    b[len - 40] ^= 1; /* a node's last field */
    SB_CHECK(rejects(b, len, SB_ERR_INVALID_INPUT, "digest mismatch"));
    b[len - 40] ^= 1;
    b[len - 1] ^= 0x80; /* the digest itself */
    SB_CHECK(rejects(b, len, SB_ERR_INVALID_INPUT, "digest mismatch"));
    free(b);
    sb_model_free(m);
}

/* ---- structure and limits, in files with correct digests ---- */

/* Apply edit to a fresh golden model, craft it, expect refusal; also the
 * writer must refuse the same in-memory model (SB_ERR_INVALID_ARGUMENT, or
 * SB_ERR_LIMIT for limits). */
typedef void (*edit_fn)(sb_model *m);

static int refused_both_ways(edit_fn edit, sb_status read_st, const char *want) {
    sb_model *m = regression_model();
    edit(m);
    int ok = crafted_rejects(m, plain_v(1), read_st, want) & crafted_rejects(m, plain_v(2), read_st, want);
    size_t need;
    sb_status wst = sb_model_to_bytes(m, NULL, 0, &need);
    sb_status want_w = read_st == SB_ERR_LIMIT ? SB_ERR_LIMIT : SB_ERR_INVALID_ARGUMENT;
    if (wst != want_w || (want && !strstr(sb_last_error(), want))) {
        fprintf(stderr, "  writer: %s '%s'\n", sb_status_name(wst), sb_last_error());
        ok = 0;
    }
    sb_model_free(m);
    return ok;
}

static void e_cycle(sb_model *m) { m->trees[0].nodes[2].left = 1; }          /* child before parent */
static void e_self(sb_model *m) { m->trees[0].nodes[2].right = 2; }          /* child is itself */
static void e_range(sb_model *m) { m->trees[0].nodes[2].right = 5; }         /* past the end */
static void e_negative_child(sb_model *m) { m->trees[0].nodes[0].left = -1; }
static void e_twice(sb_model *m) {                                           /* node 4 unreachable, 3 twice */
    m->trees[0].nodes[2].right = 3;
}
static void e_orphan(sb_model *m) {                                          /* an extra node nobody points to */
    sb_tree *t = &m->trees[1];
    t->nodes = sb_realloc(t->nodes, 4 * sizeof(sb_tree_node));
    t->nodes[3] = leaf(1.0f, 1);
    t->nnodes = 4;
}
static void e_leaf_children(sb_model *m) { m->trees[0].nodes[1].left = 3; }
static void e_leaf_feature(sb_model *m) { m->trees[0].nodes[1].feature = -2; }
static void e_feature_range(sb_model *m) { m->trees[0].nodes[0].feature = 3; }
static void e_nan_threshold(sb_model *m) { m->trees[1].nodes[0].threshold = NAN; }
static void e_nan_value(sb_model *m) { m->trees[0].nodes[4].value = NAN; }
static void e_inf_value(sb_model *m) { m->trees[0].nodes[4].value = INFINITY; }
static void e_nan_gain(sb_model *m) { m->trees[0].nodes[0].gain = NAN; }
static void e_nan_base(sb_model *m) { m->base_score[0] = NAN; }
static void e_default_left(sb_model *m) { m->trees[0].nodes[0].default_left = 2; }
static void e_count(sb_model *m) { m->trees[0].nodes[3].count = -1; }
static void e_regression_classes(sb_model *m) {
    m->num_class = 3;
    m->base_score = sb_realloc(m->base_score, 3 * sizeof(float));
    m->base_score[1] = m->base_score[2] = 0.0f;
}
static void e_multiclass_two(sb_model *m) {
    m->objective = SB_OBJ_MULTICLASS;
    m->num_class = 2;
    m->base_score = sb_realloc(m->base_score, 2 * sizeof(float));
    m->base_score[1] = 0.0f;
}
static void e_multiclass_trees(sb_model *m) {
    m->objective = SB_OBJ_MULTICLASS;
    m->num_class = 3;
    m->base_score = sb_realloc(m->base_score, 3 * sizeof(float));
    m->base_score[1] = m->base_score[2] = 0.0f;
}
static void e_family(sb_model *m) { m->family = SB_FAMILY_COUNT_; }
static void e_objective(sb_model *m) { m->objective = 12; /* 5..9 are huber..tweedie */ }
static void e_mode(sb_model *m) { m->numeric_mode = 3; }
static void e_params_order(sb_model *m) {
    sb_free(m->params);
    m->params = sb_strdup("max_depth=2\nlearning_rate=0.1\n");
}
static void e_params_line(sb_model *m) {
    sb_free(m->params);
    m->params = sb_strdup("max_depth=2");
}
static void e_name_utf8(sb_model *m) { m->feature_names[2][0] = (char)0xff; }
static void e_big_params(sb_model *m) {
    sb_free(m->params);
    m->params = sb_malloc(65538);
    memset(m->params, 'a', 65535);
    memcpy(m->params + 65535, "=\n", 3);
}

SB_TEST(test_model_format_bad_structure_rejected) {
    SB_CHECK(refused_both_ways(e_cycle, SB_ERR_INVALID_INPUT, "left child 1 is not in (2, 5)"));
    SB_CHECK(refused_both_ways(e_self, SB_ERR_INVALID_INPUT, "right child 2"));
    SB_CHECK(refused_both_ways(e_range, SB_ERR_INVALID_INPUT, "right child 5"));
    SB_CHECK(refused_both_ways(e_negative_child, SB_ERR_INVALID_INPUT, "left child -1"));
    SB_CHECK(refused_both_ways(e_twice, SB_ERR_INVALID_INPUT, "node 3 is a child twice"));
    SB_CHECK(refused_both_ways(e_orphan, SB_ERR_INVALID_INPUT, "tree 1 node 3 is unreachable"));
    SB_CHECK(refused_both_ways(e_leaf_children, SB_ERR_INVALID_INPUT, "a leaf (feature -1) with children"));
    SB_CHECK(refused_both_ways(e_leaf_feature, SB_ERR_INVALID_INPUT, "feature -2 outside"));
    SB_CHECK(refused_both_ways(e_feature_range, SB_ERR_INVALID_INPUT, "feature 3 outside [0, 3)"));
    SB_CHECK(refused_both_ways(e_nan_threshold, SB_ERR_INVALID_INPUT, "threshold is NaN"));
    SB_CHECK(refused_both_ways(e_nan_value, SB_ERR_INVALID_INPUT, "value is not finite"));
    SB_CHECK(refused_both_ways(e_inf_value, SB_ERR_INVALID_INPUT, "value is not finite"));
    SB_CHECK(refused_both_ways(e_nan_gain, SB_ERR_INVALID_INPUT, "gain is not finite"));
    SB_CHECK(refused_both_ways(e_nan_base, SB_ERR_INVALID_INPUT, "base_score[0] is not finite"));
    SB_CHECK(refused_both_ways(e_default_left, SB_ERR_INVALID_INPUT, "default_left is 2"));
    SB_CHECK(refused_both_ways(e_count, SB_ERR_INVALID_INPUT, "negative count"));
    SB_CHECK(refused_both_ways(e_regression_classes, SB_ERR_INVALID_INPUT, "regression with num_class 3"));
    SB_CHECK(refused_both_ways(e_multiclass_two, SB_ERR_INVALID_INPUT, "multiclass with num_class 2"));
    SB_CHECK(refused_both_ways(e_multiclass_trees, SB_ERR_INVALID_INPUT, "ntrees 2 is not a multiple of num_class 3"));
    char fam[32];
    snprintf(fam, sizeof fam, "family %d", (int)SB_FAMILY_COUNT_);
    SB_CHECK(refused_both_ways(e_family, SB_ERR_INVALID_INPUT, fam));
    SB_CHECK(refused_both_ways(e_objective, SB_ERR_INVALID_INPUT, "unknown objective 12"));
    SB_CHECK(refused_both_ways(e_mode, SB_ERR_INVALID_INPUT, "unknown numeric mode 3"));
    SB_CHECK(refused_both_ways(e_params_order, SB_ERR_INVALID_INPUT, "not canonical"));
    SB_CHECK(refused_both_ways(e_params_line, SB_ERR_INVALID_INPUT, "not canonical"));
    SB_CHECK(refused_both_ways(e_name_utf8, SB_ERR_INVALID_INPUT, "feature name 2 is not valid UTF-8"));
    SB_CHECK(refused_both_ways(e_big_params, SB_ERR_LIMIT, "params is 65537 bytes"));
}

/* Field checks in files of version v (1 or 2) with correct digests. */
static void check_bad_fields(uint32_t v) {
    sb_model *m = regression_model();
    craft c = plain_v(v);
    c.names_flag = 2;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "feature-names flag is 2"));
    c = plain_v(v);
    c.name0 = (const uint8_t *)"a\0b";
    c.name0_len = 3;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "feature name 0 is not valid UTF-8 (or contains a NUL"));
    c = plain_v(v);
    c.name0 = (const uint8_t *)"\xc0\xaf"; /* overlong '/' */
    c.name0_len = 2;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "feature name 0 is not valid UTF-8"));
    c = plain_v(v);
    c.name0 = (const uint8_t *)"\xed\xa0\x80"; /* a surrogate */
    c.name0_len = 3;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "feature name 0 is not valid UTF-8"));
    c = plain_v(v);
    c.name0_len = 65537; /* over the limit, and longer than the file */
    c.name0 = calloc(1, 65537);
    SB_CHECK(crafted_rejects(m, c, SB_ERR_LIMIT, "feature name 0 is 65537 bytes"));
    free((void *)c.name0);
    /* Counts: past a limit is SB_ERR_LIMIT, within it but past the bytes left
     * is SB_ERR_INVALID_INPUT; neither allocates by the count. */
    c = plain_v(v);
    c.ntrees_field = 10000001;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_LIMIT, "ntrees 10000001 exceeds the limit of 10000000"));
    c.ntrees_field = 10000000;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "does not fit"));
    c.ntrees_field = -1;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "ntrees is -1"));
    c.ntrees_field = 1;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "unused bytes"));
    c.ntrees_field = 3;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "ends inside"));
    c = plain_v(v);
    c.nnodes0_field = (1 << 24) + 1;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_LIMIT, "exceeds the limit of 16777216"));
    c.nnodes0_field = 1 << 24;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "does not fit"));
    c.nnodes0_field = 0;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "node count is 0"));
    c = plain_v(v);
    c.num_class_field = 10001;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_LIMIT, "num_class 10001 exceeds the limit of 10000"));
    c.num_class_field = 0;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "num_class is 0"));
    c = plain_v(v);
    c.num_features_field = 1000001;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_LIMIT, "num_features 1000001 exceeds the limit of 1000000"));
    c.num_features_field = 1000000;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "does not fit"));
    c = plain_v(v);
    c.length_field = (int64_t)1 << 40; /* stored length disagrees with the buffer */
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "truncated"));
    /* A valid model with +inf and -inf thresholds is fine. */
    m->trees[0].nodes[0].threshold = INFINITY;
    size_t len;
    uint8_t *b = encode(m, plain_v(v), &len);
    sb_model *back = NULL;
    SB_CHECK(sb_model_from_bytes(b, len, &back) == SB_OK && back && models_equal(m, back));
    sb_model_free(back);
    free(b);
    sb_model_free(m);
}

SB_TEST(test_model_format_bad_fields_rejected) {
    check_bad_fields(1);
    check_bad_fields(2);
}

/* ---- files ---- */

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

SB_TEST(test_model_format_save_and_load) {
    char dir[] = "/tmp/sb_model_format_XXXXXX";
    SB_CHECK(mkdtemp(dir) != NULL);
    char path[256], tmp[300], missing[300], big[300];
    snprintf(path, sizeof path, "%s/m.sbm", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    sb_model *m = regression_model(), *mc = multiclass_model(), *back = NULL;
    SB_CHECK(sb_model_save(m, path) == SB_OK && !exists(tmp));
    SB_CHECK(sb_model_load(path, &back) == SB_OK && back && models_equal(m, back));
    sb_model_free(back);
    back = NULL;
    /* Overwrite with another model. */
    SB_CHECK(sb_model_save(mc, path) == SB_OK);
    SB_CHECK(sb_model_load(path, &back) == SB_OK && back && models_equal(mc, back));
    sb_model_free(back);
    back = NULL;
    /* A failed save (invalid model) leaves the existing file as it was. */
    mc->trees[0].nodes[0].threshold = NAN;
    SB_CHECK(sb_model_save(mc, path) == SB_ERR_INVALID_ARGUMENT && !exists(tmp));
    mc->trees[0].nodes[0].threshold = 2.0f;
    SB_CHECK(sb_model_load(path, &back) == SB_OK && back && models_equal(mc, back));
    sb_model_free(back);
    back = NULL;
    /* A failed rename (the target is a non-empty directory) removes the temporary. */
    char sub[300], inner[320], subtmp[340];
    snprintf(sub, sizeof sub, "%s/d", dir);
    snprintf(inner, sizeof inner, "%s/keep", sub);
    snprintf(subtmp, sizeof subtmp, "%s.tmp.%ld", sub, (long)getpid());
    SB_CHECK(mkdir(sub, 0700) == 0);
    FILE *f = fopen(inner, "w");
    if (f) fclose(f);
    SB_CHECK(sb_model_save(m, sub) == SB_ERR_IO && !exists(subtmp) && exists(inner));
    SB_CHECK(sb_model_load(sub, &back) == SB_ERR_IO && back == NULL);
    /* A directory that does not exist. */
    snprintf(missing, sizeof missing, "%s/no/such/m.sbm", dir);
    SB_CHECK(sb_model_save(m, missing) == SB_ERR_IO && strstr(sb_last_error(), "no/such"));
    SB_CHECK(sb_model_load(missing, &back) == SB_ERR_IO && back == NULL && strstr(sb_last_error(), "no/such"));
    /* Over the 2 GiB limit (a sparse file: nothing is written or read). */
    snprintf(big, sizeof big, "%s/big.sbm", dir);
    f = fopen(big, "wb");
    int sparse = f && ftruncate(fileno(f), ((off_t)1 << 31) + 1) == 0;
    if (f) fclose(f);
    if (sparse) SB_CHECK(sb_model_load(big, &back) == SB_ERR_LIMIT && back == NULL);
    /* Errors from the parser keep their words and gain the path. */
    f = fopen(big, "wb");
    if (f) {
        fputs("hello", f);
        fclose(f);
    }
    SB_CHECK(sb_model_load(big, &back) == SB_ERR_INVALID_INPUT && back == NULL &&
             strstr(sb_last_error(), "not a samebits model") && strstr(sb_last_error(), "big.sbm"));
    remove(big);
    remove(inner);
    rmdir(sub);
    remove(path);
    rmdir(dir);
    sb_model_free(m);
    sb_model_free(mc);
}

/* ---- prediction data for a model (src/models/predict_data.c) ---- */

static int write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* Raw predictions of m on the CSV text through sb_dataset_read_for_model
 * equal those on the matrix x (nrows rows of the model's width). */
static int file_predicts_as_matrix(const sb_model *m, const char *path, const char *text, const float *x,
                                   int64_t nrows) {
    sb_dataset *a = NULL, *b = NULL;
    float pa[64], pb[64];
    size_t na = 0, nb = 0;
    int ok = write_text(path, text) && sb_dataset_read_for_model(m, path, "csv", &a) == SB_OK &&
             sb_dataset_from_matrix(x, nrows, m->num_features, &b) == SB_OK &&
             sb_model_predict(m, a, SB_PREDICT_RAW, pa, 64, &na) == SB_OK &&
             sb_model_predict(m, b, SB_PREDICT_RAW, pb, 64, &nb) == SB_OK && na == nb &&
             memcmp(pa, pb, na * sizeof(float)) == 0;
    if (!ok) fprintf(stderr, "  read_for_model: '%s'\n", sb_last_error());
    sb_dataset_free(a);
    sb_dataset_free(b);
    return ok;
}

SB_TEST(test_model_format_read_for_model) {
    char dir[] = "/tmp/sb_read_for_model_XXXXXX";
    SB_CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/p.csv", dir);
    /* Named: other columns are dropped and the features picked by name. */
    sb_model *m = regression_model();
    const float x[2 * 3] = {40.0f, 2e-40f, -INFINITY, 20.0f, NAN, 1.0f};
    SB_CHECK(file_predicts_as_matrix(m, path, "x,extra,age,h\xc3\xb6he\n-inf,9,40,2e-40\n1,9,20,nan\n", x, 2));
    sb_dataset *d = (sb_dataset *)&d;
    SB_CHECK(write_text(path, "x,age,extra,other\n1,2,3,4\n") &&
             sb_dataset_read_for_model(m, path, "csv", &d) == SB_ERR_INVALID_INPUT && d == NULL &&
             strstr(sb_last_error(), "feature 1 'h\xc3\xb6he' is not among the 4 columns"));
    sb_model_free(m);
    /* Without names (a file whose names flag is 0): its own width only. */
    m = multiclass_model();
    const float y[1 * 4] = {1.0f, 2.5f, NAN, 8.0f};
    SB_CHECK(file_predicts_as_matrix(m, path, "a,b,c,d\n1,2.5,,8\n", y, 1));
    d = (sb_dataset *)&d;
    SB_CHECK(write_text(path, "a,b,c,d,e\n1,2,3,4,5\n") &&
             sb_dataset_read_for_model(m, path, "csv", &d) == SB_ERR_INVALID_INPUT && d == NULL &&
             strstr(sb_last_error(), "has 5 columns, the model 4 features (and no feature names"));
    remove(path);
    rmdir(dir);
    sb_model_free(m);
}

/* ---- info, importance, arguments ---- */

SB_TEST(test_model_format_info) {
    sb_model *m = multiclass_model();
    sb_model_info info;
    SB_CHECK(sb_model_get_info(m, &info) == SB_OK);
    SB_CHECK(info.family == SB_FAMILY_GBDT && info.num_features == 4 && info.num_class == 3 &&
             info.ntrees == 6 && info.numeric_mode == SB_MODE_DETERMINISTIC &&
             strcmp(info.objective, "multiclass") == 0);
    sb_model_free(m);
    m = regression_model();
    SB_CHECK(sb_model_get_info(m, &info) == SB_OK && strcmp(info.objective, "regression") == 0);
    SB_CHECK(sb_model_get_info(m, NULL) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_model_get_info(NULL, &info) == SB_ERR_INVALID_ARGUMENT);
    sb_model_free(m);
}

SB_TEST(test_model_format_feature_importance) {
    sb_model *m = multiclass_model();
    size_t need = 0;
    float out[5] = {-1, -1, -1, -1, -1};
    SB_CHECK(sb_model_feature_importance(m, 0, NULL, 0, &need) == SB_OK && need == 4);
    SB_CHECK(sb_model_feature_importance(m, 0, out, 3, &need) == SB_ERR_LIMIT && need == 4 && out[0] == -1.0f);
    SB_CHECK(sb_model_feature_importance(m, 0, out, 5, &need) == SB_OK);
    SB_CHECK(out[0] == 1.0f && out[1] == 3.0f && out[2] == 0.0f && out[3] == 2.0f && out[4] == -1.0f);
    SB_CHECK(sb_model_feature_importance(m, 1, out, 4, NULL) == SB_OK);
    /* Feature 1: 2^24 + 1 + 1 in tree order is 2^24 (the other order would give 2^24 + 2). */
    SB_CHECK_EQ_U64(fbits(out[1]), fbits(16777216.0f));
    SB_CHECK(out[0] == 0.125f && out[2] == 0.0f && out[3] == 6.5f);
    SB_CHECK(sb_model_feature_importance(m, 2, out, 4, &need) == SB_ERR_INVALID_ARGUMENT &&
             strstr(sb_last_error(), "unknown type 2"));
    SB_CHECK(sb_model_feature_importance(m, -1, NULL, 0, &need) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_model_feature_importance(NULL, 0, out, 4, &need) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_model_feature_importance(m, 0, NULL, 4, &need) == SB_ERR_INVALID_ARGUMENT);
    sb_model_free(m);
    m = regression_model();
    SB_CHECK(sb_model_feature_importance(m, 1, out, 3, &need) == SB_OK && need == 3);
    SB_CHECK(out[0] == 12.25f && out[1] == 0.75f && out[2] == 3.5f);
    sb_model_free(m);
}

SB_TEST(test_model_format_null_arguments) {
    sb_model *m = regression_model(), *out = (sb_model *)&m;
    char hex[65];
    size_t need;
    uint8_t b[8];
    SB_CHECK(sb_model_to_bytes(NULL, b, 8, &need) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_model_to_bytes(m, NULL, 8, &need) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_model_to_bytes(m, NULL, 0, NULL) == SB_OK);
    SB_CHECK(sb_model_from_bytes(NULL, 8, &out) == SB_ERR_INVALID_ARGUMENT && out == NULL);
    SB_CHECK(sb_model_from_bytes(b, 8, NULL) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_model_save(NULL, "x") == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_model_save(m, NULL) == SB_ERR_INVALID_ARGUMENT);
    out = (sb_model *)&m;
    SB_CHECK(sb_model_load(NULL, &out) == SB_ERR_INVALID_ARGUMENT && out == NULL);
    SB_CHECK(sb_model_load("x", NULL) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_model_digest(NULL, hex) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_model_digest(m, NULL) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_model_alloc(NULL) == SB_ERR_INVALID_ARGUMENT);
    sb_model_free(NULL);
    /* A successful call clears the last error. */
    SB_CHECK(sb_model_digest(m, hex) == SB_OK && sb_last_error()[0] == '\0');
    sb_model_free(m);
}

/* ---- raw scores that can overflow ---- */

/* Prediction refuses, by name and before any row, a model whose raw score
 * could overflow float32 (sb_model_check_score_range), on every backend the
 * same: a margin of inf, then NaN, would not have the same bits everywhere.
 * Fails before the fix: predict returned SB_OK with inf margins. */
SB_TEST(test_model_format_score_overflow_is_refused) {
    sb_model *m = regression_model();
    const float x[2 * 3] = {20.0f, 1.0f, 0.0f, 40.0f, 0.0f, 1.0f};
    sb_dataset *d = NULL;
    float out[2];
    SB_CHECK(m && sb_dataset_from_matrix(x, 2, 3, &d) == SB_OK);
    SB_CHECK(sb_model_check_score_range(m) == SB_OK);
    /* tree 0's leaves at 3e38 and tree 1's at 2e38: their sum overflows */
    m->trees[0].nodes[1].value = 3e38f;
    m->trees[1].nodes[1].value = -2e38f;
    m->trees[1].nodes[2].value = 2e38f;
    SB_CHECK(sb_model_predict(m, d, SB_PREDICT_RAW, out, 2, NULL) == SB_ERR_LIMIT);
    SB_CHECK(strstr(sb_last_error(), "raw scores of class 0 can overflow float32") != NULL);
    SB_CHECK(sb_model_predict(m, d, SB_PREDICT_VALUE, NULL, 0, NULL) == SB_ERR_LIMIT); /* before any row */
    /* large leaves whose sum stays finite predict */
    m->trees[0].nodes[1].value = 1e38f;
    m->trees[1].nodes[2].value = 1e38f;
    SB_CHECK(sb_model_predict(m, d, SB_PREDICT_RAW, out, 2, NULL) == SB_OK);
    SB_CHECK(out[0] - out[0] == 0.0f && out[1] - out[1] == 0.0f);
    /* the base score counts too, and a NaN leaf is refused as well */
    m->base_score[0] = 3e38f;
    SB_CHECK(sb_model_check_score_range(m) == SB_ERR_LIMIT);
    m->base_score[0] = 0.5f;
    m->trees[1].nodes[2].value = NAN;
    SB_CHECK(sb_model_check_score_range(m) == SB_ERR_LIMIT);
    sb_dataset_free(d);
    sb_model_free(m);
}

/* ---- forest classifiers' probabilities by profile (docs/numeric-profile.md, v5) ---- */

#define GOLDEN_V4_FOREST_NAME "models/v4-forest-classes.sbm"

/* The query rows of the golden v4 forest (two features a, b) and what the
 * library that wrote it (profile sb-identical-v4, commit c887a6a) predicted:
 * `samebits predict --proba` (%.9g, which gives back the float32 bits) and
 * the class. Its leaves hold class frequency / 10 and 10 x 0.1f adds to
 * 1.00000012 in float32: the raw margin, above 1, was the probability. */
static const float k_v4_rows[8 * 2] = {0.0f, 0.0f, 2.0f, 0.5f, 4.0f, -0.2f, 1.0f, 0.1f,
                                       3.0f, 0.9f, -1.0f, -1.0f, 1.5f, -0.4f, 2.6f, 0.3f};
static const char *const k_v4_proba[8 * 3] = {
    "1.00000012", "0", "0",          "0.00625000009", "0.993750095", "0",
    "0", "0", "1.00000012",          "0.389583349", "0.61041671", "0",
    "0.00625000009", "0.693750024", "0.300000012", "1.00000012", "0", "0",
    "0.00625000009", "0.993750095", "0", "0.00625000009", "0.993750095", "0"};
static const float k_v4_class[8] = {0, 1, 2, 1, 1, 0, 1, 1};

/* The golden v4 forest classifier predicts under this library the bits the
 * library that wrote it predicted (probabilities above 1 included), and keeps
 * its profile; the same trees under profile v5 predict the normalized rule,
 * spelled here on their own: s = the row's margins added in class order in
 * float32, p = m / s. Fails if v5's rule reached v4 files (row 0 would be
 * 1, not 1.00000012) or if v5 kept the raw margins. */
SB_TEST(test_model_format_forest_proba_by_profile) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", sb_test_data_dir(), GOLDEN_V4_FOREST_NAME);
    sb_model *m = NULL;
    sb_dataset *d = NULL;
    float proba[8 * 3], raw[8 * 3], value[8];
    const char *profile = NULL;
    SB_CHECK(sb_model_load(path, &m) == SB_OK && m != NULL);
    SB_CHECK(sb_dataset_from_matrix(k_v4_rows, 8, 2, &d) == SB_OK);
    if (!m || !d) goto done;
    SB_CHECK(sb_model_get_profile(m, &profile) == SB_OK && strcmp(profile, "sb-identical-v4") == 0);
    SB_CHECK(m->objective == SB_OBJ_FOREST_CLASSES && m->num_class == 3);
    SB_CHECK(sb_model_predict(m, d, SB_PREDICT_PROBA, proba, 24, NULL) == SB_OK);
    SB_CHECK(sb_model_predict(m, d, SB_PREDICT_RAW, raw, 24, NULL) == SB_OK);
    SB_CHECK(sb_model_predict(m, d, SB_PREDICT_VALUE, value, 8, NULL) == SB_OK);
    for (int i = 0; i < 24; i++) {
        SB_CHECK(fbits(proba[i]) == fbits(strtof(k_v4_proba[i], NULL)));
        SB_CHECK(fbits(proba[i]) == fbits(raw[i]));
    }
    for (int r = 0; r < 8; r++) SB_CHECK(value[r] == k_v4_class[r]);
    SB_CHECK(proba[0] > 1.0f);
    /* the same trees under this library's profile */
    m->profile = SB_PROFILE_VERSION;
    SB_CHECK(sb_model_predict(m, d, SB_PREDICT_PROBA, proba, 24, NULL) == SB_OK);
    SB_CHECK(sb_model_predict(m, d, SB_PREDICT_VALUE, value, 8, NULL) == SB_OK);
    int moved = 0;
    for (int r = 0; r < 8; r++) {
        float s = 0.0f;
        for (int c = 0; c < 3; c++) s += raw[r * 3 + c];
        for (int c = 0; c < 3; c++) {
            const float want = raw[r * 3 + c] / s;
            SB_CHECK(fbits(proba[r * 3 + c]) == fbits(want));
            SB_CHECK(proba[r * 3 + c] >= 0.0f && proba[r * 3 + c] <= 1.0f);
            moved += fbits(want) != fbits(raw[r * 3 + c]);
        }
        SB_CHECK(value[r] == k_v4_class[r]);
    }
    SB_CHECK(fbits(proba[0]) == fbits(1.0f) && moved > 0);
    /* a row whose margins are all zero (a hand-made file) gets 1/K each */
    for (int32_t t = 0; t < m->ntrees; t++)
        for (int32_t k = 0; k < m->trees[t].nnodes; k++) m->trees[t].nodes[k].value = 0.0f;
    SB_CHECK(sb_model_predict(m, d, SB_PREDICT_PROBA, proba, 24, NULL) == SB_OK);
    for (int i = 0; i < 24; i++) SB_CHECK(fbits(proba[i]) == fbits(1.0f / 3.0f));
done:
    sb_dataset_free(d);
    sb_model_free(m);
}

/* ---- class labels (format version 3; docs/model-format.md, "Class labels") ---- */


/* The binary model: the golden regression model under the binary objective
 * (two classes). */
static sb_model *binary_model(void) {
    sb_model *m = regression_model();
    if (m) m->objective = SB_OBJ_BINARY;
    return m;
}

/* m's labels in version 3: the writer's file is version 3, reads back with
 * the same labels, writes the same bytes again, agrees with the document's
 * encoder, and differs from the unlabeled version-2 file (the digest names the
 * labels too), which sb_model_to_bytes_version(m, 2) still writes. */
static void check_labeled(sb_model *m, const uint8_t *unlabeled, size_t ulen) {
    size_t len = 0, len2 = 0, elen = 0;
    uint8_t *b = model_bytes(m, &len);
    SB_CHECK(b && b[8] == 3);
    if (!b) return;
    sb_model *back = NULL;
    SB_CHECK(sb_model_from_bytes(b, len, &back) == SB_OK && back && back->labels);
    if (back && back->labels) {
        const sb_labels *x = m->labels, *y = back->labels;
        SB_CHECK(x->kind == y->kind && x->n == y->n);
        for (int32_t i = 0; i < x->n && x->kind == y->kind; i++) {
            if (x->kind == SB_LABELS_STRING) SB_CHECK(strcmp(x->strs[i], y->strs[i]) == 0);
            else if (x->kind == SB_LABELS_FLOAT64) SB_CHECK(memcmp(&x->floats[i], &y->floats[i], 8) == 0);
            else SB_CHECK(x->ints[i] == y->ints[i]);
        }
        uint8_t *b2 = model_bytes(back, &len2);
        SB_CHECK(b2 && len2 == len && memcmp(b, b2, len) == 0);
        free(b2);
    }
    sb_model_free(back);
    uint8_t *e = encode(m, plain_v(3), &elen);
    SB_CHECK(elen == len && memcmp(e, b, len) == 0);
    free(e);
    char hex[65], stored[65];
    sb_hex(b + len - 32, 32, stored);
    SB_CHECK(sb_model_digest(m, hex) == SB_OK && strcmp(hex, stored) == 0);
    SB_CHECK(len != ulen || memcmp(b, unlabeled, len) != 0);
    uint8_t *v2 = model_bytes_v(m, 2, &len2);
    SB_CHECK(v2 && len2 == ulen && memcmp(v2, unlabeled, ulen) == 0);
    free(v2);
    free(b);
}

SB_TEST(test_model_format_labels_roundtrip) {
    sb_model *m = multiclass_model(), *bm = binary_model();
    SB_CHECK(m && bm);
    if (!m || !bm) goto done;
    size_t ulen = 0, bulen = 0;
    uint8_t *u = model_bytes(m, &ulen), *bu = model_bytes(bm, &bulen);
    const int64_t ints[3] = {-5, 0, (int64_t)1 << 40};
    const double floats[3] = {-0.5, 0.0, 2.5};
    const char *const strs[3] = {"a", "b b", "\xc3\xa4"}; /* byte order: 'a' < 'b' < 0xC3 */
    const uint8_t bools[2] = {0, 1};
    SB_CHECK(sb_model_set_class_labels(m, SB_LABELS_INT64, 3, ints) == SB_OK);
    check_labeled(m, u, ulen);
    SB_CHECK(sb_model_set_class_labels(m, SB_LABELS_FLOAT64, 3, floats) == SB_OK);
    check_labeled(m, u, ulen);
    SB_CHECK(sb_model_set_class_labels(m, SB_LABELS_STRING, 3, strs) == SB_OK);
    check_labeled(m, u, ulen);
    SB_CHECK(sb_model_set_class_labels(bm, SB_LABELS_BOOL, 2, bools) == SB_OK);
    check_labeled(bm, bu, bulen);
    /* the getters */
    int32_t kind = -1;
    size_t n = 0, need = 0;
    const char *str = NULL;
    SB_CHECK(sb_model_get_class_labels(m, &kind, &n) == SB_OK && kind == SB_LABELS_STRING && n == 3);
    SB_CHECK(sb_model_get_class_label_string(m, 2, &str) == SB_OK && strcmp(str, "\xc3\xa4") == 0);
    SB_CHECK(sb_model_get_class_label_string(m, 3, &str) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_model_get_class_label_values(m, NULL, 0, &need) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_model_set_class_labels(m, SB_LABELS_INT64, 3, ints) == SB_OK);
    int64_t got[3] = {0};
    SB_CHECK(sb_model_get_class_label_values(m, NULL, 0, &need) == SB_OK && need == 3);
    SB_CHECK(sb_model_get_class_label_values(m, got, 2, &need) == SB_ERR_LIMIT);
    SB_CHECK(sb_model_get_class_label_values(m, got, 3, &need) == SB_OK && got[2] == ((int64_t)1 << 40));
    SB_CHECK(sb_model_get_class_label_string(m, 0, &str) == SB_ERR_INVALID_ARGUMENT);
    /* removing them gives back the version-2 file */
    SB_CHECK(sb_model_set_class_labels(m, SB_LABELS_NONE, 0, NULL) == SB_OK);
    SB_CHECK(sb_model_get_class_labels(m, &kind, &n) == SB_OK && kind == SB_LABELS_NONE && n == 0);
    size_t len = 0;
    uint8_t *b = model_bytes(m, &len);
    SB_CHECK(b && len == ulen && memcmp(b, u, len) == 0);
    free(b);
    free(u);
    free(bu);
done:
    sb_model_free(m);
    sb_model_free(bm);
}

/* Bad labels are refused by name, and the model keeps the labels it had. */
SB_TEST(test_model_format_labels_refused) {
    sb_model *m = multiclass_model(), *r = regression_model(), *bm = binary_model();
    SB_CHECK(m && r && bm);
    if (!m || !r || !bm) goto done;
    const int64_t good[3] = {1, 2, 3}, unsorted[3] = {1, 3, 2}, repeated[3] = {1, 1, 2};
    const double nan3[3] = {0.0, NAN, 1.0}, zeros[3] = {-0.0, 0.0, 1.0};
    const char *const dup[3] = {"a", "a", "b"}, *const bad[3] = {"a", "b", "\xff"}, *const nul3[3] = {"a", NULL, "c"};
    const uint8_t bools_rev[2] = {1, 0}, bools3[3] = {0, 1, 1};
    SB_CHECK(sb_model_set_class_labels(m, SB_LABELS_INT64, 3, good) == SB_OK);
    struct { int32_t kind; size_t n; const void *v; const char *want; } cases[] = {
        {SB_LABELS_INT64, 2, good, "2 labels for a model of 3 classes"},
        {SB_LABELS_INT64, 3, unsorted, "strictly increasing (label 2, 2, after 3)"},
        {SB_LABELS_INT64, 3, repeated, "strictly increasing"},
        {SB_LABELS_FLOAT64, 3, nan3, "class label 1 is NaN"},
        {SB_LABELS_FLOAT64, 3, zeros, "strictly increasing"},
        {SB_LABELS_STRING, 3, dup, "strictly increasing by their bytes"},
        {SB_LABELS_STRING, 3, bad, "class label 2 is not valid UTF-8"},
        {SB_LABELS_STRING, 3, nul3, "class label 1 is NULL"},
        {SB_LABELS_BOOL, 3, bools3, "false then true"},
        {9, 3, good, "kind 9 is not one of"},
        {SB_LABELS_INT64, 3, NULL, "NULL values"},
        {SB_LABELS_NONE, 3, NULL, "SB_LABELS_NONE takes n 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const sb_status st = sb_model_set_class_labels(m, cases[i].kind, cases[i].n, cases[i].v);
        SB_CHECK(st == SB_ERR_INVALID_ARGUMENT && strstr(sb_last_error(), cases[i].want));
        if (st != SB_ERR_INVALID_ARGUMENT || !strstr(sb_last_error(), cases[i].want))
            fprintf(stderr, "  case %zu: %s\n", i, sb_last_error());
        SB_CHECK(m->labels && m->labels->kind == SB_LABELS_INT64 && m->labels->ints[2] == 3);
    }
    SB_CHECK(sb_model_set_class_labels(bm, SB_LABELS_BOOL, 2, bools_rev) == SB_ERR_INVALID_ARGUMENT &&
             strstr(sb_last_error(), "false then true"));
    SB_CHECK(sb_model_set_class_labels(r, SB_LABELS_INT64, 1, good) == SB_ERR_INVALID_ARGUMENT &&
             strstr(sb_last_error(), "is not a classifier"));
    SB_CHECK(sb_model_set_class_labels(NULL, SB_LABELS_INT64, 3, good) == SB_ERR_INVALID_ARGUMENT);
    /* a file whose labels break a rule is refused when read (the digest is right) */
    const uint8_t unsorted_raw[] = {1, 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,
                                    2, 0, 0, 0, 0, 0, 0, 0};
    const uint8_t kind0[] = {0, 3, 0, 0, 0};
    const uint8_t too_many[] = {4, 0xff, 0xff, 0, 0, 0, 1};
    craft c = plain_v(3);
    c.labels_raw = unsorted_raw, c.labels_raw_len = sizeof unsorted_raw;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "strictly increasing (label 2, 2, after 3)"));
    c.labels_raw = kind0, c.labels_raw_len = sizeof kind0;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_INVALID_INPUT, "class label kind 0 is not one of"));
    c.labels_raw = too_many, c.labels_raw_len = sizeof too_many;
    SB_CHECK(crafted_rejects(m, c, SB_ERR_LIMIT, "class-label count"));
    /* a version-3 file of a model that is not a classifier */
    sb_model_free(r);
    r = regression_model();
    const uint8_t two[] = {1, 1, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0};
    c.labels_raw = two, c.labels_raw_len = sizeof two;
    SB_CHECK(crafted_rejects(r, c, SB_ERR_INVALID_INPUT, "class labels belong to classifiers"));
done:
    sb_model_free(m);
    sb_model_free(r);
    sb_model_free(bm);
}

/* The version-3 golden file (tests/data/models/v3-labels.sbm): the writer
 * reproduces it byte for byte, its digest is the constant, and it reads back
 * into the labeled model, which writes it again. */
SB_TEST(test_model_format_golden_v3_bytes) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", sb_test_data_dir(), GOLDEN_V3_NAME);
    size_t glen = 0, len = 0;
    uint8_t *g = read_file(path, &glen);
    sb_model *m = labeled_model(), *loaded = NULL;
    SB_CHECK(g != NULL && m != NULL);
    if (!g || !m) goto done;
    uint8_t *b = model_bytes(m, &len);
    SB_CHECK(b != NULL && len == glen && memcmp(b, g, glen) == 0 && g[8] == 3);
    free(b);
    char hex[65];
    sb_hex(g + glen - 32, 32, hex);
    SB_CHECK(strcmp(hex, GOLDEN_V3_DIGEST) == 0);
    SB_CHECK(sb_model_load(path, &loaded) == SB_OK && loaded && models_equal(m, loaded));
    const char *str = NULL;
    SB_CHECK(loaded && sb_model_get_class_label_string(loaded, 1, &str) == SB_OK && strcmp(str, "b b") == 0);
done:
    sb_model_free(loaded);
    sb_model_free(m);
    free(g);
}
