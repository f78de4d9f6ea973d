//===- GroveRowWise.cpp - Which ops keep a tree cell's rows apart ---------===//
//
// RowWiseOpInterface (GroveInterfaces.td): the rules by which an op may
// compute in a grove.tree_fold cell, whose rows are nodes that one batched
// cell call runs on together. Elementwise ops take the interface's default
// (rowsBroadcast); the ops marked Grove_RowWiseByRule in ODS say here what
// keeps their dimension 0 to itself.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"

using namespace mlir;
using namespace mlir::grove;

bool mlir::grove::rowsBroadcast(Operation *op,
                                function_ref<bool(Value)> isRow) {
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  return llvm::all_of(op->getOperands(), [&](Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    if (isRow(v))
      return type.getRank() == result.getRank();
    return type.getRank() < result.getRank() || type.getDimSize(0) == 1;
  });
}

bool mlir::grove::onlyFirstIsRow(Operation *op,
                                 function_ref<bool(Value)> isRow) {
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (isRow(v) != (i == 0))
      return false;
  return true;
}

bool mlir::grove::avoidsRowAxis(ArrayRef<int64_t> axes, int64_t rank) {
  return llvm::none_of(axes, [&](int64_t a) { return a == 0 || a == -rank; });
}

static int64_t inputRank(Operation *op) {
  return cast<RankedTensorType>(op->getOperand(0).getType()).getRank();
}

//===----------------------------------------------------------------------===//
// Along other axes than the rows
//===----------------------------------------------------------------------===//

bool ReverseOp::keepsRowsApart(function_ref<bool(Value)>) {
  return !llvm::is_contained(getAxes(), 0);
}

// Its rows are never the first dimension (the verifier asks for one
// leading dimension at least).
bool LayerNormOp::keepsRowsApart(function_ref<bool(Value)>) { return true; }

bool SoftmaxOp::keepsRowsApart(function_ref<bool(Value)>) {
  return avoidsRowAxis(getAxisAttr().getInt(), inputRank(*this));
}

bool LogSoftmaxOp::keepsRowsApart(function_ref<bool(Value)>) {
  return avoidsRowAxis(getAxisAttr().getInt(), inputRank(*this));
}

bool ReduceSumOp::keepsRowsApart(function_ref<bool(Value)>) {
  return avoidsRowAxis(getAxes(), inputRank(*this));
}

bool ReduceMeanOp::keepsRowsApart(function_ref<bool(Value)>) {
  return avoidsRowAxis(getAxes(), inputRank(*this));
}

bool ReduceMaxOp::keepsRowsApart(function_ref<bool(Value)>) {
  return avoidsRowAxis(getAxes(), inputRank(*this));
}

bool TransposeOp::keepsRowsApart(function_ref<bool(Value)>) {
  return getPermutation()[0] == 0;
}

/// Each row is reshaped on its own: the shape after dimension 0 is static on
/// both sides and holds as many elements.
bool ReshapeOp::keepsRowsApart(function_ref<bool(Value)>) {
  auto tail = [](RankedTensorType t) {
    return RankedTensorType::get(t.getShape().drop_front(), t.getElementType());
  };
  RankedTensorType in = tail(getInput().getType()), out = tail(getType());
  return in.hasStaticShape() && out.hasStaticShape() &&
         in.getNumElements() == out.getNumElements();
}

/// Stretching within a row only: a rank-raising broadcast would make the
/// rows a later dimension.
bool BroadcastToOp::keepsRowsApart(function_ref<bool(Value)>) {
  return getInput().getType().getRank() == getType().getRank();
}

//===----------------------------------------------------------------------===//
// Whole rows
//===----------------------------------------------------------------------===//

/// Rows side by side, all of them per-node: a capture has no rows to join.
bool ConcatOp::keepsRowsApart(function_ref<bool(Value)> isRow) {
  return getAxisAttr().getInt() != 0 && llvm::all_of(getOperands(), isRow);
}

bool SliceOp::keepsRowsApart(function_ref<bool(Value)>) {
  return getStarts()[0] == 0 && getLimits()[0] == -1 && getStrides()[0] == 1;
}

//===----------------------------------------------------------------------===//
// Rows by weights: only the first operand has rows
//===----------------------------------------------------------------------===//

/// Rows times a capture; a transposed or batched left side would contract
/// or index over the rows.
bool MatmulOp::keepsRowsApart(function_ref<bool(Value)> isRow) {
  return onlyFirstIsRow(*this, isRow) && !getTransposeLhs() &&
         getLhs().getType().getRank() == 2;
}

bool FlattenOp::keepsRowsApart(function_ref<bool(Value)> isRow) {
  return getAxisAttr().getInt() >= 1 && onlyFirstIsRow(*this, isRow);
}

/// Per sample (dimension 0 is the batch): one node a sample.
bool OneHotOp::keepsRowsApart(function_ref<bool(Value)> isRow) {
  return onlyFirstIsRow(*this, isRow);
}

bool GlobalAvgPoolOp::keepsRowsApart(function_ref<bool(Value)> isRow) {
  return onlyFirstIsRow(*this, isRow);
}

bool MaxPool2DOp::keepsRowsApart(function_ref<bool(Value)> isRow) {
  return onlyFirstIsRow(*this, isRow);
}

bool AvgPool2DOp::keepsRowsApart(function_ref<bool(Value)> isRow) {
  return onlyFirstIsRow(*this, isRow);
}

bool Conv2DOp::keepsRowsApart(function_ref<bool(Value)> isRow) {
  return onlyFirstIsRow(*this, isRow);
}

bool BatchNormOp::keepsRowsApart(function_ref<bool(Value)> isRow) {
  return onlyFirstIsRow(*this, isRow);
}
