/*
 * samebits.h: the product API of samebits: status codes and errors, version and
 * build facts, numeric modes, parameters, threads, datasets, training, models,
 * prediction and model digests.
 *
 * samebits trains and predicts bitwise identically on every certified machine.
 * Certification and test control (identity cards, pinned fixtures, the Philox
 * and SHA-256 primitives) are in the second public header, samebits_cert.h,
 * which includes this one (docs/api.md).
 *
 * Conventions of this API:
 *   - every call that can fail returns an sb_status; SB_OK is 0, anything else
 *     is a named error. A function that returns something else says why in its
 *     comment, after the words "Not a status:" (tests/check_headers.py holds
 *     both headers to this);
 *   - after a non-OK status, sb_last_error() gives this thread's message;
 *   - handles are opaque; each *_create has a *_free, and freeing NULL is a no-op;
 *   - the library never keeps a pointer into caller memory after a call returns;
 *   - output buffers belong to the caller; calls that fill one take its capacity
 *     and report the length they need (pass cap 0 to query).
 */
#ifndef SAMEBITS_H
#define SAMEBITS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define SB_API __declspec(dllexport)
#else
#define SB_API __attribute__((visibility("default")))
#endif

#define SB_VERSION_MAJOR 0
#define SB_VERSION_MINOR 1
#define SB_VERSION_PATCH 0
#define SB_VERSION_STRING "0.1.0"
/* The numeric profile this library implements (docs/numeric-profile.md). */
#define SB_PROFILE_VERSION "sb-identical-v9"

/* ---- status and errors -------------------------------------------------- */

typedef enum sb_status {
    SB_OK = 0,
    SB_ERR_INVALID_ARGUMENT = 1, /* a parameter is out of its domain or NULL */
    SB_ERR_INVALID_INPUT = 2,    /* data, a file or a parameter string is malformed */
    SB_ERR_OUT_OF_MEMORY = 3,
    SB_ERR_IO = 4,               /* a file could not be read or written */
    SB_ERR_MODE_UNSUPPORTED = 5, /* refusal: the numeric tier asked for is not built */
    SB_ERR_IDENTITY_REFUSED = 6, /* refusal: this configuration cannot meet the profile */
    SB_ERR_BACKEND_UNAVAILABLE = 7, /* the device asked for is not built or not present */
    SB_ERR_LIMIT = 8,            /* an input exceeds a documented limit */
    SB_ERR_MISMATCH = 9,         /* a comparison of cards or digests found a difference */
    SB_ERR_NOT_FOUND = 10,       /* a named fixture, stage or key does not exist */
    SB_ERR_INTERNAL = 11
} sb_status;

/* The status's own name, e.g. "SB_ERR_MODE_UNSUPPORTED".
 * Not a status: naming cannot fail; a value outside the enum is named
 * "SB_ERR_UNKNOWN_STATUS", so the result is never NULL. */
SB_API const char *sb_status_name(sb_status status);

/* This thread's message for the last non-OK status returned to it ("" if none).
 * The pointer stays valid until this thread's next samebits call.
 * Not a status: the message is the answer, and reading it cannot fail (it is
 * thread-local storage, never allocated). */
SB_API const char *sb_last_error(void);

/* ---- version and build ---------------------------------------------------- */

/* Library version, e.g. "0.1.0" (SB_VERSION_STRING of the built library, which
 * can differ from this header's when a program loads another build).
 * Not a status: a constant string compiled into the library; cannot fail. */
SB_API const char *sb_version(void);
/* Numeric profile version, e.g. "sb-identical-v9".
 * Not a status: a constant string compiled into the library; cannot fail. */
SB_API const char *sb_profile_version(void);

/* Build facts as "key: value" lines (compiler, target, flags, contraction, sabotage).
 * Writes at most cap bytes including the NUL into buf; *needed gets the full size. */
SB_API sb_status sb_build_info(char *buf, size_t cap, size_t *needed);

/* What a device backend sees, as text (the same buffer rules as sb_build_info):
 * "opencl": every OpenCL platform and device, one a line ("P:D platform /
 * device (OpenCL C version): usable" or "refused, <reason>", the one
 * device=opencl takes marked [selected]), or why there is none; "cuda": the
 * GPU line of the build info. It opens the OpenCL loader: not for hot paths. */
SB_API sb_status sb_device_info(const char *device, char *buf, size_t cap, size_t *needed);

/* ---- numeric modes -------------------------------------------------------- */

/* Only SB_MODE_IDENTICAL is built. The other two names are kept because model
 * files store the index (0..2) and older models carry them; asking for either
 * is the refusal SB_ERR_MODE_UNSUPPORTED ("numeric_mode=fast is not built:
 * only identical is"), never identical run under another label. */
typedef enum sb_numeric_mode {
    SB_MODE_IDENTICAL = 0,     /* same bits on every certified machine (default; the only one built) */
    SB_MODE_DETERMINISTIC = 1, /* a name only: refused (not built) */
    SB_MODE_FAST = 2           /* a name only: refused (not built) */
} sb_numeric_mode;

/* Model families; every one is identical-only (docs/numeric-profile.md). */
typedef enum sb_family {
    SB_FAMILY_GBDT = 0,
    SB_FAMILY_RANDOM_FOREST = 1,
    SB_FAMILY_EXTRA_TREES = 2,
    SB_FAMILY_ISOLATION_FOREST = 3,
    SB_FAMILY_KMEANS = 4,
    SB_FAMILY_LINEAR = 5,
    SB_FAMILY_KNN = 6,
    SB_FAMILY_DBSCAN = 7,
    SB_FAMILY_AGGLOMERATIVE = 8,
    SB_FAMILY_SPECTRAL = 9,
    SB_FAMILY_KDE = 10,
    SB_FAMILY_ETS = 11, /* exponential smoothing (a batch of series; sb_ets_save) */
    SB_FAMILY_ARIMA = 12, /* ARIMA (a batch of series; sb_arima_* calls) */
    SB_FAMILY_SVM = 13, /* support vector classification and regression (sb_svm_fit) */
    SB_FAMILY_GP = 14,  /* gaussian process regression (sb_gp_save) */
    SB_FAMILY_UMAP = 15, /* UMAP (an embedding of the training rows; sb_umap_fit, sb_umap_fit_transform) */
    SB_FAMILY_MLP = 16,  /* multi-layer perceptrons (sb_mlp_fit) */
    SB_FAMILY_LM = 17,   /* the byte-level language model (sb_lm_create) */
    SB_FAMILY_COUNT_ = 18
} sb_family;

/* Parse "identical" | "deterministic" | "fast" (a name, not a promise that the
 * mode is built); an unknown name is SB_ERR_INVALID_ARGUMENT with a message
 * that lists the valid names. */
SB_API sb_status sb_numeric_mode_parse(const char *name, sb_numeric_mode *out);
/* The mode's name, "identical" | "deterministic" | "fast".
 * Not a status: naming cannot fail; a value outside the enum is "unknown",
 * never NULL. */
SB_API const char *sb_numeric_mode_name(sb_numeric_mode mode);
/* The family's name, e.g. "gbdt", "random_forest".
 * Not a status: naming cannot fail; a value outside the enum is "unknown",
 * never NULL. */
SB_API const char *sb_family_name(sb_family family);

/* Process-wide default mode. Initialised from SAMEBITS_NUMERIC_MODE on first use
 * (an invalid value there makes the first mode call fail by name, and
 * "deterministic" or "fast" there, or given to sb_set_numeric_mode, is the
 * refusal SB_ERR_MODE_UNSUPPORTED: only identical is built). */
SB_API sb_status sb_set_numeric_mode(const char *name);
SB_API sb_status sb_get_numeric_mode(sb_numeric_mode *out);

/* Whether family offers mode: SB_OK for identical, else the refusal
 * SB_ERR_MODE_UNSUPPORTED (no family offers another mode). */
SB_API sb_status sb_family_supports_mode(sb_family family, sb_numeric_mode mode);

/* ---- parameters ------------------------------------------------------------ */

/* A bag of key=value parameters, as every estimator takes them. Keys and values
 * are copied. "numeric_mode" overrides the process default for one estimator. */
typedef struct sb_params sb_params;

SB_API sb_status sb_params_create(sb_params **out);
/* Not a status: freeing cannot fail, and NULL is a no-op. */
SB_API void sb_params_free(sb_params *params);
SB_API sb_status sb_params_set(sb_params *params, const char *key, const char *value);
/* Parse "k1=v1 k2=v2" (spaces or commas between pairs). */
SB_API sb_status sb_params_parse(sb_params *params, const char *text);
/* Value of key, or SB_ERR_NOT_FOUND. The pointer lives as long as params is unchanged. */
SB_API sb_status sb_params_get(const sb_params *params, const char *key, const char **value);

/* The mode an estimator of family runs in: params' numeric_mode if set, else the
 * process default; a tier that is not built is refused (never downgraded). */
SB_API sb_status sb_params_resolve_mode(const sb_params *params, sb_family family,
                                        sb_numeric_mode *used);

/* ---- threads --------------------------------------------------------------- */

#define SB_MAX_THREADS 1024

/* Worker threads for CPU work: 1..SB_MAX_THREADS, or 0 to return to the default
 * (SAMEBITS_NUM_THREADS if set, else all online cores). Results never depend on it. */
SB_API sb_status sb_set_num_threads(int32_t n);
/* The thread count in force; an invalid SAMEBITS_NUM_THREADS is
 * SB_ERR_INVALID_ARGUMENT naming the variable and the value. */
SB_API sb_status sb_get_num_threads(int32_t *out);
/* The one rule for a thread count given as text (SAMEBITS_NUM_THREADS, a CLI's
 * --threads, a binding's setting): a decimal integer in 1..SB_MAX_THREADS, else
 * SB_ERR_INVALID_ARGUMENT naming source (e.g. "--threads") and the text. Every
 * fit, prediction and fixture run refuses an invalid SAMEBITS_NUM_THREADS the
 * same way before any work (unless sb_set_num_threads chose a count, which then
 * replaces the variable); none falls back to one thread. */
SB_API sb_status sb_parse_num_threads(const char *text, const char *source, int32_t *out);

/* ---- identity cards, as training takes them ----------------------------- */

/* An identity card records a run's stages as digests (docs/cards.md). Training
 * takes one, or NULL for no stage hashing; creating, reading and comparing
 * cards is certification control, declared in samebits_cert.h. */
typedef struct sb_card sb_card;

/* ---- datasets ---------------------------------------------------------------- */

/* A table of float32 features (NaN = missing) with optional labels and weights.
 * The dataset owns copies of everything given to it, except the features of a
 * view (sb_dataset_view_matrix). */
typedef struct sb_dataset sb_dataset;

/* Copy a row-major nrows x ncols matrix. Infinities are values; NaN is missing. */
SB_API sb_status sb_dataset_from_matrix(const float *x, int64_t nrows, int32_t ncols,
                                        sb_dataset **out);
