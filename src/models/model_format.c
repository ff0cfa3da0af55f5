/*
 * model_format.c: the model file format (docs/model-format.md): validation,
 * writing, reading, saving and loading. The writer writes version 2 (common
 * fields, then a family-tagged payload) and, on request, version 1 (the tree
 * families' first layout, which cards record); the reader reads both. The
 * in-memory model's other life-cycle calls are in model.c.
 *
 * Every byte is written field by field through the little-endian helpers below,
 * never by copying a struct or a host integer, so the bytes do not depend on the
 * host's endianness, struct padding or alignment: x86-64, aarch64 and s390x write
 * the same file. Reading validates everything against the buffer length before
 * any allocation sized by the file, checks the SHA-256 before any count is
 * trusted, and then checks the model's structure with the same rules the writer
 * applies, so a file this library writes is always a file it accepts.
 */
#include "neighbors/knn.h"
#include "timeseries/ets.h"
#include "timeseries/arima.h"
#include "gp/gp.h"
#include "mlp/mlp.h"
#include "lm/lm.h"
#include "manifold/umap.h"
#include "model.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the format's constants (docs/model-format.md, "Limits") ---- */

#define MF_MAGIC "SBMODEL\0"
#define MF_MAGIC_LEN 8u
#define MF_VERSION SB_MODEL_FORMAT_VERSION /* what the writer writes for a model without labels */
#define MF_VERSION_LABELS 3u /* what it writes for a model with class labels: version 2 and the labels */
#define MF_VERSION_CATS 4u   /* what it writes for a model with categorical splits: labels optional, each
                              * tree's category sets after its nodes */
#define MF_VERSION_MAX 4u    /* the newest version the reader reads (it reads 1..4) */
#define MF_MAX_CAT_CODES 255 /* codes in one set: a categorical feature has at most 255 value bins */
#define MF_DIGEST_LEN 32u
#define MF_HEADER_LEN 20u /* magic, version, total length: the frame every version keeps */
#define MF_NODE_LEN 33u   /* one node on disk */
#define MF_TAG_LEN 4u     /* a version-2 payload tag, four ASCII bytes */
#define MF_MAX_FILE ((uint64_t)1 << 31) /* 2 GiB */
#define MF_MAX_FEATURES 1000000
#define MF_MAX_CLASS 10000
#define MF_MAX_TREES 10000000
#define MF_MAX_NODES (1 << 24)
#define MF_MAX_STRING 65536u
_Static_assert(MF_MAX_STRING == SB_MAX_NAME_BYTES, "the readers refuse the names the format refuses");
#define MF_MAX_PROFILE 64u
/* Smallest valid version-1 file: header, profile "" (4), five i32 (20), one
 * base score (4), params "" (4), names flag (1), ntrees (4), digest. */
#define MF_MIN_FILE_V1 (MF_HEADER_LEN + 4u + 20u + 4u + 4u + 1u + 4u + MF_DIGEST_LEN)
/* Smallest version-2 file whatever its family: header, profile "" (4), three
 * i32 (12), params "" (4), names flag (1), payload tag (4) and length (8), an
 * empty payload, digest. */
#define MF_MIN_FILE_V2 (MF_HEADER_LEN + 4u + 12u + 4u + 1u + MF_TAG_LEN + 8u + MF_DIGEST_LEN)
/* Smallest version-3 file: version 2's and a labels section of one bool. */
#define MF_MIN_FILE_V3 (MF_MIN_FILE_V2 + 1u + 4u + 1u)
/* Smallest version-4 file: version 2's, the labels flag and the category-name count. */
#define MF_MIN_FILE_V4 (MF_MIN_FILE_V2 + 1u + 4u)
/* The tree families' payload in version 2. */
#define MF_TAG_TREES "TREE"
/* The linear family's payload (version 2 only). */
#define MF_TAG_LINEAR "LINR"
#define MF_MAX_LINEAR_OUT 100000
/* The k-means family's payload (version 2 only). */
#define MF_TAG_KMEANS "CNTR"
#define MF_TAG_KNN "NBRS"
#define MF_TAG_DBSCAN "DBSC"
#define MF_TAG_AGGLO "AGGL"
#define MF_TAG_SPECTRAL "SPEC"
#define MF_TAG_KDE "KDEN"
#define MF_TAG_SVM "SVMS"
/* Exponential smoothing's payload (version 2 only): a batch of fitted series. */
#define MF_TAG_ETS "ETSM"
#define MF_TAG_ARIMA "ARIM" /* ARIMA: a batch of fitted series */
/* Gaussian process regression's payload (version 2 only). */
#define MF_TAG_GP "GPRM"
#define MF_TAG_MLP "MLPN"
#define MF_TAG_LM "BLM1" /* the byte language model and its training state */
/* UMAP's payload (version 2 only): the frozen fit. */
#define MF_TAG_UMAP "UMAP"
#define MF_MAX_NEIGHBORS 100000
#define MF_MAX_CLUSTERS 1000000

/* ---- little-endian byte helpers (host-independent) ---- */

