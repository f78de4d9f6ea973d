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

struct GroveMemRefToGPUPass
    : grove::impl::GroveMemRefToGPUBase<GroveMemRefToGPUPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    WalkResult result = getOperation().walk([&](Operation *op) {
      // Device code keeps its own memory ops (none are generated today).
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      rewriter.setInsertionPoint(op);
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        // cuMemAlloc-backed blocks are 256-byte aligned, more than any
        // `alignment` bufferization asks for.
        rewriter.replaceOpWithNewOp<gpu::AllocOp>(
            alloc, alloc.getType(), /*asyncToken=*/Type(), ValueRange(),
            alloc.getDynamicSizes(), alloc.getSymbolOperands(),
            /*hostShared=*/false);
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        gpu::DeallocOp::create(rewriter, dealloc.getLoc(), Type(), ValueRange(),
                               dealloc.getMemref());
        rewriter.eraseOp(dealloc);
      } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        if (!isContiguous(copy.getSource()) ||
            !isContiguous(copy.getTarget())) {
          copy.emitOpError("non-contiguous copy reached the device "
                           "lowering; run grove-legalize-memref first");
          return WalkResult::interrupt();
        }
        gpu::MemcpyOp::create(rewriter, copy.getLoc(), Type(), ValueRange(),
                              copy.getTarget(), copy.getSource());
        rewriter.eraseOp(copy);
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
