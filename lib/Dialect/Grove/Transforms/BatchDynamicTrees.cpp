//===- BatchDynamicTrees.cpp - grove.tree_fold as a loop over groups ------===//
//
// Lowers grove.tree_fold and grove.tree_fold_grad (docs/trees.md). The
// runtime schedules the batch's nodes (grove.tree_schedule): it renumbers
// them into positions, children first, in groups (by level by default).
// The fold is then one scf.for over the groups whose body takes the
// group's rows of the inputs (a slice: positions are consecutive), gathers
// the children's states by their positions over the group's edges (also
// consecutive), runs the cell once on the whole group, and writes the
// group's states back as a slice. What the children give the cell, and
// how their cotangents go back, is the fold's form's (TreeCellForm.h):
// child-sum sums each node's messages with grove.segment_sum, N-ary gathers
// child slot k through edges p * K + k. The gradient runs the same groups in
// reverse, recomputing each cell from the saved node states; a child's state
// cotangent arrives through its one parent edge, which a later group wrote.
// The first group has no children (they come in earlier groups): it is peeled
// off the loop, its cell specialized to zero child arguments.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/ABIAttrs.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/IR/TreeFold.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"

#include "TreeResiduals.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEBATCHDYNAMICTREES
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

using Group = TreeGroup; // TreeCellForm.h

/// Builders over the schedule of one fold. `edgesPerNode` is the form's
/// (TreeCellForm::getEdgesPerNode): 0 for an edge a child, K for K slots.
class TreeLowering : public TreeGroupBuilder {
public:
  TreeLowering(OpBuilder &b, Location loc, ValueRange forest,
               int64_t edgesPerNode, int64_t mode)
      : b(b), loc(loc), edgesPerNode(edgesPerNode) {
    schedule = TreeScheduleOp::create(b, loc, forest[0], forest[1], forest[2],
                                      edgesPerNode, mode);
  }
  /// Over an existing schedule (the forward fold's, for its gradient).
  TreeLowering(OpBuilder &b, Location loc, TreeScheduleOp schedule,
               int64_t edgesPerNode)
      : schedule(schedule), b(b), loc(loc), edgesPerNode(edgesPerNode) {}

  OpBuilder &getBuilder() override { return b; }
  Location getLoc() override { return loc; }

  TreeScheduleOp schedule;

