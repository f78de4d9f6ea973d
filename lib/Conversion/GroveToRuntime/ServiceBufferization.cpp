//===- ServiceBufferization.cpp - grove ops that become service calls -----===//
//
// The grove ops that the runtime implements (the tree schedule, the
// collectives, top-k) bufferize straight into calls of their services
// (grove/services.def): their operands become contiguous or strided views,
// their results buffers the code allocates.
//
//===----------------------------------------------------------------------===//

#include "grove/Conversion/ServiceBufferization.h"

#include "grove/Conversion/RuntimeServices.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::grove;

namespace {

/// An op that reads its operands and writes only buffers it allocates,
/// through one runtime call (the tree schedule, all_gather, top_k, a
/// collective's start, whose result is no tensor).
template <typename Concrete, typename OpTy>
struct AllocatingCallInterface
    : BufferizableOpInterface::ExternalModel<Concrete, OpTy> {
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
};

/// grove.tree_schedule reads its forest and writes new buffers the code
/// allocates, through one call of grove_rt_tree_schedule (abi.h).
struct TreeScheduleOpInterface
    : AllocatingCallInterface<TreeScheduleOpInterface, TreeScheduleOp> {

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto schedule = cast<TreeScheduleOp>(op);
    Location loc = op->getLoc();
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
    SmallVector<Value> callArgs(args);
    callArgs.push_back(
        arith::ConstantIntOp::create(rewriter, loc, schedule.getArity(), 32));
    callArgs.push_back(
        arith::ConstantIntOp::create(rewriter, loc, schedule.getMode(), 32));
    llvm::append_range(callArgs, buffers);
    FailureOr<func::CallOp> call =
        createServiceCall(rewriter, loc, op, Service::TreeSchedule, callArgs);
    if (failed(call))
      return failure();
    Value count = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getIndexType(), call->getResult(0));
    SmallVector<Value> results(buffers);
    results.push_back(count);
    replaceOpWithBufferizedValues(rewriter, op, results);
    return success();
  }
};

/// A contiguous rank-1 view of `buffer`'s elements, what the collective
/// services take: the buffer itself reshaped when its layout is the
/// identity, else a view of a new buffer holding a copy (`copy` is then
/// that buffer, for a copy back after an in-place collective).
FailureOr<Value> flatContiguous(RewriterBase &rewriter, Location loc,
                                Value buffer,
                                const BufferizationOptions &options,
                                Value &copy) {
  auto type = cast<MemRefType>(buffer.getType());
  copy = {};
  if (!type.getLayout().isIdentity()) {
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(memref::DimOp::create(rewriter, loc, buffer, d));
    auto plain = MemRefType::get(type.getShape(), type.getElementType());
    FailureOr<Value> alloc = options.createAlloc(rewriter, loc, plain, sizes);
    if (failed(alloc) ||
        failed(options.createMemCpy(rewriter, loc, buffer, *alloc)))
      return failure();
    copy = buffer = *alloc;
    type = plain;
  }
  if (type.getRank() == 1)
    return buffer;
  if (type.getRank() == 0)
    return memref::ExpandShapeOp::create(
               rewriter, loc, MemRefType::get({1}, type.getElementType()),
               buffer, ArrayRef<ReassociationIndices>{})
        .getResult();
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return memref::CollapseShapeOp::create(rewriter, loc, buffer,
                                         ArrayRef<ReassociationIndices>{all})
      .getResult();
}

/// The buffer of `tensor`, an operand a service only reads, as a
/// contiguous rank-1 view (of a copy when its layout is not the identity).
FailureOr<Value> getFlatBuffer(RewriterBase &rewriter, Value tensor,
                               const BufferizationOptions &options,
                               BufferizationState &state) {
  FailureOr<Value> buffer = getBuffer(rewriter, tensor, options, state);
  if (failed(buffer))
    return failure();
  Value unused;
  return flatContiguous(rewriter, tensor.getLoc(), *buffer, options, unused);
}

/// Calls the member of collective service `family` (services.def) for the
/// element type of the first memref among `operands`; an element type the
/// runtime has no member for is an error.
FailureOr<func::CallOp> callCollective(RewriterBase &rewriter, Operation *op,
                                       ServiceFamily family,
                                       ValueRange operands) {
  Value first = *llvm::find_if(
      operands, [](Value v) { return isa<MemRefType>(v.getType()); });
  Type element = cast<MemRefType>(first.getType()).getElementType();
  std::optional<Service> service = lookupService(family, element);
  if (!service)
    return op->emitOpError("has no runtime service for elements of type ")
           << element;
  return createServiceCall(rewriter, op->getLoc(), op, *service, operands);
}

