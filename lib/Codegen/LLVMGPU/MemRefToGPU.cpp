//===- MemRefToGPU.cpp - heap buffers become device buffers ---------------===//
//
// After grove-stage-device-constants, deallocation and
// convert-linalg-to-gpu-launch, heap buffers are touched by kernels, library
// calls and copies, so they can live on the device. gpu-to-llvm lowers the
// results to the runtime's mgpuMemAlloc/Free/Memcpy (runtime/src/cuda), which
// use the context's caching allocator and stream. The exception: a runtime
// service whose device twin takes an operand in host memory (the tree
// schedule's group table, read by a loop on the host) is redirected to the
// twin, and that operand's buffer stays on the host. Host code must not read
// device memory (there is no synchronization to make it valid): such a load
// is an error, and a host store into a device buffer becomes a tiny kernel.
//
//===----------------------------------------------------------------------===//

#include "grove/Codegen/Passes.h"
#include "grove/Conversion/RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include "llvm/ADT/SetVector.h"

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

/// Device code keeps its own memory ops.
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
constexpr unsigned kTreeScheduleHost[] = {kTreeScheduleGroupsOperand};
const DeviceTwin kTwins[] = {
    {kTreeScheduleService, kCudaTreeScheduleService, kTreeScheduleHost},
};

using HostBuffers = llvm::SetVector<Operation *>;

/// Calls of the services above go to their twins; the allocations behind
/// the twins' host operands are added to `host`. A host operand that is
/// not a fresh allocation is an error.
LogicalResult redirectToTwins(ModuleOp module, HostBuffers &host) {
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
    if (failed(getOrDeclareRuntimeFunction(module, twin->twin,
                                           call.getCalleeType())))
      return WalkResult::interrupt();
    call.setCallee(twin->twin);
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// The collectives' services take host buffers; device buffers need the
/// NCCL communicator, which the CUDA runtime does not have yet.
LogicalResult refuseHostCollectives(ModuleOp module) {
  WalkResult result = module.walk([](func::CallOp call) {
    StringRef callee = call.getCallee();
    if (!callee.starts_with("grove_rt_all_reduce_") &&
        !callee.starts_with("grove_rt_all_gather_") &&
        !callee.starts_with("grove_rt_broadcast_") &&
        !callee.starts_with("grove_rt_top_k_"))
      return WalkResult::advance();
    call.emitOpError("calls ")
        << callee
        << ", a collective on host memory: collectives on the CUDA target "
           "need the NCCL communicator, not built yet (docs/distributed.md)";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

/// Whether operand `i` of `call` is one a device twin takes in host memory.
bool isTwinHostOperand(func::CallOp call, unsigned i) {
  return llvm::any_of(kTwins, [&](const DeviceTwin &t) {
    return call.getCallee() == t.twin && llvm::is_contained(t.hostOperands, i);
  });
}

/// A host buffer may only be viewed, read and written by host code, passed
/// to a twin as a host operand and freed: a kernel, a library call or a
/// copy would treat it as device memory.
LogicalResult checkHostBufferUses(const HostBuffers &host) {
  for (Operation *alloc : host) {
    SmallVector<Value> worklist = {alloc->getResult(0)};
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        auto view = dyn_cast<ViewLikeOpInterface>(user);
        if (view && view.getViewSource() == v) {
          for (Value r : user->getResults())
            if (isa<BaseMemRefType>(r.getType()))
              worklist.push_back(r);
          continue;
        }
        auto call = dyn_cast<func::CallOp>(user);
        if (isa<memref::DeallocOp, memref::DimOp>(user) ||
            (isa<memref::LoadOp, memref::StoreOp>(user) && !inKernel(user)) ||
            (call && isTwinHostOperand(call, use.getOperandNumber())))
          continue;
        InFlightDiagnostic diag = user->emitOpError(
            "uses a buffer that must stay in host memory (a device twin's "
            "host operand) as device memory");
        diag.attachNote(alloc->getLoc()) << "the host buffer";
        return failure();
      }
    }
  }
  return success();
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
    if (failed(refuseHostCollectives(module)) ||
        failed(redirectToTwins(module, host)) ||
        failed(checkHostBufferUses(host)) ||
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
