//===- StateDecl.h - Declaring initialised state in a pass ------*- C++ -*-===//
//
// Passes that add state (the optimizers' moments, the collectives' counters
// and residuals) declare it the same way: one grove.param after the module's
// last, unless the module declares it already.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_TRANSFORMS_STATEDECL_H
#define GROVE_DIALECT_GROVE_TRANSFORMS_STATEDECL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::grove {

/// Declares `name` as state of `type`, every element `init` (an integer
/// element type takes it truncated), unless the module does; a declaration
/// of another type, or another symbol of that name, is an error at `user`.
LogicalResult declareState(ModuleOp module, Operation *user, StringRef name,
                           RankedTensorType type, double init);

} // namespace mlir::grove

#endif // GROVE_DIALECT_GROVE_TRANSFORMS_STATEDECL_H
