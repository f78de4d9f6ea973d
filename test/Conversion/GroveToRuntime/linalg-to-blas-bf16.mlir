// RUN: grove-opt %s -split-input-file --convert-linalg-to-blas | FileCheck %s

// convert-linalg-to-blas (LinalgToBlas.cpp) on bf16 matmuls for the host:
// the services are looked up by family and element type, so bf16 ones
// become grove_rt_matmul_bf16 / grove_rt_batch_matmul_bf16 (abi.h; they
// accumulate in f32), with alpha and beta still f32. The f32 cases are in
// linalg-to-blas-matmul.mlir and linalg-to-blas.mlir.

// A bf16 zero fill right before: beta = 0 and the fill is gone.
// CHECK-LABEL: func.func @matmul_zero_fill
// CHECK-SAME: (%[[A:.*]]: memref<4x8xbf16>, %[[B:.*]]: memref<8x16xbf16>, %[[C:.*]]: memref<4x16xbf16>)
// CHECK-NOT: linalg.fill
// CHECK: %[[TA:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[ALPHA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[CA:.*]] = memref.cast %[[A]] : memref<4x8xbf16> to memref<?x?xbf16, strided<[?, ?], offset: ?>>
// CHECK-NEXT: %[[CB:.*]] = memref.cast %[[B]] : memref<8x16xbf16> to memref<?x?xbf16, strided<[?, ?], offset: ?>>
// CHECK-NEXT: %[[CC:.*]] = memref.cast %[[C]] : memref<4x16xbf16> to memref<?x?xbf16, strided<[?, ?], offset: ?>>
// CHECK-NEXT: call @grove_rt_matmul_bf16(%[[TA]], %[[TB]], %[[ALPHA]], %[[BETA]], %[[CA]], %[[CB]], %[[CC]])
// CHECK-SAME: : (i32, i32, f32, f32, memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?x?xbf16, strided<[?, ?], offset: ?>>) -> ()
// CHECK-NOT: linalg.matmul
// CHECK: func.func private @grove_rt_matmul_bf16(i32, i32, f32, f32, memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?x?xbf16, strided<[?, ?], offset: ?>>)
func.func @matmul_zero_fill(%a: memref<4x8xbf16>, %b: memref<8x16xbf16>, %c: memref<4x16xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%c : memref<4x16xbf16>)
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xbf16>)
  return
}

// -----

// transpose_rhs (the dense-layer form), accumulating: beta = 1.
// CHECK-LABEL: func.func @matmul_transpose_rhs
// CHECK: %[[TA:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 1 : i32
// CHECK-NEXT: arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @grove_rt_matmul_bf16(%[[TA]], %[[TB]], %{{.*}}, %[[BETA]],
// CHECK-NOT: linalg.matmul
func.func @matmul_transpose_rhs(%a: memref<?x8xbf16>, %b: memref<16x8xbf16>, %c: memref<?x16xbf16>) {
  linalg.matmul
      indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                       affine_map<(d0, d1, d2) -> (d1, d2)>,
                       affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : memref<?x8xbf16>, memref<16x8xbf16>) outs(%c : memref<?x16xbf16>)
  return
}

// -----

