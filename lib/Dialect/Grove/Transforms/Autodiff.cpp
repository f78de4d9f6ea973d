//===- Autodiff.cpp - Reverse-mode differentiation of grove.value_and_grad ===//
//
// The forward stays as written (moved out of the region), so a later pass
// sees the gradients as ordinary values it may rewrite: a collective can
// reduce them, an optimizer consume them. The backward is built op by op
// from each op's own VJP, so adding a differentiable op never touches this
// file.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/Inliner.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEAUTODIFF
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

/// Inlines every call in `op`'s body, callees' calls too; a call chain
/// that does not end is recursion.
LogicalResult inlineCalls(ValueAndGradOp op, ModuleOp module) {
  constexpr unsigned kMaxInlinedCalls = 1u << 16;
  InlinerInterface inliner(module.getContext());
  InlinerConfig config;
  for (unsigned n = 0;; ++n) {
    func::CallOp call;
    op.getBody().walk([&](func::CallOp c) {
      call = c;
      return WalkResult::interrupt();
    });
    if (!call)
      return success();
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCalleeAttr());
    if (!callee || callee.isDeclaration() || !callee.getBody().hasOneBlock())
      return call.emitError("grove-autodiff: cannot inline @")
             << call.getCallee()
             << " into grove.value_and_grad (a defined function of one "
                "block is needed)";
    if (n == kMaxInlinedCalls)
      return call.emitError("grove-autodiff: calls @")
             << call.getCallee() << " recursively";
    if (failed(mlir::inlineCall(inliner, config.getCloneCallback(), call,
                                callee, &callee.getBody())))
      return call.emitError("grove-autodiff: cannot inline @")
             << call.getCallee();
    call.erase();
  }
}

class Differentiation {
public:
  Differentiation(ValueAndGradOp op) : op(op), b(op) {}

  LogicalResult run();

private:
  void markActive(ArrayRef<Operation *> forward);
  LogicalResult propagate(Operation *fwd);
  void accumulate(Value forward, Value cotangent);

  ValueAndGradOp op;
  OpBuilder b;
  llvm::DenseSet<Value> active;
  llvm::DenseMap<Value, Value> cotangents;
};

/// Values that depend on a differentiated param, in program order.
void Differentiation::markActive(ArrayRef<Operation *> forward) {
  llvm::DenseSet<Attribute> wrt(op.getWrt().begin(), op.getWrt().end());
  for (Operation *fwd : forward) {
    auto get = dyn_cast<GetParamOp>(fwd);
    bool isActive = get ? wrt.contains(get.getNameAttr())
                        : llvm::any_of(fwd->getOperands(), [&](Value v) {
                            return active.contains(v);
                          });
    if (isActive)
      active.insert(fwd->result_begin(), fwd->result_end());
  }
}

void Differentiation::accumulate(Value forward, Value cotangent) {
  Value &sum = cotangents[forward];
  sum = sum ? AddOp::create(b, cotangent.getLoc(), sum, cotangent).getResult()
            : cotangent;
}

