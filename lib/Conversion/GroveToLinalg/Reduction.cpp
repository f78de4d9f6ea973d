//===- Reduction.cpp - grove reductions and softmax to linalg -------------===//
//
// Reductions become linalg.reduce; softmax and log_softmax the numerically
// stable max / exp-sum / normalise sequence, each step a linalg op so that
// later tiling can fuse them per row.
//
//===----------------------------------------------------------------------===//

#include "PopulatePatterns.h"
#include "Utils.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::grove;

namespace {

enum class ReduceKind { Sum, Max };

/// Reduces `input` over the sorted, normalised `axes`, dropping them. Sums
/// come back in the accumulator type (f32 for f16/bf16, see
/// getAccumulatorType) for the caller to round once; maxima are exact in any
/// precision and keep the element type.
static Value buildReduce(OpBuilder &b, Location loc, Value input,
                         ArrayRef<int64_t> axes, ReduceKind kind) {
  auto inType = cast<RankedTensorType>(input.getType());
  Type elt = inType.getElementType();
  Type acc = kind == ReduceKind::Sum ? getAccumulatorType(elt) : elt;
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> dims;
  SmallVector<OpFoldResult> inDims = getDims(b, loc, input);
  for (int64_t d = 0; d < inType.getRank(); ++d) {
    if (llvm::is_contained(axes, d))
      continue;
    shape.push_back(inType.getDimSize(d));
    dims.push_back(inDims[d]);
  }
  auto outType = RankedTensorType::get(shape, acc);
  auto floatType = cast<FloatType>(acc);
  Value identity =
      kind == ReduceKind::Sum
          ? createFloat(b, loc, acc, 0.0)
          : arith::ConstantOp::create(
                b, loc, acc,
                b.getFloatAttr(acc,
                               APFloat::getInf(floatType.getFloatSemantics(),
                                               /*Negative=*/true)));
  Value init = filled(b, loc, outType, dims, identity);
  auto reduce = linalg::ReduceOp::create(
      b, loc, ValueRange{input}, ValueRange{init}, axes,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value in = castFloat(nb, nloc, args[0], acc);
        auto fm = getReductionFastMath(nb.getContext());
        Value v =
            kind == ReduceKind::Sum
                ? arith::AddFOp::create(nb, nloc, in, args[1], fm).getResult()
                : arith::MaximumFOp::create(nb, nloc, in, args[1], fm)
                      .getResult();
        linalg::YieldOp::create(nb, nloc, v);
      });
  return reduce.getResult(0);
}

/// An elementwise linalg.generic over `inputs` (indexed by `maps`) into a
/// new tensor of `type` with `dims`, computing `body` per element.
static Value
buildElementwise(OpBuilder &b, Location loc, RankedTensorType type,
                 ArrayRef<OpFoldResult> dims, ValueRange inputs,
                 ArrayRef<AffineMap> maps,
                 function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  Value init = createEmpty(b, loc, type, dims);
  return linalg::GenericOp::create(
             b, loc, type, inputs, init, allMaps, iters,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
             })
      .getResult(0);
}

/// Normalised and sorted axes of a verified reduce op.
static SmallVector<int64_t> normalizedAxes(ArrayRef<int64_t> axes,
                                           int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t a : axes)
    result.push_back(*normalizeAxis(a, rank));
  llvm::sort(result);
  return result;
}

/// Re-inserts the reduced dimensions as size 1 (keepdims).
static Value expandKeptDims(OpBuilder &b, Location loc, Value reduced,
                            RankedTensorType resultType,
                            ArrayRef<int64_t> axes) {
  // Each unit dimension joins the group of the next kept dimension, or the
  // last group when it trails.
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t d = 0; d < resultType.getRank(); ++d) {
    pending.push_back(d);
    if (!llvm::is_contained(axes, d)) {
      groups.push_back(pending);
      pending.clear();
    }
  }
  if (!pending.empty() && !groups.empty())
    groups.back().append(pending.begin(), pending.end());
  SmallVector<OpFoldResult> outShape;
  SmallVector<OpFoldResult> inDims = getDims(b, loc, reduced);
  unsigned next = 0;
  for (int64_t d = 0; d < resultType.getRank(); ++d)
    outShape.push_back(llvm::is_contained(axes, d) ? b.getIndexAttr(1)
                                                   : inDims[next++]);
  return tensor::ExpandShapeOp::create(b, loc, resultType, reduced, groups,
                                       outShape);
}

template <typename SourceOp>
struct ReduceLowering : OpConversionPattern<SourceOp> {
  using OpConversionPattern<SourceOp>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    SmallVector<int64_t> axes = normalizedAxes(op.getAxes(), inType.getRank());
    constexpr bool isMax = std::is_same_v<SourceOp, ReduceMaxOp>;
    Value result =
        isMax ? buildReduce(rewriter, loc, input, axes, ReduceKind::Max)
              : buildSumOrMean(rewriter, loc, input, axes,
                               std::is_same_v<SourceOp, ReduceMeanOp>);
    if (op.getKeepdims())
      result = expandKeptDims(rewriter, loc, result, op.getType(), axes);
    rewriter.replaceOp(op, result);
    return success();
  }
};

