// RUN: grove-opt %s -split-input-file --grove-fuse-elementwise | FileCheck %s

// grove-fuse-elementwise (FuseElementwise.cpp): upstream's elementwise
// fusion, but only where nothing is recomputed (save elementwise ops
// under a full reduction) and no named contraction turns into a generic.

#id = affine_map<(d0, d1) -> (d0, d1)>

// A chain of elementwise generics becomes one.
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %1 = math.exp %a : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%0, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %3 = arith.mulf %a, %b : f32
    linalg.yield %3 : f32
  } -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Into a reduction that reads each element once (exp then row sums).
// CHECK-LABEL: func.func @into_reduction
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: math.exp
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @into_reduction(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %1 = math.exp %a : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %2 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%0 : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %3 = arith.addf %a, %o : f32
    linalg.yield %3 : f32
  } -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

#vec = affine_map<(d0) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A per-channel producer that the consumer broadcasts (the BN + ReLU before
// split attention's fc2): fused, its sqrt and divide would run at every
// point of the consumer's other loops, so it stays a generic of its own.
// CHECK-LABEL: func.func @broadcast_consumer
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]}
// CHECK: math.sqrt
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[P]], %{{.*}} : tensor<8xf32>, tensor<4x8xf32>)
// CHECK-NOT: math.sqrt
// CHECK: return
func.func @broadcast_consumer(%v: tensor<8xf32>, %w: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]} ins(%v : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %1 = math.sqrt %a : f32
    linalg.yield %1 : f32
  } -> tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [#col, #id, #row], iterator_types = ["parallel", "reduction"]} ins(%0, %w : tensor<8xf32>, tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %3 = arith.mulf %a, %b : f32
    %4 = arith.addf %3, %o : f32
    linalg.yield %4 : f32
  } -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A producer with two users (two consumers) is not duplicated into both:
// it fuses into the first, which keeps its result for the second, and that
// one then fuses too. The exp is computed once, in one loop.
// CHECK-LABEL: func.func @two_users
// CHECK: %[[F:.*]]:2 = linalg.generic
// CHECK: math.exp
// CHECK-NOT: math.exp
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return %[[F]]#0, %[[F]]#1
func.func @two_users(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %1 = math.exp %a : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%0, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %3 = arith.mulf %a, %b : f32
    linalg.yield %3 : f32
  } -> tensor<4x8xf32>
  %4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%0, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %5 = arith.addf %a, %b : f32
    linalg.yield %5 : f32
  } -> tensor<4x8xf32>
  return %2, %4 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A named contraction stays named (convert-linalg-to-blas takes it), so the
