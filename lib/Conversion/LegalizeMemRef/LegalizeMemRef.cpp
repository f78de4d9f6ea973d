//===- MemRefCopyToLinalg.cpp - Strided memref.copy as linalg.copy --------===//
//
// memref.copy between buffers that are not both contiguous lowers to a call
// of `memrefCopy` from MLIR's C runner utilities, a library the generated
// code must not depend on. As a linalg.copy it becomes plain loops instead.
// Copies of identity-layout buffers stay: they lower to memcpy.
//
//===----------------------------------------------------------------------===//

#include "grove/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEMEMREFCOPYTOLINALG
#include "grove/Conversion/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {
struct StridedCopyToLinalg : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::CopyOp op,
                                PatternRewriter &rewriter) const override {
    auto src = dyn_cast<MemRefType>(op.getSource().getType());
    auto dst = dyn_cast<MemRefType>(op.getTarget().getType());
    if (!src || !dst)
      return rewriter.notifyMatchFailure(op, "unranked copy");
    if (src.getLayout().isIdentity() && dst.getLayout().isIdentity())
      return rewriter.notifyMatchFailure(op, "contiguous copy is a memcpy");
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                op.getTarget());
    return success();
  }
};

struct GroveMemRefCopyToLinalgPass
    : grove::impl::GroveMemRefCopyToLinalgBase<GroveMemRefCopyToLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StridedCopyToLinalg>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
