// RUN: grove-opt %s | grove-opt | FileCheck %s

// The tree ops round-trip: grove.tree_fold in its child-sum form (with and
// without an edge cell) and its N-ary form, grove.tree_schedule,
// grove.gather and grove.segment_sum (grove.tree_fold_grad: autodiff
// tests build it).

// CHECK-LABEL: func.func @child_sum
// CHECK: grove.tree_fold %{{.*}}, %{{.*}}, %{{.*}} inputs(%{{.*}} : tensor<?x4xf32>) captures(%{{.*}} : tensor<4x8xf32>) {arity = 0 : i64}
// CHECK-SAME: -> (tensor<?x8xf32>, tensor<?x8xf32>) node {
func.func @child_sum(%off: tensor<?xi32>, %ch: tensor<?xi32>, %roots: tensor<?xi32>,
                     %x: tensor<?x4xf32>, %w: tensor<4x8xf32>) -> tensor<?x8xf32> {
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
  return %hr : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @edge_cell
// CHECK: edge {
// CHECK: } node {
func.func @edge_cell(%off: tensor<?xi32>, %ch: tensor<?xi32>, %roots: tensor<?xi32>,
                     %x: tensor<?x4xf32>, %w: tensor<4x8xf32>) -> tensor<?x8xf32> {
  %h, %hr = grove.tree_fold %off, %ch, %roots inputs(%x : tensor<?x4xf32>)
      captures(%w : tensor<4x8xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
    edge {
    ^bb0(%xp: tensor<?x4xf32>, %hk: tensor<?x8xf32>, %wi: tensor<4x8xf32>):
      %g = grove.matmul %xp, %wi : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
      %f = grove.sigmoid %g : tensor<?x8xf32>
      %m = grove.mul %f, %hk : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
      grove.yield %m : tensor<?x8xf32>
    }
    node {
    ^bb0(%xi: tensor<?x4xf32>, %ms: tensor<?x8xf32>, %wi: tensor<4x8xf32>):
      %a = grove.matmul %xi, %wi : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
      %s = grove.add %a, %ms : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
      grove.yield %s : tensor<?x8xf32>
    }
  return %hr : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @binary
// CHECK: {arity = 2 : i64}
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

// CHECK-LABEL: func.func @schedule_gather_segment_sum
// CHECK: grove.tree_schedule %{{.*}}, %{{.*}}, %{{.*}} {arity = 0 : i64, mode = 0 : i64}
// CHECK: grove.gather %{{.*}}, %{{.*}} : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
// CHECK: grove.segment_sum %{{.*}}, %{{.*}} : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
func.func @schedule_gather_segment_sum(%off: tensor<?xi32>, %ch: tensor<?xi32>, %roots: tensor<?xi32>,
                               %h: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %o, %p, %g, %ec, %ep, %cs, %pe, %ro, %rp, %n = grove.tree_schedule %off, %ch, %roots {arity = 0 : i64, mode = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?xi32>, tensor<?xi32>, tensor<?x4xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, index)
  %r = grove.gather %h, %o : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %s = grove.segment_sum %r, %cs : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}

// Row-wise ops a cell may use: softmax and reductions over other axes,
// whole-row slices and concatenations, a per-sample flatten.
// CHECK-LABEL: func.func @row_wise_ops
// CHECK: grove.softmax
// CHECK: grove.reduce_sum
// CHECK: grove.concat
func.func @row_wise_ops(%off: tensor<?xi32>, %ch: tensor<?xi32>, %roots: tensor<?xi32>,
                        %x: tensor<?x2x4xf32>) -> tensor<?x8xf32> {
  %h, %hr = grove.tree_fold %off, %ch, %roots inputs(%x : tensor<?x2x4xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
    node {
    ^bb0(%xi: tensor<?x2x4xf32>, %hs: tensor<?x8xf32>):
      %s = grove.softmax %xi {axis = 2 : i64} : tensor<?x2x4xf32>
      %f = grove.flatten %s {axis = 1 : i64} : (tensor<?x2x4xf32>) -> tensor<?x8xf32>
      %r = grove.reduce_sum %hs {axes = array<i64: 1>, keepdims} : tensor<?x8xf32> -> tensor<?x1xf32>
      %a = grove.slice %f [0, 0] [-1, 7] [1, 1] : tensor<?x8xf32> -> tensor<?x7xf32>
      %c = grove.concat %a, %r {axis = 1 : i64} : (tensor<?x7xf32>, tensor<?x1xf32>) -> tensor<?x8xf32>
      %t = grove.add %c, %hs : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
      grove.yield %t : tensor<?x8xf32>
    }
  return %hr : tensor<?x8xf32>
}
