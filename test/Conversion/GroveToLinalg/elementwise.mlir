// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg | FileCheck %s

// Elementwise lowerings of Elementwise.cpp: one linalg.generic per op,
// broadcasting expressed in the operands' indexing maps.

//===----------------------------------------------------------------------===//
// Binary ops, equal shapes
//===----------------------------------------------------------------------===//

// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @add
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: indexing_maps = [#[[$ID2]], #[[$ID2]], #[[$ID2]]]
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-SAME: outs(%[[INIT]] : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK-NEXT: } -> tensor<4x8xf32>
// CHECK: return %[[R]] : tensor<4x8xf32>
func.func @add(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = grove.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// The operand order of the non-commutative ops is kept.
// CHECK-LABEL: func.func @sub
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[A]], %[[B]] :
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.subf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
func.func @sub(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = grove.sub %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @mul
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[A]], %[[B]] :
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
func.func @mul(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = grove.mul %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @div
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[A]], %[[B]] :
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.divf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
func.func @div(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = grove.div %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// max and min propagate NaN: maximumf / minimumf, not maxnumf / minnumf.
// CHECK-LABEL: func.func @max
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.maximumf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
func.func @max(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = grove.max %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @min
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.minimumf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
func.func @min(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = grove.min %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

// -----

// CHECK-DAG: #[[$ID1:.*]] = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @relu
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: indexing_maps = [#[[$ID1]], #[[$ID1]]]
// CHECK-SAME: iterator_types = ["parallel"]
// CHECK-SAME: ins(%[[A]] : tensor<4xf32>) outs(%[[INIT]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[X]], %[[ZERO]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK: return %[[R]]
func.func @relu(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = grove.relu %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Body constants take the element type.
// CHECK-LABEL: func.func @relu_f16
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f16
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[X]], %[[ZERO]] : f16
// CHECK-NEXT: linalg.yield %[[M]] : f16
// CHECK-NEXT: } -> tensor<4xf16>
func.func @relu_f16(%a: tensor<4xf16>) -> tensor<4xf16> {
  %0 = grove.relu %a : tensor<4xf16>
  return %0 : tensor<4xf16>
}

// 1 / (1 + exp(-x)).
// CHECK-LABEL: func.func @sigmoid
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[DEN:.*]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK-NEXT: linalg.yield %[[Q]] : f32
func.func @sigmoid(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = grove.sigmoid %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Exact GELU: x/2 * (1 + erf(x / sqrt(2))).
// CHECK-LABEL: func.func @gelu
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[RSQRT2:.*]] = arith.constant 0.707106769 : f32
// CHECK-NEXT: %[[SCALED:.*]] = arith.mulf %[[X]], %[[RSQRT2]] : f32
// CHECK-NEXT: %[[ERF:.*]] = math.erf %[[SCALED]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[ONEPLUS:.*]] = arith.addf %[[ERF]], %[[ONE]] : f32
// CHECK-NEXT: %[[HALFC:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[HALF:.*]] = arith.mulf %[[X]], %[[HALFC]] : f32
// CHECK-NEXT: %[[G:.*]] = arith.mulf %[[HALF]], %[[ONEPLUS]] : f32
// CHECK-NEXT: linalg.yield %[[G]] : f32
func.func @gelu(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = grove.gelu %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @tanh
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[V:.*]] = math.tanh %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
func.func @tanh(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = grove.tanh %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @exp
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[V:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
func.func @exp(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = grove.exp %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @log
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[V:.*]] = math.log %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
func.func @log(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = grove.log %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @sqrt
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[V:.*]] = math.sqrt %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
func.func @sqrt(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = grove.sqrt %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

// -----

// Static 1s stretched against larger dimensions read index 0; the rank-2
// rhs aligns with the trailing result dimensions. The one dynamic result
// dimension is read from the lhs.
// CHECK-DAG: #[[$LHS:.*]] = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
// CHECK-DAG: #[[$RHS:.*]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-DAG: #[[$ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @stretch_and_extend
// CHECK-SAME: (%[[A:.*]]: tensor<?x1x8xf32>, %[[B:.*]]: tensor<4x1xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D0:.*]] = tensor.dim %[[A]], %[[C0]] : tensor<?x1x8xf32>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[D0]]) : tensor<?x4x8xf32>
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$ID3]]]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<?x1x8xf32>, tensor<4x1xf32>)
// CHECK-SAME: outs(%[[INIT]] : tensor<?x4x8xf32>)
// CHECK: arith.subf
// CHECK: } -> tensor<?x4x8xf32>
// CHECK: return %[[R]]
func.func @stretch_and_extend(%a: tensor<?x1x8xf32>, %b: tensor<4x1xf32>) -> tensor<?x4x8xf32> {
  %0 = grove.sub %a, %b : (tensor<?x1x8xf32>, tensor<4x1xf32>) -> tensor<?x4x8xf32>
  return %0 : tensor<?x4x8xf32>
}

// -----

// A static 1 that is also 1 in the result is not stretched.
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @unit_not_stretched
// CHECK: linalg.generic
// CHECK-SAME: indexing_maps = [#[[$ID2]], #[[$ID2]], #[[$ID2]]]
// CHECK: arith.minimumf
func.func @unit_not_stretched(%a: tensor<1x8xf32>, %b: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %0 = grove.min %a, %b : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  return %0 : tensor<1x8xf32>
}

// -----

// A rank-0 operand is read with an empty map.
// CHECK-DAG: #[[$SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[$ID1:.*]] = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @rank0_operand
// CHECK-SAME: (%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<3xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<3xf32>
// CHECK: linalg.generic
// CHECK-SAME: indexing_maps = [#[[$SCALAR]], #[[$ID1]], #[[$ID1]]]
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<f32>, tensor<3xf32>)
// CHECK-SAME: outs(%[[INIT]] : tensor<3xf32>)
// CHECK: arith.maximumf
func.func @rank0_operand(%a: tensor<f32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = grove.max %a, %b : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

//===----------------------------------------------------------------------===//
// Dynamic dimensions
//===----------------------------------------------------------------------===//

// -----

// Every dynamic result dimension is read with tensor.dim. Where two
// operands are dynamic along it, grove.agree_dims checks them at run time
// and both are cut to the agreed size.
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: func.func @dynamic_both
// CHECK-SAME: (%[[A:.*]]: tensor<?x?xf32>, %[[B:.*]]: tensor<?xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[D0:.*]] = tensor.dim %[[A]], %[[C0]] : tensor<?x?xf32>
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[A1:.*]] = tensor.dim %[[A]], %[[C1]] : tensor<?x?xf32>
// CHECK-NEXT: %[[C0B:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[B0:.*]] = tensor.dim %[[B]], %[[C0B]] : tensor<?xf32>
// CHECK-NEXT: %[[N:.*]] = grove.agree_dims %[[A1]], %[[B0]], "{{.*}}elementwise.mlir:{{[0-9]+}}:{{[0-9]+}}: grove.mul operands 0 and 1, result dimension 1" : index
// CHECK: %[[AS:.*]] = tensor.extract_slice %[[A]][0, 0] [%{{.*}}, %[[N]]] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
// CHECK: %[[BS:.*]] = tensor.extract_slice %[[B]][0] [%[[N]]] [1] : tensor<?xf32> to tensor<?xf32>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[D0]], %[[N]]) : tensor<?x?xf32>
// CHECK: linalg.generic
// CHECK-SAME: indexing_maps = [#[[$ID2]], #[[$ROW]], #[[$ID2]]]
// CHECK-SAME: ins(%[[AS]], %[[BS]] : tensor<?x?xf32>, tensor<?xf32>)
// CHECK-SAME: outs(%[[INIT]] : tensor<?x?xf32>)
// CHECK: arith.mulf
func.func @dynamic_both(%a: tensor<?x?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %0 = grove.mul %a, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// The dynamic dimension comes from the rhs when the lhs has a static 1
// there.
// CHECK-DAG: #[[$BCAST:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @dynamic_from_rhs
// CHECK-SAME: (%[[A:.*]]: tensor<1x8xf32>, %[[B:.*]]: tensor<?x8xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D0:.*]] = tensor.dim %[[B]], %[[C0]] : tensor<?x8xf32>
// CHECK-NOT: grove.agree_dims
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[INIT:.*]] = tensor.empty(%[[D0]]) : tensor<?x8xf32>
// CHECK: linalg.generic
// CHECK-SAME: indexing_maps = [#[[$BCAST]], #[[$ID2]], #[[$ID2]]]
// CHECK-SAME: outs(%[[INIT]] : tensor<?x8xf32>)
// CHECK: arith.divf
func.func @dynamic_from_rhs(%a: tensor<1x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = grove.div %a, %b : (tensor<1x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Outer product shape: each operand gives one dynamic dimension, and each
// stretches its static 1. One source per dimension: nothing to check.
// CHECK-DAG: #[[$COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @dynamic_outer
// CHECK-SAME: (%[[A:.*]]: tensor<?x1xf32>, %[[B:.*]]: tensor<1x?xf32>)
// CHECK-DAG: %[[D0:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x1xf32>
// CHECK-DAG: %[[D1:.*]] = tensor.dim %[[B]], %{{.*}} : tensor<1x?xf32>
// CHECK-NOT: grove.agree_dims
// CHECK: %[[INIT:.*]] = tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?xf32>
// CHECK: linalg.generic
// CHECK-SAME: indexing_maps = [#[[$COL]], #[[$ROW]], #[[$ID2]]]
// CHECK-SAME: ins(%[[A]], %[[B]] :
// CHECK-SAME: outs(%[[INIT]] : tensor<?x?xf32>)
func.func @dynamic_outer(%a: tensor<?x1xf32>, %b: tensor<1x?xf32>) -> tensor<?x?xf32> {
  %0 = grove.add %a, %b : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Rank extension of the lhs: the leading dynamic dimensions come from the
// rhs.
// CHECK-DAG: #[[$VEC:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[$ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @dynamic_rank_extension
// CHECK-SAME: (%[[A:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<?x?x8xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[D0:.*]] = tensor.dim %[[B]], %[[C0]] : tensor<?x?x8xf32>
// CHECK-DAG: %[[D1:.*]] = tensor.dim %[[B]], %[[C1]] : tensor<?x?x8xf32>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?x8xf32>
// CHECK: linalg.generic
// CHECK-SAME: indexing_maps = [#[[$VEC]], #[[$ID3]], #[[$ID3]]]
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<8xf32>, tensor<?x?x8xf32>)
func.func @dynamic_rank_extension(%a: tensor<8xf32>, %b: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %0 = grove.add %a, %b : (tensor<8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// A unary op on a dynamic tensor sizes its init from the input.
// CHECK-LABEL: func.func @unary_dynamic
// CHECK-SAME: (%[[A:.*]]: tensor<?xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D0:.*]] = tensor.dim %[[A]], %[[C0]] : tensor<?xf32>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[D0]]) : tensor<?xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[A]] : tensor<?xf32>) outs(%[[INIT]] : tensor<?xf32>)
// CHECK: math.tanh
func.func @unary_dynamic(%a: tensor<?xf32>) -> tensor<?xf32> {
  %0 = grove.tanh %a : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// The same tensor on both sides: the sizes are provably equal (value
// bounds), so neither a check nor slices remain.
// CHECK-LABEL: func.func @same_operand
// CHECK-SAME: (%[[A:.*]]: tensor<?xf32>)
// CHECK-NOT: grove.agree_dims
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[D:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?xf32>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[D]]) : tensor<?xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[A]], %[[A]] : tensor<?xf32>, tensor<?xf32>) outs(%[[INIT]] : tensor<?xf32>)
func.func @same_operand(%a: tensor<?xf32>) -> tensor<?xf32> {
  %0 = grove.add %a, %a : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// A result against one of its own operands (bias, then scale by the input,
// as in a GELU-gated layer): the result's size is the operand's, which value
// bounds prove through the linalg producer - no check, no slice, so the
// chain can fuse. Two independent inputs still get their check.
// CHECK-LABEL: func.func @result_against_operand
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[B:.*]]: tensor<8xf32>, %[[Y:.*]]: tensor<?x8xf32>)
// CHECK: %[[ADD:.*]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[B]] :
// CHECK-NOT: tensor.extract_slice
// The product's size is resolved to the input's it derives from.
// CHECK: %[[DM:.*]] = tensor.dim %[[X]]
// CHECK: %[[MUL:.*]] = linalg.generic
// CHECK-SAME: ins(%[[ADD]], %[[X]] :
// CHECK: %[[DY:.*]] = tensor.dim %[[Y]]
// CHECK: grove.agree_dims %[[DM]], %[[DY]], "{{.*}}: grove.sub operands 0 and 1, result dimension 0" : index
// CHECK: tensor.extract_slice %[[MUL]]
// CHECK: tensor.extract_slice %[[Y]]
func.func @result_against_operand(%x: tensor<?x8xf32>, %b: tensor<8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = grove.add %x, %b : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %1 = grove.mul %0, %x : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %2 = grove.sub %1, %y : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %2 : tensor<?x8xf32>
}

// -----

// The ops gradients are made of: a step (1 where x > 0, NaN gives 0), erf,
// and one_hot, which compares each label with the class index.
// CHECK-LABEL: func.func @gradient_ops
// CHECK: linalg.generic
// CHECK: %[[POS:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK: arith.select %[[POS]], %{{.*}}, %{{.*}} : f32
// CHECK: linalg.generic
// CHECK: math.erf %{{.*}} : f32
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : tensor<?xi32>) outs(%{{.*}} : tensor<?x5xf32>)
// CHECK: %[[C:.*]] = linalg.index 1 : index
// CHECK: %[[L:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %[[L]], %[[C]] : index
// CHECK: arith.select %[[HIT]]
func.func @gradient_ops(%x: tensor<?x3xf32>, %y: tensor<?xi32>) -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x5xf32>) {
  %s = grove.step %x : tensor<?x3xf32>
  %e = grove.erf %x : tensor<?x3xf32>
  %o = grove.one_hot %y : tensor<?xi32> -> tensor<?x5xf32>
  return %s, %e, %o : tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x5xf32>
}

// -----

// What schedules and periods are computed with: sin, cos and floor, each
// one math op in the body.
// CHECK-LABEL: func.func @schedule_ops
// CHECK: linalg.generic
// CHECK: math.sin %{{.*}} : f64
// CHECK: linalg.generic
// CHECK: math.cos %{{.*}} : f64
// CHECK: linalg.generic
// CHECK: math.floor %{{.*}} : f64
func.func @schedule_ops(%x: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) {
  %s = grove.sin %x : tensor<3xf64>
  %c = grove.cos %x : tensor<3xf64>
  %f = grove.floor %x : tensor<3xf64>
  return %s, %c, %f : tensor<3xf64>, tensor<3xf64>, tensor<3xf64>
}
