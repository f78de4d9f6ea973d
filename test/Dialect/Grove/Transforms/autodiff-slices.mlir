// RUN: grove-opt %s -grove-autodiff -canonicalize | FileCheck %s

// The cotangents of slices that tile a tensor (a gate block's columns) go
// into one tensor of zeros, insert after insert, instead of one tensor of
// zeros each and their sum. Overlapping slices still add.
grove.param @w : tensor<4x6xf32>

// CHECK-LABEL: func.func @tiles
// CHECK: %[[Z:.*]] = grove.constant dense<0.000000e+00> : tensor<4x6xf32>
// CHECK: %[[A:.*]] = tensor.insert_slice %{{.*}} into %[[Z]][0, 3] [4, 3] [1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %[[A]][0, 0] [4, 3] [1, 1]
// CHECK-NOT: grove.add
func.func @tiles() -> tensor<4x6xf32> {
  %l, %g = grove.value_and_grad [@w] {
    %w = grove.get_param @w : tensor<4x6xf32>
    %a = grove.slice %w [0, 0] [-1, 3] [1, 1] : tensor<4x6xf32> -> tensor<4x3xf32>
    %b = grove.slice %w [0, 3] [-1, 6] [1, 1] : tensor<4x6xf32> -> tensor<4x3xf32>
    %ta = grove.tanh %a : tensor<4x3xf32>
    %sb = grove.sigmoid %b : tensor<4x3xf32>
    %m = grove.mul %ta, %sb : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %s = grove.reduce_sum %m {axes = array<i64: 0, 1>} : tensor<4x3xf32> -> tensor<f32>
    grove.yield %s : tensor<f32>
  } : tensor<f32>, tensor<4x6xf32>
  return %g : tensor<4x6xf32>
}

// CHECK-LABEL: func.func @overlap
// CHECK: grove.add
func.func @overlap() -> tensor<4x6xf32> {
  %l, %g = grove.value_and_grad [@w] {
    %w = grove.get_param @w : tensor<4x6xf32>
    %a = grove.slice %w [0, 0] [-1, 4] [1, 1] : tensor<4x6xf32> -> tensor<4x4xf32>
    %b = grove.slice %w [0, 2] [-1, 6] [1, 1] : tensor<4x6xf32> -> tensor<4x4xf32>
    %m = grove.mul %a, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %s = grove.reduce_sum %m {axes = array<i64: 0, 1>} : tensor<4x4xf32> -> tensor<f32>
    grove.yield %s : tensor<f32>
  } : tensor<f32>, tensor<4x6xf32>
  return %g : tensor<4x6xf32>
}
