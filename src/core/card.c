/*
 * card.c: identity cards. A card is a list of stages (tag, dtype, element count,
 * SHA-256 of the elements' canonical bytes) plus informative metadata. Two runs
 * that agree on every stage agree on every recorded bit; the first stage where
 * they part says where to look. Format (docs/cards.md), JSON lines:
 *   {"samebits_card":1,"profile":"sb-identical-v9","library":"0.1.0","meta.k":"v",...}
 *   {"i":0,"stage":"input.x","dtype":"f32","count":4096,"sha256":"<64 hex>"}
 */
#include "internal.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SB_TAG_MAX 64
#define SB_META_MAX 32

typedef struct card_stage {
    char tag[SB_TAG_MAX];
    sb_dtype dtype;
    uint64_t count;
    char digest[65];
} card_stage;

struct sb_card {
    char profile[64];
    card_stage *stages;
    int64_t count, cap;
    char *meta_keys[SB_META_MAX];
    char *meta_values[SB_META_MAX];
    int32_t nmeta;
};

/* Copy src into dst[cap], truncating; dst is always terminated. */
static void copy_str(char *dst, size_t cap, const char *src) {
    size_t n = strlen(src);
    if (n >= cap) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static const char *const k_dtype_names[6] = {"u8", "i32", "u32", "i64", "u64", "f32"};
static const int k_dtype_size[6] = {1, 4, 4, 8, 8, 4};

sb_status sb_card_create(sb_card **out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_card_create: out is NULL");
    sb_card *c = sb_calloc(1, sizeof *c);
    if (!c) return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_card_create: out of memory");
    snprintf(c->profile, sizeof c->profile, "%s", SB_PROFILE_VERSION);
    *out = c;
    return SB_OK;
}

void sb_card_free(sb_card *c) {
    if (!c) return;
    for (int32_t i = 0; i < c->nmeta; i++) {
        sb_free(c->meta_keys[i]);
        sb_free(c->meta_values[i]);
    }
    sb_free(c->stages);
    sb_free(c);
}

static int valid_tag(const char *t) {
    size_t n = strlen(t);
    if (n == 0 || n >= SB_TAG_MAX) return 0;
    for (; *t; t++) {
        char ch = *t;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '_' || ch == '-'))
            return 0;
    }
    return 1;
}

static int safe_text(const char *t, size_t max) {
    size_t n = strlen(t);
    if (n >= max) return 0;
    for (; *t; t++)
        if ((unsigned char)*t < 0x20 || *t == '"' || *t == '\\') return 0;
    return 1;
}

sb_status sb_card_set_meta(sb_card *c, const char *key, const char *value) {
    sb_clear_error();
    if (!c || !key || !value) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_card_set_meta: NULL argument");
    if (!valid_tag(key) || !safe_text(value, 256))
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "card meta '%s': key must be [A-Za-z0-9._-], value printable without quotes", key);
    for (int32_t i = 0; i < c->nmeta; i++) {
        if (strcmp(c->meta_keys[i], key) == 0) {
            char *v = sb_strdup(value);
            if (!v) return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_card_set_meta: out of memory");
            sb_free(c->meta_values[i]);
            c->meta_values[i] = v;
            return SB_OK;
        }
    }
    if (c->nmeta == SB_META_MAX) return sb_fail(SB_ERR_LIMIT, "a card holds at most %d meta fields", SB_META_MAX);
    char *k = sb_strdup(key), *v = sb_strdup(value);
    if (!k || !v) {
        sb_free(k);
        sb_free(v);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_card_set_meta: out of memory");
    }
    c->meta_keys[c->nmeta] = k;
    c->meta_values[c->nmeta] = v;
    c->nmeta++;
    return SB_OK;
}

static sb_status push_stage(sb_card *c, const card_stage *s) {
    if (c->count == c->cap) {
        int64_t cap = c->cap ? c->cap * 2 : 16;
        card_stage *n = sb_realloc(c->stages, sizeof(card_stage) * (size_t)cap);
        if (!n) return sb_fail(SB_ERR_OUT_OF_MEMORY, "card: out of memory");
        c->stages = n;
        c->cap = cap;
    }
    c->stages[c->count++] = *s;
    return SB_OK;
}

/* Digest of count elements in canonical form: little-endian bytes, and every
 * float NaN as 0x7FC00000 (the profile has one NaN; payloads and signs of NaN
 * differ between architectures and carry no meaning). */
