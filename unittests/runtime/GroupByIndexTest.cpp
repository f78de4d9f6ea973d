//===- GroupByIndexTest.cpp - grove_rt_group_by_index ---------------------===//
//
// The counting sort behind an embedding's gradient, against a stable sort
// of the same positions: groups in order, positions in order within a
// group, out-of-range indices last, offsets at the group boundaries.
//
//===----------------------------------------------------------------------===//

#include "Error.h"

#include "grove/abi.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace grove::rt;

namespace {

grove_memref_i32_1 view(std::vector<int32_t> &v, int64_t stride = 1) {
  int64_t n = stride == 1 ? int64_t(v.size()) : int64_t(v.size()) / stride;
  return {v.data(), v.data(), 0, {n}, {stride}};
}

/// order and offsets from grove_rt_group_by_index.
std::pair<std::vector<int32_t>, std::vector<int32_t>>
group(std::vector<int32_t> ids, int32_t groups, int64_t stride = 1) {
  size_t n = stride == 1 ? ids.size() : ids.size() / size_t(stride);
  std::vector<int32_t> order(n, -7), offsets(size_t(groups) + 1, -7);
  grove_memref_i32_1 in = view(ids, stride), o = view(order),
                     off = view(offsets);
  _mlir_ciface_grove_rt_group_by_index(&in, &o, &off);
  return {order, offsets};
}

/// The reference: positions stably sorted by key, out-of-range keys last.
std::pair<std::vector<int32_t>, std::vector<int32_t>>
reference(const std::vector<int32_t> &ids, int32_t groups) {
  auto key = [&](int32_t j) {
    int32_t v = ids[size_t(j)];
    return v >= 0 && v < groups ? v : groups;
  };
  std::vector<int32_t> order(ids.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return key(a) < key(b); });
  std::vector<int32_t> offsets(size_t(groups) + 1, 0);
  for (int32_t g = 0; g <= groups; ++g)
    offsets[size_t(g)] = int32_t(std::count_if(
        ids.begin(), ids.end(), [&](int32_t v) { return v >= 0 && v < g; }));
  return {order, offsets};
}

TEST(GroupByIndex, SortsStablyWithOutOfRangeLast) {
  std::vector<int32_t> ids = {3, 1, -1, 3, 0, 7, 1, 3};
  auto [order, offsets] = group(ids, 4);
  EXPECT_EQ(order, (std::vector<int32_t>{4, 1, 6, 0, 3, 7, 2, 5}));
  EXPECT_EQ(offsets, (std::vector<int32_t>{0, 1, 3, 3, 6}));
}

TEST(GroupByIndex, MatchesAStableSortOnRandomIds) {
  std::mt19937 gen(11);
  for (int trial = 0; trial < 20; ++trial) {
    int32_t groups = 1 + int32_t(gen() % 50);
    std::vector<int32_t> ids(gen() % 300);
    for (int32_t &v : ids)
      v = int32_t(gen() % uint32_t(groups + 4)) - 2;
    EXPECT_EQ(group(ids, groups), reference(ids, groups)) << "trial " << trial;
  }
}

TEST(GroupByIndex, EmptyIdsGiveEmptyGroups) {
  auto [order, offsets] = group({}, 3);
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(offsets, (std::vector<int32_t>{0, 0, 0, 0}));
}

TEST(GroupByIndex, ReadsAStridedView) {
  // Every other element: ids 2, 0, 2.
  std::vector<int32_t> ids = {2, 9, 0, 9, 2, 9};
  auto [order, offsets] = group(ids, 3, /*stride=*/2);
  EXPECT_EQ(order, (std::vector<int32_t>{1, 0, 2}));
  EXPECT_EQ(offsets, (std::vector<int32_t>{0, 1, 1, 3}));
}

TEST(GroupByIndex, MorePositionsThan32BitsFailTheCall) {
  // A view claiming 2^31 indices (never read: the size is refused first).
  clearServiceError();
  int32_t one = 0;
  std::vector<int32_t> offsets(3, -7);
  grove_memref_i32_1 in = {&one, &one, 0, {int64_t(1) << 31}, {0}};
  grove_memref_i32_1 o = {&one, &one, 0, {int64_t(1) << 31}, {1}};
  grove_memref_i32_1 off = view(offsets);
  _mlir_ciface_grove_rt_group_by_index(&in, &o, &off);
  std::string message;
  grove_status status;
  ASSERT_TRUE(takeServiceError(message, status));
  EXPECT_EQ(status, GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("2^31 - 1"), std::string::npos) << message;
  EXPECT_EQ(offsets, (std::vector<int32_t>{0, 0, 0}));
}

} // namespace
