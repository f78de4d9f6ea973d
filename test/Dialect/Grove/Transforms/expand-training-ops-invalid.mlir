// RUN: grove-opt %s -split-input-file --grove-expand-training-ops -verify-diagnostics

// State the module declares with another type than the optimizer needs.
grove.param @w : tensor<4xf32>
grove.param @w.adam.m : tensor<3xf32> = 0.0 : f32
func.func @mismatch(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.adam' op needs state @w.adam.m of type 'tensor<4xf32>', declared as 'tensor<3xf32>'}}
  grove.adam [@w] (%g) : tensor<4xf32>
  return
}

// -----

// A state name the module uses for a function.
grove.param @w : tensor<4xf32>
func.func @adam.step() {
  return
}
func.func @clash(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.adam' op needs state @adam.step, a name the module uses for something else}}
  grove.adam [@w] (%g) : tensor<4xf32>
  return
}

// -----

// Two optimizers of one function under one name would share @adam.step.
grove.param @w : tensor<4xf32>
grove.param @v : tensor<4xf32>
func.func @same_name(%g: tensor<4xf32>) {
  // expected-note @+1 {{the other optimizer}}
  grove.adam [@w] (%g) {lr = 0.1 : f64} : tensor<4xf32>
  // expected-error @+1 {{'grove.adam' op shares the state name 'adam' with another optimizer of this function; give each its own `name`}}
  grove.adam [@v] (%g) {lr = 0.01 : f64} : tensor<4xf32>
  return
}
