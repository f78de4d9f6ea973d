//===- GroveTreeOps.td - Recursion over per-sample trees ----*- tablegen -*-===//
//
// A model whose computation follows each sample's own tree (Tree-LSTM over
// syntax trees) is written as one grove.tree_fold: a cell compiled ahead
// of time, applied children first. grove-batch-dynamic-trees runs it on
// every node of a level at once (docs/trees.md).
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVETREEOPS_TD
#define GROVE_DIALECT_GROVE_IR_GROVETREEOPS_TD

include "grove/Dialect/Grove/IR/GroveBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"


// What a node's children give its cell. Not stored: a fold's form follows
// from its `arity` and whether it has an `edge` region (getFormKind), and
// each form is one TreeCellForm (TreeCellForm.h) the verifiers, the VJP and
// grove-batch-dynamic-trees ask.
def Grove_TreeCellFormKind : I32Enum<"TreeCellFormKind",
    "the form of a tree fold's cell", [
    I32EnumCase<"ChildSum", 0, "child_sum">,
    I32EnumCase<"NAry", 1, "nary">,
    I32EnumCase<"Edge", 2, "edge">]> {
  let cppNamespace = "::mlir::grove";
}

// The fold's and its gradient's form, from `arity` and the edge region.
defvar Grove_TreeFormAccessors = [{
    bool hasEdgeRegion() { return !getEdge().empty(); }
    /// child-sum, N-ary or edge (TreeCellForm.h).
    ::mlir::grove::TreeCellFormKind getFormKind() {
      return ::mlir::grove::getTreeCellFormKind(getArityAttr().getInt(),
                                                hasEdgeRegion());
    }
    const ::mlir::grove::TreeCellForm &getForm() {
      return ::mlir::grove::getTreeCellForm(getFormKind());
    }
}];