  Value constant(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value addI(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }

  /// Element `at` of an int32 tensor, as an index.
  Value element(Value t, ValueRange at) {
    Value v = tensor::ExtractOp::create(b, loc, t, at);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }

  Group readGroup(Value g) {
    Value at[4];
    for (int64_t j = 0; j < 4; ++j)
      at[j] = element(schedule.getGroups(), {g, constant(j)});
    return {at[0], at[1], at[2], at[3]};
  }

  /// Rows [start, start + len) of `t` (with `stride`: every stride-th).
  Value rows(Value t, Value start, Value len, int64_t stride = 1) {
    auto type = cast<RankedTensorType>(t.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
    offsets[0] = start;
    sizes.push_back(len);
    for (int64_t d = 1; d < type.getRank(); ++d)
      sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
    strides[0] = b.getIndexAttr(stride);
    auto result = RankedTensorType::get(withDynamicRows(type.getShape()),
                                        type.getElementType());
    return tensor::ExtractSliceOp::create(b, loc, result, t, offsets, sizes,
                                          strides);
  }

  /// `dest` with its rows from `start` (every stride-th) replaced by `src`.
  Value insertRows(Value src, Value dest, Value start, int64_t stride = 1) {
    auto type = cast<RankedTensorType>(dest.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
    offsets[0] = start;
    strides[0] = b.getIndexAttr(stride);
    SmallVector<OpFoldResult> sizes = {
        OpFoldResult(tensor::DimOp::create(b, loc, src, 0).getResult())};
    for (int64_t d = 1; d < type.getRank(); ++d)
      sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
    return tensor::InsertSliceOp::create(b, loc, src, dest, offsets, sizes,
                                         strides);
  }

  Value gather(Value t, Value indices) override {
    return GatherOp::create(b, loc, t, indices);
  }

  /// `in` (a row per node) permuted into positions; a row count other
  /// than the forest's node count fails the call.
  Value toPositions(Value in, Value numNodes, StringRef what) {
    Value count = tensor::DimOp::create(b, loc, in, 0);
    b.createOrFold<AgreeDimsOp>(loc, b.getIndexType(), numNodes, count,
                                b.getStringAttr(what));
    return gather(in, schedule.getOrder());
  }

  /// A tensor of `t`'s type (dynamic rows) with `n` rows and no defined
  /// contents, for a buffer by position or edge each row of which its group
  /// writes before any later group reads it (a failed schedule runs no
  /// group, and its call's results are discarded). No fill, and no copy of
  /// a shared one into each buffer.
  /// A bufferization.alloc_tensor, not a tensor.empty: CSE would make
  /// equal empties one value, and bufferization may then let two carried
  /// buffers share memory, since reads of an empty's contents are
  /// undefined anyway.
  Value uninitialized(Type t, Value n) {
    auto type = cast<RankedTensorType>(t);
    return bufferization::AllocTensorOp::create(
        b, loc,
        RankedTensorType::get(withDynamicRows(type.getShape()),
                              type.getElementType()),
        ValueRange{n});
  }

  /// The cell's results on `args`, its ops cloned here (a form's edge
  /// cell or its VJP): of `savingCell`, `savingValues` are kept in
  /// `savedRows`; of a region in `givenRows`, its values are the given rows.
  SmallVector<Value> inlineCell(Region &cell, ValueRange args) override {
    CellInlining how;
    if (&cell == savingCell)
      how.extra = savingValues;
    auto given = givenRows.find(&cell);
    if (given != givenRows.end()) {
      how.given = given->second.first;
      how.givenValues = given->second.second;
    }
    SmallVector<bool> zeros;
    SmallVector<Value> results = inlineCell(cell, args, how, zeros);
    if (&cell != savingCell)
      return results;
    savedRows.assign(results.end() - savingValues.size(), results.end());
    results.truncate(results.size() - savingValues.size());
    return results;
  }
  /// The fold's captures: the arguments of its cells without rows.
  llvm::DenseSet<Value> captureValues;
  Region *savingCell = nullptr;
  ArrayRef<Value> savingValues;
  SmallVector<Value> savedRows;
  llvm::DenseMap<Region *, std::pair<ArrayRef<Value>, ArrayRef<Value>>>
      givenRows;

  /// What a group's inlined cell knows besides its arguments.
  struct CellInlining {
    /// The group's row count: dim 0 of any row tensor of the cell.
    Value count;
    /// Arguments [firstZero, firstZero + numZeros) are zeros (a leaf
    /// group's children).
    unsigned firstZero = 0, numZeros = 0;
    /// Values of the cell not to compute but to take from `givenValues`
    /// (rows the forward saved).
    ArrayRef<Value> given, givenValues;
    /// Values of the cell wanted after its results (rows to save).
    ArrayRef<Value> extra;
  };
  SmallVector<Value> inlineCell(Region &cell, ValueRange args,
                                const CellInlining &how,
                                SmallVectorImpl<bool> &zeroResults);

  /// `n` rows of zeros of `t`'s row type.
  Value zeroRows(Type t, Value n) {
    auto type = cast<RankedTensorType>(t);
    Value zero = createSplatConstant(
        b, loc, RankedTensorType::get({}, type.getElementType()), 0.0);
    return BroadcastToOp::create(b, loc, zero, withDynamicRows(type.getShape()),
                                 {n});
  }

  /// The edges of child slot `k` of the group's nodes (N-ary).
  Value slotEdges(const Group &g, int64_t k) {
    return addI(mul(g.first, constant(edgesPerNode)), constant(k));
  }

  Value getEdgeChildren(const Group &g) override {
    return rows(schedule.getEdgeChild(), g.firstEdge, g.numEdges);
  }

  Value getEdgeParents(const Group &g) override {
    return rows(schedule.getEdgeParent(), g.firstEdge, g.numEdges);
  }

  Value getSlotChildren(const Group &g, int64_t k) override {
    return rows(schedule.getEdgeChild(), slotEdges(g, k), g.count,
                edgesPerNode);
  }

  Value sumSegments(Value perEdge, const Group &g) override {
    Value bounds =
        rows(schedule.getChildStart(), g.first, addI(g.count, constant(1)));
    return SegmentSumOp::create(b, loc, perEdge, bounds);
  }

  Value insertGroupRows(Value src, Value dest, const Group &g) override {
    return insertRows(src, dest, g.first);
  }

  Value insertEdgeRows(Value src, Value dest, const Group &g) override {
    return insertRows(src, dest, g.firstEdge);
  }

  Value insertSlotRows(Value src, Value dest, const Group &g,
                       int64_t k) override {
    return insertRows(src, dest, slotEdges(g, k), edgesPerNode);
  }

  void accumulate(MutableArrayRef<Value> sums, ArrayRef<Value> more) override;
  /// The same, skipping the terms `zeros` marks (inlineCell's zeroResults).
  void accumulate(MutableArrayRef<Value> sums, ArrayRef<Value> more,
                  ArrayRef<bool> zeros);

  static SmallVector<int64_t> withDynamicRows(ArrayRef<int64_t> shape) {
    SmallVector<int64_t> out(shape);
    out[0] = ShapedType::kDynamic;
    return out;
  }

  OpBuilder &b;
  Location loc;
  int64_t edgesPerNode;
};

/// Whether `op`'s result is zeros, those of its operands in `zeros` (or
/// zero constants) being zeros. A product with zeros is taken as zeros
/// whatever the other factor holds (an infinite weight gives no NaN).
/// Whether `v` is known zeros: in `zeros`, or a zero constant.
bool knownZeros(Value v, const llvm::DenseSet<Value> &zeros) {
  return zeros.contains(v) || isZeros(v);
}

bool givesZeros(Operation &op, const llvm::DenseSet<Value> &zeros) {
  auto zero = [&](Value v) { return knownZeros(v, zeros); };
  if (isa<MatmulOp, MulOp>(op))
    return llvm::any_of(op.getOperands(), zero);
  if (isa<AddOp, SubOp, ConcatOp>(op))
    return llvm::all_of(op.getOperands(), zero);
  if (isa<SliceOp, TransposeOp, ReshapeOp, FlattenOp, BroadcastToOp,
          ReduceSumOp, ReluOp, TanhOp, GatherOp, SegmentSumOp>(op))
    return zero(op.getOperand(0));
  return false;
}

/// For `x + 0`, `0 + x` or `x - 0` of x's type: x.
Value addendOfZeros(Operation &op, const llvm::DenseSet<Value> &zeros) {
  if (!isa<AddOp, SubOp>(op))
    return {};
  auto zero = [&](Value v) { return knownZeros(v, zeros); };
  Value lhs = op.getOperand(0), rhs = op.getOperand(1);
  Type type = op.getResult(0).getType();
  if (zero(rhs) && lhs.getType() == type)
    return lhs;
  if (isa<AddOp>(op) && zero(lhs) && rhs.getType() == type)
    return rhs;
  return {};
}

/// The cell's results on `args` and then the `extra` values, its ops
/// cloned here but those `how` makes unneeded:
/// * the given values are taken, not computed;
/// * dim 0 of a row tensor is the group's count;
/// * with zero arguments (a group whose nodes have no children: their
///   sums or slots), sums with zeros are their other term and products with
///   them zeros, so a leaf does no work for its absent children (a
///   Tree-LSTM's U GEMMs, forward and backward).
/// What that leaves unused, the zero arguments included, is erased.
/// `zeroResults` says which results are known zeros, which the caller need
/// not add anywhere.
SmallVector<Value>
TreeLowering::inlineCell(Region &cell, ValueRange args, const CellInlining &how,
                         SmallVectorImpl<bool> &zeroResults) {
  IRMapping map;
  map.map(cell.getArguments(), args);
  assert(how.given.size() == how.givenValues.size() && "a value each");
  map.map(how.given, how.givenValues);
  // Rows by the cells' rule from every argument but the captures.
  SmallVector<bool> rowArgs = llvm::map_to_vector(
      args, [&](Value a) { return !captureValues.contains(a); });
  llvm::DenseSet<Value> rows = getCellRows(cell.front(), rowArgs);
  llvm::DenseSet<Value> zeros; // of the cell's own values
  for (unsigned i = 0; i < how.numZeros; ++i)
    zeros.insert(cell.getArgument(how.firstZero + i));
  SmallVector<Operation *> cloned;
  for (Operation &op : cell.front().without_terminator()) {
    if (op.getNumResults() && isMemoryEffectFree(&op) &&
        llvm::all_of(op.getResults(), [&](Value r) { return map.contains(r); }))
      continue;
    auto dim = dyn_cast<tensor::DimOp>(op);
    if (dim && how.count && rows.contains(dim.getSource()) &&
        dim.getConstantIndex() == std::optional<int64_t>(0)) {
      map.map(dim.getResult(), how.count);
      continue;
    }
    if (Value kept = addendOfZeros(op, zeros)) {
      if (zeros.contains(kept))
        zeros.insert(op.getResult(0));
      map.map(op.getResult(0), map.lookupOrDefault(kept));
      continue;
    }
    if (givesZeros(op, zeros))
      zeros.insert(op.getResult(0));
    cloned.push_back(b.clone(op, map));
  }
  auto yield = cast<YieldOp>(cell.front().getTerminator());
  zeroResults.clear();
  SmallVector<Value> results;
  for (Value v : yield.getValues()) {
    zeroResults.push_back(knownZeros(v, zeros));
    results.push_back(map.lookupOrDefault(v));
  }
  for (Value v : how.extra)
    results.push_back(map.lookupOrDefault(v));
  // The zero arguments' ops (zeroRows': a constant, broadcast) go first.
  SmallVector<Operation *> made;
  for (Value zero : args.slice(how.firstZero, how.numZeros))
    if (auto broadcast = zero.getDefiningOp<BroadcastToOp>())
      made.append({broadcast.getInput().getDefiningOp(), broadcast});
  cloned.insert(cloned.begin(), made.begin(), made.end());
  // Zero results the caller skips are not used yet: keep them for it.
  for (Operation *op : llvm::reverse(cloned))
    if (op && isOpTriviallyDead(op) &&
        llvm::none_of(op->getResults(),
                      [&](Value r) { return llvm::is_contained(results, r); }))
      op->erase();
  return results;
}

/// Group 0's work, `body` on it where the schedule has any group (else
/// `init` as it is): the first group has no children, so the folds peel it
/// off their loops.
SmallVector<Value>
firstGroup(TreeLowering &t, ValueRange init,
           function_ref<SmallVector<Value>(const Group &, ValueRange)> body) {
  OpBuilder &b = t.b;
  Value any = arith::CmpIOp::create(b, t.loc, arith::CmpIPredicate::sgt,
                                    t.schedule.getCount(), t.constant(0));
  auto branch = scf::IfOp::create(b, t.loc, TypeRange(init), any,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(branch.thenBlock());
  scf::YieldOp::create(b, t.loc, body(t.readGroup(t.constant(0)), init));
  b.setInsertionPointToStart(branch.elseBlock());
  scf::YieldOp::create(b, t.loc, init);
  return branch.getResults();
}

/// An scf.for over the schedule's groups after the first (firstGroup's),
/// forward or (`reverse`) backward, carrying `init`; `body` builds an
/// iteration from the group and the carried values and returns the next
/// ones.
SmallVector<Value> loopOverGroups(
    TreeLowering &t, ValueRange init, bool reverse,
    function_ref<SmallVector<Value>(const Group &, ValueRange)> body) {
  OpBuilder &b = t.b;
  Value count = t.schedule.getCount();
  auto loop = scf::ForOp::create(
      b, t.loc, t.constant(1), count, t.constant(1), init,
      [&](OpBuilder &nested, Location, Value i, ValueRange carried) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(nested.getInsertionBlock());
        Value g = i;
        if (reverse) // count - 1 down to 1
          g = arith::SubIOp::create(b, t.loc, count, i);
        SmallVector<Value> next = body(t.readGroup(g), carried);
        scf::YieldOp::create(b, t.loc, next);
      });
  return loop.getResults();
}

/// `acc + d` computed into `acc` itself (a linalg.generic whose init is
/// `acc`), so a sum carried across the group loop stays in one buffer
/// instead of a new (weight-sized) one an iteration.
Value accumulateInPlace(OpBuilder &b, Location loc, Value acc, Value d) {
  auto type = cast<RankedTensorType>(acc.getType());
  SmallVector<AffineMap> maps(
      2, AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{d}, ValueRange{acc}, maps, iterators,
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(
                   nb, l,
                   arith::AddFOp::create(nb, l, args[1], args[0]).getResult());
             })
      .getResult(0);
}

void TreeLowering::accumulate(MutableArrayRef<Value> sums,
                              ArrayRef<Value> more) {
  // A cell's VJP yields zero constants for captures it does not use.
  accumulate(sums, more, llvm::map_to_vector(more, isZeros));
}

void TreeLowering::accumulate(MutableArrayRef<Value> sums, ArrayRef<Value> more,
                              ArrayRef<bool> zeros) {
  for (auto [sum, d, zero] : llvm::zip_equal(sums, more, zeros))
    if (!zero)
      sum = accumulateInPlace(b, loc, sum, d);
}

SmallVector<Value> groupRows(TreeLowering &t, ValueRange all, const Group &g) {
  return llvm::map_to_vector(
      all, [&](Value v) { return t.rows(v, g.first, g.count); });
}

/// The fold's (or gradient's) values by position, for its form's lowering.
template <typename OpTy>
TreeFoldValues getFoldValues(OpTy op, ValueRange inputs, ValueRange states) {
  TreeFoldValues v;
  v.inputs = inputs;
  v.states = states;
  v.captures = op.getCaptures();
  v.arity = op.getArityAttr().getInt();
  if (op.getForm().hasEdgeCell())
    v.edgeCell = &op.getEdge();
  return v;
}

/// A fold lowered with its gradient: the rows its forward saves for it.
struct SavedRows {
  TreeResiduals residuals; // saved into buffers of their own
  /// Residuals the cell yields as a state: read from the states' rows.
  SmallVector<Value> fromStates;
  SmallVector<unsigned> stateIndices;
  /// The edge cell's residuals (the edge form), a row per edge, and the
  /// same values in the gradient's copy of the edge cell (null where none).
  TreeResiduals edgeResiduals;
  SmallVector<Value> edgeCopies;
  /// Set by the fold's lowering, for the gradient's.
  TreeScheduleOp schedule;
  SmallVector<Value> buffers;     // one a residual, a row per position
  SmallVector<Value> edgeBuffers; // one an edge residual, a row per edge
};

/// What `fold` saves for `grad`: each residual (TreeResiduals.h) the
/// node cell yields as a state is read back from the states by position;
/// the others get buffers.
void planSavedRows(TreeFoldOp fold, TreeFoldGradOp grad, SavedRows &saved) {
  unsigned numCaptures = fold.getCaptures().size();
  TreeResiduals all =
      findCellResiduals(fold.getNode(), grad.getNodeGrad(), numCaptures);
  auto yield = cast<YieldOp>(fold.getNode().front().getTerminator());
  for (auto [f, g] : llvm::zip_equal(all.forward, all.backward)) {
    auto state = llvm::find(yield.getValues(), f);
    if (state != yield.getValues().end()) {
      saved.fromStates.push_back(g);
      saved.stateIndices.push_back(
          std::distance(yield.getValues().begin(), state));
      continue;
    }
    saved.residuals.forward.push_back(f);
    saved.residuals.backward.push_back(g);
  }
  if (!fold.getForm().hasEdgeCell() || fold.getEdge().empty() ||
      grad.getEdge().empty() || grad.getEdgeGrad().empty())
    return;
  saved.edgeResiduals =
      findCellResiduals(fold.getEdge(), grad.getEdgeGrad(), numCaptures);
  saved.edgeCopies = findRecomputed(fold.getEdge(), grad.getEdge(),
                                    saved.edgeResiduals.forward);
}

/// Lowers `op`; with `saved`, its loop also writes each group's rows of
/// the residuals into buffers by position, which it records there.
void lowerFold(TreeFoldOp op, int64_t mode, SavedRows *saved) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  const TreeCellForm &form = op.getForm();
  TreeLowering t(b, loc, {op.getOffsets(), op.getChildren(), op.getRoots()},
                 form.getEdgesPerNode(op.getArityAttr().getInt()), mode);
  t.captureValues.insert(op.getCaptures().begin(), op.getCaptures().end());
  Value n = tensor::DimOp::create(b, loc, t.schedule.getOrder(), 0);
  SmallVector<Value> inputs, init;
  for (Value in : op.getInputs())
    inputs.push_back(t.toPositions(
        in, n, "grove.tree_fold: an input's rows and the forest's nodes"));
  for (Value s : op.getNodeStates())
    init.push_back(t.uninitialized(s.getType(), n));
  ArrayRef<Value> residuals;
  size_t numEdgeBuffers = 0;
  if (saved) {
    residuals = saved->residuals.forward;
    for (Value r : residuals)
      init.push_back(t.uninitialized(r.getType(), n));
    Value e = tensor::DimOp::create(b, loc, t.schedule.getEdgeChild(), 0);
    for (Value r : saved->edgeResiduals.forward)
      init.push_back(t.uninitialized(r.getType(), e));
    numEdgeBuffers = saved->edgeResiduals.forward.size();
    // The edge cell, inlined by the form, gives its residuals' rows too.
    if (numEdgeBuffers) {
      t.savingCell = &op.getEdge();
      t.savingValues = saved->edgeResiduals.forward;
    }
  }
  size_t numStates = op.getNumStates();
  // The cell on `args`, the group's input rows and its children's values
  // (`numZeros` of them zeros), then its states and saved rows written into
  // the carried buffers; the edge cell's saved rows (if it ran) into the
  // edge buffers.
  auto runCell = [&](const Group &g, ValueRange carried,
                     SmallVector<Value> args, unsigned numZeros) {
    llvm::append_range(args, op.getCaptures());
    TreeLowering::CellInlining how;
    how.count = g.count;
    how.firstZero = inputs.size();
    how.numZeros = numZeros;
    how.extra = residuals;
    SmallVector<bool> zeros;
    SmallVector<Value> next;
    for (auto [s, dest] :
         llvm::zip(t.inlineCell(op.getNode(), args, how, zeros), carried))
      next.push_back(t.insertRows(s, dest, g.first));
    ValueRange edgeBuffers = carried.take_back(numEdgeBuffers);
    if (t.savedRows.empty()) {
      llvm::append_range(next, edgeBuffers);
      return next;
    }
    for (auto [r, dest] : llvm::zip_equal(t.savedRows, edgeBuffers))
      next.push_back(t.insertRows(r, dest, g.firstEdge));
    t.savedRows.clear();
    return next;
  };
  SmallVector<Type> childTypes = getTreeCellTypes(op).getNodeChildTypes();
  auto leafGroup = [&](const Group &g, ValueRange carried) {
    SmallVector<Value> args = groupRows(t, inputs, g);
    for (Type child : childTypes)
      args.push_back(t.zeroRows(child, g.count));
    return runCell(g, carried, args, childTypes.size());
  };
  auto anyGroup = [&](const Group &g, ValueRange carried) {
    SmallVector<Value> args = groupRows(t, inputs, g), edgeArgs;
    llvm::append_range(
        args,
        form.buildChildArgs(
            t, g, getFoldValues(op, inputs, carried.take_front(numStates)),
            edgeArgs));
    return runCell(g, carried, args, 0);
  };
  SmallVector<Value> leaves = form.givesLeavesZeros()
                                  ? firstGroup(t, init, leafGroup)
                                  : firstGroup(t, init, anyGroup);
  SmallVector<Value> done =
      loopOverGroups(t, leaves, /*reverse=*/false, anyGroup);
  ArrayRef<Value> states = ArrayRef<Value>(done).take_front(numStates);
  if (saved) {
    saved->schedule = t.schedule;
    saved->buffers.assign(done.begin() + numStates,
                          done.end() - numEdgeBuffers);
    saved->edgeBuffers.assign(done.end() - numEdgeBuffers, done.end());
    // The cells' values are erased with the fold below.
    saved->residuals.forward.clear();
    saved->edgeResiduals.forward.clear();
  }
  SmallVector<Value> results;
  for (Value s : states)
    results.push_back(t.gather(s, t.schedule.getPosition()));
  for (Value s : states)
    results.push_back(t.gather(s, t.schedule.getRootPosition()));
  op.replaceAllUsesWith(results);
  op.erase();
}

/// What the gradient's group loop carries (TreeFoldCotangents), in and out
/// of the scf.for as one list of values, part after part.
struct CarriedCotangents : TreeFoldCotangents {
  SmallVector<Value> flatten() const {
    SmallVector<Value> all;
    for (const SmallVector<Value> *part : parts())
      llvm::append_range(all, *part);
    return all;
  }

