//===- ReverseSweep.cpp - Reverse mode over straight-line grove ops -------===//

#include "grove/Dialect/Grove/IR/ReverseSweep.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"

using namespace mlir;
using namespace mlir::grove;

void ReverseSweep::propagateActivity(ArrayRef<Operation *> forward) {
  for (Operation *fwd : forward)
    if (llvm::any_of(fwd->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(fwd->result_begin(), fwd->result_end());
}

void ReverseSweep::accumulate(Value forward, Value cotangent) {
  Value &sum = cotangents[forward];
  sum = sum ? AddOp::create(b, cotangent.getLoc(), sum, cotangent).getResult()
            : cotangent;
}

/// Builds the cotangents of `fwd`'s active operands from its results'.
LogicalResult ReverseSweep::propagate(Operation *fwd) {
  // An op without operands (grove.get_param) passes nothing on.
  if (fwd->getNumResults() == 0 || fwd->getNumOperands() == 0 ||
      llvm::none_of(fwd->getResults(),
                    [&](Value r) { return active.contains(r); }))
    return success();
  SmallVector<Value> resultCotangents;
  for (Value r : fwd->getResults())
    resultCotangents.push_back(cotangents.lookup(r));
  if (llvm::all_of(resultCotangents, [](Value v) { return !v; }))
    return success();
  auto vjp = dyn_cast<VJPOpInterface>(fwd);
  if (!vjp) {
    InFlightDiagnostic diag =
        fwd->emitError("grove-autodiff: cannot differentiate through '")
        << fwd->getName() << "'"
        << (fwd->hasTrait<NotDifferentiable>() ? ", which is not differentiable"
                                               : ", which has no VJP");
    diag.attachNote(noteLoc) << note;
    return diag;
  }
  SmallVector<bool> needed;
  for (Value operand : fwd->getOperands())
    needed.push_back(active.contains(operand));
  SmallVector<Value> operandCotangents;
  if (failed(vjp.buildVJP(b, resultCotangents, needed, operandCotangents)))
    return failure();
  if (operandCotangents.size() != fwd->getNumOperands())
    return fwd->emitError("grove-autodiff: the VJP of '")
           << fwd->getName() << "' gave " << operandCotangents.size()
           << " cotangents for " << fwd->getNumOperands() << " operands";
  for (auto [operand, cotangent] :
       llvm::zip(fwd->getOperands(), operandCotangents)) {
    if (!cotangent || !active.contains(operand))
      continue;
    if (cotangent.getType() != operand.getType())
      return fwd->emitError("grove-autodiff: the VJP of '")
             << fwd->getName() << "' gave a cotangent of type "
             << cotangent.getType() << " for an operand of type "
             << operand.getType();
    accumulate(operand, cotangent);
  }
  return success();
}

LogicalResult ReverseSweep::run(ArrayRef<Operation *> forward) {
  for (Operation *fwd : llvm::reverse(forward))
    if (failed(propagate(fwd)))
      return failure();
  return success();
}
