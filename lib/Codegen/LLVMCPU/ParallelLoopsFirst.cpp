//===- ParallelLoopsFirst.cpp - A reduction's parallel loops outermost ----===//
//
// The host's thread team shares outermost scf.parallel loops only. A
// reduction written over its operand's dimensions in order (NCHW batch
// statistics reduce N, H, W around C) lowers to a loop nest that starts
// with a sequential scf.for, so it ran on one thread while the others
// waited; interchanged, its parallel loops lead. (The GPU's launch puts
// parallel loops outermost itself, LinalgToGPULaunch.cpp.)
//
//===----------------------------------------------------------------------===//

#include "grove/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEPARALLELLOOPSFIRST
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;

namespace {

/// The loops of `op` with its parallel ones first (each group in its
/// order), or nothing when they lead already or the innermost loop is
/// parallel (the contiguous walk would become strided).
SmallVector<unsigned> getParallelFirstOrder(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  // The innermost loop that walks memory: unit loops (the 1 x 1 of a
  // pooled N x C x 1 x 1) do not.
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t inner = static_cast<int64_t>(iters.size()) - 1;
  while (inner >= 0 && ranges[inner] == 1)
    --inner;
  if (inner < 0 || iters[inner] != utils::IteratorType::reduction)
    return {};
  SmallVector<unsigned> order;
  for (auto [d, it] : llvm::enumerate(iters))
    if (it == utils::IteratorType::parallel)
      order.push_back(d);
  if (order.empty() || llvm::equal(order, llvm::seq<unsigned>(order.size())))
    return {};
  for (auto [d, it] : llvm::enumerate(iters))
    if (it == utils::IteratorType::reduction)
      order.push_back(d);
  return order;
}

/// Runs (two loops or more) of adjacent reduction loops that every operand
/// walks contiguously (H and W of an NCHW operand), for one loop of H·W
/// iterations the vectorizer can take (grove-collapse-loop-dims merges
/// such runs before bufferization, but only in generics; these were
/// linalg.reduce ops then).
SmallVector<ReassociationIndices> getReductionRuns(linalg::GenericOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(maps,
                    [](AffineMap m) { return m.isProjectedPermutation(); }) ||
      llvm::is_contained(op.getStaticLoopRanges(), 0))
    return {};
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  SmallVector<ReassociationIndices> runs;
  ReassociationIndices run;
  auto close = [&] {
    if (run.size() > 1)
      runs.push_back(run);
    run.clear();
  };
  for (int64_t d = 0, e = op.getNumLoops(); d < e; ++d) {
    if (iters[d] != utils::IteratorType::reduction) {
      close();
      continue;
    }
    ReassociationIndices longer(run);
    longer.push_back(d);
    if (run.empty() || linalg::areDimSequencesPreserved(maps, {longer})) {
      run = std::move(longer);
      continue;
    }
    close();
    run = {d};
  }
  close();
  return runs;
}

struct GroveParallelLoopsFirstPass
    : grove::impl::GroveParallelLoopsFirstBase<GroveParallelLoopsFirstPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa<linalg::GenericOp, linalg::ReduceOp>(op.getOperation()) &&
          op.hasPureBufferSemantics() && !getParallelFirstOrder(op).empty())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      SmallVector<unsigned> order = getParallelFirstOrder(op);
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> g =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(g))
          continue;
        generic = *g;
      }
      // A permutation of the op's loops: upstream fails on nothing else.
      FailureOr<linalg::GenericOp> moved =
          linalg::interchangeGenericOp(rewriter, generic, order);
      if (failed(moved))
        continue;
      SmallVector<ReassociationIndices> runs = getReductionRuns(*moved);
      if (runs.empty())
        continue;
      // Fails, leaving the op as it is, where a buffer is not contiguous
      // in those dimensions (a strided view).
      rewriter.setInsertionPoint(*moved);
      // On buffers the collapsed op has no results and takes the region.
      if (succeeded(linalg::collapseOpIterationDims(
              cast<linalg::LinalgOp>(moved->getOperation()), runs, rewriter)))
        rewriter.eraseOp(*moved);
    }
  }
};

} // namespace
