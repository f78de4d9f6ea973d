// RUN: grove-opt %s --grove-autodiff --grove-batch-dynamic-trees --cse --canonicalize | FileCheck %s

// A fold lowered with its gradient saves, a row per node by position, what
// the gradient's cell VJP reads of the recomputed cell (TreeResiduals.h):
// here the sigmoid's and the tanh's rows (h, their product, is a state and
// is read from the states). The forward loop (and its peeled leaves) write
// them; the reverse loop (and its peeled leaves) read them, so no x @ W,
// x @ V, child sum, sigmoid or tanh is recomputed there.
// CHECK-LABEL: func.func @saved
// CHECK: %[[H0:.*]] = bufferization.alloc_tensor
// CHECK-NEXT: %[[SIG0:.*]] = bufferization.alloc_tensor
// CHECK-NEXT: %[[TANH0:.*]] = bufferization.alloc_tensor
// CHECK: %[[LEAVES:.*]]:3 = scf.if
// CHECK: %[[LS:.*]] = grove.sigmoid
// CHECK: %[[LT:.*]] = grove.tanh
// CHECK-DAG: tensor.insert_slice %[[LS]] into %[[SIG0]]
// CHECK-DAG: tensor.insert_slice %[[LT]] into %[[TANH0]]
// CHECK: %[[FWD:.*]]:3 = scf.for {{.*}} iter_args(%{{.*}} = %[[LEAVES]]#0, %[[SIG:.*]] = %[[LEAVES]]#1, %[[TANH:.*]] = %[[LEAVES]]#2)
// CHECK: grove.segment_sum
// CHECK: %[[S:.*]] = grove.sigmoid
// CHECK: %[[T:.*]] = grove.tanh
// CHECK-DAG: tensor.insert_slice %[[S]] into %[[SIG]]
// CHECK-DAG: tensor.insert_slice %[[T]] into %[[TANH]]
// CHECK: scf.for
// CHECK-NOT: grove.sigmoid
// CHECK-NOT: grove.tanh
// CHECK-NOT: grove.segment_sum
// CHECK-DAG: tensor.extract_slice %[[FWD]]#1
// CHECK-DAG: tensor.extract_slice %[[FWD]]#2
// CHECK-NOT: grove.sigmoid
// CHECK-NOT: grove.tanh
// CHECK: scf.if
// CHECK-NOT: grove.sigmoid
// CHECK-NOT: grove.tanh
// CHECK: return
grove.param @w : tensor<4x8xf32>
grove.param @v : tensor<4x8xf32>
grove.param @wf : tensor<4x8xf32>
func.func @saved(%off: tensor<?xi32>, %ch: tensor<?xi32>, %roots: tensor<?xi32>,
                 %x: tensor<?x4xf32>) -> (tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %l, %gw, %gv = grove.value_and_grad [@w, @v] {
    %w = grove.get_param @w : tensor<4x8xf32>
    %v = grove.get_param @v : tensor<4x8xf32>
    %h, %hr = grove.tree_fold %off, %ch, %roots inputs(%x : tensor<?x4xf32>)
        captures(%w, %v : tensor<4x8xf32>, tensor<4x8xf32>) {arity = 0 : i64}
        : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
      node {
      ^bb0(%xi: tensor<?x4xf32>, %hs: tensor<?x8xf32>, %wi: tensor<4x8xf32>, %vi: tensor<4x8xf32>):
        %a = grove.matmul %xi, %wi : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
        %s = grove.add %a, %hs : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
        %g = grove.sigmoid %s : tensor<?x8xf32>
        %b = grove.matmul %xi, %vi : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
        %t = grove.tanh %b : tensor<?x8xf32>
        %m = grove.mul %g, %t : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
        grove.yield %m : tensor<?x8xf32>
      }
    %l = grove.reduce_sum %hr {axes = array<i64: 0, 1>} : tensor<?x8xf32> -> tensor<f32>
    grove.yield %l : tensor<f32>
  } : tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>
  return %l, %gw, %gv : tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// A gradient whose fold is not beside it (its states are arguments) has
// nothing saved: it recomputes the cell from the states.
// CHECK-LABEL: func.func @alone
// CHECK: scf.for
// CHECK: grove.matmul %{{.*}}, %{{.*}} : (tensor<?x4xf32>, tensor<4x8xf32>)
// CHECK: grove.tanh
func.func @alone(%off: tensor<?xi32>, %ch: tensor<?xi32>, %roots: tensor<?xi32>,
                 %x: tensor<?x4xf32>, %w: tensor<4x8xf32>, %h: tensor<?x8xf32>,
                 %dh: tensor<?x8xf32>, %dr: tensor<?x8xf32>) -> tensor<4x8xf32> {
  %dx, %dw = grove.tree_fold_grad %off, %ch, %roots inputs(%x : tensor<?x4xf32>)
      captures(%w : tensor<4x8xf32>) states(%h : tensor<?x8xf32>)
      cotangents(%dh : tensor<?x8xf32>) root_cotangents(%dr : tensor<?x8xf32>)
      {arity = 0 : i64} : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>)
      -> (tensor<?x4xf32>, tensor<4x8xf32>) node_grad {
    ^bb0(%xi: tensor<?x4xf32>, %hs: tensor<?x8xf32>, %wi: tensor<4x8xf32>, %dt: tensor<?x8xf32>):
      %a = grove.matmul %xi, %wi : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
      %s = grove.add %a, %hs : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
      %t = grove.tanh %s : tensor<?x8xf32>
      %d = grove.mul %dt, %t : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
      %ddx = grove.matmul %d, %wi {transpose_rhs} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
      %ddw = grove.matmul %xi, %d {transpose_lhs} : (tensor<?x4xf32>, tensor<?x8xf32>) -> tensor<4x8xf32>
      grove.yield %ddx, %d, %ddw : tensor<?x4xf32>, tensor<?x8xf32>, tensor<4x8xf32>
    }
  return %dw : tensor<4x8xf32>
}

