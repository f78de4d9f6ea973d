// RUN: grove-opt %s -split-input-file --grove-stage-device-constants | FileCheck %s

// grove-stage-device-constants (StageDeviceConstants.cpp): kernels cannot
// read a host memref.global, so each memref.get_global is copied into a
// fresh buffer right after it, and every use (kernels, copies, returns)
// takes the buffer; the global itself is read only by that copy.

// CHECK-LABEL: memref.global "private" constant @bias : memref<4xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
// CHECK-LABEL: func.func @one_global
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>, %[[Y:.*]]: memref<4xf32>)
// CHECK-NEXT: %[[G:.*]] = memref.get_global @bias : memref<4xf32>
// CHECK-NEXT: %[[BUF:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[G]], %[[BUF]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT: linalg.add ins(%[[X]], %[[BUF]] : memref<4xf32>, memref<4xf32>) outs(%[[Y]] : memref<4xf32>)
// CHECK-NEXT: memref.copy %[[BUF]], %[[Y]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT: return
memref.global "private" constant @bias : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @one_global(%x: memref<4xf32>, %y: memref<4xf32>) {
  %g = memref.get_global @bias : memref<4xf32>
  linalg.add ins(%x, %g : memref<4xf32>, memref<4xf32>) outs(%y : memref<4xf32>)
  memref.copy %g, %y : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Each get_global gets its own buffer, rank 0 included; a returned constant
// returns the buffer (deallocation then hands it to the caller).
// CHECK-LABEL: func.func @two_globals
// CHECK-SAME: (%[[Y:.*]]: memref<2x2xf16>)
// CHECK-NEXT: %[[G0:.*]] = memref.get_global @table : memref<2x2xf16>
// CHECK-NEXT: %[[B0:.*]] = memref.alloc() : memref<2x2xf16>
// CHECK-NEXT: memref.copy %[[G0]], %[[B0]] : memref<2x2xf16> to memref<2x2xf16>
// CHECK-NEXT: %[[G1:.*]] = memref.get_global @half : memref<f32>
// CHECK-NEXT: %[[B1:.*]] = memref.alloc() : memref<f32>
// CHECK-NEXT: memref.copy %[[G1]], %[[B1]] : memref<f32> to memref<f32>
// CHECK-NEXT: memref.copy %[[B0]], %[[Y]] : memref<2x2xf16> to memref<2x2xf16>
// CHECK-NEXT: return %[[B1]] : memref<f32>
memref.global "private" constant @table : memref<2x2xf16> = dense<[[1.0, 2.0], [3.0, 4.0]]>
memref.global "private" constant @half : memref<f32> = dense<0.5>
func.func @two_globals(%y: memref<2x2xf16>) -> memref<f32> {
  %g = memref.get_global @table : memref<2x2xf16>
  %h = memref.get_global @half : memref<f32>
  memref.copy %g, %y : memref<2x2xf16> to memref<2x2xf16>
  return %h : memref<f32>
}

// -----

// The same global read twice: two independent copies.
// CHECK-LABEL: func.func @same_global_twice
// CHECK: %[[G0:.*]] = memref.get_global @c : memref<3xf32>
// CHECK-NEXT: %[[B0:.*]] = memref.alloc() : memref<3xf32>
// CHECK-NEXT: memref.copy %[[G0]], %[[B0]]
// CHECK-NEXT: %[[G1:.*]] = memref.get_global @c : memref<3xf32>
// CHECK-NEXT: %[[B1:.*]] = memref.alloc() : memref<3xf32>
// CHECK-NEXT: memref.copy %[[G1]], %[[B1]]
// CHECK-NEXT: return %[[B0]], %[[B1]]
memref.global "private" constant @c : memref<3xf32> = dense<1.0>
func.func @same_global_twice() -> (memref<3xf32>, memref<3xf32>) {
  %a = memref.get_global @c : memref<3xf32>
  %b = memref.get_global @c : memref<3xf32>
  return %a, %b : memref<3xf32>, memref<3xf32>
}

// -----

// Functions without globals are unchanged: no buffer, no copy.
// CHECK-LABEL: func.func @no_globals
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>)
// CHECK-NEXT: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[X]], %[[A]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT: return %[[A]] : memref<4xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
func.func @no_globals(%x: memref<4xf32>) -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  return %a : memref<4xf32>
}
