// RUN: grove-opt %s -split-input-file --grove-autodiff | FileCheck %s
// RUN: grove-opt %s -split-input-file --grove-autodiff --canonicalize | FileCheck %s --check-prefix=DCE
// RUN: grove-opt %s -split-input-file --grove-autodiff --grove-expand-training-ops --cse | FileCheck %s --check-prefix=EXPANDED

// grove-autodiff (Autodiff.cpp): the call is inlined, the body's ops come
// first (the forward), then the backward from the seed 1 in reverse: the
// loss's closed form, the product and sum rules with broadcast operands
// summed back (reduce_sum over the batch), the matmul's right operand
// cotangent as dy^T x. @b read twice sums its two cotangents; @c reaches
// no loss and gets zeros.
// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[T:.*]]: tensor<?x3xf32>)
// CHECK-NOT: grove.value_and_grad
// CHECK-NOT: func.call
// CHECK: %[[W:.*]] = grove.get_param @w
// CHECK: %[[H:.*]] = grove.matmul %[[X]], %[[W]] {transpose_rhs}
// CHECK: %[[B1:.*]] = grove.get_param @b
// CHECK: %[[B2:.*]] = grove.get_param @b
// CHECK: %[[Z:.*]] = grove.add %[[H]], %[[B1]]
// CHECK: %[[Z2:.*]] = grove.mul %[[Z]], %[[B2]]
// CHECK: %[[L:.*]] = grove.mse_loss %[[Z2]], %[[T]]
// CHECK: %[[SEED:.*]] = grove.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[D:.*]] = grove.sub %[[Z2]], %[[T]]
// CHECK: %[[DZ2:.*]] = grove.mul %[[D]], %{{.*}} : (tensor<?x3xf32>, tensor<f32>) -> tensor<?x3xf32>
// CHECK: %[[DB2FULL:.*]] = grove.mul %[[DZ2]], %[[Z]]
// CHECK: %[[DZ:.*]] = grove.mul %[[DZ2]], %[[B2]]
// CHECK: %[[DB2:.*]] = grove.reduce_sum %[[DB2FULL]] {axes = array<i64: 0>} : tensor<?x3xf32> -> tensor<3xf32>
// CHECK: %[[DB1:.*]] = grove.reduce_sum %[[DZ]] {axes = array<i64: 0>} : tensor<?x3xf32> -> tensor<3xf32>
// CHECK: %[[DW:.*]] = grove.matmul %[[DZ]], %[[X]] {transpose_lhs} : (tensor<?x3xf32>, tensor<?x4xf32>) -> tensor<3x4xf32>
// CHECK: %[[DB:.*]] = grove.add %[[DB1]], %[[DB2]]
// CHECK: %[[DC:.*]] = grove.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: return %[[L]], %[[DW]], %[[DB]], %[[DC]]

// Cotangents of values that do not depend on a param (the input x, the
// target) are built and left to the canonicalizer: no GEMM for dx survives.
// DCE-LABEL: func.func @f
// DCE-COUNT-2: grove.matmul
// DCE-NOT: grove.matmul
module {
  grove.param @w : tensor<3x4xf32>
  grove.param @b : tensor<3xf32>
  grove.param @c : tensor<3xf32>
  func.func @dense(%x: tensor<?x4xf32>) -> tensor<?x3xf32> {
    %w = grove.get_param @w : tensor<3x4xf32>
    %h = grove.matmul %x, %w {transpose_rhs} : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
    return %h : tensor<?x3xf32>
  }
  func.func @f(%x: tensor<?x4xf32>, %t: tensor<?x3xf32>) -> (tensor<f32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3xf32>) {
    %l, %g:3 = grove.value_and_grad [@w, @b, @c] {
      %h = func.call @dense(%x) : (tensor<?x4xf32>) -> tensor<?x3xf32>
      %b = grove.get_param @b : tensor<3xf32>
      %b2 = grove.get_param @b : tensor<3xf32>
      %c = grove.get_param @c : tensor<3xf32>
      %z = grove.add %h, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
      %z2 = grove.mul %z, %b2 : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
      %l = grove.mse_loss %z2, %t : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<f32>
      grove.yield %l : tensor<f32>
    } : tensor<f32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3xf32>
    return %l, %g#0, %g#1, %g#2 : tensor<f32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3xf32>
  }
}

// -----

// A body that does not depend on the param: its value, and a zero
// gradient.
// CHECK-LABEL: func.func @constant_value
// CHECK-SAME: (%[[X:.*]]: tensor<f32>)
// CHECK: %[[Z:.*]] = grove.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: return %[[X]], %[[Z]]
grove.param @w : tensor<4xf32>
func.func @constant_value(%x: tensor<f32>) -> (tensor<f32>, tensor<4xf32>) {
  %l, %g = grove.value_and_grad [@w] {
    grove.yield %x : tensor<f32>
  } : tensor<f32>, tensor<4xf32>
  return %l, %g : tensor<f32>, tensor<4xf32>
}

// -----

// The cross-entropy's cotangent: (exp(log_softmax(z)) - one_hot) dy / N.
// Softmax is spelled through log_softmax so that, once the loss itself is
// expanded to log_softmax (grove-expand-training-ops), CSE leaves one.
// CHECK-LABEL: func.func @cross_entropy
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[Y:.*]]: tensor<?xi32>)
// CHECK: %[[Z:.*]] = grove.matmul
// CHECK: %[[L:.*]] = grove.softmax_cross_entropy %[[Z]], %[[Y]]
// CHECK-DAG: %[[OH:.*]] = grove.one_hot %[[Y]]
// CHECK-DAG: %[[LOGP:.*]] = grove.log_softmax %[[Z]] {axis = 1 : i64}
// CHECK: %[[P:.*]] = grove.exp %[[LOGP]]
// CHECK: %[[D:.*]] = grove.sub %[[P]], %[[OH]]
// CHECK: %[[DZ:.*]] = grove.mul %[[D]], %{{.*}} : (tensor<?x10xf32>, tensor<f32>)
// CHECK: grove.matmul %[[DZ]], %[[X]] {transpose_lhs}
// CHECK-NOT: grove.softmax
// DCE-LABEL: func.func @cross_entropy
// EXPANDED-LABEL: func.func @cross_entropy
// EXPANDED-COUNT-1: grove.log_softmax
// EXPANDED-NOT: grove.log_softmax
// EXPANDED-NOT: grove.softmax
grove.param @w : tensor<10x4xf32>
func.func @cross_entropy(%x: tensor<?x4xf32>, %y: tensor<?xi32>) -> (tensor<f32>, tensor<10x4xf32>) {
  %l, %g = grove.value_and_grad [@w] {
    %w = grove.get_param @w : tensor<10x4xf32>
    %z = grove.matmul %x, %w {transpose_rhs} : (tensor<?x4xf32>, tensor<10x4xf32>) -> tensor<?x10xf32>
    %s = grove.softmax_cross_entropy %z, %y : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
    grove.yield %s : tensor<f32>
  } : tensor<f32>, tensor<10x4xf32>
  return %l, %g : tensor<f32>, tensor<10x4xf32>
}
