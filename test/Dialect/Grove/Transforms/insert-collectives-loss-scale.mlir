// RUN: not grove-opt %s --grove-autocast='compute=f16' --grove-autodiff --grove-insert-collectives 2>&1 | FileCheck %s

// Dynamic loss scaling is not data-parallel yet: each rank would judge its
// own gradients' overflow before the reduction and its scale would drift
// from the others'.
// CHECK: error: grove-insert-collectives: dynamic loss scaling is not data-parallel yet (each rank would judge overflow apart); use bf16 without a loss scale (--loss-scale=0)
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
