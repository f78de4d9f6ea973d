//===- SplitAttention.h - Lowering grove.split_attention ------*- C++ -*-===//
//
// The builder both split-attention lowerings share: the forward
// (SplitAttention.cpp) and its fused backward (SplitAttentionGrad.cpp),
// which recomputes the forward's B x C-sized steps with the same code.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_CONVERSION_GROVETOLINALG_SPLITATTENTION_H
#define GROVE_CONVERSION_GROVETOLINALG_SPLITATTENTION_H

#include "Utils.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::grove {

/// The forward's operands (converted), as both ops name them.
struct SplitAttentionOperands {
  Value input, fc1Weight, fc1Bias, bnScale, bnBias, bnMean, bnVariance,
      fc2Weight, fc2Bias;
};

/// Builds the lowering of one grove.split_attention, step by step (the
/// table at the top of SplitAttention.cpp): the sizes and the views every
/// step shares are members.
class SplitAttentionBuilder {
public:
  using IteratorType = utils::IteratorType;
  static constexpr IteratorType par = IteratorType::parallel;
  static constexpr IteratorType red = IteratorType::reduction;

  /// From a grove.split_attention or grove.split_attention_grad, which
  /// share the forward's operands, names and attributes.
  template <typename OpT>
  SplitAttentionBuilder(OpT op, typename OpT::Adaptor adaptor,
                        ConversionPatternRewriter &rewriter, bool fcGemms)
      : op(op), rewriter(rewriter), loc(op.getLoc()),
        ctx(rewriter.getContext()), fcGemms(fcGemms) {
    in = {
        adaptor.getInput(),      adaptor.getFc1Weight(), adaptor.getFc1Bias(),
        adaptor.getBnScale(),    adaptor.getBnBias(),    adaptor.getBnMean(),
        adaptor.getBnVariance(), adaptor.getFc2Weight(), adaptor.getFc2Bias()};
    epsilon = op.getEpsilon().convertToDouble();
    Value u = in.input;
    auto inType = cast<RankedTensorType>(u.getType());
    elt = inType.getElementType();
    acc = getAccumulatorType(elt);
    r = op.getRadixAttr().getInt();
    k = op.getCardinalityAttr().getInt();
    c = op.getChannels();
    inter = op.getInterChannels();
    cg = c / k;
    ig = inter / k;
    b = inType.getDimSize(0);
    h = inType.getDimSize(2);
    w = inType.getDimSize(3);
    hw = ShapedType::isDynamic(h) || ShapedType::isDynamic(w)
             ? ShapedType::kDynamic
             : h * w;
    uDims = getDims(rewriter, loc, u);
    batch = uDims[0];
  }

