// RUN: grove-opt %s --grove-autocast | grove-opt --grove-autocast | FileCheck %s

// The policy is applied once: the pass drops the attributes it applied, so
// a second run (grovec after grove-opt, say) neither casts nor scales
// again. The f16 policy's default loss scale is 65536.
// CHECK-NOT: grove.autocast
// CHECK: grove.param @loss_scale.scale : tensor<f32> = 6.553600e+04 : f32
// CHECK: grove.param @loss_scale.good_steps
// CHECK-NOT: grove.param @loss_scale
// CHECK-LABEL: func.func @train_step
// CHECK-COUNT-1: grove.get_param @loss_scale.scale
// CHECK-NOT: grove.get_param @loss_scale.scale
// CHECK: grove.convert %{{.*}} : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK-NOT: tensor<4x8xf16> -> tensor<4x8xf16>
module attributes {grove.autocast = #grove.autocast<compute = f16>} {
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
}
