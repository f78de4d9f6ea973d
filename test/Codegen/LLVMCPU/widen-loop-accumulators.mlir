// RUN: grove-opt %s -split-input-file --grove-widen-loop-accumulators | FileCheck %s

// grove-widen-loop-accumulators (WidenLoopAccumulators.cpp): a bf16/f16
// iter_arg that the body reads only widened to f32 and yields narrowed from
// f32 is carried in f32: widened once before the loop, narrowed once after.

// A bf16 dot product as arith-emulate-unsupported-floats leaves it.
// CHECK-LABEL: func.func @dot_bf16
// CHECK-SAME: (%[[A:.*]]: memref<1024xbf16>, %[[B:.*]]: memref<1024xbf16>, %[[INIT:.*]]: bf16)
// CHECK: %[[WIDE:.*]] = arith.extf %[[INIT]] : bf16 to f32
// CHECK-NEXT: %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[WIDE]]) -> (f32) {
// CHECK-NOT: %[[ACC]] : bf16
// CHECK: %[[P:.*]] = arith.mulf
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NEXT: scf.yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT: return %[[R]] : bf16
func.func @dot_bf16(%a: memref<1024xbf16>, %b: memref<1024xbf16>, %init: bf16) -> bf16 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1024 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (bf16) {
    %w = arith.extf %acc : bf16 to f32
    %x = memref.load %a[%i] : memref<1024xbf16>
    %y = memref.load %b[%i] : memref<1024xbf16>
    %xw = arith.extf %x : bf16 to f32
    %yw = arith.extf %y : bf16 to f32
    %p = arith.mulf %xw, %yw : f32
    %s = arith.addf %w, %p : f32
    %t = arith.truncf %s : f32 to bf16
    scf.yield %t : bf16
  }
  return %r : bf16
}

// -----

// A nest (a convolution's reduction over channels, then positions): the
// inner loop widens first, which leaves the outer one's accumulator read
// only widened (the inner init) and yielded narrowed (the inner result), so
// it widens too: one widening before the nest, one narrowing after it.
// CHECK-LABEL: func.func @nest_f16
// CHECK-SAME: (%[[X:.*]]: memref<8x8xf16>, %[[INIT:.*]]: f16)
// CHECK: %[[WIDE:.*]] = arith.extf %[[INIT]] : f16 to f32
// CHECK-NEXT: %[[OUTER:.*]] = scf.for {{.*}} iter_args(%[[A0:.*]] = %[[WIDE]]) -> (f32) {
// CHECK-NEXT: %[[INNER:.*]] = scf.for {{.*}} iter_args(%[[A1:.*]] = %[[A0]]) -> (f32) {
// CHECK: arith.addf %[[A1]], %{{.*}} : f32
// CHECK: scf.yield %{{.*}} : f32
// CHECK: scf.yield %[[INNER]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[OUTER]] : f32 to f16
// CHECK-NOT: arith.truncf
// CHECK: return %[[R]] : f16
func.func @nest_f16(%x: memref<8x8xf16>, %init: f16) -> f16 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%outer = %init) -> (f16) {
    %in = scf.for %j = %c0 to %c8 step %c1 iter_args(%acc = %outer) -> (f16) {
      %w = arith.extf %acc : f16 to f32
      %v = memref.load %x[%i, %j] : memref<8x8xf16>
      %vw = arith.extf %v : f16 to f32
      %s = arith.addf %w, %vw : f32
      %t = arith.truncf %s : f32 to f16
      scf.yield %t : f16
    }
    scf.yield %in : f16
  }
  return %r : f16
}

// -----

// Left alone: an accumulator read other than widened (stored each step),
// one yielded from something other than a narrowing, and f32 ones.
// CHECK-LABEL: func.func @not_widened
// CHECK: iter_args(%{{.*}} = %{{.*}}) -> (bf16)
// CHECK: iter_args(%{{.*}} = %{{.*}}) -> (bf16)
// CHECK: iter_args(%{{.*}} = %{{.*}}) -> (f32)
// CHECK-NOT: -> (f32)
// CHECK: return
func.func @not_widened(%m: memref<bf16>, %init: bf16, %other: bf16, %f: f32) -> (bf16, bf16, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r0 = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %init) -> (bf16) {
    memref.store %acc, %m[] : memref<bf16>
    %w = arith.extf %acc : bf16 to f32
    %t = arith.truncf %w : f32 to bf16
    scf.yield %t : bf16
  }
  %r1 = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %init) -> (bf16) {
    %w = arith.extf %acc : bf16 to f32
    scf.yield %other : bf16
  }
  %r2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %f) -> (f32) {
    %s = arith.addf %acc, %f : f32
    scf.yield %s : f32
  }
  return %r0, %r1, %r2 : bf16, bf16, f32
}
