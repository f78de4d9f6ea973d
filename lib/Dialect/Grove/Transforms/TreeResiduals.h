//===- TreeResiduals.h - What a fold saves for its gradient -----*- C++ -*-===//
//
// A grove.tree_fold_grad's node_grad (and edge_grad) region recomputes the
// fold's cell before differentiating it. When the fold and its gradient are
// lowered together (a train step), the forward loop can instead save, a row
// per node (or edge), the recomputed values the reverse part reads, and the
// gradient's loop read them back: the recomputation, GEMMs included, goes
// away.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_LIB_DIALECT_GROVE_TRANSFORMS_TREERESIDUALS_H
#define GROVE_LIB_DIALECT_GROVE_TRANSFORMS_TREERESIDUALS_H

#include "grove/Dialect/Grove/IR/GroveOps.h"

namespace mlir::grove {

/// Values of a fold's cell and the same values recomputed in its
/// gradient's VJP region of that cell, pair by pair: each a row per node
/// (or edge).
struct TreeResiduals {
  SmallVector<Value> forward;  // in the fold's cell
  SmallVector<Value> backward; // in the gradient's VJP region
};

/// The fold whose VJP `grad` is, if any: over the same forest, inputs,
/// captures and arity, `grad`'s node states being the fold's results.
TreeFoldOp getForwardFold(TreeFoldGradOp grad);

/// The values of `vjp` (a cell's VJP region: the cell recomputed, then
/// differentiated) that recompute rows of `cell` (a row per node, of a
/// static row shape; its last `numCaptures` arguments are captures) and
/// that its reverse part reads, matched op by op from the cells' arguments
/// (ops free of memory effects only).
TreeResiduals findCellResiduals(Region &cell, Region &vjp,
                                unsigned numCaptures);

/// For each of `values` (of `cell`), the value of `copy` (a clone of the
/// cell) that recomputes it, or null.
SmallVector<Value> findRecomputed(Region &cell, Region &copy,
                                  ArrayRef<Value> values);

} // namespace mlir::grove

#endif // GROVE_LIB_DIALECT_GROVE_TRANSFORMS_TREERESIDUALS_H
