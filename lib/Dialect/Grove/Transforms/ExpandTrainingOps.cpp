//===- ExpandTrainingOps.cpp - Losses into primitive grove ops ------------===//
//
// Losses stay whole through grove-autodiff, whose VJPs use their closed
// forms (cheaper and more accurate than differentiating the expansion),
// then become the primitive ops every target already lowers.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEEXPANDTRAININGOPS
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

Value scalarLike(OpBuilder &b, Location loc, Value like, double value) {
  Type element = cast<RankedTensorType>(like.getType()).getElementType();
  auto type = RankedTensorType::get({}, element);
  return ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getFloatAttr(element, value)));
}

/// -mean_n sum_c target[n, c] log_softmax(logits)[n, c].
struct ExpandSoftmaxCrossEntropy : OpRewritePattern<SoftmaxCrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxCrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value logits = op.getLogits();
    RankedTensorType type = op.getLogits().getType();
    Value logp =
        LogSoftmaxOp::create(rewriter, loc, logits, rewriter.getI64IntegerAttr(1));
    Value target = OneHotOp::create(rewriter, loc, type, op.getLabels());
    double eps = op.getLabelSmoothing().convertToDouble();
    if (eps != 0.0) {
      Value kept = MulOp::create(rewriter, loc, target,
                                 scalarLike(rewriter, loc, logits, 1.0 - eps));
      target = AddOp::create(
          rewriter, loc, kept,
          scalarLike(rewriter, loc, logits, eps / double(type.getDimSize(1))));
    }
    Value rows = ReduceSumOp::create(
        rewriter, loc, MulOp::create(rewriter, loc, target, logp),
        ArrayRef<int64_t>{1});
    Value mean = ReduceMeanOp::create(rewriter, loc, rows, ArrayRef<int64_t>{0});
    rewriter.replaceOpWithNewOp<MulOp>(op, mean,
                                       scalarLike(rewriter, loc, logits, -1.0));
    return success();
  }
};

/// mean((prediction - target)^2) over every element.
struct ExpandMSELoss : OpRewritePattern<MSELossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MSELossOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value d = SubOp::create(rewriter, loc, op.getPrediction(), op.getTarget());
    int64_t rank = op.getPrediction().getType().getRank();
    rewriter.replaceOpWithNewOp<ReduceMeanOp>(
        op, MulOp::create(rewriter, loc, d, d),
        llvm::to_vector(llvm::seq<int64_t>(0, rank)));
    return success();
  }
};

struct GroveExpandTrainingOpsPass
    : grove::impl::GroveExpandTrainingOpsBase<GroveExpandTrainingOpsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandSoftmaxCrossEntropy, ExpandMSELoss>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
