// REQUIRES: cuda-target
// RUN: grove-opt %s --grove-to-cuda="gpu-format=isa" | FileCheck %s

// grove-to-cuda keeps an im2col convolution batched (convert-grove-to-linalg
// without conv-per-image, unlike the host): one cuBLAS call per group for
// the whole batch, no loop over the images around them.
// CHECK-LABEL: llvm.func internal @_grove_model_grouped(
// CHECK-NOT: llvm.cond_br
// CHECK-COUNT-2: llvm.call @grove_rt_cuda_gemm_f32
// CHECK-NOT: llvm.call @grove_rt_cuda_gemm_f32
// CHECK: llvm.return
func.func @grouped(%x: tensor<?x64x56x56xf32>, %w: tensor<64x32x3x3xf32>) -> tensor<?x64x56x56xf32> {
  %0 = grove.conv2d %x, %w {groups = 2 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x64x56x56xf32>, tensor<64x32x3x3xf32>) -> tensor<?x64x56x56xf32>
  return %0 : tensor<?x64x56x56xf32>
}
