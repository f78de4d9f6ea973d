//===- GpuTimeline.h - GPU work as trace spans ------------------*- C++ -*-===//
//
// While a trace is recorded, every kernel launch, copy, memset and library
// call (cuBLAS, cuDNN) of a call brackets its stream work with two timing
// events. When the call's stream has drained (CudaContext::endCall), their
// times are read and recorded as spans on the device's own track, on the
// host clock: an anchor event recorded as the call began, on an idle
// stream, ties the GPU's clock to the host's. Off, a bracket costs one
// relaxed atomic load.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_CUDA_GPUTIMELINE_H
#define GROVE_RT_CUDA_GPUTIMELINE_H

#include "Driver.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace grove::rt::cuda {

class GpuTimeline {
public:
  /// At the call's start, when a trace is on: the anchor.
  void begin(const Driver &driver, CUstream stream);
  /// After the stream drained: records the call's spans, frees the events.
  void flush(const Driver &driver, int ordinal, const std::string &device);
  /// Frees the events without recording (a failed or asynchronous call,
  /// whose work may still be running).
  void discard(const Driver &driver);
  bool active() const { return anchor_ != nullptr; }

  /// Kernel names by function, for launches (filled only while tracing).
  void nameKernel(CUfunction f, const char *name) { kernels_[f] = name; }
  const char *kernelName(CUfunction f) const;

private:
  friend class GpuSpan;
  struct Work {
    std::string name;
    const char *category;
    std::string args;
    CUevent start, end;
  };
  CUevent anchor_ = nullptr;
  uint64_t anchorHost_ = 0;
  std::vector<Work> work_;
  std::unordered_map<CUfunction, std::string> kernels_;
};

/// Brackets the stream work enqueued in its scope on `stream`; a kernel
/// launch passes its function, whose name is looked up only when tracing.
class GpuSpan {
public:
  GpuSpan(GpuTimeline &timeline, const Driver &driver, CUstream stream,
          const char *category, const char *name, CUfunction kernel = nullptr);
  ~GpuSpan();
  GpuSpan(const GpuSpan &) = delete;
  GpuSpan &operator=(const GpuSpan &) = delete;
  void arg(const char *key, int64_t value);

private:
  GpuTimeline *timeline_ = nullptr; // null: not tracing
  const Driver &driver_;
  CUstream stream_;
  GpuTimeline::Work work_{};
};

} // namespace grove::rt::cuda

#endif // GROVE_RT_CUDA_GPUTIMELINE_H
