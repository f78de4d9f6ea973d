//===- LoopHints.cpp - Vectorize, not unroll, innermost host loops --------===//
//
// LLVM's full unroller runs before its loop vectorizer: an innermost loop
// with a small constant trip count (an image row) becomes scalar straight-line
// code that nothing vectorizes afterwards. And the vectorizer gives up on a
// memref loop whose addresses it cannot bound for run-time alias checks
// ("cannot identify array bounds"), which is most of them. Linalg knows
// better: the iterations of a parallel dimension are independent, and a
// reduction's output aliases none of its inputs. These two passes carry that
// to LLVM: accumulators become loop-carried values, and loop metadata says
// unroll disabled and, for parallel loops, lists an access group in
// llvm.loop.parallel_accesses.
//
//===----------------------------------------------------------------------===//

#include "HostLoops.h"
#include "grove/Codegen/Passes.h"

#include "mlir/Analysis/CFGLoopInfo.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEHOSTLOOPHINTS
#define GEN_PASS_DEF_GROVEHOSTLOOPMETADATA
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;

namespace {
/// The discardable attribute scf-to-cf moves from a loop to its back edge.
constexpr StringLiteral kAnnotation = "llvm.loop_annotation";

bool hasNestedLoop(Operation *loop) {
  WalkResult result = loop->walk([&](LoopLikeOpInterface nested) {
    return nested.getOperation() == loop ? WalkResult::advance()
                                         : WalkResult::interrupt();
  });
  return result.wasInterrupted();
}

/// Vector accumulators LLVM keeps for a floating-point sum it may reorder.
/// On its own it keeps one in a nested loop (MaxNestedScalarReductionIC),
/// so each iteration waits for the previous add: a pooling sum over an
/// image then runs at one vector per add latency, a third of what the
/// loads could deliver from cache.
constexpr int64_t kReductionInterleave = 4;
/// Shorter constant trip counts get no interleaving: with AVX-512 four
/// accumulators span 64 elements, and a 7x7 image would never enter the
/// vector loop.
constexpr int64_t kMinInterleaveTrips = 128;

LLVM::LoopAnnotationAttr makeAnnotation(MLIRContext *ctx,
                                        ArrayRef<LLVM::AccessGroupAttr> groups,
                                        int64_t interleave = 0) {
  LLVM::LoopInterleaveAttr interleaveAttr;
  if (interleave)
    interleaveAttr = LLVM::LoopInterleaveAttr::get(
        ctx, IntegerAttr::get(IntegerType::get(ctx, 32), interleave));
  auto unroll = LLVM::LoopUnrollAttr::get(
      ctx, /*disable=*/BoolAttr::get(ctx, true), /*count=*/{},
      /*runtimeDisable=*/{}, /*full=*/{}, /*followupUnrolled=*/{},
      /*followupRemainder=*/{}, /*followupAll=*/{});
  return LLVM::LoopAnnotationAttr::get(
      ctx, /*disableNonforced=*/{}, /*vectorize=*/{}, interleaveAttr, unroll,
      /*unrollAndJam=*/{}, /*licm=*/{}, /*distribute=*/{},
      /*pipeline=*/{}, /*peeled=*/{}, /*unswitch=*/{}, /*mustProgress=*/{},
      /*isVectorized=*/{}, /*startLoc=*/{}, /*endLoc=*/{}, groups);
}

/// Iterations of the innermost dimension write disjoint elements: the body
/// only loads, stores with that induction variable among the indices, and
/// computes without side effects.
bool writesDisjointElements(scf::ParallelOp loop) {
  Value iv = loop.getInductionVars().back();
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (auto store = dyn_cast<memref::StoreOp>(op))
      return llvm::is_contained(store.getIndices(), iv)
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    if (isa<memref::LoadOp, scf::ReduceOp>(op) || isMemoryEffectFree(op))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !result.wasInterrupted();
}

/// Whether `loop` carries a floating-point accumulator whose update may be
/// reassociated (a linalg reduction's, after promoteAccumulator), so that
/// LLVM may split it into several partial sums.
bool hasReassociableSum(scf::ForOp loop) {
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  return llvm::any_of(yield.getOperands(), [](Value v) {
    auto fastMath = v.getDefiningOp<arith::ArithFastMathInterface>();
    return fastMath && isa<FloatType>(getElementTypeOrSelf(v.getType())) &&
           bitEnumContainsAll(fastMath.getFastMathFlagsAttr().getValue(),
                              arith::FastMathFlags::reassoc);
  });
}

/// Whether an innermost loop over [lb, ub) by step is long enough to keep
/// rolled (unknown counts are).
bool worthVectorizing(Value lb, Value ub, Value step, int64_t minTripCount) {
  std::optional<int64_t> trips = grove::constantTripCount(lb, ub, step);
  return !trips || *trips >= minTripCount;
}

/// Rewrites `loop` as nested scf.for loops, the innermost annotated (when
/// `annotation` is set).
void toAnnotatedFors(scf::ParallelOp loop,
                     LLVM::LoopAnnotationAttr annotation) {
  OpBuilder b(loop);
  IRMapping map;
  scf::ForOp innermost;
  for (auto [lb, ub, step, iv] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
                 loop.getInductionVars())) {
    innermost = scf::ForOp::create(b, loop.getLoc(), lb, ub, step);
    map.map(iv, innermost.getInductionVar());
    b.setInsertionPointToStart(innermost.getBody());
  }
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, map);
  if (annotation)
    innermost->setAttr(kAnnotation, annotation);
  loop.erase();
}

