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

} // namespace mlir::grove

#endif // GROVE_DIALECT_GROVE_IR_GROVEARITH_H
