//===- CudaDevice.h - Process-wide state of one GPU -------------*- C++ -*-===//
//
// One per device ordinal, created on first use and kept until exit: the
// retained primary context (shared with cudart, hence with cuBLAS), the
// caching allocator (output tensors may outlive the context that made
// them), and the kernels loaded from the models' embedded fatbins.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_CUDA_CUDADEVICE_H
#define GROVE_RT_CUDA_CUDADEVICE_H

#include "CachingAllocator.h"
#include "Driver.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace grove::rt::cuda {

/// A fatbin embedded in a model library, registered by the library's
/// constructor (mgpuModuleLoad) before any device exists; loaded into a
/// device's context on the first launch there.
struct ModuleImage {
  const void *data = nullptr;
  size_t size = 0;
};

class CudaDevice {
public:
  /// The device `ordinal`, initialising the driver and the device on first
  /// use. Null if impossible, with the reason recorded by fail() and its
  /// status in `status` (NO_DEVICE, or OUT_OF_MEMORY).
  static CudaDevice *get(int ordinal, grove_status &status);
  /// True once the process is exiting (atexit): the driver may already be
  /// gone, so unloading does not call it.
  static bool exiting();
  /// Every device created so far (for unloading a module image).
  static void forEach(const std::function<void(CudaDevice &)> &fn);

  const Driver &driver() const { return driver_; }
  int ordinal() const { return ordinal_; }
  CUdevice handle() const { return device_; }
  CUcontext context() const { return context_; }
  const std::string &name() const { return name_; }
  CachingAllocator &allocator() { return allocator_; }

  /// Makes the primary context current on this thread.
  CUresult makeCurrent() const;

  /// Makes the device's context current for a scope and restores the
  /// thread's previous one after it, so that an application's own CUDA
  /// context (another device, say) is left as it was.
  class Scope {
  public:
    explicit Scope(const CudaDevice &device);
    ~Scope();
    CUresult result() const { return result_; }

  private:
    const Driver &driver_;
    CUcontext previous_ = nullptr;
    bool restore_ = false;
    CUresult result_;
  };
  /// The kernel `name` of `image` in this device's context (cached).
  CUresult function(const ModuleImage *image, const char *name,
                    CUfunction &out);
  /// Unloads `image` from this device if it was loaded.
  void unload(const ModuleImage *image);

private:
  CudaDevice(const Driver &driver, int ordinal, CUdevice device,
             CUcontext context, std::string name);

  const Driver &driver_;
  int ordinal_;
  CUdevice device_;
  CUcontext context_;
  std::string name_;
  CachingAllocator allocator_;
  std::mutex mutex_;
  std::map<const ModuleImage *, CUmodule> modules_;
  // Kernel names are constant strings in the model library: key by address.
  std::map<std::pair<const ModuleImage *, const char *>, CUfunction> functions_;
};

} // namespace grove::rt::cuda

#endif // GROVE_RT_CUDA_CUDADEVICE_H
