// RUN: grove-opt %s -split-input-file --grove-overlap-collectives | FileCheck %s

// grove-overlap-collectives: each bucket's all-reduce starts where it was
// and is waited for where its result is first needed. The first bucket's
// split and reshape move down to the optimizer step, so its wait follows
// the second bucket's gradient and start: both move while the backward
// runs. Only the first bucket's wait would run between the second's
// all-reduce and its use: it stays one call (the runtime moves collectives
// in order, so the wait would hide none of its time).

// CHECK-LABEL: func.func @buckets
// CHECK: %[[G1:.*]] = grove.mul %{{.*}}, %{{.*}} : (tensor<4x4xf32>
// CHECK: %[[F1:.*]] = grove.reshape %[[G1]]
// CHECK-NEXT: %[[R1:.*]] = grove.all_reduce_start mean %[[F1]] : tensor<16xf32>
// CHECK-NEXT: %[[G0:.*]] = grove.mul %{{.*}}, %{{.*}} : (tensor<8xf32>
// CHECK-NEXT: %[[G2:.*]] = grove.mul
// CHECK-NEXT: %[[B:.*]] = grove.concat %[[G0]], %[[G2]]
// CHECK-NEXT: %[[M:.*]] = grove.all_reduce mean %[[B]] : tensor<10xf32>
// CHECK-NEXT: %[[W1:.*]] = grove.collective_wait %[[R1]] : tensor<16xf32>
// CHECK-NEXT: %[[A1:.*]] = grove.reshape %[[W1]] : tensor<16xf32> -> tensor<4x4xf32>
// CHECK-NEXT: %[[S2:.*]] = grove.slice %[[M]] [8] [10] [1]
// CHECK-NEXT: %[[S0:.*]] = grove.slice %[[M]] [0] [8] [1]
// CHECK-NEXT: grove.sgd [@w0, @w1, @w2](%[[S0]], %[[A1]], %[[S2]])
grove.param @w0 : tensor<8xf32>
grove.param @w1 : tensor<4x4xf32>
grove.param @w2 : tensor<2xf32>
func.func @buckets(%x: tensor<8xf32>, %y: tensor<4x4xf32>, %z: tensor<2xf32>) {
  %g1 = grove.mul %y, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %f1 = grove.reshape %g1 : tensor<4x4xf32> -> tensor<16xf32>
  %m1 = grove.all_reduce mean %f1 : tensor<16xf32>
  %a1 = grove.reshape %m1 : tensor<16xf32> -> tensor<4x4xf32>
  %g0 = grove.mul %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %g2 = grove.mul %z, %z : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %b = grove.concat %g0, %g2 {axis = 0} : (tensor<8xf32>, tensor<2xf32>) -> tensor<10xf32>
  %m = grove.all_reduce mean %b : tensor<10xf32>
  %s0 = grove.slice %m [0] [8] [1] : tensor<10xf32> -> tensor<8xf32>
  %s2 = grove.slice %m [8] [10] [1] : tensor<10xf32> -> tensor<2xf32>
  grove.sgd [@w0, @w1, @w2] (%s0, %a1, %s2) {lr = 0.1 : f64}
      : tensor<8xf32>, tensor<4x4xf32>, tensor<2xf32>
  return
}

// -----

// What depends on the result never moves past a state write (it may read
// the state's old value): the sum stays before the grove.set_param, its
// wait after the exponential, which overlaps the all-reduce.
// CHECK-LABEL: func.func @state_write
// CHECK: %[[R:.*]] = grove.all_reduce_start mean
// CHECK-NEXT: grove.exp
// CHECK-NEXT: %[[W:.*]] = grove.collective_wait %[[R]]
// CHECK-NEXT: %[[D:.*]] = grove.add %[[W]], %{{.*}}
// CHECK-NEXT: grove.set_param @p = %{{.*}}
// CHECK-NEXT: grove.mul %[[D]], %{{.*}}
grove.param @p : tensor<8xf32>
func.func @state_write(%x: tensor<8xf32>) -> tensor<8xf32> {
  %m = grove.all_reduce mean %x : tensor<8xf32>
  %d = grove.add %m, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %n = grove.exp %x : tensor<8xf32>
  grove.set_param @p = %n : tensor<8xf32>
  %e = grove.mul %d, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %e : tensor<8xf32>
}

// -----

