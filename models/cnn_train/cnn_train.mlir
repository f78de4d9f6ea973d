// A small CNN for the 8x8 digits: two blocks of 3x3 conv, batch norm, ReLU
// and 2x2 max-pool (16 and 32 channels), then a linear layer. `train_step`
// normalises by batch statistics (the running ones updated as state) and
// takes an Adam step over every weight, in one call; `forward` is the
// inference form over the running statistics. examples/train_digits
// trains it from scratch with --model cnn (docs/training.md).
// Written by models/cnn_train/generate.py (grove.nn); do not edit.
module @cnn_train {
  grove.param @conv1.weight : tensor<16x1x3x3xf32>
  grove.param @conv1.bias : tensor<16xf32>
  grove.param @bn1.weight : tensor<16xf32>
  grove.param @bn1.bias : tensor<16xf32>
  grove.param @conv2.weight : tensor<32x16x3x3xf32>
  grove.param @conv2.bias : tensor<32xf32>
  grove.param @bn2.weight : tensor<32xf32>
  grove.param @bn2.bias : tensor<32xf32>
  grove.param @fc.weight : tensor<10x128xf32>
  grove.param @fc.bias : tensor<10xf32>
  grove.param @bn1.running_mean : tensor<16xf32> = 0.0 : f32
  grove.param @bn1.running_var : tensor<16xf32> = 1.0 : f32
  grove.param @bn2.running_mean : tensor<32xf32> = 0.0 : f32
  grove.param @bn2.running_var : tensor<32xf32> = 1.0 : f32

  func.func @forward(%x: tensor<?x64xf32> {grove.name = "x"})
      -> (tensor<?x10xf32> {grove.name = "logits"}) {
    %img = grove.reshape %x : tensor<?x64xf32> -> tensor<?x1x8x8xf32>
    %conv1_weight = grove.get_param @conv1.weight : tensor<16x1x3x3xf32>
    %conv1_bias = grove.get_param @conv1.bias : tensor<16xf32>
    %conv1 = grove.conv2d %img, %conv1_weight, %conv1_bias
        {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}
        : (tensor<?x1x8x8xf32>, tensor<16x1x3x3xf32>, tensor<16xf32>) -> tensor<?x16x8x8xf32>
    %bn1_weight = grove.get_param @bn1.weight : tensor<16xf32>
    %bn1_bias = grove.get_param @bn1.bias : tensor<16xf32>
    %bn1_running_mean = grove.get_param @bn1.running_mean : tensor<16xf32>
    %bn1_running_var = grove.get_param @bn1.running_var : tensor<16xf32>
    %bn1 = grove.batch_norm %conv1, %bn1_weight, %bn1_bias, %bn1_running_mean, %bn1_running_var
        {epsilon = 1.0e-05 : f64}
        : (tensor<?x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x16x8x8xf32>
    %v1 = grove.relu %bn1 : tensor<?x16x8x8xf32>
    %v2 = grove.max_pool2d %v1
        {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>}
        : (tensor<?x16x8x8xf32>) -> tensor<?x16x4x4xf32>
    %conv2_weight = grove.get_param @conv2.weight : tensor<32x16x3x3xf32>
    %conv2_bias = grove.get_param @conv2.bias : tensor<32xf32>
    %conv2 = grove.conv2d %v2, %conv2_weight, %conv2_bias
        {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}
        : (tensor<?x16x4x4xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<?x32x4x4xf32>
    %bn2_weight = grove.get_param @bn2.weight : tensor<32xf32>
    %bn2_bias = grove.get_param @bn2.bias : tensor<32xf32>
    %bn2_running_mean = grove.get_param @bn2.running_mean : tensor<32xf32>
    %bn2_running_var = grove.get_param @bn2.running_var : tensor<32xf32>
    %bn2 = grove.batch_norm %conv2, %bn2_weight, %bn2_bias, %bn2_running_mean, %bn2_running_var
        {epsilon = 1.0e-05 : f64}
        : (tensor<?x32x4x4xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<?x32x4x4xf32>
    %v3 = grove.relu %bn2 : tensor<?x32x4x4xf32>
    %v4 = grove.max_pool2d %v3
        {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>}
        : (tensor<?x32x4x4xf32>) -> tensor<?x32x2x2xf32>
    %v5 = grove.flatten %v4 {axis = 1 : i64} : (tensor<?x32x2x2xf32>) -> tensor<?x128xf32>
    %fc_weight = grove.get_param @fc.weight : tensor<10x128xf32>
    %v6 = grove.matmul %v5, %fc_weight {transpose_rhs}
        : (tensor<?x128xf32>, tensor<10x128xf32>) -> tensor<?x10xf32>
    %fc_bias = grove.get_param @fc.bias : tensor<10xf32>
    %fc = grove.add %v6, %fc_bias : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
    return %fc : tensor<?x10xf32>
  }

  func.func private @logits_train(%x: tensor<?x64xf32>) -> tensor<?x10xf32> {
    %img = grove.reshape %x : tensor<?x64xf32> -> tensor<?x1x8x8xf32>
    %conv1_weight = grove.get_param @conv1.weight : tensor<16x1x3x3xf32>
    %conv1_bias = grove.get_param @conv1.bias : tensor<16xf32>
    %conv1 = grove.conv2d %img, %conv1_weight, %conv1_bias
        {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}
        : (tensor<?x1x8x8xf32>, tensor<16x1x3x3xf32>, tensor<16xf32>) -> tensor<?x16x8x8xf32>
    %bn1_weight = grove.get_param @bn1.weight : tensor<16xf32>
    %bn1_bias = grove.get_param @bn1.bias : tensor<16xf32>
    %bn1 = grove.batch_norm_training %conv1, %bn1_weight, %bn1_bias
        {running_mean = @bn1.running_mean, running_var = @bn1.running_var, epsilon = 1.0e-05 : f64, momentum = 0.1 : f64}
        : (tensor<?x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x16x8x8xf32>
    %v1 = grove.relu %bn1 : tensor<?x16x8x8xf32>
    %v2 = grove.max_pool2d %v1
        {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>}
        : (tensor<?x16x8x8xf32>) -> tensor<?x16x4x4xf32>
    %conv2_weight = grove.get_param @conv2.weight : tensor<32x16x3x3xf32>
    %conv2_bias = grove.get_param @conv2.bias : tensor<32xf32>
    %conv2 = grove.conv2d %v2, %conv2_weight, %conv2_bias
        {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}
        : (tensor<?x16x4x4xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<?x32x4x4xf32>
    %bn2_weight = grove.get_param @bn2.weight : tensor<32xf32>
    %bn2_bias = grove.get_param @bn2.bias : tensor<32xf32>
    %bn2 = grove.batch_norm_training %conv2, %bn2_weight, %bn2_bias
        {running_mean = @bn2.running_mean, running_var = @bn2.running_var, epsilon = 1.0e-05 : f64, momentum = 0.1 : f64}
        : (tensor<?x32x4x4xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<?x32x4x4xf32>
    %v3 = grove.relu %bn2 : tensor<?x32x4x4xf32>
    %v4 = grove.max_pool2d %v3
        {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>}
        : (tensor<?x32x4x4xf32>) -> tensor<?x32x2x2xf32>
    %v5 = grove.flatten %v4 {axis = 1 : i64} : (tensor<?x32x2x2xf32>) -> tensor<?x128xf32>
    %fc_weight = grove.get_param @fc.weight : tensor<10x128xf32>
    %v6 = grove.matmul %v5, %fc_weight {transpose_rhs}
        : (tensor<?x128xf32>, tensor<10x128xf32>) -> tensor<?x10xf32>
    %fc_bias = grove.get_param @fc.bias : tensor<10xf32>
    %fc = grove.add %v6, %fc_bias : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
    return %fc : tensor<?x10xf32>
  }

  func.func @train_step(
      %x: tensor<?x64xf32> {grove.name = "x"},
      %labels: tensor<?xi32> {grove.name = "labels"})
      -> (tensor<f32> {grove.name = "loss"}) {
    %loss, %g:10 = grove.value_and_grad [@conv1.weight, @conv1.bias, @bn1.weight, @bn1.bias, @conv2.weight, @conv2.bias, @bn2.weight, @bn2.bias, @fc.weight, @fc.bias] {
      %z = func.call @logits_train(%x) : (tensor<?x64xf32>) -> tensor<?x10xf32>
      %l = grove.softmax_cross_entropy %z, %labels
          : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
      grove.yield %l : tensor<f32>
    }
        : tensor<f32>, tensor<16x1x3x3xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<10x128xf32>, tensor<10xf32>
    grove.adam [@conv1.weight, @conv1.bias, @bn1.weight, @bn1.bias, @conv2.weight, @conv2.bias, @bn2.weight, @bn2.bias, @fc.weight, @fc.bias] (%g#0, %g#1, %g#2, %g#3, %g#4, %g#5, %g#6, %g#7, %g#8, %g#9)
        {lr = 0.002 : f64}
        : tensor<16x1x3x3xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<10x128xf32>, tensor<10xf32>
    return %loss : tensor<f32>
  }
}