/* sb_dataset_from_matrix without the copy: the dataset reads x in place. The
 * caller keeps x alive and unchanged until sb_dataset_free; the library never
 * writes or frees it, and no model keeps a pointer into it (a fit reads the
 * matrix, a model holds its own arrays). Labels and weights are still copied. */
SB_API sb_status sb_dataset_view_matrix(const float *x, int64_t nrows, int32_t ncols,
                                        sb_dataset **out);
SB_API sb_status sb_dataset_set_label(sb_dataset *d, const float *y, int64_t n);
#define SB_MAX_TARGETS 65536
/* Several targets a row (y: nrows x ntargets, row-major, copied; 1 <= ntargets
 * <= 65536): LinearRegression and Ridge fit one coefficient row per target,
 * each the bits of its own single-target fit; every other estimator refuses
 * a dataset with more than one. ntargets = 1 is sb_dataset_set_label. */
SB_API sb_status sb_dataset_set_targets(sb_dataset *d, const float *y, int64_t nrows, int32_t ntargets);
SB_API sb_status sb_dataset_set_weight(sb_dataset *d, const float *w, int64_t n);
/* Weights from a file of one number a line (as LightGBM's .weight files;
 * docs/io.md): exactly one finite weight >= 0 per data row, blank lines
 * skipped; anything else, a NUL byte or a line over 4,096 bytes is refused by
 * name, and d keeps the weights it had. */
SB_API sb_status sb_dataset_read_weight_file(sb_dataset *d, const char *path);
/* Initial scores (LightGBM's init_score, XGBoost's base_margin): gradient
 * boosting starts each row's margins there instead of at the base score, and
 * the model holds the trees only (its base score 0; prediction adds no initial
 * score, as LightGBM's). n is the rows (one score a row) or rows x K (a
 * multiclass model's K classes, row by row); every score finite. The file
 * form reads one score a line (LightGBM's DATA.init), rows x K lines for K
 * classes. */
SB_API sb_status sb_dataset_set_init_score(sb_dataset *d, const float *s, int64_t n);
SB_API sb_status sb_dataset_read_init_file(sb_dataset *d, const char *path);
SB_API sb_status sb_dataset_set_feature_names(sb_dataset *d, const char *const *names, int32_t n);
/* Query groups for the ranking objectives (docs/ranking.md): sizes of the
 * consecutive queries (as LightGBM's group / .query files; they must add up to
 * the row count), a query id per row (each run of equal consecutive ids is one
 * query), a .query file of sizes, or a feature column of query ids (removed from
 * the features). */
SB_API sb_status sb_dataset_set_group(sb_dataset *d, const int64_t *sizes, int64_t nq);
SB_API sb_status sb_dataset_set_qid(sb_dataset *d, const int32_t *qid, int64_t n);
SB_API sb_status sb_dataset_read_query_file(sb_dataset *d, const char *path);
SB_API sb_status sb_dataset_group_column(sb_dataset *d, const char *name);
/* LightGBM's weight_column and ignore_column: the feature column named name
 * becomes the row weights (finite, >= 0; data that has weights already is
 * refused) or is dropped; either way it leaves the features. A matrix the
 * dataset only views (sb_dataset_view_matrix) is copied, never written. */
SB_API sb_status sb_dataset_weight_column(sb_dataset *d, const char *name);
SB_API sb_status sb_dataset_drop_column(sb_dataset *d, const char *name);
/* Feature k's name (0-based; the pointer lives until the dataset changes):
 * a file's header, or f0.. for a headerless one. */
SB_API sb_status sb_dataset_feature_name(const sb_dataset *d, int32_t k, const char **name);
/* Read a file: format "csv", "libsvm" or NULL to detect; label is the CSV label
 * column's name (NULL: none, as for prediction; ignored for libsvm). */
SB_API sb_status sb_dataset_read(const char *path, const char *format, const char *label,
                                 sb_dataset **out);
SB_API sb_status sb_dataset_shape(const sb_dataset *d, int64_t *nrows, int32_t *ncols);
/* Not a status: freeing cannot fail, and NULL is a no-op. */
SB_API void sb_dataset_free(sb_dataset *d);

/* ---- models ------------------------------------------------------------------ */

typedef struct sb_model sb_model;

/* Train gradient-boosted trees. params: see docs/gbdt.md (an unknown or
 * unsupported key is SB_ERR_INVALID_ARGUMENT naming it). valid may be NULL; card
 * may be NULL (no stage hashing). */
SB_API sb_status sb_gbdt_fit(const sb_params *params, const sb_dataset *train,
                             const sb_dataset *valid, sb_card *card, sb_model **out);
/* Data-parallel training (docs/distributed.md). With the parameter
 * distributed=mpi, every rank of an MPI job (mpirun -np N) calls sb_gbdt_fit
 * (or _multi) with the same parameters and the same full training dataset;
 * rank k of N trains on global rows [floor(k n / N), floor((k + 1) n / N))
 * (ranking: the rows of queries [floor(k G / N), floor((k + 1) G / N)));
 * with distributed_rows=given each rank passes its own rows instead and the
 * training set is their concatenation in rank order. In both cases
 * histograms are all-reduced as exact integers, and every rank returns the
 * model a single process fits on all n rows, byte for byte (validation sets:
 * every rank passes the whole set; continued training, DART and initial
 * scores, categorical features, quantile and ranking too). A configuration
 * it cannot run that way (a card; distributed=nccl off device=cuda) is SB_ERR_INVALID_ARGUMENT
 * naming it, before anything is exchanged. A failure only one rank can
 * see (bad rows in its block, out of memory) ends the whole job by name
 * rather than leave the others waiting. This call answers this process's rank and the job's rank
 * count, starting the engine ("mpi": MPI_Init through the MPI shim
 * libsamebits_mpi.so, opened with dlopen; finalized at exit) on the first
 * call; a program calls it to let rank 0 alone write the model. No shim or
 * no MPI: SB_ERR_BACKEND_UNAVAILABLE saying how to get one. Each rank may
 * train on its own device (device=cuda, opencl, cpu-batched). Engine "nccl"
 * (distributed=nccl, device=cuda only: the histograms summed in GPU memory by
 * NCCL, opened with dlopen) loads NCCL first (absent: SB_ERR_BACKEND_UNAVAILABLE)
 * and then starts MPI as "mpi" does. */
SB_API sb_status sb_distributed_info(const char *engine, int32_t *rank, int32_t *size);
/* Ends every rank of the job (MPI_Abort with code) after a failure of this
 * rank that the others cannot see (a file it could not read, a model it
 * could not save): without it they would wait for this rank in their next
 * collective, and this rank in MPI's finalization, for ever. A program under
 * distributed=mpi calls it on any error exit after sb_distributed_info.
 * Not a status: with an engine started it does not return; without one it
 * is a no-op. */
SB_API void sb_distributed_abort(int code);
/* Check gradient boosting's parameters without any data: SB_OK, or the named
 * error sb_gbdt_fit would return for these parameters (an unknown key, a bad
 * value, two aliases of one key, a backend this build lacks), so that a caller
 * can refuse them before reading a large file. */
SB_API sb_status sb_gbdt_params_check(const sb_params *params);
/* Continued training (LightGBM's init_model): n_estimators more iterations on
 * top of init's trees, on the same training data. The margins start at init's
 * predictions (the base score plus each tree's leaf in tree order: the same
 * additions init's own fit made), the iterations count on from init's, so
 * every draw keyed by the iteration (bagging, columns) is the uninterrupted
 * fit's: init trained m iterations and continued n on any device equals, byte
 * for byte, the m + n iteration fit with the same parameters (its text
 * records n_estimators = m + n). init must be a gradient boosting model of
 * this library's profile, objective, class and feature counts (named errors
 * otherwise); the caller keeps it. */
SB_API sb_status sb_gbdt_fit_continue(const sb_params *params, const sb_dataset *train, const sb_dataset *valid,
                                      const sb_model *init, sb_card *card, sb_model **out);
/* Gradient boosting with several validation sets (LightGBM's valid_sets):
 * valid[0..nvalid) (nvalid 0..4096; the caller keeps them), each named
 * names[s] (1..127 bytes; names or names[s] NULL: "valid_<s>", LightGBM's
 * default). A set that is the train pointer itself is the training set
 * (named "training" by default): its metrics come from the training rows'
 * own margins and it never decides early stopping. Every other set must have
 * the training data's feature count and valid labels (named errors naming the
 * set, before any training). Early stopping (early_stopping_rounds) follows
 * LightGBM: every (set, metric) pair keeps its own best iteration (only the
 * first metric, on every set, with first_metric_only=true, the default here),
 * and the first pair, set by set, that has not improved for that many rounds
 * stops the fit at its best iteration. The sets change no tree unless early
 * stopping cuts, so the model's bytes with one set are sb_gbdt_fit's (which,
 * like sb_gbdt_fit_continue, is this call with nvalid 0 or 1). The metric
 * log keeps every set (sb_model_get_eval_set_name). init: NULL for a fresh
 * fit, else continued training as sb_gbdt_fit_continue. card may be NULL. */
SB_API sb_status sb_gbdt_fit_multi(const sb_params *params, const sb_dataset *train, const sb_dataset *const *valid,
                                   int32_t nvalid, const char *const *names, const sb_model *init, sb_card *card,
                                   sb_model **out);

/* Train a random forest or Extra Trees (Breiman 2001; Geurts et al. 2006) on
 * the CPU. params: docs/forest.md (model=random_forest|extra_trees,
 * objective=classification|regression, scikit-learn's names: n_estimators,
 * criterion, max_depth, min_samples_split, min_samples_leaf, max_features,
 * bootstrap, max_samples, random_state, min_weight_fraction_leaf,
 * class_weight=balanced|balanced_subsample|k:w;k:w). The dataset's weights, if
 * set, are sample weights (finite, >= 0; held in fixed point, docs/forest.md).
 * Classification labels are class indices 0..K-1; the model's SB_PREDICT_PROBA
 * gives the K averaged class frequencies. card may be NULL. With
 * distributed=mpi (docs/distributed.md, "Forests") every rank of an MPI job
 * calls it with the same parameters and the same full dataset (or, with
 * distributed_rows=given, its own rows), trains on its block of rows by
 * sb_gbdt_fit's rule (node sums all-reduced as exact integers, bootstrap
 * draws keyed by global row) and returns the model one process fits, byte
 * for byte (sb_forest_fit_continue too); a device and a card are refused by
 * name (SB_ERR_INVALID_ARGUMENT), and a failure only one rank sees ends the
 * job by name. sb_isolation_forest_fit (and _continue) takes distributed=mpi
 * the same way (each tree's subsample drawn by global row on every rank, the
 * drawn rows' bins gathered). */
SB_API sb_status sb_forest_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out);

