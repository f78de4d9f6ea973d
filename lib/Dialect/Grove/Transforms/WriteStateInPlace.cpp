//===- WriteStateInPlace.cpp - State updates in the state's buffer -------===//
//
// A state update `grove.assign %v to %arg` bufferizes to a copy of %v's
// buffer into %arg's. When a linalg op computes only state updates, each
// into a tensor.empty (maybe reshaped) it never reads, it can write the
// states' buffers directly: each init becomes its %arg, viewed through the
// reshapes between the op and its assign, and the assign copies the result
// onto that same view (CSE merges it with the op's reads of the state),
// which bufferizes to a self-copy the canonicalizer drops. An optimizer
// step so becomes one pass over each parameter's data instead of a pass,
// an allocation and a copy.
//
// State is still written last (docs/decisions.md, "Writes in place, last"):
// such ops move to the end of their block, just before the assigns, so
// every allocation of the call (and any read of the old state) comes
// before the first write; an op whose state another such op reads stays
// where it is, out of place. Nothing here changes what is computed.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEWRITESTATEINPLACE
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

/// `state` viewed as the source of each reshape in `chain` (from the
/// assign's side to the producer's; collapses of static sources only).
Value viewThrough(OpBuilder &b, Location loc, Value state,
                  ArrayRef<Operation *> chain) {
  Value view = state;
  for (Operation *op : chain) {
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
      view = tensor::CollapseShapeOp::create(b, loc, expand.getSrcType(), view,
                                             expand.getReassociationIndices());
      continue;
    }
    auto collapse = cast<tensor::CollapseShapeOp>(op);
    view = tensor::ExpandShapeOp::create(b, loc, collapse.getSrcType(), view,
                                         collapse.getReassociationIndices());
  }
  return view;
}

/// Whether `v` is a tensor.empty, possibly reshaped (grove-collapse-loop-
/// dims views inits so).
bool isEmpty(Value v) {
  return getReshapeRoot(v).getDefiningOp<tensor::EmptyOp>();
}

/// One result of a producer written to state: the reshapes from the result
/// to the assign (assign side first), the assign and its state.
struct StateWrite {
  OpResult result;
  SmallVector<Operation *> chain;
  AssignOp assign;
  BlockArgument state;
};

/// The write of `assign`, if its value is a single-use chain of reshapes
/// (collapses from static shapes, which the state's view can expand to)
/// from a result of a linalg op on tensors whose init is an unread
/// tensor.empty.
std::optional<StateWrite> matchWrite(AssignOp assign) {
  auto state = dyn_cast<BlockArgument>(assign.getState());
  if (!state)
    return std::nullopt;
  StateWrite w{nullptr, {}, assign, state};
  Value v = assign.getValue();
  while (v.hasOneUse() &&
         isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
             v.getDefiningOp())) {
    auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>();
    if (collapse && !collapse.getSrcType().hasStaticShape())
      return std::nullopt;
    w.chain.push_back(v.getDefiningOp());
    v = v.getDefiningOp()->getOperand(0);
  }
  auto producer = v.getDefiningOp<linalg::LinalgOp>();
  if (!v.hasOneUse() || !producer || !producer.hasPureTensorSemantics() ||
      producer->getBlock() != assign->getBlock())
    return std::nullopt;
  w.result = cast<OpResult>(v);
  OpOperand *init = producer.getDpsInitOperand(w.result.getResultNumber());
  if (!isEmpty(init->get()) || producer.payloadUsesValueFromOperand(init))
    return std::nullopt;
  // Reading its own state other than where it writes it would need a copy.
  AffineMap written = producer.getMatchingIndexingMap(init);
  for (OpOperand *in : producer.getDpsInputOperands())
    if (getReshapeRoot(in->get()) == state &&
        producer.getMatchingIndexingMap(in) != written)
      return std::nullopt;
  return w;
}

/// Whether `op` reads `state` (or a view of it).
bool readsState(Operation *op, Value state) {
  return llvm::any_of(op->getOperands(),
                      [&](Value v) { return getReshapeRoot(v) == state; });
}

void writeStateInPlace(Block &block) {
  // The writes stay last (grove-fuse-elementwise sank them already).
  sinkStateWrites(block);
  SmallVector<AssignOp> assigns(block.getOps<AssignOp>());
  if (assigns.empty())
    return;
  // Producers every result of which is a state write.
  llvm::MapVector<Operation *, SmallVector<StateWrite>> producers;
  for (AssignOp assign : assigns)
    if (std::optional<StateWrite> w = matchWrite(assign))
      producers[w->result.getOwner()].push_back(*w);
  SmallVector<Operation *> clean;
  for (auto &[op, writes] : producers) {
    if (writes.size() != op->getNumResults())
      continue;
    bool readByOther = llvm::any_of(producers, [&](auto &other) {
      return other.first != op &&
             llvm::any_of(writes, [&](const StateWrite &w) {
               return readsState(other.first, w.state);
             });
    });
    if (!readByOther)
      clean.push_back(op);
  }
  Operation *tail = assigns.front();
  for (Operation *op : clean) {
    op->moveBefore(tail);
    for (StateWrite &w : producers[op]) {
      for (Operation *reshape : llvm::reverse(w.chain))
        reshape->moveBefore(tail);
      OpBuilder b(op);
      Value view = viewThrough(b, w.assign.getLoc(), w.state, w.chain);
      cast<linalg::LinalgOp>(op)
          .getDpsInitOperand(w.result.getResultNumber())
          ->set(view);
      w.assign.getValueMutable().set(w.result);
      w.assign.getStateMutable().set(view);
    }
  }
}

struct GroveWriteStateInPlacePass
    : grove::impl::GroveWriteStateInPlaceBase<GroveWriteStateInPlacePass> {
  void runOnOperation() override {
    getOperation().walk([](Block *block) { writeStateInPlace(*block); });
  }
};

} // namespace
