//===- ApproximateTanh.cpp - tanh as vectorizable arithmetic (host) -------===//
//
// libm's tanhf is a scalar call LLVM cannot widen (there is no libmvec
// mapping for it), so a loop of tanh stays one call an element. Upstream's
// polynomial approximation is arithmetic the vectorizer handles.
//
//===----------------------------------------------------------------------===//

#include "grove/Codegen/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEAPPROXIMATETANH
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;

namespace {
struct GroveApproximateTanhPass
    : grove::impl::GroveApproximateTanhBase<GroveApproximateTanhPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populatePolynomialApproximateTanhPattern(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
