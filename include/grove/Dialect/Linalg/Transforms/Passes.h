//===- Passes.h - Grove's transforms of linalg on tensors -------*- C++ -*-===//

#ifndef GROVE_DIALECT_LINALG_TRANSFORMS_PASSES_H
#define GROVE_DIALECT_LINALG_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::grove {

#define GEN_PASS_DECL
#include "grove/Dialect/Linalg/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "grove/Dialect/Linalg/Transforms/Passes.h.inc"

} // namespace mlir::grove

#endif // GROVE_DIALECT_LINALG_TRANSFORMS_PASSES_H
