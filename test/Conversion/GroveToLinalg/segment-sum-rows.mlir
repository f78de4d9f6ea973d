// RUN: grove-opt %s --convert-grove-to-linalg=segment-sum-rows | FileCheck %s

// grove.segment_sum in the host's form (segment-sum-rows): an scf.forall
// over the segments; each zeroes its row of the result and adds its input
// rows to it as row slices, so the columns are the innermost loop. Offsets
// are read relative to offsets[0] and clamped to the input's rows.

// CHECK-LABEL: func.func @segment_sum_rows
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x3xf32>, %[[O:.*]]: tensor<?xi32>)
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[E:.*]] = tensor.empty(%[[K:.*]]) : tensor<?x4x3xf32>
// CHECK: scf.forall (%[[P:.*]]) in (%[[K]]) shared_outs(%[[OUT:.*]] = %[[E]]) -> (tensor<?x4x3xf32>)
// CHECK: %[[BASE:.*]] = tensor.extract %[[O]][%{{.*}}]
// CHECK: %[[A:.*]] = tensor.extract %[[O]][%[[P]]]
// CHECK: %[[LO:.*]] = arith.subi %[[A]], %[[BASE]] : i32
// CHECK: arith.minsi %{{.*}}, %[[N]]
// CHECK: %[[Q:.*]] = arith.addi %[[P]], %{{.*}}
// CHECK: tensor.extract %[[O]][%[[Q]]]
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[OUT]][%[[P]], 0, 0] [1, 4, 3] [1, 1, 1]
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[ROW]] : tensor<1x4x3xf32>)
// CHECK: %[[SUM:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[Z]])
// CHECK: %[[IN:.*]] = tensor.extract_slice %[[X]][%[[I]], 0, 0] [1, 4, 3] [1, 1, 1]
// CHECK: linalg.add ins(%[[ACC]], %[[IN]] : tensor<1x4x3xf32>, tensor<1x4x3xf32>) outs(%[[ACC]] : tensor<1x4x3xf32>)
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %[[SUM]] into %[[OUT]][%[[P]], 0, 0] [1, 4, 3] [1, 1, 1]
func.func @segment_sum_rows(%x: tensor<?x4x3xf32>, %o: tensor<?xi32>) -> tensor<?x4x3xf32> {
  %0 = grove.segment_sum %x, %o : (tensor<?x4x3xf32>, tensor<?xi32>) -> tensor<?x4x3xf32>
  return %0 : tensor<?x4x3xf32>
}
