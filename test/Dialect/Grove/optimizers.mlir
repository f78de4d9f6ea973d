// RUN: grove-opt %s | grove-opt | FileCheck %s

// The optimizer and schedule ops print and parse back
// (GroveTrainingOps.td); attributes at their defaults are elided.
// CHECK-LABEL: func.func @update
// CHECK: grove.adagrad [@w](%{{.*}}) {initial_accumulator_value = 1.000000e-01 : f64, lr_decay = 1.000000e-02 : f64} : tensor<3x4xf32>
// CHECK: grove.lamb [@w, @b](%{{.*}}, %{{.*}}) {nvlamb, weight_decay = 0.000000e+00 : f64} : tensor<3x4xf32>, tensor<3xf32>
// CHECK: %[[T:.*]] = grove.get_param @lans.step : tensor<i64>
// CHECK: %[[LR:.*]] = grove.lr_schedule polynomial %[[T]] {lr = 5.000000e-03 : f64, power = 2.000000e+00 : f64, total_steps = 100 : i64, warmup_steps = 10 : i64} : tensor<i64> -> tensor<f32>
// CHECK: grove.lans [@w](%{{.*}}) lr(%[[LR]] : tensor<f32>) {max_grad_norm = 1.000000e+00 : f64, skip_nonfinite} : tensor<3x4xf32>
// CHECK: grove.adaalter [@b](%{{.*}}) {name = "alter", period = 4 : i64} : tensor<3xf32>
// CHECK: grove.adaalter [@b](%{{.*}}) {name = "warm", period = 4 : i64, sync_warmup_steps = 100 : i64} : tensor<3xf32>
// CHECK: grove.lr_schedule constant
// CHECK: grove.lr_schedule cosine
// CHECK: grove.lr_schedule step_decay %{{.*}} {gamma = 5.000000e-01 : f64, lr = 1.000000e-01 : f64, step_size = 30 : i64} : tensor<f64> -> tensor<f64>
// CHECK: grove.sin %{{.*}} : tensor<f64>
// CHECK: grove.cos %{{.*}} : tensor<f64>
// CHECK: grove.floor %{{.*}} : tensor<f64>
module @m {
  grove.param @w : tensor<3x4xf32>
  grove.param @b : tensor<3xf32>
  grove.param @lans.step : tensor<i64> = 0 : i64
  func.func @update(%gw: tensor<3x4xf32>, %gb: tensor<3xf32>, %t64: tensor<f64>) {
    grove.adagrad [@w] (%gw) {lr_decay = 0.01 : f64, initial_accumulator_value = 0.1 : f64} : tensor<3x4xf32>
    grove.lamb [@w, @b] (%gw, %gb) {weight_decay = 0.0 : f64, nvlamb} : tensor<3x4xf32>, tensor<3xf32>
    %t = grove.get_param @lans.step : tensor<i64>
    %lr = grove.lr_schedule polynomial %t {lr = 0.005 : f64, warmup_steps = 10, total_steps = 100, power = 2.0 : f64} : tensor<i64> -> tensor<f32>
    grove.lans [@w] (%gw) lr(%lr : tensor<f32>) {max_grad_norm = 1.0 : f64, skip_nonfinite} : tensor<3x4xf32>
    grove.adaalter [@b] (%gb) {name = "alter", period = 4} : tensor<3xf32>
    grove.adaalter [@b] (%gb) {name = "warm", period = 4, sync_warmup_steps = 100} : tensor<3xf32>
    %c = grove.lr_schedule constant %t64 {lr = 0.1 : f64} : tensor<f64> -> tensor<f64>
    %k = grove.lr_schedule cosine %t64 {lr = 0.1 : f64, total_steps = 90} : tensor<f64> -> tensor<f32>
    %s = grove.lr_schedule step_decay %t64 {lr = 0.1 : f64, step_size = 30, gamma = 0.5 : f64} : tensor<f64> -> tensor<f64>
    %sin = grove.sin %t64 : tensor<f64>
    %cos = grove.cos %t64 : tensor<f64>
    %fl = grove.floor %t64 : tensor<f64>
    return
  }
}

// CHECK-LABEL: func.func @elastic
// CHECK: grove.elastic_lr %{{.*}} {base_world = 2 : i64, ramp_steps = 50 : i64} : tensor<f32>
func.func @elastic(%lr: tensor<f32>) -> tensor<f32> {
  %r = grove.elastic_lr %lr {base_world = 2, ramp_steps = 50} : tensor<f32>
  return %r : tensor<f32>
}
