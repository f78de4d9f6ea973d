// RUN: grove-opt %s -split-input-file --grove-write-state-in-place --cse | FileCheck %s

// grove-write-state-in-place (WriteStateInPlace.cpp): the generic computing
// a state write writes the state's own view (its init was a tensor.empty it
// never reads); the assign then copies the result onto that same view,
// which CSE (as in the pipeline) makes one value with the read of the state.
// CHECK-LABEL: func.func @update
// CHECK-SAME: (%[[P:.*]]: tensor<4x8xf32> {grove.state = @p, grove.writes}
// CHECK: %[[VIEW:.*]] = tensor.collapse_shape %[[P]] {{\[}}[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} outs(%[[VIEW]] : tensor<32xf32>)
// CHECK: grove.assign %[[R]] to %[[VIEW]] : tensor<32xf32>
func.func @update(%p: tensor<4x8xf32> {grove.state = @p, grove.writes}, %g: tensor<4x8xf32>) {
  %cp = tensor.collapse_shape %p [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %cg = tensor.collapse_shape %g [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %e = tensor.empty() : tensor<32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%cp, %cg : tensor<32xf32>, tensor<32xf32>) outs(%e : tensor<32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  %x = tensor.expand_shape %r [[0, 1]] output_shape [4, 8] : tensor<32xf32> into tensor<4x8xf32>
  grove.assign %x to %p : tensor<4x8xf32>
  return
}

// -----

// The update moves to the end, next to its write, after every other op
// (here a read of the old state, and the allocation its sum needs).
// CHECK-LABEL: func.func @read_after
// CHECK-SAME: (%[[P:.*]]: tensor<4xf32> {grove.state = @p, grove.writes}
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<4xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[P]], %{{.*}} : tensor<4xf32>, tensor<4xf32>) outs(%[[P]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0
// CHECK: grove.assign %[[R]] to %[[P]] : tensor<4xf32>
func.func @read_after(%p: tensor<4xf32> {grove.state = @p, grove.writes}, %g: tensor<4xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%p, %g : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %z = arith.constant dense<0.0> : tensor<f32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%p : tensor<4xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  grove.assign %r to %p : tensor<4xf32>
  return %sum : tensor<f32>
}

// -----

// Not rewritten: the init is read (an accumulation), or the update's result
// is also used before the state is written, with the old state read after
// it.
// CHECK-LABEL: func.func @accumulates
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: linalg.generic {{.*}} outs(%[[Z]] : tensor<4xf32>)
func.func @accumulates(%p: tensor<4xf32> {grove.state = @p, grove.writes}, %g: tensor<4x3xf32>) {
  %z = arith.constant dense<0.0> : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%g : tensor<4x3xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  grove.assign %r to %p : tensor<4xf32>
  return
}

// -----

// CHECK-LABEL: func.func @used_before
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<4xf32>)
func.func @used_before(%p: tensor<4xf32> {grove.state = @p, grove.writes}, %g: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%p, %g : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %old = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%p, %r : tensor<4xf32>, tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  grove.assign %r to %p : tensor<4xf32>
  return %old, %r : tensor<4xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// Of two updates, the one whose state the other reads (old) keeps its own
// buffer, and its write stays a copy; the other writes in place.
// CHECK-LABEL: func.func @reads_other
// CHECK-SAME: (%[[A:[^:]*]]: tensor<4xf32> {grove.state = @a, grove.writes}, %[[B:[^:]*]]: tensor<4xf32> {grove.state = @b, grove.writes}
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[NA:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<4xf32>)
// CHECK: %[[NB:.*]] = linalg.generic {{.*}} ins(%[[B]], %[[A]] : tensor<4xf32>, tensor<4xf32>) outs(%[[B]] : tensor<4xf32>)
// CHECK: grove.assign %[[NA]] to %[[A]]
// CHECK: grove.assign %[[NB]] to %[[B]]
func.func @reads_other(%a: tensor<4xf32> {grove.state = @a, grove.writes}, %b: tensor<4xf32> {grove.state = @b, grove.writes}) {
  %e = tensor.empty() : tensor<4xf32>
  %na = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  %nb = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%b, %a : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %z = arith.addf %x, %y : f32
    linalg.yield %z : f32
  } -> tensor<4xf32>
  grove.assign %na to %a : tensor<4xf32>
  grove.assign %nb to %b : tensor<4xf32>
  return
}
