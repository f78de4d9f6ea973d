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

namespace mlir::grove {
#define GEN_PASS_DEF_GROVESTAGEDEVICECONSTANTS
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {
struct GroveStageDeviceConstantsPass
    : grove::impl::GroveStageDeviceConstantsBase<
          GroveStageDeviceConstantsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<memref::GetGlobalOp> globals;
    getOperation().walk([&](memref::GetGlobalOp op) { globals.push_back(op); });
    for (memref::GetGlobalOp get : globals) {
      // A mutable global would be written through the copy: refuse it.
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          get, get.getNameAttr());
      if (!global || !global.getConstant()) {
        get.emitOpError("reads a mutable global, which device code cannot "
                        "share with the host");
        return signalPassFailure();
      }
      MemRefType type = get.getType();
      rewriter.setInsertionPointAfter(get);
      auto buffer = memref::AllocOp::create(rewriter, get.getLoc(), type);
      rewriter.replaceAllUsesWith(get.getResult(), buffer.getResult());
      memref::CopyOp::create(rewriter, get.getLoc(), get.getResult(),
                             buffer.getResult());
    }
  }
};
} // namespace
