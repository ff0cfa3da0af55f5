/* gbdt_params.h: gradient boosting parameters, parsed and checked by name. */
#ifndef SB_GBDT_PARAMS_H
#define SB_GBDT_PARAMS_H
#include "../../core/internal.h"
#include "../../device/device.h"

enum sb_metric {
    SB_METRIC_RMSE = 0,
    SB_METRIC_MAE = 1,
    SB_METRIC_LOGLOSS = 2,
    SB_METRIC_ERROR = 3,
    SB_METRIC_AUC = 4,
    SB_METRIC_MLOGLOSS = 5,
    SB_METRIC_MERROR = 6,
    SB_METRIC_NDCG = 7, /* ranking: NDCG@metric_at (gbdt/rank.c) */
    SB_METRIC_MAP = 8,  /* ranking: MAP@metric_at */
    SB_METRIC_L2 = 9,   /* the mean squared error (LightGBM's l2; rmse is its square root) */
    SB_METRIC_HUBER = 10,    /* the mean Huber loss at delta = alpha */
    SB_METRIC_QUANTILE = 11, /* the mean pinball loss at level alpha */
    SB_METRIC_POISSON = 12,  /* the mean Poisson negative log-likelihood (log link) */
    SB_METRIC_GAMMA = 13,    /* the mean gamma negative log-likelihood, dispersion 1 (log link) */
    SB_METRIC_TWEEDIE = 14   /* the mean Tweedie negative log-likelihood (log link) */
};

#define SB_GBDT_MAX_METRICS 16
#define SB_GBDT_MAX_CONS 8192 /* monotone_constraints entries; interaction sets' entries, all sets together */
#define SB_GBDT_MAX_SETS 64   /* interaction sets (trees/cons.h: one bit each) */

typedef struct gbdt_params {
    int32_t objective;        /* sb_objective */
    int32_t num_class;        /* multiclass: K (0 = from the labels) */
    int32_t n_estimators;
    float learning_rate;
    int32_t num_leaves;
    int32_t max_depth;        /* -1: none */
    int32_t depthwise;
    int32_t max_bin;
    int64_t min_samples_leaf;
    float min_child_weight;
    float reg_lambda;
    float reg_alpha;          /* lambda_l1: L1 on leaf values and split gains */
    float alpha;              /* huber: delta; quantile: the level (LightGBM's alpha, 0.9) */
    float tweedie_power;      /* tweedie_variance_power, in (1, 2); 1.5 */
    float poisson_max_delta_step; /* 0.7 */
    float min_split_gain;
    float subsample;
    int32_t bagging_freq;     /* a bag is kept this many iterations (LightGBM's bagging_freq); 1 by default */
    float colsample;
    uint64_t seed;
    int32_t has_base_score;
    float base_score;
    int32_t no_boost_from_average; /* boost_from_average=false: every margin starts at 0 */
    int32_t early_stopping_rounds;
    int32_t metric;           /* sb_metric; -1: the objective's default */
    int32_t eval_period;      /* log every N iterations to stderr; 0: silent */
    int32_t numeric_mode;
    int64_t bin_sample_rows;
    int32_t device;           /* SB_GBDT_DEVICE_*; not part of the model */
    int32_t distributed;      /* SB_GBDT_DIST_*: 0 one process, mpi or nccl (docs/distributed.md); not in the model */
    int32_t dist_given;       /* distributed_rows=given: each rank's dataset is its own rows; not in the model */
    /* ranking (objective lambdarank or rank_pairwise; LightGBM's names) */
    int32_t metric_at;        /* eval_at: the k of ndcg@k and map@k */
    int32_t rank_truncation;  /* lambdarank_truncation_level */
    int32_t rank_norm;        /* lambdarank_norm */
    float rank_sigma;         /* sigmoid */
    int32_t ngain;            /* label_gain entries */
    float label_gain[64];
    /* Every metric reported (LightGBM's comma lists: metric=auc,binary_logloss,
     * eval_at=1,3,5): metrics[0] is metric above and decides early stopping;
     * the others are logged beside it and are not part of the model. */
    int32_t train_metric;     /* with validation data, log the training rows' metrics too (not in the model) */
    int32_t force_row_wise;   /* LightGBM's names for the CPU histograms' layout: row-major bins for */
    int32_t force_col_wise;   /* scattered nodes always, or never (default: by the data's shape); speed
                               * only, the sums are exact either way; a run parameter, not in the model */
    int32_t progress;         /* progress=true: a progress line on standard error (rounds, rate, ETA); a
                               * run parameter, not in the model */
    int32_t stop_on_any;      /* first_metric_only=false: early stopping watches every metric (LightGBM's
                               * default); 0 (first_metric_only=true, samebits' default): the first only */
    int32_t nmetrics;
    int32_t metrics[SB_GBDT_MAX_METRICS];
    int32_t metrics_at[SB_GBDT_MAX_METRICS]; /* ranking: the k; 0 otherwise */
    /* as parsed, before sb_gbdt_params_parse resolves them: */
    int32_t ngiven, given_at[SB_GBDT_MAX_METRICS]; /* metric list; at 0: from eval_at */
    int32_t neval_at, eval_at[SB_GBDT_MAX_METRICS];
    /* per-node rules of the split search (src/models/trees/cons.h) */
    int32_t nmono;            /* monotone_constraints entries (0: none given) */
    int32_t mono_any;         /* 1 when some entry is not 0 */
    int8_t mono[SB_GBDT_MAX_CONS];
    int32_t nsets;            /* interaction_constraints: set s is set_feat[set_start[s] .. set_start[s + 1]) */
    int32_t set_start[SB_GBDT_MAX_SETS + 1];
    int32_t set_feat[SB_GBDT_MAX_CONS];
    float bynode;             /* feature_fraction_bynode (colsample_bynode); 1: every feature */
    /* boosting=dart (Rashmi and Gilad-Bachrach, "DART: Dropouts meet Multiple
     * Additive Regression Trees", AISTATS 2015; gbdt.c, "DART") */
    int32_t dart;
    float drop_rate;          /* 0.1 */
    int32_t max_drop;         /* 50; <= 0: no limit */
    float skip_drop;          /* 0.5 */
    int32_t uniform_drop;     /* 0: an iteration's chance follows its weight */
    int32_t xgboost_dart_mode;
    int32_t has_drop_seed;
    uint64_t drop_seed;       /* the draws' seed when given; else seed */
    /* class weights of objective=binary (LightGBM's names), folded into the
     * training rows' weights on the host before any device sees them (gbdt.c,
     * fold_class_weights); written to the model's text only when not the default */
    float scale_pos_weight;   /* the positive rows' weight factor; 1 */
    int32_t is_unbalance;     /* the minority class's rows weighted by the ratio of the row counts; 0 */
    /* categorical features (LightGBM's names and defaults; kernels/tree.h,
     * sb_k_cat_scan): cat_spec as given (indices "0,3" or "name:a,b"),
     * resolved against the training data into ncat features catf[] */
    char cat_spec[2048];
    int32_t ncat;
    int32_t catf[SB_GBDT_MAX_CONS];
    int32_t max_cat_to_onehot; /* 4 */
    int32_t max_cat_threshold; /* 32 */
    float cat_smooth;          /* 10 */
    float cat_l2;              /* 10 */
    int64_t min_data_per_group; /* 100 */
} gbdt_params;

