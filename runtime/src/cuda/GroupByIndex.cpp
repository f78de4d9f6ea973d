//===- GroupByIndex.cpp - grove_rt_cuda_group_by_index --------------------===//
//
// grove_rt_group_by_index for models compiled with --target=cuda: the
// indices are read back after the stream's work (the kernels that computed
// them), grouped on the host (host/GroupByIndex.h), and both lists copied to
// the device before the call returns. Ids are small next to the rows an
// embedding's gradient moves, and the sort is linear.
//
//===----------------------------------------------------------------------===//

#include "CudaContext.h"

#include "Error.h"
#include "GroupByIndex.h"

#include "grove/abi.h"
#include "grove/runtime.h"

#include <algorithm>
#include <new>
#include <string>
#include <vector>

using namespace grove::rt;
using namespace grove::rt::cuda;

namespace {

constexpr const char *kName = "grove_rt_cuda_group_by_index";

CUdeviceptr address(const grove_memref_i32_1 *m) {
  return reinterpret_cast<CUdeviceptr>(m->aligned + m->offset);
}

bool check(CudaContext &ctx, CUresult r, const char *what) {
  return checkCurrentCall(ctx, r, std::string(kName) + ": " + what);
}

bool group(CudaContext &ctx, const grove_memref_i32_1 *indices,
           grove_memref_i32_1 *order, grove_memref_i32_1 *offsets) {
  const int64_t n = std::max<int64_t>(indices->sizes[0], 0);
  const int64_t groups = std::max<int64_t>(offsets->sizes[0] - 1, 0);
  const int64_t stride = n > 1 ? indices->strides[0] : 1;
  if (stride < 1 || (n > 1 && order->strides[0] != 1) ||
      (groups > 0 && offsets->strides[0] != 1)) {
    failCurrentCall(GROVE_ERROR_INTERNAL,
                    std::string(kName) + ": a strided buffer");
    return false;
  }
  if (!groupByIndexFits(n))
    return false;
  const Driver &d = ctx.cudaDevice().driver();
  if (!check(ctx, d.cuStreamSynchronize(ctx.stream()), "waiting for the ids"))
    return false;
  std::vector<int32_t> ids(
      static_cast<size_t>(n > 0 ? (n - 1) * stride + 1 : 0));
  if (!ids.empty() && !check(ctx,
                             d.cuMemcpyDtoH(ids.data(), address(indices),
                                            ids.size() * sizeof(int32_t)),
                             "reading the ids"))
    return false;
  std::vector<int32_t> hostOrder(static_cast<size_t>(n));
  std::vector<int32_t> hostOffsets(static_cast<size_t>(groups + 1));
  groupByIndex(ids.data(), stride, n, groups, hostOrder.data(),
               hostOffsets.data());
  if (n > 0 && !check(ctx,
                      d.cuMemcpyHtoDAsync(address(order), hostOrder.data(),
                                          hostOrder.size() * sizeof(int32_t),
                                          ctx.stream()),
                      "copying the order"))
    return false;
  if (!check(ctx,
             d.cuMemcpyHtoDAsync(address(offsets), hostOffsets.data(),
                                 hostOffsets.size() * sizeof(int32_t),
                                 ctx.stream()),
             "copying the offsets"))
    return false;
  // The host vectors go when this returns.
  return check(ctx, d.cuStreamSynchronize(ctx.stream()), "copying the lists");
}

} // namespace

extern "C" GROVE_API void
_mlir_ciface_grove_rt_cuda_group_by_index(const grove_memref_i32_1 *indices,
                                          grove_memref_i32_1 *order,
                                          grove_memref_i32_1 *offsets) {
  CudaContext *ctx = currentCall();
  if (!ctx) {
    reportServiceError("grove_rt_cuda_group_by_index: called outside "
                       "grove_invoke");
    return;
  }
  try {
    if (!currentCallFailed())
      (void)group(*ctx, indices, order, offsets);
  } catch (const std::bad_alloc &) {
    failCurrentCall(GROVE_ERROR_OUT_OF_MEMORY,
                    "out of memory grouping an embedding's ids");
  }
}
