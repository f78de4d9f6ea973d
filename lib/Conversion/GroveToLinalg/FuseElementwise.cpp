//===- FuseElementwise.cpp - Elementwise fusion that spares contractions --===//
//
// Upstream linalg-fuse-elementwise-ops also fuses an elementwise producer
// into a named contraction (the BN + ReLU before a 1x1 convolution's GEMM,
// an im2col before its GEMM), turning the contraction into a linalg.generic
// that no BLAS or cuBLAS call can take any more. Grove fuses into generics
// only and leaves matmuls, batch matmuls and convolutions named.
//
//===----------------------------------------------------------------------===//

#include "grove/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEFUSEELEMENTWISE
#include "grove/Conversion/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;

namespace {
struct GroveFuseElementwisePass
    : grove::impl::GroveFuseElementwiseBase<GroveFuseElementwisePass> {
  void runOnOperation() override {
    // Upstream's policy (a producer used once, so nothing is recomputed)
    // and its companion patterns, with generic consumers only.
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse() &&
             isa<linalg::GenericOp>(fused->getOwner());
    };
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    linalg::populateConstantFoldLinalgOperations(patterns, control);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
