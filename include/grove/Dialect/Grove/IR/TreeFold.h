//===- TreeFold.h - Cells of grove.tree_fold --------------------*- C++ -*-===//
//
// What the tree ops' verifiers, their VJP and grove-batch-dynamic-trees
// agree on: the block arguments of a fold's cells (GroveTreeOps.td), which
// depend on its form (TreeCellForm.h).
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_DIALECT_GROVE_IR_TREEFOLD_H
#define GROVE_DIALECT_GROVE_IR_TREEFOLD_H

#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/IR/TreeCellForm.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::grove {

/// The most child slots an N-ary fold may have: its lowering gathers each
/// slot separately.
constexpr int64_t kMaxTreeArity = 64;

/// The block arguments a fold's cells take, from its operand and result
/// types: inputs, then what the children give, then captures.
struct TreeCellTypes {
  SmallVector<Type> inputs;   // one row per node
  SmallVector<Type> states;   // one row per node
  SmallVector<Type> captures; // as passed
  SmallVector<Type> messages; // the edge form: its edge cell's results
  int64_t arity = 0;
  const TreeCellForm *form = nullptr;

  /// The child arguments of the node cell, as the form says: the
  /// messages' (or states') sums, or K slots of states.
  SmallVector<Type> getNodeChildTypes() const {
    return form->getNodeChildTypes(*this);
  }
  SmallVector<Type> getNodeCellTypes() const;
  SmallVector<Type> getEdgeCellTypes() const;
};

TreeCellTypes getTreeCellTypes(TreeFoldOp op);
TreeCellTypes getTreeCellTypes(TreeFoldGradOp op);

/// The values of a cell's (or a cell VJP's) `block` that have a row per
/// node: the arguments `rowArgs` marks (all but the captures), and the
/// results, with a dynamic dimension 0, of ops that keep the rows of a row
/// operand apart (the cells' verifier's rule). A reverse op that sums over
/// rows, or a value computed from captures alone, has none.
llvm::DenseSet<Value> getCellRows(Block &block, ArrayRef<bool> rowArgs);

/// Whether `t` is a row per node of a static shape: a ranked tensor with a
/// dynamic dimension 0 and every other dimension static.
bool hasStaticRows(Type t);

/// A tensor of `like`'s type (dynamic sizes from `like`) filled with zeros.
Value createZerosLike(OpBuilder &b, Location loc, Value like);

/// Builds in the empty `dest` a cell's VJP: `cell`'s arguments followed by
/// one cotangent per result; it recomputes the cell and yields the
/// cotangent of every argument (zeros where none reaches it).
LogicalResult buildCellVJP(OpBuilder &b, Location loc, Region &cell,
                           Region &dest);

} // namespace mlir::grove

#endif // GROVE_DIALECT_GROVE_IR_TREEFOLD_H