static void put_u32(uint8_t *p, uint32_t v) {
#ifdef SB_SABOTAGE_WRITER_ENDIAN
    /* Separating arm for rule 9 (make SABOTAGE=writer-endian): the writer
     * copies the host's bytes, invisible on little-endian hosts, wrong on s390x. */
    memcpy(p, &v, sizeof v);
    return;
#endif
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void put_u64(uint8_t *p, uint64_t v) {
#ifdef SB_SABOTAGE_WRITER_ENDIAN
    memcpy(p, &v, sizeof v);
    return;
#endif
    put_u32(p, (uint32_t)v);
    put_u32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const uint8_t *p) {
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

/* The IEEE binary32 bits of x as an integer (same value on every host). */
static uint32_t float_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float bits_float(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Two's-complement reinterpretation without implementation-defined conversions. */
static int32_t u32_to_i32(uint32_t u) {
    return u <= 0x7fffffffu ? (int32_t)u : (int32_t)(u - 0x80000000u) - INT32_MAX - 1;
}

static int64_t u64_to_i64(uint64_t u) {
    return u <= 0x7fffffffffffffffu ? (int64_t)u : (int64_t)(u - 0x8000000000000000u) - INT64_MAX - 1;
}

/* ---- validation shared by the writer and the reader ---- */

/* Whether params text is canonical: empty, or "key=value\n" lines with a
 * non-empty key (no '=' in it), keys strictly increasing in byte order. */
static int canonical_params(const char *s, size_t n, size_t *bad_at) {
    size_t i = 0, prev_key = 0, prev_len = 0;
    int have_prev = 0;
    while (i < n) {
        size_t key = i;
        while (i < n && s[i] != '=' && s[i] != '\n') i++;
        if (i == n || s[i] != '=' || i == key) {
            *bad_at = key;
            return 0;
        }
        size_t klen = i - key;
        while (i < n && s[i] != '\n') i++;
        if (i == n) {
            *bad_at = key;
            return 0;
        }
        i++; /* the '\n' */
        if (have_prev) {
            size_t common = klen < prev_len ? klen : prev_len;
            int c = memcmp(s + prev_key, s + key, common);
            if (c > 0 || (c == 0 && prev_len >= klen)) {
                *bad_at = key;
                return 0;
            }
        }
        prev_key = key;
        prev_len = klen;
        have_prev = 1;
    }
    return 1;
}

/* Check a string field: length limit (SB_ERR_LIMIT), UTF-8 without NUL (bad). */
static sb_status check_string(const char *s, size_t n, size_t limit, sb_status bad, const char *who,
                              const char *what) {
    if (n > limit)
        return sb_fail(SB_ERR_LIMIT, "%s: %s is %zu bytes, more than the limit of %zu", who, what, n, limit);
    if (!sb_utf8_valid(s, n))
        return sb_fail(bad, "%s: %s is not valid UTF-8 (or contains a NUL byte)", who, what);
    return SB_OK;
}

/* Check one tree: every rule of docs/model-format.md, "Tree structure".
 * refs is scratch of nnodes bytes. */
static sb_status check_tree(const sb_model *m, int32_t t, uint8_t *refs, sb_status bad, const char *who) {
    const sb_tree *tr = &m->trees[t];
    int32_t n = tr->nnodes;
    memset(refs, 0, (size_t)n);
    for (int32_t i = 0; i < n; i++) {
        const sb_tree_node *nd = &tr->nodes[i];
        if (isnan(nd->threshold))
            return sb_fail(bad, "%s: tree %d node %d: threshold is NaN", who, (int)t, (int)i);
        if (!isfinite(nd->value))
            return sb_fail(bad, "%s: tree %d node %d: value is not finite", who, (int)t, (int)i);
        if (!isfinite(nd->gain))
            return sb_fail(bad, "%s: tree %d node %d: gain is not finite", who, (int)t, (int)i);
        if (nd->count < 0)
            return sb_fail(bad, "%s: tree %d node %d: negative count %lld", who, (int)t, (int)i,
                           (long long)nd->count);
        if (nd->default_left > 1)
            return sb_fail(bad, "%s: tree %d node %d: default_left is %d, not 0 or 1", who, (int)t, (int)i,
                           (int)nd->default_left);
        if (nd->categorical &&
            (m->family != SB_FAMILY_GBDT || nd->feature < 0 || nd->cat_set < 0 || nd->cat_set >= tr->ncat ||
             nd->threshold != 0.0f || nd->default_left != 0))
            return sb_fail(bad, "%s: tree %d node %d: a categorical split must be a gradient boosting tree's internal "
                           "node with threshold 0, default_left 0 and one of the tree's %d category sets", who,
                           (int)t, (int)i, (int)tr->ncat);
        if (nd->feature == -1) {
            if (nd->left != -1 || nd->right != -1)
                return sb_fail(bad, "%s: tree %d node %d: a leaf (feature -1) with children %d and %d", who,
                               (int)t, (int)i, (int)nd->left, (int)nd->right);
            continue;
        }
        if (nd->feature < 0 || nd->feature >= m->num_features)
            return sb_fail(bad, "%s: tree %d node %d: feature %d outside [0, %d) (leaves use -1)", who,
                           (int)t, (int)i, (int)nd->feature, (int)m->num_features);
        int32_t kids[2] = {nd->left, nd->right};
        for (int k = 0; k < 2; k++) {
            if (kids[k] <= i || kids[k] >= n)
                return sb_fail(bad,
                               "%s: tree %d node %d: %s child %d is not in (%d, %d) (children follow their parent)",
                               who, (int)t, (int)i, k ? "right" : "left", (int)kids[k], (int)i, (int)n);
            if (refs[kids[k]])
                return sb_fail(bad, "%s: tree %d node %d: node %d is a child twice", who, (int)t, (int)i,
                               (int)kids[k]);
            refs[kids[k]] = 1;
        }
    }
    /* Children follow their parents, so a node with one parent reaches the root. */
    for (int32_t i = 1; i < n; i++)
        if (!refs[i])
            return sb_fail(bad, "%s: tree %d node %d is unreachable (no parent)", who, (int)t, (int)i);
    if (tr->ncat < 0 || tr->ncat > n)
        return sb_fail(bad, "%s: tree %d: %d category sets", who, (int)t, (int)tr->ncat);
    /* one spelling: the categorical nodes, in node order, name the sets 0, 1, 2, ... */
    int32_t next = 0;
    for (int32_t i = 0; i < n; i++) {
        if (!tr->nodes[i].categorical) continue;
        if (tr->nodes[i].cat_set != next)
            return sb_fail(bad, "%s: tree %d node %d: category set %d where the next set in node order is %d (each "
                           "categorical node has its own set, numbered in node order)", who, (int)t, (int)i,
                           (int)tr->nodes[i].cat_set, (int)next);
        next++;
    }
    if (next != tr->ncat)
        return sb_fail(bad, "%s: tree %d: %d category sets for %d categorical nodes", who, (int)t, (int)tr->ncat,
                       (int)next);
    for (int32_t c = 0; c < tr->ncat; c++) {
        const int32_t a = tr->cat_start[c], b = tr->cat_start[c + 1];
        if (a < 0 || b - a < 1 || b - a > MF_MAX_CAT_CODES)
            return sb_fail(bad, "%s: tree %d: category set %d has %d codes (1..%d)", who, (int)t, (int)c,
                           (int)(b - a), MF_MAX_CAT_CODES);
        for (int32_t k = a; k < b; k++) {
            const float v = tr->cat_codes[k];
            if (!(v >= 0.0f && v < 2147483648.0f) || (float)(int64_t)v != v || (k > a && !(v > tr->cat_codes[k - 1])))
                return sb_fail(bad, "%s: tree %d: category set %d: %g is not a code above the one before it", who,
                               (int)t, (int)c, (double)v);
        }
    }
    return SB_OK;
}

/* Check a whole model against the format's rules and limits. bad is the status
 * for a broken rule (SB_ERR_INVALID_ARGUMENT when writing, SB_ERR_INVALID_INPUT
 * when reading); an exceeded limit is SB_ERR_LIMIT. who prefixes messages. */
static sb_status check_common(const sb_model *m, sb_status bad, const char *who);
static sb_status check_linear(const sb_model *m, sb_status bad, const char *who);
static sb_status check_kmeans(const sb_model *m, sb_status bad, const char *who);
static sb_status check_knn(const sb_model *m, sb_status bad, const char *who);
static sb_status check_dbscan(const sb_model *m, sb_status bad, const char *who);
static sb_status check_agglo(const sb_model *m, sb_status bad, const char *who);
static sb_status check_spectral(const sb_model *m, sb_status bad, const char *who);
static sb_status check_kde(const sb_model *m, sb_status bad, const char *who);
static sb_status check_ets(const sb_model *m, sb_status bad, const char *who);
static sb_status check_arima(const sb_model *m, sb_status bad, const char *who);
static sb_status check_svm(const sb_model *m, sb_status bad, const char *who);
static sb_status check_gp(const sb_model *m, sb_status bad, const char *who);
static sb_status check_mlp(const sb_model *m, sb_status bad, const char *who);
static sb_status check_lm(const sb_model *m, sb_status bad, const char *who);
static sb_status check_umap(const sb_model *m, sb_status bad, const char *who);

static sb_status check_model(const sb_model *m, sb_status bad, const char *who) {
    if (m->family == SB_FAMILY_KNN) return check_knn(m, bad, who);
    if (m->family == SB_FAMILY_DBSCAN) return check_dbscan(m, bad, who);
    if (m->family == SB_FAMILY_AGGLOMERATIVE) return check_agglo(m, bad, who);
    if (m->family == SB_FAMILY_SPECTRAL) return check_spectral(m, bad, who);
    if (m->family == SB_FAMILY_KDE) return check_kde(m, bad, who);
    if (m->family == SB_FAMILY_ETS) return check_ets(m, bad, who);
    if (m->family == SB_FAMILY_SVM) return check_svm(m, bad, who);
    if (m->family == SB_FAMILY_ARIMA) return check_arima(m, bad, who);
    if (m->family == SB_FAMILY_GP) return check_gp(m, bad, who);
    if (m->family == SB_FAMILY_MLP) return check_mlp(m, bad, who);
    if (m->family == SB_FAMILY_LM) return check_lm(m, bad, who);
    if (m->family == SB_FAMILY_UMAP) return check_umap(m, bad, who);
    if (m->family == SB_FAMILY_LINEAR) return check_linear(m, bad, who);
    if (m->family == SB_FAMILY_KMEANS) return check_kmeans(m, bad, who);
    if (m->family < SB_FAMILY_GBDT || m->family > SB_FAMILY_ISOLATION_FOREST)
        return sb_fail(bad, "%s: family %d is not a tree family (0..3), kmeans (4), linear (5), knn (6), dbscan (7), agglomerative (8), spectral (9), kde (10), ets (11), arima (12), svm (13), gp (14), umap (15), mlp (16) or lm (17)", who, (int)m->family);
    if ((m->objective < SB_OBJ_REGRESSION || m->objective > SB_OBJ_TWEEDIE) &&
        m->objective != SB_OBJ_FOREST_CLASSES && m->objective != SB_OBJ_ISOLATION)
        return sb_fail(bad, "%s: unknown objective %d (0 regression, 1 binary, 2 multiclass, 3 lambdarank, "
                       "4 rank_pairwise, 5 huber, 6 quantile, 7 poisson, 8 gamma, 9 tweedie, 10 forest classes, 11 isolation)", who, (int)m->objective);
    {
        /* objectives by family: gbdt 0-9; forests 0 and 10; isolation forest 11 */
        const int fits = m->family == SB_FAMILY_GBDT ? m->objective <= SB_OBJ_TWEEDIE
                       : m->family == SB_FAMILY_ISOLATION_FOREST
                           ? m->objective == SB_OBJ_ISOLATION
                           : m->objective == SB_OBJ_REGRESSION || m->objective == SB_OBJ_FOREST_CLASSES;
        if (!fits)
            return sb_fail(bad, "%s: objective %s does not fit family %d", who, sb_model_objective_name(m->objective),
                           (int)m->family);
    }
    if (m->numeric_mode < 0 || m->numeric_mode > 2)
        return sb_fail(bad, "%s: unknown numeric mode %d", who, (int)m->numeric_mode);
    if (m->num_class > MF_MAX_CLASS)
        return sb_fail(SB_ERR_LIMIT, "%s: num_class %d exceeds the limit of %d", who, (int)m->num_class,
                       MF_MAX_CLASS);
    if (m->objective == SB_OBJ_FOREST_CLASSES ? m->num_class < 2
        : m->objective == SB_OBJ_MULTICLASS   ? m->num_class < 3
                                              : m->num_class != 1)
        return sb_fail(bad, "%s: objective %s with num_class %d (regression and binary need 1, multiclass 3 or more)",
                       who, sb_model_objective_name(m->objective), (int)m->num_class);
    if (m->num_features > MF_MAX_FEATURES)
        return sb_fail(SB_ERR_LIMIT, "%s: num_features %d exceeds the limit of %d", who,
                       (int)m->num_features, MF_MAX_FEATURES);
    if (m->num_features < 1)
        return sb_fail(bad, "%s: num_features is %d, at least 1 is needed", who, (int)m->num_features);
    if (m->ntrees > MF_MAX_TREES)
        return sb_fail(SB_ERR_LIMIT, "%s: ntrees %d exceeds the limit of %d", who, (int)m->ntrees,
                       MF_MAX_TREES);
    if (m->ntrees < 0)
        return sb_fail(bad, "%s: ntrees is %d", who, (int)m->ntrees);
    if (m->ntrees % m->num_class != 0)
        return sb_fail(bad, "%s: ntrees %d is not a multiple of num_class %d", who, (int)m->ntrees,
                       (int)m->num_class);
    if (!m->base_score) return sb_fail(bad, "%s: base_score is NULL", who);
    for (int32_t k = 0; k < m->num_class; k++)
        if (!isfinite(m->base_score[k]))
            return sb_fail(bad, "%s: base_score[%d] is not finite", who, (int)k);
    sb_status st = check_common(m, bad, who);
    if (st != SB_OK) return st;
    if (m->ntrees > 0 && !m->trees) return sb_fail(bad, "%s: trees is NULL", who);
    int32_t most = 0;
    for (int32_t t = 0; t < m->ntrees; t++) {
        int32_t n = m->trees[t].nnodes;
        if (n > MF_MAX_NODES)
            return sb_fail(SB_ERR_LIMIT, "%s: tree %d has %d nodes, more than the limit of %d", who, (int)t,
                           (int)n, MF_MAX_NODES);
        if (n < 1) return sb_fail(bad, "%s: tree %d has %d nodes", who, (int)t, (int)n);
        if (!m->trees[t].nodes) return sb_fail(bad, "%s: tree %d has no node array", who, (int)t);
        if (n > most) most = n;
    }
    if (m->ntrees == 0) return SB_OK;
    uint8_t *refs = sb_malloc((size_t)most);
    if (!refs) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    st = SB_OK;
    for (int32_t t = 0; t < m->ntrees && st == SB_OK; t++) st = check_tree(m, t, refs, bad, who);
    sb_free(refs);
    return st;
}

/* What every family's model obeys: its params text and feature names. */
static sb_status check_common(const sb_model *m, sb_status bad, const char *who) {
    sb_status st;
    if (m->params) {
        size_t plen = strlen(m->params), at = 0;
        if ((st = check_string(m->params, plen, MF_MAX_STRING, bad, who, "params")) != SB_OK) return st;
        if (!canonical_params(m->params, plen, &at))
            return sb_fail(bad, "%s: params are not canonical 'key=value\\n' lines sorted by key (byte %zu)",
                           who, at);
    }
    if (m->feature_names) {
        for (int32_t f = 0; f < m->num_features; f++) {
            if (!m->feature_names[f]) return sb_fail(bad, "%s: feature name %d is NULL", who, (int)f);
            char what[48];
            snprintf(what, sizeof what, "feature name %d", (int)f);
            if ((st = check_string(m->feature_names[f], strlen(m->feature_names[f]), MF_MAX_STRING, bad,
                                   who, what)) != SB_OK)
                return st;
        }
    }
    if (m->labels) return sb_labels_check(m->labels, sb_model_class_count(m), bad, who);
    return SB_OK;
}

/* 1 when every one of the n values is finite. */
static int all_finite(const float *v, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

/* What the models of rows of features check alike, in this order: the
 * numeric mode label (0..2), then the feature count (at most MF_MAX_FEATURES:
 * more is SB_ERR_LIMIT; at least 1). */
static sb_status check_mode_features(const sb_model *m, sb_status bad, const char *who) {
    if (m->numeric_mode < 0 || m->numeric_mode > 2)
        return sb_fail(bad, "%s: unknown numeric mode %d", who, (int)m->numeric_mode);
    if (m->num_features > MF_MAX_FEATURES)
        return sb_fail(SB_ERR_LIMIT, "%s: num_features %d exceeds the limit of %d", who, (int)m->num_features,
                       MF_MAX_FEATURES);
    if (m->num_features < 1) return sb_fail(bad, "%s: num_features is %d, at least 1 is needed", who, (int)m->num_features);
    return SB_OK;
}

/* A linear model: its kind and shape, finite arrays, no trees. */
static sb_status check_linear(const sb_model *m, sb_status bad, const char *who) {
    const sb_linear *l = m->linear;
    if (!l) return sb_fail(bad, "%s: a linear model without its coefficients", who);
    if (m->ntrees != 0 || m->trees) return sb_fail(bad, "%s: a linear model has no trees", who);
    if (m->numeric_mode < 0 || m->numeric_mode > 2)
        return sb_fail(bad, "%s: unknown numeric mode %d", who, (int)m->numeric_mode);
    if (l->kind < 0 || l->kind >= SB_LIN_KIND_COUNT_)
        return sb_fail(bad, "%s: unknown linear kind %d (0..%d)", who, (int)l->kind, SB_LIN_KIND_COUNT_ - 1);
    if (m->num_features > MF_MAX_FEATURES)
        return sb_fail(SB_ERR_LIMIT, "%s: num_features %d exceeds the limit of %d", who,
                       (int)m->num_features, MF_MAX_FEATURES);
    if (m->num_features < 1)
        return sb_fail(bad, "%s: num_features is %d, at least 1 is needed", who, (int)m->num_features);
    if (l->nout > MF_MAX_LINEAR_OUT)
        return sb_fail(SB_ERR_LIMIT, "%s: %d coefficient rows exceed the limit of %d", who, (int)l->nout,
                       MF_MAX_LINEAR_OUT);
    if (l->nout < 1) return sb_fail(bad, "%s: %d coefficient rows", who, (int)l->nout);
    if ((uint64_t)l->nout * (uint64_t)m->num_features > (MF_MAX_FILE / 4))
        return sb_fail(SB_ERR_LIMIT, "%s: %d x %d coefficients exceed the file limit", who, (int)l->nout,
                       (int)m->num_features);
    if (l->kind == SB_LIN_LOGISTIC
            ? !(l->nclass == 2 ? l->nout == 1 : l->nclass >= 3 && l->nclass <= MF_MAX_CLASS && l->nout == l->nclass)
            : l->nclass != 0)
        return sb_fail(bad, "%s: %s with %d classes and %d coefficient rows", who, sb_linear_kind_name(l->kind),
                       (int)l->nclass, (int)l->nout);
    if (m->num_class != l->nout)
        return sb_fail(bad, "%s: num_class %d is not the %d coefficient rows", who, (int)m->num_class, (int)l->nout);
    const int dec = l->kind == SB_LIN_PCA || l->kind == SB_LIN_TSVD;
    const size_t nc = (size_t)l->nout * (size_t)m->num_features;
    if (!l->coef || !l->intercept || (l->kind == SB_LIN_PCA && !l->mean) || (dec && (!l->ev || !l->evr || !l->sv)))
        return sb_fail(bad, "%s: a linear model's array is NULL", who);
    if (!all_finite(l->coef, nc) || !all_finite(l->intercept, (size_t)l->nout) ||
        (l->mean && !all_finite(l->mean, (size_t)m->num_features)) ||
        (dec && (!all_finite(l->ev, (size_t)l->nout) || !all_finite(l->evr, (size_t)l->nout) ||
                 !all_finite(l->sv, (size_t)l->nout))) ||
        !isfinite(l->noise_variance))
        return sb_fail(bad, "%s: a coefficient, mean or variance is not finite", who);
    if (l->n_iter < 0 || (l->converged != 0 && l->converged != 1) || (l->whiten != 0 && l->whiten != 1) ||
        (l->whiten && l->kind != SB_LIN_PCA) || l->rank < 0 || l->rank > m->num_features)
        return sb_fail(bad, "%s: n_iter %d, converged %d, whiten %d or rank %d out of range", who, (int)l->n_iter,
                       (int)l->converged, (int)l->whiten, (int)l->rank);
    if (SB_LIN_HAS_RUNS(l->kind, l->nout)) {
        /* each target's sweeps and flag; n_iter their largest, converged 1 only where every target's is */
        if (!l->runs) return sb_fail(bad, "%s: a linear model's array is NULL", who);
        int32_t most = 0, all = 1;
        for (int32_t t = 0; t < l->nout; t++) {
            const int32_t it = l->runs[t], c = l->runs[l->nout + t];
            if (it < 0 || (c != 0 && c != 1))
                return sb_fail(bad, "%s: target %d's sweeps %d or converged flag %d out of range", who, (int)t, (int)it,
                               (int)c);
            if (it > most) most = it;
            all = all && c;
        }
        if (most != l->n_iter || all != l->converged)
            return sb_fail(bad, "%s: n_iter %d and converged %d are not the targets' largest sweeps %d and their "
                           "flags' conjunction %d", who, (int)l->n_iter, (int)l->converged, (int)most, (int)all);
    }
    return check_common(m, bad, who);
}

/* A nearest-neighbors model: its task, parameters and shape, finite rows and
 * targets, class labels below its class count, no trees. */
static sb_status check_knn(const sb_model *m, sb_status bad, const char *who) {
    const sb_knn *k = m->knn;
    if (!k || !k->x) return sb_fail(bad, "%s: a knn model without its rows", who);
    if (m->ntrees != 0 || m->trees || m->linear || m->kmeans) return sb_fail(bad, "%s: a knn model has only its rows", who);
    sb_status st = check_mode_features(m, bad, who);
    if (st != SB_OK) return st;
    if (k->n < 1) return sb_fail(bad, "%s: %lld training rows", who, (long long)k->n);
    if ((uint64_t)k->n > (MF_MAX_FILE / 4) / ((uint64_t)m->num_features + 1))
        return sb_fail(SB_ERR_LIMIT, "%s: %lld x %d training rows exceed the file limit", who, (long long)k->n,
                       (int)m->num_features);
    if (k->task < SB_KNN_NEIGHBORS || k->task > SB_KNN_REGRESSOR || k->metric < 0 || k->metric >= SB_KNN_METRIC_COUNT_ || k->weights < 0 ||
        k->weights > 1 || k->n_neighbors < 1 || k->n_neighbors > MF_MAX_NEIGHBORS ||
        (k->task != SB_KNN_NEIGHBORS && k->n_neighbors > k->n) || !isfinite(k->radius) || k->radius < 0.0f)
        return sb_fail(bad, "%s: task %d, metric %d, weights %d, n_neighbors %d or radius %g out of range", who,
                       (int)k->task, (int)k->metric, (int)k->weights, (int)k->n_neighbors, (double)k->radius);
    if (k->task == SB_KNN_CLASSIFIER ? k->nclass < 1 || k->nclass > MF_MAX_CLASS || m->num_class != k->nclass
                                     : k->nclass != 0 || m->num_class != 1)
        return sb_fail(bad, "%s: %d classes and num_class %d for task %d", who, (int)k->nclass, (int)m->num_class,
                       (int)k->task);
    if (!all_finite(k->x, (size_t)k->n * (size_t)m->num_features))
        return sb_fail(bad, "%s: a training value is not finite", who);
    for (int64_t i = 0; k->task != SB_KNN_NEIGHBORS && i < k->n; i++) {
        const float y = k->y[i];
        if (!isfinite(y) || (k->task == SB_KNN_CLASSIFIER && !(y >= 0.0f && y < (float)k->nclass && y == floorf(y))))
            return sb_fail(bad, "%s: row %lld's target %g is not %s", who, (long long)i, (double)y,
                           k->task == SB_KNN_CLASSIFIER ? "a class index below the class count" : "finite");
    }
    return check_common(m, bad, who);
}

/* A support vector model: its kind, kernel and shape in range, finite
 * vectors, coefficients, intercepts and gamma, the support indices strictly
 * increasing within each class and below the training rows, the class counts
 * summing to the vectors, no trees. */
static sb_status check_svm(const sb_model *m, sb_status bad, const char *who) {
    const sb_svm *s = m->svm;
    if (!s || !s->sv) return sb_fail(bad, "%s: an svm model without its vectors", who);
    if (m->ntrees != 0 || m->trees || m->linear || m->kmeans || m->knn || m->dbscan || m->agglo || m->spectral || m->kde)
        return sb_fail(bad, "%s: an svm model has only its vectors and coefficients", who);
    sb_status st = check_mode_features(m, bad, who);
    if (st != SB_OK) return st;
    if ((s->kind != SB_SVM_SVC && s->kind != SB_SVM_SVR) || s->kernel < 0 || s->kernel >= SB_SVM_KERNEL_COUNT_ ||
        s->degree < 0 || s->degree > 64 || (s->converged != 0 && s->converged != 1) ||
        (s->kind == SB_SVM_SVC ? s->nclass < 2 || s->nclass > 1000 : s->nclass != 1) || m->num_class != s->nclass)
        return sb_fail(bad, "%s: svm kind %d, kernel %d, degree %d, classes %d or converged flag %d out of range", who,
                       (int)s->kind, (int)s->kernel, (int)s->degree, (int)s->nclass, (int)s->converged);
    if (s->n_fit < 1 || s->n_fit > (int64_t)INT32_MAX || s->nsv < 0 || s->nsv > s->n_fit)
        return sb_fail(bad, "%s: %lld support vectors of %lld training rows", who, (long long)s->nsv, (long long)s->n_fit);
    if (!isfinite(s->gamma) || s->gamma < 0.0 || !isfinite(s->coef0))
        return sb_fail(bad, "%s: gamma %g or coef0 %g is not finite (gamma >= 0)", who, s->gamma, s->coef0);
    if (!all_finite(s->sv, (size_t)s->nsv * (size_t)m->num_features))
        return sb_fail(bad, "%s: a support vector's value is not finite", who);
    const int64_t ng = s->kind == SB_SVM_SVC ? s->nclass : 1, nc = sb_svm_ncoef(s), np = sb_svm_npairs(s);
    int64_t tot = 0;
    for (int64_t c = 0; c < ng; c++) {
        if (s->n_support[c] < 0 || s->n_support[c] > s->nsv) return sb_fail(bad, "%s: class %lld's count %d", who, (long long)c, (int)s->n_support[c]);
        for (int64_t v = tot + 1; v < tot + s->n_support[c] && v < s->nsv; v++)
            if (s->support[v] <= s->support[v - 1]) return sb_fail(bad, "%s: support indices not increasing at %lld", who, (long long)v);
        tot += s->n_support[c];
    }
    if (tot != s->nsv) return sb_fail(bad, "%s: the class counts sum to %lld, not %lld vectors", who, (long long)tot, (long long)s->nsv);
    for (int64_t v = 0; v < s->nsv; v++)
        if (s->support[v] < 0 || s->support[v] >= s->n_fit) return sb_fail(bad, "%s: support index %lld", who, (long long)s->support[v]);
    for (int64_t i = 0; i < nc * s->nsv; i++)
        if (!isfinite(s->coef[i])) return sb_fail(bad, "%s: a dual coefficient is not finite", who);
    for (int64_t q = 0; q < np; q++)
        if (!isfinite(s->rho[q]) || s->n_iter[q] < 0) return sb_fail(bad, "%s: pair %lld's intercept or iterations", who, (long long)q);
    if ((s->probA != NULL) != (s->probB != NULL) || (s->probA && s->kind != SB_SVM_SVC))
        return sb_fail(bad, "%s: probA and probB come together, for an SVC only", who);
    for (int64_t q = 0; s->probA && q < np; q++)
        if (!isfinite(s->probA[q]) || !isfinite(s->probB[q]))
            return sb_fail(bad, "%s: pair %lld's probA or probB is not finite", who, (long long)q);
    return check_common(m, bad, who);
}

/* A kernel density model: its kernel, bandwidth rule and shape, a positive
 * finite bandwidth, finite rows, finite weights >= 0 of positive sum, no trees. */
static sb_status check_kde(const sb_model *m, sb_status bad, const char *who) {
    const sb_kde *k = m->kde;
    if (!k || !k->x) return sb_fail(bad, "%s: a kde model without its rows", who);
    if (m->ntrees != 0 || m->trees || m->linear || m->kmeans || m->knn || m->dbscan || m->agglo || m->spectral)
        return sb_fail(bad, "%s: a kde model has only its rows and weights", who);
    sb_status st = check_mode_features(m, bad, who);
    if (st != SB_OK) return st;
    if (k->n < 1 || k->n > (int64_t)UINT32_MAX) return sb_fail(bad, "%s: %lld training rows", who, (long long)k->n);
    if ((uint64_t)k->n > (MF_MAX_FILE / 4) / ((uint64_t)m->num_features + 1))
        return sb_fail(SB_ERR_LIMIT, "%s: %lld x %d training rows exceed the file limit", who, (long long)k->n,
                       (int)m->num_features);
    if (k->kernel < 0 || k->kernel >= SB_KDE_KERNEL_COUNT_ || k->bw_rule < 0 || k->bw_rule > 2 ||
        !(k->bandwidth > 0.0f) || !isfinite(k->bandwidth) || m->num_class != 1)
        return sb_fail(bad, "%s: kernel %d, bandwidth rule %d or bandwidth %g out of range", who, (int)k->kernel,
                       (int)k->bw_rule, (double)k->bandwidth);
    if (!all_finite(k->x, (size_t)k->n * (size_t)m->num_features))
        return sb_fail(bad, "%s: a training value is not finite", who);
    if (k->w) {
        double W = 0.0;
        for (int64_t i = 0; i < k->n; i++) {
            if (!isfinite(k->w[i]) || k->w[i] < 0.0f) return sb_fail(bad, "%s: row %lld's weight %g", who, (long long)i, (double)k->w[i]);
            W += (double)k->w[i];
        }
        if (!(W > 0.0)) return sb_fail(bad, "%s: the weights sum to 0", who);
    }
    return check_common(m, bad, who);
}

/* A DBSCAN model: its parameters and shape, labels in -1..n_clusters-1 with
 * every cluster present, core indices ascending below n, finite core rows. */
static sb_status check_dbscan(const sb_model *m, sb_status bad, const char *who) {
    const sb_dbscan *b = m->dbscan;
    if (!b || !b->labels || !b->core || !b->components) return sb_fail(bad, "%s: a dbscan model without its labels", who);
    if (m->ntrees != 0 || m->trees || m->linear || m->kmeans || m->knn)
        return sb_fail(bad, "%s: a dbscan model has only its labels and core rows", who);
    sb_status st = check_mode_features(m, bad, who);
    if (st != SB_OK) return st;
    if (b->n < 1 || b->ncore < 0 || b->ncore > b->n || (uint64_t)b->n > MF_MAX_FILE / 4 ||
        (uint64_t)b->ncore > (MF_MAX_FILE / 4) / ((uint64_t)m->num_features + 2))
        return sb_fail(b->n < 1 || b->ncore < 0 || b->ncore > b->n ? bad : SB_ERR_LIMIT, "%s: %lld rows, %lld core rows",
                       who, (long long)b->n, (long long)b->ncore);
    if (!isfinite(b->eps) || !(b->eps > 0.0f) || b->min_samples < 1 || b->metric < 0 || b->metric >= SB_KNN_METRIC_COUNT_ ||
        b->n_clusters < 0 || b->n_clusters > b->n || m->num_class != 1)
        return sb_fail(bad, "%s: eps %g, min_samples %d, metric %d or %d clusters out of range", who, (double)b->eps,
                       (int)b->min_samples, (int)b->metric, (int)b->n_clusters);
    int32_t next = 0; /* clusters numbered by first appearance */
    for (int64_t i = 0; i < b->n; i++) {
        const int32_t l = b->labels[i];
        if (l < -1 || l > next || l >= b->n_clusters)
            return sb_fail(bad, "%s: row %lld's label %d breaks the numbering by smallest row index", who, (long long)i, (int)l);
        if (l == next) next++;
    }
    if (next != b->n_clusters) return sb_fail(bad, "%s: %d clusters labelled, %d said", who, (int)next, (int)b->n_clusters);
    for (int64_t c = 0; c < b->ncore; c++)
        if (b->core[c] < 0 || b->core[c] >= b->n || (c > 0 && b->core[c] <= b->core[c - 1]) || b->labels[b->core[c]] < 0)
            return sb_fail(bad, "%s: core index %lld out of order, range or cluster", who, (long long)b->core[c]);
    if (!all_finite(b->components, (size_t)b->ncore * (size_t)m->num_features))
        return sb_fail(bad, "%s: a core row is not finite", who);
    return check_common(m, bad, who);
}

/* A spectral model: its affinity and shape, and labels in 0..n_clusters-1. */
static sb_status check_spectral(const sb_model *m, sb_status bad, const char *who) {
    const sb_spectral *g = m->spectral;
    if (!g || !g->labels) return sb_fail(bad, "%s: a spectral model without its labels", who);
    if (m->ntrees != 0 || m->trees || m->linear || m->kmeans || m->knn || m->dbscan || m->agglo)
        return sb_fail(bad, "%s: a spectral model has only its labels", who);
    if (m->numeric_mode < 0 || m->numeric_mode > 2)
        return sb_fail(bad, "%s: unknown numeric mode %d", who, (int)m->numeric_mode);
    if (m->num_features < 1 || m->num_features > MF_MAX_FEATURES)
        return sb_fail(m->num_features < 1 ? bad : SB_ERR_LIMIT, "%s: num_features is %d", who, (int)m->num_features);
    if (g->n < 2 || g->n > SB_LINALG_MAX_EIGH_N || g->affinity < 0 || g->affinity > 2 || g->n_clusters < 1 ||
        g->n_clusters > g->n || m->num_class != 1)
        return sb_fail(bad, "%s: %lld rows, affinity %d or %d clusters out of range", who, (long long)g->n,
                       (int)g->affinity, (int)g->n_clusters);
    for (int64_t i = 0; i < g->n; i++)
        if (g->labels[i] < 0 || g->labels[i] >= g->n_clusters)
            return sb_fail(bad, "%s: row %lld's label %d is not a cluster (0..%d)", who, (long long)i, (int)g->labels[i],
                           (int)g->n_clusters - 1);
    return check_common(m, bad, who);
}

/* An exponential smoothing batch: its model's shape, at least one series, each
 * with its arrays, at least 2 values and the model's parameters where it has
 * them (NaN where it has none). */
static sb_status check_ets(const sb_model *m, sb_status bad, const char *who) {
    const sb_ets *e = m->ets;
    if (!e || !e->fits) return sb_fail(bad, "%s: an exponential smoothing model without its series", who);
    if (m->ntrees != 0 || m->trees || m->linear || m->kmeans || m->knn || m->dbscan || m->agglo || m->spectral)
        return sb_fail(bad, "%s: an exponential smoothing model has only its series", who);
    if (m->numeric_mode < 0 || m->numeric_mode > 2)
        return sb_fail(bad, "%s: unknown numeric mode %d", who, (int)m->numeric_mode);
    const ets_spec *sp = &e->spec;
    if (m->num_features != 1 || m->num_class != 1 || (sp->trend != ETS_NONE && sp->trend != ETS_ADD) ||
        (sp->damped != 0 && sp->damped != 1) || (sp->damped && !sp->trend) || sp->seasonal < ETS_NONE ||
        (sp->error != ETS_NONE && sp->error != ETS_MUL) ||
        sp->seasonal > ETS_MUL || (sp->seasonal ? sp->m < 2 || sp->m > SB_ETS_MAX_PERIOD : sp->m != 1))
        return sb_fail(bad, "%s: exponential smoothing of trend %d, damped %d, seasonal %d, period %d is not a model",
                       who, (int)sp->trend, (int)sp->damped, (int)sp->seasonal, (int)sp->m);
    if (e->nseries < 1 || e->nseries > INT32_MAX)
        return sb_fail(e->nseries < 1 ? bad : SB_ERR_LIMIT, "%s: %lld series", who, (long long)e->nseries);
    const int has[SB_ETS_NPAR] = {1, sp->trend != 0, sp->seasonal != 0, sp->damped};
    for (int64_t i = 0; i < e->nseries; i++) {
        const ets_fit *f = &e->fits[i];
        if (!f->init || !f->last || !f->fitted || !f->resid || f->n < 2 || f->n > INT32_MAX)
            return sb_fail(bad, "%s: series %lld has %lld values or lacks its arrays", who, (long long)i, (long long)f->n);
        for (int p = 0; p < SB_ETS_NPAR; p++)
            if (has[p] ? !(f->par[p] >= 0.0 && f->par[p] <= 1.0) : f->par[p] == f->par[p])
                return sb_fail(bad, "%s: series %lld's parameter %d is %g", who, (long long)i, p, f->par[p]);
    }
    return check_common(m, bad, who);
}

/* An ARIMA batch: a specification the parser accepts, at least one series,
 * each with its arrays, long enough for the model, and parameters of a
 * stationary, invertible model with a positive sigma2. */
static sb_status check_arima(const sb_model *m, sb_status bad, const char *who) {
    const sb_arima *e = m->arima;
    if (!e || !e->fits) return sb_fail(bad, "%s: an ARIMA model without its series", who);
    if (m->ntrees != 0 || m->trees || m->linear || m->kmeans || m->knn || m->dbscan || m->agglo || m->spectral || m->ets)
        return sb_fail(bad, "%s: an ARIMA model has only its series", who);
    if (m->numeric_mode < 0 || m->numeric_mode > 2)
        return sb_fail(bad, "%s: unknown numeric mode %d", who, (int)m->numeric_mode);
    const arima_spec *sp = &e->spec;
    if (m->num_features != 1 || m->num_class != 1 || !sb_arima_spec_valid(sp))
        return sb_fail(bad, "%s: ARIMA(%d,%d,%d)(%d,%d,%d,%d) trend %d with %d given parameters is not a model this "
                       "library fits", who, (int)sp->p, (int)sp->d, (int)sp->q, (int)sp->P, (int)sp->D, (int)sp->Q,
                       (int)sp->s, (int)sp->trend, (int)sp->ngiven);
    if (e->nseries < 1 || e->nseries > INT32_MAX)
        return sb_fail(e->nseries < 1 ? bad : SB_ERR_LIMIT, "%s: %lld series", who, (long long)e->nseries);
    const int32_t L = sb_arima_diff_lag(sp);
    for (int64_t i = 0; i < e->nseries; i++) {
        const arima_fit *f = &e->fits[i];
        if (!f->fitted || !f->resid || !f->a || !f->P || !f->ylast || f->n < L + 2 || f->n > INT32_MAX ||
            f->nobs != f->n - L)
            return sb_fail(bad, "%s: series %lld has %lld values or lacks its arrays", who, (long long)i, (long long)f->n);
        if (!sb_arima_params_valid(sp, f->par))
            return sb_fail(bad, "%s: series %lld's parameters are not a stationary, invertible model with a positive "
                           "sigma2", who, (long long)i);
    }
    return check_common(m, bad, who);
}

/* A network: its shapes and options as a fit makes them (sb_mlp_check),
 * finite parameters and losses. */
static sb_status check_mlp(const sb_model *m, sb_status bad, const char *who) {
    const sb_mlp *net = m->mlp;
    if (!net || !net->curve) return sb_fail(bad, "%s: an mlp model without its network", who);
    if (m->ntrees != 0 || m->trees || m->linear || m->kmeans || m->knn || m->dbscan || m->agglo || m->spectral ||
        m->kde || m->ets || m->gp)
        return sb_fail(bad, "%s: an mlp model has only its network", who);
    if (net->size[0] != m->num_features)
        return sb_fail(bad, "%s: an mlp of %lld inputs in a model of %d features", who, (long long)net->size[0],
                       (int)m->num_features);
    for (int32_t l = 0; l < net->nlayers && l <= MLP_MAX_HIDDEN; l++)
        if (!net->W[l] || !net->b[l]) return sb_fail(bad, "%s: an mlp layer without its parameters", who);
    const char *why = sb_mlp_check(net);
    if (why) return sb_fail(bad, "%s: the mlp's %s", who, why);
    return check_common(m, bad, who);
}

/* A byte language model: its options and state as training makes them
 * (sb_lm_check: finite parameters and moments, held-out steps in order). */
static sb_status check_lm(const sb_model *m, sb_status bad, const char *who) {
    const sb_lm *lm = m->lm;
    if (!lm || !lm->w) return sb_fail(bad, "%s: an lm model without its network", who);
    if (m->ntrees != 0 || m->trees || m->linear || m->kmeans || m->knn || m->dbscan || m->agglo || m->spectral ||
        m->kde || m->ets || m->gp || m->mlp)
        return sb_fail(bad, "%s: an lm model has only its network", who);
    if (lm->o.context != m->num_features)
        return sb_fail(bad, "%s: an lm of context %d in a model of %d features", who, (int)lm->o.context, (int)m->num_features);
    const char *why = sb_lm_check(lm);
    if (why) return sb_fail(bad, "%s: the lm's %s", who, why);
    return check_common(m, bad, who);
}

/* A Gaussian process: its kernel, its shape, finite training data and a
 * positive target scale. */
static sb_status check_gp(const sb_model *m, sb_status bad, const char *who) {
    const sb_gp *g = m->gp;
    if (!g || !g->X || !g->y || !g->ymean || !g->ystd || !g->a)
        return sb_fail(bad, "%s: a gaussian process model without its data", who);
    if (m->ntrees != 0 || m->trees || m->linear || m->kmeans || m->knn || m->dbscan || m->agglo || m->spectral ||
        m->kde || m->ets)
        return sb_fail(bad, "%s: a gaussian process model has only its process", who);
    if (g->n < 1 || g->n > 100000 || g->d < 1 || g->d != m->num_features || g->t < 1 || g->t > 100000)
        return sb_fail(bad, "%s: a gaussian process of %lld rows, %lld features (the model %d), %lld targets", who,
                       (long long)g->n, (long long)g->d, (int)m->num_features, (long long)g->t);
    const char *why = sb_gp_kernel_check(&g->k, g->d);
    if (why) return sb_fail(bad, "%s: the gaussian process kernel: %s", who, why);
    if (!(g->alpha >= 0.0 && g->alpha < INFINITY) || (g->normalize_y != 0 && g->normalize_y != 1) ||
        (g->optimize != 0 && g->optimize != 1) || g->restarts < 0 || g->restarts > 1000 || g->nit < 0 || g->nfev < 0)
        return sb_fail(bad, "%s: a gaussian process's alpha %g or its options", who, g->alpha);
    for (int64_t i = 0; i < g->n * g->d; i++)
        if (!isfinite(g->X[i])) return sb_fail(bad, "%s: a gaussian process's X is not finite", who);
    for (int64_t i = 0; i < g->n * g->t; i++)
        if (!isfinite(g->y[i]) || !isfinite(g->a[i])) return sb_fail(bad, "%s: a gaussian process's y or alpha_ is not finite", who);
    for (int64_t c = 0; c < g->t; c++)
        if (!isfinite(g->ymean[c]) || !(g->ystd[c] > 0.0 && g->ystd[c] < INFINITY))
            return sb_fail(bad, "%s: a gaussian process's target mean or scale", who);
    return check_common(m, bad, who);
}

/* A UMAP model: its parameters in their ranges with a and b the curve's
 * (sb_umap_state_check), at least two finite training rows, a finite
 * embedding, no other family's state. */
static sb_status check_umap(const sb_model *m, sb_status bad, const char *who) {
    const sb_umap *u = m->umap;
    if (!u || !u->x || !u->emb) return sb_fail(bad, "%s: a umap model without its rows and embedding", who);
    if (m->ntrees != 0 || m->trees || m->linear || m->kmeans || m->knn || m->dbscan || m->agglo || m->spectral ||
        m->kde || m->ets || m->arima || m->svm || m->gp)
        return sb_fail(bad, "%s: a umap model has only its frozen fit", who);
    sb_status st = check_mode_features(m, bad, who);
    if (st != SB_OK) return st;
    if (m->num_class != 1) return sb_fail(bad, "%s: a umap model's num_class is %d, not 1", who, (int)m->num_class);
    const char *why = sb_umap_state_check(u);
    if (why) return sb_fail(bad, "%s: umap: %s", who, why);
    if (u->n < 2 || u->n > (int64_t)(INT32_MAX / 2)) return sb_fail(bad, "%s: %lld umap training rows (2..%d)", who,
                                                                    (long long)u->n, INT32_MAX / 2);
    if ((uint64_t)u->n > (MF_MAX_FILE / 4) / ((uint64_t)m->num_features + (uint64_t)u->ncomp))
        return sb_fail(SB_ERR_LIMIT, "%s: %lld x %d training rows exceed the file limit", who, (long long)u->n,
                       (int)m->num_features);
    if (!all_finite(u->x, (size_t)u->n * (size_t)m->num_features))
        return sb_fail(bad, "%s: a umap training value is not finite", who);
    if (!all_finite(u->emb, (size_t)u->n * (size_t)u->ncomp))
        return sb_fail(bad, "%s: a umap embedding value is not finite", who);
    /* rows transform's exact search would refuse are refused here, as the fit refuses them */
    if ((st = sb_knn_rows_check(u->x, u->n, m->num_features, u->metric)) != SB_OK) { /* SB_KNN_* codes, checked above */
        char why[512];
        snprintf(why, sizeof why, "%s", sb_last_error());
        return sb_fail(st, "%s: umap: %s", who, why);
    }
    return check_common(m, bad, who);
}

/* An agglomerative model: its linkage and shape, labels numbered by smallest
 * row, a tree whose merge s joins two earlier nodes never used before, finite
 * distances >= 0. */
static sb_status check_agglo(const sb_model *m, sb_status bad, const char *who) {
    const sb_agglo *g = m->agglo;
    if (!g || !g->labels || !g->children || !g->distances) return sb_fail(bad, "%s: an agglomerative model without its tree", who);
    if (m->ntrees != 0 || m->trees || m->linear || m->kmeans || m->knn || m->dbscan)
        return sb_fail(bad, "%s: an agglomerative model has only its tree and labels", who);
    if (m->numeric_mode < 0 || m->numeric_mode > 2)
        return sb_fail(bad, "%s: unknown numeric mode %d", who, (int)m->numeric_mode);
    if (m->num_features < 1 || m->num_features > MF_MAX_FEATURES)
        return sb_fail(m->num_features < 1 ? bad : SB_ERR_LIMIT, "%s: num_features is %d", who, (int)m->num_features);
    if (g->n < 2 || g->n > 40000 || g->linkage < 0 || g->linkage > 3 || g->n_clusters < 1 || g->n_clusters > g->n ||
        m->num_class != 1)
        return sb_fail(bad, "%s: %lld rows, linkage %d or %d clusters out of range", who, (long long)g->n, (int)g->linkage,
                       (int)g->n_clusters);
    int32_t next = 0;
    for (int64_t i = 0; i < g->n; i++) {
        if (g->labels[i] < 0 || g->labels[i] > next || g->labels[i] >= g->n_clusters)
            return sb_fail(bad, "%s: row %lld's label %d breaks the numbering by smallest row", who, (long long)i,
                           (int)g->labels[i]);
        if (g->labels[i] == next) next++;
    }
    if (next != g->n_clusters) return sb_fail(bad, "%s: %d clusters labelled, %d said", who, (int)next, (int)g->n_clusters);
    uint8_t *used = sb_calloc((size_t)(2 * g->n), 1);
    if (!used) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    sb_status st = SB_OK;
    for (int64_t s = 0; s < g->n - 1 && st == SB_OK; s++) {
        const int64_t a = g->children[2 * s], b = g->children[2 * s + 1];
        if (a < 0 || b < 0 || a >= g->n + s || b >= g->n + s || a == b || used[a] || used[b] ||
            !isfinite(g->distances[s]) || g->distances[s] < 0.0)
            st = sb_fail(bad, "%s: merge %lld (%lld, %lld, distance %g) is not a merge of two free earlier nodes", who,
                         (long long)s, (long long)a, (long long)b, g->distances[s]);
        else used[a] = used[b] = 1;
    }
    sb_free(used);
    return st != SB_OK ? st : check_common(m, bad, who);
}

/* A k-means model: its cluster count and shape, finite centers and inertia, no trees. */
static sb_status check_kmeans(const sb_model *m, sb_status bad, const char *who) {
    const sb_kmeans *c = m->kmeans;
    if (!c || !c->centers) return sb_fail(bad, "%s: a kmeans model without its centers", who);
    if (m->ntrees != 0 || m->trees || m->linear) return sb_fail(bad, "%s: a kmeans model has only its centers", who);
    sb_status st = check_mode_features(m, bad, who);
    if (st != SB_OK) return st;
    if (c->k > MF_MAX_CLUSTERS) return sb_fail(SB_ERR_LIMIT, "%s: %d clusters exceed the limit of %d", who, (int)c->k, MF_MAX_CLUSTERS);
    if (c->k < 1) return sb_fail(bad, "%s: %d clusters", who, (int)c->k);
    if ((uint64_t)c->k * (uint64_t)m->num_features > (MF_MAX_FILE / 4))
        return sb_fail(SB_ERR_LIMIT, "%s: %d x %d centers exceed the file limit", who, (int)c->k, (int)m->num_features);
    if (m->num_class != c->k)
        return sb_fail(bad, "%s: num_class %d is not the %d clusters", who, (int)m->num_class, (int)c->k);
    if (!all_finite(c->centers, (size_t)c->k * (size_t)m->num_features) || !isfinite(c->inertia) || c->inertia < 0.0f)
        return sb_fail(bad, "%s: a center or the inertia is not finite (or the inertia is negative)", who);
    if (c->n_iter < 0 || (c->converged != 0 && c->converged != 1))
        return sb_fail(bad, "%s: n_iter %d or converged %d out of range", who, (int)c->n_iter, (int)c->converged);
    return check_common(m, bad, who);
}

/* ---- writing ---- */

/* Where written bytes go: a memory buffer (buf), a file (f), or neither (only
 * hashed and counted). Every byte also goes through the running SHA-256. */
typedef struct sink {
    uint8_t *buf;
    FILE *f;
    int ferr;
    uint64_t pos;
    sb_sha256_ctx sha;
} sink;

static void sink_bytes(sink *s, const void *p, size_t n) {
    if (n == 0) return; /* p may be NULL then */
    if (s->buf) memcpy(s->buf + s->pos, p, n);
    if (s->f && !s->ferr && fwrite(p, 1, n, s->f) != n) s->ferr = errno ? errno : EIO;
    sb_sha256_update(&s->sha, p, n);
    s->pos += n;
}

static void sink_u8(sink *s, uint8_t v) { sink_bytes(s, &v, 1); }

static void sink_u32(sink *s, uint32_t v) {
    uint8_t b[4];
    put_u32(b, v);
    sink_bytes(s, b, 4);
}

static void sink_u64(sink *s, uint64_t v) {
    uint8_t b[8];
    put_u64(b, v);
    sink_bytes(s, b, 8);
}

static void sink_i32(sink *s, int32_t v) { sink_u32(s, (uint32_t)v); }
static void sink_f32(sink *s, float v) { sink_u32(s, float_bits(v)); }

/* A double's bits, every NaN as one quiet NaN (x86 and ARM make NaNs of
 * different signs). */
static void sink_f64(sink *s, double v) {
    uint64_t u;
    memcpy(&u, &v, 8);
    sink_u64(s, v != v ? 0x7FF8000000000000ull : u);
}

static void sink_str(sink *s, const char *str) {
    size_t n = str ? strlen(str) : 0;
    sink_u32(s, (uint32_t)n);
    sink_bytes(s, str, n);
}

/* The version-2 payload tag of a family, or NULL for a family no payload
 * of this library holds. */
static const char *payload_tag(int32_t family) {
    switch (family) {
    case SB_FAMILY_GBDT:
    case SB_FAMILY_RANDOM_FOREST:
    case SB_FAMILY_EXTRA_TREES:
    case SB_FAMILY_ISOLATION_FOREST: return MF_TAG_TREES;
    case SB_FAMILY_LINEAR: return MF_TAG_LINEAR;
    case SB_FAMILY_KMEANS: return MF_TAG_KMEANS;
    case SB_FAMILY_KNN: return MF_TAG_KNN;
    case SB_FAMILY_DBSCAN: return MF_TAG_DBSCAN;
    case SB_FAMILY_AGGLOMERATIVE: return MF_TAG_AGGLO;
    case SB_FAMILY_SPECTRAL: return MF_TAG_SPECTRAL;
    case SB_FAMILY_KDE: return MF_TAG_KDE;
    case SB_FAMILY_ETS: return MF_TAG_ETS;
    case SB_FAMILY_ARIMA: return MF_TAG_ARIMA;
    case SB_FAMILY_SVM: return MF_TAG_SVM;
    case SB_FAMILY_GP: return MF_TAG_GP;
    case SB_FAMILY_UMAP: return MF_TAG_UMAP;
    case SB_FAMILY_MLP: return MF_TAG_MLP;
    case SB_FAMILY_LM: return MF_TAG_LM;
    }
    return NULL;
}

/* The format version of a card's model-bytes stage: 1 for the tree families
 * (the encoding the reference cards recorded), the writer's version otherwise. */
static int has_cats(const sb_model *m) {
    for (int32_t t = 0; t < m->ntrees; t++)
        if (m->trees[t].ncat > 0) return 1;
    return 0;
}

uint32_t sb_model_card_version(const sb_model *m) {
    if (has_cats(m)) return MF_VERSION_CATS; /* version 1 cannot hold category sets */
    return payload_tag(m->family) && !strcmp(payload_tag(m->family), MF_TAG_TREES) ? 1u : MF_VERSION;
}

/* Bytes of the feature names (each a str), 0 for a model without names. */
static uint64_t names_size(const sb_model *m) {
    uint64_t n = 0;
    if (m->feature_names)
        for (int32_t f = 0; f < m->num_features; f++) n += 4 + strlen(m->feature_names[f]);
    return n;
}

/* Bytes of ntrees and the trees (cats: version 4, each tree's set count and
 * sets after its nodes: per set its node, its code count and the codes). */
static uint64_t trees_size(const sb_model *m, int cats) {
    uint64_t n = 4;
    for (int32_t t = 0; t < m->ntrees; t++) {
        const sb_tree *tr = &m->trees[t];
        n += 4 + MF_NODE_LEN * (uint64_t)tr->nnodes;
        if (cats) n += 4 + (tr->ncat > 0 ? 8 * (uint64_t)tr->ncat + 4 * (uint64_t)tr->cat_start[tr->ncat] : 0);
    }
    return n;
}

/* Bytes of the version-2 tree payload: objective, num_class, the base scores,
 * ntrees and the trees. */
static uint64_t tree_payload_size(const sb_model *m, int cats) {
    return 8 + 4 * (uint64_t)m->num_class + trees_size(m, cats);
}

/* Bytes of the linear payload: seven i32 and a f32, then coef, intercept, the
 * mean (PCA) and the three decomposition arrays (PCA, TruncatedSVD). */
static uint64_t linear_payload_size(const sb_model *m) {
    const sb_linear *l = m->linear;
    uint64_t no = (uint64_t)l->nout, nf = (uint64_t)m->num_features;
    uint64_t n = 32 + 4 * (no * nf + no);
    if (l->kind == SB_LIN_PCA) n += 4 * nf;
    if (l->kind == SB_LIN_PCA || l->kind == SB_LIN_TSVD) n += 12 * no;
    if (SB_LIN_HAS_RUNS(l->kind, l->nout)) n += 8 * no;
    return n;
}

/* Bytes of the k-means payload: three i32 and a f32, then the centers. */
static uint64_t kmeans_payload_size(const sb_model *m) {
    return 16 + 4 * (uint64_t)m->kmeans->k * (uint64_t)m->num_features;
}

/* Bytes of the knn payload: five i32, the row count (u64), the radius (f32),
 * the rows, then the targets of a supervised task. */
static uint64_t knn_payload_size(const sb_model *m) {
    const sb_knn *k = m->knn;
    return 32 + 4 * (uint64_t)k->n * (uint64_t)m->num_features + (k->task != SB_KNN_NEIGHBORS ? 4 * (uint64_t)k->n : 0);
}

/* Bytes of the dbscan payload: three i32, eps (f32), n and ncore (u64), the
 * labels (i32), the core indices (u64), the core rows (f32). */
static uint64_t dbscan_payload_size(const sb_model *m) {
    const sb_dbscan *b = m->dbscan;
    return 32 + 4 * (uint64_t)b->n + 8 * (uint64_t)b->ncore + 4 * (uint64_t)b->ncore * (uint64_t)m->num_features;
}

/* Bytes of the agglomerative payload: two i32, n (u64), the labels (i32), the
 * children (u64 pairs), the distances (f64). */
static uint64_t agglo_payload_size(const sb_model *m) {
    const uint64_t n = (uint64_t)m->agglo->n;
    return 16 + 4 * n + 24 * (n - 1);
}

/* Bytes of the spectral payload: two i32, n (u64), the labels (i32). */
static uint64_t spectral_payload_size(const sb_model *m) { return 16 + 4 * (uint64_t)m->spectral->n; }

/* Bytes of the kde payload: three i32, the bandwidth (f32), n (u64), the rows,
 * then the weights when weighted. */
static uint64_t kde_payload_size(const sb_model *m) {
    const sb_kde *k = m->kde;
    return 24 + 4 * (uint64_t)k->n * (uint64_t)m->num_features + (k->w ? 4 * (uint64_t)k->n : 0);
}

/* Bytes of the svm payload: five i32, gamma and coef0 (f64), n_fit and nsv
 * (u64), the class counts (i32), the support indices (u64), the vectors (f32),
 * the coefficients, the rhos (f64) and the pairs' iterations (u64); then,
 * for a model fitted with probability=true only, probA and probB (f64, one
 * a pair each): a file without them is a model without probabilities, so the
 * files written before Platt scaling read as they were. */
static uint64_t svm_payload_size(const sb_model *m) {
    const sb_svm *s = m->svm;
    const uint64_t ng = s->kind == SB_SVM_SVC ? (uint64_t)s->nclass : 1u, nsv = (uint64_t)s->nsv;
    return 20 + 16 + 16 + 4 * ng + 8 * nsv + 4 * nsv * (uint64_t)m->num_features +
           8 * (uint64_t)sb_svm_ncoef(s) * nsv + 16 * (uint64_t)sb_svm_npairs(s) +
           (s->probA ? 16 * (uint64_t)sb_svm_npairs(s) : 0u);
}

/* Values of a series' initial or final states on disk: level, trend, and the
 * seasons of a seasonal model. */
static uint64_t ets_state_count(const ets_spec *sp) { return 2u + (sp->seasonal ? (uint64_t)sp->m : 0u); }

/* Bytes of the exponential smoothing payload: four i32 and the series count,
 * then a series: n (u64), four i32 counts (k, nfev, nit, converged), the four
 * parameters, the initial and final states, SSE, AIC, AICc, BIC, the fitted
 * values and the residuals (f64). */
static uint64_t ets_payload_size(const sb_model *m) {
    const sb_ets *e = m->ets;
    uint64_t b = 16 + 8;
    for (int64_t i = 0; i < e->nseries; i++)
        b += 8 + 16 + 8 * (4 + 2 * ets_state_count(&e->spec) + 4 + 2 * (uint64_t)e->fits[i].n);
    return b;
}

/* Bytes of the ARIMA payload: the specification (nine i32: p, d, q, P, D,
 * Q, s, trend, given count), the given parameters (f64), the series count,
 * then a series: n (u64), three i32 counts (nfev, nit, converged), the
 * parameters, llf, AIC, AICc, BIC, the fitted values and residuals, the
 * final state (r) and its covariance (r x r), the last d + sD values (f64). */
static uint64_t arima_series_words(const arima_spec *sp, uint64_t n) {
    const uint64_t r = (uint64_t)sb_arima_state_dim(sp);
    return (uint64_t)sb_arima_npar(sp) + 4 + 2 * n + r + r * r + (uint64_t)sb_arima_diff_lag(sp);
}

static uint64_t arima_payload_size(const sb_model *m) {
    const sb_arima *e = m->arima;
    uint64_t b = 36 + 8 * (uint64_t)e->spec.ngiven + 8;
    for (int64_t i = 0; i < e->nseries; i++) b += 8 + 12 + 8 * arima_series_words(&e->spec, (uint64_t)e->fits[i].n);
    return b;
}

/* Bytes of the gaussian process payload: four i32 (nodes, root,
 * parameters, 0), seven i32 a node, a parameter's log value, bounds (f64)
 * and fixed flag (i32), then n, d, t (u64), alpha (f64), five i32 (normalize_y,
 * optimizer, restarts, nit, nfev), the seed (u64), the log marginal
 * likelihood (f64), X, y, the targets' means and scales and alpha_ (f64). */
static uint64_t gp_payload_size(const sb_model *m) {
    const sb_gp *g = m->gp;
    return 16 + 28 * (uint64_t)g->k.nnodes + 28 * (uint64_t)g->k.npar + 24 + 8 + 20 + 8 + 8 +
           8 * ((uint64_t)g->n * (uint64_t)g->d + 2 * (uint64_t)g->n * (uint64_t)g->t + 2 * (uint64_t)g->t);
}

/* Bytes of the mlp payload: sixteen i32 (options and shapes), four u64
 * (batch_size, random_state, classes, t_), nine f64 options, the layers'
 * widths (u64), three f64 (loss_, best_loss_, best_validation_score_), the
 * loss curve and the validation scores (f64, n_iter_ each, the scores with
 * early stopping only), then each layer's coefs_ and intercepts_ (f32). */
static uint64_t mlp_payload_size(const sb_model *m) {
    const sb_mlp *net = m->mlp;
    uint64_t b = 64 + 32 + 72 + 8 * (uint64_t)(net->nlayers + 1) + 24 +
                 8 * (uint64_t)net->n_iter * (net->val_scores ? 2u : 1u);
    for (int32_t l = 0; l < net->nlayers; l++) b += 4 * (uint64_t)(net->size[l] * net->size[l + 1] + net->size[l + 1]);
    return b;
}

/* Bytes of the umap payload: six i32 (n_neighbors, n_components, metric,
 * n_epochs, negative_sample_rate, init), eight f32 (min_dist, spread,
 * learning_rate, set_op_mix_ratio, local_connectivity, repulsion_strength,
 * a, b), the seed and n (u64), the rows (f32), the embedding (f32). */
static uint64_t umap_payload_size(const sb_model *m) {
    const sb_umap *u = m->umap;
    return 24 + 32 + 16 + 4 * (uint64_t)u->n * ((uint64_t)m->num_features + (uint64_t)u->ncomp);
}

/* Bytes of the lm payload: eight i32 (the shapes), six u64 (random_state,
 * step, the corpus's length and FNV-1a, held-out count, parameters), eight
 * f64 options, the training loss of every step (f32), the held-out (step
 * u64, loss f32) pairs, then the parameters and both AdamW moments (f32). */
static uint64_t lm_payload_size(const sb_model *m) {
    const sb_lm *lm = m->lm;
    return 32 + 48 + 64 + 4 * (uint64_t)lm->step + 12 * (uint64_t)lm->n_eval + 12 * (uint64_t)lm->nparams;
}

static uint64_t payload_size(const sb_model *m, uint32_t version) {
    if (m->family == SB_FAMILY_LM) return lm_payload_size(m);
    if (m->family == SB_FAMILY_UMAP) return umap_payload_size(m);
    if (m->family == SB_FAMILY_MLP) return mlp_payload_size(m);
    if (m->family == SB_FAMILY_KDE) return kde_payload_size(m);
    if (m->family == SB_FAMILY_ETS) return ets_payload_size(m);
    if (m->family == SB_FAMILY_ARIMA) return arima_payload_size(m);
    if (m->family == SB_FAMILY_SVM) return svm_payload_size(m);
    if (m->family == SB_FAMILY_GP) return gp_payload_size(m);
    if (m->family == SB_FAMILY_AGGLOMERATIVE) return agglo_payload_size(m);
    if (m->family == SB_FAMILY_SPECTRAL) return spectral_payload_size(m);
    if (m->family == SB_FAMILY_DBSCAN) return dbscan_payload_size(m);
    if (m->family == SB_FAMILY_KMEANS) return kmeans_payload_size(m);
    if (m->family == SB_FAMILY_KNN) return knn_payload_size(m);
    return m->family == SB_FAMILY_LINEAR ? linear_payload_size(m) : tree_payload_size(m, version == MF_VERSION_CATS);
}

/* Bytes of the version-3 labels section: kind (u8), count (u32), the labels. */
static uint64_t labels_size(const sb_model *m) {
    const sb_labels *l = m->labels;
    uint64_t n = 5;
    if (l->kind == SB_LABELS_STRING)
        for (int32_t i = 0; i < l->n; i++) n += 4 + strlen(l->strs[i]);
    else n += (uint64_t)l->n * (l->kind == SB_LABELS_BOOL ? 1u : 8u);
    return n;
}

/* The version the writer writes for m: 3 when it has class labels, else 2. */
static uint32_t writer_version(const sb_model *m) {
    return has_cats(m) || m->ncatnames > 0 ? MF_VERSION_CATS : m->labels ? MF_VERSION_LABELS : MF_VERSION;
}

/* Bytes of version 4's category names: their count, then per feature its
 * index, its name count and the names (each a str). */
static uint64_t catnames_size(const sb_model *m) {
    uint64_t n = 4;
    for (int32_t k = 0; k < m->ncatnames; k++) {
        n += 8;
        for (int32_t i = 0; i < m->catnames[k].n; i++) n += 4 + strlen(m->catnames[k].names[i]);
    }
    return n;
}

/* The profile a model's file names: the one it was trained under (a model
 * read from a file keeps its file's, so saving it again gives the same bytes). */
static const char *model_profile(const sb_model *m) { return m->profile ? m->profile : SB_PROFILE_VERSION; }

/* Size in bytes of the model's file in version (1, 2 or 3), digest included.
 * The model must have passed check_model (so no sum can overflow 64 bits). */
static uint64_t encoded_size(const sb_model *m, uint32_t version) {
    uint64_t n = MF_HEADER_LEN + 4 + strlen(model_profile(m));
    n += 4 + (m->params ? strlen(m->params) : 0) + 1 + names_size(m);
    if (version == 1) n += 20 + 4 * (uint64_t)m->num_class + trees_size(m, 0);
    else n += 12 + MF_TAG_LEN + 8 + payload_size(m, version);
    if (version == MF_VERSION_LABELS) n += labels_size(m);
    if (version == MF_VERSION_CATS) n += 1 + (m->labels ? labels_size(m) : 0) + catnames_size(m);
    return n + MF_DIGEST_LEN;
}

/* The flag and the feature names, as both versions write them. */
static void sink_names(sink *s, const sb_model *m) {
    sink_u8(s, m->feature_names ? 1 : 0);
    if (m->feature_names)
        for (int32_t f = 0; f < m->num_features; f++) sink_str(s, m->feature_names[f]);
}

/* ntrees and the trees, as every version writes them (cats: version 4's
 * category sets after each tree's nodes). */
static void sink_trees(sink *s, const sb_model *m, int cats) {
    sink_i32(s, m->ntrees);
    for (int32_t t = 0; t < m->ntrees; t++) {
        const sb_tree *tr = &m->trees[t];
        sink_i32(s, tr->nnodes);
        for (int32_t i = 0; i < tr->nnodes; i++) {
            const sb_tree_node *nd = &tr->nodes[i];
            sink_i32(s, nd->feature);
            sink_f32(s, nd->threshold);
            sink_i32(s, nd->left);
            sink_i32(s, nd->right);
            sink_f32(s, nd->value);
            sink_f32(s, nd->gain);
            sink_u64(s, (uint64_t)nd->count);
            sink_u8(s, nd->default_left);
        }
        if (!cats) continue;
        sink_i32(s, tr->ncat);
        for (int32_t node = 0; node < tr->nnodes; node++) { /* checked: set c is the c-th categorical node's */
            if (!tr->nodes[node].categorical) continue;
            const int32_t c = tr->nodes[node].cat_set;
            sink_i32(s, node);
            sink_i32(s, tr->cat_start[c + 1] - tr->cat_start[c]);
            for (int32_t i = tr->cat_start[c]; i < tr->cat_start[c + 1]; i++) sink_i32(s, (int32_t)tr->cat_codes[i]);
        }
    }
}

/* Version 1 after the profile: the tree model's fields in their frozen order. */
static void encode_v1(const sb_model *m, sink *s) {
    sink_i32(s, m->family);
    sink_i32(s, m->objective);
    sink_i32(s, m->num_class);
    sink_i32(s, m->num_features);
    sink_i32(s, m->numeric_mode);
    for (int32_t k = 0; k < m->num_class; k++) sink_f32(s, m->base_score[k]);
    sink_str(s, m->params);
    sink_names(s, m);
    sink_trees(s, m, 0);
}

/* The labels section of version 3: kind, count, then each label (i64, the
 * f64's bits, a str, or a u8 by the kind). */
static void sink_labels(sink *s, const sb_labels *l) {
    sink_u8(s, (uint8_t)l->kind);
    sink_u32(s, (uint32_t)l->n);
    for (int32_t i = 0; i < l->n; i++) {
        if (l->kind == SB_LABELS_STRING) sink_str(s, l->strs[i]);
        else if (l->kind == SB_LABELS_BOOL) sink_u8(s, (uint8_t)l->ints[i]);
        else if (l->kind == SB_LABELS_INT64) sink_u64(s, (uint64_t)l->ints[i]);
        else {
            uint64_t bits;
            memcpy(&bits, &l->floats[i], sizeof bits);
            sink_u64(s, bits);
        }
    }
}

/* Version 2 (or 3) after the profile: the fields every family has (version 3:
 * then the class labels), then the family's payload framed by its tag and its
 * length. */
static void encode_v2(const sb_model *m, sink *s, uint32_t version) {
    sink_i32(s, m->family);
    sink_i32(s, m->numeric_mode);
    sink_i32(s, m->num_features);
    sink_str(s, m->params);
    sink_names(s, m);
    if (version == MF_VERSION_LABELS) sink_labels(s, m->labels);
    if (version == MF_VERSION_CATS) {
        sink_u8(s, m->labels ? 1 : 0);
        if (m->labels) sink_labels(s, m->labels);
        sink_u32(s, (uint32_t)m->ncatnames);
        for (int32_t k = 0; k < m->ncatnames; k++) {
            sink_i32(s, m->catnames[k].feature);
            sink_u32(s, (uint32_t)m->catnames[k].n);
            for (int32_t i = 0; i < m->catnames[k].n; i++) sink_str(s, m->catnames[k].names[i]);
        }
    }
    sink_bytes(s, payload_tag(m->family), MF_TAG_LEN);
    sink_u64(s, payload_size(m, version));
    if (m->family == SB_FAMILY_SVM) {
        const sb_svm *v = m->svm;
        const int64_t ng = v->kind == SB_SVM_SVC ? v->nclass : 1;
        sink_i32(s, v->kind);
        sink_i32(s, v->kernel);
        sink_i32(s, v->degree);
        sink_i32(s, v->nclass);
        sink_i32(s, v->converged);
        sink_f64(s, v->gamma);
        sink_f64(s, v->coef0);
        sink_u64(s, (uint64_t)v->n_fit);
        sink_u64(s, (uint64_t)v->nsv);
        for (int64_t c = 0; c < ng; c++) sink_i32(s, v->n_support[c]);
        for (int64_t i = 0; i < v->nsv; i++) sink_u64(s, (uint64_t)v->support[i]);
        for (size_t i = 0; i < (size_t)v->nsv * (size_t)m->num_features; i++) sink_f32(s, v->sv[i]);
        for (int64_t i = 0; i < sb_svm_ncoef(v) * v->nsv; i++) sink_f64(s, v->coef[i]);
        for (int64_t q = 0; q < sb_svm_npairs(v); q++) sink_f64(s, v->rho[q]);
        for (int64_t q = 0; q < sb_svm_npairs(v); q++) sink_u64(s, (uint64_t)v->n_iter[q]);
        for (int64_t q = 0; v->probA && q < sb_svm_npairs(v); q++) sink_f64(s, v->probA[q]);
        for (int64_t q = 0; v->probA && q < sb_svm_npairs(v); q++) sink_f64(s, v->probB[q]);
        return;
    }
    if (m->family == SB_FAMILY_UMAP) {
        const sb_umap *u = m->umap;
        const int32_t f[6] = {u->n_neighbors, u->ncomp, u->metric, u->n_epochs, u->neg_rate, u->init};
        const float g[8] = {u->min_dist, u->spread, u->lr, u->mix, u->local_conn, u->gamma, u->a, u->b};
        for (int j = 0; j < 6; j++) sink_i32(s, f[j]);
        for (int j = 0; j < 8; j++) sink_f32(s, g[j]);
        sink_u64(s, u->seed);
        sink_u64(s, (uint64_t)u->n);
        for (size_t i = 0; i < (size_t)u->n * (size_t)m->num_features; i++) sink_f32(s, u->x[i]);
        for (size_t i = 0; i < (size_t)u->n * (size_t)u->ncomp; i++) sink_f32(s, u->emb[i]);
        return;
    }
    if (m->family == SB_FAMILY_KDE) {
        const sb_kde *k = m->kde;
        sink_i32(s, k->kernel);
        sink_i32(s, k->bw_rule);
        sink_i32(s, k->w != NULL);
        sink_f32(s, k->bandwidth);
        sink_u64(s, (uint64_t)k->n);
        for (size_t i = 0; i < (size_t)k->n * (size_t)m->num_features; i++) sink_f32(s, k->x[i]);
        if (k->w)
            for (size_t i = 0; i < (size_t)k->n; i++) sink_f32(s, k->w[i]);
        return;
    }
    if (m->family == SB_FAMILY_LM) {
        const sb_lm *lm = m->lm;
        const lm_opts *o = &lm->o;
        const int32_t h[8] = {o->n_layer, o->d_model, o->n_head, o->context, o->batch_size, o->eval_batches,
                              lm->ntensors, 0};
        for (int j = 0; j < 8; j++) sink_i32(s, h[j]);
        const uint64_t u[6] = {o->seed, (uint64_t)lm->step, lm->corpus_len, lm->corpus_hash, (uint64_t)lm->n_eval,
                               (uint64_t)lm->nparams};
        for (int j = 0; j < 6; j++) sink_u64(s, u[j]);
        const double d[8] = {o->learning_rate, o->beta_1, o->beta_2, o->epsilon, o->weight_decay, o->dropout,
                             o->clip_norm, o->validation_fraction};
        for (int j = 0; j < 8; j++) sink_f64(s, d[j]);
        for (int64_t i = 0; i < lm->step; i++) sink_f32(s, lm->train_loss[i]);
        for (int64_t i = 0; i < lm->n_eval; i++) {
            sink_u64(s, (uint64_t)lm->eval_step[i]);
            sink_f32(s, lm->eval_loss[i]);
        }
        for (int64_t i = 0; i < lm->nparams; i++) sink_f32(s, lm->w[i]);
        for (int64_t i = 0; i < lm->nparams; i++) sink_f32(s, lm->m[i]);
        for (int64_t i = 0; i < lm->nparams; i++) sink_f32(s, lm->v[i]);
        return;
    }
    if (m->family == SB_FAMILY_MLP) {
        const sb_mlp *net = m->mlp;
        const mlp_opts *o = &net->o;
        const int32_t h[16] = {o->classifier, o->nhidden, o->activation, o->solver, o->learning_rate, o->max_iter,
                               o->shuffle, o->early_stopping, o->nesterovs_momentum, o->n_iter_no_change,
                               net->out_act, net->multilabel, net->nlayers, net->n_iter, 0, 0};
        for (int j = 0; j < 16; j++) sink_i32(s, h[j]);
        sink_u64(s, (uint64_t)o->batch_size);
        sink_u64(s, o->seed);
        sink_u64(s, (uint64_t)net->nclasses);
        sink_u64(s, (uint64_t)net->t);
        const double d[9] = {o->alpha, o->learning_rate_init, o->power_t, o->tol, o->validation_fraction,
                             o->momentum, o->beta_1, o->beta_2, o->epsilon};
        for (int j = 0; j < 9; j++) sink_f64(s, d[j]);
        for (int32_t l = 0; l <= net->nlayers; l++) sink_u64(s, (uint64_t)net->size[l]);
        sink_f64(s, net->loss);
        sink_f64(s, net->best_loss != net->best_loss ? NAN : net->best_loss);
        sink_f64(s, net->best_val != net->best_val ? NAN : net->best_val);
        for (int32_t i = 0; i < net->n_iter; i++) sink_f64(s, net->curve[i]);
        if (net->val_scores)
            for (int32_t i = 0; i < net->n_iter; i++) sink_f64(s, net->val_scores[i]);
        for (int32_t l = 0; l < net->nlayers; l++) {
            for (int64_t i = 0; i < net->size[l] * net->size[l + 1]; i++) sink_f32(s, net->W[l][i]);
            for (int64_t i = 0; i < net->size[l + 1]; i++) sink_f32(s, net->b[l][i]);
        }
        return;
    }
    if (m->family == SB_FAMILY_GP) {
        const sb_gp *g = m->gp;
        sink_i32(s, g->k.nnodes);
        sink_i32(s, g->k.root);
        sink_i32(s, g->k.npar);
        sink_i32(s, 0);
        for (int32_t v = 0; v < g->k.nnodes; v++) {
            const gp_node *nd = &g->k.node[v];
            const int32_t f[7] = {nd->kind, nd->a, nd->b, nd->p0, nd->p1, nd->nls, nd->nu2};
            for (int j = 0; j < 7; j++) sink_i32(s, f[j]);
        }
        for (int32_t p = 0; p < g->k.npar; p++) {
            sink_f64(s, g->k.logv[p]);
            sink_f64(s, g->k.lo[p]);
            sink_f64(s, g->k.hi[p]);
            sink_i32(s, g->k.fixed[p]);
        }
        sink_u64(s, (uint64_t)g->n);
        sink_u64(s, (uint64_t)g->d);
        sink_u64(s, (uint64_t)g->t);
        sink_f64(s, g->alpha);
        const int32_t o[5] = {g->normalize_y, g->optimize, g->restarts, g->nit, g->nfev};
        for (int j = 0; j < 5; j++) sink_i32(s, o[j]);
        sink_u64(s, g->seed);
        sink_f64(s, g->lml);
        for (int64_t i = 0; i < g->n * g->d; i++) sink_f64(s, g->X[i]);
        for (int64_t i = 0; i < g->n * g->t; i++) sink_f64(s, g->y[i]);
        for (int64_t i = 0; i < g->t; i++) sink_f64(s, g->ymean[i]);
        for (int64_t i = 0; i < g->t; i++) sink_f64(s, g->ystd[i]);
        for (int64_t i = 0; i < g->n * g->t; i++) sink_f64(s, g->a[i]);
        return;
    }
    if (m->family == SB_FAMILY_ETS) {
        const sb_ets *e = m->ets;
        const uint64_t w = ets_state_count(&e->spec);
        /* multiplicative errors: bit 8 of the trend field (0 before them: additive files unchanged) */
        sink_i32(s, e->spec.trend | (e->spec.error == ETS_MUL ? 0x100 : 0));
        sink_i32(s, e->spec.damped);
        sink_i32(s, e->spec.seasonal);
        sink_i32(s, e->spec.m);
        sink_u64(s, (uint64_t)e->nseries);
        for (int64_t i = 0; i < e->nseries; i++) {
            const ets_fit *f = &e->fits[i];
            const double crit[4] = {f->sse, f->aic, f->aicc, f->bic};
            sink_u64(s, (uint64_t)f->n);
            sink_i32(s, f->k);
            sink_i32(s, f->nfev);
            sink_i32(s, f->nit);
            sink_i32(s, f->converged);
            for (int p = 0; p < SB_ETS_NPAR; p++) sink_f64(s, f->par[p]);
            for (uint64_t j = 0; j < w; j++) sink_f64(s, f->init[j]);
            for (uint64_t j = 0; j < w; j++) sink_f64(s, f->last[j]);
            for (int p = 0; p < 4; p++) sink_f64(s, crit[p]);
            for (int64_t t = 0; t < f->n; t++) sink_f64(s, f->fitted[t]);
            for (int64_t t = 0; t < f->n; t++) sink_f64(s, f->resid[t]);
        }
        return;
    }
    if (m->family == SB_FAMILY_ARIMA) {
        const sb_arima *e = m->arima;
        const arima_spec *sp = &e->spec;
        const int32_t hd[9] = {sp->p, sp->d, sp->q, sp->P, sp->D, sp->Q, sp->s, sp->trend, sp->ngiven};
        for (int i = 0; i < 9; i++) sink_i32(s, hd[i]);
        for (int32_t i = 0; i < sp->ngiven; i++) sink_f64(s, sp->given[i]);
        sink_u64(s, (uint64_t)e->nseries);
        const int32_t np = sb_arima_npar(sp), r = sb_arima_state_dim(sp), L = sb_arima_diff_lag(sp);
        for (int64_t i = 0; i < e->nseries; i++) {
            const arima_fit *f = &e->fits[i];
            sink_u64(s, (uint64_t)f->n);
            sink_i32(s, f->nfev);
            sink_i32(s, f->nit);
            sink_i32(s, f->converged);
            for (int32_t k = 0; k < np; k++) sink_f64(s, f->par[k]);
            sink_f64(s, f->llf), sink_f64(s, f->aic), sink_f64(s, f->aicc), sink_f64(s, f->bic);
            for (int64_t t = 0; t < f->n; t++) sink_f64(s, f->fitted[t]);
            for (int64_t t = 0; t < f->n; t++) sink_f64(s, f->resid[t]);
            for (int32_t k = 0; k < r; k++) sink_f64(s, f->a[k]);
            for (int64_t k = 0; k < (int64_t)r * r; k++) sink_f64(s, f->P[k]);
            for (int32_t k = 0; k < L; k++) sink_f64(s, f->ylast[k]);
        }
        return;
    }
    if (m->family == SB_FAMILY_SPECTRAL) {
        const sb_spectral *g = m->spectral;
        sink_i32(s, g->affinity);
        sink_i32(s, g->n_clusters);
        sink_u64(s, (uint64_t)g->n);
        for (int64_t i = 0; i < g->n; i++) sink_i32(s, g->labels[i]);
        return;
    }
    if (m->family == SB_FAMILY_AGGLOMERATIVE) {
        const sb_agglo *g = m->agglo;
        sink_i32(s, g->linkage);
        sink_i32(s, g->n_clusters);
        sink_u64(s, (uint64_t)g->n);
        for (int64_t i = 0; i < g->n; i++) sink_i32(s, g->labels[i]);
        for (int64_t i = 0; i < 2 * (g->n - 1); i++) sink_u64(s, (uint64_t)g->children[i]);
        for (int64_t i = 0; i < g->n - 1; i++) {
            uint64_t bits;
            memcpy(&bits, &g->distances[i], sizeof bits);
            sink_u64(s, bits);
        }
        return;
    }
    if (m->family == SB_FAMILY_DBSCAN) {
        const sb_dbscan *b = m->dbscan;
        sink_i32(s, b->min_samples);
        sink_i32(s, b->metric);
        sink_i32(s, b->n_clusters);
        sink_f32(s, b->eps);
        sink_u64(s, (uint64_t)b->n);
        sink_u64(s, (uint64_t)b->ncore);
        for (int64_t i = 0; i < b->n; i++) sink_i32(s, b->labels[i]);
        for (int64_t i = 0; i < b->ncore; i++) sink_u64(s, (uint64_t)b->core[i]);
        for (size_t i = 0; i < (size_t)b->ncore * (size_t)m->num_features; i++) sink_f32(s, b->components[i]);
        return;
    }
    if (m->family == SB_FAMILY_KNN) {
        const sb_knn *k = m->knn;
        sink_i32(s, k->task);
        sink_i32(s, k->n_neighbors);
        sink_i32(s, k->metric);
        sink_i32(s, k->weights);
        sink_i32(s, k->nclass);
        sink_u64(s, (uint64_t)k->n);
        sink_f32(s, k->radius);
        for (size_t i = 0; i < (size_t)k->n * (size_t)m->num_features; i++) sink_f32(s, k->x[i]);
        if (k->task != SB_KNN_NEIGHBORS)
            for (size_t i = 0; i < (size_t)k->n; i++) sink_f32(s, k->y[i]);
        return;
    }
    if (m->family == SB_FAMILY_KMEANS) {
        const sb_kmeans *c = m->kmeans;
        sink_i32(s, c->k);
        sink_i32(s, c->n_iter);
        sink_i32(s, c->converged);
        sink_f32(s, c->inertia);
        for (size_t i = 0; i < (size_t)c->k * (size_t)m->num_features; i++) sink_f32(s, c->centers[i]);
        return;
    }
    if (m->family == SB_FAMILY_LINEAR) {
        const sb_linear *l = m->linear;
        const size_t no = (size_t)l->nout, nf = (size_t)m->num_features;
        sink_i32(s, l->kind);
        sink_i32(s, l->nout);
        sink_i32(s, l->nclass);
        sink_i32(s, l->n_iter);
        sink_i32(s, l->converged);
        sink_i32(s, l->whiten);
        sink_i32(s, l->rank);
        sink_f32(s, l->noise_variance);
        for (size_t i = 0; i < no * nf; i++) sink_f32(s, l->coef[i]);
        for (size_t i = 0; i < no; i++) sink_f32(s, l->intercept[i]);
        if (l->kind == SB_LIN_PCA)
            for (size_t i = 0; i < nf; i++) sink_f32(s, l->mean[i]);
        if (l->kind == SB_LIN_PCA || l->kind == SB_LIN_TSVD) {
            for (size_t i = 0; i < no; i++) sink_f32(s, l->ev[i]);
            for (size_t i = 0; i < no; i++) sink_f32(s, l->evr[i]);
            for (size_t i = 0; i < no; i++) sink_f32(s, l->sv[i]);
        }
        if (SB_LIN_HAS_RUNS(l->kind, l->nout))
            for (size_t i = 0; i < 2 * no; i++) sink_i32(s, l->runs[i]);
        return;
    }
    sink_i32(s, m->objective);
    sink_i32(s, m->num_class);
    for (int32_t k = 0; k < m->num_class; k++) sink_f32(s, m->base_score[k]);
    sink_trees(s, m, version == MF_VERSION_CATS);
}

/* Write the whole file in version into s (whose SHA is fresh); total is
 * encoded_size(m, version). digest gets the 32 bytes that close the file. */
static void encode(const sb_model *m, uint32_t version, uint64_t total, sink *s, uint8_t digest[MF_DIGEST_LEN]) {
    sink_bytes(s, MF_MAGIC, MF_MAGIC_LEN);
    sink_u32(s, version);
    sink_u64(s, total);
    sink_str(s, model_profile(m));
    if (version == 1) encode_v1(m, s);
    else encode_v2(m, s, version);
    sb_sha256_ctx body = s->sha;
    sb_sha256_final(&body, digest);
    sink_bytes(s, digest, MF_DIGEST_LEN);
}

/* Validate m, check that version can hold it and compute its file size:
 * SB_ERR_INVALID_ARGUMENT for a version that does not exist or cannot hold
 * the family, SB_ERR_LIMIT past the 2 GiB file limit. */
static sb_status prepare(const sb_model *m, uint32_t version, const char *who, uint64_t *total) {
    if (version < 1 || version > MF_VERSION_MAX)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: format version %lu is not one this library writes (1..%u)", who,
                       (unsigned long)version, MF_VERSION_MAX);
    sb_status st = check_model(m, SB_ERR_INVALID_ARGUMENT, who);
    if (st != SB_OK) return st;
    if (version == MF_VERSION_LABELS && !m->labels)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: format version 3 is a labeled model's; this model has no class "
                       "labels (version 2)", who);
    if (version == MF_VERSION_CATS && !has_cats(m) && m->ncatnames == 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: format version 4 is a categorical model's; this model has no "
                       "categorical split or category names (version %lu)", who, (unsigned long)writer_version(m));
    if (version != MF_VERSION_CATS && (has_cats(m) || m->ncatnames > 0))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: format version %lu cannot hold categorical splits or category "
                       "names (version 4)", who, (unsigned long)version);
    for (int32_t k = 0; k < m->ncatnames; k++) {
        if (k > 0 && m->catnames[k].feature <= m->catnames[k - 1].feature)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: category names out of feature order", who);
        if ((st = sb_catnames_check(&m->catnames[k], m->num_features, SB_ERR_INVALID_ARGUMENT, who)) != SB_OK)
            return st;
    }
    if (version == 1 && sb_model_card_version(m) != 1)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: format version 1 holds only the tree families, not %s", who,
                       sb_family_name((sb_family)m->family));
    *total = encoded_size(m, version);
    if (*total > MF_MAX_FILE)
        return sb_fail(SB_ERR_LIMIT, "%s: the model needs %llu bytes, more than the format's limit of %llu",
                       who, (unsigned long long)*total, (unsigned long long)MF_MAX_FILE);
    return SB_OK;
}

