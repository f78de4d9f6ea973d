// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg | FileCheck %s

// Reductions and softmax (Reduction.cpp): linalg.reduce over the normalised
// axes from an identity fill, keepdims as a tensor.expand_shape, softmax as
// max / exp-sum / normalise.

//===----------------------------------------------------------------------===//
// reduce_sum
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reduce_sum
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D0:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x8xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[EMPTY:.*]] = bufferization.alloc_tensor(%[[D0]]) : tensor<?xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<?xf32>) -> tensor<?xf32>
// CHECK: %[[R:.*]] = linalg.reduce ins(%[[X]] : tensor<?x8xf32>) outs(%[[INIT]] : tensor<?xf32>) dimensions = [1]
// CHECK-NEXT: (%[[IN:.*]]: f32, %[[ACC:.*]]: f32) {
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[IN]], %[[ACC]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]] : tensor<?xf32>
func.func @reduce_sum(%x: tensor<?x8xf32>) -> tensor<?xf32> {
  %0 = grove.reduce_sum %x {axes = array<i64: 1>} : tensor<?x8xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Negative axes are normalised and sorted; the trailing reduced dimensions
// join the last kept dimension's group.
// CHECK-LABEL: func.func @reduce_sum_keepdims
// CHECK-SAME: (%[[X:.*]]: tensor<4x?x8xf32>)
// CHECK: %[[EMPTY:.*]] = bufferization.alloc_tensor() : tensor<4xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<4xf32>)
// CHECK: %[[R:.*]] = linalg.reduce ins(%[[X]] : tensor<4x?x8xf32>) outs(%[[INIT]] : tensor<4xf32>) dimensions = [1, 2]
// CHECK: arith.addf
// CHECK: %[[E:.*]] = tensor.expand_shape %[[R]] {{\[}}[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
// CHECK: return %[[E]]
func.func @reduce_sum_keepdims(%x: tensor<4x?x8xf32>) -> tensor<4x1x1xf32> {
  %0 = grove.reduce_sum %x {axes = array<i64: -1, 1>, keepdims} : tensor<4x?x8xf32> -> tensor<4x1x1xf32>
  return %0 : tensor<4x1x1xf32>
}

// -----

// Every axis: a rank-0 accumulator.
// CHECK-LABEL: func.func @reduce_sum_all
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK: %[[EMPTY:.*]] = bufferization.alloc_tensor() : tensor<f32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<f32>)
// CHECK: %[[R:.*]] = linalg.reduce ins(%[[X]] : tensor<2x3xf32>) outs(%[[INIT]] : tensor<f32>) dimensions = [0, 1]
// CHECK: return %[[R]] : tensor<f32>
func.func @reduce_sum_all(%x: tensor<2x3xf32>) -> tensor<f32> {
  %0 = grove.reduce_sum %x {axes = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A rank-0 result expanded back to rank 1: no reassociation groups.
// CHECK-LABEL: func.func @reduce_sum_rank1_keepdims
// CHECK: %[[R:.*]] = linalg.reduce ins(%{{.*}} : tensor<?xf32>) outs(%{{.*}} : tensor<f32>) dimensions = [0]
// CHECK: %[[E:.*]] = tensor.expand_shape %[[R]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: return %[[E]]
func.func @reduce_sum_rank1_keepdims(%x: tensor<?xf32>) -> tensor<1xf32> {
  %0 = grove.reduce_sum %x {axes = array<i64: 0>, keepdims} : tensor<?xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

//===----------------------------------------------------------------------===//
// reduce_mean
//===----------------------------------------------------------------------===//

// -----

// The sum is divided by the number of reduced elements, a product of
// tensor.dim values for dynamic dimensions, converted to the element type.
// CHECK-DAG: #[[$ID1:.*]] = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @reduce_mean_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<?x8x?xf32>)
// CHECK: %[[SINIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8xf32>)
// CHECK: %[[SUM:.*]] = linalg.reduce ins(%[[X]] : tensor<?x8x?xf32>) outs(%[[SINIT]] : tensor<8xf32>) dimensions = [0, 2]
// CHECK: arith.addf
// CHECK-DAG: %[[D0:.*]] = tensor.dim %[[X]], %[[C0:.*]] : tensor<?x8x?xf32>
// CHECK-DAG: %[[D2:.*]] = tensor.dim %[[X]], %[[C2:.*]] : tensor<?x8x?xf32>
// CHECK-DAG: %[[C0]] = arith.constant 0 : index
// CHECK-DAG: %[[C2]] = arith.constant 2 : index
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[P0:.*]] = arith.muli %[[ONE]], %[[D0]] : index
// CHECK: %[[P1:.*]] = arith.muli %[[P0]], %[[D2]] : index
// CHECK: %[[PI:.*]] = arith.index_cast %[[P1]] : index to i64
// CHECK: %[[COUNT:.*]] = arith.uitofp %[[PI]] : i64 to f32
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[MEAN:.*]] = linalg.generic
// CHECK-SAME: indexing_maps = [#[[$ID1]], #[[$ID1]]]
// CHECK-SAME: iterator_types = ["parallel"]
// CHECK-SAME: ins(%[[SUM]] : tensor<8xf32>) outs(%[[EMPTY]] : tensor<8xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[IN]], %[[COUNT]] : f32
// CHECK-NEXT: linalg.yield %[[Q]] : f32
// CHECK: return %[[MEAN]] : tensor<8xf32>
func.func @reduce_mean_dynamic(%x: tensor<?x8x?xf32>) -> tensor<8xf32> {
  %0 = grove.reduce_mean %x {axes = array<i64: 0, 2>} : tensor<?x8x?xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Static reduced dimensions count with constants; keepdims expands the
// quotient, not the sum.
// CHECK-LABEL: func.func @reduce_mean_keepdims
// CHECK: %[[SUM:.*]] = linalg.reduce ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<2xf32>) dimensions = [1]
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3 : index
// CHECK: %[[P:.*]] = arith.muli %[[ONE]], %[[THREE]] : index
// CHECK: %[[PI:.*]] = arith.index_cast %[[P]] : index to i64
// CHECK: %[[COUNT:.*]] = arith.uitofp %[[PI]] : i64 to f32
// CHECK: %[[MEAN:.*]] = linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<2xf32>)
// CHECK: arith.divf %{{.*}}, %[[COUNT]] : f32
// CHECK: %[[E:.*]] = tensor.expand_shape %[[MEAN]] {{\[}}[0, 1]] output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32>
// CHECK: return %[[E]]
func.func @reduce_mean_keepdims(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %0 = grove.reduce_mean %x {axes = array<i64: 1>, keepdims} : tensor<2x3xf32> -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

//===----------------------------------------------------------------------===//
// reduce_max
//===----------------------------------------------------------------------===//

// -----

// -inf identity and maximumf. A leading reduced dimension joins the group
// of the next kept one, whose size is read from the reduced tensor.
// CHECK-LABEL: func.func @reduce_max_keepdims
// CHECK-SAME: (%[[X:.*]]: tensor<2x?xf32>)
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[D1:.*]] = tensor.dim %[[X]], %[[C1]] : tensor<2x?xf32>
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[EMPTY:.*]] = bufferization.alloc_tensor(%[[D1]]) : tensor<?xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%[[EMPTY]] : tensor<?xf32>)
// CHECK: %[[R:.*]] = linalg.reduce ins(%[[X]] : tensor<2x?xf32>) outs(%[[INIT]] : tensor<?xf32>) dimensions = [0]
// CHECK-NEXT: (%[[IN:.*]]: f32, %[[ACC:.*]]: f32) {
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[IN]], %[[ACC]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK: %[[RD:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<2x?xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[R]] {{\[}}[0, 1]] output_shape [1, %[[RD]]] : tensor<?xf32> into tensor<1x?xf32>
// CHECK: return %[[E]]
func.func @reduce_max_keepdims(%x: tensor<2x?xf32>) -> tensor<1x?xf32> {
  %0 = grove.reduce_max %x {axes = array<i64: 0>, keepdims} : tensor<2x?xf32> -> tensor<1x?xf32>
  return %0 : tensor<1x?xf32>
}

// -----

// The identity is -inf of the element type.
// CHECK-LABEL: func.func @reduce_max_f16
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFC00 : f16
// CHECK: linalg.fill ins(%[[NEGINF]] : f16)
// CHECK: linalg.reduce
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f16
func.func @reduce_max_f16(%x: tensor<4x8xf16>) -> tensor<4xf16> {
  %0 = grove.reduce_max %x {axes = array<i64: 1>} : tensor<4x8xf16> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// All axes with keepdims: a rank-0 max expanded with no groups.
// CHECK-LABEL: func.func @reduce_max_all_keepdims
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[R:.*]] = linalg.reduce ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<f32>) dimensions = [0, 1]
// CHECK: arith.maximumf
// CHECK: tensor.expand_shape %[[R]] [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
func.func @reduce_max_all_keepdims(%x: tensor<2x3xf32>) -> tensor<1x1xf32> {
  %0 = grove.reduce_max %x {axes = array<i64: 0, 1>, keepdims} : tensor<2x3xf32> -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}

//===----------------------------------------------------------------------===//
// softmax / log_softmax
//===----------------------------------------------------------------------===//

// -----

// max over the axis; sum of exp(x - max) as one reduction generic; the
// result recomputes exp(x - max) / sum rather than reading a stored e. The
// reduced operands are read with the axis dropped from their map.
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROWS:.*]] = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<?x10xf32>)
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x10xf32>
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MINIT:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<?xf32>)
// CHECK: %[[MAX:.*]] = linalg.reduce ins(%[[X]] : tensor<?x10xf32>) outs(%[[MINIT]] : tensor<?xf32>) dimensions = [1]
// CHECK: arith.maximumf
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SINIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<?xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: indexing_maps = [#[[$ID2]], #[[$ROWS]], #[[$ROWS]]]
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[X]], %[[MAX]] : tensor<?x10xf32>, tensor<?xf32>) outs(%[[SINIT]] : tensor<?xf32>)
// CHECK-NEXT: ^bb0(%[[XI:.*]]: f32, %[[MI:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[XI]], %[[MI]] : f32
// CHECK-NEXT: %[[EXP:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[EXP]], %[[ACC]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: %[[REMPTY:.*]] = tensor.empty(%[[N]]) : tensor<?x10xf32>
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: indexing_maps = [#[[$ID2]], #[[$ROWS]], #[[$ROWS]], #[[$ID2]]]
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%[[X]], %[[MAX]], %[[SUM]] : tensor<?x10xf32>, tensor<?xf32>, tensor<?xf32>) outs(%[[REMPTY]] : tensor<?x10xf32>)
// CHECK-NEXT: ^bb0(%[[XI2:.*]]: f32, %[[MI2:.*]]: f32, %[[SI:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[D2:.*]] = arith.subf %[[XI2]], %[[MI2]] : f32
// CHECK-NEXT: %[[E2:.*]] = math.exp %[[D2]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[E2]], %[[SI]] : f32
// CHECK-NEXT: linalg.yield %[[Q]] : f32
// CHECK: return %[[R]] : tensor<?x10xf32>
func.func @softmax(%x: tensor<?x10xf32>) -> tensor<?x10xf32> {
  %0 = grove.softmax %x {axis = -1 : i64} : tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}

