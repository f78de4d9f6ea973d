//===- Shim.cpp - The mgpu* functions gpu-to-llvm code calls --------------===//
//
// MLIR's gpu-to-llvm lowering calls a small C API (the one MLIR's own
// CudaRuntimeWrappers implement for tests). Grove implements it on top of
// its contexts:
//  * mgpuModuleLoad runs in the model library's constructor, before any
//    device exists: it only records the fatbin; kernels are loaded per
//    device on their first launch.
//  * Streams: generated code asks for a stream per call and synchronizes
//    before host calls; all of it maps to the context's one stream, and
//    grove_invoke synchronizes once at the end.
//  * Buffers come from the device's caching allocator.
// After a failure in a call, later launches and copies are skipped (the
// buffers they would use may not exist) and the call returns the error.
//
//===----------------------------------------------------------------------===//

#include "CudaContext.h"

#include "Error.h"

#include <cstdint>

using namespace grove::rt;
using namespace grove::rt::cuda;

namespace {

/// The current call's context; reports misuse (generated code called
/// outside grove_invoke) once.
CudaContext *call(const char *what) {
  CudaContext *ctx = currentCall();
  if (!ctx)
    reportServiceError(
        (std::string(what) + ": generated CUDA code ran outside grove_invoke")
            .c_str());
  return ctx;
}

/// The current call's context when its work should go on (no earlier
/// failure), else null.
CudaContext *active(const char *what) {
  CudaContext *ctx = call(what);
  return ctx && !currentCallFailed() ? ctx : nullptr;
}

/// The stream generated code passed, or the context's.
CUstream streamOf(CudaContext &ctx, void *stream) {
  return stream ? static_cast<CUstream>(stream) : ctx.stream();
}

} // namespace

extern "C" {

GROVE_API void *mgpuModuleLoad(void *data, size_t size) {
  return new ModuleImage{data, size};
}

// `gpu-format=isa` objects carry PTX text, which cuModuleLoadData also
// takes (JIT-compiled by the driver).
GROVE_API void *mgpuModuleLoadJIT(void *data, int /*optLevel*/) {
  return new ModuleImage{data, 0};
}

GROVE_API void mgpuModuleUnload(void *module) {
  auto *image = static_cast<ModuleImage *>(module);
  CudaDevice::forEach([&](CudaDevice &d) { d.unload(image); });
  delete image;
}

GROVE_API void *mgpuModuleGetFunction(void *module, const char *name) {
  CudaContext *ctx = call("mgpuModuleGetFunction");
  if (!ctx || currentCallFailed())
    return nullptr;
  CUfunction f = nullptr;
  CUresult r = ctx->cudaDevice().function(
      static_cast<const ModuleImage *>(module), name, f);
  if (r == CUDA_SUCCESS && ctx->timeline().active())
    ctx->timeline().nameKernel(f, name);
  if (r != CUDA_SUCCESS) {
    failCurrentCall(statusOf(r), std::string("cannot load kernel '") + name +
                                     "' on " + ctx->cudaDevice().name() + ": " +
                                     errorText(ctx->cudaDevice().driver(), r) +
                                     " (was the model compiled for this GPU's "
                                     "architecture? see grovec --cuda-chip)");
    return nullptr;
  }
  return f;
}

GROVE_API void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                intptr_t gridZ, intptr_t blockX,
                                intptr_t blockY, intptr_t blockZ, int32_t smem,
                                void *stream, void **params, void **extra,
                                size_t /*paramsCount*/) {
  CudaContext *ctx = active("mgpuLaunchKernel");
  if (!ctx || !function)
    return;
  // An empty iteration space (a zero batch) is no launch at all.
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return;
  if (gridX > INT32_MAX || gridY > 65535 || gridZ > 65535) {
    failCurrentCall(GROVE_ERROR_UNSUPPORTED,
                    "kernel grid " + std::to_string(gridX) + "x" +
                        std::to_string(gridY) + "x" + std::to_string(gridZ) +
                        " exceeds the device limits");
    return;
  }
  GpuSpan span = ctx->span("gpu.kernel", "kernel", streamOf(*ctx, stream),
                           static_cast<CUfunction>(function));
  span.arg("grid", gridX * gridY * gridZ);
  span.arg("block", blockX * blockY * blockZ);
  checkCurrentCall(*ctx,
                   ctx->cudaDevice().driver().cuLaunchKernel(
                       static_cast<CUfunction>(function), gridX, gridY, gridZ,
                       blockX, blockY, blockZ, smem, streamOf(*ctx, stream),
                       params, extra),
                   "kernel launch");
}

GROVE_API void *mgpuStreamCreate() {
  CudaContext *ctx = call("mgpuStreamCreate");
  return ctx ? ctx->stream() : nullptr;
}

