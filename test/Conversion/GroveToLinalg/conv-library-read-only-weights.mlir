// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg="conv-per-image conv-library-read-only-weights" | FileCheck %s
// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg=conv-per-image | FileCheck %s --check-prefix=NONE

// convert-grove-to-linalg{conv-library-read-only-weights} (NN.cpp): an f32
// convolution whose weights are an entry's state argument without
// grove.writes takes conv-library's form (padded input, linalg's named
// convolution) at any image size: the host's convolution service keeps
// such weights in its own layouts across calls. Weights the entry writes,
// or that are not state, keep im2col + GEMM above the size rule.

// CHECK-LABEL: func.func @read_only(
// CHECK-NOT: scf.for
// CHECK: linalg.conv_2d_ngchw_gfchw
// CHECK-NOT: linalg.batch_matmul
// CHECK: return
// NONE-LABEL: func.func @read_only(
// NONE-NOT: linalg.conv_2d
// NONE: linalg.batch_matmul
module {
  grove.param @w : tensor<8x4x3x3xf32>
  func.func @read_only(%w: tensor<8x4x3x3xf32> {grove.state = @w}, %x: tensor<?x8x56x56xf32>) -> tensor<?x8x56x56xf32> {
    %0 = grove.conv2d %x, %w {groups = 2 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x8x56x56xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x56x56xf32>
    return %0 : tensor<?x8x56x56xf32>
  }
}

// -----

// The entry writes the weights (a train step): im2col + GEMM.
// CHECK-LABEL: func.func @written(
// CHECK-NOT: linalg.conv_2d
// CHECK: linalg.batch_matmul
// CHECK-NOT: linalg.conv_2d
// CHECK: return
module {
  grove.param @w : tensor<8x8x3x3xf32>
  func.func @written(%w: tensor<8x8x3x3xf32> {grove.state = @w, grove.writes}, %x: tensor<?x8x56x56xf32>) -> tensor<?x8x56x56xf32> {
    %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x8x56x56xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x56x56xf32>
    return %0 : tensor<?x8x56x56xf32>
  }
}

// -----

// Weights that are an input, not state: im2col + GEMM.
// CHECK-LABEL: func.func @input_weights(
// CHECK-NOT: linalg.conv_2d
// CHECK: linalg.batch_matmul
// CHECK-NOT: linalg.conv_2d
// CHECK: return
func.func @input_weights(%w: tensor<8x8x3x3xf32>, %x: tensor<?x8x56x56xf32>) -> tensor<?x8x56x56xf32> {
  %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x8x56x56xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x56x56xf32>
  return %0 : tensor<?x8x56x56xf32>
}

// -----

// Weights computed from state (a transform in the entry): not the state
// itself, so im2col + GEMM.
// CHECK-LABEL: func.func @derived(
// CHECK-NOT: linalg.conv_2d
// CHECK: linalg.batch_matmul
// CHECK-NOT: linalg.conv_2d
// CHECK: return
module {
  grove.param @w : tensor<8x8x3x3xf32>
  func.func @derived(%w: tensor<8x8x3x3xf32> {grove.state = @w}, %x: tensor<?x8x56x56xf32>) -> tensor<?x8x56x56xf32> {
    %n = grove.add %w, %w : (tensor<8x8x3x3xf32>, tensor<8x8x3x3xf32>) -> tensor<8x8x3x3xf32>
    %0 = grove.conv2d %x, %n {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x8x56x56xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x56x56xf32>
    return %0 : tensor<?x8x56x56xf32>
  }
}

// -----

// A private function is no entry: a train step that writes the state may
// call it, so its read-only argument does not count.
// CHECK-LABEL: func.func private @helper(
// CHECK-NOT: linalg.conv_2d
// CHECK: linalg.batch_matmul
// CHECK-NOT: linalg.conv_2d
// CHECK: return
module {
  grove.param @w : tensor<8x8x3x3xf32>
  func.func private @helper(%w: tensor<8x8x3x3xf32> {grove.state = @w}, %x: tensor<?x8x56x56xf32>) -> tensor<?x8x56x56xf32> {
    %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x8x56x56xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x56x56xf32>
    return %0 : tensor<?x8x56x56xf32>
  }
}

// -----

// A 1x1 convolution with read-only weights takes the library form on a
// 7x7 image (a narrow GEMM), and stays one batched GEMM on a larger one.
// CHECK-LABEL: func.func @pointwise(
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: linalg.batch_matmul
// CHECK-NOT: linalg.conv_2d
// CHECK: return
// NONE-LABEL: func.func @pointwise(
// NONE-NOT: linalg.conv_2d
module {
  grove.param @a : tensor<16x8x1x1xf32>
  grove.param @b : tensor<16x8x1x1xf32>
  func.func @pointwise(%a: tensor<16x8x1x1xf32> {grove.state = @a}, %b: tensor<16x8x1x1xf32> {grove.state = @b}, %x: tensor<?x8x7x7xf32>, %y: tensor<?x8x8x8xf32>) -> (tensor<?x16x7x7xf32>, tensor<?x16x8x8xf32>) {
    %0 = grove.conv2d %x, %a {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x7x7xf32>, tensor<16x8x1x1xf32>) -> tensor<?x16x7x7xf32>
    %1 = grove.conv2d %y, %b {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x8x8xf32>, tensor<16x8x1x1xf32>) -> tensor<?x16x8x8xf32>
    return %0, %1 : tensor<?x16x7x7xf32>, tensor<?x16x8x8xf32>
  }
}
