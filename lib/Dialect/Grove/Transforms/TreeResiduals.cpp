//===- TreeResiduals.cpp - What a tree fold saves for its gradient --------===//
//
// Matches a grove.tree_fold_grad's recomputation of a cell (node or edge)
// against the fold's own cell (TreeResiduals.h). Both regions start as
// copies of one cell (the VJP clones it) and the same canonicalizations run
// on both, so the recomputation is matched op by op from the block
// arguments; what does not match is simply recomputed.
//
//===----------------------------------------------------------------------===//

#include "TreeResiduals.h"

#include "grove/Dialect/Grove/IR/TreeFold.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::grove;

TreeFoldOp mlir::grove::getForwardFold(TreeFoldGradOp grad) {
  if (grad.getNodeStates().empty())
    return {};
  auto fold = grad.getNodeStates()[0].getDefiningOp<TreeFoldOp>();
  if (!fold || fold->getBlock() != grad->getBlock() ||
      fold.getNodeStates() != grad.getNodeStates() ||
      fold.getOffsets() != grad.getOffsets() ||
      fold.getChildren() != grad.getChildren() ||
      fold.getRoots() != grad.getRoots() ||
      fold.getInputs() != grad.getInputs() ||
      fold.getCaptures() != grad.getCaptures() ||
      fold.getArityAttr() != grad.getArityAttr() ||
      fold.getForm().getKind() != grad.getForm().getKind())
    return {};
  return fold;
}

namespace {

/// Whether `g` (a node_grad value) is `f` (a node cell value): mapped to
/// it, or both the same constant.
bool sameValue(const IRMapping &toFold, Value g, Value f) {
  if (toFold.lookupOrNull(g) == f)
    return true;
  Attribute a, b;
  return matchPattern(g, m_Constant(&a)) && matchPattern(f, m_Constant(&b)) &&
         a == b && g.getType() == f.getType();
}

/// The op of `cell` that computes what `op` computes, if any.
Operation *findEquivalent(Operation &op, Block &cell, const IRMapping &toFold) {
  if (!isMemoryEffectFree(&op))
    return nullptr;
  for (Operation &f : cell.without_terminator()) {
    if (f.getName() != op.getName() ||
        f.getNumOperands() != op.getNumOperands() ||
        f.getResultTypes() != op.getResultTypes() ||
        f.getAttrDictionary() != op.getAttrDictionary() || f.getNumRegions() ||
        op.getNumRegions())
      continue;
    if (llvm::all_of(llvm::zip(op.getOperands(), f.getOperands()), [&](auto p) {
          return sameValue(toFold, std::get<0>(p), std::get<1>(p));
        }))
      return &f;
  }
  return nullptr;
}

} // namespace

/// The ops of `copy` that recompute an op of `cell`, in order, each
/// result mapped in `toCell` to the cell's. `copy`'s first arguments are
/// the cell's (a VJP takes cotangents after them).
static SmallVector<Operation *> matchRecomputed(Block &cell, Block &copy,
                                                IRMapping &toCell) {
  for (BlockArgument arg : cell.getArguments())
    toCell.map(copy.getArgument(arg.getArgNumber()), arg);
  SmallVector<Operation *> recomputed;
  for (Operation &op : copy.without_terminator()) {
    if (!matchPattern(&op, m_Constant()) &&
        llvm::any_of(op.getOperands(), [&](Value v) {
          return !toCell.contains(v) && !matchPattern(v, m_Constant());
        }))
      continue;
    if (Operation *same = findEquivalent(op, cell, toCell)) {
      toCell.map(op.getResults(), same->getResults());
      recomputed.push_back(&op);
    }
  }
  return recomputed;
}

TreeResiduals mlir::grove::findCellResiduals(Region &cell, Region &vjp,
                                             unsigned numCaptures) {
  Block &block = cell.front();
  SmallVector<bool> rowArgs(block.getNumArguments(), true);
  std::fill(rowArgs.end() - numCaptures, rowArgs.end(), false);
  llvm::DenseSet<Value> rows = getCellRows(block, rowArgs);
  IRMapping toCell;
  SmallVector<Operation *> inOrder =
      matchRecomputed(cell.front(), vjp.front(), toCell);
  llvm::DenseSet<Operation *> recomputed(inOrder.begin(), inOrder.end());
  // A row count is the group's (the lowering knows it), not a reason to
  // save the rows.
  auto readsRows = [&](Operation *user) {
    auto dim = dyn_cast<tensor::DimOp>(user);
    return !recomputed.contains(user) &&
           !(dim && dim.getConstantIndex() == std::optional<int64_t>(0));
  };
  TreeResiduals r;
  for (Operation *op : inOrder)
    for (Value v : op->getResults()) {
      Value f = toCell.lookup(v);
      if (rows.contains(f) && hasStaticRows(f.getType()) &&
          llvm::any_of(v.getUsers(), readsRows)) {
        r.backward.push_back(v);
        r.forward.push_back(f);
      }
    }
  return r;
}

SmallVector<Value> mlir::grove::findRecomputed(Region &cell, Region &copy,
                                               ArrayRef<Value> values) {
  IRMapping toCell;
  SmallVector<Value> found(values.size());
  for (Operation *op : matchRecomputed(cell.front(), copy.front(), toCell))
    for (Value v : op->getResults()) {
      auto *at = llvm::find(values, toCell.lookup(v));
      if (at != values.end() && !found[at - values.begin()])
        found[at - values.begin()] = v;
    }
  return found;
}
