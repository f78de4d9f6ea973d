//===- DialectHelpersTest.cpp - The dialect's shape helpers ---------------===//
//
// The C++ helpers the verifiers and lowerings share (GroveOps.h), against
// numpy's broadcasting rules and PyTorch's pooling output sizes, written out.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::grove;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

TEST(BroadcastShapes, NumpyRulesWithStaticOnesStretching) {
  auto b = [](ArrayRef<int64_t> l, ArrayRef<int64_t> r) {
    return broadcastShapes(l, r);
  };
  EXPECT_EQ(*b({2, 3}, {3}), (SmallVector<int64_t>{2, 3}));
  EXPECT_EQ(*b({4, 1, 5}, {3, 1}), (SmallVector<int64_t>{4, 3, 5}));
  EXPECT_EQ(*b({}, {7}), (SmallVector<int64_t>{7}));
  EXPECT_EQ(*b({1}, {1}), (SmallVector<int64_t>{1}));
  EXPECT_EQ(*b({0, 3}, {1, 3}), (SmallVector<int64_t>{0, 3}));
  EXPECT_TRUE(failed(b({2, 3}, {4})));
  EXPECT_TRUE(failed(b({2}, {0})));
}

TEST(BroadcastShapes, DynamicNeverStretches) {
  // A static 1 stretches to a dynamic size; a dynamic one stays dynamic.
  EXPECT_EQ(*broadcastShapes({kDyn, 4}, {1, 4}),
            (SmallVector<int64_t>{kDyn, 4}));
  EXPECT_EQ(*broadcastShapes({kDyn}, {kDyn}), (SmallVector<int64_t>{kDyn}));
  // A dynamic size against a static one other than 1 is that size (the
  // run-time check makes them agree).
  EXPECT_EQ(*broadcastShapes({kDyn}, {5}), (SmallVector<int64_t>{5}));
}

TEST(WindowedOutputSize, FloorAndCeilModes) {
  // (in + pads - window) / stride + 1
  EXPECT_EQ(getWindowedOutputSize(224, 3, 3, 7, 2, false), 112);
  EXPECT_EQ(getWindowedOutputSize(112, 1, 1, 3, 2, false), 56);
  EXPECT_EQ(getWindowedOutputSize(5, 0, 0, 2, 2, false), 2);
  // Ceil mode keeps a last partial window, unless it starts in the
  // trailing padding (PyTorch): 5 with window 2 stride 2 -> 3.
  EXPECT_EQ(getWindowedOutputSize(5, 0, 0, 2, 2, true), 3);
  EXPECT_EQ(getWindowedOutputSize(4, 0, 0, 2, 2, true), 2);
  EXPECT_EQ(getWindowedOutputSize(6, 1, 1, 3, 2, true), 4);
  // A window larger than the padded input: -1.
  EXPECT_EQ(getWindowedOutputSize(2, 0, 0, 3, 1, false), -1);
  // Dynamic in, dynamic out.
  EXPECT_EQ(getWindowedOutputSize(kDyn, 1, 1, 3, 1, false), kDyn);
}

TEST(NormalizeAxis, NegativeCountsFromTheEnd) {
  EXPECT_EQ(*normalizeAxis(-1, 4), 3);
  EXPECT_EQ(*normalizeAxis(0, 4), 0);
  EXPECT_EQ(*normalizeAxis(-4, 4), 0);
  EXPECT_TRUE(failed(normalizeAxis(4, 4)));
  EXPECT_TRUE(failed(normalizeAxis(-5, 4)));
  EXPECT_TRUE(failed(normalizeAxis(0, 0)));
}

TEST(StaticProduct, SkipsDynamicDimensions) {
  EXPECT_EQ(getStaticProduct({2, kDyn, 3}), 6);
  EXPECT_EQ(getStaticProduct({}), 1);
  EXPECT_EQ(getStaticProduct({4, 0}), 0);
}

} // namespace
