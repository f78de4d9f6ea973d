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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
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

  /// The cell's results on `args`, its ops cloned here.
  SmallVector<Value> inlineCell(Region &cell, ValueRange args) override {
    IRMapping map;
    map.map(cell.getArguments(), args);
    for (Operation &op : cell.front().without_terminator())
      b.clone(op, map);
    auto yield = cast<YieldOp>(cell.front().getTerminator());
    return llvm::map_to_vector(yield.getValues(),
                               [&](Value v) { return map.lookupOrDefault(v); });
  }

  /// `n` rows of zeros of `t`'s row type.
  Value zeroRows(Type t, Value n) {
    auto type = cast<RankedTensorType>(t);
    Value zero = createSplatConstant(
        b, loc, RankedTensorType::get({}, type.getElementType()), 0.0);
    return BroadcastToOp::create(b, loc, zero, withDynamicRows(type.getShape()),
                                 {n});
  }

  SmallVector<Value> inlineLeafCell(Region &cell, ValueRange args,
                                    unsigned firstChild, unsigned numChildren,
                                    SmallVectorImpl<bool> &zeroResults);

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
bool givesZeros(Operation &op, const llvm::DenseSet<Value> &zeros) {
  auto zero = [&](Value v) { return zeros.contains(v) || isZeros(v); };
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
  auto zero = [&](Value v) { return zeros.contains(v) || isZeros(v); };
  Value lhs = op.getOperand(0), rhs = op.getOperand(1);
  Type type = op.getResult(0).getType();
  if (zero(rhs) && lhs.getType() == type)
    return lhs;
  if (isa<AddOp>(op) && zero(lhs) && rhs.getType() == type)
    return rhs;
  return {};
}

