// RUN: grove-opt %s -split-input-file -canonicalize | FileCheck %s

// Folds of GroveFolds.cpp, each with a case where it must not fire.

//===----------------------------------------------------------------------===//
// grove.constant
//===----------------------------------------------------------------------===//

// Constants fold to their value, so equal constants are uniqued.
// CHECK-LABEL: func.func @constant_uniqued
// CHECK: %[[C:.*]] = grove.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NOT: grove.constant
// CHECK: return %[[C]], %[[C]]
func.func @constant_uniqued() -> (tensor<2xf32>, tensor<2xf32>) {
  %a = grove.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = grove.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %a, %b : tensor<2xf32>, tensor<2xf32>
}

// -----

// Same values, different types: two constants.
// CHECK-LABEL: func.func @constant_not_uniqued
// CHECK-DAG: %[[A:.*]] = grove.constant dense<1.000000e+00> : tensor<2xf32>
// CHECK-DAG: %[[B:.*]] = grove.constant dense<1.000000e+00> : tensor<2xf16>
// CHECK: return %[[A]], %[[B]]
func.func @constant_not_uniqued() -> (tensor<2xf32>, tensor<2xf16>) {
  %a = grove.constant dense<1.0> : tensor<2xf32>
  %b = grove.constant dense<1.0> : tensor<2xf16>
  return %a, %b : tensor<2xf32>, tensor<2xf16>
}

//===----------------------------------------------------------------------===//
// grove.reshape
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @reshape_identity
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3xf32>)
// CHECK-NOT: grove.reshape
// CHECK: return %[[X]]
func.func @reshape_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = grove.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_changes_shape
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3xf32>)
// CHECK: %[[R:.*]] = grove.reshape %[[X]] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK: return %[[R]]
func.func @reshape_changes_shape(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = grove.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// reshape(reshape(x)) back to the type of x is x.
// CHECK-LABEL: func.func @reshape_reshape_identity
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x6xf32>)
// CHECK-NOT: grove.reshape
// CHECK: return %[[X]]
func.func @reshape_reshape_identity(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  %0 = grove.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
  %1 = grove.reshape %0 : tensor<3x4xf32> -> tensor<2x6xf32>
  return %1 : tensor<2x6xf32>
}

// -----

// reshape(reshape(x)) is one reshape of x.
// CHECK-LABEL: func.func @reshape_reshape
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x6xf32>)
// CHECK: %[[R:.*]] = grove.reshape %[[X]] : tensor<2x6xf32> -> tensor<12xf32>
// CHECK-NOT: grove.reshape
// CHECK: return %[[R]]
func.func @reshape_reshape(%x: tensor<2x6xf32>) -> tensor<12xf32> {
  %0 = grove.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
  %1 = grove.reshape %0 : tensor<3x4xf32> -> tensor<12xf32>
  return %1 : tensor<12xf32>
}

// -----

// The inner reshape stays while it has another use.
// CHECK-LABEL: func.func @reshape_reshape_shared
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x6xf32>)
// CHECK-DAG: %[[A:.*]] = grove.reshape %[[X]] : tensor<2x6xf32> -> tensor<3x4xf32>
// CHECK-DAG: %[[B:.*]] = grove.reshape %[[X]] : tensor<2x6xf32> -> tensor<12xf32>
// CHECK: return %[[A]], %[[B]]
func.func @reshape_reshape_shared(%x: tensor<2x6xf32>)
    -> (tensor<3x4xf32>, tensor<12xf32>) {
  %0 = grove.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
  %1 = grove.reshape %0 : tensor<3x4xf32> -> tensor<12xf32>
  return %0, %1 : tensor<3x4xf32>, tensor<12xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_reshape_dynamic
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x4xf32>)
// CHECK: %[[R:.*]] = grove.reshape %[[X]] : tensor<?x4xf32> -> tensor<?x8xf32>
// CHECK-NOT: grove.reshape
// CHECK: return %[[R]]
func.func @reshape_reshape_dynamic(%x: tensor<?x4xf32>) -> tensor<?x8xf32> {
  %0 = grove.reshape %x : tensor<?x4xf32> -> tensor<?x2x2xf32>
  %1 = grove.reshape %0 : tensor<?x2x2xf32> -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}

// -----