/* Warm start (scikit-learn's warm_start): a forest of params' n_estimators
 * whose first trees are init's and whose others are grown, each with its own
 * draws keyed by its index, so init fitted with m trees and continued to n
 * on any device equals, byte for byte, the n tree fit with the same data,
 * parameters and seed. n_estimators counts the whole forest (n >= m; n = m
 * grows nothing). A forest's leaves hold their mean divided by the tree
 * count, so init's trees keep their nodes and have their leaves valued anew
 * from their own samples of train (docs/forest.md, "Warm start"). init must
 * be a forest of this library's profile, of params' model and objective, of
 * train's feature and class counts, fitted with the same parameters but
 * n_estimators and device (named errors otherwise); the caller keeps it. */
SB_API sb_status sb_forest_fit_continue(const sb_params *params, const sb_dataset *train, const sb_model *init,
                                        sb_card *card, sb_model **out);

/* Out-of-bag predictions of a bootstrapped forest on its training data (the
 * same rows, in the same order): per row the average over the trees that did
 * not draw it of their class frequencies (K values) or means (1 value); NaN for
 * a row every tree drew. The bootstrap is recomputed from the model's seed. */
SB_API sb_status sb_forest_oob_predict(const sb_model *model, const sb_dataset *train, float *out, size_t cap,
                                       size_t *needed);

/* Train a linear model (docs/linear.md) with scikit-learn's names and
 * defaults: model=linear (LinearRegression), ridge, lasso, elasticnet,
 * logistic (LogisticRegression, binary or multinomial, L-BFGS) or pca; and
 * fit_intercept, alpha, l1_ratio, tol, max_iter, C, penalty, class_weight,
 * n_components, whiten, device=cpu|cuda|opencl|gpu. The dataset's label is the
 * target (logistic: class indices 0..K-1), its weights the sample weights. A
 * missing or infinite value is refused by name. Iterative fits that run out
 * of iterations still return the model; sb_model_get_int(m, "converged")
 * says so and "n_iter" how many ran. The same bits on every device. */
SB_API sb_status sb_linear_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out);

/* Train k-means (Lloyd's iterations; docs/cluster.md) with scikit-learn's
 * names and defaults: n_clusters (8), init=k-means++|random (k-means++:
 * greedy, 2 + floor(ln k) candidates a step), n_init (auto: 1 for k-means++,
 * 10 for random), max_iter (300), tol (1e-4, times the mean feature variance),
 * random_state (0), algorithm=lloyd|elkan (elkan: the same clustering, computed
 * by Lloyd's iterations here), device=cpu|cuda|opencl|gpu (the same bits on
 * every device; prediction too). init_centers: NULL, or n_clusters x features row-major
 * initial centers (copied; one run, init=array). The dataset's weights, if set,
 * are sample weights (finite, >= 0, positive sum); its label is not used. The
 * model's SB_PREDICT_VALUE is each row's cluster index, SB_PREDICT_RAW the
 * n x n_clusters squared distances the assignment compares, and
 * SB_PREDICT_TRANSFORM their square roots (scikit-learn's transform); arrays
 * "cluster_centers" and "inertia", integers "n_iter", "converged" and
 * "n_clusters" (sb_model_get_array, sb_model_get_int), and, on the fitted
 * model only (not in its file), the index array "labels": the fit's last
 * assignment of the training rows (sb_model_get_indices). card may be NULL. */
SB_API sb_status sb_kmeans_fit(const sb_params *params, const sb_dataset *train, const float *init_centers,
                               sb_card *card, sb_model **out);

/* Fit brute-force nearest neighbors (docs/neighbors.md) with scikit-learn's
 * names and defaults: task=neighbors|classification|regression (default:
 * classification when the dataset has a label, neighbors without),
 * n_neighbors (5), radius (1.0, radius_neighbors' default), weights=uniform|
 * distance, metric=minkowski (p=2 euclidean, p=1 manhattan)|euclidean|
 * manhattan (l1, cityblock)|cosine, algorithm=auto|brute|ball_tree|kd_tree
 * (every one the same exact neighbors, computed by brute force), leaf_size
 * (no effect), device (where the queries' float32 screen runs: the same
 * neighbors; manhattan has no screen and refuses a GPU by name). The rows (finite) and, for a supervised task, the
 * label are copied into the model; a classifier's labels are class indices
 * 0..9999. Neighbors are ordered by (exact distance, index), the same bits on
 * every machine. The model's SB_PREDICT_VALUE is the class index or the
 * regression value, SB_PREDICT_PROBA the classifier's n x classes
 * probabilities; integers "n_neighbors", "n_samples_fit", "n_classes" (a
 * classifier's; 0 otherwise), "task", "metric", "weights". card may be NULL. */
SB_API sb_status sb_knn_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out);

/* DBSCAN (Ester, Kriegel, Sander and Xu 1996; docs/cluster.md) with
 * scikit-learn's names and defaults: eps (0.5, > 0), min_samples (5),
 * metric=euclidean|minkowski (p=2, or p=1: manhattan)|manhattan|cosine,
 * algorithm and leaf_size (no effect: the exact neighborhoods by brute
 * force), device (where the neighborhoods' screen runs, the same ones;
 * manhattan refuses a GPU by name). The dataset's weights, if set, are sample weights (a core row's
 * neighborhood weighs at least min_samples). A row's neighborhood is every row
 * at distance <= eps, itself included (the nearest-neighbors family's exact
 * distances); border rows join the cluster of their lowest-index core
 * neighbor; clusters are numbered by the smallest row index they hold; noise
 * is -1. The model does not predict: index arrays "labels" and
 * "core_sample_indices" (sb_model_get_indices), the array "components" (the
 * core rows), integers "n_clusters", "n_core", "n_samples_fit". card may be NULL. */
SB_API sb_status sb_dbscan_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out);

/* Hierarchical agglomerative clustering (docs/cluster.md) with
 * scikit-learn's names and defaults: n_clusters (2; "none" with a
 * distance_threshold), distance_threshold (merges below it), linkage=ward|
 * complete|average|single, metric=euclidean, compute_full_tree and
 * compute_distances (accepted: the full tree and its distances are always
 * computed), device=cpu (a GPU refused by name). At most 40,000 rows (the
 * n x n distances are held in double). Each step merges the pair of least
 * (linkage distance, lower id, higher id), a cluster's id its smallest row.
 * The model does not predict: index arrays "labels" (clusters numbered by
 * smallest row) and "children" (scikit-learn's children_), integers
 * "n_clusters", "n_leaves"; the merge distances are the array "distances"
 * (float32 of the double distances). card may be NULL. */
SB_API sb_status sb_agglomerative_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out);

/* Spectral clustering (docs/cluster.md, "SpectralClustering") with
 * scikit-learn's names and defaults: n_clusters (8), affinity=rbf|
 * nearest_neighbors|precomputed (rbf: exp(-gamma |x - y|^2), gamma 1.0;
 * nearest_neighbors: each row's n_neighbors (10) nearest, itself included,
 * symmetrized; precomputed: the rows are a symmetric n x n affinity >= 0),
 * n_components (n_clusters), n_init (10) and random_state (0) of the k-means
 * on the embedding (random_state also seeds the eigensolver's start block),
 * assign_labels=kmeans, eigen_solver (accepted names; the block Lanczos
 * solver of docs/cluster.md computes the n_components eigenvectors on the
 * host for all of them), eigen_tol (its stop: every residual
 * ||M u - theta u|| <= eigen_tol; "auto" or 0: 1e-10), degree and coef0 (no
 * effect: no affinity here reads them), device=cpu|cuda|opencl|gpu (on a GPU
 * the k-means runs on the device; the same bits). At most 32768 rows (the
 * n x n float affinity). No sample weights. The model does not predict: the index array
 * "labels" (sb_model_get_indices), integers "n_clusters", "n_samples_fit".
 * card may be NULL. */
SB_API sb_status sb_spectral_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out);

/* UMAP (docs/umap.md; McInnes, Healy and Melville 2018) with umap-learn's
 * names and semantics: n_neighbors (15, 2..1024, counting the row itself; more than
 * the rows is clamped to n - 1, as umap-learn does), n_components (2),
 * metric=euclidean|cosine|manhattan (the neighbors family's exact distances;
 * the others refused by name), n_epochs (none: 500 up to 10,000 rows, 200
 * above), learning_rate (1.0), min_dist (0.1), spread (1.0),
 * set_op_mix_ratio (1.0), local_connectivity (1.0), repulsion_strength
 * (1.0), negative_sample_rate (5), init=spectral|random|array (array: the
 * n x n_components rows in init, which must be NULL otherwise),
 * random_state/seed (none = 0: every draw is Philox by key, never the
 * clock). A dataset with a label (supervised UMAP is not built) or sample
 * weights is refused by name. Writes the n x n_components embedding (row-major) to out, which
 * must hold cap >= n * n_components floats (*needed, if not NULL, gets that
 * count first; a smaller cap is SB_ERR_LIMIT before any work).
 * optimize=sequential (the default) applies the epochs' moves in place in
 * edge order, one thread; optimize=batched runs each epoch in 64 parts of
 * the edges, sums a part's moves per row as fixed-point integers and applies
 * them at the part's end, split over the threads or, with device=cuda|opencl, run on that GPU (a GPU device
 * with sequential epochs is refused by name). Either way the bits are the
 * same at every thread count, on every CPU and device. card may be NULL (the
 * stages' digests: neighbors, sigma, graph, a/b, init, epochs 1, 2, 4, ...,
 * the embedding). sb_umap_fit keeps the fit as a model (docs/umap.md). */
SB_API sb_status sb_umap_fit_transform(const sb_params *params, const sb_dataset *train, const float *init,
                                       sb_card *card, float *out, size_t cap, size_t *needed);
/* New rows embedded against a frozen fit: train and embedding (n x
 * n_components) as sb_umap_fit_transform took and gave them, params the
 * fit's. Each query row: its n_neighbors nearest training rows (the exact
 * search), memberships with local_connectivity - 1, the membership-weighted
 * mean of their embeddings as the start, then n_epochs / 3 epochs (None: 100
 * up to 10,000 training rows, 30 above) moving the query alone, its negative
 * samples drawn from the training rows by a key of the query's own values. A
 * row's result depends on that row alone: the same however the queries are
 * batched, at every thread count. out holds cap >= nqueries * n_components
 * floats (*needed gets that count). */
SB_API sb_status sb_umap_transform(const sb_params *params, const sb_dataset *train, const float *embedding,
                                   const sb_dataset *queries, float *out, size_t cap, size_t *needed);
/* The same fit kept as a model of family SB_FAMILY_UMAP (the frozen fit that
 * transform needs: a copy of the training rows, their embedding, a and b, the
 * parameters), which the version 2 model file holds (sb_model_save,
 * sb_model_digest: the digest of the file's bytes). Its embedding is
 * sb_umap_fit_transform's, bit for bit: the array "embedding" (n x
 * n_components) and "ab" (sb_model_get_array), the integers "n_samples_fit",
 * "n_components", "n_neighbors", "n_epochs" (resolved), "metric" (0 euclidean,
 * 1 cosine, 2 manhattan), "random_state" (sb_model_get_int). New rows are embedded by
 * sb_model_predict(m, queries, SB_PREDICT_TRANSFORM, ...): sb_umap_transform's
 * bits, a row's result its own however the rows are batched; every other
 * prediction kind is refused by name. card (may be NULL) gets the fit's stages
 * and then "umap.model_bytes". */
