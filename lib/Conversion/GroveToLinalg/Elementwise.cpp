//===- Elementwise.cpp - grove elementwise ops to linalg.generic ----------===//
//
// Each elementwise op becomes one linalg.generic with parallel loops over the
// result; broadcasting lives in the operands' indexing maps so that
// linalg-fuse-elementwise-ops can fuse whole chains (bias + relu, ...).
//
//===----------------------------------------------------------------------===//

#include "PopulatePatterns.h"
#include "Utils.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

using namespace mlir;
using namespace mlir::grove;

namespace {

/// Builds the scalar body of an elementwise op.
using BodyBuilder =
    std::function<Value(OpBuilder &, Location, Type, ValueRange)>;

/// Emits `linalg.generic` computing `body` over `operands` broadcast to
/// `resultType`.
static Value buildElementwise(OpBuilder &b, Location loc,
                              RankedTensorType resultType,
                              ValueRange originalOperands, StringRef opName,
                              const BodyBuilder &body) {
  SmallVector<Value> operands(originalOperands);
  SmallVector<OpFoldResult> dims =
      getBroadcastResultDims(b, loc, resultType, operands, opName);
  Value init = createEmpty(b, loc, resultType, dims);
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value operand : operands)
    maps.push_back(getBroadcastMap(
        ctx, cast<RankedTensorType>(operand.getType()).getShape(),
        resultType.getShape()));
  maps.push_back(AffineMap::getMultiDimIdentityMap(resultType.getRank(), ctx));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, operands, init, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value v = body(nb, nloc, resultType.getElementType(), args.drop_back());
        linalg::YieldOp::create(nb, nloc, v);
      });
  return generic.getResult(0);
}

template <typename SourceOp>
struct ElementwiseLowering : OpConversionPattern<SourceOp> {
  ElementwiseLowering(MLIRContext *ctx, BodyBuilder body)
      : OpConversionPattern<SourceOp>(ctx), body(std::move(body)) {}

  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getType());
    Value result = buildElementwise(rewriter, op.getLoc(), resultType,
                                    adaptor.getOperands(),
                                    op->getName().getStringRef(), body);
    rewriter.replaceOp(op, result);
    return success();
  }

  BodyBuilder body;
};

template <typename ArithOp> static BodyBuilder binary() {
  return [](OpBuilder &b, Location loc, Type, ValueRange args) -> Value {
    return ArithOp::create(b, loc, args[0], args[1]);
  };
}

template <typename MathOp> static BodyBuilder unary() {
  return [](OpBuilder &b, Location loc, Type, ValueRange args) -> Value {
    return MathOp::create(b, loc, args[0]);
  };
}

static Value relu(OpBuilder &b, Location loc, Type t, ValueRange args) {
  // maximumf propagates NaN, as torch.relu does.
  return arith::MaximumFOp::create(b, loc, args[0], createFloat(b, loc, t, 0));
}

static Value sigmoid(OpBuilder &b, Location loc, Type t, ValueRange args) {
  Value neg = arith::NegFOp::create(b, loc, args[0]);
  Value e = math::ExpOp::create(b, loc, neg);
  Value one = createFloat(b, loc, t, 1.0);
  Value den = arith::AddFOp::create(b, loc, one, e);
  return arith::DivFOp::create(b, loc, one, den);
}

static Value gelu(OpBuilder &b, Location loc, Type t, ValueRange args) {
  // Exact GELU, as torch.nn.functional.gelu's default: x/2 (1 + erf(x/√2)).
  Value x = args[0];
  Value scaled =
      arith::MulFOp::create(b, loc, x, createFloat(b, loc, t, M_SQRT1_2));
  Value erf = math::ErfOp::create(b, loc, scaled);
  Value onePlus =
      arith::AddFOp::create(b, loc, erf, createFloat(b, loc, t, 1.0));
  Value half = arith::MulFOp::create(b, loc, x, createFloat(b, loc, t, 0.5));
  return arith::MulFOp::create(b, loc, half, onePlus);
}

static Value geluTanh(OpBuilder &b, Location loc, Type t, ValueRange args) {
  // x/2 (1 + tanh(√(2/π) (x + 0.044715 x³))), torch's approximate='tanh'.
  Value x = args[0];
  Value x3 =
      arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
  Value inner = arith::AddFOp::create(
      b, loc, x,
      arith::MulFOp::create(b, loc, x3, createFloat(b, loc, t, 0.044715)));
  Value u = arith::MulFOp::create(
      b, loc, inner, createFloat(b, loc, t, std::sqrt(2.0 / M_PI)));
  Value onePlus = arith::AddFOp::create(b, loc, math::TanhOp::create(b, loc, u),
                                        createFloat(b, loc, t, 1.0));
  Value half = arith::MulFOp::create(b, loc, x, createFloat(b, loc, t, 0.5));
  return arith::MulFOp::create(b, loc, half, onePlus);
}

