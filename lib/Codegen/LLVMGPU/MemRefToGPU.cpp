//===- MemRefToGPU.cpp - heap buffers become device buffers ---------------===//
//
// After grove-stage-device-constants, deallocation and
// convert-linalg-to-gpu-launch, heap buffers are touched by kernels, library
// calls and copies, so they can live on the device. gpu-to-llvm lowers the
// results to the runtime's mgpuMemAlloc/Free/Memcpy (runtime/src/cuda), which
// use the context's caching allocator and stream. The exception: a runtime
// service with a device twin is redirected to it: the collectives' twins
// take device buffers (NCCL), the tree schedule's takes its group table in
// host memory (read by a loop on the host), and that buffer stays there. Host
// code must not read device memory (there is no synchronization to make it
// valid): such a load is an error, and a host store into a device buffer
// becomes a tiny kernel.
//
//===----------------------------------------------------------------------===//

#include "grove/Codegen/Passes.h"
#include "grove/Conversion/RuntimeServices.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
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

using HostBuffers = llvm::SetVector<Operation *>;

/// Calls of services with a CUDA twin (services.def) go to the twin; the
/// allocations behind the twin's host-memory operands are added to `host`.
/// A host operand that is not a fresh allocation is an error.
LogicalResult redirectToTwins(ModuleOp module, HostBuffers &host) {
  WalkResult result = module.walk([&](func::CallOp call) {
    std::optional<Service> service = lookupService(call.getCallee());
    std::optional<Service> twin =
        service ? getCudaTwin(*service) : std::nullopt;
    if (!twin)
      return WalkResult::advance();
    const ServiceInfo &info = getServiceInfo(*twin);
    for (auto [i, operand] : llvm::enumerate(info.operands)) {
      if (!operand.hostMemory)
        continue;
      auto alloc =
          bufferOf(call.getOperand(i)).getDefiningOp<memref::AllocOp>();
      if (!alloc) {
        call.emitOpError("operand ")
            << i << " of " << info.symbol
            << " must be a buffer allocated in the function (host memory)";
        return WalkResult::interrupt();
      }
      host.insert(alloc);
    }
    OpBuilder b(call);
    FailureOr<func::CallOp> twinCall =
        createServiceCall(b, call.getLoc(), module, *twin, call.getOperands());
    if (failed(twinCall))
      return WalkResult::interrupt();
    call.replaceAllUsesWith(twinCall->getResults());
    call.erase();
    return WalkResult::skip();
  });
  return failure(result.wasInterrupted());
}

