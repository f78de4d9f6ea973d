//===- LinalgToBlasConv.cpp - memref convolutions to the conv service -----===//
//
// convert-grove-to-linalg{conv-library} leaves convolutions as linalg's
// named convolutions on a zero-padded input. Here they become calls of the
// runtime's convolution service on 5-D grouped views (abi.h): oneDNN on the
// host, cuDNN on the GPU. Both pad by themselves, so a zero padding the
// compiler materialised (a fresh buffer, zero-filled, the input copied into
// its interior) is folded into the call and the copy goes: the padded
// buffer is as large as the input, and filling it is two passes over it
// (on the GPU, two kernels). cuDNN pads both sides alike, so there only a
// symmetric padding folds. On the host, the weight gradients that
// convert-grove-to-linalg{conv-weight-grad-library} leaves as one
// linalg.generic of a known form become calls of the weight-gradient
// service the same way.
//
//===----------------------------------------------------------------------===//

#include "LinalgToBlas.h"

#include "grove/Conversion/RuntimeServices.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <array>
#include <optional>

using namespace mlir;
using namespace mlir::grove;
using namespace mlir::grove::blas;

namespace {

/// `memref` (rank 4) with a unit dimension inserted at `pos`, as a view.
Value insertUnitDim(OpBuilder &b, Location loc, Value memref, unsigned pos) {
  return editedView(b, loc, memref, 5, [&](auto &sizes, auto &strides) {
    sizes.insert(sizes.begin() + pos, b.getIndexAttr(1));
    strides.insert(strides.begin() + pos, b.getIndexAttr(0));
  });
}

/// N x (G·Cg) x H x W `memref` as N x G x Cg x H x W, as a view.
Value splitChannels(OpBuilder &b, Location loc, Value memref, int64_t groups) {
  // Static: matchMaterializedPad checked it.
  int64_t channels = cast<MemRefType>(memref.getType()).getDimSize(1);
  int64_t perGroup = channels / groups;
  return editedView(b, loc, memref, 5, [&](auto &sizes, auto &strides) {
    OpFoldResult groupStride;
    if (std::optional<int64_t> s = getConstantIntValue(strides[1]))
      groupStride = b.getIndexAttr(*s * perGroup);
    else
      groupStride = arith::MulIOp::create(
                        b, loc, cast<Value>(strides[1]),
                        arith::ConstantIndexOp::create(b, loc, perGroup))
                        .getResult();
    sizes[1] = b.getIndexAttr(perGroup);
    sizes.insert(sizes.begin() + 1, b.getIndexAttr(groups));
    strides.insert(strides.begin() + 1, groupStride);
  });
}

/// The buffer `v` is a view of (through subviews, casts, reshapes).
Value getRootBuffer(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// True when `op` stores a constant 0.0 into all of `buffer`: a zero
/// linalg.fill, or the linalg.map tensor.pad bufferizes its fill into.
bool zeroFills(Operation *op, Value buffer) {
  if (isZeroFillOf(op, buffer))
    return true;
  auto map = dyn_cast<linalg::MapOp>(op);
  if (!map || map.getInit() != buffer || !map.getInputs().empty())
    return false;
  auto yield = cast<linalg::YieldOp>(map.getMapper().front().getTerminator());
  return yield.getNumOperands() == 1 &&
         matchPattern(yield.getOperand(0), m_AnyZeroFloat());
}

/// The (source, target) of a copy op, or nulls.
std::pair<Value, Value> getCopyOperands(Operation *op) {
  if (auto copy = dyn_cast<linalg::CopyOp>(op))
    return {copy.getInputs()[0], copy.getOutputs()[0]};
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return {copy.getSource(), copy.getTarget()};
  return {};
}

/// True when `size` is the batch size (dimension 0) of `source`: its
/// memref.dim, or the size `source` was allocated with (bufferization sizes
/// every buffer of a layer from the same `memref.dim` of the function's
/// input, so the padded buffer rarely names the copy's source).
bool hasBatchOf(Value size, Value source) {
  if (auto dim = size.getDefiningOp<memref::DimOp>();
      dim && dim.getSource() == source &&
      getConstantIntValue(dim.getIndex()) == 0)
    return true;
  auto alloc = source.getDefiningOp<memref::AllocOp>();
  return alloc && alloc.getType().isDynamicDim(0) &&
         alloc.getDynamicSizes()[0] == size;
}

/// A zero padding the compiler materialised for a convolution.
struct MaterializedPad {
  Value source;                 // the unpadded input (N x C x H x W)
  int64_t pad[4];               // top, left, bottom, right
  SmallVector<Operation *> ops; // what builds (and frees) the padded buffer
  /// Frees of the source between its copy and the convolution (host code
  /// is lowered after deallocation, which frees a buffer after its last
  /// use: the copy): the call reads the source, so they move after it.
  SmallVector<Operation *> sourceFrees;
};

/// True when nothing between `from` and `to` (same block) may write the
/// buffer `root`, so reading it at `to` sees what `from` read; its
/// memref.deallocs there are collected into `frees` instead.
bool isUnwrittenBetween(Value root, Operation *from, Operation *to,
                        SmallVectorImpl<Operation *> &frees) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    if (isMemoryEffectFree(op))
      continue;
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op);
        dealloc && getRootBuffer(dealloc.getMemref()) == root) {
      frees.push_back(op);
      continue;
    }
    auto iface = dyn_cast<MemoryEffectOpInterface>(op);
    if (!iface)
      return false;
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    for (const MemoryEffects::EffectInstance &e : effects) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()))
        continue;
      Value target = e.getValue();
      if (!target || getRootBuffer(target) == root)
        return false;
    }
  }
  return true;
}

