//===- FuseSiblingReductions.cpp - Reductions over shared data, one loop --===//
//
// LAMB norms a parameter and its update direction; LANS the parameter and
// its two update directions (after the gradient, which they depend on).
// Once grove-fuse-elementwise has recomputed the directions into their
// norms, these read the same tensors in separate loops: a pass over memory
// each and, on the host, a parallel region each where one would do.
// Upstream fuses producers into consumers only, so this pass merges
// siblings: independent reductions over one iteration space that share an
// input become one linalg.generic yielding all their results.
//
// Equal reductions go first: the same op on the same inputs, each into a
// fresh buffer filled with one value, is one (a batch norm's gradient sums
// dy and dy·x̂ for its input's gradient and again for its scale's and
// bias's). CSE cannot see it: the fresh buffers are allocations, kept
// apart on purpose (grove::filled).
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Linalg/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <array>

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEFUSESIBLINGREDUCTIONS
#include "grove/Dialect/Linalg/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;

namespace {

/// A reduction on tensors with static loops that a merge can take apart
/// and rebuild: no index reads, no attributes beyond the generic's own.
bool isCandidate(linalg::GenericOp op) {
  return op.hasPureTensorSemantics() && !op.hasIndexSemantics() &&
         op.getNumReductionLoops() > 0 &&
         llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isProjectedPermutation(); }) &&
         !ShapedType::isDynamicShape(op.getStaticLoopRanges()) &&
         op->getDiscardableAttrDictionary().empty();
}

/// Whether `a` and `b` walk one iteration space and read a tensor in
/// common (the data a merge reads once instead of twice).
bool areSiblings(linalg::GenericOp a, linalg::GenericOp b) {
  if (a.getStaticLoopRanges() != b.getStaticLoopRanges() ||
      a.getIteratorTypesArray() != b.getIteratorTypesArray())
    return false;
  for (OpOperand *x : a.getDpsInputOperands())
    for (OpOperand *y : b.getDpsInputOperands())
      if (x->get() == y->get() && a.getRank(x) > 0 &&
          a.getMatchingIndexingMap(x) == b.getMatchingIndexingMap(y))
        return true;
  return false;
}

/// Whether `later` (after `op` in their block) reads anything computed
/// from `op`'s results, through ops of the block or regions inside them.
bool dependsOn(Operation *later, Operation *op) {
  Block *block = op->getBlock();
  SmallVector<Operation *> work{op};
  DenseSet<Operation *> seen;
  while (!work.empty()) {
    Operation *current = work.pop_back_val();
    for (Operation *user : current->getUsers()) {
      Operation *top = block->findAncestorOpInBlock(*user);
      if (top == later)
        return true;
      // Ops after `later` cannot feed it.
      if (top && top->isBeforeInBlock(later) && seen.insert(top).second)
        work.push_back(top);
    }
  }
  return false;
}

/// Whether `op` may write memory (an op that does not say may, but for a
/// fresh tensor's allocation, which writes nothing that exists).
bool mayWrite(Operation *op) {
  if (isMemoryEffectFree(op) || isa<bufferization::AllocTensorOp>(op))
    return false;
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  return !effects ||
         llvm::any_of(*effects, [](const MemoryEffects::EffectInstance &e) {
           return isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect());
         });
}

/// Moves the ops between `a` and `b` that read `a`'s results (directly or
/// through each other) to just after `b`, so that a merge can stand at
/// `b`'s place. False, moving nothing, where one of them has memory
/// effects, or where another op between them may write memory (the merge
/// reads `a`'s inputs at `b`'s place). The moved ops keep their order;
/// none feeds `b` (`b` does not depend on `a`).
bool sinkUsersPast(linalg::GenericOp a, linalg::GenericOp b) {
  Block *block = a->getBlock();
  SetVector<Operation *> between;
  for (Operation *op = a->getNextNode(); op != b; op = op->getNextNode()) {
    bool reads = llvm::any_of(op->getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def == a || between.contains(def);
    });
    // Captured values in its regions count as reads too.
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        Operation *def = v.getDefiningOp();
        Operation *top = def ? block->findAncestorOpInBlock(*def) : nullptr;
        reads |= top == a || (top && between.contains(top));
      }
    });
    if (reads)
      between.insert(op);
  }
  for (Operation *op = a->getNextNode(); op != b; op = op->getNextNode())
    if (between.contains(op) ? !isMemoryEffectFree(op) : mayWrite(op))
      return false;
  Operation *after = b;
  for (Operation *op : between) {
    op->moveAfter(after);
    after = op;
  }
  return true;
}

