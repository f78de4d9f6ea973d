// RUN: grove-opt %s -split-input-file --grove-shorten-buffer-lifetimes | FileCheck %s

// grove-shorten-buffer-lifetimes (ShortenBufferLifetimes.cpp): a dealloc of
// an allocation of the same block moves to right after the last operation
// of the block that uses the buffer or anything derived from it.

// A chain of layers: each buffer is freed as soon as the next layer has
// read it, not at the end of the function.
// CHECK-LABEL: func.func @chain
// CHECK: %[[A:.*]] = memref.alloc
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[A]]
// CHECK-NEXT: %[[B:.*]] = memref.alloc
// CHECK-NEXT: linalg.copy ins(%[[A]] {{.*}} outs(%[[B]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: linalg.copy ins(%[[B]] {{.*}} outs(%{{.*}}
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func @chain(%out: memref<16xf32>) {
  %cst = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<16xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<16xf32>)
  %b = memref.alloc() : memref<16xf32>
  linalg.copy ins(%a : memref<16xf32>) outs(%b : memref<16xf32>)
  linalg.copy ins(%b : memref<16xf32>) outs(%out : memref<16xf32>)
  memref.dealloc %a : memref<16xf32>
  memref.dealloc %b : memref<16xf32>
  return
}

// -----

// A use through a view, and one nested in a loop: the dealloc follows the
// last of them (the loop).
// CHECK-LABEL: func.func @views_and_loops
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: %[[V:.*]] = memref.expand_shape %[[A]]
// CHECK: linalg.copy ins(%{{.*}} : memref<16xf32>) outs(%[[A]]
// CHECK: scf.for
// CHECK: memref.load %[[V]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: return
func.func @views_and_loops(%in: memref<16xf32>, %out: memref<4x4xf32>, %sink: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<16xf32>
  %v = memref.expand_shape %a [[0, 1]] output_shape [4, 4] : memref<16xf32> into memref<4x4xf32>
  linalg.copy ins(%in : memref<16xf32>) outs(%a : memref<16xf32>)
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %v[%i, %i] : memref<4x4xf32>
    memref.store %x, %sink[] : memref<f32>
  }
  linalg.fill ins(%zero : f32) outs(%out : memref<4x4xf32>)
  memref.dealloc %a : memref<16xf32>
  return
}

// -----

// Left alone: a buffer whose view reaches the terminator (it escapes).
// CHECK-LABEL: func.func @escapes
// CHECK: memref.alloc
// CHECK-NEXT: memref.expand_shape
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
func.func @escapes() -> memref<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<16xf32>
  %v = memref.expand_shape %a [[0, 1]] output_shape [4, 4] : memref<16xf32> into memref<4x4xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<16xf32>)
  memref.dealloc %a : memref<16xf32>
  return %v : memref<4x4xf32>
}

// The outer buffer is also freed inside the scf.if (an alias's dealloc in
// another block): its own dealloc stays last. The inner one moves up.
// CHECK-LABEL: func.func @other_block
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: scf.if
// CHECK-NEXT: %[[B:.*]] = memref.alloc
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[B]]
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: linalg.fill {{.*}} outs(%[[A]]
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: return
func.func @other_block(%c: i1, %out: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<16xf32>
  scf.if %c {
    %b = memref.alloc() : memref<16xf32>
    linalg.fill ins(%zero : f32) outs(%b : memref<16xf32>)
    memref.dealloc %a : memref<16xf32>
    memref.dealloc %b : memref<16xf32>
  }
  linalg.fill ins(%zero : f32) outs(%a : memref<16xf32>)
  linalg.fill ins(%zero : f32) outs(%out : memref<16xf32>)
  memref.dealloc %a : memref<16xf32>
  return
}
