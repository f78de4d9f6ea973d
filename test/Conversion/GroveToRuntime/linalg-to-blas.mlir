// RUN: grove-opt %s -split-input-file --convert-linalg-to-blas | FileCheck %s

// convert-linalg-to-blas (LinalgToBlas.cpp) on hand-written memref IR:
// batched matmuls, the beta = 0 fold of a preceding zero fill, and the ops
// the pass must leave alone. The 2-D linalg.matmul cases are in
// linalg-to-blas-matmul.mlir.

// CHECK-LABEL: func.func @batch_matmul_zero_fill
// CHECK-SAME: (%[[A:.*]]: memref<2x4x8xf32>, %[[B:.*]]: memref<2x8x16xf32>, %[[C:.*]]: memref<2x4x16xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[TA:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[ALPHA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[CA:.*]] = memref.cast %[[A]] : memref<2x4x8xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT: %[[CB:.*]] = memref.cast %[[B]] : memref<2x8x16xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT: %[[CC:.*]] = memref.cast %[[C]] : memref<2x4x16xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT: call @grove_rt_batch_matmul_f32(%[[TA]], %[[TB]], %[[ALPHA]], %[[BETA]], %[[CA]], %[[CB]], %[[CC]])
// CHECK-SAME: : (i32, i32, f32, f32, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>) -> ()
// CHECK-NOT: linalg.batch_matmul
// CHECK: func.func private @grove_rt_batch_matmul_f32(i32, i32, f32, f32, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>)
func.func @batch_matmul_zero_fill(%a: memref<2x4x8xf32>, %b: memref<2x8x16xf32>, %c: memref<2x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2x4x16xf32>)
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%c : memref<2x4x16xf32>)
  return
}

// -----

// Transposes come from the maps; a non-zero fill is kept and accumulated
// into (beta = 1).
// CHECK-LABEL: func.func @batch_matmul_transposed_nonzero_fill
// CHECK-SAME: (%[[A:.*]]: memref<2x8x4xf32>, %[[B:.*]]: memref<2x16x8xf32>, %[[C:.*]]: memref<2x4x16xf32>)
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: linalg.fill ins(%[[ONE]] : f32) outs(%[[C]] : memref<2x4x16xf32>)
// CHECK-NEXT: %[[TA:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[ALPHA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[CA:.*]] = memref.cast %[[A]]
// CHECK-NEXT: %[[CB:.*]] = memref.cast %[[B]]
// CHECK-NEXT: %[[CC:.*]] = memref.cast %[[C]]
// CHECK-NEXT: call @grove_rt_batch_matmul_f32(%[[TA]], %[[TB]], %[[ALPHA]], %[[BETA]], %[[CA]], %[[CB]], %[[CC]])
func.func @batch_matmul_transposed_nonzero_fill(%a: memref<2x8x4xf32>, %b: memref<2x16x8xf32>, %c: memref<2x4x16xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<2x4x16xf32>)
  linalg.batch_matmul
      indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>,
                       affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>,
                       affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%a, %b : memref<2x8x4xf32>, memref<2x16x8xf32>) outs(%c : memref<2x4x16xf32>)
  return
}

// -----

// Only the lhs transposed.
// CHECK-LABEL: func.func @batch_matmul_transpose_lhs
// CHECK: %[[TA:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 0 : i32
// CHECK: call @grove_rt_batch_matmul_f32(%[[TA]], %[[TB]],
func.func @batch_matmul_transpose_lhs(%a: memref<2x8x4xf32>, %b: memref<2x8x16xf32>, %c: memref<2x4x16xf32>) {
  linalg.batch_matmul
      indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>,
                       affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>,
                       affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%a, %b : memref<2x8x4xf32>, memref<2x8x16xf32>) outs(%c : memref<2x4x16xf32>)
  return
}

// -----

