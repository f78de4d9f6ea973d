// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg=pool-grad-phases | FileCheck %s
// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg | FileCheck %s --check-prefix=GATHER

// convert-grove-to-linalg{pool-grad-phases} (NN.cpp): the gradient of a pool
// whose windows overlap, on static images, by stride phases. A 3x3 stride-2
// pool padded by 1: input rows 2a hold window a only, rows 2a + 1 windows a
// and a + 1, so the four phases read 1, 2, 2 and 4 taps of the output
// gradient, zero-padded by one more in front (every map then has an offset),
// and are inserted into the result with stride 2. The max pool's taps
// compare the winner with their window offset (i*3 + j: 4 for the phase
// (0, 0), then 3 and 5, 1 and 7, 0, 2, 6 and 8). Without the option: one
// gather over the input.

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[T11:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 + 1, d3 + 1)>
// CHECK-DAG: #[[T12:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 + 1, d3 + 2)>
// CHECK-DAG: #[[T21:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 + 2, d3 + 1)>
// CHECK-DAG: #[[T22:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 + 2, d3 + 2)>
// CHECK-LABEL: func.func @max_overlapping(
// CHECK-SAME: %[[X:.*]]: tensor<?x4x8x8xf32>, %[[DY:.*]]: tensor<?x4x4x4xf32>, %[[W:.*]]: tensor<?x4x4x4xi32>)
// CHECK: %[[G:.*]] = tensor.pad %[[DY]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[WP:.*]] = tensor.pad %[[W]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %c-1_i32 : i32
// CHECK: %[[P00:.*]] = linalg.generic {indexing_maps = [#[[T11]], #[[T11]], #[[ID]]]{{.*}} ins(%[[G]], %[[WP]] : tensor<?x4x6x6xf32>, tensor<?x4x6x6xi32>) outs(%{{.*}} : tensor<?x4x4x4xf32>)
// CHECK: arith.constant 4 : i32
// CHECK: %[[R0:.*]] = tensor.insert_slice %[[P00]] into %{{.*}}[0, 0, 0, 0] [%{{.*}}, 4, 4, 4] [1, 1, 2, 2]
// CHECK: %[[P01:.*]] = linalg.generic {indexing_maps = [#[[T11]], #[[T11]], #[[T12]], #[[T12]], #[[ID]]]
// CHECK: %[[R1:.*]] = tensor.insert_slice %[[P01]] into %[[R0]][0, 0, 0, 1] [%{{.*}}, 4, 4, 4] [1, 1, 2, 2]
// CHECK: %[[P10:.*]] = linalg.generic {indexing_maps = [#[[T11]], #[[T11]], #[[T21]], #[[T21]], #[[ID]]]
// CHECK: %[[R2:.*]] = tensor.insert_slice %[[P10]] into %[[R1]][0, 0, 1, 0]
// CHECK: %[[P11:.*]] = linalg.generic {indexing_maps = [#[[T11]], #[[T11]], #[[T12]], #[[T12]], #[[T21]], #[[T21]], #[[T22]], #[[T22]], #[[ID]]]
// CHECK-COUNT-4: arith.cmpi eq
// CHECK: %[[R3:.*]] = tensor.insert_slice %[[P11]] into %[[R2]][0, 0, 1, 1]
// CHECK: return %[[R3]]
// GATHER-LABEL: func.func @max_overlapping(
// GATHER-NOT: tensor.insert_slice
// GATHER: arith.divsi
func.func @max_overlapping(%x: tensor<?x4x8x8xf32>, %dy: tensor<?x4x4x4xf32>, %w: tensor<?x4x4x4xi32>) -> tensor<?x4x8x8xf32> {
  %0 = grove.max_pool2d_grad %x, %dy indices %w {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x4x8x8xf32>, tensor<?x4x4x4xf32>, tensor<?x4x4x4xi32>) -> tensor<?x4x8x8xf32>
  return %0 : tensor<?x4x8x8xf32>
}

// -----

// An avg pool divides the output gradient by each window's divisor first
// (once a window), then adds its taps.
// CHECK-LABEL: func.func @avg_overlapping(
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x4x4x4xf32>)
// CHECK: linalg.index 2
// CHECK: arith.divf
// CHECK: tensor.pad %[[D]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK-COUNT-4: tensor.insert_slice
// CHECK-NOT: arith.cmpi eq
func.func @avg_overlapping(%x: tensor<2x4x8x8xf32>, %dy: tensor<2x4x4x4xf32>) -> tensor<2x4x8x8xf32> {
  %0 = grove.avg_pool2d_grad %x, %dy {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad} : (tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

// Windows that tile the input (2x2, stride 2) and dynamic images keep the
// gather: one loop.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: tensor.insert_slice
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: tensor.insert_slice
// CHECK: return
func.func @kept(%x: tensor<?x3x8x8xf32>, %dy: tensor<?x3x4x4xf32>, %xd: tensor<1x3x?x?xf32>, %dyd: tensor<1x3x?x?xf32>) -> (tensor<?x3x8x8xf32>, tensor<1x3x?x?xf32>) {
  %0 = grove.avg_pool2d_grad %x, %dy {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, count_include_pad} : (tensor<?x3x8x8xf32>, tensor<?x3x4x4xf32>) -> tensor<?x3x8x8xf32>
  %1 = grove.avg_pool2d_grad %xd, %dyd {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad} : (tensor<1x3x?x?xf32>, tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  return %0, %1 : tensor<?x3x8x8xf32>, tensor<1x3x?x?xf32>
}
