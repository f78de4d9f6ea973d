//===- Collectives.cpp - The compressors' tensor math ---------------------===//
//
// Packing of signs and int8 codes and their means. The collectives
// themselves stay until
// bufferization, which turns each into one service call on its buffers; the
// world's size and rank stay until convert-grove-checks-to-runtime, which
// makes them runtime calls (the call's communicator answers).
//
//===----------------------------------------------------------------------===//

#include "PopulatePatterns.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::grove;

namespace {
/// A zero-filled tensor of `type` (static).
Value zeros(OpBuilder &b, Location loc, RankedTensorType type) {
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

/// Words of 32 sign bits: the input padded with zeros to 32 W elements,
/// viewed as W x 32 and or-reduced along the 32.
struct PackSignsLowering : OpConversionPattern<PackSignsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PackSignsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto input = cast<RankedTensorType>(op.getInput().getType());
    Type element = input.getElementType();
    int64_t words = cast<RankedTensorType>(op.getType()).getDimSize(0);
    Value padded = adaptor.getInput();
    if (words * 32 != input.getDimSize(0))
      padded = tensor::createPadHighOp(
          RankedTensorType::get({words * 32}, element), padded,
          arith::ConstantOp::create(rewriter, loc,
                                    rewriter.getZeroAttr(element)),
          /*nofold=*/false, loc, rewriter);
    Value grid = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get({words, 32}, element), padded,
        ArrayRef<ReassociationIndices>{{0, 1}});
    MLIRContext *ctx = getContext();
    AffineExpr w = getAffineDimExpr(0, ctx), bit = getAffineDimExpr(1, ctx);
    SmallVector<AffineMap> maps = {AffineMap::get(2, 0, {w, bit}, ctx),
                                   AffineMap::get(2, 0, {w}, ctx)};
    auto generic = linalg::GenericOp::create(
        rewriter, loc, op.getType(), grid,
        zeros(rewriter, loc, cast<RankedTensorType>(op.getType())), maps,
        {utils::IteratorType::parallel, utils::IteratorType::reduction},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Type i32 = b.getI32Type();
          Value zero = arith::ConstantOp::create(b, l, b.getZeroAttr(element));
          Value negative = arith::CmpFOp::create(
              b, l, arith::CmpFPredicate::OLT, args[0], zero);
          Value shift = arith::IndexCastOp::create(
              b, l, i32, linalg::IndexOp::create(b, l, 1));
          Value one = arith::ConstantIntOp::create(b, l, i32, 1);
          Value mask = arith::ShLIOp::create(b, l, one, shift);
          Value bitValue = arith::SelectOp::create(
              b, l, negative, mask, arith::ConstantIntOp::create(b, l, i32, 0));
          linalg::YieldOp::create(
              b, l, arith::OrIOp::create(b, l, args[1], bitValue).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Builds one decoded term from a packed word, the code's index in it and
/// its rank's scale.
using DecodeTerm = function_ref<Value(OpBuilder &, Location, Value word,
                                      Value slot, Value scale, Type element)>;

/// The mean over ranks of packed codes (mean_of_signs, mean_of_int8): the
/// terms summed over a (word, code, rank) space, the rank a reduction, each
/// divided by the rank count, then flattened and cut to the result.
Value lowerMeanOfPacked(ConversionPatternRewriter &rewriter, Location loc,
                        RankedTensorType resultType, Value words, Value scales,
                        int64_t perWord, DecodeTerm decode) {
  Type element = resultType.getElementType();
  int64_t size = resultType.getDimSize(0);
  int64_t numWords = (size + perWord - 1) / perWord;
  Value ranks = arith::UIToFPOp::create(
      rewriter, loc, element,
      arith::IndexCastUIOp::create(
          rewriter, loc, rewriter.getI64Type(),
          tensor::DimOp::create(rewriter, loc, words, 0)));
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr w = getAffineDimExpr(0, ctx), code = getAffineDimExpr(1, ctx),
             r = getAffineDimExpr(2, ctx);
  SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {r, w}, ctx),
                                 AffineMap::get(3, 0, {r}, ctx),
                                 AffineMap::get(3, 0, {w, code}, ctx)};
  auto gridType = RankedTensorType::get({numWords, perWord}, element);
  auto sum = linalg::GenericOp::create(
      rewriter, loc, gridType, ValueRange{words, scales},
      zeros(rewriter, loc, gridType), maps,
      {utils::IteratorType::parallel, utils::IteratorType::parallel,
       utils::IteratorType::reduction},
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value slot = arith::IndexCastOp::create(
            b, l, b.getI32Type(), linalg::IndexOp::create(b, l, 1));
        Value term = decode(b, l, args[0], slot, args[1], element);
        linalg::YieldOp::create(
            b, l,
            arith::AddFOp::create(b, l, args[2],
                                  arith::DivFOp::create(b, l, term, ranks))
                .getResult());
      });
  Value flat = tensor::CollapseShapeOp::create(
      rewriter, loc, sum.getResult(0), ArrayRef<ReassociationIndices>{{0, 1}});
  if (numWords * perWord != size)
    flat = tensor::ExtractSliceOp::create(
        rewriter, loc, resultType, flat,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(size)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
  return flat;
}

/// Bit `slot` of the word set means the rank's scale negated.
struct MeanOfSignsLowering : OpConversionPattern<MeanOfSignsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MeanOfSignsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto decode = [](OpBuilder &b, Location l, Value word, Value slot,
                     Value scale, Type) -> Value {
      Type i32 = b.getI32Type();
      Value bit =
          arith::AndIOp::create(b, l, arith::ShRUIOp::create(b, l, word, slot),
                                arith::ConstantIntOp::create(b, l, i32, 1));
      Value negative =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, bit,
                                arith::ConstantIntOp::create(b, l, i32, 0));
      return arith::SelectOp::create(b, l, negative,
                                     arith::NegFOp::create(b, l, scale), scale);
    };
    rewriter.replaceOp(
        op, lowerMeanOfPacked(rewriter, op.getLoc(),
                              cast<RankedTensorType>(op.getType()),
                              adaptor.getWords(), adaptor.getScales(),
                              /*perWord=*/32, decode));
    return success();
  }
};

