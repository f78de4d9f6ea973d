//===- LinalgToGPULaunch.cpp - one gpu.launch per memref linalg op --------===//
//
// Grove's shapes are dynamic in the batch dimension, so the thread-level
// bounds that upstream convert-parallel-loops-to-gpu needs are not static.
// Instead each op's parallel iteration space is linearized: thread `g` of a
// 1-D grid computes the point `delinearize(g)`, innermost index fastest, so
// neighbouring threads touch neighbouring elements (coalesced loads and
// stores). Reduction loops stay sequential inside the thread and carry their
// accumulators in registers (as loop iter_args): written as loads and stores
// of the output, LLVM could not keep them in registers, since the output
// may alias an input as far as it knows. A fill that only initialises such a
// reduction's output (a pooled sum, a small FC) is folded into it: the
// accumulators start from the fill's value, one kernel fewer.
//
// A long reduction along the inputs' innermost (contiguous) dimension - a
// softmax row, a global pool over H*W, an FC over channels - takes a warp
// per output point instead: a thread per point would walk its row alone
// while its neighbours read rows H*W elements away (one cache line per
// element and thread), and the few points of a pooled layer would leave
// most of the GPU idle. The 32 lanes stride the reduction together
// (coalesced), then combine their partial results with one
// gpu.subgroup_reduce (upstream lowers it to a shuffle butterfly).
//
//===----------------------------------------------------------------------===//

#include "grove/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <limits>

namespace mlir::grove {
#define GEN_PASS_DEF_CONVERTLINALGTOGPULAUNCH
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

/// An empty launch of `grid` x `block` threads (1-D) before the rewriter's
/// insertion point; the insertion point moves to the start of its body.
/// `kind` (map, reduce, warp_reduce, serial) stands in the launch's
/// `function` attribute until nameKernels gives the kernel its name.
gpu::LaunchOp createLaunch(RewriterBase &rewriter, Location loc, Value grid,
                           Value block, StringRef kind) {
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto launch =
      gpu::LaunchOp::create(rewriter, loc, grid, one, one, block, one, one);
  launch.setFunctionAttr(FlatSymbolRefAttr::get(rewriter.getContext(), kind));
  Block &body = launch.getBody().front();
  rewriter.setInsertionPointToEnd(&body);
  gpu::TerminatorOp::create(rewriter, loc);
  rewriter.setInsertionPointToStart(&body);
  return launch;
}

/// `linear` (less than `bound`, the product of `sizes`) as a point of
/// `sizes`, innermost index fastest. Where `bound` fits in 32 bits the
/// divisions are 32-bit, behind a branch that is uniform across the grid
/// (decided at compile time when `bound` folds to a constant): a 64-bit
/// division by a constant is a 64x64-bit multiply-high that the GPU emulates
/// with several 32-bit ones, and those divisions, not memory, bounded the
/// index-heavy kernels (an im2col's 6-D point, docs/gpu-results.md).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<Value> sizes, Value bound,
                               bool narrowIndices) {
  auto wide = [&](OpBuilder &nb) {
    return SmallVector<Value>(
        affine::AffineDelinearizeIndexOp::create(nb, loc, linear, sizes)
            .getResults());
  };
  auto narrow = [&](OpBuilder &nb) {
    Type i32 = nb.getI32Type();
    Value rest = arith::IndexCastUIOp::create(nb, loc, i32, linear);
    SmallVector<Value> point(sizes.size());
    for (size_t d = sizes.size(); d-- > 1;) {
      Value size = arith::IndexCastUIOp::create(nb, loc, i32, sizes[d]);
      point[d] = arith::IndexCastUIOp::create(
          nb, loc, nb.getIndexType(),
          arith::RemUIOp::create(nb, loc, rest, size));
      rest = arith::DivUIOp::create(nb, loc, rest, size);
    }
    point[0] = arith::IndexCastUIOp::create(nb, loc, nb.getIndexType(), rest);
    return point;
  };
  constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
  if (sizes.empty())
    return {};
  if (!narrowIndices)
    return wide(b);
  if (std::optional<int64_t> c = getConstantIntValue(bound))
    return *c <= kI32Max ? narrow(b) : wide(b);
  Value fits =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, bound,
                            arith::ConstantIndexOp::create(b, loc, kI32Max));
  auto branch = scf::IfOp::create(
      b, loc, fits,
      [&](OpBuilder &nb, Location) {
        scf::YieldOp::create(nb, loc, narrow(nb));
      },
      [&](OpBuilder &nb, Location) {
        scf::YieldOp::create(nb, loc, wide(nb));
      });
  return SmallVector<Value>(branch.getResults());
}

