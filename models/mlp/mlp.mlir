// A 64 -> 128 -> 10 MLP classifier for scikit-learn's 8x8 digits.
// Weights (PyTorch nn.Linear layout, [out, in]) come from mlp.safetensors,
// trained by train.py. Compile: grovec models/mlp/mlp.mlir -o out
module @mlp {
  grove.param @fc1.weight : tensor<128x64xf32>
  grove.param @fc1.bias : tensor<128xf32>
  grove.param @fc2.weight : tensor<10x128xf32>
  grove.param @fc2.bias : tensor<10xf32>

  // Logits for a batch of flattened images scaled to [0, 1].
  func.func @forward(%x: tensor<?x64xf32> {grove.name = "x"})
      -> (tensor<?x10xf32> {grove.name = "logits"}) {
    %w1 = grove.get_param @fc1.weight : tensor<128x64xf32>
    %b1 = grove.get_param @fc1.bias : tensor<128xf32>
    %w2 = grove.get_param @fc2.weight : tensor<10x128xf32>
    %b2 = grove.get_param @fc2.bias : tensor<10xf32>
    %h = grove.matmul %x, %w1 {transpose_rhs}
        : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    %hb = grove.add %h, %b1
        : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %a = grove.relu %hb : tensor<?x128xf32>
    %o = grove.matmul %a, %w2 {transpose_rhs}
        : (tensor<?x128xf32>, tensor<10x128xf32>) -> tensor<?x10xf32>
    %logits = grove.add %o, %b2
        : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
    return %logits : tensor<?x10xf32>
  }
}