  /// `all` split into parts of `shape`'s sizes.
  static CarriedCotangents unflatten(ValueRange all,
                                     const CarriedCotangents &shape) {
    CarriedCotangents c;
    for (auto [part, like] : llvm::zip_equal(c.parts(), shape.parts())) {
      part->assign(all.begin(), all.begin() + like->size());
      all = all.drop_front(like->size());
    }
    assert(all.empty() && "carried values left over");
    return c;
  }

private:
  std::array<SmallVector<Value> *, 4> parts() {
    return {&edgeChildStates, &inputs, &captures, &childSums};
  }
  std::array<const SmallVector<Value> *, 4> parts() const {
    return {&edgeChildStates, &inputs, &captures, &childSums};
  }
};

/// Lowers `op`; with `saved` (its fold's, lowered before it), over the
/// fold's schedule, reading the residuals' rows instead of recomputing them.
void lowerFoldGrad(TreeFoldGradOp op, int64_t mode, const SavedRows *saved) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  const TreeCellForm &form = op.getForm();
  int64_t edgesPerNode = form.getEdgesPerNode(op.getArityAttr().getInt());
  TreeLowering t =
      saved ? TreeLowering(b, loc, saved->schedule, edgesPerNode)
            : TreeLowering(b, loc,
                           {op.getOffsets(), op.getChildren(), op.getRoots()},
                           edgesPerNode, mode);
  t.captureValues.insert(op.getCaptures().begin(), op.getCaptures().end());
  TreeScheduleOp s = t.schedule;
  Value n = tensor::DimOp::create(b, loc, s.getOrder(), 0);
  Value e = tensor::DimOp::create(b, loc, s.getEdgeChild(), 0);
  SmallVector<Value> inputs, states, dStates;
  for (Value in : op.getInputs())
    inputs.push_back(t.toPositions(
        in, n, "grove.tree_fold_grad: an input's rows and the forest's nodes"));
  for (auto [st, dn, dr] : llvm::zip(op.getNodeStates(), op.getNodeCotangents(),
                                     op.getRootCotangents())) {
    states.push_back(t.gather(st, s.getOrder()));
    dStates.push_back(AddOp::create(b, loc, t.gather(dn, s.getOrder()),
                                    t.gather(dr, s.getRootOf())));
  }
  TreeFoldValues values = getFoldValues(op, inputs, states);
  if (values.edgeCell)
    values.edgeGrad = &op.getEdgeGrad();
  // Every edge row is written by its parent's group, every position row by
  // its own, before any group reads it (a root's parent edge is -1: the
  // gather gives zeros), so only the capture sums start from zeros.
  CarriedCotangents init;
  for (Value st : states)
    init.edgeChildStates.push_back(t.uninitialized(st.getType(), e));
  for (Value in : inputs)
    init.inputs.push_back(t.uninitialized(in.getType(), n));
  for (Value c : op.getCaptures())
    init.captures.push_back(createZerosLike(b, loc, c));
  if (form.sumsChildren())
    for (Type sum : getTreeCellTypes(op).getNodeChildTypes())
      init.childSums.push_back(t.uninitialized(sum, n));
  size_t numInputs = inputs.size(), numCaptures = op.getCaptures().size();
  SmallVector<Type> childTypes = getTreeCellTypes(op).getNodeChildTypes();
  // How a group's node_grad is inlined: its residuals read back from the
  // forward's buffers, the first `numZeros` children known zeros.
  SmallVector<Value> savedRows, givenCell;
  auto reading = [&](const Group &g, unsigned numZeros) {
    TreeLowering::CellInlining how;
    how.count = g.count;
    how.firstZero = numInputs;
    how.numZeros = numZeros;
    if (saved) {
      savedRows.clear();
      for (Value buffer : saved->buffers)
        savedRows.push_back(t.rows(buffer, g.first, g.count));
      for (unsigned i : saved->stateIndices)
        savedRows.push_back(t.rows(states[i], g.first, g.count));
      givenCell.assign(saved->residuals.backward);
      llvm::append_range(givenCell, saved->fromStates);
      how.given = givenCell;
      how.givenValues = savedRows;
    }
    return how;
  };
  // The edge form: the group's edges' saved rows, given to the gradient's
  // copy of the edge cell (which recomputes the messages) and to its VJP.
  SmallVector<Value> edgeRows, copies, copyRows;
  auto readEdges = [&](const Group &g) {
    if (!saved || saved->edgeBuffers.empty())
      return;
    edgeRows.clear();
    copies.clear();
    copyRows.clear();
    for (auto [buffer, copy] :
         llvm::zip_equal(saved->edgeBuffers, saved->edgeCopies)) {
      edgeRows.push_back(t.rows(buffer, g.firstEdge, g.numEdges));
      if (copy) {
        copies.push_back(copy);
        copyRows.push_back(edgeRows.back());
      }
    }
    t.givenRows[&op.getEdgeGrad()] = {saved->edgeResiduals.backward, edgeRows};
    t.givenRows[&op.getEdge()] = {copies, copyRows};
  };
  // The group's state cotangents: its rows' own and what their parent edges
  // received from later groups.
  auto stateCotangents = [&](const Group &g, const CarriedCotangents &d) {
    Value parents = t.rows(s.getParentEdge(), g.first, g.count);
    SmallVector<Value> out;
    for (auto [ds, de] : llvm::zip(dStates, d.edgeChildStates))
      out.push_back(AddOp::create(b, loc, t.rows(ds, g.first, g.count),
                                  t.gather(de, parents)));
    return out;
  };

