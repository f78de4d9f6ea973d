//===- GeneralOps.cpp - Random draws and scatter-add ----------------------===//
//
// General ops that several features use (GroveTensorOps.td's last section)
// and no op family owns: the counter-based random draws become integer
// arithmetic, so every rank draws the same values without communicating,
// and grove.scatter_add a sequential loop.
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
/// splitmix64's finaliser: a bijection of 64-bit words whose outputs pass
/// statistical tests even on consecutive counters.
Value splitmix64(OpBuilder &b, Location loc, Value x) {
  auto constant = [&](uint64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), int64_t(v));
  };
  auto mixStep = [&](Value z, unsigned shift, uint64_t mul) {
    Value s = arith::ShRUIOp::create(b, loc, z, constant(shift));
    Value x = arith::XOrIOp::create(b, loc, z, s);
    return mul ? arith::MulIOp::create(b, loc, x, constant(mul)).getResult()
               : x;
  };
  Value z = arith::AddIOp::create(b, loc, x, constant(0x9e3779b97f4a7c15ull));
  z = mixStep(z, 30, 0xbf58476d1ce4e5b9ull);
  z = mixStep(z, 27, 0x94d049bb133111ebull);
  return mixStep(z, 31, 0);
}

struct RandomBlockLowering : OpConversionPattern<RandomBlockOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RandomBlockOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto constant = [&](int64_t v) {
      return arith::ConstantIntOp::create(rewriter, loc, rewriter.getI64Type(),
                                          v);
    };
    Value counter =
        tensor::ExtractOp::create(rewriter, loc, adaptor.getCounter());
    uint64_t key = uint64_t(op.getSeed()) ^ (uint64_t(op.getStream()) << 32);
    Value h = splitmix64(
        rewriter, loc,
        arith::XOrIOp::create(rewriter, loc, counter, constant(int64_t(key))));
    int64_t extent = op.getExtent(), block = op.getBlock();
    int64_t blocks = (extent + block - 1) / block;
    Value pick = arith::RemUIOp::create(rewriter, loc, h, constant(blocks));
    Value offset = arith::MinUIOp::create(
        rewriter, loc,
        arith::MulIOp::create(rewriter, loc, pick, constant(block)),
        constant(extent - block));
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(op, rewriter.getIndexType(),
                                                    offset);
    return success();
  }
};

