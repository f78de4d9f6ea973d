//===- LinalgToGPULaunch.cpp - one gpu.launch per memref linalg op --------===//
//
// Grove's shapes are dynamic in the batch dimension, so the thread-level
// bounds that upstream convert-parallel-loops-to-gpu needs are not static.
// Instead each op's parallel iteration space is linearized: thread `g` of a
// 1-D grid computes the point `delinearize(g)`, innermost index fastest, so
// neighbouring threads touch neighbouring elements (coalesced loads and
// stores). Reduction loops stay sequential inside the thread.
//
//===----------------------------------------------------------------------===//

#include "grove/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::grove {
#define GEN_PASS_DEF_CONVERTLINALGTOGPULAUNCH
#include "grove/Conversion/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

/// An empty launch of `grid` x `block` threads (1-D) before the rewriter's
/// insertion point; the insertion point moves to the start of its body.
gpu::LaunchOp createLaunch(RewriterBase &rewriter, Location loc, Value grid,
                           Value block) {
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto launch =
      gpu::LaunchOp::create(rewriter, loc, grid, one, one, block, one, one);
  Block &body = launch.getBody().front();
  rewriter.setInsertionPointToEnd(&body);
  gpu::TerminatorOp::create(rewriter, loc);
  rewriter.setInsertionPointToStart(&body);
  return launch;
}

/// Replaces the scf.parallel `par` (lower bounds, steps and upper bounds
/// defined above it) by a launch with one thread per iteration.
void linearize(RewriterBase &rewriter, scf::ParallelOp par,
               int64_t blockSize) {
  Location loc = par.getLoc();
  rewriter.setInsertionPoint(par);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value total = one;
  SmallVector<Value> counts;
  for (auto [lb, ub, step] : llvm::zip(par.getLowerBound(),
                                       par.getUpperBound(), par.getStep())) {
    Value extent = arith::SubIOp::create(rewriter, loc, ub, lb);
    Value count = arith::CeilDivUIOp::create(rewriter, loc, extent, step);
    counts.push_back(count);
    total = arith::MulIOp::create(rewriter, loc, total, count);
  }
  Value block = arith::ConstantIndexOp::create(rewriter, loc, blockSize);
  Value grid = arith::CeilDivUIOp::create(rewriter, loc, total, block);

  gpu::LaunchOp launch = createLaunch(rewriter, loc, grid, block);
  Value base =
      arith::MulIOp::create(rewriter, loc, launch.getBlockIds().x, block);
  Value gid =
      arith::AddIOp::create(rewriter, loc, base, launch.getThreadIds().x);
  Value inRange = arith::CmpIOp::create(rewriter, loc,
                                        arith::CmpIPredicate::ult, gid, total);
  auto guard = scf::IfOp::create(rewriter, loc, inRange,
                                 /*withElseRegion=*/false);
  rewriter.setInsertionPointToStart(&guard.getThenRegion().front());
  auto point = affine::AffineDelinearizeIndexOp::create(rewriter, loc, gid,
                                                        ValueRange(counts));
  IRMapping mapping;
  for (auto [iv, idx, lb, step] :
       llvm::zip(par.getInductionVars(), point.getResults(),
                 par.getLowerBound(), par.getStep())) {
    Value scaled = arith::MulIOp::create(rewriter, loc, idx, step);
    mapping.map(iv, arith::AddIOp::create(rewriter, loc, lb, scaled));
  }
  for (Operation &op : par.getBody()->without_terminator())
    rewriter.clone(op, mapping);
  rewriter.eraseOp(par);
}

LogicalResult convertToKernel(RewriterBase &rewriter, linalg::LinalgOp op,
                              int64_t blockSize) {
  if (!op.hasPureBufferSemantics())
    return op.emitOpError("expected memref operands after bufferization");
  rewriter.setInsertionPoint(op);
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
    if (failed(g))
      return op.emitOpError("cannot be generalized for the GPU");
    generic = *g;
  }

  // Parallel loops outermost, in their original order, then reductions.
  SmallVector<unsigned> order;
  SmallVector<utils::IteratorType> iters = generic.getIteratorTypesArray();
  for (auto [i, it] : llvm::enumerate(iters))
    if (it == utils::IteratorType::parallel)
      order.push_back(i);
  size_t numParallel = order.size();
  for (auto [i, it] : llvm::enumerate(iters))
    if (it != utils::IteratorType::parallel)
      order.push_back(i);
  if (!llvm::equal(order, llvm::seq<unsigned>(0, order.size()))) {
    FailureOr<linalg::GenericOp> g =
        linalg::interchangeGenericOp(rewriter, generic, order);
    if (failed(g))
      return generic.emitOpError("cannot move its parallel loops outermost");
    generic = *g;
  }

  if (numParallel == 0) {
    // Nothing to spread (a rank-0 result, or a full reduction): one thread.
    Location loc = generic.getLoc();
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    gpu::LaunchOp launch = createLaunch(rewriter, loc, one, one);
    rewriter.moveOpBefore(generic, launch.getBody().front().getTerminator());
    rewriter.setInsertionPoint(generic);
    if (failed(linalg::linalgOpToLoops(rewriter, generic)))
      return generic.emitOpError("cannot be lowered to loops");
    rewriter.eraseOp(generic);
    return success();
  }

  FailureOr<linalg::LinalgLoops> loops =
      linalg::linalgOpToParallelLoops(rewriter, generic);
  if (failed(loops) || loops->empty())
    return generic.emitOpError("cannot be lowered to parallel loops");
  auto par = dyn_cast<scf::ParallelOp>(loops->front());
  if (!par || par.getNumLoops() != numParallel)
    return generic.emitOpError("expected one scf.parallel over its ")
           << numParallel << " parallel loops";
  rewriter.eraseOp(generic);
  linearize(rewriter, par, blockSize);
  return success();
}

struct ConvertLinalgToGPULaunchPass
    : grove::impl::ConvertLinalgToGPULaunchBase<ConvertLinalgToGPULaunchPass> {
  using Base::Base;
  void runOnOperation() override {
    if (blockSize <= 0 || blockSize > 1024) {
      getOperation().emitError("block-size must be in [1, 1024], got ")
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op->getParentOfType<gpu::LaunchOp>())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops)
      if (failed(convertToKernel(rewriter, op, blockSize)))
        return signalPassFailure();
  }
};

} // namespace
