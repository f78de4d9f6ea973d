// RUN: grove-opt %s -split-input-file --convert-linalg-to-blas=target=cuda | FileCheck %s
// RUN: not grove-opt %s --convert-linalg-to-blas=target=tpu 2>&1 | FileCheck %s --check-prefix=TARGET

// convert-linalg-to-blas with target=cuda (LinalgToBlas.cpp): f32, f16 and
// bf16 matmuls become grove_rt_cuda_gemm_<type> (abi.h), always the
// strided-batched form on rank-3 views, with f32 alpha and beta. The host
// target is checked in linalg-to-blas.mlir and linalg-to-blas-matmul.mlir.

// An unknown target is refused by the option's parser, with the targets.
// TARGET: for the --target option: 'tpu' is not one of host or cuda

// A 2-D matmul is a batch of one: each operand is reinterpreted as
// [1, rows, cols] with batch stride 0, offset, sizes and strides taken from
// its own metadata (constants where static). The zero fill before it becomes beta = 0 and is erased.
// CHECK-LABEL: func.func @matmul_f32_zero_fill
// CHECK-SAME: (%[[A:.*]]: memref<?x8xf32>, %[[B:.*]]: memref<8x16xf32>, %[[C:.*]]: memref<?x16xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[TA:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[ALPHA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %{{.*}}, %{{.*}}, %[[ASIZES:[a-z0-9_]+]]:2, %{{.*}}:2 = memref.extract_strided_metadata %[[A]] : memref<?x8xf32>
// CHECK-NEXT: %[[VA:.*]] = memref.reinterpret_cast %[[A]] to offset: [0], sizes: [%[[ONE]], %[[ASIZES]]#0, 8], strides: [0, 8, 1] : memref<?x8xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT: memref.extract_strided_metadata %[[B]] : memref<8x16xf32>
// CHECK-NEXT: %[[VB:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [%[[ONE]], 8, 16], strides: [0, 16, 1] : memref<8x16xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT: %{{.*}}, %{{.*}}, %[[CSIZES:[a-z0-9_]+]]:2, %{{.*}}:2 = memref.extract_strided_metadata %[[C]] : memref<?x16xf32>
// CHECK-NEXT: %[[VC:.*]] = memref.reinterpret_cast %[[C]] to offset: [0], sizes: [%[[ONE]], %[[CSIZES]]#0, 16], strides: [0, 16, 1] : memref<?x16xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT: call @grove_rt_cuda_gemm_f32(%[[TA]], %[[TB]], %[[ALPHA]], %[[BETA]], %[[VA]], %[[VB]], %[[VC]])
// CHECK-SAME: : (i32, i32, f32, f32, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>) -> ()
// CHECK-NEXT: return
// CHECK-NOT: linalg.matmul
// CHECK-NOT: grove_rt_matmul_f32
// CHECK: func.func private @grove_rt_cuda_gemm_f32(i32, i32, f32, f32, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>)
func.func @matmul_f32_zero_fill(%a: memref<?x8xf32>, %b: memref<8x16xf32>, %c: memref<?x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x16xf32>)
  linalg.matmul ins(%a, %b : memref<?x8xf32>, memref<8x16xf32>) outs(%c : memref<?x16xf32>)
  return
}

// -----

// f16 operands, the rhs transposed by its indexing map (the dense-layer
// form): transB = 1. No fill: accumulate, beta = 1. alpha and beta stay f32
// (f32 accumulation).
// CHECK-LABEL: func.func @matmul_f16_transpose_rhs
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf16>, %[[B:.*]]: memref<16x8xf16>, %[[C:.*]]: memref<4x16xf16>)
// CHECK-NEXT: %[[TA:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[ALPHA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[VA:.*]] = memref.reinterpret_cast %[[A]] {{.*}} : memref<4x8xf16> to memref<?x?x?xf16, strided<[?, ?, ?], offset: ?>>
// CHECK: %[[VB:.*]] = memref.reinterpret_cast %[[B]] {{.*}} : memref<16x8xf16> to memref<?x?x?xf16, strided<[?, ?, ?], offset: ?>>
// CHECK: %[[VC:.*]] = memref.reinterpret_cast %[[C]] {{.*}} : memref<4x16xf16> to memref<?x?x?xf16, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT: call @grove_rt_cuda_gemm_f16(%[[TA]], %[[TB]], %[[ALPHA]], %[[BETA]], %[[VA]], %[[VB]], %[[VC]])
// CHECK-SAME: : (i32, i32, f32, f32, memref<?x?x?xf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf16, strided<[?, ?, ?], offset: ?>>) -> ()
// CHECK-NOT: linalg.matmul
// CHECK: func.func private @grove_rt_cuda_gemm_f16(i32, i32, f32, f32, memref<?x?x?xf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf16, strided<[?, ?, ?], offset: ?>>)
func.func @matmul_f16_transpose_rhs(%a: memref<4x8xf16>, %b: memref<16x8xf16>, %c: memref<4x16xf16>) {
  linalg.matmul
      indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                       affine_map<(d0, d1, d2) -> (d1, d2)>,
                       affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : memref<4x8xf16>, memref<16x8xf16>) outs(%c : memref<4x16xf16>)
  return
}

