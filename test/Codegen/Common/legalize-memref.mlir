// RUN: grove-opt %s -split-input-file --grove-legalize-memref | FileCheck %s

// grove-legalize-memref (LegalizeMemRef.cpp).

//===----------------------------------------------------------------------===//
// memref.copy
//===----------------------------------------------------------------------===//

// A strided source: linalg.copy (loops), not a memrefCopy call.
// CHECK-LABEL: func.func @copy_strided_source
// CHECK-SAME: (%[[SRC:.*]]: memref<4x8xf32, strided<[16, 1], offset: ?>>, %[[DST:.*]]: memref<4x8xf32>)
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%[[SRC]] : memref<4x8xf32, strided<[16, 1], offset: ?>>) outs(%[[DST]] : memref<4x8xf32>)
// CHECK-NOT: memref.copy
func.func @copy_strided_source(%src: memref<4x8xf32, strided<[16, 1], offset: ?>>, %dst: memref<4x8xf32>) {
  memref.copy %src, %dst : memref<4x8xf32, strided<[16, 1], offset: ?>> to memref<4x8xf32>
  return
}

// -----

// CHECK-LABEL: func.func @copy_strided_target
// CHECK-SAME: (%[[SRC:.*]]: memref<?x8xf32>, %[[DST:.*]]: memref<?x8xf32, strided<[16, 1]>>)
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%[[SRC]] : memref<?x8xf32>) outs(%[[DST]] : memref<?x8xf32, strided<[16, 1]>>)
func.func @copy_strided_target(%src: memref<?x8xf32>, %dst: memref<?x8xf32, strided<[16, 1]>>) {
  memref.copy %src, %dst : memref<?x8xf32> to memref<?x8xf32, strided<[16, 1]>>
  return
}

// -----

// Both contiguous: stays a memref.copy (a memcpy).
// CHECK-LABEL: func.func @copy_contiguous
// CHECK-SAME: (%[[SRC:.*]]: memref<?x8xf32>, %[[DST:.*]]: memref<?x8xf32>)
// CHECK-NEXT: memref.copy %[[SRC]], %[[DST]] : memref<?x8xf32> to memref<?x8xf32>
// CHECK-NOT: linalg.copy
func.func @copy_contiguous(%src: memref<?x8xf32>, %dst: memref<?x8xf32>) {
  memref.copy %src, %dst : memref<?x8xf32> to memref<?x8xf32>
  return
}

// -----

// Unranked copies are left alone.
// CHECK-LABEL: func.func @copy_unranked
// CHECK-NEXT: memref.copy %{{.*}}, %{{.*}} : memref<*xf32> to memref<*xf32>
// CHECK-NOT: linalg.copy
func.func @copy_unranked(%src: memref<*xf32>, %dst: memref<*xf32>) {
  memref.copy %src, %dst : memref<*xf32> to memref<*xf32>
  return
}

//===----------------------------------------------------------------------===//
// memref.expand_shape
//===----------------------------------------------------------------------===//

// -----

// Two dynamic sizes in one group: a reinterpret_cast whose outer stride is
// the inner size (the source is contiguous, so its metadata folds away).
// CHECK-LABEL: func.func @expand_two_dynamic
// CHECK-SAME: (%[[SRC:.*]]: memref<?xf32>, %[[M:.*]]: index, %[[N:.*]]: index)
// CHECK-NOT: memref.expand_shape
// CHECK: %[[R:.*]] = memref.reinterpret_cast %[[SRC]] to offset: [0], sizes: [%[[M]], %[[N]]], strides: [%[[N]], 1] : memref<?xf32> to memref<?x?xf32>
// CHECK: return %[[R]]
func.func @expand_two_dynamic(%src: memref<?xf32>, %m: index, %n: index) -> memref<?x?xf32> {
  %r = memref.expand_shape %src [[0, 1]] output_shape [%m, %n] : memref<?xf32> into memref<?x?xf32>
  return %r : memref<?x?xf32>
}

// -----

