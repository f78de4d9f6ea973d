//===- GroveOps.h - Grove operations ----------------------------*- C++ -*-===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVEOPS_H
#define GROVE_DIALECT_GROVE_IR_GROVEOPS_H

#include "grove/Dialect/Grove/IR/GroveDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "grove/Dialect/Grove/IR/GroveOps.h.inc"

namespace mlir::grove {

/// Broadcast two shapes with numpy rules as the dialect defines them (a static
/// 1 stretches; a dynamic dimension never does). Fails on a static mismatch.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs);

/// Product of the static dimensions of `shape` (dynamic ones are skipped).
int64_t getStaticProduct(ArrayRef<int64_t> shape);

/// Normalises a possibly negative axis against `rank`; fails when out of range.
FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);

} // namespace mlir::grove

#endif // GROVE_DIALECT_GROVE_IR_GROVEOPS_H
