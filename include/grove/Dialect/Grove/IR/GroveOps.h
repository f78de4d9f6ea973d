//===- GroveOps.h - Grove operations ----------------------------*- C++ -*-===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVEOPS_H
#define GROVE_DIALECT_GROVE_IR_GROVEOPS_H

#include "grove/Dialect/Grove/IR/GroveDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::grove {

/// The largest static extent of a tensor, in bytes (GroveBase.td).
constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;

/// The largest radix of grove.split_attention (its lowering unrolls it).
constexpr int64_t kMaxSplitAttentionRadix = 16;

/// Verifies the SizedTensors trait: diagnoses the first tensor type of `op`
/// whose static dimensions hold more than kMaxTensorBytes.
LogicalResult verifyTensorSizes(Operation *op);

template <typename ConcreteType>
class SizedTensors : public OpTrait::TraitBase<ConcreteType, SizedTensors> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyTensorSizes(op);
  }
};

} // namespace mlir::grove

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

/// Output size of a window sliding over `in` (convolutions, pools):
/// ⌊(in + padBefore + padAfter - window) / stride⌋ + 1, or with `ceilMode`
/// the ceiling minus a last window that would start in the trailing
/// padding (PyTorch). Dynamic for a dynamic `in`; -1 when the window is
/// larger than the padded input.
int64_t getWindowedOutputSize(int64_t in, int64_t padBefore, int64_t padAfter,
                              int64_t window, int64_t stride, bool ceilMode);

} // namespace mlir::grove

#endif // GROVE_DIALECT_GROVE_IR_GROVEOPS_H
