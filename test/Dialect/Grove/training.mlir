// RUN: grove-opt %s | grove-opt | FileCheck %s

// The training ops print and parse back (GroveTrainingOps.td, GroveMathOps.td).
// CHECK-LABEL: func.func @f
// CHECK: %[[L:.*]], %[[G:.*]]:2 = grove.value_and_grad [@w, @b] {
// CHECK: grove.step %{{.*}} : tensor<?x3xf32>
// CHECK: grove.erf %{{.*}} : tensor<?x3xf32>
// CHECK: grove.softmax_cross_entropy %{{.*}}, %{{.*}} {label_smoothing = 1.000000e-01 : f64} : (tensor<?x3xf32>, tensor<?xi32>) -> tensor<f32>
// CHECK: grove.yield %{{.*}} : tensor<f32>
// CHECK: } : tensor<f32>, tensor<3x4xf32>, tensor<3xf32>
// CHECK: grove.sgd [@w, @b](%[[G]]#0, %[[G]]#1) {lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov} : tensor<3x4xf32>, tensor<3xf32>
// CHECK: grove.adam [@w](%[[G]]#0) lr(%{{.*}} : tensor<f32>) {decoupled, weight_decay = 1.000000e-02 : f64} : tensor<3x4xf32>
// CHECK: grove.one_hot %{{.*}} : tensor<?xi32> -> tensor<?x3xf32>
// CHECK: grove.mse_loss %{{.*}}, %{{.*}} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<f32>
// CHECK: return %[[L]] : tensor<f32>
// CHECK-LABEL: func.func @bn
// CHECK: grove.batch_norm_training %{{.*}}, %{{.*}}, %{{.*}} {momentum = 2.000000e-01 : f64, running_mean = @rm, running_var = @rv} : (tensor<?x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3x2x2xf32>
module @m {
  grove.param @w : tensor<3x4xf32>
  grove.param @b : tensor<3xf32>
  grove.param @rm : tensor<3xf32> = 0.0 : f32
  grove.param @rv : tensor<3xf32> = 1.0 : f32
  func.func @f(%x: tensor<?x4xf32>, %y: tensor<?xi32>, %lr: tensor<f32>) -> tensor<f32> {
    %l, %gw, %gb = grove.value_and_grad [@w, @b] {
      %w = grove.get_param @w : tensor<3x4xf32>
      %b = grove.get_param @b : tensor<3xf32>
      %h = grove.matmul %x, %w {transpose_rhs} : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
      %z = grove.add %h, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
      %s = grove.step %z : tensor<?x3xf32>
      %e = grove.erf %s : tensor<?x3xf32>
      %l = grove.softmax_cross_entropy %e, %y {label_smoothing = 0.1 : f64} : (tensor<?x3xf32>, tensor<?xi32>) -> tensor<f32>
      grove.yield %l : tensor<f32>
    } : tensor<f32>, tensor<3x4xf32>, tensor<3xf32>
    grove.sgd [@w, @b] (%gw, %gb) {lr = 0.1 : f64, momentum = 0.9 : f64, nesterov} : tensor<3x4xf32>, tensor<3xf32>
    grove.adam [@w] (%gw) lr(%lr : tensor<f32>) {decoupled, weight_decay = 0.01 : f64} : tensor<3x4xf32>
    %t = grove.one_hot %y : tensor<?xi32> -> tensor<?x3xf32>
    %m = grove.mse_loss %t, %t : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
  func.func @bn(%x: tensor<?x3x2x2xf32>) -> tensor<?x3x2x2xf32> {
    %b = grove.get_param @b : tensor<3xf32>
    %y = grove.batch_norm_training %x, %b, %b {momentum = 0.2 : f64, running_mean = @rm, running_var = @rv} : (tensor<?x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3x2x2xf32>
    return %y : tensor<?x3x2x2xf32>
  }
}