// Batched, the lhs transposed by its map.
// CHECK-LABEL: func.func @batch_matmul_transpose_lhs
// CHECK-SAME: (%[[A:.*]]: memref<2x8x4xbf16>, %[[B:.*]]: memref<2x8x16xbf16>, %[[C:.*]]: memref<2x4x16xbf16>)
// CHECK-NOT: linalg.fill
// CHECK: %[[TA:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[ALPHA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[CA:.*]] = memref.cast %[[A]] : memref<2x8x4xbf16> to memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT: %[[CB:.*]] = memref.cast %[[B]] : memref<2x8x16xbf16> to memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT: %[[CC:.*]] = memref.cast %[[C]] : memref<2x4x16xbf16> to memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT: call @grove_rt_batch_matmul_bf16(%[[TA]], %[[TB]], %[[ALPHA]], %[[BETA]], %[[CA]], %[[CB]], %[[CC]])
// CHECK-SAME: : (i32, i32, f32, f32, memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>) -> ()
// CHECK-NOT: linalg.batch_matmul
// CHECK: func.func private @grove_rt_batch_matmul_bf16(i32, i32, f32, f32, memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>)
func.func @batch_matmul_transpose_lhs(%a: memref<2x8x4xbf16>, %b: memref<2x8x16xbf16>, %c: memref<2x4x16xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%c : memref<2x4x16xbf16>)
  linalg.batch_matmul
      indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>,
                       affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>,
                       affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%a, %b : memref<2x8x4xbf16>, memref<2x8x16xbf16>) outs(%c : memref<2x4x16xbf16>)
  return
}

// -----

// A shared (2-D) bf16 rhs: a rank-3 view with batch stride 0.
// CHECK-LABEL: func.func @batch_matmul_shared_rhs
// CHECK-SAME: (%[[A:.*]]: memref<?x4x8xbf16>, %[[B:.*]]: memref<8x16xbf16>, %[[C:.*]]: memref<?x4x16xbf16>)
// CHECK: %[[BATCH:.*]] = memref.dim %[[C]], %{{.*}} : memref<?x4x16xbf16>
// CHECK: %[[VIEW:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [%[[BATCH]], 8, 16], strides: [0, 16, 1] : memref<8x16xbf16> to memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>
// CHECK: call @grove_rt_batch_matmul_bf16(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[VIEW]], %{{.*}})
func.func @batch_matmul_shared_rhs(%a: memref<?x4x8xbf16>, %b: memref<8x16xbf16>, %c: memref<?x4x16xbf16>) {
  linalg.batch_matmul
      indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>,
                       affine_map<(d0, d1, d2, d3) -> (d3, d2)>,
                       affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%a, %b : memref<?x4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<?x4x16xbf16>)
  return
}

// -----

// f32 and bf16 in one module: one declaration per service.
// CHECK-LABEL: func.func @f32_and_bf16
// CHECK: call @grove_rt_matmul_f32(
// CHECK: call @grove_rt_matmul_bf16(
// CHECK: call @grove_rt_batch_matmul_bf16(
// CHECK: call @grove_rt_matmul_bf16(
// CHECK-DAG: func.func private @grove_rt_matmul_f32(
// CHECK-DAG: func.func private @grove_rt_matmul_bf16(
// CHECK-DAG: func.func private @grove_rt_batch_matmul_bf16(
// CHECK-NOT: func.func private
func.func @f32_and_bf16(%fa: memref<4x8xf32>, %fb: memref<8x16xf32>, %fc: memref<4x16xf32>,
                        %a: memref<4x8xbf16>, %b: memref<8x16xbf16>, %c: memref<4x16xbf16>,
                        %ba: memref<2x4x8xbf16>, %bb: memref<2x8x16xbf16>, %bc: memref<2x4x16xbf16>) {
  linalg.matmul ins(%fa, %fb : memref<4x8xf32>, memref<8x16xf32>) outs(%fc : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xbf16>)
  linalg.batch_matmul ins(%ba, %bb : memref<2x4x8xbf16>, memref<2x8x16xbf16>) outs(%bc : memref<2x4x16xbf16>)
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xbf16>)
  return
}

// -----

// Mixed precision (bf16 inputs, an f32 accumulator): no service takes it,
// so it stays linalg.
// CHECK-LABEL: func.func @matmul_bf16_into_f32
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xbf16>, memref<8x16xbf16>) outs(%{{.*}} : memref<4x16xf32>)
// CHECK-NOT: grove_rt
func.func @matmul_bf16_into_f32(%a: memref<4x8xbf16>, %b: memref<8x16xbf16>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xf32>)
  return
}
