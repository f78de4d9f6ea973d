// RUN: grove-opt %s -split-input-file -grove-batch-dynamic-trees | FileCheck %s
// RUN: grove-opt %s -split-input-file -grove-batch-dynamic-trees=mode=nodes | FileCheck %s --check-prefix=NODES
// RUN: grove-opt %s -split-input-file -grove-batch-dynamic-trees=mode=levels-by-arity | FileCheck %s --check-prefix=ARITY

// Child-sum without an edge cell: one schedule, the inputs permuted into
// positions (their rows checked against the forest's nodes), one loop over
// the groups, from states by position left uninitialized (each group
// writes its rows before a later one reads them), whose body slices the
// group's rows, gathers the children's
// states over the group's edges, sums each node's edges (segment_sum over
// its slice of child_start), runs the cell and writes the rows back; then
// every node's and the roots' states are gathered out. The forest's
// arguments are marked for the runtime's check. Group 0 (leaves only:
// children come in earlier groups) is peeled off the loop, where there is
// any group: its cell has no children to gather or sum, and the add of
// their (zero) sum is gone.
// CHECK-LABEL: func.func @child_sum(
// CHECK-SAME: %[[OFF:[a-z0-9]+]]: tensor<?xi32> {grove.forest = array<i64: 1, 2, 0>}
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x4xf32> {grove.forest_nodes = 0 : i64}
// CHECK: %[[ORDER:.*]], %[[POS:.*]], %[[GROUPS:.*]], %[[EDGES:.*]], %{{.*}}, %[[STARTS:.*]], %{{.*}}, %{{.*}}, %[[RPOS:.*]], %[[COUNT:.*]] = grove.tree_schedule %[[OFF]], %{{.*}}, %{{.*}} {arity = 0 : i64, mode = 0 : i64}
// CHECK: grove.agree_dims %{{.*}}, %{{.*}}, "grove.tree_fold: an input's rows and the forest's nodes"
// CHECK: %[[XP:.*]] = grove.gather %[[X]], %[[ORDER]]
// CHECK: %[[INIT:.*]] = bufferization.alloc_tensor(%{{.*}}) : tensor<?x8xf32>
// CHECK: %[[ANY:.*]] = arith.cmpi sgt, %[[COUNT]], %{{.*}} : index
// CHECK: %[[LEAVES:.*]] = scf.if %[[ANY]] -> (tensor<?x8xf32>) {
// CHECK-COUNT-4: tensor.extract %[[GROUPS]][%[[ZERO:[a-z0-9_]+]],
// CHECK: %[[LROWS:.*]] = tensor.extract_slice %[[XP]]
// CHECK-NOT: grove.gather
// CHECK-NOT: grove.segment_sum
// CHECK: %[[LA:.*]] = grove.matmul %[[LROWS]]
// CHECK-NEXT: %[[LT:.*]] = grove.tanh %[[LA]]
// CHECK: %[[LINS:.*]] = tensor.insert_slice %[[LT]] into %[[INIT]]
// CHECK-NEXT: scf.yield %[[LINS]]
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[INIT]]
// CHECK: %[[DONE:.*]] = scf.for %[[G:.*]] = %c1{{[_0-9]*}} to %[[COUNT]] step %{{.*}} iter_args(%[[ST:.*]] = %[[LEAVES]]) -> (tensor<?x8xf32>) {
// CHECK-COUNT-4: tensor.extract %[[GROUPS]][%[[G]]
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %[[XP]]
// CHECK: %[[EROWS:.*]] = tensor.extract_slice %[[EDGES]]
// CHECK: %[[KIDS:.*]] = grove.gather %[[ST]], %[[EROWS]]
// CHECK: %[[BOUNDS:.*]] = tensor.extract_slice %[[STARTS]]
// CHECK: %[[SUM:.*]] = grove.segment_sum %[[KIDS]], %[[BOUNDS]]
// CHECK: grove.matmul %[[ROWS]]
// CHECK: %[[NEW:.*]] = grove.tanh
// CHECK: %[[INS:.*]] = tensor.insert_slice %[[NEW]] into %[[ST]]
// CHECK: scf.yield %[[INS]]
// CHECK: grove.gather %[[DONE]], %[[POS]]
// CHECK: grove.gather %[[DONE]], %[[RPOS]]
// CHECK-NOT: grove.tree_fold
// NODES-LABEL: func.func @child_sum(
// NODES: grove.tree_schedule {{.*}} {arity = 0 : i64, mode = 1 : i64}
// ARITY-LABEL: func.func @child_sum(
// ARITY: grove.tree_schedule {{.*}} {arity = 0 : i64, mode = 2 : i64}
func.func @child_sum(%off: tensor<?xi32>, %ch: tensor<?xi32>, %roots: tensor<?xi32>,
                     %x: tensor<?x4xf32>, %w: tensor<4x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %h, %hr = grove.tree_fold %off, %ch, %roots inputs(%x : tensor<?x4xf32>)
      captures(%w : tensor<4x8xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
    node {
    ^bb0(%xi: tensor<?x4xf32>, %hs: tensor<?x8xf32>, %wi: tensor<4x8xf32>):
      %a = grove.matmul %xi, %wi : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
      %s = grove.add %a, %hs : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
      %t = grove.tanh %s : tensor<?x8xf32>
      grove.yield %t : tensor<?x8xf32>
    }
  return %h, %hr : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// The leaves' cell: a product with the (zero) child sum is zeros and a sum
// with it its other term, so the peeled group has no GEMM by U; a use the
// zeros do not vanish from (sigmoid) still gets them, broadcast. The loop's
// cell is the whole one.
// CHECK-LABEL: func.func @leaf_cell(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x8xf32>, %[[U:[a-z0-9]+]]: tensor<8x8xf32>)
// CHECK: scf.if
// CHECK: %[[Z:.*]] = grove.broadcast_to
// CHECK-NEXT: %[[A:.*]] = grove.matmul %{{.*}}, %[[W]]
// CHECK-NEXT: %[[S:.*]] = grove.sigmoid %[[Z]]
// CHECK-NEXT: grove.mul %[[A]], %[[S]]
// CHECK: } else {
// CHECK: scf.for
// CHECK: grove.matmul %{{.*}}, %[[W]]
// CHECK: grove.matmul %{{.*}}, %[[U]]
// CHECK: grove.add
func.func @leaf_cell(%off: tensor<?xi32>, %ch: tensor<?xi32>, %roots: tensor<?xi32>,
                     %x: tensor<?x4xf32>, %w: tensor<4x8xf32>, %u: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %h, %hr = grove.tree_fold %off, %ch, %roots inputs(%x : tensor<?x4xf32>)
      captures(%w, %u : tensor<4x8xf32>, tensor<8x8xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
    node {
    ^bb0(%xi: tensor<?x4xf32>, %hs: tensor<?x8xf32>, %wi: tensor<4x8xf32>, %ui: tensor<8x8xf32>):
      %a = grove.matmul %xi, %wi : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
      %b = grove.matmul %hs, %ui : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
      %s = grove.add %a, %b : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
      %g = grove.sigmoid %hs : tensor<?x8xf32>
      %m = grove.mul %s, %g : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
      grove.yield %m : tensor<?x8xf32>
    }
  return %hr : tensor<?x8xf32>
}

// -----

// A node input looked up by token (grove.embedding, which one_hot @ table
// canonicalizes into): the tokens are the rows checked against the nodes.
// CHECK-LABEL: func.func @looked_up(
// CHECK-SAME: {grove.forest = array<i64: 1, 2, 0>}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<?xi32> {grove.forest_nodes = 0 : i64}
func.func @looked_up(%off: tensor<?xi32>, %ch: tensor<?xi32>, %roots: tensor<?xi32>,
                     %tok: tensor<?xi32>, %e: tensor<16x4xf32>, %w: tensor<4x8xf32>) -> tensor<?x8xf32> {
  %x = grove.embedding %e, %tok : (tensor<16x4xf32>, tensor<?xi32>) -> tensor<?x4xf32>
  %h, %hr = grove.tree_fold %off, %ch, %roots inputs(%x : tensor<?x4xf32>)
      captures(%w : tensor<4x8xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
    node {
    ^bb0(%xi: tensor<?x4xf32>, %hs: tensor<?x8xf32>, %wi: tensor<4x8xf32>):
      %a = grove.matmul %xi, %wi : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
      %s = grove.add %a, %hs : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
      grove.yield %s : tensor<?x8xf32>
    }
  return %hr : tensor<?x8xf32>
}

// -----

// N-ary: child slot k of the group's nodes is every 2nd edge from the
// group's first position * 2 + k; a missing child's edge is -1, which the
// gather turns into zeros. The peeled leaves' slots are zeros: no gather,
// and the add and sub of them are gone.
// CHECK-LABEL: func.func @binary(
// CHECK-SAME: {grove.forest = array<i64: 1, 2, 2>}
// CHECK: grove.tree_schedule {{.*}} {arity = 2 : i64, mode = 0 : i64}
// CHECK: scf.if
// CHECK-NOT: grove.gather
// CHECK: %[[LEAF:.*]] = grove.matmul
// CHECK-NOT: grove.add
// CHECK-NOT: grove.sub
// CHECK: tensor.insert_slice %[[LEAF]]
// CHECK: } else {
// CHECK: scf.for
// CHECK: tensor.extract_slice %edge_child[%{{.*}}] [%{{.*}}] [2]
// CHECK: grove.gather
// CHECK: tensor.extract_slice %edge_child[%{{.*}}] [%{{.*}}] [2]
// CHECK: grove.gather
// CHECK-NOT: grove.segment_sum
// CHECK: grove.sub
func.func @binary(%off: tensor<?xi32>, %ch: tensor<?xi32>, %roots: tensor<?xi32>,
                  %x: tensor<?x4xf32>, %w: tensor<4x8xf32>) -> tensor<?x8xf32> {
  %h, %hr = grove.tree_fold %off, %ch, %roots inputs(%x : tensor<?x4xf32>)
      captures(%w : tensor<4x8xf32>) {arity = 2 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
    node {
    ^bb0(%xi: tensor<?x4xf32>, %h0: tensor<?x8xf32>, %h1: tensor<?x8xf32>, %wi: tensor<4x8xf32>):
      %a = grove.matmul %xi, %wi : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
      %s = grove.add %a, %h0 : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
      %t = grove.sub %s, %h1 : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
      grove.yield %t : tensor<?x8xf32>
    }
  return %hr : tensor<?x8xf32>
}

// -----

// A forest computed in the function is not an entry input: no attribute
// (the schedule call still validates it at run time).
// CHECK-LABEL: func.func @computed_forest(
// CHECK-NOT: grove.forest
// CHECK: grove.tree_schedule
func.func @computed_forest(%off: tensor<?xi32>, %roots: tensor<?xi32>, %x: tensor<?x4xf32>)
    -> tensor<?x4xf32> {
  %ch = grove.slice %off [1] [-1] [1] : tensor<?xi32> -> tensor<?xi32>
  %h, %hr = grove.tree_fold %off, %ch, %roots inputs(%x : tensor<?x4xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
    node {
    ^bb0(%xi: tensor<?x4xf32>, %hs: tensor<?x4xf32>):
      %s = grove.add %xi, %hs : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
      grove.yield %s : tensor<?x4xf32>
    }
  return %hr : tensor<?x4xf32>
}

// -----

// Forest arguments of static size are not marked (the descriptor's
// clauses are on dynamic sizes; the schedule call still checks them).
// CHECK-LABEL: func.func @static_forest(
// CHECK-NOT: grove.forest
// CHECK: grove.tree_schedule
func.func @static_forest(%off: tensor<3xi32>, %ch: tensor<2xi32>, %roots: tensor<1xi32>,
                         %x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %o = tensor.cast %off : tensor<3xi32> to tensor<?xi32>
  %c = tensor.cast %ch : tensor<2xi32> to tensor<?xi32>
  %r = tensor.cast %roots : tensor<1xi32> to tensor<?xi32>
  %h, %hr = grove.tree_fold %o, %c, %r inputs(%x : tensor<?x4xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
    node {
    ^bb0(%xi: tensor<?x4xf32>, %hs: tensor<?x4xf32>):
      %s = grove.add %xi, %hs : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
      grove.yield %s : tensor<?x4xf32>
    }
  return %hr : tensor<?x4xf32>
}

// -----

// Nothing to do without a fold.
// CHECK-LABEL: func.func @no_fold
// CHECK-NEXT: return
func.func @no_fold(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}