/// The single store of `loop` whose accumulator can live in a register:
/// `for { x = load M[I]; ...; store y, M[I] }` with M and I defined outside
/// the loop, that load the only access to M, and nothing else in the loop
/// writing memory, no other load from a view of M's buffer. Linalg's
/// reductions lower to exactly this, and LLVM cannot keep the accumulator in
/// a register itself: it cannot prove that the loop's other loads do not
/// alias M. Buffers that are distinct values here (function arguments of an
/// outlined loop, say) are taken not to overlap M: bufferization never lets
/// a linalg reduction's output alias its inputs, and these loops come from
/// linalg. For the same reason I is a valid index even when the loop runs no
/// iteration (the enclosing loops range over M's dimensions).
/// grove-outline-parallel-loops rebuilds views inside the functions it
/// creates, so the views of one buffer still share a root there.
std::optional<std::pair<memref::LoadOp, memref::StoreOp>>
findAccumulator(scf::ForOp loop) {
  Block *body = loop.getBody();
  memref::StoreOp store;
  for (Operation &op : body->without_terminator())
    if (auto s = dyn_cast<memref::StoreOp>(op)) {
      if (store)
        return std::nullopt;
      store = s;
    }
  if (!store || !loop.isDefinedOutsideOfLoop(store.getMemRef()) ||
      !llvm::all_of(store.getIndices(),
                    [&](Value v) { return loop.isDefinedOutsideOfLoop(v); }))
    return std::nullopt;
  memref::LoadOp load;
  Value root = grove::getViewRoot(store.getMemRef());
  WalkResult result = body->walk([&](Operation *op) {
    if (auto s = dyn_cast<memref::StoreOp>(op))
      return s == store ? WalkResult::advance() : WalkResult::interrupt();
    if (auto l = dyn_cast<memref::LoadOp>(op)) {
      if (l.getMemRef() != store.getMemRef())
        return grove::getViewRoot(l.getMemRef()) == root
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      if (load || l->getBlock() != body || !l->isBeforeInBlock(store) ||
          l.getIndices() != store.getIndices())
        return WalkResult::interrupt();
      load = l;
      return WalkResult::advance();
    }
    if (op->getNumRegions() > 0 || isa<scf::YieldOp>(op) ||
        isMemoryEffectFree(op))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  if (result.wasInterrupted() || !load)
    return std::nullopt;
  return std::make_pair(load, store);
}

/// load before the loop, the accumulator as an iter_arg, store after.
void promoteAccumulator(scf::ForOp loop, memref::LoadOp load,
                        memref::StoreOp store) {
  IRRewriter rewriter(loop.getContext());
  Location loc = loop.getLoc();
  Value memref = store.getMemRef();
  SmallVector<Value> indices(store.getIndices());
  rewriter.setInsertionPoint(loop);
  Value init = memref::LoadOp::create(rewriter, loc, memref, indices);
  Value stored = store.getValueToStore();
  FailureOr<LoopLikeOpInterface> replaced =
      cast<LoopLikeOpInterface>(loop.getOperation())
          .replaceWithAdditionalYields(
              rewriter, ValueRange{init},
              /*replaceInitOperandUsesInLoop=*/false,
              [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
                return SmallVector<Value>{stored};
              });
  if (failed(replaced))
    return;
  auto promoted = cast<scf::ForOp>(replaced->getOperation());
  rewriter.replaceAllUsesWith(load.getResult(),
                              promoted.getRegionIterArgs().back());
  rewriter.eraseOp(load);
  rewriter.eraseOp(store);
  rewriter.setInsertionPointAfter(promoted);
  memref::StoreOp::create(rewriter, loc, promoted.getResults().back(), memref,
                          indices);
}

struct GroveHostLoopHintsPass
    : grove::impl::GroveHostLoopHintsBase<GroveHostLoopHintsPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // Reduction accumulators into registers, innermost loops first so that
    // the enclosing loop then sees load / loop / store and is promoted too.
    SmallVector<scf::ForOp> fors;
    getOperation()->walk([&](scf::ForOp loop) { fors.push_back(loop); });
    for (scf::ForOp loop : fors)
      if (auto accumulator = findAccumulator(loop))
        promoteAccumulator(loop, accumulator->first, accumulator->second);

    auto unrollOnly = makeAnnotation(ctx, {});
    // Innermost parallel loops become loops the hints can sit on; the outer
    // ones are left to scf-parallel-for-to-nested-fors.
    SmallVector<scf::ParallelOp> parallel;
    getOperation()->walk([&](scf::ParallelOp loop) {
      if (loop.getNumResults() == 0 && !hasNestedLoop(loop))
        parallel.push_back(loop);
    });
    for (scf::ParallelOp loop : parallel) {
      // Short rows (a 7-wide image) are better fully unrolled: no annotation.
      LLVM::LoopAnnotationAttr annotation;
      if (worthVectorizing(loop.getLowerBound().back(),
                           loop.getUpperBound().back(), loop.getStep().back(),
                           minTripCount))
        annotation =
            writesDisjointElements(loop)
                ? makeAnnotation(
                      ctx, LLVM::AccessGroupAttr::get(
                               ctx, DistinctAttr::create(UnitAttr::get(ctx))))
                : unrollOnly;
      toAnnotatedFors(loop, annotation);
    }

    getOperation()->walk([&](scf::ForOp loop) {
      if (loop->hasAttr(kAnnotation) || hasNestedLoop(loop) ||
          !worthVectorizing(loop.getLowerBound(), loop.getUpperBound(),
                            loop.getStep(), minTripCount))
        return;
      bool interleave =
          hasReassociableSum(loop) &&
          worthVectorizing(loop.getLowerBound(), loop.getUpperBound(),
                           loop.getStep(), kMinInterleaveTrips);
      loop->setAttr(kAnnotation,
                    interleave ? makeAnnotation(ctx, {}, kReductionInterleave)
                               : unrollOnly);
    });
  }
};

