//===- TreeCellForm.h - The forms of a grove.tree_fold cell ------*- C++
//-*-===//
//
// A fold's form (TreeCellFormKind, GroveTreeOps.td) says what a node's
// children give its cell: child-sum (the sum of their states), edge (the sum
// of messages an edge cell computes per child) or N-ary (K slots of child
// states). Each form is one TreeCellForm, which the tree ops' verifiers,
// the fold's VJP and grove-batch-dynamic-trees ask instead of testing the
// arity and the edge region themselves (docs/adding-a-cell-form.md).
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_DIALECT_GROVE_IR_TREECELLFORM_H
#define GROVE_DIALECT_GROVE_IR_TREECELLFORM_H

#include "grove/Dialect/Grove/IR/GroveOps.h"

namespace mlir::grove {

struct TreeCellTypes;

/// One group of a schedule: index values read inside the group loop.
struct TreeGroup {
  Value first, count;        // positions [first, first + count)
  Value firstEdge, numEdges; // edges [firstEdge, firstEdge + numEdges)
};

/// A fold's values inside a lowering: per-node ones are by position.
struct TreeFoldValues {
  ValueRange inputs;          // a row per position
  ValueRange states;          // a row per position
  ValueRange captures;        // as passed
  Region *edgeCell = nullptr; // the edge form's cell
  Region *edgeGrad = nullptr; // its VJP (the gradient's edge_grad)
  int64_t arity = 0;
};

/// The cotangents the gradient's reverse group loop carries, named for what
/// they are of. A form reads and writes the ones of the children.
struct TreeFoldCotangents {
  /// Of each state of each edge's child, a row an edge (the schedule's
  /// edges: one a child, or one a slot for N-ary).
  SmallVector<Value> edgeChildStates;
  /// Of each input, a row per position.
  SmallVector<Value> inputs;
  /// Of each capture, summed over the groups so far.
  SmallVector<Value> captures;
  /// Forms that sum over children: of what each node's children gave the
  /// node cell (its child arguments), a row per position, which each edge
  /// reads back by its parent's position.
  SmallVector<Value> childSums;
};

/// The builders a form's lowering uses, over one fold's schedule
/// (grove-batch-dynamic-trees implements them).
class TreeGroupBuilder {
public:
  virtual ~TreeGroupBuilder();
  virtual OpBuilder &getBuilder() = 0;
  virtual Location getLoc() = 0;
  /// The child positions of the group's edges, a row an edge.
  virtual Value getEdgeChildren(const TreeGroup &g) = 0;
  /// The parent positions of the group's edges, a row an edge.
  virtual Value getEdgeParents(const TreeGroup &g) = 0;
  /// The child positions in slot `k` of the group's nodes (-1: none).
  virtual Value getSlotChildren(const TreeGroup &g, int64_t k) = 0;
  /// Rows of `t` by index (-1: zeros).
  virtual Value gather(Value t, Value indices) = 0;
  /// One row a node of the group: the sum of its edges' rows in `perEdge`.
  virtual Value sumSegments(Value perEdge, const TreeGroup &g) = 0;
  /// `dest` with the group's rows (by position) replaced by `src`.
  virtual Value insertGroupRows(Value src, Value dest, const TreeGroup &g) = 0;
  /// `dest` with the group's edges' rows replaced by `src`.
  virtual Value insertEdgeRows(Value src, Value dest, const TreeGroup &g) = 0;
  /// `dest` with the rows of slot `k`'s edges replaced by `src`.
  virtual Value insertSlotRows(Value src, Value dest, const TreeGroup &g,
                               int64_t k) = 0;
  /// The cell's results on `args`, its ops cloned at the insertion point.
  virtual SmallVector<Value> inlineCell(Region &cell, ValueRange args) = 0;
  /// Adds each of `more` into the running sum in `sums`.
  virtual void accumulate(MutableArrayRef<Value> sums,
                          ArrayRef<Value> more) = 0;
};

/// A form of tree cell. One instance a form (getTreeCellForm); the arity
/// is the op's, passed where it matters.
class TreeCellForm {
public:
  virtual ~TreeCellForm();

