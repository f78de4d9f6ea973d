//===- TreeCellForms.cpp - Child-sum, edge and N-ary tree cells -----------===//
//
// The TreeCellForm of each form (TreeCellForm.h), a section each: what the
// node cell takes, what the verifier requires, which regions the VJP
// builds, and how a group's children reach the cell and their cotangents
// come back in grove-batch-dynamic-trees.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/TreeCellForm.h"
#include "grove/Dialect/Grove/IR/TreeFold.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::grove;

TreeCellForm::~TreeCellForm() = default;
TreeGroupBuilder::~TreeGroupBuilder() = default;

namespace {

//===----------------------------------------------------------------------===//
// Child-sum: the node cell gets the sum over the children of their states
//===----------------------------------------------------------------------===//

/// The Child-Sum Tree-LSTM's form, which the edge form extends with
/// messages: any number of children, one edge each, whose per-child values
/// are summed per node (grove.segment_sum).
class ChildSumForm : public TreeCellForm {
public:
  ChildSumForm() : ChildSumForm(TreeCellFormKind::ChildSum, "child-sum") {}

  bool hasEdgeCell() const override { return false; }
  bool sumsChildren() const override { return true; }
  // A sum over no children (of states or messages) is zeros.
  bool givesLeavesZeros() const override { return true; }
  int64_t getEdgesPerNode(int64_t) const override { return 0; }

  SmallVector<Type> getNodeChildTypes(const TreeCellTypes &t) const override {
    return t.states;
  }

  LogicalResult verify(Operation *op, int64_t arity,
                       bool hasEdgeRegion) const override {
    if (arity != 0)
      return op->emitOpError("the ")
             << getName() << " form needs arity 0, got " << arity;
    if (hasEdgeRegion != hasEdgeCell())
      return op->emitOpError("the ")
             << getName() << " form "
             << (hasEdgeCell() ? "needs an edge cell" : "has no edge cell");
    return success();
  }

  LogicalResult buildVJPRegions(OpBuilder &, TreeFoldOp,
                                TreeFoldGradOp) const override {
    return success();
  }

  SmallVector<Value>
  buildChildArgs(TreeGroupBuilder &l, const TreeGroup &g,
                 const TreeFoldValues &v,
                 SmallVectorImpl<Value> &edgeArgs) const override {
    Value children = l.getEdgeChildren(g);
    SmallVector<Value> messages;
    for (Value s : v.states)
      messages.push_back(l.gather(s, children));
    messages = buildMessages(l, g, v, messages, edgeArgs);
    return llvm::map_to_vector(messages,
                               [&](Value m) { return l.sumSegments(m, g); });
  }

  void buildChildCotangents(TreeGroupBuilder &l, const TreeGroup &g,
                            const TreeFoldValues &v, ArrayRef<Value> dChildren,
                            ArrayRef<Value> edgeArgs, TreeFoldCotangents &d,
                            MutableArrayRef<Value> dRows) const override {
    // Each edge reads its parent's sums' cotangent back: the sum's VJP.
    Value parents = l.getEdgeParents(g);
    SmallVector<Value> dMessages;
    for (auto [dSum, dChild] : llvm::zip_equal(d.childSums, dChildren)) {
      dSum = l.insertGroupRows(dChild, dSum, g);
      dMessages.push_back(l.gather(dSum, parents));
    }
    SmallVector<Value> dChildStates =
        buildMessageCotangents(l, g, v, dMessages, edgeArgs, d, dRows);
    for (auto [dEdge, dState] :
         llvm::zip_equal(d.edgeChildStates, dChildStates))
      dEdge = l.insertEdgeRows(dState, dEdge, g);
  }

protected:
  ChildSumForm(TreeCellFormKind kind, StringRef name)
      : TreeCellForm(kind, name) {}

  /// The per-edge values summed, from the children's states (a row an edge):
  /// here the states themselves.
  virtual SmallVector<Value>
  buildMessages(TreeGroupBuilder &, const TreeGroup &, const TreeFoldValues &,
                ArrayRef<Value> childStates, SmallVectorImpl<Value> &) const {
    return SmallVector<Value>(childStates);
  }

  /// The cotangents of the children's states (a row an edge), from those of
  /// the messages.
  virtual SmallVector<Value>
  buildMessageCotangents(TreeGroupBuilder &, const TreeGroup &,
                         const TreeFoldValues &, ArrayRef<Value> dMessages,
                         ArrayRef<Value>, TreeFoldCotangents &,
                         MutableArrayRef<Value>) const {
    return SmallVector<Value>(dMessages);
  }
};

//===----------------------------------------------------------------------===//
// Edge: child-sum over messages an edge cell computes per child
//===----------------------------------------------------------------------===//

/// The edge cell maps the parent's input rows, the child's states and the
/// captures to the child's messages (the per-child forget gate f_k * c_k).
class EdgeForm : public ChildSumForm {
public:
  EdgeForm() : ChildSumForm(TreeCellFormKind::Edge, "edge") {}

  bool hasEdgeCell() const override { return true; }

  SmallVector<Type> getNodeChildTypes(const TreeCellTypes &t) const override {
    return t.messages;
  }

