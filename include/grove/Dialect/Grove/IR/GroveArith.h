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
