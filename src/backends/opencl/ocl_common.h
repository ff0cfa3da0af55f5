/*
 * ocl_common.h: what the OpenCL devices share (the tree device tdev_opencl.c
 * and the forest device fdev_opencl.c): the few types and constants of the
 * OpenCL ABI they use (no OpenCL header is needed), the ICD loader opened
 * with dlopen at first use, the device list, SAMEBITS_OPENCL_DEVICE, the
 * profile's refusals of a device, the separating arms of
 * SAMEBITS_OPENCL_ARM and the program build with the profile's options.
 * Only built without SB_NO_OPENCL.
 */
#ifndef SB_BACKENDS_OCL_COMMON_H
#define SB_BACKENDS_OCL_COMMON_H
#include "../../core/internal.h"
#include <stddef.h>
#include <stdint.h>

/* ---- the OpenCL ABI (Khronos cl.h), as much as is used ---- */

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_ulong cl_bitfield;
typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_program *cl_program;
typedef struct _cl_kernel *cl_kernel;
typedef struct _cl_event *cl_event;

#define CL_SUCCESS 0
#define CL_DEVICE_NOT_FOUND (-1)
#define CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)
#define CL_OUT_OF_RESOURCES (-5)
#define CL_OUT_OF_HOST_MEMORY (-6)
#define CL_PLATFORM_NOT_FOUND_KHR (-1001)
#define CL_DEVICE_TYPE_GPU ((cl_bitfield)1 << 2)
#define CL_DEVICE_TYPE_ALL ((cl_bitfield)0xFFFFFFFF)
#define CL_PLATFORM_VERSION 0x0901
#define CL_PLATFORM_NAME 0x0902
#define CL_DEVICE_TYPE 0x1000
#define CL_DEVICE_MAX_COMPUTE_UNITS 0x1002
#define CL_DEVICE_MAX_WORK_GROUP_SIZE 0x1004
#define CL_DEVICE_MAX_MEM_ALLOC_SIZE 0x1010
#define CL_DEVICE_SINGLE_FP_CONFIG 0x101B
#define CL_DEVICE_LOCAL_MEM_SIZE 0x1023
#define CL_DEVICE_ENDIAN_LITTLE 0x1026
#define CL_DEVICE_NAME 0x102B
#define CL_DRIVER_VERSION 0x102D
#define CL_DEVICE_PROFILE 0x102E
#define CL_DEVICE_EXTENSIONS 0x1030
#define CL_DEVICE_OPENCL_C_VERSION 0x103D
#define CL_DEVICE_DOUBLE_FP_CONFIG 0x1032
#define CL_FP_DENORM ((cl_bitfield)1 << 0)
#define CL_FP_INF_NAN ((cl_bitfield)1 << 1)
#define CL_FP_ROUND_TO_NEAREST ((cl_bitfield)1 << 2)
#define CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT ((cl_bitfield)1 << 7)
#define CL_MEM_READ_WRITE ((cl_bitfield)1 << 0)
#define CL_PROGRAM_BUILD_LOG 0x1183
#define CL_KERNEL_WORK_GROUP_SIZE 0x11B0
#define CL_KERNEL_LOCAL_MEM_SIZE 0x11B2
#define CL_TRUE 1

/* The loader's functions, resolved by name at first use. */
#define OCL_FUNCS(X)                                                                                              \
    X(cl_int, clGetPlatformIDs, (cl_uint, cl_platform_id *, cl_uint *))                                           \
    X(cl_int, clGetPlatformInfo, (cl_platform_id, cl_uint, size_t, void *, size_t *))                            \
    X(cl_int, clGetDeviceIDs, (cl_platform_id, cl_bitfield, cl_uint, cl_device_id *, cl_uint *))                 \
    X(cl_int, clGetDeviceInfo, (cl_device_id, cl_uint, size_t, void *, size_t *))                                \
    X(cl_context, clCreateContext,                                                                                \
      (const intptr_t *, cl_uint, const cl_device_id *, void (*)(const char *, const void *, size_t, void *),     \
       void *, cl_int *))                                                                                         \
    X(cl_int, clReleaseContext, (cl_context))                                                                     \
    X(cl_command_queue, clCreateCommandQueue, (cl_context, cl_device_id, cl_bitfield, cl_int *))                 \
    X(cl_int, clReleaseCommandQueue, (cl_command_queue))                                                          \
    X(cl_mem, clCreateBuffer, (cl_context, cl_bitfield, size_t, void *, cl_int *))                               \
    X(cl_int, clReleaseMemObject, (cl_mem))                                                                       \
    X(cl_program, clCreateProgramWithSource, (cl_context, cl_uint, const char **, const size_t *, cl_int *))     \
    X(cl_int, clBuildProgram,                                                                                     \
      (cl_program, cl_uint, const cl_device_id *, const char *, void (*)(cl_program, void *), void *))            \
    X(cl_int, clGetProgramBuildInfo, (cl_program, cl_device_id, cl_uint, size_t, void *, size_t *))              \
    X(cl_int, clReleaseProgram, (cl_program))                                                                     \
    X(cl_kernel, clCreateKernel, (cl_program, const char *, cl_int *))                                           \
    X(cl_int, clReleaseKernel, (cl_kernel))                                                                       \
    X(cl_int, clSetKernelArg, (cl_kernel, cl_uint, size_t, const void *))                                        \
    X(cl_int, clGetKernelWorkGroupInfo, (cl_kernel, cl_device_id, cl_uint, size_t, void *, size_t *))            \
    X(cl_int, clEnqueueNDRangeKernel,                                                                             \
      (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *, cl_uint,             \
       const cl_event *, cl_event *))                                                                             \
    X(cl_int, clEnqueueReadBuffer,                                                                                \
      (cl_command_queue, cl_mem, cl_uint, size_t, size_t, void *, cl_uint, const cl_event *, cl_event *))         \
    X(cl_int, clEnqueueWriteBuffer,                                                                               \
      (cl_command_queue, cl_mem, cl_uint, size_t, size_t, const void *, cl_uint, const cl_event *, cl_event *))   \
    X(cl_int, clEnqueueCopyBuffer,                                                                                \
      (cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const cl_event *, cl_event *))          \
    X(cl_int, clFinish, (cl_command_queue))

