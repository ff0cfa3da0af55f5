/*
 * mode.c: numeric modes (identical, deterministic, fast) and which family
 * offers which. A tier a family lacks is refused by name, never downgraded.
 */
#include "internal.h"
#include <stdlib.h>
#include <string.h>

static const char *const k_mode_names[3] = {"identical", "deterministic", "fast"};
#define SB_VALID_MODES "identical, deterministic, fast"

static const char *const k_family_names[SB_FAMILY_COUNT_] = {
    "gbdt", "random_forest", "extra_trees", "isolation_forest", "kmeans", "linear"};

/* Tiers per family, as bit sets over sb_numeric_mode: the tree families offer
 * all three; every other family is identical-only (DESIGN.md, section 1). */
static const unsigned k_family_tiers[SB_FAMILY_COUNT_] = {7u, 7u, 7u, 7u, 1u, 1u};

const char *sb_numeric_mode_name(sb_numeric_mode mode) {
    return (unsigned)mode < 3u ? k_mode_names[mode] : "unknown";
}

const char *sb_family_name(sb_family family) {
    return (unsigned)family < (unsigned)SB_FAMILY_COUNT_ ? k_family_names[family] : "unknown";
}

sb_status sb_numeric_mode_parse(const char *name, sb_numeric_mode *out) {
    sb_clear_error();
    if (!name || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "numeric mode: NULL argument");
    for (int i = 0; i < 3; i++) {
        if (strcmp(name, k_mode_names[i]) == 0) {
            *out = (sb_numeric_mode)i;
            return SB_OK;
        }
    }
    return sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown numeric mode '%s'; valid modes: " SB_VALID_MODES,
                   name);
}

static int g_mode = -1; /* -1: not yet read from the environment */

sb_status sb_get_numeric_mode(sb_numeric_mode *out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_get_numeric_mode: out is NULL");
    int m = __atomic_load_n(&g_mode, __ATOMIC_ACQUIRE);
    if (m >= 0) {
        *out = (sb_numeric_mode)m;
        return SB_OK;
    }
    const char *env = getenv("SAMEBITS_NUMERIC_MODE");
    sb_numeric_mode parsed = SB_MODE_IDENTICAL;
    if (env && *env && sb_numeric_mode_parse(env, &parsed) != SB_OK)
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "SAMEBITS_NUMERIC_MODE='%s' is not a numeric mode; valid modes: " SB_VALID_MODES,
                       env);
    *out = parsed;
    return SB_OK;
}

sb_status sb_set_numeric_mode(const char *name) {
    sb_numeric_mode m;
    sb_status st = sb_numeric_mode_parse(name, &m);
    if (st != SB_OK) return st;
    __atomic_store_n(&g_mode, (int)m, __ATOMIC_RELEASE);
    return SB_OK;
}

sb_status sb_family_supports_mode(sb_family family, sb_numeric_mode mode) {
    sb_clear_error();
    if ((unsigned)family >= (unsigned)SB_FAMILY_COUNT_ || (unsigned)mode >= 3u)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown family %d or mode %d", (int)family,
                       (int)mode);
    if (k_family_tiers[family] & (1u << mode)) return SB_OK;
    return sb_fail(SB_ERR_MODE_UNSUPPORTED,
                   "family '%s' does not offer numeric mode '%s' (it offers: identical); "
                   "refusing rather than running another mode",
                   k_family_names[family], k_mode_names[mode]);
}