/// Words of 4 codes: the input padded with zeros to 4 W elements, viewed as
/// W x 4 and or-reduced along the 4, each code shifted to its byte.
struct PackInt8Lowering : OpConversionPattern<PackInt8Op> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PackInt8Op op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto input = cast<RankedTensorType>(op.getInput().getType());
    Type element = input.getElementType();
    int64_t words = cast<RankedTensorType>(op.getType()).getDimSize(0);
    Value padded = adaptor.getInput();
    if (words * 4 != input.getDimSize(0))
      padded = tensor::createPadHighOp(
          RankedTensorType::get({words * 4}, element), padded,
          arith::ConstantOp::create(rewriter, loc,
                                    rewriter.getZeroAttr(element)),
          /*nofold=*/false, loc, rewriter);
    Value grid = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get({words, 4}, element), padded,
        ArrayRef<ReassociationIndices>{{0, 1}});
    MLIRContext *ctx = getContext();
    AffineExpr w = getAffineDimExpr(0, ctx), byte = getAffineDimExpr(1, ctx);
    SmallVector<AffineMap> maps = {AffineMap::get(2, 0, {w, byte}, ctx),
                                   AffineMap::get(2, 0, {}, ctx),
                                   AffineMap::get(2, 0, {w}, ctx)};
    Value scale = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get({}, element), adaptor.getScale(),
        ArrayRef<ReassociationIndices>{});
    auto generic = linalg::GenericOp::create(
        rewriter, loc, op.getType(), ValueRange{grid, scale},
        zeros(rewriter, loc, cast<RankedTensorType>(op.getType())), maps,
        {utils::IteratorType::parallel, utils::IteratorType::reduction},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Type i32 = b.getI32Type();
          auto constant = [&](double v) {
            return arith::ConstantOp::create(b, l, b.getFloatAttr(element, v));
          };
          // floor(x / s + 1/2) within +-127; 0 for a NaN quotient (a zero
          // scale over a zero element, or NaN input), tested before the
          // clamps, which would take the other operand.
          Value q = math::FloorOp::create(
              b, l,
              arith::AddFOp::create(
                  b, l, arith::DivFOp::create(b, l, args[0], args[1]),
                  constant(0.5)));
          Value nan =
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, q, q);
          q = arith::MinNumFOp::create(
              b, l, arith::MaxNumFOp::create(b, l, q, constant(-127)),
              constant(127));
          q = arith::SelectOp::create(b, l, nan, constant(0), q);
          Value code = arith::AndIOp::create(
              b, l, arith::FPToSIOp::create(b, l, i32, q),
              arith::ConstantIntOp::create(b, l, i32, 0xff));
          Value shift = arith::MulIOp::create(
              b, l,
              arith::IndexCastOp::create(b, l, i32,
                                         linalg::IndexOp::create(b, l, 1)),
              arith::ConstantIntOp::create(b, l, i32, 8));
          linalg::YieldOp::create(
              b, l,
              arith::OrIOp::create(b, l, args[2],
                                   arith::ShLIOp::create(b, l, code, shift))
                  .getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Byte `slot` of the word, a signed code, times the rank's scale.
struct MeanOfInt8Lowering : OpConversionPattern<MeanOfInt8Op> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MeanOfInt8Op op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto decode = [](OpBuilder &b, Location l, Value word, Value slot,
                     Value scale, Type element) -> Value {
      Type i32 = b.getI32Type();
      // The byte to the top, then an arithmetic shift back: signed.
      Value up = arith::SubIOp::create(
          b, l, arith::ConstantIntOp::create(b, l, i32, 24),
          arith::MulIOp::create(b, l, slot,
                                arith::ConstantIntOp::create(b, l, i32, 8)));
      Value code =
          arith::ShRSIOp::create(b, l, arith::ShLIOp::create(b, l, word, up),
                                 arith::ConstantIntOp::create(b, l, i32, 24));
      return arith::MulFOp::create(
          b, l, arith::SIToFPOp::create(b, l, element, code), scale);
    };
    rewriter.replaceOp(
        op, lowerMeanOfPacked(rewriter, op.getLoc(),
                              cast<RankedTensorType>(op.getType()),
                              adaptor.getWords(), adaptor.getScales(),
                              /*perWord=*/4, decode));
    return success();
  }
};

} // namespace

void mlir::grove::populateCollectivePatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<PackSignsLowering, MeanOfSignsLowering, PackInt8Lowering,
               MeanOfInt8Lowering>(ctx);
}
