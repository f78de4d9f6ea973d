//===- StageDeviceConstants.cpp - constants get a buffer of their own -----===//
//
// Kernels cannot read host globals. Copying each constant into a fresh
// buffer before deallocation runs lets the ownership-based deallocation decide
// where the copy dies (or that it is returned), exactly as for computed
// buffers. The copy costs one host-to-device transfer per call and
// constant; Grove models keep their large tensors in params, which are
// uploaded once.
//
//===----------------------------------------------------------------------===//

#include "grove/Codegen/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVESTAGEDEVICECONSTANTS
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {
/// Gives a constant global's read a buffer of its own: an allocation and a
/// copy right after it, which every former user reads instead. The walk
/// driver visits each read once, so the read the copy keeps is not
/// rewritten again.
struct StageConstant : OpRewritePattern<memref::GetGlobalOp> {
  StageConstant(MLIRContext *ctx, bool &failed)
      : OpRewritePattern(ctx), failed(failed) {}
  LogicalResult matchAndRewrite(memref::GetGlobalOp get,
                                PatternRewriter &rewriter) const override {
    // A mutable global would be written through the copy: refuse it.
    auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        get, get.getNameAttr());
    if (!global || !global.getConstant()) {
      get.emitOpError("reads a mutable global, which device code cannot "
                      "share with the host");
      failed = true;
      return failure();
    }
    rewriter.setInsertionPointAfter(get);
    auto buffer =
        memref::AllocOp::create(rewriter, get.getLoc(), get.getType());
    auto copy = memref::CopyOp::create(rewriter, get.getLoc(), get.getResult(),
                                       buffer.getResult());
    rewriter.replaceAllUsesExcept(get.getResult(), buffer.getResult(), copy);
    return success();
  }
  bool &failed;
};

struct GroveStageDeviceConstantsPass
    : grove::impl::GroveStageDeviceConstantsBase<
          GroveStageDeviceConstantsPass> {
  void runOnOperation() override {
    bool failed = false;
    RewritePatternSet patterns(&getContext());
    patterns.add<StageConstant>(&getContext(), failed);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    if (failed)
      signalPassFailure();
  }
};
} // namespace