/// The reduction kind as the services take it (an i32).
Value reductionCode(RewriterBase &rewriter, Location loc, ReductionKind kind) {
  return arith::ConstantIntOp::create(rewriter, loc, static_cast<int64_t>(kind),
                                      32);
}

/// grove.all_reduce and grove.broadcast: in place on their operand's buffer
/// (one-shot analysis copies it first when the old value is read later).
template <typename OpTy>
struct InPlaceCollectiveInterface
    : BufferizableOpInterface::ExternalModel<InPlaceCollectiveInterface<OpTy>,
                                             OpTy> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return true;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &,
                                      const AnalysisState &) const {
    return {{op->getResult(0), BufferRelation::Equivalent}};
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    Location loc = op->getLoc();
    FailureOr<Value> buffer =
        getBuffer(rewriter, op->getOperand(0), options, state);
    if (failed(buffer))
      return failure();
    Value copy;
    FailureOr<Value> flat =
        flatContiguous(rewriter, loc, *buffer, options, copy);
    if (failed(flat))
      return failure();
    Value scalar;
    ServiceFamily family = ServiceFamily::Broadcast;
    if (auto reduce = dyn_cast<AllReduceOp>(op)) {
      family = ServiceFamily::AllReduce;
      scalar = reductionCode(rewriter, loc, reduce.getKind());
    } else {
      scalar = arith::ConstantIntOp::create(
          rewriter, loc, cast<BroadcastOp>(op).getRoot(), 32);
    }
    if (failed(callCollective(rewriter, op, family, {*flat, scalar})))
      return failure();
    if (copy && failed(options.createMemCpy(rewriter, loc, copy, *buffer)))
      return failure();
    replaceOpWithBufferizedValues(rewriter, op, *buffer);
    return success();
  }
};

/// grove.all_reduce_start and grove.all_gather_start read their operand,
/// which the runtime copies, so the buffer is free for reuse once the start
/// returns; the request becomes the runtime's i64 handle.
template <typename OpTy>
struct CollectiveStartOpInterface
    : AllocatingCallInterface<CollectiveStartOpInterface<OpTy>, OpTy> {

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto start = cast<OpTy>(op);
    FailureOr<Value> flat =
        getFlatBuffer(rewriter, start.getInput(), options, state);
    if (failed(flat))
      return failure();
    SmallVector<Value> operands = {*flat};
    ServiceFamily family = ServiceFamily::AllGatherStart;
    if constexpr (std::is_same_v<OpTy, AllReduceStartOp>) {
      family = ServiceFamily::AllReduceStart;
      operands.push_back(
          reductionCode(rewriter, op->getLoc(), start.getKind()));
    }
    FailureOr<func::CallOp> call =
        callCollective(rewriter, op, family, operands);
    if (failed(call))
      return failure();
    // The wait, bufferized later, casts the handle back.
    replaceOpWithNewBufferizedOp<UnrealizedConversionCastOp>(
        rewriter, op, start.getType(), call->getResult(0));
    return success();
  }
};

/// grove.collective_wait writes the result into a new buffer, of the
/// result's static shape but for a gather's dynamic world size (the start,
/// bufferized before it, no longer has its operand's sizes).
struct CollectiveWaitOpInterface
    : BufferizableOpInterface::ExternalModel<CollectiveWaitOpInterface,
                                             CollectiveWaitOp> {
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto wait = cast<CollectiveWaitOp>(op);
    Location loc = op->getLoc();
    auto type = cast<RankedTensorType>(wait.getType());
    SmallVector<Value> sizes;
    if (!type.hasStaticShape())
      sizes.push_back(
          WorldSizeOp::create(rewriter, loc, rewriter.getIndexType()));
    FailureOr<Value> out = options.createAlloc(
        rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()),
        sizes);
    if (failed(out))
      return failure();
    Value unused;
    FailureOr<Value> flat =
        flatContiguous(rewriter, loc, *out, options, unused);
    if (failed(flat))
      return failure();
    Value handle = UnrealizedConversionCastOp::create(
                       rewriter, loc, rewriter.getI64Type(), wait.getRequest())
                       .getResult(0);
    if (failed(callCollective(rewriter, op, ServiceFamily::CollectiveWait,
                              {handle, *flat})))
      return failure();
    replaceOpWithBufferizedValues(rewriter, op, *out);
    return success();
  }
};

