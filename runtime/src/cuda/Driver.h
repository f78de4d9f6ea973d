//===- Driver.h - The CUDA driver API, loaded at run time -------*- C++ -*-===//
//
// libgrove_rt_cuda does not link libcuda: it is loaded with dlopen when the
// first CUDA context is created. A program linked with the runtime then
// starts on a machine without an NVIDIA driver, and context creation
// reports "no CUDA driver" as GROVE_ERROR_NO_DEVICE instead of the loader
// refusing to start the program. cuda.h (from the toolkit) gives the types.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_CUDA_DRIVER_H
#define GROVE_RT_CUDA_DRIVER_H

#include "grove/runtime.h"

#include <cuda.h>

#include <string>

namespace grove::rt::cuda {

// One entry per driver function the runtime uses; the versioned names
// cuda.h maps them to (cuMemAlloc -> cuMemAlloc_v2) are what dlsym sees.
#define GROVE_CUDA_DRIVER_FUNCTIONS(X)                                         \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxGetCurrent)                                                           \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamQuery)                                                             \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventQuery)                                                              \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)                                                        \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemGetInfo)                                                              \
  X(cuMemcpyAsync)                                                             \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoH)                                                              \
  X(cuMemsetD32Async)                                                          \
  X(cuMemsetD16Async)                                                          \
  X(cuModuleLoadData)                                                          \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuLaunchKernel)

struct Driver {
#define GROVE_CUDA_DECLARE(name) decltype(&::name) name = nullptr;
  GROVE_CUDA_DRIVER_FUNCTIONS(GROVE_CUDA_DECLARE)
#undef GROVE_CUDA_DECLARE
};

/// Loads the driver library ($GROVE_CUDA_DRIVER, default "libcuda.so.1") and
/// calls cuInit, once per library path and process. Returns null, with the
/// reason recorded through fail(GROVE_ERROR_NO_DEVICE, ...), if that is
/// impossible. The result (success or the failure message) is cached.
const Driver *loadDriver();

/// "CUDA_ERROR_OUT_OF_MEMORY: out of memory" for `result`.
std::string errorText(const Driver &driver, CUresult result);

/// The status a driver failure maps to (OOM, no device, else INTERNAL).
grove_status statusOf(CUresult result);

} // namespace grove::rt::cuda

#endif // GROVE_RT_CUDA_DRIVER_H
