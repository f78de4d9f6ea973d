// RUN: grove-opt %s -split-input-file -verify-diagnostics
// RUN: echo 'module {}' | not grove-opt --grove-autocast='compute=f64' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: echo 'module {}' | not grove-opt --grove-autocast='compute=f16 loss-scale=-2' 2>&1 | FileCheck %s --check-prefix=SCALE

// #grove.autocast's verifier and where grove.autocast may stand.

// expected-error @+1 {{autocast computes in bf16 or f16, not 'f32'}}
func.func @f32() attributes {grove.autocast = #grove.autocast<compute = f32>} {
  return
}

// -----

// expected-error @+1 {{loss_scale must be -1 (by compute type), 0 (none) or positive, got -2}}
func.func @negative() attributes {grove.autocast = #grove.autocast<compute = f16, loss_scale = -2>} {
  return
}

// -----

// expected-error @+1 {{growth_interval must be at least 1, got 0}}
func.func @interval() attributes {grove.autocast = #grove.autocast<compute = f16, loss_scale = 8, growth_interval = 0>} {
  return
}

// -----

func.func @on_an_op(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'grove.autocast' must be a #grove.autocast on a module or function}}
  %y = grove.relu %x {grove.autocast = #grove.autocast<compute = bf16>} : tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

grove.param @p : tensor<f32>
func.func @not_a_write(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'grove.loss_scale_update' must be a unit attribute on grove.set_param}}
  %y = grove.get_param @p {grove.loss_scale_update} : tensor<f32>
  return %y : tensor<f32>
}

// OPTION: error: grove-autocast: compute must be bf16 or f16, got 'f64'
// SCALE: error: grove-autocast: loss-scale must be -1, 0 or positive and growth-interval at least 1
