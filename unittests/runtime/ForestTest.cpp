//===- ForestTest.cpp - Forest validation and the tree schedule -----------===//

#include "Forest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace grove::rt;

namespace {

/// A forest built from a parent array (-1: root, in order of ids).
struct Forest {
  std::vector<int32_t> offsets, children, roots;
  int64_t maxArity = 0;

  static Forest fromParents(const std::vector<int32_t> &parent) {
    Forest f;
    size_t n = parent.size();
    std::vector<std::vector<int32_t>> kids(n);
    for (size_t i = 0; i < n; ++i)
      if (parent[i] < 0)
        f.roots.push_back(int32_t(i));
      else
        kids[size_t(parent[i])].push_back(int32_t(i));
    f.offsets.push_back(0);
    for (auto &k : kids) {
      f.children.insert(f.children.end(), k.begin(), k.end());
      f.offsets.push_back(int32_t(f.children.size()));
    }
    return f;
  }
  ForestView view() const { return viewOf(offsets, children, roots, maxArity); }
  std::string error() const {
    std::string e;
    EXPECT_FALSE(validateForest(view(), e));
    return e;
  }
};

/// Checks every promise Schedule makes about `f` (`slots` child slots a
/// node, 0: child-sum edges).
void expectValidSchedule(const Forest &f, ScheduleMode mode,
                         int64_t slots = 0) {
  ForestView v = f.view();
  std::string e;
  ASSERT_TRUE(validateForest(v, e)) << e;
  Schedule s;
  scheduleForest(v, mode, slots, s);
  size_t n = size_t(v.numNodes);
  ASSERT_EQ(s.order.size(), n);
  std::vector<int32_t> sorted = s.order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(sorted[i], int32_t(i)) << "order is not a permutation";
  for (size_t p = 0; p < n; ++p)
    ASSERT_EQ(s.position[size_t(s.order[p])], int32_t(p));
  size_t numEdges = slots ? n * size_t(slots) : size_t(v.numEdges);
  ASSERT_EQ(s.edgeChild.size(), numEdges);
  ASSERT_EQ(s.childStart.size(), n + 1);
  // Groups tile the positions and their edges; a node's children are its
  // edges' (slot k at edge p * K + k), all in earlier groups.
  int32_t nextPos = 0, nextEdge = 0;
  for (int64_t g = 0; g < s.numGroups(); ++g) {
    int32_t first = s.groups[g * 4], count = s.groups[g * 4 + 1],
            edge = s.groups[g * 4 + 2], edges = s.groups[g * 4 + 3];
    ASSERT_EQ(first, nextPos);
    ASSERT_GE(count, 1);
    ASSERT_EQ(edge, nextEdge);
    ASSERT_EQ(edge, s.childStart[size_t(first)]);
    ASSERT_EQ(edge + edges, s.childStart[size_t(first + count)]);
    if (mode == ScheduleMode::Nodes) {
      ASSERT_EQ(count, 1);
    }
    for (int32_t p = first; p < first + count; ++p) {
      int32_t node = s.order[size_t(p)];
      int32_t arity = f.offsets[node + 1] - f.offsets[node];
      int32_t begin = s.childStart[size_t(p)], end = s.childStart[p + 1];
      ASSERT_EQ(end - begin, slots ? slots : arity);
      for (int32_t k = 0; k < end - begin; ++k) {
        int32_t child = s.edgeChild[size_t(begin + k)];
        ASSERT_EQ(s.edgeParent[size_t(begin + k)], p);
        if (k >= arity) {
          ASSERT_EQ(child, -1);
          continue;
        }
        ASSERT_EQ(child, s.position[f.children[f.offsets[node] + k]]);
        ASSERT_LT(child, first) << "a child in or after its parent's group";
        ASSERT_EQ(s.parentEdge[size_t(child)], begin + k);
      }
    }
    nextPos = first + count;
    nextEdge = edge + edges;
  }
  ASSERT_EQ(nextPos, int32_t(n));
  ASSERT_EQ(nextEdge, int32_t(numEdges));
  for (size_t b = 0; b < f.roots.size(); ++b) {
    int32_t p = s.rootPosition[b];
    ASSERT_EQ(s.order[size_t(p)], f.roots[b]);
    ASSERT_EQ(s.rootOf[size_t(p)], int32_t(b));
    ASSERT_EQ(s.parentEdge[size_t(p)], -1);
  }
}

TEST(ForestTest, RandomForestsScheduleChildrenFirst) {
  std::mt19937 gen(7);
  for (int trial = 0; trial < 50; ++trial) {
    size_t n = 1 + gen() % 200;
    std::vector<int32_t> parent(n);
    for (size_t i = 0; i < n; ++i)
      parent[i] = (i == 0 || gen() % 8 == 0) ? -1 : int32_t(gen() % i);
    Forest f = Forest::fromParents(parent);
    expectValidSchedule(f, ScheduleMode::Levels);
    expectValidSchedule(f, ScheduleMode::Nodes);
    expectValidSchedule(f, ScheduleMode::LevelsByArity);
    int64_t most = 0;
    for (size_t i = 0; i + 1 < f.offsets.size(); ++i)
      most = std::max<int64_t>(most, f.offsets[i + 1] - f.offsets[i]);
    expectValidSchedule(f, ScheduleMode::Levels, most + 1);
  }
}

TEST(ForestTest, GroupsByLevelOrByLevelAndArity) {
  // 0 <- {1, 2}, 1 <- {3}, 2 <- {4}, 5 alone: levels 2, 1, 1, 0, 0, 0.
  Forest f = Forest::fromParents({-1, 0, 0, 1, 2, -1, 5});
  // 5 <- {6}: level 1 with arity 1 too.
  Schedule s;
  scheduleForest(f.view(), ScheduleMode::Levels, 0, s);
  EXPECT_EQ(s.order, (std::vector<int32_t>{3, 4, 6, 1, 2, 5, 0}));
  EXPECT_EQ(s.groups,
            (std::vector<int32_t>{0, 3, 0, 0, 3, 3, 0, 3, 6, 1, 3, 2}));
  scheduleForest(f.view(), ScheduleMode::LevelsByArity, 0, s);
  EXPECT_EQ(s.numGroups(), 3);
  // With a leaf at level 1's arity 0... none here; a wider tree splits.
  Forest g = Forest::fromParents({-1, 0, 0, 1, 1, 2, -1, 6});
  scheduleForest(g.view(), ScheduleMode::LevelsByArity, 0, s);
  // Leaves {3, 4, 5, 7}, then level 1: {2, 6} arity 1, {1} arity 2, then 0.
  EXPECT_EQ(s.order, (std::vector<int32_t>{3, 4, 5, 7, 2, 6, 1, 0}));
  EXPECT_EQ(s.numGroups(), 4);
}

TEST(ForestTest, EdgeCases) {
  Forest empty;
  empty.offsets = {0};
  expectValidSchedule(empty, ScheduleMode::Levels);
  Schedule s;
  scheduleForest(empty.view(), ScheduleMode::Levels, 0, s);
  EXPECT_EQ(s.numGroups(), 0);

  Forest singles = Forest::fromParents({-1, -1, -1});
  expectValidSchedule(singles, ScheduleMode::Levels);
  scheduleForest(singles.view(), ScheduleMode::Levels, 0, s);
  EXPECT_EQ(s.numGroups(), 1);

  // A chain far deeper than any recursion would survive.
  std::vector<int32_t> chain(200000);
  for (size_t i = 0; i < chain.size(); ++i)
    chain[i] = int32_t(i) - 1;
  expectValidSchedule(Forest::fromParents(chain), ScheduleMode::Levels);
  expectValidSchedule(Forest::fromParents(chain), ScheduleMode::Nodes);

  std::vector<int32_t> wide(301, 0);
  wide[0] = -1;
  expectValidSchedule(Forest::fromParents(wide), ScheduleMode::Levels);
}

TEST(ForestTest, MalformedForestsNameTheNode) {
  Forest f = Forest::fromParents({-1, 0, 0, 1});
  Forest bad = f;
  bad.offsets[0] = 1;
  EXPECT_NE(bad.error().find("child_offsets[0] is 1"), std::string::npos);
  bad = f;
  bad.offsets[2] = 0;
  EXPECT_NE(bad.error().find("node 1: child_offsets[2] = 0 is below"),
            std::string::npos);
  bad = f;
  bad.children.push_back(3);
  EXPECT_NE(bad.error().find("child_offsets[4] is 3 but there are 4 children"),
            std::string::npos);
  bad = f;
  bad.children[2] = 9;
  EXPECT_NE(bad.error().find("node 1: child 0 is 9, not a node"),
            std::string::npos);
  bad = f;
  bad.children[2] = 1;
  EXPECT_NE(bad.error().find("node 1 is its own child"), std::string::npos);
  bad = f;
  bad.children[2] = 2;
  EXPECT_NE(bad.error().find("node 2 has two parents: nodes 0 and 1"),
            std::string::npos);
  bad = f;
  bad.roots = {1};
  EXPECT_NE(bad.error().find("roots[0] is node 1, which is a child of node 0"),
            std::string::npos);
  bad = f;
  bad.roots = {0, 0};
  EXPECT_NE(bad.error().find("roots[0] and roots[1] are both node 0"),
            std::string::npos);
  bad = f;
  bad.roots = {-3};
  EXPECT_NE(bad.error().find("roots[0] is -3, not a node"), std::string::npos);
  bad = f;
  bad.roots = {};
  EXPECT_NE(bad.error().find("node 0 has no parent but is not in roots"),
            std::string::npos);
  bad = f;
  bad.maxArity = 1;
  EXPECT_NE(bad.error().find("node 0 has 2 children; the model allows at "
                             "most 1"),
            std::string::npos);
  // 0 -> 1 -> 2 -> 1: node 1 and 2 are each other's ancestors, 3 is fine.
  Forest cycle;
  cycle.offsets = {0, 1, 2, 3, 3};
  cycle.children = {1, 2, 1};
  cycle.roots = {0, 3};
  EXPECT_NE(cycle.error().find("two parents"), std::string::npos);
  // A cycle without a node of two parents: 1 -> 2 -> 1, apart from root 0.
  cycle.offsets = {0, 0, 1, 2};
  cycle.children = {2, 1};
  cycle.roots = {0};
  std::string e = cycle.error();
  EXPECT_NE(e.find("is its own ancestor"), std::string::npos) << e;
}

} // namespace
