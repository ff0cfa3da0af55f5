/* entry_gp.cu: the Gaussian process program's entry kernels
 * (src/kernels/entry/gp_entry.h) compiled by nvcc, the same source OpenCL
 * builds, after the CUDA vocabulary; and their addresses in programs.h's
 * order, for dev_cuda.cu to launch. */
#include "backends/cuda/compat_cuda.h" /* first: the kernel vocabulary */
#include "backends/cuda/cuda_wg.h"
#include "kernels/entry/gp_entry.h"
#include "device/programs.h"

#define SB_ADDR(n) (const void *)n,
extern "C" const void *const sb_cuda_gp_kernels[] = {SB_GP_KERNELS(SB_ADDR)};