/// Matches `input` of `conv` (4-D, or its 5-D grouped expand_shape) against
/// a fresh buffer whose only writers are a zero fill and a copy of the
/// unpadded input into its interior (with the same padding on both sides
/// when `symmetric`).
std::optional<MaterializedPad>
matchMaterializedPad(Operation *conv, Value input, bool symmetric) {
  Operation *consumer = conv;
  Value padded = input;
  if (auto expand = input.getDefiningOp<memref::ExpandShapeOp>()) {
    // Only the channel split of linalg's grouped form.
    SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
    SmallVector<ReassociationIndices> channelSplit = {{0}, {1, 2}, {3}, {4}};
    if (!expand->hasOneUse() || groups != channelSplit)
      return std::nullopt;
    consumer = expand;
    padded = expand.getSrc();
  }
  auto alloc = padded.getDefiningOp<memref::AllocOp>();
  auto paddedType = cast<MemRefType>(padded.getType());
  if (!alloc || alloc->getBlock() != conv->getBlock() ||
      paddedType.getRank() != 4)
    return std::nullopt;
  Operation *fill = nullptr, *copy = nullptr;
  memref::SubViewOp interior;
  SmallVector<Operation *> frees; // of the padded buffer, after the conv
  for (Operation *user : padded.getUsers()) {
    if (user == consumer)
      continue;
    if (isa<memref::DeallocOp>(user) && user->getBlock() == conv->getBlock() &&
        conv->isBeforeInBlock(user)) {
      frees.push_back(user);
      continue;
    }
    if (!fill && zeroFills(user, padded)) {
      fill = user;
      continue;
    }
    auto subview = dyn_cast<memref::SubViewOp>(user);
    if (!interior && subview && subview->hasOneUse() &&
        getCopyOperands(*subview->user_begin()).second == subview) {
      interior = subview;
      copy = *subview->user_begin();
      continue;
    }
    return std::nullopt; // another reader or writer
  }
  if (!fill || !interior || fill->getBlock() != conv->getBlock() ||
      copy->getBlock() != conv->getBlock() || !fill->isBeforeInBlock(copy) ||
      !copy->isBeforeInBlock(conv))
    return std::nullopt;
  Value source = getCopyOperands(copy).first;
  auto sourceType = cast<MemRefType>(source.getType());
  // The call reads the source itself, so its buffer must be one whose
  // frees and writes isUnwrittenBetween can see: a function argument or an
  // allocation, reached through views only (not a select, a call result or
  // a transpose).
  Value root = getRootBuffer(source);
  if (!isa<BlockArgument>(root) && !root.getDefiningOp<memref::AllocOp>() &&
      !root.getDefiningOp<memref::AllocaOp>())
    return std::nullopt;
  // A plain copy (linalg.copy may also convert types), padding only in H
  // and W: the batch and channel sizes are the source's (static and equal,
  // or the batch allocated as the source's own).
  if (sourceType.getElementType() != paddedType.getElementType() ||
      sourceType.getRank() != 4 || sourceType.isDynamicDim(1) ||
      paddedType.getDimSize(1) != sourceType.getDimSize(1))
    return std::nullopt;
  if (paddedType.isDynamicDim(0)) {
    if (!hasBatchOf(alloc.getDynamicSizes()[0], source))
      return std::nullopt;
  } else if (paddedType.getDimSize(0) != sourceType.getDimSize(0)) {
    return std::nullopt;
  }
  ArrayRef<int64_t> offsets = interior.getStaticOffsets();
  if (!interior.hasUnitStride() || offsets[0] != 0 || offsets[1] != 0 ||
      ShapedType::isDynamic(offsets[2]) || ShapedType::isDynamic(offsets[3]))
    return std::nullopt;
  MaterializedPad pad;
  for (int i = 0; i < 2; ++i) {
    int64_t full = paddedType.getDimSize(2 + i);
    int64_t inner = sourceType.getDimSize(2 + i);
    if (ShapedType::isDynamic(full) || ShapedType::isDynamic(inner))
      return std::nullopt;
    pad.pad[i] = offsets[2 + i];
    pad.pad[2 + i] = full - inner - offsets[2 + i];
    if (pad.pad[2 + i] < 0 || (symmetric && pad.pad[2 + i] != pad.pad[i]))
      return std::nullopt; // cuDNN pads both sides alike
  }
  if (!isUnwrittenBetween(root, copy, conv, pad.sourceFrees))
    return std::nullopt;
  pad.source = source;
  pad.ops = frees;
  if (consumer != conv)
    pad.ops.push_back(consumer);
  llvm::append_range(pad.ops,
                     SmallVector<Operation *>{copy, interior, fill, alloc});
  return pad;
}

