/* dev_cuda_none.c: a build without CUDA (no `make CUDA=1`) has no CUDA
 * backend; the device layer refuses device=cuda by name. */
#include "../../device/device.h"

const sb_device_backend *sb_backend_cuda(void) { return NULL; }
