// RUN: grove-opt %s | grove-opt | FileCheck %s

// The ops VJPs build (GroveVJPs.cpp) print and parse back.
// CHECK-LABEL: func.func @gradient_ops
// CHECK: grove.reverse %{{.*}} [2, 3] : tensor<4x3x3x3xf32>
// CHECK: grove.conv2d_weight_grad %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<?x4x8x8xf32>) -> tensor<4x3x3x3xf32>
// CHECK: grove.max_pool2d_grad
// CHECK: grove.avg_pool2d_grad {{.*}}count_include_pad
func.func @gradient_ops(%x: tensor<?x3x8x8xf32>, %dy: tensor<?x4x8x8xf32>, %w: tensor<4x3x3x3xf32>, %p: tensor<?x3x4x4xf32>) -> (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>, tensor<?x3x8x8xf32>, tensor<?x3x8x8xf32>) {
  %r = grove.reverse %w [2, 3] : tensor<4x3x3x3xf32>
  %dw = grove.conv2d_weight_grad %x, %dy {groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<?x4x8x8xf32>) -> tensor<4x3x3x3xf32>
  %mx = grove.max_pool2d_grad %x, %p {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<?x3x8x8xf32>, tensor<?x3x4x4xf32>) -> tensor<?x3x8x8xf32>
  %av = grove.avg_pool2d_grad %x, %p {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, count_include_pad} : (tensor<?x3x8x8xf32>, tensor<?x3x4x4xf32>) -> tensor<?x3x8x8xf32>
  return %r, %dw, %mx, %av : tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>, tensor<?x3x8x8xf32>, tensor<?x3x8x8xf32>
}

// CHECK-LABEL: func.func @split_attention_grad
// CHECK: %input_grad, %fc1_weight_grad, %fc1_bias_grad, %bn_scale_grad, %bn_bias_grad, %fc2_weight_grad, %fc2_bias_grad = grove.split_attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {cardinality = 1 : i64, epsilon = 1.000000e-05 : f64, radix = 2 : i64} : (tensor<?x4x3x3xf32>, tensor<?x8x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> (tensor<?x8x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>)
func.func @split_attention_grad(%dy: tensor<?x4x3x3xf32>, %u: tensor<?x8x3x3xf32>, %w1: tensor<4x4x1x1xf32>, %v: tensor<4xf32>, %w2: tensor<8x4x1x1xf32>, %b2: tensor<8xf32>) -> tensor<?x8x3x3xf32> {
  %du, %dw1, %db1, %dg, %dbeta, %dw2, %db2 = grove.split_attention_grad %dy, %u, %w1, %v, %v, %v, %v, %v, %w2, %b2 {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<?x4x3x3xf32>, tensor<?x8x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> (tensor<?x8x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>)
  return %du : tensor<?x8x3x3xf32>
}

// A max pool with its winners, and the gradient that reads them.
// CHECK-LABEL: func.func @pool_with_indices
// CHECK: %[[Y:.*]], %[[I:.*]] = grove.max_pool2d_with_indices %{{.*}} {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x3x8x8xf32>) -> (tensor<?x3x4x4xf32>, tensor<?x3x4x4xi32>)
// CHECK: grove.max_pool2d_grad %{{.*}}, %[[Y]] indices %[[I]] {kernel
// CHECK-SAME: : (tensor<?x3x8x8xf32>, tensor<?x3x4x4xf32>, tensor<?x3x4x4xi32>) -> tensor<?x3x8x8xf32>
func.func @pool_with_indices(%x: tensor<?x3x8x8xf32>) -> tensor<?x3x8x8xf32> {
  %y, %i = grove.max_pool2d_with_indices %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<?x3x8x8xf32>) -> (tensor<?x3x4x4xf32>, tensor<?x3x4x4xi32>)
  %dx = grove.max_pool2d_grad %x, %y indices %i {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<?x3x8x8xf32>, tensor<?x3x4x4xf32>, tensor<?x3x4x4xi32>) -> tensor<?x3x8x8xf32>
  return %dx : tensor<?x3x8x8xf32>
}
