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
  // expected-error @+1 {{'grove.adam' op expects a learning_rate of type 'tensor<f32>', got 'tensor<2xf32>'}}
  grove.adam [@w] (%g) lr(%lr : tensor<2xf32>) : tensor<4xf32>
  return
}

// -----

func.func @adam_missing(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.adam' op updates @w, which is not a grove.param}}
  grove.adam [@w] (%g) : tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @empty_wrt(%x: tensor<f32>) {
  // expected-error @+1 {{'grove.value_and_grad' op expects at least one param in wrt}}
  %l = grove.value_and_grad [] {
    grove.yield %x : tensor<f32>
  } : tensor<f32>
  return
}

// -----

func.func @ce_dynamic_classes(%z: tensor<4x?xf32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{'grove.softmax_cross_entropy' op expects a static class count}}
  %l = grove.softmax_cross_entropy %z, %y : (tensor<4x?xf32>, tensor<4xi32>) -> tensor<f32>
  return
}

// -----

func.func @mse_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{'grove.mse_loss' op expects a rank-0 result of the operands' element type}}
  %l = grove.mse_loss %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<1xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @sgd_momentum(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.sgd' op expects momentum in [0, 1), got 1.5}}
  grove.sgd [@w] (%g) {momentum = 1.5 : f64} : tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @adam_name(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.adam' op expects a non-empty state name without '/'}}
  grove.adam [@w] (%g) {name = "a/b"} : tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xbf16>
func.func @adam_bf16(%g: tensor<4xbf16>) {
  // expected-error @+1 {{'grove.adam' op expects f32 or f64 params, got 'bf16' (bf16 and f16 params need master_weights)}}
  grove.adam [@w] (%g) : tensor<4xbf16>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @master_of_f32(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.sgd' op keeps master weights of bf16 or f16 params, got 'f32' params}}
  grove.sgd [@w] (%g) {master_weights} : tensor<4xf32>
  return
}

// -----

// With master weights the rate is f32, as the update.
grove.param @w : tensor<4xf16>
func.func @master_rate(%g: tensor<4xf16>, %lr: tensor<f16>) {
  // expected-error @+1 {{'grove.lamb' op expects a learning_rate of type 'tensor<f32>', got 'tensor<f16>'}}
  grove.lamb [@w] (%g) lr(%lr : tensor<f16>) {master_weights} : tensor<4xf16>
  return
}

// -----

grove.param @w : tensor<4xf32>
grove.param @v : tensor<4xf64>
func.func @adam_mixed(%g: tensor<4xf32>, %h: tensor<4xf64>) {
  // expected-error @+1 {{'grove.adam' op expects params of one element type, got 'f32' and 'f64'}}
  grove.adam [@w, @v] (%g, %h) : tensor<4xf32>, tensor<4xf64>
  return
}

// -----

grove.param @w : tensor<4xf64>
func.func @sgd_lr_type(%g: tensor<4xf64>, %lr: tensor<f32>) {
  // expected-error @+1 {{'grove.sgd' op expects a learning_rate of type 'tensor<f64>', got 'tensor<f32>'}}
  grove.sgd [@w] (%g) lr(%lr : tensor<f32>) : tensor<4xf64>
  return
}

// -----

func.func @reverse_dynamic(%x: tensor<?x3xf32>) {
  // expected-error @+1 {{'grove.reverse' op axis 0 is dynamic; reverse static axes}}
  %r = grove.reverse %x [0] : tensor<?x3xf32>
  return
}

// -----

func.func @reverse_twice(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.reverse' op reverses axis 1 twice}}
  %r = grove.reverse %x [1, 1] : tensor<2x3xf32>
  return
}

// -----

func.func @weight_grad_channels(%x: tensor<?x3x8x8xf32>, %dy: tensor<?x4x8x8xf32>) {
  // expected-error @+1 {{'grove.conv2d_weight_grad' op expects input channels = groups x 2}}
  %w = grove.conv2d_weight_grad %x, %dy {groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<?x4x8x8xf32>) -> tensor<4x2x3x3xf32>
  return
}

// -----

func.func @weight_grad_size(%x: tensor<?x3x8x8xf32>, %dy: tensor<?x4x7x8xf32>) {
  // expected-error @+1 {{'grove.conv2d_weight_grad' op expects output_grad height 8, got 7}}
  %w = grove.conv2d_weight_grad %x, %dy {groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<?x4x7x8xf32>) -> tensor<4x3x3x3xf32>
  return
}

// -----

func.func @pool_grad_type(%x: tensor<1x2x4x4xf32>, %dy: tensor<1x2x2x2xf32>) {
  // expected-error @+1 {{'grove.max_pool2d_grad' op expects a result of the input's type}}
  %dx = grove.max_pool2d_grad %x, %dy {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x4x5xf32>
  return
}

// -----

func.func @pool_grad_shape(%x: tensor<1x2x4x4xf32>, %dy: tensor<1x2x3x2xf32>) {
  // expected-error @+1 {{'grove.avg_pool2d_grad' op expects result height 2, got 3}}
  %dx = grove.avg_pool2d_grad %x, %dy {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x2x4x4xf32>, tensor<1x2x3x2xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @clip_negative(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.sgd' op expects max_grad_norm in [0, 1e+30], got -1}}
  grove.sgd [@w] (%g) {max_grad_norm = -1.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @select_mask(%m: tensor<3xf32>, %a: tensor<2x4xf32>) {
  // expected-error @+1 {{'grove.select' op expects a mask that broadcasts to 2x4 (got 3)}}
  %s = grove.select %m, %a, %a : (tensor<3xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @adagrad_accumulator(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.adagrad' op expects initial_accumulator_value in [0, 1e+30], got -1}}
  grove.adagrad [@w] (%g) {initial_accumulator_value = -1.0 : f64} : tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @adagrad_lr_decay(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.adagrad' op expects lr_decay in [0, 1e+30], got -0.5}}
  grove.adagrad [@w] (%g) {lr_decay = -0.5 : f64} : tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @lamb_beta(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.lamb' op expects beta1 in [0, 1), got 1}}
  grove.lamb [@w] (%g) {beta1 = 1.0 : f64} : tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @lans_epsilon(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.lans' op expects epsilon in [0, 1e+30], got -1e-06}}
  grove.lans [@w] (%g) {epsilon = -1.0e-6 : f64} : tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xi32>
func.func @lans_int(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.lans' op updates @w of type 'tensor<4xi32>', which is not a float tensor}}
  grove.lans [@w] (%g) : tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @adaalter_period(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.adaalter' op expects a period of at least 1, got 0}}
  grove.adaalter [@w] (%g) {period = 0} : tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @adaalter_epsilon(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.adaalter' op expects a positive epsilon}}
  grove.adaalter [@w] (%g) {epsilon = 0.0 : f64} : tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @adaalter_warmup_negative(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.adaalter' op expects sync_warmup_steps >= 0, got -1}}
  grove.adaalter [@w] (%g) {period = 4, sync_warmup_steps = -1} : tensor<4xf32>
  return
}

// -----

// With period 1 every step is synchronous: a warm-up would change nothing.
grove.param @w : tensor<4xf32>
func.func @adaalter_warmup_period(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.adaalter' op expects a period above 1 with sync_warmup_steps}}
  grove.adaalter [@w] (%g) {sync_warmup_steps = 10} : tensor<4xf32>
  return
}

// -----

func.func @schedule_rank(%t: tensor<2xf32>) {
  // expected-error @+1 {{'grove.lr_schedule' op operand #0 must be 0D tensor of 64-bit signless integer or 32-bit signless integer or 32-bit float or 64-bit float values, but got 'tensor<2xf32>'}}
  %lr = grove.lr_schedule constant %t {lr = 0.1 : f64} : tensor<2xf32> -> tensor<f32>
  return
}

// -----

func.func @schedule_total(%t: tensor<f32>) {
  // expected-error @+1 {{'grove.lr_schedule' op expects total_steps above warmup_steps (10), got 10}}
  %lr = grove.lr_schedule cosine %t {lr = 0.1 : f64, warmup_steps = 10, total_steps = 10} : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @schedule_warmup(%t: tensor<f32>) {
  // expected-error @+1 {{'grove.lr_schedule' op expects warmup_steps >= 0, got -1}}
  %lr = grove.lr_schedule constant %t {lr = 0.1 : f64, warmup_steps = -1} : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @schedule_step_size(%t: tensor<f32>) {
  // expected-error @+1 {{'grove.lr_schedule' op expects a step_size of at least 1, got 0}}
  %lr = grove.lr_schedule step_decay %t {lr = 0.1 : f64, step_size = 0} : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @schedule_gamma(%t: tensor<f32>) {
  // expected-error @+1 {{'grove.lr_schedule' op expects a positive gamma}}
  %lr = grove.lr_schedule step_decay %t {lr = 0.1 : f64, gamma = 0.0 : f64} : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @schedule_kind(%t: tensor<f32>) {
  // expected-error @+1 {{one of the following enum values for attribute 'kind' [constant, polynomial, cosine, step_decay]}}
  %lr = grove.lr_schedule exponential %t {lr = 0.1 : f64} : tensor<f32> -> tensor<f32>
  return
}

// -----

grove.param @rm : tensor<3xf32> = 0.0 : f32
func.func @bn_missing_state(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{'grove.batch_norm_training' op updates @rv, which is not a grove.param}}
  %y = grove.batch_norm_training %x, %s, %s {running_mean = @rm, running_var = @rv} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

grove.param @rm : tensor<4xf32> = 0.0 : f32
func.func @bn_state_type(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{'grove.batch_norm_training' op updates @rm of type 'tensor<4xf32>', expected 'tensor<3xf32>'}}
  %y = grove.batch_norm_training %x, %s, %s {running_mean = @rm, running_var = @rm} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

grove.param @rm : tensor<3xf32> = 0.0 : f32
func.func @bn_one_value(%x: tensor<1x3xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{'grove.batch_norm_training' op expects more than one value per channel}}
  %y = grove.batch_norm_training %x, %s, %s {running_mean = @rm, running_var = @rm} : (tensor<1x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  return
}

// -----

grove.param @rm : tensor<3xf32> = 0.0 : f32
func.func @bn_momentum(%x: tensor<2x3xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{'grove.batch_norm_training' op expects momentum in [0, 1]}}
  %y = grove.batch_norm_training %x, %s, %s {momentum = 1.5 : f64, running_mean = @rm, running_var = @rm} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// -----

grove.param @rm : tensor<3xf32> = 0.0 : f32
func.func @bn_scale_shape(%x: tensor<2x3xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'grove.batch_norm_training' op expects scale and bias of shape [3], got 'tensor<4xf32>'}}
  %y = grove.batch_norm_training %x, %s, %s {running_mean = @rm, running_var = @rm} : (tensor<2x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @pool_indices_shape(%x: tensor<1x2x4x4xf32>, %dy: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x3xi32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{'grove.max_pool2d_grad' op expects indices dimension 2, got 3}}
  %dx = grove.max_pool2d_grad %x, %dy indices %i {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x3xi32>) -> tensor<1x2x4x4xf32>
  return %dx : tensor<1x2x4x4xf32>
}

// -----

func.func @pool_with_indices_rank(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error @+1 {{'grove.max_pool2d_with_indices' op expects indices of rank 4, got 3}}
  %y, %i = grove.max_pool2d_with_indices %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2xi32>)
  return %y : tensor<1x2x2x2xf32>
}

// -----

func.func @elastic_rank(%lr: tensor<2xf32>) {
  // expected-error @+1 {{expects a rank-0 f32 or f64 rate, got 'tensor<2xf32>'}}
  %r = grove.elastic_lr %lr {base_world = 1, ramp_steps = 10} : tensor<2xf32>
  return
}

// -----

func.func @elastic_base(%lr: tensor<f32>) {
  // expected-error @+1 {{attribute 'base_world' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %r = grove.elastic_lr %lr {base_world = 0, ramp_steps = 10} : tensor<f32>
  return
}

// -----

func.func @ce_empty(%z: tensor<0x4xf32>, %y: tensor<0xi32>) {
  // expected-error @+1 {{'grove.softmax_cross_entropy' op expects at least one row, got an empty batch}}
  %l = grove.softmax_cross_entropy %z, %y : (tensor<0x4xf32>, tensor<0xi32>) -> tensor<f32>
  return
}

// -----

func.func @mse_empty(%p: tensor<0x4xf32>) {
  // expected-error @+1 {{'grove.mse_loss' op expects at least one element, got 'tensor<0x4xf32>'}}
  %l = grove.mse_loss %p, %p : (tensor<0x4xf32>, tensor<0x4xf32>) -> tensor<f32>
  return
}

// -----

grove.param @w : tensor<4xf32>
grove.param @b : tensor<4xf32>
func.func @groups_count(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.lamb' op expects one weight_decays entry per param (2), got 1}}
  grove.lamb [@w, @b] (%g, %g) {weight_decays = array<f64: 0.0>} : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @groups_negative(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.lans' op expects weight_decays entry in [0, 1e+30], got -1}}
  grove.lans [@w] (%g) {weight_decays = array<f64: -1.0>} : tensor<4xf32>
  return
}

// -----

grove.param @w : tensor<4xf32>
func.func @trust_count(%g: tensor<4xf32>) {
  // expected-error @+1 {{'grove.lans' op expects one trust_mask entry per param (1), got 2}}
  grove.lans [@w] (%g) {trust_mask = array<i1: true, false>} : tensor<4xf32>
  return
}