// elementwise producer of its operand is not fused into it.
// CHECK-LABEL: func.func @matmul_consumer
// CHECK: %[[P:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.matmul ins(%[[P]], %{{.*}} : tensor<4x8xf32>, tensor<8x2xf32>)
func.func @matmul_consumer(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>, %init: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %1 = math.exp %a : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %2 = linalg.matmul ins(%0, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %2 : tensor<4x2xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A state write is moved to the end of its block, after which the new
// moment m' (written as state and read by the parameter's update) fuses
// into the update: one generic yields both, computed once, and the writes
// read its results.
// CHECK-LABEL: func.func @moment_and_update
// CHECK-SAME: (%[[P:[^:]*]]: tensor<8xf32> {grove.state = @p, grove.writes}, %[[M:[^:]*]]: tensor<8xf32> {grove.state = @m, grove.writes}
// CHECK: %[[F:.*]]:2 = linalg.generic
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.subf
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: grove.assign %[[F]]#0 to %[[M]]
// CHECK: grove.assign %[[F]]#1 to %[[P]]
func.func @moment_and_update(%p: tensor<8xf32> {grove.state = @p, grove.writes}, %m: tensor<8xf32> {grove.state = @m, grove.writes}, %g: tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %m2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%m, %g : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %c = arith.constant 0.9 : f32
    %x = arith.mulf %a, %c : f32
    %y = arith.addf %x, %b : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  grove.assign %m2 to %m : tensor<8xf32>
  %p2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%p, %m2 : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %y = arith.subf %a, %b : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  grove.assign %p2 to %p : tensor<8xf32>
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// A producer read by another op before its consumer stays: fusing would
// recompute it (upstream keeps it) or move its result past that reader.
// CHECK-LABEL: func.func @reader_before
// CHECK: %[[A:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: tensor.extract %[[A]]
// CHECK: linalg.generic {{.*}} ins(%[[A]] :
// CHECK-NOT: math.exp
// CHECK: return
func.func @reader_before(%x: tensor<8xf32>) -> (f32, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = math.exp %v : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %c0 = arith.constant 0 : index
  %first = tensor.extract %a[%c0] : tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = arith.negf %v : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  return %first, %b : f32, tensor<8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

// A full reduction (a norm) of an elementwise result that an update also
// reads recomputes it (RecomputeIntoFullReduction): the norm reads %x, the
// update fuses the rest, and the result is never stored. A linalg.reduce
// to a scalar is a generic first, which fusion can take.
// CHECK-LABEL: func.func @norm_and_update
// CHECK: %[[N:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[X:[^ ]*]] : tensor<8xf32>)
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[U:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[X]], %[[N]] : tensor<8xf32>, tensor<f32>)
// CHECK: math.exp
// CHECK: arith.divf
// CHECK-NOT: linalg.generic
// CHECK: return %[[U]]
func.func @norm_and_update(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = math.exp %v : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%u : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = arith.mulf %v, %v : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %s = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %n = linalg.reduce ins(%sq : tensor<8xf32>) outs(%s : tensor<f32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %y = arith.addf %a, %b : f32
      linalg.yield %y : f32
    }
  %r = linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel"]} ins(%u, %n : tensor<8xf32>, tensor<f32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %d: f32, %o: f32):
    %y = arith.divf %v, %d : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// A reduction that keeps a dimension (per-row sums, as batch statistics)
// does not recompute: the shared elementwise result is stored once.
// CHECK-LABEL: func.func @row_sums_keep_producer
// CHECK: %[[U:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.reduce ins(%[[U]]
// CHECK: return
func.func @row_sums_keep_producer(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %u = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = math.exp %v : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<4xf32>
  %s = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4xf32>) -> tensor<4xf32>
  %n = linalg.reduce ins(%u : tensor<4x8xf32>) outs(%s : tensor<4xf32>) dimensions = [1]
    (%a: f32, %b: f32) {
      %y = arith.addf %a, %b : f32
      linalg.yield %y : f32
    }
  return %n, %u : tensor<4xf32>, tensor<4x8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

// A sum of exp(x) with exp(x) read later too: the sum recomputes it
// (RecomputeIntoFullReduction), it does not keep it as a second result
// (FuseIntoLaterUsers would, in a loop with nothing to share).
// CHECK-LABEL: func.func @sum_then_reader
// CHECK: %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[X:[^ ]*]] : tensor<8xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: math.exp
// CHECK: %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[X]], %[[S]] : tensor<8xf32>, tensor<f32>)
// CHECK: math.exp
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @sum_then_reader(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = math.exp %v : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %s = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %n = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]} ins(%u : tensor<8xf32>) outs(%s : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %y = arith.addf %v, %acc : f32
    linalg.yield %y : f32
  } -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel"]} ins(%u, %n : tensor<8xf32>, tensor<f32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %d: f32, %o: f32):
    %y = arith.divf %v, %d : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

// Not recomputed: exp(x) is also returned (a reader that cannot fuse it,
// so it is stored anyway). A dot product of sin(x) with itself reads one
// operand once deduplicated, and recomputes sin once.
// CHECK-LABEL: func.func @stored_anyway
// CHECK: %[[U:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[U]] : tensor<8xf32>)
// CHECK-NOT: math.exp
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[X:[^ ]*]] : tensor<8xf32>)
// CHECK: math.sin
// CHECK-NOT: math.sin
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[X]] : tensor<8xf32>)
// CHECK: math.sin
// CHECK: return
func.func @stored_anyway(%x: tensor<8xf32>) -> (tensor<f32>, tensor<8xf32>, tensor<f32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = math.exp %v : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %s = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %n = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]} ins(%u : tensor<8xf32>) outs(%s : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %y = arith.addf %v, %acc : f32
    linalg.yield %y : f32
  } -> tensor<f32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = math.sin %v : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #scalar], iterator_types = ["reduction"]} ins(%w, %w : tensor<8xf32>, tensor<8xf32>) outs(%s : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %y = arith.addf %p, %acc : f32
    linalg.yield %y : f32
  } -> tensor<f32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%w : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = arith.negf %v : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  return %n, %u, %d, %neg : tensor<f32>, tensor<8xf32>, tensor<f32>, tensor<8xf32>
}