  /// U as B x R x K x Cg x (H·W): the radix splits and the cardinal groups
  /// are dimensions, and the innermost loops below run along the image.
  Value viewU();
  /// Pass 1, loops (b, k, c, r, p): the sum over the splits and the image.
  Value pool(Value u5);
  /// fc1, loops (k, o, b, c): the batch inside the weights' rows, so each
  /// row of W1 is reused across the batch from cache.
  Value fc1(Value pooled);
  /// The mean (the sums are over H·W and the radix splits; only the image
  /// is averaged), fc1's bias, BN with running statistics, ReLU.
  Value bnRelu(Value z);
  /// fc2, loops (k, r, c, b, o); W2's rows are cardinal-major (K, R, Cg).
  Value fc2(Value hidden);
  /// rSoftMax over the R logits of each (b, k, c), read through constant
  /// radix indices; one result per split.
  linalg::GenericOp rSoftmax(Value logits);
  /// Pass 2, loops (b, k, c, p): every output element written once.
  Value apply(Value u5, linalg::GenericOp softmax);
  /// B x K x Cg x (H·W) -> B x C x H x W, views only, replacing the op.
  void replace(Value out);

protected:
  OpFoldResult idx(int64_t v) { return rewriter.getIndexAttr(v); }
  AffineExpr d(unsigned i) { return getAffineDimExpr(i, ctx); }
  AffineExpr cst(int64_t v) { return getAffineConstantExpr(v, ctx); }
  AffineMap map(unsigned numDims, ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(numDims, 0, exprs, ctx);
  }
  Value fastAdd(OpBuilder &nb, Location l, Value x, Value y) {
    return arith::AddFOp::create(nb, l, x, y, getReductionFastMath(ctx));
  }
  Value toAcc(OpBuilder &nb, Location l, Value v) {
    return castFloat(nb, l, v, acc);
  }
  /// Weights and per-channel vectors regrouped by cardinal group (static).
  Value regroup(Value v, ArrayRef<int64_t> shape) {
    Type t = cast<RankedTensorType>(v.getType()).getElementType();
    return ReshapeOp::create(rewriter, loc, RankedTensorType::get(shape, t), v);
  }
  /// Sizes of a B x ... tensor: the batch, then static sizes.
  SmallVector<OpFoldResult> batchDims(ArrayRef<int64_t> shape) {
    SmallVector<OpFoldResult> dims = {batch};
    for (int64_t s : shape.drop_front())
      dims.push_back(idx(s));
    return dims;
  }
  Value zeros(ArrayRef<int64_t> shape) {
    return filled(rewriter, loc, RankedTensorType::get(shape, acc),
                  batchDims(shape), createFloat(rewriter, loc, acc, 0.0));
  }
  /// A zero-filled accumulator of static `shape` (no batch dimension).
  Value staticZeros(ArrayRef<int64_t> shape) {
    SmallVector<OpFoldResult> sizes;
    for (int64_t s : shape)
      sizes.push_back(idx(s));
    return filled(rewriter, loc, RankedTensorType::get(shape, acc), sizes,
                  createFloat(rewriter, loc, acc, 0.0));
  }
  /// 1 / (H·W), from run-time sizes, built once.
  Value inverseImageSize();
  Value empty(ArrayRef<int64_t> shape) {
    return createEmpty(rewriter, loc, RankedTensorType::get(shape, acc),
                       batchDims(shape));
  }
  linalg::GenericOp
  generic(TypeRange results, ValueRange ins, ValueRange outs,
          ArrayRef<AffineMap> maps, ArrayRef<IteratorType> iterators,
          function_ref<void(OpBuilder &, Location, ValueRange)> body) {
    return linalg::GenericOp::create(rewriter, loc, results, ins, outs, maps,
                                     iterators, body);
  }
  Value fc(int64_t weightElements, function_ref<Value()> gemm,
           function_ref<Value()> loops);
  Value fcGemm(Value x, Value weight, int64_t rows, int64_t cols,
               ArrayRef<int64_t> resultShape);
  /// sum_o a[o] * w[o] over the product's terms, accumulated (the FCs' body).
  void multiplyAdd(OpBuilder &nb, Location l, ValueRange a) {
    Value p = arith::MulFOp::create(nb, l, a[0], toAcc(nb, l, a[1]));
    linalg::YieldOp::create(nb, l, fastAdd(nb, l, p, a[2]));
  }

  Operation *op;
  SplitAttentionOperands in;
  double epsilon;
  ConversionPatternRewriter &rewriter;
  Location loc;
  MLIRContext *ctx;
  bool fcGemms;
  Type elt, acc;
  int64_t r, k, c, inter, cg, ig, b, h, w, hw;
  SmallVector<OpFoldResult> uDims;
  OpFoldResult batch;
  Value several; // batch > 1, for both FCs
  Value invHw;
};

/// The softmax over the radix of the R values `x` (a sigmoid for R = 1;
/// one exp for R = 2), as rSoftMax computes it in a generic's body.
SmallVector<Value> radixSoftmax(OpBuilder &nb, Location l, Type acc,
                                ArrayRef<Value> x);

} // namespace mlir::grove

#endif // GROVE_CONVERSION_GROVETOLINALG_SPLITATTENTION_H
