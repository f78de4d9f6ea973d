// RUN: grove-opt %s --convert-grove-to-linalg | FileCheck %s

// The lowerings of the ops VJPs build (Elementwise/DataMovement/NN.cpp):
// one linalg.generic each, plus an argmax for the max pool.
// reverse reads index 2 - i along the reversed axes.
// CHECK-DAG: #[[REV:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, -d2 + 2, -d3 + 2)>
// The weight gradient in f32: the padded input's patches gathered once
// (col[g, n, y, x, c, i, j] = x[n, g * Cg + c, y + i, x + j]), dy regrouped
// as G x Fg x N x Oh x Ow, then one batched GEMM over the groups, whose
// contraction (N * Oh * Ow) checks that the two batches agree.
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0 * 3 + d4, d2 + d5, d3 + d6)>
// CHECK-DAG: #[[DYG:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, d0 * 4 + d1, d3, d4)>
// CHECK-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d3, d5 * 2 + d4)>
// The bf16 weight gradient's loops (@weight_grad_bf16 below).
// CHECK-DAG: #[[DY:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>
// CHECK-DAG: #[[XP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, (d0 floordiv 2) * 3 + d1, d2 + d5, d3 + d6)>
// CHECK-LABEL: func.func @gradient_ops
// CHECK: linalg.generic {indexing_maps = [#[[REV]], #{{.*}}]
// CHECK: %[[PAD:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[C:.*]] = linalg.generic {indexing_maps = [#[[COL]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[PAD]] : tensor<?x3x10x10xf32>) outs(%{{.*}} : tensor<1x?x8x8x3x3x3xf32>)
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#[[DYG]], #{{.*}}], {{.*}} outs(%{{.*}} : tensor<1x4x?x8x8xf32>)
// CHECK-DAG: %[[L:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0], [1], [2, 3, 4]] : tensor<1x4x?x8x8xf32> into tensor<1x4x?xf32>
// CHECK-DAG: %[[R:.*]] = tensor.collapse_shape %[[C]] {{\[}}[0], [1, 2, 3], [4, 5, 6]] : tensor<1x?x8x8x3x3x3xf32> into tensor<1x?x27xf32>
// CHECK: grove.agree_dims {{.*}} "gradient-ops.mlir:{{.*}} grove.matmul contracting dimensions"
// CHECK: linalg.batch_matmul ins({{.*}} : tensor<1x4x?xf32>, tensor<1x?x27xf32>) outs({{.*}} : tensor<1x4x27xf32>)
// CHECK: tensor.expand_shape {{.*}} output_shape [4, 3, 3, 3]
// The max pool's winners: strictly greater (the first maximum) or NaN.
// CHECK: %[[ARG:.*]]:2 = linalg.generic {indexing_maps = [#[[WIN]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf uno
// CHECK: arith.ori
// CHECK: -> (tensor<?x3x4x4xf32>, tensor<?x3x4x4xi32>)
// Then a gather per input element. 2x2 windows at stride 2 tile the
// input: one candidate, the window h / 2 at offset h % 2 (unsigned), whose
// winner's index is compared with the offset.
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x3x8x8xf32>)
// CHECK-NOT: arith.divsi
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK: tensor.extract %{{.*}}[
// CHECK: tensor.extract %[[ARG]]#1[
// CHECK: arith.cmpi eq
// CHECK-NOT: tensor.extract %[[ARG]]#1[
// CHECK: linalg.yield
// The average pool: each gathered gradient divided by its window's count.
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x3x8x8xf32>)
// CHECK: tensor.extract
// CHECK: arith.sitofp
// CHECK: arith.divf
// Overlapping 3x3 windows at stride 2: every offset (i, j) is a candidate
// at ((h + 1 - i) / 2, ...) where that divides and is in range.
// CHECK: %[[ARG3:.*]]:2 = linalg.generic
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x3x8x8xf32>)
// CHECK-COUNT-9: tensor.extract %[[ARG3]]#1[
// CHECK-NOT: tensor.extract %[[ARG3]]#1[
// CHECK: linalg.yield
func.func @gradient_ops(%x: tensor<?x3x8x8xf32>, %dy: tensor<?x4x8x8xf32>, %w: tensor<4x3x3x3xf32>, %p: tensor<?x3x4x4xf32>) -> (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>, tensor<?x3x8x8xf32>, tensor<?x3x8x8xf32>, tensor<?x3x8x8xf32>) {
  %r = grove.reverse %w [2, 3] : tensor<4x3x3x3xf32>
  %dw = grove.conv2d_weight_grad %x, %dy {groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<?x4x8x8xf32>) -> tensor<4x3x3x3xf32>
  %mx = grove.max_pool2d_grad %x, %p {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<?x3x8x8xf32>, tensor<?x3x4x4xf32>) -> tensor<?x3x8x8xf32>
  %av = grove.avg_pool2d_grad %x, %p {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, count_include_pad} : (tensor<?x3x8x8xf32>, tensor<?x3x4x4xf32>) -> tensor<?x3x8x8xf32>
  %mo = grove.max_pool2d_grad %x, %p {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x3x8x8xf32>, tensor<?x3x4x4xf32>) -> tensor<?x3x8x8xf32>
  return %r, %dw, %mx, %av, %mo : tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>, tensor<?x3x8x8xf32>, tensor<?x3x8x8xf32>, tensor<?x3x8x8xf32>
}

