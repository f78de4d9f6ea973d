//===- MemRefToGPU.cpp - heap buffers become device buffers ---------------===//
//
// After grove-stage-device-constants, deallocation and
// convert-linalg-to-gpu-launch, every heap buffer of an entry function is
// touched only by kernels and library calls, so it can live on the device.
// gpu-to-llvm lowers the results to the runtime's mgpuMemAlloc/Free/Memcpy
// (runtime/src/cuda), which use the context's caching allocator and stream.
// The exception: a runtime service whose device twin takes an operand in
// host memory (the tree schedule's group table, read by a loop on the host)
// is redirected to the twin, and that operand's buffer stays on the host.
//
//===----------------------------------------------------------------------===//

#include "grove/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include "llvm/ADT/DenseSet.h"

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

/// The buffer a memref views, through casts, views and metadata.
Value bufferOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// A runtime service whose device twin reads or writes `hostOperands` in
/// host memory and every other memref in device memory.
struct DeviceTwin {
  StringLiteral service, twin;
  ArrayRef<unsigned> hostOperands;
};
// The tree schedule's group table (docs/trees.md).
constexpr unsigned kTreeScheduleHost[] = {7};
const DeviceTwin kTwins[] = {
    {"grove_rt_tree_schedule", "grove_rt_cuda_tree_schedule",
     kTreeScheduleHost},
};

using HostBuffers = llvm::DenseSet<Operation *>;

/// Calls of the services above go to their twins; the allocations behind
/// the twins' host operands are added to `host`. A host operand that is
/// not a fresh allocation is an error.
LogicalResult redirectToTwins(ModuleOp module, HostBuffers &host) {
  SymbolTable symbols(module);
  WalkResult result = module.walk([&](func::CallOp call) {
    const DeviceTwin *twin = llvm::find_if(kTwins, [&](const DeviceTwin &t) {
      return call.getCallee() == t.service;
    });
    if (twin == std::end(kTwins))
      return WalkResult::advance();
    for (unsigned i : twin->hostOperands) {
      auto alloc =
          bufferOf(call.getOperand(i)).getDefiningOp<memref::AllocOp>();
      if (!alloc) {
        call.emitOpError("operand ")
            << i << " of " << twin->twin
            << " must be a buffer allocated in the function (host memory)";
        return WalkResult::interrupt();
      }
      host.insert(alloc);
    }
    if (!symbols.lookup(twin->twin)) {
      auto service = symbols.lookup<func::FuncOp>(twin->service);
      OpBuilder b(service);
      auto decl = func::FuncOp::create(b, service.getLoc(), twin->twin,
                                       service.getFunctionType());
      decl.setPrivate();
      if (service->hasAttr("llvm.emit_c_interface"))
        decl->setAttr("llvm.emit_c_interface", b.getUnitAttr());
      symbols.insert(decl);
    }
    call.setCallee(twin->twin);
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Whether `memref` stays in host memory: a buffer of a twin's host
/// operand, a stack buffer or a global (staged constants are copied).
bool onHost(Value memref, const HostBuffers &host) {
  Operation *def = bufferOf(memref).getDefiningOp();
  return def && (host.contains(def) ||
                 isa<memref::AllocaOp, memref::GetGlobalOp>(def));
}

/// The next free kernel number of `func` (kernels are named
/// `<function>_k<N>_<kind>` by convert-linalg-to-gpu-launch).
unsigned nextKernelNumber(func::FuncOp func) {
  unsigned next = 0;
  std::string prefix = (func.getName() + "_k").str();
  func.walk([&](gpu::LaunchOp launch) {
    std::optional<StringRef> name = launch.getFunction();
    if (!name)
      return;
    StringRef rest = *name;
    unsigned n = 0;
    if (rest.consume_front(prefix) && !rest.consumeInteger(10, n))
      next = std::max(next, n + 1);
  });
  return next;
}

/// A host store into a device buffer (a scalar computed on the host, such
/// as a mean's element count, bufferized as a store into a fresh buffer)
/// becomes a one-thread kernel that takes the value as a parameter.
void storesToKernels(ModuleOp module, const HostBuffers &host) {
  module.walk([&](func::FuncOp func) {
    SmallVector<memref::StoreOp> stores;
    func.walk([&](memref::StoreOp store) {
      if (!inKernel(store) && !onHost(store.getMemRef(), host))
        stores.push_back(store);
    });
    unsigned next = stores.empty() ? 0 : nextKernelNumber(func);
    for (memref::StoreOp store : stores) {
      OpBuilder b(store);
      Location loc = store.getLoc();
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto launch = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
      launch.setFunctionAttr(FlatSymbolRefAttr::get(
          b.getContext(),
          (func.getName() + "_k" + Twine(next++) + "_store").str()));
      Block &body = launch.getBody().front();
      b.setInsertionPointToEnd(&body);
      gpu::TerminatorOp::create(b, loc);
      store->moveBefore(body.getTerminator());
    }
  });
}

/// Host code may read host buffers only: a device buffer's value would
/// need the stream's work first.
LogicalResult checkHostLoads(ModuleOp module, const HostBuffers &host) {
  WalkResult result = module.walk([&](memref::LoadOp load) {
    if (inKernel(load) || onHost(load.getMemRef(), host))
      return WalkResult::advance();
    load.emitOpError("reads, on the host, a buffer that lives on the device");
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

struct AllocToGPU : OpRewritePattern<memref::AllocOp> {
  AllocToGPU(MLIRContext *ctx, const HostBuffers &host)
      : OpRewritePattern(ctx), host(host) {}
  LogicalResult matchAndRewrite(memref::AllocOp alloc,
                                PatternRewriter &rewriter) const override {
    if (inKernel(alloc) || host.contains(alloc))
      return failure();
    // cuMemAlloc-backed blocks are 256-byte aligned, more than any
    // `alignment` bufferization asks for.
    rewriter.replaceOpWithNewOp<gpu::AllocOp>(
        alloc, alloc.getType(), /*asyncToken=*/Type(), ValueRange(),
        alloc.getDynamicSizes(), alloc.getSymbolOperands(),
        /*hostShared=*/false);
    return success();
  }
  const HostBuffers &host;
};

struct DeallocToGPU : OpRewritePattern<memref::DeallocOp> {
  DeallocToGPU(MLIRContext *ctx, const HostBuffers &host)
      : OpRewritePattern(ctx), host(host) {}
  LogicalResult matchAndRewrite(memref::DeallocOp dealloc,
                                PatternRewriter &rewriter) const override {
    if (inKernel(dealloc) ||
        host.contains(bufferOf(dealloc.getMemref()).getDefiningOp()))
      return failure();
    gpu::DeallocOp::create(rewriter, dealloc.getLoc(), Type(), ValueRange(),
                           dealloc.getMemref());
    rewriter.eraseOp(dealloc);
    return success();
  }
  const HostBuffers &host;
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
    ModuleOp module = getOperation();
    HostBuffers host;
    if (failed(redirectToTwins(module, host)) ||
        failed(checkHostLoads(module, host)))
      return signalPassFailure();
    storesToKernels(module, host);
    bool failed = false;
    RewritePatternSet patterns(&getContext());
    patterns.add<AllocToGPU, DeallocToGPU>(&getContext(), host);
    patterns.add<CopyToGPU>(&getContext(), failed);
    walkAndApplyPatterns(module, std::move(patterns));
    if (failed)
      signalPassFailure();
  }
};

} // namespace
