//===- CudaContext.cpp ----------------------------------------------------===//

#include "CudaContext.h"

#include "Context.h"
#include "CurrentCall.h"
#include "Error.h"

using namespace grove::rt;
using namespace grove::rt::cuda;

namespace {
std::string blasText(cublasStatus_t s) {
  return std::string(cublasGetStatusName(s)) + ": " + cublasGetStatusString(s);
}
} // namespace

CudaContext *grove::rt::cuda::currentCall() {
  // Every device context of this library is a CudaContext.
  CurrentCall *call = grove::rt::currentCall();
  return call ? static_cast<CudaContext *>(call->context().device.get())
              : nullptr;
}

bool grove::rt::cuda::currentCallFailed() { return serviceErrorPending(); }

void grove::rt::cuda::failCurrentCall(grove_status status,
                                      const std::string &message) {
  reportServiceError(message.c_str(), status);
}

bool grove::rt::cuda::checkCurrentCall(const CudaContext &ctx, CUresult r,
                                       const std::string &what) {
  if (r == CUDA_SUCCESS)
    return true;
  failCurrentCall(statusOf(r),
                  what + " failed: " + errorText(ctx.cudaDevice().driver(), r));
  return false;
}

grove_status
grove::rt::createDeviceContext(const ModelDesc &desc,
                               const grove_context_options *options,
                               std::unique_ptr<DeviceContext> &out) {
  if (desc.target != "cuda")
    return fail(GROVE_ERROR_UNSUPPORTED,
                "target '" + desc.target + "' is not supported");
  return CudaContext::create(desc, options, out);
}

