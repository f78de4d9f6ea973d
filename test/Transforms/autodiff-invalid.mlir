// RUN: grove-opt %s -split-input-file --grove-autodiff -verify-diagnostics

// grove-autodiff's located errors (Autodiff.cpp).

// An op on the path from a param to the value without a VJP.
grove.param @w : tensor<4x3x3x3xf32>
func.func @no_vjp(%x: tensor<1x3x8x8xf32>) -> tensor<f32> {
  // expected-note @+1 {{differentiating this grove.value_and_grad}}
  %l, %g = grove.value_and_grad [@w] {
    %w = grove.get_param @w : tensor<4x3x3x3xf32>
    // expected-error @+1 {{grove-autodiff: cannot differentiate through 'grove.max_pool2d', which has no VJP}}
    %y = grove.max_pool2d %w {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>} : (tensor<4x3x3x3xf32>) -> tensor<4x3x2x2xf32>
    %s = grove.reduce_sum %y {axes = array<i64: 0, 1, 2, 3>} : tensor<4x3x2x2xf32> -> tensor<f32>
    grove.yield %s : tensor<f32>
  } : tensor<f32>, tensor<4x3x3x3xf32>
  return %l : tensor<f32>
}

// -----

// A call that cannot be inlined (a declaration).
grove.param @w : tensor<4xf32>
func.func private @external(tensor<4xf32>) -> tensor<f32>
func.func @external_call() -> tensor<f32> {
  %l, %g = grove.value_and_grad [@w] {
    %w = grove.get_param @w : tensor<4xf32>
    // expected-error @+1 {{grove-autodiff: cannot inline @external into grove.value_and_grad (a defined function of one block is needed)}}
    %s = func.call @external(%w) : (tensor<4xf32>) -> tensor<f32>
    grove.yield %s : tensor<f32>
  } : tensor<f32>, tensor<4xf32>
  return %l : tensor<f32>
}
