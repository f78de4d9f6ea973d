// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg | FileCheck %s

// grove.matmul (Contraction.cpp): transposes live in the indexing maps of
// linalg.matmul / linalg.batch_matmul, the accumulator is a zero fill.

//===----------------------------------------------------------------------===//
// 2x2: linalg.matmul
//===----------------------------------------------------------------------===//

// No transpose: the default maps, which the printer elides.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[EMPTY:.*]] = bufferization.alloc_tensor() : tensor<4x16xf32>
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK: %[[R:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[ACC]] : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK: return %[[R]]
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = grove.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// The zero takes the element type.
// CHECK-LABEL: func.func @matmul_f16
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f16
// CHECK: %[[EMPTY:.*]] = bufferization.alloc_tensor() : tensor<4x16xf16>
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f16) outs(%[[EMPTY]] : tensor<4x16xf16>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<8x16xf16>) outs(%[[ACC]] : tensor<4x16xf16>)
func.func @matmul_f16(%a: tensor<4x8xf16>, %b: tensor<8x16xf16>) -> tensor<4x16xf16> {
  %0 = grove.matmul %a, %b : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
  return %0 : tensor<4x16xf16>
}

// -----

// CHECK-DAG: #[[$A_T:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[$B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: func.func @matmul_transpose_lhs
// CHECK-SAME: (%[[A:.*]]: tensor<8x4xf32>, %[[B:.*]]: tensor<8x16xf32>)
// CHECK: %[[EMPTY:.*]] = bufferization.alloc_tensor() : tensor<4x16xf32>
// CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<4x16xf32>)
// CHECK: linalg.matmul indexing_maps = [#[[$A_T]], #[[$B]], #[[$C]]]
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<8x4xf32>, tensor<8x16xf32>) outs(%[[ACC]] : tensor<4x16xf32>)
func.func @matmul_transpose_lhs(%a: tensor<8x4xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = grove.matmul %a, %b {transpose_lhs} : (tensor<8x4xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// A dynamic M is read from the lhs.
// CHECK-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$B_T:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: func.func @matmul_transpose_rhs
// CHECK-SAME: (%[[A:.*]]: tensor<?x8xf32>, %[[B:.*]]: tensor<16x8xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[M:.*]] = tensor.dim %[[A]], %[[C0]] : tensor<?x8xf32>
// CHECK: %[[EMPTY:.*]] = bufferization.alloc_tensor(%[[M]]) : tensor<?x16xf32>
// CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<?x16xf32>)
// CHECK: linalg.matmul indexing_maps = [#[[$A]], #[[$B_T]], #[[$C]]]
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<?x8xf32>, tensor<16x8xf32>) outs(%[[ACC]] : tensor<?x16xf32>)
func.func @matmul_transpose_rhs(%a: tensor<?x8xf32>, %b: tensor<16x8xf32>) -> tensor<?x16xf32> {
  %0 = grove.matmul %a, %b {transpose_rhs} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// Both transposed: M is the lhs's last dimension, N the rhs's first. K is
// static: nothing to check.
// CHECK-DAG: #[[$A_T:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[$B_T:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: func.func @matmul_transpose_both
// CHECK-SAME: (%[[A:.*]]: tensor<8x?xf32>, %[[B:.*]]: tensor<?x8xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[M:.*]] = tensor.dim %[[A]], %[[C1]] : tensor<8x?xf32>
// CHECK-DAG: %[[N:.*]] = tensor.dim %[[B]], %[[C0]] : tensor<?x8xf32>
// CHECK-NOT: grove.agree_dims
// CHECK: %[[EMPTY:.*]] = bufferization.alloc_tensor(%[[M]], %[[N]]) : tensor<?x?xf32>
// CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<?x?xf32>)
// CHECK: linalg.matmul indexing_maps = [#[[$A_T]], #[[$B_T]], #[[$C]]]
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<8x?xf32>, tensor<?x8xf32>) outs(%[[ACC]] : tensor<?x?xf32>)
func.func @matmul_transpose_both(%a: tensor<8x?xf32>, %b: tensor<?x8xf32>) -> tensor<?x?xf32> {
  %0 = grove.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<8x?xf32>, tensor<?x8xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// A dynamic contracting dimension on both sides is checked at run time and
// both operands are cut to it.
// CHECK-LABEL: func.func @matmul_dynamic_k
// CHECK-SAME: (%[[A:.*]]: tensor<4x?xf32>, %[[B:.*]]: tensor<?x16xf32>)
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[KA:.*]] = tensor.dim %[[A]], %[[C1]] : tensor<4x?xf32>
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[KB:.*]] = tensor.dim %[[B]], %[[C0]] : tensor<?x16xf32>
// CHECK-NEXT: %[[K:.*]] = grove.agree_dims %[[KA]], %[[KB]], "{{.*}}contraction.mlir:{{[0-9]+}}:{{[0-9]+}}: grove.matmul contracting dimensions" : index
// CHECK: %[[AS:.*]] = tensor.extract_slice %[[A]][0, 0] [4, %[[K]]] [1, 1] : tensor<4x?xf32> to tensor<4x?xf32>
// CHECK: %[[BS:.*]] = tensor.extract_slice %[[B]][0, 0] [%[[K]], 16] [1, 1] : tensor<?x16xf32> to tensor<?x16xf32>
// CHECK: %[[EMPTY:.*]] = bufferization.alloc_tensor() : tensor<4x16xf32>
// CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<4x16xf32>)
// CHECK: linalg.matmul ins(%[[AS]], %[[BS]] : tensor<4x?xf32>, tensor<?x16xf32>) outs(%[[ACC]] : tensor<4x16xf32>)
func.func @matmul_dynamic_k(%a: tensor<4x?xf32>, %b: tensor<?x16xf32>) -> tensor<4x16xf32> {
  %0 = grove.matmul %a, %b : (tensor<4x?xf32>, tensor<?x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// Transposed operands: K is the lhs's first and the rhs's last dimension.
// CHECK-LABEL: func.func @matmul_dynamic_k_transposed
// CHECK-SAME: (%[[A:.*]]: tensor<?x4xf32>, %[[B:.*]]: tensor<16x?xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[KA:.*]] = tensor.dim %[[A]], %[[C0]] : tensor<?x4xf32>
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[KB:.*]] = tensor.dim %[[B]], %[[C1]] : tensor<16x?xf32>
// CHECK-NEXT: %[[K:.*]] = grove.agree_dims %[[KA]], %[[KB]], "{{.*}}: grove.matmul contracting dimensions" : index
// CHECK: %[[AS:.*]] = tensor.extract_slice %[[A]][0, 0] [%[[K]], 4] [1, 1]
// CHECK: %[[BS:.*]] = tensor.extract_slice %[[B]][0, 0] [16, %[[K]]] [1, 1]
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[AS]], %[[BS]] : tensor<?x4xf32>, tensor<16x?xf32>)
func.func @matmul_dynamic_k_transposed(%a: tensor<?x4xf32>, %b: tensor<16x?xf32>) -> tensor<4x16xf32> {
  %0 = grove.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<?x4xf32>, tensor<16x?xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

//===----------------------------------------------------------------------===//
// 3x3: linalg.batch_matmul
//===----------------------------------------------------------------------===//

// -----

// Dynamic batch sizes on both sides are checked at run time; both operands
// are cut to the agreed batch, which sizes the accumulator.
// CHECK-LABEL: func.func @batch_matmul
// CHECK-SAME: (%[[A:.*]]: tensor<?x4x8xf32>, %[[B:.*]]: tensor<?x8x16xf32>)
// CHECK: %[[BA:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x4x8xf32>
// CHECK: %[[BB:.*]] = tensor.dim %[[B]], %{{.*}} : tensor<?x8x16xf32>
// CHECK-NEXT: %[[BATCH:.*]] = grove.agree_dims %[[BA]], %[[BB]], "{{.*}}contraction.mlir:{{[0-9]+}}:{{[0-9]+}}: grove.matmul batch dimensions" : index
// CHECK: %[[AS:.*]] = tensor.extract_slice %[[A]][0, 0, 0] [%[[BATCH]], 4, 8] [1, 1, 1] : tensor<?x4x8xf32> to tensor<?x4x8xf32>
// CHECK: %[[BS:.*]] = tensor.extract_slice %[[B]][0, 0, 0] [%[[BATCH]], 8, 16] [1, 1, 1] : tensor<?x8x16xf32> to tensor<?x8x16xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[EMPTY:.*]] = bufferization.alloc_tensor(%[[BATCH]]) : tensor<?x4x16xf32>
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<?x4x16xf32>)
// CHECK: %[[R:.*]] = linalg.batch_matmul ins(%[[AS]], %[[BS]] : tensor<?x4x8xf32>, tensor<?x8x16xf32>) outs(%[[ACC]] : tensor<?x4x16xf32>)
// CHECK: return %[[R]]
func.func @batch_matmul(%a: tensor<?x4x8xf32>, %b: tensor<?x8x16xf32>) -> tensor<?x4x16xf32> {
  %0 = grove.matmul %a, %b : (tensor<?x4x8xf32>, tensor<?x8x16xf32>) -> tensor<?x4x16xf32>
  return %0 : tensor<?x4x16xf32>
}

