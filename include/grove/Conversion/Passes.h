//===- Passes.h - Grove conversion passes -----------------------*- C++ -*-===//

#ifndef GROVE_CONVERSION_PASSES_H
#define GROVE_CONVERSION_PASSES_H

#include "grove/Support/OptionTypes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::grove {

#define GEN_PASS_DECL
#include "grove/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "grove/Conversion/Passes.h.inc"

} // namespace mlir::grove

#endif // GROVE_CONVERSION_PASSES_H