// A shared (2-D) rhs becomes a rank-3 view with batch stride 0, the batch
// size read from the output.
// CHECK-LABEL: func.func @batch_matmul_shared_rhs
// CHECK-SAME: (%[[A:.*]]: memref<?x4x8xf32>, %[[B:.*]]: memref<8x16xf32>, %[[C:.*]]: memref<?x4x16xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[TA:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[ALPHA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[BATCH:.*]] = memref.dim %[[C]], %[[C0]] : memref<?x4x16xf32>
// CHECK-NEXT: memref.extract_strided_metadata %[[B]] : memref<8x16xf32>
// CHECK-NEXT: %[[VIEW:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [%[[BATCH]], 8, 16], strides: [0, 16, 1] : memref<8x16xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT: %[[CA:.*]] = memref.cast %[[A]]
// CHECK-NEXT: %[[CC:.*]] = memref.cast %[[C]]
// CHECK-NEXT: call @grove_rt_batch_matmul_f32(%[[TA]], %[[TB]], %[[ALPHA]], %[[BETA]], %[[CA]], %[[VIEW]], %[[CC]])
func.func @batch_matmul_shared_rhs(%a: memref<?x4x8xf32>, %b: memref<8x16xf32>, %c: memref<?x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x4x16xf32>)
  linalg.batch_matmul
      indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>,
                       affine_map<(d0, d1, d2, d3) -> (d3, d2)>,
                       affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%a, %b : memref<?x4x8xf32>, memref<8x16xf32>) outs(%c : memref<?x4x16xf32>)
  return
}

// -----

// Operands already of the runtime's type are passed as they are.
// CHECK-LABEL: func.func @batch_matmul_no_cast
// CHECK-SAME: (%[[A:.*]]: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, %[[B:.*]]: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, %[[C:.*]]: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>)
// CHECK-NOT: memref.cast
// CHECK: call @grove_rt_batch_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[A]], %[[B]], %[[C]])
func.func @batch_matmul_no_cast(%a: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, %b: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, %c: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>) {
  linalg.batch_matmul ins(%a, %b : memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>) outs(%c : memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>)
  return
}

// -----

// The zero fill must be of the output and right before the matmul; a fill
// of another buffer, or one with an op in between, is kept and beta is 1.
// CHECK-LABEL: func.func @batch_matmul_fill_elsewhere
// CHECK-SAME: (%[[A:.*]]: memref<2x4x8xf32>, %[[B:.*]]: memref<2x8x16xf32>, %[[C:.*]]: memref<2x4x16xf32>, %[[D:.*]]: memref<2x4x16xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[D]] : memref<2x4x16xf32>)
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @grove_rt_batch_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[BETA]],
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[C]] : memref<2x4x16xf32>)
// CHECK-NEXT: memref.copy
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BETA2:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @grove_rt_batch_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[BETA2]],
func.func @batch_matmul_fill_elsewhere(%a: memref<2x4x8xf32>, %b: memref<2x8x16xf32>, %c: memref<2x4x16xf32>, %d: memref<2x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%d : memref<2x4x16xf32>)
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%c : memref<2x4x16xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<2x4x16xf32>)
  memref.copy %d, %c : memref<2x4x16xf32> to memref<2x4x16xf32>
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%c : memref<2x4x16xf32>)
  return
}

// -----

// Several calls share one declaration, and a declaration already in the
// module is reused.
// CHECK-LABEL: func.func private @grove_rt_batch_matmul_f32(
// CHECK-LABEL: func.func @batch_matmul_twice
// CHECK: call @grove_rt_batch_matmul_f32(
// CHECK: call @grove_rt_batch_matmul_f32(
// CHECK-NOT: func.func private @grove_rt_batch_matmul_f32
func.func private @grove_rt_batch_matmul_f32(i32, i32, f32, f32, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>)
func.func @batch_matmul_twice(%a: memref<2x4x8xf32>, %b: memref<2x8x16xf32>, %c: memref<2x4x16xf32>, %d: memref<2x4x16xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%c : memref<2x4x16xf32>)
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%d : memref<2x4x16xf32>)
  return
}

//===----------------------------------------------------------------------===//
// Left alone
//===----------------------------------------------------------------------===//

// -----