// Static through dynamic to dynamic.
// CHECK-LABEL: func.func @reshape_reshape_static_dynamic
// CHECK-SAME: (%[[X:[^:]*]]: tensor<12xf32>)
// CHECK: %[[R:.*]] = grove.reshape %[[X]] : tensor<12xf32> -> tensor<?x4xf32>
// CHECK-NOT: grove.reshape
// CHECK: return %[[R]]
func.func @reshape_reshape_static_dynamic(%x: tensor<12xf32>) -> tensor<?x4xf32> {
  %0 = grove.reshape %x : tensor<12xf32> -> tensor<?x3xf32>
  %1 = grove.reshape %0 : tensor<?x3xf32> -> tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_constant
// CHECK: %[[C:.*]] = grove.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NOT: grove.reshape
// CHECK: return %[[C]]
func.func @reshape_constant() -> tensor<2x2xf32> {
  %c = grove.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = grove.reshape %c : tensor<4xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_constant_integer
// CHECK: %[[C:.*]] = grove.constant dense<{{\[}}[1, 2, 3]]> : tensor<1x3xi32>
// CHECK-NOT: grove.reshape
// CHECK: return %[[C]]
func.func @reshape_constant_integer() -> tensor<1x3xi32> {
  %c = grove.constant dense<[1, 2, 3]> : tensor<3xi32>
  %0 = grove.reshape %c : tensor<3xi32> -> tensor<1x3xi32>
  return %0 : tensor<1x3xi32>
}

// -----

// A constant cannot have a dynamic type: the reshape stays.
// CHECK-LABEL: func.func @reshape_constant_to_dynamic
// CHECK: %[[C:.*]] = grove.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK: %[[R:.*]] = grove.reshape %[[C]] : tensor<4xf32> -> tensor<?x2xf32>
// CHECK: return %[[R]]
func.func @reshape_constant_to_dynamic() -> tensor<?x2xf32> {
  %c = grove.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = grove.reshape %c : tensor<4xf32> -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

//===----------------------------------------------------------------------===//
// grove.transpose
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x?x4xf32>)
// CHECK-NOT: grove.transpose
// CHECK: return %[[X]]
func.func @transpose_identity(%x: tensor<2x?x4xf32>) -> tensor<2x?x4xf32> {
  %0 = grove.transpose %x [0, 1, 2] : tensor<2x?x4xf32> -> tensor<2x?x4xf32>
  return %0 : tensor<2x?x4xf32>
}

// -----

// A permutation that keeps the type is still not the identity.
// CHECK-LABEL: func.func @transpose_square
// CHECK-SAME: (%[[X:[^:]*]]: tensor<3x3xf32>)
// CHECK: %[[T:.*]] = grove.transpose %[[X]] [1, 0] : tensor<3x3xf32> -> tensor<3x3xf32>
// CHECK: return %[[T]]
func.func @transpose_square(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = grove.transpose %x [1, 0] : tensor<3x3xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_transpose_identity
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x64xf32>)
// CHECK-NOT: grove.transpose
// CHECK: return %[[X]]
func.func @transpose_transpose_identity(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = grove.transpose %x [1, 0] : tensor<?x64xf32> -> tensor<64x?xf32>
  %1 = grove.transpose %0 [1, 0] : tensor<64x?xf32> -> tensor<?x64xf32>
  return %1 : tensor<?x64xf32>
}

// -----

// transpose(transpose(x, p), q) = transpose(x, [p[q[i]]]):
// p = q = [1, 2, 0] composes to [2, 0, 1].
// CHECK-LABEL: func.func @transpose_transpose
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3x4xf32>)
// CHECK: %[[T:.*]] = grove.transpose %[[X]] [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NOT: grove.transpose
// CHECK: return %[[T]]
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = grove.transpose %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = grove.transpose %0 [1, 2, 0] : tensor<3x4x2xf32> -> tensor<4x2x3xf32>
  return %1 : tensor<4x2x3xf32>
}

// -----

