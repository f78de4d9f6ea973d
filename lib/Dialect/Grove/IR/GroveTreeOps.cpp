//===- GroveTreeOps.cpp - grove.tree_fold and its companions --------------===//
//
// Verifiers of the tree ops (GroveTreeOps.td), the fold's VJP and the cell
// helpers of TreeFold.h. A cell is checked to be row-wise, since every
// lowering runs it on a batch of nodes whose rows must not mix.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/TreeFold.h"

#include "grove/Dialect/Grove/IR/ReverseSweep.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::grove;

//===----------------------------------------------------------------------===//
// Cell types
//===----------------------------------------------------------------------===//

SmallVector<Type> TreeCellTypes::getNodeCellTypes() const {
  SmallVector<Type> types(inputs);
  llvm::append_range(types, getNodeChildTypes());
  llvm::append_range(types, captures);
  return types;
}

SmallVector<Type> TreeCellTypes::getEdgeCellTypes() const {
  SmallVector<Type> types(inputs);
  llvm::append_range(types, states);
  llvm::append_range(types, captures);
  return types;
}

/// The cell types of a fold or its gradient: both have the fold's inputs,
/// captures, states (the fold's results, the gradient's saved ones), arity
/// and form, and the edge form's cell.
template <typename OpTy>
static TreeCellTypes getCellTypes(OpTy op, TypeRange states) {
  TreeCellTypes t;
  t.inputs = llvm::to_vector(op.getInputs().getTypes());
  t.states = llvm::to_vector(states);
  t.captures = llvm::to_vector(op.getCaptures().getTypes());
  t.arity = op.getArityAttr().getInt();
  t.form = &op.getForm();
  if (t.form->hasEdgeCell() && op.getEdge().hasOneBlock())
    if (auto yield = dyn_cast<YieldOp>(op.getEdge().front().getTerminator()))
      t.messages = llvm::to_vector(yield.getValues().getTypes());
  return t;
}

TreeCellTypes mlir::grove::getTreeCellTypes(TreeFoldOp op) {
  return getCellTypes(op, op.getNodeStates().getTypes());
}

TreeCellTypes mlir::grove::getTreeCellTypes(TreeFoldGradOp op) {
  return getCellTypes(op, op.getNodeStates().getTypes());
}

Value mlir::grove::createZerosLike(OpBuilder &b, Location loc, Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  if (type.hasStaticShape())
    return createSplatConstant(b, loc, type, 0.0);
  Value zero = createSplatConstant(
      b, loc, RankedTensorType::get({}, type.getElementType()), 0.0);
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, like, d));
  return BroadcastToOp::create(b, loc, zero, type.getShape(), sizes);
}

//===----------------------------------------------------------------------===//
// Row-wise cells
//===----------------------------------------------------------------------===//

namespace {

bool hasDynamicRows(Type t) {
  auto type = dyn_cast<RankedTensorType>(t);
  return type && type.getRank() >= 1 && type.isDynamicDim(0);
}

/// Whether `op`, with at least one row operand, keeps each row to itself:
/// its RowWiseOpInterface says (GroveRowWise.cpp); tensor.dim reads a size.
bool isRowWise(Operation *op, const llvm::DenseSet<Value> &rows) {
  if (isa<tensor::DimOp>(op))
    return true;
  auto rowWise = dyn_cast<RowWiseOpInterface>(op);
  return rowWise &&
         rowWise.keepsRowsApart([&](Value v) { return rows.contains(v); });
}

} // namespace

bool mlir::grove::hasStaticRows(Type t) {
  auto type = dyn_cast<RankedTensorType>(t);
  return hasDynamicRows(t) &&
         llvm::none_of(type.getShape().drop_front(), ShapedType::isDynamic);
}

