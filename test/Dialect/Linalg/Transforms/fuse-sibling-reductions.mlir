// RUN: grove-opt %s -split-input-file --grove-fuse-sibling-reductions | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#scalar = affine_map<(d0, d1) -> ()>

// LAMB's two norms after grove-split-full-reductions: the parameter's
// partial sums, then the update direction's (which reads the parameter
// too). The final sum of the first sits between them and moves after the
// merge; the shared parameter is one operand, and each result keeps its
// users.
// CHECK-LABEL: func.func @lamb_norms
// CHECK-SAME: %[[P:[^:]*]]: tensor<16x64xf32>, %[[G:[^:]*]]: tensor<16x64xf32>
// CHECK: %[[F:.*]]:2 = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%[[P]], %[[G]] : tensor<16x64xf32>, tensor<16x64xf32>) outs(%{{.*}}, %{{.*}} : tensor<16xf32>, tensor<16xf32>)
// CHECK-NEXT: ^bb0(%[[IP:.*]]: f32, %[[IG:.*]]: f32, %[[A0:.*]]: f32, %[[A1:.*]]: f32):
// CHECK: %[[SQ:.*]] = arith.mulf %[[IP]], %[[IP]]
// CHECK: %[[S0:.*]] = arith.addf %[[SQ]], %[[A0]]
// CHECK: %[[U:.*]] = arith.addf %[[IG]], %[[IP]]
// CHECK: %[[UU:.*]] = arith.mulf %[[U]], %[[U]]
// CHECK: %[[S1:.*]] = arith.addf %[[UU]], %[[A1]]
// CHECK: linalg.yield %[[S0]], %[[S1]]
// CHECK: %[[T0:.*]] = linalg.generic {{.*}} ins(%[[F]]#0 : tensor<16xf32>)
// CHECK: %[[T1:.*]] = linalg.generic {{.*}} ins(%[[F]]#1 : tensor<16xf32>)
// CHECK: return %[[T0]], %[[T1]]
func.func @lamb_norms(%p: tensor<16x64xf32>, %g: tensor<16x64xf32>) -> (tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %s = tensor.empty() : tensor<f32>
  %sinit = linalg.fill ins(%zero : f32) outs(%s : tensor<f32>) -> tensor<f32>
  %pn = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %y = arith.addf %sq, %acc : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  %pt = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%pn : tensor<16xf32>) outs(%sinit : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<f32>
  %un = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]} ins(%g, %p : tensor<16x64xf32>, tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%gx: f32, %px: f32, %acc: f32):
    %u = arith.addf %gx, %px : f32
    %uu = arith.mulf %u, %u : f32
    %y = arith.addf %uu, %acc : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  %ut = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%un : tensor<16xf32>) outs(%sinit : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<f32>
  return %pt, %ut : tensor<f32>, tensor<f32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Three norms of one tensor become one loop with three results.
// CHECK-LABEL: func.func @three
// CHECK: %[[F:.*]]:3 = linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return %[[F]]#0, %[[F]]#1, %[[F]]#2
func.func @three(%p: tensor<16x64xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.maximumf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  %c = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %y = arith.addf %sq, %acc : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  return %a, %b, %c : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#bcast = affine_map<(d0, d1) -> (d0)>

// Left apart: the second reads the first's result (LANS's gradient norm
// before the normalised gradient's moments); a reduction that shares no
// tensor with the others (nothing would be read once instead of twice);
// one over another iteration space.
// CHECK-LABEL: func.func @apart
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: linalg.generic
func.func @apart(%p: tensor<16x64xf32>, %q: tensor<16x64xf32>, %r: tensor<16x32xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %n = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  %d = linalg.generic {indexing_maps = [#id, #bcast, #row], iterator_types = ["parallel", "reduction"]} ins(%p, %n : tensor<16x64xf32>, tensor<16xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%x: f32, %s: f32, %acc: f32):
    %u = arith.divf %x, %s : f32
    %y = arith.addf %u, %acc : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  %o = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%q : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  %w = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%r : tensor<16x32xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  return %d, %o, %w : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A call between them reads the first's result: it may have effects, so
// it cannot move past the second, and the two stay apart.
// CHECK-LABEL: func.func @effect_between
// CHECK: linalg.generic
// CHECK: call @sink
// CHECK: linalg.generic
func.func private @sink(tensor<16xf32>)
func.func @effect_between(%p: tensor<16x64xf32>) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  func.call @sink(%a) : (tensor<16xf32>) -> ()
  %b = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.maximumf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  return %b : tensor<16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A call between them reads nothing of the first, but may write what it
// reads (a state's buffer): the merge would read it after the call.
// CHECK-LABEL: func.func @write_between
// CHECK: linalg.generic
// CHECK: call @touch
// CHECK: linalg.generic
func.func private @touch()
func.func @write_between(%p: tensor<16x64xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  func.call @touch() : () -> ()
  %b = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.maximumf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Left as written: a reduction reading linalg.index, one with an
// attribute of its own, and dynamic loops.
// CHECK-LABEL: func.func @not_candidates
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @dynamic
// CHECK-COUNT-2: linalg.generic
func.func @not_candidates(%p: tensor<16x64xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %i = linalg.index 1 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    %m = arith.mulf %x, %f : f32
    %y = arith.addf %m, %acc : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<16x64xf32>) outs(%init : tensor<16xf32>) attrs = {test.keep} {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.maximumf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}
func.func @dynamic(%p: tensor<?x64xf32>, %init: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %a = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<?x64xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<?xf32>
  %b = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<?x64xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.maximumf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<?xf32>
  return %a, %b : tensor<?xf32>, tensor<?xf32>
}

// -----

// Equal reductions are one: a batch norm's gradient sums dy for its input's
// gradient and again for its bias's, each into a fresh buffer filled with
// zero (allocations, which CSE keeps apart). The second's users read the
// first; its fill and allocation go.
// CHECK-LABEL: func.func @equal_sums
// CHECK-SAME: %[[DY:[^:]*]]: tensor<?x16x8x8xf32>
// CHECK-COUNT-1: bufferization.alloc_tensor
// CHECK-NOT: bufferization.alloc_tensor
// CHECK: %[[S:.*]] = linalg.reduce ins(%[[DY]] : tensor<?x16x8x8xf32>)
// CHECK-NOT: linalg.reduce
// CHECK: return %[[S]], %[[S]]
func.func @equal_sums(%dy: tensor<?x16x8x8xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %zero2 = arith.constant 0.0 : f32
  %a = bufferization.alloc_tensor() : tensor<16xf32>
  %ai = linalg.fill ins(%zero : f32) outs(%a : tensor<16xf32>) -> tensor<16xf32>
  %s1 = linalg.reduce ins(%dy : tensor<?x16x8x8xf32>) outs(%ai : tensor<16xf32>) dimensions = [0, 2, 3]
    (%in: f32, %init: f32) {
      %y = arith.addf %in, %init : f32
      linalg.yield %y : f32
    }
  %b = bufferization.alloc_tensor() : tensor<16xf32>
  %bi = linalg.fill ins(%zero2 : f32) outs(%b : tensor<16xf32>) -> tensor<16xf32>
  %s2 = linalg.reduce ins(%dy : tensor<?x16x8x8xf32>) outs(%bi : tensor<16xf32>) dimensions = [0, 2, 3]
    (%in: f32, %init: f32) {
      %y = arith.addf %in, %init : f32
      linalg.yield %y : f32
    }
  return %s1, %s2 : tensor<16xf32>, tensor<16xf32>
}

// -----

// Not equal: another body (a product), another fill value, an init that is
// not a fresh fill (an argument, which the op accumulates onto).
// CHECK-LABEL: func.func @unequal_sums
// CHECK-COUNT-4: linalg.reduce
func.func @unequal_sums(%dy: tensor<?x16x8x8xf32>, %acc: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %a = bufferization.alloc_tensor() : tensor<16xf32>
  %ai = linalg.fill ins(%zero : f32) outs(%a : tensor<16xf32>) -> tensor<16xf32>
  %s1 = linalg.reduce ins(%dy : tensor<?x16x8x8xf32>) outs(%ai : tensor<16xf32>) dimensions = [0, 2, 3]
    (%in: f32, %init: f32) {
      %y = arith.addf %in, %init : f32
      linalg.yield %y : f32
    }
  %b = bufferization.alloc_tensor() : tensor<16xf32>
  %bi = linalg.fill ins(%zero : f32) outs(%b : tensor<16xf32>) -> tensor<16xf32>
  %s2 = linalg.reduce ins(%dy : tensor<?x16x8x8xf32>) outs(%bi : tensor<16xf32>) dimensions = [0, 2, 3]
    (%in: f32, %init: f32) {
      %y = arith.mulf %in, %init : f32
      linalg.yield %y : f32
    }
  %c = bufferization.alloc_tensor() : tensor<16xf32>
  %ci = linalg.fill ins(%one : f32) outs(%c : tensor<16xf32>) -> tensor<16xf32>
  %s3 = linalg.reduce ins(%dy : tensor<?x16x8x8xf32>) outs(%ci : tensor<16xf32>) dimensions = [0, 2, 3]
    (%in: f32, %init: f32) {
      %y = arith.addf %in, %init : f32
      linalg.yield %y : f32
    }
  %s4 = linalg.reduce ins(%dy : tensor<?x16x8x8xf32>) outs(%acc : tensor<16xf32>) dimensions = [0, 2, 3]
    (%in: f32, %init: f32) {
      %y = arith.addf %in, %init : f32
      linalg.yield %y : f32
    }
  return %s1, %s2, %s3, %s4 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// Twins that share their init (not a fresh fill each): the later one goes,
// the shared fill stays for the earlier one. Twins in different blocks
// stay apart.
// CHECK-LABEL: func.func @shared_init
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: %[[S:.*]] = linalg.reduce {{.*}} outs(%[[F]] : tensor<16xf32>)
// CHECK-NOT: linalg.reduce
// CHECK: scf.if
// CHECK: linalg.reduce
// CHECK: return %[[S]], %[[S]]
func.func @shared_init(%dy: tensor<4x16xf32>, %c: i1) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = bufferization.alloc_tensor() : tensor<16xf32>
  %ai = linalg.fill ins(%zero : f32) outs(%a : tensor<16xf32>) -> tensor<16xf32>
  %s1 = linalg.reduce ins(%dy : tensor<4x16xf32>) outs(%ai : tensor<16xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %y = arith.addf %in, %init : f32
      linalg.yield %y : f32
    }
  %s2 = linalg.reduce ins(%dy : tensor<4x16xf32>) outs(%ai : tensor<16xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %y = arith.addf %in, %init : f32
      linalg.yield %y : f32
    }
  %s3 = scf.if %c -> tensor<16xf32> {
    %b = bufferization.alloc_tensor() : tensor<16xf32>
    %bi = linalg.fill ins(%zero : f32) outs(%b : tensor<16xf32>) -> tensor<16xf32>
    %r = linalg.reduce ins(%dy : tensor<4x16xf32>) outs(%bi : tensor<16xf32>) dimensions = [0]
      (%in: f32, %init: f32) {
        %y = arith.addf %in, %init : f32
        linalg.yield %y : f32
      }
    scf.yield %r : tensor<16xf32>
  } else {
    scf.yield %s1 : tensor<16xf32>
  }
  return %s1, %s2, %s3 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}
