// The digits MLP of models/mlp (64 -> 128 -> 10, ReLU) with its training
// step: cross-entropy on a batch, Adam over every weight, in one call.
// examples/train_digits trains it from scratch (docs/training.md).
// Written by models/mlp_train/generate.py (grove.nn); do not edit.
module @mlp_train {
  grove.param @fc1.weight : tensor<128x64xf32>
  grove.param @fc1.bias : tensor<128xf32>
  grove.param @fc2.weight : tensor<10x128xf32>
  grove.param @fc2.bias : tensor<10xf32>

  func.func @forward(%x: tensor<?x64xf32> {grove.name = "x"})
      -> (tensor<?x10xf32> {grove.name = "logits"}) {
    %fc1_weight = grove.get_param @fc1.weight : tensor<128x64xf32>
    %v1 = grove.matmul %x, %fc1_weight {transpose_rhs}
        : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    %fc1_bias = grove.get_param @fc1.bias : tensor<128xf32>
    %v2 = grove.add %v1, %fc1_bias : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %fc1 = grove.relu %v2 : tensor<?x128xf32>
    %fc2_weight = grove.get_param @fc2.weight : tensor<10x128xf32>
    %v3 = grove.matmul %fc1, %fc2_weight {transpose_rhs}
        : (tensor<?x128xf32>, tensor<10x128xf32>) -> tensor<?x10xf32>
    %fc2_bias = grove.get_param @fc2.bias : tensor<10xf32>
    %fc2 = grove.add %v3, %fc2_bias : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
    return %fc2 : tensor<?x10xf32>
  }

  func.func @train_step(
      %x: tensor<?x64xf32> {grove.name = "x"},
      %labels: tensor<?xi32> {grove.name = "labels"})
      -> (tensor<f32> {grove.name = "loss"}) {
    %loss, %g:4 = grove.value_and_grad [@fc1.weight, @fc1.bias, @fc2.weight, @fc2.bias] {
      %z = func.call @forward(%x) : (tensor<?x64xf32>) -> tensor<?x10xf32>
      %l = grove.softmax_cross_entropy %z, %labels
          : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
      grove.yield %l : tensor<f32>
    } : tensor<f32>, tensor<128x64xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>
    grove.adam [@fc1.weight, @fc1.bias, @fc2.weight, @fc2.bias] (%g#0, %g#1, %g#2, %g#3)
        {lr = 0.001 : f64}
        : tensor<128x64xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>
    return %loss : tensor<f32>
  }
}