/// (o + j s) mod extent, o drawn from the counter as random_block draws.
struct RandomIndicesLowering : OpConversionPattern<RandomIndicesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RandomIndicesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i64 = rewriter.getI64Type();
    auto constant = [&](OpBuilder &b, Location l, int64_t v) {
      return arith::ConstantIntOp::create(b, l, i64, v);
    };
    auto extent = static_cast<int64_t>(op.getExtent());
    uint64_t key = uint64_t(op.getSeed()) ^ (uint64_t(op.getStream()) << 32);
    Value counter =
        tensor::ExtractOp::create(rewriter, loc, adaptor.getCounter());
    Value h = splitmix64(
        rewriter, loc,
        arith::XOrIOp::create(rewriter, loc, counter,
                              constant(rewriter, loc, int64_t(key))));
    Value start = arith::RemUIOp::create(rewriter, loc, h,
                                         constant(rewriter, loc, extent));
    int64_t stride = op.getStride();
    auto type = cast<RankedTensorType>(op.getType());
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                          type.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{}, empty,
        SmallVector<AffineMap>{
            AffineMap::getMultiDimIdentityMap(1, getContext())},
        SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &b, Location l, ValueRange) {
          Value j = arith::IndexCastOp::create(
              b, l, i64, linalg::IndexOp::create(b, l, 0));
          // j < extent < 2^31 and stride < extent: no overflow in i64.
          Value v = arith::RemUIOp::create(
              b, l,
              arith::AddIOp::create(
                  b, l, start,
                  arith::MulIOp::create(b, l, j, constant(b, l, stride))),
              constant(b, l, extent));
          linalg::YieldOp::create(
              b, l,
              arith::TruncIOp::create(b, l, b.getI32Type(), v).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Element i is 2 u - 1, u = splitmix64(key ^ i)'s top 53 bits / 2^53.
struct RandomUniformLowering : OpConversionPattern<RandomUniformOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RandomUniformOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t rank = type.getRank();
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                          type.getElementType());
    uint64_t key = uint64_t(op.getSeed()) ^ (uint64_t(op.getStream()) << 32);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{}, empty,
        SmallVector<AffineMap>{
            AffineMap::getMultiDimIdentityMap(rank, getContext())},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          Type i64 = b.getI64Type();
          Value linear = arith::ConstantIntOp::create(b, l, i64, 0);
          for (int64_t d = 0; d < rank; ++d) {
            Value i = arith::IndexCastOp::create(
                b, l, i64, linalg::IndexOp::create(b, l, d));
            linear = arith::AddIOp::create(
                b, l,
                arith::MulIOp::create(b, l, linear,
                                      arith::ConstantIntOp::create(
                                          b, l, i64, type.getDimSize(d))),
                i);
          }
          Value h =
              splitmix64(b, l,
                         arith::XOrIOp::create(b, l, linear,
                                               arith::ConstantIntOp::create(
                                                   b, l, i64, int64_t(key))));
          Value top = arith::ShRUIOp::create(
              b, l, h, arith::ConstantIntOp::create(b, l, i64, 11));
          Value u = arith::MulFOp::create(
              b, l, arith::UIToFPOp::create(b, l, b.getF64Type(), top),
              arith::ConstantFloatOp::create(b, l, b.getF64Type(),
                                             APFloat(0x1.0p-53)));
          Value v = arith::SubFOp::create(
              b, l,
              arith::MulFOp::create(b, l, u,
                                    arith::ConstantFloatOp::create(
                                        b, l, b.getF64Type(), APFloat(2.0))),
              arith::ConstantFloatOp::create(b, l, b.getF64Type(),
                                             APFloat(1.0)));
          if (!type.getElementType().isF64())
            v = arith::TruncFOp::create(b, l, type.getElementType(), v);
          linalg::YieldOp::create(b, l, v);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// A sequential loop over the (flattened) indices and values: two ranks'
/// messages may name one index, so the additions cannot run in parallel.
struct ScatterAddLowering : OpConversionPattern<ScatterAddOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterAddOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto flatten = [&](Value v) -> Value {
      auto type = cast<RankedTensorType>(v.getType());
      if (type.getRank() == 1)
        return v;
      ReassociationIndices all;
      for (int64_t d = 0; d < type.getRank(); ++d)
        all.push_back(d);
      if (type.getRank() == 0)
        return tensor::ExpandShapeOp::create(
            rewriter, loc, RankedTensorType::get({1}, type.getElementType()), v,
            ArrayRef<ReassociationIndices>{});
      return tensor::CollapseShapeOp::create(
          rewriter, loc, v, ArrayRef<ReassociationIndices>{all});
    };
    Value indices = flatten(adaptor.getIndices());
    Value values = flatten(adaptor.getValues());
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value count = tensor::DimOp::create(rewriter, loc, indices, 0);
    Value size = tensor::DimOp::create(rewriter, loc, adaptor.getBase(), 0);
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, count, one, ValueRange{adaptor.getBase()},
        [&](OpBuilder &b, Location l, Value j, ValueRange acc) {
          Value i = arith::IndexCastOp::create(
              b, l, b.getIndexType(),
              tensor::ExtractOp::create(b, l, indices, j));
          Value inside = arith::AndIOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, i, zero),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, size));
          auto branch = scf::IfOp::create(
              b, l, inside,
              [&](OpBuilder &t, Location tl) {
                Value sum = arith::AddFOp::create(
                    t, tl, tensor::ExtractOp::create(t, tl, acc[0], i),
                    tensor::ExtractOp::create(t, tl, values, j));
                scf::YieldOp::create(
                    t, tl,
                    tensor::InsertOp::create(t, tl, sum, acc[0], i)
                        .getResult());
              },
              [&](OpBuilder &e, Location el) {
                scf::YieldOp::create(e, el, acc[0]);
              });
          scf::YieldOp::create(b, l, branch.getResults());
        });
    rewriter.replaceOp(op, loop.getResults());
    return success();
  }
};

} // namespace

void mlir::grove::populateGeneralOpPatterns(RewritePatternSet &patterns) {
  patterns.add<RandomBlockLowering, RandomIndicesLowering,
               RandomUniformLowering, ScatterAddLowering>(
      patterns.getContext());
}