SB_API sb_status sb_umap_fit(const sb_params *params, const sb_dataset *train, const float *init, sb_card *card,
                             sb_model **out);

/* Kernel density estimation (docs/density.md) with scikit-learn's
 * KernelDensity names and semantics: kernel=gaussian|tophat|epanechnikov|
 * exponential|linear|cosine (gaussian), bandwidth (1.0; a positive finite
 * value, or scott = n^(-1/(d+4)) or silverman = (n (d+2) / 4)^(-1/(d+4)) of
 * the rows' shape, stored as the float32 bandwidth_), metric=euclidean (any
 * other refused by name), atol and rtol (only 0: the exact sum; any other
 * value refused by name), algorithm=auto|kd_tree|ball_tree, leaf_size and
 * breadth_first (accepted, no effect: they tune scikit-learn's trees),
 * device=cpu|cuda|opencl|gpu (checked: an absent backend refused by name;
 * the fit sums nothing, the device scores through sb_model_score_samples_on
 * and sb_model_score_on). The dataset's weights, if set, are
 * sample weights (finite, >= 0, positive sum). The rows (finite) are copied
 * into the model. Integers "n_samples_fit", "kernel" (0..5 in the order
 * above), "bandwidth_rule" (0 value, 1 scott, 2 silverman), "weighted"; the
 * array "bandwidth" (one value). card may be NULL. */
SB_API sb_status sb_kde_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out);

/* A kernel density model's log density of each row of queries (finite values
 * only, refused by name otherwise): the exact weighted sum over every
 * training row in index order (docs/density.md), -inf where a compact kernel
 * reaches no row; *needed gets the row count (cap 0 asks). The same bits on
 * every machine and thread count. Another family is SB_ERR_INVALID_ARGUMENT. */
SB_API sb_status sb_model_score_samples(const sb_model *m, const sb_dataset *queries, float *out, size_t cap,
                                        size_t *needed);
/* The sum of sb_model_score_samples' values (widened to double, added in
 * row order): scikit-learn's score, the total log-likelihood. */
SB_API sb_status sb_model_score(const sb_model *m, const sb_dataset *queries, double *out);
/* The same two on a device: "cpu" (or NULL), "cuda" (a build with CUDA=1
 * and a GPU), "opencl" (the device of SAMEBITS_OPENCL_DEVICE) or "gpu". The
 * bits are the CPU's: the kernel sums are the host's double operations in
 * the same order (kernels/kde.h, in the integer binary64 of kernels/f64.h).
 * An absent device is SB_ERR_BACKEND_UNAVAILABLE, by name. */
SB_API sb_status sb_model_score_samples_on(const sb_model *m, const sb_dataset *queries, const char *device,
                                           float *out, size_t cap, size_t *needed);
SB_API sb_status sb_model_score_on(const sb_model *m, const sb_dataset *queries, const char *device, double *out);
/* n_samples draws from a kernel density model (gaussian and tophat kernels
 * only; the others are refused by name, as scikit-learn): n_samples x
 * features floats, row-major; *needed gets the count (cap 0 asks). Each draw
 * is a pure function of (random_state, its index): a training row by weight,
 * then a gaussian offset of scale bandwidth_, or a uniform point of the ball
 * of radius bandwidth_ (docs/density.md). */
SB_API sb_status sb_model_sample(const sb_model *m, int64_t n_samples, uint64_t random_state, float *out, size_t cap,
                                 size_t *needed);

/* ---- exponential smoothing (docs/timeseries.md) -------------------------- */

/* A batch of fitted exponential smoothing models, one a series. Owned by the
 * caller: sb_ets_free. */
typedef struct sb_ets sb_ets;
/* Fit exponential smoothing (statsmodels' ExponentialSmoothing: simple, Holt's
 * additive and damped trends, Holt-Winters' additive and multiplicative
 * seasons) to nseries series at once: series i is y[offsets[i] ..
 * offsets[i+1]) (offsets: nseries + 1 ascending values from 0), float64, each
 * fitted on its own (the same bits whatever the batch, its position in it or
 * the thread count). params: trend=none|add, damped_trend, seasonal=none|add|
 * mul, seasonal_periods, and smoothing_level, smoothing_trend,
 * smoothing_seasonal, damping_trend to give a parameter instead of estimating
 * it. The initial states are always estimated; the SSE is minimized. A
 * hostile batch is refused by name before any work: a missing value (NaN or
 * infinite), a series shorter than the model needs (two full periods with a
 * season), a non-positive value under multiplicative seasonality. card may
 * be NULL. */
SB_API sb_status sb_ets_fit(const sb_params *params, const double *y, const int64_t *offsets, int64_t nseries,
                            sb_card *card, sb_ets **out);
SB_API sb_status sb_ets_nseries(const sb_ets *e, int64_t *nseries);
/* A series' array by statsmodels' name: "params" (smoothing_level,
 * smoothing_trend, smoothing_seasonal, damping_trend; NaN where the model has
 * none), "initial_level", "initial_trend" (NaN without a trend),
 * "initial_seasons" (seasonal_periods values, 0 without a season),
 * "final_states" (level, trend, the last period's seasons), "fittedvalues",
 * "resid", "sse", "aic", "aicc", "bic", "trace" (the optimizer's best SSE
 * after each simplex iteration). *needed gets the count (cap 0 asks); a
 * smaller cap is SB_ERR_LIMIT, another name SB_ERR_NOT_FOUND. */
SB_API sb_status sb_ets_get_array(const sb_ets *e, int64_t series, const char *name, double *out, size_t cap,
                                  size_t *needed);
/* A series' integer: "nobs", "nfev" (objective evaluations), "nit" (simplex
 * iterations), "converged", "k" (parameters counted by the criteria), and the
 * model's "trend", "damped_trend", "seasonal" (0 none, 1 add, 2 mul),
 * "seasonal_periods". */
SB_API sb_status sb_ets_get_int(const sb_ets *e, int64_t series, const char *name, int64_t *out);
/* The next h values of a series (1 <= h <= 1000000) into out. */
SB_API sb_status sb_ets_forecast(const sb_ets *e, int64_t series, int32_t h, double *out);
/* The SHA-256 (64 hex digits and a NUL) of a series' fitted model: its
 * specification, length, parameters, states, criteria and fitted values in
 * canonical little-endian bytes (docs/timeseries.md). */
SB_API sb_status sb_ets_digest(const sb_ets *e, int64_t series, char out[65]);
/* The batch in the model file (docs/model-format.md: version 2, family ets,
 * payload "ETSM": the specification, then each series' counts, parameters,
 * states, criteria, fitted values and residuals, little-endian; the
 * optimizer's trace is not kept). The bytes, a file (sb_model_save's output
 * rule) and the hex SHA-256 that closes the file, as for every family; the
 * reader refuses a file of another family by name. */
SB_API sb_status sb_ets_to_bytes(const sb_ets *e, uint8_t *buf, size_t cap, size_t *needed);
SB_API sb_status sb_ets_from_bytes(const uint8_t *buf, size_t n, sb_ets **out);
SB_API sb_status sb_ets_save(const sb_ets *e, const char *path);
SB_API sb_status sb_ets_load(const char *path, sb_ets **out);
SB_API sb_status sb_ets_model_digest(const sb_ets *e, char hex[65]);
/* Not a status: freeing cannot fail, and NULL is a no-op. */
SB_API void sb_ets_free(sb_ets *e);

/* Support vector classification and regression (docs/svm.md) with
 * scikit-learn's SVC and SVR names and semantics: model=svc|svr,
 * kernel=linear|poly|rbf|sigmoid (rbf), C (1; > 0, C <= 0 refused by name),
 * epsilon (SVR's, 0.1), gamma=scale|auto|a value >= 0 (scale), degree (3),
 * coef0 (0), tol (1e-3), max_iter (-1: no limit), class_weight (SVC's:
 * balanced, or class:weight entries joined by ';'), cache_size (MB of the
 * kernel row cache: time only), shrinking (accepted, no effect: the solver
 * never shrinks), probability (SVC's, false; true: Platt's sigmoid of each
 * pair fitted on the decision values of an internal 5-fold cross-validation
 * whose split is keyed by random_state (0; refused without probability), then
 * Wu, Lin and Weng's pairwise coupling; SVR refuses it), device=cpu|cpu-batched|cuda|opencl|gpu
 * (cuda, opencl: the kernel rows and the cross-validation's sums on the GPU,
 * float64 there, the host's bits; the SMO's choices on the host). The dataset's label holds SVC's class indices 0..K-1 (at least
 * two classes present, every index below the largest present) or SVR's
 * targets; its weights, if set, are sample weights (C_i = C class_weight
 * sample_weight). SMO with Fan, Chen and Lin's working-set selection, every
 * choice fixed by the data: the same iterations and bits at every thread
 * count. A fit stopped by max_iter returns the model with the integer
 * "converged" 0 (1 otherwise). Integers "n_support_vectors", "n_classes",
 * "kind" (0 svc, 1 svr), "kernel" (0 linear, 1 poly, 2 rbf, 3 sigmoid),
 * "degree", "n_samples_fit", "converged"; the array "support_vectors"; index
 * arrays "support", "n_support", "n_iter" (sb_model_get_indices); doubles by
 * sb_svm_get_f64. sb_model_predict: SB_PREDICT_VALUE the class index or the
 * value (the vote, with or without probability, as scikit-learn's), SB_PREDICT_RAW
 * the decision values as float32, SB_PREDICT_PROBA (probability=true) the
 * probabilities of sb_svm_predict_proba as float32. card may be NULL. */
SB_API sb_status sb_svm_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out);
/* A support vector model's doubles: "dual_coef" ((K-1) x n_SV, SVR 1 x n_SV,
 * row-major), "intercept" (one a pair, SVR one), "gamma" (the resolved one),
 * "coef0", "probA" and "probB" (one a pair with probability=true, else none;
 * libsvm's, as scikit-learn's probA_ and probB_), with scikit-learn's signs (a
 * binary SVC's negated, so that a positive decision is class 1); *needed gets
 * the count (cap 0 asks). */
SB_API sb_status sb_svm_get_f64(const sb_model *m, const char *name, double *out, size_t cap, size_t *needed);
/* The decision values of each row in double: SVR and a binary SVC one a row
 * (scikit-learn's sign), a multiclass SVC one a pair (0,1), (0,2), ...,
 * (K-2,K-1), positive for the pair's first class (scikit-learn's "ovo");
 * *needed gets the count (cap 0 asks). */
SB_API sb_status sb_svm_decision_function(const sb_model *m, const sb_dataset *queries, double *out, size_t cap,
                                          size_t *needed);
/* An SVC fitted with probability=true: each row's class probabilities in
 * double (nrows x classes, class order; scikit-learn's predict_proba), or
 * with log_proba 1 their natural logarithms by the profile's log
 * (predict_log_proba). A model without probabilities, or an SVR, is refused
 * by name; *needed gets the count (cap 0 asks). */
