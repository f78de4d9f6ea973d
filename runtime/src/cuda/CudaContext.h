//===- CudaContext.h - Device side of a CUDA model's context ---*- C++ -*-===//
//
// Owns the context's stream (unless the app passed one), its cuBLAS handle,
// its cuDNN convolution service (made on first use)
// and the device copy of the weights. While generated code runs, the
// thread's current call (host/CurrentCall.h) is on its grove_context, which
// is how the mgpu* shim and the cuBLAS service find the stream and device
// without any extra argument in the generated code. Calls on one context run
// one at a time: they share its stream and its cuBLAS and cuDNN handles (and
// their plans), which cuBLAS and cuDNN allow one thread at a time, and on one
// stream their GPU work would run in turn anyway.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_CUDA_CUDACONTEXT_H
#define GROVE_RT_CUDA_CUDACONTEXT_H

#include "Conv.h"
#include "CudaDevice.h"
#include "Device.h"
#include "GpuTimeline.h"

#include <cublas_v2.h>

#include <mutex>
#include <optional>

namespace grove::rt::cuda {

class CudaContext final : public DeviceContext {
public:
  static grove_status create(const ModelDesc &desc,
                             const grove_context_options *options,
                             std::unique_ptr<DeviceContext> &out);
  ~CudaContext() override;

  DLDevice device() const override {
    return DLDevice{kDLCUDA, device_->ordinal()};
  }
  grove_status uploadWeights(const uint8_t *host, size_t bytes) override;
  grove_status updateWeights(const uint8_t *arena, size_t arenaBytes,
                             size_t offset, size_t bytes) override;
  grove_status downloadWeights(uint8_t *host, size_t bytes) const override;
  grove_status download(void *host, const void *device,
                        size_t bytes) const override;
  uint8_t *weights() const override {
    return reinterpret_cast<uint8_t *>(weights_);
  }
  void beginCall() override;
  grove_status endCall() override;
  void *nativeStream() const override { return stream_; }
  void *allocate(size_t bytes) override;
  grove_status copy(void *dst, const void *src, size_t bytes) override;
  DeviceReleaser releaser() const override;

  CudaDevice &cudaDevice() const { return *device_; }
  CUstream stream() const { return stream_; }
  cublasHandle_t blas() const { return blas_; }
  /// The cuDNN convolution service, made on the first convolution; null
  /// with `why` set when cuDNN cannot be used (the failure is kept).
  ConvService *convolutions(std::string &why);
  /// The call's GPU spans while a trace is recorded (GpuTimeline.h).
  GpuTimeline &timeline() { return timeline_; }
  /// Brackets work on `stream` (the context's by default) in a trace span
  /// (nothing when not tracing).
  GpuSpan span(const char *category, const char *name,
               CUstream stream = nullptr, CUfunction kernel = nullptr) {
    return GpuSpan(timeline_, device_->driver(), stream ? stream : stream_,
                   category, name, kernel);
  }
  /// Returns a block from allocate() to the stream-ordered cache.
  void release(void *block) { device_->allocator().release(block); }

private:
  CudaContext(CudaDevice &device) : device_(&device) {}

  CudaDevice *device_;
  CUstream stream_ = nullptr;
  bool ownsStream_ = false;
  bool async_ = false; // GROVE_CONTEXT_ASYNC
  // Held from beginCall to endCall: one call at a time (see above).
  std::mutex callMutex_;
  // The application's CUDA context, restored when a call ends; only the
  // thread holding callMutex_ touches it.
  std::optional<CudaDevice::Scope> scope_;
  cublasHandle_t blas_ = nullptr;
  std::unique_ptr<ConvService> conv_;
  std::string convError_;
  CUdeviceptr weights_ = 0;
  GpuTimeline timeline_;
};

// The CUDA services' view of the one current call (host/CurrentCall.h).

/// The context whose generated code is running on this thread, or null.
CudaContext *currentCall();
/// True once something in the current call failed (a CUDA service or a
/// host one: a check, a failed collective): later launches, copies and
/// GEMMs are skipped so that no kernel runs on a missing buffer.
bool currentCallFailed();
/// Records the first failure of the current call (the enclosing
/// grove_invoke returns it) and marks the call failed; outside calls, the
/// thread's service error (reportServiceError).
void failCurrentCall(grove_status status, const std::string &message);
/// True if `r` succeeded; otherwise fails the current call with "<what>
/// failed: <the driver's message>".
bool checkCurrentCall(const CudaContext &ctx, CUresult r,
                      const std::string &what);

} // namespace grove::rt::cuda

#endif // GROVE_RT_CUDA_CUDACONTEXT_H