template <typename SourceOp>
struct SoftmaxLowering : OpConversionPattern<SourceOp> {
  using OpConversionPattern<SourceOp>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    constexpr bool isLog = std::is_same_v<SourceOp, LogSoftmaxOp>;
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank();
    int64_t axis = *normalizeAxis(op.getAxisAttr().getInt(), rank);
    MLIRContext *ctx = rewriter.getContext();
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap reducedMap = id.dropResult(axis);
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    SmallVector<OpFoldResult> dims = getDims(rewriter, loc, x);

    // exp(x - max) is recomputed in the last step rather than stored: a
    // pass that reads x costs less than a buffer written and read back. The
    // exponentials and their sum are in the accumulator type (f32 for
    // f16/bf16), rounded once in the result.
    Type elt = type.getElementType();
    Type acc = getAccumulatorType(elt);
    auto shifted = [&](OpBuilder &b, Location l, Value x, Value max) {
      Value wideX = castFloat(b, l, x, acc);
      Value wideMax = castFloat(b, l, max, acc);
      return arith::SubFOp::create(b, l, wideX, wideMax).getResult();
    };
    Value max = buildReduce(rewriter, loc, x, {axis}, ReduceKind::Max);
    SmallVector<int64_t> reducedShape(type.getShape());
    reducedShape.erase(reducedShape.begin() + axis);
    SmallVector<OpFoldResult> reducedDims(dims);
    reducedDims.erase(reducedDims.begin() + axis);
    auto sumType = RankedTensorType::get(reducedShape, acc);
    Value zero = createFloat(rewriter, loc, acc, 0.0);
    SmallVector<utils::IteratorType> sumIters(iters);
    sumIters[axis] = utils::IteratorType::reduction;
    Value sum =
        linalg::GenericOp::create(
            rewriter, loc, sumType, ValueRange{x, max},
            filled(rewriter, loc, sumType, reducedDims, zero),
            ArrayRef<AffineMap>{id, reducedMap, reducedMap}, sumIters,
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value e = math::ExpOp::create(b, l, shifted(b, l, a[0], a[1]));
              linalg::YieldOp::create(
                  b, l,
                  arith::AddFOp::create(b, l, e, a[2],
                                        getReductionFastMath(b.getContext()))
                      .getResult());
            })
            .getResult(0);
    Value result = buildElementwise(
        rewriter, loc, type, dims, {x, max, sum}, {id, reducedMap, reducedMap},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value d = shifted(b, l, a[0], a[1]);
          Value v = isLog ? arith::SubFOp::create(
                                b, l, d, math::LogOp::create(b, l, a[2]))
                                .getResult()
                          : arith::DivFOp::create(
                                b, l, math::ExpOp::create(b, l, d), a[2])
                                .getResult();
          return castFloat(b, l, v, elt);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::grove::populateReductionPatterns(RewritePatternSet &patterns) {
  patterns.add<ReduceLowering<ReduceSumOp>, ReduceLowering<ReduceMeanOp>,
               ReduceLowering<ReduceMaxOp>, SoftmaxLowering<SoftmaxOp>,
               SoftmaxLowering<LogSoftmaxOp>>(patterns.getContext());
}

Value mlir::grove::buildSumOrMean(OpBuilder &b, Location loc, Value input,
                                  ArrayRef<int64_t> axes, bool mean) {
  Value result = buildReduce(b, loc, input, axes, ReduceKind::Sum);
  Type elt = cast<RankedTensorType>(input.getType()).getElementType();
  auto reducedType = cast<RankedTensorType>(result.getType());
  if (!mean && reducedType.getElementType() == elt)
    return result;
  // One elementwise step finishes the sum: the mean's division (by a count
  // known only at run time for dynamic dimensions) and the single rounding
  // back to the element type.
  Type acc = reducedType.getElementType();
  Value countF;
  if (mean) {
    SmallVector<OpFoldResult> dims = getDims(b, loc, input);
    Value count = arith::ConstantIndexOp::create(b, loc, 1);
    for (int64_t a : axes)
      count = arith::MulIOp::create(
          b, loc, count, getValueOrCreateConstantIndexOp(b, loc, dims[a]));
    Value countInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
    countF = arith::UIToFPOp::create(b, loc, acc, countInt);
  }
  AffineMap id = b.getMultiDimIdentityMap(reducedType.getRank());
  return buildElementwise(b, loc, reducedType.clone(elt),
                          getDims(b, loc, result), result, id,
                          [&](OpBuilder &nb, Location nloc, ValueRange args) {
                            Value v = args[0];
                            if (countF)
                              v = arith::DivFOp::create(nb, nloc, v, countF);
                            return castFloat(nb, nloc, v, elt);
                          });
}