// -----

// (x - max) - log(sum), along axis 0 this time; no exp in the last step.
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$COLS:.*]] = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: func.func @log_softmax
// CHECK-SAME: (%[[X:.*]]: tensor<4x10xf32>)
// CHECK: %[[MAX:.*]] = linalg.reduce ins(%[[X]] : tensor<4x10xf32>) outs(%{{.*}} : tensor<10xf32>) dimensions = [0]
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: indexing_maps = [#[[$ID2]], #[[$COLS]], #[[$COLS]]]
// CHECK-SAME: iterator_types = ["reduction", "parallel"]
// CHECK-SAME: ins(%[[X]], %[[MAX]] : tensor<4x10xf32>, tensor<10xf32>)
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: indexing_maps = [#[[$ID2]], #[[$COLS]], #[[$COLS]], #[[$ID2]]]
// CHECK-SAME: ins(%[[X]], %[[MAX]], %[[SUM]] : tensor<4x10xf32>, tensor<10xf32>, tensor<10xf32>)
// CHECK-NEXT: ^bb0(%[[XI:.*]]: f32, %[[MI:.*]]: f32, %[[SI:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[SHIFTED:.*]] = arith.subf %[[XI]], %[[MI]] : f32
// CHECK-NEXT: %[[LOGSUM:.*]] = math.log %[[SI]] : f32
// CHECK-NEXT: %[[V:.*]] = arith.subf %[[SHIFTED]], %[[LOGSUM]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NOT: arith.divf
// CHECK: return %[[R]] : tensor<4x10xf32>
func.func @log_softmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %0 = grove.log_softmax %x {axis = 0 : i64} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

//===----------------------------------------------------------------------===//
// Low precision: sums accumulate in f32 and are rounded once
//===----------------------------------------------------------------------===//

// -----

// A bf16 sum of thousands of terms keeps few of their bits: the
// accumulator is f32, and one elementwise step rounds the result.
// CHECK-LABEL: func.func @reduce_sum_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xbf16>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<?xf32>)
// CHECK: %[[R:.*]] = linalg.reduce ins(%[[X]] : tensor<?x64xbf16>) outs(%[[INIT]] : tensor<?xf32>) dimensions = [1]
// CHECK-NEXT: (%[[IN:.*]]: bf16, %[[ACC:.*]]: f32) {
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[W]], %[[ACC]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: %[[T:.*]] = linalg.generic
// CHECK-SAME: ins(%[[R]] : tensor<?xf32>) outs(%{{.*}} : tensor<?xbf16>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT: %[[N:.*]] = arith.truncf %[[V]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[N]] : bf16
// CHECK: return %[[T]] : tensor<?xbf16>
func.func @reduce_sum_bf16(%x: tensor<?x64xbf16>) -> tensor<?xbf16> {
  %0 = grove.reduce_sum %x {axes = array<i64: 1>} : tensor<?x64xbf16> -> tensor<?xbf16>
  return %0 : tensor<?xbf16>
}

// -----

// The mean divides in f32, before the one rounding.
// CHECK-LABEL: func.func @reduce_mean_f16
// CHECK: linalg.reduce ins(%{{.*}} : tensor<4x8xf16>) outs(%{{.*}} : tensor<4xf32>) dimensions = [1]
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: %[[COUNT:.*]] = arith.uitofp %{{.*}} : i64 to f32
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<4xf16>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[V]], %[[COUNT]] : f32
// CHECK-NEXT: %[[N:.*]] = arith.truncf %[[Q]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[N]] : f16
func.func @reduce_mean_f16(%x: tensor<4x8xf16>) -> tensor<4xf16> {
  %0 = grove.reduce_mean %x {axes = array<i64: 1>} : tensor<4x8xf16> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// bf16 softmax: the max stays bf16 (exact); the exponentials, their sum and
// the quotient are f32, rounded once.
// CHECK-LABEL: func.func @softmax_bf16
// CHECK: linalg.reduce ins(%{{.*}} : tensor<8x100xbf16>) outs(%{{.*}} : tensor<8xbf16>) dimensions = [1]
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<reassoc> : bf16
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<8xf32>)
// CHECK-NEXT: ^bb0(%[[XI:.*]]: bf16, %[[MI:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[XW:.*]] = arith.extf %[[XI]] : bf16 to f32
// CHECK-NEXT: %[[MW:.*]] = arith.extf %[[MI]] : bf16 to f32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[XW]], %[[MW]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT: arith.addf %[[E]], %[[ACC]] fastmath<reassoc> : f32
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}}, %[[SUM]] : tensor<8x100xbf16>, tensor<8xbf16>, tensor<8xf32>) outs(%{{.*}} : tensor<8x100xbf16>)
// CHECK: %[[Q:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[N:.*]] = arith.truncf %[[Q]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[N]] : bf16
func.func @softmax_bf16(%x: tensor<8x100xbf16>) -> tensor<8x100xbf16> {
  %0 = grove.softmax %x {axis = 1 : i64} : tensor<8x100xbf16>
  return %0 : tensor<8x100xbf16>
}
