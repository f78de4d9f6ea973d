//===- GuardStateWrites.cpp - No state writes after a failure -------------===//
//
// A call reports some failures from inside the generated code and goes on:
// a size check (grove.agree_dims), a service that parks an error (a GEMM on
// bad shapes, a malformed forest, a CUDA service). The runtime then fails
// the call, but the code has run to its end by then, and its end is where
// the context's state is written (docs/decisions.md, "Writes in place,
// last"). So every operation that may write a state buffer runs only when
// the call has not failed so far: the runtime is asked once, before the
// first such write, and nothing between the first and the last write may
// report a failure (checked). A call that fails so leaves state as it was,
// whatever failed, without each check knowing about state.
//
//===----------------------------------------------------------------------===//

#include "grove/Codegen/Passes.h"
#include "grove/Conversion/RuntimeServices.h"
#include "grove/Dialect/Grove/IR/ABIAttrs.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEGUARDSTATEWRITES
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

/// The state buffers `fn` writes and every memref derived from them (views,
/// casts; conservatively any memref result of an op using one, and the
/// memref arguments of its regions, such as a loop's iter_args).
static llvm::DenseSet<Value> writableState(func::FuncOp fn) {
  llvm::DenseSet<Value> state;
  SmallVector<Value> worklist;
  auto add = [&](Value v) {
    if (isa<BaseMemRefType>(v.getType()) && state.insert(v).second)
      worklist.push_back(v);
  };
  for (BlockArgument arg : fn.getArguments())
    if (fn.getArgAttr(arg.getArgNumber(), kWritesAttr))
      add(arg);
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      for (Value result : user->getResults())
        add(result);
      for (Region &region : user->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            add(arg);
    }
  }
  return state;
}

/// Whether `op` (with what it nests) may write one of `state`: an op that
/// declares a write to one of them, or a write to no particular value, or
/// says nothing of its effects (a service call), with one of them as an
/// operand. Ops that only read state (a loop over the weights) do not.
static bool mayWriteState(Operation *op, const llvm::DenseSet<Value> &state) {
  auto hasStateOperand = [&](Operation *o) {
    return llvm::any_of(o->getOperands(),
                        [&](Value v) { return state.contains(v); });
  };
  WalkResult result = op->walk([&](Operation *o) {
    auto effecting = dyn_cast<MemoryEffectOpInterface>(o);
    if (!effecting) {
      // Nested ops speak for an op with recursive effects.
      if (o->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
          !hasStateOperand(o))
        return WalkResult::advance();
      return WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> effects;
    effecting.getEffects(effects);
    for (const MemoryEffects::EffectInstance &effect : effects) {
      if (!isa<MemoryEffects::Write>(effect.getEffect()))
        continue;
      Value target = effect.getValue();
      if (target ? state.contains(target) : hasStateOperand(o))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Whether `op` or an op it nests is a call (a runtime service, which may
/// report a failure or be a collective every rank must enter) or a check.
static bool mayReportFailure(Operation *op) {
  return op
      ->walk([](Operation *o) {
        return isa<CallOpInterface, AgreeDimsOp>(o) ? WalkResult::interrupt()
                                                    : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The writes must be plain copies and loops whose results nothing uses,
/// and nothing between the first and the last may report a failure: the
/// query before the first then covers every failure before any write, and
/// skipping the writes skips no service (no collective a peer waits in).
static LogicalResult checkWriteRegion(ArrayRef<Operation *> writes) {
  llvm::SmallPtrSet<Operation *, 8> guarded(writes.begin(), writes.end());
  for (Operation *op = writes.front(); op; op = op->getNextNode()) {
    if (!guarded.contains(op)) {
      if (mayReportFailure(op))
        return op->emitOpError("may report a failure between the state "
                               "writes, which must come last "
                               "(grove-guard-state-writes)");
      continue;
    }
    if (!op->use_empty())
      return op->emitOpError("writes state and has results used later; "
                             "grove-guard-state-writes cannot guard it");
    if (mayReportFailure(op))
      return op->emitOpError(
          "may write state through a call or around a check; "
          "grove-guard-state-writes only skips copies and loops (a skipped "
          "service could leave the ranks apart)");
    if (op == writes.back())
      break;
  }
  return success();
}

namespace {
class GuardStateWritesPass
    : public grove::impl::GroveGuardStateWritesBase<GuardStateWritesPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && failed(guard(module, fn)))
        return signalPassFailure();
  }

private:
  LogicalResult guard(ModuleOp module, func::FuncOp fn) {
    llvm::DenseSet<Value> state = writableState(fn);
    if (state.empty())
      return success();
    if (!fn.getBody().hasOneBlock())
      return fn.emitOpError("writes state from more than one block; "
                            "grove-guard-state-writes needs one");
    Block &body = fn.getBody().front();
    SmallVector<Operation *> writes;
    for (Operation &op : body.without_terminator())
      if (mayWriteState(&op, state))
        writes.push_back(&op);
    if (writes.empty())
      return success();
    if (failed(checkWriteRegion(writes)))
      return failure();

    FailureOr<func::FuncOp> query = declareService(module, Service::CallFailed);
    if (failed(query))
      return failure();
    OpBuilder b(writes.front());
    Location loc = writes.front()->getLoc();
    Value failedSoFar =
        func::CallOp::create(b, loc, *query, ValueRange{}).getResult(0);
    Value ok = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, failedSoFar,
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0));
    for (Operation *op : writes) {
      b.setInsertionPoint(op);
      auto ifOp = scf::IfOp::create(b, op->getLoc(), ok, /*withElse=*/false);
      op->moveBefore(ifOp.thenBlock()->getTerminator());
    }
    return success();
  }
};
} // namespace