/// `values` as i64 constants, appended to `args`.
void appendI64s(RewriterBase &rewriter, Location loc, ArrayRef<int64_t> values,
                SmallVectorImpl<Value> &args) {
  for (int64_t v : values)
    args.push_back(arith::ConstantIntOp::create(rewriter, loc, v, 64));
}

/// Replaces `op` by a call of `service` with `args`; a padding the call
/// folded goes, and frees of its source move after the call.
FailureOr<bool> replaceByCall(RewriterBase &rewriter, ModuleOp module,
                              Operation *op, const Service &service,
                              ArrayRef<Value> args,
                              const std::optional<MaterializedPad> &pad) {
  FailureOr<func::CallOp> call =
      createServiceCall(rewriter, op->getLoc(), module, service, args);
  if (failed(call))
    return failure();
  rewriter.eraseOp(op);
  if (pad) {
    for (Operation *dead : pad->ops)
      rewriter.eraseOp(dead);
    for (Operation *free : llvm::reverse(pad->sourceFrees))
      rewriter.moveOpAfter(free, *call);
  }
  return true;
}

template <typename ConvLike>
FailureOr<bool> rewriteConvImpl(RewriterBase &rewriter, ModuleOp module,
                                ConvLike op, bool cuda) {
  constexpr bool grouped = std::is_same_v<ConvLike, linalg::Conv2DNgchwGfchwOp>;
  Type element = getSharedElementType(op);
  if (!element)
    return false;
  std::optional<Service> service = lookupService(
      cuda ? ServiceFamily::CudaConv2d : ServiceFamily::Conv2d, element);
  if (!service)
    return false;
  Value y = op.getDpsInits()[0];
  Operation *prev = op->getPrevNode();
  if (!isZeroFillOf(prev, y))
    return false;
  // An empty sum (no channels or taps) is the zero fill alone, which the
  // libraries reject: leave it to the loops.
  if (llvm::is_contained(
          cast<MemRefType>(op.getDpsInputs()[1].getType()).getShape(), 0))
    return false;

  if (failed(declareService(module, *service)))
    return failure();

  // Matched while the output's zero fill is still there for
  // isUnwrittenBetween to see.
  std::optional<MaterializedPad> pad =
      matchMaterializedPad(op, op.getDpsInputs()[0], /*symmetric=*/cuda);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  rewriter.eraseOp(prev);
  // nchw_fchw: a unit group after the batch of x and y, before the filters
  // of w (linalg's grouped form: N x G x C x H x W, G x F x C x Kh x Kw).
  Value x = op.getDpsInputs()[0];
  if (pad)
    x = grouped ? splitChannels(rewriter, loc, pad->source,
                                cast<MemRefType>(x.getType()).getDimSize(1))
                : pad->source;
  SmallVector<Value> args;
  // Named: a braced ValueRange in the loop header would dangle.
  const Value operands[] = {x, op.getDpsInputs()[1], y};
  const unsigned unitDimPos[] = {1, 0, 1};
  for (auto [i, v, pos] : llvm::enumerate(operands, unitDimPos)) {
    Value view = cast<MemRefType>(v.getType()).getRank() == 5
                     ? v
                     : insertUnitDim(rewriter, loc, v, pos);
    args.push_back(castToServiceOperand(rewriter, loc, *service, i, view));
  }
  // Pads (cuda: h, w; host: top, left, bottom, right), strides, dilations.
  SmallVector<int64_t> scalars;
  for (int i = 0, e = cuda ? 2 : 4; i < e; ++i)
    scalars.push_back(pad ? pad->pad[i] : 0);
  for (DenseIntElementsAttr attr : {op.getStrides(), op.getDilations()})
    for (APInt v : attr.getValues<APInt>())
      scalars.push_back(v.getSExtValue());
  appendI64s(rewriter, loc, scalars, args);
  return replaceByCall(rewriter, module, op, *service, args, pad);
}

