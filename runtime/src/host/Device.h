//===- Device.h - Where a context's tensors live ----------------*- C++ -*-===//
//
// Host contexts keep weights, inputs and outputs in host memory and need
// nothing here. A device model (descriptor `"target":"cuda"`) gets a
// DeviceContext: the host sources only see this interface, so they compile
// the same for libgrove_rt (where createDeviceContext reports that the
// runtime has no device support) and libgrove_rt_cuda (runtime/src/cuda).
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_DEVICE_H
#define GROVE_RT_DEVICE_H

#include "Descriptor.h"

#include "grove/runtime.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace grove::rt {

/// Frees a device buffer handed out by DeviceContext::allocate. Outlives
/// every context (output tensors may outlive theirs).
struct DeviceReleaser {
  void (*fn)(void *arg, void *ptr) = nullptr;
  void *arg = nullptr;
  void operator()(void *ptr) const {
    if (ptr)
      fn(arg, ptr);
  }
};

class DeviceContext {
public:
  virtual ~DeviceContext() = default;

  /// The device inputs, outputs and weight views are on.
  virtual DLDevice device() const = 0;

  /// Replaces the device copy of all weights by `bytes` from `host`
  /// (all-or-nothing: on failure the previous device weights stay).
  virtual grove_status uploadWeights(const uint8_t *host, size_t bytes) = 0;
  /// Copies `bytes` at `offset` of the host arena (`arenaBytes` in all)
  /// into the device weights, uploading the whole arena if there are none
  /// yet.
  virtual grove_status updateWeights(const uint8_t *arena, size_t arenaBytes,
                                     size_t offset, size_t bytes) = 0;
  /// Copies the device weights (which the app may have written through a
  /// view) into `host`.
  virtual grove_status downloadWeights(uint8_t *host, size_t bytes) const = 0;
  /// Copies `bytes` of a caller's device tensor to `host`, after the work
  /// queued before (an input's values the runtime must check).
  virtual grove_status download(void *host, const void *device,
                                size_t bytes) const = 0;
  /// Device address of the weights (null before the first upload).
  virtual uint8_t *weights() const = 0;

  /// Brackets a call of generated code (CurrentCall, which is current on
  /// this thread for both): readies the device for the generated code's
  /// runtime calls (mgpu*, cuBLAS), then waits for the queued work. Failures
  /// go to the current call; endCall also returns its status. Every
  /// beginCall is followed by endCall on the same thread (a device context
  /// may hold a lock in between).
  virtual void beginCall() = 0;
  virtual grove_status endCall() = 0;
  /// The stream the calls' work goes to (CurrentCall::stream).
  virtual void *nativeStream() const = 0;

  /// Device buffers for results the runtime must copy (aliases of inputs or
  /// weights); freed with releaser().
  virtual void *allocate(size_t bytes) = 0;
  virtual grove_status copy(void *dst, const void *src, size_t bytes) = 0;
  virtual DeviceReleaser releaser() const = 0;
};

/// Creates the device context a model with `desc.target` needs.
/// options may be NULL (device 0, a stream of the context's own).
grove_status createDeviceContext(const ModelDesc &desc,
                                 const grove_context_options *options,
                                 std::unique_ptr<DeviceContext> &out);

} // namespace grove::rt

#endif // GROVE_RT_DEVICE_H
