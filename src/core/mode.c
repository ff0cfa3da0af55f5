/*
 * mode.c: numeric modes and which are built. Three names exist (identical,
 * deterministic, fast: the model format stores the index 0..2, and models
 * written with another label are still read), but only identical is built:
 * deterministic and fast never had a code path of their own (they trained the
 * identical model under another label) and no measured win to earn one, so
 * asking for either, by a parameter, the process default or the environment,
 * is refused by name (SB_ERR_MODE_UNSUPPORTED), never run as identical under
 * the asked-for label (DESIGN.md rule 10; docs/numeric-profile.md).
 */
#include "internal.h"
#include <stdlib.h>
#include <string.h>

static const char *const k_mode_names[3] = {"identical", "deterministic", "fast"};
#define SB_VALID_MODES "identical, deterministic, fast"

static const char *const k_family_names[SB_FAMILY_COUNT_] = {
    "gbdt", "random_forest", "extra_trees", "isolation_forest", "kmeans", "linear", "knn", "dbscan", "agglomerative",
    "spectral", "kde", "ets", "arima", "svm", "gp", "umap", "mlp", "lm"};

/* Tiers per family, as bit sets over sb_numeric_mode: every family is
 * identical-only, the tree families included (see the header comment). */
static const unsigned k_family_tiers[SB_FAMILY_COUNT_] = {1u, 1u, 1u, 1u, 1u, 1u, 1u, 1u, 1u, 1u, 1u, 1u, 1u, 1u, 1u, 1u, 1u, 1u};

/* The one wording of the refusal of a mode that is not built; `what` names
 * where the mode came from ("numeric_mode" or "SAMEBITS_NUMERIC_MODE"). */
static sb_status refuse_unbuilt(const char *what, sb_numeric_mode mode) {
    return sb_fail(SB_ERR_MODE_UNSUPPORTED,
                   "%s=%s is not built: only identical is; see docs/numeric-profile.md", what,
                   k_mode_names[mode]);
}

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
    if (parsed != SB_MODE_IDENTICAL) return refuse_unbuilt("SAMEBITS_NUMERIC_MODE", parsed);
    *out = parsed;
    return SB_OK;
}

sb_status sb_set_numeric_mode(const char *name) {
    sb_numeric_mode m;
    sb_status st = sb_numeric_mode_parse(name, &m);
    if (st != SB_OK) return st;
    if (m != SB_MODE_IDENTICAL) return refuse_unbuilt("numeric_mode", m);
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
                   "numeric_mode=%s is not built: only identical is; see docs/numeric-profile.md "
                   "(family '%s')",
                   k_mode_names[mode], k_family_names[family]);
}
