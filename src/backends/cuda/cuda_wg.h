/* cuda_wg.h: the one work-group (block) size the CUDA backend compiles the
 * entry kernels for (OpenCL chooses its own at run time, -DSB_WG). A
 * schedule input only: no bit depends on it. */
#ifndef SB_CUDA_WG_H
#define SB_CUDA_WG_H
#define SB_WG 256
#endif
