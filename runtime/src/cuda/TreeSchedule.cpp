//===- TreeSchedule.cpp - The tree schedule service on CUDA ---------------===//
//
// grove_rt_cuda_tree_schedule: grove_rt_tree_schedule (src/host) for models
// compiled with --target=cuda. grove-memref-to-gpu puts the forest and the
// index lists in device memory and the group table in host memory, because
// the group loop runs on the host and launches each group's kernels. The
// forest is read back in stream order (after the kernels that may have
// computed it), scheduled on the host (Forest.h), and the lists are copied
// to the device on the context's stream. The call then waits for those
// copies so that the host vectors can go. It thus synchronizes the stream
// twice a batch (before the reads, after the copies): small next to the
// per-level launches, but it also waits for work earlier calls queued on an
// asynchronous context (GROVE_CONTEXT_ASYNC).
//
//===----------------------------------------------------------------------===//

#include "CudaContext.h"

#include "Error.h"
#include "TreeSchedule.h"

#include "grove/abi.h"

#include <algorithm>
#include <new>
#include <string>

using namespace grove::rt;
using namespace grove::rt::cuda;

namespace {

constexpr const char *kName = "grove_rt_cuda_tree_schedule";

bool contiguous(const grove_memref_i32_1 *m) {
  return m->sizes[0] <= 1 || m->strides[0] == 1;
}

CUdeviceptr address(const grove_memref_i32_1 *m) {
  return reinterpret_cast<CUdeviceptr>(m->aligned + m->offset);
}

bool check(CudaContext &ctx, CUresult r, const char *what) {
  return checkCurrentCall(ctx, r, std::string(kName) + ": " + what);
}

/// Copies the device list `m` to the host (the caller waited for the
/// stream's work). A strided view (a forest computed in the model) is read as
/// the span it covers and picked out here.
bool download(CudaContext &ctx, const grove_memref_i32_1 *m,
              std::vector<int32_t> &out) {
  const int64_t n = std::max<int64_t>(m->sizes[0], 0);
  const int64_t stride = n > 1 ? m->strides[0] : 1;
  out.resize(size_t(n));
  if (n == 0)
    return true;
  if (stride < 1) {
    failCurrentCall(GROVE_ERROR_UNSUPPORTED,
                    std::string(kName) + ": a forest list with stride " +
                        std::to_string(stride));
    return false;
  }
  std::vector<int32_t> span(size_t((n - 1) * stride + 1));
  const Driver &d = ctx.cudaDevice().driver();
  if (!check(ctx,
             d.cuMemcpyDtoH(span.data(), address(m),
                            span.size() * sizeof(int32_t)),
             "reading the forest"))
    return false;
  for (int64_t i = 0; i < n; ++i)
    out[size_t(i)] = span[size_t(i * stride)];
  return true;
}

/// Computes the schedule into `s` and its lists into device memory; false
/// (the call failed) on a malformed forest or a CUDA error.
bool schedule(CudaContext &ctx, const grove_memref_i32_1 *const (&forest)[3],
              int32_t slots, int32_t mode,
              grove_memref_i32_1 *const (&lists)[kScheduleLists],
              const grove_memref_i32_2 *groups, Schedule &s) {
  for (const grove_memref_i32_1 *m : lists)
    if (!contiguous(m)) {
      failCurrentCall(GROVE_ERROR_INTERNAL,
                      std::string(kName) + ": a strided schedule buffer");
      return false;
    }
  // Once for the three lists: the kernels that may have computed them.
  const Driver &d = ctx.cudaDevice().driver();
  if (!check(ctx, d.cuStreamSynchronize(ctx.stream()),
             "waiting for the forest"))
    return false;
  std::vector<int32_t> host[3];
  for (int i = 0; i < 3; ++i)
    if (!download(ctx, forest[i], host[i]))
      return false;
  int64_t listSizes[kScheduleLists];
  for (int i = 0; i < kScheduleLists; ++i)
    listSizes[i] = lists[i]->sizes[0];
  std::string error =
      scheduleService(host[0], host[1], host[2], slots, mode, listSizes,
                      groups->sizes[0], groups->sizes[1], s);
  if (!error.empty()) {
    failCurrentCall(GROVE_ERROR_INVALID_ARGUMENT, "malformed forest: " + error);
    return false;
  }
  const std::vector<int32_t> *values[kScheduleLists];
  scheduleLists(s, values);
  for (int i = 0; i < kScheduleLists; ++i)
    if (!values[i]->empty() &&
        !check(ctx,
               d.cuMemcpyHtoDAsync(address(lists[i]), values[i]->data(),
                                   values[i]->size() * sizeof(int32_t),
                                   ctx.stream()),
               "copying the schedule"))
      return false;
  return check(ctx, d.cuStreamSynchronize(ctx.stream()),
               "copying the schedule");
}

} // namespace

extern "C" GROVE_API int64_t _mlir_ciface_grove_rt_cuda_tree_schedule(
    const grove_memref_i32_1 *offsets, const grove_memref_i32_1 *children,
    const grove_memref_i32_1 *roots, int32_t slots, int32_t mode,
    grove_memref_i32_1 *order, grove_memref_i32_1 *position,
    grove_memref_i32_2 *groups, grove_memref_i32_1 *edgeChild,
    grove_memref_i32_1 *edgeParent, grove_memref_i32_1 *childStart,
    grove_memref_i32_1 *parentEdge, grove_memref_i32_1 *rootOf,
    grove_memref_i32_1 *rootPosition) {
  const grove_memref_i32_1 *const forest[3] = {offsets, children, roots};
  grove_memref_i32_1 *const lists[kScheduleLists] = {
      order,      position,   edgeChild, edgeParent,
      childStart, parentEdge, rootOf,    rootPosition};
  // No group runs unless the schedule is complete: later kernels of a
  // failed call are skipped anyway, and the host loop reads only the table.
  Schedule s;
  CudaContext *ctx = currentCall();
  if (!ctx)
    reportServiceError("grove_rt_cuda_tree_schedule: called outside "
                       "grove_invoke");
  try {
    if (ctx && !currentCallFailed() &&
        !schedule(*ctx, forest, slots, mode, lists, groups, s))
      s = Schedule();
  } catch (const std::bad_alloc &) {
    failCurrentCall(GROVE_ERROR_OUT_OF_MEMORY,
                    "out of memory computing a tree schedule");
    s = Schedule();
  }
  writeGroups(groups, s);
  return s.numGroups();
}
