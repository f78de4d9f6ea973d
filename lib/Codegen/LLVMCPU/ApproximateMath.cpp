//===- ApproximateMath.cpp - tanh, erf as vectorizable arithmetic (host) --===//
//
// libm's tanhf and erff are scalar calls LLVM cannot widen (there is no
// libmvec mapping for them), so a loop of either stays one call an element.
// Upstream's polynomial approximations are arithmetic the vectorizer
// handles.
//
//===----------------------------------------------------------------------===//

#include "grove/Codegen/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEAPPROXIMATEMATH
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;

namespace {
struct GroveApproximateMathPass
    : grove::impl::GroveApproximateMathBase<GroveApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populatePolynomialApproximateTanhPattern(patterns);
    populatePolynomialApproximateErfPattern(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