SB_API sb_status sb_svm_predict_proba(const sb_model *m, const sb_dataset *queries, int32_t log_proba, double *out,
                                      size_t cap, size_t *needed);
/* sb_svm_decision_function and sb_svm_predict_proba on a device (NULL or
 * "cpu": the host; "cuda", "opencl", "gpu": the kernel values and decision
 * sums there, the host's bits; a missing backend or device refused by name). */
SB_API sb_status sb_svm_decision_function_on(const sb_model *m, const sb_dataset *queries, const char *device,
                                             double *out, size_t cap, size_t *needed);
SB_API sb_status sb_svm_predict_proba_on(const sb_model *m, const sb_dataset *queries, const char *device,
                                         int32_t log_proba, double *out, size_t cap, size_t *needed);
/* ---- ARIMA (docs/timeseries.md) ------------------------------------------ */

/* A batch of fitted ARIMA(p, d, q)(P, D, Q)s models, one a series. Owned by
 * the caller: sb_arima_free. */
typedef struct sb_arima sb_arima;
/* Fit ARIMA by exact maximum likelihood (Kalman filter; the series
 * differenced first, (1 - B)^d (1 - B^s)^D, then a stationary, invertible
 * ARMA in statsmodels' ARIMA mean form) to nseries series at once: series i
 * is y[offsets[i] .. offsets[i+1]) (float64), each fitted on its own (the
 * same bits whatever the batch, its position in it or the thread count).
 * params: order="p,d,q", seasonal_order="P,D,Q,s", trend=n|c (c only
 * without differencing), params="v1,...,vk" to give every parameter
 * (statsmodels' order: const, ar.L, ma.L, ar.S.L, ma.S.L, sigma2) instead of
 * estimating them: explosive AR or non-invertible MA polynomials refused by
 * name. A NaN is a missing value: the filter predicts across it without an
 * update and the likelihood counts the observed values (a difference
 * touching a missing value is missing). A hostile batch is refused by name
 * before any work: an infinite value, every value or every differenced value
 * missing, a series too short for the model, a constant differenced series
 * (its likelihood has no maximum). card may be NULL. */
SB_API sb_status sb_arima_fit(const sb_params *params, const double *y, const int64_t *offsets, int64_t nseries,
                              sb_card *card, sb_arima **out);
SB_API sb_status sb_arima_nseries(const sb_arima *e, int64_t *nseries);
/* A series' array by statsmodels' name: "params" (const, ar.L1.., ma.L1..,
 * ar.S.Ls.., ma.S.Ls.., sigma2), "llf", "aic", "aicc", "bic",
 * "fittedvalues", "resid" (NaN for the first d + sD values and where the
 * differenced value is missing), "trace" (the
 * optimizer's best objective after each simplex iteration). *needed gets the
 * count (cap 0 asks); a smaller cap is SB_ERR_LIMIT, another name
 * SB_ERR_NOT_FOUND. */
SB_API sb_status sb_arima_get_array(const sb_arima *e, int64_t series, const char *name, double *out, size_t cap,
                                    size_t *needed);
/* A series' integer: "nobs" (the series' length), "nobs_effective" (after
 * differencing), "nfev", "nit", "converged" (1: the simplex met its
 * tolerances; 0: stopped at its iteration cap, nit says after how many),
 * "k" (parameters), and the model's "p", "d", "q", "P", "D", "Q", "s",
 * "trend" (0 n, 1 c). */
SB_API sb_status sb_arima_get_int(const sb_arima *e, int64_t series, const char *name, int64_t *out);
/* Parameter i's statsmodels name (e.g. "ar.L1", "ma.S.L12", "sigma2") into
 * buf (cap bytes with the NUL); *needed (may be NULL) gets the full size. */
SB_API sb_status sb_arima_param_name(const sb_arima *e, int32_t i, char *buf, size_t cap, size_t *needed);
/* The next h values of a series (1 <= h <= 100000) into mean, and, each may
 * be NULL, their standard errors and the ends of the 1 - alpha prediction
 * interval (0 < alpha < 1), statsmodels' get_forecast(h).conf_int(alpha).
 * A missing value among the series' last d + sD is refused by name (the
 * forecast integrates them back). */
SB_API sb_status sb_arima_forecast(const sb_arima *e, int64_t series, int32_t h, double alpha, double *mean,
                                   double *se, double *lower, double *upper);
/* Every series' next h values at once: series i's forecasts into row i
 * (mean[i * h .. i * h + h), and the same rows of se, lower and upper, each
 * may be NULL), each row the bits sb_arima_forecast gives that series, the
 * series spread over the threads. A series with a missing value among its
 * last d + sD is refused by name before any work. */
SB_API sb_status sb_arima_forecast_all(const sb_arima *e, int32_t h, double alpha, double *mean, double *se,
                                       double *lower, double *upper);
/* The SHA-256 (64 hex digits and a NUL) of a series' fitted model. */
SB_API sb_status sb_arima_digest(const sb_arima *e, int64_t series, char out[65]);
/* The batch in the model file (docs/model-format.md: version 2, family
 * arima, payload "ARIM": the specification, then each series' counts,
 * parameters, criteria, fitted values, residuals, final state and covariance
 * and last d + sD values, little-endian; the optimizer's trace is not kept).
 * The bytes, a file (sb_model_save's output rule) and the hex SHA-256 that
 * closes the file, as for every family; the reader refuses a file of another
 * family by name. */
SB_API sb_status sb_arima_to_bytes(const sb_arima *e, uint8_t *buf, size_t cap, size_t *needed);
SB_API sb_status sb_arima_from_bytes(const uint8_t *buf, size_t n, sb_arima **out);
SB_API sb_status sb_arima_save(const sb_arima *e, const char *path);
SB_API sb_status sb_arima_load(const char *path, sb_arima **out);
SB_API sb_status sb_arima_model_digest(const sb_arima *e, char hex[65]);
/* Not a status: freeing cannot fail, and NULL is a no-op. */
SB_API void sb_arima_free(sb_arima *e);
/* ---- gaussian process regression (docs/gaussian-process.md) ------------- */

/* A fitted Gaussian process regressor (scikit-learn's
 * GaussianProcessRegressor), float64 throughout. Owned by the caller:
 * sb_gp_free. */
typedef struct sb_gp sb_gp;
/* Fit to X (n x d, row-major) and y (n x ntargets, row-major), float64.
 * kernel: a specification in scikit-learn's constructor syntax, e.g.
 * "ConstantKernel(1.0, (1e-3, 1e3)) * RBF([1.0, 2.0]) + WhiteKernel(1e-5)"
 * (ConstantKernel or C, WhiteKernel, RBF, Matern with nu 0.5, 1.5 or 2.5,
 * RationalQuadratic; + and *, products first; bounds (lo, hi) or "fixed").
 * params: alpha (added to the kernel matrix's diagonal, 1e-10), normalize_y,
 * optimizer=fmin_l_bfgs_b|none, n_restarts_optimizer, random_state (the
 * restarts' Philox seed), device=cpu|cuda|opencl|gpu (each likelihood
 * evaluation's kernel matrix, Cholesky factor, inverses and gradient terms
 * on a GPU in IEEE doubles, the same bits; the model keeps it for its
 * predictions: sb_gp_set_device). A length scale, value or bound of 0 or less, a
 * missing value, a kernel matrix that is not positive definite (the jitter
 * rule: alpha alone is added) are refused by name before or instead of the
 * result. card may be NULL. */
SB_API sb_status sb_gp_fit(const char *kernel, const sb_params *params, const double *X, int64_t n, int64_t d,
                           const double *y, int64_t ntargets, sb_card *card, sb_gp **out);
/* The predictive mean (m x ntargets) and, where not NULL, the standard
 * deviation (m x ntargets) and the covariance (m x m x ntargets), as
 * scikit-learn's predict(return_std, return_cov). */
SB_API sb_status sb_gp_predict(const sb_gp *g, const double *X, int64_t m, int64_t d, double *mean, double *std,
                               double *cov);
/* n_samples draws of the process at X into out (m x ntargets x n_samples),
 * standard normals from Philox keyed by random_state. */
SB_API sb_status sb_gp_sample_y(const sb_gp *g, const double *X, int64_t m, int64_t d, int64_t n_samples,
                                uint64_t random_state, double *out);
/* The log marginal likelihood at theta (the free log hyperparameters,
 * ntheta of them; NULL: the fitted kernel's, log_marginal_likelihood_value_)
 * and, where grad is not NULL, its gradient (ntheta values). */
SB_API sb_status sb_gp_log_marginal_likelihood(const sb_gp *g, const double *theta, int64_t ntheta, double *lml,
                                               double *grad);
/* Arrays by name: "theta", "bounds" (ntheta x 2, log), "log_params" (every
 * hyperparameter's log, the fixed ones included), "params" (their values,
 * e to those logs by the profile's exp), "alpha_", "L_",
 * "X_train_", "y_train_", "_y_train_mean", "_y_train_std",
 * "log_marginal_likelihood_value_", "alpha", "trace" (the objective and the
 * free theta after each optimizer iteration). *needed gets the count (cap 0
 * asks); a smaller cap is SB_ERR_LIMIT, another name SB_ERR_NOT_FOUND. */
SB_API sb_status sb_gp_get_array(const sb_gp *g, const char *name, double *out, size_t cap, size_t *needed);
/* Integers: "n_features_in_", "n_samples", "n_targets", "n_theta",
 * "n_params", "nit", "nfev", "normalize_y", "n_restarts_optimizer",
 * "optimizer" (1 or 0), "random_state". */
SB_API sb_status sb_gp_get_int(const sb_gp *g, const char *name, int64_t *out);
/* The device of g's later predictions, samples and likelihoods
 * (sb_gp_predict, sb_gp_sample_y, sb_gp_log_marginal_likelihood): "cpu",
 * "cuda", "opencl" or "gpu", the same bits on each (a fitted model keeps its
 * fit's device=, a read one starts on "cpu"); "cpu-batched" and a backend
 * this build lacks are refused by name. The model file does not hold it. */
SB_API sb_status sb_gp_set_device(sb_gp *g, const char *device);
/* The fitted kernel (kernel_) as a specification that sb_gp_fit reads. */
SB_API sb_status sb_gp_kernel_spec(const sb_gp *g, char *buf, size_t cap, size_t *needed);
/* The model file (docs/model-format.md: version 2, family gp, payload
 * "GPRM": the kernel, the training data and alpha_; L_ is recomputed on
 * reading and the stored log marginal likelihood must come out bit for bit). */
SB_API sb_status sb_gp_to_bytes(const sb_gp *g, uint8_t *buf, size_t cap, size_t *needed);
SB_API sb_status sb_gp_from_bytes(const uint8_t *buf, size_t n, sb_gp **out);
SB_API sb_status sb_gp_save(const sb_gp *g, const char *path);
SB_API sb_status sb_gp_load(const char *path, sb_gp **out);
SB_API sb_status sb_gp_model_digest(const sb_gp *g, char hex[65]);
/* Not a status: freeing cannot fail, and NULL is a no-op. */
SB_API void sb_gp_free(sb_gp *g);
/* ---- multi-layer perceptrons (docs/mlp.md) ------------------------------ */

