//===- CollapseLoopDims.cpp - Merge contiguous loops of linalg.generics ---===//
//
// Grove's tensors are NCHW and its elementwise ops are written over all four
// dimensions, so a late ResNet layer (7 x 7 images) would run its innermost
// loop 7 times: too short for the host vectorizer (and a delinearization per
// GPU thread). Adjacent loops whose dimensions are adjacent in every operand
// are one loop over the same memory; upstream's collapsing rewrites the op
// and views its operands and results through collapse/expand_shape.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Linalg/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVECOLLAPSELOOPDIMS
#include "grove/Dialect/Linalg/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;

namespace {

/// The maximal runs (two loops or more) of adjacent loops of `op` with one
/// iterator type that every indexing map keeps adjacent and in order.
SmallVector<ReassociationIndices> getCollapsibleRuns(linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || !generic.hasPureTensorSemantics())
    return {};
  for (Value operand : generic->getOperands())
    if (operand.getDefiningOp<tensor::ExtractSliceOp>())
      return {};
  // Windows (d0 + d2), constant indices and the like: not plain memory
  // walks, and upstream's contiguity check does not model them.
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (!llvm::all_of(maps,
                    [](AffineMap m) { return m.isProjectedPermutation(); }))
    return {};
  // A static zero loop runs nothing; collapsing it with a dynamic one would
  // type the merged size as a static 0 that memref.collapse_shape rejects.
  if (llvm::is_contained(generic.getStaticLoopRanges(), 0))
    return {};
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  SmallVector<ReassociationIndices> runs;
  ReassociationIndices run = {0};
  auto close = [&] {
    if (run.size() > 1)
      runs.push_back(run);
  };
  for (int64_t d = 1, e = generic.getNumLoops(); d < e; ++d) {
    ReassociationIndices longer(run);
    longer.push_back(d);
    if (iterators[d] == iterators[run.front()] &&
        linalg::areDimSequencesPreserved(maps, {longer})) {
      run = std::move(longer);
      continue;
    }
    close();
    run = {d};
  }
  close();
  return runs;
}

/// A broadcast operand of static size 1 read at constant 0 (a per-channel
/// C x 1 x 1 against N x C x H x W, as NumPy broadcasting spells it) is not
/// a projected permutation, so it kept every run from merging: the same
/// operand collapsed to the dimensions it is read along is.
struct DropBroadcastUnitDims : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Value> inputs(op.getInputs());
    bool changed = false;
    for (OpOperand *operand : op.getDpsInputOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand->get().getType());
      AffineMap map = maps[operand->getOperandNumber()];
      // A slice stays as it is, for the reason getCollapsibleRuns gives.
      if (!type || operand->get().getDefiningOp<tensor::ExtractSliceOp>())
        continue;
      SmallVector<int64_t> kept;
      for (auto [d, expr] : llvm::enumerate(map.getResults())) {
        auto constant = dyn_cast<AffineConstantExpr>(expr);
        if (!constant || constant.getValue() != 0 || type.getDimSize(d) != 1)
          kept.push_back(d);
      }
      if (kept.size() == map.getNumResults())
        continue;
      // Each dropped unit dimension joins the group of a kept neighbour
      // (the next one; the last group takes trailing ones).
      SmallVector<ReassociationIndices> groups;
      ReassociationIndices pending;
      for (int64_t d = 0, e = type.getRank(); d < e; ++d) {
        pending.push_back(d);
        if (llvm::is_contained(kept, d)) {
          groups.push_back(pending);
          pending.clear();
        }
      }
      if (!groups.empty())
        groups.back().append(pending.begin(), pending.end());
      SmallVector<int64_t> shape;
      SmallVector<AffineExpr> exprs;
      for (int64_t d : kept) {
        shape.push_back(type.getDimSize(d));
        exprs.push_back(map.getResult(d));
      }
      inputs[operand->getOperandNumber()] = tensor::CollapseShapeOp::create(
          rewriter, op.getLoc(), type.clone(shape), operand->get(), groups);
      maps[operand->getOperandNumber()] =
          AffineMap::get(map.getNumDims(), 0, exprs, op.getContext());
      changed = true;
    }
    if (!changed)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputsMutable().assign(inputs);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

struct GroveCollapseLoopDimsPass
    : grove::impl::GroveCollapseLoopDimsBase<GroveCollapseLoopDimsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DropBroadcastUnitDims>(&getContext());
    linalg::populateCollapseDimensions(patterns, getCollapsibleRuns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
