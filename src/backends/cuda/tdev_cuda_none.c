/* tdev_cuda_none.c: what a build without CUDA (no `make CUDA=1`) says about it. */
#include "../tdev.h"
#include "../fdev.h"
#include <stdio.h>

const sb_tdev_ops *sb_tdev_cuda_ops(void) { return NULL; }

void sb_tdev_cuda_describe(char *buf, size_t cap) {
    snprintf(buf, cap, "not built (make CUDA=1 builds the CUDA backend)");
}

sb_status sb_cuda_predict(const sb_k_pnode *nodes, int32_t nnodes, const int32_t *start, int32_t ntrees, int32_t K, int32_t objective,
                          const float *base, const float *x, int64_t n, int32_t ncols, int32_t kind, int32_t per_row,
                          float *out) {
    (void)nodes, (void)nnodes, (void)start, (void)ntrees, (void)K, (void)objective, (void)base, (void)x, (void)n, (void)ncols;
    (void)kind, (void)per_row, (void)out;
    return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "device 'cuda': this build has no CUDA backend (build with make CUDA=1)");
}

const sb_fdev_ops *sb_fdev_cuda_ops(void) { return NULL; }
