//===- Passes.h - Grove code-generation passes ------------------*- C++ -*-===//

#ifndef GROVE_CODEGEN_PASSES_H
#define GROVE_CODEGEN_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::grove {

#define GEN_PASS_DECL
#include "grove/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "grove/Codegen/Passes.h.inc"

} // namespace mlir::grove

#endif // GROVE_CODEGEN_PASSES_H
