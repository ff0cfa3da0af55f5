/*
 * params.c: the key=value parameter bag every estimator takes. Keys and values
 * are copied; order of setting is kept. sb_params_set on a key already set
 * replaces its value (a binding's set_params); text given to sb_params_parse
 * that names a key already in the bag is refused by name, because two values
 * for one key on a command line or in a file are a mistake, never "the last
 * one wins". The families refuse two aliases of one key the same way
 * (sb_params_refuse_aliases). Pairs are separated by spaces, tabs, newlines or
 * commas; a comma followed by a word that has no '=' continues the value, so
 * that list values stay whole ("metric=auc,binary_logloss eval_at=1,3,5").
 */
#include "internal.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sb_params {
    char **keys;
    char **values;
    int64_t count, cap;
};

sb_status sb_params_create(sb_params **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_params_create: out is NULL");
    *out = sb_calloc(1, sizeof(sb_params));
    if (!*out) return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_params_create: out of memory");
    return SB_OK;
}

void sb_params_free(sb_params *p) {
    if (!p) return;
    for (int64_t i = 0; i < p->count; i++) {
        sb_free(p->keys[i]);
        sb_free(p->values[i]);
    }
    sb_free(p->keys);
    sb_free(p->values);
    sb_free(p);
}

static int valid_key(const char *k) {
    if (!*k) return 0;
    for (; *k; k++) {
        char c = *k;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.'))
            return 0;
    }
    return 1;
}