/* The loader's functions (valid once sb_ocl_loader_error() returned NULL). */
typedef struct sb_ocl_api {
#define OCL_FIELD(ret, name, args) ret(*name) args;
    OCL_FUNCS(OCL_FIELD)
#undef OCL_FIELD
} sb_ocl_api;
extern sb_ocl_api sb_cl;

/* NULL when the loader and each of its functions were found (once, on first
 * call), else why not. */
const char *sb_ocl_loader_error(void);

/* ---- devices ---- */

typedef struct sb_ocl_dev {
    cl_platform_id platform;
    cl_device_id device;
    int pi, di; /* platform index, device index within it */
} sb_ocl_dev;

/* Every device of every platform, in platform order (malloc'ed), or a named
 * refusal (no loader, platform or device: SB_ERR_BACKEND_UNAVAILABLE). */
sb_status sb_ocl_list_devices(sb_ocl_dev **out, int *count);
/* A device's or a platform's info string what into buf ("?" when unknown). */
void sb_ocl_dev_string(cl_device_id d, cl_uint what, char *buf, size_t cap);
void sb_ocl_plat_string(cl_platform_id p, cl_uint what, char *buf, size_t cap);
/* NULL when the device can meet the profile (denormals, round to nearest,
 * correctly rounded divide and sqrt, OpenCL C 1.2, int64 and its base
 * atomics, the host's byte order), else the reason in why. */
const char *sb_ocl_device_refusal(cl_device_id d, char *why, size_t cap);
/* The index in list of the device SAMEBITS_OPENCL_DEVICE names ("P:D" or
 * "N"), or by default the first GPU, else the first device. */
sb_status sb_ocl_pick_device(const sb_ocl_dev *list, int n, int *out);
/* A failed OpenCL call as a status (allocation failures: out of memory). */
sb_status sb_ocl_fail(cl_int e, const char *what);
/* The extra build options of the separating arm named arm, or NULL. */
const char *sb_ocl_arm_options(const char *arm);

/* Kernel k's first n arguments: pairs (size, pointer) (name: the kernel's,
 * for the message of a failure). */
sb_status sb_ocl_args(cl_kernel k, const char *name, int n, ...);

/* The device picked (sb_ocl_pick_device) and checked (sb_ocl_device_refusal):
 * *dev, or a named refusal (who: the device's name in messages). */
sb_status sb_ocl_choose(cl_device_id *dev);
/* SAMEBITS_OPENCL_ARM's options into *extra (NULL when unset; a note on
 * stderr when set; an unknown arm is refused). */
sb_status sb_ocl_arm(const char **extra);
/* What both OpenCL devices open with: the device chosen (sb_ocl_choose),
 * the arm's options
 * (sb_ocl_arm), a context and a queue on the device, and the work-group size:
 * 256, halved until the device allows it. What was made before a failure is
 * the caller's to release. */
sb_status sb_ocl_open(cl_device_id *dev, cl_context *ctx, cl_command_queue *q, const char **extra, size_t *wg);
/* Program src (lines lines) built for dev with the profile's options
 * (-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt, never mad-enable or
 * fast-relaxed-math), -DOCL_WG=wg and extra (an arm's); a failed build is
 * SB_ERR_INTERNAL with its log. */
sb_status sb_ocl_build(cl_context ctx, cl_device_id dev, const char *const *src, int32_t lines, const char *extra,
                       size_t wg, cl_program *out);

#endif