/// Whether `a` and `b` are fills of one value into fresh allocations of one
/// type and size, each read once (by the op whose init it is).
bool areFreshFillsAlike(Value a, Value b) {
  auto fa = a.getDefiningOp<linalg::FillOp>();
  auto fb = b.getDefiningOp<linalg::FillOp>();
  if (!fa || !fb || !a.hasOneUse() || !b.hasOneUse())
    return false;
  auto aa = fa.getOutputs()[0].getDefiningOp<bufferization::AllocTensorOp>();
  auto ab = fb.getOutputs()[0].getDefiningOp<bufferization::AllocTensorOp>();
  Attribute va, vb;
  bool sameValue =
      fa.getInputs()[0] == fb.getInputs()[0] ||
      (matchPattern(fa.getInputs()[0], m_Constant(&va)) &&
       matchPattern(fb.getInputs()[0], m_Constant(&vb)) && va == vb);
  return sameValue && aa && ab && !aa.getCopy() && !ab.getCopy() &&
         !aa.getSizeHint() && !ab.getSizeHint() &&
         aa.getMemorySpaceAttr() == ab.getMemorySpaceAttr() &&
         aa.getType() == ab.getType() &&
         aa.getDynamicSizes() == ab.getDynamicSizes();
}

/// Whether `op` (on tensors) computes a value and nothing else: no op in
/// its body touches memory.
bool computesOnly(linalg::LinalgOp op) {
  return op.hasPureTensorSemantics() &&
         !op->walk([&](Operation *inner) {
              return inner == op.getOperation() || isMemoryEffectFree(inner)
                         ? WalkResult::advance()
                         : WalkResult::interrupt();
            }).wasInterrupted();
}

/// Replaces each structured op on tensors that equals an earlier one of
/// `block` (same inputs, attributes and body; inits fresh fills alike) by
/// that one's results.
void mergeEqualOps(RewriterBase &rewriter, Block *block) {
  SmallVector<linalg::LinalgOp> seen;
  for (Operation &op : llvm::make_early_inc_range(*block)) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
    if (!linalgOp || !computesOnly(linalgOp) ||
        linalgOp.getNumReductionLoops() == 0)
      continue;
    auto equal = llvm::find_if(seen, [&](linalg::LinalgOp earlier) {
      // The bodies' block arguments and results, paired as they are
      // compared.
      DenseMap<Value, Value> paired;
      return OperationEquivalence::isEquivalentTo(
          earlier, &op,
          [&](Value x, Value y) {
            return success(x == y || paired.lookup(x) == y ||
                           areFreshFillsAlike(x, y));
          },
          [&](Value x, Value y) { paired[x] = y; },
          OperationEquivalence::IgnoreLocations);
    });
    if (equal == seen.end()) {
      seen.push_back(linalgOp);
      continue;
    }
    SmallVector<Value> inits = linalgOp.getDpsInits();
    rewriter.replaceOp(&op, (*equal)->getResults());
    // The fresh fills only this op read go with it (an init it shared with
    // its twin stays).
    for (Value init : inits) {
      auto fill = init.getDefiningOp<linalg::FillOp>();
      if (!fill || !fill->use_empty())
        continue;
      Operation *alloc = fill.getOutputs()[0].getDefiningOp();
      rewriter.eraseOp(fill);
      if (alloc && isa<bufferization::AllocTensorOp>(alloc) &&
          alloc->use_empty())
        rewriter.eraseOp(alloc);
    }
  }
}

/// The merged op's operands, maps and block argument types as they are
/// gathered; `add` returns an input's index, shared by equal reads.
struct Operands {
  SmallVector<Value> values;
  SmallVector<AffineMap> maps;
  SmallVector<Type> argTypes;
  unsigned add(Value v, AffineMap map, Type argType) {
    for (auto [i, seen] : llvm::enumerate(values))
      if (seen == v && maps[i] == map)
        return i;
    values.push_back(v);
    maps.push_back(map);
    argTypes.push_back(argType);
    return values.size() - 1;
  }
};

