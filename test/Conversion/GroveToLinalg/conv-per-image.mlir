// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg=conv-per-image | FileCheck %s
// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg | FileCheck %s --check-prefix=BATCH
// RUN: grove-opt %s -split-input-file --grove-to-host | FileCheck %s --check-prefix=HOST
// RUN: grove-opt %s -split-input-file --grove-common | FileCheck %s --check-prefix=BUF

// convert-grove-to-linalg{conv-per-image} (NN.cpp): an im2col convolution
// runs in an scf.for over the (dynamic) batch: image n is sliced out, padded,
// unfolded and multiplied group by group, and written into block n of the
// result, so the unfolded copy is one image's (1 x 288 x 3136 here) and not
// the batch's. grove-to-host sets the option (and conv-library only when
// asked to: conv-library.mlir); grove-to-cuda does not (one batched GEMM
// per group there: test/Pipelines/grove-to-cuda-conv.mlir).
// CHECK-LABEL: func.func @grouped(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x64x56x56xf32>, %[[W:[^:]*]]: tensor<64x32x3x3xf32>)
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[INIT:.*]] = tensor.empty(%[[N]]) : tensor<?x64x56x56xf32>
// CHECK: %[[R:.*]] = scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (tensor<?x64x56x56xf32>) {
// CHECK: %[[IMG:.*]] = tensor.extract_slice %[[X]][%[[I]], 0, 0, 0] [1, 64, 56, 56] [1, 1, 1, 1] : tensor<?x64x56x56xf32> to tensor<1x64x56x56xf32>
// CHECK: tensor.pad %[[IMG]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// Each group's GEMM accumulates into its channel block of image n's block
// of the result (zero-filled there), so nothing copies GEMM results.
// CHECK: %[[OUT:.*]] = tensor.extract_slice %[[ACC]][%[[I]], 0, 0, 0] [1, 64, 56, 56] [1, 1, 1, 1] : tensor<?x64x56x56xf32> to tensor<1x64x56x56xf32>
// CHECK: %[[B0:.*]] = tensor.extract_slice %[[OUT]][0, 0, 0, 0] [1, 32, 56, 56]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x32x3x3x56x56xf32>)
// CHECK: %[[B0C:.*]] = tensor.collapse_shape %[[B0]] {{\[}}[0], [1], [2, 3]] : tensor<1x32x56x56xf32> into tensor<1x32x3136xf32>
// CHECK: %[[Z0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[B0C]] : tensor<1x32x3136xf32>)
// CHECK: %[[G0:.*]] = linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<32x288xf32>, tensor<1x288x3136xf32>) outs(%[[Z0]] : tensor<1x32x3136xf32>)
// CHECK: %[[E0:.*]] = tensor.expand_shape %[[G0]]
// CHECK: %[[OUT1:.*]] = tensor.insert_slice %[[E0]] into %[[OUT]][0, 0, 0, 0] [1, 32, 56, 56]
// CHECK: %[[B1:.*]] = tensor.extract_slice %[[OUT1]][0, 32, 0, 0] [1, 32, 56, 56]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x32x3x3x56x56xf32>)
// CHECK: %[[B1C:.*]] = tensor.collapse_shape %[[B1]]
// CHECK: %[[Z1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[B1C]] : tensor<1x32x3136xf32>)
// CHECK: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<32x288xf32>, tensor<1x288x3136xf32>) outs(%[[Z1]] : tensor<1x32x3136xf32>)
// CHECK: %[[OUT2:.*]] = tensor.insert_slice %{{.*}} into %[[OUT1]][0, 32, 0, 0] [1, 32, 56, 56]
// CHECK: %[[NEXT:.*]] = tensor.insert_slice %[[OUT2]] into %[[ACC]][%[[I]], 0, 0, 0] [1, 64, 56, 56] [1, 1, 1, 1] : tensor<1x64x56x56xf32> into tensor<?x64x56x56xf32>
// CHECK: scf.yield %[[NEXT]]
// CHECK: return %[[R]]
// Without the option: the whole batch at once.
// BATCH-LABEL: func.func @grouped(
// BATCH-NOT: scf.for
// BATCH: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x32x3x3x56x56xf32>)
// BATCH: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<32x288xf32>, tensor<?x288x3136xf32>)
// Bufferized, the GEMMs write through subviews of the result's buffer: the
// only copy left is the image into its padded buffer.
// BUF-LABEL: func.func @_grove_model_grouped(
// BUF: %[[Y:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?x64x56x56xf32>
// BUF: scf.for %[[I:.*]] =
// BUF: memref.copy
// BUF-NOT: memref.copy
// BUF: %[[IMG:.*]] = memref.subview %[[Y]][%[[I]], 0, 0, 0] [1, 64, 56, 56]
// BUF: %[[B0:.*]] = memref.subview %[[IMG]][0, 0, 0, 0] [1, 32, 56, 56]
// BUF: %[[B0C:.*]] = memref.collapse_shape %[[B0]]
// BUF: linalg.fill ins(%{{.*}} : f32) outs(%[[B0C]] :
// BUF: linalg.batch_matmul {{.*}} outs(%[[B0C]] :
// BUF: %[[B1:.*]] = memref.subview %[[IMG]][0, 32, 0, 0] [1, 32, 56, 56]
// BUF: %[[B1C:.*]] = memref.collapse_shape %[[B1]]
// BUF: linalg.fill ins(%{{.*}} : f32) outs(%[[B1C]] :
// BUF: linalg.batch_matmul {{.*}} outs(%[[B1C]] :
// BUF-NOT: memref.copy
// BUF-NOT: linalg.copy
// BUF: return %[[Y]]
// HOST-LABEL: llvm.func internal @_grove_model_grouped(
// HOST-NOT: grove_rt_conv2d_f32
// HOST: llvm.call @grove_rt_batch_matmul_f32
// HOST: llvm.call @grove_rt_batch_matmul_f32
// HOST: llvm.cond_br
func.func @grouped(%x: tensor<?x64x56x56xf32>, %w: tensor<64x32x3x3xf32>) -> tensor<?x64x56x56xf32> {
  %0 = grove.conv2d %x, %w {groups = 2 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x64x56x56xf32>, tensor<64x32x3x3xf32>) -> tensor<?x64x56x56xf32>
  return %0 : tensor<?x64x56x56xf32>
}

// -----

// Two convolutions in a row: the second loop's bound is the batch of the
// function's input, not a tensor.dim of the first loop's result (the pass
// resolves sizes through the loops, so later value-bounds queries, such as
// bufferization's slice analysis, do not walk back through every layer).
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x8x6x6xf32>
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %c0
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]] step
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]] step
// CHECK-NOT: tensor.dim
// CHECK: return
func.func @chain(%x: tensor<?x8x6x6xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<?x8x6x6xf32> {
  %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x6x6xf32>
  %1 = grove.conv2d %0, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x6x6xf32>
  return %1 : tensor<?x8x6x6xf32>
}
