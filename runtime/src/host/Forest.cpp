//===- Forest.cpp - Batches of trees: validation and level schedule -------===//

#include "Forest.h"

#include <algorithm>

namespace grove::rt {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

bool fail(std::string &error, std::string message) {
  error = std::move(message);
  return false;
}

/// Offsets: from 0, not decreasing, to E, no node above maxArity.
bool checkOffsets(const ForestView &f, std::string &error) {
  const int32_t *off = f.offsets;
  if (off[0] != 0)
    return fail(error, "child_offsets[0] is " + str(off[0]) + ", not 0");
  for (int64_t i = 0; i < f.numNodes; ++i) {
    if (off[i + 1] < off[i])
      return fail(error, "node " + str(i) + ": child_offsets[" + str(i + 1) +
                             "] = " + str(off[i + 1]) +
                             " is below child_offsets[" + str(i) +
                             "] = " + str(off[i]));
    if (off[i + 1] > f.numEdges)
      return fail(error, "node " + str(i) + ": child_offsets[" + str(i + 1) +
                             "] = " + str(off[i + 1]) + " is past the " +
                             str(f.numEdges) + " children");
    int64_t arity = int64_t(off[i + 1]) - off[i];
    if (f.maxArity > 0 && arity > f.maxArity)
      return fail(error, "node " + str(i) + " has " + str(arity) +
                             " children; the model allows at most " +
                             str(f.maxArity));
  }
  if (off[f.numNodes] != f.numEdges)
    return fail(error, "child_offsets[" + str(f.numNodes) + "] is " +
                           str(off[f.numNodes]) + " but there are " +
                           str(f.numEdges) + " children");
  return true;
}

/// Children in range, one parent each, no node its own child.
bool checkParents(const ForestView &f, std::vector<int32_t> &parent,
                  std::string &error) {
  parent.assign(size_t(f.numNodes), -1);
  for (int64_t i = 0; i < f.numNodes; ++i)
    for (int64_t e = f.offsets[i]; e < f.offsets[i + 1]; ++e) {
      int64_t c = f.children[e];
      if (c < 0 || c >= f.numNodes)
        return fail(error, "node " + str(i) + ": child " +
                               str(e - f.offsets[i]) + " is " + str(c) +
                               ", not a node (there are " + str(f.numNodes) +
                               ")");
      if (c == i)
        return fail(error, "node " + str(i) + " is its own child");
      if (parent[c] != -1)
        return fail(error, "node " + str(c) + " has two parents: nodes " +
                               str(parent[c]) + " and " + str(i));
      parent[c] = int32_t(i);
    }
  return true;
}

/// Roots: distinct parentless nodes, and every parentless node listed.
bool checkRoots(const ForestView &f, const std::vector<int32_t> &parent,
                std::string &error) {
  std::vector<int32_t> rootOf(size_t(f.numNodes), -1);
  for (int64_t b = 0; b < f.numRoots; ++b) {
    int64_t r = f.roots[b];
    if (r < 0 || r >= f.numNodes)
      return fail(error, "roots[" + str(b) + "] is " + str(r) +
                             ", not a node (there are " + str(f.numNodes) +
                             ")");
    if (parent[r] != -1)
      return fail(error, "roots[" + str(b) + "] is node " + str(r) +
                             ", which is a child of node " + str(parent[r]));
    if (rootOf[r] != -1)
      return fail(error, "roots[" + str(rootOf[r]) + "] and roots[" + str(b) +
                             "] are both node " + str(r));
    rootOf[r] = int32_t(b);
  }
  for (int64_t n = 0; n < f.numNodes; ++n)
    if (parent[n] == -1 && rootOf[n] == -1)
      return fail(error,
                  "node " + str(n) + " has no parent but is not in roots");
  return true;
}

/// With one parent each, a node the roots do not reach is below a cycle.
bool checkAcyclic(const ForestView &f, const std::vector<int32_t> &parent,
                  std::string &error) {
  std::vector<uint8_t> reached(size_t(f.numNodes), 0);
  std::vector<int32_t> stack(f.roots, f.roots + f.numRoots);
  int64_t count = 0;
  while (!stack.empty()) {
    int32_t n = stack.back();
    stack.pop_back();
    reached[n] = 1;
    ++count;
    for (int64_t e = f.offsets[n]; e < f.offsets[n + 1]; ++e)
      stack.push_back(f.children[e]);
  }
  if (count == f.numNodes)
    return true;
  int64_t n = std::find(reached.begin(), reached.end(), 0) - reached.begin();
  // N steps up the parent links land on the cycle itself.
  for (int64_t k = 0; k < f.numNodes; ++k)
    n = parent[n];
  return fail(error, "node " + str(n) +
                         " is its own ancestor (the child links form a cycle)");
}

/// Post-order over the trees in roots' order, with each node's level.
void postOrder(const ForestView &f, std::vector<int32_t> &post,
               std::vector<int32_t> &level) {
  post.clear();
  post.reserve(size_t(f.numNodes));
  level.assign(size_t(f.numNodes), 0);
  std::vector<std::pair<int32_t, int32_t>> stack; // node, next child
  for (int64_t b = 0; b < f.numRoots; ++b) {
    stack.push_back({f.roots[b], 0});
    while (!stack.empty()) {
      auto &[n, k] = stack.back();
      if (f.offsets[n] + k < f.offsets[n + 1]) {
        int32_t child = f.children[f.offsets[n] + k++];
        stack.push_back({child, 0});
        continue;
      }
      int32_t lv = 0;
      for (int64_t e = f.offsets[n]; e < f.offsets[n + 1]; ++e)
        lv = std::max(lv, level[f.children[e]] + 1);
      level[n] = lv;
      post.push_back(n);
      stack.pop_back();
    }
  }
}

/// A stable counting sort of `items` by `key` (values in [0, range)).
void countingSort(std::vector<int32_t> &items, const std::vector<int32_t> &key,
                  int64_t range) {
  std::vector<int64_t> start(size_t(range) + 1, 0);
  for (int32_t n : items)
    ++start[size_t(key[n]) + 1];
  for (int64_t k = 0; k < range; ++k)
    start[k + 1] += start[k];
  std::vector<int32_t> sorted(items.size());
  for (int32_t n : items)
    sorted[size_t(start[key[n]]++)] = n;
  items.swap(sorted);
}

} // namespace

