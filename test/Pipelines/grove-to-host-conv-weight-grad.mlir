// RUN: grove-opt %s --grove-to-host | FileCheck %s
// RUN: grove-opt %s --grove-to-cuda | FileCheck %s --check-prefix=CUDA

// grove-to-host sets conv-weight-grad-library: the weight gradient of a
// train step's convolution calls the runtime's weight-gradient service
// (oneDNN); no im2col GEMM is left. (The forward convolution reads the
// same padded input, so the padding stays materialised for both.)
// grove-to-cuda keeps im2col + one batched GEMM (docs/passes.md).
// CHECK-LABEL: llvm.func internal @_grove_model_step(
// CHECK-NOT: grove_rt_batch_matmul_f32
// CHECK: llvm.call @grove_rt_conv2d_weight_grad_f32(
// CHECK-NOT: grove_rt_batch_matmul_f32
// CHECK: llvm.return
// CUDA-NOT: grove_rt_conv2d_weight_grad_f32
module {
  grove.param @w : tensor<8x4x3x3xf32>
  func.func @step(%x: tensor<?x4x16x16xf32>) -> tensor<f32> {
    %l, %g = grove.value_and_grad [@w] {
      %w = grove.get_param @w : tensor<8x4x3x3xf32>
      %y = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x4x16x16xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x16x16xf32>
      %s = grove.reduce_sum %y {axes = array<i64: 0, 1, 2, 3>} : tensor<?x8x16x16xf32> -> tensor<f32>
      grove.yield %s : tensor<f32>
    } : tensor<f32>, tensor<8x4x3x3xf32>
    grove.sgd [@w] (%g) {lr = 0.1 : f64} : tensor<8x4x3x3xf32>
    return %l : tensor<f32>
  }
}