  auto anyGroup = [&](const Group &g, ValueRange carried) {
    CarriedCotangents d = CarriedCotangents::unflatten(carried, init);
    SmallVector<Value> args = groupRows(t, inputs, g), edgeArgs;
    readEdges(g);
    SmallVector<Value> children = form.buildChildArgs(t, g, values, edgeArgs);
    llvm::append_range(args, children);
    llvm::append_range(args, op.getCaptures());
    llvm::append_range(args, stateCotangents(g, d));
    SmallVector<bool> zeros;
    SmallVector<Value> grads =
        t.inlineCell(op.getNodeGrad(), args, reading(g, 0), zeros);
    SmallVector<Value> dRows(ArrayRef<Value>(grads).take_front(numInputs));
    ArrayRef<Value> dChildren =
        ArrayRef<Value>(grads).slice(numInputs, children.size());
    t.accumulate(d.captures, ArrayRef<Value>(grads).take_back(numCaptures),
                 ArrayRef<bool>(zeros).take_back(numCaptures));
    form.buildChildCotangents(t, g, values, dChildren, edgeArgs, d, dRows);
    for (auto [dRow, dInput] : llvm::zip_equal(dRows, d.inputs))
      dInput = t.insertRows(dRow, dInput, g.first);
    return d.flatten();
  };
  auto leafGroup = [&](const Group &g, ValueRange carried) {
    CarriedCotangents d = CarriedCotangents::unflatten(carried, init);
    SmallVector<Value> args = groupRows(t, inputs, g);
    for (Type child : childTypes)
      args.push_back(t.zeroRows(child, g.count));
    llvm::append_range(args, op.getCaptures());
    llvm::append_range(args, stateCotangents(g, d));
    SmallVector<bool> zeros;
    SmallVector<Value> grads = t.inlineCell(
        op.getNodeGrad(), args, reading(g, childTypes.size()), zeros);
    // No children: no cotangents of theirs to pass on, and no capture
    // cotangent that is known zeros to add.
    t.accumulate(d.captures, ArrayRef<Value>(grads).take_back(numCaptures),
                 ArrayRef<bool>(zeros).take_back(numCaptures));
    for (auto [dRow, dInput] :
         llvm::zip(ArrayRef(grads).take_front(numInputs), d.inputs))
      dInput = t.insertRows(dRow, dInput, g.first);
    return d.flatten();
  };
  SmallVector<Value> looped =
      loopOverGroups(t, init.flatten(), /*reverse=*/true, anyGroup);
  // The rows given to the edge cells were the loop body's.
  t.givenRows.clear();
  SmallVector<Value> done = form.givesLeavesZeros()
                                ? firstGroup(t, looped, leafGroup)
                                : firstGroup(t, looped, anyGroup);
  CarriedCotangents result = CarriedCotangents::unflatten(done, init);
  SmallVector<Value> results;
  for (Value d : result.inputs)
    results.push_back(t.gather(d, s.getPosition()));
  llvm::append_range(results, result.captures);
  op.replaceAllUsesWith(results);
  op.erase();
}

