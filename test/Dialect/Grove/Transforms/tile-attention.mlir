// RUN: grove-opt %s -split-input-file --grove-tile-attention | FileCheck %s

// grove-tile-attention (TileAttention.cpp). The forward: [B·H, S, D]
// views, then one loop over tiles of 16 keys carrying each query row's
// running maximum (from -inf), running sum and unnormalised output; a
// tile's scores are one batched matmul with the key tile, scaled; the
// maximum is made finite before the exponentials; the output is the
// unnormalised sum over the running sum, viewed back as [B, H, Sq, Dv].
// CHECK-LABEL: func.func @forward
// CHECK: %[[Q:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : tensor<?x2x8x4xf32> into tensor<?x8x4xf32>
// CHECK: %[[NEGINF:.*]] = grove.constant dense<0xFF800000> : tensor<f32>
// CHECK: %[[R:.*]]:3 = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}}) -> (tensor<?x8x1xf32>, tensor<?x8x1xf32>, tensor<?x8x3xf32>)
// CHECK: %[[T:.*]] = arith.minsi
// CHECK: %[[KT:.*]] = tensor.extract_slice %{{.*}}[0, %[[J]], 0] [%{{.*}}, %[[T]], 4]
// CHECK: %[[S:.*]] = grove.matmul %[[Q]], %[[KT]] {transpose_rhs} : (tensor<?x8x4xf32>, tensor<?x?x4xf32>) -> tensor<?x8x?xf32>
// CHECK: grove.mul %[[S]], %{{.*}} : (tensor<?x8x?xf32>, tensor<f32>)
// CHECK: %[[ROWMAX:.*]] = grove.reduce_max %{{.*}} {axes = array<i64: 2>, keepdims}
// CHECK: %[[NEWM:.*]] = grove.max %[[M]], %[[ROWMAX]]
// CHECK: grove.select
// CHECK: grove.exp
// CHECK: grove.reduce_sum %{{.*}} {axes = array<i64: 2>, keepdims}
// CHECK: grove.matmul %{{.*}}, %{{.*}} : (tensor<?x8x?xf32>, tensor<?x?x3xf32>) -> tensor<?x8x3xf32>
// CHECK: scf.yield %[[NEWM]], %{{.*}}, %{{.*}}
// CHECK: %[[O:.*]] = grove.div %[[R]]#2, %[[R]]#1
// CHECK: tensor.expand_shape %[[O]] {{\[\[}}0, 1], [2], [3]]
// CHECK-NOT: grove.attention
func.func @forward(%q: tensor<?x2x8x4xf32>, %k: tensor<?x2x40x4xf32>, %v: tensor<?x2x40x3xf32>) -> tensor<?x2x8x3xf32> {
  %o = grove.attention %q, %k, %v {key_tile = 16 : i64} : (tensor<?x2x8x4xf32>, tensor<?x2x40x4xf32>, tensor<?x2x40x3xf32>) -> tensor<?x2x8x3xf32>
  return %o : tensor<?x2x8x3xf32>
}

// -----

// A mask's tile is added in the [B, H, Sq, tile] view; causal adds a bias
// computed from the query and key indices (a linalg.generic).
// CHECK-LABEL: func.func @masked
// CHECK: scf.for
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, %{{.*}}] [%{{.*}}, 1, 1, %{{.*}}] [1, 1, 1, 1] : tensor<?x1x1x40xf32> to tensor<?x1x1x?xf32>
// CHECK: tensor.expand_shape
// CHECK: grove.add %{{.*}}, %{{.*}} : (tensor<?x2x8x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x2x8x?xf32>
// CHECK: linalg.generic
// CHECK: arith.cmpi ugt
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
func.func @masked(%q: tensor<?x2x8x4xf32>, %k: tensor<?x2x40x4xf32>, %m: tensor<?x1x1x40xf32>) -> tensor<?x2x8x4xf32> {
  %o = grove.attention %q, %k, %k mask(%m : tensor<?x1x1x40xf32>) {causal} : (tensor<?x2x8x4xf32>, tensor<?x2x40x4xf32>, tensor<?x2x40x4xf32>) -> tensor<?x2x8x4xf32>
  return %o : tensor<?x2x8x4xf32>
}

// -----

// The backward: Δ = rowsum(dO ∘ O), a first sweep for each row's maximum
// and sum (the log-sum-exp), a second that recomputes each tile's
// probabilities, accumulates dQ and writes the tile's dK and dV in place.
// CHECK-LABEL: func.func @backward
// CHECK: %[[DELTA:.*]] = grove.reduce_sum %{{.*}} {axes = array<i64: 2>, keepdims}
// CHECK: %[[STATS:.*]]:2 = scf.for
// CHECK: grove.log %[[STATS]]#1
// CHECK: %[[G:.*]]:3 = scf.for
// CHECK: grove.matmul %{{.*}}, %{{.*}} {transpose_lhs}
// CHECK: grove.matmul %{{.*}}, %{{.*}} {transpose_rhs}
// CHECK: grove.sub %{{.*}}, %[[DELTA]]
// CHECK: tensor.insert_slice
// CHECK: tensor.insert_slice
// CHECK-NOT: grove.attention_grad
func.func @backward(%do: tensor<2x2x8x4xf32>, %q: tensor<2x2x8x4xf32>, %k: tensor<2x2x40x4xf32>, %o: tensor<2x2x8x4xf32>) -> (tensor<2x2x8x4xf32>, tensor<2x2x40x4xf32>, tensor<2x2x40x4xf32>) {
  %dq, %dk, %dv = grove.attention_grad %do, %q, %k, %k, %o {key_tile = 16 : i64}
      : (tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2x2x40x4xf32>, tensor<2x2x40x4xf32>, tensor<2x2x8x4xf32>)
      -> (tensor<2x2x8x4xf32>, tensor<2x2x40x4xf32>, tensor<2x2x40x4xf32>)
  return %dq, %dk, %dv : tensor<2x2x8x4xf32>, tensor<2x2x40x4xf32>, tensor<2x2x40x4xf32>
}
