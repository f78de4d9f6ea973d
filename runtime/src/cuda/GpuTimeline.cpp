//===- GpuTimeline.cpp - GPU work as trace spans --------------------------===//

#include "GpuTimeline.h"

#include "../host/Trace.h"

using namespace grove::rt;
using namespace grove::rt::cuda;

namespace {

CUevent timingEvent(const Driver &d) {
  CUevent e = nullptr;
  return d.cuEventCreate(&e, CU_EVENT_DEFAULT) == CUDA_SUCCESS ? e : nullptr;
}

} // namespace

void GpuTimeline::begin(const Driver &d, CUstream stream) {
  if (!trace::enabled() || anchor_)
    return;
  anchor_ = timingEvent(d);
  // The host's time as the anchor is queued: an idle stream reaches it at
  // once, so GPU spans never start before the call that queued them.
  anchorHost_ = trace::now();
  if (anchor_ && d.cuEventRecord(anchor_, stream) != CUDA_SUCCESS)
    discard(d);
}

const char *GpuTimeline::kernelName(CUfunction f) const {
  auto it = kernels_.find(f);
  return it == kernels_.end() ? "kernel" : it->second.c_str();
}

void GpuTimeline::flush(const Driver &d, int ordinal,
                        const std::string &device) {
  if (!anchor_)
    return;
  uint32_t track = trace::deviceTrack(ordinal);
  trace::nameTrack(track, "GPU " + std::to_string(ordinal) + " (" + device +
                              ") stream");
  auto at = [&](CUevent e, uint64_t &ns) {
    float ms = 0;
    if (d.cuEventElapsedTime(&ms, anchor_, e) != CUDA_SUCCESS)
      return false;
    ns = anchorHost_ + static_cast<uint64_t>(double(ms) * 1e6);
    return true;
  };
  for (const Work &w : work_) {
    uint64_t start = 0, end = 0;
    if (at(w.start, start) && at(w.end, end))
      trace::recordOn(track, w.name, w.category, start, end, w.args);
  }
  discard(d);
}

void GpuTimeline::discard(const Driver &d) {
  for (const Work &w : work_) {
    d.cuEventDestroy(w.start);
    d.cuEventDestroy(w.end);
  }
  work_.clear();
  if (anchor_)
    d.cuEventDestroy(anchor_);
  anchor_ = nullptr;
}

GpuSpan::GpuSpan(GpuTimeline &timeline, const Driver &driver, CUstream stream,
                 const char *category, const char *name, CUfunction kernel)
    : driver_(driver), stream_(stream) {
  if (!timeline.active() || !trace::enabled())
    return;
  if (kernel)
    name = timeline.kernelName(kernel);
  work_.start = timingEvent(driver);
  work_.end = timingEvent(driver);
  if (!work_.start || !work_.end ||
      driver.cuEventRecord(work_.start, stream) != CUDA_SUCCESS) {
    if (work_.start)
      driver.cuEventDestroy(work_.start);
    if (work_.end)
      driver.cuEventDestroy(work_.end);
    return;
  }
  work_.name = name;
  work_.category = category;
  timeline_ = &timeline;
}

GpuSpan::~GpuSpan() {
  if (!timeline_)
    return;
  if (driver_.cuEventRecord(work_.end, stream_) != CUDA_SUCCESS) {
    driver_.cuEventDestroy(work_.start);
    driver_.cuEventDestroy(work_.end);
    return;
  }
  timeline_->work_.push_back(std::move(work_));
}

void GpuSpan::arg(const char *key, int64_t value) {
  if (timeline_)
    trace::appendArg(work_.args, key, value);
}