/// The entry argument `v` is, if any: a block argument of a function's
/// entry block.
std::optional<unsigned> entryArgument(Value v, func::FuncOp func) {
  auto arg = dyn_cast<BlockArgument>(v);
  auto type = dyn_cast<RankedTensorType>(v.getType());
  // The descriptor's forest and nodes clauses are on dynamic sizes: a
  // static one is the code's own business (the service still checks it).
  if (!arg || arg.getOwner() != &func.getBody().front() || !type ||
      type.getRank() < 1 || !type.isDynamicDim(0))
    return std::nullopt;
  return arg.getArgNumber();
}

/// What `v`'s rows are one-to-one with, looking through the ops a node
/// input is typically made with (an embedding lookup, or one_hot and a
/// matmul of rows; elementwise functions).
Value getRowSource(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto lookup = dyn_cast<EmbeddingOp>(def)) {
      v = lookup.getIds();
      continue;
    }
    auto matmul = dyn_cast<MatmulOp>(def);
    bool rowWise = isa<OneHotOp>(def) ||
                   (matmul && !matmul.getTransposeLhs() &&
                    matmul.getLhs().getType().getRank() == 2) ||
                   (def->getNumOperands() == 1 &&
                    def->hasTrait<OpTrait::SameOperandsAndResultType>());
    if (!rowWise)
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// Forests passed straight from a function's arguments are checked by the
/// runtime before the function runs (the descriptor's `forest` and `nodes`
/// clauses, docs/abi.md): the offsets argument gets grove.forest =
/// [children, roots, arity] and each per-node input grove.forest_nodes.
void markForestArguments(Operation *fold, ValueRange forest, ValueRange inputs,
                         int64_t arity) {
  auto func = fold->getParentOfType<func::FuncOp>();
  if (!func)
    return;
  std::optional<unsigned> parts[3];
  for (int i = 0; i < 3; ++i)
    if (!(parts[i] = entryArgument(forest[i], func)))
      return;
  Builder b(fold->getContext());
  if (auto old =
          func.getArgAttrOfType<DenseI64ArrayAttr>(*parts[0], kForestAttr)) {
    // Two folds over one forest: the smaller arity bound holds for both.
    if (old[0] != *parts[1] || old[1] != *parts[2])
      return;
    if (old[2] > 0 && (arity == 0 || old[2] < arity))
      arity = old[2];
  }
  func.setArgAttr(*parts[0], kForestAttr,
                  b.getDenseI64ArrayAttr({*parts[1], *parts[2], arity}));
  for (Value in : inputs)
    if (std::optional<unsigned> i = entryArgument(getRowSource(in), func))
      func.setArgAttr(*i, kForestNodesAttr, b.getI64IntegerAttr(*parts[0]));
}