/// Builds the cotangents of `fwd`'s active operands from its results'.
LogicalResult Differentiation::propagate(Operation *fwd) {
  if (isa<GetParamOp>(fwd) || fwd->getNumResults() == 0 ||
      !active.contains(fwd->getResult(0)))
    return success();
  SmallVector<Value> resultCotangents;
  for (Value r : fwd->getResults())
    resultCotangents.push_back(cotangents.lookup(r));
  if (llvm::all_of(resultCotangents, [](Value v) { return !v; }))
    return success();
  auto vjp = dyn_cast<VJPOpInterface>(fwd);
  if (!vjp) {
    InFlightDiagnostic diag =
        fwd->emitError("grove-autodiff: cannot differentiate through '")
        << fwd->getName() << "'"
        << (fwd->hasTrait<NotDifferentiable>() ? ", which is not differentiable"
                                               : ", which has no VJP");
    diag.attachNote(op.getLoc()) << "differentiating this grove.value_and_grad";
    return diag;
  }
  SmallVector<bool> needed;
  for (Value operand : fwd->getOperands())
    needed.push_back(active.contains(operand));
  SmallVector<Value> operandCotangents;
  if (failed(vjp.buildVJP(b, resultCotangents, needed, operandCotangents)))
    return failure();
  if (operandCotangents.size() != fwd->getNumOperands())
    return fwd->emitError("grove-autodiff: the VJP of '")
           << fwd->getName() << "' gave " << operandCotangents.size()
           << " cotangents for " << fwd->getNumOperands() << " operands";
  for (auto [operand, cotangent] :
       llvm::zip(fwd->getOperands(), operandCotangents)) {
    if (!cotangent || !active.contains(operand))
      continue;
    if (cotangent.getType() != operand.getType())
      return fwd->emitError("grove-autodiff: the VJP of '")
             << fwd->getName() << "' gave a cotangent of type "
             << cotangent.getType() << " for an operand of type "
             << operand.getType();
    accumulate(operand, cotangent);
  }
  return success();
}

/// After inlining, the body is straight-line grove code: a nested region,
/// a state write or an optimizer (from an inlined callee) cannot be
/// differentiated or moved into the forward.
LogicalResult checkBody(ValueAndGradOp op) {
  for (Operation &inner : op.getBody().front().without_terminator()) {
    if (inner.getNumRegions() == 0 &&
        !isa<SetParamOp, OptimizerOpInterface>(inner))
      continue;
    InFlightDiagnostic d =
        inner.emitError("grove-autodiff: '")
        << inner.getName()
        << "' cannot be in the body of grove.value_and_grad (a "
        << (inner.getNumRegions() ? "region op" : "state write")
        << "; calls are inlined into it)";
    d.attachNote(op.getLoc()) << "differentiating this grove.value_and_grad";
    return d;
  }
  return success();
}

LogicalResult Differentiation::run() {
  // The body's ops now precede the op: they are the forward.
  Block &body = op.getBody().front();
  Value value = op.getYield().getValues()[0];
  SmallVector<Operation *> forward;
  for (Operation &fwd : body.without_terminator())
    forward.push_back(&fwd);
  op->getBlock()->getOperations().splice(Block::iterator(op),
                                         body.getOperations(), body.begin(),
                                         std::prev(body.end()));
  markActive(forward);

  b.setInsertionPoint(op);
  if (active.contains(value))
    cotangents[value] = createSplatConstant(
        b, op.getLoc(), cast<RankedTensorType>(value.getType()), 1.0);
  for (Operation *fwd : llvm::reverse(forward))
    if (failed(propagate(fwd)))
      return failure();

  // A param's gradient: the sum over its reads.
  SmallVector<Value> results = {value};
  for (auto [name, gradient] : llvm::zip(op.getWrt(), op.getGradients())) {
    Value sum;
    for (Operation *fwd : forward) {
      auto get = dyn_cast<GetParamOp>(fwd);
      if (!get || get.getNameAttr() != name)
        continue;
      if (Value c = cotangents.lookup(get.getResult()))
        sum = sum ? AddOp::create(b, op.getLoc(), sum, c).getResult() : c;
    }
    results.push_back(
        sum ? sum
            : createSplatConstant(b, op.getLoc(),
                                  cast<RankedTensorType>(gradient.getType()),
                                  0.0));
  }
  op->replaceAllUsesWith(results);
  op->erase();
  return success();
}

struct GroveAutodiffPass : grove::impl::GroveAutodiffBase<GroveAutodiffPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<ValueAndGradOp> ops;
    module.walk([&](ValueAndGradOp op) { ops.push_back(op); });
    for (ValueAndGradOp op : ops)
      if (failed(inlineCalls(op, module)) || failed(checkBody(op)) ||
          failed(Differentiation(op).run()))
        return signalPassFailure();
  }
};

} // namespace
