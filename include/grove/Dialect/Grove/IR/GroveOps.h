//===- GroveOps.h - Grove operations ----------------------------*- C++ -*-===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVEOPS_H
#define GROVE_DIALECT_GROVE_IR_GROVEOPS_H

#include "grove/Dialect/Grove/IR/GroveDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
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

/// Verifies the Broadcasting trait: two operands and a result of one element
/// type, the result shape numpy's broadcast of the operands' (GroveBase.td).
LogicalResult verifyBroadcasting(Operation *op);

template <typename ConcreteType>
class Broadcasting : public OpTrait::TraitBase<ConcreteType, Broadcasting> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyBroadcasting(op);
  }
};

/// Verifies the ReducesAxes trait: the result is the input with the `axes`
/// attribute's dimensions dropped (or kept as 1 with `keepdims`).
LogicalResult verifyReducesAxes(Operation *op);

template <typename ConcreteType>
class ReducesAxes : public OpTrait::TraitBase<ConcreteType, ReducesAxes> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyReducesAxes(op);
  }
};

/// The NotDifferentiable trait (GroveBase.td): a marker grove-autodiff
/// reads; such an op has no VJPOpInterface.
template <typename ConcreteType>
class NotDifferentiable
    : public OpTrait::TraitBase<ConcreteType, NotDifferentiable> {};

/// The autocast traits (GroveBase.td): markers grove-autocast reads.
template <typename ConcreteType>
class AutocastLow : public OpTrait::TraitBase<ConcreteType, AutocastLow> {};
template <typename ConcreteType>
class AutocastWide : public OpTrait::TraitBase<ConcreteType, AutocastWide> {};
template <typename ConcreteType>
class AutocastFollow : public OpTrait::TraitBase<ConcreteType, AutocastFollow> {
};

/// A grove.constant of `type` (a float tensor) with every element `value`:
/// seeds, zeros and the scalars of VJPs and optimizer formulas.
Value createSplatConstant(OpBuilder &b, Location loc, RankedTensorType type,
                          double value);

/// Whether `v` is all float zeros: a splat zero grove.constant, or one
/// broadcast.
bool isZeros(Value v);

/// `v` under any tensor.expand_shape / collapse_shape (views of it).
Value getReshapeRoot(Value v);

/// Moves every grove.assign of `block` before its terminator, in order.
/// State writes are sinks of SSA values: nothing computed changes.
void sinkStateWrites(Block &block);

/// Result types the ops' type-inferring builders use (GroveTypeInference.cpp):
/// the verifiers' rules; operands they reject give the first operand's type,
/// which the verifier then reports.
RankedTensorType inferBroadcastType(Value lhs, Value rhs);
RankedTensorType inferMatmulType(Value lhs, Value rhs, bool transposeLhs,
                                 bool transposeRhs);
RankedTensorType inferReduceType(Value input, ArrayRef<int64_t> axes,
                                 bool keepdims);
RankedTensorType inferTransposeType(Value input, ArrayRef<int64_t> perm);
RankedTensorType inferConcatType(ValueRange inputs, int64_t axis);
/// A windowed op over NCHW `input` with `channels` output channels.
RankedTensorType inferWindowedType(Value input, int64_t channels,
                                   ArrayRef<int64_t> window,
                                   ArrayRef<int64_t> strides,
                                   ArrayRef<int64_t> padding, bool ceilMode);
RankedTensorType inferConv2DType(Value input, Value weight,
                                 ArrayRef<int64_t> strides,
                                 ArrayRef<int64_t> padding,
                                 ArrayRef<int64_t> dilations);
RankedTensorType inferGlobalAvgPoolType(Value input);
/// The channels of an NCHW tensor (dimension 1), what pools keep.
int64_t poolChannels(Value input);
RankedTensorType inferFlattenType(Value input, int64_t axis);
RankedTensorType inferSliceType(Value input, ArrayRef<int64_t> starts,
                                ArrayRef<int64_t> limits,
                                ArrayRef<int64_t> strides);
/// B x C x H x W for U of B x (C * radix) x H x W.
RankedTensorType inferSplitAttentionType(Value input, int64_t radix);

/// What RowWiseOpInterface's implementations share (GroveRowWise.cpp); an
/// operand is a row where `isRow` says so. Whether the rows keep their rank
/// and the other operands broadcast along them (a lower rank, or a static 1
/// in dimension 0): the interface's default, for elementwise ops.
bool rowsBroadcast(Operation *op, function_ref<bool(Value)> isRow);
/// Whether operand 0 is the only row operand.
bool onlyFirstIsRow(Operation *op, function_ref<bool(Value)> isRow);
/// Whether none of `axes` (numpy style, maybe negative) is dimension 0 of a
/// rank-`rank` tensor.
bool avoidsRowAxis(ArrayRef<int64_t> axes, int64_t rank);

} // namespace mlir::grove

#include "grove/Dialect/Grove/IR/GroveEnums.h"
#include "grove/Dialect/Grove/IR/GroveInterfaces.h.inc"

namespace mlir::grove {
/// The forms of tree cells, which the tree ops ask (TreeCellForm.h).
class TreeCellForm;
TreeCellFormKind getTreeCellFormKind(int64_t arity, bool hasEdgeRegion);
const TreeCellForm &getTreeCellForm(TreeCellFormKind kind);
} // namespace mlir::grove

namespace mlir::grove {
/// The params exist, are float tensors and match their gradients' types.
LogicalResult verifyOptimizerSymbols(OptimizerOpInterface op,
                                     SymbolTableCollection &table);
} // namespace mlir::grove

#define GET_TYPEDEF_CLASSES
#include "grove/Dialect/Grove/IR/GroveOpsTypes.h.inc"

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
