// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg=conv-library | FileCheck %s
// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg="conv-library conv-per-image" | FileCheck %s --check-prefix=BOTH
// RUN: grove-opt %s -split-input-file --grove-to-host=conv-library | FileCheck %s --check-prefix=HOST

// convert-grove-to-linalg{conv-library} (NN.cpp): an f32 convolution other
// than a 1x1 GEMM is the padded input and linalg's named convolution into a
// zero-filled result, which convert-linalg-to-blas{target=host} turns into
// grove_rt_conv2d_f32 (oneDNN). It takes precedence over conv-per-image,
// which f16/bf16 keep; 1x1 convolutions stay batched GEMMs. grove-to-host
// sets it only with its conv-library option (grovec --conv-library): on
// ResNeSt-50 it measured no faster than im2col + GEMM (docs/passes.md).

// Grouped: input, weights and result as linalg's grouped views, no copy but
// the padding.
// CHECK-LABEL: func.func @grouped(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x64x56x56xf32>, %[[W:[^:]*]]: tensor<128x32x3x3xf32>)
// CHECK-NOT: scf.for
// CHECK: %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[XG:.*]] = tensor.expand_shape %[[P]] {{\[}}[0], [1, 2], [3], [4]] {{.*}} : tensor<?x64x58x58xf32> into tensor<?x2x32x58x58xf32>
// CHECK: %[[WG:.*]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2], [3], [4]] {{.*}} : tensor<128x32x3x3xf32> into tensor<2x64x32x3x3xf32>
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} -> tensor<?x2x64x56x56xf32>
// CHECK: %[[YG:.*]] = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%[[XG]], %[[WG]] : {{.*}}) outs(%[[Z]] : tensor<?x2x64x56x56xf32>)
// CHECK: %[[Y:.*]] = tensor.collapse_shape %[[YG]] {{\[}}[0], [1, 2], [3], [4]] : tensor<?x2x64x56x56xf32> into tensor<?x128x56x56xf32>
// CHECK: return %[[Y]]
// BOTH-LABEL: func.func @grouped(
// BOTH-NOT: scf.for
// BOTH: linalg.conv_2d_ngchw_gfchw
// BOTH-NOT: linalg.batch_matmul
// BOTH: return
// On the host the padding is folded into the call: nothing is copied, no
// loop runs, the call reads the function's input.
// HOST-LABEL: llvm.func internal @_grove_model_grouped(
// HOST-NOT: grove_rt_parallel_for
// HOST-NOT: llvm.br
// HOST: llvm.call @grove_rt_conv2d_f32(%arg0, %arg1,
// HOST-NOT: grove_rt_batch_matmul_f32
// HOST: llvm.return
func.func @grouped(%x: tensor<?x64x56x56xf32>, %w: tensor<128x32x3x3xf32>) -> tensor<?x128x56x56xf32> {
  %0 = grove.conv2d %x, %w {groups = 2 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x64x56x56xf32>, tensor<128x32x3x3xf32>) -> tensor<?x128x56x56xf32>
  return %0 : tensor<?x128x56x56xf32>
}

// -----

// Ungrouped, strided, with a bias: the named NCHW convolution, then the
// bias as its own generic.
// CHECK-LABEL: func.func @strided_bias(
// CHECK: tensor.pad
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK: linalg.generic
// CHECK: arith.addf
// HOST-LABEL: llvm.func internal @_grove_model_strided_bias(
// HOST: llvm.call @grove_rt_conv2d_f32
func.func @strided_bias(%x: tensor<?x3x224x224xf32>, %w: tensor<32x3x3x3xf32>, %b: tensor<32xf32>) -> tensor<?x32x112x112xf32> {
  %0 = grove.conv2d %x, %w, %b {groups = 1 : i64, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x3x224x224xf32>, tensor<32x3x3x3xf32>, tensor<32xf32>) -> tensor<?x32x112x112xf32>
  return %0 : tensor<?x32x112x112xf32>
}

// -----

// 1x1: still one batched GEMM with the weights shared (no library call).
// CHECK-LABEL: func.func @pointwise(
// CHECK-NOT: linalg.conv
// CHECK: linalg.batch_matmul
// HOST-LABEL: llvm.func internal @_grove_model_pointwise(
// HOST-NOT: grove_rt_conv2d_f32
// HOST: llvm.call @grove_rt_batch_matmul_f32
func.func @pointwise(%x: tensor<?x64x14x14xf32>, %w: tensor<256x64x1x1xf32>) -> tensor<?x256x14x14xf32> {
  %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x64x14x14xf32>, tensor<256x64x1x1xf32>) -> tensor<?x256x14x14xf32>
  return %0 : tensor<?x256x14x14xf32>
}

// -----

// bf16: im2col (one image at a time with conv-per-image), no library call.
// CHECK-LABEL: func.func @bf16(
// CHECK-NOT: linalg.conv
// CHECK: linalg.batch_matmul
// BOTH-LABEL: func.func @bf16(
// BOTH-NOT: linalg.conv
// BOTH: scf.for
// BOTH: linalg.batch_matmul
// HOST-LABEL: llvm.func internal @_grove_model_bf16(
// HOST-NOT: grove_rt_conv2d_f32
// HOST: llvm.return
func.func @bf16(%x: tensor<?x8x6x6xbf16>, %w: tensor<8x8x3x3xbf16>) -> tensor<?x8x6x6xbf16> {
  %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x8x6x6xbf16>, tensor<8x8x3x3xbf16>) -> tensor<?x8x6x6xbf16>
  return %0 : tensor<?x8x6x6xbf16>
}
