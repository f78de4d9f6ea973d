//===- NN.cpp - grove convolution, normalisation and pooling to linalg ----===//
//
// Convolutions and pools become linalg's named NCHW ops on an explicitly
// padded input (tensor.pad), so every target's later stages see ordinary
// structured ops; grouped convolutions use the NGCHW form through
// expand/collapse views. Batch norm folds its statistics into one scale and
// one shift per channel, then is a single elementwise generic. Average
// pooling divides by a count computed from the output position
// (linalg.index), which is what PyTorch's padding and ceil_mode rules
// amount to.
//
//===----------------------------------------------------------------------===//

#include "PopulatePatterns.h"
#include "Utils.h"

#include "grove/Dialect/Grove/IR/ABIAttrs.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::grove;

namespace {

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// Pads dimensions 2 and 3 of `x` by `low` / `high` with `value`.
Value pad2D(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
            ArrayRef<int64_t> high, Value value) {
  if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(high, [](int64_t v) { return v == 0; }))
    return x;
  SmallVector<OpFoldResult> lo = {b.getIndexAttr(0), b.getIndexAttr(0),
                                  b.getIndexAttr(low[0]),
                                  b.getIndexAttr(low[1])};
  SmallVector<OpFoldResult> hi = {b.getIndexAttr(0), b.getIndexAttr(0),
                                  b.getIndexAttr(high[0]),
                                  b.getIndexAttr(high[1])};
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(type.getShape());
  for (int i = 0; i < 2; ++i)
    if (!ShapedType::isDynamic(shape[2 + i]))
      shape[2 + i] += low[i] + high[i];
  auto padType = RankedTensorType::get(shape, type.getElementType());
  return tensor::PadOp::create(b, loc, padType, x, lo, hi, value,
                               /*nofold=*/false);
}

/// The result sizes of a verified windowed op: batch and channels as given,
/// spatial sizes static from the type or computed from the input at run
/// time with the same formula the verifier uses. A dynamic size too small
/// for one window is what the verifier rejects statically: `opName` reports
/// it at run time (grove.agree_dims fails the call) and the code goes on
/// with no windows, not with a wrapped-around size.
SmallVector<OpFoldResult>
windowedResultDims(OpBuilder &b, Location loc, StringRef opName,
                   RankedTensorType resultType, Value input,
                   ArrayRef<int64_t> window, ArrayRef<int64_t> strides,
                   ArrayRef<int64_t> padding, bool ceilMode) {
  SmallVector<OpFoldResult> in = getDims(b, loc, input);
  SmallVector<OpFoldResult> dims = {in[0], b.getIndexAttr(0), b.getIndexAttr(0),
                                    b.getIndexAttr(0)};
  dims[1] = resultType.isDynamicDim(1)
                ? in[1]
                : b.getIndexAttr(resultType.getDimSize(1));
  for (int i = 0; i < 2; ++i) {
    if (!resultType.isDynamicDim(2 + i)) {
      dims[2 + i] = b.getIndexAttr(resultType.getDimSize(2 + i));
      continue;
    }
    // out = (h + pt + pb - window [+ stride - 1]) / stride + 1, less one if
    // a ceil-mode window would start past the input and leading padding.
    Value h = getValueOrCreateConstantIndexOp(b, loc, in[2 + i]);
    Value padded = arith::AddIOp::create(
        b, loc, h, indexConst(b, loc, padding[i] + padding[2 + i]));
    Value span =
        arith::SubIOp::create(b, loc, padded, indexConst(b, loc, window[i]));
    if (ceilMode)
      span = arith::AddIOp::create(b, loc, span,
                                   indexConst(b, loc, strides[i] - 1));
    // One window needs span >= 0: padded >= window (less stride - 1 in ceil
    // mode, where a window may overhang the end as in PyTorch).
    int64_t least = window[i] - (ceilMode ? strides[i] - 1 : 0);
    Value leastV = indexConst(b, loc, least);
    Value enough = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                         padded, leastV);
    (void)requireAtLeast(b, loc, padded, leastV,
                         Twine(opName) + ": one window needs the input " +
                             (i == 0 ? "height" : "width") + " plus padding");
    Value out = arith::AddIOp::create(
        b, loc,
        arith::DivUIOp::create(b, loc, span, indexConst(b, loc, strides[i])),
        indexConst(b, loc, 1));
    if (ceilMode) {
      Value lastStart = arith::MulIOp::create(
          b, loc, arith::SubIOp::create(b, loc, out, indexConst(b, loc, 1)),
          indexConst(b, loc, strides[i]));
      Value limit =
          arith::AddIOp::create(b, loc, h, indexConst(b, loc, padding[i]));
      Value over = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                         lastStart, limit);
      out = arith::SelectOp::create(
          b, loc, over,
          arith::SubIOp::create(b, loc, out, indexConst(b, loc, 1)), out);
    }
    dims[2 + i] =
        arith::SelectOp::create(b, loc, enough, out, indexConst(b, loc, 0))
            .getResult();
  }
  return dims;
}

/// Replaces `op`'s results by empty tensors when its result has a static
/// zero size (a batch or channels of 0): nothing to compute, and padding a
/// tensor with a zero size trips memref.subview's bounds rules. Every result
/// has the sizes `dims` (a pool's values and their winners).
bool isEmpty(ConversionPatternRewriter &rewriter, Operation *op,
             RankedTensorType resultType, ArrayRef<OpFoldResult> dims) {
  if (!llvm::is_contained(resultType.getShape(), 0))
    return false;
  SmallVector<Value> empties;
  for (Type type : op->getResultTypes())
    empties.push_back(createEmpty(rewriter, op->getLoc(),
                                  cast<RankedTensorType>(type), dims));
  rewriter.replaceOp(op, empties);
  return true;
}

/// Extra high padding so that every (ceil-mode) window lies inside the
/// padded tensor: exactly what a static size needs; for a dynamic one in
/// ceil mode, window - 1, the most a last window that starts inside the
/// input or the leading padding can overhang (the excess is never read).
SmallVector<int64_t>
windowedHighPadding(RankedTensorType inType, RankedTensorType resultType,
                    ArrayRef<int64_t> window, ArrayRef<int64_t> strides,
                    ArrayRef<int64_t> padding, bool ceilMode) {
  SmallVector<int64_t> high = {padding[2], padding[3]};
  for (int i = 0; i < 2; ++i) {
    int64_t in = inType.getDimSize(2 + i), out = resultType.getDimSize(2 + i);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(out)) {
      if (ceilMode)
        high[i] = std::max(high[i], window[i] - 1);
      continue;
    }
    int64_t need = (out - 1) * strides[i] + window[i] - (in + padding[i]);
    high[i] = std::max(high[i], need);
  }
  return high;
}

/// Adds `bias[f]` along dimension 1 of `x` (rank 4).
Value addChannelBias(OpBuilder &b, Location loc, Value x, Value bias) {
  auto type = cast<RankedTensorType>(x.getType());
  MLIRContext *ctx = b.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
  AffineMap channel = AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx);
  Value init = createEmpty(b, loc, type, getDims(b, loc, x));
  SmallVector<utils::IteratorType> iters(4, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{x, bias}, ValueRange{init},
             ArrayRef<AffineMap>{id, channel, id}, iters,
             [](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nloc,
                   arith::AddFOp::create(nb, nloc, args[0], args[1])
                       .getResult());
             })
      .getResult(0);
}

/// out[n] = W (F x K) @ cols[n] (K x P) for the weights `w` (F x ... ,
/// collapsed to F x K) shared across the batch: one batched GEMM whose lhs
/// map has no batch dimension, which convert-linalg-to-blas runs with a zero
/// batch stride. The GEMM of every convolution lowering. It accumulates into
/// `into` (N x F x P) zero-filled where given (a group's block of the
/// convolution's result, so that the GEMM writes there and nothing copies
/// its result), else into a fresh zero-filled tensor.
Value sharedWeightGemm(OpBuilder &b, Location loc, Value w, Value cols,
                       OpFoldResult batch, OpFoldResult p,
                       Value into = nullptr) {
  MLIRContext *ctx = b.getContext();
  auto colsType = cast<RankedTensorType>(cols.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  Type elt = colsType.getElementType();
  int64_t f = wType.getDimSize(0), k = colsType.getDimSize(1);
  Value w2 = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({f, k}, elt), w,
      ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
  auto yType = RankedTensorType::get(
      {colsType.getDimSize(0), f, colsType.getDimSize(2)}, elt);
  Value zero = createFloat(b, loc, elt, 0.0);
  Value init = into
                   ? linalg::FillOp::create(b, loc, zero, into).getResult(0)
                   : filled(b, loc, yType, {batch, b.getIndexAttr(f), p}, zero);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<Attribute> maps = {
      AffineMapAttr::get(AffineMap::get(4, 0, {d(1), d(3)}, ctx)),
      AffineMapAttr::get(AffineMap::get(4, 0, {d(0), d(3), d(2)}, ctx)),
      AffineMapAttr::get(AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx))};
  return linalg::BatchMatmulOp::create(
             b, loc, TypeRange{yType}, ValueRange{w2, cols}, ValueRange{init},
             ArrayRef<NamedAttribute>{
                 b.getNamedAttr("indexing_maps", b.getArrayAttr(maps))})
      .getResult(0);
}