// Nothing to overlap: only a reshape runs before the result is needed
// (by a state write), or the shape is dynamic (the wait needs a static
// one).
// CHECK-LABEL: func.func @unchanged
// CHECK-NOT: grove.all_reduce_start
// CHECK: grove.all_reduce mean %{{.*}} : tensor<8xf32>
// CHECK-NEXT: grove.reshape
// CHECK-NEXT: grove.set_param @q
// CHECK: grove.all_reduce mean %{{.*}} : tensor<?xf32>
// CHECK-NOT: grove.all_reduce_start
grove.param @q : tensor<2x4xf32>
func.func @unchanged(%x: tensor<8xf32>, %d: tensor<?xf32>)
    -> (tensor<8xf32>, tensor<?xf32>) {
  %a = grove.all_reduce mean %x : tensor<8xf32>
  %r = grove.reshape %a : tensor<8xf32> -> tensor<2x4xf32>
  grove.set_param @q = %r : tensor<2x4xf32>
  %e = grove.all_reduce mean %d : tensor<?xf32>
  %f = grove.mul %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %g = grove.add %e, %e : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %f, %g : tensor<8xf32>, tensor<?xf32>
}

// -----

// The wait never follows a state write, even when the result is needed
// only by the return: a failed or stalled collective ends the call before
// any state changes.
// CHECK-LABEL: func.func @returned
// CHECK: %[[R:.*]] = grove.all_reduce_start mean
// CHECK-NEXT: %[[E:.*]] = grove.exp
// CHECK-NEXT: %[[W:.*]] = grove.collective_wait %[[R]]
// CHECK-NEXT: grove.set_param @s = %[[E]]
// CHECK-NEXT: return %[[W]]
grove.param @s : tensor<8xf32>
func.func @returned(%x: tensor<8xf32>) -> tensor<8xf32> {
  %m = grove.all_reduce mean %x : tensor<8xf32>
  %e = grove.exp %x : tensor<8xf32>
  grove.set_param @s = %e : tensor<8xf32>
  return %m : tensor<8xf32>
}

// -----

// Top-k's gathers: both start where they were, and the scatter that
// decompresses them waits with the optimizer step, after the backward
// below (the second product).
// CHECK-LABEL: func.func @gathers
// CHECK: %[[RV:.*]] = grove.all_gather_start %{{.*}} : tensor<4xf32>
// CHECK-NEXT: %[[RI:.*]] = grove.all_gather_start %{{.*}} : tensor<4xi32>
// CHECK-NEXT: %[[G:.*]] = grove.mul
// CHECK-NEXT: %[[V:.*]] = grove.collective_wait %[[RV]] : tensor<?x4xf32>
// CHECK-NEXT: %[[I:.*]] = grove.collective_wait %[[RI]] : tensor<?x4xi32>
// CHECK-NEXT: grove.scatter_add %{{.*}}, %[[I]], %[[V]]
// CHECK-NEXT: grove.sgd
grove.param @a : tensor<16xf32>
grove.param @b : tensor<8xf32>
func.func @gathers(%e: tensor<16xf32>, %z: tensor<16xf32>, %y: tensor<8xf32>) {
  %v, %i = grove.top_k %e {k = 4} : tensor<16xf32> -> (tensor<4xf32>, tensor<4xi32>)
  %gv = grove.all_gather %v : (tensor<4xf32>) -> tensor<?x4xf32>
  %gi = grove.all_gather %i : (tensor<4xi32>) -> tensor<?x4xi32>
  %d = grove.scatter_add %z, %gi, %gv : (tensor<16xf32>, tensor<?x4xi32>, tensor<?x4xf32>) -> tensor<16xf32>
  %g = grove.mul %y, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  grove.sgd [@a, @b] (%d, %g) {lr = 0.1 : f64} : tensor<16xf32>, tensor<8xf32>
  return
}

// -----

// grove.world_size only reads (its declared effect; it stays an op until
// convert-grove-checks-to-runtime): the dependent ops move past it, and so
// does the wait. A call may write: nothing moves past it.
// CHECK-LABEL: func.func @calls
// CHECK: %[[R:.*]] = grove.all_reduce_start mean
// CHECK-NEXT: grove.world_size
// CHECK-NEXT: grove.exp
// CHECK-NEXT: %[[W:.*]] = grove.collective_wait %[[R]]
// CHECK-NEXT: grove.add %[[W]]
// CHECK-NEXT: call @opaque()
func.func private @opaque()
func.func @calls(%x: tensor<8xf32>) -> (tensor<8xf32>, index) {
  %m = grove.all_reduce mean %x : tensor<8xf32>
  %n = grove.world_size : index
  %e = grove.exp %x : tensor<8xf32>
  %d = grove.add %m, %e : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.call @opaque() : () -> ()
  return %d, %n : tensor<8xf32>, index
}