llvm::DenseSet<Value> mlir::grove::getCellRows(Block &block,
                                               ArrayRef<bool> rowArgs) {
  llvm::DenseSet<Value> rows;
  for (auto [arg, isRow] : llvm::zip_equal(block.getArguments(), rowArgs))
    if (isRow)
      rows.insert(arg);
  for (Operation &op : block.without_terminator()) {
    if (isa<tensor::DimOp>(op) ||
        llvm::none_of(op.getOperands(),
                      [&](Value v) { return rows.contains(v); }) ||
        !isRowWise(&op, rows))
      continue;
    for (Value r : op.getResults())
      if (hasDynamicRows(r.getType()))
        rows.insert(r);
  }
  return rows;
}

namespace {

/// The first `numRows` arguments of `block` have a row per node; every
/// value computed from them must keep rows apart.
LogicalResult verifyRowWise(Operation *owner, Block &block, unsigned numRows,
                            StringRef cell) {
  llvm::DenseSet<Value> rows;
  for (BlockArgument arg : block.getArguments().take_front(numRows))
    rows.insert(arg);
  for (Operation &op : block.without_terminator()) {
    if (op.getNumRegions() ||
        isa<StateAccessOpInterface, ValueAndGradOp, OptimizerOpInterface>(op))
      return op.emitOpError("cannot be in the ")
             << cell << " cell of " << owner->getName()
             << (isa<StateAccessOpInterface>(op)
                     ? ": pass params to the cell as captures"
                     : ": a cell is straight-line and stateless");
    if (llvm::none_of(op.getOperands(),
                      [&](Value v) { return rows.contains(v); }))
      continue;
    if (!isRowWise(&op, rows))
      return op.emitOpError("mixes the rows of different nodes in the ")
             << cell << " cell of " << owner->getName()
             << " (each row of a cell's results may depend only on the "
                "same row of its per-node arguments)";
    if (isa<tensor::DimOp>(op))
      continue;
    for (Value r : op.getResults()) {
      if (!hasDynamicRows(r.getType()))
        return op.emitOpError("in the ")
               << cell << " cell of " << owner->getName()
               << " must keep a dynamic dimension 0 (one row per node)";
      rows.insert(r);
    }
  }
  // Every result a row per node: the lowering writes a group's rows back.
  for (Value v : block.getTerminator()->getOperands())
    if (!rows.contains(v))
      return owner->emitOpError("the ")
             << cell
             << " cell must yield values computed from its per-node "
                "arguments (one row per node)";
  return success();
}

/// `region`'s one block takes `types` and yields values of `yields` types
/// (any float tensors with dynamic rows where `yields` is null).
LogicalResult verifyCell(Operation *owner, Region &region, StringRef cell,
                         ArrayRef<Type> types,
                         std::optional<ArrayRef<Type>> yields) {
  Block &block = region.front();
  if (block.getArgumentTypes() != TypeRange(types)) {
    InFlightDiagnostic d = owner->emitOpError("the ")
                           << cell << " cell must take (";
    llvm::interleaveComma(types, d);
    d << ") (inputs, what the children give, captures), got (";
    llvm::interleaveComma(block.getArgumentTypes(), d);
    return d << ")";
  }
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return owner->emitOpError("the ")
           << cell << " cell must end in grove.yield";
  if (yields && yield.getValues().getTypes() != TypeRange(*yields)) {
    InFlightDiagnostic d = owner->emitOpError("the ")
                           << cell << " cell must yield the states' types (";
    llvm::interleaveComma(*yields, d);
    return d << ")";
  }
  if (!yields) {
    if (yield.getValues().empty())
      return owner->emitOpError("the ")
             << cell << " cell must yield at least one message";
    for (Type t : yield.getValues().getTypes())
      if (!hasStaticRows(t) ||
          !isa<FloatType>(cast<RankedTensorType>(t).getElementType()))
        return owner->emitOpError("the ")
               << cell
               << " cell's messages must be float tensors with a "
                  "dynamic dimension 0 and static others, got "
               << t;
  }
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// grove.tree_fold
//===----------------------------------------------------------------------===//

LogicalResult TreeFoldOp::verify() {
  if (failed(getForm().verify(*this, getArityAttr().getInt(), hasEdgeRegion())))
    return failure();
  if (getResults().empty() || getResults().size() % 2)
    return emitOpError("needs a pair of results per state (every node's, "
                       "then the roots'), got ")
           << getResults().size() << " results";
  for (unsigned i = 0; i < getNumStates(); ++i) {
    Type node = getNodeStates()[i].getType(),
         root = getRootStates()[i].getType();
    if (node != root || !hasStaticRows(node))
      return emitOpError("state ")
             << i << " must have one type for nodes and roots, with a "
             << "dynamic dimension 0 and static others; got " << node << " and "
             << root;
  }
  for (Value in : getInputs())
    if (!hasStaticRows(in.getType()))
      return emitOpError("inputs must have a dynamic dimension 0 (one row a "
                         "node) and static others, got ")
             << in.getType();
  return success();
}

LogicalResult TreeFoldOp::verifyRegions() {
  TreeCellTypes types = getTreeCellTypes(*this);
  unsigned numInputs = types.inputs.size();
  if (types.form->hasEdgeCell()) {
    if (!getEdge().hasOneBlock())
      return emitOpError("the edge cell must have one block");
    if (failed(verifyCell(*this, getEdge(), "edge", types.getEdgeCellTypes(),
                          std::nullopt)) ||
        failed(verifyRowWise(*this, getEdge().front(),
                             numInputs + types.states.size(), "edge")))
      return failure();
  }
  SmallVector<Type> nodeTypes = types.getNodeCellTypes();
  if (failed(verifyCell(*this, getNode(), "node", nodeTypes,
                        ArrayRef<Type>(types.states))))
    return failure();
  return verifyRowWise(*this, getNode().front(),
                       nodeTypes.size() - types.captures.size(), "node");
}

//===----------------------------------------------------------------------===//
// The VJP: a grove.tree_fold_grad over cells' VJPs
//===----------------------------------------------------------------------===//

LogicalResult mlir::grove::buildCellVJP(OpBuilder &b, Location loc,
                                        Region &cell, Region &dest) {
  OpBuilder::InsertionGuard guard(b);
  Block &src = cell.front();
  auto yield = cast<YieldOp>(src.getTerminator());
  SmallVector<Type> types = llvm::to_vector(src.getArgumentTypes());
  llvm::append_range(types, yield.getValues().getTypes());
  Block *block =
      b.createBlock(&dest, {}, types, SmallVector<Location>(types.size(), loc));
  IRMapping map;
  unsigned numArgs = src.getNumArguments();
  for (unsigned i = 0; i < numArgs; ++i)
    map.map(src.getArgument(i), block->getArgument(i));
  SmallVector<Operation *> forward;
  for (Operation &op : src.without_terminator())
    forward.push_back(b.clone(op, map));

  ReverseSweep sweep(b, loc,
                     "differentiating the cell of this grove.tree_fold");
  for (unsigned i = 0; i < numArgs; ++i)
    sweep.markActive(block->getArgument(i));
  sweep.propagateActivity(forward);
  for (auto [j, y] : llvm::enumerate(yield.getValues()))
    sweep.accumulate(map.lookupOrDefault(y), block->getArgument(numArgs + j));
  if (failed(sweep.run(forward)))
    return failure();
  SmallVector<Value> cotangents;
  for (unsigned i = 0; i < numArgs; ++i) {
    Value arg = block->getArgument(i);
    Value c = sweep.getCotangent(arg);
    cotangents.push_back(c ? c : createZerosLike(b, loc, arg));
  }
  YieldOp::create(b, loc, cotangents);
  return success();
}

LogicalResult TreeFoldOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                   ArrayRef<bool> needed,
                                   SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  for (Value v : llvm::concat<Value>(getInputs(), getCaptures()))
    if (!isa<FloatType>(cast<RankedTensorType>(v.getType()).getElementType()))
      return emitOpError("cannot be differentiated: its inputs and captures "
                         "must be float tensors (look integer ids up before "
                         "the fold), got ")
             << v.getType();
  unsigned numStates = getNumStates();
  SmallVector<Value> dNodes, dRoots;
  for (unsigned i = 0; i < numStates; ++i) {
    Value n = getNodeStates()[i], r = getRootStates()[i];
    dNodes.push_back(dy[i] ? dy[i] : createZerosLike(b, loc, n));
    dRoots.push_back(dy[numStates + i] ? dy[numStates + i]
                                       : createZerosLike(b, loc, r));
  }
  SmallVector<Type> types = llvm::to_vector(getInputs().getTypes());
  llvm::append_range(types, getCaptures().getTypes());
  auto grad = TreeFoldGradOp::create(
      b, loc, types, getOffsets(), getChildren(), getRoots(), getInputs(),
      getCaptures(), getNodeStates(), dNodes, dRoots, getArityAttr());
  if (failed(getForm().buildVJPRegions(b, *this, grad)) ||
      failed(buildCellVJP(b, loc, getNode(), grad.getNodeGrad())))
    return failure();
  out.append(3, Value());
  llvm::append_range(out, grad.getResults());
  (void)needed;
  return success();
}

//===----------------------------------------------------------------------===//
// grove.tree_fold_grad, grove.tree_schedule, grove.gather
//===----------------------------------------------------------------------===//

/// A cell VJP region takes `args` and then one cotangent per `results`, and
/// yields one cotangent per argument, of its type.
static LogicalResult verifyCellVJP(Operation *owner, Region &region,
                                   StringRef name, ArrayRef<Type> args,
                                   ArrayRef<Type> results) {
  SmallVector<Type> types(args);
  llvm::append_range(types, results);
  if (!region.hasOneBlock() || region.front().getArgumentTypes() != types)
    return owner->emitOpError("the ")
           << name << " region must take the cell's arguments and one "
           << "cotangent per cell result";
  auto yield = dyn_cast<YieldOp>(region.front().getTerminator());
  if (!yield || yield.getValues().getTypes() != TypeRange(args))
    return owner->emitOpError("the ")
           << name << " region must yield one cotangent per cell argument";
  return success();
}

LogicalResult TreeFoldGradOp::verifyRegions() {
  TreeCellTypes t = getTreeCellTypes(*this);
  if (t.form->hasEdgeCell()) {
    if (!getEdge().hasOneBlock() ||
        !isa<YieldOp>(getEdge().front().getTerminator()) ||
        getEdge().front().getArgumentTypes() != t.getEdgeCellTypes())
      return emitOpError("the edge region must be the fold's edge cell");
    if (failed(verifyCellVJP(*this, getEdgeGrad(), "edge_grad",
                             t.getEdgeCellTypes(), t.messages)))
      return failure();
  }
  return verifyCellVJP(*this, getNodeGrad(), "node_grad", t.getNodeCellTypes(),
                       t.states);
}

LogicalResult TreeFoldGradOp::verify() {
  if (failed(getForm().verify(*this, getArityAttr().getInt(), hasEdgeRegion())))
    return failure();
  unsigned numStates = getNodeStates().size();
  if (numStates == 0 || getNodeCotangents().size() != numStates ||
      getRootCotangents().size() != numStates)
    return emitOpError("needs one node state, node cotangent and root "
                       "cotangent per state");
  SmallVector<Type> types = llvm::to_vector(getInputs().getTypes());
  llvm::append_range(types, getCaptures().getTypes());
  if (getResultTypes() != TypeRange(types))
    return emitOpError("must give one cotangent per input and capture, of "
                       "its type");
  if (getForm().hasEdgeCell() != !getEdgeGrad().empty())
    return emitOpError("has an edge cell and an edge_grad cell, or neither");
  return success();
}

void TreeScheduleOp::build(OpBuilder &b, OperationState &state, Value offsets,
                           Value children, Value roots, int64_t arity,
                           int64_t mode) {
  auto list = RankedTensorType::get({ShapedType::kDynamic}, b.getI32Type());
  auto groups =
      RankedTensorType::get({ShapedType::kDynamic, 4}, b.getI32Type());
  build(b, state,
        {list, list, groups, list, list, list, list, list, list,
         b.getIndexType()},
        offsets, children, roots, b.getI64IntegerAttr(arity),
        b.getI64IntegerAttr(mode));
}