/// The strides and dilations of a weight gradient in
/// convert-grove-to-linalg's library form (NN.cpp), or nothing: loops
/// (g, f, c, i, j | n, y, x), x read at (n, g, c, y·sh + i·dh, x·sw + j·dw),
/// dy at (n, g, f, y, x), dw written at (g, f, c, i, j), dw += x · dy.
std::optional<std::array<int64_t, 4>> matchWeightGrad(linalg::GenericOp op) {
  using utils::IteratorType;
  SmallVector<IteratorType> iterators = op.getIteratorTypesArray();
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      iterators.size() != 8 || !op.hasPureBufferSemantics() ||
      op.hasIndexSemantics())
    return std::nullopt;
  for (auto [k, it] : llvm::enumerate(iterators))
    if (it != (k < 5 ? IteratorType::parallel : IteratorType::reduction))
      return std::nullopt;
  // The body: yield(out + x · dy), in either order of each operation.
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getNumOperands() == 1
                 ? yield.getOperand(0).getDefiningOp<arith::AddFOp>()
                 : nullptr;
  if (!add || body.getOperations().size() != 3)
    return std::nullopt;
  Value acc = body.getArgument(2), product = add.getRhs();
  if (add.getRhs() == acc)
    product = add.getLhs();
  else if (add.getLhs() != acc)
    return std::nullopt;
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul || !((mul.getLhs() == body.getArgument(0) &&
                 mul.getRhs() == body.getArgument(1)) ||
                (mul.getLhs() == body.getArgument(1) &&
                 mul.getRhs() == body.getArgument(0))))
    return std::nullopt;
  // The maps, rebuilt from the strides and dilations the input map's
  // spatial results give (coefficients of y and i, x and j).
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MLIRContext *ctx = op.getContext();
  if (maps[0].getNumResults() != 5)
    return std::nullopt;
  auto coefficient = [&](AffineExpr e, unsigned dim) -> int64_t {
    SmallVector<int64_t> at(8, 0);
    auto evaluate = [&](ArrayRef<int64_t> point) -> std::optional<int64_t> {
      SmallVector<AffineExpr> values;
      for (int64_t v : point)
        values.push_back(getAffineConstantExpr(v, ctx));
      auto c = dyn_cast<AffineConstantExpr>(e.replaceDims(values));
      return c ? std::optional<int64_t>(c.getValue()) : std::nullopt;
    };
    at[dim] = 1;
    std::optional<int64_t> one = evaluate(at),
                           zero = evaluate({0, 0, 0, 0, 0, 0, 0, 0});
    return one && zero ? *one - *zero : 0;
  };
  AffineMap xMap = maps[0];
  std::array<int64_t, 4> geometry = {
      coefficient(xMap.getResult(3), 6), coefficient(xMap.getResult(4), 7),
      coefficient(xMap.getResult(3), 3), coefficient(xMap.getResult(4), 4)};
  if (llvm::any_of(geometry, [](int64_t v) { return v < 1; }))
    return std::nullopt;
  auto [sh, sw, dh, dw] = geometry;
  AffineExpr g, f, c, i, j, n, y, xx;
  bindDims(ctx, g, f, c, i, j, n, y, xx);
  AffineMap expected[] = {
      AffineMap::get(8, 0, {n, g, c, y * sh + i * dh, xx * sw + j * dw}, ctx),
      AffineMap::get(8, 0, {n, g, f, y, xx}, ctx),
      AffineMap::get(8, 0, {g, f, c, i, j}, ctx)};
  for (int k = 0; k < 3; ++k)
    if (maps[k] != expected[k])
      return std::nullopt;
  return geometry;
}

} // namespace