/// Convolution as im2col + GEMM: the padded input `x` (N x Cg x Hp x Wp)
/// is unfolded into col[n, c, i, j, y, x] = x[n, c, y·sh + i·dh, x·sw + j·dw]
/// (one pass, a copy of Kh·Kw times the output), viewed as
/// N x (Cg·Kh·Kw) x (Oh·Ow), and multiplied by the weights viewed as
/// Fg x (Cg·Kh·Kw) in one batched GEMM with the weights shared across the
/// batch - which the BLAS / cuBLAS services run, instead of the seven-deep
/// loop nest of a direct convolution. The GEMM writes into `into`
/// (N x F x Oh x Ow) where given.
Value im2colConv(OpBuilder &b, Location loc, Value x, Value w,
                 ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                 int64_t oh, int64_t ow, OpFoldResult batch,
                 Value into = nullptr) {
  MLIRContext *ctx = b.getContext();
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  Type elt = xType.getElementType();
  int64_t n = xType.getDimSize(0), c = xType.getDimSize(1);
  int64_t f = wType.getDimSize(0), kh = wType.getDimSize(2),
          kw = wType.getDimSize(3);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto colType = RankedTensorType::get({n, c, kh, kw, oh, ow}, elt);
  Value colInit =
      createEmpty(b, loc, colType,
                  {batch, b.getIndexAttr(c), b.getIndexAttr(kh),
                   b.getIndexAttr(kw), b.getIndexAttr(oh), b.getIndexAttr(ow)});
  Value col =
      linalg::GenericOp::create(
          b, loc, colType, ValueRange{x}, ValueRange{colInit},
          ArrayRef<AffineMap>{
              AffineMap::get(6, 0,
                             {d(0), d(1),
                              d(4) * strides[0] + d(2) * dilations[0],
                              d(5) * strides[1] + d(3) * dilations[1]},
                             ctx),
              AffineMap::getMultiDimIdentityMap(6, ctx)},
          SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
          [](OpBuilder &nb, Location l, ValueRange args) {
            linalg::YieldOp::create(nb, l, args[0]);
          })
          .getResult(0);
  int64_t k = c * kh * kw, p = oh * ow;
  Value col3 = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({n, k, p}, elt), col,
      ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
  Value into3;
  if (into)
    into3 = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({n, f, p}, elt), into,
        ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  Value y3 = sharedWeightGemm(b, loc, w, col3, batch, b.getIndexAttr(p), into3);
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({n, f, oh, ow}, elt), y3,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}},
      ArrayRef<OpFoldResult>{batch, b.getIndexAttr(f), b.getIndexAttr(oh),
                             b.getIndexAttr(ow)});
}

/// The grouped im2col convolution of the padded `x` (N x C x Hp x Wp) into
/// `into` (N x F x Oh x Ow): one im2col + GEMM per group, the GEMM writing
/// the group's channel block in place (a GEMM into a fresh tensor inserted
/// there cost a copy of the result per group).
Value groupedIm2colConv(OpBuilder &b, Location loc, Value x, Value w,
                        Value into, int64_t groups, ArrayRef<int64_t> strides,
                        ArrayRef<int64_t> dilations, OpFoldResult batch) {
  auto intoType = cast<RankedTensorType>(into.getType());
  int64_t oh = intoType.getDimSize(2), ow = intoType.getDimSize(3);
  if (groups == 1)
    return im2colConv(b, loc, x, w, strides, dilations, oh, ow, batch, into);
  auto xType = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> wShape = cast<RankedTensorType>(w.getType()).getShape();
  int64_t cg = xType.getDimSize(1) / groups, fg = wShape[0] / groups;
  SmallVector<OpFoldResult> xDims = getDims(b, loc, x);
  auto one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  Value result = into;
  for (int64_t g = 0; g < groups; ++g) {
    Value xg = tensor::ExtractSliceOp::create(
        b, loc, x,
        ArrayRef<OpFoldResult>{zero, b.getIndexAttr(g * cg), zero, zero},
        ArrayRef<OpFoldResult>{xDims[0], b.getIndexAttr(cg), xDims[2],
                               xDims[3]},
        ArrayRef<OpFoldResult>{one, one, one, one});
    Value wg = tensor::ExtractSliceOp::create(
        b, loc, w,
        ArrayRef<OpFoldResult>{b.getIndexAttr(g * fg), zero, zero, zero},
        ArrayRef<OpFoldResult>{b.getIndexAttr(fg), b.getIndexAttr(wShape[1]),
                               b.getIndexAttr(wShape[2]),
                               b.getIndexAttr(wShape[3])},
        ArrayRef<OpFoldResult>{one, one, one, one});
    SmallVector<OpFoldResult> offsets = {zero, b.getIndexAttr(g * fg), zero,
                                         zero},
                              sizes = {batch, b.getIndexAttr(fg),
                                       b.getIndexAttr(oh), b.getIndexAttr(ow)},
                              unit = {one, one, one, one};
    Value block =
        tensor::ExtractSliceOp::create(b, loc, result, offsets, sizes, unit);
    Value yg =
        im2colConv(b, loc, xg, wg, strides, dilations, oh, ow, batch, block);
    result =
        tensor::InsertSliceOp::create(b, loc, yg, result, offsets, sizes, unit);
  }
  return result;
}

/// Builds the lowering of one grove.conv2d: the sizes and values every
/// form shares are members, one method per form.
class Conv2DBuilder {
public:
  Conv2DBuilder(Conv2DOp op, Conv2DOp::Adaptor adaptor,
                ConversionPatternRewriter &rewriter,
                ArrayRef<OpFoldResult> dims)
      : op(op), adaptor(adaptor), rewriter(rewriter), loc(op.getLoc()),
        resultType(op.getType()), elt(resultType.getElementType()),
        pad(op.getPadding()), wShape(op.getWeight().getType().getShape()),
        dims(dims), w(adaptor.getWeight()), groups(op.getGroupsAttr().getInt()),
        zero(createFloat(rewriter, loc, elt, 0.0)) {}

  /// A 1x1 unstrided, unpadded, ungrouped convolution.
  bool isPointwise() {
    auto isOne = [](int64_t v) { return v == 1; };
    return wShape[2] == 1 && wShape[3] == 1 && groups == 1 &&
           llvm::all_of(op.getStrides(), isOne) &&
           llvm::all_of(pad, [](int64_t v) { return v == 0; });
  }
  /// out[n] = W (F x C) @ x[n] (C x H·W): one batched GEMM with the weights
  /// shared across the batch, which the BLAS/cuBLAS services run with a
  /// zero batch stride - not a loop nest.
  Value pointwise();
  /// linalg's named convolution on the padded batch: what the convolution
  /// library runs (conv-library), or loops where output sizes are dynamic.
  Value namedConv();
  /// Static output sizes, one image at a time: pad, unfold and multiply
  /// image n into block n of the result. The unfolded copy (Kh·Kw times
  /// the output) is one image's, so it is read back from cache.
  Value perImageIm2col();
  /// Static output sizes, the whole batch: im2col + GEMM, one GEMM per
  /// group, written into the channel block of the group.
  Value batchIm2col() {
    return groupedIm2colConv(rewriter, loc, padded(adaptor.getInput()), w,
                             createEmpty(rewriter, loc, resultType, dims),
                             groups, op.getStrides(), op.getDilations(),
                             dims[0]);
  }

private:
  Value padded(Value x) {
    return pad2D(rewriter, loc, x, {pad[0], pad[1]}, {pad[2], pad[3]}, zero);
  }
  Value groupedNamedConv(Value x);

  Conv2DOp op;
  Conv2DOp::Adaptor adaptor;
  ConversionPatternRewriter &rewriter;
  Location loc;
  RankedTensorType resultType;
  Type elt;
  ArrayRef<int64_t> pad, wShape;
  ArrayRef<OpFoldResult> dims;
  Value w;
  int64_t groups;
  Value zero;
};

