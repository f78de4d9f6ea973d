//===- Forest.h - Batches of trees: validation and level schedule -*- C++
//-*-===//
//
// A batch of trees crosses the ABI as CSR child lists (docs/trees.md):
// `offsets` (N + 1 int32: node i's children are children[offsets[i] ..
// offsets[i+1]) ), `children` (E int32 node ids) and `roots` (B int32, one
// per sample). validateForest checks everything compiled code relies on,
// so that a malformed forest is an error that names a node, never an
// out-of-bounds read or a loop that does not end. scheduleForest then
// orders the nodes for grove-batch-dynamic-trees: children before parents,
// grouped by level (or by level and arity, or one a group), in O(nodes +
// edges) without recursion (chains of any depth).
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RUNTIME_HOST_FOREST_H
#define GROVE_RUNTIME_HOST_FOREST_H

#include <cstdint>
#include <string>
#include <vector>

namespace grove::rt {

/// A forest as the ABI passes it; the arrays are borrowed.
struct ForestView {
  int64_t numNodes = 0;              // N
  const int32_t *offsets = nullptr;  // N + 1
  int64_t numEdges = 0;              // E
  const int32_t *children = nullptr; // E
  int64_t numRoots = 0;              // B
  const int32_t *roots = nullptr;    // B
  /// Most children a node may have (the model's N-ary cell); 0: any.
  int64_t maxArity = 0;
};

/// A view of a forest held in vectors (the services' host copies, tests).
inline ForestView viewOf(const std::vector<int32_t> &offsets,
                         const std::vector<int32_t> &children,
                         const std::vector<int32_t> &roots, int64_t maxArity) {
  ForestView v;
  v.numNodes = int64_t(offsets.size()) - 1;
  v.offsets = offsets.data();
  v.numEdges = int64_t(children.size());
  v.children = children.data();
  v.numRoots = int64_t(roots.size());
  v.roots = roots.data();
  v.maxArity = maxArity;
  return v;
}

/// Whether `f` is a well-formed forest: offsets start at 0, never decrease
/// and end at E; every child is a node; no node has two parents or is its
/// own ancestor; no node has more than maxArity children; the roots are
/// distinct nodes without a parent, and every node without one is a root.
/// On failure `error` says what is wrong and names the node.
bool validateForest(const ForestView &f, std::string &error);

/// How nodes are grouped; each group runs the cell once.
enum class ScheduleMode : int32_t {
  /// By level, level = 1 + the highest child level (leaves: 0).
  Levels = 0,
  /// One node a group, in post-order: the unbatched reference.
  Nodes = 1,
  /// By (level, arity): DyNet's and the JIT-batching paper's signatures,
  /// more groups of fewer nodes.
  LevelsByArity = 2,
};

/// A schedule over node positions 0..N-1: the nodes of one group are
/// consecutive positions, children come before their parents (in an
/// earlier group). Edges link a parent position to a child position:
/// * child-sum (slots == 0): the E edges numbered in their parents'
///   position order, so a group's edges are consecutive too and node p's
///   are childStart[p] .. childStart[p + 1];
/// * N-ary (slots == K): edge p * K + k is child slot k of position p,
///   its child -1 where p has fewer than k + 1 children.
struct Schedule {
  std::vector<int32_t> order;    // position -> node
  std::vector<int32_t> position; // node -> position
  /// Per group: first position, node count, first edge, edge count.
  std::vector<int32_t> groups;
  std::vector<int32_t> edgeChild;    // edge -> child position, or -1
  std::vector<int32_t> edgeParent;   // edge -> parent position
  std::vector<int32_t> childStart;   // position -> first edge (N + 1)
  std::vector<int32_t> parentEdge;   // position -> edge to its parent, or -1
  std::vector<int32_t> rootOf;       // position -> index in roots, or -1
  std::vector<int32_t> rootPosition; // root index -> position
  int64_t numGroups() const { return int64_t(groups.size() / 4); }
};

/// Schedules a forest validateForest accepted, with `slots` child slots a
/// node (0: child-sum edges).
void scheduleForest(const ForestView &f, ScheduleMode mode, int64_t slots,
                    Schedule &out);

/// The schedule service's lists, in its argument order (grove/abi.h):
/// order, position, edge_child, edge_parent, child_start, parent_edge,
/// root_of, root_position.
constexpr int kScheduleLists = 8;

/// What grove_rt_tree_schedule and its CUDA twin do on host copies of the
/// forest: check the buffers the generated code allocated (`listSizes`,
/// `groupRows` x `groupCols`) against the forest, validate it and schedule
/// it. Returns the error, empty on success.
std::string scheduleService(const std::vector<int32_t> &offsets,
                            const std::vector<int32_t> &children,
                            const std::vector<int32_t> &roots, int32_t slots,
                            int32_t mode,
                            const int64_t (&listSizes)[kScheduleLists],
                            int64_t groupRows, int64_t groupCols,
                            Schedule &out);

/// The lists of `s` in the service's argument order.
void scheduleLists(const Schedule &s,
                   const std::vector<int32_t> *(&lists)[kScheduleLists]);

} // namespace grove::rt

#endif // GROVE_RUNTIME_HOST_FOREST_H