def Grove_TreeFoldOp : Grove_DiffOp<"tree_fold",
    [IsolatedFromAbove, RecursiveMemoryEffects, AttrSizedOperandSegments]> {
  let summary = "applies a cell to every node of a batch of trees, children first";
  let description = [{
    The forest is given as CSR child lists: node `i`'s children are
    `children[offsets[i] .. offsets[i+1])`, and `roots` holds one root a
    sample (all int32, `N + 1`, `E` and `B` long). Each of `inputs` has one
    row per node (dimension 0 is `N`); `captures` (weights) are passed to
    every cell as they are. The cell maps a node's input rows and what its
    children computed to the node's states; the results are the states of
    every node (`N` rows each) followed by those of the roots (`B` rows
    each), one pair per state.

    The cell is written over a *batch of nodes*: every block argument that
    has a row per node has a dynamic dimension 0, and each row of a result
    may depend only on the same row of those arguments (elementwise ops,
    a matmul of rows by a capture, reductions over other axes). The
    verifier checks this, which is what lets a batched lowering run one
    cell on many nodes.

    Three forms (TreeCellFormKind), by `arity` and the `edge` region:

    * `arity = 0` without an `edge` region, **child-sum**: the `node`
      region gets the node's input rows, then the sum over its children of
      each of their states, then the captures.
    * `arity = 0` with an `edge` region, **edge**: the same, but what is
      summed is the *messages* each child sends, computed by `edge` from
      its parent's input rows, the child's states and the captures (the
      Child-Sum Tree-LSTM's per-child forget gate).
    * `arity = K > 0`, **N-ary**: the `node` region gets the input rows,
      then the states of child 0, child 1, ... child K-1 (state by state
      within each child; zeros where a node has fewer children), then the
      captures. A node with more than K children is an error at run time.

    ```mlir
    %h, %hr = grove.tree_fold %offsets, %children, %roots
        inputs(%x : tensor<?x8xf32>) captures(%w : tensor<8x16xf32>)
        {arity = 0 : i64}
        : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>)
        -> (tensor<?x16xf32>, tensor<?x16xf32>)
      node {
      ^bb0(%xi: tensor<?x8xf32>, %hsum: tensor<?x16xf32>, %wi: tensor<8x16xf32>):
        %a = grove.matmul %xi, %wi : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
        %s = grove.add %a, %hsum : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
        %t = grove.tanh %s : tensor<?x16xf32>
        grove.yield %t : tensor<?x16xf32>
      }
    ```

    Cells may not read or write params (pass them as captures, which is
    also how their gradients are found). grove-batch-dynamic-trees lowers
    the op, by levels or node by node; its VJP is a grove.tree_fold_grad.
  }];
  let arguments = (ins Grove_IndexList:$offsets, Grove_IndexList:$children,
                       Grove_IndexList:$roots,
                       Variadic<Grove_AnyTensor>:$inputs,
                       Variadic<Grove_AnyTensor>:$captures,
                       I64Attr:$arity);
  let results = (outs Variadic<Grove_FloatTensor>:$results);
  let regions = (region AnyRegion:$edge, SizedRegion<1>:$node);
  let assemblyFormat = [{
    $offsets `,` $children `,` $roots
    (`inputs` `(` $inputs^ `:` type($inputs) `)`)?
    (`captures` `(` $captures^ `:` type($captures) `)`)?
    attr-dict `:` `(` type($offsets) `,` type($children) `,` type($roots) `)`
    `->` `(` type($results) `)`
    (`edge` $edge^)? `node` $node
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = !strconcat(Grove_TreeFormAccessors, [{
    /// One per state: the number of results is twice this.
    unsigned getNumStates() { return getResults().size() / 2; }
    /// Each state of every node (N rows), in node order.
    ::mlir::ResultRange getNodeStates() {
      return getResults().take_front(getNumStates());
    }
    /// Each state of the roots (B rows), in the order of `roots`.
    ::mlir::ResultRange getRootStates() {
      return getResults().drop_front(getNumStates());
    }
  }]);
}

def Grove_TreeFoldGradOp : Grove_Op<"tree_fold_grad",
    [IsolatedFromAbove, RecursiveMemoryEffects, AttrSizedOperandSegments,
     Grove_NotDifferentiable]> {
  let summary = "the VJP of a grove.tree_fold, parents first";
  let description = [{
    Built by grove.tree_fold's VJP. Operands: the fold's forest, inputs
    and captures, its node states (the forward's results), and the
    cotangents of its node states and of its root states. Results: the
    cotangent of each input (a row per node) and of each capture.

    Regions, each a cell's forward recomputed and then differentiated
    (nothing but the node states is saved between the passes):

    * `edge` (child-sum with an edge region): the fold's edge region,
      which recomputes the messages the node cell sums.
    * `node_grad`: the node cell's block arguments, then one cotangent per
      state; yields the cotangents of the input rows, of the node cell's
      child arguments (the sums, or the slots' states) and of the captures.
    * `edge_grad` (with an edge region): the edge cell's arguments, then
      one cotangent per message; yields those of the parent's input rows,
      of the child's states and of the captures.

    grove-batch-dynamic-trees lowers it over the same schedule as the fold,
    in reverse: a group's cotangents are complete once every later group
    (its parents) has been processed. Lowered together with the fold it is
    the VJP of, it reads the recomputed values its regions' reverse parts
    need from rows the fold's loop saved (docs/trees.md, "Saved rows").
  }];
  let arguments = (ins Grove_IndexList:$offsets, Grove_IndexList:$children,
                       Grove_IndexList:$roots,
                       Variadic<Grove_AnyTensor>:$inputs,
                       Variadic<Grove_AnyTensor>:$captures,
                       Variadic<Grove_FloatTensor>:$node_states,
                       Variadic<Grove_FloatTensor>:$node_cotangents,
                       Variadic<Grove_FloatTensor>:$root_cotangents,
                       I64Attr:$arity);
  let results = (outs Variadic<Grove_FloatTensor>:$results);
  let regions = (region AnyRegion:$edge, SizedRegion<1>:$node_grad,
                        AnyRegion:$edge_grad);
  let assemblyFormat = [{
    $offsets `,` $children `,` $roots
    (`inputs` `(` $inputs^ `:` type($inputs) `)`)?
    (`captures` `(` $captures^ `:` type($captures) `)`)?
    `states` `(` $node_states `:` type($node_states) `)`
    `cotangents` `(` $node_cotangents `:` type($node_cotangents) `)`
    `root_cotangents` `(` $root_cotangents `:` type($root_cotangents) `)`
    attr-dict `:` `(` type($offsets) `,` type($children) `,` type($roots) `)`
    `->` `(` type($results) `)`
    (`edge` $edge^)? `node_grad` $node_grad (`edge_grad` $edge_grad^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = Grove_TreeFormAccessors;
}

def Grove_TreeScheduleOp : Grove_Op<"tree_schedule",
    [Pure, Grove_NotDifferentiable]> {
  let summary = "orders a batch of trees' nodes for a batched fold";
  let description = [{
    The runtime's schedule of a forest (`grove_rt_tree_schedule`, abi.h),
    emitted by grove-batch-dynamic-trees: nodes are renumbered into
    positions, children before parents, in groups that one cell call runs
    on. `mode` 0 groups by level, 1 makes one group a node in post-order
    (the unbatched reference), 2 groups by (level, arity). Edges link a
    parent position to a child position: with `arity` 0 (child-sum) the E
    edges in their parents' position order, with `arity` K one edge per
    child slot, `p * K + k`. Results, all int32 but the count: `order`
    (position -> node, N), `position` (node -> position, N), `groups`
    (N x 4: first position, count, first edge, edge count), `edge_child`
    (edge -> child position or -1), `edge_parent` (edge -> parent
    position), `child_start` (position -> first edge, N + 1),
    `parent_edge` (position -> edge or -1, N), `root_of` (position -> root
    index or -1, N), `root_position` (B) and the number of groups. A
    malformed forest fails the call; the results are then -1 and there are
    no groups. Bufferizes to buffers the code allocates and one runtime
    call.
  }];
  let arguments = (ins Grove_IndexList:$offsets, Grove_IndexList:$children,
                       Grove_IndexList:$roots, I64Attr:$arity, I64Attr:$mode);
  let results = (outs Grove_IndexList:$order, Grove_IndexList:$position,
                      TensorRankOf<[I32], [2]>:$groups,
                      Grove_IndexList:$edge_child, Grove_IndexList:$edge_parent,
                      Grove_IndexList:$child_start,
                      Grove_IndexList:$parent_edge, Grove_IndexList:$root_of,
                      Grove_IndexList:$root_position, Index:$count);
  let assemblyFormat = [{
    $offsets `,` $children `,` $roots attr-dict `:`
    functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$offsets, "::mlir::Value":$children,
                   "::mlir::Value":$roots, "int64_t":$arity, "int64_t":$mode)>
  ];
}

#endif // GROVE_DIALECT_GROVE_IR_GROVETREEOPS_TD
