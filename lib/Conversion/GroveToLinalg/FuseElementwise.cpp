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
    // Upstream's patterns with a policy under which nothing is recomputed:
    // the producer has one use, and for elementwise fusion the consumer (a
    // generic) also reads each of its elements once. A consumer that
    // broadcasts the operand (its map skips some of its loops: a per-channel
    // BN before a small FC written as a reduction generic) would redo the
    // producer's body at every point of the skipped loops.
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse() &&
             isa<linalg::GenericOp>(fused->getOwner());
    };
    linalg::ControlFusionFn elementwise = [control](OpOperand *fused) {
      return control(fused) && cast<linalg::GenericOp>(fused->getOwner())
                                   .getMatchingIndexingMap(fused)
                                   .isPermutation();
    };
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, elementwise);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    linalg::populateConstantFoldLinalgOperations(patterns, control);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
