// RUN: grove-opt %s --grove-autodiff | FileCheck %s

// split_attention differentiates as one fused op, split_attention_grad,
// given the forward's operands and the result's cotangent; the inner BN's
// statistics get their gradients from bn_scale's and bn_bias's
// (GroveVJPs.cpp): d mean = -(scale inv) d bias, d var = -scale inv^2
// d scale / 2, inv = 1 / sqrt(var + eps).
// CHECK-LABEL: func.func @step
// CHECK: %[[Y:.*]] = grove.split_attention %[[U:[^,]*]], %[[W1:[^,]*]], %[[B1:[^,]*]], %[[S:[^,]*]], %[[BETA:[^,]*]], %[[M:[^,]*]], %[[V:[^,]*]], %[[W2:[^,]*]], %[[B2:[^ ]*]] {
// CHECK: %[[DU:.*]], %[[DW1:.*]], %[[DB1:.*]], %[[DS:.*]], %[[DBETA:.*]], %[[DW2:.*]], %[[DB2:.*]] = grove.split_attention_grad %{{.*}}, %[[U]], %[[W1]], %[[B1]], %[[S]], %[[BETA]], %[[M]], %[[V]], %[[W2]], %[[B2]] {cardinality = 2 : i64, epsilon = 1.000000e-05 : f64, radix = 2 : i64}
// CHECK: grove.sqrt
// CHECK: %[[INV:.*]] = grove.div
// CHECK: %[[K:.*]] = grove.mul %[[S]], %[[INV]]
// CHECK: %[[KB:.*]] = grove.mul %[[K]], %[[DBETA]]
// CHECK: %[[DM:.*]] = grove.mul %[[KB]], %{{.*}}
// CHECK: %[[KI:.*]] = grove.mul %[[K]], %[[INV]]
// CHECK: %[[KS:.*]] = grove.mul %[[KI]], %[[DS]]
// CHECK: %[[DV:.*]] = grove.mul %[[KS]], %{{.*}}
// CHECK-NOT: grove.split_attention
// CHECK-NOT: grove.softmax
// CHECK: return %{{.*}}, %[[DU]], %[[DW1]], %[[DB1]], %[[DS]], %[[DBETA]], %[[DM]], %[[DV]], %[[DW2]], %[[DB2]]
module {
  grove.param @u : tensor<2x16x3x3xf32>
  grove.param @w1 : tensor<4x4x1x1xf32>
  grove.param @b1 : tensor<4xf32>
  grove.param @s : tensor<4xf32>
  grove.param @beta : tensor<4xf32>
  grove.param @m : tensor<4xf32>
  grove.param @v : tensor<4xf32>
  grove.param @w2 : tensor<16x2x1x1xf32>
  grove.param @b2 : tensor<16xf32>
  func.func @step() -> (tensor<f32>, tensor<2x16x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<16x2x1x1xf32>, tensor<16xf32>) {
    %l, %g:9 = grove.value_and_grad [@u, @w1, @b1, @s, @beta, @m, @v, @w2, @b2] {
      %u = grove.get_param @u : tensor<2x16x3x3xf32>
      %w1 = grove.get_param @w1 : tensor<4x4x1x1xf32>
      %b1 = grove.get_param @b1 : tensor<4xf32>
      %s = grove.get_param @s : tensor<4xf32>
      %beta = grove.get_param @beta : tensor<4xf32>
      %m = grove.get_param @m : tensor<4xf32>
      %v = grove.get_param @v : tensor<4xf32>
      %w2 = grove.get_param @w2 : tensor<16x2x1x1xf32>
      %b2 = grove.get_param @b2 : tensor<16xf32>
      %y = grove.split_attention %u, %w1, %b1, %s, %beta, %m, %v, %w2, %b2 {radix = 2 : i64, cardinality = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x16x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<16x2x1x1xf32>, tensor<16xf32>) -> tensor<2x8x3x3xf32>
      %sum = grove.reduce_sum %y {axes = array<i64: 0, 1, 2, 3>} : tensor<2x8x3x3xf32> -> tensor<f32>
      grove.yield %sum : tensor<f32>
    } : tensor<f32>, tensor<2x16x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<16x2x1x1xf32>, tensor<16xf32>
    return %l, %g#0, %g#1, %g#2, %g#3, %g#4, %g#5, %g#6, %g#7, %g#8 : tensor<f32>, tensor<2x16x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<16x2x1x1xf32>, tensor<16xf32>
  }
}
