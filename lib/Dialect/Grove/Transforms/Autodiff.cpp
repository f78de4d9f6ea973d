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
#include "grove/Dialect/Grove/IR/ReverseSweep.h"
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

/// A function called more than once in the body was inlined as copies
/// whose dropouts share a generator and a stream, so they would draw one
/// mask: the k-th repeat of a (generator, stream) draws on stream + k·2^32
/// instead (before any VJP copies the attributes).
void separateDraws(ValueAndGradOp op) {
  llvm::DenseMap<std::pair<StringRef, int64_t>, int64_t> seen;
  op.getBody().walk([&](DropoutOp drop) {
    int64_t repeat = seen[{drop.getGenerator(), drop.getStream()}]++;
    if (repeat == 0)
      return;
    uint64_t stream = uint64_t(drop.getStream()) + (uint64_t(repeat) << 32);
    drop.setStream(int64_t(stream & uint64_t(INT64_MAX)));
  });
}

/// After inlining, the body is straight-line grove code: a nested region,
/// a state write or an optimizer (from an inlined callee) cannot be
/// differentiated or moved into the forward.
LogicalResult checkBody(ValueAndGradOp op) {
  for (Operation &inner : op.getBody().front().without_terminator()) {
    bool regionWithVJP = isa<VJPOpInterface>(inner);
    if ((inner.getNumRegions() == 0 || regionWithVJP) &&
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

/// Replaces `op` by its body (the forward) and the backward.
LogicalResult differentiate(ValueAndGradOp op) {
  // The body's ops now precede the op: they are the forward.
  Block &body = op.getBody().front();
  Value value = op.getYield().getValues()[0];
  SmallVector<Operation *> forward;
  for (Operation &fwd : body.without_terminator())
    forward.push_back(&fwd);
  op->getBlock()->getOperations().splice(Block::iterator(op),
                                         body.getOperations(), body.begin(),
                                         std::prev(body.end()));
  OpBuilder b(op);
  ReverseSweep sweep(b, op.getLoc(),
                     "differentiating this grove.value_and_grad");
  llvm::DenseSet<Attribute> wrt(op.getWrt().begin(), op.getWrt().end());
  for (Operation *fwd : forward)
    if (auto get = dyn_cast<GetParamOp>(fwd))
      if (wrt.contains(get.getNameAttr()))
        sweep.markActive(get.getResult());
  sweep.propagateActivity(forward);

  if (sweep.isActive(value))
    sweep.accumulate(value, createSplatConstant(
                                b, op.getLoc(),
                                cast<RankedTensorType>(value.getType()), 1.0));
  if (failed(sweep.run(forward)))
    return failure();

  // A param's gradient: the sum over its reads.
  SmallVector<Value> results = {value};
  for (auto [name, gradient] : llvm::zip(op.getWrt(), op.getGradients())) {
    Value sum;
    for (Operation *fwd : forward) {
      auto get = dyn_cast<GetParamOp>(fwd);
      if (!get || get.getNameAttr() != name)
        continue;
      if (Value c = sweep.getCotangent(get.getResult()))
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
    for (ValueAndGradOp op : ops) {
      if (failed(inlineCalls(op, module)) || failed(checkBody(op)))
        return signalPassFailure();
      separateDraws(op);
      if (failed(differentiate(op)))
        return signalPassFailure();
    }
  }
};

} // namespace
