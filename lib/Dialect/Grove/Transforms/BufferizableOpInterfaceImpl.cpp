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

/// The suffix of the collective services for `type`'s elements (abi.h).
StringRef collectiveSuffix(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  return "i32";
}

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

/// A contiguous rank-1 memref of `element`s at any offset: how the
/// collective and compressor services take their buffers (abi.h).
MemRefType getServiceFlatType(Type element) {
  MLIRContext *ctx = element.getContext();
  return MemRefType::get(
      {ShapedType::kDynamic}, element,
      StridedLayoutAttr::get(ctx, ShapedType::kDynamic, {1}));
}

/// Calls collective service `grove_rt_<base>_<suffix>` with `scalars`
/// first, then `memrefs` (cast to the fully dynamic rank-1 type) and
/// `trailing` scalars; the suffix is the first memref's element type.
FailureOr<func::CallOp> callCollective(RewriterBase &rewriter, Operation *op,
                                       StringRef base, ValueRange leading,
                                       ValueRange memrefs, ValueRange trailing,
                                       TypeRange results = {}) {
  MLIRContext *ctx = op->getContext();
  Type element = cast<MemRefType>(memrefs.front().getType()).getElementType();
  MemRefType flat = getServiceFlatType(element);
  SmallVector<Value> args(leading);
  for (Value m : memrefs)
    args.push_back(memref::CastOp::create(rewriter, op->getLoc(), flat, m));
  args.append(trailing.begin(), trailing.end());
  FailureOr<func::FuncOp> fn = getOrDeclareRuntimeFunction(
      op->getParentOfType<ModuleOp>(),
      ("grove_rt_" + base + "_" + collectiveSuffix(element)).str(),
      FunctionType::get(ctx, ValueRange(args).getTypes(), results));
  if (failed(fn))
    return failure();
  return func::CallOp::create(rewriter, op->getLoc(), *fn, args);
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
    StringRef base;
    if (auto reduce = dyn_cast<AllReduceOp>(op)) {
      base = "all_reduce";
      scalar = reductionCode(rewriter, loc, reduce.getKind());
    } else {
      base = "broadcast";
      scalar = arith::ConstantIntOp::create(
          rewriter, loc, cast<BroadcastOp>(op).getRoot(), 32);
    }
    if (failed(callCollective(rewriter, op, base, {}, *flat, scalar)))
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
    SmallVector<Value> scalars;
    StringRef service = "all_gather_start";
    if constexpr (std::is_same_v<OpTy, AllReduceStartOp>) {
      service = "all_reduce_start";
      scalars.push_back(reductionCode(rewriter, op->getLoc(), start.getKind()));
    }
    FailureOr<func::CallOp> call = callCollective(
        rewriter, op, service, {}, *flat, scalars, rewriter.getI64Type());
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
    if (failed(
            callCollective(rewriter, op, "collective_wait", handle, *flat, {})))
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
        failed(callCollective(rewriter, op, "all_gather", {},
                              ValueRange{*flatIn, *flatOut}, {})))
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
    MLIRContext *ctx = op->getContext();
    Type element = topk.getInput().getType().getElementType();
    FailureOr<func::FuncOp> fn = getOrDeclareRuntimeFunction(
        op->getParentOfType<ModuleOp>(),
        ("grove_rt_top_k_" + collectiveSuffix(element)).str(),
        FunctionType::get(ctx,
                          {getServiceFlatType(element),
                           getServiceFlatType(element),
                           getServiceFlatType(rewriter.getI32Type())},
                          {}));
    if (failed(fn))
      return failure();
    SmallVector<Value> args;
    for (Value v : {*flat, results[0], results[1]})
      args.push_back(memref::CastOp::create(
          rewriter, loc,
          getServiceFlatType(cast<MemRefType>(v.getType()).getElementType()),
          v));
    func::CallOp::create(rewriter, loc, *fn, args);
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
    AllReduceOp::attachInterface<InPlaceCollectiveInterface<AllReduceOp>>(*ctx);
    BroadcastOp::attachInterface<InPlaceCollectiveInterface<BroadcastOp>>(*ctx);
    AllGatherOp::attachInterface<AllGatherOpInterface>(*ctx);
    AllReduceStartOp::attachInterface<
        CollectiveStartOpInterface<AllReduceStartOp>>(*ctx);
    AllGatherStartOp::attachInterface<
        CollectiveStartOpInterface<AllGatherStartOp>>(*ctx);
    CollectiveWaitOp::attachInterface<CollectiveWaitOpInterface>(*ctx);
    TopKOp::attachInterface<TopKOpInterface>(*ctx);
  });
}