Value Conv2DBuilder::pointwise() {
  Value x = adaptor.getInput();
  auto xType = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> xDims = getDims(rewriter, loc, x);
  int64_t hw = xType.isDynamicDim(2) || xType.isDynamicDim(3)
                   ? ShapedType::kDynamic
                   : xType.getDimSize(2) * xType.getDimSize(3);
  auto x3Type = RankedTensorType::get(
      {xType.getDimSize(0), xType.getDimSize(1), hw}, elt);
  Value x3 = tensor::CollapseShapeOp::create(
      rewriter, loc, x3Type, x,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  Value hwSize = arith::MulIOp::create(
      rewriter, loc, getValueOrCreateConstantIndexOp(rewriter, loc, xDims[2]),
      getValueOrCreateConstantIndexOp(rewriter, loc, xDims[3]));
  Value y3 = sharedWeightGemm(rewriter, loc, w, x3, xDims[0], hwSize);
  return tensor::ExpandShapeOp::create(
      rewriter, loc, resultType, y3,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}},
      ArrayRef<OpFoldResult>{dims[0], dims[1], dims[2], dims[3]});
}

Value Conv2DBuilder::namedConv() {
  Value x = padded(adaptor.getInput());
  if (groups != 1)
    return groupedNamedConv(x);
  Value init = filled(rewriter, loc, resultType, dims, zero);
  return linalg::Conv2DNchwFchwOp::create(
             rewriter, loc, TypeRange{resultType}, ValueRange{x, w},
             ValueRange{init}, rewriter.getI64TensorAttr(op.getStrides()),
             rewriter.getI64TensorAttr(op.getDilations()))
      .getResult(0);
}

// N x (G·Cg) x H x W -> N x G x Cg x H x W, (G·Fg) x Cg x Kh x Kw ->
// G x Fg x Cg x Kh x Kw: linalg's grouped form, then back.
Value Conv2DBuilder::groupedNamedConv(Value x) {
  auto xType = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> xDims = getDims(rewriter, loc, x);
  int64_t c = xType.getDimSize(1), f = wShape[0];
  auto xgType =
      RankedTensorType::get({xType.getDimSize(0), groups, c / groups,
                             xType.getDimSize(2), xType.getDimSize(3)},
                            elt);
  Value xg = tensor::ExpandShapeOp::create(
      rewriter, loc, xgType, x,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}},
      ArrayRef<OpFoldResult>{xDims[0], rewriter.getIndexAttr(groups),
                             rewriter.getIndexAttr(c / groups), xDims[2],
                             xDims[3]});
  auto wgType = RankedTensorType::get(
      {groups, f / groups, wShape[1], wShape[2], wShape[3]}, elt);
  Value wg = tensor::ExpandShapeOp::create(
      rewriter, loc, wgType, w,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}, {4}});
  auto ygType = RankedTensorType::get({resultType.getDimSize(0), groups,
                                       f / groups, resultType.getDimSize(2),
                                       resultType.getDimSize(3)},
                                      elt);
  Value init = filled(rewriter, loc, ygType,
                      {dims[0], rewriter.getIndexAttr(groups),
                       rewriter.getIndexAttr(f / groups), dims[2], dims[3]},
                      zero);
  Value yg = linalg::Conv2DNgchwGfchwOp::create(
                 rewriter, loc, TypeRange{ygType}, ValueRange{xg, wg},
                 ValueRange{init}, rewriter.getI64TensorAttr(op.getStrides()),
                 rewriter.getI64TensorAttr(op.getDilations()))
                 .getResult(0);
  return tensor::CollapseShapeOp::create(
      rewriter, loc, resultType, yg,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
}

Value Conv2DBuilder::perImageIm2col() {
  Value input = adaptor.getInput();
  auto inType = cast<RankedTensorType>(input.getType());
  SmallVector<OpFoldResult> inDims = getDims(rewriter, loc, input);
  auto one = rewriter.getIndexAttr(1), zeroIdx = rewriter.getIndexAttr(0);
  auto imageType = RankedTensorType::get(
      {1, inType.getDimSize(1), inType.getDimSize(2), inType.getDimSize(3)},
      elt);
  auto outImageType = RankedTensorType::get({1, resultType.getDimSize(1),
                                             resultType.getDimSize(2),
                                             resultType.getDimSize(3)},
                                            elt);
  Value lb = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value step = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value ub = getValueOrCreateConstantIndexOp(rewriter, loc, dims[0]);
  Value init = createEmpty(rewriter, loc, resultType, dims);
  ArrayRef<int64_t> convStrides = op.getStrides(),
                    convDilations = op.getDilations();
  auto loop = scf::ForOp::create(
      rewriter, loc, lb, ub, step, ValueRange{init},
      [&](OpBuilder &b, Location l, Value n, ValueRange acc) {
        Value image = tensor::ExtractSliceOp::create(
            b, l, imageType, input,
            ArrayRef<OpFoldResult>{n, zeroIdx, zeroIdx, zeroIdx},
            ArrayRef<OpFoldResult>{one, inDims[1], inDims[2], inDims[3]},
            ArrayRef<OpFoldResult>{one, one, one, one});
        Value paddedImage =
            pad2D(b, l, image, {pad[0], pad[1]}, {pad[2], pad[3]}, zero);
        // The GEMMs write image n's block of the result in place.
        SmallVector<OpFoldResult> offsets = {n, zeroIdx, zeroIdx, zeroIdx},
                                  sizes = {one, dims[1], dims[2], dims[3]},
                                  unit = {one, one, one, one};
        Value out = tensor::ExtractSliceOp::create(b, l, outImageType, acc[0],
                                                   offsets, sizes, unit);
        Value y = groupedIm2colConv(b, l, paddedImage, w, out, groups,
                                    convStrides, convDilations, one);
        Value next = tensor::InsertSliceOp::create(b, l, y, acc[0], offsets,
                                                   sizes, unit);
        scf::YieldOp::create(b, l, next);
      });
  return loop.getResult(0);
}

struct Conv2DLowering : OpConversionPattern<Conv2DOp> {
  Conv2DLowering(MLIRContext *ctx, const ConvLowering &options)
      : OpConversionPattern(ctx), options(options) {}
  ConvLowering options;

  /// Whether a convolution with static output sizes (not a 1x1 GEMM) goes
  /// to the convolution library: all with `library`; f32 ones whose weights
  /// the entry only reads with libraryReadOnlyWeights (the library keeps
  /// them prepared, in layouts that win at every size); and f32 ones on
  /// small images with libraryMaxPositions (the host's 28x28), where the
  /// per-image im2col GEMMs are narrow and oneDNN's blocked kernels win,
  /// weights reordered every call; on larger images they lose then
  /// (docs/passes.md).
  bool useLibrary(Conv2DOp op, RankedTensorType resultType) const {
    Type elt = resultType.getElementType();
    if (options.library && (elt.isF32() || options.libraryLowPrecision))
      return true;
    if (elt.isF32() && options.libraryReadOnlyWeights &&
        isReadOnlyState(op.getWeight()))
      return true;
    return elt.isF32() && options.libraryMaxPositions > 0 &&
           resultType.getDimSize(2) * resultType.getDimSize(3) <=
               options.libraryMaxPositions;
  }

  /// Whether a 1x1 GEMM-shaped convolution goes to the library instead:
  /// with libraryReadOnlyWeights, f32 ones whose weights the entry only
  /// reads on images of at most kPointwiseLibraryMaxPositions outputs,
  /// where the GEMM is too narrow for the BLAS kernels and oneDNN's blocked
  /// 1x1 kernels win even with the input and result reordered on each call
  /// (on larger images the result's reorder costs more; docs/perf.md).
  bool pointwiseInLibrary(Conv2DOp op) const {
    RankedTensorType type = op.getType();
    return options.libraryReadOnlyWeights && type.getElementType().isF32() &&
           !type.isDynamicDim(2) && !type.isDynamicDim(3) &&
           type.getDimSize(2) * type.getDimSize(3) <=
               kPointwiseLibraryMaxPositions &&
           isReadOnlyState(op.getWeight());
  }
  static constexpr int64_t kPointwiseLibraryMaxPositions = 7 * 7;

