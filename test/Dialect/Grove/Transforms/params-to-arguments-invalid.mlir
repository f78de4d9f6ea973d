// RUN: grove-opt %s -split-input-file --grove-params-to-arguments -verify-diagnostics

// A writer that calls itself cannot be inlined into itself.
grove.param @c : tensor<f32> = 0.0 : f32
func.func @loop(%x: tensor<f32>) {
  grove.set_param @c = %x : tensor<f32>
  // expected-error @+1 {{calls @loop, which writes state, recursively}}
  func.call @loop(%x) : (tensor<f32>) -> ()
  return
}

// -----

// Nor can mutual recursion between writers (the error is at the call that
// closes the cycle, once @pong is inlined into @ping).
grove.param @c : tensor<f32> = 0.0 : f32
func.func @ping(%x: tensor<f32>) {
  grove.set_param @c = %x : tensor<f32>
  func.call @pong(%x) : (tensor<f32>) -> ()
  return
}
func.func private @pong(%x: tensor<f32>) {
  // expected-error @+1 {{calls @ping, which writes state, recursively}}
  func.call @ping(%x) : (tensor<f32>) -> ()
  return
}

// -----

// A writer with control flow between blocks is not inlined.
grove.param @c : tensor<f32> = 0.0 : f32
func.func @caller(%x: tensor<f32>) {
  // expected-error @+1 {{calls @branchy, which writes state and has more than one block}}
  func.call @branchy(%x) : (tensor<f32>) -> ()
  return
}
func.func private @branchy(%x: tensor<f32>) {
  grove.set_param @c = %x : tensor<f32>
  cf.br ^bb1
^bb1:
  return
}