// -----

// bf16, lhs transposed, with a bf16 zero fill folded into beta = 0.
// CHECK-LABEL: func.func @matmul_bf16_transpose_lhs_zero_fill
// CHECK-NOT: linalg.fill
// CHECK: %[[TA:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[ALPHA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: call @grove_rt_cuda_gemm_bf16(%[[TA]], %[[TB]], %[[ALPHA]], %[[BETA]],
// CHECK-SAME: memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>
// CHECK-NOT: linalg.
// CHECK: func.func private @grove_rt_cuda_gemm_bf16(i32, i32, f32, f32, memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>
func.func @matmul_bf16_transpose_lhs_zero_fill(%a: memref<8x4xbf16>, %b: memref<8x16xbf16>, %c: memref<4x16xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%c : memref<4x16xbf16>)
  linalg.matmul
      indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                       affine_map<(d0, d1, d2) -> (d2, d1)>,
                       affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : memref<8x4xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xbf16>)
  return
}

// -----

// A batched matmul is already rank 3: the operands are only cast to the
// fully dynamic strided type. A non-zero fill is kept (beta = 1).
// CHECK-LABEL: func.func @batch_matmul_nonzero_fill
// CHECK-SAME: (%[[A:.*]]: memref<?x4x8xf32>, %[[B:.*]]: memref<?x8x16xf32>, %[[C:.*]]: memref<?x4x16xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[C]] : memref<?x4x16xf32>)
// CHECK-NEXT: %[[TA:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[ALPHA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NOT: memref.reinterpret_cast
// CHECK-NEXT: %[[CA:.*]] = memref.cast %[[A]] : memref<?x4x8xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT: %[[CB:.*]] = memref.cast %[[B]] : memref<?x8x16xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT: %[[CC:.*]] = memref.cast %[[C]] : memref<?x4x16xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT: call @grove_rt_cuda_gemm_f32(%[[TA]], %[[TB]], %[[ALPHA]], %[[BETA]], %[[CA]], %[[CB]], %[[CC]])
// CHECK-NOT: linalg.batch_matmul
// CHECK-NOT: grove_rt_batch_matmul_f32
func.func @batch_matmul_nonzero_fill(%a: memref<?x4x8xf32>, %b: memref<?x8x16xf32>, %c: memref<?x4x16xf32>) {
  %half = arith.constant 0.5 : f32
  linalg.fill ins(%half : f32) outs(%c : memref<?x4x16xf32>)
  linalg.batch_matmul ins(%a, %b : memref<?x4x8xf32>, memref<?x8x16xf32>) outs(%c : memref<?x4x16xf32>)
  return
}

// -----

