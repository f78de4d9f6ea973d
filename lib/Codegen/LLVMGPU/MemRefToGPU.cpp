//===- MemRefToGPU.cpp - heap buffers become device buffers ---------------===//
//
// After grove-stage-device-constants, deallocation and
// convert-linalg-to-gpu-launch, every heap buffer of an entry function is
// touched only by kernels and library calls, so it can live on the device.
// gpu-to-llvm lowers the results to the runtime's mgpuMemAlloc/Free/Memcpy
// (runtime/src/cuda), which use the context's caching allocator and stream.
//
//===----------------------------------------------------------------------===//

#include "grove/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEMEMREFTOGPU
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

bool isContiguous(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.getLayout().isIdentity();
}

/// Device code keeps its own memory ops (none are generated today).
bool inKernel(Operation *op) {
  return op->getParentOfType<gpu::LaunchOp>() != nullptr;
}

struct AllocToGPU : OpRewritePattern<memref::AllocOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::AllocOp alloc,
                                PatternRewriter &rewriter) const override {
    if (inKernel(alloc))
      return failure();
    // cuMemAlloc-backed blocks are 256-byte aligned, more than any
    // `alignment` bufferization asks for.
    rewriter.replaceOpWithNewOp<gpu::AllocOp>(
        alloc, alloc.getType(), /*asyncToken=*/Type(), ValueRange(),
        alloc.getDynamicSizes(), alloc.getSymbolOperands(),
        /*hostShared=*/false);
    return success();
  }
};

struct DeallocToGPU : OpRewritePattern<memref::DeallocOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::DeallocOp dealloc,
                                PatternRewriter &rewriter) const override {
    if (inKernel(dealloc))
      return failure();
    gpu::DeallocOp::create(rewriter, dealloc.getLoc(), Type(), ValueRange(),
                           dealloc.getMemref());
    rewriter.eraseOp(dealloc);
    return success();
  }
};

struct CopyToGPU : OpRewritePattern<memref::CopyOp> {
  CopyToGPU(MLIRContext *ctx, bool &failed)
      : OpRewritePattern(ctx), failed(failed) {}
  LogicalResult matchAndRewrite(memref::CopyOp copy,
                                PatternRewriter &rewriter) const override {
    if (inKernel(copy))
      return failure();
    if (!isContiguous(copy.getSource()) || !isContiguous(copy.getTarget())) {
      copy.emitOpError("non-contiguous copy reached the device lowering; run "
                       "grove-legalize-memref first");
      failed = true;
      return failure();
    }
    gpu::MemcpyOp::create(rewriter, copy.getLoc(), Type(), ValueRange(),
                          copy.getTarget(), copy.getSource());
    rewriter.eraseOp(copy);
    return success();
  }
  bool &failed;
};

struct GroveMemRefToGPUPass
    : grove::impl::GroveMemRefToGPUBase<GroveMemRefToGPUPass> {
  void runOnOperation() override {
    bool failed = false;
    RewritePatternSet patterns(&getContext());
    patterns.add<AllocToGPU, DeallocToGPU>(&getContext());
    patterns.add<CopyToGPU>(&getContext(), failed);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    if (failed)
      signalPassFailure();
  }
};

} // namespace
