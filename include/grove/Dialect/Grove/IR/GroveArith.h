//===- GroveArith.h - Elementwise grove formulas in C++ ---------*- C++ -*-===//
//
// The arithmetic VJPs (GroveVJPs.cpp) and the optimizer expansions
// (ExpandTrainingOps.cpp) write their formulas in: grove ops at one
// insertion point and location, with rank-0 constants that broadcast.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVEARITH_H
#define GROVE_DIALECT_GROVE_IR_GROVEARITH_H

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::grove {

struct GroveArith {
  OpBuilder &b;
  Location loc;

  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value exp(Value x) { return ExpOp::create(b, loc, x); }
  Value sqrt(Value x) { return SqrtOp::create(b, loc, x); }
  Value step(Value x) { return StepOp::create(b, loc, x); }

  /// A rank-0 constant of element type `element`.
  Value scalarOf(Type element, double value) {
    return createSplatConstant(b, loc, RankedTensorType::get({}, element),
                               value);
  }
  /// A rank-0 constant of `like`'s element type.
  Value scalar(Value like, double value) {
    return scalarOf(cast<RankedTensorType>(like.getType()).getElementType(),
                    value);
  }

  Value dim(Value x, int64_t d) { return tensor::DimOp::create(b, loc, x, d); }

  /// The number of ranks of the call (grove.world_size), as a rank-0
  /// tensor of element type `element`.
  Value worldSize(Type element) {
    Value n = WorldSizeOp::create(b, loc, b.getIndexType());
    Value f = arith::UIToFPOp::create(
        b, loc, element,
        arith::IndexCastUIOp::create(b, loc, b.getI64Type(), n));
    return tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, element), f);
  }

  /// The product of `x`'s static sizes along `axes` (`known`) and of its
  /// dynamic ones (an index, or null where none is dynamic).
  std::pair<int64_t, Value> sizeProduct(Value x, ArrayRef<int64_t> axes) {
    auto type = cast<RankedTensorType>(x.getType());
    int64_t known = 1;
    Value dynamic;
    for (int64_t a : axes) {
      if (!type.isDynamicDim(a)) {
        known *= type.getDimSize(a);
        continue;
      }
      Value d = dim(x, a);
      dynamic = dynamic ? arith::MulIOp::create(b, loc, dynamic, d) : d;
    }
    return {known, dynamic};
  }

  /// The number of elements of `x` along `axes`, as a rank-0 tensor of
  /// `x`'s element type (from run-time sizes where they are dynamic).
  Value count(Value x, ArrayRef<int64_t> axes) {
    auto type = cast<RankedTensorType>(x.getType());
    auto [known, dynamic] = sizeProduct(x, axes);
    if (!dynamic)
      return scalar(x, static_cast<double>(known));
    Value n = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), dynamic);
    Value f = arith::UIToFPOp::create(b, loc, type.getElementType(), n);
    Value t = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, type.getElementType()), f);
    return known == 1 ? t : mul(t, scalar(t, static_cast<double>(known)));
  }
};

/// Per-channel arithmetic on an N x C x ... tensor, as batch
/// normalisation reads it: C-vectors broadcast as C x 1 x ... x 1 columns
/// and reductions run over every dimension but 1.
struct ChannelArith : GroveArith {
  int64_t rank;
  int64_t channels;

  ChannelArith(OpBuilder &b, Location loc, Value input)
      : GroveArith{b, loc},
        rank(cast<RankedTensorType>(input.getType()).getRank()),
        channels(cast<RankedTensorType>(input.getType()).getDimSize(1)) {}

  Value column(Value vec) {
    SmallVector<int64_t> shape(rank - 1, 1);
    shape[0] = channels;
    return ReshapeOp::create(b, loc, vec, shape);
  }
  SmallVector<int64_t> others() {
    SmallVector<int64_t> axes = {0};
    for (int64_t d = 2; d < rank; ++d)
      axes.push_back(d);
    return axes;
  }
  Value sumOthers(Value t) { return ReduceSumOp::create(b, loc, t, others()); }
  Value meanOthers(Value t) {
    return ReduceMeanOp::create(b, loc, t, others());
  }
  /// 1 / sqrt(variance + epsilon), per channel.
  Value inverseStd(Value variance, double epsilon) {
    return div(scalar(variance, 1.0),
               sqrt(add(variance, scalar(variance, epsilon))));
  }
  /// The batch mean and biased variance of each channel of `x`. The VJP
  /// and the expansion of batch_norm_training build them alike, so CSE
  /// keeps one copy.
  std::pair<Value, Value> batchStatistics(Value x) {
    Value mean = meanOthers(x);
    Value centered = sub(x, column(mean));
    return {mean, meanOthers(mul(centered, centered))};
  }
};

} // namespace mlir::grove

#endif // GROVE_DIALECT_GROVE_IR_GROVEARITH_H