bool validateForest(const ForestView &f, std::string &error) {
  if (f.numNodes < 0 || f.numEdges < 0 || f.numRoots < 0 ||
      f.numNodes >= INT32_MAX || f.numEdges >= INT32_MAX)
    return fail(error, "the forest's sizes are out of range");
  std::vector<int32_t> parent;
  return checkOffsets(f, error) && checkParents(f, parent, error) &&
         checkRoots(f, parent, error) && checkAcyclic(f, parent, error);
}

void scheduleForest(const ForestView &f, ScheduleMode mode, int64_t slots,
                    Schedule &out) {
  const size_t n = size_t(f.numNodes);
  std::vector<int32_t> level, arity(n);
  postOrder(f, out.order, level);
  int32_t maxArity = 0, maxLevel = 0;
  for (size_t i = 0; i < n; ++i) {
    arity[i] = f.offsets[i + 1] - f.offsets[i];
    maxArity = std::max(maxArity, arity[i]);
    maxLevel = std::max(maxLevel, level[i]);
  }
  bool byArity = mode == ScheduleMode::LevelsByArity;
  if (mode != ScheduleMode::Nodes) {
    // Stable counting sorts: by id, then arity, then level.
    for (size_t i = 0; i < n; ++i)
      out.order[i] = int32_t(i);
    if (byArity)
      countingSort(out.order, arity, int64_t(maxArity) + 1);
    countingSort(out.order, level, int64_t(maxLevel) + 1);
  }
  out.position.assign(n, -1);
  for (size_t p = 0; p < n; ++p)
    out.position[out.order[p]] = int32_t(p);

  size_t numEdges = slots ? n * size_t(slots) : size_t(f.numEdges);
  out.groups.clear();
  out.edgeChild.assign(numEdges, -1);
  out.edgeParent.assign(numEdges, -1);
  out.childStart.assign(n + 1, 0);
  out.parentEdge.assign(n, -1);
  int32_t edge = 0;
  for (size_t p = 0; p < n; ++p) {
    int32_t node = out.order[p];
    int32_t prev = p ? out.order[p - 1] : 0;
    bool same = mode != ScheduleMode::Nodes && p > 0 &&
                level[prev] == level[node] &&
                (!byArity || arity[prev] == arity[node]);
    if (!same)
      out.groups.insert(out.groups.end(), {int32_t(p), 0, edge, 0});
    out.groups[out.groups.size() - 3] += 1;
    if (slots)
      edge = int32_t(p) * int32_t(slots);
    out.childStart[p] = edge;
    for (int32_t e = f.offsets[node]; e < f.offsets[node + 1]; ++e, ++edge) {
      int32_t child = out.position[f.children[e]];
      out.edgeChild[size_t(edge)] = child;
      out.parentEdge[size_t(child)] = edge;
    }
    if (slots)
      edge = int32_t(p + 1) * int32_t(slots);
    for (int32_t e = out.childStart[p]; e < edge; ++e)
      out.edgeParent[size_t(e)] = int32_t(p);
    out.groups.back() = edge - out.groups[out.groups.size() - 2];
  }
  out.childStart[n] = edge;
  out.rootOf.assign(n, -1);
  out.rootPosition.resize(size_t(f.numRoots));
  for (int64_t b = 0; b < f.numRoots; ++b) {
    out.rootPosition[size_t(b)] = out.position[f.roots[b]];
    out.rootOf[size_t(out.position[f.roots[b]])] = int32_t(b);
  }
}