// -----

// CHECK-DAG: #[[$A_T:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[$B_T:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @batch_matmul_transpose_both
// CHECK-SAME: (%[[A:.*]]: tensor<2x8x4xf32>, %[[B:.*]]: tensor<2x16x8xf32>)
// CHECK: %[[EMPTY:.*]] = bufferization.alloc_tensor() : tensor<2x4x16xf32>
// CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<2x4x16xf32>)
// CHECK: linalg.batch_matmul indexing_maps = [#[[$A_T]], #[[$B_T]], #[[$C]]]
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<2x8x4xf32>, tensor<2x16x8xf32>) outs(%[[ACC]] : tensor<2x4x16xf32>)
func.func @batch_matmul_transpose_both(%a: tensor<2x8x4xf32>, %b: tensor<2x16x8xf32>) -> tensor<2x4x16xf32> {
  %0 = grove.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<2x8x4xf32>, tensor<2x16x8xf32>) -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

//===----------------------------------------------------------------------===//
// 3x2: a shared rhs
//===----------------------------------------------------------------------===//

// -----

// The rhs map has no batch dimension: no copy of the rhs.
// CHECK-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$B_SHARED:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @shared_rhs
// CHECK-SAME: (%[[A:.*]]: tensor<?x4x8xf32>, %[[B:.*]]: tensor<8x16xf32>)
// CHECK-NOT: linalg.broadcast
// CHECK-NOT: grove.agree_dims
// CHECK: %[[BATCH:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x4x8xf32>
// CHECK: %[[EMPTY:.*]] = bufferization.alloc_tensor(%[[BATCH]]) : tensor<?x4x16xf32>
// CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<?x4x16xf32>)
// CHECK-NOT: linalg.broadcast
// CHECK: linalg.batch_matmul indexing_maps = [#[[$A]], #[[$B_SHARED]], #[[$C]]]
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<?x4x8xf32>, tensor<8x16xf32>) outs(%[[ACC]] : tensor<?x4x16xf32>)
func.func @shared_rhs(%a: tensor<?x4x8xf32>, %b: tensor<8x16xf32>) -> tensor<?x4x16xf32> {
  %0 = grove.matmul %a, %b : (tensor<?x4x8xf32>, tensor<8x16xf32>) -> tensor<?x4x16xf32>
  return %0 : tensor<?x4x16xf32>
}