  LogicalResult buildVJPRegions(OpBuilder &b, TreeFoldOp fold,
                                TreeFoldGradOp grad) const override {
    // The backward recomputes the messages, so it keeps the cell itself too.
    IRMapping map;
    fold.getEdge().cloneInto(&grad.getEdge(), map);
    return buildCellVJP(b, fold.getLoc(), fold.getEdge(), grad.getEdgeGrad());
  }

protected:
  SmallVector<Value>
  buildMessages(TreeGroupBuilder &l, const TreeGroup &g,
                const TreeFoldValues &v, ArrayRef<Value> childStates,
                SmallVectorImpl<Value> &edgeArgs) const override {
    Value parents = l.getEdgeParents(g);
    for (Value in : v.inputs)
      edgeArgs.push_back(l.gather(in, parents));
    llvm::append_range(edgeArgs, childStates);
    llvm::append_range(edgeArgs, v.captures);
    return l.inlineCell(*v.edgeCell, edgeArgs);
  }

  SmallVector<Value>
  buildMessageCotangents(TreeGroupBuilder &l, const TreeGroup &g,
                         const TreeFoldValues &v, ArrayRef<Value> dMessages,
                         ArrayRef<Value> edgeArgs, TreeFoldCotangents &d,
                         MutableArrayRef<Value> dRows) const override {
    // edge_grad yields the cotangents of the parents' input rows (summed
    // back per parent), of the child's states and of the captures.
    SmallVector<Value> args(edgeArgs);
    llvm::append_range(args, dMessages);
    SmallVector<Value> eg = l.inlineCell(*v.edgeGrad, args);
    OpBuilder &b = l.getBuilder();
    size_t numInputs = v.inputs.size(), numStates = v.states.size();
    for (size_t i = 0; i < numInputs; ++i)
      dRows[i] =
          AddOp::create(b, l.getLoc(), dRows[i], l.sumSegments(eg[i], g));
    l.accumulate(d.captures, ArrayRef<Value>(eg).take_back(v.captures.size()));
    return SmallVector<Value>(ArrayRef<Value>(eg).slice(numInputs, numStates));
  }
};

//===----------------------------------------------------------------------===//
// N-ary: the node cell gets K slots of child states
//===----------------------------------------------------------------------===//

/// The binary (K-ary) Tree-LSTM's form with per-position weights: slot k is
/// child k's states, zeros where there is no child k.
class NAryForm : public TreeCellForm {
public:
  NAryForm() : TreeCellForm(TreeCellFormKind::NAry, "N-ary") {}

  bool hasEdgeCell() const override { return false; }
  bool sumsChildren() const override { return false; }
  // Missing slots are zeros.
  bool givesLeavesZeros() const override { return true; }
  int64_t getEdgesPerNode(int64_t arity) const override { return arity; }

  SmallVector<Type> getNodeChildTypes(const TreeCellTypes &t) const override {
    SmallVector<Type> slots;
    for (int64_t k = 0; k < t.arity; ++k)
      llvm::append_range(slots, t.states);
    return slots;
  }

  LogicalResult verify(Operation *op, int64_t arity,
                       bool hasEdgeRegion) const override {
    if (arity < 1)
      return op->emitOpError("arity must be 0 (child-sum) or the most "
                             "children a node has, got ")
             << arity;
    if (arity > kMaxTreeArity)
      return op->emitOpError("arity ")
             << arity << " is above " << kMaxTreeArity;
    if (hasEdgeRegion)
      return op->emitOpError("an edge cell needs the child-sum form (arity 0)");
    return success();
  }

  LogicalResult buildVJPRegions(OpBuilder &, TreeFoldOp,
                                TreeFoldGradOp) const override {
    return success();
  }

  SmallVector<Value> buildChildArgs(TreeGroupBuilder &l, const TreeGroup &g,
                                    const TreeFoldValues &v,
                                    SmallVectorImpl<Value> &) const override {
    SmallVector<Value> slots;
    for (int64_t k = 0; k < v.arity; ++k) {
      Value children = l.getSlotChildren(g, k);
      for (Value s : v.states)
        slots.push_back(l.gather(s, children));
    }
    return slots;
  }

  void buildChildCotangents(TreeGroupBuilder &l, const TreeGroup &g,
                            const TreeFoldValues &v, ArrayRef<Value> dChildren,
                            ArrayRef<Value>, TreeFoldCotangents &d,
                            MutableArrayRef<Value>) const override {
    // Slot k's cotangents go straight to its edges: each child has one.
    size_t numStates = v.states.size();
    for (int64_t k = 0; k < v.arity; ++k)
      for (size_t i = 0; i < numStates; ++i)
        d.edgeChildStates[i] = l.insertSlotRows(dChildren[k * numStates + i],
                                                d.edgeChildStates[i], g, k);
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// The forms
//===----------------------------------------------------------------------===//

TreeCellFormKind mlir::grove::getTreeCellFormKind(int64_t arity,
                                                  bool hasEdgeRegion) {
  if (arity != 0)
    return TreeCellFormKind::NAry;
  return hasEdgeRegion ? TreeCellFormKind::Edge : TreeCellFormKind::ChildSum;
}

ArrayRef<const TreeCellForm *> mlir::grove::getTreeCellForms() {
  static const ChildSumForm childSum;
  static const NAryForm nary;
  static const EdgeForm edge;
  static const TreeCellForm *const forms[] = {&childSum, &nary, &edge};
  return forms;
}

const TreeCellForm &mlir::grove::getTreeCellForm(TreeCellFormKind kind) {
  const TreeCellForm *form = getTreeCellForms()[static_cast<size_t>(kind)];
  assert(form->getKind() == kind && "forms listed in the enum's order");
  return *form;
}