// p = [0, 2, 1], q = [1, 0, 2] composes to [2, 0, 1], not [1, 2, 0] (q∘p).
// CHECK-LABEL: func.func @transpose_transpose_order
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3x4xf32>)
// CHECK: %[[T:.*]] = grove.transpose %[[X]] [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NOT: grove.transpose
// CHECK: return %[[T]]
func.func @transpose_transpose_order(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = grove.transpose %x [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  %1 = grove.transpose %0 [1, 0, 2] : tensor<2x4x3xf32> -> tensor<4x2x3xf32>
  return %1 : tensor<4x2x3xf32>
}

//===----------------------------------------------------------------------===//
// grove.concat
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @concat_one
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x3xf32>)
// CHECK-NOT: grove.concat
// CHECK: return %[[X]]
func.func @concat_one(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = grove.concat %x {axis = 1 : i64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// CHECK-LABEL: func.func @concat_two
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x3xf32>, %[[Y:[^:]*]]: tensor<?x0xf32>)
// CHECK: %[[C:.*]] = grove.concat %[[X]], %[[Y]] {axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x0xf32>) -> tensor<?x3xf32>
// CHECK: return %[[C]]
func.func @concat_two(%x: tensor<?x3xf32>, %y: tensor<?x0xf32>) -> tensor<?x3xf32> {
  %0 = grove.concat %x, %y {axis = 1 : i64}
      : (tensor<?x3xf32>, tensor<?x0xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

//===----------------------------------------------------------------------===//
// grove.slice
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @slice_identity
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x8xf32>, %[[Y:[^:]*]]: tensor<4x8xf32>)
// CHECK-NOT: grove.slice
// CHECK: return %[[X]], %[[Y]]
func.func @slice_identity(%x: tensor<?x8xf32>, %y: tensor<4x8xf32>)
    -> (tensor<?x8xf32>, tensor<4x8xf32>) {
  %0 = grove.slice %x [0, 0] [-1, 8] [1, 1] : tensor<?x8xf32> -> tensor<?x8xf32>
  %1 = grove.slice %y [0, 0] [4, -1] [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0, %1 : tensor<?x8xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @slice_not_identity
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8xf32>, %[[D:[^:]*]]: tensor<?xf32>)
// CHECK: %[[A:.*]] = grove.slice %[[X]] [1] [8] [1] : tensor<8xf32> -> tensor<7xf32>
// CHECK: %[[B:.*]] = grove.slice %[[X]] [0] [8] [2] : tensor<8xf32> -> tensor<4xf32>
// CHECK: %[[C:.*]] = grove.slice %[[D]] [1] [-1] [1] : tensor<?xf32> -> tensor<?xf32>
// CHECK: %[[E:.*]] = grove.slice %[[D]] [0] [-1] [2] : tensor<?xf32> -> tensor<?xf32>
// CHECK: %[[F:.*]] = grove.slice %[[X]] [0] [7] [1] : tensor<8xf32> -> tensor<7xf32>
// CHECK: return %[[A]], %[[B]], %[[C]], %[[E]], %[[F]]
func.func @slice_not_identity(%x: tensor<8xf32>, %d: tensor<?xf32>)
    -> (tensor<7xf32>, tensor<4xf32>, tensor<?xf32>, tensor<?xf32>,
        tensor<7xf32>) {
  %0 = grove.slice %x [1] [8] [1] : tensor<8xf32> -> tensor<7xf32>
  %1 = grove.slice %x [0] [8] [2] : tensor<8xf32> -> tensor<4xf32>
  // Same type as the input, but drops the first element / every other one.
  %2 = grove.slice %d [1] [-1] [1] : tensor<?xf32> -> tensor<?xf32>
  %3 = grove.slice %d [0] [-1] [2] : tensor<?xf32> -> tensor<?xf32>
  %4 = grove.slice %x [0] [7] [1] : tensor<8xf32> -> tensor<7xf32>
  return %0, %1, %2, %3, %4 : tensor<7xf32>, tensor<4xf32>, tensor<?xf32>,
      tensor<?xf32>, tensor<7xf32>
}

//===----------------------------------------------------------------------===//
// grove.broadcast_to
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @broadcast_identity
// CHECK-SAME: (%[[X:[^:]*]]: tensor<3x4xf32>)
// CHECK-NOT: grove.broadcast_to
// CHECK: return %[[X]]
func.func @broadcast_identity(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = grove.broadcast_to %x : tensor<3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_other_shape
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x4xf32>, %[[N:[^:]*]]: index)
// CHECK-DAG: %[[A:.*]] = grove.broadcast_to %[[X]] : tensor<1x4xf32> -> tensor<3x4xf32>
// CHECK-DAG: %[[B:.*]] = grove.broadcast_to %[[X]] : tensor<1x4xf32> -> tensor<2x1x4xf32>
// CHECK-DAG: %[[C:.*]] = grove.broadcast_to %[[X]](%[[N]]) : tensor<1x4xf32> -> tensor<?x4xf32>
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @broadcast_other_shape(%x: tensor<1x4xf32>, %n: index)
    -> (tensor<3x4xf32>, tensor<2x1x4xf32>, tensor<?x4xf32>) {
  %0 = grove.broadcast_to %x : tensor<1x4xf32> -> tensor<3x4xf32>
  // Same element count, different rank.
  %1 = grove.broadcast_to %x : tensor<1x4xf32> -> tensor<2x1x4xf32>
  %2 = grove.broadcast_to %x (%n) : tensor<1x4xf32> -> tensor<?x4xf32>
  return %0, %1, %2 : tensor<3x4xf32>, tensor<2x1x4xf32>, tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_splat
// CHECK-DAG: %[[A:.*]] = grove.constant dense<2.500000e+00> : tensor<3x4xf32>
// CHECK-DAG: %[[B:.*]] = grove.constant dense<7> : tensor<2x2xi32>
// CHECK-NOT: grove.broadcast_to
// CHECK: return %[[A]], %[[B]]
func.func @broadcast_splat() -> (tensor<3x4xf32>, tensor<2x2xi32>) {
  %c = grove.constant dense<2.5> : tensor<4xf32>
  %0 = grove.broadcast_to %c : tensor<4xf32> -> tensor<3x4xf32>
  %i = grove.constant dense<7> : tensor<i32>
  %1 = grove.broadcast_to %i : tensor<i32> -> tensor<2x2xi32>
  return %0, %1 : tensor<3x4xf32>, tensor<2x2xi32>
}

// -----

// Not a splat, or a dynamic result: the broadcast stays.
// CHECK-LABEL: func.func @broadcast_not_splat
// CHECK-SAME: (%[[N:[^:]*]]: index)
// CHECK-DAG: %[[C:.*]] = grove.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[S:.*]] = grove.constant dense<3.000000e+00> : tensor<2xf32>
// CHECK-DAG: %[[A:.*]] = grove.broadcast_to %[[C]] : tensor<2xf32> -> tensor<3x2xf32>
// CHECK-DAG: %[[B:.*]] = grove.broadcast_to %[[S]](%[[N]]) : tensor<2xf32> -> tensor<?x2xf32>
// CHECK: return %[[A]], %[[B]]
func.func @broadcast_not_splat(%n: index) -> (tensor<3x2xf32>, tensor<?x2xf32>) {
  %c = grove.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = grove.broadcast_to %c : tensor<2xf32> -> tensor<3x2xf32>
  %s = grove.constant dense<3.0> : tensor<2xf32>
  %1 = grove.broadcast_to %s (%n) : tensor<2xf32> -> tensor<?x2xf32>
  return %0, %1 : tensor<3x2xf32>, tensor<?x2xf32>
}

//===----------------------------------------------------------------------===//
// grove.add / grove.sub: x + 0, x - 0
//===----------------------------------------------------------------------===//

// -----

// x + 0 and 0 + x (constants move to the right of commutative ops), also
// when the zero is broadcast into x.
// x + -0.0 is the identity (IEEE: -0.0 + -0.0 = -0.0, +0.0 + -0.0 = +0.0).
// CHECK-LABEL: func.func @add_zero
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x4xf32>, %[[H:[^:]*]]: tensor<3xf16>)
// CHECK-NOT: grove.add
// CHECK: return %[[X]], %[[X]], %[[X]], %[[H]]
func.func @add_zero(%x: tensor<?x4xf32>, %h: tensor<3xf16>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<3xf16>) {
  %z = grove.constant dense<-0.0> : tensor<4xf32>
  %z1 = grove.constant dense<-0.0> : tensor<1x4xf32>
  %zh = grove.constant dense<-0.0> : tensor<3xf16>
  %0 = grove.add %x, %z : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %1 = grove.add %z, %x : (tensor<4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %2 = grove.add %x, %z1 : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  %3 = grove.add %h, %zh : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  return %0, %1, %2, %3 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>,
      tensor<3xf16>
}

// -----

// CHECK-LABEL: func.func @sub_zero
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x4xbf16>)
// CHECK-NOT: grove.sub
// CHECK: return %[[X]]
func.func @sub_zero(%x: tensor<2x4xbf16>) -> tensor<2x4xbf16> {
  %z = grove.constant dense<0.0> : tensor<bf16>
  %0 = grove.sub %x, %z : (tensor<2x4xbf16>, tensor<bf16>) -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

// x + 1, x - 1 and 0 - x are not x.
// CHECK-LABEL: func.func @add_sub_not_identity
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>)
// CHECK-DAG: %[[ONE:.*]] = grove.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-DAG: %[[ZERO:.*]] = grove.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-DAG: %[[A:.*]] = grove.add %[[X]], %[[ONE]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-DAG: %[[B:.*]] = grove.sub %[[X]], %[[ONE]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-DAG: %[[C:.*]] = grove.sub %[[ZERO]], %[[X]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @add_sub_not_identity(%x: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %one = grove.constant dense<1.0> : tensor<4xf32>
  %zero = grove.constant dense<0.0> : tensor<4xf32>
  %0 = grove.add %x, %one : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = grove.sub %x, %one : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = grove.sub %zero, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A zero that broadcasts x to a larger shape is not an identity.
// x + +0.0 is not an identity: -0.0 + +0.0 = +0.0.
// CHECK-LABEL: func.func @add_positive_zero
// CHECK: %[[R:.*]] = grove.add
// CHECK: return %[[R]]
func.func @add_positive_zero(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = grove.constant dense<0.0> : tensor<4xf32>
  %0 = grove.add %x, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @add_zero_broadcasts
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>)
// CHECK: %[[Z:.*]] = grove.constant dense<0.000000e+00> : tensor<3x4xf32>
// CHECK-DAG: %[[A:.*]] = grove.add %[[X]], %[[Z]] : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-DAG: %[[B:.*]] = grove.sub %[[X]], %[[Z]] : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK: return %[[A]], %[[B]]
func.func @add_zero_broadcasts(%x: tensor<4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %z = grove.constant dense<0.0> : tensor<3x4xf32>
  %0 = grove.add %x, %z : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = grove.sub %x, %z : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0, %1 : tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// A constant that is zero only in some elements is not an identity.
// CHECK-LABEL: func.func @add_not_splat_zero
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2xf32>)
// CHECK: %[[C:.*]] = grove.constant dense<[0.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK: %[[A:.*]] = grove.add %[[X]], %[[C]]
// CHECK: return %[[A]]
func.func @add_not_splat_zero(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = grove.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %0 = grove.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

//===----------------------------------------------------------------------===//
// grove.mul / grove.div: x * 1, x / 1
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @mul_div_one
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x4xf32>, %[[H:[^:]*]]: tensor<2xf16>)
// CHECK-NOT: grove.mul
// CHECK-NOT: grove.div
// CHECK: return %[[X]], %[[X]], %[[X]], %[[H]]
func.func @mul_div_one(%x: tensor<?x4xf32>, %h: tensor<2xf16>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<2xf16>) {
  %one = grove.constant dense<1.0> : tensor<4xf32>
  %oneh = grove.constant dense<1.0> : tensor<f16>
  %0 = grove.mul %x, %one : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %1 = grove.mul %one, %x : (tensor<4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %2 = grove.div %x, %one : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %3 = grove.div %h, %oneh : (tensor<2xf16>, tensor<f16>) -> tensor<2xf16>
  return %0, %1, %2, %3 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>,
      tensor<2xf16>
}

// -----

// x * 0 is not 0 (NaN, inf, -0), 1 / x and x * 2 are not x, and a one that
// broadcasts x is not an identity.
// CHECK-LABEL: func.func @mul_div_not_identity
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>)
// CHECK-DAG: %[[ZERO:.*]] = grove.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-DAG: %[[ONE:.*]] = grove.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-DAG: %[[TWO:.*]] = grove.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-DAG: %[[ONES:.*]] = grove.constant dense<1.000000e+00> : tensor<2x4xf32>
// CHECK-DAG: %[[A:.*]] = grove.mul %[[X]], %[[ZERO]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-DAG: %[[B:.*]] = grove.div %[[ONE]], %[[X]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-DAG: %[[C:.*]] = grove.mul %[[X]], %[[TWO]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-DAG: %[[D:.*]] = grove.div %[[X]], %[[ONES]] : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: return %[[A]], %[[B]], %[[C]], %[[D]]
func.func @mul_div_not_identity(%x: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>) {
  %zero = grove.constant dense<0.0> : tensor<4xf32>
  %one = grove.constant dense<1.0> : tensor<4xf32>
  %two = grove.constant dense<2.0> : tensor<4xf32>
  %ones = grove.constant dense<1.0> : tensor<2x4xf32>
  %0 = grove.mul %x, %zero : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = grove.div %one, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = grove.mul %x, %two : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = grove.div %x, %ones : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
      tensor<2x4xf32>
}

//===----------------------------------------------------------------------===//
// grove.max / grove.min: max(x, x), min(x, x)
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @max_min_same
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x4xf32>)
// CHECK-NOT: grove.max
// CHECK-NOT: grove.min
// CHECK: return %[[X]], %[[X]]
func.func @max_min_same(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = grove.max %x, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = grove.min %x, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0, %1 : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @max_min_different
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>, %[[Y:[^:]*]]: tensor<4xf32>)
// CHECK-DAG: %[[A:.*]] = grove.max %[[X]], %[[Y]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-DAG: %[[B:.*]] = grove.min %[[X]], %[[Y]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: return %[[A]], %[[B]]
func.func @max_min_different(%x: tensor<4xf32>, %y: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = grove.max %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = grove.min %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// Splat constant arithmetic
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @splat_arith
// CHECK-DAG: %[[ADD:.*]] = grove.constant dense<3.500000e+00> : tensor<4xf32>
// CHECK-DAG: %[[SUB:.*]] = grove.constant dense<-5.000000e-01> : tensor<4xf32>
// CHECK-DAG: %[[MUL:.*]] = grove.constant dense<3.000000e+00> : tensor<4xf32>
// CHECK-DAG: %[[DIV:.*]] = grove.constant dense<7.500000e-01> : tensor<4xf32>
// CHECK-DAG: %[[MAX:.*]] = grove.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-DAG: %[[MIN:.*]] = grove.constant dense<1.500000e+00> : tensor<4xf32>
// CHECK-NOT: grove.add
// CHECK-NOT: grove.sub
// CHECK-NOT: grove.mul
// CHECK-NOT: grove.div
// CHECK-NOT: grove.max
// CHECK-NOT: grove.min
// CHECK: return %[[ADD]], %[[SUB]], %[[MUL]], %[[DIV]], %[[MAX]], %[[MIN]]
func.func @splat_arith() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
                             tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = grove.constant dense<1.5> : tensor<4xf32>
  %b = grove.constant dense<2.0> : tensor<4xf32>
  %0 = grove.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = grove.sub %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = grove.mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = grove.div %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = grove.max %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = grove.min %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
      tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Operand order matters for sub and div.
// CHECK-LABEL: func.func @splat_arith_reversed
// CHECK-DAG: %[[SUB:.*]] = grove.constant dense<5.000000e-01> : tensor<4xf32>
// CHECK-DAG: %[[DIV:.*]] = grove.constant dense<1.33333337> : tensor<4xf32>
// CHECK: return %[[SUB]], %[[DIV]]
func.func @splat_arith_reversed() -> (tensor<4xf32>, tensor<4xf32>) {
  %a = grove.constant dense<1.5> : tensor<4xf32>
  %b = grove.constant dense<2.0> : tensor<4xf32>
  %0 = grove.sub %b, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = grove.div %b, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Splats of different shapes fold to a splat of the broadcast shape.
// CHECK-LABEL: func.func @splat_arith_broadcast
// CHECK: %[[C:.*]] = grove.constant dense<6.000000e+00> : tensor<3x4xf32>
// CHECK-NOT: grove.mul
// CHECK: return %[[C]]
func.func @splat_arith_broadcast() -> tensor<3x4xf32> {
  %a = grove.constant dense<2.0> : tensor<4xf32>
  %b = grove.constant dense<3.0> : tensor<3x1xf32>
  %0 = grove.mul %a, %b : (tensor<4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Arithmetic rounds in the element type.
// CHECK-LABEL: func.func @splat_arith_low_precision
// CHECK-DAG: %[[H:.*]] = grove.constant dense<3.332520e-01> : tensor<2xf16>
// CHECK-DAG: %[[B:.*]] = grove.constant dense<2.560000e+02> : tensor<2xbf16>
// CHECK: return %[[H]], %[[B]]
func.func @splat_arith_low_precision() -> (tensor<2xf16>, tensor<2xbf16>) {
  %one = grove.constant dense<1.0> : tensor<2xf16>
  %three = grove.constant dense<3.0> : tensor<2xf16>
  %0 = grove.div %one, %three : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xf16>
  // 256 + 1 is not representable in bf16 (8 significant bits): ties to even.
  %big = grove.constant dense<256.0> : tensor<2xbf16>
  %b1 = grove.constant dense<1.0> : tensor<2xbf16>
  %1 = grove.add %big, %b1 : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<2xbf16>
  return %0, %1 : tensor<2xf16>, tensor<2xbf16>
}

// -----

// IEEE semantics: x / 0 is inf, and max/min propagate NaN.
// CHECK-LABEL: func.func @splat_arith_special
// CHECK-DAG: %[[INF:.*]] = grove.constant dense<0x7F800000> : tensor<2xf32>
// CHECK-DAG: %[[NAN:.*]] = grove.constant dense<0x7FC00000> : tensor<2xf32>
// CHECK: return %[[INF]], %[[NAN]], %[[NAN]]
func.func @splat_arith_special() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %one = grove.constant dense<1.0> : tensor<2xf32>
  %zero = grove.constant dense<0.0> : tensor<2xf32>
  %nan = grove.constant dense<0x7FC00000> : tensor<2xf32>
  %0 = grove.div %one, %zero : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = grove.max %one, %nan : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = grove.min %nan, %one : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Only splats fold.
// CHECK-LABEL: func.func @arith_not_splat
// CHECK-DAG: %[[A:.*]] = grove.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[B:.*]] = grove.constant dense<3.000000e+00> : tensor<2xf32>
// CHECK: %[[R:.*]] = grove.add %[[A]], %[[B]]
// CHECK: return %[[R]]
func.func @arith_not_splat() -> tensor<2xf32> {
  %a = grove.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = grove.constant dense<3.0> : tensor<2xf32>
  %0 = grove.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

//===----------------------------------------------------------------------===//
// Reductions over no axes
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @reduce_no_axes
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x4xf32>)
// CHECK-NOT: grove.reduce
// CHECK: return %[[X]], %[[X]], %[[X]]
func.func @reduce_no_axes(%x: tensor<?x4xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = grove.reduce_sum %x {axes = array<i64>} : tensor<?x4xf32> -> tensor<?x4xf32>
  %1 = grove.reduce_mean %x {axes = array<i64>, keepdims}
      : tensor<?x4xf32> -> tensor<?x4xf32>
  %2 = grove.reduce_max %x {axes = array<i64>} : tensor<?x4xf32> -> tensor<?x4xf32>
  return %0, %1, %2 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// A reduction over at least one axis stays.
// CHECK-LABEL: func.func @reduce_axes
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x4xf32>)
// CHECK-DAG: %[[A:.*]] = grove.reduce_sum %[[X]] {axes = array<i64: 1>} : tensor<?x4xf32> -> tensor<?xf32>
// CHECK-DAG: %[[B:.*]] = grove.reduce_mean %[[X]] {axes = array<i64: -1>, keepdims} : tensor<?x4xf32> -> tensor<?x1xf32>
// CHECK-DAG: %[[C:.*]] = grove.reduce_max %[[X]] {axes = array<i64: 0>} : tensor<?x4xf32> -> tensor<4xf32>
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @reduce_axes(%x: tensor<?x4xf32>)
    -> (tensor<?xf32>, tensor<?x1xf32>, tensor<4xf32>) {
  %0 = grove.reduce_sum %x {axes = array<i64: 1>} : tensor<?x4xf32> -> tensor<?xf32>
  %1 = grove.reduce_mean %x {axes = array<i64: -1>, keepdims}
      : tensor<?x4xf32> -> tensor<?x1xf32>
  %2 = grove.reduce_max %x {axes = array<i64: 0>} : tensor<?x4xf32> -> tensor<4xf32>
  return %0, %1, %2 : tensor<?xf32>, tensor<?x1xf32>, tensor<4xf32>
}

// A reshape chain whose combination would not verify is left alone.
// CHECK-LABEL: func.func @reshape_chain_not_divisible
// CHECK: grove.reshape
// CHECK: grove.reshape
func.func @reshape_chain_not_divisible(%x: tensor<12xf32>) -> tensor<?x5xf32> {
  %0 = grove.reshape %x : tensor<12xf32> -> tensor<?x3xf32>
  %1 = grove.reshape %0 : tensor<?x3xf32> -> tensor<?x5xf32>
  return %1 : tensor<?x5xf32>
}

// A reshape to its own (dynamic) type is the identity.
// CHECK-LABEL: func.func @reshape_same_dynamic
// CHECK-NOT: grove.reshape
// CHECK: return %arg0
func.func @reshape_same_dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = grove.reshape %x : tensor<?x4xf32> -> tensor<?x2x2xf32>
  %1 = grove.reshape %0 : tensor<?x2x2xf32> -> tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// Provably equal sizes need no run-time check; unknown ones keep it.
// CHECK-LABEL: func.func @agree_dims_fold
// CHECK-SAME: (%[[A:.*]]: index, %[[B:.*]]: index)
// CHECK: %[[C:.*]] = grove.agree_dims %[[A]], %[[B]], "keep" : index
// CHECK: return %[[A]], %[[C]]
func.func @agree_dims_fold(%a: index, %b: index) -> (index, index) {
  %0 = grove.agree_dims %a, %a, "same value" : index
  %c4 = arith.constant 4 : index
  %c4b = arith.constant 4 : index
  %1 = grove.agree_dims %c4, %c4b, "equal constants" : index
  %2 = arith.addi %0, %1 : index
  %3 = arith.subi %2, %c4 : index
  %4 = grove.agree_dims %a, %b, "keep" : index
  return %3, %4 : index, index
}

// -----

// one_hot(ids) @ table is a lookup of the table's rows, also batched (a
// 3x2 product). A transposed table and i64 ids (the lookup takes i32) stay
// products, and so does a table of dynamic shape (the lookup's gradient
// takes a static one); a one-hot with such a use stays for it.
// CHECK-LABEL: func.func @one_hot_matmul
// CHECK-SAME: %[[T:[^:]*]]: tensor<?xi32>, %[[E:[^:]*]]: tensor<512x64xf32>, %[[B:[^:]*]]: tensor<4x?xi32>
// CHECK-DAG: %[[X:.*]] = grove.embedding %[[E]], %[[T]] {unchecked} : (tensor<512x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
// CHECK-DAG: %[[Y:.*]] = grove.embedding %[[E]], %[[B]] {unchecked} : (tensor<512x64xf32>, tensor<4x?xi32>) -> tensor<4x?x64xf32>
// CHECK-DAG: %[[O:.*]] = grove.one_hot %[[T]]
// CHECK-DAG: grove.matmul %[[O]], %{{.*}} {transpose_rhs}
// CHECK-DAG: %[[L:.*]] = grove.one_hot %{{.*}} : tensor<?xi64>
// CHECK-DAG: grove.matmul %[[L]], %[[E]]
// CHECK-DAG: grove.matmul %{{.*}}, %{{.*}} : (tensor<?x512xf32>, tensor<512x?xf32>)
// CHECK-NOT: grove.matmul
func.func @one_hot_matmul(%t: tensor<?xi32>, %e: tensor<512x64xf32>, %b: tensor<4x?xi32>, %w: tensor<64x512xf32>, %l: tensor<?xi64>, %d: tensor<512x?xf32>)
    -> (tensor<?x64xf32>, tensor<4x?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x?xf32>) {
  %o = grove.one_hot %t : tensor<?xi32> -> tensor<?x512xf32>
  %x = grove.matmul %o, %e : (tensor<?x512xf32>, tensor<512x64xf32>) -> tensor<?x64xf32>
  %ob = grove.one_hot %b : tensor<4x?xi32> -> tensor<4x?x512xf32>
  %y = grove.matmul %ob, %e : (tensor<4x?x512xf32>, tensor<512x64xf32>) -> tensor<4x?x64xf32>
  %z = grove.matmul %o, %w {transpose_rhs} : (tensor<?x512xf32>, tensor<64x512xf32>) -> tensor<?x64xf32>
  %ol = grove.one_hot %l : tensor<?xi64> -> tensor<?x512xf32>
  %u = grove.matmul %ol, %e : (tensor<?x512xf32>, tensor<512x64xf32>) -> tensor<?x64xf32>
  %v = grove.matmul %o, %d : (tensor<?x512xf32>, tensor<512x?xf32>) -> tensor<?x?xf32>
  return %x, %y, %z, %u, %v : tensor<?x64xf32>, tensor<4x?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x?xf32>
}

// -----

// Rows gathered by a forest's position and back by its order are the rows
// themselves, also from two schedules of one forest (the fold's and its
// gradient's, before CSE); not in the other order, nor across forests.
// CHECK-LABEL: func.func @position_then_order
// CHECK-SAME: %[[H:[^:]*]]: tensor<?x8xf32>
// CHECK: %[[A:.*]] = grove.gather %[[H]], %position
// CHECK: %[[B:.*]] = grove.gather %[[H]], %order
// CHECK: %[[TWICE:.*]] = grove.gather %[[B]], %position
// CHECK: %[[OTHER:.*]] = grove.gather %[[A]], %order_
// CHECK: return %[[H]], %[[H]], %[[TWICE]], %[[OTHER]]
func.func @position_then_order(%off: tensor<?xi32>, %ch: tensor<?xi32>, %roots: tensor<?xi32>, %roots2: tensor<?xi32>,
                               %h: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %o, %p, %g, %ec, %ep, %cs, %pe, %ro, %rp, %n = grove.tree_schedule %off, %ch, %roots {arity = 0 : i64, mode = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?xi32>, tensor<?xi32>, tensor<?x4xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, index)
  %o2, %p2, %g2, %ec2, %ep2, %cs2, %pe2, %ro2, %rp2, %n2 = grove.tree_schedule %off, %ch, %roots {arity = 0 : i64, mode = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?xi32>, tensor<?xi32>, tensor<?x4xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, index)
  %o3, %p3, %g3, %ec3, %ep3, %cs3, %pe3, %ro3, %rp3, %n3 = grove.tree_schedule %off, %ch, %roots2 {arity = 0 : i64, mode = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?xi32>, tensor<?xi32>, tensor<?x4xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>, index)
  %a = grove.gather %h, %p : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %a1 = grove.gather %a, %o : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %a2 = grove.gather %a, %o2 : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %b = grove.gather %h, %o : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %b1 = grove.gather %b, %p : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %c = grove.gather %a, %o3 : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  return %a1, %a2, %b1, %c : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}
