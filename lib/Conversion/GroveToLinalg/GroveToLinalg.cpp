//===- GroveToLinalg.cpp - The convert-grove-to-linalg pass ---------------===//

#include "PopulatePatterns.h"

#include "grove/Conversion/Passes.h"
#include "grove/Dialect/Grove/IR/ABIAttrs.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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

/// `grove.agree_dims` of dynamic sizes of two inputs of an entry point (a
/// batch and its labels) becomes a precondition of the call: recorded on the
/// function (kEqualDimsAttr) for the runtime to check before the code runs,
/// so the code can take the sizes as equal. Everything computed from either
/// input then has the same sizes, and chains that mix them (a loss's
/// backward against the forward's activations) fuse without checks and
/// slices; a mismatch is rejected before any state is written.
struct HoistInputAgreement : OpRewritePattern<AgreeDimsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AgreeDimsOp op,
                                PatternRewriter &rewriter) const override {
    // Only in the entry's own block: a check under an scf.if or a loop
    // that may not run is no precondition of the call. Only where every
    // call comes through the runtime, not from another function.
    auto func = dyn_cast<func::FuncOp>(op->getParentOp());
    if (op.getAtLeast() || !func || !func->hasAttr(kEntryIndexAttr) ||
        func->hasAttr(kEntryCalledAttr))
      return rewriter.notifyMatchFailure(op, "not an entry's equality");
    std::optional<std::pair<int64_t, int64_t>> lhs =
        inputDim(func, op.getLhs());
    std::optional<std::pair<int64_t, int64_t>> rhs =
        inputDim(func, op.getRhs());
    if (!lhs || !rhs || lhs->first == rhs->first)
      return rewriter.notifyMatchFailure(op, "not sizes of two inputs");
    auto later = std::max(*lhs, *rhs), earlier = std::min(*lhs, *rhs);
    SmallVector<int64_t> quads;
    if (auto old = func->getAttrOfType<DenseI64ArrayAttr>(kEqualDimsAttr))
      quads.assign(old.asArrayRef().begin(), old.asArrayRef().end());
    int64_t quad[] = {later.first, later.second, earlier.first, earlier.second};
    bool known = false;
    for (size_t i = 0; i + 3 < quads.size(); i += 4)
      known |= ArrayRef<int64_t>(quads).slice(i, 4) == ArrayRef<int64_t>(quad);
    if (!known) {
      quads.append(std::begin(quad), std::end(quad));
      rewriter.modifyOpInPlace(func, [&] {
        func->setAttr(kEqualDimsAttr, rewriter.getDenseI64ArrayAttr(quads));
      });
    }
    // One representative, the earlier input's size, so that values from
    // either input get the same sizes and later agreements fold.
    rewriter.replaceOp(op, *lhs < *rhs ? op.getLhs() : op.getRhs());
    return success();
  }

private:
  /// (input index, dimension) where `size` is a dynamic size of one of the
  /// entry's inputs (the arguments that are not state, numbered as
  /// grove-prepare-abi numbers them).
  static std::optional<std::pair<int64_t, int64_t>> inputDim(func::FuncOp func,
                                                             Value size) {
    auto dim = size.getDefiningOp<tensor::DimOp>();
    auto arg = dim ? dyn_cast<BlockArgument>(dim.getSource()) : nullptr;
    std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
    if (!arg || !index || arg.getOwner() != &func.getBody().front() ||
        func.getArgAttr(arg.getArgNumber(), kStateArgAttr))
      return std::nullopt;
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || *index < 0 || *index >= type.getRank() ||
        !type.isDynamicDim(*index))
      return std::nullopt;
    int64_t input = 0;
    for (unsigned i = 0; i < arg.getArgNumber(); ++i)
      input += func.getArgAttr(i, kStateArgAttr) ? 0 : 1;
    return std::make_pair(input, *index);
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
    // A runtime call, made at bufferization (its buffers are the call's).
    target.addLegalOp<TreeScheduleOp>();
    // Collectives likewise: one service call each on their buffers.
    target.addLegalOp<AllReduceOp, AllGatherOp, BroadcastOp, TopKOp>();
    // A runtime call too (grove_rt_group_by_index).
    target.addLegalOp<GroupByIndexOp>();
    // In-place state writes survive to bufferization, which lowers them.
    target.addLegalOp<AssignOp>();
    // World queries keep their declared effects (they only read the
    // context) until convert-grove-checks-to-runtime makes them calls.
    target.addLegalOp<WorldSizeOp, WorldRankOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });

    RewritePatternSet patterns(ctx);
    populateElementwisePatterns(patterns);
    populateContractionPatterns(patterns);
    populateReductionPatterns(patterns);
    populateDataMovementPatterns(patterns, segmentSumRows);
    populateCollectivePatterns(patterns);
    populateGeneralOpPatterns(patterns);
    populateTransformerPatterns(patterns);
    ConvLowering conv;
    conv.perImage = convPerImage;
    conv.library = convLibrary;
    conv.libraryLowPrecision = convLibraryLowPrecision;
    conv.libraryMaxPositions = convLibraryMaxPositions;
    conv.libraryReadOnlyWeights = convLibraryReadOnlyWeights;
    conv.weightGradLibrary = convWeightGradLibrary;
    conv.poolGradPhases = poolGradPhases;
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
    cleanup.add<HoistInputAgreement>(ctx, /*benefit=*/0);
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