static void digest_elements(sb_dtype dtype, const void *data, uint64_t count, char hex[65]) {
    sb_sha256_ctx ctx;
    sb_sha256_init(&ctx);
    const int size = k_dtype_size[dtype];
    const uint8_t *src = data;
    uint8_t buf[4096];
    const uint64_t per = sizeof buf / (uint64_t)size;
    for (uint64_t done = 0; done < count;) {
        uint64_t n = count - done < per ? count - done : per;
        for (uint64_t i = 0; i < n; i++) {
            const uint8_t *e = src + (done + i) * (uint64_t)size;
            uint8_t *o = buf + i * (uint64_t)size;
            if (size == 1) {
                o[0] = e[0];
            } else if (size == 4) {
                uint32_t u;
                memcpy(&u, e, 4);
                if (dtype == SB_DTYPE_F32 && (u & 0x7FFFFFFFu) > 0x7F800000u) u = 0x7FC00000u;
                for (int b = 0; b < 4; b++) o[b] = (uint8_t)(u >> (8 * b));
            } else {
                uint64_t u;
                memcpy(&u, e, 8);
                for (int b = 0; b < 8; b++) o[b] = (uint8_t)(u >> (8 * b));
            }
        }
        sb_sha256_update(&ctx, buf, (size_t)(n * (uint64_t)size));
        done += n;
    }
    uint8_t d[32];
    sb_sha256_final(&ctx, d);
    sb_hex(d, 32, hex);
}

sb_status sb_card_record(sb_card *c, const char *stage, sb_dtype dtype, const void *data,
                         uint64_t count) {
    sb_clear_error();
    if (!c || !stage || (!data && count))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_card_record: NULL argument");
    if (!valid_tag(stage))
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "stage tag '%s' must be 1..%d chars of [A-Za-z0-9._-]", stage, SB_TAG_MAX - 1);
    if ((unsigned)dtype > (unsigned)SB_DTYPE_F32)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_card_record: unknown dtype %d", (int)dtype);
    card_stage s;
    memset(&s, 0, sizeof s);
    snprintf(s.tag, sizeof s.tag, "%s", stage);
    s.dtype = dtype;
    s.count = count;
    digest_elements(dtype, data, count, s.digest);
    return push_stage(c, &s);
}

sb_status sb_card_stage_count(const sb_card *c, int64_t *count) {
    sb_clear_error();
    if (!c || !count) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_card_stage_count: NULL argument");
    *count = c->count;
    return SB_OK;
}

/* Render into buf (may be NULL when cap is 0); returns the length needed. */
static size_t render(const sb_card *c, char *buf, size_t cap) {
    size_t len = 0;
#define EMIT(...)                                                                   \
    do {                                                                            \
        int k_ = snprintf(buf ? buf + (len < cap ? len : cap) : NULL,               \
                          buf && len < cap ? cap - len : 0, __VA_ARGS__);           \
        len += (size_t)(k_ > 0 ? k_ : 0);                                           \
    } while (0)
    EMIT("{\"samebits_card\":1,\"profile\":\"%s\",\"library\":\"%s\"", c->profile, SB_VERSION_STRING);
    for (int32_t i = 0; i < c->nmeta; i++) EMIT(",\"meta.%s\":\"%s\"", c->meta_keys[i], c->meta_values[i]);
    EMIT("}\n");
    for (int64_t i = 0; i < c->count; i++) {
        const card_stage *s = &c->stages[i];
        EMIT("{\"i\":%lld,\"stage\":\"%s\",\"dtype\":\"%s\",\"count\":%llu,\"sha256\":\"%s\"}\n",
             (long long)i, s->tag, k_dtype_names[s->dtype], (unsigned long long)s->count, s->digest);
    }
#undef EMIT
    return len + 1;
}

sb_status sb_card_text(const sb_card *c, char *buf, size_t cap, size_t *needed) {
    sb_clear_error();
    if (!c || (!buf && cap)) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_card_text: NULL argument");
    size_t need = render(c, cap ? buf : NULL, cap);
    if (needed) *needed = need;
    if (cap && cap < need) return sb_fail(SB_ERR_LIMIT, "sb_card_text: buffer holds %zu bytes, %zu needed", cap, need);
    return SB_OK;
}

sb_status sb_card_save(const sb_card *c, const char *path) {
    sb_clear_error();
    if (!c || !path) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_card_save: NULL argument");
    size_t need = render(c, NULL, 0);
    char *text = sb_malloc(need);
    if (!text) return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_card_save: out of memory");
    render(c, text, need);
    /* the library's output rule (output.c): temporary file and rename for a
     * regular file, direct for "-", a device or a pipe */
    sb_output *o = NULL;
    sb_status st = sb_output_open(path, &o);
    if (st == SB_OK && (st = sb_output_write(o, text, need - 1)) != SB_OK) sb_output_discard(o);
    else if (st == SB_OK) st = sb_output_commit(o);
    sb_free(text);
    return st;
}