/// The schedule service's number of `mode` (abi.h).
int64_t modeNumber(TreeBatching mode) {
  switch (mode) {
  case TreeBatching::Levels:
    return 0;
  case TreeBatching::Nodes:
    return 1;
  case TreeBatching::LevelsByArity:
    return 2;
  }
  llvm_unreachable("not a TreeBatching");
}

struct GroveBatchDynamicTreesPass
    : grove::impl::GroveBatchDynamicTreesBase<GroveBatchDynamicTreesPass> {
  GroveBatchDynamicTreesPass() = default;
  // The options are copied by the pass manager (copyOptionValuesFrom).
  GroveBatchDynamicTreesPass(const GroveBatchDynamicTreesPass &other)
      : Base(other) {}
  explicit GroveBatchDynamicTreesPass(
      const GroveBatchDynamicTreesOptions &options) {
#define GROVE_TREES_OPTION(TYPE, FIELD, NAME, PIPELINE_FIELD, PIPELINE_NAME,   \
                           DEFAULT, DESCRIPTION)                               \
  FIELD = options.FIELD;
#include "grove/Dialect/Grove/Transforms/PassOptions.def"
  }

  // Declared in PassOptions.def, with the pipeline's and grovec's.
#define GROVE_TREES_OPTION(TYPE, FIELD, NAME, PIPELINE_FIELD, PIPELINE_NAME,   \
                           DEFAULT, DESCRIPTION)                               \
  Option<TYPE> FIELD{*this, NAME, llvm::cl::desc(DESCRIPTION),                 \
                     llvm::cl::init(DEFAULT), OptionValues<TYPE>::get()};
