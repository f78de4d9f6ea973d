//===- ReverseSweep.cpp - Reverse mode over straight-line grove ops -------===//

#include "grove/Dialect/Grove/IR/ReverseSweep.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::grove;

void ReverseSweep::propagateActivity(ArrayRef<Operation *> forward) {
  for (Operation *fwd : forward)
    if (llvm::any_of(fwd->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(fwd->result_begin(), fwd->result_end());
}

namespace {

/// Whether the two slices provably miss each other: along some dimension
/// both are static, unit-strided and their ranges do not meet.
bool disjoint(tensor::InsertSliceOp a, tensor::InsertSliceOp b) {
  for (unsigned d = 0; d < a.getType().getRank(); ++d) {
    std::optional<int64_t> ao = getConstantIntValue(a.getMixedOffsets()[d]),
                           as = getConstantIntValue(a.getMixedSizes()[d]),
                           at = getConstantIntValue(a.getMixedStrides()[d]),
                           bo = getConstantIntValue(b.getMixedOffsets()[d]),
                           bs = getConstantIntValue(b.getMixedSizes()[d]),
                           bt = getConstantIntValue(b.getMixedStrides()[d]);
    if (ao && as && at == 1 && bo && bs && bt == 1 &&
        (*ao + *as <= *bo || *bo + *bs <= *ao))
      return true;
  }
  return false;
}

/// `sum + cotangent` as one more insert, where both are slices put into
/// zeros at disjoint places (the VJPs of slices that tile a tensor, such
/// as a gate block's i, o and u): one buffer of zeros instead of one each
/// and their sums. Null where that is not so.
Value mergeDisjointInserts(OpBuilder &b, Value sum, Value cotangent) {
  auto next = cotangent.getDefiningOp<tensor::InsertSliceOp>();
  if (!next || !isZeros(next.getDest()) || sum.getType() != next.getType())
    return {};
  Value v = sum;
  while (auto link = v.getDefiningOp<tensor::InsertSliceOp>()) {
    if (!disjoint(link, next))
      return {};
    v = link.getDest();
  }
  if (v == sum || !isZeros(v))
    return {};
  return tensor::InsertSliceOp::create(
      b, cotangent.getLoc(), next.getSource(), sum, next.getMixedOffsets(),
      next.getMixedSizes(), next.getMixedStrides());
}

} // namespace

void ReverseSweep::accumulate(Value forward, Value cotangent) {
  Value &sum = cotangents[forward];
  if (!sum) {
    sum = cotangent;
    return;
  }
  if (Value merged = mergeDisjointInserts(b, sum, cotangent)) {
    sum = merged;
    return;
  }
  sum = AddOp::create(b, cotangent.getLoc(), sum, cotangent);
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