sb_status sb_params_set(sb_params *p, const char *key, const char *value) {
    sb_clear_error();
    if (!p || !key || !value) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_params_set: NULL argument");
    if (!valid_key(key))
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "parameter name '%s' is not valid (letters, digits, '_' and '.')", key);
    char *v = sb_strdup(value);
    if (!v) return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_params_set: out of memory");
    for (int64_t i = 0; i < p->count; i++) {
        if (strcmp(p->keys[i], key) == 0) {
            sb_free(p->values[i]);
            p->values[i] = v;
            return SB_OK;
        }
    }
    if (p->count == p->cap) {
        int64_t cap = p->cap ? p->cap * 2 : 8;
        char **k2 = sb_realloc(p->keys, sizeof(char *) * (size_t)cap);
        if (!k2) { sb_free(v); return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_params_set: out of memory"); }
        p->keys = k2;
        char **v2 = sb_realloc(p->values, sizeof(char *) * (size_t)cap);
        if (!v2) { sb_free(v); return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_params_set: out of memory"); }
        p->values = v2;
        p->cap = cap;
    }
    char *k = sb_strdup(key);
    if (!k) { sb_free(v); return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_params_set: out of memory"); }
    p->keys[p->count] = k;
    p->values[p->count] = v;
    p->count++;
    return SB_OK;
}

static sb_status parse_text(sb_params *p, const char *text, int replace) {
    const char *s = text;
    char key[128], value[1024];
    for (;;) {
        while (*s == ' ' || *s == ',' || *s == '\t' || *s == '\n') s++;
        if (!*s) return SB_OK;
        const char *start = s;
        while (*s && *s != '=' && *s != ' ' && *s != ',' && *s != '\t' && *s != '\n') s++;
        if (*s != '=')
            return sb_fail(SB_ERR_INVALID_INPUT, "parameter '%.*s' has no '=value'",
                           (int)(s - start), start);
        size_t klen = (size_t)(s - start);
        if (klen == 0 || klen >= sizeof key)
            return sb_fail(SB_ERR_INVALID_INPUT, "empty or overlong parameter name near '%.20s'", start);
        memcpy(key, start, klen);
        key[klen] = '\0';
        s++;
        const char *vs = s;
        for (;;) { /* a comma followed by a word without '=' continues a list value */
            while (*s && *s != ' ' && *s != ',' && *s != '\t' && *s != '\n') s++;
            if (*s != ',') break;
            const char *w = s + 1;
            while (*w && *w != ' ' && *w != ',' && *w != '\t' && *w != '\n' && *w != '=') w++;
            if (*w == '=' || w == s + 1) break; /* the next pair, or an empty item */
            s++;
        }
        size_t vlen = (size_t)(s - vs);
        if (vlen >= sizeof value)
            return sb_fail(SB_ERR_INVALID_INPUT, "value of parameter '%s' is too long", key);
        memcpy(value, vs, vlen);
        value[vlen] = '\0';
        const char *had = NULL;
        if (!replace && sb_params_get(p, key, &had) == SB_OK)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter '%s' is given twice ('%s' and '%s'); give it once", key,
                           had, value);
        sb_status st = sb_params_set(p, key, value);
        if (st != SB_OK) return st;
    }
}

sb_status sb_params_parse(sb_params *p, const char *text) {
    sb_clear_error();
    if (!p || !text) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_params_parse: NULL argument");
    return parse_text(p, text, 0);
}

/* Layered parameters (a fixture's pinned text over a caller's extra text):
 * each key of text replaces the bag's value, as sb_params_set does. */
sb_status sb_params_parse_over(sb_params *p, const char *text) {
    sb_clear_error();
    if (!p || !text) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_params_parse: NULL argument");
    return parse_text(p, text, 1);
}

/* groups: strings of '|'-separated names of one parameter ("n_estimators|num_trees"),
 * ending with NULL. Two keys of p in one group are refused by name: which one
 * the family would use is an accident of order the user cannot see. */
sb_status sb_params_refuse_aliases(const sb_params *p, const char *const *groups, const char *family) {
    if (!p) return SB_OK;
    for (; *groups; groups++) {
        const char *first = NULL;
        for (int64_t i = 0; i < p->count; i++) {
            const char *k = p->keys[i], *g = *groups;
            size_t kl = strlen(k);
            int member = 0;
            while (*g && !member) {
                size_t gl = strcspn(g, "|");
                member = gl == kl && memcmp(g, k, kl) == 0;
                g += gl + (g[gl] == '|');
            }
            if (!member) continue;
            if (first)
                return sb_fail(SB_ERR_INVALID_ARGUMENT,
                               "parameters '%s' and '%s' are one parameter of %s (aliases); give it once", first, k,
                               family);
            first = k;
        }
    }
    return SB_OK;
}

sb_status sb_params_get(const sb_params *p, const char *key, const char **value) {
    sb_clear_error();
    if (!p || !key || !value) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_params_get: NULL argument");
    for (int64_t i = 0; i < p->count; i++) {
        if (strcmp(p->keys[i], key) == 0) {
            *value = p->values[i];
            return SB_OK;
        }
    }
    return sb_fail(SB_ERR_NOT_FOUND, "parameter '%s' is not set", key);
}

sb_status sb_params_resolve_mode(const sb_params *p, sb_family family, sb_numeric_mode *used) {
    sb_clear_error();
    if (!used) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_params_resolve_mode: used is NULL");
    const char *v = NULL;
    sb_numeric_mode m;
    sb_status st;
    if (p && sb_params_get(p, "numeric_mode", &v) == SB_OK)
        st = sb_numeric_mode_parse(v, &m);
    else
        st = sb_get_numeric_mode(&m);
    if (st != SB_OK) return st;
    st = sb_family_supports_mode(family, m);
    if (st != SB_OK) return st;
    *used = m;
    return SB_OK;
}

sb_status sb_params_entry(const sb_params *p, int64_t index, const char **key, const char **value) {
    if (!p || index < 0 || index >= p->count) return SB_ERR_NOT_FOUND;
    *key = p->keys[index];
    *value = p->values[index];
    return SB_OK;
}

/* ---- typed values of model parameters (shared by the families' parsers) ---- */

sb_status sb_param_int(const char *key, const char *v, int64_t lo, int64_t hi, int64_t *out) {
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (*v && !*end && ((errno == ERANGE && x > 0) || (!errno && x > hi))) /* a limit, by name */
        return sb_fail(SB_ERR_LIMIT, "parameter %s='%s' is beyond its limit %lld", key, v, (long long)hi);
    if (!*v || *end || errno || x < lo || x > hi)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be an integer in %lld..%lld", key, v,
                       (long long)lo, (long long)hi);
    *out = x;
    return SB_OK;
}

/* Floats are parsed with strtof: correctly rounded, the same bits everywhere. */
sb_status sb_param_float(const char *key, const char *v, float lo, float hi, int lo_open, float *out) {
    char *end;
    errno = 0;
    float x = strtof(v, &end);
    if (!*v || *end || !(x >= lo && x <= hi) || (lo_open && x == lo))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter %s='%s' must be a number in %s%g, %g]", key, v,
                       lo_open ? "(" : "[", (double)lo, (double)hi);
    *out = x;
    return SB_OK;
}