/* 1 for the ranking objectives. */
int sb_gbdt_is_ranking(int32_t objective);

/* Where trees are grown (sb_device_kind): the CPU grower, or a tree device (src/models/trees/tdev.h). */
/* distributed=: MPI for every collective, or NCCL for the histograms on CUDA GPUs (MPI for the rest). */
enum { SB_GBDT_DIST_MPI = 1, SB_GBDT_DIST_NCCL = 2 };
enum { SB_GBDT_DEVICE_CPU = SB_DEVICE_CPU, SB_GBDT_DEVICE_CPU_BATCHED = SB_DEVICE_CPU_BATCHED, SB_GBDT_DEVICE_CUDA = SB_DEVICE_CUDA, SB_GBDT_DEVICE_OPENCL = SB_DEVICE_OPENCL };

/* Defaults, then every key of params applied; an unknown key, a bad value or
 * an unsupported device is a named error. */
sb_status sb_gbdt_params_parse(const sb_params *params, gbdt_params *out);

/* p->catf := the features cat_spec names, ascending, among the nf features
 * named names (NULL: unnamed); a named error for an index out of range, an
 * unknown name, a list that does not parse, or a categorical feature that
 * also carries a monotone constraint. */
sb_status sb_gbdt_resolve_categorical(gbdt_params *p, int32_t nf, char *const *names);

/* The effective parameters as canonical text: "key=value\n" sorted by key. */
sb_status sb_gbdt_params_text(const gbdt_params *p, char **out);

const char *sb_metric_name(int32_t metric);
const char *sb_objective_name(int32_t objective);
/* The one float parameter objective p->objective passes to its gradients
 * (kernels/tree.h: sb_k_row_gradients); 0 for the others. */
float sb_gbdt_obj_param(const gbdt_params *p);

#endif
