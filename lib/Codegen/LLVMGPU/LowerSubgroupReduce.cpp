//===- LowerSubgroupReduce.cpp - subgroup reductions to shuffles ----------===//
//
// The warp reductions linalg-to-gpu-launch emits are gpu.subgroup_reduce;
// upstream's patterns spell them as the shuffle butterfly NVVM has, so the
// kernel generator states what it reduces, not how a warp does it. This
// runs at once, before deallocation: gpu.subgroup_reduce declares no
// memory effects, which ownership-based deallocation refuses.
//
//===----------------------------------------------------------------------===//

#include "grove/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVELOWERSUBGROUPREDUCE
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;

namespace {
constexpr unsigned kWarpSize = 32, kShuffleBits = 32, kWideShuffleBits = 64;

struct GroveLowerSubgroupReducePass
    : grove::impl::GroveLowerSubgroupReduceBase<GroveLowerSubgroupReducePass> {
  void runOnOperation() override {
    // 32-bit values (and narrower, packed) first; what is left is wider
    // (f64), reduced with 64-bit shuffles that are then split in two.
    RewritePatternSet narrow(&getContext());
    populateGpuBreakDownSubgroupReducePatterns(narrow, kShuffleBits);
    populateGpuLowerSubgroupReduceToShufflePatterns(narrow, kWarpSize,
                                                    kShuffleBits);
    RewritePatternSet wide(&getContext());
    populateGpuLowerSubgroupReduceToShufflePatterns(wide, kWarpSize,
                                                    kWideShuffleBits);
    populateGpuShufflePatterns(wide);
    if (failed(applyPatternsGreedily(getOperation(), std::move(narrow))) ||
        failed(applyPatternsGreedily(getOperation(), std::move(wide))))
      return signalPassFailure();
    WalkResult left = getOperation()->walk([](gpu::SubgroupReduceOp op) {
      op.emitOpError("has no shuffle lowering for ") << op.getType();
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