// The edge form: the edge cell's forget gate, which its VJP reads, is saved
// a row per edge (the forward writes the group's edges' rows where the
// messages are computed); the gradient's copy of the edge cell (for the
// child sums) and its VJP read them, so no sigmoid is left backward. The
// node cell's sigmoid is saved by position; its tanh is the state h.
// CHECK-LABEL: func.func @edge
// CHECK: %[[EDGES:.*]] = tensor.dim %edge_child
// CHECK: %[[F0:.*]] = bufferization.alloc_tensor(%[[EDGES]]) : tensor<?x8xf32>
// CHECK: %[[FWD:.*]]:4 = scf.for {{.*}} iter_args({{.*}}, %[[F:[a-z0-9_]+]] = %[[F0]])
// CHECK: %[[GATE:.*]] = grove.sigmoid
// CHECK: tensor.insert_slice %[[GATE]] into %[[F]][%{{.*}}, 0]
// CHECK: scf.for
// CHECK-NOT: grove.sigmoid
// CHECK: tensor.extract_slice %[[FWD]]#3
// CHECK-NOT: grove.sigmoid
// CHECK: return
func.func @edge(%off: tensor<?xi32>, %ch: tensor<?xi32>, %roots: tensor<?xi32>,
                %x: tensor<?x4xf32>) -> (tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %l, %gw, %gf = grove.value_and_grad [@w, @wf] {
    %w = grove.get_param @w : tensor<4x8xf32>
    %wf = grove.get_param @wf : tensor<4x8xf32>
    %h, %c, %hr, %cr = grove.tree_fold %off, %ch, %roots inputs(%x : tensor<?x4xf32>)
        captures(%w, %wf : tensor<4x8xf32>, tensor<4x8xf32>) {arity = 0 : i64}
        : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
      edge {
      ^bb0(%xp: tensor<?x4xf32>, %hk: tensor<?x8xf32>, %ck: tensor<?x8xf32>, %we: tensor<4x8xf32>, %wfe: tensor<4x8xf32>):
        %a = grove.matmul %xp, %wfe : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
        %s = grove.add %a, %hk : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
        %f = grove.sigmoid %s : tensor<?x8xf32>
        %fc = grove.mul %f, %ck : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
        grove.yield %hk, %fc : tensor<?x8xf32>, tensor<?x8xf32>
      } node {
      ^bb0(%xi: tensor<?x4xf32>, %hs: tensor<?x8xf32>, %fcs: tensor<?x8xf32>, %wi: tensor<4x8xf32>, %wfi: tensor<4x8xf32>):
        %a = grove.matmul %xi, %wi : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
        %s = grove.add %a, %hs : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
        %i = grove.sigmoid %s : tensor<?x8xf32>
        %cn = grove.add %i, %fcs : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
        %hn = grove.tanh %cn : tensor<?x8xf32>
        grove.yield %hn, %cn : tensor<?x8xf32>, tensor<?x8xf32>
      }
    %l = grove.reduce_sum %hr {axes = array<i64: 0, 1>} : tensor<?x8xf32> -> tensor<f32>
    grove.yield %l : tensor<f32>
  } : tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>
  return %l, %gw, %gf : tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// A capture with a dynamic dimension 0 is no row: what is computed from it
// alone (the tanh) is not saved but recomputed, and its size is its own,
// not the group's count (the reduce's VJP broadcasts back to it).
// CHECK-LABEL: func.func @dynamic_capture(
// CHECK-SAME: %[[MEM:[a-z0-9]+]]: tensor<?x8xf32>)
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[T:.*]] = grove.tanh %[[MEM]]
// CHECK: %[[D:.*]] = tensor.dim %[[T]], %c0
// CHECK: grove.broadcast_to %{{.*}}(%[[D]])
func.func @dynamic_capture(%off: tensor<?xi32>, %ch: tensor<?xi32>, %roots: tensor<?xi32>,
                           %x: tensor<?x4xf32>, %mem: tensor<?x8xf32>) -> (tensor<f32>, tensor<4x8xf32>) {
  %l, %gw = grove.value_and_grad [@w] {
    %w = grove.get_param @w : tensor<4x8xf32>
    %h, %hr = grove.tree_fold %off, %ch, %roots inputs(%x : tensor<?x4xf32>)
        captures(%w, %mem : tensor<4x8xf32>, tensor<?x8xf32>) {arity = 0 : i64}
        : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
      node {
      ^bb0(%xi: tensor<?x4xf32>, %hs: tensor<?x8xf32>, %wi: tensor<4x8xf32>, %mi: tensor<?x8xf32>):
        %t = grove.tanh %mi : tensor<?x8xf32>
        %m = grove.reduce_sum %t {axes = array<i64: 0>} : tensor<?x8xf32> -> tensor<8xf32>
        %a = grove.matmul %xi, %wi : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
        %s = grove.add %a, %m : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
        %u = grove.add %s, %hs : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
        %g = grove.sigmoid %u : tensor<?x8xf32>
        grove.yield %g : tensor<?x8xf32>
      }
    %l = grove.reduce_sum %hr {axes = array<i64: 0, 1>} : tensor<?x8xf32> -> tensor<f32>
    grove.yield %l : tensor<f32>
  } : tensor<f32>, tensor<4x8xf32>
  return %l, %gw : tensor<f32>, tensor<4x8xf32>
}