// The context's stream is never destroyed by generated code, and the one
// synchronization the call needs happens in grove_invoke.
GROVE_API void mgpuStreamDestroy(void *) {}
GROVE_API void mgpuStreamSynchronize(void *) {}

GROVE_API void *mgpuEventCreate() {
  CudaContext *ctx = call("mgpuEventCreate");
  if (!ctx || currentCallFailed())
    return nullptr;
  CUevent event = nullptr;
  checkCurrentCall(
      *ctx,
      ctx->cudaDevice().driver().cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
      "event creation");
  return event;
}

GROVE_API void mgpuEventDestroy(void *event) {
  if (CudaContext *ctx = currentCall(); ctx && event)
    ctx->cudaDevice().driver().cuEventDestroy(static_cast<CUevent>(event));
}

GROVE_API void mgpuEventSynchronize(void *event) {
  if (CudaContext *ctx = currentCall(); ctx && event && !currentCallFailed())
    checkCurrentCall(*ctx,
                     ctx->cudaDevice().driver().cuEventSynchronize(
                         static_cast<CUevent>(event)),
                     "event wait");
}

GROVE_API void mgpuEventRecord(void *event, void *stream) {
  if (CudaContext *ctx = currentCall(); ctx && event && !currentCallFailed())
    checkCurrentCall(*ctx,
                     ctx->cudaDevice().driver().cuEventRecord(
                         static_cast<CUevent>(event), streamOf(*ctx, stream)),
                     "event record");
}

GROVE_API void mgpuStreamWaitEvent(void *stream, void *event) {
  if (CudaContext *ctx = currentCall(); ctx && event && !currentCallFailed())
    checkCurrentCall(
        *ctx,
        ctx->cudaDevice().driver().cuStreamWaitEvent(
            streamOf(*ctx, stream), static_cast<CUevent>(event), 0),
        "stream wait");
}

GROVE_API void *mgpuMemAlloc(uint64_t bytes, void * /*stream*/,
                             bool isHostShared) {
  CudaContext *ctx = active("mgpuMemAlloc");
  if (!ctx || bytes == 0)
    return nullptr;
  if (isHostShared) {
    failCurrentCall(GROVE_ERROR_UNSUPPORTED,
                    "host-shared device allocations are not supported");
    return nullptr;
  }
  void *p = ctx->allocate(bytes);
  if (!p)
    failCurrentCall(GROVE_ERROR_OUT_OF_MEMORY,
                    "out of device memory: cannot allocate " +
                        std::to_string(bytes) + " bytes on " +
                        ctx->cudaDevice().name());
  return p;
}

GROVE_API void mgpuMemFree(void *ptr, void * /*stream*/) {
  // Stream order makes the block safe to reuse for work queued after this.
  if (CudaContext *ctx = currentCall())
    ctx->cudaDevice().allocator().release(ptr);
}

GROVE_API void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  CudaContext *ctx = active("mgpuMemcpy");
  if (!ctx || bytes == 0)
    return;
  GpuSpan span = ctx->span("gpu.copy", "memcpy", streamOf(*ctx, stream));
  span.arg("bytes", static_cast<int64_t>(bytes));
  checkCurrentCall(*ctx,
                   ctx->cudaDevice().driver().cuMemcpyAsync(
                       reinterpret_cast<CUdeviceptr>(dst),
                       reinterpret_cast<CUdeviceptr>(src), bytes,
                       streamOf(*ctx, stream)),
                   "device copy");
}

GROVE_API void mgpuMemset32(void *dst, unsigned value, size_t count,
                            void *stream) {
  CudaContext *ctx = active("mgpuMemset32");
  if (!ctx || count == 0)
    return;
  GpuSpan span = ctx->span("gpu.copy", "memset", streamOf(*ctx, stream));
  span.arg("bytes", static_cast<int64_t>(count * 4));
  checkCurrentCall(*ctx,
                   ctx->cudaDevice().driver().cuMemsetD32Async(
                       reinterpret_cast<CUdeviceptr>(dst), value, count,
                       streamOf(*ctx, stream)),
                   "device memset");
}

GROVE_API void mgpuMemset16(void *dst, unsigned short value, size_t count,
                            void *stream) {
  CudaContext *ctx = active("mgpuMemset16");
  if (!ctx || count == 0)
    return;
  GpuSpan span = ctx->span("gpu.copy", "memset", streamOf(*ctx, stream));
  span.arg("bytes", static_cast<int64_t>(count * 2));
  checkCurrentCall(*ctx,
                   ctx->cudaDevice().driver().cuMemsetD16Async(
                       reinterpret_cast<CUdeviceptr>(dst), value, count,
                       streamOf(*ctx, stream)),
                   "device memset");
}

} // extern "C"
