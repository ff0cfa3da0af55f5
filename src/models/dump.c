/*
 * dump.c: sb_model_dump, a tree model as text or JSON (docs/explain.md):
 * every tree's nodes in the order the model stores them, with their split
 * (feature, threshold, missing-value side, gain), training count and leaf
 * value exactly as stored (floats printed with 9 significant digits, so each
 * reads back to the same float32), and LightGBM's split and leaf numbers
 * (explain.h), the ones pred_leaf gives.
 */
#include "explain.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A growing text; a failed allocation sets oom and stops appending. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

/* Append printf-formatted text to b. */
static void put(sbuf *b, const char *fmt, ...) {
    if (b->oom) return;
    va_list ap;
    va_start(ap, fmt);
    char tmp[256];
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof tmp) {
        b->oom = 1;
        return;
    }
    if (b->n + (size_t)k + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + (size_t)k + 1) cap *= 2;
        char *q = sb_realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, tmp, (size_t)k + 1);
    b->n += (size_t)k;
}

/* Append s as it is, whatever its length (feature names may be long). */
static void put_raw(sbuf *b, const char *s) {
    for (; *s && !b->oom; s++) put(b, "%c", *s);
}

/* A float with 9 significant digits (it reads back to the same float32); in
 * JSON an infinity (a threshold may be one) is the string "inf" or "-inf". */
static void put_float(sbuf *b, float v, int json) {
    if (isinf(v)) put(b, json ? "\"%s\"" : "%s", v > 0 ? "inf" : "-inf");
    else put(b, "%.9g", (double)v);
}

/* A JSON string: quotes, backslashes and control characters escaped; other
 * bytes (UTF-8, checked when the model was read) as they are. */
static void put_json_string(sbuf *b, const char *s) {
    put(b, "\"");
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') put(b, "\\%c", c);
        else if (c < 0x20) put(b, "\\u%04x", c);
        else put(b, "%c", c);
    }
    put(b, "\"");
}

/* A categorical split's codes (whole numbers), ascending, sep between them. */
static void put_codes(sbuf *b, const sb_tree *tr, const sb_tree_node *n, const char *sep) {
    for (int32_t i = tr->cat_start[n->cat_set]; i < tr->cat_start[n->cat_set + 1]; i++)
        put(b, "%s%lld", i > tr->cat_start[n->cat_set] ? sep : "", (long long)tr->cat_codes[i]);
}

/* The JSON form of m into b (lno, spl: scratch of the largest tree's nodes). */
static void dump_json(sbuf *b, const sb_model *m, int32_t *lno, int32_t *spl) {
    put(b, "{\"format\":\"samebits-dump-1\",\"profile\":");
    put_json_string(b, m->profile ? m->profile : "");
    put(b, ",\"family\":\"%s\",\"objective\":\"%s\",\"num_class\":%d,\"num_features\":%d,\"feature_names\":[",
        sb_family_name((sb_family)m->family), sb_model_objective_name(m->objective), (int)m->num_class,
        (int)m->num_features);
    for (int32_t f = 0; f < m->num_features; f++) {
        if (f) put(b, ",");
        if (m->feature_names) put_json_string(b, m->feature_names[f]);
        else put(b, "\"f%d\"", (int)f);
    }
    put(b, "],\"base_score\":[");
    for (int32_t c = 0; c < m->num_class; c++) {
        if (c) put(b, ",");
        put_float(b, m->base_score[c], 1);
    }
    put(b, "],\"trees\":[");
    for (int32_t t = 0; t < m->ntrees && !b->oom; t++) {
        const sb_tree *tr = &m->trees[t];
        sb_tree_leaf_numbers(tr, lno, spl);
        int32_t leaves = 0;
        for (int32_t k = 0; k < tr->nnodes; k++) leaves += tr->nodes[k].feature < 0;
        put(b, "%s\n{\"tree_index\":%d,\"class\":%d,\"num_nodes\":%d,\"num_leaves\":%d,\"nodes\":[", t ? "," : "",
            (int)t, (int)(t % m->num_class), (int)tr->nnodes, (int)leaves);
        for (int32_t k = 0; k < tr->nnodes; k++) {
            const sb_tree_node *n = &tr->nodes[k];
            put(b, "%s{\"node\":%d,", k ? "," : "", (int)k);
            if (n->feature >= 0) {
                put(b, "\"split_index\":%d,\"split_feature\":%d,\"threshold\":", (int)spl[k], (int)n->feature);
                if (n->categorical) { /* LightGBM's spelling: the codes that go left, "1||3||5" */
                    put(b, "\"");
                    put_codes(b, tr, n, "||");
                    put(b, "\"");
                } else {
                    put_float(b, n->threshold, 1);
                }
                put(b, ",\"decision_type\":\"%s\",\"default_left\":%s,\"split_gain\":", n->categorical ? "==" : "<=",
                    n->default_left ? "true" : "false");
                put_float(b, n->gain, 1);
                put(b, ",\"count\":%lld,\"left\":%d,\"right\":%d}", (long long)n->count, (int)n->left, (int)n->right);
            } else {
                put(b, "\"leaf_index\":%d,\"leaf_value\":", (int)lno[k]);
                put_float(b, n->value, 1);
                put(b, ",\"count\":%lld}", (long long)n->count);
            }
        }
        put(b, "]}");
    }
    put(b, "\n]}\n");
}

