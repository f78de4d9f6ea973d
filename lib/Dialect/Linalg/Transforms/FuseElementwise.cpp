//===- FuseElementwise.cpp - Elementwise fusion that spares contractions --===//
//
// Upstream linalg-fuse-elementwise-ops also fuses an elementwise producer
// into a named contraction (the BN + ReLU before a 1x1 convolution's GEMM,
// an im2col before its GEMM), turning the contraction into a linalg.generic
// that no BLAS or cuBLAS call can take any more. Grove fuses into generics
// only and leaves matmuls, batch matmuls and convolutions named.
//
// State writes (grove.assign) are sinks of SSA values, so they move to the
// end of their block first: an elementwise producer whose other users all
// follow its consumer then fuses too, the fused op keeping its result
// (FuseIntoLaterUsers: an optimizer's new moments, written as state and read
// by the parameter's update, become one loop with the update).
//
// A full reduction to a scalar (a norm, a loss's sum) recomputes the
// elementwise ops it reads instead of reading their stored results
// (RecomputeIntoFullReduction): a LAMB step's update direction, both
// normed and applied, is then never stored; the norms are one pass over
// the parameter's data and the update a second one that also writes the
// moments (docs/training.md, "Bytes per parameter").
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "grove/Dialect/Linalg/Transforms/Passes.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEFUSEELEMENTWISE
#include "grove/Dialect/Linalg/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;

namespace {

/// Whether `fused` (a generic's operand) reads each element of its producer
/// once, at the point of the producer's loops: no recomputation when fused.
bool readsElementwise(OpOperand *fused) {
  auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner());
  return fused->get().getDefiningOp() && consumer &&
         consumer.getMatchingIndexingMap(fused).isPermutation();
}

/// An elementwise producer with users besides `fused`'s owner, all after
/// it in its block: the fused op keeps the producer's result (upstream's
/// preserved producer results) and those users read it, so the producer
/// runs once, inside the consumer's loop. (Upstream's pattern keeps such a
/// producer and recomputes it in the fused op.)
struct FuseIntoLaterUsers : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    // A full reduction recomputes instead (RecomputeIntoFullReduction): kept
    // here, the producer's whole result would be written by a loop that has
    // no parallel dimension to share or split.
    if (grove::isFullReduction(consumer))
      return failure();
    for (OpOperand &operand : consumer->getOpOperands()) {
      Operation *producer = operand.get().getDefiningOp();
      if (!producer || producer->hasOneUse() || !readsElementwise(&operand) ||
          !linalg::areElementwiseOpsFusable(&operand) ||
          !llvm::all_of(producer->getUsers(), [&](Operation *user) {
            return user == consumer.getOperation() ||
                   (user->getBlock() == consumer->getBlock() &&
                    consumer->isBeforeInBlock(user));
          }))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        return failure();
      for (auto [from, to] : fused->replacements)
        rewriter.replaceUsesWithIf(from, to, [&](OpOperand &use) {
          return use.getOwner() != fused->fusedOp;
        });
      rewriter.eraseOp(consumer);
      if (producer->use_empty())
        rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

/// A full reduction reading an elementwise op's result that other ops read
/// too: the reduction reads a copy of that op of its own, which the
/// elementwise fusion then folds into it, so the result need not be stored
/// for the reduction. The copy costs the producer's arithmetic once more
/// and the reduction reads the producer's inputs instead of its result
/// (LAMB's norm of u reads p, g, m and v: 16 bytes a float for 4), which
/// beats storing the result (a write and a read more) only where nothing
/// else needs it stored: every other user is a generic that can fuse it,
/// or a state write that another generic's result can take over.
/// Producers whose results the consumer reads twice are left alone (two
/// copies would be fused).
struct RecomputeIntoFullReduction : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (!grove::isFullReduction(consumer))
      return failure();
    for (OpOperand *operand : consumer.getDpsInputOperands()) {
      auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
      if (!producer || producer->hasOneUse() || !readsElementwise(operand) ||
          producer.getNumParallelLoops() != producer.getNumLoops() ||
          !linalg::areElementwiseOpsFusable(operand))
        continue;
      bool readOnce = llvm::count_if(consumer->getOperands(), [&](Value v) {
                        return v.getDefiningOp() == producer.getOperation();
                      }) == 1;
      bool othersFuse = llvm::all_of(producer->getUsers(), [&](Operation *u) {
        return u == consumer.getOperation() ||
               isa<linalg::GenericOp, grove::AssignOp>(u);
      });
      if (!readOnce || !othersFuse)
        continue;
      rewriter.setInsertionPoint(consumer);
      Operation *copy = rewriter.clone(*producer);
      rewriter.modifyOpInPlace(consumer, [&] {
        operand->set(
            copy->getResult(cast<OpResult>(operand->get()).getResultNumber()));
      });
      return success();
    }
    return failure();
  }
};

/// Full reductions as generics, which elementwise fusion can fold
/// producers into (it takes no named op).
void generalizeFullReductions(Operation *root) {
  IRRewriter rewriter(root->getContext());
  SmallVector<linalg::ReduceOp> reduces;
  root->walk([&](linalg::ReduceOp op) {
    if (grove::isFullReduction(op))
      reduces.push_back(op);
  });
  for (linalg::ReduceOp op : reduces) {
    rewriter.setInsertionPoint(op);
    (void)linalg::generalizeNamedOp(rewriter, op);
  }
}

struct GroveFuseElementwisePass
    : grove::impl::GroveFuseElementwiseBase<GroveFuseElementwisePass> {
  void runOnOperation() override {
    getOperation()->walk([](Block *block) { grove::sinkStateWrites(*block); });
    generalizeFullReductions(getOperation());
    // Upstream's patterns with a policy under which nothing is recomputed:
    // the producer has one use, and for elementwise fusion the consumer (a
    // generic) also reads each of its elements once. A consumer that
    // broadcasts the operand (its map skips some of its loops: a per-channel
    // BN before a small FC written as a reduction generic) would redo the
    // producer's body at every point of the skipped loops.
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse() &&
             isa<linalg::GenericOp>(fused->getOwner());
    };
    linalg::ControlFusionFn elementwise = [control](OpOperand *fused) {
      return control(fused) && readsElementwise(fused);
    };
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, elementwise);
    patterns.add<FuseIntoLaterUsers, RecomputeIntoFullReduction>(&getContext());
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    linalg::populateConstantFoldLinalgOperations(patterns, control);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