#include "grove/Dialect/Grove/Transforms/PassOptions.def"

  void runOnOperation() override {
    int64_t modeValue = modeNumber(mode);
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<TreeFoldOp, TreeFoldGradOp>(op))
        ops.push_back(op);
    });
    // A fold lowered with its gradient saves what the gradient would
    // recompute (TreeResiduals.h). Planned before any lowering: the fold
    // (lowered first, it comes first) is gone when its gradient is.
    llvm::DenseMap<Operation *, std::unique_ptr<SavedRows>> savedBy;
    llvm::DenseMap<Operation *, SavedRows *> savedFor;
    for (Operation *op : ops)
      if (auto grad = dyn_cast<TreeFoldGradOp>(op))
        if (TreeFoldOp fold = getForwardFold(grad);
            fold && !savedBy.count(fold)) {
          auto saved = std::make_unique<SavedRows>();
          planSavedRows(fold, grad, *saved);
          if (saved->residuals.forward.empty() && saved->fromStates.empty() &&
              saved->edgeResiduals.forward.empty())
            continue;
          savedFor[grad] = saved.get();
          savedBy[fold] = std::move(saved);
        }
    for (Operation *op : ops) {
      if (auto fold = dyn_cast<TreeFoldOp>(op)) {
        markForestArguments(
            fold, {fold.getOffsets(), fold.getChildren(), fold.getRoots()},
            fold.getInputs(),
            fold.getForm().getEdgesPerNode(fold.getArityAttr().getInt()));
        auto it = savedBy.find(op);
        lowerFold(fold, modeValue,
                  it == savedBy.end() ? nullptr : it->second.get());
        continue;
      }
      lowerFoldGrad(cast<TreeFoldGradOp>(op), modeValue, savedFor.lookup(op));
    }
  }
};

} // namespace

std::unique_ptr<Pass> mlir::grove::createGroveBatchDynamicTrees(
    const GroveBatchDynamicTreesOptions &options) {
  return std::make_unique<GroveBatchDynamicTreesPass>(options);
}