// In bf16 (an f32 accumulator) the weight gradient stays one loop nest:
// dy at (n, f, y, x) times the padded input at (n, group(f) * Cg + c,
// y + i, x + j), the batch and positions reduced, then narrowed.
// CHECK-LABEL: func.func @weight_grad_bf16
// CHECK: %[[PADB:.*]] = tensor.pad
// CHECK: linalg.generic {indexing_maps = [#[[DY]], #[[XP]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%{{.*}}, %[[PADB]] :
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: -> tensor<4x3x3x3xf32>
// CHECK: arith.truncf
// CHECK: -> tensor<4x3x3x3xbf16>
func.func @weight_grad_bf16(%x: tensor<?x6x8x8xbf16>, %dy: tensor<?x4x8x8xbf16>) -> tensor<4x3x3x3xbf16> {
  %dw = grove.conv2d_weight_grad %x, %dy {groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x6x8x8xbf16>, tensor<?x4x8x8xbf16>) -> tensor<4x3x3x3xbf16>
  return %dw : tensor<4x3x3x3xbf16>
}

// A pool with its winners is the argmax generic alone (both results); the
// gradient that reads them searches no window again.
// CHECK-LABEL: func.func @pool_with_indices
// CHECK: %[[BOTH:.*]]:2 = linalg.generic
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<?x3x4x4xf32>, tensor<?x3x4x4xi32>)
// CHECK: arith.cmpf uno
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x3x8x8xf32>)
// CHECK: tensor.extract %[[BOTH]]#1[
// CHECK-NOT: arith.cmpf uno
// CHECK: return %[[BOTH]]#0
func.func @pool_with_indices(%x: tensor<?x3x8x8xf32>, %dy: tensor<?x3x4x4xf32>) -> (tensor<?x3x4x4xf32>, tensor<?x3x8x8xf32>) {
  %y, %i = grove.max_pool2d_with_indices %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<?x3x8x8xf32>) -> (tensor<?x3x4x4xf32>, tensor<?x3x4x4xi32>)
  %dx = grove.max_pool2d_grad %x, %dy indices %i {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<?x3x8x8xf32>, tensor<?x3x4x4xf32>, tensor<?x3x4x4xi32>) -> tensor<?x3x8x8xf32>
  return %y, %dx : tensor<?x3x4x4xf32>, tensor<?x3x8x8xf32>
}

// A batch of 0: both results are empty tensors, nothing is computed.
// CHECK-LABEL: func.func @pool_with_indices_empty
// CHECK-NOT: linalg.generic
// CHECK-DAG: tensor.empty() : tensor<0x3x4x4xf32>
// CHECK-DAG: tensor.empty() : tensor<0x3x4x4xi32>
// CHECK: return
func.func @pool_with_indices_empty(%x: tensor<0x3x8x8xf32>) -> (tensor<0x3x4x4xf32>, tensor<0x3x4x4xi32>) {
  %y, %i = grove.max_pool2d_with_indices %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<0x3x8x8xf32>) -> (tensor<0x3x4x4xf32>, tensor<0x3x4x4xi32>)
  return %y, %i : tensor<0x3x4x4xf32>, tensor<0x3x4x4xi32>
}
