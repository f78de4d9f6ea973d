//===- SplitFullReductions.cpp - Full reductions as parallel partials -----===//
//
// A reduction to a scalar has only reduction loops, which no thread team
// can share: LAMB's norms over a large parameter, a global gradient norm
// or a loss's sum would run on one thread while the others wait. Upstream's
// split reduction gives such an op a parallel loop of partial sums and a
// short final reduction; this pass picks where it is worth it.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "grove/Dialect/Linalg/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVESPLITFULLREDUCTIONS
#include "grove/Dialect/Linalg/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;

namespace {

struct GroveSplitFullReductionsPass
    : grove::impl::GroveSplitFullReductionsBase<GroveSplitFullReductionsPass> {
  using GroveSplitFullReductionsBase::GroveSplitFullReductionsBase;

  /// How many parts `op` splits into; 0 when it stays whole.
  int64_t getParts(linalg::GenericOp op) const {
    // Upstream moves the body as it is under a new outer loop (a
    // linalg.index would then count parts, not elements) and reads every
    // map as a permutation (a broadcast's constant index is not one).
    if (!op.hasPureTensorSemantics() || !grove::isFullReduction(op) ||
        op.getNumLoops() != 1 || op.getNumDpsInits() != 1 ||
        op.hasIndexSemantics() ||
        !llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isProjectedPermutation(); }))
      return 0;
    int64_t size = op.getStaticLoopRanges()[0];
    if (ShapedType::isDynamic(size) || size < minSize)
      return 0;
    int64_t parts = 1;
    while (parts * 2 <= maxParts && size % (parts * 2) == 0 &&
           size / (parts * 2) >= minPart)
      parts *= 2;
    return parts > 1 ? parts : 0;
  }

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> candidates;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (getParts(op))
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : candidates) {
      int64_t parts = getParts(op);
      rewriter.setInsertionPoint(op);
      // Fails, leaving `op` as it was, where upstream cannot split (no
      // known identity for the combiner): the reduction stays serial.
      (void)linalg::splitReduction(
          rewriter, cast<linalg::LinalgOp>(op.getOperation()),
          [&](linalg::LinalgOp) {
            return linalg::SplitReductionOptions{parts, /*index=*/0,
                                                 /*innerParallel=*/false};
          });
    }
  }
};

} // namespace