// f16 (no host service; f32 and bf16 have one): loops.
// CHECK-LABEL: func.func @matmul_f16
// CHECK: linalg.fill
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xf16>, memref<8x16xf16>) outs(%{{.*}} : memref<4x16xf16>)
// CHECK-NOT: call
// CHECK-NOT: grove_rt
func.func @matmul_f16(%a: memref<4x8xf16>, %b: memref<8x16xf16>, %c: memref<4x16xf16>) {
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%c : memref<4x16xf16>)
  linalg.matmul ins(%a, %b : memref<4x8xf16>, memref<8x16xf16>) outs(%c : memref<4x16xf16>)
  return
}

// -----

// CHECK-LABEL: func.func @batch_matmul_f16
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : memref<2x4x8xf16>, memref<2x8x16xf16>) outs(%{{.*}} : memref<2x4x16xf16>)
// CHECK-NOT: grove_rt
func.func @batch_matmul_f16(%a: memref<2x4x8xf16>, %b: memref<2x8x16xf16>, %c: memref<2x4x16xf16>) {
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xf16>, memref<2x8x16xf16>) outs(%c : memref<2x4x16xf16>)
  return
}

// -----

// Mixed precision (f16 inputs, f32 accumulator).
// CHECK-LABEL: func.func @batch_matmul_mixed
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : memref<2x4x8xf16>, memref<2x8x16xf16>) outs(%{{.*}} : memref<2x4x16xf32>)
// CHECK-NOT: grove_rt
func.func @batch_matmul_mixed(%a: memref<2x4x8xf16>, %b: memref<2x8x16xf16>, %c: memref<2x4x16xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xf16>, memref<2x8x16xf16>) outs(%c : memref<2x4x16xf32>)
  return
}

// -----

// Maps BLAS cannot express: a broadcast lhs row, a transposed output, a
// shared lhs.
// CHECK-LABEL: func.func @matmul_broadcast_lhs
// CHECK: linalg.matmul indexing_maps
// CHECK-NOT: grove_rt
func.func @matmul_broadcast_lhs(%a: memref<8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul
      indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>,
                       affine_map<(d0, d1, d2) -> (d2, d1)>,
                       affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : memref<8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @matmul_transposed_output
// CHECK: linalg.matmul indexing_maps
// CHECK-NOT: grove_rt
func.func @matmul_transposed_output(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<16x4xf32>) {
  linalg.matmul
      indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                       affine_map<(d0, d1, d2) -> (d2, d1)>,
                       affine_map<(d0, d1, d2) -> (d1, d0)>]
      ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<16x4xf32>)
  return
}

// -----

// A shared lhs (a 1x1 convolution's weights against every image of the
// batch): a rank-3 view of it with batch stride 0, like a shared rhs.
// CHECK-LABEL: func.func @batch_matmul_shared_lhs
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<2x8x16xf32>, %[[C:.*]]: memref<2x4x16xf32>)
// CHECK: %[[N:.*]] = memref.dim %[[C]], %{{.*}} : memref<2x4x16xf32>
// CHECK: %[[AV:.*]] = memref.reinterpret_cast %[[A]] to offset: [0], sizes: [%[[N]], 4, 8], strides: [0, 8, 1]
// CHECK: call @grove_rt_batch_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[AV]],
// CHECK-NOT: linalg.batch_matmul
func.func @batch_matmul_shared_lhs(%a: memref<4x8xf32>, %b: memref<2x8x16xf32>, %c: memref<2x4x16xf32>) {
  linalg.batch_matmul
      indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d3)>,
                       affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>,
                       affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%a, %b : memref<4x8xf32>, memref<2x8x16xf32>) outs(%c : memref<2x4x16xf32>)
  return
}

// -----

// Tensor semantics: not bufferized yet.
// CHECK-LABEL: func.func @batch_matmul_tensor
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<2x8x16xf32>)
// CHECK-NOT: grove_rt
func.func @batch_matmul_tensor(%a: tensor<2x4x8xf32>, %b: tensor<2x8x16xf32>, %c: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%c : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}

