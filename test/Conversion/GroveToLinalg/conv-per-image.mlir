// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg=conv-per-image | FileCheck %s
// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg | FileCheck %s --check-prefix=BATCH
// RUN: grove-opt %s -split-input-file --grove-to-host | FileCheck %s --check-prefix=HOST

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
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x32x3x3x56x56xf32>)
// CHECK: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<32x288xf32>, tensor<1x288x3136xf32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x32x3x3x56x56xf32>)
// CHECK: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<32x288xf32>, tensor<1x288x3136xf32>)
// CHECK: %[[NEXT:.*]] = tensor.insert_slice %{{.*}} into %[[ACC]][%[[I]], 0, 0, 0] [1, 64, 56, 56] [1, 1, 1, 1] : tensor<1x64x56x56xf32> into tensor<?x64x56x56xf32>
// CHECK: scf.yield %[[NEXT]]
// CHECK: return %[[R]]
// Without the option: the whole batch at once.
// BATCH-LABEL: func.func @grouped(
// BATCH-NOT: scf.for
// BATCH: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x32x3x3x56x56xf32>)
// BATCH: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<32x288xf32>, tensor<?x288x3136xf32>)
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