/* The text form of m into b: a header of the model's facts, then one line a node. */
static void dump_text(sbuf *b, const sb_model *m, int32_t *lno, int32_t *spl) {
    put(b, "profile %s\nfamily %s\nobjective %s\nnum_class %d\nnum_features %d\nntrees %d\nbase_score",
        m->profile ? m->profile : "", sb_family_name((sb_family)m->family), sb_model_objective_name(m->objective),
        (int)m->num_class, (int)m->num_features, (int)m->ntrees);
    for (int32_t c = 0; c < m->num_class; c++) {
        put(b, " ");
        put_float(b, m->base_score[c], 0);
    }
    put(b, "\n");
    for (int32_t t = 0; t < m->ntrees && !b->oom; t++) {
        const sb_tree *tr = &m->trees[t];
        sb_tree_leaf_numbers(tr, lno, spl);
        int32_t leaves = 0;
        for (int32_t k = 0; k < tr->nnodes; k++) leaves += tr->nodes[k].feature < 0;
        put(b, "\ntree %d class %d nodes %d leaves %d\n", (int)t, (int)(t % m->num_class), (int)tr->nnodes,
            (int)leaves);
        for (int32_t k = 0; k < tr->nnodes; k++) {
            const sb_tree_node *n = &tr->nodes[k];
            if (n->feature >= 0) {
                put(b, "  node %d split %d: ", (int)k, (int)spl[k]);
                if (m->feature_names) put_raw(b, m->feature_names[n->feature]);
                else put(b, "f%d", (int)n->feature);
                if (n->categorical) {
                    put(b, " (feature %d) in {", (int)n->feature);
                    put_codes(b, tr, n, ", ");
                    put(b, "}");
                } else {
                    put(b, " (feature %d) <= ", (int)n->feature);
                    put_float(b, n->threshold, 0);
                }
                put(b, ", missing %s, gain ", n->default_left ? "left" : "right");
                put_float(b, n->gain, 0);
                put(b, ", count %lld -> left %d, right %d\n", (long long)n->count, (int)n->left, (int)n->right);
            } else {
                put(b, "  node %d leaf %d: value ", (int)k, (int)lno[k]);
                put_float(b, n->value, 0);
                put(b, ", count %lld\n", (long long)n->count);
            }
        }
    }
}

sb_status sb_model_dump(const sb_model *m, const char *format, char *buf, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!m || !format || (!buf && cap)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_model_dump: NULL argument");
    const int json = !strcmp(format, "json");
    if (!json && strcmp(format, "text"))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "dump: unknown format '%.40s' (json or text)", format);
    if (m->family != SB_FAMILY_GBDT && m->family != SB_FAMILY_RANDOM_FOREST && m->family != SB_FAMILY_EXTRA_TREES &&
        m->family != SB_FAMILY_ISOLATION_FOREST)
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "dump is for the tree families (gbdt, random_forest, extra_trees, isolation_forest), not a %s "
                       "model",
                       sb_family_name((sb_family)m->family));
    int32_t most = 1;
    for (int32_t t = 0; t < m->ntrees; t++)
        if (m->trees[t].nnodes > most) most = m->trees[t].nnodes;
    sbuf b = {NULL, 0, 0, 0};
    int32_t *lno = sb_malloc(sizeof(int32_t) * (size_t)most), *spl = sb_malloc(sizeof(int32_t) * (size_t)most);
    if (lno && spl) {
        if (json) dump_json(&b, m, lno, spl);
        else dump_text(&b, m, lno, spl);
    }
    sb_free(lno);
    sb_free(spl);
    if (!lno || !spl || b.oom) {
        sb_free(b.p);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "dump: out of memory");
    }
    if (needed) *needed = b.n + 1;
    sb_status st = SB_OK;
    if (cap && cap < b.n + 1) st = sb_fail(SB_ERR_LIMIT, "dump buffer holds %zu bytes, %zu needed", cap, b.n + 1);
    else if (cap) memcpy(buf, b.p, b.n + 1);
    sb_free(b.p);
    return st;
}
