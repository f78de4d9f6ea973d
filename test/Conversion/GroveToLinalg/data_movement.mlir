// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg | FileCheck %s

// Constants and shape ops (DataMovement.cpp), and the state ops the pass
// leaves to the ABI passes.

//===----------------------------------------------------------------------===//
// grove.constant
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @constant
// CHECK-NOT: grove.constant
// CHECK: %[[C:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: return %[[C]] : tensor<2xf32>
func.func @constant() -> tensor<2xf32> {
  %0 = grove.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @constant_splat_i32
// CHECK: %[[C:.*]] = arith.constant dense<7> : tensor<2x2xi32>
// CHECK-NEXT: return %[[C]] : tensor<2x2xi32>
func.func @constant_splat_i32() -> tensor<2x2xi32> {
  %0 = grove.constant dense<7> : tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

//===----------------------------------------------------------------------===//
// grove.reshape
//===----------------------------------------------------------------------===//

// -----

// Collapse to 1-D, then expand; the dynamic result dimension is the element
// count over the product of the static result dimensions.
// CHECK-LABEL: func.func @reshape_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>)
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D0:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x64xf32>
// CHECK: %[[N0:.*]] = arith.muli %[[ONE]], %[[D0]] : index
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[COUNT:.*]] = arith.muli %[[N0]], %[[C64]] : index
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<?x64xf32> into tensor<?xf32>
// CHECK: %[[STATIC:.*]] = arith.constant 64 : index
// CHECK: %[[DYN:.*]] = arith.divui %[[COUNT]], %[[STATIC]] : index
// A count the static dimensions do not divide is a run-time error; the view
// covers the whole multiple.
// CHECK: %[[USED:.*]] = arith.muli %[[DYN]], %[[STATIC]] : index
// CHECK: grove.agree_dims %[[COUNT]], %[[USED]], "{{.*}}data_movement.mlir:{{[0-9]+}}:{{[0-9]+}}: grove.reshape element count divisible by 64" : index
// CHECK: %[[CUT:.*]] = tensor.extract_slice %[[FLAT]][0] [%[[USED]]] [1] : tensor<?xf32> to tensor<?xf32>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[CUT]] {{\[}}[0, 1, 2]] output_shape [%[[DYN]], 8, 8] : tensor<?xf32> into tensor<?x8x8xf32>
// CHECK: return %[[R]]
func.func @reshape_dynamic(%x: tensor<?x64xf32>) -> tensor<?x8x8xf32> {
  %0 = grove.reshape %x : tensor<?x64xf32> -> tensor<?x8x8xf32>
  return %0 : tensor<?x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_static
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NOT: arith.divui
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK-NOT: arith.divui
// CHECK: %[[R:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [6, 4] : tensor<24xf32> into tensor<6x4xf32>
// CHECK: return %[[R]]
func.func @reshape_static(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %0 = grove.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

// A rank-1 input is already flat: no collapse.
// CHECK-LABEL: func.func @reshape_from_rank1
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>)
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[D0:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?xf32>
// CHECK: %[[COUNT:.*]] = arith.muli %{{.*}}, %[[D0]] : index
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[DYN:.*]] = arith.divui %[[COUNT]], %[[C4]] : index
// CHECK: %[[USED:.*]] = arith.muli %[[DYN]], %[[C4]] : index
// CHECK: grove.agree_dims %[[COUNT]], %[[USED]], "{{.*}}grove.reshape element count divisible by 4" : index
// CHECK: %[[CUT:.*]] = tensor.extract_slice %[[X]][0] [%[[USED]]] [1] : tensor<?xf32> to tensor<?xf32>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[CUT]] {{\[}}[0, 1]] output_shape [%[[DYN]], 4] : tensor<?xf32> into tensor<?x4xf32>
// CHECK: return %[[R]]
func.func @reshape_from_rank1(%x: tensor<?xf32>) -> tensor<?x4xf32> {
  %0 = grove.reshape %x : tensor<?xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// A rank-1 result is the collapsed tensor itself: no expand, no cast.
// CHECK-LABEL: func.func @reshape_to_rank1
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<?x4xf32> into tensor<?xf32>
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: tensor.cast
// CHECK: return %[[FLAT]]
func.func @reshape_to_rank1(%x: tensor<?x4xf32>) -> tensor<?xf32> {
  %0 = grove.reshape %x : tensor<?x4xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Rank 1 to rank 1: only the cast to the (dynamic) result type.
// CHECK-LABEL: func.func @reshape_rank1_to_rank1
// CHECK-SAME: (%[[X:.*]]: tensor<12xf32>)
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: %[[R:.*]] = tensor.cast %[[X]] : tensor<12xf32> to tensor<?xf32>
// CHECK: return %[[R]]
func.func @reshape_rank1_to_rank1(%x: tensor<12xf32>) -> tensor<?xf32> {
  %0 = grove.reshape %x : tensor<12xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Rank 0 to unit dimensions: an expand with no groups.
// CHECK-LABEL: func.func @reshape_from_rank0
// CHECK-SAME: (%[[X:.*]]: tensor<f32>)
// CHECK-NEXT: %[[R:.*]] = tensor.expand_shape %[[X]] [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_from_rank0(%x: tensor<f32>) -> tensor<1x1xf32> {
  %0 = grove.reshape %x : tensor<f32> -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}

// -----

// Unit dimensions to rank 0: a collapse with no groups.
// CHECK-LABEL: func.func @reshape_to_rank0
// CHECK-SAME: (%[[X:.*]]: tensor<1x1xf32>)
// CHECK-NEXT: %[[R:.*]] = tensor.collapse_shape %[[X]] [] : tensor<1x1xf32> into tensor<f32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_to_rank0(%x: tensor<1x1xf32>) -> tensor<f32> {
  %0 = grove.reshape %x : tensor<1x1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

//===----------------------------------------------------------------------===//
// grove.transpose
//===----------------------------------------------------------------------===//

// -----

// The init's dynamic size is the input dimension the permutation moves
// there.
// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x8xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D0:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x4x8xf32>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[D0]]) : tensor<8x?x4xf32>
// CHECK: %[[R:.*]] = linalg.transpose ins(%[[X]] : tensor<?x4x8xf32>) outs(%[[INIT]] : tensor<8x?x4xf32>) permutation = [2, 0, 1]
// CHECK: return %[[R]]
func.func @transpose(%x: tensor<?x4x8xf32>) -> tensor<8x?x4xf32> {
  %0 = grove.transpose %x [2, 0, 1] : tensor<?x4x8xf32> -> tensor<8x?x4xf32>
  return %0 : tensor<8x?x4xf32>
}

//===----------------------------------------------------------------------===//
// grove.concat
//===----------------------------------------------------------------------===//

// -----

// A chain of insert_slices into one empty tensor; each offset along the
// axis is the running sum of the previous inputs' sizes. The dynamic
// non-axis dimension is agreed across all inputs (each against the running
// agreement) and every input cut to it.
// CHECK-LABEL: func.func @concat_axis1
// CHECK-SAME: (%[[A:.*]]: tensor<?x3xf32>, %[[B:.*]]: tensor<?x5xf32>, %[[C:.*]]: tensor<?x1xf32>)
// CHECK: %[[NA:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x3xf32>
// CHECK: %[[NB:.*]] = tensor.dim %[[B]], %{{.*}} : tensor<?x5xf32>
// CHECK-NEXT: %[[AB:.*]] = grove.agree_dims %[[NA]], %[[NB]], "{{.*}}data_movement.mlir:{{[0-9]+}}:{{[0-9]+}}: grove.concat inputs 0 and 1, dimension 0" : index
// CHECK: %[[NC:.*]] = tensor.dim %[[C]], %{{.*}} : tensor<?x1xf32>
// CHECK-NEXT: %[[N:.*]] = grove.agree_dims %[[AB]], %[[NC]], "{{.*}}: grove.concat inputs 0 and 2, dimension 0" : index
// CHECK: %[[AS:.*]] = tensor.extract_slice %[[A]][0, 0] [%[[N]], 3] [1, 1] : tensor<?x3xf32> to tensor<?x3xf32>
// CHECK: %[[BS:.*]] = tensor.extract_slice %[[B]][0, 0] [%[[N]], 5] [1, 1] : tensor<?x5xf32> to tensor<?x5xf32>
// CHECK: %[[CS:.*]] = tensor.extract_slice %[[C]][0, 0] [%[[N]], 1] [1, 1] : tensor<?x1xf32> to tensor<?x1xf32>
// CHECK: %[[OFF0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[OFF1:.*]] = arith.addi %[[OFF0]], %[[C3]] : index
// CHECK: %[[C5:.*]] = arith.constant 5 : index
// CHECK-NEXT: %[[OFF2:.*]] = arith.addi %[[OFF1]], %[[C5]] : index
// CHECK: %[[INIT:.*]] = tensor.empty(%[[N]]) : tensor<?x9xf32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[AS]] into %[[INIT]][0, %[[OFF0]]] [%[[N]], 3] [1, 1] : tensor<?x3xf32> into tensor<?x9xf32>
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[BS]] into %[[I0]][0, %[[OFF1]]] [%[[N]], 5] [1, 1] : tensor<?x5xf32> into tensor<?x9xf32>
// CHECK: %[[I2:.*]] = tensor.insert_slice %[[CS]] into %[[I1]][0, %[[OFF2]]] [%[[N]], 1] [1, 1] : tensor<?x1xf32> into tensor<?x9xf32>
// CHECK: return %[[I2]]
func.func @concat_axis1(%a: tensor<?x3xf32>, %b: tensor<?x5xf32>, %c: tensor<?x1xf32>) -> tensor<?x9xf32> {
  %0 = grove.concat %a, %b, %c {axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x5xf32>, tensor<?x1xf32>) -> tensor<?x9xf32>
  return %0 : tensor<?x9xf32>
}

// -----

// Along a dynamic axis the result size is the runtime sum; the other
// dimension is static: nothing to check.
// CHECK-LABEL: func.func @concat_dynamic_axis
// CHECK-SAME: (%[[A:.*]]: tensor<?x3xf32>, %[[B:.*]]: tensor<2x3xf32>)
// CHECK-NOT: grove.agree_dims
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[OFF0:.*]] = arith.constant 0 : index
// CHECK: %[[NA:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x3xf32>
// CHECK: %[[OFF1:.*]] = arith.addi %[[OFF0]], %[[NA]] : index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[TOTAL:.*]] = arith.addi %[[OFF1]], %[[C2]] : index
// CHECK: %[[INIT:.*]] = tensor.empty(%[[TOTAL]]) : tensor<?x3xf32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[INIT]][%[[OFF0]], 0] [%{{.*}}, 3] [1, 1] : tensor<?x3xf32> into tensor<?x3xf32>
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][%[[OFF1]], 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<?x3xf32>
// CHECK: return %[[I1]]
func.func @concat_dynamic_axis(%a: tensor<?x3xf32>, %b: tensor<2x3xf32>) -> tensor<?x3xf32> {
  %0 = grove.concat %a, %b {axis = 0 : i64} : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

//===----------------------------------------------------------------------===//
// grove.slice
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @slice_static
// CHECK-SAME: (%[[X:.*]]: tensor<10x8xf32>)
// CHECK-NEXT: %[[R:.*]] = tensor.extract_slice %[[X]][1, 0] [3, 8] [3, 1] : tensor<10x8xf32> to tensor<3x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @slice_static(%x: tensor<10x8xf32>) -> tensor<3x8xf32> {
  %0 = grove.slice %x [1, 0] [10, 8] [3, 1] : tensor<10x8xf32> -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

// A dynamic dimension sliced to its end (limit -1) starts at min(start, dim)
// (numpy: a start past the end is empty) and has size
// ceildiv(dim - begin, stride).
// CHECK-LABEL: func.func @slice_dynamic_end
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D0:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x8xf32>
// CHECK: %[[START:.*]] = arith.constant 1 : index
// CHECK: %[[BEGIN:.*]] = arith.minsi %[[D0]], %[[START]] : index
// CHECK: %[[SPAN:.*]] = arith.subi %[[D0]], %[[BEGIN]] : index
// CHECK: %[[STRIDE:.*]] = arith.constant 3 : index
// CHECK: %[[SIZE:.*]] = arith.ceildivui %[[SPAN]], %[[STRIDE]] : index
// CHECK: %[[R:.*]] = tensor.extract_slice %[[X]][%[[BEGIN]], 2] [%[[SIZE]], 2] [3, 2] : tensor<?x8xf32> to tensor<?x2xf32>
// CHECK: return %[[R]]
func.func @slice_dynamic_end(%x: tensor<?x8xf32>) -> tensor<?x2xf32> {
  %0 = grove.slice %x [1, 2] [-1, 6] [3, 2] : tensor<?x8xf32> -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

//===----------------------------------------------------------------------===//
// grove.broadcast_to
//===----------------------------------------------------------------------===//

// -----

// The dynamic size operand sizes the init, clamped at 0; a negative size is
// reported at run time.
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @broadcast_to_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<10xf32>, %[[N:.*]]: index)
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: %[[SIZE:.*]] = arith.maxsi %[[N]], %[[ZERO]] : index
// CHECK: grove.agree_dims %[[N]], %[[SIZE]], "{{.*}}grove.broadcast_to size operand 0 is non-negative" : index
// CHECK: %[[INIT:.*]] = tensor.empty(%[[SIZE]]) : tensor<?x10xf32>
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: indexing_maps = [#[[$ROW]], #[[$ID2]]]
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%[[X]] : tensor<10xf32>) outs(%[[INIT]] : tensor<?x10xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: return %[[R]]
func.func @broadcast_to_dynamic(%x: tensor<10xf32>, %n: index) -> tensor<?x10xf32> {
  %0 = grove.broadcast_to %x (%n) : tensor<10xf32> -> tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}

// -----

// Rank extension and a stretched static 1.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-DAG: #[[$ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @broadcast_to_static
// CHECK-SAME: (%[[X:.*]]: tensor<4x1xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x4x6xf32>
// CHECK: linalg.generic
// CHECK-SAME: indexing_maps = [#[[$IN]], #[[$ID3]]]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[X]] : tensor<4x1xf32>) outs(%[[INIT]] : tensor<2x4x6xf32>)
func.func @broadcast_to_static(%x: tensor<4x1xf32>) -> tensor<2x4x6xf32> {
  %0 = grove.broadcast_to %x : tensor<4x1xf32> -> tensor<2x4x6xf32>
  return %0 : tensor<2x4x6xf32>
}

//===----------------------------------------------------------------------===//
// grove.param / grove.get_param
//===----------------------------------------------------------------------===//

// -----

// State is legal here: grove-params-to-arguments handles it later.
// CHECK: grove.param @w : tensor<4xf32>
// CHECK-LABEL: func.func @params_stay
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[W:.*]] = grove.get_param @w : tensor<4xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[X]], %[[W]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.addf
grove.param @w : tensor<4xf32>
func.func @params_stay(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = grove.get_param @w : tensor<4xf32>
  %0 = grove.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A static input fixes the dynamic result size: expand to the static shape,
// then cast to the declared type (no run-time check needed).
// CHECK-LABEL: func.func @reshape_static_to_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<12xf32>)
// CHECK-NOT: grove.agree_dims
// CHECK: %[[E:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
// CHECK: %[[R:.*]] = tensor.cast %[[E]] : tensor<3x4xf32> to tensor<?x4xf32>
// CHECK: return %[[R]]
func.func @reshape_static_to_dynamic(%x: tensor<12xf32>) -> tensor<?x4xf32> {
  %0 = grove.reshape %x : tensor<12xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Inputs empty along the axis are dropped; an empty slice reads nothing.
// CHECK-LABEL: func.func @concat_and_slice_empty
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>, %[[Y:.*]]: tensor<?x0xf32>, %[[Z:.*]]: tensor<10xf32>)
// CHECK: tensor.insert_slice %[[X]]
// CHECK-NOT: tensor.insert_slice %[[Y]]
// CHECK: tensor.empty() : tensor<0xf32>
func.func @concat_and_slice_empty(%x: tensor<?x3xf32>, %y: tensor<?x0xf32>, %z: tensor<10xf32>) -> (tensor<?x3xf32>, tensor<0xf32>) {
  %0 = grove.concat %x, %y {axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x0xf32>) -> tensor<?x3xf32>
  %1 = grove.slice %z [10] [10] [1] : tensor<10xf32> -> tensor<0xf32>
  return %0, %1 : tensor<?x3xf32>, tensor<0xf32>
}

// -----

// A splat above 64 KiB is a fill at run time: as a constant it became a
// global written out element by element (a 2^46-element one made LLVM run
// out of memory). Smaller splats stay constants.
// CHECK-LABEL: func.func @large_splat
// CHECK: %[[E:.*]] = tensor.empty() : tensor<256x65xf32>
// CHECK: %[[V:.*]] = arith.constant 1.500000e+00 : f32
// CHECK: linalg.fill ins(%[[V]] : f32) outs(%[[E]] : tensor<256x65xf32>)
// CHECK: arith.constant dense<2.000000e+00> : tensor<256x64xf32>
func.func @large_splat() -> (tensor<256x65xf32>, tensor<256x64xf32>) {
  %0 = grove.constant dense<1.5> : tensor<256x65xf32>
  %1 = grove.constant dense<2.0> : tensor<256x64xf32>
  return %0, %1 : tensor<256x65xf32>, tensor<256x64xf32>
}

// -----

// A reshape of no elements (a static 0 next to a `?`) is an empty tensor:
// collapsing `?x0` would be typed as a static 0 memref.collapse_shape
// rejects.
// CHECK-LABEL: func.func @reshape_empty
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[E:.*]] = tensor.empty(%[[C0]]) : tensor<?x5xf32>
// CHECK-NOT: tensor.collapse_shape
// CHECK: return %[[E]]
func.func @reshape_empty(%x: tensor<?x0xf32>) -> tensor<?x5xf32> {
  %0 = grove.reshape %x : tensor<?x0xf32> -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}

// -----

//===----------------------------------------------------------------------===//
// grove.gather: one generic over the result; an index outside the input's
// rows reads nothing and gives zero.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[I:.*]]: tensor<?xi32>)
// CHECK: %[[ROWS:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4xf32>
// CHECK: %[[N:.*]] = tensor.dim %[[I]], %{{.*}} : tensor<?xi32>
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[I]] : tensor<?xi32>) outs(%[[E]] : tensor<?x4xf32>)
// CHECK: ^bb0(%[[IN:.*]]: i32, %{{.*}}: f32):
// CHECK: %[[COL:.*]] = linalg.index 1 : index
// CHECK: %[[R:.*]] = arith.index_cast %[[IN]] : i32 to index
// CHECK-DAG: arith.cmpi slt, %[[R]], %[[ROWS]] : index
// CHECK-DAG: arith.cmpi sge, %[[R]], %{{.*}} : index
// CHECK: scf.if
// CHECK-NEXT: tensor.extract %[[X]][%[[R]], %[[COL]]] : tensor<?x4xf32>
// CHECK: } else {
// CHECK-NEXT: arith.constant 0.000000e+00 : f32
func.func @gather(%x: tensor<?x4xf32>, %i: tensor<?xi32>) -> tensor<?x4xf32> {
  %0 = grove.gather %x, %i : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// grove.segment_sum: one generic over the segments whose body sums its
// segment's rows; offsets[0], the base the others are relative to, is read
// inside the body (on a device the offsets are device memory), and the
// bounds are clamped to the input's rows.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @segment_sum
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[O:.*]]: tensor<?xi32>)
// CHECK: %[[S:.*]] = tensor.extract_slice %[[O]][%{{.*}}] [%[[K:.*]]] [%{{.*}}]
// CHECK: %[[T:.*]] = tensor.extract_slice %[[O]][%{{.*}}] [%[[K]]] [%{{.*}}]
// CHECK-NOT: tensor.extract %[[O]]
// CHECK-NOT: scf.if
// CHECK: %[[E:.*]] = tensor.empty(%[[K]]) : tensor<?x4xf32>
// CHECK-NOT: tensor.extract %[[O]]
// CHECK-NOT: scf.if
// CHECK: linalg.generic {{.*}} ins(%[[S]], %[[T]] : tensor<?xi32>, tensor<?xi32>) outs(%[[E]] : tensor<?x4xf32>)
// CHECK: ^bb0(%[[LO:.*]]: i32, %[[HI:.*]]: i32, %{{.*}}: f32):
// CHECK: %[[BASE:.*]] = tensor.extract %[[O]][%{{.*}}] : tensor<?xi32>
// CHECK: arith.subi %[[LO]], %[[BASE]] : i32
// CHECK: arith.subi %[[HI]], %[[BASE]] : i32
// CHECK: scf.for
// CHECK: tensor.extract %[[X]]
// CHECK: arith.addf
func.func @segment_sum(%x: tensor<?x4xf32>, %o: tensor<?xi32>) -> tensor<?x4xf32> {
  %0 = grove.segment_sum %x, %o : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
