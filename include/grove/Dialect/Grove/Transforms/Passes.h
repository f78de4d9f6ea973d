//===- Passes.h - Grove dialect transformation passes -----------*- C++ -*-===//

#ifndef GROVE_DIALECT_GROVE_TRANSFORMS_PASSES_H
#define GROVE_DIALECT_GROVE_TRANSFORMS_PASSES_H

#include "grove/Support/OptionTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::grove {

#define GEN_PASS_DECL
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"

/// The options of grove-insert-collectives and grove-batch-dynamic-trees,
/// declared in PassOptions.def (not Passes.td, so that the pipelines and
/// grovec declare them from the same rows).
struct GroveInsertCollectivesOptions {
#define GROVE_COLLECTIVES_OPTION(TYPE, FIELD, NAME, PIPELINE_FIELD,            \
                                 PIPELINE_NAME, DEFAULT, DESCRIPTION)          \
  TYPE FIELD = DEFAULT;
#define GROVE_COLLECTIVES_PASS_OPTION(TYPE, FIELD, NAME, DEFAULT, DESCRIPTION) \
  TYPE FIELD = DEFAULT;
#include "grove/Dialect/Grove/Transforms/PassOptions.def"
};
struct GroveBatchDynamicTreesOptions {
#define GROVE_TREES_OPTION(TYPE, FIELD, NAME, PIPELINE_FIELD, PIPELINE_NAME,   \
                           DEFAULT, DESCRIPTION)                               \
  TYPE FIELD = DEFAULT;
#include "grove/Dialect/Grove/Transforms/PassOptions.def"
};
std::unique_ptr<Pass>
createGroveInsertCollectives(const GroveInsertCollectivesOptions &options);
std::unique_ptr<Pass>
createGroveBatchDynamicTrees(const GroveBatchDynamicTreesOptions &options);

/// Checks grove-insert-collectives' options as the pass does when it runs
/// (the same code), so that a driver can refuse them before reading a
/// model; `error` says what is wrong, in the pass's option names.
LogicalResult
checkInsertCollectivesOptions(const GroveInsertCollectivesOptions &options,
                              std::string &error);

} // namespace mlir::grove

#endif // GROVE_DIALECT_GROVE_TRANSFORMS_PASSES_H