// Strides computed per group, innermost first: group [0, 1] over a source
// stride of 4, group [2, 3] over a source stride of 1.
// CHECK-LABEL: func.func @expand_two_groups
// CHECK-SAME: (%[[SRC:.*]]: memref<?x4xf32>, %[[M:.*]]: index, %[[N:.*]]: index)
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[S0:.*]] = arith.muli %[[N]], %[[C4]] : index
// CHECK: %[[R:.*]] = memref.reinterpret_cast %[[SRC]] to offset: [0], sizes: [%[[M]], %[[N]], 2, 2], strides: [%[[S0]], 4, 2, 1] : memref<?x4xf32> to memref<?x?x2x2xf32>
// CHECK: return %[[R]]
func.func @expand_two_groups(%src: memref<?x4xf32>, %m: index, %n: index) -> memref<?x?x2x2xf32> {
  %r = memref.expand_shape %src [[0, 1], [2, 3]] output_shape [%m, %n, 2, 2] : memref<?x4xf32> into memref<?x?x2x2xf32>
  return %r : memref<?x?x2x2xf32>
}

// -----

// A strided source: offset and strides come from its metadata.
// CHECK-LABEL: func.func @expand_strided_source
// CHECK-SAME: (%[[SRC:.*]]: memref<?xf32, strided<[?], offset: ?>>, %[[M:.*]]: index, %[[N:.*]]: index)
// CHECK: %{{.*}}, %[[OFF:[a-z0-9_]+]], %{{.*}}, %[[STRIDE:[a-z0-9_]+]] = memref.extract_strided_metadata %[[SRC]]
// CHECK: %[[OUTER:.*]] = arith.muli %[[STRIDE]], %[[N]] : index
// CHECK: %[[R:.*]] = memref.reinterpret_cast %[[SRC]] to offset: [%[[OFF]]], sizes: [%[[M]], %[[N]]], strides: [%[[OUTER]], %[[STRIDE]]] : memref<?xf32, strided<[?], offset: ?>> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: return %[[R]]
func.func @expand_strided_source(%src: memref<?xf32, strided<[?], offset: ?>>, %m: index, %n: index) -> memref<?x?xf32, strided<[?, ?], offset: ?>> {
  %r = memref.expand_shape %src [[0, 1]] output_shape [%m, %n] : memref<?xf32, strided<[?], offset: ?>> into memref<?x?xf32, strided<[?, ?], offset: ?>>
  return %r : memref<?x?xf32, strided<[?, ?], offset: ?>>
}

// -----

// One dynamic size per group: expand-strided-metadata copes, left alone.
// CHECK-LABEL: func.func @expand_one_dynamic
// CHECK-SAME: (%[[SRC:.*]]: memref<?xf32>, %[[M:.*]]: index)
// CHECK-NEXT: %[[R:.*]] = memref.expand_shape %[[SRC]] {{\[}}[0, 1]] output_shape [%[[M]], 4] : memref<?xf32> into memref<?x4xf32>
// CHECK-NOT: memref.reinterpret_cast
func.func @expand_one_dynamic(%src: memref<?xf32>, %m: index) -> memref<?x4xf32> {
  %r = memref.expand_shape %src [[0, 1]] output_shape [%m, 4] : memref<?xf32> into memref<?x4xf32>
  return %r : memref<?x4xf32>
}

// -----

// Dynamic sizes in different groups: one per group, left alone.
// CHECK-LABEL: func.func @expand_dynamic_in_separate_groups
// CHECK-NEXT: memref.expand_shape %{{.*}} {{\[}}[0, 1], [2, 3]] output_shape [%{{.*}}, 2, %{{.*}}, 2] : memref<?x?xf32> into memref<?x2x?x2xf32>
// CHECK-NOT: memref.reinterpret_cast
func.func @expand_dynamic_in_separate_groups(%src: memref<?x?xf32>, %m: index, %n: index) -> memref<?x2x?x2xf32> {
  %r = memref.expand_shape %src [[0, 1], [2, 3]] output_shape [%m, 2, %n, 2] : memref<?x?xf32> into memref<?x2x?x2xf32>
  return %r : memref<?x2x?x2xf32>
}
