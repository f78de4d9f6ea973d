// RUN: grove-opt %s -split-input-file --grove-autocast -verify-diagnostics

// Dynamic loss scaling needs an f32 value and f32 gradients: the scale
// overflows f16, and unscaled f16 gradients would underflow again.
grove.param @w : tensor<8x3xf16>
func.func @f16_params(%x: tensor<4x8xf16>, %y: tensor<4xi32>) -> tensor<f32>
    attributes {grove.autocast = #grove.autocast<compute = f16>} {
  // expected-error @+1 {{needs an f32 value and f32 gradients for dynamic loss scaling (f32 params, the master weights), got 'tensor<8x3xf16>'}}
  %l, %g = grove.value_and_grad [@w] {
    %w = grove.get_param @w : tensor<8x3xf16>
    %h = grove.matmul %x, %w : (tensor<4x8xf16>, tensor<8x3xf16>) -> tensor<4x3xf16>
    %hw = grove.convert %h : tensor<4x3xf16> -> tensor<4x3xf32>
    %c = grove.softmax_cross_entropy %hw, %y : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
    grove.yield %c : tensor<f32>
  } : tensor<f32>, tensor<8x3xf16>
  grove.adam [@w] (%g) {master_weights} : tensor<8x3xf16>
  return %l : tensor<f32>
}