/* ---- parsing: one flat JSON object per line, string and integer values ---- */

typedef struct field {
    char key[80];
    char value[300];
    int is_string;
} field;

static const char *skip_ws(const char *s, const char *e) {
    while (s < e && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
    return s;
}

/* Parse a JSON string without escapes (cards never need them). */
static const char *parse_str(const char *s, const char *e, char *out, size_t cap) {
    if (s >= e || *s != '"') return NULL;
    s++;
    size_t n = 0;
    while (s < e && *s != '"') {
        if (*s == '\\' || (unsigned char)*s < 0x20 || n + 1 >= cap) return NULL;
        out[n++] = *s++;
    }
    if (s >= e) return NULL;
    out[n] = '\0';
    return s + 1;
}

static int parse_line(const char *s, const char *e, field *fields, int maxf, int *nf) {
    *nf = 0;
    s = skip_ws(s, e);
    if (s >= e || *s != '{') return 0;
    s = skip_ws(s + 1, e);
    if (s < e && *s == '}') return skip_ws(s + 1, e) == e;
    for (;;) {
        if (*nf == maxf) return 0;
        field *f = &fields[(*nf)++];
        s = parse_str(s, e, f->key, sizeof f->key);
        if (!s) return 0;
        s = skip_ws(s, e);
        if (s >= e || *s != ':') return 0;
        s = skip_ws(s + 1, e);
        if (s < e && *s == '"') {
            s = parse_str(s, e, f->value, sizeof f->value);
            if (!s) return 0;
            f->is_string = 1;
        } else {
            size_t n = 0;
            while (s < e && *s >= '0' && *s <= '9' && n + 1 < 24) f->value[n++] = *s++;
            if (n == 0 || (s < e && *s >= '0' && *s <= '9')) return 0;
            f->value[n] = '\0';
            f->is_string = 0;
        }
        s = skip_ws(s, e);
        if (s < e && *s == ',') {
            s = skip_ws(s + 1, e);
            continue;
        }
        if (s < e && *s == '}') return skip_ws(s + 1, e) == e;
        return 0;
    }
}

static const field *find(const field *f, int n, const char *key) {
    for (int i = 0; i < n; i++)
        if (strcmp(f[i].key, key) == 0) return &f[i];
    return NULL;
}

static int parse_u64(const char *s, uint64_t *out) {
    uint64_t v = 0;
    if (!*s) return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return 0;
        if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10) return 0;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 1;
}

static int is_hex64(const char *s) {
    if (strlen(s) != 64) return 0;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'))) return 0;
    return 1;
}

sb_status sb_card_parse(const char *text, size_t len, sb_card **out) {
    sb_clear_error();
    if ((!text && len) || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_card_parse: NULL argument");
    *out = NULL;
    sb_card *c;
    sb_status st = sb_card_create(&c);
    if (st != SB_OK) return st;
    const char *p = text, *end = text + len;
    int64_t line = 0;
    field fields[SB_META_MAX + 8];
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        line++;
        if (skip_ws(p, e) == e) { /* blank line */
            p = e + 1;
            continue;
        }
        int nf;
        if (!parse_line(p, e, fields, (int)(sizeof fields / sizeof fields[0]), &nf)) {
            st = sb_fail(SB_ERR_INVALID_INPUT, "card line %lld is not a card JSON object", (long long)line);
            goto fail;
        }
        const field *hdr = find(fields, nf, "samebits_card");
        if (hdr) {
            const field *prof = find(fields, nf, "profile");
            if (line != 1 || hdr->is_string || strcmp(hdr->value, "1") != 0 || !prof || !prof->is_string ||
                strlen(prof->value) >= sizeof c->profile) {
                st = sb_fail(SB_ERR_INVALID_INPUT, "card line %lld: bad or misplaced header (format 1 expected)",
                             (long long)line);
                goto fail;
            }
            copy_str(c->profile, sizeof c->profile, prof->value);
            for (int i = 0; i < nf; i++) {
                if (strncmp(fields[i].key, "meta.", 5) == 0 && fields[i].is_string) {
                    st = sb_card_set_meta(c, fields[i].key + 5, fields[i].value);
                    if (st == SB_ERR_INVALID_ARGUMENT) { /* a bad key in the text is bad input */
                        char why[256];
                        snprintf(why, sizeof why, "%s", sb_last_error());
                        st = sb_fail(SB_ERR_INVALID_INPUT, "card line %lld: %s", (long long)line, why);
                    }
                    if (st != SB_OK) goto fail;
                }
            }
        } else {
            if (line == 1) {
                st = sb_fail(SB_ERR_INVALID_INPUT, "card line 1 is not a samebits card header");
                goto fail;
            }
            const field *fi = find(fields, nf, "i"), *ft = find(fields, nf, "stage"),
                        *fd = find(fields, nf, "dtype"), *fc = find(fields, nf, "count"),
                        *fh = find(fields, nf, "sha256");
            card_stage s;
            memset(&s, 0, sizeof s);
            uint64_t idx;
            int dt = -1;
            if (fd && fd->is_string)
                for (int k = 0; k < 6; k++)
                    if (strcmp(fd->value, k_dtype_names[k]) == 0) dt = k;
            if (!fi || fi->is_string || !parse_u64(fi->value, &idx) || idx != (uint64_t)c->count ||
                !ft || !ft->is_string || !valid_tag(ft->value) || dt < 0 || !fc || fc->is_string ||
                !parse_u64(fc->value, &s.count) || !fh || !fh->is_string || !is_hex64(fh->value)) {
                st = sb_fail(SB_ERR_INVALID_INPUT, "card line %lld: not a valid stage record", (long long)line);
                goto fail;
            }
            copy_str(s.tag, sizeof s.tag, ft->value);
            s.dtype = (sb_dtype)dt;
            memcpy(s.digest, fh->value, 65);
            st = push_stage(c, &s);
            if (st != SB_OK) goto fail;
        }
        p = e + 1;
    }
    if (line == 0) {
        st = sb_fail(SB_ERR_INVALID_INPUT, "card is empty");
        goto fail;
    }
    *out = c;
    return SB_OK;
fail:
    sb_card_free(c);
    return st;
}

