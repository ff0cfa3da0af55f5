/*
 * programs.h: the entry kernels (src/kernels/entry/) of each program, by name, in one list the
 * host and every backend share. The OpenCL device creates its kernels by
 * these names; the CUDA device takes their addresses from the same list
 * (backends/cuda/entry_*.cu); the families launch them by index
 * (SB_KT_<name>, SB_KF_<name>). Plain C: no backend, no kernel body.
 */
#ifndef SB_DEVICE_PROGRAMS_H
#define SB_DEVICE_PROGRAMS_H

/* tree_entry.h: gradient boosting training and tree prediction */
#define SB_TREE_KERNELS(X)                                                                                    \
    X(k_fill) X(k_iota) X(k_grad1) X(k_gradk) X(k_maxabs) X(k_quantize) X(k_part_count) X(k_part_scan)       \
    X(k_part_scatter) X(k_part_copy) X(k_zero_slots) X(k_hist) X(k_hist_local) X(k_hist_local32) X(k_subtract) X(k_best)        \
    X(k_add_tree) X(k_predict) X(k_predict_leaf) X(k_predict_contrib)

/* forest_entry.h: random forests, Extra Trees, isolation forests */
#define SB_FOREST_KERNELS(X)                                                                                  \
    X(kf_fill) X(kf_boot) X(kf_compact) X(kf_sums) X(kf_small) X(kf_select) X(kf_hist) X(kf_best) X(kf_part) \
    X(kf_part_serial) X(kf_part_copy) X(kf_sub_counts) X(kf_sub_classes) X(kf_sub_max) X(kf_sub_scale)        \
    X(kf_sub_fix) X(kf_iso_sample) X(kf_iso_range) X(kf_iso_pick)

/* core_entry.h: the profile-core fixture on a GPU */
#define SB_CORE_KERNELS(X)                                                                                    \
    X(kc_rng_words) X(kc_rng_maps) X(kc_math_input) X(kc_reduce_input) X(kc_map) X(kc_tree_leaves)             \
    X(kc_tree_combine) X(kc_tree_serial) X(kc_sacc_chunks) X(kc_sacc_final)

/* linalg_entry.h: the identical matrix product (src/linalg) */
#define SB_LINALG_GEMM_KERNELS(X)                                                                             \
    X(kl_stats_zero) X(kl_line_scale) X(kl_stats_finish) X(kl_line_scale_rows) X(kl_split) X(kl_split_tiled)  \
    X(kl_igemm) X(kl_combine) X(kl_special) X(kl_direct_sum) X(kl_direct_sum_rows8) X(kl_direct_row) X(kl_direct_finish) \
    X(kl_line_scale_ranges) X(kl_direct_tall)
/* linalg_reduce_entry.h: sums, norms, distances, selection */
#define SB_LINALG_REDUCE_KERNELS(X)                                                                           \
    X(kr_fill64) X(kr_fill32) X(kr_line_sum) X(kr_line_sum_final) X(kr_line_sqnorm) X(kr_line_sqnorm_final)   \
    X(kr_line_select) X(kr_line_select_final) X(kr_topk) X(kr_rows_decode) X(kr_sqdist)
/* linalg_solve_entry.h: factorizations, solves, eigenvalues, projections */
#define SB_LINALG_SOLVE_KERNELS(X)                                                                            \
    X(kls_chol_scales) X(kls_chol_prep) X(kls_chol_col) X(kls_chol_unscale) X(kls_trsm) X(kls_eig_jacobi)          \
    X(kls_eig_order) X(kls_eig_vectors) X(kls_random)
/* linear_entry.h: the linear family's own rows (src/models/linear) */
#define SB_LINALG_LINEAR_KERNELS(X) X(kn_logit_rows) X(kn_center_rows) X(kn_eigh_rot) X(kn_eigh_qform) X(kn_eigh_transpose) \
    X(kn_eigh_hh_reflect) X(kn_eigh_hh_matvec) X(kn_eigh_hh_pdv) X(kn_eigh_hh_rank2) X(kn_eigh_tridiag)
/* cluster_entry.h: k-means and agglomerative clustering (src/models/cluster) */
#define SB_LINALG_CLUSTER_KERNELS(X)                                                                          \
    X(kk_assign) X(kk_changed) X(kk_sums) X(kk_merge) X(kk_mass) X(kk_inertia_rows) X(kk_columns) X(ka_dist)
/* neighbors_entry.h: the nearest-neighbors screen (src/models/neighbors) */
#define SB_LINALG_NEIGHBORS_KERNELS(X) X(kn_dots) X(kn_select) X(kn_compact) X(kn_unpanel)
/* density_entry.h: kernel density's sums (src/models/neighbors/kde.c) */
#define SB_LINALG_DENSITY_KERNELS(X) X(kd_sums)
/* nn_entry.h: the network building blocks (src/models/mlp/mlp_dev.c) */
#define SB_LINALG_NN_KERNELS(X)                                                                               \
    X(knet_gather) X(knet_bias_act) X(knet_softmax) X(knet_loss_rows) X(knet_sq_parts) X(knet_batch_loss)     \
    X(knet_delta) X(knet_wgrad) X(knet_colsum) X(knet_act_back) X(knet_adam) X(knet_sgd)
