//===- LoopHints.cpp - Vectorize, not unroll, innermost host loops --------===//
//
// LLVM's full unroller runs before its loop vectorizer. An innermost loop
// with a small constant trip count (an image row) is unrolled into scalar
// loads and stores that nothing vectorizes afterwards, since memrefs carry no
// aliasing facts. Forbidding the unroll leaves the loop to the vectorizer,
// which adds its own run-time alias checks. scf-to-cf carries the annotation
// to the loop's back edge.
//
//===----------------------------------------------------------------------===//

#include "grove/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEHOSTLOOPHINTS
#include "grove/Conversion/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;

namespace {
bool isInnermost(scf::ForOp loop) {
  bool nested = false;
  loop.getBody()->walk([&](LoopLikeOpInterface) {
    nested = true;
    return WalkResult::interrupt();
  });
  return !nested;
}

struct GroveHostLoopHintsPass
    : grove::impl::GroveHostLoopHintsBase<GroveHostLoopHintsPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    auto unroll = LLVM::LoopUnrollAttr::get(
        ctx, /*disable=*/BoolAttr::get(ctx, true), /*count=*/{},
        /*runtimeDisable=*/{}, /*full=*/{}, /*followupUnrolled=*/{},
        /*followupRemainder=*/{}, /*followupAll=*/{});
    auto annotation = LLVM::LoopAnnotationAttr::get(
        ctx, /*disableNonforced=*/{}, /*vectorize=*/{}, /*interleave=*/{},
        unroll, /*unrollAndJam=*/{}, /*licm=*/{}, /*distribute=*/{},
        /*pipeline=*/{}, /*peeled=*/{}, /*unswitch=*/{}, /*mustProgress=*/{},
        /*isVectorized=*/{}, /*startLoc=*/{}, /*endLoc=*/{},
        /*parallelAccesses=*/{});
    getOperation()->walk([&](scf::ForOp loop) {
      if (!isInnermost(loop))
        return;
      std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
      std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
      std::optional<int64_t> step = getConstantIntValue(loop.getStep());
      if (lb && ub && step && *step > 0 &&
          static_cast<int64_t>(llvm::divideCeil(
              std::max<int64_t>(*ub - *lb, 0), *step)) < minTripCount)
        return;
      loop->setAttr("llvm.loop_annotation", annotation);
    });
  }
};
} // namespace
