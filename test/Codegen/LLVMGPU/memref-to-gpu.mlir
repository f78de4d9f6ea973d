// RUN: grove-opt %s -split-input-file --grove-memref-to-gpu | FileCheck %s

// grove-memref-to-gpu (MemRefToGPU.cpp): after deallocation every heap
// buffer lives on the device. The non-contiguous copy it rejects is in
// memref-to-gpu-invalid.mlir.

// Static and dynamic allocations become (synchronous) device allocations,
// deallocations device frees; the `alignment` bufferization asked for is
// dropped (device blocks are 256-byte aligned).
// CHECK-LABEL: func.func @alloc_dealloc
// CHECK-SAME: (%[[N:.*]]: index)
// CHECK-NEXT: %[[A:.*]] = gpu.alloc () : memref<4x8xf32>
// CHECK-NEXT: %[[B:.*]] = gpu.alloc (%[[N]]) : memref<?x8xf32>
// CHECK-NEXT: gpu.dealloc %[[A]] : memref<4x8xf32>
// CHECK-NEXT: return %[[B]] : memref<?x8xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
func.func @alloc_dealloc(%n: index) -> memref<?x8xf32> {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  %b = memref.alloc(%n) {alignment = 64 : i64} : memref<?x8xf32>
  memref.dealloc %a : memref<4x8xf32>
  return %b : memref<?x8xf32>
}

// -----

// A contiguous copy is a gpu.memcpy (target first), static or dynamic.
// CHECK-LABEL: func.func @contiguous_copy
// CHECK-SAME: (%[[X:.*]]: memref<?x8xf32>, %[[G:.*]]: memref<2xf32>, %[[N:.*]]: index)
// CHECK-NEXT: %[[B:.*]] = gpu.alloc (%[[N]]) : memref<?x8xf32>
// CHECK-NEXT: gpu.memcpy %[[B]], %[[X]] : memref<?x8xf32>, memref<?x8xf32>
// CHECK-NEXT: %[[C:.*]] = gpu.alloc () : memref<2xf32>
// CHECK-NEXT: gpu.memcpy %[[C]], %[[G]] : memref<2xf32>, memref<2xf32>
// CHECK-NOT: memref.copy
// CHECK: return
func.func @contiguous_copy(%x: memref<?x8xf32>, %g: memref<2xf32>, %n: index) -> (memref<?x8xf32>, memref<2xf32>) {
  %b = memref.alloc(%n) : memref<?x8xf32>
  memref.copy %x, %b : memref<?x8xf32> to memref<?x8xf32>
  %c = memref.alloc() : memref<2xf32>
  memref.copy %g, %c : memref<2xf32> to memref<2xf32>
  return %b, %c : memref<?x8xf32>, memref<2xf32>
}

// -----

// Stack buffers (deallocation's ownership flags) stay on the host, and the
// ops that only read metadata are untouched.
// CHECK-LABEL: func.func @alloca_untouched
// CHECK-SAME: (%[[X:.*]]: memref<?x8xf32>)
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[FLAGS:.*]] = memref.alloca() : memref<2xi1>
// CHECK-NEXT: %[[D:.*]] = memref.dim %[[X]], %[[C0]] : memref<?x8xf32>
// CHECK-NEXT: %[[B:.*]] = gpu.alloc (%[[D]]) : memref<?x8xf32>
// CHECK-NEXT: %[[V:.*]] = memref.subview %[[B]][0, 0] [%[[D]], 4] [1, 1]
// CHECK-NEXT: gpu.dealloc %[[B]] : memref<?x8xf32>
// CHECK-NEXT: return %[[FLAGS]] : memref<2xi1>
// CHECK-NOT: gpu.alloc
func.func @alloca_untouched(%x: memref<?x8xf32>) -> memref<2xi1> {
  %c0 = arith.constant 0 : index
  %flags = memref.alloca() : memref<2xi1>
  %d = memref.dim %x, %c0 : memref<?x8xf32>
  %b = memref.alloc(%d) : memref<?x8xf32>
  %v = memref.subview %b[0, 0] [%d, 4] [1, 1] : memref<?x8xf32> to memref<?x4xf32, strided<[8, 1]>>
  memref.dealloc %b : memref<?x8xf32>
  return %flags : memref<2xi1>
}

// -----

// Buffers a kernel uses are passed into the launch unchanged.
// CHECK-LABEL: func.func @with_launch
// CHECK: %[[B:.*]] = gpu.alloc () : memref<16xf32>
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[B]][%{{.*}}] : memref<16xf32>
// CHECK: gpu.terminator
// CHECK: gpu.dealloc %[[B]] : memref<16xf32>
func.func @with_launch() {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.alloc() : memref<16xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    memref.store %zero, %b[%tx] : memref<16xf32>
    gpu.terminator
  }
  memref.dealloc %b : memref<16xf32>
  return
}