/* A fitted MLPClassifier or MLPRegressor (scikit-learn's), float32
 * parameters. Owned by the caller: sb_mlp_free. */
typedef struct sb_mlp sb_mlp;
/* Fit to X (n x d, row-major float32) and y: with task=classifier, n class
 * codes 0..K-1 (ny = 1; every code present, K >= 2: one class is refused by
 * name) or an n x ny 0/1 indicator (multilabel, ny >= 2); with
 * task=regressor, n x ny targets. params: task (classifier|regressor) and
 * scikit-learn's names: hidden_layer_sizes ("100", "128,64"), activation
 * (identity, logistic, tanh, relu; gelu and silu too), solver (adam, sgd;
 * lbfgs is refused by name), alpha, batch_size (auto = min(200, n)),
 * learning_rate (constant, invscaling, adaptive: sgd only),
 * learning_rate_init, power_t, max_iter, shuffle, random_state (the Philox
 * seed of the initialization, the epochs' permutations and the validation
 * split), tol, momentum, nesterovs_momentum, early_stopping,
 * validation_fraction, beta_1, beta_2, epsilon, n_iter_no_change. A key that
 * would change nothing (momentum with adam, ...) is refused by name. card
 * may be NULL (stages: the loss and parameters of every epoch). */
SB_API sb_status sb_mlp_fit(const sb_params *params, const float *X, int64_t n, int64_t d, const float *y, int64_t ny,
                            sb_card *card, sb_mlp **out);
/* Predictions for m rows: a classifier's class codes (m values) or
 * multilabel 0/1 indicators (m x labels), a regressor's m x targets. */
SB_API sb_status sb_mlp_predict(const sb_mlp *net, const float *X, int64_t m, int64_t d, float *out);
/* A classifier's probabilities: m x K (binary: 1 - p, p), multilabel m x
 * labels (each label's own). A regressor is refused. */
SB_API sb_status sb_mlp_predict_proba(const sb_mlp *net, const float *X, int64_t m, int64_t d, float *out);
/* float32 arrays: "coefs_<l>" (width_l x width_l+1, row-major), "intercepts_<l>".
 * *needed gets the count (cap 0 asks); a smaller cap is SB_ERR_LIMIT. */
SB_API sb_status sb_mlp_get_f32(const sb_mlp *net, const char *name, float *out, size_t cap, size_t *needed);
/* float64: "loss_curve_", "validation_scores_" (empty without early
 * stopping), "loss_", "best_loss_" (NaN with early stopping),
 * "best_validation_score_" (NaN without). */
SB_API sb_status sb_mlp_get_f64(const sb_mlp *net, const char *name, double *out, size_t cap, size_t *needed);
/* Integers: "n_features_in_", "n_layers_", "n_outputs_", "n_iter_", "t_",
 * "n_classes", "multilabel", "classifier", "out_activation_" (0 identity,
 * 1 logistic, 2 softmax), "width_<l>" (l = 0..n_layers_ - 1). */
SB_API sb_status sb_mlp_get_int(const sb_mlp *net, const char *name, int64_t *out);
/* The model file (docs/model-format.md: version 2, family mlp, payload "MLPN"). */
SB_API sb_status sb_mlp_to_bytes(const sb_mlp *net, uint8_t *buf, size_t cap, size_t *needed);
SB_API sb_status sb_mlp_from_bytes(const uint8_t *buf, size_t n, sb_mlp **out);
SB_API sb_status sb_mlp_save(const sb_mlp *net, const char *path);
SB_API sb_status sb_mlp_load(const char *path, sb_mlp **out);
SB_API sb_status sb_mlp_model_digest(const sb_mlp *net, char hex[65]);
/* Not a status: freeing cannot fail, and NULL is a no-op. */
SB_API void sb_mlp_free(sb_mlp *net);
/* ---- the byte-level language model (docs/lm.md) ---------------------- */

/* A small pre-norm transformer over raw bytes (vocabulary 256, learned
 * positional embedding, untied output head) and its AdamW training state:
 * parameters, both moments, the step (every random draw is keyed by seed
 * and step, so the step is the generator's position). Owned by the caller:
 * sb_lm_free. Identity is claimed per configuration: another batch_size or
 * context is another trajectory. */
typedef struct sb_lm sb_lm;
/* A fresh model, its parameters drawn from Philox by random_state. params:
 * n_layer (2), d_model (64), n_head (4; divides d_model), context (64),
 * batch_size (16), learning_rate (1e-3), beta_1 (0.9), beta_2 (0.999),
 * epsilon (1e-8), weight_decay (0.01: matrices and embeddings only),
 * dropout (0), clip_norm (1; 0: none), validation_fraction (0.1: the last
 * bytes of the corpus, held out), eval_batches (8: held-out batches per
 * evaluation), random_state (0), device (cpu; opencl, cuda: the same bytes,
 * sb_lm_set_device). Unknown keys are refused by name. */
SB_API sb_status sb_lm_create(const sb_params *params, sb_lm **out);
/* steps AdamW steps on corpus (n bytes; windows drawn by (random_state,
 * step, batch index) from its first 1 - validation_fraction). Training
 * resumed from a checkpoint of step k (sb_lm_load) on the same corpus
 * continues the uninterrupted trajectory byte for byte; another corpus is
 * refused by name. eval_every > 0 records the held-out loss before the first
 * step and after every step that is a multiple of eval_every (so a resumed
 * run records what the uninterrupted one does). */
SB_API sb_status sb_lm_train(sb_lm *lm, const uint8_t *corpus, int64_t n, int64_t steps, int64_t eval_every);
/* The device the next sb_lm_train runs its steps on ("cpu", "opencl",
 * "cuda"; the params key device at create): a run's choice, not the
 * checkpoint's (a loaded model trains on the cpu until told), so a run
 * checkpointed on one device resumes on another on the same trajectory,
 * byte for byte. A device this build lacks is refused by name when training
 * starts. */
SB_API sb_status sb_lm_set_device(sb_lm *lm, const char *device);
/* The held-out loss (mean cross-entropy in nats per byte over eval_batches
 * fixed batches of the held-out bytes). */
SB_API sb_status sb_lm_evaluate(const sb_lm *lm, const uint8_t *corpus, int64_t n, float *loss);
/* count bytes continuing prompt (np >= 1 bytes), sampled at temperature (0:
 * the most likely byte) by Philox draws of seed. */
SB_API sb_status sb_lm_generate(const sb_lm *lm, const uint8_t *prompt, int64_t np, int64_t count, double temperature,
                                uint64_t seed, uint8_t *out);
/* float32 arrays: "train_loss" (one a step), "heldout_loss", a parameter
 * tensor by name ("wte", "wpe", "h<l>.w_qkv", ..., "head"), or its moments
 * ("adam_m.<name>", "adam_v.<name>"). *needed gets the count (cap 0 asks). */
SB_API sb_status sb_lm_get_f32(const sb_lm *lm, const char *name, float *out, size_t cap, size_t *needed);
/* Integers: "step", "n_params", "n_layer", "d_model", "n_head", "context",
 * "batch_size", "n_heldout", "heldout_step_<i>". */
SB_API sb_status sb_lm_get_int(const sb_lm *lm, const char *name, int64_t *out);
/* The checkpoint: the model file (docs/model-format.md: version 2, family
 * lm, payload "BLM1"). */
SB_API sb_status sb_lm_to_bytes(const sb_lm *lm, uint8_t *buf, size_t cap, size_t *needed);
SB_API sb_status sb_lm_from_bytes(const uint8_t *buf, size_t n, sb_lm **out);
SB_API sb_status sb_lm_save(const sb_lm *lm, const char *path);
SB_API sb_status sb_lm_load(const char *path, sb_lm **out);
SB_API sb_status sb_lm_model_digest(const sb_lm *lm, char hex[65]);
/* Not a status: freeing cannot fail, and NULL is a no-op. */
SB_API void sb_lm_free(sb_lm *lm);

/* A fitted model's integer array by name (DBSCAN's "labels" and
 * "core_sample_indices"; agglomerative clustering's "labels" and "children";
 * k-means' "labels" of its fit; spectral clustering's "labels"): *needed gets the count (cap 0 asks); a name the
 * model lacks is SB_ERR_NOT_FOUND naming it. */
SB_API sb_status sb_model_get_indices(const sb_model *m, const char *name, int64_t *out, size_t cap, size_t *needed);

/* The neighbors of a set of query rows: row i's at [offsets[i], offsets[i+1])
 * of the indices (into the training rows) and the distances (Euclidean, or
 * the cosine distance 1 - cos). Owned by the caller: sb_neighbors_free. */
typedef struct sb_neighbors sb_neighbors;
/* The n_neighbors nearest training rows of each row of queries (k 0: the
 * model's n_neighbors), by (distance, index). queries NULL: the training rows
 * themselves, each without itself (scikit-learn's kneighbors()). device: NULL
 * or "cpu" (a GPU is refused by name). */
SB_API sb_status sb_model_kneighbors(const sb_model *m, const sb_dataset *queries, int32_t k, const char *device,
                                     sb_neighbors **out);
/* Every training row within radius (distance <= radius; radius < 0: the
 * model's) of each row of queries, in index order, or by (distance, index)
 * when sort is nonzero; queries NULL as for sb_model_kneighbors. */
SB_API sb_status sb_model_radius_neighbors(const sb_model *m, const sb_dataset *queries, double radius, int32_t sort,
                                           const char *device, sb_neighbors **out);
/* Query rows and the total neighbor count. */
SB_API sb_status sb_neighbors_shape(const sb_neighbors *nb, int64_t *nrows, int64_t *total);
/* Copy out: offsets (nrows + 1), indices and distances (total each); any may be NULL. */
SB_API sb_status sb_neighbors_copy(const sb_neighbors *nb, int64_t *offsets, int64_t *indices, float *distances);
/* Free a result. Not a status: freeing cannot fail; NULL is a no-op. */
SB_API void sb_neighbors_free(sb_neighbors *nb);

/* A fitted model's array attribute by scikit-learn's name, row-major: "coef"
 * (nout x features), "intercept", "mean", "components" (PCA's coef),
 * "explained_variance", "explained_variance_ratio", "singular_values",
 * "noise_variance" (one value); k-means' "cluster_centers" and "inertia". *needed gets the count (cap 0 asks); a name
 * the model lacks is SB_ERR_NOT_FOUND naming it. */
SB_API sb_status sb_model_get_array(const sb_model *m, const char *name, float *out, size_t cap, size_t *needed);
/* An integer attribute: "n_iter", "converged" (1 or 0), "rank", "n_outputs"
 * (coefficient rows or components), "n_classes", "kind" (an sb_linear kind
 * index; docs/linear.md), "whiten"; k-means' "n_iter", "converged" and
 * "n_clusters". SB_ERR_NOT_FOUND for another name. */