sb_status sb_card_load(const char *path, sb_card **out) {
    sb_clear_error();
    if (!path || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_card_load: NULL argument");
    FILE *f = fopen(path, "rb");
    if (!f) return sb_fail(SB_ERR_IO, "cannot open card '%s': %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    char *buf = sb_malloc(cap);
    sb_status st = SB_OK;
    if (!buf) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_card_load: out of memory");
    while (st == SB_OK) {
        if (len == cap) {
            if (cap >= ((size_t)64 << 20)) {
                st = sb_fail(SB_ERR_LIMIT, "card '%s' is larger than 64 MiB", path);
                break;
            }
            char *n = sb_realloc(buf, cap * 2);
            if (!n) {
                st = sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_card_load: out of memory");
                break;
            }
            buf = n;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) st = sb_fail(SB_ERR_IO, "cannot read card '%s'", path);
            break;
        }
    }
    fclose(f);
    if (st == SB_OK) {
        st = sb_card_parse(buf, len, out);
        if (st != SB_OK) {
            char msg[400];
            snprintf(msg, sizeof msg, "%s", sb_last_error());
            st = sb_fail(st, "%s: %s", path, msg);
        }
    }
    sb_free(buf);
    return st;
}

sb_status sb_card_compare(const sb_card *a, const sb_card *b, sb_card_diff *d) {
    sb_clear_error();
    if (!a || !b || !d) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_card_compare: NULL argument");
    memset(d, 0, sizeof *d);
    d->stage_index = -1;
    if (strcmp(a->profile, b->profile) != 0) {
        d->stage_index = 0;
        copy_str(d->reason, sizeof d->reason, "profile");
        return sb_fail(SB_ERR_MISMATCH, "cards follow different profiles: %s vs %s", a->profile, b->profile);
    }
    int64_t n = a->count > b->count ? a->count : b->count;
    for (int64_t i = 0; i < n; i++) {
        const card_stage *x = i < a->count ? &a->stages[i] : NULL;
        const card_stage *y = i < b->count ? &b->stages[i] : NULL;
        const char *why = NULL;
        if (!x || !y) why = "missing";
        else if (strcmp(x->tag, y->tag) != 0) why = "tag";
        else if (x->dtype != y->dtype) why = "dtype";
        else if (x->count != y->count) why = "count";
        else if (strcmp(x->digest, y->digest) != 0) why = "digest";
        if (why) {
            d->stage_index = i;
            if (x) {
                snprintf(d->stage_a, sizeof d->stage_a, "%s", x->tag);
                snprintf(d->digest_a, sizeof d->digest_a, "%s", x->digest);
            }
            if (y) {
                snprintf(d->stage_b, sizeof d->stage_b, "%s", y->tag);
                snprintf(d->digest_b, sizeof d->digest_b, "%s", y->digest);
            }
            snprintf(d->reason, sizeof d->reason, "%s", why);
            return sb_fail(SB_ERR_MISMATCH, "cards part at stage %lld (%s): %s",
                           (long long)i, x ? x->tag : y->tag, why);
        }
    }
    d->identical = 1;
    return SB_OK;
}