  /// An entry's state argument without grove.writes. Entries are the
  /// public functions; a private one that reads state may be called by an
  /// entry that writes it (grove-params-to-arguments inlines only writers).
  static bool isReadOnlyState(Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    auto func =
        arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()) : nullptr;
    return func && func.isPublic() && arg.getOwner()->isEntryBlock() &&
           func.getArgAttr(arg.getArgNumber(), kStateArgAttr) &&
           !func.getArgAttr(arg.getArgNumber(), kWritesAttr);
  }

  LogicalResult
  matchAndRewrite(Conv2DOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType = op.getType();
    ArrayRef<int64_t> wShape = op.getWeight().getType().getShape();
    SmallVector<int64_t> window = {op.getDilations()[0] * (wShape[2] - 1) + 1,
                                   op.getDilations()[1] * (wShape[3] - 1) + 1};
    SmallVector<OpFoldResult> dims = windowedResultDims(
        rewriter, op.getLoc(), op->getName().getStringRef(), resultType,
        adaptor.getInput(), window, op.getStrides(), op.getPadding(), false);
    if (isEmpty(rewriter, op, resultType, dims))
      return success();
    Conv2DBuilder build(op, adaptor, rewriter, dims);
    bool staticOut = !resultType.isDynamicDim(2) && !resultType.isDynamicDim(3);
    Value result;
    if (build.isPointwise() && !(staticOut && pointwiseInLibrary(op)))
      result = build.pointwise();
    else if (!staticOut || useLibrary(op, resultType))
      result = build.namedConv();
    else if (options.perImage)
      result = build.perImageIm2col();
    else
      result = build.batchIm2col();
    if (adaptor.getBias())
      result = addChannelBias(rewriter, op.getLoc(), result, adaptor.getBias());
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A weight gradient's groups, filters and channels a group, and kernel
/// height and width.
std::array<int64_t, 5> getGradSizes(Conv2DWeightGradOp op) {
  RankedTensorType type = op.getType();
  int64_t groups = op.getGroups();
  return {groups, type.getDimSize(0) / groups, type.getDimSize(1),
          type.getDimSize(2), type.getDimSize(3)};
}

/// dW[f, c, i, j] = sum over n, y, x of dy[n, f, y, x] times the padded
/// input at (n, g(f) Cg + c, y sh + i dh, x sw + j dw), in one of three
/// forms:
///  * with ConvLowering::weightGradLibrary, f32: one linalg.generic in
///    linalg's grouped form (libraryForm), which convert-linalg-to-blas
///    turns into the runtime's weight-gradient service (oneDNN's
///    backward-weights convolution);
///  * else f32 and f64: one batched GEMM a call (buildGemm): with G groups
///    of Fg filters and Cg channels, P = N·Oh·Ow and the input's patches
///    gathered once (im2col), dW[g] (Fg x Cg·kh·kw) = dy[g] (Fg x P) ·
///    col[g] (P x Cg·kh·kw), the GEMM library (BLAS, cuBLAS) doing the
///    reduction a loop nest would do with strided reads;
///  * other element types: one linalg.generic with the three reduction
///    loops innermost, accumulated in getAccumulatorType (buildLoops).
struct Conv2DWeightGradLowering : OpConversionPattern<Conv2DWeightGradOp> {
  Conv2DWeightGradLowering(MLIRContext *ctx, const ConvLowering &options)
      : OpConversionPattern(ctx), library(options.weightGradLibrary) {}
  bool library;

  LogicalResult
  matchAndRewrite(Conv2DWeightGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    ArrayRef<int64_t> p = op.getPadding();
    Value x = pad2D(rewriter, loc, adaptor.getInput(), {p[0], p[1]},
                    {p[2], p[3]}, createFloat(rewriter, loc, element, 0));
    Value dy = adaptor.getOutputGrad();
    Value result;
    if (library && element.isF32())
      result = libraryForm(op, x, dy, rewriter);
    else if (getAccumulatorType(element) == element)
      result = buildGemm(op, x, dy, rewriter);
    else
      result = buildLoops(op, x, dy, rewriter);
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  /// dw[g, f, c, i, j] += x[n, g, c, y·sh + i·dh, x·sw + j·dw] ·
  /// dy[n, g, f, y, x] on the padded input, over 5-D views of x and dy
  /// (G x Cg and G x Fg channels) into a zero-filled G x Fg x Cg x Kh x Kw:
  /// the form blas::rewriteConvWeightGrad matches, loops where it does not.
  static Value libraryForm(Conv2DWeightGradOp op, Value x, Value dy,
                           ConversionPatternRewriter &rewriter) {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    ArrayRef<int64_t> s = op.getStrides(), d = op.getDilations();
    // Named variables, not bindings: lambdas below capture them.
    std::array<int64_t, 5> sizes = getGradSizes(op);
    int64_t groups = sizes[0], fg = sizes[1], cg = sizes[2], kh = sizes[3],
            kw = sizes[4];
    auto idx = [&](int64_t v) -> OpFoldResult {
      return rewriter.getIndexAttr(v);
    };
    // N x (G·K) x H x W as N x G x K x H x W.
    auto split = [&](Value v, int64_t perGroup) {
      auto t = cast<RankedTensorType>(v.getType());
      SmallVector<OpFoldResult> dims = getDims(rewriter, loc, v);
      auto type5 = RankedTensorType::get(
          {t.getDimSize(0), groups, perGroup, t.getDimSize(2), t.getDimSize(3)},
          element);
      return tensor::ExpandShapeOp::create(
          rewriter, loc, type5, v,
          ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}},
          ArrayRef<OpFoldResult>{dims[0], idx(groups), idx(perGroup), dims[2],
                                 dims[3]});
    };
    Value x5 = split(x, cg), dy5 = split(dy, fg);
    auto dwType = RankedTensorType::get({groups, fg, cg, kh, kw}, element);
    Value init = filled(rewriter, loc, dwType,
                        {idx(groups), idx(fg), idx(cg), idx(kh), idx(kw)},
                        createFloat(rewriter, loc, element, 0));
    AffineExpr g, f, c, i, j, n, y, xx;
    bindDims(ctx, g, f, c, i, j, n, y, xx);
    SmallVector<AffineMap> maps = {
        AffineMap::get(
            8, 0, {n, g, c, y * s[0] + i * d[0], xx * s[1] + j * d[1]}, ctx),
        AffineMap::get(8, 0, {n, g, f, y, xx}, ctx),
        AffineMap::get(8, 0, {g, f, c, i, j}, ctx)};
    SmallVector<utils::IteratorType> iterators(5,
                                               utils::IteratorType::parallel);
    iterators.append(3, utils::IteratorType::reduction);
    Value dw =
        linalg::GenericOp::create(
            rewriter, loc, dwType, ValueRange{x5, dy5}, init, maps, iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value prod = arith::MulFOp::create(b, l, args[0], args[1]);
              linalg::YieldOp::create(
                  b, l, arith::AddFOp::create(b, l, args[2], prod).getResult());
            })
            .getResult(0);
    return tensor::CollapseShapeOp::create(
        rewriter, loc, type, dw,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}, {4}});
  }

  static Value buildGemm(Conv2DWeightGradOp op, Value x, Value dy,
                         ConversionPatternRewriter &rewriter) {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    ArrayRef<int64_t> s = op.getStrides(), d = op.getDilations();
    // Named variables, not bindings: lambdas below capture them.
    std::array<int64_t, 5> sizes = getGradSizes(op);
    int64_t groups = sizes[0], fg = sizes[1], cg = sizes[2], kh = sizes[3],
            kw = sizes[4];
    auto dyType = cast<RankedTensorType>(dy.getType());
    int64_t n = dyType.getDimSize(0), oh = dyType.getDimSize(2),
            ow = dyType.getDimSize(3);
    SmallVector<OpFoldResult> dyDims = getDims(rewriter, loc, dy);
    auto idx = [&](int64_t v) -> OpFoldResult {
      return rewriter.getIndexAttr(v);
    };
    auto par = [](unsigned count) {
      return SmallVector<utils::IteratorType>(count,
                                              utils::IteratorType::parallel);
    };
    auto copy = [](OpBuilder &b, Location l, ValueRange args) {
      linalg::YieldOp::create(b, l, args[0]);
    };
    // col[g, n, y, x, c, i, j] = x[n, g·Cg + c, y·sh + i·dh, x·sw + j·dw].
    AffineExpr g, b, y, xx, c, i, j;
    bindDims(ctx, g, b, y, xx, c, i, j);
    auto colType =
        RankedTensorType::get({groups, n, oh, ow, cg, kh, kw}, element);
    // The input's batch (it is read); the GEMM checks that dy's agrees.
    Value colInit =
        createEmpty(rewriter, loc, colType,
                    {idx(groups), getDims(rewriter, loc, x)[0], dyDims[2],
                     dyDims[3], idx(cg), idx(kh), idx(kw)});
    Value col = linalg::GenericOp::create(
                    rewriter, loc, colType, x, colInit,
                    {AffineMap::get(7, 0,
                                    {b, g * cg + c, y * s[0] + i * d[0],
                                     xx * s[1] + j * d[1]},
                                    ctx),
                     AffineMap::getMultiDimIdentityMap(7, ctx)},
                    par(7), copy)
                    .getResult(0);
    // dy as G x Fg x N x Oh x Ow (the filters first, for the GEMM's rows).
    AffineExpr g5, f5, n5, y5, x5;
    bindDims(ctx, g5, f5, n5, y5, x5);
    auto dyGType = RankedTensorType::get({groups, fg, n, oh, ow}, element);
    Value dyInit =
        createEmpty(rewriter, loc, dyGType,
                    {idx(groups), idx(fg), dyDims[0], dyDims[2], dyDims[3]});
    Value dyG = linalg::GenericOp::create(
                    rewriter, loc, dyGType, dy, dyInit,
                    {AffineMap::get(5, 0, {n5, g5 * fg + f5, y5, x5}, ctx),
                     AffineMap::getMultiDimIdentityMap(5, ctx)},
                    par(5), copy)
                    .getResult(0);
    int64_t positions = ShapedType::isDynamic(n) || ShapedType::isDynamic(oh) ||
                                ShapedType::isDynamic(ow)
                            ? ShapedType::kDynamic
                            : n * oh * ow;
    Value lhs = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get({groups, fg, positions}, element),
        dyG, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3, 4}});
    Value rhs = tensor::CollapseShapeOp::create(
        rewriter, loc,
        RankedTensorType::get({groups, positions, cg * kh * kw}, element), col,
        ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5, 6}});
    Value mm = MatmulOp::create(
        rewriter, loc,
        RankedTensorType::get({groups, fg, cg * kh * kw}, element), lhs, rhs,
        /*transpose_lhs=*/false, /*transpose_rhs=*/false);
    return ReshapeOp::create(rewriter, loc, type, mm);
  }

  static Value buildLoops(Conv2DWeightGradOp op, Value x, Value dy,
                          ConversionPatternRewriter &rewriter) {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    Type acc = getAccumulatorType(element);
    ArrayRef<int64_t> s = op.getStrides(), d = op.getDilations();
    int64_t filtersPerGroup = type.getDimSize(0) / op.getGroups();
    int64_t cg = type.getDimSize(1);
    MLIRContext *ctx = rewriter.getContext();
    AffineExpr f, c, i, j, n, y, xx;
    bindDims(ctx, f, c, i, j, n, y, xx);
    SmallVector<AffineMap> maps = {
        AffineMap::get(7, 0, {n, f, y, xx}, ctx),
        AffineMap::get(7, 0,
                       {n, f.floorDiv(filtersPerGroup) * cg + c,
                        y * s[0] + i * d[0], xx * s[1] + j * d[1]},
                       ctx),
        AffineMap::get(7, 0, {f, c, i, j}, ctx)};
    auto accType = RankedTensorType::get(type.getShape(), acc);
    Value init =
        filled(rewriter, loc, accType, getDims(rewriter, loc, op.getResult()),
               createFloat(rewriter, loc, acc, 0));
    SmallVector<utils::IteratorType> iterators(4,
                                               utils::IteratorType::parallel);
    iterators.append(3, utils::IteratorType::reduction);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, accType, ValueRange{dy, x}, init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value g = castFloat(b, l, args[0], acc);
          Value v = castFloat(b, l, args[1], acc);
          Value prod = arith::MulFOp::create(b, l, g, v);
          linalg::YieldOp::create(
              b, l, arith::AddFOp::create(b, l, prod, args[2]).getResult());
        });
    Value empty = createEmpty(rewriter, loc, type,
                              getDims(rewriter, loc, op.getResult()));
    SmallVector<AffineMap> id(2, AffineMap::getMultiDimIdentityMap(4, ctx));
    return linalg::GenericOp::create(
               rewriter, loc, type, generic.getResult(0), empty, id,
               SmallVector<utils::IteratorType>(4,
                                                utils::IteratorType::parallel),
               [&](OpBuilder &b, Location l, ValueRange args) {
                 linalg::YieldOp::create(b, l,
                                         castFloat(b, l, args[0], element));
               })
        .getResult(0);
  }
};