grove_status CudaContext::create(const ModelDesc &,
                                 const grove_context_options *options,
                                 std::unique_ptr<DeviceContext> &out) {
  int ordinal = options ? options->device_id : 0;
  const bool hasFlags =
      options && options->struct_size >=
                     offsetof(grove_context_options, flags) + sizeof(uint32_t);
  const uint32_t flags = hasFlags ? options->flags : 0;
  if (flags & ~GROVE_CONTEXT_ASYNC)
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "unknown grove_context_options flags " +
                    std::to_string(flags & ~GROVE_CONTEXT_ASYNC));
  void *stream =
      options && options->struct_size >=
                     offsetof(grove_context_options, stream) + sizeof(void *)
          ? options->stream
          : nullptr;
  grove_status why = GROVE_OK;
  CudaDevice *device = CudaDevice::get(ordinal, why);
  if (!device)
    return why;
  const Driver &d = device->driver();
  std::unique_ptr<CudaContext> ctx(new CudaContext(*device));
  ctx->async_ = flags & GROVE_CONTEXT_ASYNC;
  CudaDevice::Scope scope(*device);
  if (CUresult r = scope.result(); r != CUDA_SUCCESS)
    return fail(statusOf(r), "cannot use CUDA device " +
                                 std::to_string(ordinal) + ": " +
                                 errorText(d, r));
  if (stream) {
    ctx->stream_ = static_cast<CUstream>(stream);
  } else {
    // A blocking stream: it waits for work on the legacy default stream,
    // where cudaMemcpy and friends put the inputs an application prepares
    // (a non-blocking stream could read them before they land).
    if (CUresult r = d.cuStreamCreate(&ctx->stream_, CU_STREAM_DEFAULT);
        r != CUDA_SUCCESS)
      return fail(statusOf(r),
                  "cannot create a CUDA stream: " + errorText(d, r));
    ctx->ownsStream_ = true;
  }
  if (cublasStatus_t s = cublasCreate(&ctx->blas_);
      s != CUBLAS_STATUS_SUCCESS) {
    ctx->blas_ = nullptr;
    return fail(s == CUBLAS_STATUS_ALLOC_FAILED ? GROVE_ERROR_OUT_OF_MEMORY
                                                : GROVE_ERROR_NO_DEVICE,
                "cannot create a cuBLAS handle: " + blasText(s));
  }
  // Partial sums of split-K f16/bf16 GEMMs stay in f32 (cuBLAS may round
  // them to the output type by default); TF32 stays off.
  if (cublasStatus_t s = cublasSetMathMode(
          ctx->blas_,
          cublasMath_t(CUBLAS_DEFAULT_MATH |
                       CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
      s != CUBLAS_STATUS_SUCCESS)
    return fail(GROVE_ERROR_INTERNAL,
                "cannot set the cuBLAS math mode: " + blasText(s));
  if (cublasStatus_t s = cublasSetStream(
          ctx->blas_, reinterpret_cast<cudaStream_t>(ctx->stream_));
      s != CUBLAS_STATUS_SUCCESS)
    return fail(GROVE_ERROR_INTERNAL,
                "cannot set the cuBLAS stream: " + blasText(s));
  out = std::move(ctx);
  return GROVE_OK;
}

CudaContext::~CudaContext() {
  CudaDevice::Scope scope(*device_);
  const Driver &d = device_->driver();
  // Queued calls (GROVE_CONTEXT_ASYNC) may still read the weights.
  if (stream_)
    d.cuStreamSynchronize(stream_);
  conv_.reset();
  if (blas_)
    cublasDestroy(blas_);
  if (stream_ && ownsStream_)
    d.cuStreamDestroy(stream_);
  if (weights_)
    d.cuMemFree(weights_);
}

/// Copies host bytes to the device in the context stream's order (after
/// any queued call, before any later one) and waits for them to land.
static CUresult upload(const Driver &d, CUstream stream, CUdeviceptr dst,
                       const void *src, size_t bytes) {
  CUresult r = d.cuStreamSynchronize(stream);
  if (r == CUDA_SUCCESS)
    r = d.cuMemcpyHtoDAsync(dst, src, bytes, stream);
  if (r == CUDA_SUCCESS)
    r = d.cuStreamSynchronize(stream);
  return r;
}

grove_status CudaContext::uploadWeights(const uint8_t *host, size_t bytes) {
  const Driver &d = device_->driver();
  CudaDevice::Scope scope(*device_);
  if (CUresult r = scope.result(); r != CUDA_SUCCESS)
    return fail(statusOf(r), "cannot use the CUDA device: " + errorText(d, r));
  CUdeviceptr fresh = 0;
  if (bytes > 0) {
    CUresult r = d.cuMemAlloc(&fresh, bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
      // Blocks cached for calls are the first thing to give back.
      device_->allocator().trim();
      r = d.cuMemAlloc(&fresh, bytes);
    }
    if (r != CUDA_SUCCESS)
      return fail(statusOf(r),
                  "cannot allocate " + std::to_string(bytes) +
                      " bytes of device weights: " + errorText(d, r));
    if ((r = upload(d, stream_, fresh, host, bytes)) != CUDA_SUCCESS) {
      d.cuMemFree(fresh);
      return fail(statusOf(r), "cannot upload the weights: " + errorText(d, r));
    }
  }
  // upload() waited for queued calls: nothing reads the old copy any more.
  if (weights_)
    d.cuMemFree(weights_);
  weights_ = fresh;
  return GROVE_OK;
}

grove_status CudaContext::updateWeights(const uint8_t *arena, size_t arenaBytes,
                                        size_t offset, size_t bytes) {
  if (!weights_)
    return uploadWeights(arena, arenaBytes);
  const Driver &d = device_->driver();
  CudaDevice::Scope scope(*device_);
  if (CUresult r = upload(d, stream_, weights_ + offset, arena + offset, bytes);
      r != CUDA_SUCCESS)
    return fail(statusOf(r), "cannot upload the weight: " + errorText(d, r));
  return GROVE_OK;
}

grove_status CudaContext::downloadWeights(uint8_t *host, size_t bytes) const {
  if (!weights_ || bytes == 0)
    return GROVE_OK;
  const Driver &d = device_->driver();
  CudaDevice::Scope scope(*device_);
  CUresult r = d.cuStreamSynchronize(stream_);
  if (r == CUDA_SUCCESS)
    r = d.cuMemcpyDtoH(host, weights_, bytes);
  if (r != CUDA_SUCCESS)
    return fail(statusOf(r), "cannot download the weights: " + errorText(d, r));
  return GROVE_OK;
}

grove_status CudaContext::download(void *host, const void *device,
                                   size_t bytes) const {
  if (bytes == 0)
    return GROVE_OK;
  const Driver &d = device_->driver();
  CudaDevice::Scope scope(*device_);
  CUresult r = d.cuStreamSynchronize(stream_);
  if (r == CUDA_SUCCESS)
    r = d.cuMemcpyDtoH(host, reinterpret_cast<CUdeviceptr>(device), bytes);
  if (r != CUDA_SUCCESS)
    return fail(statusOf(r), "cannot read an input: " + errorText(d, r));
  return GROVE_OK;
}

void CudaContext::beginCall() {
  callMutex_.lock(); // released by endCall, which CurrentCall always calls
  scope_.emplace(*device_);
  if (CUresult r = scope_->result(); r != CUDA_SUCCESS)
    failCurrentCall(statusOf(r), "cannot use CUDA device " +
                                     std::to_string(device_->ordinal()) + ": " +
                                     errorText(device_->driver(), r));
  else if (!async_) // an idle stream: its clock ties to the host's here
    timeline_.begin(device_->driver(), stream_);
}

grove_status CudaContext::endCall() {
  // The call's services have ended (their hooks: started collectives are
  // waited for). Every launch, copy and GEMM went to stream_; one wait covers
  // them and surfaces asynchronous faults (an illegal address, say) in this
  // call. Asynchronous contexts leave the work queued.
  CUresult r =
      async_ ? CUDA_SUCCESS : device_->driver().cuStreamSynchronize(stream_);
  if (r != CUDA_SUCCESS)
    failCurrentCall(statusOf(r), "the call's GPU work failed: " +
                                     errorText(device_->driver(), r));
  grove_status s = currentCallFailed() ? GROVE_ERROR_INTERNAL : GROVE_OK;
  if (r == CUDA_SUCCESS && s == GROVE_OK)
    timeline_.flush(device_->driver(), device_->ordinal(), device_->name());
  else
    timeline_.discard(device_->driver());
  scope_.reset();
  callMutex_.unlock();
  return s;
}

ConvService *CudaContext::convolutions(std::string &why) {
  if (!conv_ && convError_.empty())
    conv_ = ConvService::create(*this, convError_);
  why = convError_;
  return conv_.get();
}

void *CudaContext::allocate(size_t bytes) {
  return device_->allocator().allocate(bytes, stream_);
}

grove_status CudaContext::copy(void *dst, const void *src, size_t bytes) {
  const Driver &d = device_->driver();
  CudaDevice::Scope scope(*device_);
  CUresult r =
      d.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                      reinterpret_cast<CUdeviceptr>(src), bytes, stream_);
  if (r == CUDA_SUCCESS && !async_)
    r = d.cuStreamSynchronize(stream_);
  if (r != CUDA_SUCCESS)
    return fail(statusOf(r), "device copy failed: " + errorText(d, r));
  return GROVE_OK;
}

DeviceReleaser CudaContext::releaser() const {
  DeviceReleaser r;
  r.fn = [](void *device, void *ptr) {
    static_cast<CudaDevice *>(device)->allocator().release(ptr);
  };
  r.arg = device_;
  return r;
}