/// One generic computing both `a`'s and `b`'s results at `b`'s place,
/// each input read once (an operand both read through one map is one).
linalg::GenericOp merge(RewriterBase &rewriter, linalg::GenericOp a,
                        linalg::GenericOp b) {
  Operands ins, outs;
  // Where each op's block arguments go: inputs by index, outputs after.
  SmallVector<SmallVector<unsigned>> slots(2);
  for (auto [k, op] : llvm::enumerate(std::array{a, b})) {
    for (OpOperand *in : op.getDpsInputOperands())
      slots[k].push_back(ins.add(in->get(), op.getMatchingIndexingMap(in),
                                 op.getMatchingBlockArgument(in).getType()));
  }
  rewriter.setInsertionPoint(b);
  for (auto [k, op] : llvm::enumerate(std::array{a, b})) {
    for (OpOperand &out : op.getDpsInitsMutable()) {
      outs.values.push_back(out.get());
      outs.maps.push_back(op.getMatchingIndexingMap(&out));
      outs.argTypes.push_back(op.getMatchingBlockArgument(&out).getType());
      slots[k].push_back(ins.values.size() + outs.values.size() - 1);
    }
  }
  SmallVector<AffineMap> maps(ins.maps);
  llvm::append_range(maps, outs.maps);
  SmallVector<Type> argTypes(ins.argTypes), resultTypes(a->getResultTypes());
  llvm::append_range(argTypes, outs.argTypes);
  llvm::append_range(resultTypes, b->getResultTypes());

  Location loc = rewriter.getFusedLoc({a.getLoc(), b.getLoc()});
  auto fused =
      linalg::GenericOp::create(rewriter, loc, resultTypes, ins.values,
                                outs.values, maps, a.getIteratorTypesArray());
  Block *body =
      rewriter.createBlock(&fused.getRegion(), {}, argTypes,
                           SmallVector<Location>(argTypes.size(), loc));
  IRMapping mapping;
  SmallVector<Value> yielded;
  for (auto [k, op] : llvm::enumerate(std::array{a, b})) {
    for (auto [arg, slot] : llvm::zip(op.getBody()->getArguments(), slots[k]))
      mapping.map(arg, body->getArgument(slot));
    for (Operation &inner : op.getBody()->without_terminator())
      rewriter.clone(inner, mapping);
    for (Value v : op.getBody()->getTerminator()->getOperands())
      yielded.push_back(mapping.lookupOrDefault(v));
  }
  linalg::YieldOp::create(rewriter, loc, yielded);
  rewriter.replaceOp(a, fused->getResults().take_front(a->getNumResults()));
  rewriter.replaceOp(b, fused->getResults().drop_front(a->getNumResults()));
  return fused;
}

struct GroveFuseSiblingReductionsPass
    : grove::impl::GroveFuseSiblingReductionsBase<
          GroveFuseSiblingReductionsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Not the bodies of linalg ops: a merge erases those of the pair.
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) {
      if (!isa<linalg::LinalgOp>(block->getParentOp()))
        blocks.push_back(block);
    });
    for (Block *block : blocks) {
      mergeEqualOps(rewriter, block);
      fuseIn(rewriter, block);
    }
  }

  /// Merges each candidate with every sibling it can take. Only ops of one
  /// iteration space can be siblings, so they are compared group by group.
  void fuseIn(RewriterBase &rewriter, Block *block) {
    llvm::MapVector<SmallVector<int64_t>, SmallVector<linalg::GenericOp>>
        groups;
    for (auto op : block->getOps<linalg::GenericOp>()) {
      if (!isCandidate(op))
        continue;
      SmallVector<int64_t> key = op.getStaticLoopRanges();
      for (utils::IteratorType t : op.getIteratorTypesArray())
        key.push_back(-1 - static_cast<int64_t>(t));
      groups[key].push_back(op);
    }
    for (auto &[key, ops] : groups)
      fuseGroup(rewriter, ops);
  }

  /// Pairs in `ops` merged greedily; a merged op takes the place of the
  /// first and stays a candidate for the rest.
  void fuseGroup(RewriterBase &rewriter,
                 SmallVectorImpl<linalg::GenericOp> &ops) {
    for (size_t i = 0; i < ops.size(); ++i) {
      for (size_t j = i + 1; j < ops.size() && ops[i]; ++j) {
        if (!ops[j])
          continue;
        // Sinking users reorders ops: take the pair in block order.
        linalg::GenericOp a = ops[i], b = ops[j];
        if (b->isBeforeInBlock(a))
          std::swap(a, b);
        if (!areSiblings(a, b) || dependsOn(b, a) || !sinkUsersPast(a, b))
          continue;
        ops[i] = merge(rewriter, a, b);
        ops[j] = nullptr;
      }
    }
  }
};

} // namespace