SB_API sb_status sb_model_get_int(const sb_model *m, const char *name, int64_t *out);
/* A gradient boosting fit given validation rows keeps its metric log (not in
 * the file; a loaded model has none: SB_ERR_NOT_FOUND): sb_model_get_int's
 * "eval_iterations" (iterations that ran), "eval_metrics" (metrics a set and
 * iteration), "eval_sets" (validation sets) and "best_iteration" (1-based,
 * the iteration early stopping kept; 0 when it did not run),
 * sb_model_get_array's "eval_history" (the values, iteration by iteration,
 * set by set within an iteration, eval_metrics values a set: eval_sets x
 * eval_metrics a row) and the metric names here (k < eval_metrics; the first
 * decides early stopping; the pointer lives as long as the model). */
SB_API sb_status sb_model_get_eval_name(const sb_model *m, int32_t k, const char **name);
/* Validation set s's name in the metric log (s < "eval_sets", the fit's
 * order): the name given to sb_gbdt_fit_multi, "valid_<s>" or "training"
 * (the pointer lives as long as the model). SB_ERR_NOT_FOUND without a log. */
SB_API sb_status sb_model_get_eval_set_name(const sb_model *m, int32_t s, const char **name);

/* Train an isolation forest (Liu, Ting and Zhou 2008). params: n_estimators
 * (100), max_samples (256 rows per tree), random_state, max_bin. The model's
 * SB_PREDICT_VALUE is the anomaly score 2^(-E[h(x)] / c(psi)) in (0, 1]
 * (scikit-learn's score_samples is its negative); SB_PREDICT_RAW is
 * E[h(x)] / c(psi). Labels are not used. train's weights
 * (sb_dataset_set_weight), when given, set each tree's draw of its psi rows:
 * without replacement, each draw a row not yet drawn with probability
 * proportional to its weight, in exact fixed-point integers (docs/forest.md,
 * "Isolation forest sample weights"); rows of weight zero are never drawn and
 * psi is at most the rows of positive weight; equal weights give the
 * unweighted forest's bytes. A negative, NaN or infinite weight, every weight
 * zero, or fewer than 2 rows of positive weight: SB_ERR_INVALID_INPUT, named,
 * before any work. */
SB_API sb_status sb_isolation_forest_fit(const sb_params *params, const sb_dataset *train, sb_card *card,
                                         sb_model **out);
/* Warm start of an isolation forest: init's trees kept (their leaves valued
 * for params' n_estimators, from each leaf's depth and size alone), the rest
 * grown with their own draws; equal, byte for byte, to the n_estimators fit.
 * init: an isolation forest of this profile and train's feature count, fitted
 * with the same parameters but n_estimators and device, with at most
 * n_estimators trees (named errors otherwise); the caller keeps it. */
SB_API sb_status sb_isolation_forest_fit_continue(const sb_params *params, const sb_dataset *train,
                                                  const sb_model *init, sb_card *card, sb_model **out);

typedef enum sb_predict_kind {
    SB_PREDICT_RAW = 0,   /* margins: nrows x num_class */
    SB_PREDICT_PROBA = 1, /* probabilities (binary: P(1); multiclass: nrows x K) */
    SB_PREDICT_VALUE = 2, /* regression value, or the class index as a float */
    SB_PREDICT_TRANSFORM = 3, /* decompositions (PCA): the n x n_components projection */
    /* The tree families only (gbdt, random_forest, extra_trees, isolation_forest; docs/explain.md): */
    SB_PREDICT_LEAF = 4,   /* pred_leaf: each row's leaf in every tree, nrows x ntrees, LightGBM's leaf
                              numbers as floats (exact: below 2^24); sb_model_predict_leaf gives int32 */
    SB_PREDICT_CONTRIB = 5 /* pred_contrib: exact TreeSHAP contributions (Lundberg et al. 2018, path-
                              dependent, covers = the nodes' training counts), nrows x num_class x
                              (num_features + 1): per class the features' contributions, then the expected
                              value (base score included); they add up to the raw margin up to rounding */
} sb_predict_kind;

/* Predict into out (caller's); *needed gets the element count (pass cap 0 to ask). */
SB_API sb_status sb_model_predict(const sb_model *m, const sb_dataset *d, sb_predict_kind kind,
                                  float *out, size_t cap, size_t *needed);

/* The same on a device: "cpu" (or NULL), "cuda" (a build with CUDA=1 and a
 * GPU) or "opencl" (the device of SAMEBITS_OPENCL_DEVICE). The bits are the CPU's: the same tree walk and additions in the same
 * order (kernels/tree.h). An absent device is SB_ERR_BACKEND_UNAVAILABLE. */
SB_API sb_status sb_model_predict_on(const sb_model *m, const sb_dataset *d, sb_predict_kind kind,
                                     const char *device, float *out, size_t cap, size_t *needed);

/* pred_leaf as int32: out[r * ntrees + i] is the leaf that row r reaches in tree
 * i (the model's trees in boosting order, so K a round for multiclass and K per
 * estimator for a forest classifier), numbered as LightGBM numbers leaves
 * (docs/explain.md): 0 .. leaves - 1 within each tree. device as for
 * sb_model_predict_on; the indices are the same on every device and thread
 * count. *needed gets nrows x ntrees (cap 0 asks; a smaller cap is
 * SB_ERR_LIMIT); a model of another family is SB_ERR_INVALID_ARGUMENT. */
SB_API sb_status sb_model_predict_leaf(const sb_model *m, const sb_dataset *d, const char *device, int32_t *out,
                                       size_t cap, size_t *needed);

/* Read prediction data for model m (docs/io.md, "Prediction data for a
 * model"): CSV columns are matched to the model's feature names in any order
 * (extra columns, such as a label, are dropped; a missing feature is a named
 * error); data without a header, or a model without names, goes by position
 * and must have the model's width; LibSVM is widened to the model's feature
 * count and indices beyond it are dropped. */
SB_API sb_status sb_dataset_read_for_model(const sb_model *m, const char *path, const char *format,
                                           sb_dataset **out);

typedef struct sb_model_info {
    int32_t family;        /* sb_family */
    int32_t num_features;
    int32_t num_class;     /* margins per row */
    int32_t ntrees;
    int32_t numeric_mode;  /* sb_numeric_mode it was trained in */
    char objective[32];    /* "regression", "binary", "multiclass" */
} sb_model_info;
SB_API sb_status sb_model_get_info(const sb_model *m, sb_model_info *info);
/* The numeric profile the model was trained under: SB_PROFILE_VERSION for a
 * model trained by this library, or the profile its file names (an earlier
 * profile this library still reads: docs/numeric-profile.md, "Versions").
 * *profile gets a constant string owned by the library. */
SB_API sb_status sb_model_get_profile(const sb_model *m, const char **profile);

/* Class labels (docs/model-format.md, "Class labels"): the labels a
 * classifier was trained with, class index c standing for label c, stored in
 * its file so that a loaded classifier answers in them. A classifier here is a
 * gradient-boosting binary (2 labels) or multiclass model, or a forest
 * classifier (num_class labels); another model is SB_ERR_INVALID_ARGUMENT.
 * Kinds: */
typedef enum sb_label_kind {
    SB_LABELS_NONE = 0,    /* no labels: the classes are 0..K-1 */
    SB_LABELS_INT64 = 1,   /* values: int64_t[n] */
    SB_LABELS_FLOAT64 = 2, /* values: double[n], no NaN; -0 is kept as written */
    SB_LABELS_STRING = 3,  /* values: const char *[n], UTF-8 without NUL, each at most 65,536 bytes */
    SB_LABELS_BOOL = 4     /* values: uint8_t[n], 0 (false) then 1 (true): n is 2 */
} sb_label_kind;
/* Set m's labels: n values of kind (SB_LABELS_NONE with n 0 and values NULL
 * removes them), strictly increasing (numbers by value, strings by their
 * bytes: scikit-learn's sorted classes_), n the model's class count. They
 * change the model's file and digest (a labeled model is written in format
 * version 3). A kind outside the list, a wrong count, an unsorted or repeated
 * label, a NaN, a string that is not UTF-8 are SB_ERR_INVALID_ARGUMENT, named;
 * m is then unchanged. */
SB_API sb_status sb_model_set_class_labels(sb_model *m, int32_t kind, size_t n, const void *values);
/* *kind gets m's label kind (SB_LABELS_NONE when it has none) and *n their
 * count (0 when none). */
SB_API sb_status sb_model_get_class_labels(const sb_model *m, int32_t *kind, size_t *n);
/* The labels of a numeric kind into out (int64_t, double or uint8_t by the
 * kind): *needed (may be NULL) gets n; cap (in values) 0 asks; a smaller cap
 * is SB_ERR_LIMIT. String labels or none: SB_ERR_INVALID_ARGUMENT. */
SB_API sb_status sb_model_get_class_label_values(const sb_model *m, void *out, size_t cap, size_t *needed);
/* String label i (0 <= i < n) of a model with SB_LABELS_STRING: *label gets a
 * NUL-terminated string owned by m (valid until m is freed or relabeled).
 * Another kind or i out of range: SB_ERR_INVALID_ARGUMENT. */
SB_API sb_status sb_model_get_class_label_string(const sb_model *m, size_t i, const char **label);

/* The category names of a categorical feature (gradient boosting's
 * categorical_feature; docs/gbdt.md, "Categorical features"): category code i
 * of feature stands for names[i], n names strictly increasing by their UTF-8
 * bytes (strcmp: the one total order the Python package maps strings by).
 * Stored in the model's file (format version 4) and digest; n 0 with names
 * NULL removes them. A feature out of range, an unsorted or repeated name, a
 * name that is not UTF-8 or longer than 65,536 bytes, or more than 1,000,000
 * names are SB_ERR_INVALID_ARGUMENT, named; m is then unchanged. */
SB_API sb_status sb_model_set_category_names(sb_model *m, int32_t feature, const char *const *names, int32_t n);
/* *n gets the number of category names feature has (0: none). */
SB_API sb_status sb_model_get_category_count(const sb_model *m, int32_t feature, int32_t *n);
/* Category name i of feature: *name gets a NUL-terminated string owned by m
 * (valid until m is freed or the names are set again). */
SB_API sb_status sb_model_get_category_name(const sb_model *m, int32_t feature, int32_t i, const char **name);

/* Feature importance: type 0 = number of splits, 1 = total gain. */
SB_API sb_status sb_model_feature_importance(const sb_model *m, int32_t type, float *out,
                                             size_t cap, size_t *needed);

/* A tree model (gbdt, random_forest, extra_trees, isolation_forest) as text:
 * format "json" or "text" (docs/explain.md), every tree's nodes in stored order
 * with their split feature, threshold, missing-value side, gain, training count
 * and leaf value as stored (9 significant digits: each reads back to the same
 * float32), with LightGBM's split and leaf numbers (pred_leaf's). Writes at
 * most cap bytes including the NUL into buf; *needed gets the full size (cap 0
 * asks; a smaller cap is SB_ERR_LIMIT). Another format or family is
 * SB_ERR_INVALID_ARGUMENT. */