  TreeCellFormKind getKind() const { return kind; }
  /// As the docs and diagnostics say it: "child-sum", "N-ary", "edge".
  StringRef getName() const { return name; }

  /// Whether the fold has an edge cell (and its gradient an edge_grad):
  /// required by the form that has it, refused by the others.
  virtual bool hasEdgeCell() const = 0;
  /// Whether a node's children are summed into its cell's arguments
  /// (any number of children), rather than given slot by slot.
  virtual bool sumsChildren() const = 0;
  /// Whether a node without children gets zeros as its child arguments and
  /// sends no cotangent anywhere through them: grove-batch-dynamic-trees
  /// then runs the first group (leaves only) without the form's builders,
  /// its cell specialized to those zeros.
  virtual bool givesLeavesZeros() const = 0;
  /// The schedule's edges a node (its tree_schedule `arity`) and the bound
  /// on children checked at the ABI: 0 for one edge a child, any number;
  /// K for K slots, edge p * K + k.
  virtual int64_t getEdgesPerNode(int64_t arity) const = 0;
  /// The node cell's child arguments: from the states' (or the edge
  /// cell's messages') types, those of the sums or of K slots.
  virtual SmallVector<Type> getNodeChildTypes(const TreeCellTypes &t) const = 0;

  /// Checks a fold's (or its gradient's) arity and edge region against
  /// the form; a located error on `op`.
  virtual LogicalResult verify(Operation *op, int64_t arity,
                               bool hasEdgeRegion) const = 0;

  /// Fills the regions of `grad`, the VJP of `fold`, that the form has
  /// besides node_grad (which the fold builds): the edge form's copy of its
  /// edge cell and the cell's VJP.
  virtual LogicalResult buildVJPRegions(OpBuilder &b, TreeFoldOp fold,
                                        TreeFoldGradOp grad) const = 0;

  /// What the group's children give the node cell, from the states by
  /// position. Appends the edge cell's arguments (if any) to `edgeArgs`,
  /// which the gradient passes back to buildChildCotangents.
  virtual SmallVector<Value>
  buildChildArgs(TreeGroupBuilder &l, const TreeGroup &g,
                 const TreeFoldValues &v,
                 SmallVectorImpl<Value> &edgeArgs) const = 0;
  /// The gradient's counterpart: from the cotangents of the node cell's
  /// child arguments, writes those of the children's states into
  /// `d.edgeChildStates` (and what the form carries besides), adds what
  /// reaches the group's input rows to `dRows` and into `d.captures` what
  /// reaches the captures.
  virtual void buildChildCotangents(TreeGroupBuilder &l, const TreeGroup &g,
                                    const TreeFoldValues &v,
                                    ArrayRef<Value> dChildren,
                                    ArrayRef<Value> edgeArgs,
                                    TreeFoldCotangents &d,
                                    MutableArrayRef<Value> dRows) const = 0;

protected:
  TreeCellForm(TreeCellFormKind kind, StringRef name)
      : kind(kind), name(name) {}

private:
  TreeCellFormKind kind;
  StringRef name;
};

/// The form a fold with `arity` and (or without) an edge region has: N-ary
/// for any other arity than 0 (its verifier refuses one below 1), else edge
/// with an edge region, else child-sum.
TreeCellFormKind getTreeCellFormKind(int64_t arity, bool hasEdgeRegion);
const TreeCellForm &getTreeCellForm(TreeCellFormKind kind);
/// Every form, one each, in the enum's order.
ArrayRef<const TreeCellForm *> getTreeCellForms();

} // namespace mlir::grove

#endif // GROVE_DIALECT_GROVE_IR_TREECELLFORM_H
