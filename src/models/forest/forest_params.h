/* forest_params.h: random forest and Extra Trees parameters, parsed and checked
 * by name (scikit-learn's names and defaults where the meaning is the same). */
#ifndef SB_FOREST_PARAMS_H
#define SB_FOREST_PARAMS_H
#include "../../core/internal.h"
#include "../../device/device.h"

#define SB_FOREST_MAX_CLASS 1024

enum { SB_CRIT_GINI = 0, SB_CRIT_ENTROPY = 1, SB_CRIT_SQUARED = 2 };
/* Where the trees grow: the device layer's kinds (src/device/device.h). */
enum { SB_FOREST_DEVICE_CPU = SB_DEVICE_CPU, SB_FOREST_DEVICE_CUDA = SB_DEVICE_CUDA, SB_FOREST_DEVICE_CPU_BATCHED = SB_DEVICE_CPU_BATCHED, SB_FOREST_DEVICE_OPENCL = SB_DEVICE_OPENCL };
enum { SB_MAXF_SQRT = 0, SB_MAXF_LOG2 = 1, SB_MAXF_ALL = 2, SB_MAXF_COUNT = 3, SB_MAXF_FRACTION = 4 };
/* class_weight: none, "balanced" (over the training set), "balanced_subsample"
 * (over each tree's bootstrap), or explicit per-class weights "k:w;k:w". */
enum { SB_CW_NONE = 0, SB_CW_BALANCED = 1, SB_CW_SUBSAMPLE = 2, SB_CW_LIST = 3 };

typedef struct forest_params {
    int32_t extra;            /* 0: random forest; 1: Extra Trees */
    int32_t classification;   /* 1: class frequencies; 0: regression */
    int32_t criterion;        /* SB_CRIT_* */
    int32_t n_estimators;
    int32_t max_depth;        /* -1: none */
    int64_t min_samples_split, min_samples_leaf;
    int32_t max_features_mode;
    int32_t max_features_count;
    float max_features_fraction;
    int32_t bootstrap;
    float max_samples;        /* fraction of the rows a bootstrap draws; 0: all */
    uint64_t seed;
    int32_t max_bin;
    int64_t bin_sample_rows;
    int32_t numeric_mode;
    int32_t device;           /* SB_FOREST_DEVICE_*: where the trees grow (not in the model: every device gives its bits) */
    int32_t distributed;      /* 1: distributed=mpi (docs/distributed.md); a run setting, not in the model */
    int32_t dist_given;       /* distributed_rows=given (refused for forests by name) */
    float min_weight_fraction_leaf; /* [0, 0.5]: a child's share of the tree's total weight */
    int32_t class_weight;           /* SB_CW_* */
    int32_t cw_max;                 /* SB_CW_LIST: the largest class listed */
    float cw[SB_FOREST_MAX_CLASS];  /* SB_CW_LIST: each class's weight (1 when not listed) */
    uint8_t cw_listed[SB_FOREST_MAX_CLASS];
} forest_params;

/* Defaults (by family and task), then every key of params; an unknown key, a
 * bad value or an unsupported device is a named error. */
sb_status sb_forest_params_parse(const sb_params *params, forest_params *out);

/* The effective parameters as canonical text: "key=value\n" sorted by key. */
sb_status sb_forest_params_text(const forest_params *p, char **out);

/* Warm start's parameter check: 0 when two parameter texts ("key=value\n"
 * lines sorted by key, as a forest model records them) agree on every line
 * but n_estimators; otherwise 1, with the first line that differs written to
 * init_line (a's) and new_line (b's), each "(none)" where that text has no
 * such line, both cut to cap bytes. */
int sb_forest_params_differ(const char *a, const char *b, char *init_line, char *new_line, size_t cap);

/* Warm start's checks shared by every forest (named errors): init is a
 * model of family fam (an sb_family), of this library's profile and of nf
 * features. */
sb_status sb_forest_warm_kind(const sb_model *init, int32_t fam, int32_t nf);
/* ... and was fitted with the parameter text text but n_estimators, holding
 * kept trees (estimators) of the n_estimators asked for. */
sb_status sb_forest_warm_params(const sb_model *init, const char *text, int64_t n_estimators, int32_t kept);

/* Features tried per node for nf features (at least 1, at most nf). */
int32_t sb_forest_mtry(const forest_params *p, int32_t nf);

/* distributed_rows=given for the forests (forest.c): this rank's rows are its
 * whole table; *roff its first row in the ranks' concatenation; named errors
 * when the ranks disagree on columns or weights or one holds no row. */
struct sb_dist;
struct sb_table;
sb_status sb_forest_dist_given(const struct sb_dist *d, const struct sb_table *t, struct sb_table *blk,
                               int64_t *roff, int *coll);

/* Train a forest (declared in samebits.h as well). */
#endif