// -----

// A transposed lhs still shares the rhs.
// CHECK-DAG: #[[$A_T:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[$B_SHARED:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @shared_rhs_transpose_lhs
// CHECK-SAME: (%[[A:.*]]: tensor<?x8x4xf32>, %[[B:.*]]: tensor<8x16xf32>)
// CHECK-NOT: linalg.broadcast
// CHECK: linalg.batch_matmul indexing_maps = [#[[$A_T]], #[[$B_SHARED]], #[[$C]]]
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<?x8x4xf32>, tensor<8x16xf32>)
// CHECK-SAME: -> tensor<?x4x16xf32>
func.func @shared_rhs_transpose_lhs(%a: tensor<?x8x4xf32>, %b: tensor<8x16xf32>) -> tensor<?x4x16xf32> {
  %0 = grove.matmul %a, %b {transpose_lhs} : (tensor<?x8x4xf32>, tensor<8x16xf32>) -> tensor<?x4x16xf32>
  return %0 : tensor<?x4x16xf32>
}

// -----

// linalg rejects a map that both broadcasts and transposes: the shared rhs
// is transposed once (not copied per batch) and then shared through the
// broadcast map.
// CHECK-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$B:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @shared_rhs_transposed
// CHECK-SAME: (%[[A:.*]]: tensor<?x4x8xf32>, %[[B:.*]]: tensor<16x8xf32>)
// CHECK: %[[TEMPTY:.*]] = tensor.empty() : tensor<8x16xf32>
// CHECK: %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<16x8xf32>) outs(%[[TEMPTY]] : tensor<8x16xf32>) permutation = [1, 0]
// CHECK-NOT: linalg.broadcast
// CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x4x16xf32>)
// CHECK: linalg.batch_matmul indexing_maps = [#[[$A]], #[[$B]], #[[$C]]]
// CHECK-SAME: ins(%[[A]], %[[BT]] : tensor<?x4x8xf32>, tensor<8x16xf32>) outs(%[[ACC]] : tensor<?x4x16xf32>)
func.func @shared_rhs_transposed(%a: tensor<?x4x8xf32>, %b: tensor<16x8xf32>) -> tensor<?x4x16xf32> {
  %0 = grove.matmul %a, %b {transpose_rhs} : (tensor<?x4x8xf32>, tensor<16x8xf32>) -> tensor<?x4x16xf32>
  return %0 : tensor<?x4x16xf32>
}

// -----

// Static batch: the accumulator is static too.
// CHECK-LABEL: func.func @shared_rhs_transposed_static
// CHECK: linalg.transpose ins(%{{.*}} : tensor<16x8xf32>)
// CHECK: %[[EMPTY:.*]] = bufferization.alloc_tensor() : tensor<3x4x16xf32>
// CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<3x4x16xf32>)
// CHECK: linalg.batch_matmul
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<3x4x8xf32>, tensor<8x16xf32>) outs(%[[ACC]] : tensor<3x4x16xf32>)
func.func @shared_rhs_transposed_static(%a: tensor<3x4x8xf32>, %b: tensor<16x8xf32>) -> tensor<3x4x16xf32> {
  %0 = grove.matmul %a, %b {transpose_rhs} : (tensor<3x4x8xf32>, tensor<16x8xf32>) -> tensor<3x4x16xf32>
  return %0 : tensor<3x4x16xf32>
}
