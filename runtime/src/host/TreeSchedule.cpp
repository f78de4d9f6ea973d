//===- TreeSchedule.cpp - The tree schedule service -----------------------===//
//
// grove_rt_tree_schedule, which grove-batch-dynamic-trees calls once per
// batch of trees: it validates the forest again (the entry's own check sees
// only forests that are entry inputs) and writes the schedule of Forest.h
// into buffers the generated code allocated. A malformed forest is a
// service error; the buffers are then filled with -1 and no group is
// returned, so the code that follows reads nothing out of bounds.
//
//===----------------------------------------------------------------------===//

#include "TreeSchedule.h"

#include "Error.h"
#include "Trace.h"

#include "grove/abi.h"

#include <algorithm>
#include <cstdint>
#include <new>

using namespace grove::rt;

void grove::rt::writeGroups(grove_memref_i32_2 *groups, const Schedule &s) {
  for (int64_t g = 0; g < groups->sizes[0]; ++g)
    for (int64_t j = 0; j < groups->sizes[1]; ++j)
      groups->aligned[groups->offset + g * groups->strides[0] +
                      j * groups->strides[1]] =
          size_t(g * 4 + j) < s.groups.size() ? s.groups[size_t(g * 4 + j)] : 0;
}

namespace {

/// A rank-1 memref's elements, copied out (the view may be strided).
std::vector<int32_t> read(const grove_memref_i32_1 *m) {
  std::vector<int32_t> values(size_t(std::max<int64_t>(m->sizes[0], 0)));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = m->aligned[m->offset + int64_t(i) * m->strides[0]];
  return values;
}

/// Writes `values` into a rank-1 memref of at least their size; -1 after.
void write(grove_memref_i32_1 *m, const std::vector<int32_t> &values) {
  for (int64_t i = 0; i < m->sizes[0]; ++i)
    m->aligned[m->offset + i * m->strides[0]] =
        size_t(i) < values.size() ? values[size_t(i)] : -1;
}

int64_t schedule(const grove_memref_i32_1 *offsets,
                 const grove_memref_i32_1 *children,
                 const grove_memref_i32_1 *roots, int32_t slots, int32_t mode,
                 grove_memref_i32_1 *const *lists, grove_memref_i32_2 *groups) {
  int64_t listSizes[kScheduleLists];
  for (int i = 0; i < kScheduleLists; ++i)
    listSizes[i] = lists[i]->sizes[0];
  Schedule s;
  std::string error =
      scheduleService(read(offsets), read(children), read(roots), slots, mode,
                      listSizes, groups->sizes[0], groups->sizes[1], s);
  if (!error.empty())
    reportServiceError(("malformed forest: " + error).c_str(),
                       GROVE_ERROR_INVALID_ARGUMENT);
  const std::vector<int32_t> *values[kScheduleLists];
  scheduleLists(s, values);
  for (int i = 0; i < kScheduleLists; ++i)
    write(lists[i], *values[i]);
  writeGroups(groups, s);
  return s.numGroups();
}

} // namespace

extern "C" GROVE_API int64_t _mlir_ciface_grove_rt_tree_schedule(
    const grove_memref_i32_1 *offsets, const grove_memref_i32_1 *children,
    const grove_memref_i32_1 *roots, int32_t slots, int32_t mode,
    grove_memref_i32_1 *order, grove_memref_i32_1 *position,
    grove_memref_i32_2 *groups, grove_memref_i32_1 *edgeChild,
    grove_memref_i32_1 *edgeParent, grove_memref_i32_1 *childStart,
    grove_memref_i32_1 *parentEdge, grove_memref_i32_1 *rootOf,
    grove_memref_i32_1 *rootPosition) {
  grove::rt::trace::Span span("service", "grove_rt_tree_schedule");
  span.arg("roots", roots->sizes[0]);
  span.arg("nodes", offsets->sizes[0] - 1);
  grove_memref_i32_1 *const lists[kScheduleLists] = {
      order,      position,   edgeChild, edgeParent,
      childStart, parentEdge, rootOf,    rootPosition};
  try {
    return schedule(offsets, children, roots, slots, mode, lists, groups);
  } catch (const std::bad_alloc &) {
    reportServiceError("out of memory computing a tree schedule",
                       GROVE_ERROR_OUT_OF_MEMORY);
    return 0;
  }
}