/// Replaces the scf.parallel `par` (lower bounds, steps and upper bounds
/// defined above it) by a launch with one thread per iteration.
void linearize(RewriterBase &rewriter, scf::ParallelOp par, int64_t blockSize,
               bool narrowIndices) {
  Location loc = par.getLoc();
  rewriter.setInsertionPoint(par);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value total = one;
  SmallVector<Value> counts;
  for (auto [lb, ub, step] :
       llvm::zip(par.getLowerBound(), par.getUpperBound(), par.getStep())) {
    // Folded where static, so that delinearize sees a constant bound.
    Value extent = rewriter.createOrFold<arith::SubIOp>(loc, ub, lb);
    Value count = rewriter.createOrFold<arith::CeilDivUIOp>(loc, extent, step);
    counts.push_back(count);
    total = rewriter.createOrFold<arith::MulIOp>(loc, total, count);
  }
  Value block = arith::ConstantIndexOp::create(rewriter, loc, blockSize);
  Value grid = arith::CeilDivUIOp::create(rewriter, loc, total, block);

  gpu::LaunchOp launch = createLaunch(rewriter, loc, grid, block, "map");
  Value base =
      arith::MulIOp::create(rewriter, loc, launch.getBlockIds().x, block);
  Value gid =
      arith::AddIOp::create(rewriter, loc, base, launch.getThreadIds().x);
  Value inRange = arith::CmpIOp::create(rewriter, loc,
                                        arith::CmpIPredicate::ult, gid, total);
  auto guard = scf::IfOp::create(rewriter, loc, inRange,
                                 /*withElseRegion=*/false);
  rewriter.setInsertionPointToStart(&guard.getThenRegion().front());
  SmallVector<Value> point =
      delinearize(rewriter, loc, gid, counts, total, narrowIndices);
  IRMapping mapping;
  for (auto [iv, idx, lb, step] : llvm::zip(
           par.getInductionVars(), point, par.getLowerBound(), par.getStep())) {
    Value scaled = arith::MulIOp::create(rewriter, loc, idx, step);
    mapping.map(iv, arith::AddIOp::create(rewriter, loc, lb, scaled));
  }
  for (Operation &op : par.getBody()->without_terminator())
    rewriter.clone(op, mapping);
  rewriter.eraseOp(par);
}

/// True when every output is indexed by parallel loops only (the first
/// `numParallel` after interchange) and is not also an input: then one
/// thread owns each output element and can keep it in a register across the
/// reduction loops without changing what the loops compute.
bool threadOwnsOutputs(linalg::GenericOp op, unsigned numParallel) {
  for (OpOperand &init : op.getDpsInitsMutable()) {
    for (AffineExpr e : op.getMatchingIndexingMap(&init).getResults())
      for (unsigned d = numParallel; d < op.getNumLoops(); ++d)
        if (e.isFunctionOfDim(d))
          return false;
    for (OpOperand *input : op.getDpsInputOperands())
      if (input->get() == init.get())
        return false;
  }
  return true;
}

/// Each parallel loop must index every output, or several threads would
/// write one element.
LogicalResult checkNoRace(linalg::GenericOp op, unsigned numParallel) {
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    for (unsigned d = 0; d < numParallel; ++d)
      if (!map.isFunctionOfDim(d))
        return op.emitOpError("output #")
               << init.getOperandNumber() - op.getNumDpsInputs()
               << " is not indexed by parallel loop " << d
               << ": threads would race on it";
  }
  return success();
}

/// The linalg.fill that initialises `init`'s buffer (an allocation of this
/// function) for `op`, when nothing else touches the buffer between the two
/// and `op` writes all of it (each thread stores its output point, and the
/// output map is a projected permutation): the kernel can then start its
/// accumulators from the fill's value, and the fill, a kernel of its own,
/// goes.
linalg::FillOp getFoldableFill(linalg::GenericOp op, OpOperand &init) {
  Value buffer = init.get();
  if (!buffer.getDefiningOp<memref::AllocOp>() ||
      !op.getMatchingIndexingMap(&init).isProjectedPermutation())
    return {};
  Block *block = op->getBlock();
  linalg::FillOp fill;
  for (Operation *user : buffer.getUsers()) {
    if (user == op)
      continue;
    auto candidate = dyn_cast<linalg::FillOp>(user);
    if (candidate && !fill && candidate->getBlock() == block &&
        candidate->isBeforeInBlock(op) &&
        candidate.getDpsInputs()[0].getType() ==
            cast<MemRefType>(buffer.getType()).getElementType()) {
      fill = candidate;
      continue;
    }
    // Any other use (a view, a kernel, a dealloc) must come after `op`.
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (!ancestor || !op->isBeforeInBlock(ancestor))
      return {};
  }
  return fill;
}

