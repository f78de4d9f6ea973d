//===- WidenLoopAccumulators.cpp - carry f16/bf16 accumulators in f32 -----===//
//
// On the host, f16/bf16 arithmetic is computed in f32 and rounded after
// every op (arith-emulate-unsupported-floats). A reduction loop whose
// accumulator is a narrow iter_arg then rounds the running sum at every
// step, and a long bf16 dot product drifts far more than one rounding off
// (docs/perf.md, "Design measurements"). Carrying such an accumulator in f32
// and rounding once after the loop is what the GPU (cuBLAS, f32 accumulation)
// and PyTorch do.
//
//===----------------------------------------------------------------------===//

#include "grove/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEWIDENLOOPACCUMULATORS
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

/// The f32 value yielded for iter_arg #i of `loop` when the loop only ever
/// reads that argument widened to f32 and yields a narrowed f32 value:
/// `%w = arith.extf %acc : bf16 to f32 ... scf.yield (arith.truncf %v)`.
arith::TruncFOp getWidenableYield(scf::ForOp loop, unsigned i) {
  BlockArgument arg = loop.getRegionIterArgs()[i];
  auto narrow = dyn_cast<FloatType>(arg.getType());
  if (!narrow || narrow.getWidth() >= 32)
    return {};
  for (Operation *user : arg.getUsers()) {
    auto ext = dyn_cast<arith::ExtFOp>(user);
    if (!ext || !ext.getType().isF32())
      return {};
  }
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  auto trunc = yield.getOperand(i).getDefiningOp<arith::TruncFOp>();
  if (!trunc || !trunc.getIn().getType().isF32())
    return {};
  return trunc;
}

/// Carries iter_arg #i of `loop` in f32: its init widened before the loop,
/// the body's widenings of it replaced by the argument, the yielded value
/// taken before its narrowing, and the result narrowed once after the loop.
void widen(scf::ForOp loop, unsigned i, arith::TruncFOp trunc) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Type f32 = b.getF32Type();
  OpOperand &init = loop.getInitArgsMutable()[i];
  Type narrow = init.get().getType();
  init.set(arith::ExtFOp::create(b, loc, f32, init.get()));

  BlockArgument arg = loop.getRegionIterArgs()[i];
  arg.setType(f32);
  for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
    user->getResult(0).replaceAllUsesWith(arg);
    user->erase();
  }
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  yield.setOperand(i, trunc.getIn());
  if (trunc->use_empty())
    trunc->erase();

  Value result = loop.getResult(i);
  result.setType(f32);
  b.setInsertionPointAfter(loop);
  auto narrowed = arith::TruncFOp::create(b, loc, narrow, result);
  result.replaceAllUsesExcept(narrowed, narrowed);
}

struct GroveWidenLoopAccumulatorsPass
    : grove::impl::GroveWidenLoopAccumulatorsBase<
          GroveWidenLoopAccumulatorsPass> {
  void runOnOperation() override {
    // Post-order: an inner loop is widened first, which leaves its parent's
    // accumulator read only through a widening and yielded narrowed, so the
    // parent widens too and the sum stays f32 across the whole nest.
    getOperation()->walk([](scf::ForOp loop) {
      for (unsigned i = 0, e = loop.getNumRegionIterArgs(); i < e; ++i)
        if (arith::TruncFOp trunc = getWidenableYield(loop, i))
          widen(loop, i, trunc);
    });
  }
};

} // namespace