/* Serialize m in format version (1 or 2, docs/model-format.md) into buf[cap].
 * *needed (may be NULL) gets the size; cap 0 asks (buf may then be NULL); a
 * smaller nonzero cap is SB_ERR_LIMIT, buf untouched. An invalid model is
 * SB_ERR_INVALID_ARGUMENT naming the broken rule; so is a version that does
 * not exist or cannot hold the model's family. */
sb_status sb_model_to_bytes_version(const sb_model *m, uint32_t version, uint8_t *buf, size_t cap,
                                    size_t *needed) {
    sb_clear_error();
    if (!m || (!buf && cap)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_to_bytes: NULL argument");
    uint64_t total;
    sb_status st = prepare(m, version, "sb_model_to_bytes", &total);
    if (st != SB_OK) return st;
    if (needed) *needed = (size_t)total;
    if (cap == 0) return SB_OK;
    if (cap < total)
        return sb_fail(SB_ERR_LIMIT, "sb_model_to_bytes: buffer holds %zu bytes, %llu needed", cap,
                       (unsigned long long)total);
    sink s = {.buf = buf};
    uint8_t digest[MF_DIGEST_LEN];
    sb_sha256_init(&s.sha);
    encode(m, version, total, &s, digest);
    return SB_OK;
}

/* Serialize m in the writer's version (3 with class labels, else 2), as
 * sb_model_to_bytes_version. */
sb_status sb_model_to_bytes(const sb_model *m, uint8_t *buf, size_t cap, size_t *needed) {
    if (!m) return sb_model_to_bytes_version(m, MF_VERSION, buf, cap, needed);
    return sb_model_to_bytes_version(m, writer_version(m), buf, cap, needed);
}

/* The model's digest as 64 lowercase hex digits and a NUL: the last 32 bytes of
 * its file in the current version, computed by streaming the encoding through
 * SHA-256 (no buffer). */
sb_status sb_model_digest(const sb_model *m, char hex[65]) {
    sb_clear_error();
    if (!m || !hex) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_digest: NULL argument");
    uint64_t total;
    sb_status st = prepare(m, writer_version(m), "sb_model_digest", &total);
    if (st != SB_OK) return st;
    sink s = {0};
    uint8_t digest[MF_DIGEST_LEN];
    sb_sha256_init(&s.sha);
    encode(m, writer_version(m), total, &s, digest);
    sb_hex(digest, MF_DIGEST_LEN, hex);
    return SB_OK;
}

/* Write m to path by the library's output rule (src/core/output.c): a regular
 * file or a new name is written to a temporary file and renamed into place, so
 * any failure leaves an existing file at path as it was; "-", a device or a
 * pipe is written directly; a symbolic link's target, never the link, is
 * replaced; a read-only file is refused. */
sb_status sb_model_save(const sb_model *m, const char *path) {
    sb_clear_error();
    if (!m || !path) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_save: NULL argument");
    uint64_t total;
    sb_status st = prepare(m, writer_version(m), "sb_model_save", &total);
    if (st != SB_OK) return st;
    sb_output *o = NULL;
    if ((st = sb_output_open(path, &o)) != SB_OK) return st;
    sink s = {.f = sb_output_stream(o)};
    uint8_t digest[MF_DIGEST_LEN];
    sb_sha256_init(&s.sha);
    errno = 0;
    encode(m, writer_version(m), total, &s, digest);
    if (s.ferr) sb_output_set_error(o, s.ferr);
    return sb_output_commit(o);
}

/* ---- reading ---- */

/* A bounded cursor over the file's body (the bytes before the digest). */
typedef struct reader {
    const uint8_t *p;
    size_t end, pos;
} reader;

#define WHO "model file"

/* Whether n more bytes are there; if not, an SB_ERR_INVALID_INPUT naming what. */
static sb_status need(const reader *r, size_t n, const char *what) {
    if (n > r->end - r->pos)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": ends inside %s (byte %zu needs %zu bytes, %zu left before the digest)",
                       what, r->pos, n, r->end - r->pos);
    return SB_OK;
}