/// The extent of each of `op`'s loops, as index values.
SmallVector<Value> getLoopSizes(OpBuilder &b, Location loc,
                                linalg::GenericOp op) {
  SmallVector<Value> sizes;
  auto structured = cast<linalg::LinalgOp>(op.getOperation());
  for (Range r : structured.createLoopRanges(b, loc))
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
  return sizes;
}

/// The indices of `operand` of `op` at the loop point `ivs`.
SmallVector<Value> accessAt(OpBuilder &b, Location loc, linalg::GenericOp op,
                            OpOperand &operand, ValueRange ivs) {
  return *affine::expandAffineMap(b, loc, op.getMatchingIndexingMap(&operand),
                                  ivs);
}

/// What output `init` of `op` starts from at `outputIvs`: `start` (a
/// folded fill's value) when there is one, else its stored element.
Value getStartValue(OpBuilder &b, Location loc, linalg::GenericOp op,
                    OpOperand &init, Value start, ValueRange outputIvs) {
  if (start)
    return start;
  return memref::LoadOp::create(b, loc, init.get(),
                                accessAt(b, loc, op, init, outputIvs));
}

/// `op`'s body at the loop point `ivs`: the inputs loaded there (scalars,
/// such as a fill's value, used as they are), the outputs' block arguments
/// bound to `accumulators`; returns the yielded values.
SmallVector<Value> emitBodyAt(OpBuilder &b, Location loc, linalg::GenericOp op,
                              ValueRange ivs, ValueRange accumulators) {
  Block &body = op.getRegion().front();
  IRMapping mapping;
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value value = input->get();
    if (isa<MemRefType>(value.getType()))
      value = memref::LoadOp::create(b, loc, value,
                                     accessAt(b, loc, op, *input, ivs));
    mapping.map(body.getArgument(input->getOperandNumber()), value);
  }
  for (auto [k, acc] : llvm::enumerate(accumulators))
    mapping.map(body.getArgument(op.getNumDpsInputs() + k), acc);
  for (Operation &inner : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  SmallVector<Value> results;
  for (Value v : body.getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(v));
  return results;
}

/// Emits `op` (parallel loops first) as one launch: a thread per point of
/// the parallel space, a loop nest over the reduction dimensions whose
/// iter_args are the outputs, loads of the inputs at each point and one
/// store per output at the end. An output with a non-null `starts` entry
/// starts from that value instead of a load.
LogicalResult emitKernel(RewriterBase &rewriter, linalg::GenericOp op,
                         unsigned numParallel, int64_t blockSize,
                         bool narrowIndices, ArrayRef<Value> starts) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> sizes = getLoopSizes(rewriter, loc, op);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  bool reduces = numParallel < op.getNumLoops();
  Value total = one;
  for (unsigned d = 0; d < numParallel; ++d)
    total = rewriter.createOrFold<arith::MulIOp>(loc, total, sizes[d]);
  Value block = arith::ConstantIndexOp::create(rewriter, loc,
                                               numParallel ? blockSize : 1);
  Value grid =
      numParallel
          ? arith::CeilDivUIOp::create(rewriter, loc, total, block).getResult()
          : one;

  gpu::LaunchOp launch = createLaunch(rewriter, loc, grid, block,
                                      !numParallel ? "serial"
                                      : reduces    ? "reduce"
                                                   : "map");
  SmallVector<Value> ivs;
  if (numParallel) {
    Value base =
        arith::MulIOp::create(rewriter, loc, launch.getBlockIds().x, block);
    Value gid =
        arith::AddIOp::create(rewriter, loc, base, launch.getThreadIds().x);
    Value inRange = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ult, gid, total);
    auto guard = scf::IfOp::create(rewriter, loc, inRange,
                                   /*withElseRegion=*/false);
    rewriter.setInsertionPointToStart(&guard.getThenRegion().front());
    llvm::append_range(ivs, delinearize(rewriter, loc, gid,
                                        ArrayRef(sizes).take_front(numParallel),
                                        total, narrowIndices));
  }

  // Outputs read by the body start from their stored value; the reduction
  // dimensions do not index them, so any value stands in for those ivs.
  SmallVector<Value> outputIvs(ivs);
  outputIvs.resize(op.getNumLoops(), zero);
  SmallVector<Value> inits;
  for (auto [init, start] : llvm::zip(op.getDpsInitsMutable(), starts))
    inits.push_back(getStartValue(rewriter, loc, op, init, start, outputIvs));

  SmallVector<Value> lbs, ubs, steps;
  for (unsigned d = numParallel; d < op.getNumLoops(); ++d) {
    lbs.push_back(zero);
    ubs.push_back(sizes[d]);
    steps.push_back(one);
  }
  scf::LoopNest nest =
      scf::buildLoopNest(rewriter, loc, lbs, ubs, steps, inits,
                         [&](OpBuilder &b, Location, ValueRange reductionIvs,
                             ValueRange accumulators) -> scf::ValueVector {
                           SmallVector<Value> allIvs(ivs);
                           llvm::append_range(allIvs, reductionIvs);
                           return emitBodyAt(b, loc, op, allIvs, accumulators);
                         });
  for (auto [init, result] : llvm::zip(op.getDpsInitsMutable(), nest.results))
    memref::StoreOp::create(rewriter, loc, result, init.get(),
                            accessAt(rewriter, loc, op, init, outputIvs));
  rewriter.eraseOp(op);
  return success();
}