struct BatchNormLowering : OpConversionPattern<BatchNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BatchNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = op.getType();
    Type elt = type.getElementType();
    int64_t rank = type.getRank(), c = type.getDimSize(1);
    // Per channel: a = scale / sqrt(var + eps), s = bias - mean * a.
    auto vecType = RankedTensorType::get({c}, elt);
    AffineMap id1 = AffineMap::getMultiDimIdentityMap(1, ctx);
    Value eps =
        createFloat(rewriter, loc, elt, op.getEpsilon().convertToDouble());
    SmallVector<Type> two = {vecType, vecType};
    auto factors = linalg::GenericOp::create(
        rewriter, loc, two,
        ValueRange{adaptor.getScale(), adaptor.getBias(), adaptor.getMean(),
                   adaptor.getVariance()},
        ValueRange{
            tensor::EmptyOp::create(rewriter, loc, vecType.getShape(), elt),
            tensor::EmptyOp::create(rewriter, loc, vecType.getShape(), elt)},
        SmallVector<AffineMap>(6, id1), {utils::IteratorType::parallel},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value sd = math::SqrtOp::create(
              b, l, arith::AddFOp::create(b, l, args[3], eps));
          Value a = arith::DivFOp::create(b, l, args[0], sd);
          Value s = arith::SubFOp::create(
              b, l, args[1], arith::MulFOp::create(b, l, args[2], a));
          linalg::YieldOp::create(b, l, ValueRange{a, s});
        });
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap channel =
        AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx);
    Value init = createEmpty(rewriter, loc, type,
                             getDims(rewriter, loc, adaptor.getInput()));
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    auto norm = linalg::GenericOp::create(
        rewriter, loc, type,
        ValueRange{adaptor.getInput(), factors.getResult(0),
                   factors.getResult(1)},
        ValueRange{init}, ArrayRef<AffineMap>{id, channel, channel, id}, iters,
        [](OpBuilder &b, Location l, ValueRange args) {
          Value scaled = arith::MulFOp::create(b, l, args[0], args[1]);
          linalg::YieldOp::create(
              b, l, arith::AddFOp::create(b, l, scaled, args[2]).getResult());
        });
    rewriter.replaceOp(op, norm.getResult(0));
    return success();
  }
};

/// The divisor of avg_pool2d's window at output position `pos` (PyTorch's
/// rules): the window [y·s - pt, y·s - pt + k) clipped to the padded extent
/// [-pt, H + pb), and further to the input [0, H) unless `includePad`.
Value windowCount(OpBuilder &b, Location l, function_ref<Value(int)> position,
                  Value sizes[2], ArrayRef<int64_t> kernel,
                  ArrayRef<int64_t> strides, ArrayRef<int64_t> pad,
                  bool includePad) {
  Value count;
  for (int i = 0; i < 2; ++i) {
    // Signed index math: starts may be negative.
    Value pos = position(i);
    Value start = arith::SubIOp::create(
        b, l, arith::MulIOp::create(b, l, pos, indexConst(b, l, strides[i])),
        indexConst(b, l, pad[i]));
    Value end = arith::MinSIOp::create(
        b, l, arith::AddIOp::create(b, l, start, indexConst(b, l, kernel[i])),
        arith::AddIOp::create(b, l, sizes[i], indexConst(b, l, pad[2 + i])));
    if (!includePad) {
      start = arith::MaxSIOp::create(b, l, start, indexConst(b, l, 0));
      end = arith::MinSIOp::create(b, l, end, sizes[i]);
    }
    Value n = arith::SubIOp::create(b, l, end, start);
    count = count ? arith::MulIOp::create(b, l, count, n).getResult() : n;
  }
  return count;
}