static sb_status read_u32(reader *r, const char *what, uint32_t *v) {
    sb_status st = need(r, 4, what);
    if (st != SB_OK) return st;
    *v = get_u32(r->p + r->pos);
    r->pos += 4;
    return SB_OK;
}

static sb_status read_u64(reader *r, const char *what, uint64_t *v) {
    sb_status st = need(r, 8, what);
    if (st != SB_OK) return st;
    *v = get_u64(r->p + r->pos);
    r->pos += 8;
    return SB_OK;
}

static sb_status read_i32(reader *r, const char *what, int32_t *v) {
    uint32_t u;
    sb_status st = read_u32(r, what, &u);
    if (st == SB_OK) *v = u32_to_i32(u);
    return st;
}

/* A length-prefixed string, checked (limit, bytes present, UTF-8, no NUL)
 * before it is copied into a fresh NUL-terminated allocation. */
static sb_status read_str(reader *r, size_t limit, const char *what, char **out) {
    uint32_t n;
    sb_status st = read_u32(r, what, &n);
    if (st != SB_OK) return st;
    if (n > limit)
        return sb_fail(SB_ERR_LIMIT, WHO ": %s is %lu bytes, more than the limit of %zu", what,
                       (unsigned long)n, limit);
    if ((st = need(r, n, what)) != SB_OK) return st;
    if ((st = check_string((const char *)r->p + r->pos, n, limit, SB_ERR_INVALID_INPUT, WHO, what)) != SB_OK)
        return st;
    *out = sb_malloc((size_t)n + 1);
    if (!*out) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    memcpy(*out, r->p + r->pos, n);
    (*out)[n] = '\0';
    r->pos += n;
    return SB_OK;
}