/* lm_entry.h: the byte language model's rows (src/models/lm/lm_dev.c) */
#define SB_LINALG_LM_KERNELS(X)                                                                               \
    X(klm_embed) X(klm_dropout) X(klm_ew) X(klm_ln) X(klm_ln_back) X(klm_heads) X(klm_bstats) X(klm_bfix)     \
    X(klm_bprod) X(klm_attn_soft) X(klm_attn_dsoft) X(klm_xent) X(klm_zero) X(klm_embed_back) X(klm_clip_scale) \
    X(klm_scale) X(klm_adamw)
/* umap_entry.h: UMAP's batched epoch (src/models/manifold/umap_batched.c) */
#define SB_LINALG_UMAP_KERNELS(X) X(kum_edges) X(kum_apply)
#define SB_LINALG_KERNELS(X)                                                                                  \
    SB_LINALG_GEMM_KERNELS(X) SB_LINALG_REDUCE_KERNELS(X) SB_LINALG_SOLVE_KERNELS(X) SB_LINALG_LINEAR_KERNELS(X) \
    SB_LINALG_CLUSTER_KERNELS(X) SB_LINALG_NEIGHBORS_KERNELS(X) SB_LINALG_DENSITY_KERNELS(X) SB_LINALG_NN_KERNELS(X) \
    SB_LINALG_LM_KERNELS(X) SB_LINALG_UMAP_KERNELS(X)

/* ts_entry.h: the float64 program: time series, one work-item a series
 * (src/models/timeseries: ets, arima), and the support vector machines' kernel rows and
 * decision values (svm_entry.h, src/models/svm) */
#define SB_TS_KERNELS(X) X(ke_ets_fit) X(kv_row) X(kv_rows) X(kv_dec) X(ke_arima_fit)

/* gp_entry.h: Gaussian process regression (src/models/gp; float64) */
#define SB_GP_KERNELS(X)                                                                                           \
    X(ke_gp_kmat) X(ke_gp_kcross) X(ke_gp_chol_diag) X(ke_gp_chol_panel) X(ke_gp_gemm_sub) X(ke_gp_gemm_tile) X(ke_gp_eye)          \
        X(ke_gp_inv_block) X(ke_gp_wmat) X(ke_gp_grad)

#define SB_ENTRY_ENUM_T(n) SB_KT_##n,
#define SB_ENTRY_ENUM_F(n) SB_KF_##n,
#define SB_ENTRY_ENUM_C(n) SB_KC_##n,
#define SB_ENTRY_ENUM_L(n) SB_KL_##n,
#define SB_ENTRY_ENUM_S(n) SB_KS_##n,
#define SB_ENTRY_ENUM_G(n) SB_KG_##n,
enum { SB_TREE_KERNELS(SB_ENTRY_ENUM_T) SB_KT_N };
enum { SB_FOREST_KERNELS(SB_ENTRY_ENUM_F) SB_KF_N };
enum { SB_CORE_KERNELS(SB_ENTRY_ENUM_C) SB_KC_N };
enum { SB_LINALG_KERNELS(SB_ENTRY_ENUM_L) SB_KL_N };
enum { SB_TS_KERNELS(SB_ENTRY_ENUM_S) SB_KS_N };
enum { SB_GP_KERNELS(SB_ENTRY_ENUM_G) SB_KG_N };
#undef SB_ENTRY_ENUM_T
#undef SB_ENTRY_ENUM_F
#undef SB_ENTRY_ENUM_C
#undef SB_ENTRY_ENUM_L
#undef SB_ENTRY_ENUM_S
#undef SB_ENTRY_ENUM_G

/* The programs a device can be opened with. */
typedef enum sb_program_id {
    SB_PROG_TREE = 0,
    SB_PROG_FOREST = 1,
    SB_PROG_CORE = 2,
    SB_PROG_LINALG = 3,
    SB_PROG_TS = 4, /* float64: a device without IEEE doubles is refused by name */
    SB_PROG_GP = 5, /* float64, as SB_PROG_TS */
    SB_PROG_N = 6
} sb_program_id;

/* Kernels of program p. */
static inline int sb_program_kernels(sb_program_id p) {
    return p == SB_PROG_TREE     ? (int)SB_KT_N
           : p == SB_PROG_FOREST ? (int)SB_KF_N
           : p == SB_PROG_CORE   ? (int)SB_KC_N
           : p == SB_PROG_TS     ? (int)SB_KS_N
           : p == SB_PROG_GP     ? (int)SB_KG_N
                                 : (int)SB_KL_N;
}

#endif
