//===- GuardStateWrites.cpp - No state writes after a failure -------------===//
//
// A call reports some failures from inside the generated code and goes on:
// a size check (grove.agree_dims), a service that parks an error (a GEMM on
// bad shapes, a malformed forest, a CUDA service). The runtime then fails
// the call, but the code has run to its end by then, and its end is where
// the context's state is written (docs/design.md, "Writes in place,
// last"). So every operation that may write a state buffer runs only when
// the call has not failed so far: the runtime is asked once, before the
// first such write. A call that fails so leaves state as it was, whatever
// failed, without each check knowing about state.
//
//===----------------------------------------------------------------------===//

#include "grove/Codegen/Passes.h"
#include "grove/Conversion/RuntimeCalls.h"
#include "grove/Dialect/Grove/IR/ABIAttrs.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEGUARDSTATEWRITES
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

/// The state buffers `fn` writes and every memref derived from them (views,
/// casts; any memref result of an op using one, conservatively).
llvm::DenseSet<Value> writableState(func::FuncOp fn) {
  llvm::DenseSet<Value> state;
  SmallVector<Value> worklist;
  for (BlockArgument arg : fn.getArguments())
    if (fn.getArgAttr(arg.getArgNumber(), kWritesAttr))
      worklist.push_back(arg);
  state.insert(worklist.begin(), worklist.end());
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers())
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()) &&
            state.insert(result).second)
          worklist.push_back(result);
  }
  return state;
}

/// Whether `op` (with what it nests) may write one of `state`: a declared
/// write to one of them, or unknown effects with one as an operand.
bool mayWriteState(Operation *op, const llvm::DenseSet<Value> &state) {
  auto touchesState = [&](Operation *o) {
    return llvm::any_of(o->getOperands(),
                        [&](Value v) { return state.contains(v); });
  };
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  if (!effects) {
    // Some nested op does not say what it does (a service call): it may
    // write whatever state it is given.
    bool writes = false;
    op->walk([&](Operation *o) { writes |= touchesState(o); });
    return writes;
  }
  for (const MemoryEffects::EffectInstance &effect : *effects) {
    if (!isa<MemoryEffects::Write>(effect.getEffect()))
      continue;
    Value target = effect.getValue();
    if (target ? state.contains(target) : touchesState(op))
      return true;
  }
  return false;
}

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
    for (Operation *op : writes)
      if (!op->use_empty())
        return op->emitOpError("writes state and has results used later; "
                               "grove-guard-state-writes cannot guard it");

    MLIRContext *ctx = module.getContext();
    FailureOr<func::FuncOp> query = getOrDeclareRuntimeFunction(
        module, kCallFailedService,
        FunctionType::get(ctx, {}, {IntegerType::get(ctx, 32)}));
    if (failed(query))
      return failure();
    OpBuilder b(writes.front());
    Location loc = fn.getLoc();
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