/* A count in [lo, limit] whose items take at least min_item bytes each and so
 * must fit in what is left: SB_ERR_LIMIT above limit, else SB_ERR_INVALID_INPUT.
 * This is what keeps every allocation sized by the file below its length. */
static sb_status read_count(reader *r, const char *what, int32_t lo, int32_t limit, size_t min_item,
                            int32_t *v) {
    sb_status st = read_i32(r, what, v);
    if (st != SB_OK) return st;
    if (*v > limit)
        return sb_fail(SB_ERR_LIMIT, WHO ": %s %d exceeds the limit of %d", what, (int)*v, (int)limit);
    if (*v < lo) return sb_fail(SB_ERR_INVALID_INPUT, WHO ": %s is %d, at least %d", what, (int)*v, (int)lo);
    if ((size_t)*v > (r->end - r->pos) / min_item)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": %s %d does not fit in the %zu bytes left", what, (int)*v,
                       r->end - r->pos);
    return SB_OK;
}

/* The profile string, which must be one this library reads (sb_model_profiles);
 * m->profile gets the library's copy of it. */
static sb_status read_profile(reader *r, sb_model *m) {
    char *profile = NULL;
    sb_status st = read_str(r, MF_MAX_PROFILE, "the profile version", &profile);
    if (st != SB_OK) return st;
    const char *known = NULL;
    for (int32_t i = 0; i < sb_model_nprofiles; i++)
        if (strcmp(profile, sb_model_profiles[i]) == 0) known = sb_model_profiles[i];
    if (!known)
        sb_fail(SB_ERR_INVALID_INPUT, WHO ": numeric profile '%s' is not one this library reads ('%s' or earlier)",
                profile, SB_PROFILE_VERSION);
    else m->profile = known;
    sb_free(profile);
    return known ? SB_OK : SB_ERR_INVALID_INPUT;
}

/* num_features, counted against the bytes left. Names take at least 4 bytes
 * each, but may be absent: 1 byte is the floor that still bounds the count. */
static sb_status read_num_features(reader *r, sb_model *m) {
    int32_t nfeat;
    sb_status st = read_count(r, "num_features", 1, MF_MAX_FEATURES, 1, &nfeat);
    if (st == SB_OK) m->num_features = nfeat;
    return st;
}

/* num_class base scores (num_class already read and counted). */
static sb_status read_base_score(reader *r, sb_model *m, int32_t nclass) {
    m->base_score = sb_malloc((size_t)nclass * sizeof(float));
    if (!m->base_score) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    m->num_class = nclass;
    for (int32_t k = 0; k < nclass; k++) {
        uint32_t u;
        sb_status st = read_u32(r, "base_score", &u);
        if (st != SB_OK) return st;
        m->base_score[k] = bits_float(u);
    }
    return SB_OK;
}

/* The feature-names flag and, if it is 1, m->num_features names. */
static sb_status read_names(reader *r, sb_model *m) {
    sb_status st = need(r, 1, "the feature-names flag");
    if (st != SB_OK) return st;
    uint8_t has_names = r->p[r->pos++];
    if (has_names > 1)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": feature-names flag is %d, not 0 or 1", (int)has_names);
    if (!has_names) return SB_OK;
    const int32_t nfeat = m->num_features;
    if ((size_t)nfeat > (r->end - r->pos) / 4)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": %d feature names do not fit in the %zu bytes left", (int)nfeat,
                       r->end - r->pos);
    m->feature_names = sb_calloc((size_t)nfeat, sizeof(char *));
    if (!m->feature_names) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    for (int32_t f = 0; f < nfeat; f++) {
        char what[48];
        snprintf(what, sizeof what, "feature name %d", (int)f);
        if ((st = read_str(r, MF_MAX_STRING, what, &m->feature_names[f])) != SB_OK) return st;
    }
    return SB_OK;
}

/* The version-3 labels section into m->labels: the kind, then the count
 * (checked against its limit and the bytes left before anything is sized by
 * it), then the labels; their order and the count's fit to the model are
 * checked with the model (check_common). */
static sb_status read_labels(reader *r, sb_model *m) {
    sb_status st = need(r, 1, "the class-label kind");
    if (st != SB_OK) return st;
    const int32_t kind = r->p[r->pos++];
    if (kind < SB_LABELS_INT64 || kind > SB_LABELS_BOOL)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": class label kind %d is not one of 1 int64, 2 float64, 3 string, "
                       "4 bool", (int)kind);
    const size_t item = kind == SB_LABELS_BOOL ? 1u : kind == SB_LABELS_STRING ? 4u : 8u;
    int32_t n;
    if ((st = read_count(r, "the class-label count", 1, MF_MAX_CLASS, item, &n)) != SB_OK) return st;
    if (!(m->labels = sb_labels_alloc(kind, n))) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    for (int32_t i = 0; i < n; i++) {
        if (kind == SB_LABELS_STRING) {
            char what[48];
            snprintf(what, sizeof what, "class label %d", (int)i);
            if ((st = read_str(r, MF_MAX_STRING, what, &m->labels->strs[i])) != SB_OK) return st;
        } else if (kind == SB_LABELS_BOOL) {
            m->labels->ints[i] = r->p[r->pos++];
        } else {
            const uint64_t u = get_u64(r->p + r->pos);
            r->pos += 8;
            if (kind == SB_LABELS_INT64) m->labels->ints[i] = u64_to_i64(u);
            else memcpy(&m->labels->floats[i], &u, sizeof u);
        }
    }
    return SB_OK;
}

/* Version 4's category sets of tree tr (after its nodes): the set count,
 * then per set its node, its code count and the codes; each count checked
 * against the bytes left first. The sets' structure is check_tree's. */
