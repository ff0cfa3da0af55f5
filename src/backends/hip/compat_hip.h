/* compat_hip.h: the kernel vocabulary (src/kernels/compat.h) for HIP. HIP
 * spells the device language as CUDA does (__global__, __shared__,
 * __syncthreads, blockIdx, atomicAdd on 32- and 64-bit integers,
 * __float_as_uint), so the map is CUDA's vocabulary itself after HIP's
 * runtime header: the entry kernels compile unchanged. Compiled with
 * -ffp-contract=off (HIP's clang contracts by default), denormals kept and
 * correctly rounded division and square root (tools/hip-compile-check.sh). */
#ifndef SB_COMPAT_HIP_H
#define SB_COMPAT_HIP_H
#include <hip/hip_runtime.h>
#include "../cuda/compat_cuda.h"
#endif