struct GroveHostLoopMetadataPass
    : grove::impl::GroveHostLoopMetadataBase<GroveHostLoopMetadataPass> {
  void runOnOperation() override {
    getOperation()->walk([&](LLVM::LLVMFuncOp fn) {
      if (!fn.isExternal())
        attach(fn);
    });
  }

  void attach(LLVM::LLVMFuncOp fn) {
    DominanceInfo dominance;
    std::unique_ptr<CFGLoopInfo> loops;
    fn.walk([&](Operation *op) {
      auto annotation =
          op->getAttrOfType<LLVM::LoopAnnotationAttr>(kAnnotation);
      if (!annotation)
        return;
      op->removeAttr(kAnnotation);
      if (auto br = dyn_cast<LLVM::BrOp>(op))
        br.setLoopAnnotationAttr(annotation);
      else if (auto condBr = dyn_cast<LLVM::CondBrOp>(op))
        condBr.setLoopAnnotationAttr(annotation);
      else
        return;
      ArrayRef<LLVM::AccessGroupAttr> groups = annotation.getParallelAccesses();
      if (groups.empty())
        return;
      if (!loops)
        loops =
            std::make_unique<CFGLoopInfo>(dominance.getDomTree(&fn.getBody()));
      // The branch is the back edge; its loop is the one headed by the
      // successor it jumps back to.
      for (Block *header : op->getSuccessors()) {
        CFGLoop *loop = loops->getLoopFor(header);
        if (!loop || loop->getHeader() != header ||
            !loop->contains(op->getBlock()))
          continue;
        for (Block *block : loop->getBlocks())
          for (Operation &inner : *block)
            if (auto access = dyn_cast<LLVM::AccessGroupOpInterface>(inner))
              addGroups(access, groups);
      }
    });
  }

  static void addGroups(LLVM::AccessGroupOpInterface access,
                        ArrayRef<LLVM::AccessGroupAttr> groups) {
    SmallVector<Attribute> all;
    if (ArrayAttr existing = access.getAccessGroupsOrNull())
      all.append(existing.begin(), existing.end());
    all.append(groups.begin(), groups.end());
    access.setAccessGroups(ArrayAttr::get(access->getContext(), all));
  }
};
} // namespace