template <typename PoolOp> struct PoolLowering : OpConversionPattern<PoolOp> {
  using OpConversionPattern<PoolOp>::OpConversionPattern;
  using OpAdaptor = typename PoolOp::Adaptor;
  static constexpr bool isMax = std::is_same_v<PoolOp, MaxPool2DOp>;

  LogicalResult
  matchAndRewrite(PoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    Type elt = resultType.getElementType();
    ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                      pad = op.getPadding();
    SmallVector<OpFoldResult> dims = windowedResultDims(
        rewriter, loc, op->getName().getStringRef(), resultType,
        adaptor.getInput(), kernel, strides, pad, op.getCeilMode());
    if (isEmpty(rewriter, op, resultType, dims))
      return success();
    SmallVector<int64_t> high = windowedHighPadding(
        inType, resultType, kernel, strides, pad, op.getCeilMode());
    auto floatType = cast<FloatType>(elt);
    Value padValue =
        isMax ? arith::ConstantOp::create(
                    rewriter, loc, elt,
                    rewriter.getFloatAttr(
                        elt, APFloat::getInf(floatType.getFloatSemantics(),
                                             /*Negative=*/true)))
                    .getResult()
              : createFloat(rewriter, loc, elt, 0.0);
    Value x = pad2D(rewriter, loc, adaptor.getInput(), {pad[0], pad[1]}, high,
                    padValue);
    Value init = filled(rewriter, loc, resultType, dims, padValue);
    Value windowShape = tensor::EmptyOp::create(rewriter, loc, kernel, elt);
    Attribute s = rewriter.getI64TensorAttr(strides);
    Attribute d = rewriter.getI64TensorAttr({1, 1});
    Value pooled;
    if constexpr (isMax)
      pooled = linalg::PoolingNchwMaxOp::create(
                   rewriter, loc, TypeRange{resultType},
                   ValueRange{x, windowShape}, ValueRange{init}, s, d)
                   .getResult(0);
    else
      pooled = linalg::PoolingNchwSumOp::create(
                   rewriter, loc, TypeRange{resultType},
                   ValueRange{x, windowShape}, ValueRange{init}, s, d)
                   .getResult(0);
    // Loops (n, c, y, ky, kx, x): the window loops outside the output row,
    // which becomes the innermost loop, so the host vectorizes along it
    // (the named op's order ends in the 3-trip kx loop, which it did not
    // vectorize; docs/perf.md, "Design measurements"). The GPU's kernels are
    // unchanged: they put every parallel loop outermost anyway.
    FailureOr<linalg::GenericOp> generic = linalg::generalizeNamedOp(
        rewriter, cast<linalg::LinalgOp>(pooled.getDefiningOp()));
    if (failed(generic))
      return failure();
    FailureOr<linalg::GenericOp> rowInnermost =
        linalg::interchangeGenericOp(rewriter, *generic, {0, 1, 2, 4, 5, 3});
    if (failed(rowInnermost))
      return failure();
    pooled = rowInnermost->getResult(0);
    if constexpr (!isMax)
      pooled = divideByCount(rewriter, loc, op, pooled, adaptor.getInput());
    rewriter.replaceOp(op, pooled);
    return success();
  }

  /// sum / count, count from the output position (windowCount).
  static Value divideByCount(OpBuilder &b, Location loc, AvgPool2DOp op,
                             Value sum, Value input) {
    auto type = cast<RankedTensorType>(sum.getType());
    MLIRContext *ctx = b.getContext();
    SmallVector<OpFoldResult> inDims = getDims(b, loc, input);
    Value sizes[2] = {getValueOrCreateConstantIndexOp(b, loc, inDims[2]),
                      getValueOrCreateConstantIndexOp(b, loc, inDims[3])};
    ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                      pad = op.getPadding();
    bool includePad = op.getCountIncludePad();
    AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
    Value init = createEmpty(b, loc, type, getDims(b, loc, sum));
    SmallVector<utils::IteratorType> iters(4, utils::IteratorType::parallel);
    return linalg::GenericOp::create(
               b, loc, type, ValueRange{sum}, ValueRange{init},
               ArrayRef<AffineMap>{id, id}, iters,
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 Value count = windowCount(
                     nb, l,
                     [&](int i) -> Value {
                       return linalg::IndexOp::create(nb, l, 2 + i);
                     },
                     sizes, kernel, strides, pad, includePad);
                 Value asInt =
                     arith::IndexCastOp::create(nb, l, nb.getI64Type(), count);
                 Value asFloat =
                     arith::SIToFPOp::create(nb, l, args[0].getType(), asInt);
                 linalg::YieldOp::create(
                     nb, l,
                     arith::DivFOp::create(nb, l, args[0], asFloat)
                         .getResult());
               })
        .getResult(0);
  }
  static Value divideByCount(OpBuilder &, Location, MaxPool2DOp, Value sum,
                             Value) {
    return sum;
  }
};

/// A max pool's windows.
struct MaxPoolWindows {
  RankedTensorType inType, outType;
  ArrayRef<int64_t> kernel, strides, pad;
  bool ceilMode;
};

/// For each output position of a max pool of `x`, the maximum and the index
/// (i · kw + j) of the window element that wins: the first maximum, or the
/// last NaN, as PyTorch's kernels pick it (`v > max || isnan(v)`). `dims`:
/// the output's sizes. Loops (n, c, y, i, j, x), as the forward's
/// (PoolLowering): the output row innermost, which the host vectorizes along
/// (the window's 2 or 3 trips innermost it did not); the GPU's kernels put
/// parallel loops outermost anyway.
linalg::GenericOp buildMaxAndArgmax(OpBuilder &b, Location loc,
                                    const MaxPoolWindows &w, Value x,
                                    ArrayRef<OpFoldResult> dims) {
  RankedTensorType inType = w.inType, outType = w.outType;
  ArrayRef<int64_t> kernel = w.kernel, strides = w.strides, pad = w.pad;
  Type elt = inType.getElementType();
  Value negInf = arith::ConstantOp::create(
      b, loc, elt,
      b.getFloatAttr(elt, APFloat::getInf(
                              cast<FloatType>(elt).getFloatSemantics(), true)));
  SmallVector<int64_t> high =
      windowedHighPadding(inType, outType, kernel, strides, pad, w.ceilMode);
  Value padded = pad2D(b, loc, x, {pad[0], pad[1]}, high, negInf);
  auto indexType = RankedTensorType::get(outType.getShape(), b.getI32Type());
  Value maxInit = filled(b, loc, outType, dims, negInf);
  Value idxInit = filled(b, loc, indexType, dims,
                         arith::ConstantIntOp::create(b, loc, 0, 32));
  MLIRContext *ctx = b.getContext();
  AffineExpr n, c, y, i, j, xx;
  bindDims(ctx, n, c, y, i, j, xx);
  // The window's shape, as the named pooling ops take it, bounds (i, j).
  Value window = tensor::EmptyOp::create(b, loc, kernel, elt);
  SmallVector<AffineMap> maps = {
      AffineMap::get(6, 0, {n, c, y * strides[0] + i, xx * strides[1] + j},
                     ctx),
      AffineMap::get(6, 0, {i, j}, ctx),
      AffineMap::get(6, 0, {n, c, y, xx}, ctx),
      AffineMap::get(6, 0, {n, c, y, xx}, ctx)};
  using utils::IteratorType;
  SmallVector<IteratorType> iters = {
      IteratorType::parallel,  IteratorType::parallel,  IteratorType::parallel,
      IteratorType::reduction, IteratorType::reduction, IteratorType::parallel};
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{outType, indexType}, ValueRange{padded, window},
      ValueRange{maxInit, idxInit}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value v = args[0], m = args[2];
        Value greater =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, v, m);
        Value nan =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNO, v, v);
        Value better = arith::OrIOp::create(nb, l, greater, nan);
        Value k = arith::AddIOp::create(
            nb, l,
            arith::MulIOp::create(nb, l, linalg::IndexOp::create(nb, l, 3),
                                  indexConst(nb, l, kernel[1])),
            linalg::IndexOp::create(nb, l, 4));
        Value k32 = arith::IndexCastOp::create(nb, l, nb.getI32Type(), k);
        linalg::YieldOp::create(
            nb, l,
            ValueRange{arith::SelectOp::create(nb, l, better, v, m),
                       arith::SelectOp::create(nb, l, better, k32, args[3])});
      });
  return generic;
}

/// The winners a max pool's gradient routes to: its own indices, or found
/// again in the input.
Value buildArgmax(OpBuilder &b, Location loc, MaxPool2DGradOp op, Value x,
                  Value dy, Value indices) {
  if (indices)
    return indices;
  MaxPoolWindows w{op.getInput().getType(), op.getOutputGrad().getType(),
                   op.getKernel(),          op.getStrides(),
                   op.getPadding(),         op.getCeilMode()};
  return buildMaxAndArgmax(b, loc, w, x, getDims(b, loc, dy)).getResult(1);
}

/// grove.max_pool2d_with_indices: the argmax's generic, both its results.
struct MaxPoolWithIndicesLowering
    : OpConversionPattern<MaxPool2DWithIndicesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxPool2DWithIndicesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getResult().getType();
    MaxPoolWindows w{op.getInput().getType(), resultType,
                     op.getKernel(),          op.getStrides(),
                     op.getPadding(),         op.getCeilMode()};
    SmallVector<OpFoldResult> dims = windowedResultDims(
        rewriter, loc, op->getName().getStringRef(), resultType,
        adaptor.getInput(), w.kernel, w.strides, w.pad, w.ceilMode);
    if (isEmpty(rewriter, op, resultType, dims))
      return success();
    rewriter.replaceOp(
        op, buildMaxAndArgmax(rewriter, loc, w, adaptor.getInput(), dims)
                .getResults());
    return success();
  }
};

/// A window position that may have pooled input element `at`: the output
/// gradient's position `pos` (0 where not `valid`) and the element's index
/// in that window, `offset` (i32, i · kw + j as buildArgmax numbers it).
struct PoolCandidate {
  Value valid;
  Value pos[2];
  Value offset;
};

/// `a && b`, or `b` where there is no `a` yet.
Value andAlso(OpBuilder &b, Location l, Value a, Value c) {
  return a ? arith::AndIOp::create(b, l, a, c).getResult() : c;
}

