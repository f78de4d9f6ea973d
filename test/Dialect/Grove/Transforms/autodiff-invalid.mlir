// RUN: grove-opt %s -split-input-file --grove-autodiff -verify-diagnostics

// grove-autodiff's located errors (Autodiff.cpp).

// An op on the path from a param to the value without a VJP (another
// dialect's), and a grove op declared not differentiable.
grove.param @u : tensor<4xf32>
func.func @no_vjp() -> tensor<f32> {
  // expected-note @+1 {{differentiating this grove.value_and_grad}}
  %l, %g = grove.value_and_grad [@u] {
    %u = grove.get_param @u : tensor<4xf32>
    // expected-error @+1 {{grove-autodiff: cannot differentiate through 'arith.addf', which has no VJP}}
    %y = arith.addf %u, %u : tensor<4xf32>
    %s = grove.reduce_sum %y {axes = array<i64: 0>} : tensor<4xf32> -> tensor<f32>
    grove.yield %s : tensor<f32>
  } : tensor<f32>, tensor<4xf32>
  return %l : tensor<f32>
}

// -----

grove.param @x : tensor<2x3x8x8xf32>
func.func @not_differentiable(%dy: tensor<?x4x8x8xf32>) -> tensor<f32> {
  // expected-note @+1 {{differentiating this grove.value_and_grad}}
  %l, %g = grove.value_and_grad [@x] {
    %x = grove.get_param @x : tensor<2x3x8x8xf32>
    // expected-error @+1 {{grove-autodiff: cannot differentiate through 'grove.conv2d_weight_grad', which is not differentiable}}
    %w = grove.conv2d_weight_grad %x, %dy {groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<?x4x8x8xf32>) -> tensor<4x3x3x3xf32>
    %s = grove.reduce_sum %w {axes = array<i64: 0, 1, 2, 3>} : tensor<4x3x3x3xf32> -> tensor<f32>
    grove.yield %s : tensor<f32>
  } : tensor<f32>, tensor<2x3x8x8xf32>
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

// -----

// conv2d's input gradient, when the input depends on a param, needs the
// padding to fit in the dilated kernel.
grove.param @x : tensor<1x1x4x4xf32>
func.func @conv_padding(%w: tensor<1x1x3x3xf32>) -> tensor<f32> {
  %l, %g = grove.value_and_grad [@x] {
    %x = grove.get_param @x : tensor<1x1x4x4xf32>
    // expected-error @+1 {{'grove.conv2d' op cannot be differentiated with respect to its input: its padding exceeds the dilated kernel}}
    %y = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 3, 3, 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x8x8xf32>
    %s = grove.reduce_sum %y {axes = array<i64: 0, 1, 2, 3>} : tensor<1x1x8x8xf32> -> tensor<f32>
    grove.yield %s : tensor<f32>
  } : tensor<f32>, tensor<1x1x4x4xf32>
  return %l : tensor<f32>
}

// -----

// The same convolution differentiated with respect to its weight only:
// the input gradient is not needed, so nothing fails.
grove.param @w : tensor<1x1x3x3xf32>
func.func @conv_weight_only(%x: tensor<1x1x?x?xf32>) -> tensor<1x1x3x3xf32> {
  %l, %g = grove.value_and_grad [@w] {
    %w = grove.get_param @w : tensor<1x1x3x3xf32>
    %y = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 3, 3, 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x1x?x?xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x?x?xf32>
    %s = grove.reduce_sum %y {axes = array<i64: 0, 1, 2, 3>} : tensor<1x1x?x?xf32> -> tensor<f32>
    grove.yield %s : tensor<f32>
  } : tensor<f32>, tensor<1x1x3x3xf32>
  return %g : tensor<1x1x3x3xf32>
}

// -----

// A reshape back to two dynamic sizes cannot be spelled as grove.reshape.
grove.param @w : tensor<3xf32>
func.func @reshape_two_dynamic(%x: tensor<?x?x3xf32>) -> tensor<f32> {
  %l, %g = grove.value_and_grad [@w] {
    %w = grove.get_param @w : tensor<3xf32>
    %p = grove.mul %x, %w : (tensor<?x?x3xf32>, tensor<3xf32>) -> tensor<?x?x3xf32>
    // expected-error @+1 {{'grove.reshape' op cannot be differentiated: its operand 'tensor<?x?x3xf32>' has more than one dynamic dimension}}
    %r = grove.reshape %p : tensor<?x?x3xf32> -> tensor<?xf32>
    %s = grove.reduce_sum %r {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
    grove.yield %s : tensor<f32>
  } : tensor<f32>, tensor<3xf32>
  return %l : tensor<f32>
}

// -----

// A callee that writes state, inlined into the body.
grove.param @w : tensor<4xf32>
grove.param @count : tensor<f32> = 0.0 : f32
func.func @counts(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = grove.get_param @count : tensor<f32>
  // expected-error @+1 {{grove-autodiff: 'grove.set_param' cannot be in the body of grove.value_and_grad (a state write; calls are inlined into it)}}
  grove.set_param @count = %c : tensor<f32>
  return %x : tensor<4xf32>
}
func.func @writes_state() -> tensor<f32> {
  // expected-note @+1 {{differentiating this grove.value_and_grad}}
  %l, %g = grove.value_and_grad [@w] {
    %w = grove.get_param @w : tensor<4xf32>
    %y = func.call @counts(%w) : (tensor<4xf32>) -> tensor<4xf32>
    %s = grove.reduce_sum %y {axes = array<i64: 0>} : tensor<4xf32> -> tensor<f32>
    grove.yield %s : tensor<f32>
  } : tensor<f32>, tensor<4xf32>
  return %l : tensor<f32>
}
