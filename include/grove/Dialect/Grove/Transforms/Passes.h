//===- Passes.h - Grove dialect transformation passes -----------*- C++ -*-===//

#ifndef GROVE_DIALECT_GROVE_TRANSFORMS_PASSES_H
#define GROVE_DIALECT_GROVE_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::grove {

#define GEN_PASS_DECL
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"

/// Checks grove-insert-collectives' options as the pass does when it runs
/// (the same code), so that a driver can refuse them before reading a
/// model; `error` says what is wrong, in the pass's option names.
LogicalResult
checkInsertCollectivesOptions(const GroveInsertCollectivesOptions &options,
                              std::string &error);

/// Whether `mode` is one of grove-batch-dynamic-trees' modes (levels,
/// levels-by-arity, nodes).
bool isTreeBatchingMode(StringRef mode);

} // namespace mlir::grove

#endif // GROVE_DIALECT_GROVE_TRANSFORMS_PASSES_H
