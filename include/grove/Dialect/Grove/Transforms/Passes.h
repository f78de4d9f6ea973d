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

} // namespace mlir::grove

#endif // GROVE_DIALECT_GROVE_TRANSFORMS_PASSES_H
