// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg="conv-per-image conv-library-max-positions=784" | FileCheck %s
// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg=conv-per-image | FileCheck %s --check-prefix=NONE
// RUN: grove-opt %s -split-input-file --grove-to-host | FileCheck %s --check-prefix=HOST
// RUN: grove-opt %s -split-input-file --grove-to-host=conv-library-max-positions=0 | FileCheck %s --check-prefix=HOST0

// convert-grove-to-linalg{conv-library-max-positions=N} (NN.cpp): an f32
// convolution whose output has at most N positions per channel (Oh·Ow)
// takes conv-library's form (padded input, linalg's named convolution),
// a larger one im2col + GEMM; grove-to-host sets N = 784 (28x28), where
// oneDNN's blocked kernels measured faster than narrow per-image GEMMs.

// 28x28 = 784: the library form.
// CHECK-LABEL: func.func @at_limit(
// CHECK-NOT: scf.for
// CHECK: linalg.conv_2d_ngchw_gfchw
// CHECK-NOT: linalg.batch_matmul
// CHECK: return
// NONE-LABEL: func.func @at_limit(
// NONE: scf.for
// NONE-NOT: linalg.conv_2d
// NONE: linalg.batch_matmul
// HOST-LABEL: llvm.func internal @_grove_model_at_limit(
// HOST: llvm.call @grove_rt_conv2d_f32(
// HOST-NOT: grove_rt_batch_matmul_f32
// HOST: llvm.return
// HOST0-LABEL: llvm.func internal @_grove_model_at_limit(
// HOST0-NOT: grove_rt_conv2d_f32
// HOST0: llvm.call @grove_rt_batch_matmul_f32
// HOST0-NOT: grove_rt_conv2d_f32
// HOST0: llvm.return
func.func @at_limit(%x: tensor<?x8x28x28xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<?x8x28x28xf32> {
  %0 = grove.conv2d %x, %w {groups = 2 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x8x28x28xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x28x28xf32>
  return %0 : tensor<?x8x28x28xf32>
}

// -----

// 28x29 = 812 positions: im2col + GEMM, one image at a time.
// CHECK-LABEL: func.func @above_limit(
// CHECK: scf.for
// CHECK-NOT: linalg.conv_2d
// CHECK: linalg.batch_matmul
// CHECK: return
// HOST-LABEL: llvm.func internal @_grove_model_above_limit(
// HOST-NOT: grove_rt_conv2d_f32
// HOST: llvm.call @grove_rt_batch_matmul_f32
// HOST-NOT: grove_rt_conv2d_f32
// HOST: llvm.return
func.func @above_limit(%x: tensor<?x8x28x29xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<?x8x28x29xf32> {
  %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x8x28x29xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x28x29xf32>
  return %0 : tensor<?x8x28x29xf32>
}

// -----

// A large input, strided down to 7x7 = 49: the output decides.
// CHECK-LABEL: func.func @strided_to_small(
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<4> : tensor<2xi64>}
// CHECK-NOT: linalg.batch_matmul
func.func @strided_to_small(%x: tensor<?x3x28x28xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x7x7xf32> {
  %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 4, 4>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x3x28x28xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x7x7xf32>
  return %0 : tensor<?x4x7x7xf32>
}

// -----

// Not f32 (the host service is f32 only): im2col + GEMM however small.
// CHECK-LABEL: func.func @small_bf16(
// CHECK-NOT: linalg.conv_2d
// CHECK: linalg.batch_matmul
// CHECK-NOT: linalg.conv_2d
// CHECK: return
func.func @small_bf16(%x: tensor<?x4x6x6xbf16>, %w: tensor<4x4x3x3xbf16>) -> tensor<?x4x6x6xbf16> {
  %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x4x6x6xbf16>, tensor<4x4x3x3xbf16>) -> tensor<?x4x6x6xbf16>
  return %0 : tensor<?x4x6x6xbf16>
}

// -----

// A 1x1 convolution stays one batched GEMM with shared weights.
// CHECK-LABEL: func.func @pointwise_small(
// CHECK-NOT: linalg.conv_2d
// CHECK: linalg.batch_matmul
// HOST-LABEL: llvm.func internal @_grove_model_pointwise_small(
// HOST-NOT: grove_rt_conv2d_f32
// HOST: llvm.call @grove_rt_batch_matmul_f32
func.func @pointwise_small(%x: tensor<?x8x7x7xf32>, %w: tensor<16x8x1x1xf32>) -> tensor<?x16x7x7xf32> {
  %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x7x7xf32>, tensor<16x8x1x1xf32>) -> tensor<?x16x7x7xf32>
  return %0 : tensor<?x16x7x7xf32>
}
