// RUN: grove-opt %s -split-input-file -grove-batch-dynamic-trees | FileCheck %s
// RUN: grove-opt %s -split-input-file -grove-batch-dynamic-trees=mode=nodes | FileCheck %s --check-prefix=NODES

// Child-sum without an edge cell: one schedule, the inputs permuted into
// positions, one loop over the groups whose body slices the group's rows,
// gathers the children's states by position, sums each node's block of
// children (count x arity -> count), runs the cell and writes the rows
// back; then every node's and the roots' states are gathered out. The
// forest's arguments are marked for the runtime's check.
// CHECK-LABEL: func.func @child_sum(
// CHECK-SAME: %[[OFF:[a-z0-9]+]]: tensor<?xi32> {grove.forest = array<i64: 1, 2, 0>}
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x4xf32> {grove.forest_nodes = 0 : i64}
// CHECK: %[[ORDER:.*]], %[[POS:.*]], %{{.*}}, %[[EDGES:.*]], %{{.*}}, %{{.*}}, %[[RPOS:.*]], %[[COUNT:.*]] = grove.tree_schedule %[[OFF]], %{{.*}}, %{{.*}} {arity = 0 : i64, mode = 0 : i64}
// CHECK: %[[XP:.*]] = grove.gather %[[X]], %[[ORDER]]
// CHECK: %[[DONE:.*]] = scf.for %[[G:.*]] = %{{.*}} to %[[COUNT]] step %{{.*}} iter_args(%[[ST:.*]] = %{{.*}}) -> (tensor<?x8xf32>) {
// CHECK-DAG: %[[ROWS:.*]] = tensor.extract_slice %[[XP]]
// CHECK-DAG: %[[EROWS:.*]] = tensor.extract_slice %[[EDGES]]
// CHECK: %[[KIDS:.*]] = grove.gather %[[ST]], %[[EROWS]]
// CHECK: %[[BLOCKS:.*]] = tensor.expand_shape %[[KIDS]]
// CHECK: %[[SUM:.*]] = grove.reduce_sum %[[BLOCKS]] {axes = array<i64: 1>}
// CHECK: grove.matmul %[[ROWS]]
// CHECK: %[[NEW:.*]] = grove.tanh
// CHECK: %[[INS:.*]] = tensor.insert_slice %[[NEW]] into %[[ST]]
// CHECK: scf.yield %[[INS]]
// CHECK: grove.gather %[[DONE]], %[[POS]]
// CHECK: grove.gather %[[DONE]], %[[RPOS]]
// CHECK-NOT: grove.tree_fold
// NODES-LABEL: func.func @child_sum(
// NODES: grove.tree_schedule {{.*}} {arity = 0 : i64, mode = 1 : i64}
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

// N-ary: each slot below the group's arity gathers the children of that
// slot (every arity-th edge from the group's first edge + k); past it the
// slot is zeros.
// CHECK-LABEL: func.func @binary(
// CHECK: scf.for
// CHECK: %[[HAS0:.*]] = arith.cmpi slt, %{{.*}}, %[[AR:.*]] : index
// CHECK: scf.if %[[HAS0]] -> (tensor<?x8xf32>) {
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}] [%{{.*}}] [%[[AR]]]
// CHECK: grove.gather
// CHECK: } else {
// CHECK: grove.broadcast_to
// CHECK: scf.if
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

// Nothing to do without a fold.
// CHECK-LABEL: func.func @no_fold
// CHECK-NEXT: return
func.func @no_fold(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}
