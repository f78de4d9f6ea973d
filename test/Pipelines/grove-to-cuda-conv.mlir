// REQUIRES: cuda-target
// RUN: grove-opt %s --grove-to-cuda="gpu-format=isa" | FileCheck %s
// RUN: grove-opt %s --grove-to-cuda="gpu-format=isa conv-library" | FileCheck %s --check-prefix=LIB

// grove-to-cuda keeps an im2col convolution batched (convert-grove-to-linalg
// without conv-per-image, unlike the host): one cuBLAS call per group for
// the whole batch, no loop over the images around them. Each GEMM writes
// its group's channel block of the result in place: four kernels (the
// padded buffer's fill and copy, an im2col per group) and no copy kernel
// after either GEMM.
// CHECK-LABEL: llvm.func internal @_grove_model_grouped(
// CHECK-NOT: llvm.cond_br
// CHECK: gpu.launch_func {{.*}}@_grove_model_grouped_k0_map
// CHECK: gpu.launch_func {{.*}}@_grove_model_grouped_k1_map
// CHECK: gpu.launch_func {{.*}}@_grove_model_grouped_k2_map
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.call @grove_rt_cuda_gemm_f32
// CHECK: gpu.launch_func {{.*}}@_grove_model_grouped_k3_map
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.call @grove_rt_cuda_gemm_f32
// CHECK-NOT: llvm.call @grove_rt_cuda_gemm_f32
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.return

// With conv-library: one cuDNN call for both groups and the whole batch, reading the
// caller's input with the padding folded into the call - no im2col, no
// padded copy, so no kernel launch at all.
// LIB-LABEL: llvm.func internal @_grove_model_grouped(
// LIB-NOT: gpu.launch_func
// LIB-NOT: grove_rt_cuda_gemm
// LIB: llvm.call @grove_rt_cuda_conv2d_f32(
// LIB-NOT: gpu.launch_func
// LIB-NOT: grove_rt_cuda_conv2d
// LIB: llvm.return
func.func @grouped(%x: tensor<?x64x56x56xf32>, %w: tensor<64x32x3x3xf32>) -> tensor<?x64x56x56xf32> {
  %0 = grove.conv2d %x, %w {groups = 2 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x64x56x56xf32>, tensor<64x32x3x3xf32>) -> tensor<?x64x56x56xf32>
  return %0 : tensor<?x64x56x56xf32>
}

// bf16 too (cuDNN runs every float type), with the bias added by a kernel.
// LIB-LABEL: llvm.func internal @_grove_model_biased_bf16(
// LIB: llvm.call @grove_rt_cuda_conv2d_bf16(
// LIB: gpu.launch_func
// LIB: llvm.return
func.func @biased_bf16(%x: tensor<?x8x14x14xbf16>, %w: tensor<16x8x3x3xbf16>, %b: tensor<16xbf16>) -> tensor<?x16x7x7xbf16> {
  %0 = grove.conv2d %x, %w, %b {groups = 1 : i64, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x8x14x14xbf16>, tensor<16x8x3x3xbf16>, tensor<16xbf16>) -> tensor<?x16x7x7xbf16>
  return %0 : tensor<?x16x7x7xbf16>
}
