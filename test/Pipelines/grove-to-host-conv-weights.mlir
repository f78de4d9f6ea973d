// RUN: grove-opt %s --grove-to-host | FileCheck %s

// grove-to-host sets conv-library-read-only-weights: a 56x56 convolution
// (above the 28x28 size rule) of an entry that only reads its weights
// calls the runtime's convolution service, which keeps those weights
// prepared; the train step that writes the same weights keeps im2col +
// GEMM (docs/passes.md).
// CHECK-LABEL: llvm.func internal @_grove_model_forward(
// CHECK: llvm.call @grove_rt_conv2d_f32(
// CHECK-NOT: grove_rt_batch_matmul_f32
// CHECK: llvm.return
// CHECK-LABEL: llvm.func internal @_grove_model_nudge(
// CHECK-NOT: grove_rt_conv2d_f32
// CHECK: llvm.call @grove_rt_batch_matmul_f32
// CHECK-NOT: grove_rt_conv2d_f32
// CHECK: llvm.return
module {
  grove.param @w : tensor<8x8x3x3xf32>
  func.func @forward(%x: tensor<?x8x56x56xf32>) -> tensor<?x8x56x56xf32> {
    %w = grove.get_param @w : tensor<8x8x3x3xf32>
    %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x8x56x56xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x56x56xf32>
    return %0 : tensor<?x8x56x56xf32>
  }
  // Uses the weights, then writes them.
  func.func @nudge(%x: tensor<?x8x56x56xf32>) -> tensor<?x8x56x56xf32> {
    %w = grove.get_param @w : tensor<8x8x3x3xf32>
    %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x8x56x56xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x56x56xf32>
    %s = grove.add %w, %w : (tensor<8x8x3x3xf32>, tensor<8x8x3x3xf32>) -> tensor<8x8x3x3xf32>
    grove.set_param @w = %s : tensor<8x8x3x3xf32>
    return %0 : tensor<?x8x56x56xf32>
  }
}