std::string scheduleService(const std::vector<int32_t> &offsets,
                            const std::vector<int32_t> &children,
                            const std::vector<int32_t> &roots, int32_t slots,
                            int32_t mode,
                            const int64_t (&listSizes)[kScheduleLists],
                            int64_t groupRows, int64_t groupCols,
                            Schedule &out) {
  const ForestView f = viewOf(offsets, children, roots, slots);
  const int64_t n = f.numNodes, e = slots ? n * slots : f.numEdges;
  const int64_t sizes[kScheduleLists] = {n, n, e, e, n + 1, n, n, f.numRoots};
  bool sized = groupRows >= n && groupCols == 4;
  for (int i = 0; i < kScheduleLists; ++i)
    sized &= listSizes[i] == sizes[i];
  if (offsets.empty())
    return "a forest's child offsets hold N + 1 values, got 0";
  if (slots > 0 && n > INT32_MAX / slots)
    return "N-ary edges (nodes times slots) do not fit int32 indices";
  if (slots < 0 || mode < 0 || mode > 2)
    return "the schedule's slots or mode are out of range";
  if (!sized)
    return "the schedule's buffers do not fit the forest";
  std::string error;
  if (!validateForest(f, error))
    return error;
  scheduleForest(f, ScheduleMode(mode), slots, out);
  return "";
}

void scheduleLists(const Schedule &s,
                   const std::vector<int32_t> *(&lists)[kScheduleLists]) {
  const std::vector<int32_t> *all[kScheduleLists] = {
      &s.order,      &s.position,   &s.edgeChild, &s.edgeParent,
      &s.childStart, &s.parentEdge, &s.rootOf,    &s.rootPosition};
  std::copy(std::begin(all), std::end(all), std::begin(lists));
}

} // namespace grove::rt
