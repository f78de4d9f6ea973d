// RUN: grove-opt %s --grove-autodiff | FileCheck %s
// RUN: grove-opt %s --grove-autodiff --grove-batch-dynamic-trees --cse | FileCheck %s --check-prefix=LOOP

// A fold inside grove.value_and_grad (docs/trees.md, "Gradients"): its VJP
// is a grove.tree_fold_grad on the same forest, inputs and captures, the
// saved node states and the states' cotangents, whose node_grad region is
// the node cell's VJP (recomputing the cell: the matmul by the capture
// comes back), yielding the input rows', the summed children's and the
// capture's cotangents.
// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[OFF:[a-z0-9]+]]: tensor<?xi32>, %[[CH:[a-z0-9]+]]: tensor<?xi32>, %[[R:[a-z0-9]+]]: tensor<?xi32>, %[[X:[a-z0-9]+]]: tensor<?x4xf32>)
// CHECK: %[[W:.*]] = grove.get_param @w
// CHECK: %[[H:.*]]:2 = grove.tree_fold %[[OFF]], %[[CH]], %[[R]] inputs(%[[X]] : tensor<?x4xf32>) captures(%[[W]] : tensor<4x8xf32>)
// CHECK: %[[DROOT:.*]] = grove.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<?x8xf32>
// CHECK: %[[DNODE:.*]] = grove.broadcast_to %{{.*}} : tensor<f32> -> tensor<?x8xf32>
// CHECK: %[[G:.*]]:2 = grove.tree_fold_grad %[[OFF]], %[[CH]], %[[R]] inputs(%[[X]] : tensor<?x4xf32>) captures(%[[W]] : tensor<4x8xf32>) states(%[[H]]#0 : tensor<?x8xf32>) cotangents(%[[DNODE]] : tensor<?x8xf32>) root_cotangents(%[[DROOT]] : tensor<?x8xf32>) {arity = 0 : i64}
// CHECK-SAME: -> (tensor<?x4xf32>, tensor<4x8xf32>) node_grad {
// CHECK-NEXT: ^bb0(%[[XI:.*]]: tensor<?x4xf32>, %[[HS:.*]]: tensor<?x8xf32>, %[[WI:.*]]: tensor<4x8xf32>, %[[DT:.*]]: tensor<?x8xf32>):
// CHECK-NEXT: grove.matmul %[[XI]], %[[WI]]
// CHECK: %[[TANH:.*]] = grove.tanh
// CHECK: %[[DS:.*]] = grove.mul %[[DT]], %{{.*}}
// CHECK: %[[DX:.*]] = grove.matmul %[[DS]], %[[WI]] {transpose_rhs}
// CHECK: %[[DW:.*]] = grove.matmul %[[XI]], %[[DS]] {transpose_lhs}
// CHECK: grove.yield %[[DX]], %[[DS]], %[[DW]]
// CHECK: return %{{.*}}, %[[G]]#1
// CHECK-NOT: grove.value_and_grad

// The gradient's loop runs the groups in reverse: carried are the edges'
// state cotangents, the inputs' by position and the summed children's
// (each row written by its group before a later one reads it: no fill),
// and the capture's sum (zeros, accumulated in place); a group reads its
// nodes' cotangents through their parent edges. Group 0, the leaves, is
// peeled off both loops (first forward, last backward): no children to
// gather or sum, no child cotangents to write. The fold and its gradient
// are lowered together, so the backward does not recompute the cell: the
// tanh's rows its VJP reads are the state h, read back by position (no x @ W,
// no child sum, no tanh in the reverse loop).
// LOOP-LABEL: func.func @f
// LOOP: %[[ORDER:[a-z0-9_]+]], %{{.*}}, %[[GROUPS:[a-z0-9_]+]], %{{.*}}, %{{.*}}, %{{.*}}, %[[PEDGE:[a-z0-9_]+]], %{{.*}}, %{{.*}}, %[[COUNT:[a-z0-9_]+]] = grove.tree_schedule
// LOOP-NOT: grove.tree_schedule
// LOOP: %[[S0:.*]] = bufferization.alloc_tensor(%{{.*}}) : tensor<?x8xf32>
// LOOP: %[[ANY:.*]] = arith.cmpi sgt, %[[COUNT]], %[[C0:.*]] : index
// LOOP: %[[LEAVES:.*]] = scf.if %[[ANY]] -> (tensor<?x8xf32>) {
// LOOP: tensor.extract %[[GROUPS]][%[[C0]], %[[C0]]]
// LOOP-NOT: grove.segment_sum
// LOOP: } else {
// LOOP: scf.for %{{.*}} = %[[C1:.*]] to %[[COUNT]] step %{{.*}} iter_args(%{{.*}} = %[[LEAVES]])
// LOOP: %[[DE:.*]] = bufferization.alloc_tensor(%{{.*}}) : tensor<?x8xf32>
// LOOP: %[[DX:.*]] = bufferization.alloc_tensor(%{{.*}}) : tensor<?x4xf32>
// LOOP: %[[ZW:.*]] = grove.constant dense<0.000000e+00> : tensor<4x8xf32>
// LOOP: %[[DS:.*]] = bufferization.alloc_tensor(%{{.*}}) : tensor<?x8xf32>
// LOOP: %[[LOOPED:.*]]:4 = scf.for %[[I:.*]] = %[[C1]] to %[[COUNT]] step %{{.*}} iter_args(%[[E:.*]] = %[[DE]], %{{.*}} = %[[DX]], %{{.*}} = %[[ZW]], %{{.*}} = %[[DS]])
// LOOP: %[[G:.*]] = arith.subi %[[COUNT]], %[[I]]
// LOOP: tensor.extract %[[GROUPS]][%[[G]], %{{.*}}]
// LOOP-NOT: grove.segment_sum
// LOOP: %[[PE:.*]] = tensor.extract_slice %[[PEDGE]]
// LOOP: grove.gather %[[E]], %[[PE]]
// LOOP-NOT: grove.tanh
// LOOP: grove.matmul {{.*}} {transpose_rhs}
// LOOP-NOT: grove.tanh
// LOOP: grove.matmul {{.*}} {transpose_lhs}
// LOOP: %[[LEAF:.*]]:4 = scf.if %[[ANY]]
// LOOP: tensor.extract %[[GROUPS]][%[[C0]], %[[C0]]]
// LOOP-NOT: grove.segment_sum
// LOOP: grove.gather %[[LOOPED]]#0
// LOOP: grove.matmul {{.*}} {transpose_lhs}
// LOOP: outs(%[[LOOPED]]#2 : tensor<4x8xf32>)
// LOOP: scf.yield %[[LOOPED]]#0, %{{.*}}, %{{.*}}, %[[LOOPED]]#3
// LOOP: } else {
// LOOP: return %{{.*}}, %[[LEAF]]#2
// LOOP-NOT: grove.tree_fold_grad
grove.param @w : tensor<4x8xf32>
func.func @f(%off: tensor<?xi32>, %ch: tensor<?xi32>, %roots: tensor<?xi32>,
             %x: tensor<?x4xf32>) -> (tensor<f32>, tensor<4x8xf32>) {
  %l, %g = grove.value_and_grad [@w] {
    %w = grove.get_param @w : tensor<4x8xf32>
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
    %l = grove.reduce_sum %hr {axes = array<i64: 0, 1>} : tensor<?x8xf32> -> tensor<f32>
    grove.yield %l : tensor<f32>
  } : tensor<f32>, tensor<4x8xf32>
  return %l, %g : tensor<f32>, tensor<4x8xf32>
}
