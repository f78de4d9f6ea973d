//===- BufferizableOpInterfaceImpl.cpp - grove ops in bufferization -------===//
//
// grove.assign reads its value and writes its state operand, a function
// argument, and aliases nothing: one-shot analysis then keeps the write in
// the argument's buffer unless the old value is read after it. That case
// must not become a write into a private copy (the update would be lost
// silently), so bufferize() insists on the argument's own buffer.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/Transforms/BufferizableOpInterfaceImpl.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::grove;

namespace {

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

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto assign = cast<AssignOp>(op);
    // An out-of-place decision has replaced the argument by a copy of it.
    if (!isa<BlockArgument>(assign.getState()))
      return op->emitError("the old value of this state is still read after "
                           "it is written (for example, returned): compute "
                           "what is returned from the value written instead");
    FailureOr<Value> value =
        getBuffer(rewriter, assign.getValue(), options, state);
    if (failed(value))
      return failure();
    FailureOr<Value> dest =
        getBuffer(rewriter, assign.getState(), options, state);
    if (failed(dest))
      return failure();
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
