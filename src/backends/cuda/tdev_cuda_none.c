/* tdev_cuda_none.c: what a build without CUDA (no `make CUDA=1`) says about it. */
#include "../tdev.h"
#include <stdio.h>

const sb_tdev_ops *sb_tdev_cuda_ops(void) { return NULL; }

void sb_tdev_cuda_describe(char *buf, size_t cap) {
    snprintf(buf, cap, "not built (make CUDA=1 builds the CUDA backend)");
}
