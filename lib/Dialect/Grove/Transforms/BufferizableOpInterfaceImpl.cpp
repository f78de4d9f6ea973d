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

#include "grove/Conversion/RuntimeCalls.h"
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

/// A fully dynamic strided memref of i32, what the runtime's schedule
/// service takes (a view of any layout casts to it).
MemRefType getDynamicStridedI32(MLIRContext *ctx, int64_t rank) {
  SmallVector<int64_t> shape(rank, ShapedType::kDynamic);
  return MemRefType::get(
      shape, IntegerType::get(ctx, 32),
      StridedLayoutAttr::get(ctx, ShapedType::kDynamic, shape));
}

/// grove.tree_schedule reads its forest and writes new buffers the code
/// allocates, through one call of grove_rt_tree_schedule (abi.h).
struct TreeScheduleOpInterface
    : BufferizableOpInterface::ExternalModel<TreeScheduleOpInterface,
                                             TreeScheduleOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto schedule = cast<TreeScheduleOp>(op);
    Location loc = op->getLoc();
    MLIRContext *ctx = op->getContext();
    SmallVector<Value> args;
    for (Value v : op->getOperands()) {
      FailureOr<Value> buffer = getBuffer(rewriter, v, options, state);
      if (failed(buffer))
        return failure();
      args.push_back(*buffer);
    }
    // N = offsets - 1 (0 for empty offsets, which the service reports).
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value n = arith::MaxSIOp::create(
        rewriter, loc,
        arith::SubIOp::create(rewriter, loc,
                              memref::DimOp::create(rewriter, loc, args[0], 0),
                              one),
        zero);
    // Edges: the children's (child-sum), or a slot per child (N-ary).
    int64_t slots = schedule.getArity();
    Value e =
        slots ? arith::MulIOp::create(
                    rewriter, loc, n,
                    arith::ConstantIndexOp::create(rewriter, loc, slots))
                    .getResult()
              : memref::DimOp::create(rewriter, loc, args[1], 0).getResult();
    Value b = memref::DimOp::create(rewriter, loc, args[2], 0);
    Value n1 = arith::AddIOp::create(rewriter, loc, n, one);
    Type i32 = rewriter.getI32Type();
    auto list = MemRefType::get({ShapedType::kDynamic}, i32);
    auto groups = MemRefType::get({ShapedType::kDynamic, 4}, i32);
    SmallVector<Value> buffers;
    for (auto [type, size] :
         llvm::zip(SmallVector<MemRefType>{list, list, groups, list, list, list,
                                           list, list, list},
                   SmallVector<Value>{n, n, n, e, e, n1, n, n, b})) {
      FailureOr<Value> alloc =
          options.createAlloc(rewriter, loc, type, ValueRange{size});
      if (failed(alloc))
        return failure();
      buffers.push_back(*alloc);
    }
    auto module = op->getParentOfType<ModuleOp>();
    MemRefType dyn1 = getDynamicStridedI32(ctx, 1),
               dyn2 = getDynamicStridedI32(ctx, 2);
    FailureOr<func::FuncOp> fn = getOrDeclareRuntimeFunction(
        module, kTreeScheduleService,
        FunctionType::get(ctx,
                          {dyn1, dyn1, dyn1, i32, i32, dyn1, dyn1, dyn2, dyn1,
                           dyn1, dyn1, dyn1, dyn1, dyn1},
                          {rewriter.getI64Type()}));
    if (failed(fn))
      return failure();
    SmallVector<Value> callArgs;
    auto cast = [&](Value v, MemRefType to) {
      callArgs.push_back(
          v.getType() == to ? v : memref::CastOp::create(rewriter, loc, to, v));
    };
    for (Value v : args)
      cast(v, dyn1);
    callArgs.push_back(
        arith::ConstantIntOp::create(rewriter, loc, schedule.getArity(), 32));
    callArgs.push_back(
        arith::ConstantIntOp::create(rewriter, loc, schedule.getMode(), 32));
    for (auto [i, v] : llvm::enumerate(buffers)) {
      assert((i != 2 || callArgs.size() == kTreeScheduleGroupsOperand) &&
             "the group table is the operand grove-memref-to-gpu keeps on "
             "the host");
      cast(v, i == 2 ? dyn2 : dyn1);
    }
    auto call = func::CallOp::create(rewriter, loc, *fn, callArgs);
    Value count = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getIndexType(), call.getResult(0));
    SmallVector<Value> results(buffers);
    results.push_back(count);
    replaceOpWithBufferizedValues(rewriter, op, results);
    return success();
  }
};

} // namespace

void mlir::grove::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, GroveDialect *) {
    AssignOp::attachInterface<AssignOpInterface>(*ctx);
    TreeScheduleOp::attachInterface<TreeScheduleOpInterface>(*ctx);
  });
}
