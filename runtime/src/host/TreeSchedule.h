//===- TreeSchedule.h - What the tree schedule services share ---*- C++ -*-===//
//
// grove_rt_tree_schedule (TreeSchedule.cpp) and grove_rt_cuda_tree_schedule
// (src/cuda/TreeSchedule.cpp) compute the same schedule (Forest.h) on host
// copies of the forest; both write the group table into host memory, which
// the generated group loop reads on the host on every target.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RUNTIME_HOST_TREESCHEDULE_H
#define GROVE_RUNTIME_HOST_TREESCHEDULE_H

#include "Forest.h"

#include "grove/abi.h"

namespace grove::rt {

/// Writes the group table of `s` (first position, count, first edge, edge
/// count a row) into `groups`, zeros after its groups.
void writeGroups(grove_memref_i32_2 *groups, const Schedule &s);

} // namespace grove::rt

#endif // GROVE_RUNTIME_HOST_TREESCHEDULE_H
