//===- BuildersTest.cpp - grove ops built without spelling types ----------===//
//
// The type-inferring builders (GroveTypeInference.cpp) as a pass uses them:
// ops built from operands and attributes alone get the result type the
// verifier accepts, and the module verifies.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveDialect.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::grove;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

class Builders : public ::testing::Test {
protected:
  Builders() : b(&ctx) {
    ctx.loadDialect<GroveDialect, func::FuncDialect, tensor::TensorDialect>();
    module = ModuleOp::create(b.getUnknownLoc());
    b.setInsertionPointToEnd(module->getBody());
  }

  /// A function taking `types`; the builder is left in its body.
  Block *function(ArrayRef<Type> types) {
    auto fn = func::FuncOp::create(b, b.getUnknownLoc(), "f",
                                   b.getFunctionType(types, {}));
    Block *body = fn.addEntryBlock();
    b.setInsertionPointToEnd(body);
    return body;
  }
  void finish() {
    func::ReturnOp::create(b, b.getUnknownLoc());
    EXPECT_TRUE(succeeded(verify(*module)));
  }
  RankedTensorType t(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getF32Type());
  }
  static ArrayRef<int64_t> shape(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }

  MLIRContext ctx;
  OpBuilder b;
  OwningOpRef<ModuleOp> module;
};

TEST_F(Builders, ElementwiseAndContraction) {
  Block *f =
      function({t({kDyn, 1, 4}), t({3, 1}), t({kDyn, 64}), t({128, 64})});
  Location loc = b.getUnknownLoc();
  Value sum = AddOp::create(b, loc, f->getArgument(0), f->getArgument(1));
  EXPECT_EQ(shape(sum), ArrayRef<int64_t>({kDyn, 3, 4}));
  Value prod = MulOp::create(b, loc, sum, f->getArgument(1));
  EXPECT_EQ(shape(prod), ArrayRef<int64_t>({kDyn, 3, 4}));
  Value y = MatmulOp::create(b, loc, f->getArgument(2), f->getArgument(3),
                             /*transposeLhs=*/false, /*transposeRhs=*/true);
  EXPECT_EQ(shape(y), ArrayRef<int64_t>({kDyn, 128}));
  Value r = ReduceSumOp::create(b, loc, y, ArrayRef<int64_t>{-1});
  EXPECT_EQ(shape(r), ArrayRef<int64_t>({kDyn}));
  Value k = ReduceMeanOp::create(b, loc, sum, ArrayRef<int64_t>{0, 2},
                                 /*keepdims=*/true);
  EXPECT_EQ(shape(k), ArrayRef<int64_t>({1, 3, 1}));
  Value tr = TransposeOp::create(b, loc, sum, ArrayRef<int64_t>{2, 0, 1});
  EXPECT_EQ(shape(tr), ArrayRef<int64_t>({4, kDyn, 3}));
  Value c = ConcatOp::create(b, loc, ValueRange{sum, prod}, 1);
  EXPECT_EQ(shape(c), ArrayRef<int64_t>({kDyn, 6, 4}));
  Value fl = FlattenOp::create(b, loc, sum, 1);
  EXPECT_EQ(shape(fl), ArrayRef<int64_t>({kDyn, 12}));
  finish();
}

TEST_F(Builders, ConvolutionsAndPools) {
  Block *f =
      function({t({kDyn, 64, 56, 56}), t({128, 32, 3, 3}), t({128}), t({64})});
  Location loc = b.getUnknownLoc();
  Value x = f->getArgument(0);
  Value y = Conv2DOp::create(
      b, loc, x, f->getArgument(1), f->getArgument(2), ArrayRef<int64_t>{2, 2},
      ArrayRef<int64_t>{1, 1, 1, 1}, ArrayRef<int64_t>{1, 1}, 2);
  EXPECT_EQ(shape(y), ArrayRef<int64_t>({kDyn, 128, 28, 28}));
  Value d = Conv2DOp::create(
      b, loc, x, f->getArgument(1), Value(), ArrayRef<int64_t>{1, 1},
      ArrayRef<int64_t>{2, 2, 2, 2}, ArrayRef<int64_t>{2, 2}, 2);
  EXPECT_EQ(shape(d), ArrayRef<int64_t>({kDyn, 128, 56, 56}));
  Value m = MaxPool2DOp::create(b, loc, x, ArrayRef<int64_t>{3, 3},
                                ArrayRef<int64_t>{2, 2},
                                ArrayRef<int64_t>{1, 1, 1, 1});
  EXPECT_EQ(shape(m), ArrayRef<int64_t>({kDyn, 64, 28, 28}));
  Value a = AvgPool2DOp::create(b, loc, x, ArrayRef<int64_t>{2, 2},
                                ArrayRef<int64_t>{2, 2},
                                ArrayRef<int64_t>{0, 0, 0, 0},
                                /*ceilMode=*/true, /*countIncludePad=*/false);
  EXPECT_EQ(shape(a), ArrayRef<int64_t>({kDyn, 64, 28, 28}));
  Value g = GlobalAvgPoolOp::create(b, loc, y);
  EXPECT_EQ(shape(g), ArrayRef<int64_t>({kDyn, 128, 1, 1}));
  Value s = f->getArgument(3);
  Value bn = BatchNormOp::create(b, loc, x, s, s, s, s, 1e-5);
  EXPECT_EQ(bn.getType(), x.getType());
  finish();
}

TEST_F(Builders, DataMovement) {
  Block *f = function({t({kDyn, 8}), t({10})});
  Location loc = b.getUnknownLoc();
  Value x = f->getArgument(0);
  Value s = SliceOp::create(b, loc, x, ArrayRef<int64_t>{0, 2},
                            ArrayRef<int64_t>{-1, 7}, ArrayRef<int64_t>{1, 2});
  EXPECT_EQ(shape(s), ArrayRef<int64_t>({kDyn, 3}));
  Value e = SliceOp::create(b, loc, x, ArrayRef<int64_t>{0, 5},
                            ArrayRef<int64_t>{-1, 5}, ArrayRef<int64_t>{1, 1});
  EXPECT_EQ(shape(e), ArrayRef<int64_t>({kDyn, 0}));
  Value r = ReshapeOp::create(b, loc, x, ArrayRef<int64_t>{kDyn, 2, 4});
  EXPECT_EQ(shape(r), ArrayRef<int64_t>({kDyn, 2, 4}));
  Value n = tensor::DimOp::create(b, loc, x, 0);
  Value bc = BroadcastToOp::create(b, loc, f->getArgument(1),
                                   ArrayRef<int64_t>{kDyn, 10}, ValueRange{n});
  EXPECT_EQ(shape(bc), ArrayRef<int64_t>({kDyn, 10}));
  finish();
}

TEST_F(Builders, SplitAttention) {
  // B x (C * R) x H x W with C = 4, R = 2, K = 2 and an inner width I = 8.
  Block *f =
      function({t({kDyn, 8, 5, 5}), t({8, 2, 1, 1}), t({8}), t({8, 4, 1, 1})});
  Location loc = b.getUnknownLoc();
  Value inner = f->getArgument(2);
  Value y = SplitAttentionOp::create(
      b, loc, f->getArgument(0), f->getArgument(1), inner, inner, inner, inner,
      inner, f->getArgument(3), inner, /*radix=*/2, /*cardinality=*/2, 1e-5);
  EXPECT_EQ(shape(y), ArrayRef<int64_t>({kDyn, 4, 5, 5}));
  finish();
}

} // namespace
