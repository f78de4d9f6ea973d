// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg | FileCheck %s

// Layer norm and embeddings (Transformer.cpp).

// grove.layer_norm: one pass of shifted sums per row (x - x0, where x0 is
// the row's first element: map (d0, d1, d2) -> (d0, d1, 0)), the row's
// mean and 1/sqrt(var + eps) from them, one elementwise pass.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[FIRST:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ELT:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @layer_norm
// CHECK: %[[SUMS:.*]]:2 = linalg.generic {indexing_maps = [#[[ID]], #[[FIRST]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: arith.subf
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: arith.mulf
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: %[[STATS:.*]]:2 = linalg.generic
// CHECK-SAME: ins(%{{.*}}, %[[SUMS]]#0, %[[SUMS]]#1
// CHECK: arith.maximumf
// CHECK: math.rsqrt
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]], #[[ELT]], #[[ELT]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %[[STATS]]#0, %[[STATS]]#1
// CHECK-NOT: grove.layer_norm
func.func @layer_norm(%x: tensor<?x7x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<?x7x16xf32> {
  %y = grove.layer_norm %x, %g, %b : (tensor<?x7x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x7x16xf32>
  return %y : tensor<?x7x16xf32>
}

// -----

// bf16 rows are widened to f32 for the sums and the normalisation, and the
// result rounded once.
// CHECK-LABEL: func.func @layer_norm_bf16
// CHECK: linalg.generic
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: -> (tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @layer_norm_bf16(%x: tensor<4x8xbf16>, %g: tensor<8xbf16>) -> tensor<4x8xbf16> {
  %y = grove.layer_norm %x, %g, %g : (tensor<4x8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

// grove.layer_norm_grad: ONE pass over x and dy gives each row's four sums
// (s1, s2, Σ dy·g, Σ dy·g·(x - x0)); then per-row coefficients, dx
// elementwise, and the column sums for dscale and dbias reducing the rows.
// CHECK-LABEL: func.func @layer_norm_grad
// CHECK: %[[SUMS:.*]]:4 = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: %[[STATS:.*]]:2 = linalg.generic
// CHECK: %[[COEF:.*]]:2 = linalg.generic
// CHECK-SAME: ins(%[[SUMS]]#0, %[[SUMS]]#2, %[[SUMS]]#3, %[[STATS]]#1
// CHECK: %[[DX:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK: %[[COLS:.*]]:2 = linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel"]
// CHECK: return %[[DX]], %[[COLS]]#0, %[[COLS]]#1
func.func @layer_norm_grad(%dy: tensor<?x16xf32>, %x: tensor<?x16xf32>, %g: tensor<16xf32>) -> (tensor<?x16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %dx, %dg, %db = grove.layer_norm_grad %dy, %x, %g : (tensor<?x16xf32>, tensor<?x16xf32>, tensor<16xf32>) -> (tensor<?x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %dx, %dg, %db : tensor<?x16xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// grove.embedding: one generic over the result, the id read along the
// leading dimensions; an id outside the table yields zero.
// CHECK-DAG: #[[IDS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[T:.*]]: tensor<100x8xf32>, %[[I:.*]]: tensor<?x5xi32>)
// CHECK: %[[ROWS:.*]] = tensor.dim %[[T]]
// CHECK: linalg.generic {indexing_maps = [#[[IDS]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[I]] : tensor<?x5xi32>)
// CHECK: arith.cmpi slt, %{{.*}}, %[[ROWS]]
// CHECK: scf.if
// CHECK: tensor.extract %[[T]]
// CHECK: } else {
// CHECK: arith.constant 0.000000e+00 : f32
func.func @embedding(%t: tensor<100x8xf32>, %ids: tensor<?x5xi32>) -> tensor<?x5x8xf32> {
  %e = grove.embedding %t, %ids : (tensor<100x8xf32>, tensor<?x5xi32>) -> tensor<?x5x8xf32>
  return %e : tensor<?x5x8xf32>
}

// -----

// One id: the result is the row.
// CHECK-DAG: #[[NONE:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @embedding_scalar
// CHECK: linalg.generic {indexing_maps = [#[[NONE]], #{{.*}}], iterator_types = ["parallel"]}
func.func @embedding_scalar(%t: tensor<100x8xf32>, %id: tensor<i32>) -> tensor<8xf32> {
  %e = grove.embedding %t, %id : (tensor<100x8xf32>, tensor<i32>) -> tensor<8xf32>
  return %e : tensor<8xf32>
}

// -----

// grove.gelu_tanh: x/2 (1 + tanh(√(2/π) (x + 0.044715 x³))).
// CHECK-LABEL: func.func @gelu_tanh
// CHECK: arith.constant 4.471500e-02 : f32
// CHECK: arith.constant 0.797884583 : f32
// CHECK: math.tanh
// CHECK: arith.constant 5.000000e-01 : f32
func.func @gelu_tanh(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = grove.gelu_tanh %x : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// grove.group_by_index stays for bufferization (a runtime call).
// CHECK-LABEL: func.func @group
// CHECK: grove.group_by_index
func.func @group(%ids: tensor<?xi32>) -> (tensor<?xi32>, tensor<5xi32>) {
  %o, %off = grove.group_by_index %ids {num_groups = 4} : tensor<?xi32> -> (tensor<?xi32>, tensor<5xi32>)
  return %o, %off : tensor<?xi32>, tensor<5xi32>
}

// -----

// grove.philox_dropout: one elementwise generic; each element's row-major
// index, the offset and the seed (its high word xor the stream, 5) form
// Philox's counter and key; ten rounds (the last one's unused words are
// dead: ten multiplies by 0xCD9E8D57, nine by 0xD2511F53); the top 24
// bits against ceil(0.25 · 2^24) = 4194304; kept elements scaled by 4/3.
// CHECK-LABEL: func.func @philox_dropout
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[S0:.*]], #[[S0]], #{{.*}}], iterator_types = ["parallel", "parallel"]}
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: arith.constant 5 : i32
// CHECK-COUNT-10: arith.constant 3449720151 : i64
// CHECK: arith.constant 4194304 : i32
// CHECK: arith.cmpi uge
// CHECK: arith.constant 1.33333337 : f32
// CHECK: arith.select
func.func @philox_dropout(%x: tensor<?x8xf32>, %s: tensor<i64>, %o: tensor<i64>) -> tensor<?x8xf32> {
  %y = grove.philox_dropout %x, %s, %o {rate = 0.25 : f64, stream = 5} : tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