/// The cell inlined for a group whose nodes have no children, its
/// arguments [firstChild, firstChild + numChildren) being zeros: sums with
/// zeros are their other term and products with them zeros, so a leaf
/// does no work for its absent children (a Tree-LSTM's U GEMMs, forward
/// and backward). What that leaves unused, the zero arguments included, is
/// erased. `zeroResults` says which results are known zeros, which the
/// caller need not add anywhere.
SmallVector<Value>
TreeLowering::inlineLeafCell(Region &cell, ValueRange args, unsigned firstChild,
                             unsigned numChildren,
                             SmallVectorImpl<bool> &zeroResults) {
  IRMapping map;
  map.map(cell.getArguments(), args);
  llvm::DenseSet<Value> zeros; // of the cell's own values
  SmallVector<Operation *> cloned;
  for (unsigned i = 0; i < numChildren; ++i)
    zeros.insert(cell.getArgument(firstChild + i));
  for (Operation &op : cell.front().without_terminator()) {
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
    zeroResults.push_back(zeros.contains(v) || isZeros(v));
    results.push_back(map.lookupOrDefault(v));
  }
  // The zero arguments' ops (zeroRows': a constant, broadcast) go first.
  SmallVector<Operation *> made;
  for (Value zero : args.slice(firstChild, numChildren))
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
  for (auto [sum, d] : llvm::zip_equal(sums, more))
    if (!isZeros(d))
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

void lowerFold(TreeFoldOp op, int64_t mode) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  const TreeCellForm &form = op.getForm();
  TreeLowering t(b, loc, {op.getOffsets(), op.getChildren(), op.getRoots()},
                 form.getEdgesPerNode(op.getArityAttr().getInt()), mode);
  Value n = tensor::DimOp::create(b, loc, t.schedule.getOrder(), 0);
  SmallVector<Value> inputs, init;
  for (Value in : op.getInputs())
    inputs.push_back(t.toPositions(
        in, n, "grove.tree_fold: an input's rows and the forest's nodes"));
  for (Value s : op.getNodeStates())
    init.push_back(t.uninitialized(s.getType(), n));
  SmallVector<Type> childTypes = getTreeCellTypes(op).getNodeChildTypes();
  SmallVector<Value> leaves =
      firstGroup(t, init, [&](const Group &g, ValueRange carried) {
        SmallVector<Value> args = groupRows(t, inputs, g);
        for (Type child : childTypes)
          args.push_back(t.zeroRows(child, g.count));
        llvm::append_range(args, op.getCaptures());
        SmallVector<bool> zeros;
        SmallVector<Value> next;
        for (auto [s, dest] :
             llvm::zip(t.inlineLeafCell(op.getNode(), args, inputs.size(),
                                        childTypes.size(), zeros),
                       carried))
          next.push_back(t.insertRows(s, dest, g.first));
        return next;
      });
  SmallVector<Value> states = loopOverGroups(
      t, leaves, /*reverse=*/false, [&](const Group &g, ValueRange carried) {
        SmallVector<Value> args = groupRows(t, inputs, g), edgeArgs;
        llvm::append_range(
            args, form.buildChildArgs(t, g, getFoldValues(op, inputs, carried),
                                      edgeArgs));
        llvm::append_range(args, op.getCaptures());
        SmallVector<Value> next;
        for (auto [s, dest] :
             llvm::zip(t.inlineCell(op.getNode(), args), carried))
          next.push_back(t.insertRows(s, dest, g.first));
        return next;
      });
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

void lowerFoldGrad(TreeFoldGradOp op, int64_t mode) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  const TreeCellForm &form = op.getForm();
  TreeLowering t(b, loc, {op.getOffsets(), op.getChildren(), op.getRoots()},
                 form.getEdgesPerNode(op.getArityAttr().getInt()), mode);
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

  SmallVector<Value> looped = loopOverGroups(
      t, init.flatten(), /*reverse=*/true,
      [&](const Group &g, ValueRange carried) {
        CarriedCotangents d = CarriedCotangents::unflatten(carried, init);
        SmallVector<Value> args = groupRows(t, inputs, g), edgeArgs;
        SmallVector<Value> children =
            form.buildChildArgs(t, g, values, edgeArgs);
        llvm::append_range(args, children);
        llvm::append_range(args, op.getCaptures());
        llvm::append_range(args, stateCotangents(g, d));
        SmallVector<Value> grads = t.inlineCell(op.getNodeGrad(), args);
        SmallVector<Value> dRows(ArrayRef<Value>(grads).take_front(numInputs));
        ArrayRef<Value> dChildren =
            ArrayRef<Value>(grads).slice(numInputs, children.size());
        t.accumulate(d.captures, ArrayRef<Value>(grads).take_back(numCaptures));
        form.buildChildCotangents(t, g, values, dChildren, edgeArgs, d, dRows);
        for (auto [dRow, dInput] : llvm::zip_equal(dRows, d.inputs))
          dInput = t.insertRows(dRow, dInput, g.first);
        return d.flatten();
      });
  SmallVector<Type> childTypes = getTreeCellTypes(op).getNodeChildTypes();
  SmallVector<Value> done =
      firstGroup(t, looped, [&](const Group &g, ValueRange carried) {
        CarriedCotangents d = CarriedCotangents::unflatten(carried, init);
        SmallVector<Value> args = groupRows(t, inputs, g);
        for (Type child : childTypes)
          args.push_back(t.zeroRows(child, g.count));
        llvm::append_range(args, op.getCaptures());
        llvm::append_range(args, stateCotangents(g, d));
        SmallVector<bool> zeros;
        SmallVector<Value> grads = t.inlineLeafCell(
            op.getNodeGrad(), args, numInputs, childTypes.size(), zeros);
        // No children: no cotangents of theirs to pass on, and no capture
        // cotangent that is known zeros to add.
        for (auto [sum, dc, zero] :
             llvm::zip_equal(d.captures, ArrayRef(grads).take_back(numCaptures),
                             ArrayRef(zeros).take_back(numCaptures)))
          if (!zero)
            sum = accumulateInPlace(b, loc, sum, dc);
        for (auto [dRow, dInput] :
             llvm::zip(ArrayRef(grads).take_front(numInputs), d.inputs))
          dInput = t.insertRows(dRow, dInput, g.first);
        return d.flatten();
      });
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
    for (Operation *op : ops) {
      if (auto fold = dyn_cast<TreeFoldOp>(op)) {
        markForestArguments(
            fold, {fold.getOffsets(), fold.getChildren(), fold.getRoots()},
            fold.getInputs(),
            fold.getForm().getEdgesPerNode(fold.getArityAttr().getInt()));
        lowerFold(fold, modeValue);
        continue;
      }
      lowerFoldGrad(cast<TreeFoldGradOp>(op), modeValue);
    }
  }
};

} // namespace

std::unique_ptr<Pass> mlir::grove::createGroveBatchDynamicTrees(
    const GroveBatchDynamicTreesOptions &options) {
  return std::make_unique<GroveBatchDynamicTreesPass>(options);
}
