// RUN: grove-opt %s -split-input-file --convert-linalg-to-blas | FileCheck %s

// The 2-D linalg.matmul cases of convert-linalg-to-blas (LinalgToBlas.cpp).

// A zero fill right before: beta = 0 and the fill is gone.
// CHECK-LABEL: func.func @matmul_zero_fill
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<8x16xf32>, %[[C:.*]]: memref<4x16xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[TA:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[ALPHA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[CA:.*]] = memref.cast %[[A]] : memref<4x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-NEXT: %[[CB:.*]] = memref.cast %[[B]] : memref<8x16xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-NEXT: %[[CC:.*]] = memref.cast %[[C]] : memref<4x16xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-NEXT: call @grove_rt_matmul_f32(%[[TA]], %[[TB]], %[[ALPHA]], %[[BETA]], %[[CA]], %[[CB]], %[[CC]])
// CHECK-SAME: : (i32, i32, f32, f32, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) -> ()
// CHECK-NOT: linalg.matmul
// CHECK: func.func private @grove_rt_matmul_f32(i32, i32, f32, f32, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>)
func.func @matmul_zero_fill(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// transpose_rhs (the dense-layer form), accumulating: beta = 1.
// CHECK-LABEL: func.func @matmul_transpose_rhs
// CHECK-SAME: (%[[A:.*]]: memref<?x8xf32>, %[[B:.*]]: memref<16x8xf32>, %[[C:.*]]: memref<?x16xf32>)
// CHECK: %[[TA:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[ALPHA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[CA:.*]] = memref.cast %[[A]] : memref<?x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-NEXT: %[[CB:.*]] = memref.cast %[[B]] : memref<16x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-NEXT: %[[CC:.*]] = memref.cast %[[C]] : memref<?x16xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-NEXT: call @grove_rt_matmul_f32(%[[TA]], %[[TB]], %[[ALPHA]], %[[BETA]], %[[CA]], %[[CB]], %[[CC]])
func.func @matmul_transpose_rhs(%a: memref<?x8xf32>, %b: memref<16x8xf32>, %c: memref<?x16xf32>) {
  linalg.matmul
      indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                       affine_map<(d0, d1, d2) -> (d1, d2)>,
                       affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : memref<?x8xf32>, memref<16x8xf32>) outs(%c : memref<?x16xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @matmul_transpose_lhs
// CHECK: %[[TA:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 0 : i32
// CHECK: call @grove_rt_matmul_f32(%[[TA]], %[[TB]],
func.func @matmul_transpose_lhs(%a: memref<8x4xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul
      indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                       affine_map<(d0, d1, d2) -> (d2, d1)>,
                       affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : memref<8x4xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @matmul_transpose_both
// CHECK: %[[TA:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 1 : i32
// CHECK: call @grove_rt_matmul_f32(%[[TA]], %[[TB]],
func.func @matmul_transpose_both(%a: memref<8x4xf32>, %b: memref<16x8xf32>, %c: memref<4x16xf32>) {
  linalg.matmul
      indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                       affine_map<(d0, d1, d2) -> (d1, d2)>,
                       affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : memref<8x4xf32>, memref<16x8xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// A non-zero fill is kept and accumulated into.
// CHECK-LABEL: func.func @matmul_nonzero_fill
// CHECK-SAME: (%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<8x16xf32>, %[[C:.*]]: memref<4x16xf32>)
// CHECK: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: linalg.fill ins(%[[HALF]] : f32) outs(%[[C]] : memref<4x16xf32>)
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @grove_rt_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[BETA]],
func.func @matmul_nonzero_fill(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  %half = arith.constant 0.5 : f32
  linalg.fill ins(%half : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// An accumulation into an existing output (no fill): beta = 1.
// CHECK-LABEL: func.func @matmul_accumulate
// CHECK-SAME: (%[[A:.*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>, %[[B:.*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>, %[[C:.*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>)
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NOT: memref.cast
// CHECK-NEXT: call @grove_rt_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[BETA]], %[[A]], %[[B]], %[[C]])
func.func @matmul_accumulate(%a: memref<?x?xf32, strided<[?, ?], offset: ?>>, %b: memref<?x?xf32, strided<[?, ?], offset: ?>>, %c: memref<?x?xf32, strided<[?, ?], offset: ?>>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) outs(%c : memref<?x?xf32, strided<[?, ?], offset: ?>>)
  return
}

// -----

// 2-D and batched calls in one module: one declaration each.
// CHECK-LABEL: func.func @matmul_and_batch_matmul
// CHECK: call @grove_rt_matmul_f32(
// CHECK: call @grove_rt_batch_matmul_f32(
// CHECK: call @grove_rt_matmul_f32(
// CHECK-DAG: func.func private @grove_rt_matmul_f32(i32, i32, f32, f32, memref<?x?xf32,
// CHECK-DAG: func.func private @grove_rt_batch_matmul_f32(i32, i32, f32, f32, memref<?x?x?xf32,
// CHECK-NOT: func.func private
func.func @matmul_and_batch_matmul(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>,
                                   %ba: memref<2x4x8xf32>, %bb: memref<2x8x16xf32>, %bc: memref<2x4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.batch_matmul ins(%ba, %bb : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%bc : memref<2x4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}
