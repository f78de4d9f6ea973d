// RUN: grove-opt %s -split-input-file --grove-guard-state-writes | FileCheck %s

// grove-guard-state-writes (GuardStateWrites.cpp): the ops that may write a
// grove.writes state buffer (or a view of it) run only when the call has not
// failed so far; the runtime is asked once, before the first of them.

// An optimizer's in-place step and a copy into state are guarded; reads of
// the state, the compute before it and the deallocation are not. Both
// guards share one query.
// CHECK-LABEL: func.func @step
// CHECK: linalg.generic {{.*}} ins(%arg1 {{.*}} outs(%[[TMP:.*]] :
// CHECK: %[[FAILED:.*]] = call @grove_rt_call_failed() : () -> i32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[OK:.*]] = arith.cmpi eq, %[[FAILED]], %[[ZERO]] : i32
// CHECK-NEXT: scf.if %[[OK]] {
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[VIEW:.*]] :
// CHECK: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: scf.if %[[OK]] {
// CHECK-NEXT: memref.copy %[[TMP]], %arg1
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %[[TMP]]
// CHECK-NEXT: return
// CHECK: func.func private @grove_rt_call_failed() -> i32
#id = affine_map<(d0) -> (d0)>
func.func @step(%w: memref<2x4xf32> {grove.state = @w, grove.writes},
                %count: memref<f32> {grove.state = @count, grove.writes},
                %g: memref<8xf32>) {
  %tmp = memref.alloc() : memref<f32>
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
                  iterator_types = []}
      ins(%count : memref<f32>) outs(%tmp : memref<f32>) {
  ^bb0(%c: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.addf %c, %one : f32
    linalg.yield %n : f32
  }
  %flat = memref.collapse_shape %w [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%g : memref<8xf32>) outs(%flat : memref<8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %d = arith.subf %y, %x : f32
    linalg.yield %d : f32
  }
  memref.copy %tmp, %count : memref<f32> to memref<f32>
  memref.dealloc %tmp : memref<f32>
  return
}

// -----

// A write through a loop's iter_arg that starts as a view of state is a
// write of state: the loop is guarded. A service that reads only state the
// function does not write runs unguarded before the query.
// CHECK-LABEL: func.func @loop
// CHECK: call @reads(%arg1)
// CHECK: memref.subview
// CHECK-NEXT: %[[FAILED:.*]] = call @grove_rt_call_failed()
// CHECK: scf.if
// CHECK-NEXT: scf.for
// CHECK: memref.store
func.func private @reads(memref<4xf32>)
func.func @loop(%s: memref<4xf32> {grove.state = @s, grove.writes},
                %r: memref<4xf32> {grove.state = @r}) {
  func.call @reads(%r) : (memref<4xf32>) -> ()
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %v = memref.subview %s[0] [4] [1] : memref<4xf32> to memref<4xf32, strided<[1]>>
  %out = scf.for %i = %c0 to %c4 step %c1 iter_args(%m = %v) -> memref<4xf32, strided<[1]>> {
    memref.store %one, %m[%i] : memref<4xf32, strided<[1]>>
    scf.yield %m : memref<4xf32, strided<[1]>>
  }
  return
}

// -----

// A function that writes no state, or only reads it, is left alone.
// CHECK-LABEL: func.func @reader
// CHECK-NOT: grove_rt_call_failed
// CHECK: return
func.func @reader(%s: memref<4xf32> {grove.state = @s}, %out: memref<4xf32>) {
  memref.copy %s, %out : memref<4xf32> to memref<4xf32>
  return
}