/// Windows that tile the input (stride = kernel) hold each element at most
/// once: window (h + pt) / sh at offset (h + pt) % sh. h + pt is never
/// negative, so the divisions are unsigned (shifts for 2).
PoolCandidate getTiledCandidate(OpBuilder &b, Location l, Value at[2],
                                ArrayRef<int64_t> kernel,
                                ArrayRef<int64_t> strides,
                                ArrayRef<int64_t> pad, Value outSizes[2]) {
  PoolCandidate c;
  Value rem[2];
  for (int d = 0; d < 2; ++d) {
    Value num = arith::AddIOp::create(b, l, at[d], indexConst(b, l, pad[d]));
    Value k = indexConst(b, l, strides[d]);
    c.pos[d] = arith::DivUIOp::create(b, l, num, k);
    rem[d] = arith::RemUIOp::create(b, l, num, k);
    c.valid = andAlso(b, l, c.valid,
                      arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                            c.pos[d], outSizes[d]));
  }
  Value offset = arith::AddIOp::create(
      b, l, arith::MulIOp::create(b, l, rem[0], indexConst(b, l, kernel[1])),
      rem[1]);
  c.offset = arith::IndexCastOp::create(b, l, b.getI32Type(), offset);
  return c;
}

/// Every window offset (i, j): window ((h + pt - i) / sh, ...) where that
/// is whole and in range.
SmallVector<PoolCandidate>
getWindowCandidates(OpBuilder &b, Location l, Value at[2],
                    ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                    ArrayRef<int64_t> pad, Value outSizes[2]) {
  SmallVector<PoolCandidate> candidates;
  Value zero = indexConst(b, l, 0);
  for (int64_t i = 0; i < kernel[0]; ++i) {
    for (int64_t j = 0; j < kernel[1]; ++j) {
      int64_t offset[2] = {i, j};
      PoolCandidate c;
      for (int d = 0; d < 2; ++d) {
        Value num = arith::SubIOp::create(
            b, l, arith::AddIOp::create(b, l, at[d], indexConst(b, l, pad[d])),
            indexConst(b, l, offset[d]));
        Value stride = indexConst(b, l, strides[d]);
        c.pos[d] = arith::DivSIOp::create(b, l, num, stride);
        Value r = arith::RemSIOp::create(b, l, num, stride);
        Value ok = arith::AndIOp::create(
            b, l,
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, num, zero),
            arith::AndIOp::create(
                b, l,
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, r, zero),
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, c.pos[d],
                                      outSizes[d])));
        c.valid = andAlso(b, l, c.valid, ok);
      }
      c.offset = arith::ConstantIntOp::create(b, l, i * kernel[1] + j, 32);
      candidates.push_back(c);
    }
  }
  return candidates;
}

/// A pool's input gradient as a gather: input element (h, w) sums, over
/// the window offsets (i, j), the output gradient at ((h + pt - i) / sh,
/// (w + pl - j) / sw) where that is a whole, in-range position, and the
/// element is what the window pooled (max: its winner; avg: divided by
/// the window's divisor). One linalg.generic, a thread per input element
/// on the GPU, no scatter. Windows that tile the input (the usual 2x2
/// pool) give one candidate (getTiledCandidate), not kh · kw each with its
/// divisions and tests.
/// With ConvLowering::poolGradPhases, windows that overlap (a kernel larger
/// than the stride in a dimension) and static image sizes, the input is
/// taken instead in its stride phases (phasedGrad): input rows s·a + r see
/// the windows a + t for a fixed set of t per phase r, so each phase is one
/// generic over (n, c, a, b) reading the output gradient (zero-padded at
/// its borders) through constant-offset maps, with no divisions, range
/// tests or computed indices (max pools still compare each tap's winner),
/// and is inserted into the result with stride s.
template <typename GradOp>
struct PoolGradLowering : OpConversionPattern<GradOp> {
  PoolGradLowering(MLIRContext *ctx, const ConvLowering &options)
      : OpConversionPattern<GradOp>(ctx), phases(options.poolGradPhases) {}
  bool phases;
  using OpAdaptor = typename GradOp::Adaptor;
  static constexpr bool isMax = std::is_same_v<GradOp, MaxPool2DGradOp>;

  LogicalResult
  matchAndRewrite(GradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type elt = type.getElementType(), acc = getAccumulatorType(elt);
    ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                      pad = op.getPadding();
    Value x = adaptor.getInput(), dy = adaptor.getOutputGrad();
    Value argmax;
    if constexpr (isMax)
      argmax = buildArgmax(rewriter, loc, op, x, dy, adaptor.getIndices());
    SmallVector<OpFoldResult> inDims = getDims(rewriter, loc, x);
    SmallVector<OpFoldResult> outDims = getDims(rewriter, loc, dy);
    Value sizes[2], outSizes[2];
    for (int i = 0; i < 2; ++i) {
      sizes[i] = getValueOrCreateConstantIndexOp(rewriter, loc, inDims[2 + i]);
      outSizes[i] =
          getValueOrCreateConstantIndexOp(rewriter, loc, outDims[2 + i]);
    }
    bool includePad = false;
    if constexpr (!isMax)
      includePad = op.getCountIncludePad();
    // Windows that tile the input have one candidate an element, computed
    // in one loop; phases pay where windows overlap.
    bool tiles = kernel[0] == strides[0] && kernel[1] == strides[1];
    bool overlap = kernel[0] > strides[0] || kernel[1] > strides[1];
    auto dyType = cast<RankedTensorType>(dy.getType());
    if (phases && overlap && !type.isDynamicDim(2) && !type.isDynamicDim(3) &&
        !dyType.isDynamicDim(2) && !dyType.isDynamicDim(3)) {
      rewriter.replaceOp(
          op, phasedGrad(rewriter, op, dy, argmax, inDims, sizes, includePad));
      return success();
    }
    Value init = createEmpty(rewriter, loc, type, inDims);
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(4, ctx)};
    SmallVector<utils::IteratorType> iters(4, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{}, ValueRange{init}, maps, iters,
        [&](OpBuilder &b, Location l, ValueRange) {
          Value n = linalg::IndexOp::create(b, l, 0);
          Value c = linalg::IndexOp::create(b, l, 1);
          Value at[2] = {linalg::IndexOp::create(b, l, 2),
                         linalg::IndexOp::create(b, l, 3)};
          Value zero = indexConst(b, l, 0);
          Value sum = createFloat(b, l, acc, 0.0);
          SmallVector<PoolCandidate> candidates =
              tiles ? SmallVector<PoolCandidate>{getTiledCandidate(
                          b, l, at, kernel, strides, pad, outSizes)}
                    : getWindowCandidates(b, l, at, kernel, strides, pad,
                                          outSizes);
          for (PoolCandidate &cand : candidates) {
            Value pos[2];
            for (int d = 0; d < 2; ++d)
              pos[d] =
                  arith::SelectOp::create(b, l, cand.valid, cand.pos[d], zero);
            Value g = castFloat(b, l,
                                tensor::ExtractOp::create(
                                    b, l, dy, ValueRange{n, c, pos[0], pos[1]}),
                                acc);
            Value hit = cand.valid;
            if constexpr (isMax) {
              Value winner = tensor::ExtractOp::create(
                  b, l, argmax, ValueRange{n, c, pos[0], pos[1]});
              hit = arith::AndIOp::create(
                  b, l, hit,
                  arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, winner,
                                        cand.offset));
            } else {
              Value count = windowCount(
                  b, l, [&](int d) { return pos[d]; }, sizes, kernel, strides,
                  pad, includePad);
              Value asInt =
                  arith::IndexCastOp::create(b, l, b.getI64Type(), count);
              g = arith::DivFOp::create(
                  b, l, g, arith::SIToFPOp::create(b, l, acc, asInt));
            }
            sum = arith::AddFOp::create(
                b, l, sum,
                arith::SelectOp::create(b, l, hit, g,
                                        createFloat(b, l, acc, 0.0)));
          }
          linalg::YieldOp::create(b, l, castFloat(b, l, sum, elt));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }

private:
  /// The window offsets t (window a + t) that hold input row s·a + r, for
  /// kernel k, stride s and leading padding p: those with 0 <= r + p - s·t
  /// < k.
  static SmallVector<int64_t> phaseTaps(int64_t r, int64_t k, int64_t s,
                                        int64_t p) {
    SmallVector<int64_t> taps;
    for (int64_t t = -(k + s); t <= (r + p) / s + 1; ++t)
      if (r + p - s * t >= 0 && r + p - s * t < k)
        taps.push_back(t);
    return taps;
  }

