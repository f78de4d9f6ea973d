// RUN: grove-opt %s --grove-autocast='compute=f16 growth-interval=3' | FileCheck %s
// RUN: grove-opt %s --grove-autocast='compute=f16 loss-scale=0' | FileCheck %s --check-prefix=OFF
// RUN: grove-opt %s --grove-autocast='compute=bf16' | FileCheck %s --check-prefix=OFF
// RUN: grove-opt %s --grove-autocast='compute=f16 loss-scale=1024' --grove-autodiff --grove-expand-training-ops | FileCheck %s --check-prefix=SKIP

// Dynamic loss scaling (grove-autocast with a loss scale; f16's default is
// 65536, bf16 has none): the scale is state, the body yields value · scale,
// the value and gradients are divided by it, and the scale's update
// (halved on a non-finite gradient, doubled after growth-interval finite
// steps) is written unguarded; the optimizer skips non-finite steps.
// CHECK: grove.param @loss_scale.scale : tensor<f32> = 6.553600e+04 : f32
// CHECK: grove.param @loss_scale.good_steps : tensor<i64> = 0 : i64
// CHECK-LABEL: func.func @train_step
// CHECK: %[[S:.*]] = grove.get_param @loss_scale.scale : tensor<f32>
// CHECK: grove.value_and_grad [@w]
// CHECK: %[[L:.*]] = grove.softmax_cross_entropy
// CHECK: %[[LS:.*]] = grove.mul %[[L]], %[[S]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: grove.yield %[[LS]]
// CHECK: %[[V:.*]] = grove.div %value, %[[S]]
// CHECK: %[[G:.*]] = grove.div %gradients, %[[S]] : (tensor<8x3xf32>, tensor<f32>)
// CHECK: %[[OK:.*]] = grove.step
// CHECK: arith.cmpi sge, %{{.*}}, %c3_i64
// CHECK: %[[GROWN:.*]] = grove.select %{{.*}}, %{{.*}}, %[[S]]
// CHECK: %[[NEXT:.*]] = grove.select %[[OK]], %[[GROWN]], %{{.*}}
// CHECK: grove.set_param @loss_scale.scale = %[[NEXT]] {grove.loss_scale_update}
// CHECK: grove.set_param @loss_scale.good_steps = %{{.*}} {grove.loss_scale_update}
// CHECK: grove.adam [@w](%[[G]]) {skip_nonfinite}
// CHECK: return %[[V]]
// An optimizer of another function keeps its own choice.
// CHECK-LABEL: func.func @apply
// CHECK: grove.sgd [@w](%arg0) : tensor<8x3xf32>
// OFF-NOT: loss_scale
// OFF-NOT: skip_nonfinite

// After the optimizer's expansion the scale's write stays where it is
// (not moved to the end and kept on a skipped step as other writes are).
// SKIP: grove.param @loss_scale.scale : tensor<f32> = 1.024000e+03 : f32
// SKIP-LABEL: func.func @train_step
// SKIP: grove.set_param @loss_scale.scale = %{{.*}} {grove.loss_scale_update}
// SKIP: grove.set_param @adam.step
grove.param @w : tensor<8x3xf32>
func.func @train_step(%x: tensor<4x8xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  %l, %g = grove.value_and_grad [@w] {
    %w = grove.get_param @w : tensor<8x3xf32>
    %h = grove.matmul %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    %c = grove.softmax_cross_entropy %h, %y : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
    grove.yield %c : tensor<f32>
  } : tensor<f32>, tensor<8x3xf32>
  grove.adam [@w] (%g) : tensor<8x3xf32>
  return %l : tensor<f32>
}

func.func @apply(%g: tensor<8x3xf32>) {
  grove.sgd [@w] (%g) : tensor<8x3xf32>
  return
}