// A batched matmul with a shared 2-D rhs (3-D x 2-D): the rhs view repeats
// it over the output's batch with stride 0.
// CHECK-LABEL: func.func @batch_matmul_shared_rhs
// CHECK-SAME: (%[[A:.*]]: memref<?x4x8xf32>, %[[B:.*]]: memref<8x16xf32>, %[[C:.*]]: memref<?x4x16xf32>)
// CHECK: %[[TA:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 0 : i32
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[BATCH:.*]] = memref.dim %[[C]], %[[C0]] : memref<?x4x16xf32>
// CHECK-NEXT: memref.extract_strided_metadata %[[B]] : memref<8x16xf32>
// CHECK-NEXT: %[[VB:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [%[[BATCH]], 8, 16], strides: [0, 16, 1]
// CHECK-NEXT: %[[CA:.*]] = memref.cast %[[A]]
// CHECK-NEXT: %[[CC:.*]] = memref.cast %[[C]]
// CHECK-NEXT: call @grove_rt_cuda_gemm_f32(%[[TA]], %[[TB]], %{{.*}}, %{{.*}}, %[[CA]], %[[VB]], %[[CC]])
func.func @batch_matmul_shared_rhs(%a: memref<?x4x8xf32>, %b: memref<8x16xf32>, %c: memref<?x4x16xf32>) {
  linalg.batch_matmul
      indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>,
                       affine_map<(d0, d1, d2, d3) -> (d3, d2)>,
                       affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%a, %b : memref<?x4x8xf32>, memref<8x16xf32>) outs(%c : memref<?x4x16xf32>)
  return
}

// -----

// A batched matmul with both operands transposed by their maps.
// CHECK-LABEL: func.func @batch_matmul_transposed
// CHECK: %[[TA:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[TB:.*]] = arith.constant 1 : i32
// CHECK: call @grove_rt_cuda_gemm_f32(%[[TA]], %[[TB]],
func.func @batch_matmul_transposed(%a: memref<2x8x4xf32>, %b: memref<2x16x8xf32>, %c: memref<2x4x16xf32>) {
  linalg.batch_matmul
      indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>,
                       affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>,
                       affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%a, %b : memref<2x8x4xf32>, memref<2x16x8xf32>) outs(%c : memref<2x4x16xf32>)
  return
}

// -----

// Two element types in one module: one declaration per type, shared by
// 2-D and batched calls.
// CHECK-LABEL: func.func @mixed_module
// CHECK: call @grove_rt_cuda_gemm_f32(
// CHECK: call @grove_rt_cuda_gemm_f16(
// CHECK: call @grove_rt_cuda_gemm_f32(
// CHECK-DAG: func.func private @grove_rt_cuda_gemm_f32(
// CHECK-DAG: func.func private @grove_rt_cuda_gemm_f16(
// CHECK-NOT: func.func private
func.func @mixed_module(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>,
                        %ha: memref<4x8xf16>, %hb: memref<8x16xf16>, %hc: memref<4x16xf16>,
                        %ba: memref<2x4x8xf32>, %bb: memref<2x8x16xf32>, %bc: memref<2x4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%ha, %hb : memref<4x8xf16>, memref<8x16xf16>) outs(%hc : memref<4x16xf16>)
  linalg.batch_matmul ins(%ba, %bb : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%bc : memref<2x4x16xf32>)
  return
}

//===----------------------------------------------------------------------===//
// Left alone
//===----------------------------------------------------------------------===//

// -----

// Mixed element types (f16 inputs, f32 accumulator): stays linalg (a
// kernel, later), its fill too.
// CHECK-LABEL: func.func @matmul_mixed_types
// CHECK: linalg.fill
// CHECK-NEXT: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xf16>, memref<8x16xf16>) outs(%{{.*}} : memref<4x16xf32>)
// CHECK-NOT: grove_rt
func.func @matmul_mixed_types(%a: memref<4x8xf16>, %b: memref<8x16xf16>, %c: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf16>, memref<8x16xf16>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// No cuBLAS service for integers or f64.
// CHECK-LABEL: func.func @matmul_i32_f64
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xi32>, memref<8x16xi32>)
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : memref<2x4x8xf64>, memref<2x8x16xf64>)
// CHECK-NOT: grove_rt
func.func @matmul_i32_f64(%a: memref<4x8xi32>, %b: memref<8x16xi32>, %c: memref<4x16xi32>,
                          %da: memref<2x4x8xf64>, %db: memref<2x8x16xf64>, %dc: memref<2x4x16xf64>) {
  linalg.matmul ins(%a, %b : memref<4x8xi32>, memref<8x16xi32>) outs(%c : memref<4x16xi32>)
  linalg.batch_matmul ins(%da, %db : memref<2x4x8xf64>, memref<2x8x16xf64>) outs(%dc : memref<2x4x16xf64>)
  return
}

// -----

// Maps cuBLAS cannot express (a transposed output) stay linalg too.
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