SB_API sb_status sb_model_dump(const sb_model *m, const char *format, char *buf, size_t cap, size_t *needed);

/* The model file format (docs/model-format.md): little-endian, versioned,
 * byte-identical across platforms, closed by a SHA-256 of everything before it.
 * The writer writes version 2, or version 3 for a model with class labels;
 * the reader reads versions 1, 2 and 3. */
SB_API sb_status sb_model_to_bytes(const sb_model *m, uint8_t *buf, size_t cap, size_t *needed);
/* The same in a chosen format version: 3 (a labeled model only), 2, or 1 for
 * a tree family (the layouts older readers and the reference cards'
 * model-bytes stages know; a labeled model written in 1 or 2 leaves its labels
 * out). Another version, 3 for a model without labels, or 1 for a family it
 * cannot hold, is SB_ERR_INVALID_ARGUMENT. */
SB_API sb_status sb_model_to_bytes_version(const sb_model *m, uint32_t version, uint8_t *buf, size_t cap,
                                           size_t *needed);
SB_API sb_status sb_model_from_bytes(const uint8_t *buf, size_t len, sb_model **out);
/* Save by the output rule of samebits_cert.h's sb_output_open (a regular file:
 * temporary file renamed into place; "-", a device or a FIFO: written directly;
 * a symlink's target, never the link); load validates everything. */
SB_API sb_status sb_model_save(const sb_model *m, const char *path);
SB_API sb_status sb_model_load(const char *path, sb_model **out);
/* Hex SHA-256 of the model's bytes, as stored at the end of its file as the
 * writer writes it (version 2, or 3 for a model with class labels: the labels
 * are part of the digest); a version-1 file read and saved again gets a new
 * digest. */
SB_API sb_status sb_model_digest(const sb_model *m, char hex[65]);
/* Not a status: freeing cannot fail, and NULL is a no-op. */
SB_API void sb_model_free(sb_model *m);

/* ---- linear algebra ---------------------------------------------------------- */
/* C := op(A) * op(B), float32, row-major: op(A) is m x k (A itself, lda >= k,
 * or with trans_a A^T of a k x m A, lda >= m), op(B) is k x n (ldb >= n, or
 * ldb >= k with trans_b), C is m x n (ldc >= n). The result is identical on
 * every device and thread count: each line of op(A) and op(B) is scaled by a
 * power of two and rounded to 31-bit integers, their products are summed
 * exactly, and each element of C is that exact sum rounded once to float32
 * (the Ozaki scheme taken to exactness; docs/linalg.md has the error bound,
 * the special values and the limits). device: "cpu", "cuda", "opencl", "gpu"
 * (NULL: "cpu"). C may not overlap A or B (SB_ERR_INVALID_ARGUMENT). m, n or
 * k above 2^31 - 1 is SB_ERR_LIMIT. */
SB_API sb_status sb_gemm(const char *device, int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k,
                         const float *a, int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc);

/* Reductions, distances and selection (docs/linalg.md, "Reductions, distances
 * and selection"), identical on every device and thread count. x is an m x n
 * float32 matrix, row-major, ldx >= n. device: "cpu", "cuda", "opencl", "gpu"
 * (NULL: "cpu"). m, n (and d) above 2^31 - 1 are SB_ERR_LIMIT; negative
 * sizes, a short leading dimension, a NULL array that must hold elements, an
 * output overlapping an input, axis or largest not 0 or 1 are
 * SB_ERR_INVALID_ARGUMENT, named. */
/* out[i] = sum_j x[i][j] (m values; row sums) or out[j] = sum_i x[i][j] (n
 * values; column sums): the exact sum rounded once to float32 (nearest, ties to
 * even). A NaN, or +inf with -inf, gives NaN (0x7fc00000); an infinity of one
 * sign gives it; a finite sum beyond FLT_MAX rounds to +-inf; an exact zero
 * is -0 only when every element is -0; an empty line sums to +0. */
SB_API sb_status sb_linalg_row_sums(const char *device, int64_t m, int64_t n, const float *x, int64_t ldx,
                                    float *out);
SB_API sb_status sb_linalg_col_sums(const char *device, int64_t m, int64_t n, const float *x, int64_t ldx,
                                    float *out);
/* Squared L2 norms of the rows (m values) or columns (n values): sum x^2 with
 * every square exact, rounded once. NaN in the line gives NaN; else an
 * infinity gives +inf; an empty line gives +0. */
SB_API sb_status sb_linalg_row_sq_norms(const char *device, int64_t m, int64_t n, const float *x, int64_t ldx,
                                        float *out);
SB_API sb_status sb_linalg_col_sq_norms(const char *device, int64_t m, int64_t n, const float *x, int64_t ldx,
                                        float *out);
/* out[i*ldo + j] = ||x_i - y_j||^2 for the rows x_i of x (m x d, ldx >= d) and
 * y_j of y (n x d, ldy >= d), ldo >= n: the exact real value rounded once to
 * float32 (so never negative, and 0 exactly when the rows are equal up to the
 * sign of zeros). A NaN in either row, or infinities of the same sign at the
 * same column, give NaN; any other infinity gives +inf. */
SB_API sb_status sb_linalg_sqdist(const char *device, int64_t m, int64_t n, int64_t d, const float *x, int64_t ldx,
                                  const float *y, int64_t ldy, float *out, int64_t ldo);
/* The index of the smallest (argmin) or largest (argmax) element of each row
 * (axis 1: m indices) or column (axis 0: n indices), int32. The order is
 * total: -0 < +0 (IEEE totalOrder), every NaN comes after every number in
 * both directions (never selected unless the line is all NaN), and ties go to
 * the lower index. Lines must hold at least one element. */
SB_API sb_status sb_linalg_argmin(const char *device, int32_t axis, int64_t m, int64_t n, const float *x, int64_t ldx,
                                  int32_t *out);
SB_API sb_status sb_linalg_argmax(const char *device, int32_t axis, int64_t m, int64_t n, const float *x, int64_t ldx,
                                  int32_t *out);
/* The k smallest (largest = 0) or largest (largest = 1) elements of each row,
 * in that order, with argmin's total order and tie rule: values[i*k + t] and
 * indices[i*k + t] (int32) for t < k, both m x k dense; the values are the
 * input's bits. 1 <= k <= n: a larger k is SB_ERR_INVALID_ARGUMENT (never
 * clamped). */
SB_API sb_status sb_linalg_topk(const char *device, int32_t largest, int64_t m, int64_t n, const float *x,
                                int64_t ldx, int64_t k, float *values, int32_t *indices);
/* ---- linear algebra: factorizations, solves, eigenvalues, projections ---------
 * (src/linalg/solve.c; docs/linalg.md, "Factorizations, solves, eigenvalues and
 * projections", states every fixed order.) Float32, row-major. Each result is
 * identical on every device ("cpu", "cuda", "opencl", "gpu"; NULL: "cpu") and
 * thread count: every element is made by one fixed sequence of IEEE operations
 * (plain multiply then add, never contracted; correctly rounded division and
 * square root). A NaN or an infinity in the part of an input that is read is
 * SB_ERR_INVALID_INPUT naming the element (sb_linalg_projection excepted: it
 * has sb_gemm's special values); an output may not overlap an input except
 * where said (SB_ERR_INVALID_ARGUMENT). An order n above SB_LINALG_MAX_N
 * (SB_LINALG_MAX_EIGH_N for sb_linalg_eigh), or a dimension of a random matrix
 * or projection above 2^31 - 1, is SB_ERR_LIMIT. */
#define SB_LINALG_MAX_N 65536
#define SB_LINALG_MAX_EIGH_N 8192

/* L with A = L L^T, for a symmetric positive definite n x n A of which only the
 * lower triangle is read (lda >= n). l (ldl >= n) gets L, +0 above the diagonal;
 * l may be a itself (ldl == lda). A pivot that is not > 0 is the refusal
 * SB_ERR_INVALID_INPUT naming its column ("not positive definite"); l is then
 * all +0. */
SB_API sb_status sb_linalg_cholesky(const char *device, int64_t n, const float *a, int64_t lda, float *l,
                                    int64_t ldl);

/* X with L X = B (trans 0) or L^T X = B (trans 1): L is n x n lower triangular
 * (only its lower triangle is read, ldl >= n), B and X are n x nrhs (ldb, ldx >=
 * nrhs); x may be b itself (ldx == ldb). A zero on L's diagonal is
 * SB_ERR_INVALID_INPUT naming its row. A NaN result (from an overflow) is the
 * quiet NaN 0x7fc00000. */
SB_API sb_status sb_linalg_solve_triangular(const char *device, int32_t trans, int64_t n, int64_t nrhs,
                                            const float *l, int64_t ldl, const float *b, int64_t ldb, float *x,
                                            int64_t ldx);

/* The eigenvalues w (n of them, descending, equal ones in the order of their
 * place on the diagonal after the sweeps) and eigenvectors v (n x n, ldv >= n:
 * column k belongs to w[k], its largest-magnitude component positive, the lowest
 * index among equals) of the symmetric n x n A whose lower triangle is read
 * (lda >= n), by the cyclic Jacobi method in row-cyclic order. v NULL: the
 * values only (the same bits). sweeps and rotations (each may be NULL) get the
 * sweeps run and the rotations applied (0 for a diagonal A). No convergence in
 * 60 sweeps is SB_ERR_LIMIT. */
SB_API sb_status sb_linalg_eigh(const char *device, int64_t n, const float *a, int64_t lda, float *w, float *v,
                                int64_t ldv, int32_t *sweeps, int64_t *rotations);

/* The random matrices of sb_linalg_random_matrix and sb_linalg_projection. */
typedef enum sb_linalg_random_kind {
    SB_LINALG_NORMAL = 0,    /* standard normal: Marsaglia's polar method */
    SB_LINALG_RADEMACHER = 1 /* +1 or -1, each with probability 1/2 (exact) */
} sb_linalg_random_kind;

/* The rows x cols random matrix of kind and seed into out (ldo >= cols):
 * element (r, c) is a pure function of (seed, kind, r*cols + c), drawn from
 * Philox4x32-10, whatever the device, thread count or tiling. */
SB_API sb_status sb_linalg_random_matrix(const char *device, int32_t kind, uint64_t seed, int64_t rows,
                                         int64_t cols, float *out, int64_t ldo);

/* Y := A Omega (m x l, ldy >= l), the sketch of a randomized SVD (Halko,
 * Martinsson, Tropp, SIAM Review 53, 2011): A is m x n (lda >= n), Omega the
 * n x l matrix sb_linalg_random_matrix(kind, seed) gives, the product sb_gemm's. */
SB_API sb_status sb_linalg_projection(const char *device, int32_t kind, uint64_t seed, int64_t m, int64_t n,
                                      int64_t l, const float *a, int64_t lda, float *y, int64_t ldy);

#ifdef __cplusplus
}
#endif
#endif /* SAMEBITS_H */