FailureOr<bool> mlir::grove::blas::rewriteConvWeightGrad(RewriterBase &rewriter,
                                                         ModuleOp module,
                                                         linalg::GenericOp op,
                                                         bool cuda) {
  std::optional<std::array<int64_t, 4>> geometry = matchWeightGrad(op);
  if (cuda || !geometry)
    return false;
  Type element = getSharedElementType(op);
  std::optional<Service> service =
      element ? lookupService(ServiceFamily::Conv2dWeightGrad, element)
              : std::nullopt;
  if (!service)
    return false;
  Value x = op.getDpsInputs()[0], dy = op.getDpsInputs()[1],
        dw = op.getDpsInits()[0];
  Operation *prev = op->getPrevNode();
  if (!isZeroFillOf(prev, dw))
    return false;
  if (failed(declareService(module, *service)))
    return failure();
  // Matched while dw's zero fill is still there for isUnwrittenBetween.
  std::optional<MaterializedPad> pad =
      matchMaterializedPad(op, x, /*symmetric=*/false);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  rewriter.eraseOp(prev);
  if (pad)
    x = splitChannels(rewriter, loc, pad->source,
                      cast<MemRefType>(x.getType()).getDimSize(1));
  SmallVector<Value> args;
  const Value operands[] = {x, dy, dw};
  for (auto [k, v] : llvm::enumerate(operands))
    args.push_back(castToServiceOperand(rewriter, loc, *service, k, v));
  // Pads (top, left, bottom, right), strides, dilations.
  SmallVector<int64_t> scalars;
  for (int k = 0; k < 4; ++k)
    scalars.push_back(pad ? pad->pad[k] : 0);
  llvm::append_range(scalars, *geometry);
  appendI64s(rewriter, loc, scalars, args);
  return replaceByCall(rewriter, module, op, *service, args, pad);
}

FailureOr<bool> mlir::grove::blas::rewriteConv(RewriterBase &rewriter,
                                               ModuleOp module,
                                               linalg::Conv2DNchwFchwOp op,
                                               bool cuda) {
  return rewriteConvImpl(rewriter, module, op, cuda);
}

FailureOr<bool> mlir::grove::blas::rewriteConv(RewriterBase &rewriter,
                                               ModuleOp module,
                                               linalg::Conv2DNgchwGfchwOp op,
                                               bool cuda) {
  return rewriteConvImpl(rewriter, module, op, cuda);
}