  /// The input gradient by stride phases (see the struct's comment). For
  /// avg pools the output gradient is divided by each window's divisor
  /// first; for max pools each tap compares its window's winner with the
  /// tap's window offset.
  Value phasedGrad(ConversionPatternRewriter &rewriter, GradOp op, Value dy,
                   Value argmax, ArrayRef<OpFoldResult> inDims, Value sizes[2],
                   bool includePad) const {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = op.getType();
    Type elt = type.getElementType(), acc = getAccumulatorType(elt);
    ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                      pad = op.getPadding();
    auto dyType = cast<RankedTensorType>(dy.getType());
    int64_t in[2] = {type.getDimSize(2), type.getDimSize(3)};
    int64_t out[2] = {dyType.getDimSize(2), dyType.getDimSize(3)};
    SmallVector<OpFoldResult> dyDims = getDims(rewriter, loc, dy);
    auto id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
    SmallVector<utils::IteratorType> par(4, utils::IteratorType::parallel);
    // The gradient each window passes on, in the accumulator type: avg
    // pools divide by the window's divisor here, once a window.
    auto gType = RankedTensorType::get(dyType.getShape(), acc);
    Value g = dy;
    if (!isMax || acc != elt)
      g = linalg::GenericOp::create(
              rewriter, loc, gType, dy,
              createEmpty(rewriter, loc, gType, dyDims), {id4, id4}, par,
              [&](OpBuilder &b, Location l, ValueRange args) {
                Value v = castFloat(b, l, args[0], acc);
                if constexpr (!isMax) {
                  Value at[2] = {linalg::IndexOp::create(b, l, 2),
                                 linalg::IndexOp::create(b, l, 3)};
                  Value count = windowCount(
                      b, l, [&](int d) { return at[d]; }, sizes, kernel,
                      strides, pad, includePad);
                  v = arith::DivFOp::create(
                      b, l, v,
                      arith::SIToFPOp::create(
                          b, l, acc,
                          arith::IndexCastOp::create(b, l, b.getI64Type(),
                                                     count)));
                }
                linalg::YieldOp::create(b, l, v);
              })
              .getResult(0);
    // Each phase's taps, and the zero border that keeps every tap's read
    // in range: window a + t outside [0, O) reads a zero.
    SmallVector<SmallVector<int64_t>> taps[2];
    int64_t low[2] = {0, 0}, high[2] = {0, 0};
    for (int d = 0; d < 2; ++d)
      for (int64_t r = 0; r < strides[d]; ++r) {
        taps[d].push_back(phaseTaps(r, kernel[d], strides[d], pad[d]));
        int64_t rows = (in[d] - r + strides[d] - 1) / strides[d];
        for (int64_t t : taps[d].back()) {
          low[d] = std::max(low[d], -t);
          high[d] = std::max(high[d], rows - 1 + t - (out[d] - 1));
        }
      }
    // One zero more in front: every tap's row and column then read at a
    // nonzero offset, so the loops' sizes come from the result (linalg
    // takes a loop's size from the first operand that reads it plainly).
    ++low[0];
    ++low[1];
    Value gPad = pad2D(rewriter, loc, g, {low[0], low[1]}, {high[0], high[1]},
                       createFloat(rewriter, loc, acc, 0));
    Value wPad;
    if constexpr (isMax)
      wPad = pad2D(rewriter, loc, argmax, {low[0], low[1]}, {high[0], high[1]},
                   arith::ConstantIntOp::create(rewriter, loc, -1, 32));
    Value result = createEmpty(rewriter, loc, type, inDims);
    AffineExpr n, c, a, bb;
    bindDims(ctx, n, c, a, bb);
    for (int64_t rh = 0; rh < strides[0]; ++rh) {
      for (int64_t rw = 0; rw < strides[1]; ++rw) {
        int64_t rows = (in[0] - rh + strides[0] - 1) / strides[0];
        int64_t cols = (in[1] - rw + strides[1] - 1) / strides[1];
        if (rows <= 0 || cols <= 0)
          continue;
        SmallVector<Value> inputs;
        SmallVector<AffineMap> maps;
        SmallVector<int32_t> offsets;
        for (int64_t th : taps[0][rh])
          for (int64_t tw : taps[1][rw]) {
            AffineMap m = AffineMap::get(
                4, 0, {n, c, a + th + low[0], bb + tw + low[1]}, ctx);
            inputs.push_back(gPad);
            maps.push_back(m);
            if constexpr (isMax) {
              inputs.push_back(wPad);
              maps.push_back(m);
            }
            offsets.push_back(
                int32_t((rh + pad[0] - strides[0] * th) * kernel[1] +
                        (rw + pad[1] - strides[1] * tw)));
          }
        auto phaseType = RankedTensorType::get(
            {type.getDimSize(0), type.getDimSize(1), rows, cols}, elt);
        SmallVector<OpFoldResult> phaseDims = {inDims[0], inDims[1],
                                               rewriter.getIndexAttr(rows),
                                               rewriter.getIndexAttr(cols)};
        maps.push_back(id4);
        Value phase =
            linalg::GenericOp::create(
                rewriter, loc, phaseType, inputs,
                createEmpty(rewriter, loc, phaseType, phaseDims), maps, par,
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value sum = createFloat(b, l, acc, 0.0);
                  unsigned perTap = isMax ? 2 : 1;
                  for (auto [k, offset] : llvm::enumerate(offsets)) {
                    Value v = args[k * perTap];
                    if constexpr (isMax) {
                      Value hit = arith::CmpIOp::create(
                          b, l, arith::CmpIPredicate::eq, args[k * 2 + 1],
                          arith::ConstantIntOp::create(b, l, offset, 32));
                      v = arith::SelectOp::create(b, l, hit, v,
                                                  createFloat(b, l, acc, 0.0));
                    }
                    sum = arith::AddFOp::create(b, l, sum, v);
                  }
                  linalg::YieldOp::create(b, l, castFloat(b, l, sum, elt));
                })
                .getResult(0);
        result = tensor::InsertSliceOp::create(
            rewriter, loc, phase, result,
            ArrayRef<OpFoldResult>{
                rewriter.getIndexAttr(0), rewriter.getIndexAttr(0),
                rewriter.getIndexAttr(rh), rewriter.getIndexAttr(rw)},
            phaseDims,
            ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1),
                                   rewriter.getIndexAttr(1),
                                   rewriter.getIndexAttr(strides[0]),
                                   rewriter.getIndexAttr(strides[1])});
      }
    }
    return result;
  }
};

struct GlobalAvgPoolLowering : OpConversionPattern<GlobalAvgPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GlobalAvgPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    SmallVector<OpFoldResult> in = getDims(rewriter, loc, x);
    // reduce_mean over the image (in f32 for f16/bf16), kept as N x C x 1 x 1.
    Value mean = buildSumOrMean(rewriter, loc, x, {2, 3}, /*mean=*/true);
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, op.getType(), mean, ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}},
        ArrayRef<OpFoldResult>{in[0], in[1], rewriter.getIndexAttr(1),
                               rewriter.getIndexAttr(1)});
    return success();
  }
};

struct FlattenLowering : OpConversionPattern<FlattenOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FlattenOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto in = cast<RankedTensorType>(op.getInput().getType());
    int64_t axis = *normalizeAxis(op.getAxisAttr().getInt(), in.getRank());
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < axis; ++d)
      groups.push_back({d});
    ReassociationIndices tail;
    for (int64_t d = axis; d < in.getRank(); ++d)
      tail.push_back(d);
    groups.push_back(tail);
    // A static zero in the collapsed dimensions makes the result empty:
    // collapse_shape would fold that size to a static 0 the dynamic result
    // type disagrees with.
    if (llvm::is_contained(in.getShape().drop_front(axis), 0)) {
      SmallVector<OpFoldResult> dims =
          getDims(rewriter, op.getLoc(), adaptor.getInput());
      dims.resize(axis);
      dims.push_back(rewriter.getIndexAttr(0));
      rewriter.replaceOp(
          op, createEmpty(rewriter, op.getLoc(), op.getType(), dims));
      return success();
    }
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        op, op.getType(), adaptor.getInput(), groups);
    return success();
  }
};

} // namespace

void mlir::grove::populateNNPatterns(RewritePatternSet &patterns,
                                     const ConvLowering &conv) {
  patterns.add<Conv2DLowering, Conv2DWeightGradLowering,
               PoolGradLowering<MaxPool2DGradOp>,
               PoolGradLowering<AvgPool2DGradOp>>(patterns.getContext(), conv);
  patterns.add<BatchNormLowering, PoolLowering<MaxPool2DOp>,
               MaxPoolWithIndicesLowering, PoolLowering<AvgPool2DOp>,
               GlobalAvgPoolLowering, FlattenLowering>(patterns.getContext());
}
