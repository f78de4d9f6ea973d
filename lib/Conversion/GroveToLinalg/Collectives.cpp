//===- Collectives.cpp - The world's size and rank, and block draws -------===//
//
// grove.world_size and grove.world_rank become calls of the runtime (the
// call's communicator answers); grove.random_block becomes integer
// arithmetic, so every rank draws the same block without communicating. The
// collectives themselves stay until bufferization, which turns each into one
// service call on its buffers.
//
//===----------------------------------------------------------------------===//

#include "PopulatePatterns.h"

#include "grove/Conversion/RuntimeCalls.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::grove;

namespace {

template <typename OpTy> struct WorldQueryLowering : OpConversionPattern<OpTy> {
  WorldQueryLowering(MLIRContext *ctx, StringRef service)
      : OpConversionPattern<OpTy>(ctx), service(service) {}
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<func::FuncOp> fn = getOrDeclareRuntimeFunction(
        op->template getParentOfType<ModuleOp>(), service,
        FunctionType::get(op->getContext(), {}, {rewriter.getI64Type()}));
    if (failed(fn))
      return failure();
    Value v = func::CallOp::create(rewriter, op.getLoc(), *fn, ValueRange{})
                  .getResult(0);
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(op, rewriter.getIndexType(),
                                                    v);
    return success();
  }
  StringRef service;
};

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

} // namespace

void mlir::grove::populateCollectivePatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<WorldQueryLowering<WorldSizeOp>>(ctx, kWorldSizeService);
  patterns.add<WorldQueryLowering<WorldRankOp>>(ctx, kWorldRankService);
  patterns.add<RandomBlockLowering>(ctx);
}
