// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg=conv-weight-grad-library | FileCheck %s
// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg | FileCheck %s --check-prefix=GEMM

// convert-grove-to-linalg{conv-weight-grad-library} (NN.cpp): an f32
// grove.conv2d_weight_grad is one linalg.generic over 5-D grouped views of
// the padded input and the output gradient into a zero-filled
// G x Fg x Cg x Kh x Kw, collapsed to the weights' type; the strides and
// dilations are in the input's map. convert-linalg-to-blas turns it into the
// weight-gradient service (linalg-to-blas-conv-weight-grad.mlir). Without
// the option: im2col and one batched GEMM.

// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d0, d2, d6 * 2 + d3, d7 * 2 + d4)>
// CHECK-DAG: #[[DY:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d0, d1, d6, d7)>
// CHECK-DAG: #[[DW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @grouped_strided(
// CHECK-SAME: %[[IN:.*]]: tensor<?x8x9x9xf32>, %[[G:.*]]: tensor<?x6x4x4xf32>)
// CHECK: %[[P:.*]] = tensor.pad %[[IN]] low[0, 0, 1, 1] high[0, 0, 0, 0]
// CHECK: %[[X5:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [%{{.*}}, 2, 4, 10, 10]
// CHECK: %[[DY5:.*]] = tensor.expand_shape %[[G]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [%{{.*}}, 2, 3, 4, 4]
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3x4x3x3xf32>)
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[X]], #[[DY]], #[[DW]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[X5]], %[[DY5]] : {{.*}}) outs(%[[Z]] : tensor<2x3x4x3x3xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: tensor.collapse_shape %[[R]] {{\[\[}}0, 1], [2], [3], [4]] : tensor<2x3x4x3x3xf32> into tensor<6x4x3x3xf32>
// CHECK-NOT: linalg.batch_matmul
// GEMM-LABEL: func.func @grouped_strided(
// GEMM: linalg.batch_matmul
func.func @grouped_strided(%x: tensor<?x8x9x9xf32>, %dy: tensor<?x6x4x4xf32>) -> tensor<6x4x3x3xf32> {
  %0 = grove.conv2d_weight_grad %x, %dy {groups = 2 : i64, padding = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>} : (tensor<?x8x9x9xf32>, tensor<?x6x4x4xf32>) -> tensor<6x4x3x3xf32>
  return %0 : tensor<6x4x3x3xf32>
}

// -----

// Ungrouped and dilated: a unit group dimension, the dilation in the map.
// CHECK-DAG: #[[XD:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d0, d2, d6 + d3 * 2, d7 + d4 * 2)>
// CHECK-LABEL: func.func @dilated(
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4]] output_shape [2, 1, 3, 9, 9]
// CHECK: linalg.generic {indexing_maps = [#[[XD]],
// CHECK-SAME: outs(%{{.*}} : tensor<1x4x3x3x3xf32>)
func.func @dilated(%x: tensor<2x3x9x9xf32>, %dy: tensor<2x4x5x5xf32>) -> tensor<4x3x3x3xf32> {
  %0 = grove.conv2d_weight_grad %x, %dy {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 2, 2>} : (tensor<2x3x9x9xf32>, tensor<2x4x5x5xf32>) -> tensor<4x3x3x3xf32>
  return %0 : tensor<4x3x3x3xf32>
}

// -----

// Other element types keep their forms (bf16: loops accumulating in f32).
// CHECK-LABEL: func.func @bf16(
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x4x5x5xbf16>, tensor<2x3x7x7xbf16>) outs(%{{.*}} : tensor<4x3x3x3xf32>)
// CHECK: arith.extf
func.func @bf16(%x: tensor<2x3x7x7xbf16>, %dy: tensor<2x4x5x5xbf16>) -> tensor<4x3x3x3xbf16> {
  %0 = grove.conv2d_weight_grad %x, %dy {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} : (tensor<2x3x7x7xbf16>, tensor<2x4x5x5xbf16>) -> tensor<4x3x3x3xbf16>
  return %0 : tensor<4x3x3x3xbf16>
}
