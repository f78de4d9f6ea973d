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

/// Reduces `input` over the sorted, normalised `axes`, dropping them.
static Value buildReduce(OpBuilder &b, Location loc, Value input,
                         ArrayRef<int64_t> axes, ReduceKind kind) {
  auto inType = cast<RankedTensorType>(input.getType());
  Type elt = inType.getElementType();
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> dims;
  SmallVector<OpFoldResult> inDims = getDims(b, loc, input);
  for (int64_t d = 0; d < inType.getRank(); ++d) {
    if (llvm::is_contained(axes, d))
      continue;
    shape.push_back(inType.getDimSize(d));
    dims.push_back(inDims[d]);
  }
  auto outType = RankedTensorType::get(shape, elt);
  auto floatType = cast<FloatType>(elt);
  Value identity =
      kind == ReduceKind::Sum
          ? createFloat(b, loc, elt, 0.0)
          : arith::ConstantOp::create(
                b, loc, elt,
                b.getFloatAttr(elt, APFloat::getInf(floatType.getFloatSemantics(),
                                                    /*Negative=*/true)));
  Value init = filled(b, loc, outType, dims, identity);
  auto reduce = linalg::ReduceOp::create(
      b, loc, ValueRange{input}, ValueRange{init}, axes,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value v = kind == ReduceKind::Sum
                      ? arith::AddFOp::create(nb, nloc, args[0], args[1],
                                              getReductionFastMath(
                                                  nb.getContext()))
                            .getResult()
                      : arith::MaximumFOp::create(
                            nb, nloc, args[0], args[1],
                            getReductionFastMath(nb.getContext()))
                            .getResult();
        linalg::YieldOp::create(nb, nloc, v);
      });
  return reduce.getResult(0);
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
    Value result = buildReduce(rewriter, loc, input, axes,
                               isMax ? ReduceKind::Max : ReduceKind::Sum);
    if constexpr (std::is_same_v<SourceOp, ReduceMeanOp>) {
      // Divide by the number of reduced elements, known only at run time
      // for dynamic dimensions.
      SmallVector<OpFoldResult> dims = getDims(rewriter, loc, input);
      Value count = arith::ConstantIndexOp::create(rewriter, loc, 1);
      for (int64_t a : axes)
        count = arith::MulIOp::create(
            rewriter, loc, count,
            getValueOrCreateConstantIndexOp(rewriter, loc, dims[a]));
      Type elt = inType.getElementType();
      Value countInt = arith::IndexCastOp::create(rewriter, loc,
                                                  rewriter.getI64Type(), count);
      Value countF = arith::UIToFPOp::create(rewriter, loc, elt, countInt);
      auto reducedType = cast<RankedTensorType>(result.getType());
      Value init = createEmpty(rewriter, loc, reducedType,
                               getDims(rewriter, loc, result));
      AffineMap id = rewriter.getMultiDimIdentityMap(reducedType.getRank());
      SmallVector<utils::IteratorType> iters(reducedType.getRank(),
                                             utils::IteratorType::parallel);
      result = linalg::GenericOp::create(
                   rewriter, loc, reducedType, result, init,
                   SmallVector<AffineMap>{id, id}, iters,
                   [&](OpBuilder &nb, Location nloc, ValueRange args) {
                     Value q = arith::DivFOp::create(nb, nloc, args[0], countF);
                     linalg::YieldOp::create(nb, nloc, q);
                   })
                   .getResult(0);
    }
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
    SmallVector<utils::IteratorType> iters(rank,
                                           utils::IteratorType::parallel);
    SmallVector<OpFoldResult> dims = getDims(rewriter, loc, x);

    auto elementwise = [&](ValueRange inputs, ArrayRef<AffineMap> inMaps,
                           function_ref<Value(OpBuilder &, Location,
                                              ValueRange)>
                               body) {
      SmallVector<AffineMap> maps(inMaps);
      maps.push_back(id);
      Value init = createEmpty(rewriter, loc, type, dims);
      return linalg::GenericOp::create(
                 rewriter, loc, type, inputs, init, maps, iters,
                 [&](OpBuilder &nb, Location nloc, ValueRange args) {
                   linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
                 })
          .getResult(0);
    };

    Value max = buildReduce(rewriter, loc, x, {axis}, ReduceKind::Max);
    Value e = elementwise({x, max}, {id, reducedMap},
                          [](OpBuilder &b, Location l, ValueRange a) -> Value {
                            Value d = arith::SubFOp::create(b, l, a[0], a[1]);
                            return math::ExpOp::create(b, l, d);
                          });
    Value sum = buildReduce(rewriter, loc, e, {axis}, ReduceKind::Sum);
    Value result;
    if (isLog) {
      result = elementwise(
          {x, max, sum}, {id, reducedMap, reducedMap},
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            Value shifted = arith::SubFOp::create(b, l, a[0], a[1]);
            Value logSum = math::LogOp::create(b, l, a[2]);
            return arith::SubFOp::create(b, l, shifted, logSum);
          });
    } else {
      result = elementwise({e, sum}, {id, reducedMap},
                           [](OpBuilder &b, Location l, ValueRange a) -> Value {
                             return arith::DivFOp::create(b, l, a[0], a[1]);
                           });
    }
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
