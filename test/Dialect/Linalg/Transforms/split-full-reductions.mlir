// RUN: grove-opt %s -split-input-file --grove-split-full-reductions | FileCheck %s
// RUN: grove-opt %s -split-input-file --grove-split-full-reductions="max-parts=4 min-part=16 min-size=64" | FileCheck %s --check-prefix=SMALL

#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

// A sum of squares over 2^18 elements: 64 partial sums of 4096 contiguous
// elements (a parallel loop), then the sum of the partials.
// CHECK-LABEL: func.func @norm
// CHECK: %[[X:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [64, 4096] : tensor<262144xf32> into tensor<64x4096xf32>
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<64x4096xf32>) outs(%{{.*}} : tensor<64xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[P]] : tensor<64xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: arith.addf
func.func @norm(%x: tensor<262144xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %n = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]} ins(%x : tensor<262144xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %y = arith.addf %sq, %acc : f32
    linalg.yield %y : f32
  } -> tensor<f32>
  return %n : tensor<f32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>

// 40000 = 2^6 * 625: 8 parts of 5000 (16 would leave 2500 each, under
// min-part). With the small options, 4 parts of 10000.
// CHECK-LABEL: func.func @divisor
// CHECK: tensor.expand_shape {{.*}} output_shape [8, 5000]
// SMALL-LABEL: func.func @divisor
// SMALL: tensor.expand_shape {{.*}} output_shape [4, 10000]
func.func @divisor(%x: tensor<40000xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %n = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]} ins(%x : tensor<40000xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %y = arith.addf %v, %acc : f32
    linalg.yield %y : f32
  } -> tensor<f32>
  return %n : tensor<f32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Left whole: too short (1024 < min-size), dynamic, an odd size (no
// divisor), and a per-row reduction (it has a parallel loop already).
// With the small options the short one splits.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tensor.expand_shape
// CHECK: return
// SMALL-LABEL: func.func @left_alone
// SMALL: tensor.expand_shape {{.*}} output_shape [4, 256] : tensor<1024xf32>
// SMALL-NOT: tensor.expand_shape
// SMALL: return
func.func @left_alone(%short: tensor<1024xf32>, %dyn: tensor<?xf32>, %odd: tensor<65537xf32>, %rows: tensor<64x4096xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %a = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]} ins(%short : tensor<1024xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %y = arith.addf %v, %acc : f32
    linalg.yield %y : f32
  } -> tensor<f32>
  %b = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]} ins(%dyn : tensor<?xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %y = arith.addf %v, %acc : f32
    linalg.yield %y : f32
  } -> tensor<f32>
  %c = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]} ins(%odd : tensor<65537xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %y = arith.addf %v, %acc : f32
    linalg.yield %y : f32
  } -> tensor<f32>
  %re = tensor.empty() : tensor<64xf32>
  %rinit = linalg.fill ins(%zero : f32) outs(%re : tensor<64xf32>) -> tensor<64xf32>
  %d = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%rows : tensor<64x4096xf32>) outs(%rinit : tensor<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %y = arith.addf %v, %acc : f32
    linalg.yield %y : f32
  } -> tensor<64xf32>
  return %a, %b, %c, %d : tensor<f32>, tensor<f32>, tensor<f32>, tensor<64xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
#first = affine_map<(d0) -> (0)>

// Left whole although long: a body reading linalg.index (split, it would
// count parts) and a broadcast read through a constant index (not a
// permutation upstream could split).
// CHECK-LABEL: func.func @index_and_broadcast
// CHECK-NOT: tensor.expand_shape
// CHECK: return
// SMALL-LABEL: func.func @index_and_broadcast
// SMALL-NOT: tensor.expand_shape
// SMALL: return
func.func @index_and_broadcast(%x: tensor<65536xf32>, %s: tensor<1xf32>) -> (tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %a = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]} ins(%x : tensor<65536xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %p = arith.mulf %v, %f : f32
    %y = arith.addf %p, %acc : f32
    linalg.yield %y : f32
  } -> tensor<f32>
  %b = linalg.generic {indexing_maps = [#id, #first, #scalar], iterator_types = ["reduction"]} ins(%x, %s : tensor<65536xf32>, tensor<1xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %w: f32, %acc: f32):
    %p = arith.mulf %v, %w : f32
    %y = arith.addf %p, %acc : f32
    linalg.yield %y : f32
  } -> tensor<f32>
  return %a, %b : tensor<f32>, tensor<f32>
}
