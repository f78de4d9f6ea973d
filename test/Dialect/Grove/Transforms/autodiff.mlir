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

// -----

// The transformer ops' VJPs: layer norm's one fused grad op, dropout's the
// same draw on the cotangent (same rate, stream and generator), and the
// embedding's rows summed per id: group_by_index, a gather in that order,
// segment sums (cast to the table's static shape).
// CHECK-LABEL: func.func @transformer
// CHECK-SAME: (%[[IDS:.*]]: tensor<?x5xi32>)
// CHECK: %[[E:.*]] = grove.embedding %[[T:.*]], %[[IDS]]
// CHECK: %[[N:.*]] = grove.layer_norm %[[E]], %[[G:.*]], %[[B:.*]] {epsilon
// CHECK: %[[D:.*]] = grove.dropout %[[N]] {generator = "gen", rate = 1.000000e-01 : f64, stream = 4 : i64}
// CHECK: %[[DD:.*]] = grove.dropout %{{.*}} {generator = "gen", rate = 1.000000e-01 : f64, stream = 4 : i64}
// CHECK: %[[DX:.*]], %[[DG:.*]], %[[DB:.*]] = grove.layer_norm_grad %[[DD]], %[[E]], %[[G]]
// CHECK: %[[FLAT:.*]] = grove.reshape %[[IDS]] : tensor<?x5xi32> -> tensor<?xi32>
// CHECK: %[[ROWS:.*]] = grove.reshape %[[DX]] : tensor<?x5x8xf32> -> tensor<?x8xf32>
// CHECK: %[[ORDER:.*]], %[[OFF:.*]] = grove.group_by_index %[[FLAT]] {num_groups = 20 : i64} : tensor<?xi32> -> (tensor<?xi32>, tensor<21xi32>)
// CHECK: %[[SORTED:.*]] = grove.gather %[[ROWS]], %[[ORDER]]
// CHECK: %[[SUMS:.*]] = grove.segment_sum %[[SORTED]], %[[OFF]] : (tensor<?x8xf32>, tensor<21xi32>) -> tensor<?x8xf32>
// CHECK: %[[DT:.*]] = tensor.cast %[[SUMS]] : tensor<?x8xf32> to tensor<20x8xf32>
// CHECK: return %{{.*}}, %[[DT]], %[[DG]], %[[DB]]
module {
  grove.param @t : tensor<20x8xf32>
  grove.param @g : tensor<8xf32>
  grove.param @b : tensor<8xf32>
  func.func @transformer(%ids: tensor<?x5xi32>) -> (tensor<f32>, tensor<20x8xf32>, tensor<8xf32>, tensor<8xf32>) {
    %l, %gr:3 = grove.value_and_grad [@t, @g, @b] {
      %t = grove.get_param @t : tensor<20x8xf32>
      %g = grove.get_param @g : tensor<8xf32>
      %b = grove.get_param @b : tensor<8xf32>
      %e = grove.embedding %t, %ids : (tensor<20x8xf32>, tensor<?x5xi32>) -> tensor<?x5x8xf32>
      %n = grove.layer_norm %e, %g, %b {epsilon = 1.0e-12 : f64} : (tensor<?x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x5x8xf32>
      %d = grove.dropout %n {rate = 0.1 : f64, stream = 4, generator = "gen"} : tensor<?x5x8xf32>
      %a = grove.gelu_tanh %d : tensor<?x5x8xf32>
      %s = grove.reduce_sum %a {axes = array<i64: 0, 1, 2>} : tensor<?x5x8xf32> -> tensor<f32>
      grove.yield %s : tensor<f32>
    } : tensor<f32>, tensor<20x8xf32>, tensor<8xf32>, tensor<8xf32>
    return %l, %gr#0, %gr#1, %gr#2 : tensor<f32>, tensor<20x8xf32>, tensor<8xf32>, tensor<8xf32>
  }
}

// -----

// A function called twice inside the body is inlined twice: the second
// copy's dropout draws on stream 2^32 + 1 instead of sharing stream 1's
// mask, and each VJP repeats its own forward's draw.
// CHECK-LABEL: func.func @two_layers
// CHECK: grove.dropout %{{.*}} {rate = 5.000000e-01 : f64, stream = 1 : i64}
// CHECK: grove.dropout %{{.*}} {rate = 5.000000e-01 : f64, stream = 4294967297 : i64}
// CHECK: grove.dropout %{{.*}} {rate = 5.000000e-01 : f64, stream = 4294967297 : i64}
// CHECK: grove.dropout %{{.*}} {rate = 5.000000e-01 : f64, stream = 1 : i64}
module {
  grove.param @w : tensor<4xf32>
  func.func private @layer(%x: tensor<4xf32>) -> tensor<4xf32> {
    %w = grove.get_param @w : tensor<4xf32>
    %y = grove.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %d = grove.dropout %y {rate = 0.5 : f64, stream = 1} : tensor<4xf32>
    return %d : tensor<4xf32>
  }
  func.func @two_layers(%x: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
    %l, %g = grove.value_and_grad [@w] {
      %a = func.call @layer(%x) : (tensor<4xf32>) -> tensor<4xf32>
      %b = func.call @layer(%a) : (tensor<4xf32>) -> tensor<4xf32>
      %s = grove.reduce_sum %b {axes = array<i64: 0>} : tensor<4xf32> -> tensor<f32>
      grove.yield %s : tensor<f32>
    } : tensor<f32>, tensor<4xf32>
    return %l, %g : tensor<f32>, tensor<4xf32>
  }
}