static sb_status read_cat_sets(reader *r, int32_t t, sb_tree *tr) {
    int32_t ns;
    char what[64];
    snprintf(what, sizeof what, "tree %d's category set count", (int)t);
    sb_status st = read_count(r, what, 0, tr->nnodes, 12, &ns);
    if (st != SB_OK || ns == 0) return st;
    tr->cat_start = sb_malloc(sizeof(int32_t) * (size_t)(ns + 1));
    tr->cat_codes = sb_malloc(sizeof(float) * (size_t)ns * MF_MAX_CAT_CODES);
    if (!tr->cat_start || !tr->cat_codes) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    int32_t at = 0;
    for (int32_t c = 0; c < ns; c++) {
        int32_t node, count;
        if ((st = read_i32(r, "a category set's node", &node)) != SB_OK) return st;
        if (node < 0 || node >= tr->nnodes || tr->nodes[node].categorical)
            return sb_fail(SB_ERR_INVALID_INPUT, WHO ": tree %d: category set %d names node %d, not a node of its "
                           "own", (int)t, (int)c, (int)node);
        snprintf(what, sizeof what, "tree %d's set %d code count", (int)t, (int)c);
        if ((st = read_count(r, what, 1, MF_MAX_CAT_CODES, 4, &count)) != SB_OK) return st;
        tr->cat_start[c] = at;
        for (int32_t i = 0; i < count; i++, r->pos += 4) {
            const int32_t code = u32_to_i32(get_u32(r->p + r->pos));
            if (code < 0 || (i > 0 && (float)code <= tr->cat_codes[at - 1]) || (int64_t)(float)code != (int64_t)code)
                return sb_fail(SB_ERR_INVALID_INPUT, WHO ": tree %d set %d: code %d is not a code above the one "
                               "before it (codes ascend, 0 to 2^31 - 1, each a float exactly)", (int)t, (int)c, (int)code);
            tr->cat_codes[at++] = (float)code;
        }
        tr->nodes[node].categorical = 1;
        tr->nodes[node].cat_set = c;
    }
    tr->cat_start[ns] = at;
    tr->ncat = ns;
    return SB_OK;
}

/* Version 4's category names: the feature count, then per feature its
 * index, its name count and the names; features ascending, each table
 * checked as the writer checks it (sb_catnames_check). */
static sb_status read_catnames(reader *r, sb_model *m) {
    int32_t nfeat;
    sb_status st = read_count(r, "the categorical features with names", 0, m->num_features, 12, &nfeat);
    if (st != SB_OK || nfeat == 0) return st;
    if (!(m->catnames = sb_calloc((size_t)nfeat, sizeof(sb_catnames)))) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    for (int32_t k = 0; k < nfeat; k++) {
        sb_catnames *c = &m->catnames[k];
        m->ncatnames = k + 1;
        int32_t n;
        if ((st = read_i32(r, "a categorical feature", &c->feature)) != SB_OK) return st;
        if ((st = read_count(r, "a category name count", 1, 1000000, 4, &n)) != SB_OK) return st;
        if (!(c->names = sb_calloc((size_t)n, sizeof(char *)))) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
        c->n = n;
        for (int32_t i = 0; i < n; i++)
            if ((st = read_str(r, MF_MAX_STRING, "a category name", &c->names[i])) != SB_OK) return st;
        if (k > 0 && c->feature <= m->catnames[k - 1].feature)
            return sb_fail(SB_ERR_INVALID_INPUT, WHO ": category names of feature %d after feature %d (ascending "
                           "features)", (int)c->feature, (int)m->catnames[k - 1].feature);
        if ((st = sb_catnames_check(c, m->num_features, SB_ERR_INVALID_INPUT, WHO)) != SB_OK) return st;
    }
    return SB_OK;
}

/* ntrees and the trees, each count checked against the bytes left first
 * (cats: version 4, each tree's category sets after its nodes). */
static sb_status read_trees(reader *r, sb_model *m, int cats) {
    int32_t ntrees;
    sb_status st = read_count(r, "ntrees", 0, MF_MAX_TREES, 4 + MF_NODE_LEN, &ntrees);
    if (st != SB_OK) return st;
    if (ntrees > 0) {
        m->trees = sb_calloc((size_t)ntrees, sizeof(sb_tree));
        if (!m->trees) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    }
    m->ntrees = ntrees;
    for (int32_t t = 0; t < ntrees; t++) {
        sb_tree *tr = &m->trees[t];
        int32_t n;
        char what[48];
        snprintf(what, sizeof what, "tree %d's node count", (int)t);
        if ((st = read_count(r, what, 1, MF_MAX_NODES, MF_NODE_LEN, &n)) != SB_OK) return st;
        tr->nodes = sb_malloc((size_t)n * sizeof(sb_tree_node));
        if (!tr->nodes) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
        tr->nnodes = n;
        for (int32_t i = 0; i < n; i++) {
            const uint8_t *q = r->p + r->pos;
            sb_tree_node *nd = &tr->nodes[i];
            memset(nd, 0, sizeof *nd);
            nd->feature = u32_to_i32(get_u32(q));
            nd->threshold = bits_float(get_u32(q + 4));
            nd->left = u32_to_i32(get_u32(q + 8));
            nd->right = u32_to_i32(get_u32(q + 12));
            nd->value = bits_float(get_u32(q + 16));
            nd->gain = bits_float(get_u32(q + 20));
            nd->count = u64_to_i64(get_u64(q + 24));
            nd->default_left = q[32];
            r->pos += MF_NODE_LEN;
        }
        if (cats && (st = read_cat_sets(r, t, tr)) != SB_OK) return st;
    }
    return SB_OK;
}

/* A version-1 body (digest already verified) into m. */
static sb_status parse_v1(reader *r, sb_model *m) {
    sb_status st;
    int32_t nclass;
    if ((st = read_i32(r, "the family", &m->family)) != SB_OK) return st;
    if (m->family < SB_FAMILY_GBDT || m->family > SB_FAMILY_ISOLATION_FOREST)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": family %d is not a tree family (0..3): version 1 holds only those",
                       (int)m->family);
    if ((st = read_i32(r, "the objective", &m->objective)) != SB_OK) return st;
    if ((st = read_count(r, "num_class", 1, MF_MAX_CLASS, 4, &nclass)) != SB_OK) return st;
    if ((st = read_num_features(r, m)) != SB_OK) return st;
    if ((st = read_i32(r, "the numeric mode", &m->numeric_mode)) != SB_OK) return st;
    if ((st = read_base_score(r, m, nclass)) != SB_OK) return st;
    if ((st = read_str(r, MF_MAX_STRING, "params", &m->params)) != SB_OK) return st;
    if ((st = read_names(r, m)) != SB_OK) return st;
    if ((st = read_trees(r, m, 0)) != SB_OK) return st;
    if (r->pos != r->end)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": %zu unused bytes between the last tree and the digest",
                       r->end - r->pos);
    return SB_OK;
}

/* The version-2 tree payload (reader bounded to the payload) into m (cats:
 * version 4's, with each tree's category sets). */
static sb_status parse_tree_payload(reader *r, sb_model *m, int cats) {
    sb_status st;
    int32_t nclass;
    if ((st = read_i32(r, "the objective", &m->objective)) != SB_OK) return st;
    if ((st = read_count(r, "num_class", 1, MF_MAX_CLASS, 4, &nclass)) != SB_OK) return st;
    if ((st = read_base_score(r, m, nclass)) != SB_OK) return st;
    if ((st = read_trees(r, m, cats)) != SB_OK) return st;
    if (r->pos != r->end)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": %zu unused bytes between the last tree and the end of the "
                       "payload", r->end - r->pos);
    return SB_OK;
}

/* The linear payload (docs/model-format.md, "LINR"): its fields, each array
 * counted against the bytes left before anything is allocated. */
static sb_status read_f32s(reader *r, float *dst, size_t n, const char *what) {
    sb_status st = need(r, 4 * n, what);
    if (st != SB_OK) return st;
    for (size_t i = 0; i < n; i++) {
        uint32_t u = get_u32(r->p + r->pos + 4 * i);
        memcpy(&dst[i], &u, 4);
    }
    r->pos += 4 * n;
    return SB_OK;
}

static sb_status parse_linear_payload(reader *r, sb_model *m) {
    sb_status st;
    int32_t f[7];
    static const char *const names[7] = {"the linear kind", "the coefficient rows", "the classes", "n_iter",
                                         "converged", "whiten", "rank"};
    for (int i = 0; i < 7; i++)
        if ((st = read_i32(r, names[i], &f[i])) != SB_OK) return st;
    if (f[0] < 0 || f[0] >= SB_LIN_KIND_COUNT_)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": unknown linear kind %d (0..%d)", (int)f[0], SB_LIN_KIND_COUNT_ - 1);
    if (f[1] < 1 || f[1] > MF_MAX_LINEAR_OUT)
        return sb_fail(f[1] < 1 ? SB_ERR_INVALID_INPUT : SB_ERR_LIMIT, WHO ": %d coefficient rows (1..%d)",
                       (int)f[1], MF_MAX_LINEAR_OUT);
    const size_t no = (size_t)f[1], nf = (size_t)m->num_features;
    size_t want = 4 + 4 * (no * nf + no) + (f[0] == SB_LIN_PCA ? 4 * nf : 0) +
                  (f[0] == SB_LIN_PCA || f[0] == SB_LIN_TSVD ? 12 * no : 0) +
                  (SB_LIN_HAS_RUNS(f[0], f[1]) ? 8 * no : 0);
    if (want != r->end - r->pos)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": the linear payload of %zu x %zu needs %zu more bytes, %zu are left",
                       no, nf, want, r->end - r->pos);
    sb_linear *l = sb_linear_alloc(f[0], f[1], m->num_features);
    if (!l) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    m->linear = l;
    l->nclass = f[2];
    l->n_iter = f[3];
    l->converged = f[4];
    l->whiten = f[5];
    l->rank = f[6];
    m->num_class = l->nout;
    if ((st = read_f32s(r, &l->noise_variance, 1, "noise_variance")) != SB_OK) return st;
    if ((st = read_f32s(r, l->coef, no * nf, "the coefficients")) != SB_OK) return st;
    if ((st = read_f32s(r, l->intercept, no, "the intercepts")) != SB_OK) return st;
    if (l->mean && (st = read_f32s(r, l->mean, nf, "the means")) != SB_OK) return st;
    if (l->ev) {
        if ((st = read_f32s(r, l->ev, no, "explained_variance")) != SB_OK) return st;
        if ((st = read_f32s(r, l->evr, no, "explained_variance_ratio")) != SB_OK) return st;
        if ((st = read_f32s(r, l->sv, no, "singular_values")) != SB_OK) return st;
    }
    for (size_t i = 0; l->runs && i < 2 * no; i++)
        if ((st = read_i32(r, i < no ? "a target's sweeps" : "a target's converged flag", &l->runs[i])) != SB_OK)
            return st;
    return SB_OK;
}

/* The k-means payload (docs/model-format.md, "CNTR"). */
static sb_status parse_kmeans_payload(reader *r, sb_model *m) {
    sb_status st;
    int32_t f[3];
    static const char *const names[3] = {"the cluster count", "n_iter", "converged"};
    for (int i = 0; i < 3; i++)
        if ((st = read_i32(r, names[i], &f[i])) != SB_OK) return st;
    if (f[0] < 1 || f[0] > MF_MAX_CLUSTERS)
        return sb_fail(f[0] < 1 ? SB_ERR_INVALID_INPUT : SB_ERR_LIMIT, WHO ": %d clusters (1..%d)", (int)f[0],
                       MF_MAX_CLUSTERS);
    const size_t nc = (size_t)f[0] * (size_t)m->num_features;
    if (4 + 4 * nc != r->end - r->pos)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": the kmeans payload of %d x %d needs %zu more bytes, %zu are left",
                       (int)f[0], (int)m->num_features, 4 + 4 * nc, r->end - r->pos);
    sb_kmeans *c = sb_kmeans_alloc(f[0], m->num_features);
    if (!c) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    m->kmeans = c;
    c->n_iter = f[1];
    c->converged = f[2];
    m->num_class = c->k;
    if ((st = read_f32s(r, &c->inertia, 1, "the inertia")) != SB_OK) return st;
    return read_f32s(r, c->centers, nc, "the centers");
}

/* The knn payload (docs/model-format.md, "NBRS"); its screening arrays are
 * derived here as the fit derives them. */
static sb_status parse_knn_payload(reader *r, sb_model *m) {
    sb_status st;
    int32_t f[5];
    static const char *const names[5] = {"the task", "n_neighbors", "the metric", "the weights", "the class count"};
    for (int i = 0; i < 5; i++)
        if ((st = read_i32(r, names[i], &f[i])) != SB_OK) return st;
    uint64_t n;
    if ((st = read_u64(r, "the row count", &n)) != SB_OK) return st;
    if (f[0] < SB_KNN_NEIGHBORS || f[0] > SB_KNN_REGRESSOR)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": knn task %d (0..2)", (int)f[0]);
    const uint64_t per = 4 * ((uint64_t)m->num_features + (f[0] != SB_KNN_NEIGHBORS));
    if (n < 1 || n > MF_MAX_FILE / per)
        return sb_fail(n < 1 ? SB_ERR_INVALID_INPUT : SB_ERR_LIMIT, WHO ": %llu knn rows", (unsigned long long)n);
    if (4 + n * per != (uint64_t)(r->end - r->pos))
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": the knn payload of %llu x %d needs %llu more bytes, %zu are left",
                       (unsigned long long)n, (int)m->num_features, (unsigned long long)(4 + n * per), r->end - r->pos);
    sb_knn *k = sb_knn_alloc(f[0], (int64_t)n, m->num_features);
    if (!k) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory for %llu knn rows", (unsigned long long)n);
    m->knn = k;
    k->n_neighbors = f[1], k->metric = f[2], k->weights = f[3], k->nclass = f[4];
    m->num_class = f[0] == SB_KNN_CLASSIFIER ? f[4] : 1;
    if ((st = read_f32s(r, &k->radius, 1, "the radius")) != SB_OK) return st;
    if ((st = read_f32s(r, k->x, (size_t)n * (size_t)m->num_features, "the rows")) != SB_OK) return st;
    if (k->y && (st = read_f32s(r, k->y, (size_t)n, "the targets")) != SB_OK) return st;
    return SB_OK;
}

/* The agglomerative payload (docs/model-format.md, "AGGL"). */
static sb_status parse_agglo_payload(reader *r, sb_model *m) {
    sb_status st;
    int32_t f[2];
    static const char *const names[2] = {"the linkage", "the cluster count"};
    for (int i = 0; i < 2; i++)
        if ((st = read_i32(r, names[i], &f[i])) != SB_OK) return st;
    uint64_t n;
    if ((st = read_u64(r, "the row count", &n)) != SB_OK) return st;
    if (n < 2 || n > 40000)
        return sb_fail(n < 2 ? SB_ERR_INVALID_INPUT : SB_ERR_LIMIT, WHO ": %llu agglomerative rows (2..40000)",
                       (unsigned long long)n);
    if (4 * n + 24 * (n - 1) != (uint64_t)(r->end - r->pos))
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": the agglomerative payload of %llu rows needs %llu more bytes, %zu are "
                       "left", (unsigned long long)n, (unsigned long long)(4 * n + 24 * (n - 1)), r->end - r->pos);
    sb_agglo *g = sb_agglo_alloc((int64_t)n);
    if (!g) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory for %llu rows", (unsigned long long)n);
    m->agglo = g;
    g->linkage = f[0], g->n_clusters = f[1];
    m->num_class = 1;
    for (uint64_t i = 0; i < n; i++)
        if ((st = read_i32(r, "a label", &g->labels[i])) != SB_OK) return st;
    for (uint64_t i = 0; i < 2 * (n - 1); i++, r->pos += 8) g->children[i] = (int64_t)get_u64(r->p + r->pos);
    for (uint64_t i = 0; i < n - 1; i++, r->pos += 8) {
        const uint64_t bits = get_u64(r->p + r->pos);
        memcpy(&g->distances[i], &bits, sizeof bits);
    }
    return SB_OK;
}

static double mf_f64(reader *r) {
    const uint64_t bits = get_u64(r->p + r->pos);
    double v;
    memcpy(&v, &bits, 8);
    r->pos += 8;
    return v;
}

/* The svm payload (docs/model-format.md, "SVMS"); check_svm judges it after. */
static sb_status parse_svm_payload(reader *r, sb_model *m) {
    sb_status st;
    int32_t f[5];
    static const char *const names[5] = {"the svm kind", "the kernel", "the degree", "the class count",
                                         "the converged flag"};
    for (int i = 0; i < 5; i++)
        if ((st = read_i32(r, names[i], &f[i])) != SB_OK) return st;
    if ((f[0] != SB_SVM_SVC && f[0] != SB_SVM_SVR) || f[3] < 1 || f[3] > 1000 || (f[0] == SB_SVM_SVR && f[3] != 1) ||
        (f[0] == SB_SVM_SVC && f[3] < 2))
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": svm kind %d with %d classes", (int)f[0], (int)f[3]);
    if ((st = need(r, 32, "gamma, coef0 and the counts")) != SB_OK) return st;
    const double gamma = mf_f64(r), coef0 = mf_f64(r);
    const uint64_t nfit = get_u64(r->p + r->pos), nsv = get_u64(r->p + r->pos + 8);
    r->pos += 16;
    if (nfit < 1 || nfit > (uint64_t)INT32_MAX || nsv > nfit)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": %llu support vectors of %llu training rows", (unsigned long long)nsv,
                       (unsigned long long)nfit);
    sb_svm probe = {.kind = f[0], .nclass = f[3]};
    const uint64_t ng = f[0] == SB_SVM_SVC ? (uint64_t)f[3] : 1u;
    const uint64_t want = 4 * ng + nsv * (8 + 4 * (uint64_t)m->num_features + 8 * (uint64_t)sb_svm_ncoef(&probe)) +
                          16 * (uint64_t)sb_svm_npairs(&probe);
    const uint64_t platt = 16 * (uint64_t)sb_svm_npairs(&probe); /* probA and probB, when fitted with probability */
    const uint64_t left = (uint64_t)(r->end - r->pos);
    if (want != left && (f[0] != SB_SVM_SVC || want + platt != left))
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": the svm payload of %llu vectors needs %llu more bytes%s, %zu are "
                       "left", (unsigned long long)nsv, (unsigned long long)want,
                       f[0] == SB_SVM_SVC ? " (or that and probA and probB)" : "", r->end - r->pos);
    sb_svm *s = sb_svm_alloc(f[0], f[3], (int64_t)nsv, m->num_features);
    if (!s) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory for %llu support vectors", (unsigned long long)nsv);
    m->svm = s;
    if (want != left) {
        s->probA = sb_malloc(sizeof(double) * (size_t)sb_svm_npairs(s));
        s->probB = sb_malloc(sizeof(double) * (size_t)sb_svm_npairs(s));
        if (!s->probA || !s->probB) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory for probA and probB");
    }
    s->kernel = f[1], s->degree = f[2], s->converged = f[4], s->gamma = gamma, s->coef0 = coef0;
    s->n_fit = (int64_t)nfit;
    m->num_class = f[3];
    for (uint64_t c = 0; c < ng; c++) {
        int32_t v;
        if ((st = read_i32(r, "a class count", &v)) != SB_OK) return st;
        s->n_support[c] = v;
    }
    for (uint64_t i = 0; i < nsv; i++, r->pos += 8) s->support[i] = (int64_t)get_u64(r->p + r->pos);
    if ((st = read_f32s(r, s->sv, (size_t)nsv * (size_t)m->num_features, "the support vectors")) != SB_OK) return st;
    for (int64_t i = 0; i < sb_svm_ncoef(s) * s->nsv; i++) s->coef[i] = mf_f64(r);
    for (int64_t q = 0; q < sb_svm_npairs(s); q++) s->rho[q] = mf_f64(r);
    for (int64_t q = 0; q < sb_svm_npairs(s); q++, r->pos += 8) s->n_iter[q] = (int64_t)get_u64(r->p + r->pos);
    for (int64_t q = 0; s->probA && q < sb_svm_npairs(s); q++) s->probA[q] = mf_f64(r);
    for (int64_t q = 0; s->probA && q < sb_svm_npairs(s); q++) s->probB[q] = mf_f64(r);
    return SB_OK;
}

/* The kde payload (docs/model-format.md, "KDEN"). */
static sb_status parse_kde_payload(reader *r, sb_model *m) {
    sb_status st;
    int32_t f[3];
    static const char *const names[3] = {"the kernel", "the bandwidth rule", "the weights flag"};
    for (int i = 0; i < 3; i++)
        if ((st = read_i32(r, names[i], &f[i])) != SB_OK) return st;
    if (f[2] != 0 && f[2] != 1) return sb_fail(SB_ERR_INVALID_INPUT, WHO ": the kde weights flag is %d, not 0 or 1", (int)f[2]);
    float bw;
    if ((st = read_f32s(r, &bw, 1, "the bandwidth")) != SB_OK) return st;
    uint64_t n;
    if ((st = read_u64(r, "the row count", &n)) != SB_OK) return st;
    const uint64_t per = 4 * ((uint64_t)m->num_features + (uint64_t)f[2]);
    if (n < 1 || n > MF_MAX_FILE / per)
        return sb_fail(n < 1 ? SB_ERR_INVALID_INPUT : SB_ERR_LIMIT, WHO ": %llu kde rows", (unsigned long long)n);
    if (n * per != (uint64_t)(r->end - r->pos))
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": the kde payload of %llu x %d needs %llu more bytes, %zu are left",
                       (unsigned long long)n, (int)m->num_features, (unsigned long long)(n * per), r->end - r->pos);
    sb_kde *k = sb_kde_alloc((int64_t)n, m->num_features, f[2]);
    if (!k) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory for %llu kde rows", (unsigned long long)n);
    m->kde = k;
    k->kernel = f[0], k->bw_rule = f[1], k->bandwidth = bw;
    m->num_class = 1;
    if ((st = read_f32s(r, k->x, (size_t)n * (size_t)m->num_features, "the rows")) != SB_OK) return st;
    if (k->w && (st = read_f32s(r, k->w, (size_t)n, "the weights")) != SB_OK) return st;
    return SB_OK;
}

