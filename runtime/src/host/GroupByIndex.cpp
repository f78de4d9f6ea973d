//===- GroupByIndex.cpp - grove_rt_group_by_index -------------------------===//
//
// One pass counts each group's positions, a prefix sum turns the counts
// into offsets, a second pass places the positions: linear, stable, and
// with no atomics, so the sums the model then takes over each group are
// deterministic. Positions are 32-bit: more than 2^31 - 1 indices fail the
// call (GROVE_ERROR_INVALID_ARGUMENT).
//
//===----------------------------------------------------------------------===//

#include "GroupByIndex.h"

#include "Error.h"
#include "Trace.h"

#include "grove/abi.h"
#include "grove/runtime.h"

#include <algorithm>

void grove::rt::groupByIndex(const int32_t *indices, int64_t indexStride,
                             int64_t n, int64_t groups, int32_t *order,
                             int32_t *offsets) {
  std::fill(offsets, offsets + groups + 1, 0);
  auto inRange = [&](int32_t v) { return v >= 0 && int64_t(v) < groups; };
  // Counts in offsets[g + 1], then the running sums.
  for (int64_t j = 0; j < n; ++j)
    if (int32_t v = indices[j * indexStride]; inRange(v))
      ++offsets[v + 1];
  for (int64_t g = 0; g < groups; ++g)
    offsets[g + 1] += offsets[g];
  // offsets[g] is where group g starts: each serves as the group's cursor
  // while placing, and ends at the next group's start.
  int32_t outside = offsets[groups];
  for (int64_t j = 0; j < n; ++j) {
    int32_t v = indices[j * indexStride];
    if (inRange(v))
      order[offsets[v]++] = int32_t(j);
    else
      order[outside++] = int32_t(j);
  }
  // Each start advanced to the next group's start: shift them back.
  for (int64_t g = groups; g > 0; --g)
    offsets[g] = offsets[g - 1];
  offsets[0] = 0;
}

bool grove::rt::groupByIndexFits(int64_t n) {
  if (n <= int64_t(INT32_MAX))
    return true;
  reportServiceError("grove_rt_group_by_index: more than 2^31 - 1 indices "
                     "(positions are 32-bit)",
                     GROVE_ERROR_INVALID_ARGUMENT);
  return false;
}

extern "C" GROVE_API void
_mlir_ciface_grove_rt_group_by_index(const grove_memref_i32_1 *indices,
                                     grove_memref_i32_1 *order,
                                     grove_memref_i32_1 *offsets) {
  grove::rt::trace::Span span("service", "grove_rt_group_by_index");
  span.arg("n", indices->sizes[0]);
  // The compiler allocates order and offsets contiguous (n and G + 1).
  int64_t n = std::max<int64_t>(indices->sizes[0], 0);
  int64_t groups = std::max<int64_t>(offsets->sizes[0] - 1, 0);
  int64_t stride = n > 1 ? indices->strides[0] : 1;
  int32_t *start = offsets->aligned + offsets->offset;
  if (!grove::rt::groupByIndexFits(n)) {
    // The call fails at its end; empty groups make the sums that follow
    // read nothing meanwhile.
    std::fill(start, start + groups + 1, 0);
    return;
  }
  grove::rt::groupByIndex(indices->aligned + indices->offset, stride, n, groups,
                          order->aligned + order->offset, start);
}