/// For each output #k, the op that folds a new term into its accumulator,
/// when the body ends in one for every output (an add, a max or a min of
/// the accumulator argument and a term that reads no accumulator): then
/// lanes can accumulate apart and be combined in any order.
std::optional<SmallVector<Operation *>> getCombiners(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  SmallVector<Operation *> combiners;
  for (auto [k, yielded] :
       llvm::enumerate(body.getTerminator()->getOperands())) {
    BlockArgument acc = body.getArgument(op.getNumDpsInputs() + k);
    Operation *def = yielded.getDefiningOp();
    if (!def || def->getBlock() != &body || def->getNumOperands() != 2 ||
        !isa<arith::AddFOp, arith::MaximumFOp, arith::MinimumFOp,
             arith::MaxNumFOp, arith::MinNumFOp>(def) ||
        !acc.hasOneUse() || acc.getUses().begin()->getOwner() != def ||
        def->getOperand(0) == def->getOperand(1) || !yielded.hasOneUse())
      return std::nullopt;
    combiners.push_back(def);
  }
  return combiners;
}

/// The value that leaves any other unchanged under `combiner`.
Value getIdentity(OpBuilder &b, Location loc, Operation *combiner, Type type) {
  auto floatType = cast<FloatType>(type);
  const llvm::fltSemantics &sem = floatType.getFloatSemantics();
  APFloat value = isa<arith::AddFOp>(combiner) ? APFloat::getZero(sem)
                  : isa<arith::MaximumFOp, arith::MaxNumFOp>(combiner)
                      ? APFloat::getInf(sem, /*Negative=*/true)
                      : APFloat::getInf(sem, /*Negative=*/false);
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

/// `combiner` applied to (lhs, rhs), with its attributes (fast-math flags).
Value combine(OpBuilder &b, Operation *combiner, Value lhs, Value rhs) {
  IRMapping mapping;
  mapping.map(combiner->getOperand(0), lhs);
  mapping.map(combiner->getOperand(1), rhs);
  return b.clone(*combiner, mapping)->getResult(0);
}

/// The gpu.subgroup_reduce kind of a combiner getCombiners accepts.
gpu::AllReduceOperation getSubgroupReduceKind(Operation *combiner) {
  return llvm::TypeSwitch<Operation *, gpu::AllReduceOperation>(combiner)
      .Case([](arith::AddFOp) { return gpu::AllReduceOperation::ADD; })
      .Case([](arith::MaximumFOp) { return gpu::AllReduceOperation::MAXIMUMF; })
      .Case([](arith::MinimumFOp) { return gpu::AllReduceOperation::MINIMUMF; })
      .Case([](arith::MaxNumFOp) { return gpu::AllReduceOperation::MAXNUMF; })
      .Case([](arith::MinNumFOp) { return gpu::AllReduceOperation::MINNUMF; });
}

constexpr int64_t kWarpSize = 32;

/// True when a warp per output point is the better mapping for `op` (its
/// reductions innermost after interchange): the innermost reduction
/// dimension is the innermost index of some input (the lanes' loads are
/// consecutive), and the reduction is long enough to give every lane work
/// (static extents of at least 4 warps' worth, or dynamic).
bool prefersWarpReduction(linalg::GenericOp op, unsigned numParallel) {
  SmallVector<int64_t> staticSizes = op.getStaticLoopRanges();
  unsigned numLoops = op.getNumLoops();
  if (numParallel == numLoops)
    return false;
  int64_t extent = 1;
  for (unsigned d = numParallel; d < numLoops; ++d) {
    if (ShapedType::isDynamic(staticSizes[d])) {
      extent = ShapedType::kDynamic;
      break;
    }
    extent *= staticSizes[d];
  }
  if (!ShapedType::isDynamic(extent) && extent < 4 * kWarpSize)
    return false;
  AffineExpr innermost = getAffineDimExpr(numLoops - 1, op.getContext());
  return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    AffineMap map = op.getMatchingIndexingMap(input);
    return isa<MemRefType>(input->get().getType()) && map.getNumResults() &&
           map.getResults().back() == innermost;
  });
}

