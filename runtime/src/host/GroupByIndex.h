//===- GroupByIndex.h - Positions sorted by index -------------------------===//
//
// The counting sort behind grove.group_by_index (an embedding's gradient),
// shared by the host service and its CUDA twin.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_RUNTIME_HOST_GROUPBYINDEX_H
#define GROVE_RUNTIME_HOST_GROUPBYINDEX_H

#include <cstdint>

namespace grove::rt {

/// Writes into `order` (n entries) the positions of `indices` stably sorted
/// by value, those outside [0, groups) last, and into `offsets` (groups + 1
/// entries) where each group starts and, last, where the groups end.
/// `indexStride` steps through a strided view of the indices.
void groupByIndex(const int32_t *indices, int64_t indexStride, int64_t n,
                  int64_t groups, int32_t *order, int32_t *offsets);

/// Whether `n` positions fit the 32-bit lists; if not, fails the current
/// call with a message.
bool groupByIndexFits(int64_t n);

} // namespace grove::rt

#endif // GROVE_RUNTIME_HOST_GROUPBYINDEX_H
