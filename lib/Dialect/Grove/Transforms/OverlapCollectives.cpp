//===- OverlapCollectives.cpp - Start collectives early, wait late --------===//
//
// grove.all_reduce / all_gather -> grove.all_reduce_start / all_gather_start
// + grove.collective_wait, with the wait as late in the block as the result
// allows (Passes.td). Moving side-effect-free ops later never changes what
// they compute: their operands still dominate them, and they still dominate
// their users.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEOVERLAPCOLLECTIVES
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

/// Ops the pure users of a collective's result may move past: other
/// collectives (they touch only their own buffers and the wire).
bool isCollective(Operation *op) {
  return isa<AllReduceOp, AllGatherOp, AllReduceStartOp, AllGatherStartOp,
             CollectiveWaitOp, BroadcastOp, WorldSizeOp, WorldRankOp>(op);
}

/// Whether `op`, or an op nested in it, may write memory (unknown ops may).
/// Allocations and reads do not stop ops from moving past.
bool mayWrite(Operation *op) {
  // A new tensor: declares no effects, writes nothing anything reads.
  if (isa<bufferization::AllocTensorOp>(op))
    return false;
  if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()) {
    for (Region &region : op->getRegions())
      for (Operation &nested : region.getOps())
        if (mayWrite(&nested))
          return true;
    if (!isa<MemoryEffectOpInterface>(op))
      return false;
  }
  return mightHaveEffect<MemoryEffects::Write>(op);
}

/// Whether nothing moves past `op`: it may write memory (a state write may
/// end a value the moved op reads, and state is written after every
/// collective; docs/abi.md) and is no collective.
bool stopsMotion(Operation *op) { return mayWrite(op) && !isCollective(op); }

/// The first op of `block` that uses a result of `op`, or contains one
/// that does; null when none does.
Operation *firstUserInBlock(Operation *op, Block *block) {
  Operation *first = nullptr;
  for (Operation *user : op->getUsers()) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (ancestor && (!first || ancestor->isBeforeInBlock(first)))
      first = ancestor;
  }
  return first;
}

/// The ops of `collective`'s block after it that depend on its result, in
/// block order.
llvm::SetVector<Operation *> dependentOps(Operation *collective) {
  Block *block = collective->getBlock();
  llvm::SetVector<Operation *> slice;
  slice.insert(collective);
  for (Operation *op = collective->getNextNode(); op; op = op->getNextNode()) {
    bool depends = false;
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (def && slice.contains(block->findAncestorOpInBlock(*def)))
          depends = true;
      }
    });
    if (depends)
      slice.insert(op);
  }
  slice.remove(collective);
  return slice;
}

/// Moves each side-effect-free op that depends on `collective`'s result
/// down to its first user, stopping at any op that stops motion. The last
/// ones move first, so that earlier ones follow them.
void sinkDependentOps(Operation *collective) {
  Block *block = collective->getBlock();
  llvm::SetVector<Operation *> slice = dependentOps(collective);
  for (Operation *op : llvm::reverse(slice)) {
    if (!isMemoryEffectFree(op))
      continue;
    Operation *limit = firstUserInBlock(op, block);
    Operation *target = op;
    for (Operation *next = op->getNextNode();
         next && next != limit && !next->hasTrait<OpTrait::IsTerminator>();
         next = next->getNextNode()) {
      if (stopsMotion(next))
        break;
      target = next;
    }
    if (target != op)
      op->moveAfter(target);
  }
}

/// Whether `op` computes something worth overlapping: a grove or linalg
/// op, or one with a body (reshapes, slices, constants and collectives are
/// not).
bool doesWork(Operation *op) {
  // A collective's wire time is not hidden: the runtime runs them in order.
  if (op->hasTrait<OpTrait::ConstantLike>() || isa<ReshapeOp, SliceOp>(op) ||
      isCollective(op))
    return false;
  return op->getNumRegions() > 0 || isa<linalg::LinalgOp>(op) ||
         isa<GroveDialect>(op->getDialect());
}

/// The op before which `collective`'s wait goes: its first user in the
/// block, or an earlier op that stops motion, or the terminator.
Operation *waitPoint(Operation *collective) {
  Operation *first = firstUserInBlock(collective, collective->getBlock());
  for (Operation *op = collective->getNextNode(); op != first;
       op = op->getNextNode())
    if (op->hasTrait<OpTrait::IsTerminator>() || stopsMotion(op))
      return op;
  return first;
}

/// The start of `collective` (an all-reduce or an all-gather) at `builder`.
Value createStart(OpBuilder &builder, Operation *collective) {
  if (auto reduce = dyn_cast<AllReduceOp>(collective))
    return AllReduceStartOp::create(builder, reduce.getLoc(), reduce.getInput(),
                                    reduce.getKind());
  auto gather = cast<AllGatherOp>(collective);
  return AllGatherStartOp::create(builder, gather.getLoc(), gather.getInput());
}

/// Splits `collective` when work runs between it and where its wait goes.
void overlap(Operation *collective) {
  sinkDependentOps(collective);
  Operation *point = waitPoint(collective);
  if (llvm::none_of(llvm::make_range(std::next(collective->getIterator()),
                                     point->getIterator()),
                    [](Operation &op) { return doesWork(&op); }))
    return;
  OpBuilder builder(collective);
  Value request = createStart(builder, collective);
  builder.setInsertionPoint(point);
  auto wait =
      CollectiveWaitOp::create(builder, collective->getLoc(),
                               collective->getResult(0).getType(), request);
  collective->replaceAllUsesWith(wait);
  collective->erase();
}

struct OverlapCollectivesPass
    : grove::impl::GroveOverlapCollectivesBase<OverlapCollectivesPass> {
  void runOnOperation() override {
    // The waits allocate their results after the starts are bufferized:
    // the inputs' shapes must be static.
    SmallVector<Operation *> collectives;
    getOperation().walk([&](Operation *op) {
      if (isa<AllReduceOp, AllGatherOp>(op) &&
          cast<RankedTensorType>(op->getOperand(0).getType()).hasStaticShape())
        collectives.push_back(op);
    });
    for (Operation *collective : collectives)
      overlap(collective);
  }
};

} // namespace
