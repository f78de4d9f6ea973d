// RUN: grove-opt %s --convert-linalg-to-gpu-launch=narrow-indices --canonicalize | FileCheck %s
// RUN: grove-opt %s --convert-linalg-to-gpu-launch | FileCheck %s --check-prefix=WIDE
// RUN: grove-opt %s --convert-linalg-to-gpu-launch=narrow-indices | FileCheck %s --check-prefix=RAW

// convert-linalg-to-gpu-launch{narrow-indices}: thread ids (and a warp's
// reduction points) are delinearized with 32-bit divisions where the space
// split has at most 2^31 - 1 points: at compile time for static extents,
// else behind an scf.if on the extent, uniform across the grid, whose
// other branch is the 64-bit affine.delinearize_index. Off by default.

// Static 64 x 96: 32-bit only, no branch (decided by the pass itself: the
// RAW run has no canonicalization); the column is the remainder by 96.
// CHECK-LABEL: func.func @static_map(
// CHECK: scf.if
// CHECK-NEXT: %[[G:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK-NEXT: %[[J:.*]] = arith.remui %[[G]], %c96_i32 : i32
// CHECK-NEXT: %[[JI:.*]] = arith.index_castui %[[J]] : i32 to index
// CHECK-NEXT: %[[I:.*]] = arith.divui %[[G]], %c96_i32 : i32
// CHECK-NEXT: %[[II:.*]] = arith.index_castui %[[I]] : i32 to index
// CHECK-NEXT: memref.load %{{.*}}[%[[II]], %[[JI]]]
// CHECK-NOT: affine.delinearize_index
// RAW-LABEL: func.func @static_map(
// RAW-NOT: arith.cmpi ule
// RAW-NOT: affine.delinearize_index
// RAW: arith.remui
// RAW-LABEL: func.func @dynamic_map(
// WIDE-LABEL: func.func @static_map(
// WIDE: affine.delinearize_index %{{.*}} into (64, 96)
// WIDE-NOT: index_castui
func.func @static_map(%a: memref<64x96xf32>, %b: memref<64x96xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%a : memref<64x96xf32>) outs(%b : memref<64x96xf32>) {
  ^bb0(%x: f32, %y: f32):
    %r = arith.addf %x, %x : f32
    linalg.yield %r : f32
  }
  return
}

// Dynamic batch: the extent decides at run time.
// CHECK-LABEL: func.func @dynamic_map(
// CHECK: %[[TOTAL:.*]] = arith.muli %{{.*}}, %c128 : index
// CHECK: gpu.launch
// CHECK: %[[FITS:.*]] = arith.cmpi ule, %[[TOTAL]], %c2147483647 : index
// CHECK-NEXT: %[[P:.*]]:2 = scf.if %[[FITS]] -> (index, index) {
// CHECK-NEXT: arith.index_castui %{{.*}} : index to i32
// CHECK: } else {
// CHECK-NEXT: %[[W:.*]]:2 = affine.delinearize_index %{{.*}} into (%{{.*}}, 128) : index, index
// CHECK-NEXT: scf.yield %[[W]]#0, %[[W]]#1
// CHECK: memref.load %{{.*}}[%[[P]]#0, %[[P]]#1]
func.func @dynamic_map(%a: memref<?x128xf32>, %b: memref<?x128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%a : memref<?x128xf32>) outs(%b : memref<?x128xf32>) {
  ^bb0(%x: f32, %y: f32):
    %r = arith.addf %x, %x : f32
    linalg.yield %r : f32
  }
  return
}

// 2^32 points: 64-bit only.
// CHECK-LABEL: func.func @too_large(
// CHECK-NOT: i32
// CHECK: affine.delinearize_index %{{.*}} into (65536, 65536)
// CHECK-NOT: i32
// CHECK: return
func.func @too_large(%a: memref<65536x65536xi8>, %b: memref<65536x65536xi8>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%a : memref<65536x65536xi8>) outs(%b : memref<65536x65536xi8>) {
  ^bb0(%x: i8, %y: i8):
    linalg.yield %x : i8
  }
  return
}

// A warp per pooled point: the point (dynamic: branch) and each lane's
// reduction point in the static 56 x 56 plane (32-bit, no branch).
// CHECK-LABEL: func.func @pool(
// CHECK: scf.if %{{.*}} -> (index, index) {
// CHECK: affine.delinearize_index %{{.*}} into (%{{.*}}, 64)
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %c3136 step %c32
// CHECK-NEXT: %[[R32:.*]] = arith.index_castui %[[R]] : index to i32
// CHECK-NEXT: arith.remui %[[R32]], %c56_i32 : i32
// CHECK: arith.divui %[[R32]], %c56_i32 : i32
// CHECK-NOT: affine.delinearize_index
// CHECK: gpu.subgroup_reduce add
func.func @pool(%u: memref<?x64x56x56xf32>, %s: memref<?x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
    ins(%u : memref<?x64x56x56xf32>) outs(%s : memref<?x64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}