static Value step(OpBuilder &b, Location loc, Type t, ValueRange args) {
  // 1 where x > 0 (ordered: NaN gives 0).
  Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                         args[0], createFloat(b, loc, t, 0));
  return arith::SelectOp::create(b, loc, positive, createFloat(b, loc, t, 1),
                                 createFloat(b, loc, t, 0));
}

static Value selectByMask(OpBuilder &b, Location loc, Type t, ValueRange args) {
  // mask > 0 (ordered: a NaN mask chooses the false value).
  Value chosen = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                       args[0], createFloat(b, loc, t, 0));
  return arith::SelectOp::create(b, loc, chosen, args[1], args[2]);
}

/// One linalg.generic over the result; the labels are read along all but
/// the class dimension, compared with that dimension's index.
struct OneHotLowering : OpConversionPattern<OneHotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OneHotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    SmallVector<OpFoldResult> dims =
        getDims(rewriter, loc, adaptor.getLabels());
    dims.push_back(rewriter.getIndexAttr(type.getDimSize(rank - 1)));
    Value init = createEmpty(rewriter, loc, type, dims);
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> lead;
    for (int64_t d = 0; d + 1 < rank; ++d)
      lead.push_back(getAffineDimExpr(d, ctx));
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, lead, ctx),
        AffineMap::getMultiDimIdentityMap(rank, ctx)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Type element = type.getElementType();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, adaptor.getLabels(), init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value c = linalg::IndexOp::create(b, l, rank - 1);
          Value label =
              arith::IndexCastOp::create(b, l, b.getIndexType(), args[0]);
          Value hit =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, label, c);
          linalg::YieldOp::create(
              b, l,
              arith::SelectOp::create(b, l, hit, createFloat(b, l, element, 1),
                                      createFloat(b, l, element, 0))
                  .getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void mlir::grove::populateElementwisePatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ElementwiseLowering<AddOp>>(ctx, binary<arith::AddFOp>());
  patterns.add<ElementwiseLowering<SubOp>>(ctx, binary<arith::SubFOp>());
  patterns.add<ElementwiseLowering<MulOp>>(ctx, binary<arith::MulFOp>());
  patterns.add<ElementwiseLowering<DivOp>>(ctx, binary<arith::DivFOp>());
  patterns.add<ElementwiseLowering<MaxOp>>(ctx, binary<arith::MaximumFOp>());
  patterns.add<ElementwiseLowering<MinOp>>(ctx, binary<arith::MinimumFOp>());
  patterns.add<ElementwiseLowering<ConvertOp>>(
      ctx, [](OpBuilder &b, Location loc, Type to, ValueRange args) -> Value {
        Type from = args[0].getType();
        if (from == to)
          return args[0];
        if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
          return arith::ExtFOp::create(b, loc, to, args[0]);
        // f16 <-> bf16 go through f32: neither holds the other.
        if (from.getIntOrFloatBitWidth() == to.getIntOrFloatBitWidth())
          return arith::TruncFOp::create(
              b, loc, to,
              arith::ExtFOp::create(b, loc, b.getF32Type(), args[0]));
        return arith::TruncFOp::create(b, loc, to, args[0]);
      });
  patterns.add<ElementwiseLowering<ReluOp>>(ctx, relu);
  patterns.add<ElementwiseLowering<SigmoidOp>>(ctx, sigmoid);
  patterns.add<ElementwiseLowering<TanhOp>>(ctx, unary<math::TanhOp>());
  patterns.add<ElementwiseLowering<ExpOp>>(ctx, unary<math::ExpOp>());
  patterns.add<ElementwiseLowering<LogOp>>(ctx, unary<math::LogOp>());
  patterns.add<ElementwiseLowering<SqrtOp>>(ctx, unary<math::SqrtOp>());
  patterns.add<ElementwiseLowering<GeluOp>>(ctx, gelu);
  patterns.add<ElementwiseLowering<GeluTanhOp>>(ctx, geluTanh);
  patterns.add<ElementwiseLowering<ErfOp>>(ctx, unary<math::ErfOp>());
  patterns.add<ElementwiseLowering<SinOp>>(ctx, unary<math::SinOp>());
  patterns.add<ElementwiseLowering<CosOp>>(ctx, unary<math::CosOp>());
  patterns.add<ElementwiseLowering<FloorOp>>(ctx, unary<math::FloorOp>());
  patterns.add<ElementwiseLowering<StepOp>>(ctx, step);
  patterns.add<ElementwiseLowering<SelectOp>>(ctx, selectByMask);
  patterns.add<OneHotLowering>(ctx);
}