/* The umap payload (docs/model-format.md, "UMAP"): the parameters are
 * checked (sb_umap_state_check) before the rows' count sizes anything. */
static sb_status parse_umap_payload(reader *r, sb_model *m) {
    sb_status st;
    int32_t f[6];
    float g[8];
    static const char *const names[6] = {"n_neighbors", "n_components", "the metric", "n_epochs",
                                         "negative_sample_rate", "init"};
    for (int i = 0; i < 6; i++)
        if ((st = read_i32(r, names[i], &f[i])) != SB_OK) return st;
    if ((st = read_f32s(r, g, 8, "the umap parameters and a, b")) != SB_OK) return st;
    sb_umap probe;
    memset(&probe, 0, sizeof probe);
    probe.n_neighbors = f[0], probe.ncomp = f[1], probe.metric = f[2], probe.n_epochs = f[3], probe.neg_rate = f[4];
    probe.init = f[5];
    probe.min_dist = g[0], probe.spread = g[1], probe.lr = g[2], probe.mix = g[3], probe.local_conn = g[4];
    probe.gamma = g[5], probe.a = g[6], probe.b = g[7];
    if ((st = read_u64(r, "the seed", &probe.seed)) != SB_OK) return st;
    const char *why = sb_umap_state_check(&probe);
    if (why) return sb_fail(SB_ERR_INVALID_INPUT, WHO ": umap: %s", why);
    uint64_t n;
    if ((st = read_u64(r, "the row count", &n)) != SB_OK) return st;
    const uint64_t per = 4 * ((uint64_t)m->num_features + (uint64_t)probe.ncomp);
    if (n < 2 || n > MF_MAX_FILE / per)
        return sb_fail(n < 2 ? SB_ERR_INVALID_INPUT : SB_ERR_LIMIT, WHO ": %llu umap rows (at least 2)",
                       (unsigned long long)n);
    if (n * per != (uint64_t)(r->end - r->pos))
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": the umap payload of %llu rows x (%d features + %d components) needs "
                       "%llu more bytes, %zu are left", (unsigned long long)n, (int)m->num_features, (int)probe.ncomp,
                       (unsigned long long)(n * per), r->end - r->pos);
    sb_umap *u = sb_umap_alloc((int64_t)n, m->num_features, probe.ncomp);
    if (!u) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory for %llu umap rows", (unsigned long long)n);
    float *x = u->x, *emb = u->emb;
    *u = probe;
    u->n = (int64_t)n, u->x = x, u->emb = emb;
    m->umap = u;
    m->num_class = 1;
    if ((st = read_f32s(r, u->x, (size_t)n * (size_t)m->num_features, "the training rows")) != SB_OK) return st;
    return read_f32s(r, u->emb, (size_t)n * (size_t)probe.ncomp, "the embedding");
}

/* The spectral payload (docs/model-format.md, "SPEC"). */
static sb_status parse_spectral_payload(reader *r, sb_model *m) {
    sb_status st;
    int32_t f[2];
    static const char *const names[2] = {"the affinity", "the cluster count"};
    for (int i = 0; i < 2; i++)
        if ((st = read_i32(r, names[i], &f[i])) != SB_OK) return st;
    uint64_t n;
    if ((st = read_u64(r, "the row count", &n)) != SB_OK) return st;
    if (n < 2 || n > SB_LINALG_MAX_EIGH_N)
        return sb_fail(n < 2 ? SB_ERR_INVALID_INPUT : SB_ERR_LIMIT, WHO ": %llu spectral rows (2..%d)",
                       (unsigned long long)n, SB_LINALG_MAX_EIGH_N);
    if (4 * n != (uint64_t)(r->end - r->pos))
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": the spectral payload of %llu rows needs %llu more bytes, %zu are left",
                       (unsigned long long)n, (unsigned long long)(4 * n), r->end - r->pos);
    sb_spectral *g = sb_spectral_alloc((int64_t)n);
    if (!g) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory for %llu rows", (unsigned long long)n);
    m->spectral = g;
    g->affinity = f[0], g->n_clusters = f[1];
    m->num_class = 1;
    for (uint64_t i = 0; i < n; i++)
        if ((st = read_i32(r, "a label", &g->labels[i])) != SB_OK) return st;
    return SB_OK;
}

/* Counts cnt[0..na) of f64 values into dst[0..na) of series i, the bytes
 * already checked present; a NaN of any bits but the writer's one spelling
 * is refused (a file the writer could not have written). */
static sb_status read_series_f64s(reader *r, double *const *dst, const uint64_t *cnt, int na, uint64_t i) {
    for (int a = 0; a < na; a++)
        for (uint64_t j = 0; j < cnt[a]; j++) {
            const uint64_t u = get_u64(r->p + r->pos);
            if ((u & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull && u != 0x7FF8000000000000ull)
                return sb_fail(SB_ERR_INVALID_INPUT,
                               WHO ": series %llu holds a NaN of bits %016llx; the writer writes every NaN as "
                               "7ff8000000000000 (one spelling)", (unsigned long long)i, (unsigned long long)u);
            r->pos += 8;
            memcpy(&dst[a][j], &u, 8);
        }
    return SB_OK;
}

/* A series batch's count ns (ARIMA, exponential smoothing): at least one,
 * and no more than the bytes left hold when each series takes at least least
 * bytes (so nothing is allocated for series the file cannot hold). */
static sb_status check_series_count(const reader *r, uint64_t ns, uint64_t least) {
    if (ns < 1 || ns > (uint64_t)(r->end - r->pos) / least)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": %llu series in %zu bytes", (unsigned long long)ns, r->end - r->pos);
    return SB_OK;
}

/* Series i's head in a series batch: its length *n (at least min_n, at most
 * INT32_MAX, with the bytes left holding its nc i32 counts and words0 + 2 n
 * f64 values: the fitted values and residuals are the 2 n) and the counts
 * into c. */
static sb_status read_series_head(reader *r, uint64_t i, uint64_t min_n, uint64_t words0, int32_t *c, int nc,
                                  uint64_t *n) {
    sb_status st = read_u64(r, "a series' length", n);
    if (st != SB_OK) return st;
    if (*n < min_n || *n > INT32_MAX || 4 * (uint64_t)nc + 8 * (words0 + 2 * *n) > (uint64_t)(r->end - r->pos))
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": series %llu of %llu values in %zu bytes", (unsigned long long)i,
                       (unsigned long long)*n, r->end - r->pos);
    for (int j = 0; j < nc; j++)
        if ((st = read_i32(r, "a series' counts", &c[j])) != SB_OK) return st;
    return SB_OK;
}

/* A series batch's end: no byte after the last series. */
static sb_status series_payload_end(const reader *r) {
    return (uint64_t)(r->end - r->pos) == 0
               ? SB_OK
               : sb_fail(SB_ERR_INVALID_INPUT, WHO ": %zu bytes after the last series", r->end - r->pos);
}

/* The ARIMA payload (docs/model-format.md, "ARIM"): the specification
 * checked as the parser checks it, every count against the bytes left before
 * anything sized by it is allocated; the model check (check_arima) follows. */
static sb_status parse_arima_payload(reader *r, sb_model *m) {
    sb_status st;
    int32_t hd[9];
    for (int i = 0; i < 9; i++)
        if ((st = read_i32(r, "the ARIMA specification", &hd[i])) != SB_OK) return st;
    arima_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.p = hd[0], sp.d = hd[1], sp.q = hd[2], sp.P = hd[3], sp.D = hd[4], sp.Q = hd[5], sp.s = hd[6], sp.trend = hd[7];
    if (!sb_arima_spec_valid(&sp) || (hd[8] != 0 && hd[8] != sb_arima_npar(&sp)))
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": ARIMA(%d,%d,%d)(%d,%d,%d,%d) trend %d with %d given parameters is "
                       "not a model this library fits", (int)hd[0], (int)hd[1], (int)hd[2], (int)hd[3], (int)hd[4],
                       (int)hd[5], (int)hd[6], (int)hd[7], (int)hd[8]);
    sp.ngiven = hd[8];
    if ((st = need(r, 8 * (size_t)sp.ngiven + 8, "the given parameters and the series count")) != SB_OK) return st;
    for (int32_t i = 0; i < sp.ngiven; i++) {
        const uint64_t u = get_u64(r->p + r->pos);
        memcpy(&sp.given[i], &u, 8);
        r->pos += 8;
    }
    const uint64_t ns = get_u64(r->p + r->pos);
    r->pos += 8;
    if ((st = check_series_count(r, ns, 8 + 12 + 8 * arima_series_words(&sp, 0))) != SB_OK) return st;
    sb_arima *e = sb_calloc(1, sizeof *e);
    if (e) e->fits = sb_calloc((size_t)ns, sizeof(arima_fit));
    if (!e || !e->fits) {
        sb_arima_release(e);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory for %llu series", (unsigned long long)ns);
    }
    m->arima = e;
    e->spec = sp;
    e->nseries = (int64_t)ns;
    m->num_class = 1;
    const int32_t np = sb_arima_npar(&sp), rd = sb_arima_state_dim(&sp), L = sb_arima_diff_lag(&sp);
    for (uint64_t i = 0; i < ns; i++) {
        arima_fit *f = &e->fits[i];
        uint64_t n;
        int32_t c[3];
        if ((st = read_series_head(r, i, (uint64_t)L + 2, arima_series_words(&sp, 0), c, 3, &n)) != SB_OK) return st;
        f->n = (int64_t)n, f->nobs = (int64_t)n - L;
        f->nfev = c[0], f->nit = c[1], f->converged = c[2];
        f->fitted = sb_malloc(sizeof(double) * (size_t)n);
        f->resid = sb_malloc(sizeof(double) * (size_t)n);
        f->a = sb_malloc(sizeof(double) * (size_t)rd);
        f->P = sb_malloc(sizeof(double) * (size_t)rd * (size_t)rd);
        f->ylast = sb_malloc(sizeof(double) * ((size_t)L + 1));
        if (!f->fitted || !f->resid || !f->a || !f->P || !f->ylast)
            return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory for series %llu", (unsigned long long)i);
        double crit[4];
        double *const dst[8] = {f->par, crit, f->fitted, f->resid, f->a, f->P, f->ylast};
        const uint64_t cnt[8] = {(uint64_t)np, 4, n, n, (uint64_t)rd, (uint64_t)rd * (uint64_t)rd, (uint64_t)L};
        if ((st = read_series_f64s(r, dst, cnt, 7, i)) != SB_OK) return st;
        f->llf = crit[0], f->aic = crit[1], f->aicc = crit[2], f->bic = crit[3];
    }
    return series_payload_end(r);
}

/* The exponential smoothing payload (docs/model-format.md, "ETSM"): every
 * count checked against the bytes left before anything sized by it is
 * allocated. */
static sb_status parse_ets_payload(reader *r, sb_model *m) {
    sb_status st;
    int32_t f4[4];
    static const char *const names[4] = {"the trend", "the damping flag", "the season", "the period"};
    for (int i = 0; i < 4; i++)
        if ((st = read_i32(r, names[i], &f4[i])) != SB_OK) return st;
    uint64_t ns;
    if ((st = read_u64(r, "the series count", &ns)) != SB_OK) return st;
    if (f4[2] < ETS_NONE || f4[2] > ETS_MUL || f4[3] < 1 || f4[3] > SB_ETS_MAX_PERIOD)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": exponential smoothing of season %d, period %d", (int)f4[2], (int)f4[3]);
    const int32_t err = f4[0] & 0x100 ? ETS_MUL : ETS_NONE;
    f4[0] = f4[0] & ~0x100;
    const ets_spec sp = {f4[0], f4[1], f4[2], f4[3], {0, 0, 0, 0}, 0, err};
    const uint64_t w = ets_state_count(&sp);
    if ((st = check_series_count(r, ns, 8 + 16 + 8 * (4 + 2 * w + 4 + 4))) != SB_OK) return st;
    sb_ets *e = sb_calloc(1, sizeof *e);
    if (e) e->fits = sb_calloc((size_t)ns, sizeof(ets_fit));
    if (!e || !e->fits) {
        sb_ets_release(e);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory for %llu series", (unsigned long long)ns);
    }
    m->ets = e;
    e->spec = sp;
    e->nseries = (int64_t)ns;
    m->num_class = 1;
    for (uint64_t i = 0; i < ns; i++) {
        ets_fit *f = &e->fits[i];
        uint64_t n;
        int32_t c[4];
        if ((st = read_series_head(r, i, 2, 4 + 2 * w + 4, c, 4, &n)) != SB_OK) return st;
        f->n = (int64_t)n;
        f->k = c[0], f->nfev = c[1], f->nit = c[2], f->converged = c[3];
        f->init = sb_malloc(sizeof(double) * (size_t)(2 + sp.m));
        f->last = sb_malloc(sizeof(double) * (size_t)(2 + sp.m));
        f->fitted = sb_malloc(sizeof(double) * (size_t)n);
        f->resid = sb_malloc(sizeof(double) * (size_t)n);
        if (!f->init || !f->last || !f->fitted || !f->resid)
            return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory for series %llu", (unsigned long long)i);
        double crit[4];
        double *const dst[6] = {f->par, f->init, f->last, crit, f->fitted, f->resid};
        const uint64_t cnt[6] = {SB_ETS_NPAR, w, w, 4, n, n};
        if ((st = read_series_f64s(r, dst, cnt, 6, i)) != SB_OK) return st;
        f->sse = crit[0], f->aic = crit[1], f->aicc = crit[2], f->bic = crit[3];
        if (!sp.seasonal) f->init[2] = f->last[2] = 0.0; /* the unused slot of a period of 1 */
    }
    return series_payload_end(r);
}

/* One f64 of the gaussian process payload (one NaN spelling). */
static sb_status read_gp_f64(reader *r, double *v) {
    sb_status st = need(r, 8, "a gaussian process value");
    if (st != SB_OK) return st;
    const uint64_t u = get_u64(r->p + r->pos);
    if ((u & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull && u != 0x7FF8000000000000ull)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": a gaussian process value holds a NaN of bits %016llx", (unsigned long long)u);
    r->pos += 8;
    memcpy(v, &u, 8);
    return SB_OK;
}

/* The gaussian process payload (docs/model-format.md, "GPRM"): the kernel
 * checked, every count against the bytes left before anything is allocated;
 * then L_ is recomputed from the kernel and data and the stored log marginal
 * likelihood and alpha_ must come out bit for bit. */
static sb_status parse_gp_payload(reader *r, sb_model *m) {
    sb_status st;
    int32_t h[4];
    for (int i = 0; i < 4; i++)
        if ((st = read_i32(r, "the kernel's counts", &h[i])) != SB_OK) return st;
    if (h[0] < 1 || h[0] > GP_MAX_NODES || h[2] < 1 || h[2] > GP_MAX_PARAMS || h[3] != 0)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": a gaussian process kernel of %d nodes and %d parameters", (int)h[0],
                       (int)h[2]);
    sb_gp *g = sb_calloc(1, sizeof *g);
    if (!g) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    m->gp = g;
    m->num_class = 1;
    g->k.nnodes = h[0], g->k.root = h[1], g->k.npar = h[2];
    for (int32_t v = 0; v < g->k.nnodes; v++) {
        int32_t f[7];
        for (int j = 0; j < 7; j++)
            if ((st = read_i32(r, "a kernel node", &f[j])) != SB_OK) return st;
        gp_node *nd = &g->k.node[v];
        nd->kind = f[0], nd->a = f[1], nd->b = f[2], nd->p0 = f[3], nd->p1 = f[4], nd->nls = f[5], nd->nu2 = f[6];
    }
    for (int32_t p = 0; p < g->k.npar; p++) {
        if ((st = read_gp_f64(r, &g->k.logv[p])) != SB_OK || (st = read_gp_f64(r, &g->k.lo[p])) != SB_OK ||
            (st = read_gp_f64(r, &g->k.hi[p])) != SB_OK || (st = read_i32(r, "a fixed flag", &g->k.fixed[p])) != SB_OK)
            return st;
    }
    uint64_t dims[3];
    for (int i = 0; i < 3; i++) {
        if ((st = read_u64(r, "the gaussian process's shape", &dims[i])) != SB_OK) return st;
    }
    if (dims[0] < 1 || dims[0] > 100000 || dims[1] < 1 || dims[1] > 1000000 || dims[2] < 1 || dims[2] > 100000 ||
        dims[1] != (uint64_t)m->num_features)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": a gaussian process of %llu rows, %llu features (the model %d), %llu targets",
                       (unsigned long long)dims[0], (unsigned long long)dims[1], (int)m->num_features,
                       (unsigned long long)dims[2]);
    g->n = (int64_t)dims[0], g->d = (int64_t)dims[1], g->t = (int64_t)dims[2];
    const char *why = sb_gp_kernel_check(&g->k, g->d);
    if (why) return sb_fail(SB_ERR_INVALID_INPUT, WHO ": the gaussian process kernel: %s", why);
    const uint64_t vals = dims[0] * dims[1] + 2 * dims[0] * dims[2] + 2 * dims[2];
    if (vals > ((uint64_t)(r->end - r->pos) - 44u) / 8 || (uint64_t)(r->end - r->pos) < 44u)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": a gaussian process of %llu values in %zu bytes",
                       (unsigned long long)vals, r->end - r->pos);
    if ((st = read_gp_f64(r, &g->alpha)) != SB_OK) return st;
    int32_t o[5];
    for (int j = 0; j < 5; j++)
        if ((st = read_i32(r, "the gaussian process's options", &o[j])) != SB_OK) return st;
    g->normalize_y = o[0], g->optimize = o[1], g->restarts = o[2], g->nit = o[3], g->nfev = o[4];
    if ((st = read_u64(r, "the seed", &g->seed)) != SB_OK) return st;
    double lml;
    if ((st = read_gp_f64(r, &lml)) != SB_OK) return st;
    g->X = sb_malloc(sizeof(double) * (size_t)(g->n * g->d));
    g->y = sb_malloc(sizeof(double) * (size_t)(g->n * g->t));
    g->ymean = sb_malloc(sizeof(double) * (size_t)g->t);
    g->ystd = sb_malloc(sizeof(double) * (size_t)g->t);
    g->a = sb_malloc(sizeof(double) * (size_t)(g->n * g->t));
    if (!g->X || !g->y || !g->ymean || !g->ystd || !g->a)
        return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory for a gaussian process of %lld rows", (long long)g->n);
    double *const dst[5] = {g->X, g->y, g->ymean, g->ystd, g->a};
    const int64_t cnt[5] = {g->n * g->d, g->n * g->t, g->t, g->t, g->n * g->t};
    for (int a = 0; a < 5; a++)
        for (int64_t j = 0; j < cnt[a]; j++)
            if ((st = read_gp_f64(r, &dst[a][j])) != SB_OK) return st;
    if ((uint64_t)(r->end - r->pos) != 0)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": %zu bytes after the gaussian process", r->end - r->pos);
    if ((st = check_gp(m, SB_ERR_INVALID_INPUT, WHO)) != SB_OK) return st;
    double *stored = g->a;
    g->a = NULL;
    st = sb_gp_refactor(g);
    if (st == SB_OK) {
        uint64_t u1, u2;
        memcpy(&u1, &lml, 8), memcpy(&u2, &g->lml, 8);
        int same = u1 == u2 && memcmp(stored, g->a, sizeof(double) * (size_t)(g->n * g->t)) == 0;
        if (!same)
            st = sb_fail(SB_ERR_INVALID_INPUT, WHO ": the gaussian process's stored alpha_ and log marginal likelihood "
                         "are not what its kernel and data give (recomputed on reading)");
    } else if (st != SB_ERR_OUT_OF_MEMORY) {
        char why[512];
        snprintf(why, sizeof why, "%s", sb_last_error());
        st = sb_fail(SB_ERR_INVALID_INPUT, WHO ": the gaussian process's kernel matrix does not factor: %s", why);
    }
    sb_free(stored);
    return st;
}

/* The mlp payload (docs/model-format.md, "MLPN"): the options and widths
 * checked, the parameters' count against the bytes left before anything is
 * allocated, then the whole network by sb_mlp_check. */
