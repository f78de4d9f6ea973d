//===- GroveToLinalg.cpp - The convert-grove-to-linalg pass ---------------===//

#include "PopulatePatterns.h"

#include "grove/Conversion/Passes.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::grove {
#define GEN_PASS_DEF_CONVERTGROVETOLINALG
#include "grove/Conversion/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

// The lowering checks and slices wherever two dynamic sizes must agree but
// the grove types cannot say they do (the result of `add(%x, %b)` against
// `%x`, say). Once everything is linalg on tensors, value-bounds analysis
// sees through the producers and proves most of them equal: dropping those
// checks and full-size slices is what lets such chains fuse.

/// `grove.agree_dims %a, %b` of sizes that are provably equal is `%a`.
struct FoldProvenAgreement : OpRewritePattern<AgreeDimsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AgreeDimsOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<bool> equal =
        ValueBoundsConstraintSet::areEqual(op.getLhs(), op.getRhs());
    if (failed(equal) || !*equal)
      return rewriter.notifyMatchFailure(op, "sizes not provably equal");
    rewriter.replaceOp(op, op.getLhs());
    return success();
  }
};

/// A slice from 0 with unit strides and the source's own (provably equal)
/// sizes is the source.
struct DropFullSlice : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractSliceOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType source = op.getSourceType();
    if (source.getRank() != op.getType().getRank() ||
        !llvm::all_of(op.getMixedOffsets(), isZeroInteger) ||
        !llvm::all_of(op.getMixedStrides(), isOneInteger))
      return rewriter.notifyMatchFailure(op, "not a slice from the origin");
    for (auto [d, size] : llvm::enumerate(op.getMixedSizes())) {
      FailureOr<bool> equal = ValueBoundsConstraintSet::areEqual(
          size, ValueBoundsConstraintSet::Variable(op.getSource(), d));
      if (failed(equal) || !*equal)
        return rewriter.notifyMatchFailure(op, "not provably full");
    }
    Value full = op.getSource();
    if (full.getType() != op.getType())
      full = tensor::CastOp::create(rewriter, op.getLoc(), op.getType(), full);
    rewriter.replaceOp(op, full);
    return success();
  }
};

struct ConvertGroveToLinalgPass
    : grove::impl::ConvertGroveToLinalgBase<ConvertGroveToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect>();
    target.addIllegalDialect<GroveDialect>();
    // State is the ABI passes' business; run-time checks are lowered by
    // convert-grove-checks-to-runtime.
    target.addLegalOp<ParamOp, GetParamOp, SetParamOp, AgreeDimsOp>();
    // In-place state writes survive to bufferization, which lowers them.
    target.addLegalOp<AssignOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });

    RewritePatternSet patterns(ctx);
    populateElementwisePatterns(patterns);
    populateContractionPatterns(patterns);
    populateReductionPatterns(patterns);
    populateDataMovementPatterns(patterns);
    ConvLowering conv;
    conv.perImage = convPerImage;
    conv.library = convLibrary;
    conv.libraryLowPrecision = convLibraryLowPrecision;
    conv.libraryMaxPositions = convLibraryMaxPositions;
    populateNNPatterns(patterns, conv);
    populateSplitAttentionPatterns(patterns, splitAttentionGemm);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();

    // Sizes first expressed through the ops that produce them (a layer's
    // `tensor.dim` becomes the input's): without this every value-bounds
    // query below walks back through the whole network, which dominated
    // ResNeSt-50's compile time (docs/perf.md, "Design measurements").
    GreedyRewriteConfig dimsConfig;
    dimsConfig.enableFolding(false).enableConstantCSE(false);
    RewritePatternSet dims(ctx);
    memref::populateResolveRankedShapedTypeResultDimsPatterns(dims);
    // The same through the per-image loops of conv-per-image (a result's
    // size is its init's): bufferization's slice analysis asks value bounds
    // about the loop bounds, and took 16 of ResNeSt-50's 17 s without this.
    scf::populateSCFForLoopCanonicalizationPatterns(dims);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(dims), dimsConfig)))
      return signalPassFailure();

    RewritePatternSet cleanup(ctx);
    cleanup.add<FoldProvenAgreement, DropFullSlice>(ctx);
    tensor::CastOp::getCanonicalizationPatterns(cleanup, ctx);
    // Only these rewrites: no folding or constant hoisting, so the lowering
    // stays as written (the canonicalizer runs next in the pipelines).
    GreedyRewriteConfig config;
    config.enableFolding(false)
        .enableConstantCSE(false)
        .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(cleanup), config)))
      signalPassFailure();
  }
};
} // namespace
