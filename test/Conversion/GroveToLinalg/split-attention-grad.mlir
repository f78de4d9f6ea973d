// RUN: grove-opt %s --convert-grove-to-linalg | FileCheck %s

// split_attention_grad's lowering (SplitAttentionGrad.cpp): U is viewed as
// B x R x K x Cg x (H·W) and read by one generic only, which also takes
// each split's inner product with dy; the input gradient is written by a
// generic over (b, r, k, c, p) that reads dy, the weights a_r and the
// pool's gradient, never U.
// CHECK-DAG: #[[U5:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[DY4:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
// CHECK-DAG: #[[SPLIT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d3)>
// CHECK-LABEL: func.func @sa_grad(
// CHECK-SAME: %[[DY:[^:]*]]: tensor<?x4x3x3xf32>, %[[U:[^:]*]]: tensor<?x8x3x3xf32>
// CHECK: %[[UE:.*]] = tensor.expand_shape %[[U]] {{\[}}[0], [1, 2, 3], [4], [5]]
// CHECK: %[[UV:.*]] = tensor.collapse_shape %[[UE]] {{.*}} into tensor<?x2x1x4x9xf32>
// CHECK-NOT: %[[U]]{{[ ,)]}}
// CHECK: %[[DYV:.*]] = tensor.collapse_shape {{.*}} into tensor<?x1x4x9xf32>
// CHECK: %[[PASS1:.*]]:2 = linalg.generic {indexing_maps = [#[[U5]], #[[DY4]], #[[SPLIT]], #[[SPLIT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[UV]], %[[DYV]] :
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.addf
// CHECK-NOT: %[[UV]]{{[ ,)]}}
// CHECK-NOT: %[[U]]{{[ ,)]}}
// The rsoftmax backward selects each point's own split by its index.
// CHECK: linalg.index 2
// CHECK: arith.select
// CHECK-NOT: %[[UV]]{{[ ,)]}}
// CHECK: %[[DU:.*]] = linalg.generic {indexing_maps = [#[[DY4]], #[[A]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[DYV]], %{{.*}}, %{{.*}} : tensor<?x1x4x9xf32>, tensor<?x1x2x4xf32>, tensor<?x1x4xf32>)
// CHECK-NOT: %[[UV]]{{[ ,)]}}
// CHECK-NOT: %[[U]]{{[ ,)]}}
// CHECK: return
func.func @sa_grad(%dy: tensor<?x4x3x3xf32>, %u: tensor<?x8x3x3xf32>, %w1: tensor<4x4x1x1xf32>, %v: tensor<4xf32>, %w2: tensor<8x4x1x1xf32>, %b2: tensor<8xf32>) -> (tensor<?x8x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) {
  %du, %dw1, %db1, %dg, %dbeta, %dw2, %db2 = grove.split_attention_grad %dy, %u, %w1, %v, %v, %v, %v, %v, %w2, %b2 {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<?x4x3x3xf32>, tensor<?x8x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> (tensor<?x8x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>)
  return %du, %dw1, %db1, %dg, %dbeta, %dw2, %db2 : tensor<?x8x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>
}