/// Emits `op` (parallel loops first, reductions combined by `combiners`) as
/// a warp per point of the parallel space: lane l accumulates reduction
/// points l, l + 32, ... (linearized, innermost fastest) from the
/// combiners' identities, a gpu.subgroup_reduce combines the lanes, and
/// lane 0 folds in the output's start value (`starts`, else its
/// stored value) and stores.
LogicalResult emitWarpReductionKernel(RewriterBase &rewriter,
                                      linalg::GenericOp op,
                                      unsigned numParallel, int64_t blockSize,
                                      bool narrowIndices,
                                      ArrayRef<Value> starts,
                                      ArrayRef<Operation *> combiners) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> sizes = getLoopSizes(rewriter, loc, op);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value warp = arith::ConstantIndexOp::create(rewriter, loc, kWarpSize);
  Value points = one;
  for (unsigned d = 0; d < numParallel; ++d)
    points = rewriter.createOrFold<arith::MulIOp>(loc, points, sizes[d]);
  Value reductionPoints = one;
  for (unsigned d = numParallel; d < op.getNumLoops(); ++d)
    reductionPoints =
        rewriter.createOrFold<arith::MulIOp>(loc, reductionPoints, sizes[d]);
  int64_t warpsPerBlock = std::max<int64_t>(blockSize / kWarpSize, 1);
  Value block =
      arith::ConstantIndexOp::create(rewriter, loc, warpsPerBlock * kWarpSize);
  Value grid = arith::CeilDivUIOp::create(
      rewriter, loc, points,
      arith::ConstantIndexOp::create(rewriter, loc, warpsPerBlock));

  gpu::LaunchOp launch =
      createLaunch(rewriter, loc, grid, block, "warp_reduce");
  Value tid = launch.getThreadIds().x;
  Value lane = arith::RemUIOp::create(rewriter, loc, tid, warp);
  Value warpInBlock = arith::DivUIOp::create(rewriter, loc, tid, warp);
  Value firstWarp = arith::MulIOp::create(
      rewriter, loc, launch.getBlockIds().x,
      arith::ConstantIndexOp::create(rewriter, loc, warpsPerBlock));
  Value point = arith::AddIOp::create(rewriter, loc, firstWarp, warpInBlock);
  // The same for every lane of a warp: the subgroup reductions below are
  // uniform.
  Value inRange = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ult, point, points);
  auto guard = scf::IfOp::create(rewriter, loc, inRange,
                                 /*withElseRegion=*/false);
  rewriter.setInsertionPointToStart(&guard.getThenRegion().front());
  SmallVector<Value> ivs;
  if (numParallel)
    llvm::append_range(ivs, delinearize(rewriter, loc, point,
                                        ArrayRef(sizes).take_front(numParallel),
                                        points, narrowIndices));

  SmallVector<Value> identities;
  for (auto [combiner, init] : llvm::zip(combiners, op.getDpsInitsMutable()))
    identities.push_back(
        getIdentity(rewriter, loc, combiner,
                    cast<MemRefType>(init.get().getType()).getElementType()));
  auto lanes = scf::ForOp::create(
      rewriter, loc, lane, reductionPoints, warp, identities,
      [&](OpBuilder &b, Location, Value r, ValueRange accumulators) {
        SmallVector<Value> allIvs(ivs);
        llvm::append_range(allIvs,
                           delinearize(b, loc, r,
                                       ArrayRef(sizes).drop_front(numParallel),
                                       reductionPoints, narrowIndices));
        scf::YieldOp::create(b, loc,
                             emitBodyAt(b, loc, op, allIvs, accumulators));
      });

  // One subgroup reduction per output; grove-lower-subgroup-reduce turns
  // each into the shuffle butterfly for the target's warp.
  SmallVector<Value> partials;
  for (auto [partial, combiner] : llvm::zip(lanes.getResults(), combiners))
    partials.push_back(gpu::SubgroupReduceOp::create(
        rewriter, loc, partial, getSubgroupReduceKind(combiner),
        /*uniform=*/true, /*cluster_size=*/std::nullopt));

  Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                      lane, zero);
  auto store = scf::IfOp::create(rewriter, loc, first,
                                 /*withElseRegion=*/false);
  rewriter.setInsertionPointToStart(&store.getThenRegion().front());
  SmallVector<Value> outputIvs(ivs);
  outputIvs.resize(op.getNumLoops(), zero);
  for (auto [init, start, partial, combiner] :
       llvm::zip(op.getDpsInitsMutable(), starts, partials, combiners)) {
    Value initial = getStartValue(rewriter, loc, op, init, start, outputIvs);
    memref::StoreOp::create(
        rewriter, loc, combine(rewriter, combiner, partial, initial),
        init.get(), accessAt(rewriter, loc, op, init, outputIvs));
  }
  rewriter.eraseOp(op);
  return success();
}

