/* status.c: status names, the per-thread last-error message, and allocation. */
#include "internal.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char g_last_error[512];

const char *sb_status_name(sb_status status) {
    switch (status) {
    case SB_OK: return "SB_OK";
    case SB_ERR_INVALID_ARGUMENT: return "SB_ERR_INVALID_ARGUMENT";
    case SB_ERR_INVALID_INPUT: return "SB_ERR_INVALID_INPUT";
    case SB_ERR_OUT_OF_MEMORY: return "SB_ERR_OUT_OF_MEMORY";
    case SB_ERR_IO: return "SB_ERR_IO";
    case SB_ERR_MODE_UNSUPPORTED: return "SB_ERR_MODE_UNSUPPORTED";
    case SB_ERR_IDENTITY_REFUSED: return "SB_ERR_IDENTITY_REFUSED";
    case SB_ERR_BACKEND_UNAVAILABLE: return "SB_ERR_BACKEND_UNAVAILABLE";
    case SB_ERR_LIMIT: return "SB_ERR_LIMIT";
    case SB_ERR_MISMATCH: return "SB_ERR_MISMATCH";
    case SB_ERR_NOT_FOUND: return "SB_ERR_NOT_FOUND";
    case SB_ERR_INTERNAL: return "SB_ERR_INTERNAL";
    }
    return "SB_ERR_UNKNOWN_STATUS";
}

const char *sb_last_error(void) { return g_last_error; }

void sb_clear_error(void) { g_last_error[0] = '\0'; }

/* The message is formatted into a buffer of its own and then copied, so an
 * argument may be sb_last_error() itself ("%s: %s", path, sb_last_error()):
 * vsnprintf straight into g_last_error would overwrite the text it is still
 * reading (undefined behaviour, and a garbled message in practice). */
sb_status sb_fail(sb_status status, const char *fmt, ...) {
    char msg[sizeof g_last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(g_last_error, msg, sizeof msg);
    return status;
}

int sb_utf8_valid(const void *text, size_t n) {
    const uint8_t *s = text;
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c == 0) return 0;
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k;
        uint32_t cp, min;
        if ((c & 0xe0) == 0xc0) k = 1, cp = c & 0x1fu, min = 0x80;
        else if ((c & 0xf0) == 0xe0) k = 2, cp = c & 0x0fu, min = 0x800;
        else if ((c & 0xf8) == 0xf0) k = 3, cp = c & 0x07u, min = 0x10000;
        else return 0;
        if (n - i - 1 < k) return 0;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80) return 0;
            cp = cp << 6 | (s[i + j] & 0x3fu);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
        i += k + 1;
    }
    return 1;
}

sb_status sb_check_feature_name(const char *name, size_t n, const char *where, int64_t index) {
    if (n > SB_MAX_NAME_BYTES)
        return sb_fail(SB_ERR_LIMIT, "%s: the name of feature %lld is %zu bytes, more than the limit of %u",
                       where, (long long)index, n, (unsigned)SB_MAX_NAME_BYTES);
    if (!sb_utf8_valid(name, n))
        return sb_fail(SB_ERR_INVALID_INPUT,
                       "%s: the name of feature %lld is not valid UTF-8 (a Latin-1 or other 8-bit file? convert it to "
                       "UTF-8) or holds a NUL byte",
                       where, (long long)index);
    return SB_OK;
}

/* Allocation failure injection for tests: SAMEBITS_FAIL_ALLOC=N fails the Nth
 * allocation of the process (1-based). Read once. */
static long g_fail_at = -1;
static long g_alloc_count;

static int alloc_should_fail(void) {
    if (g_fail_at < 0) {
        const char *v = getenv("SAMEBITS_FAIL_ALLOC");
        g_fail_at = v && *v ? strtol(v, NULL, 10) : 0;
    }
    if (g_fail_at <= 0) return 0;
    return __atomic_add_fetch(&g_alloc_count, 1, __ATOMIC_RELAXED) == g_fail_at;
}

/* Test hook (internal.h): fail the nth allocation from now on (0: none), and
 * count allocations from zero; the unit tests sweep n in one process. */
void sb_alloc_fail_at_for_tests(long n) {
    g_fail_at = n;
    __atomic_store_n(&g_alloc_count, 0, __ATOMIC_RELAXED);
}

long sb_alloc_count_for_tests(void) { return __atomic_load_n(&g_alloc_count, __ATOMIC_RELAXED); }

void *sb_malloc(size_t n) { return alloc_should_fail() ? NULL : malloc(n ? n : 1); }
void *sb_calloc(size_t c, size_t s) { return alloc_should_fail() ? NULL : calloc(c ? c : 1, s ? s : 1); }
void *sb_realloc(void *p, size_t n) { return alloc_should_fail() ? NULL : realloc(p, n ? n : 1); }
void sb_free(void *p) { free(p); }

char *sb_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = sb_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

int sb_host_is_big_endian(void) {
    const uint32_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 0;
}

sb_status sb_out_size(const void *out, size_t cap, size_t *needed, size_t want) {
    if (needed) *needed = want;
    if (cap == 0 && !out) return SB_OK;
    if (cap < want || !out)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "output buffer too small: %zu elements needed, %zu given", want, cap);
    return SB_OK;
}
