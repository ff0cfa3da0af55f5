/* entry_ts.cu: the time-series program's entry kernels (src/kernels/entry/ts_entry.h)
 * compiled by nvcc, the same source OpenCL builds, after the CUDA vocabulary;
 * and their addresses in programs.h's order, for dev_cuda.cu to launch. */
#include "backends/cuda/compat_cuda.h" /* first: the kernel vocabulary */
#include "backends/cuda/cuda_wg.h"
#include "kernels/entry/ts_entry.h"
#include "device/programs.h"

#define SB_ADDR(n) (const void *)n,
extern "C" const void *const sb_cuda_ts_kernels[] = {SB_TS_KERNELS(SB_ADDR)};