/// A host service that takes tensors and has no CUDA twin works on host
/// memory only; a CUDA model's tensors are device memory, so a call of one
/// is refused.
LogicalResult refuseHostOnlyServices(ModuleOp module) {
  WalkResult result = module.walk([&](func::CallOp call) {
    std::optional<Service> service = lookupService(call.getCallee());
    if (!service || getCudaTwin(*service))
      return WalkResult::advance();
    const ServiceInfo &info = getServiceInfo(*service);
    if (getFamilyInfo(info.family).library != ServiceLibrary::Host ||
        !info.memrefInterface)
      return WalkResult::advance();
    call.emitOpError("calls ")
        << info.symbol << ", a host service without a CUDA twin, on "
        << "device memory";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

/// Whether operand `i` of `call` is one a device twin takes in host memory.
bool isTwinHostOperand(func::CallOp call, unsigned i) {
  std::optional<Service> service = lookupService(call.getCallee());
  if (!service)
    return false;
  ArrayRef<ServiceOperand> operands = getServiceInfo(*service).operands;
  return i < operands.size() && operands[i].hostMemory;
}

/// Calls `visit` on every use of `buffer` and of its host-side views
/// (through ViewLikeOpInterface), until one returns false; returns whether
/// all returned true.
bool allBufferUses(Value buffer, function_ref<bool(OpOperand &)> visit) {
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (view && view.getViewSource() == v && !inKernel(user)) {
        for (Value r : user->getResults())
          if (isa<BaseMemRefType>(r.getType()))
            worklist.push_back(r);
        continue;
      }
      if (!visit(use))
        return false;
    }
  }
  return true;
}

/// A host buffer may only be viewed, read and written by host code, passed
/// to a twin as a host operand and freed: a kernel, a library call or a
/// copy would treat it as device memory.
LogicalResult checkHostBufferUses(const HostBuffers &host) {
  for (Operation *alloc : host) {
    bool ok = allBufferUses(alloc->getResult(0), [&](OpOperand &use) {
      Operation *user = use.getOwner();
      auto call = dyn_cast<func::CallOp>(user);
      if (isa<memref::DeallocOp, memref::DimOp>(user) ||
          (isa<memref::LoadOp, memref::StoreOp>(user) && !inKernel(user)) ||
          (call && isTwinHostOperand(call, use.getOperandNumber())))
        return true;
      InFlightDiagnostic diag = user->emitOpError(
          "uses a buffer that must stay in host memory (a device twin's "
          "host operand) as device memory");
      diag.attachNote(alloc->getLoc()) << "the host buffer";
      return false;
    });
    if (!ok)
      return failure();
  }
  return success();
}

/// Whether `memref` stays in host memory: a buffer of a twin's host
/// operand or one only host code uses, a stack buffer, a global (staged
/// constants are copied), or an argument of a host helper (in `host` too).
bool onHost(Value memref, const HostBuffers &host) {
  Value buffer = bufferOf(memref);
  if (auto arg = dyn_cast<BlockArgument>(buffer))
    return host.contains(arg.getOwner()->getParentOp());
  Operation *def = buffer.getDefiningOp();
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

/// Whether `callee` is host code of the module that hands its memref
/// arguments to nothing but host loads and stores (deallocation's
/// `dealloc_helper`, say).
bool isHostHelper(ModuleOp module, StringRef callee) {
  auto func = module.lookupSymbol<func::FuncOp>(callee);
  if (!func || func.isDeclaration())
    return false;
  WalkResult result = func.walk([](Operation *op) {
    return isa<gpu::LaunchOp, func::CallOp, memref::CopyOp>(op)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// Buffers only host code touches (deallocation's ownership flags, a
/// scalar kept for a host branch) stay on the host: no kernel, copy,
/// service or result ever sees them.
void addHostOnlyBuffers(ModuleOp module, HostBuffers &host) {
  module.walk([&](memref::AllocOp alloc) {
    if (inKernel(alloc) || host.contains(alloc))
      return;
    bool accessed = false;
    bool hostOnly = allBufferUses(alloc.getResult(), [&](OpOperand &use) {
      Operation *user = use.getOwner();
      if (inKernel(user))
        return false;
      if (isa<memref::DeallocOp, memref::DimOp>(user))
        return true;
      auto call = dyn_cast<func::CallOp>(user);
      accessed = true;
      return isa<memref::LoadOp, memref::StoreOp>(user) ||
             (call && isHostHelper(module, call.getCallee()));
    });
    // A buffer nothing reads or writes stays where buffers go by default.
    if (hostOnly && accessed)
      host.insert(alloc);
  });
}

/// Host helpers every call of which passes host buffers only: their
/// memref arguments are host memory (added to `host`).
void addHostFunctions(ModuleOp module, HostBuffers &host) {
  module.walk([&](func::FuncOp func) {
    // Entry points and functions nobody calls take device memory.
    if (!func.isPrivate() || !isHostHelper(module, func.getName()))
      return;
    std::optional<SymbolTable::UseRange> uses = func.getSymbolUses(module);
    if (!uses || uses->empty())
      return;
    for (const SymbolTable::SymbolUse &use : *uses) {
      auto call = dyn_cast<func::CallOp>(use.getUser());
      if (!call)
        return;
      for (Value operand : call.getOperands())
        if (isa<BaseMemRefType>(operand.getType()) && !onHost(operand, host))
          return;
    }
    host.insert(func);
  });
}

/// Host code may read device memory only where a read of one element
/// outside any loop - a step counter that picks a random block, a flag
/// behind a branch - waits for the stream's work: such a load becomes a
/// call of the scalar read service on a rank-0 view of the element. A
/// load in a host loop (a read per iteration) is an error.
LogicalResult readDeviceScalars(ModuleOp module, const HostBuffers &host) {
  SmallVector<memref::LoadOp> loads;
  module.walk([&](memref::LoadOp load) {
    if (!inKernel(load) && !onHost(load.getMemRef(), host))
      loads.push_back(load);
  });
  for (memref::LoadOp load : loads) {
    Type element = load.getType();
    std::optional<Service> service =
        lookupService(ServiceFamily::CudaRead, element);
    if (load->getParentOfType<LoopLikeOpInterface>() || !service)
      return load.emitOpError(
                 "reads, on the host, a buffer that lives on the device")
             << (!service ? " (an element type the scalar read lacks)"
                          : " (in a host loop: a read per iteration)");
    OpBuilder b(load);
    Location loc = load.getLoc();
    MLIRContext *ctx = b.getContext();
    auto viewType = MemRefType::get(
        {}, element, StridedLayoutAttr::get(ctx, ShapedType::kDynamic, {}));
    Value source = load.getMemRef();
    auto sourceType = cast<MemRefType>(source.getType());
    Value view;
    if (sourceType.getRank() == 0) {
      view = memref::CastOp::create(b, loc, viewType, source);
    } else {
      SmallVector<OpFoldResult> offsets(load.getIndices()),
          ones(sourceType.getRank(), b.getIndexAttr(1));
      view = memref::SubViewOp::create(b, loc, viewType, source, offsets, ones,
                                       ones);
    }
    FailureOr<func::CallOp> call =
        createServiceCall(b, loc, module, *service, view);
    if (failed(call))
      return failure();
    load.replaceAllUsesWith(call->getResult(0));
    load.erase();
  }
  return success();
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
    if (failed(refuseHostOnlyServices(module)) ||
        failed(redirectToTwins(module, host)) ||
        failed(checkHostBufferUses(host)))
      return signalPassFailure();
    addHostOnlyBuffers(module, host);
    addHostFunctions(module, host);
    if (failed(readDeviceScalars(module, host)))
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