/// grove.all_gather reads its operand and writes a new buffer of one input
/// per rank, sized by the world the call runs in.
struct AllGatherOpInterface
    : AllocatingCallInterface<AllGatherOpInterface, AllGatherOp> {

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto gather = cast<AllGatherOp>(op);
    Location loc = op->getLoc();
    FailureOr<Value> input =
        getBuffer(rewriter, gather.getInput(), options, state);
    if (failed(input))
      return failure();
    auto resultType = cast<RankedTensorType>(gather.getType());
    SmallVector<Value> sizes;
    if (resultType.isDynamicDim(0))
      sizes.push_back(
          WorldSizeOp::create(rewriter, loc, rewriter.getIndexType()));
    for (int64_t d = 1; d < resultType.getRank(); ++d)
      if (resultType.isDynamicDim(d))
        sizes.push_back(memref::DimOp::create(rewriter, loc, *input, d - 1));
    auto outType =
        MemRefType::get(resultType.getShape(), resultType.getElementType());
    FailureOr<Value> out = options.createAlloc(rewriter, loc, outType, sizes);
    if (failed(out))
      return failure();
    Value unused;
    FailureOr<Value> flatIn =
        flatContiguous(rewriter, loc, *input, options, unused);
    FailureOr<Value> flatOut =
        flatContiguous(rewriter, loc, *out, options, unused);
    if (failed(flatIn) || failed(flatOut) ||
        failed(callCollective(rewriter, op, ServiceFamily::AllGather,
                              {*flatIn, *flatOut})))
      return failure();
    replaceOpWithBufferizedValues(rewriter, op, *out);
    return success();
  }
};

/// grove.top_k reads its input and writes two new buffers through one call
/// of grove_rt_top_k_<type> (abi.h).
struct TopKOpInterface : AllocatingCallInterface<TopKOpInterface, TopKOp> {

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto topk = cast<TopKOp>(op);
    Location loc = op->getLoc();
    FailureOr<Value> flat =
        getFlatBuffer(rewriter, topk.getInput(), options, state);
    if (failed(flat))
      return failure();
    SmallVector<Value> results;
    for (Value r : op->getResults()) {
      auto type = cast<RankedTensorType>(r.getType());
      FailureOr<Value> alloc = options.createAlloc(
          rewriter, loc,
          MemRefType::get(type.getShape(), type.getElementType()), {});
      if (failed(alloc))
        return failure();
      results.push_back(*alloc);
    }
    if (failed(callCollective(rewriter, op, ServiceFamily::TopK,
                              {*flat, results[0], results[1]})))
      return failure();
    replaceOpWithBufferizedValues(rewriter, op, results);
    return success();
  }
};

/// grove.group_by_index reads its indices and writes two new buffers
/// through one call of grove_rt_group_by_index (abi.h).
struct GroupByIndexOpInterface
    : AllocatingCallInterface<GroupByIndexOpInterface, GroupByIndexOp> {

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto group = cast<GroupByIndexOp>(op);
    Location loc = op->getLoc();
    FailureOr<Value> indices =
        getBuffer(rewriter, group.getIndices(), options, state);
    if (failed(indices))
      return failure();
    SmallVector<Value> args = {*indices};
    for (Value r : op->getResults()) {
      auto type = cast<RankedTensorType>(r.getType());
      SmallVector<Value> sizes;
      if (type.isDynamicDim(0))
        sizes.push_back(memref::DimOp::create(rewriter, loc, *indices, 0));
      FailureOr<Value> alloc = options.createAlloc(
          rewriter, loc,
          MemRefType::get(type.getShape(), type.getElementType()), sizes);
      if (failed(alloc))
        return failure();
      args.push_back(*alloc);
    }
    if (failed(
            createServiceCall(rewriter, loc, op, Service::GroupByIndex, args)))
      return failure();
    replaceOpWithBufferizedValues(rewriter, op, {args[1], args[2]});
    return success();
  }
};

} // namespace

void mlir::grove::registerServiceBufferizationExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, GroveDialect *) {
    TreeScheduleOp::attachInterface<TreeScheduleOpInterface>(*ctx);
    AllReduceOp::attachInterface<InPlaceCollectiveInterface<AllReduceOp>>(*ctx);
    BroadcastOp::attachInterface<InPlaceCollectiveInterface<BroadcastOp>>(*ctx);
    AllGatherOp::attachInterface<AllGatherOpInterface>(*ctx);
    AllReduceStartOp::attachInterface<
        CollectiveStartOpInterface<AllReduceStartOp>>(*ctx);
    AllGatherStartOp::attachInterface<
        CollectiveStartOpInterface<AllGatherStartOp>>(*ctx);
    CollectiveWaitOp::attachInterface<CollectiveWaitOpInterface>(*ctx);
    TopKOp::attachInterface<TopKOpInterface>(*ctx);
    GroupByIndexOp::attachInterface<GroupByIndexOpInterface>(*ctx);
  });
}