static sb_status parse_mlp_payload(reader *r, sb_model *m) {
    sb_status st;
    int32_t h[16];
    for (int i = 0; i < 16; i++)
        if ((st = read_i32(r, "the mlp's options", &h[i])) != SB_OK) return st;
    if (h[1] < 0 || h[1] > MLP_MAX_HIDDEN || h[12] != h[1] + 1 || h[13] < 1 || h[13] > MLP_MAX_ITER || h[14] || h[15])
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": an mlp of %d hidden layers, %d layers and %d epochs", (int)h[1],
                       (int)h[12], (int)h[13]);
    sb_mlp *net = sb_calloc(1, sizeof *net);
    if (!net) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    m->mlp = net;
    m->num_class = 1;
    mlp_opts *o = &net->o;
    o->classifier = h[0], o->nhidden = h[1], o->activation = h[2], o->solver = h[3], o->learning_rate = h[4];
    o->max_iter = h[5], o->shuffle = h[6], o->early_stopping = h[7], o->nesterovs_momentum = h[8];
    o->n_iter_no_change = h[9], net->out_act = h[10], net->multilabel = h[11], net->nlayers = h[12], net->n_iter = h[13];
    uint64_t u[4];
    for (int i = 0; i < 4; i++)
        if ((st = read_u64(r, "the mlp's counts", &u[i])) != SB_OK) return st;
    if (u[0] > (1ull << 40) || u[2] > MLP_MAX_WIDTH || u[3] < 1 || u[3] > (1ull << 62))
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": an mlp's batch_size, classes or t_");
    o->batch_size = (int64_t)u[0], o->seed = u[1], net->nclasses = (int64_t)u[2], net->t = (int64_t)u[3];
    double d[9];
    for (int i = 0; i < 9; i++)
        if ((st = read_gp_f64(r, &d[i])) != SB_OK) return st;
    o->alpha = d[0], o->learning_rate_init = d[1], o->power_t = d[2], o->tol = d[3], o->validation_fraction = d[4];
    o->momentum = d[5], o->beta_1 = d[6], o->beta_2 = d[7], o->epsilon = d[8];
    uint64_t params = 0;
    for (int32_t l = 0; l <= net->nlayers; l++) {
        uint64_t w;
        if ((st = read_u64(r, "a layer's width", &w)) != SB_OK) return st;
        if (w < 1 || w > MLP_MAX_WIDTH) return sb_fail(SB_ERR_INVALID_INPUT, WHO ": an mlp layer of width %llu", (unsigned long long)w);
        net->size[l] = (int64_t)w;
        if (l > 0) params += (uint64_t)net->size[l - 1] * w + w;
        if (l > 0 && l <= o->nhidden) o->hidden[l - 1] = (int64_t)w;
    }
    const uint64_t left = (uint64_t)(r->end - r->pos);
    const uint64_t want = 24 + 8 * (uint64_t)net->n_iter * (o->early_stopping ? 2u : 1u) + 4 * params;
    if (want != left)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": an mlp of %llu parameters and %d epochs in %llu bytes (want %llu)",
                       (unsigned long long)params, (int)net->n_iter, (unsigned long long)left, (unsigned long long)want);
    if ((st = read_gp_f64(r, &net->loss)) != SB_OK || (st = read_gp_f64(r, &net->best_loss)) != SB_OK ||
        (st = read_gp_f64(r, &net->best_val)) != SB_OK)
        return st;
    if (!(net->curve = sb_malloc(sizeof(double) * (size_t)net->n_iter)) ||
        (o->early_stopping && !(net->val_scores = sb_malloc(sizeof(double) * (size_t)net->n_iter))))
        return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    for (int32_t i = 0; i < net->n_iter; i++)
        if ((st = read_gp_f64(r, &net->curve[i])) != SB_OK) return st;
    for (int32_t i = 0; net->val_scores && i < net->n_iter; i++)
        if ((st = read_gp_f64(r, &net->val_scores[i])) != SB_OK) return st;
    if ((st = sb_mlp_alloc(net)) != SB_OK) return st;
    for (int32_t l = 0; l < net->nlayers; l++) {
        if ((st = read_f32s(r, net->W[l], (size_t)(net->size[l] * net->size[l + 1]), "an mlp's coefs_")) != SB_OK ||
            (st = read_f32s(r, net->b[l], (size_t)net->size[l + 1], "an mlp's intercepts_")) != SB_OK)
            return st;
    }
    return check_mlp(m, SB_ERR_INVALID_INPUT, WHO);
}

/* The lm payload (docs/model-format.md, "BLM1"): the shapes checked, the
 * parameter count derived from them and compared with the stored one and
 * with the bytes left before anything is allocated, then the whole state by
 * sb_lm_check. */
static sb_status parse_lm_payload(reader *r, sb_model *m) {
    sb_status st;
    int32_t h[8];
    for (int i = 0; i < 8; i++)
        if ((st = read_i32(r, "the lm's shapes", &h[i])) != SB_OK) return st;
    if (h[0] < 1 || h[0] > LM_MAX_LAYERS || h[1] < 1 || h[1] > LM_MAX_WIDTH || h[2] < 1 || h[1] % h[2] || h[3] < 2 ||
        h[3] > LM_MAX_CONTEXT || h[4] < 1 || h[4] > LM_MAX_BATCH || h[5] < 1 || h[5] > 100000 ||
        h[6] != 5 + LM_PER_BLOCK * h[0] || h[7])
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": an lm of %d layers, width %d, %d heads, context %d, batch %d",
                       (int)h[0], (int)h[1], (int)h[2], (int)h[3], (int)h[4]);
    uint64_t u[6];
    for (int i = 0; i < 6; i++)
        if ((st = read_u64(r, "the lm's counts", &u[i])) != SB_OK) return st;
    const uint64_t d = (uint64_t)h[1];
    const uint64_t params = 2 * 256 * d + (uint64_t)h[3] * d + 2 * d + (uint64_t)h[0] * (12 * d * d + 13 * d);
    if (u[1] > LM_MAX_STEPS || u[4] > u[1] + 1 || u[5] != params || (u[1] > 0 && u[2] == 0))
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": an lm of step %llu, %llu held-out losses and %llu parameters "
                       "(its shapes make %llu)", (unsigned long long)u[1], (unsigned long long)u[4],
                       (unsigned long long)u[5], (unsigned long long)params);
    double o[8];
    for (int i = 0; i < 8; i++)
        if ((st = read_gp_f64(r, &o[i])) != SB_OK) return st;
    const uint64_t left = (uint64_t)(r->end - r->pos), want = 4 * u[1] + 12 * u[4] + 12 * params;
    if (want != left)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": an lm of %llu parameters and %llu steps in %llu bytes (want %llu)",
                       (unsigned long long)params, (unsigned long long)u[1], (unsigned long long)left,
                       (unsigned long long)want);
    sb_lm *lm = sb_calloc(1, sizeof *lm);
    if (!lm) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    m->lm = lm;
    m->num_class = 1;
    lm_opts *op = &lm->o;
    op->n_layer = h[0], op->d_model = h[1], op->n_head = h[2], op->context = h[3], op->batch_size = h[4];
    op->eval_batches = h[5];
    op->seed = u[0], op->learning_rate = o[0], op->beta_1 = o[1], op->beta_2 = o[2], op->epsilon = o[3];
    op->weight_decay = o[4], op->dropout = o[5], op->clip_norm = o[6], op->validation_fraction = o[7];
    if ((st = sb_lm_alloc(lm)) != SB_OK) return st;
    lm->corpus_len = u[2], lm->corpus_hash = u[3];
    for (uint64_t i = 0; i < u[1]; i++) {
        float x;
        if ((st = read_f32s(r, &x, 1, "an lm's training loss")) != SB_OK) return st;
        lm->step = (int64_t)i;
        if ((st = sb_lm_push_loss(lm, x)) != SB_OK) return st;
    }
    lm->step = (int64_t)u[1];
    for (uint64_t i = 0; i < u[4]; i++) {
        uint64_t at;
        float x;
        if ((st = read_u64(r, "an lm's held-out step", &at)) != SB_OK || (st = read_f32s(r, &x, 1, "an lm's held-out loss")) != SB_OK)
            return st;
        if (at > u[1]) return sb_fail(SB_ERR_INVALID_INPUT, WHO ": an lm's held-out step %llu after its step %llu",
                                      (unsigned long long)at, (unsigned long long)u[1]);
        if ((st = sb_lm_push_eval(lm, (int64_t)at, x)) != SB_OK) return st;
    }
    if ((st = read_f32s(r, lm->w, (size_t)params, "an lm's parameters")) != SB_OK ||
        (st = read_f32s(r, lm->m, (size_t)params, "an lm's first moments")) != SB_OK ||
        (st = read_f32s(r, lm->v, (size_t)params, "an lm's second moments")) != SB_OK)
        return st;
    return check_lm(m, SB_ERR_INVALID_INPUT, WHO);
}

/* The dbscan payload (docs/model-format.md, "DBSC"). */
static sb_status parse_dbscan_payload(reader *r, sb_model *m) {
    sb_status st;
    int32_t f[3];
    static const char *const names[3] = {"min_samples", "the metric", "the cluster count"};
    for (int i = 0; i < 3; i++)
        if ((st = read_i32(r, names[i], &f[i])) != SB_OK) return st;
    float eps;
    if ((st = read_f32s(r, &eps, 1, "eps")) != SB_OK) return st;
    if ((st = need(r, 16, "the row counts")) != SB_OK) return st;
    const uint64_t n = get_u64(r->p + r->pos), nc = get_u64(r->p + r->pos + 8);
    r->pos += 16;
    const uint64_t per = 4 * (uint64_t)m->num_features + 8;
    if (n < 1 || n > MF_MAX_FILE / 4 || nc > n || nc > MF_MAX_FILE / per)
        return sb_fail(n > MF_MAX_FILE / 4 ? SB_ERR_LIMIT : SB_ERR_INVALID_INPUT, WHO ": dbscan rows %llu, core rows %llu",
                       (unsigned long long)n, (unsigned long long)nc);
    if (4 * n + nc * per != (uint64_t)(r->end - r->pos))
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": the dbscan payload of %llu rows and %llu core rows needs %llu more "
                       "bytes, %zu are left", (unsigned long long)n, (unsigned long long)nc,
                       (unsigned long long)(4 * n + nc * per), r->end - r->pos);
    sb_dbscan *b = sb_dbscan_alloc((int64_t)n, (int64_t)nc, m->num_features);
    if (!b) return sb_fail(SB_ERR_OUT_OF_MEMORY, WHO ": out of memory for %llu dbscan rows", (unsigned long long)n);
    m->dbscan = b;
    b->min_samples = f[0], b->metric = f[1], b->n_clusters = f[2], b->eps = eps;
    m->num_class = 1;
    for (uint64_t i = 0; i < n; i++) {
        if ((st = read_i32(r, "a label", &b->labels[i])) != SB_OK) return st;
    }
    for (uint64_t i = 0; i < nc; i++) {
        b->core[i] = (int64_t)get_u64(r->p + r->pos);
        r->pos += 8;
    }
    return read_f32s(r, b->components, (size_t)nc * (size_t)m->num_features, "the core rows");
}

/* A payload tag as text for a message: its four bytes, each one that is not
 * printable ASCII written as \xHH. */
static void tag_text(const uint8_t *tag, char out[17]) {
    size_t k = 0;
    for (size_t i = 0; i < MF_TAG_LEN; i++) {
        if (tag[i] >= 0x20 && tag[i] < 0x7f && tag[i] != '\\' && tag[i] != '\'') out[k++] = (char)tag[i];
        else k += (size_t)snprintf(out + k, 5, "\\x%02x", tag[i]);
    }
    out[k] = '\0';
}

/* A version-2 or -3 body (digest already verified) into m: the common fields
 * (version 3: and the class labels), then
 * the payload's tag and length, then the family's payload. A family this
 * library has no payload for is refused by name before its payload is read. */
static sb_status parse_v2(reader *r, sb_model *m, uint32_t version) {
    sb_status st;
    if ((st = read_i32(r, "the family", &m->family)) != SB_OK) return st;
    if ((st = read_i32(r, "the numeric mode", &m->numeric_mode)) != SB_OK) return st;
    if ((st = read_num_features(r, m)) != SB_OK) return st;
    if ((st = read_str(r, MF_MAX_STRING, "params", &m->params)) != SB_OK) return st;
    if ((st = read_names(r, m)) != SB_OK) return st;
    if (version == MF_VERSION_LABELS && (st = read_labels(r, m)) != SB_OK) return st;
    if (version == MF_VERSION_CATS) {
        if ((st = need(r, 1, "the labels flag")) != SB_OK) return st;
        const uint8_t flag = r->p[r->pos++];
        if (flag > 1) return sb_fail(SB_ERR_INVALID_INPUT, WHO ": the labels flag is %d, not 0 or 1", (int)flag);
        if (flag && (st = read_labels(r, m)) != SB_OK) return st;
        if ((st = read_catnames(r, m)) != SB_OK) return st;
    }
    if ((st = need(r, MF_TAG_LEN + 8, "the payload's tag and length")) != SB_OK) return st;
    const uint8_t *tag = r->p + r->pos;
    uint64_t plen = get_u64(r->p + r->pos + MF_TAG_LEN);
    r->pos += MF_TAG_LEN + 8;
    char shown[17];
    tag_text(tag, shown);
    if (plen != (uint64_t)(r->end - r->pos))
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": payload '%s' says %llu bytes, but %zu are left before the digest",
                       shown, (unsigned long long)plen, r->end - r->pos);
    const char *want = payload_tag(m->family);
    if (!want)
        return sb_fail(SB_ERR_INVALID_INPUT,
                       WHO ": family %d (%s, payload '%s') is not one this library reads (it reads gbdt, "
                       "random_forest, extra_trees, isolation_forest, kmeans, linear, knn, dbscan, agglomerative, spectral, kde, ets, arima, svm, gp, umap, mlp and lm); a newer samebits may",
                       (int)m->family, sb_family_name((sb_family)m->family), shown);
    if (memcmp(tag, want, MF_TAG_LEN) != 0)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": family %s carries payload '%s', not '%s'",
                       sb_family_name((sb_family)m->family), shown, want);
    if (m->family == SB_FAMILY_KMEANS) return parse_kmeans_payload(r, m);
    if (m->family == SB_FAMILY_KNN) return parse_knn_payload(r, m);
    if (m->family == SB_FAMILY_DBSCAN) return parse_dbscan_payload(r, m);
    if (m->family == SB_FAMILY_AGGLOMERATIVE) return parse_agglo_payload(r, m);
    if (m->family == SB_FAMILY_SPECTRAL) return parse_spectral_payload(r, m);
    if (m->family == SB_FAMILY_KDE) return parse_kde_payload(r, m);
    if (m->family == SB_FAMILY_ETS) return parse_ets_payload(r, m);
    if (m->family == SB_FAMILY_ARIMA) return parse_arima_payload(r, m);
    if (m->family == SB_FAMILY_SVM) return parse_svm_payload(r, m);
    if (m->family == SB_FAMILY_GP) return parse_gp_payload(r, m);
    if (m->family == SB_FAMILY_UMAP) return parse_umap_payload(r, m);
    if (m->family == SB_FAMILY_MLP) return parse_mlp_payload(r, m);
    if (m->family == SB_FAMILY_LM) return parse_lm_payload(r, m);
    if (m->family != SB_FAMILY_GBDT && version == MF_VERSION_CATS)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": version 4 holds gradient boosting models only, not %s",
                       sb_family_name((sb_family)m->family));
    return m->family == SB_FAMILY_LINEAR ? parse_linear_payload(r, m) : parse_tree_payload(r, m, version == MF_VERSION_CATS);
}

/* Parse the body of a file of version (digest already verified) into m, then
 * check the model with the writer's rules. */
static sb_status parse(reader *r, uint32_t version, sb_model *m) {
    r->pos = MF_HEADER_LEN;
    sb_status st = read_profile(r, m);
    if (st == SB_OK) st = version == 1 ? parse_v1(r, m) : parse_v2(r, m, version);
    if (st == SB_OK) st = check_model(m, SB_ERR_INVALID_INPUT, WHO);
    if (st == SB_OK && m->knn) st = sb_knn_prepare(m->knn, m->num_features); /* the screen, as the fit derives it */
    return st;
}

/* Check the frame: magic, version, stored length against len (which must also
 * be within the file limit), and the digest; nothing in the body is read
 * before the digest matches. *version gets the file's version (1 or 2). */
static sb_status check_frame(const uint8_t *buf, size_t len, uint32_t *version_out) {
    if (len < MF_MAGIC_LEN || memcmp(buf, MF_MAGIC, MF_MAGIC_LEN) != 0)
        return sb_fail(SB_ERR_INVALID_INPUT, "not a samebits model (no \"SBMODEL\" magic at its start)");
    if (len < MF_HEADER_LEN)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": truncated: %zu bytes, shorter than the %u-byte header", len,
                       MF_HEADER_LEN);
    uint32_t version = get_u32(buf + MF_MAGIC_LEN);
    if (version > MF_VERSION_MAX)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": format version %lu is newer than this library's %u",
                       (unsigned long)version, MF_VERSION_MAX);
    if (version < 1)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": format version %lu is not a valid version",
                       (unsigned long)version);
    uint64_t stored = get_u64(buf + 12);
    if (stored > len)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": truncated: its header says %llu bytes, only %zu are there",
                       (unsigned long long)stored, len);
    if (stored < len)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": %llu bytes appended after the %llu its header says",
                       (unsigned long long)(len - stored), (unsigned long long)stored);
    if ((uint64_t)len > MF_MAX_FILE)
        return sb_fail(SB_ERR_LIMIT, WHO ": %zu bytes, more than the format's limit of %llu", len,
                       (unsigned long long)MF_MAX_FILE);
    const size_t min_len = version == 1 ? MF_MIN_FILE_V1 : version == 2 ? MF_MIN_FILE_V2
                         : version == 3 ? MF_MIN_FILE_V3 : MF_MIN_FILE_V4;
    if (len < min_len)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": %zu bytes, shorter than the smallest model of version %lu (%zu)",
                       len, (unsigned long)version, min_len);
    uint8_t digest[MF_DIGEST_LEN];
    sb_sha256_ctx c;
    sb_sha256_init(&c);
    sb_sha256_update(&c, buf, len - MF_DIGEST_LEN);
    sb_sha256_final(&c, digest);
    if (memcmp(digest, buf + len - MF_DIGEST_LEN, MF_DIGEST_LEN) != 0)
        return sb_fail(SB_ERR_INVALID_INPUT, WHO ": digest mismatch (the file is corrupted or was edited)");
    *version_out = version;
    return SB_OK;
}

/* Read a model from buf[len], validating everything (docs/model-format.md,
 * "Reading"). On success *out owns a fresh model; on any error *out is NULL,
 * nothing is allocated, and the message names the problem. */
sb_status sb_model_from_bytes(const uint8_t *buf, size_t len, sb_model **out) {
    sb_clear_error();
    if (out) *out = NULL;
    if (!out || (!buf && len)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_from_bytes: NULL argument");
    if (!buf) return sb_fail(SB_ERR_INVALID_INPUT, "not a samebits model (empty)");
    uint32_t version = 0;
    sb_status st = check_frame(buf, len, &version);
    if (st != SB_OK) return st;
    sb_model *m;
    if ((st = sb_model_alloc(&m)) != SB_OK) return st;
    reader r = {.p = buf, .end = len - MF_DIGEST_LEN, .pos = 0};
    st = parse(&r, version, m);
    if (st != SB_OK) {
        sb_model_free(m);
        return st;
    }
    *out = m;
    return SB_OK;
}

/* Read the file at path (refusing one larger than the 2 GiB limit before
 * reading it, SB_ERR_LIMIT) and parse it as sb_model_from_bytes does. */
sb_status sb_model_load(const char *path, sb_model **out) {
    sb_clear_error();
    if (out) *out = NULL;
    if (!path || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_load: NULL argument");
    FILE *f = fopen(path, "rb");
    if (!f) return sb_fail(SB_ERR_IO, "sb_model_load: cannot open '%s': %s", path, strerror(errno));
    struct stat sbuf;
    if (fstat(fileno(f), &sbuf) != 0) {
        sb_status st = sb_fail(SB_ERR_IO, "sb_model_load: cannot stat '%s': %s", path, strerror(errno));
        fclose(f);
        return st;
    }
    if (S_ISDIR(sbuf.st_mode)) {
        fclose(f);
        return sb_fail(SB_ERR_IO, "sb_model_load: '%s' is a directory", path);
    }
    if (S_ISREG(sbuf.st_mode) && (uint64_t)sbuf.st_size > MF_MAX_FILE) {
        fclose(f);
        return sb_fail(SB_ERR_LIMIT, "sb_model_load: '%s' is %llu bytes, more than the format's limit of %llu",
                       path, (unsigned long long)sbuf.st_size, (unsigned long long)MF_MAX_FILE);
    }
    /* Read to EOF (the file may change under us, or not be a regular file),
     * growing the buffer, never past the limit plus one byte. */
    size_t cap = S_ISREG(sbuf.st_mode) && sbuf.st_size > 0 ? (size_t)sbuf.st_size + 1 : 65536;
    size_t len = 0;
    uint8_t *buf = sb_malloc(cap);
    sb_status st = SB_OK;
    if (!buf) {
        fclose(f);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_model_load: out of memory");
    }
    for (;;) {
        if (len == cap) {
            if ((uint64_t)len > MF_MAX_FILE) {
                st = sb_fail(SB_ERR_LIMIT, "sb_model_load: '%s' is more than the format's limit of %llu bytes",
                             path, (unsigned long long)MF_MAX_FILE);
                break;
            }
            size_t ncap = cap * 2;
            if ((uint64_t)ncap > MF_MAX_FILE + 1) ncap = (size_t)(MF_MAX_FILE + 1);
            uint8_t *nb = sb_realloc(buf, ncap);
            if (!nb) {
                st = sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_model_load: out of memory");
                break;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) st = sb_fail(SB_ERR_IO, "sb_model_load: cannot read '%s': %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (st == SB_OK && (uint64_t)len > MF_MAX_FILE)
        st = sb_fail(SB_ERR_LIMIT, "sb_model_load: '%s' is more than the format's limit of %llu bytes", path,
                     (unsigned long long)MF_MAX_FILE);
    if (st == SB_OK) {
        st = sb_model_from_bytes(buf, len, out);
        if (st != SB_OK) {
            /* Prefix the message with the path, keeping the parser's words. */
            char msg[400];
            snprintf(msg, sizeof msg, "%s", sb_last_error());
            sb_fail(st, "'%s': %s", path, msg);
        }
    }
    sb_free(buf);
    return st;
}
