//===- ScalarRead.cpp - One element of device memory, for host code -------===//
//
// grove_rt_cuda_read_<type>: grove-memref-to-gpu turns a host read of one
// element of device memory outside any loop (a step counter that picks a
// random block, a flag behind a branch) into a call of this service on a
// rank-0 view of the element. It waits for the stream's work (the element
// may be what a kernel of this call just wrote) and copies the element to
// the host: a synchronization of the stream per read, which the pass
// allows only outside loops.
//
//===----------------------------------------------------------------------===//

#include "CudaContext.h"

#include "Error.h"

#include "grove/abi.h"

#include <cstdint>
#include <string>

using namespace grove::rt;
using namespace grove::rt::cuda;

namespace {

template <typename T, typename Memref>
T readScalar(const Memref *m, const char *name) {
  T value{};
  CudaContext *ctx = currentCall();
  if (!ctx || currentCallFailed())
    return value;
  const Driver &d = ctx->cudaDevice().driver();
  auto address = reinterpret_cast<CUdeviceptr>(m->aligned + m->offset);
  if (checkCurrentCall(*ctx, d.cuStreamSynchronize(ctx->stream()),
                       std::string(name) + ": waiting for the stream"))
    checkCurrentCall(*ctx, d.cuMemcpyDtoH(&value, address, sizeof(T)),
                     std::string(name) + ": reading device memory");
  return value;
}

} // namespace

#define GROVE_CUDA_READ(SUFFIX, TYPE)                                          \
  extern "C" GROVE_API TYPE _mlir_ciface_grove_rt_cuda_read_##SUFFIX(          \
      const grove_memref_##SUFFIX##_0 *m) {                                    \
    return readScalar<TYPE>(m, "grove_rt_cuda_read_" #SUFFIX);                 \
  }
GROVE_CUDA_READ(i1, bool)
GROVE_CUDA_READ(i32, int32_t)
GROVE_CUDA_READ(i64, int64_t)
GROVE_CUDA_READ(f32, float)
GROVE_CUDA_READ(f64, double)
#undef GROVE_CUDA_READ