LogicalResult convertToKernel(RewriterBase &rewriter, linalg::LinalgOp op,
                              int64_t blockSize, bool warpReductions,
                              bool narrowIndices,
                              llvm::DenseSet<Operation *> &folded) {
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

  if (failed(checkNoRace(generic, numParallel)))
    return failure();
  if (threadOwnsOutputs(generic, numParallel)) {
    SmallVector<Value> starts;
    SmallVector<linalg::FillOp> fills;
    for (OpOperand &init : generic.getDpsInitsMutable()) {
      linalg::FillOp fill = getFoldableFill(generic, init);
      starts.push_back(fill ? fill.getDpsInputs()[0] : Value());
      if (fill)
        fills.push_back(fill);
    }
    std::optional<SmallVector<Operation *>> combiners = getCombiners(generic);
    LogicalResult emitted =
        warpReductions && combiners &&
                prefersWarpReduction(generic, numParallel)
            ? emitWarpReductionKernel(rewriter, generic, numParallel, blockSize,
                                      narrowIndices, starts, *combiners)
            : emitKernel(rewriter, generic, numParallel, blockSize,
                         narrowIndices, starts);
    if (failed(emitted))
      return failure();
    for (linalg::FillOp fill : fills) {
      folded.insert(fill);
      rewriter.eraseOp(fill);
    }
    return success();
  }

  if (numParallel == 0) {
    // Nothing to spread (a rank-0 result, or a full reduction): one thread.
    Location loc = generic.getLoc();
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    gpu::LaunchOp launch = createLaunch(rewriter, loc, one, one, "serial");
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
  linearize(rewriter, par, blockSize, narrowIndices);
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
    // Fills last, so that a reduction after one can fold it
    // (getFoldableFill); each op becomes a launch in place, so the order of
    // conversion leaves the order of execution alone.
    std::stable_partition(ops.begin(), ops.end(), [](linalg::LinalgOp op) {
      return !isa<linalg::FillOp>(op);
    });
    IRRewriter rewriter(&getContext());
    llvm::DenseSet<Operation *> folded;
    for (linalg::LinalgOp op : ops)
      if (!folded.contains(op) &&
          failed(convertToKernel(rewriter, op, blockSize, warpReductions,
                                 narrowIndices, folded)))
        return signalPassFailure();
    nameKernels(getOperation());
  }

  /// Names each launch's kernel `<function>_k<N>_<kind>`, N counting the
  /// function's launches in order: gpu-kernel-outlining takes the name for
  /// the kernel and its module, so profiles (which group kernels by name)
  /// tell every kernel apart and say what kind it is.
  static void nameKernels(func::FuncOp func) {
    unsigned next = 0;
    func.walk([&](gpu::LaunchOp launch) {
      std::optional<StringRef> kind = launch.getFunction();
      if (!kind || !llvm::is_contained(
                       {"map", "reduce", "warp_reduce", "serial"}, *kind))
        return; // not one of this run's launches
      launch.setFunctionAttr(FlatSymbolRefAttr::get(
          func.getContext(),
          (func.getName() + "_k" + Twine(next++) + "_" + *kind).str()));
    });
  }
};

} // namespace
