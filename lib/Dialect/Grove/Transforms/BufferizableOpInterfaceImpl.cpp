//===- BufferizableOpInterfaceImpl.cpp - grove ops in bufferization -------===//
//
// grove.assign reads its value and writes its state operand, a function
// argument, and aliases nothing: one-shot analysis then keeps the write in
// the argument's buffer unless the old value is read after it. That case
// must not become a write into a private copy (the update would be lost
// silently), so bufferize() insists on the argument's own buffer. A value
// already in that buffer makes the copy one onto itself, which the
// canonicalizer removes.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/Transforms/BufferizableOpInterfaceImpl.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::grove;

namespace {

/// Whether `buffer` is a function argument's, or a reshaped view of it.
bool isArgumentBuffer(Value buffer) {
  while (isa_and_nonnull<memref::CollapseShapeOp, memref::ExpandShapeOp>(
      buffer.getDefiningOp()))
    buffer = buffer.getDefiningOp()->getOperand(0);
  if (auto toBuffer = buffer.getDefiningOp<ToBufferOp>())
    buffer = toBuffer.getTensor();
  return isa<BlockArgument>(buffer);
}

struct AssignOpInterface
    : BufferizableOpInterface::ExternalModel<AssignOpInterface, AssignOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    return &operand == &cast<AssignOp>(op).getValueMutable();
  }
  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &) const {
    return &operand == &cast<AssignOp>(op).getStateMutable();
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  /// A copy reads each element of its value before it writes that element
  /// of the state (one type): a value computed into the state's own buffer
  /// (grove-write-state-in-place) is no conflict.
  bool bufferizesToElementwiseAccess(Operation *, const AnalysisState &,
                                     ArrayRef<OpOperand *>) const {
    return true;
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto assign = cast<AssignOp>(op);
    FailureOr<Value> value =
        getBuffer(rewriter, assign.getValue(), options, state);
    if (failed(value))
      return failure();
    FailureOr<Value> dest =
        getBuffer(rewriter, assign.getState(), options, state);
    if (failed(dest))
      return failure();
    // An out-of-place decision has replaced the argument (or the operand
    // of a view of it) by a copy of it.
    if (!isArgumentBuffer(*dest))
      return op->emitError("the old value of this state is still read after "
                           "it is written (for example, returned): compute "
                           "what is returned from the value written instead");
    if (failed(options.createMemCpy(rewriter, op->getLoc(), *value, *dest)))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::grove::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, GroveDialect *) {
    AssignOp::attachInterface<AssignOpInterface>(*ctx);
  });
}
