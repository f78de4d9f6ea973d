// RUN: grove-opt %s -split-input-file -verify-diagnostics

// Verifier errors of the training ops (GroveTrainingOps.cpp).

grove.param @w : tensor<4xf32>
func.func @not_scalar(%x: tensor<4xf32>) {
  // expected-error @+1 {{'grove.value_and_grad' op expects a scalar value (a rank-0 float tensor), got 'tensor<4xf32>'}}
  %l, %g = grove.value_and_grad [@w] {
    %w = grove.get_param @w : tensor<4xf32>
    grove.yield %w : tensor<4xf32>
  } : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @twice(%x: tensor<f32>) {
  // expected-error @+1 {{'grove.value_and_grad' op differentiates with respect to @w twice}}
  %l, %g:2 = grove.value_and_grad [@w, @w] {
    grove.yield %x : tensor<f32>
  } : tensor<f32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @missing(%x: tensor<f32>) {
  // expected-error @+1 {{'grove.value_and_grad' op differentiates with respect to @nope, which is not a grove.param}}
  %l, %g = grove.value_and_grad [@nope] {
    grove.yield %x : tensor<f32>
  } : tensor<f32>, tensor<4xf32>
  return
}

// -----

grove.param @steps : tensor<i64>
func.func @integer_param(%x: tensor<f32>) {
  // expected-error @+1 {{'grove.value_and_grad' op differentiates with respect to @steps of type 'tensor<i64>', which is not a float tensor}}
  %l, %g = grove.value_and_grad [@steps] {
    grove.yield %x : tensor<f32>
  } : tensor<f32>, tensor<f32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @gradient_type(%x: tensor<f32>) {
  // expected-error @+1 {{'grove.value_and_grad' op gradient of @w has type 'tensor<3xf32>', expected 'tensor<4xf32>'}}
  %l, %g = grove.value_and_grad [@w] {
    grove.yield %x : tensor<f32>
  } : tensor<f32>, tensor<3xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @yield_type(%x: tensor<f64>) {
  // expected-error @+1 {{'grove.value_and_grad' op expects its body to yield one value of type 'tensor<f32>'}}
  %l, %g = grove.value_and_grad [@w] {
    grove.yield %x : tensor<f64>
  } : tensor<f32>, tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @nested(%x: tensor<f32>) {
  %l, %g = grove.value_and_grad [@w] {
    // expected-error @+1 {{'grove.value_and_grad' op is nested in another grove.value_and_grad; higher-order gradients are not supported}}
    %l2, %g2 = grove.value_and_grad [@w] {
      grove.yield %x : tensor<f32>
    } : tensor<f32>, tensor<4xf32>
    grove.yield %l2 : tensor<f32>
  } : tensor<f32>, tensor<4xf32>
  return
}

// -----

func.func @one_hot_dynamic_classes(%y: tensor<?xi32>) {
  // expected-error @+1 {{'grove.one_hot' op expects a static, positive class count (the result's last dimension)}}
  %t = grove.one_hot %y : tensor<?xi32> -> tensor<?x?xf32>
  return
}

// -----

func.func @one_hot_rank(%y: tensor<?xi32>) {
  // expected-error @+1 {{'grove.one_hot' op expects a result of rank 2}}
  %t = grove.one_hot %y : tensor<?xi32> -> tensor<10xf32>
  return
}

// -----

func.func @ce_rows(%z: tensor<4x10xf32>, %y: tensor<5xi32>) {
  // expected-error @+1 {{'grove.softmax_cross_entropy' op expects as many labels as logit rows}}
  %l = grove.softmax_cross_entropy %z, %y : (tensor<4x10xf32>, tensor<5xi32>) -> tensor<f32>
  return
}

// -----

func.func @ce_smoothing(%z: tensor<4x10xf32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{'grove.softmax_cross_entropy' op expects label_smoothing in [0, 1], got 1.5}}
  %l = grove.softmax_cross_entropy %z, %y {label_smoothing = 1.5 : f64} : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
  return
}

// -----

func.func @ce_float_labels(%z: tensor<4x10xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'grove.softmax_cross_entropy' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xf32>'}}
  %l = grove.softmax_cross_entropy %z, %y : (tensor<4x10xf32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

func.func @mse_types(%a: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'grove.mse_loss' op expects prediction and target of one type}}
  %l = grove.mse_loss %a, %b : (tensor<4xf32>, tensor<3xf32>) -> tensor<f32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @sgd_count(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.sgd' op expects one gradient per param (1), got 2}}
  grove.sgd [@w] (%g, %g) : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @sgd_nesterov(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.sgd' op expects a momentum with nesterov}}
  grove.sgd [@w] (%g) {nesterov} : tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @sgd_gradient_type(%g: tensor<3xf32>) {
  // expected-error @+1 {{'grove.sgd' op gradient of @w has type 'tensor<3xf32>', expected 'tensor<4xf32>'}}
  grove.sgd [@w] (%g) : tensor<3xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @adam_beta(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.adam' op expects beta2 in [0, 1), got 1}}
  grove.adam [@w] (%g) {beta2 = 1.0 : f64} : tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @adam_lr(%g: tensor<4xf32>, %lr: tensor<2xf32>) {
  // expected-error @+1 {{'grove.adam' op expects a rank-0 float learning_rate, got 'tensor<2xf32>'}}
  grove.adam [@w] (%g) lr(%lr : tensor<2xf32>) : tensor<4xf32>
  return
}

// -----

func.func @adam_missing(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.adam' op updates @w, which is not a grove.param}}
  grove.adam [@w] (%g) : tensor<4xf32>
  return
}
